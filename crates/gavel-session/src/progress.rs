//! Live progress, a sink of the session's events: a bar on a terminal, one
//! plain line per execution otherwise.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{Event, Sink};
use indicatif::{ProgressBar, ProgressStyle};

/// Shows each execution as it lands.
pub enum Progress {
    /// A bar, on a terminal.
    Bar(ProgressBar),
    /// `[done/total] status case [target]#repeat ms`, one line each.
    Lines {
        /// Executions shown so far.
        done: AtomicUsize,
        /// Executions planned.
        total: usize,
    },
    /// Nothing.
    Quiet,
}

impl Progress {
    /// A bar on a terminal, plain lines otherwise, nothing when not `enabled`.
    pub fn new(total: usize, enabled: bool) -> Progress {
        if !enabled {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total as u64);
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            Progress::Bar(bar)
        } else {
            Progress::Lines {
                done: AtomicUsize::new(0),
                total,
            }
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

impl Sink for Progress {
    fn event(&self, event: &Event<'_>) {
        let Event::ExecutionRecorded(e) = event else {
            return;
        };
        let label = format!(
            "{} {} [{}]#{}",
            e.status, e.case_id, e.target, e.repeat_index
        );
        match self {
            Progress::Bar(bar) => {
                bar.inc(1);
                bar.set_message(label);
            }
            Progress::Lines { done, total } => {
                let done = done.fetch_add(1, Ordering::Relaxed) + 1;
                eprintln!("[{done}/{total}] {label} {}ms", e.duration_ms);
            }
            Progress::Quiet => {}
        }
    }
}
