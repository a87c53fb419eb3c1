//! The config's `surface_scan` and `burn_in` (README "Surface scan",
//! "Burn-in"), as written ([`RawSurfaceScan`], [`RawBurnIn`]), checked
//! ([`scan_plan`], [`burn_plan`]) into a [`ScanPlan`] and a [`BurnPlan`].

use bench_core::result::BurnOrder;

use super::model::{BurnPlan, PlannedTarget, ScanPlan};
use super::raw::{err, ConfigError};
use super::scan_raw::{RawBurnIn, RawSurfaceScan};
use super::value::{Obj, Whole};
use crate::safety::Destructive;

/// The largest read of a scan: 64 MiB.
pub const MAX_SCAN_BS: u64 = 64 << 20;

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

/// The config's `surface_scan` checked against the plan's targets: sizes
/// and the area in whole logical blocks of every disk it selects.
pub fn scan_plan(
    raw: Option<&Obj<RawSurfaceScan>>,
    targets: &[PlannedTarget],
) -> Result<Option<ScanPlan>, ConfigError> {
    let Some(o) = raw else { return Ok(None) };
    let o = &o.0;
    if let Some(d) = &o.disks {
        check_disks("surface_scan.disks", d, targets)?;
    }
    let bs = match &o.bs {
        None => ScanPlan::DEFAULT_BS,
        Some(s) if s.bytes == 0 || s.bytes % 512 != 0 || s.bytes > MAX_SCAN_BS => {
            return err(format!(
                "surface_scan.bs: {} is not a read size; expected a multiple of 512 bytes from 512 to 64M",
                s.written
            ))
        }
        Some(s) => u32::try_from(s.bytes).unwrap_or(ScanPlan::DEFAULT_BS),
    };
    if let Some(l) = o.length.as_ref().filter(|l| l.bytes == 0) {
        return err(format!(
            "surface_scan.length: {} is zero; expected a length such as \"10G\", or no length for the rest of each disk",
            l.written
        ));
    }
    let max_time = match &o.max_time {
        None => None,
        Some(v) if v.ns.0 > 0 => Some(v.ns),
        Some(v) => {
            return err(format!(
                "surface_scan.max_time: {v} is zero; expected a duration such as \"24h\""
            ))
        }
    };
    let plan = ScanPlan {
        disks: o.disks.clone(),
        offset: o.offset.as_ref().map_or(0, |s| s.bytes),
        length: o.length.as_ref().map(|s| s.bytes),
        coverage_ppm: o.coverage.map_or(bench_core::scan::WHOLE, |c| c.0),
        bs,
        iodepth: o.iodepth.as_ref().map_or(ScanPlan::DEFAULT_IODEPTH, Whole::get32),
        retries: o.retries.as_ref().map_or(ScanPlan::DEFAULT_RETRIES, Whole::get32),
        max_bad: o.max_bad.as_ref().map_or(ScanPlan::DEFAULT_MAX_BAD, |w| w.n),
        zones: o.zones.as_ref().map_or(ScanPlan::DEFAULT_ZONES, Whole::get32),
        slowest: o
            .slowest
            .as_ref()
            .map_or(ScanPlan::DEFAULT_SLOWEST, |w| usize::try_from(w.n).unwrap_or(0)),
        max_time,
        parallel: o.parallel.is_none_or(|f| f.0),
    };
    for t in targets
        .iter()
        .filter(|t| t.missing.is_none() && t.info.stack.is_none() && plan.selects(t.info.serial.as_deref()))
    {
        let i = &t.info;
        if i.size_bytes == 0 {
            continue;
        }
        let lb = u64::from(i.logical_block_size.max(512));
        if u64::from(bs) % lb != 0 || plan.offset % lb != 0 || plan.length.is_some_and(|l| l % lb != 0) {
            return err(format!(
                "surface_scan: bs {bs}, offset {} and length {} must be whole logical blocks of {} ({lb} bytes)",
                plan.offset,
                plan.length.map_or("(to the end)".to_string(), |l| l.to_string()),
                i.path
            ));
        }
        if let Err(why) = plan.area(i.size_bytes) {
            return err(format!("surface_scan.offset/length: on {}: {why}", i.path));
        }
    }
    Ok(Some(plan))
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
    let Some(o) = raw else { return Ok(None) };
    let o = &o.0;
    let Some(d) = destructive else {
        return err(
            "burn_in: the config has no \"destructive\" section; a burn-in writes every block of a disk: \
             expected \"destructive\" naming the disks (by serial or WWN) with the confirmation phrase",
        );
    };
    let named = |t: &PlannedTarget| t.id.as_ref().is_some_and(|id| d.resolved.contains(&Some(id.node)));
    let disk = |t: &PlannedTarget| t.missing.is_none() && t.info.stack.is_none() && t.sim.is_none();
    let chosen: Vec<usize> = match &o.disks {
        Some(list) => {
            check_disks("burn_in.disks", list, targets)?;
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
                        "burn_in.disks[{i}]: {s:?} ({}) is not named in \"destructive\"; a burn-in writes every block: \
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
        return err(
            "burn_in: no disk of this run is named in \"destructive\"; expected \"destructive\" to name the disks to burn in",
        );
    }
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
    let bs = match &o.bs {
        None if random => BurnPlan::RANDOM_BS,
        None => BurnPlan::SEQUENTIAL_BS,
        Some(s) if s.bytes == 0 || s.bytes % 512 != 0 || s.bytes > MAX_SCAN_BS => {
            return err(format!(
                "burn_in.bs: {} is not a request size; expected a multiple of 512 bytes from 512 to 64M",
                s.written
            ))
        }
        Some(s) => u32::try_from(s.bytes).unwrap_or(BurnPlan::SEQUENTIAL_BS),
    };
    if let Some(l) = o.length.as_ref().filter(|l| l.bytes == 0) {
        return err(format!(
            "burn_in.length: {} is zero; expected a length such as \"10G\", or no length for the rest of each disk",
            l.written
        ));
    }
    let max_time = match &o.max_time {
        None => None,
        Some(v) if v.ns.0 > 0 => Some(v.ns),
        Some(v) => {
            return err(format!(
                "burn_in.max_time: {v} is zero; expected a duration such as \"48h\""
            ))
        }
    };
    let plan = BurnPlan {
        targets: chosen,
        offset: o.offset.as_ref().map_or(0, |s| s.bytes),
        length: o.length.as_ref().map(|s| s.bytes),
        order,
        patterns,
        loops: o
            .loops
            .as_ref()
            .map_or(if random { BurnPlan::RANDOM_LOOPS } else { 1 }, Whole::get32),
        bs,
        iodepth: o.iodepth.as_ref().map_or(
            if random {
                BurnPlan::RANDOM_IODEPTH
            } else {
                BurnPlan::SEQUENTIAL_IODEPTH
            },
            Whole::get32,
        ),
        retries: o.retries.as_ref().map_or(BurnPlan::DEFAULT_RETRIES, Whole::get32),
        max_bad: o.max_bad.as_ref().map_or(BurnPlan::DEFAULT_MAX_BAD, |w| w.n),
        max_time,
        parallel: o.parallel.is_none_or(|f| f.0),
    };
    for &ti in &plan.targets {
        let i = &targets[ti].info;
        let lb = u64::from(i.logical_block_size.max(512));
        if u64::from(bs) % lb != 0 || plan.offset % lb != 0 || plan.length.is_some_and(|l| l % lb != 0) {
            return err(format!(
                "burn_in: bs {bs}, offset {} and length {} must be whole logical blocks of {} ({lb} bytes)",
                plan.offset,
                plan.length.map_or("(to the end)".to_string(), |l| l.to_string()),
                i.path
            ));
        }
        if let Err(why) = plan.area(i.size_bytes) {
            return err(format!("burn_in.offset/length: on {}: {why}", i.path));
        }
    }
    Ok(Some(plan))
}
