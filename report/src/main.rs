//! `bootbench-report`: see the crate documentation of `bootbench_report`.
//!
//! Exit status: 0 done; 1 `extract` found a damaged or refused frame (or
//! none at all);
//! 2 bad input (a file that cannot be read or is not a result document this
//! tool reads), an output that cannot be written (for `extract`: a frame
//! that could not be written, the others written), or a usage error.
//!
//! Every message on stderr, and `extract`'s list of files on stdout, goes
//! through [`say`] or `safe`: they quote file names, frame names and what a
//! document holds, and none of it reaches the terminal raw.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use bench_core::vocab::console::{safe, safe_lines};
use bootbench_report::cli::{Cli, Command};
use bootbench_report::export::{self, csv};
use bootbench_report::figures::verdict;
use bootbench_report::output;
use bootbench_report::read::{self, Loaded};
use bootbench_report::read::{baseline, extract};
use bootbench_report::render::{compare, fleet, html, show};
use clap::Parser;

/// Bad input, or an output that cannot be written.
const BAD_INPUT: u8 = 2;

/// One message line on stderr: `bootbench-report: ` and `msg` escaped as
/// the console escapes (`bench_core::vocab::console::safe`: control characters,
/// line breaks, bidi controls, the frame marker), since a message may
/// quote a file name, a frame's name or a document's string.
fn say(msg: &str) {
    eprintln!("bootbench-report: {}", safe(msg));
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        // Text for a terminal: the documents' device strings (models,
        // serials) cannot hold a line break or an escape sequence there.
        // show::render escapes them itself (once; the verdict block and the
        // summary table come from bench-core already escaped).
        Command::Show { files } => with_docs(&files, show::render_all),
        Command::Compare { a, b } => with_docs(&[a, b], |docs| {
            let fleet = fleet::section(docs);
            let tail = if fleet.is_empty() {
                String::new()
            } else {
                format!("\nby model and firmware, A = [1], B = [2] (an outlier is more than 10% below its group's median):\n{fleet}")
            };
            let verdicts = verdict::by_model_text(docs);
            safe_lines(&format!("{}{tail}\n{verdicts}", compare::render(&docs[0], &docs[1])))
        }),
        Command::Fleet { paths, html, all } => run_fleet(&paths, html.as_deref(), all),
        Command::Csv { files } => run_export(Ok(Box::new(csv::Rows::to_stdout())), &files),
        Command::Html { files, output } => match load_all(&files) {
            Ok(docs) => write_page(&output, &html::render(&docs)),
            Err(code) => code,
        },
        Command::Export { format, files, output } => run_export(export::start(format, &output), &files),
        Command::Baseline { files, output } => match load_all(&files) {
            Ok(docs) => {
                let (text, warning) = baseline::render(&docs);
                if let Some(w) = warning {
                    say(&format!("warning: {w}"));
                }
                write_page(&output, &text)
            }
            Err(code) => code,
        },
        Command::Extract {
            log,
            out_dir,
            accept_v1,
        } => run_extract(&log, &out_dir, bench_core::document::frame::Options { accept_v1 }),
        Command::Verify {
            doc,
            expect_key,
            expect_nonce,
            image,
        } => run_verify(&doc, expect_key.as_deref(), expect_nonce.as_deref(), image.as_deref()),
    }
}

/// `verify`: each point of the verdict on a line; 1 when one failed or the
/// quote is not proved.
fn run_verify(
    doc: &std::path::Path,
    expect_key: Option<&str>,
    expect_nonce: Option<&str>,
    image: Option<&std::path::Path>,
) -> ExitCode {
    use bootbench_report::verify::doc::{verify, Given, Outcome};
    let bytes = match std::fs::read(doc) {
        Ok(b) => b,
        Err(e) => {
            say(&format!("{}: {e}", doc.display()));
            return ExitCode::from(2);
        }
    };
    let files = image.map(|img| {
        bootbench_report::verify::image::StickFiles::read(&|path| bootbench_image::stick::read_file(img, path))
    });
    let files = match files.transpose() {
        Ok(f) => f,
        Err(e) => {
            say(&format!("--image: {e}"));
            return ExitCode::from(2);
        }
    };
    // --expect-key: a key name, or an earlier document of the machine whose quote names it.
    let earlier = match expect_key.filter(|k| std::path::Path::new(k).is_file()) {
        Some(path) => match std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|b| bootbench_report::verify::doc::proved_key(&b))
        {
            Ok(k) => Some(k),
            Err(e) => {
                say(&format!("--expect-key {path}: {e}"));
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let given = Given {
        key: earlier.as_deref().or(expect_key),
        nonce: expect_nonce,
        image: files.as_ref(),
    };
    let points = match verify(&bytes, &given) {
        Ok(p) => p,
        Err(e) => {
            say(&format!("{}: {e}", doc.display()));
            return ExitCode::from(1);
        }
    };
    let mut out = String::new();
    for p in &points {
        let o = match p.outcome {
            Outcome::Proved => "proved",
            Outcome::Failed => "FAILED",
            Outcome::NotProved => "not proved",
        };
        out.push_str(&format!("{}: {o}: {}\n", p.what, p.detail));
    }
    let failed = points.iter().any(|p| p.outcome == Outcome::Failed)
        || points
            .iter()
            .any(|p| p.what == "the quote" && p.outcome != Outcome::Proved);
    let code = print(&safe_lines(&out));
    if failed {
        ExitCode::from(1)
    } else {
        code
    }
}

/// Load every file; print each error (one line each) and every warning.
fn load_all(files: &[PathBuf]) -> Result<Vec<Loaded>, ExitCode> {
    let mut docs = Vec::new();
    let mut bad = false;
    for f in files {
        match read::load(f) {
            Ok(l) => {
                for w in &l.warnings {
                    say(&format!("warning: {}: {w}", l.file));
                }
                docs.push(l);
            }
            Err(e) => {
                say(&e.to_string());
                bad = true;
            }
        }
    }
    if bad {
        Err(ExitCode::from(BAD_INPUT))
    } else {
        Ok(docs)
    }
}

/// Write a page (HTML, a baseline, an export) atomically, replacing the file the user named (never
/// through a planted name: `output::write_replacing`), and say so on stderr.
fn write_page(path: &std::path::Path, page: &str) -> ExitCode {
    match output::write_replacing(path, page.as_bytes()) {
        Ok(()) => {
            eprintln!("wrote {}", safe(&path.display().to_string()));
            ExitCode::SUCCESS
        }
        Err(e) => {
            say(&format!("{}: cannot write: {e}", path.display()));
            ExitCode::from(BAD_INPUT)
        }
    }
}

/// `export --format F` and `csv` (the export `started`): the documents read
/// on every core, a few at a time, added to the export as they come (a
/// tidy table's rows made and its row groups encoded on every core too;
/// the tables are never held whole: a fleet's export takes the memory of
/// a row group). A file that is not a document is named on stderr, and
/// nothing is written (exit 2); each file written is named on stderr.
fn run_export(started: Result<Box<dyn export::Export>, String>, files: &[PathBuf]) -> ExitCode {
    use rayon::prelude::*;
    let mut export = match started {
        Ok(e) => Some(e),
        Err(e) => {
            say(&e);
            return ExitCode::from(BAD_INPUT);
        }
    };
    let mut bad = false;
    for batch in files.chunks(2 * rayon::current_num_threads()) {
        let loaded: Vec<Result<Loaded, read::ReadError>> = batch.par_iter().map(|f| read::load(f)).collect();
        let mut docs = Vec::with_capacity(loaded.len());
        for l in loaded {
            match l {
                Ok(l) => {
                    for w in &l.warnings {
                        say(&format!("warning: {}: {w}", l.file));
                    }
                    docs.push(l);
                }
                Err(e) => {
                    say(&e.to_string());
                    bad = true;
                    // Dropped: its temporary files are removed.
                    export = None;
                }
            }
        }
        if let Some(e) = export.as_mut() {
            if let Err(what) = e.add_all(docs) {
                say(&what);
                return ExitCode::from(BAD_INPUT);
            }
        }
    }
    let Some(export) = export.filter(|_| !bad) else {
        return ExitCode::from(BAD_INPUT);
    };
    match export.finish() {
        Ok(written) => {
            for p in &written {
                eprintln!("wrote {}", safe(&p.display().to_string()));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            say(&e);
            ExitCode::from(BAD_INPUT)
        }
    }
}

/// `fleet`: read what the paths hold, skipping (with a warning) what is
/// not a result document; the text on stdout, or the page to `html`.
fn run_fleet(paths: &[PathBuf], html: Option<&std::path::Path>, all: bool) -> ExitCode {
    let got = match fleet::gather(paths) {
        Ok(g) => g,
        Err(e) => {
            say(&e.to_string());
            return ExitCode::from(BAD_INPUT);
        }
    };
    for e in &got.skipped {
        say(&format!("warning: {e}; skipped"));
    }
    for d in &got.fleet.docs {
        for w in &d.warnings {
            say(&format!("warning: {}: {w}", d.file));
        }
    }
    match html {
        Some(out) => write_page(out, &html::render_fleet(&got.fleet)),
        None => print(&safe_lines(&fleet::render(&got.fleet, all))),
    }
}

fn with_docs(files: &[PathBuf], render: impl FnOnce(&[Loaded]) -> String) -> ExitCode {
    match load_all(files) {
        Ok(docs) => print(&render(&docs)),
        Err(code) => code,
    }
}

/// Print to stdout; a closed pipe is not an error worth a panic.
fn print(s: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            say(&format!("stdout: {e}"));
            ExitCode::from(BAD_INPUT)
        }
    }
}

/// `extract`: the files written on stdout, one a line; notes, damaged and
/// refused frames and write errors on stderr. Exit 2 if a frame could not
/// be written (the others are written all the same), else 1 if one was
/// damaged or refused, or none was found.
fn run_extract(log: &std::path::Path, dir: &std::path::Path, opts: bench_core::document::frame::Options) -> ExitCode {
    let name = log.display().to_string();
    let bytes = match std::fs::read(log) {
        Ok(b) => b,
        Err(e) => {
            say(&format!("{name}: cannot read: {e}"));
            return ExitCode::from(BAD_INPUT);
        }
    };
    // A console capture may hold stray bytes; frames are ASCII.
    let text = String::from_utf8_lossy(&bytes);
    let done = match extract::extract(&name, &text, dir, opts) {
        Ok(d) => d,
        Err(e) => {
            say(&e);
            return ExitCode::from(BAD_INPUT);
        }
    };
    for p in &done.written {
        println!("{}", safe(&p.display().to_string()));
    }
    for line in done
        .notes
        .iter()
        .chain(&done.damaged)
        .chain(&done.refused)
        .chain(&done.failed)
    {
        say(line);
    }
    let (damaged, refused, failed) = (done.damaged.len(), done.refused.len(), done.failed.len());
    if done.written.is_empty() && damaged + refused + failed == 0 {
        say(&format!("{name}: no result frame found"));
        return ExitCode::from(1);
    }
    if damaged + refused + failed == 0 {
        return ExitCode::SUCCESS;
    }
    let unwritable = if failed == 0 {
        String::new()
    } else {
        format!(", {failed} frame(s) could not be written")
    };
    say(&format!(
        "{name}: {damaged} damaged and {refused} refused frame(s) not written{unwritable}, {} document(s) written",
        done.written.len()
    ));
    ExitCode::from(if failed > 0 { BAD_INPUT } else { 1 })
}
