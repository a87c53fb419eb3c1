//! End to end in QEMU (TCG): network boot (docs/network-boot.md, "Network boot" and "A rack: the config
//! from the network, results to existing storage, run once").
//!
//! Every boot: SeaBIOS and the virtio NIC's iPXE ROM (Debian's ipxe-qemu) boot from QEMU's
//! user-mode network with `restrict=on` (no packet leaves this machine): its DHCP hands out
//! boot.ipxe, its TFTP serves the directory `bootbench-image netboot` writes, and boot.ipxe
//! loads the kernel and the initramfs from beside it. The guest's 10.0.2.100:80 reaches the
//! collector, Debian's nginx on the host's loopback (a socat per connection).
//!
//! - `n1`: three machines in turn (DMI serials RACK-01, -02, -03; one SATA disk each, the
//!   third at half the others' rate) netboot, bring the NIC up with DHCP, fetch their config
//!   from the collector, run it, and PUT their documents there; each document on the collector
//!   is byte for byte the one framed on the serial console. The config's `destructive` section
//!   names the disk, but the initramfs was not built with `--allow-network-destructive`: the
//!   write test is withheld and the disk is byte-identical afterwards. RACK-01 boots again: it
//!   finds its result at the URL and powers off without running. `bootbench-report fleet` on
//!   the collected documents flags RACK-03's disk.
//! - `n2`: the results URL's server is down: the document still comes out on the serial
//!   console, the console says why it was not sent, and the machine powers off within the
//!   retry bound.

use std::path::Path;

use bootbench_e2e::{
    artifacts, checksum, dead_port, disks, netboot, netboot_dir, the_document, Collector, NetSeen, Pushgateway,
    Scratch, GUEST_HTTP,
};
use bootbench_image::netboot::Options;
use bootbench_qemu::net::{bootif, Nic};
use bootbench_qemu::run::Outcome;
use serde_json::Value;

const CONFIRM: &str = "I understand this destroys data";

/// The config the collector serves: a short direct read and a write, the write granted on the
/// disk by serial (the network may not grant it).
fn config() -> Value {
    serde_json::json!({
        "defaults": {"iodepth": 1, "ramp_time": "200ms", "runtime": "2s"},
        "tests": [
            {"workload": "seq_read", "name": "seq_read_1m", "bs": "1M"},
            {"workload": "seq_write", "name": "seq_write_1m", "bs": "1M", "size": "4M"}
        ],
        "destructive": {"confirm": CONFIRM, "countdown": 0, "targets": [{"serial": "NB-DISK"}]}
    })
}

/// A collector serving `config()` at /config/bootbench.json from `dir/www`.
fn collector(dir: &Path) -> Option<Collector> {
    let www = dir.join("www");
    std::fs::create_dir_all(www.join("config")).expect("the collector's config directory");
    std::fs::write(
        www.join("config/bootbench.json"),
        serde_json::to_vec_pretty(&config()).expect("JSON"),
    )
    .expect("the config");
    Collector::start(&dir.join("nginx"), &www)
}

/// The console's lines with the given text.
fn lines_with<'s>(serial: &'s str, text: &str) -> Vec<&'s str> {
    serial.lines().filter(|l| l.contains(text)).collect()
}

#[test]
fn n1_three_machines_netboot_fetch_their_config_send_their_results_once() {
    let Some(a) = artifacts("n1_netboot") else {
        return;
    };
    let scratch = Scratch::new("n1_netboot");
    let dir = scratch.0.clone();
    let Some(collector) = collector(&dir) else {
        return;
    };
    let Some(gateway) = Pushgateway::start(&dir.join("pushgateway")) else {
        return;
    };
    let config_url = format!("{GUEST_HTTP}/config/bootbench.json");
    let results_url = format!("{GUEST_HTTP}/results/{{machine}}/{{run}}-{{n}}.json");
    // The guest's 10.0.2.101:80 is the pushgateway (the second forward).
    let options = Options {
        config_url: Some(config_url.clone()),
        results_url: Some(results_url.clone()),
        append: "bootbench.metrics_url=http://10.0.2.101".to_string(),
    };
    let net = netboot_dir(&a, &dir, &options);

    let boot = |machine: &str, bps: &str| {
        let mdir = dir.join(machine);
        std::fs::create_dir_all(mdir.join("disks")).expect("the machine's directory");
        // A SATA disk: fleet groups disks by model, and a virtio disk has none.
        let specs = disks(&[&format!("sata,size=64M,serial=NB-DISK,model=NB SATA SSD,bps={bps}")]);
        let disk = specs[0].backing_file(&mdir.join("disks"));
        if !disk.exists() {
            // Blank: without the network's rule, the grant would let the write test write.
            std::fs::File::create(&disk)
                .and_then(|f| f.set_len(specs[0].size))
                .expect("the disk");
        }
        let before = checksum(&disk).expect("checksum");
        let (outcome, seen) = netboot(
            &a,
            &mdir,
            &net,
            Nic::Virtio,
            &[collector.port(), gateway.port()],
            &specs,
            Some(machine),
        );
        assert_eq!(
            checksum(&disk).expect("checksum"),
            before,
            "{machine}: the disk changed"
        );
        (outcome, seen)
    };

    let mut ids = Vec::new();
    for (machine, bps) in [("RACK-01", "20M"), ("RACK-02", "20M"), ("RACK-03", "10M")] {
        let (outcome, seen) = boot(machine, bps);
        let serial = &outcome.serial;
        ipxe_read_the_script_then_the_kernel_and_the_initramfs(machine, &seen, serial);
        the_network_came_up_on_the_boot_nic_with_dhcp(machine, serial);
        let (name, bytes, doc) = the_document(&outcome);
        let id = the_document_ran_the_fetched_config_with_the_write_withheld(machine, &name, &doc, &config_url);
        the_collector_holds_the_serial_frames_bytes(&collector, machine, &id, &bytes, serial);
        the_pushgateway_holds_the_machines_end(&gateway, machine, &id, &doc, serial);
        ids.push(id);
    }
    assert!(
        ids.windows(2).all(|w| w[0] == w[1]),
        "one config, one disk serial: one plan id {ids:?}"
    );

    // RACK-01 again: its result is at the URL; nothing runs, nothing is sent.
    let puts_before = puts(&collector);
    let (again, _) = boot("RACK-01", "20M");
    rack_01_booted_again_finds_its_result_and_runs_nothing(&again, &collector, puts_before, &ids[0]);

    the_fleet_report_flags_the_slow_disk_and_only_it(&collector);
}

/// The machine pushed its run through the guest's network to the pushgateway on the host
/// (`bootbench.metrics_url=`): what the gateway holds for it is the end, state ok, its
/// disk's verdict as the document has it, labelled with the machine (the DMI serial), the
/// disk's serial and model, and the plan's id; the console said where the pushes went and
/// that none failed.
fn the_pushgateway_holds_the_machines_end(gateway: &Pushgateway, machine: &str, id: &str, doc: &Value, serial: &str) {
    let text = gateway.metrics();
    let group = format!("instance=\"{machine}\",job=\"bootbench\"");
    let mine: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("bootbench_") && l.contains(&group))
        .collect();
    let has = |prefix: &str, labels: &[&str], value: &str| {
        mine.iter().any(|l| {
            l.starts_with(prefix)
                && labels.iter().all(|x| l.contains(x))
                && (value.is_empty() || l.ends_with(&format!("}} {value}")))
        })
    };
    assert!(
        has("bootbench_run_state{", &["state=\"ok\""], "1"),
        "{machine}: {mine:#?}"
    );
    assert!(
        has("bootbench_run_info{", &[&format!("plan_id=\"{id}\"")], "1"),
        "{machine}: {mine:#?}"
    );
    let verdict = doc["acceptance"]["targets"][0]["verdict"].as_str().expect("a verdict");
    assert!(
        has(
            "bootbench_disk_verdict{",
            &[
                "serial=\"NB-DISK\"",
                "model=\"NB SATA SSD\"",
                &format!("machine=\"{machine}\""),
                &format!("verdict=\"{verdict}\"")
            ],
            "1"
        ),
        "{machine}: {mine:#?}"
    );
    assert!(
        has(
            "bootbench_test_read_bytes_per_second{",
            &["test=\"seq_read_1m\"", "serial=\"NB-DISK\""],
            ""
        ),
        "{machine}: {mine:#?}"
    );
    assert_eq!(
        lines_with(
            serial,
            "metrics: pushing to http://10.0.2.101/metrics/job/bootbench/instance/"
        )
        .len(),
        1,
        "{serial}"
    );
    let tally = lines_with(serial, "metrics: ");
    assert!(
        tally
            .iter()
            .any(|l| l.contains("push(es) sent") && !l.contains("failed")),
        "{tally:#?}"
    );
}

/// iPXE: the script, then the kernel and the initramfs beside it, over TFTP; the kernel
/// command line names the boot NIC.
fn ipxe_read_the_script_then_the_kernel_and_the_initramfs(machine: &str, seen: &NetSeen, serial: &str) {
    let at = |f: &str| {
        seen.tftp
            .iter()
            .position(|t| t == f)
            .unwrap_or_else(|| panic!("{machine}: no TFTP read of {f}: {:?}", seen.tftp))
    };
    assert!(at("boot.ipxe") < at("vmlinuz") && at("vmlinuz") < at("initramfs.img"));
    let cmdline = serial
        .lines()
        .find_map(|l| l.split_once("bootbench: kernel command line: ").map(|(_, c)| c))
        .unwrap_or_else(|| panic!("{machine}: no kernel command line:\n{serial}"));
    assert!(cmdline.split_whitespace().any(|w| w == bootif()), "{cmdline}");
}

/// The network came up on the boot NIC with DHCP (QEMU's restricted network gives no
/// router and no name server: the collector is on the same /24).
fn the_network_came_up_on_the_boot_nic_with_dhcp(machine: &str, serial: &str) {
    let up = lines_with(serial, "bootbench: network: ");
    assert!(
        up.iter().any(|l| l
            .contains("(52:54:00:12:34:56, virtio_net): DHCP lease 10.0.2.15/24 (no router), from server 10.0.2.2")),
        "{machine}: {up:?}\n{serial}"
    );
}

/// The document: schema-valid, of this machine, its config from the URL, framed under the
/// machine's name, the read test run and the write test withheld (the config came from the
/// network). Returns its plan id.
fn the_document_ran_the_fetched_config_with_the_write_withheld(
    machine: &str,
    name: &str,
    doc: &Value,
    config_url: &str,
) -> String {
    bootbench_e2e::assert_schema_valid(doc);
    assert_eq!(doc["host"]["product_serial"], machine);
    assert_eq!(doc["run"]["config_source"], config_url, "the config came from the URL");
    let id = doc["run"]["plan_id"].as_str().expect("plan_id").to_string();
    assert_eq!(name, format!("{machine}.json"), "no stick: the frame's name");
    // The write test is withheld: the config came from the network.
    let tests = bootbench_e2e::tests_on(doc, "NB-DISK");
    let read = tests.iter().find(|t| t["name"] == "seq_read_1m").expect("seq_read_1m");
    assert_eq!(read["status"]["state"], "ok", "{}", read["status"]);
    let write = tests
        .iter()
        .find(|t| t["name"] == "seq_write_1m")
        .expect("seq_write_1m");
    assert_eq!(write["status"]["state"], "skipped", "{}", write["status"]);
    let why = write["status"]["reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("writes withheld: the config came from the network"),
        "{why}"
    );
    id
}

/// The collector has the serial frame's document (pretty; the frame carries it compact), at {n} = 1; the console says it
/// was sent once; the collector saw the config's GET, a GET of that URL that found nothing,
/// and the PUT.
fn the_collector_holds_the_serial_frames_bytes(
    collector: &Collector,
    machine: &str,
    id: &str,
    bytes: &[u8],
    serial: &str,
) {
    let path = format!("results/{machine}/{id}-1.json");
    let stored = std::fs::read(collector.root().join(&path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(
        bench_core::document::frame::compact_json(&stored),
        bytes,
        "{machine}: the collector's copy differs from the serial one"
    );
    assert!(
        lines_with(serial, &format!("results sent to {GUEST_HTTP}/{path}")).len() == 1,
        "{machine}:\n{serial}"
    );
    let reqs = collector.requests();
    for want in [
        "GET /config/bootbench.json 200".to_string(),
        format!("GET /{path} 404"),
        format!("PUT /{path} 201"),
    ] {
        assert!(reqs.contains(&want), "{machine}: {want} not in {reqs:?}");
    }
}

/// How many PUTs the collector has answered.
fn puts(collector: &Collector) -> usize {
    collector.requests().iter().filter(|r| r.starts_with("PUT ")).count()
}

/// RACK-01 booted again finds its result at the URL (plan id `id`): it says so, runs
/// nothing and sends nothing (the collector has still seen `puts_before` PUTs).
fn rack_01_booted_again_finds_its_result_and_runs_nothing(
    again: &Outcome,
    collector: &Collector,
    puts_before: usize,
    id: &str,
) {
    assert!(again.status.success(), "QEMU exited with {}", again.status);
    let said = lines_with(&again.serial, "this machine ran this plan already");
    assert_eq!(said.len(), 1, "{}", again.serial);
    assert!(
        said[0].contains(&format!("{GUEST_HTTP}/results/RACK-01/{id}-1.json")),
        "{said:?}"
    );
    assert_eq!(again.documents().count(), 0, "no document: nothing ran");
    assert!(lines_with(&again.serial, "[test 1/").is_empty(), "a test ran");
    assert_eq!(puts(collector), puts_before, "nothing sent");
}

/// The fleet report of the collected documents flags the slow disk, and only it.
fn the_fleet_report_flags_the_slow_disk_and_only_it(collector: &Collector) {
    let results = ["RACK-01", "RACK-02", "RACK-03"].map(|m| collector.root().join("results").join(m));
    let gathered = bootbench_report::render::fleet::gather(&results).expect("the collected documents");
    assert_eq!(gathered.fleet.docs.len(), 3, "{:?}", gathered.skipped);
    let text = bootbench_report::render::fleet::render(&gathered.fleet, true);
    let flagged: Vec<&str> = text.lines().filter(|l| l.trim_end().ends_with("outlier")).collect();
    assert!(!flagged.is_empty(), "no outlier flagged:\n{text}");
    assert!(flagged.iter().all(|l| l.contains("RACK-03")), "{flagged:?}\n{text}");
}

#[test]
fn n2_a_collector_that_is_down_leaves_the_results_on_the_console() {
    let Some(a) = artifacts("n2_netboot_down") else {
        return;
    };
    let scratch = Scratch::new("n2_netboot_down");
    let dir = scratch.0.clone();
    let Some(collector) = collector(&dir) else {
        return;
    };
    // 10.0.2.100 serves the config; 10.0.2.101 forwards to a port nothing listens on.
    let options = Options {
        config_url: Some(format!("{GUEST_HTTP}/config/bootbench.json")),
        results_url: Some("http://10.0.2.101/results/{machine}-{n}.json".to_string()),
        append: String::new(),
    };
    let net = netboot_dir(&a, &dir, &options);
    let specs = disks(&["sata,size=64M,serial=NB-DISK,model=NB SATA SSD,bps=20M"]);
    let (outcome, _) = netboot(
        &a,
        &dir,
        &net,
        Nic::Virtio,
        &[collector.port(), dead_port()],
        &specs,
        Some("RACK-09"),
    );
    let serial = &outcome.serial;
    let (_, _, doc) = the_document(&outcome);
    assert_eq!(doc["run"]["status"], "ok", "{}", doc["run"]);
    // The run-once check could not ask; the plan only reads (writes withheld), so it ran.
    assert_eq!(
        lines_with(serial, "run once: cannot ask the results URL").len(),
        1,
        "{serial}"
    );
    let not_sent = lines_with(
        serial,
        "results not sent to the results URL: PUT http://10.0.2.101/results/RACK-09-1.json",
    );
    assert_eq!(not_sent.len(), 1, "{serial}");
    // Within the bound: the retries stop before 30 s.
    let secs = |l: &str| -> f64 {
        l.trim_start_matches('[')
            .split(']')
            .next()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or_else(|| panic!("no time stamp: {l}"))
    };
    let finished = lines_with(serial, "bootbench: [test 2/2]")
        .into_iter()
        .last()
        .map(secs)
        .expect("the last test's line");
    let gave_up = secs(not_sent[0]);
    assert!(
        gave_up - finished < 35.0,
        "gave up {:.1} s after the last test",
        gave_up - finished
    );
    assert!(outcome.status.success(), "QEMU exited with {}", outcome.status);
}
