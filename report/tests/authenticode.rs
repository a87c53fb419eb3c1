//! The Authenticode digests of Debian's signed boot chain, the files the
//! image's stick carries (out/, `make kernel`), against pesign's (`pesign
//! -h -d sha256`, a tool the project did not write; .ci/deps installs it).
//! Without out/'s files (no `make kernel` yet) there is nothing to compare:
//! the test says so and passes; `make test` builds them first.

use std::path::{Path, PathBuf};
use std::process::Command;

use bootbench_report::verify::{pe, quote::hex};

fn pesign(file: &Path) -> String {
    let out = Command::new("pesign")
        .args(["-h", "-d", "sha256", "-i"])
        .arg(file)
        .output()
        .expect("pesign (Debian's pesign, installed by .ci/deps)");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .strip_prefix("hash: ")
        .unwrap_or_else(|| panic!("pesign: {text}"))
        .to_string()
}

#[test]
fn shim_grub_and_the_kernel_digest_as_pesign_says() {
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../out");
    let files = [
        "shim/usr/lib/shim/shimx64.efi.signed",
        "grub/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed",
    ];
    let kernels: Vec<PathBuf> = std::fs::read_dir(out.join("kernel/boot"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-"))
        })
        .collect();
    let all: Vec<PathBuf> = files.iter().map(|f| out.join(f)).chain(kernels).collect();
    let present: Vec<&PathBuf> = all.iter().filter(|p| p.exists()).collect();
    if present.is_empty() {
        eprintln!("no boot chain in {} (make kernel): nothing to compare", out.display());
        return;
    }
    for f in present {
        let bytes = std::fs::read(f).unwrap();
        let ours = hex(&pe::authenticode(&bytes, &ring::digest::SHA256).unwrap());
        assert_eq!(ours, pesign(f), "{}", f.display());
    }
}
