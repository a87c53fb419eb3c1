//! The config's `acceptance` section checked against the plan's tests into
//! `bench_core::verdict::acceptance::Rules` (as written: [`RawAcceptance`]).
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

use std::path::Path;

use bench_core::document::result::Metric;
use bench_core::engine::hist::FIO_PERCENTILES;
use bench_core::spec::{TestSpec, Workload};
use bench_core::verdict::acceptance::{
    directions, Baseline, BaselineRule, BurnRules, Ceiling, Direction, DiskFilter, HealthRules, LatStat, Limit,
    PeerRule, Rules, ScanRules, Severity, BASELINE_SCHEMA,
};

pub use super::acceptance_raw::*;
use super::raw::{err, ConfigError};
use super::value::{Flag, Obj};

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
    if let Some(Obj(sc)) = &raw.surface_scan {
        let d = ScanRules::defaults();
        let slow_ms = sc.slow_ms.as_ref().map_or(d.slow_ms, |w| w.n);
        if !bench_core::passes::scan::CLASS_BOUNDS_MS.contains(&slow_ms) {
            return err(format!(
                "acceptance.surface_scan.slow_ms: {slow_ms} is not a time class's bound; expected one of the time classes' bounds: 5, 20, 50, 150 or 500 (milliseconds)"
            ));
        }
        rules.surface_scan = ScanRules {
            unreadable: sc.unreadable.unwrap_or(d.unreadable),
            slow: sc.slow.unwrap_or(d.slow),
            slow_ms,
        };
    }
    rules.steady_state = raw.steady_state.unwrap_or(Severity::Warn);
    rules.zones = raw.zones.unwrap_or(Severity::Fail);
    rules.link_speed = raw.link_speed.unwrap_or(Severity::Warn);
    rules.link_errors = raw.link_errors.unwrap_or(Severity::Fail);
    if let Some(Obj(b)) = &raw.burn_in {
        let d = BurnRules::defaults();
        rules.burn_in = BurnRules {
            bad: b.bad.unwrap_or(d.bad),
            mismatched: b.mismatched.unwrap_or(d.mismatched),
        };
    }
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
        farm_hours: on(h.farm_hours),
        ocp: on(h.ocp),
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
    if let Some(cached) = tests.iter().find(|s| s.workload == Workload::CachedRead) {
        return err(format!(
            "{at}: {} is a cached_read test, which measures the page cache, not the disk; expected a test that measures the disk",
            cached.name
        ));
    }
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
    crate::disks::file::open_regular(&path)
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
    b.check().map_err(|why| ConfigError(format!("{at}: {file:?}: {why}")))?;
    Ok(b)
}
