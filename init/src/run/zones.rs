//! A run's zoned disks (SMR, NVMe ZNS): their zones said when the run
//! starts, as found with the disk ([`crate::disks::zones::found`]), and
//! read again after its last test, so that the document holds both and the
//! acceptance rules can tell a zone that went offline or read-only during
//! the run. Nothing here changes a zone: the report only reads. And a
//! test's steps laid onto a host-managed disk's zones just before it runs
//! ([`fit`]); the resets they ask for are done by the runner, through the
//! target claimed for writing.

use bench_core::device::zone_area;
use bench_core::document::result::{ResultDoc, TargetInfo, ZoneUse, ZonedTest};
use bench_core::spec::Step;

use crate::disks::zones;
use crate::plan::Plan;

/// The run's zoned disks (their target indices): disks with a zone model.
fn zoned(plan: &Plan) -> Vec<usize> {
    (0..plan.targets.len())
        .filter(|&ti| plan.is_disk(ti) && plan.targets[ti].sim.is_none() && plan.targets[ti].info.zoned.is_some())
        .collect()
}

/// Say each zoned disk's zones as found, before anything runs.
pub fn before(plan: &Plan, progress: &mut dyn FnMut(&str)) {
    for ti in zoned(plan) {
        let t = &plan.targets[ti].info;
        if let Some(z) = &t.zoned {
            progress(&format!(
                "bootbench-init: {}",
                zones::line(&t.path, z, "before the run")
            ));
        }
    }
}

/// After the last test: each zoned disk's zones again, into the plan's
/// target and the document's, and said; not of a disk that failed (`bad`:
/// hung or changed), which is not asked again.
pub fn after(plan: &mut Plan, doc: &mut ResultDoc, bad: &[(usize, String)], progress: &mut dyn FnMut(&str)) {
    for ti in zoned(plan) {
        if bad.iter().any(|(b, _)| *b == ti) {
            continue;
        }
        let t = &mut plan.targets[ti].info;
        let queue = t
            .name
            .as_ref()
            .map(|n| crate::sysfs::root().join("block").join(n).join("queue"));
        let again = queue.map_or_else(
            || Err(format!("{}: no kernel name to find its queue by", t.path)),
            |q| zones::again(&t.path, &q, t.size_bytes),
        );
        let Some(z) = t.zoned.as_mut() else { continue };
        match again {
            Ok(s) => z.after = Some(s),
            Err(e) => {
                let why = format!("after the run: {e}");
                z.error = Some(z.error.take().map_or(why.clone(), |b| format!("{b}; {why}")));
            }
        }
        progress(&format!("bootbench-init: {}", zones::line(&t.path, z, "after the run")));
        if let Some(d) = doc.targets.get_mut(ti) {
            d.zoned.clone_from(&t.zoned);
        }
    }
}

/// A test's steps on target `info` as they run: on a host-managed zoned
/// disk, laid onto its zones as they stand now (the report read again
/// before each test, since earlier tests moved the write pointers) by
/// [`bench_core::device::zone_area::fit`], with the test's record; on any
/// other target, as planned. `Err` is why the test cannot run there, a
/// refusal naming the zone model.
pub fn fit(info: &TargetInfo, steps: &[Step]) -> Result<(Vec<Step>, Option<ZonedTest>), String> {
    if !crate::plan::host_managed(info) {
        return Ok((steps.to_vec(), None));
    }
    let (q, report) = zones::queue_and_zones(info)
        .map_err(|e| format!("host-managed zoned disk whose zone report could not be read ({e}): not run"))?;
    let lim = zone_area::Limits {
        max_open: q.max_open_zones,
        max_active: q.max_active_zones,
        reads_past_write_pointer: info.zoned.as_ref().and_then(|z| z.reads_past_write_pointer),
    };
    let (steps, rec) = zone_area::fit(steps.to_vec(), &report, &lim)?;
    Ok((steps, Some(rec)))
}

/// After a test that ran zone-aware on `info`: of the zones its `steps`
/// reset, those that hold data now (`None` if the report could not be
/// read, or the test reset none).
pub fn written(info: &TargetInfo, steps: &[Step]) -> Option<u64> {
    let reset: Vec<bench_core::spec::Span> = steps
        .iter()
        .filter_map(|s| s.zones.as_ref())
        .flat_map(|m| m.reset.iter().copied())
        .collect();
    if reset.is_empty() {
        return None;
    }
    let (_, report) = zones::queue_and_zones(info).ok()?;
    Some(zone_area::written_in(&report, &reset))
}

/// A zone-aware test's console line: how it met the zones.
pub fn said(rec: &ZonedTest) -> String {
    let how = match rec.mode {
        ZoneUse::WritePointers => "sequential writes at the write pointers",
        ZoneUse::ConventionalZones => "in the conventional zones only",
        ZoneUse::DataOnly => "reads only where the zones hold data",
        ZoneUse::WholeArea => "the whole area (the drive allows reads past the write pointer)",
    };
    let reset = if rec.zones_reset > 0 {
        format!(", {} zone(s) reset first", rec.zones_reset)
    } else {
        String::new()
    };
    format!(
        "zone-aware: {how}, {} B in {} run(s){reset}",
        rec.area_bytes, rec.extents
    )
}

#[cfg(test)]
mod tests {
    use bench_core::document::result::{
        ResultDoc, TargetInfo, ZoneModel, ZoneStates, ZoneSummary, ZoneUse, Zoned, ZonedTest,
    };

    /// A document with a zoned disk's record, before and after, and one
    /// whose zones could not be read, is what the result schema allows.
    #[test]
    fn a_zoned_disk_s_record_is_in_the_schema() {
        let s = ZoneSummary {
            model: ZoneModel::HostManaged,
            zone_size_bytes: 4 << 20,
            zone_capacity_bytes: Some(3 << 20),
            zone_capacity_kind: Some(bench_core::document::result::CapacityKind::Uniform),
            zones: 16,
            conventional_zones: 0,
            max_open_zones: 4,
            max_active_zones: 6,
            states: ZoneStates {
                empty: 15,
                full: 1,
                ..ZoneStates::default()
            },
            written_bytes: 3 << 20,
        };
        let mut doc = crate::run::new_doc(None, "t.json", 1, false, Vec::new());
        for zoned in [
            Zoned {
                model: ZoneModel::HostManaged,
                before: Some(s),
                after: Some(s),
                error: None,
                reads_past_write_pointer: Some(false),
            },
            Zoned {
                model: ZoneModel::HostAware,
                before: None,
                after: None,
                error: Some("BLKREPORTZONE: EIO".to_string()),
                reads_past_write_pointer: None,
            },
        ] {
            doc.targets.push(TargetInfo {
                path: "/dev/nvme0n1".to_string(),
                zoned: Some(zoned),
                ..TargetInfo::default()
            });
        }
        // A test's zone-aware record, with and without the zones written.
        for zones_written in [Some(3), None] {
            let spec = bench_core::spec::TestSpec::new("w", bench_core::spec::Workload::SeqWrite, |_| {});
            doc.tests.push(bench_core::document::result::TestResult {
                name: spec.name.clone(),
                workload: spec.workload,
                target: "/dev/nvme0n1".to_string(),
                params: spec.params,
                status: bench_core::document::result::Status::Ok,
                steps: Vec::new(),
                summary: Default::default(),
                zones: Some(ZonedTest {
                    mode: ZoneUse::WritePointers,
                    area_bytes: 9 << 20,
                    extents: 3,
                    zones_reset: 3,
                    zones_written,
                }),
                placement: None,
            });
        }
        let j = serde_json::to_value(&doc).expect("value");
        let errors = crate::testutil::result_schema_errors(&j);
        assert!(errors.is_empty(), "{errors:?}");
        let back: ResultDoc = serde_json::from_value(j).expect("reads back");
        assert_eq!(back.targets[0].zoned, doc.targets[0].zoned);
        assert_eq!(back.tests, doc.tests);
    }
}
