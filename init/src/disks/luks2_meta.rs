//! A LUKS2 header's JSON metadata, typed once for both of its readers:
//! [`super::luks`] (what `list` shows of a container) and
//! [`super::unlock`] (its volume key from a passphrase).
//!
//! It is read as leniently as a header found on a disk must be: the JSON
//! must parse, but a field that is absent or of another type is `None`
//! (each reader says what it needed and did not find), and the `type`
//! fields are kept as written, so a refusal can show them. Offsets and
//! sizes are numbers held as strings, as LUKS2 writes them (a plain number
//! is taken too). The objects of segments, digests and keyslots are by
//! their ids, in the order of the ids' text (`"0"`, `"1"`, `"10"`, `"2"`).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The metadata: its segments, digests and keyslots (`None`: not an object).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Luks2Meta {
    /// `segments`.
    pub segments: Option<BTreeMap<String, Segment>>,
    /// `digests`.
    pub digests: Option<BTreeMap<String, Digest>>,
    /// `keyslots`.
    pub keyslots: Option<BTreeMap<String, Keyslot>>,
}

/// A segment.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// `type` as written (`"crypt"`).
    pub kind: Value,
    /// `encryption` (`"aes-xts-plain64"`).
    pub encryption: Option<String>,
    /// `offset`, bytes.
    pub offset: Option<u64>,
    /// `size`.
    pub size: SegmentSize,
    /// `sector_size`, bytes.
    pub sector_size: Option<u64>,
    /// `iv_tweak`.
    pub iv_tweak: Option<u64>,
}

/// A segment's `size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentSize {
    /// `"dynamic"`: to the end of the device.
    Dynamic,
    /// Bytes.
    Bytes(u64),
    /// Absent, or neither a number nor `"dynamic"`.
    Unknown,
}

/// A digest: what checks a volume key, and which segments and keyslots it covers.
#[derive(Clone, Debug, PartialEq)]
pub struct Digest {
    /// `type` as written (`"pbkdf2"`).
    pub kind: Value,
    /// `segments`: the ids of the segments (the strings of the list).
    pub segments: Vec<String>,
    /// `keyslots`: the ids of the keyslots (the strings of the list).
    pub keyslots: Vec<String>,
    /// `hash`.
    pub hash: Option<String>,
    /// `iterations`.
    pub iterations: Option<u64>,
    /// `salt`, base64.
    pub salt: Option<String>,
    /// `digest`, base64.
    pub digest: Option<String>,
}

/// A keyslot.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyslot {
    /// `type` as written (`"luks2"`).
    pub kind: Value,
    /// `priority` (0: never tried, 1 normal, 2 high).
    pub priority: Option<u64>,
    /// `key_size`: the volume key's bytes.
    pub key_size: Option<u64>,
    /// `af`: the anti-forensic splitter.
    pub af: Af,
    /// `area`: where the key material is.
    pub area: Area,
    /// `kdf`: how the passphrase becomes the area's key.
    pub kdf: Kdf,
}

/// A keyslot's anti-forensic splitter.
#[derive(Clone, Debug, PartialEq)]
pub struct Af {
    /// `type` as written (`"luks1"`).
    pub kind: Value,
    /// `stripes`.
    pub stripes: Option<u64>,
    /// `hash`.
    pub hash: Option<String>,
}

/// A keyslot's area.
#[derive(Clone, Debug, PartialEq)]
pub struct Area {
    /// `type` as written (`"raw"`).
    pub kind: Value,
    /// `encryption`.
    pub encryption: Option<String>,
    /// `key_size`: the area key's bytes.
    pub key_size: Option<u64>,
    /// `offset`, bytes.
    pub offset: Option<u64>,
}

/// A keyslot's key derivation.
#[derive(Clone, Debug, PartialEq)]
pub struct Kdf {
    /// `type` (`"pbkdf2"`, `"argon2i"`, `"argon2id"`; `None`: not a string).
    pub kind: Option<String>,
    /// `salt`, base64.
    pub salt: Option<String>,
    /// PBKDF2's `hash`.
    pub hash: Option<String>,
    /// PBKDF2's `iterations`.
    pub iterations: Option<u64>,
    /// Argon2's `time` (passes).
    pub time: Option<u64>,
    /// Argon2's `memory`, KiB.
    pub memory: Option<u64>,
    /// Argon2's `cpus`.
    pub cpus: Option<u64>,
}

/// A number held as a string, as LUKS2 writes offsets and sizes, or a plain one.
fn num(v: &Value) -> Option<u64> {
    v.as_str().and_then(|s| s.parse().ok()).or_else(|| v.as_u64())
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// The strings of a list (none if it is not one).
fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The members of an object, each read by `f`, if it is one.
fn by_id<T>(v: &Value, f: fn(&Value) -> T) -> Option<BTreeMap<String, T>> {
    v.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), f(v))).collect())
}

impl Segment {
    fn read(v: &Value) -> Segment {
        Segment {
            kind: v["type"].clone(),
            encryption: text(&v["encryption"]),
            offset: num(&v["offset"]),
            size: match &v["size"] {
                Value::String(s) if s == "dynamic" => SegmentSize::Dynamic,
                v => num(v).map_or(SegmentSize::Unknown, SegmentSize::Bytes),
            },
            sector_size: v["sector_size"].as_u64(),
            iv_tweak: num(&v["iv_tweak"]),
        }
    }
}

impl Digest {
    fn read(v: &Value) -> Digest {
        Digest {
            kind: v["type"].clone(),
            segments: names(&v["segments"]),
            keyslots: names(&v["keyslots"]),
            hash: text(&v["hash"]),
            iterations: v["iterations"].as_u64(),
            salt: text(&v["salt"]),
            digest: text(&v["digest"]),
        }
    }
}

impl Keyslot {
    fn read(v: &Value) -> Keyslot {
        let (af, ar, kdf) = (&v["af"], &v["area"], &v["kdf"]);
        Keyslot {
            kind: v["type"].clone(),
            priority: v["priority"].as_u64(),
            key_size: v["key_size"].as_u64(),
            af: Af {
                kind: af["type"].clone(),
                stripes: af["stripes"].as_u64(),
                hash: text(&af["hash"]),
            },
            area: Area {
                kind: ar["type"].clone(),
                encryption: text(&ar["encryption"]),
                key_size: ar["key_size"].as_u64(),
                offset: num(&ar["offset"]),
            },
            kdf: Kdf {
                kind: text(&kdf["type"]),
                salt: text(&kdf["salt"]),
                hash: text(&kdf["hash"]),
                iterations: kdf["iterations"].as_u64(),
                time: kdf["time"].as_u64(),
                memory: kdf["memory"].as_u64(),
                cpus: kdf["cpus"].as_u64(),
            },
        }
    }
}

impl From<&Value> for Luks2Meta {
    fn from(v: &Value) -> Self {
        Luks2Meta {
            segments: by_id(&v["segments"], Segment::read),
            digests: by_id(&v["digests"], Digest::read),
            keyslots: by_id(&v["keyslots"], Keyslot::read),
        }
    }
}

impl<'de> Deserialize<'de> for Luks2Meta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|v| Luks2Meta::from(&v))
    }
}

impl Luks2Meta {
    /// The metadata in `area`, the bytes after a LUKS2 binary header (its
    /// JSON runs to the first NUL); the error says why it is not JSON.
    pub fn read(area: &[u8]) -> Result<Luks2Meta, String> {
        let end = area.iter().position(|&c| c == 0).unwrap_or(area.len());
        serde_json::from_slice(&area[..end]).map_err(|e| format!("the LUKS2 JSON metadata: {e}"))
    }

    /// The first crypt segment, with its id.
    pub fn crypt_segment(&self) -> Option<(&String, &Segment)> {
        self.segments.as_ref()?.iter().find(|(_, s)| s.kind == "crypt")
    }

    /// How many keyslots there are (0 when `keyslots` is not an object).
    pub fn keyslot_count(&self) -> usize {
        self.keyslots.as_ref().map_or(0, BTreeMap::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_reads_leniently_in_the_order_of_its_ids() {
        let m = Luks2Meta::read(
            br#"{"segments": {"0": {"type": "crypt", "offset": "16777216", "size": "dynamic",
                 "encryption": "aes-xts-plain64", "sector_size": 512}},
                 "keyslots": {"2": {"type": "luks2", "key_size": 64}, "10": {"key_size": "x"}},
                 "digests": 3}"#,
        )
        .unwrap();
        let (id, s) = m.crypt_segment().unwrap();
        assert_eq!(
            (id.as_str(), s.offset, s.size),
            ("0", Some(16 << 20), SegmentSize::Dynamic)
        );
        let ks = m.keyslots.as_ref().unwrap();
        assert_eq!(ks.keys().collect::<Vec<_>>(), ["10", "2"]);
        assert_eq!((ks["10"].key_size, ks["10"].kind.clone()), (None, Value::Null));
        assert_eq!(m.digests, None);
        assert_eq!(m.keyslot_count(), 2);
        assert!(Luks2Meta::read(b"{")
            .unwrap_err()
            .starts_with("the LUKS2 JSON metadata: "));
    }
}
