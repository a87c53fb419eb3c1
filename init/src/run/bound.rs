//! The run's bound: the longest a run of the plan may take (every test at
//! its deadline and a grace, each array or layer's allowance, the
//! countdown, the self-test and the whole-disk passes), and its line on
//! the console at the start of a run.

use bench_core::spec::Step;
use bench_core::vocab::units::Nanos;

use super::pass::{self, Pass};
use super::{burnin, countdown, engine, precondition, scan, selftest, stacks};
use crate::plan::{Action, Plan};
use bench_core::engine::plan::deadline;

/// Allowance in the run bound for assembling, testing overhead and tearing
/// down one array or layer (their tests count at their deadlines).
pub const STACK_ALLOWANCE: Nanos = Nanos(60_000_000_000);

/// A test's deadline: the config's `test_deadline` (for testing), else
/// [`bench_core::engine::plan::deadline`] of its steps.
pub fn test_deadline(plan: &Plan, steps: &[Step]) -> Nanos {
    plan.test_deadline.unwrap_or_else(|| deadline(steps))
}

/// The most a test can take: its deadline, then the grace its jobs get to
/// return before they are abandoned.
pub(super) fn test_bound(plan: &Plan, steps: &[Step]) -> Nanos {
    let grace = Nanos(u64::try_from(engine::GRACE.as_nanos()).unwrap_or(u64::MAX));
    test_deadline(plan, steps) + grace
}

/// The bound of a whole run: every test that runs at its deadline plus the
/// grace; [`STACK_ALLOWANCE`] per array or layer; the all-at-once run, if
/// asked for, at the longest bound of each test it runs together; the
/// self-tests' longest wait and their commands ([`selftest::bound`]).
/// With `parallel`, the disks' tests count as the disk whose tests take
/// longest, plus the graces its thread gets.
pub fn run_bound(plan: &Plan) -> Nanos {
    let mut sum = 0u64;
    let mut per_disk: Vec<(usize, u64)> = Vec::new();
    let mut together: Vec<(&str, u64)> = Vec::new();
    for it in &plan.items {
        let Action::Run(steps) = &it.action else { continue };
        let b = test_bound(plan, steps).0;
        if plan.parallel && plan.is_disk(it.target) {
            match per_disk.iter_mut().find(|(t, _)| *t == it.target) {
                Some((_, s)) => *s = s.saturating_add(b),
                None => per_disk.push((it.target, b)),
            }
        } else {
            sum = sum.saturating_add(b);
        }
        if plan.all_at_once && plan.is_disk(it.target) {
            match together.iter_mut().find(|(n, _)| *n == it.spec.name) {
                Some((_, m)) => *m = (*m).max(b),
                None => together.push((&it.spec.name, b)),
            }
        }
    }
    if let Some(longest) = per_disk.iter().map(|(_, s)| *s).max() {
        // The driver's time for the disk is a grace past its own, and it
        // waits a grace more before it abandons the disk's thread.
        let grace = u64::try_from(engine::GRACE.as_nanos()).unwrap_or(u64::MAX);
        sum = sum.saturating_add(pass::bound_of(std::iter::once(longest.saturating_add(grace)), true).0);
    }
    let stacks = u64::try_from(plan.stacks.len()).unwrap_or(u64::MAX);
    sum = sum.saturating_add(stacks.saturating_mul(STACK_ALLOWANCE.0));
    // With scaling, each test runs together at each width, then on all.
    let runs = if plan.scaling {
        let disks = (0..plan.targets.len()).filter(|t| plan.is_disk(*t)).count();
        u64::try_from(stacks::scaling_widths(disks).len()).unwrap_or(u64::MAX) + 1
    } else {
        1
    };
    for (_, b) in together {
        sum = sum.saturating_add(b.saturating_mul(runs));
    }
    Nanos(
        sum.saturating_add(countdown::bound(plan).0)
            .saturating_add(selftest::bound(plan).0)
            .saturating_add(pass::bound::<scan::Scan>(plan).0)
            .saturating_add(pass::bound::<burnin::Burn>(plan).0)
            .saturating_add(pass::bound::<precondition::Precondition>(plan).0),
    )
}

/// The console line that states the run's bound, at the start of a run.
pub(super) fn bound_line(plan: &Plan, bound: Nanos) -> String {
    let tests = plan
        .items
        .iter()
        .filter(|it| matches!(it.action, Action::Run(_)))
        .count();
    let how = if plan.test_deadline.is_some() {
        "the config's test_deadline (for testing)"
    } else {
        "each from its plan"
    };
    format!(
        "bootbench-init: run bound: at most {} s ({tests} test(s) at their deadlines, {how}, plus {} s grace each; \
         {} s per array or layer{}{}{}); a test past its deadline ends as timeout",
        bound.0.div_ceil(1_000_000_000),
        engine::GRACE.as_secs(),
        STACK_ALLOWANCE.0 / 1_000_000_000,
        if plan.all_at_once { "; the all-at-once run" } else { "" },
        plan.self_test.as_ref().map_or(String::new(), |s| format!(
            "; the {} self-test: at most {} s",
            s.kind,
            selftest::bound(plan).0.div_ceil(1_000_000_000)
        )),
        [
            ("countdown", countdown::bound(plan)),
            (scan::Scan::NAMES.what, pass::bound::<scan::Scan>(plan)),
            (burnin::Burn::NAMES.what, pass::bound::<burnin::Burn>(plan)),
            (
                precondition::Precondition::NAMES.what,
                pass::bound::<precondition::Precondition>(plan)
            ),
        ]
        .iter()
        .filter(|(_, b)| b.0 > 0)
        .map(|(what, b)| format!("; the {what}: at most {} s", b.0.div_ceil(1_000_000_000)))
        .collect::<String>()
    )
}
