//! `bootbench-report`: see the crate documentation of `bootbench_report`.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("bootbench-report: no commands yet");
    ExitCode::from(2)
}
