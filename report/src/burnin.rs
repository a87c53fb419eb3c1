//! A disk's burn-in (`targets[].burn_in`, [`BurnIn`], made by
//! `bench_core::burnin::record`) as facts and rows, for `show` and the
//! HTML report alike: the area, the passes with what each wrote, how much
//! of it was written and read back and how fast, its bad and mismatched
//! blocks, and how it ended. Every figure names its unit: MB/s = 10^6 B/s,
//! MiB = 2^20 B; LBAs count logical blocks (`logical_block` bytes).

use bench_core::result::{BurnEndState, BurnIn};

use crate::text;

/// The facts of a burn-in, each a name and its value with its unit:
/// `area`, `requests`, `done`, `elapsed`, `ended`.
pub fn facts(b: &BurnIn) -> Vec<(&'static str, String)> {
    let area = b.end_byte.saturating_sub(b.start_byte);
    let (done, planned) = b.done_and_planned();
    #[allow(clippy::cast_precision_loss)] // a percentage and a duration for display
    let (pct, secs) = (done as f64 * 100.0 / planned.max(1) as f64, b.elapsed_ns as f64 / 1e9);
    vec![
        (
            "area",
            format!(
                "bytes {} to {} of the disk, {}, written and read back by every pass",
                b.start_byte,
                b.end_byte,
                text::bytes(area)
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
    ]
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
    use bench_core::burnin::{record, BurnSpec, PassOutcome, BADBLOCKS_PATTERNS};
    use bench_core::result::BurnOrder;
    use bench_core::units::Nanos;
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
