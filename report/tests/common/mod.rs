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
/// The console table's first lines are bench-core's (`bench_core::table`,
/// tested there): they stand as placeholders in the golden files, so a
/// change of their wording there does not break these tests.
pub fn golden(name: &str, got: &str) {
    let got = &got
        .replace(bench_core::table::UNIT_LINE, "<bench_core::table::UNIT_LINE>")
        .replace(bench_core::table::ANALYSIS_LINE, "<bench_core::table::ANALYSIS_LINE>");
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

/// The text of `html` from the first `open` to the next `close` (inclusive).
pub fn element<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    let start = html.find(open).unwrap_or_else(|| panic!("no {open:?} in the page"));
    let rest = &html[start..];
    &rest[..rest.find(close).map_or(rest.len(), |e| e + close.len())]
}
