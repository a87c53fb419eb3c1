//! The engine tests' fixtures: loop devices holding a known pattern, open
//! specs and requests, and helpers that run a batch or a step.

// What the engine's tests have in scope, besides their own module's items.
pub(super) use std::fs::File;
pub(super) use std::path::PathBuf;

pub(super) use bench_core::engine::runner::{self, StepRunner, Stop};
pub(super) use bench_core::io::{Access, Completion, Geometry, IoQueue, IoReq, Op, OpenSpec, Target};
pub(super) use bench_core::spec::{Limit, Pattern, Prepare, Step};
pub(super) use bench_core::vocab::units::Nanos;

pub(super) use super::hung::Hung;
pub(super) use super::{DevQueue, DevTarget, MonoClock, ThreadedRunner};
pub(super) use crate::safety::WritePermit;

/// `sync(2)` writes back every dirty page of the machine: the engine's
/// `global_sync` takes this for reading around it, and a test that needs dirty
/// pages to stay dirty (flush_range_flushes_its_range_only) holds it for
/// writing, so no other test's sync runs meanwhile.
pub(super) static GLOBAL_SYNC: std::sync::RwLock<()> = std::sync::RwLock::new(());

pub(super) const MIB: u64 = 1 << 20;

pub(super) const LOOP_SIZE: u64 = 64 * MIB;

/// The byte at `offset` of a fresh backing file: never zero, and
/// different at nearby offsets, so a read from the wrong place shows.
pub(super) fn pattern_byte(offset: u64) -> u8 {
    u8::try_from(offset.wrapping_mul(31) % 251).unwrap_or(0) + 1
}

pub(super) fn pattern(offset: u64, len: usize) -> Vec<u8> {
    (offset..).take(len).map(pattern_byte).collect()
}

/// A loop device over a file in /dev/shm holding the pattern, detached
/// and deleted on drop.
pub(super) struct LoopDev {
    pub(super) _lo: crate::testutil::Loop,
    pub(super) file: PathBuf,
    pub(super) dev: String,
}

impl LoopDev {
    /// `None` (with the reason printed) where loop devices cannot be
    /// made: not root, or no losetup.
    pub(super) fn new(name: &str) -> Option<LoopDev> {
        // The pattern repeats every 251 bytes: write whole periods of it.
        let chunk = pattern(0, 251 * 4096);
        let mut data = Vec::with_capacity(usize::try_from(LOOP_SIZE).expect("fits"));
        while data.len() < data.capacity() {
            let n = chunk.len().min(data.capacity() - data.len());
            data.extend_from_slice(&chunk[..n]);
        }
        let lo = crate::testutil::Loop::new(&format!("engine-{name}"), &data)?;
        let (file, dev) = (lo.files[0].clone(), lo.dev.clone());
        Some(LoopDev { _lo: lo, file, dev })
    }

    pub(super) fn backing(&self, offset: u64, len: usize) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let mut v = vec![0; len];
        File::open(&self.file)
            .and_then(|f| f.read_exact_at(&mut v, offset))
            .expect("read backing file");
        v
    }

    /// The whole backing file, to compare before and after (a byte-exact
    /// comparison is stronger than a checksum and as fast).
    pub(super) fn contents(&self) -> Vec<u8> {
        std::fs::read(&self.file).expect("read backing file")
    }

    pub(super) fn target(&self, writable: bool) -> DevTarget {
        let permit = writable.then(|| WritePermit::for_tests(&self.dev));
        DevTarget::open(&self.dev, permit).expect("open target")
    }
}

pub(super) fn spec(access: Access, write: bool, depth: u32, max_len: u32) -> OpenSpec {
    OpenSpec::plain(access, write, depth, max_len, 42)
}

pub(super) fn req(op: Op, offset: u64, len: u32) -> IoReq {
    IoReq { op, offset, len }
}

/// Submit `reqs` in slots 0.., reap them all; the completions by slot.
pub(super) fn run_batch(q: &mut DevQueue, reqs: &[IoReq]) -> Vec<Completion> {
    let mut out = Vec::new();
    for (slot, r) in reqs.iter().enumerate() {
        q.submit(slot, *r).expect("submit");
    }
    while out.len() < reqs.len() {
        q.reap(reqs.len() - out.len(), &mut out).expect("reap");
    }
    out.sort_by_key(|c| c.slot);
    out
}

pub(super) fn fds_on(path: &str) -> usize {
    let want = std::fs::canonicalize(path).expect("canonicalize");
    std::fs::read_dir("/proc/self/fd")
        .expect("fd dir")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|p| *p == want)
        .count()
}

pub(super) fn run_batch_one(q: &mut DevQueue, slot: usize, r: IoReq) -> Completion {
    q.submit(slot, r).expect("submit");
    let mut out = Vec::new();
    while out.is_empty() {
        q.reap(1, &mut out).expect("reap");
    }
    assert_eq!(out.len(), 1);
    out[0]
}

/// Flushes the device has completed (`/sys/block/<dev>/stat`, field 16).
pub(super) fn device_flushes(dev: &str) -> u64 {
    let name = dev.rsplit('/').next().expect("name");
    let stat = std::fs::read_to_string(crate::sysfs::live(format!("block/{name}/stat"))).expect("stat");
    stat.split_whitespace()
        .nth(15)
        .expect("flush field")
        .parse()
        .expect("number")
}

pub(super) fn rand_step(read_pct: u8, iodepth: u32, jobs: u32, ios: u64) -> Step {
    Step {
        label: "main".to_string(),
        access: Access::Direct,
        prepare: Prepare::None,
        pattern: Pattern::Random {
            read_pct,
            start: 0,
            end: LOOP_SIZE,
        },
        bs: 4096,
        iodepth,
        jobs,
        limit: Limit {
            runtime: None,
            bytes: None,
            ios: Some(ios),
            min_ios: 0,
        },
        ramp: Nanos(0),
        flush_every: None,
        flush_at_end: false,
        end_close: false,
        fsync_freq: None,
        fsync_files: 1,
        rwmix_order: Default::default(),
        random_map: false,
        seed: 9,
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

pub(super) fn one_test(r: &mut dyn StepRunner, step: &Step) -> bench_core::document::result::TestResult {
    let spec = bench_core::spec::TestSpec::new("t", bench_core::spec::Workload::RandRead, |_| {});
    runner::run_test(&spec, "loop", std::slice::from_ref(step), r, &Stop::new(), &mut |_| {})
}
