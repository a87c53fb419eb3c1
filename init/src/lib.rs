//! bootbench-init's code: bootbench's PID 1 and the live command, as a
//! library that the binary (src/main.rs), the fuzz targets and the tests
//! use.
//!
//! The folders follow one run (README's "Where the results go when
//! booted from the stick" and init/README.md say more): [`boot`] is PID 1
//! (mounts, the supervised worker, the stick, the unattended run) and
//! [`cli`] the live command (its clap definitions in [`args`]); both hand
//! a [`plan`] (the config validated, the targets resolved and granted by
//! [`safety`], which plan and run both use) to the one executor in
//! [`run`], which assembles [`stacks`] (md and dm), runs the engines on
//! the [`disks`] and returns the document that [`results`] writes. [`log`]
//! and [`modules`] serve every stage. All unsafe code and raw syscalls
//! live in [`sys`]; everything else is safe.
//! No module imports one that imports it back
//! (`bench-core/tests/module_graph.rs`).
#![deny(unsafe_code)]

pub mod args;
pub mod boot;
pub mod cli;
pub mod disks;
pub mod log;
pub mod modules;
pub mod net;
pub mod plan;
pub mod results;
pub mod run;
pub mod safety;
pub mod stacks;
pub mod sys;
pub mod sysfs;
#[cfg(test)]
mod testutil;
