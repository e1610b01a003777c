//! Policy-level tests of the whole agent against a fresh in-memory database.

use std::time::Instant;

use serde_json::json;

use super::*;
use crate::bugs::parse_bugs;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CLARIFY: &str = "Which listing do you mean: Beach House, Mountain Cabin or City Apartment?";

async fn agent(bugs: &str) -> Result<Agent, Box<dyn std::error::Error>> {
    Ok(Agent::new(
        Db::open("sqlite::memory:").await?,
        parse_bugs(bugs)?,
    ))
}

async fn ask(
    agent: &Agent,
    session: &str,
    message: &str,
) -> Result<ChatResponse, Box<dyn std::error::Error>> {
    agent
        .respond(&ChatRequest::new(session, message))
        .await
        .map_err(|e| e.to_string().into())
}

fn names(response: &ChatResponse) -> Vec<&str> {
    response.tool_calls.iter().map(|c| c.name).collect()
}

#[tokio::test]
async fn lists_listings_with_one_tool_call() -> TestResult {
    let agent = agent("").await?;
    let r = ask(&agent, "s", "What are my listings?").await?;
    assert_eq!(
        r.reply,
        "You have 3 listings: Beach House, Mountain Cabin and City Apartment."
    );
    assert_eq!(r.error, None);
    assert_eq!(r.session_id, "s");
    assert_eq!(names(&r), ["get_listings"]);
    assert_eq!(r.tool_calls[0].arguments, json!({}));
    assert_eq!(r.tool_calls[0].result.as_array().map(Vec::len), Some(3));
    Ok(())
}

#[tokio::test]
async fn answers_details_and_occupancy_of_a_named_listing() -> TestResult {
    let agent = agent("").await?;
    let r = ask(
        &agent,
        "s",
        "What's the address and price of the Beach House?",
    )
    .await?;
    assert_eq!(
        r.reply,
        "Beach House is at 12 Ocean Drive, Malibu, CA: 3 bedrooms, $350 per night, occupancy rate 78%."
    );
    assert_eq!(names(&r), ["get_listing_details"]);
    assert_eq!(r.tool_calls[0].arguments, json!({"listing_id": 1}));
    assert_eq!(r.tool_calls[0].result["nightly_price"], json!(350));

    let r = ask(&agent, "t", "occupancy of the cabin?").await?;
    assert_eq!(r.reply, "Mountain Cabin has an occupancy rate of 64%.");
    assert_eq!(r.tool_calls[0].arguments, json!({"listing_id": 2}));

    let r = ask(&agent, "u", "Which listing has the highest occupancy?").await?;
    assert!(
        r.reply
            .ends_with("City Apartment has the highest occupancy and Mountain Cabin the lowest."),
        "{}",
        r.reply
    );
    assert_eq!(r.tool_calls.len(), 3);
    Ok(())
}

#[tokio::test]
async fn resolves_the_first_second_and_last_one() -> TestResult {
    let agent = agent("").await?;
    ask(&agent, "s", "What are my listings?").await?;
    let r = ask(&agent, "s", "What's the occupancy for the first one?").await?;
    assert_eq!(r.reply, "Beach House has an occupancy rate of 78%.");
    assert_eq!(r.tool_calls[0].arguments, json!({"listing_id": 1}));
    // "it" now means the Beach House, the only listing in the last reply.
    let r = ask(&agent, "s", "And how much revenue did it make?").await?;
    assert_eq!(
        r.reply,
        "Beach House earned $46,550 in revenue for January–June 2026."
    );
    ask(&agent, "s", "list my properties").await?;
    let r = ask(&agent, "s", "where is the second one?").await?;
    assert!(
        r.reply
            .starts_with("Mountain Cabin is at 48 Pine Ridge Road, Aspen, CO"),
        "{}",
        r.reply
    );
    ask(&agent, "s", "list my properties").await?;
    let r = ask(&agent, "s", "occupancy of the last one").await?;
    assert_eq!(r.reply, "City Apartment has an occupancy rate of 91%.");
    // Another session has no history to resolve against.
    let r = ask(&agent, "other", "What's the occupancy for the first one?").await?;
    assert_eq!(r.reply, CLARIFY);
    Ok(())
}

#[tokio::test]
async fn clarifies_then_answers_the_original_question() -> TestResult {
    let agent = agent("").await?;
    let r = ask(&agent, "s", "What's the occupancy rate?").await?;
    assert_eq!(r.reply, CLARIFY);
    assert!(r.tool_calls.is_empty());
    assert_eq!(r.error, None);
    let r = ask(&agent, "s", "The mountain cabin").await?;
    assert_eq!(r.reply, "Mountain Cabin has an occupancy rate of 64%.");
    assert_eq!(names(&r), ["get_listing_details"]);

    let r = ask(&agent, "b", "Show me the bookings for that listing").await?;
    assert_eq!(r.reply, CLARIFY);
    let r = ask(&agent, "b", "the first one").await?;
    assert!(
        r.reply
            .starts_with("Beach House has 3 bookings: Alice Johnson"),
        "{}",
        r.reply
    );
    Ok(())
}

#[tokio::test]
async fn reports_bookings() -> TestResult {
    let agent = agent("").await?;
    let r = ask(&agent, "s", "Show me all bookings").await?;
    assert_eq!(
        r.reply,
        "You have 10 bookings: Beach House has 3 (Alice Johnson, Brian Lee and Carla Gomez), \
         Mountain Cabin has 3 (David Kim, Emma Rossi and Farid Haddad) and City Apartment has 4 \
         (Grace Chen, Hiro Tanaka, Isabel Martin and Jonas Berg)."
    );
    assert_eq!(r.tool_calls[0].arguments, json!({}));
    let r = ask(&agent, "s", "Any reservations for the apartment?").await?;
    assert!(
        r.reply.starts_with(
            "City Apartment has 4 bookings: Grace Chen (2026-02-02 to 2026-02-06, $720)"
        )
    );
    assert_eq!(r.tool_calls[0].arguments, json!({"listing_id": 3}));
    assert_eq!(r.tool_calls[0].result.as_array().map(Vec::len), Some(4));
    Ok(())
}

#[tokio::test]
async fn reports_revenue_totals() -> TestResult {
    let agent = agent("").await?;
    let r = ask(&agent, "s", "What was my total revenue?").await?;
    assert_eq!(
        r.reply,
        "Your total revenue for January–June 2026 is $100,360: Beach House $46,550, \
         Mountain Cabin $24,200 and City Apartment $29,610."
    );
    assert_eq!(names(&r), ["get_revenue_data"]);
    assert_eq!(r.tool_calls[0].result["total"], json!(100_360));
    let r = ask(&agent, "s", "How much did I make in March?").await?;
    assert!(
        r.reply
            .starts_with("Your total revenue for March 2026 is $16,920"),
        "{}",
        r.reply
    );
    assert_eq!(r.tool_calls[0].arguments, json!({"month": "2026-03"}));
    let r = ask(&agent, "s", "Earnings of the beach house in June").await?;
    assert_eq!(
        r.reply,
        "Beach House earned $9,800 in revenue for June 2026."
    );
    assert_eq!(
        r.tool_calls[0].arguments,
        json!({"listing_id": 1, "month": "2026-06"})
    );
    let r = ask(&agent, "s", "income in December").await?;
    assert_eq!(r.reply, "No revenue is recorded for December 2026.");
    Ok(())
}

#[tokio::test]
async fn refuses_out_of_domain_and_empty_prompts() -> TestResult {
    let agent = agent("").await?;
    for message in [
        "What is the weather on Mars?",
        "Transactions on Mars?",
        "tell me a joke",
    ] {
        let r = ask(&agent, "s", message).await?;
        assert_eq!(r.error.as_deref(), Some("Out of domain"), "{message}");
        assert_eq!(
            r.reply,
            "Sorry, I can only help with your listings, bookings and revenue."
        );
        assert!(r.tool_calls.is_empty());
    }
    for message in ["", "  \n\t"] {
        let r = ask(&agent, "s", message).await?;
        assert_eq!(r.error.as_deref(), Some("Empty prompt"));
        assert!(r.tool_calls.is_empty());
    }
    Ok(())
}

#[tokio::test]
async fn greets_the_user_from_context_and_persists_exchanges() -> TestResult {
    let agent = agent("").await?;
    let mut req = ChatRequest::new("s", "my listings");
    req.context.insert("user_name".into(), json!("Ana"));
    req.context.insert("locale".into(), json!("fr"));
    let r = agent.respond(&req).await.map_err(|e| e.to_string())?;
    assert_eq!(
        r.reply,
        "Hi Ana, you have 3 listings: Beach House, Mountain Cabin and City Apartment."
    );
    ask(&agent, "s", "weather?").await?;
    let messages = agent.db().messages("s").await?.unwrap_or_default();
    let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(messages[0].content, "my listings");
    assert_eq!(messages[1].content, r.reply);
    Ok(())
}

#[tokio::test]
async fn bug_wrong_count_misreports_listings() -> TestResult {
    let agent = agent("wrong-count").await?;
    let r = ask(&agent, "s", "What are my listings?").await?;
    assert_eq!(
        r.reply,
        "You have 2 listings: Beach House and Mountain Cabin."
    );
    assert_eq!(r.tool_calls[0].result.as_array().map(Vec::len), Some(3));
    Ok(())
}

#[tokio::test]
async fn bug_skip_tools_records_no_calls() -> TestResult {
    let agent = agent("skip-tools").await?;
    let r = ask(&agent, "s", "What are my listings?").await?;
    assert_eq!(
        r.reply,
        "You have 3 listings: Beach House, Mountain Cabin and City Apartment."
    );
    assert!(r.tool_calls.is_empty());
    let r = ask(&agent, "s", "total revenue").await?;
    assert!(r.reply.contains("$100,360") && r.tool_calls.is_empty());
    Ok(())
}

#[tokio::test]
async fn bug_forget_context_loses_references() -> TestResult {
    let agent = agent("forget-context").await?;
    ask(&agent, "s", "What are my listings?").await?;
    let r = ask(&agent, "s", "What's the occupancy for the first one?").await?;
    assert_eq!(r.reply, CLARIFY);
    assert!(r.tool_calls.is_empty());
    Ok(())
}

#[tokio::test]
async fn bug_slow_delays_answers() -> TestResult {
    let agent = agent("slow").await?;
    let start = Instant::now();
    ask(&agent, "s", "What are my listings?").await?;
    assert!(start.elapsed() >= Duration::from_millis(1500));
    Ok(())
}

#[tokio::test]
async fn bug_crash_on_revenue_fails_only_revenue() -> TestResult {
    let agent = agent("crash-on-revenue").await?;
    let crashed = agent
        .respond(&ChatRequest::new("s", "What was my revenue?"))
        .await;
    assert!(matches!(crashed, Err(AgentError::Crash)));
    assert!(
        ask(&agent, "s", "What are my listings?")
            .await?
            .error
            .is_none()
    );
    // The crashed exchange was not persisted.
    assert_eq!(agent.db().messages("s").await?.map(|m| m.len()), Some(2));
    Ok(())
}

#[tokio::test]
async fn without_bugs_nothing_is_slow_or_crashes() -> TestResult {
    let agent = agent("").await?;
    let start = Instant::now();
    let r = ask(&agent, "s", "What was my revenue?").await?;
    assert!(start.elapsed() < Duration::from_millis(1500));
    assert_eq!(names(&r), ["get_revenue_data"]);
    Ok(())
}
