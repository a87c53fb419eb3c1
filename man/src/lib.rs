//! bootbench-man: the man pages of bootbench's four commands, written from
//! their clap definitions with clap_mangen: one page per command
//! (`bootbench-report.1`) and one per subcommand, named as git's are
//! (`bootbench-report-fleet.1`, whose synopsis says `bootbench-report
//! fleet`).
//!
//! The definitions are the commands' own files, included with `#[path]`
//! (each uses clap and std only, qemu's with stand-ins: [`qemu`]), so this
//! crate compiles none of the programs and clap_mangen stays out of them.

use std::io;
use std::path::{Path, PathBuf};

use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;

#[path = "../../init/src/args.rs"]
pub mod init;

#[path = "../../image/src/cli.rs"]
pub mod image;

pub mod qemu;

#[path = "../../report/src/cli.rs"]
pub mod report;

/// A command: its clap definition and its crate's manifest (`Cargo.toml`).
#[derive(Debug)]
struct Tool {
    command: fn() -> clap::Command,
    manifest: &'static str,
}

/// The four commands, in the order of the README.
const TOOLS: [Tool; 4] = [
    Tool {
        command: init::command,
        manifest: include_str!("../../init/Cargo.toml"),
    },
    Tool {
        command: image::command,
        manifest: include_str!("../../image/Cargo.toml"),
    },
    Tool {
        command: qemu::cli::command,
        manifest: include_str!("../../qemu/Cargo.toml"),
    },
    Tool {
        command: report::command,
        manifest: include_str!("../../report/Cargo.toml"),
    },
];

/// The package `description` of a manifest.
fn description(manifest: &str) -> Option<&str> {
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("description = \""))
        .and_then(|d| d.strip_suffix('"'))
}

/// The four commands as their programs see them. A bare `#[command(about)]`
/// (or `version`) is the crate's description (version) where it is compiled:
/// here bootbench-man's, so a command whose about came out as this crate's
/// description gets its own crate's back. The versions are the workspace's,
/// the same in every crate.
pub fn commands() -> Vec<clap::Command> {
    TOOLS
        .iter()
        .map(|t| {
            let cmd = (t.command)();
            let ours = cmd
                .get_about()
                .is_some_and(|a| a.to_string() == env!("CARGO_PKG_DESCRIPTION"));
            match (ours, description(t.manifest)) {
                (true, Some(d)) => cmd.about(d),
                _ => cmd,
            }
        })
        .collect()
}

/// One man page: its name (`bootbench-report-fleet`) and its roff source.
#[derive(Debug)]
pub struct Page {
    pub name: String,
    pub roff: String,
}

impl Page {
    /// Its file name, in section 1.
    pub fn file_name(&self) -> String {
        format!("{}.1", self.name)
    }
}

/// Every page: each command's, then its subcommands' (and theirs), walked
/// as clap_mangen's own `generate_to` walks them, with a SEE ALSO section:
/// a command's page names its subcommands' pages and the other commands';
/// a subcommand's page names its parent's.
pub fn pages() -> Vec<Page> {
    let commands = commands();
    let names: Vec<String> = commands.iter().map(|c| c.get_name().to_owned()).collect();
    let mut out = Vec::new();
    for cmd in commands {
        // No page for clap's `help` subcommand: `--help` and this page say it.
        let mut cmd = with_visible_aliases(cmd).disable_help_subcommand(true);
        // Sets each subcommand's display name (`bootbench-report-fleet`: its
        // page's title and NAME) and bin name (`bootbench-report fleet`: its
        // SYNOPSIS).
        cmd.build();
        let others: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| *n != cmd.get_name())
            .collect();
        // The footer of every page of the command: `bootbench-report 0.1.0`.
        let source = format!("{} {}", cmd.get_name(), cmd.get_version().unwrap_or_default());
        walk(&cmd, &source, &others, &mut out);
    }
    out
}

/// The page of `cmd` (whose `see_also` are pages beside its subcommands')
/// and those of its subcommands.
fn walk(cmd: &clap::Command, source: &str, see_also: &[&str], out: &mut Vec<Page>) {
    let name = page_name(cmd).to_owned();
    let subs: Vec<&clap::Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    let sub_names: Vec<&str> = subs.iter().map(|s| page_name(s)).collect();
    let mut text = Vec::new();
    Man::new(cmd.clone())
        .source(source)
        .render(&mut text)
        .expect("rendering into a Vec does not fail");
    let mut refs = sub_names.clone();
    refs.extend_from_slice(see_also);
    let mut roff = break_points(&String::from_utf8(text).expect("clap_mangen writes UTF-8"));
    roff.push_str(&see_also_section(&refs));
    out.push(Page {
        name: name.clone(),
        roff,
    });
    for sub in subs {
        walk(sub, source, &[name.as_str()], out);
    }
}

/// `text` (roff) where a long run of optional parts (`--disk`'s
/// `TRANSPORT[,size=256M][,serial=SN]...`, wider than a terminal) may break
/// between two of them: a zero-width break point (`\:`) in each `][` of the
/// text lines, else groff cannot fit it ("cannot adjust line").
fn break_points(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with('.') {
                l.to_owned()
            } else {
                l.replace("][", "]\\:[")
            }
        })
        .fold(String::new(), |out, l| out + &l + "\n")
}

/// `cmd` and its subcommands with each option's visible aliases at the end
/// of its help, as `--help` shows them (`[alias: --output]`), which
/// clap_mangen leaves out.
fn with_visible_aliases(mut cmd: clap::Command) -> clap::Command {
    let notes: Vec<(clap::Id, String)> = cmd
        .get_arguments()
        .filter_map(|a| {
            let shorts = a.get_visible_short_aliases().unwrap_or_default();
            let longs = a.get_visible_aliases().unwrap_or_default();
            let names: Vec<String> = (shorts.iter().map(|s| format!("-{s}")))
                .chain(longs.iter().map(|l| format!("--{l}")))
                .collect();
            let word = match names.len() {
                0 => return None,
                1 => "alias",
                _ => "aliases",
            };
            Some((a.get_id().clone(), format!("[{word}: {}]", names.join(", "))))
        })
        .collect();
    for (id, note) in notes {
        cmd = cmd.mut_arg(id, |a| {
            let long = a.get_long_help().map(|h| format!("{h}\n\n{note}"));
            let short = a.get_help().map_or_else(|| note.clone(), |h| format!("{h} {note}"));
            let a = a.help(short);
            match long {
                Some(l) => a.long_help(l),
                None => a,
            }
        });
    }
    let subs: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_owned()).collect();
    for s in subs {
        cmd = cmd.mut_subcommand(s, with_visible_aliases);
    }
    cmd
}

/// A built command's page name: `bootbench-report`, `bootbench-report-fleet`.
fn page_name(cmd: &clap::Command) -> &str {
    cmd.get_display_name().unwrap_or_else(|| cmd.get_name())
}

/// `.SH "SEE ALSO"` naming `pages` in section 1, as man pages do:
/// **bootbench-report-fleet**(1), ...
fn see_also_section(pages: &[&str]) -> String {
    if pages.is_empty() {
        return String::new();
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SEE ALSO"]);
    let mut line = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        line.push(bold(*p));
        line.push(roman(if i + 1 == pages.len() { "(1)" } else { "(1), " }));
    }
    roff.text(line);
    roff.to_roff()
}

/// Write every page into `dir` (created); returns the files written.
pub fn write_all(dir: &Path) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    pages()
        .into_iter()
        .map(|p| {
            let path = dir.join(p.file_name());
            std::fs::write(&path, p.roff.as_bytes()).map(|()| path)
        })
        .collect()
}
