//! The command line: `run`, `validate`.

/// Run the command line; returns the exit status.
pub fn main(_args: Vec<String>) -> i32 {
    0
}
