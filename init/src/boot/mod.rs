//! PID 1: boot as data (STYLE #7, after u-root's libinit). The steps are a
//! table of values, each printable and each required or optional; every
//! step is logged with its time since boot to the console and /dev/kmsg; a
//! failed required step stops the run cleanly (power off).
//!
//! PID 1 runs only the mounts the console and the results need
//! ([`steps`]), then forks the worker and supervises it
//! ([`crate::boot::supervise`]): the worker loads the drivers ([`worker_steps`])
//! and does the unattended run (`crate::boot::unattended::run`), reporting as it
//! goes; PID 1 saves what it reported if it dies, and ends with [`finish`]:
//! sync, unmount the stick, reboot(2). PID 1 never returns and never exits
//! (that would panic the kernel): its own panic hook powers off.
//! Its first output is the boot's nonce ([`announce_nonce`]), which every
//! result frame of the boot carries ([`nonce`]); every console line goes
//! through [`bench_core::vocab::console::safe`] ([`log`]).

pub mod attest;
pub mod cmdline;
pub mod network;
pub mod overrides;
pub mod stick;
pub mod supervise;
pub mod unattended;

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;

use std::sync::OnceLock;
use std::time::Duration;

use bench_core::document::frame::{self, Nonce};

use crate::boot::cmdline::Cmdline;
use crate::log::log;
use crate::modules;
use nix::errno::Errno;

// Safe code over nix for PID 1 (sys/ holds only what needs unsafe).
mod console;
mod mount;
mod power;
mod process;

pub use crate::plan::OnFinish;

/// One boot step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Create a directory (already there is fine).
    Mkdir { path: &'static str, mode: u32 },
    /// mount(2).
    Mount {
        source: &'static str,
        target: &'static str,
        fstype: &'static str,
        flags: libc::c_ulong,
        data: &'static str,
    },
    /// Put the console on whichever of fds 0, 1, 2 the kernel could not open
    /// (no /dev/console at start) or std pointed at /dev/null; from here on
    /// [`log`] also writes to /dev/kmsg.
    Console { path: &'static str },
    /// Write a value to a file (a sysctl).
    Write { path: &'static str, contents: &'static str },
    /// Load every module whose alias matches a device, and the modules of
    /// `also` (what no device asks for: the stick's filesystem and code
    /// pages, and those `bootbench.modules=` names), until nothing new appears.
    Coldplug { also: Vec<String> },
    /// On an EFI boot (`/sys/firmware/efi` present): load efivarfs and
    /// mount it at [`EFIVARS`], where the boot stick's id is read
    /// (`LoaderDevicePartUUID`). Nothing on a legacy BIOS boot.
    Efivars,
}

/// Where efivarfs is mounted.
pub const EFIVARS: &str = "/sys/firmware/efi/efivars";

/// mount(2) flag names for printing.
const MOUNT_FLAGS: &[(libc::c_ulong, &str)] = &[
    (libc::MS_RDONLY, "ro"),
    (libc::MS_NOSUID, "nosuid"),
    (libc::MS_NODEV, "nodev"),
    (libc::MS_NOEXEC, "noexec"),
    (libc::MS_RELATIME, "relatime"),
];

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Mkdir { path, mode } => write!(f, "mkdir {path} (mode {mode:04o})"),
            Step::Mount {
                source,
                target,
                fstype,
                flags,
                data,
            } => {
                let mut opts: Vec<&str> = MOUNT_FLAGS
                    .iter()
                    .filter(|(bit, _)| flags & bit != 0)
                    .map(|(_, n)| *n)
                    .collect();
                if !data.is_empty() {
                    opts.push(data);
                }
                write!(f, "mount {source} on {target} type {fstype}")?;
                if !opts.is_empty() {
                    write!(f, " ({})", opts.join(","))?;
                }
                Ok(())
            }
            Step::Console { path } => write!(f, "console {path} on stdin/stdout/stderr where missing"),
            Step::Write { path, contents } => write!(f, "write {:?} to {path}", contents.trim_end()),
            Step::Coldplug { also } if also.is_empty() => write!(f, "coldplug modules for the devices in /sys"),
            Step::Coldplug { also } => write!(f, "coldplug modules for the devices in /sys, and {}", also.join(" ")),
            Step::Efivars => write!(f, "mount efivarfs on {EFIVARS} (EFI boots only)"),
        }
    }
}

/// A step and whether the boot stops when it fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootStep {
    /// What to do.
    pub step: Step,
    /// A failure powers the machine off (after logging); otherwise it is logged and the boot goes on.
    pub required: bool,
}

/// Why a step failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepError {
    /// mkdir(2) failed (positive errno).
    Mkdir { path: String, errno: i32 },
    /// mount(2) failed.
    Mount { target: String, fstype: String, errno: i32 },
    /// Opening or dup2-ing the console failed.
    Console { path: String, errno: i32 },
    /// Writing the file failed.
    Write { path: String, errno: i32 },
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = |e: &i32| std::io::Error::from_raw_os_error(*e);
        match self {
            StepError::Mkdir { path, errno } => write!(f, "mkdir {path}: {}", os(errno)),
            StepError::Mount { target, fstype, errno } => write!(f, "mount {fstype} on {target}: {}", os(errno)),
            StepError::Console { path, errno } => write!(f, "console {path}: {}", os(errno)),
            StepError::Write { path, errno } => write!(f, "write {path}: {}", os(errno)),
        }
    }
}

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// PID 1's boot table, in order: devtmpfs on /dev first (the console and
/// /dev/kmsg live there), then proc (and /dev/kmsg without rate limit),
/// sysfs, tmpfs on /tmp, the stick's mount point and the modprobe helper
/// path. The drivers are the worker's ([`worker_steps`]).
pub fn steps() -> Vec<BootStep> {
    let req = |step| BootStep { step, required: true };
    let opt = |step| BootStep { step, required: false };
    let nosuid_nodev_noexec = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    vec![
        req(Step::Mkdir {
            path: "/dev",
            mode: 0o755,
        }),
        req(Step::Mount {
            source: "devtmpfs",
            target: "/dev",
            fstype: "devtmpfs",
            flags: libc::MS_NOSUID,
            data: "mode=0755",
        }),
        opt(Step::Console { path: "/dev/console" }),
        req(Step::Mkdir {
            path: "/proc",
            mode: 0o555,
        }),
        req(Step::Mount {
            source: "proc",
            target: "/proc",
            fstype: "proc",
            flags: nosuid_nodev_noexec,
            data: "",
        }),
        // Userspace writes to /dev/kmsg are rate-limited (10 per 5 s) unless this is on.
        opt(Step::Write {
            path: "/proc/sys/kernel/printk_devkmsg",
            contents: "on\n",
        }),
        req(Step::Mkdir {
            path: crate::sysfs::ROOT,
            mode: 0o555,
        }),
        req(Step::Mount {
            source: "sysfs",
            target: crate::sysfs::ROOT,
            fstype: "sysfs",
            flags: nosuid_nodev_noexec,
            data: "",
        }),
        // The kernel's lockdown mode (host.lockdown) is read from securityfs.
        opt(Step::Mount {
            source: "securityfs",
            target: "/sys/kernel/security",
            fstype: "securityfs",
            flags: nosuid_nodev_noexec,
            data: "",
        }),
        opt(Step::Mkdir {
            path: "/tmp",
            mode: 0o1777,
        }),
        opt(Step::Mount {
            source: "tmpfs",
            target: "/tmp",
            fstype: "tmpfs",
            flags: libc::MS_NOSUID | libc::MS_NODEV,
            data: "mode=1777",
        }),
        opt(Step::Mkdir {
            path: "/mnt/stick",
            mode: 0o755,
        }),
        opt(Step::Write {
            path: "/proc/sys/kernel/modprobe",
            contents: "/sbin/modprobe\n",
        }),
    ]
}

/// The modules of the stick's filesystem and code pages, which no device
/// asks for by modalias.
pub const STICK_MODULES: [&str; 4] = ["vfat", "nls_cp437", "nls_iso8859_1", "nls_ascii"];

/// The worker's first steps: coldplug, with the modules nothing asks for by
/// modalias loading beside the drivers: the stick's filesystem and code
/// pages ([`STICK_MODULES`]), then `named` (`bootbench.modules=`). All
/// optional.
pub fn worker_steps(named: &[String]) -> Vec<BootStep> {
    let opt = |step| BootStep { step, required: false };
    let mut also: Vec<String> = STICK_MODULES.iter().map(|m| (*m).to_string()).collect();
    also.extend(named.iter().filter(|m| !also.contains(m)).cloned().collect::<Vec<_>>());
    vec![opt(Step::Coldplug { also }), opt(Step::Efivars)]
}

impl Step {
    /// Do it on this machine. Ok carries an optional detail for the log.
    pub fn run(&self, log: &mut dyn FnMut(&str)) -> Result<Option<String>, StepError> {
        match *self {
            Step::Mkdir { path, mode } => match std::fs::DirBuilder::new().mode(mode).create(path) {
                Ok(()) => Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(Some("already there".into())),
                Err(e) => Err(StepError::Mkdir {
                    path: path.into(),
                    errno: errno(&e),
                }),
            },
            Step::Mount {
                source,
                target,
                fstype,
                flags,
                data,
            } => match mount::mount(source, target, fstype, flags, data) {
                Ok(()) => Ok(None),
                Err(Errno::EBUSY) => Ok(Some("already mounted".into())),
                Err(e) => Err(StepError::Mount {
                    target: target.into(),
                    fstype: fstype.into(),
                    errno: e as i32,
                }),
            },
            Step::Console { path } => {
                let r = console::ensure_std_fds(path);
                crate::log::kmsg_ready();
                match r {
                    Ok(0) => Ok(Some("already open".into())),
                    Ok(n) => Ok(Some(format!("{n} descriptors set"))),
                    Err(e) => Err(StepError::Console {
                        path: path.into(),
                        errno: e as i32,
                    }),
                }
            }
            Step::Write { path, contents } => {
                std::fs::write(path, contents)
                    .map(|()| None)
                    .map_err(|e| StepError::Write {
                        path: path.into(),
                        errno: errno(&e),
                    })
            }
            Step::Coldplug { ref also } => Ok(Some(modules::coldplug(also, log).to_string())),
            Step::Efivars => {
                if !crate::sysfs::live("firmware/efi").is_dir() {
                    return Ok(Some("not an EFI boot".into()));
                }
                // Built in, or a module: either way the mount says.
                let _ = modules::load("efivarfs");
                match mount::mount(
                    "efivarfs",
                    EFIVARS,
                    "efivarfs",
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
                    "",
                ) {
                    Ok(()) => Ok(None),
                    Err(Errno::EBUSY) => Ok(Some("already mounted".into())),
                    Err(e) => Err(StepError::Mount {
                        target: EFIVARS.into(),
                        fstype: "efivarfs".into(),
                        errno: e as i32,
                    }),
                }
            }
        }
    }
}

/// What carries out one step: [`Step::run`] on the machine, a fake in tests.
pub type Exec<'a> = dyn FnMut(&Step, &mut dyn FnMut(&str)) -> Result<Option<String>, StepError> + 'a;

/// Run `steps` in order through `exec`, logging each with its duration.
/// Stops at the first failed required step and returns its index and error.
pub fn run_steps(steps: &[BootStep], exec: &mut Exec<'_>, log: &mut dyn FnMut(&str)) -> Result<(), (usize, StepError)> {
    for (i, s) in steps.iter().enumerate() {
        let t0 = power::boottime_ns();
        let r = exec(&s.step, log);
        let ms = power::boottime_ns().saturating_sub(t0) / 1_000_000;
        match r {
            Ok(None) => log(&format!("{}: ok ({ms} ms)", s.step)),
            Ok(Some(detail)) => log(&format!("{}: ok, {detail} ({ms} ms)", s.step)),
            Err(e) if s.required => {
                log(&format!("{}: FAILED (required): {e}", s.step));
                return Err((i, e));
            }
            Err(e) => log(&format!("{}: failed (optional, going on): {e}", s.step)),
        }
    }
    Ok(())
}

/// This boot's nonce (`bench_core::document::frame`'s rule), drawn once.
static NONCE: OnceLock<Nonce> = OnceLock::new();

/// The nonce every result frame of this boot carries. PID 1 draws and
/// announces it first thing ([`announce_nonce`]), before any fork, so every
/// process of the boot reads the same one; elsewhere (tests) it is drawn on
/// first use.
pub fn nonce() -> Nonce {
    *NONCE.get_or_init(|| {
        let mut n = [0u8; 16];
        // Not waited for: a frame fixed in a device string cannot follow
        // the pool, initialized or not, and the wait is a second of every
        // boot on a machine without RDRAND.
        if crate::sys::dm::fill_random_unwaited(&mut n).is_err() {
            // getrandom(2) exists since Linux 3.17; should it fail, the boot
            // time to the nanosecond still differs from boot to boot, which
            // is what defeats a forged frame fixed in a device string.
            let t = u128::from(power::boottime_ns()) ^ (u128::from(std::process::id()) << 64);
            n = t.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835).to_le_bytes();
        }
        Nonce(n)
    })
}

/// Draw this boot's nonce and print the line that announces it
/// (`BOOTBENCH-BOOT v2 nonce=...`) raw on the console (stdout, where the
/// frames go): PID 1's first output, before any device string. A line
/// break first: the firmware or the kernel may have left a line unended,
/// and the announce counts only at the start of a line.
fn announce_nonce() {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(format!("\n{}", frame::announce(nonce())).as_bytes());
    let _ = out.flush();
}

/// The action of `bootbench.on_finish=` on the command line, if valid.
fn cmdline_on_finish(cmdline: &Cmdline) -> Option<OnFinish> {
    overrides::CmdlineOverrides::read(cmdline).on_finish()
}

/// PID 1's entry point.
pub fn main() -> ! {
    install_pid1_panic_hook();
    announce_nonce();
    log(&format!(
        "bootbench-init {} started as PID 1",
        env!("CARGO_PKG_VERSION")
    ));
    let table = steps();
    if let Err((i, e)) = run_steps(&table, &mut |s, l| s.run(l), &mut |m| log(m)) {
        log(&format!("boot stopped at step {} ({}): {e}", i + 1, table[i].step));
        let cmdline = Cmdline::parse(&std::fs::read_to_string("/proc/cmdline").unwrap_or_default());
        finish(cmdline_on_finish(&cmdline).unwrap_or_default());
    }
    let text = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let cmdline = Cmdline::parse(&text);
    log(&format!("kernel command line: {}", cmdline.shown()));
    modules::set_booted();
    let fallback = cmdline_on_finish(&cmdline).unwrap_or_default();
    // PID 1 has one thread here (the boot steps start none): it may fork.
    let forked = process::pipe().and_then(|(r, w)| process::fork_single_threaded().map(|f| (f, r, w)));
    match forked {
        Ok((process::Forked::Child, r, w)) => {
            drop(r);
            worker(w, &cmdline)
        }
        Ok((process::Forked::Parent(pid), mut r, w)) => {
            drop(w);
            log(&format!("supervisor: the worker is process {pid}"));
            let (reports, ending) = crate::boot::supervise::watch(&mut r, pid, &mut |m| log(m));
            let c = crate::boot::supervise::conclude(&reports, &ending, fallback, &|why| {
                crate::boot::unattended::blank_error_doc(why)
            });
            if !c.normal {
                crate::boot::unattended::rescue(&c, &reports, &cmdline, &mut |m| log(m));
            }
            finish(c.how)
        }
        Err(e) => {
            // No supervision possible: the run happens in PID 1 itself.
            log(&format!(
                "supervisor: cannot start the worker ({}); running unsupervised",
                std::io::Error::from(e)
            ));
            let named = overrides::CmdlineOverrides::read(&cmdline).modules().to_vec();
            run_steps(&worker_steps(&named), &mut |s, l| s.run(l), &mut |m| log(m)).ok();
            let how = crate::boot::unattended::run(&cmdline, &mut |m| log(m));
            finish(how)
        }
    }
}

/// The worker: report to PID 1 through `pipe`, load the drivers, do the
/// unattended run, say what the machine does next, exit 0. A panic aborts
/// the whole worker (its hook reports the message first), and PID 1 saves
/// what it reported.
fn worker(pipe: File, cmdline: &Cmdline) -> ! {
    crate::boot::supervise::set_reporter(pipe);
    std::panic::set_hook(Box::new(|info| {
        log(&format!("PANIC: {info}"));
        crate::boot::supervise::report(&crate::boot::supervise::Msg::Panicked(panic_words(info)));
    }));
    let named = overrides::CmdlineOverrides::read(cmdline).modules().to_vec();
    let _ = run_steps(&worker_steps(&named), &mut |s, l| s.run(l), &mut |m| log(m));
    let how = crate::boot::unattended::run(cmdline, &mut |m| log(m));
    crate::boot::supervise::report(&crate::boot::supervise::Msg::Finish(how));
    std::process::exit(0)
}

/// A panic in one line: its message and where (`msg at file:line`).
fn panic_words(info: &std::panic::PanicHookInfo<'_>) -> String {
    let p = info.payload();
    let msg = p
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| p.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    match info.location() {
        Some(l) => format!("{msg} at {}:{}", l.file(), l.line()),
        None => msg.to_string(),
    }
}

/// PID 1's own panic (a defect in the supervisor, which does little): say
/// so and power off at once, saving nothing (the worker's results are on
/// the stick or the console already, or lost with it). With panic =
/// "abort" the hook runs before the abort, and it never returns.
fn install_pid1_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(std::io::stderr(), "bootbench: PID 1 PANIC: {info}; powering off");
        power::emergency_power_off()
    }));
}

/// End PID 1: sync, lazily unmount /mnt/stick if mounted, sync, then say
/// so ([`bench_core::vocab::console::REBOOT_CALL`]) and call reboot(2) with
/// POWER_OFF / RESTART / HALT. If reboot fails, sleep
/// forever: PID 1 must never exit.
pub fn finish(how: OnFinish) -> ! {
    log(&format!("finishing: {how}"));
    if let Some(peak) = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| vm_hwm_bytes(&s))
    {
        log(&format!("peak memory (VmHWM): {peak} B"));
    }
    mount::sync();
    match mount::umount_lazy("/mnt/stick") {
        Ok(()) => log("unmounted /mnt/stick"),
        Err(Errno::EINVAL | Errno::ENOENT) => {} // not mounted
        Err(e) => log(&format!("unmount /mnt/stick: {}", std::io::Error::from(e))),
    }
    mount::sync();
    log(&format!("{}{how}", bench_core::vocab::console::REBOOT_CALL));
    let e = power::reboot(how);
    log(&format!(
        "reboot(2) {how} failed: {}; sleeping forever",
        std::io::Error::from(e)
    ));
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// The peak resident set size from `/proc/self/status` text (its `VmHWM:`
/// line, in kB = 1024 bytes as the kernel prints it), in bytes.
fn vm_hwm_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kb = line.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    kb.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_memory_from_proc_status() {
        let status = "Name:\tinit\nVmPeak:\t   10000 kB\nVmHWM:\t    2345 kB\nVmRSS:\t    2000 kB\n";
        assert_eq!(vm_hwm_bytes(status), Some(2345 * 1024));
        assert_eq!(vm_hwm_bytes("VmRSS:\t 1 kB\n"), None);
        assert_eq!(vm_hwm_bytes("VmHWM:\t 12 pages\n"), None);
        // The real file of this process has one, and it is not zero.
        let own = std::fs::read_to_string("/proc/self/status").expect("status");
        assert!(vm_hwm_bytes(&own).is_some_and(|b| b > 0));
    }

    #[test]
    fn on_finish_parses_and_prints() {
        for (s, v) in [
            ("poweroff", OnFinish::PowerOff),
            ("reboot", OnFinish::Reboot),
            ("halt", OnFinish::Halt),
        ] {
            assert_eq!(s.parse::<OnFinish>(), Ok(v));
            assert_eq!(v.to_string(), s);
        }
        for bad in ["", "off", "PowerOff", "shutdown"] {
            assert!(bad.parse::<OnFinish>().is_err(), "{bad:?}");
        }
        assert_eq!(OnFinish::default(), OnFinish::PowerOff);
        let c = Cmdline::parse("bootbench.on_finish=halt");
        assert_eq!(cmdline_on_finish(&c), Some(OnFinish::Halt));
        assert_eq!(cmdline_on_finish(&Cmdline::parse("bootbench.on_finish=nap")), None);
    }

    fn position(table: &[BootStep], want: impl Fn(&Step) -> bool) -> usize {
        table.iter().position(|s| want(&s.step)).expect("step present")
    }

    fn mounts(target: &'static str) -> impl Fn(&Step) -> bool {
        move |s| matches!(s, Step::Mount { target: t, .. } if *t == target)
    }

    #[test]
    fn table_order_devtmpfs_first() {
        let t = steps();
        let first_mount = position(&t, |s| matches!(s, Step::Mount { .. }));
        assert_eq!(
            t[first_mount].step.to_string(),
            "mount devtmpfs on /dev type devtmpfs (nosuid,mode=0755)"
        );
        assert!(t[first_mount].required);
        assert!(t[..first_mount].iter().all(|s| matches!(s.step, Step::Mkdir { .. })));
        assert_eq!(position(&t, |s| matches!(s, Step::Console { .. })), first_mount + 1);
        let (proc_, sys, tmp) = (
            position(&t, mounts("/proc")),
            position(&t, mounts("/sys")),
            position(&t, mounts("/tmp")),
        );
        assert!(first_mount < proc_ && proc_ < sys && sys < tmp);
        assert!(t[proc_].required && t[sys].required);
        let modprobe = position(&t, |s| {
            matches!(
                s,
                Step::Write {
                    path: "/proc/sys/kernel/modprobe",
                    ..
                }
            )
        });
        assert!(proc_ < modprobe);
        // The drivers are the worker's, after PID 1's mounts.
        assert!(t.iter().all(|s| !matches!(s.step, Step::Coldplug { .. })));
        let w = worker_steps(&[]);
        let coldplug = position(&w, |s| matches!(s, Step::Coldplug { .. }));
        assert_eq!(coldplug, 0);
        let Step::Coldplug { also } = &w[coldplug].step else {
            unreachable!()
        };
        assert_eq!(
            also,
            &["vfat", "nls_cp437", "nls_iso8859_1", "nls_ascii"],
            "they load with the drivers"
        );
        assert!(w.iter().all(|s| !s.required), "every worker step is optional");
        // The modules bootbench.modules= names load with them, each once.
        let named = ["scsi_debug".to_string(), "vfat".to_string(), "null_blk".to_string()];
        let w = worker_steps(&named);
        let Step::Coldplug { also } = &w[0].step else {
            unreachable!()
        };
        assert_eq!(
            also,
            &[
                "vfat",
                "nls_cp437",
                "nls_iso8859_1",
                "nls_ascii",
                "scsi_debug",
                "null_blk"
            ]
        );
        assert_eq!(
            w[0].step.to_string(),
            "coldplug modules for the devices in /sys, and vfat nls_cp437 nls_iso8859_1 nls_ascii scsi_debug null_blk"
        );
    }

    #[test]
    fn steps_print() {
        let cases: &[(Step, &str)] = &[
            (
                Step::Mkdir {
                    path: "/tmp",
                    mode: 0o1777,
                },
                "mkdir /tmp (mode 1777)",
            ),
            (
                Step::Mount {
                    source: "proc",
                    target: "/proc",
                    fstype: "proc",
                    flags: libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    data: "",
                },
                "mount proc on /proc type proc (nosuid,nodev,noexec)",
            ),
            (
                Step::Mount {
                    source: "/dev/sda1",
                    target: "/mnt/stick",
                    fstype: "vfat",
                    flags: 0,
                    data: "",
                },
                "mount /dev/sda1 on /mnt/stick type vfat",
            ),
            (
                Step::Write {
                    path: "/proc/sys/kernel/modprobe",
                    contents: "/sbin/modprobe\n",
                },
                "write \"/sbin/modprobe\" to /proc/sys/kernel/modprobe",
            ),
            (
                Step::Coldplug {
                    also: vec!["vfat".into(), "nls_cp437".into()],
                },
                "coldplug modules for the devices in /sys, and vfat nls_cp437",
            ),
            (
                Step::Coldplug { also: Vec::new() },
                "coldplug modules for the devices in /sys",
            ),
        ];
        for (s, want) in cases {
            assert_eq!(s.to_string(), *want);
        }
    }

    #[test]
    fn a_failed_required_step_stops_optional_ones_do_not() {
        let table = vec![
            BootStep {
                step: Step::Mkdir {
                    path: "/a",
                    mode: 0o755,
                },
                required: true,
            },
            BootStep {
                step: Step::Write {
                    path: "/opt",
                    contents: "x",
                },
                required: false,
            },
            BootStep {
                step: Step::Mkdir {
                    path: "/b",
                    mode: 0o755,
                },
                required: true,
            },
            BootStep {
                step: Step::Mkdir {
                    path: "/c",
                    mode: 0o755,
                },
                required: true,
            },
        ];
        let fail = |s: &Step| match s {
            Step::Write { path, .. } => Some(StepError::Write {
                path: (*path).into(),
                errno: libc::ENOENT,
            }),
            Step::Mkdir { path: "/b", .. } => Some(StepError::Mkdir {
                path: "/b".into(),
                errno: libc::EROFS,
            }),
            _ => None,
        };
        let mut ran = Vec::new();
        let mut lines = Vec::new();
        let r = run_steps(
            &table,
            &mut |s, _| {
                ran.push(s.to_string());
                fail(s).map_or(Ok(None), Err)
            },
            &mut |m| lines.push(m.to_string()),
        );
        assert_eq!(
            r,
            Err((
                2,
                StepError::Mkdir {
                    path: "/b".into(),
                    errno: libc::EROFS
                }
            ))
        );
        assert_eq!(ran.len(), 3, "{ran:?}");
        assert!(lines[0].starts_with("mkdir /a (mode 0755): ok"), "{lines:?}");
        assert!(
            lines[1].contains("failed (optional, going on): write /opt: No such file or directory"),
            "{lines:?}"
        );
        assert!(
            lines[2].contains("FAILED (required): mkdir /b: Read-only file system"),
            "{lines:?}"
        );
        // all succeed
        let r = run_steps(&table[..1], &mut |_, _| Ok(Some("x".into())), &mut |_| {});
        assert_eq!(r, Ok(()));
    }

    #[test]
    fn the_nonce_is_drawn_once_and_announced_in_frame_format() {
        let n = nonce();
        assert_eq!(nonce(), n, "one nonce per process");
        assert_ne!(n, Nonce([0; 16]));
        let line = frame::announce(n);
        let json = b"{}";
        let log = line + &frame::encode("x.json", json, nonce());
        assert_eq!(frame::decode(&log)[0].as_ref().map(|f| f.nonce), Ok(Some(n)));
    }
}
