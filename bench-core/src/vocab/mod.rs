//! The shared vocabulary: units and sizes as types, the names of closed sets, the storage stacks' kinds, CPU sets, URLs as shown, console-safe text, hex digits as bytes, module-alias globs and the seeded generator.

pub mod console;
pub mod cpus;
pub mod glob;
pub mod hex;
pub mod names;
pub mod rng;
pub mod size;
pub mod stack;
pub mod units;
pub mod url;
