//! The odd disk out: disks of one model and firmware grouped, each figure
//! against its group's median, in one document or across many (the fleet
//! view).

use crate::document::result::AnalysisKind;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{metrics, usable};
use crate::document::result::Metric;
use crate::document::result::{Analysis, ResultDoc, Status, TargetInfo};
use crate::spec::Workload;

/// How far below its group's median a disk's figure may be before it is an
/// outlier: more than 10% below (figure < 0.9 x median).
pub const OUTLIER_BELOW: f64 = 0.10;

/// True when `value` is more than [`OUTLIER_BELOW`] below `median`: the
/// one outlier rule ([`FleetGroup::is_outlier`], and the fleet views of a
/// host tool that keep their own groups).
pub fn is_outlier(value: f64, median: f64) -> bool {
    value < median * (1.0 - OUTLIER_BELOW)
}

/// The median of `v` (not empty): the middle value, or the mean of the two
/// middle ones (sorts `v`). The fleet views of a host tool take their
/// groups' medians from here, so they judge as a document does.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One disk's figure in a [`FleetGroup`].
#[derive(Clone, Debug, PartialEq)]
pub struct FleetEntry {
    /// Which document (index into the documents given to [`fleet`]).
    pub doc: usize,
    /// The disk's path in that document.
    pub target: String,
    /// Its serial number, when known.
    pub serial: Option<String>,
    /// The figure, in the metric's unit.
    pub value: f64,
}

/// What the disks of a [`fleet`] group share besides the test: their model
/// and firmware.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DiskModel {
    /// The model.
    pub model: String,
    /// The firmware revision.
    pub firmware: String,
}

impl DiskModel {
    /// A target's model and firmware, when both are known.
    pub fn of(t: &TargetInfo) -> Option<DiskModel> {
        Some(DiskModel {
            model: t.model.clone()?,
            firmware: t.firmware.clone()?,
        })
    }
}

/// The disks of one key (by default one model and firmware, [`DiskModel`]),
/// over one or many documents, with one test's figure each: the test of that
/// name that ended `ok`, and its figure usable.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetGroup<K = DiskModel> {
    /// What the disks share: [`fleet`]'s model and firmware, or the key of
    /// [`fleet_by`].
    pub key: K,
    /// The test's name.
    pub test: String,
    /// Its workload.
    pub workload: Workload,
    /// The figure compared.
    pub metric: Metric,
    /// Each disk's figure, in document and target order.
    pub entries: Vec<FleetEntry>,
    /// Their median (of an even count, the mean of the two middle ones).
    pub median: f64,
    /// The lowest figure.
    pub min: f64,
    /// The highest figure.
    pub max: f64,
}

impl<K> FleetGroup<K> {
    /// True when `value` is more than [`OUTLIER_BELOW`] below the median:
    /// the one outlier rule, of a document's `outlier` lines and of every
    /// fleet view.
    pub fn is_outlier(&self, value: f64) -> bool {
        is_outlier(value, self.median)
    }

    /// The entries more than [`OUTLIER_BELOW`] below the median.
    pub fn outliers(&self) -> impl Iterator<Item = &FleetEntry> {
        self.entries.iter().filter(move |e| self.is_outlier(e.value))
    }
}

/// The fleet view of many documents (one machine's runs or many
/// machines'): every whole disk (no array or layer) with a known model and
/// firmware, grouped by model, firmware, test name and analysed figure;
/// the groups of two or more disks, in the order first seen. The same rule
/// as a document's `outlier` lines, across documents: an entry more than
/// 10% below its group's median is an outlier ([`FleetGroup::outliers`]).
pub fn fleet(docs: &[&ResultDoc]) -> Vec<FleetGroup> {
    fleet_by(docs, |_, t| DiskModel::of(t))
}

/// [`fleet`] with another key: every whole disk (no array or layer) for
/// which `key(document, disk)` is `Some`, grouped by that key, test name
/// and analysed figure; the groups of two or more disks, in the order first
/// seen, with their median, lowest and highest figure. A host tool groups
/// by the machine's model and the disk's this way, with the same median
/// and the same outlier rule.
pub fn fleet_by<K: PartialEq + Clone>(
    docs: &[&ResultDoc],
    key: impl Fn(&ResultDoc, &TargetInfo) -> Option<K>,
) -> Vec<FleetGroup<K>> {
    groups_by(docs, key, 2)
}

/// [`fleet_by`] keeping the groups of at least `least` disks (1: every
/// group, as a baseline of one disk's earlier runs needs).
pub(crate) fn groups_by<K: PartialEq + Clone>(
    docs: &[&ResultDoc],
    key: impl Fn(&ResultDoc, &TargetInfo) -> Option<K>,
    least: usize,
) -> Vec<FleetGroup<K>> {
    let mut groups: Vec<FleetGroup<K>> = Vec::new();
    // The groups of each test and metric (indexes into `groups`): a
    // figure's group is looked for among those only.
    let mut of_test: alloc::collections::BTreeMap<(String, &'static str), Vec<usize>> =
        alloc::collections::BTreeMap::new();
    for (i, doc) in docs.iter().enumerate() {
        let by_target = doc.tests_by_target();
        for t in doc.targets.iter().filter(|t| t.stack.is_none()) {
            let Some(k) = key(doc, t) else {
                continue;
            };
            for test in ResultDoc::tests_of(&by_target, &t.path)
                .iter()
                .filter(|x| x.status == Status::Ok)
            {
                for &metric in metrics(test.workload) {
                    let Some(value) = usable(metric.get(&test.summary)) else {
                        continue;
                    };
                    let entry = FleetEntry {
                        doc: i,
                        target: t.path.clone(),
                        serial: t.serial.clone(),
                        value,
                    };
                    let ix = of_test.entry((test.name.clone(), metric.name())).or_default();
                    match ix.iter().copied().find(|&g| groups[g].key == k) {
                        Some(g) => groups[g].entries.push(entry),
                        None => {
                            ix.push(groups.len());
                            groups.push(FleetGroup {
                                key: k.clone(),
                                test: test.name.clone(),
                                workload: test.workload,
                                metric,
                                entries: vec![entry],
                                median: 0.0,
                                min: 0.0,
                                max: 0.0,
                            });
                        }
                    }
                }
            }
        }
    }
    groups.retain(|g| g.entries.len() >= least);
    for g in &mut groups {
        let mut v: Vec<f64> = g.entries.iter().map(|e| e.value).collect();
        g.median = median(&mut v);
        (g.min, g.max) = (v[0], v[v.len() - 1]);
    }
    groups
}

/// The document's own fleet ([`fleet`] of it alone), each group counted
/// only when every whole disk of its model and firmware is in it (a disk
/// whose test failed or was not run leaves its group without a figure to
/// judge the others by): the groups the `outlier` lines and the acceptance
/// peers rule judge.
pub(crate) fn peer_groups(doc: &ResultDoc) -> Vec<FleetGroup> {
    let disks = |model: &str, fw: &str| {
        doc.targets
            .iter()
            .filter(|t| t.stack.is_none() && t.model.as_deref() == Some(model) && t.firmware.as_deref() == Some(fw))
            .count()
    };
    fleet(&[doc])
        .into_iter()
        .filter(|g| g.entries.len() == disks(&g.key.model, &g.key.firmware))
        .collect()
}

/// The odd disk out: the whole disks (no array or layer) grouped by model
/// and firmware (both known); in a group of two or more, for each test
/// every disk of the group ran `ok` and each figure analysed for its
/// workload, a disk more than [`OUTLIER_BELOW`] below the group's median
/// gets a line (`outlier`: measured = its figure, expected = the median,
/// `from` = the group), in target order.
pub(super) fn analyze_outliers(doc: &ResultDoc, out: &mut Vec<Analysis>) {
    for g in peer_groups(doc) {
        for e in g.outliers() {
            out.push(Analysis {
                kind: AnalysisKind::Outlier,
                target: e.target.clone(),
                test: g.test.clone(),
                workload: g.workload,
                metric: g.metric,
                measured: e.value,
                expected: g.median,
                efficiency: e.value / g.median,
                rule: format!(
                    "outlier: {:.0}% below the median of its group ({} disks of model {}, firmware {}: {})",
                    (1.0 - e.value / g.median) * 100.0,
                    g.entries.len(),
                    g.key.model,
                    g.key.firmware,
                    g.metric.show(g.median)
                ),
                limited_by: None,
                from: g.entries.iter().map(|x| x.target.clone()).collect(),
                members: Vec::new(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::analysis::analyze;
    use crate::verdict::analysis::testutil::{close, disk, doc, md, test, MBS};

    fn model(mut t: TargetInfo, m: &str, fw: Option<&str>) -> TargetInfo {
        t.model = Some(m.into());
        t.firmware = fw.map(String::from);
        t
    }

    /// The odd disk out: in a group of one model and firmware, a disk more
    /// than 10% below the median gets a line and the others none; exactly
    /// 10% below is not; a disk of another model, one without a firmware,
    /// and an array are no part of the group; a group of one gives none;
    /// a test that failed on one disk of the group gives none for it.
    #[test]
    fn outliers_against_the_median_of_model_and_firmware() {
        let t = |p: &str, v: f64| test(p, Workload::SeqRead, Metric::ReadBps, v * MBS);
        let d = doc(
            vec![
                model(disk("/dev/a", 1 << 30), "M1", Some("F1")),
                model(disk("/dev/b", 1 << 30), "M1", Some("F1")),
                model(disk("/dev/c", 1 << 30), "M1", Some("F1")),
                model(disk("/dev/d", 1 << 30), "M1", Some("F2")),
                model(disk("/dev/e", 1 << 30), "M1", None),
                md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
            ],
            vec![
                t("/dev/a", 100.0),
                t("/dev/b", 95.0),
                t("/dev/c", 80.0),
                t("/dev/d", 10.0),
                t("/dev/e", 10.0),
                t("/dev/md0", 10.0),
            ],
        );
        let lines: Vec<Analysis> = analyze(&d)
            .into_iter()
            .filter(|l| l.kind == AnalysisKind::Outlier)
            .collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let l = &lines[0];
        assert_eq!(
            (l.target.as_str(), l.test.as_str(), l.metric.name()),
            ("/dev/c", "seq_read", "read_bytes_per_sec")
        );
        assert!(close(l.measured, 80.0 * MBS) && close(l.expected, 95.0 * MBS));
        assert!(close(l.efficiency, 80.0 / 95.0));
        assert_eq!(l.from, vec!["/dev/a", "/dev/b", "/dev/c"]);
        assert_eq!(
            l.rule,
            "outlier: 16% below the median of its group (3 disks of model M1, firmware F1: 95.0 MB/s)"
        );
        assert_eq!(l.limited_by, None);

        // The post's pair: 59 and 83 MB/s, median 71; 90 against 100 is 5%
        // below their median of 95: none.
        for (slow, fast, want) in [(59.0, 83.0, true), (90.0, 100.0, false)] {
            let d = doc(
                vec![
                    model(disk("/dev/a", 1 << 30), "M", Some("F")),
                    model(disk("/dev/b", 1 << 30), "M", Some("F")),
                ],
                vec![t("/dev/a", slow), t("/dev/b", fast)],
            );
            let lines: Vec<Analysis> = analyze(&d)
                .into_iter()
                .filter(|l| l.kind == AnalysisKind::Outlier)
                .collect();
            assert_eq!(lines.len(), usize::from(want), "{slow} and {fast}: {lines:?}");
            if want {
                assert_eq!(lines[0].target, "/dev/a");
                assert!(close(lines[0].expected, 71.0 * MBS));
            }
        }
        // Exactly 10% below the median of three: none.
        let d = doc(
            (["/dev/a", "/dev/b", "/dev/c"].map(|p| model(disk(p, 1 << 30), "M", Some("F")))).to_vec(),
            vec![t("/dev/a", 90.0), t("/dev/b", 100.0), t("/dev/c", 110.0)],
        );
        assert!(analyze(&d).iter().all(|l| l.kind != AnalysisKind::Outlier));
        // A failed test on one disk of the group: no line for that test.
        let mut failed = t("/dev/b", 95.0);
        failed.status = Status::Error {
            errno: 5,
            op: crate::io::Op::Read,
            offset: 0,
            message: "read at offset 0 failed: errno 5".into(),
        };
        let d = doc(
            (["/dev/a", "/dev/b", "/dev/c"].map(|p| model(disk(p, 1 << 30), "M", Some("F")))).to_vec(),
            vec![t("/dev/a", 100.0), failed, t("/dev/c", 50.0)],
        );
        assert!(analyze(&d).iter().all(|l| l.kind != AnalysisKind::Outlier));
    }

    /// The fleet over two documents: one model and firmware's disks from
    /// both in one group (59, 83 and 80 MB/s: median 80, the 59 an
    /// outlier), a model with one disk and an array in none, the same
    /// disk in two documents twice.
    #[test]
    fn fleet_groups_disks_across_documents() {
        let t = |p: &str, v: f64| test(p, Workload::SeqRead, Metric::ReadBps, v * MBS);
        let mut a0 = model(disk("/dev/a", 1 << 30), "M", Some("F"));
        a0.serial = Some("S-A".into());
        let d0 = doc(
            vec![
                a0,
                model(disk("/dev/b", 1 << 30), "M", Some("F")),
                md("/dev/md0", "raid0", &["/dev/a", "/dev/b"], None),
            ],
            vec![t("/dev/a", 59.0), t("/dev/b", 83.0), t("/dev/md0", 1.0)],
        );
        let d1 = doc(
            vec![
                model(disk("/dev/c", 1 << 30), "M", Some("F")),
                model(disk("/dev/d", 1 << 30), "N", Some("F")),
            ],
            vec![t("/dev/c", 80.0), t("/dev/d", 1.0)],
        );
        let g = fleet(&[&d0, &d1]);
        assert_eq!(g.len(), 1, "{g:?}");
        let g = &g[0];
        assert_eq!(
            (g.key.model.as_str(), g.key.firmware.as_str(), g.test.as_str()),
            ("M", "F", "seq_read")
        );
        assert_eq!(g.metric, Metric::ReadBps);
        let who: Vec<(usize, &str)> = g.entries.iter().map(|e| (e.doc, e.target.as_str())).collect();
        assert_eq!(who, vec![(0, "/dev/a"), (0, "/dev/b"), (1, "/dev/c")]);
        assert_eq!(g.entries[0].serial.as_deref(), Some("S-A"));
        assert!(close(g.median, 80.0 * MBS) && close(g.min, 59.0 * MBS) && close(g.max, 83.0 * MBS));
        let odd: Vec<&str> = g.outliers().map(|e| e.target.as_str()).collect();
        assert_eq!(odd, vec!["/dev/a"]);
        // The same document twice: each disk counted in each.
        assert_eq!(
            fleet(&[&d1, &d1]).iter().map(|g| g.entries.len()).collect::<Vec<_>>(),
            vec![2, 2]
        );
    }

    /// `fleet_by` with another key: the machine's model from the document
    /// (its host) with the disk's model. Two documents of host model H and
    /// one of G, each with one disk of model M: H's disks are a group of
    /// two with their median, G's one disk no group; a key of None leaves a
    /// disk out; `fleet` is `fleet_by` with `DiskModel::of`; the outlier
    /// rule is the same (`is_outlier` exactly at and just past 10% below).
    #[test]
    fn fleet_by_another_key_groups_and_judges_alike() {
        let t = |p: &str, v: f64| test(p, Workload::SeqRead, Metric::ReadBps, v * MBS);
        let on = |host: &str, v: f64| {
            let mut d = doc(
                vec![model(disk("/dev/a", 1 << 30), "M", Some("F"))],
                vec![t("/dev/a", v)],
            );
            d.host.product_name = Some(host.into());
            d
        };
        let (h0, h1, g0) = (on("H", 100.0), on("H", 60.0), on("G", 80.0));
        let docs = [&h0, &h1, &g0];
        let key = |d: &ResultDoc, t: &TargetInfo| Some((d.host.product_name.clone()?, DiskModel::of(t)?));
        let by = fleet_by(&docs, key);
        assert_eq!(by.len(), 1, "{by:?}");
        let g = &by[0];
        assert_eq!(
            g.key,
            (
                "H".to_string(),
                DiskModel {
                    model: "M".into(),
                    firmware: "F".into()
                }
            )
        );
        assert_eq!(g.entries.iter().map(|e| e.doc).collect::<Vec<_>>(), vec![0, 1]);
        assert!(close(g.median, 80.0 * MBS) && close(g.min, 60.0 * MBS) && close(g.max, 100.0 * MBS));
        assert_eq!(g.outliers().map(|e| e.doc).collect::<Vec<_>>(), vec![1]);
        assert!(!g.is_outlier(72.0 * MBS) && g.is_outlier(71.9 * MBS));
        // No key: no group.
        assert!(fleet_by(&docs, |_, _| None::<()>).is_empty());
        // The default key is the disk's model and firmware.
        let plain = fleet(&docs);
        assert_eq!(plain, fleet_by(&docs, |_, t| DiskModel::of(t)));
        assert_eq!(plain[0].entries.len(), 3);
    }
}
