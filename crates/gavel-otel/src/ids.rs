//! Trace and span ids derived from what they stand for, so that exporting a
//! run again sends the same ids (receivers such as Arize Phoenix keep one copy
//! of a span id instead of a second trace). A trace's id is a SHA-256 of the
//! run id and the execution (case, target, repeat); a span's mixes its trace
//! id with its [`Place`] in the trace (turn 3, tool call 5, …) through a
//! bijective 64-bit finaliser, so the spans of one trace never share an id
//! (a hash per span cost more than building the span).
//!
//! The SDK asks its [`IdGenerator`] for ids when a span starts; [`Planned`]
//! answers with the ids [`planned`] set for the span being started on this
//! thread, and random ones otherwise.

use std::cell::Cell;

use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use sha2::{Digest, Sha256};

thread_local! {
    static NEXT: Cell<Option<(TraceId, SpanId)>> = const { Cell::new(None) };
}

/// The tracer provider's id generator: the planned ids, else random ones.
#[derive(Debug, Default)]
pub(crate) struct Planned(RandomIdGenerator);

impl IdGenerator for Planned {
    fn new_trace_id(&self) -> TraceId {
        NEXT.with(Cell::get)
            .map_or_else(|| self.0.new_trace_id(), |(t, _)| t)
    }

    fn new_span_id(&self) -> SpanId {
        NEXT.with(Cell::get)
            .map_or_else(|| self.0.new_span_id(), |(_, s)| s)
    }
}

/// Runs `start` (which starts one span) with `ids` as the ids it gets; a span
/// with a parent takes the parent's trace id whatever is planned.
pub(crate) fn planned<R>(ids: (TraceId, SpanId), start: impl FnOnce() -> R) -> R {
    NEXT.with(|n| n.set(Some(ids)));
    let started = start();
    NEXT.with(|n| n.set(None));
    started
}

/// The trace id of the run span of `run_id` (`execution` `None`) or of one
/// execution's trace.
pub(crate) fn trace_id(run_id: &str, execution: Option<(&str, &str, u32)>) -> TraceId {
    let mut h = Sha256::new();
    h.update(b"gavel trace\0");
    h.update(run_id.as_bytes());
    if let Some((case, target, repeat)) = execution {
        for part in [case.as_bytes(), b"\0", target.as_bytes(), b"\0"] {
            h.update(part);
        }
        h.update(repeat.to_be_bytes());
    }
    let digest = h.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[15] |= 1; // never the invalid all-zero id
    TraceId::from_bytes(bytes)
}

/// A span's place in its trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// The run span (in the run's own trace).
    Run,
    /// An execution's root span.
    Root,
    /// The `invoke_agent` span of turn N.
    Turn(usize),
    /// The `execute_tool` span of the execution's Nth tool call.
    Tool(usize),
    /// The `chat` span of model call K of turn N.
    Call(usize, usize),
    /// The one `chat` span of a turn's harness, stored before calls were kept.
    Harness(usize),
    /// The `chat` span of the judge of verdict N.
    Judge(usize),
}

impl Place {
    /// A number per place: its kind in the top byte, its indices (28 bits
    /// each, more than any execution has) below.
    fn code(self) -> u64 {
        const LOW: u64 = (1 << 28) - 1;
        let index = |i: usize| (i as u64) & LOW;
        let (kind, a, b) = match self {
            Place::Run => (1, 0, 0),
            Place::Root => (2, 0, 0),
            Place::Turn(t) => (3, index(t), 0),
            Place::Tool(t) => (4, index(t), 0),
            Place::Call(t, k) => (5, index(t), index(k)),
            Place::Harness(t) => (6, index(t), 0),
            Place::Judge(v) => (7, index(v), 0),
        };
        kind << 56 | a << 28 | b
    }
}

/// The id of the span at `place` in trace `trace`: the trace id folded to 64
/// bits, the place mixed in, through SplitMix64's finaliser (a bijection, so
/// two places of one trace get two ids).
pub(crate) fn span_id(trace: TraceId, place: Place) -> SpanId {
    let t = u128::from_be_bytes(trace.to_bytes());
    let mut x = (t >> 64) as u64 ^ (t as u64).rotate_left(32) ^ place.code();
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    // The all-zero id is invalid; one input in 2^64 maps to it.
    SpanId::from_bytes(x.max(1).to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_depend_on_what_they_stand_for_only() {
        let a = trace_id("run", Some(("c", "t", 0)));
        assert_eq!(a, trace_id("run", Some(("c", "t", 0))));
        assert_ne!(a, trace_id("run", Some(("c", "t", 1))));
        assert_ne!(a, trace_id("run", Some(("ct", "", 0))));
        assert_ne!(a, trace_id("other", Some(("c", "t", 0))));
        assert_ne!(a, trace_id("run", None));
        assert_eq!(span_id(a, Place::Turn(1)), span_id(a, Place::Turn(1)));
        assert_ne!(span_id(a, Place::Turn(1)), span_id(a, Place::Turn(2)));
        assert_ne!(span_id(a, Place::Turn(1)), span_id(a, Place::Tool(1)));
        assert_ne!(span_id(a, Place::Call(1, 2)), span_id(a, Place::Call(2, 1)));
        let b = trace_id("run", Some(("c", "t", 1)));
        assert_ne!(span_id(a, Place::Root), span_id(b, Place::Root));
        assert_ne!(a, TraceId::INVALID);
    }

    #[test]
    fn planned_ids_are_used_once_then_random_again() {
        let g = Planned::default();
        let ids = (
            trace_id("r", None),
            span_id(trace_id("r", None), Place::Run),
        );
        let got = planned(ids, || (g.new_trace_id(), g.new_span_id()));
        assert_eq!(got, ids);
        assert_ne!(g.new_span_id(), ids.1);
    }
}
