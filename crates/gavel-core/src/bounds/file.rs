//! Reading a file named by input: a regular file only, at most [`MAX_FILE_BYTES`]
//! (read through `take`, so a file that grows meanwhile is bounded too), UTF-8
//! with an optional byte order mark.

use std::io::Read;
use std::path::Path;

/// Largest file read by path (64 MiB): suites, datasets, templates.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Why a file could not be read as text.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A directory, device, FIFO or socket where a file is expected.
    #[error("not a regular file: it is {0}")]
    NotAFile(&'static str),
    /// Larger than [`MAX_FILE_BYTES`].
    #[error("larger than the 64 MiB limit")]
    TooLarge,
    /// Bytes that are not UTF-8, at a 1-based line and column (in bytes) and a
    /// 0-based byte offset.
    #[error("invalid UTF-8 at line {line}, column {column} (byte offset {offset})")]
    InvalidUtf8 {
        /// 1-based line.
        line: u64,
        /// 1-based byte column.
        column: u64,
        /// 0-based byte offset in the file.
        offset: u64,
    },
}

impl FileError {
    /// The line and column the error is at, when it has one.
    pub fn position(&self) -> Option<(u64, u64)> {
        match self {
            FileError::InvalidUtf8 { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }
}

/// Reads `path` as UTF-8 text: a regular file of at most [`MAX_FILE_BYTES`]; a
/// leading byte order mark is dropped.
pub fn read_text(path: &Path) -> Result<String, FileError> {
    // Checked before opening: opening a FIFO would block until a writer comes.
    regular(&std::fs::metadata(path)?)?;
    let file = std::fs::File::open(path)?;
    regular(&file.metadata()?)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(FileError::TooLarge);
    }
    decode(bytes)
}

/// Opens `path` to be read a piece at a time: a regular file of at most
/// [`MAX_FILE_BYTES`] (read through `take`), its byte order mark skipped. The
/// reader yields bytes; decoding them is the caller's.
pub fn open_text(path: &Path) -> Result<impl std::io::BufRead, FileError> {
    regular(&std::fs::metadata(path)?)?;
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    regular(&meta)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(FileError::TooLarge);
    }
    let mut reader = std::io::BufReader::new(file.take(MAX_FILE_BYTES));
    let bom = std::io::BufRead::fill_buf(&mut reader)?.starts_with(b"\xEF\xBB\xBF");
    if bom {
        std::io::BufRead::consume(&mut reader, 3);
    }
    Ok(reader)
}

fn regular(meta: &std::fs::Metadata) -> Result<(), FileError> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    Err(FileError::NotAFile(if kind.is_dir() {
        "a directory"
    } else {
        "a device, FIFO or socket"
    }))
}

/// UTF-8 text without its byte order mark; invalid bytes located.
fn decode(mut bytes: Vec<u8>) -> Result<String, FileError> {
    let bom = usize::from(bytes.starts_with(b"\xEF\xBB\xBF")) * 3;
    bytes.drain(..bom);
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..valid];
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        FileError::InvalidUtf8 {
            line: before.iter().filter(|b| **b == b'\n').count() as u64 + 1,
            column: (valid - line_start) as u64 + 1,
            offset: (valid + bom) as u64,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_names_line_column_and_offset() {
        let e = decode(b"a: 1\nb: x\xFFy\n".to_vec()).unwrap_err();
        assert_eq!(e.position(), Some((2, 5)));
        assert_eq!(
            e.to_string(),
            "invalid UTF-8 at line 2, column 5 (byte offset 9)"
        );
        let e = decode(b"\xEF\xBB\xBF\xC3".to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid UTF-8 at line 1, column 1 (byte offset 3)"
        );
    }

    #[test]
    fn byte_order_mark_is_dropped() {
        assert_eq!(decode(b"\xEF\xBB\xBF{}".to_vec()).unwrap(), "{}");
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_text(dir.path()).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file: it is a directory");
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not a regular file: it is a device, FIFO or socket"
        );
        let big = dir.path().join("big.yaml");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        assert!(matches!(read_text(&big), Err(FileError::TooLarge)));
        let ok = dir.path().join("ok.yaml");
        std::fs::write(&ok, "x: 1\n").unwrap();
        assert_eq!(read_text(&ok).unwrap(), "x: 1\n");
        assert!(matches!(
            read_text(&dir.path().join("missing")),
            Err(FileError::Io(_))
        ));
    }
}
