//! Where a result document goes: a new file (never overwriting, no partial
//! file under a result's name) or stdout ([`sink`]), and the boot stick's
//! `results/<machine>-<n>.json` ([`stick`]), and a URL of existing storage
//! ([`remote`]).

pub mod remote;
pub mod serial;
pub mod sink;
pub mod stick;
