//! init's config pipeline on any text: `config::parse`, then `validate` with
//! simulated targets (no device is opened) and `describe_plan`: never panics,
//! and every error is one line naming where it is.
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
#[path = "../../init/src/safety.rs"]
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

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let raw = match config::parse(text, "fuzz.json") {
        Ok(raw) => raw,
        Err(e) => {
            assert!(e.0.starts_with("fuzz.json: "), "{e}");
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
        Err(e) => {
            assert!(!e.0.is_empty());
            assert_eq!(e.0.trim_end().lines().count(), 1, "not one line: {e}");
        }
    }
});
