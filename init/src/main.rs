//! bootbench-init: bootbench's PID 1 and a command that benchmarks block
//! devices and files on a live Linux system. One static binary, three roles,
//! chosen here from the process id and argv[0]: PID 1 ([`boot::main`]), the
//! kernel's module helper (started as `.../modprobe`, a symlink to /init:
//! [`modules::modprobe_main`]), and the command line ([`cli::main`]).
//!
//! The folders follow one run (DESIGN.md's data flow; init/README.md says
//! more): [`boot`] is PID 1 (mounts, the supervised worker, the stick, the
//! unattended run) and [`cli`] the live command; both hand a [`plan`] (the
//! config validated, the targets resolved and granted, [`plan::safety`]) to
//! the one executor in [`run`], which assembles [`stacks`] (md and dm),
//! runs the engines on the [`disks`] and returns the document that
//! [`results`] writes. [`log`] and [`modules`] serve every stage. All unsafe
//! code and raw syscalls live in [`sys`]; everything else is safe. No module
//! imports one that imports it back (`bench-core/tests/module_graph.rs`).
#![deny(unsafe_code)]

mod boot;
mod cli;
mod disks;
mod log;
mod modules;
mod net;
mod plan;
mod results;
mod run;
mod stacks;
mod sys;
#[cfg(test)]
mod testutil;

/// Which role argv[0] and the process id select.
#[derive(Debug, PartialEq, Eq)]
enum Role {
    Pid1,
    Modprobe,
    Cli,
}

fn role(pid: u32, argv0: Option<&str>) -> Role {
    let name = argv0
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str());
    if pid == 1 {
        Role::Pid1
    } else if name.is_some_and(|n| n.ends_with("modprobe")) {
        Role::Modprobe
    } else {
        Role::Cli
    }
}

fn main() {
    // Lossy: a non-UTF-8 argument must not panic PID 1 or the module helper.
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    match role(std::process::id(), args.first().map(String::as_str)) {
        Role::Pid1 => boot::main(),
        Role::Modprobe => std::process::exit(modules::modprobe_main(args)),
        Role::Cli => std::process::exit(cli::main(args)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_by_pid_and_argv0() {
        let cases: &[(u32, Option<&str>, Role)] = &[
            (1, Some("/init"), Role::Pid1),
            (1, Some("/sbin/modprobe"), Role::Pid1),
            (77, Some("/sbin/modprobe"), Role::Modprobe),
            (77, Some("modprobe"), Role::Modprobe),
            (77, Some("/init"), Role::Cli),
            (77, Some("target/release/bootbench-init"), Role::Cli),
            (77, Some("/sbin/modprobe/x"), Role::Cli),
            (77, None, Role::Cli),
        ];
        for (pid, argv0, want) in cases {
            assert_eq!(role(*pid, *argv0), *want, "{pid} {argv0:?}");
        }
    }
}
