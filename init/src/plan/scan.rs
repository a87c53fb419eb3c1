//! The config's `surface_scan` (README "Surface scan"): as written
//! ([`RawSurfaceScan`]), checked ([`scan_plan`]) into a [`ScanPlan`].

use serde::{Deserialize, Serialize};

use bench_core::units::Nanos;

use super::model::PlannedTarget;
use super::raw::{err, ConfigError};
use super::value::{from_scalar, Duration, Flag, Obj, Object, Range, Scalar, Size, Whole};

/// `surface_scan` as written: every key optional (`{}`: every disk, whole,
/// with the defaults).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSurfaceScan {
    /// Only the disks of these serials (absent: every disk).
    #[serde(default)]
    pub disks: Option<Vec<String>>,
    /// The area's first byte (default 0).
    #[serde(default)]
    pub offset: Option<Size>,
    /// The area's length (default: to the end of each disk).
    #[serde(default)]
    pub length: Option<Size>,
    /// The fraction of the area read, spread evenly (default 1).
    #[serde(default)]
    pub coverage: Option<Coverage>,
    /// The size of each read.
    #[serde(default)]
    pub bs: Option<Size>,
    /// Reads in flight.
    #[serde(default)]
    pub iodepth: Option<Whole<Depth>>,
    /// Re-reads of a failing block before it is unreadable.
    #[serde(default)]
    pub retries: Option<Whole<Retries>>,
    /// Unreadable blocks after which a disk's scan stops.
    #[serde(default)]
    pub max_bad: Option<Whole<MaxBad>>,
    /// Zones of the throughput curve.
    #[serde(default)]
    pub zones: Option<Whole<Zones>>,
    /// How many of the slowest reads are recorded.
    #[serde(default)]
    pub slowest: Option<Whole<Slowest>>,
    /// The longest a disk's scan may take.
    #[serde(default)]
    pub max_time: Option<Duration>,
    /// Every disk at once, each its own thread (default true).
    #[serde(default)]
    pub parallel: Option<Flag>,
}

impl Object for RawSurfaceScan {
    const EXPECTED: &'static str = "an object such as {\"coverage\": \"10%\"} ({} scans every disk whole)";
}

/// `surface_scan.coverage`: a fraction above 0 and at most 1, or a
/// percentage (`"10%"`); kept in parts per million.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coverage(pub u32);

impl<'de> Deserialize<'de> for Coverage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, |v| {
            let frac = match &v {
                Scalar::Int(n) => Some(*n as f64),
                Scalar::Float(x) => Some(*x),
                Scalar::Str(s) => s
                    .trim()
                    .strip_suffix('%')
                    .and_then(|p| p.trim().parse::<f64>().ok())
                    .map(|p| p / 100.0),
                Scalar::Bool(_) => None,
            };
            // 1 ppm at least: a fraction that reads nothing is no scan.
            let ppm = frac
                .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1.0)
                .map(|f| (f * 1e6).round());
            match ppm {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 1..=1e6
                Some(p) if p >= 1.0 => Ok(Coverage(p as u32)),
                _ => Err(format!(
                    "{v} is not a coverage; expected a fraction of the area above 0 and at most 1 (0.1), or a percentage (\"10%\")"
                )),
            }
        })
    }
}

impl Serialize for Coverage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(f64::from(self.0) / 1e6)
    }
}

macro_rules! scan_ranges {
    ($($name:ident: $min:expr, $max:expr, $expected:expr;)*) => {
        $(
            #[doc = concat!("`", $expected, "`")]
            #[derive(Debug)]
            pub struct $name;
            impl Range for $name {
                const MIN: u64 = $min;
                const MAX: u64 = $max;
                const EXPECTED: &'static str = $expected;
            }
        )*
    };
}

scan_ranges! {
    Depth: 1, 256, "a whole number of reads in flight from 1 to 256";
    Retries: 0, 16, "a whole number of re-reads from 0 to 16";
    MaxBad: 0, 1_000_000, "a whole number of unreadable blocks from 0 to 1000000";
    Zones: 1, 10_000, "a whole number of zones from 1 to 10000";
    Slowest: 0, 1000, "a whole number of reads from 0 to 1000";
}

/// The largest read of a scan: 64 MiB.
pub const MAX_SCAN_BS: u64 = 64 << 20;

/// The config's `surface_scan`, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanPlan {
    /// Only the disks of these serials; `None`: every disk of the plan.
    pub disks: Option<Vec<String>>,
    /// The area's first byte.
    pub offset: u64,
    /// The area's length; `None`: to each disk's end.
    pub length: Option<u64>,
    /// The fraction read, parts per million.
    pub coverage_ppm: u32,
    /// The size of each read.
    pub bs: u32,
    /// Reads in flight.
    pub iodepth: u32,
    /// Re-reads of a failing block.
    pub retries: u32,
    /// Unreadable blocks after which a disk's scan stops.
    pub max_bad: u64,
    /// Zones of the throughput curve.
    pub zones: u32,
    /// Slowest reads recorded.
    pub slowest: usize,
    /// The longest a disk's scan may take; `None`: from its size
    /// ([`ScanPlan::time_for`]).
    pub max_time: Option<Nanos>,
    /// Every disk at once.
    pub parallel: bool,
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
    /// The rate a scan's time allowance assumes when the config gives no
    /// `max_time`: 10 MB/s, below any working disk's slowest zone.
    pub const FLOOR_RATE: u64 = 10_000_000;

    /// True if the disk of `serial` takes part.
    pub fn selects(&self, serial: Option<&str>) -> bool {
        match &self.disks {
            None => true,
            Some(d) => serial.is_some_and(|s| d.iter().any(|x| x == s)),
        }
    }

    /// The area of a disk of `size` bytes: `[start, end)`, or why it has none.
    pub fn area(&self, size: u64) -> Result<(u64, u64), String> {
        let end = match self.length {
            Some(l) => self.offset.saturating_add(l),
            None => size,
        };
        if self.offset >= size || end > size {
            return Err(format!(
                "the area {}..{} is not within the disk's {size} bytes",
                self.offset, end
            ));
        }
        Ok((self.offset, end))
    }

    /// The longest a scan of `bytes` may take: the config's `max_time`, or
    /// the bytes at [`ScanPlan::FLOOR_RATE`] and a minute.
    pub fn time_for(&self, bytes: u64) -> Nanos {
        self.max_time.unwrap_or_else(|| {
            let secs = bytes / Self::FLOOR_RATE + 60;
            Nanos(secs.saturating_mul(1_000_000_000))
        })
    }
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
