//! A disk's burn-in (`targets[].burn_in`, [`BurnIn`], made by
//! `bench_core::passes::burnin::record`) as facts and rows, for `show` and the
//! HTML report alike: the area, the passes with what each wrote, how much
//! of it was written and read back and how fast, its bad and mismatched
//! blocks, and how it ended. Every figure names its unit: MB/s = 10^6 B/s,
//! MiB = 2^20 B; LBAs count logical blocks (`logical_block` bytes).

use bench_core::document::result::{BurnEndState, BurnIn};

use crate::figures::text;

/// The facts of a burn-in, each a name and its value with its unit:
/// `area`, `requests`, `done`, `elapsed`, `ended`.
pub fn facts(b: &BurnIn) -> Vec<(&'static str, String)> {
    let area = b.end_byte.saturating_sub(b.start_byte);
    let (done, planned) = b.done_and_planned();
    #[allow(clippy::cast_precision_loss)] // a percentage and a duration for display
    let (pct, secs) = (done as f64 * 100.0 / planned.max(1) as f64, b.elapsed_ns as f64 / 1e9);
    let mut out = vec![
        (
            "area",
            format!(
                "bytes {} to {} of the disk, {}, {} written and read back by every pass",
                b.start_byte,
                b.end_byte,
                text::bytes(area),
                if b.zones.is_some() {
                    "its zones' capacities"
                } else {
                    "all"
                }
            ),
        ),
        (
            "requests",
            format!(
                "{} B each, up to {} in flight, {} order; LBAs in logical blocks of {} B",
                b.bs, b.iodepth, b.mode, b.logical_block
            ),
        ),
        (
            "done",
            format!(
                "{} of {} written and read back ({pct:.1}%), {} of {} passes done",
                text::bytes(done),
                text::bytes(planned),
                b.passes.iter().filter(|p| p.end == BurnEndState::Done).count(),
                b.passes.len()
            ),
        ),
        ("elapsed", format!("{secs:.1} s")),
        ("ended", ended(b.end, b.error.as_deref())),
    ];
    if let Some(z) = &b.zones {
        out.insert(
            2,
            (
                "zones",
                format!(
                    "zone by zone: {} sequential and {} conventional zones, each to its capacity; {} skipped \
                     (offline, read-only or not wholly in the area); {} resets; sequential zones left {}",
                    z.sequential, z.conventional, z.skipped, z.resets, z.after
                ),
            ),
        );
    }
    out
}

/// How a burn-in (or a pass) ended, as the document names it, in words,
/// with its error when it has one.
pub fn ended(end: BurnEndState, error: Option<&str>) -> String {
    let what = match end {
        BurnEndState::Done => "every block written and read back",
        BurnEndState::TooManyBad => "more blocks were bad than the burn-in allows (max_bad): it stopped there",
        BurnEndState::Stopped => "interrupted, or its time ran out, before every pass was done",
        BurnEndState::Error => "the burn-in could not run or go on",
        BurnEndState::NotRun => "not run: an earlier pass ended the burn-in",
    };
    match error {
        Some(e) => format!("{end}: {what}: {e}"),
        None => format!("{end}: {what}"),
    }
}

/// The heading of [`pass_rows`].
pub const PASS_HEADING: [&str; 9] = [
    "pass",
    "pattern",
    "written",
    "write MB/s",
    "read back",
    "read MB/s",
    "bad",
    "mismatched",
    "ended",
];

/// One row per pass: its number, pattern, written and read-back bytes
/// (of the area) with their MB/s, its bad (unwritable and unreadable)
/// and mismatched blocks, how it ended.
pub fn pass_rows(b: &BurnIn) -> Vec<[String; 9]> {
    let rate = |v: Option<f64>| v.filter(|v| v.is_finite()).map_or("-".into(), text::mb_per_sec);
    b.passes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            [
                (i + 1).to_string(),
                p.pattern.clone(),
                text::bytes(p.written_bytes),
                rate(p.write_bytes_per_sec),
                text::bytes(p.verified_bytes),
                rate(p.verify_bytes_per_sec),
                (p.unwritable_lbas.len() + p.unreadable_lbas.len()).to_string(),
                p.mismatched_lbas.len().to_string(),
                p.end.to_string(),
            ]
        })
        .collect()
}

/// The LBA lists of the burn-in, every pass together: (what, LBAs).
pub fn lba_lists(b: &BurnIn) -> [(&'static str, &[u64]); 3] {
    [
        ("unwritable LBAs (no write reached them)", &b.unwritable_lbas),
        ("unreadable LBAs (no read returned them)", &b.unreadable_lbas),
        ("mismatched LBAs (read back other than written)", &b.mismatched_lbas),
    ]
}

/// A burn-in as the run makes it (sequential, badblocks' four patterns
/// over 64 MiB, one block unwritable in pass 2 and one mismatched in pass
/// 3, the last pass stopped halfway): the `show` and `html` tests'.
#[cfg(test)]
pub fn test_burn_in() -> BurnIn {
    use bench_core::document::result::BurnOrder;
    use bench_core::passes::burnin::{record, BurnSpec, PassOutcome, BADBLOCKS_PATTERNS};
    use bench_core::vocab::units::Nanos;
    const MIB: u64 = 1 << 20;
    let spec = BurnSpec {
        start: 0,
        end: 64 * MIB,
        chunk: 1 << 20,
        depth: 4,
        logical_block: 512,
        retries: 2,
        max_bad: 100,
        order: BurnOrder::Sequential,
        patterns: BADBLOCKS_PATTERNS.to_vec(),
        loops: 1,
        seed: 1,
        zones: None,
    };
    let passes: Vec<PassOutcome> = BADBLOCKS_PATTERNS
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let mut o = PassOutcome::new(p);
            o.planned = 64 * MIB;
            (o.written, o.verified) = (64 * MIB, 64 * MIB);
            (o.writes, o.reads) = (64, 64);
            // 200 MB/s written, 250 MB/s read back.
            o.write_span = Some((Nanos(0), Nanos(64 * MIB * 5)));
            o.read_span = Some((Nanos(0), Nanos(64 * MIB * 4)));
            match i {
                1 => {
                    o.unwritable = vec![4096];
                    o.written -= 512;
                    o.failed_writes = 1;
                }
                2 => o.mismatched = vec![70_000],
                3 => {
                    o.verified = 32 * MIB;
                    o.read_span = Some((Nanos(0), Nanos(32 * MIB * 4)));
                    o.end = BurnEndState::Stopped;
                }
                _ => {}
            }
            o
        })
        .collect();
    let mut r = record(&spec, &passes, Nanos(2_500_000_000), BurnEndState::Stopped);
    r.error = Some("the run was interrupted".into());
    r
}

/// The facts of a disk's preconditioning: `purge` (when one was asked),
/// `area`, `fill`, `rounds`, `steady state`, `ended`.
pub fn precondition_facts(p: &bench_core::document::result::Precondition) -> Vec<(&'static str, String)> {
    let area = p.end_byte.saturating_sub(p.start_byte);
    let (unit, scale) = precondition_unit(p);
    let fill = p.fill.as_ref().map_or("none".into(), |f| {
        let rate = f
            .bytes_per_sec
            .filter(|v| v.is_finite())
            .map_or("-".into(), text::mb_per_sec);
        #[allow(clippy::cast_precision_loss)] // a duration for display
        let secs = f.elapsed_ns as f64 / 1e9;
        format!(
            "{} written sequentially in 128 KiB writes, {rate} MB/s, {secs:.1} s",
            text::bytes(f.bytes)
        )
    });
    #[allow(clippy::cast_precision_loss)] // a duration for display
    let round_s = p.round_ns as f64 / 1e9;
    let window = match (p.window_mean, p.window_range, p.window_fit_excursion) {
        (Some(m), Some(r), Some(f)) if m > 0.0 => format!(
            "the last {} rounds: mean {:.1} {unit}, spread {:.1}% of it (limit {}%), fitted line moved {:.1}% (limit {}%)",
            p.window,
            m / scale,
            r * 100.0 / m,
            p.range_pct,
            f * 100.0 / m,
            p.slope_pct
        ),
        _ => format!("fewer rounds than the window of {}", p.window),
    };
    let mut facts = Vec::new();
    if let Some(pg) = &p.purge {
        #[allow(clippy::cast_precision_loss)] // a duration for display
        let secs = pg.elapsed_ns as f64 / 1e9;
        let method = pg.method.map_or("none chosen", |m| m.name());
        facts.push((
            "purge",
            if pg.done {
                format!("{} ({}): the disk's own erase, done in {secs:.1} s", pg.asked, method)
            } else {
                format!(
                    "{} ({}): NOT done after {secs:.1} s: {}",
                    pg.asked,
                    method,
                    pg.error.as_deref().unwrap_or("")
                )
            },
        ));
    }
    facts.extend([
        (
            "area",
            format!(
                "bytes {} to {} of the disk, {}",
                p.start_byte,
                p.end_byte,
                text::bytes(area)
            ),
        ),
        ("fill", fill),
        (
            "rounds",
            format!(
                "{} B {} writes, {} in flight, {round_s:.1} s each; {} of at most {}, judged by {unit}",
                p.bs,
                p.order,
                p.iodepth,
                p.rounds.len(),
                p.max_rounds
            ),
        ),
        (
            "steady state",
            match p.steady_round {
                Some(r) => format!("reached at round {r}; {window}"),
                None => format!("not reached; {window}"),
            },
        ),
        ("ended", {
            let what = match p.end {
                bench_core::document::result::PreconditionEnd::Steady => "the window of rounds is steady",
                bench_core::document::result::PreconditionEnd::RoundLimit => "the round limit came first",
                bench_core::document::result::PreconditionEnd::Stopped => "interrupted, or its time ran out",
                bench_core::document::result::PreconditionEnd::Error => "it could not run or go on",
            };
            match &p.error {
                Some(e) => format!("{}: {what}: {e}", p.end),
                None => format!("{}: {what}", p.end),
            }
        }),
    ]);
    facts
}

/// The unit a preconditioning's figures are shown in, and the divisor
/// from the document's: IOPS (writes/s), or MB/s (10^6 B/s).
pub fn precondition_unit(p: &bench_core::document::result::Precondition) -> (&'static str, f64) {
    if p.figure == "write_iops" {
        ("IOPS", 1.0)
    } else {
        ("MB/s", 1e6)
    }
}

/// A row per round: its number, its figure in [`precondition_unit`], a
/// bar against the largest round's, and `*` on the rounds of the last
/// window.
pub fn round_rows(p: &bench_core::document::result::Precondition) -> Vec<[String; 3]> {
    let (_, scale) = precondition_unit(p);
    let max = p.rounds.iter().map(|r| r.value).fold(0.0, f64::max);
    let window_from = p.rounds.len().saturating_sub(p.window as usize);
    p.rounds
        .iter()
        .enumerate()
        .map(|(i, r)| {
            [
                format!(
                    "{}{}",
                    i + 1,
                    if i >= window_from && p.window_mean.is_some() {
                        "*"
                    } else {
                        ""
                    }
                ),
                format!("{:.1}", r.value / scale),
                crate::figures::scan::bar(if max > 0.0 { r.value / max } else { 0.0 }),
            ]
        })
        .collect()
}

/// A preconditioning as the run makes it (a 1 GiB area, fill, 4 KiB
/// random writes, rounds of 60 s falling from 90,000 IOPS and level, steady
/// at round 7): the `show` and `html` tests'.
#[cfg(test)]
pub fn test_precondition() -> bench_core::document::result::Precondition {
    use bench_core::passes::steady::{record, PreconditionOutcome, PreconditionSpec, Round, Workload};
    use bench_core::vocab::units::Nanos;
    let spec = PreconditionSpec {
        start: 0,
        end: 1 << 30,
        fill: true,
        workload: Workload {
            bs: 4096,
            depth: 32,
            random: true,
        },
        round: Nanos::from_secs(60),
        max_rounds: 25,
        window: 5,
        range_pct: 20.0,
        slope_pct: 10.0,
        seed: 1,
        logical_block: 512,
    };
    let rounds = [90_000u64, 50_000, 31_000, 30_000, 30_500, 29_800, 30_200]
        .iter()
        .map(|&iops| Round {
            writes: iops * 60,
            bytes: iops * 60 * 4096,
            time: Nanos::from_secs(60),
        })
        .collect();
    record(
        &spec,
        &PreconditionOutcome {
            fill: Some((2 << 30, Nanos::from_secs(8))),
            rounds,
            steady_at: Some(7),
            ended: None,
        },
    )
}

#[cfg(test)]
mod purge_tests {
    use super::*;
    use bench_core::document::result::{EraseMethod, Purge};

    /// A purge asked for comes first among the facts: done, with the method
    /// and its time; not done, with why; none asked, no fact.
    #[test]
    fn the_purge_is_the_first_fact() {
        let mut p = test_precondition();
        assert!(precondition_facts(&p).iter().all(|(k, _)| *k != "purge"));
        p.purge = Some(Purge {
            asked: "auto".into(),
            method: Some(EraseMethod::NvmeFormatUserData),
            done: true,
            elapsed_ns: 2_500_000_000,
            error: None,
        });
        assert_eq!(
            precondition_facts(&p)[0],
            (
                "purge",
                "auto (nvme_format_user_data): the disk's own erase, done in 2.5 s".to_string()
            )
        );
        p.purge = Some(Purge {
            asked: "auto".into(),
            method: None,
            done: false,
            elapsed_ns: 0,
            error: Some("the disk supports no purge bootbench runs (it supports: none)".into()),
        });
        assert_eq!(
            precondition_facts(&p)[0].1,
            "auto (none chosen): NOT done after 0.0 s: the disk supports no purge bootbench runs (it supports: none)"
        );
    }
}

#[cfg(test)]
mod zone_tests {
    use super::*;
    use bench_core::document::result::{BurnZones, ZonesAfter};

    /// A zone-by-zone burn-in says so among its facts, after the
    /// requests; an ordinary one has no such fact.
    #[test]
    fn a_zoned_burn_in_says_how_it_went_over_the_zones() {
        let mut b = test_burn_in();
        assert!(facts(&b).iter().all(|(k, _)| *k != "zones"));
        b.zones = Some(BurnZones {
            sequential: 3,
            conventional: 1,
            skipped: 2,
            resets: 9,
            after: ZonesAfter::Empty,
        });
        assert_eq!(
            facts(&b)[2],
            (
                "zones",
                "zone by zone: 3 sequential and 1 conventional zones, each to its capacity; 2 skipped \
                 (offline, read-only or not wholly in the area); 9 resets; sequential zones left empty"
                    .to_string()
            )
        );
    }
}
