//! The floor under `bootbench-report fleet DIR`'s time (bench/fleet.py):
//! read every `*.json` file of DIR (not its subdirectories') and parse each
//! into a `serde_json::Value`, nothing else: no typed document, no
//! analysis, no report. The files are split into as many contiguous chunks
//! as threads (`std::thread::scope`; the machine's available parallelism
//! unless `--threads N`), each parsed value dropped once parsed.
//!
//! `cargo run --release -p bootbench-report --example parse_floor -- DIR [--threads N]`
//! prints one line: `parsed N documents, B bytes, S s, T thread(s)`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// What one thread read: documents and bytes.
#[derive(Debug, Default)]
struct Tally {
    docs: usize,
    bytes: u64,
}

/// Read and parse each file of `files`; the first failure ends the chunk.
fn parse_all(files: &[PathBuf]) -> Result<Tally, String> {
    let mut t = Tally::default();
    for f in files {
        let text = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", f.display()))?;
        // Keep the parse from being optimized away.
        std::hint::black_box(&v);
        t.docs += 1;
        t.bytes += text.len() as u64;
    }
    Ok(t)
}

fn json_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("json")) && p.is_file() {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut threads) = (None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => match args.next().and_then(|n| n.parse::<usize>().ok()).filter(|&n| n > 0) {
                Some(n) => threads = Some(n),
                None => {
                    eprintln!("parse_floor: --threads needs a number above 0");
                    return ExitCode::from(2);
                }
            },
            _ if dir.is_none() => dir = Some(PathBuf::from(a)),
            _ => {
                eprintln!("usage: parse_floor DIR [--threads N]");
                return ExitCode::from(2);
            }
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: parse_floor DIR [--threads N]");
        return ExitCode::from(2);
    };
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let start = Instant::now();
    let files = match json_files(&dir) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("parse_floor: {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    };
    // Contiguous chunks of nearly equal length, one per thread.
    let per = files.len().div_ceil(threads).max(1);
    let results: Vec<Result<Tally, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = files.chunks(per).map(|c| s.spawn(|| parse_all(c))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a parsing thread panicked".to_string()))
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut total = Tally::default();
    for r in results {
        match r {
            Ok(t) => {
                total.docs += t.docs;
                total.bytes += t.bytes;
            }
            Err(e) => {
                eprintln!("parse_floor: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!(
        "parsed {} documents, {} bytes, {secs:.3} s, {threads} thread(s)",
        total.docs, total.bytes
    );
    ExitCode::SUCCESS
}
