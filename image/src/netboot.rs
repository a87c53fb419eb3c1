//! The network boot directory (`bootbench-image netboot`): the kernel, the initramfs (the one the
//! stick uses), the boot scripts of iPXE (`boot.ipxe`), PXELINUX (`pxelinux.cfg/default`) and GRUB
//! (`grub/grub.cfg`) with the kernel command line, the boot loaders Debian ships where they are
//! installed, an example dnsmasq config and a README. Served as it is (TFTP, or HTTP for iPXE), it
//! boots machines.
//!
//! Every boot entry passes the kernel [`usb::CMDLINE`] (through [`usb::options_with`], as the
//! stick's entries do), `bootbench.config_url=` and `bootbench.results_url=` when given, the
//! `--append` words, and `BOOTIF=01-aa-bb-cc-dd-ee-ff`, the MAC address of the NIC the machine
//! booted from, as PXELINUX's `IPAPPEND 2` writes it: iPXE from `${netX/mac:hexhyp}`, GRUB from
//! `$net_default_mac` (split with `regexp`). The words are checked here so that all three loaders
//! pass them on unchanged ([`check_word`]); GRUB gets the ones with other characters than
//! [`GRUB_BARE`] in single quotes, since its lexer splits words at `{` and `}` (the results
//! template's placeholders `{machine}`, `{run}`, `{n}`).
//!
//! Reproducible: the same inputs give the same files, byte for byte.

use crate::usb;
use bench_core::boot::cmdline::Key;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The kernel's name in the directory.
pub const KERNEL: &str = "vmlinuz";
/// The initramfs's name in the directory.
pub const INITRD: &str = "initramfs.img";
/// iPXE's script.
pub const BOOT_IPXE: &str = "boot.ipxe";
/// PXELINUX's config (found by pxelinux.0 beside the directory `pxelinux.cfg/`).
pub const PXELINUX_CFG: &str = "pxelinux.cfg/default";
/// GRUB's config: Debian's network GRUB (`grubnetx64.efi`) is built with the prefix `/grub` and
/// reads `(tftp,SERVER)/grub/grub.cfg`, so the directory must be the TFTP root for GRUB.
pub const GRUB_CFG: &str = "grub/grub.cfg";
/// The example dnsmasq config.
pub const DNSMASQ: &str = "dnsmasq.conf.example";
/// What each file is.
pub const README: &str = "README.txt";
/// Characters GRUB takes as part of a bare word; a word with any other goes in single quotes.
pub const GRUB_BARE: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,=:/+@%-";

/// A boot loader binary Debian ships, copied into the directory when its file is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loader {
    /// Its name in the directory (what DHCP hands out, or what loads it).
    pub name: &'static str,
    /// Where Debian installs it.
    pub path: &'static str,
    /// The Debian package that holds it.
    pub package: &'static str,
    /// What it is for.
    pub role: &'static str,
}

/// The boot loaders, in the order the README lists them.
pub const LOADERS: &[Loader] = &[
    Loader {
        name: "pxelinux.0",
        path: "/usr/lib/PXELINUX/pxelinux.0",
        package: "pxelinux",
        role: "legacy BIOS PXE: PXELINUX, reads pxelinux.cfg/default",
    },
    Loader {
        name: "ldlinux.c32",
        path: "/usr/lib/syslinux/modules/bios/ldlinux.c32",
        package: "syslinux-common",
        role: "PXELINUX's core module, loaded from beside pxelinux.0",
    },
    Loader {
        name: "bootx64.efi",
        path: "/usr/lib/shim/shimx64.efi.signed",
        package: "shim-signed",
        role: "UEFI PXE: shim (signed by Microsoft's UEFI CA, so Secure Boot may stay on); loads grubx64.efi from beside it",
    },
    Loader {
        name: "grubx64.efi",
        path: "/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed",
        package: "grub-efi-amd64-signed",
        role: "UEFI PXE: GRUB's network image (signed by Debian), reads grub/grub.cfg",
    },
    Loader {
        name: "undionly.kpxe",
        path: "/usr/lib/ipxe/undionly.kpxe",
        package: "ipxe",
        role: "legacy BIOS PXE: iPXE, to chainload boot.ipxe (see dnsmasq.conf.example)",
    },
    Loader {
        name: "ipxe.efi",
        path: "/usr/lib/ipxe/ipxe.efi",
        package: "ipxe",
        role: "UEFI PXE: iPXE (unsigned: Secure Boot off), to chainload boot.ipxe",
    },
];

/// What the boot entries pass to the kernel besides [`usb::CMDLINE`] and `BOOTIF=`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `bootbench.config_url=`: where PID 1 gets its config (http:// or https://).
    pub config_url: Option<String>,
    /// `bootbench.results_url=`: where PID 1 PUTs its results, with `{machine}`, `{run}`, `{n}`.
    pub results_url: Option<String>,
    /// More kernel command-line words (`bootbench.force=1`, `bootbench.ip=...`).
    pub append: String,
}

/// Errors building the directory.
#[derive(Debug)]
pub enum NetbootError {
    /// A command-line value the boot loaders would not pass on as it is.
    Word { what: String, value: String, why: String },
    /// Writing a file.
    Write { path: PathBuf, err: std::io::Error },
}

impl std::fmt::Display for NetbootError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Word { what, value, why } => write!(f, "{what} {value:?}: {why}"),
            Self::Write { path, err } => write!(f, "{}: {err}", path.display()),
        }
    }
}

impl std::error::Error for NetbootError {}

/// Checks that `word` reaches the kernel unchanged from each loader: printable ASCII without
/// spaces (every loader splits words there), nor `"`, `'` or `\` (quoting in iPXE, GRUB and the
/// kernel's own parser), `$` (iPXE and GRUB expand variables), `;` (GRUB ends a command there)
/// or `#` (a comment in GRUB and iPXE). `what` names the value in the message.
pub fn check_word(what: &str, word: &str) -> Result<(), NetbootError> {
    let bad = |why: String| NetbootError::Word {
        what: what.to_owned(),
        value: word.to_owned(),
        why,
    };
    if word.is_empty() {
        return Err(bad("empty".into()));
    }
    if let Some(c) = word.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(bad(format!(
            "holds {c:?}; expected printable ASCII without spaces (percent-encode the rest)"
        )));
    }
    if let Some(c) = word.chars().find(|c| "\"'\\$;#".contains(*c)) {
        return Err(bad(format!(
            "holds {c:?}, which iPXE, GRUB or the kernel would not pass on as it is (percent-encode it)"
        )));
    }
    Ok(())
}

/// [`check_word`] and an `http://` or `https://` URL.
fn check_url(what: &str, url: &str) -> Result<(), NetbootError> {
    check_word(what, url)?;
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| NetbootError::Word {
            what: what.to_owned(),
            value: url.to_owned(),
            why: "expected an http:// or https:// URL".into(),
        })?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(NetbootError::Word {
            what: what.to_owned(),
            value: url.to_owned(),
            why: "no host".into(),
        });
    }
    Ok(())
}

impl Options {
    /// The kernel's words in order, `BOOTIF=` not included: [`usb::CMDLINE`]'s, the config and
    /// results URLs, the `append` words; each checked ([`check_word`]).
    pub fn words(&self) -> Result<Vec<String>, NetbootError> {
        let mut keys = Vec::new();
        if let Some(u) = &self.config_url {
            check_url("--config-url", u)?;
            keys.push(Key::ConfigUrl.with(u));
        }
        if let Some(u) = &self.results_url {
            check_url("--results-url", u)?;
            keys.push(Key::ResultsUrl.with(u));
        }
        for w in self.append.split_whitespace() {
            check_word("--append word", w)?;
        }
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        Ok(usb::options_with(&keys, &self.append)
            .split_whitespace()
            .map(str::to_owned)
            .collect())
    }
}

/// The first lines of each script: what wrote it.
const WRITTEN_BY: &str = "Written by bootbench-image netboot; the kernel command line is the one the USB stick's entries use, plus the network's keys.";

/// `boot.ipxe`: kernel and initramfs by relative URIs (resolved against the script's own URI, so
/// the directory works over TFTP and over HTTP as it is), `initrd=` for the EFI stub under
/// iPXE's UEFI build, `BOOTIF=` from the NIC iPXE booted from (`netX`: the last one opened).
pub fn boot_ipxe(words: &[String]) -> String {
    format!(
        "#!ipxe\n\
         # bootbench network boot. {WRITTEN_BY}\n\
         echo bootbench: loading {KERNEL} and {INITRD} from beside this script (${{netX/mac}})\n\
         kernel {KERNEL} initrd={INITRD} {} BOOTIF=01-${{netX/mac:hexhyp}} || goto failed\n\
         initrd {INITRD} || goto failed\n\
         boot || goto failed\n\
         :failed\n\
         echo bootbench: network boot failed, back to the firmware in 10 s\n\
         sleep 10\n\
         exit 1\n",
        words.join(" ")
    )
}

/// `pxelinux.cfg/default`: paths relative to pxelinux.0's directory; `IPAPPEND 2` appends
/// `BOOTIF=01-...`; PXELINUX's messages also on the first serial port, as the stick's syslinux.
pub fn pxelinux_default(words: &[String]) -> String {
    format!(
        "# bootbench network boot. {WRITTEN_BY}\n\
         SERIAL 0 115200\n\
         DEFAULT bootbench\n\
         PROMPT 0\n\
         TIMEOUT 0\n\
         LABEL bootbench\n  \
         LINUX {KERNEL}\n  \
         INITRD {INITRD}\n  \
         APPEND {}\n  \
         IPAPPEND 2\n",
        words.join(" ")
    )
}

/// `word` as GRUB passes it on unchanged: bare, or in single quotes (words hold no `'`:
/// [`check_word`]).
pub fn grub_quote(word: &str) -> String {
    if word.chars().all(|c| GRUB_BARE.contains(c)) {
        word.to_owned()
    } else {
        format!("'{word}'")
    }
}

/// `grub/grub.cfg`: boot at once; `BOOTIF=` from `$net_default_mac` (`aa:bb:cc:dd:ee:ff`, the NIC
/// GRUB booted from) split by `regexp`, and without it when there is none. `linuxefi` and
/// `initrdefi`, as on the stick ([`crate::usb::grub_cfg`]): through the kernel's EFI stub, which
/// hands the kernel the firmware's TPM event log, with Secure Boot on or off.
pub fn grub_cfg(words: &[String]) -> String {
    let words: Vec<String> = words.iter().map(|w| grub_quote(w)).collect();
    let words = words.join(" ");
    let x = "([0-9a-fA-F][0-9a-fA-F])";
    let sets: Vec<String> = (1..=6).map(|i| format!("--set={i}:bb_m{i}")).collect();
    let bootif: Vec<String> = (1..=6).map(|i| format!("$bb_m{i}")).collect();
    format!(
        "# bootbench network boot. {WRITTEN_BY}\n\
         # Debian's network GRUB reads this file as (tftp,SERVER)/grub/grub.cfg: serve the directory as the TFTP root.\n\
         set timeout=0\n\
         set default=0\n\
         menuentry \"bootbench\" {{\n  \
         if regexp {} '^{x}:{x}:{x}:{x}:{x}:{x}$' \"$net_default_mac\"; then\n    \
         linuxefi /{KERNEL} {words} \"BOOTIF=01-{}\"\n  \
         else\n    \
         echo \"bootbench: no MAC address in net_default_mac: booting without BOOTIF\"\n    \
         linuxefi /{KERNEL} {words}\n  \
         fi\n  \
         initrdefi /{INITRD}\n\
         }}\n",
        sets.join(" "),
        bootif.join("-"),
    )
}

/// `dnsmasq.conf.example`: TFTP from `tftp_root` (the directory), proxy DHCP (full DHCP commented
/// out), and per client: iPXE (its user class) gets boot.ipxe; firmware PXE gets PXELINUX
/// (legacy BIOS) or shim and GRUB (UEFI; GRUB alone without shim); chainloading iPXE instead is
/// commented out. `uefi` is the file UEFI PXE starts.
pub fn dnsmasq_example(tftp_root: &str, uefi: &str) -> String {
    format!(
        "# bootbench network boot: an example dnsmasq config. {WRITTEN_BY}
# Edit the interface and the network below, then run (as root: DHCP and TFTP ports)
#   dnsmasq --no-daemon --conf-file={tftp_root}/{DNSMASQ}
# and check it first with dnsmasq --test --conf-file=...

# No DNS service: this dnsmasq only boots machines.
port=0
# The interface the machines are on (edit).
interface=eth0
bind-interfaces
log-dhcp

# TFTP: this directory as it is (paths in the boot scripts are relative to it).
enable-tftp
tftp-root={tftp_root}

# Proxy DHCP: the network's own DHCP server hands out the addresses; dnsmasq only tells PXE
# clients what to boot. Give the network's address (edit).
dhcp-range=192.168.1.0,proxy
# Or full DHCP: dnsmasq hands out addresses too (comment out the line above, edit these).
#dhcp-range=192.168.1.100,192.168.1.200,255.255.255.0,1h
#dhcp-option=option:router,192.168.1.1

# Who asks: iPXE says so in its user class; UEFI firmware by its client architecture.
dhcp-userclass=set:ipxe,iPXE
dhcp-match=set:efi64,option:client-arch,7
dhcp-match=set:efi64,option:client-arch,9

# iPXE (a NIC's own, or one chainloaded below) runs {BOOT_IPXE}, which loads {KERNEL} and {INITRD}
# from beside it. For HTTP (faster than TFTP), serve this directory with any web server too and
# give its URL instead: dhcp-boot=tag:ipxe,http://SERVER/PATH/{BOOT_IPXE}
dhcp-boot=tag:ipxe,{BOOT_IPXE}
pxe-service=tag:ipxe,x86PC,\"bootbench (iPXE)\",{BOOT_IPXE}
pxe-service=tag:ipxe,BC_EFI,\"bootbench (iPXE)\",{BOOT_IPXE}
pxe-service=tag:ipxe,x86-64_EFI,\"bootbench (iPXE)\",{BOOT_IPXE}

# Firmware PXE, legacy BIOS: PXELINUX (pxelinux.0, ldlinux.c32, {PXELINUX_CFG}).
dhcp-boot=tag:!ipxe,tag:!efi64,pxelinux.0
pxe-service=tag:!ipxe,x86PC,\"bootbench (PXELINUX)\",pxelinux.0
# Firmware PXE, UEFI: {uefi} ({GRUB_CFG}).
dhcp-boot=tag:!ipxe,tag:efi64,{uefi}
pxe-service=tag:!ipxe,BC_EFI,\"bootbench (GRUB)\",{uefi}
pxe-service=tag:!ipxe,x86-64_EFI,\"bootbench (GRUB)\",{uefi}

# Or have every machine run {BOOT_IPXE}: chainload iPXE (Debian's ipxe package) instead of
# PXELINUX and GRUB (replace the five lines above with these).
#dhcp-boot=tag:!ipxe,tag:!efi64,undionly.kpxe
#pxe-service=tag:!ipxe,x86PC,\"bootbench (iPXE)\",undionly.kpxe
#dhcp-boot=tag:!ipxe,tag:efi64,ipxe.efi
#pxe-service=tag:!ipxe,BC_EFI,\"bootbench (iPXE)\",ipxe.efi
#pxe-service=tag:!ipxe,x86-64_EFI,\"bootbench (iPXE)\",ipxe.efi
"
    )
}

/// `README.txt`: what each file is, what is missing and where to get it, the two ways to serve
/// the directory, and the kernel command line.
pub fn readme(words: &[String], present: &[&Loader], missing: &[&Loader]) -> String {
    let mut s = String::new();
    let cmdline = words.join(" ");
    let _ = write!(
        s,
        "bootbench network boot
======================

Written by bootbench-image netboot. The kernel and the initramfs are the ones the USB stick
boots; the boot scripts give the kernel this command line:

  {cmdline} BOOTIF=01-<MAC of the boot NIC>

Files
-----
  {KERNEL:<22} the kernel (Debian's)
  {INITRD:<22} the initramfs: bootbench's PID 1, its modules and its built-in config
  {BOOT_IPXE:<22} iPXE's script (relative URIs: works over TFTP and over HTTP)
  {PXELINUX_CFG:<22} PXELINUX's config (IPAPPEND 2 adds BOOTIF=)
  {GRUB_CFG:<22} GRUB's config (UEFI PXE; BOOTIF= from $net_default_mac)
  {DNSMASQ:<22} an example dnsmasq config (proxy or full DHCP, TFTP from here)
  {README:<22} this file
"
    );
    for l in present {
        let _ = writeln!(s, "  {:<22} {} (from Debian's {})", l.name, l.role, l.package);
    }
    if !missing.is_empty() {
        s.push_str("\nNot here (not installed where this directory was written); copy them in to use them:\n");
        for l in missing {
            let _ = writeln!(
                s,
                "  {:<22} {}: apt-get install {}, then copy {}",
                l.name, l.role, l.package, l.path
            );
        }
    }
    let _ = write!(
        s,
        "
Serving it
----------
1. dnsmasq alone: DHCP (or proxy DHCP beside the network's DHCP server) and TFTP from this
   directory: edit the interface and the network in {DNSMASQ}, then
   dnsmasq --no-daemon --conf-file=THIS_DIR/{DNSMASQ}
   iPXE clients get {BOOT_IPXE}, legacy BIOS firmware PXELINUX, UEFI firmware GRUB (after shim
   when bootx64.efi is here). GRUB needs this directory as the TFTP root (it reads /grub/grub.cfg).
2. Any DHCP server, any TFTP server and any HTTP server: serve this directory as it is. Point
   iPXE clients at http://SERVER/PATH/{BOOT_IPXE} (the kernel and the initramfs then come over
   HTTP, from beside the script), or at {BOOT_IPXE} over TFTP; legacy BIOS clients at pxelinux.0,
   UEFI clients at bootx64.efi or grubx64.efi (DHCP option 67, the boot file name, with the TFTP
   server as next-server).

The config comes from bootbench.config_url= (or the one built into the initramfs) and the
results go to bootbench.results_url= ({{machine}}, {{run}} and {{n}} filled in by PID 1); see
bootbench's README, \"Network boot\".
"
    );
    s
}

/// Everything the directory holds, by relative path, in a fixed order.
#[derive(Debug)]
pub struct Inputs<'a> {
    /// The kernel.
    pub vmlinuz: &'a [u8],
    /// The initramfs (the stick's).
    pub initrd: &'a [u8],
    /// The kernel's command-line options.
    pub options: &'a Options,
    /// The boot loaders found, with their bytes.
    pub loaders: Vec<(&'a Loader, Vec<u8>)>,
    /// The directory's absolute path (dnsmasq's tftp-root).
    pub dir: &'a str,
}

/// The files, relative path and contents, in a fixed order.
pub fn files(inputs: &Inputs<'_>) -> Result<Vec<(String, Vec<u8>)>, NetbootError> {
    let words = inputs.options.words()?;
    let present: Vec<&Loader> = inputs.loaders.iter().map(|(l, _)| *l).collect();
    let missing: Vec<&Loader> = LOADERS.iter().filter(|l| !present.contains(l)).collect();
    let has = |name: &str| present.iter().any(|l| l.name == name);
    let uefi = if has("bootx64.efi") || !has("grubx64.efi") {
        "bootx64.efi"
    } else {
        "grubx64.efi"
    };
    let mut out = vec![
        (KERNEL.to_owned(), inputs.vmlinuz.to_vec()),
        (INITRD.to_owned(), inputs.initrd.to_vec()),
        (BOOT_IPXE.to_owned(), boot_ipxe(&words).into_bytes()),
        (PXELINUX_CFG.to_owned(), pxelinux_default(&words).into_bytes()),
        (GRUB_CFG.to_owned(), grub_cfg(&words).into_bytes()),
        (DNSMASQ.to_owned(), dnsmasq_example(inputs.dir, uefi).into_bytes()),
        (README.to_owned(), readme(&words, &present, &missing).into_bytes()),
    ];
    out.extend(inputs.loaders.iter().map(|(l, b)| (l.name.to_owned(), b.clone())));
    Ok(out)
}

/// Writes `files` under `dir` (created with its subdirectories), replacing what is there.
pub fn write(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), NetbootError> {
    for (rel, data) in files {
        let path = dir.join(rel);
        let werr = |err| NetbootError::Write {
            path: path.clone(),
            err,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(werr)?;
        }
        std::fs::write(&path, data).map_err(werr)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULTS: &str = "http://10.0.2.100/results/{machine}/{run}-{n}.json";

    fn options() -> Options {
        Options {
            config_url: Some("http://10.0.2.100/config/bootbench.json".into()),
            results_url: Some(RESULTS.into()),
            append: " bootbench.force=1  bootbench.ip=10.0.2.15/24,10.0.2.2 ".into(),
        }
    }

    /// The words every loader must pass to the kernel, in order.
    fn expected_words() -> String {
        format!(
            "{} bootbench.config_url=http://10.0.2.100/config/bootbench.json bootbench.results_url={RESULTS} \
             bootbench.force=1 bootbench.ip=10.0.2.15/24,10.0.2.2",
            usb::CMDLINE
        )
    }

    /// The line of `text` starting (after spaces) with `prefix`.
    fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
        text.lines()
            .map(str::trim_start)
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{text}"))
    }

    #[test]
    fn the_words_are_the_sticks_base_and_the_networks_keys() {
        let words = options().words().unwrap();
        assert_eq!(words.join(" "), expected_words());
        assert!(words.join(" ").starts_with(usb::CMDLINE));
        // Nothing but the base without options.
        assert_eq!(Options::default().words().unwrap().join(" "), usb::CMDLINE);
    }

    #[test]
    fn ipxe_passes_the_command_line_with_bootif_and_relative_uris() {
        let ipxe = boot_ipxe(&options().words().unwrap());
        assert!(ipxe.starts_with("#!ipxe\n"), "{ipxe}");
        assert_eq!(
            line(&ipxe, "kernel "),
            format!(
                "kernel vmlinuz initrd=initramfs.img {} BOOTIF=01-${{netX/mac:hexhyp}} || goto failed",
                expected_words()
            )
        );
        assert_eq!(line(&ipxe, "initrd "), "initrd initramfs.img || goto failed");
        // Relative URIs only: no scheme, no absolute path, no server named.
        for l in ipxe
            .lines()
            .filter(|l| l.starts_with("kernel") || l.starts_with("initrd"))
        {
            let target = l.split_whitespace().nth(1).unwrap();
            assert!(!target.contains(':') && !target.starts_with('/'), "{l}");
        }
        // The only `$` are iPXE's own settings (placeholders stay braces without `$`).
        assert_eq!(ipxe.matches('$').count(), 2, "{ipxe}");
        assert!(ipxe.contains("/{machine}/{run}-{n}.json "), "{ipxe}");
    }

    #[test]
    fn pxelinux_appends_bootif_itself() {
        let cfg = pxelinux_default(&options().words().unwrap());
        assert_eq!(line(&cfg, "APPEND "), format!("APPEND {}", expected_words()));
        assert_eq!(line(&cfg, "IPAPPEND"), "IPAPPEND 2");
        assert_eq!(line(&cfg, "LINUX "), "LINUX vmlinuz");
        assert_eq!(line(&cfg, "INITRD "), "INITRD initramfs.img");
        assert!(!cfg.contains("BOOTIF"), "PXELINUX adds it: {cfg}");
    }

    /// GRUB: the template in single quotes (its lexer splits `{`), the rest bare, BOOTIF from
    /// `$net_default_mac` in double quotes (expanded), and an entry without it.
    #[test]
    fn grub_quotes_the_placeholders_and_builds_bootif_from_its_mac() {
        let cfg = grub_cfg(&options().words().unwrap());
        let with = format!(
            "linuxefi /vmlinuz console=tty0 console=ttyS0,115200 panic=-1 loglevel=4 nvme.poll_queues=1 \
             bootbench.config_url=http://10.0.2.100/config/bootbench.json 'bootbench.results_url={RESULTS}' \
             bootbench.force=1 bootbench.ip=10.0.2.15/24,10.0.2.2"
        );
        assert!(
            cfg.contains(&format!(
                "    {with} \"BOOTIF=01-$bb_m1-$bb_m2-$bb_m3-$bb_m4-$bb_m5-$bb_m6\"\n"
            )),
            "{cfg}"
        );
        assert!(cfg.contains(&format!("    {with}\n")), "{cfg}");
        assert!(cfg.contains(
            "if regexp --set=1:bb_m1 --set=2:bb_m2 --set=3:bb_m3 --set=4:bb_m4 --set=5:bb_m5 --set=6:bb_m6 \
             '^([0-9a-fA-F][0-9a-fA-F]):"
        ));
        assert!(
            cfg.contains(":([0-9a-fA-F][0-9a-fA-F])$' \"$net_default_mac\"; then\n"),
            "{cfg}"
        );
        assert_eq!(line(&cfg, "initrdefi "), "initrdefi /initramfs.img");
        // Braces outside quotes only open and close the menu entry.
        let commands: String = cfg.lines().filter(|l| !l.starts_with('#')).collect();
        let unquoted: String = commands.split('\'').step_by(2).collect();
        assert_eq!(unquoted.matches('{').count(), 1, "{cfg}");
        assert_eq!(unquoted.matches('}').count(), 1, "{cfg}");
        assert_eq!(grub_quote("a=b/c:1,2"), "a=b/c:1,2");
        assert_eq!(grub_quote("a&b"), "'a&b'");
    }

    #[test]
    fn words_the_loaders_would_change_are_refused() {
        for (url, why) in [
            ("http://h/a b", "printable ASCII"),
            ("http://h/$x", "percent-encode"),
            ("http://h/a\"b", "percent-encode"),
            ("http://h/a'b", "percent-encode"),
            ("http://h/a;b", "percent-encode"),
            ("http://h/a#b", "percent-encode"),
            ("http://h/\u{e9}", "printable ASCII"),
            ("ftp://h/x", "http:// or https://"),
            ("http:///x", "no host"),
            ("", "empty"),
        ] {
            let opts = Options {
                config_url: Some(url.into()),
                ..Options::default()
            };
            let e = opts.words().unwrap_err().to_string();
            assert!(e.starts_with("--config-url ") && e.contains(why), "{url}: {e}");
        }
        let opts = Options {
            append: "ok=1 bad=$x".into(),
            ..Options::default()
        };
        assert!(opts
            .words()
            .unwrap_err()
            .to_string()
            .starts_with("--append word \"bad=$x\""));
        let opts = Options {
            results_url: Some("https://collector.example/r/{machine}/{run}-{n}.json?a=1&b=2".into()),
            ..Options::default()
        };
        assert!(opts.words().is_ok());
    }

    fn inputs<'a>(options: &'a Options, loaders: Vec<(&'a Loader, Vec<u8>)>) -> Inputs<'a> {
        Inputs {
            vmlinuz: b"fake kernel",
            initrd: b"fake initramfs",
            options,
            loaders,
            dir: "/srv/bootbench",
        }
    }

    #[test]
    fn the_directory_holds_every_file_and_is_reproducible() {
        let opts = options();
        let pxe = &LOADERS[0];
        let grub = LOADERS.iter().find(|l| l.name == "grubx64.efi").unwrap();
        let files = files(&inputs(
            &opts,
            vec![(pxe, b"pxelinux".to_vec()), (grub, b"grub".to_vec())],
        ))
        .unwrap();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "vmlinuz",
                "initramfs.img",
                "boot.ipxe",
                "pxelinux.cfg/default",
                "grub/grub.cfg",
                "dnsmasq.conf.example",
                "README.txt",
                "pxelinux.0",
                "grubx64.efi"
            ]
        );
        assert_eq!(files[1].1, b"fake initramfs", "the initramfs as it is");
        let readme = String::from_utf8(files[6].1.clone()).unwrap();
        assert!(readme.contains(&expected_words()), "{readme}");
        assert!(
            readme.contains("ldlinux.c32") && readme.contains("apt-get install syslinux-common"),
            "{readme}"
        );
        // Without shim, UEFI PXE starts GRUB itself.
        let dnsmasq = String::from_utf8(files[5].1.clone()).unwrap();
        assert!(
            dnsmasq.contains("dhcp-boot=tag:!ipxe,tag:efi64,grubx64.efi\n"),
            "{dnsmasq}"
        );
        assert!(dnsmasq.contains("tftp-root=/srv/bootbench\n"), "{dnsmasq}");
        assert!(dnsmasq.contains("dhcp-userclass=set:ipxe,iPXE\n"), "{dnsmasq}");
        assert!(dnsmasq.contains("dhcp-boot=tag:ipxe,boot.ipxe\n"), "{dnsmasq}");
        // Same inputs, same bytes; written and read back.
        let again = super::files(&inputs(
            &opts,
            vec![(pxe, b"pxelinux".to_vec()), (grub, b"grub".to_vec())],
        ))
        .unwrap();
        assert_eq!(files, again);
        let dir = std::env::temp_dir().join(format!("bootbench-netboot-{}", std::process::id()));
        write(&dir, &files).unwrap();
        for (rel, data) in &files {
            assert_eq!(&std::fs::read(dir.join(rel)).unwrap(), data, "{rel}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The example parses, where dnsmasq is installed (`dnsmasq --test`).
    #[test]
    fn the_dnsmasq_example_parses() {
        let Some(dnsmasq) = ["/usr/sbin/dnsmasq", "/usr/bin/dnsmasq"]
            .into_iter()
            .find(|p| Path::new(p).exists())
        else {
            eprintln!("skipped: dnsmasq not installed (Debian's dnsmasq-base)");
            return;
        };
        let path = std::env::temp_dir().join(format!("bootbench-dnsmasq-{}.conf", std::process::id()));
        let text = dnsmasq_example("/srv/bootbench", "bootx64.efi");
        // The chainloading alternative parses too.
        let alt: String = text
            .lines()
            .map(|l| {
                l.strip_prefix('#')
                    .filter(|l| l.starts_with("dhcp-") || l.starts_with("pxe-"))
                    .unwrap_or(l)
            })
            .map(|l| format!("{l}\n"))
            .collect();
        for conf in [text, alt] {
            std::fs::write(&path, &conf).unwrap();
            let out = std::process::Command::new(dnsmasq)
                .arg("--test")
                .arg(format!("--conf-file={}", path.display()))
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "dnsmasq --test: {said}\n{conf}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
