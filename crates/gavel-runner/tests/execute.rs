//! The runner's paths: concurrency, deadlines, repeats, revival, cancellation and
//! recorders, against in-process targets.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gavel_core::{Execution, Status, Suite};
use gavel_runner::{
    Baselines, CancellationToken, ExecuteOptions, PlanOptions, PreparedTargets, RecordError,
    Recorder, RunReport, RunnerError,
};
use gavel_targets::{FnReply, FnRequest, FnTarget, Target};

fn suite(yaml: &str) -> Suite {
    let head = "targets:\n  agent: {type: command, command: [unused]}\n";
    gavel_core::load::parse_suite_str(&format!("{head}{yaml}"), Path::new("t.yaml")).unwrap()
}

/// A suite of `n` cases `c0`, `c1`, … each saying "hi".
fn numbered_cases(n: usize) -> Suite {
    let cases: String = (0..n)
        .map(|i| format!("  - {{id: c{i}, input: hi}}\n"))
        .collect();
    suite(&format!("cases:\n{cases}"))
}

fn with(target: Arc<dyn Target>) -> PreparedTargets {
    PreparedTargets::from_targets(BTreeMap::from([("agent".to_owned(), target)]))
}

fn options(suite: &Suite, jobs: usize, timeout: Duration) -> ExecuteOptions<'_> {
    static BASELINES: std::sync::OnceLock<Baselines> = std::sync::OnceLock::new();
    ExecuteOptions {
        concurrency: jobs,
        default_timeout: timeout,
        ..ExecuteOptions::new(&suite.judge, BASELINES.get_or_init(Baselines::new))
    }
}

async fn run(
    suite: &Suite,
    target: Arc<dyn Target>,
    jobs: usize,
    timeout: Duration,
) -> Vec<Execution> {
    let plan = gavel_runner::plan(suite, &PlanOptions::default()).unwrap();
    let mut out: Vec<Execution> = Vec::new();
    let mut recorders: [&mut dyn Recorder; 1] = [&mut out];
    let report = gavel_runner::execute(
        &plan,
        &with(target),
        "run-1",
        &options(suite, jobs, timeout),
        &CancellationToken::new(),
        &mut recorders,
    )
    .await
    .unwrap();
    assert!(!report.interrupted);
    assert_eq!(report.finished, out.len());
    out
}

/// Executes `s` on `target`, `jobs` at once, feeding `recorder` alone.
async fn execute_into(
    s: &Suite,
    target: Arc<dyn Target>,
    jobs: usize,
    recorder: &mut dyn Recorder,
) -> Result<RunReport, RunnerError> {
    let plan = gavel_runner::plan(s, &PlanOptions::default()).unwrap();
    let mut recorders: [&mut dyn Recorder; 1] = [recorder];
    let opts = options(s, jobs, Duration::from_secs(5));
    let cancel = CancellationToken::new();
    gavel_runner::execute(&plan, &with(target), "r", &opts, &cancel, &mut recorders).await
}

fn echo() -> Arc<dyn Target> {
    Arc::new(FnTarget::new(|req: FnRequest| async move {
        FnReply::text(format!("echo: {}", req.message))
    }))
}

#[tokio::test]
async fn bounded_concurrency_is_respected_and_used() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (f, p) = (in_flight.clone(), peak.clone());
    let target = Arc::new(FnTarget::new(move |_req: FnRequest| {
        let (f, p) = (f.clone(), p.clone());
        async move {
            let now = f.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            f.fetch_sub(1, Ordering::SeqCst);
            "ok"
        }
    }));
    let cases: String = (0..12)
        .map(|i| format!("  - {{id: c{i}, input: hi, checks: [{{type: contains, value: ok}}]}}\n"))
        .collect();
    let out = run(
        &suite(&format!("cases:\n{cases}")),
        target,
        3,
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(out.len(), 12);
    assert!(out.iter().all(|e| e.status == Status::Pass));
    assert_eq!(
        peak.load(Ordering::SeqCst),
        3,
        "at most and at least 3 at once"
    );
}

#[tokio::test]
async fn a_slow_target_times_out_as_error_not_fail() {
    let target = Arc::new(FnTarget::new(|_req: FnRequest| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        "late"
    }));
    let s = suite(
        "cases:\n  - {id: slow, input: hi, timeout_s: 0.2, checks: [{type: contains, value: late}]}\n",
    );
    let out = run(&s, target, 1, Duration::from_secs(60)).await;
    assert_eq!(out[0].status, Status::Error);
    assert!(
        out[0]
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("timed out after 0.2s"),
        "{:?}",
        out[0].reason
    );
    assert!(out[0].duration_ms < 2000);
}

#[tokio::test]
async fn repeats_run_each_case_n_times_with_their_index() {
    let s = suite(
        "cases:\n  - {id: r, input: hi, repeat: 3, checks: [{type: contains, value: echo}]}\n",
    );
    let mut out = run(&s, echo(), 2, Duration::from_secs(5)).await;
    out.sort_by_key(|e| e.repeat_index);
    assert_eq!(
        out.iter().map(|e| e.repeat_index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    let sessions: std::collections::HashSet<_> = out
        .iter()
        .map(|e| e.transcript.session_id.clone())
        .collect();
    assert_eq!(sessions.len(), 3, "each repeat has its own session");
}

#[tokio::test]
async fn rounds_share_a_session_and_see_history_and_revival_reopens_it() {
    let opens = Arc::new(AtomicUsize::new(0));
    #[derive(Debug)]
    struct Counting(Arc<AtomicUsize>, Arc<dyn Target>);
    #[async_trait::async_trait]
    impl Target for Counting {
        async fn open(
            &self,
            id: &str,
        ) -> Result<Box<dyn gavel_targets::Session>, gavel_core::TargetFailure> {
            self.0.fetch_add(1, Ordering::SeqCst);
            self.1.open(id).await
        }
        fn kind(&self) -> &'static str {
            "counting"
        }
    }
    let inner: Arc<dyn Target> = Arc::new(FnTarget::new(|req: FnRequest| async move {
        format!("turn {} of {}", req.history.len() + 1, req.session_id)
    }));
    let s = suite(
        "cases:\n  - id: conv\n    revival: true\n    rounds:\n      - input: one\n      - input: two\n        checks: [{type: contains, value: turn 2}]\n",
    );
    let out = run(
        &s,
        Arc::new(Counting(opens.clone(), inner)),
        1,
        Duration::from_secs(5),
    )
    .await;
    let e = &out[0];
    assert_eq!(e.status, Status::Pass, "{:?}", e.verdicts);
    assert_eq!(e.transcript.turns.len(), 2);
    assert_eq!(e.transcript.turns[1].round, 1);
    assert!(
        e.transcript.turns[1]
            .output
            .ends_with(&e.transcript.session_id),
        "same session id after revival"
    );
    assert_eq!(
        opens.load(Ordering::SeqCst),
        2,
        "revival closes and reopens the session"
    );
}

#[tokio::test]
async fn a_target_failure_stops_the_conversation_and_errors() {
    let target = Arc::new(FnTarget::new(|req: FnRequest| async move {
        if req.round == 1 {
            Err(gavel_targets::FnError::transient("connection reset"))
        } else {
            Ok(FnReply::text("fine"))
        }
    }));
    let s = suite(
        "cases:\n  - id: c\n    rounds: [{input: a}, {input: b}, {input: c}]\n    checks: [{type: contains, value: fine}]\n",
    );
    let out = run(&s, target, 1, Duration::from_secs(5)).await;
    assert_eq!(out[0].status, Status::Error);
    assert_eq!(out[0].transcript.turns.len(), 2, "round 3 is never sent");
    assert!(
        out[0].verdicts.iter().all(|v| v.status != Status::Fail),
        "{:?}",
        out[0].verdicts
    );
}

#[tokio::test]
async fn cancelling_keeps_what_was_recorded_and_reports_interruption() {
    let target = Arc::new(FnTarget::new(|_req: FnRequest| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        "ok"
    }));
    let s = numbered_cases(40);
    let plan = gavel_runner::plan(&s, &PlanOptions::default()).unwrap();
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(180)).await;
        c.cancel();
    });
    let mut out: Vec<Execution> = Vec::new();
    let mut recorders: [&mut dyn Recorder; 1] = [&mut out];
    let report = gavel_runner::execute(
        &plan,
        &with(target),
        "r",
        &options(&s, 2, Duration::from_secs(5)),
        &cancel,
        &mut recorders,
    )
    .await
    .unwrap();
    assert!(report.interrupted);
    assert_eq!(report.finished, out.len());
    assert!(!out.is_empty() && out.len() < 40, "{} recorded", out.len());
}

#[tokio::test]
async fn a_recorder_that_cannot_keep_results_stops_the_run() {
    struct Broken;
    #[async_trait::async_trait]
    impl Recorder for Broken {
        async fn record(&mut self, _e: &Execution) -> Result<(), RecordError> {
            Err(RecordError::new("disk full"))
        }
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let target = Arc::new(FnTarget::new(move |_req: FnRequest| {
        c.fetch_add(1, Ordering::SeqCst);
        // Slow enough that few executions start within the 50 ms the runner
        // gathers results before recording them.
        async {
            tokio::time::sleep(Duration::from_millis(40)).await;
            "ok"
        }
    }));
    let err = execute_into(&numbered_cases(20), target, 1, &mut Broken)
        .await
        .unwrap_err();
    assert!(matches!(err, RunnerError::Record { .. }));
    assert!(err.to_string().contains("disk full"));
    assert!(
        calls.load(Ordering::SeqCst) < 5,
        "the run stopped: {} executions started",
        calls.load(Ordering::SeqCst)
    );
}

#[tokio::test]
async fn run_case_is_the_library_entry_point() {
    let s = suite(
        "cases:\n  - {id: lib, input: ping, checks: [{type: equals, value: 'echo: ping'}]}\n",
    );
    let e = gavel_runner::run_case(
        &s.cases[0],
        echo().as_ref(),
        Duration::from_secs(5),
        &gavel_checks::NoJudgeModels,
    )
    .await
    .unwrap();
    assert_eq!(e.status, Status::Pass);
    assert_eq!(e.score, Some(1.0));
}

/// Regression: executions holding a shared resource (a pooled store connection in
/// the wild) must keep making progress while a result is being recorded, or the
/// recorder waits for them forever.
#[tokio::test]
async fn recording_never_starves_executions_that_hold_a_shared_resource() {
    let pool = Arc::new(tokio::sync::Semaphore::new(2));
    let p = pool.clone();
    let target = Arc::new(FnTarget::new(move |_req: FnRequest| {
        let p = p.clone();
        async move {
            let _conn = p.acquire().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
            "ok"
        }
    }));
    struct NeedsPool(Arc<tokio::sync::Semaphore>, usize);
    #[async_trait::async_trait]
    impl Recorder for NeedsPool {
        async fn record(&mut self, _e: &Execution) -> Result<(), RecordError> {
            let _conn = self.0.acquire().await.map_err(RecordError::new)?;
            tokio::time::sleep(Duration::from_millis(2)).await;
            self.1 += 1;
            Ok(())
        }
    }
    let s = numbered_cases(30);
    let mut recorder = NeedsPool(pool, 0);
    let run = execute_into(&s, target, 8, &mut recorder);
    let report = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("deadlocked")
        .unwrap();
    assert_eq!(report.finished, 30);
}

/// While the recorder is stuck, new executions wait rather than their results
/// piling up in memory: at most the concurrency (4) plus a backlog of 256 start,
/// and every result is still recorded once the recorder moves again.
#[tokio::test]
async fn a_slow_recorder_holds_back_new_executions() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let target = Arc::new(FnTarget::new(move |_req: FnRequest| {
        c.fetch_add(1, Ordering::SeqCst);
        async { "ok" }
    }));
    struct Stuck {
        calls: Arc<AtomicUsize>,
        started_while_stuck: Option<usize>,
        kept: usize,
    }
    #[async_trait::async_trait]
    impl Recorder for Stuck {
        async fn record(&mut self, _e: &Execution) -> Result<(), RecordError> {
            self.kept += 1;
            Ok(())
        }
        async fn record_batch(&mut self, batch: &[Execution]) -> Result<(), RecordError> {
            if self.started_while_stuck.is_none() {
                tokio::time::sleep(Duration::from_millis(300)).await;
                self.started_while_stuck = Some(self.calls.load(Ordering::SeqCst));
            }
            self.kept += batch.len();
            Ok(())
        }
    }
    let mut recorder = Stuck {
        calls: calls.clone(),
        started_while_stuck: None,
        kept: 0,
    };
    let report = execute_into(&numbered_cases(1000), target, 4, &mut recorder)
        .await
        .unwrap();
    let started = recorder.started_while_stuck.unwrap();
    assert!(
        (4..=4 + 256).contains(&started),
        "{started} executions started while the recorder was stuck"
    );
    assert_eq!((report.finished, recorder.kept), (1000, 1000));
    assert_eq!(calls.load(Ordering::SeqCst), 1000);
}

#[tokio::test]
async fn recorders_hear_how_many_leading_cases_are_recorded_whole() {
    /// Keeps what it records and, at each tell, checks that every execution
    /// of the cases told whole was recorded before it.
    #[derive(Default)]
    struct Watching {
        kept: Vec<Execution>,
        told: Vec<usize>,
    }
    #[async_trait::async_trait]
    impl Recorder for Watching {
        async fn record(&mut self, e: &Execution) -> Result<(), RecordError> {
            self.kept.push(e.clone());
            Ok(())
        }
        async fn cases_recorded(&mut self, cases: usize) {
            for case in 0..cases {
                for repeat in 0..2 {
                    let id = format!("c{case}");
                    assert!(
                        self.kept
                            .iter()
                            .any(|e| e.case_id == id && e.repeat_index == repeat),
                        "told {cases} cases whole before c{case} repeat {repeat} was recorded"
                    );
                }
            }
            self.told.push(cases);
        }
    }
    // Later cases answer sooner: results land out of plan order.
    let target = Arc::new(FnTarget::new(|req: FnRequest| async move {
        let n: u64 = req.message.trim_start_matches('q').parse().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(40 - n % 40)).await;
        "ok"
    }));
    let cases: String = (0..60)
        .map(|i| format!("  - {{id: c{i}, input: q{i}, repeat: 2}}\n"))
        .collect();
    let s = suite(&format!("cases:\n{cases}"));
    let mut recorder = Watching::default();
    let report = execute_into(&s, target, 8, &mut recorder).await.unwrap();
    assert_eq!(report.finished, 120);
    assert!(
        recorder.told.windows(2).all(|w| w[0] < w[1]),
        "told only as it grows: {:?}",
        recorder.told
    );
    assert_eq!(recorder.told.last(), Some(&60), "every case ends whole");
    assert!(recorder.told.len() > 1, "told as the run goes on");
}

#[tokio::test]
async fn a_plan_of_given_executions_tells_no_case_whole() {
    #[derive(Default)]
    struct Told(Vec<usize>);
    #[async_trait::async_trait]
    impl Recorder for Told {
        async fn record(&mut self, _e: &Execution) -> Result<(), RecordError> {
            Ok(())
        }
        async fn cases_recorded(&mut self, cases: usize) {
            self.0.push(cases);
        }
    }
    let s = numbered_cases(5);
    let items: Vec<_> = gavel_runner::plan(&s, &PlanOptions::default())
        .unwrap()
        .items()
        .map(Result::unwrap)
        .collect();
    let plan = gavel_runner::Plan::of(items);
    let mut told = Told::default();
    let mut recorders: [&mut dyn Recorder; 1] = [&mut told];
    let opts = options(&s, 2, Duration::from_secs(5));
    gavel_runner::execute(
        &plan,
        &with(echo()),
        "r",
        &opts,
        &CancellationToken::new(),
        &mut recorders,
    )
    .await
    .unwrap();
    assert!(told.0.is_empty(), "{:?}", told.0);
}
