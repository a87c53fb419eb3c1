//! The executor's tests: plans made and run as `run` makes and runs them,
//! on loop devices.

use super::*;
use crate::plan::{self, Overrides};
use crate::run::engine::DevTarget;

/// A loop device named in "destructive" and bound to another file
/// between the plan and the run: its tests do not run (the device is not
/// the one the plan granted, and says what changed), and the other file
/// is byte-identical. The plan is made and run exactly as `run` does.
#[test]
fn a_loop_device_rebound_between_plan_and_run_is_not_written() {
    let Some(mut lo) = crate::testutil::Loop::new("plan-rebind", &vec![0u8; 4 << 20]) else {
        return;
    };
    let text = format!(
        r#"{{"targets":["{d}"],
            "tests":[{{"workload":"seq_write","bs":"64k","size":"1M"}},{{"workload":"seq_read","bs":"64k","size":"1M"}}],
            "destructive":{{"confirm":"{}","targets":["{d}"]}}}}"#,
        crate::safety::CONFIRM_PHRASE,
        d = lo.dev
    );
    let mut plan = plan::validate(&plan::parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap();
    assert!(plan.targets[0].info.writable, "granted when planned");
    let other: Vec<u8> = (0..4u32 << 20).map(|i| (i / 4096 % 251) as u8).collect();
    let other_file = lo.rebind("plan-rebind-other", &other);
    let mut lines = Vec::new();
    let doc = execute(&mut plan, &mut |l| lines.push(l.to_string()), &mut |_| {});
    assert!(
        std::fs::read(&other_file).unwrap() == other,
        "the other file is untouched"
    );
    for t in &doc.tests {
        let Status::Skipped { reason } = &t.status else {
            panic!("{} ran: {:?}", t.name, t.status)
        };
        assert!(
            reason.contains("is not the device the plan granted") && reason.contains("disk sequence number"),
            "{reason}"
        );
    }
    assert_eq!(doc.run.status, RunStatus::Error, "{:?}", doc.run.error);
}

/// A disk the kernel makes read-only after its claim (`blockdev
/// --setro` once the console says it may be written): its first write
/// test's EPERM is a refused grant, not a disk error: the test is
/// skipped with the refusal, the target's later write tests too, its
/// reads still run, and the target is no longer writable.
#[test]
fn a_write_the_kernel_refuses_after_the_claim_is_a_refusal() {
    for parallel in [false, true] {
        let Some(lo) = crate::testutil::Loop::new("run-setro", &[0u8; 4 << 20]) else {
            return;
        };
        let text = format!(
            r#"{{"targets":["{d}"], "parallel": {parallel},
                "tests":[{{"workload":"seq_write","bs":"64k","size":"1M"}},{{"workload":"seq_read","bs":"64k","size":"1M"}},
                         {{"workload":"rand_write","bs":"4k","size":"1M"}}],
                "destructive":{{"confirm":"{}","countdown":0,"targets":["{d}"]}}}}"#,
            crate::safety::CONFIRM_PHRASE,
            d = lo.dev
        );
        let mut plan = plan::validate(&plan::parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap();
        assert!(plan.targets[0].info.writable, "granted when planned");
        let dev = lo.dev.clone();
        let doc = execute(
            &mut plan,
            &mut |l| {
                if l.contains("may be written") {
                    let ro = std::process::Command::new("blockdev").args(["--setro", &dev]).status();
                    assert!(ro.is_ok_and(|s| s.success()), "blockdev --setro {dev}");
                }
            },
            &mut |_| {},
        );
        let _ = std::process::Command::new("blockdev")
            .args(["--setrw", &lo.dev])
            .status();
        let states: Vec<&Status> = doc.tests.iter().map(|t| &t.status).collect();
        let Status::Skipped { reason } = states[0] else {
            panic!("parallel {parallel}: the write test: {:?}", states[0])
        };
        assert!(
            reason.contains(&format!("writes refused: {} is read-only", lo.dev))
                && reason.contains("EPERM")
                && reason.contains("at byte 0"),
            "{reason}"
        );
        assert_eq!(states[1], &Status::Ok, "parallel {parallel}: the read runs");
        assert_eq!(
            states[2],
            &Status::Skipped { reason: reason.clone() },
            "parallel {parallel}: the later write is skipped"
        );
        assert!(doc.tests[0].steps.is_empty(), "nothing measured is kept");
        assert!(!doc.targets[0].writable);
        assert_eq!(doc.targets[0].write_refusal.as_deref(), Some(reason.as_str()));
        assert!(
            std::fs::read(&lo.files[0]).unwrap().iter().all(|&b| b == 0),
            "nothing written"
        );
    }
}

#[test]
fn execute_reports_each_test_as_it_ends() {
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
    let mut lines = Vec::new();
    let mut seen = Vec::new();
    let doc = execute(&mut plan, &mut |l| lines.push(l.to_string()), &mut |d| {
        seen.push(d.tests.len())
    });
    assert_eq!(seen, vec![1, 2], "after each test, the document so far");
    assert_eq!(doc.tests.len(), 2);
    assert_eq!(doc.run.status, RunStatus::Ok);
    assert_eq!(doc.run.config_source, "t.json");
    assert_eq!(doc.targets[0].path, "sim:ssd:64M");
    assert!(
        lines.iter().any(|l| l.contains("[test 1/2]") && l.ends_with(": ok")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("[test 2/2]") && l.ends_with(": ok")),
        "{lines:?}"
    );
}

#[test]
fn progress_lines() {
    assert_eq!(progress_text(0.4, Some(2_500_000_000)), "40% ETA 3s");
    assert_eq!(progress_text(1.2, None), "100%");
}

/// Stacks as files: each "assembled" device is a new file in `dir`.
#[derive(Debug)]
struct FileStacks {
    dir: std::path::PathBuf,
    fail: &'static str,
    up: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

#[derive(Debug)]
struct FileLive(String, std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl stacks::Live for FileLive {
    fn path(&self) -> &str {
        &self.0
    }
    fn teardown(self: Box<Self>) -> Result<(), String> {
        self.1.lock().unwrap().retain(|p| *p != self.0);
        std::fs::remove_file(&self.0).map_err(|e| e.to_string())
    }
}

impl stacks::Backend for FileStacks {
    fn build(
        &mut self,
        st: &plan::PlannedStack,
        _under: &[String],
        _mode: plan::Mode,
    ) -> Result<Box<dyn stacks::Live>, String> {
        if st.name == self.fail {
            return Err("EINVAL".to_string());
        }
        let p = self.dir.join(&st.name).to_string_lossy().into_owned();
        std::fs::write(&p, vec![0u8; 8 << 20]).map_err(|e| e.to_string())?;
        self.up.lock().unwrap().push(p.clone());
        Ok(Box::new(FileLive(p, self.up.clone())))
    }
    fn queue(&mut self, _path: &str) -> crate::disks::identity::Queue {
        crate::disks::identity::Queue::default()
    }
    fn set_read_ahead(&mut self, _path: &str, _bytes: u64) -> Result<(), String> {
        Err("files have no readahead".to_string())
    }
    fn geometry(&mut self, path: &str) -> Result<bench_core::io::Geometry, String> {
        use bench_core::io::Target;
        DevTarget::open(path, None)
            .map(|d| d.geometry())
            .map_err(|e| e.to_string())
    }
    fn remaining(&mut self) -> Vec<String> {
        self.up.lock().unwrap().clone()
    }
}

/// An interrupt while the first stack's test runs: that test is
/// `interrupted`, the layer on it is never assembled and its test is
/// skipped, the array is torn down, no all-at-once run, and the run's
/// status is `interrupted`.
#[test]
fn interrupt_during_a_stack_tears_down_and_skips_the_rest() {
    let t = crate::testutil::TempDir::new("cli-interrupt");
    let mut disks = Vec::new();
    for n in ["a", "b"] {
        let p = t.0.join(format!("{n}.img"));
        std::fs::write(&p, vec![0u8; 8 << 20]).unwrap();
        disks.push(p.to_string_lossy().into_owned());
    }
    let text = format!(
        r#"{{"tests":[{{"workload":"seq_read","runtime":"20ms"}}],
            "arrays":[{{"name":"r0","level":"raid0","members":["{}","{}"],"chunk":"64k"}}],
            "layers":[{{"name":"lv","kind":"linear","on":"r0"}}],"all_at_once":true}}"#,
        disks[0], disks[1]
    );
    let mut plan = plan::validate(&plan::parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap();
    let up = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let built = up.clone();
    let mut backend = FileStacks {
        dir: t.0.clone(),
        fail: "",
        up: up.clone(),
    };
    let stop = Stop::new();
    let mut lines = Vec::new();
    let doc = execute_with(
        &mut plan,
        &mut backend,
        &stacks::Registry::new(),
        &stop,
        &mut |l| {
            if l.starts_with("[test 3/4]") && l.contains("starting") {
                stop.request(StopReason::Interrupted);
            }
            lines.push(l.to_string());
        },
        &mut |_| {},
    );
    assert_eq!(doc.run.status, RunStatus::Interrupted, "{lines:?}");
    assert!(built.lock().unwrap().is_empty(), "r0 torn down");
    assert!(
        lines.iter().any(|l| l.contains("no md or dm device remains")),
        "{lines:?}"
    );
    let states: Vec<&str> = doc
        .tests
        .iter()
        .map(|r| match &r.status {
            Status::Ok => "ok",
            Status::Interrupted { .. } => "interrupted",
            Status::Skipped { reason } if reason == NOT_RUN_INTERRUPTED => "skipped",
            _ => "other",
        })
        .collect();
    assert_eq!(states, ["ok", "ok", "interrupted", "skipped"], "{:?}", doc.tests);
    assert!(
        !lines.iter().any(|l| l.contains("assembl") && l.contains("lv")),
        "lv was not assembled: {lines:?}"
    );
    assert!(doc.all_at_once.is_empty());
}

/// Two runs in one process (the tests run many at once): a run that
/// ends while another has a stack assembled tears down its own stacks
/// only, and the other's tests on its stack still run.
#[test]
fn a_run_tears_down_only_the_stacks_it_assembled() {
    let t = crate::testutil::TempDir::new("cli-two-runs");
    let stack_plan = |run: &str| {
        let mut disks = Vec::new();
        for n in ["a", "b"] {
            let p = t.0.join(format!("{run}-{n}.img"));
            std::fs::write(&p, vec![0u8; 8 << 20]).unwrap();
            disks.push(p.to_string_lossy().into_owned());
        }
        let text = format!(
            r#"{{"tests":[{{"workload":"seq_read","runtime":"20ms"}}],
                "arrays":[{{"name":"{run}","level":"raid0","members":["{}","{}"],"chunk":"64k"}}]}}"#,
            disks[0], disks[1]
        );
        plan::validate(&plan::parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap()
    };
    let backend = |dir: &std::path::Path| FileStacks {
        dir: dir.to_path_buf(),
        fail: "",
        up: std::sync::Arc::new(std::sync::Mutex::new(Vec::new())),
    };
    let (mut outer, mut inner) = (stack_plan("outer"), stack_plan("inner"));
    let (mut outer_be, mut inner_be) = (backend(&t.0), backend(&t.0));
    let outer_up = outer_be.up.clone();
    let mut inner_doc = None;
    let mut lines = Vec::new();
    let doc = execute_with(
        &mut outer,
        &mut outer_be,
        &stacks::Registry::new(),
        &Stop::new(),
        &mut |l| {
            if l.contains("assembled") && l.contains("\"outer\"") && inner_doc.is_none() {
                // The other run, start to end, while "outer" is up.
                inner_doc = Some(execute_with(
                    &mut inner,
                    &mut inner_be,
                    &stacks::Registry::new(),
                    &Stop::new(),
                    &mut |_| {},
                    &mut |_| {},
                ));
            }
            lines.push(l.to_string());
        },
        &mut |_| {},
    );
    let inner_doc = inner_doc.expect("the inner run ran while outer was up");
    assert_eq!(inner_doc.run.status, RunStatus::Ok, "{:?}", inner_doc.run.error);
    assert_eq!(doc.run.status, RunStatus::Ok, "{lines:?}");
    let on_outer: Vec<&Status> = doc
        .tests
        .iter()
        .filter(|r| r.target.ends_with("/outer"))
        .map(|r| &r.status)
        .collect();
    assert_eq!(on_outer, [&Status::Ok], "{lines:?}");
    assert!(outer_up.lock().unwrap().is_empty(), "outer torn down by its own run");
}

#[test]
fn execute_runs_disks_then_stacks_then_all_at_once_and_tears_down() {
    let t = crate::testutil::TempDir::new("cli-stacks");
    let mut disks = Vec::new();
    for n in ["a", "b"] {
        let p = t.0.join(format!("{n}.img"));
        std::fs::write(&p, vec![0u8; 8 << 20]).unwrap();
        disks.push(p.to_string_lossy().into_owned());
    }
    for fail in ["", "r0"] {
        let text = format!(
            r#"{{"tests":[{{"workload":"seq_read","runtime":"20ms"}}],
                "arrays":[{{"name":"r0","level":"raid0","members":["{}","{}"],"chunk":"64k"}}],
                "layers":[{{"name":"lv","kind":"linear","on":"r0"}}],"all_at_once":true}}"#,
            disks[0], disks[1]
        );
        let mut plan = plan::validate(&plan::parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap();
        let up = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut backend = FileStacks {
            dir: t.0.clone(),
            fail,
            up: up.clone(),
        };
        let mut lines = Vec::new();
        let doc = execute_with(
            &mut plan,
            &mut backend,
            &stacks::Registry::new(),
            &Stop::new(),
            &mut |l| lines.push(l.to_string()),
            &mut |_| {},
        );
        assert_eq!(doc.run.status, RunStatus::Ok, "{fail}: {lines:?}");
        assert!(up.lock().unwrap().is_empty(), "everything torn down");
        assert!(
            lines.iter().any(|l| l.contains("no md or dm device remains")),
            "{lines:?}"
        );
        let targets: Vec<&str> = doc.tests.iter().map(|r| r.target.as_str()).collect();
        assert_eq!(targets.len(), 4);
        assert_eq!(&targets[..2], &disks.iter().map(String::as_str).collect::<Vec<_>>()[..]);
        assert_eq!(doc.targets[2].kind, TargetKind::Md);
        assert_eq!(
            doc.targets[3].stack.as_ref().unwrap().on,
            Some(doc.targets[2].path.clone())
        );
        if fail.is_empty() {
            let r0 = t.0.join("r0").to_string_lossy().into_owned();
            assert_eq!(targets[2], r0);
            assert!(doc.tests.iter().all(|r| r.status == Status::Ok), "{:?}", doc.tests);
        } else {
            assert_eq!(&targets[2..], &["md:r0", "dm:lv"]);
            for r in &doc.tests[2..] {
                let Status::Skipped { reason } = &r.status else {
                    panic!("{r:?}")
                };
                assert!(reason.starts_with("not assembled"), "{reason}");
            }
        }
        assert_eq!(doc.all_at_once.len(), 1);
        let together: Vec<&str> = doc.all_at_once[0].results.iter().map(|r| r.target.as_str()).collect();
        assert_eq!(together, targets[..2].to_vec());
    }
}

/// A test past the config's `test_deadline` ends as `timeout` and keeps
/// what it measured; the next test on the same target runs (a slow
/// disk is not a hung one); a target the config names but the machine
/// lacks has its tests skipped with the reason while the other target
/// runs; `run.status` is `error` naming it; the run bound is printed
/// first and recorded.
#[test]
fn deadline_timeout_and_an_absent_target_do_not_stop_the_run() {
    // Booted (plan_with), a disk is a block device: a loop device stands in for one.
    let Some(lo) = crate::testutil::Loop::new("cli-deadline", &vec![0u8; 8 << 20]) else {
        return;
    };
    let disk = lo.dev.clone();
    let text = format!(
        r#"{{"tests":[{{"workload":"rand_read","runtime":"30s"}},{{"workload":"seq_read","runtime":"20ms"}}],
            "targets":[{{"serial":"NO-SUCH-SN"}},"{disk}"],"test_deadline":"300ms"}}"#
    );
    let raw = plan::parse(&text, "t").unwrap();
    let ov = Overrides::default();
    let refs = plan::target_refs(&raw, &ov).unwrap();
    let mut plan = plan::plan_with(&raw, "t", &ov, &refs, &[]).unwrap();
    let want_bound = 2 * (300_000_000 + u64::try_from(engine::GRACE.as_nanos()).unwrap());
    let mut lines = Vec::new();
    let doc = execute_with(
        &mut plan,
        &mut stacks::Kernel,
        &stacks::Registry::new(),
        &Stop::new(),
        &mut |l| lines.push(l.to_string()),
        &mut |_| {},
    );
    assert!(
        lines[0].starts_with("bootbench-init: run bound: at most 21 s (2 test(s)"),
        "{lines:?}"
    );
    assert_eq!(doc.run.bound_ns, Some(want_bound));
    let states: Vec<(&str, &str)> = doc
        .tests
        .iter()
        .map(|r| {
            let s = match &r.status {
                Status::Ok => "ok",
                Status::Timeout { .. } => "timeout",
                Status::Skipped { reason } if reason.contains("no whole disk has serial NO-SUCH-SN") => "absent",
                _ => "other",
            };
            (r.target.as_str(), s)
        })
        .collect();
    assert_eq!(
        states,
        [
            ("serial:NO-SUCH-SN", "absent"),
            ("serial:NO-SUCH-SN", "absent"),
            (disk.as_str(), "timeout"),
            (disk.as_str(), "ok"),
        ],
        "{:?}",
        doc.tests
    );
    let timed_out = &doc.tests[2];
    let read = timed_out
        .steps
        .last()
        .and_then(|s| s.read.as_ref())
        .map_or(0, |d| d.ios);
    assert!(read > 0, "the timed-out test keeps what it measured");
    assert_eq!(doc.run.status, RunStatus::Error);
    let why = doc.run.error.as_deref().unwrap_or_default();
    assert!(
        why.starts_with("target absent: targets[0]: no whole disk has serial NO-SUCH-SN"),
        "{why}"
    );
    // The document is valid against the schema's run and target kinds.
    let json = serde_json::to_value(&doc).unwrap();
    assert_eq!(json["targets"][0]["kind"], "absent");
}

/// A target whose I/O hangs: the test ends as `timeout` at its deadline,
/// its message says what was abandoned, the target's later tests are
/// skipped as hung, and the reason is returned for the run's status.
#[test]
fn a_hung_target_is_abandoned_and_its_later_tests_skipped() {
    let raw = plan::parse(
        r#"{"tests":[{"workload":"rand_read","runtime":"30s"},{"workload":"seq_read","runtime":"1s"}],
            "targets":["sim:ssd:64M"],"test_deadline":"200ms"}"#,
        "t",
    )
    .unwrap();
    let ov = Overrides {
        simulate: true,
        ..Overrides::default()
    };
    let mut plan = plan::validate(&raw, "t", &ov).unwrap();
    plan.targets[0].info.path = "hung:0".into();
    let hung = Arc::new(engine::hung::Hung::default());
    let mut runner = ThreadedRunner::new(Arc::clone(&hung));
    runner.grace = Duration::from_millis(200);
    let mut lines = Vec::new();
    let stop = Stop::new();
    // A temperature probe on a device that answers nothing: one record
    // per test that ran (the hung one), none for the skipped one.
    let mut probe = health::Probe::new("/nonexistent/bootbench", Some("nvme"), Duration::from_millis(50));
    let mut run = Run {
        total: 2,
        plan: &mut plan,
        stop: &stop,
        doc: new_doc(None, "t", 1, true, Vec::new()),
        bad: Vec::new(),
        failure: None,
        progress: &mut |l| lines.push(l.to_string()),
        after_test: &mut |_| {},
        kmsg: None,
    };
    let got = run.items(0, &mut runner, Some(&mut probe));
    let doc = run.doc;
    let names: Vec<&str> = probe.tests.iter().map(|t| t.test.as_str()).collect();
    assert_eq!(names, [doc.tests[0].name.as_str()]);
    assert_eq!((probe.tests[0].samples, probe.tests[0].max_temperature_c), (0, None));
    let why = got.expect("the target hung");
    assert!(why.starts_with("hung:0 hung: test "), "{why}");
    let Status::Timeout { message } = &doc.tests[0].status else {
        panic!("{:?}", doc.tests[0].status)
    };
    assert!(message.contains("I/O abandoned: step main"), "{message}");
    let Status::Skipped { reason } = &doc.tests[1].status else {
        panic!("{:?}", doc.tests[1].status)
    };
    assert_eq!(reason, &format!("not run: {why}"));
    assert_eq!(stop.reason(), None, "the deadline is cleared for later targets");
    hung.release.store(true, std::sync::atomic::Ordering::SeqCst);
}
