//! The queues a [`DevTarget`](super::DevTarget) opens: one request in
//! flight with pread/pwrite ([`SyncQueue`], fio's psync), or several
//! through io_uring ([`UringQueue`]); [`DevQueue`] is either.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bench_core::document::result::EngineInfo;
use bench_core::io::{Completion, IoError, IoQueue, IoReq, Op};

use super::errno_of;
use crate::sys::buf::AlignedBuf;
use crate::sys::uring::{self, setup, Ring, RingOp};
use crate::sys::uring_cmd::CmdRing;

/// Whether a write was handed to the kernel: shared by a target and the
/// queues it opened for writing (see [`super::DevTarget::wrote`]).
#[derive(Debug, Default)]
pub struct WriteMark(AtomicBool);

impl WriteMark {
    /// Record a write about to be submitted. Stores only the first time,
    /// so the jobs of a step do not contend for the cache line.
    pub(crate) fn mark(&self) {
        if !self.0.load(Ordering::Relaxed) {
            self.0.store(true, Ordering::Release);
        }
    }

    pub(super) fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// One request in flight: pread/pwrite/fdatasync, performed in `submit`.
#[derive(Debug)]
pub struct SyncQueue {
    pub(super) file: File,
    pub(super) rbuf: AlignedBuf,
    /// Random contents, present if opened for writing.
    pub(super) wbuf: Option<AlignedBuf>,
    pub(super) done: Option<Completion>,
    /// The ring of [`Op::FlushRange`]'s ranged fdatasync, made on the first
    /// one (or the error that io_uring gave).
    pub(super) range_sync: Option<io::Result<uring::RangeSync>>,
    /// The target's mark, if opened for writing.
    pub(super) wrote: Option<Arc<WriteMark>>,
}

/// `f` again while it fails with EINTR.
fn retried<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// A completion's result: the bytes moved, or the errno it records.
fn transferred(n: io::Result<usize>) -> Result<u32, i32> {
    match n {
        Ok(n) => u32::try_from(n).map_err(|_| libc::EOVERFLOW),
        Err(e) => Err(errno_of(&e)),
    }
}

impl IoQueue for SyncQueue {
    fn depth(&self) -> usize {
        1
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        let err = |errno| IoError { errno, req };
        if slot != 0 || self.done.is_some() {
            return Err(err(libc::EINVAL));
        }
        let len = usize::try_from(req.len).map_err(|_| err(libc::EINVAL))?;
        if matches!(req.op, Op::Read | Op::Write) && len > self.rbuf.len() {
            return Err(err(libc::EINVAL));
        }
        let result = match req.op {
            // pread(2); for O_DIRECT the kernel checks buffer address, length
            // and offset alignment and answers EINVAL: nothing here assumes them.
            Op::Read => {
                let buf = &mut self.rbuf.as_mut_slice()[..len];
                transferred(retried(|| self.file.read_at(buf, req.offset)))
            }
            // Without a write buffer the file is open read-only: the kernel's answer.
            Op::Write => match &self.wbuf {
                Some(w) => {
                    if let Some(m) = &self.wrote {
                        m.mark();
                    }
                    transferred(retried(|| self.file.write_at(&w.as_slice()[..len], req.offset)))
                }
                None => Err(libc::EBADF),
            },
            // fdatasync(2); on a block device it also flushes the disk's write cache.
            Op::Flush => self.file.sync_data().map(|()| 0).map_err(|e| errno_of(&e)),
            Op::FlushRange => uring::fdatasync_range(&self.file, &mut self.range_sync, req.offset, req.len)
                .map(|()| 0)
                .map_err(|e| e as i32),
        };
        self.done = Some(Completion { slot, result });
        Ok(())
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        out.extend(self.done.take());
        Ok(())
    }

    fn engine(&self) -> Option<EngineInfo> {
        Some(EngineInfo {
            name: "psync".to_string(),
            ..EngineInfo::default()
        })
    }
}

/// Several requests in flight through io_uring.
#[derive(Debug)]
pub struct UringQueue {
    pub(super) ring: Ring,
    /// The last request submitted, blamed if the ring itself fails.
    pub(super) last: IoReq,
    /// The target's mark, if opened for writing.
    pub(super) wrote: Option<Arc<WriteMark>>,
}

impl IoQueue for UringQueue {
    fn depth(&self) -> usize {
        self.ring.depth()
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        let ring = &mut self.ring;
        ring_submit(
            |op| ring.push(slot, op, req.offset, req.len),
            req,
            self.wrote.as_ref(),
            &mut self.last,
        )
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        let ring = &mut self.ring;
        ring_reap(|done| ring.wait(min, done), self.last, out)
    }

    fn engine(&self) -> Option<EngineInfo> {
        let s = self.ring.setup();
        let names = |bits| setup::names(bits).into_iter().map(str::to_string).collect();
        Some(EngineInfo {
            name: "io_uring".to_string(),
            setup_flags: names(s.flags),
            refused_flags: names(s.refused),
            registered_file: s.registered_file,
            fixed_bufs: s.fixed_bufs,
            registered_ring: s.registered_ring,
            no_iowait: s.no_iowait,
            sq_thread_idle_ms: s.sq_thread_idle_ms,
            ..EngineInfo::default()
        })
    }
}

/// A request into an io_uring submission queue (either queue's): a write
/// marks the target once it is in the queue, where the kernel may take it
/// now (SQPOLL); the request is kept to blame should the ring fail.
fn ring_submit(
    push: impl FnOnce(RingOp) -> Result<(), nix::errno::Errno>,
    req: IoReq,
    wrote: Option<&Arc<WriteMark>>,
    last: &mut IoReq,
) -> Result<(), IoError> {
    let op = ring_op(req.op);
    push(op).map_err(|errno| IoError {
        errno: errno as i32,
        req,
    })?;
    if op == RingOp::Write {
        if let Some(m) = wrote {
            m.mark();
        }
    }
    *last = req;
    Ok(())
}

/// Completions from an io_uring queue (either queue's), each a byte count
/// or an errno; a failing ring blames `last`.
fn ring_reap(
    wait: impl FnOnce(&mut dyn FnMut(usize, i32)) -> Result<(), nix::errno::Errno>,
    last: IoReq,
    out: &mut Vec<Completion>,
) -> Result<(), IoError> {
    wait(&mut |slot, res| {
        let result = u32::try_from(res).map_err(|_| res.saturating_neg());
        out.push(Completion { slot, result });
    })
    .map_err(|errno| IoError {
        errno: errno as i32,
        req: last,
    })
}

/// The io_uring op of a request.
fn ring_op(op: Op) -> RingOp {
    match op {
        Op::Read => RingOp::Read,
        Op::Write => RingOp::Write,
        Op::Flush => RingOp::Fsync,
        Op::FlushRange => RingOp::FsyncRange,
    }
}

/// NVMe passthrough (fio's `io_uring_cmd`, `cmd_type=nvme`): NVMe commands
/// through io_uring on the namespace's generic character device.
#[derive(Debug)]
pub struct CmdQueue {
    pub(super) ring: CmdRing,
    /// The character device's path (`/dev/ng0n1`), recorded.
    pub(super) char_device: String,
    /// `sq_thread_idle` as given with SQPOLL, milliseconds.
    pub(super) sq_thread_idle_ms: Option<u32>,
    /// The last request submitted, blamed if the ring itself fails.
    pub(super) last: IoReq,
    /// The target's mark, if opened for writing.
    pub(super) wrote: Option<Arc<WriteMark>>,
}

impl IoQueue for CmdQueue {
    fn depth(&self) -> usize {
        self.ring.depth()
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        let ring = &mut self.ring;
        ring_submit(
            |op| ring.push(slot, op, req.offset, req.len),
            req,
            self.wrote.as_ref(),
            &mut self.last,
        )
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        let ring = &mut self.ring;
        ring_reap(|done| ring.wait(min, done), self.last, out)
    }

    fn engine(&self) -> Option<EngineInfo> {
        let (nsid, lba) = self.ring.namespace();
        Some(EngineInfo {
            name: "io_uring_cmd".to_string(),
            setup_flags: setup::names(self.ring.flags())
                .into_iter()
                .map(str::to_string)
                .collect(),
            cmd_type: Some("nvme".to_string()),
            char_device: Some(self.char_device.clone()),
            nsid: Some(nsid),
            lba_bytes: Some(lba),
            sq_thread_idle_ms: (self.ring.flags() & setup::SQPOLL != 0).then(|| self.sq_thread_idle_ms.unwrap_or(0)),
            ..EngineInfo::default()
        })
    }
}

/// One job's queue: synchronous for depth 1, io_uring beyond, or the NVMe
/// passthrough when the test names it.
#[derive(Debug)]
pub enum DevQueue {
    /// pread/pwrite.
    Sync(SyncQueue),
    /// io_uring (boxed: the ring is several times larger than the sync queue).
    Uring(Box<UringQueue>),
    /// io_uring_cmd: NVMe passthrough.
    Cmd(Box<CmdQueue>),
}

impl IoQueue for DevQueue {
    fn depth(&self) -> usize {
        match self {
            DevQueue::Sync(q) => q.depth(),
            DevQueue::Uring(q) => q.depth(),
            DevQueue::Cmd(q) => q.depth(),
        }
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        match self {
            DevQueue::Sync(q) => q.submit(slot, req),
            DevQueue::Uring(q) => q.submit(slot, req),
            DevQueue::Cmd(q) => q.submit(slot, req),
        }
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        match self {
            DevQueue::Sync(q) => q.reap(min, out),
            DevQueue::Uring(q) => q.reap(min, out),
            DevQueue::Cmd(q) => q.reap(min, out),
        }
    }

    fn batched(&self) -> bool {
        matches!(self, DevQueue::Uring(_) | DevQueue::Cmd(_))
    }

    fn commit(&mut self) -> Result<(), IoError> {
        match self {
            DevQueue::Sync(_) => Ok(()),
            DevQueue::Uring(q) => q.ring.commit().map_err(|errno| IoError {
                errno: errno as i32,
                req: q.last,
            }),
            DevQueue::Cmd(q) => q.ring.commit().map_err(|errno| IoError {
                errno: errno as i32,
                req: q.last,
            }),
        }
    }

    fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        match self {
            // One request in flight: one write buffer serves every slot.
            DevQueue::Sync(q) => q.wbuf.as_mut()?.as_mut_slice().get_mut(..len),
            DevQueue::Uring(q) => q.ring.write_buf_mut(slot)?.get_mut(..len),
            DevQueue::Cmd(q) => q.ring.write_buf_mut(slot)?.get_mut(..len),
        }
    }

    fn read_buf(&self, slot: usize, len: usize) -> Option<&[u8]> {
        match self {
            DevQueue::Sync(q) => q.rbuf.as_slice().get(..len),
            DevQueue::Uring(q) => q.ring.buf(slot)?.get(..len),
            DevQueue::Cmd(q) => q.ring.buf(slot)?.get(..len),
        }
    }

    /// The read buffer of a slot (hdparm's twins run at depth 1: psync,
    /// or io_uring with fio's io_uring options).
    fn read_buf_mut(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        match self {
            DevQueue::Sync(q) => q.rbuf.as_mut_slice().get_mut(..len),
            DevQueue::Uring(q) => q.ring.buf_mut(slot)?.get_mut(..len),
            DevQueue::Cmd(q) => q.ring.buf_mut(slot)?.get_mut(..len),
        }
    }

    fn engine(&self) -> Option<EngineInfo> {
        match self {
            DevQueue::Sync(q) => q.engine(),
            DevQueue::Uring(q) => q.engine(),
            DevQueue::Cmd(q) => q.engine(),
        }
    }

    /// dd's close ([`IoQueue::end_close`]): on a block device, what its
    /// last close does to its page cache ([`crate::sys::blk::close_cache`]);
    /// a regular file's close does nothing of the kind, and NVMe
    /// passthrough has no page cache.
    fn end_close(&mut self) -> Result<(), IoError> {
        let file = match self {
            DevQueue::Sync(q) => &q.file,
            DevQueue::Uring(q) => q.ring.file(),
            DevQueue::Cmd(_) => return Ok(()),
        };
        let fail = |errno: i32| IoError {
            errno,
            req: IoReq {
                op: Op::Flush,
                offset: 0,
                len: 0,
            },
        };
        let block = file
            .metadata()
            .map_err(|e| fail(errno_of(&e)))?
            .file_type()
            .is_block_device();
        if !block {
            return Ok(());
        }
        crate::sys::blk::close_cache(file).map_err(|e| fail(e as i32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::engine::testkit::*;

    /// fio's ioengine on a loop device over /dev/shm: psync and io_uring as
    /// named at depth 1, SQPOLL with its idle time recorded; the NVMe
    /// passthrough refused (ENODEV: not an NVMe namespace, nothing opened);
    /// a test with hipri found unable to poll before it runs (queue/io_poll
    /// 0), the reason naming the device.
    #[test]
    fn ioengine_choices_on_a_loop_device() {
        use bench_core::spec::IoEngine;
        let Some(lo) = LoopDev::new("ioengine") else { return };
        let t = lo.target(false);
        let with = |ioengine, sqthread_poll| OpenSpec {
            ioengine,
            sqthread_poll,
            sq_thread_idle_ms: sqthread_poll.then_some(20),
            ..spec(Access::Direct, false, 1, 8192)
        };
        let q = t.open(&with(Some(IoEngine::IoUring), false)).expect("io_uring");
        assert_eq!(q.engine().map(|e| e.name), Some("io_uring".to_string()));
        let q = t.open(&with(Some(IoEngine::Psync), false)).expect("psync");
        assert!(matches!(q, DevQueue::Sync(_)));
        let mut q = t.open(&with(None, true)).expect("sqpoll");
        let e = q.engine().expect("engine");
        assert!(e.setup_flags.contains(&"SQPOLL".to_string()), "{e:?}");
        assert_eq!(e.sq_thread_idle_ms, Some(20));
        let done = run_batch_one(&mut q, 0, req(Op::Read, MIB, 8192));
        assert_eq!(done.result, Ok(8192));
        assert_eq!(q.read_buf(0, 8192).expect("buffer")[..], pattern(MIB, 8192)[..]);
        let e = t
            .open(&with(Some(IoEngine::IoUringCmd), false))
            .expect_err("no /dev/ng");
        assert_eq!(e.errno, libc::ENODEV);
        let name = lo.dev.trim_start_matches("/dev/");
        let info = bench_core::document::result::TargetInfo {
            path: lo.dev.clone(),
            name: Some(name.to_string()),
            ..Default::default()
        };
        let mut p = bench_core::spec::Params::defaults();
        p.hipri = true;
        let why =
            crate::run::engine::fast::refusal(crate::sysfs::root(), &info, &p).expect("a loop device does not poll");
        assert!(
            why.contains(&format!("{name} has no poll queues: queue/io_poll is 0")),
            "{why}"
        );
    }

    /// Reads at known offsets and writes verified in the backing file, for
    /// the synchronous engine (depth 1) and io_uring (depth 4).
    #[test]
    fn sync_and_uring_read_back_what_was_written() {
        let Some(lo) = LoopDev::new("rw") else { return };
        let t = lo.target(true);
        for depth in [1u32, 4] {
            let mut q = t.open(&spec(Access::Direct, true, depth, 65536)).expect("queue");
            assert_eq!(matches!(q, DevQueue::Sync(_)), depth == 1);
            assert_eq!(q.depth(), usize::try_from(depth).expect("fits"));
            let eng = q.engine().expect("engine");
            assert_eq!(eng.name, if depth == 1 { "psync" } else { "io_uring" });
            // The ring's requests name the registered file (fio's
            // registerfiles) and buffers (fixedbufs).
            assert_eq!((eng.registered_file, eng.fixed_bufs), (depth > 1, depth > 1), "{eng:?}");
            let slots = q.depth();
            // Reads at distinct offsets, each into its own slot.
            let reads: Vec<IoReq> = (0..slots)
                .map(|s| req(Op::Read, MIB * (3 + 2 * s as u64), 8192))
                .collect();
            for (slot, r) in reads.iter().enumerate() {
                let done = run_batch_one(&mut q, slot, *r);
                assert_eq!(done.result, Ok(8192), "depth {depth} read {r:?}");
                assert_eq!(
                    q.read_buf(slot, 8192).expect("read buffer")[..],
                    pattern(r.offset, 8192)[..],
                    "depth {depth} read {r:?}"
                );
            }
            // Writes of each slot's random buffer, then a flush.
            let base = MIB * (20 + 10 * u64::from(depth));
            let writes: Vec<IoReq> = (0..slots)
                .map(|s| req(Op::Write, base + 65536 * s as u64, 65536))
                .collect();
            let done = run_batch(&mut q, &writes);
            assert!(done.iter().all(|c| c.result == Ok(65536)), "depth {depth}: {done:?}");
            assert_eq!(run_batch(&mut q, &[req(Op::Flush, 0, 0)])[0].result, Ok(0));
            for (slot, w) in writes.iter().enumerate() {
                let sent = q.write_buf(slot, 65536).expect("write buffer").to_vec();
                assert!(sent.iter().any(|&b| b != 0), "write buffer is random, not zeros");
                assert_eq!(lo.backing(w.offset, 65536), sent, "depth {depth} slot {slot}");
            }
            if slots > 1 {
                let first = q.write_buf(0, 4096).expect("write buffer").to_vec();
                assert_ne!(
                    first[..],
                    q.write_buf(1, 4096).expect("write buffer")[..],
                    "slots hold different data"
                );
            }
        }
    }

    /// A range's flush (`Op::FlushRange`, sysbench's fsync of one file of
    /// its set) writes the range's dirty cached pages to the device, waits
    /// for them and flushes the device's cache, and writes no other page: a
    /// buffered write outside the range is still only in the page cache
    /// afterwards (an fdatasync would have written it too), until the
    /// flush of the whole target. The loop device passes each write
    /// straight to its backing file (direct I/O), so the file shows what
    /// reached the device. psync (depth 1) and io_uring (depth 4).
    #[test]
    fn flush_range_flushes_its_range_only() {
        // A sync() of another test (an hdparm twin's settle) would write b back too.
        let _no_sync = GLOBAL_SYNC.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(lo) = LoopDev::new("flushrange") else { return };
        let t = lo.target(true);
        for depth in [1u32, 4] {
            let (a, b) = (MIB * (2 + 4 * u64::from(depth)), MIB * (4 + 4 * u64::from(depth)));
            let mut q = t.open(&spec(Access::Buffered, true, depth, 65536)).expect("queue");
            let done = run_batch(&mut q, &[req(Op::Write, a, 65536)]);
            assert_eq!(done[0].result, Ok(65536), "depth {depth}");
            let sent_a = q.write_buf(0, 65536).expect("write buffer").to_vec();
            let done = run_batch(&mut q, &[req(Op::Write, b, 65536)]);
            assert_eq!(done[0].result, Ok(65536), "depth {depth}");
            let sent_b = q.write_buf(0, 65536).expect("write buffer").to_vec();
            assert!(
                lo.backing(a, 65536) == pattern(a, 65536),
                "depth {depth}: a is cached only"
            );
            let flushes = device_flushes(&lo.dev);
            let fr = req(Op::FlushRange, a - MIB, u32::try_from(2 * MIB).expect("fits"));
            assert_eq!(run_batch(&mut q, &[fr])[0].result, Ok(0), "depth {depth}");
            assert!(lo.backing(a, 65536) == sent_a, "depth {depth}: a written back");
            assert!(device_flushes(&lo.dev) > flushes, "depth {depth}: the cache flushed");
            assert!(
                lo.backing(b, 65536) == pattern(b, 65536),
                "depth {depth}: b outside the range"
            );
            assert_eq!(run_batch(&mut q, &[req(Op::Flush, 0, 0)])[0].result, Ok(0));
            assert!(lo.backing(b, 65536) == sent_b, "depth {depth}: the flush writes b");
        }
    }

    #[test]
    fn misaligned_direct_read_is_einval() {
        let Some(lo) = LoopDev::new("einval") else { return };
        let t = lo.target(false);
        for depth in [1, 2] {
            let mut q = t.open(&spec(Access::Direct, false, depth, 8192)).expect("queue");
            let done = run_batch(&mut q, &[req(Op::Read, 100, 4096)]);
            assert_eq!(done[0].result, Err(libc::EINVAL), "depth {depth}");
            // The queue still works afterwards.
            assert_eq!(
                run_batch(&mut q, &[req(Op::Read, 4096, 4096)])[0].result,
                Ok(4096),
                "depth {depth}"
            );
        }
    }

    #[test]
    fn submit_outside_the_queue_contract_is_refused() {
        let Some(lo) = LoopDev::new("contract") else { return };
        let t = lo.target(false);
        for depth in [1, 4] {
            let mut q = t.open(&spec(Access::Direct, false, depth, 4096)).expect("queue");
            let slots = q.depth();
            assert_eq!(
                q.submit(slots, req(Op::Read, 0, 4096)).map_err(|e| e.errno),
                Err(libc::EINVAL),
                "slot out of range"
            );
            assert_eq!(
                q.submit(0, req(Op::Read, 0, 8192)).map_err(|e| e.errno),
                Err(libc::EINVAL),
                "longer than max_len"
            );
            q.submit(0, req(Op::Read, 0, 4096)).expect("submit");
            assert_eq!(
                q.submit(0, req(Op::Read, 0, 4096)).map_err(|e| e.errno),
                Err(libc::EINVAL),
                "slot busy"
            );
            let mut out = Vec::new();
            q.reap(1, &mut out).expect("reap");
            assert_eq!(
                out,
                vec![Completion {
                    slot: 0,
                    result: Ok(4096)
                }]
            );
        }
        assert_eq!(
            t.open(&spec(Access::Direct, false, 0, 4096))
                .map(|_| ())
                .map_err(|e| e.errno),
            Err(libc::EINVAL)
        );
    }

    /// hdparm's twins on a real device: each read's buffer comes back with
    /// every 512th byte ANDed with 1 (hdparm's `read_big_block`), the
    /// others as read, through the buffered and the O_DIRECT sync queue.
    #[test]
    fn hdparm_twins_touch_every_512th_byte_on_a_loop_device() {
        let Some(lo) = LoopDev::new("touch") else { return };
        let t = lo.target(false);
        use bench_core::spec::Workload;
        for w in [Workload::CachedRead, Workload::BufferedRead, Workload::DirectRead] {
            let ts = bench_core::spec::TestSpec::new("t", w, |p| p.bs = bench_core::vocab::units::Bytes(2 * MIB));
            let mut step = bench_core::engine::plan::expand(&ts, &t.geometry())
                .expect("plan")
                .remove(0);
            step.limit = Limit {
                runtime: None,
                bytes: None,
                ios: Some(2),
                min_ios: 0,
            };
            bench_core::engine::runner::prepare(&step, &t, &MonoClock::new(), &Stop::new()).expect("prepare");
            let len = u32::try_from(2 * MIB).expect("fits");
            let mut q = t.open(&spec(step.access, false, 1, len)).expect("queue");
            let out = runner::run_job(&step, 0, &mut q, &MonoClock::new(), &Stop::new(), &mut |_| {}).expect("run");
            assert_eq!(out.read.ios, 2, "{w:?}");
            // The last read: offset 0 for -T, the second 2 MiB for -t.
            let at = if w == Workload::CachedRead { 0 } else { 2 * MIB };
            let buf = q.read_buf(0, 2 << 20).expect("read buffer");
            let mut want = pattern(at, 2 << 20);
            for b in want.iter_mut().step_by(512) {
                *b &= 1;
            }
            assert!(buf == &want[..], "{w:?}: touched bytes differ from read_big_block's");
        }
    }

    /// Verify on the real engines: the pread/pwrite queue (QD1) and io_uring
    /// (QD8, two jobs) write the known contents, read every written block
    /// back from the device (O_DIRECT) and count it; the backing file then
    /// holds exactly those contents at each written offset.
    #[test]
    fn verify_on_sync_and_uring_queues() {
        let Some(lo) = LoopDev::new("verify") else { return };
        let rw = Arc::new(lo.target(true));
        for (iodepth, jobs) in [(1u32, 1u32), (8, 2)] {
            let mut step = rand_step(0, iodepth, jobs, 200);
            step.verify = true;
            let r = ThreadedRunner::new(Arc::clone(&rw))
                .run_step(&step, &Stop::new(), &mut |_| {})
                .expect("verifying step");
            let writes = r.write.as_ref().map_or(0, |d| d.bytes);
            assert_eq!(writes, u64::from(jobs) * 200 * 4096, "QD{iodepth}");
            assert_eq!(r.verified_bytes, Some(writes), "QD{iodepth}: every write read back");
            let mut g = runner::OffsetGen::new(&step, 0);
            for _ in 0..200 {
                let req = g.next_req();
                let on_disk = lo.backing(req.offset, 4096);
                assert_eq!(
                    bench_core::engine::verify::first_mismatch(step.seed, req.offset, &on_disk),
                    None,
                    "QD{iodepth}: offset {}",
                    req.offset
                );
            }
        }
    }
}
