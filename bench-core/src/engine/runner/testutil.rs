//! What the runner's tests share: a step to vary, a simulated disk that
//! takes 1 ms a read, and a recording target with the serial runner.

use alloc::vec;
use alloc::vec::Vec;

use super::{run_test, SerialRunner, Stop};
use crate::document::result::TestResult;
use crate::engine::sim::{SimClock, SimDisk, SimModel};
use crate::io::{Access, Completion, IoError, IoQueue, IoReq, Op, OpenSpec, Target};
use crate::spec::{Limit, MixOrder, Pattern, Prepare, Step, TestSpec};
use crate::vocab::rng::Rng;
use crate::vocab::units::Nanos;

pub(crate) fn step(pattern: Pattern, bs: u32, jobs: u32) -> Step {
    Step {
        label: "main".into(),
        access: Access::Direct,
        prepare: Prepare::None,
        pattern,
        bs,
        iodepth: 1,
        jobs,
        limit: Limit {
            runtime: None,
            bytes: None,
            ios: Some(10),
            min_ios: 0,
        },
        ramp: Nanos(0),
        flush_every: None,
        flush_at_end: false,
        end_close: false,
        fsync_freq: None,
        fsync_files: 1,
        rwmix_order: MixOrder::Random,
        random_map: false,
        seed: 42,
        sample_interval: Nanos::from_secs(1),
        verify: false,
        touch_every: None,
        settle: Nanos(0),
        runtime_batch: None,
        passes: 1,
        warmup: 0,
        fill: false,
        pause: Nanos(0),
        engine: Default::default(),
        steady: None,
        zones: None,
    }
}

/// Two zones of 4 blocks whose capacity is 3, as a sequential write at
/// the write pointers maps them: [0, 3) and [4, 7) blocks of 4 KiB.
pub(crate) fn two_zones(at_write_pointers: bool, pattern: Pattern, jobs: u32) -> Step {
    let mut s = step(pattern, 4096, jobs);
    s.zones = Some(crate::spec::ZoneMap {
        extents: vec![
            crate::spec::Span {
                start: 0,
                len: 3 * 4096,
            },
            crate::spec::Span {
                start: 4 * 4096,
                len: 3 * 4096,
            },
        ],
        reset: Vec::new(),
        at_write_pointers,
    });
    s
}

/// A simulated SSD that serves a 4 KiB random read in 1 ms (its clock
/// moves 1 s per 1000 reads), and a QD1 random-read step bound by `runtime`.
pub(crate) fn ms_per_read(runtime: Nanos) -> (SimDisk, Step) {
    let disk = SimDisk::new(
        SimModel {
            command_overhead_ns: 991_808,
            ..SimModel::ssd(1 << 30)
        },
        false,
    );
    let mut s = step(
        Pattern::Random {
            read_pct: 100,
            start: 0,
            end: 1 << 30,
        },
        4096,
        1,
    );
    s.limit = Limit {
        runtime: Some(runtime),
        bytes: None,
        ios: None,
        min_ios: 0,
    };
    (disk, s)
}

/// A simulated disk that also keeps what is written (in memory), logs
/// every request with the number of the queue that issued it (queues
/// numbered in open order), and slows each request of queue `n` by
/// `extra[n]` ns (the last entry for later queues).
pub(crate) struct Rec {
    pub(crate) disk: SimDisk,
    pub(crate) data: alloc::rc::Rc<core::cell::RefCell<Vec<u8>>>,
    pub(crate) log: alloc::rc::Rc<core::cell::RefCell<Vec<(usize, IoReq)>>>,
    pub(crate) opens: core::cell::Cell<usize>,
    pub(crate) extra: Vec<u64>,
}

pub(crate) struct RecQueue {
    inner: crate::engine::sim::SimQueue,
    no: usize,
    data: alloc::rc::Rc<core::cell::RefCell<Vec<u8>>>,
    log: alloc::rc::Rc<core::cell::RefCell<Vec<(usize, IoReq)>>>,
    clock: SimClock,
    extra: u64,
    bufs: Vec<Vec<u8>>,
    rng: Rng,
}

impl Rec {
    pub(crate) fn new(size: u64, writable: bool, extra: Vec<u64>) -> Rec {
        Rec {
            disk: SimDisk::new(SimModel::ssd(size), writable),
            data: alloc::rc::Rc::new(core::cell::RefCell::new(vec![0; usize::try_from(size).unwrap()])),
            log: alloc::rc::Rc::default(),
            opens: core::cell::Cell::new(0),
            extra,
        }
    }
    pub(crate) fn log(&self) -> Vec<(usize, IoReq)> {
        self.log.borrow().clone()
    }
}

impl IoQueue for RecQueue {
    fn depth(&self) -> usize {
        self.inner.depth()
    }
    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        self.inner.submit(slot, req)?;
        self.log.borrow_mut().push((self.no, req));
        let (off, len) = (usize::try_from(req.offset).unwrap(), req.len as usize);
        if req.op == Op::Write {
            self.data.borrow_mut()[off..off + len].copy_from_slice(&self.bufs[slot][..len]);
        }
        Ok(())
    }
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        let n = out.len();
        self.inner.reap(min, out)?;
        self.clock.advance(Nanos(self.extra * (out.len() - n) as u64));
        Ok(())
    }
    fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        let b = &mut self.bufs[slot];
        if b.len() < len {
            b.resize(len, 0);
            self.rng.fill(b);
        }
        Some(&mut b[..len])
    }
}

impl Target for Rec {
    type Queue = RecQueue;
    fn geometry(&self) -> crate::io::Geometry {
        self.disk.geometry()
    }
    fn open(&self, spec: &OpenSpec) -> Result<RecQueue, IoError> {
        let inner = self.disk.open(spec)?;
        let no = self.opens.get();
        self.opens.set(no + 1);
        Ok(RecQueue {
            inner,
            no,
            data: self.data.clone(),
            log: self.log.clone(),
            clock: self.disk.clock.clone(),
            extra: *self.extra.get(no).or(self.extra.last()).unwrap_or(&0),
            bufs: vec![Vec::new(); spec.depth as usize],
            rng: Rng::new(spec.seed),
        })
    }
    fn drop_caches(&self) -> Result<(), IoError> {
        self.disk.drop_caches()
    }
    fn settle(&self, for_: Nanos) -> Result<(), IoError> {
        self.disk.settle(for_)
    }
}

/// Run `spec` (expanded on `t`) with the serial runner.
pub(crate) fn run_on<T: Target>(t: &T, clock: &SimClock, spec: &TestSpec) -> TestResult {
    let steps = crate::engine::plan::expand(spec, &t.geometry()).unwrap();
    let mut r = SerialRunner { target: t, clock };
    run_test(spec, "rec", &steps, &mut r, &Stop::new(), &mut |_| ())
}
