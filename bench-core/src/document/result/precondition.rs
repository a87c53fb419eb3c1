//! A disk's preconditioning (`precondition`, see [`crate::passes::steady`]): the
//! workload-independent fill, then the rounds of the workload with each
//! round's figure, and whether (and at which round) the Measurement
//! Window reached steady state.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};

use super::BurnOrder;

closed_set! {
    /// How preconditioning ended.
    pub enum PreconditionEnd ("snake_case") {
        /// The Measurement Window reached steady state.
        Steady,
        /// The round limit came first: no steady state.
        RoundLimit,
        /// The run was interrupted, or the disk's time ran out.
        Stopped,
        /// It could not run or go on (the disk refused, a write failed):
        /// see `error`.
        Error,
    }
}

/// The workload-independent fill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreconditionFill {
    /// Bytes written (the area twice).
    pub bytes: u64,
    /// From its first write to its last completion, nanoseconds.
    pub elapsed_ns: u64,
    /// `bytes` / `elapsed_ns`, bytes per second.
    pub bytes_per_sec: Option<f64>,
}

/// One round of the workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreconditionRound {
    /// Writes completed.
    pub writes: u64,
    /// Bytes they wrote.
    pub bytes: u64,
    /// From the round's first write to its last completion, nanoseconds.
    pub time_ns: u64,
    /// The round's figure (`figure` names it): writes/s or bytes/s.
    pub value: f64,
}

/// A target's preconditioning.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Precondition {
    /// The area's first byte.
    pub start_byte: u64,
    /// The byte after the area's last.
    pub end_byte: u64,
    /// The fill, when it ran.
    pub fill: Option<PreconditionFill>,
    /// The rounds' writes: their size, bytes.
    pub bs: u64,
    /// Writes in flight.
    pub iodepth: u32,
    /// Their order over the area.
    pub order: BurnOrder,
    /// What each round is judged by: `write_iops` (random writes) or
    /// `write_bytes_per_sec` (sequential).
    pub figure: String,
    /// Each round's time, nanoseconds.
    pub round_ns: u64,
    /// The round limit.
    pub max_rounds: u32,
    /// The Measurement Window, rounds.
    pub window: u32,
    /// The data excursion limit, percent of the window's average.
    pub range_pct: f64,
    /// The slope excursion limit, percent of the window's average.
    pub slope_pct: f64,
    /// The rounds run, in order.
    pub rounds: Vec<PreconditionRound>,
    /// The round (from 1) that ended the first window in steady state.
    pub steady_round: Option<u32>,
    /// The last window's average figure.
    pub window_mean: Option<f64>,
    /// The last window's largest figure less its smallest.
    pub window_range: Option<f64>,
    /// How far the last window's best linear fit rises or falls over it.
    pub window_fit_excursion: Option<f64>,
    /// How it ended.
    pub end: PreconditionEnd,
    /// What failed, for `error`; why it stopped, for `stopped`.
    pub error: Option<String>,
    /// The purge before it, when the config asked for one
    /// (`precondition.purge`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge: Option<Purge>,
}

/// The purge before preconditioning: what was asked, what ran, how long
/// it took, and why it did not complete when it did not (preconditioning
/// is then not run).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Purge {
    /// As the config asked: `auto` or a method's name.
    pub asked: String,
    /// The method chosen (absent when none could be).
    pub method: Option<super::EraseMethod>,
    /// It ran to its end: every block of the disk erased by the disk.
    pub done: bool,
    /// From sending it to its end (or failure), nanoseconds.
    pub elapsed_ns: u64,
    /// Why it was refused or did not complete.
    pub error: Option<String>,
}
