//! The multi-step workloads, twins of FreeBSD's diskinfo: the seek profile
//! and transfer rates (-t), the command overhead (-c), the IOPS sweep (-i)
//! and the synchronous random writes (-S, which diskinfo runs only with
//! -w); and the commit-size test (seed 000's, not a diskinfo option).
//!
//! `diskinfo/streams.rs` runs each on the simulated disk and compares the
//! requests it serves with models of `diskinfo.c`'s loops.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::validate::MAX_BS;
use super::validate::{out_of_range, Range};
use super::{base_step, to_u32, PlanError};
use crate::io::Op;
use crate::spec::{Limit, Params, Pattern, Prepare, Step};
use crate::vocab::units::{Nanos, KIB, MIB};

/// diskinfo -c's big reads: 10 x 1 MiB unless `size` says otherwise.
pub const COMMAND_OVERHEAD_BYTES: u64 = 10 * MIB;

/// The request size of the transfer-rate reads (diskinfo's `rdmega`).
pub const ZONE_BS: u64 = MIB;

/// Sizes of the `iops_sweep` steps after the logical block (diskinfo -i's
/// `iopsbench`: sectorsize, then 4 KiB unless the sector is 4096 B, 32 KiB,
/// 128 KiB; then 1024 KiB, a step diskinfo does not have); sizes not above
/// the block or not a multiple of it are skipped.
pub const IOPS_SWEEP_SIZES: [u64; 4] = [4 * KIB, 32 * KIB, 128 * KIB, MIB];

/// diskinfo -S's batch: it checks its 1 s only after each 250 writes.
pub const SLOG_BATCH: u64 = 250;

/// One section of diskinfo -t's seek test: label, reads, and the cursors
/// as (start sector, stride in sectors).
type Section = (&'static str, u64, Vec<(u64, i64)>);

/// diskinfo -t's seek sections (FreeBSD `diskinfo.c` `speeddisk`), with
/// sector = the logical block and N = the range in sectors; positions are
/// relative to the range start. The first read of each section seeks from
/// where the previous one ended, as in diskinfo.
pub(super) fn seek_profile(p: &Params, range: Range, lb: u32) -> Result<Vec<Step>, PlanError> {
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
        // With a `runtime` (the quick profile's), a section also ends once
        // it has run that long after `min_ios` reads: its figure is a mean
        // latency, and the 5896 reads take a minute at 100 a second.
        let limit = Limit {
            runtime: p.runtime,
            bytes: None,
            ios: Some(reads),
            min_ios: p.min_ios,
        };
        let mut s = base_step(label.to_string(), p, pattern, lb, limit, i as u64);
        s.iodepth = 1;
        s.jobs = 1;
        s.ramp = crate::vocab::units::Nanos(0);
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
    s.ramp = crate::vocab::units::Nanos(0);
    Ok(s)
}

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
pub(super) fn zones(p: &Params, range: Range, lb: u32) -> Result<Vec<Step>, PlanError> {
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
///
/// Departure: diskinfo reads 20480 sectors whatever their size, so on
/// 4096-byte sectors its small reads move 80 MiB against the big reads' 10
/// and its figure holds the transfer of 3.5 KiB per command; here the two
/// loops move the same bytes (2560 re-reads there).
///
/// With a `runtime` (the quick profile's), each loop also ends once it has
/// run that long after at least `min_ios` requests, whichever bound comes
/// first: 20480 re-reads take 205 s on a disk of 100 commands a second.
/// The figure is then per block ([`crate::engine::plan::summary`]): a small read's
/// mean time less the big reads' time per block they moved, which is
/// diskinfo's `(small - big) / reads` when both loops run whole.
pub(super) fn command_overhead(p: &Params, range: Range, lb: u32) -> Result<Vec<Step>, PlanError> {
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
            runtime: p.runtime,
            bytes: Some(total),
            ios: None,
            min_ios: p.min_ios,
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
            runtime: p.runtime,
            bytes: None,
            ios: Some(total / lb64),
            min_ios: p.min_ios,
        },
        1,
    );
    big.prepare = Prepare::Position;
    small.prepare = Prepare::Warm;
    for s in [&mut big, &mut small] {
        s.iodepth = 1;
        s.jobs = 1;
        s.ramp = crate::vocab::units::Nanos(0);
    }
    Ok(vec![big, small])
}

/// diskinfo -i: random reads at each size (the logical block, 4 KiB,
/// 32 KiB, 128 KiB, 1024 KiB; sizes below or not a multiple of the block
/// skipped), labelled by the size in bytes, with the test's iodepth, jobs
/// and bounds. Offsets are uniform over the range and aligned to the size,
/// as diskinfo's `iops` draws `random() % (mediasize / size) * size`.
///
/// Departure: `random()` returns less than 2^31, so diskinfo reaches only
/// the first 2^31 blocks of a size (the first TiB at 512 B, 8 TiB at
/// 4 KiB); here the whole range, however large.
pub(super) fn iops_sweep(p: &Params, range: Range, lb: u32, limit: Limit) -> Result<Vec<Step>, PlanError> {
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
pub(super) fn commit(p: &Params, range: Range, bs: u32) -> Result<Vec<Step>, PlanError> {
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
/// As in [`iops_sweep`], the offsets cover the whole range, where
/// `random()` keeps diskinfo's in the first 2^31 blocks of the size.
/// `jobs`, `iodepth`, `ramp_time`, `bs` and `size` are not used.
pub(super) fn slog(p: &Params, range: Range, lb: u32) -> Result<Vec<Step>, PlanError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::tests::{spec, HDD};
    use crate::engine::plan::{expand, step_budget};
    use crate::io::{Access, Geometry};
    use crate::spec::Workload;
    use crate::vocab::units::{Bytes, Nanos, GIB};

    #[test]
    fn seek_profile_follows_diskinfo() {
        let steps = expand(&spec(Workload::SeekProfile, |p| p.runtime = None), &HDD).unwrap();
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
        // A runtime (and its least number of reads) bounds each section too.
        let timed = expand(
            &spec(Workload::SeekProfile, |p| {
                (p.runtime, p.min_ios) = (Some(Nanos::from_millis(500)), 64)
            }),
            &HDD,
        )
        .unwrap();
        for (a, b) in timed.iter().zip(&steps) {
            assert_eq!(
                a.limit,
                Limit {
                    runtime: Some(Nanos::from_millis(500)),
                    min_ios: 64,
                    ..b.limit
                }
            );
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
}

#[cfg(test)]
mod streams;
