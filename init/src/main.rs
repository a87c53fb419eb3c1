//! bootbench-init: bootbench's PID 1 (later issues) and, today, a command
//! that benchmarks block devices and files on a live Linux system.
//!
//! All unsafe code and raw syscalls live in [`sys`]; everything else is safe.
#![deny(unsafe_code)]

mod cli;
mod config;
mod discover;
mod engine;
mod identity;
mod safety;
mod sink;
mod sys;

fn main() {
    std::process::exit(cli::main(std::env::args().collect()));
}
