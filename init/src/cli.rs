//! The command line: `run`, `validate`.
//!
//! Exit status: 0 when the run completed and no target failed acceptance
//! (some tests may be `skipped`), 3 when it completed and a target failed
//! acceptance ([`EXIT_NOT_ACCEPTED`]), 2 for bad input (reported before
//! anything is opened for writing), 1 for a run-level failure, 130 when it
//! was interrupted. Only the results JSON goes to
//! stdout; progress, messages and the summary table go to stderr. Text
//! meant for a terminal (messages, progress, `list`, `validate`'s plan)
//! goes through [`console::safe`]: a device string cannot drive it.

use std::path::Path;

use bench_core::document::result::{RunStatus, Verdict};
use bench_core::verdict::table::render;
use bench_core::vocab::console;

use crate::args::Cli;
pub use crate::args::{Command, PlanArgs};
use crate::disks::{discover, identity};
use crate::plan::{self, Overrides};
use crate::results::{beside, remote, sink};
use crate::run::{self, stacks};

impl PlanArgs {
    /// The plan's overrides they make.
    fn overrides(&self) -> Overrides {
        Overrides {
            profile: self.profile.clone(),
            targets: self.targets.clone(),
            simulate: self.simulate,
            ..Overrides::default()
        }
    }
}

/// What `args` (the program name first) ask for; `Err` is clap's error,
/// for [`print_clap_error`] (help and version are errors of clap's too).
pub fn parse_args<I, T>(args: I) -> Result<Command, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    <Cli as clap::Parser>::try_parse_from(args).map(|c| c.command)
}

/// clap's error as one line (its message, what it names, and the usage of
/// the command it is about), as every message of bootbench-init is one
/// line: `the following required arguments were not provided: <FILE>
/// (usage: bootbench-init validate [OPTIONS] <FILE>)`.
pub fn one_line(e: &clap::Error) -> String {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        return "no command given; expected run, validate or list (see --help)".to_string();
    }
    let text = e.render().to_string();
    let mut blocks = text.split("\n\n").map(str::trim).filter(|b| !b.is_empty());
    let what = blocks
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let usage = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage: "))
        .map(|u| format!(" (usage: {})", u.lines().next().unwrap_or(u)));
    format!("{what}{}", usage.unwrap_or_default())
}

/// One message line on stderr, `bootbench-init: ` first, through
/// [`console::safe`].
fn say(msg: &dyn std::fmt::Display) {
    eprintln!("bootbench-init: {}", console::safe(&msg.to_string()));
}

/// Run the command line; returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    let cmd = match parse_args(&args) {
        Ok(c) => c,
        // --help and --version: clap prints them, to stdout.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            say(&one_line(&e));
            return 2;
        }
    };
    match cmd {
        Command::List { json, stacks, all } => list(json, stacks, all),
        Command::Validate { config, booted, plan } => validate(&config, booted, &plan.overrides()),
        Command::Run { config, out, plan } => run_command(config.as_deref(), out.as_deref(), &plan.overrides()),
    }
}

fn list(json: bool, stacks: bool, all: bool) -> i32 {
    let mut disks = discover::disks(all);
    crate::disks::holds::read(&mut disks);
    let text = match (json, stacks) {
        (true, true) => serde_json::to_string_pretty(&crate::disks::holds::stacks(&disks)).map(|j| j + "\n"),
        (true, false) => serde_json::to_string_pretty(&disks).map(|j| j + "\n"),
        (false, _) => Ok(discover::render_list(&identity::host(), &disks)),
    };
    match text {
        Ok(t) => emit(&t),
        Err(e) => {
            eprintln!("bootbench-init: cannot encode the list: {e}");
            1
        }
    }
}

/// `text` to stdout: 0 when written, and when the reader went away first
/// (`list | head`: a closed pipe is not the list's failure, and print!
/// would panic on it); 1 with a message on any other error.
fn emit(text: &str) -> i32 {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("bootbench-init: cannot write the list to stdout: {e}");
            1
        }
    }
}

fn validate(path: &str, booted: bool, ov: &Overrides) -> i32 {
    if booted {
        let checked = match plan::read_config_file(Path::new(path)) {
            Ok(Some(text)) => plan::parse(&text, path).map(|raw| (raw, path)),
            Ok(None) => Err(plan::ConfigError(format!(
                "{path:?} does not exist; expected a config file"
            ))),
            Err(e) => Err(plan::ConfigError(e)),
        }
        .and_then(|(raw, path)| plan::check_for_boot(&raw, path, ov));
        return match checked {
            Ok(lines) => {
                for line in lines {
                    println!("{}", console::safe(&line));
                }
                0
            }
            Err(e) => {
                say(&e);
                2
            }
        };
    }
    match plan::load(Some(path), ov) {
        Ok(plan) => {
            for line in plan::describe_plan_lines(&plan) {
                println!("{}", console::safe(&line));
            }
            0
        }
        Err(e) => {
            say(&e);
            2
        }
    }
}

/// The room reserved for a run's document before it starts (see
/// `run_command`): 1 MiB and 256 KiB per test on a target, at most
/// 64 MiB. A document of the quick profile on one disk is about 200 KB;
/// one with a step's 10,000 samples about 400 KB more.
fn document_room(plan: &plan::Plan) -> u64 {
    let items = u64::try_from(plan.items.len()).unwrap_or(u64::MAX);
    items.saturating_mul(256 << 10).saturating_add(1 << 20).min(64 << 20)
}

fn run_command(config: Option<&str>, out: Option<&str>, ov: &Overrides) -> i32 {
    let (mut plan, plan_id) = match plan::load_with_id(config, ov) {
        Ok(p) => p,
        Err(e) => {
            say(&e);
            return 2;
        }
    };
    if let Err(e) = stacks::check_members_free(&plan) {
        say(&e);
        return 2;
    }
    // Where the document goes is made, and room for it taken, before
    // anything runs: a place it cannot be written (a read-only or full
    // filesystem, /proc, no name) is bad input, found before a disk is
    // touched, not a document lost after the run.
    let mut out_file = match out.map(|out| {
        let mut f = sink::NewFile::create(Path::new(out))?;
        f.reserve(document_room(&plan))?;
        Ok::<_, sink::SinkError>(f)
    }) {
        None => None,
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => {
            say(&e);
            return 2;
        }
    };
    if !plan.stacks.is_empty() {
        // A panic aborts (no unwinding): tear the stacks down first.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            stacks::emergency_teardown();
        }));
    }
    // Ctrl-C or a kill: stop after the requests in flight, tear down, write
    // the results (see crate::sys::signal).
    if let Err(e) = crate::sys::signal::install_stop_handlers(&run::engine::STOP) {
        eprintln!("bootbench-init: cannot handle SIGINT/SIGTERM ({e}); an interrupt would leave md/dm devices");
    }
    // The network's client and the machine's name, only for a run that
    // pushes or sends (the DMI is read again for nothing otherwise).
    let remote = (plan.metrics_url.is_some() || plan.results_url.is_some())
        .then(live_client)
        .flatten()
        .map(|c| {
            let host = crate::disks::identity::host();
            (c, crate::results::stick::machine_name(host.product_serial.as_deref()))
        });
    let pusher = remote
        .as_ref()
        .and_then(|(c, machine)| run::metrics(&plan, c.clone(), machine.clone(), None, say_line));
    let mut doc = run::execute(&mut plan, &mut |line| eprintln!("{}", console::safe(line)), &mut |d| {
        if let Some(p) = &pusher {
            p.update(d);
        }
    });
    if let Some(p) = pusher {
        let t = p.finish(&doc);
        say_line(&t.line());
    }
    // The verdicts are in: a failed NVMe disk's telemetry log, before the
    // document is encoded (it names the file and its checksum).
    let files = crate::run::telemetry::capture_failed(&mut doc, &mut |l| say_line(l));
    let failed = doc.run.status != RunStatus::Ok;
    let mut json = match serde_json::to_string_pretty(&doc) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("bootbench-init: cannot encode the results: {e}");
            return 1;
        }
    };
    json.push('\n');
    let written = crate::results::emit::to_file(out_file.take(), &json);
    let mut log = |l: &str| say_line(l);
    match (&written, out) {
        (Ok(()), Some(out)) => beside::say("telemetry log", &beside::save_beside(Path::new(out), &files), &mut log),
        _ if !files.is_empty() => say(&format!(
            "{} telemetry log(s) not saved: the results went to no file (--out)",
            files.len()
        )),
        _ => {}
    }
    eprint!("{}", render(&doc));
    if let (Some(t), Some((c, machine))) = (&plan.results_url, &remote) {
        match remote::send(c, t, machine, &plan_id, json.as_bytes(), remote::SEND_BOUND, &mut log) {
            Ok(url) => {
                say(&format!("results sent to {}", url.redacted()));
                let sent = remote::send_beside(c, &url, &files, remote::SEND_BOUND, &mut log);
                beside::say("telemetry log", &sent, &mut log);
            }
            Err(e) => say(&format!("results not sent to the results URL: {e}")),
        }
    }
    if let Err(e) = written {
        say(&e);
        return 1;
    }
    if let Some(out) = out {
        say(&format!("results written to {out}"));
    }
    if doc.run.status == RunStatus::Interrupted {
        // As a shell reports a process ended by SIGINT.
        return 130;
    }
    if failed {
        return 1;
    }
    if doc.acceptance.as_ref().is_some_and(|a| a.verdict == Verdict::Fail) {
        return EXIT_NOT_ACCEPTED;
    }
    0
}

/// A line on stderr, made safe for the terminal.
fn say_line(line: &str) {
    eprintln!("{}", console::safe(line));
}

/// The live command's HTTP client: https trusts the initramfs's bundle
/// when there is one, else the system's (Debian's ca-certificates).
fn live_client() -> Option<crate::net::http::Client> {
    let bundle = [crate::net::CA_BUNDLE, "/etc/ssl/certs/ca-certificates.crt"]
        .iter()
        .find_map(|p| std::fs::read(p).ok());
    match crate::net::http::Client::new(bundle.as_deref()) {
        Ok(c) => Some(c),
        Err(e) => {
            say_line(&format!("metrics: not pushed: {e}"));
            None
        }
    }
}

/// The exit status of a run that completed with a target that failed
/// acceptance (docs/acceptance.md): distinct from 1 (the run failed) and
/// 2 (bad input).
pub const EXIT_NOT_ACCEPTED: i32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        std::iter::once("bootbench-init")
            .chain(s.split_whitespace())
            .map(str::to_string)
            .collect()
    }

    fn parsed(s: &str) -> Command {
        parse_args(args(s)).unwrap_or_else(|e| panic!("{s}: {}", one_line(&e)))
    }

    #[test]
    fn parses_run_validate_and_list() {
        let c = parsed("run --config c.json --profile quick --target /dev/a --target=/dev/b --out r.json --simulate");
        let want_plan = PlanArgs {
            profile: Some("quick".into()),
            targets: vec!["/dev/a".into(), "/dev/b".into()],
            simulate: true,
        };
        assert_eq!(
            c,
            Command::Run {
                config: Some("c.json".into()),
                out: Some("r.json".into()),
                plan: want_plan.clone()
            }
        );
        let Command::Run { plan, .. } = c else { unreachable!() };
        let ov = plan.overrides();
        assert_eq!(
            (ov.profile.as_deref(), ov.targets.len(), ov.simulate),
            (Some("quick"), 2, true)
        );
        assert_eq!(
            parsed("validate c.json --target /dev/a"),
            Command::Validate {
                config: "c.json".into(),
                booted: false,
                plan: PlanArgs {
                    targets: vec!["/dev/a".into()],
                    ..PlanArgs::default()
                }
            }
        );
        assert!(matches!(
            parsed("validate --booted c.json"),
            Command::Validate { booted: true, .. }
        ));
        assert_eq!(
            parsed("list"),
            Command::List {
                json: false,
                stacks: false,
                all: false
            }
        );
        assert_eq!(
            parsed("list --all --json"),
            Command::List {
                json: true,
                stacks: false,
                all: true
            }
        );
        assert_eq!(
            parsed("list --json --stacks"),
            Command::List {
                json: true,
                stacks: true,
                all: false
            }
        );
        // --help and --version are for stdout, not errors.
        for (line, kind) in [
            ("--help", clap::error::ErrorKind::DisplayHelp),
            ("run --help", clap::error::ErrorKind::DisplayHelp),
            ("--version", clap::error::ErrorKind::DisplayVersion),
        ] {
            let e = parse_args(args(line)).unwrap_err();
            assert_eq!(e.kind(), kind, "{line}");
            assert!(!e.use_stderr(), "{line}");
        }
    }

    /// Each bad command line is one line naming what is wrong, and the
    /// usage of the command it is about.
    #[test]
    fn refuses_bad_arguments_in_one_line() {
        let cases = [
            ("", "no command given; expected run, validate or list"),
            ("bench", "unrecognized subcommand 'bench'"),
            ("run --frobnicate", "unexpected argument '--frobnicate'"),
            ("run --target", "a value is required for '--target <PATH>'"),
            ("run extra", "unexpected argument 'extra'"),
            (
                "validate",
                "the following required arguments were not provided: <FILE> (usage: bootbench-init validate",
            ),
            ("validate a.json b.json", "unexpected argument 'b.json'"),
            ("validate a.json --out r.json", "unexpected argument '--out'"),
            ("run --simulate=yes", "unexpected value 'yes' for '--simulate'"),
            ("run --booted", "unexpected argument '--booted'"),
            ("list --target /dev/sda", "unexpected argument '--target'"),
        ];
        for (line, want) in cases {
            let e = parse_args(args(line)).unwrap_err();
            assert!(e.use_stderr(), "{line}");
            let m = one_line(&e);
            assert!(m.contains(want), "{line}: {m}");
            assert!(!m.contains('\n'), "{line}: one line: {m:?}");
        }
        // An empty value is no value.
        let e = parse_args(["bootbench-init", "run", "--target", ""]).unwrap_err();
        assert!(one_line(&e).contains("--target"), "{}", one_line(&e));
    }
}
