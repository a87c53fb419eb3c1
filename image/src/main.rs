//! The `bootbench-image` command: `initramfs`, `usb`, `netboot` and `flash`.
#![deny(unsafe_code)]

use anyhow::{bail, Context, Result};
use bench_core::boot::stick::CONFIG_NAME;
use bootbench_image::cli::{Cli, Cmd, FlashArgs, InitramfsArgs, NetbootArgs, UsbArgs};
use bootbench_image::{flash, initramfs, modset, netboot, stick, usb};
use clap::Parser;
use std::path::Path;

/// The config schema (`schema/bootbench.config-1.schema.json`), which `flash --config` checks.
const CONFIG_SCHEMA: &str = include_str!("../../schema/bootbench.config-1.schema.json");

/// `config`'s bytes when it is JSON that the config schema takes; else what is wrong with it.
fn checked_config(config: &Path) -> Result<Vec<u8>> {
    let bytes = read(config)?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).with_context(|| format!("--config {}: not JSON", config.display()))?;
    let schema: serde_json::Value = serde_json::from_str(CONFIG_SCHEMA).context("the config schema")?;
    let validator = jsonschema::validator_for(&schema).map_err(|e| anyhow::anyhow!("the config schema: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| {
            let at = e.instance_path.to_string();
            format!("{}: {e}", if at.is_empty() { "(the config)" } else { at.as_str() })
        })
        .collect();
    if !errors.is_empty() {
        bail!(
            "--config {}: not a bootbench config: {}; nothing was written",
            config.display(),
            errors.join("; ")
        );
    }
    Ok(bytes)
}

/// `bootbench-image flash`: see [`flash`].
fn flash_cmd(image: &Path, device: Option<&Path>, config: Option<&Path>, force: bool) -> Result<()> {
    let sys = Path::new("/sys");
    let config = config.map(|c| checked_config(c).map(|b| (c, b))).transpose()?;
    let Some(device) = device else {
        let found = flash::candidates(sys);
        if found.is_empty() {
            bail!("no --device given, and no USB or SD/MMC disk is attached");
        }
        eprintln!("no --device given; the USB and SD/MMC disks here:");
        for d in &found {
            eprintln!(
                "  {}  {:.1} GB  {}  {}{}",
                d.path.display(),
                d.size as f64 / 1e9,
                d.bus,
                d.model.as_deref().unwrap_or("(no model)"),
                d.serial.as_deref().map(|s| format!(", serial {s}")).unwrap_or_default()
            );
        }
        bail!("give one with --device (GB = 10^9 B)");
    };
    let name = flash::name_of(device).map_err(anyhow::Error::msg)?;
    let d = flash::device(sys, &name).map_err(anyhow::Error::msg)?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let why = flash::refusals(&d, sys, &mountinfo, &swaps, &flash::read_contents);
    for w in &why {
        eprintln!("{}: {w}", if force { "warning (--force)" } else { "refused" });
    }
    if !why.is_empty() && !force {
        bail!(
            "{} is not written ({} reason(s) above); --force writes it anyway",
            d.path.display(),
            why.len()
        );
    }
    let mut bytes = read(image)?;
    if let Some((path, cfg)) = &config {
        // The config goes onto a copy of the image's FAT, as the user would put it there.
        let copy = std::env::temp_dir().join(format!("bootbench-flash-{}.img", std::process::id()));
        std::fs::write(&copy, &bytes).with_context(|| format!("writing {}", copy.display()))?;
        let local = copy.with_extension("json");
        std::fs::write(&local, cfg)?;
        let put = stick::put_file(&copy, &local, &format!("/{CONFIG_NAME}"));
        bytes = read(&copy)?;
        let _ = std::fs::remove_file(&copy);
        let _ = std::fs::remove_file(&local);
        put.with_context(|| format!("putting {} on the image", path.display()))?;
    }
    eprintln!(
        "writing {} ({}) onto {} ({}, {:.1} GB{})",
        image.display(),
        mib(bytes.len() as u64),
        d.path.display(),
        d.bus,
        d.size as f64 / 1e9,
        d.model.as_deref().map(|m| format!(", {m}")).unwrap_or_default()
    );
    let mut shown = (String::new(), 0u64);
    let verified = flash::write_and_verify(&bytes, &d.path, &mut |what, done, total| {
        let tenth = done * 10 / total.max(1);
        if shown.0 != what || tenth > shown.1 || done == total {
            if shown.0 != what || tenth > shown.1 {
                eprintln!(
                    "  {what} {:.1} of {:.1} MiB ({}%)",
                    done as f64 / 1048576.0,
                    total as f64 / 1048576.0,
                    tenth * 10
                );
            }
            shown = (what.to_string(), tenth);
        }
    })
    .map_err(anyhow::Error::msg)?;
    println!(
        "{}: written and read back equal: {} B, CRC-32 {:08x}{}",
        d.path.display(),
        verified.bytes,
        verified.crc32,
        if config.is_some() {
            format!(", with the config as /{CONFIG_NAME}")
        } else {
            String::new()
        }
    );
    Ok(())
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
        Cmd::Initramfs(args) => initramfs_cmd(args)?,
        Cmd::Netboot(args) => netboot_cmd(args)?,
        Cmd::Flash(FlashArgs {
            image,
            device,
            config,
            force,
        }) => flash_cmd(&image, device.as_deref(), config.as_deref(), force)?,
        Cmd::Usb(args) => usb_cmd(args)?,
    }
    Ok(())
}

/// `bootbench-image initramfs`: the module set resolved from the kernel tree, the archive written, what it holds printed.
fn initramfs_cmd(args: InitramfsArgs) -> Result<()> {
    let InitramfsArgs {
        kernel_dir,
        init,
        config,
        modules,
        add_module,
        allow_network_destructive,
        ca,
        baseline,
        output,
    } = args;
    let tree = modset::KernelTree::open(&kernel_dir)?;
    let requested = modset::requested(modules.as_deref(), &add_module);
    let requested: Vec<&str> = requested.iter().map(String::as_str).collect();
    let set = modset::ModSet::resolve(&tree, &requested)?;
    for b in &set.builtin {
        eprintln!("note: {b} is built into kernel {}: nothing to load", tree.kver);
    }
    for s in &set.unresolved_softdeps {
        eprintln!("note: soft dependency {s} names no module or alias in the set: left out");
    }
    let ca = match &ca {
        Some(path) => {
            let pem = read(path)?;
            let n = initramfs::check_ca_bundle(&pem)
                .map_err(|why| anyhow::anyhow!("--ca {}: not a PEM CA bundle: {why}", path.display()))?;
            eprintln!("note: --ca {}: {n} certificate(s)", path.display());
            Some(pem)
        }
        None => None,
    };
    let baseline = match &baseline {
        Some(path) => {
            let bytes = read(path)?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            initramfs::check_baseline(&name, &bytes)
                .map_err(|why| anyhow::anyhow!("--baseline {}: {why}", path.display()))?;
            eprintln!("note: --baseline {}: installed as /etc/{name}", path.display());
            Some((name, bytes))
        }
        None => None,
    };
    let inputs = initramfs::Inputs {
        init: read(&init)?,
        config: config_or_default(config.as_deref())?,
        kver: &tree.kver,
        modules: &set,
        network_destructive: allow_network_destructive,
        ca,
        baseline,
    };
    let (gz, raw) = initramfs::build_from_tree(&tree.moddir, &inputs)?;
    std::fs::write(&output, &gz).with_context(|| format!("writing {}", output.display()))?;
    println!("{}: kernel {}", output.display(), tree.kver);
    println!("  modules: {} ({} requested)", set.modules.len(), requested.len());
    if !add_module.is_empty() {
        println!(
            "  added: {} (loaded when bootbench.modules= names them)",
            add_module.join(" ")
        );
    }
    println!("  uncompressed: {}", mib(raw as u64));
    println!("  compressed (zstd): {}", mib(gz.len() as u64));
    if allow_network_destructive {
        println!("  a config from the network may carry a destructive section");
    }
    Ok(())
}

/// `bootbench-image netboot`: the options checked first, then the loaders found, the directory written, its files printed.
fn netboot_cmd(args: NetbootArgs) -> Result<()> {
    let NetbootArgs {
        kernel_dir,
        initramfs,
        config_url,
        results_url,
        append,
        shim,
        grub,
        output,
    } = args;
    let options = netboot::Options {
        config_url,
        results_url,
        append,
    };
    // Checked before anything is read or written.
    options.words()?;
    let tree = modset::KernelTree::open(&kernel_dir)?;
    let (vmlinuz, initrd) = (read(&tree.vmlinuz)?, read(&initramfs)?);
    let given = |name: &str| match name {
        "bootx64.efi" => shim.clone(),
        "grubx64.efi" => grub.clone(),
        _ => None,
    };
    let mut loaders = Vec::new();
    for l in netboot::LOADERS {
        match given(l.name) {
            Some(path) => loaders.push((l, read(&path)?)),
            None if Path::new(l.path).is_file() => loaders.push((l, read(Path::new(l.path))?)),
            None => eprintln!("note: {} not installed ({}): {} left out", l.path, l.package, l.name),
        }
    }
    std::fs::create_dir_all(&output).with_context(|| format!("creating {}", output.display()))?;
    let dir = std::fs::canonicalize(&output).with_context(|| output.display().to_string())?;
    let dir_text = dir
        .to_str()
        .with_context(|| format!("{}: not UTF-8 (dnsmasq's tftp-root)", dir.display()))?;
    let inputs = netboot::Inputs {
        vmlinuz: &vmlinuz,
        initrd: &initrd,
        options: &options,
        loaders,
        dir: dir_text,
    };
    let files = netboot::files(&inputs)?;
    netboot::write(&output, &files)?;
    println!("{}: network boot directory, kernel {}", output.display(), tree.kver);
    for (name, data) in &files {
        println!("  {name:<22} {}", mib(data.len() as u64));
    }
    println!("  kernel options {} BOOTIF=01-<MAC>", options.words()?.join(" "));
    Ok(())
}

/// `bootbench-image usb`: the boot loader, the config and the size chosen, the image built and written, what it holds printed.
fn usb_cmd(args: UsbArgs) -> Result<()> {
    let UsbArgs {
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
    } = args;
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bootbench_image::cli::parse_size;

    #[test]
    fn sizes_follow_the_shared_rules() {
        for (s, want) in [
            ("128M", Some(128u64 << 20)),
            ("1G", Some(1 << 30)),
            ("4096", Some(4096)),
            ("2k", Some(2048)),
            // Spellings only bench_core::vocab::size took before: image sizes follow the config's rules.
            ("64MiB", Some(64 << 20)),
            ("1GB", Some(1_000_000_000)),
            ("x", None),
            ("", None),
            ("128m", None),
        ] {
            assert_eq!(parse_size(s).ok(), want, "{s}");
        }
        let e = parse_size("12X").unwrap_err();
        assert!(
            e.contains("\"12X\"") && e.contains(bench_core::vocab::size::EXPECTED),
            "{e}"
        );
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
        let Cmd::Usb(UsbArgs { size, .. }) = cli.cmd else {
            panic!()
        };
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
        let Cmd::Initramfs(InitramfsArgs {
            modules, add_module, ..
        }) = cli.cmd
        else {
            panic!()
        };
        assert_eq!(modules.unwrap(), ["ahci", "nvme"]);
        assert!(add_module.is_empty());
        let cli = Cli::try_parse_from([
            "bootbench-image",
            "initramfs",
            "--kernel-dir",
            "k",
            "--init",
            "i",
            "--add-module",
            "scsi_debug,null_blk",
            "--add-module",
            "foo",
            "-o",
            "o",
        ])
        .unwrap();
        let Cmd::Initramfs(InitramfsArgs {
            modules, add_module, ..
        }) = cli.cmd
        else {
            panic!()
        };
        assert_eq!(modules, None);
        assert_eq!(add_module, ["scsi_debug", "null_blk", "foo"]);
    }
}
