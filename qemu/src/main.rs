//! `bootbench-qemu`: boot bootbench in QEMU, direct-kernel, from the USB
//! stick image under OVMF or SeaBIOS, or from the network (iPXE on QEMU's
//! restricted user-mode network), with virtual disks; print the result table;
//! save the result documents from the serial console and from the stick.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use bench_core::document::result::ResultDoc;
use bootbench_qemu::cli::{Cli, Common, Firmware, Mode};
use clap::Parser;

use bootbench_qemu::cmdline::{self, Boot, Machine};
use bootbench_qemu::disk;
use bootbench_qemu::net::{Forward, Net};
use bootbench_qemu::run::{self, AccelChoice, Outcome};
use bootbench_qemu::{pcap, stick, tpm};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("bootbench-qemu: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// What a mode boots, before the disks and the machine around it ([`boot_and_report`]).
#[derive(Debug)]
struct Launch {
    boot: Boot,
    /// The stick image attached as a USB disk (its results are copied out afterwards).
    stick: Option<PathBuf>,
    /// A kernel for the KVM probe of `--accel auto`.
    probe_kernel: Option<PathBuf>,
    net: Option<Net>,
    common: Common,
}

fn real_main(cli: Cli) -> Result<ExitCode, String> {
    let launch = match cli.mode {
        Mode::Direct {
            kernel,
            initrd,
            append,
            stick,
            common,
        } => {
            let boot = Boot::Direct {
                kernel: kernel.clone(),
                initrd: Some(initrd),
                append: cmdline::default_append(&append),
            };
            Launch {
                boot,
                stick,
                probe_kernel: Some(kernel),
                net: None,
                common,
            }
        }
        Mode::Usb {
            image,
            firmware,
            ovmf_code,
            ovmf_vars,
            probe_kernel,
            common,
        } => {
            std::fs::create_dir_all(&common.out_dir).map_err(|e| format!("{}: {e}", common.out_dir.display()))?;
            let secure_boot = firmware == Firmware::SecureBoot;
            let (code, vars) = cmdline::ovmf(secure_boot);
            let boot = if firmware == Firmware::Bios {
                Boot::Bios
            } else {
                let vars = ovmf_vars.unwrap_or_else(|| vars.into());
                Boot::Uefi {
                    code: ovmf_code.unwrap_or_else(|| code.into()),
                    vars: run::fresh_vars(&vars, &common.out_dir).map_err(|e| e.to_string())?,
                    secure_boot,
                }
            };
            Launch {
                boot,
                stick: Some(image),
                probe_kernel,
                net: None,
                common,
            }
        }
        Mode::Netboot {
            dir,
            nic,
            http,
            bootfile,
            firmware,
            pcap,
            common,
        } => {
            std::fs::create_dir_all(&common.out_dir).map_err(|e| format!("{}: {e}", common.out_dir.display()))?;
            let boot = match firmware {
                Firmware::Bios => Boot::Bios,
                Firmware::Uefi => Boot::Uefi {
                    code: cmdline::OVMF_CODE.into(),
                    vars: run::fresh_vars(Path::new(cmdline::OVMF_VARS), &common.out_dir).map_err(|e| e.to_string())?,
                    secure_boot: false,
                },
                Firmware::SecureBoot => {
                    return Err(
                        "netboot --firmware: bios or uefi (the NICs' iPXE ROMs are not signed for Secure Boot)".into(),
                    )
                }
            };
            let forwards = http
                .iter()
                .enumerate()
                .map(|(i, h)| Forward::parse(h, i).map_err(|e| format!("--http {h}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            let dir = std::fs::canonicalize(&dir).map_err(|e| format!("--dir {}: {e}", dir.display()))?;
            let net = Net {
                nic,
                tftp: Some(dir.clone()),
                bootfile: Some(bootfile),
                forwards,
                boot: true,
                pcap: Some(pcap.unwrap_or_else(|| common.out_dir.join("net.pcap"))),
            };
            let kernel = dir.join("vmlinuz");
            Launch {
                boot,
                stick: None,
                probe_kernel: kernel.exists().then_some(kernel),
                net: Some(net),
                common,
            }
        }
    };
    boot_and_report(launch)
}

/// Boot `launch`: its disks made in OUT_DIR, the accelerator chosen, the machine's command
/// line printed (`--dry-run`) or run with its `--config` put on the stick first; then its
/// documents saved and reported ([`report`]).
fn boot_and_report(launch: Launch) -> Result<ExitCode, String> {
    let Launch {
        boot,
        stick: stick_image,
        probe_kernel,
        net,
        common,
    } = launch;
    let dir = &common.out_dir;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut specs = if common.default_disks {
        disk::default_disks()
    } else {
        Vec::new()
    };
    specs.extend(common.disks.iter().cloned());
    let disks = run::prepare_disks(&specs, dir).map_err(|e| e.to_string())?;
    let accel = match probe_kernel {
        Some(k) => run::choose_accel(common.accel, &k, dir),
        None if common.accel == AccelChoice::Kvm => cmdline::Accel::Kvm,
        None => cmdline::Accel::Tcg,
    };
    let (console_log, extra_serials) = serial_logs(&common.serial_log, dir);
    let machine = Machine {
        chipset: common.machine,
        accel,
        memory_mib: common.memory,
        cpus: common.cpus,
        serial_log: console_log,
        extra_serials: extra_serials.clone(),
        boot,
        stick: stick_image.clone(),
        stick_readonly: false,
        reboots: false,
        disks,
        net,
        system_serial: common.system_serial.clone(),
        numa: None,
        tpm: common.tpm.then(|| dir.join("tpm").join("swtpm.sock")),
    };
    if let (Some(n), false) = (&machine.net, common.dry_run) {
        run::check_net(n).map_err(|e| e.to_string())?;
        for f in &n.forwards {
            eprintln!("network: {f}");
        }
    }
    if common.dry_run {
        println!(
            "{}",
            cmdline::shell_words(cmdline::QEMU, &cmdline::command_line(&machine))
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(config) = &common.config {
        let image = stick_image
            .as_deref()
            .ok_or("--config puts the config on the stick: give a stick (--stick, or usb --image)")?;
        stick::put_file(image, config, &format!("/{}", bench_core::boot::stick::CONFIG_NAME))
            .map_err(|e| format!("--config {}: putting it on {}: {e}", config.display(), image.display()))?;
    }
    for d in &machine.disks {
        eprintln!(
            "disk {:<16} {:<6} {:>5} MiB  bps {:>10}  iops {:>6}  {}",
            d.spec.serial,
            d.spec.transport.name(),
            d.spec.size >> 20,
            d.spec
                .throttle
                .bps_total
                .map_or("-".into(), |b| format!("{} MiB/s", b >> 20)),
            d.spec.throttle.iops_total.map_or("-".into(), |i| i.to_string()),
            d.file.display()
        );
    }
    eprintln!(
        "booting ({}; serial log {}) ...",
        accel.name(),
        machine.serial_log.display()
    );
    if let Some(p) = machine.net.as_ref().and_then(|n| n.pcap.as_deref()) {
        // A dump of an earlier boot must not stand for this one's.
        let _ = std::fs::remove_file(p);
    }
    // swtpm runs for as long as this boot; its socket is the one the machine names.
    let _tpm = match &machine.tpm {
        Some(socket) => Some(tpm::Swtpm::start(socket.parent().unwrap_or(dir)).map_err(|e| format!("--tpm: {e}"))?),
        None => None,
    };
    // PID 1's progress lines on the terminal as the guest writes them (the
    // whole console is in the serial log).
    let mut progress = |line: &str| eprintln!("guest: {line}");
    let outcome = run::boot_following(&machine, dir, Duration::from_secs(common.timeout), Some(&mut progress))
        .map_err(|e| e.to_string())?;
    if let Some(p) = machine.net.as_ref().and_then(|n| n.pcap.as_deref()) {
        eprintln!("network ({}): {}", p.display(), net_summary(p));
    }
    for (i, log) in extra_serials.iter().enumerate() {
        eprintln!("COM{} (ttyS{}) {}: {}", i + 2, i + 1, log.display(), port_summary(log));
    }
    report(&outcome, &machine.serial_log, dir, stick_image.as_deref())
}

/// The console's log and the further ports' logs from `--serial-log`
/// (repeatable): the first given, else `OUT_DIR/serial.log`, is COM1; the
/// rest are COM2, COM3, ... in order.
fn serial_logs(given: &[PathBuf], dir: &Path) -> (PathBuf, Vec<PathBuf>) {
    match given.split_first() {
        Some((first, rest)) => (first.clone(), rest.to_vec()),
        None => (dir.join("serial.log"), Vec::new()),
    }
}

/// What the guest asked for on the network: its TFTP reads and HTTP requests, from the pcap.
fn net_summary(pcap_file: &Path) -> String {
    let bytes = match std::fs::read(pcap_file) {
        Ok(b) => b,
        Err(e) => return format!("not readable: {e}"),
    };
    match pcap::frames(&bytes) {
        Ok(frames) => {
            let list = |v: Vec<String>| if v.is_empty() { "none".to_owned() } else { v.join(", ") };
            format!(
                "{} frames; TFTP reads: {}; HTTP requests: {}",
                frames.len(),
                list(pcap::tftp_reads(&frames)),
                list(pcap::http_requests(&frames))
            )
        }
        Err(e) => e,
    }
}

/// What a further port's log holds: its frames, good and damaged.
fn port_summary(log: &Path) -> String {
    match std::fs::read(log) {
        Ok(bytes) => {
            let frames = bench_core::document::frame::decode(&String::from_utf8_lossy(&bytes));
            let good = frames.iter().filter(|f| f.is_ok()).count();
            format!(
                "{} bytes, {good} document(s), {} damaged or refused",
                bytes.len(),
                frames.len() - good
            )
        }
        Err(e) => format!("not readable: {e}"),
    }
}

/// Print the tables, save the documents ([`run::save_frames`]: as
/// `bootbench-report extract` does), copy the stick's results; the exit
/// code says whether QEMU exited 0 with at least one good document, no
/// damaged one, none refused by the boot-nonce rule (`bench_core::document::frame`)
/// or for its name, and every one saved. The lines about frames name the
/// console log and line, and are escaped (`bench_core::vocab::console::safe`).
fn report(outcome: &Outcome, serial_log: &Path, dir: &Path, stick_image: Option<&Path>) -> Result<ExitCode, String> {
    let mut good: usize = 0;
    let mut damaged: usize = 0;
    for f in &outcome.frames {
        match f {
            Ok(frame) => {
                good += 1;
                println!("== {} ({} bytes)", frame.name, frame.bytes.len());
                match serde_json::from_slice::<ResultDoc>(&frame.bytes) {
                    Ok(doc) => println!("{}", bench_core::verdict::table::render(&doc)),
                    Err(e) => println!("(not a result document this version reads: {e})"),
                }
            }
            // Said below, with its line, by what saving the documents found.
            Err(_) => damaged += 1,
        }
    }
    let serial_results = dir.join("serial-results");
    let saved = run::save_frames(outcome, &serial_log.display().to_string(), &serial_results)?;
    for line in saved
        .notes
        .iter()
        .chain(&saved.damaged)
        .chain(&saved.refused)
        .chain(&saved.failed)
    {
        eprintln!("{}", bench_core::vocab::console::safe(line));
    }
    let mut copied = Vec::new();
    if let Some(image) = stick_image {
        match stick::copy_results(image, &dir.join("results")) {
            Ok(names) => copied = names,
            Err(e) => eprintln!("no results copied from the stick: {e}"),
        }
    }
    let unsaved = good.saturating_sub(saved.written.len());
    if let Some(note) = outcome.reboot_hang_note() {
        eprintln!("{note}");
    }
    eprintln!(
        "QEMU {} after {:.1} s; {good} document(s) on serial ({damaged} damaged or refused), {} saved to {}{}; {} file(s) from the stick in {}",
        outcome.status,
        outcome.elapsed.as_secs_f64(),
        saved.written.len(),
        serial_results.display(),
        if unsaved > 0 {
            format!(" ({unsaved} not saved, said above)")
        } else {
            String::new()
        },
        copied.len(),
        dir.join("results").display()
    );
    Ok(
        if outcome.status.success() && good > 0 && damaged == 0 && unsaved == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bootbench_qemu::net::Nic;

    /// A direct boot's command line with `args` after the required ones.
    fn direct_argv<'a>(args: &[&'a str]) -> Vec<&'a str> {
        let mut argv = vec![
            "bootbench-qemu",
            "direct",
            "--kernel",
            "k",
            "--initrd",
            "i",
            "--out-dir",
            "/o",
        ];
        argv.extend_from_slice(args);
        argv
    }

    fn common(args: &[&str]) -> Common {
        match Cli::try_parse_from(direct_argv(args)).unwrap().mode {
            Mode::Direct { common, .. } => common,
            Mode::Usb { .. } | Mode::Netboot { .. } => unreachable!("a direct boot was parsed"),
        }
    }

    #[test]
    fn the_machine_type_is_pc_unless_q35_is_asked() {
        assert_eq!(common(&[]).machine, cmdline::Chipset::Pc);
        assert_eq!(common(&["--machine", "q35"]).machine, cmdline::Chipset::Q35);
        let err = Cli::try_parse_from(direct_argv(&["--machine", "isa"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("'isa'") && err.contains("--machine"), "{err}");
    }

    /// `--serial-log` repeats: the first is the console's (COM1), each
    /// further one the next port's, in order, and each reaches QEMU's
    /// command line as a `-serial file:`.

    #[test]
    fn serial_log_repeats_one_port_each() {
        let dir = Path::new("/o");
        let none = common(&[]);
        assert_eq!(serial_logs(&none.serial_log, dir), (dir.join("serial.log"), vec![]));
        let three = common(&[
            "--serial-log",
            "/l/com1",
            "--serial-log",
            "/l/com2",
            "--serial-log",
            "/l/com3",
        ]);
        let (console, extra) = serial_logs(&three.serial_log, dir);
        assert_eq!(console, PathBuf::from("/l/com1"));
        assert_eq!(extra, [PathBuf::from("/l/com2"), PathBuf::from("/l/com3")]);
        let machine = Machine {
            chipset: cmdline::Chipset::Pc,
            accel: cmdline::Accel::Tcg,
            memory_mib: 512,
            cpus: 1,
            serial_log: console,
            extra_serials: extra,
            system_serial: None,
            boot: Boot::Direct {
                kernel: "k".into(),
                initrd: None,
                append: String::new(),
            },
            stick: None,
            stick_readonly: false,
            reboots: false,
            disks: Vec::new(),
            net: None,
            numa: None,
            tpm: None,
        };
        let args = cmdline::command_line(&machine);
        let serials: Vec<&str> = args
            .windows(2)
            .filter(|w| w[0] == "-serial")
            .map(|w| w[1].as_str())
            .collect();
        assert_eq!(serials, ["file:/l/com1", "file:/l/com2", "file:/l/com3"]);
    }

    #[test]
    fn netboot_parses_its_options() {
        let cli = Cli::try_parse_from([
            "bootbench-qemu",
            "netboot",
            "--dir",
            "/n",
            "--nic",
            "e1000e",
            "--http",
            "8080",
            "--http",
            "10.0.2.50:443=8443",
            "--out-dir",
            "/o",
        ])
        .unwrap();
        let Mode::Netboot {
            nic,
            http,
            bootfile,
            firmware,
            ..
        } = cli.mode
        else {
            panic!("not a netboot");
        };
        assert_eq!(
            (nic, bootfile.as_str(), firmware),
            (Nic::E1000e, "boot.ipxe", Firmware::Bios)
        );
        assert_eq!(http, ["8080", "10.0.2.50:443=8443"]);
        assert!(Cli::try_parse_from([
            "bootbench-qemu",
            "netboot",
            "--dir",
            "/n",
            "--nic",
            "rtl8139",
            "--out-dir",
            "/o"
        ])
        .is_err());
    }

    #[test]
    fn a_ports_summary_counts_its_frames() {
        let dir = std::env::temp_dir().join(format!("bbq-port-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("com2.log");
        let nonce = bench_core::document::frame::Nonce::parse(&"ab".repeat(16)).unwrap();
        let text = format!(
            "{}\n{}",
            bench_core::document::frame::announce(nonce),
            bench_core::document::frame::encode("r.json", b"{}", nonce)
        );
        std::fs::write(&log, &text).unwrap();
        assert_eq!(
            port_summary(&log),
            format!("{} bytes, 1 document(s), 0 damaged or refused", text.len())
        );
        assert!(port_summary(&dir.join("absent")).starts_with("not readable: "));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
