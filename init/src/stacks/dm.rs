//! Device-mapper devices without lvm2 or cryptsetup (docs/arrays-and-existing-storage.md, "Arrays and layers"): a crypt
//! layer (aes-xts-plain64 with a random key, LUKS2's default cipher, no
//! header written) and a linear layer (at LVM's 1 MiB data offset), built
//! with the DM ioctls on `/dev/mapper/control` ([`crate::sys::dm`]).
//!
//! Steps of one device: DEV_CREATE (a device with no table), TABLE_LOAD (one
//! target over the whole device beneath, minus the offset), DEV_SUSPEND
//! without the suspend flag (resume: the table goes live). The node is
//! `/dev/dm-<minor>`: devtmpfs makes it; without devtmpfs it is made here.
//! Teardown: DEV_REMOVE by name ([`DmDevice::remove`], or the Drop of a
//! device not removed, or [`remove_by_name`] from an emergency path).
//!
//! The crypt key comes from getrandom(2), exists only in buffers that are
//! wiped after the TABLE_LOAD (which also asks the kernel to wipe its copy,
//! DM_SECURE_DATA_FLAG), and is never logged or formatted.

use std::fmt;
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::time::Duration;

use nix::errno::Errno;

use crate::disks::unlock::Unlocked;
use crate::modules::{self, ModuleError};
use crate::sys::dm::{self as sys, Cmd, TargetSpec};
use crate::sysfs;

/// The control device.
pub const CONTROL: &str = "/dev/mapper/control";
/// The misc device's `major:minor` (under the sysfs root), for making
/// CONTROL when it is missing.
const CONTROL_SYSFS_DEV: &str = "class/misc/device-mapper/dev";
/// Bytes per device-mapper sector.
const SECTOR: u64 = 512;
/// LUKS2's default cipher.
pub const DEFAULT_CIPHER: &str = "aes-xts-plain64";
/// LUKS2's default key size for aes-xts (two AES-256 keys).
pub const DEFAULT_KEY_BITS: u32 = 512;
/// DEV_REMOVE attempts while the device is busy, and the wait between them.
const REMOVE_TRIES: u32 = 10;
const REMOVE_WAIT: Duration = Duration::from_millis(100);

/// Options of a crypt layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CryptOpts {
    /// The dm-crypt cipher specification (default `aes-xts-plain64`).
    pub cipher: String,
    /// Key size in bits, a multiple of 8 (default 512: aes-256 in XTS mode).
    pub key_bits: u32,
    /// dm-crypt's `no_read_workqueue`: decrypt in the completion path.
    pub no_read_workqueue: bool,
    /// dm-crypt's `no_write_workqueue`: encrypt in the submitting thread.
    pub no_write_workqueue: bool,
    /// The encryption sector size in bytes: 512 (default) to 4096, a power
    /// of two. The layer's length is rounded down to a multiple of it.
    pub sector_size: u32,
    /// dm-crypt's `allow_discards` (off by default, as in cryptsetup).
    pub allow_discards: bool,
}

impl Default for CryptOpts {
    fn default() -> Self {
        CryptOpts {
            cipher: DEFAULT_CIPHER.to_string(),
            key_bits: DEFAULT_KEY_BITS,
            no_read_workqueue: false,
            no_write_workqueue: false,
            sector_size: 512,
            allow_discards: false,
        }
    }
}

/// What went wrong, per step, with the device name and the OS error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DmError {
    /// A module (dm_mod, dm_crypt) could not be loaded.
    Module(ModuleError),
    /// `/dev/mapper/control` could not be made or opened.
    Control { path: String, errno: i32 },
    /// The kernel's DM interface is not version 4.
    Version { found: [u32; 3] },
    /// The name is not usable as a dm name (empty, 128 bytes or more, `/`, NUL).
    Name { name: String },
    /// The options are invalid (key size, sector size, cipher).
    Options { name: String, what: String },
    /// The device beneath could not be examined (stat, open, BLKGETSIZE64),
    /// or is not a block device (ENOTBLK).
    Beneath { name: String, dev: String, errno: i32 },
    /// The device beneath is too small for the offset (bytes).
    TooSmall {
        name: String,
        dev: String,
        size: u64,
        offset: u64,
    },
    /// getrandom(2) failed.
    Random { name: String, errno: i32 },
    /// DM_DEV_CREATE failed (EBUSY: the name exists).
    Create { name: String, errno: i32 },
    /// DM_TABLE_LOAD failed (EINVAL: the kernel refused the table; its reason is in dmesg).
    Load { name: String, errno: i32 },
    /// DM_DEV_SUSPEND (resume) failed.
    Resume { name: String, errno: i32 },
    /// The `/dev/dm-N` node could not be made, or is not the device.
    Node { name: String, path: String, errno: i32 },
    /// DM_DEV_STATUS failed.
    Status { name: String, errno: i32 },
    /// DM_DEV_REMOVE failed (EBUSY after the retries: still open).
    Remove { name: String, errno: i32 },
    /// A table loaded read-only went live, but the kernel does not report
    /// the device read-only (it is removed again).
    NotReadOnly { name: String },
}

impl fmt::Display for DmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = |e: &i32| std::io::Error::from_raw_os_error(*e);
        match self {
            DmError::Module(e) => write!(f, "device-mapper: {e}"),
            DmError::Control { path, errno } => write!(f, "device-mapper: cannot open {path}: {}", os(errno)),
            DmError::Version { found } => write!(
                f,
                "device-mapper: kernel interface version {}.{}.{}, need 4.x",
                found[0], found[1], found[2]
            ),
            DmError::Name { name } => write!(f, "dm {name:?}: not a usable device-mapper name"),
            DmError::Options { name, what } => write!(f, "dm {name}: {what}"),
            DmError::Beneath { name, dev, errno } => write!(f, "dm {name}: device beneath {dev}: {}", os(errno)),
            DmError::TooSmall {
                name,
                dev,
                size,
                offset,
            } => write!(
                f,
                "dm {name}: {dev} has {size} bytes, nothing left after the offset of {offset} bytes"
            ),
            DmError::Random { name, errno } => write!(f, "dm {name}: getrandom for the key: {}", os(errno)),
            DmError::Create { name, errno } => write!(f, "dm {name}: DM_DEV_CREATE: {}", os(errno)),
            DmError::Load { name, errno } => write!(f, "dm {name}: DM_TABLE_LOAD: {}", os(errno)),
            DmError::Resume { name, errno } => write!(f, "dm {name}: DM_DEV_SUSPEND (resume): {}", os(errno)),
            DmError::Node { name, path, errno } => write!(f, "dm {name}: device node {path}: {}", os(errno)),
            DmError::Status { name, errno } => write!(f, "dm {name}: DM_DEV_STATUS: {}", os(errno)),
            DmError::Remove { name, errno } => write!(f, "dm {name}: DM_DEV_REMOVE: {}", os(errno)),
            DmError::NotReadOnly { name } => write!(
                f,
                "dm {name}: loaded read-only, but the kernel reports the device read-write; removed"
            ),
        }
    }
}

impl std::error::Error for DmError {}

/// Whether a device may be written: read-only whenever any disk beneath is
/// not writable, so that nothing the kernel does through it (and nothing
/// opened on it) can write to a disk nobody named. The results record it
/// by the same type.
pub use bench_core::document::result::StackMode as Mode;

/// A live device-mapper device. Removed by [`DmDevice::remove`], or when
/// dropped (errors then ignored).
#[derive(Debug)]
pub struct DmDevice {
    /// `/dev/dm-<minor>`.
    pub path: String,
    /// The dm name.
    pub name: String,
    /// The node was made here (no devtmpfs): remove it with the device.
    made_node: bool,
    removed: bool,
}

impl DmDevice {
    /// Remove the device (DEV_REMOVE, retried while busy).
    pub fn remove(mut self) -> Result<(), DmError> {
        self.removed = true;
        self.teardown()
    }

    fn teardown(&self) -> Result<(), DmError> {
        let r = remove_by_name(&self.name);
        if self.made_node && r.is_ok() {
            let _ = std::fs::remove_file(&self.path);
        }
        r
    }
}

impl Drop for DmDevice {
    fn drop(&mut self) {
        if !self.removed {
            let _ = self.teardown();
        }
    }
}

/// State of one device (DM_DEV_STATUS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmStatus {
    /// Device number.
    pub major: u32,
    /// Device number.
    pub minor: u32,
    /// Openers.
    pub open_count: i32,
    /// A live table is present.
    pub active: bool,
    /// Suspended.
    pub suspended: bool,
    /// Targets in the live table.
    pub target_count: u32,
    /// The device is read-only (its table was loaded with DM_READONLY_FLAG).
    pub read_only: bool,
}

/// Lowercase hex of `bytes`, appended to `out` (which must have room, so
/// that a key never causes a reallocation that leaves a copy behind).
fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    debug_assert!(out.capacity() - out.len() >= 2 * bytes.len());
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0xf)]);
    }
}

/// Bytes that may hold key material: wiped when dropped, never printed.
struct Secret(Vec<u8>);

impl Drop for Secret {
    fn drop(&mut self) {
        sys::wipe(&mut self.0);
    }
}

/// The optional arguments of a crypt table, in dm-crypt's order.
pub fn crypt_optional(opts: &CryptOpts) -> Vec<String> {
    let mut v = Vec::new();
    if opts.allow_discards {
        v.push("allow_discards".to_string());
    }
    if opts.no_read_workqueue {
        v.push("no_read_workqueue".to_string());
    }
    if opts.no_write_workqueue {
        v.push("no_write_workqueue".to_string());
    }
    if opts.sector_size != 512 {
        v.push(format!("sector_size:{}", opts.sector_size));
    }
    v
}

/// Check the options; Err names what is wrong.
pub fn check_crypt_opts(opts: &CryptOpts) -> Result<(), String> {
    if opts.cipher.is_empty() || opts.cipher.bytes().any(|b| b.is_ascii_whitespace() || b == 0) {
        return Err(format!(
            "cipher {:?}: expected one word such as aes-xts-plain64",
            opts.cipher
        ));
    }
    if opts.key_bits == 0 || opts.key_bits % 8 != 0 || opts.key_bits > 4096 {
        return Err(format!(
            "key_bits {}: expected a multiple of 8 up to 4096 (512 for aes-xts with AES-256)",
            opts.key_bits
        ));
    }
    if !opts.sector_size.is_power_of_two() || !(512..=4096).contains(&opts.sector_size) {
        return Err(format!(
            "sector_size {}: expected 512, 1024, 2048 or 4096",
            opts.sector_size
        ));
    }
    Ok(())
}

/// The crypt layer's length in sectors over a device of `size` bytes:
/// whole encryption sectors only.
pub fn crypt_sectors(size: u64, sector_size: u32) -> u64 {
    let unit = u64::from(sector_size);
    size / unit * unit / SECTOR
}

/// The crypt target's parameters: `<cipher> <hex key> <iv_offset> <dev>
/// <offset> [<n> <opt>...]` (the IV of the first sector, and where the
/// data starts on the device beneath, both in 512-byte sectors).
fn crypt_params(opts: &CryptOpts, key: &[u8], dev: &str, iv_offset: u64, offset: u64) -> Secret {
    let optional = crypt_optional(opts);
    let mut tail = format!(" {iv_offset} {dev} {offset}");
    if !optional.is_empty() {
        tail.push_str(&format!(" {} {}", optional.len(), optional.join(" ")));
    }
    let mut p = Vec::with_capacity(opts.cipher.len() + 1 + 2 * key.len() + tail.len());
    p.extend_from_slice(opts.cipher.as_bytes());
    p.push(b' ');
    push_hex(&mut p, key);
    p.extend_from_slice(tail.as_bytes());
    Secret(p)
}

/// The linear target's parameters: `<dev> <offset in sectors>`.
pub fn linear_params(dev: &str, offset_sectors: u64) -> String {
    format!("{dev} {offset_sectors}")
}

/// The linear layer's (offset, length) in sectors over a device of `size`
/// bytes; Err when the offset is not whole sectors or leaves nothing.
pub fn linear_extent(size: u64, offset_bytes: u64) -> Result<(u64, u64), &'static str> {
    if offset_bytes % SECTOR != 0 {
        return Err("offset is not a multiple of 512 bytes");
    }
    if offset_bytes >= size {
        return Err("offset at or past the end");
    }
    let len = (size - offset_bytes) / SECTOR;
    if len == 0 {
        return Err("less than one sector after the offset");
    }
    Ok((offset_bytes / SECTOR, len))
}

fn check_name(name: &str) -> Result<(), DmError> {
    let ok = !name.is_empty()
        && name.len() < sys::NAME_LEN
        && name != "."
        && name != ".."
        && !name.bytes().any(|b| b == b'/' || b == 0 || b.is_ascii_whitespace());
    if ok {
        Ok(())
    } else {
        Err(DmError::Name { name: name.to_string() })
    }
}

/// The device beneath: its `major:minor` (for the table: no path lookup in
/// the kernel) and its size in bytes.
fn beneath(name: &str, dev: &str) -> Result<(String, u64), DmError> {
    let err = |errno: i32| DmError::Beneath {
        name: name.to_string(),
        dev: dev.to_string(),
        errno,
    };
    let os = |e: std::io::Error| err(e.raw_os_error().unwrap_or(libc::EIO));
    let meta = std::fs::metadata(dev).map_err(os)?;
    if !meta.file_type().is_block_device() {
        return Err(err(libc::ENOTBLK));
    }
    let rdev = meta.rdev();
    let f = File::open(dev).map_err(os)?;
    let size = crate::sys::blk::size_bytes(&f).map_err(|e| err(e as i32))?;
    Ok((format!("{}:{}", libc::major(rdev), libc::minor(rdev)), size))
}

/// Load the modules a device needs when the kernel lacks them and has a
/// module tree (PID 1: the image's; a live system: its own). dm_mod and
/// dm_crypt must load unless built in (absent from the tables); the cipher
/// modules are best effort (aesni_intel fails on a CPU without AES-NI, and
/// the kernel then asks the module helper for another implementation).
fn ensure_modules(crypt: bool) -> Result<(), DmError> {
    if !modules::kernel_dir().is_dir() {
        return Ok(());
    }
    let need = |name: &str, present: &str| -> Result<(), DmError> {
        if sysfs::live(present).exists() {
            return Ok(());
        }
        match modules::load(name) {
            Ok(_) | Err(ModuleError::Unknown { .. }) => Ok(()),
            Err(e) => Err(DmError::Module(e)),
        }
    };
    need("dm_mod", "class/misc/device-mapper")?;
    if crypt {
        need("dm_crypt", "module/dm_crypt")?;
        for m in ["xts", "ecb", "aesni_intel"] {
            if !sysfs::live("module").join(m).exists() {
                let _ = modules::load(m);
            }
        }
    }
    Ok(())
}

/// `major:minor` text (sysfs `dev` files) to numbers.
fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn makedev(major: u32, minor: u32) -> libc::dev_t {
    libc::makedev(major, minor)
}

/// Open the control device, making its node from sysfs when devtmpfs has
/// not, and check the interface version.
fn control() -> Result<File, DmError> {
    let cerr = |errno: i32| DmError::Control {
        path: CONTROL.to_string(),
        errno,
    };
    if !Path::new(CONTROL).exists() {
        let text = std::fs::read_to_string(sysfs::live(CONTROL_SYSFS_DEV)).map_err(|_| cerr(libc::ENOENT))?;
        let (major, minor) = parse_dev(&text).ok_or(cerr(libc::EINVAL))?;
        let _ = std::fs::create_dir_all("/dev/mapper");
        nix::sys::stat::mknod(
            CONTROL,
            nix::sys::stat::SFlag::S_IFCHR,
            nix::sys::stat::Mode::from_bits_truncate(0o600),
            makedev(major, minor),
        )
        .map_err(|e| cerr(e as i32))?;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(CONTROL)
        .map_err(|e| cerr(e.raw_os_error().unwrap_or(libc::EIO)))?;
    let mut buf = sys::encode("", 0, &[]).map_err(|e| cerr(e as i32))?;
    sys::ioctl(&f, Cmd::Version, &mut buf).map_err(|e| cerr(e as i32))?;
    let v = sys::decode(&buf).version;
    if v[0] != sys::VERSION[0] {
        return Err(DmError::Version { found: v });
    }
    Ok(f)
}

/// A header-only command on the device `name`.
fn simple(ctl: &File, cmd: Cmd, name: &str, flags: u32) -> Result<sys::Reply, Errno> {
    let mut buf = sys::encode(name, flags, &[])?;
    sys::ioctl(ctl, cmd, &mut buf)?;
    Ok(sys::decode(&buf))
}

/// Create, load and resume one device with its table; on any failure after
/// the create, the half-made device is removed again. `Mode::ReadOnly`
/// loads the table with DM_READONLY_FLAG (the kernel opens the device
/// beneath read-only and makes the new device read-only), and the live
/// device must report itself read-only.
fn create(name: &str, targets: &[TargetSpec<'_>], flags: u32, mode: Mode) -> Result<DmDevice, DmError> {
    let flags = match mode {
        Mode::ReadOnly => flags | sys::READONLY_FLAG,
        Mode::ReadWrite => flags,
    };
    let ctl = control()?;
    let n = || name.to_string();
    let reply = simple(&ctl, Cmd::DevCreate, name, 0).map_err(|e| DmError::Create {
        name: n(),
        errno: e as i32,
    })?;
    let made = (|| {
        let mut buf = sys::encode(name, flags, targets).map_err(|e| DmError::Load {
            name: n(),
            errno: e as i32,
        })?;
        let loaded = sys::ioctl(&ctl, Cmd::TableLoad, &mut buf);
        drop(buf); // wiped here
        loaded.map_err(|e| DmError::Load {
            name: n(),
            errno: e as i32,
        })?;
        simple(&ctl, Cmd::DevSuspend, name, 0).map_err(|e| DmError::Resume {
            name: n(),
            errno: e as i32,
        })?;
        // Live now: a table present, not suspended, the device of the create.
        let st = status_with(&ctl, name)?;
        if !st.active || st.suspended || (st.major, st.minor) != sys::split_dev(reply.dev) {
            return Err(DmError::Resume {
                name: n(),
                errno: libc::EIO,
            });
        }
        if mode == Mode::ReadOnly && !st.read_only {
            return Err(DmError::NotReadOnly { name: n() });
        }
        let path = format!("/dev/dm-{}", st.minor);
        let made_node = node(name, &path, st.major, st.minor)?;
        Ok(DmDevice {
            path,
            name: n(),
            made_node,
            removed: false,
        })
    })();
    if made.is_err() {
        let _ = remove_with(&ctl, name);
    }
    made
}

/// Make sure `path` is the block device major:minor; make it when missing.
/// Returns whether it was made here.
fn node(name: &str, path: &str, major: u32, minor: u32) -> Result<bool, DmError> {
    let err = |errno: i32| DmError::Node {
        name: name.to_string(),
        path: path.to_string(),
        errno,
    };
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() && m.rdev() == makedev(major, minor) => Ok(false),
        Ok(_) => Err(err(libc::EEXIST)),
        Err(_) => {
            nix::sys::stat::mknod(
                path,
                nix::sys::stat::SFlag::S_IFBLK,
                nix::sys::stat::Mode::from_bits_truncate(0o600),
                makedev(major, minor),
            )
            .map_err(|e| err(e as i32))?;
            Ok(true)
        }
    }
}

/// A crypt layer `name` over the block device `dev`: `opts.cipher` with a
/// fresh random key of `opts.key_bits`, over the whole device (rounded down
/// to whole encryption sectors). Nothing is written to `dev` by creating it.
pub fn create_crypt(name: &str, dev: &str, opts: &CryptOpts, mode: Mode) -> Result<DmDevice, DmError> {
    check_name(name)?;
    check_crypt_opts(opts).map_err(|what| DmError::Options {
        name: name.to_string(),
        what,
    })?;
    let (devnum, size) = beneath(name, dev)?;
    let sectors = crypt_sectors(size, opts.sector_size);
    if sectors == 0 {
        return Err(DmError::TooSmall {
            name: name.to_string(),
            dev: dev.to_string(),
            size,
            offset: 0,
        });
    }
    ensure_modules(true)?;
    let key_len = usize::try_from(opts.key_bits / 8).unwrap_or(usize::MAX);
    let mut key = Secret(vec![0u8; key_len]);
    sys::fill_random(&mut key.0).map_err(|e| DmError::Random {
        name: name.to_string(),
        errno: e as i32,
    })?;
    let params = crypt_params(opts, &key.0, &devnum, 0, 0);
    drop(key);
    create_crypt_target(name, sectors, &params, mode)
}

/// Create `name` with one crypt target of `sectors` over `params` (which
/// hold the key): the kernel is asked to wipe its copy of the table
/// (DM_SECURE_DATA_FLAG); `params` is wiped by its owner.
fn create_crypt_target(name: &str, sectors: u64, params: &Secret, mode: Mode) -> Result<DmDevice, DmError> {
    let target = TargetSpec {
        start: 0,
        length: sectors,
        target_type: "crypt",
        params: &params.0,
    };
    create(name, std::slice::from_ref(&target), sys::SECURE_DATA_FLAG, mode)
}

/// An existing LUKS container's data on `dev`, mapped by dm-crypt with its
/// volume key as `cryptsetup open --readonly` maps it: its cipher, the IV
/// of its first sector (LUKS2's `iv_tweak`), its data from
/// `data_offset_bytes` for `data_bytes` or to the device's end, in whole
/// encryption sectors. The key goes only into the wiped table buffer.
pub fn create_luks(name: &str, dev: &str, open: &Unlocked, mode: Mode) -> Result<DmDevice, DmError> {
    check_name(name)?;
    let (devnum, size) = beneath(name, dev)?;
    let rest = size.saturating_sub(open.data_offset_bytes);
    let sectors = crypt_sectors(open.data_bytes.map_or(rest, |d| d.min(rest)), open.sector_size);
    if sectors == 0 || open.data_offset_bytes % SECTOR != 0 {
        return Err(DmError::TooSmall {
            name: name.to_string(),
            dev: dev.to_string(),
            size,
            offset: open.data_offset_bytes,
        });
    }
    let opts = CryptOpts {
        cipher: open.cipher.clone(),
        key_bits: u32::try_from(open.key.bytes().len() * 8).unwrap_or(0),
        sector_size: open.sector_size,
        ..CryptOpts::default()
    };
    check_crypt_opts(&opts).map_err(|what| DmError::Options {
        name: name.to_string(),
        what,
    })?;
    ensure_modules(true)?;
    let params = crypt_params(
        &opts,
        open.key.bytes(),
        &devnum,
        open.iv_tweak,
        open.data_offset_bytes / SECTOR,
    );
    create_crypt_target(name, sectors, &params, mode)
}

/// A linear layer `name` over the block device `dev`, starting
/// `offset_bytes` into it (a multiple of 512; LVM puts data at 1 MiB)
/// and running to its end.
pub fn create_linear(name: &str, dev: &str, offset_bytes: u64, mode: Mode) -> Result<DmDevice, DmError> {
    check_name(name)?;
    let (devnum, size) = beneath(name, dev)?;
    let (offset, length) = linear_extent(size, offset_bytes).map_err(|_| DmError::TooSmall {
        name: name.to_string(),
        dev: dev.to_string(),
        size,
        offset: offset_bytes,
    })?;
    ensure_modules(false)?;
    let params = linear_params(&devnum, offset);
    let target = TargetSpec {
        start: 0,
        length,
        target_type: "linear",
        params: params.as_bytes(),
    };
    create(name, std::slice::from_ref(&target), 0, mode)
}

/// One segment of an existing logical volume, in 512-byte sectors: where
/// it lies in the volume and where each of its stripes lies beneath (an
/// index into the volume's devices, and the sector there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Its first sector in the volume.
    pub start: u64,
    /// Its length, sectors.
    pub length: u64,
    /// The stripe size, sectors (unused with one stripe).
    pub stripe_sectors: u64,
    /// Each stripe: (device index, first sector on that device).
    pub stripes: Vec<(usize, u64)>,
}

/// A segment's target type and parameters over `devs` (`major:minor` or
/// paths): `linear DEV OFFSET` for one stripe, `striped N CHUNK DEV OFFSET
/// ...` for more, as LVM loads them.
pub fn segment_target(seg: &Segment, devs: &[String]) -> (&'static str, String) {
    let dev = |i: usize| devs.get(i).map_or("?", String::as_str);
    match seg.stripes.as_slice() {
        [(d, off)] => ("linear", linear_params(dev(*d), *off)),
        stripes => {
            let mut p = format!("{} {}", stripes.len(), seg.stripe_sectors);
            for (d, off) in stripes {
                p.push_str(&format!(" {} {off}", dev(*d)));
            }
            ("striped", p)
        }
    }
}

/// The table in `dmsetup table` form, a line per segment.
pub fn table_lines(segs: &[Segment], devs: &[String]) -> Vec<String> {
    segs.iter()
        .map(|s| {
            let (ty, p) = segment_target(s, devs);
            format!("{} {} {ty} {p}", s.start, s.length)
        })
        .collect()
}

/// Check a volume's segments over `sizes` (each device's size, bytes):
/// they follow each other from sector 0, each has a stripe on a device
/// that exists, a striped one divides evenly into its stripes with a
/// stripe size of a power of two from 8 sectors (4 KiB, LVM's least), and
/// every stripe ends within its device. Returns the length, sectors.
pub fn check_segments(segs: &[Segment], sizes: &[u64]) -> Result<u64, String> {
    let mut next = 0u64;
    for (i, s) in segs.iter().enumerate() {
        if s.start != next || s.length == 0 {
            return Err(format!(
                "segment {i} starts at sector {} with {} sectors; expected a non-empty segment at sector {next}",
                s.start, s.length
            ));
        }
        let n = s.stripes.len() as u64;
        if n == 0 {
            return Err(format!("segment {i} has no stripe"));
        }
        if n > 1 && (s.length % n != 0 || !s.stripe_sectors.is_power_of_two() || s.stripe_sectors < 8) {
            return Err(format!(
                "segment {i}: {} sectors in {n} stripes of {} sectors; expected a whole number of sectors per \
                 stripe and a stripe size of a power of two from 8 sectors",
                s.length, s.stripe_sectors
            ));
        }
        let per = s.length / n;
        for (d, off) in &s.stripes {
            let Some(size) = sizes.get(*d) else {
                return Err(format!(
                    "segment {i}: stripe on device {d}, which the volume does not have"
                ));
            };
            if off
                .checked_add(per)
                .and_then(|end| end.checked_mul(SECTOR))
                .is_none_or(|end| end > *size)
            {
                return Err(format!(
                    "segment {i}: {per} sectors from sector {off} run past the end of device {d} ({size} bytes)"
                ));
            }
        }
        next = s.start.checked_add(s.length).ok_or("the segments overflow")?;
    }
    if next == 0 {
        return Err("no segment".to_string());
    }
    Ok(next)
}

/// A volume `name` over the block devices `devs`, mapped by `segs` (the
/// table LVM would load for a linear or striped logical volume). Nothing
/// is written to the devices by creating it.
pub fn create_volume(name: &str, devs: &[String], segs: &[Segment], mode: Mode) -> Result<DmDevice, DmError> {
    check_name(name)?;
    let mut nums = Vec::with_capacity(devs.len());
    let mut sizes = Vec::with_capacity(devs.len());
    for d in devs {
        let (num, size) = beneath(name, d)?;
        nums.push(num);
        sizes.push(size);
    }
    check_segments(segs, &sizes).map_err(|what| DmError::Options {
        name: name.to_string(),
        what,
    })?;
    ensure_modules(false)?;
    let params: Vec<(&'static str, String)> = segs.iter().map(|s| segment_target(s, &nums)).collect();
    let targets: Vec<TargetSpec<'_>> = segs
        .iter()
        .zip(&params)
        .map(|(s, (ty, p))| TargetSpec {
            start: s.start,
            length: s.length,
            target_type: ty,
            params: p.as_bytes(),
        })
        .collect();
    create(name, &targets, 0, mode)
}

fn remove_with(ctl: &File, name: &str) -> Result<(), DmError> {
    let mut tries = 0;
    loop {
        match simple(ctl, Cmd::DevRemove, name, 0) {
            // ENXIO: no such device (gone already).
            Ok(_) | Err(Errno::ENXIO) => return Ok(()),
            Err(Errno::EBUSY) if tries + 1 < REMOVE_TRIES => {
                tries += 1;
                std::thread::sleep(REMOVE_WAIT);
            }
            Err(e) => {
                return Err(DmError::Remove {
                    name: name.to_string(),
                    errno: e as i32,
                })
            }
        }
    }
}

/// Remove the device `name` (DEV_REMOVE, retried a few times while busy);
/// a device that does not exist counts as removed. For emergency teardown,
/// where no [`DmDevice`] is at hand.
pub fn remove_by_name(name: &str) -> Result<(), DmError> {
    let ctl = control()?;
    remove_with(&ctl, name)
}

/// DM_DEV_STATUS of the device `name`.
fn status_with(ctl: &File, name: &str) -> Result<DmStatus, DmError> {
    let r = simple(ctl, Cmd::DevStatus, name, 0).map_err(|e| DmError::Status {
        name: name.to_string(),
        errno: e as i32,
    })?;
    let (major, minor) = sys::split_dev(r.dev);
    Ok(DmStatus {
        major,
        minor,
        open_count: r.open_count,
        active: r.flags & sys::ACTIVE_PRESENT_FLAG != 0,
        suspended: r.flags & sys::SUSPEND_FLAG != 0,
        target_count: r.target_count,
        read_only: r.flags & sys::READONLY_FLAG != 0,
    })
}

/// The dm names of the devices present (`/sys/block/dm-*/dm/name`), sorted.
pub fn list_active() -> Vec<String> {
    list_active_in(&sysfs::live("block"))
}

/// [`list_active`] under another sysfs block directory (tests).
pub fn list_active_in(sys_block: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(sys_block)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("dm-"))
        .filter_map(|e| std::fs::read_to_string(e.path().join("dm/name")).ok())
        .map(|s| s.trim_end().to_string())
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    fn seg(start: u64, length: u64, stripe_sectors: u64, stripes: &[(usize, u64)]) -> Segment {
        Segment {
            start,
            length,
            stripe_sectors,
            stripes: stripes.to_vec(),
        }
    }

    #[test]
    fn a_volume_table_reads_as_dmsetup_prints_lvms() {
        // A volume extended once: a linear segment on the first PV, then a
        // segment striped over both (64 KiB stripes).
        let segs = [
            seg(0, 16384, 0, &[(0, 2048)]),
            seg(16384, 32768, 128, &[(0, 18432), (1, 2048)]),
        ];
        let devs = ["8:16".to_string(), "8:32".to_string()];
        assert_eq!(
            table_lines(&segs, &devs),
            [
                "0 16384 linear 8:16 2048",
                "16384 32768 striped 2 128 8:16 18432 8:32 2048"
            ]
        );
        let mib = 1 << 20;
        assert_eq!(check_segments(&segs, &[64 * mib, 64 * mib]), Ok(49152));
    }

    #[test]
    fn a_volume_table_that_does_not_fit_is_refused() {
        let mib = 1 << 20;
        let big = [64 * mib, 64 * mib];
        for (segs, sizes, want) in [
            (vec![], &big[..], "no segment"),
            (vec![seg(8, 8, 0, &[(0, 0)])], &big[..], "segment 0 starts at sector 8"),
            (
                vec![seg(0, 8, 0, &[(0, 0)]), seg(16, 8, 0, &[(0, 8)])],
                &big[..],
                "segment 1 starts at sector 16 with 8 sectors; expected a non-empty segment at sector 8",
            ),
            (vec![seg(0, 8, 0, &[])], &big[..], "segment 0 has no stripe"),
            (
                vec![seg(0, 9, 128, &[(0, 0), (1, 0)])],
                &big[..],
                "9 sectors in 2 stripes",
            ),
            (
                vec![seg(0, 16, 100, &[(0, 0), (1, 0)])],
                &big[..],
                "stripe size of a power of two",
            ),
            (
                vec![seg(0, 8, 0, &[(2, 0)])],
                &big[..],
                "stripe on device 2, which the volume does not have",
            ),
            (
                // 64 MiB is 131072 sectors: the last 8 end one sector past it.
                vec![seg(0, 8, 0, &[(0, 131_065)])],
                &big[..],
                "8 sectors from sector 131065 run past the end of device 0",
            ),
            (
                vec![seg(0, 16, 8, &[(0, 0), (1, 131_065)])],
                &big[..],
                "8 sectors from sector 131065 run past the end of device 1",
            ),
        ] {
            let got = check_segments(&segs, sizes).unwrap_err();
            assert!(got.contains(want), "{segs:?}: {got}");
        }
        // The last sector of the device is still in.
        assert_eq!(check_segments(&[seg(0, 8, 0, &[(0, 131_064)])], &big), Ok(8));
    }

    #[test]
    fn crypt_params_default_and_with_options() {
        let key: Vec<u8> = (0u8..64).collect();
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex.len(), 128);
        let all = CryptOpts {
            allow_discards: true,
            no_read_workqueue: true,
            no_write_workqueue: true,
            sector_size: 4096,
            ..CryptOpts::default()
        };
        let cases = [
            (CryptOpts::default(), String::new()),
            (
                all,
                " 4 allow_discards no_read_workqueue no_write_workqueue sector_size:4096".to_string(),
            ),
            (
                CryptOpts {
                    no_write_workqueue: true,
                    ..CryptOpts::default()
                },
                " 1 no_write_workqueue".to_string(),
            ),
        ];
        for (opts, tail) in cases {
            let p = crypt_params(&opts, &key, "8:16", 0, 0);
            let want = format!("aes-xts-plain64 {hex} 0 8:16 0{tail}");
            assert_eq!(String::from_utf8(p.0.clone()).unwrap(), want);
            // Sized once: no reallocation left a copy of the key behind.
            assert_eq!(p.0.capacity(), p.0.len());
        }
        // An existing LUKS2 container's data: its IV tweak and offset.
        let p = crypt_params(&CryptOpts::default(), &key, "9:0", 7, 32768);
        assert_eq!(
            String::from_utf8(p.0.clone()).unwrap(),
            format!("aes-xts-plain64 {hex} 7 9:0 32768")
        );
    }

    #[test]
    fn crypt_options_checked() {
        let bad = [
            CryptOpts {
                key_bits: 0,
                ..CryptOpts::default()
            },
            CryptOpts {
                key_bits: 500,
                ..CryptOpts::default()
            },
            CryptOpts {
                sector_size: 3000,
                ..CryptOpts::default()
            },
            CryptOpts {
                sector_size: 8192,
                ..CryptOpts::default()
            },
            CryptOpts {
                cipher: "aes xts".into(),
                ..CryptOpts::default()
            },
            CryptOpts {
                cipher: String::new(),
                ..CryptOpts::default()
            },
        ];
        for o in &bad {
            assert!(check_crypt_opts(o).is_err(), "{o:?}");
        }
        for o in [
            CryptOpts::default(),
            CryptOpts {
                key_bits: 256,
                sector_size: 4096,
                ..CryptOpts::default()
            },
        ] {
            assert_eq!(check_crypt_opts(&o), Ok(()));
        }
    }

    #[test]
    fn crypt_length_whole_encryption_sectors() {
        // (size in bytes, sector size, sectors)
        for (size, ss, want) in [
            (1 << 20, 512, 2048),
            (1_000_000, 512, 1953),
            (1_000_000, 4096, 1952),
            (4095, 4096, 0),
            (511, 512, 0),
        ] {
            assert_eq!(crypt_sectors(size, ss), want, "{size} {ss}");
        }
    }

    #[test]
    fn linear_extent_and_params() {
        assert_eq!(linear_extent(256 << 20, 1 << 20), Ok((2048, 522_240)));
        assert_eq!(linear_extent(4096, 0), Ok((0, 8)));
        assert!(linear_extent(4096, 100).is_err());
        assert!(linear_extent(4096, 4096).is_err());
        assert!(linear_extent(4096 + 100, 4096).is_err());
        assert_eq!(linear_params("9:0", 2048), "9:0 2048");
    }

    #[test]
    fn names_checked() {
        for good in ["secure", "lv", "a-b_c.1"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        let long = "x".repeat(128);
        for bad in ["", ".", "..", "a/b", "a b", long.as_str()] {
            assert!(matches!(check_name(bad), Err(DmError::Name { .. })), "{bad:?}");
        }
    }

    #[test]
    fn beneath_refuses_non_block_devices() {
        let t = TempDir::new("dm-beneath");
        let f = t.0.join("file");
        std::fs::write(&f, b"x").unwrap();
        let p = f.to_str().unwrap();
        assert_eq!(
            beneath("l", p),
            Err(DmError::Beneath {
                name: "l".into(),
                dev: p.into(),
                errno: libc::ENOTBLK
            })
        );
        let missing = t.0.join("missing");
        let e = beneath("l", missing.to_str().unwrap()).unwrap_err();
        assert!(
            matches!(
                e,
                DmError::Beneath {
                    errno: libc::ENOENT,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(create_linear("l", p, 0, Mode::ReadOnly).is_err());
        assert!(create_crypt("c", p, &CryptOpts::default(), Mode::ReadOnly).is_err());
    }

    #[test]
    fn hex_lowercase() {
        let mut v = Vec::with_capacity(6);
        push_hex(&mut v, &[0x00, 0xab, 0xf9]);
        assert_eq!(v, b"00abf9");
    }

    #[test]
    fn list_active_reads_dm_names() {
        let t = TempDir::new("dm-list");
        for (dir, name) in [
            ("dm-1", Some("secure")),
            ("dm-0", Some("lv")),
            ("sda", None),
            ("dm-2", None),
        ] {
            let d = t.0.join(dir);
            std::fs::create_dir_all(d.join("dm")).unwrap();
            if let Some(n) = name {
                std::fs::write(d.join("dm/name"), format!("{n}\n")).unwrap();
            }
        }
        assert_eq!(list_active_in(&t.0), vec!["lv".to_string(), "secure".to_string()]);
        assert!(list_active_in(&t.0.join("none")).is_empty());
    }

    #[test]
    fn parse_dev_text() {
        assert_eq!(parse_dev("10:236\n"), Some((10, 236)));
        assert_eq!(parse_dev("10"), None);
        assert_eq!(parse_dev("a:b"), None);
    }

    #[test]
    fn errors_name_device_and_errno() {
        let e = DmError::Load {
            name: "secure".into(),
            errno: libc::EINVAL,
        };
        let s = e.to_string();
        assert!(
            s.contains("secure") && s.contains("DM_TABLE_LOAD") && s.contains("Invalid argument"),
            "{s}"
        );
    }
}
