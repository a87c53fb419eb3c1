use super::*;
use crate::document::result::{
    Health, HealthReading, LatStats, Metric, NvmeHealth, Percentile, SmartAttribute, TestTemperature,
};
use crate::io::Op;
use crate::verdict::analysis::testutil::{dir_stats, disk, doc, main_step, md, test, MBS};
use alloc::collections::BTreeMap;
use alloc::vec;

fn model(mut t: TargetInfo, m: &str, fw: &str) -> TargetInfo {
    t.model = Some(m.into());
    t.firmware = Some(fw.into());
    t.serial = Some(format!("SN-{}", t.path.trim_start_matches("/dev/")));
    t
}

fn seq(target: &str, mbs: f64) -> TestResult {
    test(target, Workload::SeqRead, Metric::ReadBps, mbs * MBS)
}

/// A rand_read test whose main step's reads have these latencies.
fn rand_lat(target: &str, mean: f64, p99: u64, max: u64) -> TestResult {
    let lat = LatStats {
        min: 1,
        max,
        mean,
        stddev: 0.0,
        percentiles: vec![Percentile { p: 50.0, ns: 1 }, Percentile { p: 99.0, ns: p99 }],
    };
    let step = main_step(4096, dir_stats(1, lat, &[]));
    TestResult {
        steps: vec![step],
        ..test(target, Workload::RandRead, Metric::ReadIops, 5000.0)
    }
}

fn floor(source: &str, workload: Workload, metric: Metric, v: f64) -> Limit {
    Limit {
        source: source.into(),
        test: None,
        workload: Some(workload),
        only: DiskFilter::default(),
        floors: vec![(metric, v)],
        ceilings: Vec::new(),
        severity: Severity::Fail,
    }
}

fn verdict_of<'a>(a: &'a Acceptance, target: &str) -> &'a TargetVerdict {
    a.targets.iter().find(|t| t.target == target).unwrap()
}

fn config_rules(limits: Vec<Limit>) -> Rules {
    Rules {
        from_config: true,
        limits,
        peers: PeerRule {
            below: 0.10,
            severity: Severity::Fail,
        },
        ..Rules::defaults()
    }
}

/// A floor fails the disk below it, names the figure, the floor and where
/// it came from, and passes the disk at or above it; the run is the worst.
#[test]
fn a_floor_fails_the_disk_below_it_and_passes_the_one_at_it() {
    let d = doc(
        vec![disk("/dev/a", 1 << 30), disk("/dev/b", 1 << 30)],
        vec![seq("/dev/a", 150.0), seq("/dev/b", 149.9)],
    );
    let rules = config_rules(vec![floor(
        "acceptance.limits[0]",
        Workload::SeqRead,
        Metric::ReadBps,
        150.0 * MBS,
    )]);
    let a = evaluate(&d, &rules);
    assert_eq!(verdict_of(&a, "/dev/a").verdict, Verdict::Pass);
    let b = verdict_of(&a, "/dev/b");
    assert_eq!(b.verdict, Verdict::Fail);
    let c = &b.checks[0];
    assert_eq!((c.rule, c.verdict), (CheckRule::Limit, Verdict::Fail));
    assert_eq!(c.figure.as_deref(), Some("read_bytes_per_sec"));
    assert_eq!((c.value, c.limit), (Some(149.9 * MBS), Some(150.0 * MBS)));
    assert_eq!(c.source, "acceptance.limits[0]");
    assert_eq!(
        c.message,
        "seq_read: read_bytes_per_sec 149.9 MB/s below the floor 150.0 MB/s"
    );
    assert_eq!(a.verdict, Verdict::Fail);
    assert_eq!(a.rules, "config");
    // As a warning, it warns.
    let mut warn = rules.clone();
    warn.limits[0].severity = Severity::Warn;
    assert_eq!(verdict_of(&evaluate(&d, &warn), "/dev/b").verdict, Verdict::Warn);
}

/// A limit applies only to the tests of its name or workload and to the
/// targets its filter selects; absent facts never match a filter.
#[test]
fn a_limit_applies_to_its_tests_and_the_disks_it_selects() {
    let mut hdd = model(disk("/dev/h", 4 << 40), "ST4000NM0035", "SN04");
    hdd.rotational = Some(true);
    hdd.transport = Some("sata".into());
    let mut ssd = model(disk("/dev/s", 1 << 40), "Samsung SSD 870", "1B6Q");
    ssd.rotational = Some(false);
    let unknown = disk("/dev/u", 4 << 40);
    let d = doc(
        vec![hdd, ssd, unknown],
        vec![seq("/dev/h", 100.0), seq("/dev/s", 100.0), seq("/dev/u", 100.0)],
    );
    let mut l = floor("acceptance.limits[0]", Workload::SeqRead, Metric::ReadBps, 200.0 * MBS);
    l.only = DiskFilter {
        model: Some("ST4000*".into()),
        transport: Some("sata".into()),
        rotational: Some(true),
        min_size: Some(2 << 40),
        max_size: Some(8 << 40),
    };
    let a = evaluate(&d, &config_rules(vec![l.clone()]));
    assert_eq!(verdict_of(&a, "/dev/h").verdict, Verdict::Fail);
    assert!(verdict_of(&a, "/dev/s").checks.is_empty());
    assert!(verdict_of(&a, "/dev/u").checks.is_empty(), "no model: not selected");
    // Each field of the filter on its own excludes the HDD.
    for f in [
        DiskFilter {
            model: Some("WD*".into()),
            ..l.only.clone()
        },
        DiskFilter {
            transport: Some("sas".into()),
            ..l.only.clone()
        },
        DiskFilter {
            rotational: Some(false),
            ..l.only.clone()
        },
        DiskFilter {
            min_size: Some(5 << 40),
            ..l.only.clone()
        },
        DiskFilter {
            max_size: Some(3 << 40),
            ..l.only.clone()
        },
    ] {
        let mut l2 = l.clone();
        l2.only = f.clone();
        let a = evaluate(&d, &config_rules(vec![l2]));
        assert!(verdict_of(&a, "/dev/h").checks.is_empty(), "{f:?}");
    }
    // By name: only the test of that name.
    let mut by_name = floor("acceptance.limits[0]", Workload::SeqRead, Metric::ReadBps, 200.0 * MBS);
    by_name.workload = None;
    by_name.test = Some("other".into());
    assert!(evaluate(&d, &config_rules(vec![by_name]))
        .targets
        .iter()
        .all(|t| t.checks.is_empty()));
}

/// Latency ceilings: mean, a percentile and max of the main step's reads;
/// a percentile the results do not hold, and writes a read test has not
/// got, are warnings (not checked), never a pass.
#[test]
fn latency_ceilings_on_mean_percentile_and_max() {
    let d = doc(
        vec![disk("/dev/a", 1 << 30)],
        vec![rand_lat("/dev/a", 90_000.0, 2_000_000, 9_000_000)],
    );
    let ceiling = |direction, stat, ns| Ceiling { direction, stat, ns };
    let l = Limit {
        source: "acceptance.limits[0]".into(),
        test: Some("rand_read".into()),
        workload: None,
        only: DiskFilter::default(),
        floors: Vec::new(),
        ceilings: vec![
            ceiling(Direction::Read, LatStat::Mean, 100_000),
            ceiling(Direction::Read, LatStat::Percentile(99.0), 1_000_000),
            ceiling(Direction::Read, LatStat::Max, 9_000_000),
            ceiling(Direction::Read, LatStat::Percentile(99.99), 1),
            ceiling(Direction::Write, LatStat::Mean, 1),
        ],
        severity: Severity::Fail,
    };
    let a = evaluate(&d, &config_rules(vec![l]));
    let t = verdict_of(&a, "/dev/a");
    let got: Vec<(&str, Verdict)> = t
        .checks
        .iter()
        .map(|c| (c.figure.as_deref().unwrap(), c.verdict))
        .collect();
    assert_eq!(
        got,
        [
            ("read_lat_mean_ns", Verdict::Pass),
            ("read_lat_p99_ns", Verdict::Fail),
            ("read_lat_max_ns", Verdict::Pass),
            ("read_lat_p99.99_ns", Verdict::Warn),
            ("write_lat_mean_ns", Verdict::Warn),
        ]
    );
    assert_eq!(
        t.checks[1].message,
        "rand_read: read latency p99 2.00 ms above the ceiling 1.00 ms"
    );
    assert_eq!(t.verdict, Verdict::Fail);
}

/// Peers: the disk more than N% below its group's median fails when the
/// config says so, warns by default; the rule's N is the config's.
#[test]
fn peers_below_the_median_of_their_model() {
    let targets = vec![
        model(disk("/dev/a", 1 << 30), "M", "F"),
        model(disk("/dev/b", 1 << 30), "M", "F"),
        model(disk("/dev/c", 1 << 30), "M", "F"),
    ];
    let d = doc(
        targets,
        vec![seq("/dev/a", 100.0), seq("/dev/b", 100.0), seq("/dev/c", 85.0)],
    );
    let a = evaluate(&d, &Rules::defaults());
    assert_eq!(verdict_of(&a, "/dev/a").verdict, Verdict::Pass);
    let c = verdict_of(&a, "/dev/c");
    assert_eq!(c.verdict, Verdict::Warn);
    assert_eq!(c.checks[0].rule, CheckRule::Peers);
    assert!(c.checks[0].message.contains("15.0% below"), "{}", c.checks[0].message);
    assert_eq!(a.rules, "defaults");
    let fails = evaluate(&d, &config_rules(Vec::new()));
    assert_eq!(verdict_of(&fails, "/dev/c").verdict, Verdict::Fail);
    let mut wide = config_rules(Vec::new());
    wide.peers.below = 0.20;
    assert_eq!(verdict_of(&evaluate(&d, &wide), "/dev/c").verdict, Verdict::Pass);
    wide.peers.severity = Severity::Off;
    assert!(verdict_of(&evaluate(&d, &wide), "/dev/c").checks.is_empty());
}

/// The baseline of earlier runs: its median per model, firmware, test and
/// figure; a disk more than N% below it fails, one of another model is
/// not checked.
#[test]
fn a_baseline_from_earlier_runs_and_a_disk_below_it() {
    let earlier: Vec<ResultDoc> = [100.0, 110.0, 120.0]
        .iter()
        .map(|v| doc(vec![model(disk("/dev/a", 1 << 30), "M", "F")], vec![seq("/dev/a", *v)]))
        .collect();
    let refs: Vec<&ResultDoc> = earlier.iter().collect();
    let b = Baseline::of(&refs);
    assert_eq!(b.documents, 3);
    assert_eq!(b.figures.len(), 1);
    let f = &b.figures[0];
    assert_eq!(
        (f.count, f.median, f.min, f.max),
        (3, 110.0 * MBS, 100.0 * MBS, 120.0 * MBS)
    );
    let now = doc(
        vec![
            model(disk("/dev/x", 1 << 30), "M", "F"),
            model(disk("/dev/y", 1 << 30), "M", "F"),
            model(disk("/dev/z", 1 << 30), "N", "F"),
        ],
        vec![seq("/dev/x", 99.0), seq("/dev/y", 98.9), seq("/dev/z", 1.0)],
    );
    let mut rules = config_rules(Vec::new());
    rules.peers.severity = Severity::Off;
    rules.baseline = Some(BaselineRule {
        baseline: b,
        from: "baseline.json".into(),
        below: 0.10,
        severity: Severity::Fail,
    });
    let a = evaluate(&now, &rules);
    assert_eq!(
        verdict_of(&a, "/dev/x").verdict,
        Verdict::Pass,
        "{:?}",
        verdict_of(&a, "/dev/x")
    );
    let y = verdict_of(&a, "/dev/y");
    assert_eq!(y.verdict, Verdict::Fail);
    assert_eq!(y.checks[0].source, "acceptance.baseline (baseline.json)");
    assert!(verdict_of(&a, "/dev/z").checks.is_empty());
}

/// A baseline of three runs at 100, 110 and 120 MB/s of model M, F.
fn baseline_of_three() -> Baseline {
    let earlier: Vec<ResultDoc> = [100.0, 110.0, 120.0]
        .iter()
        .map(|v| doc(vec![model(disk("/dev/a", 1 << 30), "M", "F")], vec![seq("/dev/a", *v)]))
        .collect();
    let refs: Vec<&ResultDoc> = earlier.iter().collect();
    Baseline::of(&refs)
}

/// A baseline as read is checked as a config is: a negative or zero
/// median, a count of 0, min above max, a figure past 10^15, a NaN, a
/// figure twice, figures of no document are refused, naming the field,
/// its value and what is expected; what `Baseline::of` writes passes.
#[test]
fn a_nonsense_baseline_is_refused_naming_the_field() {
    let good = baseline_of_three();
    assert_eq!(good.check(), Ok(()));
    type Spoil = fn(&mut Baseline);
    let cases: [(&str, Spoil); 10] = [
        ("figures[0].median: -1e8 is out of range; expected a figure in bytes/s above 0", |b| {
            b.figures[0].median = -1e8;
        }),
        ("figures[0].median: 0e0 is out of range", |b| b.figures[0].median = 0.0),
        ("figures[0].median: 1e300 is out of range; expected a figure in bytes/s above 0 and at most 1e15", |b| {
            b.figures[0].median = 1e300;
        }),
        ("figures[0].min: NaN is out of range", |b| b.figures[0].min = f64::NAN),
        ("figures[0].max: inf is out of range", |b| b.figures[0].max = f64::INFINITY),
        ("figures[0].count: 0; expected", |b| b.figures[0].count = 0),
        ("figures[0]: min 1.3e8, median 1.1e8, max 1.2e8 are out of order; expected min <= median <= max", |b| {
            b.figures[0].min = 130e6;
        }),
        ("figures[0]: min 1e8, median 1.3e8, max 1.2e8 are out of order", |b| b.figures[0].median = 130e6),
        ("figures[1]: model \"M\", firmware \"F\", test \"seq_read\", metric read_bytes_per_sec again (as figures[0])", |b| {
            let f = b.figures[0].clone();
            b.figures.push(f);
        }),
        ("documents: 0 with 1 figure(s); expected", |b| b.documents = 0),
    ];
    for (want, spoil) in cases {
        let mut b = good.clone();
        spoil(&mut b);
        let e = b.check().expect_err(want);
        assert!(e.starts_with(want), "{e:?}, expected {want:?}");
    }
    let mut b = good.clone();
    b.schema = "x".into();
    assert_eq!(
        b.check(),
        Err("has schema \"x\"; expected \"bootbench.baseline/1\"".into())
    );
}

/// A baseline median of 0 (which a checked baseline refuses) in a rule
/// made in code: the check says it sets no floor, never `inf%` or `NaN%`.
#[test]
fn a_baseline_median_of_zero_prints_no_infinity() {
    for median in [0.0] {
        let mut b = baseline_of_three();
        b.figures[0].median = median;
        let mut rules = config_rules(Vec::new());
        rules.peers.severity = Severity::Off;
        rules.baseline = Some(BaselineRule {
            baseline: b,
            from: "baseline.json".into(),
            below: 0.10,
            severity: Severity::Fail,
        });
        for v in [0.0, 50.0] {
            let now = doc(vec![model(disk("/dev/x", 1 << 30), "M", "F")], vec![seq("/dev/x", v)]);
            let a = evaluate(&now, &rules);
            let x = verdict_of(&a, "/dev/x");
            let m = &x.checks[0].message;
            assert!(!m.contains("inf") && !m.contains("NaN"), "{m}");
            assert!(
                m.contains("(a median not above 0 sets no floor; at most 10% below)"),
                "{m}"
            );
        }
    }
}

fn reading(counters: &[(&str, u64)]) -> HealthReading {
    HealthReading {
        source: "ata_smart".into(),
        smart_passed: Some(true),
        temperature_c: Some(40),
        warning_temperature_c: Some(70),
        counters: counters.iter().map(|(k, v)| (String::from(*k), *v)).collect(),
        ..HealthReading::default()
    }
}

fn with_health(path: &str, before: HealthReading, after: HealthReading, during: Option<i32>) -> TargetInfo {
    let mut t = disk(path, 1 << 30);
    t.health = Some(Health {
        delta: crate::device::health::counter_delta(&before, &after),
        before,
        after: Some(after),
        tests: vec![TestTemperature {
            test: "seq_read".into(),
            source: "during".into(),
            samples: 3,
            max_temperature_c: during,
        }],
    });
    t
}

/// The health rules: a counter that grew, a failed status, an attribute
/// failing now, a temperature at the warning threshold during a test, and
/// the NVMe limits, each fail the disk; a quiet disk passes every check.
#[test]
fn health_rules_fail_what_they_name() {
    let quiet = with_health(
        "/dev/q",
        reading(&[("pending_sectors", 0)]),
        reading(&[("pending_sectors", 0)]),
        Some(45),
    );
    let grew = with_health(
        "/dev/g",
        reading(&[("pending_sectors", 0)]),
        reading(&[("pending_sectors", 8)]),
        None,
    );
    let mut bad_status = reading(&[]);
    bad_status.smart_passed = Some(false);
    let failed = with_health("/dev/f", reading(&[]), bad_status, None);
    let mut attr = reading(&[]);
    attr.attributes.push(SmartAttribute {
        id: 5,
        name: Some("Reallocated_Sector_Ct".into()),
        flags: 0x33,
        current: 10,
        worst: 10,
        threshold: Some(36),
        raw: 900,
        failing: true,
    });
    let attribute = with_health("/dev/r", attr, reading(&[]), None);
    let hot = with_health("/dev/t", reading(&[]), reading(&[]), Some(70));
    let d = doc(vec![quiet, grew, failed, attribute, hot], Vec::new());
    let a = evaluate(&d, &Rules::defaults());
    let q = verdict_of(&a, "/dev/q");
    assert_eq!(q.verdict, Verdict::Pass);
    assert_eq!(
        q.checks.iter().map(|c| c.rule).collect::<Vec<_>>(),
        [CheckRule::SmartStatus, CheckRule::Counter, CheckRule::Temperature]
    );
    let g = verdict_of(&a, "/dev/g");
    assert_eq!((g.verdict, g.checks[1].rule), (Verdict::Fail, CheckRule::Counter));
    assert_eq!(g.checks[1].message, "pending_sectors grew during the run: 0 -> 8");
    assert_eq!(verdict_of(&a, "/dev/f").checks[0].verdict, Verdict::Fail);
    assert_eq!(
        verdict_of(&a, "/dev/f").checks[0].message,
        "SMART status failed after the tests: SMART RETURN STATUS: threshold exceeded"
    );
    let r = verdict_of(&a, "/dev/r");
    assert_eq!(
        r.checks[0].message,
        "attributes at or below their threshold: 5 (Reallocated_Sector_Ct)"
    );
    let t = verdict_of(&a, "/dev/t");
    assert_eq!(t.verdict, Verdict::Fail);
    assert_eq!(
        t.checks.last().unwrap().message,
        "highest temperature 70 C (during seq_read) at or above 70 C"
    );
    // Turned off, the rule gives no check.
    let mut off = Rules::defaults();
    off.health.counters = false;
    off.health.temperature = false;
    assert_eq!(verdict_of(&evaluate(&d, &off), "/dev/g").verdict, Verdict::Pass);
    assert_eq!(verdict_of(&evaluate(&d, &off), "/dev/t").verdict, Verdict::Pass);
    // The config's own ceiling, below the device's.
    let mut cool = Rules::defaults();
    cool.health.max_temperature_c = Some(45);
    let q = verdict_of(&evaluate(&d, &cool), "/dev/q")
        .checks
        .last()
        .unwrap()
        .clone();
    assert_eq!((q.verdict, q.limit), (Verdict::Fail, Some(45.0)));
    assert_eq!(q.source, "acceptance.health.max_temperature");
}

#[test]
fn nvme_spare_endurance_and_new_critical_warnings() {
    let nvme = |used: u8, spare: u8, warn: u8| HealthReading {
        source: "nvme_smart_log".into(),
        smart_passed: Some(warn == 0),
        nvme: Some(NvmeHealth {
            critical_warning: warn,
            available_spare_pct: spare,
            available_spare_threshold_pct: 10,
            percentage_used: used,
            data_units_read: 0,
            data_units_written: 0,
        }),
        counters: BTreeMap::new(),
        ..HealthReading::default()
    };
    let ok = with_health("/dev/n0", nvme(3, 100, 0), nvme(3, 100, 0), None);
    let worn = with_health("/dev/n1", nvme(101, 100, 0), nvme(101, 100, 0), None);
    let spare = with_health("/dev/n2", nvme(3, 9, 0), nvme(3, 9, 0), None);
    let warned = with_health("/dev/n3", nvme(3, 100, 0), nvme(3, 100, 0x04), None);
    let d = doc(vec![ok, worn, spare, warned], Vec::new());
    let a = evaluate(&d, &Rules::defaults());
    let rules_failed = |p: &str| -> Vec<CheckRule> {
        verdict_of(&a, p)
            .checks
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .map(|c| c.rule)
            .collect()
    };
    assert_eq!(verdict_of(&a, "/dev/n0").verdict, Verdict::Pass);
    assert_eq!(rules_failed("/dev/n1"), [CheckRule::PercentageUsed]);
    assert_eq!(rules_failed("/dev/n2"), [CheckRule::AvailableSpare]);
    assert_eq!(rules_failed("/dev/n3"), [CheckRule::SmartStatus, CheckRule::Counter]);
}

/// Errors: an I/O error or a timeout fails the target, an array included;
/// a skipped test warns; with the rule off, neither.
#[test]
fn test_errors_fail_and_tests_not_run_warn() {
    let mut err = seq("/dev/a", 1.0);
    err.status = Status::Error {
        errno: 5,
        op: Op::Read,
        offset: 4096,
        message: "Input/output error".into(),
    };
    let mut skipped = seq("/dev/b", 1.0);
    skipped.status = Status::Skipped {
        reason: "not run: the disk is absent".into(),
    };
    let mut timeout = seq("/dev/md0", 1.0);
    timeout.status = Status::Timeout {
        message: "no answer for 30 s".into(),
    };
    let d = doc(
        vec![
            disk("/dev/a", 1 << 30),
            disk("/dev/b", 1 << 30),
            md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
        ],
        vec![err, skipped, timeout],
    );
    let a = evaluate(&d, &Rules::defaults());
    // A write test the plan skipped on a disk it may not write is no check.
    let mut refused = d.clone();
    refused.targets[1].write_refusal = Some("not named in destructive".into());
    let mut write = test("/dev/b", Workload::SeqWrite, Metric::WriteBps, 0.0);
    write.status = Status::Skipped {
        reason: "not named in destructive".into(),
    };
    refused.tests[1] = write;
    assert_eq!(
        verdict_of(&evaluate(&refused, &Rules::defaults()), "/dev/b").verdict,
        Verdict::Pass
    );
    let e = verdict_of(&a, "/dev/a");
    assert_eq!((e.verdict, e.checks[0].rule), (Verdict::Fail, CheckRule::TestError));
    assert_eq!(
        e.checks[0].message,
        "seq_read: read error at byte 4096: Input/output error (errno 5)"
    );
    assert_eq!(verdict_of(&a, "/dev/b").verdict, Verdict::Warn);
    assert_eq!(verdict_of(&a, "/dev/md0").verdict, Verdict::Fail);
    let mut off = Rules::defaults();
    off.errors = false;
    assert_eq!(evaluate(&d, &off).verdict, Verdict::Pass);
}

/// The block: one line per target with serial, model, verdict and first
/// reason, the run's line last, no line wider than the screen, control
/// characters escaped.
#[test]
fn the_verdict_block_fits_an_80_column_screen() {
    let mut a = model(disk("/dev/a", 1 << 30), "QEMU HARDDISK\u{1b}[2J", "F");
    a.serial = Some("E2E-SLOW-SERIAL-NUMBER-THAT-IS-LONG".into());
    let b = disk("/dev/b", 1 << 30);
    let d = doc(vec![a, b], vec![seq("/dev/a", 10.0), seq("/dev/b", 500.0)]);
    let rules = config_rules(vec![floor(
        "acceptance.limits[0]",
        Workload::SeqRead,
        Metric::ReadBps,
        150.0 * MBS,
    )]);
    let lines = verdict_block(&evaluate(&d, &rules));
    for l in &lines {
        assert!(l.ends_with('\n'));
        assert!(l.chars().count() <= BLOCK_WIDTH + 1, "{l:?}");
        assert!(!l.contains('\u{1b}'), "{l:?}");
    }
    assert_eq!(lines.len(), 5);
    assert!(lines[0].starts_with("== acceptance verdict (rules: config) ==="));
    // The serial (35 characters) is cut at 24, the model at 14; the
    // reason takes the rest of the 79 columns, cut too.
    assert_eq!(
        lines[1],
        "disk                     model          verdict first reason\n"
    );
    assert_eq!(
        lines[2],
        "E2E-SLOW-SERIAL-NUMBE... QEMU HARDDI... FAIL    seq_read read 10.0 MB/s < 15...\n"
    );
    assert_eq!(lines[3], format!("{:<24} {:<14} PASS\n", "/dev/b", "-"));
    assert_eq!(lines[4], "run: FAIL (1 of 2 targets failed, 0 warned)\n");
}

/// A device string is escaped once in the block, as on every other line
/// (`A<ESC>B` is `A\x1bB`, one backslash), and cut after escaping: no
/// line wider than the screen, no escape cut in two.
#[test]
fn the_verdict_block_escapes_device_strings_once() {
    let mut a = model(disk("/dev/a", 1 << 30), "M\u{1b}N", "F");
    a.serial = Some("A\u{1b}B".into());
    let mut b = model(disk("/dev/b", 1 << 30), "\u{85}\u{85}\u{85}\u{85}", "F");
    b.serial = Some("\\\u{1b}\u{2028}".repeat(10));
    let d = doc(vec![a, b], vec![seq("/dev/a", 10.0), seq("/dev/b", 10.0)]);
    let rules = config_rules(vec![floor(
        "acceptance.limits[0]",
        Workload::SeqRead,
        Metric::ReadBps,
        150.0 * MBS,
    )]);
    let lines = verdict_block(&evaluate(&d, &rules));
    for l in &lines {
        assert!(
            l.chars().count() <= BLOCK_WIDTH + 1,
            "{} characters: {l:?}",
            l.chars().count()
        );
        // Every backslash begins a whole escape.
        let mut rest = l.as_str();
        while let Some(i) = rest.find('\\') {
            rest = &rest[i..];
            let whole = ["\\\\", "\\x1b", "\\u0085", "\\u2028"]
                .iter()
                .find(|e| rest.starts_with(**e));
            let e = whole.unwrap_or_else(|| panic!("an escape cut in {l:?}"));
            rest = &rest[e.len()..];
        }
    }
    assert!(lines[2].starts_with("A\\x1bB "), "{:?}", lines[2]);
    assert!(lines[2].contains(" M\\x1bN "), "{:?}", lines[2]);
    assert!(!lines[2].contains("\\\\"), "escaped twice: {:?}", lines[2]);
    // The serial's escapes (4 + 2 + 6 = 12 characters each) cut at 24
    // columns whole: `\\\x1b\u2028`, then `\\` and `\x1b`, then `...`.
    assert!(lines[3].starts_with("\\\\\\x1b\\u2028\\\\\\x1b... "), "{:?}", lines[3]);
}

/// The self-test rule: completed without error passes; a failing result
/// fails with its first failing LBA; not supported and interrupted warn; a
/// timeout fails; the rule turned off gives no check.
#[test]
fn a_self_test_must_complete_without_error() {
    use crate::document::result::{SelfTest, SelfTestKind, SelfTestOutcome as O, SelfTestSource};
    let with = |path: &str, outcome: O, passed: Option<bool>, lba: Option<u64>| {
        let mut t = disk(path, 1 << 30);
        t.self_test = Some(SelfTest {
            kind: SelfTestKind::Short,
            outcome,
            passed,
            remaining_pct: Some(0),
            failing_lba: lba,
            segment: None,
            power_on_hours: None,
            estimate_ns: None,
            duration_ns: 1,
            source: SelfTestSource::AtaSelfTestLog,
            message: "as the log says".into(),
            error: None,
        });
        t
    };
    let d = doc(
        vec![
            with("/dev/ok", O::Completed, Some(true), None),
            with("/dev/read", O::FailedRead, Some(false), Some(8192)),
            with("/dev/na", O::NotSupported, None, None),
            with("/dev/intr", O::Interrupted, None, None),
            with("/dev/slow", O::Timeout, None, None),
            disk("/dev/none", 1 << 30),
        ],
        Vec::new(),
    );
    let a = evaluate(&d, &Rules::defaults());
    let v = |p: &str| verdict_of(&a, p).verdict;
    assert_eq!(
        [
            v("/dev/ok"),
            v("/dev/read"),
            v("/dev/na"),
            v("/dev/intr"),
            v("/dev/slow"),
            v("/dev/none")
        ],
        [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Warn,
            Verdict::Warn,
            Verdict::Fail,
            Verdict::Pass
        ]
    );
    let read = &verdict_of(&a, "/dev/read").checks[0];
    assert_eq!(read.rule, CheckRule::SelfTest);
    assert_eq!(
        read.message,
        "short self-test: failed_read: as the log says (first failing LBA 8192)"
    );
    assert!(verdict_of(&a, "/dev/none").checks.is_empty());
    let mut off = Rules::defaults();
    off.self_test = false;
    assert_eq!(evaluate(&d, &off).verdict, Verdict::Pass);
}

/// Kernel log lines fail the disk they name (and only it), with the line;
/// hidden capacity warns by default, fails when the config says so, and a
/// disk with none found passes the check.
#[test]
fn kernel_lines_fail_their_disk_and_hidden_capacity_warns() {
    use crate::document::result::{CapacitySource, HiddenCapacity, KernelLogKind, KernelLogLine};
    let cap = |hidden: u64| HiddenCapacity {
        source: CapacitySource::AtaHpa,
        visible_bytes: 1 << 30,
        native_bytes: Some((1 << 30) + hidden),
        hidden_bytes: Some(hidden),
        dco_bytes: None,
        unallocated_bytes: None,
        error: None,
    };
    let mut a = disk("/dev/vdc", 1 << 30);
    a.hidden_capacity = Some(cap(0));
    let mut b = disk("/dev/sdb", 1 << 30);
    b.hidden_capacity = Some(cap(4096));
    let mut d = doc(vec![a, b], vec![seq("/dev/vdc", 100.0), seq("/dev/sdb", 100.0)]);
    d.kernel_log.push(KernelLogLine {
        target: "/dev/vdc".into(),
        test: Some("seq_read".into()),
        kind: KernelLogKind::IoError,
        level: 3,
        time_ns: 1,
        text: "I/O error, dev vdc, sector 8192 op 0x0:(READ) flags 0x800 phys_seg 231 prio class 2".into(),
        sector: Some(8192),
    });
    let acc = evaluate(&d, &Rules::defaults());
    let vdc = verdict_of(&acc, "/dev/vdc");
    assert_eq!(vdc.verdict, Verdict::Fail);
    let k = vdc.checks.iter().find(|c| c.rule == CheckRule::KernelLog).unwrap();
    assert_eq!((k.test.as_deref(), k.value), (Some("seq_read"), Some(8192.0)));
    assert_eq!(
        k.message,
        "kernel io_error during seq_read: I/O error, dev vdc, sector 8192 op 0x0:(READ) flags 0x800 phys_seg 231 prio class 2"
    );
    let h = vdc.checks.iter().find(|c| c.rule == CheckRule::HiddenCapacity).unwrap();
    assert_eq!(h.verdict, Verdict::Pass);
    let sdb = verdict_of(&acc, "/dev/sdb");
    assert_eq!(sdb.verdict, Verdict::Warn, "{sdb:?}");
    assert_eq!(
        sdb.checks[0].message,
        "4096 bytes hidden beyond the host's 1073741824 (HPA)"
    );
    let mut strict = Rules::defaults();
    strict.hidden_capacity = Severity::Fail;
    assert_eq!(verdict_of(&evaluate(&d, &strict), "/dev/sdb").verdict, Verdict::Fail);
    let mut off = Rules::defaults();
    off.errors = false;
    off.hidden_capacity = Severity::Off;
    assert_eq!(evaluate(&d, &off).verdict, Verdict::Pass);
}

/// A SCSI disk's grown defect list that grew during the run fails it.
#[test]
fn grown_defects_must_not_grow() {
    let scsi = |n: u64| HealthReading {
        source: "scsi_log_sense".into(),
        counters: [(String::from("grown_defects"), n)].into_iter().collect(),
        ..HealthReading::default()
    };
    let d = doc(vec![with_health("/dev/sdq", scsi(3), scsi(5), None)], Vec::new());
    let v = evaluate(&d, &Rules::defaults());
    let c = &verdict_of(&v, "/dev/sdq").checks[0];
    assert_eq!((c.rule, c.verdict), (CheckRule::Counter, Verdict::Fail));
    assert_eq!(c.message, "grown_defects grew during the run: 3 -> 5");
}

/// The surface scan: unreadable blocks fail the disk, reads of 500 ms or
/// more warn (150 ms and up when the config says so), a scan that ended
/// early warns, a clean whole scan passes; a disk never scanned has no
/// such check.
#[test]
fn unreadable_blocks_fail_slow_reads_and_short_scans_warn() {
    use crate::passes::scan::{record, ScanEnd, ScanOutcome, ScanSpec};
    let spec = ScanSpec {
        start: 0,
        end: 1 << 30,
        chunk: 1 << 20,
        depth: 4,
        coverage_ppm: crate::passes::scan::WHOLE,
        logical_block: 512,
        retries: 2,
        max_bad: 1000,
        zones: 4,
        slowest: 4,
        holds_data: None,
    };
    let scanned = |f: &dyn Fn(&mut ScanOutcome)| {
        let mut out = ScanOutcome::empty(&spec);
        out.classes = [1020, 2, 0, 1, 1, 0];
        out.reads = 1024;
        out.bytes = out.planned_bytes;
        f(&mut out);
        record(&spec, &out)
    };
    let mut clean = disk("/dev/sda", 1 << 30);
    clean.surface_scan = Some(scanned(&|_| {}));
    let mut bad = disk("/dev/sdb", 1 << 30);
    bad.surface_scan = Some(scanned(&|o| o.unreadable = vec![8192, 8200]));
    let mut slow = disk("/dev/sdc", 1 << 30);
    slow.surface_scan = Some(scanned(&|o| o.classes[5] = 3));
    let mut short = disk("/dev/sdd", 1 << 30);
    short.surface_scan = Some(scanned(&|o| (o.end, o.bytes) = (ScanEnd::Stopped, 1 << 20)));
    let plain = disk("/dev/sde", 1 << 30);
    let d = doc(vec![clean, bad, slow, short, plain], Vec::new());
    let acc = evaluate(&d, &Rules::defaults());
    let scan_checks = |t: &str| -> Vec<(Verdict, String)> {
        verdict_of(&acc, t)
            .checks
            .iter()
            .filter(|c| c.rule == CheckRule::SurfaceScan)
            .map(|c| (c.verdict, c.message.clone()))
            .collect()
    };
    assert_eq!(verdict_of(&acc, "/dev/sda").verdict, Verdict::Pass);
    assert_eq!(scan_checks("/dev/sda").len(), 2, "unreadable and slow, both held");
    assert_eq!(verdict_of(&acc, "/dev/sdb").verdict, Verdict::Fail);
    assert_eq!(
        scan_checks("/dev/sdb")[0],
        (
            Verdict::Fail,
            String::from("2 unreadable block(s), the first at LBA 8192")
        )
    );
    assert_eq!(verdict_of(&acc, "/dev/sdc").verdict, Verdict::Warn);
    assert_eq!(
        scan_checks("/dev/sdc")[1],
        (Verdict::Warn, String::from("3 read(s) of 500 ms or more"))
    );
    assert_eq!(verdict_of(&acc, "/dev/sdd").verdict, Verdict::Warn);
    assert!(scan_checks("/dev/sdd")[2]
        .1
        .starts_with("the scan ended stopped after 1048576 of 1073741824 bytes"));
    assert!(scan_checks("/dev/sde").is_empty());
    // From 150 ms: the 150-500 ms class counts too.
    let mut strict = Rules::defaults();
    strict.surface_scan.slow_ms = 150;
    let acc = evaluate(&d, &strict);
    assert_eq!(verdict_of(&acc, "/dev/sda").verdict, Verdict::Warn);
    let mut off = Rules::defaults();
    off.surface_scan.unreadable = Severity::Off;
    assert_eq!(verdict_of(&evaluate(&d, &off), "/dev/sdb").verdict, Verdict::Pass);
}

/// The burn-in's rules: unwritable or unreadable blocks fail, mismatched
/// blocks fail, a burn-in refused or stopped warns with why; each rule can
/// be softened or turned off; a disk not burnt in has no burn-in check.
#[test]
fn burn_in_bad_and_mismatched_blocks_fail_and_a_short_burn_in_warns() {
    use crate::document::result::{BurnEndState, BurnOrder};
    use crate::passes::burnin::{not_run, record, BurnSpec, PassOutcome, Pattern};
    let spec = BurnSpec {
        start: 0,
        end: 1 << 30,
        chunk: 1 << 20,
        depth: 4,
        logical_block: 512,
        retries: 2,
        max_bad: 1000,
        order: BurnOrder::Sequential,
        patterns: vec![Pattern::Byte(0xaa)],
        loops: 1,
        seed: 1,
        zones: None,
    };
    let burnt = |f: &dyn Fn(&mut PassOutcome)| {
        let mut p = PassOutcome::new(Pattern::Byte(0xaa));
        (p.planned, p.written, p.verified) = (1 << 30, 1 << 30, 1 << 30);
        f(&mut p);
        let end = p.end;
        record(&spec, &[p], crate::vocab::units::Nanos(5), end)
    };
    let mut clean = disk("/dev/sda", 1 << 30);
    clean.burn_in = Some(burnt(&|_| {}));
    let mut bad = disk("/dev/sdb", 1 << 30);
    bad.burn_in = Some(burnt(&|p| (p.unwritable, p.unreadable) = (vec![77], vec![12])));
    let mut mism = disk("/dev/sdc", 1 << 30);
    mism.burn_in = Some(burnt(&|p| p.mismatched = vec![4096]));
    let mut refused = disk("/dev/sdd", 1 << 30);
    refused.burn_in = Some(not_run(&spec, String::from("writes refused: /dev/sdd holds data")));
    let mut stopped = disk("/dev/sde", 1 << 30);
    stopped.burn_in = Some(burnt(&|p| (p.end, p.verified) = (BurnEndState::Stopped, 0)));
    let plain = disk("/dev/sdf", 1 << 30);
    let d = doc(vec![clean, bad, mism, refused, stopped, plain], Vec::new());
    let acc = evaluate(&d, &Rules::defaults());
    let burn = |acc: &Acceptance, t: &str| -> Vec<(Verdict, String)> {
        verdict_of(acc, t)
            .checks
            .iter()
            .filter(|c| c.rule == CheckRule::BurnIn)
            .map(|c| (c.verdict, c.message.clone()))
            .collect()
    };
    assert_eq!(verdict_of(&acc, "/dev/sda").verdict, Verdict::Pass);
    assert_eq!(burn(&acc, "/dev/sda").len(), 2, "bad and mismatched, both held");
    assert_eq!(verdict_of(&acc, "/dev/sdb").verdict, Verdict::Fail);
    assert_eq!(
        burn(&acc, "/dev/sdb")[0],
        (
            Verdict::Fail,
            String::from("1 unwritable and 1 unreadable block(s), the first at LBA 12")
        )
    );
    assert_eq!(verdict_of(&acc, "/dev/sdc").verdict, Verdict::Fail);
    assert_eq!(
        burn(&acc, "/dev/sdc")[1],
        (
            Verdict::Fail,
            String::from("1 block(s) read back with other contents than written, the first at LBA 4096")
        )
    );
    assert_eq!(verdict_of(&acc, "/dev/sdd").verdict, Verdict::Warn);
    assert_eq!(
        burn(&acc, "/dev/sdd")[2].1,
        "the burn-in ended error after 0 of 2147483648 bytes written and read back: writes refused: /dev/sdd holds data"
    );
    assert_eq!(verdict_of(&acc, "/dev/sde").verdict, Verdict::Warn);
    assert!(burn(&acc, "/dev/sde")[2]
        .1
        .starts_with("the burn-in ended stopped after 1073741824 of"));
    assert!(burn(&acc, "/dev/sdf").is_empty());
    let mut soft = Rules::defaults();
    soft.burn_in.mismatched = Severity::Warn;
    soft.burn_in.bad = Severity::Off;
    let acc = evaluate(&d, &soft);
    assert_eq!(verdict_of(&acc, "/dev/sdc").verdict, Verdict::Warn);
    assert_eq!(verdict_of(&acc, "/dev/sdb").verdict, Verdict::Pass);
}

/// Preconditioning: steady state passes; none within the round limit, or
/// preconditioning stopped or refused, warns by default (fail or off as
/// the config says), the message giving the last window's spread.
#[test]
fn preconditioning_without_steady_state_warns() {
    use crate::passes::steady::{not_run, record, PreconditionOutcome, PreconditionSpec, Round, Workload};
    let spec = PreconditionSpec {
        start: 0,
        end: 1 << 30,
        fill: true,
        workload: Workload {
            bs: 4096,
            depth: 32,
            random: true,
        },
        round: crate::vocab::units::Nanos(1_000_000_000),
        max_rounds: 6,
        window: 5,
        range_pct: 20.0,
        slope_pct: 10.0,
        seed: 1,
        logical_block: 512,
    };
    let with = |writes: &[u64], steady_at: Option<usize>| {
        let rounds = writes
            .iter()
            .map(|&w| Round {
                writes: w,
                bytes: w * 4096,
                time: crate::vocab::units::Nanos(1_000_000_000),
            })
            .collect();
        record(
            &spec,
            &PreconditionOutcome {
                fill: None,
                rounds,
                steady_at,
                ended: None,
            },
        )
    };
    let mut steady = disk("/dev/sda", 1 << 30);
    steady.precondition = Some(with(&[90_000, 50_000, 31_000, 30_000, 30_500, 29_800, 30_200], Some(7)));
    let mut not = disk("/dev/sdb", 1 << 30);
    not.precondition = Some(with(&[90_000, 80_000, 70_000, 60_000, 50_000, 40_000], None));
    let mut refused = disk("/dev/sdc", 1 << 30);
    refused.precondition = Some(not_run(&spec, String::from("writes refused: /dev/sdc holds data")));
    let d = doc(vec![steady, not, refused], Vec::new());
    let acc = evaluate(&d, &Rules::defaults());
    let check = |acc: &Acceptance, t: &str| -> (Verdict, String) {
        let c = verdict_of(acc, t)
            .checks
            .iter()
            .find(|c| c.rule == CheckRule::SteadyState)
            .expect("a steady-state check");
        (c.verdict, c.message.clone())
    };
    assert_eq!(verdict_of(&acc, "/dev/sda").verdict, Verdict::Pass);
    assert!(check(&acc, "/dev/sda")
        .1
        .starts_with("steady state at round 7; the last 5 rounds spread"));
    assert_eq!(
        check(&acc, "/dev/sdb"),
        (
            Verdict::Warn,
            String::from(
                "no steady state within 6 rounds; the last 5 rounds spread 66.7% of their mean and their fitted line moved 66.7% (limits 20% and 10%)"
            )
        )
    );
    assert_eq!(
        check(&acc, "/dev/sdc"),
        (
            Verdict::Warn,
            String::from("preconditioning ended error after 0 rounds: writes refused: /dev/sdc holds data")
        )
    );
    let mut strict = Rules::defaults();
    strict.steady_state = Severity::Fail;
    assert_eq!(verdict_of(&evaluate(&d, &strict), "/dev/sdb").verdict, Verdict::Fail);
    let mut off = Rules::defaults();
    off.steady_state = Severity::Off;
    assert_eq!(verdict_of(&evaluate(&d, &off), "/dev/sdb").verdict, Verdict::Pass);
}

/// A test that waited for steady state (`ss`): attained passes, with the
/// wait's time; a wait that reached `ss_max` warns by default (fail or off
/// as the config says), naming the step, the criterion and the last
/// window's figure.
#[test]
fn a_test_without_steady_state_warns() {
    use crate::document::result::{SteadyJudged, SteadyWait};
    use crate::spec::{SteadyCriterion, SteadySpec};
    use crate::vocab::units::Nanos;
    let waited = |target: &str, attained: bool| {
        let mut t = test(target, Workload::RandWrite, Metric::WriteIops, 1000.0);
        t.params.steady = Some(SteadySpec {
            ss: SteadyCriterion::parse("iops_slope:0.5%").unwrap(),
            ss_dur: Nanos::from_secs(10),
            ss_ramp: Nanos(0),
            ss_interval: Nanos::from_secs(1),
            ss_max: Nanos::from_secs(100),
        });
        let mut st = rand_lat(target, 1000.0, 1000, 1000).steps.remove(0);
        st.steady_state = vec![SteadyWait {
            attained,
            wait_ns: if attained { 42_000_000_000 } else { 100_000_000_000 },
            window: Some(SteadyJudged {
                mean: 1000.0,
                max_deviation: 30.0,
                slope: if attained { 2.0 } else { -12.5 },
                criterion: if attained { 0.2 } else { 1.25 },
            }),
            iops: Vec::new(),
            bw: Vec::new(),
        }];
        t.steps = vec![st];
        t
    };
    let d = doc(
        vec![
            disk("/dev/sda", 1 << 30),
            disk("/dev/sdb", 1 << 30),
            disk("/dev/sdc", 1 << 30),
        ],
        vec![
            waited("/dev/sda", true),
            waited("/dev/sdb", false),
            test("/dev/sdc", Workload::RandWrite, Metric::WriteIops, 1000.0),
        ],
    );
    let steady = |acc: &Acceptance, t: &str| -> Option<(Verdict, String)> {
        verdict_of(acc, t)
            .checks
            .iter()
            .find(|c| c.rule == CheckRule::SteadyState)
            .map(|c| (c.verdict, c.message.clone()))
    };
    let acc = evaluate(&d, &Rules::defaults());
    let (v, m) = steady(&acc, "/dev/sda").expect("a check");
    assert_eq!(v, Verdict::Pass);
    assert!(m.ends_with(": steady state (iops_slope:0.5%) after 42.0 s"), "{m}");
    let (v, m) = steady(&acc, "/dev/sdb").expect("a check");
    assert_eq!(v, Verdict::Warn);
    assert!(
        m.ends_with(
            ": step main reached no steady state (iops_slope:0.5%) within 100.0 s; the last window's iops_slope \
             was 1.250%; measured anyway"
        ),
        "{m}"
    );
    assert!(steady(&acc, "/dev/sdc").is_none(), "no wait, no check");
    let mut strict = Rules::defaults();
    strict.steady_state = Severity::Fail;
    assert_eq!(verdict_of(&evaluate(&d, &strict), "/dev/sdb").verdict, Verdict::Fail);
    let mut off = Rules::defaults();
    off.steady_state = Severity::Off;
    assert!(steady(&evaluate(&d, &off), "/dev/sdb").is_none());
}

/// FARM's power-on hours against SMART's: a reset SMART count fails the
/// disk with both figures; within the tolerance it passes; without FARM
/// (or turned off) there is no line.
#[test]
fn farm_power_on_hours_against_smart() {
    let farm_disk = |path: &str, smart: u64, farm: Option<u64>| {
        let mut before = reading(&[]);
        before.power_on_hours = Some(smart);
        before.farm = farm.map(|h| crate::document::result::Farm {
            power_on_hours: Some(h),
            ..Default::default()
        });
        let mut after = reading(&[]);
        after.power_on_hours = Some(smart);
        with_health(path, before, after, None)
    };
    let d = doc(
        vec![
            farm_disk("/dev/reset", 12, Some(26_304)),
            farm_disk("/dev/near", 1_000, Some(1_090)),
            farm_disk("/dev/none", 12, None),
        ],
        Vec::new(),
    );
    let a = evaluate(&d, &Rules::defaults());
    let hours = |path: &str| {
        verdict_of(&a, path)
            .checks
            .iter()
            .find(|c| c.rule == CheckRule::PowerOnHours)
            .cloned()
    };
    let reset = hours("/dev/reset").expect("a FARM line");
    assert_eq!(reset.verdict, Verdict::Fail);
    assert_eq!(reset.message, "power-on hours disagree: SMART 12 h, FARM 26,304 h");
    assert_eq!((reset.value, reset.limit), (Some(12.0), Some(26_304.0)));
    assert_eq!(reset.source, "acceptance.health.farm_hours");
    assert_eq!(verdict_of(&a, "/dev/reset").verdict, Verdict::Fail);
    let near = hours("/dev/near").expect("a FARM line");
    assert_eq!(near.verdict, Verdict::Pass);
    assert_eq!(near.message, "power-on hours agree: SMART 1,000 h, FARM 1,090 h");
    assert_eq!(verdict_of(&a, "/dev/near").verdict, Verdict::Pass);
    assert!(hours("/dev/none").is_none());
    let mut off = Rules::defaults();
    off.health.farm_hours = false;
    let a = evaluate(&d, &off);
    assert_eq!(verdict_of(&a, "/dev/reset").verdict, Verdict::Pass);
    assert!(verdict_of(&a, "/dev/reset")
        .checks
        .iter()
        .all(|c| c.rule != CheckRule::PowerOnHours));
}

/// The OCP C0h rules: bad NAND blocks or uncorrectable read errors that
/// grow fail the disk; low capacitor health and thermal throttling warn;
/// a disk without the log in both readings gets no OCP line.
#[test]
fn ocp_counters_fail_and_warnings_warn() {
    use crate::document::result::{OcpSmart, RawNormalized};
    let log = |bad_user: u64, uncorrectable: u64, capacitor: u16, throttled: u8| OcpSmart {
        bad_user_nand_blocks: RawNormalized {
            raw: bad_user,
            normalized: 100,
        },
        uncorrectable_read_errors: uncorrectable,
        capacitor_health: capacitor,
        thermal_throttling_events: throttled,
        ..OcpSmart::default()
    };
    let nvme = |path: &str, b: Option<OcpSmart>, a: Option<OcpSmart>| {
        let mut before = reading(&[]);
        before.ocp = b;
        let mut after = reading(&[]);
        after.ocp = a;
        with_health(path, before, after, None)
    };
    let d = doc(
        vec![
            nvme("/dev/quiet", Some(log(3, 0, 100, 0)), Some(log(3, 0, 100, 0))),
            nvme("/dev/grew", Some(log(3, 0, 100, 0)), Some(log(5, 1, 100, 0))),
            nvme("/dev/warm", Some(log(3, 0, 100, 0)), Some(log(3, 0, 60, 2))),
            nvme("/dev/plain", None, None),
        ],
        Vec::new(),
    );
    let a = evaluate(&d, &Rules::defaults());
    let ocp_lines = |path: &str| -> Vec<Check> {
        verdict_of(&a, path)
            .checks
            .iter()
            .filter(|c| c.source == "acceptance.health.ocp")
            .cloned()
            .collect()
    };
    let quiet = ocp_lines("/dev/quiet");
    assert_eq!(quiet.len(), 1);
    assert_eq!((quiet[0].rule, quiet[0].verdict), (CheckRule::Counter, Verdict::Pass));
    let grew = ocp_lines("/dev/grew");
    assert_eq!(grew[0].verdict, Verdict::Fail);
    assert_eq!(
        grew[0].message,
        "OCP bad user NAND blocks grew during the run: 3 before, 5 after; \
         OCP uncorrectable read errors grew during the run: 0 before, 1 after"
    );
    assert_eq!(verdict_of(&a, "/dev/grew").verdict, Verdict::Fail);
    let warm = ocp_lines("/dev/warm");
    assert_eq!(
        warm.iter().map(|c| (c.rule, c.verdict)).collect::<Vec<_>>(),
        [
            (CheckRule::Counter, Verdict::Pass),
            (CheckRule::OcpHealth, Verdict::Warn),
            (CheckRule::OcpHealth, Verdict::Warn)
        ]
    );
    assert_eq!(warm[1].message, "OCP capacitor health 60%, below 80%");
    assert_eq!(
        warm[2].message,
        "OCP thermal throttling events during the run: 0 before, 2 after"
    );
    assert_eq!(verdict_of(&a, "/dev/warm").verdict, Verdict::Warn);
    assert!(ocp_lines("/dev/plain").is_empty());
    let mut off = Rules::defaults();
    off.health.ocp = false;
    assert_eq!(verdict_of(&evaluate(&d, &off), "/dev/grew").verdict, Verdict::Pass);
}
