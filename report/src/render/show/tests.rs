use super::*;
use bench_core::document::result::StackInfo;

#[test]
fn the_host_line_says_how_the_machine_booted() {
    let mut h = bench_core::document::result::Host::default();
    assert_eq!(boot_facts(&h), "", "an older document: nothing");
    h.firmware = Some("uefi".into());
    h.secure_boot = Some(true);
    h.lockdown = Some("integrity".into());
    assert_eq!(boot_facts(&h), "; booted by UEFI, Secure Boot on, lockdown integrity");
    h.secure_boot = Some(false);
    h.lockdown = None;
    assert_eq!(boot_facts(&h), "; booted by UEFI, Secure Boot off");
    h.firmware = Some("bios".into());
    assert_eq!(boot_facts(&h), "; booted by BIOS", "no Secure Boot to speak of on BIOS");
}

/// A document with an attestation says what it holds after the host
/// line; an older one says nothing of it.
#[test]
fn the_run_lines_say_what_the_attestation_holds() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    doc.attestation = None;
    assert!(!run_lines(&doc).contains("attestation"));
    doc.attestation = Some(bench_core::document::result::Attestation {
        error: Some("no TPM (/dev/tpmrm0: not found)".into()),
        ..Default::default()
    });
    let lines = run_lines(&doc);
    assert!(
        lines.ends_with("\nattestation: no quote: no TPM (/dev/tpmrm0: not found)\n"),
        "{lines}"
    );
}

/// hdparm, sysbench and dd twins show their figures in their tools'
/// units beside MB/s, labelled; other tests add nothing.
#[test]
fn twins_show_their_tools_units() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let ok: Vec<&mut TestResult> = doc
        .tests
        .iter_mut()
        .filter(|x| x.status == Status::Ok && x.summary.read_bytes_per_sec.is_some())
        .take(2)
        .collect();
    assert_eq!(ok.len(), 2, "the fixture has ok read tests");
    let mut it = ok.into_iter();
    let (a, b) = (it.next().unwrap(), it.next().unwrap());
    assert_eq!(tool_units(&[&*a, &*b]), "", "no twins: nothing");
    (a.name, b.name) = ("sysbench_rndrd".into(), "dd_read_10m".into());
    let (ra, rb) = (
        a.summary.read_bytes_per_sec.unwrap(),
        b.summary.read_bytes_per_sec.unwrap(),
    );
    let out = tool_units(&[&*a, &*b]);
    assert!(
        out.starts_with("in the tools' units (hdparm MB/sec = 2^20 B/s; sysbench MiB/s = 2^20 B/s; dd MB/s"),
        "{out}"
    );
    let sysbench = format!("{:.2} MiB/s (sysbench)", ra / 1048576.0);
    let line = out.lines().find(|l| l.starts_with("sysbench_rndrd")).expect(&out);
    assert!(
        line.contains(&sysbench) && line.ends_with(&text::mb_per_sec(ra)),
        "{line}"
    );
    let line = out.lines().find(|l| l.starts_with("dd_read_10m")).expect(&out);
    assert!(
        line.contains("(dd)") && line.contains(" read ") && line.ends_with(&text::mb_per_sec(rb)),
        "{line}"
    );
    b.name = "hdparm_t".into();
    let out = tool_units(&[&*b]);
    let line = out.lines().find(|l| l.starts_with("hdparm_t")).expect(&out);
    let hdparm = format!("{:.2} MB/sec (hdparm)", rb / 1048576.0);
    assert!(
        line.contains(&hdparm) && line.ends_with(&text::mb_per_sec(rb)),
        "{line}"
    );
}

/// `slog` renders per write size (bytes), write MB/s and µs per write
/// with its flush (step runtime / writes); its diskinfo twin and the
/// zones twin show diskinfo's units beside MB/s: `usec/IO = Mbytes/s`
/// (2^20) as `TS` prints, `kbytes/sec` (2^10) as `TR` prints.
#[test]
fn slog_per_size_and_diskinfo_units() {
    use bench_core::document::result::Summary;
    let doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let base = doc
        .tests
        .iter()
        .find(|x| x.status == Status::Ok && x.steps.len() == 1 && x.steps[0].read.is_some())
        .expect("an ok one-step read test");
    let mut x = base.clone();
    (x.name, x.workload) = ("diskinfo_S".into(), Workload::Slog);
    let sizes = [
        ("512", 1000u64, 2_000_000_000u64, 256_000.0),
        ("8388608", 250, 4_000_000_000, 524_288_000.0),
    ];
    x.steps = sizes
        .iter()
        .map(|&(label, ios, runtime_ns, bps)| {
            let mut s = base.steps[0].clone();
            s.label = label.into();
            let mut w = s.read.take().unwrap();
            (w.ios, w.bytes_per_sec) = (ios, bps);
            (s.write, s.runtime_ns) = (Some(w), runtime_ns);
            s
        })
        .collect();
    let fig = |label: &str, value| Figure {
        label: label.into(),
        value,
    };
    x.summary = Summary {
        per_step: vec![fig("512", 256_000.0), fig("8388608", 524_288_000.0)],
        ..Summary::default()
    };
    let out = slog(&x);
    assert!(out.starts_with("slog, random writes each followed by a flush"), "{out}");
    let line = |out: &str, start: &str| -> Vec<String> {
        let l = out.lines().find(|l| l.trim_start().starts_with(start)).expect(out);
        l.split_whitespace().map(String::from).collect()
    };
    assert_eq!(line(&out, "size B")[2..], ["512", "8388608"]);
    assert_eq!(line(&out, "write MB/s")[2..], ["0.3", "524.3"]);
    assert_eq!(line(&out, "µs per write+flush")[3..], ["2000.0", "16000.0"]);

    let mut z = base.clone();
    (z.name, z.workload) = ("diskinfo_t_zones".into(), Workload::Zones);
    z.summary = Summary {
        per_step: vec![fig("outside", 100.0 * 1048576.0 / 0.8)],
        ..Summary::default()
    };
    let out = tool_units(&[&x, &z]);
    assert!(
        out.contains("diskinfo kbytes/sec = 2^10 B/s, Mbytes/s = 2^20 B/s"),
        "{out}"
    );
    let row = |name: &str, fig: &str| {
        out.lines()
            .find(|l| l.starts_with(name) && l.contains(fig))
            .expect(&out)
            .to_string()
    };
    let r = row("diskinfo_S ", " write 512 B ");
    assert!(
        r.contains("2000.0 usec/IO = 0.2 Mbytes/s (diskinfo)") && r.ends_with("0.3"),
        "{r}"
    );
    let r = row("diskinfo_S ", " write 8388608 B ");
    assert!(
        r.contains("16000.0 usec/IO = 500.0 Mbytes/s (diskinfo)") && r.ends_with("524.3"),
        "{r}"
    );
    let r = row("diskinfo_t_zones ", " read outside ");
    assert!(
        r.contains("read outside") && r.contains("128000 kbytes/sec (diskinfo)") && r.ends_with("131.1"),
        "{r}"
    );
}

/// Steps of several passes show each pass's MB/s, the warm-up and the
/// one reported marked; a fill says how much, or that the target could
/// not be written; a test of one pass and no fill adds nothing.
#[test]
fn passes_and_fills_are_shown() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let mut ok = doc
        .tests
        .iter_mut()
        .filter(|x| x.status == Status::Ok && x.steps.len() == 1 && x.steps[0].read.is_some());
    let (a, b) = (ok.next().unwrap(), ok.next().unwrap());
    assert_eq!(passes(&[&*a, &*b]), "", "one pass, no fill: nothing");
    let pass = text::test_pass;
    a.steps[0].passes = vec![
        pass(true, 9e6, 100.0),
        pass(false, 4e6, 1234.0),
        pass(false, 5e6, 2000.0),
    ];
    a.steps[0].chosen_pass = Some(2);
    (a.steps[0].lowest_lat_pass, a.steps[0].lowest_lat_mean_ns) = (Some(1), Some(1234.0));
    a.steps[0].filled_bytes = Some(1 << 30);
    b.steps[0].filled_bytes = Some(0);
    let out = passes(&[&*a, &*b]);
    assert!(out.starts_with("passes, MB/s (10^6 B/s)"), "{out}");
    let line = out.lines().find(|l| l.trim_start().starts_with(&a.name)).expect(&out);
    assert!(line.ends_with("9.0 w   4.0     5.0 *        1.2 (pass 2)"), "{line}");
    assert!(out.contains("pass 3  lowest mean lat us"), "{out}");
    assert!(
        out.contains("1073741824 B (1024.0 MiB) filled with random data first"),
        "{out}"
    );
    assert!(
        out.contains(&format!("{} main: not filled (the target may not be written)", b.name)),
        "{out}"
    );
}

/// A target's surface scan follows its other sections: the facts
/// with their units, a line per time class and the failed reads, the
/// unreadable and recovered LBAs, the five slowest reads, and a line
/// per zone with its MB/s and a bar that shrinks as the rate falls.
/// The other targets show nothing of it.
/// A test that waited for steady state shows a line per wait: attained
/// or not, how long, the last window's criterion and mean, the first and
/// last intervals' figures with their unit; a job number only with
/// several jobs; other tests show nothing of it.
#[test]
fn steady_state_waits_are_shown() {
    use bench_core::document::result::{SteadyJudged, SteadyWait};
    use bench_core::spec::{SteadyCriterion, SteadySpec};
    use bench_core::vocab::units::Nanos;
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    assert!(!render(&Loaded {
        file: "a.json".into(),
        doc: doc.clone(),
        warnings: Vec::new(),
    })
    .contains("steady state before measuring"));
    let x = doc
        .tests
        .iter_mut()
        .find(|x| x.status == Status::Ok && x.steps.len() == 1)
        .unwrap();
    let name = x.name.clone();
    x.params.steady = Some(SteadySpec {
        ss: SteadyCriterion::parse("bw:10%").unwrap(),
        ss_dur: Nanos::from_secs(3),
        ss_ramp: Nanos(0),
        ss_interval: Nanos::from_secs(1),
        ss_max: Nanos::from_secs(30),
    });
    let wait = |attained: bool, wait_ns: u64| SteadyWait {
        attained,
        wait_ns,
        window: Some(SteadyJudged {
            mean: 100e6,
            max_deviation: 5e6,
            slope: 1e6,
            criterion: 5.0,
        }),
        iops: vec![400.0, 300.0, 250.0, 250.0],
        bw: vec![160e6, 120e6, 100e6, 100e6],
    };
    x.steps[0].steady_state = vec![wait(true, 4_000_000_000)];
    let one = render(&Loaded {
        file: "a.json".into(),
        doc: doc.clone(),
        warnings: Vec::new(),
    });
    let label = doc.tests.iter().find(|x| x.name == name).unwrap().steps[0]
        .label
        .clone();
    let want = format!(
        "  {name} {label}: steady state (bw:10%) after 4.0 s; last window: bw 5.000%, mean 100.0 MB/s; 4 intervals, \
         160.0 MB/s .. 100.0 MB/s"
    );
    assert!(
        one.contains("steady state before measuring (fio's ss; the wait is not measured):\n"),
        "{one}"
    );
    assert!(one.lines().any(|l| l == want), "{want:?} not in:\n{one}");
    let x = doc.tests.iter_mut().find(|x| x.name == name).unwrap();
    x.steps[0].steady_state = vec![wait(true, 4_000_000_000), wait(false, 30_000_000_000)];
    let two = render(&Loaded {
        file: "a.json".into(),
        doc,
        warnings: Vec::new(),
    });
    assert!(
        two.contains(&format!(
            "  {name} {label} job 1: NO steady state (bw:10%) within 30.0 s, measured anyway; last window"
        )),
        "{two}"
    );
}

/// An all-at-once run with scaling shows, under its table, each point's
/// sum together against the same disks' sum alone, and all disks last;
/// without scaling, no such block.
#[test]
fn scaling_points_are_shown_under_the_all_at_once_table() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let name = doc
        .tests
        .iter()
        .find(|x| x.workload == Workload::SeqRead && x.status == Status::Ok)
        .unwrap()
        .name
        .clone();
    let alone: Vec<TestResult> = doc
        .tests
        .iter()
        .filter(|x| x.name == name && x.status == Status::Ok)
        .cloned()
        .collect();
    assert!(alone.len() >= 3, "{}", alone.len());
    let mut together = alone.clone();
    for t in &mut together {
        t.summary.read_bytes_per_sec = Some(50e6);
    }
    let sum = |k: usize| -> f64 { alone[..k].iter().map(|t| t.summary.read_bytes_per_sec.unwrap()).sum() };
    let point = bench_core::document::result::ScalingPoint {
        targets: alone[..2].iter().map(|t| t.target.clone()).collect(),
        ok: true,
        read_bytes_per_sec: Some(sum(2) * 0.9),
        write_bytes_per_sec: None,
        read_iops: None,
        write_iops: None,
    };
    doc.all_at_once = vec![AllAtOnce {
        test: name.clone(),
        workload: Workload::SeqRead,
        results: together,
        scaling: vec![point],
    }];
    let out = render(&Loaded {
        file: "s.json".into(),
        doc: doc.clone(),
        warnings: Vec::new(),
    });
    let at = out
        .find("  scaling: the sum on the first disks at once, as disks are added:\n")
        .expect(&out);
    let rows: Vec<Vec<&str>> = out[at..]
        .lines()
        .skip(2)
        .take(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        vec![
            "2",
            "read",
            "MB/s",
            &text::mb_per_sec(sum(2) * 0.9),
            &text::mb_per_sec(sum(2)),
            "0.900"
        ]
    );
    let n = alone.len();
    assert_eq!(rows[1][0], n.to_string());
    assert_eq!(rows[1][3], text::mb_per_sec(50e6 * n as f64));
    doc.all_at_once[0].scaling.clear();
    let out = render(&Loaded {
        file: "s.json".into(),
        doc,
        warnings: Vec::new(),
    });
    assert!(!out.contains("scaling: the sum"));
}

#[test]
fn preconditioning_is_shown_with_its_rounds() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    doc.targets[0].precondition = Some(crate::figures::burnin::test_precondition());
    let out = render(&Loaded {
        file: "pc.json".into(),
        doc,
        warnings: Vec::new(),
    });
    let start = out.find("preconditioning (").expect(&out);
    let block = &out[start..];
    let lines: Vec<&str> = block.lines().take(16).collect();
    for want in [
        "preconditioning (MB/s = 10^6 B/s, MiB = 2^20 B, IOPS = writes/s):",
        "  fill: 2147483648 B (2048.0 MiB) written sequentially in 128 KiB writes, 268.4 MB/s, 8.0 s",
        "  rounds: 4096 B random writes, 32 in flight, 60.0 s each; 7 of at most 25, judged by IOPS",
        "  steady state: reached at round 7; the last 5 rounds: mean 30300.0 IOPS, spread 4.0% of it (limit 20%), fitted line moved 2.4% (limit 10%)",
        "  ended: steady: the window of rounds is steady",
    ] {
        assert!(lines.contains(&want), "{want:?} not in:\n{}", lines.join("\n"));
    }
    let row = |r: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(r))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
    };
    assert_eq!(row("1"), Some(vec!["1", "90000.0", &"#".repeat(40)]));
    assert_eq!(row("2"), Some(vec!["2", "50000.0", &"#".repeat(22)]));
    assert_eq!(
        row("3*").map(|r| r[1].to_string()),
        Some("31000.0".into()),
        "the window's rounds marked"
    );
    assert!(row("2*").is_none());
}

#[test]
fn erase_support_is_a_line_under_its_target() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let mut page = [0u8; 4096];
    (page[256], page[328]) = (0x02, 0x01);
    doc.targets[0].erase_support = Some(bench_core::device::erase::nvme(&page));
    let out = render(&Loaded {
        file: "e.json".into(),
        doc: doc.clone(),
        warnings: Vec::new(),
    });
    let want = "erase support (the disk's nvme_identify_controller; nothing was erased): nvme_sanitize_crypto, nvme_format_user_data";
    let at = out.find(want).expect(&out);
    assert!(at > out.find(&format!("-- {} (", doc.targets[0].path)).unwrap());
    assert!(at < out.find(&format!("-- {} (", doc.targets[1].path)).unwrap());
}

/// A disk's path is a line under its target, before and after the run,
/// with what could not be read; and a table of the HTML report.
#[test]
fn a_link_is_a_line_under_its_target_and_a_row_of_the_report() {
    use bench_core::document::result::{Link, LinkReading, PcieLink, PcieRole};
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let pcie = |role, address: &str, max_width| PcieLink {
        address: address.into(),
        role,
        speed_mts: Some(2500),
        width: Some(1),
        max_speed_mts: Some(16000),
        max_width: Some(max_width),
        aer: None,
    };
    let r = LinkReading {
        pcie: vec![
            pcie(PcieRole::Device, "0000:01:00.0", 4),
            pcie(PcieRole::Port, "0000:00:02.0", 16),
        ],
        errors: vec!["SATA Phy Event Counters (log 11h): bad checksum".into()],
        ..LinkReading::default()
    };
    doc.targets[0].link = Some(Link {
        before: Some(r.clone()),
        after: Some(r),
    });
    let loaded = Loaded {
        file: "l.json".into(),
        doc: doc.clone(),
        warnings: Vec::new(),
    };
    let out = render(&loaded);
    let want = "link before the run: PCIe 2.5 GT/s x1 0000:01:00.0 (max 16 GT/s x4; port 0000:00:02.0 max 16 GT/s x16)\n  not read: SATA Phy Event Counters (log 11h): bad checksum\nlink after the run: ";
    let at = out.find(want).expect(&out);
    assert!(at > out.find(&format!("-- {} (", doc.targets[0].path)).unwrap());
    assert!(at < out.find(&format!("-- {} (", doc.targets[1].path)).unwrap());
    let html = crate::render::html::render(std::slice::from_ref(&loaded));
    assert!(html.contains("<h3>Links</h3>"), "{html}");
    assert!(html.contains("<td>PCIe 2.5 GT/s x1 0000:01:00.0 (max 16 GT/s x4; port 0000:00:02.0 max 16 GT/s x16)</td>"));
}

/// A failed NVMe disk's telemetry log is a line under its target: the
/// file beside the document, its size, areas and checksum; or why not.
#[test]
fn a_telemetry_log_is_a_line_under_its_target() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let sha = "ab".repeat(32);
    doc.targets[0].telemetry = Some(bench_core::document::result::Telemetry {
        log_id: 7,
        bytes: 3072,
        sha256: Some(sha.clone()),
        data_areas: vec![1, 2],
        file: Some("nvme0n1.telemetry.bin".into()),
        error: None,
    });
    doc.targets[1].telemetry = Some(bench_core::document::result::Telemetry {
        log_id: 7,
        bytes: 0,
        sha256: None,
        data_areas: Vec::new(),
        file: None,
        error: Some("the log is 40000000 B, over 33554432 B".into()),
    });
    let out = render(&Loaded {
        file: "t.json".into(),
        doc: doc.clone(),
        warnings: Vec::new(),
    });
    let want = format!(
        "telemetry log (NVMe log page 07h, of a failed disk): saved beside the document as <its name less .json>.nvme0n1.telemetry.bin: 3072 B, data areas [1, 2], SHA-256 {sha}"
    );
    let at = out.find(&want).expect(&out);
    assert!(at > out.find(&format!("-- {} (", doc.targets[0].path)).unwrap());
    assert!(at < out.find(&format!("-- {} (", doc.targets[1].path)).unwrap());
    assert!(out.contains(
        "telemetry log (NVMe log page 07h, of a failed disk): not kept (the log is 40000000 B, over 33554432 B)"
    ));
}

#[test]
fn a_burn_in_is_shown_after_its_target() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let loaded = |doc: &ResultDoc| Loaded {
        file: "burn.json".into(),
        doc: doc.clone(),
        warnings: Vec::new(),
    };
    let before = render(&loaded(&doc));
    assert!(!before.contains("burn-in"), "no burn-in, nothing said");
    doc.targets[1].burn_in = Some(crate::figures::burnin::test_burn_in());
    let out = render(&loaded(&doc));
    let next = format!("-- {} (", doc.targets[2].path);
    let start = out.find("burn-in (").expect(&out);
    assert!(start > out.find(&format!("-- {} (", doc.targets[1].path)).unwrap());
    let block = &out[start..out.find(&next).expect(&next) - 1];
    assert_eq!(out.replace(block, ""), before, "the burn-in block is all that changed");
    let lines: Vec<&str> = block.lines().collect();
    for want in [
        "burn-in (MB/s = 10^6 B/s, MiB = 2^20 B, LBA = logical block):",
        "  area: bytes 0 to 67108864 of the disk, 67108864 B (64.0 MiB), all written and read back by every pass",
        "  requests: 1048576 B each, up to 4 in flight, sequential order; LBAs in logical blocks of 512 B",
        "  done: 503315968 B (480.0 MiB) of 536870912 B (512.0 MiB) written and read back (93.7%), 3 of 4 passes done",
        "  ended: stopped: interrupted, or its time ran out, before every pass was done: the run was interrupted",
        "unwritable LBAs (no write reached them), 1: 4096",
        "unreadable LBAs (no read returned them): none",
        "mismatched LBAs (read back other than written), 1: 70000",
    ] {
        assert!(lines.contains(&want), "{want:?} not in:\n{block}");
    }
    let row = |pass: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(pass))
            .copied()
    };
    fn words(l: Option<&str>) -> Option<Vec<&str>> {
        l.map(|l| l.split_whitespace().collect())
    }
    assert_eq!(
        words(row("2")),
        Some(vec![
            "2", "0x55", "67108352", "B", "(64.0", "MiB)", "200.0", "67108864", "B", "(64.0", "MiB)", "250.0", "1",
            "0", "done"
        ])
    );
    assert_eq!(
        words(row("4")).map(|w| w[w.len() - 1].to_string()),
        Some("stopped".into())
    );
}

#[test]
fn a_surface_scan_is_shown_after_its_target() {
    let mut doc: ResultDoc =
        serde_json::from_str(include_str!("../../../tests/fixtures/qemu-4disks-quick.json")).expect("fixture");
    let loaded = |doc: &ResultDoc| Loaded {
        file: "scan.json".into(),
        doc: doc.clone(),
        warnings: Vec::new(),
    };
    let before = render(&loaded(&doc));
    assert!(!before.contains("surface scan"), "no scan, nothing said");
    doc.targets[1].surface_scan = Some(crate::figures::scan::test_scan());
    let out = render(&loaded(&doc));
    let (this, next) = (
        format!("-- {} (", doc.targets[1].path),
        format!("-- {} (", doc.targets[2].path),
    );
    let (at, next_at) = (out.find(&this).expect(&this), out.find(&next).expect(&next));
    let start = out.find("surface scan (").expect(&out);
    assert!(start > at, "after its target's heading");
    // Up to the blank line before the next target.
    let block = &out[start..next_at - 1];
    assert_eq!(out.replace(block, ""), before, "the scan block is all that changed");
    let lines: Vec<&str> = block.lines().collect();
    for want in [
        "surface scan (MB/s = 10^6 B/s, MiB = 2^20 B, GB = 10^9 B, ms = 10^-3 s, LBA = logical block):",
        "  area: bytes 0 to 67108864 of the disk, 67108864 B (64.0 MiB)",
        "  read: 67107328 B (64.0 MiB) of 67108864 B (64.0 MiB) planned (100.0%); 64 reads, 2 failed",
        "  ended: done: every planned read was made",
        "reads by time, from submission to completion:",
        "  < 5 ms      60",
        "  5-20 ms      1",
        "  20-50 ms     0",
        "  50-150 ms    1",
        "  150-500 ms   0",
        "  >= 500 ms    0",
        "  failed       2",
        "unreadable LBAs (no read returned them), 3: 6145, 6153, 40960",
        "recovered LBAs (a retry returned them), 1: 61443",
        "the 5 slowest reads:",
        "     LBA  length B  time ms",
        "   18432   1048576     61.5",
        "   81920   1048576     12.0",
        "  122880   1048576      4.7",
        "zones, read MB/s by position on the disk (GB from its first byte, outside to inside), 8 zones:",
    ] {
        assert!(lines.contains(&want), "{want:?} in\n{block}");
    }
    assert!(block.contains("  rate: ") && block.contains(" MB/s\n"), "{block}");
    assert!(block.contains("  elapsed: 0.5 s\n"), "{block}");
    assert_eq!(lines.iter().filter(|l| l.ends_with("1048576      4.9")).count(), 1);
    assert!(!block.contains("4.6"), "only five of the seven slowest: {block}");
    let zones: Vec<&str> = lines.iter().copied().filter(|l| l.contains(" GB  ")).collect();
    assert_eq!(zones.len(), 8, "{block}");
    assert_eq!(
        zones[0],
        "  0.0000-0.0084 GB  200.0 MB/s  ########################################"
    );
    assert!(
        zones[7].starts_with("  0.0587-0.0671 GB   95.0 MB/s  ###"),
        "{}",
        zones[7]
    );
    let bars: Vec<usize> = zones.iter().map(|l| l.matches('#').count()).collect();
    assert!(bars.windows(2).all(|w| w[0] >= w[1]) && bars[7] < bars[0], "{bars:?}");
}

#[test]
fn stack_words_name_the_build_and_the_mode() {
    let mut t = TargetInfo {
        stack: Some(StackInfo {
            kind: bench_core::document::result::StackClass::Md,
            name: "r5".into(),
            level: bench_core::vocab::stack::StackLevel::Raid5,
            members: vec!["/dev/vda".into(), "/dev/vdb".into(), "/dev/vdc".into()],
            chunk_bytes: Some(65536),
            layout: Some("left-symmetric".into()),
            mode: Some(bench_core::document::result::StackMode::ReadOnly),
            ..StackInfo::default()
        }),
        ..TargetInfo::default()
    };
    assert_eq!(
        stack_words(&t),
        "md raid5 r5 of /dev/vda + /dev/vdb + /dev/vdc, chunk 65536 B, layout left-symmetric, read-only"
    );
    // A document from before the mode was recorded: nothing about it.
    if let Some(s) = t.stack.as_mut() {
        s.mode = None;
    }
    assert!(!stack_words(&t).contains("read"), "{}", stack_words(&t));
    assert_eq!(stack_words(&TargetInfo::default()), "-");
}
