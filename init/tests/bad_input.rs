//! The bad-input corpus: every file in `tests/bad_input/*.case` is one bad
//! config or command line given to the real `bootbench-init` binary, with
//! the exit status and the message it must give, while loop devices (over
//! files in /dev/shm that this test creates and removes; root and `losetup`
//! needed) are compared byte for byte before and after: bad input never
//! writes.
//!
//! A case file (add one to extend the corpus):
//!
//! ```text
//! # What the case shows (comment lines start with '#').
//! cmd: validate            the commands to run (default: `run validate`): each
//!                          becomes `run --config FILE` / `validate FILE`
//! args: run --target {A}   instead of cmd: the exact arguments (words split
//!                          at spaces; `{CONFIG}` is the body's file)
//! loop: ext4               the signature on loop {S}: ext4, fat32, md1.2,
//!                          md0.90, luks, gpt, mbr (default: none, {S} unused)
//! exit: 2                  the expected exit status
//! expect: tests[0].bs      a fragment the message must contain (repeatable)
//! ---
//! { "the config": "text, with placeholders" }
//! ```
//!
//! Placeholders: `{A}`, `{B}` plain loop devices, `{S}` the loop device
//! with the case's signature, `{PHRASE}` the confirmation phrase,
//! `{MISSING}` a path that does not exist, `{CONFIG}` the config file's
//! path, `{EXISTING}` an existing file.
//!
//! The message: for exit status 2, stderr, which must be exactly one line
//! (for a bad command line, followed by the usage), with nothing on stdout. For exit status 0 (a run that goes on but
//! refuses the unsafe part), `run`'s stderr and the reason of every skipped
//! test in its result document (there must be one), or `validate`'s plan on
//! stdout.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_bootbench-init");
const PHRASE: &str = "I understand this destroys data";
const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
/// Size of every loop device's backing file.
const LOOP_BYTES: usize = 2 << 20;
/// At least this many cases must be in the corpus.
const MIN_CASES: usize = 40;

mod common;
use common::{shm_path, Loop, ShmFile};

/// The bytes that make a signature, each at its offset in the device.
fn signature(kind: &str) -> Vec<(usize, Vec<u8>)> {
    let md = 0xa92b_4efc_u32.to_le_bytes().to_vec();
    let mut boot_sector = vec![0u8; 512];
    boot_sector[510] = 0x55;
    boot_sector[511] = 0xAA;
    match kind {
        "ext4" => vec![(1080, vec![0x53, 0xEF])],
        "fat32" => {
            boot_sector[0..3].copy_from_slice(&[0xEB, 0x58, 0x90]);
            boot_sector[3..11].copy_from_slice(b"mkfs.fat");
            boot_sector[82..90].copy_from_slice(b"FAT32   ");
            vec![(0, boot_sector)]
        }
        "md1.2" => vec![(4096, md)],
        // md 0.90: the last 64 KiB-aligned 64 KiB block of the device.
        "md0.90" => vec![(LOOP_BYTES - (64 << 10), md)],
        "luks" => vec![(0, b"LUKS\xba\xbe\x00\x02".to_vec())],
        "gpt" => vec![(510, vec![0x55, 0xAA]), (512, b"EFI PART".to_vec())],
        "mbr" => {
            // One partition entry: type 0x83 from LBA 2048.
            boot_sector[446 + 4] = 0x83;
            boot_sector[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
            boot_sector[446 + 12..446 + 16].copy_from_slice(&8192u32.to_le_bytes());
            vec![(0, boot_sector)]
        }
        other => panic!("unknown signature kind {other:?} in a case's loop:"),
    }
}

/// A loop device of LOOP_BYTES with the signature `kind` (if any) in place.
fn loop_with(kind: Option<&str>) -> Loop {
    let sig = kind.map(signature).unwrap_or_default();
    let writes: Vec<(usize, &[u8])> = sig.iter().map(|(off, b)| (*off, b.as_slice())).collect();
    Loop::new(LOOP_BYTES, &writes)
}

/// One case file, parsed.
#[derive(Debug)]
struct Case {
    name: String,
    about: String,
    cmds: Vec<String>,
    args: Option<String>,
    sig: Option<String>,
    exit: i32,
    expect: Vec<String>,
    body: Option<String>,
}

fn parse_case(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (head, body) = match text.split_once("\n---\n") {
        Some((h, b)) => (h.to_string(), Some(b.to_string())),
        None => (text.clone(), None),
    };
    let mut c = Case {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        about: String::new(),
        cmds: vec!["run".into(), "validate".into()],
        args: None,
        sig: None,
        exit: -1,
        expect: Vec::new(),
        body,
    };
    for line in head.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(comment) = line.strip_prefix('#') {
            if c.about.is_empty() {
                c.about = comment.trim().to_string();
            }
            continue;
        }
        let (key, value) = line.split_once(':').ok_or(format!("not `key: value`: {line:?}"))?;
        let value = value.trim().to_string();
        match key.trim() {
            "cmd" => c.cmds = value.split_whitespace().map(str::to_string).collect(),
            "args" => c.args = Some(value),
            "loop" => c.sig = Some(value),
            "exit" => c.exit = value.parse().map_err(|_| format!("exit: {value:?} is not a number"))?,
            "expect" => c.expect.push(value),
            other => return Err(format!("unknown key {other:?}")),
        }
    }
    if c.exit < 0 {
        return Err("no `exit:` line".into());
    }
    if c.expect.is_empty() {
        return Err("no `expect:` line".into());
    }
    Ok(c)
}

/// The loop devices of the whole corpus: plain A and B, and one per
/// signature kind used.
struct Devices {
    a: Loop,
    b: Loop,
    sig: Vec<(String, Loop)>,
}

impl Devices {
    fn all(&self) -> impl Iterator<Item = &Loop> {
        [&self.a, &self.b].into_iter().chain(self.sig.iter().map(|(_, l)| l))
    }
}

/// Run one case; the failures found (empty: it passed).
fn run_case(c: &Case, dev: &Devices, missing: &str, existing: &str) -> Vec<String> {
    let sig_dev = c.sig.as_ref().map(|k| {
        dev.sig
            .iter()
            .find(|(kind, _)| kind == k)
            .map(|(_, l)| l.dev.clone())
            .unwrap()
    });
    let fill = |s: &str, config: &str| {
        s.replace("{A}", &dev.a.dev)
            .replace("{B}", &dev.b.dev)
            .replace("{S}", sig_dev.as_deref().unwrap_or("{S}: no loop: line"))
            .replace("{PHRASE}", PHRASE)
            .replace("{MISSING}", missing)
            .replace("{EXISTING}", existing)
            .replace("{CONFIG}", config)
    };
    let config = c
        .body
        .as_ref()
        .map(|b| ShmFile::new(&format!("{}.json", c.name), fill(b, "").as_bytes()));
    let config_path = config.as_ref().map_or("", |f| f.path());
    let argvs: Vec<Vec<String>> = match &c.args {
        Some(a) => vec![fill(a, config_path).split(' ').map(str::to_string).collect()],
        None => c
            .cmds
            .iter()
            .map(|cmd| match cmd.as_str() {
                "run" => vec!["run".into(), "--config".into(), config_path.into()],
                "validate" => vec!["validate".into(), config_path.into()],
                other => panic!("{}: unknown cmd {other:?}", c.name),
            })
            .collect(),
    };
    let mut fails = Vec::new();
    for argv in argvs {
        let o = Command::new(BIN).args(&argv).output().expect("run bootbench-init");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let what = format!("{} ({})", c.name, argv.join(" "));
        if o.status.code() != Some(c.exit) {
            fails.push(format!(
                "{what}: exit status {:?}, expected {}; stderr: {err}",
                o.status.code(),
                c.exit
            ));
            continue;
        }
        let mut messages = Vec::new();
        if c.exit == 0 {
            if argv[0] == "run" {
                messages.push(("stderr", err.clone()));
                match serde_json::from_str::<Value>(&out) {
                    Ok(doc) => {
                        let reasons: Vec<String> = doc["tests"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter(|t| t["status"]["state"] == "skipped")
                            .map(|t| t["status"]["reason"].as_str().unwrap_or_default().to_string())
                            .collect();
                        if reasons.is_empty() {
                            fails.push(format!("{what}: no test was skipped: {out}"));
                        }
                        for r in reasons {
                            messages.push(("skip reason in the results", r));
                        }
                    }
                    Err(e) => fails.push(format!("{what}: stdout is not a result document: {e}")),
                }
            } else {
                messages.push(("stdout", out.clone()));
            }
        } else {
            if !out.is_empty() {
                fails.push(format!("{what}: stdout must be empty: {out}"));
            }
            // One line, which a bad command line may follow with the usage.
            let (first, rest) = err.trim().split_once('\n').unwrap_or((err.trim(), ""));
            if !(rest.is_empty() || rest.starts_with("usage:")) {
                fails.push(format!("{what}: stderr must be one line (and the usage): {err}"));
            }
            messages.push(("stderr", first.to_string()));
        }
        if let Some((place, m)) = messages.first() {
            let line = m
                .lines()
                .find(|l| l.contains("refused") || l.contains(':'))
                .unwrap_or_default();
            println!("    {} -> {place}: {}", argv[0], line.trim());
        }
        for (place, m) in &messages {
            // The config's file name (which holds the case's name) must not
            // make a fragment match.
            let m = if config_path.is_empty() {
                m.clone()
            } else {
                m.replace(config_path, "<config>")
            };
            for want in &c.expect {
                let want = fill(want, config_path);
                if !m.contains(&want) {
                    fails.push(format!("{what}: {want:?} not in the {place}: {}", m.trim()));
                }
            }
        }
    }
    for lo in dev.all() {
        if let Some(at) = lo.changed_at() {
            fails.push(format!("{}: WROTE to {} (first changed byte {at})", c.name, lo.dev));
        }
    }
    fails
}

#[test]
fn every_bad_input_is_refused_with_its_message_and_writes_nothing() {
    let dir = Path::new(MANIFEST).join("tests/bad_input");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bad_input exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    files.sort();
    let cases: Vec<Case> = files
        .iter()
        .map(|p| parse_case(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect();

    let mut kinds: Vec<String> = cases.iter().filter_map(|c| c.sig.clone()).collect();
    kinds.sort();
    kinds.dedup();
    let dev = Devices {
        a: loop_with(None),
        b: loop_with(None),
        sig: kinds.iter().map(|k| (k.clone(), loop_with(Some(k)))).collect(),
    };
    let missing = shm_path("missing");
    let existing = ShmFile::new("existing.json", b"{}");

    let mut failures = Vec::new();
    let (mut exit2, mut exit0) = (0, 0);
    for c in &cases {
        let f = run_case(c, &dev, missing.to_str().unwrap(), existing.path());
        if c.exit == 0 {
            exit0 += 1;
        } else {
            exit2 += 1;
        }
        println!(
            "bad input {}: {}: {}",
            c.name,
            if f.is_empty() { "ok" } else { "FAILED" },
            c.about
        );
        failures.extend(f);
    }
    println!(
        "bad input: {} cases ({exit2} refused with an error exit status, {exit0} runs that go on and refuse the unsafe part), {} failure(s)",
        cases.len(),
        failures.len()
    );
    assert!(
        cases.len() >= MIN_CASES,
        "only {} cases in {}; the corpus must hold at least {MIN_CASES}",
        cases.len(),
        dir.display()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
