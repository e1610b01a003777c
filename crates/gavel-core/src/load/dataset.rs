//! Data-driven cases: one case per CSV or JSONL row, rendered from a template,
//! read and handed on a row at a time, so a dataset of any length is held one
//! row at a time.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::parse::DatasetSpec;
use crate::template::render_json;
use crate::{Case, LoadError, Location};

/// Expands a dataset block into cases, handing each to `each` with its
/// `file:row` origin as it is read.
pub(crate) fn expand(
    spec: &DatasetSpec,
    base: &Path,
    suite_file: &str,
    each: &mut dyn FnMut(Case, String),
) -> Result<(), LoadError> {
    let path = base.join(&spec.file);
    let shown = path.display().to_string();
    let reader = crate::bounds::open_text(&path).map_err(|e| {
        LoadError::new(
            Location::file(suite_file),
            format!("dataset `{}`: {e}", spec.file),
        )
        .field("datasets.file")
    })?;
    let csv = match path.extension().and_then(|e| e.to_str()) {
        Some("csv") => true,
        Some("jsonl") => false,
        _ => {
            return Err(LoadError::new(
                Location::file(suite_file),
                format!("dataset `{}`: expected a .csv or .jsonl file", spec.file),
            )
            .field("datasets.file"));
        }
    };
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("row");
    let mut row = |line: u64, mut vars: Map<String, Value>| -> Result<(), LoadError> {
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
        each(case, at.to_string());
        Ok(())
    };
    if csv {
        csv_rows(reader, &shown, &mut row)
    } else {
        jsonl_rows(reader, &shown, &mut row)
    }
}

type Row<'a> = dyn FnMut(u64, Map<String, Value>) -> Result<(), LoadError> + 'a;

fn csv_rows(reader: impl BufRead, file: &str, row: &mut Row<'_>) -> Result<(), LoadError> {
    let mut reader = csv::Reader::from_reader(reader);
    let headers = reader
        .headers()
        .map_err(|e| LoadError::new(Location::at(file, 1, 1), e.to_string()))?
        .clone();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map(|p| p.line()).unwrap_or(0);
                return Err(LoadError::new(Location::at(file, line, 1), e.to_string()));
            }
        }
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        let vars = headers
            .iter()
            .zip(record.iter())
            .map(|(h, v)| (h.to_owned(), Value::from(v)))
            .collect();
        row(line, vars)?;
    }
}

fn jsonl_rows(mut reader: impl BufRead, file: &str, row: &mut Row<'_>) -> Result<(), LoadError> {
    let mut line = String::new();
    let mut n = 0u64;
    loop {
        line.clear();
        n += 1;
        match reader.read_line(&mut line) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(LoadError::new(Location::at(file, n, 1), e.to_string())),
        }
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(map)) => row(n, map)?,
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
}
