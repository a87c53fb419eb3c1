//! The command line: `run`, `validate`.
//!
//! Exit status: 0 when the run completed (some tests may be `error` or
//! `skipped`), 2 for bad input (reported before anything is opened for
//! writing), 1 for a run-level failure. Only the results JSON goes to
//! stdout; progress, messages and the summary table go to stderr. Text
//! meant for a terminal (messages, progress, `list`, `validate`'s plan)
//! goes through [`console::safe`]: a device string cannot drive it.

use std::path::Path;

use bench_core::console;
use bench_core::table::render;

use crate::disks::{discover, identity};
use crate::plan::{self, Overrides};
use crate::results::sink;
use crate::run::{self, stacks};

const USAGE: &str = "\
usage:
  bootbench-init run [--config FILE] [--profile NAME] [--target PATH]... [--out FILE] [--simulate]
  bootbench-init validate FILE [--booted] [--profile NAME] [--target PATH]... [--simulate]
  bootbench-init list [--json] [--all]
  bootbench-init --help | --version

run       benchmark the targets; results JSON to --out FILE (never overwritten) or stdout,
          progress and a summary table (MB/s = 10^6 bytes/s) on stderr
validate  check a config and print the plan it expands into; --booted checks it as the
          booted run will (a stick's config on a laptop: disks named by serial or WWN that
          are not here are checked at boot) and says what it will and will not write
list      print the host (DMI vendor, product, serial; CPU; memory) and every whole
          disk, one per line (transport, driver, PCI address, model, serial, firmware,
          WWN, size, block sizes, rotational, write cache, scheduler, readahead);
          --json prints the disks as a JSON array; --all includes loop, RAM, md, dm,
          optical, nbd and empty devices
--config FILE    the config (JSON); without it, --profile and --target say what to run
--profile NAME   quick, standard, classic or cdm (replaces the config's profile)
--target PATH    a block device or file (repeatable; replaces the config's targets);
                 with --simulate: sim:hdd:SIZE or sim:ssd:SIZE (default sim:hdd:1G sim:ssd:256M)
--out FILE       write the results there atomically, refusing to overwrite
--simulate       run on simulated disks (deterministic, no hardware)

Exit status: 0 run completed, 1 run failed, 2 bad input.
Writes happen only on targets named in the config's \"destructive\" section with the phrase
\"I understand this destroys data\"; other write tests are skipped.
";

/// What the command line asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// `run` or `validate`.
    pub command: String,
    /// `--config FILE`, or `validate`'s FILE.
    pub config: Option<String>,
    /// `--profile`, `--target`, `--simulate`.
    pub overrides: Overrides,
    /// `--out FILE`.
    pub out: Option<String>,
    /// `validate --booted`: as the booted run checks it ([`plan::check_for_boot`]).
    pub booted: bool,
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Print the usage.
    Help,
    /// Print the version.
    Version,
    /// `run` or `validate`.
    Go(Args),
    /// `list`: the host and its disks.
    List {
        /// `--json`: the disks as a JSON array.
        json: bool,
        /// `--all`: virtual and empty devices too.
        all: bool,
    },
}

/// Parse the arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut it = args.iter();
    let Some(first) = it.next() else {
        return Err("no command given; expected run, validate or list".to_string());
    };
    match first.as_str() {
        "--help" | "-h" | "help" => return Ok(Command::Help),
        "--version" | "-V" => return Ok(Command::Version),
        "run" | "validate" => {}
        "list" => {
            let (mut json, mut all) = (false, false);
            for arg in it {
                match arg.as_str() {
                    "--json" => json = true,
                    "--all" => all = true,
                    "--help" | "-h" => return Ok(Command::Help),
                    o => return Err(format!("{o:?} is not an option of list; see --help")),
                }
            }
            return Ok(Command::List { json, all });
        }
        other => return Err(format!("{other:?} is not a command; expected run, validate or list")),
    }
    let mut a = Args {
        command: first.clone(),
        ..Args::default()
    };
    let validate = first == "validate";
    while let Some(arg) = it.next() {
        let (opt, inline) = match arg.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match inline.clone().or_else(|| it.next().cloned()) {
                Some(v) => Ok(v),
                None => Err(format!("{name} needs a value")),
            }
        };
        match opt {
            "--help" | "-h" => return Ok(Command::Help),
            "--config" if !validate => a.config = Some(value("--config")?),
            "--profile" => a.overrides.profile = Some(value("--profile")?),
            "--target" => a.overrides.targets.push(value("--target")?),
            "--out" if !validate => a.out = Some(value("--out")?),
            "--simulate" if inline.is_none() => a.overrides.simulate = true,
            "--booted" if validate && inline.is_none() => a.booted = true,
            o if o.starts_with('-') && o.len() > 1 => {
                return Err(format!("{o:?} is not an option of {}; see --help", a.command));
            }
            file if validate && a.config.is_none() => a.config = Some(file.to_string()),
            extra => return Err(format!("{extra:?}: unexpected argument to {}; see --help", a.command)),
        }
    }
    if validate && a.config.is_none() {
        return Err("validate needs a config FILE".to_string());
    }
    Ok(Command::Go(a))
}

/// One message line on stderr, `bootbench-init: ` first, through
/// [`console::safe`].
fn say(msg: &dyn std::fmt::Display) {
    eprintln!("bootbench-init: {}", console::safe(&msg.to_string()));
}

/// Run the command line; returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    let cmd = match parse_args(args.get(1..).unwrap_or(&[])) {
        Ok(c) => c,
        Err(e) => {
            say(&e);
            eprintln!("{USAGE}");
            return 2;
        }
    };
    match cmd {
        Command::Help => {
            print!("{USAGE}");
            0
        }
        Command::Version => {
            println!("bootbench-init {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Command::List { json, all } => list(json, all),
        Command::Go(a) if a.command == "validate" => validate(&a),
        Command::Go(a) => run_command(&a),
    }
}

fn list(json: bool, all: bool) -> i32 {
    let disks = discover::disks(all);
    if json {
        match serde_json::to_string_pretty(&disks) {
            Ok(j) => println!("{j}"),
            Err(e) => {
                eprintln!("bootbench-init: cannot encode the list: {e}");
                return 1;
            }
        }
    } else {
        print!("{}", discover::render_list(&identity::host(), &disks));
    }
    0
}

fn validate(a: &Args) -> i32 {
    if a.booted {
        let checked = a
            .config
            .as_deref()
            .ok_or_else(|| plan::ConfigError("validate needs a config FILE".to_string()))
            .and_then(|path| match plan::read_config_file(Path::new(path)) {
                Ok(Some(text)) => plan::parse(&text, path).map(|raw| (raw, path)),
                Ok(None) => Err(plan::ConfigError(format!(
                    "{path:?} does not exist; expected a config file"
                ))),
                Err(e) => Err(plan::ConfigError(e)),
            })
            .and_then(|(raw, path)| plan::check_for_boot(&raw, path, &a.overrides));
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
    match plan::load(a.config.as_deref(), &a.overrides) {
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

fn run_command(a: &Args) -> i32 {
    let mut plan = match plan::load(a.config.as_deref(), &a.overrides) {
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
    let mut out_file = match a.out.as_deref().map(|out| {
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
    let doc = run::execute(&mut plan, &mut |line| eprintln!("{}", console::safe(line)), &mut |_| {});
    let failed = doc.run.status != "ok";
    let mut json = match serde_json::to_string_pretty(&doc) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("bootbench-init: cannot encode the results: {e}");
            return 1;
        }
    };
    json.push('\n');
    let written = match out_file.take() {
        Some(mut f) => f
            .write_with(json.as_bytes(), &mut |_| {})
            .and_then(|()| f.commit())
            .map_err(|e| {
                // Not lost: the document goes to stdout instead.
                let on_stdout = sink::write_stdout(json.as_bytes()).is_ok();
                format!(
                    "{e}; {}",
                    if on_stdout {
                        "the results were written to stdout instead"
                    } else {
                        "nor could they be written to stdout"
                    }
                )
            }),
        None => sink::write_stdout(json.as_bytes()).map_err(|e| format!("cannot write the results to stdout: {e}")),
    };
    eprint!("{}", render(&doc));
    if let Err(e) = written {
        say(&e);
        return 1;
    }
    if let Some(out) = &a.out {
        say(&format!("results written to {out}"));
    }
    if doc.run.status == "interrupted" {
        // As a shell reports a process ended by SIGINT.
        return 130;
    }
    i32::from(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn parses_run_and_validate() {
        let c = parse_args(&args(
            "run --config c.json --profile quick --target /dev/a --target=/dev/b --out r.json --simulate",
        ))
        .unwrap();
        let Command::Go(a) = c else { panic!("{c:?}") };
        assert_eq!(a.command, "run");
        assert_eq!(a.config.as_deref(), Some("c.json"));
        assert_eq!(a.out.as_deref(), Some("r.json"));
        assert_eq!(a.overrides.profile.as_deref(), Some("quick"));
        assert_eq!(a.overrides.targets, vec!["/dev/a", "/dev/b"]);
        assert!(a.overrides.simulate);

        let Command::Go(v) = parse_args(&args("validate c.json --target /dev/a")).unwrap() else {
            panic!()
        };
        assert_eq!((v.command.as_str(), v.config.as_deref()), ("validate", Some("c.json")));
        assert!(!v.booted);
        let Command::Go(v) = parse_args(&args("validate --booted c.json")).unwrap() else {
            panic!()
        };
        assert!(v.booted && v.config.as_deref() == Some("c.json"));
        assert!(parse_args(&args("run --booted"))
            .unwrap_err()
            .contains("\"--booted\" is not an option of run"));
        assert_eq!(parse_args(&args("--help")), Ok(Command::Help));
        assert_eq!(parse_args(&args("run --help")), Ok(Command::Help));
        assert_eq!(parse_args(&args("--version")), Ok(Command::Version));
        assert_eq!(
            parse_args(&args("list")),
            Ok(Command::List {
                json: false,
                all: false
            })
        );
        assert_eq!(
            parse_args(&args("list --all --json")),
            Ok(Command::List { json: true, all: true })
        );
    }

    #[test]
    fn refuses_bad_arguments() {
        let cases = [
            ("", "no command"),
            ("bench", "\"bench\" is not a command"),
            ("run --frobnicate", "\"--frobnicate\" is not an option"),
            ("run --target", "--target needs a value"),
            ("run extra", "unexpected argument"),
            ("validate", "validate needs a config FILE"),
            ("validate a.json b.json", "unexpected argument"),
            ("validate a.json --out r.json", "\"--out\" is not an option"),
            ("run --simulate=yes", "is not an option"),
            ("list --target /dev/sda", "\"--target\" is not an option of list"),
        ];
        for (line, want) in cases {
            let e = parse_args(&args(line)).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
    }
}
