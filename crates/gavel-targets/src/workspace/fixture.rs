//! A fresh workspace per execution: a copy of the fixture (a directory, or a git
//! repository at a commit), committed as the baseline the agent's changes are
//! measured against, under a root that later runs sweep of the workspaces
//! killed runs left behind.

use std::path::{Path, PathBuf};

use super::exec::{Env, git};

/// The folder, under the system's temporary folder, that holds workspaces.
const ROOT: &str = "gavel-workspaces";

/// A workspace: removed when dropped, unless kept.
#[derive(Debug)]
pub(crate) struct Workspace {
    dir: Option<tempfile::TempDir>,
    /// The baseline commit the agent's changes are measured against.
    pub(crate) base: String,
}

impl Workspace {
    /// The workspace's folder.
    pub(crate) fn path(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new(""), |d| d.path())
    }

    /// Where [`Workspace::keep`] puts it: `kept-…` beside it, a name no sweep
    /// removes.
    pub(crate) fn kept_path(&self) -> PathBuf {
        let name = self
            .path()
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        root().join(format!("kept-{name}"))
    }

    /// Keeps the folder on disk at [`Workspace::kept_path`] and returns where
    /// it is.
    pub(crate) fn keep(mut self) -> Option<PathBuf> {
        let kept = self.kept_path();
        let path = self.dir.take()?.keep();
        Some(match std::fs::rename(&path, &kept) {
            Ok(()) => kept,
            Err(_) => path,
        })
    }
}

/// The folder workspaces are made in: `$TMPDIR/gavel-workspaces`.
pub(crate) fn root() -> PathBuf {
    std::env::temp_dir().join(ROOT)
}

/// Makes a fresh workspace from `fixture`: a git repository is cloned and
/// `commit` (default HEAD) checked out; a directory is copied and committed.
pub(crate) async fn create(
    fixture: &Path,
    commit: Option<&str>,
    git_env: &Env,
) -> Result<Workspace, String> {
    let meta =
        std::fs::metadata(fixture).map_err(|e| format!("fixture {}: {e}", fixture.display()))?;
    if !meta.is_dir() {
        return Err(format!("fixture {} is not a directory", fixture.display()));
    }
    let root = root();
    std::fs::create_dir_all(&root).map_err(|e| format!("creating {}: {e}", root.display()))?;
    let dir = tempfile::Builder::new()
        .prefix(&format!("{}-", std::process::id()))
        .tempdir_in(&root)
        .map_err(|e| format!("creating a workspace in {}: {e}", root.display()))?;
    let here = dir.path();
    if is_repository(fixture) {
        let from = fixture.display().to_string();
        let to = here.display().to_string();
        let clone = ["clone", "--quiet", "--shared", "--no-checkout", &from, &to];
        git(git_env, &root, &clone).await?;
        let rev = commit.unwrap_or("HEAD");
        git(git_env, here, &["checkout", "--quiet", "--detach", rev])
            .await
            .map_err(|e| format!("checking out `{rev}` of {from}: {e}"))?;
    } else {
        if commit.is_some() {
            return Err(format!(
                "fixture {} is not a git repository, so it has no commit to check out",
                fixture.display()
            ));
        }
        copy_tree(fixture, here).map_err(|e| format!("copying {}: {e}", fixture.display()))?;
        git(git_env, here, &["init", "--quiet"]).await?;
    }
    let base = commit_all(git_env, here, "gavel: the workspace as the agent gets it").await?;
    Ok(Workspace {
        dir: Some(dir),
        base,
    })
}

/// Commits everything in `dir` (nothing to commit makes an empty commit) and
/// returns the commit.
pub(crate) async fn commit_all(env: &Env, dir: &Path, message: &str) -> Result<String, String> {
    git(env, dir, &["add", "--all"]).await?;
    let commit = [
        "commit",
        "--quiet",
        "--allow-empty",
        "--no-verify",
        "-m",
        message,
    ];
    git(env, dir, &commit).await?;
    let head = git(env, dir, &["rev-parse", "HEAD"]).await?;
    Ok(head.trim().to_owned())
}

/// Whether `dir` is the top of a git repository (or a bare one).
fn is_repository(dir: &Path) -> bool {
    dir.join(".git").exists() || (dir.join("HEAD").is_file() && dir.join("objects").is_dir())
}

/// Copies the tree at `from` into the existing folder `to`; symbolic links are
/// copied as links.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            link(&std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn link(original: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(original, link)
}

#[cfg(not(unix))]
fn link(original: &Path, link: &Path) -> std::io::Result<()> {
    std::fs::copy(original, link).map(|_| ())
}

/// Removes the workspaces of processes that no longer run (a run killed before
/// it could clean up), leaving kept ones (`kept-…`) alone.
pub(crate) fn sweep() {
    let Ok(entries) = std::fs::read_dir(root()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let owner = name
            .to_str()
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if owner.is_some_and(|pid| !alive(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether process `pid` runs (always true where that cannot be told).
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}
