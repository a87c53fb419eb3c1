//! A TPM 2.0 for the guest: Debian's swtpm, started per boot with its
//! state in a directory of its own and its control channel on a Unix
//! socket that QEMU connects to (`-tpmdev emulator`, [`crate::cmdline::tpm_args`]).
//! QEMU initialises the TPM over that channel at every machine reset, as a
//! server's platform does at power-on, so the PCRs start from zero on every
//! boot and a reboot (`Machine.reboots`) measures the boot again.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// swtpm's program (Debian's `swtpm` package).
pub const SWTPM: &str = "swtpm";

/// A running swtpm; killed and reaped when dropped.
#[derive(Debug)]
pub struct Swtpm {
    child: Child,
    socket: PathBuf,
}

impl Swtpm {
    /// Start swtpm with its state in `dir` (created; a TPM's persistent
    /// state, its seeds among it, is kept there, so a second start on the
    /// same directory is the same TPM with the same endorsement key) and
    /// wait until its control socket is there. swtpm's own output goes to
    /// `dir/swtpm.log`.
    pub fn start(dir: &Path) -> io::Result<Swtpm> {
        fs::create_dir_all(dir)?;
        let socket = dir.join("swtpm.sock");
        let _ = fs::remove_file(&socket);
        let log = fs::File::create(dir.join("swtpm.log"))?;
        let child = Command::new(SWTPM)
            .args(socket_args(dir, &socket))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("starting {SWTPM} (Debian's swtpm package): {e}")))?;
        let mut tpm = Swtpm { child, socket };
        let start = Instant::now();
        while !tpm.socket.exists() {
            if let Some(status) = tpm.child.try_wait()? {
                return Err(io::Error::other(format!(
                    "{SWTPM} ended ({status}) before its socket was there; see {}",
                    dir.join("swtpm.log").display()
                )));
            }
            if start.elapsed() > Duration::from_secs(10) {
                return Err(io::Error::other(format!("{SWTPM}: no socket after 10 s")));
            }
            thread::sleep(Duration::from_millis(20));
        }
        Ok(tpm)
    }

    /// The control socket QEMU connects to ([`crate::cmdline::Machine::tpm`]).
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Swtpm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// swtpm's arguments: a TPM 2.0, its state in `dir`, its control channel
/// (the one QEMU drives: init, the data channel, shutdown) on `socket`.
pub fn socket_args(dir: &Path, socket: &Path) -> Vec<String> {
    vec![
        "socket".to_owned(),
        "--tpm2".to_owned(),
        "--tpmstate".to_owned(),
        format!("dir={}", dir.display()),
        "--ctrl".to_owned(),
        format!("type=unixio,path={}", socket.display()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swtpm_speaks_tpm2_over_the_control_socket_in_its_state_dir() {
        let args = socket_args(Path::new("/d"), Path::new("/d/swtpm.sock"));
        assert_eq!(
            args,
            [
                "socket",
                "--tpm2",
                "--tpmstate",
                "dir=/d",
                "--ctrl",
                "type=unixio,path=/d/swtpm.sock"
            ]
        );
    }
}
