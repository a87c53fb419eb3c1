//! `extract LOG`: cut every result frame (`bench_core::frame`) out of a
//! serial console or IPMI SOL capture, verify its length and CRC-32, and
//! write each good document atomically (a temporary file in the same
//! directory, then a rename) under the name its header gives, as
//! bootbench-qemu does (the last path component of `name=`, `result.json`
//! when it has none). A damaged frame is reported with its line in the log
//! and never written.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use bench_core::frame::{self, FrameError, BEGIN};

/// One frame of the log: where it starts and what came of it.
#[derive(Debug)]
pub struct Found {
    /// The 1-based line of the log where the frame's BEGIN is.
    pub line: usize,
    /// The decoded document, or what is wrong with the frame.
    pub frame: Result<frame::Frame, FrameError>,
}

/// Every frame of `log` with the line it starts on.
///
/// `frame::decode` gives one result per line holding [`BEGIN`] (a header
/// line, wrapped or not, starts on such a line; the body and header
/// continuations never hold it), in order, so the n-th result starts on the
/// n-th such line.
pub fn frames(log: &str) -> Vec<Found> {
    let begins = log
        .split('\n')
        .enumerate()
        .filter(|(_, l)| l.contains(BEGIN))
        .map(|(i, _)| i + 1);
    let decoded = frame::decode(log);
    let mut lines: Vec<usize> = begins.collect();
    // Defensive: should decode ever disagree, positions past the list read 0.
    lines.resize(lines.len().max(decoded.len()), 0);
    decoded
        .into_iter()
        .zip(lines)
        .map(|(frame, line)| Found { line, frame })
        .collect()
}

/// Write `bytes` to `path` atomically: `.<name>.tmp-<pid>` in the same
/// directory, synced, then renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// What `extract` did.
#[derive(Debug, Default)]
pub struct Extracted {
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    /// One line per damaged frame (`LOG:LINE: what`).
    pub damaged: Vec<String>,
    /// Notes (a name used twice in one log).
    pub notes: Vec<String>,
}

/// Extract every frame of `log` (read from `log_name`, used in messages)
/// into `dir`, which is created if needed. Frames that share a name within
/// the log are written as `<stem>.2.<ext>`, `<stem>.3.<ext>`, ... so none
/// overwrites another. An error is a file that could not be written.
pub fn extract(log_name: &str, log: &str, dir: &Path) -> Result<Extracted, String> {
    let mut out = Extracted::default();
    let found = frames(log);
    if found.iter().any(|f| f.frame.is_ok()) {
        fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    }
    let mut used: Vec<String> = Vec::new();
    for f in found {
        match f.frame {
            Err(e) => out.damaged.push(format!("{log_name}:{}: {e}", f.line)),
            Ok(fr) => {
                let base = fr.file_name();
                let mut name = base.clone();
                let mut k = 1;
                while used.contains(&name) {
                    k += 1;
                    name = match base.rsplit_once('.') {
                        Some((stem, ext)) if !stem.is_empty() => format!("{stem}.{k}.{ext}"),
                        _ => format!("{base}.{k}"),
                    };
                }
                if name != base {
                    out.notes.push(format!(
                        "{log_name}:{}: a second frame named {base}: written as {name}",
                        f.line
                    ));
                }
                used.push(name.clone());
                let path = dir.join(&name);
                write_atomic(&path, &fr.bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
                out.written.push(path);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_the_begin_lines() {
        let log = format!(
            "noise\n{}x\r\n{}",
            frame::encode("a.json", b"{}"),
            frame::encode("b.json", b"[]").replace("W10=", "X10=")
        );
        let f = frames(&log);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].line, 2);
        assert!(f[0].frame.is_ok());
        assert_eq!(f[1].line, 6);
        assert!(f[1].frame.is_err());
    }
}
