//! An `io::Write` that redacts secrets line by line, for log output.

use std::io::{self, Write};

/// Wraps a writer and redacts every registered secret, a whole line at a time
/// (so a secret split across `write` calls is still caught). A partial last line
/// is written on `flush` and on drop.
///
/// For `tracing_subscriber`: `.with_writer(|| Redacting::new(std::io::stderr()))`.
pub struct Redacting<W: Write> {
    inner: W,
    line: Vec<u8>,
}

impl<W: Write> Redacting<W> {
    /// Redacts what is written before passing it to `inner`.
    pub fn new(inner: W) -> Self {
        Redacting {
            inner,
            line: Vec::new(),
        }
    }

    /// Writes the buffered bytes, redacted.
    fn drain(&mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            let clean = super::redact_bytes(&self.line);
            self.inner.write_all(&clean)?;
            self.line.clear();
        }
        Ok(())
    }
}

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(buf);
        if let Some(last_newline) = self.line.iter().rposition(|&b| b == b'\n') {
            let rest = self.line.split_off(last_newline + 1);
            self.drain()?;
            self.line = rest;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Redacting<W> {
    fn drop(&mut self) {
        // A failure to write a log line has nowhere to be reported.
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_split_across_writes_are_redacted() {
        super::super::register("writer-secret-42");
        let mut out = Vec::new();
        {
            let mut w = Redacting::new(&mut out);
            w.write_all(b"body: writer-sec").unwrap();
            w.write_all(b"ret-42 end\nnext writer-secret-42").unwrap();
        }
        assert_eq!(out, b"body: [redacted] end\nnext [redacted]");
    }
}
