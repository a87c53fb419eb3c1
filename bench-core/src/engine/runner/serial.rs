//! The serial runner: a step's jobs one after another on one target.

use alloc::vec::Vec;

use super::account::merge;
use super::job::{open_spec, run_job, Progress};
use super::prepare::prepare;
use super::{StepRunner, Stop};
use crate::document::result::StepResult;
use crate::io::{Clock, IoError, Target};
use crate::spec::Step;
use crate::vocab::units::Nanos;

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
    fn run_step(
        &mut self,
        step: &Step,
        stop: &Stop,
        progress: &mut dyn FnMut(&Progress<'_>),
    ) -> Result<StepResult, IoError> {
        let filled = prepare(step, self.target, self.clock, stop)?;
        let mut outcomes = Vec::with_capacity(usize::try_from(step.jobs).unwrap_or(1));
        for job in 0..step.jobs.max(1) {
            let mut q = self.target.open(&open_spec(step, job))?;
            outcomes.push(run_job(step, job, &mut q, self.clock, stop, progress)?);
        }
        let mut r = merge(step, &outcomes);
        r.filled_bytes = filled;
        Ok(r)
    }

    /// One settle of the whole length: the simulated disk's moves its
    /// clock, with no I/O.
    fn idle(&mut self, for_: Nanos, _stop: &Stop) -> Result<(), IoError> {
        self.target.settle(for_)
    }
}
