//! The names of closed sets come from serde alone.
//!
//! A closed set (a workload, a RAID level, a layer kind, what to do when
//! the run is over) is an enum of unit variants whose serde names
//! (`#[serde(rename_all = ...)]`, `#[serde(rename = ...)]`) are the names
//! configs, results and messages use. [`name_of`] reads a variant's name
//! from its `Serialize` and [`from_name`] finds the variant of a name
//! through its `Deserialize`, so no second table of names can drift from
//! the one serde reads and writes.

use core::fmt;

use serde::de::value::{Error as ValueError, StrDeserializer};
use serde::de::DeserializeOwned;
use serde::ser::{Impossible, Serialize, Serializer};

/// The name serde gives the unit variant `v` (`Workload::RandRead` is
/// `"rand_read"`); empty for anything that is not a unit variant of an
/// enum.
pub fn name_of<T: Serialize + ?Sized>(v: &T) -> &'static str {
    v.serialize(NameOf).unwrap_or("")
}

/// The variant serde reads for `name`, if any.
pub fn from_name<T: DeserializeOwned>(name: &str) -> Option<T> {
    T::deserialize(StrDeserializer::<ValueError>::new(name)).ok()
}

/// The names of `all` (a closed set's variants), joined by `sep`: what an
/// error lists as expected.
pub fn names_joined<T: Serialize>(all: &[T], sep: &str) -> alloc::string::String {
    let mut out = alloc::string::String::new();
    for (i, v) in all.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(name_of(v));
    }
    out
}

/// What [`NameOf`] says of a value that is not a unit variant.
#[derive(Debug)]
struct NotUnit;

impl fmt::Display for NotUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a unit variant")
    }
}

impl serde::ser::StdError for NotUnit {}

impl serde::ser::Error for NotUnit {
    fn custom<M: fmt::Display>(_: M) -> Self {
        NotUnit
    }
}

/// A serializer that takes unit variants only and gives their names,
/// which serde hands over as `&'static str`.
struct NameOf;

macro_rules! not_unit {
    ($($f:ident($($t:ty),*)),* $(,)?) => {
        $(fn $f(self, $(_: $t),*) -> Result<&'static str, NotUnit> { Err(NotUnit) })*
    };
}

impl Serializer for NameOf {
    type Ok = &'static str;
    type Error = NotUnit;
    type SerializeSeq = Impossible<&'static str, NotUnit>;
    type SerializeTuple = Impossible<&'static str, NotUnit>;
    type SerializeTupleStruct = Impossible<&'static str, NotUnit>;
    type SerializeTupleVariant = Impossible<&'static str, NotUnit>;
    type SerializeMap = Impossible<&'static str, NotUnit>;
    type SerializeStruct = Impossible<&'static str, NotUnit>;
    type SerializeStructVariant = Impossible<&'static str, NotUnit>;

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<&'static str, NotUnit> {
        Ok(variant)
    }

    not_unit!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<&'static str, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T) -> Result<&'static str, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NotUnit> {
        Err(NotUnit)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotUnit> {
        Err(NotUnit)
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, _: &T) -> Result<&'static str, NotUnit> {
        Err(NotUnit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        RandRead,
        #[serde(rename = "left-symmetric")]
        LeftSymmetric,
        Data(u8),
    }

    /// The names are serde's, both ways; anything but a unit variant has
    /// no name, and an unknown name no variant.
    #[test]
    fn names_come_from_serde_both_ways() {
        assert_eq!(name_of(&Kind::RandRead), "rand_read");
        assert_eq!(name_of(&Kind::LeftSymmetric), "left-symmetric");
        assert_eq!(name_of(&Kind::Data(3)), "");
        assert_eq!(name_of(&7u8), "");
        assert_eq!(from_name::<Kind>("rand_read"), Some(Kind::RandRead));
        assert_eq!(from_name::<Kind>("left-symmetric"), Some(Kind::LeftSymmetric));
        assert_eq!(from_name::<Kind>("RandRead"), None);
        assert_eq!(from_name::<Kind>("data"), None);
        assert_eq!(
            names_joined(&[Kind::RandRead, Kind::LeftSymmetric], ", "),
            "rand_read, left-symmetric"
        );
    }
}
