//! A disk's burn-in (`burn_in`, see [`crate::passes::burnin`]): passes that write
//! the area with a pattern and read every block back against it, and the
//! blocks that could not be written, read or did not hold what was
//! written.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};

closed_set! {
    /// How a burn-in (or one of its passes) ended.
    pub enum BurnEndState ("snake_case") {
        /// Every planned request was made.
        Done,
        /// More bad blocks than `max_bad` were found: the burn-in stopped there.
        TooManyBad,
        /// The run was interrupted (SIGINT, SIGTERM) or the burn-in's time ran out.
        Stopped,
        /// The burn-in could not go on (the disk could not be claimed or
        /// opened, the queue failed): see `error`.
        Error,
        /// Not started: an earlier pass ended the burn-in.
        NotRun,
    }
}

closed_set! {
    /// The order of a pass's requests.
    pub enum BurnOrder ("snake_case") {
        /// The area written from its first block to its last, then read
        /// back in the same order (badblocks -w).
        Sequential,
        /// Every block written once in a random order, each read back and
        /// checked once its write completed, reads and writes mixed half
        /// and half (fio's randrw with verify).
        Random,
    }
}

closed_set! {
    /// What a zone-by-zone burn-in leaves in each sequential zone it burnt in.
    pub enum ZonesAfter ("snake_case") {
        /// Reset: empty, its write pointer at its start (the default: the
        /// drive as a new one is delivered).
        Empty,
        /// As the last pass left it: written to its capacity, full.
        Full,
    }
}

/// How a burn-in went over a zoned disk's zones ([`crate::passes::burnin`]):
/// zone by zone, each zone's passes before the next zone's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BurnZones {
    /// Sequential-write-required zones burnt in: each reset before every
    /// pass's writes and written from its start to its capacity.
    pub sequential: u64,
    /// Conventional zones burnt in, as an ordinary disk's blocks.
    pub conventional: u64,
    /// Zones of the area not burnt in: offline or read-only (the zone
    /// counts and the `zones` rule report them), or not wholly inside the
    /// area.
    pub skipped: u64,
    /// Zone resets sent (BLKRESETZONE), each a write to the disk.
    pub resets: u64,
    /// What the sequential zones were left as.
    pub after: ZonesAfter,
}

/// One pass: the area written with `pattern` and read back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BurnPass {
    /// What was written: a byte repeated (`"0xaa"`), or `"random"` (data
    /// from `seed` and each byte's offset, see [`crate::engine::verify`]).
    pub pattern: String,
    /// The seed of `"random"` data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The order of the requests.
    pub order: BurnOrder,
    /// Bytes the pass writes and reads back (the area).
    pub planned_bytes: u64,
    /// Bytes written (failed writes excluded).
    pub written_bytes: u64,
    /// Bytes read back and checked (failed reads excluded).
    pub verified_bytes: u64,
    /// Write requests made, and those that failed (each then narrowed to
    /// its logical blocks).
    pub writes: u64,
    /// Write requests that failed.
    pub failed_writes: u64,
    /// Read requests made.
    pub reads: u64,
    /// Read requests that failed (each then narrowed).
    pub failed_reads: u64,
    /// From the first write's submission to the last write's completion,
    /// nanoseconds (in the random order, the reads run meanwhile).
    pub write_ns: u64,
    /// From the first read's submission to the last read's completion,
    /// nanoseconds.
    pub verify_ns: u64,
    /// `written_bytes` / `write_ns`, bytes per second.
    pub write_bytes_per_sec: Option<f64>,
    /// `verified_bytes` / `verify_ns`, bytes per second.
    pub verify_bytes_per_sec: Option<f64>,
    /// LBAs no write reached (after the retries), ascending.
    pub unwritable_lbas: Vec<u64>,
    /// LBAs no read returned (after the retries), ascending.
    pub unreadable_lbas: Vec<u64>,
    /// LBAs that were read back but did not hold what the pass wrote,
    /// ascending.
    pub mismatched_lbas: Vec<u64>,
    /// How the pass ended.
    pub end: BurnEndState,
}

/// A target's burn-in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BurnIn {
    /// `sequential` (a pass per pattern, badblocks -w) or `random`
    /// (random-order passes of random data, as Ironic's fio burn-in).
    pub mode: BurnOrder,
    /// The area's first byte.
    pub start_byte: u64,
    /// The byte after the area's last.
    pub end_byte: u64,
    /// The size of each request, bytes.
    pub bs: u64,
    /// Requests in flight at most.
    pub iodepth: u32,
    /// The logical block size: the unit of the LBAs.
    pub logical_block: u32,
    /// Every planned pass, in order (those not reached `not_run`).
    pub passes: Vec<BurnPass>,
    /// Every pass's bad blocks together: LBAs no write reached, ascending.
    pub unwritable_lbas: Vec<u64>,
    /// LBAs no read returned, ascending.
    pub unreadable_lbas: Vec<u64>,
    /// LBAs that did not hold what was written, ascending.
    pub mismatched_lbas: Vec<u64>,
    /// From the first request to the last completion, nanoseconds.
    pub elapsed_ns: u64,
    /// How the burn-in ended.
    pub end: BurnEndState,
    /// What failed, for `error`; why it stopped, for `stopped`.
    pub error: Option<String>,
    /// On a host-managed zoned disk: how it went zone by zone (its
    /// passes' bytes are the zones' capacities, not the area's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<BurnZones>,
}

impl BurnIn {
    /// Every pass's written and verified bytes, and what all passes plan
    /// (twice the area each: written, then read back).
    pub fn done_and_planned(&self) -> (u64, u64) {
        self.passes.iter().fold((0, 0), |(d, p), x| {
            (d + x.written_bytes + x.verified_bytes, p + 2 * x.planned_bytes)
        })
    }
}
