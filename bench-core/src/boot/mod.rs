//! The contract PID 1 and the host tools share: the kernel command line's keys ([`cmdline`]), the initramfs layout ([`initramfs`]) and the boot stick's ([`stick`]).

pub mod cmdline;
pub mod initramfs;
pub mod stick;
