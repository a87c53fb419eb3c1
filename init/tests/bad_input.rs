//! The bad-input corpus: every file in `tests/bad_input/*.case` is one bad
//! config or command line given to the real `bootbench-init` binary, with
//! the exit status and the message it must give, while loop devices (over
//! files in /dev/shm that this test creates and removes; root and `losetup`
//! needed) are compared byte for byte before and after: bad input never
//! writes.
//!
//! A case file (add one to extend the corpus):
//!
//! ```text
//! # What the case shows (comment lines start with '#').
//! cmd: validate            the commands to run (default: `run validate`): each
//!                          becomes `run --config FILE` / `validate FILE`
//! args: run --target {A}   instead of cmd: the exact arguments (words split
//!                          at spaces; `{CONFIG}` is the body's file)
//! loop: ext4               the signature on loop {S}: ext4, fat32, md1.2,
//!                          md0.90, luks, gpt, mbr, gpt-backup, imsm, ddf,
//!                          zfs, bcache, or random (data and no signature);
//!                          or md metadata with correct checksums that md
//!                          cannot run: md1.2-slots-0xffffffff,
//!                          md0.90-slots-0xffffffff, md1.2-raid0-no-slots
//!                          (default: none, {S} unused)
//! exit: 2                  the expected exit status
//! expect: tests[0].bs      a fragment the message must contain (repeatable)
//! absent: X-Amz-Signature  a fragment no message may contain (repeatable)
//! ---
//! { "the config": "text, with placeholders" }
//! ```
//!
//! Placeholders: `{A}`, `{B}` plain loop devices, `{S}` the loop device
//! with the case's signature, `{PHRASE}` the confirmation phrase,
//! `{MISSING}` a path that does not exist, `{CONFIG}` the config file's
//! path, `{EXISTING}` an existing file, `{FIFO}` a FIFO (no writer: a
//! plain open of it would wait forever), `{ALIAS_A}` a second device node
//! of `{A}` (mknod of its major:minor, not a symbolic link).
//!
//! A command that has not ended after [`CASE_BOUND`] is killed and its
//! case fails: bad input is refused at once, never waited on.
//!
//! The message: for exit status 2, stderr, which must be exactly one line
//! (for a bad command line, followed by the usage), with nothing on stdout. For exit status 0 (a run that goes on but
//! refuses the unsafe part), `run`'s stderr and the reason of every skipped
//! test in its result document (there must be one), or `validate`'s plan on
//! stdout.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_bootbench-init");
const PHRASE: &str = "I understand this destroys data";
const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
/// Size of every loop device's backing file, but for kinds that need more
/// (see [`loop_bytes`]).
const LOOP_BYTES: usize = 2 << 20;
/// At least this many cases must be in the corpus.
const MIN_CASES: usize = 40;
/// How long one command of a case may take before it counts as hung.
const CASE_BOUND: std::time::Duration = std::time::Duration::from_secs(60);

mod common;
use common::{random_bytes, shm_path, Loop, ShmFile};

/// The size of the device for a signature kind: a ZFS pool needs 64 MiB
/// (SPA_MINDEVSIZE), so its labels sit where a real pool's do.
fn loop_bytes(kind: &str) -> usize {
    match kind {
        "zfs" => 64 << 20,
        _ => LOOP_BYTES,
    }
}

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

/// Intel IMSM (VROC) metadata as mdadm writes it: the MPB header in the
/// second-to-last 512-byte sector, with its checksum (the sum of its words
/// but the checksum itself).
fn imsm(size: usize) -> Vec<(usize, Vec<u8>)> {
    let mut mpb = vec![0u8; 512];
    put(&mut mpb, 0, b"Intel Raid ISM Cfg Sig. 1.3.00");
    put(&mut mpb, 36, &512u32.to_le_bytes()); // mpb_size
    put(&mut mpb, 40, &0x1234_5678u32.to_le_bytes()); // family_num
    put(&mut mpb, 44, &7u32.to_le_bytes()); // generation_num
    mpb[56] = 2; // num_disks
    mpb[57] = 1; // num_raid_devs
    let sum = mpb
        .chunks_exact(4)
        .fold(0u32, |s, w| s.wrapping_add(u32::from_le_bytes(w.try_into().unwrap())));
    put(&mut mpb, 32, &sum.to_le_bytes());
    vec![(size - 2 * 512, mpb)]
}

/// SNIA DDF: the anchor header in the last sector and the primary header it
/// points to, each with its CRC (computed with the CRC field 0xFFFFFFFF).
fn ddf(size: usize) -> Vec<(usize, Vec<u8>)> {
    let sectors = u64::try_from(size / 512).unwrap();
    let primary = sectors - 64;
    let header = |kind: u8| {
        let mut h = vec![0xFFu8; 512];
        put(&mut h, 0, &0xDE11_DE11u32.to_be_bytes());
        put(&mut h, 8, b"Linux-MD\0\0\0\0bootbench\0\0\0");
        put(&mut h, 32, b"01.02.00");
        put(&mut h, 40, &1u32.to_be_bytes()); // seq
        put(&mut h, 44, &0x2a00_0000u32.to_be_bytes()); // timestamp
        put(&mut h, 48, &[0, 0, 0]); // open, foreign, enforce groups
        put(&mut h, 96, &primary.to_be_bytes());
        put(&mut h, 104, &u64::MAX.to_be_bytes()); // no secondary
        h[112] = kind; // 0x00 anchor, 0x01 primary
        let crc = bench_core::document::frame::crc32(&h);
        put(&mut h, 4, &crc.to_be_bytes());
        h
    };
    vec![
        (usize::try_from(primary).unwrap() * 512, header(1)),
        (size - 512, header(0)),
    ]
}

/// A GPT whose primary header and protective MBR were wiped: only the
/// backup header in the last LBA and its partition entries before it.
fn gpt_backup(size: usize) -> Vec<(usize, Vec<u8>)> {
    let last = u64::try_from(size / 512 - 1).unwrap();
    let mut entry = vec![0u8; 128];
    // Linux filesystem data, from LBA 2048 to the last usable one.
    put(
        &mut entry,
        0,
        &[
            0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47, 0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D, 0xE4,
        ],
    );
    put(&mut entry, 16, &[7; 16]);
    put(&mut entry, 32, &2048u64.to_le_bytes());
    put(&mut entry, 40, &(last - 33).to_le_bytes());
    let mut entries = entry.clone();
    entries.resize(128 * 128, 0);
    let mut h = vec![0u8; 512];
    put(&mut h, 0, b"EFI PART");
    put(&mut h, 8, &0x0001_0000u32.to_le_bytes());
    put(&mut h, 12, &92u32.to_le_bytes());
    put(&mut h, 24, &last.to_le_bytes()); // my LBA
    put(&mut h, 32, &1u64.to_le_bytes()); // the primary's
    put(&mut h, 40, &34u64.to_le_bytes());
    put(&mut h, 48, &(last - 33).to_le_bytes());
    put(&mut h, 56, &[9; 16]);
    put(&mut h, 72, &(last - 32).to_le_bytes());
    put(&mut h, 80, &128u32.to_le_bytes());
    put(&mut h, 84, &128u32.to_le_bytes());
    put(&mut h, 88, &bench_core::document::frame::crc32(&entries).to_le_bytes());
    let crc = bench_core::document::frame::crc32(&h[..92]);
    put(&mut h, 16, &crc.to_le_bytes());
    vec![(usize::try_from(last - 32).unwrap() * 512, entries), (size - 512, h)]
}

/// An XDR-encoded nvlist pair (ZFS's on-disk label format).
fn nvpair(name: &str, kind: u32, value: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend(u32::try_from(name.len()).unwrap().to_be_bytes());
    body.extend(name.as_bytes());
    body.resize(body.len().next_multiple_of(4), 0);
    body.extend(kind.to_be_bytes());
    body.extend(1u32.to_be_bytes()); // one element
    body.extend(value);
    let mut p = Vec::new();
    let len = u32::try_from(body.len()).unwrap();
    p.extend((len + 8).to_be_bytes()); // encoded size
    p.extend((len + 16).to_be_bytes()); // decoded size
    p.extend(body);
    p
}

fn nv_u64(name: &str, v: u64) -> Vec<u8> {
    nvpair(name, 8, &v.to_be_bytes())
}

fn nv_str(name: &str, v: &str) -> Vec<u8> {
    let mut s = u32::try_from(v.len()).unwrap().to_be_bytes().to_vec();
    s.extend(v.as_bytes());
    s.resize(s.len().next_multiple_of(4), 0);
    nvpair(name, 9, &s)
}

/// An nvlist body: version 0, NV_UNIQUE_NAME, the pairs, the end mark.
fn nvlist(pairs: &[Vec<u8>]) -> Vec<u8> {
    let mut v = vec![0, 0, 0, 0, 0, 0, 0, 1];
    for p in pairs {
        v.extend(p);
    }
    v.extend([0u8; 8]);
    v
}

/// The four vdev labels of a one-disk pool "tank" (zpool create on the
/// whole device): each with its config nvlist 16 KiB in and uberblocks in
/// its ring 128 KiB in (4 KiB slots, ashift 12); two at the start, two at
/// the 256 KiB-aligned end.
fn zfs(size: usize) -> Vec<(usize, Vec<u8>)> {
    let vdev_tree = nvlist(&[
        nv_str("type", "disk"),
        nv_u64("id", 0),
        nv_u64("guid", 0x1111_2222_3333_4444),
        nv_str("path", "/dev/sdb1"),
        nv_u64("ashift", 12),
        nv_u64("asize", (u64::try_from(size).unwrap() - (4 << 20)) & !((1 << 18) - 1)),
    ]);
    let mut config = vec![1u8, 1, 0, 0]; // XDR, little-endian host
    config.extend(nvlist(&[
        nv_u64("version", 5000),
        nv_str("name", "tank"),
        nv_u64("state", 0),
        nv_u64("txg", 4),
        nv_u64("pool_guid", 0x0abc_def0_1234_5678),
        nv_u64("errata", 0),
        nv_str("hostname", "bootbench"),
        nv_u64("top_guid", 0x1111_2222_3333_4444),
        nv_u64("guid", 0x1111_2222_3333_4444),
        nv_u64("vdev_children", 1),
        nvpair("vdev_tree", 19, &vdev_tree),
    ]));
    let label = 256 << 10;
    let end = size - size % label;
    let mut w = Vec::new();
    for start in [0, label, end - 2 * label, end - label] {
        // Blank but for the config and the uberblocks.
        w.push((start, vec![0; label]));
        w.push((start + (16 << 10), config.clone()));
        for txg in [1u64, 2, 3, 4] {
            let mut ub = vec![0u8; 64];
            put(&mut ub, 0, &0x00ba_b10c_u64.to_le_bytes());
            put(&mut ub, 8, &5000u64.to_le_bytes());
            put(&mut ub, 16, &txg.to_le_bytes());
            put(&mut ub, 24, &0x1111_2222_3333_4444u64.to_le_bytes());
            put(&mut ub, 32, &1_760_000_000u64.to_le_bytes());
            let slot = usize::try_from(txg % 32).unwrap() * 4096;
            w.push((start + (128 << 10) + slot, ub));
        }
    }
    w
}

/// A bcache backing device: the superblock at 4 KiB (sector 8), data from
/// 8 KiB.
fn bcache() -> Vec<(usize, Vec<u8>)> {
    let mut sb = vec![0u8; 208];
    put(&mut sb, 8, &8u64.to_le_bytes()); // this superblock's sector
    put(&mut sb, 16, &1u64.to_le_bytes()); // BCACHE_SB_VERSION_BDEV
    put(
        &mut sb,
        24,
        b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81",
    );
    put(&mut sb, 40, &[0x42; 16]); // uuid
    put(&mut sb, 56, &[0x24; 16]); // cache set uuid
    put(&mut sb, 72, b"bootbench-backing");
    vec![(4096, sb)]
}

/// An md 1.2 superblock (at byte 4096) with a correct checksum: `level`,
/// `raid_disks` slots, 4 device roles, this device in slot 0, the array
/// UUID's bytes all `uuid` (mdadm's super1.c layout and checksum).
fn md12(level: i32, raid_disks: u32, uuid: u8) -> Vec<(usize, Vec<u8>)> {
    let mut sb = vec![0u8; 4096];
    put(&mut sb, 0, &0xa92b_4efc_u32.to_le_bytes());
    put(&mut sb, 4, &1u32.to_le_bytes());
    sb[16..32].fill(uuid);
    put(&mut sb, 32, b"crafted");
    put(&mut sb, 72, &level.to_le_bytes());
    put(&mut sb, 80, &2048u64.to_le_bytes());
    put(&mut sb, 88, &128u32.to_le_bytes());
    put(&mut sb, 92, &raid_disks.to_le_bytes());
    put(&mut sb, 128, &2048u64.to_le_bytes());
    put(&mut sb, 144, &8u64.to_le_bytes()); // the superblock's own sector
    put(&mut sb, 208, &u64::MAX.to_le_bytes()); // in sync
    put(&mut sb, 220, &4u32.to_le_bytes()); // max_dev
    for r in 1..4 {
        put(&mut sb, 256 + 2 * r, &0xffffu16.to_le_bytes());
    }
    let len = 256 + 2 * 4;
    let sum: u64 = (0..len)
        .step_by(4)
        .filter(|&i| i != 216)
        .map(|i| u64::from(u32::from_le_bytes(sb[i..i + 4].try_into().unwrap())))
        .sum();
    let folded = ((sum & 0xffff_ffff) + (sum >> 32)) & 0xffff_ffff;
    put(&mut sb, 216, &u32::try_from(folded).unwrap().to_le_bytes());
    vec![(4096, sb)]
}

/// An md 0.90 superblock (at the device's last 64 KiB boundary less 64
/// KiB) with a correct checksum: raid1 of `raid_disks` slots, this device
/// active in slot 0 (the kernel's md_p.h layout, mdadm's checksum).
fn md090(size: usize, raid_disks: u32) -> Vec<(usize, Vec<u8>)> {
    let mut sb = vec![0u8; 4096];
    let word = |sb: &mut Vec<u8>, i: usize, x: u32| put(sb, 4 * i, &x.to_le_bytes());
    word(&mut sb, 0, 0xa92b_4efc);
    word(&mut sb, 2, 90);
    for i in [5, 13, 14, 15] {
        word(&mut sb, i, 0x0909_0909);
    }
    word(&mut sb, 7, 1);
    word(&mut sb, 8, 1024);
    word(&mut sb, 10, raid_disks);
    word(&mut sb, 33, 1);
    word(&mut sb, 992 + 4, 6); // this device: active, in sync, slot 0
    let sum: u64 = (0..1024)
        .filter(|&i| i != 38)
        .map(|i| u64::from(u32::from_le_bytes(sb[4 * i..4 * i + 4].try_into().unwrap())))
        .sum();
    let folded = ((sum & 0xffff_ffff) + (sum >> 32)) & 0xffff_ffff;
    word(&mut sb, 38, u32::try_from(folded).unwrap());
    vec![((size & !((64 << 10) - 1)) - (64 << 10), sb)]
}

/// The bytes that make a signature, each at its offset in a device of
/// `size` bytes.
fn signature(kind: &str, size: usize) -> Vec<(usize, Vec<u8>)> {
    let md = 0xa92b_4efc_u32.to_le_bytes().to_vec();
    let mut boot_sector = vec![0u8; 512];
    boot_sector[510] = 0x55;
    boot_sector[511] = 0xAA;
    match kind {
        "ext4" => vec![(1080, vec![0x53, 0xEF])],
        "fat32" => {
            boot_sector[0..3].copy_from_slice(&[0xEB, 0x58, 0x90]);
            boot_sector[3..11].copy_from_slice(b"mkfs.fat");
            boot_sector[82..90].copy_from_slice(b"FAT32   ");
            vec![(0, boot_sector)]
        }
        "md1.2" => vec![(4096, md)],
        // Superblocks with correct checksums that md cannot run: more
        // slots than md allows (1.x 1920, 0.90 27), a raid0 of 0 slots.
        "md1.2-slots-0xffffffff" => md12(1, u32::MAX, 0x12),
        "md0.90-slots-0xffffffff" => md090(size, u32::MAX),
        "md1.2-raid0-no-slots" => md12(0, 0, 0x10),
        // md 0.90: the last 64 KiB-aligned 64 KiB block of the device.
        "md0.90" => vec![(size - (64 << 10), md)],
        "luks" => vec![(0, b"LUKS\xba\xbe\x00\x02".to_vec())],
        "gpt" => vec![(510, vec![0x55, 0xAA]), (512, b"EFI PART".to_vec())],
        "mbr" => {
            // One partition entry: type 0x83 from LBA 2048.
            boot_sector[446 + 4] = 0x83;
            boot_sector[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
            boot_sector[446 + 12..446 + 16].copy_from_slice(&8192u32.to_le_bytes());
            vec![(0, boot_sector)]
        }
        "gpt-backup" => gpt_backup(size),
        "imsm" => imsm(size),
        "ddf" => ddf(size),
        "zfs" => zfs(size),
        "bcache" => bcache(),
        // Data from the first byte to the last, and no signature.
        "random" => vec![(0, random_bytes(size, 0x5eed))],
        other => panic!("unknown signature kind {other:?} in a case's loop:"),
    }
}

/// A loop device with the signature `kind` (if any) in place.
fn loop_with(kind: Option<&str>) -> Loop {
    let size = kind.map_or(LOOP_BYTES, loop_bytes);
    let sig = kind.map(|k| signature(k, size)).unwrap_or_default();
    let writes: Vec<(usize, &[u8])> = sig.iter().map(|(off, b)| (*off, b.as_slice())).collect();
    Loop::new(size, &writes)
}

/// One case file, parsed.
#[derive(Debug)]
struct Case {
    name: String,
    about: String,
    cmds: Vec<String>,
    args: Option<String>,
    sig: Option<String>,
    exit: i32,
    expect: Vec<String>,
    absent: Vec<String>,
    body: Option<String>,
}

fn parse_case(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (head, body) = match text.split_once("\n---\n") {
        Some((h, b)) => (h.to_string(), Some(b.to_string())),
        None => (text.clone(), None),
    };
    let mut c = Case {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        about: String::new(),
        cmds: vec!["run".into(), "validate".into()],
        args: None,
        sig: None,
        exit: -1,
        expect: Vec::new(),
        absent: Vec::new(),
        body,
    };
    for line in head.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(comment) = line.strip_prefix('#') {
            if c.about.is_empty() {
                c.about = comment.trim().to_string();
            }
            continue;
        }
        let (key, value) = line.split_once(':').ok_or(format!("not `key: value`: {line:?}"))?;
        let value = value.trim().to_string();
        match key.trim() {
            "cmd" => c.cmds = value.split_whitespace().map(str::to_string).collect(),
            "args" => c.args = Some(value),
            "loop" => c.sig = Some(value),
            "exit" => c.exit = value.parse().map_err(|_| format!("exit: {value:?} is not a number"))?,
            "expect" => c.expect.push(value),
            "absent" => c.absent.push(value),
            other => return Err(format!("unknown key {other:?}")),
        }
    }
    if c.exit < 0 {
        return Err("no `exit:` line".into());
    }
    if c.expect.is_empty() {
        return Err("no `expect:` line".into());
    }
    Ok(c)
}

/// The loop devices of the whole corpus: plain A and B, and one per
/// signature kind used.
struct Devices {
    a: Loop,
    b: Loop,
    sig: Vec<(String, Loop)>,
}

impl Devices {
    fn all(&self) -> impl Iterator<Item = &Loop> {
        [&self.a, &self.b].into_iter().chain(self.sig.iter().map(|(_, l)| l))
    }
}

/// A FIFO or a device node in /dev/shm, removed on drop.
struct Node(PathBuf);

impl Node {
    /// A FIFO that nobody writes to.
    fn fifo() -> Node {
        let p = shm_path("fifo");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
        Node(p)
    }

    /// A second block device node of the device `dev` (its major:minor).
    fn alias_of(dev: &str) -> Node {
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(dev).expect("stat the loop device").rdev();
        let p = shm_path("alias");
        nix::sys::stat::mknod(
            &p,
            nix::sys::stat::SFlag::S_IFBLK,
            nix::sys::stat::Mode::from_bits_truncate(0o600),
            rdev,
        )
        .expect("mknod");
        Node(p)
    }

    fn path(&self) -> String {
        self.0.to_str().unwrap().to_string()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The paths the placeholders other than the loop devices stand for.
struct Paths {
    missing: String,
    existing: String,
    fifo: String,
    alias_a: String,
}

/// Run `bootbench-init argv` to its end, or kill it after [`CASE_BOUND`]:
/// its output, or why it was killed.
fn run_bounded(argv: &[String]) -> Result<std::process::Output, String> {
    use std::process::Stdio;
    let child = Command::new(BIN)
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bootbench-init");
    let pid = i32::try_from(child.id()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(CASE_BOUND) {
        Ok(out) => {
            waiter.join().unwrap();
            Ok(out.expect("wait for bootbench-init"))
        }
        Err(_) => {
            // SAFETY: kill(2) on the child we spawned, not yet reaped (the
            // waiter thread is still in wait).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            waiter.join().unwrap();
            Err(format!("still running after {} s: killed", CASE_BOUND.as_secs()))
        }
    }
}

/// What a case's run said where its fragments are looked for: a refusal's
/// one line on stderr, or a run's skip reasons in its results (and its
/// stderr), or `validate`'s stdout. A stdout or stderr not of that shape is
/// a failure.
fn messages_of(
    c: &Case,
    argv: &[String],
    o: &Output,
    what: &str,
    fails: &mut Vec<String>,
) -> Vec<(&'static str, String)> {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut messages = Vec::new();
    if c.exit == 0 {
        if argv[0] == "run" {
            messages.push(("stderr", err));
            match serde_json::from_str::<Value>(&out) {
                Ok(doc) => {
                    let reasons: Vec<String> = doc["tests"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|t| t["status"]["state"] == "skipped")
                        .map(|t| t["status"]["reason"].as_str().unwrap_or_default().to_string())
                        .collect();
                    if reasons.is_empty() {
                        fails.push(format!("{what}: no test was skipped: {out}"));
                    }
                    for r in reasons {
                        messages.push(("skip reason in the results", r));
                    }
                }
                Err(e) => fails.push(format!("{what}: stdout is not a result document: {e}")),
            }
        } else {
            messages.push(("stdout", out));
        }
    } else {
        if !out.is_empty() {
            fails.push(format!("{what}: stdout must be empty: {out}"));
        }
        // One line, which a bad command line may follow with the usage.
        let (first, rest) = err.trim().split_once('\n').unwrap_or((err.trim(), ""));
        if !(rest.is_empty() || rest.starts_with("usage:")) {
            fails.push(format!("{what}: stderr must be one line (and the usage): {err}"));
        }
        messages.push(("stderr", first.to_string()));
    }
    messages
}

/// Each of the case's expected fragments is in every message, none of its
/// absent ones is.
fn check_messages(
    c: &Case,
    messages: &[(&str, String)],
    config_path: &str,
    fill: &dyn Fn(&str, &str) -> String,
    what: &str,
    fails: &mut Vec<String>,
) {
    for (place, m) in messages {
        // The config's file name (which holds the case's name) must not
        // make a fragment match.
        let m = if config_path.is_empty() {
            m.clone()
        } else {
            m.replace(config_path, "<config>")
        };
        for want in &c.expect {
            let want = fill(want, config_path);
            if !m.contains(&want) {
                fails.push(format!("{what}: {want:?} not in the {place}: {}", m.trim()));
            }
        }
        for unwanted in &c.absent {
            let unwanted = fill(unwanted, config_path);
            if m.contains(&unwanted) {
                fails.push(format!("{what}: {unwanted:?} in the {place}: {}", m.trim()));
            }
        }
    }
}

/// Run one case; the failures found (empty: it passed).
fn run_case(c: &Case, dev: &Devices, paths: &Paths) -> Vec<String> {
    let sig_dev = c.sig.as_ref().map(|k| {
        dev.sig
            .iter()
            .find(|(kind, _)| kind == k)
            .map(|(_, l)| l.dev.clone())
            .unwrap()
    });
    let fill = |s: &str, config: &str| {
        s.replace("{A}", &dev.a.dev)
            .replace("{B}", &dev.b.dev)
            .replace("{S}", sig_dev.as_deref().unwrap_or("{S}: no loop: line"))
            .replace("{PHRASE}", PHRASE)
            .replace("{MISSING}", &paths.missing)
            .replace("{EXISTING}", &paths.existing)
            .replace("{FIFO}", &paths.fifo)
            .replace("{ALIAS_A}", &paths.alias_a)
            .replace("{CONFIG}", config)
    };
    let config = c
        .body
        .as_ref()
        .map(|b| ShmFile::new(&format!("{}.json", c.name), fill(b, "").as_bytes()));
    let config_path = config.as_ref().map_or("", |f| f.path());
    let argvs: Vec<Vec<String>> = match &c.args {
        Some(a) => vec![fill(a, config_path).split(' ').map(str::to_string).collect()],
        None => c
            .cmds
            .iter()
            .map(|cmd| match cmd.as_str() {
                "run" => vec!["run".into(), "--config".into(), config_path.into()],
                "validate" => vec!["validate".into(), config_path.into()],
                other => panic!("{}: unknown cmd {other:?}", c.name),
            })
            .collect(),
    };
    let mut fails = Vec::new();
    for argv in argvs {
        let what = format!("{} ({})", c.name, argv.join(" "));
        let o = match run_bounded(&argv) {
            Ok(o) => o,
            Err(e) => {
                fails.push(format!("{what}: {e}"));
                continue;
            }
        };
        if o.status.code() != Some(c.exit) {
            fails.push(format!(
                "{what}: exit status {:?}, expected {}; stderr: {}",
                o.status.code(),
                c.exit,
                String::from_utf8_lossy(&o.stderr)
            ));
            continue;
        }
        let messages = messages_of(c, &argv, &o, &what, &mut fails);
        if let Some((place, m)) = messages.first() {
            let line = m
                .lines()
                .find(|l| l.contains("refused") || l.contains(':'))
                .unwrap_or_default();
            println!("    {} -> {place}: {}", argv[0], line.trim());
        }
        check_messages(c, &messages, config_path, &fill, &what, &mut fails);
    }
    for lo in dev.all() {
        if let Some(at) = lo.changed_at() {
            fails.push(format!("{}: WROTE to {} (first changed byte {at})", c.name, lo.dev));
        }
    }
    fails
}

#[test]
fn every_bad_input_is_refused_with_its_message_and_writes_nothing() {
    let dir = Path::new(MANIFEST).join("tests/bad_input");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bad_input exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    files.sort();
    let cases: Vec<Case> = files
        .iter()
        .map(|p| parse_case(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect();

    let mut kinds: Vec<String> = cases.iter().filter_map(|c| c.sig.clone()).collect();
    kinds.sort();
    kinds.dedup();
    let dev = Devices {
        a: loop_with(None),
        b: loop_with(None),
        sig: kinds.iter().map(|k| (k.clone(), loop_with(Some(k)))).collect(),
    };
    let missing = shm_path("missing");
    let existing = ShmFile::new("existing.json", b"{}");
    let fifo = Node::fifo();
    let alias_a = Node::alias_of(&dev.a.dev);
    let paths = Paths {
        missing: missing.to_str().unwrap().to_string(),
        existing: existing.path().to_string(),
        fifo: fifo.path(),
        alias_a: alias_a.path(),
    };

    let mut failures = Vec::new();
    let (mut exit2, mut exit0) = (0, 0);
    for c in &cases {
        let f = run_case(c, &dev, &paths);
        if c.exit == 0 {
            exit0 += 1;
        } else {
            exit2 += 1;
        }
        println!(
            "bad input {}: {}: {}",
            c.name,
            if f.is_empty() { "ok" } else { "FAILED" },
            c.about
        );
        failures.extend(f);
    }
    println!(
        "bad input: {} cases ({exit2} refused with an error exit status, {exit0} runs that go on and refuse the unsafe part), {} failure(s)",
        cases.len(),
        failures.len()
    );
    assert!(
        cases.len() >= MIN_CASES,
        "only {} cases in {}; the corpus must hold at least {MIN_CASES}",
        cases.len(),
        dir.display()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
