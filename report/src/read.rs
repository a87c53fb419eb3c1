//! Reading result documents: one file, one [`Loaded`] document or one error
//! naming the file and what is wrong.

use std::path::Path;

use bench_core::result::ResultDoc;

/// A result document read from a file.
#[derive(Debug)]
pub struct Loaded {
    /// The file name as given on the command line.
    pub file: String,
    /// The document.
    pub doc: ResultDoc,
    /// What the reader accepted with reservations (a newer minor version).
    pub warnings: Vec<String>,
}

/// A file that is not a result document this tool reads.
#[derive(Debug)]
pub struct ReadError {
    /// The file name as given.
    pub file: String,
    /// What is wrong with it.
    pub what: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.what)
    }
}

impl std::error::Error for ReadError {}

/// Read the result document in `path`.
pub fn load(path: &Path) -> Result<Loaded, ReadError> {
    let file = path.display().to_string();
    let fail = |what: String| ReadError {
        file: file.clone(),
        what,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    let doc: ResultDoc =
        serde_json::from_str(&text).map_err(|e| fail(format!("not a bootbench result document: {e}")))?;
    Ok(Loaded {
        file,
        doc,
        warnings: Vec::new(),
    })
}
