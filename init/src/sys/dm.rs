//! Device-mapper ioctls (linux/dm-ioctl.h) on `/dev/mapper/control`, the
//! random bytes for dm-crypt keys (getrandom(2)), and a wipe that the
//! compiler cannot drop.
//!
//! Every DM command takes one buffer: a `struct dm_ioctl` header (312 bytes)
//! followed by the command's data; TABLE_LOAD's data is one `struct
//! dm_target_spec` (40 bytes) and its parameter string, NUL-terminated and
//! padded to 8 bytes. The buffer is encoded and decoded in safe code at the
//! field offsets of the `repr(C)` structs below (so their layout is the one
//! place that states the ABI); only the ioctl itself is unsafe.

use std::fs::File;
use std::mem::{offset_of, size_of};
use std::os::fd::AsRawFd;

use nix::errno::Errno;

/// `struct dm_ioctl` (linux/dm-ioctl.h, interface version 4). Not passed to
/// the kernel as a Rust value: it states the layout the encoder writes.
#[repr(C)]
#[allow(dead_code)] // only its layout is used (offset_of!, size_of)
struct DmIoctl {
    version: [u32; 3],
    data_size: u32,
    data_start: u32,
    target_count: u32,
    open_count: i32,
    flags: u32,
    event_nr: u32,
    padding: u32,
    dev: u64,
    name: [u8; NAME_LEN],
    uuid: [u8; UUID_LEN],
    data: [u8; 7],
}

/// `struct dm_target_spec`.
#[repr(C)]
#[allow(dead_code)] // only its layout is used
struct DmTargetSpec {
    sector_start: u64,
    length: u64,
    status: i32,
    next: u32,
    target_type: [u8; TYPE_NAME_LEN],
}

/// DM_NAME_LEN: a device name, NUL included.
pub const NAME_LEN: usize = 128;
/// DM_UUID_LEN.
pub const UUID_LEN: usize = 129;
/// DM_MAX_TYPE_NAME: a target type name, NUL included.
pub const TYPE_NAME_LEN: usize = 16;
/// sizeof(struct dm_ioctl).
pub const HEADER_SIZE: usize = 312;
/// sizeof(struct dm_target_spec).
pub const SPEC_SIZE: usize = 40;

const _: () = assert!(size_of::<DmIoctl>() == HEADER_SIZE);
const _: () = assert!(size_of::<DmTargetSpec>() == SPEC_SIZE);
const _: () = assert!(offset_of!(DmIoctl, dev) == 40);
const _: () = assert!(offset_of!(DmIoctl, name) == 48);
const _: () = assert!(offset_of!(DmIoctl, uuid) == 176);
const _: () = assert!(offset_of!(DmIoctl, data) == 305);
const _: () = assert!(offset_of!(DmTargetSpec, target_type) == 24);

/// The interface version we speak: the kernel accepts any 4.x request with
/// minor >= ours, so {4, 0, 0} works on every kernel with DM ioctl v4.
pub const VERSION: [u32; 3] = [4, 0, 0];

/// DM_READONLY_FLAG: in TABLE_LOAD, the table opens its devices read-only
/// (and the device is made read-only when the table goes live); in
/// replies, the device is read-only.
pub const READONLY_FLAG: u32 = 1 << 0;
/// DM_SUSPEND_FLAG: in DEV_SUSPEND, suspend (absent: resume); in replies,
/// the device is suspended.
pub const SUSPEND_FLAG: u32 = 1 << 1;
/// DM_ACTIVE_PRESENT_FLAG (replies): the device has a live table.
pub const ACTIVE_PRESENT_FLAG: u32 = 1 << 5;
/// DM_SECURE_DATA_FLAG: the kernel wipes its copy of the buffer after use
/// (set for tables that hold a key).
pub const SECURE_DATA_FLAG: u32 = 1 << 15;

/// The DM commands used here (the `nr` of `_IOWR(0xfd, nr, struct dm_ioctl)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// DM_VERSION: the kernel's interface version.
    Version = 0,
    /// DM_DEV_CREATE: a new device with no table.
    DevCreate = 3,
    /// DM_DEV_REMOVE: remove a device by name.
    DevRemove = 4,
    /// DM_DEV_SUSPEND: suspend with SUSPEND_FLAG, otherwise resume (which
    /// makes a loaded table live).
    DevSuspend = 6,
    /// DM_DEV_STATUS: open count, flags, dev.
    DevStatus = 7,
    /// DM_TABLE_LOAD: load the inactive table.
    TableLoad = 9,
}

impl Cmd {
    /// The ioctl request number.
    pub fn request(self) -> libc::Ioctl {
        let code = nix::request_code_readwrite!(0xfd, self as u32, HEADER_SIZE);
        // The request number is a 32-bit pattern (_IOC); libc::Ioctl is
        // c_ulong on glibc and c_int on musl, so the bits are reinterpreted.
        #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
        let r = code as libc::Ioctl;
        r
    }
}

/// One target of a table: a range of the new device and its target type and
/// parameters (without the NUL).
pub struct TargetSpec<'a> {
    /// First sector (512 bytes) of the range in the dm device.
    pub start: u64,
    /// Length in sectors.
    pub length: u64,
    /// `linear`, `crypt`, ...: at most 15 bytes.
    pub target_type: &'a str,
    /// The parameter string; may hold a key: the buffer wipes itself.
    pub params: &'a [u8],
}

/// Without the parameters, which may hold a key.
impl std::fmt::Debug for TargetSpec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TargetSpec")
            .field("start", &self.start)
            .field("length", &self.length)
            .field("target_type", &self.target_type)
            .field("params", &format_args!("<{} bytes>", self.params.len()))
            .finish()
    }
}

/// An encoded ioctl buffer. It may hold a key (TABLE_LOAD of a crypt
/// table), so it is sized once (no reallocation leaves copies) and wiped
/// when dropped.
pub struct IoctlBuf(Vec<u8>);

/// Its length only: the bytes may hold a key.
impl std::fmt::Debug for IoctlBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IoctlBuf(<{} bytes>)", self.0.len())
    }
}

impl Drop for IoctlBuf {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

impl IoctlBuf {
    /// The encoded bytes.
    #[cfg(test)]
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

fn get_u32(b: &[u8], off: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[off..off + 4]);
    u32::from_ne_bytes(a)
}

fn get_u64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_ne_bytes(a)
}

/// `n` rounded up to a multiple of 8.
pub fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Encode one request: the header for device `name` (empty for VERSION)
/// with `flags`, and the table's targets in order (none for every command
/// but TABLE_LOAD). Err(EINVAL) when the name is too long (127 bytes at
/// most) or holds a NUL, a target type is too long, or a parameter string
/// holds a NUL.
pub fn encode(name: &str, flags: u32, targets: &[TargetSpec<'_>]) -> Result<IoctlBuf, Errno> {
    if name.len() >= NAME_LEN || name.as_bytes().contains(&0) {
        return Err(Errno::EINVAL);
    }
    // Each spec with its parameters, NUL-ended and padded to 8 bytes.
    let mut lens = Vec::with_capacity(targets.len());
    for t in targets {
        if t.target_type.len() >= TYPE_NAME_LEN || t.params.contains(&0) {
            return Err(Errno::EINVAL);
        }
        lens.push(SPEC_SIZE + pad8(t.params.len() + 1));
    }
    let total = HEADER_SIZE + lens.iter().sum::<usize>();
    let mut b = vec![0u8; total];
    let u32_of = |n: usize| u32::try_from(n).map_err(|_| Errno::EINVAL);
    for (i, v) in VERSION.iter().enumerate() {
        put_u32(&mut b, offset_of!(DmIoctl, version) + 4 * i, *v);
    }
    put_u32(&mut b, offset_of!(DmIoctl, data_size), u32_of(total)?);
    put_u32(&mut b, offset_of!(DmIoctl, data_start), u32_of(HEADER_SIZE)?);
    put_u32(&mut b, offset_of!(DmIoctl, target_count), u32_of(targets.len())?);
    put_u32(&mut b, offset_of!(DmIoctl, flags), flags);
    let n = offset_of!(DmIoctl, name);
    b[n..n + name.len()].copy_from_slice(name.as_bytes());
    let mut s = HEADER_SIZE;
    for (t, len) in targets.iter().zip(lens) {
        put_u64(&mut b, s + offset_of!(DmTargetSpec, sector_start), t.start);
        put_u64(&mut b, s + offset_of!(DmTargetSpec, length), t.length);
        // `next`: from this spec to the next one (the last: to the end).
        put_u32(&mut b, s + offset_of!(DmTargetSpec, next), u32_of(len)?);
        let ty = s + offset_of!(DmTargetSpec, target_type);
        b[ty..ty + t.target_type.len()].copy_from_slice(t.target_type.as_bytes());
        let p = s + SPEC_SIZE;
        b[p..p + t.params.len()].copy_from_slice(t.params);
        // The NUL and the padding are the zeroes already there.
        s += len;
    }
    Ok(IoctlBuf(b))
}

/// What the kernel wrote back into the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The kernel's interface version (after VERSION; an echo otherwise).
    pub version: [u32; 3],
    /// Flags (ACTIVE_PRESENT_FLAG, SUSPEND_FLAG, ...).
    pub flags: u32,
    /// Open count of the device.
    pub open_count: i32,
    /// Number of targets in the live table.
    pub target_count: u32,
    /// The device number, the kernel's `new_encode_dev` form.
    pub dev: u64,
}

/// Decode the header of a reply.
pub fn decode(b: &IoctlBuf) -> Reply {
    let b = &b.0;
    let v = |i: usize| get_u32(b, offset_of!(DmIoctl, version) + 4 * i);
    Reply {
        version: [v(0), v(1), v(2)],
        flags: get_u32(b, offset_of!(DmIoctl, flags)),
        open_count: i32::from_ne_bytes(get_u32(b, offset_of!(DmIoctl, open_count)).to_ne_bytes()),
        target_count: get_u32(b, offset_of!(DmIoctl, target_count)),
        dev: get_u64(b, offset_of!(DmIoctl, dev)),
    }
}

/// (major, minor) of a `dev` field: the kernel's `huge_encode_dev` is
/// `new_encode_dev`: minor bits 0-7 and 20-31, major bits 8-19.
pub fn split_dev(dev: u64) -> (u32, u32) {
    // Each part is masked to at most 20 bits before the conversion.
    #[allow(clippy::cast_possible_truncation)]
    let major = ((dev >> 8) & 0xfff) as u32;
    #[allow(clippy::cast_possible_truncation)]
    let minor = ((dev & 0xff) | ((dev >> 12) & 0xf_ff00)) as u32;
    (major, minor)
}

/// Run one DM command on the control device; the reply is written back into
/// `buf`.
pub fn ioctl(control: &File, cmd: Cmd, buf: &mut IoctlBuf) -> Result<(), Errno> {
    let b = &mut buf.0;
    // The kernel reads `data_size` bytes from the pointer and writes back at
    // most that many: they must all be ours.
    if b.len() < HEADER_SIZE || usize::try_from(get_u32(b, offset_of!(DmIoctl, data_size))) != Ok(b.len()) {
        return Err(Errno::EINVAL);
    }
    // SAFETY: the argument points at `b`, a live, writable allocation of
    // exactly `data_size` bytes (checked above), at least a dm_ioctl header;
    // the kernel's ctl_ioctl copies in `data_size` bytes and copies back at
    // most `data_size` bytes, touching nothing else of this process; the
    // borrow of `buf` keeps the allocation alive and unaliased for the call,
    // and `control` keeps the descriptor open.
    let r = unsafe { libc::ioctl(control.as_raw_fd(), cmd.request(), b.as_mut_ptr()) };
    Errno::result(r).map(drop)
}

/// Fill `buf` from the kernel's random pool (getrandom(2), flags 0: blocks
/// until the pool is initialized, then never fails short of EFAULT/EINTR):
/// for secrets (a dm-crypt key).
pub fn fill_random(buf: &mut [u8]) -> Result<(), Errno> {
    getrandom(buf, 0)
}

/// Fill `buf` from the kernel's random pool without waiting for it to be
/// initialized (GRND_INSECURE, Linux 5.6 and later; GRND_NONBLOCK's
/// EAGAIN before that is an error): for values that must differ from boot
/// to boot but guard no secret, drawn early (the boot's frame nonce, a
/// DHCP transaction id). The blocking draw waits for the pool: on a
/// machine without RDRAND or a hardware RNG driver loaded (QEMU's TCG
/// CPU) that is about a second of jitter entropy at every boot, before
/// PID 1 can print a line.
pub fn fill_random_unwaited(buf: &mut [u8]) -> Result<(), Errno> {
    match getrandom(buf, libc::GRND_INSECURE) {
        Err(Errno::EINVAL) => getrandom(buf, libc::GRND_NONBLOCK),
        r => r,
    }
}

/// getrandom(2) with `flags` until `buf` is full, retried on EINTR.
fn getrandom(buf: &mut [u8], flags: libc::c_uint) -> Result<(), Errno> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: the kernel writes at most `rest.len()` bytes at
        // `rest.as_mut_ptr()`, a live, exclusively borrowed slice of that
        // length; `flags` are getrandom's own.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), flags) };
        match Errno::result(n) {
            Ok(n) => done += n.unsigned_abs(),
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Overwrite `buf` with zeroes in a way the optimizer keeps even when the
/// buffer is freed right after (key material).
pub fn wipe(buf: &mut [u8]) {
    for b in buf.iter_mut() {
        // SAFETY: `b` is a valid, aligned, exclusive reference to one u8 of
        // the live slice; a volatile write through it is an ordinary store
        // the compiler must not elide.
        unsafe { std::ptr::write_volatile(b, 0) };
    }
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_numbers_match_the_kernel_header() {
        // _IOWR(0xfd, nr, struct dm_ioctl) = 0xc138fd00 | nr (dmsetup's values).
        let cases = [
            (Cmd::Version, 0xc138_fd00u32),
            (Cmd::DevCreate, 0xc138_fd03),
            (Cmd::DevRemove, 0xc138_fd04),
            (Cmd::DevSuspend, 0xc138_fd06),
            (Cmd::DevStatus, 0xc138_fd07),
            (Cmd::TableLoad, 0xc138_fd09),
        ];
        for (cmd, want) in cases {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let got = cmd.request() as u32;
            assert_eq!(got, want, "{cmd:?}");
        }
    }

    #[test]
    fn header_only_request() {
        let b = encode("secure", SUSPEND_FLAG, &[]).unwrap();
        let b = b.bytes();
        assert_eq!(b.len(), 312);
        assert_eq!(get_u32(b, 0), 4);
        assert_eq!(get_u32(b, 4), 0);
        assert_eq!(get_u32(b, 8), 0);
        assert_eq!(get_u32(b, 12), 312, "data_size");
        assert_eq!(get_u32(b, 16), 312, "data_start");
        assert_eq!(get_u32(b, 20), 0, "target_count");
        assert_eq!(get_u32(b, 28), SUSPEND_FLAG);
        assert_eq!(&b[48..54], b"secure");
        assert!(b[54..].iter().all(|&x| x == 0));
    }

    #[test]
    fn table_request_layout_and_padding() {
        // (params, padded length of params + NUL)
        for (params, padded) in [("a", 8usize), ("1234567", 8), ("12345678", 16), ("8:16 2048", 16)] {
            let t = TargetSpec {
                start: 0,
                length: 20480,
                target_type: "linear",
                params: params.as_bytes(),
            };
            let buf = encode("lv", SECURE_DATA_FLAG, std::slice::from_ref(&t)).unwrap();
            let b = buf.bytes();
            assert_eq!(b.len(), 312 + 40 + padded, "{params}");
            assert_eq!(b.len() % 8, 0);
            assert_eq!(usize::try_from(get_u32(b, 12)).unwrap(), b.len(), "data_size");
            assert_eq!(get_u32(b, 16), 312, "data_start");
            assert_eq!(get_u32(b, 20), 1, "target_count");
            assert_eq!(get_u32(b, 28), SECURE_DATA_FLAG);
            assert_eq!(get_u64(b, 312), 0, "sector_start");
            assert_eq!(get_u64(b, 320), 20480, "length");
            assert_eq!(usize::try_from(get_u32(b, 332)).unwrap(), 40 + padded, "next");
            assert_eq!(&b[336..342], b"linear");
            assert!(b[342..352].iter().all(|&x| x == 0));
            assert_eq!(&b[352..352 + params.len()], params.as_bytes());
            assert!(b[352 + params.len()..].iter().all(|&x| x == 0), "NUL and padding");
        }
    }

    #[test]
    fn a_table_of_several_targets_chains_them_by_next() {
        // An LV of two segments, as LVM loads it: linear, then striped.
        let specs = [
            (0u64, 16384u64, "linear", "8:16 2048"),
            (16384, 32768, "striped", "2 128 8:16 18432 8:32 2048"),
        ];
        let targets: Vec<TargetSpec<'_>> = specs
            .iter()
            .map(|(start, length, ty, p)| TargetSpec {
                start: *start,
                length: *length,
                target_type: ty,
                params: p.as_bytes(),
            })
            .collect();
        let buf = encode("vg-lv", 0, &targets).unwrap();
        let b = buf.bytes();
        assert_eq!(get_u32(b, 20), 2, "target_count");
        assert_eq!(usize::try_from(get_u32(b, 12)).unwrap(), b.len(), "data_size");
        // Walk the chain as the kernel's populate_table does.
        let mut at = 312;
        for (start, length, ty, p) in specs {
            assert_eq!(get_u64(b, at), start);
            assert_eq!(get_u64(b, at + 8), length);
            assert_eq!(&b[at + 24..at + 24 + ty.len()], ty.as_bytes());
            assert_eq!(b[at + 24 + ty.len()], 0);
            let params = &b[at + 40..];
            let end = params.iter().position(|&x| x == 0).unwrap();
            assert_eq!(&params[..end], p.as_bytes());
            let next = usize::try_from(get_u32(b, at + 20)).unwrap();
            assert_eq!(next % 8, 0);
            assert!(next > 40 + p.len(), "the next spec starts past this one's NUL");
            at += next;
        }
        assert_eq!(at, b.len(), "the last spec's next runs to the end");
    }

    #[test]
    fn bad_names_and_types_are_refused() {
        let long = "x".repeat(128);
        assert_eq!(encode(&long, 0, &[]).err(), Some(Errno::EINVAL));
        assert!(encode(&"x".repeat(127), 0, &[]).is_ok());
        assert_eq!(encode("a\0b", 0, &[]).err(), Some(Errno::EINVAL));
        let t = TargetSpec {
            start: 0,
            length: 1,
            target_type: "sixteen-chars-xx",
            params: b"",
        };
        assert_eq!(encode("a", 0, std::slice::from_ref(&t)).err(), Some(Errno::EINVAL));
        let t = TargetSpec {
            target_type: "linear",
            params: b"a\0b",
            ..t
        };
        assert_eq!(encode("a", 0, std::slice::from_ref(&t)).err(), Some(Errno::EINVAL));
    }

    #[test]
    fn decode_reads_what_the_kernel_writes() {
        let mut buf = encode("x", 0, &[]).unwrap();
        put_u32(&mut buf.0, 4, 48);
        put_u32(&mut buf.0, 24, 0xffff_ffff);
        put_u32(&mut buf.0, 28, ACTIVE_PRESENT_FLAG);
        put_u32(&mut buf.0, 20, 1);
        put_u64(&mut buf.0, 40, (254 << 8) | 3);
        let r = decode(&buf);
        assert_eq!(r.version, [4, 48, 0]);
        assert_eq!(r.open_count, -1);
        assert_eq!(r.flags, ACTIVE_PRESENT_FLAG);
        assert_eq!(r.target_count, 1);
        assert_eq!(split_dev(r.dev), (254, 3));
    }

    #[test]
    fn split_dev_new_encoding() {
        for (major, minor) in [(254u64, 0u64), (253, 255), (254, 256), (259, 0x12345), (1, 0xfffff)] {
            let dev = (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12);
            let (a, b) = split_dev(dev);
            assert_eq!((u64::from(a), u64::from(b)), (major, minor));
        }
    }

    #[test]
    fn ioctl_refuses_a_buffer_shorter_than_its_data_size() {
        let f = File::open("/dev/null").unwrap();
        let mut buf = encode("x", 0, &[]).unwrap();
        put_u32(&mut buf.0, 12, 4096);
        assert_eq!(ioctl(&f, Cmd::Version, &mut buf), Err(Errno::EINVAL));
    }

    #[test]
    fn the_unwaited_draw_fills_and_differs() {
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        fill_random_unwaited(&mut a).unwrap();
        fill_random_unwaited(&mut b).unwrap();
        assert!(a.iter().any(|&x| x != 0));
        assert_ne!(a, b);
    }

    #[test]
    fn random_fills_and_wipe_clears() {
        let mut a = [0u8; 64];
        fill_random(&mut a).unwrap();
        // 64 random bytes all zero: probability 2^-512.
        assert!(a.iter().any(|&x| x != 0));
        let mut b = [0u8; 64];
        fill_random(&mut b).unwrap();
        assert_ne!(a, b);
        wipe(&mut a);
        assert_eq!(a, [0u8; 64]);
    }
}
