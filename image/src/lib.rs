//! bootbench-image: builds bootbench's initramfs (what PID 1 finds at boot: [`initramfs`]) and its
//! bootable USB stick image ([`usb`]; the label and names PID 1 and this crate agree on are
//! `bench_core::boot::stick`) as plain files, with no root, no loop mounts and no host depmod.
#![deny(unsafe_code)]

pub mod cli;
pub mod cpio;
pub mod fat;
mod fatfix;
pub mod flash;
pub mod gpt;
pub mod initramfs;
pub mod modinfo;
pub mod modset;
pub mod netboot;
pub mod stick;
pub mod usb;

/// A fresh directory for a unit test (removed first if a run left it).
#[cfg(test)]
pub(crate) fn tests_tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("bootbench-image-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a test directory");
    d
}
