//! The whole-disk passes' plans (docs/burn-in-and-scans.md): the surface
//! scan, the burn-in and preconditioning each go over an area of every
//! disk they select, in requests of one size with some in flight, bounded
//! in time, every disk at once or one after another. That shared part is
//! one [`PassPlan`], checked by one planner in three steps (the disks:
//! [`pass_disks`]; the sizes and the time: [`PassSizes::check`]; the area
//! on each disk: [`check_areas`]); each pass adds its own to it
//! ([`ScanPlan`], [`BurnPlan`], [`PreconditionPlan`]) from the config as
//! written ([`super::pass_raw`]). One runner runs all three
//! (`run::pass`).

use bench_core::result::{BurnOrder, TargetInfo};
use bench_core::units::Nanos;

use super::model::{selects, Plan, PlannedTarget};
use super::pass_raw::{Percent, RawBurnIn, RawPrecondition, RawSurfaceScan};
use super::raw::{err, ConfigError};
use super::value::{Duration, Flag, Obj, Size, Whole};
use crate::safety::Destructive;

/// The largest request of a pass: 64 MiB.
pub const MAX_SCAN_BS: u64 = 64 << 20;

/// What every whole-disk pass's plan holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassPlan {
    /// The disks it goes over (target indices), in the plan's order.
    pub targets: Vec<usize>,
    /// The area's first byte.
    pub offset: u64,
    /// The area's length; `None`: to each disk's end.
    pub length: Option<u64>,
    /// The size of each request.
    pub bs: u32,
    /// Requests in flight.
    pub iodepth: u32,
    /// The longest a disk's pass may take; `None`: from its bytes
    /// ([`time_for`]; preconditioning: from its rounds).
    pub max_time: Option<Nanos>,
    /// Every disk at once.
    pub parallel: bool,
}

impl PassPlan {
    /// The area of a disk of `size` bytes: `[start, end)`, or why it has none.
    pub fn area(&self, size: u64) -> Result<(u64, u64), String> {
        area(self.offset, self.length, size)
    }

    /// The area in words; `whole` when it is every block.
    fn area_words(&self, whole: &str) -> String {
        match self.length {
            Some(l) => format!("{l} B from byte {}", self.offset),
            None if self.offset == 0 => whole.to_string(),
            None => format!("from byte {} to the end", self.offset),
        }
    }

    /// Its disks in words, each with why it will not be written if its
    /// grant was refused.
    fn disks_words(&self, plan: &Plan) -> String {
        self.targets
            .iter()
            .map(|&ti| {
                let i = &plan.targets[ti].info;
                match &i.write_refusal {
                    Some(why) => format!("{} (not run: {why})", i.path),
                    None => i.path.clone(),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// How the disks go, and the time of each, in words.
    fn how_words(&self) -> String {
        format!(
            "{}{}",
            if self.parallel {
                "all at once"
            } else {
                "one after another"
            },
            self.max_time
                .map_or(String::new(), |t| format!(", at most {} s each", t.0 / 1_000_000_000))
        )
    }
}

/// The config's `surface_scan`, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanPlan {
    /// The disks, area, reads and time.
    pub pass: PassPlan,
    /// The serials the config named; `None`: every disk of the plan.
    pub disks: Option<Vec<String>>,
    /// The fraction read, parts per million.
    pub coverage_ppm: u32,
    /// Re-reads of a failing block.
    pub retries: u32,
    /// Unreadable blocks after which a disk's scan stops.
    pub max_bad: u64,
    /// Zones of the throughput curve.
    pub zones: u32,
    /// Slowest reads recorded.
    pub slowest: usize,
}

impl ScanPlan {
    /// The size of each read when the config gives none.
    pub const DEFAULT_BS: u32 = 1 << 20;
    /// Reads in flight when the config gives none.
    pub const DEFAULT_IODEPTH: u32 = 4;
    /// Re-reads of a failing block when the config gives none.
    pub const DEFAULT_RETRIES: u32 = 2;
    /// Unreadable blocks after which a scan stops, when the config gives none.
    pub const DEFAULT_MAX_BAD: u64 = 1000;
    /// Zones when the config gives none.
    pub const DEFAULT_ZONES: u32 = 100;
    /// Slowest reads recorded when the config gives none.
    pub const DEFAULT_SLOWEST: usize = 20;
    /// The rate a pass's time allowance assumes when the config gives no
    /// `max_time`: 10 MB/s, below any working disk's slowest zone.
    pub const FLOOR_RATE: u64 = 10_000_000;

    /// The longest a scan of `bytes` may take: the config's `max_time`, or
    /// the bytes at [`ScanPlan::FLOOR_RATE`] and a minute.
    pub fn time_for(&self, bytes: u64) -> Nanos {
        time_for(self.pass.max_time, bytes)
    }

    /// The plan's surface scan in words.
    pub fn line(&self) -> String {
        let p = &self.pass;
        format!(
            "surface scan: {}, {}, {:.4}% of the reads, {} B reads, {} in flight, {} retries, stops past {} unreadable blocks, {}",
            self.disks
                .as_ref()
                .map_or("every disk".to_string(), |d| format!("disks {}", d.join(", "))),
            p.area_words("whole"),
            f64::from(self.coverage_ppm) / 1e4,
            p.bs,
            p.iodepth,
            self.retries,
            self.max_bad,
            p.how_words()
        )
    }
}

/// The area from `offset`, `length` long (`None`: to the end), of a disk
/// of `size` bytes: `[start, end)`, or why it has none.
pub(super) fn area(offset: u64, length: Option<u64>, size: u64) -> Result<(u64, u64), String> {
    let end = match length {
        Some(l) => offset.saturating_add(l),
        None => size,
    };
    if offset >= size || end > size {
        return Err(format!(
            "the area {offset}..{end} is not within the disk's {size} bytes"
        ));
    }
    Ok((offset, end))
}

/// The longest a pass over `bytes` may take: `max_time`, or the bytes at
/// [`ScanPlan::FLOOR_RATE`] and a minute.
fn time_for(max_time: Option<Nanos>, bytes: u64) -> Nanos {
    max_time.unwrap_or_else(|| {
        let secs = bytes / ScanPlan::FLOOR_RATE + 60;
        Nanos(secs.saturating_mul(1_000_000_000))
    })
}

/// The config's `precondition`, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct PreconditionPlan {
    /// The disks (each `destructive` names), the area, the rounds' writes
    /// (`bs`, `iodepth`); no `max_time` (the time is the rounds').
    pub pass: PassPlan,
    /// The workload-independent fill first.
    pub fill: bool,
    /// The rounds' writes are random (else sequential).
    pub random: bool,
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
    /// The purge before it (`purge`): `None` none, `Some(None)` `auto`
    /// (the fastest the disk supports), else that method.
    pub purge: Option<Option<bench_core::result::EraseMethod>>,
}

/// The longest a purge is given, when asked (`precondition.purge`): a
/// sanitize or format of a large drive can take hours.
pub const PURGE_TIME: Nanos = Nanos(4 * 3600 * 1_000_000_000);

impl PreconditionPlan {
    /// A round's time when the config gives none: the PTS's minute.
    pub const DEFAULT_ROUND: Nanos = Nanos(60_000_000_000);
    /// The size of each write of the rounds when the config gives none.
    pub const DEFAULT_BS: u32 = 4096;
    /// Writes in flight when the config gives none.
    pub const DEFAULT_IODEPTH: u32 = 32;

    /// The rounds' workload.
    pub fn workload(&self) -> bench_core::steady::Workload {
        bench_core::steady::Workload {
            bs: self.pass.bs,
            depth: self.pass.iodepth,
            random: self.random,
        }
    }

    /// The longest a disk's preconditioning may take: the fill (the area
    /// twice at [`ScanPlan::FLOOR_RATE`]) and every round with a tenth
    /// more for its requests in flight, and a minute.
    pub fn time_for(&self, area: u64) -> Nanos {
        let purge = if self.purge.is_some() { PURGE_TIME.0 } else { 0 };
        Nanos(self.time_without_purge(area).0.saturating_add(purge))
    }

    /// [`Self::time_for`] less the purge's time.
    fn time_without_purge(&self, area: u64) -> Nanos {
        let fill = if self.fill {
            time_for(None, area.saturating_mul(2)).0
        } else {
            60_000_000_000
        };
        let rounds = self
            .round
            .0
            .saturating_add(self.round.0 / 10)
            .saturating_mul(u64::from(self.max_rounds));
        Nanos(fill.saturating_add(rounds))
    }

    /// The plan's preconditioning in words: which disks (each written
    /// whole), the fill, the rounds and the steady-state rule.
    pub fn line(&self, plan: &Plan) -> String {
        let p = &self.pass;
        format!(
            "preconditioning (WRITES, destroys the data of): {}; {}; {}{} B {} writes, {} in flight, in rounds of {} s \
             until the last {} are steady (range within {}%, fitted slope within {}% of their mean), at most {} rounds, {}",
            p.disks_words(plan),
            p.area_words("every block"),
            if self.fill {
                "the area written twice in 128 KiB writes, then "
            } else {
                ""
            },
            p.bs,
            if self.random { "random" } else { "sequential" },
            p.iodepth,
            self.round.0 as f64 / 1e9,
            self.window,
            self.range_pct,
            self.slope_pct,
            self.max_rounds,
            if p.parallel { "all at once" } else { "one after another" },
        )
    }
}

/// The config's `burn_in`, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BurnPlan {
    /// The disks (those of `burn_in.disks`, or every disk `destructive`
    /// names; each named there), the area, the requests and the time.
    pub pass: PassPlan,
    /// Sequential passes of patterns, or random ones.
    pub order: BurnOrder,
    /// Sequential: the patterns, in order.
    pub patterns: Vec<bench_core::burnin::Pattern>,
    /// How many times the patterns run (random: passes).
    pub loops: u32,
    /// Retries of a failing block.
    pub retries: u32,
    /// Bad blocks after which a disk's burn-in stops.
    pub max_bad: u64,
}

impl BurnPlan {
    /// Request size and depth of sequential passes when the config gives
    /// none (the surface scan's, measured there).
    pub const SEQUENTIAL_BS: u32 = 1 << 20;
    /// Requests in flight of sequential passes when the config gives none.
    pub const SEQUENTIAL_IODEPTH: u32 = 4;
    /// Random passes: Ironic's fio burn-in, 4 KiB at queue depth 32, 4 loops.
    pub const RANDOM_BS: u32 = 4096;
    /// Requests in flight of random passes when the config gives none.
    pub const RANDOM_IODEPTH: u32 = 32;
    /// Random passes when the config gives none.
    pub const RANDOM_LOOPS: u32 = 4;
    /// Retries of a failing block when the config gives none.
    pub const DEFAULT_RETRIES: u32 = 2;
    /// Bad blocks after which a burn-in stops, when the config gives none.
    pub const DEFAULT_MAX_BAD: u64 = 1000;

    /// The longest a burn-in of `bytes` (written and read, every pass)
    /// may take: the config's `max_time`, or the bytes at
    /// [`ScanPlan::FLOOR_RATE`] and a minute.
    pub fn time_for(&self, bytes: u64) -> Nanos {
        time_for(self.pass.max_time, bytes)
    }

    /// The plan's burn-in in words: which disks (each written whole), the
    /// passes, and how.
    pub fn line(&self, plan: &Plan) -> String {
        let p = &self.pass;
        let passes = match self.order {
            BurnOrder::Sequential => format!(
                "sequential passes of {}{}",
                self.patterns.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
                if self.loops > 1 {
                    format!(", {} times", self.loops)
                } else {
                    String::new()
                }
            ),
            BurnOrder::Random => format!("{} random-order passes of random data", self.loops),
        };
        format!(
            "burn-in (WRITES, destroys the data of): {}; {}; {passes}, each read back and checked; {} B requests, {} in flight, {} retries, stops past {} bad blocks, {}",
            p.disks_words(plan),
            p.area_words("every block"),
            p.bs,
            p.iodepth,
            self.retries,
            self.max_bad,
            p.how_words()
        )
    }
}

/// Whether a pass writes, and then the grant it needs.
#[derive(Clone, Copy, Debug)]
pub enum Writes<'a> {
    /// It only reads (the surface scan): any disk of the run.
    No,
    /// It writes every block (`why`, for the error of a config without
    /// `destructive`): only disks `destructive` names.
    Yes {
        /// The config's `destructive`.
        destructive: Option<&'a Destructive>,
        /// Why it needs one: "a burn-in writes every block of a disk".
        why: &'static str,
    },
}

/// Step one of a pass's plan: the disks of section `field`. A pass that
/// only reads goes over every disk of the run (not a simulated one, an
/// array or layer, or one absent), or those of `list` (serials); one that
/// writes over every disk `destructive` names, or those of `list`, each
/// of which it must name.
pub fn pass_disks(
    field: &str,
    list: Option<&[String]>,
    targets: &[PlannedTarget],
    writes: Writes<'_>,
) -> Result<Vec<usize>, ConfigError> {
    match writes {
        Writes::No => {
            if let Some(d) = list {
                check_disks(&format!("{field}.disks"), d, targets)?;
            }
            Ok((0..targets.len())
                .filter(|&ti| {
                    let t = &targets[ti];
                    t.missing.is_none()
                        && t.info.stack.is_none()
                        && t.sim.is_none()
                        && selects(list, t.info.serial.as_deref())
                })
                .collect())
        }
        Writes::Yes { destructive, why } => {
            let Some(d) = destructive else {
                return err(no_destructive(field, why));
            };
            granted_disks(field, list, targets, d)
        }
    }
}

/// The keys every pass's section has, as written.
#[derive(Clone, Copy, Debug)]
pub struct PassSizes<'a> {
    /// The section: `"burn_in"`.
    pub field: &'static str,
    /// What one request is, in its error: `"read"`, `"request"`, `"write"`.
    pub what: &'static str,
    /// `offset`.
    pub offset: Option<&'a Size>,
    /// `length`.
    pub length: Option<&'a Size>,
    /// `bs`.
    pub bs: Option<&'a Size>,
    /// `max_time`, and an example for its error.
    pub max_time: (Option<&'a Duration>, &'static str),
    /// `parallel`.
    pub parallel: Option<Flag>,
}

impl PassSizes<'_> {
    /// Step two of a pass's plan: the request size (`default_bs` when the
    /// config gives none), the length and the time checked; the plan of
    /// `targets` with `iodepth` requests in flight.
    pub fn check(&self, targets: Vec<usize>, default_bs: u32, iodepth: u32) -> Result<PassPlan, ConfigError> {
        let bs = request_size(self.field, self.what, self.bs, default_bs)?;
        check_length(self.field, self.length)?;
        let (t, example) = self.max_time;
        Ok(PassPlan {
            targets,
            offset: self.offset.map_or(0, |s| s.bytes),
            length: self.length.map(|s| s.bytes),
            bs,
            iodepth,
            max_time: max_time(self.field, t, example)?,
            parallel: self.parallel.is_none_or(|f| f.0),
        })
    }
}

/// Step three of a pass's plan: its area and requests whole logical blocks
/// of each of `disks` and within it (`field` in the error); each disk's
/// area.
pub fn check_areas<'a>(
    field: &str,
    p: &PassPlan,
    disks: impl Iterator<Item = &'a TargetInfo>,
) -> Result<Vec<(u64, u64)>, ConfigError> {
    disks.map(|i| check_area(field, p.bs, p.offset, p.length, i)).collect()
}

/// The config's `surface_scan` checked against the plan's targets: sizes
/// and the area in whole logical blocks of every disk it selects.
pub fn scan_plan(
    raw: Option<&Obj<RawSurfaceScan>>,
    targets: &[PlannedTarget],
) -> Result<Option<ScanPlan>, ConfigError> {
    let Some(Obj(o)) = raw else { return Ok(None) };
    let disks = pass_disks("surface_scan", o.disks.as_deref(), targets, Writes::No)?;
    let sizes = PassSizes {
        field: "surface_scan",
        what: "read",
        offset: o.offset.as_ref(),
        length: o.length.as_ref(),
        bs: o.bs.as_ref(),
        max_time: (o.max_time.as_ref(), "24h"),
        parallel: o.parallel,
    };
    let iodepth = o.iodepth.as_ref().map_or(ScanPlan::DEFAULT_IODEPTH, Whole::get32);
    let pass = sizes.check(disks, ScanPlan::DEFAULT_BS, iodepth)?;
    // Every disk it selects, simulated ones too, of a size known.
    check_areas(
        "surface_scan",
        &pass,
        targets
            .iter()
            .filter(|t| {
                t.missing.is_none() && t.info.stack.is_none() && selects(o.disks.as_deref(), t.info.serial.as_deref())
            })
            .map(|t| &t.info)
            .filter(|i| i.size_bytes != 0),
    )?;
    Ok(Some(ScanPlan {
        pass,
        disks: o.disks.clone(),
        coverage_ppm: o.coverage.map_or(bench_core::scan::WHOLE, |c| c.0),
        retries: o.retries.as_ref().map_or(ScanPlan::DEFAULT_RETRIES, Whole::get32),
        max_bad: o.max_bad.as_ref().map_or(ScanPlan::DEFAULT_MAX_BAD, |w| w.n),
        zones: o.zones.as_ref().map_or(ScanPlan::DEFAULT_ZONES, Whole::get32),
        slowest: o
            .slowest
            .as_ref()
            .map_or(ScanPlan::DEFAULT_SLOWEST, |w| usize::try_from(w.n).unwrap_or(0)),
    }))
}

/// The config's `burn_in` checked against the plan's targets and its
/// `destructive` section: every disk it selects must be one `destructive`
/// names (a burn-in writes every block), and its sizes and area whole
/// logical blocks of that disk. Whether each disk may be written now (the
/// phrase, its contents) is the grant's to say: a disk it refuses gets a
/// burn-in record saying why, and nothing is written.
pub fn burn_plan(
    raw: Option<&Obj<RawBurnIn>>,
    targets: &[PlannedTarget],
    destructive: Option<&Destructive>,
) -> Result<Option<BurnPlan>, ConfigError> {
    let Some(Obj(o)) = raw else { return Ok(None) };
    let why = "a burn-in writes every block of a disk";
    let disks = pass_disks("burn_in", o.disks.as_deref(), targets, Writes::Yes { destructive, why })?;
    let order = o.mode.unwrap_or(BurnOrder::Sequential);
    let random = order == BurnOrder::Random;
    let patterns = match (&o.patterns, random) {
        (Some(_), true) => {
            return err(
                "burn_in.patterns: the random mode writes random data; expected no \"patterns\" with \"mode\": \"random\"",
            )
        }
        (Some(p), false) if p.is_empty() => {
            return err("burn_in.patterns: [] names no pattern; expected patterns such as [\"0xaa\", \"random\"], or none for badblocks' four")
        }
        (Some(p), false) => p.iter().map(|r| r.0).collect(),
        (None, _) => bench_core::burnin::BADBLOCKS_PATTERNS.to_vec(),
    };
    let (bs, iodepth) = if random {
        (BurnPlan::RANDOM_BS, BurnPlan::RANDOM_IODEPTH)
    } else {
        (BurnPlan::SEQUENTIAL_BS, BurnPlan::SEQUENTIAL_IODEPTH)
    };
    let sizes = PassSizes {
        field: "burn_in",
        what: "request",
        offset: o.offset.as_ref(),
        length: o.length.as_ref(),
        bs: o.bs.as_ref(),
        max_time: (o.max_time.as_ref(), "48h"),
        parallel: o.parallel,
    };
    let pass = sizes.check(disks, bs, o.iodepth.as_ref().map_or(iodepth, Whole::get32))?;
    check_areas("burn_in", &pass, pass.targets.iter().map(|&ti| &targets[ti].info))?;
    Ok(Some(BurnPlan {
        pass,
        order,
        patterns,
        loops: o
            .loops
            .as_ref()
            .map_or(if random { BurnPlan::RANDOM_LOOPS } else { 1 }, Whole::get32),
        retries: o.retries.as_ref().map_or(BurnPlan::DEFAULT_RETRIES, Whole::get32),
        max_bad: o.max_bad.as_ref().map_or(BurnPlan::DEFAULT_MAX_BAD, |w| w.n),
    }))
}

/// The config's `precondition` checked against the plan's targets and
/// its `destructive` section, as `burn_in` is ([`burn_plan`]).
pub fn precondition_plan(
    raw: Option<&Obj<RawPrecondition>>,
    targets: &[PlannedTarget],
    destructive: Option<&Destructive>,
) -> Result<Option<PreconditionPlan>, ConfigError> {
    let Some(Obj(o)) = raw else { return Ok(None) };
    let why = "preconditioning writes every block of a disk";
    let disks = pass_disks(
        "precondition",
        o.disks.as_deref(),
        targets,
        Writes::Yes { destructive, why },
    )?;
    let sizes = PassSizes {
        field: "precondition",
        what: "write",
        offset: o.offset.as_ref(),
        length: o.length.as_ref(),
        bs: o.bs.as_ref(),
        max_time: (None, ""),
        parallel: o.parallel,
    };
    let iodepth = o
        .iodepth
        .as_ref()
        .map_or(PreconditionPlan::DEFAULT_IODEPTH, Whole::get32);
    let pass = sizes.check(disks, PreconditionPlan::DEFAULT_BS, iodepth)?;
    let round = match &o.round {
        None => PreconditionPlan::DEFAULT_ROUND,
        Some(v) if v.ns.0 > 0 => v.ns,
        Some(v) => {
            return err(format!(
                "precondition.round: {v} is zero; expected a duration such as \"1m\""
            ))
        }
    };
    let window = o
        .window
        .as_ref()
        .map_or(bench_core::steady::PTS_WINDOW, |w| usize::try_from(w.n).unwrap_or(5));
    let max_rounds = o
        .max_rounds
        .as_ref()
        .map_or(bench_core::steady::PTS_MAX_ROUNDS, Whole::get32);
    if usize::try_from(max_rounds).unwrap_or(usize::MAX) < window {
        return err(format!(
            "precondition.max_rounds: {max_rounds} is fewer than the window's {window} rounds; expected at least {window}"
        ));
    }
    let least = u64::from(bench_core::steady::FILL_BS.max(pass.bs));
    for &ti in &pass.targets {
        let i = &targets[ti].info;
        let (start, end) = check_area("precondition", pass.bs, pass.offset, pass.length, i)?;
        if end - start < least {
            return err(format!(
                "precondition.offset/length: on {}: the area is {} bytes; expected at least {least} (a write of the fill)",
                i.path,
                end - start
            ));
        }
    }
    #[allow(clippy::cast_precision_loss)] // 1..=100
    let pct = |w: &Option<Whole<Percent>>, d: f64| w.as_ref().map_or(d, |w| w.n as f64);
    Ok(Some(PreconditionPlan {
        pass,
        fill: o.fill.is_none_or(|f| f.0),
        random: o.order.unwrap_or(BurnOrder::Random) == BurnOrder::Random,
        round,
        max_rounds,
        window,
        range_pct: pct(&o.range_pct, bench_core::steady::PTS_RANGE_PCT),
        slope_pct: pct(&o.slope_pct, bench_core::steady::PTS_SLOPE_PCT),
        purge: o.purge.map(|p| p.0).unwrap_or(None),
    }))
}

/// Check each serial of `field` (a list of disks) against the targets'.
pub fn check_disks(field: &str, d: &[String], targets: &[PlannedTarget]) -> Result<(), ConfigError> {
    if d.is_empty() {
        return err(format!(
            "{field}: [] names no disk; expected the serials of the disks, or no \"disks\" for every disk"
        ));
    }
    let serials: Vec<&str> = targets.iter().filter_map(|t| t.info.serial.as_deref()).collect();
    for (i, s) in d.iter().enumerate() {
        if s.trim().is_empty() {
            return err(format!(
                "{field}[{i}]: {s:?} is not a serial; expected a disk's serial number"
            ));
        }
        if d[..i].contains(s) {
            return err(format!("{field}[{i}]: {s:?} is named twice; expected each serial once"));
        }
        if !serials.contains(&s.as_str()) {
            return err(format!(
                "{field}[{i}]: {s:?} is not the serial of a target of this run; expected one of: {}",
                if serials.is_empty() {
                    "(no target has a serial)".to_string()
                } else {
                    serials.join(", ")
                }
            ));
        }
    }
    Ok(())
}

/// The error of a section that writes in a config without `destructive`.
fn no_destructive(field: &str, why: &str) -> String {
    format!(
        "{field}: the config has no \"destructive\" section; {why}: \
         expected \"destructive\" naming the disks (by serial or WWN) with the confirmation phrase"
    )
}

/// The disks a section that writes (`field`) works on: those of `list`
/// (serials), each of which `d` must name, or every disk `d` names; at
/// least one.
fn granted_disks(
    field: &str,
    list: Option<&[String]>,
    targets: &[PlannedTarget],
    d: &Destructive,
) -> Result<Vec<usize>, ConfigError> {
    let named = |t: &PlannedTarget| t.id.as_ref().is_some_and(|id| d.resolved.contains(&Some(id.node)));
    let disk = |t: &PlannedTarget| t.missing.is_none() && t.info.stack.is_none() && t.sim.is_none();
    let chosen: Vec<usize> = match list {
        Some(list) => {
            check_disks(&format!("{field}.disks"), list, targets)?;
            let mut v = Vec::new();
            for (i, s) in list.iter().enumerate() {
                let Some(ti) = targets
                    .iter()
                    .position(|t| disk(t) && t.info.serial.as_deref() == Some(s.as_str()))
                else {
                    continue;
                };
                if !named(&targets[ti]) {
                    return err(format!(
                        "{field}.disks[{i}]: {s:?} ({}) is not named in \"destructive\"; {field} writes every block: \
                         expected only disks that \"destructive\" names",
                        targets[ti].info.path
                    ));
                }
                v.push(ti);
            }
            v
        }
        None => (0..targets.len())
            .filter(|&ti| disk(&targets[ti]) && named(&targets[ti]))
            .collect(),
    };
    if chosen.is_empty() {
        return err(format!(
            "{field}: no disk of this run is named in \"destructive\"; expected \"destructive\" to name the disks to write"
        ));
    }
    Ok(chosen)
}

/// `field.bs` (a `what` size: read, request, write) checked: a multiple of
/// 512 bytes from 512 to [`MAX_SCAN_BS`]; `default` when absent.
fn request_size(field: &str, what: &str, bs: Option<&Size>, default: u32) -> Result<u32, ConfigError> {
    match bs {
        None => Ok(default),
        Some(s) if s.bytes == 0 || s.bytes % 512 != 0 || s.bytes > MAX_SCAN_BS => err(format!(
            "{field}.bs: {} is not a {what} size; expected a multiple of 512 bytes from 512 to 64M",
            s.written
        )),
        Some(s) => Ok(u32::try_from(s.bytes).unwrap_or(default)),
    }
}

/// `field.length`, when given, is not zero.
fn check_length(field: &str, length: Option<&Size>) -> Result<(), ConfigError> {
    match length.filter(|l| l.bytes == 0) {
        Some(l) => err(format!(
            "{field}.length: {} is zero; expected a length such as \"10G\", or no length for the rest of each disk",
            l.written
        )),
        None => Ok(()),
    }
}

/// `field.max_time`, when given, above zero (`example` in the message).
fn max_time(field: &str, v: Option<&Duration>, example: &str) -> Result<Option<Nanos>, ConfigError> {
    match v {
        None => Ok(None),
        Some(v) if v.ns.0 > 0 => Ok(Some(v.ns)),
        Some(v) => err(format!(
            "{field}.max_time: {v} is zero; expected a duration such as \"{example}\""
        )),
    }
}

/// The area `offset`, `length` (to the end: `None`) and requests of `bs`
/// on disk `i`: whole logical blocks of it and within it; the area, or
/// the error naming `field`.
fn check_area(
    field: &str,
    bs: u32,
    offset: u64,
    length: Option<u64>,
    i: &TargetInfo,
) -> Result<(u64, u64), ConfigError> {
    let lb = u64::from(i.logical_block_size.max(512));
    if u64::from(bs) % lb != 0 || offset % lb != 0 || length.is_some_and(|l| l % lb != 0) {
        return err(format!(
            "{field}: bs {bs}, offset {offset} and length {} must be whole logical blocks of {} ({lb} bytes)",
            length.map_or("(to the end)".to_string(), |l| l.to_string()),
            i.path
        ));
    }
    area(offset, length, i.size_bytes).or_else(|why| err(format!("{field}.offset/length: on {}: {why}", i.path)))
}
