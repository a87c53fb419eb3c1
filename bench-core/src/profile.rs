//! Profiles: named bundles of tests.
//!
//! - `quick`: every workload, a second or less each, samples every 100 ms,
//!   for tests and a first look.
//! - `standard`: every workload with fio-like durations.
//! - `classic`: the seed posts' tools with their parameters: hdparm -T/-t,
//!   dd (16k x 10000 write + fdatasync, 8k x 256k overwrite, 10M x 400 read),
//!   sysbench fileio (16 KiB, rndrd/rndwr/rndrw at 1.5 ratio, 10 s),
//!   diskinfo -t/-c/-i, the commit-size test.
//! - `cdm`: CrystalDiskMark's default set: SEQ1M Q8T1, SEQ1M Q1T1,
//!   RND4K Q32T1, RND4K Q1T1, read and write, 1 GiB area, 5 s each.

use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;

use crate::plan::default_name;
use crate::spec::{Params, TestSpec, Workload};
use crate::units::{Bytes, Nanos, GIB, KIB, MIB};

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
        test("", Workload::SeekProfile, untimed),
        test("", Workload::Zones, |p| {
            untimed(p);
            (p.zone_bytes, p.points) = (Bytes(8 * MIB), 8);
        }),
        test("", Workload::CommandOverhead, untimed),
        test("", Workload::IopsSweep, |p| (p.iodepth, p.runtime) = (32, half)),
        test("", Workload::Commit, |p| {
            untimed(p);
            (p.bs, p.size, p.flush_every) = (Bytes(16 * KIB), Some(Bytes(MIB)), 1);
        }),
    ];
    // Runs of a second or less: sample every 100 ms so each timed test still
    // has a series of samples and a steadiness figure.
    for t in &mut v {
        t.params.sample_interval = QUICK_SAMPLE_INTERVAL;
    }
    v
}

/// `standard`: every workload with fio-like 10 s runtimes; random tests at
/// QD1 and QD32; zones 100 MiB with 32 points; iops_sweep 3 s at QD128.
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
    ]);
    v
}

/// `classic`: the seed posts' tools with their parameters.
fn classic() -> Vec<TestSpec> {
    let secs = |s| Some(Nanos::from_secs(s));
    let k16 = Bytes(16 * KIB);
    vec![
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
        // dd bs=16k count=10000 conv=fdatasync; bs=8k count=256k; bs=10M count=400.
        test("dd_write_16k", Workload::SeqWrite, |p| {
            untimed(p);
            (p.bs, p.size) = (k16, Some(Bytes(163_840_000)));
        }),
        test("dd_write_8k", Workload::SeqWrite, |p| {
            untimed(p);
            (p.bs, p.size) = (Bytes(8 * KIB), Some(Bytes(2 * GIB)));
        }),
        test("dd_read_10m", Workload::SeqRead, |p| {
            untimed(p);
            (p.bs, p.size) = (Bytes(10 * MIB), Some(Bytes(4000 * MIB)));
        }),
        // sysbench fileio: 16 KiB, QD1, 10 s; rndrw at 1.5 reads per write.
        test("sysbench_rndrd", Workload::RandRead, |p| {
            (p.bs, p.runtime) = (k16, secs(10))
        }),
        test("sysbench_rndwr", Workload::RandWrite, |p| {
            (p.bs, p.runtime) = (k16, secs(10))
        }),
        test("sysbench_rndrw", Workload::RandRw, |p| {
            (p.bs, p.runtime, p.rwmixread) = (k16, secs(10), 60)
        }),
        test("sysbench_seqrd", Workload::SeqRead, |p| {
            (p.bs, p.runtime) = (k16, secs(10))
        }),
        test("sysbench_seqwr", Workload::SeqWrite, |p| {
            (p.bs, p.runtime) = (k16, secs(10))
        }),
        // diskinfo -t (seeks, transfer rates), -c, -i.
        test("diskinfo_t_seek", Workload::SeekProfile, untimed),
        test("diskinfo_t_zones", Workload::Zones, |p| {
            untimed(p);
            p.zone_bytes = Bytes(100 * MIB);
        }),
        test("diskinfo_c", Workload::CommandOverhead, untimed),
        test("diskinfo_i", Workload::IopsSweep, |p| {
            (p.iodepth, p.runtime) = (128, secs(3))
        }),
        // Seed 000's commit size: 1000 files of 160 KiB (10 x 16 KiB), a
        // flush per file, then one flush at the end.
        test("commit_size", Workload::Commit, |p| {
            untimed(p);
            (p.bs, p.size, p.flush_every) = (k16, Some(Bytes(160 * KIB * 1000)), 10);
        }),
    ]
}

/// `cdm`: CrystalDiskMark's default set, read and write, 1 GiB area, 5 s.
fn cdm() -> Vec<TestSpec> {
    let mut v = Vec::new();
    for (tag, bs, qd, seq) in [
        ("seq1m_q8t1", MIB, 8, true),
        ("seq1m_q1t1", MIB, 1, true),
        ("rnd4k_q32t1", 4 * KIB, 32, false),
        ("rnd4k_q1t1", 4 * KIB, 1, false),
    ] {
        for (dir, w) in [
            ("read", if seq { Workload::SeqRead } else { Workload::RandRead }),
            ("write", if seq { Workload::SeqWrite } else { Workload::RandWrite }),
        ] {
            v.push(test(&format!("cdm_{tag}_{dir}"), w, |p| {
                (p.bs, p.iodepth, p.jobs) = (Bytes(bs), qd, 1);
                (p.length, p.runtime) = (Some(Bytes(GIB)), Some(Nanos::from_secs(5)));
            }));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Geometry;
    use crate::plan::expand;
    use alloc::collections::BTreeSet;

    const HDD_64G: Geometry = Geometry {
        size: 64 * GIB,
        logical_block: 512,
        physical_block: 4096,
    };

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

    #[test]
    fn classic_and_cdm_parameters() {
        let c = classic();
        let get = |n: &str| c.iter().find(|t| t.name == n).unwrap().params.clone();
        assert_eq!(get("dd_write_16k").size, Some(Bytes(163_840_000)));
        assert_eq!(get("dd_read_10m").bs, Bytes(10 * MIB));
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
            assert_eq!(
                (t.params.length, t.params.runtime),
                (Some(Bytes(GIB)), Some(Nanos::from_secs(5)))
            );
        }
        let q8 = cdm.iter().find(|t| t.name == "cdm_seq1m_q8t1_write").unwrap();
        assert_eq!(
            (q8.workload, q8.params.bs, q8.params.iodepth),
            (Workload::SeqWrite, Bytes(MIB), 8)
        );
    }
}
