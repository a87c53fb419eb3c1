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
use ring::digest;

use super::bytes::Bytes;
use super::luks2_meta::{Digest, Kdf, Keyslot, Luks2Meta, SegmentSize};

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
/// The most keyslots a LUKS2 header may have (cryptsetup's
/// LUKS2_KEYSLOTS_MAX); LUKS1's header has 8 by its layout.
pub const MAX_LUKS2_KEYSLOTS: usize = 32;
/// PBKDF2 iterations between two looks at the clock.
const PBKDF2_CHUNK: u32 = 4096;
/// The time budget of an unlock when the config names none, seconds:
/// cryptsetup's default of 2 s per keyslot tried, 8 keyslots, with room.
pub const DEFAULT_UNLOCK_SECONDS: u64 = 30;

/// The time an unlock may take: every keyslot's KDF and the digest's
/// together. PBKDF2 looks at the clock every [`PBKDF2_CHUNK`] iterations
/// and stops past the budget; Argon2, which cannot be stopped once
/// started, is estimated first (its passes times its memory, at the rate
/// this machine fills Argon2 memory) and not started when the estimate
/// is past the time left.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    start: std::time::Instant,
    limit: std::time::Duration,
}

impl Budget {
    /// A budget of `limit`, from now.
    pub fn new(limit: std::time::Duration) -> Budget {
        Budget {
            start: std::time::Instant::now(),
            limit,
        }
    }

    /// A budget of `seconds`, from now.
    pub fn seconds(seconds: u64) -> Budget {
        Budget::new(std::time::Duration::from_secs(seconds))
    }

    fn left(&self) -> std::time::Duration {
        self.limit.saturating_sub(self.start.elapsed())
    }

    fn spent(&self) -> bool {
        self.start.elapsed() > self.limit
    }

    /// The error of a KDF stopped (or not started) by this budget.
    fn stop(&self, what: String) -> UnlockError {
        UnlockError::Budget {
            limit_ms: u64::try_from(self.limit.as_millis()).unwrap_or(u64::MAX),
            what,
        }
    }
}

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

    #[cfg(test)]
    fn pbkdf2(self) -> ring::pbkdf2::Algorithm {
        use ring::pbkdf2;
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

/// PBKDF2 of `secret` into `out`, at most `max` iterations, within
/// `budget` (`what` names it in the error: `keyslot 3`, `the digest`).
#[allow(clippy::too_many_arguments)]
fn pbkdf2_into(
    hash: Hash,
    iterations: u64,
    max: u64,
    salt: &[u8],
    secret: &[u8],
    out: &mut [u8],
    budget: &Budget,
    what: &str,
) -> Result<(), UnlockError> {
    let n = u32::try_from(iterations)
        .ok()
        .and_then(std::num::NonZeroU32::new)
        .filter(|_| iterations <= max)
        .ok_or_else(|| header(format!("{what}: {iterations} PBKDF2 iterations; expected 1 to {max}")))?;
    if budget.spent() {
        return Err(budget.stop(format!("{what}'s PBKDF2 of {iterations} iterations was not started")));
    }
    pbkdf2_chunked(hash, n, salt, secret, out, budget).map_err(|()| {
        budget.stop(format!(
            "{what}'s PBKDF2 of {iterations} iterations was stopped unfinished"
        ))
    })
}

/// PBKDF2 (RFC 8018) with HMAC of `hash`, `n` iterations, into `out`,
/// looking at `budget` every [`PBKDF2_CHUNK`] iterations: `Err(())` once
/// it is spent (`out` then holds nothing derived).
fn pbkdf2_chunked(
    hash: Hash,
    n: std::num::NonZeroU32,
    salt: &[u8],
    secret: &[u8],
    out: &mut [u8],
    budget: &Budget,
) -> Result<(), ()> {
    use ring::hmac;
    let alg = match hash {
        Hash::Sha1 => hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
        Hash::Sha256 => hmac::HMAC_SHA256,
        Hash::Sha384 => hmac::HMAC_SHA384,
        Hash::Sha512 => hmac::HMAC_SHA512,
    };
    let key = hmac::Key::new(alg, secret);
    let len = hash.digest().output_len();
    let mut t = Secret(vec![0u8; len]);
    for (i, block) in out.chunks_mut(len).enumerate() {
        let mut ctx = hmac::Context::with_key(&key);
        ctx.update(salt);
        ctx.update(&u32::try_from(i + 1).unwrap_or(u32::MAX).to_be_bytes());
        let mut u = ctx.sign();
        t.0.copy_from_slice(u.as_ref());
        for j in 1..n.get() {
            if j % PBKDF2_CHUNK == 0 && budget.spent() {
                crate::sys::dm::wipe(out);
                return Err(());
            }
            u = hmac::sign(&key, u.as_ref());
            for (x, y) in t.0.iter_mut().zip(u.as_ref()) {
                *x ^= y;
            }
        }
        block.copy_from_slice(&t.0[..block.len()]);
    }
    Ok(())
}

/// PBKDF2 by ring in one call (no budget): the reference the chunked
/// one is tested against.
#[cfg(test)]
fn pbkdf2_ring(hash: Hash, n: std::num::NonZeroU32, salt: &[u8], secret: &[u8], out: &mut [u8]) {
    ring::pbkdf2::derive(hash.pbkdf2(), n, salt, secret, out);
}

/// Argon2 memory this machine fills per second, KiB x passes: measured
/// once (Argon2id over 8 MiB, one pass) and kept.
fn argon2_rate() -> f64 {
    static RATE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *RATE.get_or_init(|| {
        const KIB: u32 = 8 << 10;
        let mut out = [0u8; 32];
        let t0 = std::time::Instant::now();
        let ok = argon2::Params::new(KIB, 1, 1, Some(32)).ok().is_some_and(|p| {
            argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, p)
                .hash_password_into(b"calibration", b"bootbench-salt!!", &mut out)
                .is_ok()
        });
        let secs = t0.elapsed().as_secs_f64().max(1e-6);
        if ok {
            f64::from(KIB) / secs
        } else {
            // Never measured: a rate no machine beats (the estimate stays low).
            1e9
        }
    })
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
    /// The unlock's time budget stopped it (or would have: an Argon2
    /// estimated past the time left is not started), with what.
    Budget { limit_ms: u64, what: String },
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
            UnlockError::Budget { limit_ms, what } => write!(
                f,
                "stopped by the unlock's time budget of {} s (unlock_seconds): {what}; expected a container whose \
                 keyslots take the key within the budget (raise unlock_seconds, or check the header)",
                *limit_ms as f64 / 1000.0
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
/// takes them). `available_kib`: the memory Argon2 may use; `budget`: the
/// time every keyslot's KDF and the digest's may take together.
pub fn unlock(f: &dyn Bytes, passphrase: &[u8], available_kib: u64, budget: Budget) -> Result<Unlocked, UnlockError> {
    unlock_within(f, passphrase, available_kib, MAX_ITERATIONS, budget)
}

/// [`unlock`] refusing a KDF of more than `max_iter` iterations (PBKDF2)
/// or passes (Argon2): the fuzzer's bound on the time one input takes.
pub fn unlock_within(
    f: &dyn Bytes,
    passphrase: &[u8],
    available_kib: u64,
    max_iter: u64,
    budget: Budget,
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
        1 => unlock1(f, &head, passphrase, max_iter, &budget),
        2 => {
            let size = u64::from_be_bytes(head[8..16].try_into().unwrap_or_default());
            if !(4096..=MAX_LUKS2_HEADER).contains(&size) || size > f.size() {
                return Err(header(format!("a LUKS2 header of {size} B; expected 16 KiB to 4 MiB")));
            }
            let mut all = vec![0u8; usize::try_from(size).unwrap_or(0)];
            f.read_at(&mut all, 0).map_err(header)?;
            unlock2(f, &all, passphrase, available_kib, max_iter, &budget)
        }
        v => Err(header(format!("LUKS version {v}, which bootbench does not open"))),
    }
}

fn unlock1(
    f: &dyn Bytes,
    h: &[u8],
    passphrase: &[u8],
    max_iter: u64,
    budget: &Budget,
) -> Result<Unlocked, UnlockError> {
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
        pbkdf2_into(
            hash,
            iter,
            max_iter,
            salt,
            passphrase,
            &mut derived.0,
            budget,
            &format!("keyslot {slot}"),
        )?;
        let m = material(f, offset, key_bytes as u64 * stripes, &cipher, &derived.0)
            .map_err(|e| header(format!("keyslot {slot}: {e}")))?;
        let key = af_merge(&m.0, key_bytes, usize::try_from(stripes).unwrap_or(0), hash);
        let mut check = [0u8; 20];
        pbkdf2_into(
            hash,
            digest_iter,
            max_iter,
            digest_salt,
            &key.0,
            &mut check,
            budget,
            "the digest",
        )?;
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

/// Why a LUKS2 header with `n` keyslots is not believed.
pub fn too_many_keyslots(n: usize) -> String {
    format!("a LUKS2 header with {n} keyslots; expected at most {MAX_LUKS2_KEYSLOTS} (LUKS2's limit)")
}

/// Standard padded base64, as LUKS2 writes salts and digests.
fn base64(s: &str) -> Result<Vec<u8>, String> {
    bench_core::document::frame::base64_decode(s).map_err(|e| format!("{s:?} is not base64: {e}"))
}

/// The crypt segment of a LUKS2 container as [`Unlocked`] needs it.
struct CryptSegment {
    cipher: String,
    data_offset_bytes: u64,
    data_bytes: Option<u64>,
    sector_size: u32,
    iv_tweak: u64,
}

/// The first crypt segment of `meta`, with its id.
fn crypt_segment(meta: &Luks2Meta) -> Result<(&String, CryptSegment), UnlockError> {
    let (segment_id, segment) = meta
        .crypt_segment()
        .ok_or_else(|| header("the LUKS2 metadata has no crypt segment"))?;
    let data_offset_bytes = segment
        .offset
        .ok_or_else(|| header("the crypt segment has no offset"))?;
    let data_bytes = match segment.size {
        SegmentSize::Dynamic => None,
        SegmentSize::Bytes(n) => Some(n),
        SegmentSize::Unknown => {
            return Err(header("the crypt segment's size is neither a number nor \"dynamic\""));
        }
    };
    let sector_size = segment
        .sector_size
        .and_then(|s| u32::try_from(s).ok())
        .filter(|s| s.is_power_of_two() && (512..=4096).contains(s))
        .ok_or_else(|| header("the crypt segment's sector size is not 512 to 4096, a power of two"))?;
    Ok((
        segment_id,
        CryptSegment {
            cipher: segment.encryption.clone().unwrap_or_default(),
            data_offset_bytes,
            data_bytes,
            sector_size,
            iv_tweak: segment.iv_tweak.unwrap_or(0),
        },
    ))
}

/// The digest that checks a volume key, decoded.
struct KeyDigest {
    hash: Hash,
    iterations: u64,
    salt: Vec<u8>,
    digest: Vec<u8>,
}

/// The digest of `meta` that covers the segment `segment_id`.
fn segment_digest<'a>(meta: &'a Luks2Meta, segment_id: &str) -> Result<(&'a Digest, KeyDigest), UnlockError> {
    let digests = meta
        .digests
        .as_ref()
        .ok_or_else(|| header("the LUKS2 metadata has no digests"))?;
    let dg = digests
        .values()
        .find(|d| d.segments.iter().any(|s| s == segment_id))
        .ok_or_else(|| header("no LUKS2 digest covers the crypt segment"))?;
    if dg.kind != "pbkdf2" {
        return Err(header(format!("a LUKS2 digest of type {}; expected pbkdf2", dg.kind)));
    }
    let hash = Hash::of(dg.hash.as_deref().unwrap_or("")).map_err(header)?;
    let iterations = dg.iterations.unwrap_or(0);
    let salt = base64(dg.salt.as_deref().unwrap_or("")).map_err(header)?;
    let digest = base64(dg.digest.as_deref().unwrap_or("")).map_err(header)?;
    if digest.is_empty() || digest.len() > 64 {
        return Err(header("the LUKS2 digest is empty or longer than 64 bytes"));
    }
    Ok((
        dg,
        KeyDigest {
            hash,
            iterations,
            salt,
            digest,
        },
    ))
}

/// The keyslots `dg` covers, in the order cryptsetup tries them: by
/// priority (2 high, 1 normal; 0: never), then by number.
fn keyslots_to_try<'a>(meta: &'a Luks2Meta, dg: &Digest) -> Result<Vec<(&'a String, &'a Keyslot)>, UnlockError> {
    let keyslots = meta
        .keyslots
        .as_ref()
        .ok_or_else(|| header("the LUKS2 metadata has no keyslots"))?;
    if keyslots.len() > MAX_LUKS2_KEYSLOTS {
        return Err(header(too_many_keyslots(keyslots.len())));
    }
    let mut slots: Vec<(&String, &Keyslot)> = keyslots
        .iter()
        .filter(|(id, k)| k.kind == "luks2" && dg.keyslots.contains(id))
        .collect();
    slots.retain(|(_, k)| k.priority != Some(0));
    slots.sort_by_key(|(id, k)| {
        (
            std::cmp::Reverse(k.priority.unwrap_or(1)),
            id.parse::<u32>().unwrap_or(u32::MAX),
        )
    });
    Ok(slots)
}

fn unlock2(
    f: &dyn Bytes,
    h: &[u8],
    passphrase: &[u8],
    available_kib: u64,
    max_iter: u64,
    budget: &Budget,
) -> Result<Unlocked, UnlockError> {
    let meta = Luks2Meta::read(&h[4096..]).map_err(header)?;
    let (segment_id, seg) = crypt_segment(&meta)?;
    let (dg, digest) = segment_digest(&meta, segment_id)?;
    let slots = keyslots_to_try(&meta, dg)?;
    let limits = Limits {
        available_kib,
        max_iter,
        budget,
    };
    let mut tried = 0;
    for (id, k) in slots {
        tried += 1;
        let key = keyslot_key(f, id, k, passphrase, &limits)?;
        let mut check = vec![0u8; digest.digest.len()];
        pbkdf2_into(
            digest.hash,
            digest.iterations,
            max_iter,
            &digest.salt,
            &key.0,
            &mut check,
            budget,
            "the digest",
        )?;
        if same(&check, &digest.digest) {
            return Ok(Unlocked {
                key,
                cipher: seg.cipher,
                data_offset_bytes: seg.data_offset_bytes,
                data_bytes: seg.data_bytes,
                sector_size: seg.sector_size,
                iv_tweak: seg.iv_tweak,
                keyslot: id.parse().unwrap_or(0),
            });
        }
    }
    Err(UnlockError::WrongKey { tried })
}

/// What bounds the trying of a keyslot: the memory Argon2 may use, the
/// most KDF iterations or passes, and the time left.
struct Limits<'a> {
    available_kib: u64,
    max_iter: u64,
    budget: &'a Budget,
}

/// The volume key keyslot `id` holds for `passphrase` (a wrong passphrase
/// gives a wrong key, which the digest then refuses).
fn keyslot_key(
    f: &dyn Bytes,
    id: &str,
    k: &Keyslot,
    passphrase: &[u8],
    lim: &Limits<'_>,
) -> Result<Secret, UnlockError> {
    let bad = |what: String| header(format!("keyslot {id}: {what}"));
    let key_size = k
        .key_size
        .filter(|n| (16..=64).contains(n))
        .ok_or_else(|| bad("a key size out of 16 to 64 bytes".into()))?;
    let key_size = usize::try_from(key_size).unwrap_or(64);
    let af = &k.af;
    if af.kind != "luks1" {
        return Err(bad(format!(
            "an anti-forensic splitter of type {}; expected luks1",
            af.kind
        )));
    }
    let stripes = af
        .stripes
        .filter(|n| (1..=MAX_STRIPES).contains(n))
        .ok_or_else(|| bad(format!("stripes out of 1 to {MAX_STRIPES}")))?;
    let af_hash = Hash::of(af.hash.as_deref().unwrap_or("")).map_err(&bad)?;
    let ar = &k.area;
    if ar.kind != "raw" {
        return Err(bad(format!("an area of type {}; expected raw", ar.kind)));
    }
    let area_cipher = ar.encryption.as_deref().unwrap_or("");
    let area_key = ar
        .key_size
        .filter(|n| (16..=64).contains(n))
        .ok_or_else(|| bad("an area key size out of 16 to 64 bytes".into()))?;
    let area_key = usize::try_from(area_key).unwrap_or(64);
    let area_offset = ar.offset.ok_or_else(|| bad("an area without an offset".into()))?;
    let derived = derive_area_key(id, &k.kdf, area_key, passphrase, lim)?;
    let m = material(f, area_offset, key_size as u64 * stripes, area_cipher, &derived.0).map_err(&bad)?;
    Ok(af_merge(&m.0, key_size, usize::try_from(stripes).unwrap_or(0), af_hash))
}

/// The area key of keyslot `id` (`area_key` bytes) derived from
/// `passphrase` with its KDF: PBKDF2, or Argon2 when its memory and its
/// estimated time fit `lim`.
fn derive_area_key(
    id: &str,
    kdf: &Kdf,
    area_key: usize,
    passphrase: &[u8],
    lim: &Limits<'_>,
) -> Result<Secret, UnlockError> {
    let bad = |what: String| header(format!("keyslot {id}: {what}"));
    let salt = base64(kdf.salt.as_deref().unwrap_or("")).map_err(&bad)?;
    let mut derived = Secret(vec![0u8; area_key]);
    match kdf.kind.as_deref().unwrap_or("") {
        "pbkdf2" => {
            let hash = Hash::of(kdf.hash.as_deref().unwrap_or("")).map_err(&bad)?;
            pbkdf2_into(
                hash,
                kdf.iterations.unwrap_or(0),
                lim.max_iter,
                &salt,
                passphrase,
                &mut derived.0,
                lim.budget,
                &format!("keyslot {id}"),
            )?;
        }
        t @ ("argon2i" | "argon2id") => {
            let (time, memory, cpus) = (kdf.time.unwrap_or(0), kdf.memory.unwrap_or(0), kdf.cpus.unwrap_or(0));
            if time > lim.max_iter {
                return Err(bad(format!("{time} Argon2 passes; expected 1 to {}", lim.max_iter)));
            }
            if memory > lim.available_kib {
                return Err(UnlockError::Memory {
                    keyslot: id.to_string(),
                    need_kib: memory,
                    available_kib: lim.available_kib,
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
            // Argon2 cannot be stopped once started: estimated first.
            let estimate = (time as f64) * (memory as f64) / argon2_rate();
            let left = lim.budget.left().as_secs_f64();
            if estimate > left {
                return Err(lim.budget.stop(format!(
                    "keyslot {id}'s {t} of {time} passes over {memory} KiB would take about {estimate:.0} s here, \
                     past the {left:.0} s left; not started"
                )));
            }
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
    Ok(derived)
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
    use crate::disks::bytes::Mem;

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

    /// The chunked PBKDF2 (which looks at the clock) derives what ring's
    /// one-call PBKDF2 derives: each hash, output lengths across blocks,
    /// iteration counts across a chunk.
    #[test]
    fn chunked_pbkdf2_is_pbkdf2() {
        let budget = Budget::seconds(60);
        for hash in [Hash::Sha1, Hash::Sha256, Hash::Sha384, Hash::Sha512] {
            for n in [1u32, 2, PBKDF2_CHUNK - 1, PBKDF2_CHUNK, PBKDF2_CHUNK + 1] {
                for len in [16usize, 20, 32, 64, 100] {
                    let n = std::num::NonZeroU32::new(n).unwrap();
                    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
                    pbkdf2_chunked(hash, n, b"salt", b"passphrase", &mut a, &budget).unwrap();
                    pbkdf2_ring(hash, n, b"salt", b"passphrase", &mut b);
                    assert_eq!(a, b, "{hash:?} {n} {len}");
                }
            }
        }
    }

    /// A LUKS1 header of 8 keyslots in use, each of `iterations` PBKDF2
    /// iterations (SHA-256, one stripe, key material at sector 8).
    fn luks1(iterations: u32) -> Mem {
        let mut h = vec![0u8; 64 << 10];
        let put = |h: &mut Vec<u8>, at: usize, b: &[u8]| h[at..at + b.len()].copy_from_slice(b);
        put(&mut h, 0, MAGIC);
        put(&mut h, 6, &1u16.to_be_bytes());
        put(&mut h, 8, b"aes");
        put(&mut h, 40, b"xts-plain64");
        put(&mut h, 72, b"sha256");
        put(&mut h, 104, &4096u32.to_be_bytes());
        put(&mut h, 108, &32u32.to_be_bytes());
        put(&mut h, 164, &1000u32.to_be_bytes());
        for slot in 0..8 {
            let at = 208 + 48 * slot;
            put(&mut h, at, &KEY_ENABLED.to_be_bytes());
            put(&mut h, at + 4, &iterations.to_be_bytes());
            put(&mut h, at + 40, &8u32.to_be_bytes());
            put(&mut h, at + 44, &1u32.to_be_bytes());
        }
        Mem(h)
    }

    /// A LUKS2 header of `keyslots` keyslots, each with `kdf` (JSON),
    /// one stripe of a 32-byte key in an aes-xts-plain64 area at 32 KiB.
    fn luks2(keyslots: usize, kdf: &str) -> Mem {
        let slots: Vec<String> = (0..keyslots)
            .map(|i| {
                format!(
                    r#""{i}": {{"type": "luks2", "key_size": 32, "af": {{"type": "luks1", "stripes": 1, "hash": "sha256"}},
                    "area": {{"type": "raw", "encryption": "aes-xts-plain64", "key_size": 32, "offset": "32768", "size": "512"}},
                    "kdf": {kdf}}}"#
                )
            })
            .collect();
        let ids: Vec<String> = (0..keyslots).map(|i| format!("\"{i}\"")).collect();
        let json = format!(
            r#"{{"keyslots": {{{}}}, "segments": {{"0": {{"type": "crypt", "offset": "65536", "size": "dynamic",
            "iv_tweak": "0", "encryption": "aes-xts-plain64", "sector_size": 512}}}},
            "digests": {{"0": {{"type": "pbkdf2", "keyslots": [{}], "segments": ["0"], "hash": "sha256",
            "iterations": 1000, "salt": "AAAA", "digest": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}}},
            "config": {{"json_size": "12288", "keyslots_size": "16384"}}}}"#,
            slots.join(", "),
            ids.join(", ")
        );
        let hdr_size = 4096 + json.len().div_ceil(4096) * 4096;
        let mut h = vec![0u8; (hdr_size + (64 << 10)).max(128 << 10)];
        h[..6].copy_from_slice(MAGIC);
        h[6..8].copy_from_slice(&2u16.to_be_bytes());
        h[8..16].copy_from_slice(&(hdr_size as u64).to_be_bytes());
        h[168..172].copy_from_slice(b"UUID");
        h[4096..4096 + json.len()].copy_from_slice(json.as_bytes());
        Mem(h)
    }

    const PBKDF2_1000: &str = r#"{"type": "pbkdf2", "hash": "sha256", "iterations": 1000, "salt": "AAAA"}"#;

    /// LUKS1 with 8 keyslots at 2^30 - 1 PBKDF2 iterations (about 23 min
    /// each): a budget stops the first keyslot's PBKDF2 unfinished, and
    /// the message names the budget; a spent budget starts none.
    #[test]
    fn the_time_budget_stops_pbkdf2_and_says_so() {
        let dev = luks1((1 << 30) - 1);
        let e = unlock(&dev, b"wrong", 0, Budget::new(std::time::Duration::from_millis(200))).unwrap_err();
        assert!(matches!(e, UnlockError::Budget { limit_ms: 200, .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.starts_with(
                "stopped by the unlock's time budget of 0.2 s (unlock_seconds): keyslot 0's PBKDF2 of \
                 1073741823 iterations was stopped unfinished"
            ),
            "{msg}"
        );
        let e = unlock(&dev, b"wrong", 0, Budget::new(std::time::Duration::ZERO)).unwrap_err();
        assert!(
            e.to_string().contains("keyslot 0's PBKDF2 of 1073741823 iterations"),
            "{e}"
        );
        // Within the budget, every keyslot is tried.
        assert_eq!(
            unlock(&luks1(1000), b"wrong", 0, Budget::seconds(60)).unwrap_err(),
            UnlockError::WrongKey { tried: 8 }
        );
    }

    /// A LUKS2 argon2id keyslot of 1,000,000 passes is estimated past the
    /// budget and not started (Argon2 cannot be stopped once it runs).
    #[test]
    fn the_time_budget_refuses_an_argon2_estimated_past_it() {
        let kdf = r#"{"type": "argon2id", "time": 1000000, "memory": 1024, "cpus": 1, "salt": "AAAAAAAAAAA="}"#;
        let e = unlock(&luks2(1, kdf), b"wrong", 1 << 20, Budget::seconds(30)).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, UnlockError::Budget { limit_ms: 30_000, .. }), "{e:?}");
        assert!(
            msg.contains(
                "time budget of 30 s (unlock_seconds): keyslot 0's argon2id of 1000000 passes over 1024 KiB \
                 would take about"
            ),
            "{msg}"
        );
        assert!(msg.contains("not started"), "{msg}");
        // A small one runs: a wrong key, tried.
        let kdf = r#"{"type": "argon2id", "time": 1, "memory": 64, "cpus": 1, "salt": "AAAAAAAAAAA="}"#;
        assert_eq!(
            unlock(&luks2(1, kdf), b"wrong", 1 << 20, Budget::seconds(30)).unwrap_err(),
            UnlockError::WrongKey { tried: 1 }
        );
    }

    /// LUKS2 allows 32 keyslots: 32 are tried, 33 (or the issue's 5,000)
    /// refuse the header, in `list` and in an unlock, naming the bound.
    #[test]
    fn a_luks2_header_of_more_than_32_keyslots_is_refused() {
        let dev = luks2(32, PBKDF2_1000);
        assert_eq!(
            unlock(&dev, b"wrong", 0, Budget::seconds(60)).unwrap_err(),
            UnlockError::WrongKey { tried: 32 }
        );
        assert_eq!(super::super::luks::read(&dev).unwrap().unwrap().keyslots, 32);
        for n in [33, 5000] {
            let dev = luks2(n, PBKDF2_1000);
            let want = format!("a LUKS2 header with {n} keyslots; expected at most 32 (LUKS2's limit)");
            assert_eq!(
                unlock(&dev, b"wrong", 0, Budget::seconds(60)).unwrap_err(),
                UnlockError::Header(want.clone())
            );
            assert_eq!(super::super::luks::read(&dev), Err(want));
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
