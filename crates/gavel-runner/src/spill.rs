//! A plan's cases kept in an unnamed temporary file instead of in memory: a
//! plan of any size holds one case at a time while it runs. The file is
//! removed by the system when the plan is dropped, and when the process dies.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

use gavel_core::Case;

/// Cases being written, one JSON line each.
pub(crate) struct SpillWriter {
    out: BufWriter<File>,
}

impl SpillWriter {
    /// A new, empty spill in the system's temporary directory.
    pub(crate) fn new() -> io::Result<SpillWriter> {
        Ok(SpillWriter {
            out: BufWriter::new(tempfile::tempfile()?),
        })
    }

    /// Appends `case` as one line: its id and source as JSON strings, then the
    /// case as JSON (which holds no source), separated by tabs (which JSON
    /// text escapes inside strings).
    pub(crate) fn push(&mut self, case: &Case) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, &case.id)?;
        self.out.write_all(b"\t")?;
        serde_json::to_writer(&mut self.out, &case.source)?;
        self.out.write_all(b"\t")?;
        serde_json::to_writer(&mut self.out, case)?;
        self.out.write_all(b"\n")
    }

    /// The written cases, ready to be read back.
    pub(crate) fn finish(self) -> io::Result<Spill> {
        let file = self
            .out
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        Ok(Spill { file })
    }
}

/// Written cases, read back in order by any number of [`SpillReader`]s.
pub(crate) struct Spill {
    file: File,
}

impl Spill {
    /// A reader from the first case; readers do not share a position.
    pub(crate) fn read(&self) -> SpillReader<'_> {
        SpillReader {
            lines: BufReader::new(At {
                file: &self.file,
                offset: 0,
            }),
            line: String::new(),
        }
    }
}

/// Reads a [`Spill`]'s cases in order.
pub(crate) struct SpillReader<'a> {
    lines: BufReader<At<'a>>,
    line: String,
}

/// One spilled case as written: its id, its source and its JSON text.
pub struct CaseText<'a> {
    /// The case id.
    pub id: String,
    /// Where the case was defined (`file:line`).
    pub source: String,
    /// The case as JSON (without its source).
    pub json: &'a str,
}

impl SpillReader<'_> {
    /// The next case as written; `None` after the last.
    pub(crate) fn next_text(&mut self) -> io::Result<Option<CaseText<'_>>> {
        self.line.clear();
        if self.lines.read_line(&mut self.line)? == 0 {
            return Ok(None);
        }
        let mut fields = self.line.trim_end().splitn(3, '\t');
        let mut next = || {
            fields
                .next()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a short line"))
        };
        Ok(Some(CaseText {
            id: serde_json::from_str(next()?)?,
            source: serde_json::from_str(next()?)?,
            json: next()?,
        }))
    }

    /// The next case; `None` after the last.
    pub(crate) fn next_case(&mut self) -> io::Result<Option<Case>> {
        let Some(text) = self.next_text()? else {
            return Ok(None);
        };
        let mut case: Case = serde_json::from_str(text.json)?;
        case.source = text.source;
        Ok(Some(case))
    }
}

/// A file read from its own offset, so that readers of one file are independent.
struct At<'a> {
    file: &'a File,
    offset: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.offset)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(self.file, buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn case(id: &str) -> Case {
        let mut case: Case = serde_json::from_value(
            serde_json::json!({"id": id, "input": format!("say\t{id}\nplease")}),
        )
        .unwrap();
        case.source = format!("suite\t{id}.yaml:3");
        case
    }

    #[test]
    fn readers_each_read_every_case_in_order() {
        let mut writer = SpillWriter::new().unwrap();
        for id in ["a", "b", "c"] {
            writer.push(&case(id)).unwrap();
        }
        let spill = writer.finish().unwrap();
        let mut first = spill.read();
        assert_eq!(first.next_case().unwrap().unwrap(), case("a"));
        let mut second = spill.read();
        let ids = std::iter::from_fn(|| second.next_case().unwrap()).map(|c| c.id);
        assert_eq!(ids.collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(first.next_case().unwrap().unwrap(), case("b"));
        let c = first.next_text().unwrap().unwrap();
        assert_eq!((c.id.as_str(), c.source.as_str()), ("c", "suite\tc.yaml:3"));
        assert_eq!(serde_json::from_str::<Case>(c.json).unwrap().id, "c");
        assert!(first.next_text().unwrap().is_none());
    }
}
