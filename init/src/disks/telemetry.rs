//! An NVMe disk's host-initiated telemetry log (log page 07h), read
//! through the admin passthrough ([`read_disk`]; the run reads it when
//! the disk failed acceptance, [`crate::run::telemetry`]). Reading a log
//! only reads: no grant is needed, as for the SMART and OCP logs
//! ([`super::health`]). The reading sequence is bench-core's
//! [`telemetry::read_host_telemetry`]; this module gives it the
//! controller and the transfer size.

use std::fs::File;
use std::path::Path;

use bench_core::device::telemetry::{self, CaptureError, LogPages, LogRead};

use super::file;
use crate::sys::nvme;

/// The NVMe controller behind an open namespace.
struct Admin<'a>(&'a File);

impl LogPages for Admin<'_> {
    fn get(&mut self, read: LogRead, buf: &mut [u8]) -> Result<usize, String> {
        let lsp = if read.create { nvme::LSP_TELEMETRY_CREATE } else { 0 };
        // The controller's log: NSID 0, as libnvme's
        // nvme_get_log_create_telemetry_host sends it.
        nvme::get_log_page_at(self.0, read.lid, nvme::NSID_NONE, lsp, read.offset, buf)
            .map(|()| buf.len())
            .map_err(|e| e.to_string())
    }
}

/// Bytes per Get Log Page for block device `name`: [`telemetry::CHUNK`],
/// or less where the controller's largest transfer
/// (`queue/max_hw_sectors_kb`, what the passthrough ioctl accepts) is
/// smaller; never under 4 KiB (the smallest transfer a controller has).
pub fn chunk_for(sys: &Path, name: &str) -> usize {
    let kb = std::fs::read_to_string(sys.join("class/block").join(name).join("queue/max_hw_sectors_kb"))
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok());
    kb.map_or(telemetry::CHUNK, |kb| kb.saturating_mul(1024).min(telemetry::CHUNK))
        .max(4096)
}

/// SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Read the telemetry log of the NVMe disk at `path` (kernel name
/// `name`), at most `max` bytes of it.
pub fn read_disk(path: &str, name: &str, max: u64) -> Result<telemetry::Captured, CaptureError> {
    let f = file::open(path, false, false).map_err(|e| CaptureError::Command {
        offset: 0,
        why: format!("cannot open {path} read-only: {e}"),
    })?;
    telemetry::read_host_telemetry(&mut Admin(&f), chunk_for(crate::sysfs::root(), name), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_lower_case_hex() {
        // FIPS 180-2's example "abc".
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_chunk_follows_the_largest_transfer() {
        let t = crate::testutil::TempDir::new("telemetry-chunk");
        let q = t.0.join("class/block/nvme0n1/queue");
        std::fs::create_dir_all(&q).unwrap();
        for (kb, want) in [("128\n", 128 << 10), ("1024", 256 << 10), ("2", 4096), ("x", 256 << 10)] {
            std::fs::write(q.join("max_hw_sectors_kb"), kb).unwrap();
            assert_eq!(chunk_for(&t.0, "nvme0n1"), want, "{kb:?}");
        }
        assert_eq!(chunk_for(&t.0, "nvme9n1"), telemetry::CHUNK);
    }
}
