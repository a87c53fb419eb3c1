//! The write interlock. A [`Grant`] is made only for a target the
//! validated plan names as writable (each `destructive.targets` entry
//! resolved to exactly one device: by path on a live system, by serial or
//! WWN everywhere) with the confirmation phrase, and only if the target is
//! blank, unless overwriting is allowed too: it carries no signature that
//! libblkid knows (partition tables, filesystems, RAID and volume-manager
//! metadata, encryption headers: [`bench_core::device::signatures`]), and, unless it carries
//! bootbench's own scratch label ([`scratch`]), samples of its contents are
//! all zeros ([`blank`]). Whatever overwriting allows, a target that is
//! read-only in the kernel (`BLKROGET`) or whose storage is in use through
//! any node (mounted, swap, held, opened exclusively: [`inuse`], which maps
//! partitions and loop devices to the storage they reach) is refused. A
//! grant is bound to the device's identity, and
//! only its claim ([`Grant::claim`], everything checked again on the
//! descriptor that writes) gives the [`WritePermit`] that the engine needs
//! to open a queue for writing.
//!
//! Every check reads through one descriptor (`&File`) with positioned reads
//! of the few regions it needs, never the whole disk, so the caller decides
//! which descriptor that is.

mod blank;
mod grant;
mod inuse;
mod scratch;

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt};

use crate::disks::identity::{DeviceId, Node, Pin};
use crate::sys::blk;
use crate::sys::buf::AlignedBuf;

pub use bench_core::device::signatures::{read_plan, scan, Regions, Signature};
pub use blank::sample_data;
pub use grant::{reopen_path, Contents, Grant, WritePermit};
pub use scratch::{read_scratch_label, write_scratch_label, ScratchLabel};

/// The exact phrase the config's `destructive.confirm` must hold.
pub const CONFIRM_PHRASE: &str = "I understand this destroys data";

/// How a config names a target: by path, or by the device's serial or WWN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetRef {
    /// A path (`/dev/sdb`, `/dev/loop0`, a file).
    Path(String),
    /// A serial number, as sysfs reports it.
    Serial(String),
    /// A world-wide name, as sysfs reports it (`0x5002...` or `naa.5002...`).
    Wwn(String),
}

impl fmt::Display for TargetRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetRef::Path(p) => write!(f, "path {p}"),
            TargetRef::Serial(s) => write!(f, "serial {s}"),
            TargetRef::Wwn(w) => write!(f, "WWN {w}"),
        }
    }
}

/// The validated `destructive` section of a config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Destructive {
    /// The confirmation phrase as given (must equal [`CONFIRM_PHRASE`]).
    pub confirm: Option<String>,
    /// The targets that may be written, as the config names them.
    pub targets: Vec<TargetRef>,
    /// What each entry of `targets` names on this machine, resolved when
    /// the plan is made: exactly one device, or `None` when the machine
    /// has none (then nothing is written anywhere).
    pub resolved: Vec<Option<Node>>,
    /// Write even over a signature (partition table, filesystem, RAID or
    /// LUKS header, ...) or data found by sampling.
    pub allow_overwrite_signatures: bool,
}

/// Why a target may not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The config has no `destructive` section.
    NotDestructive,
    /// The `destructive.targets` list does not name this target.
    NotNamed {
        /// The target's path.
        path: String,
    },
    /// The confirmation phrase is missing or wrong.
    Phrase {
        /// What was given, if anything.
        given: Option<String>,
    },
    /// The target holds data structures and overwriting them is not allowed.
    Signatures {
        /// The target's path.
        path: String,
        /// What was found.
        found: Vec<Signature>,
    },
    /// No signature, no scratch label of bootbench's, but the sampled
    /// contents are not all zeros.
    HoldsData {
        /// The target's path.
        path: String,
        /// Byte offset of the first non-zero byte found.
        offset: u64,
    },
    /// The device could not be claimed for writing (EBUSY: mounted, in an
    /// array or a layer, or claimed by another exclusive opener).
    Claim {
        /// The target's path.
        path: String,
        /// The OS error, in words.
        error: String,
    },
    /// The device at the target's path is not the one the grant was made
    /// for (rebound, replaced, renamed).
    Changed {
        /// The target's path.
        path: String,
        /// What changed.
        what: String,
    },
    /// The target's storage is in use: the target itself, or another node
    /// that reaches the same bytes (a loop device over the same file, the
    /// disk beneath a loop device, a partition), is mounted, swap, held or
    /// claimed. Never overridden by `allow_overwrite_signatures`.
    InUse {
        /// The target's path.
        path: String,
        /// The other node that reaches the same storage (`None`: the
        /// target itself).
        through: Option<String>,
        /// How it is used, in words (`mounted at /mnt`, `held by dm-0`).
        how: String,
    },
    /// Whether the target's storage is in use could not be told: a device
    /// that might reach it could not be mapped.
    Unmapped {
        /// The target's path.
        path: String,
        /// What could not be read, in words.
        error: String,
    },
    /// The kernel holds the target read-only: every write would be refused
    /// before it reached the disk.
    ReadOnly {
        /// The target's path.
        path: String,
        /// How that was seen, in words.
        why: String,
    },
    /// The signature scan or the sampling could not read the target.
    Unreadable {
        /// The target's path.
        path: String,
        /// The OS error, in words.
        error: String,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotDestructive => write!(
                f,
                "writes refused: the config has no \"destructive\" section naming this target with the confirmation phrase"
            ),
            Refusal::NotNamed { path } => write!(
                f,
                "writes refused: destructive.targets does not name {path} (by path, serial or WWN)"
            ),
            Refusal::Phrase { given: None } => write!(
                f,
                "writes refused: destructive.confirm is missing; expected exactly \"{CONFIRM_PHRASE}\""
            ),
            Refusal::Phrase { given: Some(g) } => write!(
                f,
                "writes refused: destructive.confirm is {g:?}; expected exactly \"{CONFIRM_PHRASE}\""
            ),
            Refusal::Signatures { path, found } => {
                write!(f, "writes refused: {path} holds ")?;
                for (i, s) in found.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{s}")?;
                }
                write!(f, "; set destructive.allow_overwrite_signatures to overwrite it")
            }
            Refusal::HoldsData { path, offset } => write!(
                f,
                "writes refused: {path} holds data at offset {offset} (no known signature, but its sampled \
                 contents are not zeros); set destructive.allow_overwrite_signatures to overwrite it"
            ),
            Refusal::Unreadable { path, error } => {
                write!(f, "writes refused: cannot scan {path} for signatures: {error}")
            }
            Refusal::InUse { path, through, how } => {
                match through {
                    None => write!(f, "writes refused: {path} is {how}")?,
                    Some(t) => write!(f, "writes refused: {path} reaches the same storage as {t}, which is {how}")?,
                }
                write!(
                    f,
                    "; storage in use is never written, whatever node reaches it \
                     (allow_overwrite_signatures does not change that)"
                )
            }
            Refusal::Unmapped { path, error } => write!(
                f,
                "writes refused: cannot tell whether {path} shares its storage with something in use: {error}"
            ),
            Refusal::ReadOnly { path, why } => write!(
                f,
                "writes refused: {path} is read-only ({why}): a refused grant, not a disk error"
            ),
            Refusal::Claim { path, error } => write!(
                f,
                "writes refused: cannot claim {path} for writing (opened exclusively): {error}"
            ),
            Refusal::Changed { path, what } => write!(
                f,
                "writes refused: {path} is not the device the plan granted: {what}"
            ),
        }
    }
}

/// Size in bytes and logical block size of the target behind `f`: from
/// the block-device ioctls, or for a regular file its length and 512.
pub fn geometry(f: &File) -> io::Result<(u64, u32)> {
    let meta = f.metadata()?;
    if meta.file_type().is_block_device() {
        let size = blk::size_bytes(f).map_err(io::Error::from)?;
        let lb = blk::logical_block(f).map_err(io::Error::from)?;
        Ok((size, lb))
    } else {
        Ok((meta.len(), 512))
    }
}

/// Size in bytes of the target behind `f` (block device or file).
pub fn device_size(f: &File) -> io::Result<u64> {
    geometry(f).map(|g| g.0)
}

/// `len` bytes at `offset` of the target behind `f` (fewer at its end),
/// with positioned reads into a buffer aligned for O_DIRECT. `offset` must
/// be a multiple of 4096 for a descriptor opened with O_DIRECT.
fn read_region(f: &File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let want = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut buf = AlignedBuf::new(want).ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let mut got = 0;
    while got < want {
        let at = offset + u64::try_from(got).expect("usize fits u64");
        // The whole rest of the aligned buffer, so every read's length is a
        // multiple of 4096 too; what lies past `want` is dropped.
        match f.read_at(&mut buf.as_mut_slice()[got..], at) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(buf.as_slice()[..got.min(want)].to_vec())
}

/// Scan the target behind `f` (of `size` bytes, logical blocks of
/// `logical_block` bytes) for signatures, reading only the ranges of
/// [`read_plan`] with positioned reads.
pub fn scan_device(f: &File, size: u64, logical_block: u32) -> io::Result<Vec<Signature>> {
    let mut read = Vec::new();
    for (start, len) in read_plan(size) {
        read.push((start, read_region(f, start, len)?));
    }
    let parts = read.iter().map(|(s, b)| (*s, b.as_slice())).collect();
    Ok(scan(&Regions::new(size, logical_block, parts)))
}

/// Refuse to write the target at `path` (read through `f`) unless it is
/// blank: no signature, and then either bootbench's own scratch label or
/// samples that are all zeros.
pub fn check_blank(f: &File, path: &str) -> Result<(), Refusal> {
    let unreadable = |e: io::Error| Refusal::Unreadable {
        path: path.to_string(),
        error: e.to_string(),
    };
    let (size, lb) = geometry(f).map_err(unreadable)?;
    let found = scan_device(f, size, lb).map_err(unreadable)?;
    if !found.is_empty() {
        return Err(Refusal::Signatures {
            path: path.to_string(),
            found,
        });
    }
    if read_scratch_label(f).map_err(unreadable)?.is_some() {
        return Ok(());
    }
    match sample_data(f, size).map_err(unreadable)? {
        Some(offset) => Err(Refusal::HoldsData {
            path: path.to_string(),
            offset,
        }),
        None => Ok(()),
    }
}

/// Refuse writes to the target at `path`, open as `f`, if the kernel holds
/// it read-only: a block device whose read-only flag is set (BLKROGET: the
/// `ro` attribute, `losetup -r`, `blockdev --setro`, a write-protected
/// medium), a regular file that cannot be opened for writing (a read-only
/// filesystem, an immutable file; tried through `f`'s open file, with
/// nothing written or truncated).
pub fn check_writable(f: &File, path: &str) -> Result<(), Refusal> {
    let read_only = |why: String| Refusal::ReadOnly {
        path: path.to_string(),
        why,
    };
    let meta = f.metadata().map_err(|e| Refusal::Unreadable {
        path: path.to_string(),
        error: e.to_string(),
    })?;
    if meta.file_type().is_block_device() {
        match blk::read_only(f) {
            Ok(true) => Err(read_only(
                "the kernel's read-only flag is set: BLKROGET, the ro attribute".to_string(),
            )),
            Ok(false) => Ok(()),
            Err(e) => Err(Refusal::Unreadable {
                path: path.to_string(),
                error: format!("BLKROGET: {e}"),
            }),
        }
    } else {
        match std::fs::OpenOptions::new().write(true).open(reopen_path(f)) {
            Ok(_) => Ok(()),
            Err(e) => Err(read_only(format!("it cannot be opened for writing: {e}"))),
        }
    }
}

/// The refusal a write failing with `errno` at byte `offset` of the target
/// at `path` stands for, if it is one: EPERM (the kernel's read-only flag,
/// set after the claim) and EROFS (a read-only filesystem) come from the
/// kernel before the disk is asked, so they are a refused grant, never a
/// disk error.
pub fn refused_write(path: &str, errno: i32, offset: u64) -> Option<Refusal> {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::EROFS => "EROFS",
        _ => return None,
    };
    Some(Refusal::ReadOnly {
        path: path.to_string(),
        why: format!(
            "the kernel refused the write at byte {offset} with {name}, errno {errno}, before it reached the disk"
        ),
    })
}

/// Grant writes to the target at `path`, whose identity the plan read as
/// `id`, under the config's `destructive` section.
///
/// Refused, in this order: no destructive section; no entry of it resolved
/// to this device; the confirmation phrase is missing or not exactly
/// [`CONFIRM_PHRASE`]; then the target (opened read-only once, and checked
/// to be the device `id` names) is read-only ([`check_writable`]) or its
/// storage is in use through it or another node ([`inuse::check`]),
/// whatever `allow_overwrite_signatures` says; then, unless
/// `allow_overwrite_signatures`, it cannot be read, or is not blank
/// ([`check_blank`]).
pub fn grant(
    destructive: Option<&Destructive>,
    path: &str,
    id: &DeviceId,
    pin: Option<&Pin>,
) -> Result<Grant, Refusal> {
    let d = destructive.ok_or(Refusal::NotDestructive)?;
    if !d.resolved.contains(&Some(id.node)) {
        return Err(Refusal::NotNamed { path: path.to_string() });
    }
    if d.confirm.as_deref() != Some(CONFIRM_PHRASE) {
        return Err(Refusal::Phrase {
            given: d.confirm.clone(),
        });
    }
    let g = Grant::new(path, id.clone(), pin.cloned(), !d.allow_overwrite_signatures);
    // The checks are a claim's without O_EXCL (the plan holds nothing):
    // they read through one descriptor checked to be the device.
    let f = grant::open_checked(path, id, pin, false)?;
    check_writable(&f, path)?;
    inuse::check(path, &f)?;
    if !d.allow_overwrite_signatures {
        check_blank(&f, path)?;
    }
    Ok(g)
}

/// True if `r`, a serial or WWN, is `serial`/`wwn` (a path names a device,
/// which the plan compares by its identity, not here).
pub fn names(r: &TargetRef, serial: Option<&str>, wwn: Option<&str>) -> bool {
    match r {
        TargetRef::Path(_) => false,
        TargetRef::Serial(s) => serial.is_some_and(|x| !x.is_empty() && x.trim() == s.trim()),
        TargetRef::Wwn(w) => wwn.is_some_and(|x| !x.is_empty() && norm_wwn(x) == norm_wwn(w)),
    }
}

/// WWNs appear as `0x5002538e...`, `naa.5002538e...` or `eui.…`: compare
/// the hex digits, case-insensitively.
fn norm_wwn(w: &str) -> String {
    let w = w.trim().to_ascii_lowercase();
    let w = w
        .strip_prefix("0x")
        .or_else(|| w.strip_prefix("naa."))
        .or_else(|| w.strip_prefix("eui."))
        .unwrap_or(&w);
    w.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const MIB: usize = 1 << 20;

    /// A blank image of `size` bytes with `writes` (offset, bytes) in place.
    fn image(size: usize, writes: &[(usize, &[u8])]) -> Vec<u8> {
        let mut img = vec![0u8; size];
        for (off, bytes) in writes {
            img[*off..*off + bytes.len()].copy_from_slice(bytes);
        }
        img
    }

    /// Deterministic pseudo-random bytes (xorshift64).
    fn random(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        let mut v = Vec::with_capacity(len + 8);
        while v.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.truncate(len);
        v
    }

    struct TempFile(std::path::PathBuf);
    impl TempFile {
        fn new(name: &str, contents: &[u8]) -> TempFile {
            let p = std::env::temp_dir().join(format!("bootbench-safety-{}-{name}", std::process::id()));
            let mut f = File::create(&p).unwrap();
            f.write_all(contents).unwrap();
            TempFile(p)
        }
        fn path(&self) -> &str {
            self.0.to_str().unwrap()
        }
        fn open(&self) -> File {
            File::open(&self.0).unwrap()
        }
    }
    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn whats(f: &TempFile) -> Vec<&'static str> {
        let file = f.open();
        let (size, lb) = geometry(&file).unwrap();
        scan_device(&file, size, lb)
            .unwrap()
            .into_iter()
            .map(|s| s.what)
            .collect()
    }

    #[test]
    fn scan_device_reads_head_tail_and_windows_of_a_file() {
        let size = 70 * MIB + 512;
        let md10 = (size - 8192) & !4095;
        let f = TempFile::new(
            "sig",
            &image(
                size,
                &[
                    (1080, &[0x53, 0xEF]),
                    (md10, &bench_core::device::signatures::MD_MAGIC),
                    (64 * MIB + 64, b"_BHRfS_M"),
                    (size - 1024, b"Intel Raid ISM Cfg Sig. 1.1.00"),
                ],
            ),
        );
        assert_eq!(
            whats(&f),
            vec![
                "md superblock v1.0",
                "Intel IMSM/VROC RAID metadata",
                "ext2/3/4 filesystem",
                "btrfs superblock mirror"
            ]
        );
        let blank = TempFile::new("blank", &image(4 * MIB, &[]));
        assert!(whats(&blank).is_empty());
        let tiny = TempFile::new("tiny", b"XFSB");
        assert_eq!(whats(&tiny), vec!["XFS filesystem"]);
    }

    #[test]
    fn sample_data_finds_the_first_non_zero_byte_in_its_samples() {
        let size = 64 * MIB + 4096;
        let zeros = TempFile::new("zeros", &image(size, &[]));
        assert_eq!(sample_data(&zeros.open(), size as u64).unwrap(), None);
        // Data in the middle: a sample sees it, at the sample's first byte.
        let step = (size as u64) / blank::SAMPLES;
        let at = usize::try_from(step * 40).unwrap();
        let mid = TempFile::new("mid", &image(size, &[(at + 7, &[1]), (at + 1000, &[2])]));
        assert_eq!(sample_data(&mid.open(), size as u64).unwrap(), Some(at as u64 + 7));
        // In the last byte.
        let last = TempFile::new("last", &image(size, &[(size - 1, &[0x80])]));
        assert_eq!(sample_data(&last.open(), size as u64).unwrap(), Some(size as u64 - 1));
        // Between samples it is not seen (the cost of sampling, said in the README).
        let between = TempFile::new("between", &image(size, &[(at + (128 << 10), &[1])]));
        assert_eq!(sample_data(&between.open(), size as u64).unwrap(), None);
        // A small, odd-sized file is read whole.
        let small = TempFile::new("small", &image(300_001, &[(300_000, &[9])]));
        assert_eq!(sample_data(&small.open(), 300_001).unwrap(), Some(300_000));
    }

    /// Grant writes to the file `f` under a destructive section that names
    /// it (with the phrase), overwriting allowed or not.
    fn grant_file(f: &TempFile, allow: bool) -> Result<Grant, Refusal> {
        let (_, id, pin) = crate::disks::identity::describe_pinned(f.path()).expect("identity");
        let d = Destructive {
            confirm: Some(CONFIRM_PHRASE.to_string()),
            targets: vec![TargetRef::Path(f.path().into())],
            resolved: vec![Some(id.node)],
            allow_overwrite_signatures: allow,
        };
        grant(Some(&d), f.path(), &id, pin.as_ref())
    }

    fn label_for(size: u64) -> ScratchLabel {
        ScratchLabel {
            written_unix: 1_760_000_000,
            run_id: "run-1".into(),
            machine: "test".into(),
            bootbench_version: env!("CARGO_PKG_VERSION").into(),
            disk_size: size,
        }
    }

    #[test]
    fn a_scratch_label_makes_data_bootbench_wrote_blank_but_not_a_signature() {
        let size = 8 * MIB;
        let mut data = random(size, 99);
        // No signature in the random data, by chance (checked below).
        let raw = TempFile::new("lab-raw", &data);
        let grant_on = |f: &TempFile| grant_file(f, false);
        match grant_on(&raw) {
            Err(r @ Refusal::HoldsData { offset: 0, .. }) => {
                let m = r.to_string();
                assert!(
                    m.contains(raw.path())
                        && m.contains("holds data at offset 0")
                        && m.contains("destructive.allow_overwrite_signatures"),
                    "{m}"
                );
                assert_eq!(m.lines().count(), 1);
            }
            other => panic!("random data without a label: {other:?}"),
        }
        // The same data behind bootbench's label: blank.
        data[..scratch::LABEL_BYTES].copy_from_slice(&label_for(size as u64).encode());
        let labelled = TempFile::new("lab-ok", &data);
        assert_eq!(
            read_scratch_label(&labelled.open()).unwrap(),
            Some(label_for(size as u64))
        );
        assert!(grant_on(&labelled).is_ok());
        // A label for another size does not count.
        data[..scratch::LABEL_BYTES].copy_from_slice(&label_for(size as u64 - 512).encode());
        let resized = TempFile::new("lab-size", &data);
        assert!(matches!(grant_on(&resized), Err(Refusal::HoldsData { .. })));
        // A filesystem made later over a labelled disk (leaving byte 0) is
        // still refused.
        data[..scratch::LABEL_BYTES].copy_from_slice(&label_for(size as u64).encode());
        data[65600..65608].copy_from_slice(b"_BHRfS_M");
        let fs = TempFile::new("lab-fs", &data);
        match grant_on(&fs) {
            Err(Refusal::Signatures { found, .. }) => assert_eq!(found[0].what, "btrfs filesystem"),
            other => panic!("btrfs over a label: {other:?}"),
        }
    }

    #[test]
    fn write_scratch_label_writes_the_first_4096_bytes_only() {
        let size = 2 * MIB;
        let f = TempFile::new("lab-write", &vec![0xAB; size]);
        let file = std::fs::OpenOptions::new().read(true).write(true).open(&f.0).unwrap();
        write_scratch_label(&file, &label_for(size as u64)).unwrap();
        assert_eq!(read_scratch_label(&file).unwrap(), Some(label_for(size as u64)));
        let after = std::fs::read(&f.0).unwrap();
        assert_eq!(after.len(), size);
        assert!(after[scratch::LABEL_BYTES..].iter().all(|&b| b == 0xAB));
        assert_eq!(
            read_scratch_label(&TempFile::new("lab-none", &[0; 4096]).open()).unwrap(),
            None
        );
        assert_eq!(
            read_scratch_label(&TempFile::new("lab-short", &[0; 100]).open()).unwrap(),
            None
        );
    }

    /// The contents refusals, in words (the order of the refusals and the
    /// identity checks: `grant::tests`).
    #[test]
    fn grant_refuses_signatures_and_data_unless_overwriting_is_allowed() {
        let blank = TempFile::new("g-blank", &image(MIB, &[]));
        let ext = TempFile::new("g-ext", &image(MIB, &[(1080, &[0x53, 0xEF])]));
        let data = TempFile::new("g-data", &image(4 * MIB, &[(3 * MIB + 5, &[1])]));
        assert!(grant_file(&blank, false).is_ok());
        match grant_file(&ext, false) {
            Err(r @ Refusal::Signatures { .. }) => assert!(r.to_string().contains("ext2/3/4 filesystem"), "{r}"),
            other => panic!("expected a signature refusal, got {other:?}"),
        }
        match grant_file(&data, false) {
            Err(r @ Refusal::HoldsData { .. }) => assert_eq!(
                r.to_string(),
                format!(
                    "writes refused: {} holds data at offset {} (no known signature, but its sampled contents \
                     are not zeros); set destructive.allow_overwrite_signatures to overwrite it",
                    data.path(),
                    3 * MIB + 5
                )
            ),
            other => panic!("expected a data refusal, got {other:?}"),
        }
        let random = TempFile::new("g-random", &random(MIB, 5));
        for f in [&ext, &data, &random] {
            assert!(grant_file(f, true).is_ok(), "{}: overwriting allowed", f.path());
        }
    }

    #[test]
    fn names_by_serial_and_wwn() {
        let ser = TargetRef::Serial("S3Z1".into());
        assert!(names(&ser, Some("S3Z1"), None));
        assert!(!names(&ser, Some("S3Z2"), None));
        assert!(!names(&ser, None, None));
        let wwn = TargetRef::Wwn("0x5002538E4000ABCD".into());
        assert!(names(&wwn, None, Some("naa.5002538e4000abcd")));
        assert!(!names(&wwn, None, Some("naa.5002538e4000abce")));
    }
}
