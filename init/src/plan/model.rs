//! The plan a config becomes: targets with their identity and grants, the
//! stacks to assemble, the tests per target with what each may do, and the
//! text that describes it (`validate`, the console).

use bench_core::document::result::{StackClass, StackInfo, TargetInfo};
use bench_core::engine::plan::{expand, PlanError};
use bench_core::engine::sim::{SimDisk, SimModel};
use bench_core::io::Geometry;
use bench_core::spec::{Step, TestSpec};
use bench_core::vocab::units::Nanos;

use crate::disks::identity::{DeviceId, Pin};
use crate::safety::Grant;

use super::pass::{BurnPlan, PreconditionPlan, ScanPlan};
pub use crate::stacks::dm::{Mode, Segment};
use crate::stacks::md::MdLayout;
/// An md RAID level (the one type md assembles with).
pub use crate::stacks::md::MdLevel as Level;

/// What to do with one test on one target.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Run these steps.
    Run(Vec<Step>),
    /// Do not run; the reason goes into the results.
    Skip(String),
}

/// One test on one target.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanItem {
    /// Index into [`Plan::targets`].
    pub target: usize,
    /// The test.
    pub spec: TestSpec,
    /// Run or skip.
    pub action: Action,
}

/// A resolved target.
#[derive(Debug)]
pub struct PlannedTarget {
    /// What the system tells of it; `writable` and `write_refusal` filled in.
    pub info: TargetInfo,
    /// Its geometry.
    pub geometry: Geometry,
    /// Who it is, as read when the plan was made (real targets only): what
    /// a grant is bound to, and what an array's member is checked against
    /// before it is assembled.
    pub id: Option<DeviceId>,
    /// A regular file's descriptor, held from the plan to the end of the
    /// run ([`crate::disks::identity::Pin`]): while it is, no other file
    /// gets the file's inode, so `id` tells a replacement apart.
    pub pin: Option<Pin>,
    /// Permission to write, if granted (never for simulated disks, which
    /// need none): claimed for each test run that may write.
    pub grant: Option<Grant>,
    /// Set once this run has claimed the target for writing (its contents
    /// checked through the claimed descriptor): later claims check its
    /// identity only.
    pub claimed: bool,
    /// Set once a write of this run reached the target, or an array or
    /// layer on it ([`crate::run::engine::DevTarget::wrote`]): only such a
    /// disk gets bootbench's scratch label after the run. A claim alone
    /// does not set it.
    pub written: bool,
    /// The simulated disk, in `--simulate` mode.
    pub sim: Option<SimSpec>,
    /// Why the target is absent (a disk the config names by serial, WWN or
    /// path that this machine lacks): its tests are skipped with this
    /// reason and the run's status is `error`; everything else runs.
    pub missing: Option<String>,
}

/// The validated plan: everything a run needs, decided before anything is
/// opened for writing.
#[derive(Debug)]
pub struct Plan {
    /// The profile, if any.
    pub profile: Option<String>,
    /// Where the config came from: a path, or `command-line`.
    pub config_source: String,
    /// The base seed.
    pub seed: u64,
    /// True in `--simulate` mode.
    pub simulated: bool,
    /// The targets, in order.
    pub targets: Vec<PlannedTarget>,
    /// Every test on every target, target by target.
    pub items: Vec<PlanItem>,
    /// Arrays and layers, in the order they are assembled; their targets
    /// come after every disk's in `targets`.
    pub stacks: Vec<PlannedStack>,
    /// Run each test on every disk at once after the per-target tests.
    pub all_at_once: bool,
    /// With `all_at_once`: run each test first on the first 2, 4, 8, ...
    /// disks at once too, so the analysis says where the sum stops growing.
    pub scaling: bool,
    /// The disks' benchmarks all at once, each disk on a thread of its own
    /// (`run::parallel`), instead of one disk after another.
    pub parallel: bool,
    /// For testing only (config key `test_deadline`): every test's
    /// deadline, instead of the one derived from its plan.
    pub test_deadline: Option<Nanos>,
    /// The config's `serial_ports`, checked: where an unattended run's
    /// results go besides the console (`None`: every UART).
    pub serial_ports: Option<Vec<String>>,
    /// The config's `results_url`, checked and typed (`results::remote`).
    pub results_url: Option<bench_core::vocab::url::Template>,
    /// The config's `metrics_url`, checked and parsed (`results::metrics`).
    pub metrics_url: Option<bench_core::vocab::url::Url>,
    /// The config's `metrics_interval`, checked; 10 s without it.
    pub metrics_interval: std::time::Duration,
    /// The acceptance rules: the config's `acceptance` section, checked,
    /// or the defaults without one.
    pub acceptance: bench_core::verdict::acceptance::Rules,
    /// The config's `self_test`, checked: run before every benchmark.
    pub self_test: Option<SelfTestPlan>,
    /// The CPU wake-up latency limit, microseconds, held from the first
    /// test to the last (the config's `cpu_dma_latency`; 0 without it);
    /// `None`: `"off"`.
    pub cpu_dma_latency: Option<u32>,
    /// The config's `surface_scan`, checked: run before every benchmark.
    pub surface_scan: Option<ScanPlan>,
    /// The config's `burn_in`, checked: run after the surface scan and
    /// before every benchmark, on the disks `destructive` grants.
    pub burn_in: Option<BurnPlan>,
    /// The config's `precondition`, checked: run after the burn-in and
    /// before every benchmark, on the disks `destructive` grants.
    pub precondition: Option<PreconditionPlan>,
    /// `destructive.countdown`: before a run that may write, the console
    /// names the disks it may write and counts this long down, so that
    /// whoever watches can power off or interrupt first; 0 without a
    /// `destructive` section (or when the config asks for none).
    pub countdown: Nanos,
}

/// `destructive.countdown`'s default: 10 s.
pub const DEFAULT_COUNTDOWN: Nanos = Nanos::from_secs(10);

/// `destructive.countdown`'s most: 10 minutes.
pub const MAX_COUNTDOWN: Nanos = Nanos::from_secs(600);

/// True if the disk of `serial` is among `disks` (a list of serials;
/// `None`: every disk).
pub(super) fn selects(disks: Option<&[String]>, serial: Option<&str>) -> bool {
    disks.is_none_or(|d| serial.is_some_and(|s| d.iter().any(|x| x == s)))
}

/// The CPU wake-up latency limit a run holds while it measures when the
/// config does not say (`cpu_dma_latency`), microseconds: no idle state
/// deeper than polling.
pub const DEFAULT_CPU_DMA_LATENCY_US: u32 = 0;

/// A SMART self-test the run starts on its disks before the benchmarks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelfTestPlan {
    /// Which self-test.
    pub kind: bench_core::document::result::SelfTestKind,
    /// Only the disks of these serials; `None`: every disk of the plan.
    pub disks: Option<Vec<String>>,
    /// The longest wait for any disk's self-test (its own estimate, with a
    /// margin, when shorter).
    pub max_wait: Nanos,
}

impl SelfTestPlan {
    /// The longest wait when the config gives none: 30 minutes for a short
    /// or conveyance self-test (ATA disks estimate 1-2 minutes, NVMe and
    /// SCSI at most 2), 48 hours for an extended one (every sector of the
    /// largest HDDs).
    pub const fn default_wait(kind: bench_core::document::result::SelfTestKind) -> Nanos {
        match kind {
            bench_core::document::result::SelfTestKind::Extended => Nanos(48 * 3600 * 1_000_000_000),
            _ => Nanos(30 * 60 * 1_000_000_000),
        }
    }

    /// True if the disk of `serial` takes part.
    pub fn selects(&self, serial: Option<&str>) -> bool {
        selects(self.disks.as_deref(), serial)
    }
}

impl Plan {
    /// The plan's id: 16 hex digits of an FNV-1a hash of the config (as its
    /// types serialize it), the profile, and each test on each target, the
    /// target by its serial, WWN, else model and size (not its path, which
    /// may change from boot to boot). The same config on the same disks has
    /// the same id; a change to either gives another.
    pub fn id(&self, config: &super::RawConfig) -> String {
        // The config as its types write it: the same for any spacing or
        // key order of the file.
        self.id_of(&serde_json::to_string(config).unwrap_or_default())
    }

    /// The id bootbench gave this plan before the id followed the config's
    /// types: the hash of the config's text with its keys sorted (JSON
    /// text that does not parse as it is), then the same profile and tests.
    /// Only for the run-once check, so that results written under the
    /// earlier id still count as this plan's: a machine whose plan wrote
    /// does not run it again because its boot image is newer.
    pub fn earlier_id(&self, config_text: &str) -> String {
        let sorted = serde_json::from_str::<serde_json::Value>(config_text)
            .map_or_else(|_| config_text.to_string(), |v| v.to_string());
        self.id_of(&sorted)
    }

    /// [`Plan::id`] of the config written as `canonical`.
    fn id_of(&self, canonical: &str) -> String {
        let mut text = format!("{canonical}\n{}\n", self.profile.as_deref().unwrap_or(""));
        for item in &self.items {
            let t = &self.targets[item.target].info;
            let who = t
                .serial
                .clone()
                .or_else(|| t.wwn.clone())
                .unwrap_or_else(|| format!("{}:{}", t.model.as_deref().unwrap_or(""), t.size_bytes));
            let what = match &item.action {
                Action::Run(_) => "run",
                Action::Skip(_) => "skip",
            };
            text.push_str(&format!("{who}\t{}\t{what}\n", item.spec.name));
        }
        text_id(&text)
    }

    /// The stack whose target is `ti`, if any.
    pub fn stack_of(&self, ti: usize) -> Option<&PlannedStack> {
        self.stacks.iter().find(|s| s.target == ti)
    }

    /// True if target `ti` is a disk (or file) rather than an array or layer.
    pub fn is_disk(&self, ti: usize) -> bool {
        self.stack_of(ti).is_none()
    }

    /// A write reached target `ti`: it, and every disk beneath it if it is
    /// an array or layer, count as written ([`PlannedTarget::written`]).
    pub fn mark_written(&mut self, ti: usize) {
        let beneath = self.stack_of(ti).map(|st| st.disks.clone()).unwrap_or_default();
        for t in std::iter::once(ti).chain(beneath) {
            self.targets[t].written = true;
        }
    }
}

/// 16 hex digits of the 64-bit FNV-1a hash of `text`: an id, not a
/// protection against forgery.
pub fn text_id(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The default chunk size, bytes.
pub const DEFAULT_CHUNK: u32 = 512 << 10;
/// The smallest chunk, bytes: raid5/6 and raid10 need a multiple of the
/// page size (4 KiB on x86-64: `md/raid:... invalid chunk size`, `chunk size
/// must be at least PAGE_SIZE`), raid0 a multiple of the members' logical
/// block size.
pub const MIN_CHUNK: u32 = 4 << 10;
/// The largest chunk, bytes: md takes the chunk as a signed 32-bit byte
/// count (`mdu_array_info_t.chunk_size`, and `chunk_sectors << 9` in
/// raid0 and raid5 is an `int`), so 1 GiB is the largest power of two it
/// can hold; 2 GiB does not reach the kernel at all.
pub const MAX_CHUNK: u32 = 1 << 30;
/// The default offset of a linear layer, bytes (LVM's data starts at 1 MiB).
pub const DEFAULT_LINEAR_OFFSET: u64 = 1 << 20;
pub use bench_core::vocab::stack::{Cipher, LayerKind, StackLevel};

/// What PID 1 does at the end (`on_finish` in the config,
/// `bootbench.on_finish=` on the kernel command line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnFinish {
    /// reboot(2) LINUX_REBOOT_CMD_POWER_OFF (the default).
    #[default]
    PowerOff,
    /// reboot(2) LINUX_REBOOT_CMD_RESTART.
    Reboot,
    /// reboot(2) LINUX_REBOOT_CMD_HALT.
    Halt,
}

impl std::str::FromStr for OnFinish {
    type Err = String;

    /// By its serde name (`bootbench.on_finish=`, the worker's report).
    fn from_str(s: &str) -> Result<Self, String> {
        bench_core::vocab::names::from_name(s).ok_or_else(|| {
            format!(
                "{s:?} is not an on_finish action; expected {}",
                <OnFinish as super::value::Closed>::expected()
            )
        })
    }
}

impl std::fmt::Display for OnFinish {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(bench_core::vocab::names::name_of(self))
    }
}

/// What a stack is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StackKind {
    /// An md array over member disks.
    Array {
        /// The level.
        level: Level,
        /// Chunk size, bytes.
        chunk_bytes: u32,
        /// The layout, for raid5/6/10.
        layout: Option<MdLayout>,
        /// The members, in order: indices into [`Plan::targets`].
        members: Vec<usize>,
    },
    /// A dm-crypt layer.
    Crypt {
        /// The cipher.
        cipher: Cipher,
        /// Key size, bits.
        key_bits: u32,
        /// `no_read_workqueue`.
        no_read_workqueue: bool,
        /// `no_write_workqueue`.
        no_write_workqueue: bool,
        /// Encryption sector size, bytes.
        sector_size: u32,
        /// The device beneath: an index into [`Plan::targets`].
        on: usize,
    },
    /// A dm linear layer.
    Linear {
        /// Where its data starts on the device beneath, bytes.
        offset_bytes: u64,
        /// The device beneath: an index into [`Plan::targets`].
        on: usize,
    },
    /// A LUKS container that exists on the device beneath (the config's
    /// `existing`): its data mapped by dm-crypt with the volume key its
    /// key file opens, read-only. The plan holds no key: it is derived
    /// again from the key file when the container is opened.
    Luks {
        /// The container's UUID.
        uuid: String,
        /// 1 or 2.
        version: u32,
        /// The data's cipher (`aes-xts-plain64`).
        cipher: String,
        /// The volume key's size, bits.
        key_bits: u32,
        /// The encryption sector size, bytes.
        sector_size: u32,
        /// Where the data starts on the device beneath, bytes.
        data_offset_bytes: u64,
        /// The key file (its bytes are the passphrase), read when opened.
        key_file: std::path::PathBuf,
        /// The time trying the key on the keyslots may take, seconds (the
        /// entry's `unlock_seconds`).
        unlock_seconds: u64,
        /// The device beneath: an index into [`Plan::targets`].
        on: usize,
    },
    /// An LVM logical volume that exists on its physical volumes (the
    /// config's `existing`): the dm table LVM would load for it, read-only.
    Volume {
        /// `VG/LV`, as LVM names it.
        lv: String,
        /// The volume's UUID, as LVM prints it.
        lv_uuid: String,
        /// The volume group's UUID.
        vg_uuid: String,
        /// The metadata's sequence number the table was made from.
        seqno: u64,
        /// The table: its segments over `pvs` (stripe device indices into `pvs`).
        segments: Vec<Segment>,
        /// The PVs its segments use, in order: indices into
        /// [`Plan::targets`] (disks, partitions, existing arrays).
        pvs: Vec<usize>,
    },
}

/// An array or a layer of the plan; assembled in the order of
/// [`Plan::stacks`] (everything beneath a stack comes before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedStack {
    /// Its name in the config.
    pub name: String,
    /// Its target: an index into [`Plan::targets`] (path `md:NAME` or
    /// `dm:NAME` until assembled).
    pub target: usize,
    /// What it is.
    pub kind: StackKind,
    /// Every disk beneath it (through other stacks too), indices into
    /// [`Plan::targets`].
    pub disks: Vec<usize>,
    /// Where the config defines it (`arrays[0]`, `layers[1]`).
    pub at: String,
    /// How it was assembled: read-only unless every disk beneath may be
    /// written; `None` until assembled.
    pub mode: Option<Mode>,
    /// A layer's readahead to set once it is up (`queue/read_ahead_kb`),
    /// bytes; `None`: the kernel's choice.
    pub read_ahead_bytes: Option<u64>,
    /// An md array that exists on its members (the config's `existing`):
    /// assembled from their superblocks, read-only, never written.
    pub existing: Option<ExistingMd>,
}

/// What an existing md array is, from its members' superblocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExistingMd {
    /// The array's UUID, as mdadm prints it.
    pub uuid: String,
    /// The superblock's version: `0.90`, `1.0`, `1.1`, `1.2`.
    pub metadata: String,
    /// Its name in its superblock (1.x), as mdadm wrote it.
    pub md_name: Option<String>,
    /// Slots without a member here (a degraded array).
    pub missing: usize,
}

impl ExistingMd {
    /// The version SET_ARRAY_INFO takes: (0, 90) or (1, minor).
    pub fn version(&self) -> (i32, i32) {
        match self.metadata.as_str() {
            "0.90" => (0, 90),
            v => (1, v.strip_prefix("1.").and_then(|m| m.parse().ok()).unwrap_or(2)),
        }
    }
}

/// Why an existing array (and its members) is never written.
pub const EXISTING_NEVER_WRITTEN: &str =
    "an existing array is never written: writing through it writes every member, and its data is the user's";
/// Why an existing LUKS container (and the device beneath) is never written.
pub const EXISTING_LUKS_NEVER_WRITTEN: &str =
    "an existing LUKS container is never written: writing through it writes the device beneath, and its data is the user's";
/// Why an existing logical volume (and its PVs) is never written.
pub const EXISTING_VOLUME_NEVER_WRITTEN: &str =
    "an existing volume is never written: writing through it writes its physical volumes, and its data is the user's";

impl PlannedStack {
    /// The targets right beneath it.
    pub fn under(&self) -> Vec<usize> {
        match &self.kind {
            StackKind::Array { members, .. } => members.clone(),
            StackKind::Volume { pvs, .. } => pvs.clone(),
            StackKind::Crypt { on, .. } | StackKind::Linear { on, .. } | StackKind::Luks { on, .. } => vec![*on],
        }
    }

    /// Whether it holds the user's data as it was found (an existing
    /// array, container or volume): assembled read-only and never written,
    /// nor anything beneath it.
    pub fn is_existing(&self) -> bool {
        self.existing.is_some() || matches!(self.kind, StackKind::Volume { .. } | StackKind::Luks { .. })
    }

    /// Why an existing stack is never written, and why the disks beneath
    /// it are not (`None` for a stack bootbench builds).
    pub fn never_written(&self) -> Option<(&'static str, String)> {
        match &self.kind {
            StackKind::Volume { lv, .. } => Some((
                EXISTING_VOLUME_NEVER_WRITTEN,
                format!("beneath the existing volume {lv}: {EXISTING_VOLUME_NEVER_WRITTEN}"),
            )),
            StackKind::Luks { uuid, .. } => Some((
                EXISTING_LUKS_NEVER_WRITTEN,
                format!("beneath the existing LUKS container {uuid}: {EXISTING_LUKS_NEVER_WRITTEN}"),
            )),
            _ if self.existing.is_some() => Some((
                EXISTING_NEVER_WRITTEN,
                format!("a member of the existing array {}: {EXISTING_NEVER_WRITTEN}", self.name),
            )),
            _ => None,
        }
    }
}

/// What the results record of a stack: its kind, what it is built of (by
/// the targets' paths), options, and how it differs from what mdadm,
/// cryptsetup or LVM would build.
pub fn stack_info(targets: &[PlannedTarget], st: &PlannedStack) -> StackInfo {
    let path = |i: &usize| targets[*i].info.path.clone();
    let mut info = StackInfo {
        name: st.name.clone(),
        mode: st.mode,
        ..StackInfo::default()
    };
    match &st.kind {
        StackKind::Array {
            level,
            chunk_bytes,
            layout,
            members,
        } => {
            info.kind = StackClass::Md;
            info.level = StackLevel::from(*level);
            info.members = members.iter().map(path).collect();
            info.chunk_bytes = Some(u64::from(*chunk_bytes));
            info.layout = layout.map(|l| l.name().to_string());
            info.notes = array_notes(&mut info, st.existing.as_ref());
        }
        StackKind::Crypt {
            cipher,
            key_bits,
            no_read_workqueue,
            no_write_workqueue,
            sector_size,
            on,
        } => {
            info.kind = StackClass::Dm;
            info.level = StackLevel::from(LayerKind::Crypt);
            info.on = Some(path(on));
            for (k, v) in [
                ("cipher", cipher.name().to_string()),
                ("key_bits", key_bits.to_string()),
                ("no_read_workqueue", no_read_workqueue.to_string()),
                ("no_write_workqueue", no_write_workqueue.to_string()),
                ("sector_size", sector_size.to_string()),
            ] {
                info.options.insert(k.to_string(), v);
            }
            info.notes = vec!["plain dm-crypt with a random key: no LUKS header (cryptsetup writes one)".to_string()];
        }
        StackKind::Linear { offset_bytes, on } => {
            info.kind = StackClass::Dm;
            info.level = StackLevel::from(LayerKind::Linear);
            info.on = Some(path(on));
            info.options
                .insert("offset_bytes".to_string(), offset_bytes.to_string());
        }
        StackKind::Luks {
            uuid,
            version,
            cipher,
            key_bits,
            sector_size,
            data_offset_bytes,
            on,
            ..
        } => {
            info.kind = StackClass::Dm;
            info.level = StackLevel::Luks;
            info.on = Some(path(on));
            for (k, v) in [
                ("uuid", uuid.clone()),
                ("version", version.to_string()),
                ("cipher", cipher.clone()),
                ("key_bits", key_bits.to_string()),
                ("sector_size", sector_size.to_string()),
                ("data_offset_bytes", data_offset_bytes.to_string()),
            ] {
                info.options.insert(k.to_string(), v);
            }
            info.notes = vec![format!(
                "an existing LUKS{version} container, opened read-only with the volume key its key file opens (as \
                 cryptsetup open --readonly); neither key nor key file is recorded"
            )];
        }
        StackKind::Volume {
            lv,
            lv_uuid,
            vg_uuid,
            seqno,
            segments,
            pvs,
        } => {
            info.kind = StackClass::Dm;
            info.level = StackLevel::Lvm;
            info.members = pvs.iter().map(path).collect();
            // On one PV, the analysis compares it with that device as any layer.
            if let [pv] = pvs.as_slice() {
                info.on = Some(path(pv));
            }
            let devs: Vec<String> = pvs.iter().map(path).collect();
            for (k, v) in [
                ("lv", lv.clone()),
                ("lv_uuid", lv_uuid.clone()),
                ("vg_uuid", vg_uuid.clone()),
                ("seqno", seqno.to_string()),
                ("table", crate::stacks::dm::table_lines(segments, &devs).join("; ")),
            ] {
                info.options.insert(k.to_string(), v);
            }
            info.notes = vec![format!(
                "an existing logical volume, mapped read-only from its volume group's metadata (seqno {seqno}) as \
                 LVM maps it"
            )];
        }
    }
    if let Some(b) = st.read_ahead_bytes {
        info.options.insert("read_ahead_kb".to_string(), (b / 1024).to_string());
    }
    info
}

/// The notes of an md array's record (and, for an existing one, its
/// identity in `info`'s options).
fn array_notes(info: &mut StackInfo, existing: Option<&ExistingMd>) -> Vec<String> {
    let Some(e) = existing else {
        return vec![
            "no write-intent bitmap (mdadm's default has one)".to_string(),
            "no superblock, assembled clean: no resync ran".to_string(),
        ];
    };
    info.options.insert("uuid".to_string(), e.uuid.clone());
    info.options.insert("metadata".to_string(), e.metadata.clone());
    if let Some(n) = &e.md_name {
        info.options.insert("md_name".to_string(), n.clone());
    }
    let mut notes = vec![format!(
        "an existing array, assembled read-only from its members' superblocks (metadata {})",
        e.metadata
    )];
    if e.missing > 0 {
        notes.push(format!("degraded: {} slot(s) without a member", e.missing));
    }
    notes
}

/// Once a stack is assembled: its target takes the device's path, kind and
/// geometry, and its tests are expanded again for that geometry (a test
/// that no longer fits is skipped, saying why).
pub fn assembled(plan: &mut Plan, ti: usize, path: &str, g: Geometry) {
    let t = &mut plan.targets[ti];
    t.info.path = path.to_string();
    t.info.size_bytes = g.size;
    t.info.logical_block_size = g.logical_block;
    t.info.physical_block_size = g.physical_block;
    t.geometry = g;
    let (writable, refusal) = (t.info.writable, t.info.write_refusal.clone());
    // Every stack's record names the devices beneath by their paths now.
    for st in &plan.stacks {
        let info = stack_info(&plan.targets, st);
        plan.targets[st.target].info.stack = Some(info);
    }
    for item in plan.items.iter_mut().filter(|it| it.target == ti) {
        item.action = match action_for(&item.spec, &g, writable, refusal.as_deref()) {
            Ok(a) => a,
            Err(e) => Action::Skip(format!("does not fit this target: {e}")),
        };
    }
}

/// Target `ti` may not be written after all (its claim was refused when
/// its tests began: a signature appeared, the device is busy): it and
/// every stack built on it lose their grants, and their tests that write
/// are skipped with the reason. Returns the targets changed.
pub fn withdraw_writes(plan: &mut Plan, ti: usize, why: &str) -> Vec<usize> {
    let path = plan.targets[ti].info.path.clone();
    let mut hit = vec![(ti, why.to_string())];
    for st in plan.stacks.iter().filter(|st| st.disks.contains(&ti)) {
        hit.push((
            st.target,
            format!("writes refused: member {path} is not writable ({why})"),
        ));
    }
    for (t, reason) in &hit {
        let target = &mut plan.targets[*t];
        target.grant = None;
        target.info.writable = false;
        target.info.write_refusal = Some(reason.clone());
        for it in plan.items.iter_mut().filter(|it| it.target == *t) {
            if it.spec.workload.writes() && matches!(it.action, Action::Run(_)) {
                it.action = Action::Skip(reason.clone());
            }
        }
    }
    hit.into_iter().map(|(t, _)| t).collect()
}

/// The plan in words: [`describe_plan_lines`], each line ended by `\n`.
#[cfg(test)]
pub fn describe_plan(plan: &Plan) -> String {
    describe_plan_lines(plan).iter().map(|l| format!("{l}\n")).collect()
}

/// Whom a plan is described for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Described {
    /// The run on this machine (`validate`, the console at boot).
    Here,
    /// A stick's config checked on another machine than the server it is
    /// for (`validate --booted`): a disk it names that is not here, and
    /// what stands on one, are the server's business, planned at its boot.
    ForTheServer,
}

/// The plan in words, one line each. A line holds strings from devices
/// (model, serial, WWN) as they are, line breaks included: print each line
/// through [`bench_core::vocab::console::safe`], which keeps it one line.
pub fn describe_plan_lines(plan: &Plan) -> Vec<String> {
    describe_plan_for(plan, Described::Here)
}

/// [`describe_plan_lines`] for `whom`.
pub fn describe_plan_for(plan: &Plan, whom: Described) -> Vec<String> {
    let mut s = vec![plan_header(plan, true)];
    for ti in 0..plan.targets.len() {
        s.extend(target_lines(plan, ti, whom));
    }
    s.extend(plan.surface_scan.as_ref().map(|sp| sp.line()));
    s.extend(plan.burn_in.as_ref().map(|bp| bp.line(|ti| &plan.targets[ti].info)));
    s.extend(
        plan.precondition
            .as_ref()
            .map(|pp| pp.line(|ti| &plan.targets[ti].info)),
    );
    s.push(match plan.cpu_dma_latency {
        Some(us) => format!("cpu_dma_latency: held at {us} us from the first test to the last"),
        None => "cpu_dma_latency: off (the CPUs' own idle states)".to_string(),
    });
    s.extend(plan.acceptance.describe());
    s
}

/// The plan's first line: its config, profile and seed (and, when `sim`,
/// that the targets are simulated).
pub fn plan_header(plan: &Plan, sim: bool) -> String {
    format!(
        "plan: config {}, profile {}, seed {}{}",
        plan.config_source,
        plan.profile.as_deref().unwrap_or("none"),
        plan.seed,
        if sim && plan.simulated {
            ", simulated targets"
        } else {
            ""
        }
    )
}

/// Target `ti` in words: the device (or why it is absent), its stack, its
/// tests ([`test_lines`]).
fn target_lines(plan: &Plan, ti: usize, whom: Described) -> Vec<String> {
    let t = &plan.targets[ti];
    let i = &t.info;
    if let Some(why) = &t.missing {
        return vec![match whom {
            Described::Here => format!("target {}: absent: {why}; its tests are skipped, the rest runs", i.path),
            Described::ForTheServer => format!(
                "target {}: not on this machine: checked, and its tests planned, when the server boots",
                i.path
            ),
        }];
    }
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".to_string());
    let mut s = vec![format!(
        "target {}: {} {}, model {}, serial {}, wwn {}, {} B ({:.1} MiB), logical block {} B, physical block {} B, writable: {}",
        i.path,
        i.kind,
        opt(&i.name),
        opt(&i.model),
        opt(&i.serial),
        opt(&i.wwn),
        i.size_bytes,
        mib(i.size_bytes),
        i.logical_block_size,
        i.physical_block_size,
        if i.writable { "yes".to_string() } else { format!("no{}", i.write_refusal.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()) }
    )];
    if let Some(st) = plan.stack_of(ti) {
        s.push(format!("  {}", stack_line(plan, st)));
    }
    s.extend(test_lines(plan, ti, whom));
    s
}

/// The tests of target `ti` in words, one line each.
pub fn test_lines(plan: &Plan, ti: usize, whom: Described) -> Vec<String> {
    // A stack with a disk beneath that is not here: planned at the server's boot.
    let elsewhere = whom == Described::ForTheServer
        && plan
            .stack_of(ti)
            .is_some_and(|st| st.disks.iter().any(|d| plan.targets[*d].missing.is_some()));
    let mut s = Vec::new();
    for (n, item) in plan.items.iter().filter(|it| it.target == ti).enumerate() {
        let head = format!("  test {}: {} ({}): ", n + 1, item.spec.name, item.spec.workload.name());
        match &item.action {
            Action::Skip(_) if elsewhere => {
                s.push(format!(
                    "{head}planned when the server boots (a disk beneath is not on this machine)"
                ));
            }
            Action::Skip(why) => s.push(format!("{head}skipped: {why}")),
            Action::Run(steps) => {
                let labels: Vec<String> = steps
                    .iter()
                    .map(|st| {
                        let bound = match (st.limit.runtime, st.limit.bytes, st.limit.ios) {
                            (Some(t), _, _) => format!("{} ms", t.0 / 1_000_000),
                            (None, Some(b), _) => format!("{b} B/job"),
                            (None, None, Some(n)) => format!("{n} I/Os/job"),
                            _ => "unbounded".to_string(),
                        };
                        format!(
                            "{} (bs {} B, QD{}, {} job(s), {})",
                            st.label, st.bs, st.iodepth, st.jobs, bound
                        )
                    })
                    .collect();
                s.push(format!("{head}{} step(s): {}", steps.len(), labels.join(", ")));
            }
        }
    }
    s
}

/// A stack in words: `raid0 "r0" of /dev/sdb, /dev/sdc, chunk 524288 B`.
pub fn stack_line(plan: &Plan, st: &PlannedStack) -> String {
    let path = |i: &usize| plan.targets[*i].info.path.clone();
    match &st.kind {
        StackKind::Array {
            level,
            chunk_bytes,
            layout,
            members,
        } => format!(
            "array {:?}: {} of {}, chunk {chunk_bytes} B{}",
            st.name,
            level.name(),
            members.iter().map(path).collect::<Vec<_>>().join(", "),
            layout.map(|l| format!(", layout {l}")).unwrap_or_default()
        ),
        StackKind::Crypt {
            cipher,
            key_bits,
            no_read_workqueue,
            no_write_workqueue,
            sector_size,
            on,
        } => format!(
            "layer {:?}: crypt {} ({key_bits}-bit random key, sector {sector_size} B{}{}) on {}",
            st.name,
            cipher.name(),
            if *no_read_workqueue { ", no_read_workqueue" } else { "" },
            if *no_write_workqueue {
                ", no_write_workqueue"
            } else {
                ""
            },
            path(on)
        ),
        StackKind::Linear { offset_bytes, on } => {
            format!("layer {:?}: linear at offset {offset_bytes} B on {}", st.name, path(on))
        }
        StackKind::Luks {
            uuid,
            version,
            cipher,
            key_bits,
            sector_size,
            data_offset_bytes,
            unlock_seconds,
            on,
            ..
        } => format!(
            "container {:?}: the existing LUKS{version} container {uuid} on {}, read-only: {cipher} with a \
             {key_bits}-bit key from its key file (tried within {unlock_seconds} s), data from byte \
             {data_offset_bytes}, sector {sector_size} B",
            st.name,
            path(on)
        ),
        StackKind::Volume { lv, segments, pvs, .. } => {
            let devs: Vec<String> = pvs.iter().map(path).collect();
            format!(
                "volume {:?}: the existing LVM volume {lv}, read-only, table: {}",
                st.name,
                crate::stacks::dm::table_lines(segments, &devs).join("; ")
            )
        }
    }
}

#[allow(clippy::cast_precision_loss)] // display only
pub(super) fn mib(b: u64) -> f64 {
    b as f64 / 1_048_576.0
}

/// A simulated disk as named on the command line: `sim:hdd:1G`, `sim:ssd:256M`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimSpec {
    /// True for the HDD model, false for the SSD model.
    pub hdd: bool,
    /// Size, bytes.
    pub size: u64,
}

impl SimSpec {
    /// The simulated disk: the HDD or SSD model of this size, writable (it
    /// holds no data).
    pub fn disk(&self) -> SimDisk {
        let model = if self.hdd {
            SimModel::hdd(self.size)
        } else {
            SimModel::ssd(self.size)
        };
        SimDisk::new(model, true)
    }
}

/// The action of one test on a target of geometry `g`, `writable` or not
/// (`refusal` says why not).
pub(super) fn action_for(
    spec: &TestSpec,
    g: &Geometry,
    writable: bool,
    refusal: Option<&str>,
) -> Result<Action, PlanError> {
    let steps = expand(spec, g)?;
    Ok(if spec.workload.writes() && !writable {
        Action::Skip(refusal.unwrap_or("writes refused").to_string())
    } else {
        Action::Run(steps)
    })
}
