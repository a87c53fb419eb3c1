//! A disk's health as rows, for `show` and the HTML report alike: the
//! headline figures and every counter, before, after and the delta; the
//! highest temperature of each test; the SMART attributes; the OCP C0h
//! log's figures beside the NVMe log's; Seagate FARM's main fields.

use bench_core::document::result::{
    FarmRecording, FarmTransport, Health, HealthReading, NvmeHealth, OcpSmart, TestTemperature,
};

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
    if let Some(o) = &h.before.ocp {
        out.extend(ocp_rows(o, a.and_then(|a| a.ocp.as_ref())));
    }
    out
}

/// The OCP C0h log's figures, like the NVMe log's: each counter's
/// before, after and delta.
fn ocp_rows(b: &OcpSmart, a: Option<&OcpSmart>) -> Vec<Row> {
    let figures: [Figure<OcpSmart, u128>; 18] = [
        ("OCP physical media written (bytes)", |x| x.physical_media_written_bytes),
        ("OCP physical media read (bytes)", |x| x.physical_media_read_bytes),
        ("OCP bad user NAND blocks", |x| u128::from(x.bad_user_nand_blocks.raw)),
        ("OCP bad system NAND blocks", |x| {
            u128::from(x.bad_system_nand_blocks.raw)
        }),
        ("OCP XOR recoveries", |x| u128::from(x.xor_recovery_count)),
        ("OCP uncorrectable read errors", |x| {
            u128::from(x.uncorrectable_read_errors)
        }),
        ("OCP soft ECC errors", |x| u128::from(x.soft_ecc_errors)),
        ("OCP end-to-end errors detected", |x| u128::from(x.end_to_end_detected)),
        ("OCP end-to-end errors corrected", |x| {
            u128::from(x.end_to_end_corrected)
        }),
        ("OCP system data used (%)", |x| u128::from(x.system_data_used_pct)),
        ("OCP thermal throttling events", |x| {
            u128::from(x.thermal_throttling_events)
        }),
        ("OCP thermal throttling status", |x| {
            u128::from(x.thermal_throttling_status)
        }),
        ("OCP PCIe correctable errors", |x| u128::from(x.pcie_correctable_errors)),
        ("OCP incomplete shutdowns", |x| u128::from(x.incomplete_shutdowns)),
        ("OCP free blocks (%)", |x| u128::from(x.free_blocks_pct)),
        ("OCP capacitor health (%)", |x| u128::from(x.capacitor_health)),
        ("OCP PLP starts", |x| x.plp_start_count),
        ("OCP endurance estimate", |x| x.endurance_estimate),
    ];
    figures
        .iter()
        .map(|(name, get)| {
            let before = get(b);
            let after = a.map(get);
            let delta = after.map_or_else(String::new, |af| {
                if af >= before {
                    format!("+{}", af - before)
                } else {
                    format!("-{}", before - af)
                }
            });
            [(*name).into(), before.to_string(), opt(after), delta]
        })
        .collect()
}

/// Seagate FARM's main fields, as (name, value) rows; empty without FARM.
pub fn farm(h: &Health) -> Vec<[String; 2]> {
    let Some(f) = &h.before.farm else {
        return Vec::new();
    };
    let text = |v: &Option<String>| v.clone();
    let num = |v: Option<u64>| v.map(|n| n.to_string());
    let temp = |v: Option<i64>| v.map(|n| n.to_string());
    let yes = |v: Option<bool>| v.map(|b| if b { "yes" } else { "no" }.to_string());
    let rows: [(&str, Option<String>); 21] = [
        (
            "source",
            f.transport.map(|t| {
                match t {
                    FarmTransport::Ata => "ATA log A6h",
                    FarmTransport::Scsi => "SCSI log page 3Dh/03h",
                }
                .to_string()
            }),
        ),
        ("model", text(&f.model)),
        ("serial", text(&f.serial)),
        ("firmware", text(&f.firmware)),
        ("power-on hours", num(f.power_on_hours)),
        ("spindle power-on hours", num(f.spindle_power_on_hours)),
        ("head flight hours", num(f.head_flight_hours)),
        ("power cycles", num(f.power_cycles)),
        ("head load events", num(f.head_load_events)),
        ("sectors read", num(f.sectors_read)),
        ("sectors written", num(f.sectors_written)),
        ("reallocated sectors", num(f.reallocated_sectors)),
        ("reallocation candidates", num(f.reallocation_candidates)),
        ("unrecoverable read errors", num(f.unrecoverable_read_errors)),
        ("unrecoverable write errors", num(f.unrecoverable_write_errors)),
        ("temperature (°C)", temp(f.temperature_c)),
        ("highest temperature (°C)", temp(f.highest_temperature_c)),
        (
            "recording",
            f.recording.map(|r| {
                match r {
                    FarmRecording::Smr => "SMR",
                    FarmRecording::Cmr => "CMR",
                }
                .to_string()
            }),
        ),
        ("depopulated", yes(f.depopulated)),
        ("helium pressure threshold tripped", yes(f.helium_pressure_tripped)),
        ("date of assembly (YYWW)", text(&f.date_of_assembly)),
    ];
    rows.into_iter()
        .filter_map(|(name, v)| v.map(|v| [name.to_string(), v]))
        .collect()
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
    use bench_core::document::result::Farm;
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
        assert!(farm(&h).is_empty(), "no FARM, no rows");
    }

    /// The OCP log's rows come after the counters, with their deltas (a
    /// counter that fell shows its fall); FARM's rows are the fields the
    /// drive gave, in order.
    #[test]
    fn ocp_rows_and_farm_fields() {
        let log = |bad: u64, cap: u16| OcpSmart {
            bad_user_nand_blocks: bench_core::document::result::RawNormalized {
                raw: bad,
                normalized: 100,
            },
            capacitor_health: cap,
            ..OcpSmart::default()
        };
        let reading = |o: OcpSmart| HealthReading {
            source: "nvme_smart_log".into(),
            ocp: Some(o),
            ..HealthReading::default()
        };
        let mut h = Health {
            before: reading(log(3, 100)),
            after: Some(reading(log(5, 90))),
            ..Health::default()
        };
        let r = rows(&h);
        assert_eq!(r.len(), 18);
        assert_eq!(r[2], ["OCP bad user NAND blocks", "3", "5", "+2"]);
        assert_eq!(r[15], ["OCP capacitor health (%)", "100", "90", "-10"]);
        h.after = None;
        assert_eq!(rows(&h)[2], ["OCP bad user NAND blocks", "3", "-", ""]);
        h.before.farm = Some(Farm {
            transport: Some(FarmTransport::Ata),
            serial: Some("ZA1".into()),
            power_on_hours: Some(26_304),
            recording: Some(FarmRecording::Cmr),
            depopulated: Some(false),
            ..Farm::default()
        });
        assert_eq!(
            farm(&h),
            [
                ["source", "ATA log A6h"],
                ["serial", "ZA1"],
                ["power-on hours", "26304"],
                ["recording", "CMR"],
                ["depopulated", "no"]
            ]
        );
    }
}
