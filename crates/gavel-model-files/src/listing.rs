//! `gavel models list` as text: where models are looked for, what is installed,
//! and the known models not installed yet.

use std::fmt::Write;

use crate::{KNOWN, Located, ModelFiles};

impl ModelFiles {
    /// The installed models as a table, and the known ones still missing.
    pub fn listing(&self) -> String {
        let mut out = format!(
            "models folder: {} (GAVEL_MODELS)\n",
            self.models_dir.display()
        );
        if let Some(cache) = &self.hf_cache {
            let _ = writeln!(out, "hugging face cache: {}", cache.display());
        }
        let rows: Vec<[String; 4]> = self.list().iter().map(row).collect();
        table(&mut out, &rows);
        let missing: Vec<_> = KNOWN
            .iter()
            .filter(|m| self.locate(m.name, m.kind).is_err())
            .collect();
        if !missing.is_empty() {
            out.push_str("\nnot installed (gavel models pull NAME, or scripts/setup):\n");
            for m in missing {
                let _ = writeln!(out, "  {:<24} {:<8} {}", m.name, m.kind.as_str(), m.about);
            }
        }
        out
    }
}

fn row(found: &Located) -> [String; 4] {
    [
        found.name.clone(),
        found.kind.as_str().to_owned(),
        found.source.as_str().to_owned(),
        found.path.display().to_string(),
    ]
}

fn table(out: &mut String, rows: &[[String; 4]]) {
    if rows.is_empty() {
        out.push_str("\nno models installed\n");
        return;
    }
    let header = ["NAME", "KIND", "FOUND IN", "PATH"].map(str::to_owned);
    let width = |i: usize| {
        rows.iter()
            .chain([&header])
            .map(|r| r[i].len())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0), width(1), width(2));
    out.push('\n');
    for r in std::iter::once(&header).chain(rows) {
        let _ = writeln!(out, "{:<w0$}  {:<w1$}  {:<w2$}  {}", r[0], r[1], r[2], r[3]);
    }
}
