//! init's kernel command-line splitter (`init/src/cmdline.rs`, compiled in:
//! init is a binary crate) on any text: never panics, and every parameter
//! it returns is well formed.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../init/src/cmdline.rs"]
mod cmdline;

use cmdline::Cmdline;

fuzz_target!(|data: &[u8]| {
    // /proc/cmdline is bytes; init reads it lossily.
    let text = String::from_utf8_lossy(data);
    let c = Cmdline::parse(&text);
    for (name, value) in &c.params {
        // A bare `--` ends the kernel's parameters: it is never one.
        assert!(!(name == "--" && value.is_none()), "{text:?}: -- returned as a parameter");
        // A parameter never spans unquoted whitespace: a name with a space
        // must come from quotes in the input.
        if name.chars().any(|ch| ch.is_ascii_whitespace()) {
            assert!(text.contains('"'), "{text:?}: name {name:?} has whitespace without quotes");
        }
        if let Some(v) = value {
            if v.chars().any(|ch| ch.is_ascii_whitespace()) {
                assert!(text.contains('"'), "{text:?}: value {v:?} has whitespace without quotes");
            }
        }
    }
    // Lookups of bootbench's keys and of every name present never panic,
    // and a name present is found.
    for key in ["profile", "on_finish", "on-finish", "panic", ""] {
        let _ = c.get(key);
    }
    for (name, _) in &c.params {
        if let Some(key) = name.strip_prefix("bootbench.") {
            assert!(c.get(key).is_some(), "{text:?}: {name:?} parsed but not found");
        }
    }
    // Parameters stop at a lone `--`: what follows is init's argv.
    if let Some(pos) = text.find(" -- ") {
        let before = Cmdline::parse(&text[..pos]);
        if !text[..pos].contains('"') {
            assert_eq!(before, c, "{text:?}: words after -- were parsed");
        }
    }
});
