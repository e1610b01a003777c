#![allow(missing_docs)]
use gavel_core::*;
use gavel_store::Store;
use serde_json::{Value, json};
include!("/tmp/exec_fn.rs");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timing() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let store = Store::open(&url).await.unwrap();
    let run = RunRecord {
        id: "r".into(),
        suite: "s".into(),
        status: RunStatus::Running,
        started_at: now_rfc3339(),
        finished_at: None,
        config: json!({}),
    };
    store.create_run(&run).await.unwrap();
    let t = std::time::Instant::now();
    let n = 2000;
    let tasks: Vec<_> = (0..8)
        .map(|k| {
            let s = store.clone();
            tokio::spawn(async move {
                for i in 0..n/8 {
                    s.record_execution("r", &execution(&format!("c{k}-{i}"), "a", 0))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let el = t.elapsed();
    eprintln!(
        "record: {n} in {el:?} = {:.0}/s",
        n as f64 / el.as_secs_f64()
    );
    let t = std::time::Instant::now();
    let e = store.executions("r").await.unwrap();
    eprintln!("read {} in {:?}", e.len(), t.elapsed());
}
