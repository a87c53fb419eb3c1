//! The zones rule: a zoned disk's offline and read-only zones (ZBC/ZAC
//! ZC7 and ZC6: zones the drive gave up on, a dying SMR or ZNS drive's
//! sign) before and after the run, and those that appeared during it.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::document::result::{Check, CheckRule, TargetInfo, Verdict, ZoneSummary};

/// The zones of `s` the rule counts: offline and read-only.
fn bad(s: &ZoneSummary) -> u64 {
    s.states.offline + s.states.read_only
}

/// `s`'s bad zones in words.
fn words(s: &ZoneSummary) -> String {
    format!("{} offline and {} read-only", s.states.offline, s.states.read_only)
}

/// The zones rule on `t`, a zoned disk: offline or read-only zones before
/// or after the run give `fails`, and so do more of them after than
/// before; none passes. A disk whose zones could not be read at all warns
/// (nothing is known of them); one that is not zoned has no check.
pub fn check(t: &TargetInfo, fails: Verdict, out: &mut Vec<Check>) {
    let Some(z) = &t.zoned else { return };
    #[allow(clippy::cast_precision_loss)] // zone counts, shown
    let check = |verdict, value: u64, message: String| Check {
        rule: CheckRule::Zones,
        verdict,
        test: None,
        figure: Some(String::from("offline_and_read_only_zones")),
        value: Some(value as f64),
        limit: Some(0.0),
        source: String::from("acceptance.zones"),
        message,
    };
    let (before, after) = (z.before.as_ref(), z.after.as_ref());
    let worst = before.iter().chain(after.iter()).map(|s| bad(s)).max();
    let Some(worst) = worst else {
        out.push(check(
            Verdict::Warn,
            0,
            format!(
                "its zones were not read: {}",
                z.error.as_deref().unwrap_or("no zone report")
            ),
        ));
        return;
    };
    let message = match (before, after) {
        (Some(b), Some(a)) if bad(a) > bad(b) => format!(
            "offline and read-only zones grew during the run: {} before, {} after",
            words(b),
            words(a)
        ),
        _ if worst == 0 => String::from("no offline or read-only zone"),
        (Some(b), Some(a)) => format!("{} zones before the run, {} after", words(b), words(a)),
        (Some(b), None) => format!("{} zones before the run", words(b)),
        (None, Some(a)) => format!("{} zones after the run", words(a)),
        (None, None) => return,
    };
    out.push(check(if worst == 0 { Verdict::Pass } else { fails }, worst, message));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::result::{ZoneModel, ZoneStates, Zoned};

    fn summary(offline: u64, read_only: u64) -> ZoneSummary {
        ZoneSummary {
            model: ZoneModel::HostManaged,
            zone_size_bytes: 4 << 20,
            zone_capacity_bytes: Some(3 << 20),
            zone_capacity_kind: None,
            zones: 16,
            conventional_zones: 0,
            max_open_zones: 4,
            max_active_zones: 6,
            states: ZoneStates {
                empty: 16 - offline - read_only,
                offline,
                read_only,
                ..ZoneStates::default()
            },
            written_bytes: 0,
        }
    }

    fn checks(before: Option<ZoneSummary>, after: Option<ZoneSummary>) -> Vec<Check> {
        let t = TargetInfo {
            zoned: Some(Zoned {
                model: ZoneModel::HostManaged,
                before,
                after,
                error: Some(String::from("BLKREPORTZONE: EIO")),
                reads_past_write_pointer: None,
            }),
            ..TargetInfo::default()
        };
        let mut out = Vec::new();
        check(&t, Verdict::Fail, &mut out);
        out
    }

    #[test]
    fn offline_and_read_only_zones_fail_and_so_does_their_growth() {
        let c = checks(Some(summary(0, 0)), Some(summary(0, 0)));
        assert_eq!(
            (c[0].verdict, c[0].message.as_str()),
            (Verdict::Pass, "no offline or read-only zone")
        );
        let c = checks(Some(summary(1, 0)), Some(summary(1, 0)));
        assert_eq!(c[0].verdict, Verdict::Fail);
        assert_eq!(
            c[0].message,
            "1 offline and 0 read-only zones before the run, 1 offline and 0 read-only after"
        );
        let c = checks(Some(summary(0, 0)), Some(summary(0, 2)));
        assert_eq!((c[0].verdict, c[0].value), (Verdict::Fail, Some(2.0)));
        assert_eq!(
            c[0].message,
            "offline and read-only zones grew during the run: 0 offline and 0 read-only before, 0 offline and 2 read-only after"
        );
        let c = checks(Some(summary(0, 1)), None);
        assert_eq!(
            (c[0].verdict, c[0].message.as_str()),
            (Verdict::Fail, "0 offline and 1 read-only zones before the run")
        );
        let c = checks(None, None);
        assert_eq!(c[0].verdict, Verdict::Warn);
        assert_eq!(c[0].message, "its zones were not read: BLKREPORTZONE: EIO");
        let mut out = Vec::new();
        check(&TargetInfo::default(), Verdict::Fail, &mut out);
        assert!(out.is_empty(), "not zoned: no check");
    }
}
