//! The config's `surface_scan` (README "Surface scan"), as written
//! ([`RawSurfaceScan`]), checked ([`scan_plan`]) into a [`ScanPlan`].

use super::model::{PlannedTarget, ScanPlan};
use super::raw::{err, ConfigError};
use super::scan_raw::RawSurfaceScan;
use super::value::{Obj, Whole};

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
