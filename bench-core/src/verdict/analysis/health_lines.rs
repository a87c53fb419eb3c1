//! The health lines of a document: the disks' health readings (status,
//! counters that rose, temperature) and the throughput that fell during a
//! step.

use crate::document::result::HealthKind;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::document::result::{Health, HealthLine, HealthReading, ResultDoc, Status, TestResult};
use crate::spec::Workload;
use crate::vocab::units::MB;

/// A test whose throughput in the second half of a step is this far below
/// its first half is flagged (`throughput_drop`): more than 20% (second
/// half mean < 0.8 x first half mean). A disk at a steady state varies by a
/// few percent from interval to interval under direct I/O (the samples'
/// `cv`); an SSD whose SLC write cache runs out falls by half or more, and
/// thermal throttling by tens of percent, so 20% over half a test is well
/// above the noise and well below what those do.
pub const THROUGHPUT_DROP: f64 = 0.20;

/// Intervals a step needs for the halves to be compared: two in each half.
pub const DROP_MIN_SAMPLES: usize = 4;

/// How long each half of a step must last for a drop to be reported (2 s):
/// a cache runs out and a drive heats up over seconds to minutes, while
/// a step of a second, sampled every 100 ms, swings by 20% on its own (a
/// throttled disk's burst, a queue filling up).
pub const DROP_MIN_HALF_NS: u64 = 2_000_000_000;

/// Workloads with a steady state to fall from: sequential and random
/// transfers. Not the page cache's (cached and buffered reads), nor
/// workloads whose steps change what they ask on purpose (seek profile,
/// zones, command overhead, the IOPS sweep, commit and slog patterns).
fn steady(w: Workload) -> bool {
    matches!(
        w,
        Workload::SeqRead
            | Workload::SeqWrite
            | Workload::RandRead
            | Workload::RandWrite
            | Workload::RandRw
            | Workload::DirectRead
    )
}

/// The counters whose rise during a run is reported (`counter_gained`):
/// the ones that mean the medium or the link is failing.
pub const WATCHED_COUNTERS: [&str; 8] = [
    "reallocated_sectors",
    "pending_sectors",
    "offline_uncorrectable",
    "crc_errors",
    "media_errors",
    "read_uncorrected_errors",
    "write_uncorrected_errors",
    "grown_defects",
];

/// The health analysis of a finished document: for each disk with a
/// `health` record, a failed SMART status (or an NVMe critical warning),
/// ATA attributes at or below their threshold, watched counters
/// ([`WATCHED_COUNTERS`]) gained between before and after, the warning
/// temperature reached (any reading: before, after, the highest during a
/// test) or time spent above it (NVMe's warning temperature time rising);
/// for every test a throughput drop ([`throughput_drops`]); and for each
/// disk its interrupts served on another NUMA node than its threads
/// ([`super::remote_irqs`]).
pub fn analyze_health(doc: &ResultDoc) -> Vec<HealthLine> {
    let mut out = Vec::new();
    for t in &doc.targets {
        if let Some(h) = &t.health {
            health_lines(&t.path, h, &mut out);
        }
    }
    for test in &doc.tests {
        // A rotational disk's sequential throughput falls across its range
        // by itself (the inner zones are slower): not a drop to report.
        let rotational = doc
            .targets
            .iter()
            .find(|t| t.path == test.target)
            .and_then(|t| t.rotational)
            .unwrap_or(false);
        if rotational && sequential(test.workload) {
            continue;
        }
        out.extend(throughput_drops(test));
    }
    out.extend(super::remote_irqs(doc));
    out
}

/// Workloads that move through their range in order.
fn sequential(w: Workload) -> bool {
    matches!(
        w,
        Workload::SeqRead | Workload::SeqWrite | Workload::BufferedRead | Workload::DirectRead | Workload::Zones
    )
}

fn line(kind: HealthKind, target: &str, test: Option<&str>, what: &str, message: String) -> HealthLine {
    HealthLine {
        kind,
        target: target.into(),
        test: test.map(Into::into),
        what: what.into(),
        before: None,
        after: None,
        limit: None,
        message,
    }
}

/// Why a reading's status is failed, in words (the health lines' and the
/// acceptance SMART-status check's).
pub(crate) fn failed_why(r: &HealthReading) -> String {
    match &r.nvme {
        Some(n) => format!(
            "NVMe critical warning {:#04x}: {}",
            n.critical_warning,
            crate::device::health::nvme_warning_text(n.critical_warning)
        ),
        None => "SMART RETURN STATUS: threshold exceeded".into(),
    }
}

fn health_lines(path: &str, h: &Health, out: &mut Vec<HealthLine>) {
    let before_failed = h.before.smart_passed == Some(false);
    let after_failed = h.after.as_ref().is_some_and(|a| a.smart_passed == Some(false));
    if before_failed || after_failed {
        let when = match (before_failed, after_failed) {
            (true, true) => "before and after the run",
            (true, false) => "before the run",
            _ => "after the run (it passed before)",
        };
        let r = if after_failed {
            h.after.as_ref().unwrap_or(&h.before)
        } else {
            &h.before
        };
        out.push(line(
            HealthKind::SmartFailed,
            path,
            None,
            "smart_status",
            format!("{path}: health status failed {when}: {}", failed_why(r)),
        ));
    }
    let last = h.after.as_ref().unwrap_or(&h.before);
    for a in last.attributes.iter().filter(|a| a.failing) {
        let name = a.name.as_deref().unwrap_or("unknown");
        let mut l = line(
            HealthKind::AttributeFailing,
            path,
            None,
            name,
            format!(
                "{path}: SMART attribute {} ({name}) at {} is at or below its threshold {}",
                a.id,
                a.current,
                a.threshold.unwrap_or(0)
            ),
        );
        l.after = Some(f64::from(a.current));
        l.limit = a.threshold.map(f64::from);
        out.push(l);
    }
    if let Some(after) = &h.after {
        for name in WATCHED_COUNTERS {
            let (Some(&b), Some(&a)) = (h.before.counters.get(name), after.counters.get(name)) else {
                continue;
            };
            if a > b {
                let mut l = line(
                    HealthKind::CounterGained,
                    path,
                    None,
                    name,
                    format!("{path}: {name} rose from {b} to {a} during the run (+{})", a - b),
                );
                l.before = Some(b as f64);
                l.after = Some(a as f64);
                out.push(l);
            }
        }
    }
    temperature_lines(path, h, out);
}

fn temperature_lines(path: &str, h: &Health, out: &mut Vec<HealthLine>) {
    let warning = h
        .before
        .warning_temperature_c
        .or(h.after.as_ref().and_then(|a| a.warning_temperature_c));
    if let Some(w) = warning {
        // The highest reading, and where it was taken.
        let mut readings: Vec<(Option<i32>, Option<&str>)> = vec![(h.before.temperature_c, None)];
        readings.extend(h.tests.iter().map(|t| (t.max_temperature_c, Some(t.test.as_str()))));
        readings.push((h.after.as_ref().and_then(|a| a.temperature_c), None));
        let mut hot: Option<(i32, Option<&str>)> = None;
        for (t, test) in readings {
            if let Some(t) = t {
                if hot.is_none_or(|(m, _)| t > m) {
                    hot = Some((t, test));
                }
            }
        }
        if let Some((t, test)) = hot.filter(|(t, _)| *t >= w) {
            let during = test.map_or_else(|| "a health reading".into(), |n| format!("test {n}"));
            let mut l = line(
                HealthKind::Temperature,
                path,
                test,
                "temperature_c",
                format!("{path}: reached {t} °C, at or above its warning temperature {w} °C ({during})"),
            );
            l.after = Some(f64::from(t));
            l.limit = Some(f64::from(w));
            out.push(l);
            return;
        }
    }
    // The device's own count of minutes above its warning temperature.
    let minutes = "warning_temperature_minutes";
    if let Some(after) = &h.after {
        if let (Some(&b), Some(&a)) = (h.before.counters.get(minutes), after.counters.get(minutes)) {
            if a > b {
                let mut l = line(
                    HealthKind::Temperature,
                    path,
                    None,
                    minutes,
                    format!(
                        "{path}: {} minute(s) above its warning temperature during the run (the device's count: {b} -> {a})",
                        a - b
                    ),
                );
                l.before = Some(b as f64);
                l.after = Some(a as f64);
                out.push(l);
            }
        }
    }
}

/// The means of the first and the second half of `v` (an odd middle
/// sample left out), when each half has at least two samples.
pub fn halves(v: &[f64]) -> Option<(f64, f64)> {
    if v.len() < DROP_MIN_SAMPLES {
        return None;
    }
    let h = v.len() / 2;
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    Some((mean(&v[..h]), mean(&v[v.len() - h..])))
}

/// `throughput_drop` lines of one test: each step and direction whose
/// per-interval throughput ([`crate::document::result::Samples`]) fell in its second
/// half by more than [`THROUGHPUT_DROP`] of its first. Only tests that ran
/// (`ok` or `timeout`) of a [`steady`] workload, with halves of at least
/// [`DROP_MIN_HALF_NS`].
pub fn throughput_drops(test: &TestResult) -> Vec<HealthLine> {
    let mut out = Vec::new();
    if !matches!(test.status, Status::Ok | Status::Timeout { .. }) || !steady(test.workload) {
        return out;
    }
    for s in &test.steps {
        for (dir, d) in [("read", &s.read), ("write", &s.write)] {
            let Some(d) = d else { continue };
            let half_ns = (d.samples.bytes_per_sec.len() / 2) as u64 * d.samples.interval_ns;
            if half_ns < DROP_MIN_HALF_NS {
                continue;
            }
            let Some((first, second)) = halves(&d.samples.bytes_per_sec) else {
                continue;
            };
            if first > 0.0 && second < first * (1.0 - THROUGHPUT_DROP) {
                let what = format!("{dir}_bytes_per_sec");
                let mut l = line(
                    HealthKind::ThroughputDrop,
                    &test.target,
                    Some(&test.name),
                    &what,
                    format!(
                        "{} on {}: {dir} throughput fell {:.0}% in the second half of step {} \
                         ({:.1} -> {:.1} MB/s over {} intervals of {} ms; more than {:.0}%: \
                         thermal throttling, or an SSD's cache running out?)",
                        test.name,
                        test.target,
                        (1.0 - second / first) * 100.0,
                        s.label,
                        first / MB as f64,
                        second / MB as f64,
                        d.samples.bytes_per_sec.len(),
                        d.samples.interval_ns / 1_000_000,
                        THROUGHPUT_DROP * 100.0
                    ),
                );
                l.before = Some(first);
                l.after = Some(second);
                l.limit = Some(first * (1.0 - THROUGHPUT_DROP));
                out.push(l);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::result::TargetInfo;
    use crate::verdict::analysis::testutil::{disk, doc, test};
    use crate::verdict::analysis::Metric;

    /// A main step reading at `bps` in each interval of 1 s.
    fn sampled(target: &str, workload: Workload, bps: &[f64]) -> TestResult {
        use crate::document::result::LatStats;
        use crate::verdict::analysis::testutil::{dir_stats, main_step};
        let lat = LatStats {
            min: 0,
            max: 0,
            mean: 0.0,
            stddev: 0.0,
            percentiles: Vec::new(),
        };
        let step = main_step(1 << 20, dir_stats(0, lat, bps));
        TestResult {
            steps: vec![step],
            ..test(target, workload, Metric::ReadBps, 0.0)
        }
    }

    #[test]
    fn throughput_drop_past_the_threshold_only() {
        // 100 MB/s, then 79: a 21% drop is flagged; 81 (19%) is not.
        let t = sampled(
            "/dev/nvme0n1",
            Workload::SeqWrite,
            &[100e6, 100e6, 100e6, 79e6, 79e6, 79e6],
        );
        let l = throughput_drops(&t);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0].kind, HealthKind::ThroughputDrop);
        assert_eq!(l[0].what, "read_bytes_per_sec");
        assert_eq!((l[0].before, l[0].after), (Some(100e6), Some(79e6)));
        assert!(l[0].message.contains("fell 21%"), "{}", l[0].message);
        let t = sampled("/dev/nvme0n1", Workload::SeqWrite, &[100e6, 100e6, 81e6, 81e6]);
        assert!(throughput_drops(&t).is_empty());
        // The page cache's reads and the seek profile have no steady state to fall from.
        for w in [
            Workload::CachedRead,
            Workload::BufferedRead,
            Workload::SeekProfile,
            Workload::Zones,
        ] {
            let t = sampled("/dev/nvme0n1", w, &[100e6, 100e6, 50e6, 50e6]);
            assert!(throughput_drops(&t).is_empty(), "{w:?}");
        }
        // Halves shorter than 2 s: a quick profile's second of 100 ms samples swings by itself.
        let mut t = sampled(
            "/dev/nvme0n1",
            Workload::RandRead,
            &[100e6; 5].iter().chain(&[50e6; 5]).copied().collect::<Vec<_>>(),
        );
        assert_eq!(throughput_drops(&t).len(), 1, "10 intervals of 1 s");
        for d in t.steps.iter_mut().filter_map(|s| s.read.as_mut()) {
            d.samples.interval_ns = 100_000_000;
        }
        assert!(throughput_drops(&t).is_empty(), "10 intervals of 100 ms");
        // An odd middle interval is left out of both halves.
        let t = sampled("/dev/nvme0n1", Workload::RandRead, &[100e6, 100e6, 1.0, 100e6, 100e6]);
        assert!(throughput_drops(&t).is_empty());
        // Too few intervals, a failed test: nothing.
        assert!(throughput_drops(&sampled("/d", Workload::RandRead, &[100e6, 10e6, 10e6])).is_empty());
        let mut t = sampled("/d", Workload::RandRead, &[100e6, 100e6, 10e6, 10e6]);
        t.status = Status::Skipped { reason: "x".into() };
        assert!(throughput_drops(&t).is_empty());
        // A rotational disk's sequential read slows by itself; random does not.
        let mut hdd = disk("/dev/sda", 1 << 30);
        hdd.rotational = Some(true);
        let seq = sampled("/dev/sda", Workload::SeqRead, &[100e6, 100e6, 50e6, 50e6]);
        let rnd = sampled("/dev/sda", Workload::RandRead, &[100e6, 100e6, 50e6, 50e6]);
        let lines = analyze_health(&doc(vec![hdd], vec![seq, rnd]));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].test.as_deref(), Some("rand_read"));
    }

    fn reading(counters: &[(&str, u64)]) -> HealthReading {
        HealthReading {
            source: "ata_smart".into(),
            smart_passed: Some(true),
            counters: counters.iter().map(|(k, v)| (String::from(*k), *v)).collect(),
            ..HealthReading::default()
        }
    }

    fn with_health(path: &str, h: Health) -> TargetInfo {
        TargetInfo {
            health: Some(h),
            ..disk(path, 1 << 30)
        }
    }

    #[test]
    fn health_lines_for_status_counters_and_temperature() {
        use crate::document::result::{NvmeHealth, SmartAttribute, TestTemperature};
        // Nothing wrong: no line.
        let quiet = Health {
            before: reading(&[("reallocated_sectors", 3), ("data_read_bytes", 0)]),
            after: Some(reading(&[("reallocated_sectors", 3), ("data_read_bytes", 1 << 30)])),
            ..Health::default()
        };
        assert!(analyze_health(&doc(vec![with_health("/dev/sda", quiet)], vec![])).is_empty());

        // Sectors reallocated and pending during the run, status failed after.
        let mut after = reading(&[("reallocated_sectors", 11), ("pending_sectors", 1), ("crc_errors", 0)]);
        after.smart_passed = Some(false);
        after.attributes.push(SmartAttribute {
            id: 5,
            name: Some("reallocated_sector_count".into()),
            current: 30,
            worst: 30,
            threshold: Some(36),
            failing: true,
            ..SmartAttribute::default()
        });
        let h = Health {
            before: reading(&[("reallocated_sectors", 3), ("pending_sectors", 0), ("crc_errors", 0)]),
            after: Some(after),
            ..Health::default()
        };
        let lines = analyze_health(&doc(vec![with_health("/dev/sda", h)], vec![]));
        let kinds: Vec<(&str, &str)> = lines.iter().map(|l| (l.kind.name(), l.what.as_str())).collect();
        assert_eq!(
            kinds,
            [
                ("smart_failed", "smart_status"),
                ("attribute_failing", "reallocated_sector_count"),
                ("counter_gained", "reallocated_sectors"),
                ("counter_gained", "pending_sectors"),
            ]
        );
        assert!(
            lines[0].message.contains("after the run (it passed before)"),
            "{}",
            lines[0].message
        );
        assert!(lines[0].message.contains("threshold exceeded"));
        assert!(lines[2].message.contains("from 3 to 11"), "{}", lines[2].message);

        // NVMe: over the warning temperature during a test; the critical
        // warning in words.
        let mut nv = reading(&[("media_errors", 0)]);
        nv.warning_temperature_c = Some(70);
        nv.temperature_c = Some(50);
        let mut hot = nv.clone();
        hot.smart_passed = Some(false);
        hot.nvme = Some(NvmeHealth {
            critical_warning: 0x02,
            ..NvmeHealth::default()
        });
        let h = Health {
            before: nv.clone(),
            after: Some(hot),
            tests: vec![TestTemperature {
                test: "seq_write".into(),
                source: "during".into(),
                samples: 5,
                max_temperature_c: Some(72),
            }],
            ..Health::default()
        };
        let lines = analyze_health(&doc(vec![with_health("/dev/nvme0n1", h)], vec![]));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].message.contains("temperature above or below a threshold"));
        assert_eq!(lines[1].kind, HealthKind::Temperature);
        assert_eq!(lines[1].test.as_deref(), Some("seq_write"));
        assert_eq!((lines[1].after, lines[1].limit), (Some(72.0), Some(70.0)));
        // Below the warning temperature: none; the device's own minutes
        // above it rising: one.
        let mut cool = nv.clone();
        cool.counters.insert("warning_temperature_minutes".into(), 4);
        let mut warmer = cool.clone();
        warmer.counters.insert("warning_temperature_minutes".into(), 6);
        let h = Health {
            before: cool.clone(),
            after: Some(cool.clone()),
            ..Health::default()
        };
        assert!(analyze_health(&doc(vec![with_health("/n", h)], vec![])).is_empty());
        let h = Health {
            before: cool,
            after: Some(warmer),
            ..Health::default()
        };
        let lines = analyze_health(&doc(vec![with_health("/n", h)], vec![]));
        assert_eq!(lines.len(), 1);
        assert!(lines[0].message.contains("2 minute(s)"), "{}", lines[0].message);
    }
}
