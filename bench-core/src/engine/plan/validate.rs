//! The parameters of a test checked against each other and the target's
//! geometry, before any step is built.

use super::{buffered, PlanError};
use crate::engine::stats::MAX_SAMPLES;
use crate::io::Geometry;
use crate::spec::{Params, Workload};
use crate::vocab::cpus::MAX_CPUS;
use crate::vocab::units::{Nanos, GIB};

/// The largest request size accepted, bytes.
pub const MAX_BS: u64 = GIB;

/// The user's range after validation: `[start, start + len)`, `len` a
/// multiple of the logical block.
#[derive(Clone, Copy, Debug)]
pub(super) struct Range {
    pub(super) start: u64,
    pub(super) len: u64,
}

pub(super) fn out_of_range(field: &'static str, value: u64, expected: &'static str) -> PlanError {
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
/// The checks run in this order, and the first that fails is the error.
pub(super) fn validate(w: Workload, p: &Params, geom: &Geometry) -> Result<Range, PlanError> {
    let range = check_range(p, geom)?;
    check_queue(p)?;
    check_sampling(p)?;
    check_engine(w, p)?;
    check_bounds(w, p, range.len)?;
    check_passes(w, p)?;
    check_steady(w, p)?;
    Ok(range)
}

/// The block size, the request size and the user's range on the target.
fn check_range(p: &Params, geom: &Geometry) -> Result<Range, PlanError> {
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
    Ok(Range { start: p.offset.0, len })
}

/// Queue depth, jobs, the read share of a mix, `flush_every`, `points`.
fn check_queue(p: &Params) -> Result<(), PlanError> {
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
    Ok(())
}

/// The sample interval, and the samples a step's runtime would take.
fn check_sampling(p: &Params) -> Result<(), PlanError> {
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
    Ok(())
}

/// The engine options: the CPU lists and polled completions.
fn check_engine(w: Workload, p: &Params) -> Result<(), PlanError> {
    if p.iodepth_batch_submit > 4096 {
        return Err(out_of_range(
            "iodepth_batch_submit",
            u64::from(p.iodepth_batch_submit),
            "0 to 4096 (0 = iodepth)",
        ));
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
    Ok(())
}

/// The test's bound (`runtime`, `size`) and room for a request per job in
/// the range of `len` bytes.
fn check_bounds(w: Workload, p: &Params, len: u64) -> Result<(), PlanError> {
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
    Ok(())
}

/// `file_num`, the passes and warm-ups, and `fill`.
fn check_passes(w: Workload, p: &Params) -> Result<(), PlanError> {
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
    Ok(())
}

/// The steady-state wait ([`Params::steady`]): on a plain read/write
/// workload, a window of at least two intervals that fits in `ss_max`, and
/// no more intervals than a step keeps samples.
fn check_steady(w: Workload, p: &Params) -> Result<(), PlanError> {
    let Some(s) = &p.steady else { return Ok(()) };
    if !fills(w) {
        return Err(out_of_range(
            "ss",
            1,
            "absent: only seq_read, seq_write, rand_read, rand_write and rand_rw wait for steady state",
        ));
    }
    if s.ss_interval < MIN_SAMPLE_INTERVAL {
        return Err(out_of_range(
            "ss_interval",
            s.ss_interval.0,
            "at least 1 ms (1000000 ns), as sample_interval",
        ));
    }
    if s.ss_dur.0 < s.ss_interval.0.saturating_mul(2) {
        return Err(out_of_range(
            "ss_dur",
            s.ss_dur.0,
            "at least two ss_interval (a window of two figures or more)",
        ));
    }
    if s.ss_max.0 < s.ss_ramp.0.saturating_add(s.ss_dur.0) {
        return Err(out_of_range(
            "ss_max",
            s.ss_max.0,
            "at least ss_ramp + ss_dur (the window must fit in the wait)",
        ));
    }
    if s.ss_max.0 / s.ss_interval.0 > MAX_SAMPLES {
        return Err(out_of_range(
            "ss_max",
            s.ss_max.0,
            "at most 10000 ss_interval (the figures the wait keeps)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::expand;
    use crate::engine::plan::tests::{spec, HDD};
    use crate::vocab::units::{Bytes, MIB};

    /// A case: the workload, the parameter set wrong, and the error whose
    /// message names it.
    type Case = (Workload, fn(&mut Params), PlanError);

    /// Each case's parameters fail with its error: the first check that fails.
    fn assert_each_fails(cases: &[Case]) {
        for (w, f, want) in cases {
            assert_eq!(expand(&spec(*w, *f), &HDD), Err(want.clone()), "{want}");
        }
    }

    /// The range, the request size and the queue ([`check_range`],
    /// [`check_queue`]).
    #[test]
    fn range_and_queue_errors_name_the_field() {
        let cases: [Case; 11] = [
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
        ];
        assert_each_fails(&cases);
    }

    /// The test's bound, its passes and its fill ([`check_bounds`],
    /// [`check_passes`]).
    #[test]
    fn bound_and_pass_errors_name_the_field() {
        let cases: [Case; 7] = [
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
        assert_each_fails(&cases);
    }

    /// A steady-state wait ([`check_steady`]): a plain read/write workload,
    /// an interval of 1 ms or more, a window of two intervals or more that
    /// fits in `ss_max`, at most 10000 intervals.
    #[test]
    fn steady_state_errors_name_the_field() {
        use crate::spec::{SteadyCriterion, SteadySpec};
        fn wait(p: &mut Params, dur: u64, ramp: u64, interval: u64, max: u64) {
            p.steady = Some(SteadySpec {
                ss: SteadyCriterion::parse("iops:10%").unwrap(),
                ss_dur: Nanos(dur),
                ss_ramp: Nanos(ramp),
                ss_interval: Nanos(interval),
                ss_max: Nanos(max),
            });
        }
        const S: u64 = 1_000_000_000;
        let cases: [Case; 5] = [
            (
                Workload::Zones,
                |p| wait(p, 5 * S, 0, S, 50 * S),
                out_of_range(
                    "ss",
                    1,
                    "absent: only seq_read, seq_write, rand_read, rand_write and rand_rw wait for steady state",
                ),
            ),
            (
                Workload::RandWrite,
                |p| wait(p, 5 * S, 0, 999_999, 50 * S),
                out_of_range("ss_interval", 999_999, "at least 1 ms (1000000 ns), as sample_interval"),
            ),
            (
                Workload::RandWrite,
                |p| wait(p, S, 0, S, 50 * S),
                out_of_range(
                    "ss_dur",
                    S,
                    "at least two ss_interval (a window of two figures or more)",
                ),
            ),
            (
                Workload::SeqRead,
                |p| wait(p, 5 * S, 2 * S, S, 6 * S),
                out_of_range(
                    "ss_max",
                    6 * S,
                    "at least ss_ramp + ss_dur (the window must fit in the wait)",
                ),
            ),
            (
                Workload::RandRw,
                |p| wait(p, 5 * S, 0, S / 100, 101 * S),
                out_of_range(
                    "ss_max",
                    101 * S,
                    "at most 10000 ss_interval (the figures the wait keeps)",
                ),
            ),
        ];
        assert_each_fails(&cases);
        let mut ok = Params::defaults();
        wait(&mut ok, 5 * S, 2 * S, S, 7 * S);
        assert!(expand(&spec(Workload::RandWrite, |p| *p = ok.clone()), &HDD).is_ok());
    }
}
