//! `bootbench-man OUTDIR`: writes the man pages of bootbench's commands and
//! their subcommands into OUTDIR (`make man`: out/man), one line per file.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        eprintln!("usage: bootbench-man OUTDIR");
        return ExitCode::from(2);
    };
    match bootbench_man::write_all(&PathBuf::from(dir)) {
        Ok(files) => {
            for f in files {
                println!("{}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bootbench-man: {dir}: {e}");
            ExitCode::FAILURE
        }
    }
}
