//! `verify --image`: the measurements a boot of a bootbench stick must have
//! logged, computed from the stick's files, and the event log's, compared.
//!
//! What Debian's signed boot chain measures, as a boot of the stick under
//! OVMF with swtpm logged it (docs/results.md, "Attestation"):
//!
//! | PCR | event type | what | digest |
//! |---|---|---|---|
//! | 4 | `EV_EFI_BOOT_SERVICES_APPLICATION` | shim, `\EFI\BOOT\BOOTX64.EFI`, started by the firmware | Authenticode |
//! | 4 | `EV_EFI_BOOT_SERVICES_APPLICATION` | GRUB, `\EFI\BOOT\grubx64.efi`, started by shim | Authenticode |
//! | 9 | `EV_IPL` | each file GRUB reads: `(hd0,gpt1)/EFI/BOOT/grub.cfg`, `/vmlinuz`, `/initrd.img` | SHA-256 of the file |
//! | 8 | `EV_IPL` | each command GRUB runs (`grub_cmd: ...`) and the kernel's command line (`kernel_cmdline: ...`) | SHA-256 of the text after the prefix |
//!
//! The event's identity is its data: the device path's file path node (UTF-16)
//! for an application, the path GRUB gives for a file. PCR 8 follows from
//! grub.cfg, so it is not compared by itself. The config PID 1 ran is not
//! read by GRUB: it is compared with PCR 15's first extend, the block's
//! `config_sha256`, which the quote proves.
//!
//! An application in PCR 4, or a file in PCR 9, that is none of the stick's
//! fails too: something else was started or read on the way.

use bench_core::boot::eventlog::{EventLog, ALG_SHA256, EV_EFI_BOOT_SERVICES_APPLICATION, EV_IPL};
use ring::digest::{digest, SHA256};

use super::pe::authenticode;
use super::point::{Outcome, Point};
use super::quote::hex;

/// The stick's files that its boot measures (read by the caller from the
/// image's EFI system partition).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StickFiles {
    /// `EFI/BOOT/BOOTX64.EFI`: shim.
    pub shim: Vec<u8>,
    /// `EFI/BOOT/grubx64.efi`: GRUB.
    pub grub: Vec<u8>,
    /// `EFI/BOOT/grub.cfg`.
    pub grub_cfg: Vec<u8>,
    /// `vmlinuz`.
    pub kernel: Vec<u8>,
    /// `initrd.img`.
    pub initramfs: Vec<u8>,
    /// `bootbench.json`, if the stick has one.
    pub config: Option<Vec<u8>>,
}

impl StickFiles {
    /// The files, each read with `read` (a path in the stick's FAT, its
    /// bytes); a missing `bootbench.json` (`NotFound`) is none.
    pub fn read(read: &dyn Fn(&str) -> std::io::Result<Vec<u8>>) -> std::io::Result<StickFiles> {
        let config = match read("bootbench.json") {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        Ok(StickFiles {
            shim: read("EFI/BOOT/BOOTX64.EFI")?,
            grub: read("EFI/BOOT/grubx64.efi")?,
            grub_cfg: read("EFI/BOOT/grub.cfg")?,
            kernel: read("vmlinuz")?,
            initramfs: read("initrd.img")?,
            config,
        })
    }
}

/// One measurement a boot of the stick logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// What it is, as a point of the verdict names it.
    pub what: &'static str,
    /// The PCR.
    pub pcr: u32,
    /// The event type.
    pub event_type: u32,
    /// What identifies its event: the end of the path in the event's data.
    pub path: &'static str,
    /// The SHA-256 digest computed from the stick's file.
    pub sha256: Vec<u8>,
}

/// The measurements of `files`. An `Err`: shim or GRUB is not a PE image.
pub fn expected(files: &StickFiles) -> Result<Vec<Expected>, String> {
    let app = |what: &'static str, path: &'static str, file: &[u8]| -> Result<Expected, String> {
        Ok(Expected {
            what,
            pcr: 4,
            event_type: EV_EFI_BOOT_SERVICES_APPLICATION,
            path,
            sha256: authenticode(file, &SHA256).map_err(|e| format!("the image's {path}: {e}"))?,
        })
    };
    let read = |what: &'static str, path: &'static str, file: &[u8]| Expected {
        what,
        pcr: 9,
        event_type: EV_IPL,
        path,
        sha256: digest(&SHA256, file).as_ref().to_vec(),
    };
    Ok(vec![
        app("shim", "/EFI/BOOT/BOOTX64.EFI", &files.shim)?,
        app("GRUB", "/EFI/BOOT/grubx64.efi", &files.grub)?,
        read("GRUB's configuration", "/EFI/BOOT/grub.cfg", &files.grub_cfg),
        read("the kernel", "/vmlinuz", &files.kernel),
        read("the initramfs", "/initrd.img", &files.initramfs),
    ])
}

/// The path an event's data names: an application's device path's file
/// path nodes (UTF-16LE, type 4 subtype 4), joined, with `/` for UEFI's
/// `\`; a GRUB event's text without its trailing NUL.
fn event_path(event_type: u32, data: &[u8]) -> String {
    if event_type != EV_EFI_BOOT_SERVICES_APPLICATION {
        let text = data.strip_suffix(&[0]).unwrap_or(data);
        return String::from_utf8_lossy(text).into_owned();
    }
    // UEFI_IMAGE_LOAD_EVENT: location (8), length (8), link-time address
    // (8), the device path's length (8), the device path.
    let Some(len) = data
        .get(24..32)
        .and_then(|b| usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok())
    else {
        return String::new();
    };
    let Some(mut dp) = data.get(32..32usize.saturating_add(len)) else {
        return String::new();
    };
    let mut path = String::new();
    while let [t, s, l0, l1, ..] = *dp {
        let n = usize::from(u16::from_le_bytes([l0, l1]));
        if n < 4 || n > dp.len() || t == 0x7F {
            break;
        }
        if (t, s) == (4, 4) {
            let units: Vec<u16> = dp[4..n]
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .take_while(|&u| u != 0)
                .collect();
            path.push_str(&String::from_utf16_lossy(&units).replace('\\', "/"));
        }
        dp = &dp[n..];
    }
    path
}

/// Whether `path` (an event's) ends with `tail` (a stick's path), ASCII
/// case aside (FAT's names are case-insensitive).
fn names(path: &str, tail: &str) -> bool {
    path.len() >= tail.len()
        && path
            .get(path.len() - tail.len()..)
            .is_some_and(|end| end.eq_ignore_ascii_case(tail))
}

/// The points of `--image`: each of `expected` found in `log` with the
/// same digest, or not; anything else started in PCR 4 or read in PCR 9;
/// the run's config (`config_sha256`) against the stick's. `proved_log`:
/// the quote proved the log (its replay is the quoted PCRs); without it a
/// match is only what the log says.
pub fn check(
    log: Option<&EventLog>,
    expected: &[Expected],
    stick_config: Option<&[u8]>,
    config_sha256: &str,
    proved_log: bool,
) -> Vec<Point> {
    let held = Held(proved_log);
    let mut points: Vec<Point> = expected.iter().map(|e| measured(log, e, held)).collect();
    if let Some(log) = log {
        points.push(nothing_else(log, expected, held));
    }
    points.push(config(stick_config, config_sha256, held));
    points
}

/// Whether the quote proved the event log: what a point that holds is.
#[derive(Clone, Copy)]
struct Held(bool);

impl Held {
    fn outcome(self) -> Outcome {
        if self.0 {
            Outcome::Proved
        } else {
            Outcome::NotProved
        }
    }
    fn caveat(self) -> &'static str {
        if self.0 {
            ""
        } else {
            " (as the event log says: no quote proves it)"
        }
    }
}

/// `e` in the log: found under its PCR and path with the image's digest,
/// with another, or not at all.
fn measured(log: Option<&EventLog>, e: &Expected, held: Held) -> Point {
    let point = |outcome, detail| Point {
        what: e.what,
        outcome,
        detail,
    };
    let Some(log) = log else {
        return point(
            Outcome::NotProved,
            format!("the document carries no event log to find {} in", e.path),
        );
    };
    let logged: Vec<String> = log
        .events
        .iter()
        .filter(|ev| ev.pcr == e.pcr && ev.event_type == e.event_type)
        .filter(|ev| names(&event_path(ev.event_type, &ev.data), e.path))
        .map(|ev| ev.digest(ALG_SHA256).map(hex).unwrap_or_default())
        .collect();
    let want = hex(&e.sha256);
    if logged.is_empty() {
        point(
            Outcome::Failed,
            format!(
                "the event log has no measurement of {} in PCR {}: this boot did not start it",
                e.path, e.pcr
            ),
        )
    } else if logged.iter().all(|d| *d == want) {
        point(
            held.outcome(),
            format!(
                "{} measured into PCR {} as {want}, the image's{}",
                e.path,
                e.pcr,
                held.caveat()
            ),
        )
    } else {
        let other: Vec<&str> = logged.iter().filter(|d| **d != want).map(String::as_str).collect();
        point(
            Outcome::Failed,
            format!(
                "{} measured into PCR {} as {}; the image's {} hashes to {want}: the boot loaded another file",
                e.path,
                e.pcr,
                other.join(", "),
                e.path
            ),
        )
    }
}

/// Every EFI application started (PCR 4) and file GRUB read (PCR 9) is one
/// of `expected`.
fn nothing_else(log: &EventLog, expected: &[Expected], held: Held) -> Point {
    let others: Vec<String> = log
        .events
        .iter()
        .filter(|ev| {
            (ev.pcr == 4 && ev.event_type == EV_EFI_BOOT_SERVICES_APPLICATION)
                || (ev.pcr == 9 && ev.event_type == EV_IPL)
        })
        .filter_map(|ev| {
            let path = event_path(ev.event_type, &ev.data);
            let known = expected
                .iter()
                .any(|e| e.pcr == ev.pcr && e.event_type == ev.event_type && names(&path, e.path));
            let sha = ev.digest(ALG_SHA256).map(hex).unwrap_or_default();
            let path = if path.is_empty() { "(no path)".to_string() } else { path };
            (!known).then(|| format!("PCR {} {path} {sha}", ev.pcr))
        })
        .collect();
    if others.is_empty() {
        Point {
            what: "nothing else",
            outcome: held.outcome(),
            detail: format!(
                "no other EFI application started (PCR 4) and no other file read by GRUB (PCR 9){}",
                held.caveat()
            ),
        }
    } else {
        Point {
            what: "nothing else",
            outcome: Outcome::Failed,
            detail: format!(
                "the boot also measured what the image does not hold: {}",
                others.join("; ")
            ),
        }
    }
}

/// The config the run measured into PCR 15 against the stick's `bootbench.json`.
fn config(stick_config: Option<&[u8]>, config_sha256: &str, held: Held) -> Point {
    let point = |outcome, detail| Point {
        what: "the config",
        outcome,
        detail,
    };
    let Some(c) = stick_config else {
        return point(
            Outcome::NotProved,
            format!(
                "the image has no bootbench.json; the run's config hashes to {config_sha256} (PCR {})",
                bench_core::document::result::ATTESTATION_PCR
            ),
        );
    };
    let have = hex(digest(&SHA256, c).as_ref());
    if have == config_sha256 {
        point(
            held.outcome(),
            format!(
                "the image's bootbench.json, SHA-256 {have}, is the config the run measured{}",
                held.caveat()
            ),
        )
    } else {
        point(
            Outcome::Failed,
            format!(
                "the run measured a config of SHA-256 {config_sha256}; the image's bootbench.json hashes to {have}"
            ),
        )
    }
}

#[cfg(test)]
mod tests;
