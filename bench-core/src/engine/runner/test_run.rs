//! A whole test: its steps in order, each step's passes, and the test's
//! status and summary.

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;

use super::job::Progress;
use super::{StepRunner, Stop, StopReason, EOPNOTSUPP};
use crate::document::result::{PassResult, Status, StepResult, TestResult};
use crate::engine::verify;
use crate::io::{IoError, Op};
use crate::spec::{Step, TestSpec};
use crate::vocab::units::{per_sec, rate, Bytes, Nanos};

/// The figures of one pass, from its step result.
pub fn pass_of(r: &StepResult, warmup: bool) -> PassResult {
    let dirs = [r.read.as_ref(), r.write.as_ref()];
    let bytes: u64 = dirs.iter().flatten().map(|d| d.bytes).sum();
    let ios: u64 = dirs.iter().flatten().map(|d| d.ios).sum();
    #[allow(clippy::cast_precision_loss)] // request counts far below 2^53
    let lat_sum: f64 = dirs.iter().flatten().map(|d| d.lat_ns.mean * d.ios as f64).sum();
    let runtime = Nanos(r.runtime_ns);
    PassResult {
        warmup,
        runtime_ns: r.runtime_ns,
        read_bytes: r.read.as_ref().map_or(0, |d| d.bytes),
        write_bytes: r.write.as_ref().map_or(0, |d| d.bytes),
        bytes_per_sec: rate(Bytes(bytes), runtime).unwrap_or(0.0),
        iops: per_sec(ios, runtime).unwrap_or(0.0),
        #[allow(clippy::cast_precision_loss)] // request counts far below 2^53
        lat_mean_ns: (ios > 0).then(|| lat_sum / ios as f64),
    }
}

/// How a step's passes ended.
enum PassesEnd {
    /// Every pass ran.
    Done,
    /// `stop` was asked during a pass.
    Stopped(StopReason),
    /// A pass failed.
    Failed(IoError),
}

/// Run a step's passes: `step.warmup` discarded ones, then `step.passes`
/// measured ones, back to back (as CrystalDiskMark runs DiskSpd
/// `TestCount + 1` times per test, DiskBench.cpp `DiskSpd`: pass 0 is
/// "Preparing...", its score never taken; the score is the highest of the
/// others). Only the first pass fills ([`Step::fill`]); each does the
/// step's preparation. The result is the measured pass with the highest
/// bytes per second (the first of equals), with every pass's figures
/// ([`pass_of`]) and the chosen one's index when there is more than one
/// pass; `None` if no measured pass has figures. A pass cut short by a
/// stop counts as it ran; a failed pass has none (the passes before it
/// are kept).
fn run_passes(
    step: &Step,
    runner: &mut dyn StepRunner,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> (Option<StepResult>, PassesEnd) {
    let warmup = step.warmup;
    let total = warmup.saturating_add(step.passes.max(1));
    let mut later = None;
    let mut filled = None;
    let mut passes = Vec::new();
    // (index in `passes`, its bytes per second, its result)
    let mut best: Option<(usize, f64, StepResult)> = None;
    let mut end = PassesEnd::Done;
    for i in 0..total {
        let s = if i == 0 {
            step
        } else {
            later.get_or_insert_with(|| Step {
                fill: false,
                ..step.clone()
            })
        };
        let r = runner.run_step(s, stop, progress);
        let stopped = stop.reason();
        let r = match (r, stopped) {
            (Ok(r), _) => r,
            // A request cut short by the stop may fail (ECANCELED): the
            // stop is what happened.
            (Err(_), Some(why)) => {
                end = PassesEnd::Stopped(why);
                break;
            }
            (Err(e), None) => {
                end = PassesEnd::Failed(e);
                break;
            }
        };
        if i == 0 {
            filled = r.filled_bytes;
        }
        let is_warmup = i < warmup;
        let pass = pass_of(&r, is_warmup);
        if !is_warmup && best.as_ref().is_none_or(|(_, bps, _)| pass.bytes_per_sec > *bps) {
            best = Some((passes.len(), pass.bytes_per_sec, r));
        }
        passes.push(pass);
        if let Some(why) = stopped {
            end = PassesEnd::Stopped(why);
            break;
        }
    }
    let result = best.map(|(i, _, mut r)| {
        r.filled_bytes = filled;
        if total > 1 {
            r.chosen_pass = u32::try_from(i).ok();
            let lowest = lowest_latency(&passes);
            r.lowest_lat_pass = lowest.and_then(|(k, _)| u32::try_from(k).ok());
            r.lowest_lat_mean_ns = lowest.map(|(_, ns)| ns);
            r.passes = passes;
        }
        r
    });
    (result, end)
}

/// The measured pass with the lowest mean latency, among those that moved
/// any bytes, and that latency (CrystalDiskMark's `minLatency`: the least
/// latency of runs `j > 0` whose score is above 0); the first of equals.
fn lowest_latency(passes: &[PassResult]) -> Option<(usize, f64)> {
    let mut low: Option<(usize, f64)> = None;
    for (i, p) in passes.iter().enumerate() {
        if p.warmup || p.bytes_per_sec <= 0.0 {
            continue;
        }
        if let Some(ns) = p.lat_mean_ns {
            if low.is_none_or(|(_, l)| ns < l) {
                low = Some((i, ns));
            }
        }
    }
    low
}

/// Run every step of `spec` in order on `target_path`, and build the test's
/// result: status `ok`; or `error` with the errno, op and offset of the
/// first failed request (later steps are not run; completed ones are kept);
/// or, when `stop` was asked during a step, `interrupted` or `timeout` (the
/// steps so far are kept, the last one shortened: its figures cover the time
/// it ran); and the summary. Each step runs its passes ([`run_passes`]),
/// and after a step with a pause ([`Step::pause`], a test's last) that
/// ended `ok`, the runner idles ([`StepRunner::idle`]), untimed.
pub fn run_test(
    spec: &TestSpec,
    target_path: &str,
    steps: &[Step],
    runner: &mut dyn StepRunner,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> TestResult {
    let mut results = Vec::with_capacity(steps.len());
    let mut status = Status::Ok;
    for step in steps {
        let (r, end) = run_passes(step, runner, stop, progress);
        if let Some(r) = r {
            results.push(r);
        }
        match end {
            PassesEnd::Done => {}
            PassesEnd::Stopped(why) => {
                status = stopped_status(why, &step.label);
                break;
            }
            PassesEnd::Failed(e) => {
                status = error_status(&e);
                if let (Status::Error { message, .. }, Some(m)) = (&mut status, runner.take_failure_message()) {
                    *message = m;
                }
                break;
            }
        }
        if step.pause.0 > 0 {
            if let Err(e) = runner.idle(step.pause, stop) {
                status = error_status(&e);
                break;
            }
        }
    }
    TestResult {
        name: spec.name.clone(),
        workload: spec.workload,
        target: target_path.to_string(),
        params: spec.params.clone(),
        summary: crate::engine::plan::summarize(spec.workload, &results),
        status,
        steps: results,
        zones: None,
        placement: None,
    }
}

/// The status of a test stopped during step `label`.
pub fn stopped_status(why: StopReason, label: &str) -> Status {
    match why {
        StopReason::Interrupted => Status::Interrupted {
            message: format!("stopped by the user during step {label}; the figures cover the time it ran"),
        },
        StopReason::Deadline => Status::Timeout {
            message: format!("past its deadline during step {label}; the figures cover the time it ran"),
        },
    }
}

/// The name of an operation in messages.
pub fn op_name(op: Op) -> &'static str {
    crate::vocab::names::name_of(&op)
}

/// The `error` status of a failed request: `read at offset 8192 failed: errno 5`.
pub fn error_status(e: &IoError) -> Status {
    let message = match (e.errno, e.req.op) {
        (verify::VERIFY_ERRNO, Op::Read) => format!(
            "verify: the {} bytes read back at offset {} differ from what was written (errno {}, EILSEQ, as fio)",
            e.req.len, e.req.offset, e.errno
        ),
        (EOPNOTSUPP, _) => format!(
            "{} at offset {} failed: errno {} (this target's engine cannot verify data)",
            op_name(e.req.op),
            e.req.offset,
            e.errno
        ),
        _ => format!(
            "{} at offset {} failed: errno {}",
            op_name(e.req.op),
            e.req.offset,
            e.errno
        ),
    };
    Status::Error {
        errno: e.errno,
        op: e.req.op,
        offset: e.req.offset,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::runner::testutil::{ms_per_read, run_on, Rec};
    use crate::engine::runner::SerialRunner;
    use crate::engine::sim::{SimDisk, SimModel};
    use crate::io::Clock;

    /// A stop asked during a step ends it after the requests in flight: the
    /// step is kept with the time it ran, later steps do not run, and the
    /// status says why (deadline: timeout; the user: interrupted). An
    /// interrupt outlasts `clear_deadline`, a deadline does not.
    #[test]
    fn stop_during_a_step_keeps_what_ran_and_names_the_reason() {
        for why in [StopReason::Deadline, StopReason::Interrupted] {
            let (disk, s) = ms_per_read(Nanos::from_secs(10));
            let mut second = s.clone();
            second.label = "second".into();
            let spec = TestSpec::new("t", crate::spec::Workload::RandRead, |_| ());
            let stop = Stop::new();
            let mut r = SerialRunner {
                target: &disk,
                clock: &disk.clock,
            };
            // The first progress report (after 1 s of the step's clock) asks to stop.
            let res = run_test(&spec, "sim:0", &[s, second], &mut r, &stop, &mut |_| stop.request(why));
            assert_eq!(res.steps.len(), 1, "{why:?}: the second step did not run");
            let ran = res.steps[0].runtime_ns;
            assert!(
                (1_000_000_000..1_100_000_000).contains(&ran),
                "{why:?}: ran {ran} ns of 10 s"
            );
            match (&res.status, why) {
                (Status::Timeout { message }, StopReason::Deadline)
                | (Status::Interrupted { message }, StopReason::Interrupted) => {
                    assert!(message.contains("during step main"), "{message}");
                }
                (other, _) => panic!("{why:?}: status {other:?}"),
            }
            stop.clear_deadline();
            assert_eq!(stop.reason(), (why == StopReason::Interrupted).then_some(why));
            // The first reason wins.
            stop.request(StopReason::Deadline);
            stop.request(StopReason::Interrupted);
            assert_eq!(
                stop.reason(),
                Some(if why == StopReason::Interrupted {
                    why
                } else {
                    StopReason::Deadline
                })
            );
        }
    }

    /// `warmup` and `passes` (CrystalDiskMark, DiskBench.cpp `DiskSpd`:
    /// run 0 discarded, the score the highest of the others): four runs of
    /// the step, each kept in `passes`; the warm-up, though the fastest, is
    /// never chosen; the step's figures (and the summary's) are those of
    /// the fastest measured pass, and count one pass's requests only.
    #[test]
    fn passes_report_the_best_measured_pass_and_keep_each() {
        use crate::spec::Workload;
        use crate::vocab::units::Bytes;
        // Extra ns per request, by pass: warm-up, then three measured.
        let t = Rec::new(16 << 20, true, vec![0, 300_000, 100_000, 200_000]);
        let spec = TestSpec::new("t", Workload::RandRead, |p| {
            (p.runtime, p.size, p.passes, p.warmup) = (None, Some(Bytes(400 << 10)), 3, 1);
        });
        let r = run_on(&t, &t.disk.clock, &spec);
        assert_eq!(r.status, Status::Ok);
        let st = &r.steps[0];
        assert_eq!(st.passes.len(), 4);
        let warm: Vec<bool> = st.passes.iter().map(|p| p.warmup).collect();
        assert_eq!(warm, [true, false, false, false]);
        for p in &st.passes {
            assert_eq!((p.read_bytes, p.write_bytes), (400 << 10, 0));
        }
        let bps: Vec<f64> = st.passes.iter().map(|p| p.bytes_per_sec).collect();
        assert!(bps[0] > bps[2] && bps[2] > bps[3] && bps[3] > bps[1], "{bps:?}");
        assert_eq!(st.chosen_pass, Some(2));
        let read = st.read.as_ref().unwrap();
        assert_eq!(read.bytes_per_sec, bps[2]);
        assert_eq!((read.bytes, read.ios), (400 << 10, 100), "one pass counted");
        assert_eq!(st.runtime_ns, st.passes[2].runtime_ns);
        assert_eq!(r.summary.read_bytes_per_sec, Some(bps[2]));
        // The lowest mean latency of the measured passes: the fastest here.
        assert_eq!(st.lowest_lat_pass, Some(2));
        assert_eq!(st.lowest_lat_mean_ns, st.passes[2].lat_mean_ns);
        assert!(
            st.passes[0].lat_mean_ns < st.passes[2].lat_mean_ns,
            "the warm-up's is lower"
        );
        // One pass: no pass list, as before passes existed.
        let one = TestSpec::new("t", Workload::RandRead, |p| {
            (p.runtime, p.size) = (None, Some(Bytes(4096)))
        });
        let r = run_on(&t, &t.disk.clock, &one);
        assert!(r.steps[0].passes.is_empty() && r.steps[0].chosen_pass.is_none());
        assert!(r.steps[0].lowest_lat_pass.is_none() && r.steps[0].lowest_lat_mean_ns.is_none());
    }

    /// CrystalDiskMark's latency is chosen apart from its score: the least
    /// mean latency of the measured passes that moved bytes, whichever pass
    /// scored best; warm-ups, passes with no bytes or no latency, and a
    /// later equal do not count.
    #[test]
    fn lowest_latency_is_chosen_apart_from_the_best_pass() {
        let pass = |warmup: bool, bps: f64, lat: Option<f64>| PassResult {
            warmup,
            runtime_ns: 1,
            read_bytes: 1,
            write_bytes: 0,
            bytes_per_sec: bps,
            iops: 1.0,
            lat_mean_ns: lat,
        };
        let passes = [
            pass(true, 9.0, Some(10.0)),
            pass(false, 8.0, Some(50.0)),
            pass(false, 0.0, Some(20.0)),
            pass(false, 5.0, Some(30.0)),
            pass(false, 6.0, None),
            pass(false, 4.0, Some(30.0)),
        ];
        assert_eq!(lowest_latency(&passes), Some((3, 30.0)));
        assert_eq!(lowest_latency(&passes[..1]), None);
        assert_eq!(lowest_latency(&[]), None);
    }

    /// `pause`: after the test's last step, untimed: the clock moves on by
    /// the pause with no I/O, the figures are those without a pause, and
    /// the parameters record it.
    #[test]
    fn pause_idles_after_the_test_untimed() {
        use crate::spec::Workload;
        use crate::vocab::units::Bytes;
        let run = |pause: Nanos| {
            let disk = SimDisk::new(SimModel::ssd(16 << 20), true);
            let spec = TestSpec::new("t", Workload::SeqWrite, |p| {
                (p.bs, p.runtime, p.size, p.pause) = (Bytes(1 << 20), None, Some(Bytes(4 << 20)), pause);
            });
            let r = run_on(&disk, &disk.clock, &spec);
            (r, disk.counts(), disk.clock.now())
        };
        let (r0, c0, t0) = run(Nanos(0));
        let five = Nanos::from_secs(5);
        let (r5, c5, t5) = run(five);
        assert_eq!(t5.0 - t0.0, five.0, "the pause passes on the clock");
        assert_eq!(c5, c0, "no I/O during the pause");
        assert_eq!((r5.steps.clone(), r5.summary.clone()), (r0.steps, r0.summary));
        assert_eq!(r5.params.pause, five);
    }
}
