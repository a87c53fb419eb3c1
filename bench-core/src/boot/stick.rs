//! The boot stick's on-disk contract, kept by both sides: PID 1 finds the
//! stick by its label, reads its config and writes `results/`;
//! bootbench-image builds the stick and reads `results/` back (for itself
//! and for bootbench-qemu). Names only, no I/O: each side lists its own
//! directories (a mounted vfat, or a FAT read in process) and asks here.
//! The README ("Where the results go when booted from the stick") says the
//! same for people.
//!
//! - The stick is a FAT whose volume label is [`VOLUME_LABEL`]
//!   ([`is_bootbench_fat`] reads it from a boot sector).
//! - Its root holds the config, [`CONFIG_NAME`], and the directory
//!   [`RESULTS_DIR`].
//! - PID 1 names each result `<machine>-<n>.json` ([`machine_name`],
//!   [`next_result_name`]), writes it first under a temp name
//!   ([`temp_name`]) and gives it its name only when it is complete.
//! - FAT compares names without regard to case, so both sides do:
//!   `sn1-3.JSON` on the stick is `SN1-3.json` ([`result_number`],
//!   [`is_result_name`]).
//! - A reader takes every visible `.json` file of `results/` for a result
//!   ([`is_result_name`]), so every name PID 1 gives is read back, and no
//!   temp name is.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// The stick's FAT volume label.
pub const VOLUME_LABEL: &str = "BOOTBENCH";

/// [`VOLUME_LABEL`] as the boot sector's 11-byte field holds it (padded
/// with spaces).
pub const LABEL: [u8; 11] = label_field(VOLUME_LABEL);

/// The config file, in the stick's root directory.
pub const CONFIG_NAME: &str = "bootbench.json";

/// The results directory, in the stick's root directory.
pub const RESULTS_DIR: &str = "results";

/// The extension of a result file (compared without regard to case).
pub const RESULT_EXT: &str = ".json";

/// The longest machine name in result file names, in characters (ASCII,
/// so also UTF-16 units and bytes): a long DMI serial is cut to it.
pub const MACHINE_MAX: usize = 64;

/// The longest name a FAT long name holds, in UTF-16 units.
pub const FAT_NAME_MAX: usize = 255;

/// What [`temp_name`] adds to a name at most: a dot, `.tmp-` and a pid of
/// up to 7 digits (Linux's `pid_max` is at most 4194304).
pub const TEMP_EXTRA: usize = 13;

/// The longest result file name: its temp name still fits FAT's long name.
pub const NAME_MAX: usize = FAT_NAME_MAX - TEMP_EXTRA;

/// `label` padded with spaces to the boot sector's 11-byte field (a label
/// longer than 11 bytes does not compile).
const fn label_field(label: &str) -> [u8; 11] {
    let b = label.as_bytes();
    assert!(b.len() <= 11, "a FAT volume label holds 11 bytes");
    let mut out = [b' '; 11];
    let mut i = 0;
    while i < b.len() {
        out[i] = b[i];
        i += 1;
    }
    out
}

/// True if `sector` (the first 512 bytes of a device) is a FAT boot sector
/// labelled [`VOLUME_LABEL`]: FAT32 (`FAT32   ` at 0x52, label at 0x47) or
/// FAT12/16 (`FAT1` at 0x36, label at 0x2B). The label compares without
/// regard to case, as FAT labels are shown.
///
/// This is a signature check, as blkid's: the file-system type string says
/// which BPB layout holds the label, and no geometry is read (the kernel's
/// vfat driver checks that when PID 1 mounts the stick).
pub fn is_bootbench_fat(sector: &[u8]) -> bool {
    let field = |at: usize, len: usize| sector.get(at..at + len);
    let label_at = |at: usize| field(at, 11).is_some_and(|l| l.eq_ignore_ascii_case(&LABEL));
    (field(0x52, 8) == Some(b"FAT32   ") && label_at(0x47)) || (field(0x36, 4) == Some(b"FAT1") && label_at(0x2B))
}

/// The machine's name in result file names: the DMI serial with every
/// character outside `[A-Za-z0-9._-]` replaced by `_`, leading dots removed
/// (a dot file is hidden, and readers pass over it), cut to
/// [`MACHINE_MAX`] characters; `unknown` if there is none (or nothing but
/// dots and underscores).
pub fn machine_name(product_serial: Option<&str>) -> String {
    let s: String = product_serial
        .unwrap_or("")
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .skip_while(|&c| c == '.')
        .take(MACHINE_MAX)
        .collect();
    if s.chars().all(|c| c == '.' || c == '_') {
        "unknown".to_string()
    } else {
        s
    }
}

/// The digits `n` of `<machine>-<n>.json`, if `file` is such a name,
/// compared without regard to case as FAT compares names (`sn1-3.JSON` is
/// `SN1-3.json` there); any number of digits.
pub fn result_number<'f>(file: &'f str, machine: &str) -> Option<&'f str> {
    let head = file.get(..machine.len())?;
    if !head.eq_ignore_ascii_case(machine) {
        return None;
    }
    let rest = file[machine.len()..].strip_prefix('-')?;
    let split = rest.len().checked_sub(RESULT_EXT.len())?;
    let (n, ext) = (rest.get(..split)?, rest.get(split..)?);
    (ext.eq_ignore_ascii_case(RESULT_EXT) && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n)
}

/// A decimal number of any length without its leading zeros (`""` is 0).
fn canonical(digits: &str) -> &str {
    digits.trim_start_matches('0')
}

/// One more than the canonical decimal `n`, of any length.
fn plus_one(n: &str) -> String {
    let mut d: Vec<u8> = n.bytes().collect();
    for b in d.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8(d).unwrap_or_default();
        }
    }
    d.insert(0, b'1');
    String::from_utf8(d).unwrap_or_default()
}

/// `<machine>-<n>.json` with n one more than the highest n among `names`
/// (a listing of `results/`) for `machine` (1 if there is none; the RTC may
/// be wrong, so no dates): names compared without case, numbers of any
/// length. Only if that name would be longer than [`NAME_MAX`] (a stray
/// file with a number of well over 100 digits) is n the smallest number
/// not taken instead. Either way no name of `names` equals it, in any case.
pub fn next_result_name<'a>(names: impl IntoIterator<Item = &'a str>, machine: &str) -> String {
    let taken: Vec<&str> = names
        .into_iter()
        .filter_map(|name| result_number(name, machine))
        .map(canonical)
        .collect();
    let highest = taken
        .iter()
        .max_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
        .copied()
        .unwrap_or("");
    let name = |n: &str| format!("{machine}-{n}{RESULT_EXT}");
    let next = plus_one(highest);
    if name(&next).len() <= NAME_MAX {
        return name(&next);
    }
    let free = (1u64..)
        .map(|k| k.to_string())
        .find(|k| !taken.contains(&k.as_str()))
        .unwrap_or_default();
    name(&free)
}

/// The name of a file saved beside the document `doc` (`SN1-3.json`, or
/// a results URL's last path segment): the document's name less its
/// `.json` (any case), a dot, and `file` (`nvme0n1.telemetry.bin`, a
/// disk's telemetry log, [`crate::device::telemetry::file_name`]):
/// `SN1-3.nvme0n1.telemetry.bin`. Never a result name (it does not end in
/// `.json`), and it starts with the document's stem, so it sorts beside
/// it. A `doc` without `.json` keeps all of its name.
pub fn beside(doc: &str, file: &str) -> String {
    let stem = doc
        .len()
        .checked_sub(RESULT_EXT.len())
        .filter(|&s| doc.get(s..).is_some_and(|e| e.eq_ignore_ascii_case(RESULT_EXT)))
        .map_or(doc, |s| &doc[..s]);
    format!("{stem}.{file}")
}

/// The temp name a new file `name` is written under by process `pid`
/// before it gets its name: `.<name>.tmp-<pid>`, a hidden dot file that
/// does not end in `.json`, so no reader takes it for a result.
pub fn temp_name(name: &str, pid: u32) -> String {
    format!(".{name}.tmp-{pid}")
}

/// True if `name` is a [`temp_name`] (`.<name>.tmp-<pid>`), as an
/// interrupted write may leave behind: never a result.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.')
        && name
            .rsplit_once(".tmp-")
            .is_some_and(|(_, pid)| pid.bytes().all(|b| b.is_ascii_digit()))
}

/// True if `name` is a [`temp_name`] of a result of `machine`
/// (`.<machine>-...tmp-<pid>`, the machine compared without case): one its
/// next save may remove.
pub fn is_temp_name_of(name: &str, machine: &str) -> bool {
    let own = format!(".{machine}-");
    let mine = name.get(..own.len()).is_some_and(|h| h.eq_ignore_ascii_case(&own));
    mine && is_temp_name(name)
}

/// Whether a reader of `results/` takes the file `name` for a result: a
/// name ending in `.json` (without regard to case, as FAT compares names)
/// that does not start with a dot (PID 1 writes [`temp_name`] first and
/// gives the file its name when it is complete; a write cut short leaves
/// at most such a temp file). Any such name is read, not only PID 1's
/// `<machine>-<n>.json`: a result renamed by hand is still a result.
pub fn is_result_name(name: &str) -> bool {
    let Some(split) = name.len().checked_sub(RESULT_EXT.len()).filter(|&s| s > 0) else {
        return false;
    };
    !name.starts_with('.')
        && name
            .get(split..)
            .is_some_and(|ext| ext.eq_ignore_ascii_case(RESULT_EXT))
}

/// The cases of [`next_result_name`] for machine `SN1`: the files a
/// results folder holds, and the name the next result gets. FAT ignores
/// case: another case of a name is the same name, and counts; numbers of
/// any length count, one more than the highest. Both sides' tests check
/// them: this crate's on the listing, PID 1's through a folder on disk.
#[doc(hidden)]
pub const NAME_CASES: &[(&[&str], &str)] = &[
    (&[], "SN1-1.json"),
    (&["sn1-7.JSON", "SN1-3.json"], "SN1-8.json"),
    (&["Sn1-0009.Json"], "SN1-10.json"),
    (&["SN1-18446744073709551615.json"], "SN1-18446744073709551616.json"),
    (
        &["SN1-99999999999999999999999999.json", "SN1-5.json"],
        "SN1-100000000000000000000000000.json",
    ),
    // Not this machine's, or not a number: no count.
    (
        &[
            "SN10-9.json",
            "SN1-9.json.tmp",
            "SN1--9.json",
            "SN1-9a.json",
            "SN1-٣.json",
        ],
        "SN1-1.json",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_field_is_the_label_padded() {
        assert_eq!(&LABEL, b"BOOTBENCH  ");
        assert_eq!(core::str::from_utf8(&LABEL).unwrap().trim_end(), VOLUME_LABEL);
    }

    /// A boot sector with `fstype` at `type_at` and `label` at `label_at`.
    fn sector(type_at: usize, fstype: &[u8], label_at: usize, label: &[u8]) -> Vec<u8> {
        let mut s = alloc::vec![0u8; 512];
        s[0..3].copy_from_slice(&[0xEB, 0x58, 0x90]);
        s[3..11].copy_from_slice(b"mkfs.fat");
        s[type_at..type_at + fstype.len()].copy_from_slice(fstype);
        s[label_at..label_at + label.len()].copy_from_slice(label);
        s[510] = 0x55;
        s[511] = 0xAA;
        s
    }

    #[test]
    fn label_detection_on_boot_sectors() {
        let fat32 = |label: &[u8]| sector(0x52, b"FAT32   ", 0x47, label);
        let cases: Vec<(&str, Vec<u8>, bool)> = alloc::vec![
            ("FAT32 labelled", fat32(b"BOOTBENCH  "), true),
            ("FAT16 labelled", sector(0x36, b"FAT16   ", 0x2B, b"BOOTBENCH  "), true),
            ("FAT12 labelled", sector(0x36, b"FAT12   ", 0x2B, b"BOOTBENCH  "), true),
            ("lower-case label", fat32(b"bootbench  "), true),
            ("other label", fat32(b"NO NAME    "), false),
            ("longer label", fat32(b"BOOTBENCH2 "), false),
            (
                "FAT32 label at the FAT16 place",
                sector(0x52, b"FAT32   ", 0x2B, b"BOOTBENCH  "),
                false
            ),
            ("no FS type", sector(0x52, b"NTFS    ", 0x47, b"BOOTBENCH  "), false),
            ("blank", alloc::vec![0u8; 512], false),
            ("short read", fat32(b"BOOTBENCH  ")[..0x50].to_vec(), false),
        ];
        for (what, s, want) in cases {
            assert_eq!(is_bootbench_fat(&s), want, "{what}");
        }
    }

    #[test]
    fn machine_names() {
        for (serial, want) in [
            (Some("7XYZ123"), "7XYZ123"),
            (Some(" CZ1234/56 AB "), "CZ1234_56_AB"),
            (Some("To Be Filled By O.E.M."), "To_Be_Filled_By_O.E.M."),
            (Some("../.."), "unknown"),
            (Some(""), "unknown"),
            (None, "unknown"),
            (Some("sn-é"), "sn-_"),
            (Some(".hidden"), "hidden"),
            (Some("..x.y"), "x.y"),
        ] {
            assert_eq!(machine_name(serial), want, "{serial:?}");
        }
        // A long DMI serial is cut, so its result names fit FAT with room.
        let m = machine_name(Some(&"S".repeat(300)));
        assert_eq!(m, "S".repeat(MACHINE_MAX));
        let worst = temp_name(&format!("{m}-{}.json", u64::MAX), 4_194_304);
        assert!(worst.len() <= FAT_NAME_MAX, "{} characters", worst.len());
    }

    /// FAT ignores case: another case of a name is the same name, and
    /// counts; numbers of any length count, one more than the highest.
    #[test]
    fn result_names_ignore_case_and_numbers_have_no_ceiling() {
        for (files, want) in NAME_CASES {
            assert_eq!(next_result_name(files.iter().copied(), "SN1"), *want, "{files:?}");
        }
        assert_eq!(result_number("sn1-42.json", "SN1"), Some("42"));
        assert_eq!(result_number("SN1-.json", "SN1"), None);
        assert_eq!(result_number("S", "SN1"), None);
        assert_eq!(result_number("SN1é-1.json", "SN1"), None);
        assert_eq!(plus_one(""), "1");
        assert_eq!(plus_one("199"), "200");
        assert_eq!(plus_one("999"), "1000");
    }

    /// A stray number so long that one more would not fit FAT's name
    /// length: the smallest free number instead, still this machine's.
    #[test]
    fn a_number_too_long_to_grow_gives_the_smallest_free_one() {
        let stray = format!("SN1-{}.json", "9".repeat(NAME_MAX - "SN1-.json".len()));
        assert_eq!(stray.len(), NAME_MAX);
        let names = [stray.as_str(), "SN1-1.json", "sn1-2.json"];
        assert_eq!(next_result_name(names, "SN1"), "SN1-3.json");
    }

    #[test]
    fn temp_names_are_never_results() {
        for (name, temp) in [
            (".SN-2.json.tmp-1", true),
            (".r.json.tmp-123456", true),
            ("SN-2.json", false),
            (".SN-2.json", false),
            ("SN-2.json.tmp-1", false),
            (".SN-2.json.tmp-x", false),
        ] {
            assert_eq!(is_temp_name(name), temp, "{name}");
            assert!(!(temp && is_result_name(name)), "{name}");
        }
        assert_eq!(temp_name("SN-2.json", 77), ".SN-2.json.tmp-77");
        assert!(is_temp_name_of(".sn1-3.json.tmp-9", "SN1"));
        assert!(!is_temp_name_of(".SN10-3.json.tmp-9", "SN1"));
        assert!(!is_temp_name_of(".SN1-3.json", "SN1"));
    }

    #[test]
    fn result_names_a_reader_takes() {
        for (name, want) in [
            ("unknown-1.json", true),
            ("SN-12.json", true),
            ("sn1-3.JSON", true),
            ("r.Json", true),
            (".unknown-2.json.tmp-1", false),
            (".hidden.json", false),
            (".json", false),
            (".JSON", false),
            ("notes.txt", false),
            ("SN-1.json.tmp", false),
            ("é.json", true),
        ] {
            assert_eq!(is_result_name(name), want, "{name}");
        }
    }

    /// The two sides agree, fed the same listings: every name PID 1 counts
    /// as one of its results, and every name it gives next, is a name a
    /// reader takes for a result; no temp name PID 1 writes under is.
    #[test]
    fn the_writer_and_the_reader_agree_on_names() {
        let listings: &[&[&str]] = &[
            &[],
            &["SN1-1.json", "sn1-3.JSON", "Sn1-2.Json"],
            &["SN1-18446744073709551615.json", ".SN1-5.json.tmp-12", "notes.txt"],
            &["SN10-9.json", "SN1-9.json.tmp", "OTHER-40.json", "SN1-.json", "r.json"],
        ];
        for machine in ["SN1", "sn1", "unknown", &machine_name(Some(&"L".repeat(300)))] {
            for &names in listings {
                for &name in names {
                    if result_number(name, machine).is_some() {
                        assert!(is_result_name(name), "{machine}: {name} counted but not read");
                    }
                }
                let next = next_result_name(names.iter().copied(), machine);
                assert!(is_result_name(&next), "{machine}: {next} written but not read");
                assert!(result_number(&next, machine).is_some(), "{next}");
                assert!(
                    !names.iter().any(|n| n.eq_ignore_ascii_case(&next)),
                    "{next} is taken in {names:?}"
                );
                let tmp = temp_name(&next, 4_194_304);
                assert!(is_temp_name(&tmp) && is_temp_name_of(&tmp, machine), "{tmp}");
                assert!(!is_result_name(&tmp), "{tmp} is read as a result");
                assert!(tmp.len() <= FAT_NAME_MAX, "{tmp}");
            }
        }
    }

    #[test]
    fn files_beside_a_document_take_its_stem_and_are_no_results() {
        for (doc, want) in [
            ("SN1-3.json", "SN1-3.nvme0n1.telemetry.bin"),
            ("sn1-3.JSON", "sn1-3.nvme0n1.telemetry.bin"),
            ("ab12-1.json", "ab12-1.nvme0n1.telemetry.bin"),
            ("result", "result.nvme0n1.telemetry.bin"),
        ] {
            let b = beside(doc, "nvme0n1.telemetry.bin");
            assert_eq!(b, want, "{doc}");
            assert!(!is_result_name(&b) && result_number(&b, "SN1").is_none());
        }
        assert_eq!(
            next_result_name(["SN1-3.json", "SN1-3.nvme0n1.telemetry.bin"], "SN1"),
            "SN1-4.json"
        );
    }
}
