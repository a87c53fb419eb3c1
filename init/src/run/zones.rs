//! A run's zoned disks (SMR, NVMe ZNS): their zones said when the run
//! starts, as found with the disk ([`crate::disks::zones::found`]), and
//! read again after its last test, so that the document holds both and the
//! acceptance rules can tell a zone that went offline or read-only during
//! the run. Nothing here changes a zone: the report only reads.

use bench_core::document::result::ResultDoc;

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

#[cfg(test)]
mod tests {
    use bench_core::document::result::{ResultDoc, TargetInfo, ZoneModel, ZoneStates, ZoneSummary, Zoned};

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
            },
            Zoned {
                model: ZoneModel::HostAware,
                before: None,
                after: None,
                error: Some("BLKREPORTZONE: EIO".to_string()),
            },
        ] {
            doc.targets.push(TargetInfo {
                path: "/dev/nvme0n1".to_string(),
                zoned: Some(zoned),
                ..TargetInfo::default()
            });
        }
        let j = serde_json::to_value(&doc).expect("value");
        let errors = crate::testutil::result_schema_errors(&j);
        assert!(errors.is_empty(), "{errors:?}");
        let back: ResultDoc = serde_json::from_value(j).expect("reads back");
        assert_eq!(back.targets[0].zoned, doc.targets[0].zoned);
    }
}
