//! The log: one line per event, to the console (stderr, which is
//! /dev/console in PID 1) with the time since boot, and to the kernel's log
//! (/dev/kmsg) once /dev is mounted, so that `dmesg` and netconsole see it
//! in order with the kernel's own lines. Used by PID 1, the worker, the live
//! command and every stage beneath them; it imports nothing of theirs.
//!
//! The console shows each line once and whole at any kernel loglevel. The
//! kernel echoes a /dev/kmsg record to the console when its level is below
//! the console loglevel (`loglevel=` on the command line, the first field of
//! /proc/sys/kernel/printk) or with `ignore_loglevel`; such an echo of a line
//! that was also written to the console directly would show it twice, the
//! two copies interleaving mid-line on a serial port. So the record goes to
//! kmsg at a level the console does not print (info, or debug when the
//! loglevel is 7), and not at all when every level is printed.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use bench_core::vocab::console::safe;
use nix::time::{clock_gettime, ClockId};

/// Set once /dev exists (PID 1's console step), so /dev/kmsg may be opened
/// without taking descriptor 0, 1 or 2 from the console.
static KMSG_READY: AtomicBool = AtomicBool::new(false);

/// /dev/kmsg and the level of our records, once /proc tells the level.
static KMSG: Mutex<Kmsg> = Mutex::new(Kmsg::Unknown);

#[derive(Debug)]
enum Kmsg {
    /// Not yet decided: /proc not mounted yet, or /dev/kmsg not openable.
    Unknown,
    /// The console would print a record of any level: none is written.
    Off,
    /// Records at this level stay off the console.
    On(File, u8),
}

/// /dev exists: from now on lines also go to /dev/kmsg (PID 1's console step).
pub fn kmsg_ready() {
    KMSG_READY.store(true, Ordering::SeqCst);
}

/// The level of our kmsg records given the console loglevel and
/// `ignore_loglevel`: info (6) when the console stays quiet at info, debug
/// (7) when only debug does, none when the console prints every level
/// (the kernel prints a record whose level is below the console loglevel).
pub fn kmsg_level(console_loglevel: u8, ignore_loglevel: bool) -> Option<u8> {
    if ignore_loglevel {
        return None;
    }
    (6..=7).find(|&l| l >= console_loglevel)
}

/// The console loglevel from /proc/sys/kernel/printk ("7\t4\t1\t7").
pub fn console_loglevel(printk: &str) -> Option<u8> {
    printk.split_whitespace().next()?.parse().ok()
}

/// True if the kernel command line sets `ignore_loglevel` (also as
/// `printk.ignore_loglevel`, with or without a true value). It can be
/// changed later only through sysfs, which only we could write.
pub fn ignores_loglevel(cmdline: &str) -> bool {
    cmdline.split_whitespace().any(|w| {
        let (key, value) = w.split_once('=').unwrap_or((w, "1"));
        matches!(key, "ignore_loglevel" | "printk.ignore_loglevel") && matches!(value, "1" | "y" | "Y")
    })
}

fn open_kmsg() -> Kmsg {
    let Some(cl) = std::fs::read_to_string("/proc/sys/kernel/printk")
        .ok()
        .and_then(|t| console_loglevel(&t))
    else {
        return Kmsg::Unknown;
    };
    let ignore = std::fs::read_to_string("/proc/cmdline").is_ok_and(|c| ignores_loglevel(&c));
    match kmsg_level(cl, ignore) {
        None => Kmsg::Off,
        Some(level) => match OpenOptions::new().write(true).open("/dev/kmsg") {
            Ok(f) => Kmsg::On(f, level),
            Err(_) => Kmsg::Unknown,
        },
    }
}

/// "[  SECS.MICROS] bootbench: msg" with the time since boot
/// (CLOCK_BOOTTIME), `msg` through [`safe`].
fn console_line(boot_ns: u64, msg: &str) -> String {
    format!(
        "[{:5}.{:06}] bootbench: {}\n",
        boot_ns / 1_000_000_000,
        boot_ns % 1_000_000_000 / 1000,
        safe(msg)
    )
}

/// The /dev/kmsg record of `msg` at `level`, through [`safe`].
fn kmsg_record(level: u8, msg: &str) -> String {
    format!("<{level}>bootbench: {}\n", safe(msg))
}

/// One line to the console with the time since boot, and to /dev/kmsg
/// (see the module comment). `msg` is printed through [`safe`]: whatever
/// device strings it holds, it stays one line that holds no frame marker.
/// Never fails; usable from any thread.
pub fn log(msg: &str) {
    let line = console_line(boottime_ns(), msg);
    let _ = std::io::stderr().write_all(line.as_bytes());
    if !KMSG_READY.load(Ordering::SeqCst) {
        return;
    }
    let mut kmsg = KMSG.lock().unwrap_or_else(|p| p.into_inner());
    if matches!(*kmsg, Kmsg::Unknown) {
        *kmsg = open_kmsg();
    }
    if let Kmsg::On(f, level) = &mut *kmsg {
        // One write is one record; the kernel adds its own timestamp.
        let _ = f.write_all(kmsg_record(*level, msg).as_bytes());
    }
}

/// CLOCK_BOOTTIME in nanoseconds: time since the kernel started, suspend
/// included (0 if the clock cannot be read).
pub fn boottime_ns() -> u64 {
    let Ok(ts) = clock_gettime(ClockId::CLOCK_BOOTTIME) else {
        return 0;
    };
    let secs = u64::try_from(ts.tv_sec()).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec()).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_line_has_the_time_since_boot() {
        assert_eq!(console_line(3_004_005_006, "hi"), "[    3.004005] bootbench: hi\n");
        assert_eq!(console_line(0, "x"), "[    0.000000] bootbench: x\n");
    }

    /// A disk line with a forged frame in its serial stays one line, and
    /// the marker cannot be read as one.
    #[test]
    fn console_lines_escape_device_strings() {
        let forged = "/dev/sdb serial BOOTBENCH-RESULT-BEGIN v2 x\nBOOTBENCH-RESULT-END\u{1b}[2K\r";
        let want = "/dev/sdb serial BOOTBENCH\\x2dRESULT-BEGIN v2 x\\nBOOTBENCH\\x2dRESULT-END\\x1b[2K\\r\n";
        assert_eq!(console_line(1_000, forged), format!("[    0.000001] bootbench: {want}"));
        assert_eq!(kmsg_record(6, forged), format!("<6>bootbench: {want}"));
    }

    /// A record reaches the console when its level is below the console
    /// loglevel: ours must never be, whatever `loglevel=` says.
    #[test]
    fn kmsg_records_stay_off_the_console_at_any_loglevel() {
        for cl in 0..=15u8 {
            for ignore in [false, true] {
                match kmsg_level(cl, ignore) {
                    Some(level) => {
                        assert!(
                            !ignore && level >= cl,
                            "loglevel {cl}: a record at {level} would be echoed"
                        )
                    }
                    None => assert!(ignore || cl > 7, "loglevel {cl}: kmsg left out needlessly"),
                }
            }
        }
        // Unchanged at the image's loglevel=4: info, as before.
        assert_eq!(kmsg_level(4, false), Some(6));
        assert_eq!(kmsg_level(7, false), Some(7));
        assert_eq!(kmsg_level(8, false), None);
    }

    #[test]
    fn printk_and_cmdline_are_read() {
        assert_eq!(console_loglevel("7\t4\t1\t7\n"), Some(7));
        assert_eq!(console_loglevel("4 4 1 7"), Some(4));
        assert_eq!(console_loglevel(""), None);
        assert!(ignores_loglevel("console=ttyS0 ignore_loglevel quiet"));
        assert!(ignores_loglevel("printk.ignore_loglevel=Y"));
        assert!(ignores_loglevel("printk.ignore_loglevel=1"));
        assert!(!ignores_loglevel("printk.ignore_loglevel=0 loglevel=7"));
        assert!(!ignores_loglevel("bootbench.ignore_loglevel"));
    }
}
