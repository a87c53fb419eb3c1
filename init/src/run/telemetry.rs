//! After the verdicts, before the document is encoded: the host-initiated
//! telemetry log (log page 07h) of every NVMe disk that failed acceptance
//! ([`crate::disks::telemetry::read_disk`]), kept in memory, named in the
//! disk's target (its size and SHA-256, [`Telemetry`]), and handed to the
//! results code to save beside the document
//! ([`crate::results::beside`]).

use std::time::Duration;

use bench_core::device::telemetry::{self, CaptureError};
use bench_core::document::result::{ResultDoc, TargetKind, Telemetry, Verdict};

use crate::disks::telemetry::{read_disk, sha256_hex};
use crate::results::beside::Evidence;

/// The most telemetry bytes one run keeps in memory, every disk's
/// together: a disk past it is recorded with why, not read.
pub const RUN_BUDGET: u64 = 128 << 20;

/// The record and the bytes of a log read from disk `disk` (its kernel
/// name, for the file name), or the record of why there are none.
pub fn record(disk: &str, read: Result<telemetry::Captured, CaptureError>) -> (Telemetry, Option<Evidence>) {
    let mut t = Telemetry {
        log_id: telemetry::LID_HOST,
        ..Telemetry::default()
    };
    match read {
        Ok(c) => {
            let file = telemetry::file_name(disk);
            t.bytes = c.bytes.len() as u64;
            t.sha256 = Some(sha256_hex(&c.bytes));
            t.data_areas = c.data_areas;
            t.file = Some(file.clone());
            (t, Some(Evidence { file, bytes: c.bytes }))
        }
        Err(e) => {
            t.error = Some(e.to_string());
            (t, None)
        }
    }
}

/// How long one disk's log may take to read. A failed disk may be a dying
/// one whose controller no longer answers: the document must not wait
/// for it (each command has its own 5 s limit, but a controller reset
/// can hold the ioctl longer).
pub const DISK_BOUND: Duration = Duration::from_secs(60);

/// The live reading: [`capture_with`] over each disk's controller, each
/// disk's on a thread of its own waited for at most `DISK_BOUND` (a
/// thread that does not end is left behind, as a hung test's is).
pub fn capture_failed(doc: &mut ResultDoc, log: &mut dyn FnMut(&str)) -> Vec<Evidence> {
    capture_with(doc, RUN_BUDGET, log, &mut |path, name, max| {
        bounded(DISK_BOUND, {
            let (path, name) = (path.to_string(), name.to_string());
            move || read_disk(&path, &name, max)
        })
    })
}

/// `read` on a thread of its own, its answer if it comes within `bound`.
fn bounded(
    bound: Duration,
    read: impl FnOnce() -> Result<telemetry::Captured, CaptureError> + Send + 'static,
) -> Result<telemetry::Captured, CaptureError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("telemetry".into()).spawn(move || {
        let _ = tx.send(read());
    });
    if let Err(e) = spawned {
        return Err(CaptureError::Command {
            offset: 0,
            why: format!("cannot start a thread to read it: {e}"),
        });
    }
    rx.recv_timeout(bound)
        .unwrap_or(Err(CaptureError::TimedOut { secs: bound.as_secs() }))
}

/// For every NVMe block device of `doc` whose acceptance verdict is fail
/// (none in a simulated run): its telemetry log through `read(path, name,
/// max bytes)`, recorded in its target's `telemetry` and returned to be
/// saved beside the document. The logs kept stay within `budget` bytes
/// together: each disk may read at most what is left of it (and at most
/// [`telemetry::MAX_LOG_BYTES`]), and a log over that is refused and says
/// so. Each disk's outcome is said through `log`.
pub fn capture_with(
    doc: &mut ResultDoc,
    budget: u64,
    log: &mut dyn FnMut(&str),
    read: &mut dyn FnMut(&str, &str, u64) -> Result<telemetry::Captured, CaptureError>,
) -> Vec<Evidence> {
    let mut out = Vec::new();
    if doc.run.simulated {
        return out;
    }
    let failed: Vec<String> = doc
        .acceptance
        .iter()
        .flat_map(|a| &a.targets)
        .filter(|v| v.verdict == Verdict::Fail)
        .map(|v| v.target.clone())
        .collect();
    let mut left = budget;
    for t in doc.targets.iter_mut() {
        if t.kind != TargetKind::Block || t.transport.as_deref() != Some("nvme") || !failed.contains(&t.path) {
            continue;
        }
        let name = t
            .name
            .clone()
            .unwrap_or_else(|| t.path.rsplit('/').next().unwrap_or("").to_string());
        log(&format!(
            "{}: failed acceptance; reading its telemetry log (07h)",
            t.path
        ));
        let (rec, evidence) = record(&name, read(&t.path, &name, left.min(telemetry::MAX_LOG_BYTES)));
        match (&rec.error, &rec.sha256) {
            (Some(e), _) => log(&format!("{}: no telemetry log kept: {e}", t.path)),
            (None, Some(sum)) => log(&format!(
                "{}: telemetry log read: {} bytes, data areas {:?}, sha256 {sum}",
                t.path, rec.bytes, rec.data_areas
            )),
            (None, None) => {}
        }
        left = left.saturating_sub(rec.bytes);
        t.telemetry = Some(rec);
        out.extend(evidence);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::device::telemetry::{parse_telemetry_header, Captured, BLOCK, MAX_LOG_BYTES};
    use bench_core::document::result::{Acceptance, TargetInfo, TargetVerdict};

    fn disk(path: &str, transport: &str) -> TargetInfo {
        TargetInfo {
            path: path.into(),
            kind: TargetKind::Block,
            name: path.strip_prefix("/dev/").map(str::to_string),
            transport: Some(transport.into()),
            ..TargetInfo::default()
        }
    }

    fn verdict(path: &str, v: Verdict) -> TargetVerdict {
        TargetVerdict {
            target: path.into(),
            serial: None,
            model: None,
            verdict: v,
            checks: Vec::new(),
        }
    }

    /// A log of `blocks` blocks after the header (all in area 1), each
    /// byte `fill`.
    fn log(blocks: u16, fill: u8) -> Captured {
        let mut bytes = vec![fill; (usize::from(blocks) + 1) * BLOCK];
        bytes[..BLOCK].fill(0);
        bytes[0] = telemetry::LID_HOST;
        bytes[8..10].copy_from_slice(&blocks.to_le_bytes());
        let header = parse_telemetry_header(&bytes, false).unwrap();
        Captured {
            bytes,
            header,
            data_areas: vec![1],
        }
    }

    /// Only NVMe disks that failed are read: not one that passed or
    /// warned, not a SATA disk that failed, not an md array; each read
    /// gets what is left of the run's budget, and a refusal is recorded
    /// with why; the document stays valid against the schema.
    #[test]
    fn only_failed_nvme_disks_are_read_within_the_budget() {
        let mut doc = crate::run::new_doc(None, "test", 1, false, Vec::new());
        doc.targets = vec![
            disk("/dev/nvme0n1", "nvme"),
            disk("/dev/nvme1n1", "nvme"),
            disk("/dev/sda", "sata"),
            disk("/dev/nvme2n1", "nvme"),
            disk("/dev/nvme3n1", "nvme"),
            TargetInfo {
                kind: TargetKind::Md,
                ..disk("/dev/md0", "nvme")
            },
        ];
        doc.acceptance = Some(Acceptance {
            verdict: Verdict::Fail,
            rules: "defaults".into(),
            targets: vec![
                verdict("/dev/nvme0n1", Verdict::Fail),
                verdict("/dev/nvme1n1", Verdict::Warn),
                verdict("/dev/sda", Verdict::Fail),
                verdict("/dev/nvme2n1", Verdict::Fail),
                verdict("/dev/nvme3n1", Verdict::Fail),
                verdict("/dev/md0", Verdict::Fail),
            ],
        });
        let mut asked = Vec::new();
        let mut lines = Vec::new();
        let files = capture_with(
            &mut doc,
            3000,
            &mut |l| lines.push(l.to_string()),
            &mut |path, name, max| {
                asked.push((path.to_string(), name.to_string(), max));
                match name {
                    "nvme0n1" => Ok(log(3, 0xab)),
                    "nvme2n1" => Err(CaptureError::TooLarge { bytes: 4096, max }),
                    _ => Err(CaptureError::Command {
                        offset: 0,
                        why: "NVMe status 0x2".into(),
                    }),
                }
            },
        );
        assert_eq!(
            asked,
            vec![
                ("/dev/nvme0n1".to_string(), "nvme0n1".to_string(), 3000),
                ("/dev/nvme2n1".to_string(), "nvme2n1".to_string(), 3000 - 2048),
                ("/dev/nvme3n1".to_string(), "nvme3n1".to_string(), 3000 - 2048),
            ]
        );
        let want = log(3, 0xab).bytes;
        assert_eq!(
            files,
            vec![Evidence {
                file: "nvme0n1.telemetry.bin".into(),
                bytes: want.clone()
            }]
        );
        let t0 = doc.targets[0].telemetry.clone().unwrap();
        assert_eq!(
            t0,
            Telemetry {
                log_id: 7,
                bytes: 2048,
                sha256: Some(sha256_hex(&want)),
                data_areas: vec![1],
                file: Some("nvme0n1.telemetry.bin".into()),
                error: None,
            }
        );
        let t2 = doc.targets[3].telemetry.clone().unwrap();
        assert_eq!((t2.bytes, t2.sha256, t2.file), (0, None, None));
        assert!(t2.error.unwrap().contains("4096 bytes up to data area 2"));
        assert!(doc.targets[4]
            .telemetry
            .as_ref()
            .unwrap()
            .error
            .as_ref()
            .unwrap()
            .contains("NVMe status 0x2"));
        for i in [1, 2, 5] {
            assert_eq!(doc.targets[i].telemetry, None, "{}", doc.targets[i].path);
        }
        assert!(
            lines
                .iter()
                .any(|l| l.contains("/dev/nvme0n1: telemetry log read: 2048 bytes")),
            "{lines:?}"
        );
        let j = serde_json::to_value(&doc).unwrap();
        let errors = crate::testutil::result_schema_errors(&j);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            j["targets"][0]["telemetry"],
            serde_json::json!({"log_id": 7, "bytes": 2048, "sha256": sha256_hex(&want),
                "data_areas": [1], "file": "nvme0n1.telemetry.bin"})
        );
        // A simulated run reads nothing.
        doc.run.simulated = true;
        doc.targets[0].telemetry = None;
        let none = capture_with(&mut doc, MAX_LOG_BYTES, &mut |_| {}, &mut |_, _, _| panic!("read"));
        assert!(none.is_empty() && doc.targets[0].telemetry.is_none());
    }

    /// A disk whose controller does not answer holds the document up for
    /// the bound only, and says so; one that answers gives its log.
    #[test]
    fn a_read_that_hangs_is_given_up_after_its_bound() {
        let start = std::time::Instant::now();
        let e = bounded(Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(5));
            Ok(log(1, 1))
        })
        .unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
        assert_eq!(e, CaptureError::TimedOut { secs: 0 });
        assert_eq!(e.to_string(), "telemetry log 07h: no answer within 0 s: not read");
        assert_eq!(bounded(Duration::from_secs(5), || Ok(log(1, 1))), Ok(log(1, 1)));
    }
}
