//! The initramfs's layout: the paths the image writes (`bootbench-image
//! initramfs`) and PID 1 reads, one list beside the stick's contract
//! ([`crate::boot::stick`]). Absolute, as PID 1 opens them; [`in_archive`] gives
//! an archive member's name.

/// The config built into the initramfs: PID 1's fallback when the stick
/// has none.
pub const CONFIG: &str = "/etc/bootbench.json";

/// Present only in an initramfs built with `--allow-network-destructive`:
/// PID 1 then honours a `destructive` section in a config fetched over the
/// network (`bootbench.config_url=`).
pub const NETWORK_DESTRUCTIVE: &str = "/etc/bootbench-network-destructive";

/// The CA bundle (PEM) PID 1 checks HTTPS servers against (`--ca FILE`).
pub const CA_BUNDLE: &str = "/etc/bootbench-ca.pem";

/// Where a baseline given with `--baseline` goes (its own name after it).
pub const BASELINE_DIR: &str = "/etc";

/// Where PID 1 mounts the stick.
pub const STICK_MOUNT: &str = "/mnt/stick";

/// The directories PID 1 mounts on: /dev, /proc, /sys, /tmp and the stick.
pub const EMPTY_DIRS: &[&str] = &["/dev", "/proc", "/sys", "/tmp", STICK_MOUNT];

/// `path`'s name as an archive member: without its leading `/`.
pub fn in_archive(path: &str) -> &str {
    path.trim_start_matches('/')
}
