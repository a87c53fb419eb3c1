//! Expanding a test into the steps it runs on a target of given geometry,
//! and the headline figures of its step results.
//!
//! Each workload is a twin of a classic tool (README.md's "Workloads and
//! profiles" table names which); where the twin departs from the tool, its
//! builder says so.
//!
//! [`expand`] checks the parameters (`validate.rs`), then builds the steps:
//! the single-step workloads here, diskinfo's multi-step ones in
//! `diskinfo.rs`. [`summarize`] (`summary.rs`) turns step results into a
//! test's headline figures, and [`deadline`] (`deadline.rs`) bounds how long
//! a test may take.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::engine::stats::MAX_SAMPLES;
use crate::io::{Access, Geometry, Op};
use crate::spec::{EngineOpts, Limit, Params, Pattern, Prepare, Step, TestSpec, Workload};
use crate::vocab::units::{Nanos, GIB, KIB, MIB};

mod deadline;
mod diskinfo;
mod summary;
mod validate;

pub use deadline::{deadline, step_budget, DEADLINE_MAX_REQUEST, DEADLINE_MIN_RATE, DEADLINE_SLACK};
use diskinfo::{command_overhead, commit, iops_sweep, seek_profile, slog, zones};
pub use diskinfo::{
    seek_step, COMMAND_OVERHEAD_BYTES, COMMIT_ALL_LABEL, IOPS_SWEEP_SIZES, SLOG_BATCH, SURFACE_PREFIX, ZONE_BS,
};
pub use summary::summarize;
use validate::{out_of_range, validate};
pub use validate::{MAX_BS, MAX_FILE_NUM, MAX_PASSES, MIN_SAMPLE_INTERVAL};

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
        end_close: false,
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
        steady: p.steady,
        zones: None,
    }
}

/// The engine options of a test's steps (`cpus_allowed` parsed when the
/// config was read).
fn engine_opts(p: &Params) -> EngineOpts {
    EngineOpts {
        hipri: p.hipri,
        sqthread_poll: p.sqthread_poll,
        sqthread_poll_cpu: p.sqthread_poll_cpu.filter(|_| p.sqthread_poll),
        sq_thread_idle: p.sq_thread_idle.filter(|_| p.sqthread_poll),
        ioengine: p.ioengine,
        read_digest: p.read_digest,
        iodepth_batch_submit: p.iodepth_batch_submit,
        cpus_allowed: p.cpus_allowed.as_ref().map(|c| c.cpus().to_vec()).unwrap_or_default(),
        cpus_allowed_policy: p.cpus_allowed_policy,
        mem_node: None,
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
/// default, as fio's `end_fsync=0`), and dd's close (`end_close`). Flushes
/// apply to steps that write only: sysbench's seqrd/rndrd never fsync
/// (`file_thread_done` skips the read modes, and `is_dirty` stays 0).
fn io_step(mut s: Step, p: &Params) -> Step {
    if !p.direct {
        s.access = Access::Buffered;
        s.prepare = Prepare::DropCaches;
    }
    let writes = s.writes();
    s.fsync_freq = (p.fsync_freq > 0 && writes).then_some(p.fsync_freq);
    s.fsync_files = p.file_num;
    s.flush_at_end = writes && p.end_fsync.unwrap_or(false);
    s.end_close = p.end_close;
    s
}

/// The label of a single-step workload's step, whose figures are the
/// test's summary.
pub const MAIN_LABEL: &str = "main";

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::units::Bytes;

    pub(super) const HDD: Geometry = Geometry {
        size: 64 * GIB,
        logical_block: 512,
        physical_block: 4096,
    };

    pub(super) fn spec(workload: Workload, f: impl FnOnce(&mut Params)) -> TestSpec {
        TestSpec::new("t", workload, f)
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
        // dd's close only when the test asks for it (dd if=DEV times it).
        assert!(!st.end_close);
        let dd = spec(Workload::SeqRead, |p| (p.direct, p.end_close) = (false, true));
        assert!(expand(&dd, &HDD).unwrap()[0].end_close);
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
