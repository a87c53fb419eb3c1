//! The results on the boot stick: `results/<machine>-<n>.json`, named per
//! machine without dates (the RTC may be wrong) by the stick's contract,
//! [`bench_core::boot::stick`] (which bootbench-image reads them back by), and
//! written with [`sink::write_new_with`] so that nothing is ever
//! overwritten and no partial file carries a result's name.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::results::sink::{self, SinkError};

use bench_core::boot::stick::{is_temp_name_of, result_number};
pub use bench_core::boot::stick::{machine_name, RESULTS_DIR};

/// [`bench_core::boot::stick::next_result_name`] for the files in `dir`.
pub fn next_result_name(dir: &Path, machine: &str) -> io::Result<String> {
    let mut names: Vec<String> = Vec::new();
    for e in std::fs::read_dir(dir)? {
        names.push(e?.file_name().to_string_lossy().into_owned());
    }
    Ok(bench_core::boot::stick::next_result_name(
        names.iter().map(String::as_str),
        machine,
    ))
}

/// Why no results file was written.
#[derive(Debug)]
pub enum SaveError {
    /// No stick was found (or it could not be mounted).
    NoStick(String),
    /// The stick is read-only (EROFS: write-protected, or mounted read-only).
    ReadOnly(String),
    /// The stick is full (ENOSPC, EDQUOT).
    Full(String),
    /// Another failure.
    Other(String),
}

impl fmt::Display for SaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaveError::NoStick(why) => write!(f, "no results file written: no boot stick ({why})"),
            SaveError::ReadOnly(what) => write!(f, "no results file written: the stick is read-only ({what})"),
            SaveError::Full(what) => write!(f, "no results file written: the stick is full ({what})"),
            SaveError::Other(what) => write!(f, "no results file written: {what}"),
        }
    }
}

/// Classify an OS error met while writing `what`.
fn classify(e: &io::Error, what: String) -> SaveError {
    match e.raw_os_error() {
        Some(libc::EROFS) => SaveError::ReadOnly(what),
        Some(libc::ENOSPC | libc::EDQUOT) => SaveError::Full(what),
        _ => SaveError::Other(what),
    }
}

/// Set by the test-only kernel command-line key
/// `bootbench.test_hold=mid_result_write`: [`save_result`] stops half-way
/// through writing the results (under the temp name), logs [`HOLD_LINE`] and
/// sleeps forever, so a test can kill the machine at that exact point.
static TEST_HOLD: AtomicBool = AtomicBool::new(false);

/// The console line a held write prints (tests wait for it).
pub const HOLD_LINE: &str = "test hold: results write stopped half-way (bootbench.test_hold=mid_result_write)";

/// Arm the test-only hold (see [`TEST_HOLD`]).
pub fn arm_test_hold() {
    TEST_HOLD.store(true, Ordering::SeqCst);
}

/// The stick's result of `machine` for the plan, if there is one: the first
/// `<root>/results/<machine>-<n>.json` whose `run.plan_id` is one of
/// `plan_ids` (the plan's id and the one earlier versions gave it;
/// documents that cannot be read or parsed are passed over).
pub fn find_plan(root: &Path, machine: &str, plan_ids: &[&str]) -> Option<PathBuf> {
    let dir = root.join(RESULTS_DIR);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| result_number(n, machine).is_some())
        .collect();
    names.sort();
    names.into_iter().map(|n| dir.join(n)).find(|p| {
        std::fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["run"]["plan_id"].as_str().is_some_and(|id| plan_ids.contains(&id)))
    })
}

/// Write `json` to `<root>/results/<machine>-<n>.json` (the directory made
/// if missing) with [`sink::write_new_with`]: temp file, fsync, link or rename,
/// fsync of the directory; never overwriting (a name taken meanwhile moves
/// on to the next n). Returns the file written. A read-only or full stick,
/// or a damaged FAT that fails the write, gives the error and leaves the
/// earlier files as they were (and no partial file under a result's name).
pub fn save_result(root: &Path, machine: &str, json: &[u8]) -> Result<PathBuf, SaveError> {
    let dir = root.join(RESULTS_DIR);
    if let Err(e) = std::fs::create_dir(&dir) {
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Err(classify(&e, format!("mkdir {}: {e}", dir.display())));
        }
    }
    // Temp files of this machine's interrupted writes (power lost, machine
    // killed) hold no result a reader takes; PID 1 is the stick's only
    // writer, so none is in use: remove them.
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            if is_temp_name_of(&e.file_name().to_string_lossy(), machine) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let mut hold = |tmp: &Path| {
        if TEST_HOLD.load(Ordering::SeqCst) {
            crate::log::log(&format!("{HOLD_LINE}: {}", tmp.display()));
            nix::unistd::sync();
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    };
    for _ in 0..100 {
        let name =
            next_result_name(&dir, machine).map_err(|e| classify(&e, format!("cannot list {}: {e}", dir.display())))?;
        let path = dir.join(&name);
        match sink::write_new_with(&path, json, &mut hold) {
            Ok(()) => return Ok(path),
            Err(SinkError::Exists { .. }) => continue,
            Err(SinkError::NoDir { dir }) => {
                return Err(SaveError::Other(format!("{} is not a directory", dir.display())))
            }
            Err(SinkError::NoName { path }) => {
                return Err(SaveError::Other(format!("{} names no file", path.display())))
            }
            Err(SinkError::Io { step, path, source }) => {
                return Err(classify(&source, format!("{step} {}: {source}", path.display())))
            }
        }
    }
    Err(SaveError::Other(format!(
        "no free result name in {} after 100 tries",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::boot::stick::NAME_MAX;
    use std::fs;

    use crate::testutil::TempDir;

    /// bench-core's cases of the next result's name
    /// ([`bench_core::boot::stick::NAME_CASES`]), through a folder.
    #[test]
    fn result_names_ignore_case_and_numbers_have_no_ceiling() {
        for (files, want) in bench_core::boot::stick::NAME_CASES {
            let t = TempDir::new("names");
            for f in *files {
                fs::write(t.0.join(f), "x").expect("write");
            }
            assert_eq!(next_result_name(&t.0, "SN1").expect("list"), *want, "{files:?}");
        }
    }

    /// A stray number so long that one more would not fit FAT's name
    /// length: the smallest free number instead, still this machine's.
    #[test]
    fn a_number_too_long_to_grow_gives_the_smallest_free_one() {
        let t = TempDir::new("long-number");
        let dir = t.0.join(RESULTS_DIR);
        fs::create_dir(&dir).expect("mkdir");
        let nines = "9".repeat(NAME_MAX - "SN1-.json".len());
        let stray = format!("SN1-{nines}.json");
        assert_eq!(stray.len(), NAME_MAX);
        for f in [stray.as_str(), "SN1-1.json", "sn1-2.json"] {
            fs::write(dir.join(f), "x").expect("write");
        }
        assert_eq!(next_result_name(&dir, "SN1").expect("list"), "SN1-3.json");
        assert_eq!(save_result(&t.0, "SN1", b"{}").expect("save"), dir.join("SN1-3.json"));
        assert_eq!(fs::read(dir.join(&stray)).expect("read"), b"x");
    }

    /// On any filesystem: a stray file at u64's ceiling and a 300-character
    /// DMI serial do not stop the save.
    #[test]
    fn a_huge_stray_number_or_a_long_serial_never_stops_saving() {
        let t = TempDir::new("never-jammed");
        let dir = t.0.join(RESULTS_DIR);
        fs::create_dir(&dir).expect("mkdir");
        fs::write(dir.join("SN1-18446744073709551615.json"), "stray").expect("write");
        let p = save_result(&t.0, "SN1", b"{}").expect("save past u64::MAX");
        assert_eq!(p, dir.join("SN1-18446744073709551616.json"));
        let long = machine_name(Some(&"L".repeat(300)));
        let p = save_result(&t.0, &long, b"{}").expect("save under a long serial");
        assert_eq!(p, dir.join(format!("{long}-1.json")));
        assert_eq!(
            fs::read(dir.join("SN1-18446744073709551615.json")).expect("read"),
            b"stray"
        );
    }

    /// On a real FAT: a case variant of the next name, a number at u64's
    /// ceiling and a 300-character DMI serial never stop the save.
    #[test]
    fn saving_on_fat_is_never_jammed() {
        let m = match crate::results::sink::fixture::fat_loop("stick-names") {
            Ok(m) => m,
            Err(e) => return crate::results::sink::fixture::skipped(&e),
        };
        if let Err(e) = crate::results::sink::fixture::mount_vfat(&m) {
            return crate::results::sink::fixture::skipped(&e);
        }
        let root = &m.dir;
        let dir = root.join(RESULTS_DIR);
        fs::create_dir(&dir).expect("mkdir results");
        for f in ["SN1-1.json", "sn1-2.JSON", "BIG-18446744073709551615.json"] {
            fs::write(dir.join(f), "earlier").expect("write");
        }
        let p = save_result(root, "SN1", b"{\"n\":3}").expect("save past the case variant");
        assert_eq!(p, dir.join("SN1-3.json"));
        let p = save_result(root, "BIG", b"{}").expect("save past u64::MAX");
        assert_eq!(p, dir.join("BIG-18446744073709551616.json"));
        let long = machine_name(Some(&"L".repeat(300)));
        let p = save_result(root, &long, b"{}").expect("save under a long serial");
        assert_eq!(p, dir.join(format!("{long}-1.json")));
        for f in ["SN1-1.json", "sn1-2.JSON", "BIG-18446744073709551615.json"] {
            assert_eq!(fs::read(dir.join(f)).expect("read"), b"earlier", "{f} untouched");
        }
        assert_eq!(fs::read(dir.join("SN1-3.json")).expect("read"), b"{\"n\":3}");
    }

    #[test]
    fn results_are_numbered_per_machine_and_never_overwritten() {
        let t = TempDir::new("save");
        let root = &t.0;
        // First result: results/ is made, n = 1.
        let p1 = save_result(root, "SN1", b"{\"a\":1}").expect("save");
        assert_eq!(p1, root.join("results/SN1-1.json"));
        // Other machines' files, gaps and look-alikes do not count.
        let dir = root.join(RESULTS_DIR);
        for f in [
            "SN1-7.json",
            "SN10-9.json",
            "SN1-x.json",
            "SN1-12.json.tmp",
            "OTHER-40.json",
            "SN1-.json",
        ] {
            fs::write(dir.join(f), "earlier").expect("write");
        }
        fs::write(dir.join(".SN1-3.json.tmp-1"), "half of a").expect("write");
        fs::write(dir.join(".OTHER-3.json.tmp-1"), "half of b").expect("write");
        assert_eq!(next_result_name(&dir, "SN1").expect("list"), "SN1-8.json");
        assert_eq!(next_result_name(&dir, "SN10").expect("list"), "SN10-10.json");
        assert_eq!(next_result_name(&dir, "NEW").expect("list"), "NEW-1.json");
        let p8 = save_result(root, "SN1", b"{\"b\":2}").expect("save");
        assert_eq!(p8, dir.join("SN1-8.json"));
        assert_eq!(fs::read(&p8).expect("read"), b"{\"b\":2}");
        // Earlier files are untouched.
        assert_eq!(fs::read(&p1).expect("read"), b"{\"a\":1}");
        assert_eq!(fs::read(dir.join("SN1-7.json")).expect("read"), b"earlier");
        // No temp file left behind.
        let leftovers: Vec<String> = fs::read_dir(&dir)
            .expect("list")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert_eq!(
            leftovers,
            vec![".OTHER-3.json.tmp-1"],
            "this machine's stale temp files go"
        );
    }

    #[test]
    fn a_result_of_this_machine_and_plan_is_found() {
        let t = crate::testutil::TempDir::new("find-plan");
        let doc = |id: &str| format!("{{\"run\": {{\"plan_id\": \"{id}\"}}}}\n");
        save_result(&t.0, "SN1", doc("aaaa").as_bytes()).unwrap();
        save_result(&t.0, "SN1", doc("bbbb").as_bytes()).unwrap();
        save_result(&t.0, "SN2", doc("cccc").as_bytes()).unwrap();
        std::fs::write(t.0.join("results/SN1-9.json"), "not json").unwrap();
        assert_eq!(find_plan(&t.0, "SN1", &["bbbb"]), Some(t.0.join("results/SN1-2.json")));
        assert_eq!(find_plan(&t.0, "SN1", &["cccc"]), None, "another machine's plan");
        assert_eq!(find_plan(&t.0, "SN2", &["cccc"]), Some(t.0.join("results/SN2-1.json")));
        assert_eq!(find_plan(&t.0.join("none"), "SN1", &["aaaa"]), None);
        assert_eq!(
            find_plan(&t.0, "SN1", &["dddd", "bbbb"]),
            Some(t.0.join("results/SN1-2.json")),
            "by the id an earlier version gave the plan"
        );
        assert_eq!(find_plan(&t.0, "SN1", &[]), None);
    }

    #[test]
    fn why_no_file_was_written() {
        let rofs = io::Error::from_raw_os_error(libc::EROFS);
        let full = io::Error::from_raw_os_error(libc::ENOSPC);
        let other = io::Error::from_raw_os_error(libc::EIO);
        assert!(matches!(classify(&rofs, "x".into()), SaveError::ReadOnly(_)));
        assert!(matches!(classify(&full, "x".into()), SaveError::Full(_)));
        assert!(matches!(classify(&other, "x".into()), SaveError::Other(_)));
        assert!(classify(&rofs, "create".into()).to_string().contains("read-only"));
        assert!(classify(&full, "write".into()).to_string().contains("full"));
        // A results path that is a file, not a directory.
        let t = TempDir::new("notdir");
        fs::write(t.0.join(RESULTS_DIR), "x").expect("write");
        let e = save_result(&t.0, "SN", b"{}").unwrap_err();
        assert!(e.to_string().starts_with("no results file written"), "{e}");
    }

    /// Save twice on a filesystem that fails the second write: the error
    /// kind, and the first result untouched with nothing else left.
    fn a_failing_stick_keeps_earlier_results(root: &Path, break_it: &dyn Fn() -> bool, want: &str) {
        let first = save_result(root, "SN", b"{\"first\":1}").expect("first save");
        if !break_it() {
            return crate::results::sink::fixture::skipped("cannot fill or remount the test filesystem");
        }
        let big = vec![b' '; 512 << 10];
        let e = save_result(root, "SN", &big).unwrap_err();
        assert!(e.to_string().contains(want), "{e}");
        assert_eq!(fs::read(&first).expect("read"), b"{\"first\":1}");
        assert_eq!(
            crate::results::sink::fixture::names(&root.join(RESULTS_DIR)),
            vec!["SN-1.json"]
        );
    }

    #[test]
    fn a_read_only_stick_says_so_and_keeps_earlier_results() {
        let m = match crate::results::sink::fixture::tmpfs("stick-ro", 1 << 20) {
            Ok(m) => m,
            Err(e) => return crate::results::sink::fixture::skipped(&e),
        };
        a_failing_stick_keeps_earlier_results(
            &m.dir,
            &|| crate::results::sink::fixture::remount_ro(&m).is_ok(),
            "the stick is read-only",
        );
    }

    #[test]
    fn a_full_stick_says_so_and_keeps_earlier_results() {
        let m = match crate::results::sink::fixture::tmpfs("stick-full", 256 << 10) {
            Ok(m) => m,
            Err(e) => return crate::results::sink::fixture::skipped(&e),
        };
        let filler = m.dir.join("filler");
        a_failing_stick_keeps_earlier_results(
            &m.dir,
            &|| fs::write(&filler, vec![0u8; 1 << 20]).is_err(),
            "the stick is full",
        );
    }
}
