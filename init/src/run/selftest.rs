//! The config's SMART self-test (`self_test`), before the benchmarks: a
//! self-test competes with benchmark I/O, so every selected disk's starts
//! at once, they are polled together with progress on the console, and the
//! benchmarks begin when the last has ended. Each disk's wait is bounded:
//! the device's own estimate with a margin, never more than the config's
//! `max_wait`. A test still running when its wait runs out, or when the
//! run is interrupted (SIGINT, SIGTERM), or whose polling fails, is
//! aborted on the device. A self-test writes no user data: it runs on
//! every selected disk, granted for writes or not.

use std::time::{Duration, Instant};

use bench_core::device::selftest::describe;
use bench_core::document::result::{SelfTest, SelfTestKind, SelfTestOutcome, SelfTestSource, TargetKind};
use bench_core::engine::runner::{Stop, StopReason};
use bench_core::vocab::units::Nanos;

use crate::disks::selftest::{self as dev, Ended, Poll};
use crate::plan::{Plan, SelfTestPlan};

/// The margin over the device's estimate: half of it and a minute more.
fn with_margin(estimate: Duration) -> Duration {
    estimate + estimate / 2 + Duration::from_secs(60)
}

/// How often a running self-test is polled.
const POLL: Duration = Duration::from_secs(5);
/// How often the stop is checked between polls.
const TICK: Duration = Duration::from_millis(100);

/// Time for the commands around the wait (start, the last polls, the
/// abort), counted into the run's bound.
pub const COMMAND_ALLOWANCE: Nanos = Nanos(120 * 1_000_000_000);

/// What the plan's self-test adds to the run's bound: the longest wait and
/// the commands' allowance.
pub fn bound(plan: &Plan) -> Nanos {
    plan.self_test
        .as_ref()
        .map_or(Nanos(0), |s| Nanos(s.max_wait.0.saturating_add(COMMAND_ALLOWANCE.0)))
}

/// A self-test running on a device: polled until it ends, aborted when
/// it must not go on ([`dev::Running`]; a fake in the tests).
trait Device {
    /// Its state now.
    fn poll(&mut self) -> Result<Poll, String>;
    /// Stop it on the device.
    fn abort(&self) -> Result<(), String>;
}

impl Device for dev::Running {
    fn poll(&mut self) -> Result<Poll, String> {
        dev::Running::poll(self)
    }
    fn abort(&self) -> Result<(), String> {
        dev::Running::abort(self)
    }
}

/// One disk's self-test while it runs.
struct Disk<T: Device = dev::Running> {
    ti: usize,
    path: String,
    test: T,
    started: Instant,
    wait: Duration,
    estimate: Option<Duration>,
    /// The last remaining percent said on the console.
    said: Option<u8>,
}

/// The targets that take part: block devices (not absent, not simulated,
/// not arrays or layers) the plan's `self_test` selects.
fn selected(plan: &Plan, st: &SelfTestPlan) -> Vec<usize> {
    (0..plan.targets.len())
        .filter(|&ti| {
            let t = &plan.targets[ti];
            plan.is_disk(ti)
                && t.info.kind == TargetKind::Block
                && t.sim.is_none()
                && t.missing.is_none()
                && st.selects(t.info.serial.as_deref())
        })
        .collect()
}

/// Run the plan's self-test on every disk it selects and record each in
/// its target (`info.self_test`). Nothing to do without `self_test`.
pub fn run(plan: &mut Plan, stop: &Stop, progress: &mut dyn FnMut(&str)) {
    let Some(st) = plan.self_test.clone() else { return };
    let cap = Duration::from_nanos(st.max_wait.0);
    let mut running: Vec<Disk> = Vec::new();
    for ti in selected(plan, &st) {
        let info = &plan.targets[ti].info;
        let path = info.path.clone();
        let sectors = info.size_bytes / 512;
        let t0 = Instant::now();
        match dev::start(&path, info.transport.as_deref(), sectors, st.kind) {
            Ok((test, estimate)) => {
                let wait = estimate.map_or(cap, |e| with_margin(e).min(cap));
                progress(&format!(
                    "bootbench-init: {path}: {} self-test started ({}; waiting at most {})",
                    st.kind,
                    estimate.map_or("the device gives no estimate".to_string(), |e| format!(
                        "the device estimates {}",
                        span(e)
                    )),
                    span(wait)
                ));
                running.push(Disk {
                    ti,
                    path,
                    test,
                    started: t0,
                    wait,
                    estimate,
                    said: None,
                });
            }
            Err(end) => record(plan, ti, st.kind, end, t0, None, progress),
        }
    }
    let mut first = true;
    while !running.is_empty() {
        if !first {
            pause(stop);
        }
        first = false;
        let interrupted = stop.reason() == Some(StopReason::Interrupted);
        let mut i = 0;
        while i < running.len() {
            match step(&mut running[i], interrupted, st.kind, progress) {
                None => i += 1,
                Some(end) => {
                    let d = running.swap_remove(i);
                    record(plan, d.ti, st.kind, end, d.started, d.estimate, progress);
                }
            }
        }
    }
}

/// One poll of disk `d` (or its abort), with a progress line when the
/// percent left changed: `Some` once it ended.
fn step<T: Device>(
    d: &mut Disk<T>,
    interrupted: bool,
    kind: SelfTestKind,
    progress: &mut dyn FnMut(&str),
) -> Option<Ended> {
    if interrupted {
        return Some(abort(d, SelfTestOutcome::Interrupted, None));
    }
    match d.test.poll() {
        Ok(Poll::Ended(e)) => Some(e),
        Ok(Poll::Running(left)) => {
            if d.started.elapsed() >= d.wait {
                return Some(abort(d, SelfTestOutcome::Timeout, left));
            }
            if left.is_some() && left != d.said {
                d.said = left;
                progress(&format!(
                    "bootbench-init: {}: {kind} self-test: {}% left after {}{}",
                    d.path,
                    left.unwrap_or(0),
                    span(d.started.elapsed()),
                    d.estimate
                        .map_or(String::new(), |e| format!(" (the device estimates {})", span(e)))
                ));
            }
            None
        }
        Err(why) => {
            let mut e = abort(d, SelfTestOutcome::Error, None);
            e.error = Some(match e.error {
                Some(more) => format!("{why}; {more}"),
                None => why,
            });
            Some(e)
        }
    }
}

/// Abort `d`'s self-test on the device: the outcome `why` (timeout,
/// interrupted, error), with the abort's own failure in `error`.
fn abort<T: Device>(d: &Disk<T>, why: SelfTestOutcome, left: Option<u8>) -> Ended {
    let mut e = Ended::none(why, String::new());
    e.error = d.test.abort().err();
    e.remaining_pct = left;
    e
}

/// Wait until the next poll, or less if the run is interrupted.
fn pause(stop: &Stop) {
    let until = Instant::now() + POLL;
    while Instant::now() < until && stop.reason() != Some(StopReason::Interrupted) {
        std::thread::sleep(TICK);
    }
}

/// A duration in words: `90 s`, `54 min`.
pub(crate) fn span(d: Duration) -> String {
    let s = d.as_secs();
    if s < 120 {
        format!("{:.1} s", d.as_secs_f64())
    } else if s < 7200 {
        format!("{} min", s.div_ceil(60))
    } else {
        format!("{:.1} h", d.as_secs_f64() / 3600.0)
    }
}

/// Record disk `ti`'s self-test, and say it.
fn record(
    plan: &mut Plan,
    ti: usize,
    kind: SelfTestKind,
    end: Ended,
    started: Instant,
    estimate: Option<Duration>,
    progress: &mut dyn FnMut(&str),
) {
    let t = self_test(kind, end, started.elapsed(), estimate);
    let path = &plan.targets[ti].info.path;
    progress(&format!(
        "bootbench-init: {path}: {kind} self-test: {}{}",
        t.message,
        t.error.as_ref().map_or(String::new(), |e| format!(" ({e})"))
    ));
    plan.targets[ti].info.self_test = Some(t);
}

/// The document's record of a self-test that ended as `end` after `took`.
pub fn self_test(kind: SelfTestKind, end: Ended, took: Duration, estimate: Option<Duration>) -> SelfTest {
    let mut message = describe(end.outcome).to_string();
    if let Some(l) = end.failing_lba {
        message.push_str(&format!(", first failing LBA {l}"));
    }
    if let Some(s) = end.segment {
        message.push_str(&format!(", segment {s}"));
    }
    if let Some(r) = end.remaining_pct.filter(|&r| r > 0) {
        message.push_str(&format!(", {r}% left"));
    }
    let from = match end.source {
        SelfTestSource::AtaSelfTestLog => " (SMART self-test log)",
        SelfTestSource::AtaExtSelfTestLog => " (extended self-test log)",
        SelfTestSource::AtaSmartData => " (SMART data's self-test status; no new log entry)",
        SelfTestSource::NvmeSelfTestLog => " (Device Self-test log)",
        SelfTestSource::ScsiSelfTestLog => " (self-test results log page)",
        SelfTestSource::None => "",
    };
    message.push_str(from);
    let as_ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    SelfTest {
        kind,
        outcome: end.outcome,
        passed: end.outcome.passed(),
        remaining_pct: end.remaining_pct,
        failing_lba: end.failing_lba,
        segment: end.segment,
        power_on_hours: end.power_on_hours,
        estimate_ns: estimate.map(as_ns),
        duration_ns: as_ns(took),
        source: end.source,
        message,
        error: end.error.filter(|e| !e.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A device that answers `polls` in turn (then "running, 50% left"),
    /// and counts the aborts it is sent; `abort_fails` makes each fail.
    struct Fake {
        polls: Vec<Result<Poll, String>>,
        aborts: Cell<u32>,
        abort_fails: bool,
    }

    impl Device for Fake {
        fn poll(&mut self) -> Result<Poll, String> {
            if self.polls.is_empty() {
                Ok(Poll::Running(Some(50)))
            } else {
                self.polls.remove(0)
            }
        }
        fn abort(&self) -> Result<(), String> {
            self.aborts.set(self.aborts.get() + 1);
            if self.abort_fails {
                Err("SEND DIAGNOSTIC: not supported".into())
            } else {
                Ok(())
            }
        }
    }

    fn disk(polls: Vec<Result<Poll, String>>, wait: Duration, abort_fails: bool) -> Disk<Fake> {
        Disk {
            ti: 0,
            path: "/dev/sdx".into(),
            test: Fake {
                polls,
                aborts: Cell::new(0),
                abort_fails,
            },
            started: Instant::now(),
            wait,
            estimate: Some(Duration::from_secs(120)),
            said: None,
        }
    }

    /// The poll loop's endings: a test that ends is not aborted; one still
    /// running past its wait is aborted as a timeout with what it had left;
    /// an interrupt aborts at once without polling; a poll that fails
    /// aborts, keeping both reasons when the abort fails too; a running
    /// test within its wait says how much is left, once per change.
    #[test]
    fn every_ending_but_the_devices_own_aborts_the_self_test() {
        let hour = Duration::from_secs(3600);
        let kind = SelfTestKind::Short;
        let mut said = Vec::new();
        let mut log = |l: &str| said.push(l.to_string());

        let mut d = disk(
            vec![Ok(Poll::Ended(Ended::none(SelfTestOutcome::Completed, String::new())))],
            hour,
            false,
        );
        let e = step(&mut d, false, kind, &mut log).expect("ended");
        assert_eq!((e.outcome, d.test.aborts.get()), (SelfTestOutcome::Completed, 0));

        let mut d = disk(vec![Ok(Poll::Running(Some(70)))], Duration::ZERO, false);
        let e = step(&mut d, false, kind, &mut log).expect("timed out");
        assert_eq!(
            (e.outcome, e.remaining_pct, e.error.as_deref()),
            (SelfTestOutcome::Timeout, Some(70), None)
        );
        assert_eq!(d.test.aborts.get(), 1);

        let mut d = disk(vec![Err("never polled".into())], hour, false);
        let e = step(&mut d, true, kind, &mut log).expect("interrupted");
        assert_eq!((e.outcome, d.test.aborts.get()), (SelfTestOutcome::Interrupted, 1));
        assert_eq!(d.test.polls.len(), 1, "an interrupt does not poll");

        let mut d = disk(vec![Err("SMART READ DATA: EIO".into())], hour, true);
        let e = step(&mut d, false, kind, &mut log).expect("failed");
        assert_eq!((e.outcome, d.test.aborts.get()), (SelfTestOutcome::Error, 1));
        assert_eq!(
            e.error.as_deref(),
            Some("SMART READ DATA: EIO; SEND DIAGNOSTIC: not supported")
        );

        said.clear();
        let mut log = |l: &str| said.push(l.to_string());
        let mut d = disk(
            vec![Ok(Poll::Running(Some(90))), Ok(Poll::Running(Some(90)))],
            hour,
            false,
        );
        assert!(step(&mut d, false, kind, &mut log).is_none());
        assert!(step(&mut d, false, kind, &mut log).is_none());
        assert!(step(&mut d, false, kind, &mut log).is_none());
        assert_eq!(d.test.aborts.get(), 0);
        assert_eq!(said.len(), 2, "90%, then 50%: {said:?}");
        assert!(
            said[0].starts_with("bootbench-init: /dev/sdx: short self-test: 90% left after "),
            "{said:?}"
        );
        assert!(said[0].ends_with(" (the device estimates 2 min)"), "{said:?}");
    }

    #[test]
    fn margins_and_words() {
        assert_eq!(with_margin(Duration::from_secs(120)), Duration::from_secs(240));
        assert_eq!(span(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(span(Duration::from_secs(54 * 60)), "54 min");
        assert_eq!(span(Duration::from_secs(3 * 3600)), "3.0 h");
    }

    #[test]
    fn the_record_follows_the_outcome() {
        let mut e = Ended::none(SelfTestOutcome::FailedRead, String::new());
        e.failing_lba = Some(1234);
        e.remaining_pct = Some(20);
        e.source = SelfTestSource::AtaSelfTestLog;
        let t = self_test(
            SelfTestKind::Extended,
            e,
            Duration::from_secs(3),
            Some(Duration::from_secs(60)),
        );
        assert_eq!(t.passed, Some(false));
        assert_eq!(t.error, None, "an empty reason is none");
        assert_eq!(
            t.message,
            "failed: the read element, first failing LBA 1234, 20% left (SMART self-test log)"
        );
        assert_eq!((t.duration_ns, t.estimate_ns), (3_000_000_000, Some(60_000_000_000)));
        let t = self_test(
            SelfTestKind::Short,
            Ended::none(
                SelfTestOutcome::NotSupported,
                "no self-test commands for transport virtio".into(),
            ),
            Duration::ZERO,
            None,
        );
        assert_eq!((t.passed, t.source), (None, SelfTestSource::None));
        assert_eq!(t.error.as_deref(), Some("no self-test commands for transport virtio"));
    }
}
