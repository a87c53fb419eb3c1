//! The metadata readers behind `list`'s "holds" (`bootbench_init::disks`:
//! md superblocks, LVM labels, metadata areas and text, LUKS headers, and
//! an md array read through its members): on any bytes they never panic
//! and never read outside the device they are given; a superblock or
//! label they accept says it is where it was found; a volume's size is
//! its extents times the extent size.
//!
//! LUKS unlocking (`disks::unlock`) on any header: an error or a key of
//! the size the header says, never a panic (with the KDF's work bounded:
//! 2,000 iterations, 64 KiB of Argon2 memory), and the data read back
//! through a key of any length never past the device.
//!
//! Input: byte 0 picks the reader, the rest is the device's bytes.
#![no_main]

use bootbench_init::disks::holds::{examine, ArrayBytes, Bytes};
use bootbench_init::disks::{lvm, md, unlock};
use libfuzzer_sys::fuzz_target;

/// A device of the input's bytes that fails, rather than panics, on a
/// read past its end.
struct Mem<'a>(&'a [u8]);

impl Bytes for Mem<'_> {
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, buf: &mut [u8], at: u64) -> Result<(), String> {
        let at = usize::try_from(at).map_err(|_| "far")?;
        let end = at.checked_add(buf.len()).ok_or("far")?;
        buf.copy_from_slice(self.0.get(at..end).ok_or("past the end")?);
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, dev)) = data.split_first() else {
        return;
    };
    match which % 6 {
        0 => {
            if let Ok(Some(m)) = md::parse_v1(dev, 2, 4096) {
                assert_eq!(m.superblock_offset_bytes, 4096);
                assert_eq!(m.metadata, "1.2");
            }
            let _ = md::parse_v090(dev, 0);
        }
        1 => {
            if let Ok(Some((uuid, _, _))) = lvm::parse_label(&[dev, &[0u8; 2048][..]].concat()[..2048]) {
                assert!(uuid.len() <= 38);
            }
        }
        2 => {
            if let Ok(vg) = lvm::vg_from_text(dev) {
                for lv in &vg.lvs {
                    // Checked, never wrapped: past 2^64 bytes, 0 and not opened.
                    let extents = lv.segments.iter().try_fold(0u64, |n, s| n.checked_add(s.extent_count));
                    match extents.and_then(|e| e.checked_mul(vg.extent_bytes)) {
                        Some(size) => assert_eq!(lv.size_bytes, size),
                        None => assert!(lv.size_bytes == 0 && lv.not_opened.is_some()),
                    }
                }
            }
        }
        3 => {
            let _ = examine(&Mem(dev), true);
        }
        4 => {
            let mem = Mem(dev);
            if let Ok(open) = unlock::unlock_within(&mem, b"fuzz", 64, 2000, unlock::Budget::seconds(5)) {
                assert!(matches!(open.key.bytes().len(), 16..=64));
                let d = unlock::Decrypted { inner: &mem, open: &open };
                let mut buf = [0u8; 1000];
                let _ = d.read_at(&mut buf, 24);
            }
        }
        _ => {
            // The input as three members of an array of each level.
            let third = dev.len() / 3;
            let ms = [Mem(&dev[..third]), Mem(&dev[third..2 * third]), Mem(&dev[2 * third..])];
            for level in bench_core::vocab::stack::MdLevel::ALL {
                let a = ArrayBytes {
                    level: level.into(),
                    layout: u32::from(dev.first().copied().unwrap_or(0) % 6),
                    chunk: 512,
                    slots: ms.iter().map(|m| Some((m as &dyn Bytes, 16u64))).collect(),
                    component: third.saturating_sub(16) as u64,
                };
                let _ = examine(&a, false);
            }
        }
    }
});
