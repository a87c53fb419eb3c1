//! What the jobs of a step counted: each job's requests by direction, and
//! the step's result merged from its jobs.

use alloc::vec::Vec;

use crate::document::result::{DirStats, SteadyWait, StepResult};
use crate::engine::stats::{Buckets, Latency};
use crate::io::EngineInfo;
use crate::spec::{step_range, Step};
use crate::vocab::units::{per_sec, rate, Bytes, Nanos};

/// What one direction of one job counted (after the ramp).
#[derive(Clone, Debug, PartialEq)]
pub struct DirAcc {
    /// Bytes completed.
    pub bytes: u64,
    /// Requests completed.
    pub ios: u64,
    /// Latencies from the request's start to its completion (fio's `lat`).
    pub lat: Latency,
    /// From its issue to its completion (fio's `clat`).
    pub clat: Latency,
    /// From its start to its issue (fio's `slat`): only where submission is
    /// a step of its own ([`IoQueue::batched`](crate::io::IoQueue::batched)), as fio records it only
    /// for engines that are not synchronous.
    pub slat: Option<Latency>,
    /// Per-interval counts since the end of the ramp.
    pub buckets: Buckets,
}

impl DirAcc {
    /// Nothing counted yet, samples of width `interval`.
    pub fn new(interval: Nanos) -> DirAcc {
        DirAcc {
            bytes: 0,
            ios: 0,
            lat: Latency::default(),
            clat: Latency::default(),
            slat: None,
            buckets: Buckets::new(interval),
        }
    }

    /// Count one request, its times `t` ([`Times`]), that completed
    /// `since_ramp` after the ramp's end. Its sample interval is the one
    /// holding the last nanosecond of its service: a completion exactly on a
    /// boundary belongs to the interval it ends (so a constant rate gives
    /// equal samples).
    pub(super) fn count(&mut self, t: Times, done: Nanos, since_ramp: Nanos, bytes: u64) {
        self.bytes += bytes;
        self.ios += 1;
        self.lat.record(done.saturating_sub(t.start).0);
        self.clat.record(done.saturating_sub(t.issue).0);
        if t.batched {
            self.slat
                .get_or_insert_with(Latency::default)
                .record(t.issue.saturating_sub(t.start).0);
        }
        self.buckets.record(since_ramp.saturating_sub(Nanos(1)), bytes);
    }
}

/// When a request started (fio's io_u `start_time`: before its buffer is
/// stamped and it is submitted) and was issued to the system (`issue_time`:
/// just before a synchronous submit, just after a batched queue's commit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Times {
    pub(super) start: Nanos,
    pub(super) issue: Nanos,
    pub(super) batched: bool,
}

impl Times {
    /// A request issued as it started (a flush, alone in the queue).
    pub(super) fn at(t: Nanos) -> Times {
        Times {
            start: t,
            issue: t,
            batched: false,
        }
    }
}

/// What one job of a step counted.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    /// Reads.
    pub read: DirAcc,
    /// Writes.
    pub write: DirAcc,
    /// Flushes.
    pub flush: DirAcc,
    /// From the end of the ramp to the last completion.
    pub runtime: Nanos,
    /// Bytes read back and found as written (a verifying step), else 0.
    pub verified: u64,
    /// The queue's engine ([`IoQueue::engine`](crate::io::IoQueue::engine)).
    pub engine: Option<EngineInfo>,
    /// The job's steady-state wait ([`crate::spec::Step::steady`]).
    pub steady: Option<SteadyWait>,
    /// The wrapping sum of its reads' digests ([`crate::io::read_digest`]),
    /// when the step asks for it (`engine.read_digest`).
    pub read_digest: u64,
}

/// Combine the jobs of a step into its result.
///
/// Bytes, requests, latencies and samples are summed over jobs; the runtime
/// is the longest job's; rates are totals over that runtime. A direction
/// with no requests is `None`.
pub fn merge(step: &Step, jobs: &[JobOutcome]) -> StepResult {
    let runtime = jobs.iter().map(|j| j.runtime).max().unwrap_or(Nanos(0));
    let interval = if step.sample_interval.0 == 0 {
        Nanos::from_secs(1)
    } else {
        step.sample_interval
    };
    let dir = |pick: fn(&JobOutcome) -> &DirAcc| -> Option<DirStats> {
        let mut t = DirAcc::new(interval);
        for j in jobs {
            let d = pick(j);
            t.bytes += d.bytes;
            t.ios += d.ios;
            t.lat.merge(&d.lat);
            t.clat.merge(&d.clat);
            if let Some(sl) = &d.slat {
                t.slat.get_or_insert_with(Latency::default).merge(sl);
            }
            t.buckets.merge(&d.buckets);
        }
        if t.ios == 0 {
            return None;
        }
        Some(DirStats {
            bytes: t.bytes,
            ios: t.ios,
            bytes_per_sec: rate(Bytes(t.bytes), runtime).unwrap_or(0.0),
            iops: per_sec(t.ios, runtime).unwrap_or(0.0),
            lat_ns: t.lat.to_stats()?,
            clat_ns: t.clat.to_stats(),
            slat_ns: t.slat.as_ref().and_then(Latency::to_stats),
            samples: t.buckets.to_samples(runtime),
        })
    };
    let (range_start, range_end) = step_range(step);
    StepResult {
        label: step.label.clone(),
        access: step.access,
        bs: step.bs,
        iodepth: step.iodepth,
        jobs: step.jobs,
        range_start,
        range_end,
        runtime_ns: runtime.0,
        read: dir(|j| &j.read),
        write: dir(|j| &j.write),
        flush: dir(|j| &j.flush),
        verified_bytes: step.verify.then(|| jobs.iter().map(|j| j.verified).sum()),
        filled_bytes: None,
        passes: Vec::new(),
        chosen_pass: None,
        lowest_lat_pass: None,
        lowest_lat_mean_ns: None,
        engine: jobs.first().and_then(|j| j.engine.clone()).map(|mut e| {
            if step.engine.read_digest {
                let sum = jobs.iter().fold(0u64, |a, j| a.wrapping_add(j.read_digest));
                e.read_digest = Some(alloc::format!("{sum:016x}"));
            }
            e
        }),
        members: Vec::new(),
        steady_state: jobs.iter().filter_map(|j| j.steady.clone()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::runner::testutil::step;
    use crate::engine::runner::{SerialRunner, StepRunner, Stop};
    use crate::engine::sim::{SimDisk, SimModel};
    use crate::io::Op;
    use crate::spec::{Limit, Pattern};

    /// Jobs are summed; the runtime is the longest; rates are over it.
    #[test]
    fn merge_sums_jobs() {
        let disk = SimDisk::new(
            SimModel {
                command_overhead_ns: 1808,
                ..SimModel::ssd(1 << 30)
            },
            false,
        );
        let mut s = step(
            Pattern::Seq {
                op: Op::Read,
                start: 0,
                end: 1 << 20,
            },
            4096,
            2,
        );
        s.limit = Limit {
            runtime: None,
            bytes: Some(4096 * 100),
            ios: None,
            min_ios: 0,
        };
        let mut r = SerialRunner {
            target: &disk,
            clock: &disk.clock,
        };
        let res = r.run_step(&s, &Stop::new(), &mut |_| ()).unwrap();
        let rd = res.read.as_ref().unwrap();
        // Each job: 100 sequential reads of 10 us (no seek on a flat disk).
        assert_eq!((rd.ios, rd.bytes, res.runtime_ns), (200, 200 * 4096, 1_000_000));
        assert_eq!(rd.iops, 200_000.0);
        assert_eq!((res.range_start, res.range_end, res.jobs), (0, 1 << 20, 2));
        assert!(res.write.is_none() && res.flush.is_none());
        assert_eq!(disk.counts().reads, 200);
    }
}
