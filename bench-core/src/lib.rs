//! bench-core: the pure benchmark engine of bootbench.
//!
//! No syscalls and no unsafe code: workloads expand into steps
//! ([`plan`]), the [`runner`] drives any [`io::IoQueue`] with any
//! [`io::Clock`], [`hist`] and [`stats`] turn completions into fio-grade
//! figures, [`result`] is the versioned result document and [`table`] its
//! text rendering. [`stick`] is the boot stick's on-disk contract (its
//! label, config and result names) that PID 1 and the host tools share.
//! [`sim`] (feature `sim`) is a simulated disk with a
//! seek-time and zone-rate model and a deterministic clock.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod acceptance;
pub mod analysis;
pub mod burnin;
pub mod capacity;
pub mod cmdline;
pub mod console;
pub mod cpus;
pub mod erase;
pub mod frame;
pub mod glob;
pub mod gpt;
pub mod health;
pub mod hist;
pub mod initramfs;
pub mod io;
pub mod kmsg;
pub mod names;
pub mod plan;
pub mod profile;
pub mod result;
pub mod rng;
pub mod runner;
pub mod scan;
pub mod scramble;
pub mod selftest;
pub mod signatures;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
pub mod size;
pub mod spec;
pub mod stack;
pub mod stats;
pub mod steady;
pub mod stick;
mod sweep;
pub mod table;
pub mod units;
pub mod url;
pub mod verify;
