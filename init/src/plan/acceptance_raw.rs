//! The config's `acceptance` section as written: each key and its value
//! type, read by serde with the messages of [`super::value`]; checked into
//! rules by [`super::acceptance`].

use std::collections::BTreeMap;

use bench_core::spec::Workload;
use bench_core::verdict::acceptance::Severity;
use bench_core::vocab::size::parse_size;
use serde::{Deserialize, Serialize};

use super::value::{closed_opt, from_scalar, Closed, Duration, Flag, Obj, Object, Range, Scalar, Size, Whole};

impl Closed for Severity {
    const WHAT: &'static str = "a verdict";
    const ALL: &'static [Severity] = &[Severity::Fail, Severity::Warn, Severity::Off];
}

/// A rate in bytes per second: a number, or a size with `/s` (`"150MB/s"`,
/// `"1GiB/s"`; dd's suffixes: `MB` = 10^6, `M` and `MiB` = 2^20).
#[derive(Clone, Debug, PartialEq)]
pub struct Rate {
    /// Bytes per second.
    pub bytes_per_sec: f64,
    /// As written.
    pub written: Scalar,
}

/// What a rate is expected to be, in words.
const RATE_EXPECTED: &str = "a rate such as \"150MB/s\" (MB = 10^6 bytes, MiB = 2^20) or a number of bytes per second";

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, |v| {
            #[allow(clippy::cast_precision_loss)] // a rate, not an exact count
            let bytes_per_sec = match &v {
                Scalar::Int(n) => *n as f64,
                Scalar::Float(x) if x.is_finite() && *x >= 0.0 => *x,
                Scalar::Str(s) => match s.trim().strip_suffix("/s").map(parse_size) {
                    Some(Ok(n)) => n as f64,
                    _ => return Err(format!("{v} is not a rate; expected {RATE_EXPECTED}")),
                },
                _ => return Err(format!("{v} is not a rate; expected {RATE_EXPECTED}")),
            };
            Ok(Rate {
                bytes_per_sec,
                written: v,
            })
        })
    }
}

impl Serialize for Rate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.written.serialize(s)
    }
}

/// A number of at least 0 (IOPS), or a percentage below 100.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Number(pub f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, |v| match v {
            #[allow(clippy::cast_precision_loss)]
            Scalar::Int(n) => Ok(Number(n as f64)),
            Scalar::Float(x) if x.is_finite() && x >= 0.0 => Ok(Number(x)),
            _ => Err(format!("{v} is not a number of at least 0")),
        })
    }
}

/// `max_temperature`'s range.
#[derive(Debug)]
pub struct Celsius;
impl Range for Celsius {
    const MIN: u64 = 1;
    const MAX: u64 = 200;
    const EXPECTED: &'static str = "a temperature in degrees Celsius from 1 to 200";
}

/// `percentage_used_max`'s range.
#[derive(Debug)]
pub struct Endurance;
impl Range for Endurance {
    const MIN: u64 = 0;
    const MAX: u64 = 255;
    const EXPECTED: &'static str = "a percentage of the rated endurance from 0 to 255 (NVMe reports up to 255)";
}

/// Which targets a limit applies to, as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawOnly {
    /// A glob on the model.
    #[serde(default)]
    pub model: Option<String>,
    /// The transport.
    #[serde(default)]
    pub transport: Option<String>,
    /// Spinning or not.
    #[serde(default)]
    pub rotational: Option<Flag>,
    /// At least this size.
    #[serde(default)]
    pub min_size: Option<Size>,
    /// At most this size.
    #[serde(default)]
    pub max_size: Option<Size>,
}

/// One limit as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimit {
    /// The tests of this name.
    #[serde(default)]
    pub test: Option<String>,
    /// The tests of this workload.
    #[serde(default, deserialize_with = "closed_opt")]
    pub workload: Option<Workload>,
    /// Only these targets.
    #[serde(default)]
    pub only: Option<Obj<RawOnly>>,
    /// Floor on the read rate.
    #[serde(default)]
    pub min_read_bytes_per_sec: Option<Rate>,
    /// Floor on the write rate.
    #[serde(default)]
    pub min_write_bytes_per_sec: Option<Rate>,
    /// Floor on read IOPS.
    #[serde(default)]
    pub min_read_iops: Option<Number>,
    /// Floor on write IOPS.
    #[serde(default)]
    pub min_write_iops: Option<Number>,
    /// Ceilings on the reads' latency: `mean`, `max`, `p99`, ...
    #[serde(default)]
    pub max_read_latency: Option<BTreeMap<String, Duration>>,
    /// Ceilings on the writes' latency.
    #[serde(default)]
    pub max_write_latency: Option<BTreeMap<String, Duration>>,
    /// `fail` (the default) or `warn`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub verdict: Option<Severity>,
}

/// The peers or baseline rule's settings as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPeers {
    /// How far below the median fails, percent.
    #[serde(default)]
    pub below_pct: Option<Number>,
    /// `fail`, `warn` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub verdict: Option<Severity>,
}

/// The baseline rule as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBaseline {
    /// The baseline file (`bootbench-report baseline`), relative to the
    /// config file's directory.
    pub file: String,
    /// How far below the median fails, percent.
    #[serde(default)]
    pub below_pct: Option<Number>,
    /// `fail`, `warn` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub verdict: Option<Severity>,
}

/// The health rules as written; every one on unless turned off.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawHealth {
    /// SMART status must pass.
    #[serde(default)]
    pub smart_status: Option<Flag>,
    /// Counters must not grow.
    #[serde(default)]
    pub counters: Option<Flag>,
    /// NVMe percentage used at most this.
    #[serde(default)]
    pub percentage_used_max: Option<Whole<Endurance>>,
    /// NVMe available spare at or above its threshold.
    #[serde(default)]
    pub available_spare: Option<Flag>,
    /// Temperature below the device's warning temperature.
    #[serde(default)]
    pub temperature: Option<Flag>,
    /// A ceiling of the config's own, degrees Celsius.
    #[serde(default)]
    pub max_temperature: Option<Whole<Celsius>>,
    /// Seagate FARM's power-on hours must agree with SMART's.
    #[serde(default)]
    pub farm_hours: Option<Flag>,
    /// The OCP C0h log's counters must not grow (its capacitor health and
    /// thermal throttling warn).
    #[serde(default)]
    pub ocp: Option<Flag>,
}

/// The `acceptance` section as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawAcceptance {
    /// Floors and ceilings.
    #[serde(default)]
    pub limits: Vec<Obj<RawLimit>>,
    /// The peers rule.
    #[serde(default)]
    pub peers: Option<Obj<RawPeers>>,
    /// The baseline rule.
    #[serde(default)]
    pub baseline: Option<Obj<RawBaseline>>,
    /// The health rules.
    #[serde(default)]
    pub health: Option<Obj<RawHealth>>,
    /// I/O errors, timeouts and kernel log lines fail a disk.
    #[serde(default)]
    pub errors: Option<Flag>,
    /// A self-test must complete without error.
    #[serde(default)]
    pub self_test: Option<Flag>,
    /// Hidden capacity: `warn` (the default), `fail` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub hidden_capacity: Option<Severity>,
    /// The surface scan's rules.
    #[serde(default)]
    pub surface_scan: Option<Obj<RawScanRules>>,
    /// The burn-in's rules.
    #[serde(default)]
    pub burn_in: Option<Obj<RawBurnRules>>,
    /// Preconditioning without steady state: `warn` (the default), `fail`
    /// or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub steady_state: Option<Severity>,
    /// A zoned disk's offline and read-only zones: `fail` (the default),
    /// `warn` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub zones: Option<Severity>,
    /// A link on a disk's path trained below what both its ends support:
    /// `warn` (the default), `fail` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub link_speed: Option<Severity>,
    /// PHY or AER error counters on a disk's path that grew during the
    /// run: `fail` (the default), `warn` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub link_errors: Option<Severity>,
}

/// The burn-in's rules as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBurnRules {
    /// Unwritable and unreadable blocks: `fail` (the default), `warn` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub bad: Option<Severity>,
    /// Mismatched blocks: `fail` (the default), `warn` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub mismatched: Option<Severity>,
}

impl Object for RawBurnRules {
    const EXPECTED: &'static str = "an object such as {\"bad\": \"fail\", \"mismatched\": \"fail\"}";
}

/// The surface scan's rules as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawScanRules {
    /// Unreadable blocks: `fail` (the default), `warn` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub unreadable: Option<Severity>,
    /// Slow reads: `warn` (the default), `fail` or `off`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub slow: Option<Severity>,
    /// What a slow read takes at least, milliseconds: a class bound.
    #[serde(default)]
    pub slow_ms: Option<Whole<SlowMs>>,
}

/// `slow_ms`'s range (then checked to be a class bound).
#[derive(Debug)]
pub struct SlowMs;
impl Range for SlowMs {
    const MIN: u64 = 5;
    const MAX: u64 = 500;
    const EXPECTED: &'static str = "one of the time classes' bounds: 5, 20, 50, 150 or 500 (milliseconds)";
}

impl Object for RawScanRules {
    const EXPECTED: &'static str = "an object such as {\"unreadable\": \"fail\", \"slow\": \"warn\", \"slow_ms\": 500}";
}

impl Object for RawAcceptance {
    const EXPECTED: &'static str = "an object such as {\"limits\": [...], \"peers\": {\"below_pct\": 10}}";
}
impl Object for RawLimit {
    const EXPECTED: &'static str =
        "an object such as {\"workload\": \"seq_read\", \"min_read_bytes_per_sec\": \"150MB/s\"}";
}
impl Object for RawOnly {
    const EXPECTED: &'static str = "an object such as {\"model\": \"ST4000*\", \"rotational\": true}";
}
impl Object for RawPeers {
    const EXPECTED: &'static str = "an object such as {\"below_pct\": 10, \"verdict\": \"fail\"}";
}
impl Object for RawBaseline {
    const EXPECTED: &'static str = "an object such as {\"file\": \"baseline.json\", \"below_pct\": 10}";
}
impl Object for RawHealth {
    const EXPECTED: &'static str = "an object such as {\"percentage_used_max\": 90}";
}
