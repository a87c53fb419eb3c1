//! init's kernel command-line splitter (`init/src/boot/cmdline.rs`) on any
//! text: never panics, every parameter it
//! returns is well formed, and on ASCII text it splits exactly as a line by
//! line port of the kernel's `parse_args`/`next_arg` (lib/cmdline.c,
//! kernel/params.c) does.
#![no_main]

use libfuzzer_sys::fuzz_target;

use bench_core::boot::cmdline::Key;
use bootbench_init::boot::cmdline::Cmdline;

/// The kernel's `isspace` on ASCII (lib/ctype.c: 9 to 13 and 32).
fn k_isspace(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

fn k_isspace_char(c: char) -> bool {
    u8::try_from(c).is_ok_and(k_isspace)
}

/// The kernel's `parse_args` loop over `next_arg`, ported byte for byte:
/// the (param, value) pairs up to a bare `--`.
fn kernel_split(text: &[u8]) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    let mut args: Vec<u8> = text.to_vec();
    args.push(0);
    let mut p = 0;
    let skip = |args: &[u8], mut p: usize| {
        while k_isspace(args[p]) {
            p += 1;
        }
        p
    };
    p = skip(&args, p);
    let mut out = Vec::new();
    while args[p] != 0 {
        // next_arg(args + p)
        let mut a = p;
        let (mut in_quote, mut quoted) = (false, false);
        if args[a] == b'"' {
            a += 1;
            in_quote = true;
            quoted = true;
        }
        let mut i = 0;
        let mut equals = 0;
        while args[a + i] != 0 {
            if k_isspace(args[a + i]) && !in_quote {
                break;
            }
            if equals == 0 && args[a + i] == b'=' {
                equals = i;
            }
            if args[a + i] == b'"' {
                in_quote = !in_quote;
            }
            i += 1;
        }
        let param = a;
        let mut val = None;
        if equals != 0 {
            args[a + equals] = 0;
            let mut v = a + equals + 1;
            if args[v] == b'"' {
                v += 1;
                if args[a + i - 1] == b'"' {
                    args[a + i - 1] = 0;
                }
            }
            val = Some(v);
        }
        if quoted && i > 0 && args[a + i - 1] == b'"' {
            args[a + i - 1] = 0;
        }
        let next = if args[a + i] != 0 {
            args[a + i] = 0;
            a + i + 1
        } else {
            a + i
        };
        let cstr = |s: usize| args[s..].iter().take_while(|&&b| b != 0).copied().collect::<Vec<u8>>();
        let (name, value) = (cstr(param), val.map(cstr));
        if value.is_none() && name == b"--" {
            break;
        }
        out.push((name, value));
        p = skip(&args, next);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    if data.is_ascii() && !data.contains(&0) {
        let text = std::str::from_utf8(data).unwrap();
        let got: Vec<(Vec<u8>, Option<Vec<u8>>)> = Cmdline::parse(text)
            .params
            .into_iter()
            .map(|(n, v)| (n.into_bytes(), v.map(String::into_bytes)))
            .collect();
        let want = kernel_split(data);
        if got != want {
            let show = |v: &[(Vec<u8>, Option<Vec<u8>>)]| -> Vec<(String, Option<String>)> {
                v.iter()
                    .map(|(n, v)| (String::from_utf8_lossy(n).into_owned(), v.as_ref().map(|v| String::from_utf8_lossy(v).into_owned())))
                    .collect()
            };
            panic!("{text:?} splits unlike the kernel:\n ours:   {:?}\n kernel: {:?}", show(&got), show(&want));
        }
    }
    // /proc/cmdline is bytes; init reads it lossily.
    let text = String::from_utf8_lossy(data);
    let c = Cmdline::parse(&text);
    for (name, value) in &c.params {
        // A bare `--` ends the kernel's parameters: it is never one.
        assert!(!(name == "--" && value.is_none()), "{text:?}: -- returned as a parameter");
        // A parameter never spans unquoted whitespace: a name with a space
        // must come from quotes in the input.
        if name.chars().any(|ch| k_isspace_char(ch)) {
            assert!(text.contains('"'), "{text:?}: name {name:?} has whitespace without quotes");
        }
        if let Some(v) = value {
            if v.chars().any(|ch| k_isspace_char(ch)) {
                assert!(text.contains('"'), "{text:?}: value {v:?} has whitespace without quotes");
            }
        }
    }
    // Lookups of bootbench's keys and of every name present never panic,
    // and a name present is found.
    for key in Key::ALL {
        let _ = c.get(key);
    }
    for name in ["bootbench.on-finish", "bootbench.", ""] {
        let _ = c.get_raw(name);
    }
    for (name, _) in &c.params {
        assert!(c.get_raw(name).is_some(), "{text:?}: {name:?} parsed but not found");
    }
    // Parameters stop at a lone `--`: what follows is init's argv.
    if let Some(pos) = text.find(" -- ") {
        let before = Cmdline::parse(&text[..pos]);
        if !text[..pos].contains('"') {
            assert_eq!(before, c, "{text:?}: words after -- were parsed");
        }
    }
});
