//! Processes for PID 1's supervisor: a pipe, killing the worker, and
//! poll(2) on the pipe, over nix; fork(2) and waitpid(2) are in
//! `sys/process.rs` (re-exported here).

use std::fs::File;
use std::os::fd::AsFd;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::Signal;
use nix::unistd::Pid;

pub use crate::sys::process::{fork_single_threaded, reap_others, wait, Exit, Forked};

/// A pipe, both ends close-on-exec: (read end, write end).
pub fn pipe() -> Result<(File, File), Errno> {
    let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    Ok((File::from(r), File::from(w)))
}

/// SIGKILL to `pid`.
pub fn kill_hard(pid: libc::pid_t) -> Result<(), Errno> {
    nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL)
}

/// poll(2) for input (or hang-up) on `f`, at most `timeout_ms`
/// milliseconds: true if there is something to read (or the writer is
/// gone), false on timeout. EINTR counts as a timeout.
pub fn readable(f: &File, timeout_ms: i32) -> Result<bool, Errno> {
    let mut fds = [PollFd::new(f.as_fd(), PollFlags::POLLIN)];
    // A negative timeout is "wait forever", as poll(2) takes it.
    let timeout = PollTimeout::try_from(timeout_ms).unwrap_or(PollTimeout::NONE);
    match poll(&mut fds, timeout) {
        Err(Errno::EINTR) | Ok(0) => Ok(false),
        Err(e) => Err(e),
        Ok(_) => Ok(true),
    }
}

/// The name of a signal, for messages (`SIGABRT`), or its number.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGPIPE => "SIGPIPE",
        _ => return format!("signal {sig}"),
    };
    format!("signal {sig} ({name})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_pipe_carries_bytes_and_says_when_the_writer_is_gone() {
        let (mut r, mut w) = pipe().expect("pipe");
        assert_eq!(readable(&r, 0), Ok(false), "nothing yet");
        w.write_all(b"abc").expect("write");
        assert_eq!(readable(&r, 1000), Ok(true));
        let mut buf = [0u8; 3];
        r.read_exact(&mut buf).expect("read");
        assert_eq!(&buf, b"abc");
        drop(w);
        assert_eq!(readable(&r, 1000), Ok(true), "hang-up is readable");
        assert_eq!(r.read(&mut buf).expect("read"), 0, "EOF");
    }

    #[test]
    #[allow(clippy::zombie_processes)] // reaped by `wait`
    fn a_killed_worker_ends_by_sigkill() {
        let child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        assert_eq!(wait(pid, false), Ok(None), "still running");
        kill_hard(pid).expect("kill");
        assert_eq!(wait(pid, true), Ok(Some(Exit::Signal(libc::SIGKILL))));
        assert_eq!(signal_name(libc::SIGABRT), "signal 6 (SIGABRT)");
        assert_eq!(signal_name(40), "signal 40");
    }
}
