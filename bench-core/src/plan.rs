//! Expanding a test into the steps it runs on a target of given geometry,
//! and the headline figures of its step results.
//!
//! Each workload is a twin of a classic tool (ANCHOR-ALGORITHMS.md); where
//! the twin departs from the tool, the builder below says so.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::cpus::{parse_cpu_list, MAX_CPUS};
use crate::io::{Access, Geometry, Op};
use crate::result::{DirStats, Figure, StepResult, Summary};
use crate::spec::{EngineOpts, Limit, Params, Pattern, Prepare, Step, TestSpec, Workload};
use crate::stats::MAX_SAMPLES;
use crate::units::{Nanos, GIB, KIB, MIB};

/// Why a test cannot run on a target. Each names the parameter, the value
/// and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// A size parameter is not a multiple of the target's logical block size.
    NotAligned {
        /// `bs`, `offset`, `length`, ...
        field: &'static str,
        /// The value given, bytes.
        value: u64,
        /// The logical block size, bytes.
        block: u32,
    },
    /// The target is smaller than the test needs.
    TooSmall {
        /// What needs the room (`size`, `offset+length`, `bs`, ...).
        field: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A parameter is out of its range.
    OutOfRange {
        /// The parameter.
        field: &'static str,
        /// The value given.
        value: u64,
        /// What is expected, in words.
        expected: &'static str,
    },
    /// `sample_interval` over the runtime would give more samples than a
    /// step keeps ([`MAX_SAMPLES`]).
    TooManySamples {
        /// The interval, ns.
        interval: u64,
        /// The runtime, ns.
        runtime: u64,
    },
}

impl PlanError {
    /// The parameter at fault.
    pub fn field(&self) -> &'static str {
        match self {
            PlanError::NotAligned { field, .. }
            | PlanError::TooSmall { field, .. }
            | PlanError::OutOfRange { field, .. } => field,
            PlanError::TooManySamples { .. } => "sample_interval",
        }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::NotAligned { field, value, block } => write!(
                f,
                "{field} = {value} B is not a multiple of the logical block size ({block} B)"
            ),
            PlanError::TooSmall {
                field,
                needed,
                available,
            } => {
                write!(f, "{field} needs {needed} B but only {available} B are available")
            }
            PlanError::OutOfRange { field, value, expected } => {
                write!(f, "{field} = {value} is out of range: expected {expected}")
            }
            PlanError::TooManySamples { interval, runtime } => write!(
                f,
                "sample_interval = {interval} ns would take {} samples over the runtime of {runtime} ns: \
                 expected at least {} ns (a step keeps at most {MAX_SAMPLES} samples)",
                runtime / (*interval).max(1),
                runtime.div_ceil(MAX_SAMPLES)
            ),
        }
    }
}

/// The largest request size accepted, bytes.
pub const MAX_BS: u64 = GIB;
/// diskinfo -c's big reads: 10 x 1 MiB unless `size` says otherwise.
pub const COMMAND_OVERHEAD_BYTES: u64 = 10 * MIB;
/// The request size of the transfer-rate reads (diskinfo's `rdmega`).
pub const ZONE_BS: u64 = MIB;
/// Sizes of the `iops_sweep` steps after the logical block (diskinfo -i's
/// `iopsbench`: sectorsize, then 4 KiB unless the sector is 4096 B, 32 KiB,
/// 128 KiB, 1024 KiB); sizes not above the block or not a multiple of it
/// are skipped.
pub const IOPS_SWEEP_SIZES: [u64; 4] = [4 * KIB, 32 * KIB, 128 * KIB, MIB];

/// diskinfo -S's batch: it checks its 1 s only after each 250 writes.
pub const SLOG_BATCH: u64 = 250;

/// The user's range after validation: `[start, start + len)`, `len` a
/// multiple of the logical block.
#[derive(Clone, Copy, Debug)]
struct Range {
    start: u64,
    len: u64,
}

fn out_of_range(field: &'static str, value: u64, expected: &'static str) -> PlanError {
    PlanError::OutOfRange { field, value, expected }
}

fn check_aligned(field: &'static str, value: u64, lb: u32) -> Result<(), PlanError> {
    if value % u64::from(lb) == 0 {
        Ok(())
    } else {
        Err(PlanError::NotAligned {
            field,
            value,
            block: lb,
        })
    }
}

/// Workloads whose measured part is bounded by `runtime` and/or `size`.
const fn time_or_size_bound(w: Workload) -> bool {
    matches!(
        w,
        Workload::CachedRead
            | Workload::BufferedRead
            | Workload::DirectRead
            | Workload::SeqRead
            | Workload::SeqWrite
            | Workload::RandRead
            | Workload::RandWrite
            | Workload::RandRw
            | Workload::IopsSweep
    )
}

/// The finest sample interval: 1 ms, the finest fio logs at
/// (`log_avg_msec`). Finer, most intervals hold a request or none and the
/// per-interval rate is noise; and a step's samples are bounded by count
/// ([`MAX_SAMPLES`]) anyway.
pub const MIN_SAMPLE_INTERVAL: Nanos = Nanos::from_millis(1);

/// The most files a test's range is split into (`file_num`): each of
/// sysbench's fsync points flushes every one of them in turn, so this
/// bounds the work one write can set off (with `fsync_freq` 1, 4096
/// flushes a write).
pub const MAX_FILE_NUM: u64 = 4096;

/// The most measured passes (and warm-up passes) of a step.
pub const MAX_PASSES: u32 = 100;

/// Workloads that may fill their range first ([`Params::fill`]): the plain
/// read/write ones, whose one step covers the test's range (DiskSpd's
/// test file in CrystalDiskMark).
const fn fills(w: Workload) -> bool {
    matches!(
        w,
        Workload::SeqRead | Workload::SeqWrite | Workload::RandRead | Workload::RandWrite | Workload::RandRw
    )
}

/// Check the parameters against each other and the geometry; the range.
fn validate(w: Workload, p: &Params, geom: &Geometry) -> Result<Range, PlanError> {
    let lb = geom.logical_block;
    if lb == 0 {
        return Err(out_of_range("logical_block", 0, "a logical block size above 0"));
    }
    let lb64 = u64::from(lb);
    if p.bs.0 == 0 {
        return Err(out_of_range("bs", 0, "at least one logical block"));
    }
    check_aligned("bs", p.bs.0, lb)?;
    if p.bs.0 > MAX_BS {
        return Err(out_of_range("bs", p.bs.0, "at most 1 GiB (1073741824 B)"));
    }
    check_aligned("offset", p.offset.0, lb)?;
    let end = match p.length {
        Some(len) => {
            if len.0 == 0 {
                return Err(out_of_range("length", 0, "more than 0 bytes"));
            }
            check_aligned("length", len.0, lb)?;
            let end = p.offset.0.checked_add(len.0).ok_or(PlanError::TooSmall {
                field: "offset+length",
                needed: u64::MAX,
                available: geom.size,
            })?;
            if end > geom.size {
                return Err(PlanError::TooSmall {
                    field: "offset+length",
                    needed: end,
                    available: geom.size,
                });
            }
            end
        }
        None => {
            if p.offset.0 >= geom.size {
                return Err(PlanError::TooSmall {
                    field: "offset+length",
                    needed: p.offset.0.saturating_add(lb64),
                    available: geom.size,
                });
            }
            geom.size
        }
    };
    let len = (end - p.offset.0) / lb64 * lb64;
    if !(1..=4096).contains(&p.iodepth) {
        return Err(out_of_range("iodepth", u64::from(p.iodepth), "1 to 4096"));
    }
    if !(1..=256).contains(&p.jobs) {
        return Err(out_of_range("jobs", u64::from(p.jobs), "1 to 256"));
    }
    if p.rwmixread > 100 {
        return Err(out_of_range("rwmixread", u64::from(p.rwmixread), "0 to 100"));
    }
    if p.flush_every == 0 {
        return Err(out_of_range("flush_every", 0, "at least 1"));
    }
    if !(1..=1024).contains(&p.points) {
        return Err(out_of_range("points", u64::from(p.points), "1 to 1024"));
    }
    if p.sample_interval < MIN_SAMPLE_INTERVAL {
        return Err(out_of_range(
            "sample_interval",
            p.sample_interval.0,
            "at least 1 ms (1000000 ns): the finest interval fio logs (log_avg_msec) and bootbench samples",
        ));
    }
    if let Some(r) = p.runtime {
        if r.0 / p.sample_interval.0 > MAX_SAMPLES {
            return Err(PlanError::TooManySamples {
                interval: p.sample_interval.0,
                runtime: r.0,
            });
        }
    }
    if let Some(c) = &p.cpus_allowed {
        if parse_cpu_list(c).is_err() {
            return Err(out_of_range("cpus_allowed", 0, "a CPU list such as 0-3,6"));
        }
    }
    if p.sqthread_poll_cpu.is_some_and(|c| c >= MAX_CPUS) {
        return Err(out_of_range(
            "sqthread_poll_cpu",
            p.sqthread_poll_cpu.map_or(0, u64::from),
            "a CPU number from 0 to 8191",
        ));
    }
    if p.hipri && buffered(w, p) {
        return Err(out_of_range(
            "hipri",
            1,
            "false with buffered I/O (polled completions are O_DIRECT only)",
        ));
    }
    if p.runtime.is_some_and(|r| r.0 == 0) {
        return Err(out_of_range("runtime", 0, "more than 0 ns"));
    }
    if let Some(size) = p.size {
        if size.0 == 0 {
            return Err(out_of_range("size", 0, "more than 0 bytes"));
        }
        if size.0 > len {
            return Err(PlanError::TooSmall {
                field: "size",
                needed: size.0,
                available: len,
            });
        }
    }
    let per_jobs = p.bs.0.saturating_mul(u64::from(p.jobs));
    if per_jobs > len {
        return Err(PlanError::TooSmall {
            field: "bs",
            needed: per_jobs,
            available: len,
        });
    }
    if time_or_size_bound(w) && p.runtime.is_none() && p.size.is_none() {
        return Err(out_of_range("runtime", 0, "a runtime or a size bound (or both)"));
    }
    if !(1..=MAX_FILE_NUM).contains(&p.file_num) {
        return Err(out_of_range(
            "file_num",
            p.file_num,
            "1 to 4096 files (each fsync point flushes every file; sysbench's default is 128)",
        ));
    }
    if !(1..=MAX_PASSES).contains(&p.passes) {
        return Err(out_of_range("passes", u64::from(p.passes), "1 to 100"));
    }
    if p.warmup > MAX_PASSES {
        return Err(out_of_range("warmup", u64::from(p.warmup), "0 to 100"));
    }
    if p.fill && !fills(w) {
        return Err(out_of_range(
            "fill",
            1,
            "false: only seq_read, seq_write, rand_read, rand_write and rand_rw fill their range",
        ));
    }
    Ok(Range { start: p.offset.0, len })
}

/// hdparm's `read_big_block` touches one byte in every 512 of each read
/// ("access all sectors of buf to ensure the read fully completed").
pub const HDPARM_TOUCH_EVERY: u32 = 512;

/// A step with the test's common settings: direct, no preparation, QD and
/// jobs as given, the test's ramp, no flushes.
fn base_step(label: String, p: &Params, pattern: Pattern, bs: u32, limit: Limit, index: u64) -> Step {
    Step {
        label,
        access: Access::Direct,
        prepare: Prepare::None,
        pattern,
        bs,
        iodepth: p.iodepth,
        jobs: p.jobs,
        limit,
        ramp: p.ramp_time,
        flush_every: None,
        flush_at_end: false,
        fsync_freq: None,
        fsync_files: 1,
        rwmix_order: p.rwmix_order,
        random_map: !p.norandommap,
        seed: p.seed.wrapping_add(index),
        sample_interval: p.sample_interval,
        verify: false,
        touch_every: None,
        settle: Nanos(0),
        runtime_batch: None,
        passes: p.passes,
        warmup: p.warmup,
        fill: false,
        pause: Nanos(0),
        engine: engine_opts(p),
    }
}

/// The engine options of a test's steps (`cpus_allowed` checked by
/// [`validate`]).
fn engine_opts(p: &Params) -> EngineOpts {
    EngineOpts {
        hipri: p.hipri,
        sqthread_poll: p.sqthread_poll,
        sqthread_poll_cpu: p.sqthread_poll_cpu.filter(|_| p.sqthread_poll),
        cpus_allowed: p
            .cpus_allowed
            .as_deref()
            .and_then(|c| parse_cpu_list(c).ok())
            .unwrap_or_default(),
        cpus_allowed_policy: p.cpus_allowed_policy,
    }
}

/// True if `w` with `p` reads or writes through the page cache: hdparm -T
/// and -t always, the plain workloads with `direct` false. (The others are
/// always O_DIRECT.)
pub fn buffered(w: Workload, p: &Params) -> bool {
    match w {
        Workload::CachedRead | Workload::BufferedRead => true,
        Workload::SeqRead | Workload::SeqWrite | Workload::RandRead | Workload::RandWrite | Workload::RandRw => {
            !p.direct
        }
        _ => false,
    }
}

fn to_u32(field: &'static str, v: u64) -> Result<u32, PlanError> {
    u32::try_from(v).map_err(|_| out_of_range(field, v, "at most 4294967295"))
}

/// The steps `spec` runs on a target of geometry `geom`.
///
/// Validates first (block alignment, ranges of every parameter, room on the
/// target), then builds the workload's steps; see the workload builders for
/// how each follows its classic tool.
pub fn expand(spec: &TestSpec, geom: &Geometry) -> Result<Vec<Step>, PlanError> {
    let p = &spec.params;
    let range = validate(spec.workload, p, geom)?;
    let lb = geom.logical_block;
    let bs = to_u32("bs", p.bs.0)?;
    let bs64 = u64::from(bs);
    // The range rounded down to whole requests.
    let end_bs = range.start + range.len / bs64 * bs64;
    let time_limit = Limit {
        runtime: p.runtime,
        bytes: p.size.map(|s| s.0),
        ios: None,
        min_ios: if p.runtime.is_some() { p.min_ios } else { 0 },
    };
    let main = |pattern: Pattern| base_step(MAIN_LABEL.to_string(), p, pattern, bs, time_limit, 0);
    let seq = |op| Pattern::Seq {
        op,
        start: range.start,
        end: end_bs,
    };
    let random = |read_pct| Pattern::Random {
        read_pct,
        start: range.start,
        end: end_bs,
    };
    let steps = match spec.workload {
        Workload::CachedRead => {
            // hdparm -T (hdparm.c `time_cache`): read the first request of
            // the range once, `flush_buffer_cache` (BLKFLSBUF), then re-read
            // it through the page cache (`seek_to_zero` + `read_big_block`),
            // one at a time, each touched, until the runtime has elapsed.
            let mut s = main(Pattern::Fixed {
                op: Op::Read,
                offset: range.start,
            });
            s.access = Access::Buffered;
            s.prepare = Prepare::WarmThenDrop;
            s.iodepth = 1;
            s.touch_every = Some(HDPARM_TOUCH_EVERY);
            // time_cache: `sleep(1)` after flush_buffer_cache.
            s.settle = Nanos::from_secs(1);
            vec![s]
        }
        Workload::BufferedRead | Workload::DirectRead => {
            // hdparm -t (hdparm.c `time_device`): `read_big_block` in a loop
            // from the start of the range until the runtime has elapsed or
            // the range ends (no wrap: each job stops at its slice's end;
            // hdparm's `max_iterations` is the device's whole 2 MiB blocks).
            let slice = (end_bs - range.start) / bs64 / u64::from(p.jobs) * bs64;
            let bytes = p.size.map_or(slice, |s| s.0.min(slice));
            let mut s = main(seq(Op::Read));
            s.limit.bytes = Some(bytes);
            // One read(2) at a time, each touched (`read_big_block`).
            s.iodepth = 1;
            s.touch_every = Some(HDPARM_TOUCH_EVERY);
            // prepare_timing_buf: `sync(); sleep(3)` just before the loop.
            s.settle = Nanos::from_secs(3);
            if spec.workload == Workload::BufferedRead {
                // hdparm -t itself does not flush first, but every hdparm run
                // ends with `flush_buffer_cache` (its `do_flush`), so each
                // starts cold; dropping the cache here starts cold whatever
                // ran before.
                s.access = Access::Buffered;
                s.prepare = Prepare::DropCaches;
            }
            // hdparm -t --direct: the same loop on an O_DIRECT descriptor.
            vec![s]
        }
        Workload::SeqRead => vec![io_step(main(seq(Op::Read)), p)],
        // fio's end_fsync=0 by default; dd conv=fdatasync (the classic
        // profile's dd) asks for the final flush with `end_fsync`.
        Workload::SeqWrite => vec![io_step(main(seq(Op::Write)), p)],
        Workload::RandRead => vec![io_step(main(random(100)), p)],
        Workload::RandWrite => vec![io_step(main(random(0)), p)],
        Workload::RandRw => vec![io_step(main(random(p.rwmixread)), p)],
        Workload::SeekProfile => seek_profile(p, range, lb)?,
        Workload::Zones => zones(p, range, lb)?,
        Workload::CommandOverhead => command_overhead(p, range, lb)?,
        Workload::IopsSweep => iops_sweep(p, range, lb, time_limit)?,
        Workload::Commit => commit(p, range, bs)?,
        Workload::Slog => slog(p, range, lb)?,
    };
    let mut steps = steps;
    for s in &mut steps {
        s.verify = p.verify && s.writes();
    }
    // The fill before the test's first step, the pause after its last.
    if let Some(first) = steps.first_mut() {
        first.fill = p.fill;
    }
    if let Some(last) = steps.last_mut() {
        last.pause = p.pause;
    }
    Ok(steps)
}

/// The plain read/write workloads' step with the page-cache and flush
/// settings of the test: buffered (`direct = false`: the target's cache is
/// dropped first, untimed, as the seeds do before dd and sysbench),
/// sysbench's periodic fsync, and the final flush (`end_fsync`; none by
/// default, as fio's `end_fsync=0`). Flushes apply to steps that write only: sysbench's
/// seqrd/rndrd never fsync (`file_thread_done` skips the read modes, and
/// `is_dirty` stays 0).
fn io_step(mut s: Step, p: &Params) -> Step {
    if !p.direct {
        s.access = Access::Buffered;
        s.prepare = Prepare::DropCaches;
    }
    let writes = s.writes();
    s.fsync_freq = (p.fsync_freq > 0 && writes).then_some(p.fsync_freq);
    s.fsync_files = p.file_num;
    s.flush_at_end = writes && p.end_fsync.unwrap_or(false);
    s
}

/// One section of diskinfo -t's seek test: label, reads, and the cursors
/// as (start sector, stride in sectors).
type Section = (&'static str, u64, Vec<(u64, i64)>);

/// diskinfo -t's seek sections (FreeBSD `diskinfo.c` `speeddisk`), with
/// sector = the logical block and N = the range in sectors; positions are
/// relative to the range start. The first read of each section seeks from
/// where the previous one ended, as in diskinfo.
fn seek_profile(p: &Params, range: Range, lb: u32) -> Result<Vec<Step>, PlanError> {
    let lb64 = u64::from(lb);
    let n = range.len / lb64;
    // Seq inner starts 2048 sectors before the end; every other section
    // stays inside the range once N >= 2048 (checked below anyway).
    if n < 2048 {
        return Err(PlanError::TooSmall {
            field: "size",
            needed: 2048 * lb64,
            available: range.len,
        });
    }
    let step = seek_step(n);
    let st = i64::try_from(step).map_err(|_| out_of_range("size", range.len, "a smaller target"))?;
    let sections: [Section; 7] = [
        ("full_stroke", 250, vec![(0, st), (n - step, -st)]),
        ("half_stroke", 250, vec![(n / 4, st), (n / 4 + n / 2, st)]),
        ("quarter_stroke", 500, vec![(n / 4, st), (n / 4 + n / 4, st)]),
        ("short_forward", 400, vec![(n / 2, st)]),
        ("short_backward", 400, vec![(n / 2, -st)]),
        ("seq_outer", 2048, vec![(0, 1)]),
        ("seq_inner", 2048, vec![(n - 2048, 1)]),
    ];
    let lb_i = i64::from(lb);
    let mut steps = Vec::with_capacity(sections.len());
    for (i, (label, reads, cursors)) in sections.into_iter().enumerate() {
        let k = u64::try_from(cursors.len()).unwrap_or(1);
        let visits = reads.div_ceil(k);
        for &(start, stride) in &cursors {
            // Last position of this cursor, in sectors.
            let last = i128::from(start) + i128::from(stride) * i128::from(visits - 1);
            if last < 0 || last >= i128::from(n) {
                return Err(PlanError::TooSmall {
                    field: "size",
                    needed: 2048 * lb64,
                    available: range.len,
                });
            }
        }
        let pattern = Pattern::Cursors {
            starts: cursors.iter().map(|&(s, _)| range.start + s * lb64).collect(),
            strides: cursors.iter().map(|&(_, d)| d * lb_i).collect(),
        };
        let limit = Limit {
            runtime: None,
            bytes: None,
            ios: Some(reads),
            min_ios: 0,
        };
        let mut s = base_step(label.to_string(), p, pattern, lb, limit, i as u64);
        s.iodepth = 1;
        s.jobs = 1;
        s.ramp = crate::units::Nanos(0);
        steps.push(s);
    }
    Ok(steps)
}

/// diskinfo's seek step: the largest power of two <= sectors / 800, capped
/// at 16384 sectors (at least 1).
pub fn seek_step(sectors: u64) -> u64 {
    let q = (sectors / 800).max(1);
    (1u64 << (63 - q.leading_zeros())).min(16384)
}

/// A sequential QD1 read of `bulk` bytes in requests of `bs` from `start`,
/// preceded by an untimed read of the block just before it (diskinfo's
/// `rdsect(b0)` before each transfer-rate section), so no seek is timed.
fn zone_step(label: String, p: &Params, start: u64, bulk: u64, bs: u64, index: u64) -> Result<Step, PlanError> {
    let pattern = Pattern::Seq {
        op: Op::Read,
        start,
        end: start + bulk,
    };
    let limit = Limit {
        runtime: None,
        bytes: Some(bulk),
        ios: None,
        min_ios: 0,
    };
    let mut s = base_step(label, p, pattern, to_u32("zone_bytes", bs)?, limit, index);
    s.prepare = Prepare::Position;
    s.iodepth = 1;
    s.jobs = 1;
    s.ramp = crate::units::Nanos(0);
    Ok(s)
}

/// The label of a single-step workload's step, whose figures are the
/// test's summary.
pub const MAIN_LABEL: &str = "main";

/// The label of a `zones` surface point, before its number.
pub const SURFACE_PREFIX: &str = "surface_";

/// diskinfo -t's transfer rates plus a surface curve.
///
/// - `outside`, `middle`, `inside`: bulk = min(zone_bytes, range - 1 block)
///   read as 1 MiB sequential requests at QD1 (smaller when the bulk is)
///   from one block after the range start (diskinfo reads sector 0 untimed
///   first), from the middle minus half the bulk, and ending at the range end.
/// - `surface_00`..: `points` reads of zone_bytes / 4 (at least 1 MiB, at
///   most the bulk's room, rounded down to the request size) evenly spaced
///   from one block after the range start to the range end.
fn zones(p: &Params, range: Range, lb: u32) -> Result<Vec<Step>, PlanError> {
    let lb64 = u64::from(lb);
    let room = range.len.saturating_sub(lb64);
    let fit = |want: u64| -> Result<(u64, u64), PlanError> {
        let b = want.min(room) / lb64 * lb64;
        if b == 0 {
            return Err(PlanError::TooSmall {
                field: "size",
                needed: 2 * lb64,
                available: range.len,
            });
        }
        let bs = ZONE_BS.min(b) / lb64 * lb64;
        Ok((b / bs * bs, bs))
    };
    let (bulk, bs) = fit(p.zone_bytes.0)?;
    let end = range.start + range.len;
    let middle = (range.start + (range.len / 2).saturating_sub(bulk / 2) / lb64 * lb64).max(range.start + lb64);
    let mut steps = vec![
        zone_step("outside".to_string(), p, range.start + lb64, bulk, bs, 0)?,
        zone_step("middle".to_string(), p, middle, bulk, bs, 1)?,
        zone_step("inside".to_string(), p, end - bulk, bulk, bs, 2)?,
    ];
    let (pbulk, pbs) = fit((p.zone_bytes.0 / 4).max(MIB))?;
    let span = room - pbulk;
    let points = u64::from(p.points);
    let width = if points > 100 { 4 } else { 2 };
    for i in 0..points {
        let off = if points == 1 {
            0
        } else {
            u64::try_from(u128::from(span) * u128::from(i) / u128::from(points - 1)).unwrap_or(span)
        };
        let start = range.start + lb64 + off / lb64 * lb64;
        steps.push(zone_step(
            format!("{SURFACE_PREFIX}{i:0width$}"),
            p,
            start,
            pbulk,
            pbs,
            3 + i,
        )?);
    }
    Ok(steps)
}

/// diskinfo -c (`commandtime`): each timed loop follows an untimed read of
/// the range's first block (`rdsect(fd, 0)`). `big` then reads `size` bytes
/// (default 10 MiB) as sequential 1 MiB requests from the next block on
/// (diskinfo's `rdmega` loop reads on from its position, it does not re-read
/// one MiB); `small` re-reads the first block as many times as the big reads
/// have blocks (20480 for 512-byte sectors). Overhead = (small - big) /
/// small reads.
fn command_overhead(p: &Params, range: Range, lb: u32) -> Result<Vec<Step>, PlanError> {
    let lb64 = u64::from(lb);
    let total = p.size.map_or(COMMAND_OVERHEAD_BYTES, |s| s.0) / lb64 * lb64;
    if total + lb64 > range.len || total == 0 {
        return Err(PlanError::TooSmall {
            field: "size",
            needed: total.max(lb64) + lb64,
            available: range.len,
        });
    }
    let bs = ZONE_BS.min(total) / lb64 * lb64;
    let total = total / bs * bs;
    let mut big = base_step(
        "big".to_string(),
        p,
        Pattern::Seq {
            op: Op::Read,
            start: range.start + lb64,
            end: range.start + lb64 + total,
        },
        to_u32("size", bs)?,
        Limit {
            runtime: None,
            bytes: Some(total),
            ios: None,
            min_ios: 0,
        },
        0,
    );
    let mut small = base_step(
        "small".to_string(),
        p,
        Pattern::Fixed {
            op: Op::Read,
            offset: range.start,
        },
        lb,
        Limit {
            runtime: None,
            bytes: None,
            ios: Some(total / lb64),
            min_ios: 0,
        },
        1,
    );
    big.prepare = Prepare::Position;
    small.prepare = Prepare::Warm;
    for s in [&mut big, &mut small] {
        s.iodepth = 1;
        s.jobs = 1;
        s.ramp = crate::units::Nanos(0);
    }
    Ok(vec![big, small])
}

/// diskinfo -i: random reads at each size (the logical block, 4 KiB,
/// 32 KiB, 128 KiB, 1024 KiB; sizes below or not a multiple of the block
/// skipped), labelled by the size in bytes, with the test's iodepth, jobs
/// and bounds. Offsets are uniform over the range and aligned to the size,
/// as diskinfo's `iops` draws `random() % (mediasize / size) * size`.
fn iops_sweep(p: &Params, range: Range, lb: u32, limit: Limit) -> Result<Vec<Step>, PlanError> {
    let lb64 = u64::from(lb);
    let mut sizes = vec![lb64];
    for s in IOPS_SWEEP_SIZES {
        if s > lb64 && s % lb64 == 0 {
            sizes.push(s);
        }
    }
    let mut steps = Vec::new();
    for (i, size) in sizes.into_iter().enumerate() {
        if size.saturating_mul(u64::from(p.jobs)) > range.len {
            return Err(PlanError::TooSmall {
                field: "size",
                needed: size * u64::from(p.jobs),
                available: range.len,
            });
        }
        let end = range.start + range.len / size * size;
        let pattern = Pattern::Random {
            read_pct: 100,
            start: range.start,
            end,
        };
        steps.push(base_step(
            size.to_string(),
            p,
            pattern,
            to_u32("bs", size)?,
            limit,
            i as u64,
        ));
    }
    Ok(steps)
}

/// The commit-size test: `size / bs` sequential writes from the range
/// start, flushed every `flush_every` writes (`flush_every_<k>`), then the
/// same writes with one flush at the end (`flush_every_all`).
fn commit(p: &Params, range: Range, bs: u32) -> Result<Vec<Step>, PlanError> {
    let Some(size) = p.size else {
        return Err(out_of_range("size", 0, "a size bound: commit writes size bytes"));
    };
    let bs64 = u64::from(bs);
    let ios = size.0 / bs64;
    if ios == 0 {
        return Err(PlanError::TooSmall {
            field: "size",
            needed: bs64,
            available: size.0,
        });
    }
    let pattern = Pattern::Seq {
        op: Op::Write,
        start: range.start,
        end: range.start + ios * bs64,
    };
    let limit = Limit {
        runtime: None,
        bytes: None,
        ios: Some(ios),
        min_ios: 0,
    };
    let mut every = base_step(
        format!("flush_every_{}", p.flush_every),
        p,
        pattern.clone(),
        bs,
        limit,
        0,
    );
    every.flush_every = Some(p.flush_every);
    let mut all = base_step(COMMIT_ALL_LABEL.to_string(), p, pattern, bs, limit, 1);
    all.flush_every = None;
    for s in [&mut every, &mut all] {
        s.flush_at_end = true;
        s.jobs = 1;
    }
    Ok(vec![every, all])
}

/// The label of `commit`'s reference step: every write, one flush at the end.
pub const COMMIT_ALL_LABEL: &str = "flush_every_all";

/// diskinfo -S (FreeBSD `diskinfo.c` `slogbench`): for each size from the
/// logical block doubling up to `max_bs` (and the range), labelled by the
/// size in bytes: writes of that size, one at a time, each at a uniform
/// random offset aligned to the size (`random() % (mediasize / size) *
/// size`) and each followed by a cache flush (`DIOCGFLUSH`), in batches of
/// [`SLOG_BATCH`] until `runtime` (diskinfo: 1 s) has passed at the end of
/// a batch. Timed from the first write to the last flush, as diskinfo's
/// `T0`..`TS`.
///
/// Departures: diskinfo writes a size above 128 KiB as 128 KiB pieces, all
/// but the last by AIO at once (`parwrite`: FreeBSD's `MAXPHYS` was
/// 128 KiB); here it is one write, which Linux's block layer splits into
/// requests of the queue's `max_sectors_kb`, in flight at once, the same
/// load. diskinfo's `T0` syncs and sleeps 1 s before each size; the sizes
/// here follow each other directly (the previous size ended on a flush).
/// `jobs`, `iodepth`, `ramp_time`, `bs` and `size` are not used.
fn slog(p: &Params, range: Range, lb: u32) -> Result<Vec<Step>, PlanError> {
    let lb64 = u64::from(lb);
    if p.runtime.is_none() {
        return Err(out_of_range(
            "runtime",
            0,
            "a runtime: slog writes each size for at least that long",
        ));
    }
    let max = p.max_bs.0;
    if max < lb64 {
        return Err(out_of_range("max_bs", max, "at least one logical block"));
    }
    if max > MAX_BS {
        return Err(out_of_range("max_bs", max, "at most 1 GiB (1073741824 B)"));
    }
    let limit = Limit {
        runtime: p.runtime,
        bytes: None,
        ios: None,
        min_ios: 0,
    };
    let mut steps = Vec::new();
    let mut size = lb64;
    while size <= max && size <= range.len {
        let pattern = Pattern::Random {
            read_pct: 0,
            start: range.start,
            end: range.start + range.len / size * size,
        };
        let index = steps.len() as u64;
        let mut s = base_step(size.to_string(), p, pattern, to_u32("max_bs", size)?, limit, index);
        s.iodepth = 1;
        s.jobs = 1;
        s.ramp = Nanos(0);
        s.flush_every = Some(1);
        s.runtime_batch = Some(SLOG_BATCH);
        // diskinfo's `off = random() % (mediasize / size)`: each drawn on its own.
        s.random_map = false;
        steps.push(s);
        size *= 2;
    }
    Ok(steps)
}

fn read_ios(d: Option<&DirStats>) -> u64 {
    d.map_or(0, |d| d.ios)
}

/// The headline figures of a test from its step results (the steps that
/// ran: after an error, the figures of the missing steps are absent).
///
/// - single-step workloads: the main step's read and write throughput and
///   IOPS, and the mean latency over reads and writes (weighted by count);
/// - `command_overhead`: (small.runtime - big.runtime) / small reads, ns per
///   command (diskinfo -c);
/// - `seek_profile`: mean read latency of each section;
/// - `zones`: read bytes/s per step, and as the headline read bytes/s the
///   mean over the surface points (evenly spaced over the range: the
///   surface's mean rate; with no points, over outside, middle, inside);
///   `iops_sweep`: read IOPS per step, and as the headline the highest
///   (the sweep's peak) with that step's read bytes/s; `commit`, `slog`:
///   write bytes/s per step (flushes included in the time), and for
///   `commit` the headline write bytes/s and IOPS of its `flush_every_N`
///   step (the commit size; `flush_every_all` is its reference).
///   The analysis compares these headlines (`crate::analysis`).
pub fn summarize(workload: Workload, steps: &[StepResult]) -> Summary {
    let mut s = Summary::default();
    let per_step = |f: &dyn Fn(&StepResult) -> Option<f64>| -> Vec<Figure> {
        steps
            .iter()
            .filter_map(|st| {
                f(st).map(|value| Figure {
                    label: st.label.clone(),
                    value,
                })
            })
            .collect()
    };
    match workload {
        Workload::SeekProfile => s.seek_ns = per_step(&|st| st.read.as_ref().map(|d| d.lat_ns.mean)),
        Workload::Zones => {
            s.per_step = per_step(&|st| st.read.as_ref().map(|d| d.bytes_per_sec));
            let surface: Vec<f64> = s
                .per_step
                .iter()
                .filter(|f| f.label.starts_with(SURFACE_PREFIX))
                .map(|f| f.value)
                .collect();
            let zones: Vec<f64> = if surface.is_empty() {
                s.per_step.iter().map(|f| f.value).collect()
            } else {
                surface
            };
            if !zones.is_empty() {
                #[allow(clippy::cast_precision_loss)] // a few hundred zones at most
                let n = zones.len() as f64;
                s.read_bytes_per_sec = Some(zones.iter().sum::<f64>() / n);
            }
        }
        Workload::IopsSweep => {
            s.per_step = per_step(&|st| st.read.as_ref().map(|d| d.iops));
            let peak = steps
                .iter()
                .filter_map(|st| st.read.as_ref())
                .max_by(|a, b| a.iops.total_cmp(&b.iops));
            if let Some(d) = peak {
                (s.read_iops, s.read_bytes_per_sec) = (Some(d.iops), Some(d.bytes_per_sec));
            }
        }
        Workload::Commit | Workload::Slog => {
            s.per_step = per_step(&|st| st.write.as_ref().map(|d| d.bytes_per_sec));
            if workload == Workload::Commit {
                let every = steps.iter().find(|st| st.label != COMMIT_ALL_LABEL);
                if let Some(d) = every.and_then(|st| st.write.as_ref()) {
                    (s.write_bytes_per_sec, s.write_iops) = (Some(d.bytes_per_sec), Some(d.iops));
                }
            }
        }
        Workload::CommandOverhead => {
            let find = |l: &str| steps.iter().find(|st| st.label == l);
            if let (Some(big), Some(small)) = (find("big"), find("small")) {
                let n = read_ios(small.read.as_ref());
                if n > 0 {
                    #[allow(clippy::cast_precision_loss)] // nanosecond counts far below 2^53
                    let v = (small.runtime_ns as f64 - big.runtime_ns as f64) / n as f64;
                    s.command_overhead_ns = Some(v);
                }
            }
        }
        _ => {
            if let Some(main) = steps.iter().find(|st| st.label == MAIN_LABEL) {
                s.read_bytes_per_sec = main.read.as_ref().map(|d| d.bytes_per_sec);
                s.read_iops = main.read.as_ref().map(|d| d.iops);
                s.write_bytes_per_sec = main.write.as_ref().map(|d| d.bytes_per_sec);
                s.write_iops = main.write.as_ref().map(|d| d.iops);
                let (mut sum, mut n) = (0.0, 0u64);
                for d in [main.read.as_ref(), main.write.as_ref()].into_iter().flatten() {
                    #[allow(clippy::cast_precision_loss)] // request counts far below 2^53
                    {
                        sum += d.lat_ns.mean * d.ios as f64;
                    }
                    n += d.ios;
                }
                if n > 0 {
                    #[allow(clippy::cast_precision_loss)] // request counts far below 2^53
                    let mean = sum / n as f64;
                    s.lat_mean_ns = Some(mean);
                }
            }
        }
    }
    s
}

/// A size as a name part: `4k`, `1m`, `2g`, or plain bytes (`1536`).
fn size_tag(b: u64) -> String {
    if b >= GIB && b % GIB == 0 {
        format!("{}g", b / GIB)
    } else if b >= MIB && b % MIB == 0 {
        format!("{}m", b / MIB)
    } else if b >= KIB && b % KIB == 0 {
        format!("{}k", b / KIB)
    } else {
        format!("{b}")
    }
}

/// A default test name for a workload and its parameters, e.g.
/// `rand_read_4k_qd32_j1`, `rand_rw70_4k_qd1_j1`, `iops_sweep_qd128_j1`,
/// `commit_16k_every10`, `seek_profile`.
pub fn default_name(spec: &TestSpec) -> String {
    let p = &spec.params;
    let w = spec.workload;
    match w {
        Workload::SeekProfile | Workload::Zones | Workload::CommandOverhead => w.name().to_string(),
        Workload::Slog => format!("{}_to_{}", w.name(), size_tag(p.max_bs.0)),
        Workload::IopsSweep => format!("{}_qd{}_j{}", w.name(), p.iodepth, p.jobs),
        Workload::Commit => format!("{}_{}_every{}", w.name(), size_tag(p.bs.0), p.flush_every),
        Workload::RandRw => format!(
            "{}{}_{}_qd{}_j{}",
            w.name(),
            p.rwmixread,
            size_tag(p.bs.0),
            p.iodepth,
            p.jobs
        ),
        _ => format!("{}_{}_qd{}_j{}", w.name(), size_tag(p.bs.0), p.iodepth, p.jobs),
    }
}

/// The slowest transfer a byte-bound step is allowed before its test is
/// past its deadline: 1 MiB/s per job (an old USB stick still does that).
pub const DEADLINE_MIN_RATE: u64 = MIB;
/// The longest average time per request of a count-bound step: 100 ms
/// (a full-stroke seek plus a retry on a slow disk).
pub const DEADLINE_MAX_REQUEST: Nanos = Nanos(100_000_000);
/// Added to every test's deadline: opening, preparation (cache drops), the
/// first request's wake-up of a sleeping disk.
pub const DEADLINE_SLACK: Nanos = Nanos(30_000_000_000);

/// The most time a step may take on a working device: its ramp plus the
/// soonest of its bounds, each taken at the slow limits above (a runtime
/// bound as it is, or its `min_ios` requests at those limits if longer,
/// and at least one whole batch of a `runtime_batch` step, each request at
/// 1 MiB/s plus 100 ms for its flush). Twice that for a verifying step (the
/// read-back reads what was written). Plus its settle time. That for each
/// of its passes, warm-up included; plus its fill (its range at the slow
/// rate) and its pause.
pub fn step_budget(step: &Step) -> Nanos {
    let l = &step.limit;
    // A runtime bound lasts at least `min_ios` requests, each at the slow
    // limits (the longest request time, or its bytes at the slowest rate).
    let slowest_request = u64::try_from(u128::from(step.bs) * 1_000_000_000 / u128::from(DEADLINE_MIN_RATE))
        .unwrap_or(u64::MAX)
        .max(DEADLINE_MAX_REQUEST.0);
    let batch = step.runtime_batch.map_or(0, |b| {
        let one =
            u128::from(step.bs) * 1_000_000_000 / u128::from(DEADLINE_MIN_RATE) + u128::from(DEADLINE_MAX_REQUEST.0);
        u64::try_from(u128::from(b) * one).unwrap_or(u64::MAX)
    });
    let by_time = l
        .runtime
        .map(|t| t.0.max(l.min_ios.saturating_mul(slowest_request)).max(batch));
    let by_bytes = l
        .bytes
        .map(|b| u64::try_from(u128::from(b) * 1_000_000_000 / u128::from(DEADLINE_MIN_RATE)).unwrap_or(u64::MAX));
    let by_ios = l.ios.map(|n| n.saturating_mul(DEADLINE_MAX_REQUEST.0));
    let bound = [by_time, by_bytes, by_ios].into_iter().flatten().min().unwrap_or(0);
    let run = step.ramp.0.saturating_add(bound);
    let run = if step.verify { run.saturating_mul(2) } else { run };
    // hdparm's settle (sync and sleep) before the timed part.
    let pass = run.saturating_add(step.settle.0);
    let passes = u64::from(step.passes.max(1)).saturating_add(u64::from(step.warmup));
    let fill = if step.fill {
        let (start, end) = crate::spec::step_range(step);
        u64::try_from(u128::from(end.saturating_sub(start)) * 1_000_000_000 / u128::from(DEADLINE_MIN_RATE))
            .unwrap_or(u64::MAX)
    } else {
        0
    };
    Nanos(
        pass.saturating_mul(passes)
            .saturating_add(fill)
            .saturating_add(step.pause.0),
    )
}

/// A test's deadline, from its plan: twice the sum of its steps' budgets
/// ([`step_budget`]) plus [`DEADLINE_SLACK`]. A test still running then is
/// stopped with status `timeout`: a device that slow, or hung, is reported,
/// not waited for.
pub fn deadline(steps: &[Step]) -> Nanos {
    let sum = steps.iter().fold(0u64, |a, s| a.saturating_add(step_budget(s).0));
    Nanos(sum.saturating_mul(2).saturating_add(DEADLINE_SLACK.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    const HDD: Geometry = Geometry {
        size: 64 * GIB,
        logical_block: 512,
        physical_block: 4096,
    };

    fn spec(workload: Workload, f: impl FnOnce(&mut Params)) -> TestSpec {
        TestSpec::new("t", workload, f)
    }

    /// A test's deadline: each step at the slow limits (runtime as given,
    /// bytes at 1 MiB/s, requests at 100 ms), the soonest bound, ramp added,
    /// verify doubled; then twice the sum plus 30 s.
    #[test]
    fn deadline_from_the_plan() {
        let s = |limit: Limit, ramp: u64, verify: bool| {
            let mut st = base_step(
                "main".into(),
                &Params::defaults(),
                Pattern::Fixed {
                    op: Op::Read,
                    offset: 0,
                },
                4096,
                limit,
                0,
            );
            (st.ramp, st.verify) = (Nanos::from_secs(ramp), verify);
            st
        };
        let lim = |runtime: Option<u64>, bytes: Option<u64>, ios: Option<u64>| Limit {
            runtime: runtime.map(Nanos::from_secs),
            bytes,
            ios,
            min_ios: 0,
        };
        let cases = [
            (s(lim(Some(5), None, None), 0, false), 5),
            (s(lim(Some(5), None, None), 2, false), 7),
            (s(lim(None, Some(64 * MIB), None), 0, false), 64),
            (s(lim(Some(5), Some(64 * MIB), None), 0, false), 5),
            (s(lim(Some(500), Some(64 * MIB), None), 1, false), 65),
            (s(lim(None, None, Some(300)), 0, false), 30),
            (s(lim(Some(5), None, None), 1, true), 12),
            // min_ios 100 of 4 KiB at 100 ms each outlasts a 5 s runtime.
            (
                s(
                    Limit {
                        min_ios: 100,
                        ..lim(Some(5), None, None)
                    },
                    0,
                    false,
                ),
                10,
            ),
        ];
        for (i, (st, secs)) in cases.iter().enumerate() {
            assert_eq!(step_budget(st), Nanos::from_secs(*secs), "case {i}");
        }
        // Passes (warm-up included) multiply a step's budget; its fill
        // (the range at 1 MiB/s) and its pause add to it.
        let mut p = s(lim(Some(5), None, None), 1, false);
        (p.passes, p.warmup) = (5, 1);
        assert_eq!(step_budget(&p), Nanos::from_secs(6 * 6));
        p.pause = Nanos::from_secs(5);
        assert_eq!(step_budget(&p), Nanos::from_secs(6 * 6 + 5));
        (p.fill, p.bs) = (true, 1 << 20);
        p.pattern = Pattern::Seq {
            op: Op::Read,
            start: 0,
            end: 64 * MIB,
        };
        assert_eq!(step_budget(&p), Nanos::from_secs(6 * 6 + 5 + 64));
        assert_eq!(deadline(&[]), DEADLINE_SLACK);
        assert_eq!(
            deadline(&[cases[0].0.clone(), cases[2].0.clone()]),
            Nanos::from_secs(2 * (5 + 64) + 30)
        );
        // Every workload of the standard profile gets a finite deadline
        // above its nominal time.
        for t in crate::profile::profile("standard").unwrap() {
            let steps = expand(&t, &HDD).unwrap();
            let d = deadline(&steps);
            assert!(d > DEADLINE_SLACK && d.0 < u64::MAX / 2, "{}: {d:?}", t.name);
        }
    }

    #[test]
    fn validation_errors_name_the_field() {
        type Case = (Workload, fn(&mut Params), PlanError);
        let cases: [Case; 18] = [
            (
                Workload::RandRead,
                |p| p.bs = Bytes(0),
                out_of_range("bs", 0, "at least one logical block"),
            ),
            (
                Workload::RandRead,
                |p| p.bs = Bytes(1000),
                PlanError::NotAligned {
                    field: "bs",
                    value: 1000,
                    block: 512,
                },
            ),
            (
                Workload::RandRead,
                |p| p.offset = Bytes(100),
                PlanError::NotAligned {
                    field: "offset",
                    value: 100,
                    block: 512,
                },
            ),
            (
                Workload::RandRead,
                |p| p.length = Some(Bytes(700)),
                PlanError::NotAligned {
                    field: "length",
                    value: 700,
                    block: 512,
                },
            ),
            (
                Workload::RandRead,
                |p| (p.offset, p.length) = (Bytes(GIB), Some(Bytes(64 * GIB))),
                PlanError::TooSmall {
                    field: "offset+length",
                    needed: 65 * GIB,
                    available: 64 * GIB,
                },
            ),
            (
                Workload::RandRead,
                |p| p.iodepth = 0,
                out_of_range("iodepth", 0, "1 to 4096"),
            ),
            (
                Workload::RandRead,
                |p| p.iodepth = 4097,
                out_of_range("iodepth", 4097, "1 to 4096"),
            ),
            (
                Workload::RandRead,
                |p| p.jobs = 257,
                out_of_range("jobs", 257, "1 to 256"),
            ),
            (
                Workload::RandRw,
                |p| p.rwmixread = 101,
                out_of_range("rwmixread", 101, "0 to 100"),
            ),
            (
                Workload::Commit,
                |p| p.flush_every = 0,
                out_of_range("flush_every", 0, "at least 1"),
            ),
            (
                Workload::Zones,
                |p| p.points = 1025,
                out_of_range("points", 1025, "1 to 1024"),
            ),
            (
                Workload::SeqRead,
                |p| (p.length, p.size) = (Some(Bytes(MIB)), Some(Bytes(2 * MIB))),
                PlanError::TooSmall {
                    field: "size",
                    needed: 2 * MIB,
                    available: MIB,
                },
            ),
            (
                Workload::SeqRead,
                |p| (p.length, p.bs, p.jobs) = (Some(Bytes(MIB)), Bytes(MIB), 2),
                PlanError::TooSmall {
                    field: "bs",
                    needed: 2 * MIB,
                    available: MIB,
                },
            ),
            (
                Workload::RandRead,
                |p| (p.runtime, p.size) = (None, None),
                out_of_range("runtime", 0, "a runtime or a size bound (or both)"),
            ),
            (
                Workload::RandRead,
                |p| p.passes = 0,
                out_of_range("passes", 0, "1 to 100"),
            ),
            (
                Workload::RandRead,
                |p| p.passes = 101,
                out_of_range("passes", 101, "1 to 100"),
            ),
            (
                Workload::RandRead,
                |p| p.warmup = 101,
                out_of_range("warmup", 101, "0 to 100"),
            ),
            (
                Workload::Zones,
                |p| p.fill = true,
                out_of_range(
                    "fill",
                    1,
                    "false: only seq_read, seq_write, rand_read, rand_write and rand_rw fill their range",
                ),
            ),
        ];
        for (w, f, want) in cases {
            assert_eq!(expand(&spec(w, f), &HDD), Err(want.clone()), "{want}");
        }
    }

    #[test]
    fn error_messages_name_field_value_and_expectation() {
        let e = PlanError::NotAligned {
            field: "bs",
            value: 1000,
            block: 512,
        };
        assert_eq!(
            e.to_string(),
            "bs = 1000 B is not a multiple of the logical block size (512 B)"
        );
        let e = PlanError::TooSmall {
            field: "size",
            needed: 10,
            available: 5,
        };
        assert_eq!(e.to_string(), "size needs 10 B but only 5 B are available");
        assert_eq!(
            out_of_range("jobs", 0, "1 to 256").to_string(),
            "jobs = 0 is out of range: expected 1 to 256"
        );
    }

    /// `passes` and `warmup` reach every step, the pause the last one only
    /// (after the test), the fill the first one only (before it);
    /// `TestSpec::writes` counts a fill as a write.
    #[test]
    fn passes_fill_and_pause_reach_the_steps() {
        let c = spec(Workload::Commit, |p| {
            (p.bs, p.size, p.runtime) = (Bytes(16 * KIB), Some(Bytes(MIB)), None);
            (p.passes, p.warmup, p.pause) = (3, 2, Nanos::from_secs(4));
        });
        let steps = expand(&c, &HDD).unwrap();
        assert_eq!(steps.len(), 2);
        for st in &steps {
            assert_eq!((st.passes, st.warmup, st.fill), (3, 2, false), "{}", st.label);
        }
        assert_eq!((steps[0].pause, steps[1].pause), (Nanos(0), Nanos::from_secs(4)));
        let r = spec(Workload::SeqRead, |p| p.fill = true);
        assert!(expand(&r, &HDD).unwrap()[0].fill);
        assert!(r.writes() && !r.workload.writes());
        assert!(!spec(Workload::SeqRead, |_| ()).writes());
        let d = Params::defaults();
        assert_eq!((d.passes, d.warmup, d.fill, d.pause), (1, 0, false, Nanos(0)));
    }

    #[test]
    fn single_step_workloads() {
        let s = spec(Workload::RandRw, |p| {
            (p.bs, p.iodepth, p.rwmixread, p.offset, p.length) =
                (Bytes(4096), 32, 70, Bytes(MIB), Some(Bytes(10_000 * 512)))
        });
        let steps = expand(&s, &HDD).unwrap();
        assert_eq!(steps.len(), 1);
        let st = &steps[0];
        assert_eq!(st.label, "main");
        // Range rounded down to whole requests: 5,120,000 B -> 1250 x 4096.
        assert_eq!(
            st.pattern,
            Pattern::Random {
                read_pct: 70,
                start: MIB,
                end: MIB + 1250 * 4096
            }
        );
        assert_eq!(
            (st.iodepth, st.access, st.limit.runtime),
            (32, Access::Direct, Some(Nanos::from_secs(5)))
        );
        assert!(st.writes());

        // fio's end_fsync=0: no final flush unless the test asks for one.
        let st = &expand(&spec(Workload::SeqWrite, |_| ()), &HDD).unwrap()[0];
        assert!(!st.flush_at_end);
        let with = &expand(&spec(Workload::SeqWrite, |p| p.end_fsync = Some(true)), &HDD).unwrap()[0];
        assert!(with.flush_at_end);
        assert_eq!(
            st.pattern,
            Pattern::Seq {
                op: Op::Write,
                start: 0,
                end: 64 * GIB
            }
        );

        // hdparm -T (`time_cache`): warm, flush_buffer_cache, then re-read
        // one at a time, touching every 512th byte (`read_big_block`).
        let st = &expand(
            &spec(Workload::CachedRead, |p| (p.bs, p.iodepth) = (Bytes(2 * MIB), 8)),
            &HDD,
        )
        .unwrap()[0];
        assert_eq!(
            (st.access, st.prepare, st.iodepth, st.touch_every),
            (Access::Buffered, Prepare::WarmThenDrop, 1, Some(512))
        );
        assert_eq!(st.settle, Nanos::from_secs(1));
        assert_eq!(
            st.pattern,
            Pattern::Fixed {
                op: Op::Read,
                offset: 0
            }
        );

        // hdparm -t stops at the end of the range: bytes bound = range.
        let g = Geometry { size: 10 * MIB, ..HDD };
        let st = &expand(
            &spec(Workload::BufferedRead, |p| (p.bs, p.iodepth) = (Bytes(2 * MIB), 8)),
            &g,
        )
        .unwrap()[0];
        assert_eq!(
            (st.access, st.prepare, st.limit.bytes, st.iodepth, st.touch_every),
            (Access::Buffered, Prepare::DropCaches, Some(10 * MIB), 1, Some(512))
        );
        assert_eq!(st.settle, Nanos::from_secs(3));
        let st = &expand(
            &spec(Workload::DirectRead, |p| (p.bs, p.iodepth) = (Bytes(2 * MIB), 8)),
            &g,
        )
        .unwrap()[0];
        assert_eq!(
            (st.access, st.prepare, st.iodepth, st.touch_every),
            (Access::Direct, Prepare::None, 1, Some(512))
        );
        assert_eq!(st.settle, Nanos::from_secs(3));
    }

    #[test]
    fn seek_profile_follows_diskinfo() {
        let steps = expand(&spec(Workload::SeekProfile, |_| ()), &HDD).unwrap();
        let n = HDD.size / 512;
        // 64 GiB / 512 = 2^27 sectors; / 800 = 167772 -> 131072, capped at 16384.
        assert_eq!(seek_step(n), 16384);
        assert_eq!(seek_step(2048), 2);
        assert_eq!(seek_step(800 * 1000), 512);
        let st = 16384 * 512;
        let want: [(&str, u64, Vec<u64>, Vec<i64>); 7] = [
            ("full_stroke", 250, vec![0, (n - 16384) * 512], vec![st, -st]),
            (
                "half_stroke",
                250,
                vec![n / 4 * 512, (n / 4 + n / 2) * 512],
                vec![st, st],
            ),
            ("quarter_stroke", 500, vec![n / 4 * 512, n / 2 * 512], vec![st, st]),
            ("short_forward", 400, vec![n / 2 * 512], vec![st]),
            ("short_backward", 400, vec![n / 2 * 512], vec![-st]),
            ("seq_outer", 2048, vec![0], vec![512]),
            ("seq_inner", 2048, vec![(n - 2048) * 512], vec![512]),
        ];
        assert_eq!(steps.len(), 7);
        for (s, (label, ios, starts, strides)) in steps.iter().zip(want) {
            assert_eq!(s.label, label);
            assert_eq!(
                s.limit,
                Limit {
                    runtime: None,
                    bytes: None,
                    ios: Some(ios),
                    min_ios: 0,
                }
            );
            assert_eq!(s.pattern, Pattern::Cursors { starts, strides });
            assert_eq!((s.bs, s.iodepth, s.jobs, s.access), (512, 1, 1, Access::Direct));
        }
        // Too small for seq_inner's 2048 sectors.
        let g = Geometry {
            size: 2047 * 512,
            ..HDD
        };
        assert!(matches!(
            expand(&spec(Workload::SeekProfile, |_| ()), &g),
            Err(PlanError::TooSmall { field: "size", .. })
        ));
        // The smallest target that fits: every cursor stays inside.
        let g = Geometry {
            size: 2048 * 512,
            ..HDD
        };
        for s in expand(&spec(Workload::SeekProfile, |_| ()), &g).unwrap() {
            let (lo, hi) = crate::spec::step_range(&s);
            assert!(hi <= g.size && lo < hi, "{}: {lo}..{hi}", s.label);
        }
    }

    #[test]
    fn zones_layout() {
        let s = spec(Workload::Zones, |p| (p.zone_bytes, p.points) = (Bytes(100 * MIB), 5));
        let steps = expand(&s, &HDD).unwrap();
        let labels: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "outside",
                "middle",
                "inside",
                "surface_00",
                "surface_01",
                "surface_02",
                "surface_03",
                "surface_04"
            ]
        );
        let seq = |s: &Step| match s.pattern {
            Pattern::Seq { start, end, .. } => (start, end),
            _ => panic!("not seq"),
        };
        let bulk = 100 * MIB;
        assert_eq!(seq(&steps[0]), (512, 512 + bulk));
        assert_eq!(seq(&steps[1]), (32 * GIB - bulk / 2, 32 * GIB + bulk / 2));
        assert_eq!(seq(&steps[2]), (64 * GIB - bulk, 64 * GIB));
        // Surface points: 25 MiB each, from just after the start to the end.
        assert_eq!(seq(&steps[3]), (512, 512 + 25 * MIB));
        assert_eq!(seq(&steps[7]).1, 64 * GIB);
        for s in &steps {
            let (a, b) = seq(s);
            assert_eq!(s.limit.bytes, Some(b - a));
            assert_eq!(
                (s.bs, s.iodepth, s.prepare),
                (u32::try_from(MIB).unwrap(), 1, Prepare::Position)
            );
            assert_eq!(a % 512, 0);
        }
        // A target smaller than the bulk: the bulk shrinks to fit.
        let g = Geometry { size: 3 * MIB, ..HDD };
        let steps = expand(&spec(Workload::Zones, |p| p.points = 1), &g).unwrap();
        assert_eq!(seq(&steps[2]), (MIB, 3 * MIB));
        assert_eq!(steps.len(), 4);
    }

    #[test]
    fn command_overhead_iops_sweep_commit() {
        let steps = expand(&spec(Workload::CommandOverhead, |_| ()), &HDD).unwrap();
        assert_eq!(
            steps[0].pattern,
            Pattern::Seq {
                op: Op::Read,
                start: 512,
                end: 512 + 10 * MIB
            }
        );
        assert_eq!((steps[0].bs, steps[0].limit.bytes), (1 << 20, Some(10 * MIB)));
        assert_eq!((steps[0].prepare, steps[1].prepare), (Prepare::Position, Prepare::Warm));
        assert_eq!(
            steps[1].pattern,
            Pattern::Fixed {
                op: Op::Read,
                offset: 0
            }
        );
        assert_eq!((steps[1].bs, steps[1].limit.ios), (512, Some(20480)));

        let g4k = Geometry {
            logical_block: 4096,
            ..HDD
        };
        for (g, labels) in [
            (HDD, vec!["512", "4096", "32768", "131072", "1048576"]),
            (g4k, vec!["4096", "32768", "131072", "1048576"]),
        ] {
            let steps = expand(&spec(Workload::IopsSweep, |p| p.iodepth = 128), &g).unwrap();
            let got: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
            assert_eq!(got, labels);
            for s in &steps {
                assert_eq!(s.bs.to_string(), s.label);
                assert_eq!(s.iodepth, 128);
                assert!(matches!(s.pattern, Pattern::Random { read_pct: 100, .. }));
            }
        }

        let s = spec(Workload::Commit, |p| {
            (p.bs, p.size, p.flush_every) = (Bytes(16 * KIB), Some(Bytes(MIB)), 4)
        });
        let steps = expand(&s, &HDD).unwrap();
        assert_eq!(steps[0].label, "flush_every_4");
        assert_eq!(steps[1].label, "flush_every_all");
        assert_eq!((steps[0].flush_every, steps[1].flush_every), (Some(4), None));
        for s in &steps {
            assert_eq!(s.limit.ios, Some(64));
            assert!(s.flush_at_end && s.writes());
        }
        let s = spec(Workload::Commit, |p| p.size = None);
        assert!(matches!(
            expand(&s, &HDD),
            Err(PlanError::OutOfRange { field: "size", .. })
        ));
    }

    /// diskinfo -S (`slogbench`): `for (size = sectorsize; size <= MAXTX;
    /// size *= 2)`, one step per size, each write of that size at a random
    /// size-aligned offset, one at a time, a flush after each, the 1 s
    /// checked after each batch of 250; capped by `max_bs` and the range.
    #[test]
    fn slog_follows_diskinfo_s() {
        let sizes = |g: &Geometry, f: fn(&mut Params)| -> Vec<u64> {
            expand(&spec(Workload::Slog, f), g)
                .unwrap()
                .iter()
                .map(|s| u64::from(s.bs))
                .collect()
        };
        let doubling = |from: u64, to: u64| -> Vec<u64> {
            let mut v = vec![from];
            while v[v.len() - 1] < to {
                v.push(v[v.len() - 1] * 2);
            }
            v
        };
        assert_eq!(sizes(&HDD, |_| ()), doubling(512, 8 * MIB));
        assert_eq!(sizes(&HDD, |_| ()).len(), 15);
        let g4k = Geometry {
            logical_block: 4096,
            ..HDD
        };
        assert_eq!(sizes(&g4k, |_| ()), doubling(4096, 8 * MIB));
        // Not a power-of-two multiple: the largest size below it.
        assert_eq!(sizes(&HDD, |p| p.max_bs = Bytes(3 * MIB)), doubling(512, 2 * MIB));
        // A range smaller than 8 MiB: sizes up to the range.
        assert_eq!(sizes(&HDD, |p| p.length = Some(Bytes(MIB + 512))), doubling(512, MIB));
        let s = spec(Workload::Slog, |p| {
            (p.offset, p.length, p.iodepth, p.jobs, p.ramp_time) = (Bytes(MIB), Some(Bytes(GIB)), 32, 4, Nanos(5))
        });
        let steps = expand(&s, &HDD).unwrap();
        for st in &steps {
            let size = u64::from(st.bs);
            assert_eq!(st.label, size.to_string());
            assert_eq!(
                st.pattern,
                Pattern::Random {
                    read_pct: 0,
                    start: MIB,
                    end: MIB + GIB / size * size
                }
            );
            assert_eq!(
                (st.iodepth, st.jobs, st.ramp, st.flush_every, st.flush_at_end),
                (1, 1, Nanos(0), Some(1), false)
            );
            assert_eq!(st.runtime_batch, Some(SLOG_BATCH));
            assert_eq!(
                st.limit,
                Limit {
                    runtime: Some(Nanos::from_secs(5)),
                    bytes: None,
                    ios: None,
                    min_ios: 0,
                }
            );
            assert!(st.writes() && st.access == Access::Direct);
        }
        // A deadline of at least one whole batch at the slow limits:
        // 250 x (8 MiB at 1 MiB/s + 100 ms).
        assert_eq!(
            step_budget(&steps[steps.len() - 1]),
            Nanos(250 * (8_000_000_000 + 100_000_000))
        );
        for (f, want) in [
            (
                (|p| p.runtime = None) as fn(&mut Params),
                out_of_range("runtime", 0, "a runtime: slog writes each size for at least that long"),
            ),
            (
                |p| p.max_bs = Bytes(256),
                out_of_range("max_bs", 256, "at least one logical block"),
            ),
            (
                |p| p.max_bs = Bytes(2 * GIB),
                out_of_range("max_bs", 2 * GIB, "at most 1 GiB (1073741824 B)"),
            ),
        ] {
            assert_eq!(expand(&spec(Workload::Slog, f), &HDD), Err(want.clone()), "{want}");
        }
    }

    #[test]
    fn default_names() {
        type Case = (Workload, fn(&mut Params), &'static str);
        let cases: [Case; 8] = [
            (Workload::RandRead, |p| p.iodepth = 32, "rand_read_4k_qd32_j1"),
            (Workload::SeqRead, |p| p.bs = Bytes(MIB), "seq_read_1m_qd1_j1"),
            (
                Workload::SeqWrite,
                |p| (p.bs, p.jobs) = (Bytes(1536), 4),
                "seq_write_1536_qd1_j4",
            ),
            (Workload::RandRw, |p| p.rwmixread = 60, "rand_rw60_4k_qd1_j1"),
            (Workload::SeekProfile, |_| (), "seek_profile"),
            (Workload::IopsSweep, |p| p.iodepth = 128, "iops_sweep_qd128_j1"),
            (
                Workload::Commit,
                |p| (p.bs, p.flush_every) = (Bytes(16 * KIB), 10),
                "commit_16k_every10",
            ),
            (Workload::Slog, |p| p.max_bs = Bytes(64 * KIB), "slog_to_64k"),
        ];
        for (w, f, want) in cases {
            assert_eq!(default_name(&spec(w, f)), want);
        }
    }
}
