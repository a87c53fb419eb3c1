//! The plan stage as a whole: config text in, plan or one-line error out.

use bench_core::document::result::{StackClass, TargetKind};
use bench_core::io::Geometry;
use bench_core::spec::Workload;
use bench_core::vocab::size::EXPECTED;
use bench_core::vocab::units::{Bytes, Nanos};

use super::model::*;
use super::pass::*;
use super::raw::*;
use super::resolve::*;
use super::validate::*;
use crate::safety::{self, TargetRef};

mod params;
mod stacks;

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

/// `self_test`: a kind alone is every disk with the kind's default wait;
/// the object form gives the serials and the wait; each error names its
/// field.
#[test]
fn self_test_as_a_kind_or_an_object() {
    use bench_core::document::result::SelfTestKind;
    let ov = Overrides {
        simulate: true,
        ..Overrides::default()
    };
    let plan = |v: &str| {
        let text = format!(r#"{{"profile":"quick","targets":["sim:ssd:64M"],"self_test":{v}}}"#);
        parse(&text, "t.json")
            .map_err(bare)
            .and_then(|c| validate(&c, "t", &ov))
            .map(|p| p.self_test)
            .map_err(|e| e.0)
    };
    let short = plan("\"short\"").unwrap().unwrap();
    assert_eq!(
        short,
        SelfTestPlan {
            kind: SelfTestKind::Short,
            disks: None,
            max_wait: Nanos::from_secs(30 * 60)
        }
    );
    assert!(short.selects(None) && short.selects(Some("X")));
    let ext = plan(r#"{"kind": "extended"}"#).unwrap().unwrap();
    assert_eq!(ext.max_wait, Nanos::from_secs(48 * 3600));
    let c = plan(r#"{"kind": "conveyance", "max_wait": "10m"}"#).unwrap().unwrap();
    assert_eq!((c.kind, c.max_wait), (SelfTestKind::Conveyance, Nanos::from_secs(600)));
    assert_eq!(
        plan("\"long\"").unwrap_err(),
        "self_test: \"long\" is not a self-test kind; expected one of short, extended, conveyance"
    );
    assert!(plan(r#"{"kind": "x"}"#)
        .unwrap_err()
        .starts_with("self_test.kind: \"x\""));
    assert!(plan(r#"{"kind": "short", "max_wait": 0}"#)
        .unwrap_err()
        .starts_with("self_test.max_wait: 0 is zero"));
    // Simulated disks have no serial: no serial there is a target's.
    assert!(plan(r#"{"kind": "short", "disks": ["S1"]}"#)
        .unwrap_err()
        .starts_with("self_test.disks[0]: \"S1\" is not the serial of a target of this run"));
    let named = SelfTestPlan {
        disks: Some(vec!["S1".into()]),
        ..short
    };
    assert!(named.selects(Some("S1")) && !named.selects(Some("S2")) && !named.selects(None));
    assert_eq!(
        validate(&raw(r#"{"profile":"quick","targets":["sim:ssd:64M"]}"#), "t", &ov)
            .unwrap()
            .self_test,
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
    let shown = bench_core::vocab::console::safe(&lines[1]);
    assert!(
        shown.contains("serial SN\\n  test 9: fake (seq_write): writes allowed,"),
        "{shown}"
    );
    assert!(!shown.contains('\n'));
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

/// The id earlier versions gave a plan (the config's text, keys sorted):
/// the figure below is what bootbench at 58c60d1 computed for this config
/// on this disk, so a result it wrote is still found by the run-once check.
#[test]
fn the_earlier_id_is_the_one_earlier_versions_gave() {
    let text =
        r#"{"seed": 7, "tests": [{"workload": "seq_read", "runtime": "1s", "bs": "1M"}], "on_finish": "reboot"}"#;
    let c = raw(text);
    let refs = [(TargetRef::Path("sim:ssd:64M".into()), "discovered".to_string())];
    let mut p = plan_with(&c, "t", &sim(), &refs, &[]).unwrap();
    p.targets[0].info.serial = Some("SN1".to_string());
    assert_eq!(p.earlier_id(text), "088bc3607ea1925f");
    assert_eq!(
        p.earlier_id(&text.replace(", ", ",\n  ")),
        "088bc3607ea1925f",
        "any spacing"
    );
    assert_ne!(p.id(&c), p.earlier_id(text), "the config's types write it otherwise");
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
    assert_eq!(writes.len(), 3, "{every:?}");
    assert_eq!(
        writes[2],
        "writes: the console names the disks it may write and counts 10 s down before the run begins"
    );
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

/// `existing` names the server's stacks: checked for the boot anywhere,
/// its entries and the key files beside the config are checked here
/// (a LUKS entry's `unlock_seconds` at each bound and one past it); the
/// rest is planned without it.
#[test]
fn a_stick_configs_existing_is_checked_beside_its_key_files() {
    let dir = crate::testutil::TempDir::new("booted-existing");
    std::fs::write(dir.0.join("md0.key"), b"k").unwrap();
    let cfg = dir.0.join("bootbench.json").display().to_string();
    std::fs::write(&cfg, "{}").unwrap();
    let booted = |existing: &str| {
        check_for_boot(
            &raw(&format!(r#"{{"profile":"quick","existing":{existing}}}"#)),
            &cfg,
            &Overrides::default(),
        )
    };
    let ok = booted(r#"["all", "mirror", "vg0/root", {"luks": "0c1e", "key_file": "md0.key"}]"#).unwrap();
    for want in [
        "existing: every md array that can start and every LVM volume that can be opened",
        "existing[1]: the md array \"mirror\"",
        "existing[2]: the LVM volume vg0/root",
    ] {
        assert!(ok.iter().any(|l| l == want), "{want}: {ok:?}");
    }
    assert!(
        ok.iter()
            .any(|l| l.starts_with("existing[3]: the LUKS container 0c1e, its key file ")
                && l.ends_with("md0.key present (1 B), tried within 30 s")),
        "{ok:?}"
    );
    // A LUKS entry's unlock_seconds: 1 to 3600 (default 30), at each
    // bound and one past it, and what is no whole number of seconds.
    let ok = booted(
        r#"[{"luks": "0c1e", "key_file": "md0.key", "unlock_seconds": 1},
            {"luks": "0c1f", "key_file": "md0.key", "unlock_seconds": 3600}]"#,
    )
    .unwrap();
    for (i, n) in [(0, 1), (1, 3600)] {
        let want = format!("present (1 B), tried within {n} s");
        assert!(
            ok.iter()
                .any(|l| l.starts_with(&format!("existing[{i}]: ")) && l.ends_with(&want)),
            "{ok:?}"
        );
    }
    for bad in ["0", "3601", "-1", "1.5", "\"30\"", "null"] {
        let e = booted(&format!(
            r#"[{{"luks": "0c1e", "key_file": "md0.key", "unlock_seconds": {bad}}}]"#
        ))
        .unwrap_err()
        .0;
        assert_eq!(
            e,
            format!(
                "existing[0].unlock_seconds: {bad} is not taken; expected a whole number of seconds from 1 to 3600, \
                 the most trying the key on the container's keyslots may take (default 30)"
            )
        );
    }
    assert!(
        ok.iter().any(|l| l.starts_with("targets: every disk of the server")),
        "{ok:?}"
    );
    let e = booted(r#"[{"luks": "0c1e", "key_file": "nokey"}]"#).unwrap_err().0;
    assert!(e.starts_with("existing[0].key_file: ") && e.contains("nokey"), "{e}");
    let e = booted(r#"["a/b/c"]"#).unwrap_err().0;
    assert!(e.contains("is not a volume's name"), "{e}");
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
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/arrays-and-existing-storage.md"
    ))
    .unwrap();
    let at = readme.find("## Arrays and layers").expect("the guide has the section");
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

/// A config's files (a baseline) are found beside it: the directory of a
/// config file; booted, /etc for a config that is no file (a URL, the
/// built-in one), where the initramfs keeps a baseline; live, the working
/// directory.
#[test]
fn a_configs_files_are_found_from_its_directory() {
    let t = crate::testutil::TempDir::new("config-dir");
    let file = t.0.join("bootbench.json");
    std::fs::write(&file, "{}").unwrap();
    let f = file.to_str().unwrap();
    assert_eq!(config_dir(f, false), t.0);
    assert_eq!(config_dir(f, true), t.0);
    assert_eq!(config_dir("http://10.0.0.1/c.json", true), std::path::Path::new("/etc"));
    assert_eq!(config_dir("builtin", true), std::path::Path::new("/etc"));
    assert_eq!(config_dir("command-line", false), std::path::Path::new("."));
}

/// Preconditioning's time allowance does not overflow for a round as long
/// as a duration can be: it saturates.
#[test]
fn a_huge_precondition_round_saturates_its_time() {
    let p = PreconditionPlan {
        pass: PassPlan {
            targets: vec![0],
            offset: 0,
            length: None,
            bs: 4096,
            iodepth: 32,
            max_time: None,
            parallel: true,
        },
        fill: true,
        random: true,
        round: Nanos(u64::MAX),
        max_rounds: 25,
        window: 5,
        range_pct: 20.0,
        slope_pct: 10.0,
        purge: Some(None),
    };
    assert_eq!(p.time_for(1 << 40), Nanos(u64::MAX));
}

/// A purge asked for adds its time to each disk's preconditioning; the
/// config's `purge` is read as none, auto or a method.
#[test]
fn a_purge_adds_its_time_and_is_read_from_the_config() {
    use bench_core::document::result::EraseMethod;
    let mut p = PreconditionPlan {
        pass: PassPlan {
            targets: vec![0],
            offset: 0,
            length: None,
            bs: 4096,
            iodepth: 32,
            max_time: None,
            parallel: true,
        },
        fill: true,
        random: true,
        round: Nanos::from_secs(60),
        max_rounds: 25,
        window: 5,
        range_pct: 20.0,
        slope_pct: 10.0,
        purge: None,
    };
    let without = p.time_for(1 << 30);
    p.purge = Some(Some(EraseMethod::NvmeFormatUserData));
    assert_eq!(p.time_for(1 << 30).0 - without.0, super::pass::PURGE_TIME.0);
    for (text, want) in [
        (r#""none""#, None),
        (r#""auto""#, Some(None)),
        (r#""nvme_sanitize_block""#, Some(Some(EraseMethod::NvmeSanitizeBlock))),
    ] {
        let raw = raw(&format!(r#"{{"precondition":{{"purge":{text}}}}}"#));
        assert_eq!(
            raw.precondition.unwrap().0.purge.map(|p| p.0).unwrap_or(None),
            want,
            "{text}"
        );
    }
}
