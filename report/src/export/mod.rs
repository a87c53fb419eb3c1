//! The export stage (report/README.md): documents as files for other
//! tools. `export --format` writes JUnit XML ([`junit`]), OCP Test and
//! Validation JSON lines ([`ocptv`]) or two tidy tables, CSV or Parquet
//! ([`tidy`], its Parquet footer checked by [`parquet_footer`]); the `csv`
//! command prints a row per target and test ([`csv`]).

pub mod csv;
pub mod junit;
pub mod ocptv;
pub mod parquet_footer;
pub mod tidy;
