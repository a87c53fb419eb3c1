//! `bootbench-man OUTDIR` writes a page for each command and each
//! subcommand, each naming its command and every option of it, and each
//! command's page lists its subcommands' pages. The roff is read as it is
//! written (no `man` needed): a name's `-` is `\-` there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The four commands: a page each, whatever their definitions say.
const COMMANDS: [&str; 4] = [
    "bootbench-init",
    "bootbench-image",
    "bootbench-qemu",
    "bootbench-report",
];

/// `s` as clap_mangen (the roff crate) writes it in text.
fn roff(s: &str) -> String {
    s.replace('-', "\\-").replace('\'', "\\*(Aq")
}

/// A directory of its own under the system's temporary one, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("bootbench-man-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The pages `bootbench-man` writes into `dir`: file name -> text.
fn generate(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_bootbench-man"))
        .arg(dir)
        .output()
        .expect("bootbench-man runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: BTreeSet<PathBuf> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(PathBuf::from)
        .collect();
    let pages: std::collections::BTreeMap<String, String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            assert!(listed.contains(&path), "{name} written but not listed");
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    assert_eq!(pages.len(), listed.len(), "listed: {listed:?}");
    pages
}

/// The lines of `section` (`.SH NAME`) of a page, up to the next section.
fn section<'a>(page: &'a str, title: &str) -> Vec<&'a str> {
    let head = if title.contains(' ') {
        format!(".SH \"{title}\"")
    } else {
        format!(".SH {title}")
    };
    page.lines()
        .skip_while(|l| *l != head)
        .skip(1)
        .take_while(|l| !l.starts_with(".SH "))
        .collect()
}

/// How the page names an argument: `\fB\-\-out\-dir\fR`, `\fB\-o\fR`, or a
/// positional's `<\fIPATHS\fR>`.
fn rendered(arg: &clap::Arg) -> String {
    if let Some(long) = arg.get_long() {
        format!("\\fB{}\\fR", roff(&format!("--{long}")))
    } else if let Some(short) = arg.get_short() {
        format!("\\fB{}\\fR", roff(&format!("-{short}")))
    } else {
        let name = arg
            .get_value_names()
            .and_then(|v| v.first().map(ToString::to_string))
            .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
        format!("<\\fI{}\\fR>", roff(&name))
    }
}

/// Every page of `cmd` (`parent` its parent's page name and how the parent
/// is typed, if a subcommand): there, it names the command and every
/// option; a command with subcommands lists their pages. Returns the page
/// names checked.
fn check(
    pages: &std::collections::BTreeMap<String, String>,
    cmd: &clap::Command,
    parent: Option<(&str, &str)>,
) -> Vec<String> {
    let (name, typed) = match parent {
        Some((page, typed)) => (
            format!("{page}-{}", cmd.get_name()),
            format!("{typed} {}", cmd.get_name()),
        ),
        None => (cmd.get_name().to_owned(), cmd.get_name().to_owned()),
    };
    let file = format!("{name}.1");
    let page = pages
        .get(&file)
        .unwrap_or_else(|| panic!("no page {file}; pages: {:?}", pages.keys()));
    assert!(
        page.lines().any(|l| l.starts_with(&format!(".TH {name} 1 "))),
        "{file}: its title is not {name}"
    );
    let what = section(page, "NAME");
    assert!(
        what.first()
            .is_some_and(|l| l.starts_with(&format!("{} \\- ", roff(&name)))),
        "{file}: NAME does not name {name}: {what:?}"
    );
    // The synopsis says how the command is typed: `bootbench-report fleet`.
    let synopsis = section(page, "SYNOPSIS").join("\n");
    assert!(
        synopsis.starts_with(&format!("\\fB{}\\fR", roff(&typed))),
        "{file}: SYNOPSIS does not start with {typed}: {synopsis}"
    );
    let options = section(page, "OPTIONS").join("\n");
    let mut seen = 0;
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let r = rendered(arg);
        assert!(
            options.contains(&r),
            "{file}: option {:?} ({r}) not in OPTIONS:\n{options}",
            arg.get_id()
        );
        seen += 1;
    }
    assert!(seen > 0, "{file}: no option checked");
    let mut done = vec![name.clone()];
    let subs: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect();
    if !subs.is_empty() {
        let listed = section(page, "SUBCOMMANDS").join("\n");
        let see_also = section(page, "SEE ALSO").join("\n");
        for s in &subs {
            let sub_page = roff(&format!("{name}-{}", s.get_name()));
            assert!(
                listed.contains(&format!("{sub_page}(1)")),
                "{file}: SUBCOMMANDS lacks {sub_page}"
            );
            assert!(
                see_also.contains(&format!("\\fB{sub_page}\\fR(1)")),
                "{file}: SEE ALSO lacks {sub_page}: {see_also}"
            );
        }
    }
    if let Some((p, _)) = parent {
        let see_also = section(page, "SEE ALSO").join("\n");
        assert!(
            see_also.contains(&format!("\\fB{}\\fR(1)", roff(p))),
            "{file}: SEE ALSO lacks {p}"
        );
    }
    for s in subs {
        done.extend(check(pages, s, Some((&name, &typed))));
    }
    done
}

#[test]
fn every_command_and_subcommand_has_its_page() {
    let dir = TempDir::new("pages");
    let pages = generate(&dir.0);
    let commands = bootbench_man::commands();
    let names: Vec<&str> = commands.iter().map(clap::Command::get_name).collect();
    assert_eq!(names, COMMANDS);
    let mut checked = Vec::new();
    for cmd in &commands {
        let mut cmd = cmd.clone();
        cmd.build();
        checked.extend(check(&pages, &cmd, None));
    }
    // Every page was checked, and no more were written (no `help` page).
    let mut written: Vec<String> = pages.keys().map(|f| f.trim_end_matches(".1").to_owned()).collect();
    written.sort();
    checked.sort();
    assert_eq!(checked, written);
    // The walk reached the subcommands (not a vacuous pass).
    for page in [
        "bootbench-init-run",
        "bootbench-image-flash",
        "bootbench-qemu-netboot",
        "bootbench-report-fleet",
        "bootbench-report-baseline",
    ] {
        assert!(checked.iter().any(|c| c == page), "{page} not checked: {checked:?}");
    }
}

#[test]
fn pages_say_what_help_says() {
    let dir = TempDir::new("help");
    let pages = generate(&dir.0);
    // bootbench-report's bare `#[command(about)]` is its crate's description,
    // not the generator's.
    let report = &pages["bootbench-report.1"];
    assert!(
        section(report, "NAME")[0].starts_with(&roff(
            "bootbench-report - bootbench's host tool: reads result documents"
        )),
        "{report}"
    );
    assert!(pages
        .values()
        .all(|p| !p.contains(&roff(env!("CARGO_PKG_DESCRIPTION")))));
    // A visible alias is shown, as --help shows it.
    assert!(pages["bootbench-report-fleet.1"].contains(&roff("[alias: --output]")));
    // A ValueEnum's values, and the footer names the command and its version.
    let usb = &pages["bootbench-qemu-usb.1"];
    assert!(usb.contains("q35: `q35`: Q35 + ICH9"), "{usb}");
    assert!(
        usb.contains(&format!("\"bootbench-qemu {}\"", env!("CARGO_PKG_VERSION"))),
        "{usb}"
    );
    // bootbench-init's after-help (each command's usage, the exit statuses).
    assert!(pages["bootbench-init.1"].contains("Exit status: 0 run completed and every target accepted"));
}

/// bootbench-init's page (its `--help`) names every exit status `run`
/// returns, as docs/commands.md's "Exit status" says: 3, a completed run in
/// which a target failed acceptance, and 130, an interrupted one, too.
#[test]
fn init_page_names_every_exit_status() {
    let out = TempDir::new("status");
    let pages = generate(&out.0);
    let page = &pages["bootbench-init.1"];
    let status = page
        .split("Exit status:")
        .nth(1)
        .unwrap_or_else(|| panic!("no exit statuses in {page}"));
    let status = status.split('.').next().unwrap_or_default().replace('\n', " ");
    for said in [
        "0 run completed and every target accepted",
        "3 run completed and a target failed acceptance",
        "1 run failed",
        "2 bad input",
        "130 interrupted",
    ] {
        assert!(status.contains(said), "{said:?} not in {status:?}");
    }
}

/// Each command's and subcommand's short description is one line: the
/// man page's NAME, `apropos`'s line and the first line of `--help`. The
/// paragraph after it is the long help (DESCRIPTION), never the NAME.
#[test]
fn every_short_description_is_one_line() {
    fn walk(cmd: &clap::Command, path: &str, bad: &mut Vec<String>) {
        let about = cmd.get_about().map(ToString::to_string).unwrap_or_default();
        let name = format!("{path}{}", cmd.get_name());
        if about.trim().is_empty() {
            bad.push(format!("{name}: no short description"));
        } else if about.contains('\n') || about.chars().count() > 100 {
            bad.push(format!(
                "{name}: {} characters over {} line(s): {about:?}",
                about.chars().count(),
                about.lines().count()
            ));
        }
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            walk(sub, &format!("{name} "), bad);
        }
    }
    let mut bad = Vec::new();
    for cmd in bootbench_man::commands() {
        walk(&cmd, "", &mut bad);
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
