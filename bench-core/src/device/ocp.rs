//! The OCP Datacenter NVMe SSD specification's SMART / Health Information
//! Extended log (log page C0h), parsed into an [`OcpSmart`] record, and
//! its health rules: the counters that must not grow during a run
//! ([`must_not_grow`]) and the warnings ([`warnings`]). Pure: bytes in, a
//! record out; init reads the log. The parser takes any byte slice and
//! never panics (the fuzz target holds it to that).
//!
//! Layout: nvme-cli (github linux-nvme/nvme-cli)
//! `plugins/ocp/ocp-smart-extended-log.h` (`struct ocp_smart_extended_log`,
//! each field's byte range), `plugins/ocp/ocp-smart-extended-log.c` (the
//! log page GUID, `scao_guid`, as stored at bytes 496-511, least
//! significant byte first: AFD514C97C6F4F9CA4F2BFEA2810AFC5 read from byte
//! 511 down) and `plugins/ocp/ocp-print-stdout.c` (which fields each log
//! page version carries: versions 0-1 the base fields, 2-3 add the DSSD
//! version, NVMe base errata, PCIe link retraining and power state
//! changes, 4 the command set errata and lowest permitted firmware, 5 the
//! media dies, system area counts, power and DSSD firmware fields, 6 and
//! later the form factor and die-in-use bad NAND blocks). Integers are
//! little-endian. The byte offset of each field is in the decoder's table.

use alloc::string::String;
use alloc::vec::Vec;

/// Bytes of the log page.
pub const PAGE: usize = 512;
/// The log page GUID as stored at bytes 496-511 (nvme-cli's `scao_guid`).
pub const GUID: [u8; 16] = [
    0xc5, 0xaf, 0x10, 0x28, 0xea, 0xbf, 0xf2, 0xa4, 0x9c, 0x4f, 0x6f, 0x7c, 0xc9, 0x14, 0xd5, 0xaf,
];

/// Why a C0h page was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OcpError {
    /// Fewer bytes than the page.
    Short {
        /// Bytes given.
        got: usize,
    },
}

impl core::fmt::Display for OcpError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            OcpError::Short { got } => write!(f, "OCP C0h log too short: {got} bytes, {PAGE} needed"),
        }
    }
}

pub use crate::document::result::{DssdVersion, OcpSmart, OcpSmartV5, RawNormalized};

/// Little-endian unsigned integer of `b` (at most 16 bytes).
fn le(b: &[u8]) -> u128 {
    b.iter().take(16).rev().fold(0u128, |v, &x| (v << 8) | u128::from(x))
}

/// [`le`] of at most 8 bytes.
fn le64(b: &[u8]) -> u64 {
    u64::try_from(le(&b[..b.len().min(8)])).unwrap_or(u64::MAX)
}

fn le32(b: &[u8]) -> u32 {
    u32::try_from(le(&b[..b.len().min(4)])).unwrap_or(u32::MAX)
}

fn le16(b: &[u8]) -> u16 {
    u16::try_from(le(&b[..b.len().min(2)])).unwrap_or(u16::MAX)
}

fn ascii(b: &[u8]) -> String {
    let s: String = b
        .iter()
        .filter(|c| (32..127).contains(*c))
        .map(|&c| char::from(c))
        .collect();
    String::from(s.trim())
}

fn raw_norm(raw: &[u8], norm: &[u8]) -> RawNormalized {
    RawNormalized {
        raw: le64(raw),
        normalized: le16(norm),
    }
}

/// Parse log page C0h: Ok(None) when its GUID is not the OCP one (another
/// vendor's C0h page, to be ignored); an error when it is short.
pub fn parse_ocp_smart(page: &[u8]) -> Result<Option<OcpSmart>, OcpError> {
    let Some(p) = page.get(..PAGE) else {
        return Err(OcpError::Short { got: page.len() });
    };
    if p[496..512] != GUID {
        return Ok(None);
    }
    let version = le16(&p[494..496]);
    let mut s = OcpSmart {
        log_page_version: version,
        physical_media_written_bytes: le(&p[0..16]),
        physical_media_read_bytes: le(&p[16..32]),
        bad_user_nand_blocks: raw_norm(&p[32..38], &p[38..40]),
        bad_system_nand_blocks: raw_norm(&p[40..46], &p[46..48]),
        xor_recovery_count: le64(&p[48..56]),
        uncorrectable_read_errors: le64(&p[56..64]),
        soft_ecc_errors: le64(&p[64..72]),
        end_to_end_detected: le32(&p[72..76]),
        end_to_end_corrected: le32(&p[76..80]),
        system_data_used_pct: p[80],
        refresh_counts: le64(&p[81..88]),
        user_data_erase_count_max: le32(&p[88..92]),
        user_data_erase_count_min: le32(&p[92..96]),
        thermal_throttling_events: p[96],
        thermal_throttling_status: p[97],
        pcie_correctable_errors: le64(&p[104..112]),
        incomplete_shutdowns: le32(&p[112..116]),
        free_blocks_pct: p[120],
        capacitor_health: le16(&p[128..130]),
        unaligned_io: le64(&p[136..144]),
        security_version: le64(&p[144..152]),
        total_nuse: le64(&p[152..160]),
        plp_start_count: le(&p[160..176]),
        endurance_estimate: le(&p[176..192]),
        ..OcpSmart::default()
    };
    if version >= 2 {
        s.dssd_version = Some(DssdVersion {
            errata: p[98],
            point: le16(&p[99..101]),
            minor: le16(&p[101..103]),
            major: p[103],
        });
        s.nvme_base_errata_version = Some(p[130]);
        s.pcie_link_retraining_count = Some(le64(&p[192..200]));
        s.power_state_change_count = Some(le64(&p[200..208]));
    }
    if version >= 4 {
        s.nvme_command_set_errata_version = Some(p[131]);
        s.lowest_permitted_firmware_revision = Some(le64(&p[208..216]));
    }
    if version >= 5 {
        s.v5 = Some(parse_v5(p));
    }
    if version >= 6 {
        s.form_factor = Some(p[223]);
        s.die_in_use_bad_nand_blocks = Some(raw_norm(&p[358..364], &p[364..366]));
    }
    Ok(Some(s))
}

fn parse_v5(p: &[u8]) -> OcpSmartV5 {
    let uuid: String = p[278..294].iter().map(|b| alloc::format!("{b:02x}")).collect();
    OcpSmartV5 {
        nvme_over_pcie_errata_version: p[132],
        nvme_mi_errata_version: p[133],
        total_media_dies: le16(&p[216..218]),
        total_die_failure_tolerance: le16(&p[218..220]),
        media_dies_offline: le16(&p[220..222]),
        max_temperature_recorded: p[222],
        nand_avg_erase_count: le64(&p[224..232]),
        command_timeouts: le32(&p[232..236]),
        system_area_program_fails: raw_norm(&p[236..240], &p[240..241]),
        system_area_uncorrectable_reads: raw_norm(&p[244..248], &p[248..249]),
        system_area_erase_fails: raw_norm(&p[252..256], &p[256..257]),
        max_peak_power_capability: le16(&p[260..262]),
        current_max_avg_power: le16(&p[262..264]),
        lifetime_power_consumed: le64(&p[264..270]),
        dssd_firmware_revision: ascii(&p[270..278]),
        dssd_firmware_build_uuid: uuid,
        dssd_firmware_build_label: ascii(&p[294..358]),
    }
}

/// The counters that must not grow between a run's two readings: bad user
/// and system NAND blocks (raw) and uncorrectable read errors. One message
/// per counter that grew, naming it and both values.
pub fn must_not_grow(before: &OcpSmart, after: &OcpSmart) -> Vec<String> {
    let counters = [
        (
            "bad user NAND blocks",
            before.bad_user_nand_blocks.raw,
            after.bad_user_nand_blocks.raw,
        ),
        (
            "bad system NAND blocks",
            before.bad_system_nand_blocks.raw,
            after.bad_system_nand_blocks.raw,
        ),
        (
            "uncorrectable read errors",
            before.uncorrectable_read_errors,
            after.uncorrectable_read_errors,
        ),
    ];
    counters
        .iter()
        .filter(|(_, b, a)| a > b)
        .map(|(name, b, a)| alloc::format!("OCP {name} grew during the run: {b} before, {a} after"))
        .collect()
}

/// Capacitor health below which [`warnings`] warns by default, percent:
/// bootbench's choice, not the specification's.
pub const CAPACITOR_WARN_BELOW_PCT: u16 = 80;

/// Warnings on a run's last reading (with the first, for what changed):
/// capacitor health below `capacitor_min_pct` (values above 100 are not a
/// percentage and left alone), thermal throttling in progress, thermal
/// throttling events during the run.
pub fn warnings(before: &OcpSmart, after: &OcpSmart, capacitor_min_pct: u16) -> Vec<String> {
    let mut out = Vec::new();
    let cap = after.capacitor_health;
    if cap < capacitor_min_pct && cap <= 100 {
        out.push(alloc::format!(
            "OCP capacitor health {cap}%, below {capacitor_min_pct}%"
        ));
    }
    if after.thermal_throttling_status != 0 {
        out.push(alloc::format!(
            "OCP thermal throttling in progress (status {:#04x})",
            after.thermal_throttling_status
        ));
    }
    let (b, a) = (before.thermal_throttling_events, after.thermal_throttling_events);
    if a > b {
        out.push(alloc::format!(
            "OCP thermal throttling events during the run: {b} before, {a} after"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(p: &mut [u8], at: usize, bytes: &[u8]) {
        p[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// A C0h page of log page `version`, built from nvme-cli's offsets.
    fn page(version: u16) -> Vec<u8> {
        let mut p = vec![0u8; PAGE];
        put(&mut p, 0, &((5u128 << 64) | 7).to_le_bytes());
        put(&mut p, 16, &11u128.to_le_bytes());
        put(&mut p, 32, &[3, 0, 0, 0, 0, 1]);
        put(&mut p, 38, &98u16.to_le_bytes());
        put(&mut p, 40, &[2, 0, 0, 0, 0, 0]);
        put(&mut p, 46, &99u16.to_le_bytes());
        for (at, v) in [
            (48, 12u64),
            (56, 13),
            (64, 14),
            (104, 15),
            (136, 16),
            (144, 17),
            (152, 18),
            (192, 19),
            (200, 20),
            (208, 21),
            (224, 22),
        ] {
            put(&mut p, at, &v.to_le_bytes());
        }
        put(&mut p, 72, &23u32.to_le_bytes());
        put(&mut p, 76, &24u32.to_le_bytes());
        put(&mut p, 80, &[4, 1, 2, 3, 4, 5, 6, 7]);
        put(&mut p, 88, &25u32.to_le_bytes());
        put(&mut p, 92, &26u32.to_le_bytes());
        put(&mut p, 96, &[2, 1, 9, 1, 0, 5, 0, 2]);
        put(&mut p, 112, &27u32.to_le_bytes());
        p[120] = 50;
        put(&mut p, 128, &100u16.to_le_bytes());
        put(&mut p, 130, &[1, 2, 3, 4]);
        put(&mut p, 160, &28u128.to_le_bytes());
        put(&mut p, 176, &29u128.to_le_bytes());
        put(&mut p, 216, &[64, 0, 2, 0, 1, 0, 70, 3]);
        put(&mut p, 232, &30u32.to_le_bytes());
        put(&mut p, 236, &[31, 0, 0, 0, 100]);
        put(&mut p, 244, &[32, 0, 0, 0, 99]);
        put(&mut p, 252, &[33, 0, 0, 0, 98]);
        put(&mut p, 260, &[0x10, 0x27, 0x88, 0x13, 1, 0, 0, 0, 0, 1]);
        put(&mut p, 270, b"FW1.2\0\0\0");
        put(&mut p, 278, &[0xab; 16]);
        put(&mut p, 294, b"build-42");
        put(&mut p, 358, &[6, 0, 0, 0, 0, 0, 97, 0]);
        put(&mut p, 494, &version.to_le_bytes());
        put(&mut p, 496, &GUID);
        p
    }

    #[test]
    fn base_fields_come_from_their_offsets() {
        let s = parse_ocp_smart(&page(1)).unwrap().unwrap();
        assert_eq!(s.log_page_version, 1);
        assert_eq!(
            (s.physical_media_written_bytes, s.physical_media_read_bytes),
            ((5 << 64) | 7, 11)
        );
        assert_eq!(
            s.bad_user_nand_blocks,
            RawNormalized {
                raw: (1 << 40) | 3,
                normalized: 98
            }
        );
        assert_eq!(s.bad_system_nand_blocks, RawNormalized { raw: 2, normalized: 99 });
        assert_eq!(
            (s.xor_recovery_count, s.uncorrectable_read_errors, s.soft_ecc_errors),
            (12, 13, 14)
        );
        assert_eq!(
            (s.end_to_end_detected, s.end_to_end_corrected, s.system_data_used_pct),
            (23, 24, 4)
        );
        assert_eq!(s.refresh_counts, u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 0]));
        assert_eq!((s.user_data_erase_count_max, s.user_data_erase_count_min), (25, 26));
        assert_eq!((s.thermal_throttling_events, s.thermal_throttling_status), (2, 1));
        assert_eq!(
            (s.pcie_correctable_errors, s.incomplete_shutdowns, s.free_blocks_pct),
            (15, 27, 50)
        );
        assert_eq!(
            (s.capacitor_health, s.unaligned_io, s.security_version, s.total_nuse),
            (100, 16, 17, 18)
        );
        assert_eq!((s.plp_start_count, s.endurance_estimate), (28, 29));
        // Version 1 carries none of the later fields.
        assert_eq!(
            (
                s.dssd_version,
                s.pcie_link_retraining_count,
                s.lowest_permitted_firmware_revision
            ),
            (None, None, None)
        );
        assert_eq!((s.v5, s.form_factor, s.die_in_use_bad_nand_blocks), (None, None, None));
    }

    #[test]
    fn later_versions_add_their_fields() {
        let s = parse_ocp_smart(&page(3)).unwrap().unwrap();
        let v = DssdVersion {
            major: 2,
            minor: 5,
            point: 1,
            errata: 9,
        };
        assert_eq!((s.dssd_version, s.nvme_base_errata_version), (Some(v), Some(1)));
        assert_eq!(
            (s.pcie_link_retraining_count, s.power_state_change_count),
            (Some(19), Some(20))
        );
        assert_eq!(s.nvme_command_set_errata_version, None);
        let s = parse_ocp_smart(&page(4)).unwrap().unwrap();
        assert_eq!(
            (s.nvme_command_set_errata_version, s.lowest_permitted_firmware_revision),
            (Some(2), Some(21))
        );
        assert_eq!(s.v5, None);
        let s = parse_ocp_smart(&page(5)).unwrap().unwrap();
        let v5 = s.v5.clone().unwrap();
        assert_eq!((v5.nvme_over_pcie_errata_version, v5.nvme_mi_errata_version), (3, 4));
        assert_eq!(
            (
                v5.total_media_dies,
                v5.total_die_failure_tolerance,
                v5.media_dies_offline
            ),
            (64, 2, 1)
        );
        assert_eq!(
            (
                v5.max_temperature_recorded,
                v5.nand_avg_erase_count,
                v5.command_timeouts
            ),
            (70, 22, 30)
        );
        assert_eq!(
            v5.system_area_program_fails,
            RawNormalized {
                raw: 31,
                normalized: 100
            }
        );
        assert_eq!(
            v5.system_area_uncorrectable_reads,
            RawNormalized {
                raw: 32,
                normalized: 99
            }
        );
        assert_eq!(
            v5.system_area_erase_fails,
            RawNormalized {
                raw: 33,
                normalized: 98
            }
        );
        assert_eq!(
            (
                v5.max_peak_power_capability,
                v5.current_max_avg_power,
                v5.lifetime_power_consumed
            ),
            (10_000, 5_000, (1 << 40) | 1)
        );
        assert_eq!(
            (
                v5.dssd_firmware_revision.as_str(),
                v5.dssd_firmware_build_label.as_str()
            ),
            ("FW1.2", "build-42")
        );
        assert_eq!(v5.dssd_firmware_build_uuid, "ab".repeat(16));
        assert_eq!(s.form_factor, None);
        // 6, and any later version nvme-cli does not know, as 6.
        for version in [6, 7] {
            let s = parse_ocp_smart(&page(version)).unwrap().unwrap();
            assert_eq!(
                (s.form_factor, s.die_in_use_bad_nand_blocks),
                (Some(3), Some(RawNormalized { raw: 6, normalized: 97 }))
            );
        }
    }

    #[test]
    fn a_wrong_guid_is_not_an_ocp_log_and_a_short_page_is_refused() {
        let mut p = page(5);
        p[511] ^= 1;
        assert_eq!(parse_ocp_smart(&p), Ok(None));
        assert_eq!(parse_ocp_smart(&[0; 512]), Ok(None));
        let p = page(5);
        assert_eq!(parse_ocp_smart(&p[..511]), Err(OcpError::Short { got: 511 }));
        assert_eq!(
            OcpError::Short { got: 0 }.to_string(),
            "OCP C0h log too short: 0 bytes, 512 needed"
        );
    }

    #[test]
    fn the_guid_reads_as_the_specification_writes_it() {
        let hex: String = GUID.iter().rev().map(|b| alloc::format!("{b:02X}")).collect();
        assert_eq!(hex, "AFD514C97C6F4F9CA4F2BFEA2810AFC5");
    }

    #[test]
    fn growing_counters_are_named_with_both_values() {
        let before = parse_ocp_smart(&page(5)).unwrap().unwrap();
        assert!(must_not_grow(&before, &before).is_empty());
        let mut after = before.clone();
        after.bad_user_nand_blocks.raw += 2;
        after.uncorrectable_read_errors = 14;
        // Other counters may grow.
        after.soft_ecc_errors += 100;
        let m = must_not_grow(&before, &after);
        assert_eq!(
            m,
            [
                "OCP bad user NAND blocks grew during the run: 1099511627779 before, 1099511627781 after",
                "OCP uncorrectable read errors grew during the run: 13 before, 14 after"
            ]
        );
        after.bad_system_nand_blocks.raw = 3;
        assert_eq!(must_not_grow(&before, &after).len(), 3);
    }

    #[test]
    fn capacitor_and_throttling_warn() {
        let mut before = parse_ocp_smart(&page(5)).unwrap().unwrap();
        before.thermal_throttling_status = 0;
        assert!(warnings(&before, &before, CAPACITOR_WARN_BELOW_PCT).is_empty());
        let mut after = before.clone();
        after.capacitor_health = 60;
        after.thermal_throttling_status = 1;
        after.thermal_throttling_events = 5;
        let w = warnings(&before, &after, CAPACITOR_WARN_BELOW_PCT);
        assert_eq!(
            w,
            [
                "OCP capacitor health 60%, below 80%",
                "OCP thermal throttling in progress (status 0x01)",
                "OCP thermal throttling events during the run: 2 before, 5 after"
            ]
        );
        after.capacitor_health = 0xffff;
        after.thermal_throttling_status = 0;
        after.thermal_throttling_events = 2;
        assert!(warnings(&before, &after, CAPACITOR_WARN_BELOW_PCT).is_empty());
    }
}
