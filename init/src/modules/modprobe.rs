//! The kernel's module helper (`/sbin/modprobe -q -- NAME`, a symlink to
//! this binary) and the module parameters it takes from the kernel command
//! line, as modprobe does.

use std::collections::HashMap;

use super::{kernel_dir, LiveKernel, Loader, ModuleDb};

/// Module parameters bootbench gives unless the kernel command line sets the same one.
/// usb-storage waits `delay_use` seconds (1 by default) after a device is plugged in
/// before it scans it, for devices that misbehave when asked at once; a boot stick
/// holds the config every benchmark waits for, and `usb_storage.delay_use=1` on the
/// command line restores the wait.
pub const DEFAULT_PARAMS: &[(&str, &str, &str)] = &[("usb_storage", "delay_use", "0")];

/// Module parameters as modprobe takes them from the kernel command line:
/// `module.param=value` (or `module.param` alone), `-` and `_` alike in the
/// module name, over [`DEFAULT_PARAMS`]; one string per module, the
/// parameters in order (`a=1 b=2`). Words without a dot before any `=`, and
/// bootbench's own (`bootbench.*`), are not module parameters.
pub fn module_params(cmdline: &str) -> HashMap<String, String> {
    let mut list: Vec<(String, String, Option<String>)> = DEFAULT_PARAMS
        .iter()
        .map(|(m, p, v)| ((*m).to_string(), (*p).to_string(), Some((*v).to_string())))
        .collect();
    for word in cmdline.split_whitespace() {
        let (key, value) = match word.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (word, None),
        };
        let Some((module, param)) = key.split_once('.') else {
            continue;
        };
        if module.is_empty() || param.is_empty() || module == "bootbench" {
            continue;
        }
        let module = module.replace('-', "_");
        list.retain(|(m, p, _)| !(*m == module && *p == param));
        list.push((module, param.to_string(), value));
    }
    let mut out: HashMap<String, String> = HashMap::new();
    for (m, p, v) in list {
        let one = match v {
            Some(v) => format!("{p}={v}"),
            None => p,
        };
        let entry = out.entry(m).or_default();
        if !entry.is_empty() {
            entry.push(' ');
        }
        entry.push_str(&one);
    }
    out
}

/// The kernel's command line, for module parameters (empty when unreadable).
fn kernel_cmdline() -> String {
    std::fs::read_to_string("/proc/cmdline").unwrap_or_default()
}

/// A loader into the running kernel over `db`, with the command line's
/// module parameters over bootbench's ([`module_params`]), as modprobe loads.
pub(super) fn live_loader(db: &ModuleDb) -> Loader<'_, LiveKernel> {
    Loader::new(db, LiveKernel).with_params(module_params(&kernel_cmdline()))
}

/// The kernel's module helper: `modprobe [-q] [-b] [--] NAME...` (the kernel
/// runs `/sbin/modprobe -q -- NAME`). Loads each NAME (module or alias) with
/// its dependencies; options other than the names are ignored. Exit status 0
/// when every NAME is loaded, 1 otherwise (messages on stderr unless -q).
pub fn modprobe_main(args: Vec<String>) -> i32 {
    let (quiet, names) = modprobe_args(args.get(1..).unwrap_or(&[]));
    if names.is_empty() {
        if !quiet {
            eprintln!("modprobe: no module name given");
        }
        return 1;
    }
    let db = match ModuleDb::load(&kernel_dir()) {
        Ok(db) => db,
        Err(e) => {
            if !quiet {
                eprintln!("modprobe: {e}");
            }
            return 1;
        }
    };
    let mut loader = live_loader(&db);
    let mut status = 0;
    for n in names {
        if let Err(e) = loader.load(&n) {
            if !quiet {
                eprintln!("modprobe: {e}");
            }
            status = 1;
        }
    }
    status
}

/// Split modprobe's arguments into (quiet, names).
fn modprobe_args(args: &[String]) -> (bool, Vec<String>) {
    let mut quiet = false;
    let mut names = Vec::new();
    let mut only_names = false;
    for a in args {
        if only_names || !a.starts_with('-') {
            names.push(a.clone());
        } else if a == "--" {
            only_names = true;
        } else if a == "-q" || a == "--quiet" {
            quiet = true;
        }
    }
    (quiet, names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::testkit::*;
    use crate::modules::*;

    #[test]
    fn module_parameters_come_from_the_command_line_over_the_defaults() {
        let p = module_params("");
        assert_eq!(p.get("usb_storage").map(String::as_str), Some("delay_use=0"));
        assert_eq!(p.len(), DEFAULT_PARAMS.len());
        let p = module_params(
            "console=ttyS0 usb-storage.delay_use=2 raid0.default_layout=2 md_mod.start_ro \
                 bootbench.profile=quick .x=1 y.=2 printk.time=1 usb_storage.quirks=0781:5567:u",
        );
        assert_eq!(
            p.get("usb_storage").map(String::as_str),
            Some("delay_use=2 quirks=0781:5567:u"),
            "the command line's delay_use replaces the default: {p:?}"
        );
        assert_eq!(p.get("raid0").map(String::as_str), Some("default_layout=2"));
        assert_eq!(p.get("md_mod").map(String::as_str), Some("start_ro"));
        assert!(
            !p.contains_key("bootbench") && !p.contains_key("") && !p.contains_key("y"),
            "{p:?}"
        );
        // The loader hands each module its own, and nothing to the others.
        let db = db();
        let mut l = Loader::new(&db, Fake::new()).with_params(module_params("sd-mod.x=1"));
        l.load("sd_mod").unwrap();
        let given: Vec<(String, String)> = l.kernel.params.clone();
        assert!(given.iter().any(|(m, p)| m == "sd_mod" && p == "x=1"), "{given:?}");
        assert!(
            given.iter().all(|(m, p)| m == "sd_mod" || p.is_empty()),
            "only sd_mod has parameters: {given:?}"
        );
    }

    #[test]
    fn modprobe_arguments() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            modprobe_args(&s(&["-q", "--", "crypto-crc32c"])),
            (true, s(&["crypto-crc32c"]))
        );
        assert_eq!(
            modprobe_args(&s(&["ahci", "-b", "sd_mod"])),
            (false, s(&["ahci", "sd_mod"]))
        );
        assert_eq!(modprobe_args(&s(&["--", "-odd"])), (false, s(&["-odd"])));
    }
}
