//! FARM logs built byte by byte from smartmontools' farmcmds.h layout.

use super::*;

const VALID: u64 = 0xc0 << 56;

/// Write qword `q` of ATA page `page`, supported and valid.
fn put(log: &mut [u8], page: usize, q: usize, v: u64) {
    put_raw(log, page, q, VALID | v);
}

fn put_raw(log: &mut [u8], page: usize, q: usize, raw: u64) {
    let at = page * ATA_PAGE_BYTES + q * 8;
    log[at..at + 8].copy_from_slice(&raw.to_le_bytes());
}

/// Four ASCII characters as an ATA FARM qword holds them: in its low 32
/// bits, each pair of bytes swapped (ATA IDENTIFY's string order).
fn ata_chars(s: &[u8]) -> u64 {
    u64::from(u32::from_le_bytes([s[1], s[0], s[3], s[2]]))
}

/// A used drive: 26,304 power-on hours.
fn ata_log() -> Vec<u8> {
    let mut l = vec![0u8; 6 * ATA_PAGE_BYTES];
    for (q, v) in [(0, SIGNATURE), (1, 4), (2, 6), (3, 6), (4, 98304), (5, 16384), (6, 24)] {
        put(&mut l, 0, q, v);
    }
    for page in 1..6 {
        put(&mut l, page, 0, page as u64);
    }
    put(&mut l, 1, 2, ata_chars(b"ZL2A"));
    put(&mut l, 1, 3, ata_chars(b"BCDE"));
    put(&mut l, 1, 4, 0x5000_c500);
    put(&mut l, 1, 5, 0xb123_4567);
    put(&mut l, 1, 14, ata_chars(b"SN04"));
    for (i, c) in [b"ST80", b"00NM", b"000A"].iter().enumerate() {
        put(&mut l, 1, 32 + i, ata_chars(*c));
    }
    put(&mut l, 1, 42, 2);
    put(&mut l, 1, 43, 0);
    put(&mut l, 1, 45, u64::from(u32::from_le_bytes(*b"2314")));
    let drive = [
        (7, 15_628_053_168),
        (11, 16),
        (19, 26_304),
        (20, 26_100),
        (21, 25_000),
        (22, 1_234),
        (23, 88),
        (24, 90),
        (25, 7_100),
    ];
    for (q, v) in drive {
        put(&mut l, 1, q, v);
    }
    for (q, v) in [
        (3, 1_000),
        (4, 2_000),
        (5, 300),
        (6, 400),
        (8, 5_000_000),
        (9, 6_000_000),
    ] {
        put(&mut l, 2, q, v);
    }
    for (q, v) in [(2, 1), (3, 2), (4, 8), (5, 9), (6, 3), (7, 4), (9, 5), (19, 6)] {
        put(&mut l, 3, q, v);
    }
    for (q, v) in [(2, 31), (3, 55), (4, 17), (13, 60), (14, 5)] {
        put(&mut l, 4, q, v);
    }
    for (q, v) in [(184, 11), (187, 12), (190, 13), (697, 0), (1109, 14)] {
        put(&mut l, 5, q, v);
    }
    l
}

#[test]
fn ata_fields_come_from_their_page_and_qword() {
    let f = parse_ata_farm(&ata_log()).unwrap();
    assert_eq!(f.transport, Some(FarmTransport::Ata));
    assert_eq!(
        (f.major_version, f.minor_version, f.pages_supported),
        (Some(4), Some(6), Some(6))
    );
    assert_eq!(
        (f.log_size_bytes, f.page_size_bytes, f.heads_supported),
        (Some(98304), Some(16384), Some(24))
    );
    assert_eq!(f.serial.as_deref(), Some("ZL2ABCDE"));
    assert_eq!(f.model.as_deref(), Some("ST8000NM000A"));
    assert_eq!(f.firmware.as_deref(), Some("SN04"));
    assert_eq!(f.wwn, Some(0xc500_5000_4567_b123));
    assert_eq!((f.capacity_sectors, f.heads), (Some(15_628_053_168), Some(16)));
    assert_eq!(
        (f.power_on_hours, f.spindle_power_on_hours, f.head_flight_hours),
        (Some(26_304), Some(26_100), Some(25_000))
    );
    assert_eq!(
        (f.head_load_events, f.power_cycles, f.hardware_resets, f.spin_up_time_ms),
        (Some(1_234), Some(88), Some(90), Some(7_100))
    );
    assert_eq!(
        (f.read_commands, f.write_commands, f.random_reads, f.random_writes),
        (Some(1_000), Some(2_000), Some(300), Some(400))
    );
    assert_eq!((f.sectors_written, f.sectors_read), (Some(5_000_000), Some(6_000_000)));
    assert_eq!(
        (
            f.unrecoverable_read_errors,
            f.unrecoverable_write_errors,
            f.reallocated_sectors
        ),
        (Some(1), Some(2), Some(8))
    );
    assert_eq!(
        (
            f.read_recovery_attempts,
            f.mechanical_start_retries,
            f.reallocation_candidates
        ),
        (Some(9), Some(3), Some(4))
    );
    assert_eq!((f.interface_crc_errors, f.uncorrectable_errors), (Some(5), Some(6)));
    assert_eq!(
        (f.temperature_c, f.highest_temperature_c, f.lowest_temperature_c),
        (Some(31), Some(55), Some(17))
    );
    assert_eq!(
        (f.max_operating_temperature_c, f.min_operating_temperature_c),
        (Some(60), Some(5))
    );
    assert_eq!(
        (f.error_rate_raw, f.seek_error_rate_raw, f.high_priority_unload_events),
        (Some(11), Some(12), Some(13))
    );
    assert_eq!(
        (f.helium_pressure_tripped, f.lbas_corrected_by_parity),
        (Some(false), Some(14))
    );
}

#[test]
fn recording_depopulation_and_assembly_date() {
    let f = parse_ata_farm(&ata_log()).unwrap();
    let want = (Some(FarmRecording::Cmr), Some(false), Some("2314"));
    assert_eq!((f.recording, f.depopulated, f.date_of_assembly.as_deref()), want);
    let f = parse_scsi_farm(&scsi_log()).unwrap();
    let want = (Some(FarmRecording::Smr), Some(true), Some("2207"));
    assert_eq!((f.recording, f.depopulated, f.date_of_assembly.as_deref()), want);
}

#[test]
fn the_hours_mismatch_of_a_reset_smart_is_caught() {
    let f = parse_ata_farm(&ata_log()).unwrap();
    let msg = power_on_hours_disagree(12, f.power_on_hours.unwrap());
    assert_eq!(
        msg.as_deref(),
        Some("power-on hours disagree: SMART 12 h, FARM 26,304 h")
    );
}

#[test]
fn hours_disagree_only_beyond_both_tolerances() {
    // (SMART, FARM, disagree)
    let cases = [
        (26_304, 26_304, false),
        (100, 110, false),     // 10 h: within 24 h
        (100, 130, true),      // 30 h and 23%
        (1_000, 1_050, false), // 50 h but under 10%
        (0, 24, false),
        (0, 25, true),
        (30_000, 26_000, true),
        (u64::MAX, 0, true),
    ];
    for (smart, farm, want) in cases {
        assert_eq!(power_on_hours_disagree(smart, farm).is_some(), want, "{smart} {farm}");
    }
}

#[test]
fn thousands_separators() {
    let cases = [
        (0, "0"),
        (999, "999"),
        (1_000, "1,000"),
        (26_304, "26,304"),
        (1_234_567, "1,234,567"),
    ];
    for (n, s) in cases {
        assert_eq!(thousands(n), s);
    }
}

#[test]
fn a_wrong_signature_is_refused() {
    let mut l = ata_log();
    put(&mut l, 0, 0, 0x4641_524d);
    assert_eq!(
        parse_ata_farm(&l),
        Err(FarmError::Signature {
            found: Some(0x4641_524d)
        })
    );
    // The right value without its valid bit is no signature either.
    put_raw(&mut l, 0, 0, (0x80 << 56) | SIGNATURE);
    assert_eq!(parse_ata_farm(&l), Err(FarmError::Signature { found: None }));
}

#[test]
fn a_short_log_is_refused_naming_the_page() {
    let l = ata_log();
    let e = parse_ata_farm(&l[..5 * ATA_PAGE_BYTES + 100]).unwrap_err();
    assert_eq!(
        e,
        FarmError::Short {
            what: "page 5 (reliability statistics)",
            need: 5 * ATA_PAGE_BYTES + 8880,
            got: 5 * ATA_PAGE_BYTES + 100
        }
    );
    assert!(matches!(
        parse_ata_farm(&l[..71]),
        Err(FarmError::Short {
            what: "page 0 (log header)",
            ..
        })
    ));
    assert!(matches!(parse_ata_farm(&[]), Err(FarmError::Short { .. })));
}

#[test]
fn a_page_out_of_place_is_refused() {
    let mut l = ata_log();
    put(&mut l, 3, 0, 4);
    assert_eq!(parse_ata_farm(&l), Err(FarmError::WrongPage { want: 3, got: 4 }));
}

#[test]
fn unsupported_or_invalid_fields_are_absent() {
    // Supported, not valid; valid, not supported; neither; C0h plus
    // another status bit (smartmontools reads only exactly C0h).
    for top in [0x80u64, 0x40, 0x00, 0xc1] {
        let mut l = ata_log();
        put_raw(&mut l, 1, 19, (top << 56) | 26_304);
        put_raw(&mut l, 4, 2, (top << 56) | 31);
        let f = parse_ata_farm(&l).unwrap();
        assert_eq!((f.power_on_hours, f.temperature_c), (None, None), "{top:#x}");
        assert_eq!(f.power_cycles, Some(88));
    }
    assert_eq!(field(VALID | (1 << 55)), Some(1 << 55));
}

/// One SCSI parameter: its header, then `n` big-endian qwords, those in
/// `set` supported and valid.
fn scsi_param(code: u16, n: usize, set: &[(usize, u64)]) -> Vec<u8> {
    let mut qw = vec![0u64; n];
    for &(i, v) in set {
        qw[i] = VALID | v;
    }
    let mut b = code.to_be_bytes().to_vec();
    b.extend_from_slice(&[0, u8::try_from(n * 8).unwrap()]);
    for q in qw {
        b.extend_from_slice(&q.to_be_bytes());
    }
    b
}

fn be_chars(s: &[u8]) -> u64 {
    u64::from(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn scsi_page(params: &[Vec<u8>]) -> Vec<u8> {
    let body: Vec<u8> = params.concat();
    let mut p = vec![0x3d | 0x40, 0x03];
    p.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    p.extend_from_slice(&body);
    p
}

/// Parameters 0-6 as farmcmds.h's SCSI structs size them.
fn scsi_log() -> Vec<u8> {
    let drive = [
        (2, be_chars(b"ZL2A")),
        (3, be_chars(b"BCDE")),
        (4, 0x4567_b123),
        (5, 0x5000_c500),
        (14, be_chars(b"0004")),
        (19, 26_304),
        (23, 40),
        (24, 41),
        (30, be_chars(b"2207")),
    ];
    scsi_page(&[
        scsi_param(0, 9, &[(0, SIGNATURE), (1, 4), (2, 6), (3, 7), (4, 1_000)]),
        scsi_param(1, 31, &drive),
        scsi_param(2, 18, &[(3, 10), (4, 20), (8, 30), (9, 40)]),
        scsi_param(3, 29, &[(2, 1), (3, 2), (6, 3)]),
        // 25.0 °C, 41.7 °C, -5.5 °C in tenths, the low 16 bits signed.
        scsi_param(4, 26, &[(2, 250), (3, 417), (4, 0xffc9), (13, 60), (14, 5)]),
        scsi_param(5, 29, &[(25, 1)]),
        scsi_param(
            6,
            13,
            &[
                (3, be_chars(b"ST12")),
                (4, be_chars(b"000N")),
                (5, be_chars(b"M004")),
                (7, 1),
                (8, 1),
            ],
        ),
    ])
}

#[test]
fn scsi_fields_come_from_their_parameter_and_qword() {
    let f = parse_scsi_farm(&scsi_log()).unwrap();
    assert_eq!(f.transport, Some(FarmTransport::Scsi));
    assert_eq!(
        (f.major_version, f.minor_version, f.pages_supported, f.log_size_bytes),
        (Some(4), Some(6), Some(7), Some(1_000))
    );
    assert_eq!(f.serial.as_deref(), Some("ZL2ABCDE"));
    assert_eq!(f.firmware.as_deref(), Some("0004"));
    assert_eq!(f.model.as_deref(), Some("ST12000NM004"));
    assert_eq!(f.wwn, Some(0x5000_c500_4567_b123));
    assert_eq!(
        (f.power_on_hours, f.power_cycles, f.hardware_resets),
        (Some(26_304), Some(40), Some(41))
    );
    assert_eq!(
        (f.read_commands, f.write_commands, f.sectors_written, f.sectors_read),
        (Some(10), Some(20), Some(30), Some(40))
    );
    assert_eq!(
        (
            f.unrecoverable_read_errors,
            f.unrecoverable_write_errors,
            f.mechanical_start_retries
        ),
        (Some(1), Some(2), Some(3))
    );
    assert_eq!(
        (f.temperature_c, f.highest_temperature_c, f.lowest_temperature_c),
        (Some(25), Some(41), Some(-5))
    );
    assert_eq!(
        (f.max_operating_temperature_c, f.helium_pressure_tripped),
        (Some(60), Some(true))
    );
    // Not in the SCSI layout.
    assert_eq!(
        (f.spindle_power_on_hours, f.head_flight_hours, f.spin_up_time_ms),
        (None, None, None)
    );
    assert_eq!(
        power_on_hours_disagree(12, f.power_on_hours.unwrap()).as_deref(),
        Some("power-on hours disagree: SMART 12 h, FARM 26,304 h")
    );
}

#[test]
fn scsi_refusals() {
    let good = scsi_log();
    let mut sub = good.clone();
    sub[1] = 0x02;
    assert_eq!(
        parse_scsi_farm(&sub),
        Err(FarmError::WrongPage {
            want: 0x3d03,
            got: 0x3d02
        })
    );
    let mut page = good.clone();
    page[0] = 0x0d;
    assert!(matches!(
        parse_scsi_farm(&page),
        Err(FarmError::WrongPage {
            want: 0x3d03,
            got: 0x0d03
        })
    ));
    assert!(matches!(
        parse_scsi_farm(&good[..good.len() - 1]),
        Err(FarmError::Short { .. })
    ));
    assert!(matches!(parse_scsi_farm(&good[..3]), Err(FarmError::Short { .. })));
    let no_drive = scsi_page(&[scsi_param(0, 9, &[(0, SIGNATURE)])]);
    assert_eq!(parse_scsi_farm(&no_drive), Err(FarmError::MissingParameter { code: 1 }));
    let bad_sig = scsi_page(&[scsi_param(0, 9, &[(0, 0x1234)]), scsi_param(1, 31, &[])]);
    assert_eq!(
        parse_scsi_farm(&bad_sig),
        Err(FarmError::Signature { found: Some(0x1234) })
    );
}
