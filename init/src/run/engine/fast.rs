//! What the engines for the fastest drives need of a target, checked
//! before a test runs so that a test the device cannot serve is skipped
//! with a reason naming the device and what it lacks (fio fails the job;
//! a skip keeps the run's other tests and says why):
//!
//! - polled completions (`hipri`, IORING_SETUP_IOPOLL): the device's queue
//!   polls (`queue/io_poll` is 1). NVMe has poll queues only when the
//!   nvme driver is loaded with `poll_queues=N` (bootbench's images put
//!   `nvme.poll_queues=` on the kernel command line); without them the
//!   kernel fails every polled request with EOPNOTSUPP;
//! - NVMe passthrough (`ioengine` `io_uring_cmd`): the target is a whole
//!   NVMe namespace whose generic character device (`/dev/ngXnY`,
//!   `class/nvme-generic/ngXnY`) exists.
//!
//! Regular files are not checked: a polled ring on a file is the kernel's
//! to refuse (EOPNOTSUPP in the completion, as fio sees it).

use std::path::Path;

use bench_core::document::result::{TargetInfo, TargetKind};
use bench_core::spec::{IoEngine, Params};

/// Why block device `name` (a kernel name, `nvme0n1`) cannot poll, if it
/// cannot: `queue/io_poll` absent or not 1 (of the whole disk, for a
/// partition).
pub fn poll_refusal(sys: &Path, name: &str) -> Option<String> {
    let dir = sys.join("class/block").join(name);
    let read = |d: &Path| std::fs::read_to_string(d.join("queue/io_poll")).ok();
    // A partition has no queue of its own: its disk's (the parent directory).
    let v = read(&dir).or_else(|| read(&dir.join("..")));
    match v.as_deref().map(str::trim) {
        Some("1") => None,
        Some(v) => {
            let hint = if name.starts_with("nvme") {
                " (the nvme driver makes them with nvme.poll_queues=N on the kernel command line)"
            } else {
                ""
            };
            Some(format!(
                "hipri asks for polled completions, but {name} has no poll queues: queue/io_poll is {v}{hint}"
            ))
        }
        None => Some(format!(
            "hipri asks for polled completions, but {name} has no queue/io_poll in sysfs: its driver cannot poll"
        )),
    }
}

/// The generic character device name of NVMe namespace `name`
/// (`nvme0n1` -> `ng0n1`), if `name` is a whole namespace and sysfs has
/// it under `class/nvme-generic`; else why not.
pub fn generic_of(sys: &Path, name: &str) -> Result<String, String> {
    let tail = name.strip_prefix("nvme").filter(|t| {
        let mut parts = t.splitn(2, 'n');
        let (c, n) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        !c.is_empty() && !n.is_empty() && c.bytes().all(|b| b.is_ascii_digit()) && n.bytes().all(|b| b.is_ascii_digit())
    });
    let Some(tail) = tail else {
        return Err(format!(
            "ioengine io_uring_cmd (NVMe passthrough) needs a whole NVMe namespace (nvmeXnY), and {name} is not one"
        ));
    };
    let ng = format!("ng{tail}");
    if sys.join("class/nvme-generic").join(&ng).exists() {
        Ok(ng)
    } else {
        Err(format!(
            "ioengine io_uring_cmd (NVMe passthrough): {name} has no generic character device ({ng} is not in \
             /sys/class/nvme-generic; the kernel has them from 5.13)"
        ))
    }
}

/// Why target `info` cannot run a test of `params` with the engine it
/// asks for, if it cannot (see the module).
pub fn refusal(sys: &Path, info: &TargetInfo, params: &Params) -> Option<String> {
    if info.kind == TargetKind::File || info.kind == TargetKind::Simulated {
        return None;
    }
    let name = info.name.as_deref().unwrap_or(&info.path);
    let name = name.rsplit('/').next().unwrap_or(name);
    if params.ioengine == Some(IoEngine::IoUringCmd) {
        if let Err(why) = generic_of(sys, name) {
            return Some(why);
        }
    }
    if params.hipri {
        return poll_refusal(sys, name).map(|why| format!("{}: {why}", info.path));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    fn fixture(files: &[(&str, &str)]) -> TempDir {
        let d = TempDir::new("fast-sysfs");
        for (rel, body) in files {
            let p = d.0.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("dirs");
            std::fs::write(p, body).expect("write");
        }
        d
    }

    #[test]
    fn poll_queues_from_io_poll() {
        let d = fixture(&[
            ("class/block/nvme0n1/queue/io_poll", "1\n"),
            ("class/block/nvme1n1/queue/io_poll", "0\n"),
            ("class/block/sda/queue/io_poll", "0\n"),
        ]);
        assert_eq!(poll_refusal(d.0.as_path(), "nvme0n1"), None);
        let why = poll_refusal(d.0.as_path(), "nvme1n1").expect("no poll queues");
        assert!(why.contains("nvme1n1 has no poll queues: queue/io_poll is 0"), "{why}");
        assert!(why.contains("nvme.poll_queues=N"), "{why}");
        let why = poll_refusal(d.0.as_path(), "sda").expect("no poll queues");
        assert!(!why.contains("nvme.poll_queues"), "{why}");
        let why = poll_refusal(d.0.as_path(), "md0").expect("no queue");
        assert!(why.contains("md0 has no queue/io_poll"), "{why}");
    }

    #[test]
    fn generic_devices_of_whole_namespaces() {
        let d = fixture(&[("class/nvme-generic/ng0n1/dev", "240:0\n")]);
        assert_eq!(generic_of(d.0.as_path(), "nvme0n1"), Ok("ng0n1".to_string()));
        let why = generic_of(d.0.as_path(), "nvme1n1").expect_err("absent");
        assert!(why.contains("ng1n1 is not in /sys/class/nvme-generic"), "{why}");
        for name in ["nvme0n1p1", "sda", "nvme0", "nvmen1", "md0"] {
            let why = generic_of(d.0.as_path(), name).expect_err(name);
            assert!(why.contains(&format!("{name} is not one")), "{why}");
        }
    }

    #[test]
    fn refusal_names_the_target_and_what_it_lacks() {
        let d = fixture(&[("class/block/nvme0n1/queue/io_poll", "0\n")]);
        let info = TargetInfo {
            path: "/dev/nvme0n1".to_string(),
            name: Some("nvme0n1".to_string()),
            ..TargetInfo::default()
        };
        let mut p = Params::defaults();
        assert_eq!(refusal(d.0.as_path(), &info, &p), None);
        p.hipri = true;
        let why = refusal(d.0.as_path(), &info, &p).expect("refused");
        assert!(
            why.starts_with("/dev/nvme0n1: hipri asks for polled completions"),
            "{why}"
        );
        p.hipri = false;
        p.ioengine = Some(IoEngine::IoUringCmd);
        let why = refusal(d.0.as_path(), &info, &p).expect("refused");
        assert!(why.contains("ng0n1"), "{why}");
        let file = TargetInfo {
            kind: TargetKind::File,
            ..info
        };
        assert_eq!(refusal(d.0.as_path(), &file, &p), None);
    }
}
