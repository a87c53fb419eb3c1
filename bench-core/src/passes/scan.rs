//! A read-only surface scan: every block of an area (or an evenly spread
//! fraction of it) read once, in order, with large reads kept `depth` in
//! flight; each read's time (the device's: from the later of its
//! submission and the completion before it) sorted into the classes surface scanners show
//! (HD Tune's error scan, Victoria, diskscan: below 5, 20, 50, 150, 500 ms,
//! slower, error), the slowest reads kept with their offsets, and the
//! throughput of each zone of the area (the curve over the surface).
//!
//! A read that fails is narrowed, once the reads in flight have completed,
//! to the logical blocks that fail: each block of it is read alone, again
//! up to `retries` times when it fails; a block no read returns is
//! unreadable (its LBA is recorded), one a retry returned is recovered. The
//! scan goes on past unreadable blocks until more than `max_bad` of them
//! are found. It only reads: nothing asks the drive to reassign a block.
//!
//! The loop, the narrowing and the ending are the whole-disk pass's that
//! the burn-in shares (`sweep.rs`); the scan gives it its reads and
//! records what they found.

use alloc::vec;
use alloc::vec::Vec;

use crate::document::result::{ScanClass, ScanEndState, ScanSlowRead, ScanZone, SurfaceScan};
use crate::engine::runner::Stop;
use crate::io::{Clock, IoError, IoQueue, IoReq, Op};
use crate::passes::sweep::{End, Engine, Finished, Inflight, Sweep};
use crate::vocab::units::Nanos;

/// The upper bounds of the time classes, milliseconds: a read below 5 ms
/// is in class 0, ..., one of 500 ms or more in class 5.
pub const CLASS_BOUNDS_MS: [u64; 5] = [5, 20, 50, 150, 500];

/// The number of time classes (the bounds, and the one above the last).
pub const CLASSES: usize = CLASS_BOUNDS_MS.len() + 1;

/// `coverage_ppm` of a scan of every block.
pub const WHOLE: u32 = 1_000_000;

/// What to scan and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanSpec {
    /// The area: from this byte...
    pub start: u64,
    /// ...to this one (exclusive). Both multiples of `logical_block`.
    pub end: u64,
    /// The size of each read, bytes (a multiple of `logical_block`; the
    /// last read of the area may be shorter).
    pub chunk: u32,
    /// Reads in flight at most (within the queue's depth).
    pub depth: u32,
    /// The fraction of the area's reads made, parts per million, spread
    /// evenly over it ([`WHOLE`]: every block).
    pub coverage_ppm: u32,
    /// The device's logical block size: the unit failed reads are narrowed
    /// to, and of the LBAs recorded.
    pub logical_block: u32,
    /// How many more times a failing block is read before it is unreadable.
    pub retries: u32,
    /// The scan stops once more blocks than this are unreadable.
    pub max_bad: u64,
    /// Zones the area is divided into for the throughput curve (at least 1).
    pub zones: u32,
    /// How many of the slowest reads are kept.
    pub slowest: usize,
    /// The byte ranges of the area that hold data, sorted and apart, when
    /// only they are read (a host-managed zoned disk's conventional zones
    /// and its sequential zones up to their write pointers: what lies past
    /// a write pointer was never written, and a drive may refuse to read
    /// it); `None`: the whole area. Each read is cut to them.
    pub holds_data: Option<Vec<(u64, u64)>>,
}

/// One read among the slowest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowRead {
    /// Its first byte.
    pub offset: u64,
    /// Its length, bytes.
    pub len: u32,
    /// The device's time for it: from the later of its submission and
    /// the completion before it, to its own completion.
    pub time: Nanos,
}

/// One zone of the area: what was read in it and over how long.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Zone {
    /// The zone's first byte.
    pub start: u64,
    /// The byte after its last.
    pub end: u64,
    /// Bytes read in it (failed reads excluded).
    pub bytes: u64,
    /// From the first read's submission to the last one's completion
    /// (narrowing included); zero when nothing was read in it.
    pub time: Nanos,
}

impl Zone {
    /// Bytes per second, if anything was read in the zone.
    pub fn bytes_per_sec(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)] // a rate: 53 bits are plenty
        (self.time.0 > 0).then(|| self.bytes as f64 * 1e9 / self.time.0 as f64)
    }
}

/// Why a scan ended before its area was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanEnd {
    /// Every planned read was made.
    Done,
    /// More than `max_bad` blocks were unreadable.
    TooManyBad,
    /// The run asked to stop (an interrupt, the deadline).
    Stopped,
}

/// What a scan found.
#[derive(Clone, Debug, PartialEq)]
pub struct ScanOutcome {
    /// Reads in each time class ([`CLASS_BOUNDS_MS`]); failed reads are in
    /// `failed_reads` instead.
    pub classes: [u64; CLASSES],
    /// Reads that failed (each then narrowed).
    pub failed_reads: u64,
    /// Reads made (of the planned ones), and the bytes they returned.
    pub reads: u64,
    /// Bytes returned by the reads (and by the narrowing's block reads).
    pub bytes: u64,
    /// Bytes the scan planned to read (the area, or its covered part).
    pub planned_bytes: u64,
    /// The slowest reads, slowest first.
    pub slowest: Vec<SlowRead>,
    /// The throughput curve.
    pub zones: Vec<Zone>,
    /// LBAs no read returned, ascending.
    pub unreadable: Vec<u64>,
    /// LBAs a failed read covered that a retry returned, ascending.
    pub recovered: Vec<u64>,
    /// How the scan ended.
    pub end: ScanEnd,
    /// From the first read to the last completion.
    pub elapsed: Nanos,
}

impl ScanOutcome {
    /// A scan of `spec` that read nothing (the disk could not be opened,
    /// the scan was abandoned): every count 0, no zone.
    pub fn empty(spec: &ScanSpec) -> ScanOutcome {
        ScanOutcome {
            classes: [0; CLASSES],
            failed_reads: 0,
            reads: 0,
            bytes: 0,
            planned_bytes: planned_bytes(spec),
            slowest: Vec::new(),
            zones: Vec::new(),
            unreadable: Vec::new(),
            recovered: Vec::new(),
            end: ScanEnd::Done,
            elapsed: Nanos(0),
        }
    }
}

/// The bytes a scan of `spec` reads: its area, or the covered part of it.
/// Only a whole scan makes the area's last read, the one that may be
/// short: with fewer reads than the area holds, the last one made is read
/// `n - ceil(n / count)`, at most the one before the last.
pub fn planned_bytes(spec: &ScanSpec) -> u64 {
    let (n, count) = read_counts(spec);
    if let Some(bytes) = data_bytes(spec) {
        // The covered part of what holds data (spread evenly, a fraction
        // of it is read).
        return u64::try_from(u128::from(bytes) * u128::from(count) / u128::from(n.max(1))).unwrap_or(bytes);
    }
    if count == n {
        spec.end.saturating_sub(spec.start)
    } else {
        count * u64::from(spec.chunk)
    }
}

/// The bytes of `spec`'s area that hold data ([`ScanSpec::holds_data`]);
/// `None` when the whole area is the scan's.
fn data_bytes(spec: &ScanSpec) -> Option<u64> {
    let ex = spec.holds_data.as_ref()?;
    Some(
        ex.iter()
            .map(|&(s, e)| e.min(spec.end).saturating_sub(s.max(spec.start)))
            .sum(),
    )
}

/// The class of a read that took `t`.
pub fn class_of(t: Nanos) -> usize {
    CLASS_BOUNDS_MS
        .iter()
        .position(|&ms| t.0 < ms * 1_000_000)
        .unwrap_or(CLASSES - 1)
}

/// The `j`-th of the spec's reads: `(offset, len)`. The area holds `n`
/// reads of `chunk` bytes (the last one shorter); the scan makes `count`
/// of them, the `j`-th at read `j * n / count`, so a fraction is spread
/// evenly from the area's first read.
fn read_at(spec: &ScanSpec, n: u64, count: u64, j: u64) -> (u64, u32) {
    let i = u64::try_from(u128::from(j) * u128::from(n) / u128::from(count.max(1))).unwrap_or(u64::MAX);
    let offset = spec.start + i * u64::from(spec.chunk);
    let len = (spec.end - offset).min(u64::from(spec.chunk));
    (offset, u32::try_from(len).unwrap_or(spec.chunk))
}

/// The number of reads the area holds and the number the scan makes.
fn read_counts(spec: &ScanSpec) -> (u64, u64) {
    let chunk = u64::from(spec.chunk.max(1));
    let n = (spec.end.saturating_sub(spec.start)).div_ceil(chunk);
    let ppm = u64::from(spec.coverage_ppm.clamp(1, WHOLE));
    let count = u64::try_from((u128::from(n) * u128::from(ppm)).div_ceil(u128::from(WHOLE))).unwrap_or(n);
    (n, count.min(n))
}

/// Scan `spec`'s area through `q`, timing on `clock`. `progress` gets the
/// fraction of the planned bytes done and the blocks found unreadable so
/// far, about once a second. An error of
/// the queue itself (not of a read) ends the scan with it.
pub fn scan<Q: IoQueue, C: Clock>(
    spec: &ScanSpec,
    q: &mut Q,
    clock: &C,
    stop: &Stop,
    progress: &mut dyn FnMut(f64, u64),
) -> Result<ScanOutcome, IoError> {
    let mut s = Scan::new(spec);
    let mut engine = Engine::new(q, clock, spec.depth, spec.logical_block, spec.retries);
    s.out.end = match engine.run(&mut s, stop, progress)? {
        End::Done => ScanEnd::Done,
        End::Stopped => ScanEnd::Stopped,
        End::TooManyBad => ScanEnd::TooManyBad,
    };
    s.out.elapsed = engine.elapsed();
    Ok(s.out)
}

/// One scan's state ([`scan`]): the one pass ([`crate::passes::sweep`]) reading.
struct Scan<'a> {
    spec: &'a ScanSpec,
    /// The reads the area holds and the number the scan makes.
    n: u64,
    count: u64,
    /// The next read (of `count`).
    next: u64,
    /// The parts of the last read that hold data, not yet given, last
    /// first ([`ScanSpec::holds_data`]).
    pieces: Vec<IoReq>,
    /// Each zone's first submission, if any.
    zone_first: Vec<Option<Nanos>>,
    out: ScanOutcome,
}

impl<'a> Scan<'a> {
    fn new(spec: &'a ScanSpec) -> Self {
        let zones = u64::from(spec.zones.max(1));
        let size = spec.end.saturating_sub(spec.start);
        let lb = u64::from(spec.logical_block.max(1));
        let zone = |k: u64| {
            // Zone bounds on logical blocks.
            let at = u64::try_from(u128::from(size) * u128::from(k) / u128::from(zones)).unwrap_or(size);
            spec.start + at / lb * lb
        };
        let (n, count) = read_counts(spec);
        let mut out = ScanOutcome::empty(spec);
        out.zones = (0..zones)
            .map(|k| Zone {
                start: zone(k),
                end: zone(k + 1),
                ..Zone::default()
            })
            .collect();
        Scan {
            spec,
            n,
            count,
            next: 0,
            pieces: Vec::new(),
            zone_first: vec![None; usize::try_from(zones).unwrap_or(1)],
            out,
        }
    }

    fn zone_of(&self, offset: u64) -> usize {
        let zones = &self.out.zones;
        zones.iter().rposition(|z| z.start <= offset).unwrap_or(0)
    }

    /// Count `bytes` read in the zone of `offset`, the last completion at `now`.
    fn zone_read(&mut self, offset: u64, bytes: u64, now: Nanos) {
        let z = self.zone_of(offset);
        let first = *self.zone_first[z].get_or_insert(now);
        let zone = &mut self.out.zones[z];
        zone.bytes += bytes;
        zone.time = zone.time.max(now.saturating_sub(first));
    }

    /// Keep `r` if it is among the slowest.
    fn slow(&mut self, r: SlowRead) {
        let keep = self.spec.slowest;
        let s = &mut self.out.slowest;
        if keep == 0 || (s.len() == keep && s.last().is_some_and(|l| l.time >= r.time)) {
            return;
        }
        let at = s.partition_point(|x| x.time >= r.time);
        s.insert(at, r);
        s.truncate(keep);
    }
}

impl Sweep for Scan<'_> {
    type Found = u64;
    /// Only a block no read returned is bad.
    const JUDGE_EVERY_BLOCK: bool = false;
    /// The zones' times include the narrowing, and a read after it is
    /// timed from its last completion.
    const TIMED_NARROWING: bool = true;

    fn next(&mut self, _: &[Option<Inflight>]) -> Option<(IoReq, u64)> {
        loop {
            if let Some(p) = self.pieces.pop() {
                return Some((p, self.next - 1));
            }
            let j = self.next;
            if j >= self.count {
                return None;
            }
            self.next += 1;
            let (offset, len) = read_at(self.spec, self.n, self.count, j);
            let read = IoReq {
                op: Op::Read,
                offset,
                len,
            };
            let Some(ex) = &self.spec.holds_data else {
                return Some((read, j));
            };
            // The read cut to the ranges that hold data, nothing of it
            // past a write pointer.
            let end = offset + u64::from(len);
            let first = ex.partition_point(|&(_, e)| e <= offset);
            let cut = ex[first..]
                .iter()
                .take_while(|&&(s, _)| s < end)
                .map(|&(s, e)| (s.max(offset), e.min(end)))
                .filter(|(a, b)| b > a)
                .map(|(a, b)| IoReq {
                    op: Op::Read,
                    offset: a,
                    len: u32::try_from(b - a).unwrap_or(len),
                });
            self.pieces.extend(cut);
            self.pieces.reverse();
        }
    }

    fn submitted(&mut self, req: IoReq, now: Nanos) {
        let z = self.zone_of(req.offset);
        self.zone_first[z].get_or_insert(now);
    }

    /// A read's time (the device's, [`crate::passes::sweep`]) is its class; the
    /// sum of them is the busy time.
    fn completed<Q: IoQueue>(&mut self, _: &Q, f: Finished) -> Result<(), IoError> {
        self.out.reads += 1;
        let (offset, len) = (f.req.offset, f.req.len);
        if f.ok {
            self.out.classes[class_of(f.time)] += 1;
            self.out.bytes += u64::from(len);
            self.slow(SlowRead {
                offset,
                len,
                time: f.time,
            });
            self.zone_read(offset, u64::from(len), f.now);
        } else {
            self.out.failed_reads += 1;
        }
        Ok(())
    }

    fn narrowed<Q: IoQueue>(&mut self, _: &Q, block: IoReq, ok: Option<u32>, now: Nanos) -> Result<(), IoError> {
        let lb = u64::from(block.len);
        match ok {
            Some(attempt) => {
                self.out.bytes += lb;
                self.zone_read(block.offset, lb, now);
                if attempt > 0 {
                    self.out.recovered.push(block.offset / lb);
                }
            }
            None => self.out.unreadable.push(block.offset / lb),
        }
        Ok(())
    }

    fn too_many_bad(&self) -> bool {
        u64::try_from(self.out.unreadable.len()).unwrap_or(u64::MAX) > self.spec.max_bad
    }

    fn progress(&self) -> (f64, u64) {
        #[allow(clippy::cast_precision_loss)] // a fraction
        (
            self.out.bytes as f64 / self.out.planned_bytes.max(1) as f64,
            u64::try_from(self.out.unreadable.len()).unwrap_or(u64::MAX),
        )
    }
}

/// The document's record of a scan of `spec` that found `out`.
pub fn record(spec: &ScanSpec, out: &ScanOutcome) -> SurfaceScan {
    let lb = u64::from(spec.logical_block.max(1));
    #[allow(clippy::cast_precision_loss)] // rates: 53 bits are plenty
    let rate = |bytes: u64, ns: u64| (ns > 0).then(|| bytes as f64 * 1e9 / ns as f64);
    SurfaceScan {
        start_byte: spec.start,
        end_byte: spec.end,
        bs: u64::from(spec.chunk),
        iodepth: spec.depth,
        coverage_ppm: spec.coverage_ppm,
        logical_block: spec.logical_block,
        planned_bytes: out.planned_bytes,
        data_bytes: data_bytes(spec),
        read_bytes: out.bytes,
        reads: out.reads,
        failed_reads: out.failed_reads,
        elapsed_ns: out.elapsed.0,
        bytes_per_sec: rate(out.bytes, out.elapsed.0),
        classes: out
            .classes
            .iter()
            .enumerate()
            .map(|(i, &reads)| ScanClass {
                below_ms: CLASS_BOUNDS_MS.get(i).copied(),
                reads,
            })
            .collect(),
        slowest: out
            .slowest
            .iter()
            .map(|r| ScanSlowRead {
                lba: r.offset / lb,
                bytes: u64::from(r.len),
                time_ns: r.time.0,
            })
            .collect(),
        zones: out
            .zones
            .iter()
            .map(|z| ScanZone {
                start_byte: z.start,
                end_byte: z.end,
                bytes: z.bytes,
                time_ns: z.time.0,
                bytes_per_sec: z.bytes_per_sec(),
            })
            .collect(),
        unreadable_lbas: out.unreadable.clone(),
        recovered_lbas: out.recovered.clone(),
        end: match out.end {
            ScanEnd::Done => ScanEndState::Done,
            ScanEnd::TooManyBad => ScanEndState::TooManyBad,
            ScanEnd::Stopped => ScanEndState::Stopped,
        },
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{SimDisk, SimModel};
    use crate::io::{Access, Completion, OpenSpec, Target};

    const MIB: u64 = 1 << 20;

    fn spec_of(disk: &SimDisk, f: impl FnOnce(&mut ScanSpec)) -> ScanSpec {
        let mut s = ScanSpec {
            start: 0,
            end: disk.model.size,
            chunk: 1 << 20,
            depth: 4,
            coverage_ppm: WHOLE,
            logical_block: disk.model.logical_block,
            retries: 2,
            max_bad: 100,
            zones: 8,
            slowest: 4,
            holds_data: None,
        };
        f(&mut s);
        s
    }

    fn run_scan(disk: &SimDisk, s: &ScanSpec, stop: &Stop) -> ScanOutcome {
        let mut q = disk
            .open(&OpenSpec::plain(Access::Direct, false, s.depth, s.chunk, 1))
            .expect("queue");
        scan(s, &mut q, &disk.clock, stop, &mut |_, _| {}).expect("scan")
    }

    /// Every byte of the area read once, in order; every read in a class;
    /// the zones hold every byte; nothing written.
    #[test]
    fn a_whole_scan_reads_every_byte_once() {
        let disk = SimDisk::new(SimModel::ssd(64 * MIB + 4096), false);
        let s = spec_of(&disk, |_| {});
        let out = run_scan(&disk, &s, &Stop::new());
        assert_eq!(out.end, ScanEnd::Done);
        assert_eq!((out.bytes, out.planned_bytes), (64 * MIB + 4096, 64 * MIB + 4096));
        assert_eq!(out.reads, 65, "64 whole reads and the short last one");
        assert_eq!(disk.counts().read_bytes, 64 * MIB + 4096);
        assert_eq!(disk.counts().writes, 0);
        assert_eq!(out.classes.iter().sum::<u64>(), 65);
        assert_eq!(out.zones.iter().map(|z| z.bytes).sum::<u64>(), 64 * MIB + 4096);
        assert_eq!(out.zones.len(), 8);
        assert_eq!((out.zones[0].start, out.zones[7].end), (0, 64 * MIB + 4096));
        assert!(out.unreadable.is_empty() && out.recovered.is_empty() && out.failed_reads == 0);
        assert_eq!(out.slowest.len(), 4);
        assert!(out.slowest.windows(2).all(|w| w[0].time >= w[1].time));
    }

    /// On a zoned disk only what holds data is read, each read cut to it:
    /// nothing past a write pointer (where this disk, like a drive that
    /// refuses such reads, fails), so nothing is found unreadable; the
    /// record says what held data.
    #[test]
    fn only_what_holds_data_is_read() {
        let mut disk = SimDisk::new(SimModel::ssd(16 * MIB), false);
        disk.fail_at = [3 * MIB + 10, 5 * MIB + 600_000, 12 * MIB].to_vec();
        let held = [(0, 3 * MIB), (4 * MIB, 4 * MIB + 3 * MIB / 2), (8 * MIB, 11 * MIB)];
        let s = spec_of(&disk, |s| s.holds_data = Some(held.to_vec()));
        let out = run_scan(&disk, &s, &Stop::new());
        assert_eq!(out.end, ScanEnd::Done);
        assert!(
            out.unreadable.is_empty() && out.failed_reads == 0,
            "{:?}",
            out.unreadable
        );
        let bytes = 7 * MIB + MIB / 2;
        assert_eq!((out.bytes, out.planned_bytes), (bytes, bytes));
        assert_eq!(out.reads, 8, "3 + 2 (the second cut at its write pointer) + 3");
        assert_eq!(disk.counts().read_bytes, bytes);
        assert_eq!(record(&s, &out).data_bytes, Some(bytes));
        assert_eq!(record(&spec_of(&disk, |_| {}), &out).data_bytes, None);
        // A tenth of the reads, spread evenly: a tenth of what holds data
        // is planned.
        let tenth = spec_of(&disk, |s| {
            s.holds_data = Some(held.to_vec());
            s.coverage_ppm = WHOLE / 10;
        });
        assert_eq!(planned_bytes(&tenth), bytes * 2 / 16);
    }

    /// Three unreadable sectors: exactly their LBAs, found by narrowing
    /// the three failed reads at the logical block size (with the
    /// retries), and the rest of the area read.
    #[test]
    fn unreadable_blocks_are_narrowed_to_their_lbas_and_the_scan_goes_on() {
        let mut disk = SimDisk::new(SimModel::ssd(32 * MIB), false);
        let bad = [3 * MIB + 700, 3 * MIB + 5000, 20 * MIB + 1];
        disk.fail_at = bad.to_vec();
        let s = spec_of(&disk, |_| {});
        let out = run_scan(&disk, &s, &Stop::new());
        assert_eq!(out.end, ScanEnd::Done);
        let want: Vec<u64> = bad.iter().map(|b| b / 512).collect();
        assert_eq!(out.unreadable, want);
        assert_eq!(out.failed_reads, 2, "two reads of 1 MiB covered them");
        let rec = record(&s, &out);
        assert_eq!(rec.unreadable_lbas, want);
        assert_eq!(rec.classes.len(), CLASSES);
        assert_eq!(rec.classes[0].below_ms, Some(5));
        assert_eq!(rec.classes[CLASSES - 1].below_ms, None);
        assert_eq!(rec.classes.iter().map(|c| c.reads).sum::<u64>(), 30);
        assert_eq!(
            (rec.end, rec.read_bytes, rec.reads),
            (ScanEndState::Done, out.bytes, 32)
        );
        assert_eq!(out.bytes, 32 * MIB - 3 * 512, "every other block read");
        // Each unreadable block read 1 + 2 times, each other block of the
        // two failed reads once, besides the 32 reads.
        let narrowing = 2 * (MIB / 512) + 3 * 2;
        assert_eq!(disk.counts().reads, 32 + narrowing);
        assert_eq!(disk.counts().writes, 0, "never written, never reassigned");
    }

    /// More unreadable blocks than `max_bad`: the scan ends there.
    #[test]
    fn the_scan_stops_past_max_bad() {
        let mut disk = SimDisk::new(SimModel::ssd(32 * MIB), false);
        disk.fail_at = vec![MIB, 2 * MIB, 30 * MIB];
        let s = spec_of(&disk, |s| (s.max_bad, s.depth) = (1, 1));
        let out = run_scan(&disk, &s, &Stop::new());
        assert_eq!(out.end, ScanEnd::TooManyBad);
        assert_eq!(out.unreadable, [MIB / 512, 2 * MIB / 512]);
        assert!(out.bytes < 4 * MIB, "nothing read after the second: {}", out.bytes);
    }

    /// A block the drive takes 60 ms to read: its read is in the 50-150 ms
    /// class and the slowest, at its offset; the others below 5 ms.
    #[test]
    fn a_slow_block_falls_in_its_class_and_leads_the_slowest() {
        let mut disk = SimDisk::new(SimModel::ssd(16 * MIB), false);
        disk.slow_at = vec![(9 * MIB + 4096, Nanos::from_millis(60))];
        let s = spec_of(&disk, |s| s.depth = 1);
        let out = run_scan(&disk, &s, &Stop::new());
        assert_eq!(out.classes, [15, 0, 0, 1, 0, 0]);
        assert_eq!(out.slowest[0].offset, 9 * MIB);
        assert!(out.slowest[0].time >= Nanos::from_millis(60));
        assert_eq!(class_of(Nanos::from_millis(5)), 1);
        assert_eq!(class_of(Nanos(4_999_999)), 0);
        assert_eq!(class_of(Nanos::from_millis(500)), 5);
    }

    /// At depth 4 the slow block's read alone is slow: the reads queued
    /// behind it are not charged its time.
    #[test]
    fn at_depth_the_slow_block_is_charged_to_its_own_read() {
        let mut disk = SimDisk::new(SimModel::ssd(16 * MIB), false);
        disk.slow_at = vec![(9 * MIB + 4096, Nanos::from_millis(60))];
        let s = spec_of(&disk, |s| s.depth = 4);
        let out = run_scan(&disk, &s, &Stop::new());
        assert_eq!(out.classes, [15, 0, 0, 1, 0, 0]);
        assert_eq!(out.slowest[0].offset, 9 * MIB);
    }

    /// A tenth of the area: a tenth of the reads, spread evenly from the
    /// first; the zones of a disk whose rate falls inward show it.
    #[test]
    fn coverage_spreads_the_reads_and_the_zones_show_the_rate_curve() {
        let disk = SimDisk::new(SimModel::hdd(1 << 30), false);
        let s = spec_of(&disk, |s| (s.coverage_ppm, s.zones, s.depth) = (100_000, 4, 1));
        let out = run_scan(&disk, &s, &Stop::new());
        assert_eq!(out.reads, 103, "ceil(1024 / 10)");
        assert_eq!(out.bytes, 103 * MIB);
        assert_eq!(out.planned_bytes, 103 * MIB);
        assert!(out.zones.iter().all(|z| z.bytes > 0), "{:?}", out.zones);
        let rates: Vec<f64> = out.zones.iter().map(|z| z.bytes_per_sec().unwrap()).collect();
        assert!(rates.windows(2).all(|w| w[0] > w[1]), "outer zones faster: {rates:?}");
    }

    /// The planned bytes are the bytes of the reads the scan makes, for a
    /// whole scan with a short last read and for fractions of it.
    #[test]
    fn planned_bytes_are_the_reads_bytes() {
        for (size, ppm) in [
            (64 * MIB + 4096, WHOLE),
            (64 * MIB + 4096, 999_999),
            (10 * MIB + 512, 500_000),
            (3 * MIB, 1),
        ] {
            let disk = SimDisk::new(SimModel::ssd(size), false);
            let s = spec_of(&disk, |s| s.coverage_ppm = ppm);
            let (n, count) = read_counts(&s);
            let sum: u64 = (0..count).map(|j| u64::from(read_at(&s, n, count, j).1)).sum();
            assert_eq!(planned_bytes(&s), sum, "size {size}, {ppm} ppm");
            assert_eq!(run_scan(&disk, &s, &Stop::new()).bytes, sum, "size {size}, {ppm} ppm");
        }
    }

    /// A stop ends the scan after the reads in flight, saying so.
    #[test]
    fn a_stop_ends_the_scan() {
        let disk = SimDisk::new(SimModel::ssd(16 * MIB), false);
        let stop = Stop::new();
        stop.request(crate::engine::runner::StopReason::Interrupted);
        let out = run_scan(&disk, &spec_of(&disk, |_| {}), &stop);
        assert_eq!((out.end, out.reads), (ScanEnd::Stopped, 0));
    }

    /// A block that a retry returns is recovered, not unreadable: a queue
    /// over the simulated disk that fails the first two reads covering it.
    #[test]
    fn a_block_a_retry_returns_is_recovered() {
        struct Flaky<Q> {
            q: Q,
            at: u64,
            fails: u32,
            pending: Vec<(usize, bool)>,
        }
        impl<Q: IoQueue> IoQueue for Flaky<Q> {
            fn depth(&self) -> usize {
                self.q.depth()
            }
            fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
                let covers = req.offset <= self.at && self.at < req.offset + u64::from(req.len);
                let fail = covers && self.fails > 0;
                if fail {
                    self.fails -= 1;
                }
                self.pending.push((slot, fail));
                self.q.submit(slot, req)
            }
            fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
                let from = out.len();
                self.q.reap(min, out)?;
                for c in &mut out[from..] {
                    if let Some(i) = self.pending.iter().position(|p| p.0 == c.slot) {
                        if self.pending.remove(i).1 {
                            c.result = Err(5);
                        }
                    }
                }
                Ok(())
            }
        }
        let disk = SimDisk::new(SimModel::ssd(8 * MIB), false);
        let s = spec_of(&disk, |s| s.depth = 1);
        let inner = disk
            .open(&OpenSpec::plain(Access::Direct, false, 1, s.chunk, 1))
            .expect("queue");
        let mut q = Flaky {
            q: inner,
            at: 5 * MIB + 512,
            fails: 2,
            pending: Vec::new(),
        };
        let out = scan(&s, &mut q, &disk.clock, &Stop::new(), &mut |_, _| {}).expect("scan");
        assert_eq!(out.recovered, [(5 * MIB + 512) / 512]);
        assert!(out.unreadable.is_empty());
        assert_eq!(out.bytes, 8 * MIB);
    }
}
