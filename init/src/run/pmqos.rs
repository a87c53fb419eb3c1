//! The kernel's CPU wake-up latency limit (PM QoS, `/dev/cpu_dma_latency`,
//! Documentation/power/pm_qos_interface.rst): while a descriptor that
//! wrote a limit stays open, no CPU enters an idle state whose exit takes
//! longer; closing it withdraws the request. Reading the device gives the
//! limit in force, the smallest of every open request (2000000000, the
//! kernel's `PM_QOS_CPU_LATENCY_DEFAULT_VALUE`, when there is none).
//!
//! A disk benchmark waits for every completion with its CPU idle; the time
//! the CPU takes to leave a deep idle state (a halted vCPU's exit to the
//! hypervisor; C6 on a server) is added to every request's latency. cyclictest
//! and rtla's timerlat hold this request at 0 while they measure, for the
//! same reason.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

use bench_core::document::result::CpuDmaLatency;

/// The device.
pub const DEVICE: &str = "/dev/cpu_dma_latency";

/// The value read when no request limits the CPUs (the kernel's
/// `PM_QOS_CPU_LATENCY_DEFAULT_VALUE`), microseconds.
pub const NO_LIMIT_US: u32 = 2_000_000_000;

/// The limit in force, microseconds: what reading the device gives (a
/// native-endian `s32`). A descriptor opened only to read adds a request
/// at the default value, which limits nothing.
pub fn current(dev: &Path) -> io::Result<u32> {
    let mut b = [0u8; 4];
    File::open(dev)?.read_exact(&mut b)?;
    u32::try_from(i32::from_ne_bytes(b)).map_err(|_| io::Error::from_raw_os_error(libc::ERANGE))
}

/// An open request: the limit holds until this is dropped (the descriptor
/// closed), then the kernel withdraws it.
#[derive(Debug)]
pub struct Hold {
    _file: File,
}

/// Ask that no CPU take longer than `us` microseconds to wake, until the
/// returned [`Hold`] is dropped. The value is written as the binary `s32`
/// the device takes (one that does not fit is EINVAL, nothing written).
pub fn hold(dev: &Path, us: u32) -> io::Result<Hold> {
    let v = i32::try_from(us).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut f = OpenOptions::new().write(true).open(dev)?;
    f.write_all(&v.to_ne_bytes())?;
    Ok(Hold { _file: f })
}

/// The run's request, made before its first test: `limit` microseconds
/// (`None`: the config said `"off"`, nothing asked), held by the returned
/// [`Hold`] until the last test is over; and what the document records of
/// it. A device that cannot be opened or written leaves the run as it
/// would be without the request, and says why.
pub fn request(dev: &Path, limit: Option<u32>) -> (Option<Hold>, CpuDmaLatency) {
    let before_us = current(dev).ok();
    let mut rec = CpuDmaLatency {
        requested_us: limit,
        before_us,
        during_us: before_us,
        held: false,
        error: None,
    };
    let Some(us) = limit else {
        return (None, rec);
    };
    match hold(dev, us) {
        Ok(h) => {
            rec.held = true;
            rec.during_us = current(dev).ok();
            (Some(h), rec)
        }
        Err(e) => {
            rec.error = Some(format!("{}: {e}", dev.display()));
            (None, rec)
        }
    }
}

/// The progress line that says what [`request`] did.
pub fn describe(rec: &CpuDmaLatency) -> String {
    const COST: &str = "a CPU that wakes from a deep idle state adds the time it takes to the latencies measured";
    let limit = |v: Option<u32>| match v {
        Some(NO_LIMIT_US) => "none".to_string(),
        Some(us) => format!("{us} us"),
        None => "unknown".to_string(),
    };
    match (rec.requested_us, &rec.error) {
        (None, _) => format!(
            "cpu_dma_latency: off (the config's): the CPUs' own idle states (limit in force: {}); {COST}",
            limit(rec.during_us)
        ),
        (Some(us), Some(e)) => format!("cpu_dma_latency: {us} us not held: {e}; {COST}"),
        (Some(us), None) => format!(
            "cpu_dma_latency: held at {us} us from the first test to the last (limit in force: {}, before: {})",
            limit(rec.during_us),
            limit(rec.before_us)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in place of the device: the value written is the binary s32,
    /// and a value beyond an s32 is refused before anything is written.
    #[test]
    fn hold_writes_the_binary_s32_the_device_takes() {
        let t = crate::testutil::TempDir::new("pmqos");
        let p = t.0.join("cpu_dma_latency");
        std::fs::write(&p, []).unwrap();
        let h = hold(&p, 20).expect("hold");
        assert_eq!(std::fs::read(&p).unwrap(), 20i32.to_ne_bytes());
        drop(h);
        assert_eq!(current(&p).expect("read back"), 20);
        std::fs::write(&p, []).unwrap();
        let e = hold(&p, u32::MAX).expect_err("beyond an s32");
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
        assert!(std::fs::read(&p).unwrap().is_empty(), "nothing written");
        std::fs::write(&p, (-1i32).to_ne_bytes()).unwrap();
        assert_eq!(current(&p).map_err(|e| e.raw_os_error()), Err(Some(libc::ERANGE)));
    }

    /// What the document records: held (and the limit read back), off
    /// (nothing written), or the error of a device that is not there.
    #[test]
    fn request_records_what_was_asked_and_found() {
        let t = crate::testutil::TempDir::new("pmqos-request");
        let p = t.0.join("cpu_dma_latency");
        std::fs::write(&p, NO_LIMIT_US.to_ne_bytes()).unwrap();
        let (h, rec) = request(&p, None);
        assert!(h.is_none());
        assert_eq!(
            std::fs::read(&p).unwrap(),
            NO_LIMIT_US.to_ne_bytes(),
            "off writes nothing"
        );
        assert_eq!(
            (rec.requested_us, rec.before_us, rec.held, rec.error),
            (None, Some(NO_LIMIT_US), false, None)
        );
        assert!(describe(&request(&p, None).1).contains("off"));
        // A file is overwritten from its start: it reads back what was written.
        let (h, rec) = request(&p, Some(0));
        assert!(h.is_some());
        assert_eq!(
            (rec.requested_us, rec.before_us, rec.during_us, rec.held),
            (Some(0), Some(NO_LIMIT_US), Some(0), true)
        );
        assert_eq!(
            describe(&rec),
            "cpu_dma_latency: held at 0 us from the first test to the last (limit in force: 0 us, before: none)"
        );
        let (h, rec) = request(&t.0.join("absent"), Some(0));
        assert!(h.is_none());
        assert!(!rec.held);
        assert!(rec.error.as_deref().is_some_and(|e| e.contains("absent")), "{rec:?}");
        assert!(describe(&rec).contains("not held"), "{}", describe(&rec));
    }
}
