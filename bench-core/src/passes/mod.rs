//! The whole-disk passes: one engine ([`sweep`]) that the surface [`scan`] and the [`burnin`] configure, and preconditioning to steady state ([`steady`]).

pub mod burnin;
pub mod scan;
pub mod steady;
mod sweep;
