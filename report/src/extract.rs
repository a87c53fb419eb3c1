//! `extract LOG`: cut every result frame (`bench_core::frame`) out of a
//! serial console or IPMI SOL capture, verify its length and CRC-32 and its
//! boot's nonce, and write each good document atomically (a temporary file
//! in the same directory, then a rename) under the name its header gives,
//! as bootbench-qemu does (the last path component of `name=`,
//! `result.json` when it has none). A damaged frame, or one refused by the
//! nonce rule (a version-1 frame unless asked for, a nonce no boot
//! announced, boots that overlap), is reported with its line in the log and
//! never written.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use bench_core::frame::{self, FrameError, Nonce, Options};

pub use bench_core::frame::Found;

/// Every frame of `log` with the line it starts on.
pub fn frames(log: &str, opts: Options) -> Vec<Found> {
    frame::decode_with(log, opts)
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
    /// One line per frame refused by the nonce rule (`LOG:LINE: why`).
    pub refused: Vec<String>,
    /// Notes (a name used twice in one log, frames of several boots).
    pub notes: Vec<String>,
}

/// The hint for a refused version-1 frame.
pub const V1_HINT: &str = "a log of bootbench before version-2 frames can be read with --accept-v1";

/// Extract every frame of `log` (read from `log_name`, used in messages)
/// into `dir`, which is created if needed, by `bench_core::frame`'s rule
/// with `opts`. Frames that share a name within the log are written as
/// `<stem>.2.<ext>`, `<stem>.3.<ext>`, ... so none overwrites another. An
/// error is a file that could not be written.
pub fn extract(log_name: &str, log: &str, dir: &Path, opts: Options) -> Result<Extracted, String> {
    let mut out = Extracted::default();
    let found = frames(log, opts);
    if found.iter().any(|f| f.frame.is_ok()) {
        fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    }
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
