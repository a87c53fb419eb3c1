//! The health rules: what a disk's health readings before and after its
//! tests must show (`crate::document::result::Health`). A disk without readings (a
//! virtio or USB disk, a file, an array) gets no health check.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::check;
use crate::document::result::{Check, CheckRule, Health, HealthReading, TargetInfo, Verdict};

/// The counters that must not grow during a run: ATA reallocated, pending
/// and offline-uncorrectable sectors and UDMA CRC errors; NVMe media and
/// data-integrity errors and error-log entries; SCSI uncorrected read and
/// write errors and grown defects.
pub const MUST_NOT_GROW: [&str; 9] = [
    "reallocated_sectors",
    "pending_sectors",
    "offline_uncorrectable",
    "crc_errors",
    "media_errors",
    "error_log_entries",
    "read_uncorrected_errors",
    "write_uncorrected_errors",
    "grown_defects",
];

/// Which health rules apply, and their limits.
#[derive(Clone, Debug, PartialEq)]
pub struct HealthRules {
    /// SMART overall status must pass (ATA RETURN STATUS, no attribute
    /// failing now; NVMe critical warning 0).
    pub smart_status: bool,
    /// [`MUST_NOT_GROW`] counters and NVMe critical-warning bits must not
    /// grow between before and after.
    pub counters: bool,
    /// NVMe percentage used at most this; `None`: no limit.
    pub percentage_used_max: Option<u8>,
    /// NVMe available spare at or above the device's threshold.
    pub available_spare: bool,
    /// Every temperature reading (before, during each test, after) below
    /// the device's warning temperature.
    pub temperature: bool,
    /// A ceiling of the config's own, degrees Celsius, besides the
    /// device's warning temperature.
    pub max_temperature_c: Option<i32>,
    /// Seagate FARM's power-on hours against SMART's: beyond both
    /// [`crate::device::farm::HOURS_TOLERANCE`] hours and
    /// [`crate::device::farm::HOURS_TOLERANCE_PCT`] percent, the disk fails.
    pub farm_hours: bool,
    /// The OCP C0h log: its bad NAND blocks and uncorrectable read errors
    /// must not grow (fail); capacitor health below
    /// [`crate::device::ocp::CAPACITOR_WARN_BELOW_PCT`] and thermal
    /// throttling warn.
    pub ocp: bool,
}

impl HealthRules {
    /// Every rule on, percentage used at most 100 (the rated endurance),
    /// no temperature ceiling but the device's.
    pub const fn defaults() -> HealthRules {
        HealthRules {
            smart_status: true,
            counters: true,
            percentage_used_max: Some(100),
            available_spare: true,
            temperature: true,
            max_temperature_c: None,
            farm_hours: true,
            ocp: true,
        }
    }
}

impl HealthRules {
    /// The rules in words.
    pub fn describe(&self) -> String {
        let mut on = Vec::new();
        if self.smart_status {
            on.push(String::from("SMART status"));
        }
        if self.counters {
            on.push(String::from("counters must not grow"));
        }
        if let Some(p) = self.percentage_used_max {
            on.push(format!("NVMe percentage used <= {p}%"));
        }
        if self.available_spare {
            on.push(String::from("NVMe spare >= its threshold"));
        }
        if self.temperature {
            on.push(String::from("below the warning temperature"));
        }
        if let Some(c) = self.max_temperature_c {
            on.push(format!("below {c} C"));
        }
        if self.farm_hours {
            on.push(String::from("FARM power-on hours agree with SMART's"));
        }
        if self.ocp {
            on.push(String::from("OCP C0h counters must not grow"));
        }
        if on.is_empty() {
            String::from("off")
        } else {
            format!("{} (fail)", on.join(", "))
        }
    }
}

/// Where the device's own limits come from.
const DEVICE: &str = "device";

/// The health rules on `t`'s readings.
pub(super) fn check_health(t: &TargetInfo, rules: &HealthRules, out: &mut Vec<Check>) {
    let Some(h) = &t.health else {
        return;
    };
    let readings: Vec<(&str, &HealthReading)> = core::iter::once(("before", &h.before))
        .chain(h.after.iter().map(|a| ("after", a)))
        .collect();
    if rules.smart_status {
        smart_status(&readings, out);
    }
    if rules.counters {
        counters(h, out);
    }
    nvme_limits(&readings, rules, out);
    if rules.temperature || rules.max_temperature_c.is_some() {
        temperature(h, rules, out);
    }
    if rules.farm_hours {
        farm_hours(&h.before, out);
    }
    if rules.ocp {
        ocp(h, out);
    }
}

/// FARM's power-on hours against SMART's, from the reading before the
/// tests (where FARM is read); no line without both figures.
fn farm_hours(r: &HealthReading, out: &mut Vec<Check>) {
    let (Some(smart), Some(farm)) = (r.power_on_hours, r.farm.as_ref().and_then(|f| f.power_on_hours)) else {
        return;
    };
    let disagree = crate::device::farm::power_on_hours_disagree(smart, farm);
    #[allow(clippy::cast_precision_loss)] // hours far below 2^53
    out.push(check(
        CheckRule::PowerOnHours,
        if disagree.is_some() {
            Verdict::Fail
        } else {
            Verdict::Pass
        },
        None,
        "power_on_hours",
        Some(smart as f64),
        Some(farm as f64),
        "acceptance.health.farm_hours",
        disagree.unwrap_or_else(|| {
            format!(
                "power-on hours agree: SMART {} h, FARM {} h",
                crate::device::farm::thousands(smart),
                crate::device::farm::thousands(farm)
            )
        }),
    ));
}

/// The OCP C0h log's rules: its counters that must not grow between the
/// two readings fail the disk; capacitor health and thermal throttling
/// warn. No line without the log in both readings.
fn ocp(h: &Health, out: &mut Vec<Check>) {
    use crate::device::ocp;
    let (Some(b), Some(a)) = (h.before.ocp.as_ref(), h.after.as_ref().and_then(|a| a.ocp.as_ref())) else {
        return;
    };
    let grew = ocp::must_not_grow(b, a);
    let (verdict, message) = if grew.is_empty() {
        (
            Verdict::Pass,
            String::from("OCP bad NAND blocks and uncorrectable read errors did not grow"),
        )
    } else {
        (Verdict::Fail, grew.join("; "))
    };
    out.push(check(
        CheckRule::Counter,
        verdict,
        None,
        "ocp",
        None,
        None,
        "acceptance.health.ocp",
        message,
    ));
    for w in ocp::warnings(b, a, ocp::CAPACITOR_WARN_BELOW_PCT) {
        out.push(check(
            CheckRule::OcpHealth,
            Verdict::Warn,
            None,
            "ocp",
            None,
            None,
            "acceptance.health.ocp",
            w,
        ));
    }
}

fn smart_status(readings: &[(&str, &HealthReading)], out: &mut Vec<Check>) {
    let known: Vec<_> = readings.iter().filter(|(_, r)| r.smart_passed.is_some()).collect();
    let failed = known.iter().find(|(_, r)| r.smart_passed == Some(false));
    let failing: Vec<String> = readings
        .iter()
        .flat_map(|(_, r)| r.attributes.iter().filter(|a| a.failing))
        .map(|a| format!("{} ({})", a.id, a.name.as_deref().unwrap_or("unknown")))
        .collect();
    if known.is_empty() && failing.is_empty() {
        return;
    }
    let (verdict, message) = if let Some((when, r)) = failed {
        let why = crate::verdict::analysis::failed_why(r);
        (Verdict::Fail, format!("SMART status failed {when} the tests: {why}"))
    } else if !failing.is_empty() {
        (
            Verdict::Fail,
            format!("attributes at or below their threshold: {}", failing.join(", ")),
        )
    } else {
        (
            Verdict::Pass,
            String::from("SMART status passed before and after the tests"),
        )
    };
    out.push(check(
        CheckRule::SmartStatus,
        verdict,
        None,
        "smart_status",
        None,
        None,
        DEVICE,
        message,
    ));
}

fn counters(h: &Health, out: &mut Vec<Check>) {
    let Some(after) = &h.after else {
        return;
    };
    for name in MUST_NOT_GROW {
        let (Some(&b), Some(&a)) = (h.before.counters.get(name), after.counters.get(name)) else {
            continue;
        };
        let grew = a > b;
        #[allow(clippy::cast_precision_loss)] // counters far below 2^53
        out.push(check(
            CheckRule::Counter,
            if grew { Verdict::Fail } else { Verdict::Pass },
            None,
            name,
            Some(a as f64),
            Some(b as f64),
            "acceptance.health.counters",
            if grew {
                format!("{name} grew during the run: {b} -> {a}")
            } else {
                format!("{name} did not grow: {a}")
            },
        ));
    }
    if let (Some(b), Some(a)) = (&h.before.nvme, &after.nvme) {
        let new = a.critical_warning & !b.critical_warning;
        out.push(check(
            CheckRule::Counter,
            if new != 0 { Verdict::Fail } else { Verdict::Pass },
            None,
            "critical_warning",
            Some(f64::from(a.critical_warning)),
            Some(f64::from(b.critical_warning)),
            "acceptance.health.counters",
            if new != 0 {
                format!(
                    "critical warning bits set during the run: {}",
                    crate::device::health::nvme_warning_text(new)
                )
            } else {
                String::from("no critical warning bit set during the run")
            },
        ));
    }
}

fn nvme_limits(readings: &[(&str, &HealthReading)], rules: &HealthRules, out: &mut Vec<Check>) {
    let Some((_, last)) = readings.iter().rev().find(|(_, r)| r.nvme.is_some()) else {
        return;
    };
    let Some(n) = &last.nvme else {
        return;
    };
    if let Some(max) = rules.percentage_used_max {
        let held = n.percentage_used <= max;
        out.push(check(
            CheckRule::PercentageUsed,
            if held { Verdict::Pass } else { Verdict::Fail },
            None,
            "percentage_used",
            Some(f64::from(n.percentage_used)),
            Some(f64::from(max)),
            "acceptance.health.percentage_used_max",
            format!(
                "{}% of the rated endurance used ({} {max}%)",
                n.percentage_used,
                if held { "at most" } else { "above" }
            ),
        ));
    }
    if rules.available_spare {
        let held = n.available_spare_pct >= n.available_spare_threshold_pct;
        out.push(check(
            CheckRule::AvailableSpare,
            if held { Verdict::Pass } else { Verdict::Fail },
            None,
            "available_spare_pct",
            Some(f64::from(n.available_spare_pct)),
            Some(f64::from(n.available_spare_threshold_pct)),
            DEVICE,
            format!(
                "available spare {}% {} the device's threshold {}%",
                n.available_spare_pct,
                if held { "at or above" } else { "below" },
                n.available_spare_threshold_pct
            ),
        ));
    }
}

/// Every reading: before, each test's highest, after; with where it was
/// taken.
fn temperatures(h: &Health) -> Vec<(String, i32)> {
    let mut v = Vec::new();
    if let Some(c) = h.before.temperature_c {
        v.push((String::from("before the tests"), c));
    }
    for t in &h.tests {
        if let Some(c) = t.max_temperature_c {
            v.push((format!("during {}", t.test), c));
        }
    }
    if let Some(c) = h.after.as_ref().and_then(|a| a.temperature_c) {
        v.push((String::from("after the tests"), c));
    }
    v
}

fn temperature(h: &Health, rules: &HealthRules, out: &mut Vec<Check>) {
    let readings = temperatures(h);
    let Some((when, hottest)) = readings.iter().max_by_key(|(_, c)| *c) else {
        return;
    };
    let device = h
        .before
        .warning_temperature_c
        .or_else(|| h.after.as_ref().and_then(|a| a.warning_temperature_c))
        .filter(|_| rules.temperature);
    // The lower of the device's warning temperature and the config's.
    let (limit, source) = match (device, rules.max_temperature_c) {
        (Some(d), Some(c)) if c < d => (c, "acceptance.health.max_temperature"),
        (Some(d), _) => (d, "device warning temperature"),
        (None, Some(c)) => (c, "acceptance.health.max_temperature"),
        (None, None) => return,
    };
    let held = *hottest < limit;
    out.push(check(
        CheckRule::Temperature,
        if held { Verdict::Pass } else { Verdict::Fail },
        None,
        "temperature_c",
        Some(f64::from(*hottest)),
        Some(f64::from(limit)),
        source,
        format!(
            "highest temperature {hottest} C ({when}) {} {limit} C",
            if held { "below" } else { "at or above" }
        ),
    ));
}
