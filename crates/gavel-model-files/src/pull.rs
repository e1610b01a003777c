//! Fetching models from the Hugging Face hub into `$GAVEL_MODELS`.

use std::path::{Path, PathBuf};

use futures::StreamExt;
use tokio::io::AsyncWriteExt;

use crate::locate::split_hub_spec;
use crate::{Located, ModelFiles, ModelFilesError, ModelKind, Source, known};

impl ModelFiles {
    /// Makes `spec` available: a known name or `org/name/FILE.gguf`. A model
    /// already on disk is returned as is; otherwise its files are downloaded from
    /// the hub into `$GAVEL_MODELS` (each through a `.partial` file, so an
    /// interrupted download never looks installed). `HF_TOKEN` authenticates.
    pub async fn pull(&self, spec: &str) -> Result<Located, ModelFilesError> {
        let (name, kind, repo, files) = match known(spec) {
            Some(m) => (m.name.to_owned(), m.kind, m.hub_repo, m.files.to_vec()),
            None => match split_hub_spec(spec) {
                Some((repo, Some(file))) if file.ends_with(".gguf") => {
                    (file.to_owned(), ModelKind::Gguf, repo, vec![file])
                }
                _ => {
                    return Err(ModelFilesError::Unpullable {
                        spec: spec.to_owned(),
                        reason: format!(
                            "give a known name ({}) or a hub GGUF file as org/name/FILE.gguf",
                            crate::KNOWN
                                .iter()
                                .map(|m| m.name)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
            },
        };
        if let Ok(found) = self.locate(&name, kind) {
            return Ok(found);
        }
        let dest = self.own_path(&name, kind);
        let client = reqwest::Client::new();
        for file in &files {
            let target = match kind {
                ModelKind::Encoder => dest.join(file),
                ModelKind::Gguf => dest.clone(),
            };
            if target.is_file() {
                continue;
            }
            let url = format!("{}/{repo}/resolve/main/{file}", self.endpoint);
            download(&client, &url, &target).await?;
        }
        let mut found = self.locate(&name, kind)?;
        found.source = Source::Downloaded;
        Ok(found)
    }
}

/// Streams `url` into `target` through `target.partial`.
async fn download(
    client: &reqwest::Client,
    url: &str,
    target: &Path,
) -> Result<(), ModelFilesError> {
    let failed = |reason: String| ModelFilesError::Download {
        url: url.to_owned(),
        reason,
    };
    let mut request = client.get(url);
    if let Some(token) = std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty()) {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| {
        failed(format!(
            "{e} (is the Hugging Face hub reachable from here?)"
        ))
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(failed(format!("HTTP {status}")));
    }
    let partial = partial_path(target);
    let io = |source| ModelFilesError::Io {
        path: partial.clone(),
        source,
    };
    if let Some(dir) = partial.parent() {
        tokio::fs::create_dir_all(dir).await.map_err(io)?;
    }
    let mut out = tokio::fs::File::create(&partial).await.map_err(io)?;
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| failed(e.to_string()))?;
        out.write_all(&chunk).await.map_err(io)?;
    }
    out.flush().await.map_err(io)?;
    drop(out);
    tokio::fs::rename(&partial, target).await.map_err(io)
}

fn partial_path(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    target.with_file_name(name)
}
