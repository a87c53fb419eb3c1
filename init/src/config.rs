//! The config file, its validation, and the plan it becomes.
//!
//! ```json
//! { "profile": "quick", "seed": 42,
//!   "targets": ["/dev/loop0", {"path": "/dev/sdb"}, {"serial": "S3Z..."}, {"wwn": "0x5002..."}],
//!   "defaults": { "runtime": "2s" },
//!   "tests": [ {"workload": "rand_read", "name": "optional", "bs": "4k", "iodepth": 32} ],
//!   "destructive": { "confirm": "I understand this destroys data",
//!                    "targets": ["/dev/loop0"], "allow_overwrite_signatures": false } }
//! ```
//!
//! Parsing is strict (`deny_unknown_fields`; serde's messages carry the line
//! and column); every semantic error is one line naming the field path
//! (`tests[2].bs`), the value and what is expected. Validation resolves the
//! targets, expands every test against every target's geometry and decides,
//! per target, whether writes are permitted; nothing is opened for writing.

use std::fmt;

use bench_core::io::Geometry;
use bench_core::plan::{default_name, expand, PlanError};
use bench_core::profile::{profile, PROFILES};
use bench_core::result::TargetInfo;
use bench_core::size::{parse_size, EXPECTED};
use bench_core::spec::{Params, Step, TestSpec, Workload};
use bench_core::units::{Bytes, Nanos};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::identity;
use crate::safety::{self, Destructive, TargetRef, WritePermit};

/// A config error: one line, exit status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError(msg.into()))
}

/// A parameter value as written: a number or a string.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// A non-negative whole number.
    Int(u64),
    /// Any other number (negative or fractional).
    Float(f64),
    /// A string (`"4k"`, `"5s"`).
    Str(String),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(n) => write!(f, "{n}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v))
            }
            #[allow(clippy::cast_precision_loss)] // only reported back in a message
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(u64::try_from(v).map_or(Scalar::Float(v as f64), Scalar::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A target as written: a path string, or an object with exactly one of
/// `path`, `serial`, `wwn`.
#[derive(Clone, Debug, PartialEq)]
pub struct RawTarget(pub TargetObj);

/// The object form of a target.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetObj {
    /// A path.
    #[serde(default)]
    pub path: Option<String>,
    /// A serial number.
    #[serde(default)]
    pub serial: Option<String>,
    /// A world-wide name.
    #[serde(default)]
    pub wwn: Option<String>,
}

impl<'de> Deserialize<'de> for RawTarget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawTarget;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a path string or an object with one of \"path\", \"serial\", \"wwn\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawTarget, E> {
                Ok(RawTarget(TargetObj {
                    path: Some(v.to_string()),
                    ..TargetObj::default()
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawTarget, A::Error> {
                TargetObj::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawTarget)
            }
        }
        d.deserialize_any(V)
    }
}

impl RawTarget {
    /// The reference, or an error naming `at` if not exactly one key is set.
    pub fn to_ref(&self, at: &str) -> Result<TargetRef, ConfigError> {
        let o = &self.0;
        match (&o.path, &o.serial, &o.wwn) {
            (Some(p), None, None) if !p.is_empty() => Ok(TargetRef::Path(p.clone())),
            (None, Some(s), None) if !s.is_empty() => Ok(TargetRef::Serial(s.clone())),
            (None, None, Some(w)) if !w.is_empty() => Ok(TargetRef::Wwn(w.clone())),
            _ => err(format!(
                "{at}: {o:?} is not a target; expected a non-empty path string or an object with exactly one of \"path\", \"serial\", \"wwn\""
            )),
        }
    }
}

macro_rules! param_structs {
    ($($p:ident),* $(,)?) => {
        /// Test parameters as written; every key optional.
        #[derive(Clone, Debug, Default, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct RawParams {
            $(
                #[doc = concat!("`", stringify!($p), "`")]
                #[serde(default)]
                pub $p: Option<Scalar>,
            )*
        }

        /// One test as written: a workload, an optional name, parameters.
        #[derive(Clone, Debug, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct RawTest {
            /// The workload's name.
            pub workload: String,
            /// The test's name (default: from the workload and parameters).
            #[serde(default)]
            pub name: Option<String>,
            $(
                #[doc = concat!("`", stringify!($p), "`")]
                #[serde(default)]
                pub $p: Option<Scalar>,
            )*
        }

        impl RawTest {
            /// The parameters given.
            pub fn params(&self) -> RawParams {
                RawParams { $($p: self.$p.clone(),)* }
            }
        }

        impl RawParams {
            /// The keys given, with their values.
            pub fn entries(&self) -> Vec<(&'static str, &Scalar)> {
                let mut v = Vec::new();
                $(if let Some(x) = &self.$p { v.push((stringify!($p), x)); })*
                v
            }
        }
    };
}

param_structs!(
    bs,
    size,
    offset,
    length,
    zone_bytes,
    runtime,
    ramp_time,
    sample_interval,
    iodepth,
    jobs,
    rwmixread,
    flush_every,
    points,
    seed
);

/// The `destructive` section as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDestructive {
    /// The confirmation phrase.
    #[serde(default)]
    pub confirm: Option<String>,
    /// The targets that may be written.
    #[serde(default)]
    pub targets: Vec<RawTarget>,
    /// Write even over signatures.
    #[serde(default)]
    pub allow_overwrite_signatures: bool,
}

/// The config file as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// A profile's name.
    #[serde(default)]
    pub profile: Option<String>,
    /// The base seed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The targets.
    #[serde(default)]
    pub targets: Vec<RawTarget>,
    /// Parameters applied to every test (only the keys given).
    #[serde(default)]
    pub defaults: Option<RawParams>,
    /// Tests, after the profile's.
    #[serde(default)]
    pub tests: Vec<RawTest>,
    /// Write permission.
    #[serde(default)]
    pub destructive: Option<RawDestructive>,
    /// What the machine does after an unattended run: `poweroff` (the
    /// default), `reboot` or `halt`. Ignored by the live command.
    #[serde(default)]
    pub on_finish: Option<String>,
}

/// The values of `on_finish`.
pub const ON_FINISH: [&str; 3] = ["poweroff", "reboot", "halt"];

/// Check `on_finish`: `at` names where the value came from.
pub fn check_on_finish(v: &str, at: &str) -> Result<(), ConfigError> {
    if ON_FINISH.contains(&v) {
        Ok(())
    } else {
        err(format!(
            "{at}: {v:?} is not an on_finish action; expected one of {}",
            ON_FINISH.join(", ")
        ))
    }
}

/// Parse a config's text; errors name the line and column.
pub fn parse(text: &str, source: &str) -> Result<RawConfig, ConfigError> {
    serde_json::from_str(text).map_err(|e| ConfigError(format!("{source}: {e}")))
}

/// A duration: `"5s"`, `"500ms"`, `"2m"`, `"100us"`, `"1h"`, `"10ns"`, or a
/// number of seconds (fractions allowed).
pub fn parse_duration(v: &Scalar) -> Result<Nanos, &'static str> {
    const EXPECT: &str = "a duration such as 5s, 500ms, 2m, 100us, or a number of seconds";
    let (num, mult): (&str, u64) = match v {
        Scalar::Int(n) => return n.checked_mul(1_000_000_000).map(Nanos).ok_or(EXPECT),
        Scalar::Float(x) => return secs_f64(*x).ok_or(EXPECT),
        Scalar::Str(s) => {
            let s = s.trim();
            let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
            let (num, unit) = s.split_at(split);
            let mult = match unit {
                "" | "s" => 1_000_000_000,
                "ms" => 1_000_000,
                "us" | "µs" => 1_000,
                "ns" => 1,
                "m" | "min" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                _ => return Err(EXPECT),
            };
            (num, mult)
        }
    };
    if num.is_empty() {
        return Err(EXPECT);
    }
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult).map(Nanos).ok_or(EXPECT);
    }
    let x: f64 = num.parse().map_err(|_| EXPECT)?;
    #[allow(clippy::cast_precision_loss)] // mult <= 3.6e12, exact in f64
    let ns = x * mult as f64;
    secs_f64(ns / 1e9).ok_or(EXPECT)
}

fn secs_f64(x: f64) -> Option<Nanos> {
    let ns = (x * 1e9).round();
    // Below 1.8e19 (< u64::MAX) and not negative: the cast is exact to the ns.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (x.is_finite() && (0.0..1.8e19).contains(&ns)).then_some(Nanos(ns as u64))
}

fn size_of(v: &Scalar, at: &str) -> Result<u64, ConfigError> {
    match v {
        Scalar::Int(n) => Ok(*n),
        Scalar::Str(s) => {
            parse_size(s.trim()).map_err(|e| ConfigError(format!("{at}: {v} is not a size: {e}; expected {EXPECTED}")))
        }
        Scalar::Float(_) => err(format!("{at}: {v} is not a size; expected {EXPECTED}")),
    }
}

fn int_of(v: &Scalar, at: &str, expected: &str) -> Result<u64, ConfigError> {
    match v {
        Scalar::Int(n) => Ok(*n),
        Scalar::Str(s) => s
            .trim()
            .parse::<u64>()
            .or_else(|_| err(format!("{at}: {v} is not a whole number; expected {expected}"))),
        Scalar::Float(_) => err(format!("{at}: {v} is not a whole number; expected {expected}")),
    }
}

fn u32_of(v: &Scalar, at: &str, expected: &str, min: u32) -> Result<u32, ConfigError> {
    let n = int_of(v, at, expected)?;
    match u32::try_from(n) {
        Ok(n) if n >= min => Ok(n),
        _ => err(format!("{at}: {v} is out of range; expected {expected}")),
    }
}

fn dur_of(v: &Scalar, at: &str) -> Result<Nanos, ConfigError> {
    parse_duration(v).map_err(|e| ConfigError(format!("{at}: {v} is not a duration; expected {e}")))
}

/// Apply the parameters given in `raw` (only those) to `p`; `at` is the
/// field path of `raw` (`defaults`, `tests[2]`).
pub fn apply(p: &mut Params, raw: &RawParams, at: &str) -> Result<(), ConfigError> {
    for (key, v) in raw.entries() {
        let at = format!("{at}.{key}");
        let at = at.as_str();
        match key {
            "bs" => p.bs = Bytes(size_of(v, at)?),
            "size" => p.size = Some(Bytes(size_of(v, at)?)),
            "offset" => p.offset = Bytes(size_of(v, at)?),
            "length" => p.length = Some(Bytes(size_of(v, at)?)),
            "zone_bytes" => p.zone_bytes = Bytes(size_of(v, at)?),
            "runtime" => p.runtime = Some(dur_of(v, at)?),
            "ramp_time" => p.ramp_time = dur_of(v, at)?,
            "sample_interval" => {
                let d = dur_of(v, at)?;
                if d.0 == 0 {
                    return err(format!("{at}: {v} is out of range; expected a duration above 0"));
                }
                p.sample_interval = d;
            }
            "iodepth" => p.iodepth = u32_of(v, at, "a whole number from 1 to 4294967295", 1)?,
            "jobs" => p.jobs = u32_of(v, at, "a whole number from 1 to 4294967295", 1)?,
            "points" => p.points = u32_of(v, at, "a whole number from 1 to 4294967295", 1)?,
            "rwmixread" => {
                let expected = "a percentage of reads from 0 to 100";
                p.rwmixread = match u8::try_from(int_of(v, at, expected)?) {
                    Ok(n) if n <= 100 => n,
                    _ => return err(format!("{at}: {v} is out of range; expected {expected}")),
                };
            }
            "flush_every" => {
                let expected = "a whole number of writes from 1";
                p.flush_every = match int_of(v, at, expected)? {
                    0 => return err(format!("{at}: {v} is out of range; expected {expected}")),
                    n => n,
                };
            }
            "seed" => p.seed = int_of(v, at, "a whole number from 0 to 18446744073709551615")?,
            _ => unreachable!("every key of RawParams is handled: {key}"),
        }
    }
    Ok(())
}

/// Where a test came from: errors in the user's own tests are fatal, a
/// profile's test that does not fit a target is skipped there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The n-th test of the profile.
    Profile(usize),
    /// `tests[n]`.
    User(usize),
}

/// The command line's say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--profile`: replaces the config's profile.
    pub profile: Option<String>,
    /// `--target`: if any, they replace the config's targets.
    pub targets: Vec<String>,
    /// `--simulate`: targets are simulated disks.
    pub simulate: bool,
}

/// The tests of a config, in order: the profile's then `tests`, with
/// `seed` and `defaults` applied and names made unique.
pub fn tests_of(raw: &RawConfig, profile_name: Option<&str>) -> Result<Vec<(TestSpec, Origin)>, ConfigError> {
    let mut out: Vec<(TestSpec, Origin)> = Vec::new();
    let defaults = raw.defaults.clone().unwrap_or_default();
    let mut base = Params::defaults();
    if let Some(seed) = raw.seed {
        base.seed = seed;
    }
    apply(&mut base, &defaults, "defaults")?;
    if let Some(name) = profile_name {
        let Some(tests) = profile(name) else {
            return err(format!(
                "profile: {name:?} is not a profile; expected one of {}",
                PROFILES.join(", ")
            ));
        };
        for (i, mut spec) in tests.into_iter().enumerate() {
            if let Some(seed) = raw.seed {
                spec.params.seed = seed;
            }
            apply(&mut spec.params, &defaults, "defaults")?;
            out.push((spec, Origin::Profile(i)));
        }
    }
    for (i, t) in raw.tests.iter().enumerate() {
        let at = format!("tests[{i}]");
        let Some(workload) = Workload::from_name(&t.workload) else {
            let names: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
            return err(format!(
                "{at}.workload: {:?} is not a workload; expected one of {}",
                t.workload,
                names.join(", ")
            ));
        };
        let mut params = base.clone();
        apply(&mut params, &t.params(), &at)?;
        let mut spec = TestSpec {
            name: String::new(),
            workload,
            params,
        };
        spec.name = match &t.name {
            Some(n) if n.trim().is_empty() => return err(format!("{at}.name: {n:?} is empty; expected a name")),
            Some(n) => n.clone(),
            None => default_name(&spec),
        };
        out.push((spec, Origin::User(i)));
    }
    if out.is_empty() {
        return err(
            "nothing to run: give a profile (\"profile\" in the config or --profile NAME) or \"tests\"; profiles: "
                .to_string()
                + &PROFILES.join(", "),
        );
    }
    // Unique names: a repeated name gets _2, _3, ...
    let mut seen = std::collections::HashMap::<String, u32>::new();
    for (spec, _) in &mut out {
        let n = seen.entry(spec.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            spec.name = format!("{}_{}", spec.name, n);
        }
    }
    Ok(out)
}

/// A simulated disk as named on the command line: `sim:hdd:1G`, `sim:ssd:256M`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimSpec {
    /// True for the HDD model, false for the SSD model.
    pub hdd: bool,
    /// Size, bytes.
    pub size: u64,
}

/// The simulated targets used when `--simulate` names none.
pub const DEFAULT_SIM_TARGETS: [&str; 2] = ["sim:hdd:1G", "sim:ssd:256M"];

/// Parse `sim:hdd:SIZE` / `sim:ssd:SIZE`.
pub fn parse_sim(path: &str, at: &str) -> Result<SimSpec, ConfigError> {
    let expected = "sim:hdd:SIZE or sim:ssd:SIZE (e.g. sim:hdd:1G)";
    let mut parts = path.splitn(3, ':');
    let (Some("sim"), Some(kind), Some(size)) = (parts.next(), parts.next(), parts.next()) else {
        return err(format!("{at}: {path:?} is not a simulated disk; expected {expected}"));
    };
    let hdd = match kind {
        "hdd" => true,
        "ssd" => false,
        _ => return err(format!("{at}: {path:?} is not a simulated disk; expected {expected}")),
    };
    let size =
        parse_size(size).map_err(|e| ConfigError(format!("{at}: {size:?} is not a size: {e}; expected {EXPECTED}")))?;
    if size < 1 << 20 {
        return err(format!(
            "{at}: {path:?} is too small; expected a simulated disk of at least 1M"
        ));
    }
    Ok(SimSpec { hdd, size })
}

/// What to do with one test on one target.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Run these steps.
    Run(Vec<Step>),
    /// Do not run; the reason goes into the results.
    Skip(String),
}

/// One test on one target.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanItem {
    /// Index into [`Plan::targets`].
    pub target: usize,
    /// The test.
    pub spec: TestSpec,
    /// Run or skip.
    pub action: Action,
}

/// A resolved target.
#[derive(Debug)]
pub struct PlannedTarget {
    /// What the system tells of it; `writable` and `write_refusal` filled in.
    pub info: TargetInfo,
    /// Its geometry.
    pub geometry: Geometry,
    /// Permission to write, if granted (never for simulated disks, which
    /// need none).
    pub permit: Option<WritePermit>,
    /// The simulated disk, in `--simulate` mode.
    pub sim: Option<SimSpec>,
}

/// The validated plan: everything a run needs, decided before anything is
/// opened for writing.
#[derive(Debug)]
pub struct Plan {
    /// The profile, if any.
    pub profile: Option<String>,
    /// Where the config came from: a path, or `command-line`.
    pub config_source: String,
    /// The base seed.
    pub seed: u64,
    /// True in `--simulate` mode.
    pub simulated: bool,
    /// The targets, in order.
    pub targets: Vec<PlannedTarget>,
    /// Every test on every target, target by target.
    pub items: Vec<PlanItem>,
}

/// Load a config file (or none: `--profile` alone) and validate it into a plan.
pub fn load(config: Option<&str>, ov: &Overrides) -> Result<Plan, ConfigError> {
    let (raw, source) = match config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| ConfigError(format!("--config: cannot read {path:?}: {e}")))?;
            (parse(&text, path)?, path.to_string())
        }
        None => (RawConfig::default(), "command-line".to_string()),
    };
    validate(&raw, &source, ov)
}

/// Validate a parsed config into a plan: its targets (the command line's
/// replace the config's), see [`plan_with`].
pub fn validate(raw: &RawConfig, source: &str, ov: &Overrides) -> Result<Plan, ConfigError> {
    // The tests first, so that their errors come before target errors.
    tests_of(raw, ov.profile.as_deref().or(raw.profile.as_deref()))?;
    let refs = target_refs(raw, ov)?;
    plan_with(raw, source, ov, &refs, &[])
}

/// The targets a config and command line name, each with the field path
/// that named it: `--target`s if any, else the config's `targets`, else the
/// default simulated disks with `--simulate`; none is an error.
pub fn target_refs(raw: &RawConfig, ov: &Overrides) -> Result<Vec<(TargetRef, String)>, ConfigError> {
    let mut refs: Vec<(TargetRef, String)> = Vec::new();
    if ov.targets.is_empty() {
        for (i, t) in raw.targets.iter().enumerate() {
            let at = format!("targets[{i}]");
            refs.push((t.to_ref(&at)?, at));
        }
    } else {
        for t in &ov.targets {
            if t.is_empty() {
                return err("--target: \"\" is not a target; expected a path");
            }
            refs.push((TargetRef::Path(t.clone()), "--target".to_string()));
        }
    }
    if refs.is_empty() && ov.simulate {
        refs = DEFAULT_SIM_TARGETS
            .iter()
            .map(|p| (TargetRef::Path((*p).to_string()), "--simulate".to_string()))
            .collect();
    }
    if refs.is_empty() {
        return err("targets: none given; expected \"targets\" in the config or --target PATH");
    }
    Ok(refs)
}

/// True if `path` is the disk `never` or one of its partitions (a
/// partition's sysfs directory sits inside its disk's).
fn on_disk(path: &str, never: &str) -> bool {
    if path == never || same_file(path, never) {
        return true;
    }
    let Some(name) = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    else {
        return false;
    };
    let Ok(dir) = std::fs::canonicalize(format!("/sys/class/block/{name}")) else {
        return false;
    };
    if !dir.join("partition").exists() {
        return false;
    }
    let disk = dir
        .parent()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    disk.is_some_and(|d| same_file(&format!("/dev/{d}"), never))
}

/// Validate a parsed config with an explicit list of targets (each with the
/// field path that named it) into a plan. `never` lists disks that may not
/// be targets (the boot stick): a target on one of them is an error.
/// `on_finish` is checked too.
pub fn plan_with(
    raw: &RawConfig,
    source: &str,
    ov: &Overrides,
    refs: &[(TargetRef, String)],
    never: &[String],
) -> Result<Plan, ConfigError> {
    let profile_name = ov.profile.clone().or_else(|| raw.profile.clone());
    let tests = tests_of(raw, profile_name.as_deref())?;
    if let Some(v) = &raw.on_finish {
        check_on_finish(v, "on_finish")?;
    }
    if refs.is_empty() {
        return err("targets: none; expected at least one disk to benchmark");
    }

    let destructive = match &raw.destructive {
        None => None,
        Some(d) => {
            let mut targets = Vec::new();
            for (i, t) in d.targets.iter().enumerate() {
                targets.push(t.to_ref(&format!("destructive.targets[{i}]"))?);
            }
            Some(Destructive {
                confirm: d.confirm.clone(),
                targets,
                allow_overwrite_signatures: d.allow_overwrite_signatures,
            })
        }
    };

    let mut targets: Vec<PlannedTarget> = Vec::new();
    for (r, at) in refs {
        let t = if ov.simulate {
            sim_target(r, at)?
        } else {
            real_target(r, at)?
        };
        if let Some(n) = never.iter().find(|n| on_disk(&t.info.path, n)) {
            return err(format!(
                "{at}: {:?} is on the boot stick {n}; expected another disk (the stick is never a target)",
                t.info.path
            ));
        }
        if targets
            .iter()
            .any(|o| o.info.path == t.info.path || same_file(&o.info.path, &t.info.path))
        {
            return err(format!(
                "{at}: {:?} is named twice; expected each target once",
                t.info.path
            ));
        }
        targets.push(t);
    }

    let mut items = Vec::new();
    for (ti, t) in targets.iter_mut().enumerate() {
        let wants_write = tests.iter().any(|(s, _)| s.workload.writes());
        if wants_write && t.sim.is_none() {
            match safety::grant(
                destructive.as_ref(),
                &t.info.path,
                t.info.serial.as_deref(),
                t.info.wwn.as_deref(),
            ) {
                Ok(p) => t.permit = Some(p),
                Err(r) => t.info.write_refusal = Some(r.to_string()),
            }
        }
        t.info.writable = t.sim.is_some() || t.permit.is_some();
        for (spec, origin) in &tests {
            let action = match expand(spec, &t.geometry) {
                Ok(steps) => {
                    if spec.workload.writes() && !t.info.writable {
                        Action::Skip(
                            t.info
                                .write_refusal
                                .clone()
                                .unwrap_or_else(|| "writes refused".to_string()),
                        )
                    } else {
                        Action::Run(steps)
                    }
                }
                Err(e) => match origin {
                    Origin::User(i) => {
                        let field = match &e {
                            PlanError::NotAligned { field, .. }
                            | PlanError::TooSmall { field, .. }
                            | PlanError::OutOfRange { field, .. } => field,
                        };
                        return err(format!("tests[{i}].{field} ({}) on {}: {e}", spec.name, t.info.path));
                    }
                    Origin::Profile(_) => Action::Skip(format!("does not fit this target: {e}")),
                },
            };
            items.push(PlanItem {
                target: ti,
                spec: spec.clone(),
                action,
            });
        }
    }

    let seed = raw.seed.unwrap_or(Params::defaults().seed);
    Ok(Plan {
        profile: profile_name,
        config_source: source.to_string(),
        seed,
        simulated: ov.simulate,
        targets,
        items,
    })
}

fn same_file(a: &str, b: &str) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn sim_target(r: &TargetRef, at: &str) -> Result<PlannedTarget, ConfigError> {
    let TargetRef::Path(path) = r else {
        return err(format!(
            "{at}: {r} cannot be simulated; expected a path sim:hdd:SIZE or sim:ssd:SIZE"
        ));
    };
    let sim = parse_sim(path, at)?;
    let logical_block = 512;
    let info = TargetInfo {
        path: path.clone(),
        kind: "simulated".to_string(),
        model: Some(
            if sim.hdd {
                "simulated 7200 rpm-like HDD"
            } else {
                "simulated SSD"
            }
            .to_string(),
        ),
        size_bytes: sim.size,
        logical_block_size: logical_block,
        physical_block_size: logical_block,
        rotational: Some(sim.hdd),
        ..TargetInfo::default()
    };
    let geometry = Geometry {
        size: sim.size,
        logical_block,
        physical_block: logical_block,
    };
    Ok(PlannedTarget {
        info,
        geometry,
        permit: None,
        sim: Some(sim),
    })
}

fn real_target(r: &TargetRef, at: &str) -> Result<PlannedTarget, ConfigError> {
    let info = match r {
        TargetRef::Path(p) => {
            if p.starts_with("sim:") {
                return err(format!(
                    "{at}: {p:?} is a simulated disk; expected a real path, or run with --simulate"
                ));
            }
            if let Err(e) = std::fs::metadata(p) {
                return err(format!(
                    "{at}: {p:?} cannot be used: {e}; expected an existing block device or file"
                ));
            }
            identity::describe(p).map_err(|e| ConfigError(format!("{at}: {p:?} cannot be described: {e}")))?
        }
        TargetRef::Serial(_) | TargetRef::Wwn(_) => find_disk(r, at)?,
    };
    let geometry = Geometry {
        size: info.size_bytes,
        logical_block: info.logical_block_size,
        physical_block: info.physical_block_size,
    };
    if geometry.size == 0 {
        return err(format!(
            "{at}: {:?} is empty (0 bytes); expected a target with data",
            info.path
        ));
    }
    Ok(PlannedTarget {
        info,
        geometry,
        permit: None,
        sim: None,
    })
}

/// The whole disk under /sys/class/block whose serial or WWN `r` names.
fn find_disk(r: &TargetRef, at: &str) -> Result<TargetInfo, ConfigError> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/class/block")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut found: Vec<TargetInfo> = Vec::new();
    for name in names {
        if std::path::Path::new(&format!("/sys/class/block/{name}/partition")).exists() {
            continue; // whole disks only
        }
        let path = format!("/dev/{name}");
        let Ok(info) = identity::describe(&path) else { continue };
        if safety::names(r, &path, info.serial.as_deref(), info.wwn.as_deref()) {
            found.push(info);
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => err(format!(
            "{at}: no whole disk has {r}; expected a disk present on this machine"
        )),
        _ => err(format!("{at}: several disks have {r}; expected a unique serial or WWN")),
    }
}

/// The plan in words, as `validate` prints it.
pub fn describe_plan(plan: &Plan) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "plan: config {}, profile {}, seed {}{}",
        plan.config_source,
        plan.profile.as_deref().unwrap_or("none"),
        plan.seed,
        if plan.simulated { ", simulated targets" } else { "" }
    );
    for (ti, t) in plan.targets.iter().enumerate() {
        let i = &t.info;
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".to_string());
        let _ = writeln!(
            s,
            "target {}: {} {}, model {}, serial {}, wwn {}, {} B ({:.1} MiB), logical block {} B, physical block {} B, writable: {}",
            i.path,
            i.kind,
            opt(&i.name),
            opt(&i.model),
            opt(&i.serial),
            opt(&i.wwn),
            i.size_bytes,
            mib(i.size_bytes),
            i.logical_block_size,
            i.physical_block_size,
            if i.writable { "yes".to_string() } else { format!("no{}", i.write_refusal.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()) }
        );
        for (n, item) in plan.items.iter().filter(|it| it.target == ti).enumerate() {
            let _ = write!(
                s,
                "  test {}: {} ({}): ",
                n + 1,
                item.spec.name,
                item.spec.workload.name()
            );
            match &item.action {
                Action::Skip(why) => {
                    let _ = writeln!(s, "skipped: {why}");
                }
                Action::Run(steps) => {
                    let labels: Vec<String> = steps
                        .iter()
                        .map(|st| {
                            let bound = match (st.limit.runtime, st.limit.bytes, st.limit.ios) {
                                (Some(t), _, _) => format!("{} ms", t.0 / 1_000_000),
                                (None, Some(b), _) => format!("{b} B/job"),
                                (None, None, Some(n)) => format!("{n} I/Os/job"),
                                _ => "unbounded".to_string(),
                            };
                            format!(
                                "{} (bs {} B, QD{}, {} job(s), {})",
                                st.label, st.bs, st.iodepth, st.jobs, bound
                            )
                        })
                        .collect();
                    let _ = writeln!(s, "{} step(s): {}", steps.len(), labels.join(", "));
                }
            }
        }
    }
    s
}

#[allow(clippy::cast_precision_loss)] // display only
fn mib(b: u64) -> f64 {
    b as f64 / 1_048_576.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawConfig {
        parse(text, "t.json").unwrap()
    }

    #[test]
    fn parses_the_documented_example() {
        let c = raw(r#"{ "profile": "quick", "seed": 42,
                 "targets": ["/dev/loop0", {"path": "/dev/sdb"}, {"serial": "S3Z"}, {"wwn": "0x5002"}],
                 "defaults": { "runtime": "2s", "bs": "8k" },
                 "tests": [ {"workload": "rand_read", "name": "x", "iodepth": 32, "bs": 4096} ],
                 "destructive": { "confirm": "I understand this destroys data", "targets": ["/dev/loop0"],
                                  "allow_overwrite_signatures": false } }"#);
        assert_eq!(c.profile.as_deref(), Some("quick"));
        assert_eq!(c.seed, Some(42));
        let refs: Vec<TargetRef> = c.targets.iter().map(|t| t.to_ref("t").unwrap()).collect();
        assert_eq!(
            refs,
            vec![
                TargetRef::Path("/dev/loop0".into()),
                TargetRef::Path("/dev/sdb".into()),
                TargetRef::Serial("S3Z".into()),
                TargetRef::Wwn("0x5002".into())
            ]
        );
        assert_eq!(c.tests[0].iodepth, Some(Scalar::Int(32)));
        assert_eq!(c.destructive.unwrap().confirm.as_deref(), Some(safety::CONFIRM_PHRASE));
    }

    #[test]
    fn syntax_and_unknown_keys_are_errors_with_position() {
        let cases = [
            ("{\"profile\": \"quick\",}", "line 1"),
            ("{\"profil\": \"quick\"}", "unknown field `profil`"),
            (
                "{\"tests\": [{\"workload\": \"rand_read\", \"bsize\": 4}]}",
                "unknown field `bsize`",
            ),
            ("{\"defaults\": {\"iodeph\": 4}}", "unknown field `iodeph`"),
            (
                "{\"targets\": [{\"path\": \"/x\", \"colour\": 1}]}",
                "unknown field `colour`",
            ),
            ("{\"destructive\": {\"confrim\": \"x\"}}", "unknown field `confrim`"),
            ("{\"tests\": [{\"bs\": 4}]}", "missing field `workload`"),
        ];
        for (text, want) in cases {
            let e = parse(text, "t.json").unwrap_err().0;
            assert!(
                e.contains(want) && e.contains("t.json") && e.contains("column"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn target_forms() {
        let bad = [
            r#"{"targets":[{}]}"#,
            r#"{"targets":[{"path":"/a","serial":"b"}]}"#,
            r#"{"targets":[""]}"#,
        ];
        for text in bad {
            let e = raw(text).targets[0].to_ref("targets[0]").unwrap_err().0;
            assert!(e.starts_with("targets[0]: "), "{e}");
        }
        assert!(parse(r#"{"targets":[3]}"#, "t").is_err());
    }

    #[test]
    fn durations() {
        let ok = [
            (Scalar::Str("5s".into()), 5_000_000_000),
            (Scalar::Str("500ms".into()), 500_000_000),
            (Scalar::Str("2m".into()), 120_000_000_000),
            (Scalar::Str("100us".into()), 100_000),
            (Scalar::Str("7ns".into()), 7),
            (Scalar::Str("1.5s".into()), 1_500_000_000),
            (Scalar::Str("3".into()), 3_000_000_000),
            (Scalar::Int(2), 2_000_000_000),
            (Scalar::Float(0.25), 250_000_000),
        ];
        for (v, ns) in ok {
            assert_eq!(parse_duration(&v), Ok(Nanos(ns)), "{v}");
        }
        for v in [
            Scalar::Str("5q".into()),
            Scalar::Str("".into()),
            Scalar::Str("s".into()),
            Scalar::Float(-1.0),
        ] {
            assert!(parse_duration(&v).is_err(), "{v}");
        }
    }

    #[test]
    fn params_apply_each_key_and_name_the_field_on_error() {
        let c = raw(
            r#"{"tests":[{"workload":"rand_rw","bs":"16k","size":"1M","offset":"4k","length":"8M","zone_bytes":"2M",
                "runtime":"3s","ramp_time":"500ms","sample_interval":"100ms","iodepth":"8","jobs":2,"rwmixread":60,
                "flush_every":4,"points":5,"seed":9}]}"#,
        );
        let t = tests_of(&c, None).unwrap();
        let p = &t[0].0.params;
        assert_eq!(p.bs, Bytes(16384));
        assert_eq!(p.size, Some(Bytes(1 << 20)));
        assert_eq!(p.offset, Bytes(4096));
        assert_eq!(p.length, Some(Bytes(8 << 20)));
        assert_eq!(p.zone_bytes, Bytes(2 << 20));
        assert_eq!(p.runtime, Some(Nanos(3_000_000_000)));
        assert_eq!(p.ramp_time, Nanos(500_000_000));
        assert_eq!(p.sample_interval, Nanos(100_000_000));
        assert_eq!(
            (p.iodepth, p.jobs, p.rwmixread, p.flush_every, p.points, p.seed),
            (8, 2, 60, 4, 5, 9)
        );

        let bad = [
            (
                r#"{"tests":[{"workload":"rand_read"},{"workload":"rand_read","bs":"4q"}]}"#,
                "tests[1].bs: \"4q\"",
            ),
            (
                r#"{"tests":[{"workload":"rand_read","iodepth":0}]}"#,
                "tests[0].iodepth: 0",
            ),
            (
                r#"{"tests":[{"workload":"rand_read","iodepth":-3}]}"#,
                "tests[0].iodepth: -3",
            ),
            (
                r#"{"tests":[{"workload":"rand_rw","rwmixread":101}]}"#,
                "tests[0].rwmixread: 101",
            ),
            (
                r#"{"tests":[{"workload":"rand_read","runtime":"5 parsecs"}]}"#,
                "tests[0].runtime: \"5 parsecs\"",
            ),
            (
                r#"{"tests":[{"workload":"rand_read","size":1.5}]}"#,
                "tests[0].size: 1.5",
            ),
            (
                r#"{"tests":[{"workload":"rand_reed"}]}"#,
                "tests[0].workload: \"rand_reed\"",
            ),
            (
                r#"{"defaults":{"bs":"x"},"tests":[{"workload":"rand_read"}]}"#,
                "defaults.bs: \"x\"",
            ),
            (r#"{"profile":"fast"}"#, "profile: \"fast\""),
            (r#"{}"#, "nothing to run"),
        ];
        for (text, want) in bad {
            let e = tests_of(&raw(text), raw(text).profile.as_deref()).unwrap_err().0;
            assert!(e.starts_with(want), "{text}: {e}");
        }
        // The size message says what is expected.
        let e = tests_of(&raw(bad[0].0), None).unwrap_err().0;
        assert!(e.contains(EXPECTED), "{e}");
    }

    #[test]
    fn defaults_seed_and_names() {
        let c = raw(r#"{"seed": 7, "defaults": {"iodepth": 4},
                "tests":[{"workload":"rand_read"},{"workload":"rand_read"},{"workload":"seq_read","iodepth":1,"name":"mine"}]}"#);
        let t = tests_of(&c, None).unwrap();
        assert_eq!(t[0].0.params.iodepth, 4);
        assert_eq!(t[0].0.params.seed, 7);
        assert_eq!(t[2].0.params.iodepth, 1);
        assert_eq!(t[2].0.name, "mine");
        assert_ne!(t[0].0.name, t[1].0.name, "names are unique");
        assert!(t[1].0.name.starts_with(&t[0].0.name));
        assert_eq!(t[0].1, Origin::User(0));
    }

    #[test]
    fn on_finish_key() {
        for v in ON_FINISH {
            let c = raw(&format!(r#"{{"profile":"quick","on_finish":"{v}"}}"#));
            assert_eq!(c.on_finish.as_deref(), Some(v));
            let ov = Overrides {
                simulate: true,
                ..Overrides::default()
            };
            assert!(validate(&c, "t.json", &ov).is_ok(), "{v}");
        }
        let c = raw(r#"{"profile":"quick","on_finish":"explode"}"#);
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        let e = validate(&c, "t.json", &ov).unwrap_err().0;
        assert!(e.starts_with("on_finish: \"explode\""), "{e}");
        assert!(e.contains("poweroff, reboot, halt"), "{e}");
        assert!(parse(r#"{"on_finish": 3}"#, "t.json").is_err());
    }

    #[test]
    fn plan_with_explicit_targets_and_the_stick_excluded() {
        let c = raw(r#"{"profile":"quick"}"#);
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        let refs = vec![
            (TargetRef::Path("sim:hdd:1G".into()), "discovered".to_string()),
            (TargetRef::Path("sim:ssd:64M".into()), "discovered".to_string()),
        ];
        let p = plan_with(&c, "stick", &ov, &refs, &[]).unwrap();
        assert_eq!(p.targets.len(), 2);
        assert_eq!(p.config_source, "stick");
        assert!(p.items.iter().any(|i| i.target == 1));
        // A target on a disk that may never be one is an error naming it.
        let e = plan_with(&c, "stick", &ov, &refs, &["sim:ssd:64M".to_string()])
            .unwrap_err()
            .0;
        assert!(e.starts_with("discovered: \"sim:ssd:64M\" is on the boot stick"), "{e}");
        assert!(plan_with(&c, "stick", &ov, &[], &[])
            .unwrap_err()
            .0
            .starts_with("targets: none"));
        // The same as validate for a config with targets.
        let c2 = raw(r#"{"profile":"quick","targets":["sim:hdd:1G"]}"#);
        let via_validate = validate(&c2, "t", &ov).unwrap();
        let via_plan = plan_with(&c2, "t", &ov, &target_refs(&c2, &ov).unwrap(), &[]).unwrap();
        assert_eq!(via_validate.items, via_plan.items);
    }

    #[test]
    fn partitions_are_on_their_disk() {
        for (p, d, want) in [
            ("/dev/sdb", "/dev/sdb", true),
            ("sim:ssd:64M", "sim:ssd:64M", true),
            ("/nonexistent/sdb1", "/nonexistent/sdb", false),
            ("/dev/null", "/dev/zero", false),
        ] {
            assert_eq!(on_disk(p, d), want, "{p} on {d}");
        }
        // A real partition of the host's first disk, where there is one.
        if let Some((part, disk)) = std::fs::read_dir("/sys/class/block").ok().and_then(|rd| {
            rd.filter_map(Result::ok).find_map(|e| {
                let dir = std::fs::canonicalize(e.path()).ok()?;
                dir.join("partition").exists().then(|| {
                    let disk = dir.parent()?.file_name()?.to_string_lossy().into_owned();
                    Some((
                        format!("/dev/{}", e.file_name().to_string_lossy()),
                        format!("/dev/{disk}"),
                    ))
                })?
            })
        }) {
            if std::path::Path::new(&part).exists() {
                assert!(on_disk(&part, &disk), "{part} on {disk}");
                assert!(!on_disk(&disk, &part), "{disk} is not on {part}");
            }
        }
    }

    #[test]
    fn sim_targets() {
        assert_eq!(
            parse_sim("sim:hdd:1G", "x"),
            Ok(SimSpec {
                hdd: true,
                size: 1 << 30
            })
        );
        assert_eq!(
            parse_sim("sim:ssd:256M", "x"),
            Ok(SimSpec {
                hdd: false,
                size: 256 << 20
            })
        );
        for bad in ["sim:tape:1G", "sim:hdd", "sim:hdd:4q", "/dev/sda", "sim:hdd:1k"] {
            assert!(
                parse_sim(bad, "--target").unwrap_err().0.starts_with("--target: "),
                "{bad}"
            );
        }
    }
}
