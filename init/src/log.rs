//! The log: one line per event, to the console (stderr, which is
//! /dev/console in PID 1) with the time since boot, and to the kernel's log
//! (/dev/kmsg) once /dev is mounted, so that `dmesg` and netconsole see it
//! in order with the kernel's own lines. Used by PID 1, the worker, the live
//! command and every stage beneath them; it imports nothing of theirs.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use bench_core::console::safe;

use crate::sys::power;

/// Set once /dev exists (PID 1's console step), so /dev/kmsg may be opened
/// without taking descriptor 0, 1 or 2 from the console.
static KMSG_READY: AtomicBool = AtomicBool::new(false);

static KMSG: Mutex<Option<File>> = Mutex::new(None);

/// /dev exists: from now on lines also go to /dev/kmsg (PID 1's console step).
pub fn kmsg_ready() {
    KMSG_READY.store(true, Ordering::SeqCst);
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

/// The /dev/kmsg record of `msg` (through [`safe`]: the kernel
/// echoes it to the console at a high enough loglevel).
fn kmsg_record(msg: &str) -> String {
    format!("<6>bootbench: {}\n", safe(msg))
}

/// One line to the console with the time since boot, and to /dev/kmsg
/// as "<6>bootbench: msg" once /dev is mounted. `msg` is printed through [`safe`]: whatever
/// device strings it holds, it stays one line that holds no frame marker.
/// Never fails; usable from any thread.
pub fn log(msg: &str) {
    let line = console_line(power::boottime_ns(), msg);
    let _ = std::io::stderr().write_all(line.as_bytes());
    if !KMSG_READY.load(Ordering::SeqCst) {
        return;
    }
    let mut kmsg = KMSG.lock().unwrap_or_else(|p| p.into_inner());
    if kmsg.is_none() {
        *kmsg = OpenOptions::new().write(true).open("/dev/kmsg").ok();
    }
    if let Some(f) = kmsg.as_mut() {
        // One write is one record; the kernel adds its own timestamp.
        let _ = f.write_all(kmsg_record(msg).as_bytes());
    }
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
        assert_eq!(kmsg_record(forged), format!("<6>bootbench: {want}"));
    }
}
