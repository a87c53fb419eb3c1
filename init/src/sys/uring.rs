//! An io_uring of `depth` slots, each owning one aligned buffer, over one
//! open file: the engine for more than one request in flight, and for
//! fio's io_uring options (`hipri`, `sqthread_poll`) at any depth.
//!
//! The ring is set up as fio's `engines/io_uring.c` does
//! (`fio_ioring_queue_init`, `fio_ioring_post_init`): IORING_SETUP_CQSIZE
//! (a completion queue of `depth`), COOP_TASKRUN, SINGLE_ISSUER and
//! DEFER_TASKRUN, plus IOPOLL for `hipri` and SQPOLL (SQ_AFF with a CPU) for
//! `sqthread_poll`; when the kernel refuses the set (EINVAL) it drops, as
//! fio, SINGLE_ISSUER with DEFER_TASKRUN, then COOP_TASKRUN, then CQSIZE,
//! and tries again. The ring's own descriptor is registered
//! (IORING_REGISTER_RING_FDS), every io_uring_enter carries NO_IOWAIT where
//! the kernel has it (IORING_FEAT_NO_IOWAIT), the file is registered
//! (IOSQE_FIXED_FILE, fio's `registerfiles`) and so are the buffers
//! (READ_FIXED/WRITE_FIXED, fio's `fixedbufs`), each when the kernel allows.
//! [`RingSetup`] records what it got.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use io_uring::{opcode, squeue, types, IoUring};
use nix::errno::Errno;

use super::buf::AlignedBuf;

/// `IORING_SETUP_*` (include/uapi/linux/io_uring.h).
pub mod setup {
    /// Polled completions.
    pub const IOPOLL: u32 = 1 << 0;
    /// A kernel thread polls the submission queue.
    pub const SQPOLL: u32 = 1 << 1;
    /// That thread bound to `sq_thread_cpu`.
    pub const SQ_AFF: u32 = 1 << 2;
    /// The completion queue sized by `cq_entries`.
    pub const CQSIZE: u32 = 1 << 3;
    /// No interrupting IPI to run completion task work.
    pub const COOP_TASKRUN: u32 = 1 << 8;
    /// One task submits.
    pub const SINGLE_ISSUER: u32 = 1 << 12;
    /// 128-byte submission entries (passthrough commands live in them).
    pub const SQE128: u32 = 1 << 10;
    /// 32-byte completion entries (passthrough results).
    pub const CQE32: u32 = 1 << 11;
    /// Completion task work runs only when the submitter waits (GETEVENTS).
    pub const DEFER_TASKRUN: u32 = 1 << 13;
    /// Every flag above with its uapi name, in bit order.
    pub const NAMES: [(u32, &str); 9] = [
        (IOPOLL, "IOPOLL"),
        (SQPOLL, "SQPOLL"),
        (SQ_AFF, "SQ_AFF"),
        (CQSIZE, "CQSIZE"),
        (COOP_TASKRUN, "COOP_TASKRUN"),
        (SQE128, "SQE128"),
        (CQE32, "CQE32"),
        (SINGLE_ISSUER, "SINGLE_ISSUER"),
        (DEFER_TASKRUN, "DEFER_TASKRUN"),
    ];

    /// The names of the flags in `bits`, in bit order.
    pub fn names(bits: u32) -> Vec<&'static str> {
        NAMES.iter().filter(|(b, _)| bits & b != 0).map(|(_, n)| *n).collect()
    }
}

/// `IORING_ENTER_*`.
const ENTER_GETEVENTS: u32 = 1 << 0;
const ENTER_SQ_WAKEUP: u32 = 1 << 1;
const ENTER_REGISTERED_RING: u32 = 1 << 4;
const ENTER_NO_IOWAIT: u32 = 1 << 7;
/// `IORING_REGISTER_RING_FDS`, `IORING_UNREGISTER_RING_FDS`.
const REGISTER_RING_FDS: u32 = 20;
const UNREGISTER_RING_FDS: u32 = 21;

/// With `sqthread_poll`, how long a wait spins on the completion queue
/// (fio's getevents loop never enters the kernel then) without a completion
/// before it sleeps in io_uring_enter instead: far longer than any request
/// of a sane device, so only a hung one stops keeping a CPU busy.
const SQPOLL_SPIN: Duration = Duration::from_secs(1);

/// What one slot's request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingOp {
    /// Read into the slot's buffer.
    Read,
    /// Write from the slot's buffer.
    Write,
    /// fdatasync, ordered after every request submitted before it (IO_DRAIN),
    /// so it covers all earlier writes as `fdatasync(2)` after them would.
    /// On a polled ring (IOPOLL), where the kernel refuses IORING_OP_FSYNC
    /// (EINVAL: it cannot be polled), every request before it is reaped
    /// first and `fdatasync(2)` is called, its result reaped as a completion.
    Fsync,
    /// fdatasync of `len` bytes at the offset only (IORING_OP_FSYNC with a
    /// range: `vfs_fsync_range`, that range's cached pages written back
    /// and the cache flushed), ordered as [`RingOp::Fsync`] (IO_DRAIN). No
    /// buffer: `len` is not bounded by one. On a polled ring it runs as
    /// [`fdatasync_range`] once every request before it is reaped.
    FsyncRange,
}

/// A one-entry ring for [`fdatasync_range`] where requests are otherwise
/// synchronous system calls (the psync engine): Linux has no ranged
/// fdatasync call, and io_uring's IORING_OP_FSYNC takes a range.
pub struct RangeSync {
    /// Boxed: a queue holds this beside a few buffers' worth of fields.
    ring: Box<IoUring>,
}

impl std::fmt::Debug for RangeSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangeSync").finish_non_exhaustive()
    }
}

impl RangeSync {
    /// The ring; the kernel's error where io_uring is missing or disabled.
    pub fn new() -> io::Result<RangeSync> {
        Ok(RangeSync {
            ring: Box::new(IoUring::new(1)?),
        })
    }

    /// fdatasync of `len` bytes at `offset` of `file`, waited for.
    fn sync(&mut self, file: &File, offset: u64, len: u32) -> Result<(), Errno> {
        let entry = opcode::Fsync::new(types::Fd(file.as_raw_fd()))
            .offset(offset)
            .len(len)
            .flags(types::FsyncFlags::DATASYNC)
            .build();
        // SAFETY: the entry names no memory, only the descriptor of `file`,
        // which outlives the request: it is waited for below before this
        // returns.
        unsafe { self.ring.submission().push(&entry) }.map_err(|_| Errno::EBUSY)?;
        loop {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(super::errno_of(&e)),
            }
            if let Some(c) = self.ring.completion().next() {
                return if c.result() < 0 {
                    Err(Errno::from_raw(-c.result()))
                } else {
                    Ok(())
                };
            }
        }
    }
}

/// fdatasync of `len` bytes at `offset` of `file` only: those bytes'
/// dirty cached pages written back and waited for, then the device's cache
/// flushed (`vfs_fsync_range`, as a filesystem's fsync of one file of a
/// set), through `ring` (made on first use, kept for the next call). Where
/// io_uring cannot be had, the same in two calls: `sync_file_range(2)` of
/// the range, then `fdatasync(2)` of the file, whose flush is the same but
/// which also writes back what is dirty outside the range.
pub fn fdatasync_range(
    file: &File,
    ring: &mut Option<io::Result<RangeSync>>,
    offset: u64,
    len: u32,
) -> Result<(), Errno> {
    match ring.get_or_insert_with(RangeSync::new) {
        Ok(r) => r.sync(file, offset, len),
        Err(_) => {
            super::file::write_back_range(file, offset, u64::from(len))?;
            file.sync_data().map_err(|e| super::errno_of(&e))
        }
    }
}

/// What a ring is asked to be (fio's io_uring options).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingOpts {
    /// Entries, and slots.
    pub depth: u32,
    /// Bytes of each slot's buffer, at least.
    pub buf_len: usize,
    /// A write buffer per slot besides the read buffer.
    pub write_bufs: bool,
    /// fio's `hipri`: IORING_SETUP_IOPOLL.
    pub hipri: bool,
    /// fio's `sqthread_poll`: IORING_SETUP_SQPOLL.
    pub sqthread_poll: bool,
    /// fio's `sqthread_poll_cpu`: IORING_SETUP_SQ_AFF (with `sqthread_poll`).
    pub sqthread_poll_cpu: Option<u32>,
    /// `sq_thread_idle`, milliseconds (with `sqthread_poll`); `None`: 0,
    /// the kernel's default of one second, as fio leaves it.
    pub sq_thread_idle_ms: Option<u32>,
}

/// What the kernel gave a ring.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RingSetup {
    /// The setup flags the ring has ([`setup`]).
    pub flags: u32,
    /// The flags asked for, refused and dropped.
    pub refused: u32,
    /// The file is registered (requests use IOSQE_FIXED_FILE).
    pub registered_file: bool,
    /// The buffers are registered (READ_FIXED/WRITE_FIXED).
    pub fixed_bufs: bool,
    /// The ring's descriptor is registered (IORING_ENTER_REGISTERED_RING).
    pub registered_ring: bool,
    /// io_uring_enter carries IORING_ENTER_NO_IOWAIT.
    pub no_iowait: bool,
    /// With SQPOLL: the thread's `sq_thread_idle` as given, milliseconds
    /// (0: the kernel's default, one second); `None` without SQPOLL.
    pub sq_thread_idle_ms: Option<u32>,
}

/// The ring with `flags` (and `cq_entries` = `depth` with CQSIZE, as fio).
fn build(depth: u32, flags: u32, sq_cpu: u32, sq_idle_ms: u32) -> io::Result<IoUring> {
    let mut b = IoUring::builder();
    if flags & setup::IOPOLL != 0 {
        b.setup_iopoll();
    }
    if flags & setup::SQPOLL != 0 {
        // Idle 0: the kernel's default (1 s), as fio leaves it.
        b.setup_sqpoll(sq_idle_ms);
    }
    if flags & setup::SQ_AFF != 0 {
        b.setup_sqpoll_cpu(sq_cpu);
    }
    if flags & setup::CQSIZE != 0 {
        b.setup_cqsize(depth);
    }
    if flags & setup::COOP_TASKRUN != 0 {
        b.setup_coop_taskrun();
    }
    if flags & setup::SINGLE_ISSUER != 0 {
        b.setup_single_issuer();
    }
    if flags & setup::DEFER_TASKRUN != 0 {
        b.setup_defer_taskrun();
    }
    b.build(depth)
}

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// Register ring `fd` in the calling task's ring table: its index, or
/// `None` if the kernel refuses (before 5.18).
fn register_ring_fd(fd: RawFd) -> Option<u32> {
    let mut up = RsrcUpdate {
        offset: u32::MAX,
        resv: 0,
        data: u64::try_from(fd).ok()?,
    };
    // SAFETY: IORING_REGISTER_RING_FDS reads and writes one
    // io_uring_rsrc_update (nr_args 1): `up`, a live, writable value of
    // that layout (repr(C)) on this frame.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd,
            REGISTER_RING_FDS,
            std::ptr::addr_of_mut!(up),
            1u32,
        )
    };
    (r == 1).then_some(up.offset)
}

/// A ring with one read buffer per slot and, when opened for writing, one
/// write buffer per slot besides (so a mixed workload never writes back what
/// it read: write buffers keep the contents the caller put in them).
///
/// Made and used by one thread: with SINGLE_ISSUER (and DEFER_TASKRUN) the
/// kernel refuses submissions and waits from any other task (EEXIST), and
/// the registered ring index is the creating thread's.
///
/// # Invariants
/// - `busy.len() == depth`; `bufs.len()` is `depth` (read buffers, index =
///   slot) or `2 * depth` (write buffer of slot `s` at `depth + s`), and
///   fits in a u16 (registered-buffer index); `bufs` is never resized or
///   reallocated-into after `new`, so each buffer's address is stable (and
///   the bytes live on the heap, so moving the `Ring` does not move them).
/// - `busy[s]` is true from the push of a request in slot `s` until its
///   completion has been handed to a [`Ring::wait`] caller; while it is
///   true the kernel may access slot `s`'s buffers and no Rust reference to
///   them is handed out.
/// - `kernel` counts the requests pushed whose completion has not been
///   taken from the completion queue; `ready` holds the completions taken
///   (or, for a polled ring's fsync, made) and not yet handed out, each of
///   a busy slot; the busy slots are exactly `kernel + ready.len()`.
/// - `ring` is declared before `bufs`: it is dropped (and its registered
///   buffers released) first; `Drop` waits for in-flight requests and
///   unregisters the ring's descriptor before that.
pub struct Ring {
    ring: IoUring,
    bufs: Vec<AlignedBuf>,
    busy: Vec<bool>,
    kernel: usize,
    ready: Vec<(usize, i32)>,
    setup: RingSetup,
    /// The registered ring index, when registered.
    ring_index: Option<u32>,
    file: File,
    /// io_uring_enter(2) calls made (the tests count them).
    #[cfg(test)]
    enters: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("depth", &self.busy.len())
            .field("in_flight", &self.in_flight())
            .field("setup", &self.setup)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl Ring {
    /// A ring as `opts` asks over `file`, with `depth` buffers of at least
    /// `buf_len` bytes each, and as many write buffers if `write_bufs`; set
    /// up as fio's (see the module), its file and buffers registered when
    /// the kernel allows, plain otherwise. EINVAL for a depth of 0 or one
    /// whose buffers do not fit a u16 index; the kernel's error if it
    /// refuses the ring with only the flags asked for (IOPOLL, SQPOLL,
    /// SQ_AFF: an offline `sqthread_poll_cpu` is EINVAL).
    pub fn new(file: File, opts: &RingOpts) -> io::Result<Ring> {
        let einval = || io::Error::from_raw_os_error(libc::EINVAL);
        let depth = opts.depth;
        let slots = usize::try_from(depth).map_err(|_| einval())?;
        let nbufs = if opts.write_bufs {
            slots.checked_mul(2).ok_or_else(einval)?
        } else {
            slots
        };
        if slots == 0 || u16::try_from(nbufs).is_err() {
            return Err(einval());
        }
        let mut flags = setup::CQSIZE | setup::COOP_TASKRUN | setup::SINGLE_ISSUER | setup::DEFER_TASKRUN;
        if opts.hipri {
            flags |= setup::IOPOLL;
        }
        if opts.sqthread_poll {
            flags |= setup::SQPOLL;
            if opts.sqthread_poll_cpu.is_some() {
                flags |= setup::SQ_AFF;
            }
        }
        let sq_cpu = opts.sqthread_poll_cpu.unwrap_or(0);
        let mut refused = 0;
        // fio_ioring_queue_init's retry: on EINVAL drop what newer kernels
        // added, newest first.
        let ring = loop {
            match build(depth, flags, sq_cpu, opts.sq_thread_idle_ms.unwrap_or(0)) {
                Ok(r) => break r,
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    let drop = [
                        setup::SINGLE_ISSUER | setup::DEFER_TASKRUN,
                        setup::COOP_TASKRUN,
                        setup::CQSIZE,
                    ]
                    .into_iter()
                    .find(|d| flags & d != 0)
                    .ok_or(e)?;
                    flags &= !drop;
                    refused |= drop;
                }
                Err(e) => return Err(e),
            }
        };
        let mut bufs = Vec::with_capacity(nbufs);
        for _ in 0..nbufs {
            bufs.push(AlignedBuf::new(opts.buf_len).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?);
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
        let fixed_bufs = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        // fio_ioring_register_files: the one file, index 0.
        let registered_file = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        let ring_index = register_ring_fd(ring.as_raw_fd());
        let setup = RingSetup {
            flags,
            refused,
            registered_file,
            fixed_bufs,
            registered_ring: ring_index.is_some(),
            no_iowait: ring.params().is_feature_no_iowait(),
            sq_thread_idle_ms: (flags & setup::SQPOLL != 0).then(|| opts.sq_thread_idle_ms.unwrap_or(0)),
        };
        Ok(Ring {
            ring,
            bufs,
            busy: vec![false; slots],
            kernel: 0,
            ready: Vec::new(),
            setup,
            ring_index,
            file,
            #[cfg(test)]
            enters: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The file the ring reads and writes.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Slots.
    pub fn depth(&self) -> usize {
        self.busy.len()
    }

    /// What the kernel gave this ring.
    pub fn setup(&self) -> &RingSetup {
        &self.setup
    }

    /// Requests pushed and not yet handed out by [`Ring::wait`].
    pub fn in_flight(&self) -> usize {
        self.kernel + self.ready.len()
    }

    /// Slot `slot`'s read buffer, if the slot exists and is not in flight
    /// (what the last read into it brought, writable: hdparm's twins touch
    /// it; the engine's tests fill it).
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
    pub fn push(&mut self, slot: usize, op: RingOp, offset: u64, len: u32) -> Result<(), Errno> {
        let free = self.busy.get(slot).is_some_and(|b| !b);
        if !free {
            return Err(Errno::EINVAL);
        }
        let b = self.buf_index(slot, op);
        let len_fits = usize::try_from(len).is_ok_and(|l| l <= self.bufs[b].len());
        let buffered = matches!(op, RingOp::Read | RingOp::Write);
        if buffered && !len_fits {
            return Err(Errno::EINVAL);
        }
        if !buffered && self.setup.flags & setup::IOPOLL != 0 {
            return self.polled_sync(slot, op, offset, len);
        }
        let index = u16::try_from(b).map_err(|_| Errno::EINVAL)?;
        let tag = u64::try_from(slot).map_err(|_| Errno::EINVAL)?;
        let raw = types::Fd(self.file.as_raw_fd());
        let ptr = self.bufs[b].as_mut_ptr();
        macro_rules! entry {
            ($fd:expr) => {
                match (op, self.setup.fixed_bufs) {
                    (RingOp::Read, true) => opcode::ReadFixed::new($fd, ptr, len, index)
                        .offset(offset)
                        .build(),
                    (RingOp::Read, false) => opcode::Read::new($fd, ptr, len).offset(offset).build(),
                    (RingOp::Write, true) => opcode::WriteFixed::new($fd, ptr, len, index)
                        .offset(offset)
                        .build(),
                    (RingOp::Write, false) => opcode::Write::new($fd, ptr, len).offset(offset).build(),
                    (RingOp::Fsync, _) => opcode::Fsync::new($fd)
                        .flags(types::FsyncFlags::DATASYNC)
                        .build()
                        .flags(squeue::Flags::IO_DRAIN),
                    (RingOp::FsyncRange, _) => opcode::Fsync::new($fd)
                        .offset(offset)
                        .len(len)
                        .flags(types::FsyncFlags::DATASYNC)
                        .build()
                        .flags(squeue::Flags::IO_DRAIN),
                }
            };
        }
        // A registered file is named by its index (types::Fixed sets
        // IOSQE_FIXED_FILE).
        let entry = if self.setup.registered_file {
            entry!(types::Fixed(0))
        } else {
            entry!(raw)
        }
        .user_data(tag);
        loop {
            // SAFETY: the entry's buffer is `bufs[b]`, `len` bytes of which
            // fit in it (checked above); the Ring owns that buffer, does not
            // move or free it while the ring exists, and marks the slot busy
            // below so it hands out no reference to it and accepts no other
            // request in it until this request's completion is handed out
            // (the buffer belongs to this slot alone: `b` is `slot` or
            // `depth + slot`); `Drop` waits for every in-flight completion
            // (or leaks the buffers) before they are freed. The fd (or the
            // registered file 0, the same descriptor) belongs to
            // `self.file`, which lives as long as the ring.
            let pushed = unsafe { self.ring.submission().push(&entry) };
            if pushed.is_ok() {
                break;
            }
            // Full submission queue (cannot happen with at most `depth`
            // requests on a ring of `depth` entries, but be correct anyway):
            // hand what is queued to the kernel and retry.
            self.reap(0)?;
        }
        self.busy[slot] = true;
        self.kernel += 1;
        Ok(())
    }

    /// A flush (of the whole file or of a range) on a polled ring: every
    /// request before it completes first (their completions kept for the
    /// next [`Ring::wait`], as IO_DRAIN orders them), then `fdatasync(2)`
    /// or [`fdatasync_range`], whose result is the request's completion.
    fn polled_sync(&mut self, slot: usize, op: RingOp, offset: u64, len: u32) -> Result<(), Errno> {
        while self.kernel > 0 {
            self.reap(self.kernel)?;
        }
        let done = if op == RingOp::FsyncRange {
            fdatasync_range(&self.file, &mut None, offset, len)
        } else {
            self.file.sync_data().map_err(|e| super::errno_of(&e))
        };
        // The completion's result: 0, or the negated errno, as the kernel's.
        let res = done.map_or_else(|e| -(e as i32), |()| 0);
        self.busy[slot] = true;
        self.ready.push((slot, res));
        Ok(())
    }

    /// io_uring_enter(2) on this ring (by its registered index when it has
    /// one), with NO_IOWAIT when the kernel has it.
    fn enter(&self, to_submit: u32, min_complete: u32, flags: u32) -> io::Result<()> {
        #[cfg(test)]
        self.enters.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut flags = flags;
        if self.setup.no_iowait {
            flags |= ENTER_NO_IOWAIT;
        }
        let fd = match self.ring_index {
            Some(i) => {
                flags |= ENTER_REGISTERED_RING;
                i64::from(i)
            }
            None => i64::from(self.ring.as_raw_fd()),
        };
        // SAFETY: io_uring_enter with no argument (arg NULL, argsz 0) reads
        // and writes only the ring's shared mappings, which `self.ring`
        // owns and keeps mapped; the entries it consumes were pushed under
        // the SAFETY argument of `push`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                to_submit,
                min_complete,
                flags,
                std::ptr::null::<libc::c_void>(),
                0usize,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Move the completions of busy slots from the completion queue to
    /// `ready`; how many.
    fn take_cqes(&mut self) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion() {
            let Ok(slot) = usize::try_from(cqe.user_data()) else {
                continue;
            };
            if self.busy.get(slot) == Some(&true) && self.kernel > 0 {
                self.kernel -= 1;
                self.ready.push((slot, cqe.result()));
                n += 1;
            }
        }
        n
    }

    /// Submit what is queued and take completions into `ready` until at
    /// least `want` more came (at most what the kernel holds), as fio's
    /// commit and getevents do: io_uring_enter with GETEVENTS, which on a
    /// polled ring (IOPOLL) spins in the kernel polling for completions and
    /// with DEFER_TASKRUN runs the completions' task work. With SQPOLL the
    /// kernel's thread submits (woken if it sleeps) and this spins on the
    /// completion queue, as fio's getevents; see [`SQPOLL_SPIN`].
    fn reap(&mut self, want: usize) -> Result<(), Errno> {
        let want = want.min(self.kernel);
        let errno = |e: io::Error| super::errno_of(&e);
        let mut got = 0;
        if self.setup.flags & setup::SQPOLL != 0 {
            let mut last = Instant::now();
            loop {
                if self.ring.submission().need_wakeup() {
                    let pending = u32::try_from(self.ring.submission().len()).unwrap_or(u32::MAX);
                    match self.enter(pending, 0, ENTER_SQ_WAKEUP) {
                        Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {}
                        r => r.map_err(errno)?,
                    }
                }
                let n = self.take_cqes();
                got += n;
                if got >= want {
                    return Ok(());
                }
                if n > 0 {
                    last = Instant::now();
                } else if last.elapsed() < SQPOLL_SPIN {
                    std::hint::spin_loop();
                } else {
                    let need = u32::try_from(want - got).unwrap_or(u32::MAX);
                    match self.enter(0, need, ENTER_GETEVENTS) {
                        Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {}
                        r => r.map_err(errno)?,
                    }
                }
            }
        }
        // fio's fio_ioring_getevents: the completion queue first, a call
        // only when it does not hold enough.
        loop {
            got += self.take_cqes();
            if got >= want && self.ring.submission().is_empty() {
                return Ok(());
            }
            let pending = u32::try_from(self.ring.submission().len()).unwrap_or(u32::MAX);
            let need = u32::try_from(want.saturating_sub(got)).unwrap_or(u32::MAX);
            match self.enter(pending, need, ENTER_GETEVENTS) {
                // A signal, or no memory for the submission just now (fio
                // reaps and tries again).
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {}
                r => r.map_err(errno)?,
            }
        }
    }

    /// Submit what is queued without waiting for any completion (fio's
    /// `fio_ioring_commit`); `wait` submits anything still queued. As
    /// fio's, the call carries GETEVENTS with nothing to wait for (a
    /// [`Ring::reap`] of none): with DEFER_TASKRUN it also posts the
    /// completions the kernel has ready, so the reap after it finds them
    /// in the completion queue without a call of its own. With SQPOLL the
    /// kernel's thread submits (woken if it sleeps).
    pub fn commit(&mut self) -> Result<(), Errno> {
        if self.setup.flags & setup::SQPOLL == 0 {
            return self.reap(0);
        }
        loop {
            match self.ring.submit() {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                r => return r.map(drop).map_err(|e| super::errno_of(&e)),
            }
        }
    }

    /// Submit what is queued, wait until at least `min` requests have
    /// completed (fewer if fewer are in flight), and hand every available
    /// completion to `done(slot, result)`, `result` being bytes transferred
    /// (>= 0) or the negated errno, as the kernel reports it.
    pub fn wait(&mut self, min: usize, mut done: impl FnMut(usize, i32)) -> Result<(), Errno> {
        let want = min.min(self.in_flight());
        let more = want.saturating_sub(self.ready.len());
        if more > 0 || !self.ring.submission().is_empty() {
            self.reap(more)?;
        }
        for (slot, res) in std::mem::take(&mut self.ready) {
            self.busy[slot] = false;
            done(slot, res);
        }
        Ok(())
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // The kernel may still write into buffers of in-flight requests: wait
        // for all of them before the buffers are freed.
        while self.in_flight() > 0 {
            if self.wait(self.in_flight(), |_, _| {}).is_err() {
                // The ring can no longer tell us when the kernel is done with
                // the buffers: leak them rather than free memory it may write.
                std::mem::forget(std::mem::take(&mut self.bufs));
                return;
            }
        }
        if self.setup.registered_file {
            // The ring's reference to the target's file goes only when the
            // ring is torn down, and the kernel does that asynchronously
            // after close (io_ring_exit_work): the device would still count
            // an opener when the caller, having dropped every queue, stops
            // an md array on it (STOP_ARRAY: EBUSY). Unregistering now drops
            // that reference before `drop` returns.
            let _ = self.ring.submitter().unregister_files();
        }
        if let Some(i) = self.ring_index {
            let mut up = RsrcUpdate {
                offset: i,
                resv: 0,
                data: 0,
            };
            // SAFETY: IORING_UNREGISTER_RING_FDS reads one
            // io_uring_rsrc_update (nr_args 1): `up`, a live value of that
            // layout on this frame. It only drops the task's reference to
            // the ring, so the ring (and its buffer registration) goes when
            // `self.ring` is dropped, before the buffers.
            unsafe {
                libc::syscall(
                    libc::SYS_io_uring_register,
                    self.ring.as_raw_fd(),
                    UNREGISTER_RING_FDS,
                    std::ptr::addr_of_mut!(up),
                    1u32,
                );
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    fn opts(depth: u32, buf_len: usize, write_bufs: bool) -> RingOpts {
        RingOpts {
            depth,
            buf_len,
            write_bufs,
            ..RingOpts::default()
        }
    }

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
        let mut r = Ring::new(f, &opts(4, 4096, true)).expect("ring");
        assert_eq!(r.depth(), 4);
        r.push(0, RingOp::Read, 4096, 4096).expect("push read");
        r.buf_mut(1).expect("free").fill(0x11);
        r.write_buf_mut(1).expect("free").fill(0xAB);
        r.push(1, RingOp::Write, 8192, 4096).expect("push write");
        assert!(r.buf_mut(1).is_none(), "busy slot hands out no buffer");
        assert!(r.write_buf_mut(1).is_none(), "busy slot hands out no buffer");
        assert_eq!(r.push(1, RingOp::Read, 0, 512), Err(Errno::EINVAL), "busy slot refused");
        assert_eq!(
            r.push(2, RingOp::Read, 0, 8192),
            Err(Errno::EINVAL),
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

    /// fio's calls: one io_uring_enter per commit, with GETEVENTS, and a
    /// reap that takes what the completion queue holds without one. A
    /// buffered read of a cached file completes inside the submitting
    /// call, so after the commit its completion is in the queue: one call
    /// for the request, where a reap that always calls made two. A wait
    /// for a completion that is not there yet still calls.
    #[test]
    fn a_commit_and_its_reap_make_one_call_as_fios() {
        use std::sync::atomic::Ordering::Relaxed;
        let data = vec![7u8; 16384];
        let (path, f) = temp_file("calls", &data);
        let mut r = Ring::new(f, &opts(4, 4096, false)).expect("ring");
        let calls = |r: &Ring| r.enters.load(Relaxed);
        for round in 0..4u64 {
            r.push(0, RingOp::Read, 4096 * round, 4096).expect("push read");
            let before = calls(&r);
            r.commit().expect("commit");
            assert_eq!(calls(&r) - before, 1, "round {round}: the commit is one call");
            let before = calls(&r);
            let mut got = Vec::new();
            r.wait(1, |s, res| got.push((s, res))).expect("wait");
            assert_eq!(got, vec![(0, 4096)], "round {round}");
            assert_eq!(calls(&r) - before, 0, "round {round}: the completion was in the queue");
        }
        // Nothing committed: the wait submits and waits in one call.
        r.push(1, RingOp::Read, 0, 4096).expect("push read");
        let before = calls(&r);
        let mut got = Vec::new();
        r.wait(1, |s, res| got.push((s, res))).expect("wait");
        assert_eq!(got, vec![(1, 4096)]);
        assert_eq!(calls(&r) - before, 1);
        drop(r);
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn drop_with_requests_in_flight_waits() {
        let (path, f) = temp_file("drop", &[1u8; 65536]);
        let mut r = Ring::new(f, &opts(8, 8192, false)).expect("ring");
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
        let mut r = Ring::new(ro, &opts(2, 4096, false)).expect("ring");
        r.push(0, RingOp::Write, 0, 4096).expect("push");
        let mut got = Vec::new();
        r.wait(1, |s, res| got.push((s, res))).expect("wait");
        std::fs::remove_file(&path).ok();
        assert_eq!(got, vec![(0, -libc::EBADF)]);
    }

    /// This kernel's answer to fio's flags: on 5.19+ COOP_TASKRUN, on 6.1+
    /// SINGLE_ISSUER and DEFER_TASKRUN too, with CQSIZE; the file, the
    /// buffers and the ring's descriptor registered; NO_IOWAIT on 6.15+.
    /// Reads and writes go through the registered file.
    #[test]
    fn setup_as_fio_with_a_registered_file() {
        let data: Vec<u8> = (0..8192u32).map(|i| u8::try_from(i % 249).unwrap_or(0)).collect();
        let (path, f) = temp_file("setup", &data);
        let mut r = Ring::new(f, &opts(2, 4096, true)).expect("ring");
        let s = r.setup().clone();
        let (major, minor) = kernel();
        let want = setup::CQSIZE | setup::COOP_TASKRUN | setup::SINGLE_ISSUER | setup::DEFER_TASKRUN;
        if (major, minor) >= (6, 1) {
            assert_eq!(s.flags, want, "{:?}", setup::names(s.flags));
            assert_eq!(s.refused, 0);
        }
        assert_eq!(s.flags | s.refused, want, "every flag got or refused");
        assert!(s.registered_file && s.fixed_bufs && s.registered_ring, "{s:?}");
        if (major, minor) >= (6, 15) {
            assert!(s.no_iowait, "{s:?}");
        }
        assert_eq!(
            setup::names(want),
            ["CQSIZE", "COOP_TASKRUN", "SINGLE_ISSUER", "DEFER_TASKRUN"]
        );
        r.push(0, RingOp::Read, 4096, 4096).expect("read");
        r.write_buf_mut(1).expect("free").fill(0x5A);
        r.push(1, RingOp::Write, 0, 4096).expect("write");
        let mut got = Vec::new();
        while r.in_flight() > 0 {
            r.wait(1, |s, res| got.push((s, res))).expect("wait");
        }
        got.sort_unstable();
        assert_eq!(got, vec![(0, 4096), (1, 4096)]);
        assert_eq!(r.buf(0).expect("free"), &data[4096..]);
        drop(r);
        let after = std::fs::read(&path).expect("read back");
        std::fs::remove_file(&path).ok();
        assert!(after[..4096].iter().all(|&b| b == 0x5A), "the write reached the file");
    }

    /// A ring made on one thread cannot be used from another (why each job
    /// makes its own): its registered index is in the making thread's
    /// table only (EINVAL elsewhere), and with SINGLE_ISSUER the kernel
    /// refuses another task (EEXIST).
    #[test]
    fn a_ring_refuses_another_thread() {
        let (path, f) = temp_file("issuer", &[3u8; 4096]);
        let mut r = Ring::new(f, &opts(2, 4096, false)).expect("ring");
        if r.setup().flags & setup::SINGLE_ISSUER == 0 && !r.setup().registered_ring {
            std::fs::remove_file(&path).ok();
            return;
        }
        let got = std::thread::scope(|s| {
            s.spawn(|| {
                r.push(0, RingOp::Read, 0, 4096).expect("push");
                r.wait(1, |_, _| {})
            })
            .join()
            .expect("thread")
        });
        let want = if r.setup().registered_ring {
            Errno::EINVAL
        } else {
            Errno::EEXIST
        };
        assert_eq!(got, Err(want));
        // Back on its own thread it works (and drops cleanly).
        let mut done = Vec::new();
        r.wait(1, |s, res| done.push((s, res))).expect("wait");
        assert_eq!(done, vec![(0, 4096)]);
        std::fs::remove_file(&path).ok();
    }

    /// A polled ring (hipri: IOPOLL) over a file whose filesystem does not
    /// poll (tmpfs here): setup succeeds, each read completes with the
    /// kernel's EOPNOTSUPP; a flush, which the kernel would refuse on a
    /// polled ring (EINVAL), is fdatasync(2) after the requests before it.
    #[test]
    fn a_polled_ring_on_a_file_that_does_not_poll() {
        let (path, f) = temp_file("iopoll", &[9u8; 8192]);
        let mut r = Ring::new(
            f,
            &RingOpts {
                hipri: true,
                ..opts(2, 4096, true)
            },
        )
        .expect("ring");
        assert!(r.setup().flags & setup::IOPOLL != 0, "{:?}", r.setup());
        r.push(0, RingOp::Read, 0, 4096).expect("push read");
        r.push(1, RingOp::Fsync, 0, 0).expect("push flush");
        let mut got = Vec::new();
        while r.in_flight() > 0 {
            r.wait(1, |s, res| got.push((s, res))).expect("wait");
        }
        got.sort_unstable();
        std::fs::remove_file(&path).ok();
        assert_eq!(got, vec![(0, -libc::EOPNOTSUPP), (1, 0)]);
    }

    /// sqthread_poll: the kernel's thread submits, completions are polled.
    #[test]
    fn sqpoll_ring_reads_and_writes() {
        let (path, f) = temp_file("sqpoll", &[4u8; 16384]);
        let mut r = Ring::new(
            f,
            &RingOpts {
                sqthread_poll: true,
                ..opts(4, 4096, true)
            },
        )
        .expect("ring");
        let s = r.setup().clone();
        assert!(s.flags & setup::SQPOLL != 0, "{s:?}");
        // SQPOLL takes none of the task-work flags (EINVAL): fio drops them.
        assert_eq!(
            s.refused & (setup::COOP_TASKRUN | setup::SINGLE_ISSUER | setup::DEFER_TASKRUN),
            setup::COOP_TASKRUN | setup::SINGLE_ISSUER | setup::DEFER_TASKRUN,
            "{s:?}"
        );
        for round in 0..50u64 {
            for slot in 0..4usize {
                let off = (u64::try_from(slot).unwrap_or(0) * 4096 + round * 512) % 12288;
                let op = if slot % 2 == 0 { RingOp::Read } else { RingOp::Write };
                r.push(slot, op, off / 512 * 512, 512).expect("push");
            }
            let mut n = 0;
            while r.in_flight() > 0 {
                r.wait(1, |_, res| {
                    assert_eq!(res, 512);
                    n += 1;
                })
                .expect("wait");
            }
            assert_eq!(n, 4);
        }
        drop(r);
        std::fs::remove_file(&path).ok();
    }

    /// An offline CPU for the submission thread: the kernel's EINVAL.
    #[test]
    fn sqpoll_on_an_absent_cpu_is_einval() {
        let (path, f) = temp_file("sqaff", &[0u8; 4096]);
        let e = Ring::new(
            f,
            &RingOpts {
                sqthread_poll: true,
                sqthread_poll_cpu: Some(bench_core::vocab::cpus::MAX_CPUS - 1),
                ..opts(2, 4096, false)
            },
        )
        .expect_err("no such CPU");
        std::fs::remove_file(&path).ok();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }

    /// The running kernel's (major, minor).
    pub(crate) fn kernel() -> (u32, u32) {
        let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut it = r.trim().split(|c: char| !c.is_ascii_digit());
        let major = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
        let minor = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
        (major, minor)
    }
}
