//! The whole-disk passes' sections as written (`surface_scan`, `burn_in`,
//! `precondition`; docs/burn-in-and-scans.md): every key optional;
//! [`super::pass`] checks them into a [`ScanPlan`](super::pass::ScanPlan),
//! a [`BurnPlan`](super::pass::BurnPlan) and a
//! [`PreconditionPlan`](super::pass::PreconditionPlan).

use bench_core::document::result::{BurnOrder, ZonesAfter};
use bench_core::passes::burnin::Pattern;
use serde::{Deserialize, Serialize};

use super::value::{closed_opt, from_scalar, Closed, Duration, Flag, Object, Range, Scalar, Size, Whole};

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
    BurnDepth: 1, 256, "a whole number of requests in flight from 1 to 256";
    BurnRetries: 0, 16, "a whole number of retries from 0 to 16";
    BurnMaxBad: 0, 1_000_000, "a whole number of bad blocks from 0 to 1000000";
    Loops: 1, 1000, "a whole number of loops from 1 to 1000";
    Rounds: 1, 1000, "a whole number of rounds from 1 to 1000";
    Window: 2, 100, "a whole number of rounds from 2 to 100";
    Percent: 1, 100, "a whole number of percent from 1 to 100";
}

/// `precondition` as written: every key optional (`{}`: the PTS's fill,
/// then 4 KiB random writes at depth 32 in rounds of a minute until the 5
/// last are steady, at most 25, on every disk `destructive` names).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPrecondition {
    /// Only the disks of these serials, each named in `destructive`.
    #[serde(default)]
    pub disks: Option<Vec<String>>,
    /// The area's first byte (default 0).
    #[serde(default)]
    pub offset: Option<Size>,
    /// The area's length (default: to the end of each disk).
    #[serde(default)]
    pub length: Option<Size>,
    /// The workload-independent fill first (default true).
    #[serde(default)]
    pub fill: Option<Flag>,
    /// The rounds' writes: `"random"` (the default) or `"sequential"`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub order: Option<BurnOrder>,
    /// The size of each write of the rounds.
    #[serde(default)]
    pub bs: Option<Size>,
    /// Writes in flight.
    #[serde(default)]
    pub iodepth: Option<Whole<BurnDepth>>,
    /// Each round's time.
    #[serde(default)]
    pub round: Option<Duration>,
    /// Rounds at most.
    #[serde(default)]
    pub max_rounds: Option<Whole<Rounds>>,
    /// The Measurement Window, rounds.
    #[serde(default)]
    pub window: Option<Whole<Window>>,
    /// The data excursion limit, percent of the window's average.
    #[serde(default)]
    pub range_pct: Option<Whole<Percent>>,
    /// The slope excursion limit, percent of the window's average.
    #[serde(default)]
    pub slope_pct: Option<Whole<Percent>>,
    /// Every disk at once, each its own thread (default true).
    #[serde(default)]
    pub parallel: Option<Flag>,
    /// The purge first: `"none"` (the default), `"auto"`, or a method.
    #[serde(default)]
    pub purge: Option<PurgeArg>,
}

/// `precondition.purge` as written: `None` for `"none"`, `Some(None)` for
/// `"auto"`, else the method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PurgeArg(pub Option<Option<bench_core::document::result::EraseMethod>>);

impl<'de> Deserialize<'de> for PurgeArg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use bench_core::document::result::EraseMethod;
        let s = String::deserialize(d)?;
        match s.as_str() {
            "none" => Ok(PurgeArg(None)),
            "auto" => Ok(PurgeArg(Some(None))),
            name => bench_core::vocab::names::from_name::<EraseMethod>(name)
                .map(|m| PurgeArg(Some(Some(m))))
                .ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "{name:?} is not a purge; expected \"none\", \"auto\" (the fastest whole-disk purge the disk \
                     supports) or one of {}",
                        bench_core::vocab::names::names_joined(EraseMethod::ALL, ", ")
                    ))
                }),
        }
    }
}

impl Object for RawPrecondition {
    const EXPECTED: &'static str =
        "an object such as {\"round\": \"1m\", \"max_rounds\": 25} ({} preconditions every disk \"destructive\" names as SNIA's PTS does)";
}

/// `burn_in` as written: every key optional (`{}`: badblocks' four
/// patterns over every disk `destructive` grants, whole).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBurnIn {
    /// Only the disks of these serials, each granted by `destructive`
    /// (absent: every disk it grants).
    #[serde(default)]
    pub disks: Option<Vec<String>>,
    /// The area's first byte (default 0).
    #[serde(default)]
    pub offset: Option<Size>,
    /// The area's length (default: to the end of each disk).
    #[serde(default)]
    pub length: Option<Size>,
    /// `"sequential"` (badblocks -w, the default) or `"random"` (Ironic's fio).
    #[serde(default, deserialize_with = "closed_opt")]
    pub mode: Option<BurnOrder>,
    /// Sequential: the passes' patterns (default badblocks' four).
    #[serde(default)]
    pub patterns: Option<Vec<RawPattern>>,
    /// How many times the patterns run (random: how many passes).
    #[serde(default)]
    pub loops: Option<Whole<Loops>>,
    /// The size of each request.
    #[serde(default)]
    pub bs: Option<Size>,
    /// Requests in flight.
    #[serde(default)]
    pub iodepth: Option<Whole<BurnDepth>>,
    /// Retries of a failing block before it is bad.
    #[serde(default)]
    pub retries: Option<Whole<BurnRetries>>,
    /// Bad blocks after which a disk's burn-in stops.
    #[serde(default)]
    pub max_bad: Option<Whole<BurnMaxBad>>,
    /// The longest a disk's burn-in may take.
    #[serde(default)]
    pub max_time: Option<Duration>,
    /// Every disk at once, each its own thread (default true).
    #[serde(default)]
    pub parallel: Option<Flag>,
    /// A host-managed zoned disk's sequential zones after their passes:
    /// `"empty"` (reset, the default) or `"full"`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub zones_after: Option<ZonesAfter>,
}

impl Closed for ZonesAfter {
    const WHAT: &'static str = "what a burn-in leaves in a zone";
    const ALL: &'static [Self] = ZonesAfter::ALL;
}

impl Object for RawBurnIn {
    const EXPECTED: &'static str =
        "an object such as {\"mode\": \"random\"} ({} writes badblocks' four patterns over every disk \"destructive\" grants)";
}

impl Closed for BurnOrder {
    const WHAT: &'static str = "a burn-in mode";
    const ALL: &'static [Self] = BurnOrder::ALL;
}

/// One of `burn_in.patterns`: a byte (`"0xaa"`, or a number from 0 to
/// 255) repeated, or `"random"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawPattern(pub Pattern);

impl<'de> Deserialize<'de> for RawPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, |v| {
            let byte = match &v {
                Scalar::Int(n) => u8::try_from(*n).ok(),
                Scalar::Str(s) if s.trim() == "random" => return Ok(RawPattern(Pattern::Random(0))),
                Scalar::Str(s) => s
                    .trim()
                    .strip_prefix("0x")
                    .filter(|h| h.len() == 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok()),
                _ => None,
            };
            byte.map(|b| RawPattern(Pattern::Byte(b))).ok_or_else(|| {
                format!("{v} is not a pattern; expected a byte as two hex digits (\"0xaa\") or a number from 0 to 255, or \"random\"")
            })
        })
    }
}

impl Serialize for RawPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.name())
    }
}
