//! The tests' parameters: each key applied with fio's names, the engine's
//! options among them, and each bad value named with its field.

use super::*;

/// fio's io_uring options and cpus_allowed: applied with fio's names,
/// into the steps; off by default, as fio.
#[test]
fn engine_params_apply_with_fios_names() {
    use bench_core::spec::CpusPolicy;
    use bench_core::vocab::cpus::CpuSet;
    let c = raw(
        r#"{"tests":[{"workload":"rand_read","hipri":true,"sqthread_poll":true,"sqthread_poll_cpu":1,
            "cpus_allowed":" 0-1 ","cpus_allowed_policy":"split","jobs":2,"iodepth_batch_submit":4},
            {"workload":"seq_read","cpus_allowed":3}]}"#,
    );
    let t = tests_of(&c, None).unwrap();
    let p = &t[0].0.params;
    assert_eq!(
        (
            p.hipri,
            p.sqthread_poll,
            p.sqthread_poll_cpu,
            p.cpus_allowed.as_ref().map(CpuSet::as_str),
            p.cpus_allowed_policy
        ),
        (true, true, Some(1), Some("0-1"), CpusPolicy::Split)
    );
    assert_eq!(
        t[1].0.params.cpus_allowed.as_ref().map(CpuSet::as_str),
        Some("3"),
        "one CPU as a number"
    );
    let geom = bench_core::io::Geometry {
        size: 64 << 20,
        logical_block: 512,
        physical_block: 4096,
    };
    let steps = bench_core::engine::plan::expand(&t[0].0, &geom).unwrap();
    let e = &steps[0].engine;
    assert_eq!(
        (e.hipri, e.sqthread_poll, e.sqthread_poll_cpu, e.cpus_allowed.clone()),
        (true, true, Some(1), vec![0, 1])
    );
    assert_eq!(e.iodepth_batch_submit, 4);
    let plain = bench_core::engine::plan::expand(&t[1].0, &geom).unwrap();
    assert_eq!(
        plain[0].engine.iodepth_batch_submit, 1,
        "each request submitted on its own by default, as fio's iodepth_batch_submit=1"
    );
    assert_eq!(
        (e.cpus_for_job(0), e.cpus_for_job(1), e.cpus_for_job(2)),
        (vec![0], vec![1], vec![0])
    );
    let d = bench_core::spec::Params::defaults();
    assert_eq!(
        (
            d.hipri,
            d.sqthread_poll,
            d.sqthread_poll_cpu,
            d.cpus_allowed,
            d.cpus_allowed_policy
        ),
        (false, false, None, None, CpusPolicy::Shared),
        "off by default, as fio"
    );
}

/// Each bad value of the engine's options is an error that names the
/// field, the value and what is expected.
#[test]
fn each_bad_engine_param_names_the_field_the_value_and_what_is_expected() {
    let bad = [
        (
            r#"{"tests":[{"workload":"rand_read","direct":false,"hipri":true}]}"#,
            "tests[0].hipri: true, but direct is false (through the page cache); expected hipri false or direct I/O",
        ),
        (
            r#"{"tests":[{"workload":"cached_read","hipri":true}]}"#,
            "tests[0].hipri: true, but cached_read is always buffered (through the page cache); expected",
        ),
        (
            r#"{"defaults":{"direct":false},"tests":[{"workload":"seq_write","hipri":true}]}"#,
            "tests[0].hipri: true, but direct is false",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","hipri":"yes"}]}"#,
            "tests[0].hipri: \"yes\" is not a boolean; expected true or false",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","sqthread_poll":1}]}"#,
            "tests[0].sqthread_poll: 1 is not a boolean",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","sqthread_poll_cpu":2}]}"#,
            "tests[0].sqthread_poll_cpu: 2, but sqthread_poll is false; expected sqthread_poll true",
        ),
        (
            r#"{"defaults":{"sqthread_poll_cpu":2},"tests":[{"workload":"rand_read"}]}"#,
            "defaults.sqthread_poll_cpu: 2, but sqthread_poll is false",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","sqthread_poll":true,"sqthread_poll_cpu":8192}]}"#,
            "tests[0].sqthread_poll_cpu: 8192 is out of range; expected a CPU number from 0 to 8191",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","cpus_allowed":""}]}"#,
            "tests[0].cpus_allowed: \"\" is not a CPU list: it is empty; expected a CPU list such as \"0-3,6\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","cpus_allowed":"3-1"}]}"#,
            "tests[0].cpus_allowed: \"3-1\" is not a CPU list: the range 3-1 runs backwards; expected",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","cpus_allowed":"0,a"}]}"#,
            "tests[0].cpus_allowed: \"0,a\" is not a CPU list: \"a\" is not a CPU number or a range low-high",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","cpus_allowed":"0-9000"}]}"#,
            "tests[0].cpus_allowed: \"0-9000\" is out of range: CPU 9000 is above 8191; expected",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","cpus_allowed":true}]}"#,
            "tests[0].cpus_allowed: true is not a CPU list",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","cpus_allowed":"0","cpus_allowed_policy":"spread"}]}"#,
            "tests[0].cpus_allowed_policy: \"spread\" is not a CPU policy; expected \"shared\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","placement":"node"}]}"#,
            "tests[0].placement: \"node\" is not a placement; expected \"disk\" (the CPUs and memory",
        ),
        (
            r#"{"defaults":{"placement":1024},"tests":[{"workload":"rand_read"}]}"#,
            "defaults.placement: 1024 is out of range: nodes go up to 1023",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","placement":-1}]}"#,
            "tests[0].placement: -1 is not a placement",
        ),
    ];
    for (text, want) in bad {
        let e = tests_error(text);
        assert!(e.starts_with(want), "{text}: {e}");
    }
}

/// fio's ioengine (psync, io_uring, io_uring_cmd with cmd_type nvme),
/// sq_thread_idle and read_digest: applied, into the steps.
#[test]
fn ioengine_and_its_options_apply_with_fios_names() {
    use bench_core::spec::{CmdType, IoEngine};
    let c = raw(
        r#"{"tests":[{"workload":"rand_read","ioengine":"io_uring_cmd","hipri":true,"read_digest":true},
            {"workload":"seq_read","ioengine":"io_uring_cmd","cmd_type":"nvme","sqthread_poll":true,
             "sq_thread_idle":"20ms"},
            {"workload":"seq_read","ioengine":"io_uring"},{"workload":"rand_read","ioengine":"psync"},
            {"workload":"seq_read"}]}"#,
    );
    let t = tests_of(&c, None).unwrap();
    let got: Vec<_> = t
        .iter()
        .map(|(s, _)| (s.params.ioengine, s.params.cmd_type, s.params.read_digest))
        .collect();
    assert_eq!(
        got,
        [
            (Some(IoEngine::IoUringCmd), Some(CmdType::Nvme), true),
            (Some(IoEngine::IoUringCmd), Some(CmdType::Nvme), false),
            (Some(IoEngine::IoUring), None, false),
            (Some(IoEngine::Psync), None, false),
            (None, None, false),
        ],
        "cmd_type nvme is io_uring_cmd's default"
    );
    assert_eq!(t[1].0.params.sq_thread_idle, Some(Nanos(20_000_000)));
    let geom = bench_core::io::Geometry {
        size: 64 << 20,
        logical_block: 512,
        physical_block: 4096,
    };
    let e = &bench_core::engine::plan::expand(&t[0].0, &geom).unwrap()[0].engine;
    assert_eq!(
        (e.ioengine, e.hipri, e.read_digest, e.needs_ring()),
        (Some(IoEngine::IoUringCmd), true, true, true)
    );
    let e = &bench_core::engine::plan::expand(&t[1].0, &geom).unwrap()[0].engine;
    assert_eq!(e.sq_thread_idle, Some(Nanos(20_000_000)));
    let e = &bench_core::engine::plan::expand(&t[2].0, &geom).unwrap()[0].engine;
    assert!(e.needs_ring(), "ioengine io_uring: a ring at iodepth 1 too");
    // Absent from the document when not given: older documents read the same.
    let json = serde_json::to_value(&t[4].0.params).unwrap();
    for key in ["ioengine", "cmd_type", "sq_thread_idle", "read_digest"] {
        assert!(json.get(key).is_none(), "{key} in {json}");
    }
}

/// Each bad value of ioengine, cmd_type and sq_thread_idle names the
/// field, the value and what is expected.
#[test]
fn each_bad_ioengine_param_names_the_field_the_value_and_what_is_expected() {
    let bad = [
        (
            r#"{"tests":[{"workload":"rand_read","ioengine":"libaio"}]}"#,
            "tests[0].ioengine: \"libaio\" is not an I/O engine; expected \"psync\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","ioengine":"psync","iodepth":8}]}"#,
            "tests[0].ioengine: \"psync\", but iodepth is 8; expected ioengine \"io_uring\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","ioengine":"psync","hipri":true}]}"#,
            "tests[0].ioengine: \"psync\", but hipri is true; expected ioengine \"io_uring\"",
        ),
        (
            r#"{"tests":[{"workload":"seq_read","ioengine":"io_uring_cmd","direct":false}]}"#,
            "tests[0].ioengine: \"io_uring_cmd\", but seq_read reads through the page cache; expected direct I/O",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","cmd_type":"nvme"}]}"#,
            "tests[0].cmd_type: \"nvme\", but ioengine is not \"io_uring_cmd\"; expected ioengine \"io_uring_cmd\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","ioengine":"io_uring_cmd","cmd_type":"scsi"}]}"#,
            "tests[0].cmd_type: \"scsi\" is not a passthrough command set; expected \"nvme\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","sq_thread_idle":"10ms"}]}"#,
            "tests[0].sq_thread_idle: 10ms, but sqthread_poll is false; expected sqthread_poll true",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","sqthread_poll":true,"sq_thread_idle":"1500us"}]}"#,
            "tests[0].sq_thread_idle: \"1500us\" is out of range; expected whole milliseconds from 1ms",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","read_digest":"yes"}]}"#,
            "tests[0].read_digest: \"yes\" is not a boolean",
        ),
    ];
    for (text, want) in bad {
        let e = tests_error(text);
        assert!(e.starts_with(want), "{text}: {e}");
    }
    // From the defaults, io_uring_cmd and psync apply where they fit.
    let c = raw(
        r#"{"defaults":{"ioengine":"psync"},"tests":[{"workload":"rand_read","iodepth":4},{"workload":"seq_read"}]}"#,
    );
    let t = tests_of(&c, None).unwrap();
    assert_eq!(
        (t[0].0.params.ioengine, t[1].0.params.ioengine),
        (None, Some(bench_core::spec::IoEngine::Psync))
    );
}

/// From the defaults, hipri applies to the direct tests only (as verify
/// to the write tests); a test that turns sqthread_poll off drops the
/// defaults' CPU.
#[test]
fn engine_params_from_the_defaults_apply_where_they_fit() {
    let c = raw(
        r#"{"defaults":{"hipri":true,"sqthread_poll":true,"sqthread_poll_cpu":0},
            "tests":[{"workload":"rand_read"},{"workload":"seq_read","direct":false},
                     {"workload":"rand_read","sqthread_poll":false}]}"#,
    );
    let t = tests_of(&c, None).unwrap();
    let got: Vec<(bool, bool, Option<u32>)> = t
        .iter()
        .map(|(s, _)| (s.params.hipri, s.params.sqthread_poll, s.params.sqthread_poll_cpu))
        .collect();
    assert_eq!(
        got,
        [(true, true, Some(0)), (false, true, Some(0)), (true, false, None)]
    );
    let c = raw(r#"{"profile":"quick","defaults":{"hipri":true}}"#);
    for (s, _) in tests_of(&c, c.profile.as_deref()).unwrap() {
        let buffered = bench_core::engine::plan::buffered(s.workload, &s.params);
        assert_eq!(s.params.hipri, !buffered, "{}", s.name);
    }
}

/// Every key of a test reaches its parameters.
#[test]
fn params_apply_each_key() {
    let c = raw(
        r#"{"tests":[{"workload":"rand_rw","bs":"16k","size":"1M","offset":"4k","length":"8M","zone_bytes":"2M",
            "runtime":"3s","ramp_time":"500ms","sample_interval":"100ms","iodepth":"8","jobs":2,"rwmixread":60,
            "rwmix_order":"ratio","flush_every":4,"points":5,"seed":9,"direct":false,"fsync_freq":"100","end_fsync":true,
            "end_close":true,"min_ios":64,"file_num":"128","max_bs":"64k","passes":5,"warmup":"1","fill":true,"pause":"5s",
            "norandommap":true}]}"#,
    );
    let t = tests_of(&c, None).unwrap();
    let p = &t[0].0.params;
    assert_eq!(p.bs, Bytes(16384));
    assert_eq!(p.size, Some(Bytes(1 << 20)));
    assert_eq!(p.offset, Bytes(4096));
    assert_eq!(p.length, Some(Bytes(8 << 20)));
    assert_eq!(p.zone_bytes, Bytes(2 << 20));
    assert_eq!(p.runtime, Some(Nanos(3_000_000_000)));
    assert_eq!(p.ramp_time, Nanos(500_000_000));
    assert_eq!(p.sample_interval, Nanos(100_000_000));
    assert_eq!(
        (p.iodepth, p.jobs, p.rwmixread, p.flush_every, p.points, p.seed),
        (8, 2, 60, 4, 5, 9)
    );
    assert_eq!((p.direct, p.fsync_freq, p.end_fsync), (false, 100, Some(true)));
    assert!(p.end_close);
    assert_eq!((p.min_ios, p.file_num), (64, 128));
    assert_eq!(p.rwmix_order, bench_core::spec::MixOrder::Ratio);
    assert!(p.norandommap);
    assert_eq!(p.max_bs, Bytes(64 << 10));
    assert_eq!(
        (p.passes, p.warmup, p.fill, p.pause),
        (5, 1, true, Nanos(5_000_000_000))
    );
}

/// `runtime: 0` is fio's: no time bound, the test ends at its `size` (the
/// default 5 s would cut a dd-sized read short on a slow disk); without a
/// size it is an error that names the field.
#[test]
fn runtime_zero_means_no_time_bound() {
    for zero in ["0", "\"0s\""] {
        let c = raw(&format!(
            r#"{{"tests":[{{"workload":"seq_read","bs":"10M","size":"1G","runtime":{zero}}}]}}"#
        ));
        let t = tests_of(&c, None).unwrap();
        assert_eq!(t[0].0.params.runtime, None, "{zero}");
        assert_eq!(t[0].0.params.size, Some(Bytes(1 << 30)));
        let c = raw(&format!(r#"{{"tests":[{{"workload":"seq_read","runtime":{zero}}}]}}"#));
        let t = tests_of(&c, None).unwrap();
        let g = bench_core::io::Geometry {
            size: 1 << 30,
            logical_block: 512,
            physical_block: 4096,
        };
        let e = bench_core::engine::plan::expand(&t[0].0, &g).unwrap_err().to_string();
        assert!(
            e.starts_with("runtime = 0") && e.contains("a runtime or a size bound"),
            "{e}"
        );
    }
    // Without it the default runtime stays: size and 5 s, whichever first.
    let c = raw(r#"{"tests":[{"workload":"seq_read","size":"1G"}]}"#);
    assert_eq!(
        tests_of(&c, None).unwrap()[0].0.params.runtime,
        Some(Nanos::from_secs(5))
    );
}

/// Each bad value of a test's (or the defaults') key is an error that
/// starts with the field and the value.
#[test]
fn each_bad_param_names_the_field_and_the_value() {
    let bad = [
        (
            r#"{"tests":[{"workload":"rand_read"},{"workload":"rand_read","bs":"4q"}]}"#,
            "tests[1].bs: \"4q\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","iodepth":0}]}"#,
            "tests[0].iodepth: 0",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","iodepth":-3}]}"#,
            "tests[0].iodepth: -3",
        ),
        (
            r#"{"tests":[{"workload":"rand_rw","rwmixread":101}]}"#,
            "tests[0].rwmixread: 101",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","runtime":"5 parsecs"}]}"#,
            "tests[0].runtime: \"5 parsecs\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","size":1.5}]}"#,
            "tests[0].size: 1.5",
        ),
        (
            r#"{"tests":[{"workload":"rand_reed"}]}"#,
            "tests[0].workload: \"rand_reed\"",
        ),
        (
            r#"{"defaults":{"bs":"x"},"tests":[{"workload":"rand_read"}]}"#,
            "defaults.bs: \"x\"",
        ),
        (r#"{"profile":"fast"}"#, "profile: \"fast\""),
        (r#"{}"#, "nothing to run"),
        (
            r#"{"tests":[{"workload":"seq_write","verify":"yes"}]}"#,
            "tests[0].verify: \"yes\" is not a boolean; expected true or false",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","verify":true}]}"#,
            "tests[0].verify: true, but rand_read does not write; expected false",
        ),
        (
            r#"{"defaults":{"verify":1},"tests":[{"workload":"seq_write"}]}"#,
            "defaults.verify: 1 is not a boolean",
        ),
        (
            r#"{"tests":[{"workload":"seq_read","direct":"no"}]}"#,
            "tests[0].direct: \"no\" is not a boolean",
        ),
        (
            r#"{"tests":[{"workload":"rand_write","fsync_freq":-1}]}"#,
            "tests[0].fsync_freq: -1",
        ),
        (
            r#"{"tests":[{"workload":"rand_rw","rwmix_order":"sysbench"}]}"#,
            "tests[0].rwmix_order: \"sysbench\" is not a mix order; expected \"random\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_write","file_num":0}]}"#,
            "tests[0].file_num: 0 is out of range; expected a whole number of files from 1 to 4096",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","min_ios":"many"}]}"#,
            "tests[0].min_ios: \"many\"",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","passes":0}]}"#,
            "tests[0].passes: 0 is out of range",
        ),
        (
            r#"{"tests":[{"workload":"rand_read","warmup":-1}]}"#,
            "tests[0].warmup: -1",
        ),
        (
            r#"{"tests":[{"workload":"seq_read","fill":"yes"}]}"#,
            "tests[0].fill: \"yes\" is not a boolean",
        ),
        (
            r#"{"defaults":{"pause":"soon"},"tests":[{"workload":"seq_write"}]}"#,
            "defaults.pause: \"soon\" is not a duration",
        ),
    ];
    for (text, want) in bad {
        let e = tests_error(text);
        assert!(e.starts_with(want), "{text}: {e}");
    }
    // The size message says what is expected.
    let e = tests_error(bad[0].0);
    assert!(e.contains(EXPECTED), "{e}");
}

/// `verify` reaches the write tests' parameters; from the defaults it
/// leaves read tests alone (as fio's verify applies to writes).
#[test]
fn verify_applies_to_write_tests() {
    let c = raw(r#"{"defaults": {"verify": true},
            "tests":[{"workload":"seq_write"},{"workload":"seq_read"},{"workload":"rand_rw","verify":false}]}"#);
    let t = tests_of(&c, None).unwrap();
    let v: Vec<bool> = t.iter().map(|(s, _)| s.params.verify).collect();
    assert_eq!(v, [true, false, false]);
    let c = raw(r#"{"profile":"quick","defaults":{"verify":true}}"#);
    for (s, _) in tests_of(&c, c.profile.as_deref()).unwrap() {
        assert_eq!(s.params.verify, s.workload.writes(), "{}", s.name);
    }
}

#[test]
fn defaults_seed_and_names() {
    let c = raw(r#"{"seed": 7, "defaults": {"iodepth": 4},
            "tests":[{"workload":"rand_read"},{"workload":"rand_read"},{"workload":"seq_read","iodepth":1,"name":"mine"}]}"#);
    let t = tests_of(&c, None).unwrap();
    assert_eq!(t[0].0.params.iodepth, 4);
    assert_eq!(t[0].0.params.seed, 7);
    assert_eq!(t[2].0.params.iodepth, 1);
    assert_eq!(t[2].0.name, "mine");
    assert_ne!(t[0].0.name, t[1].0.name, "names are unique");
    assert!(t[1].0.name.starts_with(&t[0].0.name));
    assert_eq!(t[0].1, Origin::User(0));
}

/// fio's steady-state options: `ss` and `ss_dur` together make the wait,
/// with `ss_ramp`, `ss_interval` (1 s) and `ss_max` (`ss_ramp` plus ten
/// windows) as given or by default, from the defaults too; into the steps.
#[test]
fn steady_state_params_apply_with_fios_names() {
    use bench_core::spec::{SteadyCriterion, SteadySpec};
    use bench_core::vocab::units::Nanos;
    let c = raw(r#"{"defaults":{"ss":"iops_slope:0.5%","ss_dur":"10s"},
            "tests":[{"workload":"rand_write","ss_ramp":"5s"},
            {"workload":"seq_read","ss":"bw:20%","ss_dur":"3s","ss_interval":"500ms","ss_max":"1m"},
            {"workload":"rand_read"}]}"#);
    let t = tests_of(&c, None).unwrap();
    let s = |i: usize| t[i].0.params.steady.expect("a wait");
    assert_eq!(
        s(0),
        SteadySpec {
            ss: SteadyCriterion::parse("iops_slope:0.5%").unwrap(),
            ss_dur: Nanos::from_secs(10),
            ss_ramp: Nanos::from_secs(5),
            ss_interval: Nanos::from_secs(1),
            ss_max: Nanos::from_secs(105),
        }
    );
    assert_eq!(s(0).ss.to_string(), "iops_slope:0.5%");
    assert_eq!(
        (
            s(1).ss.to_string(),
            s(1).ss_dur,
            s(1).ss_interval,
            s(1).ss_max,
            s(1).window()
        ),
        (
            "bw:20%".to_string(),
            Nanos::from_secs(3),
            Nanos::from_millis(500),
            Nanos::from_secs(60),
            6
        )
    );
    assert_eq!(s(2).ss_max, Nanos::from_secs(100), "ten windows of the defaults'");
    let geom = bench_core::io::Geometry {
        size: 64 << 20,
        logical_block: 512,
        physical_block: 4096,
    };
    let steps = bench_core::engine::plan::expand(&t[0].0, &geom).unwrap();
    assert_eq!(steps[0].steady, Some(s(0)));
    // The wait is inside the test's deadline.
    let plain = bench_core::spec::TestSpec {
        params: bench_core::spec::Params {
            steady: None,
            ..t[0].0.params.clone()
        },
        ..t[0].0.clone()
    };
    let without = bench_core::engine::plan::deadline(&bench_core::engine::plan::expand(&plain, &geom).unwrap());
    assert_eq!(
        bench_core::engine::plan::deadline(&steps).0 - without.0,
        2 * s(0).ss_max.0,
        "twice each step's budget"
    );
    assert!(raw_tests_params_none(r#"{"tests":[{"workload":"rand_read"}]}"#));
}

fn raw_tests_params_none(text: &str) -> bool {
    tests_of(&raw(text), None).unwrap()[0].0.params.steady.is_none()
}

/// Each bad steady-state option names the field, the value and what is
/// expected; so do the checks against the workload and the window.
#[test]
fn each_bad_steady_state_param_names_the_field_the_value_and_what_is_expected() {
    let bad = [
        (
            r#"{"tests":[{"workload":"rand_write","ss":"iops_slop:1%","ss_dur":"5s"}]}"#,
            "tests[0].ss: \"iops_slop:1%\" is not a steady-state criterion; expected one of iops, iops_slope, bw, bw_slope",
        ),
        (
            r#"{"tests":[{"workload":"rand_write","ss":"iops:0%","ss_dur":"5s"}]}"#,
            "tests[0].ss: \"iops:0%\" is not a steady-state criterion; expected",
        ),
        (
            r#"{"tests":[{"workload":"rand_write","ss":"iops:120%","ss_dur":"5s"}]}"#,
            "tests[0].ss: \"iops:120%\" is not a steady-state criterion",
        ),
        (
            r#"{"tests":[{"workload":"rand_write","ss":5,"ss_dur":"5s"}]}"#,
            "tests[0].ss: 5 is not a steady-state criterion",
        ),
        (
            r#"{"tests":[{"workload":"rand_write","ss":"iops:5%"}]}"#,
            "tests[0].ss: iops:5% without ss_dur; expected ss_dur too",
        ),
        (
            r#"{"tests":[{"workload":"rand_write","ss_dur":"5s"}]}"#,
            "tests[0].ss_dur: given without ss; expected ss too",
        ),
        (
            r#"{"defaults":{"ss_max":"5m"},"tests":[{"workload":"rand_write"}]}"#,
            "defaults.ss_max: given without ss; expected ss too",
        ),
        (
            r#"{"tests":[{"workload":"rand_write","ss":"iops:5%","ss_dur":"five"}]}"#,
            "tests[0].ss_dur: \"five\" is not a duration",
        ),
    ];
    for (text, want) in bad {
        let e = tests_error(text);
        assert!(e.starts_with(want), "{text}: {e}");
    }
}

/// `placement`: the disk's node by default, `any` or a node number from
/// the config, in `defaults` or per test, recorded in the params.
#[test]
fn placement_follows_the_disk_unless_the_config_says() {
    use bench_core::vocab::cpus::Placement;
    let c = raw(r#"{"defaults":{"placement":"any"},"tests":[{"workload":"rand_read"},
            {"workload":"seq_read","placement":1},{"workload":"seq_read","placement":"disk"}]}"#);
    let t = tests_of(&c, None).unwrap();
    let got: Vec<Placement> = t.iter().map(|x| x.0.params.placement).collect();
    assert_eq!(got, [Placement::Any, Placement::Node(1), Placement::Disk]);
    assert_eq!(bench_core::spec::Params::defaults().placement, Placement::Disk);
    let j = serde_json::to_value(&t[1].0.params).unwrap();
    assert_eq!(j["placement"], 1);
    let back: bench_core::spec::Params = serde_json::from_value(j).unwrap();
    assert_eq!(back.placement, Placement::Node(1));
}
