//! The initramfs (contract A): /init, /sbin/modprobe -> /init, /etc/bootbench.json, the module
//! subset under /lib/modules/<kver>/ with modules.dep, modules.alias and modules.softdep, and the
//! empty directories PID 1 mounts on; a reproducible newc archive, gzip-compressed.

use crate::cpio::Archive;
use crate::modset::{ModSet, ModsetError, ModuleSource};
use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};
use std::io::Write;
use std::path::Path;

/// The config built into the initramfs, and put on the stick, when none is given: the standard
/// profile (a real benchmark: a user who boots without a config wants one), every disk but the
/// stick, read-only. `make qemu` and the QEMU tests put quick configs on their stick copies.
pub const DEFAULT_CONFIG: &[u8] = b"{\"profile\": \"standard\"}\n";

/// Directories PID 1 mounts on.
pub const EMPTY_DIRS: &[&str] = &["dev", "proc", "sys", "tmp", "mnt/stick"];

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
            Self::Compress(e) => write!(f, "gzip: {e}"),
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
    a.file("etc/bootbench.json", 0o644, inputs.config.clone());
    for d in EMPTY_DIRS {
        a.dir(d);
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

/// gzip with no name and mtime 0 in the header, so equal input gives equal output.
pub fn gzip(data: &[u8]) -> Result<Vec<u8>, InitramfsError> {
    let mut enc: GzEncoder<Vec<u8>> = GzBuilder::new().mtime(0).write(Vec::new(), Compression::best());
    enc.write_all(data).map_err(InitramfsError::Compress)?;
    enc.finish().map_err(InitramfsError::Compress)
}

/// The compressed initramfs for a kernel tree.
pub fn build_from_tree(moddir: &Path, inputs: &Inputs<'_>) -> Result<(Vec<u8>, usize), InitramfsError> {
    let a = archive(inputs, &|rel| std::fs::read(moddir.join(rel)))?;
    let raw = a.to_newc();
    Ok((gzip(&raw)?, raw.len()))
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
    use std::io::Read;

    /// A user who boots the image without writing a config gets the
    /// standard profile, read-only (no `destructive` section, no targets).
    #[test]
    fn the_default_config_is_standard_and_read_only() {
        let v: serde_json::Value = serde_json::from_slice(DEFAULT_CONFIG).expect("JSON");
        assert_eq!(v, serde_json::json!({"profile": "standard"}));
    }

    fn build(init: &[u8]) -> Vec<u8> {
        let set = resolve(&fixture(), &["ahci", "raid456", "xts"]).unwrap();
        let inputs = Inputs {
            init: init.to_vec(),
            config: DEFAULT_CONFIG.to_vec(),
            kver: "6.1.0-test",
            modules: &set,
        };
        let a = archive(&inputs, &|rel| Ok(format!("module bytes of {rel}").into_bytes())).unwrap();
        gzip(&a.to_newc()).unwrap()
    }

    #[test]
    fn contract_a_layout() {
        let gz = build(b"\x7fELF init");
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).unwrap();
        let entries = read_newc(&raw);
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
            assert_eq!(get(d).mode & 0o170_000, 0o040_000, "{d}");
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
    }
}
