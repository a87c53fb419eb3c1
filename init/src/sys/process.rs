//! Processes for PID 1's supervisor: a pipe, fork(2), waiting for and
//! killing the worker, and poll(2) on the pipe. Errors are positive errnos.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// A pipe, both ends close-on-exec: (read end, write end).
pub fn pipe() -> Result<(File, File), i32> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes exactly two ints into `fds`, a live, writable
    // array of two c_ints on this frame.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(errno());
    }
    // SAFETY: on success both descriptors are new and open, owned by no
    // one else: each File takes sole ownership of one.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

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
pub fn fork_single_threaded() -> Result<Forked, i32> {
    // SAFETY: the caller guarantees that this process has one thread, so no
    // lock (the allocator's, stdio's) can be held by another thread at the
    // fork and the child's state is consistent.
    match unsafe { libc::fork() } {
        -1 => Err(errno()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
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
/// running. EINTR is retried.
pub fn wait(pid: libc::pid_t, block: bool) -> Result<Option<Exit>, i32> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waitpid writes one int into `status`, a live c_int on this
        // frame; no other memory is touched.
        let r = unsafe { libc::waitpid(pid, &mut status, if block { 0 } else { libc::WNOHANG }) };
        if r == -1 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
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

/// SIGKILL to `pid`.
pub fn kill_hard(pid: libc::pid_t) -> Result<(), i32> {
    // SAFETY: kill(2) takes no pointer.
    if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// poll(2) for input (or hang-up) on `f`, at most `timeout_ms`
/// milliseconds: true if there is something to read (or the writer is
/// gone), false on timeout. EINTR counts as a timeout.
pub fn readable(f: &File, timeout_ms: i32) -> Result<bool, i32> {
    let mut p = libc::pollfd {
        fd: f.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll reads and writes exactly one pollfd, `p`, which lives on
    // this frame; `f` keeps the descriptor open for the call.
    match unsafe { libc::poll(&mut p, 1, timeout_ms) } {
        -1 if errno() == libc::EINTR => Ok(false),
        -1 => Err(errno()),
        0 => Ok(false),
        _ => Ok(true),
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
        assert_eq!(signal_name(libc::SIGABRT), "signal 6 (SIGABRT)");
        let child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        assert_eq!(wait(pid, false), Ok(None), "still running");
        kill_hard(pid).expect("kill");
        assert_eq!(wait(pid, true), Ok(Some(Exit::Signal(libc::SIGKILL))));
    }
}
