//! Running QEMU: prepare the disks and firmware variables, spawn, wait with a
//! timeout (kill on expiry), read the serial log, cut the result frames out.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use bench_core::document::frame::{self, Frame, FrameError};
use bootbench_report::read::extract::{self, Extracted};

use crate::cmdline::{self, Accel, Attached, Boot, Machine, QEMU};
use crate::disk::{self, DiskSpec};
use crate::net::{self, Net};

/// What went wrong with a run as a whole.
#[derive(Debug)]
pub enum RunError {
    /// Preparing files or spawning QEMU failed.
    Io { what: String, err: io::Error },
    /// QEMU was still running after the timeout and was killed.
    Timeout { after: Duration, serial_log: PathBuf },
    /// The serial console stayed empty for [`SILENT_LIMIT`]: the guest hung
    /// before its firmware, boot loader or kernel wrote a byte, so before
    /// PID 1 ran (it writes at once). Killed.
    Silent { after: Duration, serial_log: PathBuf },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Io { what, err } => write!(f, "{what}: {err}"),
            RunError::Timeout { after, serial_log } => write!(
                f,
                "QEMU still running after {} s: killed (serial log: {})",
                after.as_secs(),
                serial_log.display()
            ),
            RunError::Silent { after, serial_log } => write!(
                f,
                "QEMU wrote nothing on the serial console in {} s: killed, the guest hung before PID 1 ran (serial log: {})",
                after.as_secs(),
                serial_log.display()
            ),
        }
    }
}

impl std::error::Error for RunError {}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> RunError {
    let what = what.into();
    move |err| RunError::Io { what, err }
}

/// How a process ended within its timeout, or that it did not.
#[derive(Debug)]
pub enum Waited {
    Exited(ExitStatus, Duration),
    TimedOut(Duration),
    /// `tick` asked for the end ([`Tick::Stop`]): killed and reaped, with
    /// the status the kill gave.
    Stopped(ExitStatus, Duration),
}

/// What a [`wait_bounded_with`] tick says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tick {
    Go,
    /// Kill the process now.
    Stop,
}

/// Wait for `child` at most `timeout`; kill and reap it on expiry.
pub fn wait_bounded(child: &mut Child, timeout: Duration) -> io::Result<Waited> {
    wait_bounded_with(child, timeout, &mut || Tick::Go)
}

/// [`wait_bounded`], calling `tick` before each look at `child` (every
/// 50 ms) and once more after it exited; a tick that says [`Tick::Stop`]
/// ends the wait at once, the child killed.
pub fn wait_bounded_with(child: &mut Child, timeout: Duration, tick: &mut dyn FnMut() -> Tick) -> io::Result<Waited> {
    let start = Instant::now();
    loop {
        let said = tick();
        if let Some(status) = child.try_wait()? {
            tick();
            return Ok(Waited::Exited(status, start.elapsed()));
        }
        if said == Tick::Stop || start.elapsed() >= timeout {
            child.kill()?;
            let status = child.wait()?;
            return Ok(if said == Tick::Stop {
                Waited::Stopped(status, start.elapsed())
            } else {
                Waited::TimedOut(start.elapsed())
            });
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// How long QEMU may go on after PID 1 called reboot(2) (its console line
/// [`bench_core::vocab::console::REBOOT_CALL`]): the kernel's own shutdown
/// of its devices takes under a second under TCG. A guest whose kernel
/// hangs there (seen once in hundreds of boots, a ZNS namespace's NVMe
/// shutdown under TCG, with no line from the kernel for 600 s) has saved
/// everything already: QEMU is killed and the outcome says so
/// ([`Outcome::hung_after_reboot_call`]) rather than the boot failing at
/// its whole timeout.
pub const REBOOT_GRACE: Duration = Duration::from_secs(60);

/// How long a guest's serial console may stay empty. Every boot writes to
/// it within seconds (OVMF's and SeaBIOS's screen codes, GRUB, or PID 1's
/// first line, under 4 s from the kernel's start under TCG; a network boot's
/// first line after its downloads, about 15 s): an empty console after 90 s
/// is a guest that hung before PID 1 ran (seen once in a CI run: two vCPUs
/// spinning under TCG, not a byte from the kernel, for 600 s), so nothing
/// of the run was done and [`RunError::Silent`] says so at once.
pub const SILENT_LIMIT: Duration = Duration::from_secs(90);

/// The outcome of a boot that ended by itself.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    pub elapsed: Duration,
    /// The serial console log (lossy UTF-8).
    pub serial: String,
    /// Result documents cut from the serial log, in order.
    pub frames: Vec<Result<Frame, FrameError>>,
    /// PID 1 called reboot(2) and QEMU had not ended [`REBOOT_GRACE`] later:
    /// killed (`status` is the kill's). Everything of the run was written
    /// before that call; the power-off itself did not happen.
    pub hung_after_reboot_call: bool,
}

impl Outcome {
    /// What to say of a guest killed [`REBOOT_GRACE`] after PID 1's reboot(2)
    /// call ([`Outcome::hung_after_reboot_call`]), if it was.
    pub fn reboot_hang_note(&self) -> Option<String> {
        self.hung_after_reboot_call.then(|| {
            format!(
                "the guest's kernel had not ended {} s after PID 1 called reboot(2): QEMU killed",
                REBOOT_GRACE.as_secs()
            )
        })
    }

    /// The good frames.
    pub fn documents(&self) -> impl Iterator<Item = &Frame> {
        self.frames.iter().filter_map(|f| f.as_ref().ok())
    }
}

/// PID 1's progress as the guest writes it: the new complete lines of a
/// growing serial log that are PID 1's own (`bootbench: ...`, after the
/// kernel's timestamp if any), each once, with `\r` and the line end
/// dropped and escaped by [`bench_core::vocab::console::safe`] (a kernel line may
/// hold a device's string). The frames' lines and the table are not
/// PID 1's progress, nor is what the kernel prints.
#[derive(Debug)]
pub struct Follow {
    path: PathBuf,
    /// Bytes of the log read so far.
    offset: u64,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
}

impl Follow {
    /// Follow `path` from its start.
    pub fn new(path: &Path) -> Follow {
        Follow {
            path: path.to_owned(),
            offset: 0,
            partial: Vec::new(),
        }
    }

    /// Read what the log gained since the last poll and hand each new
    /// progress line to `out`. A log that cannot be read yet is no error.
    pub fn poll(&mut self, out: &mut dyn FnMut(&str)) {
        let Ok(mut f) = File::open(&self.path) else { return };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut new = Vec::new();
        let Ok(n) = f.read_to_end(&mut new) else { return };
        self.offset += n as u64;
        self.partial.extend_from_slice(&new);
        let Some(last) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        let complete: Vec<u8> = self.partial.drain(..=last).collect();
        for line in String::from_utf8_lossy(&complete).split('\n') {
            if let Some(p) = progress_line(line) {
                out(&bench_core::vocab::console::safe(p));
            }
        }
    }
}

/// `line` if it is one of PID 1's own console lines (`bootbench: ...`,
/// perhaps after a kernel timestamp `[    3.402] `), without its `\r`.
fn progress_line(line: &str) -> Option<&str> {
    let line = line.trim_end_matches('\r');
    pid1_message(line).map(|_| line)
}

/// What PID 1 says in its console line `line` (`bootbench: MESSAGE`,
/// perhaps after a kernel timestamp): MESSAGE, or `None` for a line that
/// is not PID 1's.
fn pid1_message(line: &str) -> Option<&str> {
    let rest = match line.strip_prefix('[') {
        Some(r) => r.split_once("] ")?.1,
        None => line,
    };
    rest.strip_prefix("bootbench: ")
}

/// PID 1's line as it calls reboot(2): its message starts with
/// [`bench_core::vocab::console::REBOOT_CALL`] (a line that only quotes
/// those words, a disk's model that holds them, is not it).
fn is_reboot_call(line: &str) -> bool {
    pid1_message(line).is_some_and(|m| m.starts_with(bench_core::vocab::console::REBOOT_CALL))
}

/// Spawn `qemu args`, stdout and stderr to `<dir>/qemu.out` (QEMU's own
/// complaints), wait at most `timeout`, then read `serial_log`.
pub fn run_qemu(args: &[String], serial_log: &Path, dir: &Path, timeout: Duration) -> Result<Outcome, RunError> {
    run_qemu_following(args, serial_log, dir, timeout, None)
}

/// [`run_qemu`], handing PID 1's progress lines to `progress` as the guest
/// writes them ([`Follow`]), when there is one.
pub fn run_qemu_following(
    args: &[String],
    serial_log: &Path,
    dir: &Path,
    timeout: Duration,
    progress: Option<&mut dyn FnMut(&str)>,
) -> Result<Outcome, RunError> {
    let qemu_out = dir.join("qemu.out");
    let out = File::create(&qemu_out).map_err(io_err(qemu_out.display().to_string()))?;
    let err = out.try_clone().map_err(io_err("qemu.out"))?;
    let mut child = Command::new(QEMU)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(io_err(format!("spawning {QEMU}")))?;
    let limits = Limits {
        timeout,
        reboot_grace: REBOOT_GRACE,
        silent: SILENT_LIMIT,
    };
    let ended = wait_for_guest(&mut child, serial_log, &limits, progress);
    let (status, elapsed, hung_after_reboot_call) = match ended.map_err(io_err("waiting for QEMU"))? {
        GuestEnd::TimedOut(after) => {
            return Err(RunError::Timeout {
                after,
                serial_log: serial_log.to_owned(),
            })
        }
        GuestEnd::Silent(after) => {
            return Err(RunError::Silent {
                after,
                serial_log: serial_log.to_owned(),
            })
        }
        GuestEnd::Exited(status, elapsed) => (status, elapsed, false),
        GuestEnd::HungAfterRebootCall(status, elapsed) => (status, elapsed, true),
    };
    let bytes = fs::read(serial_log).map_err(io_err(serial_log.display().to_string()))?;
    let serial = String::from_utf8_lossy(&bytes).into_owned();
    let frames = frame::decode(&serial);
    Ok(Outcome {
        status,
        elapsed,
        serial,
        frames,
        hung_after_reboot_call,
    })
}

/// How long [`wait_for_guest`] waits.
#[derive(Clone, Copy, Debug)]
struct Limits {
    /// At most, in all.
    timeout: Duration,
    /// After PID 1's reboot(2) line ([`REBOOT_GRACE`]).
    reboot_grace: Duration,
    /// For the serial console's first byte ([`SILENT_LIMIT`]).
    silent: Duration,
}

/// How a guest's QEMU ended.
#[derive(Debug)]
enum GuestEnd {
    Exited(ExitStatus, Duration),
    TimedOut(Duration),
    /// Killed `reboot_grace` after PID 1's reboot(2) line.
    HungAfterRebootCall(ExitStatus, Duration),
    /// Killed: nothing on the console after `silent`.
    Silent(Duration),
}

/// Wait for the guest behind `child` within `limits`, following its console
/// `serial_log` (PID 1's lines to `progress`, if any): killed when its
/// console is still empty after `limits.silent`, or `limits.reboot_grace`
/// after PID 1 wrote that it calls reboot(2), or at `limits.timeout`.
fn wait_for_guest(
    child: &mut Child,
    serial_log: &Path,
    limits: &Limits,
    mut progress: Option<&mut dyn FnMut(&str)>,
) -> io::Result<GuestEnd> {
    let start = Instant::now();
    let mut follow = Follow::new(serial_log);
    let mut called: Option<Instant> = None;
    let mut silent = false;
    let waited = wait_bounded_with(child, limits.timeout, &mut || {
        follow.poll(&mut |line| {
            if called.is_none() && is_reboot_call(line) {
                called = Some(Instant::now());
            }
            if let Some(out) = progress.as_mut() {
                out(line)
            }
        });
        // What the follower has read of the log: nothing, nothing written.
        silent = follow.offset == 0 && start.elapsed() >= limits.silent;
        match called {
            _ if silent => Tick::Stop,
            Some(t) if t.elapsed() >= limits.reboot_grace => Tick::Stop,
            _ => Tick::Go,
        }
    })?;
    Ok(match waited {
        Waited::Exited(status, elapsed) => GuestEnd::Exited(status, elapsed),
        Waited::TimedOut(elapsed) => GuestEnd::TimedOut(elapsed),
        Waited::Stopped(_, elapsed) if silent => GuestEnd::Silent(elapsed),
        Waited::Stopped(status, elapsed) => GuestEnd::HungAfterRebootCall(status, elapsed),
    })
}

/// Whether KVM can be used: `/dev/kvm` opens read-write and a short probe
/// boot of `kernel` (no initramfs: the kernel panics at once, and with
/// `panic=-1 -no-reboot` QEMU exits) ends within `timeout` with the panic on
/// the serial console. Guests hang under KVM on some hosts; then this is false.
pub fn probe_kvm(kernel: &Path, dir: &Path, timeout: Duration) -> bool {
    if File::options().read(true).write(true).open("/dev/kvm").is_err() {
        return false;
    }
    let dir = dir.join("kvm-probe");
    if fs::create_dir_all(&dir).is_err() {
        return false;
    }
    let log = dir.join("serial.log");
    let mut args = cmdline::base_args(Accel::Kvm, 256, 1);
    args.extend(cmdline::serial_args(&log));
    args.extend(cmdline::boot_args(&Boot::Direct {
        kernel: kernel.to_owned(),
        initrd: None,
        append: "console=ttyS0 panic=-1 loglevel=4".to_owned(),
    }));
    match run_qemu(&args, &log, &dir, timeout) {
        Ok(o) => o.status.success() && o.serial.contains("Kernel panic"),
        Err(_) => false,
    }
}

/// How to choose the accelerator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccelChoice {
    Tcg,
    Kvm,
    /// KVM if [`probe_kvm`] succeeds (probed once per process), else TCG.
    Auto,
}

impl std::str::FromStr for AccelChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tcg" => Ok(AccelChoice::Tcg),
            "kvm" => Ok(AccelChoice::Kvm),
            "auto" => Ok(AccelChoice::Auto),
            _ => Err(format!("accel {s:?}: tcg, kvm or auto")),
        }
    }
}

/// Seconds a KVM probe boot may take before KVM is declared unusable.
pub const KVM_PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Resolve the choice; the probe runs at most once per process.
pub fn choose_accel(choice: AccelChoice, kernel: &Path, dir: &Path) -> Accel {
    static PROBED: OnceLock<Accel> = OnceLock::new();
    match choice {
        AccelChoice::Tcg => Accel::Tcg,
        AccelChoice::Kvm => Accel::Kvm,
        AccelChoice::Auto => *PROBED.get_or_init(|| {
            if probe_kvm(kernel, dir, KVM_PROBE_TIMEOUT) {
                Accel::Kvm
            } else {
                Accel::Tcg
            }
        }),
    }
}

/// Create (sparse) every disk's backing file under `<dir>/disks` unless the
/// spec names one, write blkdebug configs, and return the attached disks.
pub fn prepare_disks(specs: &[DiskSpec], dir: &Path) -> Result<Vec<Attached>, RunError> {
    let disk_dir = dir.join("disks");
    fs::create_dir_all(&disk_dir).map_err(io_err(disk_dir.display().to_string()))?;
    specs
        .iter()
        .map(|spec| {
            let file = spec.backing_file(&disk_dir);
            disk::create_sparse(&file, spec.size).map_err(io_err(file.display().to_string()))?;
            let blkdebug = if spec.faults.is_empty() {
                None
            } else {
                let p = disk_dir.join(format!("{}.blkdebug", spec.name()));
                fs::write(&p, disk::blkdebug_config(&spec.faults)).map_err(io_err(p.display().to_string()))?;
                Some(p)
            };
            Ok(Attached {
                spec: spec.clone(),
                file,
                blkdebug,
            })
        })
        .collect()
}

/// What a network boot needs from the host, checked before QEMU starts: the NIC's iPXE ROM
/// (Debian's `ipxe-qemu`), `socat` on PATH for the forwards (Debian's `socat`), and the boot file
/// in the TFTP directory.
pub fn check_net(n: &Net) -> Result<(), RunError> {
    let missing = |what: String, err: io::Error| RunError::Io { what, err };
    let rom = n.nic.rom();
    fs::metadata(&rom).map_err(|e| missing(format!("{} (Debian's ipxe-qemu)", rom.display()), e))?;
    if !n.forwards.is_empty() {
        let found =
            std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(net::SOCAT).is_file()));
        if !found {
            return Err(missing(
                format!("{} on PATH (Debian's socat), for the forwards", net::SOCAT),
                io::ErrorKind::NotFound.into(),
            ));
        }
    }
    // A URL (iPXE fetches it itself) is not in the directory.
    if let (Some(dir), Some(file)) = (&n.tftp, n.bootfile.as_ref().filter(|f| !f.contains("://"))) {
        let p = dir.join(file);
        fs::metadata(&p).map_err(|e| missing(format!("the boot file {}", p.display()), e))?;
    }
    Ok(())
}

/// A fresh copy of the OVMF variable store for one boot (the firmware writes it).
pub fn fresh_vars(template: &Path, dir: &Path) -> Result<PathBuf, RunError> {
    let vars = dir.join("OVMF_VARS.fd");
    fs::copy(template, &vars).map_err(io_err(format!("copying {}", template.display())))?;
    Ok(vars)
}

/// Boot `machine` and wait at most `timeout`. The serial log is truncated first.
pub fn boot(machine: &Machine, dir: &Path, timeout: Duration) -> Result<Outcome, RunError> {
    boot_following(machine, dir, timeout, None)
}

/// [`boot`], handing PID 1's progress lines to `progress` as they come.
pub fn boot_following(
    machine: &Machine,
    dir: &Path,
    timeout: Duration,
    progress: Option<&mut dyn FnMut(&str)>,
) -> Result<Outcome, RunError> {
    File::create(&machine.serial_log).map_err(io_err(machine.serial_log.display().to_string()))?;
    let args = cmdline::command_line(machine);
    fs::write(dir.join("qemu.cmdline"), cmdline::shell_words(QEMU, &args) + "\n")
        .map_err(io_err("writing qemu.cmdline"))?;
    run_qemu_following(&args, &machine.serial_log, dir, timeout, progress)
}

/// Boot `machine` and kill QEMU (SIGKILL: as sudden as a power cut) as soon
/// as `seen` holds of the serial log (lossy UTF-8), looked at every 100 ms;
/// at most `timeout`, and [`SILENT_LIMIT`] while the log is empty. The outcome's status is the killed one (or QEMU's own
/// exit, if it ended first: the caller checks the serial log).
pub fn boot_until(
    machine: &Machine,
    dir: &Path,
    timeout: Duration,
    seen: &dyn Fn(&str) -> bool,
) -> Result<Outcome, RunError> {
    let log = &machine.serial_log;
    File::create(log).map_err(io_err(log.display().to_string()))?;
    let args = cmdline::command_line(machine);
    fs::write(dir.join("qemu.cmdline"), cmdline::shell_words(QEMU, &args) + "\n")
        .map_err(io_err("writing qemu.cmdline"))?;
    let qemu_out = dir.join("qemu.out");
    let out = File::create(&qemu_out).map_err(io_err(qemu_out.display().to_string()))?;
    let err = out.try_clone().map_err(io_err("qemu.out"))?;
    let mut child = Command::new(QEMU)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(io_err(format!("spawning {QEMU}")))?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io_err("waiting for QEMU"))? {
            break status;
        }
        let bytes = fs::read(log).unwrap_or_default();
        let seen = seen(&String::from_utf8_lossy(&bytes));
        let silent = bytes.is_empty() && start.elapsed() >= SILENT_LIMIT;
        if seen || silent || start.elapsed() >= timeout {
            child.kill().map_err(io_err("killing QEMU"))?;
            let status = child.wait().map_err(io_err("reaping QEMU"))?;
            if silent {
                return Err(RunError::Silent {
                    after: start.elapsed(),
                    serial_log: log.clone(),
                });
            }
            if !seen {
                return Err(RunError::Timeout {
                    after: start.elapsed(),
                    serial_log: log.clone(),
                });
            }
            break status;
        }
        thread::sleep(Duration::from_millis(100));
    };
    let serial = String::from_utf8_lossy(&fs::read(log).map_err(io_err(log.display().to_string()))?).into_owned();
    let frames = frame::decode(&serial);
    Ok(Outcome {
        status,
        elapsed: start.elapsed(),
        serial,
        frames,
        hung_after_reboot_call: false,
    })
}

/// Save the documents of the console log into `dest` (created if needed)
/// exactly as `bootbench-report extract` does, by its code
/// ([`bootbench_report::read::extract::extract`], with the default frame
/// options, as [`frame::decode`] read `outcome.frames`): each good frame
/// under its name's last component, never replacing a file (a name taken,
/// by an earlier boot's document or a second frame of this log, becomes
/// `<stem>.2.<ext>`, ..., with a note), through a temporary file created
/// exclusively and then linked, so a symlink planted at any name is never
/// written through; a frame whose name cannot be a file's (over 255 bytes,
/// a NUL, a control character, a leading dot) is refused with its line and
/// reason, and one that cannot be written is said; the frames after either
/// are saved. `log_name` names the log in those lines, which quote the log
/// as it is: print them through `bench_core::vocab::console::safe`. An error:
/// `dest` cannot be created.
pub fn save_frames(outcome: &Outcome, log_name: &str, dest: &Path) -> Result<Extracted, String> {
    extract::extract(log_name, &outcome.serial, dest, frame::Options::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The follower hands on each of PID 1's lines once, as soon as its
    /// line end is written, escaped, whatever the pieces the log grows by;
    /// the kernel's lines, the frame and a line still being written are
    /// not handed on.
    #[test]
    fn a_follower_hands_on_pid_1s_complete_lines_once() {
        let dir = std::env::temp_dir().join(format!("bootbench-follow-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let log = dir.join("serial.log");
        let mut follow = Follow::new(&log);
        let mut got: Vec<String> = Vec::new();
        follow.poll(&mut |l| got.push(l.to_string()));
        assert!(got.is_empty(), "no log yet");
        let pieces = [
            "[    1.000] ata1: SATA link up\r\n[    3.402] bootbench: started as PID 1\r\n[    3.9",
            "00] bootbench: [test 1/13] /dev/sda: start",
            "ing\r\nbootbench: disk serial \u{1b}[2Jx\r\nBOOTBENCH-RESULT-BEGIN v3 nonce=00 name=a.json\r\nAAAA\r\n",
            "BOOTBENCH-RESULT-END\r\n[    9.000] bootbench: finishing: ok",
        ];
        let mut after: Vec<usize> = Vec::new();
        for p in pieces {
            let mut f = fs::OpenOptions::new().create(true).append(true).open(&log).unwrap();
            std::io::Write::write_all(&mut f, p.as_bytes()).unwrap();
            follow.poll(&mut |l| got.push(l.to_string()));
            after.push(got.len());
        }
        assert_eq!(
            got,
            [
                "[    3.402] bootbench: started as PID 1",
                "[    3.900] bootbench: [test 1/13] /dev/sda: starting",
                "bootbench: disk serial \\x1b[2Jx",
            ]
        );
        assert_eq!(after, [1, 1, 3, 3], "each line as its end came, the last not yet");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn bounded_wait_kills_on_expiry() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        match wait_bounded(&mut child, Duration::from_millis(200)).unwrap() {
            Waited::TimedOut(_) => {}
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(child.try_wait().unwrap().is_some(), "killed and reaped");
    }

    #[test]
    fn bounded_wait_reports_exit_status() {
        let mut child = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        match wait_bounded(&mut child, Duration::from_secs(30)).unwrap() {
            Waited::Exited(status, _) => assert_eq!(status.code(), Some(3)),
            other => panic!("expected an exit, got {other:?}"),
        }
    }

    /// A fake guest: appends `text` to `log`, then sleeps 30 s.
    fn fake_guest(log: &Path, text: &str) -> Child {
        Command::new("sh")
            .args(["-c", &format!("printf '{text}' >> {}; exec sleep 30", log.display())])
            .spawn()
            .unwrap()
    }

    const LIMITS: Limits = Limits {
        timeout: Duration::from_secs(25),
        reboot_grace: Duration::from_millis(300),
        silent: Duration::from_secs(20),
    };

    /// A guest that has said it calls reboot(2) and does not end is killed
    /// once the grace after that line is over, long before its timeout,
    /// its progress lines handed on; one that never says it waits out the
    /// timeout.
    #[test]
    fn a_guest_that_hangs_after_its_reboot_call_is_stopped_after_the_grace() {
        let dir = scratch("reboot-grace");
        let log = dir.join("serial.log");
        fs::write(&log, "").unwrap();
        let mut child = fake_guest(
            &log,
            "[ 1.0] bootbench: finishing: poweroff\\n[ 1.1] bootbench: calling reboot(2): poweroff\\n",
        );
        let mut lines = Vec::new();
        let mut out = |l: &str| lines.push(l.to_string());
        let ended = wait_for_guest(&mut child, &log, &LIMITS, Some(&mut out)).unwrap();
        assert!(matches!(ended, GuestEnd::HungAfterRebootCall(..)), "{ended:?}");
        assert!(child.try_wait().unwrap().is_some(), "killed and reaped");
        assert_eq!(
            lines,
            [
                "[ 1.0] bootbench: finishing: poweroff",
                "[ 1.1] bootbench: calling reboot(2): poweroff"
            ]
        );

        fs::write(&log, "").unwrap();
        let mut child = fake_guest(&log, "[ 1.1] bootbench: unmounted /mnt/stick\\n");
        let limits = Limits {
            timeout: Duration::from_millis(1500),
            ..LIMITS
        };
        let ended = wait_for_guest(&mut child, &log, &limits, None).unwrap();
        assert!(
            matches!(ended, GuestEnd::TimedOut(..)),
            "no reboot call, no grace: {ended:?}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Only PID 1's own line that starts with the words is its reboot(2)
    /// call: a line that quotes them (a disk's model holding them) and the
    /// kernel's lines are not.
    #[test]
    fn only_pid_1s_reboot_line_is_the_reboot_call() {
        assert!(is_reboot_call("[   5.3] bootbench: calling reboot(2): poweroff"));
        assert!(is_reboot_call("bootbench: calling reboot(2): halt"));
        assert!(!is_reboot_call(
            "[   4.4] bootbench: /dev/sda model \"calling reboot(2): poweroff\" serial X"
        ));
        assert!(!is_reboot_call("[   5.4] calling reboot(2): poweroff"));
        assert!(!is_reboot_call("[   5.4] sd 0:0:0:0: bootbench: calling reboot(2): x"));
    }

    /// A guest whose console stays empty is killed at the silence limit,
    /// long before its timeout; one byte on it (OVMF's first screen code)
    /// and the guest runs on to its timeout.
    #[test]
    fn a_guest_whose_console_stays_empty_is_stopped_at_the_silence_limit() {
        let dir = scratch("silent");
        let log = dir.join("serial.log");
        let limits = Limits {
            silent: Duration::from_millis(300),
            ..LIMITS
        };
        fs::write(&log, "").unwrap();
        let mut child = fake_guest(&log, "");
        let ended = wait_for_guest(&mut child, &log, &limits, None).unwrap();
        assert!(matches!(ended, GuestEnd::Silent(..)), "{ended:?}");
        assert!(child.try_wait().unwrap().is_some(), "killed and reaped");

        let mut child = fake_guest(&log, "\\033[2J");
        let limits = Limits {
            timeout: Duration::from_millis(1500),
            ..limits
        };
        let ended = wait_for_guest(&mut child, &log, &limits, None).unwrap();
        assert!(matches!(ended, GuestEnd::TimedOut(..)), "it spoke: {ended:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn accel_choices_parse() {
        assert_eq!("tcg".parse(), Ok(AccelChoice::Tcg));
        assert_eq!("kvm".parse(), Ok(AccelChoice::Kvm));
        assert_eq!("auto".parse(), Ok(AccelChoice::Auto));
        assert!("hvf".parse::<AccelChoice>().is_err());
        assert_eq!(
            choose_accel(AccelChoice::Tcg, Path::new("/nonexistent"), Path::new("/tmp")),
            Accel::Tcg
        );
    }

    #[test]
    fn disks_prepared_with_faults() {
        let dir = std::env::temp_dir().join(format!("bbq-prep-{}", std::process::id()));
        let specs: Vec<DiskSpec> = ["nvme,serial=N1,size=1M", "virtio,serial=V1,size=2M,fault=read_aio:5:8"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let disks = prepare_disks(&specs, &dir).unwrap();
        assert_eq!(disks[0].file, dir.join("disks/N1.img"));
        assert_eq!(fs::metadata(&disks[1].file).unwrap().len(), 2 << 20);
        assert_eq!(disks[0].blkdebug, None);
        let cfg = fs::read_to_string(disks[1].blkdebug.as_ref().unwrap()).unwrap();
        assert!(cfg.contains("event = \"read_aio\""), "{cfg}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A console log holding these frames (name, document) of one boot.
    fn outcome_of(frames: &[(&str, &[u8])]) -> Outcome {
        let n = frame::Nonce([9; 16]);
        let mut log = format!("noise\n{}", frame::announce(n));
        for (name, doc) in frames {
            log.push_str(&frame::encode(name, doc, n));
            log.push_str("more noise\n");
        }
        Outcome {
            status: Command::new("true").status().unwrap(),
            elapsed: Duration::ZERO,
            frames: frame::decode(&log),
            serial: log,
            hung_after_reboot_call: false,
        }
    }

    /// A fresh scratch directory for one test of this process.
    fn scratch(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("bbq-frames-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn frames_saved_by_name() {
        let dir = scratch("by-name");
        let saved = save_frames(&outcome_of(&[("results/m-1.json", b"{\"a\":1}")]), "serial.log", &dir).unwrap();
        assert_eq!(saved.written, [dir.join("m-1.json")]);
        assert_eq!(fs::read(&saved.written[0]).unwrap(), b"{\"a\":1}");
        assert!(saved.refused.is_empty() && saved.failed.is_empty() && saved.notes.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A symlink planted at a frame's name is not written through: its
    /// target keeps its bytes, the link stays, the document gets the next
    /// numbered name.
    #[test]
    fn a_symlink_at_a_frames_name_is_never_written_through() {
        let dir = scratch("symlink");
        let victim = dir.join("victim");
        fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("m-1.json")).unwrap();
        let saved = save_frames(&outcome_of(&[("m-1.json", b"{}")]), "serial.log", &dir);
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(fs::read_link(dir.join("m-1.json")).unwrap(), victim);
        assert_eq!(fs::read(dir.join("m-1.2.json")).unwrap(), b"{}");
        assert_eq!(
            names(&dir),
            ["m-1.2.json", "m-1.json", "victim"],
            "no temporary file left"
        );
        let saved = saved.unwrap();
        assert_eq!(saved.written, [dir.join("m-1.2.json")]);
        assert_eq!(saved.notes.len(), 1, "{:?}", saved.notes);
        assert!(
            saved.notes[0].ends_with("m-1.json is there already: written as m-1.2.json"),
            "{:?}",
            saved.notes
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A file of that name (an earlier boot's document) is kept; two frames
    /// of one name in one log are both saved.
    #[test]
    fn an_existing_document_is_never_replaced() {
        let dir = scratch("existing");
        fs::write(dir.join("m.json"), "an earlier boot's").unwrap();
        let saved = save_frames(
            &outcome_of(&[("m.json", b"{\"n\":1}"), ("m.json", b"{\"n\":2}")]),
            "serial.log",
            &dir,
        );
        assert_eq!(fs::read(dir.join("m.json")).unwrap(), b"an earlier boot's");
        assert_eq!(fs::read(dir.join("m.2.json")).unwrap(), b"{\"n\":1}");
        assert_eq!(fs::read(dir.join("m.3.json")).unwrap(), b"{\"n\":2}");
        assert_eq!(names(&dir), ["m.2.json", "m.3.json", "m.json"]);
        assert_eq!(saved.unwrap().notes.len(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A frame whose name cannot be a file's (300 bytes) is one refused
    /// frame, with its line and reason; the real document after it is saved.
    #[test]
    fn a_bad_name_is_refused_and_the_frames_after_it_are_saved() {
        let dir = scratch("bad-name");
        let long = format!("{}.json", "a".repeat(295));
        let saved = save_frames(
            &outcome_of(&[(&long, b"{\"decoy\":1}"), ("m-1.json", b"{\"real\":1}")]),
            "serial.log",
            &dir,
        );
        assert_eq!(fs::read(dir.join("m-1.json")).unwrap(), b"{\"real\":1}");
        assert_eq!(names(&dir), ["m-1.json"]);
        let saved = saved.unwrap();
        assert_eq!(saved.written, [dir.join("m-1.json")]);
        assert_eq!(saved.refused.len(), 1, "{:?}", saved.refused);
        assert!(
            saved.refused[0].starts_with("serial.log:3: frame aaa")
                && saved.refused[0].ends_with("refused: the name is 300 bytes long; a file name holds at most 255"),
            "{:?}",
            saved.refused
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
