//! The config's preconditioning (`precondition`, README
//! "Preconditioning"), after the burn-in and before the benchmarks: every
//! disk it selects (each one `destructive` names) claimed for writing as a
//! burn-in's is, then filled and driven to steady state with
//! [`bench_core::passes::steady`]; every disk at once unless `parallel` is false
//! ([`super::pass`]). A disk the grant or the claim refuses gets a
//! record saying why, and nothing is written to it.

use std::time::Duration;

use bench_core::document::result::{Precondition as PreconditionRecord, PreconditionEnd};
use bench_core::engine::runner::Stop;
use bench_core::io::{Access, OpenSpec, Target};
use bench_core::passes::steady::{not_run, precondition, record, PreconditionSpec};
use bench_core::vocab::units::Nanos;

use super::engine::{DevTarget, MonoClock};
use super::pass::{claim, Job, Names, Pass};
use super::selftest::span;
use crate::plan::{PassPlan, Plan, PreconditionPlan};

/// Why preconditioning is not run on a host-managed zoned disk.
pub const HOST_MANAGED: &str = "not run on a host-managed zoned disk (SMR or NVMe ZNS): preconditioning writes at random, and its sequential zones take writes only at their write pointer";

/// What the kernel's lines during preconditioning are recorded as coming
/// during (`kernel_log[].test`).
pub const KERNEL_LOG_TEST: &str = "precondition";

/// Preconditioning, as the runner of whole-disk passes runs it: each disk
/// claimed for writing first, purged first when the plan asks.
#[derive(Clone, Copy, Debug)]
pub struct Precondition;

impl Pass for Precondition {
    type Plan = PreconditionPlan;
    type Spec = PreconditionSpec;
    type Ready = DevTarget;
    type Record = (PreconditionRecord, bool);
    const NAMES: Names = Names {
        what: "preconditioning",
        max_time: "its time ran out",
        thread: "bootbench-precond",
        kernel_log_test: KERNEL_LOG_TEST,
    };

    fn plan(plan: &Plan) -> Option<&PreconditionPlan> {
        plan.precondition.as_ref()
    }

    fn pass(p: &PreconditionPlan) -> &PassPlan {
        &p.pass
    }

    fn spec(plan: &Plan, pp: &PreconditionPlan, ti: usize, (start, end): (u64, u64)) -> PreconditionSpec {
        PreconditionSpec {
            start,
            end,
            fill: pp.fill,
            workload: pp.workload(),
            round: pp.round,
            max_rounds: pp.max_rounds,
            window: pp.window,
            range_pct: pp.range_pct,
            slope_pct: pp.slope_pct,
            seed: plan.seed,
            logical_block: plan.targets[ti].info.logical_block_size.max(512),
        }
    }

    /// Nothing in bytes: it counts rounds.
    fn planned(_: &PreconditionSpec) -> u64 {
        0
    }

    fn time(pp: &PreconditionPlan, spec: &PreconditionSpec) -> Nanos {
        pp.time_for(spec.end - spec.start)
    }

    fn start_line(path: &str, pp: &PreconditionPlan, spec: &PreconditionSpec, time: Duration) -> String {
        let wl = &spec.workload;
        format!(
            "bootbench-init: {path}: preconditioning started: {}{}{} B {} writes, {} in flight, in rounds of {} until \
             the last {} are steady (within {}% and a fitted slope within {}% of their mean), at most {} rounds; at most {}",
            pp.purge.map_or(String::new(), |p| format!(
                "the disk purged first ({}, its own erase command), then ",
                p.map_or("auto", |m| m.name())
            )),
            if spec.fill {
                "the area written twice in 128 KiB writes, then "
            } else {
                ""
            },
            wl.bs,
            if wl.random { "random" } else { "sequential" },
            wl.depth,
            span(Duration::from_nanos(spec.round.0)),
            spec.window,
            spec.range_pct,
            spec.slope_pct,
            spec.max_rounds,
            span(time)
        )
    }

    /// A host-managed zoned disk is refused: preconditioning writes at
    /// random, which its sequential zones refuse.
    fn ready(plan: &mut Plan, ti: usize) -> Result<DevTarget, String> {
        if crate::plan::host_managed(&plan.targets[ti].info) {
            return Err(HOST_MANAGED.to_string());
        }
        claim(plan, ti)
    }

    fn refused(plan: &mut Plan, ti: usize, spec: &PreconditionSpec, why: String) {
        plan.targets[ti].info.precondition = Some(not_run(spec, why));
    }

    fn failed(spec: &PreconditionSpec, why: String) -> (PreconditionRecord, bool) {
        (not_run(spec, why), true)
    }

    fn job(
        plan: &Plan,
        ti: usize,
        pp: &PreconditionPlan,
        spec: PreconditionSpec,
        target: DevTarget,
    ) -> Job<(PreconditionRecord, bool)> {
        let path = plan.targets[ti].info.path.clone();
        let ask = pp.purge.map(|asked| PurgeAsk {
            asked,
            support: plan.targets[ti].info.erase_support.clone(),
        });
        Box::new(move |stop: &Stop, f: &mut dyn FnMut(f64)| {
            let Some(ask) = ask else {
                return precondition_disk(&path, &target, &spec, stop, f);
            };
            // The purge first (PTS: before the fill); preconditioning
            // only once it completed.
            let purge = purge_disk(&target, &ask, stop, f);
            let (mut rec, wrote) = if purge.done {
                precondition_disk(&path, &target, &spec, stop, f)
            } else {
                let why = format!(
                    "not run: the purge ({}) did not complete: {}",
                    purge.asked,
                    purge.error.as_deref().unwrap_or("")
                );
                (not_run(&spec, why), target.wrote())
            };
            rec.purge = Some(purge);
            (rec, wrote)
        })
    }

    fn finish(
        plan: &mut Plan,
        ti: usize,
        (rec, wrote): (PreconditionRecord, bool),
        why: Option<&str>,
        progress: &mut dyn FnMut(&str),
    ) {
        finish(plan, ti, rec, wrote, why, progress);
    }
}

/// What a disk's purge stands on: what the config asked (`None`: `auto`),
/// the disk's erase support as read before the run.
#[derive(Clone, Debug)]
pub struct PurgeAsk {
    /// The method asked, or `auto`.
    pub asked: Option<bench_core::document::result::EraseMethod>,
    /// The disk's erase support (`None`: never read: a file, a loop device).
    pub support: Option<bench_core::document::result::EraseSupport>,
}

/// Purge `target` as `ask` says, before preconditioning: the record.
/// Refused (nothing sent) when the disk's support does not allow it
/// ([`bench_core::device::erase::choose`]).
pub fn purge_disk(
    target: &DevTarget,
    ask: &PurgeAsk,
    stop: &Stop,
    progress: &mut dyn FnMut(f64),
) -> bench_core::document::result::Purge {
    let asked = ask.asked.map_or_else(|| "auto".to_string(), |m| m.name().to_string());
    let started = std::time::Instant::now();
    let chosen = match &ask.support {
        None => Err("the disk's erase support is unknown (not an ATA or NVMe disk): nothing is erased".to_string()),
        Some(s) => {
            let namespaces = if s.source == "nvme_identify_controller" {
                crate::sys::nvme::identify(target.file(), crate::sys::nvme::CNS_ACTIVE_NS_LIST, 0)
                    .map(|l| bench_core::device::capacity::nvme_ns_list(&l[..]).len())
                    .unwrap_or(0)
            } else {
                1
            };
            bench_core::device::erase::choose(ask.asked, s, namespaces)
        }
    };
    let (method, result) = match (chosen, &ask.support) {
        (Ok(m), Some(support)) => (Some(m), super::purge::purge(target, m, support, stop, progress)),
        (Err(why), _) => (None, Err(why)),
        (Ok(_), None) => (None, Err("the disk's erase support is unknown".to_string())),
    };
    bench_core::document::result::Purge {
        asked,
        method,
        done: result.is_ok(),
        elapsed_ns: u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX),
        error: result.err(),
    }
}

/// Precondition `spec` on `target` (claimed for writing): the record, and
/// whether any write reached the disk.
pub fn precondition_disk(
    path: &str,
    target: &DevTarget,
    spec: &PreconditionSpec,
    stop: &Stop,
    progress: &mut dyn FnMut(f64),
) -> (PreconditionRecord, bool) {
    let wl = &spec.workload;
    let max_len = wl.bs.max(bench_core::passes::steady::FILL_BS);
    let rec = match target.open(&OpenSpec::plain(Access::Direct, true, wl.depth, max_len, spec.seed)) {
        Err(e) => not_run(
            spec,
            format!("{path}: opening a queue for writing failed: errno {}", e.errno),
        ),
        Ok(mut q) => {
            let rounds = f64::from(spec.max_rounds.max(1));
            match precondition(spec, &mut q, &MonoClock::new(), stop, &mut |i, _| {
                #[allow(clippy::cast_precision_loss)] // a few rounds
                progress(i as f64 / rounds);
            }) {
                Ok(out) => record(spec, &out),
                Err(e) => not_run(
                    spec,
                    format!("{path}: the queue failed at offset {}: errno {}", e.req.offset, e.errno),
                ),
            }
        }
    };
    (rec, target.wrote())
}

/// Record disk `ti`'s preconditioning (asked to stop `why`, if it was),
/// and say it.
fn finish(
    plan: &mut Plan,
    ti: usize,
    mut rec: PreconditionRecord,
    wrote: bool,
    why: Option<&str>,
    progress: &mut dyn FnMut(&str),
) {
    if let (PreconditionEnd::Stopped, Some(why)) = (rec.end, why) {
        rec.error = Some(why.to_string());
    }
    if wrote {
        plan.mark_written(ti);
    }
    let unit = if rec.figure == "write_iops" { "IOPS" } else { "MB/s" };
    let scale = if unit == "IOPS" { 1.0 } else { 1e6 };
    let figures: Vec<String> = rec.rounds.iter().map(|r| format!("{:.0}", r.value / scale)).collect();
    if let Some(p) = &rec.purge {
        progress(&format!(
            "bootbench-init: {}: purge ({}): {}{} after {:.1} s",
            plan.targets[ti].info.path,
            p.asked,
            p.method.map_or("none chosen".to_string(), |m| m.name().to_string()),
            if p.done {
                " done".to_string()
            } else {
                format!(" not done: {}", p.error.as_deref().unwrap_or(""))
            },
            std::time::Duration::from_nanos(p.elapsed_ns).as_secs_f64()
        ));
    }
    progress(&format!(
        "bootbench-init: {}: preconditioning {}{}: {} rounds ({unit}: {}){}",
        plan.targets[ti].info.path,
        rec.end,
        rec.steady_round.map_or(String::new(), |r| format!(" at round {r}")),
        rec.rounds.len(),
        figures.join(", "),
        rec.error.as_ref().map_or(String::new(), |e| format!(" ({e})"))
    ));
    plan.targets[ti].info.precondition = Some(rec);
}
