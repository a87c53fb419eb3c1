//! Bytes read at an offset from a device, for the metadata readers
//! ([`super::md`], [`super::lvm`], [`super::luks`]): a disk opened
//! read-only, or (in [`super::holds`]) an md array seen through its members.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Something bytes can be read from at an offset: a disk, or an md array
/// seen through its members.
pub trait Bytes {
    fn size(&self) -> u64;
    fn read_at(&self, buf: &mut [u8], at: u64) -> Result<(), String>;
}

/// A block device opened read-only.
#[derive(Debug)]
pub struct Device {
    pub file: File,
    pub size: u64,
}

impl Device {
    /// `path` (of `size` bytes) opened read-only for its metadata, without
    /// readahead (POSIX_FADV_RANDOM): each read asks the disk for the pages
    /// it touches only, so a slow or dying disk is asked for a few KiB
    /// rather than the default readahead's 128 KiB per read.
    pub fn open(path: &str, size: u64) -> std::io::Result<Device> {
        use std::os::fd::AsRawFd;
        let file = super::file::open(path, false, false)?;
        // Advice only: a device that takes none is still read correctly.
        let _ = nix::fcntl::posix_fadvise(
            file.as_raw_fd(),
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_RANDOM,
        );
        Ok(Device { file, size })
    }
}

impl Bytes for Device {
    fn size(&self) -> u64 {
        self.size
    }
    fn read_at(&self, buf: &mut [u8], at: u64) -> Result<(), String> {
        if at.saturating_add(buf.len() as u64) > self.size {
            return Err(format!("a read at byte {at} past the end ({} B)", self.size));
        }
        self.file
            .read_exact_at(buf, at)
            .map_err(|e| format!("a read at byte {at}: {e}"))
    }
}

/// Bytes in memory: a device image for the metadata readers' tests.
#[cfg(test)]
#[derive(Debug)]
pub struct Mem(pub Vec<u8>);

#[cfg(test)]
impl Bytes for Mem {
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, buf: &mut [u8], at: u64) -> Result<(), String> {
        let at = usize::try_from(at).unwrap_or(usize::MAX);
        buf.copy_from_slice(self.0.get(at..at.saturating_add(buf.len())).ok_or("past the end")?);
        Ok(())
    }
}
