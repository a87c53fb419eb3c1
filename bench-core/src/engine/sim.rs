//! A simulated disk with a seek-time and zone-rate model and a deterministic
//! clock, so the runner, the workloads and the statistics can be checked
//! exactly, in milliseconds, without hardware.
//!
//! The model: service time of a request = command overhead + seek time (zero
//! when the request starts where the previous one ended) + len / rate(offset),
//! where the rate falls linearly from `outer_rate` at offset 0 to
//! `inner_rate` at the end (zoned recording), and the seek time grows with
//! the square root of the distance from `track_to_track` to `full_stroke`.
//! Requests are served one at a time in submission order.

use alloc::collections::VecDeque;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::io::{Clock, Completion, Geometry, IoError, IoQueue, IoReq, Op, OpenSpec, Target};
use crate::vocab::units::Nanos;

/// EPERM: a write queue on a target not permitted for writing.
pub const EPERM: i32 = 1;
/// EIO: the injected media error.
pub const EIO: i32 = 5;
/// EBADF: a write on a queue opened read-only (as pwrite on an O_RDONLY fd).
pub const EBADF: i32 = 9;
/// EINVAL: a request out of bounds, misaligned, empty or too long.
pub const EINVAL: i32 = 22;

/// The model's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimModel {
    /// Size, bytes.
    pub size: u64,
    /// Logical block size, bytes.
    pub logical_block: u32,
    /// Transfer rate at offset 0, bytes per second.
    pub outer_rate: f64,
    /// Transfer rate at the last byte, bytes per second.
    pub inner_rate: f64,
    /// Seek time for the shortest non-zero distance, nanoseconds.
    pub track_to_track_ns: u64,
    /// Seek time across the whole disk, nanoseconds.
    pub full_stroke_ns: u64,
    /// Fixed cost of every command, nanoseconds.
    pub command_overhead_ns: u64,
    /// Cost of a flush, nanoseconds.
    pub flush_ns: u64,
}

impl SimModel {
    /// A 7200 rpm-like disk of `size` bytes: 200 MB/s outside, 100 MB/s
    /// inside, 0.5 ms track to track, 16 ms full stroke, 50 us per command.
    pub fn hdd(size: u64) -> SimModel {
        SimModel {
            size,
            logical_block: 512,
            outer_rate: 200e6,
            inner_rate: 100e6,
            track_to_track_ns: 500_000,
            full_stroke_ns: 16_000_000,
            command_overhead_ns: 50_000,
            flush_ns: 2_000_000,
        }
    }
    /// An SSD-like disk: flat 500 MB/s, no seek time, 20 us per command
    /// (and 100 us per flush).
    pub fn ssd(size: u64) -> SimModel {
        SimModel {
            size,
            logical_block: 512,
            outer_rate: 500e6,
            inner_rate: 500e6,
            track_to_track_ns: 0,
            full_stroke_ns: 0,
            command_overhead_ns: 20_000,
            flush_ns: 100_000,
        }
    }
    /// Transfer rate at `offset`, bytes per second: linear from
    /// `outer_rate` at 0 to `inner_rate` at the last byte (`size - 1`).
    pub fn rate_at(&self, offset: u64) -> f64 {
        if self.size <= 1 {
            return self.outer_rate;
        }
        #[allow(clippy::cast_precision_loss)] // a fraction: 53 bits of it are plenty
        let frac = offset.min(self.size - 1) as f64 / (self.size - 1) as f64;
        self.outer_rate + (self.inner_rate - self.outer_rate) * frac
    }
    /// Seek time over `distance` bytes (0 for 0): `track_to_track +
    /// (full_stroke - track_to_track) * sqrt(distance / size)`, distance
    /// capped at the size, rounded to the nearest nanosecond. Integer
    /// arithmetic (sqrt in 32.32 fixed point), so every machine agrees.
    pub fn seek_ns(&self, distance: u64) -> u64 {
        if distance == 0 {
            return 0;
        }
        let size = self.size.max(1);
        let d = distance.min(size);
        // (d / size) in 0.64 fixed point (2^64 for d == size), its square
        // root in 0.32 fixed point.
        let frac = (u128::from(d) << 64) / u128::from(size);
        let root = frac.isqrt();
        let span = u128::from(self.full_stroke_ns.saturating_sub(self.track_to_track_ns));
        let extra = (span * root + (1 << 31)) >> 32;
        self.track_to_track_ns
            .saturating_add(u64::try_from(extra).unwrap_or(u64::MAX))
    }
    /// Time to transfer `len` bytes at `offset`, rounded to the nearest
    /// nanosecond.
    pub fn transfer_ns(&self, offset: u64, len: u64) -> u64 {
        #[allow(clippy::cast_precision_loss)] // request lengths are far below 2^53
        let t = len as f64 * 1e9 / self.rate_at(offset);
        round_ns(t)
    }
    /// Service time of a read or write of `len` bytes at `offset` with the
    /// head at `head`: command overhead + seek + transfer.
    pub fn service_ns(&self, head: u64, offset: u64, len: u64) -> u64 {
        self.command_overhead_ns + self.seek_ns(head.abs_diff(offset)) + self.transfer_ns(offset, len)
    }
}

/// A non-negative duration in float nanoseconds, rounded to the nearest
/// integer (no `f64::round` in core).
fn round_ns(t: f64) -> u64 {
    if t.is_nan() || t <= 0.0 {
        return 0;
    }
    // Saturating float-to-int conversion of a non-negative value: exact for
    // the durations the model produces (far below 2^53 ns).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let r = (t + 0.5) as u64;
    r
}

/// The simulated clock: time moves only when the disk serves a request.
#[derive(Clone, Debug, Default)]
pub struct SimClock(Rc<Cell<u64>>);

impl SimClock {
    /// Move the clock forward.
    pub fn advance(&self, by: Nanos) {
        self.0.set(self.0.get() + by.0);
    }
}

impl Clock for SimClock {
    fn now(&self) -> Nanos {
        Nanos(self.0.get())
    }
}

/// Requests served by a simulated disk, all queues together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimCounts {
    /// Reads served (including failed ones).
    pub reads: u64,
    /// Writes served.
    pub writes: u64,
    /// Flushes served.
    pub flushes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One request a [`SimDisk`] served, as its log keeps it ([`SimDisk::record`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Served {
    /// The request, as submitted (a flush has no offset or length).
    pub req: IoReq,
    /// When its service began.
    pub start: Nanos,
    /// When it completed (`start` for a request refused at once).
    pub end: Nanos,
    /// Requests in flight on its queue when its service began, itself
    /// included: the depth the disk saw.
    pub in_flight: usize,
}

/// A simulated disk: a [`Target`] over a [`SimModel`] and a [`SimClock`].
///
/// Every queue opened on it shares the clock, the head position, the
/// counters and the log. Buffered access behaves as direct (no page cache
/// is modelled).
#[derive(Clone, Debug)]
pub struct SimDisk {
    /// The model.
    pub model: SimModel,
    /// The clock that serving requests advances.
    pub clock: SimClock,
    /// True if queues that write may be opened.
    pub writable: bool,
    /// Inject media errors: a read or write covering any of these bytes
    /// fails with EIO (after its service time).
    pub fail_at: Vec<u64>,
    /// Inject slow blocks: a request covering the byte takes this much
    /// longer (a sector the drive read only after retries).
    pub slow_at: Vec<(u64, Nanos)>,
    head: Rc<Cell<u64>>,
    counts: Rc<Cell<SimCounts>>,
    log: Rc<RefCell<Option<Vec<Served>>>>,
}

impl SimDisk {
    /// A disk with its head at 0, a fresh clock at 0, no injected error.
    pub fn new(model: SimModel, writable: bool) -> SimDisk {
        SimDisk {
            model,
            clock: SimClock::default(),
            writable,
            fail_at: Vec::new(),
            slow_at: Vec::new(),
            head: Rc::new(Cell::new(0)),
            counts: Rc::new(Cell::new(SimCounts::default())),
            log: Rc::default(),
        }
    }
    /// Log every request served from now on, by any queue, in service
    /// order (an empty log again if one was kept). Off by default.
    pub fn record(&self) {
        *self.log.borrow_mut() = Some(Vec::new());
    }
    /// The requests served since [`SimDisk::record`] (none if it was not
    /// called).
    pub fn served(&self) -> Vec<Served> {
        self.log.borrow().clone().unwrap_or_default()
    }
    /// Where the last request ended.
    pub fn head(&self) -> u64 {
        self.head.get()
    }
    /// What was served so far.
    pub fn counts(&self) -> SimCounts {
        self.counts.get()
    }
}

impl Target for SimDisk {
    type Queue = SimQueue;

    fn geometry(&self) -> Geometry {
        Geometry {
            size: self.model.size,
            logical_block: self.model.logical_block,
            physical_block: self.model.logical_block.max(4096),
        }
    }

    fn open(&self, spec: &OpenSpec) -> Result<SimQueue, IoError> {
        let req = IoReq {
            op: if spec.write { Op::Write } else { Op::Read },
            offset: 0,
            len: 0,
        };
        if spec.write && !self.writable {
            return Err(IoError { errno: EPERM, req });
        }
        if spec.depth == 0 {
            return Err(IoError { errno: EINVAL, req });
        }
        Ok(SimQueue {
            model: self.model,
            clock: self.clock.clone(),
            head: Rc::clone(&self.head),
            counts: Rc::clone(&self.counts),
            log: Rc::clone(&self.log),
            fail_at: self.fail_at.clone(),
            slow_at: self.slow_at.clone(),
            depth: usize::try_from(spec.depth).unwrap_or(usize::MAX),
            max_len: spec.max_len,
            write: spec.write,
            fifo: VecDeque::new(),
        })
    }

    fn drop_caches(&self) -> Result<(), IoError> {
        Ok(())
    }

    /// Nothing is dirty (no page cache is modelled); the idle time passes
    /// on the clock, with no I/O.
    fn settle(&self, for_: Nanos) -> Result<(), IoError> {
        self.clock.advance(for_);
        Ok(())
    }
}

/// One job's queue on a [`SimDisk`]: requests wait in submission order and
/// are served, one at a time, when reaped.
#[derive(Debug)]
pub struct SimQueue {
    model: SimModel,
    clock: SimClock,
    head: Rc<Cell<u64>>,
    counts: Rc<Cell<SimCounts>>,
    log: Rc<RefCell<Option<Vec<Served>>>>,
    fail_at: Vec<u64>,
    slow_at: Vec<(u64, Nanos)>,
    depth: usize,
    max_len: u32,
    write: bool,
    fifo: VecDeque<(usize, IoReq)>,
}

impl SimQueue {
    /// Serve one request: advance the clock by its service time and return
    /// its result. Invalid requests fail with EINVAL at once.
    fn serve(&mut self, req: IoReq) -> Result<u32, i32> {
        let m = &self.model;
        let mut c = self.counts.get();
        let result = match req.op {
            // A range's flush is a flush: the model has no page cache.
            Op::Flush | Op::FlushRange => {
                if !self.write {
                    return Err(EBADF);
                }
                self.clock.advance(Nanos(m.flush_ns));
                c.flushes += 1;
                Ok(0)
            }
            Op::Read | Op::Write => {
                let lb = u64::from(m.logical_block.max(1));
                let len = u64::from(req.len);
                if req.op == Op::Write && !self.write {
                    return Err(EBADF);
                }
                if len == 0
                    || req.len > self.max_len
                    || req.offset % lb != 0
                    || len % lb != 0
                    || req.offset.checked_add(len).is_none_or(|end| end > m.size)
                {
                    return Err(EINVAL);
                }
                let covers = |f: u64| f >= req.offset && f < req.offset + len;
                let slow: u64 = self.slow_at.iter().filter(|(f, _)| covers(*f)).map(|(_, d)| d.0).sum();
                let t = m.service_ns(self.head.get(), req.offset, len) + slow;
                self.clock.advance(Nanos(t));
                self.head.set(req.offset + len);
                if req.op == Op::Read {
                    c.reads += 1;
                    c.read_bytes += len;
                } else {
                    c.writes += 1;
                    c.write_bytes += len;
                }
                if self.fail_at.iter().any(|&f| covers(f)) {
                    Err(EIO)
                } else {
                    Ok(req.len)
                }
            }
        };
        self.counts.set(c);
        result
    }
}

impl IoQueue for SimQueue {
    fn depth(&self) -> usize {
        self.depth
    }

    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        if slot >= self.depth || self.fifo.len() >= self.depth {
            return Err(IoError { errno: EINVAL, req });
        }
        self.fifo.push_back((slot, req));
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        let mut done = 0;
        while done < min.max(1) {
            let Some((slot, req)) = self.fifo.pop_front() else {
                break;
            };
            let (start, in_flight) = (self.clock.now(), self.fifo.len() + 1);
            let result = self.serve(req);
            if let Some(log) = self.log.borrow_mut().as_mut() {
                let end = self.clock.now();
                log.push(Served {
                    req,
                    start,
                    end,
                    in_flight,
                });
            }
            out.push(Completion { slot, result });
            done += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::result::{Status, TestResult};
    use crate::engine::plan::expand;
    use crate::engine::runner::{run_test, SerialRunner};
    use crate::spec::{Params, TestSpec, Workload};
    use crate::vocab::units::{Bytes, GIB, KIB, MIB};

    fn spec(workload: Workload, f: impl FnOnce(&mut Params)) -> TestSpec {
        TestSpec::new("t", workload, f)
    }

    fn run(disk: &SimDisk, spec: &TestSpec) -> TestResult {
        let steps = expand(spec, &disk.geometry()).unwrap();
        let mut r = SerialRunner {
            target: disk,
            clock: &disk.clock,
        };
        run_test(
            spec,
            "sim:0",
            &steps,
            &mut r,
            &crate::engine::runner::Stop::new(),
            &mut |_| (),
        )
    }

    /// A flat disk whose 4 KiB reads take exactly 10 us: 1808 ns of command
    /// overhead + 4096 B at 500 MB/s (8192 ns), no seek time.
    fn flat_10us() -> SimModel {
        SimModel {
            command_overhead_ns: 1808,
            ..SimModel::ssd(GIB)
        }
    }

    /// Service time computed from the model's description, independently of
    /// `service_ns`: overhead + the square-root seek (float) + transfer.
    fn expected_service(m: &SimModel, head: u64, offset: u64, len: u64) -> f64 {
        let d = head.abs_diff(offset);
        let seek = if d == 0 {
            0.0
        } else {
            let span = (m.full_stroke_ns - m.track_to_track_ns) as f64;
            m.track_to_track_ns as f64 + (span * (d.min(m.size) as f64 / m.size as f64).sqrt()).round()
        };
        m.command_overhead_ns as f64 + seek + (len as f64 * 1e9 / m.rate_at(offset)).round()
    }

    #[test]
    fn model_figures() {
        let m = SimModel::hdd(1_000_001);
        assert_eq!(m.rate_at(0), 200e6);
        assert_eq!(m.rate_at(1_000_000), 100e6);
        assert_eq!(m.rate_at(500_000), 150e6);
        assert_eq!(m.seek_ns(0), 0);
        assert_eq!(m.seek_ns(m.size), 16_000_000);
        assert_eq!(m.seek_ns(u64::MAX), 16_000_000);
        // A quarter of the way: ttt + span * 0.5.
        let m = SimModel::hdd(4 * GIB);
        assert_eq!(m.seek_ns(GIB), 500_000 + 7_750_000);
        for d in [1, 512, 4096, MIB, 3 * GIB + 17] {
            let want = expected_service(&m, 0, d, 0) - m.command_overhead_ns as f64;
            assert!(
                (m.seek_ns(d) as f64 - want).abs() <= 1.0,
                "{d}: {} vs {want}",
                m.seek_ns(d)
            );
        }
        assert_eq!(m.transfer_ns(0, 2_000_000), 10_000_000);
        assert_eq!(SimModel::ssd(GIB).seek_ns(GIB), 0);
    }

    #[test]
    fn queue_validates_and_serves_in_order() {
        let disk = SimDisk::new(SimModel::ssd(MIB), false);
        let open = |write| OpenSpec::plain(crate::io::Access::Direct, write, 4, 4096, 1);
        assert_eq!(disk.open(&open(true)).unwrap_err().errno, EPERM);
        let mut q = disk.open(&open(false)).unwrap();
        let reqs = [
            IoReq {
                op: Op::Read,
                offset: 0,
                len: 4096,
            },
            IoReq {
                op: Op::Read,
                offset: 100,
                len: 512,
            }, // misaligned
            IoReq {
                op: Op::Read,
                offset: MIB - 512,
                len: 1024,
            }, // past the end
            IoReq {
                op: Op::Write,
                offset: 0,
                len: 512,
            }, // read-only queue
        ];
        for (slot, r) in reqs.iter().enumerate() {
            q.submit(slot, *r).unwrap();
        }
        assert_eq!(q.submit(3, reqs[0]).unwrap_err().errno, EINVAL); // queue full
        let mut out = Vec::new();
        q.reap(1, &mut out).unwrap();
        assert_eq!(
            out,
            [Completion {
                slot: 0,
                result: Ok(4096)
            }]
        );
        assert_eq!(disk.clock.now(), Nanos(20_000 + 8192));
        q.reap(3, &mut out).unwrap();
        let results: Vec<_> = out.iter().map(|c| c.result).collect();
        assert_eq!(results, [Ok(4096), Err(EINVAL), Err(EINVAL), Err(EBADF)]);
        // Invalid requests take no time.
        assert_eq!(disk.clock.now(), Nanos(28_192));
        assert_eq!(disk.head(), 4096);
    }

    /// (a) seek_profile recovers the model: each section's mean equals the
    /// mean of overhead + seek + transfer over diskinfo's positions,
    /// recomputed here from the algorithm's table.
    #[test]
    fn seek_profile_recovers_model() {
        let m = SimModel::hdd(64 * GIB);
        let disk = SimDisk::new(m, false);
        let res = run(&disk, &spec(Workload::SeekProfile, |_| ()));
        assert_eq!(res.status, Status::Ok);
        let n = m.size / 512;
        let step = 16384; // 2^27 / 800 -> 131072, capped
        let mut sections: Vec<(&str, Vec<u64>)> = Vec::new();
        let pairs = |count: u64, a: &dyn Fn(u64) -> u64, b: &dyn Fn(u64) -> u64| {
            (0..count).flat_map(|i| [a(i), b(i)]).collect::<Vec<u64>>()
        };
        sections.push(("full_stroke", pairs(125, &|i| i * step, &|i| n - step - i * step)));
        sections.push((
            "half_stroke",
            pairs(125, &|i| n / 4 + i * step, &|i| 3 * n / 4 + i * step),
        ));
        sections.push((
            "quarter_stroke",
            pairs(250, &|i| n / 4 + i * step, &|i| n / 2 + i * step),
        ));
        sections.push(("short_forward", (0..400).map(|i| n / 2 + i * step).collect()));
        sections.push(("short_backward", (0..400).map(|i| n / 2 - i * step).collect()));
        sections.push(("seq_outer", (0..2048).collect()));
        sections.push(("seq_inner", (0..2048).map(|i| n - 2048 + i).collect()));
        let mut head = 0;
        let got = &res.summary.seek_ns;
        assert_eq!(got.len(), 7);
        for ((label, sectors), fig) in sections.iter().zip(got) {
            let mut sum = 0.0;
            for &s in sectors {
                sum += expected_service(&m, head, s * 512, 512);
                head = s * 512 + 512;
            }
            let want = sum / sectors.len() as f64;
            assert_eq!(fig.label, *label);
            assert!((fig.value - want).abs() <= 1.0, "{label}: {} vs {want}", fig.value);
        }
        let v: Vec<f64> = got.iter().map(|f| f.value).collect();
        assert!(v[0] > v[1] && v[1] > v[2] && v[2] > v[3] && v[2] > v[4], "{v:?}");
        // Sequential sections: every read but the first (which comes from
        // the previous section's position) has no seek.
        for st in &res.steps[5..] {
            let lat = &st.read.as_ref().unwrap().lat_ns;
            let off = if st.label == "seq_outer" {
                0
            } else {
                m.size - 2048 * 512
            };
            let base = m.command_overhead_ns + m.transfer_ns(off, 512);
            assert_eq!(lat.min, base, "{}", st.label);
            assert!(lat.percentiles.iter().find(|p| p.p == 99.0).unwrap().ns <= base + base / 100);
        }
    }

    fn zone_rates(res: &TestResult) -> Vec<(String, f64)> {
        res.steps
            .iter()
            .map(|s| (s.label.clone(), s.read.as_ref().unwrap().bytes_per_sec))
            .collect()
    }

    /// (b) zones recover the model's rates; exactly (from the model's
    /// service times) with its own overhead, and within 0.5% of the rate at
    /// the zone's middle when the overhead is small; the surface falls.
    #[test]
    fn zones_recover_model() {
        for m in [
            SimModel::hdd(64 * GIB),
            SimModel {
                command_overhead_ns: 5_000,
                ..SimModel::hdd(64 * GIB)
            },
        ] {
            let disk = SimDisk::new(m, false);
            let res = run(&disk, &spec(Workload::Zones, |p| p.points = 16));
            assert_eq!(res.status, Status::Ok);
            let rates = zone_rates(&res);
            assert_eq!(rates.len(), 3 + 16);
            for (st, (label, got)) in res.steps.iter().zip(&rates) {
                let (a, b) = (st.range_start, st.range_end);
                // No seek: the untimed positioning read ends where the zone starts.
                let time: f64 = (a..b).step_by(1 << 20).map(|o| expected_service(&m, o, o, MIB)).sum();
                let exact = (b - a) as f64 * 1e9 / time;
                assert!((got / exact - 1.0).abs() < 1e-9, "{label}: {got} vs {exact}");
                if m.command_overhead_ns == 5_000 {
                    let model = m.rate_at((a + b) / 2);
                    assert!((got / model - 1.0).abs() < 0.005, "{label}: {got} vs model {model}");
                }
            }
            let (outside, inside) = (rates[0].1, rates[2].1);
            assert!(outside > rates[1].1 && rates[1].1 > inside);
            for w in res.summary.per_step[3..].windows(2) {
                assert!(
                    w[0].value >= w[1].value,
                    "{} {} > {} {}",
                    w[0].label,
                    w[0].value,
                    w[1].label,
                    w[1].value
                );
            }
        }
    }

    /// (c) exact statistics: 4 KiB random reads of exactly 10 us each. The
    /// runner submits while less than the runtime has elapsed, so a
    /// time-bound step at QD1 does ceil(runtime / service) requests.
    #[test]
    fn runner_statistics_exact() {
        for (runtime, ios) in [(50_000_000, 5000), (50_005_000, 5001), (49_999_999, 5000)] {
            let disk = SimDisk::new(flat_10us(), false);
            let s = spec(Workload::RandRead, |p| {
                p.runtime = Some(Nanos(runtime));
                p.sample_interval = Nanos::from_millis(10);
            });
            let res = run(&disk, &s);
            let st = &res.steps[0];
            let r = st.read.as_ref().unwrap();
            assert_eq!(r.ios, ios, "runtime {runtime}");
            assert_eq!(r.bytes, ios * 4096);
            assert_eq!(st.runtime_ns, ios * 10_000);
            assert_eq!(
                (r.lat_ns.min, r.lat_ns.max, r.lat_ns.mean, r.lat_ns.stddev),
                (10_000, 10_000, 10_000.0, 0.0)
            );
            assert_eq!(r.bytes_per_sec, 409_600_000.0);
            assert_eq!(r.iops, 100_000.0);
            assert_eq!(r.samples.bytes_per_sec, [409_600_000.0; 5]);
            assert_eq!(r.samples.iops, [100_000.0; 5]);
            assert_eq!(r.samples.cv, Some(0.0));
            for p in &r.lat_ns.percentiles {
                assert!(p.ns.abs_diff(10_000) <= 80, "p{} = {}", p.p, p.ns);
            }
            assert!(st.write.is_none() && st.flush.is_none());
            assert_eq!(res.summary.read_iops, Some(100_000.0));
            assert_eq!(res.summary.lat_mean_ns, Some(10_000.0));
        }
    }

    /// (d) with 8 in flight on a disk that serves one at a time, each
    /// request waits for the 7 ahead of it: latency = 8 x service.
    #[test]
    fn queue_depth_latency_includes_queueing() {
        let disk = SimDisk::new(flat_10us(), false);
        let res = run(
            &disk,
            &spec(Workload::RandRead, |p| {
                (p.iodepth, p.runtime) = (8, Some(Nanos::from_millis(50)))
            }),
        );
        let r = res.steps[0].read.as_ref().unwrap();
        assert_eq!((r.lat_ns.min, r.lat_ns.max), (10_000, 80_000));
        assert!((r.lat_ns.mean / 80_000.0 - 1.0).abs() < 0.002, "{}", r.lat_ns.mean);
        // The disk is no faster for it.
        assert!((r.iops / 100_000.0 - 1.0).abs() < 1e-9, "{}", r.iops);
    }

    /// (e) the ramp's requests are served but not counted, and the runtime
    /// and samples start at its end.
    #[test]
    fn ramp_excludes_io() {
        let disk = SimDisk::new(flat_10us(), false);
        let s = spec(Workload::RandRead, |p| {
            (p.ramp_time, p.runtime) = (Nanos::from_millis(20), Some(Nanos::from_millis(30)));
            p.sample_interval = Nanos::from_millis(10);
        });
        let res = run(&disk, &s);
        let r = res.steps[0].read.as_ref().unwrap();
        assert_eq!(disk.counts().reads, 5000);
        assert_eq!(r.ios, 3000);
        assert_eq!(res.steps[0].runtime_ns, 30_000_000);
        assert_eq!(r.samples.iops, [100_000.0; 3]);
    }

    /// (f) a media error ends the test with its errno and offset; the
    /// steps before it are kept, the rest are absent.
    #[test]
    fn injected_error_reports_errno_and_offset() {
        let mut disk = SimDisk::new(SimModel::hdd(GIB), false);
        let s = spec(Workload::Zones, |p| (p.zone_bytes, p.points) = (Bytes(8 * MIB), 4));
        let steps = expand(&s, &disk.geometry()).unwrap();
        let middle = steps[1].pattern.clone();
        let crate::spec::Pattern::Seq { start, .. } = middle else {
            panic!()
        };
        disk.fail_at = vec![start + 3 * MIB + 100];
        let mut r = SerialRunner {
            target: &disk,
            clock: &disk.clock,
        };
        let res = run_test(
            &s,
            "sim:0",
            &steps,
            &mut r,
            &crate::engine::runner::Stop::new(),
            &mut |_| (),
        );
        let off = start + 3 * MIB;
        assert_eq!(
            res.status,
            Status::Error {
                errno: EIO,
                op: Op::Read,
                offset: off,
                message: alloc::format!("read at offset {off} failed: errno 5"),
            }
        );
        let labels: Vec<&str> = res.steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["outside"]);
        assert_eq!(res.summary.per_step.len(), 1);

        // A write test on a disk not opened for writing: EPERM, no steps.
        let disk = SimDisk::new(SimModel::hdd(GIB), false);
        let res = run(
            &disk,
            &spec(Workload::SeqWrite, |p| p.runtime = Some(Nanos::from_millis(10))),
        );
        assert!(
            matches!(
                res.status,
                Status::Error {
                    errno: EPERM,
                    op: Op::Write,
                    ..
                }
            ),
            "{:?}",
            res.status
        );
        assert!(res.steps.is_empty());
        assert_eq!(disk.counts(), SimCounts::default());
    }

    /// (g) diskinfo -c's formula recovers the command overhead (it is off
    /// by the big reads' own 10 commands: 10/20480 of it).
    #[test]
    fn command_overhead_recovers_model() {
        let m = SimModel::ssd(GIB);
        let disk = SimDisk::new(m, false);
        let res = run(&disk, &spec(Workload::CommandOverhead, |_| ()));
        let got = res.summary.command_overhead_ns.unwrap();
        let want = m.command_overhead_ns as f64;
        assert!((got / want - 1.0).abs() < 0.001, "{got} vs {want}");
        assert_eq!(res.steps[1].read.as_ref().unwrap().ios, 20480);

        // On the hdd model, after whatever the previous test left: the big
        // reads start where the untimed positioning read ended (no seek),
        // so their time is overhead + transfer only. The model has no read
        // cache, so each re-read of block 0 seeks back one block: the
        // figure is overhead + seek(512), within the same 10/20480.
        let m = SimModel::hdd(GIB);
        let disk = SimDisk::new(m, false);
        run(
            &disk,
            &spec(Workload::Zones, |p| (p.zone_bytes, p.points) = (Bytes(8 * MIB), 2)),
        );
        let res = run(&disk, &spec(Workload::CommandOverhead, |_| ()));
        let big: f64 = (0..10)
            .map(|i| 512 + i * MIB)
            .map(|o| expected_service(&m, o, o, MIB))
            .sum();
        assert!(
            (res.steps[0].runtime_ns as f64 - big).abs() <= 10.0,
            "{} vs {big}",
            res.steps[0].runtime_ns
        );
        let got = res.summary.command_overhead_ns.unwrap();
        let want = (m.command_overhead_ns + m.seek_ns(512)) as f64;
        assert!((got / want - 1.0).abs() < 0.001, "{got} vs {want}");
    }

    /// (g') bounded by a runtime (the quick profile's), diskinfo -c ends
    /// each loop after it, and the figure per block still recovers the
    /// model: on a disk of 100 commands a second, the untimed test's 20480
    /// re-reads would take 205 s.
    #[test]
    fn command_overhead_within_a_runtime_recovers_model() {
        let mut m = SimModel::ssd(GIB);
        // 100 commands a second, 10 MB/s: a 1 MiB read takes 115 ms.
        (m.command_overhead_ns, m.outer_rate, m.inner_rate) = (10_000_000, 10e6, 10e6);
        let disk = SimDisk::new(m, false);
        let res = run(
            &disk,
            &spec(Workload::CommandOverhead, |p| {
                (p.runtime, p.min_ios) = (Some(Nanos::from_millis(500)), 2)
            }),
        );
        let (big, small) = (&res.steps[0], &res.steps[1]);
        for st in [big, small] {
            assert!(st.runtime_ns < 600_000_000, "{}: {} ns", st.label, st.runtime_ns);
        }
        let n = small.read.as_ref().unwrap().ios;
        assert!((2..100).contains(&n), "{n} small reads");
        assert!(
            big.read.as_ref().unwrap().bytes < 10 * MIB,
            "the big loop ended by time too"
        );
        let got = res.summary.command_overhead_ns.unwrap();
        let want = m.command_overhead_ns as f64;
        assert!((got / want - 1.0).abs() < 0.01, "{got} vs {want}");
        // The quick profile's own test, on the same disk.
        let quick = crate::engine::profile::profile("quick").unwrap();
        let t = quick.iter().find(|t| t.workload == Workload::CommandOverhead).unwrap();
        let res = run(&disk, t);
        let took: u64 = res.steps.iter().map(|s| s.runtime_ns).sum();
        assert!(took < 3_000_000_000, "quick's command_overhead took {took} ns");
        let got = res.summary.command_overhead_ns.unwrap();
        assert!((got / want - 1.0).abs() < 0.01, "quick: {got} vs {want}");
    }

    /// The quick profile's seek test ends each section after its runtime:
    /// on a disk of 100 commands a second diskinfo's 5896 reads would take
    /// a minute; each section still measures at least `min_ios` reads.
    #[test]
    fn quick_seek_profile_is_bounded_by_time() {
        let mut m = SimModel::hdd(GIB);
        m.command_overhead_ns = 10_000_000;
        let disk = SimDisk::new(m, false);
        let quick = crate::engine::profile::profile("quick").unwrap();
        let t = quick.iter().find(|t| t.workload == Workload::SeekProfile).unwrap();
        let res = run(&disk, t);
        assert_eq!(res.steps.len(), 7);
        let took: u64 = res.steps.iter().map(|s| s.runtime_ns).sum();
        assert!(took < 7_000_000_000, "quick's seek_profile took {took} ns");
        for st in &res.steps {
            let n = st.read.as_ref().unwrap().ios;
            assert!(n >= crate::engine::profile::SHORT_MIN_IOS, "{}: {n} reads", st.label);
        }
    }

    /// (h) the commit test flushes once per k writes (and once more at the
    /// end only if writes are left unflushed): ceil(writes / k) flushes.
    #[test]
    fn commit_flush_counts() {
        for (k, flushes) in [(1, 64), (4, 16), (3, 22), (64, 1)] {
            let m = SimModel::hdd(64 * MIB);
            let disk = SimDisk::new(m, true);
            let s = spec(Workload::Commit, |p| {
                (p.bs, p.size, p.flush_every) = (Bytes(16 * KIB), Some(Bytes(MIB)), k)
            });
            let res = run(&disk, &s);
            assert_eq!(res.status, Status::Ok);
            let every = &res.steps[0];
            let all = &res.steps[1];
            assert_eq!(every.label, alloc::format!("flush_every_{k}"));
            assert_eq!(every.write.as_ref().unwrap().ios, 64);
            assert_eq!(every.flush.as_ref().unwrap().ios, flushes, "k = {k}");
            assert_eq!(all.flush.as_ref().unwrap().ios, 1);
            let f = &every.flush.as_ref().unwrap().lat_ns;
            assert_eq!((f.min, f.max), (m.flush_ns, m.flush_ns));
            assert_eq!(disk.counts().flushes, flushes + 1);
            assert_eq!(disk.counts().writes, 128);
            // The figure includes the flushes: the k = 1 step is slower.
            if k == 1 {
                assert!(res.summary.per_step[0].value < res.summary.per_step[1].value);
            }
        }
    }

    /// (i) a seeded run repeats exactly; another seed differs.
    #[test]
    fn seeded_runs_repeat() {
        let go = |seed| {
            let disk = SimDisk::new(SimModel::hdd(GIB), true);
            let s = spec(Workload::RandRw, |p| {
                (p.iodepth, p.runtime, p.seed) = (4, Some(Nanos::from_millis(200)), seed);
            });
            (run(&disk, &s), disk.clock.now(), disk.counts())
        };
        let a = go(1);
        assert_eq!(a, go(1));
        let b = go(2);
        assert_ne!(a.0.steps, b.0.steps);
        assert_ne!(a.2, b.2);
    }

    /// The whole quick profile runs on a small simulated disk: every test
    /// ok, every step with figures, summaries filled in.
    #[test]
    fn quick_profile_runs_on_the_sim() {
        let disk = SimDisk::new(SimModel::hdd(64 * MIB), true);
        for t in crate::engine::profile::profile("quick").unwrap() {
            let res = run(&disk, &t);
            assert_eq!(res.status, Status::Ok, "{}", t.name);
            assert!(!res.steps.is_empty());
            for st in &res.steps {
                assert!(
                    st.runtime_ns > 0 && (st.read.is_some() || st.write.is_some()),
                    "{}/{}",
                    t.name,
                    st.label
                );
                assert!(
                    st.range_start < st.range_end && st.range_end <= 64 * MIB,
                    "{}/{}",
                    t.name,
                    st.label
                );
            }
            let s = &res.summary;
            let filled = match t.workload {
                Workload::SeekProfile => s.seek_ns.len() == 7,
                // The headlines the analysis compares (plan::summarize).
                Workload::Zones => {
                    let surface: Vec<f64> = s.per_step[3..].iter().map(|f| f.value).collect();
                    s.per_step.len() == 3 + 8 && s.read_bytes_per_sec == Some(surface.iter().sum::<f64>() / 8.0)
                }
                Workload::IopsSweep => {
                    let peak = s.per_step.iter().map(|f| f.value).fold(0.0, f64::max);
                    s.per_step.len() == 5 && s.read_iops == Some(peak)
                }
                Workload::Commit => {
                    s.per_step.len() == 2
                        && s.write_bytes_per_sec == Some(s.per_step[0].value)
                        && s.per_step[1].label == crate::engine::plan::COMMIT_ALL_LABEL
                }
                // 512 B to 64 KiB.
                Workload::Slog => s.per_step.len() == 8,
                Workload::CommandOverhead => s.command_overhead_ns.is_some(),
                _ => s.lat_mean_ns.is_some() && (s.read_bytes_per_sec.is_some() || s.write_bytes_per_sec.is_some()),
            };
            assert!(filled, "{}: {s:?}", t.name);
        }
    }
}
