//! The device side of the engine: clocks, queues of I/O requests and targets.
//!
//! The runner (`crate::engine::runner`) drives any [`IoQueue`] with any [`Clock`]; the
//! real engines (O_DIRECT pread/pwrite, io_uring) live in `init`, the
//! simulated disk in [`crate::engine::sim`], and [`MemQueue`] serves a `Vec<u8>`.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::vocab::units::Nanos;

/// A monotonic clock.
///
/// # Invariants
/// - `now()` never decreases between two calls on the same clock.
/// - The origin is arbitrary; only differences are meaningful.
pub trait Clock {
    /// The current time.
    fn now(&self) -> Nanos;
}

/// What one request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Read `len` bytes at `offset`.
    Read,
    /// Write `len` bytes at `offset` from the slot's buffer (random data, never
    /// zeros; the runner stamps each write's offset and time into it first,
    /// as fio's `scramble_buffers`: see `crate::engine::scramble`).
    Write,
    /// Make completed writes durable (fdatasync; on a block device a cache flush).
    /// `offset` and `len` are ignored.
    Flush,
    /// A flush of `len` bytes at `offset` only: that range's dirty cached
    /// pages written back and waited for, then the device's cache flushed
    /// (an fdatasync of the range: `vfs_fsync_range`, which io_uring's
    /// IORING_OP_FSYNC reaches with an offset and a length). Cached pages
    /// outside the range stay dirty, as another file's do when one file of
    /// a set is fsynced. `len` is not bounded by the queue's `max_len` (no
    /// buffer is involved); nothing is transferred (0 bytes).
    FlushRange,
}

/// One I/O request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoReq {
    /// What to do.
    pub op: Op,
    /// Byte offset from the start of the target; a multiple of the logical
    /// block size for direct access.
    pub offset: u64,
    /// Length in bytes; a multiple of the logical block size for direct access,
    /// and at most the `max_len` the queue was opened with.
    pub len: u32,
}

/// A failed request, as the OS reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoError {
    /// The positive errno value (EIO = 5, ...).
    pub errno: i32,
    /// The request that failed.
    pub req: IoReq,
}

/// One completed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The slot given to [`IoQueue::submit`].
    pub slot: usize,
    /// Bytes transferred, or the positive errno. A short transfer (fewer bytes
    /// than asked) is reported as is; the runner treats it as an error.
    pub result: Result<u32, i32>,
}

/// A queue of requests against one target, owned by one job.
///
/// # Invariants
/// - At most [`IoQueue::depth`] requests are in flight; each uses a distinct
///   slot in `0..depth`, which owns one aligned buffer of `max_len` bytes.
/// - A slot is free again once its completion has been returned by `reap`.
/// - Write buffers hold random data (seeded), never zeros.
/// - `reap` returns only completions of submitted requests, each exactly once.
pub trait IoQueue {
    /// The most requests that may be in flight.
    fn depth(&self) -> usize;
    /// Queue one request in `slot`. Engines may defer the actual submission
    /// to the system until `reap` (io_uring batches); a synchronous engine
    /// performs the I/O here.
    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError>;
    /// Wait until at least `min` requests have completed (fewer only if fewer
    /// are in flight) and append every completion now available to `out`.
    /// Submits whatever `submit` queued and `commit` has not.
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError>;
    /// True if `submit` only queues and `commit` hands the queued requests
    /// to the system (io_uring, fio's `commit` hook); false if `submit`
    /// performs or issues the I/O itself (pread/pwrite, fio's sync engines).
    fn batched(&self) -> bool {
        false
    }
    /// Hand every request queued since the last commit to the system
    /// without waiting for any (io_uring_enter with no completions wanted).
    /// The runner takes the requests' issue time just after it: fio's
    /// `issue_time`, the end of `slat` and the start of `clat`. Nothing to
    /// do unless [`IoQueue::batched`].
    fn commit(&mut self) -> Result<(), IoError> {
        Ok(())
    }
    /// The first `len` bytes of the buffer slot `slot` writes from, to be
    /// filled before its `submit` (a verifying step writes known contents:
    /// see [`crate::engine::verify`]). `None` if this queue cannot give them (it was
    /// not opened for writing, or the engine has no such access).
    fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        let _ = (slot, len);
        None
    }
    /// The first `len` bytes that the read in slot `slot` returned, valid
    /// after its completion was reaped and until the slot's next `submit`.
    /// `None` if the engine cannot give them.
    fn read_buf(&self, slot: usize, len: usize) -> Option<&[u8]> {
        let _ = (slot, len);
        None
    }
    /// The same bytes as [`IoQueue::read_buf`], writable (hdparm's
    /// `read_big_block` writes into what it read: see [`Step::touch_every`]).
    ///
    /// [`Step::touch_every`]: crate::spec::Step::touch_every
    fn read_buf_mut(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        let _ = (slot, len);
        None
    }
    /// What engine this queue is and how the system set it up (recorded in
    /// each step's result); `None` for queues that reach no system engine
    /// (the simulated disk, memory).
    fn engine(&self) -> Option<EngineInfo> {
        None
    }
    /// What the last close of a block device does to its page cache, with
    /// nothing in flight ([`crate::spec::Step::end_close`], dd's close):
    /// its dirty pages written back, the reads the kernel's readahead still
    /// has in flight waited for, every cached page dropped. Returns when
    /// that is done. Nothing to do for a queue with no page cache under it
    /// (the simulated disk, memory, a regular file's close).
    fn end_close(&mut self) -> Result<(), IoError> {
        Ok(())
    }
}

/// The engine of a step's queues: which one, and for io_uring what the
/// kernel accepted of what was asked (fio's `fio_ioring_queue_init`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineInfo {
    /// `psync` (pread/pwrite/fdatasync, one request in flight: fio's
    /// `ioengine=psync`) or `io_uring`.
    pub name: String,
    /// io_uring: the ring's setup flags, as the kernel's uapi names them
    /// without `IORING_SETUP_` (`IOPOLL`, `SQPOLL`, `SQ_AFF`, `CQSIZE`,
    /// `COOP_TASKRUN`, `SINGLE_ISSUER`, `DEFER_TASKRUN`), in bit order.
    #[serde(default)]
    pub setup_flags: Vec<String>,
    /// io_uring: flags asked for that this kernel refused (EINVAL) and that
    /// were dropped, as fio drops them: `SINGLE_ISSUER` and
    /// `DEFER_TASKRUN` together, then `COOP_TASKRUN`, then `CQSIZE`.
    #[serde(default)]
    pub refused_flags: Vec<String>,
    /// io_uring: the target's descriptor is registered and requests name
    /// it by index (IOSQE_FIXED_FILE; fio's `registerfiles`).
    #[serde(default)]
    pub registered_file: bool,
    /// io_uring: every slot's buffer is registered (READ_FIXED and
    /// WRITE_FIXED; fio's `fixedbufs`).
    #[serde(default)]
    pub fixed_bufs: bool,
    /// io_uring: the ring's own descriptor is registered
    /// (IORING_REGISTER_RING_FDS, as fio does).
    #[serde(default)]
    pub registered_ring: bool,
    /// io_uring: io_uring_enter's waits are not counted as iowait
    /// (IORING_ENTER_NO_IOWAIT where the kernel has it, as fio).
    #[serde(default)]
    pub no_iowait: bool,
    /// io_uring_cmd: the command set of the passthrough (`nvme`); absent
    /// for the other engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd_type: Option<String>,
    /// io_uring_cmd: the generic character device the commands went to
    /// (`/dev/ng0n1`); absent for the other engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub char_device: Option<String>,
    /// io_uring_cmd: the namespace's ID and LBA size, bytes (offsets and
    /// lengths become LBAs with it); absent for the other engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nsid: Option<u32>,
    /// io_uring_cmd: the namespace's LBA size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lba_bytes: Option<u32>,
    /// io_uring with SQPOLL: the submission thread's idle time before it
    /// sleeps, milliseconds, as given to the kernel (0: its default, one
    /// second); absent without SQPOLL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sq_thread_idle_ms: Option<u32>,
    /// With `read_digest`: the digest of every byte the step's reads
    /// brought, all jobs together ([`read_digest`]), 16 hex digits; absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_digest: Option<String>,
}

/// FNV-1a, 64 bits, over `bytes`, continuing from `h`.
const fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

/// One read's part of a step's read digest: FNV-1a (64 bits) over the
/// read's offset (8 bytes, little-endian) and then the bytes it brought.
/// A step's digest is the wrapping sum of its reads' parts, so it does not
/// depend on the order completions come in (depth, jobs, engine): reading
/// the same blocks with the same request size gives the same digest.
pub fn read_digest(offset: u64, data: &[u8]) -> u64 {
    fnv1a(fnv1a(0xcbf2_9ce4_8422_2325, &offset.to_le_bytes()), data)
}

/// fio's `ioengine` values bootbench has ([`crate::spec::Params::ioengine`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    /// pread/pwrite/fdatasync, one request in flight.
    Psync,
    /// io_uring reads and writes on the target.
    IoUring,
    /// io_uring passthrough: NVMe Read and Write commands
    /// (IORING_OP_URING_CMD, NVME_URING_CMD_IO) on `/dev/ngXnY`.
    IoUringCmd,
}

impl IoEngine {
    /// The name used in configs and results: serde's.
    pub fn name(self) -> &'static str {
        crate::vocab::names::name_of(&self)
    }
}

/// fio's `cmd_type` values ([`crate::spec::Params::cmd_type`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmdType {
    /// NVMe I/O commands (NVME_URING_CMD_IO).
    #[default]
    Nvme,
}

impl CmdType {
    /// The name used in configs and results: serde's.
    pub fn name(self) -> &'static str {
        crate::vocab::names::name_of(&self)
    }
}

/// How a target is accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// O_DIRECT: the page cache is bypassed.
    Direct,
    /// Through the page cache (hdparm -T and -t, dd without iflag=direct).
    Buffered,
}

/// The shape of a target, as the engine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    /// Size in bytes.
    pub size: u64,
    /// Logical block size in bytes (the unit of direct I/O).
    pub logical_block: u32,
    /// Physical block size in bytes.
    pub physical_block: u32,
}

/// How a job opens its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenSpec {
    /// Direct or buffered.
    pub access: Access,
    /// True if the step issues writes or flushes. Only a target that the
    /// validated plan permits for writing may grant this.
    pub write: bool,
    /// Requests in flight.
    pub depth: u32,
    /// The largest request in bytes (the size of each slot's buffer).
    pub max_len: u32,
    /// Seed for the write buffers' random contents.
    pub seed: u64,
    /// Polled completions (fio's `hipri`: io_uring with IORING_SETUP_IOPOLL).
    pub hipri: bool,
    /// A kernel thread polls the submission queue (fio's `sqthread_poll`:
    /// IORING_SETUP_SQPOLL).
    pub sqthread_poll: bool,
    /// The CPU of that thread (fio's `sqthread_poll_cpu`: IORING_SETUP_SQ_AFF).
    pub sqthread_poll_cpu: Option<u32>,
    /// How long that thread spins idle before it sleeps, milliseconds
    /// (io_uring_params' `sq_thread_idle`); `None`: the kernel's default.
    pub sq_thread_idle_ms: Option<u32>,
    /// The engine the test named (fio's `ioengine`); `None`: psync at
    /// depth 1, io_uring beyond.
    pub ioengine: Option<IoEngine>,
}

impl OpenSpec {
    /// A plain queue: no engine options (the runner's untimed reads).
    pub const fn plain(access: Access, write: bool, depth: u32, max_len: u32, seed: u64) -> OpenSpec {
        OpenSpec {
            access,
            write,
            depth,
            max_len,
            seed,
            hipri: false,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            sq_thread_idle_ms: None,
            ioengine: None,
        }
    }
}

/// Something to benchmark: a block device, a file, a simulated disk.
///
/// # Invariants
/// - `geometry()` does not change while a test runs.
/// - `open` with `spec.write == true` fails with EPERM unless the plan has
///   named this target writable; this is the only way to obtain a queue that
///   writes.
pub trait Target {
    /// The queue type one job uses.
    type Queue: IoQueue;
    /// Size and block sizes.
    fn geometry(&self) -> Geometry;
    /// Open one job's queue.
    fn open(&self, spec: &OpenSpec) -> Result<Self::Queue, IoError>;
    /// Drop the target's cached pages (BLKFLSBUF and sync on a block device,
    /// `posix_fadvise(DONTNEED)` on a file), as hdparm -t does before timing.
    fn drop_caches(&self) -> Result<(), IoError>;
    /// Write back everything dirty (sync) and wait `for_` with the target
    /// idle (hdparm's `sync(); sleep(n)` before its timed loops). The
    /// default (the simulated disk, test targets) does nothing.
    fn settle(&self, for_: Nanos) -> Result<(), IoError> {
        let _ = for_;
        Ok(())
    }
    /// Reset the write pointers of the zones covering `len` bytes from
    /// byte `start` (zone boundaries): a write, so only a target that may
    /// be written does it. The default (a target without zones) refuses
    /// with EOPNOTSUPP, the request named a write of `len` bytes at `start`.
    fn reset_zones(&self, start: u64, len: u64) -> Result<(), IoError> {
        Err(IoError {
            errno: EOPNOTSUPP,
            req: IoReq {
                op: Op::Write,
                offset: start,
                len: u32::try_from(len).unwrap_or(u32::MAX),
            },
        })
    }
}

/// EOPNOTSUPP: what a target without zones answers a zone reset.
const EOPNOTSUPP: i32 = 95;

/// A queue over memory, for tests of the runner logic.
#[derive(Debug)]
pub struct MemQueue<'a> {
    /// The "disk".
    pub data: &'a mut Vec<u8>,
    depth: usize,
    done: Vec<Completion>,
    /// Each slot's buffer: what a write writes, what a read returned.
    bufs: Vec<Vec<u8>>,
}

impl<'a> MemQueue<'a> {
    /// A queue of `depth` slots over `data`.
    pub fn new(data: &'a mut Vec<u8>, depth: usize) -> Self {
        MemQueue {
            data,
            depth,
            done: Vec::new(),
            bufs: vec![Vec::new(); depth],
        }
    }
}

impl IoQueue for MemQueue<'_> {
    fn depth(&self) -> usize {
        self.depth
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        let len = req.len as usize;
        let start = usize::try_from(req.offset).map_err(|_| IoError { errno: 22, req })?;
        let result = match req.op {
            Op::Flush | Op::FlushRange => Ok(0),
            _ if slot >= self.depth => Err(22),
            _ if start.checked_add(len).is_none_or(|end| end > self.data.len()) => Err(22),
            Op::Read => {
                grown(&mut self.bufs[slot], len).copy_from_slice(&self.data[start..start + len]);
                Ok(req.len)
            }
            Op::Write => {
                self.data[start..start + len].copy_from_slice(grown(&mut self.bufs[slot], len));
                Ok(req.len)
            }
        };
        self.done.push(Completion { slot, result });
        Ok(())
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        out.append(&mut self.done);
        Ok(())
    }

    fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        self.bufs.get_mut(slot).map(|b| grown(b, len))
    }

    fn read_buf(&self, slot: usize, len: usize) -> Option<&[u8]> {
        self.bufs.get(slot).and_then(|b| b.get(..len))
    }

    fn read_buf_mut(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        self.bufs.get_mut(slot).and_then(|b| b.get_mut(..len))
    }
}

/// A slot buffer of [`MemQueue`], grown to at least `len` bytes; new bytes
/// hold a position-dependent non-zero pattern (never zeros).
fn grown(buf: &mut Vec<u8>, len: usize) -> &mut [u8] {
    {
        while buf.len() < len {
            buf.push(u8::try_from(buf.len() % 251).unwrap_or(0) + 1);
        }
        &mut buf[..len]
    }
}
