//! A step's untimed preparation: its fill, a cache drop or a warming read,
//! and the settle.

use alloc::vec::Vec;

use super::offsets::OffsetGen;
use super::request::one_request;
use super::{Stop, EPERM};
use crate::engine::scramble;
use crate::io::{Clock, IoError, IoQueue, IoReq, Op, OpenSpec, Target};
use crate::spec::{step_range, Prepare, Step};

/// The request size of a fill ([`fill`]): CrystalDiskMark writes its test
/// file in 1 MiB `WriteFile` calls (DiskBench.cpp `Init`, `BufSize`).
pub const FILL_BS: u32 = 1 << 20;

/// Do a step's untimed preparation: the reset of its zones
/// ([`reset_zones`]), its fill ([`fill`]), then drop caches
/// or warm the first request, then settle. Returns what the fill wrote
/// (`None`: the step does not fill).
///
/// `Warm` and `Position` read through a depth-1 queue opened read-only with
/// the step's access: the first request of job 0 (as a read), or the one
/// logical block just before it.
pub fn prepare<T: Target, C: Clock>(step: &Step, target: &T, clock: &C, stop: &Stop) -> Result<Option<u64>, IoError> {
    reset_zones(step, target)?;
    let filled = fill(step, target, clock, stop)?;
    prepare_io(step, target, clock)?;
    if step.settle.0 > 0 {
        target.settle(step.settle)?;
    }
    Ok(filled)
}

/// Reset the write pointers of a zoned step's zones ([`ZoneMap::reset`]),
/// untimed, before each pass, as fio resets a write job's zones before it
/// starts: each pass then writes empty zones from their start. A target
/// that cannot (not claimed for writing, not zoned) fails the step before
/// any of its I/O.
///
/// [`ZoneMap::reset`]: crate::spec::ZoneMap::reset
pub fn reset_zones<T: Target>(step: &Step, target: &T) -> Result<(), IoError> {
    for z in step.zones.iter().flat_map(|m| &m.reset) {
        target.reset_zones(z.start, z.len)?;
    }
    Ok(())
}

/// A step's fill ([`Step::fill`]), untimed: CrystalDiskMark's test file
/// preparation (DiskBench.cpp `Init`: `WriteFile` of a 1 MiB buffer over
/// the whole file, on a handle opened `FILE_FLAG_NO_BUFFERING`, before the
/// first test). The step's range is written once, sequentially from its
/// start, in requests of [`FILL_BS`] (the last one shorter if the range
/// ends sooner) at depth 1 with the step's access, then flushed once.
///
/// Departures from CrystalDiskMark, both on the side of a clean start:
/// its buffer is one 1 MiB block of `rand() % 256` written again and
/// again (a deduplicating drive stores it once); here each 512-byte block
/// is stamped with its offset and the time, as every write of the runner
/// (`crate::engine::scramble`), so no two are alike. CrystalDiskMark closes the
/// file without a flush; the flush here makes the data durable before the
/// first pass (for a buffered step too).
///
/// The queue is opened for writing, so a target that may not be written
/// refuses it ([`Target::open`]: EPERM) before any I/O: then nothing is
/// written and `Some(0)` is returned (a read test runs on the data already
/// there). A stop ends the fill after the request in flight. Returns the
/// bytes written; `None` if the step does not fill.
pub fn fill<T: Target, C: Clock>(step: &Step, target: &T, clock: &C, stop: &Stop) -> Result<Option<u64>, IoError> {
    if !step.fill {
        return Ok(None);
    }
    let (start, end) = step_range(step);
    let spec = OpenSpec {
        access: step.access,
        write: true,
        depth: 1,
        max_len: FILL_BS,
        // Not any job's seed: the fill's buffer is its own.
        seed: step.seed ^ 0xF111_F111_F111_F111,
        // pread/pwrite: the fill is preparation, not the test's engine.
        hipri: false,
        sqthread_poll: false,
        sqthread_poll_cpu: None,
        sq_thread_idle_ms: None,
        ioengine: None,
    };
    let mut q = match target.open(&spec) {
        Ok(q) => q,
        Err(e) if e.errno == EPERM => return Ok(Some(0)),
        Err(e) => return Err(e),
    };
    let mut comps = Vec::with_capacity(1);
    let mut off = start;
    while off < end && stop.reason().is_none() {
        let len = u32::try_from((end - off).min(u64::from(FILL_BS))).unwrap_or(FILL_BS);
        let req = IoReq {
            op: Op::Write,
            offset: off,
            len,
        };
        let now = clock.now();
        if let Some(buf) = q.write_buf(0, usize::try_from(len).unwrap_or(usize::MAX)) {
            scramble::scramble(buf, off, now);
        }
        one_request(&mut q, clock, req, &mut comps)?;
        off += u64::from(len);
    }
    if off > start {
        let flush = IoReq {
            op: Op::Flush,
            offset: 0,
            len: 0,
        };
        one_request(&mut q, clock, flush, &mut comps)?;
    }
    Ok(Some(off - start))
}

/// [`prepare`] without the settle.
fn prepare_io<T: Target, C: Clock>(step: &Step, target: &T, clock: &C) -> Result<(), IoError> {
    let first = OffsetGen::new(step, 0).next_req();
    let req = match step.prepare {
        Prepare::None => return Ok(()),
        Prepare::DropCaches => return target.drop_caches(),
        Prepare::Warm | Prepare::WarmThenDrop => IoReq { op: Op::Read, ..first },
        Prepare::Position => {
            let lb = target.geometry().logical_block;
            let Some(offset) = first.offset.checked_sub(u64::from(lb)) else {
                return Ok(());
            };
            IoReq {
                op: Op::Read,
                offset,
                len: lb,
            }
        }
    };
    let spec = OpenSpec::plain(step.access, false, 1, req.len, step.seed);
    let mut q = target.open(&spec)?;
    let mut comps = Vec::with_capacity(1);
    one_request(&mut q, clock, req, &mut comps)?;
    drop(q);
    if step.prepare == Prepare::WarmThenDrop {
        // hdparm's time_cache: flush_buffer_cache after the first read.
        target.drop_caches()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::result::Status;
    use crate::engine::runner::testutil::{run_on, step, Rec};
    use crate::engine::runner::{SerialRunner, StepRunner};
    use crate::engine::sim::{SimClock, SimDisk, SimModel};
    use crate::io::{Completion, IoQueue};
    use crate::spec::{Pattern, TestSpec};
    use crate::vocab::units::Nanos;
    use alloc::string::String;
    use alloc::vec;

    /// Warm reads the first request once, untimed.
    #[test]
    fn warm_and_position_prepare() {
        let disk = SimDisk::new(SimModel::hdd(1 << 30), false);
        let mut s = step(
            Pattern::Fixed {
                op: Op::Read,
                offset: 1 << 20,
            },
            1 << 21,
            1,
        );
        s.prepare = Prepare::Warm;
        prepare(&s, &disk, &disk.clock, &Stop::new()).unwrap();
        assert_eq!(
            (disk.counts().reads, disk.counts().read_bytes, disk.head()),
            (1, 1 << 21, 3 << 20)
        );
        s.prepare = Prepare::Position;
        s.pattern = Pattern::Seq {
            op: Op::Read,
            start: 8 << 20,
            end: 16 << 20,
        };
        prepare(&s, &disk, &disk.clock, &Stop::new()).unwrap();
        assert_eq!((disk.counts().reads, disk.head()), (2, 8 << 20));
    }

    /// A log of what hdparm's twins do to a target, in order.
    type Log = alloc::rc::Rc<core::cell::RefCell<Vec<String>>>;

    /// A target that logs each queue opened (access), each read (offset,
    /// len) and each cache drop. Reads return 0xff bytes; each read and each
    /// close logs how many bytes the previous read left at 1 (`buf[i] &= 1`
    /// touched them) and at 0xff (untouched).
    struct Logger {
        size: u64,
        log: Log,
    }

    struct LogQueue {
        log: Log,
        buf: Vec<u8>,
        done: Vec<Completion>,
    }

    impl LogQueue {
        fn census(&self) -> String {
            let ones = self.buf.iter().filter(|&&b| b == 1).count();
            let ff = self.buf.iter().filter(|&&b| b == 0xff).count();
            alloc::format!("touched {ones} untouched {ff}")
        }
    }

    impl Drop for LogQueue {
        fn drop(&mut self) {
            let c = self.census();
            self.log.borrow_mut().push(alloc::format!("close, {c}"));
        }
    }

    impl IoQueue for LogQueue {
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            let c = self.census();
            let line = alloc::format!("read {} {} after {c}", req.offset, req.len);
            self.log.borrow_mut().push(line);
            self.buf = alloc::vec![0xff; req.len as usize];
            self.done.push(Completion {
                slot,
                result: Ok(req.len),
            });
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            out.append(&mut self.done);
            Ok(())
        }
        fn read_buf(&self, _slot: usize, len: usize) -> Option<&[u8]> {
            self.buf.get(..len)
        }
        fn read_buf_mut(&mut self, _slot: usize, len: usize) -> Option<&mut [u8]> {
            self.buf.get_mut(..len)
        }
    }

    impl Target for Logger {
        type Queue = LogQueue;
        fn geometry(&self) -> crate::io::Geometry {
            crate::io::Geometry {
                size: self.size,
                logical_block: 512,
                physical_block: 4096,
            }
        }
        fn open(&self, spec: &OpenSpec) -> Result<LogQueue, IoError> {
            let line = alloc::format!("open {:?} depth {}", spec.access, spec.depth);
            self.log.borrow_mut().push(line);
            Ok(LogQueue {
                log: self.log.clone(),
                buf: Vec::new(),
                done: Vec::new(),
            })
        }
        fn drop_caches(&self) -> Result<(), IoError> {
            self.log.borrow_mut().push("drop caches".into());
            Ok(())
        }
        fn settle(&self, for_: Nanos) -> Result<(), IoError> {
            self.log
                .borrow_mut()
                .push(alloc::format!("sync, sleep {} s", for_.0 / 1_000_000_000));
            Ok(())
        }
    }

    /// Runs the one step of hdparm twin `w` (2 MiB, iodepth 8 asked for,
    /// `n` reads) on a logging target of `size` bytes; its log.
    fn hdparm_log(w: crate::spec::Workload, size: u64, n: u64) -> Vec<String> {
        let spec = crate::spec::TestSpec::new("t", w, |p| (p.bs, p.iodepth) = (crate::vocab::units::Bytes(2 << 20), 8));
        let t = Logger {
            size,
            log: Log::default(),
        };
        let mut steps = crate::engine::plan::expand(&spec, &t.geometry()).unwrap();
        assert_eq!(steps.len(), 1);
        let s = &mut steps[0];
        // The runtime bound would make the count depend on the clock.
        s.limit.runtime = None;
        s.limit.ios = Some(n);
        let clock = SimClock::default();
        let mut r = SerialRunner {
            target: &t,
            clock: &clock,
        };
        r.run_step(s, &Stop::new(), &mut |_| ()).unwrap();
        let log = t.log.borrow().clone();
        log
    }

    /// hdparm -T (`time_cache`): one untimed read of the first 2 MiB, then
    /// `flush_buffer_cache` (BLKFLSBUF) and `sleep(1)`, then `seek_to_zero` +
    /// `read_big_block` of offset 0 one at a time, each read touched at
    /// every 512th byte (`buf[i] &= 1`) before the next.
    #[test]
    fn cached_read_is_hdparm_time_cache() {
        let m = 2 << 20;
        let log = hdparm_log(crate::spec::Workload::CachedRead, 1 << 30, 3);
        let want = [
            "open Buffered depth 1".into(),
            "read 0 2097152 after touched 0 untouched 0".into(),
            "close, touched 0 untouched 2097152".into(),
            "drop caches".into(),
            "sync, sleep 1 s".into(),
            "open Buffered depth 1".into(),
            "read 0 2097152 after touched 0 untouched 0".into(),
            alloc::format!("read 0 2097152 after touched {} untouched {}", m / 512, m - m / 512),
            alloc::format!("read 0 2097152 after touched {} untouched {}", m / 512, m - m / 512),
            alloc::format!("close, touched {} untouched {}", m / 512, m - m / 512),
        ];
        assert_eq!(log, want);
    }

    /// hdparm -t (`time_device`): cold (every hdparm run ends with
    /// `flush_buffer_cache`), `sync(); sleep(3)` (`prepare_timing_buf`),
    /// then sequential 2 MiB buffered `read_big_block`s
    /// from 0, one at a time, each touched, stopping at the device's last
    /// whole 2 MiB (`max_iterations`); -t --direct: the same on O_DIRECT,
    /// nothing dropped.
    #[test]
    fn buffered_and_direct_read_are_hdparm_time_device() {
        let m: u64 = 2 << 20;
        let touched = alloc::format!("touched {} untouched {}", m / 512, m - m / 512);
        // 7 MiB: three whole 2 MiB blocks, though 5 reads are allowed.
        for (w, access, drop) in [
            (crate::spec::Workload::BufferedRead, "Buffered", true),
            (crate::spec::Workload::DirectRead, "Direct", false),
        ] {
            let log = hdparm_log(w, 7 << 20, 5);
            let mut want: Vec<String> = Vec::new();
            if drop {
                want.push("drop caches".into());
            }
            // prepare_timing_buf: sync(); sleep(3).
            want.push("sync, sleep 3 s".into());
            want.push(alloc::format!("open {access} depth 1"));
            want.push("read 0 2097152 after touched 0 untouched 0".into());
            want.push(alloc::format!("read {m} {m} after {touched}"));
            want.push(alloc::format!("read {} {m} after {touched}", 2 * m));
            want.push(alloc::format!("close, {touched}"));
            assert_eq!(log, want, "{w:?}");
        }
    }

    /// `fill` (CrystalDiskMark's test file, DiskBench.cpp `Init`): before
    /// the first pass, untimed, the test's range is written once, in order,
    /// in 1 MiB requests from one queue, then flushed; nothing else writes
    /// (the later passes do not fill again); every 512-byte block of the
    /// range then holds different, non-zero data; the step records the
    /// bytes filled.
    #[test]
    fn fill_writes_the_range_once_before_the_passes_with_random_data() {
        use crate::spec::Workload;
        use crate::vocab::units::Bytes;
        let area = 4u64 << 20;
        let t = Rec::new(16 << 20, true, vec![0]);
        let spec = TestSpec::new("t", Workload::SeqRead, |p| {
            (p.bs, p.length, p.runtime, p.size) = (Bytes(64 << 10), Some(Bytes(area)), None, Some(Bytes(1 << 20)));
            (p.fill, p.passes, p.warmup) = (true, 3, 1);
        });
        let r = run_on(&t, &t.disk.clock, &spec);
        assert_eq!(r.status, Status::Ok);
        let log = t.log();
        let fill: Vec<IoReq> = log.iter().filter(|(q, _)| *q == 0).map(|(_, r)| *r).collect();
        let mut want: Vec<IoReq> = (0..4)
            .map(|i| IoReq {
                op: Op::Write,
                offset: i << 20,
                len: 1 << 20,
            })
            .collect();
        want.push(IoReq {
            op: Op::Flush,
            offset: 0,
            len: 0,
        });
        assert_eq!(fill, want, "the fill: the whole range once, in order, then a flush");
        // The fill comes first, and nothing after it writes.
        assert!(log[..5].iter().all(|(q, _)| *q == 0));
        assert!(log[5..].iter().all(|(q, r)| *q > 0 && r.op == Op::Read));
        // Four passes (a warm-up and three), each reading 1 MiB.
        assert_eq!(t.opens.get(), 5);
        assert_eq!(log[5..].len(), 4 * 16);
        let data = t.data.borrow();
        let n = usize::try_from(area).unwrap();
        let mut blocks = alloc::collections::BTreeSet::new();
        for b in data[..n].chunks_exact(512) {
            assert!(b.iter().any(|&x| x != 0), "a block left zero");
            assert!(blocks.insert(b.to_vec()), "two blocks alike");
        }
        assert!(data[n..].iter().all(|&x| x == 0), "written past the range");
        assert_eq!(r.steps[0].filled_bytes, Some(area));
        assert_eq!(
            r.steps[0].read.as_ref().unwrap().bytes,
            1 << 20,
            "the fill is not counted"
        );
        assert!(r.steps[0].write.is_none() && r.steps[0].flush.is_none());
    }

    /// A fill on a target that may not be written writes nothing (its
    /// write queue is refused before any I/O), the read test runs on the
    /// data already there, and the step says it was not filled (0 bytes).
    #[test]
    fn fill_on_a_read_only_target_writes_nothing() {
        use crate::spec::Workload;
        use crate::vocab::units::Bytes;
        let disk = SimDisk::new(SimModel::ssd(16 << 20), false);
        let spec = TestSpec::new("t", Workload::RandRead, |p| {
            (p.length, p.runtime, p.size, p.fill) = (Some(Bytes(4 << 20)), None, Some(Bytes(64 << 10)), true);
        });
        let r = run_on(&disk, &disk.clock, &spec);
        assert_eq!(r.status, Status::Ok);
        let c = disk.counts();
        assert_eq!((c.writes, c.write_bytes, c.flushes), (0, 0, 0));
        assert_eq!(c.reads, 16);
        assert_eq!(r.steps[0].filled_bytes, Some(0));
        assert_eq!(r.steps[0].read.as_ref().unwrap().ios, 16);
    }
}
