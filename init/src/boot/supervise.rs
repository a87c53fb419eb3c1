//! PID 1 as a small supervisor. PID 1 mounts what the console and the
//! results need, then forks the worker, which does everything else (drivers,
//! disks, the config, stacks, the benchmark, the results) and reports to
//! PID 1 through a pipe as it goes: the stick it mounted, the document after
//! each test, the final document, where it saved it, the run's bound, and
//! what to do at the end. PID 1 only reads, waits and reaps.
//!
//! When the worker ends normally (exit status 0 after saying what to do
//! next) PID 1 carries that out. When it dies any other way (a panic, which
//! aborts; an abort; an allocation failure; a stack overflow; a signal; a
//! hang past its run bound, when PID 1 kills it), PID 1 saves what the
//! worker had reported: the latest document marked `error` with how the
//! worker ended (to the stick when one was reported, and framed on the
//! console), tears down the md and dm devices left behind, and powers off.
//! PID 1 itself never panics into a kernel panic: its own work is this
//! loop, and its panic hook only powers off.
//!
//! A message on the pipe: one tag byte, the payload's length (u32,
//! little-endian), the payload.

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::process::{self, Exit};
use crate::boot::OnFinish;
use crate::results::beside::Evidence;

/// The longest message PID 1 takes (a document of a long run with every
/// per-second sample fits many times over); a longer one is dropped.
pub const MAX_MESSAGE: usize = 64 << 20;

/// How long PID 1 lets the worker run before it has reported its run bound
/// (drivers, discovery and the plan: no benchmark yet).
pub const PLAN_LIMIT: Duration = Duration::from_secs(30 * 60);

/// What PID 1 adds to the worker's run bound before it kills the worker.
pub const BOUND_SLACK: Duration = Duration::from_secs(10 * 60);

/// How long PID 1 waits for a killed worker to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(10);

/// What the worker tells PID 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// The stick is mounted at `root`; results are named after `machine`.
    Stick { root: PathBuf, machine: String },
    /// The document so far (after each test).
    Partial(String),
    /// The final document, about to be saved and framed.
    Final(String),
    /// The final document is on the stick under this file name (empty: it
    /// could not be saved there).
    Saved(String),
    /// The final document's frame is out on the console.
    Framed,
    /// The run's bound, ns (every test at its deadline, and the rest).
    Bound(u64),
    /// The worker is done: what the machine does next.
    Finish(OnFinish),
    /// The worker panicked with this message (it aborts next).
    Panicked(String),
    /// A file to save beside the final document (a failed NVMe disk's
    /// telemetry log), sent before [`Msg::Final`]: PID 1 saves it with the
    /// document if it must save that.
    Beside(Evidence),
}

impl Msg {
    fn tag(&self) -> u8 {
        match self {
            Msg::Stick { .. } => 1,
            Msg::Partial(_) => 2,
            Msg::Final(_) => 3,
            Msg::Saved(_) => 4,
            Msg::Framed => 5,
            Msg::Bound(_) => 6,
            Msg::Finish(_) => 7,
            Msg::Panicked(_) => 8,
            Msg::Beside(_) => 9,
        }
    }

    /// The message on the pipe.
    pub fn encode(&self) -> Vec<u8> {
        let payload: Vec<u8> = match self {
            Msg::Stick { root, machine } => {
                let mut p = root.to_string_lossy().into_owned().into_bytes();
                p.push(0);
                p.extend_from_slice(machine.as_bytes());
                p
            }
            Msg::Partial(s) | Msg::Final(s) | Msg::Saved(s) | Msg::Panicked(s) => s.as_bytes().to_vec(),
            Msg::Framed => Vec::new(),
            Msg::Bound(ns) => ns.to_le_bytes().to_vec(),
            Msg::Finish(how) => how.to_string().into_bytes(),
            // The name (no NUL in it: [A-Za-z0-9_.-]), a NUL, the bytes.
            Msg::Beside(e) => {
                let mut p = Vec::with_capacity(e.file.len() + 1 + e.bytes.len());
                p.extend_from_slice(e.file.as_bytes());
                p.push(0);
                p.extend_from_slice(&e.bytes);
                p
            }
        };
        let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
        let mut out = Vec::with_capacity(payload.len() + 5);
        out.push(self.tag());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    fn decode(tag: u8, payload: &[u8]) -> Result<Msg, String> {
        let text = || String::from_utf8(payload.to_vec()).map_err(|_| format!("message {tag}: not UTF-8"));
        Ok(match tag {
            1 => {
                let t = text()?;
                let (root, machine) = t.split_once('\0').ok_or("message 1: no machine name")?;
                Msg::Stick {
                    root: PathBuf::from(root),
                    machine: machine.to_string(),
                }
            }
            2 => Msg::Partial(text()?),
            3 => Msg::Final(text()?),
            4 => Msg::Saved(text()?),
            5 => Msg::Framed,
            6 => Msg::Bound(u64::from_le_bytes(
                payload.try_into().map_err(|_| "message 6: not 8 bytes".to_string())?,
            )),
            7 => Msg::Finish(text()?.parse()?),
            8 => Msg::Panicked(text()?),
            9 => {
                let nul = payload.iter().position(|&b| b == 0).ok_or("message 9: no file name")?;
                Msg::Beside(Evidence {
                    file: String::from_utf8(payload[..nul].to_vec()).map_err(|_| "message 9: not UTF-8")?,
                    bytes: payload[nul + 1..].to_vec(),
                })
            }
            other => return Err(format!("unknown message tag {other}")),
        })
    }
}

/// Cuts messages out of the bytes read from the pipe, however they were
/// split by the reads.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Bytes of an oversized message still to skip.
    skip: usize,
}

impl Decoder {
    /// Take `bytes`; every whole message in them, in order (a message that
    /// cannot be read is an `Err` saying why; an oversized one is skipped).
    pub fn push(&mut self, mut bytes: &[u8]) -> Vec<Result<Msg, String>> {
        let mut out = Vec::new();
        if self.skip > 0 {
            let n = self.skip.min(bytes.len());
            self.skip -= n;
            bytes = &bytes[n..];
        }
        if self.buf.try_reserve(bytes.len()).is_err() {
            out.push(Err("out of memory for a message".to_string()));
            self.buf.clear();
            return out;
        }
        self.buf.extend_from_slice(bytes);
        loop {
            if self.buf.len() < 5 {
                break;
            }
            let len = usize::try_from(u32::from_le_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]))
                .unwrap_or(usize::MAX);
            if len > MAX_MESSAGE {
                out.push(Err(format!(
                    "a message of {len} bytes, more than {MAX_MESSAGE}: skipped"
                )));
                let have = self.buf.len() - 5;
                self.skip = len - have.min(len);
                self.buf.clear();
                break;
            }
            if self.buf.len() < 5 + len {
                break;
            }
            let tag = self.buf[0];
            out.push(Msg::decode(tag, &self.buf[5..5 + len]));
            self.buf.drain(..5 + len);
        }
        out
    }
}

/// What PID 1 knows from the worker's messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reports {
    pub stick: Option<(PathBuf, String)>,
    pub partial: Option<String>,
    pub final_doc: Option<String>,
    pub saved: Option<String>,
    pub framed: bool,
    pub bound_ns: Option<u64>,
    pub finish: Option<OnFinish>,
    pub panicked: Option<String>,
    /// The files to save beside the final document.
    pub beside: Vec<Evidence>,
}

impl Reports {
    /// Take one message.
    pub fn apply(&mut self, m: Msg) {
        match m {
            Msg::Stick { root, machine } => self.stick = Some((root, machine)),
            Msg::Partial(j) => self.partial = Some(j),
            Msg::Final(j) => self.final_doc = Some(j),
            Msg::Saved(n) => self.saved = Some(n),
            Msg::Framed => self.framed = true,
            Msg::Bound(ns) => self.bound_ns = Some(ns),
            Msg::Finish(how) => self.finish = Some(how),
            Msg::Panicked(p) => self.panicked = Some(p),
            Msg::Beside(e) => self.beside.push(e),
        }
    }
}

/// How the worker ended, as PID 1 saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It exited or was killed by a signal.
    Exited(Exit),
    /// It ran past its limit; PID 1 killed it (and reaped it, or not).
    Overran { limit: Duration, reaped: bool },
    /// waitpid failed (the errno).
    Lost(i32),
    /// It closed its pipe but had not ended after this long: a thread of
    /// it still waits on a disk (a read of a dying disk that a bounded
    /// wait gave up on), and an exiting process waits for its threads.
    Unended(Duration),
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::Exited(Exit::Code(c)) => write!(f, "exited with status {c}"),
            Ending::Exited(Exit::Signal(s)) => write!(f, "ended by {}", process::signal_name(*s)),
            Ending::Overran { limit, reaped } => write!(
                f,
                "ran past {} s and was killed{}",
                limit.as_secs(),
                if *reaped { "" } else { " (it did not end: hung in I/O)" }
            ),
            Ending::Lost(e) => write!(f, "could not be waited for ({})", std::io::Error::from_raw_os_error(*e)),
            Ending::Unended(w) => write!(f, "had not ended {} s after its last report (hung in I/O)", w.as_secs()),
        }
    }
}

/// What PID 1 does once the worker is gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conclusion {
    /// The worker ended normally: nothing to save.
    pub normal: bool,
    /// Why not, in words (for the console and the document).
    pub cause: Option<String>,
    /// The document to save and frame, if any is left to save.
    pub doc: Option<String>,
    /// Save it to the stick too (it is not there yet).
    pub to_stick: bool,
    /// The frame's file name when the document is on the stick already.
    pub saved_as: Option<String>,
    /// The files to save beside the document when it goes to the stick
    /// (the final document's only: a partial one names none).
    pub beside: Vec<Evidence>,
    /// What the machine does next.
    pub how: OnFinish,
}

/// Decide what to do after the worker ended (`ending`) having reported
/// `r`; `fallback` is what to do next when it never said (the command
/// line's `on_finish`, else power off); `blank` makes the error document
/// for a worker that reported no document, from the cause.
pub fn conclude(r: &Reports, ending: &Ending, fallback: OnFinish, blank: &dyn Fn(&str) -> String) -> Conclusion {
    let how = r.finish.unwrap_or(fallback);
    // A worker that finished and framed its document but cannot end (a
    // thread stuck reading a disk) left nothing undone either.
    let done = match ending {
        Ending::Exited(Exit::Code(0)) => true,
        Ending::Unended(_) => r.framed,
        _ => false,
    };
    if done && r.finish.is_some() {
        return Conclusion {
            normal: true,
            cause: None,
            doc: None,
            to_stick: false,
            saved_as: None,
            beside: Vec::new(),
            how,
        };
    }
    let cause = match &r.panicked {
        Some(p) => format!("the worker process panicked ({p}) and {ending}"),
        None => format!("the worker process {ending}"),
    };
    // The final document names the files it was sent with; a partial one
    // was encoded before them and names none.
    let beside = if r.final_doc.is_some() {
        r.beside.clone()
    } else {
        Vec::new()
    };
    let (doc, to_stick, saved_as) = if r.framed {
        // Everything is out already (it died while finishing).
        (None, false, None)
    } else if let Some(j) = r.final_doc.as_ref().or(r.partial.as_ref()) {
        let saved = r.saved.clone().filter(|n| !n.is_empty());
        (Some(mark_interrupted(j, &cause)), saved.is_none(), saved)
    } else {
        (Some(blank(&format!("{cause} before any result"))), true, None)
    };
    Conclusion {
        normal: false,
        cause: Some(cause),
        doc,
        to_stick,
        saved_as,
        beside: if to_stick { beside } else { Vec::new() },
        how,
    }
}

/// The document `json` marked as an interrupted run: `run.status` `error`,
/// `run.error` saying after how many tests and why. A document that cannot
/// be read is kept as it is (it is still the best there is).
pub fn mark_interrupted(json: &str, cause: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(json) else {
        return json.to_string();
    };
    let n = v["tests"].as_array().map_or(0, Vec::len);
    v["run"]["status"] = serde_json::Value::from("error");
    v["run"]["error"] = serde_json::Value::from(format!(
        "interrupted after {n} test(s): {cause}; these are the results so far"
    ));
    serde_json::to_string_pretty(&v).map_or_else(|_| json.to_string(), |s| s + "\n")
}

/// Read the worker's messages from `pipe` until it closes, killing the
/// worker `pid` when it runs past its limit ([`PLAN_LIMIT`] until it
/// reports its bound, then the bound and [`BOUND_SLACK`]); then reap it.
pub fn watch(pipe: &mut File, pid: libc::pid_t, log: &mut dyn FnMut(&str)) -> (Reports, Ending) {
    use std::io::Read;
    let start = Instant::now();
    let mut r = Reports::default();
    let mut dec = Decoder::default();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let limit = r
            .bound_ns
            .map_or(PLAN_LIMIT, |ns| Duration::from_nanos(ns).saturating_add(BOUND_SLACK));
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            log(&format!(
                "supervisor: the worker ran past {} s; killing it",
                limit.as_secs()
            ));
            let _ = process::kill_hard(pid);
            let reaped = reap_within(pid, REAP_WAIT).is_some();
            return (r, Ending::Overran { limit, reaped });
        }
        let ms = i32::try_from(left.as_millis().min(1000)).unwrap_or(1000);
        match process::readable(pipe, ms) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(e) => {
                log(&format!("supervisor: poll: {}", std::io::Error::from(e)));
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        }
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                for m in dec.push(&buf[..n]) {
                    match m {
                        Ok(m) => r.apply(m),
                        Err(e) => log(&format!("supervisor: {e}")),
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                log(&format!("supervisor: reading the worker's reports: {e}"));
                break;
            }
        }
    }
    // The pipe closed: the worker is gone, or closing. Closing takes
    // moments, unless a thread of it waits on a disk that does not answer
    // (an exiting process waits for its threads): then PID 1 goes on.
    let ending = match reap_within(pid, REAP_WAIT) {
        Some(e) => Ending::Exited(e),
        None => match process::wait(pid, false) {
            Ok(Some(e)) => Ending::Exited(e),
            Ok(None) => {
                log(&format!(
                    "supervisor: the worker has not ended {} s after closing its reports (a disk read still \
                     outstanding); going on",
                    REAP_WAIT.as_secs()
                ));
                let _ = process::kill_hard(pid);
                Ending::Unended(REAP_WAIT)
            }
            Err(e) => Ending::Lost(e as i32),
        },
    };
    process::reap_others();
    (r, ending)
}

/// Wait up to `wait` for `pid` to end.
fn reap_within(pid: libc::pid_t, wait: Duration) -> Option<Exit> {
    let start = Instant::now();
    while start.elapsed() < wait {
        if let Ok(Some(e)) = process::wait(pid, false) {
            return Some(e);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// The worker's end of the pipe, once set (in the worker only).
static REPORTER: Mutex<Option<File>> = Mutex::new(None);

/// In the worker: report to PID 1 through `pipe` from now on.
pub fn set_reporter(pipe: File) {
    *REPORTER.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(pipe);
}

/// Tell PID 1 `m` (nothing when this process is no supervised worker:
/// the live command, unit tests). A failed write is only a lost report.
pub fn report(m: &Msg) {
    let mut g = match REPORTER.try_lock() {
        Ok(g) => g,
        // A panic while reporting: the panic's own report is lost, no deadlock.
        Err(std::sync::TryLockError::WouldBlock) => return,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
    };
    if let Some(f) = g.as_mut() {
        let _ = f.write_all(&m.encode());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Msg> {
        vec![
            Msg::Stick {
                root: "/mnt/stick".into(),
                machine: "SN-1".into(),
            },
            Msg::Partial("{\"a\":1}".into()),
            Msg::Final("{\"b\":2}".into()),
            Msg::Saved("SN-1-3.json".into()),
            Msg::Framed,
            Msg::Bound(192_000_000_000),
            Msg::Finish(OnFinish::Halt),
            Msg::Panicked("boom".into()),
            Msg::Beside(Evidence {
                file: "nvme0n1.telemetry.bin".into(),
                bytes: vec![0, 1, 0, 255, b'\n'],
            }),
        ]
    }

    #[test]
    fn messages_round_trip_however_the_bytes_are_split() {
        let bytes: Vec<u8> = all().iter().flat_map(Msg::encode).collect();
        for split in [1, 2, 5, 7, 64, bytes.len()] {
            let mut d = Decoder::default();
            let got: Vec<Msg> = bytes
                .chunks(split)
                .flat_map(|c| d.push(c))
                .map(|m| m.expect("a good message"))
                .collect();
            assert_eq!(got, all(), "split {split}");
        }
    }

    #[test]
    fn bad_and_oversized_messages_are_errors_and_the_stream_goes_on() {
        let mut bytes = vec![99u8, 1, 0, 0, 0, b'x'];
        let big = u32::try_from(MAX_MESSAGE + 1).unwrap();
        bytes.push(2);
        bytes.extend_from_slice(&big.to_le_bytes());
        let mut d = Decoder::default();
        let got = d.push(&bytes);
        assert!(
            got[0].as_ref().is_err_and(|e| e.contains("unknown message tag 99")),
            "{got:?}"
        );
        assert!(got[1].as_ref().is_err_and(|e| e.contains("skipped")), "{got:?}");
        // The oversized payload is skipped as it arrives; the next message is read.
        let mut rest = vec![b'y'; MAX_MESSAGE + 1];
        rest.extend_from_slice(&Msg::Framed.encode());
        let got: Vec<_> = rest.chunks(1 << 20).flat_map(|c| d.push(c)).collect();
        assert_eq!(got, vec![Ok(Msg::Framed)]);
    }

    fn reports(msgs: Vec<Msg>) -> Reports {
        let mut r = Reports::default();
        for m in msgs {
            r.apply(m);
        }
        r
    }

    const DOC: &str = r#"{"run":{"status":"ok","error":null},"tests":[{"name":"a"}]}"#;

    #[test]
    fn a_normal_end_saves_nothing_more() {
        let r = reports(vec![Msg::Final(DOC.into()), Msg::Framed, Msg::Finish(OnFinish::Reboot)]);
        let c = conclude(&r, &Ending::Exited(Exit::Code(0)), OnFinish::PowerOff, &|_| {
            String::new()
        });
        assert!(c.normal && c.doc.is_none());
        assert_eq!(c.how, OnFinish::Reboot);
    }

    /// A worker stuck in a disk read after its document went out ends the
    /// run as planned; one stuck before framing it is an abnormal end.
    #[test]
    fn a_worker_that_cannot_end_after_its_document_went_out_is_no_failure() {
        let wait = Duration::from_secs(10);
        let done = reports(vec![
            Msg::Final(DOC.into()),
            Msg::Framed,
            Msg::Finish(OnFinish::PowerOff),
        ]);
        let c = conclude(&done, &Ending::Unended(wait), OnFinish::Halt, &|_| String::new());
        assert!(c.normal && c.doc.is_none(), "{c:?}");
        assert_eq!(c.how, OnFinish::PowerOff);
        let midway = reports(vec![Msg::Final(DOC.into()), Msg::Finish(OnFinish::PowerOff)]);
        let c = conclude(&midway, &Ending::Unended(wait), OnFinish::Halt, &|_| String::new());
        assert!(!c.normal, "{c:?}");
        assert!(
            c.cause
                .as_deref()
                .unwrap_or("")
                .contains("had not ended 10 s after its last report (hung in I/O)"),
            "{c:?}"
        );
    }

    #[test]
    fn an_abnormal_end_saves_the_latest_document_marked_with_the_cause() {
        let blank = |why: &str| format!("blank: {why}");
        // An abort after one test: the partial document, to the stick and the console.
        let r = reports(vec![Msg::Partial(DOC.into())]);
        let c = conclude(&r, &Ending::Exited(Exit::Signal(libc::SIGABRT)), OnFinish::Halt, &blank);
        assert!(!c.normal && c.to_stick && c.saved_as.is_none());
        assert_eq!(c.how, OnFinish::Halt, "the fallback");
        let v: serde_json::Value = serde_json::from_str(c.doc.as_deref().unwrap()).unwrap();
        assert_eq!(v["run"]["status"], "error");
        let e = v["run"]["error"].as_str().unwrap();
        assert!(
            e.starts_with("interrupted after 1 test(s): the worker process ended by signal 6 (SIGABRT)"),
            "{e}"
        );
        // A panic: its message is the cause.
        let r = reports(vec![Msg::Partial(DOC.into()), Msg::Panicked("boom".into())]);
        let c = conclude(
            &r,
            &Ending::Exited(Exit::Signal(libc::SIGABRT)),
            OnFinish::PowerOff,
            &blank,
        );
        assert!(c.cause.as_deref().unwrap().contains("panicked (boom)"), "{c:?}");
        // Died after saving to the stick: the frame under the saved name, no second file.
        let r = reports(vec![
            Msg::Final(DOC.into()),
            Msg::Saved("SN-2.json".into()),
            Msg::Finish(OnFinish::Reboot),
        ]);
        let c = conclude(&r, &Ending::Exited(Exit::Code(101)), OnFinish::PowerOff, &blank);
        assert!(!c.to_stick && c.saved_as.as_deref() == Some("SN-2.json"));
        assert_eq!(c.how, OnFinish::Reboot, "what it said to do");
        // Died after the frame: nothing left to save.
        let r = reports(vec![Msg::Final(DOC.into()), Msg::Saved(String::new()), Msg::Framed]);
        let c = conclude(
            &r,
            &Ending::Exited(Exit::Signal(libc::SIGSEGV)),
            OnFinish::PowerOff,
            &blank,
        );
        assert!(c.doc.is_none() && !c.normal);
        // Nothing reported: the error document from the cause.
        let c = conclude(
            &Reports::default(),
            &Ending::Overran {
                limit: Duration::from_secs(1800),
                reaped: false,
            },
            OnFinish::PowerOff,
            &blank,
        );
        assert_eq!(
            c.doc.as_deref(),
            Some("blank: the worker process ran past 1800 s and was killed (it did not end: hung in I/O) before any result")
        );
        // Exit status 0 without saying what to do next is not a normal end.
        let c = conclude(
            &Reports::default(),
            &Ending::Exited(Exit::Code(0)),
            OnFinish::PowerOff,
            &blank,
        );
        assert!(!c.normal);
    }

    /// The supervisor's loop on a real process: its messages are read, and
    /// its death by a signal after them is seen.
    #[test]
    #[allow(clippy::zombie_processes)] // reaped by `watch`, the code under test
    fn watch_reads_the_reports_then_sees_the_death() {
        let script = "printf '\\005\\000\\000\\000\\000\\006\\010\\000\\000\\000\\001\\000\\000\\000\\000\\000\\000\\000'; kill -ABRT $$";
        let mut child = std::process::Command::new("sh")
            .args(["-c", script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let mut pipe = File::from(std::os::fd::OwnedFd::from(child.stdout.take().expect("stdout")));
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        let mut lines = Vec::new();
        let (r, ending) = watch(&mut pipe, pid, &mut |l| lines.push(l.to_string()));
        assert!(r.framed, "{r:?}");
        assert_eq!(r.bound_ns, Some(1));
        assert_eq!(ending, Ending::Exited(Exit::Signal(libc::SIGABRT)));
        assert!(lines.is_empty(), "{lines:?}");
    }
}
