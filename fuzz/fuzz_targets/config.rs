//! init's config pipeline on any text: `plan::parse`, then `validate` with
//! simulated targets (no device is opened) and `describe_plan_lines`: never panics,
//! and every error is one line naming where it is. An input whose first byte
//! is 0x01 is a kernel command line (its first line) and a config (the
//! rest) for PID 1's `boot::unattended::plan_unattended`, as the boot reads them.
#![no_main]

use bench_core::boot::cmdline::Key;
use bootbench_init::{boot, plan};
use libfuzzer_sys::fuzz_target;

fn one_line(what: &str, e: &str) {
    assert!(!e.is_empty(), "{what}: empty message");
    assert_eq!(e.trim_end().lines().count(), 1, "{what}: not one line: {e}");
    assert!(!e.chars().any(char::is_control), "{what}: control characters: {e:?}");
}

fuzz_target!(|data: &[u8]| {
    if let Some(rest) = data.strip_prefix(&[1]) {
        let Ok(text) = std::str::from_utf8(rest) else { return };
        let (line, config) = text.split_once('\n').unwrap_or((text, ""));
        let c = boot::cmdline::Cmdline::parse(line);
        let never = vec!["/dev/nonexistent-stick".to_string()];
        let ov = plan::Overrides {
            profile: c.get(Key::Profile).map(str::to_string),
            simulate: true,
            ..plan::Overrides::default()
        };
        let raw = plan::parse(config, "/mnt/stick/bootbench.json");
        match boot::unattended::plan_unattended(
            &raw,
            "/mnt/stick/bootbench.json",
            &boot::overrides::CmdlineOverrides::read(&c),
            &[],
            &never,
            &ov,
        ) {
            Ok((plan, _, _)) => {
                let _ = plan::describe_plan_lines(&plan);
            }
            Err(e) => one_line("plan_unattended", &e.message),
        }
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    let raw = match plan::parse(text, "fuzz.json") {
        Ok(raw) => raw,
        Err(e) => {
            assert!(e.0.starts_with("fuzz.json: "), "{e}");
            one_line("parse", &e.0);
            return;
        }
    };
    let ov = plan::Overrides {
        simulate: true,
        ..plan::Overrides::default()
    };
    match plan::validate(&raw, "fuzz.json", &ov) {
        Ok(plan) => {
            let _ = plan::describe_plan_lines(&plan);
        }
        Err(e) => one_line("validate", &e.0),
    }
});
