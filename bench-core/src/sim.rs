//! A simulated disk with a seek-time and zone-rate model and a deterministic
//! clock, so the runner, the workloads and the statistics can be checked
//! exactly, in milliseconds, without hardware.
//!
//! The model: service time of a request = command overhead + seek time (zero
//! when the request starts where the previous one ended) + len / rate(offset),
//! where the rate falls linearly from `outer_rate` at offset 0 to
//! `inner_rate` at the end (zoned recording), and the seek time grows with
//! the square root of the distance from `track_to_track` to `full_stroke`.
//! Requests are served one at a time in submission order.

use alloc::rc::Rc;
use core::cell::Cell;

use crate::io::Clock;
use crate::units::Nanos;

/// The model's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimModel {
    /// Size, bytes.
    pub size: u64,
    /// Logical block size, bytes.
    pub logical_block: u32,
    /// Transfer rate at offset 0, bytes per second.
    pub outer_rate: f64,
    /// Transfer rate at the last byte, bytes per second.
    pub inner_rate: f64,
    /// Seek time for the shortest non-zero distance, nanoseconds.
    pub track_to_track_ns: u64,
    /// Seek time across the whole disk, nanoseconds.
    pub full_stroke_ns: u64,
    /// Fixed cost of every command, nanoseconds.
    pub command_overhead_ns: u64,
    /// Cost of a flush, nanoseconds.
    pub flush_ns: u64,
}

impl SimModel {
    /// A 7200 rpm-like disk of `size` bytes: 200 MB/s outside, 100 MB/s
    /// inside, 0.5 ms track to track, 16 ms full stroke, 50 us per command.
    pub fn hdd(size: u64) -> SimModel {
        todo!()
    }
    /// An SSD-like disk: flat 500 MB/s, no seek time, 20 us per command.
    pub fn ssd(size: u64) -> SimModel {
        todo!()
    }
    /// Transfer rate at `offset`, bytes per second.
    pub fn rate_at(&self, offset: u64) -> f64 {
        todo!()
    }
    /// Seek time over `distance` bytes (0 for 0).
    pub fn seek_ns(&self, distance: u64) -> u64 {
        todo!()
    }
}

/// The simulated clock: time moves only when the disk serves a request.
#[derive(Clone, Debug, Default)]
pub struct SimClock(Rc<Cell<u64>>);

impl SimClock {
    /// Move the clock forward.
    pub fn advance(&self, by: Nanos) {
        self.0.set(self.0.get() + by.0);
    }
}

impl Clock for SimClock {
    fn now(&self) -> Nanos {
        Nanos(self.0.get())
    }
}

// SimDisk (a Target over a SimModel and a SimClock, writable only when
// constructed so) and SimQueue (its IoQueue) follow.
