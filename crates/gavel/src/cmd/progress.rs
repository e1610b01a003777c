//! Live progress: a bar on a terminal, one plain line per execution otherwise.

use std::io::IsTerminal;

use gavel::Execution;
use gavel::runner::Recorder;
use indicatif::{ProgressBar, ProgressStyle};

/// Shows each execution as it lands.
pub(crate) enum Progress {
    Bar(ProgressBar),
    Lines { done: usize, total: usize },
    Quiet,
}

impl Progress {
    /// A bar on a terminal, plain lines otherwise, nothing when not `enabled`.
    pub(crate) fn new(total: usize, enabled: bool) -> Progress {
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
            Progress::Lines { done: 0, total }
        }
    }

    pub(crate) fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

#[async_trait::async_trait]
impl Recorder for Progress {
    async fn record(&mut self, e: &Execution) -> Result<(), String> {
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
                *done += 1;
                eprintln!("[{done}/{total}] {label} {}ms", e.duration_ms);
            }
            Progress::Quiet => {}
        }
        Ok(())
    }
}
