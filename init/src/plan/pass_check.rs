//! The one planner of the whole-disk passes: the config's sections as
//! written ([`super::pass_raw`]) checked against the plan's targets into
//! their plans ([`super::pass`]) in three shared steps (the disks:
//! [`pass_disks`]; the sizes and the time: [`PassSizes::check`]; the area
//! on each disk: [`check_areas`]) and each pass's own checks.

use bench_core::document::result::{BurnOrder, TargetInfo};
use bench_core::vocab::units::Nanos;

use super::model::{selects, PlannedTarget};
use super::pass::{area, BurnPlan, PassPlan, PreconditionPlan, ScanPlan, MAX_SCAN_BS};
use super::pass_raw::{Percent, RawBurnIn, RawPrecondition, RawSurfaceScan};
use super::raw::{err, ConfigError};
use super::value::{Duration, Flag, Obj, Size, Whole};
use crate::safety::Destructive;

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
                .filter(|&ti| reads(&targets[ti], list) && targets[ti].sim.is_none())
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

/// Whether a pass that only reads, over the disks of `list` (serials; all
/// when `None`), goes over `t`: a disk that is there, not an array or a
/// layer (the pass leaves out simulated disks as well; its area check
/// takes them in).
fn reads(t: &PlannedTarget, list: Option<&[String]>) -> bool {
    t.missing.is_none() && t.info.stack.is_none() && selects(list, t.info.serial.as_deref())
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
            .filter(|t| reads(t, o.disks.as_deref()))
            .map(|t| &t.info)
            .filter(|i| i.size_bytes != 0),
    )?;
    Ok(Some(ScanPlan {
        pass,
        disks: o.disks.clone(),
        coverage_ppm: o.coverage.map_or(bench_core::passes::scan::WHOLE, |c| c.0),
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
        (None, _) => bench_core::passes::burnin::BADBLOCKS_PATTERNS.to_vec(),
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
        zones_after: o.zones_after.unwrap_or(bench_core::document::result::ZonesAfter::Empty),
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
    let window = o.window.as_ref().map_or(bench_core::passes::steady::PTS_WINDOW, |w| {
        usize::try_from(w.n).unwrap_or(5)
    });
    let max_rounds = o
        .max_rounds
        .as_ref()
        .map_or(bench_core::passes::steady::PTS_MAX_ROUNDS, Whole::get32);
    if usize::try_from(max_rounds).unwrap_or(usize::MAX) < window {
        return err(format!(
            "precondition.max_rounds: {max_rounds} is fewer than the window's {window} rounds; expected at least {window}"
        ));
    }
    let least = u64::from(bench_core::passes::steady::FILL_BS.max(pass.bs));
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
        range_pct: pct(&o.range_pct, bench_core::passes::steady::PTS_RANGE_PCT),
        slope_pct: pct(&o.slope_pct, bench_core::passes::steady::PTS_SLOPE_PCT),
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
