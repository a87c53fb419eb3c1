//! The `fleet` command of bootbench-report (and the fleet section `compare` ends with): machines
//! and disks of many documents grouped by host model and by disk model and firmware, the
//! outliers named, in text and as `fleet --html`; on real documents (tests/fixtures) and on a
//! rack of machines made from one of them (tests/rack).

use std::fs;
use std::path::{Path, PathBuf};

mod common;
mod rack;

use common::*;

/// `fleet` over three real documents: t2's boot (two SATA disks of one
/// model and firmware, the second throttled to 4 MiB/s) and the raid0
/// before/after pair (the same SATA disk in both). Each model, firmware,
/// test and figure with two or more disks is a group with its median and
/// spread; the throttled disk is its group's outlier and the other is not;
/// a model with one disk (NVMe, virtio: none) has no group. `compare` ends
/// with the same section over its two documents.
#[test]
fn fleet_groups_by_model_and_firmware_and_names_the_outlier() {
    let out = ok(&["fleet", "--all", &fx(OUTLIER), &fx(RAID_A), &fx(RAID_B)]);
    assert!(out.starts_with("fleet of 3 document(s)"), "{out}");
    let block = |head: &str| -> Vec<String> {
        let start = out.find(head).unwrap_or_else(|| panic!("no group {head:?}:\n{out}"));
        out[start..]
            .lines()
            .take_while(|l| !l.is_empty())
            .map(String::from)
            .collect()
    };
    let t2 = block(
        "-- model E2E SATA MODEL, firmware 2.5+: test seq_read_1m (seq_read), read MB/s: 2 disks on 1 machine(s), median ",
    );
    assert_eq!(t2.len(), 4, "{t2:?}");
    assert!(t2[2].contains("E2E-SATA-1") && !t2[2].ends_with("outlier"), "{t2:?}");
    assert!(t2[3].contains("E2E-SATA-2") && t2[3].ends_with("outlier"), "{t2:?}");
    let seq = block(
        "-- model QEMU HARDDISK, firmware 2.5+: test seqrd_1m (seq_read), read MB/s: 2 disks on 2 machine(s), median ",
    );
    assert!(seq[2].starts_with("[2]") && seq[3].starts_with("[3]"), "{seq:?}");
    assert!(
        seq.iter().all(|l| !l.ends_with("outlier")),
        "two runs of one disk at one rate: {seq:?}"
    );
    assert!(!out.contains("model QEMU NVMe"), "{out}");
    let cmp = ok(&["compare", &fx(RAID_A), &fx(RAID_B)]);
    assert!(cmp.contains("\nby model and firmware, A = [1], B = [2]"), "{cmp}");
    assert!(
        cmp.contains("-- model QEMU HARDDISK, firmware 2.5+: test seqrd_1m"),
        "{cmp}"
    );
}

/// `fleet`'s text cut at its parts: (every machine and disk, by host
/// model, by disk model and firmware).
fn fleet_parts(out: &str) -> (&str, &str, &str) {
    let every = out.find("\nevery machine and disk:").expect("the every-disk table");
    let host = out.find("\nby host model").expect("the host-model groups");
    let disk = out
        .find("\nby disk model and firmware:")
        .expect("the disk-model groups");
    (&out[every..host], &out[host..disk], &out[disk..])
}

/// The groups of a part of `fleet`'s text: each its heading line and its rows.
fn fleet_groups(part: &str) -> Vec<(String, Vec<String>)> {
    part.split("\n\n")
        .filter(|b| b.starts_with("-- "))
        .map(|b| {
            let mut lines = b.lines().map(String::from);
            let head = lines.next().unwrap_or_default();
            (head, lines.skip(1).collect())
        })
        .collect()
}

/// `fleet` flags the slow disk: three machines of one
/// model with the same four disks, RACK-03's SATA SSD 30% slower than the
/// same model on RACK-01 and RACK-02 (3% faster than RACK-01 throughout),
/// read from their directory. In the every-disk table only that disk's row
/// is an outlier, each of its figures marked; in the disk-model groups and
/// the host-model groups each of the SSD's tests has exactly that machine
/// and disk as its outlier, and no other group has one.
#[test]
fn fleet_flags_the_slow_disk() {
    let dir = scratch("fleet-slow");
    rack::write(&dir, &rack::three_with_a_slow_disk());
    let out = ok(&["fleet", "--all", dir.to_str().unwrap()]);
    assert!(
        out.starts_with("fleet of 3 document(s) from 3 machine(s); MB/s = 10^6 B/s"),
        "{out}"
    );
    let (every, by_host, by_disk) = fleet_parts(&out);

    let rows: Vec<Vec<&str>> = every
        .lines()
        .filter(|l| l.starts_with("RACK-"))
        .map(|l| l.split("  ").filter(|c| !c.is_empty()).map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 12, "three machines, four disks each:\n{every}");
    let flagged: Vec<&Vec<&str>> = rows.iter().filter(|r| r.last() == Some(&"outlier")).collect();
    assert_eq!(flagged.len(), 1, "{every}");
    assert_eq!(flagged[0][..3], ["RACK-03", "[3]", "/dev/sda"], "{every}");
    assert_eq!(flagged[0][3], "BOOTBENCH SATA SSD 2");
    let figures = &flagged[0][6..flagged[0].len() - 1];
    assert_eq!(figures.len(), 4, "four tests with a figure: {figures:?}");
    assert!(figures.iter().all(|c| c.ends_with('*')), "{figures:?}");
    assert_eq!(
        every.matches('*').count() - 1,
        4,
        "the legend's and the slow disk's only:\n{every}"
    );

    for (part, what) in [(by_disk, "model"), (by_host, "host")] {
        let groups = fleet_groups(part);
        let ssd: Vec<_> = groups
            .iter()
            .filter(|(h, _)| h.contains("BOOTBENCH SATA SSD 2"))
            .collect();
        assert_eq!(ssd.len(), 4, "{what}: the SSD's four tests:\n{part}");
        assert_eq!(
            groups.len(),
            12,
            "{what}: NVMe, SSD and HDD (virtio: no model):\n{part}"
        );
        for (head, rows) in &groups {
            assert!(head.contains(": 3 disks on 3 machine(s), median "), "{head}");
            let odd: Vec<&String> = rows.iter().filter(|r| r.ends_with("outlier")).collect();
            if head.contains("BOOTBENCH SATA SSD 2") {
                assert_eq!(odd.len(), 1, "{head}: {rows:?}");
                let cells: Vec<&str> = odd[0].split_whitespace().collect();
                assert_eq!(cells[..3], ["[3]", "RACK-03", "/dev/sda"], "{head}: {rows:?}");
                assert_eq!(cells[5], "-30%", "{head}: {rows:?}");
            } else {
                assert!(odd.is_empty(), "{head}: {rows:?}");
            }
        }
    }
    assert!(by_host.contains("-- host Dell Inc. PowerEdge R640, disk model BOOTBENCH SATA SSD 2, firmware 2.5+: "));
    let _ = fs::remove_dir_all(&dir);
}

/// A directory's `*.json` files are read (not its subdirectory's, nor other
/// files); one that is not a result document is skipped with one warning
/// line naming it and why; a file given again through its directory is
/// read once; no document at all, or a path that cannot be read, is an
/// error naming it (exit 2).
#[test]
fn fleet_reads_a_directory_and_skips_what_is_not_a_result() {
    let dir = scratch("fleet-dir");
    let paths = rack::write(&dir, &rack::three_with_a_slow_disk());
    fs::write(dir.join("notes.json"), "{\"hello\": 1}").unwrap();
    let whole = rack::document(&rack::Machine::r640("RACK-08"));
    fs::write(dir.join("cut.JSON"), &whole[..whole.len() / 2]).unwrap();
    fs::write(dir.join("readme.txt"), "not read").unwrap();
    rack::write(&dir.join("older"), &[rack::Machine::r640("RACK-09")]);
    let d = dir.to_str().unwrap();
    let o = run(&["fleet", d, &paths[0]]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    let cut = dir.join("cut.JSON").display().to_string();
    let notes = dir.join("notes.json").display().to_string();
    assert!(
        lines[0].starts_with(&format!("bootbench-report: warning: {cut}: truncated"))
            && lines[0].ends_with("; skipped"),
        "{err}"
    );
    assert_eq!(
        lines[1],
        format!(
            "bootbench-report: warning: {notes}: not a bootbench result document: no \"schema\" field \
             (expected \"bootbench.result/1\"); skipped"
        )
    );
    let out = stdout(&o);
    assert!(out.starts_with("fleet of 3 document(s) from 3 machine(s)"), "{out}");
    assert!(!out.contains("RACK-08") && !out.contains("RACK-09"), "{out}");

    // Nothing to read: an error naming the paths.
    let empty = dir.join("older").join("empty");
    fs::create_dir_all(&empty).unwrap();
    fs::write(empty.join("x.json"), "[]").unwrap();
    let o = run(&["fleet", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).ends_with(&format!(
            "bootbench-report: no bootbench result document in {} (1 file(s) skipped)\n",
            empty.display()
        )),
        "{}",
        stderr(&o)
    );
    let missing = dir.join("no-such-rack");
    let o = run(&["fleet", d, missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).starts_with(&format!("bootbench-report: {}: cannot read: ", missing.display())),
        "{}",
        stderr(&o)
    );
    let _ = fs::remove_dir_all(&dir);
}

/// Machines are told apart by DMI serial, else host name, else file name,
/// and counted as such: RACK-01 run twice is one machine with two
/// documents and four disks; a machine whose serial is a placeholder is its
/// host name; one with neither is its file. The groups by host model count
/// the machines of their model only (R640: four disks of RACK-01's two runs,
/// RACK-02 and RACK-03 on three machines; R650: three on three), the groups
/// by disk model all of them.
#[test]
fn fleet_counts_machines_per_host_model() {
    let dir = scratch("fleet-hosts");
    let r650 = |serial| rack::Machine {
        product: "PowerEdge R650",
        ..rack::Machine::r640(serial)
    };
    let docs = [
        ("RACK-01-1.json", rack::Machine::r640("RACK-01")),
        (
            "RACK-01-2.json",
            rack::Machine {
                scale: 1.01,
                ..rack::Machine::r640("RACK-01")
            },
        ),
        ("RACK-02-1.json", rack::Machine::r640("RACK-02")),
        ("RACK-03-1.json", rack::Machine::r640("RACK-03")),
        ("RACK-04-1.json", r650("RACK-04")),
        (
            "node7.json",
            rack::Machine {
                hostname: "node7",
                ..r650("To Be Filled By O.E.M.")
            },
        ),
        ("unknown-1.json", r650("0000000000")),
    ];
    for (name, m) in &docs {
        fs::write(dir.join(name), rack::document(m)).unwrap();
    }
    let out = ok(&["fleet", "--all", dir.to_str().unwrap()]);
    assert!(out.starts_with("fleet of 7 document(s) from 6 machine(s)"), "{out}");
    let machines: Vec<Vec<&str>> = out
        .split("\nmachines (")
        .nth(1)
        .unwrap()
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split("  ").filter(|c| !c.is_empty()).map(str::trim).collect())
        .collect();
    let unknown = dir.join("unknown-1.json").display().to_string();
    let want = [
        ["RACK-01", "serial", "Dell Inc. PowerEdge R640", "4", "[1] [2]"],
        ["RACK-02", "serial", "Dell Inc. PowerEdge R640", "4", "[3]"],
        ["RACK-03", "serial", "Dell Inc. PowerEdge R640", "4", "[4]"],
        ["RACK-04", "serial", "Dell Inc. PowerEdge R650", "4", "[5]"],
        ["node7", "hostname", "Dell Inc. PowerEdge R650", "4", "[6]"],
        [unknown.as_str(), "file", "Dell Inc. PowerEdge R650", "4", "[7]"],
    ];
    assert_eq!(machines.len(), want.len(), "{machines:?}");
    for (got, want) in machines.iter().zip(want) {
        assert_eq!([got[0], got[1], got[2], got[4], got[5]], want, "{got:?}");
    }
    let (_, by_host, by_disk) = fleet_parts(&out);
    let heads = |part: &str| -> Vec<String> { fleet_groups(part).into_iter().map(|(h, _)| h).collect() };
    let ssd = |host: &str| {
        format!(
            "-- host Dell Inc. PowerEdge {host}, disk model BOOTBENCH SATA SSD 2, firmware 2.5+: test \
             seq_read_1m_qd1_j1 (seq_read), read MB/s: "
        )
    };
    let host_heads = heads(by_host);
    let r640 = host_heads
        .iter()
        .find(|h| h.starts_with(&ssd("R640")))
        .expect("the R640 SSD group");
    assert!(r640.contains(": 4 disks on 3 machine(s), median "), "{r640}");
    let r650 = host_heads
        .iter()
        .find(|h| h.starts_with(&ssd("R650")))
        .expect("the R650 SSD group");
    assert!(r650.contains(": 3 disks on 3 machine(s), median "), "{r650}");
    assert_eq!(host_heads.len(), 24, "two host models, three disk models, four tests");
    let disk_heads = heads(by_disk);
    assert_eq!(disk_heads.len(), 12, "{disk_heads:?}");
    assert!(
        disk_heads
            .iter()
            .all(|h| h.contains(": 7 disks on 6 machine(s), median ")),
        "{disk_heads:?}"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// `fleet --html`: the same three machines as `fleet_flags_the_slow_disk`,
/// as one self-contained page: RACK-03's SSD is the one outlier row of the
/// every-disk table (each of its four figures marked), the outlier of each
/// of its four groups by disk model and by host model, and in each of
/// those tests' charts the one outlier dot, named.
#[test]
fn fleet_html_marks_the_slow_disk() {
    let dir = scratch("fleet-html");
    let rack_dir = dir.join("rack");
    rack::write(&rack_dir, &rack::three_with_a_slow_disk());
    let page = dir.join("fleet.html");
    let o = run(&["fleet", rack_dir.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "the page goes to the file");
    assert_eq!(stderr(&o), format!("wrote {}\n", page.display()));
    let html = fs::read_to_string(&page).unwrap();
    for needle in ["<script", "<link", "src=", "@import", "url(", "https://"] {
        assert!(!html.contains(needle), "{needle}");
    }
    assert_eq!(
        html.matches("http://").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    let machines = element(&html, "<table class=\"fleet-machines\">", "</table>");
    assert_eq!(
        machines.matches("<tr>").count(),
        4,
        "a header and three machines: {machines}"
    );
    let every = element(&html, "<table class=\"fleet-every\">", "</table>");
    let odd: Vec<&str> = every
        .split("<tr")
        .filter(|r| r.starts_with(" class=\"outlier\""))
        .collect();
    assert_eq!(odd.len(), 1, "{every}");
    assert!(
        odd[0].contains("<td>RACK-03</td>") && odd[0].contains("<td>/dev/sda</td>"),
        "{}",
        odd[0]
    );
    assert_eq!(every.matches("<td class=\"outlier\"").count(), 4, "{every}");
    assert!(odd[0].contains("<td>outlier in 4 of 4 figure(s)</td>"), "{}", odd[0]);
    for id in ["fleet", "fleet-host"] {
        let part = element(&html, &format!("<section class=\"fleet\" id=\"{id}\">"), "</section>");
        assert_eq!(
            part.matches("data-chart=\"fleet\"").count(),
            4,
            "{id}: a chart per test"
        );
        assert_eq!(part.matches("<div class=\"fleet-group\">").count(), 12, "{id}");
        let rows: Vec<&str> = part
            .split("<tr")
            .filter(|r| r.starts_with(" class=\"outlier\""))
            .collect();
        assert_eq!(rows.len(), 4, "{id}");
        assert!(
            rows.iter()
                .all(|r| r.contains("<td>RACK-03</td><td>/dev/sda</td><td>RACK-03-BB-SATA-0002</td>")),
            "{id}: {rows:?}"
        );
        let dots: Vec<&str> = part.split("<circle class=\"mark dot outlier\"").skip(1).collect();
        assert_eq!(dots.len(), 4, "{id}");
        assert!(
            dots.iter()
                .all(|d| d.contains("<title>[3] RACK-03 /dev/sda (RACK-03-BB-SATA-0002): ")
                    && d.contains(", -30% against the median, outlier</title>")),
            "{id}: {dots:?}"
        );
        assert_eq!(
            part.matches("class=\"mark dot").count(),
            4 * 9,
            "{id}: nine disks in each chart"
        );
        assert_eq!(
            part.matches("class=\"mark median\"").count(),
            4 * 3,
            "{id}: three groups in each chart"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The summary `fleet` opens with, one screen at any fleet size:
/// twenty-six machines `m1` to `m26` of one model, the SATA SSD of twelve
/// of them (`m15` to `m26`) slower than the other fourteen by 31% to 42%.
/// It counts the machines and disks; each group of disk model and firmware
/// has its disks, median, 10th percentile, minimum and outliers per test;
/// the slowest disks come the slowest first, ten of them and "and 2 more";
/// without `--all` no every-disk table. With `--all` the same summary, then
/// the tables, machines in natural order (`m2` before `m10`).
#[test]
fn fleet_opens_with_a_summary_of_the_slowest_disks() {
    let dir = scratch("fleet-summary");
    let names: Vec<String> = (1..=26).map(|i| format!("m{i}")).collect();
    let machines: Vec<rack::Machine> = names
        .iter()
        .enumerate()
        .map(|(i, n)| rack::Machine {
            // m15 to m26: 0.69, 0.68, ... 0.58 of the others' SSD figures.
            slow: (i >= 14).then_some(("/dev/sda", 0.83 - 0.01 * i as f64)),
            ..rack::Machine::r640(n)
        })
        .collect();
    rack::write(&dir, &machines);
    let out = ok(&["fleet", dir.to_str().unwrap()]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() < 50, "one screen: {} lines\n{out}", lines.len());
    assert!(
        lines[0].starts_with("fleet of 26 document(s) from 26 machine(s); "),
        "{out}"
    );
    assert!(
        lines[1].starts_with(
            "26 machine(s), 104 disk(s); 3 group(s) by disk model and firmware; 12 disk(s) an outlier, 0 with a failed test"
        ),
        "{out}"
    );
    assert!(
        !out.contains("every machine and disk:"),
        "no every-disk table without --all"
    );
    // Each test of each model: 26 disks; the SSD's 12 outliers, the others none.
    let num = |s: &str| s.replace(',', "").parse::<f64>().unwrap();
    let groups: Vec<Vec<&str>> = lines
        .iter()
        .skip_while(|l| !l.starts_with("groups by disk model"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect())
        .collect();
    assert_eq!(groups.len(), 12, "three models, four tests: {groups:?}");
    for g in &groups {
        let n = g.len();
        let (disks, median, p10, min, outliers) = (g[n - 5], num(g[n - 4]), num(g[n - 3]), num(g[n - 2]), g[n - 1]);
        assert_eq!(disks, "26", "{g:?}");
        if g[0] == "BOOTBENCH SATA SSD 2" {
            assert_eq!(outliers, "12", "{g:?}");
            // The 10th percentile (nearest rank: the 3rd of 26) is m24's,
            // 0.60 of the median; the minimum m26's, 0.58.
            assert!((p10 / median - 0.60).abs() < 0.01, "{g:?}");
            assert!((min / median - 0.58).abs() < 0.01, "{g:?}");
        } else {
            assert_eq!((outliers, p10, min), ("0", median, median), "{g:?}");
        }
    }
    // The slowest first: m26 (0.58) to m17, ten rows, then the two left.
    let slow: Vec<&str> = lines
        .iter()
        .skip_while(|l| !l.starts_with("the slowest disks"))
        .skip(2)
        .take_while(|l| l.starts_with('m'))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let want: Vec<String> = (17..=26).rev().map(|i| format!("m{i}")).collect();
    assert_eq!(slow, want, "{out}");
    assert!(
        out.contains("\nand 2 more (`fleet --all` lists every machine and disk)\n"),
        "{out}"
    );

    let all = ok(&["fleet", "--all", dir.to_str().unwrap()]);
    let summary = &out[..out.find("\nevery document, machine").unwrap()];
    assert!(all.starts_with(summary), "the same summary first:\n{all}");
    let every = &all[all.find("\nevery machine and disk:").expect("the every-disk table")..];
    let first_of_each: Vec<&str> = every
        .lines()
        .filter(|l| l.starts_with('m') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect::<Vec<_>>()
        .chunks(4)
        .map(|c| c[0])
        .collect();
    assert_eq!(first_of_each, names, "machines in natural order, m2 before m10");
    // The documents too: [2] is m2's.
    assert!(
        all.contains("  [2] ") && all.contains("m2-1.json (machine m2,"),
        "{all}"
    );
}

/// `fleet` reads `export --format parquet` as it reads the documents: a
/// directory holding three machines' documents as JSON and three more in
/// a Parquet export (made from documents of the same names, then removed;
/// `rest.parquet` sorts after `m3-1.json`, so the documents keep their order)
/// gives the text of the six documents read as JSON, `--all` included
/// (machines, every disk, the groups, the slow disk of `m5`, which is in
/// the export); the export's run table beside it is not read; a `.json`
/// that is not a document and a `.parquet` that is not Parquet are one
/// warning line each, and the rest is read.
#[test]
fn fleet_reads_parquet_exports_beside_documents_and_warns_once_per_bad_file() {
    let dir = scratch("fleet-parquet");
    let names: Vec<String> = (1..=6).map(|i| format!("m{i}")).collect();
    let machines: Vec<rack::Machine> = names
        .iter()
        .map(|n| rack::Machine {
            slow: (n == "m5").then_some(("/dev/sda", 0.6)),
            ..rack::Machine::r640(n)
        })
        .collect();
    let files = rack::write(&dir, &machines);
    let d = dir.display().to_string();
    let want = ok(&["fleet", "--all", &d]);
    assert!(want.contains("fleet of 6 document(s) from 6 machine(s)"), "{want}");
    assert!(want.contains("\nm5 "), "{want}");

    let export = dir.join("rest.parquet");
    let mut args = vec!["export", "--format", "parquet", "-o", export.to_str().unwrap()];
    args.extend(files[3..].iter().map(String::as_str));
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in &files[3..] {
        fs::remove_file(f).unwrap();
    }
    assert!(dir.join("rest.runs.parquet").is_file());
    let got = ok(&["fleet", "--all", &d]);
    assert_eq!(got, want, "the export read as the documents were");
    let summary = ok(&["fleet", &d]);
    assert!(
        summary.contains("slowest disks") && summary.contains("\nm5 "),
        "{summary}"
    );

    fs::write(dir.join("notes.json"), "not json").unwrap();
    fs::write(dir.join("broken.parquet"), "{}").unwrap();
    let o = run(&["fleet", "--all", &d]);
    assert!(o.status.success(), "{}", stderr(&o));
    let warnings = stderr(&o);
    assert_eq!(warnings.lines().count(), 2, "{warnings}");
    for (line, file) in warnings.lines().zip(["broken.parquet", "notes.json"]) {
        assert!(line.contains(file) && line.ends_with("; skipped"), "{warnings}");
    }
    assert_eq!(stdout(&o), want, "the bad files change nothing else");

    // The run table named on its own is refused, with why.
    let runs = dir.join("rest.runs.parquet");
    let o = run(&["fleet", runs.to_str().unwrap(), &files[0]]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("run table"), "{}", stderr(&o));
    fs::remove_dir_all(&dir).unwrap();
}

/// An export of `docs` to `dir/NAME.parquet`, its footer rewritten by
/// `edit` (each row group in turn, its columns' metadata editable), the
/// pages left as they are.
fn export_with_footer(
    dir: &Path,
    name: &str,
    docs: &[String],
    edit: impl Fn(parquet::file::metadata::RowGroupMetaData) -> parquet::file::metadata::RowGroupMetaData,
) -> PathBuf {
    use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataWriter};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let src = dir.join(format!("{name}.src.parquet"));
    let mut args = vec!["export", "--format", "parquet", "-o", src.to_str().unwrap()];
    args.extend(docs.iter().map(String::as_str));
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = fs::read(&src).unwrap();
    let n = bytes.len();
    let footer = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let md = SerializedFileReader::new(fs::File::open(&src).unwrap())
        .unwrap()
        .metadata()
        .clone();
    let groups = md.row_groups().iter().cloned().map(&edit).collect();
    let md = ParquetMetaData::new(md.file_metadata().clone(), groups);
    let mut out = bytes[..n - 8 - footer].to_vec();
    ParquetMetaDataWriter::new(&mut out, &md).finish().unwrap();
    fs::remove_file(&src).unwrap();
    fs::remove_file(dir.join(format!("{name}.src.runs.parquet"))).unwrap();
    let dst = dir.join(format!("{name}.parquet"));
    fs::write(&dst, out).unwrap();
    dst
}

/// A row group with `num_rows` and each column chunk's `num_values` set.
fn rows_and_values(
    g: parquet::file::metadata::RowGroupMetaData,
    rows: Option<i64>,
    values: Option<i64>,
) -> parquet::file::metadata::RowGroupMetaData {
    let rows = rows.unwrap_or(g.num_rows());
    let columns = g
        .columns()
        .iter()
        .map(|c| {
            let v = values.unwrap_or(c.num_values());
            c.clone().into_builder().set_num_values(v).build().unwrap()
        })
        .collect();
    g.into_builder()
        .set_num_rows(rows)
        .set_column_metadata(columns)
        .build()
        .unwrap()
}

/// A Parquet file's footer is checked against the file before anything is
/// allocated by it (report/src/export/parquet_footer.rs): `fleet` skips a file
/// that claims 2^31-1 row groups in 32 bytes, a row group whose
/// `num_rows` is one more than its column chunks hold (and 2^40), one
/// whose chunks claim 2^40 values too (read a batch at a time until the
/// pages end), a footer longer than the file, a chunk past the data; each
/// with a warning naming the file and the field; a row group at the bound
/// (`num_rows` = `num_values`, the export as written) is read.
#[test]
fn fleet_skips_a_parquet_footer_that_claims_more_than_the_file_holds() {
    let dir = scratch("fleet-parquet-footer");
    let machines: Vec<rack::Machine> = ["m1", "m2"].iter().map(|n| rack::Machine::r640(n)).collect();
    let files = rack::write(&dir, &machines);
    let one = &files[..1];
    let at_bound = export_with_footer(&dir, "at-bound", one, |g| g);
    let real_rows = {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let r = SerializedFileReader::new(fs::File::open(&at_bound).unwrap()).unwrap();
        r.metadata().row_group(0).num_rows()
    };
    let past = export_with_footer(&dir, "past", one, |g| {
        let n = g.num_rows();
        rows_and_values(g, Some(n + 1), None)
    });
    let huge = export_with_footer(&dir, "huge", one, |g| rows_and_values(g, Some(1 << 40), None));
    let both = export_with_footer(&dir, "both", one, |g| rows_and_values(g, Some(1 << 40), Some(1 << 40)));
    let off = export_with_footer(&dir, "offset", one, |g| {
        let columns = g
            .columns()
            .iter()
            .map(|c| {
                c.clone()
                    .into_builder()
                    .set_data_page_offset(1 << 40)
                    .set_dictionary_page_offset(None)
                    .build()
                    .unwrap()
            })
            .collect();
        g.into_builder().set_column_metadata(columns).build().unwrap()
    });
    // PAR1, a footer (version 1; a schema of one element; num_rows 0;
    // row_groups: a list of 2^31-1 structs, and nothing after), its
    // length, PAR1.
    let footer = [
        0x15, 0x02, 0x19, 0x1c, 0x48, 0x01, b's', 0x15, 0x00, 0x00, 0x16, 0x00, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff,
        0x07, 0x00,
    ];
    let mut groups = b"PAR1".to_vec();
    groups.extend(footer);
    groups.extend(u32::try_from(footer.len()).unwrap().to_le_bytes());
    groups.extend(b"PAR1");
    let groups_file = dir.join("groups.parquet");
    fs::write(&groups_file, &groups).unwrap();
    let mut long = fs::read(&at_bound).unwrap();
    let n = long.len();
    long[n - 8..n - 4].copy_from_slice(&u32::try_from(n).unwrap().to_le_bytes());
    let long_file = dir.join("long.parquet");
    fs::write(&long_file, &long).unwrap();

    let p = |f: &Path| f.display().to_string();
    // At the bound: read, the same as the document.
    let want = ok(&["fleet", "--all", &files[0], &files[1]]);
    assert_eq!(ok(&["fleet", "--all", &p(&at_bound), &files[1]]), want);
    for (f, says) in [
        (
            &past,
            format!(
                "Parquet footer: row_groups[0].num_rows: {} is more than the {real_rows} value(s) its column chunk 0 holds",
                real_rows + 1
            ),
        ),
        (
            &huge,
            format!("Parquet footer: row_groups[0].num_rows: 1099511627776 is more than the {real_rows} value(s)"),
        ),
        (
            &both,
            format!("row group 0: column `step`: its pages end after {real_rows} of the group's 1099511627776 rows"),
        ),
        (
            &off,
            "Parquet footer: row_groups[0].columns[0].meta_data.data_page_offset (and total_compressed_size): ".into(),
        ),
        (
            &groups_file,
            "Parquet footer: row_groups claims 2147483647 element(s) but 1 byte(s) are left in the footer".into(),
        ),
        (&long_file, format!("Parquet footer: length {n} is more than the {} bytes before it", n - 12)),
    ] {
        let o = run(&["fleet", "--all", &p(f), &files[1]]);
        let err = stderr(&o);
        assert!(o.status.success(), "{}: {:?}\n{err}", p(f), o.status);
        let line = format!("{}: {says}", p(f));
        assert!(err.contains(&line), "{err}\nwant {line}");
        assert!(err.trim_end().ends_with("; skipped"), "{err}");
        assert!(stdout(&o).contains("fleet of 1 document(s)"), "{}", stdout(&o));
    }
    fs::remove_dir_all(&dir).unwrap();
}
