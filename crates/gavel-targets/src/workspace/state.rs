//! What the agent left behind: its changes against the baseline (read through
//! a private git index, so the agent's own index is untouched), and the files
//! the checks read.

use std::path::Path;

use gavel_core::workspace::{ChangeKind, FileChange, FileSnapshot, WorkspaceState};

use super::exec::{Env, git};

/// The changes in `dir` against commit `base`, with the diff cut at
/// [`WorkspaceState::DIFF_LIMIT`] (secrets redacted first).
pub(crate) async fn changes(
    env: &Env,
    dir: &Path,
    base: &str,
    state: &mut WorkspaceState,
) -> Result<(), String> {
    let git_dir = git(env, dir, &["rev-parse", "--absolute-git-dir"]).await?;
    let mut env = env.clone();
    env.push((
        "GIT_INDEX_FILE".to_owned(),
        Path::new(git_dir.trim())
            .join("gavel-index")
            .display()
            .to_string(),
    ));
    git(&env, dir, &["read-tree", base]).await?;
    git(&env, dir, &["add", "--all"]).await?;
    let diff = [
        "diff",
        "--cached",
        "--no-renames",
        "--no-ext-diff",
        "--no-color",
    ];
    let status = git(
        &env,
        dir,
        &[&diff[..], &["--name-status", "-z", base]].concat(),
    )
    .await?;
    let numstat = git(&env, dir, &[&diff[..], &["--numstat", "-z", base]].concat()).await?;
    state.changes = parse_changes(&status, &numstat);
    let text = git(&env, dir, &[&diff[..], &[base]].concat()).await?;
    state.diff_bytes = text.len() as u64;
    state.diff = cut(
        &gavel_core::secrets::redact(&text),
        WorkspaceState::DIFF_LIMIT,
    );
    Ok(())
}

/// The changed paths from `--name-status -z` and their line counts from
/// `--numstat -z` (binary files count no lines).
fn parse_changes(status: &str, numstat: &str) -> Vec<FileChange> {
    let mut lines = std::collections::HashMap::new();
    for record in numstat.split('\0') {
        let mut parts = record.splitn(3, '\t');
        let (Some(added), Some(removed), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let count = |s: &str| s.parse::<u64>().unwrap_or(0);
        lines.insert(path.to_owned(), (count(added), count(removed)));
    }
    let mut out = Vec::new();
    let mut fields = status.split('\0').filter(|f| !f.is_empty());
    while let (Some(code), Some(path)) = (fields.next(), fields.next()) {
        let kind = match code.chars().next() {
            Some('A') => ChangeKind::Added,
            Some('D') => ChangeKind::Deleted,
            _ => ChangeKind::Modified,
        };
        let (added, removed) = lines.get(path).copied().unwrap_or((0, 0));
        out.push(FileChange {
            path: path.to_owned(),
            kind,
            added,
            removed,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// `text` cut to `limit` bytes on a character boundary, the cut marked.
fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… {} more bytes]", &text[..end], text.len() - end)
}

/// The file at `path` (relative to `dir`) as it is now; a path that leaves the
/// workspace, also through a link, reads as absent.
pub(crate) fn snapshot(dir: &Path, path: &str) -> FileSnapshot {
    let absent = FileSnapshot {
        path: path.to_owned(),
        text: None,
        partial: false,
    };
    let (Ok(root), Ok(file)) = (dir.canonicalize(), dir.join(path).canonicalize()) else {
        return absent;
    };
    if !file.starts_with(&root) || !file.is_file() {
        return absent;
    }
    let Ok(bytes) = std::fs::read(&file) else {
        return absent;
    };
    let text = String::from_utf8_lossy(&bytes);
    let lossy = matches!(text, std::borrow::Cow::Owned(_));
    let redacted = gavel_core::secrets::redact(&text);
    let partial = lossy || redacted.len() > WorkspaceState::FILE_LIMIT;
    FileSnapshot {
        text: Some(cut(&redacted, WorkspaceState::FILE_LIMIT)),
        partial,
        ..absent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_pair_status_with_line_counts() {
        let status = "M\0src/app.py\0A\0new file.txt\0D\0old.bin\0";
        let numstat = "3\t1\tsrc/app.py\x002\t0\tnew file.txt\0-\t-\told.bin\0";
        let changes = parse_changes(status, numstat);
        let got: Vec<(&str, ChangeKind, u64, u64)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.kind, c.added, c.removed))
            .collect();
        assert_eq!(
            got,
            [
                ("new file.txt", ChangeKind::Added, 2, 0),
                ("old.bin", ChangeKind::Deleted, 0, 0),
                ("src/app.py", ChangeKind::Modified, 3, 1),
            ]
        );
    }

    #[test]
    fn a_long_text_is_cut_on_a_character_boundary() {
        let cut = cut("ééé", 3);
        assert!(cut.starts_with('é'), "{cut}");
        assert!(cut.ends_with("[… 4 more bytes]"), "{cut}");
    }
}
