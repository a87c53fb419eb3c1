//! The countdown before a run that may write: the console names every disk
//! the plan grants writes to and counts `destructive.countdown` down, a
//! line a second, before the run begins, so that whoever watches can power
//! the machine off (or interrupt a live run) before anything is written.
//! An interrupt during it ends the run before its first step: nothing is
//! written, and the document says the run was interrupted.

use std::time::Duration;

use bench_core::engine::runner::Stop;
use bench_core::vocab::units::Nanos;

use crate::plan::Plan;

/// The granted targets, as the console names them: the path, the serial
/// and the model.
fn granted(plan: &Plan) -> Vec<String> {
    plan.targets
        .iter()
        .enumerate()
        .filter(|(ti, t)| t.grant.is_some() && plan.is_disk(*ti))
        .map(|(_, t)| {
            let i = &t.info;
            format!(
                "{} (serial {}, model {})",
                i.path,
                i.serial.as_deref().unwrap_or("none"),
                i.model.as_deref().unwrap_or("unknown")
            )
        })
        .collect()
}

/// How long the countdown takes: the plan's, when it grants any write.
pub fn bound(plan: &Plan) -> Nanos {
    if plan.countdown.0 == 0 || granted(plan).is_empty() {
        Nanos(0)
    } else {
        plan.countdown
    }
}

/// The slice of the countdown between two looks at `stop`.
const TICK: Duration = Duration::from_millis(100);

/// Count down before a run that may write, with `sleep` (the thread's, but
/// for tests). Returns false if `stop` was asked during it (nothing is to
/// be written), true otherwise (also when there is nothing to count down).
pub fn run(plan: &Plan, stop: &Stop, progress: &mut dyn FnMut(&str), sleep: &mut dyn FnMut(Duration)) -> bool {
    let disks = granted(plan);
    if disks.is_empty() || stop.reason().is_some() {
        return stop.reason().is_none();
    }
    let total = Duration::from_nanos(plan.countdown.0);
    if total.is_zero() {
        progress(&format!(
            "bootbench-init: WRITES: this run may write to (destroying their data) {}; no countdown \
             (destructive.countdown is 0)",
            disks.join(", ")
        ));
        return true;
    }
    progress(&format!(
        "bootbench-init: WRITES AHEAD: this run may write to (destroying their data) {}; it begins in {} s: \
         power off now, or interrupt a live run (Ctrl-C), to keep them",
        disks.join(", "),
        total.as_secs_f64().ceil()
    ));
    let mut left = total;
    while !left.is_zero() {
        let step = left.min(TICK);
        sleep(step);
        left -= step;
        if stop.reason().is_some() {
            progress("bootbench-init: countdown interrupted: the run ends before its first step; nothing was written");
            return false;
        }
        let whole = left.as_millis();
        if whole > 0 && whole % 1000 == 0 {
            progress(&format!("bootbench-init: countdown: {} s", whole / 1000));
        }
    }
    progress("bootbench-init: countdown over: the run begins");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{parse, validate, Overrides};
    use crate::testutil::TempDir;
    use bench_core::engine::runner::StopReason;

    /// A plan granting writes to one file of two, with `countdown`.
    fn plan(t: &TempDir, countdown: &str) -> Plan {
        let file = |n: &str| {
            let p = t.0.join(n);
            std::fs::write(&p, vec![0u8; 1 << 20]).unwrap();
            p.to_string_lossy().into_owned()
        };
        let (a, b) = (file("a.img"), file("b.img"));
        let text = format!(
            r#"{{"targets":["{a}","{b}"],"tests":[{{"workload":"seq_write","size":"64k"}}],
               "destructive":{{"confirm":"I understand this destroys data","targets":["{a}"]{countdown}}}}}"#
        );
        validate(&parse(&text, "t.json").unwrap(), "t.json", &Overrides::default()).unwrap()
    }

    /// The granted disk is named, the countdown says each second left, the
    /// sleeps add up to the countdown and the run may begin.
    #[test]
    fn a_countdown_names_the_granted_disks_and_counts_each_second() {
        let t = TempDir::new("countdown");
        let p = plan(&t, r#","countdown":"3s""#);
        assert_eq!(bound(&p), Nanos::from_secs(3));
        let (mut lines, mut slept) = (Vec::new(), Duration::ZERO);
        assert!(run(&p, &Stop::new(), &mut |l| lines.push(l.to_string()), &mut |d| {
            slept += d
        }));
        assert_eq!(slept, Duration::from_secs(3));
        assert!(
            lines[0].starts_with(&format!(
                "bootbench-init: WRITES AHEAD: this run may write to (destroying their data) {} (serial",
                p.targets[0].info.path
            )) && lines[0].contains("it begins in 3 s: power off now"),
            "{lines:?}"
        );
        assert!(!lines[0].contains(&p.targets[1].info.path), "only the granted disk");
        assert_eq!(
            lines[1..],
            [
                "bootbench-init: countdown: 2 s",
                "bootbench-init: countdown: 1 s",
                "bootbench-init: countdown over: the run begins"
            ]
        );
    }

    /// An interrupt during the countdown ends it at once: the run is not
    /// to begin.
    #[test]
    fn an_interrupt_during_the_countdown_stops_the_run() {
        let t = TempDir::new("countdown");
        let p = plan(&t, "");
        assert_eq!(bound(&p), Nanos::from_secs(10), "10 s by default");
        let stop = Stop::new();
        let (mut lines, mut slept) = (Vec::new(), Duration::ZERO);
        let ok = run(&p, &stop, &mut |l| lines.push(l.to_string()), &mut |d| {
            slept += d;
            if slept >= Duration::from_millis(1500) {
                stop.request(StopReason::Interrupted);
            }
        });
        assert!(!ok);
        assert_eq!(slept, Duration::from_millis(1500));
        assert_eq!(
            lines.last().map(String::as_str),
            Some("bootbench-init: countdown interrupted: the run ends before its first step; nothing was written")
        );
    }

    /// No countdown asked (0), or no disk granted: no wait.
    #[test]
    fn no_countdown_without_a_grant_or_when_it_is_zero() {
        let t = TempDir::new("countdown");
        let p = plan(&t, r#","countdown":0"#);
        assert_eq!(bound(&p), Nanos(0));
        let mut slept = Duration::ZERO;
        let mut lines = Vec::new();
        assert!(run(&p, &Stop::new(), &mut |l| lines.push(l.to_string()), &mut |d| {
            slept += d
        }));
        assert_eq!(slept, Duration::ZERO);
        assert!(
            lines[0].ends_with("no countdown (destructive.countdown is 0)"),
            "{lines:?}"
        );
        let mut p = plan(&t, "");
        for tg in &mut p.targets {
            tg.grant = None;
        }
        assert_eq!(bound(&p), Nanos(0));
        let mut lines = Vec::new();
        assert!(run(&p, &Stop::new(), &mut |l| lines.push(l.to_string()), &mut |d| {
            slept += d
        }));
        assert!(lines.is_empty() && slept.is_zero());
    }
}
