//! The config's `existing` as written, typed when the config is read:
//! `"all"`, or a list of md array names or UUIDs, LVM volumes (`VG/LV`) and
//! LUKS entries (`{"luks": UUID, "key_file": PATH, "unlock_seconds": N}`).
//!
//! Reading it never fails: a value of a form `existing` does not take is
//! kept as written, and [`super::existing`] refuses it with a message that
//! shows it (the messages are the bad-input corpus's, named by where the
//! entry is, checked once the rest of the config is). Written back
//! ([`Serialize`], which the plan's id hashes), each value is the JSON it
//! was read from.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// `existing`.
#[derive(Clone, Debug, PartialEq)]
pub enum RawExisting {
    /// `"all"`.
    All,
    /// A list of at least one entry.
    List(Vec<RawWanted>),
    /// Anything else (a number, another string, an empty list), as written.
    Refused(Value),
}

/// One entry of `existing`'s list.
#[derive(Clone, Debug, PartialEq)]
pub enum RawWanted {
    /// `"all"` in the list.
    All,
    /// A non-empty name without a slash: an md array's name or UUID.
    Array(String),
    /// `VG/LV`: a volume group's name and a logical volume's, neither
    /// empty, the volume's without a slash.
    Volume(String, String),
    /// A name with a slash that is not `VG/LV` (`"vg0/root/x"`, `"/lv"`).
    NotVolume(String),
    /// An object: a LUKS container.
    Luks(RawLuks),
    /// Anything else (a number, an empty string, a list), as written.
    Refused(Value),
}

/// A field of a LUKS entry.
#[derive(Clone, Debug, PartialEq)]
pub enum Field<T> {
    /// Not given.
    Absent,
    /// Given in the form the field takes.
    Given(T),
    /// Given in another form, as written.
    Refused(Value),
}

/// A LUKS entry of `existing`.
#[derive(Clone, Debug, PartialEq)]
pub struct RawLuks {
    /// The container's UUID: a non-empty string.
    pub luks: Field<String>,
    /// The path of the file holding its passphrase: a non-empty string
    /// (relative paths from the config's directory).
    pub key_file: Field<String>,
    /// The most trying the key may take, seconds: a whole number (its
    /// range is checked with the rest of the entry).
    pub unlock_seconds: Field<u64>,
    /// The keys a LUKS entry does not have, with their values, by name.
    pub unknown: Map<String, Value>,
}

impl From<Value> for RawExisting {
    fn from(v: Value) -> Self {
        match v {
            Value::String(s) if s == "all" => RawExisting::All,
            Value::Array(items) if !items.is_empty() => {
                RawExisting::List(items.into_iter().map(RawWanted::from).collect())
            }
            other => RawExisting::Refused(other),
        }
    }
}

impl From<Value> for RawWanted {
    fn from(v: Value) -> Self {
        match v {
            Value::Object(o) => RawWanted::Luks(RawLuks::from(o)),
            Value::String(s) if s == "all" => RawWanted::All,
            Value::String(s) if !s.is_empty() => match s.split_once('/') {
                None => RawWanted::Array(s),
                Some((vg, lv)) if !vg.is_empty() && !lv.is_empty() && !lv.contains('/') => {
                    RawWanted::Volume(vg.to_string(), lv.to_string())
                }
                Some(_) => RawWanted::NotVolume(s),
            },
            other => RawWanted::Refused(other),
        }
    }
}

/// A non-empty string, else the value as written.
fn text(v: Option<Value>) -> Field<String> {
    match v {
        None => Field::Absent,
        Some(Value::String(s)) if !s.is_empty() => Field::Given(s),
        Some(other) => Field::Refused(other),
    }
}

impl From<Map<String, Value>> for RawLuks {
    fn from(mut o: Map<String, Value>) -> Self {
        let luks = text(o.remove("luks"));
        let key_file = text(o.remove("key_file"));
        let unlock_seconds = match o.remove("unlock_seconds") {
            None => Field::Absent,
            Some(v) => v.as_u64().map_or(Field::Refused(v), Field::Given),
        };
        RawLuks {
            luks,
            key_file,
            unlock_seconds,
            unknown: o,
        }
    }
}

impl<T: Into<Value> + Clone> Field<T> {
    /// The value as written, if given.
    fn written(&self) -> Option<Value> {
        match self {
            Field::Absent => None,
            Field::Given(t) => Some(t.clone().into()),
            Field::Refused(v) => Some(v.clone()),
        }
    }
}

impl RawWanted {
    /// The entry as written.
    fn written(&self) -> Value {
        match self {
            RawWanted::All => Value::from("all"),
            RawWanted::Array(s) | RawWanted::NotVolume(s) => Value::from(s.as_str()),
            RawWanted::Volume(vg, lv) => Value::from(format!("{vg}/{lv}")),
            RawWanted::Luks(l) => {
                let mut o = l.unknown.clone();
                for (k, v) in [
                    ("luks", l.luks.written()),
                    ("key_file", l.key_file.written()),
                    ("unlock_seconds", l.unlock_seconds.written()),
                ] {
                    if let Some(v) = v {
                        o.insert(k.to_string(), v);
                    }
                }
                Value::Object(o)
            }
            RawWanted::Refused(v) => v.clone(),
        }
    }
}

impl RawExisting {
    /// `existing` as written.
    pub fn written(&self) -> Value {
        match self {
            RawExisting::All => Value::from("all"),
            RawExisting::List(items) => Value::Array(items.iter().map(RawWanted::written).collect()),
            RawExisting::Refused(v) => v.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for RawExisting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(RawExisting::from)
    }
}

impl Serialize for RawExisting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.written().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_reads_typed_and_writes_back_as_written() {
        for text in [
            r#""all""#,
            r#"3"#,
            r#""some""#,
            r#"[]"#,
            r#"["all", "mirror", "vg0/root", "vg0/root/x", "/x", "", 4, null]"#,
            r#"[{"luks": "u", "key_file": "k"}, {"luks": "", "unlock_seconds": 0, "passphrase": "p"}]"#,
            r#"[{"unlock_seconds": 1.5, "key_file": 3, "z": 1, "a": 2}]"#,
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            let e: RawExisting = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_value(&e).unwrap(), v, "{text}");
        }
        let e: RawExisting = serde_json::from_str(r#"["md0", "vg/lv", {"luks": "u", "key_file": "k"}]"#).unwrap();
        assert_eq!(
            e,
            RawExisting::List(vec![
                RawWanted::Array("md0".into()),
                RawWanted::Volume("vg".into(), "lv".into()),
                RawWanted::Luks(RawLuks {
                    luks: Field::Given("u".into()),
                    key_file: Field::Given("k".into()),
                    unlock_seconds: Field::Absent,
                    unknown: Map::new(),
                }),
            ])
        );
    }
}
