//! The link rules: a link on a disk's path trained below what both its
//! ends support (`acceptance.link_speed`, a warning by default), and PHY
//! or AER error counters on the path that grew during the run
//! (`acceptance.link_errors`, a failure by default).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::device::link;
use crate::document::result::{Check, CheckRule, TargetInfo, Verdict};

/// A check of `rule` on `figure` with its values.
fn check(
    rule: CheckRule,
    verdict: Verdict,
    figure: &str,
    value: Option<u64>,
    limit: Option<u64>,
    message: String,
) -> Check {
    #[allow(clippy::cast_precision_loss)] // counters, shown
    let f = |v: u64| v as f64;
    Check {
        rule,
        verdict,
        test: None,
        figure: Some(String::from(figure)),
        value: value.map(f),
        limit: limit.map(f),
        source: String::from(match rule {
            CheckRule::LinkSpeed => "acceptance.link_speed",
            _ => "acceptance.link_errors",
        }),
        message,
    }
}

/// The speed rule on `t`: each link of its latest reading (after the run,
/// else before it) trained below what both ends support gives `fails`,
/// one check each, naming both figures; none passes. A disk whose path
/// was not read has no check.
pub fn speed(t: &TargetInfo, fails: Verdict, out: &mut Vec<Check>) {
    let Some(l) = &t.link else { return };
    let Some(r) = l.after.as_ref().or(l.before.as_ref()) else {
        return;
    };
    let low = link::degraded(r);
    if low.is_empty() {
        out.push(check(
            CheckRule::LinkSpeed,
            Verdict::Pass,
            "link_speed",
            None,
            None,
            format!("trained as fast as both ends support: {}", link::summary(r)),
        ));
    }
    for why in low {
        out.push(check(
            CheckRule::LinkSpeed,
            fails,
            "link_speed",
            None,
            None,
            format!("link trained below what both ends support: {why}"),
        ));
    }
}

/// The errors rule on `t`: each error counter of its path that is higher
/// after the run than before gives `fails`, naming the counter and both
/// values; none passes. Without both readings there is nothing to compare
/// and no check.
pub fn errors(t: &TargetInfo, fails: Verdict, out: &mut Vec<Check>) {
    let Some(l) = &t.link else { return };
    let (Some(b), Some(a)) = (&l.before, &l.after) else {
        return;
    };
    let before = link::counters(b);
    let grew: Vec<(String, u64, u64)> = link::counters(a)
        .into_iter()
        .filter_map(|(name, after)| {
            let (_, was) = before.iter().find(|(n, _)| *n == name)?;
            (after > *was).then_some((name, *was, after))
        })
        .collect();
    if grew.is_empty() {
        out.push(check(
            CheckRule::LinkErrors,
            Verdict::Pass,
            "link_error_counters",
            None,
            None,
            format!("no PHY or AER error counter grew ({} read)", before.len()),
        ));
    }
    for (name, was, now) in grew {
        out.push(check(
            CheckRule::LinkErrors,
            fails,
            "link_error_counters",
            Some(now),
            Some(was),
            format!("{name} grew during the run: {was} before, {now} after"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::result::{Aer, Link, LinkReading, PcieLink, PcieRole};

    fn reading(speed: u32, correctable: u64) -> LinkReading {
        let f = |role, address: &str, max_width| PcieLink {
            address: address.into(),
            role,
            speed_mts: Some(speed),
            width: Some(1),
            max_speed_mts: Some(16000),
            max_width: Some(max_width),
            aer: Some(Aer {
                correctable: Some(correctable),
                nonfatal: Some(0),
                fatal: Some(0),
            }),
        };
        LinkReading {
            pcie: vec![
                f(PcieRole::Device, "0000:01:00.0", 4),
                f(PcieRole::Port, "0000:00:01.0", 16),
            ],
            ..LinkReading::default()
        }
    }

    fn run(before: Option<LinkReading>, after: Option<LinkReading>) -> Vec<Check> {
        let t = TargetInfo {
            link: Some(Link { before, after }),
            ..TargetInfo::default()
        };
        let mut out = Vec::new();
        speed(&t, Verdict::Warn, &mut out);
        errors(&t, Verdict::Fail, &mut out);
        out
    }

    #[test]
    fn a_slow_link_warns_and_growing_counters_fail() {
        let c = run(Some(reading(2500, 0)), Some(reading(2500, 3)));
        assert_eq!(c.len(), 3, "the device and the port: {c:?}");
        assert_eq!((c[0].rule, c[0].verdict), (CheckRule::LinkSpeed, Verdict::Warn));
        assert_eq!(
            c[0].message,
            "link trained below what both ends support: PCIe 2.5 GT/s x1 (0000:01:00.0), capable of 16 GT/s x4 (device 16 GT/s x4, port 16 GT/s x16)"
        );
        assert_eq!((c[1].rule, c[1].verdict), (CheckRule::LinkErrors, Verdict::Fail));
        assert_eq!(
            c[1].message,
            "PCIe 0000:01:00.0 AER correctable errors grew during the run: 0 before, 3 after"
        );
        assert_eq!((c[1].value, c[1].limit), (Some(3.0), Some(0.0)));
        assert_eq!(c[1].source, "acceptance.link_errors");
    }

    #[test]
    fn a_full_speed_link_and_still_counters_pass() {
        let mut r = reading(16000, 5);
        for p in &mut r.pcie {
            p.width = Some(4);
        }
        let c = run(Some(r.clone()), Some(r));
        assert_eq!(
            c.iter().map(|c| c.verdict).collect::<Vec<_>>(),
            vec![Verdict::Pass, Verdict::Pass]
        );
        // Before only: the speed is judged, the counters are not.
        let c = run(Some(reading(2500, 0)), None);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].rule, CheckRule::LinkSpeed);
        let mut out = Vec::new();
        speed(&TargetInfo::default(), Verdict::Warn, &mut out);
        errors(&TargetInfo::default(), Verdict::Fail, &mut out);
        assert!(out.is_empty());
    }
}
