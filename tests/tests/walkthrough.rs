//! The guide's walkthrough ("The first real server", docs/first-server.md), run as written where
//! it needs no hardware, so the text cannot drift from the tools: its commands are read from there,
//! the hardware swapped for stand-ins (a loop device for the stick, with `--force` since a loop
//! device is no stick; a captured serial log for the BMC's serial-over-LAN), and each must
//! succeed and do what the text says. Root (the loop device); skipped otherwise, a failure in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

use bootbench_e2e::workspace;

/// The indented command lines of the guide's section `heading`, in order.
fn commands(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("docs/first-server.md has no {heading:?}"));
    let rest = &readme[start + heading.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    section
        .lines()
        .filter(|l| l.starts_with("       ") && !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(str::to_string))
        .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
}

fn skip(why: &str) {
    assert!(std::env::var_os("CI").is_none(), "walkthrough: {why}; CI is set");
    eprintln!("SKIPPED walkthrough: {why}");
}

/// A loop device over a sparse file; detached on drop.
struct Loop(String);

impl Loop {
    fn new(file: &Path, size: u64) -> Loop {
        std::fs::File::create(file)
            .and_then(|f| f.set_len(size))
            .expect("backing file");
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(file)
            .output()
            .expect("losetup");
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Loop(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).output();
    }
}

/// Run `line` (its words; `sudo` dropped, `*.json` globs expanded in `dir`) from the
/// workspace; panics unless it succeeds. Its stdout and stderr.
fn run(line: &str, dir: &Path) -> String {
    let mut words: Vec<String> = Vec::new();
    for w in line.split_whitespace().filter(|w| *w != "sudo") {
        match w.strip_suffix("*.json") {
            Some(d) => {
                let d = workspace().join(d);
                let mut found: Vec<String> = std::fs::read_dir(&d)
                    .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
                    .flatten()
                    .map(|e| e.path().display().to_string())
                    .filter(|p| p.ends_with(".json"))
                    .collect();
                found.sort();
                assert!(!found.is_empty(), "{line}: no {w}");
                words.extend(found);
            }
            None => words.push(w.to_string()),
        }
    }
    let out = Command::new(&words[0])
        .args(&words[1..])
        .current_dir(workspace())
        .output()
        .unwrap_or_else(|e| panic!("{line}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{line}\n(in {}) failed: {}\n{text}",
        dir.display(),
        out.status
    );
    text
}

#[test]
fn the_readmes_walkthrough_runs_as_written() {
    let root = workspace();
    let readme = std::fs::read_to_string(root.join("docs/first-server.md")).expect("docs/first-server.md");
    let lines = commands(&readme, "## The first real server");
    let find = |start: &str| -> String {
        lines
            .iter()
            .find(|l| l.trim_start_matches("sudo ").starts_with(start))
            .unwrap_or_else(|| panic!("the walkthrough has no `{start}...` command: {lines:?}"))
            .clone()
    };
    // The host tools as the guide names them, or those of the directory
    // BOOTBENCH_TOOLS (make test's: its test build's, the same code built
    // without the release profile).
    let tools = std::env::var("BOOTBENCH_TOOLS").map_or_else(|_| "target/release/".to_string(), |d| format!("{d}/"));
    let host_tool = |line: String| match line.trim_start_matches("sudo ").strip_prefix("target/release/") {
        Some(rest) => format!("{tools}{rest}"),
        None => panic!("the guide's command runs target/release's tool: {line}"),
    };
    let flash = host_tool(find("target/release/bootbench-image flash "));
    let validate = find("target/x86_64-unknown-linux-musl/release/bootbench-init validate --booted ");
    let sol = find("ipmitool ");
    let extract = host_tool(find("target/release/bootbench-report extract "));
    let show = host_tool(find("target/release/bootbench-report show "));
    let html = host_tool(find("target/release/bootbench-report html "));
    assert!(sol.ends_with("| tee sol.log"), "{sol}");

    if !is_root() {
        return skip("needs root (a loop device stands in for the stick)");
    }
    for bin in [
        format!("{tools}bootbench-image"),
        format!("{tools}bootbench-report"),
        "target/x86_64-unknown-linux-musl/release/bootbench-init".to_string(),
        "out/bootbench.img".to_string(),
    ] {
        if !root.join(&bin).exists() {
            return skip(&format!("{bin} missing (make image)"));
        }
    }
    let dir = std::env::temp_dir().join(format!("bootbench-walkthrough-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let rel = |p: &Path| p.display().to_string();

    // 1. The image onto "the stick", with a config.
    let stick_file = dir.join("stick.raw");
    let stick = Loop::new(&stick_file, 40 << 20);
    let config = dir.join("my-config.json");
    std::fs::write(
        &config,
        "{\"profile\": \"quick\", \"destructive\": {\"confirm\": \"I understand this destroys data\", \
         \"targets\": [{\"serial\": \"SN-OF-THE-SCRATCH-DISK\"}]}}\n",
    )
    .unwrap();
    let flash = flash
        .replace("/dev/sdX", &stick.0)
        .replace("my-config.json", &rel(&config))
        + " --force";
    let said = run(&flash, &dir);
    assert!(said.contains("written and read back equal: "), "{said}");
    assert!(said.contains("with the config as /bootbench.json"), "{said}");

    // 2. The config, as a laptop finds it on the stick's FAT, checked for the boot.
    let copy = dir.join("stick.img");
    std::fs::copy(&stick_file, &copy).unwrap();
    let media = dir.join("media");
    std::fs::create_dir_all(&media).unwrap();
    let on_stick = media.join("bootbench.json");
    bootbench_qemu::stick::get_file(&copy, "/bootbench.json", &on_stick).expect("the stick's config");
    assert_eq!(std::fs::read(&on_stick).unwrap(), std::fs::read(&config).unwrap());
    let validate = validate.replace("/media/$USER/BOOTBENCH/bootbench.json", &rel(&on_stick));
    let said = run(&validate, &dir);
    assert!(said.starts_with("checked as the booted run will check it"), "{said}");
    assert!(
        said.contains("targets: every disk of the server but the boot stick"),
        "{said}"
    );
    assert!(
        said.contains("writes: serial SN-OF-THE-SCRATCH-DISK: written at boot only if it holds no signature"),
        "{said}"
    );
    assert!(
        said.contains("writes: the console names the disks it may write and counts 10 s down before the run begins"),
        "{said}"
    );

    // 4. The results from a captured serial console (a real boot's, kept as a fixture).
    let sol_log = root.join("report/tests/fixtures/read-error.v2.serial.log");
    let results = dir.join("results");
    let extract = extract
        .replace("sol.log", &rel(&sol_log))
        .replace("results/", &format!("{}/", rel(&results)));
    let said = run(&extract, &dir);
    let docs: Vec<PathBuf> = std::fs::read_dir(&results)
        .expect("results/")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(docs.len(), 1, "{said}");
    let show = show.replace("results/", &format!("{}/", rel(&results)));
    let said = run(&show, &dir);
    assert!(said.contains("MB/s"), "{said}");
    let report = dir.join("report.html");
    let html = html
        .replace("results/", &format!("{}/", rel(&results)))
        .replace("report.html", &rel(&report));
    run(&html, &dir);
    assert!(
        std::fs::read_to_string(&report).unwrap().contains("<svg"),
        "no chart in the report"
    );
    drop(stick);
    let _ = std::fs::remove_dir_all(&dir);
}
