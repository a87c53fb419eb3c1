//! The one place with unsafe code and raw syscalls: O_DIRECT files, aligned
//! buffers, block-device ioctls, io_uring, CPU affinity. Every unsafe block carries a
//! `// SAFETY:` comment naming the invariant it relies on.
#![allow(unsafe_code)]

pub mod blk;
pub mod buf;
pub mod console;
pub mod cpu;
pub mod dm;
pub mod file;
pub mod md;
pub mod mount;
pub mod net;
pub mod nvme;
pub mod power;
pub mod process;
pub mod serial;
pub mod sgio;
pub mod signal;
pub mod uring;
pub mod usb;
