//! The contract PID 1 and the host tools share: the kernel command line's keys ([`cmdline`]), the initramfs layout ([`initramfs`]), the boot stick's ([`stick`]), and the measured boot's event log ([`eventlog`]).

pub mod cmdline;
pub mod eventlog;
pub mod initramfs;
pub mod stick;
