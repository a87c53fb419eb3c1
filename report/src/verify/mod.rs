//! `verify`: what a result document's attestation proves. [`quote`] checks
//! a TPM 2.0 quote: its key, its signature, its qualifying data, its PCR
//! digest.

pub mod quote;
