//! The example configs in `examples/` (one directory per experiment of a
//! seed post, see `examples/README.md`): each must be a config the real
//! `bootbench-init validate` accepts, with the arrays, layers and tests it
//! was written for, guarded as docs/safety.md says, and
//! documented in `examples/README.md`. Host only: nothing is opened for
//! writing, no root, no QEMU.
//!
//! The examples name their disks by placeholder serials (`SLOW-1`,
//! `SSD-2`, ...), which no machine has. Neither mode of `validate` takes
//! them as they are: on a live system a serial no whole disk has is bad
//! input (exit 2, `no whole disk has serial ...`), and `--simulate` takes
//! only `sim:hdd:SIZE` / `sim:ssd:SIZE` paths (a serial "cannot be
//! simulated"). So each example is checked twice:
//!
//! - as shipped, without `--simulate`: it must fail on the placeholder and
//!   nothing else. `validate` checks the tests before it looks for a disk,
//!   so this proves the tests parse and expand, and that an example run
//!   before its serials are filled in stops before anything is touched;
//! - a copy with every placeholder replaced by a simulated disk of its own
//!   (a stand-in of the post's kind and size, see [`STAND_INS`]) with
//!   `--simulate`: it must exit 0, and the plan it prints must hold every
//!   array with its level and members in order, every layer on what it
//!   sits on, and every test of the config, planned (not skipped), on every
//!   target.
//!
//! A simulated disk is always writable and `--simulate` resolves no grant,
//! so the write guard is checked on the file itself (see [`check_guard`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_bootbench-init");
const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
const PHRASE: &str = "I understand this destroys data";
/// The workloads that write (`Workload::writes` in bench-core).
const WRITE_WORKLOADS: [&str; 5] = ["seq_write", "rand_write", "rand_rw", "commit", "slog"];

/// The simulated disk that stands in for a placeholder serial, by its
/// prefix: the kind and size (bytes) of the disks in the post. The n-th
/// distinct serial of a file gets n MiB more, so that each is a target of
/// its own (simulated disks are told apart by their path).
const STAND_INS: [(&str, &str, u64); 5] = [
    // Seed 001: ST380815AS, 80 GB.
    ("SLOW-", "hdd", 80_000_000_000),
    // Seed 001: HDS721050CLA362, 500 GB.
    ("FAST-", "hdd", 500_000_000_000),
    // Seed 000: the RAID1's hard disks.
    ("HDD-", "hdd", 2_000_000_000_000),
    // Seed 000's system SSD; seed 003's four SSDs (2.2 TB as RAID0).
    ("SSD-", "ssd", 600_000_000_000),
    // Seed 002: eight 1 TB disks (WD10EACS, WD10EADS, STM31000340AS).
    ("DISK-", "hdd", 1_000_000_000_000),
];

fn examples_dir() -> PathBuf {
    Path::new(MANIFEST).join("..").join("examples")
}

/// Every `*.json` under `examples/`, as paths relative to it, sorted.
fn example_files() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|x| x == "json") {
                out.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let root = examples_dir();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run bootbench-init")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn assert_matches_schema(rel: &str, doc: &Value) {
    let p = Path::new(MANIFEST).join("../schema/bootbench.config-1.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{rel} does not match the config schema:\n{}",
        errors.join("\n")
    );
}

/// Every serial the config names (targets, members, layers, grants), in
/// the order first met.
fn serials(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(s)) = o.get("serial") {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
            o.values().for_each(|x| serials(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| serials(x, out)),
        _ => {}
    }
}

/// The simulated disk standing in for the `n`-th placeholder `serial`.
fn stand_in(rel: &str, serial: &str, n: u64) -> String {
    let Some((_, kind, size)) = STAND_INS.iter().find(|(p, _, _)| serial.starts_with(p)) else {
        panic!(
            "{rel}: serial {serial:?} is not a placeholder this test knows; name the disks SLOW-n, FAST-n, \
             HDD-n, SSD-n or DISK-x (or add a prefix to STAND_INS)"
        );
    };
    format!("sim:{kind}:{}", size + n * (1 << 20))
}

/// `v` with every `{"serial": S}` replaced by the path of S's stand-in.
fn substituted(v: &Value, map: &[(String, String)]) -> Value {
    match v {
        Value::Object(o) => match o.get("serial") {
            Some(Value::String(s)) if o.len() == 1 => {
                let (_, path) = map.iter().find(|(x, _)| x == s).unwrap();
                Value::String(path.clone())
            }
            _ => Value::Object(o.iter().map(|(k, x)| (k.clone(), substituted(x, map))).collect()),
        },
        Value::Array(a) => Value::Array(a.iter().map(|x| substituted(x, map)).collect()),
        other => other.clone(),
    }
}

fn list<'a>(cfg: &'a Value, key: &str) -> &'a [Value] {
    cfg[key].as_array().map_or(&[], Vec::as_slice)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} of {v} is not a string"))
}

/// The serial of a disk reference; examples name disks by serial only
/// (booted from the stick a path names another disk from boot to boot,
/// and a grant must be a serial or WWN).
fn serial_of<'a>(rel: &str, at: &str, r: &'a Value) -> &'a str {
    r["serial"]
        .as_str()
        .unwrap_or_else(|| panic!("{rel}: {at} is {r}; expected a disk named by {{\"serial\": ...}}"))
}

/// The disks (by serial) beneath array or layer `name`.
fn disks_beneath(rel: &str, cfg: &Value, name: &str) -> Vec<String> {
    if let Some(a) = list(cfg, "arrays").iter().find(|a| a["name"] == name) {
        return list(a, "members")
            .iter()
            .map(|m| serial_of(rel, "a member", m).to_string())
            .collect();
    }
    let l = list(cfg, "layers")
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("{rel}: {name:?} is neither an array nor a layer"));
    match &l["on"] {
        Value::String(under) => disks_beneath(rel, cfg, under),
        r => vec![serial_of(rel, "a layer's on", r).to_string()],
    }
}

/// The write guard, on the file as written (the simulated run grants
/// everything): a config with a test that writes (a write workload, or a
/// read that fills its range first) has a `destructive` section with the
/// exact phrase, grants by serial every disk beneath its arrays and layers
/// (else their writes would be refused) and only disks it uses, never
/// allows overwriting signatures (that choice is the user's), and says
/// `destructive` in its file name; a config without one has no such
/// section and no such name.
fn check_guard(rel: &str, cfg: &Value) {
    let writes: Vec<&str> = list(cfg, "tests")
        .iter()
        .filter(|t| WRITE_WORKLOADS.contains(&str_of(t, "workload")) || t["fill"] == true)
        .map(|t| t["name"].as_str().unwrap_or("(unnamed)"))
        .collect();
    let named_destructive = rel.trim_end_matches(".json").ends_with("destructive");
    let d = &cfg["destructive"];
    if writes.is_empty() {
        assert!(d.is_null(), "{rel}: no test writes, so no destructive section");
        assert!(!named_destructive, "{rel}: named destructive but writes nothing");
        return;
    }
    assert!(
        named_destructive,
        "{rel}: {writes:?} write; the file name must end in -destructive.json"
    );
    assert_eq!(
        d["confirm"], PHRASE,
        "{rel}: {writes:?} write; destructive.confirm must be the phrase"
    );
    assert_ne!(
        d["allow_overwrite_signatures"], true,
        "{rel}: an example never allows overwriting signatures"
    );
    let granted: Vec<&str> = list(d, "targets")
        .iter()
        .map(|t| serial_of(rel, "a destructive target", t))
        .collect();
    let mut used = Vec::new();
    serials(&cfg["targets"], &mut used);
    serials(&cfg["arrays"], &mut used);
    serials(&cfg["layers"], &mut used);
    for g in &granted {
        assert!(used.iter().any(|u| u == g), "{rel}: grants {g}, which it does not use");
    }
    let stacks = list(cfg, "arrays").iter().chain(list(cfg, "layers"));
    for st in stacks {
        let name = str_of(st, "name");
        for disk in disks_beneath(rel, cfg, name) {
            assert!(
                granted.contains(&disk.as_str()),
                "{rel}: {disk} is beneath {name} but not granted, so {name}'s writes would be refused"
            );
        }
    }
}

/// One target of a printed plan: its path, the stack line, the test lines.
#[derive(Debug, Default)]
struct PlanTarget {
    path: String,
    stack: Option<String>,
    tests: Vec<String>,
}

fn parse_plan(out: &str) -> Vec<PlanTarget> {
    let mut targets: Vec<PlanTarget> = Vec::new();
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("target ") {
            let (path, _) = rest.split_once(": ").unwrap_or((rest, ""));
            targets.push(PlanTarget {
                path: path.to_string(),
                ..PlanTarget::default()
            });
        } else if let (Some(t), Some(rest)) = (targets.last_mut(), line.strip_prefix("  ")) {
            if rest.starts_with("test ") {
                t.tests.push(rest.to_string());
            } else if rest.starts_with("array ") || rest.starts_with("layer ") {
                t.stack = Some(rest.to_string());
            }
        }
    }
    targets
}

/// The example as shipped, on this machine's disks: refused (exit 2, one
/// line), on a placeholder serial and nothing else.
fn check_as_shipped(rel: &str, path: &Path, placeholders: &[String]) {
    let o = run(&["validate", path.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{rel} as shipped: {err}");
    assert!(o.stdout.is_empty(), "{rel} as shipped printed a plan");
    assert_eq!(err.trim().lines().count(), 1, "{rel} as shipped: one line: {err}");
    assert!(
        err.contains("no whole disk has serial ") && placeholders.iter().any(|s| err.contains(s.as_str())),
        "{rel} as shipped must fail on a placeholder serial only (the tests are checked first): {err}"
    );
}

/// The example with simulated stand-ins: `validate --simulate` prints the
/// plan; returns it.
fn validate_simulated(rel: &str, cfg: &Value, map: &[(String, String)]) -> String {
    let dir = PathBuf::from(TMP).join("examples");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(rel.replace('/', "__"));
    std::fs::write(&file, serde_json::to_string_pretty(&substituted(cfg, map)).unwrap()).unwrap();
    let o = run(&["validate", file.to_str().unwrap(), "--simulate"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{rel} (serials replaced by {map:?}) does not validate: {}",
        text(&o.stderr)
    );
    text(&o.stdout)
}

fn check_example(rel: &str) {
    let path = examples_dir().join(rel);
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{rel} is not JSON: {e}"));
    assert_matches_schema(rel, &cfg);
    check_guard(rel, &cfg);

    let mut placeholders = Vec::new();
    serials(&cfg, &mut placeholders);
    let map: Vec<(String, String)> = (0u64..)
        .zip(&placeholders)
        .map(|(n, s)| (s.clone(), stand_in(rel, s, n)))
        .collect();
    let disk = |r: &Value| {
        let s = serial_of(rel, "a disk", r);
        map.iter().find(|(x, _)| x == s).unwrap().1.clone()
    };
    if !placeholders.is_empty() {
        check_as_shipped(rel, &path, &placeholders);
    }

    let out = validate_simulated(rel, &cfg, &map);
    let plan = parse_plan(&out);
    let find = |p: &str| plan.iter().find(|t| t.path == p);

    // The targets: the disks named, then one per array and layer.
    let mut want: Vec<String> = list(&cfg, "targets").iter().map(disk).collect();
    for a in list(&cfg, "arrays") {
        for m in list(a, "members") {
            let m = disk(m);
            if !want.contains(&m) {
                want.push(m);
            }
        }
    }
    for l in list(&cfg, "layers") {
        if !l["on"].is_string() {
            want.push(disk(&l["on"]));
        }
    }
    let arrays = list(&cfg, "arrays");
    let layers = list(&cfg, "layers");
    want.extend(arrays.iter().map(|a| format!("md:{}", str_of(a, "name"))));
    want.extend(layers.iter().map(|l| format!("dm:{}", str_of(l, "name"))));
    if want.is_empty() {
        // No disk named: booted, every disk of the machine; simulated, the
        // default simulated disks.
        assert!(!plan.is_empty(), "{rel}: no target in the plan:\n{out}");
    } else {
        let mut got: Vec<&str> = plan.iter().map(|t| t.path.as_str()).collect();
        let mut sorted = want.clone();
        got.sort_unstable();
        sorted.sort_unstable();
        assert_eq!(got, sorted, "{rel}: the plan's targets:\n{out}");
    }

    // Every array: its level and its members in the config's order.
    for a in arrays {
        let name = str_of(a, "name");
        let members: Vec<String> = list(a, "members").iter().map(disk).collect();
        let head = format!(
            "array {name:?}: {} of {}, chunk ",
            str_of(a, "level"),
            members.join(", ")
        );
        let line = find(&format!("md:{name}"))
            .and_then(|t| t.stack.clone())
            .unwrap_or_default();
        assert!(line.starts_with(&head), "{rel}: {head:?} not in the plan:\n{out}");
        if let Some(layout) = a["layout"].as_str() {
            assert!(line.ends_with(&format!(", layout {layout}")), "{rel}: {line}");
        }
    }
    // Every layer: its kind, on what the config says.
    for l in layers {
        let name = str_of(l, "name");
        let under = match &l["on"] {
            Value::String(n) if arrays.iter().any(|a| a["name"] == *n) => format!("md:{n}"),
            Value::String(n) => format!("dm:{n}"),
            r => disk(r),
        };
        let line = find(&format!("dm:{name}"))
            .and_then(|t| t.stack.clone())
            .unwrap_or_default();
        assert!(
            line.starts_with(&format!("layer {name:?}: {} ", str_of(l, "kind")))
                && line.ends_with(&format!(" on {under}")),
            "{rel}: layer {name:?} ({} on {under}) not in the plan:\n{out}",
            str_of(l, "kind")
        );
    }
    // Every test on every target, in order, planned with its steps.
    let tests = list(&cfg, "tests");
    for t in &plan {
        assert_eq!(t.tests.len(), tests.len(), "{rel}: tests on {}:\n{out}", t.path);
        for (i, (line, test)) in t.tests.iter().zip(tests).enumerate() {
            let head = format!(
                "test {}: {} ({}): ",
                i + 1,
                str_of(test, "name"),
                str_of(test, "workload")
            );
            assert!(
                line.starts_with(&head) && line[head.len()..].split(' ').nth(1) == Some("step(s):"),
                "{rel}: on {}: expected {head:?} with its steps, got {line:?}",
                t.path
            );
        }
    }
}

#[test]
fn every_example_validates_with_its_arrays_layers_and_tests() {
    let files = example_files();
    let dirs: std::collections::BTreeSet<&str> =
        files.iter().filter_map(|f| f.split_once('/')).map(|(d, _)| d).collect();
    assert!(
        files.len() >= 4 && dirs.len() >= 4,
        "expected the examples of the four posts under {}: {files:?}",
        examples_dir().display()
    );
    for rel in &files {
        check_example(rel);
    }
}

#[test]
fn examples_readme_documents_every_config() {
    let readme = std::fs::read_to_string(examples_dir().join("README.md")).expect("examples/README.md exists");
    let files = example_files();
    let missing: Vec<&String> = files.iter().filter(|f| !readme.contains(&format!("`{f}`"))).collect();
    assert!(
        missing.is_empty(),
        "examples/README.md must describe every config (as `dir/file.json`); not there: {missing:?}"
    );
    // And names none that is not there (a config renamed or removed): each
    // inline code span ending in `.json` whose first part is a directory of
    // examples/.
    let dirs: Vec<&str> = files.iter().filter_map(|f| f.split_once('/')).map(|(d, _)| d).collect();
    for (end, _) in readme.match_indices(".json`") {
        let Some(start) = readme[..end].rfind('`') else {
            continue;
        };
        let span = &readme[start + 1..end + ".json".len()];
        if span.split_once('/').is_some_and(|(d, _)| dirs.contains(&d)) {
            assert!(
                files.iter().any(|f| f == span),
                "examples/README.md names `{span}`, which is not under examples/"
            );
        }
    }
}
