//! A LUKS container's header, read from the start of a disk (what
//! `bootbench-init list` and the results say a disk holds): LUKS1's phdr
//! (cryptsetup's `luks1/luks.h`: magic `LUKS\xba\xbe`, version 1, the cipher
//! name and mode, the payload offset in 512-byte sectors, the key bytes,
//! the UUID, eight keyslots each `0x00AC71F3` when in use) and LUKS2's
//! binary header (version 2, its size, label, UUID; LUKS2 on-disk format,
//! 2.1) with the JSON metadata after it (the first crypt segment's
//! encryption, offset and sector size; the keyslots). Only the primary
//! header at byte 0 is read; nothing secret is kept, nothing is opened.

use super::bytes::Bytes;
use super::luks2_meta::Luks2Meta;

use bench_core::document::result::LuksInfo;

/// The LUKS magic, at byte 0 of a header.
const MAGIC: &[u8; 6] = b"LUKS\xba\xbe";
/// A LUKS1 keyslot in use.
const KEY_ENABLED: u32 = 0x00AC_71F3;
/// The most of a LUKS2 header read (its binary header and JSON area).
const MAX_LUKS2_HEADER: u64 = 4 << 20;

/// A NUL-padded string field.
fn field(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}

/// The header in `head` (the disk's first bytes: 4096 for LUKS1, the
/// whole LUKS2 header for LUKS2), `Ok(None)` when there is no LUKS magic,
/// `Err` for a header that does not parse.
pub fn parse(head: &[u8]) -> Result<Option<LuksInfo>, String> {
    if head.len() < 592 || &head[..6] != MAGIC {
        return Ok(None);
    }
    match u16::from_be_bytes([head[6], head[7]]) {
        1 => Ok(Some(luks1(head))),
        2 => luks2(head).map(Some),
        v => Err(format!("LUKS version {v}, which bootbench does not know")),
    }
}

fn luks1(h: &[u8]) -> LuksInfo {
    let keyslots = (0..8).filter(|i| be32(h, 208 + 48 * i) == KEY_ENABLED).count();
    LuksInfo {
        version: 1,
        uuid: field(&h[168..208]),
        label: None,
        cipher: format!("{}-{}", field(&h[8..40]), field(&h[40..72])),
        key_bits: Some(be32(h, 108).saturating_mul(8)),
        data_offset_bytes: u64::from(be32(h, 104)) * 512,
        sector_size: None,
        keyslots: u32::try_from(keyslots).unwrap_or(0),
    }
}

fn luks2(h: &[u8]) -> Result<LuksInfo, String> {
    let size = usize::try_from(be64(h, 8)).unwrap_or(usize::MAX);
    if size < 4096 || size > h.len() {
        return Err(format!("a LUKS2 header of {size} B, of which {} B were read", h.len()));
    }
    let meta = Luks2Meta::read(&h[4096..size])?;
    let (_, segment) = meta.crypt_segment().ok_or("the LUKS2 metadata has no crypt segment")?;
    let keyslots = meta.keyslot_count();
    if keyslots > super::unlock::MAX_LUKS2_KEYSLOTS {
        return Err(super::unlock::too_many_keyslots(keyslots));
    }
    let key_bits = meta
        .keyslots
        .iter()
        .flat_map(|m| m.values())
        .find_map(|k| k.key_size)
        .and_then(|b| u32::try_from(b.saturating_mul(8)).ok());
    let label = field(&h[24..72]);
    Ok(LuksInfo {
        version: 2,
        uuid: field(&h[168..208]),
        label: (!label.is_empty()).then_some(label),
        cipher: segment.encryption.clone().unwrap_or_default(),
        key_bits,
        data_offset_bytes: segment.offset.ok_or("the crypt segment has no offset")?,
        sector_size: segment.sector_size.and_then(|s| u32::try_from(s).ok()),
        keyslots: u32::try_from(keyslots).unwrap_or(0),
    })
}

/// The LUKS header at the start of `f`, read-only.
pub fn read(f: &dyn Bytes) -> Result<Option<LuksInfo>, String> {
    let mut head = vec![0u8; 4096];
    if f.size() < 4096 {
        return Ok(None);
    }
    f.read_at(&mut head, 0)?;
    if &head[..6] != MAGIC {
        return Ok(None);
    }
    if u16::from_be_bytes([head[6], head[7]]) == 2 {
        let size = be64(&head, 8).clamp(4096, MAX_LUKS2_HEADER).min(f.size());
        let mut rest = vec![0u8; usize::try_from(size).unwrap_or(0).saturating_sub(4096)];
        f.read_at(&mut rest, 4096)?;
        head.extend_from_slice(&rest);
    }
    parse(&head)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No magic, no container; a magic of an unknown version is an error.
    #[test]
    fn no_magic_no_container() {
        assert_eq!(parse(&[0u8; 4096]), Ok(None));
        let mut h = vec![0u8; 4096];
        h[..6].copy_from_slice(MAGIC);
        h[7] = 3;
        assert!(parse(&h).unwrap_err().starts_with("LUKS version 3"));
        h[7] = 2;
        h[8..16].copy_from_slice(&(1u64 << 20).to_be_bytes());
        assert!(parse(&h).unwrap_err().starts_with("a LUKS2 header of 1048576 B"));
    }
}
