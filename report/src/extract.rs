//! `extract LOG`: cut every result frame (`bench_core::frame`) out of a
//! serial console or IPMI SOL capture, verify its length and CRC-32 and its
//! boot's nonce, and write each good document under the name its header
//! gives, as bootbench-qemu does (the last path component of `name=`,
//! `result.json` when it has none), never replacing a file: a name that is
//! taken, by a file already in the directory or by an earlier frame of the
//! log, becomes `<stem>.2.<ext>`, `<stem>.3.<ext>`, ... with a note
//! ([`crate::output::write_numbered`], which also says how the file is
//! written: a temporary file created exclusively, then linked).
//!
//! A damaged frame, or one refused by the nonce rule (a version-1 frame
//! unless asked for, a nonce no boot announced, boots that overlap), is
//! reported with its line in the log and never written.
//!
//! The lines of [`Extracted`] quote the log (frame names) as it is: print
//! them through `bench_core::console::safe`.

use std::fs;
use std::path::{Path, PathBuf};

use bench_core::frame::{self, FrameError, Nonce, Options};

use crate::output;

pub use bench_core::frame::Found;

/// Every frame of `log` with the line it starts on.
pub fn frames(log: &str, opts: Options) -> Vec<Found> {
    frame::decode_with(log, opts)
}

/// What `extract` did.
#[derive(Debug, Default)]
pub struct Extracted {
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    /// One line per damaged frame (`LOG:LINE: what`).
    pub damaged: Vec<String>,
    /// One line per frame refused by the nonce rule (`LOG:LINE: why`).
    pub refused: Vec<String>,
    /// Notes (a name taken, frames of several boots).
    pub notes: Vec<String>,
}

/// The hint for a refused version-1 frame.
pub const V1_HINT: &str = "a log of bootbench before version-2 frames can be read with --accept-v1";

/// Extract every frame of `log` (read from `log_name`, used in messages)
/// into `dir`, which is created if needed, by `bench_core::frame`'s rule
/// with `opts`, never replacing a file (see the module doc). An error is a
/// file that could not be written.
pub fn extract(log_name: &str, log: &str, dir: &Path, opts: Options) -> Result<Extracted, String> {
    let mut out = Extracted::default();
    let found = frames(log, opts);
    if found.iter().any(|f| f.frame.is_ok()) {
        fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    }
    // The names the frames of this log were written under.
    let mut used: Vec<String> = Vec::new();
    // Each boot's nonce with its frames written, in order of appearance.
    let mut boots: Vec<(Option<Nonce>, usize)> = Vec::new();
    for f in found {
        match f.frame {
            Err(e @ FrameError::Unauthenticated { .. }) => {
                out.refused.push(format!("{log_name}:{}: {e} ({V1_HINT})", f.line));
            }
            Err(e) if e.is_refused() => out.refused.push(format!("{log_name}:{}: {e}", f.line)),
            Err(e) => out.damaged.push(format!("{log_name}:{}: {e}", f.line)),
            Ok(fr) => {
                match boots.iter_mut().find(|(n, _)| *n == fr.nonce) {
                    Some((_, k)) => *k += 1,
                    None => boots.push((fr.nonce, 1)),
                }
                let base = fr.file_name();
                let path = output::write_numbered(dir, &base, &fr.bytes)
                    .map_err(|e| format!("{}: cannot write: {e}", dir.join(&base).display()))?;
                let name = path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                if name != base {
                    let at = format!("{log_name}:{}", f.line);
                    out.notes.push(if used.contains(&base) {
                        format!("{at}: a second frame named {base}: written as {name}")
                    } else {
                        format!(
                            "{at}: {} is there already: written as {name}",
                            dir.join(&base).display()
                        )
                    });
                }
                used.push(base);
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
            frame::encode("b.json", b"[]", N).replace("W10=", "X10=")
        );
        let f = frames(&log, Options::default());
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].line, 3);
        assert!(f[0].frame.is_ok());
        assert_eq!(f[1].line, 7);
        assert!(f[1].frame.is_err());
    }
}
