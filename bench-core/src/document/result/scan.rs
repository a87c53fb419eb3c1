//! A disk's surface scan (`surface_scan`, see [`crate::passes::scan`]): every
//! block of an area read once, each read's time in a class, the slowest
//! reads, the throughput curve over the surface, the blocks no read
//! returned.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};

closed_set! {
    /// How a surface scan ended.
    pub enum ScanEndState ("snake_case") {
        /// Every planned read was made.
        Done,
        /// More blocks than `max_bad` were unreadable: the scan stopped there.
        TooManyBad,
        /// The run was interrupted (SIGINT, SIGTERM) or its bound reached.
        Stopped,
        /// The scan could not go on (the device could not be opened, the
        /// queue failed): see `error`.
        Error,
    }
}

/// One time class: the reads that took less than `below_ms` (and at least
/// the class before's bound).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanClass {
    /// The class's upper bound, milliseconds; `None` for the last class
    /// (500 ms and slower).
    pub below_ms: Option<u64>,
    /// Reads in it.
    pub reads: u64,
}

/// One of the slowest reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanSlowRead {
    /// Its first logical block.
    pub lba: u64,
    /// Its length, bytes.
    pub bytes: u64,
    /// From its submission to its completion, nanoseconds.
    pub time_ns: u64,
}

/// One zone of the scanned area.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScanZone {
    /// Its first byte.
    pub start_byte: u64,
    /// The byte after its last.
    pub end_byte: u64,
    /// Bytes read in it.
    pub bytes: u64,
    /// From its first read's submission to its last completion, nanoseconds.
    pub time_ns: u64,
    /// `bytes` / `time_ns`, bytes per second; `None` when nothing was read.
    pub bytes_per_sec: Option<f64>,
}

/// A target's surface scan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SurfaceScan {
    /// The area's first byte.
    pub start_byte: u64,
    /// The byte after the area's last.
    pub end_byte: u64,
    /// The size of each read, bytes.
    pub bs: u64,
    /// Reads in flight at most.
    pub iodepth: u32,
    /// The fraction of the area's reads made, parts per million (1000000:
    /// every block).
    pub coverage_ppm: u32,
    /// The logical block size: the unit of the LBAs below.
    pub logical_block: u32,
    /// Bytes the scan planned to read.
    pub planned_bytes: u64,
    /// On a host-managed zoned disk: the bytes of the area that hold data
    /// (conventional zones, sequential zones up to their write pointers),
    /// the only ones read; absent when the whole area was the scan's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_bytes: Option<u64>,
    /// Bytes the reads returned.
    pub read_bytes: u64,
    /// Reads made.
    pub reads: u64,
    /// Reads that failed (each narrowed to its logical blocks).
    pub failed_reads: u64,
    /// From the first read to the last completion, nanoseconds.
    pub elapsed_ns: u64,
    /// `read_bytes` / `elapsed_ns`, bytes per second; `None` when nothing
    /// was read.
    pub bytes_per_sec: Option<f64>,
    /// Reads per time class, fastest first (below 5, 20, 50, 150, 500 ms,
    /// slower).
    pub classes: Vec<ScanClass>,
    /// The slowest reads, slowest first.
    pub slowest: Vec<ScanSlowRead>,
    /// The throughput curve over the area.
    pub zones: Vec<ScanZone>,
    /// LBAs no read returned (after the retries), ascending.
    pub unreadable_lbas: Vec<u64>,
    /// LBAs a failed read covered that a retry returned, ascending.
    pub recovered_lbas: Vec<u64>,
    /// How the scan ended ([`ScanEndState`]).
    pub end: ScanEndState,
    /// What failed, for `error`.
    pub error: Option<String>,
}
