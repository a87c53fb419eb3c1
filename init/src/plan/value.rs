//! The config's values as types: each deserializes straight from the JSON
//! and says, when it cannot, what it got and what it expects (serde adds
//! the field's path, `serde_json` the line and column). Sizes and
//! durations keep the text they were written as, for later messages that
//! quote the value (`arrays[0].chunk: "2G" is not a chunk size ...`).
//!
//! - [`Scalar`]: a value as written (a number, a string, a boolean), the
//!   first step of each of the others.
//! - [`Size`] (`4k`, `1M`, a number of bytes), [`Duration`] (`5s`, a number
//!   of seconds), [`Whole`] (a whole number in a [`Range`] of its own,
//!   also as a string: `"8"`), [`Flag`] (true or false), [`CpuList`].
//! - [`Closed`]: a closed set (an enum of unit variants) named by serde
//!   alone, read with [`closed`] and [`closed_opt`].
//! - [`Obj`]: a config object that refuses a JSON list (serde's derived
//!   structs would read one field by field).

use std::fmt;
use std::marker::PhantomData;

use bench_core::vocab::cpus::{CpuListError, CpuSet, Placement, MAX_NODES};
use bench_core::vocab::names::{from_name, names_joined};
use bench_core::vocab::size::{parse_size, EXPECTED as SIZE_EXPECTED};
use bench_core::vocab::units::Nanos;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A value as written: a number, a string or a boolean.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// A non-negative whole number.
    Int(u64),
    /// Any other number (negative or fractional).
    Float(f64),
    /// A string (`"4k"`, `"5s"`).
    Str(String),
    /// `true` or `false`.
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

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Scalar::Int(n) => s.serialize_u64(*n),
            Scalar::Float(x) => s.serialize_f64(*x),
            Scalar::Str(v) => s.serialize_str(v),
            Scalar::Bool(b) => s.serialize_bool(*b),
        }
    }
}

/// Read a [`Scalar`], then make it a `T` with `make`, whose error is the
/// message.
pub fn from_scalar<'de, D: Deserializer<'de>, T>(
    d: D,
    make: impl FnOnce(Scalar) -> Result<T, String>,
) -> Result<T, D::Error> {
    make(Scalar::deserialize(d)?).map_err(de::Error::custom)
}

/// A size in bytes: a number, or a string with dd's suffixes (`4k`, `1M`,
/// `16KiB` = 1024-based, `1kB`, `1GB` = 1000-based).
#[derive(Clone, Debug, PartialEq)]
pub struct Size {
    /// Bytes.
    pub bytes: u64,
    /// As written.
    pub written: Scalar,
}

impl Size {
    /// The size `v` gives, or why it gives none.
    pub fn parse(v: Scalar) -> Result<Size, String> {
        let bytes = match &v {
            Scalar::Int(n) => *n,
            Scalar::Str(s) => {
                parse_size(s.trim()).map_err(|e| format!("{v} is not a size: {e}; expected {SIZE_EXPECTED}"))?
            }
            Scalar::Float(_) | Scalar::Bool(_) => return Err(format!("{v} is not a size; expected {SIZE_EXPECTED}")),
        };
        Ok(Size { bytes, written: v })
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.written.fmt(f)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, Size::parse)
    }
}

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.written.serialize(s)
    }
}

/// What a duration is expected to be, in words.
pub const DURATION_EXPECTED: &str = "a duration such as 5s, 500ms, 2m, 100us, or a number of seconds";

/// A duration: `"5s"`, `"500ms"`, `"2m"`, `"100us"`, `"1h"`, `"10ns"`, or
/// a number of seconds (fractions allowed).
#[derive(Clone, Debug, PartialEq)]
pub struct Duration {
    /// The length.
    pub ns: Nanos,
    /// As written.
    pub written: Scalar,
}

impl Duration {
    /// The duration `v` gives, or why it gives none.
    pub fn parse(v: Scalar) -> Result<Duration, String> {
        match parse_duration(&v) {
            Some(ns) => Ok(Duration { ns, written: v }),
            None => Err(format!("{v} is not a duration; expected {DURATION_EXPECTED}")),
        }
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.written.fmt(f)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, Duration::parse)
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.written.serialize(s)
    }
}

/// The nanoseconds of a duration as written, if it is one.
pub fn parse_duration(v: &Scalar) -> Option<Nanos> {
    let (num, mult): (&str, u64) = match v {
        Scalar::Int(n) => return n.checked_mul(1_000_000_000).map(Nanos),
        Scalar::Float(x) => return secs_f64(*x),
        Scalar::Bool(_) => return None,
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
                _ => return None,
            };
            (num, mult)
        }
    };
    if num.is_empty() {
        return None;
    }
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult).map(Nanos);
    }
    let x: f64 = num.parse().ok()?;
    #[allow(clippy::cast_precision_loss)] // mult <= 3.6e12, exact in f64
    let ns = x * mult as f64;
    secs_f64(ns / 1e9)
}

/// `x` seconds in whole nanoseconds, if finite, not negative and below
/// about 584 years.
pub fn secs_f64(x: f64) -> Option<Nanos> {
    let ns = (x * 1e9).round();
    // Below 1.8e19 (< u64::MAX) and not negative: the cast is exact to the ns.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (x.is_finite() && (0.0..1.8e19).contains(&ns)).then_some(Nanos(ns as u64))
}

/// The range a whole-number parameter takes, and what an error says it
/// expects.
pub trait Range {
    /// The smallest value taken.
    const MIN: u64;
    /// The largest value taken.
    const MAX: u64;
    /// What is expected, in words.
    const EXPECTED: &'static str;
}

/// A whole number in `R`'s range: a number, or a string of digits.
pub struct Whole<R> {
    /// The number.
    pub n: u64,
    range: PhantomData<fn() -> R>,
}

impl<R> Whole<R> {
    /// `n` as a value of this range (not checked: for tests and defaults).
    pub fn new(n: u64) -> Whole<R> {
        Whole { n, range: PhantomData }
    }
}

impl<R> Clone for Whole<R> {
    fn clone(&self) -> Self {
        Whole::new(self.n)
    }
}

impl<R> fmt::Debug for Whole<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Whole({})", self.n)
    }
}

impl<R> PartialEq for Whole<R> {
    fn eq(&self, o: &Self) -> bool {
        self.n == o.n
    }
}

impl<R: Range> Whole<R> {
    /// The number `v` gives, or why it gives none.
    pub fn parse(v: &Scalar) -> Result<u64, String> {
        let n = match v {
            Scalar::Int(n) => *n,
            Scalar::Str(s) => s
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("{v} is not a whole number; expected {}", R::EXPECTED))?,
            Scalar::Float(_) | Scalar::Bool(_) => {
                return Err(format!("{v} is not a whole number; expected {}", R::EXPECTED))
            }
        };
        if (R::MIN..=R::MAX).contains(&n) {
            Ok(n)
        } else {
            Err(format!("{v} is out of range; expected {}", R::EXPECTED))
        }
    }

    /// The number as a `u32` (the range's bounds make it fit).
    pub fn get32(&self) -> u32 {
        u32::try_from(self.n).unwrap_or(u32::MAX)
    }
}

impl<'de, R: Range> Deserialize<'de> for Whole<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, |v| Whole::<R>::parse(&v).map(Whole::new))
    }
}

impl<R> Serialize for Whole<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.n)
    }
}

/// `cpu_dma_latency`: the CPU wake-up latency limit held while the run
/// measures, a whole number of microseconds up to the kernel's
/// 2000000000 (also as a string of digits), or `"off"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeLimit(pub Option<u32>);

impl WakeLimit {
    /// What an error says is expected.
    pub const EXPECTED: &'static str =
        "a whole number of microseconds from 0 to 2000000000 (0: no CPU idles deeper than polling while the run \
         measures), or \"off\" (the machine's own idle states)";
}

impl<'de> Deserialize<'de> for WakeLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, |v| {
            let n = match &v {
                Scalar::Str(s) if s == "off" => return Ok(WakeLimit(None)),
                Scalar::Int(n) => Some(*n),
                Scalar::Str(s) => s.trim().parse::<u64>().ok(),
                Scalar::Float(_) | Scalar::Bool(_) => None,
            };
            n.filter(|&n| n <= 2_000_000_000)
                .and_then(|n| u32::try_from(n).ok())
                .map(|n| WakeLimit(Some(n)))
                .ok_or_else(|| format!("{v} is not a CPU wake-up latency; expected {}", WakeLimit::EXPECTED))
        })
    }
}

impl Serialize for WakeLimit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(n) => s.serialize_u32(n),
            None => s.serialize_str("off"),
        }
    }
}

/// A boolean: `true` or `false`, nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Flag(pub bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, |v| match v {
            Scalar::Bool(b) => Ok(Flag(b)),
            _ => Err(format!("{v} is not a boolean; expected true or false")),
        })
    }
}

/// A CPU list as fio's `cpus_allowed` takes it (`"0-3,6"`, or one CPU as a
/// number), parsed once as it is read; it writes as given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CpuList(pub CpuSet);

impl<'de> Deserialize<'de> for CpuList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const EXPECTED: &str =
            "a CPU list such as \"0-3,6\" (CPU numbers from 0 to 8191 and ranges low-high, comma-separated)";
        from_scalar(d, |v| {
            let text = match &v {
                Scalar::Str(s) => s.trim().to_string(),
                Scalar::Int(n) => n.to_string(),
                Scalar::Float(_) | Scalar::Bool(_) => {
                    return Err(format!("{v} is not a CPU list; expected {EXPECTED}"))
                }
            };
            match CpuSet::parse(&text) {
                Ok(c) => Ok(CpuList(c)),
                Err(e @ CpuListError::TooLarge(_)) => Err(format!("{v} is out of range: {e}; expected {EXPECTED}")),
                Err(e) => Err(format!("{v} is not a CPU list: {e}; expected {EXPECTED}")),
            }
        })
    }
}

/// Where a test's threads run and its buffers are allocated
/// (`placement`): `"disk"` (its NUMA node, the default), `"any"`, or a
/// node number; checked as it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PlacementArg(pub Placement);

impl<'de> Deserialize<'de> for PlacementArg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const EXPECTED: &str =
            "\"disk\" (the CPUs and memory of the disk's NUMA node), \"any\" (not pinned) or a NUMA node number";
        from_scalar(d, |v| match &v {
            Scalar::Str(s) if s.trim() == "disk" => Ok(PlacementArg(Placement::Disk)),
            Scalar::Str(s) if s.trim() == "any" => Ok(PlacementArg(Placement::Any)),
            Scalar::Int(n) => match u32::try_from(*n) {
                Ok(n) if n < MAX_NODES => Ok(PlacementArg(Placement::Node(n))),
                _ => Err(format!(
                    "{v} is out of range: nodes go up to {}; expected {EXPECTED}",
                    MAX_NODES - 1
                )),
            },
            _ => Err(format!("{v} is not a placement; expected {EXPECTED}")),
        })
    }
}

/// fio's `ss` criterion (`"iops_slope:0.1%"`), checked as it is read.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SteadyArg(pub bench_core::spec::SteadyCriterion);

impl<'de> Deserialize<'de> for SteadyArg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_scalar(d, |v| match &v {
            Scalar::Str(s) => bench_core::spec::SteadyCriterion::parse(s.trim())
                .map(SteadyArg)
                .map_err(|e| format!("{v} is not a steady-state criterion; expected {e}")),
            _ => Err(format!(
                "{v} is not a steady-state criterion; expected {}",
                bench_core::spec::SteadyCriterion::parse("").unwrap_err()
            )),
        })
    }
}

/// A closed set: an enum of unit variants whose names are serde's
/// (`bench_core::vocab::names`).
pub trait Closed: Serialize + DeserializeOwned + Copy + 'static {
    /// What one is, in a message: `"a workload"`.
    const WHAT: &'static str;
    /// Every variant, in the order a message lists them.
    const ALL: &'static [Self];

    /// What an error says is expected: each name (`expected one of a, b`).
    fn expected() -> String {
        format!("one of {}", names_joined(Self::ALL, ", "))
    }
}

/// `T` read from its serde name, or an error that quotes the value and
/// lists the names (`"rand_reed" is not a workload; expected one of
/// cached_read, ...`).
pub fn closed<'de, D: Deserializer<'de>, T: Closed>(d: D) -> Result<T, D::Error> {
    from_scalar(d, |v| {
        let found = match &v {
            Scalar::Str(s) => from_name::<T>(s),
            _ => None,
        };
        found.ok_or_else(|| format!("{v} is not {}; expected {}", T::WHAT, T::expected()))
    })
}

/// [`closed`] for an optional field (`#[serde(default, deserialize_with =
/// "closed_opt")]`).
pub fn closed_opt<'de, D: Deserializer<'de>, T: Closed>(d: D) -> Result<Option<T>, D::Error> {
    closed(d).map(Some)
}

/// A config object, what a list in its place is expected to be instead.
pub trait Object: DeserializeOwned {
    /// What is expected, in words: `an object such as {"workload": "rand_read"}`.
    const EXPECTED: &'static str;
    /// The config itself: its error names it `config`.
    const ROOT: bool = false;
}

/// A config object `T` that refuses a JSON list in its place: serde's
/// derived structs would read a list field by field, in order (`["quick",
/// 42]` would be a config with a profile and a seed). The error shows the
/// list (cut to 60 characters) and what is expected.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Obj<T>(pub T);

impl<T> std::ops::Deref for Obj<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Serialize> Serialize for Obj<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de, T: Object> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Object> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(T::EXPECTED)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Obj)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Obj<T>, A::Error> {
                let mut items = Vec::new();
                while let Some(x) = seq.next_element::<serde_json::Value>()? {
                    items.push(x);
                }
                let mut shown = serde_json::Value::Array(items).to_string();
                if shown.len() > 60 {
                    let mut end = 57;
                    while !shown.is_char_boundary(end) {
                        end -= 1;
                    }
                    shown.truncate(end);
                    shown.push_str("...");
                }
                let at = if T::ROOT { "config: " } else { "" };
                Err(de::Error::custom(format!(
                    "{at}{shown} is a list; expected {}",
                    T::EXPECTED
                )))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(json: &str) -> Scalar {
        serde_json::from_str(json).unwrap()
    }

    /// Durations as written, and what is not one.
    #[test]
    fn durations() {
        for (v, ns) in [
            ("\"5s\"", 5_000_000_000),
            ("\"500ms\"", 500_000_000),
            ("\"2m\"", 120_000_000_000),
            ("\"100us\"", 100_000),
            ("\"7ns\"", 7),
            ("\"1.5s\"", 1_500_000_000),
            ("\"3\"", 3_000_000_000),
            ("2", 2_000_000_000),
            ("0.25", 250_000_000),
        ] {
            assert_eq!(parse_duration(&scalar(v)), Some(Nanos(ns)), "{v}");
        }
        for v in ["\"5q\"", "\"\"", "\"s\"", "-1", "true"] {
            let e = Duration::parse(scalar(v)).unwrap_err();
            assert!(
                e.contains("is not a duration; expected a duration such as 5s"),
                "{v}: {e}"
            );
        }
    }

    struct OneToTen;
    impl Range for OneToTen {
        const MIN: u64 = 1;
        const MAX: u64 = 10;
        const EXPECTED: &'static str = "a whole number from 1 to 10";
    }

    /// A whole number from a number or a string of digits, in its range;
    /// each error quotes the value and says what is expected.
    #[test]
    fn whole_numbers_and_their_messages() {
        let w = |json: &str| Whole::<OneToTen>::parse(&scalar(json));
        assert_eq!(w("3"), Ok(3));
        assert_eq!(w("\" 7\""), Ok(7));
        assert_eq!(
            w("0").unwrap_err(),
            "0 is out of range; expected a whole number from 1 to 10"
        );
        assert_eq!(
            w("11").unwrap_err(),
            "11 is out of range; expected a whole number from 1 to 10"
        );
        assert_eq!(
            w("1.5").unwrap_err(),
            "1.5 is not a whole number; expected a whole number from 1 to 10"
        );
        assert_eq!(
            w("\"x\"").unwrap_err(),
            "\"x\" is not a whole number; expected a whole number from 1 to 10"
        );
        assert_eq!(
            w("-2").unwrap_err(),
            "-2 is not a whole number; expected a whole number from 1 to 10"
        );
    }

    /// Sizes keep what was written for later messages.
    #[test]
    fn sizes_keep_their_text() {
        let s = Size::parse(scalar("\"2G\"")).unwrap();
        assert_eq!((s.bytes, s.to_string()), (2 << 30, "\"2G\"".to_string()));
        assert_eq!(Size::parse(scalar("4096")).unwrap().to_string(), "4096");
        assert!(Size::parse(scalar("true"))
            .unwrap_err()
            .starts_with("true is not a size; expected a size such as"));
    }
}
