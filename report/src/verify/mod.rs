//! `verify`: what a result document's attestation proves ([`doc`], the
//! command's points). [`quote`] checks
//! a TPM 2.0 quote: its key, its signature, its qualifying data, its PCR
//! digest. [`pe`] computes the Authenticode digest of an EFI binary, the
//! measurement firmware and shim log for it.

pub mod doc;
pub mod pe;
pub mod quote;
