//! A Parquet file's footer checked against the file before anything is
//! allocated by what it says ([`check`]): the parquet crate reserves room
//! for as many row groups as the footer claims before reading one (a
//! 32-byte file claiming 2^31-1 row groups asks for 206 GB), and the
//! reader of [`crate::export::tidy`] reads a row group by its `num_rows`.
//!
//! The footer (Thrift's compact protocol, `FileMetaData` of
//! parquet-format) is walked whole, each field read and bounded, without
//! building anything:
//!
//! - its length: within the file, after the leading `PAR1`;
//! - every list, set and map: no more elements than bytes left in the
//!   footer (each takes at least one), and every string or binary no
//!   longer than the bytes left; nesting at most [`MAX_DEPTH`] deep;
//! - the schema: each element's `num_children` at least 0 and at most
//!   the elements after it;
//! - each row group: `num_rows` at least 0 and at most the `num_values` of
//!   each of its column chunks (a row has at least one value, or null, in
//!   every column); each column chunk's `num_values` and sizes at least
//!   0, its pages (from its dictionary or first data page, its
//!   `total_compressed_size` bytes) and its page indexes within the
//!   file's data (between the leading `PAR1` and the footer);
//! - the file's `num_rows`: the sum of its row groups'.
//!
//! The error names the file, the field (`row_groups[0].num_rows`), its
//! value and the bound.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How deep structs, lists, sets and maps may nest in a footer
/// (parquet-format's own go 5 deep).
pub const MAX_DEPTH: usize = 32;

/// Check the footer of the Parquet file at `path` (see the module doc):
/// `Ok` when the parquet crate can be given it.
pub fn check(path: &Path) -> Result<(), String> {
    let file = path.display();
    let bad = |what: String| format!("{file}: Parquet footer: {what}");
    let mut f = std::fs::File::open(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let len = f.metadata().map_err(|e| format!("{file}: cannot read: {e}"))?.len();
    if len < 12 {
        return Err(bad(format!(
            "the file is {len} bytes; expected at least 12 (PAR1, a footer, its length, PAR1)"
        )));
    }
    let mut tail = [0u8; 8];
    f.seek(SeekFrom::End(-8))
        .and_then(|_| f.read_exact(&mut tail))
        .map_err(|e| format!("{file}: cannot read: {e}"))?;
    if &tail[4..] != b"PAR1" {
        return Err(bad(format!(
            "the file ends in {:?}; expected PAR1 (an encrypted footer, PARE, is not read)",
            String::from_utf8_lossy(&tail[4..])
        )));
    }
    let footer_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    // PAR1, the data, the footer, its length, PAR1.
    let data_end = len - 8;
    if footer_len > data_end - 4 {
        return Err(bad(format!(
            "length {footer_len} is more than the {} bytes before it (after the leading PAR1)",
            data_end - 4
        )));
    }
    let data_end = data_end - footer_len;
    let mut footer = vec![0u8; usize::try_from(footer_len).map_err(|_| bad(format!("length {footer_len}")))?];
    f.seek(SeekFrom::Start(data_end))
        .and_then(|_| f.read_exact(&mut footer))
        .map_err(|e| format!("{file}: cannot read: {e}"))?;
    check_footer(&footer, data_end).map_err(bad)
}

/// Check `footer`, a `FileMetaData`, of a file whose data (pages and
/// indexes) ends at byte `data_end` (where the footer starts).
pub fn check_footer(footer: &[u8], data_end: u64) -> Result<(), String> {
    let mut r = Reader { buf: footer, pos: 0 };
    let m = file_metadata(&mut r, data_end)?;
    let sum = m
        .row_group_rows
        .iter()
        .try_fold(0i64, |a, &n| a.checked_add(n))
        .ok_or_else(|| String::from("the row groups' num_rows add up past 2^63"))?;
    match m.num_rows {
        None => Err(String::from("num_rows is missing")),
        Some(n) if n != sum => Err(format!(
            "num_rows {n} is not the {sum} rows of its {} row group(s); expected their sum",
            m.row_group_rows.len()
        )),
        Some(_) => Ok(()),
    }
}

// ---------------------------------------------------------------- Thrift

/// Thrift compact protocol types, as a field header or a list header
/// gives them.
mod ty {
    pub const STOP: u8 = 0;
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const BYTE: u8 = 3;
    pub const I16: u8 = 4;
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const SET: u8 = 10;
    pub const MAP: u8 = 11;
    pub const STRUCT: u8 = 12;
    pub const UUID: u8 = 13;
}

/// The footer being walked.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn byte(&mut self) -> Result<u8, String> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| format!("ends inside a field at byte {}", self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn skip(&mut self, n: usize) -> Result<(), String> {
        if n > self.left() {
            return Err(format!(
                "{n} bytes at byte {} but {} are left in the footer",
                self.pos,
                self.left()
            ));
        }
        self.pos += n;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("a varint longer than 10 bytes at byte {}", self.pos))
    }

    fn zigzag(&mut self) -> Result<i64, String> {
        let v = self.varint()?;
        #[allow(clippy::cast_possible_wrap)] // zigzag: the bits are the value
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A field's value of type `t` as an integer (`I16`, `I32`, `I64`),
    /// named `what` in an error.
    fn int(&mut self, t: u8, what: &str) -> Result<i64, String> {
        match t {
            ty::I16 | ty::I32 | ty::I64 => self.zigzag(),
            _ => Err(format!("{what} is of Thrift type {t}; expected an integer")),
        }
    }

    /// A list or set header: element type and count, the count no more
    /// than the bytes left (each element takes at least one).
    fn list(&mut self, what: &str) -> Result<(u8, usize), String> {
        let h = self.byte()?;
        let short = usize::from(h >> 4);
        let n = if short == 15 {
            let n = self.varint()?;
            usize::try_from(n).unwrap_or(usize::MAX)
        } else {
            short
        };
        if n > self.left() {
            return Err(format!(
                "{what} claims {n} element(s) but {} byte(s) are left in the footer; expected at most one \
                 element per byte",
                self.left()
            ));
        }
        Ok((h & 0x0f, n))
    }

    /// A field header after field `last`: its type and id; `None` at the
    /// struct's end.
    fn field(&mut self, last: i16) -> Result<Option<(u8, i16)>, String> {
        let h = self.byte()?;
        let t = h & 0x0f;
        if t == ty::STOP {
            return Ok(None);
        }
        let delta = h >> 4;
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| format!("a field id past i16 at byte {}", self.pos))?
        } else {
            last.wrapping_add(i16::from(delta))
        };
        Ok(Some((t, id)))
    }

    /// Skip a value of type `t` (a list's elements are read one by one:
    /// nothing is taken on trust).
    fn value(&mut self, t: u8, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("nests deeper than {MAX_DEPTH} at byte {}", self.pos));
        }
        match t {
            // A boolean as a list's element or a map's: one byte.
            ty::TRUE | ty::FALSE | ty::BYTE => self.skip(1),
            ty::I16 | ty::I32 | ty::I64 => self.varint().map(drop),
            ty::DOUBLE => self.skip(8),
            ty::UUID => self.skip(16),
            ty::BINARY => {
                let n = self.varint()?;
                self.skip(usize::try_from(n).unwrap_or(usize::MAX))
            }
            ty::LIST | ty::SET => {
                let (et, n) = self.list("a list")?;
                (0..n).try_for_each(|_| self.value(et, depth + 1))
            }
            ty::MAP => {
                let n = usize::try_from(self.varint()?).unwrap_or(usize::MAX);
                if n == 0 {
                    return Ok(());
                }
                if n > self.left() / 2 {
                    return Err(format!(
                        "a map claims {n} entries but {} byte(s) are left in the footer",
                        self.left()
                    ));
                }
                let kv = self.byte()?;
                (0..n).try_for_each(|_| {
                    self.value(kv >> 4, depth + 1)?;
                    self.value(kv & 0x0f, depth + 1)
                })
            }
            ty::STRUCT => self.each_field(depth + 1, |r, t, _| r.field_value(t, depth + 1)),
            _ => Err(format!("Thrift type {t} at byte {}", self.pos)),
        }
    }

    /// Skip a field's value of type `t`: as [`Reader::value`], but a
    /// boolean field's value is its type (no byte of its own).
    fn field_value(&mut self, t: u8, depth: usize) -> Result<(), String> {
        match t {
            ty::TRUE | ty::FALSE => Ok(()),
            _ => self.value(t, depth),
        }
    }

    /// Each field of a struct to `f` (type, id), until its end.
    fn each_field(
        &mut self,
        depth: usize,
        mut f: impl FnMut(&mut Self, u8, i16) -> Result<(), String>,
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("nests deeper than {MAX_DEPTH} at byte {}", self.pos));
        }
        let mut last = 0;
        while let Some((t, id)) = self.field(last)? {
            f(self, t, id)?;
            last = id;
        }
        Ok(())
    }

    /// A field that must be a list of structs: its count.
    fn struct_list(&mut self, t: u8, what: &str) -> Result<usize, String> {
        if t != ty::LIST {
            return Err(format!("{what} is of Thrift type {t}; expected a list"));
        }
        let (et, n) = self.list(what)?;
        if n > 0 && et != ty::STRUCT {
            return Err(format!("{what} holds Thrift type {et}; expected structs"));
        }
        Ok(n)
    }
}

// ---------------------------------------------------------------- FileMetaData

/// What the checks across structs need of the footer.
struct Meta {
    num_rows: Option<i64>,
    row_group_rows: Vec<i64>,
}

fn file_metadata(r: &mut Reader, data_end: u64) -> Result<Meta, String> {
    let mut m = Meta {
        num_rows: None,
        row_group_rows: Vec::new(),
    };
    r.each_field(0, |r, t, id| match id {
        2 => {
            let n = r.struct_list(t, "schema")?;
            for i in 0..n {
                schema_element(r, i, n)?;
            }
            Ok(())
        }
        3 => {
            m.num_rows = Some(r.int(t, "num_rows")?);
            Ok(())
        }
        4 => {
            let n = r.struct_list(t, "row_groups")?;
            for i in 0..n {
                m.row_group_rows.push(row_group(r, i, data_end)?);
            }
            Ok(())
        }
        _ => r.field_value(t, 1),
    })?;
    if r.left() > 0 {
        return Err(format!("{} byte(s) after its end", r.left()));
    }
    Ok(m)
}

/// Schema element `i` of `n`.
fn schema_element(r: &mut Reader, i: usize, n: usize) -> Result<(), String> {
    r.each_field(1, |r, t, id| match id {
        5 => {
            let c = r.int(t, "num_children")?;
            let after = n - i - 1;
            if c < 0 || c > i64::try_from(after).unwrap_or(i64::MAX) {
                return Err(format!(
                    "schema[{i}].num_children: {c}; expected 0 to {after} (the schema elements after it)"
                ));
            }
            Ok(())
        }
        _ => r.field_value(t, 2),
    })
}

/// Row group `g`: its `num_rows`, checked against its column chunks.
fn row_group(r: &mut Reader, g: usize, data_end: u64) -> Result<i64, String> {
    let at = format!("row_groups[{g}]");
    let mut num_rows = None;
    // Each column chunk's num_values (None: a chunk without meta_data).
    let mut values: Vec<Option<i64>> = Vec::new();
    r.each_field(1, |r, t, id| match id {
        1 => {
            let n = r.struct_list(t, &format!("{at}.columns"))?;
            for c in 0..n {
                values.push(column_chunk(r, &format!("{at}.columns[{c}]"), data_end)?);
            }
            Ok(())
        }
        3 => {
            let n = r.int(t, &format!("{at}.num_rows"))?;
            if n < 0 {
                return Err(format!("{at}.num_rows: {n}; expected 0 or more"));
            }
            num_rows = Some(n);
            Ok(())
        }
        _ => r.field_value(t, 2),
    })?;
    let num_rows = num_rows.ok_or_else(|| format!("{at}.num_rows is missing"))?;
    for (c, v) in values.iter().enumerate() {
        if let Some(v) = *v {
            if num_rows > v {
                return Err(format!(
                    "{at}.num_rows: {num_rows} is more than the {v} value(s) its column chunk {c} holds \
                     ({at}.columns[{c}].meta_data.num_values); expected at most that (a row has a value, or a \
                     null, in every column)"
                ));
            }
        }
    }
    Ok(num_rows)
}

/// A column chunk: its `num_values` (`None` without `meta_data`), its
/// byte ranges checked against the data.
fn column_chunk(r: &mut Reader, at: &str, data_end: u64) -> Result<Option<i64>, String> {
    let mut values = None;
    let (mut offset_index, mut column_index) = ((None, None), (None, None));
    r.each_field(2, |r, t, id| match id {
        3 => {
            if t != ty::STRUCT {
                return Err(format!("{at}.meta_data is of Thrift type {t}; expected a struct"));
            }
            values = Some(column_meta(r, &format!("{at}.meta_data"), data_end)?);
            Ok(())
        }
        4 => {
            offset_index.0 = Some(r.int(t, "offset_index_offset")?);
            Ok(())
        }
        5 => {
            offset_index.1 = Some(r.int(t, "offset_index_length")?);
            Ok(())
        }
        6 => {
            column_index.0 = Some(r.int(t, "column_index_offset")?);
            Ok(())
        }
        7 => {
            column_index.1 = Some(r.int(t, "column_index_length")?);
            Ok(())
        }
        _ => r.field_value(t, 3),
    })?;
    for (name, (off, len)) in [("offset_index", offset_index), ("column_index", column_index)] {
        if let (Some(off), Some(len)) = (off, len) {
            within(&format!("{at}.{name}_offset"), off, len, data_end)?;
        }
    }
    Ok(values)
}

/// `len` bytes at `off`, named `what`: within the data (after the leading
/// `PAR1`, before the footer).
fn within(what: &str, off: i64, len: i64, data_end: u64) -> Result<(), String> {
    let (Ok(o), Ok(l)) = (u64::try_from(off), u64::try_from(len)) else {
        return Err(format!(
            "{what}: {off}, {len} byte(s); expected an offset and a length of 0 or more"
        ));
    };
    if o < 4 || o.checked_add(l).is_none_or(|end| end > data_end) {
        return Err(format!(
            "{what}: {len} byte(s) at {off}; expected them within the file's data, bytes 4 to {data_end}"
        ));
    }
    Ok(())
}

/// A `ColumnMetaData`: its `num_values`; its pages within the data.
fn column_meta(r: &mut Reader, at: &str, data_end: u64) -> Result<i64, String> {
    let (mut values, mut size, mut data, mut dict) = (None, None, None, None);
    r.each_field(4, |r, t, id| {
        let slot = match id {
            5 => &mut values,
            6 => {
                let n = r.int(t, "total_uncompressed_size")?;
                if n < 0 {
                    return Err(format!("{at}.total_uncompressed_size: {n}; expected 0 or more"));
                }
                return Ok(());
            }
            7 => &mut size,
            9 => &mut data,
            11 => &mut dict,
            _ => return r.field_value(t, 5),
        };
        *slot = Some(r.int(t, at)?);
        Ok(())
    })?;
    let values = values.ok_or_else(|| format!("{at}.num_values is missing"))?;
    if values < 0 {
        return Err(format!("{at}.num_values: {values}; expected 0 or more"));
    }
    let size = size.ok_or_else(|| format!("{at}.total_compressed_size is missing"))?;
    let data = data.ok_or_else(|| format!("{at}.data_page_offset is missing"))?;
    // The chunk's pages start at its dictionary page when it has one
    // (some writers write an offset of 0 for none).
    let (name, start) = match dict {
        Some(d) if d > 0 && d < data => ("dictionary_page_offset", d),
        _ => ("data_page_offset", data),
    };
    within(
        &format!("{at}.{name} (and total_compressed_size)"),
        start,
        size,
        data_end,
    )?;
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A footer of a list header claiming `n` elements and nothing after.
    fn claiming(n: u32) -> Vec<u8> {
        let mut v = vec![0x19, 0xfc];
        let mut n = n;
        while n >= 0x80 {
            v.push(u8::try_from(n & 0x7f).unwrap() | 0x80);
            n >>= 7;
        }
        v.push(u8::try_from(n).unwrap());
        v
    }

    #[test]
    fn a_count_is_bounded_by_the_bytes_left() {
        // Field 1 (a list): a list of structs as long as the bytes after it,
        // and one longer.
        let mut ok = claiming(3);
        ok.extend([0, 0, 0, 0]);
        let mut r = Reader { buf: &ok, pos: 0 };
        assert_eq!(r.value(ty::STRUCT, 0), Ok(()));
        let mut past = claiming(5);
        past.extend([0, 0, 0, 0]);
        let e = check_footer(&past, 100).unwrap_err();
        assert!(e.contains("claims 5 element(s) but 4 byte(s) are left"), "{e}");
    }

    #[test]
    fn nesting_is_bounded() {
        // Structs in structs: field 1 of type struct, MAX_DEPTH + 2 deep.
        let mut v = vec![0x1c; MAX_DEPTH + 2];
        v.extend(vec![0; MAX_DEPTH + 3]);
        let e = check_footer(&v, 100).unwrap_err();
        assert!(e.contains("nests deeper than 32"), "{e}");
    }
}
