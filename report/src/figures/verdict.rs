//! The acceptance verdict of documents (`ResultDoc::acceptance`, see
//! `bench_core::verdict::acceptance`) as the report shows it: the console's verdict
//! block and every check that did not pass (`show`), a row per disk at a
//! glance (`html`), and verdicts counted by model with every failed disk
//! and its reason (`compare`, `fleet`). A document without `acceptance`
//! (from a bootbench before verdicts) shows no verdict and says so.

use bench_core::document::result::{
    Acceptance, Check, CheckRule, ResultDoc, Status, TargetInfo, TargetVerdict, Verdict,
};
use bench_core::spec::Workload;
use bench_core::verdict::acceptance::verdict_block;
use bench_core::vocab::console::safe_lines;

use crate::read::Loaded;

/// What a document without `acceptance` shows instead of a verdict.
pub const NO_VERDICT: &str =
    "no acceptance verdict: the document has no `acceptance` (written by a bootbench before verdicts)";

/// A target's name in a verdict: its serial, else its path.
pub fn who(t: &TargetVerdict) -> &str {
    t.serial
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or(&t.target)
}

/// Every check that did not pass, with its target, in the document's order.
pub fn not_passed(a: &Acceptance) -> impl Iterator<Item = (&TargetVerdict, &Check)> {
    a.targets
        .iter()
        .flat_map(|t| t.checks.iter().map(move |c| (t, c)))
        .filter(|(_, c)| c.verdict != Verdict::Pass)
}

/// The check that gave a target its verdict: the first whose verdict is
/// the target's; `None` for a pass.
pub fn first_reason(t: &TargetVerdict) -> Option<&Check> {
    if t.verdict == Verdict::Pass {
        return None;
    }
    t.checks.iter().find(|c| c.verdict == t.verdict)
}

/// A check in one line: verdict, rule, test and figure, then its message.
pub fn check_line(c: &Check) -> String {
    let what = [c.test.as_deref(), c.figure.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let what = if what.is_empty() {
        String::new()
    } else {
        format!(" ({what})")
    };
    format!("{} {}{what}: {}", c.verdict.shout(), c.rule, c.message)
}

/// `show`'s opening: the verdict block as the console ends with it, then
/// every check that did not pass with its message; one line without a
/// verdict. Console-safe: the block is bench-core's, escaped once and cut
/// to its width after escaping, so it is not escaped again; the lines
/// after it go through [`safe_lines`].
pub fn show_text(doc: &ResultDoc) -> String {
    let Some(a) = &doc.acceptance else {
        return format!("{NO_VERDICT}\n");
    };
    let mut out: String = verdict_block(a).concat();
    let failed: Vec<_> = not_passed(a).collect();
    if !failed.is_empty() {
        let mut raw = String::from("checks that did not pass:\n");
        for (t, c) in failed {
            raw.push_str(&format!("  {} {}\n", who(t), check_line(c)));
        }
        out.push_str(&safe_lines(&raw));
    }
    out
}

/// One disk at a glance: its verdict, CrystalDiskMark's four figures where
/// the run has them (the first `ok` test of the workload on the disk:
/// `seq_read` and `seq_write` bytes/s, `rand_read` and `rand_write` IOPS),
/// its highest temperature and its SMART status check.
#[derive(Clone, Debug, PartialEq)]
pub struct Glance<'a> {
    /// The verdict.
    pub verdict: &'a TargetVerdict,
    /// (test name, figure) of seq_read (read bytes/s), seq_write (write
    /// bytes/s), rand_read (read IOPS), rand_write (write IOPS).
    pub figures: [Option<(&'a str, f64)>; 4],
    /// The highest temperature read, °C: before, during every test, after.
    pub max_temperature_c: Option<i32>,
    /// The worst verdict of its SMART status checks; `None` without one.
    pub smart: Option<Verdict>,
}

/// The workloads of [`Glance::figures`], the figure each gives, and its label.
pub const GLANCE_FIGURES: [(Workload, &str); 4] = [
    (Workload::SeqRead, "SEQ read MB/s"),
    (Workload::SeqWrite, "SEQ write MB/s"),
    (Workload::RandRead, "RND read IOPS"),
    (Workload::RandWrite, "RND write IOPS"),
];

/// The figure [`Glance`] takes from a test of `w` (one of [`GLANCE_FIGURES`]).
fn glance_figure(w: Workload, x: &bench_core::document::result::TestResult) -> Option<f64> {
    let s = &x.summary;
    match w {
        Workload::SeqRead => s.read_bytes_per_sec,
        Workload::SeqWrite => s.write_bytes_per_sec,
        Workload::RandRead => s.read_iops,
        _ => s.write_iops,
    }
}

/// The highest temperature of `t`'s health readings, °C.
fn max_temperature(t: &TargetInfo) -> Option<i32> {
    let h = t.health.as_ref()?;
    let during = h.tests.iter().filter_map(|x| x.max_temperature_c);
    let read = std::iter::once(&h.before)
        .chain(h.after.as_ref())
        .filter_map(|r| r.temperature_c);
    during.chain(read).max()
}

/// Every target of `doc` at a glance, in the verdict's order; `None`
/// without a verdict.
pub fn glance(doc: &ResultDoc) -> Option<Vec<Glance<'_>>> {
    let a = doc.acceptance.as_ref()?;
    // Each target's tests and each path's target, found once.
    let by_target = doc.tests_by_target();
    let mut info_of: std::collections::HashMap<&str, &TargetInfo> = std::collections::HashMap::new();
    for t in &doc.targets {
        info_of.entry(t.path.as_str()).or_insert(t);
    }
    Some(
        a.targets
            .iter()
            .map(|v| {
                let tests = ResultDoc::tests_of(&by_target, &v.target);
                let figures = GLANCE_FIGURES.map(|(w, _)| {
                    tests
                        .iter()
                        .copied()
                        .filter(|x| x.workload == w && x.status == Status::Ok)
                        .find_map(|x| glance_figure(w, x).map(|f| (x.name.as_str(), f)))
                });
                let smart = v
                    .checks
                    .iter()
                    .filter(|c| c.rule == CheckRule::SmartStatus)
                    .map(|c| c.verdict)
                    .reduce(Verdict::worst);
                let info = info_of.get(v.target.as_str()).copied();
                Glance {
                    verdict: v,
                    figures,
                    max_temperature_c: info.and_then(max_temperature),
                    smart,
                }
            })
            .collect(),
    )
}

/// The verdicts of one disk model over documents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelCount {
    /// The model (`-` when unknown).
    pub model: String,
    /// How many targets passed, warned and failed.
    pub pass: usize,
    /// Warned.
    pub warn: usize,
    /// Failed.
    pub fail: usize,
}

/// A failed target: its document, its verdict and the first failing check.
#[derive(Clone, Debug, PartialEq)]
pub struct Failed<'a> {
    /// The document's index in the list (0-based).
    pub doc: usize,
    /// The target's verdict.
    pub target: &'a TargetVerdict,
    /// The first check that failed it.
    pub reason: Option<&'a Check>,
}

/// The verdicts of `docs` counted by model (in the order first met), every
/// failed target with its reason, and how many documents had no verdict.
pub fn by_model(docs: &[Loaded]) -> (Vec<ModelCount>, Vec<Failed<'_>>, usize) {
    let accs: Vec<Option<&Acceptance>> = docs.iter().map(|l| l.doc.acceptance.as_ref()).collect();
    by_model_of(&accs)
}

/// [`by_model`] of each document's acceptance verdicts (`None` for a
/// document without), in document order.
pub fn by_model_of<'a>(accs: &[Option<&'a Acceptance>]) -> (Vec<ModelCount>, Vec<Failed<'a>>, usize) {
    let mut counts: Vec<ModelCount> = Vec::new();
    let mut failed = Vec::new();
    let mut without = 0;
    for (i, a) in accs.iter().enumerate() {
        let Some(a) = *a else {
            without += 1;
            continue;
        };
        for t in &a.targets {
            let model = t.model.as_deref().map_or("-", str::trim);
            let c = match counts.iter_mut().position(|c| c.model == model) {
                Some(k) => &mut counts[k],
                None => {
                    counts.push(ModelCount {
                        model: model.to_owned(),
                        ..ModelCount::default()
                    });
                    counts.last_mut().expect("just pushed")
                }
            };
            match t.verdict {
                Verdict::Pass => c.pass += 1,
                Verdict::Warn => c.warn += 1,
                Verdict::Fail => {
                    c.fail += 1;
                    failed.push(Failed {
                        doc: i,
                        target: t,
                        reason: first_reason(t),
                    });
                }
            }
        }
    }
    (counts, failed, without)
}

/// `compare`'s and `fleet`'s verdict section as text: a row per model
/// with its PASS, WARN and FAIL counts, then every failed disk with its
/// document (`[1]` = the first), path, serial and reason; a line for the
/// documents without a verdict.
pub fn by_model_text(docs: &[Loaded]) -> String {
    by_model_text_capped(docs, usize::MAX)
}

/// [`by_model_text`] naming at most `cap` failed disks, then how many more
/// there are (`fleet`'s summary).
pub fn by_model_text_capped(docs: &[Loaded], cap: usize) -> String {
    let accs: Vec<Option<&Acceptance>> = docs.iter().map(|l| l.doc.acceptance.as_ref()).collect();
    by_model_text_of(&accs, cap)
}

/// [`by_model_text_capped`] of each document's acceptance verdicts
/// (`None` for a document without), in document order.
pub fn by_model_text_of(accs: &[Option<&Acceptance>], cap: usize) -> String {
    let (counts, failed, without) = by_model_of(accs);
    let mut out = String::from("acceptance verdicts by model:\n");
    if !counts.is_empty() {
        let mut rows = vec![["model", "PASS", "WARN", "FAIL"].map(String::from).to_vec()];
        for c in &counts {
            rows.push(vec![
                c.model.clone(),
                c.pass.to_string(),
                c.warn.to_string(),
                c.fail.to_string(),
            ]);
        }
        use crate::figures::text::Align::{Left as L, Right as R};
        for l in crate::figures::text::table(&rows, &[L, R, R, R]).lines() {
            out.push_str(&format!("  {l}\n"));
        }
    }
    if without > 0 {
        out.push_str(&format!("  {without} document(s) without a verdict: {NO_VERDICT}\n"));
    }
    if !failed.is_empty() {
        out.push_str("failed disks:\n");
        for f in failed.iter().take(cap) {
            let t = f.target;
            out.push_str(&format!(
                "  [{}] {} serial {} model {}: {}\n",
                f.doc + 1,
                t.target,
                t.serial.as_deref().unwrap_or("-"),
                t.model.as_deref().unwrap_or("-"),
                f.reason.map_or("(no failing check recorded)", |c| c.message.as_str())
            ));
        }
        if failed.len() > cap {
            out.push_str(&format!(
                "  and {} more (`fleet --all` lists every one)\n",
                failed.len() - cap
            ));
        }
    }
    out
}
