//! What a test is: a workload with its parameters (as the user gives them),
//! and the steps it expands into on a given target (see `crate::engine::plan`).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::io::{Access, Op};
pub use crate::io::{CmdType, IoEngine};
use crate::vocab::units::{Bytes, Nanos};

/// The workloads, each a twin of a classic tool (README.md's "Workloads and
/// profiles" table names which).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// hdparm -T: re-reads of the first 2 MiB through the page cache, one at
    /// a time, each touched as hdparm's `read_big_block` does.
    CachedRead,
    /// hdparm -t: sequential 2 MiB buffered reads after dropping the cache,
    /// one in flight, each touched as hdparm's `read_big_block` does.
    BufferedRead,
    /// hdparm -t --direct: sequential 2 MiB O_DIRECT reads, one in flight,
    /// each touched as hdparm's `read_big_block` does.
    DirectRead,
    /// Sequential reads (fio rw=read, dd iflag=direct, sysbench seqrd).
    SeqRead,
    /// Sequential writes (fio rw=write, dd oflag=direct, sysbench seqwr).
    SeqWrite,
    /// Random reads aligned to bs (fio randread, sysbench rndrd).
    RandRead,
    /// Random writes aligned to bs (fio randwrite, sysbench rndwr).
    RandWrite,
    /// Random mixed reads and writes with `rwmixread` percent reads (fio randrw).
    RandRw,
    /// diskinfo -t seek times: full, half, quarter stroke, short forward and
    /// backward, sequential outer and inner; 1-block reads.
    SeekProfile,
    /// diskinfo -t transfer rates at outside, middle, inside, plus an N-point
    /// surface curve across the whole target.
    Zones,
    /// diskinfo -c: 10 x 1 MiB reads against the same bytes read one logical
    /// block at a time; the difference per command is the overhead.
    CommandOverhead,
    /// diskinfo -i: random reads with 128 in flight at block, 4 KiB, 32 KiB,
    /// 128 KiB, 1024 KiB.
    IopsSweep,
    /// Writes of `bs` with a flush after every `flush_every` writes, and with
    /// one flush at the end (seed 000's "commit size").
    Commit,
    /// diskinfo -S (`slogbench`, a ZFS SLOG's load): synchronous random
    /// writes, one at a time, each followed by a cache flush, at sizes
    /// doubling from the logical block to `max_bs`, each size for at least
    /// `runtime` in whole batches of 250 writes.
    Slog,
}

impl Workload {
    /// Every workload, in the order of the documentation.
    pub const ALL: [Workload; 14] = [
        Workload::CachedRead,
        Workload::BufferedRead,
        Workload::DirectRead,
        Workload::SeqRead,
        Workload::SeqWrite,
        Workload::RandRead,
        Workload::RandWrite,
        Workload::RandRw,
        Workload::SeekProfile,
        Workload::Zones,
        Workload::CommandOverhead,
        Workload::IopsSweep,
        Workload::Commit,
        Workload::Slog,
    ];

    /// The name used in configs and results: serde's.
    pub fn name(self) -> &'static str {
        crate::vocab::names::name_of(&self)
    }

    /// The workload of that name.
    pub fn from_name(name: &str) -> Option<Workload> {
        crate::vocab::names::from_name(name)
    }

    /// True if the workload writes to the target (and so needs permission).
    pub const fn writes(self) -> bool {
        matches!(
            self,
            Workload::SeqWrite | Workload::RandWrite | Workload::RandRw | Workload::Commit | Workload::Slog
        )
    }
}

/// A test's parameters after defaults are applied; recorded in the results
/// exactly as run. Names follow fio where fio has the option.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Block size of each request, bytes.
    pub bs: Bytes,
    /// Requests in flight per job.
    pub iodepth: u32,
    /// Parallel jobs, each with its own queue (fio numjobs).
    pub jobs: u32,
    /// Time bound of each measured step, nanoseconds (excluding ramp time).
    pub runtime: Option<Nanos>,
    /// Byte bound of each measured step per job; with `runtime` too, the
    /// first reached ends the step.
    pub size: Option<Bytes>,
    /// Start of the range the test uses, bytes from the start of the target.
    pub offset: Bytes,
    /// Length of the range; `None` means to the end of the target.
    pub length: Option<Bytes>,
    /// Time at the start of each step whose I/O is not counted, nanoseconds.
    /// When it is over, the step waits for the requests the ramp issued to
    /// complete (fio quiesces at the end of its `ramp_time` too) and the
    /// measured time starts then, with nothing in flight.
    pub ramp_time: Nanos,
    /// Percentage of reads in `rand_rw` (fio rwmixread).
    pub rwmixread: u8,
    /// How `rand_rw` orders its reads and writes ([`MixOrder`]): drawn per
    /// request (fio) or by sysbench's running ratio. Absent in documents
    /// before it existed (`random`).
    #[serde(default)]
    pub rwmix_order: MixOrder,
    /// fio's `norandommap`: random offsets drawn each on its own, so a
    /// block may come again before every block has had its turn (as
    /// sysbench, DiskSpd and diskinfo draw them). False, fio's default:
    /// each job's random requests visit every block of the range once, in
    /// a random order, before any block again (fio keeps a map of the
    /// blocks done, `io_u.c` `__get_next_rand_offset`), so no request finds
    /// what an earlier one left in a cache. Absent in documents before it
    /// existed (false; those ran as `true`).
    #[serde(default)]
    pub norandommap: bool,
    /// `commit`: flush after every this many writes.
    pub flush_every: u64,
    /// `zones`: points on the surface curve; `seek_profile`: unused.
    pub points: u32,
    /// `zones`: bytes read at each of outside/middle/inside (diskinfo: 100 MiB);
    /// each surface point reads a quarter of it (at least 1 MiB).
    /// (`command_overhead` takes the total of its big reads from `size`,
    /// default 10 MiB, as diskinfo -c.)
    pub zone_bytes: Bytes,
    /// Seed of the offset generator and write buffers; recorded so a run can
    /// be repeated exactly.
    pub seed: u64,
    /// Width of one throughput/IOPS sample, nanoseconds (default 1 s).
    pub sample_interval: Nanos,
    /// Write workloads: write known contents (see [`crate::engine::verify`]) and,
    /// after each step, read back everything written and compare (fio's
    /// `verify`). The read-back is not timed; filling the buffers is, as in
    /// fio. A mismatch ends the test with status `error`, errno 84 (EILSEQ).
    #[serde(default)]
    pub verify: bool,
    /// False: through the page cache (fio `direct=0`; dd without
    /// `iflag=direct`/`oflag=direct`; sysbench fileio, whose
    /// `file-extra-flags` is empty by default). Buffered steps drop the
    /// target's cache first, untimed (the seeds' `sync; drop_caches` and
    /// `hdparm -f`). `cached_read` and `buffered_read` are always buffered,
    /// `direct_read` always direct. Absent in documents before it existed
    /// (true).
    #[serde(default = "yes")]
    pub direct: bool,
    /// sysbench `file-fsync-freq`: before the next request, once the
    /// requests issued (reads and writes) are a multiple of this and any
    /// wrote since the last flush, issue one flush (`sb_fileio.c`
    /// `file_get_rnd_request`/`file_get_seq_request`; sysbench fsyncs each of
    /// its files in turn, one flush of the target here). 0: never. Absent in
    /// documents before it existed (0).
    #[serde(default)]
    pub fsync_freq: u64,
    /// One flush after the last write, inside the timed part (dd's
    /// `conv=fdatasync` or the seed's `time (dd ...; sync)`, sysbench's
    /// `file-fsync-end`); `None`: none (fio's `end_fsync=0`; before this
    /// default, `seq_write` had one). Absent in documents before it existed
    /// (`None`).
    #[serde(default)]
    pub end_fsync: Option<bool>,
    /// dd's close of the device, inside the timed part: after the last
    /// request, what the last close of a block device does to its page
    /// cache (the kernel's block/bdev.c `blkdev_put_whole` ->
    /// `blkdev_flush_mapping`: `sync_blockdev`, then `kill_bdev`, whose
    /// `truncate_inode_pages` waits for every page still being read): the
    /// dirty pages written back, the reads the kernel's readahead still has
    /// in flight past the last request waited for, and every cached page
    /// dropped. `dd if=DEV` times its close (coreutils dd.c `finish_up`:
    /// `cleanup()` closes both files before `print_stats()`), so its figure
    /// includes that wait. Nothing on a regular file (its close does
    /// neither) or where there is no page cache. Absent in documents before
    /// it existed (false).
    #[serde(default)]
    pub end_close: bool,
    /// A time-bounded step ends at its `runtime` only once each job has
    /// issued at least this many requests after the ramp, so a short test
    /// on a slow device still measures more than a handful of requests (a
    /// 0.5 s test of 1 MiB reads on a 7 MiB/s disk is three and a half).
    /// 0: the runtime alone. fio has no such option (its `number_ios` is a
    /// most, not a least). Absent in documents before it existed (0).
    #[serde(default)]
    pub min_ios: u64,
    /// sysbench `file-num` (its default 128): the files sysbench spreads its
    /// `file-total-size` over. The twin writes one target, but at each
    /// `fsync_freq` point and at the end (`end_fsync`) it issues this many
    /// flushes, as sysbench fsyncs every file in turn (`sb_fileio.c`
    /// `file_get_rnd_request`/`file_get_seq_request`: `fsynced_file` runs
    /// over all `num_files` before `is_dirty` is cleared; `file_thread_done`
    /// fsyncs each file). Each one reaches the device as a cache flush, as
    /// an fsync on a journalling filesystem does even for a clean file.
    /// In a buffered step each of those flushes is one of the range's
    /// `file_num` equal parts (sysbench's files) in turn
    /// ([`crate::io::Op::FlushRange`]), as each file's fsync writes back
    /// that file's pages alone before its flush. Absent in documents
    /// before it existed (1).
    #[serde(default = "one")]
    pub file_num: u64,
    /// `slog`: the largest write size, bytes; the sizes double from the
    /// logical block up to it (diskinfo -S: 8 MiB, its `MAXTX`). Absent in
    /// documents before it existed (8 MiB).
    #[serde(default = "slog_max_bs")]
    pub max_bs: Bytes,
    /// Measured passes of each step: the step runs this many times in a
    /// row and its figures are those of its best pass (the highest bytes
    /// per second, reads and writes together); every pass's figures are
    /// kept in the step's `passes`, the one chosen in `chosen_pass`
    /// (CrystalDiskMark: `TestCount` runs of DiskSpd per test, the score
    /// the highest, DiskBench.cpp `DiskSpd`). Absent in documents before
    /// it existed (1).
    #[serde(default = "one_pass")]
    pub passes: u32,
    /// Whole passes of each step run before the measured ones, their
    /// figures discarded (CrystalDiskMark's "Preparing..." run, `j == 0` in
    /// DiskBench.cpp `DiskSpd`: the same command, its score never taken).
    /// Absent in documents before it existed (0).
    #[serde(default)]
    pub warmup: u32,
    /// Before the test's first step, untimed: write the test's range once,
    /// sequentially in 1 MiB requests with random, never-repeating contents,
    /// then flush (CrystalDiskMark fills its test file with random data
    /// before the first test, DiskBench.cpp `Init`). Writing: it needs the
    /// target's write grant; on a target that may not be written nothing
    /// is written and a read test reads the data already there (the step's
    /// `filled_bytes` is 0). Only the plain read/write workloads fill.
    /// Absent in documents before it existed (false).
    #[serde(default)]
    pub fill: bool,
    /// Idle time after the test, untimed, nanoseconds: the target is synced
    /// (the page cache written back) and left idle this long, so a drive's
    /// own write-back does not land in the next test's time
    /// (CrystalDiskMark's `IntervalTime` between tests, DiskBench.cpp
    /// `Interval`; fio has no such option). 0: none. Absent in documents
    /// before it existed (0).
    #[serde(default)]
    pub pause: Nanos,
    /// fio's `hipri` (io_uring engine): polled completions. The ring is set
    /// up with IORING_SETUP_IOPOLL and completions are reaped by polling
    /// (io_uring_enter with GETEVENTS spins in the kernel), not by waiting
    /// for an interrupt. O_DIRECT only (refused with buffered I/O); the
    /// device's queue must poll (NVMe with poll queues), else its requests
    /// fail with EOPNOTSUPP. Forces the io_uring engine at `iodepth` 1 too,
    /// as fio's `ioengine=io_uring` keeps its ring at `iodepth=1`. Absent in
    /// documents before it existed (false).
    #[serde(default)]
    pub hipri: bool,
    /// fio's `sqthread_poll` (io_uring engine): a kernel thread polls the
    /// submission queue (IORING_SETUP_SQPOLL), so submitting takes no
    /// system call, and the job polls the completion queue. Forces the
    /// io_uring engine at `iodepth` 1 too. Absent in documents before it
    /// existed (false).
    #[serde(default)]
    pub sqthread_poll: bool,
    /// fio's `sqthread_poll_cpu`: the CPU the kernel's submission thread is
    /// bound to (IORING_SETUP_SQ_AFF); only with `sqthread_poll`. `None`:
    /// wherever the scheduler puts it.
    #[serde(default)]
    pub sqthread_poll_cpu: Option<u32>,
    /// How long the kernel's submission thread (`sqthread_poll`) spins
    /// without work before it sleeps (io_uring_params' `sq_thread_idle`,
    /// milliseconds in the kernel; fio leaves it 0, the kernel's default of
    /// one second). Only with `sqthread_poll`. `None` (absent): the
    /// kernel's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sq_thread_idle: Option<Nanos>,
    /// fio's `ioengine`: `psync` (one request in flight: iodepth 1 only),
    /// `io_uring`, or `io_uring_cmd` (NVMe passthrough: the NVMe commands
    /// themselves through io_uring's IORING_OP_URING_CMD on the namespace's
    /// generic character device `/dev/ngXnY`, bypassing the block layer;
    /// NVMe namespaces only, O_DIRECT only). `None` (absent): bootbench's
    /// choice, psync at iodepth 1 and io_uring beyond it or with `hipri` or
    /// `sqthread_poll`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioengine: Option<IoEngine>,
    /// fio's `cmd_type` (io_uring_cmd engine): the command set of the
    /// passthrough, `nvme` (the only one, fio's default). Set with
    /// `ioengine` `io_uring_cmd` only; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd_type: Option<CmdType>,
    /// Record a digest of the bytes every read of the test brought
    /// ([`crate::io::read_digest`]), so two tests, engines or machines can
    /// be shown to read the same data. Off by default (it costs CPU time in
    /// the timed loop); false is absent.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub read_digest: bool,
    /// fio's `iodepth_batch_submit`: how many requests an io_uring queue
    /// gathers before it hands them to the kernel in one io_uring_enter(2)
    /// (fio's `td_io_queue` commits once `iodepth_batch` are queued). 1,
    /// the default as fio's, submits each request as soon as it is issued;
    /// 0 (fio's "the iodepth value") gathers a whole refill of the queue;
    /// a batch the queue cannot fill is submitted before waiting for a
    /// completion. Only io_uring queues batch: psync issues each request
    /// in its own call. Absent in documents before it existed: those runs
    /// submitted each refill together (0).
    #[serde(default)]
    pub iodepth_batch_submit: u32,
    /// fio's `cpus_allowed`: the CPUs each job's thread may run on, a list
    /// such as `0-3,6` (see [`crate::vocab::cpus::parse_cpu_list`]), parsed
    /// once and written as given. `None`: not pinned.
    #[serde(default)]
    pub cpus_allowed: Option<crate::vocab::cpus::CpuSet>,
    /// fio's `cpus_allowed_policy`: how `cpus_allowed` is shared by the jobs.
    #[serde(default)]
    pub cpus_allowed_policy: CpusPolicy,
    /// Where the jobs' threads run and their buffers are allocated when
    /// `cpus_allowed` names no CPUs ([`crate::vocab::cpus::Placement`]):
    /// by default on the CPUs and memory of the disk's NUMA node. What a
    /// test used, and why, is its result's `placement`. Absent in
    /// documents before it existed (those ran as `any`).
    #[serde(default)]
    pub placement: crate::vocab::cpus::Placement,
    /// fio's `ss`, `ss_dur`, `ss_ramp` and `ss_interval`, with a bound of
    /// our own: before each measured pass of each step, the workload runs
    /// unmeasured until it is in steady state ([`SteadySpec`]). `None`
    /// (absent): no wait.
    #[serde(default, rename = "steady_state", skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadySpec>,
}

/// The figure a steady-state wait watches (fio's `ss` criteria).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SteadyMetric {
    /// Requests per second (reads and writes together).
    Iops,
    /// Bytes per second (reads and writes together).
    Bw,
}

/// fio's `ss=` criterion: the figure, its test, the limit.
///
/// Over the window's intervals (fio's `steadystate.c`):
/// - `iops`, `bw`: the largest distance of an interval's figure from the
///   window's mean (`steadystate_deviation`);
/// - `iops_slope`, `bw_slope`: the least-squares slope of the figures
///   against the interval's index, figure per interval (`steadystate_slope`).
///
/// With `%`, that is taken as a percentage of the window's mean. Steady
/// state is attained when it (the slope's size) is below `limit`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyCriterion {
    /// IOPS or bytes/s.
    pub metric: SteadyMetric,
    /// The slope test, else the deviation test.
    pub slope: bool,
    /// The limit, in the figure's unit (per interval for a slope), or a
    /// percentage of the window's mean with `pct`.
    pub limit: f64,
    /// `limit` is a percentage of the window's mean.
    pub pct: bool,
}

impl SteadyCriterion {
    /// Parse fio's form: `iops:20%`, `iops_slope:0.1%`, `bw:5%`,
    /// `bw_slope:1048576` (an absolute limit in bytes/s per interval). The
    /// error says what is expected.
    pub fn parse(s: &str) -> Result<SteadyCriterion, &'static str> {
        const EXPECTED: &str = "one of iops, iops_slope, bw, bw_slope, a colon and a limit above 0, \
                                a percentage of the window's mean with % (as fio's ss, e.g. iops_slope:0.1%)";
        let (name, limit) = s.split_once(':').ok_or(EXPECTED)?;
        let (metric, slope) = match name {
            "iops" => (SteadyMetric::Iops, false),
            "iops_slope" => (SteadyMetric::Iops, true),
            "bw" => (SteadyMetric::Bw, false),
            "bw_slope" => (SteadyMetric::Bw, true),
            _ => return Err(EXPECTED),
        };
        let (num, pct) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        let limit: f64 = num.trim().parse().map_err(|_| EXPECTED)?;
        if !limit.is_finite() || limit <= 0.0 || (pct && limit > 100.0) {
            return Err(EXPECTED);
        }
        Ok(SteadyCriterion {
            metric,
            slope,
            limit,
            pct,
        })
    }

    /// The criterion's name: `iops`, `iops_slope`, `bw`, `bw_slope`.
    pub const fn name(&self) -> &'static str {
        match (self.metric, self.slope) {
            (SteadyMetric::Iops, false) => "iops",
            (SteadyMetric::Iops, true) => "iops_slope",
            (SteadyMetric::Bw, false) => "bw",
            (SteadyMetric::Bw, true) => "bw_slope",
        }
    }
}

/// `limit` is finite (as [`SteadyCriterion::parse`] makes it), so equality
/// is an equivalence.
impl Eq for SteadyCriterion {}

impl core::fmt::Display for SteadyCriterion {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}:{}{}", self.name(), self.limit, if self.pct { "%" } else { "" })
    }
}

impl Serialize for SteadyCriterion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SteadyCriterion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        SteadyCriterion::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// A steady-state wait before a step is measured (fio's steady-state
/// options; fio ends the job when it is attained, here the measured part
/// starts then). After the step's ramp and `ramp` more, the workload's
/// figure is taken every `interval`; once the last `dur` of them meet the
/// criterion the wait is over (attained), or at `max` after its start
/// (not attained: the step is measured anyway and the record says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SteadySpec {
    /// fio's `ss`.
    pub ss: SteadyCriterion,
    /// fio's `ss_dur`: the window, nanoseconds (a whole number of intervals).
    pub ss_dur: Nanos,
    /// fio's `ss_ramp`: time before the first interval, nanoseconds.
    pub ss_ramp: Nanos,
    /// fio's `ss_interval`: the width of one figure, nanoseconds (fio's 1 s).
    pub ss_interval: Nanos,
    /// The longest wait, from the end of the step's ramp, `ss_ramp`
    /// included, nanoseconds (fio bounds it by `runtime`, which here bounds
    /// the measured part).
    pub ss_max: Nanos,
}

impl SteadySpec {
    /// The window's intervals: `ss_dur / ss_interval`, at least 2.
    pub fn window(&self) -> usize {
        usize::try_from(self.ss_dur.0 / self.ss_interval.0.max(1))
            .unwrap_or(usize::MAX)
            .max(2)
    }
}

/// fio's `cpus_allowed_policy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpusPolicy {
    /// Every job may run on every CPU of the list (fio's default).
    #[default]
    Shared,
    /// Each job gets one CPU of the list: job `i` the `i`-th, round-robin
    /// when there are more jobs than CPUs (fio's `fio_cpus_split`).
    Split,
}

impl CpusPolicy {
    /// The name used in configs and results: serde's.
    pub fn name(self) -> &'static str {
        crate::vocab::names::name_of(&self)
    }
}

/// The order of a mix's reads and writes (`rand_rw`, [`Params::rwmix_order`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MixOrder {
    /// Each request is a read with probability `rwmixread`%, drawn from the
    /// seeded generator (fio's `rwmixread`).
    #[default]
    Random,
    /// sysbench fileio's rndrw (`sb_fileio.c` `file_get_rnd_request`): the
    /// next request is a read while (reads + 1) / (writes + 1), counted
    /// over the job's requests so far, is below `file-rw-ratio`, here
    /// `rwmixread / (100 - rwmixread)` (sysbench's default 1.5 is
    /// `rwmixread` 60). The same order every run: R W R W R R W R W R ...
    Ratio,
}

impl MixOrder {
    /// The name used in configs and results: serde's.
    pub fn name(self) -> &'static str {
        crate::vocab::names::name_of(&self)
    }
}

/// How a step's queues are set up and where its jobs run: fio's io_uring
/// engine options and `cpus_allowed`, from the test's [`Params`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineOpts {
    /// [`Params::hipri`].
    #[serde(default)]
    pub hipri: bool,
    /// [`Params::sqthread_poll`].
    #[serde(default)]
    pub sqthread_poll: bool,
    /// [`Params::sqthread_poll_cpu`].
    #[serde(default)]
    pub sqthread_poll_cpu: Option<u32>,
    /// [`Params::sq_thread_idle`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sq_thread_idle: Option<Nanos>,
    /// [`Params::ioengine`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioengine: Option<IoEngine>,
    /// [`Params::read_digest`].
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub read_digest: bool,
    /// [`Params::iodepth_batch_submit`]: 0, or at least the step's
    /// `iodepth`, submits a whole refill of the queue at once.
    #[serde(default)]
    pub iodepth_batch_submit: u32,
    /// The CPUs of [`Params::cpus_allowed`], sorted; empty: not pinned.
    #[serde(default)]
    pub cpus_allowed: Vec<u32>,
    /// [`Params::cpus_allowed_policy`].
    #[serde(default)]
    pub cpus_allowed_policy: CpusPolicy,
    /// The NUMA node each job's buffers are allocated on (the thread's
    /// memory policy, MPOL_PREFERRED, set before its queue is made):
    /// chosen at run time from [`Params::placement`] and the disk; `None`:
    /// the kernel's default (local to where the thread first touches them).
    #[serde(default)]
    pub mem_node: Option<u32>,
}

impl EngineOpts {
    /// The CPUs job `job`'s thread is pinned to: all of `cpus_allowed`
    /// (shared), or its `job`-th CPU, round-robin (split); empty when not
    /// pinned.
    pub fn cpus_for_job(&self, job: u32) -> Vec<u32> {
        match self.cpus_allowed_policy {
            CpusPolicy::Shared => self.cpus_allowed.clone(),
            CpusPolicy::Split => {
                let n = self.cpus_allowed.len();
                if n == 0 {
                    return Vec::new();
                }
                let i = usize::try_from(job).unwrap_or(0) % n;
                alloc::vec![self.cpus_allowed[i]]
            }
        }
    }

    /// True if the queues must be io_uring whatever the depth (fio's
    /// `ioengine=io_uring` options).
    pub const fn needs_ring(&self) -> bool {
        self.hipri || self.sqthread_poll || matches!(self.ioengine, Some(IoEngine::IoUring | IoEngine::IoUringCmd))
    }
}

/// serde's default for flags that default to on.
const fn yes() -> bool {
    true
}

/// serde's default for counts that default to one.
const fn one() -> u64 {
    1
}

/// diskinfo -S's largest write (`MAXTX`, 8 MiB): [`Params::max_bs`]'s default.
pub const SLOG_MAX_BS: Bytes = Bytes(8 << 20);

/// serde's default for [`Params::max_bs`].
const fn slog_max_bs() -> Bytes {
    SLOG_MAX_BS
}

/// serde's default for [`Params::passes`] and [`Step::passes`].
const fn one_pass() -> u32 {
    1
}

impl Params {
    /// Defaults shared by all workloads: 4 KiB, QD1, one job, 5 s, whole
    /// target, no ramp, 70% reads, flush every write, 16 points, one pass,
    /// no warm-up, no fill, no pause.
    pub const fn defaults() -> Params {
        Params {
            bs: Bytes(4096),
            iodepth: 1,
            jobs: 1,
            runtime: Some(Nanos::from_secs(5)),
            size: None,
            offset: Bytes(0),
            length: None,
            ramp_time: Nanos(0),
            rwmixread: 70,
            rwmix_order: MixOrder::Random,
            norandommap: false,
            flush_every: 1,
            points: 16,
            zone_bytes: Bytes(100 << 20),
            seed: 0x0b00_7be4_c4ed_5eed,
            sample_interval: Nanos::from_secs(1),
            verify: false,
            direct: true,
            fsync_freq: 0,
            end_fsync: None,
            end_close: false,
            min_ios: 0,
            file_num: 1,
            max_bs: SLOG_MAX_BS,
            passes: 1,
            warmup: 0,
            fill: false,
            pause: Nanos(0),
            hipri: false,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            sq_thread_idle: None,
            ioengine: None,
            cmd_type: None,
            read_digest: false,
            iodepth_batch_submit: 1,
            cpus_allowed: None,
            cpus_allowed_policy: CpusPolicy::Shared,
            placement: crate::vocab::cpus::Placement::Disk,
            steady: None,
        }
    }
}

/// One test of a plan: a named workload with its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestSpec {
    /// Unique name within the plan (e.g. `rand_read_4k_qd32`).
    pub name: String,
    /// What it does.
    pub workload: Workload,
    /// How.
    pub params: Params,
}

impl TestSpec {
    /// True if the test writes to the target: its workload writes, or it
    /// fills its range first ([`Params::fill`]). Such a test needs the
    /// target's write grant (a read test that fills runs without it, on
    /// the data already there).
    pub const fn writes(&self) -> bool {
        self.workload.writes() || self.params.fill
    }

    /// A test named `name` of `workload` with the default parameters
    /// ([`Params::defaults`]) changed by `f`.
    pub fn new(name: impl Into<String>, workload: Workload, f: impl FnOnce(&mut Params)) -> TestSpec {
        let mut params = Params::defaults();
        f(&mut params);
        TestSpec {
            name: name.into(),
            workload,
            params,
        }
    }
}

/// The order in which a step visits offsets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pattern {
    /// Consecutive requests from `start`, wrapping to `start` at `end`
    /// (jobs > 1 split `[start, end)` into equal slices, one each).
    Seq {
        /// Read or write.
        op: Op,
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
    },
    /// Uniform random offsets, aligned to bs, in `[start, end)`; `read_pct`%
    /// of the requests are reads (100 = reads only, 0 = writes only), in the
    /// step's [`Step::rwmix_order`].
    Random {
        /// Percentage of reads.
        read_pct: u8,
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
    },
    /// The same offset every time (hdparm -T, diskinfo -c sector re-reads).
    Fixed {
        /// Read or write.
        op: Op,
        /// The offset.
        offset: u64,
    },
    /// diskinfo's seek walks: requests cycle through the cursors in order;
    /// each request reads at its cursor, which then moves by its stride
    /// (bytes, may be negative). One cursor is a plain walk.
    Cursors {
        /// Start offset of each cursor.
        starts: Vec<u64>,
        /// Stride of each cursor, bytes.
        strides: Vec<i64>,
    },
}

/// What the runner does before a step's timed part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prepare {
    /// Nothing.
    None,
    /// Drop the target's cache (hdparm -t).
    DropCaches,
    /// Read the step's first request once, untimed, so it is cached.
    Warm,
    /// Read the step's first request once, untimed, then drop the target's
    /// cache (hdparm -T: `time_cache` reads the first 2 MiB, then calls
    /// `flush_buffer_cache` before its timed loop, whose first read so comes
    /// from the device again).
    WarmThenDrop,
    /// Read the one logical block just before the step's first offset,
    /// untimed, so the timed reads start without a seek (diskinfo's
    /// `rdsect(b0)` before each transfer-rate section). Nothing if the first
    /// offset is below one block.
    Position,
}

/// When a step ends: whichever bound is reached first. At least one is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    /// Measured time, after the ramp.
    pub runtime: Option<Nanos>,
    /// Bytes per job, after the ramp.
    pub bytes: Option<u64>,
    /// Requests per job, after the ramp.
    pub ios: Option<u64>,
    /// The `runtime` bound holds only once a job has issued this many
    /// requests after the ramp ([`Params::min_ios`]); 0: no least.
    #[serde(default)]
    pub min_ios: u64,
}

/// One timed part of a test, as the runner executes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Which part: `main` for single-step workloads, `full_stroke`, `outside`,
    /// `surface_03`, `4096`, `flush_every_1`, ...
    pub label: String,
    /// Direct or buffered.
    pub access: Access,
    /// Untimed preparation.
    pub prepare: Prepare,
    /// Offsets and operations.
    pub pattern: Pattern,
    /// Request size, bytes.
    pub bs: u32,
    /// Requests in flight per job.
    pub iodepth: u32,
    /// Jobs.
    pub jobs: u32,
    /// End condition.
    pub limit: Limit,
    /// Uncounted time at the start.
    pub ramp: Nanos,
    /// Flush after every this many writes (None: never during the step).
    pub flush_every: Option<u64>,
    /// Issue one flush after the last write, inside the timed part (dd
    /// conv=fdatasync; sysbench's final fsync).
    pub flush_at_end: bool,
    /// After the last request, inside the timed part, what the last close
    /// of a block device does to its page cache ([`Params::end_close`]:
    /// [`crate::io::IoQueue::end_close`]).
    #[serde(default)]
    pub end_close: bool,
    /// sysbench's periodic fsync ([`Params::fsync_freq`]): before the next
    /// request, once the requests issued are a multiple of this and any
    /// wrote since the last flush, one flush. None: never.
    #[serde(default)]
    pub fsync_freq: Option<u64>,
    /// Flushes at each of `fsync_freq`'s points and at the end
    /// (`flush_at_end`): sysbench fsyncs each of its `file-num` files in
    /// turn ([`Params::file_num`]); above one, in a buffered step each is
    /// the flush of one file's part of the range. 0 in documents before it
    /// existed: one.
    #[serde(default)]
    pub fsync_files: u64,
    /// The order of a random mix's reads and writes ([`Params::rwmix_order`]).
    #[serde(default)]
    pub rwmix_order: MixOrder,
    /// A random pattern visits every block once before any again (fio's
    /// random map, [`Params::norandommap`] false); false: each offset is
    /// drawn on its own.
    #[serde(default)]
    pub random_map: bool,
    /// Seed of this step's offsets and buffers.
    pub seed: u64,
    /// Sample width.
    pub sample_interval: Nanos,
    /// Write known contents and read them back after the step
    /// ([`Params::verify`]); only on steps that write.
    #[serde(default)]
    pub verify: bool,
    /// After each read completes, inside its timed part, AND one byte in
    /// every this many of its buffer with 1 (hdparm's `read_big_block`:
    /// `buf[i] &= 1` for every 512th byte, "to ensure the read fully
    /// completed"). `None`: reads are not touched. Queues that hold no data
    /// (the simulated disk) have nothing to touch.
    #[serde(default)]
    pub touch_every: Option<u32>,
    /// After the preparation, before the timed part: sync and sleep this
    /// long ([`Target::settle`]; hdparm's `prepare_timing_buf` does
    /// `sync(); sleep(3)` "to give time for I/O to settle" before -t, and
    /// `time_cache` sleeps 1 s after its `flush_buffer_cache`). 0: none.
    ///
    /// [`Target::settle`]: crate::io::Target::settle
    #[serde(default)]
    pub settle: Nanos,
    /// The runtime bound ends the step only when the requests issued are a
    /// multiple of this (diskinfo -S checks its 1 s after each batch of 250
    /// writes, so every size runs whole batches, at least one). `None`: the
    /// runtime bound ends the step whenever it is reached.
    #[serde(default)]
    pub runtime_batch: Option<u64>,
    /// Measured passes ([`Params::passes`]): the runner runs the step this
    /// many times (after the warm-up) and keeps the best.
    #[serde(default = "one_pass")]
    pub passes: u32,
    /// Discarded passes before the measured ones ([`Params::warmup`]).
    #[serde(default)]
    pub warmup: u32,
    /// Before the first pass, untimed: write the step's range once with
    /// random contents ([`Params::fill`]); set on a test's first step only.
    #[serde(default)]
    pub fill: bool,
    /// After the last pass, untimed: sync and idle this long
    /// ([`Params::pause`]); set on a test's last step only.
    #[serde(default)]
    pub pause: Nanos,
    /// The queues' engine options and the jobs' CPUs.
    #[serde(default)]
    pub engine: EngineOpts,
    /// Wait for steady state before each measured pass
    /// ([`Params::steady`]); `None`: no wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadySpec>,
    /// On a zoned disk: the parts of the disk the step's area is laid
    /// onto ([`ZoneMap`]); its pattern's `start` and `end` are then
    /// offsets into that area, not the disk's. `None`: the disk's own
    /// offsets, as on any disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<ZoneMap>,
}

/// A run of bytes of a disk: `[start, start + len)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// First byte.
    pub start: u64,
    /// Bytes.
    pub len: u64,
}

/// A step's area laid onto the parts of a zoned disk it may use, fio's
/// `zonemode=zbd` in bootbench's terms: the area is the extents one after
/// the other (logical offset 0 is the first extent's first byte), each
/// cut to whole requests, so no request crosses from one extent into the
/// next (for sequential zones: never into the gap between a zone's
/// capacity and its size, as fio's `zbd_adjust_block` moves a write that
/// would reach past `zbd_zone_capacity_end` to the next zone).
///
/// # Invariants
/// - `extents` are in ascending order and do not overlap; with
///   `at_write_pointers`, each sequential zone's extent starts at the
///   zone's start and that zone is in `reset`, so its write pointer is the
///   extent's start when the step's pass begins.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneMap {
    /// The disk's byte ranges the area is laid onto, in order.
    pub extents: Vec<Span>,
    /// Whole zones whose write pointers are reset before each pass
    /// (BLKRESETZONE), as fio resets the zones of a write job's range
    /// before it starts (`zbd_file_reset`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reset: Vec<Span>,
    /// Sequential writes at the write pointers: job j of n writes the j-th
    /// n-th of the extents (whole extents), each from its start; the walk
    /// ends at the end of its share (it never wraps onto zones it filled),
    /// and no request goes to the next extent while any to the one before
    /// is in flight, so each job keeps one zone open at a time.
    #[serde(default)]
    pub at_write_pointers: bool,
}

impl ZoneMap {
    /// Bytes of the area for requests of `bs`: each extent cut to whole
    /// requests.
    pub fn area_bytes(&self, bs: u32) -> u64 {
        let bs = u64::from(bs.max(1));
        self.extents.iter().map(|e| e.len / bs * bs).sum()
    }
}

impl Step {
    /// True if the step writes or flushes.
    pub fn writes(&self) -> bool {
        match &self.pattern {
            Pattern::Seq { op, .. } | Pattern::Fixed { op, .. } => *op != Op::Read,
            Pattern::Random { read_pct, .. } => *read_pct < 100,
            Pattern::Cursors { .. } => false,
        }
    }
}

/// The bytes a step touches: `[start, end)` of its pattern (for cursors,
/// over the positions its request bound lets them reach).
pub fn step_range(step: &Step) -> (u64, u64) {
    let bs = u64::from(step.bs);
    match &step.pattern {
        Pattern::Seq { start, end, .. } | Pattern::Random { start, end, .. } => (*start, *end),
        Pattern::Fixed { offset, .. } => (*offset, offset + bs),
        Pattern::Cursors { starts, strides } => {
            let k = u64::try_from(starts.len()).unwrap_or(1).max(1);
            let visits = step.limit.ios.map_or(1, |n| n.div_ceil(k)).max(1);
            let (mut lo, mut hi) = (u64::MAX, 0u64);
            for (i, &s) in starts.iter().enumerate() {
                let stride = strides.get(i).copied().unwrap_or(0);
                let last = i128::from(s) + i128::from(stride) * i128::from(visits - 1);
                let last = u64::try_from(last.max(0)).unwrap_or(u64::MAX);
                lo = lo.min(s).min(last);
                hi = hi.max(s.max(last).saturating_add(bs));
            }
            if starts.is_empty() {
                (0, 0)
            } else {
                (lo, hi)
            }
        }
    }
}
