//! An LVM physical volume's label and its volume group's metadata, read
//! as LVM2 lays them out (lvm2's `lib/label/label.h`,
//! `lib/format_text/layout.h`, and the text format it writes):
//! - the label, in one of the first four 512-byte sectors: `LABELONE`,
//!   its own sector number, a CRC of the rest of the sector, the offset
//!   of the PV header, `LVM2 001`;
//! - the PV header: the PV's UUID, the device size, the data areas and
//!   the metadata areas, each list ending in a zero entry;
//! - a metadata area's header (its first 512 bytes): a CRC, the magic
//!   ` LVM2 x[5A%r0N*>`, version 1, where it is and how long, and the
//!   location of the newest committed metadata text (relative to the area,
//!   wrapping past the area's end back to just after its header);
//! - the metadata text: `name { key = value ... section { ... } }`, with
//!   strings, integers and lists, `#` comments.
//!
//! All CRCs are LVM's: the reflected CRC-32 polynomial, seeded with
//! 0xf597a6cf, without the final inversion. Read only.

use super::bytes::Bytes;

use bench_core::document::result::{LvmLv, LvmPv, LvmSegment, LvmVg, LvmVgPv};

const LABEL_ID: &[u8; 8] = b"LABELONE";
const LABEL_TYPE: &[u8; 8] = b"LVM2 001";
const MDA_MAGIC: &[u8; 16] = b" LVM2 x[5A%r0N*>";
const MDA_HEADER: u64 = 512;
const INITIAL_CRC: u32 = 0xf597_a6cf;
/// The most metadata text read (LVM's default metadata area is 1 MiB).
const MAX_TEXT: u64 = 16 << 20;
/// A raw location flagged as ignored (`pvchange --metadataignore`).
const RAW_LOCN_IGNORED: u32 = 1;

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from(le32(b, at)) | (u64::from(le32(b, at + 4)) << 32)
}

/// LVM's CRC of `buf` continuing from `crc`.
pub fn crc(mut crc: u32, buf: &[u8]) -> u32 {
    for &b in buf {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// A 32-character LVM UUID as LVM prints it: 6-4-4-4-4-4-6.
pub fn uuid_text(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    if s.len() != 32 {
        return s.into_owned();
    }
    let mut out = String::new();
    let mut at = 0;
    for (i, n) in [6, 4, 4, 4, 4, 4, 6].iter().enumerate() {
        if i > 0 {
            out.push('-');
        }
        out.push_str(&s[at..at + n]);
        at += n;
    }
    out
}

/// A value of LVM's metadata text.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Str(String),
    List(Vec<Value>),
    Section(Vec<(String, Value)>),
}

impl Value {
    /// The value of `key` in a section.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Section(items) => items.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn str(&self, key: &str) -> Option<&str> {
        match self.get(key)? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    fn int(&self, key: &str) -> Option<u64> {
        match self.get(key)? {
            Value::Int(n) => u64::try_from(*n).ok(),
            _ => None,
        }
    }

    fn strs(&self, key: &str) -> Vec<String> {
        match self.get(key) {
            Some(Value::List(l)) => l
                .iter()
                .filter_map(|v| match v {
                    Value::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The subsections of a section, in order.
    fn sections(&self) -> impl Iterator<Item = (&str, &Value)> {
        let items: &[(String, Value)] = match self {
            Value::Section(items) => items,
            _ => &[],
        };
        items
            .iter()
            .filter(|(_, v)| matches!(v, Value::Section(_)))
            .map(|(k, v)| (k.as_str(), v))
    }
}

/// The metadata text's tokens.
struct Lexer<'a> {
    s: &'a [u8],
    at: usize,
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Int(i64),
    Punct(u8),
    End,
}

impl Lexer<'_> {
    fn next(&mut self) -> Result<Tok, String> {
        loop {
            while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
                self.at += 1;
            }
            if self.at < self.s.len() && self.s[self.at] == b'#' {
                while self.at < self.s.len() && self.s[self.at] != b'\n' {
                    self.at += 1;
                }
                continue;
            }
            break;
        }
        let Some(&c) = self.s.get(self.at) else {
            return Ok(Tok::End);
        };
        let start = self.at;
        match c {
            b'{' | b'}' | b'[' | b']' | b'=' | b',' => {
                self.at += 1;
                Ok(Tok::Punct(c))
            }
            b'"' => {
                let mut out = Vec::new();
                self.at += 1;
                loop {
                    match self.s.get(self.at) {
                        None => return Err(format!("a string from byte {start} does not end")),
                        Some(b'"') => break,
                        Some(b'\\') => {
                            if let Some(&e) = self.s.get(self.at + 1) {
                                out.push(e);
                            }
                            self.at += 2;
                        }
                        Some(&b) => {
                            out.push(b);
                            self.at += 1;
                        }
                    }
                }
                self.at += 1;
                Ok(Tok::Str(String::from_utf8_lossy(&out).into_owned()))
            }
            b'-' | b'0'..=b'9' => {
                self.at += 1;
                while self.at < self.s.len() && self.s[self.at].is_ascii_digit() {
                    self.at += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
                // A float (LVM writes none in VG metadata) is kept as its integer part.
                while self.at < self.s.len() && (self.s[self.at] == b'.' || self.s[self.at].is_ascii_digit()) {
                    self.at += 1;
                }
                t.parse()
                    .map(Tok::Int)
                    .map_err(|_| format!("a number {t:?} at byte {start}"))
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'+' => {
                while self.at < self.s.len()
                    && (self.s[self.at].is_ascii_alphanumeric() || b"_.+-".contains(&self.s[self.at]))
                {
                    self.at += 1;
                }
                Ok(Tok::Word(String::from_utf8_lossy(&self.s[start..self.at]).into_owned()))
            }
            c => Err(format!("an unexpected byte {c:#04x} at byte {start}")),
        }
    }
}

/// How deep sections and lists may nest (LVM's own are four deep).
const MAX_DEPTH: usize = 32;

/// The metadata text as one top-level section.
pub fn parse_text(text: &[u8]) -> Result<Value, String> {
    let mut lx = Lexer { s: text, at: 0 };
    let items = section_body(&mut lx, 0, true)?;
    Ok(Value::Section(items))
}

fn section_body(lx: &mut Lexer, depth: usize, top: bool) -> Result<Vec<(String, Value)>, String> {
    if depth > MAX_DEPTH {
        return Err("sections nested too deep".into());
    }
    let mut items = Vec::new();
    loop {
        match lx.next()? {
            Tok::End if top => return Ok(items),
            Tok::End => return Err("a section does not end".into()),
            Tok::Punct(b'}') if !top => return Ok(items),
            Tok::Word(k) | Tok::Str(k) => match lx.next()? {
                Tok::Punct(b'{') => items.push((k, Value::Section(section_body(lx, depth + 1, false)?))),
                Tok::Punct(b'=') => {
                    let v = value(lx, depth + 1)?;
                    items.push((k, v));
                }
                t => return Err(format!("after {k:?}: {t:?}, where = or {{ was expected")),
            },
            t => return Err(format!("{t:?} where a key was expected")),
        }
    }
}

fn value(lx: &mut Lexer, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("lists nested too deep".into());
    }
    match lx.next()? {
        Tok::Int(n) => Ok(Value::Int(n)),
        Tok::Str(s) | Tok::Word(s) => Ok(Value::Str(s)),
        Tok::Punct(b'[') => {
            let mut list = Vec::new();
            loop {
                match lx.next()? {
                    Tok::Punct(b']') => return Ok(Value::List(list)),
                    Tok::Punct(b',') => {}
                    Tok::Int(n) => list.push(Value::Int(n)),
                    Tok::Str(s) | Tok::Word(s) => list.push(Value::Str(s)),
                    t => return Err(format!("{t:?} in a list")),
                }
            }
        }
        t => Err(format!("{t:?} where a value was expected")),
    }
}

/// Why a segment type is not opened as a read-only dm table.
fn not_opened(kind: &str) -> Option<String> {
    match kind {
        "striped" | "linear" => None,
        "thin" | "thin-pool" => Some(format!("a {kind} volume: its blocks are mapped by the pool's metadata")),
        "cache" | "cache-pool" | "writecache" => Some(format!(
            "a {kind} volume: reading around the cache could miss its dirty blocks"
        )),
        "snapshot" => Some("a snapshot: its blocks live in the origin and its exception store".into()),
        k if k.starts_with("raid") || k == "mirror" => Some(format!(
            "a {k} volume: dm-raid would resync it; open its images' PVs instead"
        )),
        k => Some(format!("a {k} volume, which bootbench does not map")),
    }
}

/// `n` sectors in bytes, `None` past 2^64 bytes.
fn sectors_bytes(n: u64) -> Option<u64> {
    n.checked_mul(512)
}

/// The volume group a metadata text describes. Every size is computed
/// with checked arithmetic: a volume group whose extent size, or a PV
/// whose first extent, or a segment whose stripe size is past 2^64 bytes
/// is refused (Err, with why); a volume whose size is is not opened, and
/// says why.
pub fn vg_from_text(text: &[u8]) -> Result<LvmVg, String> {
    let top = parse_text(text)?;
    let (name, vg) = top.sections().next().ok_or("the metadata text holds no volume group")?;
    let extent_sectors = vg.int("extent_size").ok_or("the volume group has no extent_size")?;
    let extent_bytes = sectors_bytes(extent_sectors).ok_or_else(|| {
        format!("the volume group {name} has an extent_size of {extent_sectors} sectors, past 2^64 bytes; not believed")
    })?;
    let pvs = vg
        .get("physical_volumes")
        .map(|p| {
            p.sections()
                .map(|(pv, v)| {
                    let pe_start = v.int("pe_start").unwrap_or(0);
                    Ok(LvmVgPv {
                        name: pv.to_string(),
                        uuid: v.str("id").unwrap_or("").to_string(),
                        device_hint: v.str("device").map(str::to_string),
                        pe_start_bytes: sectors_bytes(pe_start).ok_or_else(|| {
                            format!("the PV {pv} of {name} starts its extents at sector {pe_start}, past 2^64 bytes")
                        })?,
                        pe_count: v.int("pe_count").unwrap_or(0),
                    })
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .transpose()?
        .unwrap_or_default();
    let lvs = vg
        .get("logical_volumes")
        .map(|l| {
            l.sections()
                .map(|(lv, v)| {
                    let segments: Vec<LvmSegment> = v
                        .sections()
                        .map(|(seg, s)| {
                            let stripes = match s.get("stripes") {
                                Some(Value::List(items)) => items
                                    .chunks(2)
                                    .filter_map(|p| match p {
                                        [Value::Str(pv), Value::Int(at)] => {
                                            Some((pv.clone(), u64::try_from(*at).unwrap_or(0)))
                                        }
                                        _ => None,
                                    })
                                    .collect(),
                                _ => Vec::new(),
                            };
                            let stripe_bytes = match s.int("stripe_size") {
                                None => None,
                                Some(z) => Some(sectors_bytes(z).ok_or_else(|| {
                                    format!("the segment {seg} of {name}/{lv} has a stripe_size of {z} sectors, past 2^64 bytes")
                                })?),
                            };
                            Ok(LvmSegment {
                                start_extent: s.int("start_extent").unwrap_or(0),
                                extent_count: s.int("extent_count").unwrap_or(0),
                                kind: s.str("type").unwrap_or("").to_string(),
                                stripe_bytes,
                                stripes,
                            })
                        })
                        .collect::<Result<_, String>>()?;
                    // Its size: the extents summed, times the extent size,
                    // each step checked (a size past 2^64 bytes is no size).
                    let size = segments
                        .iter()
                        .try_fold(0u64, |n, s| n.checked_add(s.extent_count))
                        .and_then(|extents| extents.checked_mul(extent_bytes));
                    let reason = segments.iter().find_map(|s| not_opened(&s.kind));
                    Ok(LvmLv {
                        name: lv.to_string(),
                        uuid: v.str("id").unwrap_or("").to_string(),
                        size_bytes: size.unwrap_or(0),
                        visible: v.strs("status").iter().any(|s| s == "VISIBLE"),
                        not_opened: if segments.is_empty() {
                            Some("a volume without segments".into())
                        } else if size.is_none() {
                            Some(format!(
                                "its size, its segments' extents times the extent size of {extent_bytes} B, is past \
                                 2^64 bytes"
                            ))
                        } else {
                            reason
                        },
                        segments,
                    })
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .transpose()?
        .unwrap_or_default();
    Ok(LvmVg {
        name: name.to_string(),
        uuid: vg.str("id").unwrap_or("").to_string(),
        seqno: vg.int("seqno").unwrap_or(0),
        extent_bytes,
        pvs,
        lvs,
    })
}

/// A PV label's facts: the PV's UUID, the device size, the metadata areas (offset, size).
pub type Label = (String, u64, Vec<(u64, u64)>);

/// The PV label and header in the device's first 2 KiB, `Ok(None)` without
/// a label: the PV UUID, the device size and the metadata areas (offset,
/// size).
pub fn parse_label(head: &[u8]) -> Result<Option<Label>, String> {
    for sector in 0..4usize {
        let l = &head[sector * 512..(sector + 1) * 512];
        if &l[..8] != LABEL_ID || &l[24..32] != LABEL_TYPE {
            continue;
        }
        if le64(l, 8) != sector as u64 {
            continue;
        }
        if crc(INITIAL_CRC, &l[20..]) != le32(l, 16) {
            return Err(format!("an LVM label in sector {sector} with a bad checksum"));
        }
        let off = le32(l, 20) as usize;
        if off < 32 || off + 32 + 8 > 512 {
            return Err(format!("an LVM label with its PV header at {off}"));
        }
        let pvh = &l[off..];
        let uuid = uuid_text(&pvh[..32]);
        let size = le64(pvh, 32);
        // Two lists of (offset, size), each ending in a zero offset: data areas, then metadata areas.
        let mut at = 40;
        let mut lists: [Vec<(u64, u64)>; 2] = [Vec::new(), Vec::new()];
        for list in &mut lists {
            loop {
                if off + at + 16 > 512 {
                    return Err("an LVM PV header whose area lists do not end in its sector".into());
                }
                let (o, s) = (le64(pvh, at), le64(pvh, at + 8));
                at += 16;
                if o == 0 {
                    break;
                }
                list.push((o, s));
            }
        }
        let [_, mdas] = lists;
        return Ok(Some((uuid, size, mdas)));
    }
    Ok(None)
}

/// The newest committed metadata text of the metadata area at `mda`
/// (`off`, `size`), from its header in `hdr` (512 bytes) and a reader of
/// the device's bytes; `Ok(None)` for an area with no committed text.
fn mda_text(
    hdr: &[u8],
    mda: (u64, u64),
    read: &dyn Fn(u64, usize) -> Result<Vec<u8>, String>,
) -> Result<Option<Vec<u8>>, String> {
    if &hdr[4..20] != MDA_MAGIC {
        return Err(format!("no LVM metadata area header at byte {}", mda.0));
    }
    if crc(INITIAL_CRC, &hdr[4..512]) != le32(hdr, 0) {
        return Err(format!(
            "the LVM metadata area header at byte {} has a bad checksum",
            mda.0
        ));
    }
    let (offset, size, text_crc, flags) = (le64(hdr, 40), le64(hdr, 48), le32(hdr, 56), le32(hdr, 60));
    if offset == 0 || size == 0 || flags & RAW_LOCN_IGNORED != 0 {
        return Ok(None);
    }
    let area = mda.1;
    // The text lies after the area's header and inside the area (whose
    // bounds on the device [`read`] checked): never a wrapped position.
    if size > MAX_TEXT || size > area - MDA_HEADER || offset < MDA_HEADER || offset >= area {
        return Err(format!(
            "LVM metadata of {size} B at {offset} in an area of {area} B; expected it after the area's \
             {MDA_HEADER} B header and inside the area"
        ));
    }
    // The text wraps past the area's end to just after its header.
    let first = size.min(area - offset);
    // Both below MAX_TEXT, so they fit a usize.
    let len = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let at = mda.0.checked_add(offset).ok_or("LVM metadata past any device")?;
    let mut text = read(at, len(first))?;
    if first < size {
        text.extend(read(mda.0 + MDA_HEADER, len(size - first))?);
    }
    if crc(INITIAL_CRC, &text) != text_crc {
        return Err(format!(
            "the LVM metadata text at byte {} has a bad checksum",
            mda.0 + offset
        ));
    }
    while text.last() == Some(&0) {
        text.pop();
    }
    Ok(Some(text))
}

/// The PV on `f` (a device of `size` bytes), read-only: its label, and
/// the volume group of the newest committed metadata among its areas.
pub fn read(f: &dyn Bytes) -> Result<Option<LvmPv>, String> {
    let size = f.size();
    if size < 2048 {
        return Ok(None);
    }
    let mut head = vec![0u8; 2048];
    f.read_at(&mut head, 0)?;
    let Some((pv_uuid, device_size_bytes, mdas)) = parse_label(&head)? else {
        return Ok(None);
    };
    let read = |at: u64, len: usize| -> Result<Vec<u8>, String> {
        if at.saturating_add(len as u64) > size {
            return Err(format!("LVM metadata at byte {at} past the device's end"));
        }
        let mut b = vec![0u8; len];
        f.read_at(&mut b, at)?;
        Ok(b)
    };
    let mut vg: Option<LvmVg> = None;
    for mda in mdas {
        // The area must lie on the device, its header in it: an area
        // that does not (or whose end wraps past 2^64) is not read.
        if mda.1 < MDA_HEADER || mda.0.checked_add(mda.1).is_none_or(|end| end > size) {
            return Err(format!(
                "an LVM metadata area of {} B at byte {} on a device of {size} B; expected an area of at least \
                 {MDA_HEADER} B inside the device",
                mda.1, mda.0
            ));
        }
        let hdr = read(mda.0, 512)?;
        if let Some(text) = mda_text(&hdr, mda, &read)? {
            let v = vg_from_text(&text)?;
            if vg.as_ref().is_none_or(|o| v.seqno > o.seqno) {
                vg = Some(v);
            }
        }
    }
    Ok(Some(LvmPv {
        pv_uuid,
        device_size_bytes,
        vg,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disks::bytes::Mem;

    /// LVM's CRC: the check value of "123456789" with the standard seed
    /// and inversions is CRC-32's 0xcbf43926.
    #[test]
    fn the_crc_is_crc32_without_inversions() {
        assert_eq!(!crc(!0, b"123456789"), 0xcbf4_3926);
    }

    /// A metadata text as LVM writes one: sections, strings, lists,
    /// comments; a striped LV over two PVs and a thin one.
    #[test]
    fn a_volume_group_from_its_text() {
        let text = br#"vg0 {
id = "aaaaaa-bbbb-cccc-dddd-eeee-ffff-gggggg"
seqno = 7
status = ["RESIZEABLE", "READ", "WRITE"]
extent_size = 8192 # 4 MiB
physical_volumes {
pv0 {
id = "P0"
device = "/dev/md0"
pe_start = 2048
pe_count = 100
}
pv1 {
id = "P1"
pe_start = 2048
pe_count = 100
}
}
logical_volumes {
data {
id = "L0"
status = ["READ", "WRITE", "VISIBLE"]
segment_count = 1
segment1 {
start_extent = 0
extent_count = 10
type = "striped"
stripe_count = 2
stripe_size = 128
stripes = [
"pv0", 0,
"pv1", 5
]
}
}
thin1 {
id = "L1"
status = ["READ", "WRITE", "VISIBLE"]
segment1 {
start_extent = 0
extent_count = 3
type = "thin"
}
}
}
}
contents = "Text Format Volume Group"
version = 1
"#;
        let vg = vg_from_text(text).unwrap();
        assert_eq!((vg.name.as_str(), vg.seqno, vg.extent_bytes), ("vg0", 7, 4 << 20));
        assert_eq!(vg.pvs.len(), 2);
        assert_eq!(vg.pvs[0].device_hint.as_deref(), Some("/dev/md0"));
        assert_eq!(vg.pvs[1].pe_start_bytes, 1 << 20);
        let data = &vg.lvs[0];
        assert_eq!(
            (data.name.as_str(), data.size_bytes, data.visible),
            ("data", 40 << 20, true)
        );
        assert_eq!(
            data.segments[0].stripes,
            vec![("pv0".to_string(), 0), ("pv1".to_string(), 5)]
        );
        assert_eq!(data.segments[0].stripe_bytes, Some(64 << 10));
        assert_eq!(data.not_opened, None);
        assert!(vg.lvs[1].not_opened.as_deref().unwrap().starts_with("a thin volume"));
    }

    /// A metadata text of one volume group with one striped volume.
    fn one_volume(extent_size: u64, extent_counts: &[u64], pe_start: u64, stripe_size: u64) -> String {
        let mut segs = String::new();
        let mut start = 0u64;
        for (i, n) in extent_counts.iter().enumerate() {
            segs.push_str(&format!(
                "segment{} {{ start_extent = {start} extent_count = {n} type = \"striped\" stripe_count = 1 \
                 stripe_size = {stripe_size} stripes = [\"pv0\", 0] }}\n",
                i + 1
            ));
            start = start.saturating_add(*n).min(i64::MAX as u64);
        }
        format!(
            "vg0 {{ id = \"V\" seqno = 1 extent_size = {extent_size}\n\
             physical_volumes {{ pv0 {{ id = \"P0\" pe_start = {pe_start} pe_count = 1 }} }}\n\
             logical_volumes {{ big {{ id = \"L\" status = [\"VISIBLE\"] {segs} }} }} }}\n"
        )
    }

    /// Sizes from the metadata never wrap: an extent size, a PV's first
    /// extent or a stripe size past 2^64 bytes refuses the volume group
    /// (with why); a volume whose size is past 2^64 bytes is not opened
    /// (with why), never a 0 B volume that "can be opened read-only".
    /// Each at the bound and one past it.
    #[test]
    fn sizes_past_2_64_bytes_are_refused_never_wrapped() {
        let vg = |t: String| vg_from_text(t.as_bytes());
        // The issue's case: extent_size 2^55 sectors (2^64 B), 2^60 extents.
        let e = vg(one_volume(1 << 55, &[1 << 60], 2048, 128)).unwrap_err();
        assert!(
            e.contains("extent_size of 36028797018963968 sectors, past 2^64 bytes"),
            "{e}"
        );
        // The largest extent size: 2^64 - 512 bytes, one extent.
        let g = vg(one_volume((1 << 55) - 1, &[1], 2048, 128)).unwrap();
        assert_eq!(g.extent_bytes, u64::MAX - 511);
        assert_eq!((g.lvs[0].size_bytes, &g.lvs[0].not_opened), (u64::MAX - 511, &None));
        // 2^63 B extents: one is 2^63 B, two are past 2^64.
        let g = vg(one_volume(1 << 54, &[1], 2048, 128)).unwrap();
        assert_eq!((g.lvs[0].size_bytes, &g.lvs[0].not_opened), (1 << 63, &None));
        let g = vg(one_volume(1 << 54, &[2], 2048, 128)).unwrap();
        assert_eq!(g.lvs[0].size_bytes, 0);
        assert!(
            g.lvs[0].not_opened.as_deref().unwrap().contains("past 2^64 bytes"),
            "{g:?}"
        );
        // Extents that overflow when summed over segments.
        let g = vg(one_volume(1, &[i64::MAX as u64; 3], 2048, 128)).unwrap();
        assert!(
            g.lvs[0].not_opened.as_deref().unwrap().contains("past 2^64 bytes"),
            "{g:?}"
        );
        // A PV's first extent and a stripe size.
        assert_eq!(
            vg(one_volume(8, &[1], (1 << 55) - 1, 128)).unwrap().pvs[0].pe_start_bytes,
            u64::MAX - 511
        );
        let e = vg(one_volume(8, &[1], 1 << 55, 128)).unwrap_err();
        assert!(e.contains("sector 36028797018963968, past 2^64 bytes"), "{e}");
        let e = vg(one_volume(8, &[1], 2048, 1 << 55)).unwrap_err();
        assert!(
            e.contains("stripe_size of 36028797018963968 sectors, past 2^64 bytes"),
            "{e}"
        );
    }

    /// A 16 MiB PV: its label in sector 1 naming one metadata area of
    /// `area` bytes at byte 1 MiB, that area's header saying the text is
    /// `offset` bytes into it, and the text itself at byte `text_at`.
    fn pv_with_area(area: u64, offset: u64, text_at: usize) -> Mem {
        let mut d = vec![0u8; 16 << 20];
        let put = |d: &mut Vec<u8>, at: usize, b: &[u8]| d[at..at + b.len()].copy_from_slice(b);
        let text = b"vg0 { id = \"V\" seqno = 3 extent_size = 8 }\n";
        let mda_at = 1usize << 20;
        // The label, in sector 1.
        let l = 512;
        put(&mut d, l, LABEL_ID);
        put(&mut d, l + 8, &1u64.to_le_bytes());
        put(&mut d, l + 20, &32u32.to_le_bytes());
        put(&mut d, l + 24, LABEL_TYPE);
        let pvh = l + 32;
        put(&mut d, pvh, &[b'P'; 32]);
        put(&mut d, pvh + 32, &(16u64 << 20).to_le_bytes());
        put(&mut d, pvh + 40, &(2u64 << 20).to_le_bytes()); // a data area, then the list's end
        put(&mut d, pvh + 72, &(mda_at as u64).to_le_bytes()); // the metadata area
        put(&mut d, pvh + 80, &area.to_le_bytes());
        let c = crc(INITIAL_CRC, &d[l + 20..l + 512]);
        put(&mut d, l + 16, &c.to_le_bytes());
        // The area's header.
        put(&mut d, mda_at + 4, MDA_MAGIC);
        put(&mut d, mda_at + 20, &1u32.to_le_bytes());
        put(&mut d, mda_at + 24, &(mda_at as u64).to_le_bytes());
        put(&mut d, mda_at + 32, &area.to_le_bytes());
        put(&mut d, mda_at + 40, &offset.to_le_bytes());
        put(&mut d, mda_at + 48, &(text.len() as u64).to_le_bytes());
        put(&mut d, mda_at + 56, &crc(INITIAL_CRC, text).to_le_bytes());
        let c = crc(INITIAL_CRC, &d[mda_at + 4..mda_at + 512]);
        put(&mut d, mda_at, &c.to_le_bytes());
        put(&mut d, text_at, text);
        Mem(d)
    }

    /// A metadata area is checked against the device before it is read:
    /// one of 2^64 - 1 B on a 16 MiB device whose text offset wraps the
    /// area's start back to byte 8192 (outside the area) is refused, not
    /// read there; an area ending at the device's end is read, one byte
    /// more is refused.
    #[test]
    fn a_metadata_area_past_the_device_is_refused_never_wrapped() {
        let mda_at = 1u64 << 20;
        let dev = 16u64 << 20;
        // The issue's case: start + offset wraps to byte 8192.
        let wrapped = (8192u64).wrapping_sub(mda_at);
        let e = read(&pv_with_area(u64::MAX, wrapped, 8192)).unwrap_err();
        assert!(
            e.contains("an LVM metadata area of 18446744073709551615 B at byte 1048576"),
            "{e}"
        );
        // Up to the device's end: read; one byte past: refused.
        let pv = read(&pv_with_area(dev - mda_at, 4096, (1 << 20) + 4096))
            .unwrap()
            .unwrap();
        assert_eq!(pv.vg.unwrap().seqno, 3);
        let e = read(&pv_with_area(dev - mda_at + 1, 4096, (1 << 20) + 4096)).unwrap_err();
        assert!(
            e.contains("expected an area of at least 512 B inside the device"),
            "{e}"
        );
        // A text offset inside the area's own header is refused too.
        let e = read(&pv_with_area(dev - mda_at, 100, 8192)).unwrap_err();
        assert!(e.contains("after the area's 512 B header"), "{e}");
    }

    /// Text that does not parse is an error, never a panic.
    #[test]
    fn broken_text_is_an_error() {
        for t in [
            &b"vg {"[..],
            b"vg { a = }",
            b"vg { a = [1, \"x }",
            b"= 3",
            b"vg { a = \x01 }",
        ] {
            assert!(parse_text(t).is_err(), "{:?}", String::from_utf8_lossy(t));
        }
        let deep = "a { ".repeat(100);
        assert!(parse_text(deep.as_bytes()).is_err());
    }
}
