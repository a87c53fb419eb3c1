use super::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// What the fake log gives next.
#[derive(Debug, Clone)]
pub(crate) enum Fake {
    Rec(Vec<u8>),
    Wrapped,
    Fail,
}

/// A log fed by the test: records pushed into the queue are read at the
/// reader's next poll.
#[derive(Debug, Clone, Default)]
pub(crate) struct Queue(pub Arc<Mutex<VecDeque<Fake>>>);

impl Queue {
    /// A kernel record (facility 0) at `level` with `text`.
    pub(crate) fn push(&self, level: u8, text: &str) {
        let rec = format!("{level},1,123456789,-;{text}\n");
        self.0.lock().unwrap().push_back(Fake::Rec(rec.into_bytes()));
    }
    pub(crate) fn push_raw(&self, f: Fake) {
        self.0.lock().unwrap().push_back(f);
    }
}

impl Source for Queue {
    fn next(&mut self, buf: &mut [u8]) -> Next {
        match self.0.lock().unwrap().pop_front() {
            None => Next::Empty,
            Some(Fake::Wrapped) => Next::Overwritten,
            Some(Fake::Fail) => Next::Failed("reading /dev/kmsg: EIO".into()),
            Some(Fake::Rec(r)) => {
                buf[..r.len()].copy_from_slice(&r);
                Next::Record(r.len())
            }
        }
    }
}

pub(crate) fn sda() -> DiskRefs {
    DiskRefs {
        name: "sda".into(),
        ata_port: Some(3),
        scsi: Some("2:0:0:0".into()),
        ..DiskRefs::default()
    }
}

fn nvme() -> DiskRefs {
    DiskRefs {
        name: "nvme0n1".into(),
        nvme_ctrl: Some("nvme0".into()),
        ..DiskRefs::default()
    }
}

/// Each line goes to the test running on the disk it names when it was
/// read: before the test, none; during it, the test; a line naming a disk
/// the test does not run on, none; a test on an array over both disks
/// (or all at once), both. User space's lines, info lines of no kind and
/// lines naming no watched disk are not kept; a wrapped log is counted.
#[test]
fn lines_go_to_the_test_running_on_their_disk() {
    let q = Queue::default();
    let mut k = KernelLog::with_source(
        vec![(0, "/dev/sda".into(), sda()), (1, "/dev/nvme0n1".into(), nvme())],
        Ok(Box::new(q.clone())),
    );
    let mut said = Vec::new();
    let mut log = |l: &str| said.push(l.to_string());
    q.push(6, "ata3: hard resetting link");
    k.begin(&[0], "t1", &mut log);
    q.push(
        3,
        "I/O error, dev sda, sector 8192 op 0x0:(READ) flags 0x4000 phys_seg 1 prio class 2",
    );
    k.poll(&mut log);
    q.push(4, "nvme nvme0: I/O 12 QID 1 timeout, aborting");
    q.push_raw(Fake::Rec(
        b"11,2,5,-;bootbench: I/O error, dev sda, sector 1\n".to_vec(),
    ));
    q.push(6, "ata3: EH complete");
    q.push(
        3,
        "I/O error, dev sdb, sector 0 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2",
    );
    q.push_raw(Fake::Wrapped);
    k.end(&mut log);
    q.push(3, "ata3.00: failed command: READ DMA EXT");
    k.begin(&[0, 1], "t2", &mut log);
    q.push(3, "Buffer I/O error on dev nvme0n1p1, logical block 3, async page read");
    let (lines, status) = k.finish(&mut log);
    let got: Vec<(&str, Option<&str>, KernelLogKind)> = lines
        .iter()
        .map(|l| (l.target.as_str(), l.test.as_deref(), l.kind))
        .collect();
    assert_eq!(
        got,
        [
            ("/dev/sda", None, KernelLogKind::LinkReset),
            ("/dev/sda", Some("t1"), KernelLogKind::IoError),
            ("/dev/nvme0n1", None, KernelLogKind::NvmeTimeout),
            ("/dev/sda", None, KernelLogKind::AtaException),
            ("/dev/nvme0n1", Some("t2"), KernelLogKind::IoError),
        ]
    );
    assert_eq!(lines[1].sector, Some(8192));
    assert_eq!((lines[1].level, lines[1].time_ns), (3, 123_456_789_000));
    assert_eq!(status.watched, ["/dev/sda", "/dev/nvme0n1"]);
    assert_eq!((status.overwritten, status.error), (1, None));
    assert!(status.dropped.is_empty());
    assert!(
        said.iter().any(|l| l
            == "bootbench-init: kernel: /dev/sda during t1: io_error: I/O error, dev sda, sector 8192 op 0x0:(READ) flags 0x4000 phys_seg 1 prio class 2"),
        "{said:?}"
    );
    assert!(said.iter().any(|l| l.contains("wrapped")), "{said:?}");
}

/// At most [`LINES_PER_DISK`] lines per disk are kept, the rest counted;
/// the console says a few per test and then that there are more; a log
/// that fails stops being read, and says why.
#[test]
fn lines_are_bounded_and_a_failed_log_is_recorded() {
    let q = Queue::default();
    let mut k = KernelLog::with_source(vec![(0, "/dev/sda".into(), sda())], Ok(Box::new(q.clone())));
    let mut said = Vec::new();
    let mut log = |l: &str| said.push(l.to_string());
    k.begin(&[0], "t", &mut log);
    for i in 0..LINES_PER_DISK + 5 {
        q.push(
            3,
            &format!("I/O error, dev sda, sector {i} op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2"),
        );
    }
    k.poll(&mut log);
    q.push_raw(Fake::Fail);
    q.push(3, "I/O error, dev sda, sector 99999 op 0x0:(READ)");
    let (lines, status) = k.finish(&mut log);
    assert_eq!(lines.len(), LINES_PER_DISK);
    assert_eq!(status.dropped.get("/dev/sda"), Some(&5));
    assert_eq!(status.error.as_deref(), Some("reading /dev/kmsg: EIO"));
    let kernel_lines = said
        .iter()
        .filter(|l| l.starts_with("bootbench-init: kernel: "))
        .count();
    assert_eq!(kernel_lines, CONSOLE_PER_WINDOW + 1, "{said:?}");
    assert!(said.iter().any(|l| l.contains("no longer read")), "{said:?}");
    // A log that could not be opened: no line, the reason recorded.
    let k = KernelLog::with_source(
        vec![(0, "/dev/sda".into(), sda())],
        Err("cannot read /dev/kmsg: EPERM".into()),
    );
    let (lines, status) = k.finish(&mut |_| {});
    assert!(lines.is_empty());
    assert_eq!(status.error.as_deref(), Some("cannot read /dev/kmsg: EPERM"));
}

fn link(dir: &Path, name: &str, target: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, p).unwrap();
}

/// A SATA disk and an NVMe namespace as sysfs shows them.
#[test]
fn a_disks_names_from_sysfs() {
    let t = crate::testutil::TempDir::new("kmsg-refs");
    let sys = &t.0;
    let dev = |rel: &str, v: &str| {
        let p = sys.join(rel);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("dev"), v).unwrap();
    };
    let sata = "devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0";
    std::fs::create_dir_all(sys.join(sata)).unwrap();
    dev("class/block/sda", "8:0\n");
    dev("class/block/sda/sda1", "8:1\n");
    dev("class/block/sda/sda2", "8:2\n");
    link(sys, "class/block/sda/device", &format!("../../../{sata}"));
    let r = refs_of("sda", sys);
    assert_eq!(r.ata_port, Some(3));
    assert_eq!(r.scsi.as_deref(), Some("2:0:0:0"));
    assert_eq!(r.devnums, [(8, 0), (8, 1), (8, 2)]);
    assert_eq!(r.nvme_ctrl, None);

    let ctrl = "devices/pci0000:00/0000:00:04.0/nvme/nvme0";
    std::fs::create_dir_all(sys.join(ctrl)).unwrap();
    dev("class/block/nvme0n1", "259:0\n");
    link(sys, "class/block/nvme0n1/device", &format!("../../../{ctrl}"));
    let r = refs_of("nvme0n1", sys);
    assert_eq!((r.nvme_ctrl.as_deref(), r.ata_port), (Some("nvme0"), None));
    assert_eq!(r.devnums, [(259, 0)]);
    // No sysfs at all: the controller from the name.
    assert_eq!(
        refs_of("nvme2n3", &sys.join("none")).nvme_ctrl.as_deref(),
        Some("nvme2")
    );
    assert_eq!(nvme_ctrl_of("nvme0n1p1"), None);
    assert_eq!(nvme_ctrl_of("sda"), None);
}

#[test]
fn dev_kmsg_of_a_file_reads_from_its_end() {
    let t = crate::testutil::TempDir::new("kmsg-file");
    let p = t.0.join("kmsg");
    std::fs::write(&p, b"3,1,1,-;old\n").unwrap();
    let mut k = DevKmsg::open(&p).unwrap();
    let mut buf = [0u8; 64];
    assert!(matches!(k.next(&mut buf), Next::Empty), "what was there is skipped");
    assert!(DevKmsg::open(&t.0.join("none")).is_err());
}

/// Through the run's own loop: a line the kernel logs while a test runs
/// goes to that test, one logged between two tests to none. The fake log
/// is fed from the console lines, which say when each test starts and ends.
#[test]
fn the_run_attributes_lines_to_the_test_running() {
    use crate::plan::{self, Overrides};
    use bench_core::engine::runner::{SerialRunner, Stop};
    let raw = plan::parse(
        r#"{"tests":[{"workload":"rand_read","runtime":"50ms"},{"workload":"seq_read","runtime":"50ms"}],
            "targets":["sim:ssd:64M"]}"#,
        "t.json",
    )
    .unwrap();
    let ov = Overrides {
        simulate: true,
        ..Overrides::default()
    };
    let mut plan = plan::validate(&raw, "t.json", &ov).unwrap();
    let q = Queue::default();
    let feed = q.clone();
    let mut lines = Vec::new();
    let stop = Stop::new();
    let disk = plan.targets[0].sim.unwrap().disk();
    let mut runner = SerialRunner {
        target: &disk,
        clock: &disk.clock,
    };
    let mut run = crate::run::Run {
        total: 2,
        plan: &mut plan,
        stop: &stop,
        doc: crate::run::new_doc(None, "t", 1, true, Vec::new()),
        bad: Vec::new(),
        failure: None,
        progress: &mut |l: &str| {
            if l.starts_with("[test 1/2]") && l.contains("starting") {
                feed.push(
                    3,
                    "I/O error, dev sda, sector 8 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2",
                );
            } else if l.starts_with("[test 1/2]") && l.ends_with(": ok") {
                feed.push(6, "ata3: hard resetting link");
            } else if l.starts_with("[test 2/2]") && l.contains("starting") {
                feed.push(3, "ata3.00: error: { UNC }");
            }
            lines.push(l.to_string());
        },
        after_test: &mut |_| {},
        kmsg: Some(KernelLog::with_source(
            vec![(0, "sim:ssd:64M".into(), sda())],
            Ok(Box::new(q.clone())),
        )),
    };
    assert_eq!(run.items(0, &mut runner, None), None);
    let names: Vec<String> = run.doc.tests.iter().map(|t| t.name.clone()).collect();
    let (got, _) = run.kmsg.take().unwrap().finish(&mut |_| {});
    let got: Vec<(Option<&str>, KernelLogKind)> = got.iter().map(|l| (l.test.as_deref(), l.kind)).collect();
    assert_eq!(
        got,
        [
            (Some(names[0].as_str()), KernelLogKind::IoError),
            (None, KernelLogKind::LinkReset),
            (Some(names[1].as_str()), KernelLogKind::AtaException),
        ],
        "{lines:?}"
    );
}

/// A document with kernel lines, their status and a disk's hidden
/// capacity is valid against the result schema (and one without is too).
#[test]
fn the_new_fields_are_valid_against_the_schema() {
    let q = Queue::default();
    let mut k = KernelLog::with_source(vec![(0, "/dev/sda".into(), sda())], Ok(Box::new(q.clone())));
    k.begin(&[0], "t1", &mut |_| {});
    q.push(
        3,
        "I/O error, dev sda, sector 8192 op 0x0:(READ) flags 0x4000 phys_seg 1 prio class 2",
    );
    q.push(6, "ata3: hard resetting link\x1b[0m");
    let (lines, mut status) = k.finish(&mut |_| {});
    status.dropped.insert("/dev/sda".into(), 3);
    let mut doc = crate::run::new_doc(None, "t", 1, false, Vec::new());
    doc.kernel_log = lines;
    doc.kernel_log_status = Some(status);
    let v = |p: &str, size: u64| {
        bench_core::device::capacity::ata_visible(&{
            let mut page = [0u8; 512];
            page[166..168].copy_from_slice(&0x7400u16.to_le_bytes());
            page[200..208].copy_from_slice(&(size / 512).to_le_bytes());
            page
        })
        .map(|vis| bench_core::document::result::TargetInfo {
            path: p.into(),
            hidden_capacity: Some(bench_core::device::capacity::ata_hidden(
                vis,
                Ok(size / 512 - 1),
                Err("refused".into()),
            )),
            ..bench_core::document::result::TargetInfo::default()
        })
        .unwrap()
    };
    doc.targets.push(v("/dev/sda", 64 << 20));
    let mut nvme = v("/dev/nvme0n1", 1 << 20);
    nvme.hidden_capacity = Some(bench_core::device::capacity::nvme_hidden(
        1 << 20,
        Ok((0, 0)),
        Vec::new(),
    ));
    doc.targets.push(nvme);
    let j = serde_json::to_value(&doc).unwrap();
    assert_eq!(j["kernel_log"][1]["text"], "ata3: hard resetting link\\x1b[0m");
    assert_eq!(j["targets"][0]["hidden_capacity"]["hidden_bytes"], 0);
    let errors = crate::testutil::result_schema_errors(&j);
    assert!(errors.is_empty(), "{errors:?}");
    let back: bench_core::document::result::ResultDoc = serde_json::from_value(j).unwrap();
    assert_eq!(back, doc);
}
