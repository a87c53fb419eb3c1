//! The config as written: the serde types of `bootbench.json` (strict:
//! `deny_unknown_fields`, serde's messages carry the line and column), the
//! reading of the file and of its scalar values (sizes, durations, whole
//! numbers), and the one error type of every stage.

use std::fmt;

use bench_core::size::{parse_size, EXPECTED};
use bench_core::units::Nanos;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::plan::safety::TargetRef;

/// A config error: one line, exit status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub(super) fn err<T>(msg: impl Into<String>) -> Result<T, ConfigError> {
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
    rwmix_order,
    norandommap,
    flush_every,
    points,
    seed,
    verify,
    direct,
    fsync_freq,
    end_fsync,
    min_ios,
    file_num,
    max_bs,
    passes,
    warmup,
    fill,
    pause,
    hipri,
    sqthread_poll,
    sqthread_poll_cpu,
    cpus_allowed,
    cpus_allowed_policy
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
    /// Booted from the stick: the serial ports the results go to besides
    /// the console (`["ttyS1"]`; `[]`: the console only); absent: every
    /// port with a UART. `bootbench.serial=` overrides it. Ignored by the
    /// live command.
    #[serde(default)]
    pub serial_ports: Option<Vec<String>>,
    /// Where an unattended run also sends its document with PUT: an
    /// http(s) URL template (`{machine}`, `{run}`, `{n}`; see
    /// `results::remote`). `bootbench.results_url=` overrides it. Ignored by
    /// the live command.
    #[serde(default)]
    pub results_url: Option<String>,
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
    /// The layer's readahead (its `queue/read_ahead_kb`), a multiple of
    /// 4 KiB, as `lvcreate --readahead` or `blockdev --setra` set it;
    /// absent: the kernel's choice.
    #[serde(default)]
    pub read_ahead: Option<Scalar>,
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
pub(super) fn escape_controls(msg: &str) -> String {
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
pub(super) fn objects_only(config: &serde_json::Value) -> Result<(), String> {
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

pub(super) fn secs_f64(x: f64) -> Option<Nanos> {
    let ns = (x * 1e9).round();
    // Below 1.8e19 (< u64::MAX) and not negative: the cast is exact to the ns.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (x.is_finite() && (0.0..1.8e19).contains(&ns)).then_some(Nanos(ns as u64))
}

pub(super) fn size_of(v: &Scalar, at: &str) -> Result<u64, ConfigError> {
    match v {
        Scalar::Int(n) => Ok(*n),
        Scalar::Str(s) => {
            parse_size(s.trim()).map_err(|e| ConfigError(format!("{at}: {v} is not a size: {e}; expected {EXPECTED}")))
        }
        Scalar::Float(_) | Scalar::Bool(_) => err(format!("{at}: {v} is not a size; expected {EXPECTED}")),
    }
}

pub(super) fn int_of(v: &Scalar, at: &str, expected: &str) -> Result<u64, ConfigError> {
    match v {
        Scalar::Int(n) => Ok(*n),
        Scalar::Str(s) => s
            .trim()
            .parse::<u64>()
            .or_else(|_| err(format!("{at}: {v} is not a whole number; expected {expected}"))),
        Scalar::Float(_) | Scalar::Bool(_) => err(format!("{at}: {v} is not a whole number; expected {expected}")),
    }
}

pub(super) fn u32_of(v: &Scalar, at: &str, expected: &str, min: u32) -> Result<u32, ConfigError> {
    let n = int_of(v, at, expected)?;
    match u32::try_from(n) {
        Ok(n) if n >= min => Ok(n),
        _ => err(format!("{at}: {v} is out of range; expected {expected}")),
    }
}

pub(super) fn dur_of(v: &Scalar, at: &str) -> Result<Nanos, ConfigError> {
    parse_duration(v).map_err(|e| ConfigError(format!("{at}: {v} is not a duration; expected {e}")))
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
    /// Writes withheld from every target for this reason, whatever the
    /// config's `destructive` says (a config from the network that the
    /// initramfs does not allow to write).
    pub withhold_writes: Option<String>,
}
