//! Per-member accounting: what every device beneath an array or a layer
//! did while a step ran on it, from the kernel's own I/O counters.
//!
//! Each block device's `/sys/class/block/NAME/stat` holds the fields of
//! `/proc/diskstats` (Documentation/block/stat.rst): reads completed, reads
//! merged, sectors read, ms reading, writes completed, writes merged,
//! sectors written, ms writing, in flight, `io_ticks` (ms with I/O in
//! flight), and more. A [`Meter`] reads them for every device beneath the
//! tested target when the step's measured part begins (after its fill),
//! at every sample interval, and at its end; [`MemberIo`] records the
//! differences. Sectors in this file are always 512 bytes, whatever the
//! device's logical block size.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bench_core::document::result::{MemberIo, MemberSamples, ResultDoc, StackMode};

use crate::plan::Plan;

/// The unit of the sector fields of a block device's `stat`.
const STAT_SECTOR: u64 = 512;

/// One device to watch: its path in the results, the stack it is right
/// beneath, and its `stat` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watched {
    /// Its [`bench_core::document::result::TargetInfo::path`].
    pub path: String,
    /// The path of the array or layer it is right beneath.
    pub parent: String,
    /// `/sys/class/block/NAME/stat`.
    pub stat: PathBuf,
}

impl Watched {
    /// The device of kernel name `name` (`sda`, `md127`, `dm-0`).
    pub fn new(path: &str, parent: &str, name: &str) -> Watched {
        Watched {
            path: path.to_string(),
            parent: parent.to_string(),
            stat: crate::sysfs::live(format!("class/block/{name}/stat")),
        }
    }
}

/// Every device beneath target `ti` of `plan` when it is an array or a
/// layer (through the stacks beneath, down to the disks: each stack's
/// devices right after it), each with the stack it is right beneath;
/// empty for a disk. A device whose kernel name is unknown is left out.
pub fn beneath(plan: &Plan, ti: usize) -> Vec<Watched> {
    let mut out = Vec::new();
    let Some(st) = plan.stacks.iter().find(|s| s.target == ti) else {
        return out;
    };
    let parent = &plan.targets[ti].info.path;
    for u in st.under() {
        let t = &plan.targets[u].info;
        if let Some(name) = &t.name {
            out.push(Watched::new(&t.path, parent, name));
        }
        out.extend(beneath(plan, u));
    }
    out
}

/// What the counters say was written beneath an array or layer the
/// kernel runs read-only: nothing may be (md's read-error repair, a
/// resync, a dm target's metadata), so every such write is an error of
/// the run, in words, one per test and device.
pub fn writes_beneath_read_only(doc: &ResultDoc) -> Vec<String> {
    let read_only = |path: &str| {
        doc.targets
            .iter()
            .any(|t| t.path == path && t.stack.as_ref().is_some_and(|s| s.mode == Some(StackMode::ReadOnly)))
    };
    let mut out = Vec::new();
    for t in doc.tests.iter().filter(|t| read_only(&t.target)) {
        for st in &t.steps {
            for m in st.members.iter().filter(|m| m.writes > 0 || m.write_bytes > 0) {
                out.push(format!(
                    "{} bytes in {} writes reached {} beneath read-only {} during test {} (step {})",
                    m.write_bytes, m.writes, m.path, t.target, t.name, st.label
                ));
            }
        }
    }
    out
}

/// The counters a [`MemberIo`] is made of, as the kernel keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Reads completed.
    pub reads: u64,
    /// Sectors read (512 bytes).
    pub read_sectors: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sectors written (512 bytes).
    pub write_sectors: u64,
    /// Milliseconds with I/O in flight.
    pub io_ticks_ms: u64,
    /// Requests in flight now (not a counter: what the last reading saw).
    pub in_flight: u64,
}

impl Counters {
    /// The counters of a `stat` file's text; `None` if it has fewer than
    /// the 10 fields every kernel since 2.6 writes, or one is not a number.
    pub fn parse(text: &str) -> Option<Counters> {
        let f: Vec<u64> = text
            .split_whitespace()
            .take(10)
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        (f.len() == 10).then(|| Counters {
            reads: f[0],
            read_sectors: f[2],
            writes: f[4],
            write_sectors: f[6],
            io_ticks_ms: f[9],
            in_flight: f[8],
        })
    }

    /// `self - earlier`, each field (0 where a counter went back: the
    /// device was removed and added again).
    fn since(self, earlier: Counters) -> Counters {
        Counters {
            reads: self.reads.saturating_sub(earlier.reads),
            read_sectors: self.read_sectors.saturating_sub(earlier.read_sectors),
            writes: self.writes.saturating_sub(earlier.writes),
            write_sectors: self.write_sectors.saturating_sub(earlier.write_sectors),
            io_ticks_ms: self.io_ticks_ms.saturating_sub(earlier.io_ticks_ms),
            in_flight: self.in_flight,
        }
    }

    /// Bytes read and written.
    fn bytes(self) -> u64 {
        (self.read_sectors + self.write_sectors).saturating_mul(STAT_SECTOR)
    }
}

/// Read every watched device's counters; `None` if one cannot be read.
/// How long [`settled`] waits for the requests in flight to be counted.
const SETTLE: Duration = Duration::from_millis(100);

/// The counters once no watched device has a request in flight, or after
/// [`SETTLE`]. The block layer completes a request's data (the benchmark
/// sees it done) before it counts it in `stat`: read at once, the last few
/// requests of a step can be missing.
fn settled(watched: &[Watched]) -> Option<Vec<Counters>> {
    let start = Instant::now();
    loop {
        let now = read_all(watched)?;
        if now.iter().all(|c| c.in_flight == 0) || start.elapsed() >= SETTLE {
            return Some(now);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn read_all(watched: &[Watched]) -> Option<Vec<Counters>> {
    watched
        .iter()
        .map(|w| std::fs::read_to_string(&w.stat).ok().and_then(|t| Counters::parse(&t)))
        .collect()
}

/// A ratio of durations, 0 for an empty window.
#[allow(clippy::cast_precision_loss)] // nanosecond counts far below 2^53
fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// `busy_ns` over `window_ns`, at most 1: the kernel counts `io_ticks` in
/// whole jiffies (1 to 10 ms), so a device busy all through a short window
/// shows up to a jiffy more busy time than the window lasted (20 ms in a
/// window of 19.8 ms, seen). `busy_ns` itself stays as the kernel said.
fn utilization(busy_ns: u64, window_ns: u64) -> f64 {
    ratio(busy_ns, window_ns).min(1.0)
}

/// Counts one step: the counters at its start, at each sample interval,
/// and at its end.
#[derive(Debug)]
pub struct Meter {
    watched: Vec<Watched>,
    interval: Duration,
    start: Instant,
    first: Vec<Counters>,
    /// The counters at the last interval's end, and when.
    mark: (Instant, Vec<Counters>),
    /// Per interval, per device: (bytes per second, utilization).
    samples: Vec<Vec<(f64, f64)>>,
}

impl Meter {
    /// Start counting `watched` with samples every `interval`; `None` when
    /// there is nothing to watch or a counter cannot be read (a step
    /// without accounting, never a made-up one).
    pub fn start(watched: &[Watched], interval: Duration) -> Option<Meter> {
        if watched.is_empty() {
            return None;
        }
        let first = read_all(watched)?;
        let start = Instant::now();
        Some(Meter {
            watched: watched.to_vec(),
            interval,
            start,
            mark: (start, first.clone()),
            first,
            samples: Vec::new(),
        })
    }

    /// Take the samples of every interval that has ended (called often,
    /// at least once per interval).
    pub fn tick(&mut self) {
        if self.interval.is_zero() {
            return;
        }
        let now = Instant::now();
        if now.duration_since(self.mark.0) < self.interval {
            return;
        }
        let Some(c) = read_all(&self.watched) else { return };
        let width = u64::try_from(now.duration_since(self.mark.0).as_nanos()).unwrap_or(u64::MAX);
        let row = c
            .iter()
            .zip(&self.mark.1)
            .map(|(now_c, then)| {
                let d = now_c.since(*then);
                (
                    ratio(d.bytes(), width) * 1e9,
                    utilization(d.io_ticks_ms.saturating_mul(1_000_000), width),
                )
            })
            .collect();
        self.samples.push(row);
        self.mark = (now, c);
    }

    /// The records of the whole step: one per watched device, in order,
    /// each with its share among the devices of the same parent. Empty if
    /// the counters cannot be read at the end.
    pub fn finish(self) -> Vec<MemberIo> {
        let Some(last) = settled(&self.watched) else {
            return Vec::new();
        };
        let window = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let deltas: Vec<Counters> = last.iter().zip(&self.first).map(|(l, f)| l.since(*f)).collect();
        let interval_ns = u64::try_from(self.interval.as_nanos()).unwrap_or(u64::MAX);
        records(&self.watched, &deltas, window, interval_ns, &self.samples)
    }
}

/// The records from each device's counter differences over `window_ns`
/// and its per-interval samples.
fn records(
    watched: &[Watched],
    deltas: &[Counters],
    window_ns: u64,
    interval_ns: u64,
    samples: &[Vec<(f64, f64)>],
) -> Vec<MemberIo> {
    let siblings = |parent: &str| -> u64 {
        watched
            .iter()
            .zip(deltas)
            .filter(|(w, _)| w.parent == parent)
            .map(|(_, d)| d.bytes())
            .sum()
    };
    watched
        .iter()
        .zip(deltas)
        .enumerate()
        .map(|(i, (w, d))| {
            let busy_ns = d.io_ticks_ms.saturating_mul(1_000_000);
            MemberIo {
                path: w.path.clone(),
                parent: w.parent.clone(),
                reads: d.reads,
                writes: d.writes,
                read_bytes: d.read_sectors.saturating_mul(STAT_SECTOR),
                write_bytes: d.write_sectors.saturating_mul(STAT_SECTOR),
                busy_ns,
                window_ns,
                utilization: utilization(busy_ns, window_ns),
                share: ratio(d.bytes(), siblings(&w.parent)),
                samples: MemberSamples {
                    interval_ns,
                    bytes_per_sec: samples.iter().map(|row| row[i].0).collect(),
                    utilization: samples.iter().map(|row| row[i].1).collect(),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `stat` line of a 6.1 kernel (17 fields).
    const LINE: &str =
        "    1214      7   98170    532   4321    11  123456   789    0   1500   1321   0 0 0 0   42   17\n";

    #[test]
    fn parses_the_fields_the_records_use() {
        assert_eq!(
            Counters::parse(LINE),
            Some(Counters {
                reads: 1214,
                read_sectors: 98170,
                writes: 4321,
                write_sectors: 123_456,
                io_ticks_ms: 1500,
                in_flight: 0,
            })
        );
        assert_eq!(Counters::parse("1 2 3 4 5 6 7 8 9"), None, "too few fields");
        assert_eq!(Counters::parse("1 2 3 4 x 6 7 8 9 10"), None, "not a number");
    }

    #[test]
    fn shares_are_among_the_devices_of_one_parent() {
        // md0 over sda and sdb; dm-0 on md0: sda did 3/4 of md0's bytes.
        let w = [
            Watched::new("/dev/md0", "/dev/dm-0", "md0"),
            Watched::new("/dev/sda", "/dev/md0", "sda"),
            Watched::new("/dev/sdb", "/dev/md0", "sdb"),
        ];
        let c = |read_sectors, write_sectors, io_ticks_ms| Counters {
            reads: 1,
            read_sectors,
            writes: 1,
            write_sectors,
            io_ticks_ms,
            in_flight: 0,
        };
        let deltas = [c(8, 0, 1000), c(6, 0, 1000), c(2, 0, 250)];
        let samples = vec![vec![(1.0, 0.5), (2.0, 0.25), (3.0, 1.0)]];
        let r = records(&w, &deltas, 2_000_000_000, 1_000_000_000, &samples);
        let shares: Vec<f64> = r.iter().map(|m| m.share).collect();
        assert_eq!(shares, [1.0, 0.75, 0.25]);
        assert_eq!(r[1].read_bytes, 6 * 512, "sectors are 512 bytes");
        assert_eq!(r[2].busy_ns, 250_000_000);
        assert!((r[2].utilization - 0.125).abs() < 1e-12, "{}", r[2].utilization);
        assert_eq!(r[2].samples.bytes_per_sec, [3.0]);
        assert_eq!(r[2].samples.utilization, [1.0]);
        // io_ticks count whole jiffies: busy 20 ms in a window of 19.8 ms
        // is a device busy all the time, utilization 1, not 1.01.
        let r = records(&w[1..2], &[c(8, 0, 20)], 19_778_631, 0, &[]);
        assert_eq!((r[0].busy_ns, r[0].utilization), (20_000_000, 1.0), "{r:?}");
        // Nothing moved: shares are 0, not NaN.
        let r = records(&w[1..], &[Counters::default(); 2], 0, 0, &[]);
        assert!(r.iter().all(|m| m.share == 0.0 && m.utilization == 0.0), "{r:?}");
    }

    /// A write counted beneath a read-only array is an error naming the
    /// device, the array and the test; beneath a read-write one, or with
    /// no writes, nothing.
    #[test]
    fn writes_beneath_a_read_only_stack_are_errors() {
        use bench_core::document::result::{StackClass, StackInfo, StepResult, TargetInfo, TestResult};
        let stack = |path: &str, mode: StackMode| TargetInfo {
            path: path.into(),
            stack: Some(StackInfo {
                kind: StackClass::Md,
                mode: Some(mode),
                ..StackInfo::default()
            }),
            ..TargetInfo::default()
        };
        let w = [Watched::new("/dev/sda", "/dev/md0", "sda")];
        let c = |write_sectors| Counters {
            writes: u64::from(write_sectors > 0),
            write_sectors,
            ..Counters::default()
        };
        let test = |target: &str, write_sectors: u64| {
            let spec = bench_core::spec::TestSpec::new("t", bench_core::spec::Workload::SeqRead, |_| {});
            let mut step: StepResult = serde_json::from_value(serde_json::json!({
                "label": "main", "access": "direct", "bs": 4096, "iodepth": 1, "jobs": 1,
                "range_start": 0, "range_end": 0, "runtime_ns": 1, "read": null, "write": null, "flush": null
            }))
            .expect("step");
            step.members = records(&w, &[c(write_sectors)], 1, 0, &[]);
            TestResult {
                name: spec.name,
                workload: spec.workload,
                target: target.into(),
                params: spec.params,
                status: bench_core::document::result::Status::Ok,
                steps: vec![step],
                summary: bench_core::document::result::Summary::default(),
                zones: None,
                placement: None,
            }
        };
        let mut doc = crate::run::new_doc(None, "t", 1, false, vec![stack("/dev/md0", StackMode::ReadOnly)]);
        doc.tests = vec![test("/dev/md0", 0)];
        assert!(writes_beneath_read_only(&doc).is_empty());
        doc.tests.push(test("/dev/md0", 8));
        assert_eq!(
            writes_beneath_read_only(&doc),
            ["4096 bytes in 1 writes reached /dev/sda beneath read-only /dev/md0 during test t (step main)"]
        );
        doc.targets = vec![stack("/dev/md0", StackMode::ReadWrite)];
        assert!(writes_beneath_read_only(&doc).is_empty(), "granted");
    }

    /// On a real device: a meter over a loop device sees the reads done
    /// between its start and its end, and none of the writes done before.
    #[test]
    fn a_meter_counts_the_io_between_its_start_and_end() {
        let Some(lo) = crate::testutil::Loop::new("accounting", &vec![1u8; 8 << 20]) else {
            return;
        };
        let name = lo.dev.rsplit('/').next().expect("name").to_string();
        let w = [Watched::new(&lo.dev, "/dev/md9", &name)];
        // Written before the start (and whatever reading the partition
        // table did at attach time): not in the record.
        {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().write(true).open(&lo.dev).expect("open");
            f.write_all(&[2u8; 1 << 20]).expect("write before");
            f.sync_all().expect("sync");
            crate::sys::blk::flush_buffers(&f).expect("BLKFLSBUF");
        }
        let mut m = Meter::start(&w, Duration::from_millis(1)).expect("meter");
        let data = std::fs::read(&lo.dev).expect("read");
        std::thread::sleep(Duration::from_millis(5));
        m.tick();
        let r = m.finish();
        assert_eq!(data.len(), 8 << 20);
        assert_eq!(r.len(), 1);
        assert!(r[0].read_bytes >= 8 << 20, "the whole device was read: {r:?}");
        assert_eq!(
            r[0].write_bytes, 0,
            "the writes before the start are not counted: {r:?}"
        );
        assert!((r[0].share - 1.0).abs() < 1e-12);
        assert_eq!(r[0].samples.bytes_per_sec.len(), 1, "{r:?}");
    }
}
