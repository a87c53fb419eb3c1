//! Profiles: named bundles of tests.
//!
//! - `quick`: every workload, seconds each, for tests and a first look.
//! - `standard`: every workload with fio-like durations.
//! - `classic`: the seed posts' tools with their parameters: hdparm -T/-t,
//!   dd (16k x 10000 write + fdatasync, 8k x 256k overwrite, 10M x 400 read),
//!   sysbench fileio (16 KiB, rndrd/rndwr/rndrw at 1.5 ratio, 10 s),
//!   diskinfo -t/-c/-i, the commit-size test.
//! - `cdm`: CrystalDiskMark's default set: SEQ1M Q8T1, SEQ1M Q1T1,
//!   RND4K Q32T1, RND4K Q1T1, read and write, 1 GiB area, 5 s each.

use alloc::vec::Vec;

use crate::spec::TestSpec;

/// The profile names.
pub const PROFILES: [&str; 4] = ["quick", "standard", "classic", "cdm"];

/// The tests of a profile, in run order; `None` for an unknown name.
pub fn profile(name: &str) -> Option<Vec<TestSpec>> {
    todo!()
}
