//! One point of `verify`'s verdict, what [`super::doc`] and [`super::image`] give.

/// One point of the verdict: what was checked, and whether it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// What the point is ("the document's digest", "the quote", ...).
    pub what: &'static str,
    /// Held (proved), failed, or not checked.
    pub outcome: Outcome,
    /// The details, or why it failed.
    pub detail: String,
}

/// A point's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Proved.
    Proved,
    /// Checked and false.
    Failed,
    /// Not proved: nothing to check it with.
    NotProved,
}
