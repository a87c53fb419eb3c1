//! The HTML report opened in headless Chromium (Debian's /usr/bin/chromium;
//! .ci/run installs it): every chart the documents have data for is drawn
//! (each `<svg data-chart>` has all its data marks laid out with a non-empty
//! box), every chart without data has its note, the page logs nothing to the
//! console, and a screenshot is a real PNG of some size.
//!
//! How: the page from `html::render` is written to a temporary directory;
//! a copy with a probe script appended (the report itself has no script)
//! measures each chart's marks with `getBoundingClientRect` and writes the
//! count into `data-drawn`; Chromium's `--dump-dom` gives the DOM after the
//! probe ran and `--enable-logging=stderr --v=0` its console messages
//! (`CONSOLE` lines). `checker_fails_on_*` prove the check fails when a chart
//! is missing, a chart draws nothing, or the page has a script error.
//!
//! Set `BOOTBENCH_HTML_KEEP=DIR` to keep the pages and screenshots in DIR.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bootbench_report::read::{load, Loaded};
use bootbench_report::render::html::{render, render_fleet, Chart};

mod common;
mod rack;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The probe: for each chart, how many of its marks have a laid-out box;
/// and, at the load event, how many resources the page fetched (a
/// self-contained page fetches none).
const PROBE: &str = "<script>(function(){\
document.querySelectorAll('svg.chart').forEach(function(s){\
var n=0;s.querySelectorAll('.mark').forEach(function(m){\
var b=m.getBoundingClientRect();if(b.width>0||b.height>0){n++;}});\
var r=s.getBoundingClientRect();\
s.setAttribute('data-drawn',String(n));\
s.setAttribute('data-box',Math.round(r.width)+'x'+Math.round(r.height));});\
document.body.setAttribute('data-probe','done');\
window.addEventListener('load',function(){\
document.body.setAttribute('data-resources',String(performance.getEntriesByType('resource').length));});\
})();</script>";

/// A temporary directory, removed on drop.
struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let dir = std::env::temp_dir().join(format!("bootbench-html-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary directory");
        Tmp(dir)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture(name: &str) -> Loaded {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/html")
        .join(name);
    load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Run Chromium headless on `page` with `extra` flags; (stdout, stderr).
fn chromium(page: &Path, scratch: &Path, extra: &[&str]) -> (String, String) {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium; .ci/run does) \
         to run the HTML report test"
    );
    let profile = scratch.join(format!("profile-{}", extra.join("").len()));
    let _ = std::fs::remove_dir_all(&profile);
    let out_file = scratch.join("chromium.out");
    let err_file = scratch.join("chromium.err");
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).expect("stdout file"))
        .stderr(std::fs::File::create(&err_file).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {CHROMIUM}: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for chromium") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 180 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = std::fs::remove_dir_all(&profile);
    let stdout = std::fs::read_to_string(&out_file).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_file).unwrap_or_default();
    assert!(
        status.success(),
        "chromium failed ({status}) on {}:\n{stderr}",
        page.display()
    );
    (stdout, stderr)
}

/// Every `<svg class="chart"...>` of `html`: (its start tag, its body up to `</svg>`).
fn svgs(html: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<svg class=\"chart\"") {
        let from = &rest[i..];
        let tag_end = from.find('>').map_or(from.len(), |e| e + 1);
        let end = from.find("</svg>").map_or(from.len(), |e| e + 6);
        out.push((&from[..tag_end], &from[tag_end..end]));
        rest = &from[end..];
    }
    out
}

/// The value of attribute `name` in a start tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let len = tag[i..].find('"')?;
    Some(&tag[i..i + len])
}

/// Open `html` in Chromium: what is wrong with it, if anything. `want`:
/// for each chart kind, how many documents should draw it (the others
/// should carry its note).
fn check(html: &str, want: &[(Chart, usize)], docs: usize, dir: &Path, name: &str) -> Result<(), String> {
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&page, html).expect("write the page");
    let probe_page = dir.join(format!("{name}-probe.html"));
    let probed = match html.rfind("</body>") {
        Some(i) => format!("{}{PROBE}{}", &html[..i], &html[i..]),
        None => format!("{html}{PROBE}"),
    };
    std::fs::write(&probe_page, probed).expect("write the probe page");
    let mut problems = Vec::new();

    // The page itself: console messages and a screenshot.
    let shot = dir.join(format!("{name}.png"));
    let (_, stderr) = chromium(
        &page,
        dir,
        &[&format!("--screenshot={}", shot.display()), "--window-size=1400,2400"],
    );
    for line in stderr.lines().filter(|l| l.contains("CONSOLE")) {
        problems.push(format!("console: {line}"));
    }
    match std::fs::read(&shot) {
        Ok(png) => {
            if png.len() < 8 || &png[..8] != b"\x89PNG\r\n\x1a\n" {
                problems.push(format!("{} is not a PNG", shot.display()));
            } else if png.len() < 20_000 {
                problems.push(format!(
                    "{}: {} bytes, too small for a page with tables and charts",
                    shot.display(),
                    png.len()
                ));
            }
        }
        Err(e) => problems.push(format!("no screenshot {}: {e}", shot.display())),
    }

    // The probed copy: the DOM after layout.
    let (dom, stderr) = chromium(&probe_page, dir, &["--dump-dom"]);
    for line in stderr.lines().filter(|l| l.contains("CONSOLE")) {
        problems.push(format!("console (probe page): {line}"));
    }
    if !dom.contains("data-probe=\"done\"") {
        problems.push("the probe did not run (no data-probe=\"done\" in the DOM)".into());
    }
    if !dom.contains("data-resources=\"0\"") {
        problems.push("the page loaded resources (or the load event did not come)".into());
    }
    let source = svgs(html);
    let drawn = svgs(&dom);
    if source.len() != drawn.len() {
        problems.push(format!(
            "{} charts in the page, {} in the DOM",
            source.len(),
            drawn.len()
        ));
    }
    for ((tag, body), (dtag, _)) in source.iter().zip(&drawn) {
        let kind = attr(tag, "data-chart").unwrap_or("?");
        let marks = body.matches("class=\"mark").count();
        let n: usize = attr(dtag, "data-drawn").and_then(|n| n.parse().ok()).unwrap_or(0);
        if marks == 0 || n != marks {
            problems.push(format!(
                "chart {kind} ({}): {n} of {marks} data marks drawn",
                attr(tag, "aria-label").unwrap_or("")
            ));
        }
        if attr(dtag, "data-box").is_none_or(|b| b.starts_with("0x") || b.ends_with("x0")) {
            problems.push(format!("chart {kind} has no box: {:?}", attr(dtag, "data-box")));
        }
    }
    for &(kind, n) in want {
        let docs_with = dom
            .split("<section class=\"doc\"")
            .skip(1)
            .filter(|s| s.contains(&format!("data-chart=\"{}\"", kind.id())))
            .count();
        let notes = dom.matches(&format!("data-omitted=\"{}\"", kind.id())).count();
        if docs_with != n {
            problems.push(format!("{}: drawn in {docs_with} document(s), want {n}", kind.id()));
        }
        if notes != docs - n {
            problems.push(format!("{}: {notes} omission note(s), want {}", kind.id(), docs - n));
        }
    }
    if let Some(keep) = std::env::var_os("BOOTBENCH_HTML_KEEP") {
        let keep = PathBuf::from(keep);
        let _ = std::fs::create_dir_all(&keep);
        for f in [&page, &shot] {
            if let Some(n) = f.file_name() {
                let _ = std::fs::copy(f, keep.join(n));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The real runs: a 4-disk quick run (zones, seek profile, latencies; no
/// arrays) and a stacks run (raid0, crypt layer, all at once) together.
fn both() -> (String, Vec<(Chart, usize)>) {
    let docs = [fixture("quick-4disks.json"), fixture("stacks.json")];
    let want = vec![
        (Chart::Surface, 2),
        (Chart::Seek, 2),
        (Chart::Latency, 2),
        (Chart::Array, 1),
        (Chart::Layer, 1),
        (Chart::AllAtOnce, 1),
    ];
    (render(&docs), want)
}

#[test]
fn every_chart_renders_in_chromium_without_console_errors() {
    let tmp = Tmp::new("ok");
    let (html, want) = both();
    if let Err(e) = check(&html, &want, 2, &tmp.0, "report") {
        panic!("the HTML report in Chromium:\n{e}");
    }
}

/// The fleet section's charts (t2's boot: two SATA disks of one model and
/// firmware, one throttled) and the member tables under an array's and a
/// layer's note (stacks-members.json) laid out in Chromium like the rest.
#[test]
fn the_fleet_charts_and_member_tables_render_in_chromium() {
    let tmp = Tmp::new("fleet");
    let t2 = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/outlier-t2.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    let html = render(&[t2, fixture("stacks-members.json")]);
    assert!(
        html.contains("<svg class=\"chart\" data-chart=\"fleet\""),
        "a fleet chart"
    );
    assert_eq!(
        html.matches("<table class=\"members\">").count(),
        2,
        "two member tables"
    );
    let want = [(Chart::Array, 1), (Chart::Layer, 1), (Chart::AllAtOnce, 1)];
    if let Err(e) = check(&html, &want, 2, &tmp.0, "fleet") {
        panic!("the HTML report with a fleet section in Chromium:\n{e}");
    }
}

/// The page of `fleet --html` over three machines, one with a slow SATA
/// SSD (the documents of `tests/fleet.rs`'s `fleet_flags_the_slow_disk`): every
/// strip chart (a chart per test, by host model and by disk model) has all
/// its dots and medians laid out, the page logs nothing and fetches
/// nothing, like the report.
#[test]
fn the_fleet_page_renders_in_chromium() {
    let tmp = Tmp::new("fleet-page");
    let docs: Vec<Loaded> = rack::write(&tmp.0.join("rack"), &rack::three_with_a_slow_disk())
        .iter()
        .map(|p| load(Path::new(p)).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let html = render_fleet(&bootbench_report::render::fleet::Fleet::new(&docs));
    assert_eq!(
        html.matches("<svg class=\"chart\" data-chart=\"fleet\"").count(),
        8,
        "two groupings, four tests"
    );
    assert_eq!(
        html.matches("class=\"mark dot outlier\"").count(),
        8,
        "the slow disk in each chart"
    );
    if let Err(e) = check(&html, &[], 0, &tmp.0, "fleet-page") {
        panic!("the fleet page in Chromium:\n{e}");
    }
}

/// A disk's surface scan (made on the simulated HDD,
/// `common::scanned_document`): its section's chart has every zone's dot
/// laid out, beside the 4-disk run's other charts, and the page logs
/// nothing and fetches nothing.
#[test]
fn a_surface_scan_renders_in_chromium() {
    let tmp = Tmp::new("surface-scan");
    let s = common::scanned_document(None, None);
    let path = tmp.0.join("scan.json");
    std::fs::write(&path, &s.json).expect("write the document");
    let html = render(&[load(&path).unwrap_or_else(|e| panic!("{e}"))]);
    assert_eq!(
        html.matches("<svg class=\"chart\" data-chart=\"surface-scan\"").count(),
        1,
        "one scan, one chart"
    );
    let want = [(Chart::Surface, 1), (Chart::Seek, 1), (Chart::Latency, 1)];
    if let Err(e) = check(&html, &want, 1, &tmp.0, "surface-scan") {
        panic!("the HTML report with a surface scan in Chromium:\n{e}");
    }
}

#[test]
fn checker_fails_on_a_script_error() {
    let tmp = Tmp::new("js");
    let (html, want) = both();
    let broken = html.replacen("</body>", "<script>no_such_function();</script></body>", 1);
    let e = check(&broken, &want, 2, &tmp.0, "js-error").expect_err("a script error must fail the check");
    eprintln!("the check failed as it must:\n{e}");
    assert!(e.contains("console"), "{e}");
}

#[test]
fn checker_fails_on_a_missing_chart_an_undrawn_chart_and_an_external_resource() {
    let tmp = Tmp::new("missing");
    let (html, want) = both();
    // The layer chart taken out: its svg renamed so it is no chart.
    let gone = html.replace(
        "<svg class=\"chart\" data-chart=\"layer\"",
        "<svg class=\"gone\" data-chart=\"x\"",
    );
    let e = check(&gone, &want, 2, &tmp.0, "missing").expect_err("a missing chart must fail the check");
    eprintln!("the check failed as it must:\n{e}");
    assert!(e.contains("layer: drawn in 0"), "{e}");
    // The charts are there but their marks are not laid out.
    let flat = html.replacen("</style>", ".mark{display:none}</style>", 1);
    let e = check(&flat, &want, 2, &tmp.0, "flat").expect_err("undrawn marks must fail the check");
    eprintln!("the check failed as it must:\n{e}");
    assert!(e.contains("data marks drawn"), "{e}");
    // A stylesheet from elsewhere: the page is no longer self-contained.
    let external = html.replacen(
        "</head>",
        "<link rel=\"stylesheet\" href=\"https://fonts.invalid/x.css\"></head>",
        1,
    );
    let e = check(&external, &want, 2, &tmp.0, "external").expect_err("an external resource must fail the check");
    eprintln!("the check failed as it must:\n{e}");
    assert!(e.contains("loaded resources"), "{e}");
}
