//! The kernel's log during a run: every line that names one of the run's
//! disks, kept in the result document with the test that was running on
//! that disk when it came (`ResultDoc::kernel_log`), and said on the
//! console as it is seen.
//!
//! `/dev/kmsg` is opened at the run's start and moved to its end (older
//! lines are not this run's), then read without blocking: each read is one
//! record (`bench_core::device::kmsg` parses it); EPIPE says records were
//! overwritten before they were read (counted, and reading goes on).
//!
//! It is polled, not read by a thread of its own: right before a test
//! starts on a disk, at each of the test's progress reports (once a second
//! of the step's clock, on the run's own thread, which is waiting for the
//! step anyway), and right after the test ends. A poll costs one
//! non-blocking read() when nothing came, so it wakes no CPU the benchmark
//! uses and the kernel keeps the records in its buffer meanwhile. The
//! polls at the test's edges are what attribute a line: the kernel logs an
//! I/O error before the failed request completes to its submitter, so a
//! line of the test's I/O is in the buffer by the time the test returns;
//! what is read before a test starts came before it. (The record's own
//! timestamp, kept as `time_ns`, is the kernel's clock, which is not quite
//! CLOCK_MONOTONIC; the order of reads needs no clock at all.)

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use bench_core::device::kmsg::{self, DiskRefs, LINES_PER_DISK};
use bench_core::document::result::{KernelLogKind, KernelLogLine, KernelLogStatus, TargetKind};

use crate::plan::Plan;

/// What a read of the log gave.
#[derive(Debug)]
pub enum Next {
    /// One record, this many bytes long, at the start of the buffer.
    Record(usize),
    /// Nothing waiting.
    Empty,
    /// Records were overwritten before they were read (EPIPE).
    Overwritten,
    /// The log cannot be read any more: why.
    Failed(String),
}

/// Where records come from: `/dev/kmsg` ([`DevKmsg`]), or a test's queue.
pub trait Source: std::fmt::Debug {
    /// The next record into `buf`, without waiting.
    fn next(&mut self, buf: &mut [u8]) -> Next;
}

/// `/dev/kmsg`, read without blocking from where it was opened.
#[derive(Debug)]
pub struct DevKmsg(File);

impl DevKmsg {
    /// Open `/dev/kmsg` (or a file like it at `path`) and skip every
    /// record already there (SEEK_END).
    pub fn open(path: &Path) -> std::io::Result<DevKmsg> {
        let mut f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)?;
        f.seek(SeekFrom::End(0))?;
        Ok(DevKmsg(f))
    }
}

impl Source for DevKmsg {
    fn next(&mut self, buf: &mut [u8]) -> Next {
        loop {
            return match self.0.read(buf) {
                Ok(0) => Next::Empty,
                Ok(n) => Next::Record(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Next::Empty,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => Next::Overwritten,
                Err(e) => Next::Failed(format!("reading /dev/kmsg: {e}")),
            };
        }
    }
}

/// Console lines per disk between two edges of a test; more are only kept.
const CONSOLE_PER_WINDOW: usize = 5;
/// Records read at most per poll (a log flooding faster than this is read
/// on at the next poll).
const MAX_PER_POLL: usize = 10_000;
/// The largest record /dev/kmsg returns (CONSOLE_EXT_LOG_MAX).
const RECORD_MAX: usize = 8192;

/// One disk whose lines are looked for.
#[derive(Debug)]
struct Watched {
    /// Its index in the plan's targets.
    ti: usize,
    path: String,
    refs: DiskRefs,
    kept: usize,
    dropped: u64,
    /// Console lines said since the last edge.
    said: usize,
}

/// The run's reader of the kernel's log.
#[derive(Debug)]
pub struct KernelLog {
    source: Option<Box<dyn Source>>,
    disks: Vec<Watched>,
    /// The test running on each disk now: (target index, test name).
    running: Vec<(usize, String)>,
    lines: Vec<KernelLogLine>,
    overwritten: u64,
    error: Option<String>,
    buf: Vec<u8>,
}

impl KernelLog {
    /// Watch the plan's disks (block devices it found: not files,
    /// simulated or absent disks, arrays or layers) from now on; `None`
    /// when it has none. A log that cannot be opened is recorded as such.
    pub fn start(plan: &Plan, log: &mut dyn FnMut(&str)) -> Option<KernelLog> {
        let disks: Vec<(usize, String, DiskRefs)> = (0..plan.targets.len())
            .filter(|&ti| plan.is_disk(ti))
            .filter_map(|ti| {
                let t = &plan.targets[ti];
                let name = t.info.name.as_deref()?;
                (t.info.kind == TargetKind::Block && t.missing.is_none() && t.sim.is_none())
                    .then(|| (ti, t.info.path.clone(), refs_of(name, crate::sysfs::root())))
            })
            .collect();
        if disks.is_empty() {
            return None;
        }
        let source = DevKmsg::open(Path::new("/dev/kmsg"))
            .map(|s| Box::new(s) as Box<dyn Source>)
            .map_err(|e| format!("cannot read /dev/kmsg: {e}"));
        if let Err(e) = &source {
            log(&format!(
                "bootbench-init: {e}; the disks' kernel log lines are not recorded"
            ));
        }
        Some(KernelLog::with_source(disks, source))
    }

    /// A reader of `source` for `disks` (target index, path, names).
    pub fn with_source(disks: Vec<(usize, String, DiskRefs)>, source: Result<Box<dyn Source>, String>) -> KernelLog {
        let (source, error) = match source {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e)),
        };
        KernelLog {
            source,
            disks: disks
                .into_iter()
                .map(|(ti, path, refs)| Watched {
                    ti,
                    path,
                    refs,
                    kept: 0,
                    dropped: 0,
                    said: 0,
                })
                .collect(),
            running: Vec::new(),
            lines: Vec::new(),
            overwritten: 0,
            error,
            buf: vec![0u8; RECORD_MAX],
        }
    }

    /// Test `test` starts on the disks `tis` (target indices): what came
    /// before is read first, and belongs to no test of theirs.
    pub fn begin(&mut self, tis: &[usize], test: &str, log: &mut dyn FnMut(&str)) {
        self.edge(log);
        self.running = tis.iter().map(|&ti| (ti, test.to_string())).collect();
    }

    /// The running test ended: what came until now was during it.
    pub fn end(&mut self, log: &mut dyn FnMut(&str)) {
        self.edge(log);
        self.running.clear();
    }

    fn edge(&mut self, log: &mut dyn FnMut(&str)) {
        self.poll(log);
        for d in &mut self.disks {
            d.said = 0;
        }
    }

    /// Read every record waiting; keep those that name a watched disk.
    pub fn poll(&mut self, log: &mut dyn FnMut(&str)) {
        let Some(mut source) = self.source.take() else { return };
        let mut buf = std::mem::take(&mut self.buf);
        for _ in 0..MAX_PER_POLL {
            match source.next(&mut buf) {
                Next::Record(n) => self.record(&buf[..n.min(buf.len())], log),
                Next::Empty => break,
                Next::Overwritten => {
                    self.overwritten += 1;
                    log("bootbench-init: the kernel's log wrapped before it was read: some of its lines are lost");
                }
                Next::Failed(why) => {
                    log(&format!("bootbench-init: {why}; the kernel's log is no longer read"));
                    self.error = Some(why);
                    self.buf = buf;
                    return;
                }
            }
        }
        self.buf = buf;
        self.source = Some(source);
    }

    /// One record: kept for each watched disk it names.
    fn record(&mut self, bytes: &[u8], log: &mut dyn FnMut(&str)) {
        let Ok(r) = kmsg::parse_record(bytes) else { return };
        if r.facility != 0 {
            return; // user space's lines (bootbench's own among them)
        }
        let text = kmsg::escape_text(r.text);
        let Some(kind) = kmsg::classify(&text, r.level) else {
            return;
        };
        let device = r.device.map(String::from_utf8_lossy);
        for d in &mut self.disks {
            if !d.refs.names(&text, device.as_deref()) {
                continue;
            }
            let test = self.running.iter().find(|(ti, _)| *ti == d.ti).map(|(_, t)| t.clone());
            say(d, test.as_deref(), kind, &text, log);
            if d.kept >= LINES_PER_DISK {
                d.dropped += 1;
                continue;
            }
            d.kept += 1;
            self.lines.push(KernelLogLine {
                target: d.path.clone(),
                test,
                kind,
                level: r.level,
                time_ns: r.time_us.saturating_mul(1000),
                text: text.clone(),
                sector: kmsg::sector_of(&text),
            });
        }
    }

    /// Read what is left; the lines kept and how the log was read.
    pub fn finish(mut self, log: &mut dyn FnMut(&str)) -> (Vec<KernelLogLine>, KernelLogStatus) {
        self.end(log);
        let status = KernelLogStatus {
            watched: self.disks.iter().map(|d| d.path.clone()).collect(),
            error: self.error,
            overwritten: self.overwritten,
            dropped: self
                .disks
                .iter()
                .filter(|d| d.dropped > 0)
                .map(|d| (d.path.clone(), d.dropped))
                .collect(),
        };
        (self.lines, status)
    }
}

/// The console line of a kept line, at most [`CONSOLE_PER_WINDOW`] per
/// disk between two edges of a test, then one saying the rest are only kept.
fn say(d: &mut Watched, test: Option<&str>, kind: KernelLogKind, text: &str, log: &mut dyn FnMut(&str)) {
    d.said += 1;
    let during = test.map(|t| format!(" during {t}")).unwrap_or_default();
    if d.said <= CONSOLE_PER_WINDOW {
        log(&format!("bootbench-init: kernel: {}{during}: {kind}: {text}", d.path));
    } else if d.said == CONSOLE_PER_WINDOW + 1 {
        log(&format!(
            "bootbench-init: kernel: {}{during}: more lines; they are in the result document",
            d.path
        ));
    }
}

/// The names disk `name` has in the kernel's lines, from sysfs under
/// `sys`: its device numbers and its partitions', and, from its device's
/// path, the libata port (`ataN`), the SCSI address (`H:C:T:L`) and the
/// NVMe controller (`nvmeN`; else from the name, `nvme0n1` -> `nvme0`).
pub fn refs_of(name: &str, sys: &Path) -> DiskRefs {
    let dir = sys.join("class/block").join(name);
    let mut refs = DiskRefs {
        name: name.to_string(),
        ..DiskRefs::default()
    };
    let devnum = |p: &Path| {
        let s = std::fs::read_to_string(p.join("dev")).ok()?;
        let (a, b) = s.trim().split_once(':')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    };
    refs.devnums.extend(devnum(&dir));
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(name) {
                refs.devnums.extend(devnum(&e.path()));
            }
        }
    }
    refs.devnums.sort_unstable();
    if let Ok(device) = std::fs::canonicalize(dir.join("device")) {
        for c in device.iter().filter_map(|c| c.to_str()) {
            if let Some(n) = c.strip_prefix("ata").and_then(|n| n.parse().ok()) {
                refs.ata_port = Some(n);
            } else if c.split(':').count() == 4 && c.split(':').all(|p| p.parse::<u32>().is_ok()) {
                refs.scsi = Some(c.to_string());
            } else if c
                .strip_prefix("nvme")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            {
                refs.nvme_ctrl = Some(c.to_string());
            }
        }
    }
    if refs.nvme_ctrl.is_none() {
        refs.nvme_ctrl = nvme_ctrl_of(name);
    }
    refs
}

/// `nvme0` of `nvme0n1`.
fn nvme_ctrl_of(name: &str) -> Option<String> {
    let rest = name.strip_prefix("nvme")?;
    let (ctrl, ns) = rest.split_once('n')?;
    (!ctrl.is_empty() && ctrl.bytes().all(|b| b.is_ascii_digit()) && ns.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("nvme{ctrl}"))
}

#[cfg(test)]
pub(crate) mod tests;
