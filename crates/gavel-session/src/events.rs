//! Typed events of a run, and the sinks that receive them.
//!
//! The session emits, in order: [`Event::RunStarted`]; for each execution
//! [`Event::ExecutionStarted`], then once its result is committed to the store
//! [`Event::Turn`] per turn, [`Event::Verdict`] per verdict and
//! [`Event::ExecutionRecorded`]; finally [`Event::RunFinished`]. Terminal progress,
//! the web's live view and telemetry exporters are sinks.

use std::sync::Arc;

use gavel_core::{Execution, RunRecord, RunStatus, Turn, Verdict};

/// Which execution of a run: one case against one target, one repeat.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExecutionRef<'a> {
    /// The case id.
    pub case_id: &'a str,
    /// The target name.
    pub target: &'a str,
    /// The repeat index (0-based).
    pub repeat_index: u32,
}

/// What a run looks like as it starts.
#[derive(Debug, Clone)]
pub struct RunStart {
    /// The run as stored.
    pub run: RunRecord,
    /// Executions to run now.
    pub planned: usize,
    /// Executions recorded before (a resumed run).
    pub already_done: usize,
    /// The default judge model, or why there is none.
    pub judge: crate::JudgeChoice,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunEnd {
    /// The run id.
    pub run_id: String,
    /// The stored status.
    pub status: RunStatus,
    /// When it ended (RFC 3339), as stored.
    pub finished_at: String,
    /// Executions recorded by this session.
    pub recorded: usize,
    /// Why the run failed, when it did.
    pub error: Option<String>,
    /// The run's gate, as every door reports it (`None`: the run failed before
    /// it could be gated).
    pub gate: Option<gavel_report::Gate>,
}

/// One thing that happened in a run.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// The run is stored and its targets are ready.
    RunStarted(&'a RunStart),
    /// An execution began.
    ExecutionStarted(ExecutionRef<'a>),
    /// A turn of a recorded execution (emitted after the store committed it).
    Turn {
        /// Whose turn.
        execution: &'a Execution,
        /// Its position in the transcript.
        index: usize,
        /// The turn.
        turn: &'a Turn,
    },
    /// A verdict of a recorded execution.
    Verdict {
        /// Whose verdict.
        execution: &'a Execution,
        /// The verdict.
        verdict: &'a Verdict,
    },
    /// An execution's result is in the store.
    ExecutionRecorded(&'a Execution),
    /// The run ended and its status is stored.
    RunFinished(&'a RunEnd),
}

/// Receives a run's events. Sinks observe: they cannot stop a run (the store is
/// what must succeed), so a sink that fails keeps its error to itself.
pub trait Sink: Send + Sync {
    /// Called for every event, in order per execution.
    fn event(&self, event: &Event<'_>);
}

/// A set of sinks, each receiving every event.
#[derive(Clone, Default)]
pub struct Sinks(Vec<Arc<dyn Sink>>);

impl Sinks {
    /// No sinks.
    pub fn new() -> Sinks {
        Sinks::default()
    }

    /// Adds a sink.
    pub fn with(mut self, sink: Arc<dyn Sink>) -> Sinks {
        self.0.push(sink);
        self
    }

    /// Sends `event` to every sink.
    pub fn emit(&self, event: &Event<'_>) {
        for sink in &self.0 {
            sink.event(event);
        }
    }

    /// Sends the events of a recorded execution: its turns, its verdicts, then
    /// [`Event::ExecutionRecorded`].
    pub fn recorded(&self, execution: &Execution) {
        if self.0.is_empty() {
            return;
        }
        for (index, turn) in execution.transcript.turns.iter().enumerate() {
            self.emit(&Event::Turn {
                execution,
                index,
                turn,
            });
        }
        for verdict in &execution.verdicts {
            self.emit(&Event::Verdict { execution, verdict });
        }
        self.emit(&Event::ExecutionRecorded(execution));
    }
}
