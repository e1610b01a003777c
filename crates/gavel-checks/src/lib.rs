//! Deterministic graders: a case's checks, compiled once, turn a transcript into
//! [`Verdict`](gavel_core::Verdict)s.
//!
//! [`compile`] validates and compiles everything a case asks for (regexes, JSON
//! Schemas, expected values and tools) into a [`CheckPlan`]; [`CheckPlan::run`] grades
//! one execution's [`Transcript`](gavel_core::Transcript) with it.
//!
//! Where a check looks:
//! - a round's `checks` read that round's turn (the last turn of the round when
//!   follow-ups added more);
//! - a case's `checks` read the last turn, except `tools-called` (every tool call of
//!   the transcript) and `latency` (every turn);
//! - `expected_tools` (case or round) add a `tools-called` check in `set` mode;
//! - judge `criteria` become `judge` verdicts (skipped until LLM judges exist).
//!
//! A turn that was never reached or broke gives `skipped`, never `fail`.
//!
//! ```
//! use gavel_core::{Status, Transcript, Turn};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = "cases:\n  - id: hello\n    input: Hi\n    checks:\n      - type: contains\n        value: Hello\n";
//! let suite = gavel_core::load::parse_suite_str(yaml, "inline.yaml".as_ref())
//!     .map_err(|errors| format!("{errors:?}"))?;
//! let plan = gavel_checks::compile(&suite.cases[0])?;
//! let transcript = Transcript {
//!     session_id: "s1".into(),
//!     turns: vec![Turn { output: "Hello there!".into(), ..Turn::default() }],
//! };
//! let verdicts = plan.run(&transcript);
//! assert_eq!(verdicts[0].check, "contains \"Hello\"");
//! assert_eq!(verdicts[0].status, Status::Pass);
//! # Ok(())
//! # }
//! ```

mod error;
mod json;
mod judge;
mod latency;
mod plan;
mod text;
mod tools;

pub use error::CheckError;
pub use plan::{CheckPlan, compile};
