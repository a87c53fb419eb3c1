//! bench-core: the pure benchmark engine of bootbench.
//!
//! No syscalls and no unsafe code. Its folders are the stages of a run,
//! each importing only those listed before it:
//!
//! - [`vocab`]: the shared words (units, sizes, names, stack kinds, CPU
//!   sets, URLs as shown, console-safe text);
//! - [`io`] and [`spec`]: the device side (clocks, queues, targets) and
//!   what a test is;
//! - [`document`]: the versioned result document and the frame format;
//! - [`engine`]: workloads expanded into steps, the runner that drives any
//!   [`io::IoQueue`] with any [`io::Clock`], fio-grade figures, the
//!   simulated disk (feature `sim`);
//! - [`passes`]: the whole-disk passes (surface scan, burn-in,
//!   preconditioning) on one engine;
//! - [`device`]: what disks and the kernel say, parsed (health,
//!   self-tests, capacity, erase support, the kernel's log, signatures,
//!   GPT);
//! - [`verdict`]: the analysis, the acceptance verdict and the text table;
//! - [`boot`]: the contract PID 1 and the host tools share (the kernel
//!   command line's keys, the initramfs layout, the boot stick).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod boot;
pub mod device;
pub mod document;
pub mod engine;
pub mod io;
pub mod passes;
pub mod spec;
pub mod verdict;
pub mod vocab;
