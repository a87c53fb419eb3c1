//! What the integration tests of bootbench-report share: running the binary on the fixtures
//! (tests/fixtures, see its README), golden outputs, scratch directories.
// Each test binary of report/tests uses a part of these.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_bootbench-report");

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fixture's path relative to the crate (so outputs name it the same everywhere).
pub fn fx(name: &str) -> String {
    format!("tests/fixtures/{name}")
}

pub fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run bootbench-report")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Compare `got` with the golden file `name`, or rewrite it under UPDATE_GOLDEN=1.
///
/// The console table's first lines are bench-core's (`bench_core::verdict::table`,
/// tested there): they stand as placeholders in the golden files, so a
/// change of their wording there does not break these tests.
pub fn golden(name: &str, got: &str) {
    let got = &got
        .replace(
            bench_core::verdict::table::UNIT_LINE,
            "<bench_core::verdict::table::UNIT_LINE>",
        )
        .replace(
            bench_core::verdict::table::ANALYSIS_LINE,
            "<bench_core::verdict::table::ANALYSIS_LINE>",
        );
    let path = fixtures().join("golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&path, got).expect("write golden");
        return;
    }
    let want = fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1 to create it)", path.display()));
    if *got != want {
        let diff = got
            .lines()
            .zip(want.lines())
            .enumerate()
            .find(|(_, (g, w))| g != w)
            .map_or_else(
                || {
                    format!(
                        "lengths differ: got {} lines, want {}",
                        got.lines().count(),
                        want.lines().count()
                    )
                },
                |(i, (g, w))| format!("first difference at line {}:\n got: {g}\nwant: {w}", i + 1),
            );
        panic!("{name} differs from the golden output ({diff}); UPDATE_GOLDEN=1 rewrites it");
    }
}

/// A fresh scratch directory for one test of this process.
pub fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bootbench-report-{test}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).expect("scratch dir");
    d
}

pub fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {:?}\n{}", o.status, stderr(&o));
    assert!(o.stderr.is_empty(), "{args:?}: nothing on stderr, got {}", stderr(&o));
    stdout(&o)
}

pub const QEMU4: &str = "qemu-4disks-quick.json";
pub const RAID_A: &str = "raid0-a.json";
pub const RAID_B: &str = "raid0-b.json";
pub const OUTLIER: &str = "outlier-t2.json";
pub const READ_ERROR: &str = "read-error.json";
pub const HEALTH: &str = "health-h1.json";
/// [`HEALTH`] with a FARM log on the SATA disk and the OCP C0h log on the
/// NVMe one, added by hand (QEMU has neither).
pub const HEALTH_LOGS: &str = "health-logs.json";

/// The text of `html` from the first `open` to the next `close` (inclusive).
pub fn element<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    let start = html.find(open).unwrap_or_else(|| panic!("no {open:?} in the page"));
    let rest = &html[start..];
    &rest[..rest.find(close).map_or(rest.len(), |e| e + close.len())]
}

/// What [`scanned_document`] planted and found on the simulated disk.
#[derive(Debug)]
pub struct Scanned {
    /// The document, as JSON text.
    pub json: String,
    /// The scanned target's path.
    pub path: String,
    /// The scan as recorded.
    pub scan: bench_core::document::result::SurfaceScan,
}

/// The 256 MiB HDD the surface scan tests plant their faults on: three
/// unreadable sectors (two in one 1 MiB read, one in another), a sector
/// the drive takes 60 ms more to read, in 16 zones; byte offsets.
pub const SCAN_BAD: [u64; 3] = [100 * (1 << 20) + 4096, 100 * (1 << 20) + 8192, 150 * (1 << 20)];
/// The slow sector's byte offset.
pub const SCAN_SLOW: u64 = 70 * (1 << 20) + 512;

/// The 4-disk run ([`QEMU4`]) with a surface scan of its SATA HDD
/// (`/dev/sdb`), made by `bench_core::passes::scan` on the simulated disk and
/// recorded by `bench_core::passes::scan::record`, as the run makes and records
/// one; `error` makes it a scan that ended in that error, `model` sets the
/// disk's model.
pub fn scanned_document(error: Option<&str>, model: Option<&str>) -> Scanned {
    use bench_core::engine::runner::Stop;
    use bench_core::engine::sim::{SimDisk, SimModel};
    use bench_core::io::{Access, OpenSpec, Target};
    use bench_core::passes::scan::{record, scan, ScanSpec, WHOLE};
    use bench_core::vocab::units::Nanos;

    let mut disk = SimDisk::new(SimModel::hdd(256 << 20), false);
    disk.fail_at = SCAN_BAD.to_vec();
    disk.slow_at = vec![(SCAN_SLOW, Nanos::from_millis(60))];
    let spec = ScanSpec {
        start: 0,
        end: disk.model.size,
        chunk: 1 << 20,
        depth: 1,
        coverage_ppm: WHOLE,
        logical_block: disk.model.logical_block,
        retries: 1,
        max_bad: 100,
        zones: 16,
        slowest: 8,
        holds_data: None,
    };
    let mut q = disk
        .open(&OpenSpec::plain(Access::Direct, false, spec.depth, spec.chunk, 1))
        .expect("a queue on the simulated disk");
    let out = scan(&spec, &mut q, &disk.clock, &Stop::new(), &mut |_, _| {}).expect("the scan");
    let mut rec = record(&spec, &out);
    if let Some(e) = error {
        (rec.end, rec.error) = (bench_core::document::result::ScanEndState::Error, Some(e.into()));
    }
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fixtures().join(QEMU4)).expect("the 4-disk run")).expect("JSON");
    let path = "/dev/sdb".to_string();
    let t = doc["targets"]
        .as_array_mut()
        .expect("targets")
        .iter_mut()
        .find(|t| t["path"] == path.as_str())
        .expect("the HDD");
    t["surface_scan"] = serde_json::to_value(&rec).expect("the scan as JSON");
    if let Some(m) = model {
        t["model"] = serde_json::json!(m);
    }
    Scanned {
        json: doc.to_string(),
        path,
        scan: rec,
    }
}

/// The health fixture (an NVMe and a SATA disk) with the verdict of the
/// default rules, plus, when `floor`, a floor of 1 TB/s on seq_read for
/// model `QEMU HARDDISK` (the SATA disk fails it); as JSON text.
pub fn with_verdict(floor: bool) -> String {
    use bench_core::verdict::acceptance::{evaluate, DiskFilter, Limit, Rules, Severity};
    let text = fs::read_to_string(fixtures().join(HEALTH)).unwrap();
    let mut doc: bench_core::document::result::ResultDoc = serde_json::from_str(&text).unwrap();
    let mut rules = Rules::defaults();
    if floor {
        rules.from_config = true;
        rules.limits.push(Limit {
            source: "acceptance.limits[0]".into(),
            test: None,
            workload: Some(bench_core::spec::Workload::SeqRead),
            only: DiskFilter {
                model: Some("QEMU HARDDISK".into()),
                ..DiskFilter::default()
            },
            floors: vec![(bench_core::document::result::Metric::ReadBps, 1e12)],
            ceilings: Vec::new(),
            severity: Severity::Fail,
        });
    }
    doc.acceptance = Some(evaluate(&doc, &rules));
    serde_json::to_string(&doc).unwrap()
}
