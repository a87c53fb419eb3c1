//! `verify`: what a result document's attestation proves ([`doc`], the
//! command's points). [`quote`] checks
//! a TPM 2.0 quote: its key, its signature, its qualifying data, its PCR
//! digest. [`pe`] computes the Authenticode digest of an EFI binary, the
//! measurement firmware and shim log for it. [`image`] computes what a boot
//! of a stick image measures and compares it with the event log. [`point`]
//! is one point of the verdict.

pub mod doc;
pub mod image;
pub mod pe;
pub mod point;
pub mod quote;
