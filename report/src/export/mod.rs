//! The export stage (report/README.md): documents as files for other
//! tools. `export --format` writes JUnit XML ([`junit`]), OCP Test and
//! Validation JSON lines ([`ocptv`]) or two tidy tables, CSV or Parquet
//! ([`tidy`], its Parquet footer checked by [`parquet_footer`]); the `csv`
//! command prints a row per target and test ([`csv`]).
//!
//! Every format is an [`Export`]: those of `export`, started by [`start`]
//! with the one list of formats, the command line's [`ExportFormat`], and
//! the `csv` command's rows ([`csv::Rows`]), which go to stdout. Each takes
//! the documents one at a time, then writes its files, each under its name
//! only when it is whole.

pub mod csv;
pub mod junit;
pub mod ocptv;
pub mod parquet_footer;
pub mod tidy;

use std::path::{Path, PathBuf};

pub use crate::cli::ExportFormat;
use crate::read::Loaded;

/// What every format of `export` does: take the documents in the order
/// given, then write its files. Nothing has its name before
/// [`Export::finish`]; an export dropped before leaves no file behind.
pub trait Export {
    /// Add one document.
    fn add(&mut self, doc: Loaded) -> Result<(), String>;
    /// Add documents in order, as [`Export::add`] of each; a format may
    /// make their rows on every core.
    fn add_all(&mut self, docs: Vec<Loaded>) -> Result<(), String> {
        docs.into_iter().try_for_each(|d| self.add(d))
    }
    /// Write what is left and give each file its name; the files written,
    /// in order. An error names the file.
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>, String>;
}

/// Start the export of `format` to `output` (for `csv` and `parquet` the
/// figures table, the run table beside it: [`tidy::runs_path`]). An error
/// names the file that cannot be written.
pub fn start(format: ExportFormat, output: &Path) -> Result<Box<dyn Export>, String> {
    Ok(match format {
        ExportFormat::Junit => Box::new(junit::Junit::create(output)),
        ExportFormat::Ocptv => Box::new(ocptv::Ocptv::create(output)),
        ExportFormat::Csv | ExportFormat::Parquet => {
            Box::new(tidy::Tables::create(format, output, &tidy::runs_path(output))?)
        }
    })
}

/// Where a format written whole goes.
#[derive(Debug)]
enum Destination {
    /// A file, written atomically, replacing the one the user named (never
    /// through a planted name: [`crate::output::write_replacing`]).
    File(PathBuf),
    /// Standard output (the `csv` command); a closed pipe is not an error.
    Stdout,
}

/// A format written whole from all of its documents (JUnit, OCP TV, the
/// `csv` command's rows): the documents kept as they come, the text written
/// at the end to its [`Destination`].
#[derive(Debug)]
struct Whole {
    to: Destination,
    docs: Vec<Loaded>,
}

impl Whole {
    fn create(path: &Path) -> Whole {
        Whole {
            to: Destination::File(path.to_path_buf()),
            docs: Vec::new(),
        }
    }

    fn stdout() -> Whole {
        Whole {
            to: Destination::Stdout,
            docs: Vec::new(),
        }
    }

    fn add(&mut self, doc: Loaded) -> Result<(), String> {
        self.docs.push(doc);
        Ok(())
    }

    /// `render` of the documents, written to the destination; the file
    /// written, if it was one.
    fn finish(self, render: fn(&[Loaded]) -> String) -> Result<Vec<PathBuf>, String> {
        let text = render(&self.docs);
        match self.to {
            Destination::File(path) => {
                crate::output::write_replacing(&path, text.as_bytes())
                    .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
                Ok(vec![path])
            }
            Destination::Stdout => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("stdout: {e}")),
                    _ => Ok(Vec::new()),
                }
            }
        }
    }
}
