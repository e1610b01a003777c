//! Data-driven cases: one case per CSV or JSONL row, rendered from a template.

use std::path::Path;

use serde_json::{Map, Value};

use super::parse::DatasetSpec;
use crate::template::render_json;
use crate::{Case, LoadError, Location};

/// Expands a dataset block into cases, each tagged with its `file:row` origin.
pub(crate) fn expand(
    spec: &DatasetSpec,
    base: &Path,
    suite_file: &str,
) -> Result<Vec<(Case, String)>, LoadError> {
    let path = base.join(&spec.file);
    let shown = path.display().to_string();
    let text = crate::bounds::read_text(&path).map_err(|e| match e.position() {
        Some(_) => super::file_error(&shown, &e),
        None => LoadError::new(
            Location::file(suite_file),
            format!("dataset `{}`: {e}", spec.file),
        )
        .field("datasets.file"),
    })?;
    let rows = match path.extension().and_then(|e| e.to_str()) {
        Some("csv") => csv_rows(&text, &shown)?,
        Some("jsonl") => jsonl_rows(&text, &shown)?,
        _ => {
            return Err(LoadError::new(
                Location::file(suite_file),
                format!("dataset `{}`: expected a .csv or .jsonl file", spec.file),
            )
            .field("datasets.file"));
        }
    };
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("row");
    rows.into_iter()
        .map(|(line, mut vars)| {
            let at = Location::at(&shown, line, 1);
            vars.entry("row").or_insert_with(|| Value::from(line));
            let rendered = render_json(&spec.case, &Value::Object(vars))
                .map_err(|e| LoadError::new(at.clone(), e.to_string()))?;
            let mut case: Case = serde_json::from_value(rendered).map_err(|e| {
                LoadError::new(at.clone(), crate::error::did_you_mean(&e.to_string())).field("case")
            })?;
            if case.id.is_empty() && case.name.is_empty() {
                case.id = format!("{stem}-{line}");
            }
            Ok((case, at.to_string()))
        })
        .collect()
}

type Row = (u64, Map<String, Value>);

fn csv_rows(text: &str, file: &str) -> Result<Vec<Row>, LoadError> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| LoadError::new(Location::at(file, 1, 1), e.to_string()))?
        .clone();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map(|p| p.line()).unwrap_or(0);
            LoadError::new(Location::at(file, line, 1), e.to_string())
        })?;
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        let vars = headers
            .iter()
            .zip(record.iter())
            .map(|(h, v)| (h.to_owned(), Value::from(v)))
            .collect();
        rows.push((line, vars));
    }
    Ok(rows)
}

fn jsonl_rows(text: &str, file: &str) -> Result<Vec<Row>, LoadError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i as u64 + 1;
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => rows.push((n, map)),
            Ok(_) => {
                return Err(LoadError::new(
                    Location::at(file, n, 1),
                    "each line must be a JSON object",
                ));
            }
            Err(e) => {
                return Err(LoadError::new(
                    Location::at(file, n, e.column() as u64),
                    e.to_string(),
                ));
            }
        }
    }
    Ok(rows)
}
