//! The benchmark engine: workloads expanded into steps ([`plan`], [`profile`]), the [`runner`] that drives any queue, fio-grade figures ([`hist`], [`stats`]), fio's write buffers and verification ([`scramble`], [`verify`]) and the simulated disk ([`sim`], feature `sim`).

pub mod hist;
pub mod plan;
pub mod profile;
pub mod runner;
pub mod scramble;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
pub mod stats;
pub mod verify;
