//! The module tests' fixtures: small module tables, fake kernels, and
//! sysfs trees with devices, disks, USB hosts and hubs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::testutil::TempDir;

pub(super) const DEP: &str = "\
kernel/drivers/ata/ahci.ko: kernel/drivers/ata/libahci.ko kernel/drivers/ata/libata.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/ata/libahci.ko: kernel/drivers/ata/libata.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/ata/libata.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/scsi/scsi_mod.ko: kernel/drivers/scsi/scsi_common.ko
kernel/drivers/scsi/scsi_common.ko:
kernel/drivers/scsi/sd_mod.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_modern_dev.ko
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
kernel/drivers/block/virtio_blk.ko:
kernel/lib/libcrc32c.ko:
kernel/crypto/crc32c_generic.ko:
kernel/arch/x86/crypto/crc32c-intel.ko:
kernel/drivers/md/raid456.ko: kernel/lib/libcrc32c.ko
kernel/crypto/xts.ko:
kernel/crypto/ecb.ko:
kernel/drivers/usb/host/xhci-pci.ko: kernel/drivers/usb/host/xhci-hcd.ko
kernel/drivers/usb/host/xhci-hcd.ko:
kernel/drivers/usb/storage/usb-storage.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
";

pub(super) const ALIAS: &str = "\
# Aliases extracted from modules themselves.
alias pci:v*d*sv*sd*bc01sc06i01* ahci
alias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci
alias virtio:d00000002v* virtio_blk
alias scsi:t-0x00* sd_mod
alias scsi:t-0x0E* sd_mod
alias crypto-crc32c crc32c_generic
alias crc32c crc32c_generic
alias crc32c crc32c_intel
alias md-raid5 raid456
alias md-level-5 raid456
alias pci:v*d*sv*sd*bc0Csc03i30* xhci_pci
alias usb:v*p*d*dc*dsc*dp*ic08isc06ip50in* usb_storage
alias acpi*:NOTHERE:* not_in_dep
";

pub(super) const SOFTDEP: &str = "\
# Soft dependencies extracted from modules themselves.
softdep libcrc32c pre: crc32c
softdep xts pre: ecb
";

pub(super) fn db() -> ModuleDb {
    ModuleDb::from_text(Path::new("/m"), DEP, ALIAS, SOFTDEP)
}

/// A fake kernel: records inserts, fails the names in `fail`, and on
/// inserting a module runs a hook (to make new devices appear).
pub(super) struct Fake<'h> {
    pub(super) loaded: Vec<String>,
    pub(super) fail: Vec<(&'static str, i32)>,
    pub(super) on_insert: Box<dyn FnMut(&str) + 'h>,
    /// Every insert's module and parameters, in order.
    pub(super) params: Vec<(String, String)>,
}

impl<'h> Fake<'h> {
    pub(super) fn new() -> Self {
        Fake {
            loaded: Vec::new(),
            fail: Vec::new(),
            on_insert: Box::new(|_| {}),
            params: Vec::new(),
        }
    }
}

impl Kernel for Fake<'_> {
    fn is_loaded(&self, name: &str) -> bool {
        self.loaded.iter().any(|m| m == name)
    }
    fn insert(&mut self, name: &str, path: &Path, params: &str) -> Result<(), ModuleError> {
        assert!(path.starts_with("/m/kernel"), "{}", path.display());
        self.params.push((name.to_string(), params.to_string()));
        if let Some(&(_, errno)) = self.fail.iter().find(|(n, _)| *n == name) {
            return Err(ModuleError::Load {
                name: name.into(),
                path: path.into(),
                errno,
            });
        }
        self.loaded.push(name.to_string());
        (self.on_insert)(name);
        Ok(())
    }
}

/// A kernel shared by threads: what was inserted, in order; the inserts
/// of `meet` each wait (up to 5 s) until all of them have begun; the
/// inserts of `fail` fail with ENOEXEC.
#[derive(Clone)]
pub(super) struct Shared {
    pub(super) loaded: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    pub(super) meet: &'static [&'static str],
    pub(super) fail: &'static [&'static str],
    pub(super) met: std::sync::Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>,
    pub(super) apart: std::sync::Arc<AtomicBool>,
}

impl Shared {
    pub(super) fn new(meet: &'static [&'static str], fail: &'static [&'static str]) -> Self {
        Shared {
            loaded: Default::default(),
            meet,
            fail,
            met: Default::default(),
            apart: Default::default(),
        }
    }
}

impl Kernel for Shared {
    fn is_loaded(&self, name: &str) -> bool {
        self.loaded.lock().unwrap().iter().any(|m| m == name)
    }
    fn insert(&mut self, name: &str, path: &Path, _: &str) -> Result<(), ModuleError> {
        if self.meet.contains(&name) {
            let (count, cv) = &*self.met;
            let mut n = count.lock().unwrap();
            *n += 1;
            cv.notify_all();
            let (n, timeout) = cv
                .wait_timeout_while(n, Duration::from_secs(5), |n| *n < self.meet.len())
                .unwrap();
            drop(n);
            if timeout.timed_out() {
                self.apart.store(true, Ordering::SeqCst);
            }
        }
        // A dependency must be in before what needs it, whichever thread inserted it.
        let needs: &[(&str, &[&str])] = &[
            ("libata", &["scsi_common", "scsi_mod"]),
            ("libahci", &["libata"]),
            ("ahci", &["libahci", "libata"]),
            ("sd_mod", &["scsi_common", "scsi_mod"]),
            ("usb_storage", &["scsi_common", "scsi_mod"]),
            ("virtio_pci", &["virtio_pci_modern_dev"]),
            ("xhci_pci", &["xhci_hcd"]),
            ("libcrc32c", &["crc32c_generic"]),
        ];
        if let Some((_, deps)) = needs.iter().find(|(m, _)| *m == name) {
            let l = self.loaded.lock().unwrap();
            assert!(
                deps.iter().all(|d| l.iter().any(|m| m == d)),
                "{name} before its deps: {l:?}"
            );
        }
        if self.fail.contains(&name) {
            return Err(ModuleError::Load {
                name: name.into(),
                path: path.into(),
                errno: libc::ENOEXEC,
            });
        }
        self.loaded.lock().unwrap().push(name.to_string());
        Ok(())
    }
    fn fork(&self) -> Option<Box<dyn Kernel + Send>> {
        Some(Box::new(self.clone()))
    }
}

/// Coldplug against the sysfs root `sys` through `loader`: load the
/// modules of every device, and of `also` (what no device asks for: the
/// stick's filesystem), and of each device that appears meanwhile
/// ([`Coldplug::load`]), until [`Settle::quiet`] passes with nothing new
/// ([`Coldplug::settle`]).
pub(super) fn coldplug_with<K: Kernel>(
    loader: &mut Loader<'_, K>,
    sys: &Path,
    also: &[&str],
    settle: Settle,
    log: &mut dyn FnMut(&str),
) -> Report {
    let mut c = Coldplug::new(sys, also, settle);
    c.load(loader, log);
    c.settle(loader, log);
    c.report(loader)
}

/// Submit `names` and load until nothing is left.
pub(super) fn load_all<K: Kernel>(l: &mut Loader<'_, K>, names: &[String]) {
    l.submit(names);
    while l.busy() {
        l.pump(None);
    }
}

/// A device `name` on `bus` under the sysfs root `sys`, with its modalias.
pub(super) fn put(sys: &Path, bus: &str, name: &str, alias: &str) {
    let d = sys.join("bus").join(bus).join("devices").join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("modalias"), format!("{alias}\n")).unwrap();
}

/// A block device `name` in `sys/block` whose sysfs path is `target`.
pub(super) fn disk(sys: &Path, name: &str, target: &str) {
    std::os::unix::fs::symlink(target, sys.join("block").join(name)).unwrap();
}

/// A sysfs root under `t` holding an xHCI controller and an empty `block` directory.
pub(super) fn xhci_host(t: &TempDir) -> PathBuf {
    let sys = t.0.join("sys");
    std::fs::create_dir_all(sys.join("block")).unwrap();
    put(
        &sys,
        "pci",
        "0000:00:04.0",
        "pci:v00001B36d0000000Dsv00001AF4sd00001100bc0Csc03i30",
    );
    sys
}

/// A USB mass-storage interface on that controller (as xhci_pci's probe
/// makes it appear).
pub(super) fn usb_storage_interface(sys: &Path) {
    put(
        sys,
        "usb",
        "2-1:1.0",
        "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00",
    );
}

pub(super) fn quick() -> Settle {
    Settle {
        poll: Duration::ZERO,
        quiet: Duration::ZERO,
        limit: Duration::from_secs(60),
        usb_host_grace: Duration::ZERO,
        usb_disk_wait: Duration::ZERO,
    }
}

/// Fast polls and a short quiet time, with a long wait for USB disks:
/// for the tests where a USB device comes later than the quiet time.
pub(super) fn usb_waiting() -> Settle {
    Settle {
        poll: Duration::from_millis(10),
        quiet: Duration::from_millis(50),
        usb_disk_wait: Duration::from_secs(20),
        ..quick()
    }
}

/// A hub under `sys`: its device (`maxchild`, `busnum`, `devnum`) and its
/// ports under its interface; `attached` ports have a device.
pub(super) fn hub(sys: &Path, name: &str, bus: u32, dev: u32, ports: u32, attached: &[u32]) {
    let d = sys.join("bus/usb/devices").join(name);
    for (f, v) in [("maxchild", ports), ("busnum", bus), ("devnum", dev)] {
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(f), format!("{v}\n")).unwrap();
    }
    // The kernel's names: a root hub `usb2` has the interface `2-0:1.0`.
    let iface = match name.strip_prefix("usb") {
        Some(n) => format!("{n}-0:1.0"),
        None => format!("{name}:1.0"),
    };
    for p in 1..=ports {
        let port = d.join(format!("{iface}/{name}-port{p}"));
        std::fs::create_dir_all(&port).unwrap();
        if attached.contains(&p) {
            std::fs::create_dir_all(port.join("device")).unwrap();
        }
    }
}
