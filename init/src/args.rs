//! The live command's command line (`run`, `validate`, `list`): its clap
//! definitions, whose doc comments are its `--help` and its man pages;
//! `cli.rs` parses and runs it.
//!
//! This file uses clap and std only: bootbench-man (man/) includes it with
//! `#[path]` to write the man pages without compiling PID 1's code.

/// What `--help` says after the commands and options: each command's
/// usage, the exit statuses and the write interlock.
const AFTER_HELP: &str = "\
Each command:
  bootbench-init run [--config FILE] [--profile NAME] [--target PATH]... [--out FILE] [--simulate]
  bootbench-init validate FILE [--booted] [--profile NAME] [--target PATH]... [--simulate]
  bootbench-init list [--json [--stacks]] [--all]

Exit status: 0 run completed and every target accepted, 3 run completed and a target failed
acceptance, 1 run failed, 2 bad input, 130 interrupted.
Writes happen only on targets named in the config's \"destructive\" section with the phrase
\"I understand this destroys data\"; other write tests are skipped.";

/// The command line.
#[derive(Debug, clap::Parser)]
#[command(
    name = "bootbench-init",
    version,
    about = "bootbench's PID 1, and a disk benchmark on a live Linux system",
    after_help = AFTER_HELP,
    subcommand_required = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// `--profile`, `--target` and `--simulate`: the plan's overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq, clap::Args)]
pub struct PlanArgs {
    /// quick, standard, classic or cdm (replaces the config's profile)
    #[arg(long, value_name = "NAME", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub profile: Option<String>,
    /// A block device or file (repeatable; replaces the config's targets); with
    /// --simulate: sim:hdd:SIZE or sim:ssd:SIZE (default sim:hdd:1G sim:ssd:256M)
    #[arg(long = "target", value_name = "PATH", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub targets: Vec<String>,
    /// Run on simulated disks (deterministic, no hardware)
    #[arg(long)]
    pub simulate: bool,
}

/// A command.
#[derive(Clone, Debug, PartialEq, Eq, clap::Subcommand)]
pub enum Command {
    /// Benchmark the targets and write the result document
    ///
    /// Results JSON to --out FILE (never overwritten) or
    /// stdout, progress and a summary table (MB/s = 10^6 bytes/s) on stderr
    Run {
        /// The config (JSON); without it, --profile and --target say what to run
        #[arg(long, value_name = "FILE", value_parser = clap::builder::NonEmptyStringValueParser::new())]
        config: Option<String>,
        /// Write the results there atomically, refusing to overwrite
        #[arg(long, value_name = "FILE")]
        out: Option<String>,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Check a config and print the plan it expands into
    Validate {
        /// The config (JSON)
        #[arg(value_name = "FILE")]
        config: String,
        /// Check it as the booted run will (a stick's config on a laptop: disks
        /// named by serial or WWN that are not here are checked at boot) and say
        /// what it will and will not write
        #[arg(long)]
        booted: bool,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// List the host and every whole disk
    ///
    /// Print the host (DMI vendor, product, serial; CPU; memory) and every whole
    /// disk, one per line (transport, driver, PCI address, model, serial,
    /// firmware, WWN, size, block sizes, rotational, write cache, scheduler,
    /// readahead)
    List {
        /// Print the disks as a JSON array (with --stacks: the stacks as a JSON object)
        #[arg(long)]
        json: bool,
        /// With --json: print the md arrays and LVM volume groups the disks'
        /// metadata makes, instead of the disks
        #[arg(long)]
        stacks: bool,
        /// Include loop, RAM, md, dm, optical, nbd and empty devices
        #[arg(long)]
        all: bool,
    },
}

/// The command as clap sees it (its `--help`; what bootbench-man renders).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
