//! How long a test may take before it is stopped: a budget for each step
//! at slow but working rates, and the test's deadline from them.

use crate::spec::Step;
use crate::vocab::units::{Nanos, MIB};

/// The slowest transfer a byte-bound step is allowed before its test is
/// past its deadline: 1 MiB/s per job (an old USB stick still does that).
pub const DEADLINE_MIN_RATE: u64 = MIB;

/// The longest average time per request of a count-bound step: 100 ms
/// (a full-stroke seek plus a retry on a slow disk).
pub const DEADLINE_MAX_REQUEST: Nanos = Nanos(100_000_000);

/// Added to every test's deadline: opening, preparation (cache drops), the
/// first request's wake-up of a sleeping disk.
pub const DEADLINE_SLACK: Nanos = Nanos(30_000_000_000);

/// The most time a step may take on a working device: its ramp and its
/// steady-state wait (`ss_max`, [`Step::steady`]) plus the
/// soonest of its bounds, each taken at the slow limits above (a runtime
/// bound as it is, or its `min_ios` requests at those limits if longer,
/// and at least one whole batch of a `runtime_batch` step, each request at
/// 1 MiB/s plus 100 ms for its flush). Twice that for a verifying step (the
/// read-back reads what was written). Plus its settle time. That for each
/// of its passes, warm-up included; plus its fill (its range at the slow
/// rate) and its pause.
pub fn step_budget(step: &Step) -> Nanos {
    let l = &step.limit;
    // A runtime bound lasts at least `min_ios` requests, each at the slow
    // limits (the longest request time, or its bytes at the slowest rate).
    let slowest_request = u64::try_from(u128::from(step.bs) * 1_000_000_000 / u128::from(DEADLINE_MIN_RATE))
        .unwrap_or(u64::MAX)
        .max(DEADLINE_MAX_REQUEST.0);
    let batch = step.runtime_batch.map_or(0, |b| {
        let one =
            u128::from(step.bs) * 1_000_000_000 / u128::from(DEADLINE_MIN_RATE) + u128::from(DEADLINE_MAX_REQUEST.0);
        u64::try_from(u128::from(b) * one).unwrap_or(u64::MAX)
    });
    let by_time = l
        .runtime
        .map(|t| t.0.max(l.min_ios.saturating_mul(slowest_request)).max(batch));
    let by_bytes = l
        .bytes
        .map(|b| u64::try_from(u128::from(b) * 1_000_000_000 / u128::from(DEADLINE_MIN_RATE)).unwrap_or(u64::MAX));
    let by_ios = l.ios.map(|n| n.saturating_mul(DEADLINE_MAX_REQUEST.0));
    let bound = [by_time, by_bytes, by_ios].into_iter().flatten().min().unwrap_or(0);
    // A steady-state wait lasts at most its `ss_max`.
    let wait = step.steady.map_or(0, |s| s.ss_max.0);
    let run = step.ramp.0.saturating_add(wait).saturating_add(bound);
    let run = if step.verify { run.saturating_mul(2) } else { run };
    // hdparm's settle (sync and sleep) before the timed part.
    let pass = run.saturating_add(step.settle.0);
    let passes = u64::from(step.passes.max(1)).saturating_add(u64::from(step.warmup));
    let fill = if step.fill {
        let (start, end) = crate::spec::step_range(step);
        u64::try_from(u128::from(end.saturating_sub(start)) * 1_000_000_000 / u128::from(DEADLINE_MIN_RATE))
            .unwrap_or(u64::MAX)
    } else {
        0
    };
    Nanos(
        pass.saturating_mul(passes)
            .saturating_add(fill)
            .saturating_add(step.pause.0),
    )
}

/// A test's deadline, from its plan: twice the sum of its steps' budgets
/// ([`step_budget`]) plus [`DEADLINE_SLACK`]. A test still running then is
/// stopped with status `timeout`: a device that slow, or hung, is reported,
/// not waited for.
pub fn deadline(steps: &[Step]) -> Nanos {
    let sum = steps.iter().fold(0u64, |a, s| a.saturating_add(step_budget(s).0));
    Nanos(sum.saturating_mul(2).saturating_add(DEADLINE_SLACK.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::base_step;
    use crate::engine::plan::expand;
    use crate::engine::plan::tests::HDD;
    use crate::io::Op;
    use crate::spec::{Limit, Params, Pattern};

    /// A test's deadline: each step at the slow limits (runtime as given,
    /// bytes at 1 MiB/s, requests at 100 ms), the soonest bound, ramp added,
    /// verify doubled; then twice the sum plus 30 s.
    #[test]
    fn deadline_from_the_plan() {
        let s = |limit: Limit, ramp: u64, verify: bool| {
            let mut st = base_step(
                "main".into(),
                &Params::defaults(),
                Pattern::Fixed {
                    op: Op::Read,
                    offset: 0,
                },
                4096,
                limit,
                0,
            );
            (st.ramp, st.verify) = (Nanos::from_secs(ramp), verify);
            st
        };
        let lim = |runtime: Option<u64>, bytes: Option<u64>, ios: Option<u64>| Limit {
            runtime: runtime.map(Nanos::from_secs),
            bytes,
            ios,
            min_ios: 0,
        };
        let cases = [
            (s(lim(Some(5), None, None), 0, false), 5),
            (s(lim(Some(5), None, None), 2, false), 7),
            (s(lim(None, Some(64 * MIB), None), 0, false), 64),
            (s(lim(Some(5), Some(64 * MIB), None), 0, false), 5),
            (s(lim(Some(500), Some(64 * MIB), None), 1, false), 65),
            (s(lim(None, None, Some(300)), 0, false), 30),
            (s(lim(Some(5), None, None), 1, true), 12),
            // min_ios 100 of 4 KiB at 100 ms each outlasts a 5 s runtime.
            (
                s(
                    Limit {
                        min_ios: 100,
                        ..lim(Some(5), None, None)
                    },
                    0,
                    false,
                ),
                10,
            ),
        ];
        for (i, (st, secs)) in cases.iter().enumerate() {
            assert_eq!(step_budget(st), Nanos::from_secs(*secs), "case {i}");
        }
        // Passes (warm-up included) multiply a step's budget; its fill
        // (the range at 1 MiB/s) and its pause add to it.
        let mut p = s(lim(Some(5), None, None), 1, false);
        (p.passes, p.warmup) = (5, 1);
        assert_eq!(step_budget(&p), Nanos::from_secs(6 * 6));
        p.pause = Nanos::from_secs(5);
        assert_eq!(step_budget(&p), Nanos::from_secs(6 * 6 + 5));
        (p.fill, p.bs) = (true, 1 << 20);
        p.pattern = Pattern::Seq {
            op: Op::Read,
            start: 0,
            end: 64 * MIB,
        };
        assert_eq!(step_budget(&p), Nanos::from_secs(6 * 6 + 5 + 64));
        assert_eq!(deadline(&[]), DEADLINE_SLACK);
        assert_eq!(
            deadline(&[cases[0].0.clone(), cases[2].0.clone()]),
            Nanos::from_secs(2 * (5 + 64) + 30)
        );
        // Every workload of the standard profile gets a finite deadline
        // above its nominal time.
        for t in crate::engine::profile::profile("standard").unwrap() {
            let steps = expand(&t, &HDD).unwrap();
            let d = deadline(&steps);
            assert!(d > DEADLINE_SLACK && d.0 < u64::MAX / 2, "{}: {d:?}", t.name);
        }
    }
}
