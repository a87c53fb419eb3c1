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
use bench_core::result::{StackInfo, TargetInfo};
use bench_core::sim::{SimDisk, SimModel};
use bench_core::size::{parse_size, EXPECTED};
use bench_core::spec::{Params, Step, TestSpec, Workload};
use bench_core::units::{Bytes, Nanos};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::identity::{self, DeviceId};
use crate::safety::{self, Destructive, Grant, TargetRef};

/// A config error: one line, exit status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError(escape_controls(&msg.into())))
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
    /// `true` or `false` (`verify`).
    Bool(bool),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(n) => write!(f, "{n}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Str(s) => write!(f, "{s:?}"),
            Scalar::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number, a string or a boolean")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
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
            _ => {
                // As written (JSON), not as Rust's Debug shows the struct.
                let shown: serde_json::Map<String, serde_json::Value> =
                    [("path", &o.path), ("serial", &o.serial), ("wwn", &o.wwn)]
                        .into_iter()
                        .filter_map(|(k, v)| v.as_deref().map(|v| (k.to_string(), serde_json::Value::from(v))))
                        .collect();
                err(format!(
                    "{at}: {} is not a target; expected a non-empty path string or an object with exactly one of \"path\", \"serial\", \"wwn\"",
                    serde_json::Value::Object(shown)
                ))
            }
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
    seed,
    verify
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
    /// md arrays to assemble from member disks (contract F).
    #[serde(default)]
    pub arrays: Vec<RawArray>,
    /// device-mapper layers over disks, arrays or other layers.
    #[serde(default)]
    pub layers: Vec<RawLayer>,
    /// After the per-target tests, run each test on every disk at once.
    #[serde(default)]
    pub all_at_once: bool,
    /// For testing only: every test's deadline, replacing the one derived
    /// from its plan (`bench_core::plan::deadline`), e.g. `"5s"`.
    #[serde(default)]
    pub test_deadline: Option<Scalar>,
}

/// One md array as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArray {
    /// Its name, `[a-z0-9_-]{1,32}`.
    pub name: String,
    /// `linear`, `raid0`, `raid1`, `raid5`, `raid6` or `raid10`.
    pub level: String,
    /// Member disks, in order.
    pub members: Vec<RawTarget>,
    /// Chunk size (default 512k; a power of two, at least 4k).
    #[serde(default)]
    pub chunk: Option<Scalar>,
    /// raid5/raid6: `left-asymmetric`, `left-symmetric` (default),
    /// `right-asymmetric`, `right-symmetric`; raid10: `near2` (default),
    /// `far2`, `offset2`.
    #[serde(default)]
    pub layout: Option<String>,
}

/// One device-mapper layer as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLayer {
    /// Its name, `[a-z0-9_-]{1,32}`.
    pub name: String,
    /// `crypt` or `linear`.
    pub kind: String,
    /// What it sits on: an array's or layer's name, or a disk (path string,
    /// or an object with one of `path`, `serial`, `wwn`).
    pub on: RawTarget,
    /// crypt: the cipher (only `aes-xts-plain64`, LUKS2's default).
    #[serde(default)]
    pub cipher: Option<String>,
    /// crypt: key size in bits, 256 or 512 (default 512).
    #[serde(default)]
    pub key_bits: Option<u32>,
    /// crypt: bypass the read workqueue.
    #[serde(default)]
    pub no_read_workqueue: Option<bool>,
    /// crypt: bypass the write workqueue.
    #[serde(default)]
    pub no_write_workqueue: Option<bool>,
    /// crypt: encryption sector size, 512 to 4096, a power of two (default 512).
    #[serde(default)]
    pub sector_size: Option<u32>,
    /// linear: where the data starts on the device beneath (default 1M, as LVM).
    #[serde(default)]
    pub offset: Option<Scalar>,
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
    let fail = |e: &dyn fmt::Display| ConfigError(escape_controls(&format!("{source}: {e}")));
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| fail(&e))?;
    // serde's derived structs read a JSON list too, field by field in order
    // (`["quick", 42]` would be a config with a profile and a seed): where
    // the config has an object, a list is refused.
    objects_only(&value).map_err(|e| fail(&e))?;
    // serde_path_to_error: a wrong type names its field (`tests[0].seed:
    // invalid type: string "42", expected u64 at line 1 column 13`).
    let mut de = serde_json::Deserializer::from_str(text);
    let config = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            fail(e.inner())
        } else {
            fail(&format_args!("{path}: {}", e.inner()))
        }
    })?;
    de.end().map_err(|e| fail(&e))?;
    Ok(config)
}

/// `msg` with control characters escaped (`\n`, `\u{1b}`): messages quote
/// keys and names as written (serde's "unknown field" does), and a message
/// must stay one line that cannot drive the console.
fn escape_controls(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    for c in msg.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The config's objects (the whole config, `defaults`, `destructive`, each
/// of `tests`, `arrays`, `layers`) must not be lists: the first that is,
/// with its field path, the value and what is expected.
fn objects_only(config: &serde_json::Value) -> Result<(), String> {
    let list = |at: &str, v: &serde_json::Value, what: &str| -> Result<(), String> {
        if !v.is_array() {
            return Ok(());
        }
        let mut shown = v.to_string();
        if shown.len() > 60 {
            let mut end = 57;
            while !shown.is_char_boundary(end) {
                end -= 1;
            }
            shown.truncate(end);
            shown.push_str("...");
        }
        Err(format!("{at}: {shown} is a list; expected {what}"))
    };
    list(
        "config",
        config,
        "an object such as {\"profile\": \"quick\", \"targets\": [...]}",
    )?;
    list(
        "defaults",
        &config["defaults"],
        "an object of test parameters such as {\"runtime\": \"2s\"}",
    )?;
    list(
        "destructive",
        &config["destructive"],
        "an object {\"confirm\": ..., \"targets\": [...]}",
    )?;
    for (key, what) in [
        ("tests", "an object such as {\"workload\": \"rand_read\"}"),
        (
            "arrays",
            "an object {\"name\": ..., \"level\": ..., \"members\": [...]}",
        ),
        ("layers", "an object {\"name\": ..., \"kind\": ..., \"on\": ...}"),
    ] {
        for (i, item) in config[key].as_array().into_iter().flatten().enumerate() {
            list(&format!("{key}[{i}]"), item, what)?;
        }
    }
    Ok(())
}

/// A duration: `"5s"`, `"500ms"`, `"2m"`, `"100us"`, `"1h"`, `"10ns"`, or a
/// number of seconds (fractions allowed).
pub fn parse_duration(v: &Scalar) -> Result<Nanos, &'static str> {
    const EXPECT: &str = "a duration such as 5s, 500ms, 2m, 100us, or a number of seconds";
    let (num, mult): (&str, u64) = match v {
        Scalar::Int(n) => return n.checked_mul(1_000_000_000).map(Nanos).ok_or(EXPECT),
        Scalar::Float(x) => return secs_f64(*x).ok_or(EXPECT),
        Scalar::Bool(_) => return Err(EXPECT),
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
        Scalar::Float(_) | Scalar::Bool(_) => err(format!("{at}: {v} is not a size; expected {EXPECTED}")),
    }
}

fn int_of(v: &Scalar, at: &str, expected: &str) -> Result<u64, ConfigError> {
    match v {
        Scalar::Int(n) => Ok(*n),
        Scalar::Str(s) => s
            .trim()
            .parse::<u64>()
            .or_else(|_| err(format!("{at}: {v} is not a whole number; expected {expected}"))),
        Scalar::Float(_) | Scalar::Bool(_) => err(format!("{at}: {v} is not a whole number; expected {expected}")),
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
            "verify" => {
                p.verify = match v {
                    Scalar::Bool(b) => *b,
                    _ => return err(format!("{at}: {v} is not a boolean; expected true or false")),
                }
            }
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
            // `verify` in the defaults applies to the write tests only.
            spec.params.verify &= spec.workload.writes();
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
        if t.verify == Some(Scalar::Bool(true)) && !workload.writes() {
            return err(format!(
                "{at}.verify: true, but {} does not write; expected false (only a write workload verifies what it wrote)",
                workload.name()
            ));
        }
        params.verify &= workload.writes();
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

impl SimSpec {
    /// The simulated disk: the HDD or SSD model of this size, writable (it
    /// holds no data).
    pub fn disk(&self) -> SimDisk {
        let model = if self.hdd {
            SimModel::hdd(self.size)
        } else {
            SimModel::ssd(self.size)
        };
        SimDisk::new(model, true)
    }
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
    /// Who it is, as read when the plan was made (real targets only): what
    /// a grant is bound to, and what an array's member is checked against
    /// before it is assembled.
    pub id: Option<DeviceId>,
    /// Permission to write, if granted (never for simulated disks, which
    /// need none): claimed for each test run that may write.
    pub grant: Option<Grant>,
    /// Set once this run has claimed the target for writing: later claims
    /// check its identity only (what it holds is this run's own), and it
    /// gets bootbench's scratch label after the run.
    pub written: bool,
    /// The simulated disk, in `--simulate` mode.
    pub sim: Option<SimSpec>,
    /// Why the target is absent (a disk the config names by serial, WWN or
    /// path that this machine lacks): its tests are skipped with this
    /// reason and the run's status is `error`; everything else runs.
    pub missing: Option<String>,
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
    /// Arrays and layers, in the order they are assembled; their targets
    /// come after every disk's in `targets`.
    pub stacks: Vec<PlannedStack>,
    /// Run each test on every disk at once after the per-target tests.
    pub all_at_once: bool,
    /// For testing only (config key `test_deadline`): every test's
    /// deadline, instead of the one derived from its plan.
    pub test_deadline: Option<Nanos>,
}

impl Plan {
    /// The stack whose target is `ti`, if any.
    pub fn stack_of(&self, ti: usize) -> Option<&PlannedStack> {
        self.stacks.iter().find(|s| s.target == ti)
    }

    /// True if target `ti` is a disk (or file) rather than an array or layer.
    pub fn is_disk(&self, ti: usize) -> bool {
        self.stack_of(ti).is_none()
    }
}

pub use crate::dm::Mode;
use crate::md::MdLayout;
/// An md RAID level (the one type md assembles with).
pub use crate::md::MdLevel as Level;

/// The default chunk size, bytes.
pub const DEFAULT_CHUNK: u32 = 512 << 10;
/// The smallest chunk, bytes: raid5/6 and raid10 need a multiple of the
/// page size (4 KiB on x86-64: `md/raid:... invalid chunk size`, `chunk size
/// must be at least PAGE_SIZE`), raid0 a multiple of the members' logical
/// block size.
pub const MIN_CHUNK: u32 = 4 << 10;
/// The largest chunk, bytes: md takes the chunk as a signed 32-bit byte
/// count (`mdu_array_info_t.chunk_size`, and `chunk_sectors << 9` in
/// raid0 and raid5 is an `int`), so 1 GiB is the largest power of two it
/// can hold; 2 GiB does not reach the kernel at all.
pub const MAX_CHUNK: u32 = 1 << 30;
/// The default offset of a linear layer, bytes (LVM's data starts at 1 MiB).
pub const DEFAULT_LINEAR_OFFSET: u64 = 1 << 20;
/// The one cipher a crypt layer takes (LUKS2's default).
pub const CIPHER: &str = "aes-xts-plain64";

/// What a stack is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StackKind {
    /// An md array over member disks.
    Array {
        /// The level.
        level: Level,
        /// Chunk size, bytes.
        chunk_bytes: u32,
        /// The layout, for raid5/6/10.
        layout: Option<&'static str>,
        /// The members, in order: indices into [`Plan::targets`].
        members: Vec<usize>,
    },
    /// A dm-crypt layer.
    Crypt {
        /// The cipher.
        cipher: String,
        /// Key size, bits.
        key_bits: u32,
        /// `no_read_workqueue`.
        no_read_workqueue: bool,
        /// `no_write_workqueue`.
        no_write_workqueue: bool,
        /// Encryption sector size, bytes.
        sector_size: u32,
        /// The device beneath: an index into [`Plan::targets`].
        on: usize,
    },
    /// A dm linear layer.
    Linear {
        /// Where its data starts on the device beneath, bytes.
        offset_bytes: u64,
        /// The device beneath: an index into [`Plan::targets`].
        on: usize,
    },
}

/// An array or a layer of the plan; assembled in the order of
/// [`Plan::stacks`] (everything beneath a stack comes before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedStack {
    /// Its name in the config.
    pub name: String,
    /// Its target: an index into [`Plan::targets`] (path `md:NAME` or
    /// `dm:NAME` until assembled).
    pub target: usize,
    /// What it is.
    pub kind: StackKind,
    /// Every disk beneath it (through other stacks too), indices into
    /// [`Plan::targets`].
    pub disks: Vec<usize>,
    /// Where the config defines it (`arrays[0]`, `layers[1]`).
    pub at: String,
    /// How it was assembled: read-only unless every disk beneath may be
    /// written; `None` until assembled.
    pub mode: Option<Mode>,
}

impl PlannedStack {
    /// The targets right beneath it.
    pub fn under(&self) -> Vec<usize> {
        match &self.kind {
            StackKind::Array { members, .. } => members.clone(),
            StackKind::Crypt { on, .. } | StackKind::Linear { on, .. } => vec![*on],
        }
    }
}

fn check_name(n: &str, at: &str) -> Result<(), ConfigError> {
    let ok = (1..=32).contains(&n.len())
        && n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        err(format!(
            "{at}.name: {n:?} is not a stack name; expected 1 to 32 characters of a-z, 0-9, _ and -"
        ))
    }
}

/// An array before its target exists: level, chunk, layout, members.
type Pending = (Level, u32, Option<&'static str>, Vec<usize>);

/// Where a layer sits while the layers are being ordered.
#[derive(Clone)]
enum On {
    Disk(usize),
    Array(usize),
    Layer(usize),
}

/// Booted from the stick, a target (or member) that is a regular file is
/// refused: the only filesystems there are the initramfs and the stick, and
/// the stick is never a target.
fn refuse_file_when_booted(t: &PlannedTarget, at: &str, booted: bool) -> Result<(), ConfigError> {
    if booted && t.info.kind == "file" {
        return err(format!(
            "{at}: {:?} is a regular file; booted from the stick, expected a disk (a block device): \
             a file there lives in the initramfs or on the stick, never a target",
            t.info.path
        ));
    }
    Ok(())
}

/// How the plan looks a disk up: the command line's overrides, the disks
/// that are never targets (the boot stick), whether booted from the stick,
/// and the machine's whole disks.
#[derive(Clone, Copy, Debug)]
struct Lookup<'a> {
    ov: &'a Overrides,
    never: &'a [String],
    booted: bool,
    machine: &'a MachineDisks,
}

/// Resolve a stack member or a layer's disk to a target index, adding it to
/// `targets` if not already there; a disk already in a stack is an error.
fn member_target(
    r: &TargetRef,
    at: &str,
    cx: &Lookup<'_>,
    targets: &mut Vec<PlannedTarget>,
    used: &mut Vec<(usize, String)>,
) -> Result<usize, ConfigError> {
    let Lookup {
        ov,
        never,
        booted,
        machine,
    } = *cx;
    let t = if ov.simulate {
        sim_target(r, at)?
    } else {
        match real_target(r, at, machine)? {
            Resolved::Found(t) => *t,
            Resolved::Absent(why) if !booted => return err(why),
            Resolved::Absent(why) => missing_target(r, why),
        }
    };
    refuse_file_when_booted(&t, at, booted)?;
    if let Some(n) = never.iter().find(|n| on_disk(&t.info.path, n)) {
        return err(format!(
            "{at}: {:?} is on the boot stick {n}; expected another disk (the stick is never a member)",
            t.info.path
        ));
    }
    let ti = match targets
        .iter()
        .position(|o| o.info.path == t.info.path || same_file(&o.info.path, &t.info.path))
    {
        Some(i) => i,
        None => {
            targets.push(t);
            targets.len() - 1
        }
    };
    if let Some((_, first)) = used.iter().find(|(i, _)| *i == ti) {
        return err(format!(
            "{at}: {:?} is already used by {first}; expected each disk in one array or layer",
            targets[ti].info.path
        ));
    }
    used.push((ti, at.to_string()));
    Ok(ti)
}

/// Resolve `arrays` and `layers`: member disks join `targets` (each disk
/// that is a member is a target too), then one target per stack is
/// appended, in dependency order. Every error is found before anything is
/// assembled.
fn resolve_stacks(
    raw: &RawConfig,
    cx: &Lookup<'_>,
    targets: &mut Vec<PlannedTarget>,
) -> Result<Vec<PlannedStack>, ConfigError> {
    if raw.arrays.is_empty() && raw.layers.is_empty() {
        return Ok(Vec::new());
    }
    // Names: valid and unique over arrays and layers.
    let mut names: Vec<(String, String)> = Vec::new();
    let all = raw
        .arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (a.name.clone(), format!("arrays[{i}]")))
        .chain(
            raw.layers
                .iter()
                .enumerate()
                .map(|(i, l)| (l.name.clone(), format!("layers[{i}]"))),
        );
    for (n, at) in all {
        check_name(&n, &at)?;
        if let Some((_, first)) = names.iter().find(|(m, _)| *m == n) {
            return err(format!(
                "{at}.name: {n:?} is already the name of {first}; expected a unique name"
            ));
        }
        names.push((n, at));
    }

    let mut used: Vec<(usize, String)> = Vec::new();
    let mut arrays: Vec<Pending> = Vec::new();
    for (i, a) in raw.arrays.iter().enumerate() {
        let at = format!("arrays[{i}]");
        let Some(level) = Level::parse(&a.level) else {
            let all: Vec<&str> = Level::ALL.iter().map(|l| l.name()).collect();
            return err(format!(
                "{at}.level: {:?} is not a level; expected one of {}",
                a.level,
                all.join(", ")
            ));
        };
        let chunk = match &a.chunk {
            None => DEFAULT_CHUNK,
            Some(v) => {
                let c = size_of(v, &format!("{at}.chunk"))?;
                match u32::try_from(c) {
                    Ok(c) if c.is_power_of_two() && (MIN_CHUNK..=MAX_CHUNK).contains(&c) => c,
                    _ => {
                        return err(format!(
                            "{at}.chunk: {v} is not a chunk size md takes; expected a power of two from 4k to 1G \
                             (md holds the chunk in a signed 32-bit byte count; e.g. 64k, 512k)"
                        ))
                    }
                }
            }
        };
        let layouts: Vec<&'static str> = MdLayout::all_for(level).iter().map(|l| l.name()).collect();
        let layout = match (&a.layout, layouts.as_slice()) {
            (None, []) => None,
            (None, l) => Some(l[0]),
            (Some(v), []) => {
                return err(format!(
                    "{at}.layout: {v:?} is not taken by {}; expected no layout (only raid5, raid6 and raid10 have one)",
                    level.name()
                ))
            }
            (Some(v), l) => match l.iter().find(|x| **x == v.as_str()) {
                Some(x) => Some(*x),
                None => {
                    return err(format!(
                        "{at}.layout: {v:?} is not a {} layout; expected one of {}",
                        level.name(),
                        l.join(", ")
                    ))
                }
            },
        };
        if a.members.len() < level.min_members() {
            return err(format!(
                "{at}.members: {} member(s) are too few for {}; expected at least {}",
                a.members.len(),
                level.name(),
                level.min_members()
            ));
        }
        let mut members = Vec::new();
        for (j, m) in a.members.iter().enumerate() {
            let mat = format!("{at}.members[{j}]");
            let r = m.to_ref(&mat)?;
            if let TargetRef::Path(p) = &r {
                if names.iter().any(|(n, _)| n == p) {
                    return err(format!(
                        "{mat}: {p:?} is an array or layer; expected a disk (members are disks)"
                    ));
                }
            }
            members.push(member_target(&r, &mat, cx, targets, &mut used)?);
        }
        arrays.push((level, chunk, layout, members));
    }

    // Layers: what each sits on.
    let mut ons: Vec<On> = Vec::new();
    for (i, l) in raw.layers.iter().enumerate() {
        let at = format!("layers[{i}].on");
        let r = l.on.to_ref(&at)?;
        let named = match &r {
            TargetRef::Path(p) => raw
                .arrays
                .iter()
                .position(|a| a.name == *p)
                .map(On::Array)
                .or_else(|| raw.layers.iter().position(|x| x.name == *p).map(On::Layer)),
            _ => None,
        };
        let on = match (named, &r) {
            (Some(on), _) => on,
            (None, TargetRef::Path(p)) if !p.contains('/') && !p.starts_with("sim:") => {
                let known: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
                return err(format!(
                    "{at}: {p:?} is not an array, a layer or a disk; expected one of {} or a disk path",
                    known.join(", ")
                ));
            }
            (None, _) => On::Disk(member_target(&r, &at, cx, targets, &mut used)?),
        };
        ons.push(on);
    }
    // Order the layers: each after what it sits on; a loop is an error.
    let mut order: Vec<usize> = Vec::new();
    while order.len() < raw.layers.len() {
        let next = (0..raw.layers.len()).find(|i| {
            !order.contains(i)
                && match ons[*i] {
                    On::Layer(j) => order.contains(&j),
                    _ => true,
                }
        });
        match next {
            Some(i) => order.push(i),
            None => {
                let start = (0..raw.layers.len()).find(|i| !order.contains(i)).unwrap_or(0);
                // Follow "on" from a layer that cannot be placed until a layer repeats.
                let mut path = vec![start];
                let mut cur = start;
                while let On::Layer(j) = ons[cur] {
                    if let Some(k) = path.iter().position(|x| *x == j) {
                        path.drain(..k);
                        path.push(j);
                        break;
                    }
                    path.push(j);
                    cur = j;
                }
                let first = path[0];
                let chain: Vec<&str> = path.iter().map(|i| raw.layers[*i].name.as_str()).collect();
                return err(format!(
                    "layers[{first}].on: {:?} makes a cycle ({}); expected layers that stack without a loop",
                    raw.layers[first].on.0.path.clone().unwrap_or_default(),
                    chain.join(" -> ")
                ));
            }
        }
    }

    // The stacks' targets, arrays first, then the layers in order.
    let mut stacks: Vec<PlannedStack> = Vec::new();
    let mut array_target: Vec<usize> = Vec::new();
    let mut layer_target: Vec<Option<usize>> = vec![None; raw.layers.len()];
    for (i, (level, chunk_bytes, layout, members)) in arrays.into_iter().enumerate() {
        let gs: Vec<Geometry> = members.iter().map(|m| targets[*m].geometry).collect();
        let geometry = array_geometry(level, chunk_bytes, &gs);
        let name = raw.arrays[i].name.clone();
        targets.push(stack_target(&name, "md", geometry));
        array_target.push(targets.len() - 1);
        stacks.push(PlannedStack {
            name,
            target: targets.len() - 1,
            disks: members.clone(),
            kind: StackKind::Array {
                level,
                chunk_bytes,
                layout,
                members,
            },
            at: format!("arrays[{i}]"),
            mode: None,
        });
    }
    for i in order {
        let l = &raw.layers[i];
        let at = format!("layers[{i}]");
        let on = match ons[i] {
            On::Disk(t) => t,
            On::Array(a) => array_target[a],
            On::Layer(j) => layer_target[j].unwrap_or_default(),
        };
        let disks = match stacks.iter().find(|s| s.target == on) {
            Some(s) => s.disks.clone(),
            None => vec![on],
        };
        let under = targets[on].geometry;
        let (kind, geometry) = layer(l, &at, on, under, &targets[on].info.path)?;
        targets.push(stack_target(&l.name, "dm", geometry));
        layer_target[i] = Some(targets.len() - 1);
        stacks.push(PlannedStack {
            name: l.name.clone(),
            target: targets.len() - 1,
            kind,
            disks,
            at,
            mode: None,
        });
    }
    for st in &stacks {
        targets[st.target].info.stack = Some(stack_info(targets, st));
    }
    Ok(stacks)
}

/// What the results record of a stack: its kind, what it is built of (by
/// the targets' paths), options, and how it differs from what mdadm,
/// cryptsetup or LVM would build.
pub fn stack_info(targets: &[PlannedTarget], st: &PlannedStack) -> StackInfo {
    let path = |i: &usize| targets[*i].info.path.clone();
    let mut info = StackInfo {
        name: st.name.clone(),
        mode: st.mode.map(|m| m.name().to_string()),
        ..StackInfo::default()
    };
    match &st.kind {
        StackKind::Array {
            level,
            chunk_bytes,
            layout,
            members,
        } => {
            info.kind = "md".to_string();
            info.level = level.name().to_string();
            info.members = members.iter().map(path).collect();
            info.chunk_bytes = Some(u64::from(*chunk_bytes));
            info.layout = layout.map(str::to_string);
            info.notes = vec![
                "no write-intent bitmap (mdadm's default has one)".to_string(),
                "no superblock, assembled clean: no resync ran".to_string(),
            ];
        }
        StackKind::Crypt {
            cipher,
            key_bits,
            no_read_workqueue,
            no_write_workqueue,
            sector_size,
            on,
        } => {
            info.kind = "dm".to_string();
            info.level = "crypt".to_string();
            info.on = Some(path(on));
            for (k, v) in [
                ("cipher", cipher.clone()),
                ("key_bits", key_bits.to_string()),
                ("no_read_workqueue", no_read_workqueue.to_string()),
                ("no_write_workqueue", no_write_workqueue.to_string()),
                ("sector_size", sector_size.to_string()),
            ] {
                info.options.insert(k.to_string(), v);
            }
            info.notes = vec!["plain dm-crypt with a random key: no LUKS header (cryptsetup writes one)".to_string()];
        }
        StackKind::Linear { offset_bytes, on } => {
            info.kind = "dm".to_string();
            info.level = "linear".to_string();
            info.on = Some(path(on));
            info.options
                .insert("offset_bytes".to_string(), offset_bytes.to_string());
        }
    }
    info
}

/// A layer's options checked, and its geometry from the device beneath.
fn layer(
    l: &RawLayer,
    at: &str,
    on: usize,
    under: Geometry,
    under_path: &str,
) -> Result<(StackKind, Geometry), ConfigError> {
    let crypt_only = [
        ("cipher", l.cipher.is_some()),
        ("key_bits", l.key_bits.is_some()),
        ("no_read_workqueue", l.no_read_workqueue.is_some()),
        ("no_write_workqueue", l.no_write_workqueue.is_some()),
        ("sector_size", l.sector_size.is_some()),
    ];
    match l.kind.as_str() {
        "crypt" => {
            if l.offset.is_some() {
                return err(format!(
                    "{at}.offset: given for a crypt layer; expected offset only on a linear layer"
                ));
            }
            let cipher = l.cipher.clone().unwrap_or_else(|| CIPHER.to_string());
            if cipher != CIPHER {
                return err(format!("{at}.cipher: {cipher:?} is not supported; expected {CIPHER:?}"));
            }
            let key_bits = l.key_bits.unwrap_or(512);
            if key_bits != 256 && key_bits != 512 {
                return err(format!(
                    "{at}.key_bits: {key_bits} is not an {CIPHER} key size; expected 256 or 512"
                ));
            }
            let sector_size = l.sector_size.unwrap_or(512);
            if !(sector_size.is_power_of_two() && (512..=4096).contains(&sector_size)) {
                return err(format!(
                    "{at}.sector_size: {sector_size} is not a crypt sector size; expected 512, 1024, 2048 or 4096"
                ));
            }
            let g = Geometry {
                size: under.size / u64::from(sector_size) * u64::from(sector_size),
                logical_block: under.logical_block.max(sector_size),
                physical_block: under.physical_block.max(sector_size),
            };
            Ok((
                StackKind::Crypt {
                    cipher,
                    key_bits,
                    no_read_workqueue: l.no_read_workqueue.unwrap_or(false),
                    no_write_workqueue: l.no_write_workqueue.unwrap_or(false),
                    sector_size,
                    on,
                },
                g,
            ))
        }
        "linear" => {
            if let Some((k, _)) = crypt_only.iter().find(|(_, given)| *given) {
                return err(format!(
                    "{at}.{k}: given for a linear layer; expected {k} only on a crypt layer"
                ));
            }
            let offset_bytes = match &l.offset {
                None => DEFAULT_LINEAR_OFFSET,
                Some(v) => size_of(v, &format!("{at}.offset"))?,
            };
            if offset_bytes % 512 != 0 || offset_bytes >= under.size {
                return err(format!(
                    "{at}.offset: {offset_bytes} B does not fit {under_path} ({} B); expected a multiple of 512 below its size",
                    under.size
                ));
            }
            Ok((
                StackKind::Linear { offset_bytes, on },
                Geometry {
                    size: under.size - offset_bytes,
                    ..under
                },
            ))
        }
        k => err(format!(
            "{at}.kind: {k:?} is not a layer kind; expected crypt or linear"
        )),
    }
}

/// The expected geometry of an array of members `gs` (replaced by the
/// kernel's once assembled).
fn array_geometry(level: Level, chunk: u32, gs: &[Geometry]) -> Geometry {
    let c = u64::from(chunk);
    let min = gs.iter().map(|g| g.size / c * c).min().unwrap_or(0);
    let n = gs.len() as u64;
    let size = match level {
        Level::Linear => gs.iter().map(|g| g.size).sum(),
        Level::Raid0 => gs.iter().map(|g| g.size / c * c).sum(),
        Level::Raid1 => min,
        Level::Raid5 => min * n.saturating_sub(1),
        Level::Raid6 => min * n.saturating_sub(2),
        Level::Raid10 => min * n / 2,
    };
    Geometry {
        size,
        logical_block: gs.iter().map(|g| g.logical_block).max().unwrap_or(512),
        physical_block: gs.iter().map(|g| g.physical_block).max().unwrap_or(512),
    }
}

fn stack_target(name: &str, kind: &str, geometry: Geometry) -> PlannedTarget {
    PlannedTarget {
        info: TargetInfo {
            path: format!("{kind}:{name}"),
            kind: kind.to_string(),
            name: Some(name.to_string()),
            size_bytes: geometry.size,
            logical_block_size: geometry.logical_block,
            physical_block_size: geometry.physical_block,
            ..TargetInfo::default()
        },
        geometry,
        id: None,
        grant: None,
        written: false,
        sim: None,
        missing: None,
    }
}

/// The action of one test on a target of geometry `g`, `writable` or not
/// (`refusal` says why not).
fn action_for(spec: &TestSpec, g: &Geometry, writable: bool, refusal: Option<&str>) -> Result<Action, PlanError> {
    let steps = expand(spec, g)?;
    Ok(if spec.workload.writes() && !writable {
        Action::Skip(refusal.unwrap_or("writes refused").to_string())
    } else {
        Action::Run(steps)
    })
}

/// Once a stack is assembled: its target takes the device's path, kind and
/// geometry, and its tests are expanded again for that geometry (a test
/// that no longer fits is skipped, saying why).
pub fn assembled(plan: &mut Plan, ti: usize, path: &str, g: Geometry) {
    let t = &mut plan.targets[ti];
    t.info.path = path.to_string();
    t.info.size_bytes = g.size;
    t.info.logical_block_size = g.logical_block;
    t.info.physical_block_size = g.physical_block;
    t.geometry = g;
    let (writable, refusal) = (t.info.writable, t.info.write_refusal.clone());
    // Every stack's record names the devices beneath by their paths now.
    for st in &plan.stacks {
        let info = stack_info(&plan.targets, st);
        plan.targets[st.target].info.stack = Some(info);
    }
    for item in plan.items.iter_mut().filter(|it| it.target == ti) {
        item.action = match action_for(&item.spec, &g, writable, refusal.as_deref()) {
            Ok(a) => a,
            Err(e) => Action::Skip(format!("does not fit this target: {e}")),
        };
    }
}

/// Target `ti` may not be written after all (its claim was refused when
/// its tests began: a signature appeared, the device is busy): it and
/// every stack built on it lose their grants, and their tests that write
/// are skipped with the reason. Returns the targets changed.
pub fn withdraw_writes(plan: &mut Plan, ti: usize, why: &str) -> Vec<usize> {
    let path = plan.targets[ti].info.path.clone();
    let mut hit = vec![(ti, why.to_string())];
    for st in plan.stacks.iter().filter(|st| st.disks.contains(&ti)) {
        hit.push((
            st.target,
            format!("writes refused: member {path} is not writable ({why})"),
        ));
    }
    for (t, reason) in &hit {
        let target = &mut plan.targets[*t];
        target.grant = None;
        target.info.writable = false;
        target.info.write_refusal = Some(reason.clone());
        for it in plan.items.iter_mut().filter(|it| it.target == *t) {
            if it.spec.workload.writes() && matches!(it.action, Action::Run(_)) {
                it.action = Action::Skip(reason.clone());
            }
        }
    }
    hit.into_iter().map(|(t, _)| t).collect()
}

/// The largest config file read: a real one is a few KiB; this bound keeps
/// a wrong file (an image, a log) from being read whole into memory.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Read the config file at `path`: `Ok(None)` if there is none; an error
/// naming the file if it cannot be read, is larger than
/// [`MAX_CONFIG_BYTES`] (only that much more than the bound is read) or is
/// not UTF-8.
pub fn read_config_file(path: &std::path::Path) -> Result<Option<String>, String> {
    use std::io::Read;
    let shown = path.display();
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let too_big =
        |n: u64| format!("{shown} is {n} bytes or more; expected a config of at most 1 MiB ({MAX_CONFIG_BYTES} bytes)");
    if let Ok(m) = f.metadata() {
        if m.len() > MAX_CONFIG_BYTES {
            return Err(too_big(m.len()));
        }
    }
    let mut bytes = Vec::new();
    f.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        format!(
            "{shown}: not UTF-8 text (byte {}); expected a JSON config",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Load a config file (or none: `--profile` alone) and validate it into a plan.
pub fn load(config: Option<&str>, ov: &Overrides) -> Result<Plan, ConfigError> {
    let (raw, source) = match config {
        Some(path) => {
            let text = match read_config_file(std::path::Path::new(path)) {
                Ok(Some(t)) => t,
                Ok(None) => return err(format!("--config: {path:?} does not exist; expected a config file")),
                Err(e) => return err(format!("--config: {e}")),
            };
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
    plan_targets(raw, source, ov, &refs, &[], false)
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
    let stacked = !(raw.arrays.is_empty() && raw.layers.is_empty());
    if refs.is_empty() && ov.simulate && !stacked {
        refs = DEFAULT_SIM_TARGETS
            .iter()
            .map(|p| (TargetRef::Path((*p).to_string()), "--simulate".to_string()))
            .collect();
    }
    if refs.is_empty() && !stacked {
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
/// field path that named it) into a plan, for the unattended run. `never`
/// lists disks that may not be targets (the boot stick): a target on one of
/// them is an error. `on_finish` is checked too.
///
/// A disk the config names (by path, serial or WWN, as a target or an
/// array member) that this machine lacks is not an error here: its target
/// is planned as absent ([`PlannedTarget::missing`]), its tests and those
/// of any array or layer on it are skipped with the reason, and the rest
/// runs. (The live command, through [`validate`], refuses it as bad input.)
pub fn plan_with(
    raw: &RawConfig,
    source: &str,
    ov: &Overrides,
    refs: &[(TargetRef, String)],
    never: &[String],
) -> Result<Plan, ConfigError> {
    plan_targets(raw, source, ov, refs, never, true)
}

/// [`plan_with`] when `booted` (an absent disk is not an error, and
/// `destructive` must name disks by serial or WWN), else the live
/// command's plan.
fn plan_targets(
    raw: &RawConfig,
    source: &str,
    ov: &Overrides,
    refs: &[(TargetRef, String)],
    never: &[String],
    booted: bool,
) -> Result<Plan, ConfigError> {
    let profile_name = ov.profile.clone().or_else(|| raw.profile.clone());
    let tests = tests_of(raw, profile_name.as_deref())?;
    if let Some(v) = &raw.on_finish {
        check_on_finish(v, "on_finish")?;
    }
    if refs.is_empty() && raw.arrays.is_empty() && raw.layers.is_empty() {
        return err("targets: none; expected at least one disk to benchmark");
    }

    let machine = MachineDisks::default();
    let (destructive, unresolved) = match &raw.destructive {
        None => (None, None),
        Some(d) => {
            let (d, why) = resolve_destructive(d, ov.simulate, booted, &machine)?;
            (Some(d), why)
        }
    };

    let mut targets: Vec<PlannedTarget> = Vec::new();
    for (r, at) in refs {
        let t = if ov.simulate {
            sim_target(r, at)?
        } else {
            match real_target(r, at, &machine)? {
                Resolved::Found(t) => *t,
                // A path given on the command line is bad input.
                Resolved::Absent(why) if !booted || at == "--target" => return err(why),
                Resolved::Absent(why) => missing_target(r, why),
            }
        };
        refuse_file_when_booted(&t, at, booted)?;
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
    let cx = Lookup {
        ov,
        never,
        booted,
        machine: &machine,
    };
    let stacks = resolve_stacks(raw, &cx, &mut targets)?;

    let mut items = Vec::new();
    let wants_write = tests.iter().any(|(s, _)| s.workload.writes());
    // A config that names a disk this machine lacks does not match the
    // machine: it runs (reads), but writes nothing anywhere.
    let withheld = targets
        .iter()
        .find_map(|t| t.missing.as_ref())
        .or(unresolved.as_ref())
        .map(|why| {
            format!("writes withheld: the config names a disk this machine lacks ({why}); a config that does not match the machine writes nothing")
        });
    for ti in 0..targets.len() {
        // An absent disk, or a stack with one beneath: its tests are skipped.
        let absent = match stacks.iter().find(|s| s.target == ti) {
            Some(st) => st
                .disks
                .iter()
                .find_map(|d| targets[*d].missing.as_ref())
                .map(|why| format!("not assembled: a disk beneath {} is absent: {why}", st.name)),
            None => targets[ti].missing.as_ref().map(|why| format!("not run: {why}")),
        };
        if let Some(why) = absent {
            for (spec, _) in &tests {
                items.push(PlanItem {
                    target: ti,
                    spec: spec.clone(),
                    action: Action::Skip(why.clone()),
                });
            }
            continue;
        }
        if let Some(st) = stacks.iter().find(|s| s.target == ti) {
            // Writable only if every disk beneath is; the refusal names the
            // first disk that is not.
            let refused = st.disks.iter().find(|d| !targets[**d].info.writable);
            let refusal = refused.map(|d| {
                let m = &targets[*d].info;
                format!(
                    "writes refused: member {} is not writable ({})",
                    m.path,
                    m.write_refusal.as_deref().unwrap_or("writes refused")
                )
            });
            let t = &mut targets[ti];
            t.info.writable = refused.is_none();
            if wants_write {
                t.info.write_refusal = refusal;
            }
        } else {
            let t = &mut targets[ti];
            if let (true, Some(why)) = (wants_write && t.sim.is_none(), &withheld) {
                t.info.write_refusal = Some(why.clone());
            } else if let (true, Some(id)) = (wants_write, t.id.as_ref()) {
                match safety::grant(destructive.as_ref(), &t.info.path, id) {
                    Ok(g) => t.grant = Some(g),
                    Err(r) => t.info.write_refusal = Some(r.to_string()),
                }
            }
            t.info.writable = t.sim.is_some() || t.grant.is_some();
        }
        let t = &targets[ti];
        for (spec, origin) in &tests {
            let action = match action_for(spec, &t.geometry, t.info.writable, t.info.write_refusal.as_deref()) {
                Ok(a) => a,
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
    let test_deadline = match &raw.test_deadline {
        None => None,
        Some(v) => match parse_duration(v) {
            Ok(d) if d.0 > 0 => Some(d),
            Ok(_) => {
                return err(format!(
                    "test_deadline: {v} is zero; expected a duration such as \"5s\""
                ))
            }
            Err(e) => {
                return err(format!(
                    "test_deadline: {v} is not a duration: {e}; expected a duration such as \"5s\""
                ))
            }
        },
    };
    Ok(Plan {
        profile: profile_name,
        config_source: source.to_string(),
        seed,
        simulated: ov.simulate,
        targets,
        items,
        stacks,
        all_at_once: raw.all_at_once,
        test_deadline,
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
        id: None,
        grant: None,
        written: false,
        sim: Some(sim),
        missing: None,
    })
}

/// A real target, or why it is absent from this machine.
enum Resolved {
    /// Present (boxed: a target is far larger than a message).
    Found(Box<PlannedTarget>),
    /// Absent: the message (field path, what names it, what is expected).
    Absent(String),
}

/// The placeholder of a target that this machine lacks: kind `absent`, no
/// geometry, never opened; `missing` says why.
fn missing_target(r: &TargetRef, why: String) -> PlannedTarget {
    let (path, serial, wwn) = match r {
        TargetRef::Path(p) => (p.clone(), None, None),
        TargetRef::Serial(s) => (format!("serial:{s}"), Some(s.clone()), None),
        TargetRef::Wwn(w) => (format!("wwn:{w}"), None, Some(w.clone())),
    };
    PlannedTarget {
        info: TargetInfo {
            path,
            kind: "absent".to_string(),
            serial,
            wwn,
            ..TargetInfo::default()
        },
        geometry: Geometry {
            size: 0,
            logical_block: 512,
            physical_block: 512,
        },
        id: None,
        grant: None,
        written: false,
        sim: None,
        missing: Some(why),
    }
}

fn real_target(r: &TargetRef, at: &str, machine: &MachineDisks) -> Result<Resolved, ConfigError> {
    let (info, id) = match r {
        TargetRef::Path(p) => {
            if p.starts_with("sim:") {
                return err(format!(
                    "{at}: {p:?} is a simulated disk; expected a real path, or run with --simulate"
                ));
            }
            match std::fs::metadata(p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(Resolved::Absent(format!(
                        "{at}: {p:?} cannot be used: {e}; expected an existing block device or file"
                    )));
                }
                Err(e) => {
                    return err(format!(
                        "{at}: {p:?} cannot be used: {e}; expected an existing block device or file"
                    ));
                }
                Ok(_) => {}
            }
            identity::describe_bound(p).map_err(|e| ConfigError(format!("{at}: {p:?} cannot be described: {e}")))?
        }
        TargetRef::Serial(_) | TargetRef::Wwn(_) => match find_disk(r, at, machine)? {
            Some(found) => found.clone(),
            None => {
                return Ok(Resolved::Absent(format!(
                    "{at}: no whole disk has {r}; expected a disk present on this machine"
                )))
            }
        },
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
    Ok(Resolved::Found(Box::new(PlannedTarget {
        info,
        geometry,
        id: Some(id),
        grant: None,
        written: false,
        sim: None,
        missing: None,
    })))
}

/// The machine's whole disks (`/sys/class/block` without partitions), each
/// described with its identity: read once per plan, when a serial or WWN
/// is first looked up.
#[derive(Debug, Default)]
pub struct MachineDisks(std::cell::OnceCell<Vec<(TargetInfo, DeviceId)>>);

impl MachineDisks {
    /// Every whole disk, by name.
    fn all(&self) -> &[(TargetInfo, DeviceId)] {
        self.0.get_or_init(|| {
            crate::discover::sorted_names(std::path::Path::new("/sys/class/block"))
                .into_iter()
                .filter(|name| !std::path::Path::new(&format!("/sys/class/block/{name}/partition")).exists())
                .filter_map(|name| identity::describe_bound(&format!("/dev/{name}")).ok())
                .collect()
        })
    }
}

/// The one whole disk whose serial or WWN `r` names. Several devices can
/// share a serial (the namespaces of one NVMe controller, the LUNs of a
/// multi-bay USB enclosure that reports its bridge's serial): naming more
/// than one is an error that lists them, with their WWNs when they have
/// them (a WWN names a namespace or a LUN of its own).
fn find_disk<'m>(
    r: &TargetRef,
    at: &str,
    machine: &'m MachineDisks,
) -> Result<Option<&'m (TargetInfo, DeviceId)>, ConfigError> {
    let found: Vec<&(TargetInfo, DeviceId)> = machine
        .all()
        .iter()
        .filter(|(info, _)| safety::names(r, info.serial.as_deref(), info.wwn.as_deref()))
        .collect();
    match found.len() {
        0 => Ok(None),
        1 => Ok(Some(found[0])),
        _ => {
            let list: Vec<String> = found
                .iter()
                .map(|(i, _)| match &i.wwn {
                    Some(w) => format!("{} (WWN {w})", i.path),
                    None => i.path.clone(),
                })
                .collect();
            err(format!(
                "{at}: {r} names {} devices: {}; expected a serial or WWN that names exactly one whole disk",
                found.len(),
                list.join(", ")
            ))
        }
    }
}

/// Resolve the `destructive` section: each entry to exactly one device.
/// Booted from the stick, each entry must name a serial or WWN (device
/// names differ between the machine where the config was written and the
/// server's boot). A serial or WWN resolves among whole disks only, so a
/// partition is never granted through one. An entry that names nothing on
/// this machine is an error on a live system; booted, it is returned as
/// the reason to withhold every write (the config does not match the
/// machine). Simulated runs resolve nothing (simulated disks need no grant).
fn resolve_destructive(
    d: &RawDestructive,
    simulate: bool,
    booted: bool,
    machine: &MachineDisks,
) -> Result<(Destructive, Option<String>), ConfigError> {
    let mut targets = Vec::new();
    let mut resolved = Vec::new();
    let mut unresolved = None;
    for (i, t) in d.targets.iter().enumerate() {
        let at = format!("destructive.targets[{i}]");
        let r = t.to_ref(&at)?;
        let node = match &r {
            _ if simulate => None,
            TargetRef::Path(p) if booted => {
                return err(format!(
                    "{at}: {p:?} is a path; booted from the stick, expected {{\"serial\": ...}} or {{\"wwn\": ...}} \
                     (device names are not stable from one boot or machine to the next)"
                ))
            }
            TargetRef::Path(p) => match identity::describe_bound(p) {
                Ok((_, id)) => Some(id.node),
                Err(e) => {
                    return err(format!(
                        "{at}: {p:?} cannot be used: {e}; expected an existing block device or file"
                    ))
                }
            },
            TargetRef::Serial(_) | TargetRef::Wwn(_) => match find_disk(&r, &at, machine)? {
                Some((_, id)) => Some(id.node),
                None if booted => {
                    unresolved.get_or_insert(format!("{at}: no whole disk has {r}"));
                    None
                }
                None => {
                    return err(format!(
                        "{at}: no whole disk has {r}; expected a disk present on this machine"
                    ))
                }
            },
        };
        targets.push(r);
        resolved.push(node);
    }
    let d = Destructive {
        confirm: d.confirm.clone(),
        targets,
        resolved,
        allow_overwrite_signatures: d.allow_overwrite_signatures,
    };
    Ok((d, unresolved))
}

/// The plan in words: [`describe_plan_lines`], each line ended by `\n`.
#[cfg(test)]
pub fn describe_plan(plan: &Plan) -> String {
    describe_plan_lines(plan).iter().map(|l| format!("{l}\n")).collect()
}

/// The plan in words, one line each. A line holds strings from devices
/// (model, serial, WWN) as they are, line breaks included: print each line
/// through [`bench_core::console::safe`], which keeps it one line.
pub fn describe_plan_lines(plan: &Plan) -> Vec<String> {
    let mut s: Vec<String> = Vec::new();
    s.push(format!(
        "plan: config {}, profile {}, seed {}{}",
        plan.config_source,
        plan.profile.as_deref().unwrap_or("none"),
        plan.seed,
        if plan.simulated { ", simulated targets" } else { "" }
    ));
    for (ti, t) in plan.targets.iter().enumerate() {
        let i = &t.info;
        if let Some(why) = &t.missing {
            s.push(format!(
                "target {}: absent: {why}; its tests are skipped, the rest runs",
                i.path
            ));
            continue;
        }
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".to_string());
        s.push(format!(
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
        ));
        if let Some(st) = plan.stack_of(ti) {
            s.push(format!("  {}", stack_line(plan, st)));
        }
        for (n, item) in plan.items.iter().filter(|it| it.target == ti).enumerate() {
            let head = format!("  test {}: {} ({}): ", n + 1, item.spec.name, item.spec.workload.name());
            match &item.action {
                Action::Skip(why) => s.push(format!("{head}skipped: {why}")),
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
                    s.push(format!("{head}{} step(s): {}", steps.len(), labels.join(", ")));
                }
            }
        }
    }
    s
}

/// A stack in words: `raid0 "r0" of /dev/sdb, /dev/sdc, chunk 524288 B`.
pub fn stack_line(plan: &Plan, st: &PlannedStack) -> String {
    let path = |i: &usize| plan.targets[*i].info.path.clone();
    match &st.kind {
        StackKind::Array {
            level,
            chunk_bytes,
            layout,
            members,
        } => format!(
            "array {:?}: {} of {}, chunk {chunk_bytes} B{}",
            st.name,
            level.name(),
            members.iter().map(path).collect::<Vec<_>>().join(", "),
            layout.map(|l| format!(", layout {l}")).unwrap_or_default()
        ),
        StackKind::Crypt {
            cipher,
            key_bits,
            no_read_workqueue,
            no_write_workqueue,
            sector_size,
            on,
        } => format!(
            "layer {:?}: crypt {cipher} ({key_bits}-bit random key, sector {sector_size} B{}{}) on {}",
            st.name,
            if *no_read_workqueue { ", no_read_workqueue" } else { "" },
            if *no_write_workqueue {
                ", no_write_workqueue"
            } else {
                ""
            },
            path(on)
        ),
        StackKind::Linear { offset_bytes, on } => {
            format!("layer {:?}: linear at offset {offset_bytes} B on {}", st.name, path(on))
        }
    }
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
    fn parse_errors_are_one_line_without_control_characters() {
        // Found by fuzz/config: serde quotes an unknown key as written, so an
        // escaped newline in a key made a two-line message.
        let cases = [
            (r#"{"a\nb": 1}"#, r"unknown field `a\nb`"),
            (
                r#"{"tests": [{"workload": "x", "\u001b[2J": 1}]}"#,
                r"unknown field `\u{1b}[2J`",
            ),
            (r#"{"profile": "quick", "\r\t": 1}"#, r"unknown field `\r\t`"),
        ];
        for (text, want) in cases {
            let e = parse(text, "t.json").unwrap_err().0;
            assert!(e.contains(want), "{text}: {e}");
            assert!(!e.chars().any(char::is_control), "{text}: {e:?}");
        }
        // A test's name is quoted as written in plan errors.
        let c = raw(r#"{"tests": [{"workload": "seq_read", "name": "x\ny", "bs": 1000}]}"#);
        let ov = Overrides {
            profile: None,
            targets: vec!["sim:ssd:64M".into()],
            simulate: true,
        };
        let e = validate(&c, "t.json", &ov).unwrap_err().0;
        assert!(e.contains(r"(x\ny)") && !e.contains('\n'), "{e}");
        let e = parse("{}x", "a\nb.json").unwrap_err().0;
        assert!(e.starts_with(r"a\nb.json: trailing characters"), "{e}");
    }

    #[test]
    fn a_bad_target_is_shown_as_written() {
        let cases = [
            (r#"{"targets": [""]}"#, r#"targets[0]: {"path":""} is not a target"#),
            (
                r#"{"targets": ["/dev/a", {"path": "/dev/x", "serial": "S1"}]}"#,
                r#"targets[1]: {"path":"/dev/x","serial":"S1"} is not a target"#,
            ),
            (r#"{"targets": [{}]}"#, "targets[0]: {} is not a target"),
            (
                r#"{"targets": [{"wwn": ""}]}"#,
                r#"targets[0]: {"wwn":""} is not a target"#,
            ),
        ];
        for (text, want) in cases {
            let c = raw(text);
            let e = c
                .targets
                .iter()
                .enumerate()
                .find_map(|(i, t)| t.to_ref(&format!("targets[{i}]")).err())
                .unwrap()
                .0;
            assert!(
                e.contains(want) && !e.contains("TargetObj") && e.contains("exactly one of"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn lists_where_objects_belong_are_refused() {
        // serde's derived structs would read each of these field by field.
        let cases = [
            (
                r#"["quick", 42]"#,
                "config: [\"quick\",42] is a list; expected an object",
            ),
            (
                r#"{"defaults": ["2s"]}"#,
                "defaults: [\"2s\"] is a list; expected an object",
            ),
            (
                r#"{"destructive": ["I understand this destroys data", ["/dev/sda"], true]}"#,
                "destructive: [\"I understand this destroys data\",[\"/dev/sda\"],true] is a list",
            ),
            (
                r#"{"tests": [{"workload": "seq_read"}, ["seq_write", null, "1M"]]}"#,
                "tests[1]: [\"seq_write\",null,\"1M\"] is a list; expected an object",
            ),
            (
                r#"{"arrays": [["r0", "raid0", ["/dev/sdb", "/dev/sdc"]]]}"#,
                "arrays[0]: [\"r0\",\"raid0\",[\"/dev/sdb\",\"/dev/sdc\"]] is a list",
            ),
            (
                r#"{"layers": [["c", "crypt", "/dev/sdb"]]}"#,
                "layers[0]: [\"c\",\"crypt\",\"/dev/sdb\"] is a list",
            ),
        ];
        for (text, want) in cases {
            let e = parse(text, "t.json").unwrap_err().0;
            assert!(e.starts_with("t.json: ") && e.contains(want), "{text}: {e}");
        }
        // A long list is shown cut short, on one line.
        let e = parse(&format!("[{}]", vec!["\"quick\""; 40].join(",")), "t.json")
            .unwrap_err()
            .0;
        assert!(e.contains("...") && e.len() < 200 && !e.contains('\n'), "{e}");
        // Objects are still read.
        assert!(parse(
            r#"{"defaults": {"runtime": "2s"}, "tests": [{"workload": "seq_read"}]}"#,
            "t"
        )
        .is_ok());
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
            (
                r#"{"tests":[{"workload":"seq_write","verify":"yes"}]}"#,
                "tests[0].verify: \"yes\" is not a boolean; expected true or false",
            ),
            (
                r#"{"tests":[{"workload":"rand_read","verify":true}]}"#,
                "tests[0].verify: true, but rand_read does not write; expected false",
            ),
            (
                r#"{"defaults":{"verify":1},"tests":[{"workload":"seq_write"}]}"#,
                "defaults.verify: 1 is not a boolean",
            ),
        ];
        for (text, want) in bad {
            let e = tests_of(&raw(text), raw(text).profile.as_deref()).unwrap_err().0;
            assert!(e.starts_with(want), "{text}: {e}");
        }
        // The size message says what is expected.
        let e = tests_of(&raw(bad[0].0), None).unwrap_err().0;
        assert!(e.contains(EXPECTED), "{e}");
    }

    /// `verify` reaches the write tests' parameters; from the defaults it
    /// leaves read tests alone (as fio's verify applies to writes).
    #[test]
    fn verify_applies_to_write_tests() {
        let c = raw(r#"{"defaults": {"verify": true},
                "tests":[{"workload":"seq_write"},{"workload":"seq_read"},{"workload":"rand_rw","verify":false}]}"#);
        let t = tests_of(&c, None).unwrap();
        let v: Vec<bool> = t.iter().map(|(s, _)| s.params.verify).collect();
        assert_eq!(v, [true, false, false]);
        let c = raw(r#"{"profile":"quick","defaults":{"verify":true}}"#);
        for (s, _) in tests_of(&c, c.profile.as_deref()).unwrap() {
            assert_eq!(s.params.verify, s.workload.writes(), "{}", s.name);
        }
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

    /// A config that names a disk this machine lacks writes nothing: booted
    /// (`plan_with`), a disk the config names as a target, or an entry of
    /// "destructive" that no disk answers, withholds every write (the
    /// present disk keeps its reads, its write test is skipped with the
    /// reason, and it gets no grant); live (`validate`), the same config
    /// with the disk named by path writes.
    #[test]
    fn a_config_naming_an_absent_disk_writes_nothing() {
        // Booted, a disk is a block device: a loop device stands in for one.
        let Some(lo) = crate::testutil::Loop::new("config-absent-writes", &vec![0u8; 4 << 20]) else {
            return;
        };
        let disk = lo.dev.clone();
        let tests = r#"[{"workload":"seq_read","size":"1M"},{"workload":"seq_write","size":"1M"}]"#;
        let phrase = safety::CONFIRM_PHRASE;
        let ov = Overrides::default();
        let actions = |p: &Plan| -> Vec<Action> {
            p.items
                .iter()
                .filter(|it| it.target == 0)
                .map(|it| it.action.clone())
                .collect()
        };
        for (targets, named) in [
            (
                format!(r#"["{disk}",{{"serial":"NO-SUCH-MEMBER"}}]"#),
                r#"[{"serial":"NO-SUCH-OTHER"}]"#,
            ),
            (format!(r#"["{disk}"]"#), r#"[{"serial":"NO-SUCH-MEMBER"}]"#),
        ] {
            let c = raw(&format!(
                r#"{{"tests":{tests},"targets":{targets},"destructive":{{"confirm":"{phrase}","targets":{named}}}}}"#
            ));
            let p = plan_with(&c, "t", &ov, &target_refs(&c, &ov).unwrap(), &[]).unwrap();
            let on_disk = actions(&p);
            assert!(matches!(on_disk[0], Action::Run(_)), "{targets}: the read runs");
            let Action::Skip(why) = &on_disk[1] else {
                panic!("{targets}: the write runs: {:?}", on_disk[1])
            };
            assert!(
                why.contains("writes withheld") && why.contains("NO-SUCH-MEMBER"),
                "{why}"
            );
            assert!(p.targets[0].grant.is_none() && !p.targets[0].info.writable);
        }
        // Live, by path: granted, and the write runs.
        let c = raw(&format!(
            r#"{{"tests":{tests},"targets":["{disk}"],"destructive":{{"confirm":"{phrase}","targets":["{disk}"]}}}}"#
        ));
        let p = validate(&c, "t", &ov).unwrap();
        assert!(matches!(actions(&p)[1], Action::Run(_)), "the write runs");
        assert!(p.targets[0].grant.is_some());
        // An entry that is a symlink to the disk names the same device.
        let link = std::env::temp_dir().join(format!("bootbench-config-link-{}", std::process::id()));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&disk, &link).unwrap();
        let by_link = raw(&format!(
            r#"{{"tests":{tests},"targets":["{disk}"],"destructive":{{"confirm":"{phrase}","targets":["{}"]}}}}"#,
            link.display()
        ));
        let granted = validate(&by_link, "t", &ov).unwrap().targets[0].grant.is_some();
        std::fs::remove_file(&link).unwrap();
        assert!(granted, "a symlink names the device it points at");
        // Booted, a "destructive" entry that is a path is an error naming it.
        let e = plan_with(&c, "t", &ov, &target_refs(&c, &ov).unwrap(), &[]).unwrap_err();
        assert!(
            e.0.starts_with("destructive.targets[0]: ") && e.0.contains("booted from the stick"),
            "{e}"
        );
    }

    /// A disk the config names but this machine lacks (by serial, WWN or
    /// path; a target or an array member): for the unattended run
    /// (`plan_with`) it is an absent target whose tests, and those of the
    /// array on it, are skipped with the reason while the present disk's
    /// run; for the live command (`validate`) it is an error naming it; a
    /// missing `--target` path is an error either way.
    #[test]
    fn absent_disks_are_skipped_unattended_and_refused_live() {
        let t = crate::testutil::TempDir::new("config-absent");
        // Booted, a disk is a block device: a loop device stands in for one.
        let Some(lo) = crate::testutil::Loop::new("config-absent", &vec![0u8; 4 << 20]) else {
            return;
        };
        let disk = lo.dev.clone();
        let gone = t.0.join("gone.img").to_string_lossy().into_owned();
        let text = format!(
            r#"{{"tests":[{{"workload":"seq_read","size":"1M"}}],
                "targets":["{disk}",{{"serial":"NO-SUCH-SN"}},{{"wwn":"0x5000NOPE"}},"{gone}"],
                "arrays":[{{"name":"r0","level":"raid0","members":["{disk}",{{"serial":"NO-SUCH-MEMBER"}}]}}]}}"#
        );
        let c = raw(&text);
        let ov = Overrides::default();
        let refs = target_refs(&c, &ov).unwrap();
        let p = plan_with(&c, "t", &ov, &refs, &[]).unwrap();
        let missing: Vec<(&str, Option<&str>)> = p
            .targets
            .iter()
            .map(|t| (t.info.path.as_str(), t.missing.as_deref()))
            .collect();
        assert_eq!(missing[0], (disk.as_str(), None));
        for (i, (path, want)) in [
            ("serial:NO-SUCH-SN", "targets[1]: no whole disk has serial NO-SUCH-SN"),
            ("wwn:0x5000NOPE", "targets[2]: no whole disk has WWN 0x5000NOPE"),
            (gone.as_str(), "targets[3]: "),
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(missing[i + 1].0, path);
            assert!(
                missing[i + 1].1.is_some_and(|m| m.starts_with(want)),
                "{:?}",
                missing[i + 1]
            );
            assert_eq!(p.targets[i + 1].info.kind, "absent");
        }
        assert_eq!(p.targets[1].info.serial.as_deref(), Some("NO-SUCH-SN"));
        let actions: Vec<(usize, bool)> = p
            .items
            .iter()
            .map(|it| (it.target, matches!(it.action, Action::Run(_))))
            .collect();
        let r0 = p.stacks[0].target;
        assert!(actions.contains(&(0, true)), "the present disk runs: {actions:?}");
        for it in p.items.iter().filter(|it| it.target != 0) {
            let Action::Skip(why) = &it.action else {
                panic!("{it:?}")
            };
            if it.target == r0 {
                assert!(
                    why.starts_with("not assembled: a disk beneath r0 is absent: arrays[0].members[1]"),
                    "{why}"
                );
            } else {
                // The absent member is a target of its own too.
                assert!(
                    why.starts_with("not run: targets[")
                        || why.starts_with("not run: arrays[0].members[1]: no whole disk"),
                    "{why}"
                );
            }
        }
        assert!(describe_plan(&p).contains("target serial:NO-SUCH-SN: absent: targets[1]"));
        // The live command refuses it as bad input.
        let e = validate(&c, "t", &ov).unwrap_err().0;
        assert!(e.starts_with("targets[1]: no whole disk has serial NO-SUCH-SN"), "{e}");
        // A --target path that does not exist is bad input, unattended too.
        let cli_refs = vec![(TargetRef::Path(gone.clone()), "--target".to_string())];
        let e = plan_with(&raw(r#"{"tests":[{"workload":"seq_read"}]}"#), "t", &ov, &cli_refs, &[])
            .unwrap_err()
            .0;
        assert!(e.starts_with("--target: "), "{e}");
        // Booted, a regular file is no target, nor a member; live it is.
        let file = t.0.join("a.img");
        std::fs::write(&file, vec![0u8; 4 << 20]).unwrap();
        let file = file.to_string_lossy().into_owned();
        for (text, at) in [
            (
                format!(r#"{{"tests":[{{"workload":"seq_read"}}],"targets":["{disk}","{file}"]}}"#),
                "targets[1]",
            ),
            (
                format!(
                    r#"{{"tests":[{{"workload":"seq_read"}}],"arrays":[{{"name":"r","level":"raid1","members":["{disk}","{file}"]}}]}}"#
                ),
                "arrays[0].members[1]",
            ),
        ] {
            let c = raw(&text);
            let e = plan_with(&c, "t", &ov, &target_refs(&c, &ov).unwrap(), &[])
                .unwrap_err()
                .0;
            assert!(
                e.starts_with(&format!("{at}: {file:?} is a regular file; booted from the stick")),
                "{e}"
            );
            assert!(validate(&c, "t", &ov).is_ok(), "live, a file is a target");
        }
    }

    #[test]
    fn test_deadline_is_a_positive_duration() {
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        let plan = |v: &str| {
            validate(
                &raw(&format!(
                    r#"{{"profile":"quick","targets":["sim:ssd:64M"],"test_deadline":{v}}}"#
                )),
                "t",
                &ov,
            )
            .map(|p| p.test_deadline)
            .map_err(|e| e.0)
        };
        assert_eq!(plan("\"5s\""), Ok(Some(Nanos::from_secs(5))));
        assert_eq!(plan("0.5"), Ok(Some(Nanos(500_000_000))));
        assert!(plan("\"0s\"").unwrap_err().starts_with("test_deadline: "), "zero");
        assert!(plan("\"soon\"").unwrap_err().contains("is not a duration"));
        assert_eq!(
            validate(&raw(r#"{"profile":"quick","targets":["sim:ssd:64M"]}"#), "t", &ov)
                .unwrap()
                .test_deadline,
            None
        );
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

    fn sim() -> Overrides {
        Overrides {
            simulate: true,
            ..Overrides::default()
        }
    }

    fn stacked(extra: &str) -> Result<Plan, ConfigError> {
        let text =
            format!(r#"{{"tests":[{{"workload":"seq_read","runtime":"50ms"}}],"targets":["sim:hdd:1G"]{extra}}}"#);
        validate(&parse(&text, "t.json")?, "t.json", &sim())
    }

    /// A serial with a line break does not break the plan's lines: each
    /// line is one target or test, and prints as one console line.
    #[test]
    fn plan_lines_keep_a_device_string_on_its_line() {
        let mut p = stacked("").expect("plan");
        let before = describe_plan_lines(&p).len();
        p.targets[0].info.serial = Some("SN\n  test 9: fake (seq_write): writes allowed".into());
        let lines = describe_plan_lines(&p);
        assert_eq!(lines.len(), before);
        let shown = bench_core::console::safe(&lines[1]);
        assert!(
            shown.contains("serial SN\\n  test 9: fake (seq_write): writes allowed,"),
            "{shown}"
        );
        assert!(!shown.contains('\n'));
    }

    #[test]
    fn stacks_resolve_in_dependency_order_and_members_are_targets() {
        let p = stacked(
            r#","arrays":[{"name":"r0","level":"raid0","members":["sim:ssd:64M","sim:ssd:32M"],"chunk":"64k"},
                           {"name":"r5","level":"raid5","members":["sim:ssd:16M","sim:ssd:17M","sim:ssd:18M"]}],
               "layers":[{"name":"lv","kind":"linear","on":"secure"},
                         {"name":"secure","kind":"crypt","on":"r0","sector_size":4096},
                         {"name":"raw","kind":"linear","on":"sim:ssd:8M","offset":"4k"}],
               "all_at_once":true"#,
        )
        .unwrap();
        let names: Vec<&str> = p.stacks.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["r0", "r5", "secure", "lv", "raw"]);
        let paths: Vec<&str> = p.targets.iter().map(|t| t.info.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                "sim:hdd:1G",
                "sim:ssd:64M",
                "sim:ssd:32M",
                "sim:ssd:16M",
                "sim:ssd:17M",
                "sim:ssd:18M",
                "sim:ssd:8M",
                "md:r0",
                "md:r5",
                "dm:secure",
                "dm:lv",
                "dm:raw"
            ]
        );
        assert!(p.all_at_once);
        // Every target, member disk or stack, has the plan's test.
        for ti in 0..p.targets.len() {
            assert_eq!(p.items.iter().filter(|it| it.target == ti).count(), 1, "{ti}");
        }
        let r0 = &p.stacks[0];
        assert_eq!(
            r0.kind,
            StackKind::Array {
                level: Level::Raid0,
                chunk_bytes: 65536,
                layout: None,
                members: vec![1, 2]
            }
        );
        // raid0: the members' sizes added; raid5: (N-1) x the smallest.
        assert_eq!(p.targets[7].geometry.size, 96 << 20);
        assert_eq!(p.targets[8].geometry.size, 2 * (16 << 20));
        assert_eq!(
            p.stacks[1].kind,
            StackKind::Array {
                level: Level::Raid5,
                chunk_bytes: DEFAULT_CHUNK,
                layout: Some("left-symmetric"),
                members: vec![3, 4, 5]
            }
        );
        // Layers: on the right target, with the disks beneath.
        assert!(matches!(
            p.stacks[2].kind,
            StackKind::Crypt {
                on: 7,
                sector_size: 4096,
                key_bits: 512,
                ..
            }
        ));
        assert_eq!(
            p.stacks[3].kind,
            StackKind::Linear {
                offset_bytes: 1 << 20,
                on: 9
            }
        );
        assert_eq!(p.stacks[3].disks, vec![1, 2]);
        assert_eq!(p.stacks[4].disks, vec![6]);
        assert_eq!(p.targets[10].geometry.size, (96 << 20) - (1 << 20));
        assert_eq!(p.targets[9].geometry.logical_block, 4096);
        let info = p.targets[10].info.stack.clone().unwrap();
        assert_eq!(
            (info.kind.as_str(), info.level.as_str(), info.on.as_deref()),
            ("dm", "linear", Some("dm:secure"))
        );
        let info = p.targets[7].info.stack.clone().unwrap();
        assert_eq!(info.members, vec!["sim:ssd:64M", "sim:ssd:32M"]);
        assert!(info.notes.iter().any(|n| n.contains("write-intent bitmap")));
        let text = describe_plan(&p);
        assert!(
            text.contains("array \"r0\": raid0 of sim:ssd:64M, sim:ssd:32M, chunk 65536 B"),
            "{text}"
        );
        assert!(
            text.contains("layer \"lv\": linear at offset 1048576 B on dm:secure"),
            "{text}"
        );
    }

    #[test]
    fn each_invalid_stack_gives_its_error() {
        let two = r#""members":["sim:ssd:64M","sim:ssd:32M"]"#;
        let cases = [
            (
                r#","arrays":[{"name":"r0","level":"raid0","members":["sim:ssd:64M","sim:tape:1G"]}]"#.to_string(),
                "arrays[0].members[1]: \"sim:tape:1G\" is not a simulated disk",
            ),
            (
                format!(r#","arrays":[{{"name":"a","level":"raid1",{two}}},{{"name":"b","level":"raid1","members":["sim:ssd:32M","sim:ssd:16M"]}}]"#),
                "arrays[1].members[0]: \"sim:ssd:32M\" is already used by arrays[0].members[1]; expected each disk in one array or layer",
            ),
            (
                r#","arrays":[{"name":"a","level":"raid1","members":["sim:ssd:32M","sim:ssd:32M"]}]"#.to_string(),
                "arrays[0].members[1]: \"sim:ssd:32M\" is already used by arrays[0].members[0]",
            ),
            (
                format!(r#","arrays":[{{"name":"r5","level":"raid5",{two}}}]"#),
                "arrays[0].members: 2 member(s) are too few for raid5; expected at least 3",
            ),
            (
                r#","arrays":[{"name":"r6","level":"raid6","members":["sim:ssd:1M","sim:ssd:2M","sim:ssd:3M"]}]"#.to_string(),
                "arrays[0].members: 3 member(s) are too few for raid6; expected at least 4",
            ),
            (
                r#","arrays":[{"name":"r1","level":"raid1","members":["sim:ssd:1M"]}]"#.to_string(),
                "arrays[0].members: 1 member(s) are too few for raid1; expected at least 2",
            ),
            (
                r#","layers":[{"name":"a","kind":"linear","on":"b"},{"name":"b","kind":"linear","on":"a"}]"#.to_string(),
                "layers[0].on: \"b\" makes a cycle (a -> b -> a); expected layers that stack without a loop",
            ),
            (
                r#","layers":[{"name":"a","kind":"linear","on":"a"}]"#.to_string(),
                "layers[0].on: \"a\" makes a cycle (a -> a)",
            ),
            (
                r#","layers":[{"name":"a","kind":"linear","on":"r9"}]"#.to_string(),
                "layers[0].on: \"r9\" is not an array, a layer or a disk; expected one of a or a disk path",
            ),
            (
                format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":"96k",{two}}}]"#),
                "arrays[0].chunk: \"96k\" is not a chunk size md takes; expected a power of two from 4k to 1G",
            ),
            (
                format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":"2k",{two}}}]"#),
                "arrays[0].chunk: \"2k\" is not a chunk size",
            ),
            // md holds the chunk in a signed 32-bit byte count: 2G and more
            // never reach the kernel, whatever the level (members larger
            // than the chunk, so that nothing else is wrong).
            (
                r#","arrays":[{"name":"r0","level":"raid0","chunk":"2G","members":["sim:ssd:4G","sim:ssd:5G"]}]"#.to_string(),
                "arrays[0].chunk: \"2G\" is not a chunk size md takes; expected a power of two from 4k to 1G",
            ),
            (
                format!(r#","arrays":[{{"name":"r0","level":"raid10","chunk":"2GiB",{two}}}]"#),
                "arrays[0].chunk: \"2GiB\" is not a chunk size",
            ),
            (
                format!(r#","arrays":[{{"name":"r0","level":"raid1","chunk":"4G",{two}}}]"#),
                "arrays[0].chunk: \"4G\" is not a chunk size",
            ),
            (
                format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":2147483648,{two}}}]"#),
                "arrays[0].chunk: 2147483648 is not a chunk size",
            ),
            (
                format!(r#","arrays":[{{"name":"r0","level":"raid0",{two}}}],"layers":[{{"name":"r0","kind":"crypt","on":"r0"}}]"#),
                "layers[0].name: \"r0\" is already the name of arrays[0]; expected a unique name",
            ),
            (
                format!(r#","arrays":[{{"name":"R 0","level":"raid0",{two}}}]"#),
                "arrays[0].name: \"R 0\" is not a stack name",
            ),
            (
                format!(r#","arrays":[{{"name":"r","level":"raid7",{two}}}]"#),
                "arrays[0].level: \"raid7\" is not a level; expected one of linear, raid0",
            ),
            (
                format!(r#","arrays":[{{"name":"r","level":"raid10","layout":"far3",{two}}}]"#),
                "arrays[0].layout: \"far3\" is not a raid10 layout; expected one of near2, far2, offset2",
            ),
            (
                format!(r#","arrays":[{{"name":"r","level":"raid0","layout":"near2",{two}}}]"#),
                "arrays[0].layout: \"near2\" is not taken by raid0",
            ),
            (
                r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","key_bits":384}]"#.to_string(),
                "layers[0].key_bits: 384 is not an aes-xts-plain64 key size; expected 256 or 512",
            ),
            (
                r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","cipher":"des"}]"#.to_string(),
                "layers[0].cipher: \"des\" is not supported",
            ),
            (
                r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","offset":"1M"}]"#.to_string(),
                "layers[0].offset: given for a crypt layer",
            ),
            (
                r#","layers":[{"name":"c","kind":"linear","on":"sim:ssd:8M","sector_size":4096}]"#.to_string(),
                "layers[0].sector_size: given for a linear layer",
            ),
            (
                r#","layers":[{"name":"c","kind":"linear","on":"sim:ssd:8M","offset":"8M"}]"#.to_string(),
                "layers[0].offset: 8388608 B does not fit sim:ssd:8M",
            ),
            (
                r#","layers":[{"name":"c","kind":"mirror","on":"sim:ssd:8M"}]"#.to_string(),
                "layers[0].kind: \"mirror\" is not a layer kind; expected crypt or linear",
            ),
            (
                format!(r#","arrays":[{{"name":"r0","level":"raid0",{two}}}],"layers":[{{"name":"c","kind":"crypt","on":"sim:ssd:64M"}}]"#),
                "layers[0].on: \"sim:ssd:64M\" is already used by arrays[0].members[0]",
            ),
            (
                r#","arrays":[{"name":"r0","level":"raid0","members":["r1","sim:ssd:1M"]},{"name":"r1","level":"raid0","members":["sim:ssd:2M","sim:ssd:3M"]}]"#.to_string(),
                "arrays[0].members[0]: \"r1\" is an array or layer; expected a disk",
            ),
        ];
        for (extra, want) in &cases {
            let e = stacked(extra).unwrap_err().0;
            assert!(e.starts_with(want), "{extra}\n  got:  {e}\n  want: {want}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        // The chunks md takes, from 4k to 1G, plan.
        for (level, chunk, bytes) in [
            ("raid0", "4k", 4096),
            ("raid5", "1G", 1 << 30),
            ("raid10", "1073741824", 1 << 30),
        ] {
            // Members of at least a chunk: md rounds each down to whole chunks.
            let members = match level {
                "raid5" => r#""members":["sim:ssd:2G","sim:ssd:3G","sim:ssd:4G"]"#,
                "raid10" => r#""members":["sim:ssd:2G","sim:ssd:3G"]"#,
                _ => two,
            };
            let chunk_json = if chunk.ends_with('k') || chunk.ends_with('G') {
                format!("{chunk:?}")
            } else {
                chunk.to_string()
            };
            let p = stacked(&format!(
                r#","arrays":[{{"name":"r0","level":"{level}","chunk":{chunk_json},{members}}}]"#
            ))
            .unwrap_or_else(|e| panic!("{level} chunk {chunk}: {}", e.0));
            assert!(
                matches!(p.stacks[0].kind, StackKind::Array { chunk_bytes, .. } if chunk_bytes == bytes),
                "{level} {chunk}"
            );
        }
        // The boot stick is never a member.
        let raw = parse(
            r#"{"profile":"quick","arrays":[{"name":"r","level":"raid1","members":["sim:ssd:8M","sim:ssd:9M"]}]}"#,
            "t",
        )
        .unwrap();
        let refs = vec![(TargetRef::Path("sim:hdd:1G".into()), "discovered".to_string())];
        let e = plan_with(&raw, "t", &sim(), &refs, &["sim:ssd:9M".to_string()])
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("arrays[0].members[1]: \"sim:ssd:9M\" is on the boot stick"),
            "{e}"
        );
        // Unknown keys are refused by the parser.
        assert!(parse(
            r#"{"arrays":[{"name":"r","level":"raid0","members":[],"stripe":1}]}"#,
            "t"
        )
        .is_err());
        assert!(parse(r#"{"layers":[{"name":"r","kind":"crypt","on":"x","key":"00"}]}"#, "t").is_err());
    }

    #[test]
    fn writes_to_a_stack_need_every_member_writable() {
        let t = crate::testutil::TempDir::new("stackperm");
        let (a, b) = (t.0.join("a.img"), t.0.join("b.img"));
        for f in [&a, &b] {
            std::fs::write(f, vec![0u8; 4 << 20]).unwrap();
        }
        let (a, b) = (a.to_string_lossy().into_owned(), b.to_string_lossy().into_owned());
        let plan_for = |named: &[&str]| {
            let text = format!(
                r#"{{"tests":[{{"workload":"seq_write","runtime":"50ms"}},{{"workload":"seq_read","runtime":"50ms"}}],
                    "arrays":[{{"name":"r","level":"raid0","members":["{a}","{b}"],"chunk":"64k"}}],
                    "layers":[{{"name":"l","kind":"linear","on":"r"}}],
                    "all_at_once":true,
                    "destructive":{{"confirm":"{}","targets":{}}}}}"#,
                safety::CONFIRM_PHRASE,
                serde_json::to_string(named).unwrap()
            );
            validate(&parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap()
        };
        let p = plan_for(&[&a]);
        assert_eq!(p.targets.len(), 4);
        assert!(p.targets[0].info.writable && p.targets[0].grant.is_some());
        assert!(!p.targets[1].info.writable);
        for ti in [2, 3] {
            let i = &p.targets[ti].info;
            assert!(!i.writable, "{}", i.path);
            let why = i.write_refusal.clone().unwrap();
            assert!(why.contains(&format!("member {b} is not writable")), "{why}");
            let write = p
                .items
                .iter()
                .find(|it| it.target == ti && it.spec.workload.writes())
                .unwrap();
            assert!(matches!(&write.action, Action::Skip(r) if *r == why), "{write:?}");
            let read = p
                .items
                .iter()
                .find(|it| it.target == ti && !it.spec.workload.writes())
                .unwrap();
            assert!(matches!(read.action, Action::Run(_)));
        }
        let p = plan_for(&[&a, &b]);
        for ti in 0..4 {
            assert!(p.targets[ti].info.writable, "{ti}");
            assert!(p
                .items
                .iter()
                .filter(|it| it.target == ti)
                .all(|it| matches!(it.action, Action::Run(_))));
        }
        // Once assembled, the target takes the device's path and geometry.
        let mut p = p;
        let g = Geometry {
            size: 6 << 20,
            logical_block: 512,
            physical_block: 4096,
        };
        assembled(&mut p, 2, "/dev/md9", g);
        assert_eq!(
            (p.targets[2].info.path.as_str(), p.targets[2].geometry),
            ("/dev/md9", g)
        );
        assert_eq!(
            p.targets[3].info.stack.as_ref().unwrap().on.as_deref(),
            Some("/dev/md9")
        );
        let tiny = Geometry {
            size: 256,
            logical_block: 512,
            physical_block: 512,
        };
        assembled(&mut p, 3, "/dev/dm-0", tiny);
        let acts: Vec<&Action> = p
            .items
            .iter()
            .filter(|it| it.target == 3)
            .map(|it| &it.action)
            .collect();
        assert!(
            acts.iter()
                .all(|a| matches!(a, Action::Skip(r) if r.starts_with("does not fit"))),
            "{acts:?}"
        );
    }

    #[test]
    fn readme_stacks_example_parses_and_fits_the_schema() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
        let at = readme.find("### Arrays and layers").expect("README has the section");
        let start = at + readme[at..].find("```json\n").unwrap() + "```json\n".len();
        let text = &readme[start..start + readme[start..].find("```").unwrap()];
        let c = parse(text, "README").unwrap();
        assert_eq!((c.arrays.len(), c.layers.len(), c.all_at_once), (2, 2, true));
        let schema: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../schema/bootbench.config-1.schema.json"
            ))
            .unwrap(),
        )
        .unwrap();
        let v = jsonschema::validator_for(&schema).unwrap();
        let j: serde_json::Value = serde_json::from_str(text).unwrap();
        let errors: Vec<String> = v.iter_errors(&j).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        let bad: serde_json::Value =
            serde_json::from_str(r#"{"profile":"quick","arrays":[{"name":"R","level":"raid9","members":[]}]}"#)
                .unwrap();
        assert!(v.iter_errors(&bad).count() >= 2);
        // The same example with simulated disks is a valid plan.
        let sim_text = text
            .replace("\"/dev/sdb\"", "\"sim:ssd:64M\"")
            .replace("{\"serial\": \"SN1\"}", "\"sim:ssd:65M\"")
            .replace("/dev/sdd", "sim:ssd:8M")
            .replace("/dev/sde", "sim:ssd:9M")
            .replace("/dev/sdf", "sim:ssd:10M");
        let p = validate(&parse(&sim_text, "README").unwrap(), "README", &sim()).unwrap();
        assert_eq!(p.stacks.len(), 4);
    }
}
