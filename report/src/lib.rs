//! bootbench-report: turns result documents (`bootbench.result/1`) into what a
//! sysadmin reads: tables (`show`), side-by-side ratios (`compare`), the
//! machines and disks of many documents with their outliers (`fleet`, as
//! text or an HTML page), CSV, tidy tables (CSV and Parquet:
//! [`export::tidy`]), an HTML report with SVG charts, documents cut out of a
//! serial-console log (`extract`), and a baseline of many documents for the
//! acceptance rules (`baseline`). `show` and `html` also render each disk's
//! surface scan ([`figures::scan`]).
//!
//! The modules follow the stages of a report (report/README.md): [`read`]
//! (documents in: a file, a console log, the machine a document names),
//! [`figures`] (what every renderer takes from a document the same way),
//! [`render`] (text and HTML for a person) and [`export`] (files for other
//! tools). Every command reads documents through [`read::load`], which
//! names the file and what is wrong with it.

pub mod cli;
pub mod export;
pub mod figures;
pub mod output;
pub mod read;
pub mod render;
pub mod verify;
