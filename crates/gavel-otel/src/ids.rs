//! Trace and span ids derived from what they stand for, so that exporting a
//! run again sends the same ids (receivers such as Arize Phoenix keep one copy
//! of a span id instead of a second trace). A trace's id comes from the run id
//! and the execution (case, target, repeat); a span's from its trace id and its
//! place in the trace (`turn 3`, `tool 5`, …).
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

/// The id of the span at `place` (`root`, `turn 3`, …) in trace `trace`.
pub(crate) fn span_id(trace: TraceId, place: &str) -> SpanId {
    let digest = Sha256::new()
        .chain_update(trace.to_bytes())
        .chain_update(place.as_bytes())
        .finalize();
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    bytes[7] |= 1;
    SpanId::from_bytes(bytes)
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
        assert_eq!(span_id(a, "turn 1"), span_id(a, "turn 1"));
        assert_ne!(span_id(a, "turn 1"), span_id(a, "turn 2"));
        assert_ne!(a, TraceId::INVALID);
    }

    #[test]
    fn planned_ids_are_used_once_then_random_again() {
        let g = Planned::default();
        let ids = (trace_id("r", None), span_id(trace_id("r", None), "run"));
        let got = planned(ids, || (g.new_trace_id(), g.new_span_id()));
        assert_eq!(got, ids);
        assert_ne!(g.new_span_id(), ids.1);
    }
}
