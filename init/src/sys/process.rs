//! Processes for PID 1's supervisor: fork(2) and waitpid(2). The safe
//! parts (the pipe, the kill, poll(2) on the pipe) are in
//! `boot/process.rs`.

use nix::errno::Errno;
use nix::unistd::ForkResult;

/// Which side of a fork this process is.
#[derive(Debug, PartialEq, Eq)]
pub enum Forked {
    /// The parent, with the child's pid.
    Parent(libc::pid_t),
    /// The child.
    Child,
}

/// fork(2).
///
/// The child is a copy of a process that must have had one thread only
/// (PID 1 forks before it starts any): then the child may allocate, lock
/// and run Rust code freely, as its only thread holds no lock a vanished
/// thread held. Call it only from a single-threaded process.
pub fn fork_single_threaded() -> Result<Forked, Errno> {
    // SAFETY: fork is safe to call when the process has one thread, which
    // the caller guarantees: then no lock (the allocator's, stdio's) can be
    // held by another thread at the fork, and the child's state is
    // consistent for any code it runs.
    match unsafe { nix::unistd::fork() }? {
        ForkResult::Child => Ok(Forked::Child),
        ForkResult::Parent { child } => Ok(Forked::Parent(child.as_raw())),
    }
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// exit(2) with this status.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// waitpid(2) for `pid`: `Ok(None)` when `block` is false and it is still
/// running. EINTR is retried. Raw, not nix's `waitpid`: nix turns the
/// status of a child killed by a signal its `Signal` enum lacks (a
/// real-time signal) into EINVAL, and the number is wanted here.
pub fn wait(pid: libc::pid_t, block: bool) -> Result<Option<Exit>, Errno> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waitpid writes one int into `status`, a live c_int on this
        // frame; no other memory is touched.
        let r = unsafe { libc::waitpid(pid, &mut status, if block { 0 } else { libc::WNOHANG }) };
        match Errno::result(r) {
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        if r == 0 {
            return Ok(None);
        }
        return Ok(Some(if libc::WIFSIGNALED(status) {
            Exit::Signal(libc::WTERMSIG(status))
        } else {
            Exit::Code(libc::WEXITSTATUS(status))
        }));
    }
}

/// Reap any exited child without waiting (PID 1 adopts orphans).
pub fn reap_others() {
    let mut status: libc::c_int = 0;
    // SAFETY: as in `wait`; -1 means any child, WNOHANG never blocks.
    while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::zombie_processes)] // reaped by `wait`, the code under test
    fn exits_and_signals_are_told_apart() {
        let child = std::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .spawn()
            .expect("sh");
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        assert_eq!(wait(pid, true), Ok(Some(Exit::Code(3))));
        let child = std::process::Command::new("sh")
            .args(["-c", "kill -ABRT $$"])
            .spawn()
            .expect("sh");
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        assert_eq!(wait(pid, true), Ok(Some(Exit::Signal(libc::SIGABRT))));
        // A real-time signal, which nix's Signal has no name for.
        let child = std::process::Command::new("sh")
            .args(["-c", "kill -35 $$"])
            .spawn()
            .expect("sh");
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        assert!(
            matches!(wait(pid, true), Ok(Some(Exit::Signal(35)))),
            "a real-time signal"
        );
        let child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        assert_eq!(wait(pid, false), Ok(None), "still running");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).expect("kill");
        assert_eq!(wait(pid, true), Ok(Some(Exit::Signal(libc::SIGKILL))));
    }
}
