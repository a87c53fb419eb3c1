//! bootbench-report: turns result documents (`bootbench.result/1`) into what a
//! sysadmin reads: tables (`show`), side-by-side ratios (`compare`), the
//! machines and disks of many documents with their outliers (`fleet`, as
//! text or an HTML page), CSV, tidy tables (CSV and Parquet: [`tidy`]), an
//! HTML report with SVG charts, documents cut out of a serial-console log
//! (`extract`), and a baseline of many documents for the acceptance rules
//! (`baseline`). `show` and `html` also render each disk's surface scan
//! ([`scan`]).
//!
//! Every command reads documents through [`read::load`], which names the file
//! and what is wrong with it.

pub mod baseline;
pub mod burnin;
pub mod cli;
pub mod compare;
pub mod csv;
pub mod export;
pub mod extract;
pub mod fleet;
pub mod health;
pub mod html;
pub mod machine;
pub mod ocptv;
pub mod output;
pub mod parquet_footer;
pub mod read;
pub mod scan;
pub mod show;
pub mod text;
pub mod tidy;
pub mod verdict;
