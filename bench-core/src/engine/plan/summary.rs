//! The headline figures of a test, from its step results.

use alloc::vec::Vec;

use super::diskinfo::{COMMIT_ALL_LABEL, SURFACE_PREFIX};
use super::MAIN_LABEL;
use crate::document::result::{DirStats, Figure, StepResult, Summary};
use crate::spec::Workload;

fn read_ios(d: Option<&DirStats>) -> u64 {
    d.map_or(0, |d| d.ios)
}

/// The headline figures of a test from its step results (the steps that
/// ran: after an error, the figures of the missing steps are absent).
///
/// - single-step workloads: the main step's read and write throughput and
///   IOPS, and the mean latency over reads and writes (weighted by count);
/// - `command_overhead`: ns per command, a small read's mean time less the
///   big reads' time per block they moved, `(small.runtime - big.runtime x
///   small bytes / big bytes) / n` with n small reads of one block each:
///   diskinfo -c's `(small - big) / n` when both loops moved the same bytes,
///   and the same per block when a runtime ended them sooner;
/// - `seek_profile`: mean read latency of each section;
/// - `zones`: read bytes/s per step, and as the headline read bytes/s the
///   mean over the surface points (evenly spaced over the range: the
///   surface's mean rate; with no points, over outside, middle, inside);
///   `iops_sweep`: read IOPS per step, and as the headline the highest
///   (the sweep's peak) with that step's read bytes/s; `commit`, `slog`:
///   write bytes/s per step (flushes included in the time), and for
///   `commit` the headline write bytes/s and IOPS of its `flush_every_N`
///   step (the commit size; `flush_every_all` is its reference).
///   The analysis compares these headlines (`crate::verdict::analysis`).
pub fn summarize(workload: Workload, steps: &[StepResult]) -> Summary {
    let mut s = Summary::default();
    let per_step = |f: &dyn Fn(&StepResult) -> Option<f64>| -> Vec<Figure> {
        steps
            .iter()
            .filter_map(|st| {
                f(st).map(|value| Figure {
                    label: st.label.clone(),
                    value,
                })
            })
            .collect()
    };
    match workload {
        Workload::SeekProfile => s.seek_ns = per_step(&|st| st.read.as_ref().map(|d| d.lat_ns.mean)),
        Workload::Zones => {
            s.per_step = per_step(&|st| st.read.as_ref().map(|d| d.bytes_per_sec));
            let surface: Vec<f64> = s
                .per_step
                .iter()
                .filter(|f| f.label.starts_with(SURFACE_PREFIX))
                .map(|f| f.value)
                .collect();
            let zones: Vec<f64> = if surface.is_empty() {
                s.per_step.iter().map(|f| f.value).collect()
            } else {
                surface
            };
            if !zones.is_empty() {
                #[allow(clippy::cast_precision_loss)] // a few hundred zones at most
                let n = zones.len() as f64;
                s.read_bytes_per_sec = Some(zones.iter().sum::<f64>() / n);
            }
        }
        Workload::IopsSweep => {
            s.per_step = per_step(&|st| st.read.as_ref().map(|d| d.iops));
            let peak = steps
                .iter()
                .filter_map(|st| st.read.as_ref())
                .max_by(|a, b| a.iops.total_cmp(&b.iops));
            if let Some(d) = peak {
                (s.read_iops, s.read_bytes_per_sec) = (Some(d.iops), Some(d.bytes_per_sec));
            }
        }
        Workload::Commit | Workload::Slog => {
            s.per_step = per_step(&|st| st.write.as_ref().map(|d| d.bytes_per_sec));
            if workload == Workload::Commit {
                let every = steps.iter().find(|st| st.label != COMMIT_ALL_LABEL);
                if let Some(d) = every.and_then(|st| st.write.as_ref()) {
                    (s.write_bytes_per_sec, s.write_iops) = (Some(d.bytes_per_sec), Some(d.iops));
                }
            }
        }
        Workload::CommandOverhead => {
            let find = |l: &str| steps.iter().find(|st| st.label == l);
            if let (Some(big), Some(small)) = (find("big"), find("small")) {
                let n = read_ios(small.read.as_ref());
                let small_bytes = small.read.as_ref().map_or(0, |d| d.bytes);
                let big_bytes = big.read.as_ref().map_or(0, |d| d.bytes);
                if n > 0 && big_bytes > 0 {
                    #[allow(clippy::cast_precision_loss)] // nanosecond and byte counts far below 2^53
                    let v = (small.runtime_ns as f64 - big.runtime_ns as f64 * small_bytes as f64 / big_bytes as f64)
                        / n as f64;
                    s.command_overhead_ns = Some(v);
                }
            }
        }
        _ => {
            if let Some(main) = steps.iter().find(|st| st.label == MAIN_LABEL) {
                s.read_bytes_per_sec = main.read.as_ref().map(|d| d.bytes_per_sec);
                s.read_iops = main.read.as_ref().map(|d| d.iops);
                s.write_bytes_per_sec = main.write.as_ref().map(|d| d.bytes_per_sec);
                s.write_iops = main.write.as_ref().map(|d| d.iops);
                let (mut sum, mut n) = (0.0, 0u64);
                for d in [main.read.as_ref(), main.write.as_ref()].into_iter().flatten() {
                    #[allow(clippy::cast_precision_loss)] // request counts far below 2^53
                    {
                        sum += d.lat_ns.mean * d.ios as f64;
                    }
                    n += d.ios;
                }
                if n > 0 {
                    #[allow(clippy::cast_precision_loss)] // request counts far below 2^53
                    let mean = sum / n as f64;
                    s.lat_mean_ns = Some(mean);
                }
            }
        }
    }
    s
}
