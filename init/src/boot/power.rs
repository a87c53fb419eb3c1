//! reboot(2): power off, restart, halt, over nix; and the time since boot
//! (the log's clock, `log.rs`).

use nix::errno::Errno;
use nix::sys::reboot::RebootMode;

use crate::plan::OnFinish;

pub use crate::log::boottime_ns;

/// Call reboot(2) to do what `how` says (the config's `on_finish`).
/// Returns only on failure, with the errno (EPERM without CAP_SYS_BOOT, so
/// never reached as PID 1 in the initramfs).
pub fn reboot(how: OnFinish) -> Errno {
    let mode = match how {
        OnFinish::PowerOff => RebootMode::RB_POWER_OFF,
        OnFinish::Reboot => RebootMode::RB_AUTOBOOT,
        OnFinish::Halt => RebootMode::RB_HALT_SYSTEM,
    };
    let Err(errno) = nix::sys::reboot::reboot(mode);
    errno
}

/// Sync and power off at once, never returning, without allocating (for a
/// panic in PID 1, whose exit would panic the kernel): sync(2), then
/// reboot(2) POWER_OFF, then pause forever if even that fails.
pub fn emergency_power_off() -> ! {
    nix::unistd::sync();
    let _ = nix::sys::reboot::reboot(RebootMode::RB_POWER_OFF);
    loop {
        nix::unistd::pause();
    }
}

#[cfg(test)]
mod tests {
    use super::RebootMode;

    /// nix's modes are the LINUX_REBOOT_CMD_* commands that reboot(2) is given.
    #[test]
    fn reboot_modes_are_the_linux_commands() {
        assert_eq!(RebootMode::RB_POWER_OFF as i32, libc::LINUX_REBOOT_CMD_POWER_OFF);
        assert_eq!(RebootMode::RB_AUTOBOOT as i32, libc::LINUX_REBOOT_CMD_RESTART);
        assert_eq!(RebootMode::RB_HALT_SYSTEM as i32, libc::LINUX_REBOOT_CMD_HALT);
    }
}
