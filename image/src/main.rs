//! The `bootbench-image` command: `initramfs` and `usb`.
#![deny(unsafe_code)]

use anyhow::{bail, Context, Result};
use bootbench_image::{initramfs, modset, usb};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

/// Build bootbench's initramfs and USB stick image as plain files.
#[derive(Debug, Parser)]
#[command(name = "bootbench-image", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// The initramfs: /init, the module subset with modules.dep/.alias/.softdep, the default config.
    Initramfs {
        /// A `dpkg -x` of linux-image-<version> (holds lib/modules/<kver>/kernel/**.ko).
        #[arg(long)]
        kernel_dir: PathBuf,
        /// The static bootbench-init binary, installed as /init.
        #[arg(long)]
        init: PathBuf,
        /// /etc/bootbench.json (default: {"profile": "standard"}).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Comma-separated module names (default: the storage and network set, modset::DEFAULT_MODULES).
        #[arg(long, value_delimiter = ',')]
        modules: Option<Vec<String>>,
        /// Output file (gzip-compressed newc cpio).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// The USB stick image: GPT, an EFI system partition labelled BOOTBENCH with the UEFI boot
    /// loader (shim + GRUB, signed, with --shim and --grub; else systemd-boot) and syslinux.
    Usb {
        /// A `dpkg -x` of linux-image-<version> (holds boot/vmlinuz-<kver>).
        #[arg(long)]
        kernel_dir: PathBuf,
        /// The initramfs, as built by `bootbench-image initramfs`.
        #[arg(long)]
        initramfs: PathBuf,
        /// Debian's signed shim (shim-signed: usr/lib/shim/shimx64.efi.signed); with --grub, the
        /// stick boots with Secure Boot on or off.
        #[arg(long, requires = "grub")]
        shim: Option<PathBuf>,
        /// Debian's signed GRUB (grub-efi-amd64-signed: usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed).
        #[arg(long, requires = "shim")]
        grub: Option<PathBuf>,
        /// Without --shim and --grub: the directory holding systemd-bootx64.efi (Debian's
        /// systemd-boot-efi; unsigned, so Secure Boot refuses it).
        #[arg(long, default_value = "/usr/lib/systemd/boot/efi", conflicts_with = "shim")]
        efi_dir: PathBuf,
        /// The stick's /bootbench.json, the config a user edits (default: {"profile": "standard"}).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Image size: bytes, or with dd's suffixes as in the config (`128M`, `64MiB` = 1024-based;
        /// `1GB` = 1000-based). Default: what the files need plus 12 MiB free for results,
        /// rounded up to a MiB (35 MiB with Debian's kernel and the signed chain).
        #[arg(long, value_parser = parse_size)]
        size: Option<u64>,
        /// Extra kernel command-line options (e.g. bootbench.profile=standard).
        #[arg(long, default_value = "")]
        append: String,
        /// Skip legacy BIOS boot (syslinux) even where it is installed.
        #[arg(long)]
        no_bios: bool,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
}

/// `--size`: [`bench_core::size::parse_size`], the config's rules.
fn parse_size(s: &str) -> Result<u64, String> {
    bench_core::size::parse_size(s)
        .map_err(|e| format!("{s:?} is not a size: {e}; expected {}", bench_core::size::EXPECTED))
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

fn mib(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // display only
    let m = bytes as f64 / f64::from(1u32 << 20);
    format!("{bytes} bytes ({m:.2} MiB)")
}

fn config_or_default(config: Option<&Path>) -> Result<Vec<u8>> {
    let Some(path) = config else {
        return Ok(initramfs::DEFAULT_CONFIG.to_vec());
    };
    let bytes = read(path)?;
    // Not rejected: a deliberately invalid config is a test case; PID 1 reports it.
    if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
        eprintln!(
            "warning: {} is not valid JSON; PID 1 will report it and power off",
            path.display()
        );
    }
    Ok(bytes)
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Initramfs {
            kernel_dir,
            init,
            config,
            modules,
            output,
        } => {
            let tree = modset::KernelTree::open(&kernel_dir)?;
            let requested: Vec<String> =
                modules.unwrap_or_else(|| modset::DEFAULT_MODULES.iter().map(|s| (*s).to_owned()).collect());
            let requested: Vec<&str> = requested.iter().map(String::as_str).filter(|s| !s.is_empty()).collect();
            let set = modset::ModSet::resolve(&tree, &requested)?;
            for b in &set.builtin {
                eprintln!("note: {b} is built into kernel {}: nothing to load", tree.kver);
            }
            for s in &set.unresolved_softdeps {
                eprintln!("note: soft dependency {s} names no module or alias in the set: left out");
            }
            let inputs = initramfs::Inputs {
                init: read(&init)?,
                config: config_or_default(config.as_deref())?,
                kver: &tree.kver,
                modules: &set,
            };
            let (gz, raw) = initramfs::build_from_tree(&tree.moddir, &inputs)?;
            std::fs::write(&output, &gz).with_context(|| format!("writing {}", output.display()))?;
            println!("{}: kernel {}", output.display(), tree.kver);
            println!("  modules: {} ({} requested)", set.modules.len(), requested.len());
            println!("  uncompressed: {}", mib(raw as u64));
            println!("  compressed (gzip): {}", mib(gz.len() as u64));
        }
        Cmd::Usb {
            kernel_dir,
            initramfs,
            shim,
            grub,
            efi_dir,
            config,
            size,
            append,
            no_bios,
            output,
        } => {
            let tree = modset::KernelTree::open(&kernel_dir)?;
            let (vmlinuz, initrd) = (read(&tree.vmlinuz)?, read(&initramfs)?);
            let (binaries, from) = match (&shim, &grub) {
                (Some(s), Some(g)) => (vec![read(s)?, read(g)?], format!("{} and {}", s.display(), g.display())),
                _ => {
                    let p = efi_dir.join("systemd-bootx64.efi");
                    (vec![read(&p)?], p.display().to_string())
                }
            };
            let loader = match binaries.as_slice() {
                [shim, grub] => usb::Loader::Shim { shim, grub },
                [efi] => usb::Loader::SystemdBoot(efi),
                _ => unreachable!("one or two boot loader binaries"),
            };
            let config = config_or_default(config.as_deref())?;
            let bios = if no_bios {
                usb::Bios::Off
            } else {
                let (bios, why) = usb::Bios::detect();
                if let Some(why) = why {
                    eprintln!("note: {why}");
                }
                bios
            };
            if let Some(size) = size.filter(|s| s % 512 != 0) {
                bail!("--size {size} is not a multiple of 512 bytes");
            }
            let mut inputs = usb::Inputs {
                loader,
                vmlinuz: &vmlinuz,
                initrd: &initrd,
                config: &config,
                append: &append,
                size: 0,
            };
            let fitted = usb::fitted_size(&inputs, &bios);
            inputs.size = size.unwrap_or(fitted);
            let size = inputs.size;
            let disk = usb::build(&inputs, &bios)?;
            usb::write_file(&disk, &output, &bios)?;
            println!(
                "{}: {}{}",
                output.display(),
                mib(size),
                if size == fitted {
                    format!(" (fitted: the files and {} free for results)", mib(usb::RESULTS_ROOM))
                } else {
                    String::new()
                }
            );
            println!("  EFI: {} from {from}", inputs.loader.describe());
            println!(
                "  kernel {} ({}), initramfs {}",
                tree.kver,
                mib(vmlinuz.len() as u64),
                mib(initrd.len() as u64)
            );
            println!(
                "  legacy BIOS: {}",
                if matches!(bios, usb::Bios::Off) {
                    "no"
                } else {
                    "syslinux (gptmbr.bin, attribute bit 2)"
                }
            );
            println!(
                "  kernel options {}",
                usb::kernel_options(&append, &usb::stick_id(&inputs))
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_shared_rules() {
        for (s, want) in [
            ("128M", Some(128u64 << 20)),
            ("1G", Some(1 << 30)),
            ("4096", Some(4096)),
            ("2k", Some(2048)),
            // Spellings only bench_core::size took before: image sizes follow the config's rules.
            ("64MiB", Some(64 << 20)),
            ("1GB", Some(1_000_000_000)),
            ("x", None),
            ("", None),
            ("128m", None),
        ] {
            assert_eq!(parse_size(s).ok(), want, "{s}");
        }
        let e = parse_size("12X").unwrap_err();
        assert!(e.contains("\"12X\"") && e.contains(bench_core::size::EXPECTED), "{e}");
        let cli = Cli::try_parse_from([
            "bootbench-image",
            "usb",
            "--kernel-dir",
            "k",
            "--initramfs",
            "i",
            "--size",
            "64MiB",
            "-o",
            "o",
        ])
        .unwrap();
        let Cmd::Usb { size, .. } = cli.cmd else { panic!() };
        assert_eq!(size, Some(64 << 20));
    }

    #[test]
    fn cli_parses() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from([
            "bootbench-image",
            "initramfs",
            "--kernel-dir",
            "k",
            "--init",
            "i",
            "--modules",
            "ahci,nvme",
            "-o",
            "o",
        ])
        .unwrap();
        let Cmd::Initramfs { modules, .. } = cli.cmd else {
            panic!()
        };
        assert_eq!(modules.unwrap(), ["ahci", "nvme"]);
    }
}
