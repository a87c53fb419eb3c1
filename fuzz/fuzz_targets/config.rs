//! init's config pipeline on any text: `config::parse`, then `validate` with
//! simulated targets (no device is opened) and `describe_plan`: never panics,
//! and every error is one line naming where it is. An input whose first byte
//! is 0x01 is a kernel command line (its first line) and a config (the
//! rest) for PID 1's `unattended::plan_unattended`, as the boot reads them.
//!
//! init is a binary crate without a library target; its modules are compiled
//! in here unchanged (the same list as init/src/main.rs, whose `crate::`
//! paths then resolve to this crate's root).
#![no_main]
#![allow(dead_code, unused_imports)]

use libfuzzer_sys::fuzz_target;

#[path = "../../init/src/boot.rs"]
mod boot;
#[path = "../../init/src/cli.rs"]
mod cli;
#[path = "../../init/src/cmdline.rs"]
mod cmdline;
#[path = "../../init/src/config.rs"]
mod config;
#[path = "../../init/src/discover.rs"]
mod discover;
#[path = "../../init/src/dm.rs"]
mod dm;
#[path = "../../init/src/engine.rs"]
mod engine;
#[path = "../../init/src/identity.rs"]
mod identity;
#[path = "../../init/src/md.rs"]
mod md;
#[path = "../../init/src/modules.rs"]
mod modules;
#[path = "../../init/src/safety/mod.rs"]
mod safety;
#[path = "../../init/src/sink.rs"]
mod sink;
#[path = "../../init/src/stacks.rs"]
mod stacks;
#[path = "../../init/src/stick.rs"]
mod stick;
#[path = "../../init/src/sys/mod.rs"]
mod sys;
#[path = "../../init/src/unattended.rs"]
mod unattended;

fn one_line(what: &str, e: &str) {
    assert!(!e.is_empty(), "{what}: empty message");
    assert_eq!(e.trim_end().lines().count(), 1, "{what}: not one line: {e}");
    assert!(!e.chars().any(char::is_control), "{what}: control characters: {e:?}");
}

fuzz_target!(|data: &[u8]| {
    if let Some(rest) = data.strip_prefix(&[1]) {
        let Ok(text) = std::str::from_utf8(rest) else { return };
        let (line, config) = text.split_once('\n').unwrap_or((text, ""));
        let c = cmdline::Cmdline::parse(line);
        let never = vec!["/dev/nonexistent-stick".to_string()];
        match unattended::plan_unattended(config, "/mnt/stick/bootbench.json", c.get("profile"), c.get("on_finish"), &[], &never, true) {
            Ok((plan, _)) => {
                let _ = config::describe_plan(&plan);
            }
            Err(e) => one_line("plan_unattended", &e.message),
        }
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    let raw = match config::parse(text, "fuzz.json") {
        Ok(raw) => raw,
        Err(e) => {
            assert!(e.0.starts_with("fuzz.json: "), "{e}");
            one_line("parse", &e.0);
            return;
        }
    };
    let ov = config::Overrides {
        profile: None,
        targets: Vec::new(),
        simulate: true,
    };
    match config::validate(&raw, "fuzz.json", &ov) {
        Ok(plan) => {
            let _ = config::describe_plan(&plan);
        }
        Err(e) => one_line("validate", &e.0),
    }
});
