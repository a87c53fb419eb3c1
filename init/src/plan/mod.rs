//! The plan: the config file (or the command line) validated into what the
//! run will do, stage by stage: [`raw`] (the file as written, parsed once
//! into the types of [`value`]), [`validate`]
//! (the tests, field by field, with their messages), [`resolve`] (what the
//! targets are on this machine, the grants, the stacks) and [`model`] (the
//! plan they produce). [`crate::safety`] decides what may be written.
//!
//! ```json
//! { "profile": "quick", "seed": 42,
//!   "targets": ["/dev/loop0", {"path": "/dev/sdb"}, {"serial": "S3Z..."}, {"wwn": "0x5002..."}],
//!   "defaults": { "runtime": "2s" },
//!   "tests": [ {"workload": "rand_read", "name": "optional", "bs": "4k", "iodepth": 32} ],
//!   "destructive": { "confirm": "I understand this destroys data",
//!                    "targets": ["/dev/loop0"], "allow_overwrite_signatures": false } }
//! ```

pub mod acceptance;
mod acceptance_raw;
mod existing;
pub mod existing_raw;
mod model;
mod pass;
mod pass_check;
mod pass_raw;
mod raw;
mod resolve;
#[cfg(test)]
mod tests;
mod validate;
pub mod value;

pub use model::*;
pub use pass::{BurnPlan, PassPlan, PreconditionPlan, ScanPlan, PURGE_TIME};
pub use pass_raw::RawSurfaceScan;
pub use raw::*;
pub use validate::*;
