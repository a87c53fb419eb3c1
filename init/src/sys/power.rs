//! reboot(2): power off, restart, halt; and the time since boot.

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
    let cmd = match action {
        Action::PowerOff => libc::LINUX_REBOOT_CMD_POWER_OFF,
        Action::Restart => libc::LINUX_REBOOT_CMD_RESTART,
        Action::Halt => libc::LINUX_REBOOT_CMD_HALT,
    };
    // SAFETY: reboot(2) with one of the three documented commands takes no
    // pointer; it either does not return or fails with an errno.
    unsafe { libc::reboot(cmd) };
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Sync and power off at once, never returning, without allocating (for a
/// panic in PID 1, whose exit would panic the kernel): sync(2), then
/// reboot(2) POWER_OFF, then pause forever if even that fails.
pub fn emergency_power_off() -> ! {
    // SAFETY: sync(2) and reboot(2) with a documented command take no
    // pointer; pause(2) takes none and only returns on a signal.
    unsafe {
        libc::sync();
        libc::reboot(libc::LINUX_REBOOT_CMD_POWER_OFF);
        loop {
            libc::pause();
        }
    }
}

/// CLOCK_BOOTTIME in nanoseconds: time since the kernel started, suspend
/// included (0 if the clock cannot be read).
pub fn boottime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec owned by this frame; the
    // kernel writes exactly one timespec there.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    if r != 0 {
        return 0;
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}
