//! The config's burn-in (`burn_in`, docs/burn-in-and-scans.md, "Burn-in"), after the surface
//! scan and before the benchmarks: every disk it selects (each one
//! `destructive` names) claimed for writing as a write test's disk is
//! (identity and contents checked on the descriptor that writes), then
//! burnt in with [`bench_core::passes::burnin`]; every disk at once, each on a
//! thread of its own, unless `parallel` is false ([`super::pass`]).
//! A disk the grant or the claim refuses gets a record saying why, and
//! nothing is written to it.
//!
//! A host-managed zoned disk (SMR, NVMe ZNS) is burnt in zone by zone
//! ([`bench_core::passes::burnin`]): the zones wholly inside the area,
//! but offline and read-only ones, from the zone report read through the
//! claimed descriptor; its sequential zones reset (BLKRESETZONE, through
//! the claim: [`DevTarget::reset_zones`]) before each pass and, unless
//! `zones_after` is `"full"`, after the last. A random burn-in is refused
//! there: its sequential zones take writes only at their write pointer.

use std::time::Duration;

use crate::results::metrics::LIVE;
use bench_core::device::zones::{Zone, ZoneCond, ZoneType, SECTOR_BYTES};
use bench_core::document::result::{BurnEndState, BurnIn, BurnOrder, ZonesAfter};
use bench_core::engine::runner::Stop;
use bench_core::io::{Access, OpenSpec, Target};
use bench_core::passes::burnin::{
    burn_in, not_run, record_zoned, BetweenHook, BurnHooks, BurnSpec, ZonePlan, ZoneSpan,
};
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
    /// The claimed disk, and a zoned disk's zones read through the claim.
    type Ready = (DevTarget, Option<ZonePlan>);
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
            // The zones as they are now, read-only (the sizes the run's
            // time bound and start line count); read again through the
            // claim before anything is written ([`Pass::ready`]).
            zones: crate::plan::host_managed(&plan.targets[ti].info).then(|| {
                let t = &plan.targets[ti].info;
                crate::disks::file::open(&t.path, false, false)
                    .map_err(|e| e.to_string())
                    .and_then(|f| crate::disks::zones::zones_of(t, &f))
                    .map_or_else(
                        |_| zone_plan(&[], (start, end), bp.zones_after),
                        |z| zone_plan(&z, (start, end), bp.zones_after),
                    )
            }),
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
        let zones = spec.zones.as_ref().map_or(String::new(), |z| {
            format!(", zone by zone over {} zones, each left {}", z.zones.len(), z.after)
        });
        format!(
            "bootbench-init: {path}: burn-in started ({} passes, {}{zones}: {}): {bytes} B written and read back \
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

    fn ready(plan: &mut Plan, ti: usize) -> Result<(DevTarget, Option<ZonePlan>), String> {
        let zoned = crate::plan::host_managed(&plan.targets[ti].info);
        let Some(bp) = plan.burn_in.as_ref() else {
            return Err("no burn-in in the plan".to_string());
        };
        if zoned && bp.order == BurnOrder::Random {
            return Err(HOST_MANAGED_RANDOM.to_string());
        }
        let (after, area) = (bp.zones_after, bp.pass.area(plan.targets[ti].info.size_bytes));
        let target = claim(plan, ti)?;
        if !zoned {
            return Ok((target, None));
        }
        let area = area.map_err(|e| e.to_string())?;
        let zones = crate::disks::zones::zones_of(&plan.targets[ti].info, target.file())
            .map_err(|e| format!("its zones could not be read, so none is written: {e}"))?;
        let zp = zone_plan(&zones, area, after);
        if zp.zones.is_empty() {
            return Err(format!(
                "no zone of its area (bytes {}..{}) can be burnt in: each is offline, read-only or not wholly inside it",
                area.0, area.1
            ));
        }
        Ok((target, Some(zp)))
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

    fn job(plan: &Plan, ti: usize, _: &BurnPlan, mut spec: BurnSpec, (target, zones): Self::Ready) -> Job<Burnt> {
        let path = plan.targets[ti].info.path.clone();
        if zones.is_some() {
            spec.zones = zones;
        }
        Box::new(move |stop: &Stop, f: &mut dyn FnMut(f64)| burn_disk(&path, &target, &spec, stop, f, &mut |_| {}))
    }

    fn finish(plan: &mut Plan, ti: usize, burnt: Burnt, why: Option<&str>, progress: &mut dyn FnMut(&str)) {
        finish(plan, ti, burnt, why, progress);
    }
}

/// Why a random burn-in is not run on a host-managed zoned disk.
pub const HOST_MANAGED_RANDOM: &str = "a random burn-in is not run on a host-managed zoned disk (SMR or NVMe ZNS): its sequential zones take writes only at their write pointer; \"mode\": \"sequential\" burns it in zone by zone";

/// The zones of a host-managed disk's `zones` a burn-in of the area
/// `start..end` (bytes) goes through: each conventional or
/// sequential-write-required zone wholly inside it that is neither offline
/// nor read-only, up to its capacity; the others of the area are counted
/// as skipped.
pub fn zone_plan(zones: &[Zone], (start, end): (u64, u64), after: ZonesAfter) -> ZonePlan {
    let mut plan = ZonePlan {
        zones: Vec::new(),
        skipped: 0,
        after,
    };
    for z in zones {
        let (zs, ze) = (z.start * SECTOR_BYTES, (z.start + z.len) * SECTOR_BYTES);
        if ze <= start || zs >= end {
            continue;
        }
        let kind = match z.kind {
            ZoneType::Conventional => Some(false),
            ZoneType::SeqWriteRequired => Some(true),
            _ => None,
        };
        let usable = !matches!(z.cond, ZoneCond::Offline | ZoneCond::ReadOnly) && zs >= start && ze <= end;
        match kind {
            Some(sequential) if usable && z.capacity > 0 => plan.zones.push(ZoneSpan {
                start: zs,
                size: ze - zs,
                capacity: z.capacity.min(z.len) * SECTOR_BYTES,
                sequential,
            }),
            _ => plan.skipped += 1,
        }
    }
    plan
}

/// A burn-in's hooks on a claimed disk: zone resets through the claim.
struct Claimed<'a> {
    target: &'a DevTarget,
    between: BetweenHook<'a>,
}

impl BurnHooks for Claimed<'_> {
    fn between(&mut self, pass: usize) {
        self.between.between(pass);
    }

    fn reset_zone(&mut self, start: u64, size: u64) -> Result<(), i32> {
        self.target
            .reset_zones(start, size)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
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
            &mut Claimed { target, between },
        ) {
            Ok(out) => record_zoned(spec, &out.passes, out.elapsed, out.end, out.resets),
            Err(e) => match crate::safety::refused_write(path, e.errno, e.req.offset) {
                Some(r) => {
                    let why = r.to_string();
                    refused = Some(why.clone());
                    not_run(spec, why)
                }
                // A zone reset is the one failure outside any request.
                None if e.req.len == 0 => not_run(
                    spec,
                    format!(
                        "{path}: resetting the zone at byte {} failed: errno {}",
                        e.req.offset, e.errno
                    ),
                ),
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
            zones: None,
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
            zones: None,
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

    /// A zone of 8 sectors (4 KiB) at zone index `k`.
    fn zone(k: u64, kind: ZoneType, cond: ZoneCond, capacity: u64) -> Zone {
        Zone {
            start: k * 8,
            len: 8,
            wp: k * 8,
            kind,
            cond,
            non_seq: false,
            reset: false,
            capacity,
        }
    }

    /// The zones a burn-in of an area goes through: conventional and
    /// sequential-write-required ones wholly inside it, up to their
    /// capacity; offline, read-only and partly outside zones skipped and
    /// counted; zones outside the area neither.
    #[test]
    fn a_zone_plan_takes_the_writable_zones_wholly_inside_the_area() {
        use ZoneCond::{Empty, Full, NotWp, Offline, ReadOnly};
        use ZoneType::{Conventional, SeqWriteRequired};
        let zones = [
            zone(0, Conventional, NotWp, 8),
            zone(1, SeqWriteRequired, Empty, 6),
            zone(2, SeqWriteRequired, Offline, 0),
            zone(3, SeqWriteRequired, ReadOnly, 6),
            zone(4, SeqWriteRequired, Full, 6),
            zone(5, SeqWriteRequired, Empty, 6),
            zone(6, SeqWriteRequired, Empty, 6),
        ];
        // From zone 0's start to the middle of zone 5.
        let p = zone_plan(&zones, (0, 5 * 4096 + 2048), ZonesAfter::Full);
        let spans: Vec<(u64, u64, u64, bool)> = p
            .zones
            .iter()
            .map(|z| (z.start, z.size, z.capacity, z.sequential))
            .collect();
        assert_eq!(
            spans,
            [
                (0, 4096, 4096, false),
                (4096, 4096, 3072, true),
                (4 * 4096, 4096, 3072, true)
            ]
        );
        assert_eq!((p.skipped, p.after), (3, ZonesAfter::Full), "zones 2, 3 and 5");
    }
}
