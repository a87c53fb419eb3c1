//! Profiles: named bundles of tests.
//!
//! - `quick`: every workload, a second or less each, samples every 100 ms,
//!   for tests and a first look; timed tests ramp 250 ms and measure at
//!   least 64 requests.
//! - `standard`: every workload with fio-like durations, timed tests after
//!   a 1 s ramp, at least 64 requests; the default built into the image.
//! - `classic`: the seed posts' tools with their parameters: hdparm -T/-t,
//!   dd (16k x 10000 write + fdatasync, 8k x 256k overwrite, 10M x 400 read),
//!   sysbench fileio (16 KiB, rndrd/rndwr/rndrw at 1.5 ratio, 10 s),
//!   diskinfo -t/-c/-i/-S, the commit-size test.
//! - `cdm`: CrystalDiskMark's default run: SEQ1M Q8T1, SEQ1M Q1T1,
//!   RND4K Q32T1, RND4K Q1T1, all reads then all writes, on a 1 GiB area
//!   filled with random data first, a warm-up and the best of 5 passes of
//!   5 s each, a 5 s pause between tests.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use crate::engine::plan::default_name;
use crate::spec::{MixOrder, Params, TestSpec, Workload};
use crate::vocab::units::{Bytes, Nanos, GIB, KIB, MIB};

/// The profile names.
pub const PROFILES: [&str; 4] = ["quick", "standard", "classic", "cdm"];

/// The tests of a profile, in run order; `None` for an unknown name.
pub fn profile(name: &str) -> Option<Vec<TestSpec>> {
    match name {
        "quick" => Some(quick()),
        "standard" => Some(standard()),
        "classic" => Some(classic()),
        "cdm" => Some(cdm()),
        _ => None,
    }
}

/// A test with the default parameters changed by `f`, named `name` or, if
/// that is empty, by [`default_name`].
fn test(name: &str, workload: Workload, f: impl FnOnce(&mut Params)) -> TestSpec {
    let mut t = TestSpec::new("", workload, f);
    t.name = if name.is_empty() {
        default_name(&t)
    } else {
        name.to_string()
    };
    t
}

/// Bounded by count or bytes only: no runtime recorded.
fn untimed(p: &mut Params) {
    p.runtime = None;
}

/// `quick`: every workload with tiny bounds (runtimes 0.5-1 s); fits a
/// 64 MiB target.
/// The sample width of the quick profile.
const QUICK_SAMPLE_INTERVAL: Nanos = Nanos::from_millis(100);

fn quick() -> Vec<TestSpec> {
    let half = Some(Nanos::from_millis(500));
    let one = Some(Nanos::from_secs(1));
    let mut v = vec![
        test("", Workload::CachedRead, |p| (p.bs, p.runtime) = (Bytes(2 * MIB), one)),
        test("", Workload::BufferedRead, |p| {
            (p.bs, p.runtime) = (Bytes(2 * MIB), one)
        }),
        test("", Workload::DirectRead, |p| (p.bs, p.runtime) = (Bytes(2 * MIB), one)),
        test("", Workload::SeqRead, |p| (p.bs, p.runtime) = (Bytes(MIB), half)),
        test("", Workload::SeqWrite, |p| (p.bs, p.runtime) = (Bytes(MIB), half)),
        test("", Workload::RandRead, |p| p.runtime = half),
        test("", Workload::RandWrite, |p| p.runtime = half),
        test("", Workload::RandRw, |p| {
            (p.rwmixread, p.iodepth, p.runtime) = (70, 4, half)
        }),
        // Bounded by time as the others (each section, each loop): at 100
        // commands a second the seek test's 5896 reads take a minute and
        // command_overhead's 20480 re-reads of one block 205 s.
        test("", Workload::SeekProfile, |p| p.runtime = half),
        test("", Workload::Zones, |p| {
            untimed(p);
            (p.zone_bytes, p.points) = (Bytes(8 * MIB), 8);
        }),
        test("", Workload::CommandOverhead, |p| p.runtime = half),
        test("", Workload::IopsSweep, |p| (p.iodepth, p.runtime) = (32, half)),
        test("", Workload::Commit, |p| {
            untimed(p);
            (p.bs, p.size, p.flush_every) = (Bytes(16 * KIB), Some(Bytes(MIB)), 1);
        }),
        // Sizes up to 64 KiB: each size runs at least one batch of 250
        // writes and flushes, whatever the runtime.
        test("", Workload::Slog, |p| (p.max_bs, p.runtime) = (Bytes(64 * KIB), half)),
    ];
    // Runs of a second or less: sample every 100 ms so each timed test still
    // has a series of samples and a steadiness figure.
    for t in &mut v {
        t.params.sample_interval = QUICK_SAMPLE_INTERVAL;
    }
    short_tests_tell_the_truth(&mut v, QUICK_RAMP);
    v
}

/// The ramp of `quick`'s timed tests: longer than a QEMU throttle's burst
/// (a tenth of a second of its rate) and a drive's first cache fill.
const QUICK_RAMP: Nanos = Nanos::from_millis(250);
/// The ramp of `standard`'s timed tests.
const STANDARD_RAMP: Nanos = Nanos::from_secs(1);
/// The least number of requests a timed test of `quick` or `standard`
/// measures, whatever its runtime: a 1 s test of 2 MiB requests on a
/// 7 MiB/s disk would be three and a half. A throttle (QEMU's, a cloud
/// volume's) lets requests through in uneven steps of about one request's
/// time, so a window of N requests can be off by one: 64 keeps that under
/// 2% (16 left 4-5% on QEMU disks throttled to 7 and 20 MiB/s).
pub const SHORT_MIN_IOS: u64 = 64;

/// Give every timed test a ramp (so a throttled device's burst and a
/// cache's first fill stay out of the figure) and [`SHORT_MIN_IOS`]; not
/// `slog`, which runs diskinfo's whole batches of 250 without a ramp.
fn short_tests_tell_the_truth(v: &mut [TestSpec], ramp: Nanos) {
    for t in v
        .iter_mut()
        .filter(|t| t.params.runtime.is_some() && t.workload != Workload::Slog)
    {
        (t.params.ramp_time, t.params.min_ios) = (ramp, SHORT_MIN_IOS);
    }
}

/// `standard`: every workload with fio-like 10 s runtimes; random tests at
/// QD1 and QD32; zones 100 MiB with 32 points; iops_sweep 3 s at QD128;
/// slog as diskinfo -S (1 s per size, up to 8 MiB).
fn standard() -> Vec<TestSpec> {
    let ten = Some(Nanos::from_secs(10));
    let mut v = vec![
        test("", Workload::CachedRead, |p| (p.bs, p.runtime) = (Bytes(2 * MIB), ten)),
        test("", Workload::BufferedRead, |p| {
            (p.bs, p.runtime) = (Bytes(2 * MIB), ten)
        }),
        test("", Workload::DirectRead, |p| (p.bs, p.runtime) = (Bytes(2 * MIB), ten)),
        test("", Workload::SeqRead, |p| (p.bs, p.runtime) = (Bytes(MIB), ten)),
        test("", Workload::SeqWrite, |p| (p.bs, p.runtime) = (Bytes(MIB), ten)),
    ];
    for w in [Workload::RandRead, Workload::RandWrite, Workload::RandRw] {
        for qd in [1, 32] {
            v.push(test("", w, |p| (p.iodepth, p.runtime) = (qd, ten)));
        }
    }
    v.extend([
        test("", Workload::SeekProfile, untimed),
        test("", Workload::Zones, |p| {
            untimed(p);
            (p.zone_bytes, p.points) = (Bytes(100 * MIB), 32);
        }),
        test("", Workload::CommandOverhead, untimed),
        test("", Workload::IopsSweep, |p| {
            (p.iodepth, p.runtime) = (128, Some(Nanos::from_secs(3)))
        }),
        test("", Workload::Commit, |p| {
            untimed(p);
            (p.bs, p.size, p.flush_every) = (Bytes(16 * KIB), Some(Bytes(16 * MIB)), 10);
        }),
        // diskinfo -S as it runs: block to 8 MiB, at least 1 s each.
        test("", Workload::Slog, |p| p.runtime = Some(Nanos::from_secs(1))),
    ]);
    short_tests_tell_the_truth(&mut v, STANDARD_RAMP);
    pause_after_writes(&mut v);
    v
}

/// The pause after a write test in `standard` and `classic`: 3 s, hdparm's
/// "time for I/O to settle" (`prepare_timing_buf`: `sync(); sleep(3)`).
pub const WRITE_PAUSE: Nanos = Nanos::from_secs(3);

/// Give every test that writes a pause of [`WRITE_PAUSE`] after it, so a
/// drive still writing back its cache (or the kernel its dirty pages) does
/// so outside the next test's time.
fn pause_after_writes(v: &mut [TestSpec]) {
    for t in v.iter_mut().filter(|t| t.writes()) {
        t.params.pause = WRITE_PAUSE;
    }
}

/// `classic`: the seed posts' tools with their parameters.
fn classic() -> Vec<TestSpec> {
    let secs = |s| Some(Nanos::from_secs(s));
    let k16 = Bytes(16 * KIB);
    let mut v = vec![
        // hdparm -T, -t, -t --direct: 2 MiB reads for 2 s / 3 s / 3 s.
        test("hdparm_T", Workload::CachedRead, |p| {
            (p.bs, p.runtime) = (Bytes(2 * MIB), secs(2))
        }),
        test("hdparm_t", Workload::BufferedRead, |p| {
            (p.bs, p.runtime) = (Bytes(2 * MIB), secs(3))
        }),
        test("hdparm_t_direct", Workload::DirectRead, |p| {
            (p.bs, p.runtime) = (Bytes(2 * MIB), secs(3))
        }),
        // dd through the page cache, as the seeds ran it (no direct flags):
        // `time (dd bs=16k count=10000; sync)` times the sync too, so the
        // flush is inside the figure; `bs=8k count=256k` has no sync at all;
        // `bs=10M count=400` reads after `hdparm -f` (the dropped cache).
        test("dd_write_16k", Workload::SeqWrite, |p| {
            untimed(p);
            (p.bs, p.size, p.direct, p.end_fsync) = (k16, Some(Bytes(163_840_000)), false, Some(true));
        }),
        test("dd_write_8k", Workload::SeqWrite, |p| {
            untimed(p);
            (p.bs, p.size, p.direct, p.end_fsync) = (Bytes(8 * KIB), Some(Bytes(2 * GIB)), false, Some(false));
        }),
        // dd if=DEV times its close, the device's last (`end_close`).
        test("dd_read_10m", Workload::SeqRead, |p| {
            untimed(p);
            (p.bs, p.size, p.direct, p.end_close) = (Bytes(10 * MIB), Some(Bytes(4000 * MIB)), false, true);
        }),
        // sysbench fileio as seed 001 ran it: 16 KiB, QD1 (sync mode, one
        // thread), 10 s, buffered, over --file-total-size=5000M, an fsync
        // every 100 requests and one at the end of the write modes; rndrw at
        // 1.5 reads per write, in sysbench's order.
        test("sysbench_rndrd", Workload::RandRead, sysbench),
        test("sysbench_rndwr", Workload::RandWrite, sysbench),
        test("sysbench_rndrw", Workload::RandRw, |p| {
            sysbench(p);
            (p.rwmixread, p.rwmix_order) = (60, MixOrder::Ratio);
        }),
        test("sysbench_seqrd", Workload::SeqRead, sysbench),
        test("sysbench_seqwr", Workload::SeqWrite, sysbench),
        // diskinfo -t (seeks, transfer rates), -c, -i, -S (-S needs -w).
        test("diskinfo_t_seek", Workload::SeekProfile, untimed),
        test("diskinfo_t_zones", Workload::Zones, |p| {
            untimed(p);
            p.zone_bytes = Bytes(100 * MIB);
        }),
        test("diskinfo_c", Workload::CommandOverhead, untimed),
        // iops(): `random() % sectorcount` for each read (norandommap).
        test("diskinfo_i", Workload::IopsSweep, |p| {
            (p.iodepth, p.runtime, p.norandommap) = (128, secs(3), true)
        }),
        // slogbench: sectorsize to MAXTX (8 MiB), at least 1 s per size.
        test("diskinfo_S", Workload::Slog, |p| {
            (p.max_bs, p.runtime) = (crate::spec::SLOG_MAX_BS, secs(1))
        }),
        // Seed 000's commit size: 1000 files of 160 KiB (10 x 16 KiB), a
        // flush per file, then one flush at the end.
        test("commit_size", Workload::Commit, |p| {
            untimed(p);
            (p.bs, p.size, p.flush_every) = (k16, Some(Bytes(160 * KIB * 1000)), 10);
        }),
    ];
    pause_after_writes(&mut v);
    v
}

/// sysbench fileio's file set in seed 001: `--file-total-size=5000M`
/// (sysbench's `M` is 2^20).
pub const SYSBENCH_TOTAL_SIZE: u64 = 5000 * MIB;

/// sysbench fileio's defaults (`sb_fileio.c` `fileio_args`) with seed 001's
/// total size: `file-block-size` 16384, one thread in sync mode, `time` 10 s,
/// `file-extra-flags` empty (buffered), `file-fsync-freq` 100,
/// `file-fsync-end` on (write modes only: `file_thread_done`), `file-num`
/// 128 (each fsync point an fsync of every file); offsets over the total
/// size, each drawn on its own (`file_get_rnd_request`: `sb_rand_uniform`
/// per request, no map: `norandommap`).
fn sysbench(p: &mut Params) {
    (p.bs, p.runtime, p.length) = (
        Bytes(16 * KIB),
        Some(Nanos::from_secs(10)),
        Some(Bytes(SYSBENCH_TOTAL_SIZE)),
    );
    (p.direct, p.fsync_freq, p.end_fsync) = (false, 100, Some(true));
    p.file_num = SYSBENCH_FILE_NUM;
    p.norandommap = true;
}

/// sysbench fileio's `file-num` default: 128 files.
pub const SYSBENCH_FILE_NUM: u64 = 128;

/// A throughput in the unit and form the twin's tool prints it, labelled
/// with the tool, for the twins named by the `classic` profile's prefixes:
/// `hdparm_*`: MiB/s with two decimals, labelled "MB/sec" as hdparm's
/// `print_timing` prints it (`%6.2f MB/sec`, its MB 2^20); `sysbench_*`:
/// MiB/s (2^20) with two decimals, as sysbench's
/// `file_report_cumulative` (`%4.2f MiB/s`); `dd_*`: SI-scaled (10^3
/// steps: B/s, kB/s, MB/s, GB/s), as coreutils dd's `print_xfer_stats`
/// (gnulib `human_readable` with `human_autoscale | human_round_to_nearest
/// | human_SI`: one decimal below 10, else whole); `diskinfo_S`: MiB/s with
/// one decimal, as diskinfo's `TS` (`%8.1f Mbytes/s`, `/ (1024 * 1024)`);
/// other `diskinfo_*`: KiB/s, whole, as diskinfo's `TR` (`%8.0f
/// kbytes/sec`, kbytes of 1024 B). `None` for other names.
pub fn tool_figure(test_name: &str, bytes_per_sec: f64) -> Option<String> {
    if test_name.starts_with("hdparm_") {
        Some(format!("{:.2} MB/sec (hdparm)", bytes_per_sec / MIB as f64))
    } else if test_name.starts_with("sysbench_") {
        Some(format!("{:.2} MiB/s (sysbench)", bytes_per_sec / MIB as f64))
    } else if test_name.starts_with("dd_") {
        Some(format!("{} (dd)", dd_rate(bytes_per_sec)))
    } else if test_name == "diskinfo_S" {
        Some(format!("{:.1} Mbytes/s (diskinfo)", bytes_per_sec / MIB as f64))
    } else if test_name.starts_with("diskinfo_") {
        Some(format!("{:.0} kbytes/sec (diskinfo)", bytes_per_sec / KIB as f64))
    } else {
        None
    }
}

/// dd's rendering of a rate (see [`tool_figure`]).
fn dd_rate(bytes_per_sec: f64) -> String {
    const UNITS: [&str; 7] = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"];
    let mut v = bytes_per_sec.max(0.0);
    let mut i = 0;
    // Scale while the rounded figure would reach 1000 (dd never prints
    // "1000 MB/s": that is "1.0 GB/s").
    while i + 1 < UNITS.len() && (v + 0.5) >= 1000.0 {
        v /= 1000.0;
        i += 1;
    }
    if i > 0 && (v * 10.0 + 0.5) < 100.0 {
        format!("{v:.1} {}", UNITS[i])
    } else {
        format!("{v:.0} {}", UNITS[i])
    }
}

/// CrystalDiskMark's passes per test: `TestCount` 5 (CrystalDiskMark 8,
/// DiskMarkDlg.cpp: `GetPrivateProfileInt(L"Setting", L"TestCount", 4, ...)`,
/// an index, "default value is 5"; CrystalDiskMark 9 lowered it to 3).
pub const CDM_PASSES: u32 = 5;
/// CrystalDiskMark's `MeasureTime` and `IntervalTime` defaults, 5 s each
/// (DiskMarkDlg.cpp, `GetPrivateProfileInt(L"Setting", L"MeasureTime", 5, ...)`
/// and `L"IntervalTime", 5`).
pub const CDM_SECONDS: u64 = 5;
/// CrystalDiskMark's default test size, 1 GiB (DiskMarkDlg.cpp `TestSize`
/// index 6, "default value is 1GiB").
pub const CDM_TEST_BYTES: u64 = GIB;

/// `cdm`: CrystalDiskMark's default run (DiskBench.cpp
/// `ExecDiskBenchAll`): SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1,
/// all four reads, then all four writes (`BENCHMARK_READ` before
/// `BENCHMARK_WRITE`), on the first 1 GiB of the target.
///
/// - The test area is filled with random data once, before the first test
///   (`Init`): the first test fills, the others use what it wrote. On a
///   target that may not be written, nothing is written: the reads run on
///   the data already there (their `filled_bytes` says 0) and the writes
///   are skipped.
/// - Each test runs one discarded warm-up pass and [`CDM_PASSES`] measured
///   ones of 5 s back to back, and reports the best (`DiskSpd`: DiskSpd
///   is run `TestCount + 1` times with `-d MeasureTime`, the score of run 0
///   never taken, the score the highest of the others; CrystalDiskMark 8
///   ran the warm-up for a fixed 5 s, 9 for `MeasureTime`: the same at the
///   default). DiskSpd's own warm-up is off (`-W0`): no ramp.
/// - DiskSpd `-S`: no software cache (O_DIRECT), writes not write-through;
///   `-r` random offsets aligned to the block size, each drawn on its own
///   (`norandommap`: DiskSpd keeps no map of the blocks done); no flush at the end
///   (`end_fsync` false: DiskSpd issues none).
/// - A 5 s pause between tests (`Interval`, `IntervalTime` 5 s), none after
///   the last.
///
/// Departures: CrystalDiskMark's writes come from one random buffer of the
/// block size (DiskSpd `-Z<bs>K`), the same bytes every write; here every
/// write is scrambled (`crate::engine::scramble`). CrystalDiskMark's latency is the
/// lowest over the passes, taken apart from the best score; here the step
/// reports every figure of its best pass, and each pass's mean latency is
/// kept in its `passes`.
fn cdm() -> Vec<TestSpec> {
    let sets = [
        ("seq1m_q8t1", MIB, 8, true),
        ("seq1m_q1t1", MIB, 1, true),
        ("rnd4k_q32t1", 4 * KIB, 32, false),
        ("rnd4k_q1t1", 4 * KIB, 1, false),
    ];
    let mut v = Vec::new();
    for (dir, seq_w, rand_w) in [
        ("read", Workload::SeqRead, Workload::RandRead),
        ("write", Workload::SeqWrite, Workload::RandWrite),
    ] {
        for (tag, bs, qd, seq) in sets {
            v.push(test(
                &format!("cdm_{tag}_{dir}"),
                if seq { seq_w } else { rand_w },
                |p| {
                    (p.bs, p.iodepth, p.jobs) = (Bytes(bs), qd, 1);
                    (p.length, p.runtime) = (Some(Bytes(CDM_TEST_BYTES)), Some(Nanos::from_secs(CDM_SECONDS)));
                    (p.passes, p.warmup, p.end_fsync) = (CDM_PASSES, 1, Some(false));
                    p.pause = Nanos::from_secs(CDM_SECONDS);
                    // DiskSpd -r draws each random offset on its own.
                    p.norandommap = true;
                },
            ));
        }
    }
    if let Some(first) = v.first_mut() {
        first.params.fill = true;
    }
    if let Some(last) = v.last_mut() {
        last.params.pause = Nanos(0);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::expand;
    use crate::io::Geometry;
    use alloc::collections::BTreeSet;

    const HDD_64G: Geometry = Geometry {
        size: 64 * GIB,
        logical_block: 512,
        physical_block: 4096,
    };

    /// Random offsets as each twin's tool draws them: with fio's random map
    /// (every block once before any again) in the fio-like tests, each
    /// drawn on its own where the tool keeps no map: sysbench
    /// (`sb_rand_uniform` per request), CrystalDiskMark's DiskSpd (`-r`),
    /// diskinfo (`random() % n` in `iops` and `slogbench`), whatever the
    /// profile. A test's `norandommap` turns the map off.
    #[test]
    fn random_offsets_map_as_the_tool_does() {
        let mut seen = 0;
        for name in PROFILES {
            for t in profile(name).unwrap() {
                let drawn = ["sysbench_", "cdm_", "diskinfo_"].iter().any(|p| t.name.starts_with(p))
                    || t.workload == Workload::Slog;
                for st in expand(&t, &HDD_64G).unwrap() {
                    if matches!(st.pattern, crate::spec::Pattern::Random { .. }) {
                        assert_eq!(st.random_map, !drawn, "{name}/{}/{}", t.name, st.label);
                        seen += 1;
                    }
                }
            }
        }
        assert!(seen > 20, "{seen} random steps");
        let mut t = TestSpec::new("r", Workload::RandRead, |_| ());
        assert!(expand(&t, &HDD_64G).unwrap()[0].random_map, "fio's default: the map");
        t.params.norandommap = true;
        assert!(!expand(&t, &HDD_64G).unwrap()[0].random_map);
    }

    #[test]
    fn every_profile_expands_with_unique_names() {
        for name in PROFILES {
            let tests = profile(name).unwrap();
            assert!(!tests.is_empty(), "{name}");
            let names: BTreeSet<&str> = tests.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names.len(), tests.len(), "{name}: duplicate test names");
            for t in &tests {
                let steps = expand(t, &HDD_64G).unwrap_or_else(|e| panic!("{name}/{}: {e}", t.name));
                assert!(!steps.is_empty());
            }
        }
        assert!(profile("fast").is_none());
    }

    #[test]
    fn quick_covers_every_workload_and_fits_64_mib() {
        let tests = quick();
        let workloads: BTreeSet<Workload> = tests.iter().map(|t| t.workload).collect();
        assert_eq!(workloads, Workload::ALL.into_iter().collect());
        let small = Geometry {
            size: 64 * MIB,
            ..HDD_64G
        };
        for t in &tests {
            expand(t, &small).unwrap_or_else(|e| panic!("{}: {e}", t.name));
            assert!(t.params.runtime.is_none_or(|r| r <= Nanos::from_secs(1)), "{}", t.name);
            // Every timed test has at least five whole samples.
            assert!(
                t.params.runtime.is_none_or(|r| r.0 >= 5 * t.params.sample_interval.0),
                "{}",
                t.name
            );
        }
    }

    /// Every timed test of `quick` and `standard` ramps and measures at
    /// least [`SHORT_MIN_IOS`] requests; the steps carry both.
    #[test]
    fn short_profiles_ramp_and_measure_a_least_number_of_requests() {
        for (name, ramp) in [("quick", QUICK_RAMP), ("standard", STANDARD_RAMP)] {
            for t in profile(name).unwrap() {
                let steps = expand(&t, &HDD_64G).unwrap();
                if t.params.runtime.is_some() && t.workload != Workload::Slog {
                    assert_eq!(
                        (t.params.ramp_time, t.params.min_ios),
                        (ramp, SHORT_MIN_IOS),
                        "{name}/{}",
                        t.name
                    );
                    // diskinfo's loops start on an idle disk: no ramp.
                    let diskinfo = matches!(t.workload, Workload::SeekProfile | Workload::CommandOverhead);
                    let ramp = if diskinfo { Nanos(0) } else { ramp };
                    for st in steps.iter().filter(|st| st.limit.runtime.is_some()) {
                        assert_eq!((st.ramp, st.limit.min_ios), (ramp, SHORT_MIN_IOS), "{name}/{}", t.name);
                    }
                } else {
                    assert!(steps.iter().all(|st| st.limit.min_ios == 0), "{name}/{}", t.name);
                }
            }
        }
        // The classic twins keep their tools' own method: no ramp, no least.
        for t in classic() {
            assert_eq!((t.params.ramp_time, t.params.min_ios), (Nanos(0), 0), "{}", t.name);
        }
    }

    #[test]
    fn classic_and_cdm_parameters() {
        let c = classic();
        let get = |n: &str| c.iter().find(|t| t.name == n).unwrap().params.clone();
        assert_eq!(get("dd_write_16k").size, Some(Bytes(163_840_000)));
        assert_eq!(get("dd_read_10m").bs, Bytes(10 * MIB));
        assert!(get("dd_read_10m").end_close);
        assert_eq!(get("sysbench_rndrw").rwmixread, 60);
        assert_eq!(get("hdparm_t").runtime, Some(Nanos::from_secs(3)));
        let commit = get("commit_size");
        assert_eq!(
            (commit.bs, commit.size, commit.flush_every),
            (Bytes(16 * KIB), Some(Bytes(163_840_000)), 10)
        );
        let cdm = cdm();
        assert_eq!(cdm.len(), 8);
        for t in &cdm {
            let p = &t.params;
            assert_eq!((p.length, p.runtime), (Some(Bytes(GIB)), Some(Nanos::from_secs(5))));
            // DiskBench.cpp `DiskSpd`: one discarded run, then TestCount
            // (5) runs, the best kept; DiskSpd -W0 (no ramp), -S (direct),
            // no flush at the end.
            assert_eq!((p.passes, p.warmup, p.ramp_time), (5, 1, Nanos(0)), "{}", t.name);
            assert_eq!((p.direct, p.end_fsync, p.jobs), (true, Some(false), 1), "{}", t.name);
        }
        // ExecDiskBenchAll: every read, then every write, each set in order.
        let names: Vec<&str> = cdm.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cdm_seq1m_q8t1_read",
                "cdm_seq1m_q1t1_read",
                "cdm_rnd4k_q32t1_read",
                "cdm_rnd4k_q1t1_read",
                "cdm_seq1m_q8t1_write",
                "cdm_seq1m_q1t1_write",
                "cdm_rnd4k_q32t1_write",
                "cdm_rnd4k_q1t1_write",
            ]
        );
        let kinds: Vec<(Workload, u64, u32)> = cdm
            .iter()
            .map(|t| (t.workload, t.params.bs.0, t.params.iodepth))
            .collect();
        use Workload::{RandRead, RandWrite, SeqRead, SeqWrite};
        assert_eq!(
            kinds,
            [
                (SeqRead, MIB, 8),
                (SeqRead, MIB, 1),
                (RandRead, 4 * KIB, 32),
                (RandRead, 4 * KIB, 1),
                (SeqWrite, MIB, 8),
                (SeqWrite, MIB, 1),
                (RandWrite, 4 * KIB, 32),
                (RandWrite, 4 * KIB, 1),
            ]
        );
        // Init fills the test file once, before the first test.
        let fills: Vec<bool> = cdm.iter().map(|t| t.params.fill).collect();
        assert_eq!(fills, [true, false, false, false, false, false, false, false]);
        // Interval (IntervalTime 5 s) between tests, none after the last.
        let pauses: Vec<u64> = cdm.iter().map(|t| t.params.pause.0 / 1_000_000_000).collect();
        assert_eq!(pauses, [5, 5, 5, 5, 5, 5, 5, 0]);
        // The fill comes before the first pass of the first test's one step,
        // the pause after the last pass.
        let steps = expand(&cdm[0], &HDD_64G).unwrap();
        assert!(steps[0].fill && steps[0].pause == Nanos::from_secs(5));
        assert_eq!((steps[0].passes, steps[0].warmup, steps[0].flush_at_end), (5, 1, false));
        let w = expand(&cdm[4], &HDD_64G).unwrap();
        assert!(!w[0].fill && !w[0].flush_at_end);
    }

    /// `standard` and `classic`: every test that writes is followed by a
    /// 3 s pause, the others by none; `quick` pauses nowhere.
    #[test]
    fn write_tests_pause_after_them() {
        for (name, tests) in [("standard", standard()), ("classic", classic())] {
            assert!(tests.iter().any(|t| t.workload.writes()), "{name}");
            for t in &tests {
                let want = if t.workload.writes() { WRITE_PAUSE } else { Nanos(0) };
                assert_eq!(t.params.pause, want, "{name}/{}", t.name);
            }
        }
        assert!(quick().iter().all(|t| t.params.pause == Nanos(0)));
        assert_eq!(WRITE_PAUSE, Nanos::from_secs(3));
    }

    /// A simulated disk's queue that records every request in issue order,
    /// and the most it ever had in flight.
    struct Recording<'a> {
        inner: crate::engine::sim::SimQueue,
        log: &'a core::cell::RefCell<Vec<crate::io::IoReq>>,
        inflight: usize,
        max_inflight: usize,
    }

    impl crate::io::IoQueue for Recording<'_> {
        fn depth(&self) -> usize {
            self.inner.depth()
        }
        fn submit(&mut self, slot: usize, req: crate::io::IoReq) -> Result<(), crate::io::IoError> {
            self.log.borrow_mut().push(req);
            self.inflight += 1;
            self.max_inflight = self.max_inflight.max(self.inflight);
            self.inner.submit(slot, req)
        }
        fn reap(&mut self, min: usize, out: &mut Vec<crate::io::Completion>) -> Result<(), crate::io::IoError> {
            let before = out.len();
            let r = self.inner.reap(min, out);
            self.inflight -= out.len() - before;
            r
        }
    }

    /// One step of a classic test as run on the simulated disk: the step,
    /// its requests in issue order, the job's outcome, the simulated time
    /// it took, and the most requests it had in flight.
    struct StepRun {
        step: crate::spec::Step,
        log: Vec<crate::io::IoReq>,
        out: crate::engine::runner::JobOutcome,
        elapsed: u64,
        max_inflight: usize,
    }

    /// Run `step` as one job on `disk`, recording its requests.
    fn run_recorded(disk: &crate::engine::sim::SimDisk, step: crate::spec::Step) -> StepRun {
        use crate::io::Target;
        let log = core::cell::RefCell::new(Vec::new());
        let inner = disk.open(&crate::engine::runner::open_spec(&step, 0)).unwrap();
        let mut q = Recording {
            inner,
            log: &log,
            inflight: 0,
            max_inflight: 0,
        };
        let stop = crate::engine::runner::Stop::new();
        let t0 = crate::io::Clock::now(&disk.clock).0;
        let out = crate::engine::runner::run_job(&step, 0, &mut q, &disk.clock, &stop, &mut |_| ()).unwrap();
        let elapsed = crate::io::Clock::now(&disk.clock).0 - t0;
        let max_inflight = q.max_inflight;
        StepRun {
            step,
            log: log.into_inner(),
            out,
            elapsed,
            max_inflight,
        }
    }

    /// Every step of the classic test `name`, its parameters changed by
    /// `f`, run in order on `disk`.
    fn classic_run_all(name: &str, disk: &crate::engine::sim::SimDisk, f: impl FnOnce(&mut Params)) -> Vec<StepRun> {
        use crate::io::Target;
        let mut t = classic().into_iter().find(|t| t.name == name).unwrap();
        f(&mut t.params);
        let steps = expand(&t, &disk.geometry()).unwrap();
        steps.into_iter().map(|s| run_recorded(disk, s)).collect()
    }

    /// The classic test `name`, bounded by `f` instead (so a test can count
    /// requests), expanded on an 8 GiB simulated SSD and run as one job:
    /// its one step, the requests in issue order, and the job's outcome.
    fn classic_run(
        name: &str,
        f: impl FnOnce(&mut Params),
    ) -> (
        crate::spec::Step,
        Vec<crate::io::IoReq>,
        crate::engine::runner::JobOutcome,
        u64,
    ) {
        classic_run_step(name, f, |_| ())
    }

    /// [`classic_run`] with the expanded step changed by `g` too.
    fn classic_run_step(
        name: &str,
        f: impl FnOnce(&mut Params),
        g: impl FnOnce(&mut crate::spec::Step),
    ) -> (
        crate::spec::Step,
        Vec<crate::io::IoReq>,
        crate::engine::runner::JobOutcome,
        u64,
    ) {
        use crate::engine::sim::{SimDisk, SimModel};
        use crate::io::Target;
        let mut t = classic().into_iter().find(|t| t.name == name).unwrap();
        f(&mut t.params);
        let disk = SimDisk::new(SimModel::ssd(8 * GIB), true);
        let steps = expand(&t, &disk.geometry()).unwrap();
        assert_eq!(steps.len(), 1, "{name}");
        let mut step = steps[0].clone();
        g(&mut step);
        let r = run_recorded(&disk, step);
        (r.step, r.log, r.out, r.elapsed)
    }

    /// The indices (0-based, in issue order) of the flushes, and the
    /// number of reads and writes issued before each.
    fn flush_points(log: &[crate::io::IoReq]) -> Vec<usize> {
        use crate::io::Op;
        let mut ios = 0;
        let mut v = Vec::new();
        for r in log {
            match r.op {
                Op::Flush | Op::FlushRange => v.push(ios),
                Op::Read | Op::Write => ios += 1,
            }
        }
        v
    }

    /// Each run of flushes in a row in the log, as its requests' (offset,
    /// len), with 0 for a flush of the whole target.
    fn flush_runs(log: &[crate::io::IoReq]) -> Vec<Vec<(u64, u32)>> {
        use crate::io::Op;
        let mut v: Vec<Vec<(u64, u32)>> = Vec::new();
        let mut in_run = false;
        for r in log {
            let f = match r.op {
                Op::FlushRange => (r.offset, r.len),
                Op::Flush => (0, 0),
                Op::Read | Op::Write => {
                    in_run = false;
                    continue;
                }
            };
            if !in_run {
                v.push(Vec::new());
                in_run = true;
            }
            v.last_mut().unwrap().push(f);
        }
        v
    }

    /// sysbench fileio (`sb_fileio.c`): 16 KiB requests, buffered with the
    /// cache dropped first, offsets over the 5000 MiB file set aligned to
    /// 16 KiB; in the write modes an fsync before the next request after
    /// every 100 requests (reads counted too) once any wrote, and one at the
    /// end (`file_thread_done`); never in the read modes. Each of those is
    /// one fsync per file, 128 (`file-num`): `fsynced_file` walks every file
    /// before `is_dirty` is cleared. N = 1050 requests: 10 periodic + 1
    /// final series; N = 1000: the one due at 1000 is never issued (no
    /// request follows), so 9 + 1. Each flush of a series is one file's
    /// (see `sysbench_fsyncs_flush_file_by_file`).
    #[test]
    fn sysbench_requests_and_fsyncs_as_sysbench_issues_them() {
        use crate::io::{Access, Op};
        use crate::spec::Prepare;
        let k16 = 16 * KIB;
        for (name, n, flushes) in [
            (
                "sysbench_rndwr",
                1050,
                vec![100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1050],
            ),
            (
                "sysbench_rndwr",
                1000,
                vec![100, 200, 300, 400, 500, 600, 700, 800, 900, 1000],
            ),
            ("sysbench_seqwr", 250, vec![100, 200, 250]),
            ("sysbench_rndrw", 250, vec![100, 200, 250]),
            ("sysbench_rndrd", 250, vec![]),
            ("sysbench_seqrd", 250, vec![]),
        ] {
            let (step, log, out, _) = classic_run(name, |p| (p.runtime, p.size) = (None, Some(Bytes(n * k16))));
            assert_eq!(
                (step.access, step.prepare),
                (Access::Buffered, Prepare::DropCaches),
                "{name}"
            );
            let series: Vec<usize> = flushes
                .iter()
                .flat_map(|&p| core::iter::repeat_n(p, usize::try_from(SYSBENCH_FILE_NUM).unwrap()))
                .collect();
            assert_eq!(
                flush_points(&log),
                series,
                "{name} N={n}: 128 flushes after these requests"
            );
            assert_eq!(out.flush.ios, series.len() as u64, "{name}: flushes counted");
            let ios: Vec<_> = log.iter().filter(|r| matches!(r.op, Op::Read | Op::Write)).collect();
            assert_eq!(ios.len() as u64, n, "{name}");
            for (i, r) in ios.iter().enumerate() {
                assert_eq!(u64::from(r.len), k16, "{name}");
                assert!(
                    r.offset % k16 == 0 && r.offset + k16 <= SYSBENCH_TOTAL_SIZE,
                    "{name}: {}",
                    r.offset
                );
                if name.contains("seq") {
                    assert_eq!(r.offset, i as u64 * k16, "{name}: one cursor from 0");
                }
            }
            if name.contains("rnd") {
                // Offsets over the whole file set, not its first part.
                let top = ios.iter().map(|r| r.offset).max().unwrap();
                assert!(top > SYSBENCH_TOTAL_SIZE * 9 / 10, "{name}: highest offset {top}");
            }
        }
        // The seqrd/seqwr cursor wraps at the end of the file set.
        let blocks = SYSBENCH_TOTAL_SIZE / k16;
        let (_, log, _, _) = classic_run_step(
            "sysbench_seqrd",
            |p| (p.runtime, p.size) = (None, Some(Bytes(k16))),
            |s| s.limit.bytes = Some((blocks + 2) * k16),
        );
        let offs: Vec<u64> = log.iter().map(|r| r.offset).collect();
        assert_eq!(offs[offs.len() - 3..], [(blocks - 1) * k16, 0, k16]);
    }

    /// sysbench fsyncs its 128 files one by one, and on a filesystem each
    /// fsync writes back that file's dirty pages alone, waits for them and
    /// then flushes (`sb_fileio.c` `file_fsync` per file; the kernel's
    /// `ext4_sync_file`: `file_write_and_wait_range`, then the journal or a
    /// cache flush). A flush of one whole target would write every file's
    /// pages in the first one's batch and leave 127 empty flushes. So in
    /// the buffered twin flush `i` of a series is file `i`'s range alone,
    /// the 5000 MiB file set in 128 equal files (file-total-size / file-num
    /// each, `file_prepare`), in order, each counted as one flush. Direct
    /// access has nothing cached (each flush is the cache flush), and one
    /// file is the whole target: both flush the whole target.
    #[test]
    fn sysbench_fsyncs_flush_file_by_file() {
        use crate::io::Access;
        let k16 = 16 * KIB;
        let size = SYSBENCH_TOTAL_SIZE / SYSBENCH_FILE_NUM;
        let files: Vec<(u64, u32)> = (0..SYSBENCH_FILE_NUM)
            .map(|i| (i * size, u32::try_from(size).unwrap()))
            .collect();
        for name in ["sysbench_rndwr", "sysbench_seqwr", "sysbench_rndrw"] {
            let (step, log, out, _) = classic_run(name, |p| (p.runtime, p.size) = (None, Some(Bytes(250 * k16))));
            assert_eq!(step.access, Access::Buffered, "{name}");
            // After 100 and 200 requests, and at the end.
            assert_eq!(
                flush_runs(&log),
                vec![files.clone(); 3],
                "{name}: every file in turn, whole"
            );
            assert_eq!(out.flush.ios, 3 * 128, "{name}: one flush a file");
        }
        // A file set whose files do not fit one request's length: each file
        // in requests of at most FLUSH_RANGE_MAX, the last file to the end,
        // still counted as one flush each.
        let big = 3 * (4 * GIB + 16 * KIB);
        let disk = crate::engine::sim::SimDisk::new(crate::engine::sim::SimModel::ssd(16 * GIB), true);
        let runs = classic_run_all("sysbench_rndwr", &disk, |p| {
            (p.runtime, p.size, p.length, p.file_num) = (None, Some(Bytes(150 * k16)), Some(Bytes(big)), 3)
        });
        assert_eq!(runs.len(), 1);
        let max = u64::from(crate::engine::runner::FLUSH_RANGE_MAX);
        let per = big / 3;
        let mut want = Vec::new();
        for i in 0..3 {
            let mut lo = i * per;
            while lo < (i + 1) * per {
                let len = max.min((i + 1) * per - lo);
                want.push((lo, u32::try_from(len).unwrap()));
                lo += len;
            }
        }
        assert_eq!(
            flush_runs(&runs[0].log),
            vec![want; 2],
            "4 GiB + 16 KiB files: two requests each"
        );
        assert_eq!(runs[0].out.flush.ios, 2 * 3);
        for (name, f) in [
            (
                "direct",
                (|s: &mut crate::spec::Step| s.access = Access::Direct) as fn(&mut crate::spec::Step),
            ),
            ("one file", |s| s.fsync_files = 1),
        ] {
            let (step, log, _, _) = classic_run_step(
                "sysbench_rndwr",
                |p| (p.runtime, p.size) = (None, Some(Bytes(250 * k16))),
                f,
            );
            let n = usize::try_from(step.fsync_files).unwrap();
            assert_eq!(
                flush_runs(&log),
                vec![vec![(0, 0); n]; 3],
                "{name}: whole-target flushes"
            );
        }
    }

    /// sysbench's rndrw order (`sb_fileio.c` `file_get_rnd_request`): a read
    /// while (reads + 1.0) / (writes + 1.0) < file-rw-ratio (1.5), else a
    /// write, the same every run; fsyncs do not count. The twin's reads and
    /// writes in issue order against that rule, in sysbench's doubles, for
    /// its ratio and three others whose ratio a double holds exactly; and
    /// the default `random` order of the same mix is not that order.
    #[test]
    fn sysbench_rndrw_order_as_sysbench_decides_it() {
        use crate::io::Op;
        use crate::spec::MixOrder;
        let ops = |pct: u8, order: MixOrder, n: u64| -> String {
            let (_, log, _, _) = classic_run("sysbench_rndrw", |p| {
                (p.runtime, p.size, p.rwmixread, p.rwmix_order) = (None, Some(Bytes(n * 16 * KIB)), pct, order)
            });
            log.iter()
                .filter_map(|r| match r.op {
                    Op::Read => Some('R'),
                    Op::Write => Some('W'),
                    Op::Flush | Op::FlushRange => None,
                })
                .collect()
        };
        let classic_mix = classic()
            .into_iter()
            .find(|t| t.name == "sysbench_rndrw")
            .unwrap()
            .params;
        assert_eq!((classic_mix.rwmixread, classic_mix.rwmix_order), (60, MixOrder::Ratio));
        assert_eq!(&ops(60, MixOrder::Ratio, 20), "RWRWRRWRWRRWRWRRWRWR");
        for (pct, ratio) in [(60u8, 1.5f64), (50, 1.0), (75, 3.0), (80, 4.0)] {
            let (mut reads, mut writes) = (0u64, 0u64);
            let want: String = (0..1000)
                .map(|_| {
                    if (reads as f64 + 1.0) / (writes as f64 + 1.0) < ratio {
                        reads += 1;
                        'R'
                    } else {
                        writes += 1;
                        'W'
                    }
                })
                .collect();
            assert_eq!(ops(pct, MixOrder::Ratio, 1000), want, "rwmixread {pct}");
        }
        let random = ops(60, MixOrder::Random, 1000);
        assert_ne!(random, ops(60, MixOrder::Ratio, 1000));
        let reads = random.chars().filter(|&c| c == 'R').count();
        assert!((540..=660).contains(&reads), "random 60% mix: {reads} reads of 1000");
    }

    /// The seeds' dd commands, through the page cache: `bs=16k count=10000`
    /// then `sync` inside `time (...)`: 10000 writes of 16 KiB from 0, then
    /// one flush, timed; `bs=8k count=256k`: 262144 writes of 8 KiB, no
    /// flush; `bs=10M count=400`: 400 reads of 10 MiB after the cache is
    /// dropped.
    #[test]
    fn dd_requests_and_sync_as_the_seeds_ran_them() {
        use crate::io::{Access, Op};
        use crate::spec::Prepare;
        for (name, op, bs, count, flushes) in [
            ("dd_write_16k", Op::Write, 16 * KIB, 10_000u64, vec![10_000]),
            ("dd_write_8k", Op::Write, 8 * KIB, 256 * 1024, vec![]),
            ("dd_read_10m", Op::Read, 10 * MIB, 400, vec![]),
        ] {
            let (step, log, out, elapsed) = classic_run(name, |_| ());
            assert_eq!(
                (step.access, step.prepare),
                (Access::Buffered, Prepare::DropCaches),
                "{name}"
            );
            assert_eq!(flush_points(&log), flushes, "{name}");
            let ios: Vec<_> = log.iter().filter(|r| matches!(r.op, Op::Read | Op::Write)).collect();
            assert_eq!(ios.len() as u64, count, "{name}");
            for (i, r) in ios.iter().enumerate() {
                assert_eq!((r.op, u64::from(r.len), r.offset), (op, bs, i as u64 * bs), "{name}");
            }
            // The sync is inside the timed span: the job's runtime is the
            // whole of it, the flush included.
            assert_eq!(out.runtime.0, elapsed, "{name}");
            assert_eq!(out.flush.ios, flushes.len() as u64, "{name}");
        }
    }

    /// diskinfo -i (`iopsbench`/`iops`): one step per size, sectorsize,
    /// 4 KiB (not again on a 4096-byte sector), 32 KiB, 128 KiB, 1024 KiB;
    /// each keeps 128 reads (`NAIO`) in flight, every read of the step's
    /// size at `random() % (mediasize / size) * size`: aligned to the size,
    /// inside the target, spread over all of it.
    #[test]
    fn diskinfo_i_requests_as_diskinfo_issues_them() {
        use crate::engine::sim::{SimDisk, SimModel};
        use crate::io::Op;
        for (lb, sizes) in [
            (512u32, vec![512u64, 4096, 32 * KIB, 128 * KIB, MIB]),
            (4096, vec![4096, 32 * KIB, 128 * KIB, MIB]),
        ] {
            let mut m = SimModel::ssd(8 * GIB);
            m.logical_block = lb;
            let disk = SimDisk::new(m, true);
            let runs = classic_run_all("diskinfo_i", &disk, |p| p.runtime = Some(Nanos::from_millis(100)));
            let got: Vec<u64> = runs.iter().map(|r| u64::from(r.step.bs)).collect();
            assert_eq!(got, sizes, "lb {lb}: the step sizes");
            for r in &runs {
                let size = u64::from(r.step.bs);
                assert_eq!(r.step.label, size.to_string());
                assert_eq!(r.max_inflight, 128, "{size}: diskinfo's NAIO in flight");
                assert!(r.log.len() > 128, "{size}: {} reads, the queue refilled", r.log.len());
                for q in &r.log {
                    assert_eq!((q.op, u64::from(q.len)), (Op::Read, size));
                    assert!(
                        q.offset % size == 0 && q.offset + size <= 8 * GIB,
                        "{size}: {}",
                        q.offset
                    );
                }
                let top = r.log.iter().map(|q| q.offset).max().unwrap();
                let low = r.log.iter().map(|q| q.offset).min().unwrap();
                assert!(top > 8 * GIB / 10 * 9 && low < 8 * GIB / 10, "{size}: {low}..{top}");
                assert_eq!(r.out.read.ios, r.log.len() as u64);
            }
        }
    }

    /// diskinfo -S (`slogbench`) on a simulated SSD (constant time per
    /// write and flush): one step per size from the sector doubling to
    /// 8 MiB; in each, one write at a time of the step's size at a random
    /// offset aligned to it, each followed by one flush (`DIOCGFLUSH` after
    /// every `parwrite`), so N writes issue N flushes, alternating; N a
    /// whole number of 250-write batches, the first batch end at or past the
    /// runtime (`while (delta_t() < 1.0)`), at least one batch; the time
    /// counted is all of it, flushes included (`TS`).
    #[test]
    fn diskinfo_s_requests_and_flushes_as_diskinfo_issues_them() {
        use crate::engine::sim::{SimDisk, SimModel};
        use crate::io::Op;
        let runtime = Nanos::from_millis(100);
        let disk = SimDisk::new(SimModel::ssd(8 * GIB), true);
        let runs = classic_run_all("diskinfo_S", &disk, |p| p.runtime = Some(runtime));
        let sizes: Vec<u64> = runs.iter().map(|r| u64::from(r.step.bs)).collect();
        let want: Vec<u64> = (0..15).map(|i| 512u64 << i).collect();
        assert_eq!(sizes, want);
        assert_eq!(sizes[14], 8 * MIB);
        for r in &runs {
            let size = u64::from(r.step.bs);
            let writes: Vec<_> = r.log.iter().filter(|q| matches!(q.op, Op::Read | Op::Write)).collect();
            let n = writes.len() as u64;
            assert!(n >= 250 && n % 250 == 0, "{size}: {n} writes, whole batches");
            assert_eq!(
                flush_points(&r.log),
                (1..=writes.len()).collect::<Vec<_>>(),
                "{size}: a flush after every write"
            );
            assert_eq!((r.out.write.ios, r.out.flush.ios), (n, n), "{size}");
            assert_eq!(r.max_inflight, 1, "{size}: one at a time");
            for q in &writes {
                assert_eq!((q.op, u64::from(q.len)), (Op::Write, size));
                assert!(
                    q.offset % size == 0 && q.offset + size <= 8 * GIB,
                    "{size}: {}",
                    q.offset
                );
            }
            let top = writes.iter().map(|q| q.offset).max().unwrap();
            assert!(top > 8 * GIB / 10 * 9, "{size}: highest offset {top}");
            // Every write and flush costs the same here: the batch before
            // the last ended before the runtime, the last at or after it.
            let per = r.elapsed / n;
            assert!(n * per >= runtime.0 - per, "{size}: {n} writes of {per} ns");
            assert!(
                n == 250 || (n - 250) * per < runtime.0,
                "{size}: {n} writes of {per} ns"
            );
            // Timed from the first write to the last flush.
            assert_eq!(r.out.runtime.0, r.elapsed, "{size}");
        }
        // The small sizes ran many batches, the 8 MiB one exactly one
        // (250 x 16.9 ms is past 100 ms).
        assert!(runs[0].out.write.ios > 250);
        assert_eq!(runs[14].out.write.ios, 250);
    }

    /// The tools' own renderings: the seeds' dd lines (163840000 B in
    /// 0.0662822 s = "2.5 GB/s"; 2147483648 B in 6.10294 s = "352 MB/s"),
    /// whole figures from 10 up, and sysbench's MiB/s.
    #[test]
    fn tool_figures_as_the_tools_print_them() {
        let dd = |b: f64, s: f64| tool_figure("dd_write_16k", b / s).unwrap();
        assert_eq!(dd(163_840_000.0, 0.066_282_2), "2.5 GB/s (dd)");
        assert_eq!(dd(2_147_483_648.0, 6.102_94), "352 MB/s (dd)");
        assert_eq!(dd(2_097_152_000.0, 41.1147), "51 MB/s (dd)");
        assert_eq!(dd(9_940_000.0, 1.0), "9.9 MB/s (dd)");
        assert_eq!(dd(999_600.0, 1.0), "1.0 MB/s (dd)");
        assert_eq!(dd(9_960_000.0, 1.0), "10 MB/s (dd)");
        assert_eq!(dd(500.0, 1.0), "500 B/s (dd)");
        assert_eq!(
            tool_figure("sysbench_rndwr", 12.345 * MIB as f64).as_deref(),
            Some("12.35 MiB/s (sysbench)")
        );
        // hdparm's `print_timing`: "= %6.2f MB/sec", its MB being 2^20.
        assert_eq!(
            tool_figure("hdparm_t", 411.234 * MIB as f64).as_deref(),
            Some("411.23 MB/sec (hdparm)")
        );
        assert_eq!(tool_figure("seq_read_1m_qd1_j1", 1e6), None);
        // diskinfo -t's `TR`: 102400 kbytes in 0.8 s = 128000 kbytes/sec;
        // -S's `TS`: 250 x 8 MiB in 4 s = 500.0 Mbytes/s.
        assert_eq!(
            tool_figure("diskinfo_t_zones", 100.0 * MIB as f64 / 0.8).as_deref(),
            Some("128000 kbytes/sec (diskinfo)")
        );
        assert_eq!(
            tool_figure("diskinfo_S", 250.0 * 8.0 * MIB as f64 / 4.0).as_deref(),
            Some("500.0 Mbytes/s (diskinfo)")
        );
    }
}
