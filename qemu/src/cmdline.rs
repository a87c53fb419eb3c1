//! QEMU command lines, built from small pure functions (after danobi/vmtest
//! `src/qemu.rs`): each returns the arguments for one concern, and
//! [`command_line`] puts them together. Nothing here touches the file system.

use std::path::{Path, PathBuf};

pub use crate::chipset::Chipset;
use crate::disk::{DiskSpec, Transport};
use crate::net::{self, Net};

/// The QEMU binary.
pub const QEMU: &str = "qemu-system-x86_64";
/// OVMF firmware code and the variable store template (Debian's `ovmf`).
pub const OVMF_CODE: &str = "/usr/share/OVMF/OVMF_CODE_4M.fd";
pub const OVMF_VARS: &str = "/usr/share/OVMF/OVMF_VARS_4M.fd";
/// OVMF built for Secure Boot (it needs SMM, so the q35 machine) and a variable store with
/// Microsoft's keys enrolled and Secure Boot on, as on a server out of the box.
pub const OVMF_CODE_SECBOOT: &str = "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd";
pub const OVMF_VARS_MS: &str = "/usr/share/OVMF/OVMF_VARS_4M.ms.fd";
/// SATA ports per AHCI controller.
const AHCI_PORTS: usize = 6;
/// The serial QEMU gives the boot stick.
pub const STICK_SERIAL: &str = "BOOTBENCH-STICK";

/// The accelerator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accel {
    Tcg,
    Kvm,
}

impl Accel {
    pub fn name(self) -> &'static str {
        match self {
            Accel::Tcg => "tcg",
            Accel::Kvm => "kvm",
        }
    }
}

/// How the guest boots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Boot {
    /// `-kernel -initrd -append`, no firmware boot loader.
    Direct {
        kernel: PathBuf,
        initrd: Option<PathBuf>,
        append: String,
    },
    /// OVMF from a pflash pair, then the stick's EFI boot loader. With
    /// `secure_boot`, the machine is q35 with SMM and the pflash is secure
    /// (what OVMF's Secure Boot build needs); the variable store decides
    /// whether Secure Boot is on.
    Uefi {
        code: PathBuf,
        vars: PathBuf,
        secure_boot: bool,
    },
    /// QEMU's own BIOS (SeaBIOS), then the stick's legacy boot code (syslinux).
    Bios,
}

/// A disk with its QEMU drive id and backing file resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attached {
    pub spec: DiskSpec,
    /// Backing file (raw).
    pub file: PathBuf,
    /// blkdebug config file when the spec has faults.
    pub blkdebug: Option<PathBuf>,
}

/// Everything one boot needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// The machine type (a Secure Boot boot is q35 whatever this says).
    pub chipset: Chipset,
    pub accel: Accel,
    pub memory_mib: u32,
    pub cpus: u32,
    pub serial_log: PathBuf,
    /// More serial ports (COM2, COM3, ...), each logged to its file: a
    /// server's BMC takes serial-over-LAN from COM2.
    pub extra_serials: Vec<PathBuf>,
    pub boot: Boot,
    /// The boot stick (USB, bootindex 0), if any. Required for UEFI boots.
    pub stick: Option<PathBuf>,
    /// Attach the stick read-only (QEMU `readonly=on`: a write-protected stick).
    pub stick_readonly: bool,
    /// A reboot of the guest resets the machine, as a server's does: the
    /// firmware, the kernel and the initramfs start again and the disks keep
    /// what they hold (an NVMe ZNS namespace its zones' states and write
    /// pointers). Without it (the default) QEMU exits instead (`-no-reboot`),
    /// and a panicking guest, which reboots at once (`panic=-1`), ends QEMU.
    pub reboots: bool,
    pub disks: Vec<Attached>,
    /// A NIC on QEMU's restricted user-mode network (a network boot when it boots first).
    pub net: Option<Net>,
    /// The machine's serial number in its DMI system information (`-smbios type=1,serial=`):
    /// the guest reads it as `product_serial`, which names its results (`{machine}`).
    pub system_serial: Option<String>,
    /// NUMA nodes for the guest ([`crate::numa`]); `None`: one node.
    pub numa: Option<crate::numa::Numa>,
    /// A TPM 2.0 on the CRB interface, played by a running swtpm whose
    /// control channel is this Unix socket ([`crate::tpm`]); `None`: no TPM.
    pub tpm: Option<PathBuf>,
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

/// Machine, accelerator, memory, CPUs; no default devices, no display, exit
/// instead of rebooting.
pub fn base_args(accel: Accel, memory_mib: u32, cpus: u32) -> Vec<String> {
    base_args_on("pc", accel, memory_mib, cpus)
}

/// [`base_args`] on the machine type `machine`.
fn base_args_on(machine: &str, accel: Accel, memory_mib: u32, cpus: u32) -> Vec<String> {
    let mut v = strings(&["-nodefaults", "-machine", machine, "-accel", accel.name()]);
    if accel == Accel::Kvm {
        v.extend(strings(&["-cpu", "host"]));
    }
    v.extend([
        "-m".to_owned(),
        memory_mib.to_string(),
        "-smp".to_owned(),
        cpus.to_string(),
        "-display".to_owned(),
        "none".to_owned(),
        "-no-reboot".to_owned(),
    ]);
    v
}

/// The first serial port (ttyS0) into a file.
pub fn serial_args(log: &Path) -> Vec<String> {
    vec!["-serial".to_owned(), format!("file:{}", log.display())]
}

/// The kernel and initramfs, or the OVMF pflash pair.
pub fn boot_args(boot: &Boot) -> Vec<String> {
    match boot {
        Boot::Direct { kernel, initrd, append } => {
            let mut v = vec!["-kernel".to_owned(), kernel.display().to_string()];
            if let Some(i) = initrd {
                v.extend(["-initrd".to_owned(), i.display().to_string()]);
            }
            v.extend(["-append".to_owned(), append.clone()]);
            v
        }
        Boot::Uefi {
            code,
            vars,
            secure_boot,
        } => {
            let mut v = Vec::new();
            if *secure_boot {
                v.extend(strings(&["-global", "driver=cfi.pflash01,property=secure,value=on"]));
            }
            v.extend([
                "-drive".to_owned(),
                format!("if=pflash,format=raw,unit=0,readonly=on,file={}", code.display()),
                "-drive".to_owned(),
                format!("if=pflash,format=raw,unit=1,file={}", vars.display()),
            ]);
            v
        }
        Boot::Bios => Vec::new(),
    }
}

/// OVMF's code and the template of its variable store: the Secure Boot
/// build with Microsoft's keys enrolled (Secure Boot on), or the plain pair.
pub fn ovmf(secure_boot: bool) -> (&'static str, &'static str) {
    if secure_boot {
        (OVMF_CODE_SECBOOT, OVMF_VARS_MS)
    } else {
        (OVMF_CODE, OVMF_VARS)
    }
}

/// The machine type of a boot: q35 with SMM for OVMF's Secure Boot build,
/// else `chipset`'s.
pub fn machine_type(boot: &Boot, chipset: Chipset) -> &'static str {
    match (boot, chipset) {
        (Boot::Uefi { secure_boot: true, .. }, _) => "q35,smm=on",
        (_, Chipset::Q35) => "q35",
        (_, Chipset::Pc) => "pc",
    }
}

/// QEMU option values separate with commas; a literal comma is doubled.
fn escape(value: &str) -> String {
    value.replace(',', ",,")
}

/// The `-drive` value of disk `id`: raw, not attached to a bus by itself,
/// with its throttles and, when it has faults, blkdebug in between.
pub fn drive_value(id: &str, disk: &Attached) -> String {
    let mut v = format!("if=none,id={id},format=raw");
    match &disk.blkdebug {
        Some(config) => v.push_str(&format!(
            ",file.driver=blkdebug,file.config={},file.image.filename={}",
            escape(&config.display().to_string()),
            escape(&disk.file.display().to_string())
        )),
        None => v.push_str(&format!(",file={}", escape(&disk.file.display().to_string()))),
    }
    if let Some(bps) = disk.spec.throttle.bps_total {
        v.push_str(&format!(",throttling.bps-total={bps}"));
    }
    if let Some(iops) = disk.spec.throttle.iops_total {
        v.push_str(&format!(",throttling.iops-total={iops}"));
    }
    v
}

/// The block-size properties of `spec` (`,logical_block_size=...`), for any
/// QEMU block device.
fn block_size_props(spec: &DiskSpec) -> String {
    let mut v = String::new();
    if let Some(b) = spec.logical_block_size {
        v.push_str(&format!(",logical_block_size={b}"));
    }
    if let Some(b) = spec.physical_block_size {
        v.push_str(&format!(",physical_block_size={b}"));
    }
    v
}

/// The QEMU id of the `n`-th controller of a SCSI transport (`megasas0`).
fn scsi_controller_id(t: Transport, n: usize) -> String {
    format!("{}{n}", t.name())
}

/// The `-device` value that shows drive `id` to the guest as `spec` says.
/// `port` is the disk's index among the disks of its transport (for the
/// AHCI bus, and the SCSI controller and target id).
pub fn device_value(id: &str, spec: &DiskSpec, port: usize) -> String {
    let mut v = device_base(id, spec, port);
    v.push_str(&block_size_props(spec));
    if let Some(z) = spec.zns {
        // QEMU 7.2's nvme-ns: a zoned namespace; a capacity of 0 is the
        // zone size, limits of 0 none.
        v.push_str(&format!(
            ",zoned=true,zoned.zone_size={},zoned.zone_capacity={},zoned.max_open={},zoned.max_active={}",
            z.zone_size, z.zone_capacity, z.max_open, z.max_active
        ));
    }
    v
}

fn device_base(id: &str, spec: &DiskSpec, port: usize) -> String {
    let serial = escape(spec.guest_serial.as_deref().unwrap_or(&spec.serial));
    if let Some(per) = spec.transport.scsi_targets() {
        let bus = scsi_controller_id(spec.transport, port / per);
        // UAS addresses its disks by LUN (target 0); the other HBAs by target id.
        let (target, lun) = if spec.transport == Transport::Uas {
            (0, port % per)
        } else {
            (port % per, 0)
        };
        let mut v = format!("scsi-hd,drive={id},bus={bus}.0,scsi-id={target},lun={lun},serial={serial}");
        if let Some(m) = &spec.model {
            v.push_str(&format!(",product={}", escape(m)));
        }
        if let Some(r) = spec.rotation_rate {
            v.push_str(&format!(",rotation_rate={r}"));
        }
        if let Some(w) = spec.wwn {
            v.push_str(&format!(",wwn=0x{w:016x}"));
        }
        return v;
    }
    match spec.transport {
        Transport::Sata => {
            let mut v = format!(
                "ide-hd,drive={id},bus=ahci{}.{},serial={serial}",
                port / AHCI_PORTS,
                port % AHCI_PORTS
            );
            if let Some(m) = &spec.model {
                v.push_str(&format!(",model={}", escape(m)));
            }
            if let Some(r) = spec.rotation_rate {
                v.push_str(&format!(",rotation_rate={r}"));
            }
            v
        }
        Transport::Nvme => match spec.nsid {
            // Block sizes are the namespace's (the controller's apply to its own namespace only).
            Some(n) => format!("nvme-ns,drive={id},bus={},nsid={n}", nvme_controller_id(spec)),
            None => match spec.node {
                Some(_) => format!("nvme,drive={id},serial={serial},bus={}", crate::numa::port_id(id)),
                None => format!("nvme,drive={id},serial={serial}"),
            },
        },
        Transport::Virtio => format!("virtio-blk-pci,drive={id},serial={serial}"),
        Transport::Usb => format!("usb-storage,bus=xhci.0,drive={id},serial={serial}"),
        Transport::VirtioScsi | Transport::Megasas | Transport::Mptsas | Transport::Lsi | Transport::Uas => {
            unreachable!("SCSI transports are handled above")
        }
    }
}

/// The QEMU id of the NVMe controller whose namespaces share `spec`'s
/// serial (serials are `[A-Za-z0-9._-]`, so the id is a valid one).
fn nvme_controller_id(spec: &DiskSpec) -> String {
    format!("nvme-{}", spec.serial)
}

/// The SCSI transports, in the order their controllers are added.
const SCSI_TRANSPORTS: [Transport; 5] = [
    Transport::VirtioScsi,
    Transport::Megasas,
    Transport::Mptsas,
    Transport::Lsi,
    Transport::Uas,
];

/// Controllers the disks need: one AHCI per six SATA disks, one xHCI when
/// anything is on USB (the stick and UAS disks included), one SCSI HBA of a
/// transport per [`Transport::scsi_targets`] disks of it (a `usb-uas` on the
/// xHCI).
pub fn controller_args(disks: &[DiskSpec], stick: bool) -> Vec<String> {
    let count = |t: Transport| disks.iter().filter(|d| d.transport == t).count();
    let mut v = Vec::new();
    for i in 0..count(Transport::Sata).div_ceil(AHCI_PORTS) {
        v.extend(["-device".to_owned(), format!("ahci,id=ahci{i}")]);
    }
    if stick || count(Transport::Usb) > 0 || count(Transport::Uas) > 0 {
        v.extend(strings(&["-device", "qemu-xhci,id=xhci"]));
    }
    for t in SCSI_TRANSPORTS {
        let (Some(driver), Some(per)) = (t.scsi_controller(), t.scsi_targets()) else {
            continue;
        };
        for i in 0..count(t).div_ceil(per) {
            let bus = if t == Transport::Uas { ",bus=xhci.0" } else { "" };
            v.extend([
                "-device".to_owned(),
                format!("{driver},id={}{bus}", scsi_controller_id(t, i)),
            ]);
        }
    }
    v
}

/// The boot stick: a raw image on USB; first in the firmware's boot order
/// when `boot_from_it` (a direct kernel boot takes bootindex 0 itself);
/// write-protected when `readonly`.
pub fn stick_args(image: &Path, boot_from_it: bool, readonly: bool) -> Vec<String> {
    let mut device = format!("usb-storage,bus=xhci.0,drive=stick,serial={STICK_SERIAL},removable=on");
    if boot_from_it {
        device.push_str(",bootindex=0");
    }
    let mut drive = format!(
        "if=none,id=stick,format=raw,file={}",
        escape(&image.display().to_string())
    );
    if readonly {
        drive.push_str(",readonly=on");
    }
    vec!["-drive".to_owned(), drive, "-device".to_owned(), device]
}

/// `-drive`/`-device` pairs for every disk, drive ids `d0`, `d1`, ...;
/// the disks on a NUMA node (`node=`) last, behind their expander bridges:
/// QEMU 7.2 plugs a device given no `bus=` into the PCIe bus made last, and
/// a `pxb-pcie` takes bridges only ("PCI: Only PCI/PCIe bridges can be
/// plugged into pxb-pcie").
pub fn disk_args(disks: &[Attached]) -> Vec<String> {
    let mut v = Vec::new();
    let mut controllers: Vec<String> = Vec::new();
    let mut expanders: Vec<u32> = Vec::new();
    let (main, on_nodes): (Vec<_>, Vec<_>) = disks.iter().enumerate().partition(|(_, d)| d.spec.node.is_none());
    for (i, disk) in main.into_iter().chain(on_nodes) {
        let id = format!("d{i}");
        if let Some(node) = disk.spec.node {
            v.extend(crate::numa::expander_args(node, &id, i, &mut expanders));
        }
        if disk.spec.transport == Transport::Nvme && disk.spec.nsid.is_some() {
            // The namespaces' controller, before its first namespace.
            let ctrl = nvme_controller_id(&disk.spec);
            if !controllers.contains(&ctrl) {
                v.extend([
                    "-device".to_owned(),
                    format!("nvme,id={ctrl},serial={}", escape(&disk.spec.serial)),
                ]);
                controllers.push(ctrl);
            }
        }
        v.extend(["-drive".to_owned(), drive_value(&id, disk)]);
        let port = disks[..i]
            .iter()
            .filter(|d| d.spec.transport == disk.spec.transport)
            .count();
        let mut device = device_value(&id, &disk.spec, port);
        if let Some(l) = disk.spec.link {
            // A root port of its own, its link limited (q35 only).
            v.extend(["-device".to_owned(), root_port_value(&id, i, l)]);
            device.push_str(&format!(",bus=rp-{id}"));
        }
        v.extend(["-device".to_owned(), device]);
    }
    v
}

/// A `pcie-root-port` for disk `id` (the `i`th), its link limited to `l`
/// (`x-speed`, `x-width`); chassis 1, slot `i + 1`.
fn root_port_value(id: &str, i: usize, l: crate::disk::PcieLimit) -> String {
    format!(
        "pcie-root-port,id=rp-{id},chassis=1,slot={},x-speed={},x-width={}",
        i + 1,
        l.speed,
        l.width
    )
}

/// The whole argument list (without the program name).
pub fn command_line(m: &Machine) -> Vec<String> {
    let specs: Vec<DiskSpec> = m.disks.iter().map(|d| d.spec.clone()).collect();
    let mut v = base_args_on(machine_type(&m.boot, m.chipset), m.accel, m.memory_mib, m.cpus);
    if m.reboots {
        v.retain(|a| a != "-no-reboot");
    }
    if let Some(n) = m.numa {
        v.extend(crate::numa::numa_args(n, m.cpus, m.memory_mib));
    }
    v.extend(serial_args(&m.serial_log));
    for s in &m.extra_serials {
        v.extend(serial_args(s));
    }
    v.extend(boot_args(&m.boot));
    v.extend(controller_args(&specs, m.stick.is_some()));
    if let Some(stick) = &m.stick {
        v.extend(stick_args(
            stick,
            !matches!(m.boot, Boot::Direct { .. }),
            m.stick_readonly,
        ));
    }
    v.extend(disk_args(&m.disks));
    if let Some(n) = &m.net {
        v.extend(net::net_args(n));
    }
    if let Some(s) = &m.system_serial {
        v.extend(smbios_args(s));
    }
    if let Some(socket) = &m.tpm {
        v.extend(tpm_args(socket));
    }
    v
}

/// A TPM 2.0 on the CRB interface (what servers' firmware TPMs present),
/// backed by swtpm listening on the Unix socket `socket`.
pub fn tpm_args(socket: &Path) -> Vec<String> {
    vec![
        "-chardev".to_owned(),
        format!("socket,id=chrtpm,path={}", escape(&socket.display().to_string())),
        "-tpmdev".to_owned(),
        "emulator,id=tpm0,chardev=chrtpm".to_owned(),
        "-device".to_owned(),
        "tpm-crb,tpmdev=tpm0".to_owned(),
    ]
}

/// The DMI system serial: QEMU's option syntax doubles a comma inside a value.
pub fn smbios_args(serial: &str) -> Vec<String> {
    vec![
        "-smbios".to_owned(),
        format!("type=1,serial={}", serial.replace(',', ",,")),
    ]
}

/// The kernel command line for a direct boot: serial console, power off
/// (not reboot) on panic via -no-reboot, the image's driver options
/// ([`bootbench_image::usb::DRIVER_OPTIONS`]: NVMe poll queues, as every
/// boot of the image has them), and any extra words.
pub fn default_append(extra: &str) -> String {
    let base = format!(
        "console=ttyS0,115200 panic=-1 loglevel=4 {}",
        bootbench_image::usb::DRIVER_OPTIONS
    );
    if extra.trim().is_empty() {
        base
    } else {
        format!("{base} {}", extra.trim())
    }
}

/// The command line as a shell would show it (for logs), quoting what needs it.
pub fn shell_words(program: &str, args: &[String]) -> String {
    let mut out = program.to_owned();
    for a in args {
        out.push(' ');
        if !a.is_empty()
            && a.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_=,.:/@+".contains(&b))
        {
            out.push_str(a);
        } else {
            out.push('\'');
            out.push_str(&a.replace('\'', "'\\''"));
            out.push('\'');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attached(spec: &str) -> Attached {
        let spec: DiskSpec = spec.parse().unwrap();
        Attached {
            file: PathBuf::from(format!("/d/{}.img", spec.serial)),
            spec,
            blkdebug: None,
        }
    }

    /// The value following the n-th occurrence of `flag`.
    fn values<'a>(args: &'a [String], flag: &str) -> Vec<&'a str> {
        args.windows(2)
            .filter(|w| w[0] == flag)
            .map(|w| w[1].as_str())
            .collect()
    }

    #[test]
    fn base_is_minimal_and_exits_instead_of_rebooting() {
        let tcg = base_args(Accel::Tcg, 1024, 2);
        assert_eq!(
            tcg,
            strings(&[
                "-nodefaults",
                "-machine",
                "pc",
                "-accel",
                "tcg",
                "-m",
                "1024",
                "-smp",
                "2",
                "-display",
                "none",
                "-no-reboot"
            ])
        );
        let kvm = base_args(Accel::Kvm, 512, 1);
        assert_eq!(values(&kvm, "-accel"), ["kvm"]);
        assert_eq!(values(&kvm, "-cpu"), ["host"]);
        assert_eq!(values(&kvm, "-m"), ["512"]);
    }

    #[test]
    fn serial_goes_to_the_file() {
        assert_eq!(
            serial_args(Path::new("/o/serial.log")),
            strings(&["-serial", "file:/o/serial.log"])
        );
    }

    #[test]
    fn direct_and_uefi_boot() {
        let direct = Boot::Direct {
            kernel: "/o/vmlinuz".into(),
            initrd: Some("/o/initramfs.img".into()),
            append: default_append("bootbench.profile=quick"),
        };
        assert_eq!(
            boot_args(&direct),
            strings(&[
                "-kernel",
                "/o/vmlinuz",
                "-initrd",
                "/o/initramfs.img",
                "-append",
                "console=ttyS0,115200 panic=-1 loglevel=4 nvme.poll_queues=1 bootbench.profile=quick"
            ])
        );
        let uefi = Boot::Uefi {
            code: OVMF_CODE.into(),
            vars: "/o/vars.fd".into(),
            secure_boot: false,
        };
        assert_eq!(
            values(&boot_args(&uefi), "-drive"),
            [
                "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd",
                "if=pflash,format=raw,unit=1,file=/o/vars.fd"
            ]
        );
        assert!(values(&boot_args(&uefi), "-global").is_empty());
        assert_eq!(machine_type(&uefi, Chipset::Pc), "pc");
        assert_eq!(machine_type(&direct, Chipset::Pc), "pc");
        assert_eq!(
            (boot_args(&Boot::Bios), machine_type(&Boot::Bios, Chipset::default())),
            (vec![], "pc")
        );
        assert_eq!(machine_type(&direct, Chipset::Q35), "q35");
        assert_eq!(machine_type(&Boot::Bios, Chipset::Q35), "q35");
    }

    #[test]
    fn secure_boot_needs_q35_with_smm_and_a_secure_flash() {
        let m = Machine {
            chipset: Chipset::Pc,
            accel: Accel::Tcg,
            memory_mib: 1024,
            cpus: 2,
            serial_log: "/o/serial.log".into(),
            extra_serials: vec![],
            system_serial: None,
            boot: Boot::Uefi {
                code: OVMF_CODE_SECBOOT.into(),
                vars: "/o/vars.fd".into(),
                secure_boot: true,
            },
            stick: Some("/o/bootbench.img".into()),
            stick_readonly: false,
            reboots: false,
            disks: vec![attached("virtio,serial=V1")],
            net: None,
            numa: None,
            tpm: None,
        };
        let args = command_line(&m);
        assert_eq!(values(&args, "-machine"), ["q35,smm=on"]);
        assert_eq!(
            values(&args, "-global"),
            ["driver=cfi.pflash01,property=secure,value=on"]
        );
        assert_eq!(
            values(&args, "-drive")[0],
            "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd"
        );
        // SeaBIOS boots the stick first too, with no firmware files.
        let bios = command_line(&Machine {
            boot: Boot::Bios,
            ..m.clone()
        });
        assert_eq!(values(&bios, "-machine"), ["pc"]);
        // Secure Boot needs q35 with SMM, whatever the chipset asked.
        let asked_pc = command_line(&Machine {
            chipset: Chipset::Pc,
            ..m.clone()
        });
        assert_eq!(values(&asked_pc, "-machine"), ["q35,smm=on"]);
        // A machine that reboots as a server does: no -no-reboot; else QEMU exits.
        assert!(args.iter().any(|a| a == "-no-reboot"), "{args:?}");
        let resets = command_line(&Machine {
            reboots: true,
            ..m.clone()
        });
        assert!(!resets.iter().any(|a| a == "-no-reboot"), "{resets:?}");
        let q35 = command_line(&Machine {
            chipset: Chipset::Q35,
            boot: Boot::Bios,
            ..m
        });
        assert_eq!(values(&q35, "-machine"), ["q35"]);
        assert!(values(&bios, "-drive").iter().all(|d| !d.contains("pflash")));
        assert!(values(&bios, "-device")
            .iter()
            .any(|d| d.contains("drive=stick") && d.ends_with(",bootindex=0")));
    }

    #[test]
    fn devices_carry_identity() {
        let cases: &[(&str, usize, &str)] = &[
            (
                "sata,serial=S1,model=ACME HDD,rotation=7200",
                0,
                "ide-hd,drive=d0,bus=ahci0.0,serial=S1,model=ACME HDD,rotation_rate=7200",
            ),
            ("sata,serial=S7", 7, "ide-hd,drive=d0,bus=ahci1.1,serial=S7"),
            ("nvme,serial=N1", 0, "nvme,drive=d0,serial=N1"),
            ("virtio,serial=V1", 0, "virtio-blk-pci,drive=d0,serial=V1"),
            ("usb,serial=U1", 0, "usb-storage,bus=xhci.0,drive=d0,serial=U1"),
            // A hostile serial: line breaks as they are, commas doubled.
            (
                "usb,serial=U2,guest_serial=A%0AB%2CC",
                0,
                "usb-storage,bus=xhci.0,drive=d0,serial=A\nB,,C",
            ),
        ];
        for (spec, port, want) in cases {
            assert_eq!(device_value("d0", &spec.parse().unwrap(), *port), *want, "{spec}");
        }
    }

    #[test]
    fn drives_carry_throttles_and_faults() {
        let plain = attached("nvme,serial=N1");
        assert_eq!(drive_value("d1", &plain), "if=none,id=d1,format=raw,file=/d/N1.img");
        let throttled = attached("nvme,serial=N1,bps=20M,iops=100");
        assert_eq!(
            drive_value("d1", &throttled),
            "if=none,id=d1,format=raw,file=/d/N1.img,throttling.bps-total=20971520,throttling.iops-total=100"
        );
        let mut faulty = attached("virtio,serial=V,fault=read_aio:5:8192");
        faulty.blkdebug = Some("/d/V.blkdebug".into());
        faulty.file = "/d/a,b.img".into();
        assert_eq!(
            drive_value("d2", &faulty),
            "if=none,id=d2,format=raw,file.driver=blkdebug,file.config=/d/V.blkdebug,file.image.filename=/d/a,,b.img"
        );
    }

    #[test]
    fn controllers_only_when_needed() {
        let specs = |list: &[&str]| -> Vec<DiskSpec> { list.iter().map(|s| s.parse().unwrap()).collect() };
        assert!(controller_args(&specs(&["nvme,serial=A", "virtio,serial=B"]), false).is_empty());
        assert_eq!(controller_args(&[], true), strings(&["-device", "qemu-xhci,id=xhci"]));
        let seven: Vec<String> = (0..7).map(|i| format!("sata,serial=S{i}")).collect();
        let seven: Vec<&str> = seven.iter().map(String::as_str).collect();
        assert_eq!(
            values(&controller_args(&specs(&seven), false), "-device"),
            ["ahci,id=ahci0", "ahci,id=ahci1"]
        );
        assert_eq!(
            values(&controller_args(&specs(&["usb,serial=U"]), false), "-device"),
            ["qemu-xhci,id=xhci"]
        );
    }

    #[test]
    fn sata_ports_count_only_sata_disks() {
        let disks = [
            attached("nvme,serial=N"),
            attached("sata,serial=A"),
            attached("sata,serial=B"),
        ];
        let args = disk_args(&disks);
        let devices = values(&args, "-device");
        assert_eq!(
            devices,
            [
                "nvme,drive=d0,serial=N",
                "ide-hd,drive=d1,bus=ahci0.0,serial=A",
                "ide-hd,drive=d2,bus=ahci0.1,serial=B"
            ]
        );
        assert_eq!(values(&args, "-drive").len(), 3);
    }

    /// Each SCSI transport: its HBA once (a second past its target ids), its
    /// disks as `scsi-hd` with the serial, the INQUIRY product and the block
    /// sizes; UAS by LUN on the xHCI.
    #[test]
    fn scsi_disks_hang_off_their_controllers() {
        let mut list = vec![
            "megasas,serial=M1,model=E2E MEGA".to_owned(),
            "mptsas,serial=P1,wwn=5000c50015ea71ac".to_owned(),
            "virtio-scsi,serial=V1,pbs=4096".to_owned(),
            "uas,serial=U1".to_owned(),
            "uas,serial=U2,lbs=4096".to_owned(),
        ];
        list.extend((0..8).map(|i| format!("lsi,serial=L{i}")));
        let disks: Vec<Attached> = list.iter().map(|s| attached(s)).collect();
        let specs: Vec<DiskSpec> = disks.iter().map(|d| d.spec.clone()).collect();
        assert_eq!(
            values(&controller_args(&specs, false), "-device"),
            [
                "qemu-xhci,id=xhci",
                "virtio-scsi-pci,id=virtio-scsi0",
                "megasas-gen2,id=megasas0",
                "mptsas1068,id=mptsas0",
                "lsi53c895a,id=lsi0",
                "lsi53c895a,id=lsi1",
                "usb-uas,id=uas0,bus=xhci.0"
            ]
        );
        let args = disk_args(&disks);
        let devices = values(&args, "-device");
        assert_eq!(
            devices[..5],
            [
                "scsi-hd,drive=d0,bus=megasas0.0,scsi-id=0,lun=0,serial=M1,product=E2E MEGA",
                "scsi-hd,drive=d1,bus=mptsas0.0,scsi-id=0,lun=0,serial=P1,wwn=0x5000c50015ea71ac",
                "scsi-hd,drive=d2,bus=virtio-scsi0.0,scsi-id=0,lun=0,serial=V1,physical_block_size=4096",
                "scsi-hd,drive=d3,bus=uas0.0,scsi-id=0,lun=0,serial=U1",
                "scsi-hd,drive=d4,bus=uas0.0,scsi-id=0,lun=1,serial=U2,logical_block_size=4096",
            ]
        );
        // The lsi53c895a's own id is 7: the eighth disk goes to a second one.
        assert_eq!(devices[11], "scsi-hd,drive=d11,bus=lsi0.0,scsi-id=6,lun=0,serial=L6");
        assert_eq!(devices[12], "scsi-hd,drive=d12,bus=lsi1.0,scsi-id=0,lun=0,serial=L7");
    }

    #[test]
    fn a_limited_link_puts_the_nvme_drive_behind_a_root_port_of_its_own() {
        let disks = [attached("sata,serial=S1"), attached("nvme,serial=N1,link=2_5x1")];
        let args = disk_args(&disks);
        let devices = values(&args, "-device");
        assert_eq!(
            devices[1..],
            [
                "pcie-root-port,id=rp-d1,chassis=1,slot=2,x-speed=2_5,x-width=1",
                "nvme,drive=d1,serial=N1,bus=rp-d1",
            ]
        );
        for (spec, why) in [
            ("nvme,serial=N,link=3x1", "SPEEDxWIDTH"),
            ("nvme,serial=N,link=16x64", "SPEEDxWIDTH"),
            ("virtio,serial=N,link=2_5x1", "nvme disks without ns="),
            ("nvme,serial=N,ns=1,link=2_5x1", "nvme disks without ns="),
        ] {
            let e = spec.parse::<DiskSpec>().expect_err(spec);
            assert!(e.0.contains(why), "{spec}: {e}");
        }
    }

    #[test]
    fn block_sizes_reach_every_device() {
        let cases: &[(&str, &str)] = &[
            (
                "nvme,serial=N,lbs=4096,pbs=4096",
                "nvme,drive=d0,serial=N,logical_block_size=4096,physical_block_size=4096",
            ),
            (
                "nvme,serial=N,ns=2,lbs=4096",
                "nvme-ns,drive=d0,bus=nvme-N,nsid=2,logical_block_size=4096",
            ),
            (
                "sata,serial=S,pbs=4096",
                "ide-hd,drive=d0,bus=ahci0.0,serial=S,physical_block_size=4096",
            ),
            (
                "virtio,serial=V,lbs=4096",
                "virtio-blk-pci,drive=d0,serial=V,logical_block_size=4096",
            ),
            (
                "usb,serial=U,pbs=4096",
                "usb-storage,bus=xhci.0,drive=d0,serial=U,physical_block_size=4096",
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(device_value("d0", &spec.parse().unwrap(), 0), *want, "{spec}");
        }
    }

    /// A zoned NVMe namespace: QEMU's nvme-ns with its zone properties;
    /// zones that do not fit the namespace, or a zoned disk that is not a
    /// namespace, are refused.
    #[test]
    fn a_zoned_namespace_has_its_zones() {
        let spec = "nvme,size=64M,serial=Z,ns=1,zone_size=4M,zone_capacity=3M,max_open=4,max_active=6";
        assert_eq!(
            device_value("d0", &spec.parse().unwrap(), 0),
            "nvme-ns,drive=d0,bus=nvme-Z,nsid=1,zoned=true,zoned.zone_size=4194304,zoned.zone_capacity=3145728,zoned.max_open=4,zoned.max_active=6"
        );
        for bad in [
            "nvme,size=64M,serial=Z,zone_size=4M",
            "sata,size=64M,serial=Z,zone_size=4M",
            "nvme,size=64M,serial=Z,ns=1,zone_size=5M",
            "nvme,size=64M,serial=Z,ns=1,zone_size=4M,zone_capacity=5M",
            "nvme,size=64M,serial=Z,ns=1,zone_size=4M,max_open=x",
        ] {
            assert!(bad.parse::<DiskSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn nvme_namespaces_share_their_controller() {
        let disks = [
            attached("nvme,serial=NS,ns=1"),
            attached("nvme,serial=ONE"),
            attached("nvme,serial=NS,ns=2"),
        ];
        let args = disk_args(&disks);
        assert_eq!(
            values(&args, "-device"),
            [
                "nvme,id=nvme-NS,serial=NS",
                "nvme-ns,drive=d0,bus=nvme-NS,nsid=1",
                "nvme,drive=d1,serial=ONE",
                "nvme-ns,drive=d2,bus=nvme-NS,nsid=2"
            ]
        );
        assert_eq!(values(&args, "-drive").len(), 3);
        // Each namespace has a backing file of its own.
        let dir = std::path::Path::new("/d");
        assert_eq!(disks[0].spec.backing_file(dir), dir.join("NS-ns1.img"));
        assert_eq!(disks[2].spec.backing_file(dir), dir.join("NS-ns2.img"));
        assert!("sata,serial=S,ns=1".parse::<DiskSpec>().is_err());
        assert!("nvme,serial=S,ns=0".parse::<DiskSpec>().is_err());
    }

    /// `node=` puts an NVMe controller behind a root port of its node's
    /// expander bridge; the machine's nodes come before the devices.
    #[test]
    fn nvme_drives_on_numa_nodes() {
        let disks = [
            attached("nvme,serial=N1,node=1"),
            attached("nvme,serial=MAIN"),
            attached("nvme,serial=N0,node=0"),
        ];
        assert_eq!(
            values(&disk_args(&disks), "-device"),
            [
                "nvme,drive=d1,serial=MAIN",
                "pxb-pcie,id=pxb-node1,bus_nr=96,numa_node=1,bus=pcie.0",
                "pcie-root-port,id=numa-port-d0,bus=pxb-node1,chassis=64,slot=0",
                "nvme,drive=d0,serial=N1,bus=numa-port-d0",
                "pxb-pcie,id=pxb-node0,bus_nr=64,numa_node=0,bus=pcie.0",
                "pcie-root-port,id=numa-port-d2,bus=pxb-node0,chassis=66,slot=0",
                "nvme,drive=d2,serial=N0,bus=numa-port-d2"
            ]
        );
        assert!("virtio,serial=V,node=1".parse::<DiskSpec>().is_err());
        assert!("nvme,serial=S,ns=1,node=1".parse::<DiskSpec>().is_err());
        assert!("nvme,serial=S,node=x".parse::<DiskSpec>().is_err());
        let m = Machine {
            chipset: Chipset::Q35,
            accel: Accel::Tcg,
            memory_mib: 1024,
            cpus: 4,
            serial_log: "/o/serial.log".into(),
            extra_serials: vec![],
            system_serial: None,
            boot: Boot::Bios,
            stick: None,
            stick_readonly: false,
            reboots: false,
            disks: disks.to_vec(),
            net: None,
            numa: Some(crate::numa::Numa { nodes: 2 }),
            tpm: None,
        };
        let args = command_line(&m);
        assert_eq!(
            values(&args, "-numa"),
            [
                "node,nodeid=0,cpus=0-1,memdev=numa-mem0",
                "node,nodeid=1,cpus=2-3,memdev=numa-mem1"
            ]
        );
        let at = |flag: &str| args.iter().position(|a| a == flag).expect(flag);
        assert!(at("-numa") < at("-device"), "nodes before devices");
    }

    #[test]
    fn whole_uefi_machine() {
        let m = Machine {
            chipset: Chipset::Pc,
            accel: Accel::Tcg,
            memory_mib: 1024,
            cpus: 2,
            serial_log: "/o/serial.log".into(),
            extra_serials: vec!["/o/com2.log".into()],
            system_serial: Some("RACK,01".into()),
            boot: Boot::Uefi {
                code: OVMF_CODE.into(),
                vars: "/o/vars.fd".into(),
                secure_boot: false,
            },
            stick: Some("/o/bootbench.img".into()),
            stick_readonly: false,
            reboots: false,
            disks: vec![attached("sata,serial=S1"), attached("virtio,serial=V1")],
            net: None,
            numa: None,
            tpm: Some("/o/tpm,1/swtpm.sock".into()),
        };
        let args = command_line(&m);
        assert_eq!(args[0], "-nodefaults");
        assert_eq!(
            values(&args, "-chardev"),
            ["socket,id=chrtpm,path=/o/tpm,,1/swtpm.sock"]
        );
        assert_eq!(values(&args, "-tpmdev"), ["emulator,id=tpm0,chardev=chrtpm"]);
        assert_eq!(
            values(&args, "-device"),
            [
                "ahci,id=ahci0",
                "qemu-xhci,id=xhci",
                "usb-storage,bus=xhci.0,drive=stick,serial=BOOTBENCH-STICK,removable=on,bootindex=0",
                "ide-hd,drive=d0,bus=ahci0.0,serial=S1",
                "virtio-blk-pci,drive=d1,serial=V1",
                "tpm-crb,tpmdev=tpm0"
            ]
        );
        assert_eq!(values(&args, "-drive").len(), 5, "two pflash, the stick, two disks");
        assert_eq!(values(&args, "-serial"), ["file:/o/serial.log", "file:/o/com2.log"]);
        assert_eq!(values(&args, "-smbios"), ["type=1,serial=RACK,,01"], "a comma doubled");
    }

    #[test]
    fn stick_boots_first_only_under_firmware() {
        let uefi = stick_args(Path::new("/o/s.img"), true, false);
        assert_eq!(values(&uefi, "-drive"), ["if=none,id=stick,format=raw,file=/o/s.img"]);
        assert!(values(&uefi, "-device")[0].ends_with(",bootindex=0"));
        let direct = stick_args(Path::new("/o/s.img"), false, false);
        assert_eq!(
            values(&direct, "-device"),
            ["usb-storage,bus=xhci.0,drive=stick,serial=BOOTBENCH-STICK,removable=on"]
        );
        let protected = stick_args(Path::new("/o/s.img"), false, true);
        assert_eq!(
            values(&protected, "-drive"),
            ["if=none,id=stick,format=raw,file=/o/s.img,readonly=on"]
        );
    }

    #[test]
    fn shell_quoting() {
        let args = strings(&["-append", "console=ttyS0 panic=-1", "it's"]);
        assert_eq!(
            shell_words("qemu", &args),
            "qemu -append 'console=ttyS0 panic=-1' 'it'\\''s'"
        );
    }
}
