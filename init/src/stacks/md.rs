//! md (Linux software RAID) arrays without mdadm and without superblocks.
//!
//! [`assemble`] does what `mdadm --build --assume-clean` does, for every
//! level: create the `/dev/mdN` node (block major 9, minor N, the first N
//! with no `/sys/block/mdN`), open it, SET_ARRAY_INFO with `not_persistent =
//! 1` and `state = 1` (clean: RAID5/6/10/1 start no resync), ADD_NEW_DISK per
//! member in the given order (number = slot = index, ACTIVE|SYNC), RUN_ARRAY.
//! Nothing is written to the members: a non-persistent array has no
//! superblock, no write-intent bitmap (an mdadm-created array usually has an
//! internal one, so write figures can differ), and a clean array no resync.
//!
//! An array over any member that may not be written ([`Mode::ReadOnly`])
//! is never run read-write, not even for a moment: instead of RUN_ARRAY,
//! `readonly` is written to `/sys/block/mdN/md/array_state`, which starts it
//! with the array and its disk read-only (and is read back). A read-write
//! md array repairs a member's read error by writing the block back
//! (rebuilt from a mirror or from parity); over disks nobody named writable,
//! and never synced, that would write garbage to them. A read-only array
//! reads around the error instead.
//!
//! RAID0: SET_ARRAY_INFO forces the layout to -1, and 6.1 refuses to run a
//! multi-zone RAID0 (members of different sizes) without a layout unless
//! `raid0.default_layout` is set. So for RAID0 the layout is written to
//! `/sys/block/mdN/md/layout` between ADD_NEW_DISK and RUN_ARRAY (allowed
//! while the array is not running): 1 = RAID0_ORIG_LAYOUT, mdadm's default
//! for new arrays. Equal members make one zone, where both layouts are the
//! same.
//!
//! [`MdArray::stop`] (or dropping the [`MdArray`]) does STOP_ARRAY on the
//! open descriptor, closes it, waits for `/sys/block/mdN` to go and removes
//! the node if this module created it.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::modules::ModuleError;
pub use crate::stacks::dm::Mode;
use crate::sys::md as sys;
use crate::sysfs;

/// How long [`MdArray::stop`] waits for the kernel to delete the device.
const GONE_TIMEOUT: Duration = Duration::from_secs(5);

pub use bench_core::vocab::stack::{MdLayout, MdLevel};

/// RAID0_ORIG_LAYOUT (drivers/md/raid0.h): how a multi-zone RAID0 maps
/// chunks; mdadm's default for new arrays. Single-zone arrays ignore it.
pub const RAID0_ORIG_LAYOUT: i32 = 1;

/// What to assemble.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MdSpec {
    /// The config name (for messages).
    pub name: String,
    pub level: MdLevel,
    /// Chunk size in bytes (striped levels): a power of two, >= 4096.
    pub chunk_bytes: u32,
    /// None: the level's default ([`MdLayout::default_for`]).
    pub layout: Option<MdLayout>,
    /// Member block-device paths, in slot order.
    pub members: Vec<String>,
    /// Read-only whenever any member is not writable: the array is started
    /// read-only, so md never writes to a member (not even to repair a
    /// read error from the other mirrors or from parity).
    pub mode: Mode,
}

/// What went wrong, one variant per step, with the path and the errno.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MdError {
    /// The spec cannot be built (too few members, bad chunk, layout of
    /// another level).
    Invalid { name: String, reason: String },
    /// A module md needs could not be loaded.
    Module { module: String, error: ModuleError },
    /// A member is missing or not a block device (ENOTBLK).
    Member { path: String, errno: i32 },
    /// No free md minor, or the node could not be created.
    Node { path: String, errno: i32 },
    /// Opening the md device failed.
    Open { path: String, errno: i32 },
    /// SET_ARRAY_INFO failed.
    SetArrayInfo { path: String, errno: i32 },
    /// ADD_NEW_DISK of `member` failed.
    AddDisk { path: String, member: String, errno: i32 },
    /// Writing the RAID0 layout to sysfs failed.
    Layout { path: String, errno: i32 },
    /// RUN_ARRAY failed (EINVAL/ENODEV: the personality refused or is not
    /// loaded).
    Run { path: String, errno: i32 },
    /// Starting the array read-only (`readonly` to `md/array_state`) failed.
    RunReadOnly { path: String, errno: i32 },
    /// Started read-only, but `md/array_state` says otherwise (the array is
    /// stopped again).
    NotReadOnly { path: String, state: String },
    /// STOP_ARRAY failed (EBUSY: something else holds the array open).
    Stop { path: String, errno: i32 },
    /// The device was stopped but `/sys/block/mdN` did not go away.
    StillPresent { path: String },
    /// The node could not be removed.
    RemoveNode { path: String, errno: i32 },
}

impl fmt::Display for MdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = |e: i32| std::io::Error::from_raw_os_error(e);
        match self {
            MdError::Invalid { name, reason } => write!(f, "md array {name}: {reason}"),
            MdError::Module { module, error } => write!(f, "md: loading module {module}: {error}"),
            MdError::Member { path, errno } => write!(f, "md member {path}: {}", os(*errno)),
            MdError::Node { path, errno } => write!(f, "md node {path}: {}", os(*errno)),
            MdError::Open { path, errno } => write!(f, "md: open {path}: {}", os(*errno)),
            MdError::SetArrayInfo { path, errno } => write!(f, "md: SET_ARRAY_INFO on {path}: {}", os(*errno)),
            MdError::AddDisk { path, member, errno } => {
                write!(f, "md: ADD_NEW_DISK {member} to {path}: {}", os(*errno))
            }
            MdError::Layout { path, errno } => write!(f, "md: writing the raid0 layout to {path}: {}", os(*errno)),
            MdError::Run { path, errno } => write!(f, "md: RUN_ARRAY on {path}: {}", os(*errno)),
            MdError::RunReadOnly { path, errno } => {
                write!(
                    f,
                    "md: starting {path} read-only (array_state readonly): {}",
                    os(*errno)
                )
            }
            MdError::NotReadOnly { path, state } => write!(
                f,
                "md: {path} was started read-only but its array_state is {state:?}; stopped"
            ),
            MdError::Stop { path, errno } => write!(f, "md: STOP_ARRAY on {path}: {}", os(*errno)),
            MdError::StillPresent { path } => {
                write!(
                    f,
                    "md: {path} still present {} s after STOP_ARRAY",
                    GONE_TIMEOUT.as_secs()
                )
            }
            MdError::RemoveNode { path, errno } => write!(f, "md: removing node {path}: {}", os(*errno)),
        }
    }
}

impl std::error::Error for MdError {}

fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// Check `spec` and return its layout number (what SET_ARRAY_INFO or, for
/// RAID0, sysfs gets): RAID5/6/10 the layout's number (default when None);
/// RAID0 [`RAID0_ORIG_LAYOUT`]; linear and RAID1 0.
pub fn check(spec: &MdSpec) -> Result<i32, MdError> {
    let invalid = |reason: String| MdError::Invalid {
        name: spec.name.clone(),
        reason,
    };
    let level = spec.level;
    if spec.members.len() < level.min_members() {
        return Err(invalid(format!(
            "{level} needs at least {} members, got {}",
            level.min_members(),
            spec.members.len()
        )));
    }
    if level.striped() && (spec.chunk_bytes < 4096 || !spec.chunk_bytes.is_power_of_two()) {
        return Err(invalid(format!(
            "chunk {} bytes: expected a power of two >= 4096",
            spec.chunk_bytes
        )));
    }
    if i32::try_from(spec.chunk_bytes).is_err() {
        return Err(invalid(format!("chunk {} bytes: expected < 2 GiB", spec.chunk_bytes)));
    }
    if let Some(l) = spec.layout {
        if !l.fits(level) {
            return Err(invalid(format!("layout {l} does not apply to {level}")));
        }
    }
    if let Some(m) = (1..spec.members.len()).find_map(|i| {
        let m = &spec.members[i];
        spec.members[..i].contains(m).then_some(m)
    }) {
        return Err(invalid(format!("member {m} given twice")));
    }
    Ok(match level {
        MdLevel::Raid0 => RAID0_ORIG_LAYOUT,
        MdLevel::Linear | MdLevel::Raid1 => 0,
        _ => spec.layout.or(MdLayout::default_for(level)).map_or(0, MdLayout::number),
    })
}

/// The SET_ARRAY_INFO argument for a checked spec: what `mdadm --build
/// --assume-clean` sends (major_version 0, size 0 = the kernel sizes from
/// the members), with `layout` from [`check`] (RAID0's is overwritten by the
/// kernel; see the module doc) and chunk 0 for RAID1, which has none.
pub fn array_info(spec: &MdSpec, layout: i32, md_minor: u32, utime: u32) -> sys::ArrayInfo {
    // Counts and chunk were bounded by `check` (members <= u16 in practice;
    // clamp rather than wrap if not).
    let n = i32::try_from(spec.members.len()).unwrap_or(i32::MAX);
    let chunk = if spec.level == MdLevel::Raid1 {
        0
    } else {
        i32::try_from(spec.chunk_bytes).unwrap_or(0)
    };
    sys::ArrayInfo {
        major_version: 0,
        minor_version: 0,
        patch_version: 0,
        ctime: 0,
        level: spec.level.number(),
        size: 0,
        nr_disks: n,
        raid_disks: n,
        md_minor: i32::try_from(md_minor).unwrap_or(0),
        not_persistent: 1,
        utime,
        state: 1 << sys::MD_SB_CLEAN,
        active_disks: n,
        working_disks: n,
        failed_disks: 0,
        spare_disks: 0,
        layout,
        chunk_size: chunk,
    }
}

/// The ADD_NEW_DISK argument for member `slot` with device number
/// `major:minor`: number = raid_disk = slot, ACTIVE|SYNC.
pub fn disk_info(slot: usize, major: u32, minor: u32) -> sys::DiskInfo {
    sys::DiskInfo {
        number: i32::try_from(slot).unwrap_or(i32::MAX),
        major: i32::try_from(major).unwrap_or(-1),
        minor: i32::try_from(minor).unwrap_or(-1),
        raid_disk: i32::try_from(slot).unwrap_or(i32::MAX),
        state: (1 << sys::MD_DISK_ACTIVE) | (1 << sys::MD_DISK_SYNC),
    }
}

/// A running array; stopped by [`MdArray::stop`] or on drop.
#[derive(Debug)]
pub struct MdArray {
    /// `/dev/mdN`.
    pub path: String,
    /// N.
    pub minor: u32,
    /// The open md device; None once stopped.
    file: Option<File>,
    /// Whether this module created the node (and so removes it).
    node_created: bool,
}

impl MdArray {
    /// STOP_ARRAY, close, wait for the kernel to delete the device, remove the
    /// node if it was created here.
    pub fn stop(mut self) -> Result<(), MdError> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), MdError> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let stopped = sys::stop_array(&file).map_err(|e| MdError::Stop {
            path: self.path.clone(),
            errno: e as i32,
        });
        drop(file);
        finish_teardown(&self.path, self.minor, self.node_created, stopped)
    }
}

impl Drop for MdArray {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("bootbench: {e}");
        }
    }
}

/// After STOP_ARRAY and close: wait for /sys/block/mdN to go (only when the
/// stop succeeded), then remove the node. Returns the first error.
fn finish_teardown(path: &str, minor: u32, node_created: bool, stopped: Result<(), MdError>) -> Result<(), MdError> {
    let mut result = stopped;
    if result.is_ok() {
        let sys_dir = sys_block_dir(&sysfs::live("block"), minor);
        let start = Instant::now();
        while sys_dir.exists() && start.elapsed() < GONE_TIMEOUT {
            std::thread::sleep(Duration::from_millis(10));
        }
        if sys_dir.exists() {
            result = Err(MdError::StillPresent { path: path.to_string() });
        }
    }
    if node_created {
        if let Err(e) = std::fs::remove_file(path) {
            // devtmpfs may have removed it already with the disk.
            if e.kind() != std::io::ErrorKind::NotFound && result.is_ok() {
                result = Err(MdError::RemoveNode {
                    path: path.to_string(),
                    errno: errno_of(&e),
                });
            }
        }
    }
    result
}

fn sys_block_dir(sys_block: &Path, minor: u32) -> PathBuf {
    sys_block.join(format!("md{minor}"))
}

/// The first N in 0..1<<20 with no `md{N}` under `sys_block`.
pub fn first_free_minor(sys_block: &Path) -> Option<u32> {
    (0..1 << 20).find(|n| !sys_block_dir(sys_block, *n).exists())
}

/// Stop the md array at `path` that no [`MdArray`] holds (its assembler
/// died): open it read-only (STOP_ARRAY needs a descriptor, not write
/// access), STOP_ARRAY, and wait for the kernel to delete it.
pub fn stop_path(path: &str) -> Result<(), MdError> {
    let f = File::open(path).map_err(|e| MdError::Open {
        path: path.to_string(),
        errno: errno_of(&e),
    })?;
    let stopped = sys::stop_array(&f).map_err(|e| MdError::Stop {
        path: path.to_string(),
        errno: e as i32,
    });
    drop(f);
    let minor = path
        .strip_prefix("/dev/md")
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(u32::MAX);
    finish_teardown(path, minor, false, stopped)
}

/// md devices present, as `/dev/mdN` paths sorted by N, from the `md*`
/// entries of `/sys/block`.
pub fn list_active() -> Vec<String> {
    list_active_in(&sysfs::live("block"))
}

fn list_active_in(sys_block: &Path) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(sys_block) else {
        return Vec::new();
    };
    let mut minors: Vec<(u32, String)> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| {
            let rest = n.strip_prefix("md")?;
            // md_d0 style or named arrays (md_foo) are listed too.
            let key = rest.parse::<u32>().unwrap_or(u32::MAX);
            Some((key, format!("/dev/{n}")))
        })
        .collect();
    minors.sort();
    minors.into_iter().map(|(_, p)| p).collect()
}

/// Load md_mod and the level's personality when booted (PID 1's worker; a live
/// system loads them on demand or has them already). A personality that
/// cannot be loaded is not fatal here (it may be built in); RUN_ARRAY then
/// reports it.
fn load_modules(level: MdLevel) -> Result<Option<MdError>, MdError> {
    if !crate::modules::booted() {
        return Ok(None);
    }
    let present = |m: &str| sysfs::live("module").join(m).exists();
    if !present("md_mod") {
        crate::modules::load("md_mod").map_err(|error| MdError::Module {
            module: "md_mod".into(),
            error,
        })?;
    }
    let mut personality_err = None;
    let m = level.module();
    if !present(m) {
        match crate::modules::load(m) {
            Ok(_) => {}
            Err(error) => {
                personality_err = Some(MdError::Module {
                    module: m.into(),
                    error,
                })
            }
        }
    }
    Ok(personality_err)
}

/// The device number of a member, which must be a block device.
fn member_dev(path: &str) -> Result<(u32, u32), MdError> {
    let err = |errno| MdError::Member {
        path: path.to_string(),
        errno,
    };
    let meta = std::fs::metadata(path).map_err(|e| err(errno_of(&e)))?;
    if !meta.file_type().is_block_device() {
        return Err(err(libc::ENOTBLK));
    }
    let rdev = meta.rdev();
    let n = |v: u64| u32::try_from(v).map_err(|_| err(libc::EOVERFLOW));
    Ok((n(nix::sys::stat::major(rdev))?, n(nix::sys::stat::minor(rdev))?))
}

/// Create `/dev/mdN` (block 9:N) unless that node exists already; returns
/// whether it was created.
fn make_node(path: &str, minor: u32) -> Result<bool, MdError> {
    let err = |errno| MdError::Node {
        path: path.to_string(),
        errno,
    };
    let dev = nix::sys::stat::makedev(u64::from(sys::MD_MAJOR), u64::from(minor));
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        return if meta.file_type().is_block_device() && meta.rdev() == dev {
            Ok(false)
        } else {
            Err(err(libc::EEXIST))
        };
    }
    nix::sys::stat::mknod(
        path,
        nix::sys::stat::SFlag::S_IFBLK,
        nix::sys::stat::Mode::from_bits_truncate(0o600),
        dev,
    )
    .map_err(|e| err(e as i32))?;
    Ok(true)
}

fn open_md(path: &str, minor: u32) -> Result<File, MdError> {
    let open = || OpenOptions::new().read(true).write(true).open(path);
    match open() {
        Ok(f) => Ok(f),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENXIO | libc::ENODEV)) => {
            // No legacy autoload of block majors: ask md_mod for the device.
            let _ = std::fs::write(sysfs::live("module/md_mod/parameters/new_array"), format!("md{minor}"));
            open().map_err(|e| MdError::Open {
                path: path.to_string(),
                errno: errno_of(&e),
            })
        }
        Err(e) => Err(MdError::Open {
            path: path.to_string(),
            errno: errno_of(&e),
        }),
    }
}

/// Assemble `spec` (see the module doc). On any failure after the device was
/// opened it is stopped and its node removed again.
pub fn assemble(spec: &MdSpec) -> Result<MdArray, MdError> {
    let layout = check(spec)?;
    let devs = spec
        .members
        .iter()
        .map(|m| member_dev(m))
        .collect::<Result<Vec<_>, _>>()?;
    let personality_err = load_modules(spec.level)?;
    let array = new_array()?;
    let (path, minor) = (array.path.clone(), array.minor);
    // From here on, dropping `array` on an error stops it and removes the node.
    let f = array.file.as_ref().expect("just set");
    let utime = u32::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
    .unwrap_or(u32::MAX);
    let info = array_info(spec, layout, minor, utime);
    sys::set_array_info(f, &info).map_err(|e| MdError::SetArrayInfo {
        path: path.clone(),
        errno: e as i32,
    })?;
    for (slot, (member, (maj, min))) in spec.members.iter().zip(&devs).enumerate() {
        sys::add_new_disk(f, &disk_info(slot, *maj, *min)).map_err(|e| MdError::AddDisk {
            path: path.clone(),
            member: member.clone(),
            errno: e as i32,
        })?;
    }
    if spec.level == MdLevel::Raid0 {
        let layout_file = sysfs::live(format!("block/md{minor}/md/layout"));
        std::fs::write(&layout_file, layout.to_string()).map_err(|e| MdError::Layout {
            path: layout_file.display().to_string(),
            errno: errno_of(&e),
        })?;
    }
    match spec.mode {
        Mode::ReadWrite => {
            let param = sys::Param {
                personality: spec.level.number(),
                chunk_size: info.chunk_size,
                max_fault: 0,
            };
            if let Err(e) = sys::run_array(f, &param) {
                return Err(personality_err.unwrap_or(MdError::Run { path, errno: e as i32 }));
            }
        }
        Mode::ReadOnly => start_read_only(path, minor, personality_err)?,
    }
    Ok(array)
}

/// The first free md minor's node made (if absent) and opened: an
/// array not yet set up, which stops itself and removes the node again
/// when dropped; on an error here the node is removed at once.
fn new_array() -> Result<MdArray, MdError> {
    let minor = first_free_minor(&sysfs::live("block")).ok_or(MdError::Node {
        path: "/dev/md*".into(),
        errno: libc::ENOSPC,
    })?;
    let path = format!("/dev/md{minor}");
    let node_created = make_node(&path, minor)?;
    let file = match open_md(&path, minor) {
        Ok(f) => f,
        Err(e) => {
            if node_created {
                let _ = std::fs::remove_file(&path);
            }
            return Err(e);
        }
    };
    Ok(MdArray {
        path,
        minor,
        file: Some(file),
        node_created,
    })
}

/// Start the array set up at `minor` read-only: md.c array_state_store:
/// `readonly` on an array that is not running sets mddev->ro = MD_RDONLY
/// and the disk read-only, then runs it. Such an array never writes to
/// its members: raid1/10's read-error repair (fix_read_error) and
/// raid5/6's rewrite from parity (R5_ReWrite) are done only when
/// mddev->ro is 0, and writes to the array fail. The state is read back.
/// A failure to start names the personality's module when loading it
/// failed (`personality_err`).
fn start_read_only(path: String, minor: u32, personality_err: Option<MdError>) -> Result<(), MdError> {
    let state = sysfs::live(format!("block/md{minor}/md/array_state"));
    if let Err(e) = std::fs::write(&state, "readonly") {
        let errno = errno_of(&e);
        return Err(personality_err.unwrap_or(MdError::RunReadOnly { path, errno }));
    }
    let now = std::fs::read_to_string(&state).unwrap_or_default();
    if now.trim() != "readonly" {
        return Err(MdError::NotReadOnly {
            path,
            state: now.trim().to_string(),
        });
    }
    Ok(())
}

/// An array that exists on its members: assembled from their superblocks
/// as `mdadm --assemble --readonly` does, always read-only.
/// SET_ARRAY_INFO with only the superblock's version (`raid_disks` 0: the
/// kernel reads everything else from the members), ADD_NEW_DISK for each
/// member present (the kernel loads its superblock and refuses one of
/// another array), then `readonly` to `md/array_state`: md_run's
/// analyze_sbs takes the freshest superblock and leaves out stale
/// members, and with `mddev->ro` set nothing is written to any member (no
/// superblock update, no event count, no resync or recovery, no repair
/// of a read error; a degraded array starts when enough members are
/// there and clean). `version` is (0, 90) or (1, 0|1|2).
pub fn assemble_existing(level: MdLevel, version: (i32, i32), members: &[String]) -> Result<MdArray, MdError> {
    let devs = members.iter().map(|m| member_dev(m)).collect::<Result<Vec<_>, _>>()?;
    let personality_err = load_modules(level)?;
    let array = new_array()?;
    let (path, minor) = (array.path.clone(), array.minor);
    let f = array.file.as_ref().expect("just set");
    let info = sys::ArrayInfo {
        major_version: version.0,
        minor_version: version.1,
        ..sys::ArrayInfo::default()
    };
    sys::set_array_info(f, &info).map_err(|e| MdError::SetArrayInfo {
        path: path.clone(),
        errno: e as i32,
    })?;
    for (member, (maj, min)) in members.iter().zip(&devs) {
        let disk = sys::DiskInfo {
            major: i32::try_from(*maj).unwrap_or(i32::MAX),
            minor: i32::try_from(*min).unwrap_or(i32::MAX),
            ..sys::DiskInfo::default()
        };
        sys::add_new_disk(f, &disk).map_err(|e| MdError::AddDisk {
            path: path.clone(),
            member: member.clone(),
            errno: e as i32,
        })?;
    }
    start_read_only(path, minor, personality_err)?;
    Ok(array)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    fn spec(level: MdLevel, n: usize) -> MdSpec {
        MdSpec {
            name: "a".into(),
            level,
            chunk_bytes: 512 * 1024,
            layout: None,
            members: (0..n)
                .map(|i| format!("/dev/vd{}", char::from(b"bcdefgh"[i])))
                .collect(),
            mode: Mode::ReadOnly,
        }
    }

    #[test]
    fn level_numbers_names_and_modules() {
        let want = [
            (MdLevel::Linear, -1, "linear", "linear", 1),
            (MdLevel::Raid0, 0, "raid0", "raid0", 2),
            (MdLevel::Raid1, 1, "raid1", "raid1", 2),
            (MdLevel::Raid5, 5, "raid5", "raid456", 3),
            (MdLevel::Raid6, 6, "raid6", "raid456", 4),
            (MdLevel::Raid10, 10, "raid10", "raid10", 2),
        ];
        for (l, n, name, module, min) in want {
            assert_eq!(
                (l.number(), l.name(), l.module(), l.min_members()),
                (n, name, module, min)
            );
            assert_eq!(bench_core::vocab::names::from_name::<MdLevel>(name), Some(l));
        }
        assert_eq!(bench_core::vocab::names::from_name::<MdLevel>("raid4"), None);
    }

    #[test]
    fn layout_numbers_are_the_kernels() {
        let want = [
            ("left-asymmetric", 0),
            ("right-asymmetric", 1),
            ("left-symmetric", 2),
            ("right-symmetric", 3),
            ("near2", 0x102),
            ("far2", 0x201),
            ("offset2", 0x10201),
        ];
        for (name, n) in want {
            let l = bench_core::vocab::names::from_name::<MdLayout>(name).unwrap();
            assert_eq!((l.number(), l.name()), (n, name));
        }
        // raid10 decoding as in raid10.c setup_geo: near = bits 0-7, far = 8-15, offset = bit 16.
        let geo = |l: i32| (l & 255, (l >> 8) & 255, (l >> 16) & 1);
        assert_eq!(geo(MdLayout::Near2.number()), (2, 1, 0));
        assert_eq!(geo(MdLayout::Far2.number()), (1, 2, 0));
        assert_eq!(geo(MdLayout::Offset2.number()), (1, 2, 1));
    }

    #[test]
    fn layouts_of_each_level_default_first() {
        use MdLayout::*;
        assert_eq!(
            MdLayout::all_for(MdLevel::Raid5),
            vec![LeftSymmetric, LeftAsymmetric, RightAsymmetric, RightSymmetric]
        );
        assert_eq!(MdLayout::all_for(MdLevel::Raid6)[0], LeftSymmetric);
        assert_eq!(MdLayout::all_for(MdLevel::Raid10), vec![Near2, Far2, Offset2]);
        for l in [MdLevel::Linear, MdLevel::Raid0, MdLevel::Raid1] {
            assert!(MdLayout::all_for(l).is_empty(), "{l}");
        }
    }

    #[test]
    fn check_gives_layout_defaults() {
        let cases = [
            (MdLevel::Linear, None, 1, 0),
            (MdLevel::Raid0, None, 2, RAID0_ORIG_LAYOUT),
            (MdLevel::Raid1, None, 2, 0),
            (MdLevel::Raid5, None, 3, 2),
            (MdLevel::Raid5, Some(MdLayout::RightAsymmetric), 3, 1),
            (MdLevel::Raid6, None, 4, 2),
            (MdLevel::Raid10, None, 2, 0x102),
            (MdLevel::Raid10, Some(MdLayout::Offset2), 2, 0x10201),
        ];
        for (level, layout, n, want) in cases {
            let s = MdSpec {
                layout,
                ..spec(level, n)
            };
            assert_eq!(check(&s), Ok(want), "{level} {layout:?}");
        }
    }

    #[test]
    fn check_rejects_bad_specs() {
        let cases = [
            (
                MdSpec {
                    ..spec(MdLevel::Raid5, 2)
                },
                "raid5 needs at least 3 members, got 2",
            ),
            (
                MdSpec {
                    ..spec(MdLevel::Raid6, 3)
                },
                "raid6 needs at least 4 members, got 3",
            ),
            (
                MdSpec {
                    ..spec(MdLevel::Linear, 0)
                },
                "linear needs at least 1 members, got 0",
            ),
            (
                MdSpec {
                    chunk_bytes: 3 * 4096,
                    ..spec(MdLevel::Raid0, 2)
                },
                "chunk 12288 bytes: expected a power of two >= 4096",
            ),
            (
                MdSpec {
                    chunk_bytes: 2048,
                    ..spec(MdLevel::Raid10, 2)
                },
                "chunk 2048 bytes: expected a power of two >= 4096",
            ),
            (
                MdSpec {
                    layout: Some(MdLayout::Far2),
                    ..spec(MdLevel::Raid5, 3)
                },
                "layout far2 does not apply to raid5",
            ),
            (
                MdSpec {
                    layout: Some(MdLayout::LeftSymmetric),
                    ..spec(MdLevel::Raid0, 2)
                },
                "layout left-symmetric does not apply to raid0",
            ),
            (
                MdSpec {
                    members: vec!["/dev/vdb".into(), "/dev/vdc".into(), "/dev/vdb".into()],
                    ..spec(MdLevel::Raid5, 3)
                },
                "member /dev/vdb given twice",
            ),
        ];
        for (s, reason) in cases {
            assert_eq!(
                check(&s),
                Err(MdError::Invalid {
                    name: "a".into(),
                    reason: reason.into()
                })
            );
        }
        // Chunk is irrelevant for raid1 and linear.
        assert!(check(&MdSpec {
            chunk_bytes: 0,
            ..spec(MdLevel::Raid1, 2)
        })
        .is_ok());
    }

    #[test]
    fn array_info_is_clean_non_persistent_build() {
        let s = spec(MdLevel::Raid5, 4);
        let info = array_info(&s, 2, 3, 1234);
        let want = sys::ArrayInfo {
            level: 5,
            nr_disks: 4,
            raid_disks: 4,
            md_minor: 3,
            not_persistent: 1,
            utime: 1234,
            state: 1,
            active_disks: 4,
            working_disks: 4,
            layout: 2,
            chunk_size: 512 * 1024,
            ..sys::ArrayInfo::default()
        };
        assert_eq!(info, want);
        assert_eq!(array_info(&spec(MdLevel::Raid1, 2), 0, 0, 0).chunk_size, 0);
        assert_eq!(array_info(&spec(MdLevel::Linear, 1), 0, 0, 0).level, -1);
    }

    #[test]
    fn disk_info_is_active_sync_in_slot() {
        assert_eq!(
            disk_info(2, 253, 16),
            sys::DiskInfo {
                number: 2,
                major: 253,
                minor: 16,
                raid_disk: 2,
                state: 6
            }
        );
    }

    #[test]
    fn free_minor_and_list_active_read_sys_block() {
        let dir = TempDir::new("md-sysblock");
        assert_eq!(first_free_minor(dir.0.as_path()), Some(0));
        assert!(list_active_in(dir.0.as_path()).is_empty());
        for n in ["md0", "md1", "md10", "md3", "sda", "dm-0"] {
            std::fs::create_dir(dir.0.as_path().join(n)).unwrap();
        }
        assert_eq!(first_free_minor(dir.0.as_path()), Some(2));
        assert_eq!(
            list_active_in(dir.0.as_path()),
            ["/dev/md0", "/dev/md1", "/dev/md3", "/dev/md10"]
        );
    }

    #[test]
    fn member_must_be_a_block_device() {
        let dir = TempDir::new("md-member");
        let file = dir.0.as_path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let f = file.to_str().unwrap();
        assert_eq!(
            member_dev(f),
            Err(MdError::Member {
                path: f.into(),
                errno: libc::ENOTBLK
            })
        );
        let missing = dir.0.as_path().join("none");
        let m = missing.to_str().unwrap();
        assert_eq!(
            member_dev(m),
            Err(MdError::Member {
                path: m.into(),
                errno: libc::ENOENT
            })
        );
        // A real block device gives its numbers (/dev/loop* or any present one is not touched: stat only).
        assert!(MdError::Member {
            path: f.into(),
            errno: libc::ENOTBLK
        }
        .to_string()
        .starts_with(&format!("md member {f}: ")));
    }

    #[test]
    fn teardown_removes_only_a_created_node_and_keeps_the_first_error() {
        let dir = TempDir::new("md-teardown");
        let node = dir.0.as_path().join("md-node");
        std::fs::write(&node, b"").unwrap();
        let p = node.to_str().unwrap();
        let minor = u32::MAX; // no /sys/block/md4294967295
        assert_eq!(finish_teardown(p, minor, false, Ok(())), Ok(()));
        assert!(node.exists(), "a node this module did not create stays");
        assert_eq!(finish_teardown(p, minor, true, Ok(())), Ok(()));
        assert!(!node.exists(), "a created node is removed");
        // Already gone (devtmpfs removed it): not an error.
        assert_eq!(finish_teardown(p, minor, true, Ok(())), Ok(()));
        let stop = Err(MdError::Stop {
            path: p.into(),
            errno: libc::EBUSY,
        });
        assert_eq!(finish_teardown(p, minor, true, stop.clone()), stop);
    }
}
