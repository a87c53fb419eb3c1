//! The config's burn-in (`burn_in`, docs/burn-in-and-scans.md, "Burn-in"), after the surface
//! scan and before the benchmarks: every disk it selects (each one
//! `destructive` names) claimed for writing as a write test's disk is
//! (identity and contents checked on the descriptor that writes), then
//! burnt in with [`bench_core::passes::burnin`]; every disk at once, each on a
//! thread of its own, unless `parallel` is false ([`super::pass`]).
//! A disk the grant or the claim refuses gets a record saying why, and
//! nothing is written to it.

use std::time::Duration;

use crate::results::metrics::LIVE;
use bench_core::document::result::{BurnEndState, BurnIn};
use bench_core::engine::runner::Stop;
use bench_core::io::{Access, OpenSpec, Target};
use bench_core::passes::burnin::{burn_in, not_run, record, BetweenHook, BurnSpec};
use bench_core::vocab::units::Nanos;

use super::engine::{DevTarget, MonoClock};
use super::pass::{claim, Job, Names, Pass};
use super::selftest::span;
use crate::plan::{BurnPlan, PassPlan, Plan};

/// What the kernel's lines during the burn-in are recorded as coming
/// during (`kernel_log[].test`).
pub const KERNEL_LOG_TEST: &str = "burn_in";

/// The burn-in, as the runner of whole-disk passes runs it: each disk
/// claimed for writing first.
#[derive(Clone, Copy, Debug)]
pub struct Burn;

impl Pass for Burn {
    type Plan = BurnPlan;
    type Spec = BurnSpec;
    type Ready = DevTarget;
    type Record = Burnt;
    const NAMES: Names = Names {
        what: "burn-in",
        max_time: "its time ran out (burn_in.max_time)",
        thread: "bootbench-burn",
        kernel_log_test: KERNEL_LOG_TEST,
    };

    fn plan(plan: &Plan) -> Option<&BurnPlan> {
        plan.burn_in.as_ref()
    }

    fn pass(p: &BurnPlan) -> &PassPlan {
        &p.pass
    }

    fn spec(plan: &Plan, bp: &BurnPlan, ti: usize, (start, end): (u64, u64)) -> BurnSpec {
        BurnSpec {
            start,
            end,
            chunk: bp.pass.bs,
            depth: bp.pass.iodepth,
            logical_block: plan.targets[ti].info.logical_block_size.max(512),
            retries: bp.retries,
            max_bad: bp.max_bad,
            order: bp.order,
            patterns: bp.patterns.clone(),
            loops: bp.loops,
            seed: plan.seed,
        }
    }

    fn planned(spec: &BurnSpec) -> u64 {
        spec.planned_bytes()
    }

    fn time(bp: &BurnPlan, spec: &BurnSpec) -> Nanos {
        bp.time_for(spec.planned_bytes())
    }

    fn start_line(path: &str, _: &BurnPlan, spec: &BurnSpec, time: Duration) -> String {
        let bytes = spec.planned_bytes();
        let passes = spec.passes();
        format!(
            "bootbench-init: {path}: burn-in started ({} passes, {}: {}): {bytes} B written and read back \
             ({:.1} GB, GB = 10^9) in requests of {} B, {} in flight; at most {}",
            passes.len(),
            spec.order,
            passes.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
            bytes as f64 / 1e9,
            spec.chunk,
            spec.depth,
            span(time)
        )
    }

    fn ready(plan: &mut Plan, ti: usize) -> Result<DevTarget, String> {
        claim(plan, ti)
    }

    fn refused(plan: &mut Plan, ti: usize, spec: &BurnSpec, why: String) {
        plan.targets[ti].info.burn_in = Some(not_run(spec, why));
    }

    fn failed(spec: &BurnSpec, why: String) -> Burnt {
        Burnt {
            rec: not_run(spec, why),
            wrote: true,
            refused: None,
        }
    }

    fn job(plan: &Plan, ti: usize, _: &BurnPlan, spec: BurnSpec, target: DevTarget) -> Job<Burnt> {
        let path = plan.targets[ti].info.path.clone();
        Box::new(move |stop: &Stop, f: &mut dyn FnMut(f64)| burn_disk(&path, &target, &spec, stop, f, &mut |_| {}))
    }

    fn finish(plan: &mut Plan, ti: usize, burnt: Burnt, why: Option<&str>, progress: &mut dyn FnMut(&str)) {
        finish(plan, ti, burnt, why, progress);
    }
}

/// What burning in one disk gave: its record, whether any write reached
/// it, and the refusal a write the kernel refused stands for (its
/// read-only flag set after the claim: [`crate::safety::refused_write`]).
#[derive(Debug)]
pub struct Burnt {
    /// The disk's record.
    pub rec: BurnIn,
    /// True if a write was submitted to the disk.
    pub wrote: bool,
    /// Why the disk may not be written after all, if the kernel refused.
    pub refused: Option<String>,
}

/// Burn in `spec` on `target` (claimed for writing), with `between`
/// between each sequential pass's writes and reads.
pub fn burn_disk(
    path: &str,
    target: &DevTarget,
    spec: &BurnSpec,
    stop: &Stop,
    progress: &mut dyn FnMut(f64),
    between: BetweenHook<'_>,
) -> Burnt {
    let mut refused = None;
    let rec = match target.open(&OpenSpec::plain(
        Access::Direct,
        true,
        spec.depth,
        spec.chunk,
        spec.seed,
    )) {
        Err(e) => not_run(
            spec,
            format!("{path}: opening a queue for writing failed: errno {}", e.errno),
        ),
        Ok(mut q) => match burn_in(
            spec,
            &mut q,
            &MonoClock::new(),
            stop,
            &mut |done, f| {
                LIVE.found(path, KERNEL_LOG_TEST, [f.unwritable, f.unreadable, f.mismatched]);
                progress(done);
            },
            between,
        ) {
            Ok(out) => record(spec, &out.passes, out.elapsed, out.end),
            Err(e) => match crate::safety::refused_write(path, e.errno, e.req.offset) {
                Some(r) => {
                    let why = r.to_string();
                    refused = Some(why.clone());
                    not_run(spec, why)
                }
                None => not_run(
                    spec,
                    format!("{path}: the queue failed at offset {}: errno {}", e.req.offset, e.errno),
                ),
            },
        },
    };
    Burnt {
        rec,
        wrote: target.wrote(),
        refused,
    }
}

/// Record disk `ti`'s burn-in (asked to stop `why`, if it was), and say it.
/// A disk whose writes the kernel refused loses its grant, as a refused
/// claim's does.
fn finish(plan: &mut Plan, ti: usize, burnt: Burnt, why: Option<&str>, progress: &mut dyn FnMut(&str)) {
    let Burnt {
        mut rec,
        wrote,
        refused,
    } = burnt;
    if let (BurnEndState::Stopped, Some(why)) = (rec.end, why) {
        rec.error = Some(why.to_string());
    }
    if wrote {
        plan.mark_written(ti);
    }
    if let Some(r) = refused {
        crate::plan::withdraw_writes(plan, ti, &r);
    }
    let (done, planned) = rec.done_and_planned();
    let passes_done = rec.passes.iter().filter(|p| p.end == BurnEndState::Done).count();
    progress(&format!(
        "bootbench-init: {}: burn-in {}: {passes_done} of {} passes done, {done} of {planned} B written and read back in {}; \
         {} unwritable, {} unreadable and {} mismatched blocks{}",
        plan.targets[ti].info.path,
        rec.end,
        rec.passes.len(),
        span(Duration::from_nanos(rec.elapsed_ns)),
        rec.unwritable_lbas.len(),
        rec.unreadable_lbas.len(),
        rec.mismatched_lbas.len(),
        rec.error.as_ref().map_or(String::new(), |e| format!(" ({e})"))
    ));
    plan.targets[ti].info.burn_in = Some(rec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::WritePermit;
    use bench_core::document::result::BurnOrder;
    use bench_core::passes::burnin::BADBLOCKS_PATTERNS;
    use std::os::unix::fs::{FileExt, OpenOptionsExt};

    /// A granted loop device burnt in through the real engine: a second
    /// writer changes one byte between the second pass's writes and its
    /// reads (with O_DIRECT, past any cache), and that pass, only that
    /// one, reports the block by its LBA; the others verify whole.
    #[test]
    fn a_byte_changed_by_a_second_writer_is_reported_by_lba() {
        const SIZE: usize = 4 << 20;
        let Some(lo) = crate::testutil::Loop::new("burn-second-writer", &vec![0u8; SIZE]) else {
            return;
        };
        let target = DevTarget::open(&lo.dev, Some(WritePermit::for_tests(&lo.dev))).expect("open");
        let spec = BurnSpec {
            start: 0,
            end: SIZE as u64,
            chunk: 256 << 10,
            depth: 4,
            logical_block: 512,
            retries: 1,
            max_bad: 100,
            order: BurnOrder::Sequential,
            patterns: BADBLOCKS_PATTERNS.to_vec(),
            loops: 1,
            seed: 7,
        };
        let at = 3_000_000u64;
        let Burnt { rec, wrote, refused } =
            burn_disk(&lo.dev, &target, &spec, &Stop::new(), &mut |_| {}, &mut |pass| {
                if pass == 1 {
                    let f = std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .custom_flags(libc::O_DIRECT)
                        .open(&lo.dev)
                        .expect("a second writer");
                    let block = at / 4096 * 4096;
                    let mut buf = crate::sys::buf::AlignedBuf::new(4096).expect("a buffer");
                    let b = &mut buf.as_mut_slice()[..4096];
                    f.read_exact_at(b, block).expect("read");
                    b[usize::try_from(at - block).unwrap()] ^= 0x80;
                    f.write_all_at(b, block).expect("write");
                }
            });
        assert!(wrote && refused.is_none());
        assert_eq!(rec.end, BurnEndState::Done, "{rec:?}");
        let mism: Vec<&Vec<u64>> = rec.passes.iter().map(|p| &p.mismatched_lbas).collect();
        assert_eq!(mism, [&vec![], &vec![at / 512], &vec![], &vec![]]);
        assert!(rec
            .passes
            .iter()
            .all(|p| p.verified_bytes == SIZE as u64 && p.end == BurnEndState::Done));
        assert_eq!(rec.mismatched_lbas, [at / 512]);
        let data = std::fs::read(&lo.files[0]).expect("backing file");
        assert!(data.iter().all(|&b| b == 0), "the last pass wrote 0x00 everywhere");
    }

    /// A disk the kernel holds read-only after its claim (`blockdev
    /// --setro` between the claim and the burn-in): the first write is
    /// refused with EPERM, the burn-in ends with the refusal, not with
    /// unwritable blocks, and nothing is narrowed or written.
    #[test]
    fn a_disk_set_read_only_after_its_claim_is_a_refusal_not_bad_blocks() {
        const SIZE: usize = 2 << 20;
        let Some(lo) = crate::testutil::Loop::new("burn-setro", &vec![0u8; SIZE]) else {
            return;
        };
        let target = DevTarget::open(&lo.dev, Some(WritePermit::for_tests(&lo.dev))).expect("open");
        let ro = std::process::Command::new("blockdev")
            .args(["--setro", &lo.dev])
            .status();
        assert!(ro.is_ok_and(|s| s.success()), "blockdev --setro {}", lo.dev);
        let spec = BurnSpec {
            start: 0,
            end: SIZE as u64,
            chunk: 256 << 10,
            depth: 4,
            logical_block: 512,
            retries: 1,
            max_bad: 1000,
            order: BurnOrder::Sequential,
            patterns: BADBLOCKS_PATTERNS.to_vec(),
            loops: 1,
            seed: 7,
        };
        let Burnt { rec, wrote, refused } = burn_disk(&lo.dev, &target, &spec, &Stop::new(), &mut |_| {}, &mut |_| {});
        let _ = std::process::Command::new("blockdev")
            .args(["--setrw", &lo.dev])
            .status();
        let why = refused.expect("a refusal");
        assert!(
            why.contains(&format!("writes refused: {} is read-only", lo.dev)) && why.contains("EPERM"),
            "{why}"
        );
        assert_eq!(rec.end, BurnEndState::Error, "{rec:?}");
        assert_eq!(rec.error.as_deref(), Some(why.as_str()));
        assert!(
            rec.unwritable_lbas.is_empty() && rec.unreadable_lbas.is_empty(),
            "{rec:?}"
        );
        assert!(wrote, "a write was asked for (the mark is set when one is submitted)");
        let data = std::fs::read(&lo.files[0]).expect("backing file");
        assert!(data.iter().all(|&b| b == 0), "the disk is as it was");
    }
}
