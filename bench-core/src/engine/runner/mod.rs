//! Running steps: the loop that keeps `iodepth` requests in flight, times
//! each, and turns completions into statistics.
//!
//! One job's loop is [`run_job`] (`job.rs`), which takes its requests from
//! an [`OffsetGen`] (`offsets.rs`), flushes as the step asks (`flush.rs`),
//! reads back what a verifying step wrote (`readback.rs`) and counts what
//! completed in a [`JobOutcome`] that [`merge`] combines over the jobs
//! (`account.rs`). [`prepare`] (`prepare.rs`) does a step's untimed
//! preparation, [`SerialRunner`] (`serial.rs`) runs whole steps on the
//! simulated disk, and [`run_test`] (`test_run.rs`) runs a test's steps and
//! their passes through any [`StepRunner`].

use alloc::string::String;
use core::sync::atomic::{AtomicU8, Ordering};

use crate::document::result::StepResult;
use crate::io::IoError;
use crate::spec::Step;
use crate::vocab::units::Nanos;

mod account;
mod flush;
mod job;
mod offsets;
mod prepare;
mod readback;
mod request;
mod serial;
mod steady_wait;
mod test_run;
#[cfg(test)]
mod testutil;

pub use crate::spec::step_range;
pub use account::{merge, DirAcc, JobOutcome};
/// The longest range one flush of a file covers (profile's tests check
/// sysbench's flushes against it).
#[cfg(test)]
pub(crate) use flush::FLUSH_RANGE_MAX;
pub use job::{open_spec, run_job, Progress};
pub use offsets::OffsetGen;
pub use prepare::{fill, prepare, FILL_BS};
pub use serial::SerialRunner;
pub use steady_wait::judge as judge_steady;
pub use test_run::{error_status, op_name, pass_of, run_test, stopped_status};

/// EIO, reported for a short transfer.
pub const EIO: i32 = 5;

/// EOPNOTSUPP: a verifying step on a queue that gives no buffer access.
pub const EOPNOTSUPP: i32 = 95;

/// EPERM: a target refuses a queue that writes (it may not be written).
pub const EPERM: i32 = 1;

/// Why a test stops before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The user asked (SIGINT or SIGTERM on a live system).
    Interrupted,
    /// The test ran past its deadline ([`crate::engine::plan::deadline`]).
    Deadline,
}

/// A request to stop, shared by the jobs of a step and whoever asks (a
/// signal handler, a watchdog): jobs stop submitting, finish what is in
/// flight and return what they measured. Setting it is async-signal-safe
/// (one atomic compare-and-swap); the first reason set wins.
#[derive(Debug, Default)]
pub struct Stop(AtomicU8);

impl Stop {
    /// Not set.
    pub const fn new() -> Stop {
        Stop(AtomicU8::new(0))
    }

    /// Ask to stop, for `why`, unless a stop is already asked.
    pub fn request(&self, why: StopReason) {
        let code = match why {
            StopReason::Interrupted => 1,
            StopReason::Deadline => 2,
        };
        let _ = self.0.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The reason, if a stop was asked.
    pub fn reason(&self) -> Option<StopReason> {
        match self.0.load(Ordering::SeqCst) {
            1 => Some(StopReason::Interrupted),
            2 => Some(StopReason::Deadline),
            _ => None,
        }
    }

    /// Clear a deadline stop (the next test starts afresh); an interrupt
    /// stays, since the user asked for the whole run to stop.
    pub fn clear_deadline(&self) {
        let _ = self.0.compare_exchange(2, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// Something that runs whole steps: the serial runner below, or init's
/// threaded one (one thread per job).
pub trait StepRunner {
    /// Prepare, open a queue per job, run them (until their bound or until
    /// `stop` is asked), merge.
    fn run_step(
        &mut self,
        step: &Step,
        stop: &Stop,
        progress: &mut dyn FnMut(&Progress<'_>),
    ) -> Result<StepResult, IoError>;

    /// A test's pause ([`Step::pause`]), untimed: write back what is dirty
    /// and leave the target idle for `for_` ([`Target::settle`](crate::io::Target::settle)), or less
    /// if `stop` is asked meanwhile.
    fn idle(&mut self, for_: Nanos, stop: &Stop) -> Result<(), IoError>;
    /// Said in words, why the last step failed when its errno alone would
    /// mislead (its queues could not be set up as asked: an io_uring
    /// setup, a CPU list; the kernel refused polled I/O): the test's error
    /// message, in place of [`error_status`]'s. Taken: asked once.
    fn take_failure_message(&mut self) -> Option<String> {
        None
    }
}
