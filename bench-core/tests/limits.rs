//! The size limits of the workspace's Rust: no file over [`FILE_MAX`]
//! lines and no function over [`FN_MAX`] lines, test files and test
//! functions included. Every one that was over when the limits came has
//! been split: there is no list of exceptions.
//!
//! A function's lines are counted from its `fn` line to its closing
//! brace; braces in strings, characters and comments do not count.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The most lines a file may have.
const FILE_MAX: usize = 1500;
/// The most lines a function may have.
const FN_MAX: usize = 120;

/// The workspace's crates' folders (not `fuzz`, outside the stable build).
const CRATES: &[&str] = &["bench-core", "init", "image", "qemu", "report", "man", "tests"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Every `.rs` file under `dir`, `target` folders left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `text` with the contents of strings, characters and comments blanked
/// (newlines kept), so that only the code's own braces are left.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_newlines = |s: &[u8], out: &mut String| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            keep_newlines(&rest[..end], &mut out);
            i += end;
        } else if rest.starts_with(b"/*") {
            let end = rest.windows(2).position(|w| w == b"*/").map_or(rest.len(), |e| e + 2);
            keep_newlines(&rest[..end], &mut out);
            i += end;
        } else if rest[0] == b'r'
            && (rest.get(1) == Some(&b'"') || rest.get(1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // A raw string: r"...", r#"..."#, ...
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push(char::from(rest[0]));
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let body = 2 + hashes;
            let end = rest[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |e| body + e + close.len());
            keep_newlines(&rest[..end], &mut out);
            i += end;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            keep_newlines(&rest[..end], &mut out);
            i += end;
        } else if rest[0] == b'\'' {
            // A character ('{', '\'', '\u{7b}') or a lifetime ('a).
            let end = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|e| e + 3)
            } else if rest.get(2) == Some(&b'\'') {
                Some(3)
            } else {
                None
            };
            match end {
                Some(e) => {
                    keep_newlines(&rest[..e], &mut out);
                    i += e;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            // Whole characters: the text is UTF-8.
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The name of the function a line of code declares, if it does.
fn fn_name(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if w == "fn" {
            let name = words.next()?;
            let end = name
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(name.len());
            return (end > 0).then(|| &name[..end]);
        }
        let modifier =
            w.starts_with("pub") || matches!(w, "const" | "async" | "unsafe" | "extern" | "\"C\"" | "default");
        if !modifier {
            return None;
        }
    }
    None
}

/// Every function of `text` with its lines (from its `fn` line to its
/// closing brace), in order; a declaration without a body is left out.
fn functions(text: &str) -> Vec<(String, usize)> {
    let code = code_only(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let mut depth = 0i64;
        let mut opened = false;
        'scan: for (k, l) in lines[start..].iter().enumerate() {
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    ';' if !opened && depth == 0 => break 'scan,
                    _ => {}
                }
                if opened && depth == 0 {
                    out.push((name.to_string(), k + 1));
                    break 'scan;
                }
            }
        }
    }
    out
}

/// Every Rust file of the workspace, by its path from the workspace root.
fn sources() -> BTreeMap<String, String> {
    let root = workspace();
    let mut files = Vec::new();
    for c in CRATES {
        rust_files(&root.join(c), &mut files);
    }
    assert!(files.len() > 200, "the scan found {} files: moved?", files.len());
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
            (rel, fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// What is wrong with `what` of `n` lines against `max`, if anything.
fn judge(what: &str, n: usize, max: usize, hint: &str) -> Option<String> {
    (n > max).then(|| format!("{what}: {n} lines; at most {max}{hint}"))
}

#[test]
fn no_file_is_over_the_line_limit() {
    let mut bad = Vec::new();
    for (path, text) in sources() {
        let n = text.lines().count();
        bad.extend(judge(&path, n, FILE_MAX, " (split it by subject)"));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn no_function_is_over_the_line_limit() {
    let mut bad = Vec::new();
    for (path, text) in sources() {
        for (name, n) in functions(&text) {
            bad.extend(judge(
                &format!("{path}: fn {name}"),
                n,
                FN_MAX,
                " (split it into named steps)",
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The counting itself: braces in strings, raw strings, characters and
/// comments are not the code's; a declaration without a body is no
/// function; nested functions count on their own.
#[test]
fn functions_are_measured_by_their_own_braces() {
    let text = r##"
pub(crate) fn a() {
    let s = "}}}";
    let r = r#"{{"#;
    let c = '{';
    // }
    /* { */
    fn inner() -> u8 {
        1
    }
}
fn decl();
pub const fn b<'x>(v: &'x str) -> &'x str { v }
"##;
    let f = functions(text);
    assert_eq!(
        f,
        vec![("a".to_string(), 10), ("inner".to_string(), 3), ("b".to_string(), 1)]
    );
}
