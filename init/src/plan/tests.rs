//! The plan stage as a whole: config text in, plan or one-line error out.

use bench_core::io::Geometry;
use bench_core::result::{StackClass, TargetKind};
use bench_core::size::EXPECTED;
use bench_core::spec::Workload;
use bench_core::units::{Bytes, Nanos};

use super::model::*;
use super::raw::*;
use super::resolve::*;
use super::validate::*;
use crate::safety::{self, TargetRef};

fn raw(text: &str) -> RawConfig {
    parse(text, "t.json").unwrap()
}

/// A parse error's message as validation's are: without the file's name
/// before it and the position after it.
fn bare(e: ConfigError) -> ConfigError {
    let m = e.0.strip_prefix("t.json: ").unwrap_or(&e.0);
    let m = match m.rfind(" at line ") {
        Some(i) if m[i..].contains(" column ") => &m[..i],
        _ => m,
    };
    ConfigError(m.to_string())
}

/// The first error of a config's text: from parsing it ([`bare`]), else
/// from its tests (the profile it names included).
fn tests_error(text: &str) -> String {
    match parse(text, "t.json") {
        Err(e) => bare(e).0,
        Ok(c) => tests_of(&c, c.profile.as_deref()).unwrap_err().0,
    }
}

#[test]
fn parses_the_documented_example() {
    let c = raw(r#"{ "profile": "quick", "seed": 42,
             "targets": ["/dev/loop0", {"path": "/dev/sdb"}, {"serial": "S3Z"}, {"wwn": "0x5002"}],
             "defaults": { "runtime": "2s", "bs": "8k" },
             "tests": [ {"workload": "rand_read", "name": "x", "iodepth": 32, "bs": 4096} ],
             "destructive": { "confirm": "I understand this destroys data", "targets": ["/dev/loop0"],
                              "allow_overwrite_signatures": false } }"#);
    assert_eq!(c.profile.as_deref(), Some("quick"));
    assert_eq!(c.seed, Some(42));
    let refs: Vec<TargetRef> = c.targets.iter().map(|t| t.to_ref("t").unwrap()).collect();
    assert_eq!(
        refs,
        vec![
            TargetRef::Path("/dev/loop0".into()),
            TargetRef::Path("/dev/sdb".into()),
            TargetRef::Serial("S3Z".into()),
            TargetRef::Wwn("0x5002".into())
        ]
    );
    assert_eq!(c.tests[0].iodepth.as_ref().map(|w| w.n), Some(32));
    assert_eq!(c.destructive.unwrap().confirm.as_deref(), Some(safety::CONFIRM_PHRASE));
}

#[test]
fn parse_errors_are_one_line_without_control_characters() {
    // Found by fuzz/config: serde quotes an unknown key as written, so an
    // escaped newline in a key made a two-line message.
    let cases = [
        (r#"{"a\nb": 1}"#, r"unknown field `a\nb`"),
        (
            r#"{"tests": [{"workload": "seq_read", "\u001b[2J": 1}]}"#,
            r"unknown field `\u{1b}[2J`",
        ),
        (r#"{"profile": "quick", "\r\t": 1}"#, r"unknown field `\r\t`"),
    ];
    for (text, want) in cases {
        let e = parse(text, "t.json").unwrap_err().0;
        assert!(e.contains(want), "{text}: {e}");
        assert!(!e.chars().any(char::is_control), "{text}: {e:?}");
    }
    // A test's name is quoted as written in plan errors.
    let c = raw(r#"{"tests": [{"workload": "seq_read", "name": "x\ny", "bs": 1000}]}"#);
    let ov = Overrides {
        profile: None,
        targets: vec!["sim:ssd:64M".into()],
        simulate: true,
        withhold_writes: None,
    };
    let e = validate(&c, "t.json", &ov).unwrap_err().0;
    assert!(e.contains(r"(x\ny)") && !e.contains('\n'), "{e}");
    let e = parse("{}x", "a\nb.json").unwrap_err().0;
    assert!(e.starts_with(r"a\nb.json: trailing characters"), "{e}");
}

#[test]
fn a_bad_target_is_shown_as_written() {
    let cases = [
        (r#"{"targets": [""]}"#, r#"targets[0]: {"path":""} is not a target"#),
        (
            r#"{"targets": ["/dev/a", {"path": "/dev/x", "serial": "S1"}]}"#,
            r#"targets[1]: {"path":"/dev/x","serial":"S1"} is not a target"#,
        ),
        (r#"{"targets": [{}]}"#, "targets[0]: {} is not a target"),
        (
            r#"{"targets": [{"wwn": ""}]}"#,
            r#"targets[0]: {"wwn":""} is not a target"#,
        ),
    ];
    for (text, want) in cases {
        let c = raw(text);
        let e = c
            .targets
            .iter()
            .enumerate()
            .find_map(|(i, t)| t.to_ref(&format!("targets[{i}]")).err())
            .unwrap()
            .0;
        assert!(
            e.contains(want) && !e.contains("TargetObj") && e.contains("exactly one of"),
            "{text}: {e}"
        );
    }
}

#[test]
fn lists_where_objects_belong_are_refused() {
    // serde's derived structs would read each of these field by field.
    let cases = [
        (
            r#"["quick", 42]"#,
            "config: [\"quick\",42] is a list; expected an object",
        ),
        (
            r#"{"defaults": ["2s"]}"#,
            "defaults: [\"2s\"] is a list; expected an object",
        ),
        (
            r#"{"destructive": ["I understand this destroys data", ["/dev/sda"], true]}"#,
            "destructive: [\"I understand this destroys data\",[\"/dev/sda\"],true] is a list",
        ),
        (
            r#"{"tests": [{"workload": "seq_read"}, ["seq_write", null, "1M"]]}"#,
            "tests[1]: [\"seq_write\",null,\"1M\"] is a list; expected an object",
        ),
        (
            r#"{"arrays": [["r0", "raid0", ["/dev/sdb", "/dev/sdc"]]]}"#,
            "arrays[0]: [\"r0\",\"raid0\",[\"/dev/sdb\",\"/dev/sdc\"]] is a list",
        ),
        (
            r#"{"layers": [["c", "crypt", "/dev/sdb"]]}"#,
            "layers[0]: [\"c\",\"crypt\",\"/dev/sdb\"] is a list",
        ),
    ];
    for (text, want) in cases {
        let e = parse(text, "t.json").unwrap_err().0;
        assert!(e.starts_with("t.json: ") && e.contains(want), "{text}: {e}");
    }
    // A long list is shown cut short, on one line.
    let e = parse(&format!("[{}]", vec!["\"quick\""; 40].join(",")), "t.json")
        .unwrap_err()
        .0;
    assert!(e.contains("...") && e.len() < 200 && !e.contains('\n'), "{e}");
    // Objects are still read.
    assert!(parse(
        r#"{"defaults": {"runtime": "2s"}, "tests": [{"workload": "seq_read"}]}"#,
        "t"
    )
    .is_ok());
}

#[test]
fn syntax_and_unknown_keys_are_errors_with_position() {
    let cases = [
        ("{\"profile\": \"quick\",}", "line 1"),
        ("{\"profil\": \"quick\"}", "unknown field `profil`"),
        (
            "{\"tests\": [{\"workload\": \"rand_read\", \"bsize\": 4}]}",
            "unknown field `bsize`",
        ),
        ("{\"defaults\": {\"iodeph\": 4}}", "unknown field `iodeph`"),
        (
            "{\"targets\": [{\"path\": \"/x\", \"colour\": 1}]}",
            "unknown field `colour`",
        ),
        ("{\"destructive\": {\"confrim\": \"x\"}}", "unknown field `confrim`"),
        ("{\"tests\": [{\"bs\": 4}]}", "missing field `workload`"),
    ];
    for (text, want) in cases {
        let e = parse(text, "t.json").unwrap_err().0;
        assert!(
            e.contains(want) && e.contains("t.json") && e.contains("column"),
            "{text}: {e}"
        );
    }
}

#[test]
fn target_forms() {
    let bad = [
        r#"{"targets":[{}]}"#,
        r#"{"targets":[{"path":"/a","serial":"b"}]}"#,
        r#"{"targets":[""]}"#,
    ];
    for text in bad {
        let e = raw(text).targets[0].to_ref("targets[0]").unwrap_err().0;
        assert!(e.starts_with("targets[0]: "), "{e}");
    }
    assert!(parse(r#"{"targets":[3]}"#, "t").is_err());
}

/// fio's io_uring options and cpus_allowed: applied with fio's names,
/// into the steps; each validation error names the field, the value and
/// what is expected.
#[test]
fn engine_params_apply_and_their_errors_name_the_field() {
    use bench_core::spec::CpusPolicy;
    let c = raw(
        r#"{"tests":[{"workload":"rand_read","hipri":true,"sqthread_poll":true,"sqthread_poll_cpu":1,
            "cpus_allowed":" 0-1 ","cpus_allowed_policy":"split","jobs":2},
            {"workload":"seq_read","cpus_allowed":3}]}"#,
    );
    let t = tests_of(&c, None).unwrap();
    let p = &t[0].0.params;
    assert_eq!(
        (
            p.hipri,
            p.sqthread_poll,
            p.sqthread_poll_cpu,
            p.cpus_allowed.as_deref(),
            p.cpus_allowed_policy
        ),
        (true, true, Some(1), Some("0-1"), CpusPolicy::Split)
    );
    assert_eq!(t[1].0.params.cpus_allowed.as_deref(), Some("3"), "one CPU as a number");
    let geom = bench_core::io::Geometry {
        size: 64 << 20,
        logical_block: 512,
        physical_block: 4096,
    };
    let steps = bench_core::plan::expand(&t[0].0, &geom).unwrap();
    let e = &steps[0].engine;
    assert_eq!(
        (e.hipri, e.sqthread_poll, e.sqthread_poll_cpu, e.cpus_allowed.clone()),
        (true, true, Some(1), vec![0, 1])
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
    ];
    for (text, want) in bad {
        let e = tests_error(text);
        assert!(e.starts_with(want), "{text}: {e}");
    }

    // From the defaults, hipri applies to the direct tests only (as verify
    // to the write tests); a test that turns sqthread_poll off drops the
    // defaults' CPU.
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
        let buffered = bench_core::plan::buffered(s.workload, &s.params);
        assert_eq!(s.params.hipri, !buffered, "{}", s.name);
    }
}

#[test]
fn params_apply_each_key_and_name_the_field_on_error() {
    let c = raw(
        r#"{"tests":[{"workload":"rand_rw","bs":"16k","size":"1M","offset":"4k","length":"8M","zone_bytes":"2M",
            "runtime":"3s","ramp_time":"500ms","sample_interval":"100ms","iodepth":"8","jobs":2,"rwmixread":60,
            "rwmix_order":"ratio","flush_every":4,"points":5,"seed":9,"direct":false,"fsync_freq":"100","end_fsync":true,
            "min_ios":64,"file_num":"128","max_bs":"64k","passes":5,"warmup":"1","fill":true,"pause":"5s",
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
    assert_eq!((p.min_ios, p.file_num), (64, 128));
    assert_eq!(p.rwmix_order, bench_core::spec::MixOrder::Ratio);
    assert!(p.norandommap);
    assert_eq!(p.max_bs, Bytes(64 << 10));
    assert_eq!(
        (p.passes, p.warmup, p.fill, p.pause),
        (5, 1, true, Nanos(5_000_000_000))
    );

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

#[test]
fn on_finish_key() {
    for v in ["poweroff", "reboot", "halt"] {
        let c = raw(&format!(r#"{{"profile":"quick","on_finish":"{v}"}}"#));
        assert_eq!(c.on_finish.map(|o| o.to_string()).as_deref(), Some(v));
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        assert!(validate(&c, "t.json", &ov).is_ok(), "{v}");
    }
    let e = tests_error(r#"{"profile":"quick","on_finish":"explode"}"#);
    assert!(
        e.starts_with("on_finish: \"explode\" is not an on_finish action"),
        "{e}"
    );
    assert!(e.contains("poweroff, reboot, halt"), "{e}");
    assert!(parse(r#"{"on_finish": 3}"#, "t.json").is_err());
}

#[test]
fn plan_with_explicit_targets_and_the_stick_excluded() {
    let c = raw(r#"{"profile":"quick"}"#);
    let ov = Overrides {
        simulate: true,
        ..Overrides::default()
    };
    let refs = vec![
        (TargetRef::Path("sim:hdd:1G".into()), "discovered".to_string()),
        (TargetRef::Path("sim:ssd:64M".into()), "discovered".to_string()),
    ];
    let p = plan_with(&c, "stick", &ov, &refs, &[]).unwrap();
    assert_eq!(p.targets.len(), 2);
    assert_eq!(p.config_source, "stick");
    assert!(p.items.iter().any(|i| i.target == 1));
    // A target on a disk that may never be one is an error naming it.
    let e = plan_with(&c, "stick", &ov, &refs, &["sim:ssd:64M".to_string()])
        .unwrap_err()
        .0;
    assert!(e.starts_with("discovered: \"sim:ssd:64M\" is on the boot stick"), "{e}");
    assert!(plan_with(&c, "stick", &ov, &[], &[])
        .unwrap_err()
        .0
        .starts_with("targets: none"));
    // The same as validate for a config with targets.
    let c2 = raw(r#"{"profile":"quick","targets":["sim:hdd:1G"]}"#);
    let via_validate = validate(&c2, "t", &ov).unwrap();
    let via_plan = plan_with(&c2, "t", &ov, &target_refs(&c2, &ov).unwrap(), &[]).unwrap();
    assert_eq!(via_validate.items, via_plan.items);
}

/// A config that names a disk this machine lacks writes nothing: booted
/// (`plan_with`), a disk the config names as a target, or an entry of
/// "destructive" that no disk answers, withholds every write (the
/// present disk keeps its reads, its write test is skipped with the
/// reason, and it gets no grant); live (`validate`), the same config
/// with the disk named by path writes.
#[test]
fn a_config_naming_an_absent_disk_writes_nothing() {
    // Booted, a disk is a block device: a loop device stands in for one.
    let Some(lo) = crate::testutil::Loop::new("config-absent-writes", &vec![0u8; 4 << 20]) else {
        return;
    };
    let disk = lo.dev.clone();
    let tests = r#"[{"workload":"seq_read","size":"1M"},{"workload":"seq_write","size":"1M"}]"#;
    let phrase = safety::CONFIRM_PHRASE;
    let ov = Overrides::default();
    let actions = |p: &Plan| -> Vec<Action> {
        p.items
            .iter()
            .filter(|it| it.target == 0)
            .map(|it| it.action.clone())
            .collect()
    };
    for (targets, named) in [
        (
            format!(r#"["{disk}",{{"serial":"NO-SUCH-MEMBER"}}]"#),
            r#"[{"serial":"NO-SUCH-OTHER"}]"#,
        ),
        (format!(r#"["{disk}"]"#), r#"[{"serial":"NO-SUCH-MEMBER"}]"#),
    ] {
        let c = raw(&format!(
            r#"{{"tests":{tests},"targets":{targets},"destructive":{{"confirm":"{phrase}","targets":{named}}}}}"#
        ));
        let p = plan_with(&c, "t", &ov, &target_refs(&c, &ov).unwrap(), &[]).unwrap();
        let on_disk = actions(&p);
        assert!(matches!(on_disk[0], Action::Run(_)), "{targets}: the read runs");
        let Action::Skip(why) = &on_disk[1] else {
            panic!("{targets}: the write runs: {:?}", on_disk[1])
        };
        assert!(
            why.contains("writes withheld") && why.contains("NO-SUCH-MEMBER"),
            "{why}"
        );
        assert!(p.targets[0].grant.is_none() && !p.targets[0].info.writable);
    }
    // Live, by path: granted, and the write runs.
    let c = raw(&format!(
        r#"{{"tests":{tests},"targets":["{disk}"],"destructive":{{"confirm":"{phrase}","targets":["{disk}"]}}}}"#
    ));
    let p = validate(&c, "t", &ov).unwrap();
    assert!(matches!(actions(&p)[1], Action::Run(_)), "the write runs");
    assert!(p.targets[0].grant.is_some());
    // An entry that is a symlink to the disk names the same device.
    let link = std::env::temp_dir().join(format!("bootbench-config-link-{}", std::process::id()));
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&disk, &link).unwrap();
    let by_link = raw(&format!(
        r#"{{"tests":{tests},"targets":["{disk}"],"destructive":{{"confirm":"{phrase}","targets":["{}"]}}}}"#,
        link.display()
    ));
    let granted = validate(&by_link, "t", &ov).unwrap().targets[0].grant.is_some();
    std::fs::remove_file(&link).unwrap();
    assert!(granted, "a symlink names the device it points at");
    // Booted, a "destructive" entry that is a path is an error naming it.
    let e = plan_with(&c, "t", &ov, &target_refs(&c, &ov).unwrap(), &[]).unwrap_err();
    assert!(
        e.0.starts_with("destructive.targets[0]: ") && e.0.contains("booted from the stick"),
        "{e}"
    );
}

/// A disk the config names but this machine lacks (by serial, WWN or
/// path; a target or an array member): for the unattended run
/// (`plan_with`) it is an absent target whose tests, and those of the
/// array on it, are skipped with the reason while the present disk's
/// run; for the live command (`validate`) it is an error naming it; a
/// missing `--target` path is an error either way.
#[test]
fn absent_disks_are_skipped_unattended_and_refused_live() {
    let t = crate::testutil::TempDir::new("config-absent");
    // Booted, a disk is a block device: a loop device stands in for one.
    let Some(lo) = crate::testutil::Loop::new("config-absent", &vec![0u8; 4 << 20]) else {
        return;
    };
    let disk = lo.dev.clone();
    let gone = t.0.join("gone.img").to_string_lossy().into_owned();
    let text = format!(
        r#"{{"tests":[{{"workload":"seq_read","size":"1M"}}],
            "targets":["{disk}",{{"serial":"NO-SUCH-SN"}},{{"wwn":"0x5000NOPE"}},"{gone}"],
            "arrays":[{{"name":"r0","level":"raid0","members":["{disk}",{{"serial":"NO-SUCH-MEMBER"}}]}}]}}"#
    );
    let c = raw(&text);
    let ov = Overrides::default();
    let refs = target_refs(&c, &ov).unwrap();
    let p = plan_with(&c, "t", &ov, &refs, &[]).unwrap();
    let missing: Vec<(&str, Option<&str>)> = p
        .targets
        .iter()
        .map(|t| (t.info.path.as_str(), t.missing.as_deref()))
        .collect();
    assert_eq!(missing[0], (disk.as_str(), None));
    for (i, (path, want)) in [
        ("serial:NO-SUCH-SN", "targets[1]: no whole disk has serial NO-SUCH-SN"),
        ("wwn:0x5000NOPE", "targets[2]: no whole disk has WWN 0x5000NOPE"),
        (gone.as_str(), "targets[3]: "),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(missing[i + 1].0, path);
        assert!(
            missing[i + 1].1.is_some_and(|m| m.starts_with(want)),
            "{:?}",
            missing[i + 1]
        );
        assert_eq!(p.targets[i + 1].info.kind, TargetKind::Absent);
    }
    assert_eq!(p.targets[1].info.serial.as_deref(), Some("NO-SUCH-SN"));
    let actions: Vec<(usize, bool)> = p
        .items
        .iter()
        .map(|it| (it.target, matches!(it.action, Action::Run(_))))
        .collect();
    let r0 = p.stacks[0].target;
    assert!(actions.contains(&(0, true)), "the present disk runs: {actions:?}");
    for it in p.items.iter().filter(|it| it.target != 0) {
        let Action::Skip(why) = &it.action else {
            panic!("{it:?}")
        };
        if it.target == r0 {
            assert!(
                why.starts_with("not assembled: a disk beneath r0 is absent: arrays[0].members[1]"),
                "{why}"
            );
        } else {
            // The absent member is a target of its own too.
            assert!(
                why.starts_with("not run: targets[") || why.starts_with("not run: arrays[0].members[1]: no whole disk"),
                "{why}"
            );
        }
    }
    assert!(describe_plan(&p).contains("target serial:NO-SUCH-SN: absent: targets[1]"));
    // The live command refuses it as bad input.
    let e = validate(&c, "t", &ov).unwrap_err().0;
    assert!(e.starts_with("targets[1]: no whole disk has serial NO-SUCH-SN"), "{e}");
    // A --target path that does not exist is bad input, unattended too.
    let cli_refs = vec![(TargetRef::Path(gone.clone()), "--target".to_string())];
    let e = plan_with(&raw(r#"{"tests":[{"workload":"seq_read"}]}"#), "t", &ov, &cli_refs, &[])
        .unwrap_err()
        .0;
    assert!(e.starts_with("--target: "), "{e}");
    // Booted, a regular file is no target, nor a member; live it is.
    let file = t.0.join("a.img");
    std::fs::write(&file, vec![0u8; 4 << 20]).unwrap();
    let file = file.to_string_lossy().into_owned();
    for (text, at) in [
        (
            format!(r#"{{"tests":[{{"workload":"seq_read"}}],"targets":["{disk}","{file}"]}}"#),
            "targets[1]",
        ),
        (
            format!(
                r#"{{"tests":[{{"workload":"seq_read"}}],"arrays":[{{"name":"r","level":"raid1","members":["{disk}","{file}"]}}]}}"#
            ),
            "arrays[0].members[1]",
        ),
    ] {
        let c = raw(&text);
        let e = plan_with(&c, "t", &ov, &target_refs(&c, &ov).unwrap(), &[])
            .unwrap_err()
            .0;
        assert!(
            e.starts_with(&format!("{at}: {file:?} is a regular file; booted from the stick")),
            "{e}"
        );
        assert!(validate(&c, "t", &ov).is_ok(), "live, a file is a target");
    }
}

#[test]
fn test_deadline_is_a_positive_duration() {
    let ov = Overrides {
        simulate: true,
        ..Overrides::default()
    };
    let plan = |v: &str| {
        let text = format!(r#"{{"profile":"quick","targets":["sim:ssd:64M"],"test_deadline":{v}}}"#);
        parse(&text, "t.json")
            .map_err(bare)
            .and_then(|c| validate(&c, "t", &ov))
            .map(|p| p.test_deadline)
            .map_err(|e| e.0)
    };
    assert_eq!(plan("\"5s\""), Ok(Some(Nanos::from_secs(5))));
    assert_eq!(plan("0.5"), Ok(Some(Nanos(500_000_000))));
    assert!(plan("\"0s\"").unwrap_err().starts_with("test_deadline: "), "zero");
    assert!(plan("\"soon\"").unwrap_err().contains("is not a duration"));
    assert_eq!(
        validate(&raw(r#"{"profile":"quick","targets":["sim:ssd:64M"]}"#), "t", &ov)
            .unwrap()
            .test_deadline,
        None
    );
}

/// A second device node of the stick (mknod of its major:minor, not a
/// link) is the stick: it is on the disk by device number.
#[test]
fn a_second_device_node_of_the_stick_is_on_it() {
    let Some(lo) = crate::testutil::Loop::new("stick-alias", &[0u8; 1 << 20]) else {
        return;
    };
    let dir = crate::testutil::TempDir::new("stick-alias");
    let alias = crate::testutil::mknod_alias(&dir, &lo.dev);
    assert!(on_disk(&alias, &lo.dev), "{alias} is {}", lo.dev);
    assert!(on_disk(&lo.dev, &alias), "{} is {alias}", lo.dev);
    let Some(other) = crate::testutil::Loop::new("stick-other", &[0u8; 1 << 20]) else {
        return;
    };
    assert!(!on_disk(&alias, &other.dev), "{alias} is not {}", other.dev);
}

#[test]
fn partitions_are_on_their_disk() {
    for (p, d, want) in [
        ("/dev/sdb", "/dev/sdb", true),
        ("sim:ssd:64M", "sim:ssd:64M", true),
        ("/nonexistent/sdb1", "/nonexistent/sdb", false),
        ("/dev/null", "/dev/zero", false),
    ] {
        assert_eq!(on_disk(p, d), want, "{p} on {d}");
    }
    // A real partition of the host's first disk, where there is one.
    let blocks = crate::sysfs::live("class/block");
    if let Some((part, disk)) = std::fs::read_dir(&blocks).ok().and_then(|rd| {
        rd.filter_map(Result::ok).find_map(|e| {
            let dir = std::fs::canonicalize(e.path()).ok()?;
            dir.join("partition").exists().then(|| {
                let disk = dir.parent()?.file_name()?.to_string_lossy().into_owned();
                Some((
                    format!("/dev/{}", e.file_name().to_string_lossy()),
                    format!("/dev/{disk}"),
                ))
            })?
        })
    }) {
        if std::path::Path::new(&part).exists() {
            assert!(on_disk(&part, &disk), "{part} on {disk}");
            assert!(!on_disk(&disk, &part), "{disk} is not on {part}");
        }
    }
}

#[test]
fn sim_targets() {
    assert_eq!(
        parse_sim("sim:hdd:1G", "x"),
        Ok(SimSpec {
            hdd: true,
            size: 1 << 30
        })
    );
    assert_eq!(
        parse_sim("sim:ssd:256M", "x"),
        Ok(SimSpec {
            hdd: false,
            size: 256 << 20
        })
    );
    for bad in ["sim:tape:1G", "sim:hdd", "sim:hdd:4q", "/dev/sda", "sim:hdd:1k"] {
        assert!(
            parse_sim(bad, "--target").unwrap_err().0.starts_with("--target: "),
            "{bad}"
        );
    }
}

fn sim() -> Overrides {
    Overrides {
        simulate: true,
        ..Overrides::default()
    }
}

fn stacked(extra: &str) -> Result<Plan, ConfigError> {
    let text = format!(r#"{{"tests":[{{"workload":"seq_read","runtime":"50ms"}}],"targets":["sim:hdd:1G"]{extra}}}"#);
    validate(&parse(&text, "t.json").map_err(bare)?, "t.json", &sim())
}

/// A serial with a line break does not break the plan's lines: each
/// line is one target or test, and prints as one console line.
#[test]
fn plan_lines_keep_a_device_string_on_its_line() {
    let mut p = stacked("").expect("plan");
    let before = describe_plan_lines(&p).len();
    p.targets[0].info.serial = Some("SN\n  test 9: fake (seq_write): writes allowed".into());
    let lines = describe_plan_lines(&p);
    assert_eq!(lines.len(), before);
    let shown = bench_core::console::safe(&lines[1]);
    assert!(
        shown.contains("serial SN\\n  test 9: fake (seq_write): writes allowed,"),
        "{shown}"
    );
    assert!(!shown.contains('\n'));
}

#[test]
fn stacks_resolve_in_dependency_order_and_members_are_targets() {
    let p = stacked(
        r#","arrays":[{"name":"r0","level":"raid0","members":["sim:ssd:64M","sim:ssd:32M"],"chunk":"64k"},
                       {"name":"r5","level":"raid5","members":["sim:ssd:16M","sim:ssd:17M","sim:ssd:18M"]}],
           "layers":[{"name":"lv","kind":"linear","on":"secure"},
                     {"name":"secure","kind":"crypt","on":"r0","sector_size":4096},
                     {"name":"raw","kind":"linear","on":"sim:ssd:8M","offset":"4k"}],
           "all_at_once":true"#,
    )
    .unwrap();
    let names: Vec<&str> = p.stacks.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["r0", "r5", "secure", "lv", "raw"]);
    let paths: Vec<&str> = p.targets.iter().map(|t| t.info.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "sim:hdd:1G",
            "sim:ssd:64M",
            "sim:ssd:32M",
            "sim:ssd:16M",
            "sim:ssd:17M",
            "sim:ssd:18M",
            "sim:ssd:8M",
            "md:r0",
            "md:r5",
            "dm:secure",
            "dm:lv",
            "dm:raw"
        ]
    );
    assert!(p.all_at_once);
    // Every target, member disk or stack, has the plan's test.
    for ti in 0..p.targets.len() {
        assert_eq!(p.items.iter().filter(|it| it.target == ti).count(), 1, "{ti}");
    }
    let r0 = &p.stacks[0];
    assert_eq!(
        r0.kind,
        StackKind::Array {
            level: Level::Raid0,
            chunk_bytes: 65536,
            layout: None,
            members: vec![1, 2]
        }
    );
    // raid0: the members' sizes added; raid5: (N-1) x the smallest.
    assert_eq!(p.targets[7].geometry.size, 96 << 20);
    assert_eq!(p.targets[8].geometry.size, 2 * (16 << 20));
    assert_eq!(
        p.stacks[1].kind,
        StackKind::Array {
            level: Level::Raid5,
            chunk_bytes: DEFAULT_CHUNK,
            layout: Some(crate::stacks::md::MdLayout::LeftSymmetric),
            members: vec![3, 4, 5]
        }
    );
    // Layers: on the right target, with the disks beneath.
    assert!(matches!(
        p.stacks[2].kind,
        StackKind::Crypt {
            on: 7,
            sector_size: 4096,
            key_bits: 512,
            ..
        }
    ));
    assert_eq!(
        p.stacks[3].kind,
        StackKind::Linear {
            offset_bytes: 1 << 20,
            on: 9
        }
    );
    assert_eq!(p.stacks[3].disks, vec![1, 2]);
    assert_eq!(p.stacks[4].disks, vec![6]);
    assert_eq!(p.targets[10].geometry.size, (96 << 20) - (1 << 20));
    assert_eq!(p.targets[9].geometry.logical_block, 4096);
    let info = p.targets[10].info.stack.clone().unwrap();
    assert_eq!(
        (info.kind, info.level.as_str(), info.on.as_deref()),
        (StackClass::Dm, "linear", Some("dm:secure"))
    );
    let info = p.targets[7].info.stack.clone().unwrap();
    assert_eq!(info.members, vec!["sim:ssd:64M", "sim:ssd:32M"]);
    assert!(info.notes.iter().any(|n| n.contains("write-intent bitmap")));
    let text = describe_plan(&p);
    assert!(
        text.contains("array \"r0\": raid0 of sim:ssd:64M, sim:ssd:32M, chunk 65536 B"),
        "{text}"
    );
    assert!(
        text.contains("layer \"lv\": linear at offset 1048576 B on dm:secure"),
        "{text}"
    );
}

/// Two simulated disks as an array's members.
const TWO: &str = r#""members":["sim:ssd:64M","sim:ssd:32M"]"#;

/// Each `(extra, want)`: the stack config with `extra` is refused with an
/// error that starts with `want`, on one line.
fn assert_each_refused(cases: &[(String, &str)]) {
    for (extra, want) in cases {
        let e = stacked(extra).unwrap_err().0;
        assert!(e.starts_with(want), "{extra}\n  got:  {e}\n  want: {want}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

/// Arrays: members that are not simulated disks, are used twice, are too
/// few for the level, or are themselves stacks; names, levels and layouts
/// that do not exist or do not fit the level; the boot stick as a member;
/// unknown keys.
#[test]
fn each_invalid_array_gives_its_error() {
    assert_each_refused(&[
        (
            r#","arrays":[{"name":"r0","level":"raid0","members":["sim:ssd:64M","sim:tape:1G"]}]"#.to_string(),
            "arrays[0].members[1]: \"sim:tape:1G\" is not a simulated disk",
        ),
        (
            format!(r#","arrays":[{{"name":"a","level":"raid1",{TWO}}},{{"name":"b","level":"raid1","members":["sim:ssd:32M","sim:ssd:16M"]}}]"#),
            "arrays[1].members[0]: \"sim:ssd:32M\" is already used by arrays[0].members[1]; expected each disk in one array or layer",
        ),
        (
            r#","arrays":[{"name":"a","level":"raid1","members":["sim:ssd:32M","sim:ssd:32M"]}]"#.to_string(),
            "arrays[0].members[1]: \"sim:ssd:32M\" is already used by arrays[0].members[0]",
        ),
        (
            format!(r#","arrays":[{{"name":"r5","level":"raid5",{TWO}}}]"#),
            "arrays[0].members: 2 member(s) are too few for raid5; expected at least 3",
        ),
        (
            r#","arrays":[{"name":"r6","level":"raid6","members":["sim:ssd:1M","sim:ssd:2M","sim:ssd:3M"]}]"#.to_string(),
            "arrays[0].members: 3 member(s) are too few for raid6; expected at least 4",
        ),
        (
            r#","arrays":[{"name":"r1","level":"raid1","members":["sim:ssd:1M"]}]"#.to_string(),
            "arrays[0].members: 1 member(s) are too few for raid1; expected at least 2",
        ),
        (
            format!(r#","arrays":[{{"name":"R 0","level":"raid0",{TWO}}}]"#),
            "arrays[0].name: \"R 0\" is not a stack name",
        ),
        (
            format!(r#","arrays":[{{"name":"r","level":"raid7",{TWO}}}]"#),
            "arrays[0].level: \"raid7\" is not a level; expected one of linear, raid0",
        ),
        (
            format!(r#","arrays":[{{"name":"r","level":"raid10","layout":"far3",{TWO}}}]"#),
            "arrays[0].layout: \"far3\" is not a layout; expected one of left-asymmetric, right-asymmetric, \
             left-symmetric, right-symmetric (raid5, raid6), near2, far2, offset2 (raid10)",
        ),
        (
            format!(r#","arrays":[{{"name":"r","level":"raid10","layout":"left-symmetric",{TWO}}}]"#),
            "arrays[0].layout: \"left-symmetric\" is not a raid10 layout; expected one of near2, far2, offset2",
        ),
        (
            format!(r#","arrays":[{{"name":"r","level":"raid0","layout":"near2",{TWO}}}]"#),
            "arrays[0].layout: \"near2\" is not taken by raid0",
        ),
        (
            r#","arrays":[{"name":"r0","level":"raid0","members":["r1","sim:ssd:1M"]},{"name":"r1","level":"raid0","members":["sim:ssd:2M","sim:ssd:3M"]}]"#.to_string(),
            "arrays[0].members[0]: \"r1\" is an array or layer; expected a disk",
        ),
    ]);
    // The boot stick is never a member.
    let raw = parse(
        r#"{"profile":"quick","arrays":[{"name":"r","level":"raid1","members":["sim:ssd:8M","sim:ssd:9M"]}]}"#,
        "t",
    )
    .unwrap();
    let refs = vec![(TargetRef::Path("sim:hdd:1G".into()), "discovered".to_string())];
    let e = plan_with(&raw, "t", &sim(), &refs, &["sim:ssd:9M".to_string()])
        .unwrap_err()
        .0;
    assert!(
        e.starts_with("arrays[0].members[1]: \"sim:ssd:9M\" is on the boot stick"),
        "{e}"
    );
    // Unknown keys are refused by the parser.
    assert!(parse(
        r#"{"arrays":[{"name":"r","level":"raid0","members":[],"stripe":1}]}"#,
        "t"
    )
    .is_err());
}

/// Chunk sizes: md takes a power of two from 4k to 1G; anything else, in
/// any spelling and at any level, is refused; those it takes plan.
#[test]
fn each_chunk_md_refuses_gives_its_error_and_those_it_takes_plan() {
    assert_each_refused(&[
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":"96k",{TWO}}}]"#),
            "arrays[0].chunk: \"96k\" is not a chunk size md takes; expected a power of two from 4k to 1G",
        ),
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":"2k",{TWO}}}]"#),
            "arrays[0].chunk: \"2k\" is not a chunk size",
        ),
        // md holds the chunk in a signed 32-bit byte count: 2G and more
        // never reach the kernel, whatever the level (members larger
        // than the chunk, so that nothing else is wrong).
        (
            r#","arrays":[{"name":"r0","level":"raid0","chunk":"2G","members":["sim:ssd:4G","sim:ssd:5G"]}]"#
                .to_string(),
            "arrays[0].chunk: \"2G\" is not a chunk size md takes; expected a power of two from 4k to 1G",
        ),
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid10","chunk":"2GiB",{TWO}}}]"#),
            "arrays[0].chunk: \"2GiB\" is not a chunk size",
        ),
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid1","chunk":"4G",{TWO}}}]"#),
            "arrays[0].chunk: \"4G\" is not a chunk size",
        ),
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":2147483648,{TWO}}}]"#),
            "arrays[0].chunk: 2147483648 is not a chunk size",
        ),
    ]);
    // The chunks md takes, from 4k to 1G, plan.
    for (level, chunk, bytes) in [
        ("raid0", "4k", 4096),
        ("raid5", "1G", 1 << 30),
        ("raid10", "1073741824", 1 << 30),
    ] {
        // Members of at least a chunk: md rounds each down to whole chunks.
        let members = match level {
            "raid5" => r#""members":["sim:ssd:2G","sim:ssd:3G","sim:ssd:4G"]"#,
            "raid10" => r#""members":["sim:ssd:2G","sim:ssd:3G"]"#,
            _ => TWO,
        };
        let chunk_json = if chunk.ends_with('k') || chunk.ends_with('G') {
            format!("{chunk:?}")
        } else {
            chunk.to_string()
        };
        let p = stacked(&format!(
            r#","arrays":[{{"name":"r0","level":"{level}","chunk":{chunk_json},{members}}}]"#
        ))
        .unwrap_or_else(|e| panic!("{level} chunk {chunk}: {}", e.0));
        assert!(
            matches!(p.stacks[0].kind, StackKind::Array { chunk_bytes, .. } if chunk_bytes == bytes),
            "{level} {chunk}"
        );
    }
}

/// Layers: cycles, unknown bases, names an array has, crypt and linear
/// options that do not apply or do not fit, unknown kinds, a disk an array
/// already uses, unknown keys; and the other destinations of the results
/// (serial ports, the results URL).
#[test]
fn each_invalid_layer_serial_port_or_results_url_gives_its_error() {
    assert_each_refused(&[
        (
            r#","layers":[{"name":"a","kind":"linear","on":"b"},{"name":"b","kind":"linear","on":"a"}]"#.to_string(),
            "layers[0].on: \"b\" makes a cycle (a -> b -> a); expected layers that stack without a loop",
        ),
        (
            r#","layers":[{"name":"a","kind":"linear","on":"a"}]"#.to_string(),
            "layers[0].on: \"a\" makes a cycle (a -> a)",
        ),
        (
            r#","layers":[{"name":"a","kind":"linear","on":"r9"}]"#.to_string(),
            "layers[0].on: \"r9\" is not an array, a layer or a disk; expected one of a or a disk path",
        ),
        (
            format!(
                r#","arrays":[{{"name":"r0","level":"raid0",{TWO}}}],"layers":[{{"name":"r0","kind":"crypt","on":"r0"}}]"#
            ),
            "layers[0].name: \"r0\" is already the name of arrays[0]; expected a unique name",
        ),
        (
            r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","key_bits":384}]"#.to_string(),
            "layers[0].key_bits: 384 is not an aes-xts-plain64 key size; expected 256 or 512",
        ),
        (
            r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","cipher":"des"}]"#.to_string(),
            "layers[0].cipher: \"des\" is not a supported cipher; expected \"aes-xts-plain64\"",
        ),
        (
            r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","offset":"1M"}]"#.to_string(),
            "layers[0].offset: given for a crypt layer",
        ),
        (
            r#","layers":[{"name":"c","kind":"linear","on":"sim:ssd:8M","sector_size":4096}]"#.to_string(),
            "layers[0].sector_size: given for a linear layer",
        ),
        (
            r#","layers":[{"name":"c","kind":"linear","on":"sim:ssd:8M","offset":"8M"}]"#.to_string(),
            "layers[0].offset: 8388608 B does not fit sim:ssd:8M",
        ),
        (
            r#","layers":[{"name":"c","kind":"linear","on":"sim:ssd:8M","read_ahead":"6k"}]"#.to_string(),
            "layers[0].read_ahead: 6144 B is not a readahead; expected a multiple of 4 KiB up to 1 GiB",
        ),
        (
            r#","layers":[{"name":"c","kind":"mirror","on":"sim:ssd:8M"}]"#.to_string(),
            "layers[0].kind: \"mirror\" is not a layer kind; expected crypt or linear",
        ),
        (
            format!(
                r#","arrays":[{{"name":"r0","level":"raid0",{TWO}}}],"layers":[{{"name":"c","kind":"crypt","on":"sim:ssd:64M"}}]"#
            ),
            "layers[0].on: \"sim:ssd:64M\" is already used by arrays[0].members[0]",
        ),
        (
            r#","serial_ports":["ttyS1","/dev/ttyS2"]"#.to_string(),
            "serial_ports[1]: \"/dev/ttyS2\" is not a serial port; expected a name like \"ttyS1\"",
        ),
        (
            r#","results_url":"http://10.0.2.100/{machine}/{date}.json""#.to_string(),
            "results_url: \"{date}\" is not a placeholder; expected {machine}, {run}, {n}",
        ),
        (
            r#","results_url":"s3://bucket/{machine}.json""#.to_string(),
            "results_url: \"s3://bucket/machine.json\" is not an http:// or https:// URL",
        ),
    ]);
    // Unknown keys are refused by the parser.
    assert!(parse(r#"{"layers":[{"name":"r","kind":"crypt","on":"x","key":"00"}]}"#, "t").is_err());
}

/// `slog` (diskinfo -S) writes: like `commit`, it runs only on a target
/// the config grants, and is skipped with the reason on any other, while
/// the reads there run.
#[test]
fn slog_and_commit_need_a_write_grant() {
    let t = crate::testutil::TempDir::new("slogperm");
    let (a, b) = (t.0.join("a.img"), t.0.join("b.img"));
    for f in [&a, &b] {
        std::fs::write(f, vec![0u8; 4 << 20]).unwrap();
    }
    let (a, b) = (a.to_string_lossy().into_owned(), b.to_string_lossy().into_owned());
    let text = |destructive: &str| {
        format!(
            r#"{{"tests":[{{"workload":"slog","runtime":"50ms","max_bs":"64k"}},{{"workload":"commit","size":"1M"}},
                {{"workload":"seq_read","runtime":"50ms"}}],"targets":["{a}","{b}"]{destructive}}}"#
        )
    };
    let granted = format!(
        r#","destructive":{{"confirm":"{}","targets":["{a}"]}}"#,
        safety::CONFIRM_PHRASE
    );
    for (extra, writable) in [("", [false, false]), (granted.as_str(), [true, false])] {
        let p = validate(&parse(&text(extra), "t").unwrap(), "t", &Overrides::default()).unwrap();
        for (ti, w) in writable.into_iter().enumerate() {
            assert_eq!(p.targets[ti].info.writable, w, "{extra:?} target {ti}");
            assert_eq!(p.targets[ti].grant.is_some(), w, "{extra:?} target {ti}");
            let items: Vec<_> = p.items.iter().filter(|it| it.target == ti).collect();
            assert_eq!(items.len(), 3);
            for it in items {
                let name = it.spec.workload.name();
                match (&it.action, w || name == "seq_read") {
                    (Action::Run(steps), true) => assert!(!steps.is_empty(), "{name}"),
                    (Action::Skip(why), false) => {
                        assert_eq!(Some(why), p.targets[ti].info.write_refusal.as_ref(), "{name}");
                    }
                    (a, _) => panic!("{extra:?} target {ti}: {name}: {a:?}"),
                }
            }
        }
    }
    assert!(Workload::Slog.writes() && Workload::Commit.writes());
}

/// Writes withheld before planning (a config from the network the
/// initramfs does not allow to write) leave a granted target read-only,
/// with that reason on its write tests; reads still run.
#[test]
fn withheld_writes_override_a_grant() {
    let t = crate::testutil::TempDir::new("withheld");
    let a = t.0.join("a.img");
    std::fs::write(&a, vec![0u8; 4 << 20]).unwrap();
    let a = a.to_string_lossy().into_owned();
    let text = format!(
        r#"{{"tests":[{{"workload":"seq_write","runtime":"50ms"}},{{"workload":"seq_read","runtime":"50ms"}}],
            "targets":["{a}"],"destructive":{{"confirm":"{}","targets":["{a}"]}}}}"#,
        safety::CONFIRM_PHRASE
    );
    let cfg = parse(&text, "t").unwrap();
    assert!(
        validate(&cfg, "t", &Overrides::default()).unwrap().targets[0]
            .info
            .writable
    );
    let why = "writes withheld: from the network";
    let ov = Overrides {
        withhold_writes: Some(why.to_string()),
        ..Overrides::default()
    };
    let p = validate(&cfg, "t", &ov).unwrap();
    let target = &p.targets[0];
    assert!(!target.info.writable && target.grant.is_none());
    assert_eq!(target.info.write_refusal.as_deref(), Some(why));
    let actions: Vec<(&str, &Action)> = p.items.iter().map(|i| (i.spec.workload.name(), &i.action)).collect();
    assert!(
        matches!(actions[0], ("seq_write", Action::Skip(w)) if w == why),
        "{actions:?}"
    );
    assert!(matches!(actions[1], ("seq_read", Action::Run(_))), "{actions:?}");
}

/// A plan's id follows the config and the disks, not how the config is
/// written nor what the disks are called this boot.
#[test]
fn a_plan_id_is_the_config_on_these_disks() {
    let plan_of = |text: &str, disks: &[(&str, &str)]| {
        let c = raw(text);
        let refs: Vec<(TargetRef, String)> = disks
            .iter()
            .map(|(path, _)| (TargetRef::Path((*path).into()), "discovered".to_string()))
            .collect();
        let mut p = plan_with(&c, "t", &sim(), &refs, &[]).unwrap();
        for (t, (_, serial)) in p.targets.iter_mut().zip(disks) {
            t.info.serial = Some((*serial).to_string());
        }
        p.id(&c)
    };
    let a = r#"{"profile":"quick","seed":7}"#;
    let a_again = "{ \"seed\": 7,\n  \"profile\": \"quick\" }";
    let id = plan_of(a, &[("sim:ssd:64M", "SN1")]);
    assert_eq!(id.len(), 16);
    assert!(
        id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "{id}"
    );
    assert_eq!(
        plan_of(a_again, &[("sim:ssd:64M", "SN1")]),
        id,
        "keys in another order, other spaces"
    );
    assert_eq!(
        plan_of(a, &[("sim:ssd:128M", "SN1")]),
        id,
        "another path, the same disk"
    );
    assert_ne!(plan_of(a, &[("sim:ssd:64M", "SN2")]), id, "another disk");
    assert_ne!(
        plan_of(r#"{"profile":"quick","seed":8}"#, &[("sim:ssd:64M", "SN1")]),
        id
    );
    assert_ne!(plan_of(r#"{"profile":"cdm","seed":7}"#, &[("sim:ssd:64M", "SN1")]), id);
}

/// `validate --booted` on a machine without the server's disks (a laptop
/// with the stick): disks named by serial are the server's business, a
/// config without targets gets its tests planned on a nominal disk, the
/// booted rules hold (no paths in `destructive`), and what will be written
/// is said.
#[test]
fn a_stick_config_is_checked_for_the_boot_anywhere() {
    let phrase = safety::CONFIRM_PHRASE;
    let lines = |text: &str| check_for_boot(&raw(text), "bootbench.json", &Overrides::default());
    let by_serial = lines(
        r#"{"profile":"quick","targets":[{"serial":"NOT-HERE-1"}],
            "arrays":[{"name":"r","level":"raid1","members":[{"serial":"NOT-HERE-1"},{"serial":"NOT-HERE-2"}]}]}"#,
    )
    .unwrap();
    assert!(
        by_serial[0].starts_with("checked as the booted run will check it"),
        "{by_serial:?}"
    );
    assert!(
        by_serial.iter().any(|l| l
            == "target serial:NOT-HERE-1: not on this machine: checked, and its tests planned, when the server boots"),
        "{by_serial:?}"
    );
    assert!(by_serial
        .iter()
        .any(|l| l.ends_with("planned when the server boots (a disk beneath is not on this machine)")));
    assert_eq!(
        by_serial.last().unwrap(),
        "writes: none: the config has no \"destructive\" section; every write test is skipped"
    );
    let every = lines(&format!(
        r#"{{"profile":"quick","destructive":{{"confirm":"{phrase}","targets":[{{"serial":"S1"}},{{"wwn":"0x5000c5"}}]}}}}"#
    ))
    .unwrap();
    assert!(
        every
            .iter()
            .any(|l| l.starts_with("targets: every disk of the server but the boot stick")),
        "{every:?}"
    );
    assert!(
        every.iter().any(|l| l.starts_with("  test 1: cached_read_2m_qd1_j1")),
        "{every:?}"
    );
    let writes: Vec<&String> = every.iter().filter(|l| l.starts_with("writes: ")).collect();
    assert_eq!(writes.len(), 2, "{every:?}");
    assert!(
        writes[0].starts_with("writes: serial S1: written at boot only if it holds no signature"),
        "{writes:?}"
    );
    assert!(
        writes[1].starts_with("writes: WWN 0x5000c5: written at boot only if"),
        "{writes:?}"
    );
    let wrong = lines(r#"{"profile":"quick","destructive":{"confirm":"yes","targets":[{"serial":"S1"}]}}"#).unwrap();
    assert_eq!(
        wrong.last().unwrap(),
        &format!("writes: none: destructive.confirm is \"yes\"; expected exactly \"{phrase}\"")
    );
    // The booted rules: a device name in destructive is refused, as the boot refuses it.
    let e = lines(&format!(
        r#"{{"profile":"quick","targets":[{{"serial":"S1"}}],"destructive":{{"confirm":"{phrase}","targets":["/dev/sdb"]}}}}"#
    ))
    .unwrap_err()
    .0;
    assert!(
        e.starts_with("destructive.targets[0]: \"/dev/sdb\" is a path; booted from the stick"),
        "{e}"
    );
    // And bad input is what it always is.
    let e = lines(r#"{"profile":"turbo"}"#).unwrap_err().0;
    assert!(e.starts_with("profile: \"turbo\""), "{e}");
}

#[test]
fn writes_to_a_stack_need_every_member_writable() {
    let t = crate::testutil::TempDir::new("stackperm");
    let (a, b) = (t.0.join("a.img"), t.0.join("b.img"));
    for f in [&a, &b] {
        std::fs::write(f, vec![0u8; 4 << 20]).unwrap();
    }
    let (a, b) = (a.to_string_lossy().into_owned(), b.to_string_lossy().into_owned());
    let plan_for = |named: &[&str]| {
        let text = format!(
            r#"{{"tests":[{{"workload":"seq_write","runtime":"50ms"}},{{"workload":"seq_read","runtime":"50ms"}}],
                "arrays":[{{"name":"r","level":"raid0","members":["{a}","{b}"],"chunk":"64k"}}],
                "layers":[{{"name":"l","kind":"linear","on":"r"}}],
                "all_at_once":true,
                "destructive":{{"confirm":"{}","targets":{}}}}}"#,
            safety::CONFIRM_PHRASE,
            serde_json::to_string(named).unwrap()
        );
        validate(&parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap()
    };
    let p = plan_for(&[&a]);
    assert_eq!(p.targets.len(), 4);
    assert!(p.targets[0].info.writable && p.targets[0].grant.is_some());
    assert!(!p.targets[1].info.writable);
    for ti in [2, 3] {
        let i = &p.targets[ti].info;
        assert!(!i.writable, "{}", i.path);
        let why = i.write_refusal.clone().unwrap();
        assert!(why.contains(&format!("member {b} is not writable")), "{why}");
        let write = p
            .items
            .iter()
            .find(|it| it.target == ti && it.spec.workload.writes())
            .unwrap();
        assert!(matches!(&write.action, Action::Skip(r) if *r == why), "{write:?}");
        let read = p
            .items
            .iter()
            .find(|it| it.target == ti && !it.spec.workload.writes())
            .unwrap();
        assert!(matches!(read.action, Action::Run(_)));
    }
    let p = plan_for(&[&a, &b]);
    for ti in 0..4 {
        assert!(p.targets[ti].info.writable, "{ti}");
        assert!(p
            .items
            .iter()
            .filter(|it| it.target == ti)
            .all(|it| matches!(it.action, Action::Run(_))));
    }
    // Once assembled, the target takes the device's path and geometry.
    let mut p = p;
    let g = Geometry {
        size: 6 << 20,
        logical_block: 512,
        physical_block: 4096,
    };
    assembled(&mut p, 2, "/dev/md9", g);
    assert_eq!(
        (p.targets[2].info.path.as_str(), p.targets[2].geometry),
        ("/dev/md9", g)
    );
    assert_eq!(
        p.targets[3].info.stack.as_ref().unwrap().on.as_deref(),
        Some("/dev/md9")
    );
    let tiny = Geometry {
        size: 256,
        logical_block: 512,
        physical_block: 512,
    };
    assembled(&mut p, 3, "/dev/dm-0", tiny);
    let acts: Vec<&Action> = p
        .items
        .iter()
        .filter(|it| it.target == 3)
        .map(|it| &it.action)
        .collect();
    assert!(
        acts.iter()
            .all(|a| matches!(a, Action::Skip(r) if r.starts_with("does not fit"))),
        "{acts:?}"
    );
}

#[test]
fn readme_stacks_example_parses_and_fits_the_schema() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let at = readme.find("### Arrays and layers").expect("README has the section");
    let start = at + readme[at..].find("```json\n").unwrap() + "```json\n".len();
    let text = &readme[start..start + readme[start..].find("```").unwrap()];
    let c = parse(text, "README").unwrap();
    assert_eq!((c.arrays.len(), c.layers.len(), c.all_at_once), (2, 2, true));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../schema/bootbench.config-1.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let j: serde_json::Value = serde_json::from_str(text).unwrap();
    let errors: Vec<String> = v.iter_errors(&j).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let bad: serde_json::Value =
        serde_json::from_str(r#"{"profile":"quick","arrays":[{"name":"R","level":"raid9","members":[]}]}"#).unwrap();
    assert!(v.iter_errors(&bad).count() >= 2);
    // The same example with simulated disks is a valid plan.
    let sim_text = text
        .replace("\"/dev/sdb\"", "\"sim:ssd:64M\"")
        .replace("{\"serial\": \"SN1\"}", "\"sim:ssd:65M\"")
        .replace("/dev/sdd", "sim:ssd:8M")
        .replace("/dev/sde", "sim:ssd:9M")
        .replace("/dev/sdf", "sim:ssd:10M");
    let p = validate(&parse(&sim_text, "README").unwrap(), "README", &sim()).unwrap();
    assert_eq!(p.stacks.len(), 4);
}
