//! bootbench-qemu: boot bootbench in QEMU with virtual disks that carry
//! identities (serial, model, rotation rate), throttles and faults; capture
//! the serial console with a timeout; cut the result documents out of it and
//! copy the result files off the USB stick image.
//!
//! The command lines are built by small pure functions ([`cmdline`]), tested
//! without starting QEMU; [`run`] does the side effects.

pub mod chipset;
pub mod cli;
pub mod cmdline;
pub mod disk;
pub mod net;
pub mod numa;
pub mod pcap;
pub mod run;
pub mod tpm;
/// The stick image from the host side (bootbench-image's, which `flash` uses too).
pub use bootbench_image::stick;
