//! What `fleet` keeps of its documents: a few hundred bytes per disk, not
//! the documents.
//!
//! - [`Digest::of`] takes from one document what the reports need: its
//!   file, its machine (name, what names it, host model, CPU), when it
//!   started, its acceptance verdicts (every target's model and verdict;
//!   a failed target's path, serial and first failing check), and per whole
//!   disk (no array or layer) its path, serial, model and firmware, each
//!   figure bench-core analyses of each test that ended ok, and the marker
//!   of each test that did not.
//! - [`gather`] reads the files on every core (rayon), [`BATCH`] at a time
//!   in the order of the files, and keeps each document's digest only: a
//!   document is dropped once read, so memory grows by the digests.
//! - [`Builder`] joins the digests in that order: the strings many disks
//!   share (paths, models, firmware, host models, test names, markers) are
//!   kept once, a disk's figures as (column, value) pairs.
//! - [`Fleet`] is the finished view: the machines in natural order, the
//!   groups by disk model and firmware and by host model, the rows of the
//!   every-disk table. A row's cells are computed when drawn
//!   ([`Fleet::cells`]).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bench_core::document::result::{Acceptance, Check, CheckRule, Status, TargetVerdict, Verdict};
use bench_core::spec::Workload;
use bench_core::verdict::analysis::{is_outlier, median, metrics, DiskModel, Metric};
use rayon::prelude::*;

use super::{natural_cmp, Machine};
use crate::export::tidy::{self, whole_disk, FigureRow};
use crate::figures::text;
use crate::read::machine::{host_model, machine_id, IdBy};
use crate::read::{self, Loaded, ReadError};

// ---------------------------------------------------------------- one document

/// What the fleet reports need of one document (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Digest {
    /// The file name as given.
    pub file: String,
    /// What the reader accepted with reservations.
    pub warnings: Vec<String>,
    /// What names its machine.
    pub by: IdBy,
    /// Its machine's name ([`machine_id`]).
    pub machine: String,
    /// The host model ([`host_model`]).
    pub host_model: Option<String>,
    /// The CPU model.
    pub cpu: Option<String>,
    /// When the run started (ns since the Unix epoch).
    pub started_unix_ns: u64,
    /// Its acceptance verdicts, reduced to what the verdict sections show
    /// ([`slim`]); `None` for a document without.
    pub acceptance: Option<Acceptance>,
    /// Its whole disks, in target order.
    pub disks: Vec<DiskDigest>,
}

/// One whole disk of a [`Digest`].
#[derive(Clone, Debug, PartialEq)]
pub struct DiskDigest {
    /// Its path in the document.
    pub path: String,
    /// Its serial number.
    pub serial: Option<String>,
    /// Its model.
    pub model: Option<String>,
    /// Its firmware revision.
    pub firmware: Option<String>,
    /// Each figure bench-core analyses ([`metrics`]) of each test that ended
    /// ok, when usable (finite, above zero), in test order: (test,
    /// workload, figure, value).
    pub figures: Vec<(String, Workload, Metric, f64)>,
    /// Each test with no run that ended ok, and the marker of its first run
    /// (`skip`, `err`, ...: [`text::marker`]), in test order.
    pub markers: Vec<(String, String)>,
}

/// A usable figure: present, finite and above zero (as bench-core's
/// groups take them).
fn usable(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

/// `a` with what the verdict sections show and nothing else: each
/// target's model and verdict; a failed target also its path, serial and
/// first failing check ([`crate::figures::verdict::first_reason`]).
pub fn slim(a: &Acceptance) -> Acceptance {
    let targets = a
        .targets
        .iter()
        .map(|t| {
            if t.verdict == Verdict::Fail {
                TargetVerdict {
                    target: t.target.clone(),
                    serial: t.serial.clone(),
                    model: t.model.clone(),
                    verdict: t.verdict,
                    checks: crate::figures::verdict::first_reason(t).cloned().into_iter().collect(),
                }
            } else {
                TargetVerdict {
                    target: String::new(),
                    serial: None,
                    model: t.model.clone(),
                    verdict: t.verdict,
                    checks: Vec::new(),
                }
            }
        })
        .collect();
    Acceptance {
        verdict: a.verdict,
        rules: a.rules.clone(),
        targets,
    }
}

impl Digest {
    /// The digest of `l` (see the module docs).
    pub fn of(l: &Loaded) -> Digest {
        let doc = &l.doc;
        let (by, machine) = machine_id(l);
        // Each target's tests, in document order: one pass over the tests.
        let by_target = doc.tests_by_target();
        let disks = doc
            .targets
            .iter()
            .filter(|t| t.stack.is_none())
            .map(|t| {
                let tests = bench_core::document::result::ResultDoc::tests_of(&by_target, &t.path);
                let mut figures = Vec::new();
                for x in tests.iter().filter(|x| x.status == Status::Ok) {
                    for &m in metrics(x.workload) {
                        if let Some(v) = usable(m.get(&x.summary)) {
                            figures.push((x.name.clone(), x.workload, m, v));
                        }
                    }
                }
                // A test's marker once, and none for a test that also ran ok.
                let ok: HashSet<&str> = tests
                    .iter()
                    .filter(|y| y.status == Status::Ok)
                    .map(|y| y.name.as_str())
                    .collect();
                let mut seen: HashSet<&str> = HashSet::new();
                let mut markers: Vec<(String, String)> = Vec::new();
                for x in tests {
                    if ok.contains(x.name.as_str()) || seen.contains(x.name.as_str()) {
                        continue;
                    }
                    if let Some(m) = text::marker(&x.status) {
                        seen.insert(x.name.as_str());
                        markers.push((x.name.clone(), m));
                    }
                }
                DiskDigest {
                    path: t.path.clone(),
                    serial: t.serial.clone(),
                    model: t.model.clone(),
                    firmware: t.firmware.clone(),
                    figures,
                    markers,
                }
            })
            .collect();
        Digest {
            file: l.file.clone(),
            warnings: l.warnings.clone(),
            by,
            machine,
            host_model: host_model(&doc.host),
            cpu: doc.host.cpu_model.clone(),
            started_unix_ns: doc.run.started_unix_ns,
            acceptance: doc.acceptance.as_ref().map(slim),
            disks,
        }
    }
}

// ---------------------------------------------------------------- an export

/// A document's digest being gathered from the rows of a Parquet export.
struct FromRows {
    d: Digest,
    /// Each target's verdict, in the order first met.
    verdicts: Vec<TargetVerdict>,
    /// Per disk (as `d.disks`), the tests with a run that ended ok.
    ok: Vec<HashSet<String>>,
    /// The targets in `verdicts`.
    verdict_of: HashSet<String>,
    /// Each disk's index in `d.disks`, by path.
    disk_at: HashMap<String, usize>,
    /// Per disk, each test with a marker: its index in the disk's markers.
    marker_at: Vec<HashMap<String, usize>>,
    /// Per disk, the markers taken back (the test then ran ok), by index:
    /// dropped by `finish`.
    taken_back: Vec<HashSet<usize>>,
}

impl FromRows {
    fn new(r: &FigureRow) -> FromRows {
        let by = match r.machine_by.as_str() {
            "serial" => IdBy::Serial,
            "hostname" => IdBy::Hostname,
            _ => IdBy::File,
        };
        FromRows {
            d: Digest {
                file: r.file.clone(),
                warnings: Vec::new(),
                by,
                machine: r.machine.clone(),
                host_model: r.host_model.clone(),
                cpu: r.cpu_model.clone(),
                started_unix_ns: u64::try_from(r.run_started_unix_ns).unwrap_or(0),
                acceptance: None,
                disks: Vec::new(),
            },
            verdicts: Vec::new(),
            ok: Vec::new(),
            verdict_of: HashSet::new(),
            disk_at: HashMap::new(),
            marker_at: Vec::new(),
            taken_back: Vec::new(),
        }
    }

    fn add(&mut self, r: FigureRow) {
        if let Some(v) = r
            .disk_verdict
            .as_deref()
            .and_then(|n| Verdict::ALL.iter().copied().find(|v| v.name() == n))
        {
            if self.verdict_of.insert(r.disk.clone()) {
                // The reason's message and rule are what the verdict
                // sections show of the check; the rest of it is not in the
                // table.
                let rule = r
                    .disk_verdict_rule
                    .as_deref()
                    .and_then(|n| CheckRule::ALL.iter().copied().find(|c| c.name() == n));
                let checks = match (rule, &r.disk_verdict_reason) {
                    (Some(rule), Some(message)) if v != Verdict::Pass => vec![Check {
                        rule,
                        verdict: v,
                        test: None,
                        figure: None,
                        value: None,
                        limit: None,
                        source: String::new(),
                        message: message.clone(),
                    }],
                    _ => Vec::new(),
                };
                self.verdicts.push(TargetVerdict {
                    target: r.disk.clone(),
                    serial: r.disk_serial.clone(),
                    model: r.disk_model.clone(),
                    verdict: v,
                    checks,
                });
            }
        }
        if r.run != "alone" || !whole_disk(&r.target_kind) {
            return;
        }
        let k = match self.disk_at.get(&r.disk) {
            Some(&k) => k,
            None => {
                self.disk_at.insert(r.disk.clone(), self.d.disks.len());
                self.marker_at.push(HashMap::new());
                self.taken_back.push(HashSet::new());
                self.d.disks.push(DiskDigest {
                    path: r.disk.clone(),
                    serial: r.disk_serial.clone(),
                    model: r.disk_model.clone(),
                    firmware: r.disk_firmware.clone(),
                    figures: Vec::new(),
                    markers: Vec::new(),
                });
                self.ok.push(HashSet::new());
                self.d.disks.len() - 1
            }
        };
        let (disk, ok, marker_at) = (&mut self.d.disks[k], &mut self.ok[k], &mut self.marker_at[k]);
        if r.status == "ok" {
            if let Some(i) = marker_at.remove(&r.test) {
                self.taken_back[k].insert(i);
            }
            if !ok.contains(&r.test) {
                ok.insert(r.test.clone());
            }
        } else if !ok.contains(&r.test) && !marker_at.contains_key(&r.test) {
            if let Some(m) = text::marker_of_state(&r.status) {
                marker_at.insert(r.test.clone(), disk.markers.len());
                disk.markers.push((r.test.clone(), m));
            }
        }
        // A summary figure bench-core judges, of a test that ended ok.
        let (Some(workload), Some(figure)) = (Workload::from_name(&r.workload), r.figure.as_deref()) else {
            return;
        };
        let Some(&metric) = metrics(workload).iter().find(|m| m.name() == figure) else {
            return;
        };
        if r.status == "ok" && r.step.is_none() && r.label.is_none() {
            if let Some(v) = usable(r.value) {
                disk.figures.push((r.test, workload, metric, v));
            }
        }
    }

    fn finish(mut self) -> Digest {
        for (disk, gone) in self.d.disks.iter_mut().zip(&self.taken_back) {
            if !gone.is_empty() {
                let mut i = 0;
                disk.markers.retain(|_| {
                    i += 1;
                    !gone.contains(&(i - 1))
                });
            }
        }
        if !self.verdicts.is_empty() {
            let worst = [Verdict::Fail, Verdict::Warn]
                .into_iter()
                .find(|w| self.verdicts.iter().any(|t| t.verdict == *w))
                .unwrap_or(Verdict::Pass);
            self.d.acceptance = Some(slim(&Acceptance {
                verdict: worst,
                rules: String::new(),
                targets: self.verdicts,
            }));
        }
        self.d
    }
}

/// The columns of the figures table a digest is made of
/// ([`FromRows::add`]): the others are not read.
const DIGEST_COLUMNS: &[&str] = &[
    "file",
    "machine",
    "machine_by",
    "host_model",
    "cpu_model",
    "run_started_unix_ns",
    "disk",
    "target_kind",
    "disk_serial",
    "disk_model",
    "disk_firmware",
    "disk_verdict",
    "disk_verdict_reason",
    "disk_verdict_rule",
    "run",
    "test",
    "workload",
    "status",
    "label",
    "figure",
    "value",
];

/// Each document of a Parquet export's figures table
/// ([`crate::export::tidy`]) as a digest, in the file's order, without holding the
/// table: its rows with `step` null only (each test's summary figures, or
/// its one row without), which hold all a digest takes. A document is its rows with one `file`, which the export writes
/// together. What the table does not hold is not in the digest: a disk
/// with no test, a target's verdict without rows, the checks' figures and
/// limits (the reason's message and rule are kept).
pub fn parquet_digests(path: &Path, mut each: impl FnMut(Digest)) -> Result<(), String> {
    let mut cur: Option<FromRows> = None;
    tidy::for_each_summary_row(path, DIGEST_COLUMNS, |r| {
        if cur.as_ref().is_some_and(|c| c.d.file != r.file) {
            if let Some(c) = cur.take() {
                each(c.finish());
            }
        }
        cur.get_or_insert_with(|| FromRows::new(&r)).add(r);
    })?;
    if let Some(c) = cur {
        each(c.finish());
    }
    Ok(())
}

// ---------------------------------------------------------------- inputs

/// What `fleet` read, and the files it skipped.
#[derive(Debug)]
pub struct Gathered {
    /// The view of the documents read, in the order of the paths (a
    /// directory's in natural order of the file names).
    pub fleet: Fleet,
    /// The files that are not result documents this tool reads.
    pub skipped: Vec<ReadError>,
}

/// Why `fleet` has nothing to report.
#[derive(Debug)]
pub enum GatherError {
    /// A path that is neither a readable file nor a readable directory.
    Path {
        /// The path as given.
        path: String,
        /// What is wrong.
        what: String,
    },
    /// No result document in any of the paths.
    Nothing {
        /// The paths as given.
        paths: Vec<String>,
        /// How many files were skipped.
        skipped: usize,
    },
}

impl std::fmt::Display for GatherError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GatherError::Path { path, what } => write!(f, "{path}: {what}"),
            GatherError::Nothing { paths, skipped } => write!(
                f,
                "no bootbench result document in {} ({skipped} file(s) skipped)",
                paths.join(", ")
            ),
        }
    }
}

impl std::error::Error for GatherError {}

/// A directory entry `fleet` reads: a file whose name ends in `.json`, or
/// in `.parquet` but not `.runs.parquet` (an export's run table: the
/// figures table beside it is read), any case.
fn is_input(p: &Path) -> bool {
    let ext = |p: &Path, x: &str| p.extension().is_some_and(|e| e.eq_ignore_ascii_case(x));
    let runs = p.file_stem().is_some_and(|s| ext(Path::new(s), "runs"));
    (ext(p, "json") || (ext(p, "parquet") && !runs)) && p.is_file()
}

/// What one input file gave: a document's digest, a Parquet export to
/// read in its turn, or why it is skipped.
enum Input {
    Doc(Digest),
    Parquet,
    Bad(ReadError),
}

/// Read one input file (on a worker thread), opened once (a FIFO is read
/// once): a Parquet file (by its magic number, `PAR1`) is left to be read
/// in order.
fn input(f: &Path) -> Input {
    use std::io::Read as _;
    let file = f.display().to_string();
    let cannot = |e: std::io::Error| {
        Input::Bad(ReadError {
            file: file.clone(),
            what: format!("cannot read: {e}"),
        })
    };
    let mut h = match std::fs::File::open(f) {
        Ok(h) => h,
        Err(e) => return cannot(e),
    };
    let mut bytes = Vec::new();
    if let Err(e) = (&mut h).take(4).read_to_end(&mut bytes) {
        return cannot(e);
    }
    if bytes == b"PAR1" {
        return Input::Parquet;
    }
    if let Err(e) = h.read_to_end(&mut bytes) {
        return cannot(e);
    }
    match read::from_bytes(&file, bytes) {
        Ok(l) => Input::Doc(Digest::of(&l)),
        Err(e) => Input::Bad(e),
    }
}

/// How many files [`gather`] reads at once (on every core) before it joins
/// their digests: the documents in memory at a time are at most the
/// threads', the digests waiting to be joined at most this many.
pub const BATCH: usize = 256;

/// The files `paths` name: each file itself, each directory's `*.json`
/// files in natural order of their names; a file named twice (itself and
/// through its directory) once.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, GatherError> {
    let fail = |p: &Path, what: String| GatherError::Path {
        path: p.display().to_string(),
        what,
    };
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| fail(p, format!("cannot read: {e}")))?;
        if !meta.is_dir() {
            files.push(p.clone());
            continue;
        }
        let mut found = Vec::new();
        for entry in std::fs::read_dir(p).map_err(|e| fail(p, format!("cannot list the directory: {e}")))? {
            let path = entry
                .map_err(|e| fail(p, format!("cannot list the directory: {e}")))?
                .path();
            if is_input(&path) {
                found.push(path);
            }
        }
        // Natural order, as the machines: `m2-1.json` before `m10-1.json`.
        found.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        files.extend(found);
    }
    let mut seen = HashSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    Ok(files)
}

/// Read every document of `paths` (see the module docs) into one view.
pub fn gather(paths: &[PathBuf]) -> Result<Gathered, GatherError> {
    let mut files = files(paths)?;
    // Taken from the end a batch at a time, so each name is freed once read.
    files.reverse();
    let mut b = Builder::default();
    let mut skipped = Vec::new();
    while !files.is_empty() {
        let batch: Vec<PathBuf> = files
            .split_off(files.len().saturating_sub(BATCH))
            .into_iter()
            .rev()
            .collect();
        let inputs: Vec<Input> = batch.par_iter().map(|f| input(f)).collect();
        for (f, i) in batch.iter().zip(inputs) {
            match i {
                Input::Doc(d) => b.add(d),
                Input::Bad(e) => skipped.push(e),
                Input::Parquet => {
                    let mut n = 0;
                    if let Err(what) = parquet_digests(f, |d| {
                        n += 1;
                        b.add(d);
                    }) {
                        let file = f.display().to_string();
                        // The error names the file already.
                        let what = what.strip_prefix(&format!("{file}: ")).unwrap_or(&what).to_owned();
                        let what = if n > 0 {
                            format!("{what} (the {n} document(s) before it are read)")
                        } else {
                            what
                        };
                        skipped.push(ReadError { file, what });
                    }
                }
            }
        }
    }
    if b.docs.is_empty() {
        return Err(GatherError::Nothing {
            paths: paths.iter().map(|p| p.display().to_string()).collect(),
            skipped: skipped.len(),
        });
    }
    Ok(Gathered {
        fleet: b.finish(),
        skipped,
    })
}

// ---------------------------------------------------------------- the view

/// Strings many disks share, each kept once and named by its index.
#[derive(Debug, Default)]
struct Strings {
    all: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = u32::try_from(self.all.len()).expect("fewer than 2^32 distinct strings");
        let shared: Arc<str> = s.into();
        self.all.push(Arc::clone(&shared));
        self.index.insert(shared, i);
        i
    }

    /// The one copy of `s`.
    fn shared(&mut self, s: &str) -> Arc<str> {
        let i = self.id(s);
        Arc::clone(&self.all[i as usize])
    }

    fn get(&self, i: u32) -> &str {
        self.all.get(i as usize).map_or("", |s| s)
    }
}

/// A document of the view.
#[derive(Debug)]
pub struct Doc {
    /// The file name as given.
    pub file: String,
    /// When the run started (ns since the Unix epoch).
    pub started_unix_ns: u64,
    /// Its acceptance verdicts ([`slim`]).
    pub acceptance: Option<Box<Acceptance>>,
    /// What the reader accepted with reservations.
    pub warnings: Box<[String]>,
    /// Its machine (index into [`Fleet::machines`]).
    pub machine: usize,
    /// The host model it names.
    host_model: Option<u32>,
    /// Its disks (indexes into the view's disks).
    disks: Range<u32>,
}

/// A whole disk of one document.
#[derive(Debug)]
struct Disk {
    doc: u32,
    path: u32,
    serial: Option<Box<str>>,
    model: Option<u32>,
    firmware: Option<u32>,
    /// (column, value), in test order.
    figures: Box<[(u16, f64)]>,
    /// (test, marker).
    markers: Box<[(u32, u32)]>,
}

/// A whole disk of one document, as the reports name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskView<'a> {
    /// The document (index into [`Fleet::docs`]).
    pub doc: usize,
    /// Its path in the document.
    pub path: &'a str,
    /// Its serial number.
    pub serial: Option<&'a str>,
    /// Its model.
    pub model: Option<&'a str>,
    /// Its firmware revision.
    pub firmware: Option<&'a str>,
}

/// The key of the host-model groups: the machine's model and the disk's
/// model and firmware.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostDisk {
    /// The host model ([`host_model`]).
    pub host: String,
    /// The disk's model and firmware.
    pub disk: DiskModel,
}

/// A column of the every-disk table: one test and one of its figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The test's name.
    pub test: String,
    /// Its workload.
    pub workload: Workload,
    /// The figure.
    pub metric: Metric,
    /// The test's name among the view's strings.
    test_id: u32,
}

/// A cell of the every-disk table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// The figure, in the metric's unit; `outlier` when the disk is an
    /// outlier of its model and firmware group in this test and figure.
    Figure {
        /// The value.
        value: f64,
        /// More than [`bench_core::verdict::analysis::OUTLIER_BELOW`] below its
        /// group's median.
        outlier: bool,
    },
    /// The test did not end ok: `skip`, `err`, ... ([`text::marker`]).
    Marker(String),
    /// No such test on this disk, or no usable figure.
    NotRun,
}

/// A row of the every-disk table: one whole disk of one document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskRow {
    /// The machine (index into [`Fleet::machines`]).
    pub machine: usize,
    /// The document (index into [`Fleet::docs`]).
    pub doc: usize,
    /// The disk ([`Fleet::disk`]).
    pub disk: usize,
}

/// One disk's figure in a [`Group`]: 12 bytes (packed: a fleet's groups
/// hold one per disk and figure, twice).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, packed(4))]
pub struct Entry {
    disk: u32,
    /// The figure, in the metric's unit.
    pub value: f64,
}

impl Entry {
    /// The disk ([`Fleet::disk`]).
    pub fn disk(&self) -> usize {
        self.disk as usize
    }
}

/// The disks of one key (a disk model and firmware, or a host model with
/// them) with one test's figure each, over all the documents: bench-core's
/// fleet group ([`bench_core::verdict::analysis::FleetGroup`]) with its disks named
/// by index, so a fleet of any size keeps a few bytes per figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Group<K> {
    /// What the disks share.
    pub key: K,
    /// The test's name.
    pub test: String,
    /// Its workload.
    pub workload: Workload,
    /// The figure compared.
    pub metric: Metric,
    /// Each disk's figure, in document and target order.
    pub entries: Vec<Entry>,
    /// Their median (bench-core's [`median`]).
    pub median: f64,
    /// The lowest figure.
    pub min: f64,
    /// The highest figure.
    pub max: f64,
}

impl<K> Group<K> {
    /// bench-core's outlier rule ([`is_outlier`]) against this group's
    /// median.
    pub fn is_outlier(&self, value: f64) -> bool {
        is_outlier(value, self.median)
    }

    /// The entries more than the rule's share below the median.
    pub fn outliers(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(move |e| self.is_outlier(e.value))
    }
}

/// Where each key's group is, by the key's ids and the column.
type GroupIndex<Id> = HashMap<(Id, u16), usize>;

/// Groups being built: each key's group, found by the key.
#[derive(Debug)]
struct Grouping<Id, K> {
    groups: Vec<Group<K>>,
    index: GroupIndex<Id>,
    /// Each group's entries, counted in a first pass.
    counts: Vec<usize>,
}

impl<Id: std::hash::Hash + Eq + Copy, K> Grouping<Id, K> {
    fn new() -> Self {
        Grouping {
            groups: Vec::new(),
            index: HashMap::new(),
            counts: Vec::new(),
        }
    }

    /// Add `entry` to its group; with `count`, only count it (a first
    /// pass, so each group's entries are allocated once, to their number).
    fn push(&mut self, count: bool, id: Id, col: u16, columns: &[Column], key: impl FnOnce() -> K, entry: Entry) {
        let groups = &mut self.groups;
        let g = *self.index.entry((id, col)).or_insert_with(|| {
            let c = &columns[usize::from(col)];
            groups.push(Group {
                key: key(),
                test: c.test.clone(),
                workload: c.workload,
                metric: c.metric,
                entries: Vec::new(),
                median: 0.0,
                min: 0.0,
                max: 0.0,
            });
            groups.len() - 1
        });
        if count {
            if self.counts.len() <= g {
                self.counts.resize(g + 1, 0);
            }
            self.counts[g] += 1;
        } else {
            self.groups[g].entries.push(entry);
        }
    }

    /// After the counting pass: room for each group's entries.
    fn reserve(&mut self) {
        for (g, &n) in self.groups.iter_mut().zip(&self.counts) {
            g.entries.reserve_exact(n);
        }
        self.counts = Vec::new();
    }

    /// The groups of two or more disks, in the order first seen, with
    /// their median, lowest and highest figure; and where each key's group
    /// is.
    fn finish(self) -> (Vec<Group<K>>, GroupIndex<Id>) {
        let mut kept = Vec::new();
        let mut at = vec![usize::MAX; self.groups.len()];
        for (i, mut g) in self.groups.into_iter().enumerate() {
            if g.entries.len() < 2 {
                continue;
            }
            let mut v: Vec<f64> = g.entries.iter().map(|e| e.value).collect();
            g.median = median(&mut v);
            (g.min, g.max) = (v[0], v[v.len() - 1]);
            g.entries.shrink_to_fit();
            at[i] = kept.len();
            kept.push(g);
        }
        let index = self
            .index
            .into_iter()
            .filter(|&(_, i)| at[i] != usize::MAX)
            .map(|(k, i)| (k, at[i]))
            .collect();
        (kept, index)
    }
}

/// Joins [`Digest`]s into a [`Fleet`], in the order added.
#[derive(Debug, Default)]
pub struct Builder {
    strings: Strings,
    docs: Vec<Doc>,
    disks: Vec<Disk>,
    machines: Vec<Machine>,
    machine_index: HashMap<(IdBy, Arc<str>), usize>,
    columns: Vec<Column>,
    column_index: HashMap<(u32, Metric), u16>,
}

impl Builder {
    /// Add one document's digest.
    pub fn add(&mut self, d: Digest) {
        let doc = u32::try_from(self.docs.len()).expect("fewer than 2^32 documents");
        let machines = &mut self.machines;
        let name: Arc<str> = d.machine.into();
        let m = *self.machine_index.entry((d.by, Arc::clone(&name))).or_insert_with(|| {
            machines.push(Machine {
                name,
                by: d.by,
                model: None,
                cpu: None,
                docs: Vec::new(),
                disks: 0,
            });
            machines.len() - 1
        });
        let machine = &mut self.machines[m];
        machine.docs.push(self.docs.len());
        if machine.model.is_none() {
            machine.model = d.host_model.as_deref().map(|h| self.strings.shared(h));
        }
        if machine.cpu.is_none() {
            machine.cpu = d.cpu.as_deref().map(|c| self.strings.shared(c));
        }
        let first = self.disks.len();
        for k in d.disks {
            let s = &mut self.strings;
            let mut figures = Vec::with_capacity(k.figures.len());
            for (test, workload, metric, value) in k.figures {
                let test_id = s.id(&test);
                let columns = &mut self.columns;
                let col = *self.column_index.entry((test_id, metric)).or_insert_with(|| {
                    columns.push(Column {
                        test,
                        workload,
                        metric,
                        test_id,
                    });
                    u16::try_from(columns.len() - 1).expect("fewer than 2^16 tests and figures")
                });
                figures.push((col, value));
            }
            let markers = k.markers.iter().map(|(t, m)| (s.id(t), s.id(m))).collect();
            self.disks.push(Disk {
                doc,
                path: s.id(&k.path),
                serial: k.serial.map(String::into_boxed_str),
                model: k.model.as_deref().map(|x| s.id(x)),
                firmware: k.firmware.as_deref().map(|x| s.id(x)),
                figures: figures.into_boxed_slice(),
                markers,
            });
        }
        let host_model = d.host_model.as_deref().map(|h| self.strings.id(h));
        self.docs.push(Doc {
            file: d.file,
            started_unix_ns: d.started_unix_ns,
            acceptance: d.acceptance.map(Box::new),
            warnings: d.warnings.into_boxed_slice(),
            machine: m,
            host_model,
            disks: u32::try_from(first).expect("fewer than 2^32 disks")
                ..u32::try_from(self.disks.len()).expect("fewer than 2^32 disks"),
        });
    }

    /// The view of every digest added.
    pub fn finish(self) -> Fleet {
        let Builder {
            strings,
            mut docs,
            mut disks,
            mut machines,
            columns,
            machine_index,
            column_index,
        } = self;
        // Only joining needs them; and the room the lists grew into is
        // given back before the groups are made.
        drop((machine_index, column_index));
        docs.shrink_to_fit();
        disks.shrink_to_fit();
        machines.shrink_to_fit();
        // Those named by serial, then by host name, then by file name, each
        // in natural order of the names (`m2` before `m10`).
        let mut order: Vec<usize> = (0..machines.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&machines[a], &machines[b]);
            a.by.cmp(&b.by).then_with(|| natural_cmp(&a.name, &b.name))
        });
        let mut rank = vec![0; machines.len()];
        for (new, &old) in order.iter().enumerate() {
            rank[old] = new;
        }
        let mut taken: Vec<Option<Machine>> = machines.drain(..).map(Some).collect();
        machines = order.iter().filter_map(|&old| taken[old].take()).collect();
        for d in &mut docs {
            d.machine = rank[d.machine];
        }
        for m in &mut machines {
            // A disk told apart by serial, else by path.
            let mut seen: HashSet<(bool, &str)> = HashSet::new();
            for &d in &m.docs {
                let r = &docs[d].disks;
                for k in &disks[r.start as usize..r.end as usize] {
                    seen.insert(k.serial.as_deref().map_or((false, strings.get(k.path)), |s| (true, s)));
                }
            }
            m.disks = seen.len();
        }
        let mut by_disk = Grouping::new();
        let mut by_host = Grouping::new();
        // Twice over the disks: to count each group's entries, then to
        // fill them in room made to measure.
        for count in [true, false] {
            if !count {
                by_disk.reserve();
                by_host.reserve();
            }
            for (i, k) in disks.iter().enumerate() {
                let (Some(model), Some(firmware)) = (k.model, k.firmware) else {
                    continue;
                };
                let disk_model = || DiskModel {
                    model: strings.get(model).to_owned(),
                    firmware: strings.get(firmware).to_owned(),
                };
                let host = docs[k.doc as usize].host_model;
                for &(col, value) in k.figures.iter() {
                    let e = Entry {
                        disk: u32::try_from(i).expect("fewer than 2^32 disks"),
                        value,
                    };
                    by_disk.push(count, (model, firmware), col, &columns, disk_model, e);
                    if let Some(h) = host {
                        let key = || HostDisk {
                            host: strings.get(h).to_owned(),
                            disk: disk_model(),
                        };
                        by_host.push(count, (h, model, firmware), col, &columns, key, e);
                    }
                }
            }
        }
        let (by_disk, by_disk_index) = by_disk.finish();
        let (by_host, _) = by_host.finish();
        let mut rows = Vec::with_capacity(disks.len());
        for (mi, m) in machines.iter().enumerate() {
            for &d in &m.docs {
                rows.extend(docs[d].disks.clone().map(|disk| DiskRow {
                    machine: mi,
                    doc: d,
                    disk: disk as usize,
                }));
            }
        }
        Fleet {
            docs,
            machines,
            columns,
            rows,
            by_host,
            by_disk,
            disks,
            strings,
            by_disk_index,
        }
    }
}

/// Everything the fleet reports show, computed once from the digests of
/// the documents.
#[derive(Debug)]
pub struct Fleet {
    /// The documents, in the order read.
    pub docs: Vec<Doc>,
    /// The machines: by serial, then by host name, then by file name, each
    /// in natural order of the names ([`natural_cmp`]).
    pub machines: Vec<Machine>,
    /// The every-disk table's columns: each test and figure that ended ok
    /// with a usable figure on at least one whole disk, in the order first
    /// seen.
    pub columns: Vec<Column>,
    /// The every-disk table's rows, machine by machine.
    pub rows: Vec<DiskRow>,
    /// The groups by host model, disk model and firmware.
    pub by_host: Vec<Group<HostDisk>>,
    /// The groups by disk model and firmware.
    pub by_disk: Vec<Group<DiskModel>>,
    disks: Vec<Disk>,
    strings: Strings,
    /// Where each (model, firmware, column)'s group is in `by_disk`.
    by_disk_index: GroupIndex<(u32, u32)>,
}

impl Fleet {
    /// The view of `docs` (documents already read).
    pub fn new(docs: &[Loaded]) -> Fleet {
        let mut b = Builder::default();
        for l in docs {
            b.add(Digest::of(l));
        }
        b.finish()
    }

    /// Disk `i` (a [`DiskRow::disk`], an [`Entry::disk`]).
    pub fn disk(&self, i: usize) -> DiskView<'_> {
        let k = &self.disks[i];
        DiskView {
            doc: k.doc as usize,
            path: self.strings.get(k.path),
            serial: k.serial.as_deref(),
            model: k.model.map(|m| self.strings.get(m)),
            firmware: k.firmware.map(|f| self.strings.get(f)),
        }
    }

    /// The document of a group's entry (index into [`Fleet::docs`]).
    pub fn doc_of(&self, e: &Entry) -> usize {
        self.disks[e.disk()].doc as usize
    }

    /// How many whole disks the documents hold (a disk in two documents
    /// twice).
    pub fn disk_count(&self) -> usize {
        self.disks.len()
    }

    /// The name of document `doc`'s machine.
    pub fn machine_name(&self, doc: usize) -> &str {
        self.docs
            .get(doc)
            .and_then(|d| self.machines.get(d.machine))
            .map_or("-", |m| &*m.name)
    }

    /// On how many machines a group's disks are.
    pub fn machines_in<K>(&self, g: &Group<K>) -> usize {
        g.entries
            .iter()
            .filter_map(|e| self.docs.get(self.doc_of(e)).map(|d| d.machine))
            .collect::<HashSet<_>>()
            .len()
    }

    /// The group by disk model and firmware of disk `disk` in column `col`.
    pub fn group_of(&self, disk: usize, col: usize) -> Option<&Group<DiskModel>> {
        let k = &self.disks[disk];
        let key = ((k.model?, k.firmware?), u16::try_from(col).ok()?);
        self.by_disk_index.get(&key).map(|&g| &self.by_disk[g])
    }

    /// The cell of disk `disk` in column `col`: its first figure of that
    /// test (a run that ended ok), marked when it is an outlier of its model
    /// and firmware group; else the marker of the test's first run; else
    /// not run.
    pub fn cell(&self, disk: usize, col: usize) -> Cell {
        let k = &self.disks[disk];
        if let Some(&(_, value)) = k.figures.iter().find(|(c, _)| usize::from(*c) == col) {
            let outlier = self.group_of(disk, col).is_some_and(|g| g.is_outlier(value));
            return Cell::Figure { value, outlier };
        }
        let test = self.columns[col].test_id;
        k.markers
            .iter()
            .find(|(t, _)| *t == test)
            .map_or(Cell::NotRun, |&(_, m)| Cell::Marker(self.strings.get(m).to_owned()))
    }

    /// A row's cells, one per [`Fleet::columns`].
    pub fn cells(&self, r: &DiskRow) -> Vec<Cell> {
        // As [`Fleet::cell`] for each column, the disk's figures and
        // markers looked up by column and test (each first one), not
        // scanned per column.
        let k = &self.disks[r.disk];
        let mut figures: HashMap<usize, f64> = HashMap::with_capacity(k.figures.len());
        for &(c, v) in k.figures.iter() {
            figures.entry(usize::from(c)).or_insert(v);
        }
        let mut markers: HashMap<u32, u32> = HashMap::with_capacity(k.markers.len());
        for &(t, m) in k.markers.iter() {
            markers.entry(t).or_insert(m);
        }
        (0..self.columns.len())
            .map(|col| {
                if let Some(&value) = figures.get(&col) {
                    let outlier = self.group_of(r.disk, col).is_some_and(|g| g.is_outlier(value));
                    return Cell::Figure { value, outlier };
                }
                markers
                    .get(&self.columns[col].test_id)
                    .map_or(Cell::NotRun, |&m| Cell::Marker(self.strings.get(m).to_owned()))
            })
            .collect()
    }

    /// Each document's acceptance verdicts ([`slim`]), in document order.
    pub fn acceptances(&self) -> Vec<Option<&Acceptance>> {
        self.docs.iter().map(|d| d.acceptance.as_deref()).collect()
    }
}

/// How many of `cells` are outliers.
pub fn outliers(cells: &[Cell]) -> usize {
    cells
        .iter()
        .filter(|c| matches!(c, Cell::Figure { outlier: true, .. }))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::verdict::analysis::fleet;

    fn fixtures() -> Vec<Loaded> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        [
            "qemu-4disks-quick.json",
            "raid0-a.json",
            "raid0-b.json",
            "outlier-t2.json",
            "read-error.json",
        ]
        .iter()
        .map(|f| read::load(&dir.join(f)).expect(f))
        .collect()
    }

    /// The groups kept from the digests are bench-core's groups of the
    /// documents themselves: the same keys, tests, figures, disks, values
    /// and medians, in the same order.
    #[test]
    fn groups_from_digests_are_bench_cores() {
        let docs = fixtures();
        let refs: Vec<&bench_core::document::result::ResultDoc> = docs.iter().map(|l| &l.doc).collect();
        let want = fleet(&refs);
        let f = Fleet::new(&docs);
        assert!(!want.is_empty(), "the fixtures form groups");
        assert_eq!(f.by_disk.len(), want.len());
        for (g, w) in f.by_disk.iter().zip(&want) {
            assert_eq!(
                (&g.key, &g.test, g.metric, g.workload),
                (&w.key, &w.test, w.metric, w.workload)
            );
            assert_eq!((g.median, g.min, g.max), (w.median, w.min, w.max), "{}", g.test);
            let got: Vec<(usize, &str, Option<&str>, f64)> = g
                .entries
                .iter()
                .map(|e| {
                    let d = f.disk(e.disk());
                    (d.doc, d.path, d.serial, e.value)
                })
                .collect();
            let exp: Vec<(usize, &str, Option<&str>, f64)> = w
                .entries
                .iter()
                .map(|e| (e.doc, e.target.as_str(), e.serial.as_deref(), e.value))
                .collect();
            assert_eq!(got, exp, "{}", g.test);
        }
    }

    /// What a digest keeps of a failed test: its marker, in the cell of
    /// every column of that test; a figure is an outlier by its group.
    #[test]
    fn cells_hold_figures_markers_and_outliers() {
        let docs = fixtures();
        let f = Fleet::new(&docs);
        let mut seen = (0, 0, 0);
        for r in &f.rows {
            let d = f.disk(r.disk);
            let doc = &docs[r.doc].doc;
            for (col, c) in f.columns.iter().enumerate() {
                let tests: Vec<_> = doc
                    .tests
                    .iter()
                    .filter(|t| t.target == d.path && t.name == c.test)
                    .collect();
                let ok = tests.iter().find(|t| t.status == Status::Ok);
                let want = match (tests.first(), ok) {
                    (None, _) => Cell::NotRun,
                    (Some(_), Some(t)) => match usable(c.metric.get(&t.summary)) {
                        None => Cell::NotRun,
                        Some(value) => Cell::Figure {
                            value,
                            outlier: f.group_of(r.disk, col).is_some_and(|g| g.is_outlier(value)),
                        },
                    },
                    (Some(t), None) => text::marker(&t.status).map_or(Cell::NotRun, Cell::Marker),
                };
                match &want {
                    Cell::Figure { outlier: true, .. } => seen.0 += 1,
                    Cell::Marker(_) => seen.1 += 1,
                    _ => seen.2 += 1,
                }
                assert_eq!(f.cell(r.disk, col), want, "{} {}", d.path, c.test);
            }
        }
        assert!(
            seen.0 > 0 && seen.1 > 0,
            "the fixtures hold outliers and failed tests: {seen:?}"
        );
    }

    /// A failed target keeps its first failing check; the others only
    /// their model and verdict.
    #[test]
    fn slim_acceptance_keeps_what_the_verdicts_show() {
        use bench_core::document::result::{Check, CheckRule};
        let check = |verdict, message: &str| Check {
            rule: CheckRule::Limit,
            verdict,
            test: Some("seq_read".into()),
            figure: Some("read_bytes_per_sec".into()),
            value: Some(1.0),
            limit: Some(2.0),
            source: "acceptance.limits[0]".into(),
            message: message.into(),
        };
        let target = |path: &str, verdict, checks| TargetVerdict {
            target: path.into(),
            serial: Some(format!("S-{path}")),
            model: Some("M".into()),
            verdict,
            checks,
        };
        let a = Acceptance {
            verdict: Verdict::Fail,
            rules: "config".into(),
            targets: vec![
                target("/dev/sda", Verdict::Pass, vec![check(Verdict::Pass, "held")]),
                target(
                    "/dev/sdb",
                    Verdict::Fail,
                    vec![
                        check(Verdict::Pass, "held"),
                        check(Verdict::Fail, "too slow"),
                        check(Verdict::Fail, "too slow again"),
                    ],
                ),
                target("/dev/sdc", Verdict::Warn, vec![check(Verdict::Warn, "slowish")]),
            ],
        };
        let s = slim(&a);
        assert_eq!(s.targets[1].checks.len(), 1);
        assert_eq!(s.targets[1].checks[0].message, "too slow");
        assert_eq!(
            crate::figures::verdict::by_model_of(&[Some(&s)]).0,
            crate::figures::verdict::by_model_of(&[Some(&a)]).0,
            "the counts by model"
        );
        let a = &a;
        assert_eq!(s.targets.len(), a.targets.len());
        for (t, u) in s.targets.iter().zip(&a.targets) {
            assert_eq!((t.verdict, &t.model), (u.verdict, &u.model));
            if u.verdict == Verdict::Fail {
                assert_eq!((&t.target, &t.serial), (&u.target, &u.serial));
                assert_eq!(t.checks.first(), crate::figures::verdict::first_reason(u));
            } else {
                assert!(t.checks.is_empty() && t.target.is_empty());
            }
        }
    }

    /// Read on every core, the view is the one of the documents read one
    /// after another: the same order, the same text.
    #[test]
    fn gathered_in_parallel_as_read_in_order() {
        let dir = std::env::temp_dir().join(format!("bootbench-gather-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/outlier-t2.json");
        let text = std::fs::read_to_string(&src).unwrap();
        // More files than a batch, each its own machine (m1 ... m300).
        for i in 1..=BATCH + 44 {
            let t = text.replacen("\"hostname\": \"(none)\"", &format!("\"hostname\": \"m{i}\""), 1);
            std::fs::write(dir.join(format!("m{i}.json")), t).unwrap();
        }
        std::fs::write(dir.join("bad.json"), "{").unwrap();
        let got = gather(std::slice::from_ref(&dir)).unwrap();
        let files = files(std::slice::from_ref(&dir)).unwrap();
        let docs: Vec<Loaded> = files.iter().filter_map(|f| read::load(f).ok()).collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got.skipped.len(), 1);
        assert_eq!(got.fleet.docs.len(), BATCH + 44);
        assert_eq!(got.fleet.machines.len(), BATCH + 44);
        let want = Fleet::new(&docs);
        assert_eq!(
            super::super::render(&got.fleet, true),
            super::super::render(&want, true)
        );
        assert_eq!(&*got.fleet.machines[1].name, "m2", "natural order");
    }
}

#[cfg(test)]
mod from_rows {
    use super::*;

    /// The digest of a document read back from the rows of its export is
    /// the digest of the document itself: machine, disks, figures, markers
    /// and verdicts (of a verdict's checks, the message and rule the
    /// sections show). A disk without a test has no row, so no digest.
    #[test]
    fn digests_from_export_rows_are_the_documents() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut docs: Vec<Loaded> = [
            "qemu-4disks-quick.json",
            "raid0-a.json",
            "read-error.json",
            "health-h1.json",
        ]
        .iter()
        .map(|f| read::load(&dir.join(f)).expect(f))
        .collect();
        // A verdict on the first document: its second disk fails two checks.
        let check = |rule, verdict, message: &str| Check {
            rule,
            verdict,
            test: Some("seq_read_1m_qd1_j1".into()),
            figure: Some("read_bytes_per_sec".into()),
            value: Some(1.0),
            limit: Some(2.0),
            source: "acceptance.limits[0]".into(),
            message: message.into(),
        };
        let d = &mut docs[0].doc;
        let targets = d
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| TargetVerdict {
                target: t.path.clone(),
                serial: t.serial.clone(),
                model: t.model.clone(),
                verdict: if i == 1 { Verdict::Fail } else { Verdict::Pass },
                checks: if i == 1 {
                    vec![
                        check(CheckRule::Peers, Verdict::Warn, "a bit slow"),
                        check(CheckRule::Limit, Verdict::Fail, "below the floor"),
                    ]
                } else {
                    vec![check(CheckRule::Limit, Verdict::Pass, "held")]
                },
            })
            .collect();
        d.acceptance = Some(Acceptance {
            verdict: Verdict::Fail,
            rules: "config".into(),
            targets,
        });
        // The rows `fleet` reads of an export: those with `step` null.
        let rows = tidy::figure_rows(&docs).into_iter().filter(|r| r.step.is_none());
        let mut got: Vec<Digest> = Vec::new();
        let mut cur: Option<FromRows> = None;
        for r in rows {
            if cur.as_ref().is_some_and(|c| c.d.file != r.file) {
                got.extend(cur.take().map(FromRows::finish));
            }
            cur.get_or_insert_with(|| FromRows::new(&r)).add(r);
        }
        got.extend(cur.map(FromRows::finish));
        assert_eq!(got.len(), docs.len());
        let mut markers = 0;
        for (g, l) in got.iter().zip(&docs) {
            let mut want = Digest::of(l);
            want.disks.retain(|k| l.doc.tests.iter().any(|t| t.target == k.path));
            markers += want.disks.iter().map(|k| k.markers.len()).sum::<usize>();
            let lines = |a: &Option<Acceptance>| {
                a.as_ref().map(|a| {
                    let t: Vec<_> = a
                        .targets
                        .iter()
                        .map(|t| {
                            let c: Vec<_> = t
                                .checks
                                .iter()
                                .map(|c| (c.rule, c.verdict, c.message.clone()))
                                .collect();
                            (t.target.clone(), t.serial.clone(), t.model.clone(), t.verdict, c)
                        })
                        .collect();
                    (a.verdict, t)
                })
            };
            assert_eq!(lines(&g.acceptance), lines(&want.acceptance), "{}", l.file);
            let mut g = g.clone();
            (g.acceptance, want.acceptance) = (None, None);
            assert_eq!(g, want, "{}", l.file);
        }
        assert!(markers > 0, "the fixtures hold failed tests");
        let a = got[0].acceptance.as_ref().expect("the verdict");
        assert_eq!(a.targets[1].checks[0].message, "below the floor");
    }
}
