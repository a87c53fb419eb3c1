//! The config's `acceptance` section: as written ([`RawAcceptance`]), and
//! checked against the plan's tests into `bench_core::acceptance::Rules`.
//!
//! ```json
//! "acceptance": {
//!   "limits": [
//!     {"workload": "seq_read", "only": {"rotational": true}, "min_read_bytes_per_sec": "150MB/s"},
//!     {"test": "rand_read_4k_qd1", "max_read_latency": {"p99": "2ms", "mean": "500us"}, "verdict": "warn"}
//!   ],
//!   "peers": {"below_pct": 10},
//!   "baseline": {"file": "baseline.json", "below_pct": 15},
//!   "health": {"percentage_used_max": 90, "max_temperature": 60},
//!   "errors": true, "self_test": true, "hidden_capacity": "fail"
//! }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use bench_core::acceptance::{
    directions, Baseline, BaselineRule, Ceiling, Direction, DiskFilter, HealthRules, LatStat, Limit, PeerRule, Rules,
    Severity, BASELINE_SCHEMA,
};
use bench_core::hist::FIO_PERCENTILES;
use bench_core::result::Metric;
use bench_core::size::parse_size;
use bench_core::spec::{TestSpec, Workload};
use serde::{Deserialize, Serialize};

use super::raw::{err, ConfigError};
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

/// The largest baseline file read.
const MAX_BASELINE_BYTES: u64 = 16 << 20;

/// The rules of `raw` (the defaults without a section), checked against
/// the plan's `tests`; a baseline file is read relative to `config_dir`.
pub fn rules(
    raw: Option<&RawAcceptance>,
    tests: &[(TestSpec, super::raw::Origin)],
    config_dir: &Path,
) -> Result<Rules, ConfigError> {
    let mut rules = Rules::defaults();
    let Some(raw) = raw else {
        return Ok(rules);
    };
    rules.from_config = true;
    rules.peers.severity = Severity::Fail;
    let specs: Vec<&TestSpec> = tests.iter().map(|(s, _)| s).collect();
    for (i, l) in raw.limits.iter().enumerate() {
        rules.limits.push(limit(l, &format!("acceptance.limits[{i}]"), &specs)?);
    }
    if let Some(p) = &raw.peers {
        rules.peers = PeerRule {
            below: below(p.below_pct.as_ref(), "acceptance.peers.below_pct", rules.peers.below)?,
            severity: p.verdict.unwrap_or(Severity::Fail),
        };
    }
    if let Some(b) = &raw.baseline {
        rules.baseline = Some(BaselineRule {
            baseline: read_baseline(&b.file, config_dir)?,
            from: b.file.clone(),
            below: below(b.below_pct.as_ref(), "acceptance.baseline.below_pct", 0.10)?,
            severity: b.verdict.unwrap_or(Severity::Fail),
        });
    }
    if let Some(h) = &raw.health {
        rules.health = health(h);
    }
    let on = |f: Option<Flag>| f.is_none_or(|f| f.0);
    rules.errors = on(raw.errors);
    rules.self_test = on(raw.self_test);
    rules.hidden_capacity = raw.hidden_capacity.unwrap_or(Severity::Warn);
    Ok(rules)
}

fn health(h: &RawHealth) -> HealthRules {
    let on = |f: Option<Flag>| f.is_none_or(|f| f.0);
    let d = HealthRules::defaults();
    HealthRules {
        smart_status: on(h.smart_status),
        counters: on(h.counters),
        percentage_used_max: h
            .percentage_used_max
            .as_ref()
            .map_or(d.percentage_used_max, |w| u8::try_from(w.n).ok()),
        available_spare: on(h.available_spare),
        temperature: on(h.temperature),
        max_temperature_c: h.max_temperature.as_ref().and_then(|w| i32::try_from(w.n).ok()),
    }
}

/// A percentage below the median as a fraction; `default` when absent.
fn below(pct: Option<&Number>, at: &str, default: f64) -> Result<f64, ConfigError> {
    match pct {
        None => Ok(default),
        Some(Number(p)) if *p > 0.0 && *p < 100.0 => Ok(p / 100.0),
        Some(Number(p)) => err(format!(
            "{at}: {p} is out of range; expected a percentage above 0 and below 100"
        )),
    }
}

/// The tests a limit is for: by name and workload, at least one given.
fn limit_tests<'a>(l: &RawLimit, at: &str, specs: &[&'a TestSpec]) -> Result<Vec<&'a TestSpec>, ConfigError> {
    if let Some(name) = &l.test {
        if !specs.iter().any(|s| s.name == *name) {
            let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            return err(format!(
                "{at}.test: {name:?} names no test of the plan; expected one of {}",
                names.join(", ")
            ));
        }
    }
    if let Some(w) = l.workload {
        if !specs.iter().any(|s| s.workload == w) {
            return err(format!(
                "{at}.workload: {:?} is the workload of no test of the plan; expected the workload of one",
                w.name()
            ));
        }
    }
    if l.test.is_none() && l.workload.is_none() {
        return err(format!(
            "{at}: names no tests; expected \"test\" (a test's name) or \"workload\""
        ));
    }
    Ok(specs
        .iter()
        .copied()
        .filter(|s| l.test.as_ref().is_none_or(|n| *n == s.name) && l.workload.is_none_or(|w| w == s.workload))
        .collect())
}

fn limit(l: &RawLimit, at: &str, specs: &[&TestSpec]) -> Result<Limit, ConfigError> {
    let tests = limit_tests(l, at, specs)?;
    if tests.is_empty() {
        return err(format!(
            "{at}: no test of the plan has both that name and that workload; expected \"test\" or \"workload\" of one test"
        ));
    }
    let reads = tests.iter().any(|s| directions(s.workload).0);
    let writes = tests.iter().any(|s| directions(s.workload).1);
    let mut floors = Vec::new();
    let given = [
        (
            "min_read_bytes_per_sec",
            Metric::ReadBps,
            l.min_read_bytes_per_sec.as_ref().map(|r| r.bytes_per_sec),
        ),
        (
            "min_write_bytes_per_sec",
            Metric::WriteBps,
            l.min_write_bytes_per_sec.as_ref().map(|r| r.bytes_per_sec),
        ),
        ("min_read_iops", Metric::ReadIops, l.min_read_iops.as_ref().map(|n| n.0)),
        (
            "min_write_iops",
            Metric::WriteIops,
            l.min_write_iops.as_ref().map(|n| n.0),
        ),
    ];
    for (key, metric, v) in given {
        let Some(v) = v else { continue };
        direction_measured(at, key, metric.is_read(), reads, writes, &tests)?;
        floors.push((metric, v));
    }
    let mut ceilings = Vec::new();
    for (key, direction, map) in [
        ("max_read_latency", Direction::Read, &l.max_read_latency),
        ("max_write_latency", Direction::Write, &l.max_write_latency),
    ] {
        let Some(map) = map else { continue };
        direction_measured(at, key, direction == Direction::Read, reads, writes, &tests)?;
        if map.is_empty() {
            return err(format!("{at}.{key}: {{}} holds no ceiling; expected {}", LAT_EXPECTED));
        }
        for (stat, d) in map {
            ceilings.push(Ceiling {
                direction,
                stat: lat_stat(stat).ok_or_else(|| {
                    ConfigError(format!(
                        "{at}.{key}: {stat:?} is not a latency figure; expected {LAT_EXPECTED}"
                    ))
                })?,
                ns: d.ns.0,
            });
        }
    }
    if floors.is_empty() && ceilings.is_empty() {
        return err(format!(
            "{at}: sets no limit; expected min_read_bytes_per_sec, min_write_bytes_per_sec, min_read_iops, min_write_iops, max_read_latency or max_write_latency"
        ));
    }
    Ok(Limit {
        source: at.to_string(),
        test: l.test.clone(),
        workload: l.workload,
        only: only(l.only.as_deref(), at)?,
        floors,
        ceilings,
        severity: l.verdict.unwrap_or(Severity::Fail),
    })
}

/// What a latency figure is expected to be, in words.
const LAT_EXPECTED: &str =
    "\"mean\", \"max\" or a percentile the results hold: p1, p5, p10, p20, ..., p90, p95, p99, p99.5, p99.9, p99.95, p99.99";

fn lat_stat(s: &str) -> Option<LatStat> {
    match s {
        "mean" => Some(LatStat::Mean),
        "max" => Some(LatStat::Max),
        _ => {
            let p: f64 = s.strip_prefix('p')?.parse().ok()?;
            FIO_PERCENTILES.contains(&p).then_some(LatStat::Percentile(p))
        }
    }
}

/// A floor or ceiling on reads (or writes) only where the tests read (or
/// write).
fn direction_measured(
    at: &str,
    key: &str,
    read: bool,
    reads: bool,
    writes: bool,
    tests: &[&TestSpec],
) -> Result<(), ConfigError> {
    if (read && reads) || (!read && writes) {
        return Ok(());
    }
    let names: Vec<&str> = tests.iter().map(|s| s.name.as_str()).collect();
    err(format!(
        "{at}.{key}: the tests it is for ({}) do not {}; expected a limit on what they measure",
        names.join(", "),
        if read { "read" } else { "write" }
    ))
}

fn only(o: Option<&RawOnly>, at: &str) -> Result<DiskFilter, ConfigError> {
    let Some(o) = o else {
        return Ok(DiskFilter::default());
    };
    if let (Some(min), Some(max)) = (&o.min_size, &o.max_size) {
        if min.bytes > max.bytes {
            return err(format!(
                "{at}.only.min_size: {min} is above max_size {max}; expected a range that holds some size"
            ));
        }
    }
    Ok(DiskFilter {
        model: o.model.clone(),
        transport: o.transport.clone(),
        rotational: o.rotational.map(|f| f.0),
        min_size: o.min_size.as_ref().map(|s| s.bytes),
        max_size: o.max_size.as_ref().map(|s| s.bytes),
    })
}

/// The baseline file at `file` (relative to `dir`), checked.
fn read_baseline(file: &str, dir: &Path) -> Result<Baseline, ConfigError> {
    use std::io::Read;
    let at = "acceptance.baseline.file";
    let path = dir.join(file);
    let mut text = String::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_BASELINE_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| ConfigError(format!("{at}: {file:?} cannot be read ({}): {e}", path.display())))?;
    if text.len() as u64 > MAX_BASELINE_BYTES {
        return err(format!(
            "{at}: {file:?} is larger than {MAX_BASELINE_BYTES} bytes; expected a baseline from bootbench-report baseline"
        ));
    }
    let b: Baseline = serde_json::from_str(&text).map_err(|e| {
        ConfigError(format!(
            "{at}: {file:?} is not a {BASELINE_SCHEMA} document: {e}; expected the output of bootbench-report baseline"
        ))
    })?;
    if b.schema != BASELINE_SCHEMA {
        return err(format!(
            "{at}: {file:?} has schema {:?}; expected {BASELINE_SCHEMA:?}",
            b.schema
        ));
    }
    Ok(b)
}
