//! SSD preconditioning to steady state, as SNIA's Solid State Storage
//! Performance Test Specification (PTS) prescribes before any figure of a
//! flash drive is taken (a drive fresh out of the box, or after a long
//! idle, writes far faster than it will once its spare blocks are used):
//!
//! 1. **Workload-independent preconditioning** (the PTS's WIPC): the area
//!    written sequentially with 128 KiB requests, twice over.
//! 2. **Workload-dependent preconditioning** (WDPC): the test workload run
//!    in rounds of a fixed time, its figure (IOPS or bytes/s) taken each
//!    round, until the last `window` rounds (the PTS's Measurement Window,
//!    5) are in steady state ([`check`]), or a round limit (the PTS's 25).
//!
//! Steady state, as the PTS defines it (SSS PTS v2.0, 2.1 "Steady State"),
//! for the figure y over the Measurement Window: Max(y) - Min(y) is no
//! more than 20% of Ave(y) (the data excursion), and the best linear fit
//! of y against the round, taken from the window's first round to its
//! last, rises or falls by no more than 10% of Ave(y) (the slope
//! excursion). fio's `ss=iops:20%` and `ss=iops_slope:` check the same two
//! things over a time window, with the slope per second.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::document::result::{BurnOrder, Precondition, PreconditionEnd, PreconditionFill, PreconditionRound};
use crate::engine::runner::Stop;
use crate::io::{Clock, Completion, IoError, IoQueue, IoReq, Op};
use crate::vocab::rng::{splitmix64, Permutation};
use crate::vocab::units::Nanos;

/// The PTS's Measurement Window: rounds.
pub const PTS_WINDOW: usize = 5;
/// The PTS's round limit.
pub const PTS_MAX_ROUNDS: u32 = 25;
/// The PTS's data excursion limit, percent of the window's average.
pub const PTS_RANGE_PCT: f64 = 20.0;
/// The PTS's slope excursion limit, percent of the window's average.
pub const PTS_SLOPE_PCT: f64 = 10.0;
/// The PTS's workload-independent fill: requests of 128 KiB.
pub const FILL_BS: u32 = 128 << 10;
/// ... over the area this many times.
pub const FILL_PASSES: u32 = 2;

/// The two excursions of a window of rounds' figures, and whether they
/// are within the limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// The window's average figure.
    pub mean: f64,
    /// Its largest figure less its smallest.
    pub range: f64,
    /// The best linear fit's slope, figure per round.
    pub slope: f64,
    /// The fit's rise or fall over the window: |slope| x (rounds - 1).
    pub fit_excursion: f64,
    /// Both within the limits.
    pub steady: bool,
}

/// The excursions of `ys` (a round's figure each, in order) against the
/// limits, percent of their average. `None` for fewer than 2 figures or
/// an average that is not positive.
pub fn check(ys: &[f64], range_pct: f64, slope_pct: f64) -> Option<Window> {
    if ys.len() < 2 || ys.iter().any(|y| !y.is_finite()) {
        return None;
    }
    #[allow(clippy::cast_precision_loss)] // a few rounds
    let n = ys.len() as f64;
    let mean = ys.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let max = ys.iter().copied().fold(f64::MIN, f64::max);
    let min = ys.iter().copied().fold(f64::MAX, f64::min);
    // Least squares of y against x = 0, 1, ..., n - 1.
    let xm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)] // a round's index
        let dx = i as f64 - xm;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    let fit_excursion = slope.abs() * (n - 1.0);
    let range = max - min;
    Some(Window {
        mean,
        range,
        slope,
        fit_excursion,
        steady: range <= mean * range_pct / 100.0 && fit_excursion <= mean * slope_pct / 100.0,
    })
}

/// The first round (counting from 1) at which the `window` rounds ending
/// there are steady, among `ys`; `None` if none is.
pub fn first_steady(ys: &[f64], window: usize, range_pct: f64, slope_pct: f64) -> Option<usize> {
    (window.max(2)..=ys.len())
        .find(|&end| check(&ys[end - window.max(2)..end], range_pct, slope_pct).is_some_and(|w| w.steady))
}

/// The workload of the rounds: writes of `bs`, `depth` in flight, over
/// the area in a random order (every block once per pass of the area, a
/// keyed permutation's order: the PTS's random writes) or sequentially.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// The size of each write.
    pub bs: u32,
    /// Writes in flight.
    pub depth: u32,
    /// Random order (else sequential).
    pub random: bool,
}

/// What to precondition and how.
#[derive(Clone, Debug, PartialEq)]
pub struct PreconditionSpec {
    /// The area: from this byte...
    pub start: u64,
    /// ...to this one (exclusive).
    pub end: u64,
    /// The workload-independent fill first (the area written twice with
    /// 128 KiB requests).
    pub fill: bool,
    /// The rounds' workload.
    pub workload: Workload,
    /// Each round's time.
    pub round: Nanos,
    /// Rounds at most.
    pub max_rounds: u32,
    /// The Measurement Window, rounds.
    pub window: usize,
    /// The data excursion limit, percent.
    pub range_pct: f64,
    /// The slope excursion limit, percent.
    pub slope_pct: f64,
    /// The seed of the data written and of the random order.
    pub seed: u64,
    /// The disk's logical block: what a failed write of the fill is
    /// narrowed to.
    pub logical_block: u32,
}

/// What preconditioning did.
#[derive(Clone, Debug, PartialEq)]
pub struct PreconditionOutcome {
    /// Bytes the fill wrote, and from its first write to its last completion.
    pub fill: Option<(u64, Nanos)>,
    /// Each round: its writes, bytes written and time.
    pub rounds: Vec<Round>,
    /// The round (from 1) whose window was the first in steady state.
    pub steady_at: Option<usize>,
    /// Why it ended before steady state and the round limit (a stop, a
    /// failed write): `None` when it ran to one of them.
    pub ended: Option<Ended>,
}

/// Why preconditioning ended early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The run asked to stop.
    Stopped,
    /// A write failed: at this offset, with this errno.
    WriteFailed {
        /// The write's offset.
        offset: u64,
        /// Its errno.
        errno: i32,
    },
}

/// One round of the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    /// Writes completed.
    pub writes: u64,
    /// Bytes they wrote.
    pub bytes: u64,
    /// From the round's first write to its last completion.
    pub time: Nanos,
}

impl Round {
    /// Writes per second.
    pub fn iops(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)] // a rate
        let r = self.writes as f64 * 1e9 / self.time.0.max(1) as f64;
        r
    }

    /// Bytes per second.
    pub fn bytes_per_sec(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)] // a rate
        let r = self.bytes as f64 * 1e9 / self.time.0.max(1) as f64;
        r
    }
}

impl PreconditionSpec {
    /// The figure a round is judged by: IOPS for random writes (the PTS's
    /// IOPS and write saturation tests), bytes/s for sequential ones (its
    /// throughput test).
    pub fn figure(&self, r: &Round) -> f64 {
        if self.workload.random {
            r.iops()
        } else {
            r.bytes_per_sec()
        }
    }
}

/// Precondition `spec`'s area through `q` (opened for writing), timing on
/// `clock`: the fill, then rounds until steady state, the round limit, a
/// stop or a failed write. `progress` gets each round's figure as it ends.
pub fn precondition<Q: IoQueue, C: Clock>(
    spec: &PreconditionSpec,
    q: &mut Q,
    clock: &C,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, f64),
) -> Result<PreconditionOutcome, IoError> {
    let mut out = PreconditionOutcome {
        fill: None,
        rounds: Vec::new(),
        steady_at: None,
        ended: None,
    };
    let mut made = 0;
    if spec.fill {
        let (bytes, time, ended, issued) = fill(spec, q, clock, stop)?;
        out.fill = Some((bytes, time));
        if ended.is_some() {
            out.ended = ended;
            return Ok(out);
        }
        made = issued;
    }
    let mut w = Writer::new(spec, q, clock, made);
    let mut figures = Vec::new();
    for _ in 0..spec.max_rounds {
        let (r, ended) = w.write(&spec.workload, None, Some(spec.round), stop)?;
        let f = spec.figure(&r);
        out.rounds.push(r);
        if ended.is_some() {
            out.ended = ended;
            break;
        }
        figures.push(f);
        progress(figures.len(), f);
        if figures.len() >= spec.window {
            let win = &figures[figures.len() - spec.window..];
            if check(win, spec.range_pct, spec.slope_pct).is_some_and(|w| w.steady) {
                out.steady_at = Some(figures.len());
                break;
            }
        }
    }
    Ok(out)
}

/// The writer of the fill and the rounds: where the next write goes.
struct Writer<'a, Q, C> {
    spec: &'a PreconditionSpec,
    q: &'a mut Q,
    clock: &'a C,
    /// Writes made so far over all phases: the position in the order.
    made: u64,
    comps: Vec<Completion>,
}

impl<'a, Q: IoQueue, C: Clock> Writer<'a, Q, C> {
    /// The rounds' writer, `made` writes into the order (the fill's).
    fn new(spec: &'a PreconditionSpec, q: &'a mut Q, clock: &'a C, made: u64) -> Self {
        Writer {
            spec,
            q,
            clock,
            made,
            comps: Vec::new(),
        }
    }

    /// The number of `bs` requests the area holds.
    fn requests(&self, bs: u32) -> u64 {
        self.spec.end.saturating_sub(self.spec.start) / u64::from(bs.max(1))
    }

    /// Write with `wl` until `count` writes or `time` are done (or a stop,
    /// or a failed write): the round's figures and why it ended early.
    fn write(
        &mut self,
        wl: &Workload,
        count: Option<u64>,
        time: Option<Nanos>,
        stop: &Stop,
    ) -> Result<(Round, Option<Ended>), IoError> {
        let n = self.requests(wl.bs).max(1);
        let depth = usize::try_from(wl.depth).unwrap_or(1).clamp(1, self.q.depth().max(1));
        let mut free: Vec<usize> = (0..depth).rev().collect();
        let mut inflight = vec![(0u32, 0u64); depth];
        let perm = wl.random.then(|| {
            let mut s = self.spec.seed;
            Permutation::new(n, splitmix64(&mut s))
        });
        let t0 = self.clock.now();
        let deadline = time.map(|t| Nanos(t0.0.saturating_add(t.0)));
        let mut round = Round {
            writes: 0,
            bytes: 0,
            time: Nanos(0),
        };
        let mut issued = 0u64;
        let mut ended = None;
        let mut last = t0;
        loop {
            let out_of_time = deadline.is_some_and(|d| self.clock.now() >= d);
            let more = ended.is_none() && !out_of_time && count.is_none_or(|c| issued < c);
            if ended.is_none() && stop.reason().is_some() {
                ended = Some(Ended::Stopped);
            }
            let mut any = false;
            while more && ended.is_none() && count.is_none_or(|c| issued < c) {
                let Some(slot) = free.pop() else { break };
                // A pass of the area in the order, pass after pass: the
                // order's position carries over from round to round.
                let k = self.made % n;
                let block = perm.as_ref().map_or(k, |p| p.at(k));
                let offset = self.spec.start + block * u64::from(wl.bs);
                let req = IoReq {
                    op: Op::Write,
                    offset,
                    len: wl.bs,
                };
                let buf = self
                    .q
                    .write_buf(slot, wl.bs as usize)
                    .ok_or(IoError { errno: 22, req })?;
                crate::engine::verify::fill(self.spec.seed ^ self.made, offset, buf);
                self.q.submit(slot, req)?;
                inflight[slot] = (wl.bs, offset);
                self.made += 1;
                issued += 1;
                any = true;
            }
            if any {
                self.q.commit()?;
            }
            if free.len() == depth {
                if !more || ended.is_some() {
                    break;
                }
                continue;
            }
            self.comps.clear();
            self.q.reap(1, &mut self.comps)?;
            last = self.clock.now();
            for c in core::mem::take(&mut self.comps) {
                let Some((len, offset)) = inflight.get(c.slot).copied() else {
                    continue;
                };
                free.push(c.slot);
                match c.result {
                    Ok(l) if l == len => {
                        round.writes += 1;
                        round.bytes += u64::from(len);
                    }
                    Ok(_) | Err(_) => {
                        if ended.is_none() {
                            // A short write is EIO, as the engine counts it.
                            ended = Some(Ended::WriteFailed {
                                offset,
                                errno: c.result.err().unwrap_or(5),
                            });
                        }
                    }
                }
            }
        }
        round.time = last.saturating_sub(t0);
        Ok((round, ended))
    }
}

/// The workload-independent fill: a whole-disk pass on the sweep engine
/// ([`crate::passes::sweep`]), the area written [`FILL_PASSES`] times in
/// order in [`FILL_BS`] requests, `depth` of the rounds' workload in
/// flight. The bytes it wrote, its time (from its start to its last
/// completion), why it ended early, and the writes it made (the rounds'
/// order goes on from there).
fn fill<Q: IoQueue, C: Clock>(
    spec: &PreconditionSpec,
    q: &mut Q,
    clock: &C,
    stop: &Stop,
) -> Result<(u64, Nanos, Option<Ended>, u64), IoError> {
    use super::sweep::{End, Engine, REFUSED_WRITE};
    let n = spec.end.saturating_sub(spec.start) / u64::from(FILL_BS);
    let mut f = Fill {
        start: spec.start,
        n: n.max(1),
        total: n * u64::from(FILL_PASSES),
        next: 0,
        filling: 0,
        seed: spec.seed,
        bytes: 0,
        errno: 5,
        failed: None,
    };
    let mut e = Engine::new(q, clock, spec.workload.depth.max(1), spec.logical_block, 0);
    let ended = match e.run(&mut f, stop, &mut |_, ()| {}) {
        Ok(End::Done) => None,
        Ok(End::Stopped) => Some(Ended::Stopped),
        Ok(End::TooManyBad) => f.failed,
        // A write the kernel refused before the disk was asked: as any
        // failed write, it ends the fill.
        Err(err) if REFUSED_WRITE.contains(&err.errno) && err.req.op == Op::Write => Some(Ended::WriteFailed {
            offset: err.req.offset,
            errno: err.errno,
        }),
        Err(err) => return Err(err),
    };
    Ok((f.bytes, e.busy_time(), ended, f.next))
}

/// The fill as a [`super::sweep::Sweep`]: each write's data is what the
/// rounds' writer would give it at its place in the order (seeded by the
/// seed and that place), so the fill and the rounds write one sequence; a
/// failed write is narrowed to its logical blocks, and the first that
/// cannot be written alone ends the fill (a request whose every block then
/// writes was a passing failure: the fill goes on).
struct Fill {
    start: u64,
    /// Requests in one pass of the area.
    n: u64,
    /// Requests in the whole fill.
    total: u64,
    /// The next request's place in the order.
    next: u64,
    /// The place of the write being filled: the request just given, or
    /// the one being narrowed.
    filling: u64,
    seed: u64,
    bytes: u64,
    /// The errno of the last failed request (EIO for a short write).
    errno: i32,
    /// The first block that could not be written.
    failed: Option<Ended>,
}

impl Fill {
    /// The place in the order of the latest request made at `offset`.
    fn place_of(&self, offset: u64) -> u64 {
        let block = (offset - self.start) / u64::from(FILL_BS);
        let last = self.next.saturating_sub(1);
        last - (last % self.n + self.n - block) % self.n
    }
}

impl super::sweep::Sweep for Fill {
    type Found = ();
    const JUDGE_EVERY_BLOCK: bool = false;
    const TIMED_NARROWING: bool = false;

    fn next(&mut self, _: &[Option<super::sweep::Inflight>]) -> Option<(IoReq, u64)> {
        (self.next < self.total).then(|| {
            let k = self.next;
            self.next += 1;
            self.filling = k;
            let req = IoReq {
                op: Op::Write,
                offset: self.start + (k % self.n) * u64::from(FILL_BS),
                len: FILL_BS,
            };
            (req, k)
        })
    }

    fn fill(&self, offset: u64, buf: &mut [u8]) {
        crate::engine::verify::fill(self.seed ^ self.filling, offset, buf);
    }

    fn submitted(&mut self, _: IoReq, _: Nanos) {}

    fn completed<Q: IoQueue>(&mut self, _: &Q, f: super::sweep::Finished) -> Result<(), IoError> {
        if f.ok {
            self.bytes += u64::from(f.req.len);
        } else {
            // A short write is EIO, as the engine counts it.
            self.errno = f.result.err().unwrap_or(5);
            self.filling = self.place_of(f.req.offset);
        }
        Ok(())
    }

    fn narrowed<Q: IoQueue>(&mut self, _: &Q, block: IoReq, ok: Option<u32>, _: Nanos) -> Result<(), IoError> {
        match ok {
            Some(_) => self.bytes += u64::from(block.len),
            None => {
                self.failed.get_or_insert(Ended::WriteFailed {
                    offset: block.offset,
                    errno: self.errno,
                });
            }
        }
        Ok(())
    }

    fn too_many_bad(&self) -> bool {
        self.failed.is_some()
    }

    fn progress(&self) -> (f64, ()) {
        #[allow(clippy::cast_precision_loss)] // a fraction
        (self.next as f64 / self.total as f64, ())
    }
}

/// The document's record of preconditioning `spec` that did `out`.
pub fn record(spec: &PreconditionSpec, out: &PreconditionOutcome) -> Precondition {
    #[allow(clippy::cast_precision_loss)] // a rate
    let rate = |b: u64, t: Nanos| (t.0 > 0).then(|| b as f64 * 1e9 / t.0 as f64);
    let figures: Vec<f64> = out.rounds.iter().map(|r| spec.figure(r)).collect();
    // The last window: of the rounds that ran whole (a stopped round is not).
    let whole = if out.ended.is_some() {
        figures.len().saturating_sub(1)
    } else {
        figures.len()
    };
    let last = (whole >= spec.window.max(2))
        .then(|| {
            check(
                &figures[whole - spec.window.max(2)..whole],
                spec.range_pct,
                spec.slope_pct,
            )
        })
        .flatten();
    let end = match (out.ended, out.steady_at) {
        (Some(Ended::Stopped), _) => PreconditionEnd::Stopped,
        (Some(Ended::WriteFailed { .. }), _) => PreconditionEnd::Error,
        (None, Some(_)) => PreconditionEnd::Steady,
        (None, None) => PreconditionEnd::RoundLimit,
    };
    Precondition {
        start_byte: spec.start,
        end_byte: spec.end,
        fill: out.fill.map(|(bytes, t)| PreconditionFill {
            bytes,
            elapsed_ns: t.0,
            bytes_per_sec: rate(bytes, t),
        }),
        bs: u64::from(spec.workload.bs),
        iodepth: spec.workload.depth,
        order: if spec.workload.random {
            BurnOrder::Random
        } else {
            BurnOrder::Sequential
        },
        figure: String::from(if spec.workload.random {
            "write_iops"
        } else {
            "write_bytes_per_sec"
        }),
        round_ns: spec.round.0,
        max_rounds: spec.max_rounds,
        window: u32::try_from(spec.window).unwrap_or(u32::MAX),
        range_pct: spec.range_pct,
        slope_pct: spec.slope_pct,
        purge: None,
        rounds: out
            .rounds
            .iter()
            .zip(&figures)
            .map(|(r, &value)| PreconditionRound {
                writes: r.writes,
                bytes: r.bytes,
                time_ns: r.time.0,
                value,
            })
            .collect(),
        steady_round: out.steady_at.and_then(|r| u32::try_from(r).ok()),
        window_mean: last.map(|w| w.mean),
        window_range: last.map(|w| w.range),
        window_fit_excursion: last.map(|w| w.fit_excursion),
        end,
        error: match out.ended {
            Some(Ended::WriteFailed { offset, errno }) => {
                Some(alloc::format!("a write at byte {offset} failed: errno {errno}"))
            }
            _ => None,
        },
    }
}

/// The record of preconditioning `spec` that made no write, and why.
pub fn not_run(spec: &PreconditionSpec, why: String) -> Precondition {
    let out = PreconditionOutcome {
        fill: None,
        rounds: Vec::new(),
        steady_at: None,
        ended: None,
    };
    let mut r = record(spec, &out);
    r.end = PreconditionEnd::Error;
    r.error = Some(why);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drive settling: IOPS fall from fresh-out-of-box figures and level
    /// off. Rounds 4-8 (34,000 first) spread 14.3% of their mean (within
    /// 20%) but their fitted line falls 3,640 over the window, 11.8% (not
    /// within 10%); rounds 5-9 spread 900 (3.0%) and their line falls 400
    /// (1.3%): steady at round 9.
    #[test]
    fn a_declining_then_level_series_is_steady_at_the_right_round() {
        let ys = [
            90_000.0, 61_000.0, 42_000.0, 34_000.0, 30_500.0, 29_800.0, 30_200.0, 29_600.0, 30_100.0, 29_900.0,
        ];
        assert_eq!(first_steady(&ys, 5, 20.0, 10.0), Some(9));
        let w = check(&ys[4..9], 20.0, 10.0).unwrap();
        assert!((w.mean - 30_040.0).abs() < 1e-6, "{w:?}");
        assert!((w.range - 900.0).abs() < 1e-6, "{w:?}");
        assert!(
            (w.slope + 100.0).abs() < 1e-6 && (w.fit_excursion - 400.0).abs() < 1e-6,
            "{w:?}"
        );
        assert!(w.steady);
        let w4 = check(&ys[3..8], 20.0, 10.0).unwrap();
        assert!(
            (w4.mean - 30_820.0).abs() < 1e-6 && (w4.range - 4_400.0).abs() < 1e-6,
            "{w4:?}"
        );
        assert!((w4.fit_excursion - 3_640.0).abs() < 1e-6, "{w4:?}");
        assert!(!w4.steady, "the slope holds it back: {w4:?}");
    }

    /// Each limit alone keeps a window from steady state: a sawtooth
    /// within 10% of its mean but spread 30% fails the range; a steady
    /// climb of 3% a round stays within 20% but its line rises 12%.
    #[test]
    fn the_range_and_the_slope_each_hold_a_window_back() {
        let saw = [100.0, 130.0, 100.0, 130.0, 100.0];
        let w = check(&saw, 20.0, 10.0).unwrap();
        assert!(
            !w.steady && w.range / w.mean > 0.2 && w.fit_excursion / w.mean < 0.1,
            "{w:?}"
        );
        let climb = [100.0, 103.0, 106.0, 109.0, 112.0];
        let w = check(&climb, 20.0, 10.0).unwrap();
        assert!(
            (w.slope - 3.0).abs() < 1e-9 && (w.fit_excursion - 12.0).abs() < 1e-9,
            "{w:?}"
        );
        assert!(!w.steady && w.range / w.mean < 0.2, "{w:?}");
        assert!(check(&climb, 20.0, 12.0).unwrap().steady, "12% allowed: steady");
        assert_eq!(check(&[1.0], 20.0, 10.0), None);
        assert_eq!(check(&[0.0, 0.0], 20.0, 10.0), None);
    }

    /// A disk in memory whose writes take longer as it fills (a fresh
    /// SSD's cliff): 1 us each until 2 MiB were written, then 4 us; the
    /// fill runs the area twice in 128 KiB writes, the rounds fall and
    /// level, and steady state is reached at the window after the cliff.
    #[test]
    fn preconditioning_fills_then_runs_rounds_to_steady_state() {
        use core::cell::Cell;
        struct Cliff<'a> {
            clock: &'a Cell<u64>,
            written: u64,
            bufs: Vec<Vec<u8>>,
            done: Vec<(Completion, u32)>,
            log: Vec<IoReq>,
        }
        impl IoQueue for Cliff<'_> {
            fn depth(&self) -> usize {
                self.bufs.len()
            }
            fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
                self.log.push(req);
                self.done.push((
                    Completion {
                        slot,
                        result: Ok(req.len),
                    },
                    req.len,
                ));
                Ok(())
            }
            fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
                for (c, len) in self.done.drain(..) {
                    let ns = if self.written < (6 << 20) { 1_000 } else { 4_000 };
                    self.clock.set(self.clock.get() + ns);
                    self.written += u64::from(len);
                    out.push(c);
                }
                Ok(())
            }
            fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
                self.bufs.get_mut(slot).map(|b| &mut b[..len])
            }
        }
        struct At<'a>(&'a Cell<u64>);
        impl Clock for At<'_> {
            fn now(&self) -> Nanos {
                Nanos(self.0.get())
            }
        }
        let t = Cell::new(0);
        let mut q = Cliff {
            clock: &t,
            written: 0,
            bufs: vec![vec![0; 128 << 10]; 4],
            done: Vec::new(),
            log: Vec::new(),
        };
        let spec = PreconditionSpec {
            start: 0,
            end: 2 << 20,
            fill: true,
            workload: Workload {
                bs: 4096,
                depth: 4,
                random: true,
            },
            round: Nanos(400_000),
            max_rounds: 25,
            window: 5,
            range_pct: 20.0,
            slope_pct: 10.0,
            seed: 3,
            logical_block: 512,
        };
        let mut seen = Vec::new();
        let out = precondition(&spec, &mut q, &At(&t), &Stop::new(), &mut |i, f| seen.push((i, f))).unwrap();
        let (bytes, _) = out.fill.expect("filled");
        assert_eq!(bytes, 4 << 20, "the area twice");
        assert!(
            q.log[..32].iter().all(|r| r.len == 128 << 10),
            "the fill: 128 KiB writes"
        );
        assert_eq!(
            q.log[..16].iter().map(|r| r.offset).collect::<Vec<_>>(),
            (0..16).map(|k| k << 17).collect::<Vec<_>>()
        );
        // 4 MiB filled at 1 us a write (32 writes), then 2 MiB more of
        // rounds at 1 us, then 4 us: the rounds fall to a quarter and level.
        let figures: Vec<f64> = out.rounds.iter().map(|r| spec.figure(r)).collect();
        assert!(figures[0] > 3.0 * figures[figures.len() - 1], "{figures:?}");
        let at = out.steady_at.expect("steady");
        assert_eq!(Some(at), first_steady(&figures, 5, 20.0, 10.0), "{figures:?}");
        assert!(
            !check(&figures[at - 6..at - 1], 20.0, 10.0).unwrap().steady,
            "one round earlier is not"
        );
        assert_eq!(out.rounds.len(), at, "no round after steady state");
        assert_eq!(seen.len(), at);
        assert_eq!(out.ended, None);
        let r = record(&spec, &out);
        assert_eq!(
            (r.end, r.steady_round),
            (PreconditionEnd::Steady, u32::try_from(at).ok())
        );
        assert_eq!((r.figure.as_str(), r.rounds.len()), ("write_iops", at));
        assert!(r.window_range.unwrap() <= 0.2 * r.window_mean.unwrap(), "{r:?}");
        assert_eq!(r.fill.map(|f| f.bytes), Some(4 << 20));
    }

    /// Without steady state, the round limit ends it; a stop ends it at
    /// once, saying so.
    #[test]
    fn the_round_limit_and_a_stop_end_it() {
        let mut data = vec![0u8; 1 << 20];
        let mut q = crate::io::MemQueue::new(&mut data, 4);
        let t = core::cell::Cell::new(0u64);
        /// Each read of the clock 1 us later.
        struct Tick<'a>(&'a core::cell::Cell<u64>);
        impl Clock for Tick<'_> {
            fn now(&self) -> Nanos {
                self.0.set(self.0.get() + 1000);
                Nanos(self.0.get())
            }
        }
        let spec = PreconditionSpec {
            start: 0,
            end: 1 << 20,
            fill: false,
            workload: Workload {
                bs: 4096,
                depth: 4,
                random: false,
            },
            round: Nanos(30_000),
            max_rounds: 7,
            window: 5,
            // A limit no window meets.
            range_pct: -1.0,
            slope_pct: -1.0,
            seed: 1,
            logical_block: 512,
        };
        let out = precondition(&spec, &mut q, &Tick(&t), &Stop::new(), &mut |_, _| {}).unwrap();
        assert_eq!((out.rounds.len(), out.steady_at, out.ended), (7, None, None));
        let r = record(&spec, &out);
        assert_eq!(
            (r.end, r.figure.as_str()),
            (PreconditionEnd::RoundLimit, "write_bytes_per_sec")
        );
        assert!(r.window_mean.is_some(), "the last window's figures");
        let stop = Stop::new();
        stop.request(crate::engine::runner::StopReason::Interrupted);
        let out = precondition(&spec, &mut q, &Tick(&t), &stop, &mut |_, _| {}).unwrap();
        assert_eq!(out.ended, Some(Ended::Stopped));
        assert_eq!(out.rounds.len(), 1);
        assert_eq!(record(&spec, &out).end, PreconditionEnd::Stopped);
        // A round as long as a duration can be (a config's "4000000h"
        // and beyond) has its deadline at the end of time, not wrapped.
        let long = PreconditionSpec {
            round: Nanos(u64::MAX),
            ..spec.clone()
        };
        let out = precondition(&long, &mut q, &Tick(&t), &stop, &mut |_, _| {}).unwrap();
        assert_eq!(out.ended, Some(Ended::Stopped));
    }

    /// A disk of 512-byte blocks whose writes complete in order, failing
    /// (with `errno`) those that cover a block of `bad`, or of `once` the
    /// first time; it keeps every write with its data.
    struct Blocks {
        bad: Vec<u64>,
        once: Vec<u64>,
        errno: i32,
        bufs: Vec<Vec<u8>>,
        done: Vec<Completion>,
        writes: Vec<(IoReq, Vec<u8>)>,
    }
    impl Blocks {
        fn new(bad: &[u64], once: &[u64], errno: i32) -> Self {
            Blocks {
                bad: bad.to_vec(),
                once: once.to_vec(),
                errno,
                bufs: vec![Vec::new(); 4],
                done: Vec::new(),
                writes: Vec::new(),
            }
        }
    }
    impl IoQueue for Blocks {
        fn depth(&self) -> usize {
            4
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            let blocks = req.offset / 512..(req.offset + u64::from(req.len)) / 512;
            let failing = self.bad.iter().any(|b| blocks.contains(b));
            let passing = self.once.iter().position(|b| blocks.contains(b));
            if let Some(i) = passing {
                self.once.remove(i);
            }
            let result = if failing || passing.is_some() {
                Err(self.errno)
            } else {
                self.writes.push((req, self.bufs[slot][..req.len as usize].to_vec()));
                Ok(req.len)
            };
            self.done.push(Completion { slot, result });
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            out.append(&mut self.done);
            Ok(())
        }
        fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
            let b = self.bufs.get_mut(slot)?;
            b.resize(len.max(b.len()), 0);
            Some(&mut b[..len])
        }
    }

    /// The fill of 1 MiB (8 writes a pass) then rounds of 64 KiB
    /// sequential writes.
    fn fill_spec() -> PreconditionSpec {
        PreconditionSpec {
            start: 1 << 20,
            end: 2 << 20,
            fill: true,
            workload: Workload {
                bs: 64 << 10,
                depth: 4,
                random: false,
            },
            round: Nanos(20_000),
            max_rounds: 1,
            window: 5,
            range_pct: 20.0,
            slope_pct: 10.0,
            seed: 9,
            logical_block: 512,
        }
    }

    /// [`fill_spec`] on `q`: what it did.
    fn fill_of(q: &mut Blocks) -> PreconditionOutcome {
        let t = core::cell::Cell::new(0u64);
        struct Tick<'a>(&'a core::cell::Cell<u64>);
        impl Clock for Tick<'_> {
            fn now(&self) -> Nanos {
                self.0.set(self.0.get() + 1000);
                Nanos(self.0.get())
            }
        }
        precondition(&fill_spec(), q, &Tick(&t), &Stop::new(), &mut |_, _| {}).unwrap()
    }

    /// The fill writes the area twice in order, each write's data seeded
    /// by its place in the order, and the rounds' order and data go on
    /// from there: one sequence of writes.
    #[test]
    fn the_fill_and_the_rounds_write_one_sequence() {
        let mut q = Blocks::new(&[], &[], 5);
        let out = fill_of(&mut q);
        assert_eq!(out.fill.map(|f| f.0), Some(2 << 20));
        assert_eq!(out.ended, None);
        assert!(!out.rounds.is_empty());
        for (k, (req, data)) in q.writes.iter().enumerate() {
            let k = k as u64;
            let (offset, len) = if k < 16 {
                ((1 << 20) + (k % 8) * (128 << 10), 128 << 10)
            } else {
                ((1 << 20) + ((k - 16) % 16) * (64 << 10), 64 << 10)
            };
            assert_eq!((req.op, req.offset, req.len), (Op::Write, offset, len), "write {k}");
            let mut want = vec![0u8; len as usize];
            crate::engine::verify::fill(9 ^ k, offset, &mut want);
            assert!(*data == want, "write {k}: its data");
        }
    }

    /// A fill write that fails is narrowed to its blocks: the first that
    /// cannot be written alone ends preconditioning there, with the
    /// write's errno, before any round; what was written is counted.
    #[test]
    fn a_failed_fill_write_ends_it_at_its_first_bad_block() {
        // Block 2,829 is 13 blocks into the fill's fourth write (1 MiB +
        // 384 KiB is block 2,816).
        let mut q = Blocks::new(&[2_829, 2_838], &[], 61);
        let out = fill_of(&mut q);
        assert_eq!(
            out.ended,
            Some(Ended::WriteFailed {
                offset: 2_829 * 512,
                errno: 61
            })
        );
        assert!(out.rounds.is_empty());
        // The three writes before it (in flight with it: nothing more goes
        // while a failed write waits for its narrowing) and the fourth's
        // first 13 blocks.
        assert_eq!(out.fill.map(|f| f.0), Some(3 * (128 << 10) + 13 * 512));
        let narrowed: Vec<u64> = q
            .writes
            .iter()
            .filter(|(r, _)| r.len == 512)
            .map(|(r, _)| r.offset / 512)
            .collect();
        assert_eq!(
            narrowed,
            (2_816..2_829).collect::<Vec<_>>(),
            "narrowed up to the bad block"
        );
        // A narrowed block holds what the whole write would have put there.
        let (req, data) = &q.writes[3];
        let mut want = vec![0u8; 512];
        crate::engine::verify::fill(9 ^ 3, req.offset, &mut want);
        assert_eq!(*data, want);
        let r = record(&fill_spec(), &out);
        assert_eq!(r.end, PreconditionEnd::Error);
    }

    /// A write that fails once but whose every block then writes alone was
    /// a passing failure: the fill goes on to the end and the rounds run.
    /// A write the kernel refuses (EPERM) ends it at that write.
    #[test]
    fn a_passing_failure_goes_on_and_a_refused_write_ends_it() {
        let mut q = Blocks::new(&[], &[2_829], 5);
        let out = fill_of(&mut q);
        assert_eq!(out.ended, None);
        assert_eq!(out.fill.map(|f| f.0), Some(2 << 20));
        assert!(!out.rounds.is_empty());
        let mut q = Blocks::new(&[2_829], &[], 1);
        let out = fill_of(&mut q);
        assert_eq!(
            out.ended,
            Some(Ended::WriteFailed {
                offset: (1 << 20) + 3 * (128 << 10),
                errno: 1
            })
        );
    }
}
