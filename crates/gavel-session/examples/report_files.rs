//! Writes every report format of a stored run one of two ways, for a
//! benchmark to compare under `/usr/bin/time -v` (scripts/bench-report.sh):
//! `stream` (what `gavel run -o` and `gavel report -o` do: the files written
//! as the run is read, [`gavel_session::report::write`]) or `whole` (the run
//! folded into one report holding every execution, then each file rendered
//! from it to one string and written, as before). Prints the wall time;
//! asserts nothing.
//!
//! ```text
//! cargo run -p gavel-session --example report_files -- URL RUN_ID stream|whole OUT_DIR
//! ```

use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

use gavel_report::{Detail, Files, Format};
use gavel_session::Regate;
use gavel_store::Store;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, run, mode, out] = args.as_slice() else {
        return Err("usage: report_files URL RUN_ID stream|whole OUT_DIR".into());
    };
    let store = Store::open(url).await?;
    let run = store.find_run(run).await?;
    let paths: Vec<PathBuf> = Format::ALL
        .iter()
        .map(|f| PathBuf::from(out).join(format!("run.{}", f.extension())))
        .collect();
    let regate = Regate::default();
    let started = Instant::now();
    match mode.as_str() {
        "stream" => {
            let files = Files::create(&paths)?;
            gavel_session::report::write(&store, &run.id, &regate, files).await?;
        }
        "whole" => {
            let report =
                gavel_session::report::build(&store, &run.id, &regate, Detail::Full).await?;
            std::fs::create_dir_all(out)?;
            for (path, format) in paths.iter().zip(Format::ALL) {
                std::fs::write(path, gavel_report::render(&report, format)?)?;
            }
        }
        other => return Err(format!("unknown mode `{other}`: stream or whole").into()),
    }
    println!("{mode}: {:.2} s", started.elapsed().as_secs_f64());
    store.close().await;
    Ok(())
}
