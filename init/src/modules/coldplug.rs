//! Coldplug: every device's modalias under a sysfs root matched against
//! the alias table, the matching drivers loaded with their dependencies,
//! and the devices scanned again until nothing new has appeared for a
//! while (USB hosts, ports and mass-storage interfaces waited for).

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::modprobe::live_loader;
use super::{kernel_dir, Kernel, LiveKernel, Loader, ModuleDb, ModuleError};
use crate::sysfs;

/// Timing of the coldplug rescans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settle {
    /// Time between scans while nothing loads.
    pub poll: Duration,
    /// The scan ends once nothing has changed for this long: no new device
    /// (modalias), no new block device, no module loaded. A driver's insert
    /// returns with its probes done (finit_module waits for the kernel's
    /// asynchronous probes, the ATA and SCSI scans among them); this covers
    /// what a driver finds afterwards (an NVMe controller's namespaces, a
    /// USB hub's devices). In the boot it runs while the stick's config is
    /// read ([`settle`]).
    pub quiet: Duration,
    /// The scan ends after this long whatever still appears (a bound on a
    /// device that keeps coming and going, not a time anything is expected
    /// to take); inserts under way still end.
    pub limit: Duration,
    /// After a USB host controller driver loads, keep rescanning (even when
    /// quiet) until this long has passed, for enumeration, unless a USB
    /// disk is there.
    pub usb_host_grace: Duration,
    /// After usb_storage or uas loads, wait up to this long for a USB block
    /// device, loading drivers for devices that appear meanwhile (sd_mod).
    pub usb_disk_wait: Duration,
}

impl Default for Settle {
    fn default() -> Self {
        Settle {
            poll: Duration::from_millis(50),
            quiet: Duration::from_millis(250),
            limit: Duration::from_secs(30),
            usb_host_grace: Duration::from_secs(2),
            usb_disk_wait: Duration::from_secs(15),
        }
    }
}

/// What coldplug did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Modules inserted, in order.
    pub loaded: Vec<String>,
    /// Failures (a module whose device is absent may fail with ENODEV: harmless).
    pub errors: Vec<ModuleError>,
    /// Scans of /sys/devices made.
    pub passes: u32,
    /// Distinct modalias strings seen.
    pub modaliases: usize,
    /// Modaliases that matched no module in the tables.
    pub unmatched: usize,
    /// Whether a USB block device was waited for and appeared (None: no wait).
    pub usb_disk: Option<bool>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} modules loaded in {} passes ({} modaliases, {} without a module, {} errors)",
            self.loaded.len(),
            self.passes,
            self.modaliases,
            self.unmatched,
            self.errors.len()
        )?;
        if !self.loaded.is_empty() {
            write!(f, ": {}", self.loaded.join(" "))?;
        }
        match self.usb_disk {
            Some(true) => write!(f, "; USB disk present"),
            Some(false) => write!(f, "; no USB disk appeared"),
            None => Ok(()),
        }
    }
}

/// Devices that have a modalias but sit on no bus: the CPU (its features
/// match the accelerated crypto modules) and the firmware's DMI table.
const BUSLESS_MODALIAS: &[&str] = &["devices/system/cpu/modalias", "devices/virtual/dmi/id/modalias"];

/// Every device's modalias under the sysfs root `sys`, sorted, without
/// repeats: each device of each bus (`bus/*/devices/*/modalias`) and
/// [`BUSLESS_MODALIAS`]. The bus lists hold each device once; a walk of
/// /sys/devices reads ten times the directories (about 140 ms a scan under
/// TCG, against 25 ms). Class devices (input) are not scanned: no module of
/// the set has an alias for them.
pub fn scan_modaliases(sys: &Path) -> Vec<String> {
    scan_devices(sys).aliases
}

/// One scan of the buses: see [`scan_modaliases`].
#[derive(Debug, Default)]
struct Scan {
    /// Every modalias, sorted, without repeats.
    aliases: Vec<String>,
    /// Every device on the USB bus (`2-3`, `2-3:1.0`), sorted: two USB
    /// disks of one model have one modalias, and the second is still a new
    /// device. The other buses' devices are left out: their hot arrivals
    /// (SCSI hosts and targets as a driver probes) come with a new disk or
    /// module anyway, and counting them restarted the quiet time for
    /// nothing (about 0.2 s more to the first I/O under TCG).
    usb_devices: Vec<String>,
}

fn scan_devices(sys: &Path) -> Scan {
    let mut aliases = std::collections::BTreeSet::new();
    let mut usb_devices = Vec::new();
    let mut add = |path: PathBuf| {
        if let Ok(s) = std::fs::read_to_string(path) {
            let s = s.trim();
            if !s.is_empty() {
                aliases.insert(s.to_string());
            }
        }
    };
    if let Ok(buses) = std::fs::read_dir(sys.join("bus")) {
        for bus in buses.flatten() {
            let Ok(list) = std::fs::read_dir(bus.path().join("devices")) else {
                continue;
            };
            let usb = bus.file_name() == "usb";
            for d in list.flatten() {
                if usb {
                    usb_devices.push(d.file_name().to_string_lossy().into_owned());
                }
                add(d.path().join("modalias"));
            }
        }
    }
    for rel in BUSLESS_MODALIAS {
        add(sys.join(rel));
    }
    usb_devices.sort_unstable();
    Scan {
        aliases: aliases.into_iter().collect(),
        usb_devices,
    }
}

/// The names in `sys/block`, sorted (the block devices there are).
fn block_devices(sys: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(sys.join("block"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

/// Is there a block device in `sys_block` whose sysfs path goes through USB?
pub fn usb_block_present(sys_block: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(sys_block) else {
        return false;
    };
    rd.flatten().any(|e| {
        std::fs::read_link(e.path())
            .map(|t| t.to_string_lossy().contains("/usb"))
            .unwrap_or(false)
    })
}

/// How many USB mass-storage interfaces (class 08) under `sys` a driver has
/// taken (usb-storage, uas) without a block device beneath them yet: the
/// SCSI scan of each is still under way. A machine with several USB disks
/// enumerates and scans them one after another, with gaps longer than the
/// quiet time between them; this keeps coldplug waiting for each.
pub fn usb_storage_pending(sys: &Path) -> usize {
    let disks: Vec<String> = std::fs::read_dir(sys.join("block"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .map(|t| t.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let Ok(rd) = std::fs::read_dir(sys.join("bus/usb/devices")) else {
        return 0;
    };
    rd.flatten()
        .filter(|e| {
            let d = e.path();
            let class = std::fs::read_to_string(d.join("bInterfaceClass")).unwrap_or_default();
            class.trim() == "08" && d.join("driver").exists()
        })
        .filter(|e| {
            let name = format!("/{}/", e.file_name().to_string_lossy());
            !disks.iter().any(|t| t.contains(&name))
        })
        .count()
}

/// How a hub's port is asked whether a device is connected to it: (bus
/// number, device number, port) to Some(connected), None when it cannot
/// be asked. [`PortStatus::live`] asks the hub through usbfs.
#[derive(Clone)]
pub struct PortStatus(std::sync::Arc<dyn Fn(u32, u32, u8) -> Option<bool> + Send + Sync>);

impl PortStatus {
    /// GET_STATUS to the port of the hub at `/dev/bus/usb/BBB/DDD`.
    pub fn live() -> PortStatus {
        PortStatus(std::sync::Arc::new(|bus, dev, port| {
            let node = PathBuf::from(format!("/dev/bus/usb/{bus:03}/{dev:03}"));
            crate::sys::usb::hub_port_status(&node, port)
                .ok()
                .map(|(status, _)| status & crate::sys::usb::PORT_CONNECTION != 0)
        }))
    }

    /// A port status from `f` (tests).
    #[cfg(test)]
    pub fn from_fn(f: impl Fn(u32, u32, u8) -> Option<bool> + Send + Sync + 'static) -> PortStatus {
        PortStatus(std::sync::Arc::new(f))
    }
}

impl fmt::Debug for PortStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PortStatus")
    }
}

/// The hub ports under `sys` with a device connected that the kernel has
/// not made a USB device of yet (`usb2-port3`, `1-4-port2`): the hub driver
/// enumerates its ports one after another, each after a debounce of at
/// least 100 ms, so under TCG the next disk can come more than the quiet
/// time after the last. A port whose `device` link is there is done; only
/// the others are asked ([`PortStatus`]). A hub just added may not have
/// powered its ports yet: the new device itself restarts the quiet time.
pub fn usb_ports_pending(sys: &Path, status: &PortStatus) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(sys.join("bus/usb/devices")) else {
        return out;
    };
    let read = |p: PathBuf| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
    };
    let mut hubs: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    hubs.sort();
    for hub in hubs {
        let Some(maxchild) = read(hub.join("maxchild")).filter(|&n| n > 0) else {
            continue;
        };
        let (Some(bus), Some(dev)) = (read(hub.join("busnum")), read(hub.join("devnum"))) else {
            continue;
        };
        let name = hub.file_name().unwrap_or_default().to_string_lossy().into_owned();
        // The ports sit under the hub's interface: `2-1:1.0/2-1-port1`, and
        // for a root hub `usb2/2-0:1.0/usb2-port1`.
        let ifaces: Vec<PathBuf> = std::fs::read_dir(&hub)
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_name().to_string_lossy().contains(':'))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        for port in 1..=maxchild.min(u32::from(u8::MAX)) {
            let port_name = format!("{name}-port{port}");
            let Some(dir) = ifaces.iter().map(|i| i.join(&port_name)).find(|d| d.exists()) else {
                continue;
            };
            if dir.join("device").exists() {
                continue;
            }
            let port = u8::try_from(port).unwrap_or(u8::MAX);
            if (status.0)(bus, dev, port) == Some(true) {
                out.push(port_name);
            }
        }
    }
    out
}

const USB_HOSTS: &[&str] = &[
    "xhci_pci", "xhci_hcd", "ehci_pci", "ehci_hcd", "ohci_pci", "ohci_hcd", "uhci_hcd",
];

const USB_STORAGE: &[&str] = &["usb_storage", "uas"];

/// Every disk behind a SCSI host (SATA through libata, USB, SAS, virtio-scsi)
/// needs sd_mod: loaded with the SCSI core, it is there when the disks are
/// scanned, instead of one rescan after they show up.
const SCSI_CORE: &str = "scsi_mod";

const SCSI_DISK: &str = "sd_mod";

/// A coldplug under way: what it has seen, and when something last changed.
#[derive(Debug)]
pub struct Coldplug {
    sys: PathBuf,
    settle: Settle,
    start: Instant,
    /// Modules to load that no device asks for, until the first pass takes them.
    also: Vec<String>,
    seen: HashSet<String>,
    unmatched: usize,
    passes: u32,
    usb_host_at: Option<Instant>,
    usb_disk: Option<bool>,
    /// The block devices there were at the last pass.
    disks: Vec<String>,
    /// The USB devices there were at the last pass.
    usb_devices: Vec<String>,
    /// How hub ports are asked whether a device waits on them.
    ports: PortStatus,
    /// The ports found with a device waiting on them (logged once each).
    waited_ports: Vec<String>,
    changed_at: Instant,
    /// Whether the last pass found something new.
    changed: bool,
    /// How many of the loader's modules and errors are logged.
    logged: (usize, usize),
}

impl Coldplug {
    /// A coldplug of the sysfs root `sys`, with the modules `also` names.
    pub fn new(sys: &Path, also: &[&str], settle: Settle) -> Coldplug {
        Coldplug {
            sys: sys.to_path_buf(),
            settle,
            start: Instant::now(),
            also: also.iter().map(|m| (*m).to_string()).collect(),
            seen: HashSet::new(),
            unmatched: 0,
            passes: 0,
            usb_host_at: None,
            usb_disk: None,
            disks: block_devices(sys),
            usb_devices: Vec::new(),
            ports: PortStatus::live(),
            waited_ports: Vec::new(),
            changed_at: Instant::now(),
            changed: true,
            logged: (0, 0),
        }
    }

    /// Ask hub ports through `ports` instead of usbfs (tests).
    #[cfg(test)]
    pub fn with_port_status(mut self, ports: PortStatus) -> Coldplug {
        self.ports = ports;
        self
    }

    /// Load until nothing loads, a pass finds nothing new, and a USB host's
    /// enumeration grace is over (or a USB disk is there); then, when a USB
    /// storage driver loaded, wait for its disk. The modules load in the
    /// background ([`Loader::pump`]); the devices are scanned again whenever
    /// a driver's insert ends, and every [`Settle::poll`] while no library
    /// loads (a scan costs CPU time the libraries' inserts need): a virtio
    /// disk's or a USB stick's driver loads while the SATA ports are still
    /// being probed.
    pub fn load<K: Kernel>(&mut self, loader: &mut Loader<'_, K>, log: &mut dyn FnMut(&str)) {
        loop {
            self.pass(loader, log);
            if self.start.elapsed() >= self.settle.limit {
                while loader.busy() {
                    loader.pump(None);
                }
                break;
            }
            if !loader.busy() {
                // The grace is for a USB disk to show up: once one has, a quiet pass ends the loading.
                let usb_settling = (self
                    .usb_host_at
                    .is_some_and(|t| t.elapsed() < self.settle.usb_host_grace)
                    && !usb_block_present(&self.sys.join("block")))
                    || self.usb_scanning(log);
                if !self.changed && !usb_settling {
                    break;
                }
                std::thread::sleep(self.settle.poll);
                continue;
            }
            self.wait(loader);
        }
        if loader.loaded.iter().any(|m| USB_STORAGE.contains(&m.as_str())) {
            // usb-storage scans its devices after a delay (delay_use, 1 s), and
            // the SCSI disk it finds needs sd_mod: keep loading modules for new
            // devices while waiting, or a disk that shows up after the quiet
            // passes never gets its driver (seen under TCG).
            let start = Instant::now();
            let block = self.sys.join("block");
            let mut present = usb_block_present(&block);
            while !present && start.elapsed() < self.settle.usb_disk_wait {
                std::thread::sleep(Duration::from_millis(100));
                self.pass(loader, log);
                while loader.busy() {
                    loader.pump(None);
                }
                present = usb_block_present(&block);
            }
            self.usb_disk = Some(present);
        }
    }

    /// Go on scanning (and loading what new devices need) until nothing
    /// has changed for [`Settle::quiet`], or the limit. What has appeared
    /// by then is every device there is to wait for. True when a scan of
    /// this call found something new (a device, a disk, a module loaded).
    pub fn settle<K: Kernel>(&mut self, loader: &mut Loader<'_, K>, log: &mut dyn FnMut(&str)) -> bool {
        let mut found = false;
        loop {
            let quiet = !loader.busy()
                && !self.changed
                && self.changed_at.elapsed() >= self.settle.quiet
                && !self.usb_scanning(log);
            if quiet || self.start.elapsed() >= self.settle.limit {
                while loader.busy() {
                    loader.pump(None);
                }
                return found;
            }
            if loader.busy() {
                self.wait(loader);
            } else {
                let left = self.settle.quiet.saturating_sub(self.changed_at.elapsed());
                std::thread::sleep(left.min(self.settle.poll));
            }
            self.pass(loader, log);
            found |= self.changed;
        }
    }

    /// A USB mass-storage interface still has no disk ([`usb_storage_pending`]),
    /// or a hub port has a device not yet enumerated ([`usb_ports_pending`]),
    /// within [`Settle::usb_disk_wait`] of the start.
    /// Ports newly found waiting are logged.
    fn usb_scanning(&mut self, log: &mut dyn FnMut(&str)) -> bool {
        if self.start.elapsed() >= self.settle.usb_disk_wait {
            return false;
        }
        if usb_storage_pending(&self.sys) > 0 {
            return true;
        }
        let ports = usb_ports_pending(&self.sys, &self.ports);
        let fresh: Vec<&str> = ports
            .iter()
            .filter(|p| !self.waited_ports.contains(p))
            .map(String::as_str)
            .collect();
        if !fresh.is_empty() {
            log(&format!(
                "coldplug: a device is connected to USB port(s) {} and not yet enumerated: waiting for it",
                fresh.join(" ")
            ));
        }
        let waiting = !ports.is_empty();
        self.waited_ports.extend(ports);
        self.waited_ports.sort_unstable();
        self.waited_ports.dedup();
        waiting
    }

    /// What the coldplug did so far.
    pub fn report<K: Kernel>(&self, loader: &Loader<'_, K>) -> Report {
        Report {
            loaded: loader.loaded.clone(),
            errors: loader.errors.clone(),
            passes: self.passes,
            modaliases: self.seen.len(),
            unmatched: self.unmatched,
            usb_disk: self.usb_disk,
        }
    }

    /// One scan: submit the modules new devices need (and, the first time,
    /// `also`), start what is ready, log what loaded and failed since the
    /// last pass, and note whether anything changed.
    fn pass<K: Kernel>(&mut self, loader: &mut Loader<'_, K>, log: &mut dyn FnMut(&str)) {
        self.passes += 1;
        let also = std::mem::take(&mut self.also);
        let scan = scan_devices(&self.sys);
        let new_devices = submit_new_devices(loader, scan.aliases, &mut self.seen, &mut self.unmatched, also);
        loader.pump(Some(Duration::ZERO));
        let disks = block_devices(&self.sys);
        let new = &loader.loaded[self.logged.0..];
        if !new.is_empty() {
            log(&format!("coldplug pass {}: loaded {}", self.passes, new.join(" ")));
            if self.usb_host_at.is_none() && new.iter().any(|m| USB_HOSTS.contains(&m.as_str())) {
                self.usb_host_at = Some(Instant::now());
            }
        }
        for e in &loader.errors[self.logged.1..] {
            log(&format!("coldplug: {e}"));
        }
        self.changed =
            new_devices > 0 || !new.is_empty() || disks != self.disks || scan.usb_devices != self.usb_devices;
        if self.changed {
            self.changed_at = Instant::now();
            self.disks = disks;
            self.usb_devices = scan.usb_devices;
        }
        self.logged = (loader.loaded.len(), loader.errors.len());
    }

    /// While modules load: wait for a driver's insert to end (its probe
    /// made devices), or for the poll while only drivers run.
    fn wait<K: Kernel>(&self, loader: &mut Loader<'_, K>) {
        let since = Instant::now();
        loop {
            let left = self.settle.poll.saturating_sub(since.elapsed());
            let polling = loader.running_libraries == 0;
            let wait = if polling {
                left
            } else {
                self.settle.limit.saturating_sub(self.start.elapsed())
            };
            match loader.pump(Some(wait)) {
                Some((_, true)) => return,
                Some((_, false)) if loader.busy() && (!polling || !left.is_zero()) => {}
                _ => return,
            }
        }
    }
}

/// Submit ([`Loader::submit`]) the modules for every modalias in `aliases`
/// not in `seen` (adding them), and the modules `also` names (one the
/// tables lack and the kernel does not have is an [`ModuleError::Unknown`]
/// in the loader's errors); counts the
/// modaliases no module matches in `unmatched`. Returns how many new
/// modaliases there were.
fn submit_new_devices<K: Kernel>(
    loader: &mut Loader<'_, K>,
    aliases: Vec<String>,
    seen: &mut HashSet<String>,
    unmatched: &mut usize,
    also: Vec<String>,
) -> usize {
    let mut new_devices = 0;
    let mut wanted: Vec<String> = Vec::new();
    for alias in aliases {
        if !seen.insert(alias.clone()) {
            continue;
        }
        new_devices += 1;
        let modules = loader.db.match_alias(&alias);
        if modules.is_empty() {
            *unmatched += 1;
        }
        for m in modules {
            loader.driver(&m);
            if !wanted.contains(&m) {
                wanted.push(m);
            }
        }
    }
    // Every disk behind a SCSI host needs sd_mod: it comes with the SCSI core.
    let scsi = wanted
        .iter()
        .any(|m| loader.db.plan(m).is_ok_and(|p| p.iter().any(|i| i.name == SCSI_CORE)));
    if scsi && !loader.kernel.is_loaded(SCSI_DISK) && loader.db.deps.contains_key(SCSI_DISK) {
        wanted.push(SCSI_DISK.to_string());
    }
    for m in also {
        // A name the tables lack would be dropped without a word by submit:
        // it is an error the boot says (and the document, for a module the
        // command line named), unless the kernel has it already (built in).
        if loader.db.resolve(&m).is_empty() && !loader.kernel.is_loaded(&m) {
            loader.errors.push(ModuleError::Unknown { name: m });
            continue;
        }
        if !wanted.contains(&m) {
            wanted.push(m);
        }
    }
    loader.submit(&wanted);
    new_devices
}

/// The boot's coldplug between its loading ([`coldplug`]) and its settling
/// ([`settle`]). The tables it reads are leaked: they live as long as the
/// worker that loads.
static PENDING: std::sync::Mutex<Option<(Loader<'static, LiveKernel>, Coldplug)>> = std::sync::Mutex::new(None);

/// Coldplug the running system, first part: load the tables of the running
/// kernel, then [`Coldplug::load`] over /sys with `also` and the default
/// [`Settle`]: the drivers of every device there is, and the USB stick's
/// disk. The quiet time that ends a coldplug is left to [`settle`], so the
/// boot finds the stick and reads its config meanwhile.
pub fn coldplug(also: &[String], log: &mut dyn FnMut(&str)) -> Report {
    let also: Vec<&str> = also.iter().map(String::as_str).collect();
    let db = match ModuleDb::load(&kernel_dir()) {
        Ok(db) => db,
        Err(e) => {
            log(&e.to_string());
            return Report {
                errors: vec![e],
                ..Report::default()
            };
        }
    };
    let db: &'static ModuleDb = Box::leak(Box::new(db));
    let mut loader = live_loader(db).drivers_only_wait();
    let mut c = Coldplug::new(sysfs::root(), &also, Settle::default());
    c.load(&mut loader, log);
    let report = c.report(&loader);
    *PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((loader, c));
    report
}

/// What [`settle`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    /// A line for the log: how long it waited, what it loaded.
    pub line: String,
    /// Something appeared meanwhile: disks listed before are out of date.
    pub changed: bool,
    /// Every failure of the whole coldplug, its loading and its settling
    /// (for [`super::named_outcome`]).
    pub errors: Vec<ModuleError>,
}

/// Coldplug's second part ([`Coldplug::settle`]): scan until nothing new
/// has appeared for [`Settle::quiet`], loading what new devices need. None
/// when no coldplug is pending.
pub fn settle(log: &mut dyn FnMut(&str)) -> Option<Settled> {
    let (mut loader, mut c) = PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()?;
    let (t, passes, loaded) = (Instant::now(), c.passes, loader.loaded.len());
    let changed = c.settle(&mut loader, log);
    let mut line = format!(
        "drivers settled: nothing new for {} ms ({} ms more, {} more passes",
        c.settle.quiet.as_millis(),
        t.elapsed().as_millis(),
        c.passes - passes
    );
    if loader.loaded.len() > loaded {
        line.push_str(&format!(", loaded {}", loader.loaded[loaded..].join(" ")));
    }
    if changed {
        line.push_str(", something new appeared");
    }
    let ports = usb_ports_pending(&c.sys, &c.ports);
    if !ports.is_empty() {
        line.push_str(&format!(
            ", a device connected but not enumerated on USB port(s) {}",
            ports.join(" ")
        ));
    }
    line.push(')');
    Some(Settled {
        line,
        changed,
        errors: loader.errors.clone(),
    })
}

/// One coldplug pass over the running system's devices (no settling):
/// the drivers of devices that appeared since; the modules it inserted.
pub fn rescan() -> Result<Vec<String>, ModuleError> {
    let db = ModuleDb::load(&kernel_dir())?;
    let mut loader = live_loader(&db).drivers_only_wait();
    let (mut seen, mut unmatched) = (HashSet::new(), 0);
    submit_new_devices(
        &mut loader,
        scan_modaliases(sysfs::root()),
        &mut seen,
        &mut unmatched,
        Vec::new(),
    );
    while loader.busy() {
        loader.pump(None);
    }
    Ok(loader.loaded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::testkit::*;
    use crate::modules::*;
    use crate::testutil::TempDir;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn modaliases_come_from_every_bus_the_cpu_and_dmi() {
        let t = TempDir::new("scan");
        let sys = t.0.join("sys");
        put(&sys, "pci", "0000:00:02.0", "pci:v00001AF4d00001001");
        put(&sys, "virtio", "virtio0", "virtio:d00000002v00001AF4");
        put(&sys, "virtio", "virtio1", "virtio:d00000002v00001AF4");
        std::fs::create_dir_all(sys.join("bus/pci/devices/0000:00:00.0")).unwrap();
        for (rel, alias) in [
            (
                "devices/system/cpu/modalias",
                "cpu:type:x86,ven0000fam0006mod003F:feature:,0099",
            ),
            ("devices/virtual/dmi/id/modalias", "dmi:bvnSeaBIOS:"),
            // A class device's: not on a bus, not read.
            (
                "devices/platform/i8042/serio0/input/input1/modalias",
                "input:b0011v0001",
            ),
        ] {
            let f = sys.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, format!("{alias}\n")).unwrap();
        }
        assert_eq!(
            scan_modaliases(&sys),
            [
                "cpu:type:x86,ven0000fam0006mod003F:feature:,0099",
                "dmi:bvnSeaBIOS:",
                "pci:v00001AF4d00001001",
                "virtio:d00000002v00001AF4"
            ]
        );
        assert!(scan_modaliases(&t.0.join("none")).is_empty());
    }

    #[test]
    fn coldplug_rescans_until_nothing_new() {
        let t = TempDir::new("coldplug");
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        put(
            &sys,
            "pci",
            "0000:00:02.0",
            "pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00",
        );
        put(
            &sys,
            "pci",
            "0000:00:1f.2",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
        );
        put(&sys, "platform", "serial8250", "platform:serial8250");
        let sys2 = sys.clone();
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| match name {
            // virtio_pci makes the virtio device appear, ahci a SCSI disk
            "virtio_pci" => put(&sys2, "virtio", "virtio0", "virtio:d00000002v00001AF4"),
            "ahci" => put(&sys2, "scsi", "0:0:0:0", "scsi:t-0x00"),
            _ => {}
        });
        let mut l = Loader::new(&db, k);
        let mut lines = Vec::new();
        let r = coldplug_with(&mut l, &sys, &["xts"], quick(), &mut |m| lines.push(m.to_string()));
        // pass 1: ahci + virtio_pci (and deps), sd_mod, xts; pass 2: virtio_blk; pass 3: quiet
        assert_eq!(r.passes, 3, "{r:?} {lines:?}");
        for m in [
            "ahci",
            "libata",
            "virtio_pci",
            "virtio_pci_modern_dev",
            "virtio_blk",
            "sd_mod",
            "ecb",
            "xts",
        ] {
            assert!(r.loaded.iter().any(|x| x == m), "{m} not in {:?}", r.loaded);
        }
        let pos = |m: &str| r.loaded.iter().position(|x| x == m).unwrap();
        // sd_mod comes with the SCSI core, in the first pass, before any disk is scanned;
        // what `also` names loads in the first pass too.
        assert!(
            lines[0].starts_with("coldplug pass 1:") && lines[0].contains(" sd_mod") && lines[0].contains(" xts"),
            "{lines:?}"
        );
        assert!(pos("sd_mod") < pos("virtio_blk"), "{:?}", r.loaded);
        assert!(pos("virtio_pci_modern_dev") < pos("virtio_pci"));
        assert!(pos("virtio_pci") < pos("virtio_blk"));
        assert!(pos("ecb") < pos("xts"));
        assert_eq!(r.modaliases, 5);
        assert_eq!(r.unmatched, 1);
        assert!(r.errors.is_empty());
        assert_eq!(r.usb_disk, None);
        assert_eq!(lines.len(), 2, "{lines:?}");
    }

    /// A module `also` names that the tables lack (one the image does not
    /// carry) is an error of the coldplug, unless the kernel has it
    /// already; the others load.
    #[test]
    fn also_names_a_module_the_tables_lack() {
        let t = TempDir::new("also-unknown");
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        let db = db();
        let mut k = Fake::new();
        k.loaded.push("builtin_thing".to_string());
        let mut l = Loader::new(&db, k);
        let mut lines = Vec::new();
        let r = coldplug_with(
            &mut l,
            &sys,
            &["xts", "scsi_debug", "builtin_thing"],
            quick(),
            &mut |m| lines.push(m.to_string()),
        );
        assert!(r.loaded.iter().any(|m| m == "xts"), "{r:?}");
        assert_eq!(
            r.errors,
            [ModuleError::Unknown {
                name: "scsi_debug".into()
            }]
        );
        assert!(
            lines
                .iter()
                .any(|l| l == "coldplug: module scsi_debug: no such module or alias"),
            "said on the console: {lines:?}"
        );
    }

    /// The scan ends once nothing has changed for `quiet`: a block device
    /// that appears late in that time (an NVMe namespace after its
    /// controller's scan) starts the count again.
    #[test]
    fn coldplug_ends_after_quiet_time_counted_from_the_last_new_disk() {
        let t = TempDir::new("quiet");
        let sys = xhci_host(&t);
        let db = db();
        let quiet = Duration::from_millis(400);
        let settle = Settle {
            poll: Duration::from_millis(10),
            quiet,
            ..quick()
        };
        let sys2 = sys.clone();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            disk(
                &sys2,
                "nvme0n1",
                "../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1",
            );
            Instant::now()
        });
        let start = Instant::now();
        let mut l = Loader::new(&db, Fake::new());
        // Loading ends with the first quiet pass; the quiet time is the settling's.
        let mut c = Coldplug::new(&sys, &[], settle);
        c.load(&mut l, &mut |_| {});
        assert!(start.elapsed() < Duration::from_millis(300), "{:?}", start.elapsed());
        assert!(c.settle(&mut l, &mut |_| {}), "the settling saw the new disk");
        let r = c.report(&l);
        let (end, took) = (Instant::now(), start.elapsed());
        let appeared = late.join().unwrap();
        assert!(
            end.duration_since(appeared) >= quiet,
            "ended {:?} after the disk appeared, before {quiet:?} had passed",
            end.duration_since(appeared)
        );
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(r.loaded.contains(&"xhci_pci".to_string()), "{r:?}");
        // Nothing appears: the scan ends `quiet` after the last load, and says nothing changed.
        let start = Instant::now();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys, &[], settle);
        c.load(&mut l, &mut |_| {});
        assert!(!c.settle(&mut l, &mut |_| {}));
        let took = start.elapsed();
        assert!(took >= quiet && took < Duration::from_secs(5), "{took:?}");
    }

    /// Several USB disks come one after another, each scanned after its
    /// interface appears: the quiet time does not end the coldplug while an
    /// interface a driver has taken has no disk yet.
    #[test]
    fn coldplug_waits_for_each_usb_storage_interface_to_get_its_disk() {
        let t = TempDir::new("usb-each");
        let sys = xhci_host(&t);
        let iface = |name: &str| {
            let d = sys.join("bus/usb/devices").join(name);
            std::fs::create_dir_all(d.join("driver")).unwrap();
            std::fs::write(d.join("bInterfaceClass"), "08\n").unwrap();
        };
        iface("2-1:1.0");
        iface("2-2:1.0");
        disk(
            &sys,
            "sda",
            "../devices/pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda",
        );
        assert_eq!(usb_storage_pending(&sys), 1);
        let sys2 = sys.clone();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            disk(
                &sys2,
                "sdb",
                "../devices/pci0000:00/0000:00:04.0/usb2/2-2/2-2:1.0/host1/target1:0:0/1:0:0:0/block/sdb",
            );
            Instant::now()
        });
        let db = db();
        let settle = usb_waiting();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys, &[], settle);
        c.load(&mut l, &mut |_| {});
        c.settle(&mut l, &mut |_| {});
        let end = Instant::now();
        let appeared = late.join().unwrap();
        assert!(end > appeared, "coldplug ended before the second USB disk appeared");
        assert_eq!(usb_storage_pending(&sys), 0);
    }

    #[test]
    fn a_port_with_a_device_connected_and_none_enumerated_is_pending() {
        let t = TempDir::new("ports");
        let sys = xhci_host(&t);
        hub(&sys, "usb2", 2, 1, 4, &[1]);
        hub(&sys, "1-4", 1, 2, 2, &[]);
        // A device that is no hub: never asked.
        put(&sys, "usb", "2-1", "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00");
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = asked.clone();
        let status = PortStatus::from_fn(move |bus, dev, port| {
            log.lock().unwrap().push((bus, dev, port));
            match (bus, dev, port) {
                (2, 1, 2) | (1, 2, 1) => Some(true),
                (2, 1, 3) => Some(false),
                _ => None,
            }
        });
        assert_eq!(usb_ports_pending(&sys, &status), ["1-4-port1", "usb2-port2"]);
        // Port 1 of usb2 has its device: not asked.
        let mut asked = asked.lock().unwrap().clone();
        asked.sort_unstable();
        assert_eq!(asked, [(1, 2, 1), (1, 2, 2), (2, 1, 2), (2, 1, 3), (2, 1, 4)]);
    }

    /// Two USB disks of one model have one modalias: the second one's
    /// arrival is still something new, and restarts the quiet time.
    #[test]
    fn a_second_device_with_the_same_modalias_is_something_new() {
        let t = TempDir::new("same-alias");
        let sys = xhci_host(&t);
        const ALIAS: &str = "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00";
        put(&sys, "usb", "2-1", ALIAS);
        let db = db();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys, &[], quick()).with_port_status(PortStatus::from_fn(|_, _, _| None));
        for _ in 0..10 {
            c.pass(&mut l, &mut |_| {});
            while l.busy() {
                l.pump(None);
            }
        }
        c.pass(&mut l, &mut |_| {});
        assert!(!c.changed);
        put(&sys, "usb", "2-2", ALIAS);
        c.pass(&mut l, &mut |_| {});
        assert!(c.changed, "a second device of the same model went unseen");
        c.pass(&mut l, &mut |_| {});
        assert!(!c.changed);
    }

    /// A hub enumerates its ports one after another: the quiet time does not
    /// end the coldplug while a port has a device connected and not yet
    /// enumerated, though nothing new has appeared for longer than it.
    #[test]
    fn coldplug_waits_for_a_connected_port_to_get_its_device() {
        let t = TempDir::new("port-wait");
        let sys = xhci_host(&t);
        hub(&sys, "usb2", 2, 1, 2, &[1]);
        let status = PortStatus::from_fn(|_, _, port| Some(port == 2));
        let sys2 = sys.clone();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            std::fs::create_dir_all(sys2.join("bus/usb/devices/usb2/2-0:1.0/usb2-port2/device")).unwrap();
            Instant::now()
        });
        let db = db();
        let settle = usb_waiting();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys, &[], settle).with_port_status(status);
        let mut lines = Vec::new();
        c.load(&mut l, &mut |s| lines.push(s.to_string()));
        c.settle(&mut l, &mut |s| lines.push(s.to_string()));
        let end = Instant::now();
        let appeared = late.join().unwrap();
        assert!(
            end > appeared,
            "coldplug ended while a port still had a device to enumerate"
        );
        let waits: Vec<_> = lines.iter().filter(|l| l.contains("USB port")).collect();
        assert_eq!(
            waits,
            ["coldplug: a device is connected to USB port(s) usb2-port2 and not yet enumerated: waiting for it"],
            "{lines:?}"
        );
        // A port that stays connected without a device holds it only within usb_disk_wait.
        let sys3 = t.0.join("sys3");
        std::fs::create_dir_all(sys3.join("block")).unwrap();
        hub(&sys3, "usb2", 2, 1, 2, &[]);
        let settle = Settle {
            usb_disk_wait: Duration::from_millis(300),
            ..settle
        };
        let start = Instant::now();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys3, &[], settle).with_port_status(PortStatus::from_fn(|_, _, _| Some(true)));
        c.load(&mut l, &mut |_| {});
        c.settle(&mut l, &mut |_| {});
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(5),
            "{took:?}"
        );
    }

    #[test]
    fn coldplug_waits_for_a_usb_disk() {
        let t = TempDir::new("usb");
        let sys = xhci_host(&t);
        let sys2 = sys.clone();
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| {
            if name == "xhci_pci" {
                usb_storage_interface(&sys2);
            }
        });
        let mut l = Loader::new(&db, k);
        let r = coldplug_with(&mut l, &sys, &[], quick(), &mut |_| {});
        assert!(r.loaded.contains(&"usb_storage".to_string()), "{r:?}");
        assert_eq!(r.passes, 3, "{r:?}");
        assert_eq!(r.usb_disk, Some(false));
        // With a long USB grace the quiet passes go on, up to the limit.
        let mut l2 = Loader::new(&db, Fake::new());
        let long_grace = Settle {
            poll: Duration::from_millis(10),
            usb_host_grace: Duration::from_secs(3600),
            limit: Duration::from_millis(300),
            ..quick()
        };
        let start = Instant::now();
        let r2 = coldplug_with(&mut l2, &sys, &[], long_grace, &mut |_| {});
        assert!(start.elapsed() >= Duration::from_millis(300), "{r2:?}");
        assert!(r2.passes > 3, "{r2:?}");
        assert!(r2.loaded.contains(&"xhci_pci".to_string()), "{r2:?}");
        disk(
            &sys,
            "sda",
            "../devices/pci0000:00/0000:00:04.0/usb2/2-1/host0/block/sda",
        );
        assert!(usb_block_present(&sys.join("block")));
    }

    /// The USB disk's SCSI device appears only after the quiet passes (as
    /// usb-storage's scan makes it): sd_mod is there already (it came with
    /// the SCSI core), the disk appears, and the wait ends with it.
    #[test]
    fn coldplug_waits_for_a_late_usb_disk_with_its_driver_loaded_ahead() {
        let t = TempDir::new("usb-late");
        let sys = xhci_host(&t);
        let sys2 = sys.clone();
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| match name {
            "xhci_pci" => usb_storage_interface(&sys2),
            "usb_storage" => {
                // The scan: the SCSI disk and its block device show up later.
                let sys3 = sys2.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(300));
                    put(&sys3, "scsi", "0:0:0:0", "scsi:t-0x00");
                    disk(
                        &sys3,
                        "sda",
                        "../devices/pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda",
                    );
                });
            }
            _ => {}
        });
        let mut l = Loader::new(&db, k);
        let settle = Settle {
            usb_disk_wait: Duration::from_secs(20),
            ..quick()
        };
        let mut lines = Vec::new();
        let r = coldplug_with(&mut l, &sys, &[], settle, &mut |m| lines.push(m.to_string()));
        assert_eq!(r.usb_disk, Some(true), "{r:?}");
        assert!(
            lines
                .iter()
                .any(|m| m.starts_with("coldplug pass 2:") && m.contains("usb_storage") && m.ends_with(" sd_mod")),
            "{lines:?}"
        );
    }

    /// A kernel for threads whose `ahci` insert lasts until `virtio_blk` is
    /// in (as a driver's insert lasts for its probe), or 5 s; `virtio_pci`
    /// makes the virtio disk's device appear under `sys`.
    #[derive(Clone)]
    struct SlowAhci {
        loaded: std::sync::Arc<(std::sync::Mutex<Vec<String>>, std::sync::Condvar)>,
        sys: PathBuf,
        waited_out: std::sync::Arc<AtomicBool>,
    }

    impl Kernel for SlowAhci {
        fn is_loaded(&self, name: &str) -> bool {
            self.loaded.0.lock().unwrap().iter().any(|m| m == name)
        }
        fn insert(&mut self, name: &str, _: &Path, _: &str) -> Result<(), ModuleError> {
            let (list, cv) = &*self.loaded;
            if name == "ahci" {
                let l = list.lock().unwrap();
                let (l, t) = cv
                    .wait_timeout_while(l, Duration::from_secs(5), |l| !l.iter().any(|m| m == "virtio_blk"))
                    .unwrap();
                drop(l);
                self.waited_out.store(t.timed_out(), Ordering::SeqCst);
            }
            if name == "virtio_pci" {
                put(&self.sys, "virtio", "virtio0", "virtio:d00000002v00001AF4");
            }
            list.lock().unwrap().push(name.to_string());
            cv.notify_all();
            Ok(())
        }
        fn fork(&self) -> Option<Box<dyn Kernel + Send>> {
            Some(Box::new(self.clone()))
        }
    }

    /// Coldplug scans again while a driver's insert still runs: the virtio
    /// disk's driver loads while AHCI's ports are being probed, not after.
    #[test]
    fn coldplug_loads_new_devices_drivers_while_a_driver_is_still_probing() {
        let t = TempDir::new("overlap");
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        put(
            &sys,
            "pci",
            "0000:00:02.0",
            "pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00",
        );
        put(
            &sys,
            "pci",
            "0000:00:1f.2",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
        );
        let k = SlowAhci {
            loaded: Default::default(),
            sys: sys.clone(),
            waited_out: Default::default(),
        };
        let (waited_out, inserted) = (k.waited_out.clone(), k.loaded.clone());
        let db = db();
        let mut l = Loader::new(&db, k).drivers_only_wait();
        let settle = Settle {
            poll: Duration::from_millis(10),
            ..quick()
        };
        let start = Instant::now();
        let r = coldplug_with(&mut l, &sys, &[], settle, &mut |_| {});
        assert!(
            !waited_out.load(Ordering::SeqCst),
            "virtio_blk waited for ahci's insert to end"
        );
        assert!(start.elapsed() < Duration::from_secs(4), "{:?}", start.elapsed());
        for m in ["ahci", "virtio_pci", "virtio_blk", "sd_mod"] {
            assert!(r.loaded.iter().any(|x| x == m), "{m}: {r:?}");
        }
        // In the kernel, virtio_blk was in before ahci's insert ended (the loader may hear of
        // the two in either order).
        let order = inserted.0.lock().unwrap().clone();
        let pos = |m: &str| order.iter().position(|x| x == m).unwrap();
        assert!(pos("virtio_blk") < pos("ahci"), "{order:?}");
        assert!(!l.busy());
    }

    /// Once a USB disk is there, the quiet passes end the scan even within
    /// the USB grace: the boot stick holds the config every test waits for.
    #[test]
    fn coldplug_stops_waiting_for_usb_once_a_usb_disk_is_there() {
        let t = TempDir::new("usb-early");
        let sys = xhci_host(&t);
        disk(
            &sys,
            "sda",
            "../devices/pci0000:00/0000:00:04.0/usb2/2-1/host0/block/sda",
        );
        let db = db();
        let mut l = Loader::new(&db, Fake::new());
        let long_grace = Settle {
            usb_host_grace: Duration::from_secs(3600),
            ..quick()
        };
        let r = coldplug_with(&mut l, &sys, &[], long_grace, &mut |_| {});
        assert_eq!(r.passes, 2, "a pass that loads, a quiet one: {r:?}");
    }

    /// Coldplug's drivers (the modules a device's modalias matched) are
    /// inserted as modprobe inserts them, so their insert returns with their
    /// devices probed; every other module it loads (libraries, what `also`
    /// names) without waiting for the system's asynchronous work. A plain
    /// load, and a module whose own parameters say, keep theirs.
    #[test]
    fn only_the_drivers_of_devices_wait_for_probes() {
        let t = TempDir::new("no-wait");
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        put(
            &sys,
            "pci",
            "0000:00:1f.2",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
        );
        let db = db();
        let mut l = Loader::new(&db, Fake::new())
            .with_params(module_params("libata.async_probe=0 scsi_mod.x=1"))
            .drivers_only_wait();
        coldplug_with(&mut l, &sys, &["xts"], quick(), &mut |_| {});
        let given: HashMap<String, String> = l.kernel.params.iter().cloned().collect();
        let want: &[(&str, &str)] = &[
            ("ahci", ""),
            ("libahci", NO_WAIT),
            ("libata", "async_probe=0"),
            ("scsi_mod", "x=1 async_probe=1"),
            ("scsi_common", NO_WAIT),
            ("sd_mod", NO_WAIT),
            ("ecb", NO_WAIT),
            ("xts", NO_WAIT),
        ];
        for (m, p) in want {
            assert_eq!(given.get(*m).map(String::as_str), Some(*p), "{m}: {given:?}");
        }
        assert_eq!(given.len(), want.len(), "{given:?}");
        let mut plain = Loader::new(&db, Fake::new());
        plain.load("ahci").unwrap();
        assert!(
            plain.kernel.params.iter().all(|(_, p)| p.is_empty()),
            "{:?}",
            plain.kernel.params
        );
    }
}
