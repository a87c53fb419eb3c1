//! Files saved beside a result document: a failed NVMe disk's telemetry
//! log ([`crate::disks::telemetry`]). Each is named after the document it
//! belongs to ([`bench_core::boot::stick::beside`]: `SN1-3.json` and
//! `nvme0n1.telemetry.bin` give `SN1-3.nvme0n1.telemetry.bin`), the same
//! way on the stick's `results/` ([`save_beside`]), at the results URL
//! ([`url_beside`], [`crate::results::remote::send_beside`]) and in PID 1's
//! rescue of a dead worker's document: the document names only the part
//! after its own stem, so one encoding of it is right wherever it goes.
//! Written as the document is ([`sink::write_new_with`]: never
//! overwriting, no partial file under the name).

use std::path::Path;

use bench_core::boot::stick;

use crate::net::http::Url;
use crate::results::sink;

/// Bytes to save beside the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The name after the document's stem (`nvme0n1.telemetry.bin`), as
    /// the document records it.
    pub file: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// Save each of `files` beside the document saved at `doc` (a file in
/// the stick's `results/`): the path written, or why not, of each (the
/// document stays as it was either way).
pub fn save_beside(doc: &Path, files: &[Evidence]) -> Vec<Result<String, String>> {
    let dir = doc.parent().unwrap_or(Path::new("."));
    let name = doc
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    files
        .iter()
        .map(|e| {
            let path = dir.join(stick::beside(&name, &e.file));
            sink::write_new_with(&path, &e.bytes, &mut |_| {})
                .map(|()| path.display().to_string())
                .map_err(|err| format!("{} not written: {err}", path.display()))
        })
        .collect()
}

/// The URL of `file` beside the document at `doc`: the last segment of
/// its path named by [`stick::beside`], the query kept (a server that
/// ignores it takes it; a presigned URL's signature is the document's, and
/// the server refuses it, which is said).
pub fn url_beside(doc: &Url, file: &str) -> Url {
    let (path, query) = match doc.target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (doc.target.as_str(), None),
    };
    let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
    let mut target = format!("{dir}/{}", stick::beside(last, file));
    if let Some(q) = query {
        target.push('?');
        target.push_str(q);
    }
    Url { target, ..doc.clone() }
}

/// Say where each file went, or why not, through `log`.
pub fn say(what: &str, done: &[Result<String, String>], log: &mut dyn FnMut(&str)) {
    for d in done {
        match d {
            Ok(to) => log(&format!("{what} saved: {to}")),
            Err(e) => log(&format!("{what}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::results::sink::fixture;
    use crate::results::stick::{save_result, RESULTS_DIR};

    fn evidence() -> Vec<Evidence> {
        vec![
            Evidence {
                file: "nvme0n1.telemetry.bin".into(),
                bytes: (0..=255u8).cycle().take(3 * 512).collect(),
            },
            Evidence {
                file: "nvme1n1.telemetry.bin".into(),
                bytes: vec![7u8; 512],
            },
        ]
    }

    /// Beside `SN1-2.json`: each log under the document's stem, byte for
    /// byte; the earlier document and its files untouched; a name taken
    /// already is refused, not overwritten.
    fn saves_beside_on(root: &Path) {
        let dir = root.join(RESULTS_DIR);
        let first = save_result(root, "SN1", b"{\"n\":1}").expect("first");
        fs::write(dir.join("SN1-1.nvme0n1.telemetry.bin"), b"earlier").unwrap();
        let doc = save_result(root, "SN1", b"{\"n\":2}").expect("second");
        assert_eq!(doc, dir.join("SN1-2.json"));
        let ev = evidence();
        let done = save_beside(&doc, &ev);
        assert_eq!(
            done,
            vec![
                Ok(dir.join("SN1-2.nvme0n1.telemetry.bin").display().to_string()),
                Ok(dir.join("SN1-2.nvme1n1.telemetry.bin").display().to_string())
            ]
        );
        assert_eq!(fs::read(dir.join("SN1-2.nvme0n1.telemetry.bin")).unwrap(), ev[0].bytes);
        assert_eq!(fs::read(dir.join("SN1-2.nvme1n1.telemetry.bin")).unwrap(), ev[1].bytes);
        assert_eq!(fs::read(&first).unwrap(), b"{\"n\":1}");
        assert_eq!(fs::read(dir.join("SN1-1.nvme0n1.telemetry.bin")).unwrap(), b"earlier");
        // The files are no results: the next document is SN1-3.
        assert_eq!(save_result(root, "SN1", b"{}").expect("third"), dir.join("SN1-3.json"));
        let again = save_beside(&doc, &ev[..1]);
        assert!(
            again[0].as_ref().is_err_and(|e| e.contains("exists already")),
            "{again:?}"
        );
        assert_eq!(fs::read(dir.join("SN1-2.nvme0n1.telemetry.bin")).unwrap(), ev[0].bytes);
        assert_eq!(
            fixture::names(&dir),
            vec![
                "SN1-1.json",
                "SN1-1.nvme0n1.telemetry.bin",
                "SN1-2.json",
                "SN1-2.nvme0n1.telemetry.bin",
                "SN1-2.nvme1n1.telemetry.bin",
                "SN1-3.json"
            ],
            "no temp file left"
        );
    }

    #[test]
    fn telemetry_is_saved_beside_the_document() {
        let t = crate::testutil::TempDir::new("beside");
        saves_beside_on(&t.0);
    }

    /// The same on a real FAT (the stick: no hard links, names without
    /// case).
    #[test]
    fn telemetry_is_saved_beside_the_document_on_fat() {
        let m = match fixture::fat_loop("beside").and_then(|m| fixture::mount_vfat(&m).map(|()| m)) {
            Ok(m) => m,
            Err(e) => return fixture::skipped(&e),
        };
        saves_beside_on(&m.dir);
    }

    #[test]
    fn urls_beside_keep_the_directory_and_the_query() {
        for (doc, want) in [
            ("http://h/r/SN1-1.json", "http://h/r/SN1-1.nvme0n1.telemetry.bin"),
            (
                "http://h:8080/r/SN1-1.json?X-Amz-Signature=s",
                "http://h:8080/r/SN1-1.nvme0n1.telemetry.bin?X-Amz-Signature=s",
            ),
            ("http://h/r/put", "http://h/r/put.nvme0n1.telemetry.bin"),
            ("http://h/", "http://h/.nvme0n1.telemetry.bin"),
        ] {
            let u = url_beside(&Url::parse(doc).unwrap(), "nvme0n1.telemetry.bin");
            assert_eq!(format!("{}{}", u.origin(), u.target), want, "{doc}");
        }
    }
}
