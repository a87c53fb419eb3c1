use super::*;
use alloc::vec;

/// Sense data as libata's `ata_gen_passthru_sense` builds it for a
/// successful 48-bit command with CK_COND: descriptor format, RECOVERED
/// ERROR, ATA PASS-THROUGH INFORMATION AVAILABLE, one ATA Status Return
/// descriptor with EXTEND set and the LBA registers of `lba`.
fn sense_with(lba: u64, extend: bool, status: u8, error: u8) -> [u8; 22] {
    let b = |n: u32| u8::try_from(lba >> n & 0xff).unwrap();
    [
        0x72,
        0x01,
        0x00,
        0x1d,
        0,
        0,
        0,
        14,
        0x09,
        0x0c,
        u8::from(extend),
        error,
        0,
        0,
        b(24),
        b(0),
        b(32),
        b(8),
        b(40),
        b(16),
        0x40,
        status,
    ]
}

#[test]
fn the_native_max_lba_from_descriptor_sense() {
    // QEMU's 64 MiB ide-hd: nb_sectors - 1.
    assert_eq!(ata_sense_lba48(&sense_with(131_071, true, 0x50, 0)), Ok(131_071));
    let big = 0x0000_a1b2_c3d4_e5f6;
    assert_eq!(ata_sense_lba48(&sense_with(big, true, 0x50, 0)), Ok(big));
    assert_eq!(
        ata_sense_lba48(&sense_with(5, false, 0x50, 0)),
        Err(CapacityError::Not48Bit)
    );
    let refused = ata_sense_lba48(&sense_with(0, true, 0x51, 0x04)).unwrap_err();
    assert_eq!(
        refused,
        CapacityError::DeviceError {
            status: 0x51,
            error: 0x04
        }
    );
    assert!(refused.to_string().ends_with(": aborted)"), "{refused}");
    assert_eq!(ata_sense_lba48(&[]), Err(CapacityError::NoRegisters));
    assert_eq!(
        ata_sense_lba48(&[0x72, 0, 0, 0, 0, 0, 0, 0]),
        Err(CapacityError::NoRegisters)
    );
    // A descriptor cut short by the buffer.
    assert_eq!(
        ata_sense_lba48(&sense_with(1, true, 0x50, 0)[..20]),
        Err(CapacityError::NoRegisters)
    );
}

#[test]
fn the_native_max_lba_from_fixed_sense() {
    let mut s = [0u8; 18];
    s[0] = 0x70;
    s[2] = 0x01;
    s[4] = 0x50; // status
    s[7] = 10;
    s[8] = 0x80; // EXTEND, upper bytes zero
    s[9..12].copy_from_slice(&[0xff, 0xff, 0x01]);
    s[12] = 0x00;
    s[13] = 0x1d;
    assert_eq!(ata_sense_lba48(&s), Ok(131_071));
    s[8] |= 0x20;
    assert_eq!(ata_sense_lba48(&s), Err(CapacityError::Not48Bit));
    s[4] = 0x51;
    assert!(matches!(ata_sense_lba48(&s), Err(CapacityError::DeviceError { .. })));
    s[13] = 0x00;
    assert_eq!(ata_sense_lba48(&s), Err(CapacityError::NoRegisters));
}

fn put_word(page: &mut [u8], w: usize, v: u16) {
    page[2 * w..2 * w + 2].copy_from_slice(&v.to_le_bytes());
}

/// IDENTIFY DEVICE as QEMU's hw/ide/core.c `ide_identify` fills it for a
/// 64 MiB disk: word 83 = 0x7400 (48-bit), words 60-61 and 100-103 =
/// nb_sectors, word 106 = 0x6000 (no logical sector size given).
fn qemu_identify() -> [u8; 512] {
    let mut p = [0u8; 512];
    put_word(&mut p, 60, 0);
    put_word(&mut p, 61, 2);
    put_word(&mut p, 83, 0x7400);
    put_word(&mut p, 100, 0);
    put_word(&mut p, 101, 2);
    put_word(&mut p, 106, 0x6000);
    p
}

#[test]
fn the_visible_capacity_from_identify() {
    let mut p = qemu_identify();
    assert_eq!(
        ata_visible(&p),
        Ok(AtaVisible {
            sectors: 131_072,
            lba48: true,
            sector_bytes: 512
        })
    );
    put_word(&mut p, 102, 1); // 2^32 + 131072 sectors in words 100-103
    assert_eq!(ata_visible(&p).unwrap().sectors, (1 << 32) + 131_072);
    put_word(&mut p, 83, 0x3400); // word 83 not valid: 28-bit only
    let v = ata_visible(&p).unwrap();
    assert_eq!((v.sectors, v.lba48), (131_072, false));
    put_word(&mut p, 106, 0x5000); // logical sector size in words 117-118
    put_word(&mut p, 117, 2048);
    assert_eq!(ata_visible(&p).unwrap().sector_bytes, 4096);
    put_word(&mut p, 117, 5);
    assert!(matches!(ata_visible(&p), Err(CapacityError::Invalid(..))));
    assert_eq!(
        ata_visible(&p[..100]),
        Err(CapacityError::Short { need: 512, got: 100 })
    );
}

#[test]
fn the_dco_page() {
    let mut p = [0u8; 512];
    put_word(&mut p, 0, 2);
    p[6..14].copy_from_slice(&0x1_0000_0000u64.to_le_bytes());
    assert_eq!(ata_dco_max_lba(&p), Ok(0x1_0000_0000));
    p[510] = 0xa5;
    let sum = p[..511].iter().fold(0u8, |s, &b| s.wrapping_add(b));
    p[511] = 0u8.wrapping_sub(sum);
    assert_eq!(ata_dco_max_lba(&p), Ok(0x1_0000_0000));
    p[511] ^= 1;
    assert!(matches!(ata_dco_max_lba(&p), Err(CapacityError::Checksum(_))));
    let zero = [0u8; 512];
    assert!(matches!(ata_dco_max_lba(&zero), Err(CapacityError::Invalid(..))));
    assert!(matches!(ata_dco_max_lba(&zero[..10]), Err(CapacityError::Short { .. })));
}

#[test]
fn nvme_identify_fields() {
    let mut ctrl = vec![0u8; 4096];
    ctrl[280..288].copy_from_slice(&1_000_204_886_016u64.to_le_bytes());
    ctrl[296..304].copy_from_slice(&500_000_000u64.to_le_bytes());
    assert_eq!(nvme_ctrl_capacity(&ctrl), Ok((1_000_204_886_016, 500_000_000)));
    ctrl[295] = 1; // above 2^64: saturated
    assert_eq!(nvme_ctrl_capacity(&ctrl).unwrap().0, u64::MAX);
    assert!(nvme_ctrl_capacity(&ctrl[..300]).is_err());

    let mut list = vec![0u8; 4096];
    for (i, id) in [1u32, 2, 0, 5].iter().enumerate() {
        list[4 * i..4 * i + 4].copy_from_slice(&id.to_le_bytes());
    }
    assert_eq!(nvme_ns_list(&list), [1, 2]);
    assert!(nvme_ns_list(&[]).is_empty());

    // QEMU's namespace of a 64 MiB drive: NSZE 131072, LBA format 0 of 512 bytes.
    let mut ns = vec![0u8; 4096];
    ns[0..8].copy_from_slice(&131_072u64.to_le_bytes());
    ns[128 + 2] = 9;
    assert_eq!(nvme_ns_bytes(&ns), Ok(64 << 20));
    ns[25] = 1; // two formats; the second, 4096 bytes, in use
    ns[26] = 1;
    ns[128 + 4 + 2] = 12;
    assert_eq!(nvme_ns_bytes(&ns), Ok(131_072 * 4096));
    ns[26] = 2; // beyond NLBAF
    assert!(matches!(nvme_ns_bytes(&ns), Err(CapacityError::Invalid(..))));
    ns[26] = 1;
    ns[128 + 4 + 2] = 3;
    assert!(matches!(nvme_ns_bytes(&ns), Err(CapacityError::Invalid(..))));
    ns[128 + 4 + 2] = 12;
    ns[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(nvme_ns_bytes(&ns), Err(CapacityError::Invalid(..))));
    // 17 formats: FLBAS bits 6:5 extend the index.
    let mut wide = vec![0u8; 4096];
    wide[0] = 1;
    wide[25] = 16;
    wide[26] = 0x20; // index 16
    wide[128 + 4 * 16 + 2] = 12;
    assert_eq!(nvme_ns_bytes(&wide), Ok(4096));
}

#[test]
fn records_of_an_ata_and_an_nvme_disk() {
    let v = ata_visible(&qemu_identify()).unwrap();
    let h = ata_hidden(v, Ok(131_071), Err("DEVICE CONFIGURATION IDENTIFY: aborted".into()));
    assert_eq!(
        (h.visible_bytes, h.native_bytes, h.hidden_bytes, h.dco_bytes),
        (64 << 20, Some(64 << 20), Some(0), None)
    );
    assert_eq!(h.error.as_deref(), Some("DEVICE CONFIGURATION IDENTIFY: aborted"));
    let h = ata_hidden(v, Ok(131_071 + 2048), Ok(200_000 - 1));
    assert_eq!(
        (h.hidden_bytes, h.dco_bytes, h.error),
        (Some(1 << 20), Some(200_000 * 512), None)
    );
    let h = ata_hidden(v, Err("no".into()), Err("nor".into()));
    assert_eq!((h.native_bytes, h.hidden_bytes), (None, None));
    assert_eq!(h.error.as_deref(), Some("no; nor"));

    let h = nvme_hidden(64 << 20, Ok((0, 0)), Vec::new());
    assert_eq!(
        (h.native_bytes, h.hidden_bytes, h.unallocated_bytes),
        (None, None, None)
    );
    assert!(h.error.unwrap().starts_with("TNVMCAP is 0"));
    let h = nvme_hidden(
        800,
        Ok((1000, 150)),
        vec!["Identify Namespace 2: NVMe status 0xb".into()],
    );
    assert_eq!(
        (h.native_bytes, h.hidden_bytes, h.unallocated_bytes),
        (Some(1000), Some(200), Some(150))
    );
    assert_eq!(h.error.as_deref(), Some("Identify Namespace 2: NVMe status 0xb"));
    let s = summary("/dev/nvme0n1", &h);
    assert!(s.contains("1000 native, 200 hidden, 150 unallocated"), "{s}");
}
