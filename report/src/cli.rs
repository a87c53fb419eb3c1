//! `bootbench-report`'s command line: its clap definitions, whose doc
//! comments are its `--help` and its man pages.
//!
//! This file uses clap and std only: bootbench-man (man/) includes it with
//! `#[path]` to write the man pages without linking the report code.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Read, compare and chart bootbench result documents.
#[derive(Debug, Parser)]
#[command(name = "bootbench-report", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print each document as tables
    ///
    /// Tables of each document: the summary (cached, buffered, seqrd, seqwr,
    /// rndrd, rndwr in MB/s), analysis, then per target the tests, seek
    /// profile, zone rates and latency percentiles.
    Show {
        /// Result documents.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Compare two documents, figure by figure
    ///
    /// Two documents side by side with ratios B/A (targets matched by serial),
    /// then their disks by model and firmware, as `fleet`.
    Compare {
        /// The first document (A, "before").
        a: PathBuf,
        /// The second document (B, "after").
        b: PathBuf,
    },
    /// The disks of many machines, grouped by model, with outliers
    ///
    /// The machines and disks of many documents (a rack of machines, or one
    /// machine's runs): the machines, every machine and disk in one table,
    /// then for each test and figure the disks grouped by host model (with
    /// the disk model and firmware) and by disk model and firmware: the
    /// number of disks and machines, the median, the spread, and the
    /// outliers (more than 10% below the group's median, bench-core's
    /// rule). A machine is its DMI product serial, else its host name, else
    /// its file name. MB/s = 10^6 B/s, IOPS = requests/s.
    Fleet {
        /// Result documents, Parquet exports (`export --format parquet`),
        /// or directories: each directory's `*.json` and `*.parquet` files
        /// are read (not its subdirectories', not `*.runs.parquet`); a file
        /// that is neither is skipped with a warning.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Write the same tables as one self-contained HTML page, with a
        /// chart of each test's figures per group, to this file (instead
        /// of the text on stdout).
        #[arg(short = 'o', long = "html", visible_alias = "output", value_name = "FILE")]
        html: Option<PathBuf>,
        /// After the summary, every document, every machine and every disk,
        /// and every group's disks (the text report; the HTML page always
        /// has them).
        #[arg(long)]
        all: bool,
    },
    /// Cut the result documents out of a serial console log
    ///
    /// Cut every result document out of a serial console log, verified
    /// (length, CRC-32, and the nonce its boot announced).
    Extract {
        /// The console log (serial capture, IPMI SOL).
        log: PathBuf,
        /// Where to write the documents.
        #[arg(short = 'o', long = "out-dir", default_value = ".")]
        out_dir: PathBuf,
        /// Also take version-1 frames (bootbench before the boot nonce):
        /// nothing tells them from forged ones, so only for old logs you trust.
        #[arg(long = "accept-v1")]
        accept_v1: bool,
    },
    /// One CSV row per target and test (base units: B, B/s, ns).
    Csv {
        /// Result documents.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// One self-contained HTML page with SVG charts.
    Html {
        /// Result documents.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The page to write.
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
    },
    /// Export the documents as JUnit, OCP TV, CSV or Parquet
    ///
    /// The documents in a format other tools read: `junit` (the acceptance
    /// verdicts: a testsuite per document, a testcase per target and
    /// check), `ocptv` (OCP Test and Validation JSON lines: a test run per
    /// document, a step per target, a measurement and a diagnosis per
    /// check), or `csv` and `parquet` (two tidy tables for DuckDB, Spark,
    /// pandas: a row per document, target, test, step and figure to FILE,
    /// a row per document to FILE with `.runs` before its extension).
    Export {
        /// The format.
        #[arg(long = "format", value_enum)]
        format: ExportFormat,
        /// Result documents.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The file to write (replaced if it is there, as `html -o`); for
        /// `csv` and `parquet` the figures table, the run table beside it
        /// (`fleet.parquet`, `fleet.runs.parquet`).
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
    },
    /// Make a baseline of each disk model's figures
    ///
    /// Per disk model and firmware, the median, lowest and highest of each
    /// test's figure over the documents (`bootbench.baseline/1`), for the
    /// config's `acceptance.baseline`.
    Baseline {
        /// Result documents (a fleet's earlier runs).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The baseline to write (replaced if it is there, as `html -o`).
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
    },
    /// Say what a document's attestation proves
    ///
    /// Checks the document as received against the digest its TPM quote
    /// covers, the quote's signature and PCR values (replayed from the
    /// firmware's event log, and bootbench's two extends of PCR 15), the
    /// key against --expect-key, the nonce against --expect-nonce, and with --image the event log's
    /// measurements of the boot chain against the stick image's files;
    /// prints each point as proved, FAILED or not proved. Exit status 0
    /// when nothing failed and the quote is proved, 1 otherwise.
    Verify {
        /// The result document, as received (pretty or compact JSON).
        doc: PathBuf,
        /// The attestation key's name (hex) the machine enrolled, or an
        /// earlier result document of the machine (a file): the key its
        /// proved quote was signed by.
        #[arg(long = "expect-key", value_name = "KEY|DOC")]
        expect_key: Option<String>,
        /// The nonce (hex) the verifier served at bootbench.nonce_url= for
        /// this run: the quote must cover it, which proves the document was
        /// made after it was issued.
        #[arg(long = "expect-nonce", value_name = "HEX")]
        expect_nonce: Option<String>,
        /// The stick image the machine booted (bootbench.img, as written to
        /// the stick): shim's and GRUB's Authenticode digests, and GRUB's
        /// configuration, the kernel and the initramfs, must be what the
        /// boot measured, and its bootbench.json the config the run ran.
        #[arg(long = "image", value_name = "IMG")]
        image: Option<PathBuf>,
    },
}

/// The formats of `export`.
// The one list of them: `--format`'s values, and what
// `bootbench_report::export::start` starts (report/src/export/).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// JUnit XML.
    Junit,
    /// OCP Test and Validation JSON lines.
    Ocptv,
    /// Two tidy CSV tables (figures, runs).
    Csv,
    /// Two tidy Parquet tables (figures, runs), zstd-compressed.
    Parquet,
}

/// The command as clap sees it (its `--help`; what bootbench-man renders).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
