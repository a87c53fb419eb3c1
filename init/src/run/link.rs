//! A run's disks' paths (PCIe, SATA, SAS, USB links and their error
//! counters): said when the run starts, as found with the disk
//! ([`crate::disks::link::found`]), and read again after its last test, so
//! that the document holds both and the acceptance rules can tell a link
//! trained low and a counter that grew during the run. Nothing is reset.

use bench_core::document::result::ResultDoc;

use crate::disks::{file, link};
use crate::plan::Plan;

/// The run's disks whose path was read (their target indices).
fn with_link(plan: &Plan) -> Vec<usize> {
    (0..plan.targets.len())
        .filter(|&ti| plan.is_disk(ti) && plan.targets[ti].sim.is_none() && plan.targets[ti].info.link.is_some())
        .collect()
}

/// Say each disk's path as found, before anything runs.
pub fn before(plan: &Plan, progress: &mut dyn FnMut(&str)) {
    for ti in with_link(plan) {
        let t = &plan.targets[ti].info;
        if let Some(r) = t.link.as_ref().and_then(|l| l.before.as_ref()) {
            progress(&format!("bootbench-init: {}", link::line(&t.path, r, "before the run")));
        }
    }
}

/// After the last test: each disk's path again, into the plan's target
/// and the document's, and said; not of a disk that failed (`bad`: hung
/// or changed), which is not asked again.
pub fn after(plan: &mut Plan, doc: &mut ResultDoc, bad: &[(usize, String)], progress: &mut dyn FnMut(&str)) {
    for ti in with_link(plan) {
        if bad.iter().any(|(b, _)| *b == ti) {
            continue;
        }
        let t = &mut plan.targets[ti].info;
        let Some(name) = t.name.clone() else { continue };
        let sys = crate::sysfs::root();
        let Ok(dir) = std::fs::canonicalize(sys.join("class/block").join(&name)) else {
            continue;
        };
        let f = file::open(&t.path, false, false).ok();
        let again = link::read(&dir, sys, t.transport.as_deref(), f.as_ref()).unwrap_or_default();
        progress(&format!(
            "bootbench-init: {}",
            link::line(&t.path, &again, "after the run")
        ));
        if let Some(l) = t.link.as_mut() {
            l.after = Some(again);
        }
        if let Some(d) = doc.targets.get_mut(ti) {
            d.link.clone_from(&t.link);
        }
    }
}
