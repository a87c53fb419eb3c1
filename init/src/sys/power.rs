//! reboot(2): power off, restart, halt; and the time since boot.

use nix::sys::reboot::RebootMode;
use nix::time::{clock_gettime, ClockId};

/// What reboot(2) is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// LINUX_REBOOT_CMD_POWER_OFF.
    PowerOff,
    /// LINUX_REBOOT_CMD_RESTART.
    Restart,
    /// LINUX_REBOOT_CMD_HALT.
    Halt,
}

/// Call reboot(2). Returns only on failure, with the positive errno (EPERM
/// without CAP_SYS_BOOT, so never reached as PID 1 in the initramfs).
pub fn reboot(action: Action) -> i32 {
    let mode = match action {
        Action::PowerOff => RebootMode::RB_POWER_OFF,
        Action::Restart => RebootMode::RB_AUTOBOOT,
        Action::Halt => RebootMode::RB_HALT_SYSTEM,
    };
    let Err(errno) = nix::sys::reboot::reboot(mode);
    errno as i32
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

/// CLOCK_BOOTTIME in nanoseconds: time since the kernel started, suspend
/// included (0 if the clock cannot be read).
pub fn boottime_ns() -> u64 {
    let Ok(ts) = clock_gettime(ClockId::CLOCK_BOOTTIME) else {
        return 0;
    };
    let secs = u64::try_from(ts.tv_sec()).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec()).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
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
