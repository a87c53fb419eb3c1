//! The config as written: the serde types of `bootbench.json`, typed at
//! the edge (strict: `deny_unknown_fields`; each value's type says what it
//! takes, see [`super::value`]; serde's messages carry the field's path,
//! the line and column), the reading of the file, and the one error type of
//! every stage. The text is parsed once, into [`RawConfig`].

use std::fmt;

use bench_core::document::result::SelfTestKind;
use bench_core::spec::{CmdType, CpusPolicy, IoEngine, MixOrder, Workload};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::safety::TargetRef;
use crate::stacks::md::{MdLayout, MdLevel};

use super::model::{Cipher, LayerKind, OnFinish};
use super::value::{
    closed, closed_opt, Closed, CpuList, Duration, Flag, Obj, Object, PlacementArg, Range, Size, SteadyArg, WakeLimit,
    Whole,
};

/// A config error: one line, exit status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub(super) fn err<T>(msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError(escape_controls(&msg.into())))
}

/// A target as written: a path string, or an object with exactly one of
/// `path`, `serial`, `wwn`.
#[derive(Clone, Debug, PartialEq)]
pub struct RawTarget(pub TargetObj);

/// The object form of a target.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TargetObj {
    /// A path.
    #[serde(default)]
    pub path: Option<String>,
    /// A serial number.
    #[serde(default)]
    pub serial: Option<String>,
    /// A world-wide name.
    #[serde(default)]
    pub wwn: Option<String>,
}

impl<'de> Deserialize<'de> for RawTarget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawTarget;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a path string or an object with one of \"path\", \"serial\", \"wwn\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawTarget, E> {
                Ok(RawTarget(TargetObj {
                    path: Some(v.to_string()),
                    ..TargetObj::default()
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawTarget, A::Error> {
                TargetObj::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawTarget)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for RawTarget {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl RawTarget {
    /// The reference, or an error naming `at` if not exactly one key is set.
    pub fn to_ref(&self, at: &str) -> Result<TargetRef, ConfigError> {
        let o = &self.0;
        match (&o.path, &o.serial, &o.wwn) {
            (Some(p), None, None) if !p.is_empty() => Ok(TargetRef::Path(p.clone())),
            (None, Some(s), None) if !s.is_empty() => Ok(TargetRef::Serial(s.clone())),
            (None, None, Some(w)) if !w.is_empty() => Ok(TargetRef::Wwn(w.clone())),
            _ => {
                // As written (JSON), not as Rust's Debug shows the struct.
                let shown: serde_json::Map<String, serde_json::Value> =
                    [("path", &o.path), ("serial", &o.serial), ("wwn", &o.wwn)]
                        .into_iter()
                        .filter_map(|(k, v)| v.as_deref().map(|v| (k.to_string(), serde_json::Value::from(v))))
                        .collect();
                err(format!(
                    "{at}: {} is not a target; expected a non-empty path string or an object with exactly one of \"path\", \"serial\", \"wwn\"",
                    serde_json::Value::Object(shown)
                ))
            }
        }
    }
}

macro_rules! param_structs {
    ($($p:ident: $t:ty),* $(,)?) => {
        /// Test parameters as written; every key optional.
        #[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct RawParams {
            $(
                #[doc = concat!("`", stringify!($p), "`")]
                #[serde(default)]
                pub $p: Option<$t>,
            )*
        }

        /// One test as written: a workload, an optional name, parameters.
        #[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct RawTest {
            /// The workload.
            #[serde(deserialize_with = "closed")]
            pub workload: Workload,
            /// The test's name (default: from the workload and parameters).
            #[serde(default)]
            pub name: Option<String>,
            $(
                #[doc = concat!("`", stringify!($p), "`")]
                #[serde(default)]
                pub $p: Option<$t>,
            )*
        }

        impl RawTest {
            /// The parameters given.
            pub fn params(&self) -> RawParams {
                RawParams { $($p: self.$p.clone(),)* }
            }
        }

        impl RawParams {
            /// The keys given.
            pub fn given(&self) -> Vec<&'static str> {
                let mut v = Vec::new();
                $(if self.$p.is_some() { v.push(stringify!($p)); })*
                v
            }
        }
    };
}

/// A closed set in a parameter: read by serde name ([`closed`]).
macro_rules! closed_param {
    ($name:ident, $t:ty) => {
        /// The parameter's value, read by its serde name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
        pub struct $name(pub $t);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                closed(d).map($name)
            }
        }
    };
}
closed_param!(MixOrderArg, MixOrder);
closed_param!(CpusPolicyArg, CpusPolicy);
closed_param!(IoEngineArg, IoEngine);
closed_param!(CmdTypeArg, CmdType);

/// The ranges of the whole-number parameters, each with what its errors
/// say is expected.
pub mod ranges {
    use super::Range;

    macro_rules! ranges {
        ($($name:ident: $min:expr, $max:expr, $expected:expr;)*) => {
            $(
                #[doc = concat!("`", $expected, "`")]
                #[derive(Debug)]
                pub struct $name;
                impl Range for $name {
                    const MIN: u64 = $min;
                    const MAX: u64 = $max;
                    const EXPECTED: &'static str = $expected;
                }
            )*
        };
    }

    ranges! {
        Count: 1, u32::MAX as u64, "a whole number from 1 to 4294967295";
        Percent: 0, 100, "a percentage of reads from 0 to 100";
        Writes: 1, u64::MAX, "a whole number of writes from 1";
        Seed: 0, u64::MAX, "a whole number from 0 to 18446744073709551615";
        FsyncFreq: 0, u64::MAX, "a whole number of requests (0 = never)";
        MinIos: 0, u64::MAX, "a whole number of requests (0 = none)";
        FileNum: 1, bench_core::engine::plan::MAX_FILE_NUM, "a whole number of files from 1 to 4096 (each fsync point flushes every file)";
        Passes: 1, u32::MAX as u64, "a whole number of passes from 1";
        Warmup: 0, u32::MAX as u64, "a whole number of passes (0 = none)";
        Cpu: 0, bench_core::vocab::cpus::MAX_CPUS as u64 - 1, "a CPU number from 0 to 8191";
        Batch: 0, 4096, "a whole number of requests from 0 to 4096 (0 = iodepth)";
    }
}

param_structs!(
    bs: Size,
    size: Size,
    offset: Size,
    length: Size,
    zone_bytes: Size,
    runtime: Duration,
    ramp_time: Duration,
    sample_interval: Duration,
    iodepth: Whole<ranges::Count>,
    jobs: Whole<ranges::Count>,
    rwmixread: Whole<ranges::Percent>,
    rwmix_order: MixOrderArg,
    norandommap: Flag,
    flush_every: Whole<ranges::Writes>,
    points: Whole<ranges::Count>,
    seed: Whole<ranges::Seed>,
    verify: Flag,
    direct: Flag,
    fsync_freq: Whole<ranges::FsyncFreq>,
    end_fsync: Flag,
    end_close: Flag,
    min_ios: Whole<ranges::MinIos>,
    file_num: Whole<ranges::FileNum>,
    max_bs: Size,
    passes: Whole<ranges::Passes>,
    warmup: Whole<ranges::Warmup>,
    fill: Flag,
    pause: Duration,
    hipri: Flag,
    sqthread_poll: Flag,
    sqthread_poll_cpu: Whole<ranges::Cpu>,
    sq_thread_idle: Duration,
    ioengine: IoEngineArg,
    cmd_type: CmdTypeArg,
    read_digest: Flag,
    iodepth_batch_submit: Whole<ranges::Batch>,
    cpus_allowed: CpuList,
    cpus_allowed_policy: CpusPolicyArg,
    placement: PlacementArg,
    ss: SteadyArg,
    ss_dur: Duration,
    ss_ramp: Duration,
    ss_interval: Duration,
    ss_max: Duration
);

impl Closed for Workload {
    const WHAT: &'static str = "a workload";
    const ALL: &'static [Self] = &Workload::ALL;
}

impl Closed for MixOrder {
    const WHAT: &'static str = "a mix order";
    const ALL: &'static [Self] = &[MixOrder::Random, MixOrder::Ratio];
    fn expected() -> String {
        "\"random\" (each request drawn, as fio) or \"ratio\" (sysbench rndrw's running ratio of reads to writes)"
            .to_string()
    }
}

impl Closed for CpusPolicy {
    const WHAT: &'static str = "a CPU policy";
    const ALL: &'static [Self] = &[CpusPolicy::Shared, CpusPolicy::Split];
    fn expected() -> String {
        "\"shared\" (every job on every CPU of cpus_allowed) or \"split\" (each job on one of them)".to_string()
    }
}

impl Closed for IoEngine {
    const WHAT: &'static str = "an I/O engine";
    const ALL: &'static [Self] = &[IoEngine::Psync, IoEngine::IoUring, IoEngine::IoUringCmd];
    fn expected() -> String {
        "\"psync\" (pread/pwrite, iodepth 1), \"io_uring\" or \"io_uring_cmd\" (NVMe passthrough on /dev/ngXnY), \
         as fio's ioengine"
            .to_string()
    }
}

impl Closed for CmdType {
    const WHAT: &'static str = "a passthrough command set";
    const ALL: &'static [Self] = &[CmdType::Nvme];
    fn expected() -> String {
        "\"nvme\" (fio's cmd_type for ioengine io_uring_cmd)".to_string()
    }
}

impl Closed for MdLevel {
    const WHAT: &'static str = "a level";
    const ALL: &'static [Self] = &MdLevel::ALL;
}

impl Closed for MdLayout {
    const WHAT: &'static str = "a layout";
    const ALL: &'static [Self] = &MdLayout::ALL;
    /// The layouts of each level that has any: `left-asymmetric, ...
    /// (raid5, raid6), near2, far2, offset2 (raid10)`.
    fn expected() -> String {
        let by_level = [(MdLevel::Raid5, "raid5, raid6"), (MdLevel::Raid10, "raid10")];
        let groups: Vec<String> = by_level
            .iter()
            .map(|(level, names)| {
                let of: Vec<MdLayout> = MdLayout::ALL.into_iter().filter(|l| l.fits(*level)).collect();
                format!("{} ({names})", bench_core::vocab::names::names_joined(&of, ", "))
            })
            .collect();
        format!("one of {}", groups.join(", "))
    }
}

impl Closed for LayerKind {
    const WHAT: &'static str = "a layer kind";
    const ALL: &'static [Self] = &[LayerKind::Crypt, LayerKind::Linear];
    fn expected() -> String {
        "crypt or linear".to_string()
    }
}

impl Closed for Cipher {
    const WHAT: &'static str = "a supported cipher";
    const ALL: &'static [Self] = &[Cipher::AesXtsPlain64];
    fn expected() -> String {
        "\"aes-xts-plain64\"".to_string()
    }
}

impl Closed for OnFinish {
    const WHAT: &'static str = "an on_finish action";
    const ALL: &'static [Self] = &[OnFinish::PowerOff, OnFinish::Reboot, OnFinish::Halt];
}

impl Object for RawParams {
    const EXPECTED: &'static str = "an object of test parameters such as {\"runtime\": \"2s\"}";
}

impl Object for RawTest {
    const EXPECTED: &'static str = "an object such as {\"workload\": \"rand_read\"}";
}

impl Object for RawDestructive {
    const EXPECTED: &'static str = "an object {\"confirm\": ..., \"targets\": [...]}";
}

impl Object for RawArray {
    const EXPECTED: &'static str = "an object {\"name\": ..., \"level\": ..., \"members\": [...]}";
}

impl Object for RawLayer {
    const EXPECTED: &'static str = "an object {\"name\": ..., \"kind\": ..., \"on\": ...}";
}

impl Object for RawConfig {
    const EXPECTED: &'static str = "an object such as {\"profile\": \"quick\", \"targets\": [...]}";
    const ROOT: bool = true;
}

/// The `destructive` section as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawDestructive {
    /// The confirmation phrase.
    #[serde(default)]
    pub confirm: Option<String>,
    /// The targets that may be written.
    #[serde(default)]
    pub targets: Vec<RawTarget>,
    /// Write even over signatures.
    #[serde(default)]
    pub allow_overwrite_signatures: bool,
    /// The time the console counts down before the run begins, when it
    /// may write (default [`super::model::DEFAULT_COUNTDOWN`]).
    #[serde(default)]
    pub countdown: Option<Duration>,
}

/// The config file as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// A profile's name.
    #[serde(default)]
    pub profile: Option<String>,
    /// The base seed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The targets.
    #[serde(default)]
    pub targets: Vec<RawTarget>,
    /// Parameters applied to every test (only the keys given).
    #[serde(default)]
    pub defaults: Option<Obj<RawParams>>,
    /// Tests, after the profile's.
    #[serde(default)]
    pub tests: Vec<Obj<RawTest>>,
    /// Write permission.
    #[serde(default)]
    pub destructive: Option<Obj<RawDestructive>>,
    /// What the machine does after an unattended run: `poweroff` (the
    /// default), `reboot` or `halt`. Ignored by the live command.
    #[serde(default, deserialize_with = "closed_opt")]
    pub on_finish: Option<OnFinish>,
    /// Booted from the stick: the serial ports the results go to besides
    /// the console (`["ttyS1"]`; `[]`: the console only); absent: every
    /// port with a UART. `bootbench.serial=` overrides it. Ignored by the
    /// live command.
    #[serde(default)]
    pub serial_ports: Option<Vec<String>>,
    /// Where the run also sends its document with PUT: an http(s) URL
    /// template (`{machine}`, `{run}`, `{n}`; see `results::remote`).
    /// `bootbench.results_url=` overrides it in an unattended run; the live
    /// command sends it too (without the run-once check).
    #[serde(default)]
    pub results_url: Option<String>,
    /// A Prometheus Pushgateway's URL (`http://host:9091`): while the run
    /// goes, its state and figures are pushed there every
    /// `metrics_interval` and once at the end (`results::metrics`).
    /// `bootbench.metrics_url=` overrides it.
    #[serde(default)]
    pub metrics_url: Option<String>,
    /// How often the metrics are pushed: 1 s to 1 h, default 10 s.
    #[serde(default)]
    pub metrics_interval: Option<Duration>,
    /// md arrays to assemble from member disks (docs/arrays-and-existing-storage.md, "Arrays and layers").
    #[serde(default)]
    pub arrays: Vec<Obj<RawArray>>,
    /// device-mapper layers over disks, arrays or other layers.
    #[serde(default)]
    pub layers: Vec<Obj<RawLayer>>,
    /// md arrays that exist on the disks, opened read-only from their
    /// superblocks, LVM volumes and LUKS containers: `"all"` or a list of
    /// names or UUIDs, `VG/LV` and LUKS entries (typed as read, checked in
    /// [`super::existing`]).
    #[serde(default)]
    pub existing: Option<super::existing_raw::RawExisting>,
    /// After the per-target tests, run each test on every disk at once.
    #[serde(default)]
    pub all_at_once: bool,
    /// With `all_at_once`: each test on 2, 4, 8, ... disks at once first.
    #[serde(default)]
    pub scaling: bool,
    /// The disks' benchmarks all at once, each disk its own thread.
    #[serde(default)]
    pub parallel: bool,
    /// For testing only: every test's deadline, replacing the one derived
    /// from its plan (`bench_core::engine::plan::deadline`), e.g. `"5s"`.
    #[serde(default)]
    pub test_deadline: Option<Duration>,
    /// What a disk must show to pass (docs/acceptance.md).
    #[serde(default)]
    pub acceptance: Option<Obj<super::acceptance_raw::RawAcceptance>>,
    /// A SMART self-test on every disk (or those named), before the
    /// benchmarks: `"short"`, or `{"kind": ..., "disks": [...], "max_wait": ...}`.
    #[serde(default)]
    pub self_test: Option<RawSelfTest>,
    /// The CPU wake-up latency limit held from the first test to the last,
    /// microseconds (default 0), or `"off"` (docs/engines-and-fidelity.md, "The I/O engines").
    #[serde(default)]
    pub cpu_dma_latency: Option<WakeLimit>,
    /// Every block of each disk read once before the benchmarks (README
    /// "Surface scan").
    #[serde(default)]
    pub surface_scan: Option<Obj<super::pass_raw::RawSurfaceScan>>,
    /// Every block of each granted disk written and read back before the
    /// benchmarks (docs/burn-in-and-scans.md, "Burn-in").
    #[serde(default)]
    pub burn_in: Option<Obj<super::pass_raw::RawBurnIn>>,
    /// SSD preconditioning to steady state before the benchmarks (README
    /// "Preconditioning").
    #[serde(default)]
    pub precondition: Option<Obj<super::pass_raw::RawPrecondition>>,
}

/// `self_test` as written: a kind alone (every disk), or the object form.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RawSelfTest(pub SelfTestObj);

/// The object form of `self_test`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SelfTestObj {
    /// Which self-test.
    #[serde(deserialize_with = "closed")]
    pub kind: SelfTestKind,
    /// Only the disks of these serials (absent: every disk).
    #[serde(default)]
    pub disks: Option<Vec<String>>,
    /// The longest wait for a disk's self-test (absent: the kind's default).
    #[serde(default)]
    pub max_wait: Option<Duration>,
}

impl<'de> Deserialize<'de> for RawSelfTest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawSelfTest;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a self-test kind (\"short\", \"extended\", \"conveyance\") or an object {\"kind\": ..., \"disks\": [...], \"max_wait\": ...}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawSelfTest, E> {
                let kind = closed(de::value::StrDeserializer::<E>::new(v))?;
                Ok(RawSelfTest(SelfTestObj {
                    kind,
                    disks: None,
                    max_wait: None,
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawSelfTest, A::Error> {
                SelfTestObj::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawSelfTest)
            }
        }
        d.deserialize_any(V)
    }
}

impl Closed for SelfTestKind {
    const WHAT: &'static str = "a self-test kind";
    const ALL: &'static [Self] = SelfTestKind::ALL;
}

impl RawConfig {
    /// The disks it names by serial or WWN, as targets, array members,
    /// layers' `on` or in `destructive`, each once, in order.
    pub fn named_disks(&self) -> Vec<TargetRef> {
        let at = |t: &RawTarget| t.to_ref("").ok();
        let all = self
            .targets
            .iter()
            .chain(self.arrays.iter().flat_map(|a| a.members.iter()))
            .chain(self.layers.iter().map(|l| &l.on))
            .chain(self.destructive.iter().flat_map(|d| d.targets.iter()));
        let mut out: Vec<TargetRef> = Vec::new();
        for r in all.filter_map(at) {
            if matches!(r, TargetRef::Serial(_) | TargetRef::Wwn(_)) && !out.contains(&r) {
                out.push(r);
            }
        }
        out
    }
}

/// One md array as written.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawArray {
    /// Its name, `[a-z0-9_-]{1,32}`.
    pub name: String,
    /// The level.
    #[serde(deserialize_with = "closed")]
    pub level: MdLevel,
    /// Member disks, in order.
    pub members: Vec<RawTarget>,
    /// Chunk size (default 512k; a power of two, at least 4k).
    #[serde(default)]
    pub chunk: Option<Size>,
    /// raid5/raid6: `left-asymmetric`, `left-symmetric` (default),
    /// `right-asymmetric`, `right-symmetric`; raid10: `near2` (default),
    /// `far2`, `offset2`.
    #[serde(default, deserialize_with = "closed_opt")]
    pub layout: Option<MdLayout>,
}

/// One device-mapper layer as written.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLayer {
    /// Its name, `[a-z0-9_-]{1,32}`.
    pub name: String,
    /// What it is.
    #[serde(deserialize_with = "closed")]
    pub kind: LayerKind,
    /// What it sits on: an array's or layer's name, or a disk (path string,
    /// or an object with one of `path`, `serial`, `wwn`).
    pub on: RawTarget,
    /// crypt: the cipher (only `aes-xts-plain64`, LUKS2's default).
    #[serde(default, deserialize_with = "closed_opt")]
    pub cipher: Option<Cipher>,
    /// crypt: key size in bits, 256 or 512 (default 512).
    #[serde(default)]
    pub key_bits: Option<u32>,
    /// crypt: bypass the read workqueue.
    #[serde(default)]
    pub no_read_workqueue: Option<bool>,
    /// crypt: bypass the write workqueue.
    #[serde(default)]
    pub no_write_workqueue: Option<bool>,
    /// crypt: encryption sector size, 512 to 4096, a power of two (default 512).
    #[serde(default)]
    pub sector_size: Option<u32>,
    /// linear: where the data starts on the device beneath (default 1M, as LVM).
    #[serde(default)]
    pub offset: Option<Size>,
    /// The layer's readahead (its `queue/read_ahead_kb`), a multiple of
    /// 4 KiB, as `lvcreate --readahead` or `blockdev --setra` set it;
    /// absent: the kernel's choice.
    #[serde(default)]
    pub read_ahead: Option<Size>,
}

/// Parse a config's text, once, into its types; errors name the field's
/// path, the line and column.
pub fn parse(text: &str, source: &str) -> Result<RawConfig, ConfigError> {
    let fail = |e: &dyn fmt::Display| ConfigError(escape_controls(&format!("{source}: {e}")));
    // serde_path_to_error: a wrong type names its field (`tests[0].seed:
    // invalid type: string "42", expected u64 at line 1 column 13`).
    let mut de = serde_json::Deserializer::from_str(text);
    let config: Obj<RawConfig> = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            fail(e.inner())
        } else {
            fail(&format_args!("{path}: {}", e.inner()))
        }
    })?;
    de.end().map_err(|e| fail(&e))?;
    Ok(config.0)
}

/// `msg` with control characters escaped (`\n`, `\u{1b}`): messages quote
/// keys and names as written (serde's "unknown field" does), and a message
/// must stay one line that cannot drive the console.
pub(super) fn escape_controls(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    for c in msg.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The largest config file read: a real one is a few KiB; this bound keeps
/// a wrong file (an image, a log) from being read whole into memory.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Read the config file at `path`: `Ok(None)` if there is none; an error
/// naming the file if it cannot be read, is larger than
/// [`MAX_CONFIG_BYTES`] (only that much more than the bound is read) or is
/// not UTF-8.
pub fn read_config_file(path: &std::path::Path) -> Result<Option<String>, String> {
    use std::io::Read;
    let shown = path.display();
    let f = match crate::disks::file::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let too_big =
        |n: u64| format!("{shown} is {n} bytes or more; expected a config of at most 1 MiB ({MAX_CONFIG_BYTES} bytes)");
    if let Ok(m) = f.metadata() {
        if m.len() > MAX_CONFIG_BYTES {
            return Err(too_big(m.len()));
        }
    }
    let mut bytes = Vec::new();
    f.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        format!(
            "{shown}: not UTF-8 text (byte {}); expected a JSON config",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Where a test came from: errors in the user's own tests are fatal, a
/// profile's test that does not fit a target is skipped there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The n-th test of the profile.
    Profile(usize),
    /// `tests[n]`.
    User(usize),
}

/// The command line's say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--profile`: replaces the config's profile.
    pub profile: Option<String>,
    /// `--target`: if any, they replace the config's targets.
    pub targets: Vec<String>,
    /// `--simulate`: targets are simulated disks.
    pub simulate: bool,
    /// Writes withheld from every target for this reason, whatever the
    /// config's `destructive` says (a config from the network that the
    /// initramfs does not allow to write).
    pub withhold_writes: Option<String>,
}
