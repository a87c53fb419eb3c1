//! A LUKS container's volume key from a passphrase, as cryptsetup derives
//! it (cryptsetup's `luks1/keymanage.c`, `luks1/af.c`,
//! `luks2/luks2_keyslot_luks2.c`, `luks2/luks2_digest_pbkdf2.c`; LUKS1
//! on-disk format 1.2.3, LUKS2 on-disk format 1.1.x): for each keyslot in
//! use, the passphrase stretched by the keyslot's KDF (PBKDF2 for LUKS1;
//! PBKDF2, Argon2i or Argon2id for LUKS2) into the key of the keyslot's
//! area; the area (the volume key split into `stripes` blocks by the
//! anti-forensic splitter) decrypted with it (aes-xts-plain64); the blocks
//! merged back; the result checked against the header's digest (PBKDF2 of
//! the volume key). The right passphrase opens one keyslot and the digest
//! proves the key; a wrong one opens none.
//!
//! Read only: nothing is written to the container. The passphrase and
//! every key live in [`Secret`]s, wiped when dropped, never formatted.

use std::fmt;

use aes::cipher::KeyInit;
use ring::{digest, pbkdf2};

use super::bytes::Bytes;

/// The LUKS magic, at byte 0 of a header.
const MAGIC: &[u8; 6] = b"LUKS\xba\xbe";
/// A LUKS1 keyslot in use.
const KEY_ENABLED: u32 = 0x00AC_71F3;
/// The most of a LUKS2 header read (its binary header and JSON area).
const MAX_LUKS2_HEADER: u64 = 4 << 20;
/// The most key material one keyslot may hold (LUKS2's default area is
/// 256 KiB: 64 bytes x 4000 stripes).
const MAX_AREA: u64 = 16 << 20;
/// The most stripes a keyslot may split its key into (cryptsetup writes 4000).
const MAX_STRIPES: u64 = 4000 * 16;
/// The most iterations a KDF may ask (well past cryptsetup's benchmarks).
const MAX_ITERATIONS: u64 = 1 << 30;

/// Bytes that are a secret: wiped when dropped, never shown.
pub struct Secret(Vec<u8>);

impl Secret {
    /// A secret holding `bytes` (the caller's copy is its own to wipe).
    pub fn new(bytes: Vec<u8>) -> Self {
        Secret(bytes)
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        crate::sys::dm::wipe(&mut self.0);
    }
}

/// Its length only.
impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret(<{} bytes>)", self.0.len())
    }
}

/// The most of a key file read, as cryptsetup's default `--keyfile-size`
/// limit (8 MiB): a larger one is refused, not read.
pub const MAX_KEY_FILE: u64 = 8 << 20;

/// The bytes of the key file `path`: a regular file (a symbolic link to
/// one is followed), opened without waiting (a FIFO or a device is
/// refused, never read), not empty and at most [`MAX_KEY_FILE`] bytes.
/// Err says what is wrong, in words that end "expected ...".
pub fn read_key_file(path: &std::path::Path) -> Result<Secret, String> {
    use std::io::Read;
    let expected = "expected a regular file holding the container's passphrase";
    let f = super::file::open_regular(path).map_err(|e| format!("{}: {e}; {expected}", path.display()))?;
    let mut key = Secret(Vec::new());
    let read = f.take(MAX_KEY_FILE + 1).read_to_end(&mut key.0);
    match read {
        Err(e) => Err(format!("{}: {e}; {expected}", path.display())),
        Ok(0) => Err(format!("{} is empty; {expected}", path.display())),
        Ok(n) if n as u64 > MAX_KEY_FILE => Err(format!(
            "{} holds more than {MAX_KEY_FILE} B; expected a key file of at most 8 MiB (cryptsetup's limit)",
            path.display()
        )),
        Ok(_) => Ok(key),
    }
}

/// The data segment an unlocked container maps (what dm-crypt needs
/// beside the key).
#[derive(Debug)]
pub struct Unlocked {
    /// The volume key.
    pub key: Secret,
    /// The data's cipher in dm-crypt's form (`aes-xts-plain64`).
    pub cipher: String,
    /// Where the data starts, bytes from the start of the container.
    pub data_offset_bytes: u64,
    /// The data's length, bytes; `None`: to the end of the device.
    pub data_bytes: Option<u64>,
    /// The encryption sector size, bytes.
    pub sector_size: u32,
    /// The IV of the data's first sector (LUKS2's `iv_tweak`), in 512-byte sectors.
    pub iv_tweak: u64,
    /// The keyslot the passphrase opened.
    pub keyslot: u32,
}

/// A hash LUKS names for PBKDF2 and the splitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hash {
    Sha1,
    Sha256,
    Sha384,
    Sha512,
}

impl Hash {
    fn of(name: &str) -> Result<Hash, String> {
        match name.to_ascii_lowercase().as_str() {
            "sha1" => Ok(Hash::Sha1),
            "sha256" => Ok(Hash::Sha256),
            "sha384" => Ok(Hash::Sha384),
            "sha512" => Ok(Hash::Sha512),
            other => Err(format!(
                "the hash {other:?}, which bootbench does not know; expected sha1, sha256, sha384 or sha512"
            )),
        }
    }

    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            Hash::Sha1 => pbkdf2::PBKDF2_HMAC_SHA1,
            Hash::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            Hash::Sha384 => pbkdf2::PBKDF2_HMAC_SHA384,
            Hash::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            Hash::Sha1 => &digest::SHA1_FOR_LEGACY_USE_ONLY,
            Hash::Sha256 => &digest::SHA256,
            Hash::Sha384 => &digest::SHA384,
            Hash::Sha512 => &digest::SHA512,
        }
    }
}

/// Whether two digests are equal, looking at every byte whatever differs.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// PBKDF2 of `secret` into `out`, at most `max` iterations.
fn pbkdf2_into(
    hash: Hash,
    iterations: u64,
    max: u64,
    salt: &[u8],
    secret: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    let n = u32::try_from(iterations)
        .ok()
        .and_then(std::num::NonZeroU32::new)
        .filter(|_| iterations <= max)
        .ok_or_else(|| format!("{iterations} PBKDF2 iterations; expected 1 to {max}"))?;
    pbkdf2::derive(hash.pbkdf2(), n, salt, secret, out);
    Ok(())
}

/// The anti-forensic merge (LUKS1 spec, section 2.4): the stripes XORed
/// one by one into a buffer that is diffused by `hash` after each, the
/// last one XORed in without diffusion.
fn af_merge(material: &[u8], key_len: usize, stripes: usize, hash: Hash) -> Secret {
    let mut d = Secret(vec![0u8; key_len]);
    for (i, block) in material.chunks_exact(key_len).take(stripes).enumerate() {
        for (x, b) in d.0.iter_mut().zip(block) {
            *x ^= b;
        }
        if i + 1 < stripes {
            diffuse(&mut d.0, hash);
        }
    }
    d
}

/// LUKS's diffusion: each digest-sized piece of `buf` replaced by the hash
/// of its index (big-endian u32) and itself, the last piece cut short.
fn diffuse(buf: &mut [u8], hash: Hash) {
    let size = hash.digest().output_len();
    for (i, piece) in buf.chunks_mut(size).enumerate() {
        let mut ctx = digest::Context::new(hash.digest());
        ctx.update(&u32::try_from(i).unwrap_or(u32::MAX).to_be_bytes());
        ctx.update(piece);
        let out = ctx.finish();
        let n = piece.len();
        piece.copy_from_slice(&out.as_ref()[..n]);
    }
}

/// Decrypt `buf` in place with aes-xts-plain64 (or `-plain`, the 32-bit
/// IV) under `key` (two AES keys: 32 bytes for AES-128, 64 for AES-256),
/// `sector_size` bytes at a time, the first sector's IV being `first_iv`
/// and each next sector's `sector_size / 512` more (dm-crypt counts
/// 512-byte sectors).
pub fn xts_decrypt(cipher: &str, key: &[u8], buf: &mut [u8], sector_size: usize, first_iv: u64) -> Result<(), String> {
    let plain32 = match cipher {
        "aes-xts-plain64" => false,
        "aes-xts-plain" => true,
        other => {
            return Err(format!(
                "the cipher {other:?}, which bootbench does not open; expected aes-xts-plain64"
            ))
        }
    };
    let step = (sector_size / 512) as u64;
    let iv = |i: usize| -> [u8; 16] {
        let n = first_iv.wrapping_add(i as u64 * step);
        let n = if plain32 { n & 0xffff_ffff } else { n };
        let mut t = [0u8; 16];
        t[..8].copy_from_slice(&n.to_le_bytes());
        t
    };
    if buf.len() % sector_size != 0 || sector_size % 16 != 0 {
        return Err(format!(
            "{} B to decrypt in sectors of {sector_size} B; expected whole sectors",
            buf.len()
        ));
    }
    let half = key.len() / 2;
    match key.len() {
        32 => {
            let xts = xts_mode::Xts128::new(
                aes::Aes128::new_from_slice(&key[..half]).map_err(|e| e.to_string())?,
                aes::Aes128::new_from_slice(&key[half..]).map_err(|e| e.to_string())?,
            );
            for (i, s) in buf.chunks_exact_mut(sector_size).enumerate() {
                xts.decrypt_sector(s, iv(i));
            }
        }
        64 => {
            let xts = xts_mode::Xts128::new(
                aes::Aes256::new_from_slice(&key[..half]).map_err(|e| e.to_string())?,
                aes::Aes256::new_from_slice(&key[half..]).map_err(|e| e.to_string())?,
            );
            for (i, s) in buf.chunks_exact_mut(sector_size).enumerate() {
                xts.decrypt_sector(s, iv(i));
            }
        }
        n => return Err(format!("a key of {} bits for {cipher}; expected 256 or 512", n * 8)),
    }
    Ok(())
}

/// Why a container was not unlocked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnlockError {
    /// The header cannot be read or is not one bootbench opens (with why).
    Header(String),
    /// No keyslot in use opens with this passphrase.
    WrongKey { tried: usize },
    /// A keyslot needs more memory than the machine has available (Argon2).
    Memory {
        keyslot: String,
        need_kib: u64,
        available_kib: u64,
    },
}

impl fmt::Display for UnlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnlockError::Header(why) => f.write_str(why),
            UnlockError::WrongKey { tried } => write!(
                f,
                "the key opens none of its {tried} keyslot(s) in use (a wrong passphrase or key file)"
            ),
            UnlockError::Memory {
                keyslot,
                need_kib,
                available_kib,
            } => write!(
                f,
                "keyslot {keyslot} needs {need_kib} KiB of memory for Argon2 and the machine has {available_kib} KiB \
                 available; expected a keyslot within the memory here (cryptsetup luksAddKey --pbkdf-memory)"
            ),
        }
    }
}

fn header(e: impl Into<String>) -> UnlockError {
    UnlockError::Header(e.into())
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A NUL-padded string field.
fn field(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// The key material of a keyslot, read and decrypted with `key`.
fn material(f: &dyn Bytes, at: u64, len: u64, cipher: &str, key: &[u8]) -> Result<Secret, String> {
    if len == 0 || len > MAX_AREA {
        return Err(format!("a keyslot area of {len} B; expected 1 B to {MAX_AREA} B"));
    }
    let padded = len.div_ceil(512) * 512;
    let mut buf = Secret(vec![0u8; usize::try_from(padded).map_err(|e| e.to_string())?]);
    f.read_at(&mut buf.0, at)?;
    xts_decrypt(cipher, key, &mut buf.0, 512, 0)?;
    Ok(buf)
}

/// The volume key of the LUKS container at the start of `f`, from
/// `passphrase` (the bytes of a key file, as cryptsetup's `--key-file`
/// takes them). `available_kib`: the memory Argon2 may use.
pub fn unlock(f: &dyn Bytes, passphrase: &[u8], available_kib: u64) -> Result<Unlocked, UnlockError> {
    unlock_within(f, passphrase, available_kib, MAX_ITERATIONS)
}

/// [`unlock`] refusing a KDF of more than `max_iter` iterations (PBKDF2)
/// or passes (Argon2): the fuzzer's bound on the time one input takes.
pub fn unlock_within(
    f: &dyn Bytes,
    passphrase: &[u8],
    available_kib: u64,
    max_iter: u64,
) -> Result<Unlocked, UnlockError> {
    let mut head = vec![0u8; 4096];
    if f.size() < 4096 {
        return Err(header("no LUKS header: the device is smaller than 4 KiB"));
    }
    f.read_at(&mut head, 0).map_err(header)?;
    if &head[..6] != MAGIC {
        return Err(header("no LUKS header (no LUKS magic at byte 0)"));
    }
    match u16::from_be_bytes([head[6], head[7]]) {
        1 => unlock1(f, &head, passphrase, max_iter),
        2 => {
            let size = u64::from_be_bytes(head[8..16].try_into().unwrap_or_default());
            if !(4096..=MAX_LUKS2_HEADER).contains(&size) || size > f.size() {
                return Err(header(format!("a LUKS2 header of {size} B; expected 16 KiB to 4 MiB")));
            }
            let mut all = vec![0u8; usize::try_from(size).unwrap_or(0)];
            f.read_at(&mut all, 0).map_err(header)?;
            unlock2(f, &all, passphrase, available_kib, max_iter)
        }
        v => Err(header(format!("LUKS version {v}, which bootbench does not open"))),
    }
}

fn unlock1(f: &dyn Bytes, h: &[u8], passphrase: &[u8], max_iter: u64) -> Result<Unlocked, UnlockError> {
    let cipher = format!("{}-{}", field(&h[8..40]), field(&h[40..72]));
    let hash = Hash::of(&field(&h[72..104])).map_err(header)?;
    let key_bytes = be32(h, 108) as usize;
    if !(16..=64).contains(&key_bytes) {
        return Err(header(format!("a LUKS1 key of {key_bytes} B; expected 16 to 64")));
    }
    let (digest, digest_salt, digest_iter) = (&h[112..132], &h[132..164], u64::from(be32(h, 164)));
    let mut tried = 0;
    for slot in 0..8u32 {
        let at = 208 + 48 * slot as usize;
        if be32(h, at) != KEY_ENABLED {
            continue;
        }
        tried += 1;
        let (iter, salt) = (u64::from(be32(h, at + 4)), &h[at + 8..at + 40]);
        let (offset, stripes) = (u64::from(be32(h, at + 40)) * 512, u64::from(be32(h, at + 44)));
        if stripes == 0 || stripes > MAX_STRIPES {
            return Err(header(format!(
                "keyslot {slot} has {stripes} stripes; expected 1 to {MAX_STRIPES}"
            )));
        }
        let mut derived = Secret(vec![0u8; key_bytes]);
        pbkdf2_into(hash, iter, max_iter, salt, passphrase, &mut derived.0).map_err(header)?;
        let m = material(f, offset, key_bytes as u64 * stripes, &cipher, &derived.0)
            .map_err(|e| header(format!("keyslot {slot}: {e}")))?;
        let key = af_merge(&m.0, key_bytes, usize::try_from(stripes).unwrap_or(0), hash);
        let mut check = [0u8; 20];
        pbkdf2_into(hash, digest_iter, max_iter, digest_salt, &key.0, &mut check).map_err(header)?;
        if same(&check, digest) {
            return Ok(Unlocked {
                key,
                cipher,
                data_offset_bytes: u64::from(be32(h, 104)) * 512,
                data_bytes: None,
                sector_size: 512,
                iv_tweak: 0,
                keyslot: slot,
            });
        }
    }
    Err(UnlockError::WrongKey { tried })
}

/// A JSON number held as a string, as LUKS2 writes offsets and sizes.
fn num(v: &serde_json::Value) -> Option<u64> {
    v.as_str().and_then(|s| s.parse().ok()).or_else(|| v.as_u64())
}

/// Standard padded base64, as LUKS2 writes salts and digests.
fn base64(s: &str) -> Result<Vec<u8>, String> {
    bench_core::frame::base64_decode(s).map_err(|e| format!("{s:?} is not base64: {e}"))
}

fn unlock2(
    f: &dyn Bytes,
    h: &[u8],
    passphrase: &[u8],
    available_kib: u64,
    max_iter: u64,
) -> Result<Unlocked, UnlockError> {
    let area = &h[4096..];
    let end = area.iter().position(|&c| c == 0).unwrap_or(area.len());
    let json: serde_json::Value =
        serde_json::from_slice(&area[..end]).map_err(|e| header(format!("the LUKS2 JSON metadata: {e}")))?;
    let (segment_id, segment) = json["segments"]
        .as_object()
        .and_then(|m| m.iter().find(|(_, s)| s["type"] == "crypt"))
        .ok_or_else(|| header("the LUKS2 metadata has no crypt segment"))?;
    let cipher = segment["encryption"].as_str().unwrap_or("").to_string();
    let data_offset_bytes = num(&segment["offset"]).ok_or_else(|| header("the crypt segment has no offset"))?;
    let data_bytes = match &segment["size"] {
        serde_json::Value::String(s) if s == "dynamic" => None,
        v => Some(num(v).ok_or_else(|| header("the crypt segment's size is neither a number nor \"dynamic\""))?),
    };
    let sector_size = segment["sector_size"]
        .as_u64()
        .and_then(|s| u32::try_from(s).ok())
        .filter(|s| s.is_power_of_two() && (512..=4096).contains(s))
        .ok_or_else(|| header("the crypt segment's sector size is not 512 to 4096, a power of two"))?;
    let iv_tweak = num(&segment["iv_tweak"]).unwrap_or(0);
    // The digest that covers the segment, and the keyslots it covers.
    let digests = json["digests"]
        .as_object()
        .ok_or_else(|| header("the LUKS2 metadata has no digests"))?;
    let names = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let dg = digests
        .values()
        .find(|d| names(&d["segments"]).iter().any(|s| s == segment_id))
        .ok_or_else(|| header("no LUKS2 digest covers the crypt segment"))?;
    if dg["type"] != "pbkdf2" {
        return Err(header(format!(
            "a LUKS2 digest of type {}; expected pbkdf2",
            dg["type"]
        )));
    }
    let d_hash = Hash::of(dg["hash"].as_str().unwrap_or("")).map_err(header)?;
    let d_iter = dg["iterations"].as_u64().unwrap_or(0);
    let d_salt = base64(dg["salt"].as_str().unwrap_or("")).map_err(header)?;
    let d_digest = base64(dg["digest"].as_str().unwrap_or("")).map_err(header)?;
    if d_digest.is_empty() || d_digest.len() > 64 {
        return Err(header("the LUKS2 digest is empty or longer than 64 bytes"));
    }
    let keyslots = json["keyslots"]
        .as_object()
        .ok_or_else(|| header("the LUKS2 metadata has no keyslots"))?;
    let mut slots: Vec<(&String, &serde_json::Value)> = keyslots
        .iter()
        .filter(|(id, k)| k["type"] == "luks2" && names(&dg["keyslots"]).contains(id))
        .collect();
    // cryptsetup tries the keyslots by priority (2 high, 1 normal; 0: never), then by number.
    slots.retain(|(_, k)| k["priority"].as_u64() != Some(0));
    slots.sort_by_key(|(id, k)| {
        (
            std::cmp::Reverse(k["priority"].as_u64().unwrap_or(1)),
            id.parse::<u32>().unwrap_or(u32::MAX),
        )
    });
    let mut tried = 0;
    for (id, k) in slots {
        tried += 1;
        let bad = |what: String| header(format!("keyslot {id}: {what}"));
        let key_size = k["key_size"]
            .as_u64()
            .filter(|n| (16..=64).contains(n))
            .ok_or_else(|| bad("a key size out of 16 to 64 bytes".into()))?;
        let key_size = usize::try_from(key_size).unwrap_or(64);
        let af = &k["af"];
        if af["type"] != "luks1" {
            return Err(bad(format!(
                "an anti-forensic splitter of type {}; expected luks1",
                af["type"]
            )));
        }
        let stripes = af["stripes"]
            .as_u64()
            .filter(|n| (1..=MAX_STRIPES).contains(n))
            .ok_or_else(|| bad(format!("stripes out of 1 to {MAX_STRIPES}")))?;
        let af_hash = Hash::of(af["hash"].as_str().unwrap_or("")).map_err(&bad)?;
        let ar = &k["area"];
        if ar["type"] != "raw" {
            return Err(bad(format!("an area of type {}; expected raw", ar["type"])));
        }
        let area_cipher = ar["encryption"].as_str().unwrap_or("");
        let area_key = ar["key_size"]
            .as_u64()
            .filter(|n| (16..=64).contains(n))
            .ok_or_else(|| bad("an area key size out of 16 to 64 bytes".into()))?;
        let area_key = usize::try_from(area_key).unwrap_or(64);
        let area_offset = num(&ar["offset"]).ok_or_else(|| bad("an area without an offset".into()))?;
        let kdf = &k["kdf"];
        let salt = base64(kdf["salt"].as_str().unwrap_or("")).map_err(&bad)?;
        let mut derived = Secret(vec![0u8; area_key]);
        match kdf["type"].as_str().unwrap_or("") {
            "pbkdf2" => {
                let hash = Hash::of(kdf["hash"].as_str().unwrap_or("")).map_err(&bad)?;
                pbkdf2_into(
                    hash,
                    kdf["iterations"].as_u64().unwrap_or(0),
                    max_iter,
                    &salt,
                    passphrase,
                    &mut derived.0,
                )
                .map_err(&bad)?;
            }
            t @ ("argon2i" | "argon2id") => {
                let (time, memory, cpus) = (
                    kdf["time"].as_u64().unwrap_or(0),
                    kdf["memory"].as_u64().unwrap_or(0),
                    kdf["cpus"].as_u64().unwrap_or(0),
                );
                if time > max_iter {
                    return Err(bad(format!("{time} Argon2 passes; expected 1 to {max_iter}")));
                }
                if memory > available_kib {
                    return Err(UnlockError::Memory {
                        keyslot: id.clone(),
                        need_kib: memory,
                        available_kib,
                    });
                }
                let as32 = |x: u64, what: &str| u32::try_from(x).map_err(|_| bad(format!("an Argon2 {what} of {x}")));
                let params = argon2::Params::new(
                    as32(memory, "memory")?,
                    as32(time, "time")?,
                    as32(cpus, "cpus")?,
                    Some(area_key),
                )
                .map_err(|e| {
                    bad(format!(
                        "Argon2 parameters (time {time}, memory {memory} KiB, cpus {cpus}): {e}"
                    ))
                })?;
                let alg = if t == "argon2i" {
                    argon2::Algorithm::Argon2i
                } else {
                    argon2::Algorithm::Argon2id
                };
                argon2::Argon2::new(alg, argon2::Version::V0x13, params)
                    .hash_password_into(passphrase, &salt, &mut derived.0)
                    .map_err(|e| bad(format!("Argon2: {e}")))?;
            }
            other => {
                return Err(bad(format!(
                    "a KDF of type {other:?}; expected pbkdf2, argon2i or argon2id"
                )))
            }
        }
        let m = material(f, area_offset, key_size as u64 * stripes, area_cipher, &derived.0).map_err(&bad)?;
        let key = af_merge(&m.0, key_size, usize::try_from(stripes).unwrap_or(0), af_hash);
        let mut check = vec![0u8; d_digest.len()];
        pbkdf2_into(d_hash, d_iter, max_iter, &d_salt, &key.0, &mut check).map_err(header)?;
        if same(&check, &d_digest) {
            return Ok(Unlocked {
                key,
                cipher,
                data_offset_bytes,
                data_bytes,
                sector_size,
                iv_tweak,
                keyslot: id.parse().unwrap_or(0),
            });
        }
    }
    Err(UnlockError::WrongKey { tried })
}

/// The memory Argon2 may use here: half of `MemAvailable` in
/// `/proc/meminfo`, KiB (0 when it cannot be read).
pub fn available_kib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |k| k / 2)
}

/// The decrypted bytes of an unlocked container (its data segment), for
/// reading what it holds (an LVM PV) before anything is mapped.
pub struct Decrypted<'a> {
    pub inner: &'a dyn Bytes,
    pub open: &'a Unlocked,
}

impl fmt::Debug for Decrypted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decrypted").field("open", self.open).finish()
    }
}

impl Bytes for Decrypted<'_> {
    fn size(&self) -> u64 {
        let rest = self.inner.size().saturating_sub(self.open.data_offset_bytes);
        let size = self.open.data_bytes.map_or(rest, |d| d.min(rest));
        size / u64::from(self.open.sector_size) * u64::from(self.open.sector_size)
    }

    fn read_at(&self, buf: &mut [u8], at: u64) -> Result<(), String> {
        let ss = u64::from(self.open.sector_size);
        let end = at.checked_add(buf.len() as u64).ok_or("a read past any device")?;
        if end > self.size() {
            return Err(format!("a read at byte {at} past the end ({} B)", self.size()));
        }
        let first = at / ss * ss;
        let last = end.div_ceil(ss) * ss;
        let mut tmp = vec![0u8; usize::try_from(last - first).map_err(|e| e.to_string())?];
        self.inner.read_at(&mut tmp, self.open.data_offset_bytes + first)?;
        xts_decrypt(
            &self.open.cipher,
            self.open.key.bytes(),
            &mut tmp,
            self.open.sector_size as usize,
            self.open.iv_tweak + first / 512,
        )?;
        let skip = usize::try_from(at - first).map_err(|e| e.to_string())?;
        buf.copy_from_slice(&tmp[skip..skip + buf.len()]);
        crate::sys::dm::wipe(&mut tmp);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key file is a regular file of 1 B to 8 MiB: a FIFO (no writer:
    /// a plain open would wait forever), a device, an empty file, a
    /// directory and a larger file are refused at once, naming the path.
    #[test]
    fn a_key_file_is_a_small_regular_file() {
        let t = crate::testutil::TempDir::new("key-file");
        let ok = t.0.join("k");
        std::fs::write(&ok, b"pass\n").unwrap();
        assert_eq!(read_key_file(&ok).unwrap().bytes(), b"pass\n");
        let link = t.0.join("link");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert_eq!(read_key_file(&link).unwrap().bytes(), b"pass\n");
        let fifo = t.0.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let empty = t.0.join("empty");
        std::fs::write(&empty, b"").unwrap();
        let big = t.0.join("big");
        std::fs::File::create(&big).unwrap().set_len(MAX_KEY_FILE + 1).unwrap();
        let at_limit = t.0.join("at-limit");
        std::fs::File::create(&at_limit).unwrap().set_len(MAX_KEY_FILE).unwrap();
        assert_eq!(read_key_file(&at_limit).unwrap().bytes().len() as u64, MAX_KEY_FILE);
        for (p, want) in [
            (fifo.as_path(), "not a regular file"),
            (std::path::Path::new("/dev/zero"), "not a regular file"),
            (t.0.as_path(), "not a regular file"),
            (empty.as_path(), "is empty"),
            (big.as_path(), "holds more than 8388608 B"),
            (std::path::Path::new("/nonexistent/k"), "No such file"),
        ] {
            let e = read_key_file(p).unwrap_err();
            assert!(e.contains(want) && e.contains(&p.display().to_string()), "{p:?}: {e}");
        }
    }

    #[test]
    fn base64_as_luks2_writes_it() {
        assert_eq!(base64("").unwrap(), b"");
        assert_eq!(base64("Zg==").unwrap(), b"f");
        assert_eq!(base64("Zm8=").unwrap(), b"fo");
        assert_eq!(base64("Zm9v").unwrap(), b"foo");
        assert_eq!(base64("Zm9vYmFy").unwrap(), b"foobar");
        assert_eq!(base64("+/+/").unwrap(), [0xfb, 0xff, 0xbf]);
        assert!(base64("Zm9v!").is_err());
        assert!(base64("Z").is_err());
    }

    /// The splitter's merge of one stripe is the stripe; of two, the first
    /// diffused and XORed with the second (the diffusion as the spec has
    /// it: each piece hashed after its big-endian index).
    #[test]
    fn af_merge_by_the_spec() {
        let one = [7u8; 40];
        assert_eq!(af_merge(&one, 40, 1, Hash::Sha256).bytes(), &one);
        let (a, b) = ([1u8; 40], [2u8; 40]);
        let material: Vec<u8> = a.iter().chain(&b).copied().collect();
        let mut want = Vec::new();
        for (i, piece) in a.chunks(32).enumerate() {
            let mut ctx = digest::Context::new(&digest::SHA256);
            ctx.update(&u32::try_from(i).unwrap().to_be_bytes());
            ctx.update(piece);
            want.extend_from_slice(&ctx.finish().as_ref()[..piece.len()]);
        }
        for (w, x) in want.iter_mut().zip(&b) {
            *w ^= x;
        }
        assert_eq!(af_merge(&material, 40, 2, Hash::Sha256).bytes(), &want[..]);
    }

    /// IEEE 1619 (XTS-AES) test vector 4: AES-128, data unit 0.
    #[test]
    fn xts_decrypts_the_ieee_1619_vector() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let key = hex("2718281828459045235360287471352631415926535897932384626433832795");
        let plain: Vec<u8> = (0..=255u8).chain(0..=255u8).collect();
        let cipher_start = hex("27a7479befa1d476489f308cd4cfa6e2a96e4bbe3208ff25287dd3819616e89c");
        // Encrypting is the test's oracle-free half; the vector gives the ciphertext's start.
        let mut buf = plain.clone();
        let xts = xts_mode::Xts128::new(
            aes::Aes128::new_from_slice(&key[..16]).unwrap(),
            aes::Aes128::new_from_slice(&key[16..]).unwrap(),
        );
        xts.encrypt_sector(&mut buf, [0u8; 16]);
        assert_eq!(&buf[..32], &cipher_start[..]);
        xts_decrypt("aes-xts-plain64", &key, &mut buf, 512, 0).unwrap();
        assert_eq!(buf, plain);
        assert!(xts_decrypt("aes-cbc-essiv:sha256", &key, &mut buf, 512, 0)
            .unwrap_err()
            .contains("expected aes-xts-plain64"));
        assert!(xts_decrypt("aes-xts-plain64", &key[..20], &mut buf, 512, 0)
            .unwrap_err()
            .contains("a key of 160 bits"));
    }
}
