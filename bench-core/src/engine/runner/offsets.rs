//! The offsets and operations of one job, in order, from its step's pattern.

use alloc::vec::Vec;

use crate::io::{IoReq, Op};
use crate::spec::{MixOrder, Pattern, Step, ZoneMap};
use crate::vocab::rng::{Permutation, Rng};

/// The multiplier that spreads job numbers over the seed space (the
/// golden-ratio constant of splitmix64).
const JOB_SEED_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// The offsets and operations of one job, in order.
#[derive(Clone, Debug)]
pub struct OffsetGen {
    bs: u32,
    kind: GenKind,
    /// A zoned step's area laid onto its extents ([`Step::zones`]);
    /// `None`: offsets are the disk's.
    map: Option<AreaMap>,
}

/// A [`ZoneMap`] ready for lookups: where each extent starts on the disk
/// and in the area.
#[derive(Clone, Debug)]
struct AreaMap {
    /// Each extent's first byte on the disk.
    disk: Vec<u64>,
    /// Each extent's first byte in the area, then the area's end: extent i
    /// is `[area[i], area[i + 1])` of the area.
    area: Vec<u64>,
    /// Sequential writes at the write pointers: drain before the next
    /// extent, never wrap.
    at_write_pointers: bool,
}

impl AreaMap {
    fn new(m: &ZoneMap, bs: u64) -> AreaMap {
        let mut disk = Vec::with_capacity(m.extents.len());
        let mut area = Vec::with_capacity(m.extents.len() + 1);
        let mut at = 0u64;
        for e in &m.extents {
            let len = e.len / bs * bs;
            if len == 0 {
                continue;
            }
            disk.push(e.start);
            area.push(at);
            at += len;
        }
        area.push(at);
        AreaMap {
            disk,
            area,
            at_write_pointers: m.at_write_pointers,
        }
    }

    /// The disk's byte for byte `o` of the area (`o` below its end).
    fn disk_offset(&self, o: u64) -> u64 {
        // The last extent starting at or before `o` (area[0] is 0).
        let i = self.area.partition_point(|&a| a <= o).saturating_sub(1);
        match (self.disk.get(i), self.area.get(i)) {
            (Some(d), Some(a)) => d + (o - a),
            // Past the end (an empty area): the offset as it is.
            _ => o,
        }
    }

    /// Extents in the area.
    fn extents(&self) -> u64 {
        self.disk.len() as u64
    }
}

#[derive(Clone, Debug)]
enum GenKind {
    Seq {
        op: Op,
        start: u64,
        end: u64,
        cur: u64,
        /// Wraps to `start` at `end`; false: the walk ends there
        /// ([`OffsetGen::exhausted`]).
        wrap: bool,
    },
    Random {
        read_pct: u8,
        start: u64,
        blocks: u64,
        rng: Rng,
        /// sysbench's running ratio (`MixOrder::Ratio`): the reads and
        /// writes issued so far; `None`: each request draws its operation.
        ratio: Option<(u64, u64)>,
        /// fio's random map ([`Step::random_map`]): this pass's order of
        /// the blocks and how many it has given; `None`: each block drawn
        /// on its own.
        map: Option<(Permutation, u64)>,
    },
    Fixed {
        op: Op,
        offset: u64,
    },
    Cursors {
        pos: Vec<u64>,
        strides: Vec<i64>,
        next: usize,
    },
}

impl OffsetGen {
    /// The generator of job `job` of `step.jobs`:
    /// - `Seq`: job j gets slice j of `[start, end)` (equal slices, whole
    ///   requests), from its start, wrapping at its end;
    /// - `Random`: offsets `start + k * bs` with k in `0..(end - start) / bs`,
    ///   from `Rng::new(seed ^ job * 0x9E3779B97F4A7C15)`: with
    ///   [`Step::random_map`], k runs through a [`Permutation`] of the
    ///   blocks keyed by the generator's first output (every block once),
    ///   then through another keyed by its next output, and so on; without,
    ///   k is uniform, drawn for each request; for a mix, each request then draws `below(100) < read_pct` for a read
    ///   (`MixOrder::Random`), or is a read while
    ///   `(reads + 1) * (100 - read_pct) < (writes + 1) * read_pct`, sysbench's
    ///   `(reads + 1) / (writes + 1) < file-rw-ratio` over the job's requests
    ///   so far, exactly and without floating point (`MixOrder::Ratio`);
    /// - `Fixed`: the same request every time;
    /// - `Cursors`: round robin over the cursors, each moving by its stride.
    ///
    /// With [`Step::zones`], the offsets above are the area's, each laid
    /// onto the disk's extents; a sequential walk at the write pointers
    /// ([`ZoneMap::at_write_pointers`]) gives job j of n the extents from
    /// `j * E / n` to `(j + 1) * E / n` (E extents) and does not wrap.
    pub fn new(step: &Step, job: u32) -> OffsetGen {
        let bs = step.bs.max(1);
        let bs64 = u64::from(bs);
        let map = step.zones.as_ref().map(|m| AreaMap::new(m, bs64));
        let kind = match &step.pattern {
            Pattern::Seq { op, .. } if map.as_ref().is_some_and(|m| m.at_write_pointers) => {
                let m = map.as_ref().map_or(&[0u64][..], |m| &m.area[..]);
                let n = map.as_ref().map_or(0, AreaMap::extents);
                let jobs = u64::from(step.jobs.max(1));
                let j = u64::from(job);
                let at = |k: u64| m[usize::try_from(k).unwrap_or(usize::MAX).min(m.len() - 1)];
                let (s, e) = (at(j * n / jobs), at((j + 1) * n / jobs));
                GenKind::Seq {
                    op: *op,
                    start: s,
                    end: e,
                    cur: s,
                    wrap: false,
                }
            }
            Pattern::Seq { op, start, end } => {
                let blocks = end.saturating_sub(*start) / bs64;
                let per = (blocks / u64::from(step.jobs.max(1))).max(1);
                let s = start + u64::from(job) * per * bs64;
                GenKind::Seq {
                    op: *op,
                    start: s,
                    end: s + per * bs64,
                    cur: s,
                    wrap: true,
                }
            }
            Pattern::Random { read_pct, start, end } => {
                let blocks = (end.saturating_sub(*start) / bs64).max(1);
                let mut rng = Rng::new(step.seed ^ u64::from(job).wrapping_mul(JOB_SEED_MIX));
                let map = step.random_map.then(|| (Permutation::new(blocks, rng.next_u64()), 0));
                GenKind::Random {
                    read_pct: *read_pct,
                    start: *start,
                    blocks,
                    rng,
                    ratio: (step.rwmix_order == MixOrder::Ratio).then_some((0, 0)),
                    map,
                }
            }
            Pattern::Fixed { op, offset } => GenKind::Fixed {
                op: *op,
                offset: *offset,
            },
            Pattern::Cursors { starts, strides } => GenKind::Cursors {
                pos: starts.clone(),
                strides: strides.clone(),
                next: 0,
            },
        };
        OffsetGen { bs, kind, map }
    }

    /// True once a walk that does not wrap has given its last request.
    pub fn exhausted(&self) -> bool {
        matches!(&self.kind, GenKind::Seq { end, cur, wrap: false, .. } if *cur >= *end)
    }

    /// True if the next request is the first of another extent of a walk
    /// at the write pointers: the requests before it must complete first
    /// (one zone open per job).
    pub fn next_opens_extent(&self) -> bool {
        match (&self.kind, &self.map) {
            (GenKind::Seq { start, end, cur, .. }, Some(m)) if m.at_write_pointers => {
                *cur != *start && *cur < *end && m.area.binary_search(cur).is_ok()
            }
            _ => false,
        }
    }

    /// For a sequential walk, the requests after which it repeats itself
    /// (its slice in whole requests); `None` for other patterns.
    pub fn cycle_len(&self) -> Option<u64> {
        match &self.kind {
            GenKind::Seq { start, end, .. } => Some(end.saturating_sub(*start) / u64::from(self.bs)),
            _ => None,
        }
    }

    /// The next request.
    pub fn next_req(&mut self) -> IoReq {
        let len = self.bs;
        let (op, offset) = match &mut self.kind {
            GenKind::Seq {
                op,
                start,
                end,
                cur,
                wrap,
            } => {
                if *cur >= *end && *wrap {
                    *cur = *start;
                }
                let o = *cur;
                *cur += u64::from(len);
                (*op, o)
            }
            GenKind::Random {
                read_pct,
                start,
                blocks,
                rng,
                ratio,
                map,
            } => {
                let block = match map {
                    // Every block once in this pass's order; then, as fio
                    // clears its map when it is full (`fio_file_reset`),
                    // a new pass in a new order.
                    Some((perm, done)) => {
                        if *done == perm.len() {
                            *perm = Permutation::new(*blocks, rng.next_u64());
                            *done = 0;
                        }
                        *done += 1;
                        perm.at(*done - 1)
                    }
                    None => rng.below(*blocks),
                };
                let o = *start + block * u64::from(len);
                let op = match (*read_pct, ratio) {
                    (0, _) => Op::Write,
                    (100.., _) => Op::Read,
                    (pct, Some((reads, writes))) => {
                        let pct = u64::from(pct);
                        let read = (*reads + 1) * (100 - pct) < (*writes + 1) * pct;
                        if read {
                            *reads += 1;
                            Op::Read
                        } else {
                            *writes += 1;
                            Op::Write
                        }
                    }
                    (pct, None) => {
                        if rng.below(100) < u64::from(pct) {
                            Op::Read
                        } else {
                            Op::Write
                        }
                    }
                };
                (op, o)
            }
            GenKind::Fixed { op, offset } => (*op, *offset),
            GenKind::Cursors { pos, strides, next } => {
                if pos.is_empty() {
                    (Op::Read, 0)
                } else {
                    let i = *next % pos.len();
                    *next = (i + 1) % pos.len();
                    let o = pos[i];
                    let stride = strides.get(i).copied().unwrap_or(0);
                    pos[i] = o.checked_add_signed(stride).unwrap_or(o);
                    (Op::Read, o)
                }
            }
        };
        let offset = match &self.map {
            Some(m) => m.disk_offset(offset),
            None => offset,
        };
        IoReq { op, offset, len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::runner::testutil::{step, two_zones};
    use crate::io::Op;
    use crate::spec::step_range;

    fn offsets(s: &Step, job: u32, n: usize) -> Vec<IoReq> {
        let mut g = OffsetGen::new(s, job);
        (0..n).map(|_| g.next_req()).collect()
    }

    /// fio's random map (`random_map`, fio without `norandommap`): each
    /// job's first `blocks` requests hit every block of the range exactly
    /// once, and so do the next `blocks`, in another order; a mix's reads
    /// and writes share the one map (fio's map is the file's); every job
    /// has a map of its own (fio's jobs each open the file). Without it the
    /// offsets are drawn on their own: 4096 draws over 4096 blocks repeat
    /// some (about 1 - 1/e of the blocks are hit, 63%).
    #[test]
    fn random_map_visits_every_block_once_per_pass() {
        let (start, bs, blocks) = (1 << 20, 4096u32, 4096u64);
        let end = start + blocks * u64::from(bs);
        let block_of = |r: &IoReq| {
            assert_eq!((r.offset - start) % u64::from(bs), 0);
            (r.offset - start) / u64::from(bs)
        };
        for pct in [100u8, 50] {
            let mut s = step(
                Pattern::Random {
                    read_pct: pct,
                    start,
                    end,
                },
                bs,
                2,
            );
            s.random_map = true;
            for job in 0..2 {
                let reqs = offsets(&s, job, 2 * usize::try_from(blocks).unwrap());
                let (first, second): (Vec<u64>, Vec<u64>) = (
                    reqs[..4096].iter().map(block_of).collect(),
                    reqs[4096..].iter().map(block_of).collect(),
                );
                for (name, pass) in [("first", &first), ("second", &second)] {
                    let mut sorted = pass.clone();
                    sorted.sort_unstable();
                    assert!(sorted.iter().copied().eq(0..blocks), "pct {pct} job {job}: {name} pass");
                }
                assert_ne!(first, second, "pct {pct} job {job}: a new order each pass");
                if pct == 50 {
                    let reads = reqs[..4096].iter().filter(|r| r.op == Op::Read).count();
                    assert!((1800..2300).contains(&reads), "{reads} reads");
                }
            }
            assert_ne!(offsets(&s, 0, 64), offsets(&s, 1, 64), "pct {pct}: jobs differ");
        }
        let s = step(
            Pattern::Random {
                read_pct: 100,
                start,
                end,
            },
            bs,
            1,
        );
        let mut hit: Vec<u64> = offsets(&s, 0, 4096).iter().map(block_of).collect();
        hit.sort_unstable();
        hit.dedup();
        assert!(
            (2400..2800).contains(&hit.len()),
            "{} blocks hit without the map",
            hit.len()
        );
    }

    /// (j) random offsets are aligned to bs, inside the range, and reach
    /// every sixteenth of it; the read share follows read_pct; jobs differ.
    #[test]
    fn random_offsets_aligned_in_range_and_spread() {
        let (start, end, bs) = (1 << 20, (1 << 20) + (64 << 20), 4096u32);
        for pct in [100u8, 70, 0] {
            let s = step(
                Pattern::Random {
                    read_pct: pct,
                    start,
                    end,
                },
                bs,
                2,
            );
            let reqs = offsets(&s, 0, 10_000);
            let mut hit = [0u32; 16];
            let mut reads = 0;
            for r in &reqs {
                assert_eq!((r.offset - start) % u64::from(bs), 0);
                assert!(r.offset >= start && r.offset + u64::from(bs) <= end, "{}", r.offset);
                hit[usize::try_from((r.offset - start) * 16 / (end - start)).unwrap()] += 1;
                reads += u32::from(r.op == Op::Read);
            }
            // 10000 draws, 625 expected per sixteenth.
            assert!(hit.iter().all(|&h| (500..750).contains(&h)), "{hit:?}");
            let want = 100 * u32::from(pct);
            assert!(reads.abs_diff(want) <= 200, "pct {pct}: {reads} reads");
            assert_ne!(reqs, offsets(&s, 1, 10_000));
            assert_eq!(reqs, offsets(&s, 0, 10_000));
        }
        // The last block is reachable.
        let s = step(
            Pattern::Random {
                read_pct: 100,
                start: 0,
                end: 4 * 4096,
            },
            4096,
            1,
        );
        let mut seen: Vec<u64> = offsets(&s, 0, 200).iter().map(|r| r.offset).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, [0, 4096, 8192, 12288]);
    }

    #[test]
    fn seq_slices_per_job_and_wraps() {
        // 10 blocks, 3 jobs: slices of 3 blocks, the tenth unused.
        let s = step(
            Pattern::Seq {
                op: Op::Write,
                start: 1024,
                end: 1024 + 10 * 512,
            },
            512,
            3,
        );
        let offs = |job| {
            offsets(&s, job, 4)
                .iter()
                .map(|r| (r.offset - 1024) / 512)
                .collect::<Vec<_>>()
        };
        assert_eq!(offs(0), [0, 1, 2, 0]);
        assert_eq!(offs(1), [3, 4, 5, 3]);
        assert_eq!(offs(2), [6, 7, 8, 6]);
        assert!(offsets(&s, 0, 4).iter().all(|r| r.op == Op::Write && r.len == 512));
        let s = step(
            Pattern::Fixed {
                op: Op::Read,
                offset: 4096,
            },
            512,
            1,
        );
        assert!(offsets(&s, 0, 3).iter().all(|r| r.offset == 4096));
        let s = step(
            Pattern::Cursors {
                starts: vec![0, 10_240],
                strides: vec![1024, -1024],
            },
            512,
            1,
        );
        let got: Vec<u64> = offsets(&s, 0, 6).iter().map(|r| r.offset).collect();
        assert_eq!(got, [0, 10_240, 1024, 9216, 2048, 8192]);
        let mut s = s;
        s.limit.ios = Some(6);
        assert_eq!(step_range(&s), (0, 10_240 + 512));
    }

    /// A walk at the write pointers writes each zone from its start to its
    /// capacity, never into the gap before the next zone, asks for a drain
    /// exactly before the next zone's first request, and ends at the
    /// area's end instead of wrapping onto the zones it filled; with two
    /// jobs each writes whole zones of its own.
    #[test]
    fn a_walk_at_the_write_pointers_skips_the_gap_and_ends() {
        let seq = Pattern::Seq {
            op: Op::Write,
            start: 0,
            end: 6 * 4096,
        };
        let s = two_zones(true, seq.clone(), 1);
        let mut g = OffsetGen::new(&s, 0);
        let mut got = Vec::new();
        while !g.exhausted() {
            got.push((g.next_opens_extent(), g.next_req().offset / 4096));
        }
        assert_eq!(
            got,
            [(false, 0), (false, 1), (false, 2), (true, 4), (false, 5), (false, 6)]
        );
        assert_eq!(g.cycle_len(), Some(6));
        let s = two_zones(true, seq.clone(), 2);
        for (job, want) in [(0, [0u64, 1, 2]), (1, [4, 5, 6])] {
            let mut g = OffsetGen::new(&s, job);
            let got: Vec<u64> = (0..3).map(|_| g.next_req().offset / 4096).collect();
            assert_eq!(got, want, "job {job}");
            assert!(g.exhausted(), "job {job} ends at its share's end");
        }
        // Reads over the same map: the area's blocks in order, wrapping.
        let s = two_zones(
            false,
            Pattern::Seq {
                op: Op::Read,
                start: 0,
                end: 6 * 4096,
            },
            1,
        );
        let got: Vec<u64> = offsets(&s, 0, 8).iter().map(|r| r.offset / 4096).collect();
        assert_eq!(got, [0, 1, 2, 4, 5, 6, 0, 1]);
        assert!(!OffsetGen::new(&s, 0).next_opens_extent());
    }

    /// Random offsets over a map land only in its extents, each of them.
    #[test]
    fn random_offsets_over_a_map_stay_in_its_extents() {
        let s = two_zones(
            false,
            Pattern::Random {
                read_pct: 0,
                start: 0,
                end: 6 * 4096,
            },
            1,
        );
        let mut seen: Vec<u64> = offsets(&s, 0, 200).iter().map(|r| r.offset / 4096).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, [0, 1, 2, 4, 5, 6]);
    }
}
