//! A disk's health as rows, for `show` and the HTML report alike: the
//! headline figures and every counter, before, after and the delta; the
//! highest temperature of each test; the SMART attributes.

use bench_core::document::result::{Health, HealthReading, NvmeHealth, TestTemperature};

/// One row: the figure (its unit in its name), before, after, delta.
pub type Row = [String; 4];

/// A figure's name (its unit in it) and how to read it from a reading `R`.
type Figure<R, T> = (&'static str, fn(&R) -> T);

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn status(r: &HealthReading) -> String {
    match r.smart_passed {
        Some(true) => "ok".into(),
        Some(false) => "FAILED".into(),
        None => "-".into(),
    }
}

/// The first line: source and status, e.g. `ata_smart, status ok`; and
/// the reasons something was not read.
pub fn headline(h: &Health) -> String {
    let mut s = format!("health: {}, status {}", h.before.source, status(&h.before));
    if let Some(a) = &h.after {
        if a.smart_passed != h.before.smart_passed {
            s.push_str(&format!(" before, {} after", status(a)));
        }
    } else if h.before.source != "none" {
        s.push_str("; not read after the tests");
    }
    for (when, r) in [("before", Some(&h.before)), ("after", h.after.as_ref())] {
        if let Some(e) = r.and_then(|r| r.error.as_deref()) {
            s.push_str(&format!("; {when}: {e}"));
        }
    }
    s
}

/// The figures before and after, with the delta of the counters.
pub fn rows(h: &Health) -> Vec<Row> {
    let a = h.after.as_ref();
    let mut out: Vec<Row> = Vec::new();
    let mut put = |name: &str, b: String, af: String, d: String| {
        if b != "-" || af != "-" {
            out.push([name.into(), b, af, d]);
        }
    };
    // The figures of a reading, each with its unit in its name.
    let figures: [Figure<HealthReading, Option<String>>; 5] = [
        ("temperature (°C)", |r| r.temperature_c.map(|v| v.to_string())),
        ("temperature (K, as reported)", |r| {
            r.temperature_k.map(|v| v.to_string())
        }),
        ("warning temperature (°C)", |r| {
            r.warning_temperature_c.map(|v| v.to_string())
        }),
        ("critical temperature (°C)", |r| {
            r.critical_temperature_c.map(|v| v.to_string())
        }),
        ("power-on hours", |r| r.power_on_hours.map(|v| v.to_string())),
    ];
    for (name, get) in figures {
        put(name, opt(get(&h.before)), opt(a.and_then(get)), String::new());
    }
    if let Some(n) = &h.before.nvme {
        let an = a.and_then(|a| a.nvme.as_ref());
        let nvme: [Figure<NvmeHealth, String>; 4] = [
            ("critical warning", |x| format!("{:#04x}", x.critical_warning)),
            ("available spare (%)", |x| x.available_spare_pct.to_string()),
            ("spare threshold (%)", |x| x.available_spare_threshold_pct.to_string()),
            ("percentage used", |x| x.percentage_used.to_string()),
        ];
        for (name, get) in nvme {
            put(name, get(n), opt(an.map(get)), String::new());
        }
    }
    for (k, v) in &h.before.counters {
        let d = h.delta.get(k).map_or_else(String::new, |d| format!("{d:+}"));
        put(k, v.to_string(), opt(a.and_then(|a| a.counters.get(k))), d);
    }
    out
}

/// Each test's highest temperature: `name: 31 °C (before_after, 2 readings)`.
pub fn per_test(tests: &[TestTemperature]) -> Vec<String> {
    tests
        .iter()
        .map(|t| {
            format!(
                "{}: {} ({}, {} reading{})",
                t.test,
                t.max_temperature_c.map_or_else(|| "-".into(), |c| format!("{c} °C")),
                t.source,
                t.samples,
                if t.samples == 1 { "" } else { "s" }
            )
        })
        .collect()
}

/// The SMART attributes of the last reading: id, name, current, worst,
/// threshold, raw, and `FAILING` where it is.
pub fn attributes(h: &Health) -> Vec<[String; 7]> {
    let r = h.after.as_ref().unwrap_or(&h.before);
    r.attributes
        .iter()
        .map(|a| {
            [
                a.id.to_string(),
                a.name.clone().unwrap_or_else(|| "-".into()),
                a.current.to_string(),
                a.worst.to_string(),
                opt(a.threshold),
                a.raw.to_string(),
                if a.failing { "FAILING".into() } else { String::new() },
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn rows_show_before_after_and_delta() {
        let mut before = HealthReading {
            source: "nvme_smart_log".into(),
            smart_passed: Some(true),
            temperature_c: Some(50),
            temperature_k: Some(323),
            ..HealthReading::default()
        };
        before.counters.insert("media_errors".into(), 0);
        let mut after = before.clone();
        after.counters.insert("media_errors".into(), 2);
        after.smart_passed = Some(false);
        after.temperature_c = Some(52);
        let h = Health {
            before,
            after: Some(after),
            delta: BTreeMap::from([("media_errors".to_string(), 2)]),
            tests: vec![TestTemperature {
                test: "t".into(),
                source: "during".into(),
                samples: 3,
                max_temperature_c: Some(53),
            }],
        };
        let r = rows(&h);
        assert_eq!(r[0], ["temperature (°C)", "50", "52", ""]);
        assert_eq!(r[1], ["temperature (K, as reported)", "323", "323", ""]);
        assert_eq!(r.last().unwrap(), &["media_errors", "0", "2", "+2"]);
        assert!(
            !r.iter().any(|x| x[0].starts_with("power-on")),
            "absent figures give no row"
        );
        assert_eq!(headline(&h), "health: nvme_smart_log, status ok before, FAILED after");
        assert_eq!(per_test(&h.tests), ["t: 53 °C (during, 3 readings)"]);
        let h = Health { after: None, ..h };
        assert!(headline(&h).ends_with("not read after the tests"));
    }
}
