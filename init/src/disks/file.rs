//! Opening a target (a block device or a regular file) for a benchmark,
//! an identity check or a health read: never blocking in open(2), never
//! creating or truncating, and refusing anything else before a byte moves.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

/// What a file of type `ft` is, in words: what an error says a path names
/// when it is no target.
pub fn kind_name(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_block_device() {
        "block device"
    } else if ft.is_file() {
        "regular file"
    } else if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_char_device() {
        "character device"
    } else if ft.is_dir() {
        "directory"
    } else if ft.is_symlink() {
        "symbolic link"
    } else {
        "file of unknown type"
    }
}

/// The error of [`open`] for a path that is neither a block device nor a
/// regular file (`InvalidInput`, saying what it is).
fn not_a_target(ft: std::fs::FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("a {}, not a block device or a regular file", kind_name(ft)),
    )
}

/// Open a file a user names to be read whole (a config, a baseline)
/// read-only, never blocking in open(2) (O_NONBLOCK, which a regular file's
/// reads ignore): anything but a regular file (a FIFO that would wait for
/// a writer, a device, a directory) is refused with `InvalidInput` saying
/// what it is.
pub fn open_regular(path: &std::path::Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let ft = f.metadata()?.file_type();
    if !ft.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a {}, not a regular file", kind_name(ft)),
        ));
    }
    Ok(f)
}

/// Open with `o` (which sets the access mode) and `flags`, never blocking
/// in open(2): O_NONBLOCK for the open itself (a FIFO with no writer would
/// wait forever, a tty for its carrier), then the descriptor must be a
/// block device or a regular file, and O_NONBLOCK is cleared again (with
/// it, io_uring would hand EAGAIN back instead of waiting on the device).
fn open_target(path: &str, mut o: OpenOptions, flags: i32) -> io::Result<File> {
    let f = o.custom_flags(flags | libc::O_NONBLOCK).open(path)?;
    let ft = f.metadata()?.file_type();
    if !(ft.is_file() || std::os::unix::fs::FileTypeExt::is_block_device(&ft)) {
        return Err(not_a_target(ft));
    }
    let fl = nix::fcntl::fcntl(f.as_raw_fd(), nix::fcntl::FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let fl = nix::fcntl::OFlag::from_bits_truncate(fl) & !nix::fcntl::OFlag::O_NONBLOCK;
    nix::fcntl::fcntl(f.as_raw_fd(), nix::fcntl::FcntlArg::F_SETFL(fl)).map_err(io::Error::from)?;
    Ok(f)
}

/// Open the target `path` (a block device or a regular file) for reading,
/// or for reading and writing when `write`, with O_DIRECT when `direct`.
/// Never creates or truncates anything, and never blocks: anything else
/// (a FIFO, a socket, a character device, a directory) is refused with
/// `InvalidInput` before a byte moves.
pub fn open(path: &str, write: bool, direct: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(write);
    let mut flags = libc::O_CLOEXEC;
    if direct {
        flags |= libc::O_DIRECT;
    }
    open_target(path, o, flags)
}

/// Open the block device `path` read-only with O_EXCL: an exclusive claim,
/// refused with EBUSY while the device is mounted, part of an md array or a
/// device-mapper table, or claimed by another exclusive opener. Ordinary
/// opens are still allowed while the claim is held. As [`open`], never
/// blocks and refuses what is no target.
pub fn open_exclusive(path: &str) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    open_target(path, o, libc::O_CLOEXEC | libc::O_EXCL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    /// `open` in a thread: its result, or `None` if it did not return
    /// within 10 s (it blocked: what a FIFO without a writer does to a
    /// plain open(2)).
    fn open_within(path: &str, exclusive: bool) -> Option<io::Result<File>> {
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.to_string();
        std::thread::spawn(move || {
            let r = if exclusive {
                open_exclusive(&p)
            } else {
                open(&p, false, false)
            };
            let _ = tx.send(r);
        });
        rx.recv_timeout(std::time::Duration::from_secs(10)).ok()
    }

    /// A FIFO, a socket, a character device and a directory are refused
    /// at once, saying what they are; open(2) never waits on a FIFO for a
    /// writer. A regular file opens, and its descriptor is left blocking.
    #[test]
    fn only_block_devices_and_regular_files_open_and_nothing_blocks() {
        let d = TempDir::new("open-kinds");
        let fifo = d.0.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
        let sock = d.0.join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).expect("bind");
        let dir = d.0.join("dir");
        std::fs::create_dir(&dir).expect("mkdir");
        for exclusive in [false, true] {
            for (p, kind) in [
                (fifo.to_str().unwrap(), "a FIFO"),
                (sock.to_str().unwrap(), "a socket"),
                ("/dev/null", "a character device"),
                (dir.to_str().unwrap(), "a directory"),
            ] {
                match open_within(p, exclusive) {
                    None => panic!("{p}: open blocked (exclusive {exclusive})"),
                    Some(Ok(_)) => panic!("{p}: opened (exclusive {exclusive})"),
                    Some(Err(e)) => {
                        // A socket cannot be opened at all (ENXIO): the
                        // kernel's refusal is as good.
                        let m = e.to_string();
                        assert!(
                            m.contains(&format!("{kind}, not a block device or a regular file"))
                                || (kind == "a socket" && e.raw_os_error() == Some(libc::ENXIO)),
                            "{p}: {m}"
                        );
                    }
                }
            }
        }
        let file = d.0.join("file");
        std::fs::write(&file, [0u8; 4096]).expect("write");
        let f = open_within(file.to_str().unwrap(), false)
            .expect("returned")
            .expect("a regular file opens");
        let fl = nix::fcntl::fcntl(f.as_raw_fd(), nix::fcntl::FcntlArg::F_GETFL).expect("F_GETFL");
        assert_eq!(fl & libc::O_NONBLOCK, 0, "O_NONBLOCK cleared");
    }
}
