//! Reading result documents: one file, one [`Loaded`] document or one error
//! naming the file and what is wrong.
//!
//! Version rules: `bootbench.result/1` is read as is; `bootbench.result/1.N`
//! (a newer minor version: only additions) is read with a warning, its
//! unknown fields ignored; another schema name or another major version, a
//! file that is not JSON or is cut short, or a document that does not have
//! the fields of version 1 is an error. Nothing here panics on any input.
//!
//! The read stage (report/README.md) also holds what else comes in:
//! documents cut out of a console log ([`extract`]), the machine a document
//! names ([`machine`]), and the baseline made of many documents
//! ([`baseline`]).

pub mod baseline;
pub mod extract;
pub mod machine;

use std::path::Path;

use bench_core::document::result::{ResultDoc, SCHEMA};
use serde_json::Value;

/// A result document read from a file.
#[derive(Debug)]
pub struct Loaded {
    /// The file name as given on the command line.
    pub file: String,
    /// The document.
    pub doc: ResultDoc,
    /// What the reader accepted with reservations (a newer minor version).
    pub warnings: Vec<String>,
}

/// A file that is not a result document this tool reads.
#[derive(Debug)]
pub struct ReadError {
    /// The file name as given.
    pub file: String,
    /// What is wrong with it.
    pub what: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.what)
    }
}

impl std::error::Error for ReadError {}

/// The schema name without its version: `bootbench.result`.
const NAME: &str = "bootbench.result";

/// Read the result document in `path` (see [`parse`]).
pub fn load(path: &Path) -> Result<Loaded, ReadError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ReadError {
        file: file.clone(),
        what: format!("cannot read: {e}"),
    })?;
    from_bytes(&file, bytes)
}

/// [`load`] of a file's bytes, read already; `file` names it in messages.
pub fn from_bytes(file: &str, bytes: Vec<u8>) -> Result<Loaded, ReadError> {
    let file = file.to_owned();
    let text = String::from_utf8(bytes).map_err(|e| ReadError {
        file: file.clone(),
        what: format!(
            "not a bootbench result document: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
    })?;
    parse(&file, &text)
}

/// Parse `text`, the contents of `file` (the name is only used in messages).
pub fn parse(file: &str, text: &str) -> Result<Loaded, ReadError> {
    let fail = |what: String| ReadError {
        file: file.to_owned(),
        what,
    };
    if text.trim().is_empty() {
        return Err(fail("empty file: not a bootbench result document".into()));
    }
    // A first pass reads the JSON's kind and its `schema` only (the rest
    // skipped without building anything), so the document is parsed once,
    // into its types, and not into a `Value` first.
    let head: Head = serde_json::from_str(text).map_err(|e| {
        fail(if e.is_eof() {
            format!("truncated: the JSON ends early ({e})")
        } else {
            format!("not JSON: {e}")
        })
    })?;
    let schema = match head {
        Head::Other(kind) => {
            return Err(fail(format!(
                "not a bootbench result document: the JSON is {kind}, not an object"
            )))
        }
        Head::Object(None) => {
            return Err(fail(format!(
                "not a bootbench result document: no \"schema\" field (expected \"{SCHEMA}\")"
            )))
        }
        Head::Object(Some(Value::String(s))) => s,
        Head::Object(Some(other)) => {
            return Err(fail(format!(
                "not a bootbench result document: \"schema\" is {}, not a string",
                kind_of(&other)
            )))
        }
    };
    let mut warnings = Vec::new();
    let schema = schema.as_str();
    match version_of(schema) {
        Version::Current => {}
        Version::NewerMinor(minor) => warnings.push(format!(
            "schema {schema:?} is a newer minor version than this tool's {SCHEMA}: read as version 1, \
             fields added in 1.{minor} are ignored"
        )),
        Version::OtherMajor(v) => {
            return Err(fail(format!(
            "schema {schema:?} is version {v} of the result document; this tool reads {SCHEMA} (major version 1) only"
        )))
        }
        Version::OtherName => {
            return Err(fail(format!(
                "schema {schema:?} is not a bootbench result document (expected \"{SCHEMA}\")"
            )))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let doc: ResultDoc = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        // `.` is the document itself: its own fields are named by serde.
        let at = e.path().to_string();
        if at == "." {
            fail(format!("does not match {SCHEMA}: {}", e.into_inner()))
        } else {
            fail(format!("does not match {SCHEMA}: {at}: {}", e.into_inner()))
        }
    })?;
    Ok(Loaded {
        file: file.to_owned(),
        doc,
        warnings,
    })
}

/// What the first pass over a file finds: an object and its `schema`
/// field (`None` without one), or the kind of JSON it is instead.
enum Head {
    Object(Option<Value>),
    Other(&'static str),
}

impl<'de> serde::Deserialize<'de> for Head {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Head, D::Error> {
        d.deserialize_any(HeadVisitor)
    }
}

struct HeadVisitor;

impl<'de> serde::de::Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut schema = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "schema" && schema.is_none() {
                schema = Some(map.next_value::<Value>()?);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(Head::Object(schema))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Head, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Head::Other("an array"))
    }

    fn visit_unit<E>(self) -> Result<Head, E> {
        Ok(Head::Other("null"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Head, E> {
        Ok(Head::Other("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Head, E> {
        Ok(Head::Other("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Head, E> {
        Ok(Head::Other("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Head, E> {
        Ok(Head::Other("a number"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Head, E> {
        Ok(Head::Other("a string"))
    }
}

/// How a schema string relates to [`SCHEMA`].
#[derive(Debug, PartialEq, Eq)]
enum Version {
    /// `bootbench.result/1`.
    Current,
    /// `bootbench.result/1.N`: the minor number.
    NewerMinor(String),
    /// `bootbench.result/V` with another major version V (as written).
    OtherMajor(String),
    /// Anything else.
    OtherName,
}

fn version_of(schema: &str) -> Version {
    let Some(v) = schema.strip_prefix(NAME).and_then(|r| r.strip_prefix('/')) else {
        return Version::OtherName;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (major, minor) = match v.split_once('.') {
        Some((ma, mi)) => (ma, Some(mi)),
        None => (v, None),
    };
    if !digits(major) || minor.is_some_and(|m| !digits(m)) {
        return Version::OtherName;
    }
    if major.trim_start_matches('0') != "1" || major.starts_with('0') {
        return Version::OtherMajor(v.to_owned());
    }
    match minor {
        None => Version::Current,
        Some(m) if m.bytes().all(|b| b == b'0') => Version::Current,
        Some(m) => Version::NewerMinor(m.to_owned()),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for (s, want) in [
            ("bootbench.result/1", Version::Current),
            ("bootbench.result/1.0", Version::Current),
            ("bootbench.result/1.3", Version::NewerMinor("3".into())),
            ("bootbench.result/1.12", Version::NewerMinor("12".into())),
            ("bootbench.result/2", Version::OtherMajor("2".into())),
            ("bootbench.result/2.1", Version::OtherMajor("2.1".into())),
            ("bootbench.result/0", Version::OtherMajor("0".into())),
            ("bootbench.result/01", Version::OtherMajor("01".into())),
            ("bootbench.result/1.x", Version::OtherName),
            ("bootbench.result/", Version::OtherName),
            ("bootbench.result/1.", Version::OtherName),
            ("bootbench.result", Version::OtherName),
            ("bootbench.config/1", Version::OtherName),
            ("", Version::OtherName),
        ] {
            assert_eq!(version_of(s), want, "{s}");
        }
    }

    #[test]
    fn bad_inputs_name_what_is_wrong() {
        for (text, want) in [
            ("", "empty file"),
            ("   \n", "empty file"),
            ("hello", "not JSON"),
            ("{\"schema\": \"bootbench.result/1\", \"tool\": {", "truncated"),
            ("[1, 2]", "is an array, not an object"),
            ("{\"tool\": 1}", "no \"schema\" field"),
            ("{\"schema\": 1}", "\"schema\" is a number"),
            ("{\"schema\": \"bootbench.result/2\"}", "is version 2"),
            ("{\"schema\": \"other/1\"}", "is not a bootbench result document"),
            (
                "{\"schema\": \"bootbench.result/1\"}",
                "does not match bootbench.result/1: missing field",
            ),
            ("{\"schema\": \"bootbench.result/1.4\"}", "does not match"),
        ] {
            let e = parse("f.json", text).unwrap_err();
            assert_eq!(e.file, "f.json");
            assert!(e.what.contains(want), "{text:?}: {e}");
            assert!(!e.to_string().contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn nesting_and_odd_bytes_do_not_panic() {
        let deep = "[".repeat(100_000);
        assert!(parse("d", &deep).is_err());
        let deep_obj = "{\"a\":".repeat(10_000);
        assert!(parse("d", &deep_obj).is_err());
        assert!(parse("d", "\u{0}\u{ffff}").is_err());
    }
}
