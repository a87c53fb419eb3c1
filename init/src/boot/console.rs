//! Making file descriptors 0, 1 and 2 the console.

use std::os::fd::{AsRawFd, IntoRawFd};
use std::os::unix::fs::FileTypeExt;

use nix::errno::Errno;
use nix::sys::stat::{fstat, major, minor, SFlag};

/// True when `fd` is closed, or is /dev/null (character device 1:3), as std's
/// start-up code leaves a closed standard descriptor when /dev/null exists.
fn needs_console(fd: i32) -> bool {
    let Ok(st) = fstat(fd) else {
        return true;
    };
    let is_chr = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFCHR;
    is_chr && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3
}

/// Open `path` (normally /dev/console) and put it on each of the descriptors
/// 0, 1, 2 that is closed or /dev/null. Returns how many were replaced, or
/// the errno of the open or dup2.
pub fn ensure_std_fds(path: &str) -> Result<u32, Errno> {
    let missing: Vec<i32> = (0..3).filter(|&fd| needs_console(fd)).collect();
    if missing.is_empty() {
        return Ok(0);
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))?;
    if !f.metadata().map(|m| m.file_type().is_char_device()).unwrap_or(false) {
        return Err(Errno::ENOTTY);
    }
    let src = f.as_raw_fd();
    let mut n = 0;
    for fd in missing {
        if fd == src {
            n += 1;
            continue;
        }
        // `fd` is 0, 1 or 2, which no Rust object owns exclusively (std's
        // Stdin/Stdout/Stderr use them by number): replacing it invalidates
        // nothing. `src` is open, owned by `f`.
        nix::unistd::dup2(src, fd)?;
        n += 1;
    }
    if src <= 2 {
        // The open itself landed on a standard descriptor: keep it open.
        let _ = f.into_raw_fd();
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_and_null_descriptors_need_the_console() {
        let null = std::fs::File::open("/dev/null").unwrap();
        assert!(needs_console(null.as_raw_fd()));
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        assert!(!needs_console(file.as_raw_fd()));
        // Far above any open descriptor (a closed low one could be reused by a parallel test).
        assert!(needs_console(i32::MAX));
    }
}
