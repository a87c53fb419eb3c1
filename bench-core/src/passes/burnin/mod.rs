//! A write-and-verify burn-in of an area (only ever on a disk the plan
//! grants for writes): passes that each write every block of the area with
//! a pattern and read every block back against it.
//!
//! - **Sequential** passes are badblocks' `-w` test: one pass per pattern
//!   (its four by default: 0xaa, 0x55, 0xff, 0x00), the area written from
//!   its first block to its last with large requests kept `depth` in
//!   flight, then, once every write has completed, read back in the same
//!   order and compared.
//! - **Random** passes are the burn-in OpenStack Ironic runs with fio
//!   (4 KiB, queue depth 32, every write verified, 4 loops): every block
//!   written once in an order that a keyed permutation gives (no map of
//!   the area is kept), with data that depends on the pass's seed and each
//!   byte's offset ([`crate::engine::verify`]); reads and writes alternate, a read
//!   going to the next block in the same order whose write has completed,
//!   so each block is read back and checked once.
//!
//! A request that fails is narrowed, once the requests in flight have
//! completed, to the logical blocks that fail, as the surface scan narrows
//! ([`crate::passes::scan`]): each block is written (or read) alone, again up to
//! `retries` times when it fails. A block no write reaches is unwritable
//! (and not then counted as a mismatch), one no read returns unreadable,
//! one read back with other contents mismatched. The burn-in goes on past
//! bad blocks until more than `max_bad` of them are found over all passes.
//! A write the kernel refuses before the disk is asked (EPERM, EROFS: a
//! device held read-only) marks no block: it ends the burn-in with that
//! error, for the caller to report as a refused grant.
//!
//! On a host-managed zoned disk (SMR, NVMe ZNS) the sequential burn-in goes
//! **zone by zone** ([`BurnSpec::zones`]): for each zone, every pass in
//! turn resets a sequential zone (a hook the caller gives:
//! [`BurnHooks::reset_zone`]), writes it from its start to its capacity,
//! the only order such a zone takes, one write in flight at a time (the
//! order in which writes in flight together reach the drive is not
//! theirs to keep), and reads it back; once its passes
//! are done the zone is reset again unless the spec keeps it full. The
//! gap between a zone's capacity and its size is never written or read.
//! Conventional zones are burnt in as an ordinary disk's blocks. Each
//! pass's record sums its zones.
//!
//! Each phase (a sequential pass's writes, its reads; a random pass) is
//! one run of the whole-disk pass the surface scan shares (`sweep.rs`);
//! the burn-in gives it its order and patterns and checks what it read.

use alloc::string::String;
use alloc::vec::Vec;

use crate::document::result::{BurnEndState, BurnIn, BurnOrder, BurnPass, BurnZones, ZonesAfter};
use crate::engine::runner::Stop;
use crate::io::{Clock, IoError, IoQueue, IoReq, Op};
use crate::passes::sweep::{no_buffer, End, Engine, Finished, Inflight, Sweep};
use crate::vocab::rng::{splitmix64, Permutation};
use crate::vocab::units::Nanos;

/// What a pass writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Every byte this value (badblocks' patterns).
    Byte(u8),
    /// Data from this seed and each byte's offset ([`crate::engine::verify::fill`]).
    Random(u64),
}

/// badblocks' patterns for its destructive test, in its order.
pub const BADBLOCKS_PATTERNS: [Pattern; 4] = [
    Pattern::Byte(0xaa),
    Pattern::Byte(0x55),
    Pattern::Byte(0xff),
    Pattern::Byte(0x00),
];

impl Pattern {
    /// The bytes it puts at `offset`.
    pub fn fill(self, offset: u64, buf: &mut [u8]) {
        match self {
            Pattern::Byte(b) => buf.fill(b),
            Pattern::Random(seed) => crate::engine::verify::fill(seed, offset, buf),
        }
    }

    /// True if `data`, read at `offset`, is what it put there.
    pub fn holds(self, offset: u64, data: &[u8]) -> bool {
        match self {
            // Blocks of bytes folded without a branch (the compiler's
            // vector code), one test per block.
            Pattern::Byte(b) => data
                .chunks(4096)
                .all(|c| c.iter().fold(0u8, |acc, &x| acc | (x ^ b)) == 0),
            Pattern::Random(seed) => crate::engine::verify::first_mismatch(seed, offset, data).is_none(),
        }
    }

    /// Its name in the document: `"0xaa"`, or `"random"`.
    pub fn name(self) -> String {
        match self {
            Pattern::Byte(b) => alloc::format!("{b:#04x}"),
            Pattern::Random(_) => "random".into(),
        }
    }
}

/// One zone of a zoned disk, as a zone-by-zone burn-in takes it (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneSpan {
    /// Its first byte.
    pub start: u64,
    /// Its size: a reset covers `start..start + size`.
    pub size: u64,
    /// The bytes from `start` that may be written (at most `size`).
    pub capacity: u64,
    /// Sequential-write-required: reset before each pass's writes, written
    /// only from its start on. Conventional otherwise.
    pub sequential: bool,
}

/// A zoned disk's zones as a burn-in goes through them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZonePlan {
    /// The zones to burn in, ascending, each wholly inside the area.
    pub zones: Vec<ZoneSpan>,
    /// Zones of the area left out (offline, read-only, partly outside it).
    pub skipped: u64,
    /// What each sequential zone is left as.
    pub after: ZonesAfter,
}

/// What to burn in and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BurnSpec {
    /// The area: from this byte...
    pub start: u64,
    /// ...to this one (exclusive). Both multiples of `logical_block`.
    pub end: u64,
    /// The size of each request (a multiple of `logical_block`; the area's
    /// last one may be shorter).
    pub chunk: u32,
    /// Requests in flight at most (within the queue's depth).
    pub depth: u32,
    /// The device's logical block size: the unit failed requests are
    /// narrowed to, and of the LBAs recorded.
    pub logical_block: u32,
    /// How many more times a failing block is tried before it is bad.
    pub retries: u32,
    /// The burn-in stops once more blocks than this are bad (over all passes).
    pub max_bad: u64,
    /// The order of every pass.
    pub order: BurnOrder,
    /// Sequential: the passes' patterns, in order, repeated `loops` times.
    /// Random: ignored (each pass writes random data).
    pub patterns: Vec<Pattern>,
    /// How many times the patterns (random: passes) are run.
    pub loops: u32,
    /// The seed of random data: each pass's is derived from it.
    pub seed: u64,
    /// A zoned disk's zones, gone through one by one (sequential order
    /// only); `None`: the area as one.
    pub zones: Option<ZonePlan>,
}

impl BurnSpec {
    /// Every pass's pattern, in order.
    /// Random data gets a seed of its own in each pass (from `seed` and the
    /// pass's index), so that a block a pass failed to write still holds
    /// the pass before's data and is found.
    pub fn passes(&self) -> Vec<Pattern> {
        let patterns: Vec<Pattern> = match self.order {
            BurnOrder::Sequential => (0..self.loops).flat_map(|_| self.patterns.iter().copied()).collect(),
            BurnOrder::Random => (0..self.loops).map(|_| Pattern::Random(0)).collect(),
        };
        patterns
            .into_iter()
            .enumerate()
            .map(|(i, p)| match p {
                Pattern::Byte(_) => p,
                Pattern::Random(_) => {
                    let mut s = self.seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    Pattern::Random(splitmix64(&mut s))
                }
            })
            .collect()
    }

    /// The bytes each pass writes: the area's, or its zones' capacities.
    pub fn area_bytes(&self) -> u64 {
        match &self.zones {
            None => self.end.saturating_sub(self.start),
            Some(z) => z.zones.iter().map(|z| z.capacity).sum(),
        }
    }

    /// The parts of the area passes go over one after the other: the area
    /// whole, or each zone's writable part.
    fn parts(&self) -> Vec<(u64, u64)> {
        match &self.zones {
            None => alloc::vec![(self.start, self.end)],
            Some(z) => z.zones.iter().map(|z| (z.start, z.start + z.capacity)).collect(),
        }
    }

    /// Bytes every pass writes and reads back together.
    pub fn planned_bytes(&self) -> u64 {
        let area = self.area_bytes();
        area.saturating_mul(2)
            .saturating_mul(u64::try_from(self.passes().len()).unwrap_or(u64::MAX))
    }

    /// The number of requests of `part` (`start..end`).
    fn requests(&self, (start, end): (u64, u64)) -> u64 {
        end.saturating_sub(start).div_ceil(u64::from(self.chunk.max(1)))
    }

    /// Request `i` of `part` (in its order): `(offset, len)`.
    fn request(&self, (start, end): (u64, u64), i: u64) -> (u64, u32) {
        let offset = start + i * u64::from(self.chunk);
        let len = (end - offset).min(u64::from(self.chunk));
        (offset, u32::try_from(len).unwrap_or(self.chunk))
    }
}

/// The record of a burn-in of `spec` that made no request (the disk could
/// not be claimed or opened): every pass `not_run`, the end `error`.
pub fn not_run(spec: &BurnSpec, why: String) -> BurnIn {
    let mut r = record(spec, &[], Nanos(0), BurnEndState::Error);
    r.error = Some(why);
    r
}

/// The document's record of a burn-in of `spec` whose passes made `done`
/// (the first ones; the rest were not run).
pub fn record(spec: &BurnSpec, done: &[PassOutcome], elapsed: Nanos, end: BurnEndState) -> BurnIn {
    record_zoned(spec, done, elapsed, end, 0)
}

/// [`record`], with the zone resets a zone-by-zone burn-in sent.
pub fn record_zoned(spec: &BurnSpec, done: &[PassOutcome], elapsed: Nanos, end: BurnEndState, resets: u64) -> BurnIn {
    let area = spec.area_bytes();
    let passes: Vec<BurnPass> = spec
        .passes()
        .into_iter()
        .enumerate()
        .map(|(i, p)| match done.get(i) {
            Some(o) => o.record(spec),
            None => PassOutcome::new(p).with_end(BurnEndState::NotRun, area).record(spec),
        })
        .collect();
    let union = |f: fn(&BurnPass) -> &Vec<u64>| {
        let mut v: Vec<u64> = passes.iter().flat_map(|p| f(p).iter().copied()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    BurnIn {
        mode: spec.order,
        start_byte: spec.start,
        end_byte: spec.end,
        bs: u64::from(spec.chunk),
        iodepth: spec.depth,
        logical_block: spec.logical_block,
        unwritable_lbas: union(|p| &p.unwritable_lbas),
        unreadable_lbas: union(|p| &p.unreadable_lbas),
        mismatched_lbas: union(|p| &p.mismatched_lbas),
        passes,
        elapsed_ns: elapsed.0,
        end,
        error: None,
        zones: spec.zones.as_ref().map(|z| {
            let n = |seq: bool| z.zones.iter().filter(|z| z.sequential == seq).count() as u64;
            BurnZones {
                sequential: n(true),
                conventional: n(false),
                skipped: z.skipped,
                resets,
                after: z.after,
            }
        }),
    }
}

/// What one pass did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassOutcome {
    /// What it wrote.
    pub pattern: Pattern,
    /// Bytes the pass writes and reads back.
    pub planned: u64,
    /// Bytes written.
    pub written: u64,
    /// Bytes read back and checked.
    pub verified: u64,
    /// Write requests made, and those that failed.
    pub writes: u64,
    /// Write requests that failed.
    pub failed_writes: u64,
    /// Read requests made.
    pub reads: u64,
    /// Read requests that failed.
    pub failed_reads: u64,
    /// First write submission and last write completion.
    pub write_span: Option<(Nanos, Nanos)>,
    /// First read submission and last read completion.
    pub read_span: Option<(Nanos, Nanos)>,
    /// LBAs no write reached.
    pub unwritable: Vec<u64>,
    /// LBAs no read returned.
    pub unreadable: Vec<u64>,
    /// LBAs that did not hold the pattern.
    pub mismatched: Vec<u64>,
    /// How the pass ended.
    pub end: BurnEndState,
}

impl PassOutcome {
    /// A pass of `pattern` that has made no request yet.
    pub fn new(pattern: Pattern) -> PassOutcome {
        PassOutcome {
            pattern,
            planned: 0,
            written: 0,
            verified: 0,
            writes: 0,
            failed_writes: 0,
            reads: 0,
            failed_reads: 0,
            write_span: None,
            read_span: None,
            unwritable: Vec::new(),
            unreadable: Vec::new(),
            mismatched: Vec::new(),
            end: BurnEndState::Done,
        }
    }

    fn with_end(mut self, end: BurnEndState, planned: u64) -> PassOutcome {
        self.end = end;
        self.planned = planned;
        self
    }

    /// Its bad blocks by kind.
    pub fn found(&self) -> Found {
        let n = |v: &Vec<u64>| u64::try_from(v.len()).unwrap_or(u64::MAX);
        Found {
            unwritable: n(&self.unwritable),
            unreadable: n(&self.unreadable),
            mismatched: n(&self.mismatched),
        }
    }

    /// Its bad blocks.
    pub fn bad(&self) -> u64 {
        u64::try_from(self.unwritable.len() + self.unreadable.len() + self.mismatched.len()).unwrap_or(u64::MAX)
    }

    fn record(&self, spec: &BurnSpec) -> BurnPass {
        let ns = |s: Option<(Nanos, Nanos)>| s.map_or(0, |(a, b)| b.saturating_sub(a).0);
        #[allow(clippy::cast_precision_loss)] // rates: 53 bits are plenty
        let rate = |bytes: u64, ns: u64| (ns > 0).then(|| bytes as f64 * 1e9 / ns as f64);
        let sorted = |v: &Vec<u64>| {
            let mut v = v.clone();
            v.sort_unstable();
            v.dedup();
            v
        };
        let (write_ns, verify_ns) = (ns(self.write_span), ns(self.read_span));
        BurnPass {
            pattern: self.pattern.name(),
            seed: match self.pattern {
                Pattern::Random(s) => Some(s),
                Pattern::Byte(_) => None,
            },
            order: spec.order,
            planned_bytes: self.planned,
            written_bytes: self.written,
            verified_bytes: self.verified,
            writes: self.writes,
            failed_writes: self.failed_writes,
            reads: self.reads,
            failed_reads: self.failed_reads,
            write_ns,
            verify_ns,
            write_bytes_per_sec: rate(self.written, write_ns),
            verify_bytes_per_sec: rate(self.verified, verify_ns),
            unwritable_lbas: sorted(&self.unwritable),
            unreadable_lbas: sorted(&self.unreadable),
            mismatched_lbas: sorted(&self.mismatched),
            end: self.end,
        }
    }
}

/// What a burn-in did: each pass it started, how it ended, how long it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BurnOutcome {
    /// The passes started, in order.
    pub passes: Vec<PassOutcome>,
    /// How the burn-in ended.
    pub end: BurnEndState,
    /// From the first request to the last completion.
    pub elapsed: Nanos,
    /// Zone resets sent (a zoned disk's).
    pub resets: u64,
}

/// The bad blocks a burn-in found so far, each kind counted in the pass
/// that found the most of it (never more than the whole burn-in's
/// record will hold, never fewer than an earlier report said).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Blocks no write reached.
    pub unwritable: u64,
    /// Blocks no read returned.
    pub unreadable: u64,
    /// Blocks read back different from what was written.
    pub mismatched: u64,
}

impl Found {
    fn max(self, o: Found) -> Found {
        Found {
            unwritable: self.unwritable.max(o.unwritable),
            unreadable: self.unreadable.max(o.unreadable),
            mismatched: self.mismatched.max(o.mismatched),
        }
    }
}

/// What a burn-in asks of its caller besides requests.
pub trait BurnHooks {
    /// Called between a sequential pass's writes and its reads, with the
    /// pass's index (a test's hook to change the device behind the
    /// burn-in's back).
    fn between(&mut self, _pass: usize) {}

    /// Reset the write pointer of the zone of `size` bytes at byte `start`
    /// (a write: only on a disk claimed for writing); an errno if it
    /// failed. Asked only by a burn-in with sequential zones.
    fn reset_zone(&mut self, start: u64, size: u64) -> Result<(), i32>;
}

/// A hook between a sequential pass's writes and its reads, on a disk
/// without zones (no reset can be asked of it: EOPNOTSUPP).
impl<F: FnMut(usize)> BurnHooks for F {
    fn between(&mut self, pass: usize) {
        self(pass);
    }

    fn reset_zone(&mut self, _: u64, _: u64) -> Result<(), i32> {
        Err(95)
    }
}

/// The hooks of a burn-in: what runs between a pass's writes and reads, and
/// the zone resets.
pub type BetweenHook<'a> = &'a mut dyn BurnHooks;

/// Burn in `spec`'s area through `q` (opened for writing, with slot
/// buffers), timing on `clock`. `progress` gets the fraction of the
/// planned bytes done and the bad blocks found so far, about once a second; `between` runs between each
/// sequential pass's writes and reads. An error of the queue itself (not
/// of a request) ends the burn-in with it.
pub fn burn_in<Q: IoQueue, C: Clock>(
    spec: &BurnSpec,
    q: &mut Q,
    clock: &C,
    stop: &Stop,
    progress: &mut dyn FnMut(f64, Found),
    hooks: BetweenHook<'_>,
) -> Result<BurnOutcome, IoError> {
    let mut engine = Engine::new(q, clock, spec.depth, spec.logical_block, spec.retries);
    let mut b = Burn {
        spec,
        bad_before: 0,
        found_before: Found::default(),
        done_before: 0,
        planned_all: spec.planned_bytes(),
        pass: PassOutcome::new(Pattern::Byte(0)),
        walk: Walk::new(Phase::Write, 0, 0),
        part: (spec.start, spec.end),
        sequential_zone: false,
        zone_cut: None,
    };
    let patterns = spec.passes();
    let area = spec.area_bytes();
    // Every pass's outcome so far: a pass goes over the parts (the area
    // whole, or zone after zone) one after the other.
    let mut outcomes: Vec<PassOutcome> = patterns
        .iter()
        .map(|&p| PassOutcome::new(p).with_end(BurnEndState::NotRun, area))
        .collect();
    let zoned = spec.zones.as_ref().map_or(&[][..], |z| &z.zones[..]);
    let keep_full = spec.zones.as_ref().is_some_and(|z| z.after == ZonesAfter::Full);
    let mut resets = 0u64;
    let mut reset = |hooks: &mut dyn BurnHooks, z: &ZoneSpan| {
        resets += 1;
        hooks.reset_zone(z.start, z.size).map_err(|errno| IoError {
            errno,
            req: IoReq {
                op: Op::Write,
                offset: z.start,
                len: 0,
            },
        })
    };
    // Without zones the area is one part and a pass goes over it whole
    // before the next pass starts; with zones each zone gets every pass
    // before the next zone.
    let parts = spec.parts();
    let mut end = BurnEndState::Done;
    'parts: for (k, &part) in parts.iter().enumerate() {
        let zone = zoned.get(k).filter(|z| z.sequential);
        for (i, &pattern) in patterns.iter().enumerate() {
            if let Some(z) = zone {
                reset(&mut *hooks, z)?;
            }
            let mut pass = core::mem::replace(&mut outcomes[i], PassOutcome::new(pattern));
            pass.end = BurnEndState::Done;
            b.part = part;
            b.sequential_zone = zone.is_some();
            b.zone_cut = None;
            b.pass = pass;
            let others = outcomes.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, o)| o);
            b.bad_before = others.clone().map(PassOutcome::bad).sum();
            b.found_before = others.clone().fold(Found::default(), |f, o| f.max(o.found()));
            b.done_before = others.map(|o| o.written + o.verified).sum();
            match spec.order {
                BurnOrder::Sequential => {
                    b.run(&mut engine, stop, progress, Phase::Write)?;
                    if b.pass.end == BurnEndState::Done {
                        hooks.between(i);
                        b.run(&mut engine, stop, progress, Phase::Read)?;
                    }
                }
                BurnOrder::Random => b.run(&mut engine, stop, progress, Phase::Mixed)?,
            }
            let pass_end = b.pass.end;
            outcomes[i] = core::mem::replace(&mut b.pass, PassOutcome::new(pattern));
            if pass_end != BurnEndState::Done {
                end = pass_end;
                if let (Some(z), false) = (zone, keep_full) {
                    reset(&mut *hooks, z)?;
                }
                // The passes this part did not reach end as this one did
                // (those no part reached were not run).
                let last = k + 1 == parts.len();
                for (j, o) in outcomes.iter_mut().enumerate() {
                    let reached = j < i || (j > i && k > 0);
                    if j != i && !(last && j < i) && reached {
                        o.end = pass_end;
                    }
                }
                break 'parts;
            }
        }
        if let (Some(z), false) = (zone, keep_full) {
            reset(&mut *hooks, z)?;
        }
    }
    // Without zones, passes after the one that ended the burn-in were not
    // run (they stay `not_run`, and are not returned).
    let ran = outcomes.iter().take_while(|o| o.end != BurnEndState::NotRun).count();
    outcomes.truncate(ran);
    Ok(BurnOutcome {
        passes: outcomes,
        end,
        elapsed: engine.elapsed(),
        resets,
    })
}

/// Which requests a run of the loop makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Every request of the area written, in order.
    Write,
    /// Every request of the area read back, in order.
    Read,
    /// Every request written in the permutation's order, and read back
    /// behind the writes that completed.
    Mixed,
}

/// A phase's order: the next request to write and to read (indices in
/// the phase's order, the area's or the permutation's).
struct Walk {
    phase: Phase,
    /// The requests of the area.
    n: u64,
    /// The mixed phase's order; the sequential phases go in the area's.
    perm: Option<Permutation>,
    w: u64,
    r: u64,
    prefer_read: bool,
    /// At most one write in flight: a sequential zone's, whose writes must
    /// reach the drive in order, which requests in flight together need
    /// not (the kernel may retry one of them later from another thread).
    one_write: bool,
}

impl Walk {
    /// `phase` over `n` requests, the mixed phase's order keyed by `key`.
    fn new(phase: Phase, n: u64, key: u64) -> Walk {
        let (w, r) = match phase {
            Phase::Write => (0, n),
            Phase::Read => (n, 0),
            Phase::Mixed => (0, 0),
        };
        let perm = (phase == Phase::Mixed).then(|| {
            let mut s = key;
            Permutation::new(n, splitmix64(&mut s))
        });
        Walk {
            phase,
            n,
            perm,
            w,
            r,
            prefer_read: false,
            one_write: false,
        }
    }

    /// The next request's op and index in the phase's order, if one may go.
    fn next(&mut self, inflight: &[Option<Inflight>]) -> Option<(Op, u64)> {
        let (n, w, r) = (self.n, self.w, self.r);
        // Reads go only to blocks whose write has completed: below the
        // first write still in flight (the mixed phase).
        let written_below = inflight
            .iter()
            .flatten()
            .filter(|f| f.req.op == Op::Write)
            .map(|f| f.index)
            .min()
            .unwrap_or(w);
        let can_read = r < n && (self.phase == Phase::Read || r < written_below);
        let can_write = w < n && !(self.one_write && inflight.iter().flatten().any(|f| f.req.op == Op::Write));
        let op = match (can_read, can_write) {
            (true, true) if self.prefer_read => Op::Read,
            (_, true) => Op::Write,
            (true, false) => Op::Read,
            (false, false) => return None,
        };
        self.prefer_read = op == Op::Write;
        if op == Op::Write {
            self.w += 1;
            Some((op, w))
        } else {
            self.r += 1;
            Some((op, r))
        }
    }

    /// Where request `i` of the phase's order is in the area's.
    fn at(&self, i: u64) -> u64 {
        self.perm.as_ref().map_or(i, |p| p.at(i))
    }
}

/// One burn-in's state ([`burn_in`]): the one pass ([`crate::passes::sweep`])
/// writing and reading back, phase after phase.
struct Burn<'a> {
    spec: &'a BurnSpec,
    /// Bad blocks of the passes before this one.
    bad_before: u64,
    /// The most of each kind a pass before this one found.
    found_before: Found,
    /// Bytes written and verified by the passes before this one.
    done_before: u64,
    planned_all: u64,
    pass: PassOutcome,
    walk: Walk,
    /// The part of the area the pass goes over now: the area, or a zone's
    /// writable part.
    part: (u64, u64),
    /// The part is a sequential zone: its writes go one at a time.
    sequential_zone: bool,
    /// Where a write the sequential zone refused began, in this pass:
    /// the zone's writes end there and its reads go no further.
    zone_cut: Option<u64>,
}

impl Burn<'_> {
    /// Make every request of `phase`, narrowing what fails, until done,
    /// stopped or too many blocks are bad.
    fn run<Q: IoQueue, C: Clock>(
        &mut self,
        engine: &mut Engine<'_, Q, C>,
        stop: &Stop,
        progress: &mut dyn FnMut(f64, Found),
        phase: Phase,
    ) -> Result<(), IoError> {
        let key = match self.pass.pattern {
            Pattern::Random(seed) => seed,
            Pattern::Byte(b) => u64::from(b),
        };
        // The reads of a sequential zone whose writes ended early go only
        // as far as they got.
        let part = match (phase, self.zone_cut) {
            (Phase::Read, Some(cut)) => (self.part.0, cut),
            _ => self.part,
        };
        self.walk = Walk::new(phase, self.spec.requests(part), key);
        self.walk.one_write = self.sequential_zone;
        self.pass.end = match engine.run(self, stop, progress)? {
            End::Done => BurnEndState::Done,
            End::Stopped => BurnEndState::Stopped,
            End::TooManyBad => BurnEndState::TooManyBad,
        };
        Ok(())
    }

    /// Check what the read in `slot` returned at `offset` against the
    /// pass's pattern, block by block where it differs.
    fn check<Q: IoQueue>(&mut self, q: &Q, slot: usize, offset: u64, len: u32) -> Result<(), IoError> {
        let req = IoReq {
            op: Op::Read,
            offset,
            len,
        };
        let pattern = self.pass.pattern;
        let data = q.read_buf(slot, len as usize).ok_or_else(|| no_buffer(req))?;
        self.pass.verified += u64::from(len);
        if pattern.holds(offset, data) {
            return Ok(());
        }
        let lb = self.spec.logical_block.max(1) as usize;
        for (k, block) in data.chunks(lb).enumerate() {
            let at = offset + (k * lb) as u64;
            let lba = at / lb as u64;
            if !pattern.holds(at, block) && !self.pass.unwritable.contains(&lba) {
                self.pass.mismatched.push(lba);
            }
        }
        Ok(())
    }
}

impl Sweep for Burn<'_> {
    type Found = Found;
    /// A block read back can mismatch: every block narrowed is judged.
    const JUDGE_EVERY_BLOCK: bool = true;
    const TIMED_NARROWING: bool = false;

    fn next(&mut self, inflight: &[Option<Inflight>]) -> Option<(IoReq, u64)> {
        let (op, index) = self.walk.next(inflight)?;
        let (offset, len) = self.spec.request(self.part, self.walk.at(index));
        debug_assert!(op == Op::Write || self.zone_cut.is_none_or(|c| offset < c));
        Some((IoReq { op, offset, len }, index))
    }

    fn fill(&self, offset: u64, buf: &mut [u8]) {
        self.pass.pattern.fill(offset, buf);
    }

    fn submitted(&mut self, req: IoReq, now: Nanos) {
        let span = if req.op == Op::Write {
            &mut self.pass.write_span
        } else {
            &mut self.pass.read_span
        };
        span.get_or_insert((now, now));
    }

    fn completed<Q: IoQueue>(&mut self, q: &Q, f: Finished) -> Result<(), IoError> {
        let (span, count) = if f.req.op == Op::Write {
            (&mut self.pass.write_span, &mut self.pass.writes)
        } else {
            (&mut self.pass.read_span, &mut self.pass.reads)
        };
        *count += 1;
        if let Some(s) = span.as_mut() {
            s.1 = f.now;
        }
        match (f.req.op, f.ok) {
            (Op::Write, true) => self.pass.written += u64::from(f.req.len),
            (Op::Write, false) if self.sequential_zone => {
                // The zone's write pointer is no longer where the next
                // write would go (nor known): its first block is the one
                // recorded, no later block of the zone is written in this
                // pass, and the reads stop there.
                self.pass.failed_writes += 1;
                self.pass
                    .unwritable
                    .push(f.req.offset / u64::from(self.spec.logical_block.max(1)));
                self.zone_cut = Some(f.req.offset);
                self.walk.w = self.walk.n;
            }
            (Op::Write, false) => self.pass.failed_writes += 1,
            (_, true) => self.check(q, f.slot, f.req.offset, f.req.len)?,
            (_, false) => self.pass.failed_reads += 1,
        }
        Ok(())
    }

    fn narrowed<Q: IoQueue>(&mut self, q: &Q, block: IoReq, ok: Option<u32>, _: Nanos) -> Result<(), IoError> {
        let lba = block.offset / u64::from(block.len);
        match (block.op, ok.is_some()) {
            (Op::Write, true) => self.pass.written += u64::from(block.len),
            (Op::Write, false) => self.pass.unwritable.push(lba),
            (_, true) => self.check(q, 0, block.offset, block.len)?,
            (_, false) => self.pass.unreadable.push(lba),
        }
        Ok(())
    }

    /// A write a sequential zone refused is not narrowed: each block alone
    /// would go off the zone's write pointer ([`Sweep::completed`] judged it).
    fn narrows(&self, req: IoReq) -> bool {
        !(self.sequential_zone && req.op == Op::Write)
    }

    fn too_many_bad(&self) -> bool {
        self.bad_before.saturating_add(self.pass.bad()) > self.spec.max_bad
    }

    fn progress(&self) -> (f64, Found) {
        let done = self.done_before + self.pass.written + self.pass.verified;
        #[allow(clippy::cast_precision_loss)] // a fraction
        (
            done as f64 / self.planned_all.max(1) as f64,
            self.found_before.max(self.pass.found()),
        )
    }
}

#[cfg(test)]
mod tests;
