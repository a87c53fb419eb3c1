//! The write interlock. `WritePermit` is the only way to open a target for
//! writing; it is granted only for a target the validated plan names as
//! writable (path, serial or WWN) with the confirmation phrase, and only if
//! the target carries no partition table, filesystem, md superblock or LUKS
//! header, unless overwriting signatures is allowed too.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The exact phrase the config's `destructive.confirm` must hold.
pub const CONFIRM_PHRASE: &str = "I understand this destroys data";

/// Permission to open one target for writing. Only [`grant`] makes one
/// (and `for_tests` in unit tests); the engine asks for it by value.
#[derive(Debug)]
pub struct WritePermit {
    path: String,
}

impl WritePermit {
    /// The target this permit is for, as the plan names it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// A permit for unit tests of the engine (never compiled into the binary).
    #[cfg(test)]
    #[allow(dead_code)] // used by the engine's unit tests, not by every test build of this module
    pub fn for_tests(path: &str) -> WritePermit {
        WritePermit { path: path.to_string() }
    }
}

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
    /// The targets that may be written.
    pub targets: Vec<TargetRef>,
    /// Write even over a partition table, filesystem, md or LUKS header.
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
    /// The signature scan could not read the target.
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
            Refusal::Unreadable { path, error } => {
                write!(f, "writes refused: cannot scan {path} for signatures: {error}")
            }
        }
    }
}

/// A data structure found on a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// What it is (`GPT partition table`, `ext2/3/4 filesystem`, ...).
    pub what: &'static str,
    /// Byte offset of the magic from the start of the target.
    pub offset: u64,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (magic at byte {})", self.what, self.offset)
    }
}

/// Bytes read from the start of a target (covers btrfs at 65600).
const HEAD: u64 = 128 << 10;
/// Bytes read from the end of a target (covers md 0.90 and 1.0).
const TAIL: u64 = 128 << 10;

/// md superblock magic 0xa92b4efc, little-endian.
const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();

/// Scan a target (read-only) for partition tables, filesystems, swap, LUKS,
/// md, LVM and ISO9660 signatures at the start and the end.
pub fn signatures(path: &str) -> io::Result<Vec<Signature>> {
    let mut f = File::open(path)?;
    // Seeking to the end gives the size of block devices too (their
    // metadata length is 0).
    let size = f.seek(SeekFrom::End(0))?;
    f.seek(SeekFrom::Start(0))?;
    let head = read_at(&mut f, 0, HEAD.min(size))?;
    let tail_start = size.saturating_sub(TAIL);
    let tail = read_at(&mut f, tail_start, size - tail_start)?;
    Ok(scan(&head, &tail, tail_start, size))
}

fn read_at(f: &mut File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    f.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::new();
    f.take(len).read_to_end(&mut buf)?;
    Ok(buf)
}

/// The bytes at `offset` of the target, if read: from `head` (which starts at
/// 0) or from `tail` (which starts at `tail_start`).
fn at<'a>(head: &'a [u8], tail: &'a [u8], tail_start: u64, offset: u64, len: usize) -> Option<&'a [u8]> {
    let pick = |buf: &'a [u8], start: u64| -> Option<&'a [u8]> {
        let rel = usize::try_from(offset.checked_sub(start)?).ok()?;
        buf.get(rel..rel.checked_add(len)?)
    };
    pick(head, 0).or_else(|| pick(tail, tail_start))
}

/// The signature scan over bytes already read: `head` from offset 0, `tail`
/// from `tail_start`, of a target of `size` bytes.
pub fn scan(head: &[u8], tail: &[u8], tail_start: u64, size: u64) -> Vec<Signature> {
    let is = |offset: u64, magic: &[u8]| at(head, tail, tail_start, offset, magic.len()) == Some(magic);
    let mut found = Vec::new();
    let mut add = |what: &'static str, offset: u64| found.push(Signature { what, offset });

    let boot_sig = is(510, &[0x55, 0xAA]);
    if boot_sig {
        let entries = at(head, tail, tail_start, 446, 64);
        if entries.is_some_and(|e| e.iter().any(|&b| b != 0)) {
            add("MBR partition table", 510);
        } else {
            add("MBR boot signature", 510);
        }
    }
    for lba1 in [512, 4096] {
        if is(lba1, b"EFI PART") {
            add("GPT partition table", lba1);
        }
    }
    if is(1080, &[0x53, 0xEF]) {
        add("ext2/3/4 filesystem", 1080);
    }
    if is(0, b"XFSB") {
        add("XFS filesystem", 0);
    }
    if is(65600, b"_BHRfS_M") {
        add("btrfs filesystem", 65600);
    }
    if boot_sig && (is(54, b"FAT12   ") || is(54, b"FAT16   ")) {
        add("FAT12/16 filesystem", 54);
    }
    if boot_sig && is(82, b"FAT32   ") {
        add("FAT32 filesystem", 82);
    }
    if is(3, b"NTFS    ") {
        add("NTFS filesystem", 3);
    }
    if is(4086, b"SWAPSPACE2") || is(4086, b"SWAP-SPACE") {
        add("Linux swap", 4086);
    }
    if is(0, b"LUKS\xba\xbe") {
        add("LUKS header", 0);
    }
    if is(16384, b"SKUL\xba\xbe") {
        add("LUKS2 secondary header", 16384);
    }
    if is(0, &MD_MAGIC) {
        add("md superblock v1.1", 0);
    }
    if is(4096, &MD_MAGIC) {
        add("md superblock v1.2", 4096);
    }
    const K64: u64 = 64 << 10;
    if size >= 2 * K64 {
        let v090 = (size & !(K64 - 1)) - K64;
        if is(v090, &MD_MAGIC) {
            add("md superblock v0.90", v090);
        }
    }
    if size >= 16 << 10 {
        let v10 = (size - (8 << 10)) & !(4096 - 1);
        if is(v10, &MD_MAGIC) {
            add("md superblock v1.0", v10);
        }
    }
    if is(512, b"LABELONE") {
        add("LVM2 physical volume", 512);
    }
    if is(32769, b"CD001") {
        add("ISO9660 filesystem", 32769);
    }
    found
}

/// Grant a permit to write `path` (whose device identity is `serial` and
/// `wwn`, where it has one) under the config's `destructive` section.
///
/// Refused, in this order: no destructive section; the target is not named
/// (by its path, compared after resolving symlinks, or by serial or WWN);
/// the confirmation phrase is missing or not exactly [`CONFIRM_PHRASE`]; the
/// target cannot be scanned, or holds a signature and
/// `allow_overwrite_signatures` is false.
pub fn grant(
    destructive: Option<&Destructive>,
    path: &str,
    serial: Option<&str>,
    wwn: Option<&str>,
) -> Result<WritePermit, Refusal> {
    let d = destructive.ok_or(Refusal::NotDestructive)?;
    if !d.targets.iter().any(|t| names(t, path, serial, wwn)) {
        return Err(Refusal::NotNamed { path: path.to_string() });
    }
    if d.confirm.as_deref() != Some(CONFIRM_PHRASE) {
        return Err(Refusal::Phrase {
            given: d.confirm.clone(),
        });
    }
    if !d.allow_overwrite_signatures {
        let found = signatures(path).map_err(|e| Refusal::Unreadable {
            path: path.to_string(),
            error: e.to_string(),
        })?;
        if !found.is_empty() {
            return Err(Refusal::Signatures {
                path: path.to_string(),
                found,
            });
        }
    }
    Ok(WritePermit { path: path.to_string() })
}

/// True if `r` names the target at `path` with identity `serial`/`wwn`.
pub fn names(r: &TargetRef, path: &str, serial: Option<&str>, wwn: Option<&str>) -> bool {
    match r {
        TargetRef::Path(p) => same_path(p, path),
        TargetRef::Serial(s) => serial.is_some_and(|x| !x.is_empty() && x.trim() == s.trim()),
        TargetRef::Wwn(w) => wwn.is_some_and(|x| !x.is_empty() && norm_wwn(x) == norm_wwn(w)),
    }
}

fn same_path(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (Path::new(a).canonicalize(), Path::new(b).canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
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

    /// A blank image of `size` bytes with `magic` written at `offset`.
    fn image(size: usize, writes: &[(usize, &[u8])]) -> Vec<u8> {
        let mut img = vec![0u8; size];
        for (off, bytes) in writes {
            img[*off..*off + bytes.len()].copy_from_slice(bytes);
        }
        img
    }

    fn scan_image(img: &[u8]) -> Vec<Signature> {
        let size = img.len() as u64;
        let head_len = usize::try_from(HEAD.min(size)).unwrap();
        let tail_start = size.saturating_sub(TAIL);
        let ts = usize::try_from(tail_start).unwrap();
        scan(&img[..head_len], &img[ts..], tail_start, size)
    }

    fn whats(img: &[u8]) -> Vec<(&'static str, u64)> {
        scan_image(img).into_iter().map(|s| (s.what, s.offset)).collect()
    }

    #[test]
    fn blank_has_no_signatures() {
        assert!(whats(&image(MIB, &[])).is_empty());
        assert!(whats(&image(100, &[])).is_empty());
        assert!(whats(&[]).is_empty());
    }

    #[test]
    fn each_signature_is_found() {
        let size = 3 * MIB + 12345; // not a multiple of 64 KiB: checks the md end arithmetic
        let v090 = (size & !(65536 - 1)) - 65536;
        let v10 = (size - 8192) & !(4096 - 1);
        let md = MD_MAGIC;
        let mut part_entry = [0u8; 16];
        part_entry[4] = 0x83;
        type Case<'a> = (Vec<(usize, &'a [u8])>, Vec<(&'static str, u64)>);
        let cases: Vec<Case<'_>> = vec![
            (
                vec![(510, &[0x55, 0xAA]), (446, &part_entry)],
                vec![("MBR partition table", 510)],
            ),
            (vec![(510, &[0x55, 0xAA])], vec![("MBR boot signature", 510)]),
            (vec![(512, b"EFI PART")], vec![("GPT partition table", 512)]),
            (vec![(4096, b"EFI PART")], vec![("GPT partition table", 4096)]),
            (vec![(1080, &[0x53, 0xEF])], vec![("ext2/3/4 filesystem", 1080)]),
            (vec![(0, b"XFSB")], vec![("XFS filesystem", 0)]),
            (vec![(65600, b"_BHRfS_M")], vec![("btrfs filesystem", 65600)]),
            (
                vec![(54, b"FAT16   "), (510, &[0x55, 0xAA])],
                vec![("MBR boot signature", 510), ("FAT12/16 filesystem", 54)],
            ),
            (
                vec![(54, b"FAT12   "), (510, &[0x55, 0xAA])],
                vec![("MBR boot signature", 510), ("FAT12/16 filesystem", 54)],
            ),
            (
                vec![(82, b"FAT32   "), (510, &[0x55, 0xAA])],
                vec![("MBR boot signature", 510), ("FAT32 filesystem", 82)],
            ),
            (vec![(3, b"NTFS    ")], vec![("NTFS filesystem", 3)]),
            (vec![(4086, b"SWAPSPACE2")], vec![("Linux swap", 4086)]),
            (vec![(4086, b"SWAP-SPACE")], vec![("Linux swap", 4086)]),
            (vec![(0, b"LUKS\xba\xbe")], vec![("LUKS header", 0)]),
            (vec![(16384, b"SKUL\xba\xbe")], vec![("LUKS2 secondary header", 16384)]),
            (vec![(0, &md)], vec![("md superblock v1.1", 0)]),
            (vec![(4096, &md)], vec![("md superblock v1.2", 4096)]),
            (vec![(v090, &md)], vec![("md superblock v0.90", v090 as u64)]),
            (vec![(v10, &md)], vec![("md superblock v1.0", v10 as u64)]),
            (vec![(512, b"LABELONE")], vec![("LVM2 physical volume", 512)]),
            (vec![(32769, b"CD001")], vec![("ISO9660 filesystem", 32769)]),
        ];
        for (writes, want) in cases {
            let img = image(size, &writes);
            assert_eq!(whats(&img), want, "image with {writes:?}");
        }
    }

    #[test]
    fn near_misses_are_not_signatures() {
        let size = MIB;
        let md_be = 0xa92b_4efc_u32.to_be_bytes();
        let cases: Vec<Vec<(usize, &[u8])>> = vec![
            vec![(511, &[0x55, 0xAA])],  // one byte off
            vec![(513, b"EFI PART")],    // one byte off
            vec![(1080, &[0xEF, 0x53])], // big-endian ext magic
            vec![(54, b"FAT16   ")],     // FAT label without the boot signature
            vec![(4000, &MD_MAGIC)],     // md magic at no superblock position
            vec![(0, &md_be)],           // md magic big-endian
            vec![(32768, b"CD001")],     // ISO one byte off
            vec![(0, b"LUKS")],          // truncated LUKS magic
        ];
        for writes in cases {
            assert!(whats(&image(size, &writes)).is_empty(), "image with {writes:?}");
        }
    }

    #[test]
    fn md_090_at_end_of_exact_multiple() {
        // A 1 MiB device: v0.90 at 1 MiB - 64 KiB, v1.0 at 1 MiB - 8 KiB.
        let img = image(MIB, &[(MIB - 65536, &MD_MAGIC), (MIB - 8192, &MD_MAGIC)]);
        let got = whats(&img);
        assert_eq!(
            got,
            vec![
                ("md superblock v0.90", (MIB - 65536) as u64),
                ("md superblock v1.0", (MIB - 8192) as u64)
            ]
        );
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
    }
    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn signatures_reads_head_and_tail_of_a_file() {
        let size = 4 * MIB;
        let f = TempFile::new("sig", &image(size, &[(1080, &[0x53, 0xEF]), (size - 8192, &MD_MAGIC)]));
        let got: Vec<_> = signatures(f.path()).unwrap().into_iter().map(|s| s.what).collect();
        assert_eq!(got, vec!["ext2/3/4 filesystem", "md superblock v1.0"]);
        let blank = TempFile::new("blank", &image(size, &[]));
        assert!(signatures(blank.path()).unwrap().is_empty());
        assert!(signatures("/nonexistent/bootbench").is_err());
    }

    fn d(confirm: Option<&str>, targets: Vec<TargetRef>, allow: bool) -> Destructive {
        Destructive {
            confirm: confirm.map(str::to_string),
            targets,
            allow_overwrite_signatures: allow,
        }
    }

    #[test]
    fn grant_refusals() {
        let blank = TempFile::new("g-blank", &image(MIB, &[]));
        let ext = TempFile::new("g-ext", &image(MIB, &[(1080, &[0x53, 0xEF])]));
        let bp = blank.path().to_string();
        let ep = ext.path().to_string();
        let ok = Some(CONFIRM_PHRASE);
        let by_path = |p: &str| vec![TargetRef::Path(p.to_string())];

        // No destructive section.
        assert_eq!(grant(None, &bp, None, None).unwrap_err(), Refusal::NotDestructive);
        // Not named: other path, or serial/WWN that do not match.
        let other = d(ok, by_path("/dev/shm/other"), false);
        assert!(matches!(
            grant(Some(&other), &bp, None, None),
            Err(Refusal::NotNamed { .. })
        ));
        let ser = d(ok, vec![TargetRef::Serial("S1".into())], false);
        assert!(matches!(
            grant(Some(&ser), &bp, Some("S2"), None),
            Err(Refusal::NotNamed { .. })
        ));
        assert!(matches!(
            grant(Some(&ser), &bp, None, None),
            Err(Refusal::NotNamed { .. })
        ));
        // Phrase missing or wrong (even by case).
        let none = d(None, by_path(&bp), false);
        assert_eq!(
            grant(Some(&none), &bp, None, None).unwrap_err(),
            Refusal::Phrase { given: None }
        );
        let wrong = d(Some("i understand this destroys data"), by_path(&bp), false);
        assert!(matches!(
            grant(Some(&wrong), &bp, None, None),
            Err(Refusal::Phrase { given: Some(_) })
        ));
        // Signature present.
        let on_ext = d(ok, by_path(&ep), false);
        match grant(Some(&on_ext), &ep, None, None) {
            Err(r @ Refusal::Signatures { .. }) => assert!(r.to_string().contains("ext2/3/4 filesystem"), "{r}"),
            other => panic!("expected a signature refusal, got {other:?}"),
        }
        // Unreadable.
        let gone = d(ok, by_path("/nonexistent/bootbench"), false);
        assert!(matches!(
            grant(Some(&gone), "/nonexistent/bootbench", None, None),
            Err(Refusal::Unreadable { .. })
        ));
    }

    #[test]
    fn grant_permits() {
        let blank = TempFile::new("p-blank", &image(MIB, &[]));
        let ext = TempFile::new("p-ext", &image(MIB, &[(1080, &[0x53, 0xEF])]));
        let ok = Some(CONFIRM_PHRASE);
        let bp = blank.path();
        let p = grant(Some(&d(ok, vec![TargetRef::Path(bp.into())], false)), bp, None, None).unwrap();
        assert_eq!(p.path(), bp);
        // By serial and by WWN (normalised).
        let ser = d(ok, vec![TargetRef::Serial("S3Z1".into())], false);
        assert!(grant(Some(&ser), bp, Some("S3Z1"), None).is_ok());
        let wwn = d(ok, vec![TargetRef::Wwn("0x5002538E4000ABCD".into())], false);
        assert!(grant(Some(&wwn), bp, None, Some("naa.5002538e4000abcd")).is_ok());
        // Signature present but overwriting allowed.
        let ep = ext.path();
        assert!(grant(Some(&d(ok, vec![TargetRef::Path(ep.into())], true)), ep, None, None).is_ok());
    }

    #[test]
    fn path_matching_resolves_symlinks() {
        let blank = TempFile::new("link-target", &image(4096, &[]));
        let link = std::env::temp_dir().join(format!("bootbench-safety-{}-link", std::process::id()));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&blank.0, &link).unwrap();
        let l = link.to_str().unwrap();
        assert!(names(&TargetRef::Path(l.into()), blank.path(), None, None));
        assert!(!names(&TargetRef::Path("/dev/null".into()), blank.path(), None, None));
        std::fs::remove_file(&link).unwrap();
    }
}
