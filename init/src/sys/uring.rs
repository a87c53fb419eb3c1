//! An io_uring of `depth` slots, each owning one aligned buffer, over one
//! open file: the engine for more than one request in flight.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use io_uring::{opcode, squeue, types, IoUring};

use super::buf::AlignedBuf;

/// What one slot's request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingOp {
    /// Read into the slot's buffer.
    Read,
    /// Write from the slot's buffer.
    Write,
    /// fdatasync, ordered after every request submitted before it (IO_DRAIN),
    /// so it covers all earlier writes as `fdatasync(2)` after them would.
    Fsync,
}

/// A ring with one read buffer per slot and, when opened for writing, one
/// write buffer per slot besides (so a mixed workload never writes back what
/// it read: write buffers keep the contents the caller put in them).
///
/// # Invariants
/// - `busy.len() == depth`; `bufs.len()` is `depth` (read buffers, index =
///   slot) or `2 * depth` (write buffer of slot `s` at `depth + s`), and
///   fits in a u16 (registered-buffer index); `bufs` is never resized or
///   reallocated-into after `new`, so each buffer's address is stable (and
///   the bytes live on the heap, so moving the `Ring` does not move them).
/// - `busy[s]` is true from the push of a request in slot `s` until its
///   completion has been taken from the completion queue; while it is true
///   the kernel may access slot `s`'s buffers and no Rust reference to them
///   is handed out.
/// - `in_flight` is the number of true entries in `busy`.
/// - `ring` is declared before `bufs`: it is dropped (and its registered
///   buffers released) first; `Drop` waits for in-flight requests before that.
pub struct Ring {
    ring: IoUring,
    bufs: Vec<AlignedBuf>,
    busy: Vec<bool>,
    in_flight: usize,
    fixed: bool,
    file: File,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("depth", &self.bufs.len())
            .field("in_flight", &self.in_flight)
            .field("fixed", &self.fixed)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl Ring {
    /// A ring of `depth` entries over `file`, with `depth` buffers of at
    /// least `buf_len` bytes each, and as many write buffers if `write_bufs`.
    /// The buffers are registered with the kernel (READ_FIXED/WRITE_FIXED, as
    /// fio's `fixedbufs`) when it allows, plain otherwise.
    pub fn new(file: File, depth: u32, buf_len: usize, write_bufs: bool) -> io::Result<Ring> {
        let einval = || io::Error::from_raw_os_error(libc::EINVAL);
        let slots = usize::try_from(depth).map_err(|_| einval())?;
        let nbufs = if write_bufs {
            slots.checked_mul(2).ok_or_else(einval)?
        } else {
            slots
        };
        if slots == 0 || u16::try_from(nbufs).is_err() {
            return Err(einval());
        }
        let ring = IoUring::new(depth)?;
        let mut bufs = Vec::with_capacity(nbufs);
        for _ in 0..nbufs {
            bufs.push(AlignedBuf::new(buf_len).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?);
        }
        let iovecs: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: each iovec describes one whole buffer in `bufs`, which the
        // returned Ring owns; the ring (and so the registration) is dropped
        // before the buffers (field order), and the buffers are never freed
        // or moved while the ring exists.
        let fixed = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        Ok(Ring {
            ring,
            bufs,
            busy: vec![false; slots],
            in_flight: 0,
            fixed,
            file,
        })
    }

    /// Slots.
    pub fn depth(&self) -> usize {
        self.busy.len()
    }

    /// Requests pushed and not yet reaped.
    #[cfg(test)]
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Slot `slot`'s read buffer, if the slot exists and is not in flight
    /// (what the last read into it brought; the engine's tests check it).
    #[cfg(test)]
    pub fn buf_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        if *self.busy.get(slot)? {
            return None;
        }
        Some(self.bufs[slot].as_mut_slice())
    }

    /// Slot `slot`'s read buffer, if the slot exists and is not in flight
    /// (after a read's completion: the data it read).
    pub fn buf(&self, slot: usize) -> Option<&[u8]> {
        if *self.busy.get(slot)? {
            return None;
        }
        Some(self.bufs[slot].as_slice())
    }

    /// Slot `slot`'s write buffer, if there are write buffers, the slot
    /// exists and is not in flight.
    pub fn write_buf_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        if *self.busy.get(slot)? {
            return None;
        }
        let i = self.depth() + slot;
        self.bufs.get_mut(i).map(AlignedBuf::as_mut_slice)
    }

    /// The buffer a request of `op` in `slot` uses: the write buffer for
    /// writes when there is one, else the read buffer.
    fn buf_index(&self, slot: usize, op: RingOp) -> usize {
        let w = self.depth() + slot;
        if op == RingOp::Write && w < self.bufs.len() {
            w
        } else {
            slot
        }
    }

    /// Queue a request in `slot` (submitted to the kernel by the next
    /// [`Ring::wait`]). EINVAL if the slot does not exist, is in flight, or
    /// `len` exceeds its buffer.
    pub fn push(&mut self, slot: usize, op: RingOp, offset: u64, len: u32) -> Result<(), i32> {
        let free = self.busy.get(slot).is_some_and(|b| !b);
        if !free {
            return Err(libc::EINVAL);
        }
        let b = self.buf_index(slot, op);
        let len_fits = usize::try_from(len).is_ok_and(|l| l <= self.bufs[b].len());
        if op != RingOp::Fsync && !len_fits {
            return Err(libc::EINVAL);
        }
        let index = u16::try_from(b).map_err(|_| libc::EINVAL)?;
        let tag = u64::try_from(slot).map_err(|_| libc::EINVAL)?;
        let fd = types::Fd(self.file.as_raw_fd());
        let ptr = self.bufs[b].as_mut_ptr();
        let entry = match (op, self.fixed) {
            (RingOp::Read, true) => opcode::ReadFixed::new(fd, ptr, len, index).offset(offset).build(),
            (RingOp::Read, false) => opcode::Read::new(fd, ptr, len).offset(offset).build(),
            (RingOp::Write, true) => opcode::WriteFixed::new(fd, ptr, len, index).offset(offset).build(),
            (RingOp::Write, false) => opcode::Write::new(fd, ptr, len).offset(offset).build(),
            (RingOp::Fsync, _) => opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()
                .flags(squeue::Flags::IO_DRAIN),
        }
        .user_data(tag);
        loop {
            // SAFETY: the entry's buffer is `bufs[b]`, `len` bytes of which
            // fit in it (checked above); the Ring owns that buffer, does not
            // move or free it while the ring exists, and marks the slot busy
            // below so it hands out no reference to it and accepts no other
            // request in it until this request's completion is reaped (the
            // buffer belongs to this slot alone: `b` is `slot` or
            // `depth + slot`); `Drop`
            // waits for every in-flight completion (or leaks the buffers)
            // before they are freed. The fd belongs to `self.file`, which
            // lives as long as the ring.
            let pushed = unsafe { self.ring.submission().push(&entry) };
            if pushed.is_ok() {
                break;
            }
            // Full submission queue (cannot happen with at most `depth`
            // requests on a ring of `depth` entries, but be correct anyway):
            // hand what is queued to the kernel and retry.
            self.submit()?;
        }
        self.busy[slot] = true;
        self.in_flight += 1;
        Ok(())
    }

    fn submit(&mut self) -> Result<(), i32> {
        loop {
            match self.ring.submit() {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                r => return r.map(drop).map_err(|e| super::file::errno_of(&e)),
            }
        }
    }

    /// Submit what is queued without waiting for any completion (fio's
    /// `fio_ioring_commit`); `wait` submits anything still queued.
    pub fn commit(&mut self) -> Result<(), i32> {
        loop {
            match self.ring.submit() {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                r => break r.map(drop).map_err(|e| super::file::errno_of(&e)),
            }
        }
    }

    /// Submit what is queued, wait until at least `min` requests have
    /// completed (fewer if fewer are in flight), and hand every available
    /// completion to `done(slot, result)`, `result` being bytes transferred
    /// (>= 0) or the negated errno, as the kernel reports it.
    pub fn wait(&mut self, min: usize, mut done: impl FnMut(usize, i32)) -> Result<(), i32> {
        let want = min.min(self.in_flight);
        loop {
            match self.ring.submit_and_wait(want) {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                r => break r.map(drop).map_err(|e| super::file::errno_of(&e))?,
            }
        }
        for cqe in self.ring.completion() {
            let Ok(slot) = usize::try_from(cqe.user_data()) else {
                continue;
            };
            if let Some(b) = self.busy.get_mut(slot).filter(|b| **b) {
                *b = false;
                self.in_flight -= 1;
                done(slot, cqe.result());
            }
        }
        Ok(())
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // The kernel may still write into buffers of in-flight requests: wait
        // for all of them before the buffers are freed.
        while self.in_flight > 0 {
            if self.wait(self.in_flight, |_, _| {}).is_err() {
                // The ring can no longer tell us when the kernel is done with
                // the buffers: leak them rather than free memory it may write.
                std::mem::forget(std::mem::take(&mut self.bufs));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_file(name: &str, bytes: &[u8]) -> (std::path::PathBuf, File) {
        let path = std::env::temp_dir().join(format!("bootbench-uring-{}-{name}", std::process::id()));
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(bytes))
            .expect("create");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open");
        (path, f)
    }

    #[test]
    fn reads_writes_and_syncs_through_slots() {
        let data: Vec<u8> = (0..16384u32).map(|i| u8::try_from(i % 253).unwrap_or(0)).collect();
        let (path, f) = temp_file("rw", &data);
        let mut r = Ring::new(f, 4, 4096, true).expect("ring");
        assert_eq!(r.depth(), 4);
        r.push(0, RingOp::Read, 4096, 4096).expect("push read");
        r.buf_mut(1).expect("free").fill(0x11);
        r.write_buf_mut(1).expect("free").fill(0xAB);
        r.push(1, RingOp::Write, 8192, 4096).expect("push write");
        assert!(r.buf_mut(1).is_none(), "busy slot hands out no buffer");
        assert!(r.write_buf_mut(1).is_none(), "busy slot hands out no buffer");
        assert_eq!(r.push(1, RingOp::Read, 0, 512), Err(libc::EINVAL), "busy slot refused");
        assert_eq!(
            r.push(2, RingOp::Read, 0, 8192),
            Err(libc::EINVAL),
            "too long for the buffer"
        );
        let mut got = Vec::new();
        while r.in_flight() > 0 {
            r.wait(1, |s, res| got.push((s, res))).expect("wait");
        }
        got.sort_unstable();
        assert_eq!(got, vec![(0, 4096), (1, 4096)]);
        assert_eq!(r.buf_mut(0).expect("free")[..], data[4096..8192]);
        // A read into slot 1 leaves its write buffer as it was.
        r.push(1, RingOp::Read, 0, 4096).expect("push read");
        r.wait(1, |_, _| {}).expect("wait");
        assert_eq!(r.buf_mut(1).expect("free")[..], data[..4096]);
        assert!(r.write_buf_mut(1).expect("free").iter().all(|&b| b == 0xAB));
        r.push(3, RingOp::Fsync, 0, 0).expect("push fsync");
        let mut got = Vec::new();
        r.wait(1, |s, res| got.push((s, res))).expect("wait");
        assert_eq!(got, vec![(3, 0)]);
        drop(r);
        let after = std::fs::read(&path).expect("read back");
        std::fs::remove_file(&path).ok();
        assert!(after[8192..12288].iter().all(|&b| b == 0xAB));
        assert_eq!(after[..8192], data[..8192]);
    }

    #[test]
    fn drop_with_requests_in_flight_waits() {
        let (path, f) = temp_file("drop", &[1u8; 65536]);
        let mut r = Ring::new(f, 8, 8192, false).expect("ring");
        assert!(r.write_buf_mut(0).is_none(), "no write buffers asked for");
        for s in 0..8 {
            r.push(s, RingOp::Read, u64::try_from(s).unwrap_or(0) * 8192, 8192)
                .expect("push");
        }
        r.wait(0, |_, _| {}).expect("submit");
        drop(r);
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn errors_come_back_negated() {
        let (path, f) = temp_file("err", &[0u8; 4096]);
        drop(f);
        // Opened read-only: a write fails with EBADF in its completion.
        let ro = File::open(&path).expect("open ro");
        let mut r = Ring::new(ro, 2, 4096, false).expect("ring");
        r.push(0, RingOp::Write, 0, 4096).expect("push");
        let mut got = Vec::new();
        r.wait(1, |s, res| got.push((s, res))).expect("wait");
        std::fs::remove_file(&path).ok();
        assert_eq!(got, vec![(0, -libc::EBADF)]);
    }
}
