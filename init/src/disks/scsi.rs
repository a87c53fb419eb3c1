//! The SCSI and ATA commands bootbench sends to a disk through SG_IO
//! ([`crate::sys::sgio::command`]), all of which only read: ATA IDENTIFY
//! DEVICE wrapped in ATA PASS-THROUGH(16), which libata's SCSI-ATA
//! translation answers for SATA disks whose serial sysfs lacks; INQUIRY of
//! a vital product data page (the unit serial number, page 0x80) of a SCSI
//! disk whose `device/vpd_pg80` the kernel did not fill; SMART through ATA
//! PASS-THROUGH; and LOG SENSE. Besides those, the self-test commands
//! (`disks::selftest`), which move no data: SMART EXECUTE OFF-LINE
//! IMMEDIATE and SEND DIAGNOSTIC with a background self-test code (and
//! the logs that read their results).
//! PASS-THROUGH; READ NATIVE MAX ADDRESS EXT and DEVICE CONFIGURATION
//! IDENTIFY (hidden capacity); and LOG SENSE.

use std::fs::File;

use nix::errno::Errno;

use crate::sys::sgio::{command, SENSE};

/// The ATA PASS-THROUGH(16) command block for IDENTIFY DEVICE (0xEC):
/// protocol 4 (PIO data-in), T_DIR from the device, BYTE_BLOCK set and
/// T_LENGTH 2 (the transfer length is in the sector count: 1 block of 512).
pub const IDENTIFY_CDB: [u8; 16] = [
    0x85,   // ATA PASS-THROUGH(16)
    4 << 1, // protocol: PIO data-in; not extended
    0x0e,   // off_line 0, ck_cond 0, t_type 0, t_dir 1, byte_block 1, t_length 2
    0,
    0, // features
    0,
    1, // sector count: 1
    0,
    0,
    0,
    0,
    0,
    0,    // LBA
    0,    // device
    0xec, // command: IDENTIFY DEVICE
    0,    // control
];

/// The INQUIRY command block (SPC-4 6.6) for vital product data page
/// `page` (EVPD set), allocation length `len`.
pub fn inquiry_vpd_cdb(page: u8, len: u16) -> [u8; 6] {
    let [hi, lo] = len.to_be_bytes();
    [0x12, 0x01, page, hi, lo, 0]
}

/// Send ATA IDENTIFY DEVICE to the disk open as `f` (read-only suffices for
/// root, who holds CAP_SYS_RAWIO); the 512-byte reply, or the errno (EIO
/// when the device answered with an error status).
pub fn ata_identify(f: &File) -> Result<[u8; 512], Errno> {
    let mut data = [0u8; 512];
    let mut sense = [0u8; SENSE];
    let a = command(f, &IDENTIFY_CDB, Some(&mut data), &mut sense)?;
    if !a.good() {
        return Err(Errno::EIO);
    }
    Ok(data)
}

/// INQUIRY of vital product data page `page` from the SCSI device open as
/// `f`: the page as the device returned it (its 4-byte header and at most
/// 251 bytes more; a page is often shorter than asked for), or the errno
/// (EIO when the device answered with an error status, such as a page it
/// does not have).
pub fn inquiry_vpd(f: &File, page: u8) -> Result<Vec<u8>, Errno> {
    let mut data = [0u8; 255];
    let mut sense = [0u8; SENSE];
    let a = command(f, &inquiry_vpd_cdb(page, 255), Some(&mut data), &mut sense)?;
    if a.status != 0 || a.host_status != 0 || a.driver_status != 0 {
        return Err(Errno::EIO);
    }
    // resid: what did not come (a short reply); never more than was asked.
    let n = usize::try_from(a.resid)
        .ok()
        .and_then(|r| data.len().checked_sub(r))
        .ok_or(Errno::EIO)?;
    if n < 4 || data[1] != page {
        return Err(Errno::EIO);
    }
    Ok(data[..n].to_vec())
}

/// SMART's feature codes (ATA8-ACS 7.52): READ DATA, READ THRESHOLDS
/// (obsolete since ACS but answered by disks and QEMU), RETURN STATUS.
pub const SMART_READ_DATA: u8 = 0xd0;
/// See [`SMART_READ_DATA`].
pub const SMART_READ_THRESHOLDS: u8 = 0xd1;
/// See [`SMART_READ_DATA`].
pub const SMART_RETURN_STATUS: u8 = 0xda;

/// The ATA PASS-THROUGH(16) command block for SMART (command B0h, LBA
/// mid/high 4Fh/C2h, the key every SMART command carries) with `feature`:
/// READ DATA and READ THRESHOLDS as PIO data-in of one 512-byte block
/// (like [`IDENTIFY_CDB`]); RETURN STATUS as non-data (protocol 3) with
/// CK_COND set, so the device's result registers come back in the sense
/// data (SAT-3 12.2.2.6). Every one of them only reads.
pub fn smart_cdb(feature: u8) -> [u8; 16] {
    let (protocol, flags, count) = if feature == SMART_RETURN_STATUS {
        // ck_cond 1 (bit 5), t_dir/byte_block/t_length 0: no data.
        (3u8, 0x20u8, 0u8)
    } else {
        (4, 0x0e, 1)
    };
    [
        0x85,
        protocol << 1,
        flags,
        0,
        feature, // features 7:0
        0,
        count, // sector count
        0,
        0, // LBA low
        0,
        0x4f, // LBA mid
        0,
        0xc2, // LBA high
        0,    // device
        0xb0, // command: SMART
        0,
    ]
}

/// SMART's self-test feature codes: EXECUTE OFF-LINE IMMEDIATE (the
/// subcommand in LBA low: 01h short, 02h extended, 03h conveyance, 7Fh
/// abort) and READ LOG (the log address in LBA low).
pub const SMART_EXECUTE_OFFLINE: u8 = 0xd4;
/// See [`SMART_EXECUTE_OFFLINE`].
pub const SMART_READ_LOG: u8 = 0xd5;

/// [`smart_cdb`] with `lba_low` (EXECUTE OFF-LINE IMMEDIATE's subcommand,
/// READ LOG's log address); EXECUTE OFF-LINE IMMEDIATE goes as non-data
/// (protocol 3), READ LOG as PIO data-in of one block.
pub fn smart_cdb_lba(feature: u8, lba_low: u8) -> [u8; 16] {
    let mut c = smart_cdb(feature);
    if feature == SMART_EXECUTE_OFFLINE {
        c[1] = 3 << 1;
        c[2] = 0;
        c[6] = 0;
    }
    c[8] = lba_low;
    c
}

/// The ATA PASS-THROUGH(16) command block for READ LOG EXT (2Fh, 48-bit:
/// EXTEND set) of page `page` of log `log`, one 512-byte block, PIO
/// data-in.
pub fn read_log_ext_cdb(log: u8, page: u16) -> [u8; 16] {
    read_log_ext_blocks_cdb(log, page, 1)
}

/// READ LOG EXT (ACS-4 7.24) of `count` 512-byte pages of log `log` from
/// page `page`, through ATA PASS-THROUGH(16) (SAT-4 12.2.2.3): protocol 4
/// (PIO data-in) with EXTEND, T_DIR from the device, BYTE_BLOCK blocks,
/// T_LENGTH in the sector count (15:8 in byte 5, 7:0 in byte 6).
pub fn read_log_ext_blocks_cdb(log: u8, page: u16, count: u16) -> [u8; 16] {
    let [hi, lo] = page.to_be_bytes();
    let [chi, clo] = count.to_be_bytes();
    [
        0x85,
        4 << 1 | 1, // PIO data-in, extended
        0x0e,
        0,
        0, // features
        chi,
        clo, // count: blocks
        0,
        log, // LBA 7:0: the log address
        hi,  // LBA 39:32: page 15:8
        lo,  // LBA 15:8: page 7:0
        0,
        0,
        0,
        0x2f, // READ LOG EXT
        0,
    ]
}

/// SEND DIAGNOSTIC (SPC-4 6.32) with self-test code `code` in bits 7:5 of
/// byte 1 (001b background short, 010b background extended, 100b abort the
/// background self-test), SELFTEST 0, no parameter list.
pub fn send_diagnostic_cdb(code: u8) -> [u8; 6] {
    [0x1d, (code & 0x07) << 5, 0, 0, 0, 0]
}
/// The ATA PASS-THROUGH(16) command block for READ NATIVE MAX ADDRESS EXT
/// (27h, ACS-2 7.32): non-data (protocol 3), EXTEND set (48-bit
/// registers), CK_COND set so the registers, which hold the last native
/// LBA, come back in the sense data; DEVICE bit 6 (LBA) set, as the
/// command requires (QEMU's IDE answers in CHS without it). It only
/// reads: bootbench never sends SET MAX ADDRESS (37h/F9h), which would
/// change the Host Protected Area.
pub const READ_NATIVE_MAX_EXT_CDB: [u8; 16] = [
    0x85,
    3 << 1 | 1, // non-data, extended
    0x20,       // ck_cond; no transfer
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0x40, // device: LBA
    0x27, // command: READ NATIVE MAX ADDRESS EXT
    0,
];

/// The ATA PASS-THROUGH(16) command block for DEVICE CONFIGURATION
/// IDENTIFY (B1h with feature C2h, ACS-2 7.10.4): PIO data-in of one
/// 512-byte block, like [`IDENTIFY_CDB`]. Only feature C2h is ever sent:
/// C0h (RESTORE), C1h (FREEZE LOCK) and C3h (SET) change the device.
pub const DCO_IDENTIFY_CDB: [u8; 16] = [
    0x85,
    4 << 1, // PIO data-in; not extended
    0x0e,   // t_dir from the device, byte_block, t_length in the count
    0,
    0xc2, // features: DEVICE CONFIGURATION IDENTIFY
    0,
    1, // sector count: 1
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0xb1, // command: DEVICE CONFIGURATION
    0,
];

/// The SCSI LOG SENSE(10) command block for `page` (cumulative values,
/// PC = 01b), at most `len` bytes (SPC-4 6.6).
pub fn log_sense_cdb(page: u8, len: u16) -> [u8; 10] {
    let l = len.to_be_bytes();
    [0x4d, 0, 0x40 | (page & 0x3f), 0, 0, 0, 0, l[0], l[1], 0]
}

/// LOG SENSE (SPC-4 6.8) of page `page` subpage `sub`: PC 01b (cumulative
/// values), no PPC, no saved parameters, parameter pointer 0.
pub fn log_sense_sub_cdb(page: u8, sub: u8, len: u16) -> [u8; 10] {
    let mut c = log_sense_cdb(page, len);
    c[3] = sub;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identify_cdb_fields() {
        assert_eq!(IDENTIFY_CDB[0], 0x85);
        assert_eq!(IDENTIFY_CDB[1] >> 1 & 0xf, 4, "PIO data-in");
        assert_eq!(IDENTIFY_CDB[2] & 0x08, 0x08, "t_dir: from the device");
        assert_eq!(IDENTIFY_CDB[2] & 0x04, 0x04, "byte_block: blocks");
        assert_eq!(IDENTIFY_CDB[2] & 0x03, 2, "t_length in the sector count");
        assert_eq!(IDENTIFY_CDB[6], 1);
        assert_eq!(IDENTIFY_CDB[14], 0xec);
    }

    #[test]
    fn inquiry_vpd_cdb_fields() {
        assert_eq!(inquiry_vpd_cdb(0x80, 255), [0x12, 0x01, 0x80, 0x00, 0xff, 0x00]);
        assert_eq!(inquiry_vpd_cdb(0x83, 0x1234), [0x12, 0x01, 0x83, 0x12, 0x34, 0x00]);
    }

    /// FARM's commands only read. ATA: READ LOG EXT (2Fh) of the General
    /// Purpose Log Directory (log 00h, page 0, one block) and of log A6h
    /// (from page 0, a count of blocks), PIO data-in, 48-bit; no feature.
    /// SCSI: LOG SENSE (4Dh) of page 00h subpage FFh (the supported pages
    /// and subpages) and of page 3Dh subpage 03h, cumulative values (PC
    /// 01b), SP 0.
    #[test]
    fn farm_cdbs_only_read() {
        assert_eq!(
            read_log_ext_blocks_cdb(0x00, 0, 1),
            [0x85, 0x09, 0x0e, 0, 0, 0, 1, 0, 0x00, 0, 0, 0, 0, 0, 0x2f, 0]
        );
        assert_eq!(read_log_ext_blocks_cdb(0x00, 0, 1), read_log_ext_cdb(0x00, 0));
        assert_eq!(
            read_log_ext_blocks_cdb(0xa6, 0x0120, 0x0102),
            [0x85, 0x09, 0x0e, 0, 0, 0x01, 0x02, 0, 0xa6, 0x01, 0x20, 0, 0, 0, 0x2f, 0]
        );
        assert_eq!(
            log_sense_sub_cdb(0x00, 0xff, 1024),
            [0x4d, 0, 0x40, 0xff, 0, 0, 0, 0x04, 0x00, 0]
        );
        assert_eq!(
            log_sense_sub_cdb(0x3d, 0x03, 0xfffc),
            [0x4d, 0, 0x7d, 0x03, 0, 0, 0, 0xff, 0xfc, 0]
        );
    }

    #[test]
    fn smart_cdb_fields() {
        for f in [SMART_READ_DATA, SMART_READ_THRESHOLDS] {
            let c = smart_cdb(f);
            assert_eq!((c[0], c[1] >> 1 & 0xf, c[2]), (0x85, 4, 0x0e), "PIO data-in, 1 block");
            assert_eq!((c[4], c[6], c[10], c[12], c[14]), (f, 1, 0x4f, 0xc2, 0xb0));
        }
        let c = smart_cdb(SMART_RETURN_STATUS);
        assert_eq!(c[1] >> 1 & 0xf, 3, "non-data");
        assert_eq!(c[2], 0x20, "ck_cond: the registers come back; no transfer");
        assert_eq!((c[4], c[6], c[10], c[12], c[14]), (0xda, 0, 0x4f, 0xc2, 0xb0));
        assert_eq!(log_sense_cdb(0x0d, 512), [0x4d, 0, 0x4d, 0, 0, 0, 0, 2, 0, 0]);
    }

    /// The hidden-capacity commands only read: READ NATIVE MAX ADDRESS EXT
    /// (27h) and DEVICE CONFIGURATION (B1h) with feature IDENTIFY (C2h)
    /// alone; never SET MAX (37h, F9h) nor DCO RESTORE/FREEZE/SET (C0h,
    /// C1h, C3h).
    #[test]
    fn hidden_capacity_cdbs_only_read() {
        let c = READ_NATIVE_MAX_EXT_CDB;
        assert_eq!(
            (c[0], c[1] >> 1 & 0xf, c[1] & 1, c[2]),
            (0x85, 3, 1, 0x20),
            "non-data, 48-bit, ck_cond"
        );
        assert_eq!((c[13], c[14]), (0x40, 0x27));
        assert!(c[3..13].iter().all(|&b| b == 0), "no features, count or LBA");
        let d = DCO_IDENTIFY_CDB;
        assert_eq!((d[0], d[1] >> 1 & 0xf, d[2]), (0x85, 4, 0x0e), "PIO data-in, 1 block");
        assert_eq!((d[4], d[6], d[14]), (0xc2, 1, 0xb1));
        for cdb in [c, d] {
            assert!(![0x37, 0xf9].contains(&cdb[14]));
        }
    }

    #[test]
    fn self_test_cdbs() {
        let c = smart_cdb_lba(SMART_EXECUTE_OFFLINE, 1);
        assert_eq!((c[0], c[1], c[2], c[6]), (0x85, 3 << 1, 0, 0), "non-data, no transfer");
        assert_eq!((c[4], c[8], c[10], c[12], c[14]), (0xd4, 1, 0x4f, 0xc2, 0xb0));
        assert_eq!(smart_cdb_lba(SMART_EXECUTE_OFFLINE, 0x7f)[8], 0x7f);
        let c = smart_cdb_lba(SMART_READ_LOG, 6);
        assert_eq!((c[1] >> 1 & 0xf, c[2], c[6]), (4, 0x0e, 1), "PIO data-in, 1 block");
        assert_eq!((c[4], c[8], c[14]), (0xd5, 6, 0xb0));
        let c = read_log_ext_cdb(7, 0x0102);
        assert_eq!(
            (c[1], c[2], c[6], c[8], c[9], c[10], c[14]),
            (9, 0x0e, 1, 7, 1, 2, 0x2f)
        );
        assert_eq!(send_diagnostic_cdb(1), [0x1d, 0x20, 0, 0, 0, 0]);
        assert_eq!(send_diagnostic_cdb(2)[1], 0x40);
        assert_eq!(send_diagnostic_cdb(4)[1], 0x80);
    }

    #[test]
    fn a_regular_file_refuses_or_fails_cleanly() {
        // A regular file: SG_IO is not supported there (ENOTTY/EINVAL), and
        // the call must return an errno, never garbage.
        let p = std::env::temp_dir().join(format!("bootbench-scsi-{}", std::process::id()));
        std::fs::write(&p, [0u8; 4096]).unwrap();
        let f = File::open(&p).unwrap();
        assert!(ata_identify(&f).is_err());
        assert!(inquiry_vpd(&f, 0x80).is_err());
        std::fs::remove_file(&p).unwrap();
    }
}
