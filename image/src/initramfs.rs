//! The initramfs, as PID 1 reads it: /init, /sbin/modprobe -> /init, /etc/bootbench.json, the module
//! subset under /lib/modules/<kver>/ with modules.dep, modules.alias and modules.softdep, and the
//! empty directories PID 1 mounts on; with `--allow-network-destructive`
//! /etc/bootbench-network-destructive, with `--ca FILE` /etc/bootbench-ca.pem; a reproducible newc
//! archive, zstd-compressed ([`compress`]).

use crate::cpio::Archive;
use crate::modset::{ModSet, ModsetError, ModuleSource};
use std::path::Path;

/// The config built into the initramfs, and put on the stick, when none is given: the standard
/// profile (a real benchmark: a user who boots without a config wants one), every disk but the
/// stick, read-only. `make qemu` and the QEMU tests put quick configs on their stick copies.
pub const DEFAULT_CONFIG: &[u8] = b"{\"profile\": \"standard\"}\n";

pub use bench_core::boot::initramfs::{in_archive, CA_BUNDLE, CONFIG, EMPTY_DIRS, NETWORK_DESTRUCTIVE};

/// What [`NETWORK_DESTRUCTIVE`] says (one line).
pub const NETWORK_DESTRUCTIVE_TEXT: &[u8] =
    b"bootbench: a config fetched over the network may carry a destructive section (built with --allow-network-destructive)\n";

/// What goes in.
#[derive(Debug)]
pub struct Inputs<'a> {
    /// The static bootbench-init binary.
    pub init: Vec<u8>,
    /// /etc/bootbench.json.
    pub config: Vec<u8>,
    /// The kernel release (`lib/modules/<kver>`).
    pub kver: &'a str,
    /// The resolved module set.
    pub modules: &'a ModSet,
    /// Whether [`NETWORK_DESTRUCTIVE`] goes in.
    pub network_destructive: bool,
    /// [`CA_BUNDLE`]'s contents, checked by [`check_ca_bundle`].
    pub ca: Option<Vec<u8>>,
    /// A baseline for the config's `acceptance.baseline` (`bootbench-report
    /// baseline`), checked by [`check_baseline`]: its file name in /etc,
    /// beside /etc/bootbench.json (a config's files are found from its
    /// directory), and its bytes.
    pub baseline: Option<(String, Vec<u8>)>,
}

/// Why a baseline cannot go into the initramfs: a name that is no plain
/// file name in /etc, or one of the initramfs's own; contents that are not
/// a `bootbench.baseline/1` document.
pub fn check_baseline(name: &str, bytes: &[u8]) -> Result<(), String> {
    let own = [CONFIG, NETWORK_DESTRUCTIVE, CA_BUNDLE].map(|p| p.trim_start_matches("/etc/"));
    if name.is_empty() || name.starts_with('.') || name.contains('/') || own.contains(&name) {
        return Err(format!(
            "{name:?} cannot be a file name in /etc; expected a plain name other than {}",
            own.join(", ")
        ));
    }
    let b: bench_core::verdict::acceptance::Baseline = serde_json::from_slice(bytes)
        .map_err(|e| format!("not a {}: {e}", bench_core::verdict::acceptance::BASELINE_SCHEMA))?;
    b.check()
}

/// Errors while assembling.
#[derive(Debug)]
pub enum InitramfsError {
    /// Module tables (a dependency cycle).
    Modset(ModsetError),
    /// Reading a module file.
    Read { path: String, err: std::io::Error },
    /// Compressing.
    Compress(std::io::Error),
}

impl std::fmt::Display for InitramfsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Modset(e) => write!(f, "{e}"),
            Self::Read { path, err } => write!(f, "{path}: {err}"),
            Self::Compress(e) => write!(f, "zstd: {e}"),
        }
    }
}

impl std::error::Error for InitramfsError {}

/// The uncompressed archive. `read_module` returns the bytes of a module by its path relative to
/// `lib/modules/<kver>/`.
pub fn archive(
    inputs: &Inputs<'_>,
    read_module: &dyn Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<Archive, InitramfsError> {
    let mut a = Archive::new();
    a.file("init", 0o755, inputs.init.clone());
    a.symlink("sbin/modprobe", "/init");
    a.file(in_archive(CONFIG), 0o644, inputs.config.clone());
    if inputs.network_destructive {
        a.file(
            in_archive(NETWORK_DESTRUCTIVE),
            0o644,
            NETWORK_DESTRUCTIVE_TEXT.to_vec(),
        );
    }
    if let Some(ca) = &inputs.ca {
        a.file(in_archive(CA_BUNDLE), 0o644, ca.clone());
    }
    if let Some((name, bytes)) = &inputs.baseline {
        a.file(
            &format!("{}/{name}", in_archive(bench_core::boot::initramfs::BASELINE_DIR)),
            0o644,
            bytes.clone(),
        );
    }
    for d in EMPTY_DIRS {
        a.dir(in_archive(d));
    }
    let base = format!("lib/modules/{}", inputs.kver);
    a.dir(&base);
    for m in inputs.modules.modules.values() {
        let data = read_module(&m.path).map_err(|err| InitramfsError::Read {
            path: m.path.clone(),
            err,
        })?;
        a.file(&format!("{base}/{}", m.path), 0o644, data);
    }
    let dep = inputs.modules.modules_dep().map_err(InitramfsError::Modset)?;
    a.file(&format!("{base}/modules.dep"), 0o644, dep.into_bytes());
    a.file(
        &format!("{base}/modules.alias"),
        0o644,
        inputs.modules.modules_alias().into_bytes(),
    );
    a.file(
        &format!("{base}/modules.softdep"),
        0o644,
        inputs.modules.modules_softdep().into_bytes(),
    );
    Ok(a)
}

/// Checks that `pem` is a PEM CA bundle: at least one `CERTIFICATE` block, each closed, with
/// base64 between its lines. Returns how many certificates it holds, or what is wrong.
pub fn check_ca_bundle(pem: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(pem).map_err(|e| format!("not text (PEM is ASCII): {e}"))?;
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut count = 0;
    let mut body: Option<usize> = None; // base64 characters of the open block
    for (i, line) in text.lines().map(str::trim).enumerate() {
        match (line, body) {
            (BEGIN, None) => body = Some(0),
            (BEGIN, Some(_)) => return Err(format!("line {}: a certificate begins inside another", i + 1)),
            (END, Some(0)) => return Err(format!("line {}: an empty certificate", i + 1)),
            (END, Some(_)) => {
                count += 1;
                body = None;
            }
            (END, None) => return Err(format!("line {}: END CERTIFICATE without BEGIN", i + 1)),
            (l, Some(n)) => {
                if l.starts_with("-----") {
                    return Err(format!("line {}: {l} inside a certificate", i + 1));
                }
                if let Some(c) = l.chars().find(|c| !(c.is_ascii_alphanumeric() || "+/=".contains(*c))) {
                    return Err(format!("line {}: {c:?} is not base64", i + 1));
                }
                body = Some(n + l.len());
            }
            // Text between blocks (openssl's subject lines, comments) is allowed, as in
            // Debian's ca-certificates.crt and openssl x509 -text output.
            (_, None) => {}
        }
    }
    match (body, count) {
        (Some(_), _) => Err("a certificate is not closed (no -----END CERTIFICATE-----)".into()),
        (None, 0) => Err("no -----BEGIN CERTIFICATE----- block".into()),
        (None, n) => Ok(n),
    }
}

/// The zstd level: 19, the highest without `--ultra` (whose larger windows the kernel's
/// initramfs decompressor is not asked to hold).
pub const ZSTD_LEVEL: i32 = 19;

/// One zstd frame of `data` (single-threaded, no dictionary: equal input gives equal output).
/// The kernel unpacks it with CONFIG_RD_ZSTD (Debian's has it): smaller than gzip -9 and quicker
/// to unpack under TCG (with the NIC drivers 6.0 MB against 7.4, and PID 1 0.7 s sooner).
pub fn compress(data: &[u8]) -> Result<Vec<u8>, InitramfsError> {
    zstd::bulk::compress(data, ZSTD_LEVEL).map_err(InitramfsError::Compress)
}

/// The compressed initramfs for a kernel tree.
pub fn build_from_tree(moddir: &Path, inputs: &Inputs<'_>) -> Result<(Vec<u8>, usize), InitramfsError> {
    let a = archive(inputs, &|rel| std::fs::read(moddir.join(rel)))?;
    let raw = a.to_newc();
    Ok((compress(&raw)?, raw.len()))
}

/// Resolves `requested` in `source`: a convenience for the CLI and tests.
pub fn resolve(source: &dyn ModuleSource, requested: &[&str]) -> Result<ModSet, ModsetError> {
    ModSet::resolve(source, requested)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpio::tests::read_newc;
    use crate::modset::tests::fixture;

    /// A user who boots the image without writing a config gets the
    /// standard profile, read-only (no `destructive` section, no targets).
    #[test]
    fn the_default_config_is_standard_and_read_only() {
        let v: serde_json::Value = serde_json::from_slice(DEFAULT_CONFIG).expect("JSON");
        assert_eq!(v, serde_json::json!({"profile": "standard"}));
    }

    fn build(init: &[u8]) -> Vec<u8> {
        build_with(init, false, None)
    }

    fn build_with(init: &[u8], network_destructive: bool, ca: Option<&[u8]>) -> Vec<u8> {
        let set = resolve(&fixture(), &["ahci", "raid456", "xts"]).unwrap();
        let inputs = Inputs {
            init: init.to_vec(),
            config: DEFAULT_CONFIG.to_vec(),
            kver: "6.1.0-test",
            modules: &set,
            network_destructive,
            ca: ca.map(<[u8]>::to_vec),
            baseline: None,
        };
        let a = archive(&inputs, &|rel| Ok(format!("module bytes of {rel}").into_bytes())).unwrap();
        compress(&a.to_newc()).unwrap()
    }

    fn entries(compressed: &[u8]) -> Vec<crate::cpio::tests::Entry> {
        read_newc(&zstd::decode_all(compressed).unwrap())
    }

    /// A self-signed certificate's PEM shape (the base64 is not checked as DER).
    const PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUX0=\nQUJD\n-----END CERTIFICATE-----\n";

    /// The two network files are in the archive exactly when asked for, with their contents.
    /// A baseline goes to /etc under its own name, beside the config; a
    /// name outside /etc or one of the initramfs's own, and a file that is
    /// no baseline, are refused.
    #[test]
    fn a_baseline_goes_beside_the_config() {
        let set = resolve(&fixture(), &["ahci"]).unwrap();
        let baseline = br#"{"schema": "bootbench.baseline/1", "documents": 0, "figures": []}"#.to_vec();
        check_baseline("fleet.json", &baseline).unwrap();
        let inputs = Inputs {
            init: b"init".to_vec(),
            config: DEFAULT_CONFIG.to_vec(),
            kver: "6.1.0-test",
            modules: &set,
            network_destructive: false,
            ca: None,
            baseline: Some(("fleet.json".into(), baseline.clone())),
        };
        let a = archive(&inputs, &|rel| Ok(rel.as_bytes().to_vec())).unwrap();
        let got = entries(&compress(&a.to_newc()).unwrap());
        let e = got.iter().find(|e| e.name == "etc/fleet.json").expect("etc/fleet.json");
        assert_eq!(e.data, baseline);
        for bad in ["../fleet.json", "a/b.json", "bootbench.json", ".hidden", ""] {
            assert!(
                check_baseline(bad, &baseline)
                    .unwrap_err()
                    .contains("cannot be a file name in /etc"),
                "{bad}"
            );
        }
        assert!(check_baseline("x.json", br#"{"schema": "bootbench.result/1"}"#).is_err());
        assert!(
            check_baseline("x.json", br#"{"schema": "other", "documents": 0, "figures": []}"#)
                .unwrap_err()
                .contains("expected \"bootbench.baseline/1\"")
        );
    }

    #[test]
    fn network_files_only_when_asked() {
        let file = |gz: &[u8], name: &str| entries(gz).into_iter().find(|e| e.name == name).map(|e| e.data);
        for (destructive, ca) in [(false, None), (true, None), (false, Some(PEM)), (true, Some(PEM))] {
            let gz = build_with(b"init", destructive, ca.map(str::as_bytes));
            assert_eq!(
                file(&gz, in_archive(NETWORK_DESTRUCTIVE)),
                destructive.then(|| NETWORK_DESTRUCTIVE_TEXT.to_vec()),
                "destructive {destructive}, ca {}",
                ca.is_some()
            );
            assert_eq!(file(&gz, in_archive(CA_BUNDLE)), ca.map(|c| c.as_bytes().to_vec()));
            assert_eq!(file(&gz, "etc/bootbench.json").as_deref(), Some(DEFAULT_CONFIG));
        }
        let line = std::str::from_utf8(NETWORK_DESTRUCTIVE_TEXT).unwrap();
        assert_eq!(line.lines().count(), 1);
        assert!(line.ends_with('\n') && line.contains("--allow-network-destructive"));
    }

    #[test]
    fn a_ca_bundle_holds_certificates_in_pem() {
        assert_eq!(check_ca_bundle(PEM.as_bytes()), Ok(1));
        let two = format!("# a comment\nsubject=CN = one\n{PEM}\n{}", PEM.replace('\n', "\r\n"));
        assert_eq!(check_ca_bundle(two.as_bytes()), Ok(2));
        for (bad, why) in [
            ("", "no -----BEGIN CERTIFICATE-----"),
            ("just text\n", "no -----BEGIN CERTIFICATE-----"),
            (
                "-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----\n",
                "no -----BEGIN",
            ),
            ("-----BEGIN CERTIFICATE-----\nQUJD\n", "not closed"),
            (
                "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
                "empty certificate",
            ),
            (
                "-----BEGIN CERTIFICATE-----\nQU JD\n-----END CERTIFICATE-----\n",
                "not base64",
            ),
            ("-----END CERTIFICATE-----\n", "without BEGIN"),
        ] {
            let e = check_ca_bundle(bad.as_bytes()).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
        assert!(check_ca_bundle(b"\xff\xfe").unwrap_err().starts_with("not text"));
        // A real bundle, where the system has one.
        if let Ok(system) = std::fs::read("/etc/ssl/certs/ca-certificates.crt") {
            assert!(check_ca_bundle(&system).unwrap() > 10);
        }
    }

    #[test]
    fn contract_a_layout() {
        let gz = build(b"\x7fELF init");
        let entries = entries(&gz);
        let get = |n: &str| {
            entries
                .iter()
                .find(|e| e.name == n)
                .unwrap_or_else(|| panic!("{n} missing"))
        };
        assert_eq!(get("init").mode, 0o100_755);
        assert_eq!(get("init").data, b"\x7fELF init");
        assert_eq!(get("sbin/modprobe").mode & 0o170_000, 0o120_000);
        assert_eq!(get("sbin/modprobe").data, b"/init");
        assert_eq!(get("etc/bootbench.json").data, DEFAULT_CONFIG);
        for d in EMPTY_DIRS {
            assert_eq!(get(in_archive(d)).mode & 0o170_000, 0o040_000, "{d}");
        }
        let base = "lib/modules/6.1.0-test";
        assert_eq!(
            get(&format!("{base}/kernel/drivers/ata/ahci.ko")).data,
            b"module bytes of kernel/drivers/ata/ahci.ko"
        );
        let dep = String::from_utf8(get(&format!("{base}/modules.dep")).data.clone()).unwrap();
        assert!(
            dep.contains("kernel/drivers/ata/ahci.ko: kernel/drivers/ata/libahci.ko"),
            "{dep}"
        );
        let alias = String::from_utf8(get(&format!("{base}/modules.alias")).data.clone()).unwrap();
        assert!(alias.contains("alias pci:v*d*sv*sd*bc01sc06i01* ahci\n"), "{alias}");
        let soft = String::from_utf8(get(&format!("{base}/modules.softdep")).data.clone()).unwrap();
        assert!(soft.contains("softdep xts pre: ecb\n"), "{soft}");
        // Every module listed in modules.dep is in the archive.
        for line in dep.lines() {
            let path = line.split(':').next().unwrap();
            get(&format!("{base}/{path}"));
        }
    }

    #[test]
    fn reproducible() {
        let a = build(b"init one");
        let b = build(b"init one");
        assert_eq!(a, b, "two builds from the same inputs differ");
        assert_ne!(a, build(b"init two"), "the init binary does not reach the archive");
        let pem = Some(PEM.as_bytes());
        assert_eq!(build_with(b"init one", true, pem), build_with(b"init one", true, pem));
    }
}
