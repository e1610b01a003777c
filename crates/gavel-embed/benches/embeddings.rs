//! Embedding throughput of the Rust MiniLM encoder: sentences per second at batch
//! 32 over the sentences of a file (one per line), after one warm-up batch.
//! `scripts/bench-embeddings.sh` runs it beside sentence-transformers on the same
//! sentences and threads and prints the ratio.
//!
//! ```sh
//! RAYON_NUM_THREADS=2 cargo bench -p gavel-embed --bench embeddings -- SENTENCES.txt [MODEL]
//! ```

use std::time::Instant;

use gavel_embed::EmbedderSpec;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let Some(path) = args.next() else {
        eprintln!("usage: embeddings SENTENCES.txt [MODEL]");
        std::process::exit(2);
    };
    let spec: EmbedderSpec = match args
        .next()
        .unwrap_or_else(|| "all-MiniLM-L6-v2".into())
        .parse()
    {
        Ok(spec) => spec,
        Err(e) => fail(&e.to_string()),
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    let sentences: Vec<String> = text.lines().map(str::to_owned).collect();
    let model = spec.local().unwrap_or_else(|e| fail(&e.to_string()));
    let warm: Vec<String> = sentences.iter().take(32).cloned().collect();
    model.encode(&warm).unwrap_or_else(|e| fail(&e.to_string()));
    let started = Instant::now();
    let vectors = model
        .encode(&sentences)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(vectors.len(), sentences.len());
    println!(
        "gavel: {} sentences in {seconds:.2} s = {:.1} sentences/s",
        sentences.len(),
        sentences.len() as f64 / seconds
    );
}

fn fail(message: &str) -> ! {
    eprintln!("embeddings bench: {message}");
    std::process::exit(1)
}
