//! Expanding a test into the steps it runs on a target of given geometry,
//! and the headline figures of its step results.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::io::Geometry;
use crate::result::{StepResult, Summary};
use crate::spec::{Step, TestSpec, Workload};

/// Why a test cannot run on a target. Each names the parameter, the value
/// and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// A size parameter is not a multiple of the target's logical block size.
    NotAligned {
        /// `bs`, `offset`, `length`, ...
        field: &'static str,
        /// The value given, bytes.
        value: u64,
        /// The logical block size, bytes.
        block: u32,
    },
    /// The target is smaller than the test needs.
    TooSmall {
        /// What needs the room (`size`, `offset+length`, `bs`, ...).
        field: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A parameter is out of its range.
    OutOfRange {
        /// The parameter.
        field: &'static str,
        /// The value given.
        value: u64,
        /// What is expected, in words.
        expected: &'static str,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        todo!()
    }
}

/// The steps `spec` runs on a target of geometry `geom`.
pub fn expand(spec: &TestSpec, geom: &Geometry) -> Result<Vec<Step>, PlanError> {
    todo!()
}

/// The headline figures of a test from its step results.
pub fn summarize(workload: Workload, steps: &[StepResult]) -> Summary {
    todo!()
}

/// A default test name for a workload and its parameters, e.g.
/// `rand_read_4k_qd32_j1`.
pub fn default_name(spec: &TestSpec) -> String {
    todo!()
}
