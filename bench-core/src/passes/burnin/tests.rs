//! The burn-in's tests: a disk in memory with faults, and a zoned one.

use super::*;
use crate::io::Completion;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};

const LB: u32 = 512;
const AREA: u64 = 1 << 20;
/// The area's bytes, as a length in memory.
const AREA_LEN: usize = 1 << 20;

/// A clock that moves 1 us each time it is read.
struct Ticks(Cell<u64>);
impl Clock for Ticks {
    fn now(&self) -> Nanos {
        self.0.set(self.0.get() + 1000);
        Nanos(self.0.get())
    }
}

/// A disk in memory whose requests complete in submission order, one
/// per reap at least, with faults: writes and reads that fail where
/// they cover a byte of `bad_write`/`bad_read`, writes that report
/// success but leave the block covering a byte of `lost` as it was.
/// Records every request and checks that no request goes to a block
/// with a write in flight.
struct Faulty {
    data: Rc<RefCell<Vec<u8>>>,
    bufs: Vec<Vec<u8>>,
    queued: Vec<(usize, IoReq)>,
    bad_write: Vec<u64>,
    bad_read: Vec<u64>,
    lost: Vec<u64>,
    log: Vec<IoReq>,
    /// The errno of a failed write (EIO unless a test says otherwise):
    /// of a whole request, and of one logical block (the narrowing's).
    write_errno: (i32, i32),
    /// A zoned disk's zones, if it is one: a write to a sequential zone
    /// must come at its write pointer, within its capacity; a read
    /// must not go past the write pointer (each a violation).
    zones: Option<Rc<RefCell<FakeZones>>>,
}

/// A zoned disk's zones, in bytes: (start, size, capacity, sequential,
/// write pointer), and what the burn-in did against the rules.
#[derive(Default)]
struct FakeZones {
    zones: Vec<(u64, u64, u64, bool, u64)>,
    violations: Vec<alloc::string::String>,
    resets: Vec<u64>,
    /// A reset of the zone at this byte fails with this errno.
    fail_reset: Option<(u64, i32)>,
}

impl FakeZones {
    fn of(&mut self, offset: u64) -> Option<&mut (u64, u64, u64, bool, u64)> {
        self.zones.iter_mut().find(|z| offset >= z.0 && offset < z.0 + z.1)
    }
}

impl BurnHooks for Rc<RefCell<FakeZones>> {
    fn reset_zone(&mut self, start: u64, size: u64) -> Result<(), i32> {
        let mut f = self.borrow_mut();
        if let Some((at, errno)) = f.fail_reset {
            if at == start {
                return Err(errno);
            }
        }
        f.resets.push(start);
        match f.of(start) {
            Some(z) if z.0 == start && z.1 == size && z.3 => {
                z.4 = start;
                Ok(())
            }
            _ => {
                f.violations
                    .push(alloc::format!("reset of {start}+{size}: no such sequential zone"));
                Err(22)
            }
        }
    }
}

impl Faulty {
    fn new(depth: usize, bytes: usize) -> Faulty {
        Faulty {
            data: Rc::new(RefCell::new(vec![7u8; bytes])),
            bufs: vec![vec![0; 1 << 20]; depth],
            queued: Vec::new(),
            bad_write: Vec::new(),
            bad_read: Vec::new(),
            lost: Vec::new(),
            log: Vec::new(),
            write_errno: (5, 5),
            zones: None,
        }
    }
}

impl IoQueue for Faulty {
    fn depth(&self) -> usize {
        self.bufs.len()
    }
    fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
        assert!(
            !self.queued.iter().any(|(_, q)| q.op == Op::Write
                && q.offset < req.offset + u64::from(req.len)
                && req.offset < q.offset + u64::from(q.len)),
            "{req:?} overlaps a write in flight"
        );
        if let Some(z) = &self.zones {
            let mut z = z.borrow_mut();
            let end = req.offset + u64::from(req.len);
            let why = match z.of(req.offset) {
                None => Some("outside every zone"),
                Some(zone) if end > zone.0 + zone.1 => Some("across a zone's end"),
                Some(zone) if zone.3 && req.op == Op::Write && req.offset != zone.4 => {
                    Some("a write not at the write pointer")
                }
                Some(zone)
                    if zone.3
                        && req.op == Op::Write
                        && self
                            .queued
                            .iter()
                            .any(|(_, q)| q.op == Op::Write && q.offset >= zone.0 && q.offset < zone.0 + zone.1) =>
                {
                    Some("a second write in flight in a sequential zone")
                }
                Some(zone) if zone.3 && req.op == Op::Write && end > zone.0 + zone.2 => {
                    Some("a write past the zone's capacity")
                }
                Some(zone) if zone.3 && req.op == Op::Read && end > zone.4 => Some("a read past the write pointer"),
                Some(zone) => {
                    if zone.3 && req.op == Op::Write {
                        zone.4 = end;
                    }
                    None
                }
            };
            if let Some(why) = why {
                z.violations.push(alloc::format!("{req:?}: {why}"));
            }
        }
        self.queued.push((slot, req));
        self.log.push(req);
        Ok(())
    }
    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        // Every other reap the second oldest: completions out of order.
        if self.queued.is_empty() {
            return Ok(());
        }
        let second = self.queued.len() > 1 && self.log.len() % 2 == 1;
        let (slot, req) = self.queued.remove(usize::from(second));
        let write_errno = if req.len == LB {
            self.write_errno.1
        } else {
            self.write_errno.0
        };
        let at = |x: u64| usize::try_from(x).expect("in memory");
        let (o, len) = (at(req.offset), req.len as usize);
        let covers = |v: &[u64]| {
            v.iter()
                .any(|&b| b >= req.offset && b < req.offset + u64::from(req.len))
        };
        let mut data = self.data.borrow_mut();
        let result = match req.op {
            Op::Write if covers(&self.bad_write) => Err(write_errno),
            Op::Read if covers(&self.bad_read) => Err(5),
            Op::Write => {
                data[o..o + len].copy_from_slice(&self.bufs[slot][..len]);
                for &b in &self.lost {
                    if b >= req.offset && b < req.offset + u64::from(req.len) {
                        let blk = at(b / u64::from(LB) * u64::from(LB));
                        data[blk..blk + LB as usize].fill(0x33);
                    }
                }
                Ok(req.len)
            }
            _ => {
                self.bufs[slot][..len].copy_from_slice(&data[o..o + len]);
                Ok(req.len)
            }
        };
        out.push(Completion { slot, result });
        Ok(())
    }
    fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
        self.bufs.get_mut(slot).map(|b| &mut b[..len])
    }
    fn read_buf(&self, slot: usize, len: usize) -> Option<&[u8]> {
        self.bufs.get(slot).map(|b| &b[..len])
    }
}

fn spec(order: BurnOrder, f: impl FnOnce(&mut BurnSpec)) -> BurnSpec {
    let mut s = BurnSpec {
        start: 0,
        end: AREA,
        chunk: 64 << 10,
        depth: 4,
        logical_block: LB,
        retries: 1,
        max_bad: 100,
        order,
        patterns: BADBLOCKS_PATTERNS.to_vec(),
        loops: 1,
        seed: 42,
        zones: None,
    };
    if order == BurnOrder::Random {
        s.chunk = 4096;
        s.depth = 32;
        s.loops = 2;
    }
    f(&mut s);
    s
}

fn run(s: &BurnSpec, q: &mut Faulty, stop: &Stop, between: BetweenHook<'_>) -> BurnOutcome {
    burn_in(s, q, &Ticks(Cell::new(0)), stop, &mut |_, _| {}, between).expect("burn-in")
}

/// badblocks' four patterns: each written over the whole area, then
/// read back whole, in order; the disk ends holding the last one.
#[test]
fn sequential_passes_write_then_read_every_block_with_each_pattern() {
    let s = spec(BurnOrder::Sequential, |_| {});
    let mut q = Faulty::new(4, AREA_LEN);
    let out = run(&s, &mut q, &Stop::new(), &mut |_| {});
    assert_eq!(out.end, BurnEndState::Done);
    assert_eq!(out.passes.len(), 4);
    let per = AREA / (64 << 10);
    for (i, p) in out.passes.iter().enumerate() {
        assert_eq!(p.pattern, BADBLOCKS_PATTERNS[i]);
        assert_eq!((p.written, p.verified, p.bad()), (AREA, AREA, 0), "{p:?}");
        assert_eq!((p.writes, p.reads), (per, per));
        // All of the pass's writes, then all of its reads, each in order.
        let reqs = &q.log[i * 2 * per as usize..(i + 1) * 2 * per as usize];
        let want: Vec<(Op, u64)> = (0..per)
            .map(|k| (Op::Write, k * (64 << 10)))
            .chain((0..per).map(|k| (Op::Read, k * (64 << 10))))
            .collect();
        assert_eq!(reqs.iter().map(|r| (r.op, r.offset)).collect::<Vec<_>>(), want);
    }
    assert!(
        q.data.borrow().iter().all(|&b| b == 0),
        "the last pattern, 0x00, is on the disk"
    );
    let r = record(&s, &out.passes, out.elapsed, out.end);
    assert_eq!(
        r.passes.iter().map(|p| p.pattern.as_str()).collect::<Vec<_>>(),
        ["0xaa", "0x55", "0xff", "0x00"]
    );
    assert_eq!(s.planned_bytes(), 8 * AREA);
    assert_eq!(r.done_and_planned(), (8 * AREA, 8 * AREA));
}

/// A block changed between a pass's writes and its reads is a
/// mismatch of that pass only, by LBA; the next pass writes it again.
#[test]
fn a_block_changed_behind_the_burn_in_is_a_mismatch_at_its_lba() {
    let s = spec(BurnOrder::Sequential, |_| {});
    let mut q = Faulty::new(4, AREA_LEN);
    let data = Rc::clone(&q.data);
    let out = run(&s, &mut q, &Stop::new(), &mut |pass| {
        if pass == 1 {
            data.borrow_mut()[300_000] ^= 0x01;
        }
    });
    assert_eq!(out.end, BurnEndState::Done);
    let lba = 300_000 / u64::from(LB);
    let mism: Vec<&Vec<u64>> = out.passes.iter().map(|p| &p.mismatched).collect();
    assert_eq!(mism, [&vec![], &vec![lba], &vec![], &vec![]]);
    let r = record(&s, &out.passes, out.elapsed, out.end);
    assert_eq!(r.mismatched_lbas, [lba]);
    assert!(r.unwritable_lbas.is_empty() && r.unreadable_lbas.is_empty());
}

/// A block no write reaches is unwritable (and not also a mismatch), a
/// block no read returns unreadable; each request around them is
/// narrowed to its logical blocks and the rest of the area is done.
#[test]
fn failed_writes_and_reads_are_narrowed_to_their_blocks() {
    let s = spec(BurnOrder::Sequential, |s| s.patterns = vec![Pattern::Byte(0xaa)]);
    let mut q = Faulty::new(4, AREA_LEN);
    q.bad_write = vec![70_000];
    q.bad_read = vec![599_600, 600_000];
    let out = run(&s, &mut q, &Stop::new(), &mut |_| {});
    let p = &out.passes[0];
    assert_eq!(p.end, BurnEndState::Done);
    assert_eq!(p.unwritable, [70_000 / u64::from(LB)]);
    assert_eq!(p.unreadable, [600_000 / u64::from(LB)], "both bytes in one block");
    assert!(p.mismatched.is_empty(), "{:?}", p.mismatched);
    assert_eq!((p.failed_writes, p.failed_reads), (1, 1));
    assert_eq!(p.written, AREA - u64::from(LB));
    // The unwritable block is read back (and not counted); the unreadable is not.
    assert_eq!(p.verified, AREA - u64::from(LB));
    // The narrowing tried the bad blocks 1 + retries times each.
    let tries = |op: Op, b: u64| {
        q.log
            .iter()
            .filter(|r| r.op == op && r.offset == b && r.len == LB)
            .count()
    };
    assert_eq!(tries(Op::Write, 70_000 / 512 * 512), 2);
    assert_eq!(tries(Op::Read, 600_000 / 512 * 512), 2);
}

/// A write the kernel refuses (EPERM: a device held read-only; EROFS)
/// marks no block and is not narrowed: the burn-in ends with the error,
/// at the first such write, in both orders; and in the narrowing of a
/// request that failed with EIO first.
#[test]
fn a_write_the_kernel_refuses_ends_the_burn_in_without_bad_blocks() {
    for order in [BurnOrder::Sequential, BurnOrder::Random] {
        for errno in [1, 30] {
            let s = spec(order, |_| {});
            let mut q = Faulty::new(4, AREA_LEN);
            q.bad_write = (0..AREA).step_by(512).collect();
            q.write_errno = (errno, errno);
            let e = burn_in(
                &s,
                &mut q,
                &Ticks(Cell::new(0)),
                &Stop::new(),
                &mut |_, _| {},
                &mut |_| {},
            )
            .expect_err("refused");
            assert_eq!((e.errno, e.req.op), (errno, Op::Write), "{order:?}");
            assert!(
                !q.log.iter().any(|r| r.len == LB),
                "{order:?} errno {errno}: nothing narrowed"
            );
            assert!(!q.log.iter().any(|r| r.op == Op::Read), "{order:?}: nothing read back");
        }
    }
    // EIO first (narrowed), then EPERM while narrowing.
    let s = spec(BurnOrder::Sequential, |s| s.patterns = vec![Pattern::Byte(0xaa)]);
    let mut q = Faulty::new(4, AREA_LEN);
    q.bad_write = vec![70_000];
    q.write_errno = (5, 1);
    let e = burn_in(
        &s,
        &mut q,
        &Ticks(Cell::new(0)),
        &Stop::new(),
        &mut |_, _| {},
        &mut |_| {},
    )
    .expect_err("refused while narrowing");
    assert_eq!((e.errno, e.req.offset, e.req.len), (1, 70_000 / 512 * 512, LB));
    // EIO stays a bad block (the test above).
}

/// While it runs, the burn-in reports the bad blocks found so far:
/// each kind never falls from one report to the next, and never goes
/// past what the record says at the end.
#[test]
fn progress_reports_the_bad_blocks_found_so_far() {
    /// A clock a third of a second further on at each reading: a
    /// report every few requests.
    struct Fast(Cell<u64>);
    impl Clock for Fast {
        fn now(&self) -> Nanos {
            self.0.set(self.0.get() + 333_000_000);
            Nanos(self.0.get())
        }
    }
    let s = spec(BurnOrder::Sequential, |_| {});
    let mut q = Faulty::new(4, AREA_LEN);
    q.bad_write = vec![1000, 5000];
    let data = Rc::clone(&q.data);
    let mut seen: Vec<Found> = Vec::new();
    let out = burn_in(
        &s,
        &mut q,
        &Fast(Cell::new(0)),
        &Stop::new(),
        &mut |_, f| seen.push(f),
        &mut |pass| {
            if pass == 1 {
                data.borrow_mut()[300_000] ^= 0x01;
            }
        },
    )
    .expect("burn-in");
    let r = record(&s, &out.passes, out.elapsed, out.end);
    assert_eq!((r.unwritable_lbas.len(), r.mismatched_lbas.len()), (2, 1), "{r:?}");
    assert!(seen.len() > 8, "{} reports", seen.len());
    for w in seen.windows(2) {
        assert!(
            w[1].unwritable >= w[0].unwritable
                && w[1].unreadable >= w[0].unreadable
                && w[1].mismatched >= w[0].mismatched,
            "{seen:?}"
        );
    }
    let last = *seen.last().unwrap();
    assert_eq!(
        last,
        Found {
            unwritable: 2,
            unreadable: 0,
            mismatched: 1
        },
        "{seen:?}"
    );
    // Before the end: the first pass's writes had found the unwritable blocks.
    assert!(seen.iter().any(|f| f.unwritable == 2 && f.mismatched == 0), "{seen:?}");
}

/// More bad blocks than `max_bad` over all passes end the burn-in.
#[test]
fn too_many_bad_blocks_end_the_burn_in() {
    let s = spec(BurnOrder::Sequential, |s| s.max_bad = 2);
    let mut q = Faulty::new(4, AREA_LEN);
    q.bad_write = vec![1000, 5000];
    let out = run(&s, &mut q, &Stop::new(), &mut |_| {});
    assert_eq!(out.end, BurnEndState::TooManyBad);
    assert_eq!(out.passes.len(), 2, "2 bad in pass 1, the 3rd in pass 2");
    let r = record(&s, &out.passes, out.elapsed, out.end);
    let ends: Vec<BurnEndState> = r.passes.iter().map(|p| p.end).collect();
    use BurnEndState::{Done, NotRun, TooManyBad};
    assert_eq!(ends, [Done, TooManyBad, NotRun, NotRun]);
    assert_eq!(r.unwritable_lbas, [1, 9]);
}

/// A stop ends the pass after its requests in flight: the record says
/// how far it got and that the later passes did not run.
#[test]
fn a_stop_leaves_how_far_each_pass_got() {
    let s = spec(BurnOrder::Sequential, |_| {});
    let mut q = Faulty::new(4, AREA_LEN);
    let stop = Stop::new();
    let out = run(&s, &mut q, &stop, &mut |pass| {
        if pass == 1 {
            stop.request(crate::engine::runner::StopReason::Deadline);
        }
    });
    assert_eq!(out.end, BurnEndState::Stopped);
    let r = record(&s, &out.passes, out.elapsed, out.end);
    let got: Vec<(u64, u64, BurnEndState)> = r
        .passes
        .iter()
        .map(|p| (p.written_bytes, p.verified_bytes, p.end))
        .collect();
    use BurnEndState::{Done, NotRun, Stopped};
    assert_eq!(
        got,
        [(AREA, AREA, Done), (AREA, 0, Stopped), (0, 0, NotRun), (0, 0, NotRun)]
    );
    assert_eq!(r.done_and_planned(), (3 * AREA, 8 * AREA));
}

/// Random order: every block written once and read back once per loop,
/// reads mixed with the writes, never to a block whose write is in
/// flight (the queue asserts it), each loop in another order with
/// other data; a write the disk lost is a mismatch at its LBA.
#[test]
fn random_passes_write_and_check_every_block_once_in_a_mixed_order() {
    let s = spec(BurnOrder::Random, |_| {});
    let mut q = Faulty::new(32, AREA_LEN);
    q.lost = vec![123_456];
    let out = run(&s, &mut q, &Stop::new(), &mut |_| {
        unreachable!("no hook in random order")
    });
    assert_eq!(out.end, BurnEndState::Done);
    assert_eq!(out.passes.len(), 2);
    let blocks = AREA / 4096;
    let lost = 123_456 / u64::from(LB);
    for (i, p) in out.passes.iter().enumerate() {
        assert!(matches!(p.pattern, Pattern::Random(_)));
        assert_eq!((p.writes, p.reads, p.written, p.verified), (blocks, blocks, AREA, AREA));
        assert_eq!(p.mismatched, [lost], "pass {i}");
        let reqs = &q.log[i * 2 * blocks as usize..(i + 1) * 2 * blocks as usize];
        for op in [Op::Write, Op::Read] {
            let mut at: Vec<u64> = reqs.iter().filter(|r| r.op == op).map(|r| r.offset).collect();
            assert_ne!(at, (0..blocks).map(|k| k * 4096).collect::<Vec<_>>(), "not in order");
            at.sort_unstable();
            assert_eq!(
                at,
                (0..blocks).map(|k| k * 4096).collect::<Vec<_>>(),
                "{op:?} once each"
            );
        }
        // Mixed: reads start long before the last write.
        let first_read = reqs.iter().position(|r| r.op == Op::Read).expect("reads");
        assert!(first_read < 64, "first read at request {first_read}");
    }
    assert_ne!(out.passes[0].pattern, out.passes[1].pattern, "each loop its own data");
    let w0: Vec<u64> = q.log.iter().filter(|r| r.op == Op::Write).map(|r| r.offset).collect();
    assert_ne!(w0[..blocks as usize], w0[blocks as usize..], "each loop its own order");
}

/// A byte offset as an index in memory.
fn us(x: u64) -> usize {
    usize::try_from(x).expect("in memory")
}

/// Zone size, capacity, and the zones of the zoned tests: zone 0
/// conventional, 1, 2 and 3 sequential (the caller left zone 2 out).
const ZS: u64 = 256 << 10;
const ZC: u64 = 192 << 10;

fn zoned(after: ZonesAfter) -> (BurnSpec, Faulty, Rc<RefCell<FakeZones>>) {
    let fake = Rc::new(RefCell::new(FakeZones {
        zones: (0..4)
            .map(|k| (k * ZS, ZS, if k == 0 { ZS } else { ZC }, k > 0, k * ZS))
            .collect(),
        ..FakeZones::default()
    }));
    let span = |k: u64| ZoneSpan {
        start: k * ZS,
        size: ZS,
        capacity: if k == 0 { ZS } else { ZC },
        sequential: k > 0,
    };
    let s = spec(BurnOrder::Sequential, |s| {
        s.end = 4 * ZS;
        s.patterns = alloc::vec![Pattern::Byte(0xaa), Pattern::Random(0)];
        s.zones = Some(ZonePlan {
            zones: alloc::vec![span(0), span(1), span(3)],
            skipped: 1,
            after,
        });
    });
    let mut q = Faulty::new(4, us(4 * ZS));
    q.zones = Some(fake.clone());
    (s, q, fake)
}

/// Zone by zone: each zone gets every pass (a sequential zone reset
/// before each pass's writes, written from its start at its write
/// pointer to its capacity, read back no further) before the next
/// zone; the gap past a zone's capacity and the zone left out are never
/// touched; every sequential zone is left empty; each pass's record
/// sums its zones.
#[test]
fn a_zoned_burn_in_goes_zone_by_zone_within_each_zones_capacity() {
    let (s, mut q, fake) = zoned(ZonesAfter::Empty);
    let mut hooks = fake.clone();
    let out = run(&s, &mut q, &Stop::new(), &mut hooks);
    let f = fake.borrow();
    assert!(f.violations.is_empty(), "{:?}", f.violations);
    assert_eq!(out.end, BurnEndState::Done);
    let bytes = ZS + 2 * ZC;
    assert_eq!(s.planned_bytes(), 2 * 2 * bytes);
    for p in &out.passes {
        assert_eq!(
            (p.written, p.verified, p.end),
            (bytes, bytes, BurnEndState::Done),
            "{p:?}"
        );
        assert!(p.mismatched.is_empty() && p.unwritable.is_empty());
    }
    // Zones 1 and 3: a reset before each of the two passes, one after.
    assert_eq!(f.resets, [ZS, ZS, ZS, 3 * ZS, 3 * ZS, 3 * ZS]);
    assert_eq!(out.resets, 6);
    assert!(
        f.zones.iter().filter(|z| z.3).all(|z| z.4 == z.0),
        "every sequential zone left empty"
    );
    // The order: zone 0's two passes (write, read, write, read), then zone 1's, then 3's.
    let mut phases: Vec<(u64, Op)> = Vec::new();
    for r in &q.log {
        let key = (r.offset / ZS, r.op);
        if phases.last() != Some(&key) {
            phases.push(key);
        }
    }
    let expect: Vec<(u64, Op)> = [0u64, 1, 3]
        .iter()
        .flat_map(|&k| [(k, Op::Write), (k, Op::Read), (k, Op::Write), (k, Op::Read)])
        .collect();
    assert_eq!(phases, expect);
    let data = q.data.borrow();
    let untouched = |a: u64, b: u64| data[us(a)..us(b)].iter().all(|&x| x == 7);
    assert!(untouched(ZS + ZC, 2 * ZS) && untouched(2 * ZS, 3 * ZS) && untouched(3 * ZS + ZC, 4 * ZS));
    let rec = record_zoned(&s, &out.passes, out.elapsed, out.end, out.resets);
    let z = rec.zones.expect("the zones' record");
    assert_eq!(
        (z.sequential, z.conventional, z.skipped, z.resets, z.after),
        (2, 1, 1, 6, ZonesAfter::Empty)
    );
    assert_eq!(rec.passes[0].planned_bytes, bytes);
}

/// Kept full: no reset after a zone's last pass, which leaves it
/// holding that pass's data up to its capacity.
#[test]
fn a_zoned_burn_in_kept_full_leaves_each_zone_written_to_its_capacity() {
    let (s, mut q, fake) = zoned(ZonesAfter::Full);
    let mut hooks = fake.clone();
    let out = run(&s, &mut q, &Stop::new(), &mut hooks);
    let f = fake.borrow();
    assert!(f.violations.is_empty(), "{:?}", f.violations);
    assert_eq!(f.resets, [ZS, ZS, 3 * ZS, 3 * ZS]);
    assert_eq!(out.resets, 4);
    for z in f.zones.iter().filter(|z| z.3 && z.0 != 2 * ZS) {
        assert_eq!(z.4, z.0 + z.2, "zone at {} full", z.0);
        let last = s.passes()[1];
        assert!(last.holds(z.0, &q.data.borrow()[us(z.0)..us(z.0 + z.2)]));
    }
}

/// A reset the disk refuses ends the burn-in with its errno at the
/// zone's first byte, before anything is written to that zone.
#[test]
fn a_refused_zone_reset_ends_the_burn_in_at_that_zone() {
    let (s, mut q, fake) = zoned(ZonesAfter::Empty);
    fake.borrow_mut().fail_reset = Some((3 * ZS, 13));
    let mut hooks = fake.clone();
    let e = burn_in(
        &s,
        &mut q,
        &Ticks(Cell::new(0)),
        &Stop::new(),
        &mut |_, _| {},
        &mut hooks,
    )
    .expect_err("a refused reset");
    assert_eq!((e.errno, e.req.op, e.req.offset, e.req.len), (13, Op::Write, 3 * ZS, 0));
    assert!(q.log.iter().all(|r| r.offset < 3 * ZS), "nothing sent to zone 3");
}

/// Too many bad blocks in the second zone end the burn-in there: that
/// zone is reset (left empty as asked), the third never touched; the
/// pass that found them says so, and so does the pass that ran over
/// the first zone only.
#[test]
fn too_many_bad_blocks_in_a_zone_end_the_zoned_burn_in_there() {
    let (mut s, mut q, fake) = zoned(ZonesAfter::Empty);
    s.max_bad = 0;
    q.bad_read = alloc::vec![ZS + 4096];
    let mut hooks = fake.clone();
    let out = run(&s, &mut q, &Stop::new(), &mut hooks);
    let f = fake.borrow();
    assert!(f.violations.is_empty(), "{:?}", f.violations);
    assert_eq!(out.end, BurnEndState::TooManyBad);
    assert_eq!(out.passes[0].unreadable, [(ZS + 4096) / u64::from(LB)]);
    assert_eq!(
        out.passes.iter().map(|p| p.end).collect::<Vec<_>>(),
        [BurnEndState::TooManyBad, BurnEndState::TooManyBad]
    );
    assert_eq!(f.resets, [ZS, ZS], "zone 1 reset before its pass and after it ended");
    assert!(q.log.iter().all(|r| r.offset < 2 * ZS), "zone 3 untouched");
}

/// A write a sequential zone refuses (its first block bad) is not
/// narrowed block by block, which would go off the write pointer: the
/// zone's writes end there in that pass, its first LBA is recorded
/// unwritable, the reads go only as far as the writes did, and the
/// next zone is burnt in as ever.
#[test]
fn a_write_a_sequential_zone_refuses_ends_that_zones_pass_there() {
    let (mut s, mut q, fake) = zoned(ZonesAfter::Empty);
    s.patterns = alloc::vec![Pattern::Byte(0xaa)];
    s.chunk = 64 << 10;
    let bad = ZS + (64 << 10);
    q.bad_write = alloc::vec![bad + 512];
    let mut hooks = fake.clone();
    let out = run(&s, &mut q, &Stop::new(), &mut hooks);
    let f = fake.borrow();
    assert!(f.violations.is_empty(), "{:?}", f.violations);
    let p = &out.passes[0];
    assert_eq!(p.end, BurnEndState::Done);
    assert_eq!(p.unwritable, [bad / u64::from(LB)]);
    assert_eq!(p.failed_writes, 1);
    assert_eq!(
        p.written,
        ZS + (64 << 10) + ZC,
        "zone 0, zone 1 up to the refused write, zone 3"
    );
    assert_eq!(p.verified, p.written, "read back as far as written");
    assert!(
        q.log
            .iter()
            .filter(|r| r.op == Op::Write && r.offset >= bad && r.offset < 2 * ZS)
            .count()
            == 1,
        "nothing written in zone 1 after the refused write"
    );
}
