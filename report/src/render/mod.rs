//! The render stage (report/README.md): documents as a person reads them,
//! text on a terminal or an HTML page: `show` ([`show`]), `compare`
//! ([`compare`]), `fleet` ([`fleet`]) and `html` ([`html`]). Their figures
//! come from [`crate::figures`]; `fleet` also reads the Parquet figures
//! table an export wrote ([`crate::export::tidy`]).

pub mod compare;
pub mod fleet;
pub mod html;
pub mod show;
