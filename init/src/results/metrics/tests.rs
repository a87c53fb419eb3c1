use super::*;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;

use bench_core::document::result::{Acceptance, Check, CheckRule, TargetVerdict};

/// The report's fixture of two disks, one with a read error: its tests
/// are (vda: seqrd_1m error, seqwr_1m skipped, rndrd_4k ok; vdb:
/// seqrd_1m ok, seqwr_1m skipped, rndrd_4k ok).
fn fixture() -> ResultDoc {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../report/tests/fixtures/read-error.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn facts(doc: &ResultDoc) -> Facts {
    Facts {
        machine: "SN-1".to_string(),
        plan_id: Some("0123456789abcdef".to_string()),
        interval: Duration::from_secs(10),
        planned: doc.tests.iter().map(|t| (t.target.clone(), t.name.clone())).collect(),
    }
}

/// A sample line taken apart: its name, its labels, its value. Panics on
/// anything the text format does not allow (an unescaped quote, a label
/// without a value, a value that is no number).
fn parse_sample(line: &str) -> (String, BTreeMap<String, String>, f64) {
    let open = line.find('{').unwrap_or_else(|| panic!("no labels: {line}"));
    let name = line[..open].to_string();
    assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "{line}");
    let mut labels = BTreeMap::new();
    let b = line.as_bytes();
    let mut i = open + 1;
    loop {
        if b[i] == b'}' {
            i += 1;
            break;
        }
        let eq = i + line[i..].find('=').unwrap();
        let key = line[i..eq].to_string();
        assert_eq!(b[eq + 1], b'"', "{line}");
        let mut v = String::new();
        let mut j = eq + 2;
        loop {
            match b[j] {
                b'\\' => {
                    v.push(match b[j + 1] {
                        b'\\' => '\\',
                        b'"' => '"',
                        b'n' => '\n',
                        o => panic!("bad escape {o} in {line}"),
                    });
                    j += 2;
                }
                b'"' => break,
                _ => {
                    let c = line[j..].chars().next().unwrap();
                    assert!(c != '\n', "{line}");
                    v.push(c);
                    j += c.len_utf8();
                }
            }
        }
        assert!(labels.insert(key, v).is_none(), "a label twice: {line}");
        i = j + 1;
        if b[i] == b',' {
            i += 1;
        }
    }
    assert_eq!(b[i], b' ', "{line}");
    let v: f64 = line[i + 1..].parse().unwrap_or_else(|_| panic!("not a number: {line}"));
    (name, labels, v)
}

/// Every sample of `text`, checked: each family's HELP and TYPE once and
/// before its samples, no family split, no sample twice.
fn samples(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    let mut out = Vec::new();
    let mut families: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap().to_string();
            assert!(!families.contains(&name), "{name}: a second HELP");
            families.push(name);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert_eq!(Some(name), families.last().map(String::as_str));
            assert!(["gauge", "counter"].contains(&kind), "{line}");
            assert_eq!(name.ends_with("_total"), kind == "counter", "{line}");
            continue;
        }
        let s = parse_sample(line);
        assert_eq!(Some(&s.0), families.last(), "a sample outside its family: {line}");
        assert_eq!(s.1.get("machine").map(String::as_str), Some("SN-1"), "{line}");
        assert!(seen.insert((s.0.clone(), s.1.clone())), "a series twice: {line}");
        out.push(s);
    }
    out
}

/// The value of the one series of `name` whose labels include `want`.
fn value(s: &[(String, BTreeMap<String, String>, f64)], name: &str, want: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<f64> = s
        .iter()
        .filter(|(n, l, _)| n == name && want.iter().all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v)))
        .map(|x| x.2)
        .collect();
    assert!(found.len() <= 1, "{name} {want:?}: {found:?}");
    found.first().copied()
}

/// While a run goes: each planned test's fraction (1 once it is in the
/// document, the runner's while it runs, 0 before), the run's mean, the
/// state `running`, figures of the tests that ended ok only, and no
/// verdict yet.
#[test]
fn a_running_run_shows_its_progress_and_no_verdict() {
    let full = fixture();
    let f = facts(&full);
    let mut doc = full.clone();
    doc.tests.truncate(2);
    let running = [Running {
        target: "/dev/vda".into(),
        test: "rndrd_4k".into(),
        done: 0.25,
        found: None,
    }];
    let text = render(&f, &doc, &running, State::Running);
    let s = samples(&text);
    let p = |dev: &str, test: &str| value(&s, "bootbench_test_progress_ratio", &[("device", dev), ("test", test)]);
    assert_eq!(p("/dev/vda", "seqrd_1m"), Some(1.0));
    assert_eq!(p("/dev/vda", "seqwr_1m"), Some(1.0));
    assert_eq!(p("/dev/vda", "rndrd_4k"), Some(0.25));
    assert_eq!(p("/dev/vdb", "seqrd_1m"), Some(0.0));
    assert_eq!(value(&s, "bootbench_run_progress_ratio", &[]), Some(2.25 / 6.0));
    assert_eq!(value(&s, "bootbench_run_ended_tests", &[]), Some(2.0));
    assert_eq!(value(&s, "bootbench_run_planned_tests", &[]), Some(6.0));
    for (state, v) in [("running", 1.0), ("ok", 0.0), ("error", 0.0), ("interrupted", 0.0)] {
        assert_eq!(
            value(&s, "bootbench_run_state", &[("state", state)]),
            Some(v),
            "{state}"
        );
    }
    // vda's seqrd_1m ended in an error: no figure of it.
    assert_eq!(
        value(
            &s,
            "bootbench_test_read_bytes_per_second",
            &[("device", "/dev/vda"), ("test", "seqrd_1m")]
        ),
        None
    );
    assert!(!text.contains("verdict"), "{text}");
    // Disks carry their serial.
    assert_eq!(
        value(
            &s,
            "bootbench_disk_info",
            &[("device", "/dev/vdb"), ("serial", "RPT-OK")]
        ),
        Some(1.0)
    );
    assert_eq!(value(&s, "bootbench_push_interval_seconds", &[]), Some(10.0));
    assert!(text.contains("plan_id=\"0123456789abcdef\""), "{text}");
}

/// At the end: every test at 1, the state the document says, each disk's
/// verdict as a state set, the failed disk's first failing reason
/// (escaped, cut to 200 characters), and the figures in base units.
#[test]
fn an_ended_run_shows_its_verdicts_and_reasons() {
    let mut doc = fixture();
    let f = facts(&doc);
    doc.run.status = RunStatus::Error;
    let long = format!("vda read \"slow\"\\ at 1 MB/s\nsecond line {}", "x".repeat(300));
    let check = |verdict, message: &str| Check {
        rule: CheckRule::Limit,
        verdict,
        test: Some("seqrd_1m".into()),
        figure: None,
        value: None,
        limit: None,
        source: "acceptance.limits[0]".into(),
        message: message.into(),
    };
    doc.acceptance = Some(Acceptance {
        verdict: Verdict::Fail,
        rules: "config".into(),
        targets: vec![
            TargetVerdict {
                target: "/dev/vda".into(),
                serial: Some("RPT-BAD".into()),
                model: None,
                verdict: Verdict::Fail,
                checks: vec![check(Verdict::Pass, "held"), check(Verdict::Fail, &long)],
            },
            TargetVerdict {
                target: "/dev/vdb".into(),
                serial: Some("RPT-OK".into()),
                model: None,
                verdict: Verdict::Pass,
                checks: vec![check(Verdict::Pass, "held")],
            },
        ],
    });
    let text = render(&f, &doc, &[], State::Ended(RunStatus::Error));
    let s = samples(&text);
    assert_eq!(value(&s, "bootbench_run_state", &[("state", "error")]), Some(1.0));
    assert_eq!(value(&s, "bootbench_run_state", &[("state", "running")]), Some(0.0));
    assert_eq!(value(&s, "bootbench_run_progress_ratio", &[]), Some(1.0));
    assert_eq!(value(&s, "bootbench_run_verdict", &[("verdict", "fail")]), Some(1.0));
    for (dev, verdict, v) in [
        ("/dev/vda", "fail", 1.0),
        ("/dev/vda", "pass", 0.0),
        ("/dev/vdb", "pass", 1.0),
        ("/dev/vdb", "warn", 0.0),
    ] {
        assert_eq!(
            value(&s, "bootbench_disk_verdict", &[("device", dev), ("verdict", verdict)]),
            Some(v),
            "{dev} {verdict}"
        );
    }
    let reasons: Vec<_> = s.iter().filter(|x| x.0 == "bootbench_disk_reason_info").collect();
    assert_eq!(reasons.len(), 1, "{text}");
    let l = &reasons[0].1;
    assert_eq!(l["device"], "/dev/vda");
    assert_eq!(l["serial"], "RPT-BAD");
    assert_eq!(l["rule"], "limit");
    assert_eq!(
        l["reason"],
        format!("{}...", long.chars().take(200).collect::<String>())
    );
    // Figures in base units: the document's ns latency in seconds.
    let t = doc
        .tests
        .iter()
        .find(|t| t.target == "/dev/vdb" && t.name == "rndrd_4k")
        .unwrap();
    assert_eq!(
        value(
            &s,
            "bootbench_test_latency_mean_seconds",
            &[("device", "/dev/vdb"), ("test", "rndrd_4k")]
        ),
        Some(t.summary.lat_mean_ns.unwrap() / 1e9)
    );
    assert_eq!(
        value(
            &s,
            "bootbench_test_read_bytes_per_second",
            &[("device", "/dev/vdb"), ("test", "rndrd_4k")]
        ),
        t.summary.read_bytes_per_sec
    );
}

/// The whole-disk passes: their block counts as counters (the runner's
/// while they run, the record's once it is in the target), their
/// progress from the runner while they run, 1 once their record is in.
#[test]
fn scans_and_burn_ins_show_their_bad_blocks() {
    let mut doc = fixture();
    doc.tests.clear();
    let mut f = facts(&doc);
    f.planned = vec![
        ("/dev/vda".into(), "surface_scan".into()),
        ("/dev/vdb".into(), "surface_scan".into()),
        ("/dev/vda".into(), "burn_in".into()),
    ];
    doc.targets[0].surface_scan = Some(
        serde_json::from_value(serde_json::json!({
            "start_byte": 0, "end_byte": 1048576, "bs": 1048576, "iodepth": 4, "coverage_ppm": 1000000,
            "logical_block": 512, "planned_bytes": 1048576, "read_bytes": 1048576, "reads": 2,
            "failed_reads": 1, "elapsed_ns": 5, "bytes_per_sec": null, "classes": [], "slowest": [],
            "zones": [], "unreadable_lbas": [7, 8, 9], "recovered_lbas": [], "end": "done", "error": null
        }))
        .unwrap(),
    );
    let running = [
        Running {
            target: "/dev/vdb".into(),
            test: "surface_scan".into(),
            done: 0.5,
            found: Some([0, 2, 0]),
        },
        Running {
            target: "/dev/other".into(),
            test: "surface_scan".into(),
            done: 0.5,
            found: Some([0, 9, 0]),
        },
        Running {
            target: "/dev/vda".into(),
            test: "burn_in".into(),
            done: 0.0,
            found: Some([1, 0, 4]),
        },
    ];
    let s = samples(&render(&f, &doc, &running, State::Running));
    assert_eq!(
        value(
            &s,
            "bootbench_surface_scan_unreadable_blocks_total",
            &[("device", "/dev/vda")]
        ),
        Some(3.0)
    );
    // vdb's scan still runs: what it found so far; vda's burn-in too.
    assert_eq!(
        value(
            &s,
            "bootbench_surface_scan_unreadable_blocks_total",
            &[("device", "/dev/vdb")]
        ),
        Some(2.0)
    );
    for (kind, v) in [("unwritable", 1.0), ("unreadable", 0.0), ("mismatched", 4.0)] {
        let name = format!("bootbench_burn_in_{kind}_blocks_total");
        assert_eq!(value(&s, &name, &[("device", "/dev/vda")]), Some(v), "{kind}");
        assert_eq!(value(&s, &name, &[("device", "/dev/vdb")]), None, "{kind}");
    }
    let p = |dev: &str, test: &str| value(&s, "bootbench_test_progress_ratio", &[("device", dev), ("test", test)]);
    assert_eq!(p("/dev/vda", "surface_scan"), Some(1.0));
    assert_eq!(p("/dev/vdb", "surface_scan"), Some(0.5));
    assert_eq!(p("/dev/vda", "burn_in"), Some(0.0));
    // Another run's target in the same process is not this run's.
    assert_eq!(p("/dev/other", "surface_scan"), None);
    assert_eq!(value(&s, "bootbench_run_progress_ratio", &[]), Some(1.5 / 3.0));
}

/// A label value holding a quote, a backslash and a newline is escaped as
/// the text format says, and reads back as it was.
#[test]
fn label_values_are_escaped() {
    let mut doc = fixture();
    doc.targets[1].serial = Some("A\"B\\C\nD".into());
    doc.targets[1].model = Some("Ünïcode ☃".into());
    let s = samples(&render(&facts(&doc), &doc, &[], State::Running));
    assert_eq!(
        value(
            &s,
            "bootbench_disk_size_bytes",
            &[("serial", "A\"B\\C\nD"), ("model", "Ünïcode ☃")]
        ),
        Some(doc.targets[1].size_bytes as f64)
    );
}

#[test]
fn group_urls_and_checked_urls() {
    assert_eq!(
        group_url(&check_url("http://10.0.2.2:9091/").unwrap(), "SN-1.a_b"),
        "http://10.0.2.2:9091/metrics/job/bootbench/instance/SN-1.a_b"
    );
    assert_eq!(
        group_url(&check_url("http://gw/prefix").unwrap(), "a/b c"),
        "http://gw/prefix/metrics/job/bootbench/instance@base64/YS9iIGM="
    );
    assert_eq!(
        group_url(&check_url("http://gw").unwrap(), ""),
        "http://gw/metrics/job/bootbench/instance@base64/="
    );
    assert_eq!(base64url(b"\xfb\xff"), "-_8=");
    assert!(check_url("http://10.0.2.2:9091").is_ok());
    assert!(check_url("https://gw.example/pushgateway").is_ok());
    for (bad, why) in [
        (
            "http://gw:9091/?key=SECRET",
            "\"http://gw:9091/?...\": a query or fragment (not shown)",
        ),
        ("http://gw:9091/#SECRET", "a query or fragment (not shown)"),
        (
            "https://user:SECRET@gw/",
            "user names and passwords in URLs are not supported",
        ),
        ("gw:9091", "not an http:// or https:// URL"),
    ] {
        let e = check_url(bad).unwrap_err();
        assert!(e.contains(why), "{bad}: {e}");
        assert!(!e.contains("SECRET"), "{bad}: {e}");
    }
}

/// A stand-in gateway on the loopback: records each request's method,
/// path and body, and answers each with the next of `answers` (then 200).
type Requests = Arc<Mutex<Vec<(String, String, String)>>>;

fn gateway(answers: Vec<u16>) -> (u16, Requests) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen: Requests = Arc::default();
    let s2 = Arc::clone(&seen);
    std::thread::spawn(move || {
        let mut answers = answers.into_iter();
        for c in l.incoming() {
            let Ok(mut c) = c else { return };
            let mut req = Vec::new();
            let mut buf = [0u8; 65536];
            let (head, body) = loop {
                let n = c.read(&mut buf).unwrap_or(0);
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).to_string();
                if let Some(i) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                    if req.len() >= i + 4 + len || n == 0 {
                        break (text[..i].to_string(), text[i + 4..].to_string());
                    }
                }
                if n == 0 {
                    break (text, String::new());
                }
            };
            let mut w = head.split(' ');
            let (m, p) = (w.next().unwrap_or("").to_string(), w.next().unwrap_or("").to_string());
            assert!(head.contains("Content-Type: text/plain; version=0.0.4"), "{head}");
            s2.lock().unwrap().push((m, p, body));
            let status = answers.next().unwrap_or(200);
            let _ = write!(
                c,
                "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    (port, seen)
}

/// A run that ends as soon as it starts is still pushed as running first,
/// then ended: the first push is rendered when the pusher starts, not when
/// its thread first runs (under load, after the run's end).
#[test]
fn a_run_ended_at_once_is_pushed_running_then_ended() {
    let (port, seen) = gateway(vec![]);
    let doc = fixture();
    let mut start = doc.clone();
    start.tests.clear();
    let p = Pusher::start(
        &check_url(&format!("http://127.0.0.1:{port}")).unwrap(),
        Client::new(None).unwrap(),
        facts(&doc),
        start,
        |_| {},
    )
    .unwrap();
    let tally = p.finish(&doc);
    let seen = seen.lock().unwrap();
    let states: Vec<bool> = seen
        .iter()
        .map(|r| {
            r.2.contains("bootbench_run_state{machine=\"SN-1\",state=\"running\"} 1")
        })
        .collect();
    assert_eq!(states, [true, false], "{seen:?}");
    assert!(seen[1].2.contains("state=\"ok\"} 1"), "{}", seen[1].2);
    assert_eq!(tally.sent, 2);
}

/// The pusher PUTs at once, again each interval with the document it was
/// handed, tries again after a refused push, and pushes the end (state
/// and verdicts) last; its tally counts both.
#[test]
fn the_pusher_puts_each_interval_and_the_end_last() {
    let (port, seen) = gateway(vec![500]);
    let doc = fixture();
    let mut f = facts(&doc);
    f.interval = Duration::from_secs(1);
    let mut start = doc.clone();
    start.tests.clear();
    let client = Client::new(None).unwrap();
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    fn say(l: &str) {
        SAID.lock().unwrap().push(l.to_string());
    }
    let p = Pusher::start(
        &check_url(&format!("http://127.0.0.1:{port}")).unwrap(),
        client,
        f,
        start,
        say,
    )
    .unwrap();
    // Two pushes at least (the first refused) before the document grows.
    while seen.lock().unwrap().len() < 2 {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut partial = doc.clone();
    partial.tests.truncate(3);
    p.update(&partial);
    while !seen
        .lock()
        .unwrap()
        .iter()
        .any(|r| r.2.contains("bootbench_run_ended_tests{machine=\"SN-1\"} 3"))
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut end = doc.clone();
    end.acceptance = Some(Acceptance {
        verdict: Verdict::Pass,
        rules: "defaults".into(),
        targets: Vec::new(),
    });
    let tally = p.finish(&end);
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter()
            .all(|r| r.0 == "PUT" && r.1 == "/metrics/job/bootbench/instance/SN-1"),
        "{seen:?}"
    );
    assert!(
        seen[0].2.contains("bootbench_run_ended_tests{machine=\"SN-1\"} 0"),
        "{}",
        seen[0].2
    );
    let last = &seen.last().unwrap().2;
    assert!(
        last.contains("bootbench_run_state{machine=\"SN-1\",state=\"ok\"} 1"),
        "{last}"
    );
    assert!(
        last.contains("bootbench_run_verdict{machine=\"SN-1\",verdict=\"pass\"} 1"),
        "{last}"
    );
    assert_eq!(tally.failed, 1, "{tally:?}");
    assert_eq!(tally.sent as usize, seen.len() - 1, "{tally:?}");
    let said = SAID.lock().unwrap();
    assert!(said.iter().any(|l| l.contains("the gateway answered 500")), "{said:?}");
    assert!(
        said.iter().any(|l| l.contains("pushing again after 1 failed push(es)")),
        "{said:?}"
    );
}

/// No gateway at all: the run's side returns, the end is tried within its
/// bound, and the tally says why it failed.
#[test]
fn a_gateway_that_is_not_there_is_a_tally_not_an_error() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let doc = fixture();
    let mut f = facts(&doc);
    f.interval = Duration::from_secs(1);
    let p = Pusher::start(
        &check_url(&format!("http://127.0.0.1:{port}")).unwrap(),
        Client::new(None).unwrap(),
        f,
        doc.clone(),
        |_| {},
    )
    .unwrap();
    p.update(&doc);
    let t = p.finish(&doc);
    assert_eq!(t.sent, 0);
    assert!(t.failed >= 2, "{t:?}");
    assert!(t.last_error.is_some(), "{t:?}");
    assert!(t.line().starts_with("metrics: 0 push(es) sent, "), "{}", t.line());
}
