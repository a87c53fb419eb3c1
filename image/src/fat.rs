//! The FAT boot sector (its BIOS parameter block): a volume's geometry and FAT type, read in one
//! place for every part of bootbench-image that walks a FAT itself ([`crate::fatfix`]'s repair of
//! new directories, [`crate::stick::mark_free_clusters_bad`], the backup boot sector of
//! [`crate::usb`]); the `fatfs` crate reads its own.
//!
//! The FAT type is decided by the count of data clusters alone, as Microsoft's FAT specification
//! (fatgen103, "FAT Type Determination") and the `fatfs` crate decide it: below 4085 FAT12,
//! below 65525 FAT16, else FAT32. Linux's vfat driver decides FAT12 against FAT16 the same way but
//! takes FAT32 from the BPB's layout (a 16-bit FAT size of 0); a volume whose layout and count
//! disagree would be read as two different file systems, so it is refused here
//! ([`BootSectorError::Mixed`]) rather than walked as either.

use std::fmt;

/// The FAT type of a volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FatType {
    /// 12-bit FAT entries: fewer than 4085 clusters.
    Fat12,
    /// 16-bit FAT entries: 4085 to 65524 clusters.
    Fat16,
    /// 28-bit FAT entries in 32 bits: 65525 clusters or more.
    Fat32,
}

impl FatType {
    /// The fewest clusters of a FAT16.
    pub const FAT16_MIN_CLUSTERS: u64 = 4085;
    /// The fewest clusters of a FAT32.
    pub const FAT32_MIN_CLUSTERS: u64 = 65525;

    /// The type of a volume of `clusters` data clusters.
    pub const fn of_clusters(clusters: u64) -> FatType {
        if clusters < Self::FAT16_MIN_CLUSTERS {
            FatType::Fat12
        } else if clusters < Self::FAT32_MIN_CLUSTERS {
            FatType::Fat16
        } else {
            FatType::Fat32
        }
    }

    /// Bits per FAT entry: 12, 16 or 32.
    pub const fn bits(self) -> u32 {
        match self {
            FatType::Fat12 => 12,
            FatType::Fat16 => 16,
            FatType::Fat32 => 32,
        }
    }
}

/// Why a boot sector gives no volume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BootSectorError {
    /// Fewer than 512 bytes.
    Short {
        /// The bytes there were.
        len: usize,
    },
    /// A zero where the BPB needs a count: bytes per sector, sectors per cluster, FATs or
    /// sectors per FAT (not a FAT boot sector).
    NoGeometry,
    /// The reserved sectors, the FATs and the root directory take more sectors than the volume
    /// has.
    Geometry,
    /// A FAT holds fewer entries than the volume has clusters.
    FatTooSmall,
    /// The BPB's layout (FAT32's, or FAT12/16's) is not that of the type the cluster count gives.
    Mixed {
        /// The data clusters.
        clusters: u64,
        /// Whether the BPB has FAT32's layout (a 16-bit FAT size of 0).
        fat32_layout: bool,
    },
}

impl fmt::Display for BootSectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BootSectorError::Short { len } => write!(f, "volume below one sector ({len} B)"),
            BootSectorError::NoGeometry => write!(f, "not a FAT boot sector: no geometry in it"),
            BootSectorError::Geometry => write!(f, "FAT geometry: the FATs and root directory exceed the volume"),
            BootSectorError::FatTooSmall => write!(f, "FAT geometry: a FAT too small for the clusters"),
            BootSectorError::Mixed { clusters, fat32_layout } => write!(
                f,
                "a BPB laid out for {} with {clusters} clusters, which make a {}",
                if *fat32_layout { "FAT32" } else { "FAT12/16" },
                match FatType::of_clusters(*clusters) {
                    FatType::Fat12 => "FAT12",
                    FatType::Fat16 => "FAT16",
                    FatType::Fat32 => "FAT32",
                }
            ),
        }
    }
}

impl std::error::Error for BootSectorError {}

/// A FAT volume's geometry, from its boot sector. Counts are of sectors unless named otherwise;
/// byte offsets are from the start of the volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootSector {
    /// Bytes per sector (BPB_BytsPerSec).
    pub bytes_per_sector: u64,
    /// Sectors per cluster (BPB_SecPerClus).
    pub sectors_per_cluster: u64,
    /// Sectors before the first FAT (BPB_RsvdSecCnt).
    pub reserved: u64,
    /// Copies of the FAT (BPB_NumFATs).
    pub fats: u64,
    /// Sectors per FAT (BPB_FATSz16, or BPB_FATSz32 when that is 0).
    pub fat_sectors: u64,
    /// Sectors of the FAT12/16 fixed root directory (0 on FAT32).
    pub root_sectors: u64,
    /// Sectors of the volume (BPB_TotSec16, or BPB_TotSec32 when that is 0).
    pub total_sectors: u64,
    /// Data clusters, numbered from 2.
    pub clusters: u64,
    /// The FAT type, by [`Self::clusters`].
    pub fat_type: FatType,
    /// First cluster of the FAT32 root directory (BPB_RootClus; 0 on FAT12/16).
    pub root_cluster: u32,
    /// Sector of the FAT32 FSInfo (BPB_FSInfo; 0 on FAT12/16).
    pub fsinfo_sector: u64,
    /// Sector of the FAT32 backup boot sector (BPB_BkBootSec; 0 on FAT12/16).
    pub backup_boot_sector: u64,
}

/// Directory entries are 32 bytes.
const DIR_ENTRY: u64 = 32;

impl BootSector {
    /// The volume described by `sector`, its first 512 bytes (or more).
    pub fn read(sector: &[u8]) -> Result<BootSector, BootSectorError> {
        if sector.len() < 512 {
            return Err(BootSectorError::Short { len: sector.len() });
        }
        let u16_at = |at: usize| u64::from(u16::from_le_bytes([sector[at], sector[at + 1]]));
        let u32_at = |at: usize| u32::from_le_bytes([sector[at], sector[at + 1], sector[at + 2], sector[at + 3]]);
        let bytes_per_sector = u16_at(0x0B);
        let sectors_per_cluster = u64::from(sector[0x0D]);
        let reserved = u16_at(0x0E);
        let fats = u64::from(sector[0x10]);
        let root_entries = u16_at(0x11);
        let total_sectors = match u16_at(0x13) {
            0 => u64::from(u32_at(0x20)),
            n => n,
        };
        let fat32_layout = u16_at(0x16) == 0;
        let fat_sectors = if fat32_layout {
            u64::from(u32_at(0x24))
        } else {
            u16_at(0x16)
        };
        if bytes_per_sector == 0 || sectors_per_cluster == 0 || fats == 0 || fat_sectors == 0 {
            return Err(BootSectorError::NoGeometry);
        }
        let root_sectors = (root_entries * DIR_ENTRY).div_ceil(bytes_per_sector);
        let data_sectors = total_sectors
            .checked_sub(reserved + fats * fat_sectors + root_sectors)
            .ok_or(BootSectorError::Geometry)?;
        let clusters = data_sectors / sectors_per_cluster;
        let fat_type = FatType::of_clusters(clusters);
        if fat32_layout != (fat_type == FatType::Fat32) {
            return Err(BootSectorError::Mixed { clusters, fat32_layout });
        }
        // Entries 0 and 1 are reserved; cluster c's entry is entry c.
        if (clusters + 2) * u64::from(fat_type.bits()) > fat_sectors * bytes_per_sector * 8 {
            return Err(BootSectorError::FatTooSmall);
        }
        let fat32 = |v: u64| if fat_type == FatType::Fat32 { v } else { 0 };
        Ok(BootSector {
            bytes_per_sector,
            sectors_per_cluster,
            reserved,
            fats,
            fat_sectors,
            root_sectors,
            total_sectors,
            clusters,
            fat_type,
            root_cluster: u32::try_from(fat32(u64::from(u32_at(0x2C)))).unwrap_or(0),
            fsinfo_sector: fat32(u16_at(0x30)),
            backup_boot_sector: fat32(u16_at(0x32)),
        })
    }

    /// Bytes per cluster.
    pub fn cluster_bytes(&self) -> u64 {
        self.bytes_per_sector * self.sectors_per_cluster
    }

    /// Byte offset of FAT copy `copy` (0 is the first).
    pub fn fat_start(&self, copy: u64) -> u64 {
        (self.reserved + copy * self.fat_sectors) * self.bytes_per_sector
    }

    /// Bytes per FAT copy.
    pub fn fat_bytes(&self) -> u64 {
        self.fat_sectors * self.bytes_per_sector
    }

    /// Byte offset of the FAT12/16 fixed root directory (where the data starts on FAT32).
    pub fn root_start(&self) -> u64 {
        self.fat_start(self.fats)
    }

    /// Bytes of the FAT12/16 fixed root directory (0 on FAT32).
    pub fn root_bytes(&self) -> u64 {
        self.root_sectors * self.bytes_per_sector
    }

    /// Byte offset of cluster 2, the first data cluster.
    pub fn data_start(&self) -> u64 {
        self.root_start() + self.root_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A boot sector of 512-byte sectors and one sector per cluster, two FATs of `fat_sectors`,
    /// laid out for FAT32 or FAT12/16, with `clusters` data clusters.
    fn sector(fat32: bool, fat_sectors: u32, clusters: u32) -> Vec<u8> {
        let mut s = vec![0u8; 512];
        let reserved: u32 = if fat32 { 32 } else { 1 };
        let root_entries: u32 = if fat32 { 0 } else { 512 };
        let total = reserved + 2 * fat_sectors + root_entries * 32 / 512 + clusters;
        s[0x0B..0x0D].copy_from_slice(&512u16.to_le_bytes());
        s[0x0D] = 1;
        s[0x0E..0x10].copy_from_slice(&u16::try_from(reserved).unwrap().to_le_bytes());
        s[0x10] = 2;
        s[0x11..0x13].copy_from_slice(&u16::try_from(root_entries).unwrap().to_le_bytes());
        s[0x20..0x24].copy_from_slice(&total.to_le_bytes());
        if fat32 {
            s[0x24..0x28].copy_from_slice(&fat_sectors.to_le_bytes());
            s[0x2C..0x30].copy_from_slice(&2u32.to_le_bytes());
            s[0x30..0x32].copy_from_slice(&1u16.to_le_bytes());
            s[0x32..0x34].copy_from_slice(&6u16.to_le_bytes());
        } else {
            s[0x16..0x18].copy_from_slice(&u16::try_from(fat_sectors).unwrap().to_le_bytes());
        }
        s
    }

    /// The type changes exactly where the specification puts it: 4085 and 65525 clusters.
    #[test]
    fn the_cluster_count_decides_the_type_at_its_boundaries() {
        for (fat32, clusters, want) in [
            (false, 1, FatType::Fat12),
            (false, 4084, FatType::Fat12),
            (false, 4085, FatType::Fat16),
            (false, 65524, FatType::Fat16),
            (true, 65525, FatType::Fat32),
            (true, 1 << 20, FatType::Fat32),
        ] {
            let b = BootSector::read(&sector(fat32, 8200, clusters)).unwrap();
            assert_eq!((b.clusters, b.fat_type), (u64::from(clusters), want), "{clusters}");
            assert_eq!(FatType::of_clusters(u64::from(clusters)), want);
        }
    }

    /// A layout that is not its count's type is refused, whichever way round: the specification
    /// and Linux would read it as different file systems.
    #[test]
    fn a_layout_against_the_cluster_count_is_refused() {
        for (fat32, clusters) in [(true, 65524), (true, 4085), (false, 65525)] {
            let e = BootSector::read(&sector(fat32, 8200, clusters)).unwrap_err();
            assert_eq!(
                e,
                BootSectorError::Mixed {
                    clusters: u64::from(clusters),
                    fat32_layout: fat32
                }
            );
        }
        let e = BootSector::read(&sector(true, 8200, 65524)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a BPB laid out for FAT32 with 65524 clusters, which make a FAT16"
        );
    }

    #[test]
    fn the_regions_follow_from_the_bpb() {
        let b = BootSector::read(&sector(false, 20, 5000)).unwrap();
        assert_eq!(
            (b.fat_start(0), b.fat_start(1), b.fat_bytes()),
            (512, 21 * 512, 20 * 512)
        );
        assert_eq!((b.root_start(), b.root_bytes()), (41 * 512, 32 * 512));
        assert_eq!((b.data_start(), b.cluster_bytes()), (73 * 512, 512));
        assert_eq!((b.root_cluster, b.fsinfo_sector, b.backup_boot_sector), (0, 0, 0));
        let b = BootSector::read(&sector(true, 600, 70000)).unwrap();
        assert_eq!(
            (b.root_start(), b.root_bytes(), b.data_start()),
            (1232 * 512, 0, 1232 * 512)
        );
        assert_eq!(b.fat_bytes(), 600 * 512);
        assert_eq!((b.root_cluster, b.fsinfo_sector, b.backup_boot_sector), (2, 1, 6));
    }

    /// The sticks bootbench-image builds read as the `fatfs` crate reads them: FAT16 at 32 MiB,
    /// FAT32 at 64 MiB.
    #[test]
    fn built_sticks_read_as_fatfs_reads_them() {
        use crate::usb;
        for (size, want) in [(32u64 << 20, FatType::Fat16), (64 << 20, FatType::Fat32)] {
            let inputs = usb::Inputs {
                loader: usb::Loader::SystemdBoot(b"MZ fake systemd-boot"),
                vmlinuz: b"fake kernel",
                initrd: b"fake initrd",
                config: b"{}",
                append: "",
                size,
            };
            let mut disk = usb::build(&inputs, &usb::Bios::Off).unwrap();
            let start = usize::try_from(usb::PART_START_LBA * 512).unwrap();
            let b = BootSector::read(&disk[start..]).unwrap();
            assert_eq!(b.fat_type, want, "{size}");
            let part = &mut disk[start..start + usize::try_from(b.total_sectors * 512).unwrap()];
            let fs = fatfs::FileSystem::new(std::io::Cursor::new(part), fatfs::FsOptions::new()).unwrap();
            let theirs = match fs.fat_type() {
                fatfs::FatType::Fat12 => FatType::Fat12,
                fatfs::FatType::Fat16 => FatType::Fat16,
                fatfs::FatType::Fat32 => FatType::Fat32,
            };
            assert_eq!(theirs, b.fat_type, "{size}");
        }
    }

    #[test]
    fn what_is_no_fat_is_refused() {
        assert_eq!(BootSector::read(&[0u8; 100]), Err(BootSectorError::Short { len: 100 }));
        assert_eq!(BootSector::read(&[0u8; 512]), Err(BootSectorError::NoGeometry));
        for (at, what) in [
            (0x0B, "bytes per sector"),
            (0x0D, "sectors per cluster"),
            (0x10, "FATs"),
        ] {
            let mut s = sector(false, 20, 5000);
            s[at] = 0;
            s[at + 1] = if at == 0x0B { 0 } else { s[at + 1] };
            assert_eq!(BootSector::read(&s), Err(BootSectorError::NoGeometry), "{what}");
        }
        let mut s = sector(false, 20, 5000);
        s[0x20..0x24].copy_from_slice(&10u32.to_le_bytes());
        assert_eq!(BootSector::read(&s), Err(BootSectorError::Geometry));
        // 5000 FAT16 entries and the two reserved take 10004 B: 20 sectors, not 19.
        assert!(BootSector::read(&sector(false, 20, 5000)).is_ok());
        assert_eq!(
            BootSector::read(&sector(false, 19, 5000)),
            Err(BootSectorError::FatTooSmall)
        );
    }
}
