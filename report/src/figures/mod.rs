//! The figures stage (report/README.md): what every renderer and export
//! takes from a document the same way, so that a figure reads the same in
//! `show`, `compare`, `fleet`, the HTML report and the exports: text and
//! units ([`text`]), metrics, main steps and percentiles ([`metric`]), a
//! disk's health ([`health`]), surface scan ([`scan`]) and burn-in
//! ([`burnin`]) as facts and rows, and the acceptance verdicts
//! ([`verdict`]). It reads documents through [`crate::read`] only.

pub mod burnin;
pub mod health;
pub mod metric;
pub mod scan;
pub mod text;
pub mod verdict;
