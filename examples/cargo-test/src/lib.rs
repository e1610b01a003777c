//! A tiny in-process support agent, tested end to end by gavel in
//! `tests/agent.rs` (see docs/library.md).

/// How many days a customer has to ask for a refund.
#[cfg(not(feature = "broken"))]
const REFUND_DAYS: u32 = 30;
/// The `broken` feature's deliberate bug: the wrong refund window.
#[cfg(feature = "broken")]
const REFUND_DAYS: u32 = 14;

/// The agent's answer to one user message.
pub fn answer(message: &str) -> String {
    let m = message.to_lowercase();
    if m.contains("refund") {
        format!(
            "You can ask for a refund within {REFUND_DAYS} days of delivery.\nReply with your order number to start one."
        )
    } else if m.contains("hello") || m.contains("hi ") {
        "Hello! I can help with orders, deliveries and refunds.".to_owned()
    } else {
        "Sorry, I can only help with orders, deliveries and refunds.".to_owned()
    }
}
