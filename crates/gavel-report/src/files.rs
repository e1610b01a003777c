//! Report files written as a report is folded: each outcome goes to every
//! file's writer as it is read and is spooled, section by section, to
//! temporary files; once the summary and the gate are known, each file is put
//! together (its head, then the spools in order) and renamed into place.
//! Memory stays flat in the run's size: a writer holds at most one chunk of
//! outcomes' text, never the run.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use gavel_core::{Case, Outcome, RunRecord};

use crate::{Format, Report, ReportError};

/// One format's writer: fed each outcome in report order, then finished with
/// the whole report's summary and gate.
pub(crate) trait Writer: Send {
    /// Takes the next outcome of `run` (with its snapshot case, when there is one).
    fn outcome(
        &mut self,
        run: &RunRecord,
        o: &Outcome,
        case: Option<&Case>,
    ) -> Result<(), ReportError>;

    /// Writes the whole file to `out`: what only the finished report knows,
    /// and the spooled outcomes.
    fn finish(self: Box<Self>, report: &Report, out: &mut dyn Out) -> Result<(), ReportError>;
}

/// Where a report file is put together: text, and spools appended whole.
pub(crate) trait Out: Write {
    /// Appends what `spool` holds from its start.
    fn append(&mut self, spool: &mut File) -> io::Result<()> {
        spool.seek(SeekFrom::Start(0))?;
        io::copy(spool, self)?;
        Ok(())
    }
}

impl Out for Vec<u8> {}

/// A file on disk: the spool is copied file to file (by the kernel, where it can).
impl Out for BufWriter<File> {
    fn append(&mut self, spool: &mut File) -> io::Result<()> {
        self.flush()?;
        spool.seek(SeekFrom::Start(0))?;
        io::copy(spool, self.get_mut())?;
        Ok(())
    }
}

/// The writer of a format.
fn writer(format: Format) -> Result<Box<dyn Writer>, ReportError> {
    Ok(match format {
        Format::Json => Box::new(crate::json::JsonWriter::new()?),
        Format::Junit => Box::new(crate::junit::JunitWriter::default()),
        Format::Markdown => Box::new(crate::markdown::MarkdownWriter::new()?),
        Format::Html => Box::new(crate::html::HtmlWriter::new()?),
    })
}

/// Report files being written as a report is folded
/// ([`crate::ReportBuilder::files`]): every format its path's extension names.
/// The writers run on a thread of their own, fed through a short queue, so a
/// report is read and folded on one core while its files are written on
/// another.
pub struct Files {
    paths: Vec<PathBuf>,
    writing: Writing,
}

/// Where the writers are.
enum Writing {
    /// Not started: no outcome was pushed yet.
    Idle(Vec<Box<dyn Writer>>),
    /// On their thread, which gives them back, or the first failure.
    Started {
        send: SyncSender<(Outcome, Option<Case>)>,
        thread: JoinHandle<Result<Vec<Box<dyn Writer>>, ReportError>>,
    },
}

/// Outcomes queued for the writers' thread: enough to keep it busy, few enough
/// that memory does not grow with the run when the writers fall behind.
const QUEUED: usize = 64;

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files").field("paths", &self.paths).finish()
    }
}

impl Files {
    /// Writers for `paths`, each in the format its extension names
    /// ([`Format::from_path`]); nothing is written before [`Files::finish`].
    pub fn create(paths: &[PathBuf]) -> Result<Files, ReportError> {
        let mut writers = Vec::with_capacity(paths.len());
        for path in paths {
            let format = Format::from_path(path)?;
            writers.push(writer(format).map_err(|e| e.at(path))?);
        }
        Ok(Files {
            paths: paths.to_vec(),
            writing: Writing::Idle(writers),
        })
    }

    /// Whether no file is asked for.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Hands the next outcome of `run` to every writer, on their thread
    /// (started with the first). A failure stops the thread; [`Files::finish`]
    /// reports it.
    pub(crate) fn push(&mut self, run: &RunRecord, o: &Outcome, case: Option<&Case>) {
        if self.paths.is_empty() {
            return;
        }
        if let Writing::Idle(writers) = &mut self.writing {
            let writers = std::mem::take(writers);
            let (send, receive) = mpsc::sync_channel(QUEUED);
            let (run, paths) = (run.clone(), self.paths.clone());
            let thread = std::thread::spawn(move || write_outcomes(&run, &paths, writers, receive));
            self.writing = Writing::Started { send, thread };
        }
        if let Writing::Started { send, .. } = &self.writing {
            // A send fails only once the thread stopped on a failure.
            let _ = send.send((o.clone(), case.cloned()));
        }
    }

    /// Writes every file from `report` (the one these outcomes were folded
    /// into, gate applied), calling `wrote` after each; the files are put
    /// together side by side.
    pub fn finish(self, report: &Report, mut wrote: impl FnMut(&Path)) -> Result<(), ReportError> {
        let writers = match self.writing {
            Writing::Idle(writers) => writers,
            Writing::Started { send, thread } => {
                drop(send);
                thread.join().map_err(|_| {
                    ReportError::Write(io::Error::other("a report writer panicked"))
                })??
            }
        };
        let written: Vec<Result<(), ReportError>> = std::thread::scope(|scope| {
            let threads: Vec<_> = self
                .paths
                .iter()
                .zip(writers)
                .map(|(path, writer)| {
                    scope.spawn(move || write_file(path, |out| writer.finish(report, out)))
                })
                .collect();
            threads
                .into_iter()
                .map(|t| {
                    t.join().unwrap_or_else(|_| {
                        Err(ReportError::Write(io::Error::other(
                            "a report writer panicked",
                        )))
                    })
                })
                .collect()
        });
        for (path, result) in self.paths.iter().zip(written) {
            result?;
            wrote(path);
        }
        Ok(())
    }
}

/// The writers' thread: every outcome received, to every writer, in order;
/// the writers back once the queue is closed, or the first failure.
fn write_outcomes(
    run: &RunRecord,
    paths: &[PathBuf],
    mut writers: Vec<Box<dyn Writer>>,
    receive: Receiver<(Outcome, Option<Case>)>,
) -> Result<Vec<Box<dyn Writer>>, ReportError> {
    for (o, case) in receive {
        for (path, writer) in paths.iter().zip(&mut writers) {
            writer
                .outcome(run, &o, case.as_ref())
                .map_err(|e| e.at(path))?;
        }
    }
    Ok(writers)
}

/// Renders `report` (all its outcomes) in one format, through that format's writer.
pub(crate) fn render(report: &Report, format: Format) -> Result<String, ReportError> {
    let mut w = writer(format)?;
    for o in &report.outcomes {
        w.outcome(&report.run, o, report.case(&o.case_id))?;
    }
    let mut out = Vec::new();
    w.finish(report, &mut out)?;
    String::from_utf8(out)
        .map_err(|e| ReportError::Write(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// Writes `path` with `fill`, creating parent directories: next to its final
/// name, then renamed into place, so a reader never sees half a report.
fn write_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Out) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Io { path, source }
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let written = File::create(&tmp).map_err(io(&tmp)).and_then(|file| {
        let mut out = BufWriter::new(file);
        fill(&mut out).map_err(|e| e.at(&tmp))?;
        out.flush().map_err(io(&tmp))
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path).map_err(io(path))) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

/// Text spooled to an anonymous temporary file, copied out when the report is
/// put together; counts what was pushed.
pub(crate) struct Spool {
    file: BufWriter<File>,
    /// Items pushed.
    pub(crate) count: usize,
}

impl Spool {
    pub(crate) fn new() -> Result<Spool, ReportError> {
        Ok(Spool {
            file: BufWriter::new(tempfile::tempfile()?),
            count: 0,
        })
    }

    /// Appends one item.
    pub(crate) fn push(&mut self, text: &str) -> Result<(), ReportError> {
        self.count += 1;
        Ok(self.file.write_all(text.as_bytes())?)
    }

    /// Copies what was spooled to `out`.
    pub(crate) fn copy_to(self, out: &mut dyn Out) -> Result<(), ReportError> {
        let mut file = self
            .file
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        Ok(out.append(&mut file)?)
    }
}
