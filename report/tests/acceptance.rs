//! The acceptance verdict in `bootbench-report`: `baseline` (the figures
//! the config's `acceptance.baseline` reads; init/tests/cli.rs runs
//! `bootbench-init run --simulate` against the golden baseline written
//! here), `show` and `html` opening with the verdict, `compare` and `fleet`
//! counting verdicts by model, and `export`.

use std::fs;
use std::path::Path;

use bench_core::document::result::{CheckRule, Verdict};
use bench_core::verdict::acceptance::Baseline;
use serde_json::{json, Value};

mod common;
mod rack;

use common::*;

/// A schema of schema/.
fn schema(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema").join(name);
    serde_json::from_str(&fs::read_to_string(&p).expect("read the schema")).expect("the schema is JSON")
}

/// `doc` is valid against `schema`; the first errors otherwise.
fn assert_valid(schema: &Value, doc: &Value, what: &str) {
    let v = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .take(10)
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match its schema:\n{}",
        errors.join("\n")
    );
}

/// Run with `args`; it succeeds and says only that it wrote `out`.
fn wrote(args: &[&str], out: &Path) {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {:?}\n{}", o.status, stderr(&o));
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    assert_eq!(stderr(&o), format!("wrote {}\n", out.display()));
}

/// The baseline in `path`, checked against its schema and read as
/// bootbench-init reads it.
fn read_baseline(path: &Path) -> Baseline {
    let text = fs::read_to_string(path).expect("the baseline is written");
    let v: Value = serde_json::from_str(&text).expect("the baseline is JSON");
    assert_valid(&schema("bootbench.baseline-1.schema.json"), &v, "the baseline");
    serde_json::from_str(&text).expect("bench-core reads the baseline")
}

/// The figure of `model`, `test` and `metric` in `b`.
fn figure<'a>(
    b: &'a Baseline,
    model: &str,
    test: &str,
    metric: &str,
) -> &'a bench_core::verdict::acceptance::BaselineFigure {
    b.figures
        .iter()
        .find(|f| f.model == model && f.test == test && f.metric.name() == metric)
        .unwrap_or_else(|| panic!("no {model} {test} {metric} in {b:?}"))
}

/// `test`'s `field` on `target` in the document `doc` (JSON text).
fn summary(doc: &str, target: &str, test: &str, field: &str) -> f64 {
    let v: Value = serde_json::from_str(doc).unwrap();
    v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["target"] == target && t["name"] == test)
        .and_then(|t| t["summary"][field].as_f64())
        .unwrap_or_else(|| panic!("no {test} {field} on {target}"))
}

/// `baseline` over the rack's three machines (RACK-03's SATA SSD 30%
/// slower, RACK-02 3% faster): each model and firmware, test and figure
/// has the median, lowest and highest of its three disks, counted 3; the
/// virtio disk (no model) is left out. The file is valid against
/// schema/bootbench.baseline-1.schema.json and is replaced when written
/// again, as `html -o`'s page.
#[test]
fn baseline_holds_each_models_median_lowest_highest_and_count() {
    let dir = scratch("baseline-rack");
    let machines = rack::three_with_a_slow_disk();
    let docs = rack::write(&dir.join("docs"), &machines);
    let out = dir.join("baseline.json");
    fs::write(&out, "an earlier baseline").unwrap();
    let mut args: Vec<&str> = vec!["baseline"];
    args.extend(docs.iter().map(String::as_str));
    args.extend(["-o", out.to_str().unwrap()]);
    wrote(&args, &out);
    let b = read_baseline(&out);
    assert_eq!((b.schema.as_str(), b.documents), ("bootbench.baseline/1", 3));
    let texts: Vec<String> = machines.iter().map(rack::document).collect();
    for (test, field) in [
        ("seq_read_1m_qd1_j1", "read_bytes_per_sec"),
        ("rand_read_4k_qd1_j1", "read_iops"),
    ] {
        let [r1, r2, r3] = [0, 1, 2].map(|i| summary(&texts[i], "/dev/sda", test, field));
        assert!(r3 < r1 && r1 < r2, "{r1} {r2} {r3}");
        let f = figure(&b, "BOOTBENCH SATA SSD 2", test, field);
        assert_eq!((f.count, f.median, f.min, f.max), (3, r1, r3, r2), "{test} {field}");
        assert_eq!(f.firmware, "2.5+");
        let hdd = figure(&b, "BOOTBENCH SATA HDD 1", test, field);
        let h1 = summary(&texts[0], "/dev/sdb", test, field);
        assert_eq!((hdd.count, hdd.median, hdd.min), (3, h1, h1), "{test} {field}");
        assert_eq!(hdd.max, summary(&texts[1], "/dev/sdb", test, field));
    }
    let models: std::collections::BTreeSet<&str> = b.figures.iter().map(|f| f.model.as_str()).collect();
    assert_eq!(
        models.into_iter().collect::<Vec<_>>(),
        ["BOOTBENCH SATA HDD 1", "BOOTBENCH SATA SSD 2", "QEMU NVMe Ctrl"]
    );
    assert!(b
        .figures
        .iter()
        .all(|f| f.count == 3 && f.min <= f.median && f.median <= f.max));
    let _ = fs::remove_dir_all(&dir);
}

/// A baseline of documents without a disk of known model and firmware
/// holds no figure: written all the same, with a warning that it checks
/// nothing; a file that is not a result document writes nothing (exit 2).
#[test]
fn baseline_warns_when_empty_and_writes_nothing_from_bad_input() {
    let dir = scratch("baseline-empty");
    let out = dir.join("b.json");
    let o = run(&["baseline", &fx(READ_ERROR), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("bootbench-report: warning: the baseline of 1 document(s) holds no figure"),
        "{}",
        stderr(&o)
    );
    assert!(read_baseline(&out).figures.is_empty());
    let bad = dir.join("bad.json");
    fs::write(&bad, "{\"schema\": \"bootbench.result/1\"}").unwrap();
    let out2 = dir.join("b2.json");
    let o = run(&["baseline", bad.to_str().unwrap(), "-o", out2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not match bootbench.result/1"),
        "{}",
        stderr(&o)
    );
    assert!(!out2.exists());
    let _ = fs::remove_dir_all(&dir);
}

/// The simulated run's snapshot (init/tests/snapshots/simulate_quick.json),
/// its figures times `scale`, as JSON text.
fn simulated(scale: f64) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../init/tests/snapshots/simulate_quick.json");
    let mut d: Value = serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap();
    for t in d["tests"].as_array_mut().unwrap() {
        for k in ["read_bytes_per_sec", "write_bytes_per_sec", "read_iops", "write_iops"] {
            if let Some(v) = t["summary"][k].as_f64() {
                t["summary"][k] = json!(v * scale);
            }
        }
    }
    d.to_string()
}

/// The baseline of three simulated runs, their figures 1, 2 and 3 times
/// the simulator's: each median is twice the simulator's figure. It is
/// the golden file `baseline-simulated.json`, which init/tests/cli.rs
/// gives `bootbench-init run --simulate` as its `acceptance.baseline`
/// (a simulated disk is then 50% below its model's median).
#[test]
fn baseline_of_simulated_runs_is_the_golden_file_init_reads() {
    let dir = scratch("baseline-sim");
    let docs: Vec<String> = [1.0, 2.0, 3.0]
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let p = dir.join(format!("sim-{i}.json"));
            fs::write(&p, simulated(*s)).unwrap();
            p.display().to_string()
        })
        .collect();
    let out = dir.join("baseline.json");
    wrote(
        &["baseline", &docs[0], &docs[1], &docs[2], "-o", out.to_str().unwrap()],
        &out,
    );
    let b = read_baseline(&out);
    let one = simulated(1.0);
    assert!(b.figures.len() >= 10, "{b:?}");
    for f in &b.figures {
        assert_eq!(f.firmware, "sim");
        let target = if f.model.contains("HDD") {
            "sim:hdd:1G"
        } else {
            "sim:ssd:256M"
        };
        let v = summary(&one, target, &f.test, f.metric.name());
        let near = |x: f64, want: f64| (x - want).abs() <= want * 1e-12;
        assert!(
            f.count == 3 && near(f.median, v * 2.0) && near(f.min, v) && near(f.max, v * 3.0),
            "{f:?}: {v}"
        );
    }
    golden("baseline-simulated.json", &fs::read_to_string(&out).unwrap());
    let _ = fs::remove_dir_all(&dir);
}

/// Write `text` to `dir/name`; its path.
fn put(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// `show` opens each document with the verdict block exactly as the
/// console ends with it, then every check that did not pass with its
/// message (the SATA disk's floor), then what it showed before; a document
/// without a verdict says so in one line.
#[test]
fn show_opens_with_the_verdict_block_and_every_check_that_did_not_pass() {
    let dir = scratch("show-verdict");
    let text = with_verdict(true);
    let doc: bench_core::document::result::ResultDoc = serde_json::from_str(&text).unwrap();
    let a = doc.acceptance.as_ref().unwrap();
    let file = put(&dir, "v.json", &text);
    let out = ok(&["show", &file, &fx(RAID_A)]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some(format!("== {file}").as_str()));
    for want in bench_core::verdict::acceptance::verdict_block(a) {
        assert_eq!(lines.next(), Some(want.trim_end()), "{out}");
    }
    let sata = a.targets.iter().find(|t| t.target == "/dev/sda").unwrap();
    let floor = sata.checks.iter().find(|c| c.rule == CheckRule::Limit).unwrap();
    assert_eq!(floor.verdict, Verdict::Fail);
    assert_eq!(lines.next(), Some("checks that did not pass:"));
    let failed: Vec<&str> = lines.by_ref().take_while(|l| l.starts_with("  ")).collect();
    let want = format!(
        "  RPT-HEALTH-SATA FAIL limit (seq_read_1m read_bytes_per_sec): {}",
        floor.message
    );
    assert!(failed.contains(&want.as_str()), "{failed:?}\nwant {want}");
    let not_passed = a
        .targets
        .iter()
        .flat_map(|t| &t.checks)
        .filter(|c| c.verdict != Verdict::Pass);
    assert_eq!(failed.len(), not_passed.count(), "{failed:?}");
    assert!(out.contains("targets (size in MiB"), "what show printed before follows");
    let second = &out[out.find(&format!("== {}", fx(RAID_A))).unwrap()..];
    assert_eq!(
        second.lines().nth(1),
        Some("no acceptance verdict: the document has no `acceptance` (written by a bootbench before verdicts)")
    );
    let _ = fs::remove_dir_all(&dir);
}

/// `show`'s verdict block escapes a device string once, as its other
/// lines do (serial `A<ESC>B` is `A\x1bB`, not `A\\\\\\\\x1bB`), and
/// its lines stay within docs/acceptance.md's 79 characters, cut after escaping
/// and never inside an escape.
#[test]
fn show_escapes_the_verdict_block_once_within_79_columns() {
    let dir = scratch("show-verdict-escape");
    let serial = r#""A\u001bB\u001b\u001b\u001b\u001b\u001b\u001b""#;
    let text = with_verdict(true).replace("\"RPT-HEALTH-SATA\"", serial);
    assert!(text.contains(serial));
    let file = put(&dir, "v.json", &text);
    let out = ok(&["show", &file]);
    let block: Vec<&str> = out
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("checks that did not pass"))
        .collect();
    assert!(block.last().unwrap().starts_with("run: "), "{out}");
    for l in &block {
        assert!(l.chars().count() <= 79, "{} characters: {l:?}", l.chars().count());
    }
    let row = block
        .iter()
        .find(|l| l.starts_with('A'))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(row.starts_with("A\\x1bB\\x1b\\x1b\\x1b... "), "{row:?}");
    assert!(!out.contains("\\\\"), "escaped twice:\n{out}");
    assert!(
        out.contains("\n  A\\x1bB\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b FAIL limit"),
        "{out}"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// The `html` page opens with the verdicts, before any document's detail:
/// a row per disk with its verdict, SEQ read MB/s and RND read IOPS from
/// the document's tests (no write test ran: `-`), the highest temperature
/// (during a test) and the SMART status check; then every check that did not pass, a
/// message holding markup escaped; a document without a verdict says so.
#[test]
fn html_opens_with_the_verdict_at_a_glance() {
    let dir = scratch("html-verdict");
    let mut v: Value = serde_json::from_str(&with_verdict(true)).unwrap();
    let sata = v["acceptance"]["targets"][1].clone();
    assert_eq!(sata["target"], "/dev/sda");
    let floor = sata["checks"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["rule"] == "limit")
        .unwrap();
    v["acceptance"]["targets"][1]["checks"][floor]["message"] = json!("below <b>the</b> floor & \"more\"");
    // Its highest reading, during its second test (31 °C before, after and in the first).
    assert_eq!(v["targets"][1]["health"]["tests"][1]["max_temperature_c"], 31);
    v["targets"][1]["health"]["tests"][1]["max_temperature_c"] = json!(44);
    let file = put(&dir, "v.json", &v.to_string());
    let page_path = dir.join("r.html");
    wrote(
        &["html", &file, &fx(RAID_A), "-o", page_path.to_str().unwrap()],
        &page_path,
    );
    let page = fs::read_to_string(&page_path).unwrap();
    let glance = element(&page, "<section class=\"verdicts\"", "</section>");
    assert!(page.find("<section class=\"verdicts\"").unwrap() < page.find("<section class=\"doc\"").unwrap());
    let text = fs::read_to_string(&file).unwrap();
    let seq = summary(&text, "/dev/sda", "seq_read_1m", "read_bytes_per_sec");
    let rnd = summary(&text, "/dev/sda", "rand_read_4k", "read_iops");
    let row = element(glance, "<tr><td>/dev/sda</td>", "</tr>");
    assert_eq!(
        row,
        format!(
            "<tr><td>/dev/sda</td><td>RPT-HEALTH-SATA</td><td>QEMU HARDDISK</td><td class=\"verdict fail\">FAIL</td>\
             <td title=\"seq_read_1m\">{:.1}</td><td>-</td><td title=\"rand_read_4k\">{rnd:.0}</td><td>-</td>\
             <td>44</td><td>SMART PASS</td></tr>",
            seq / 1e6
        )
    );
    assert!(
        glance.contains("<th>SEQ read MB/s</th><th>SEQ write MB/s</th><th>RND read IOPS</th>"),
        "{glance}"
    );
    assert!(
        glance.contains("<td class=\"verdict pass\">PASS</td>"),
        "the NVMe disk: {glance}"
    );
    let failed = element(glance, "<ul class=\"failed-checks\">", "</ul>");
    assert!(
        failed.contains(
            "<li class=\"fail\">RPT-HEALTH-SATA: FAIL limit (seq_read_1m read_bytes_per_sec): \
             below &lt;b&gt;the&lt;/b&gt; floor &amp; &quot;more&quot;</li>"
        ),
        "{failed}"
    );
    assert!(!page.contains("<b>the</b>"), "nothing from a document unescaped");
    assert!(
        glance.contains("<p class=\"omitted\" data-omitted=\"verdict\">no acceptance verdict: the document has no"),
        "{glance}"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// `fleet` and `compare` count verdicts by model and list every failed
/// disk with its reason (its first failing check's message): over the
/// health document held to the floor (its SATA disk fails), the same
/// under the default rules (its NVMe disk made a warning) and one without
/// a verdict, the SATA model has 1 PASS and 1 FAIL, the NVMe model 1 PASS
/// and 1 WARN (a warning is no failed disk); the fleet page says the same.
#[test]
fn compare_and_fleet_count_verdicts_by_model_and_list_failed_disks() {
    let dir = scratch("fleet-verdict");
    let failing = with_verdict(true);
    let doc: bench_core::document::result::ResultDoc = serde_json::from_str(&failing).unwrap();
    let sata = &doc.acceptance.as_ref().unwrap().targets[1];
    let reason = &sata.checks.iter().find(|c| c.verdict == Verdict::Fail).unwrap().message;
    let a = put(&dir, "a.json", &failing);
    let mut warned: Value = serde_json::from_str(&with_verdict(false)).unwrap();
    warned["acceptance"]["targets"][0]["verdict"] = json!("warn");
    warned["acceptance"]["targets"][0]["checks"] = json!([{"rule": "not_tested", "verdict": "warn",
        "test": "seq_read_1m", "figure": "status", "value": null, "limit": null,
        "source": "acceptance.errors", "message": "seq_read_1m: not measured"}]);
    let b = put(&dir, "b.json", &warned.to_string());
    let out = ok(&["fleet", &a, &b, &fx(RAID_A)]);
    let part = &out[out.find("acceptance verdicts by model:\n").expect("the verdicts")..];
    let lines: Vec<&str> = part.lines().take(7).collect();
    let cells = |l: &str| {
        l.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>()
            .join("|")
    };
    assert_eq!(cells(lines[1]), "model|PASS|WARN|FAIL");
    assert_eq!(cells(lines[2]), "QEMU NVMe Ctrl|1|1|0", "{part}");
    assert_eq!(cells(lines[3]), "QEMU HARDDISK|1|0|1", "{part}");
    assert!(
        lines[4].starts_with("  1 document(s) without a verdict: no acceptance verdict"),
        "{part}"
    );
    assert_eq!(lines[5], "failed disks:");
    assert_eq!(
        lines[6],
        format!("  [1] /dev/sda serial RPT-HEALTH-SATA model QEMU HARDDISK: {reason}")
    );
    assert!(
        !part.lines().nth(7).unwrap_or("").starts_with("  ["),
        "one failed disk: {part}"
    );

    let cmp = ok(&["compare", &a, &b]);
    let part = &cmp[cmp.find("acceptance verdicts by model:\n").expect("compare's verdicts")..];
    assert!(
        part.contains(&format!(
            "  [1] /dev/sda serial RPT-HEALTH-SATA model QEMU HARDDISK: {reason}\n"
        )),
        "{part}"
    );
    assert!(!part.contains("without a verdict"), "{part}");

    let page_path = dir.join("fleet.html");
    wrote(
        &["fleet", &a, &b, &fx(RAID_A), "--html", page_path.to_str().unwrap()],
        &page_path,
    );
    let page = fs::read_to_string(&page_path).unwrap();
    let sec = element(&page, "<section class=\"verdicts-by-model\"", "</section>");
    assert!(
        sec.contains("<tr><td>QEMU HARDDISK</td><td>1</td><td>0</td><td>1</td></tr>"),
        "{sec}"
    );
    assert!(
        sec.contains("<tr><td>QEMU NVMe Ctrl</td><td>1</td><td>1</td><td>0</td></tr>"),
        "{sec}"
    );
    let row = format!(
        "<tr><td>[1] {a}</td><td>/dev/sda</td><td>RPT-HEALTH-SATA</td><td>QEMU HARDDISK</td><td>{}</td></tr>",
        reason.replace('<', "&lt;")
    );
    assert!(sec.contains(&row), "{sec}");
    assert!(sec.contains("1 document(s) without a verdict"), "{sec}");
    let _ = fs::remove_dir_all(&dir);
}

/// Read a JUnit file with junitparser (a reader the project did not write),
/// as JSON: the totals, and per suite its name, counts, properties,
/// system-out and cases (classname, name, each result's kind, message and
/// text). `None` (the test skips, saying so) only when python3 is missing;
/// junitparser missing fails the test: CI installs it (.ci/deps).
fn junitparser(path: &Path) -> Option<Value> {
    const READ: &str = r#"
import json, sys
try:
    from junitparser import JUnitXml
    from junitparser.junitparser import SystemOut
except ImportError as e:
    print("junitparser is not installed (apt-get install python3-junitparser, or make deps): %s" % e, file=sys.stderr)
    sys.exit(3)
x = JUnitXml.fromfile(sys.argv[1])
suites = []
for s in x:
    cases = [{"classname": c.classname, "name": c.name,
              "results": [[type(r).__name__, r.message, r.text] for r in c.result]} for c in s]
    suites.append({"name": s.name, "tests": s.tests, "failures": s.failures, "errors": s.errors,
                   "skipped": s.skipped, "properties": {p.name: p.value for p in s.properties()},
                   "system_out": [o.text for o in s.iterchildren(SystemOut)], "cases": cases})
print(json.dumps({"tests": x.tests, "failures": x.failures, "skipped": x.skipped, "suites": suites}))
"#;
    // Debian's interpreter, which sees Debian's python3-junitparser (.ci/deps),
    // before whatever python3 comes first in PATH (pyenv's, on these machines).
    let python = ["/usr/bin/python3", "python3"]
        .into_iter()
        .find(|p| !p.starts_with('/') || Path::new(p).exists())
        .unwrap_or("python3");
    let o = match std::process::Command::new(python)
        .arg("-c")
        .arg(READ)
        .arg(path)
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED: python3 is not installed, so junitparser cannot read the JUnit file");
            return None;
        }
        Err(e) => panic!("python3: {e}"),
    };
    assert!(o.status.success(), "junitparser failed: {}", stderr(&o));
    Some(serde_json::from_slice(&o.stdout).expect("the reader prints JSON"))
}

/// `export --format junit` read back by junitparser: a suite per document
/// named MACHINE/PLAN, a case per target and check (classname the serial,
/// name the rule, test and figure), the floor a failure with its message
/// (markup, quotes and a line break intact, an ESC written `\x1b`), a
/// warning skipped, passes plain; the suite's counts are its checks', the
/// targets' verdicts its properties; the document without a verdict an
/// empty suite saying so.
#[test]
fn export_junit_reads_back_in_junitparser() {
    let dir = scratch("junit");
    let evil = "below <the> floor & \"quoted\" 'x' ]]>\nsecond line \u{1b}[31m";
    let mut v: Value = serde_json::from_str(&with_verdict(true)).unwrap();
    v["host"]["product_serial"] = json!("SRV-42");
    let checks = v["acceptance"]["targets"][1]["checks"].as_array_mut().unwrap();
    let floor = checks.iter().position(|c| c["rule"] == "limit").unwrap();
    checks[floor]["message"] = json!(evil);
    checks.push(
        json!({"rule": "not_tested", "verdict": "warn", "test": "t", "figure": "status",
        "value": null, "limit": null, "source": "acceptance.errors", "message": "not measured"}),
    );
    let file = put(&dir, "v.json", &v.to_string());
    let out = dir.join("junit.xml");
    wrote(
        &[
            "export",
            "--format",
            "junit",
            &file,
            &fx(RAID_A),
            "-o",
            out.to_str().unwrap(),
        ],
        &out,
    );
    let Some(x) = junitparser(&out) else { return };
    let doc: bench_core::document::result::ResultDoc = serde_json::from_value(v.clone()).unwrap();
    let a = doc.acceptance.as_ref().unwrap();
    let s = &x["suites"][0];
    assert_eq!(s["name"], "SRV-42//mnt/stick/bootbench.json");
    let n = |verdict: Verdict| {
        a.targets
            .iter()
            .flat_map(|t| &t.checks)
            .filter(|c| c.verdict == verdict)
            .count()
    };
    let all = a.targets.iter().map(|t| t.checks.len()).sum::<usize>();
    assert_eq!(
        (s["tests"].as_u64(), s["failures"].as_u64(), s["skipped"].as_u64()),
        (
            Some(all as u64),
            Some(n(Verdict::Fail) as u64),
            Some(n(Verdict::Warn) as u64)
        )
    );
    assert_eq!((n(Verdict::Fail), n(Verdict::Warn)), (1, 1));
    assert_eq!(s["errors"], 0);
    assert_eq!(
        s["properties"],
        json!({"file": file, "verdict": "fail", "rules": "config",
        "targets_pass": "1", "targets_warn": "0", "targets_fail": "1"})
    );
    let cases = s["cases"].as_array().unwrap();
    assert_eq!(cases.len(), all);
    for (t, c) in a.targets.iter().flat_map(|t| t.checks.iter().map(move |c| (t, c))) {
        let name = [Some(c.rule.name()), c.test.as_deref(), c.figure.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let found = cases
            .iter()
            .find(|k| k["name"] == name.as_str() && k["classname"] == t.serial.as_deref().unwrap())
            .unwrap_or_else(|| panic!("no case {name} in {cases:?}"));
        let results = found["results"].as_array().unwrap();
        match c.verdict {
            Verdict::Pass => assert!(results.is_empty(), "{found}"),
            Verdict::Warn => assert_eq!(
                results[0].as_array().unwrap()[..2],
                [json!("Skipped"), json!("WARN: not measured")]
            ),
            Verdict::Fail => {
                let shown = evil.replace('\u{1b}', "\\x1b");
                assert_eq!(
                    results[0].as_array().unwrap()[..2],
                    [json!("Failure"), json!(shown)],
                    "{found}"
                );
                let text = results[0][2].as_str().unwrap();
                assert!(
                    text.starts_with(&shown) && text.ends_with("source: acceptance.limits[0]"),
                    "{text}"
                );
            }
        }
    }
    let none = &x["suites"][1];
    assert_eq!(none["properties"]["verdict"], "none");
    assert_eq!(
        (none["tests"].as_u64(), none["cases"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
    assert!(
        none["system_out"][0]
            .as_str()
            .unwrap()
            .starts_with("no acceptance verdict"),
        "{none}"
    );
    assert_eq!(
        (x["tests"].as_u64(), x["failures"].as_u64()),
        (Some(all as u64), Some(1))
    );
    let _ = fs::remove_dir_all(&dir);
}

/// The OCPTV output schema (schema/vendor/ocp-diag-core/output): a
/// validator of one line (`root.json`), every file registered under its `$id`.
fn ocptv_validator() -> jsonschema::Validator {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/vendor/ocp-diag-core/output");
    let mut opts = jsonschema::options();
    opts.with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true);
    let mut root = None;
    for e in fs::read_dir(&dir).expect("the vendored schema") {
        let p = e.unwrap().path();
        let v: Value = serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap();
        let id = v["$id"].as_str().expect("each file has an $id").to_string();
        if p.file_name().unwrap() == "root.json" {
            root = Some(v.clone());
        }
        opts.with_resource(id, jsonschema::Resource::from_contents(v).unwrap());
    }
    opts.build(&root.expect("root.json"))
        .expect("the OCPTV schema compiles")
}

/// `export --format ocptv`: every line valid against the spec's schema; per
/// document a stream numbered from 0 that opens with the schema version,
/// then the run's start with a hardwareInfo per target, a step per target
/// with a measurement and a diagnosis per check (the failed floor: its
/// figure in B/s, its limit a GREATER_THAN_OR_EQUAL validator, diagnosis
/// FAIL), and the run's end FAIL; the document without a verdict a run
/// with a log line, SKIP and NOT_APPLICABLE.
#[test]
fn export_ocptv_lines_are_valid_against_the_specs_schema() {
    let dir = scratch("ocptv");
    let text = with_verdict(true);
    let doc: bench_core::document::result::ResultDoc = serde_json::from_str(&text).unwrap();
    let a = doc.acceptance.as_ref().unwrap();
    let file = put(&dir, "v.json", &text);
    let out = dir.join("run.jsonl");
    wrote(
        &[
            "export",
            "--format",
            "ocptv",
            &file,
            &fx(RAID_A),
            "-o",
            out.to_str().unwrap(),
        ],
        &out,
    );
    let validator = ocptv_validator();
    let lines: Vec<Value> = fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    for (i, l) in lines.iter().enumerate() {
        let errors: Vec<String> = validator
            .iter_errors(l)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "line {}: {l}\n{}", i + 1, errors.join("\n"));
    }
    let checks: usize = a.targets.iter().map(|t| t.checks.len()).sum();
    // schemaVersion, run start, per target a start and an end, two per check, run end.
    let first = 2 + 2 * a.targets.len() + 2 * checks + 1;
    let (one, two) = lines.split_at(first);
    for stream in [one, two] {
        let seq: Vec<u64> = stream.iter().map(|l| l["sequenceNumber"].as_u64().unwrap()).collect();
        assert_eq!(seq, (0..stream.len() as u64).collect::<Vec<_>>());
        assert_eq!(stream[0]["schemaVersion"], json!({"major": 2, "minor": 0}));
    }
    let start = &one[1]["testRunArtifact"]["testRunStart"];
    let hw: Vec<&str> = start["dutInfo"]["hardwareInfos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["hardwareInfoId"].as_str().unwrap())
        .collect();
    assert_eq!(hw, ["/dev/nvme0n1", "/dev/sda"]);
    let steps = one
        .iter()
        .filter(|l| !l["testStepArtifact"]["testStepStart"].is_null())
        .count();
    assert_eq!(steps, 2);
    let sata = a.targets.iter().find(|t| t.target == "/dev/sda").unwrap();
    let floor = sata.checks.iter().find(|c| c.rule == CheckRule::Limit).unwrap();
    let m = one
        .iter()
        .map(|l| &l["testStepArtifact"]["measurement"])
        .find(|m| m["name"] == "limit seq_read_1m read_bytes_per_sec")
        .expect("the floor's measurement");
    assert_eq!(
        (m["value"].as_f64(), m["unit"].as_str(), m["hardwareInfoId"].as_str()),
        (floor.value, Some("B/s"), Some("/dev/sda"))
    );
    assert_eq!(
        m["validators"],
        json!([{"name": "acceptance.limits[0]", "type": "GREATER_THAN_OR_EQUAL", "value": 1e12}])
    );
    let diagnoses: Vec<&Value> = one
        .iter()
        .map(|l| &l["testStepArtifact"]["diagnosis"])
        .filter(|d| !d.is_null())
        .collect();
    assert_eq!(diagnoses.len(), checks);
    let d = diagnoses
        .iter()
        .find(|d| d["message"] == floor.message.as_str())
        .unwrap();
    assert_eq!(
        (d["type"].as_str(), d["verdict"].as_str()),
        (Some("FAIL"), Some("limit-fail"))
    );
    assert_eq!(diagnoses.iter().filter(|d| d["type"] == "FAIL").count(), 1);
    assert_eq!(
        one.last().unwrap()["testRunArtifact"]["testRunEnd"],
        json!({"status": "COMPLETE", "result": "FAIL"})
    );
    assert_eq!(two.len(), 4, "{two:?}");
    assert!(two[2]["testRunArtifact"]["log"]["message"]
        .as_str()
        .unwrap()
        .starts_with("no acceptance verdict"));
    assert_eq!(
        two[3]["testRunArtifact"]["testRunEnd"],
        json!({"status": "SKIP", "result": "NOT_APPLICABLE"})
    );
    let _ = fs::remove_dir_all(&dir);
}
