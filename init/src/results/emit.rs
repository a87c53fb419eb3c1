//! A document out: to the boot stick and framed on the console and the
//! serial ports ([`emit`], and [`rescue_to`] for PID 1's rescue of a dead
//! worker's), or to the live command's `--out` file ([`to_file`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use bench_core::document::frame::{self, Nonce};
use bench_core::document::result::ResultDoc;
use bench_core::verdict::table::render_to;
use embedded_io_adapters::std::FromStd;

use crate::results::beside::{self, Evidence};
use crate::results::serial;
use crate::results::{sink, stick};

/// What [`emit`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Emitted {
    /// The document's bytes, as on the stick and in the frame (None when it
    /// could not be encoded).
    pub json: Option<String>,
    /// The file written on the stick.
    pub saved: Option<PathBuf>,
}

/// Where a booted run's document goes besides the console.
#[derive(Clone, Copy, Debug)]
pub struct Stick<'a> {
    /// The stick's root, if one is mounted (read-write or not).
    pub root: Option<&'a Path>,
    /// Why there is none, for the console.
    pub no_stick_why: &'a str,
    /// This machine's name in result file names.
    pub machine: &'a str,
}

/// How far [`emit`] got, as it goes (PID 1's worker tells PID 1, so a
/// rescue saves what is not out yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// The document, encoded.
    Encoded(&'a str),
    /// Saved on the stick under this name (empty: not saved).
    Saved(&'a str),
    /// Framed on `out`.
    Framed,
}

/// Emit a document: the results file on the stick (if one is mounted) via
/// [`stick::save_result`] and `files` beside it ([`beside::save_beside`]:
/// a failed NVMe disk's telemetry log), then the frame on `out` (under the
/// stick file's name, with this boot's `nonce`), then the text table on
/// `out`. `log` says where each file went, or why none was written; `step`
/// hears each step as it is done.
pub fn emit(
    doc: &ResultDoc,
    files: &[Evidence],
    to: Stick<'_>,
    nonce: Nonce,
    out: &mut dyn Write,
    log: &mut dyn FnMut(&str),
    step: &mut dyn FnMut(Step<'_>),
) -> Emitted {
    let mut json = match serde_json::to_string_pretty(doc) {
        Ok(j) => j,
        Err(e) => {
            log(&format!("cannot encode the results: {e}"));
            return Emitted::default();
        }
    };
    json.push('\n');
    step(Step::Encoded(&json));
    let saved = match to.root {
        Some(r) => stick::save_result(r, to.machine, json.as_bytes()),
        None => Err(stick::SaveError::NoStick(to.no_stick_why.to_string())),
    };
    let name = match &saved {
        Ok(p) => {
            log(&format!("results written to the stick: {}", p.display()));
            p.file_name()
                .map_or_else(|| format!("{}.json", to.machine), |n| n.to_string_lossy().into_owned())
        }
        Err(e) => {
            log(&format!("{e}; the results follow on the serial console only"));
            format!("{}.json", to.machine)
        }
    };
    step(Step::Saved(if saved.is_ok() { &name } else { "" }));
    match &saved {
        Ok(p) => beside::say("telemetry log", &beside::save_beside(p, files), &mut *log),
        Err(_) if !files.is_empty() => log(&format!(
            "{} telemetry log(s) not saved: the results are not on a stick",
            files.len()
        )),
        Err(_) => {}
    }
    let _ = frame::encode_to(
        &mut FromStd::new(&mut *out),
        &name,
        &frame::compact_json(json.as_bytes()),
        nonce,
    );
    let _ = out.flush();
    step(Step::Framed);
    let _ = render_to(&mut FromStd::new(&mut *out), doc);
    let _ = out.flush();
    Emitted {
        json: Some(json),
        saved: saved.ok(),
    }
}

/// What PID 1 saves of a dead worker's: its document, the files beside
/// it, and whether it is on the stick already.
#[derive(Clone, Copy, Debug)]
pub struct Rescued<'a> {
    /// The document.
    pub doc: &'a str,
    /// Files to save beside it when it goes to the stick.
    pub files: &'a [Evidence],
    /// The name the worker saved it under on the stick, if it did.
    pub saved_as: Option<&'a str>,
    /// Save it to the stick (it is not there yet).
    pub to_stick: bool,
}

/// PID 1's save of a dead worker's document `r.doc`: to the stick `stick`
/// (root, machine) when `r.to_stick`, with `r.files` beside it, then
/// framed on `out` under the stick file's name (else `r.saved_as`, the
/// name the worker saved it under, else `<machine>.json`).
pub fn rescue_to(
    r: Rescued<'_>,
    stick: Option<&(PathBuf, String)>,
    nonce: Nonce,
    out: &mut dyn Write,
    log: &mut dyn FnMut(&str),
) {
    let Rescued {
        doc,
        files,
        saved_as,
        to_stick,
    } = r;
    let machine = stick.map_or("unknown", |(_, m)| m.as_str());
    let mut name = saved_as.map_or_else(|| format!("{machine}.json"), str::to_string);
    match (to_stick, stick) {
        (true, Some((root, machine))) => match stick::save_result(root, machine, doc.as_bytes()) {
            Ok(p) => {
                log(&format!("supervisor: results written to the stick: {}", p.display()));
                if let Some(n) = p.file_name() {
                    name = n.to_string_lossy().into_owned();
                }
                beside::say("supervisor: telemetry log", &beside::save_beside(&p, files), &mut *log);
            }
            Err(e) => log(&format!(
                "supervisor: {e}; the results follow on the serial console only"
            )),
        },
        (true, None) => log("supervisor: no stick was mounted; the results follow on the serial console only"),
        (false, _) => {}
    }
    let _ = frame::encode_to(
        &mut FromStd::new(&mut *out),
        &name,
        &frame::compact_json(doc.as_bytes()),
        nonce,
    );
    let _ = out.flush();
}

/// Where a booted run's results go: the console (stdout), and the serial
/// ports of [`serial::ports_in`] (`choice`: the command line's
/// `bootbench.serial=`, else the config's `serial_ports`, else every UART
/// the console does not write to), each opened with this boot's announce
/// line first, so a frame cut from any port's log is verified as the
/// console's are. A port that cannot be opened is said and left out.
pub fn serial_out(choice: &serial::Choice, nonce: Nonce, log: &mut dyn FnMut(&str)) -> serial::Tee<std::io::Stdout> {
    let mut ports = Vec::new();
    for name in serial::ports_in(crate::sysfs::root(), choice) {
        let opened = serial::open(&name).and_then(|mut f| {
            f.write_all(format!("\n{}", frame::announce(nonce)).as_bytes())
                .map(|()| f)
        });
        match opened {
            Ok(f) => ports.push((name, f)),
            Err(e) => log(&format!("serial port {name}: {e}; the results are not written there")),
        }
    }
    let tee = serial::Tee::new(std::io::stdout(), ports);
    if !tee.port_names().is_empty() {
        log(&format!(
            "the results also go to serial port(s) {}",
            tee.port_names().join(", ")
        ));
    }
    tee
}

/// The live command's document `json` into `file` (made, and its room
/// taken, before the run: [`sink::NewFile`]), else to stdout. Should the
/// file fail even so, the document goes to stdout instead, and the error
/// says so: it is never lost.
pub fn to_file(file: Option<sink::NewFile>, json: &str) -> Result<(), String> {
    match file {
        Some(mut f) => f
            .write_with(json.as_bytes(), &mut |_| {})
            .and_then(|()| f.commit())
            .map_err(|e| {
                let on_stdout = sink::write_stdout(json.as_bytes()).is_ok();
                format!(
                    "{e}; {}",
                    if on_stdout {
                        "the results were written to stdout instead"
                    } else {
                        "nor could they be written to stdout"
                    }
                )
            }),
        None => sink::write_stdout(json.as_bytes()).map_err(|e| format!("cannot write the results to stdout: {e}")),
    }
}
