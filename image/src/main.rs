//! The `bootbench-image` command: `initramfs`, `usb`, `netboot` and `flash`.
#![deny(unsafe_code)]

use anyhow::{bail, Context, Result};
use bench_core::stick::CONFIG_NAME;
use bootbench_image::{flash, initramfs, modset, netboot, stick, usb};
use clap::{Args, Parser, Subcommand};
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
    Initramfs(InitramfsArgs),
    /// The network boot directory: the kernel, the initramfs (the stick's), boot scripts for iPXE
    /// (boot.ipxe), PXELINUX (pxelinux.cfg/default) and GRUB (grub/grub.cfg), Debian's boot
    /// loaders where installed, dnsmasq.conf.example and README.txt; served as it is, it boots.
    Netboot(NetbootArgs),
    /// The USB stick image: GPT, an EFI system partition labelled BOOTBENCH with the UEFI boot
    /// loader (shim + GRUB, signed, with --shim and --grub; else systemd-boot) and syslinux.
    Usb(UsbArgs),
    /// Write the stick image onto a USB stick or SD card and read it back to check it. Refused,
    /// with each reason, unless --force: a device not on a USB or SD/MMC bus, one mounted (or a
    /// partition of it), in use as swap or by md/dm, the disk this system runs from, one larger
    /// than 256 GB, and one whose partitions hold files (a FAT or exFAT with files, listed, or any
    /// other data structure libblkid knows: the signature scan PID 1 uses). Without --device, the
    /// USB and SD/MMC disks attached are listed.
    Flash(FlashArgs),
}

// The arguments of `bootbench-image initramfs` (its help is the doc comment of `Cmd::Initramfs`).
#[derive(Debug, Args)]
struct InitramfsArgs {
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
    /// Let a config fetched over the network (bootbench.config_url=) carry a `destructive`
    /// section: adds /etc/bootbench-network-destructive. Without it PID 1 refuses to write any
    /// disk on a network config's word, since whoever controls that URL could wipe disks.
    #[arg(long)]
    allow_network_destructive: bool,
    /// A PEM CA bundle (at least one CERTIFICATE) PID 1 checks HTTPS servers against:
    /// installed as /etc/bootbench-ca.pem.
    #[arg(long, value_name = "FILE")]
    ca: Option<PathBuf>,
    /// A baseline (`bootbench-report baseline`) installed as /etc/<its file name>, beside
    /// /etc/bootbench.json: the built-in config's `acceptance.baseline.file` names it.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Output file (zstd-compressed newc cpio).
    #[arg(short, long)]
    output: PathBuf,
}

// The arguments of `bootbench-image netboot` (its help is the doc comment of `Cmd::Netboot`).
#[derive(Debug, Args)]
struct NetbootArgs {
    /// A `dpkg -x` of linux-image-<version> (holds boot/vmlinuz-<kver>).
    #[arg(long)]
    kernel_dir: PathBuf,
    /// The initramfs, as built by `bootbench-image initramfs` (the stick's).
    #[arg(long)]
    initramfs: PathBuf,
    /// Where PID 1 gets its config: bootbench.config_url= (http:// or https://).
    #[arg(long, value_name = "URL")]
    config_url: Option<String>,
    /// Where PID 1 PUTs its results: bootbench.results_url=, with {machine}, {run} and {n}.
    #[arg(long, value_name = "TEMPLATE")]
    results_url: Option<String>,
    /// Extra kernel command-line words (bootbench.force=1, bootbench.ip=ADDR/PREFIX,...).
    #[arg(long, default_value = "")]
    append: String,
    /// Debian's signed shim, copied as bootx64.efi [default: /usr/lib/shim/shimx64.efi.signed
    /// where installed].
    #[arg(long, value_name = "FILE")]
    shim: Option<PathBuf>,
    /// Debian's signed network GRUB, copied as grubx64.efi [default:
    /// /usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed where installed].
    #[arg(long, value_name = "FILE")]
    grub: Option<PathBuf>,
    /// The directory (created; its files replaced).
    #[arg(short, long)]
    output: PathBuf,
}

// The arguments of `bootbench-image usb` (its help is the doc comment of `Cmd::Usb`).
#[derive(Debug, Args)]
struct UsbArgs {
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
    /// `1GB` = 1000-based). Default: what the files need plus 10 MiB free for results,
    /// rounded up to a MiB (32 MiB with Debian's kernel and the signed chain).
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
}

// The arguments of `bootbench-image flash` (its help is the doc comment of `Cmd::Flash`).
#[derive(Debug, Args)]
struct FlashArgs {
    /// The stick image (`make image`: out/bootbench.img).
    image: PathBuf,
    /// The stick, a whole disk: /dev/sdX, /dev/mmcblkN, or a link to one (/dev/disk/by-id/...).
    #[arg(long)]
    device: Option<PathBuf>,
    /// Put this config on the stick as /bootbench.json in the same step: checked first against
    /// the config schema; a bad one writes nothing.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Write although the checks speak against it (each reason is still printed).
    #[arg(long)]
    force: bool,
}

/// `--size`: [`bench_core::size::parse_size`], the config's rules.
fn parse_size(s: &str) -> Result<u64, String> {
    bench_core::size::parse_size(s)
        .map_err(|e| format!("{s:?} is not a size: {e}; expected {}", bench_core::size::EXPECTED))
}

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
        allow_network_destructive,
        ca,
        baseline,
        output,
    } = args;
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
        let Cmd::Initramfs(InitramfsArgs { modules, .. }) = cli.cmd else {
            panic!()
        };
        assert_eq!(modules.unwrap(), ["ahci", "nvme"]);
    }
}
