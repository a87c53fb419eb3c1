//! `extract LOG`: cut every result frame (`bench_core::document::frame`) out of a
//! serial console or IPMI SOL capture, verify its length and CRC-32 and its
//! boot's nonce, and write each good document under the name its header
//! gives, as bootbench-qemu does (the last path component of `name=`,
//! `result.json` when it has none), never replacing a file: a name that is
//! taken, by a file already in the directory or by an earlier frame of the
//! log, becomes `<stem>.2.<ext>`, `<stem>.3.<ext>`, ... with a note
//! ([`crate::output::write_numbered`], which also says how the file is
//! written: a temporary file created exclusively, then linked).
//!
//! No document is held: every frame is checked by `bench_core::document::frame::scan`
//! (length, CRC-32, inflated a window at a time), and each frame taken is
//! decoded again straight into its temporary file (`Checked::write_to`,
//! checked again on the way; the file is removed if it fails). A frame
//! claiming more than `frame::MAX_DOCUMENT` (1 GiB) is refused before its
//! body is decoded.
//!
//! A damaged frame, or one refused by the nonce rule (a version-1 frame
//! unless asked for, a nonce no boot announced, boots that overlap), is
//! reported with its line in the log and never written; so is a frame
//! whose name cannot be a file's ([`file_name`]). A frame that cannot be
//! written is reported with the error, and the frames after it are
//! written all the same.
//!
//! The lines of [`Extracted`] quote the log (frame names) as it is: print
//! them through `bench_core::vocab::console::safe`.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bench_core::document::frame::{self, Frame, FrameError, Nonce, Options, Scanned, Stop};

use crate::output::{self, NAME_MAX};

pub use bench_core::document::frame::Found;

/// Every frame of `log` with the line it starts on, verified
/// ([`frame::scan`]: no document held).
pub fn frames(log: &str, opts: Options) -> Vec<Scanned<'_>> {
    frame::scan(log, opts)
}

/// The file name to write frame `fr` under: the last component of its
/// header's name ([`Frame::file_name`]), or why that cannot be a file's
/// name here: longer than [`NAME_MAX`] bytes, or holding a NUL byte (no
/// file name can), or a control character (C0, DEL, C1, and the others the
/// console escapes: line separators and bidi controls, which make a name
/// list as another), or starting with a dot (a hidden file; bootbench never
/// names a result so, and `.bashrc` and the like are no results).
pub fn file_name(fr: &Frame) -> Result<String, String> {
    file_name_for(&fr.name)
}

/// [`file_name`] of a frame whose header gives `header_name`.
pub fn file_name_for(header_name: &str) -> Result<String, String> {
    let name = frame::file_name_of(header_name);
    if name.len() > NAME_MAX {
        return Err(format!(
            "the name is {} bytes long; a file name holds at most {NAME_MAX}",
            name.len()
        ));
    }
    if name.contains('\0') {
        return Err("the name holds a NUL byte, which no file name can".into());
    }
    // What the console escapes (console::safe) but the backslash, which a
    // file name may hold; one character is never the marker it escapes.
    let escaped = |c: char| {
        let mut buf = [0; 4];
        let one: &str = c.encode_utf8(&mut buf);
        c != '\\' && bench_core::vocab::console::safe(one) != one
    };
    if let Some(c) = name.chars().find(|&c| escaped(c)) {
        return Err(format!("the name holds a control character (U+{:04X})", u32::from(c)));
    }
    if name.starts_with('.') {
        return Err("the name starts with a dot (a hidden file)".into());
    }
    Ok(name)
}

/// What `extract` did.
#[derive(Debug, Default)]
pub struct Extracted {
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    /// One line per damaged frame (`LOG:LINE: what`).
    pub damaged: Vec<String>,
    /// One line per frame refused by the nonce rule or for its name
    /// (`LOG:LINE: why`).
    pub refused: Vec<String>,
    /// One line per good frame that could not be written (`LOG:LINE:
    /// error`).
    pub failed: Vec<String>,
    /// Notes (a name taken, frames of several boots).
    pub notes: Vec<String>,
}

/// The hint for a refused version-1 frame.
pub const V1_HINT: &str = "a log of bootbench before version-2 frames can be read with --accept-v1";

/// Extract every frame of `log` (read from `log_name`, used in messages)
/// into `dir`, which is created if needed, by `bench_core::document::frame`'s rule
/// with `opts` (see the module doc). An error is a directory that cannot
/// be created: nothing could be written.
pub fn extract(log_name: &str, log: &str, dir: &Path, opts: Options) -> Result<Extracted, String> {
    let mut out = Extracted::default();
    let found = frames(log, opts);
    if found.iter().any(|f| f.frame.is_ok()) {
        fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    }
    // The names the frames of this log were written under, each with the
    // number to try next for it (`<stem>.<k>.<ext>`), so a log of many
    // frames of one name does not try every taken number again each time.
    let mut used: HashMap<String, u64> = HashMap::new();
    // Each boot's nonce with its frames written, in order of appearance,
    // and where each nonce is in that list.
    let mut boots: Vec<(Option<Nonce>, usize)> = Vec::new();
    let mut boot_of: HashMap<Option<Nonce>, usize> = HashMap::new();
    for f in found {
        let at = format!("{log_name}:{}", f.line);
        match f.frame {
            Err(e @ FrameError::Unauthenticated { .. }) => out.refused.push(format!("{at}: {e} ({V1_HINT})")),
            Err(e) if e.is_refused() => out.refused.push(format!("{at}: {e}")),
            Err(e) => out.damaged.push(format!("{at}: {e}")),
            Ok(fr) => {
                let base = match file_name_for(fr.name()) {
                    Ok(n) => n,
                    Err(why) => {
                        out.refused
                            .push(format!("{at}: frame {}: refused: {why}", frame::excerpt(fr.name())));
                        continue;
                    }
                };
                match boot_of.get(&fr.nonce()) {
                    Some(&i) => boots[i].1 += 1,
                    None => {
                        boot_of.insert(fr.nonce(), boots.len());
                        boots.push((fr.nonce(), 1));
                    }
                }
                let first_k = used.get(&base).copied().unwrap_or(1);
                // The document goes to its temporary file a window at a
                // time as it is decoded again, its length and CRC checked
                // on the way; the file is removed if they are not right.
                let fill = |f: &mut fs::File| {
                    fr.write_to(|b| f.write_all(b)).map_err(|e| match e {
                        Stop::Out(e) => e,
                        Stop::Frame(e) => io::Error::other(format!("the frame decoded differently: {e}")),
                    })
                };
                let path = match output::write_numbered_from(dir, &base, first_k, fill) {
                    Ok(p) => p,
                    Err(e) => {
                        out.failed.push(format!(
                            "{at}: frame {}: cannot write {}: {e}",
                            frame::excerpt(fr.name()),
                            dir.join(&base).display()
                        ));
                        continue;
                    }
                };
                let (name, k) = path;
                let path = dir.join(&name);
                if name != base {
                    out.notes.push(if used.contains_key(&base) {
                        format!("{at}: a second frame named {base}: written as {name}")
                    } else {
                        format!(
                            "{at}: {} is there already: written as {name}",
                            dir.join(&base).display()
                        )
                    });
                }
                used.insert(base, k + 1);
                out.written.push(path);
            }
        }
    }
    if boots.len() > 1 {
        let list: Vec<String> = boots
            .iter()
            .map(|(n, k)| match n {
                Some(n) => format!("nonce {n}: {k} frame(s)"),
                None => format!("version 1, no nonce: {k} frame(s)"),
            })
            .collect();
        out.notes.push(format!(
            "{log_name}: the documents come from {} boots ({}); each boot's frames were checked against its own nonce",
            boots.len(),
            list.join(", ")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: Nonce = Nonce([7; 16]);

    #[test]
    fn positions_follow_the_begin_lines() {
        let log = format!(
            "noise\n{}{}x\r\n{}",
            frame::announce(N),
            frame::encode("a.json", b"{}", N),
            frame::encode_v2("b.json", b"[]", N).replace("W10=", "X10=")
        );
        let f = frames(&log, Options::default());
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].line, 3);
        assert!(f[0].frame.is_ok());
        assert_eq!(f[1].line, 7);
        assert!(f[1].frame.is_err());
    }

    /// A name holding a Unicode line separator or a control that Unicode
    /// counts as white space (NEL, U+2028, U+2029, VT, FF) comes out of the
    /// header as it went in, and is refused for it: never written with the
    /// character silently removed (issue 46, point 16).
    #[test]
    fn a_name_with_a_line_separator_is_refused_not_shortened() {
        for (c, code) in [
            ('\u{85}', "U+0085"),
            ('\u{2028}', "U+2028"),
            ('\u{2029}', "U+2029"),
            ('\u{b}', "U+000B"),
            ('\u{c}', "U+000C"),
        ] {
            let name = format!("ls{c}x.json");
            let log = frame::announce(N) + &frame::encode(&name, b"{}", N);
            let dir =
                std::env::temp_dir().join(format!("bootbench-extract-sep-{}-{}", u32::from(c), std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            let done = extract("log", &log, &dir, Options::default()).unwrap();
            assert!(done.written.is_empty(), "{code}: {:?}", done.written);
            assert_eq!(
                done.refused,
                [format!(
                    "log:2: frame {name}: refused: the name holds a control character ({code})"
                )],
                "{code}"
            );
            let _ = fs::remove_dir_all(&dir);
        }
    }

    /// The name a frame is written under, or why it is refused.
    #[test]
    fn file_names_and_why_a_name_is_refused() {
        let long = |n: usize| format!("{}.json", "a".repeat(n - 5));
        let (max, over) = (long(NAME_MAX), long(NAME_MAX + 1));
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("m-1.json", Ok("m-1.json")),
            ("results/m-1.json", Ok("m-1.json")),
            ("/", Ok("result.json")),
            ("a/..", Ok("result.json")),
            ("a/.", Ok("a")),
            ("BOOTBENCH-1.json", Ok("BOOTBENCH-1.json")),
            ("back\\slash.json", Ok("back\\slash.json")),
            ("sn-é日本.json", Ok("sn-é日本.json")),
            (&max, Ok(&max)),
            (&over, Err("the name is 256 bytes long; a file name holds at most 255")),
            ("a\0b.json", Err("the name holds a NUL byte, which no file name can")),
            ("a\u{1b}[2J.json", Err("the name holds a control character (U+001B)")),
            ("bel\u{7}.json", Err("the name holds a control character (U+0007)")),
            ("del\u{7f}.json", Err("the name holds a control character (U+007F)")),
            ("nel\u{85}.json", Err("the name holds a control character (U+0085)")),
            (
                "rlo\u{202e}nosj.exe",
                Err("the name holds a control character (U+202E)"),
            ),
            ("ls\u{2028}.json", Err("the name holds a control character (U+2028)")),
            (".bashrc", Err("the name starts with a dot (a hidden file)")),
            ("dir/.m-1.json", Err("the name starts with a dot (a hidden file)")),
        ];
        for (name, want) in cases {
            let fr = Frame {
                name: (*name).to_owned(),
                bytes: Vec::new(),
                nonce: Some(N),
            };
            assert_eq!(
                file_name(&fr).as_deref(),
                want.map_err(|w| w.to_owned()).as_deref(),
                "{name:?}"
            );
        }
    }
}
