//! Where a result document goes: a new file (never overwriting, no partial
//! file under a result's name) or stdout ([`sink`]), and the boot stick's
//! `results/<machine>-<n>.json` ([`stick`]), and a URL of existing storage
//! ([`remote`]); [`emit`] sends a document to them (the stick, the console's
//! and the serial ports' frames, the live command's `--out`); [`beside`]
//! saves a failed NVMe disk's telemetry log beside the document.

pub mod beside;
pub mod emit;
pub mod metrics;
pub mod remote;
pub mod serial;
pub mod sink;
pub mod stick;
