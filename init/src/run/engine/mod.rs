//! The real I/O engines behind bench-core's `Target` and `IoQueue`: O_DIRECT
//! (or buffered) pread/pwrite for one request in flight (fio's psync),
//! io_uring for more and for fio's io_uring options (`hipri`,
//! `sqthread_poll`) at any depth; a monotonic clock; the threaded step
//! runner (one thread per job, pinned to `cpus_allowed`, each making its
//! own queue).
//!
//! - `target.rs`: [`DevTarget::open`]`(path, permit)` (read-only unless a
//!   permit from `safety` is given), implementing `bench_core::io::Target`;
//! - `queue.rs`: the queues a target opens ([`SyncQueue`], [`UringQueue`],
//!   [`CmdQueue`] (NVMe passthrough, fio's `io_uring_cmd`), one of them as
//!   a [`DevQueue`]), implementing `bench_core::io::IoQueue`;
//! - `fast.rs`: what polled completions and the passthrough need of a
//!   device (poll queues, a `/dev/ngXnY`), checked before a test runs;
//! - `pin.rs`: pinning a job's thread to its CPUs (`cpus_allowed`);
//! - `runner.rs`: [`ThreadedRunner::new`]`(Arc<DevTarget>)` implementing
//!   `bench_core::engine::runner::StepRunner` (its steps can be abandoned when a
//!   device hangs: see [`ThreadedRunner`]), the run's [`STOP`] and the
//!   [`with_deadline`] watchdog;
//! - here: [`MonoClock`] implementing `bench_core::io::Clock`
//!   (CLOCK_MONOTONIC), and [`EngineError`].

use std::fmt;
use std::io;
use std::time::Instant;

use bench_core::io::Clock;
use bench_core::vocab::units::Nanos;

pub mod fast;
mod pin;
mod queue;
mod runner;
mod target;

#[cfg(test)]
pub(crate) mod hung;
#[cfg(test)]
mod testkit;

pub use queue::{CmdQueue, DevQueue, SyncQueue, UringQueue, WriteMark};
pub use runner::{with_deadline, ThreadedRunner, GRACE, STOP};
pub use target::{DevTarget, TargetKind};

/// CLOCK_MONOTONIC, in nanoseconds since the clock was made.
///
/// `Copy` and `Sync`: every job of a step reads the same clock, so their
/// per-second samples share one time origin.
#[derive(Clone, Copy, Debug)]
pub struct MonoClock {
    origin: Instant,
}

impl MonoClock {
    /// A clock whose origin is now.
    pub fn new() -> MonoClock {
        MonoClock { origin: Instant::now() }
    }
}

impl Default for MonoClock {
    fn default() -> Self {
        MonoClock::new()
    }
}

impl Clock for MonoClock {
    fn now(&self) -> Nanos {
        // std's Instant is clock_gettime(CLOCK_MONOTONIC) on Linux. u64
        // nanoseconds last 584 years; saturate rather than wrap beyond.
        Nanos(u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
}

/// Why a target could not be opened.
#[derive(Debug)]
pub enum EngineError {
    /// `stat` of the path failed.
    Stat {
        /// The path.
        path: String,
        /// The OS error.
        source: io::Error,
    },
    /// Opening the path (read-only; exclusively, for a writable block
    /// device: EBUSY if it is mounted or in use) failed, or it names
    /// neither a block device nor a regular file ([`crate::disks::file::open`]).
    Open {
        /// The path.
        path: String,
        /// The OS error.
        source: io::Error,
    },
    /// A block-device ioctl for the geometry failed.
    Ioctl {
        /// The path.
        path: String,
        /// The request (`BLKGETSIZE64`, ...).
        request: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The write permit names another target.
    PermitMismatch {
        /// The path being opened.
        path: String,
        /// The path the permit is for.
        permitted: String,
    },
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Stat { path, source } => write!(f, "{path}: cannot stat: {source}"),
            EngineError::Open { path, source } => write!(f, "{path}: cannot open: {source}"),
            EngineError::Ioctl { path, request, source } => write!(f, "{path}: {request} failed: {source}"),
            EngineError::PermitMismatch { path, permitted } => {
                write!(f, "{path}: the write permit is for {permitted}, not this target")
            }
        }
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EngineError::Stat { source, .. } | EngineError::Open { source, .. } | EngineError::Ioctl { source, .. } => {
                Some(source)
            }
            EngineError::PermitMismatch { .. } => None,
        }
    }
}

/// The errno a result records for an I/O error (EIO if it did not come
/// from the OS).
fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}
