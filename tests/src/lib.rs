//! Helpers for bootbench's end-to-end tests (`tests/e2e.rs`): find the built
//! artifacts (out/vmlinuz, out/vmlinux, out/initramfs.img, out/bootbench.img), make
//! scratch disks and stick copies, boot them in QEMU one at a time (from the
//! stick, or from the network: [`netboot`]), read the result documents back,
//! and run a results collector on the host's loopback ([`Collector`]).
//!
//! The artifacts come from `make image`. When they are missing, a test is
//! skipped with a message, unless `CI` is set: then it fails.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use bootbench_image::{gpt, netboot as image_netboot};
use bootbench_qemu::cmdline::{self, Accel, Boot, Chipset, Machine};
use bootbench_qemu::disk::DiskSpec;
use bootbench_qemu::net::{Forward, Net, Nic};
use bootbench_qemu::run::{self, Outcome};
use bootbench_qemu::{pcap, stick};
use serde_json::Value;

/// Longest a boot may take before QEMU is killed and the test fails.
pub const BOOT_TIMEOUT: Duration = Duration::from_secs(600);

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_owned()
}

/// What `make image` built.
#[derive(Clone, Debug)]
pub struct Artifacts {
    pub vmlinuz: PathBuf,
    /// The kernel inside `vmlinuz`, decompressed (qemu/vmlinux.sh): what a
    /// direct boot enters, by its PVH entry, 2.4 s sooner under TCG than
    /// through the bzImage's setup and decompressor.
    pub vmlinux: PathBuf,
    pub initramfs: PathBuf,
    pub stick: PathBuf,
}

/// The artifacts in `$BOOTBENCH_OUT` (default `<workspace>/out`). `None`,
/// after printing why, when one is missing and `CI` is not set; a panic in CI.
pub fn artifacts(test: &str) -> Option<Artifacts> {
    let out = std::env::var_os("BOOTBENCH_OUT").map_or_else(|| workspace().join("out"), PathBuf::from);
    let a = Artifacts {
        vmlinuz: out.join("vmlinuz"),
        vmlinux: out.join("vmlinux"),
        initramfs: out.join("initramfs.img"),
        stick: out.join("bootbench.img"),
    };
    let missing: Vec<String> = [&a.vmlinuz, &a.vmlinux, &a.initramfs, &a.stick]
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return Some(a);
    }
    let msg = format!("{test}: missing {} (run `make image` first)", missing.join(", "));
    if std::env::var_os("CI").is_some() {
        panic!("{msg}; CI is set, so this is a failure");
    }
    // Straight to stderr: libtest captures eprintln! of passing tests, and a skip must be seen.
    let _ = writeln!(io::stderr(), "SKIPPED {msg}");
    None
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join("bootbench-e2e").join(test);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// A scratch directory of this process (another `cargo test` running the
/// same test must not remove it under a boot), removed when the test passes
/// and kept for a look when it fails.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh directory for `test`.
    pub fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir()
            .join("bootbench-e2e")
            .join(format!("{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

/// A test's status (`ok`, `error`, `skipped`, ...).
pub fn status_of(test: &Value) -> &str {
    test["status"]["state"].as_str().unwrap_or("?")
}

/// The array or layer target named `name` in the config.
pub fn by_stack<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["targets"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["stack"]["name"] == name))
        .unwrap_or_else(|| panic!("no array or layer named {name} in {}", doc["targets"]))
}

/// The stack target whose `stack.options[key]` is `value` (an existing
/// array's `uuid`, a volume's `lv`).
pub fn by_stack_option<'a>(doc: &'a Value, key: &str, value: &str) -> &'a Value {
    doc["targets"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["stack"]["options"][key] == value))
        .unwrap_or_else(|| panic!("no stack with {key} {value} in {}", doc["targets"]))
}

/// A target's path.
pub fn path_of(target: &Value) -> &str {
    target["path"].as_str().expect("a target has a path")
}

/// A copy of the stick image in `dir`, with `config` as its /bootbench.json when given.
pub fn stick_copy(a: &Artifacts, dir: &Path, config: Option<&Value>) -> PathBuf {
    let img = dir.join("stick.img");
    fs::copy(&a.stick, &img).expect("copy the stick image");
    if let Some(cfg) = config {
        let local = dir.join("bootbench.json");
        fs::write(&local, serde_json::to_vec_pretty(cfg).expect("config serializes")).expect("write config");
        stick::put_file(&img, &local, "/bootbench.json").expect("put the config on the stick");
    }
    img
}

/// Parse disk specs (test-written, so a bad one is a bug in the test).
pub fn disks(specs: &[&str]) -> Vec<DiskSpec> {
    specs
        .iter()
        .map(|s| s.parse().unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect()
}

/// The accelerator for tests: `BOOTBENCH_ACCEL` (tcg, kvm, auto), default tcg.
fn accel(kernel: &Path, dir: &Path) -> Accel {
    let choice = std::env::var("BOOTBENCH_ACCEL").unwrap_or_else(|_| "tcg".into());
    run::choose_accel(choice.parse().expect("BOOTBENCH_ACCEL: tcg, kvm or auto"), kernel, dir)
}

/// One boot at a time: parallel TCG guests on two cores would distort the figures.
fn boot_lock() -> MutexGuard<'static, ()> {
    static LOCK: OnceLock<Mutex<()>> = OnceLock::new();
    LOCK.get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How to boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// -kernel/-initrd with the stick attached as a USB disk.
    Direct,
    /// The stick under OVMF.
    Uefi,
    /// The stick under OVMF's Secure Boot build, Microsoft's keys enrolled
    /// and Secure Boot on (q35 with SMM).
    SecureBoot,
    /// The stick under SeaBIOS (legacy BIOS, syslinux).
    Bios,
}

/// Boot with `disks` (backing files under `dir/disks`, created sparse unless
/// present) and the stick copy `stick`; panics on a timeout or a failure to start.
pub fn boot(a: &Artifacts, dir: &Path, via: Via, stick_img: &Path, specs: &[DiskSpec], append: &str) -> Outcome {
    boot_with_serials(a, dir, via, stick_img, specs, append, &[])
}

/// [`boot`] with more serial ports (COM2, ...), each logged to its file
/// (removed first).
pub fn boot_with_serials(
    a: &Artifacts,
    dir: &Path,
    via: Via,
    stick_img: &Path,
    specs: &[DiskSpec],
    append: &str,
    extra_serials: &[PathBuf],
) -> Outcome {
    let machine = machine(a, dir, via, stick_img, specs, append, extra_serials);
    boot_one(&machine, dir)
}

/// [`boot`] (direct) on a q35 machine of `cpus` CPUs and `nodes` NUMA
/// nodes, the CPUs and memory split evenly (`qemu/src/numa.rs`); a disk
/// spec's `node=` puts an NVMe drive on a node.
pub fn boot_numa(a: &Artifacts, dir: &Path, stick_img: &Path, specs: &[DiskSpec], cpus: u32, nodes: u32) -> Outcome {
    let mut m = machine(a, dir, Via::Direct, stick_img, specs, "", &[]);
    m.chipset = Chipset::Q35;
    m.cpus = cpus;
    m.numa = Some(bootbench_qemu::numa::Numa { nodes });
    boot_one(&m, dir)
}

/// [`boot`] from the stick under `via`'s firmware with a TPM 2.0 (CRB)
/// played by swtpm, its state in `dir/tpm` (kept: a second boot in `dir`
/// finds the same TPM, with the same endorsement seed), and a NIC on QEMU's
/// restricted user network whose guest `10.0.2.100:80`, `.101:80`, ...
/// reach the host's `127.0.0.1:` `http_ports` (none: no NIC); panics when
/// swtpm does not start.
pub fn boot_tpm(
    a: &Artifacts,
    dir: &Path,
    via: Via,
    stick_img: &Path,
    specs: &[DiskSpec],
    http_ports: &[u16],
) -> Outcome {
    let tpm = bootbench_qemu::tpm::Swtpm::start(&dir.join("tpm")).expect("swtpm (Debian's swtpm package, .ci/deps)");
    let mut m = machine(a, dir, via, stick_img, specs, "", &[]);
    m.tpm = Some(tpm.socket().to_owned());
    if !http_ports.is_empty() {
        let net = Net {
            nic: Nic::Virtio,
            tftp: None,
            bootfile: None,
            forwards: forwards(http_ports),
            boot: false,
            pcap: None,
        };
        run::check_net(&net).unwrap_or_else(|e| panic!("network: {e}"));
        m.net = Some(net);
    }
    boot_one(&m, dir)
}

/// The machine of [`boot_with_serials`]: pc (q35 for a `link=` disk), 2
/// CPUs, 1 GiB; its extra serial logs removed.
fn machine(
    a: &Artifacts,
    dir: &Path,
    via: Via,
    stick_img: &Path,
    specs: &[DiskSpec],
    append: &str,
    extra_serials: &[PathBuf],
) -> Machine {
    for s in extra_serials {
        let _ = fs::remove_file(s);
    }
    let attached = run::prepare_disks(specs, dir).expect("prepare disks");
    let boot = match via {
        Via::Direct => Boot::Direct {
            kernel: a.vmlinux.clone(),
            initrd: Some(a.initramfs.clone()),
            append: cmdline::default_append(append),
        },
        Via::Uefi | Via::SecureBoot => {
            let secure_boot = via == Via::SecureBoot;
            let (code, vars) = cmdline::ovmf(secure_boot);
            Boot::Uefi {
                code: code.into(),
                vars: run::fresh_vars(Path::new(vars), dir).expect("OVMF vars"),
                secure_boot,
            }
        }
        Via::Bios => Boot::Bios,
    };
    // A disk behind a limited PCIe root port (`link=`) needs PCI Express.
    let chipset = if specs.iter().any(|s| s.link.is_some()) {
        Chipset::Q35
    } else {
        Chipset::Pc
    };
    Machine {
        chipset,
        accel: accel(&a.vmlinuz, dir),
        memory_mib: 1024,
        cpus: 2,
        serial_log: dir.join("serial.log"),
        extra_serials: extra_serials.to_vec(),
        system_serial: None,
        boot,
        stick: Some(stick_img.to_owned()),
        stick_readonly: false,
        reboots: false,
        disks: attached,
        net: None,
        numa: None,
        tpm: None,
    }
}

/// What PID 1 logs once a run's document is out (then what it does next).
const RUN_FINISHED: &str = "run finished: ";

/// [`boot`] directly, the machine resetting when the guest reboots, as a
/// server does, and the disks keeping what they hold, for `runs` runs: each
/// run reboots (`bootbench.on_finish=reboot`) and the next runs the same
/// plan again (`bootbench.force=1` turns the run-once check off). QEMU is
/// killed once the last run's document is out; panics on a timeout.
pub fn boot_runs(
    a: &Artifacts,
    dir: &Path,
    stick_img: &Path,
    specs: &[DiskSpec],
    append: &str,
    runs: usize,
) -> Outcome {
    let append = format!("{append} bootbench.on_finish=reboot bootbench.force=1");
    let mut m = machine(a, dir, Via::Direct, stick_img, specs, &append, &[]);
    m.reboots = true;
    let _one_at_a_time = boot_lock();
    let timeout = BOOT_TIMEOUT * u32::try_from(runs).expect("a few runs");
    let done = |serial: &str| serial.matches(RUN_FINISHED).count() >= runs;
    let outcome = again_if_silent(dir, || run::boot_until(&m, dir, timeout, &done))
        .unwrap_or_else(|e| panic!("boot in {}: {e}", dir.display()));
    assert!(
        done(&outcome.serial),
        "QEMU ended ({}) before {runs} runs",
        outcome.status
    );
    eprintln!(
        "{}: {runs} runs in {:.1} s, {} frame(s)",
        dir.display(),
        outcome.elapsed.as_secs_f64(),
        outcome.frames.len()
    );
    outcome
}

/// `boot()`, and once more if its guest hung before it wrote a byte on its
/// console ([`run::RunError::Silent`]): a hang of QEMU's or the kernel's
/// before PID 1 ran, so before anything touched a disk or the stick (seen
/// once in a CI run under TCG). Said on stderr; a second silent boot is the
/// error.
fn again_if_silent(dir: &Path, boot: impl Fn() -> Result<Outcome, run::RunError>) -> Result<Outcome, run::RunError> {
    match boot() {
        Err(e @ run::RunError::Silent { .. }) => {
            eprintln!("{}: {e}; booting it once more", dir.display());
            boot()
        }
        other => other,
    }
}

/// Boots `machine` when no other boot runs; panics on a timeout or a failure to start.
fn boot_one(machine: &Machine, dir: &Path) -> Outcome {
    let _one_at_a_time = boot_lock();
    let outcome = again_if_silent(dir, || run::boot(machine, dir, BOOT_TIMEOUT))
        .unwrap_or_else(|e| panic!("boot in {}: {e}", dir.display()));
    if let Some(note) = outcome.reboot_hang_note() {
        eprintln!("{}: {note}", dir.display());
    }
    eprintln!(
        "{}: QEMU {} after {:.1} s, {} frame(s)",
        dir.display(),
        outcome.status,
        outcome.elapsed.as_secs_f64(),
        outcome.frames.len()
    );
    outcome
}

/// Where the guest of a network boot reaches the first of [`netboot`]'s `http_ports` (a
/// [`Collector`]): `http://10.0.2.100` (the next ports: .101, ...).
pub const GUEST_HTTP: &str = "http://10.0.2.100";

/// A network boot directory for the artifacts in `dir/net`: what `bootbench-image netboot`
/// writes (the kernel, the initramfs, boot.ipxe and the other scripts) with `options`; no boot
/// loader binaries (QEMU's NIC ROM is iPXE).
pub fn netboot_dir(a: &Artifacts, dir: &Path, options: &image_netboot::Options) -> PathBuf {
    let net = dir.join("net");
    let vmlinuz = fs::read(&a.vmlinuz).expect("read the kernel");
    let initrd = fs::read(&a.initramfs).expect("read the initramfs");
    let inputs = image_netboot::Inputs {
        vmlinuz: &vmlinuz,
        initrd: &initrd,
        options,
        loaders: Vec::new(),
        dir: &net.display().to_string(),
    };
    let files = image_netboot::files(&inputs).expect("the netboot files");
    image_netboot::write(&net, &files).expect("write the netboot directory");
    net
}

/// What the guest of a network boot asked for, from QEMU's dump of its network.
#[derive(Debug, Default)]
pub struct NetSeen {
    /// TFTP read requests, file names in order.
    pub tftp: Vec<String>,
    /// HTTP request lines (`GET /path`) in order.
    pub http: Vec<String>,
}

/// The guest's `10.0.2.100:80`, `.101:80`, ... to the host's `127.0.0.1:` `http_ports`.
fn forwards(http_ports: &[u16]) -> Vec<Forward> {
    http_ports
        .iter()
        .enumerate()
        .map(|(i, p)| Forward::parse(&p.to_string(), i).expect("a port"))
        .collect()
}

/// Boots from the network: SeaBIOS, the `nic`'s iPXE ROM, QEMU's user-mode network with
/// `restrict=on`, DHCP handing out boot.ipxe and TFTP serving `net_dir` (see [`netboot_dir`]);
/// the guest's 10.0.2.100:80, .101:80, ... reach the host's `127.0.0.1:` `http_ports` (a
/// [`Collector`]); disks `specs`; every frame into `dir/net.pcap`. One boot at a time; panics on
/// a timeout or a failure to start. `system_serial` is the machine's DMI serial (what names
/// its results).
pub fn netboot(
    a: &Artifacts,
    dir: &Path,
    net_dir: &Path,
    nic: Nic,
    http_ports: &[u16],
    specs: &[DiskSpec],
    system_serial: Option<&str>,
) -> (Outcome, NetSeen) {
    let pcap_file = dir.join("net.pcap");
    let _ = fs::remove_file(&pcap_file);
    let forwards = forwards(http_ports);
    let net = Net {
        nic,
        tftp: Some(net_dir.to_owned()),
        bootfile: Some(image_netboot::BOOT_IPXE.to_owned()),
        forwards,
        boot: true,
        pcap: Some(pcap_file.clone()),
    };
    run::check_net(&net).unwrap_or_else(|e| panic!("network boot: {e}"));
    let machine = Machine {
        chipset: Chipset::Pc,
        accel: accel(&a.vmlinuz, dir),
        memory_mib: 1024,
        cpus: 2,
        serial_log: dir.join("serial.log"),
        extra_serials: Vec::new(),
        system_serial: system_serial.map(str::to_owned),
        boot: Boot::Bios,
        stick: None,
        stick_readonly: false,
        reboots: false,
        disks: run::prepare_disks(specs, dir).expect("prepare disks"),
        net: Some(net),
        numa: None,
        tpm: None,
    };
    let outcome = boot_one(&machine, dir);
    let bytes = fs::read(&pcap_file).unwrap_or_default();
    let seen = match pcap::frames(&bytes) {
        Ok(frames) => NetSeen {
            tftp: pcap::tftp_reads(&frames),
            http: pcap::http_requests(&frames),
        },
        Err(e) => panic!("{}: {e}", pcap_file.display()),
    };
    eprintln!("{}: TFTP {:?}, HTTP {:?}", dir.display(), seen.tftp, seen.http);
    (outcome, seen)
}

/// Debian's nginx.
pub const NGINX: &str = "/usr/sbin/nginx";

/// A results collector for network-boot tests: Debian's nginx (not a server written for the
/// tests), started as a child process on `127.0.0.1:<free port>` only, serving `root` with GET
/// (the config, and the run-once check of a result already there) and WebDAV PUT
/// (`dav_methods PUT; create_full_put_path on;`: a result's directories are made as needed).
/// One process (`master_process off`), killed and reaped on drop.
#[derive(Debug)]
pub struct Collector {
    child: Child,
    port: u16,
    root: PathBuf,
    /// nginx's config, logs and temporary files.
    dir: PathBuf,
}

/// A free TCP port on the host's loopback, as the kernel picks one (free when this returns;
/// nothing holds it).
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("a free port on 127.0.0.1")
        .port()
}

/// A port on the host's loopback that nothing listens on: a collector that is down (the
/// guest's connection is closed at once: socat finds nothing to connect to).
pub fn dead_port() -> u16 {
    free_port()
}

/// A collector that hangs: the kernel accepts connections into the listener's backlog, and no
/// one ever reads or answers. Closed on drop.
#[derive(Debug)]
pub struct Silent(TcpListener);

impl Silent {
    /// Listens on a free port of 127.0.0.1.
    pub fn start() -> Silent {
        Silent(TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("listen on 127.0.0.1"))
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.0.local_addr().expect("a bound listener").port()
    }
}

/// Waits (10 s at most) until `child`, nginx, accepts connections on 127.0.0.1:`port`; else
/// why not (it exited, with what it said in `dir/nginx.out`, or it did not listen in time).
fn listening(child: &mut Child, port: u16, dir: &Path) -> Result<(), String> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if let Ok(Some(status)) = child.try_wait() {
            let said = fs::read_to_string(dir.join("nginx.out")).unwrap_or_default();
            return Err(format!("nginx exited with {status}: {}", said.trim()));
        }
        if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("nginx did not listen on 127.0.0.1:{port} within 10 s"))
}

/// nginx's config for a [`Collector`].
fn nginx_conf(dir: &Path, root: &Path, port: u16) -> String {
    let d = dir.display();
    format!(
        "daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 64; }}
http {{
    log_format bootbench '$request_method $request_uri $status';
    access_log {d}/access.log bootbench;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    types {{ application/json json; text/plain txt; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {};
        client_max_body_size 64m;
        dav_methods PUT;
        create_full_put_path on;
        dav_access user:rw group:r all:r;
    }}
}}
",
        root.display()
    )
}

impl Collector {
    /// Starts nginx serving `root` (created), its own files in `dir` (created). `None`, after
    /// printing why, when nginx is not installed and `CI` is not set; a panic in CI, and when it
    /// does not start.
    pub fn start(dir: &Path, root: &Path) -> Option<Collector> {
        if !Path::new(NGINX).exists() {
            let msg = format!("{NGINX} not installed (Debian's nginx; make deps)");
            assert!(
                std::env::var_os("CI").is_none(),
                "{msg}; CI is set, so this is a failure"
            );
            let _ = writeln!(io::stderr(), "SKIPPED {msg}");
            return None;
        }
        fs::create_dir_all(root).expect("the collector's root");
        fs::create_dir_all(dir).expect("the collector's directory");
        let root = fs::canonicalize(root).expect("the collector's root");
        let dir = fs::canonicalize(dir).expect("the collector's directory");
        // The port is free when picked, and another process may take it before nginx does:
        // then nginx exits, and another port is tried.
        let mut why = String::new();
        for _ in 0..5 {
            let port = free_port();
            let conf = dir.join("nginx.conf");
            fs::write(&conf, nginx_conf(&dir, &root, port)).expect("write nginx.conf");
            let log = File::create(dir.join("nginx.out")).expect("nginx.out");
            let mut child = Command::new(NGINX)
                .arg("-p")
                .arg(&dir)
                .arg("-e")
                .arg(dir.join("error.log"))
                .arg("-c")
                .arg(&conf)
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("nginx.out"))
                .stderr(log)
                .spawn()
                .expect("spawn nginx");
            match listening(&mut child, port, &dir) {
                Ok(()) => return Some(Collector { child, port, root, dir }),
                Err(e) => {
                    // Reaped if it exited; killed and reaped if it did not listen in time.
                    let _ = child.kill();
                    let _ = child.wait();
                    why = e;
                }
            }
        }
        panic!("the collector did not start: {why}");
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory it serves and PUTs into.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The requests it answered, in order: `METHOD URI STATUS`.
    pub fn requests(&self) -> Vec<String> {
        fs::read_to_string(self.dir.join("access.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's Prometheus Pushgateway (`prometheus-pushgateway`).
pub const PUSHGATEWAY: &str = "/usr/bin/prometheus-pushgateway";

/// A Prometheus Pushgateway on a free port of 127.0.0.1, its groups saved in a file of its own
/// (Debian's build saves to one shared file by default, which would hand one test's groups to
/// the next); killed on drop.
#[derive(Debug)]
pub struct Pushgateway {
    child: Child,
    port: u16,
}

impl Pushgateway {
    /// Starts it, its output in `dir/pushgateway.out`. `None`, after printing why, when it is
    /// not installed and `CI` is not set; a panic in CI, and when it does not start.
    pub fn start(dir: &Path) -> Option<Pushgateway> {
        if !Path::new(PUSHGATEWAY).exists() {
            let msg = format!("{PUSHGATEWAY} not installed (Debian's prometheus-pushgateway; make deps)");
            assert!(
                std::env::var_os("CI").is_none(),
                "{msg}; CI is set, so this is a failure"
            );
            let _ = writeln!(io::stderr(), "SKIPPED {msg}");
            return None;
        }
        fs::create_dir_all(dir).expect("the pushgateway's directory");
        let _ = fs::remove_file(dir.join("pushgateway.data"));
        let mut why = String::new();
        for _ in 0..5 {
            let port = free_port();
            let log = File::create(dir.join("pushgateway.out")).expect("pushgateway.out");
            let mut child = Command::new(PUSHGATEWAY)
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg(format!("--persistence.file={}", dir.join("pushgateway.data").display()))
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("pushgateway.out"))
                .stderr(log)
                .spawn()
                .expect("spawn the pushgateway");
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(status)) = child.try_wait() {
                    why = format!(
                        "it exited with {status}: {}",
                        fs::read_to_string(dir.join("pushgateway.out"))
                            .unwrap_or_default()
                            .trim()
                    );
                    break;
                }
                if http(port, "GET", "/-/ready", b"").is_ok_and(|(s, _)| s == 200) {
                    return Some(Pushgateway { child, port });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
            if why.is_empty() {
                why = format!("it did not answer on 127.0.0.1:{port} within 10 s");
            }
        }
        panic!("the pushgateway did not start: {why}");
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// What it exposes now (`GET /metrics`): the series pushed to it, with their
    /// `job` and `instance` labels, and its own.
    pub fn metrics(&self) -> String {
        let (status, body) = http(self.port, "GET", "/metrics", b"").expect("GET /metrics");
        assert_eq!(status, 200, "GET /metrics");
        String::from_utf8(body).expect("UTF-8")
    }
}

impl Drop for Pushgateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request to `127.0.0.1:port` (`Connection: close`): the status code and the body.
pub fn http(port: u16, method: &str, path: &str, body: &[u8]) -> io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(body)?;
    let mut reply = Vec::new();
    s.read_to_end(&mut reply)?;
    let head_end = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no end of the headers"))?;
    let status = std::str::from_utf8(&reply[..head_end])
        .ok()
        .and_then(|h| h.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no status line"))?;
    Ok((status, reply[head_end + 4..].to_vec()))
}

/// The one result document of a boot that powered off cleanly; panics with
/// the serial log's tail otherwise.
pub fn the_document(outcome: &Outcome) -> (String, Vec<u8>, Value) {
    let tail = || {
        let lines: Vec<&str> = outcome.serial.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    };
    assert!(
        outcome.status.success(),
        "QEMU exited with {}; serial tail:\n{}",
        outcome.status,
        tail()
    );
    let damaged: Vec<String> = outcome
        .frames
        .iter()
        .filter_map(|f| f.as_ref().err())
        .map(|e| e.to_string())
        .collect();
    assert!(damaged.is_empty(), "damaged frames: {damaged:?}");
    let docs: Vec<_> = outcome.documents().collect();
    assert_eq!(docs.len(), 1, "one result document on serial; serial tail:\n{}", tail());
    let json: Value = serde_json::from_slice(&docs[0].bytes).expect("the document is JSON");
    (docs[0].name.clone(), docs[0].bytes.clone(), json)
}

/// The result documents of a boot of several runs ([`boot_runs`]), in
/// order, one per run; panics on a damaged frame.
pub fn the_documents(outcome: &Outcome) -> Vec<Value> {
    let docs: Vec<Value> = outcome
        .frames
        .iter()
        .map(|f| f.as_ref().unwrap_or_else(|e| panic!("damaged frame: {e}")))
        .filter(|f| f.name.ends_with(".json"))
        .map(|f| serde_json::from_slice(&f.bytes).expect("the document is JSON"))
        .collect();
    assert_eq!(
        docs.len(),
        outcome.serial.matches(RUN_FINISHED).count(),
        "one result document per run"
    );
    docs
}

/// Validate against schema/bootbench.result-1.schema.json.
pub fn assert_schema_valid(doc: &Value) {
    let path = workspace().join("schema/bootbench.result-1.schema.json");
    let schema: Value = serde_json::from_slice(&fs::read(&path).expect("result schema")).expect("schema is JSON");
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "result not schema-valid: {errors:#?}");
}

/// The target whose serial is `serial`.
pub fn target_by_serial<'a>(doc: &'a Value, serial: &str) -> &'a Value {
    doc["targets"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["serial"] == serial))
        .unwrap_or_else(|| panic!("no target with serial {serial} in {}", doc["targets"]))
}

/// The tests run on the target with this serial.
pub fn tests_on<'a>(doc: &'a Value, serial: &str) -> Vec<&'a Value> {
    tests_at(doc, path_of(target_by_serial(doc, serial)))
}

/// The tests on the target at `path`.
pub fn tests_at<'a>(doc: &'a Value, path: &str) -> Vec<&'a Value> {
    doc["tests"]
        .as_array()
        .map(|t| t.iter().filter(|t| t["target"] == path).collect())
        .unwrap_or_default()
}

/// Give the first GPT partition of the disk image `img` (512-byte sectors)
/// the unique GUID `guid` (text), in the primary and the backup table with
/// their CRCs: a stick of another build, as PID 1 tells them apart.
pub fn set_partition_guid(img: &Path, guid: &str) -> io::Result<()> {
    let mut f = fs::OpenOptions::new().read(true).write(true).open(img)?;
    let primary = gpt::read(&mut f, 1)?;
    let backup = gpt::read(&mut f, primary.header.alt_lba)?;
    for mut table in [primary, backup] {
        assert!(table.set_unique_guid(0, gpt::guid(guid)), "the table has a first entry");
        gpt::write_table(&table, &mut f)?;
    }
    f.sync_all()
}

/// Fill `path` with `size` bytes of deterministic pseudo-random data: no
/// signature, but data, which the safety check refuses to write unless
/// `allow_overwrite_signatures` (so it suits the disks a test expects
/// untouched; a disk a test writes starts all zeros).
pub fn fill_random(path: &Path, size: u64, seed: u64) -> io::Result<()> {
    let mut f = File::create(path)?;
    // Odd and distinct for distinct seeds (`seed | 1` gave seeds 2k and 2k+1 the same data).
    let mut x = (seed << 1) | 1;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        for chunk in buf.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        let n = usize::try_from(left.min(1 << 20)).expect("at most 1 MiB");
        f.write_all(&buf[..n])?;
        left -= n as u64;
    }
    f.sync_all()
}

/// The backing files of `specs` in `dir/disks`, made now, and their
/// checksums: disk `i` holds pseudo-random data of seed `seed(i)` (a
/// bystander whose every byte must stay), or, for `None`, zeros (a disk
/// named in "destructive": only a blank disk is granted), sparse.
pub fn disks_with_contents(
    specs: &[DiskSpec],
    dir: &Path,
    seed: impl Fn(usize) -> Option<u64>,
) -> (Vec<PathBuf>, Vec<(u64, u64)>) {
    fs::create_dir_all(dir.join("disks")).expect("disks directory");
    let files: Vec<PathBuf> = specs.iter().map(|d| d.backing_file(&dir.join("disks"))).collect();
    for (i, (d, f)) in specs.iter().zip(&files).enumerate() {
        match seed(i) {
            Some(s) => fill_random(f, d.size, s).expect("fill a disk"),
            None => File::create(f).and_then(|h| h.set_len(d.size)).expect("a blank disk"),
        }
    }
    let sums = files.iter().map(|f| checksum(f).expect("checksum")).collect();
    (files, sums)
}

/// FNV-1a (64-bit) of a whole file with its length: enough to see any change.
pub fn checksum(path: &Path) -> io::Result<(u64, u64)> {
    let mut f = File::open(path)?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut len = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok((h, len));
        }
        for &b in &buf[..n] {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        len += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_fill_is_deterministic_and_checksums_see_one_byte() {
        let dir = std::env::temp_dir().join(format!("bbe2e-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        fill_random(&a, 3 << 20, 7).unwrap();
        fill_random(&b, 3 << 20, 7).unwrap();
        assert_eq!(checksum(&a).unwrap(), checksum(&b).unwrap());
        assert_eq!(checksum(&a).unwrap().1, 3 << 20);
        let mut bytes = fs::read(&b).unwrap();
        bytes[2_000_000] ^= 1;
        fs::write(&b, &bytes).unwrap();
        assert_ne!(checksum(&a).unwrap(), checksum(&b).unwrap());
        fill_random(&b, 3 << 20, 8).unwrap();
        assert_ne!(checksum(&a).unwrap(), checksum(&b).unwrap());
        // Neighbouring seeds give different data too.
        fill_random(&b, 3 << 20, 6).unwrap();
        assert_ne!(checksum(&a).unwrap(), checksum(&b).unwrap());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// The collector: GET of what is there, 404 of what is not, PUT into directories that do not
    /// exist yet and GET of it back, only on 127.0.0.1; gone when dropped. A dead port refuses,
    /// a silent one accepts and never answers.
    #[test]
    fn the_collector_serves_gets_and_takes_puts() {
        let dir = std::env::temp_dir().join(format!("bbe2e-collector-{}", std::process::id()));
        let root = dir.join("www");
        fs::create_dir_all(root.join("config")).unwrap();
        fs::write(root.join("config/bootbench.json"), b"{\"profile\": \"quick\"}\n").unwrap();
        let Some(c) = Collector::start(&dir.join("nginx"), &root) else {
            return;
        };
        let port = c.port();
        assert_eq!(
            http(port, "GET", "/config/bootbench.json", b"").unwrap(),
            (200, b"{\"profile\": \"quick\"}\n".to_vec())
        );
        assert_eq!(http(port, "GET", "/results/m1/r1-1.json", b"").unwrap().0, 404);
        let doc = b"{\"schema\": \"bootbench.result/1\"}";
        assert_eq!(http(port, "PUT", "/results/m1/r1-1.json", doc).unwrap().0, 201);
        assert_eq!(fs::read(root.join("results/m1/r1-1.json")).unwrap(), doc);
        assert_eq!(
            http(port, "GET", "/results/m1/r1-1.json", b"").unwrap(),
            (200, doc.to_vec())
        );
        // A second PUT replaces it (204: no content created).
        assert_eq!(http(port, "PUT", "/results/m1/r1-1.json", b"{}").unwrap().0, 204);
        // nginx logs a request after its response.
        let start = Instant::now();
        while c.requests().len() < 5 && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            c.requests(),
            [
                "GET /config/bootbench.json 200",
                "GET /results/m1/r1-1.json 404",
                "PUT /results/m1/r1-1.json 201",
                "GET /results/m1/r1-1.json 200",
                "PUT /results/m1/r1-1.json 204"
            ]
        );
        // Loopback only: not on the machine's other addresses.
        let conf = fs::read_to_string(dir.join("nginx/nginx.conf")).unwrap();
        assert!(conf.contains(&format!("listen 127.0.0.1:{port};")), "{conf}");
        drop(c);
        assert!(
            TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err(),
            "nginx still listens"
        );
        assert!(http(dead_port(), "GET", "/", b"").is_err());
        let silent = Silent::start();
        let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, silent.port())).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let mut buf = [0u8; 16];
        let e = s.read(&mut buf).unwrap_err();
        assert!(
            matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut),
            "{e}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_partition_guid_is_set_in_both_tables() {
        let dir = std::env::temp_dir().join(format!("bbe2e-gpt-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let img = dir.join("disk.img");
        let esp = gpt::Partition {
            type_guid: gpt::guid(gpt::ESP_TYPE),
            unique_guid: [1; 16],
            first_lba: 2048,
            last_lba: 4000,
            attributes: 0,
            name: "EFI system".into(),
        };
        let mut disk = vec![0u8; 4096 * 512];
        gpt::write(&mut disk, &[2; 16], std::slice::from_ref(&esp), None);
        fs::write(&img, &disk).unwrap();
        set_partition_guid(&img, "0ddba11c-0000-4000-8000-000000000001").unwrap();
        let mut f = File::open(&img).unwrap();
        for lba in [1, 4095] {
            let table = gpt::read(&mut f, lba).unwrap();
            let want = gpt::Partition {
                unique_guid: gpt::guid("0DDBA11C-0000-4000-8000-000000000001"),
                ..esp.clone()
            };
            assert_eq!(table.entry(0), Some(want), "LBA {lba}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
