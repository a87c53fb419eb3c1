//! The module subset: a kernel tree's index, the closure of a requested set over `depends=` and
//! soft dependencies, and the depmod-format tables (modules.dep, modules.alias, modules.softdep)
//! that PID 1 reads from the initramfs (under /lib/modules/<kver>/).

use crate::modinfo::{self, normalize, ModInfo};
use bench_core::vocab::glob::fnmatch;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The default module set: AHCI/SATA, NVMe, virtio (blk and SCSI), USB storage (BOT and UAS) and
/// host controllers, the SAS/SCSI HBAs and RAID controllers servers have (Broadcom/LSI SAS2/3
/// `mpt3sas`, MegaRAID `megaraid_sas`, Fusion MPT SAS1068/SPI `mptsas` `mptspi`, LSI 53C8xx
/// `sym53c8xx`, HPE Smart Array `hpsa` `smartpqi`), md personalities, dm-crypt and its ciphers,
/// crc32c, vfat and its code pages, efivarfs (where PID 1 reads which partition it booted from),
/// and the NICs of a network boot (virtio, Intel e1000/e1000e/igb/ixgbe/i40e/ice, Broadcom
/// bnxt_en/tg3, Mellanox mlx5_core, Realtek r8169; what they need comes by `depends=` and softdeps,
/// r8169's PHY driver `realtek` by its softdep). Some chips want firmware files the initramfs does
/// not carry: ice its DDP package (it runs in its safe mode without), r8169 and tg3 for some chips
/// (Debian's firmware-realtek, firmware-misc-nonfree).
pub const DEFAULT_MODULES: &[&str] = &[
    "ahci",
    "sd_mod",
    "nvme",
    "virtio_blk",
    "virtio_pci",
    "virtio_scsi",
    "usb_storage",
    "uas",
    "xhci_pci",
    "xhci_hcd",
    "ehci_pci",
    "ehci_hcd",
    "ohci_pci",
    "uhci_hcd",
    "mpt3sas",
    "megaraid_sas",
    "mptsas",
    "mptspi",
    "sym53c8xx",
    "hpsa",
    "smartpqi",
    "md_mod",
    "linear",
    "raid0",
    "raid1",
    "raid10",
    "raid456",
    "dm_mod",
    "dm_crypt",
    "xts",
    "ecb",
    "aesni_intel",
    "crc32c_generic",
    "crc32c_intel",
    "vfat",
    "nls_cp437",
    "nls_ascii",
    "nls_iso8859_1",
    "efivarfs",
    "virtio_net",
    "e1000",
    "e1000e",
    "igb",
    "ixgbe",
    "i40e",
    "ice",
    "bnxt_en",
    "mlx5_core",
    "tg3",
    "r8169",
];

/// Soft dependencies bootbench adds to the modules' own (`pre:`, loaded first): a module whose
/// init asks the crypto API for an algorithm makes the kernel run its module helper (PID 1
/// again, as `modprobe`) for each name it tries, unless a provider is in already.
/// `crc64_rocksoft` (which `t10_pi`, and so NVMe and sd_mod, need) asks for `crc64-rocksoft`:
/// without `crc64_rocksoft_generic` that was three helper runs (`crypto-crc64-rocksoft`,
/// `crypto-crc64-rocksoft-all`, `cryptomgr`), about 0.2 s of the first seconds under TCG, on
/// the way to every NVMe and SCSI disk. Its own softdep names `crc64`, the library.
pub const EXTRA_SOFTDEPS: &[(&str, &str)] = &[("crc64_rocksoft", "crc64_rocksoft_generic")];

/// The modules an initramfs is built from: `modules` (`--modules`) or else [`DEFAULT_MODULES`],
/// then each of `added` (`--add-module`: an out-of-tree or rarely needed driver, loaded at boot
/// when `bootbench.modules=` names it) not already there, in order; names as written, empty
/// ones left out. Their dependencies come by [`ModSet::resolve`], as the others' do.
pub fn requested(modules: Option<&[String]>, added: &[String]) -> Vec<String> {
    let mut out: Vec<String> = match modules {
        Some(m) => m.to_vec(),
        None => DEFAULT_MODULES.iter().map(|s| (*s).to_owned()).collect(),
    };
    out.retain(|m| !m.is_empty());
    for m in added.iter().filter(|m| !m.is_empty()) {
        if !out.iter().any(|o| normalize(o) == normalize(m)) {
            out.push(m.clone());
        }
    }
    out
}

/// One module of the set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// Canonical name (`_`), as modinfo's `name=`.
    pub name: String,
    /// Path relative to `lib/modules/<kver>/`, as in the package (`kernel/drivers/ata/ahci.ko`).
    pub path: String,
    /// Its `.modinfo`.
    pub info: ModInfo,
}

/// Where modules come from: a kernel tree on disk, or a fixture in tests.
pub trait ModuleSource {
    /// The path (relative to `lib/modules/<kver>/`) of the module with this canonical name.
    fn find(&self, name: &str) -> Option<String>;
    /// Whether the kernel has this module built in (so nothing needs loading).
    fn builtin(&self, name: &str) -> bool;
    /// The `.modinfo` of the module at `path`.
    fn info(&self, path: &str) -> Result<ModInfo, ModsetError>;
    /// Canonical names of the modules whose name contains `fragment`, sorted: candidates for a
    /// soft dependency that names an alias (`crct10dif` is provided by `crct10dif_generic`).
    fn names_containing(&self, fragment: &str) -> Vec<String>;
}

/// Errors while indexing a tree or resolving a set.
#[derive(Debug)]
pub enum ModsetError {
    /// `lib/modules/` missing, empty or holding more than one kernel release.
    Kver { dir: PathBuf, found: Vec<String> },
    /// Walking or reading the tree.
    Io { path: PathBuf, err: std::io::Error },
    /// A `.ko` whose `.modinfo` could not be read.
    Modinfo { path: String, err: modinfo::ModinfoError },
    /// A requested module (or a `depends=` of an included one) that the tree lacks.
    Missing { name: String, needed_by: Option<String> },
    /// A dependency cycle (a broken tree).
    Cycle(String),
}

impl fmt::Display for ModsetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Kver { dir, found } => {
                write!(
                    f,
                    "{}: expected exactly one kernel release directory, found {found:?}",
                    dir.display()
                )
            }
            Self::Io { path, err } => write!(f, "{}: {err}", path.display()),
            Self::Modinfo { path, err } => write!(f, "{path}: {err}"),
            Self::Missing { name, needed_by: None } => write!(f, "module {name} not found in the kernel tree"),
            Self::Missing {
                name,
                needed_by: Some(by),
            } => {
                write!(f, "module {name} (a dependency of {by}) not found in the kernel tree")
            }
            Self::Cycle(name) => write!(f, "dependency cycle through module {name}"),
        }
    }
}

impl std::error::Error for ModsetError {}

/// A `dpkg -x` of a linux-image package: `DIR/boot/vmlinuz-<kver>`, `DIR/lib/modules/<kver>/kernel/**.ko`.
#[derive(Debug)]
pub struct KernelTree {
    /// The kernel release (uname -r).
    pub kver: String,
    /// `DIR/lib/modules/<kver>`.
    pub moddir: PathBuf,
    /// `DIR/boot/vmlinuz-<kver>`.
    pub vmlinuz: PathBuf,
    /// Canonical module name to path relative to `moddir`.
    index: BTreeMap<String, String>,
    /// Canonical names listed in modules.builtin (if the package has it).
    builtin: BTreeSet<String>,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ModsetError + '_ {
    move |err| ModsetError::Io {
        path: path.to_owned(),
        err,
    }
}

/// The canonical module name of a `.ko` path: its file stem with `-` as `_`.
fn name_of_path(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    normalize(file.strip_suffix(".ko").unwrap_or(file))
}

impl KernelTree {
    /// Indexes the tree (file names only; `.modinfo` is read for the modules used).
    pub fn open(dir: &Path) -> Result<Self, ModsetError> {
        let libmod = dir.join("lib/modules");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&libmod).map_err(io_err(&libmod))? {
            let entry = entry.map_err(io_err(&libmod))?;
            if entry.path().join("kernel").is_dir() {
                found.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        found.sort();
        if found.len() != 1 {
            return Err(ModsetError::Kver { dir: libmod, found });
        }
        let kver = found.remove(0);
        let moddir = libmod.join(&kver);
        let mut index = BTreeMap::new();
        let mut stack = vec![moddir.join("kernel")];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).map_err(io_err(&d))? {
                let entry = entry.map_err(io_err(&d))?;
                let path = entry.path();
                let ft = entry.file_type().map_err(io_err(&path))?;
                if ft.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "ko") {
                    let rel = path
                        .strip_prefix(&moddir)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .into_owned();
                    index.insert(name_of_path(&rel), rel);
                }
            }
        }
        let builtin_file = moddir.join("modules.builtin");
        let builtin = match std::fs::read_to_string(&builtin_file) {
            Ok(text) => text.lines().filter(|l| !l.is_empty()).map(name_of_path).collect(),
            Err(_) => BTreeSet::new(),
        };
        let vmlinuz = dir.join("boot").join(format!("vmlinuz-{kver}"));
        Ok(Self {
            kver,
            moddir,
            vmlinuz,
            index,
            builtin,
        })
    }

    /// How many `.ko` files the tree holds.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the tree holds no modules.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

impl ModuleSource for KernelTree {
    fn find(&self, name: &str) -> Option<String> {
        self.index.get(&normalize(name)).cloned()
    }
    fn builtin(&self, name: &str) -> bool {
        self.builtin.contains(&normalize(name))
    }
    fn info(&self, path: &str) -> Result<ModInfo, ModsetError> {
        let full = self.moddir.join(path);
        let bytes = std::fs::read(&full).map_err(io_err(&full))?;
        modinfo::read_modinfo(&bytes).map_err(|err| ModsetError::Modinfo {
            path: path.to_owned(),
            err,
        })
    }
    fn names_containing(&self, fragment: &str) -> Vec<String> {
        let fragment = normalize(fragment);
        self.index.keys().filter(|n| n.contains(&fragment)).cloned().collect()
    }
}

/// A closed module set with its tables.
#[derive(Debug, Clone, Default)]
pub struct ModSet {
    /// Canonical name to module.
    pub modules: BTreeMap<String, Module>,
    /// Resolved soft dependencies: name to (pre, post) canonical module names, all in the set.
    pub softdeps: BTreeMap<String, (Vec<String>, Vec<String>)>,
    /// Requested names the kernel has built in (nothing to load).
    pub builtin: Vec<String>,
    /// Soft dependencies that name neither a module in the tree nor an alias in the set (dropped).
    pub unresolved_softdeps: Vec<String>,
}

impl ModSet {
    /// The closure of `requested` over `depends=` and the soft dependencies that exist: a soft
    /// dependency names a module in the source, or an alias (glob) of a module already in the set.
    pub fn resolve(source: &dyn ModuleSource, requested: &[&str]) -> Result<Self, ModsetError> {
        let mut set = ModSet::default();
        let mut queue: Vec<(String, Option<String>)> = requested.iter().map(|n| (normalize(n), None)).collect();
        loop {
            while let Some((name, needed_by)) = queue.pop() {
                if set.modules.contains_key(&name) {
                    continue;
                }
                let Some(path) = source.find(&name) else {
                    if source.builtin(&name) {
                        set.builtin.push(name);
                        continue;
                    }
                    return Err(ModsetError::Missing { name, needed_by });
                };
                let info = source.info(&path)?;
                let name = info.name.clone().unwrap_or(name);
                for dep in &info.depends {
                    queue.push((dep.clone(), Some(name.clone())));
                }
                set.modules.insert(name.clone(), Module { name, path, info });
            }
            // Soft dependencies, resolved against the set as it stands; new modules restart the loop.
            let mut softdeps = BTreeMap::new();
            let mut unresolved = BTreeSet::new();
            for m in set.modules.values() {
                let mut resolve_all = |words: &[String]| -> Vec<String> {
                    let mut out = Vec::new();
                    for w in words {
                        match set.resolve_soft(source, w) {
                            Some(n) => {
                                if !out.contains(&n) && n != m.name {
                                    out.push(n.clone());
                                }
                                if !set.modules.contains_key(&n) {
                                    queue.push((n, Some(m.name.clone())));
                                }
                            }
                            None => {
                                unresolved.insert(format!("{} ({})", w, m.name));
                            }
                        }
                    }
                    out
                };
                let extra = EXTRA_SOFTDEPS.iter().filter(|(of, _)| *of == m.name);
                let words: Vec<String> = m
                    .info
                    .softdep_pre
                    .iter()
                    .cloned()
                    .chain(extra.map(|(_, pre)| (*pre).to_string()))
                    .collect();
                let pre = resolve_all(&words);
                let post = resolve_all(&m.info.softdep_post);
                if !pre.is_empty() || !post.is_empty() {
                    softdeps.insert(m.name.clone(), (pre, post));
                }
            }
            if queue.is_empty() {
                set.softdeps = softdeps;
                set.unresolved_softdeps = unresolved.into_iter().collect();
                set.builtin.sort();
                set.builtin.dedup();
                return Ok(set);
            }
        }
    }

    /// A soft dependency word as a canonical module name: a module of the source, else the first
    /// module in the set (by name) with a matching alias, else the first module of the source whose
    /// name contains the word and whose aliases match it.
    fn resolve_soft(&self, source: &dyn ModuleSource, word: &str) -> Option<String> {
        let name = normalize(word);
        if self.modules.contains_key(&name) || source.find(&name).is_some() {
            return Some(name);
        }
        let matches = |info: &ModInfo| info.aliases.iter().any(|a| fnmatch(a, word));
        if let Some(m) = self.modules.values().find(|m| matches(&m.info)) {
            return Some(m.name.clone());
        }
        source.names_containing(&name).into_iter().find(|n| {
            source
                .find(n)
                .and_then(|path| source.info(&path).ok())
                .is_some_and(|info| matches(&info))
        })
    }

    /// The full transitive dependency list of `name` in depmod order: every module appears before
    /// its own dependencies, so loading from the END backwards, then `name`, always works.
    pub fn deps_of(&self, name: &str) -> Result<Vec<String>, ModsetError> {
        // Post-order DFS gives dependencies before dependents; reversed, depmod's order.
        fn visit(
            set: &ModSet,
            name: &str,
            done: &mut BTreeSet<String>,
            active: &mut BTreeSet<String>,
            out: &mut Vec<String>,
        ) -> Result<(), ModsetError> {
            if done.contains(name) {
                return Ok(());
            }
            if !active.insert(name.to_owned()) {
                return Err(ModsetError::Cycle(name.to_owned()));
            }
            if let Some(m) = set.modules.get(name) {
                for d in &m.info.depends {
                    visit(set, d, done, active, out)?;
                }
            }
            active.remove(name);
            done.insert(name.to_owned());
            out.push(name.to_owned());
            Ok(())
        }
        let (mut done, mut active, mut out) = (BTreeSet::new(), BTreeSet::new(), Vec::new());
        visit(self, name, &mut done, &mut active, &mut out)?;
        out.pop(); // `name` itself comes last in post-order.
        out.retain(|d| self.modules.contains_key(d)); // built-in dependencies need no loading
        out.reverse();
        Ok(out)
    }

    /// modules.dep: `<path>: <dep path> <dep path> ...`, one line per module, sorted by path.
    pub fn modules_dep(&self) -> Result<String, ModsetError> {
        let mut lines = Vec::new();
        for m in self.modules.values() {
            let deps: Vec<&str> = self
                .deps_of(&m.name)?
                .iter()
                .map(|d| self.modules[d].path.as_str())
                .collect();
            lines.push(if deps.is_empty() {
                format!("{}:\n", m.path)
            } else {
                format!("{}: {}\n", m.path, deps.join(" "))
            });
        }
        lines.sort();
        Ok(lines.concat())
    }

    /// modules.alias: `alias <glob> <module_name>`, by module name, aliases in modinfo order.
    pub fn modules_alias(&self) -> String {
        let mut out = String::new();
        for m in self.modules.values() {
            for a in &m.info.aliases {
                out.push_str(&format!("alias {a} {}\n", m.name));
            }
        }
        out
    }

    /// modules.softdep: `softdep <module_name> pre: <m> ... post: <m> ...` for each module with
    /// resolved soft dependencies; an empty `pre:` or `post:` part is left out.
    pub fn modules_softdep(&self) -> String {
        let mut out = String::new();
        for (name, (pre, post)) in &self.softdeps {
            out.push_str("softdep ");
            out.push_str(name);
            if !pre.is_empty() {
                out.push_str(" pre: ");
                out.push_str(&pre.join(" "));
            }
            if !post.is_empty() {
                out.push_str(" post: ");
                out.push_str(&post.join(" "));
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An in-memory module source.
    pub(crate) struct Fixture(pub BTreeMap<String, (String, ModInfo)>, pub Vec<String>);

    impl Fixture {
        /// `(path, depends, aliases, softdep)` per module; the name comes from the path.
        pub(crate) fn new(mods: &[(&str, &[&str], &[&str], &str)]) -> Self {
            let mut map = BTreeMap::new();
            for (path, deps, aliases, soft) in mods {
                let mut info = ModInfo {
                    name: Some(name_of_path(path)),
                    depends: deps.iter().map(|d| normalize(d)).collect(),
                    aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
                    ..ModInfo::default()
                };
                modinfo::parse_softdep(soft, &mut info.softdep_pre, &mut info.softdep_post);
                map.insert(name_of_path(path), ((*path).to_owned(), info));
            }
            Self(map, Vec::new())
        }
    }

    impl ModuleSource for Fixture {
        fn find(&self, name: &str) -> Option<String> {
            self.0.get(&normalize(name)).map(|(p, _)| p.clone())
        }
        fn builtin(&self, name: &str) -> bool {
            self.1.iter().any(|b| *b == normalize(name))
        }
        fn info(&self, path: &str) -> Result<ModInfo, ModsetError> {
            Ok(self.0.values().find(|(p, _)| p == path).unwrap().1.clone())
        }
        fn names_containing(&self, fragment: &str) -> Vec<String> {
            self.0
                .keys()
                .filter(|n| n.contains(&normalize(fragment)))
                .cloned()
                .collect()
        }
    }

    /// ahci -> libahci -> libata -> scsi_mod -> scsi_common; raid456 with a softdep on an alias.
    pub(crate) fn fixture() -> Fixture {
        Fixture::new(&[
            (
                "kernel/drivers/ata/ahci.ko",
                &["libahci", "libata"],
                &["pci:v*d*sv*sd*bc01sc06i01*"],
                "",
            ),
            ("kernel/drivers/ata/libahci.ko", &["libata"], &[], ""),
            ("kernel/drivers/ata/libata.ko", &["scsi_mod"], &[], ""),
            ("kernel/drivers/scsi/scsi_mod.ko", &["scsi_common"], &[], ""),
            ("kernel/drivers/scsi/scsi_common.ko", &[], &[], ""),
            (
                "kernel/drivers/md/raid456.ko",
                &["md-mod", "libcrc32c"],
                &["md-level-5"],
                "",
            ),
            ("kernel/drivers/md/md-mod.ko", &[], &["block-major-9-*"], ""),
            ("kernel/lib/libcrc32c.ko", &[], &[], "pre: crc32c"),
            ("kernel/crypto/crc32c_generic.ko", &[], &["crc32c", "crypto-crc32c"], ""),
            ("kernel/crypto/xts.ko", &[], &["crypto-xts"], "pre: ecb"),
            ("kernel/crypto/ecb.ko", &[], &["crypto-ecb"], ""),
            ("kernel/crypto/nowhere.ko", &[], &[], "pre: no-such-thing post: ecb"),
            ("kernel/drivers/unused/unused.ko", &[], &["pci:v00001234*"], ""),
            ("kernel/lib/crc-t10dif.ko", &[], &[], "pre: crct10dif"),
            ("kernel/crypto/crct10dif_common.ko", &[], &[], ""),
            (
                "kernel/crypto/crct10dif_generic.ko",
                &["crct10dif_common"],
                &["crypto-crct10dif", "crct10dif"],
                "",
            ),
        ])
    }

    #[test]
    fn closure_follows_depends_and_softdeps() {
        let src = fixture();
        let set = ModSet::resolve(&src, &["ahci", "raid456", "xts", "crc32c_generic"]).unwrap();
        let names: Vec<&str> = set.modules.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "ahci",
                "crc32c_generic",
                "ecb",
                "libahci",
                "libata",
                "libcrc32c",
                "md_mod",
                "raid456",
                "scsi_common",
                "scsi_mod",
                "xts"
            ]
        );
        // libcrc32c's "pre: crc32c" is an alias of crc32c_generic; xts's "pre: ecb" a module.
        assert_eq!(set.softdeps["libcrc32c"], (vec!["crc32c_generic".to_owned()], vec![]));
        assert_eq!(set.softdeps["xts"], (vec!["ecb".to_owned()], vec![]));
        assert_eq!(
            set.modules_softdep(),
            "softdep libcrc32c pre: crc32c_generic\nsoftdep xts pre: ecb\n"
        );
    }

    #[test]
    fn added_modules_come_after_the_set_with_their_dependencies() {
        let s = |v: &[&str]| v.iter().map(|m| (*m).to_owned()).collect::<Vec<_>>();
        // Without --modules: the default set, then what --add-module names, each once.
        let r = requested(None, &s(&["scsi_debug", "nvme", "scsi-debug", ""]));
        assert_eq!(r.len(), DEFAULT_MODULES.len() + 1, "{r:?}");
        assert_eq!(&r[..DEFAULT_MODULES.len()], DEFAULT_MODULES);
        assert_eq!(r.last().map(String::as_str), Some("scsi_debug"));
        // With --modules: that set instead, plus the added ones.
        assert_eq!(
            requested(Some(&s(&["ahci", ""])), &s(&["xts", "ahci"])),
            ["ahci", "xts"]
        );
        // An added module's dependencies and soft dependencies resolve as the others' do.
        let want = requested(Some(&s(&["ahci"])), &s(&["xts"]));
        let want: Vec<&str> = want.iter().map(String::as_str).collect();
        let set = ModSet::resolve(&fixture(), &want).unwrap();
        assert!(
            set.modules.contains_key("xts") && set.modules.contains_key("ecb"),
            "{:?}",
            set.modules.keys()
        );
        assert!(set.modules.contains_key("scsi_common"));
        // One the tree lacks is an error naming it.
        let bad = requested(Some(&s(&["ahci"])), &s(&["no_such"]));
        let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
        match ModSet::resolve(&fixture(), &bad) {
            Err(ModsetError::Missing { name, needed_by: None }) => assert_eq!(name, "no_such"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn softdep_modules_are_pulled_in() {
        let src = fixture();
        // ecb is not requested: xts's softdep brings it.
        let set = ModSet::resolve(&src, &["xts"]).unwrap();
        assert!(set.modules.contains_key("ecb"));
        // An unresolvable softdep is dropped and reported; a post: one still resolves.
        let set = ModSet::resolve(&src, &["nowhere"]).unwrap();
        assert_eq!(set.softdeps["nowhere"], (vec![], vec!["ecb".to_owned()]));
        assert_eq!(set.unresolved_softdeps, ["no-such-thing (nowhere)"]);
        assert_eq!(set.modules_softdep(), "softdep nowhere post: ecb\n");
    }

    #[test]
    fn softdep_alias_outside_the_set() {
        // crc_t10dif's "pre: crct10dif" is an alias of crct10dif_generic, which nothing requested.
        let set = ModSet::resolve(&fixture(), &["crc_t10dif"]).unwrap();
        assert_eq!(
            set.softdeps["crc_t10dif"],
            (vec!["crct10dif_generic".to_owned()], vec![])
        );
        let names: Vec<&str> = set.modules.keys().map(String::as_str).collect();
        assert_eq!(names, ["crc_t10dif", "crct10dif_common", "crct10dif_generic"]);
        assert!(set.unresolved_softdeps.is_empty());
    }

    #[test]
    fn dep_order_loads_from_the_end() {
        let src = fixture();
        let set = ModSet::resolve(&src, &["ahci", "raid456"]).unwrap();
        assert_eq!(
            set.deps_of("ahci").unwrap(),
            ["libahci", "libata", "scsi_mod", "scsi_common"]
        );
        // Property: for every module, loading its list from the end backwards has each module's
        // dependencies loaded before it.
        for m in set.modules.keys() {
            let deps = set.deps_of(m).unwrap();
            let mut loaded = BTreeSet::new();
            for d in deps.iter().rev().chain(std::iter::once(m)) {
                for dd in &set.modules[d].info.depends {
                    assert!(loaded.contains(dd), "{m}: {d} loaded before its dependency {dd}");
                }
                loaded.insert(d.clone());
            }
        }
        let dep = set.modules_dep().unwrap();
        assert!(dep.contains(
            "kernel/drivers/ata/ahci.ko: kernel/drivers/ata/libahci.ko kernel/drivers/ata/libata.ko \
kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko\n"
        ));
        assert!(dep.contains("kernel/drivers/scsi/scsi_common.ko:\n"));
        assert!(dep.contains("kernel/drivers/md/raid456.ko: kernel/lib/libcrc32c.ko kernel/drivers/md/md-mod.ko\n"));
        assert_eq!(dep.lines().count(), set.modules.len());
    }

    #[test]
    fn alias_table() {
        let set = ModSet::resolve(&fixture(), &["ahci", "md_mod"]).unwrap();
        assert_eq!(
            set.modules_alias(),
            "alias pci:v*d*sv*sd*bc01sc06i01* ahci\nalias block-major-9-* md_mod\n"
        );
    }

    #[test]
    fn missing_and_builtin_and_cycles() {
        let mut src = fixture();
        match ModSet::resolve(&src, &["nope"]) {
            Err(ModsetError::Missing { name, needed_by: None }) => assert_eq!(name, "nope"),
            other => panic!("{other:?}"),
        }
        src.1.push("scsi_common".to_owned());
        src.0.remove("scsi_common");
        let set = ModSet::resolve(&src, &["ahci"]).unwrap();
        assert_eq!(set.builtin, ["scsi_common"]);
        assert_eq!(set.deps_of("ahci").unwrap(), ["libahci", "libata", "scsi_mod"]);
        src.1.clear();
        match ModSet::resolve(&src, &["ahci"]) {
            Err(ModsetError::Missing {
                name,
                needed_by: Some(by),
            }) => assert_eq!((name.as_str(), by.as_str()), ("scsi_common", "scsi_mod")),
            other => panic!("{other:?}"),
        }
        let cyc = Fixture::new(&[("a.ko", &["b"], &[], ""), ("b.ko", &["a"], &[], "")]);
        let set = ModSet::resolve(&cyc, &["a"]).unwrap();
        assert!(matches!(set.deps_of("a"), Err(ModsetError::Cycle(_))));
    }

    #[test]
    fn real_tree_default_set_if_present() {
        let Some(dir) = crate::modinfo::tests::real_tree() else {
            eprintln!("skipped: no kernel tree in out/kernel or /work/kernel (run `make image`)");
            return;
        };
        let tree = KernelTree::open(&dir).unwrap();
        let set = ModSet::resolve(&tree, DEFAULT_MODULES).unwrap();
        for m in ["ahci", "libata", "libcrc32c", "crc32c_generic", "nls_iso8859_1", "ecb"] {
            assert!(set.modules.contains_key(m), "{m} missing");
        }
        // The servers' SAS/SCSI HBAs and RAID controllers and what they need (QEMU's megasas-gen2,
        // mptsas1068, lsi53c895a, virtio-scsi-pci and usb-uas bind these).
        for m in [
            "megaraid_sas",
            "mptsas",
            "mptscsih",
            "mptbase",
            "scsi_transport_sas",
            "sym53c8xx",
            "scsi_transport_spi",
            "virtio_scsi",
            "uas",
            "usb_storage",
            "sd_mod",
        ] {
            assert!(set.modules.contains_key(m), "{m} missing from the default set");
        }
        // And their aliases match the modaliases the devices show (QEMU's PCI IDs: megasas-gen2
        // 1000:005b, mptsas1068 1000:0054, lsi53c895a 1000:0012; virtio-scsi's virtio device
        // id 8; usb-uas's interface 08/06/62), so coldplug loads them.
        for (modalias, module) in [
            ("pci:v00001000d0000005Bsv00001AF4sd00001100bc01sc04i00", "megaraid_sas"),
            ("pci:v00001000d00000054sv00000000sd00000000bc01sc00i00", "mptsas"),
            ("pci:v00001000d00000012sv00000000sd00000000bc01sc00i00", "sym53c8xx"),
            ("virtio:d00000008v00001AF4", "virtio_scsi"),
            ("usb:v46F4p0003d0000dc00dsc00dp00ic08isc06ip62in00", "uas"),
        ] {
            let m = &set.modules[module];
            assert!(
                m.info.aliases.iter().any(|a| fnmatch(a, modalias)),
                "{module}: no alias matches {modalias}"
            );
        }
        // The network boot's NICs, and what they need.
        for m in [
            "virtio_net",
            "net_failover",
            "e1000",
            "e1000e",
            "igb",
            "ixgbe",
            "i40e",
            "ice",
            "bnxt_en",
            "mlx5_core",
            "tg3",
            "r8169",
            "realtek",
        ] {
            assert!(set.modules.contains_key(m), "{m} missing from the default set");
        }
        // Their aliases match QEMU's NICs (virtio-net-pci's virtio device id 1, e1000's 8086:100e,
        // e1000e's 8086:10d3) and a Realtek RTL8168/8111 (10ec:8168, which QEMU lacks).
        for (modalias, module) in [
            ("virtio:d00000001v00001AF4", "virtio_net"),
            ("pci:v00008086d0000100Esv00001AF4sd00001100bc02sc00i00", "e1000"),
            ("pci:v00008086d000010D3sv00008086sd00000000bc02sc00i00", "e1000e"),
            ("pci:v000010ECd00008168sv00001043sd00008432bc02sc00i00", "r8169"),
        ] {
            let m = &set.modules[module];
            assert!(
                m.info.aliases.iter().any(|a| fnmatch(a, modalias)),
                "{module}: no alias matches {modalias}"
            );
        }
        assert_eq!(set.softdeps["xts"].0, ["ecb"]);
        // scsi_debug (the e2e image's --add-module: a host-managed SCSI disk in z2) is not in the
        // default set; added, it comes with what it needs.
        assert!(!set.modules.contains_key("scsi_debug"));
        let added = requested(None, &["scsi_debug".to_owned()]);
        let added: Vec<&str> = added.iter().map(String::as_str).collect();
        let with = ModSet::resolve(&tree, &added).unwrap();
        for m in ["scsi_debug", "crc_t10dif", "scsi_mod", "scsi_common"] {
            assert!(with.modules.contains_key(m), "{m} missing with scsi_debug added");
        }
        assert!(with.deps_of("scsi_debug").unwrap().contains(&"crc_t10dif".to_owned()));
        // crc64_rocksoft's provider loads first: no module helper run at its init (EXTRA_SOFTDEPS).
        assert!(
            set.softdeps["crc64_rocksoft"]
                .0
                .contains(&"crc64_rocksoft_generic".to_string()),
            "{:?}",
            set.softdeps
        );
        assert!(
            set.softdeps["libcrc32c"].0.iter().any(|n| n.starts_with("crc32c")),
            "{:?}",
            set.softdeps
        );
    }
}
