//! The result document: one per run, `"schema": "bootbench.result/1"`.
//!
//! Every figure is in bytes, bytes per second, or nanoseconds; the unit is in
//! the field name where it is not plain bytes. Figures that do not apply are
//! `None` (JSON `null`). `schema/bootbench.result-1.schema.json` describes the
//! same structure, and the tests validate real output against it.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::io::{Access, Op};
use crate::spec::{Params, Workload};
use crate::vocab::units::MB;
use alloc::format;
use core::fmt;

/// The engine of a step's queues: a queue describes itself
/// ([`crate::io::IoQueue::engine`]), so the type lives with the queues.
pub use crate::io::EngineInfo;

/// Declares a closed set of the result document: an enum of unit variants
/// whose serde names are the document's (`bench_core::vocab::names` reads them),
/// with `name()` and `Display` from serde.
macro_rules! closed_set {
    ($(#[$m:meta])* $vis:vis enum $name:ident ($case:literal) { $($(#[$vm:meta])* $v:ident,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = $case)]
        $vis enum $name { $($(#[$vm])* $v,)* }

        impl $name {
            /// Every value, in the order declared.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];

            /// Its name in the document: serde's.
            pub fn name(self) -> &'static str {
                crate::vocab::names::name_of(&self)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

closed_set! {
    /// How a run ended.
    pub enum RunStatus ("snake_case") {
        /// Every test ran.
        Ok,
        /// A target failed (absent, could not be opened, its I/O hung and
        /// was abandoned), or a stack could not be torn down, while the
        /// rest ran; or the config could not be run at all.
        Error,
        /// The user stopped it (SIGINT or SIGTERM).
        Interrupted,
    }
}

closed_set! {
    /// What a target is.
    pub enum TargetKind ("snake_case") {
        /// A block device.
        Block,
        /// A regular file.
        File,
        /// A simulated disk (`--simulate`).
        Simulated,
        /// A disk the config names that the machine lacks.
        Absent,
        /// An md array bootbench assembled.
        Md,
        /// A device-mapper layer bootbench set up.
        Dm,
    }
}

closed_set! {
    /// Whether a stack is an array or a layer.
    pub enum StackClass ("snake_case") {
        /// An md array.
        Md,
        /// A device-mapper layer.
        Dm,
    }
}

closed_set! {
    /// How the kernel runs a stack.
    pub enum StackMode ("kebab-case") {
        /// An md array started read-only, a dm table loaded with
        /// DM_READONLY_FLAG: whenever any disk beneath may not be written.
        ReadOnly,
        /// Both may write.
        ReadWrite,
    }
}

impl StackMode {
    /// Read-only unless `writable`.
    pub const fn of(writable: bool) -> StackMode {
        if writable {
            StackMode::ReadWrite
        } else {
            StackMode::ReadOnly
        }
    }
}

closed_set! {
    /// What a line of the analysis compares.
    pub enum AnalysisKind ("snake_case") {
        /// An md array, by its level's rule.
        Array,
        /// A dm layer, against the device beneath.
        Layer,
        /// A layer slow through the page cache with a smaller readahead
        /// than the device beneath.
        Readahead,
        /// The disks together against the sum of each alone.
        AllAtOnce,
        /// The sum of the disks' figures as disks are added (1, 2, 4, ...,
        /// all): where it stops growing.
        Scaling,
        /// A disk against the median of its model and firmware.
        Outlier,
    }
}

closed_set! {
    /// What a line of the health analysis says.
    pub enum HealthKind ("snake_case") {
        /// SMART status failed, or an NVMe critical warning.
        SmartFailed,
        /// An ATA attribute at or below its threshold.
        AttributeFailing,
        /// A watched counter rose during the run.
        CounterGained,
        /// The warning temperature reached.
        Temperature,
        /// A test's second half slower than its first.
        ThroughputDrop,
        /// A disk's I/O interrupts all served on other NUMA nodes than
        /// the ones its tests' threads ran on.
        IrqsRemote,
    }
}

closed_set! {
    /// An acceptance verdict, from best to worst.
    pub enum Verdict ("snake_case") {
        /// Every rule held.
        Pass,
        /// A rule that only warns did not hold, or a figure a rule needs
        /// was not measured; no rule failed.
        Warn,
        /// A rule failed.
        Fail,
    }
}

impl Verdict {
    /// The worse of two verdicts.
    #[must_use]
    pub fn worst(self, other: Verdict) -> Verdict {
        let rank = |v: Verdict| match v {
            Verdict::Pass => 0,
            Verdict::Warn => 1,
            Verdict::Fail => 2,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }

    /// In capitals, as the console's verdict block writes it: `PASS`.
    pub const fn shout(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        }
    }
}

closed_set! {
    /// Which acceptance rule a check applied (see `crate::verdict::acceptance`).
    pub enum CheckRule ("snake_case") {
        /// A declared floor or ceiling on a test's figure.
        Limit,
        /// The disk against the median of its model and firmware in the run.
        Peers,
        /// The disk against its model's baseline from earlier runs.
        Baseline,
        /// SMART overall status, NVMe critical warning, ATA attributes at
        /// or below their threshold.
        SmartStatus,
        /// A counter that must not grow during the run.
        Counter,
        /// NVMe: the rated endurance used.
        PercentageUsed,
        /// NVMe: the available spare against its threshold.
        AvailableSpare,
        /// The temperature against the device's warning threshold (or the
        /// config's ceiling), before, during and after every test.
        Temperature,
        /// A test that ended with an I/O error or a timeout.
        TestError,
        /// A test that did not run, so the figures it would give are missing.
        NotTested,
        /// A kernel log line that names the disk during the run.
        KernelLog,
        /// The SMART self-test's result.
        SelfTest,
        /// Capacity hidden from the host (ATA HPA/DCO, NVMe outside every
        /// namespace).
        HiddenCapacity,
        /// The surface scan: unreadable blocks, slow reads, a scan that
        /// did not read its whole area.
        SurfaceScan,
        /// The burn-in's unwritable, unreadable and mismatched blocks, or a
        /// burn-in that did not go over the whole area.
        BurnIn,
        /// Preconditioning that reached no steady state.
        SteadyState,
        /// A zoned disk's offline and read-only zones.
        Zones,
        /// A link trained below what both its ends support.
        LinkSpeed,
        /// PHY or AER error counters on a disk's path that grew during the run.
        LinkErrors,
        /// Seagate FARM's power-on hours against SMART's (a drive whose
        /// SMART hours were reset).
        PowerOnHours,
        /// The OCP C0h log's capacitor health and thermal throttling
        /// (warnings; its counters that must not grow are `counter`).
        OcpHealth,
    }
}

impl Default for TargetKind {
    /// A block device, what most targets are.
    fn default() -> Self {
        TargetKind::Block
    }
}

impl Default for StackClass {
    /// An array.
    fn default() -> Self {
        StackClass::Md
    }
}

closed_set! {
    /// One figure of a test's summary; its serde name is the summary field's.
    pub enum Metric ("snake_case") {
        /// `read_bytes_per_sec`.
        #[serde(rename = "read_bytes_per_sec")]
        ReadBps,
        /// `write_bytes_per_sec`.
        #[serde(rename = "write_bytes_per_sec")]
        WriteBps,
        /// `read_iops`.
        ReadIops,
        /// `write_iops`.
        WriteIops,
    }
}

impl Metric {
    /// The metric of that summary field name.
    pub fn from_name(name: &str) -> Option<Metric> {
        crate::vocab::names::from_name(name)
    }

    /// The value in a summary.
    pub const fn get(self, s: &Summary) -> Option<f64> {
        match self {
            Metric::ReadBps => s.read_bytes_per_sec,
            Metric::WriteBps => s.write_bytes_per_sec,
            Metric::ReadIops => s.read_iops,
            Metric::WriteIops => s.write_iops,
        }
    }

    /// The summed value in a scaling run's point.
    pub const fn of_point(self, p: &ScalingPoint) -> Option<f64> {
        match self {
            Metric::ReadBps => p.read_bytes_per_sec,
            Metric::WriteBps => p.write_bytes_per_sec,
            Metric::ReadIops => p.read_iops,
            Metric::WriteIops => p.write_iops,
        }
    }

    /// True for reads.
    pub const fn is_read(self) -> bool {
        matches!(self, Metric::ReadBps | Metric::ReadIops)
    }

    /// True for IOPS, false for bytes per second.
    pub const fn is_iops(self) -> bool {
        matches!(self, Metric::ReadIops | Metric::WriteIops)
    }

    /// A value of this metric in words with its unit: `20.5 MB/s`, `812 IOPS`.
    pub fn show(self, v: f64) -> String {
        if self.is_iops() {
            format!("{v:.0} IOPS")
        } else {
            #[allow(clippy::cast_precision_loss)] // 10^6 is exact in f64
            let mb = v / MB as f64;
            format!("{mb:.1} MB/s")
        }
    }
}

mod analysis;
mod attestation;
mod burnin;
mod capacity;
mod erase;
mod farm;
mod health;
mod kernel;
mod link;
mod ocp;
mod placement;
mod precondition;
mod scan;
mod selftest;
mod stack;
mod storage;
mod telemetry;
mod zones;
pub use analysis::{Analysis, MemberShare};
pub use attestation::{Attestation, EkCertificate, PcrValue, Quote, ATTESTATION_PCR, QUOTED_PCRS};
pub use burnin::{BurnEndState, BurnIn, BurnOrder, BurnPass, BurnZones, ZonesAfter};
pub use capacity::{CapacitySource, HiddenCapacity};
pub use erase::{EraseMethod, EraseSupport};
pub use farm::{Farm, FarmRecording, FarmTransport};
pub use health::{Health, HealthLine, HealthReading, NvmeHealth, SmartAttribute, TestTemperature};
pub use kernel::{KernelLogKind, KernelLogLine, KernelLogStatus};
pub use link::{Aer, Link, LinkReading, PcieLink, PcieRole, PhyEvent, SasPhy, SataLink, UsbLink};
pub use ocp::{DssdVersion, OcpSmart, OcpSmartV5, RawNormalized};
pub use placement::{DiskNuma, HwQueue, Irq, NumaNode, PlacementPolicy, TestPlacement};
pub use precondition::{Precondition, PreconditionEnd, PreconditionFill, PreconditionRound, Purge};
pub use scan::{ScanClass, ScanEndState, ScanSlowRead, ScanZone, SurfaceScan};
pub use selftest::{SelfTest, SelfTestKind, SelfTestOutcome, SelfTestSource};
pub use stack::StackInfo;
pub use storage::{
    LuksInfo, LvInfo, LvmLv, LvmPv, LvmSegment, LvmVg, LvmVgPv, MdArrayInfo, MdMember, MdOther, PartitionHolds, Stacks,
    VgInfo, VgPvInfo,
};
pub use telemetry::Telemetry;
pub use zones::{CapacityKind, ZoneModel, ZoneStates, ZoneSummary, ZoneUse, Zoned, ZonedTest};

/// The schema identifier of this version of the document.
pub const SCHEMA: &str = "bootbench.result/1";

/// One run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultDoc {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The program that wrote the document.
    pub tool: Tool,
    /// The run as a whole.
    pub run: RunInfo,
    /// The machine.
    pub host: Host,
    /// Every target the plan names, with what the system tells of it.
    pub targets: Vec<TargetInfo>,
    /// Every test on every target, in the order run.
    pub tests: Vec<TestResult>,
    /// The "all at once" runs: one test on several disks at the same time
    /// (empty when the config does not ask for them).
    #[serde(default)]
    pub all_at_once: Vec<AllAtOnce>,
    /// What the figures say about the arrays, layers and all-at-once runs:
    /// measured against expected (see `crate::verdict::analysis`).
    #[serde(default)]
    pub analysis: Vec<Analysis>,
    /// What the disks' health readings and the per-interval samples say:
    /// a failed SMART status, counters gained during the run, a warning
    /// temperature crossed, a throughput that fell in a test's second half
    /// (see `crate::verdict::analysis::analyze_health`). Empty (absent) when none
    /// applies and in older documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_analysis: Vec<HealthLine>,
    /// The acceptance verdict of every target and of the run (see
    /// `crate::verdict::acceptance`). Absent in documents of runs that did not start
    /// and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<Acceptance>,
    /// The kernel's log lines during the run that name one of its disks
    /// (I/O errors, resets, timeouts, ...), each with the test it came
    /// during; at most [`crate::device::kmsg::LINES_PER_DISK`] per disk. Empty
    /// (absent) when none came, for simulated runs and in older documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_log: Vec<KernelLogLine>,
    /// How the kernel's log was read (`/dev/kmsg`): which disks were
    /// watched, what could not be read, what was lost. Absent when no disk
    /// was watched (a simulated run, files only) and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_log_status: Option<KernelLogStatus>,
    /// What PID 1 measured into the machine's TPM and the TPM's quote over
    /// it. Last, so that the document without it is a prefix of its JSON;
    /// absent from the live command's documents and older ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attestation: Option<Attestation>,
}

impl ResultDoc {
    /// Each target's tests (by `TestResult::target`), in document order:
    /// one pass over the tests, so that a report per target is linear in
    /// the document, not targets x tests.
    pub fn tests_by_target(&self) -> BTreeMap<&str, Vec<&TestResult>> {
        let mut m: BTreeMap<&str, Vec<&TestResult>> = BTreeMap::new();
        for t in &self.tests {
            m.entry(t.target.as_str()).or_default().push(t);
        }
        m
    }

    /// The tests of target `path` in `by` ([`ResultDoc::tests_by_target`]).
    pub fn tests_of<'m, 'd>(by: &'m BTreeMap<&str, Vec<&'d TestResult>>, path: &str) -> &'m [&'d TestResult] {
        by.get(path).map_or(&[], Vec::as_slice)
    }
}

/// The program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// `bootbench`.
    pub name: String,
    /// The crate version.
    pub version: String,
}

/// The run as a whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The profile named, if any.
    pub profile: Option<String>,
    /// Where the config came from: a path, `builtin`, or `command-line`.
    pub config_source: String,
    /// Wall-clock start, nanoseconds since the Unix epoch (may be wrong on a
    /// machine with a bad RTC; durations use the monotonic clock).
    pub started_unix_ns: u64,
    /// Monotonic duration of the whole run, nanoseconds.
    pub duration_ns: u64,
    /// The base seed of the offset generators; running again with it repeats
    /// the same offsets.
    pub seed: u64,
    /// True when the targets were simulated disks (`--simulate`).
    pub simulated: bool,
    /// How the run ended ([`RunStatus`]).
    pub status: RunStatus,
    /// What failed (every reason, `; `-separated), or why the run stopped.
    pub error: Option<String>,
    /// The bound stated at the start of the run, nanoseconds: every test
    /// at its deadline plus the grace its I/O gets after a stop, and an
    /// allowance per array or layer. Absent in documents of runs that did
    /// not start (a config error) and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_ns: Option<u64>,
    /// The plan's id in an unattended run: 16 hex digits, the same for
    /// every boot of one config on the same disks (what the run-once check
    /// and a results URL's `{run}` go by). Absent from the live command's
    /// documents and older ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// The CPU wake-up latency limit the run held while it measured (the
    /// config's `cpu_dma_latency`). Absent from simulated runs, runs that
    /// did not start and older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_dma_latency: Option<CpuDmaLatency>,
}

/// The kernel's CPU wake-up latency limit (PM QoS, `/dev/cpu_dma_latency`)
/// as the run asked for it and found it. While it holds, no CPU enters an
/// idle state that takes longer to leave, so the time a CPU takes to wake
/// for a completion stays out of the requests' latencies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuDmaLatency {
    /// The limit asked for, microseconds; absent (null) when the config
    /// said `"off"` (the machine's own idle states, as fio runs).
    pub requested_us: Option<u32>,
    /// The limit in force before the run asked, microseconds (2000000000:
    /// no limit); absent when it could not be read.
    pub before_us: Option<u32>,
    /// The limit in force while the run measured (read back once the
    /// request was made: the smallest of every request, this run's and any
    /// other program's); absent when it could not be read.
    pub during_us: Option<u32>,
    /// True when the request was held from the first test to the last.
    pub held: bool,
    /// Why it was not held (no such device, not permitted, ...).
    pub error: Option<String>,
}

/// The machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// Host name.
    pub hostname: Option<String>,
    /// Maker of the machine (DMI `sys_vendor`).
    #[serde(default)]
    pub sys_vendor: Option<String>,
    /// The machine's model (DMI `product_name`).
    #[serde(default)]
    pub product_name: Option<String>,
    /// The machine's serial number (DMI `product_serial`; readable by root only).
    #[serde(default)]
    pub product_serial: Option<String>,
    /// CPU model name (/proc/cpuinfo).
    pub cpu_model: Option<String>,
    /// Online CPUs.
    pub cores: Option<u32>,
    /// Total memory, bytes (/proc/meminfo MemTotal).
    pub memory_bytes: Option<u64>,
    /// Kernel release (uname -r).
    pub kernel: Option<String>,
    /// The firmware that booted the kernel: `uefi` (`/sys/firmware/efi` is there) or `bios`.
    #[serde(default)]
    pub firmware: Option<String>,
    /// UEFI Secure Boot was on (the EFI variable `SecureBoot`); false on a BIOS boot, absent when
    /// the variable cannot be read.
    #[serde(default)]
    pub secure_boot: Option<bool>,
    /// The kernel's lockdown mode (`none`, `integrity`, `confidentiality`; Debian's kernel locks
    /// down to `integrity` under Secure Boot), absent without securityfs.
    #[serde(default)]
    pub lockdown: Option<String>,
    /// The modules the kernel command line named (`bootbench.modules=`), each with what came of
    /// loading it; absent when it names none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<NamedModule>,
    /// The machine's NUMA nodes with their CPUs (`/sys/devices/system/node`);
    /// empty (absent) on a machine without that directory and in older documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa_nodes: Vec<NumaNode>,
}

/// A module the kernel command line named to load (`bootbench.modules=`), and what came of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedModule {
    /// The name as the command line gave it, with `-` as `_` (the kernel's form).
    pub name: String,
    /// The parameters it was loaded with, from the command line (`zbc=managed dev_size_mb=64`),
    /// as modprobe takes them; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
    /// Whether it is in the kernel once the drivers settled.
    pub status: NamedModuleStatus,
    /// Why not, when it is not: the loader's error, or that the initramfs does not carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What came of loading a [`NamedModule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NamedModuleStatus {
    /// In the kernel (`/sys/module/NAME`): loaded now, loaded already, or built in.
    Loaded,
    /// Not in the kernel: see `error`.
    Failed,
}

impl fmt::Display for NamedModuleStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NamedModuleStatus::Loaded => "loaded",
            NamedModuleStatus::Failed => "failed",
        })
    }
}

/// A target as the system describes it. Absent facts are `None`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The path given (`/dev/sda`, `/dev/loop3`, a file, `sim:0`).
    pub path: String,
    /// What it is ([`TargetKind`]).
    pub kind: TargetKind,
    /// Kernel name of the block device (`sda`, `nvme0n1`).
    pub name: Option<String>,
    /// Model string.
    pub model: Option<String>,
    /// Serial number.
    pub serial: Option<String>,
    /// Firmware revision.
    pub firmware: Option<String>,
    /// World-wide name.
    pub wwn: Option<String>,
    /// How the disk is attached: `sata`, `nvme`, `virtio`, `usb`, `sas` or
    /// `scsi` (from its sysfs device path).
    #[serde(default)]
    pub transport: Option<String>,
    /// The kernel driver of the disk's controller (`ahci`, `nvme`,
    /// `virtio_blk`, `usb-storage`, `mpt3sas`, ...).
    #[serde(default)]
    pub driver: Option<String>,
    /// The PCI address of the controller (`0000:00:1f.2`).
    #[serde(default)]
    pub pci_path: Option<String>,
    /// Size, bytes.
    pub size_bytes: u64,
    /// Logical block size, bytes.
    pub logical_block_size: u32,
    /// Physical block size, bytes.
    pub physical_block_size: u32,
    /// True for spinning media (queue/rotational).
    pub rotational: Option<bool>,
    /// Active I/O scheduler (queue/scheduler, the bracketed one).
    pub scheduler: Option<String>,
    /// Readahead, bytes (queue/read_ahead_kb x 1024).
    pub read_ahead_bytes: Option<u64>,
    /// Volatile write cache: `write back` or `write through` (queue/write_cache).
    pub write_cache: Option<String>,
    /// True if the plan permits writes to this target.
    pub writable: bool,
    /// Why writes are refused, when a write test asked for them.
    pub write_refusal: Option<String>,
    /// For an md array or a dm layer that bootbench built: what it is built
    /// of. `None` for a disk or a file.
    #[serde(default)]
    pub stack: Option<StackInfo>,
    /// A disk's health before and after its tests; absent for files,
    /// simulated disks, arrays, layers and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// The disk's SMART self-test, when the config asked for one
    /// (`self_test`), run before every benchmark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_test: Option<SelfTest>,
    /// Capacity the disk holds beyond what the host sees (ATA HPA and DCO,
    /// NVMe capacity outside every namespace), read once before the run;
    /// absent for other transports, files, arrays, layers, simulated disks
    /// and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_capacity: Option<HiddenCapacity>,
    /// The erase commands the disk says it supports (ATA IDENTIFY DEVICE,
    /// NVMe Identify Controller), read once before the run beside the
    /// hidden capacity; absent for other transports, files, arrays,
    /// layers, simulated disks and in older documents. Nothing erases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_support: Option<EraseSupport>,
    /// A zoned disk's zones (host-aware or host-managed: SMR, NVMe ZNS),
    /// before the run and after it; absent for a disk that is not zoned,
    /// and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<Zoned>,
    /// The path to the disk (PCIe, SATA, SAS, USB links and their error
    /// counters) when it was found and after the run; absent for files,
    /// simulated disks, arrays, layers and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// A LUKS container the disk holds (its header at byte 0), as its
    /// header says it: nothing secret, nothing opened. Read by `list` only
    /// (`list --json` prints targets); absent when there is none, and in
    /// run documents for now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub luks: Option<LuksInfo>,
    /// An md RAID superblock the disk holds (0.90, 1.0, 1.1 or 1.2), as
    /// `mdadm --examine` shows it. Read by `list` only, as `luks` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md: Option<MdMember>,
    /// An LVM physical volume the disk is, with its volume group. Read by
    /// `list` only, as `luks` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lvm: Option<LvmPv>,
    /// Firmware RAID metadata the disk carries (`Intel IMSM`, `SNIA DDF`):
    /// found, never assembled. Read by `list` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_raid: Option<String>,
    /// Metadata found but not understood (a bad checksum, a version
    /// bootbench does not know), one sentence each. Read by `list` only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds_unreadable: Vec<String>,
    /// The disk's partitions that hold md, LVM or LUKS metadata (members
    /// are often partitions: `sda1`), each as the disk's own fields say
    /// it. Read by `list` only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionHolds>,
    /// The disk's surface scan, when the config asked for one
    /// (`surface_scan`), run before every benchmark; absent otherwise and
    /// in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface_scan: Option<SurfaceScan>,
    /// The disk's burn-in, when the config asked for one (`burn_in`, only
    /// on disks `destructive` grants), run after the surface scan and
    /// before every benchmark; absent otherwise and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burn_in: Option<BurnIn>,
    /// The disk's preconditioning to steady state, when the config asked
    /// for it (`precondition`, only on disks `destructive` grants), run
    /// after the burn-in and before every benchmark; absent otherwise and
    /// in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<Precondition>,
    /// An NVMe disk's host-initiated telemetry log, read after the
    /// verdicts when the disk failed acceptance and saved beside the
    /// document; absent for every other disk and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<Telemetry>,
    /// A disk's NUMA node, its CPUs, its queues and their interrupts with
    /// their affinity, read before the run; absent for files, simulated
    /// disks, arrays, layers and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<DiskNuma>,
}

/// The acceptance verdicts of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Acceptance {
    /// The run's verdict: the worst of its targets'.
    pub verdict: Verdict,
    /// Where the rules came from: `config` (the config's `acceptance`
    /// section) or `defaults` (no section: health, errors and self-test
    /// rules, peers warn, no limits).
    pub rules: String,
    /// Every target's verdict, in the order of [`ResultDoc::targets`].
    pub targets: Vec<TargetVerdict>,
}

/// One target's verdict and every check that decided it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetVerdict {
    /// The target, as its [`TargetInfo::path`].
    pub target: String,
    /// Its serial number, when known.
    #[serde(default)]
    pub serial: Option<String>,
    /// Its model, when known.
    #[serde(default)]
    pub model: Option<String>,
    /// The worst of its checks' verdicts; `pass` with none.
    pub verdict: Verdict,
    /// Every check applied to it, those that held included, in the order of
    /// the rules: limits, peers, baseline, health, errors, self-test,
    /// hidden capacity.
    pub checks: Vec<Check>,
}

/// One rule applied to one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The rule ([`CheckRule`]).
    pub rule: CheckRule,
    /// What it gave.
    pub verdict: Verdict,
    /// The test it looked at, when it looked at one.
    #[serde(default)]
    pub test: Option<String>,
    /// The figure: a summary field (`read_bytes_per_sec`), a latency
    /// (`read_lat_p99_ns`), a counter's name, `temperature_c`,
    /// `smart_status`, ...
    #[serde(default)]
    pub figure: Option<String>,
    /// Its value, in the figure's unit.
    #[serde(default)]
    pub value: Option<f64>,
    /// The limit it was held to, same unit.
    #[serde(default)]
    pub limit: Option<f64>,
    /// Where the rule and its limit came from: `acceptance.limits[0]`,
    /// `acceptance.peers`, `device warning temperature`, `defaults`, ...
    pub source: String,
    /// In words, with the figures and their units.
    pub message: String,
}

/// One "all at once" run: the same test on several disks at the same time,
/// one thread per disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AllAtOnce {
    /// The test's name in the plan (the same name as the test run on each
    /// disk alone, in [`ResultDoc::tests`]).
    pub test: String,
    /// What it did.
    pub workload: Workload,
    /// Each disk's result while all ran together, in the order of the disks
    /// (`target` is the disk's [`TargetInfo::path`]).
    pub results: Vec<TestResult>,
    /// With `scaling` in the config: the test run before on the first 2, 4,
    /// 8, ... disks at once (doubling, fewer than all), each run's summed
    /// figures, so the analysis can say where the sum stops growing. Empty
    /// (absent) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<ScalingPoint>,
}

/// One run of a test on the first `disks` disks at once
/// ([`AllAtOnce::scaling`]): the sums of their figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    /// The disks that ran it, the first of the all-at-once run's, in order.
    pub targets: Vec<String>,
    /// Every one of them ended `ok`: the sums are of whole runs.
    pub ok: bool,
    /// Read bytes per second, summed over the disks (absent if none read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_sec: Option<f64>,
    /// Write bytes per second, summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_per_sec: Option<f64>,
    /// Reads per second, summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iops: Option<f64>,
    /// Writes per second, summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops: Option<f64>,
}

/// One test on one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The test's name in the plan.
    pub name: String,
    /// What it did.
    pub workload: Workload,
    /// The target's path, as in [`TargetInfo::path`].
    pub target: String,
    /// The parameters, exactly as run.
    pub params: Params,
    /// How it ended.
    pub status: Status,
    /// Each timed step, in order; steps after an error are absent.
    pub steps: Vec<StepResult>,
    /// The headline figures.
    pub summary: Summary,
    /// On a host-managed zoned disk: how the test met its zones (absent on
    /// any other disk, for a skipped test, and in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<ZonedTest>,
    /// Where its threads ran and its buffers were allocated, and why
    /// (`params.placement`, `cpus_allowed`, the disk's node); absent for a
    /// simulated disk and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<TestPlacement>,
}

/// How a test ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Status {
    /// Every step ran.
    Ok,
    /// An I/O failed.
    Error {
        /// Positive errno.
        errno: i32,
        /// Operation that failed.
        op: Op,
        /// Byte offset of the failed request.
        offset: u64,
        /// What happened, in words.
        message: String,
    },
    /// The test did not run.
    Skipped {
        /// Why.
        reason: String,
    },
    /// The user stopped the run (SIGINT or SIGTERM) during this test; the
    /// steps that ran are kept, the last one shortened.
    Interrupted {
        /// What happened, in words.
        message: String,
    },
    /// The test ran past its deadline (derived from its plan: see
    /// `crate::engine::plan::deadline`) and was stopped; what it measured until then
    /// is kept. A device that did not answer at all leaves no steps.
    Timeout {
        /// What happened, in words.
        message: String,
    },
}

/// The figures of one timed step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// Which part of the test (see [`crate::spec::Step::label`]).
    pub label: String,
    /// Direct or buffered.
    pub access: Access,
    /// Request size, bytes.
    pub bs: u32,
    /// Requests in flight per job.
    pub iodepth: u32,
    /// Jobs.
    pub jobs: u32,
    /// First byte of the step's range.
    pub range_start: u64,
    /// One past the last byte of the step's range.
    pub range_end: u64,
    /// Measured time (after the ramp), nanoseconds: from the first counted
    /// submission to the last completion, the longest over jobs.
    pub runtime_ns: u64,
    /// Reads, if any.
    pub read: Option<DirStats>,
    /// Writes, if any.
    pub write: Option<DirStats>,
    /// Flushes, if any (bytes are zero).
    pub flush: Option<DirStats>,
    /// A verifying step (`params.verify`): the bytes read back after the
    /// step and found exactly as written (untimed; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_bytes: Option<u64>,
    /// A step that filled its range first (`params.fill`): the bytes written
    /// with random data before its first pass, untimed; 0 when the target
    /// may not be written (nothing was written: a read test then read the
    /// data already there). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filled_bytes: Option<u64>,
    /// A step of several passes (`params.passes` above 1 or `params.warmup`
    /// above 0): every pass in the order run, warm-up first. The step's
    /// figures above are those of the pass [`StepResult::chosen_pass`]
    /// names. Empty (absent) for a step of one pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<PassResult>,
    /// The index in `passes` of the pass whose figures the step reports:
    /// the measured pass with the highest `bytes_per_sec` (the first of
    /// equals), as CrystalDiskMark keeps its best score. Absent with one
    /// pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_pass: Option<u32>,
    /// The index in `passes` of the measured pass with the lowest mean
    /// latency (its `lat_mean_ns`; the first of equals), among those that
    /// moved any bytes. CrystalDiskMark reports this beside its best score,
    /// chosen on its own (DiskBench.cpp `DiskSpd`: `minLatency` is the
    /// least of the measured runs' latencies whose score is above 0), so
    /// it may be another pass than `chosen_pass`. Absent with one pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lowest_lat_pass: Option<u32>,
    /// That pass's mean latency, nanoseconds: CrystalDiskMark's latency
    /// figure. Absent with one pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lowest_lat_mean_ns: Option<f64>,
    /// The engine of the step's queues, as the system set it up (job 0's;
    /// every job's queue is set up alike). Absent for simulated disks and
    /// in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineInfo>,
    /// On an array or a layer: what every device beneath it did during the
    /// step (through stacks beneath too, down to the disks), from the
    /// kernel's I/O counters. Empty (absent) on a disk, a file, a
    /// simulated target and in older documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberIo>,
    /// A test that waits for steady state (`params.steady_state`): each
    /// job's wait before the reported pass, in job order. Empty (absent)
    /// otherwise and in older documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steady_state: Vec<SteadyWait>,
}

/// One job's wait for steady state before its measured part (fio's
/// `steadystate` object): whether it was attained, how long it took, the
/// last window's judgement and every interval's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyWait {
    /// The criterion was met over a window (else the wait reached
    /// `ss_max`, or the step was stopped, and the step was measured
    /// anyway).
    pub attained: bool,
    /// From the end of the step's ramp to the end of the wait, nanoseconds.
    pub wait_ns: u64,
    /// The last window judged: its mean figure (IOPS or bytes/s, as the
    /// criterion's), the largest distance of a figure from it, the slope of
    /// the least-squares line (figure per interval), and the criterion's
    /// value compared with its limit (the deviation or the slope's size,
    /// as a percentage of the mean for a `%` limit). Absent when no
    /// window filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<SteadyJudged>,
    /// Each interval's requests per second, in order from the first.
    pub iops: Vec<f64>,
    /// Each interval's bytes per second, in order from the first.
    pub bw: Vec<f64>,
}

/// One window of a steady-state wait, judged ([`SteadyWait::window`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyJudged {
    /// The window's mean figure.
    pub mean: f64,
    /// The largest distance of a figure from the mean.
    pub max_deviation: f64,
    /// The least-squares slope, figure per interval.
    pub slope: f64,
    /// What was compared with the limit.
    pub criterion: f64,
}

/// What one device beneath an array or layer did during one step: the
/// difference of its kernel I/O counters (`/sys/class/block/NAME/stat`,
/// the fields of `/proc/diskstats`) from the step's start (after its fill,
/// if any; the ramp is inside) to its end, read again at every sample
/// interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemberIo {
    /// The device, as its [`TargetInfo::path`].
    pub path: String,
    /// The array or layer it is right beneath, as its path (the tested
    /// target, or a stack beneath it).
    pub parent: String,
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes read (sectors read x 512).
    pub read_bytes: u64,
    /// Bytes written (sectors written x 512).
    pub write_bytes: u64,
    /// Time the device had I/O in flight (`io_ticks`), nanoseconds
    /// (the kernel counts milliseconds).
    pub busy_ns: u64,
    /// The window the counters cover, nanoseconds.
    pub window_ns: u64,
    /// `busy_ns / window_ns`, 0 to 1: near 1, the device was the bottleneck.
    pub utilization: f64,
    /// Its bytes (read + written) over the bytes of every device with the
    /// same parent, 0 to 1 (0 when none moved any).
    pub share: f64,
    /// The counters at each sample interval.
    pub samples: MemberSamples,
}

/// A member's counters per sample interval (the step's `sample_interval`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberSamples {
    /// Width of each interval, nanoseconds; the last, partial interval is
    /// left out.
    pub interval_ns: u64,
    /// Bytes (read + written) per second in each interval.
    pub bytes_per_sec: Vec<f64>,
    /// Time busy over each interval, 0 to 1.
    pub utilization: Vec<f64>,
}

/// The figures of one pass of a step, so the best-of can be checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PassResult {
    /// A warm-up pass (`params.warmup`): run, its figures never chosen.
    pub warmup: bool,
    /// Measured time of the pass, nanoseconds (as [`StepResult::runtime_ns`]).
    pub runtime_ns: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// (read + written bytes) / runtime, bytes per second: what the best-of
    /// compares.
    pub bytes_per_sec: f64,
    /// Reads and writes completed / runtime, per second.
    pub iops: f64,
    /// Mean latency over the pass's reads and writes, nanoseconds; `None`
    /// without any.
    pub lat_mean_ns: Option<f64>,
}

/// Figures for one direction of a step, all jobs together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DirStats {
    /// Bytes transferred.
    pub bytes: u64,
    /// Requests completed.
    pub ios: u64,
    /// bytes / runtime, bytes per second.
    pub bytes_per_sec: f64,
    /// ios / runtime, per second.
    pub iops: f64,
    /// Latency from the request's start (just before it is handed to the
    /// queue: after its offset is drawn, before its buffer is stamped and
    /// it is submitted) to just after the reap that returned it,
    /// nanoseconds: fio's `lat` (io_u `start_time` to completion).
    pub lat_ns: LatStats,
    /// Completion latency, fio's `clat`: from the request's issue to the
    /// system to just after the reap that returned it. The issue is just
    /// after the io_uring_enter that submitted it (fio's `fio_ioring_commit`
    /// then `io_u_queued`), or just before the pread/pwrite of the
    /// synchronous engine (fio's sync engines: `td_io_queue`). The
    /// percentiles fio prints by default are these. Absent in documents
    /// before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clat_ns: Option<LatStats>,
    /// Submission latency, fio's `slat`: from the request's start to its
    /// issue. Only for the io_uring engine (depth above 1); fio records none
    /// for its synchronous engines either, so absent there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slat_ns: Option<LatStats>,
    /// Per-interval throughput and IOPS.
    pub samples: Samples,
}

/// Latency statistics, nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatStats {
    /// Smallest, exact.
    pub min: u64,
    /// Largest, exact.
    pub max: u64,
    /// Arithmetic mean, exact.
    pub mean: f64,
    /// Sample standard deviation (divisor n - 1, as fio's `calc_lat` in
    /// stat.c), exact (Welford); 0 for a single request.
    pub stddev: f64,
    /// fio's list of percentiles, from the log-linear histogram (at most
    /// ~0.8% relative error; the midpoint of the first bucket whose cumulative
    /// count reaches p% of the total, as fio computes it).
    pub percentiles: Vec<Percentile>,
}

/// One percentile.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// The percentage, e.g. 99.9.
    pub p: f64,
    /// The latency, nanoseconds.
    pub ns: u64,
}

/// Per-interval samples of one direction, all jobs summed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    /// Width of each interval, nanoseconds. The last, partial interval is
    /// left out.
    pub interval_ns: u64,
    /// Bytes per second in each interval.
    pub bytes_per_sec: Vec<f64>,
    /// Completions per second in each interval.
    pub iops: Vec<f64>,
    /// Steadiness: coefficient of variation (sample stddev, n - 1, / mean) of
    /// `bytes_per_sec`; `None` with fewer than two samples.
    pub cv: Option<f64>,
}

/// The headline figures of a test, for tables and comparisons.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Read throughput of the main step, bytes per second; `zones`: the
    /// mean over its surface points (with none, over outside, middle and
    /// inside); `iops_sweep`: that of the step with the most IOPS.
    pub read_bytes_per_sec: Option<f64>,
    /// Write throughput of the main step, bytes per second; `commit`: its
    /// `flush_every_N` step's.
    pub write_bytes_per_sec: Option<f64>,
    /// Read IOPS of the main step; `iops_sweep`: the highest over its steps.
    pub read_iops: Option<f64>,
    /// Write IOPS of the main step; `commit`: its `flush_every_N` step's.
    pub write_iops: Option<f64>,
    /// Mean latency ([`DirStats::lat_ns`], fio's `lat`) over all requests of
    /// the main step, nanoseconds.
    pub lat_mean_ns: Option<f64>,
    /// `command_overhead`: (time of the block-sized reads - time of the big
    /// reads) / number of block-sized reads, nanoseconds per command (diskinfo -c).
    pub command_overhead_ns: Option<f64>,
    /// `seek_profile`: mean time per read in each section, nanoseconds.
    pub seek_ns: Vec<Figure>,
    /// `zones`, `iops_sweep`, `commit`, `slog`: one figure per step (bytes
    /// per second for zones, commit and slog, IOPS for iops_sweep), labelled
    /// as the step.
    pub per_step: Vec<Figure>,
}

/// A labelled number; the field that holds it names the unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The step label.
    pub label: String,
    /// The value.
    pub value: f64,
}
