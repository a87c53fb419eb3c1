//! Running steps: the loop that keeps `iodepth` requests in flight, times
//! each, and turns completions into statistics.

use alloc::vec::Vec;

use crate::io::{Clock, IoError, IoQueue, Target};
use crate::result::{StepResult, TestResult};
use crate::spec::{Step, TestSpec};
use crate::stats::{Buckets, Latency};
use crate::units::Nanos;

/// What one direction of one job counted (after the ramp).
#[derive(Clone, Debug, PartialEq)]
pub struct DirAcc {
    /// Bytes completed.
    pub bytes: u64,
    /// Requests completed.
    pub ios: u64,
    /// Latencies.
    pub lat: Latency,
    /// Per-interval counts since the end of the ramp.
    pub buckets: Buckets,
}

/// What one job of a step counted.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    /// Reads.
    pub read: DirAcc,
    /// Writes.
    pub write: DirAcc,
    /// Flushes.
    pub flush: DirAcc,
    /// From the end of the ramp to the last completion.
    pub runtime: Nanos,
}

/// A progress report, made about once per second of the step's clock.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress<'a> {
    /// The step's label.
    pub step: &'a str,
    /// Fraction done, 0.0 to 1.0, by the step's bound (time or bytes).
    pub done: f64,
    /// Estimated time left in the step.
    pub eta: Option<Nanos>,
}

/// Run one job of a step on an open queue.
///
/// Keeps `step.iodepth` requests in flight (never more than `q.depth()`),
/// takes offsets from the step's pattern (job `job` of `step.jobs`), times
/// each request from just before its submission to just after the reap that
/// returned it, excludes completions inside the ramp, and stops at the
/// step's limit. An I/O error or a short transfer ends the job with the error.
pub fn run_job<Q: IoQueue, C: Clock>(
    step: &Step,
    job: u32,
    q: &mut Q,
    clock: &C,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<JobOutcome, IoError> {
    todo!()
}

/// Combine the jobs of a step into its result.
pub fn merge(step: &Step, jobs: &[JobOutcome]) -> StepResult {
    todo!()
}

/// Do a step's untimed preparation (drop caches, or warm the first request).
pub fn prepare<T: Target, C: Clock>(step: &Step, target: &T, clock: &C) -> Result<(), IoError> {
    todo!()
}

/// Something that runs whole steps: the serial runner below, or init's
/// threaded one (one thread per job).
pub trait StepRunner {
    /// Prepare, open a queue per job, run them, merge.
    fn run_step(&mut self, step: &Step, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<StepResult, IoError>;
}

/// Runs a step's jobs one after another on one target: for the simulated
/// disk, where a single clock makes concurrency meaningless.
#[derive(Debug)]
pub struct SerialRunner<'a, T, C> {
    /// The target.
    pub target: &'a T,
    /// The clock.
    pub clock: &'a C,
}

impl<T: Target, C: Clock> StepRunner for SerialRunner<'_, T, C> {
    fn run_step(&mut self, step: &Step, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<StepResult, IoError> {
        todo!()
    }
}

/// Expand `spec` for `target_path`'s geometry, run every step in order, and
/// build the test's result: status `ok`, or `error` with the errno, op and
/// offset of the first failed request (later steps are not run; completed
/// ones are kept), and the summary.
pub fn run_test(
    spec: &TestSpec,
    target_path: &str,
    steps: &[Step],
    runner: &mut dyn StepRunner,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> TestResult {
    todo!()
}

#[allow(dead_code)]
fn _uses(_: Vec<u8>) {}
