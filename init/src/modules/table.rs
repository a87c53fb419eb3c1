//! The module tables: modules.dep, modules.alias and modules.softdep parsed
//! into a [`ModuleDb`], the alias index that matches a modalias against its
//! bus's globs only, and the load plan of one module (its dependencies in
//! order).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use bench_core::vocab::glob::fnmatch;

use super::{canonical, name_of_path, ModuleError};

/// One line of modules.dep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepEntry {
    /// The module's path relative to the module directory.
    pub path: String,
    /// Names of its dependencies, as listed (transitive; load from the end).
    pub deps: Vec<String>,
}

/// Soft dependencies of one module (names or aliases, as written).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SoftDep {
    /// Load these first.
    pub pre: Vec<String>,
    /// Load these after.
    pub post: Vec<String>,
}

/// The three tables of one module directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleDb {
    /// The module directory (`/lib/modules/<kver>`); paths are relative to it.
    pub dir: PathBuf,
    /// By canonical name.
    pub deps: HashMap<String, DepEntry>,
    /// (glob, canonical module name), in file order.
    pub aliases: Vec<(String, String)>,
    /// By canonical name.
    pub softdeps: HashMap<String, SoftDep>,
    /// Which aliases a text can match, by the text's bus ([`AliasIndex`]).
    index: AliasIndex,
}

/// The aliases by the part of a glob before its first `:` (a modalias's
/// bus: `pci`, `usb`, ...), so a device's modalias is matched against its
/// bus's globs only (a tenth of the table, and the table's matching was
/// most of coldplug's first scan under TCG). A text can only match a glob
/// of its own key, or one whose key holds a wildcard.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct AliasIndex {
    /// Indexes into `aliases` by key (None: a glob without `:`), in file order.
    by_key: HashMap<Option<String>, Vec<usize>>,
    /// Globs whose key holds a wildcard: candidates for every text.
    wild: Vec<usize>,
}

impl AliasIndex {
    /// The part of `s` before its first `:`, or None without one.
    fn key(s: &str) -> Option<&str> {
        s.split_once(':').map(|(k, _)| k)
    }

    fn new(aliases: &[(String, String)]) -> AliasIndex {
        let mut index = AliasIndex::default();
        for (i, (glob, _)) in aliases.iter().enumerate() {
            let key = Self::key(glob);
            if key.unwrap_or(glob).contains(['*', '?', '[']) {
                index.wild.push(i);
            } else {
                index.by_key.entry(key.map(str::to_string)).or_default().push(i);
            }
        }
        index
    }

    /// The indexes of the globs `text` may match, in file order.
    fn candidates(&self, text: &str) -> Vec<usize> {
        let own = self
            .by_key
            .get(&Self::key(text).map(str::to_string))
            .map_or(&[][..], Vec::as_slice);
        let mut out: Vec<usize> = own.iter().chain(&self.wild).copied().collect();
        out.sort_unstable();
        out
    }
}

/// Parse modules.dep text: `path.ko: dep.ko dep.ko ...` per line.
pub fn parse_dep(text: &str) -> HashMap<String, DepEntry> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((path, deps)) = line.split_once(':') else {
            continue;
        };
        let path = path.trim();
        out.insert(
            name_of_path(path),
            DepEntry {
                path: path.to_string(),
                deps: deps.split_whitespace().map(name_of_path).collect(),
            },
        );
    }
    out
}

/// Parse modules.alias text: `alias GLOB MODULE` per line.
pub fn parse_alias(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let mut w = line.split_whitespace();
            match (w.next(), w.next(), w.next()) {
                (Some("alias"), Some(glob), Some(module)) => Some((glob.to_string(), canonical(module))),
                _ => None,
            }
        })
        .collect()
}

/// Parse modules.softdep text: `softdep MODULE pre: A B post: C` per line
/// (several lines for one module add up).
pub fn parse_softdep(text: &str) -> HashMap<String, SoftDep> {
    let mut out: HashMap<String, SoftDep> = HashMap::new();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        if w.next() != Some("softdep") {
            continue;
        }
        let Some(module) = w.next() else { continue };
        let entry = out.entry(canonical(module)).or_default();
        let mut post = None;
        for word in w {
            match word {
                "pre:" => post = Some(false),
                "post:" => post = Some(true),
                m => match post {
                    Some(false) => entry.pre.push(m.to_string()),
                    Some(true) => entry.post.push(m.to_string()),
                    None => {}
                },
            }
        }
    }
    out
}

/// One module to load, and whether a failure matters to the one asked for
/// (soft dependencies are best effort).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanItem {
    /// Canonical module name.
    pub name: String,
    /// False for soft dependencies and their own dependencies.
    pub required: bool,
}

impl ModuleDb {
    /// Read the three tables in `dir`. modules.dep must exist; a missing
    /// modules.alias or modules.softdep reads as empty.
    pub fn load(dir: &Path) -> Result<ModuleDb, ModuleError> {
        let read = |name: &str, required: bool| -> Result<String, ModuleError> {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(s) => Ok(s),
                Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
                Err(e) => Err(ModuleError::Tables {
                    path,
                    errno: e.raw_os_error().unwrap_or(libc::EIO),
                }),
            }
        };
        Ok(ModuleDb::from_text(
            dir,
            &read("modules.dep", true)?,
            &read("modules.alias", false)?,
            &read("modules.softdep", false)?,
        ))
    }

    /// Build from the three tables' text.
    pub fn from_text(dir: &Path, dep: &str, alias: &str, softdep: &str) -> ModuleDb {
        let aliases = parse_alias(alias);
        ModuleDb {
            dir: dir.to_path_buf(),
            deps: parse_dep(dep),
            index: AliasIndex::new(&aliases),
            aliases,
            softdeps: parse_softdep(softdep),
        }
    }

    /// The modules a name stands for: the module of that name if there is
    /// one, else every module with a matching alias (file order, no repeats).
    pub fn resolve(&self, name_or_alias: &str) -> Vec<String> {
        let name = canonical(name_or_alias);
        if self.deps.contains_key(&name) {
            return vec![name];
        }
        self.match_alias(name_or_alias)
    }

    /// Every module (known to modules.dep) with an alias glob matching `text`.
    pub fn match_alias(&self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for i in self.index.candidates(text) {
            let (glob, module) = &self.aliases[i];
            if !out.contains(module) && self.deps.contains_key(module) && fnmatch(glob, text) {
                out.push(module.clone());
            }
        }
        out
    }

    /// The load order for module `name` (canonical), or Unknown.
    pub fn plan(&self, name: &str) -> Result<Vec<PlanItem>, ModuleError> {
        let mut out = Vec::new();
        let mut visiting = HashSet::new();
        self.plan_into(&canonical(name), true, &mut out, &mut visiting)?;
        Ok(out)
    }

    fn plan_into(
        &self,
        name: &str,
        required: bool,
        out: &mut Vec<PlanItem>,
        visiting: &mut HashSet<String>,
    ) -> Result<(), ModuleError> {
        if let Some(item) = out.iter_mut().find(|i| i.name == name) {
            item.required |= required;
            return Ok(());
        }
        if !visiting.insert(name.to_string()) {
            return Ok(()); // a cycle through soft dependencies
        }
        let Some(entry) = self.deps.get(name) else {
            return Err(ModuleError::Unknown { name: name.to_string() });
        };
        let soft = self.softdeps.get(name);
        for pre in soft.map(|s| s.pre.as_slice()).unwrap_or_default() {
            for m in self.resolve(pre) {
                let _ = self.plan_into(&m, false, out, visiting);
            }
        }
        for dep in entry.deps.iter().rev() {
            self.plan_into(dep, required, out, visiting)?;
        }
        out.push(PlanItem {
            name: name.to_string(),
            required,
        });
        for post in soft.map(|s| s.post.as_slice()).unwrap_or_default() {
            for m in self.resolve(post) {
                let _ = self.plan_into(&m, false, out, visiting);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::testkit::*;
    use crate::modules::*;

    #[test]
    fn parses_tables() {
        let db = db();
        let ahci = &db.deps["ahci"];
        assert_eq!(ahci.path, "kernel/drivers/ata/ahci.ko");
        assert_eq!(ahci.deps, vec!["libahci", "libata", "scsi_mod", "scsi_common"]);
        assert!(db.deps["scsi_common"].deps.is_empty());
        assert_eq!(db.deps["crc32c_intel"].path, "kernel/arch/x86/crypto/crc32c-intel.ko");
        assert_eq!(db.deps["usb_storage"].path, "kernel/drivers/usb/storage/usb-storage.ko");
        assert_eq!(db.aliases.len(), 13);
        assert_eq!(
            db.aliases[0],
            ("pci:v*d*sv*sd*bc01sc06i01*".to_string(), "ahci".to_string())
        );
        assert_eq!(db.softdeps["libcrc32c"].pre, vec!["crc32c"]);
        assert_eq!(db.softdeps["xts"].pre, vec!["ecb"]);
        assert!(db.softdeps["xts"].post.is_empty());
        let s = parse_softdep("softdep a pre: b c post: d\nsoftdep a post: e\nnonsense x\n");
        assert_eq!(s["a"].pre, vec!["b", "c"]);
        assert_eq!(s["a"].post, vec!["d", "e"]);
        assert_eq!(name_of_path("kernel/x/nls-cp437.ko.xz"), "nls_cp437");
    }

    #[test]
    fn resolve_names_and_aliases() {
        let db = db();
        let cases: &[(&str, &[&str])] = &[
            ("ahci", &["ahci"]),
            ("usb-storage", &["usb_storage"]),
            ("md-level-5", &["raid456"]),
            ("crc32c", &["crc32c_generic", "crc32c_intel"]),
            ("acpi:NOTHERE:", &[]),
            ("nope", &[]),
        ];
        for (name, want) in cases {
            assert_eq!(db.resolve(name), *want, "{name}");
        }
    }

    /// The bus index finds what a match against every glob finds, in the same order.
    #[test]
    fn the_alias_index_matches_as_every_glob_does() {
        let alias = "\
    alias pci:v00008086d00002922sv*sd*bc*sc*i* ahci
    alias pci:v*d*sv*sd*bc01sc06i01* ahci_generic
    alias *:foo wild_any
    alias p?i:v* wild_bus
    alias usb:v*p*d*dc*dsc*dp*ic08isc06ip50in* usb_storage
    alias crc32c crc32c_generic
    alias block-major-8-* sd_mod
    alias pci:v*d*sv*sd*bc01sc06i01* ahci
    ";
        let names = [
            "ahci",
            "ahci_generic",
            "wild_any",
            "wild_bus",
            "usb_storage",
            "crc32c_generic",
            "sd_mod",
        ];
        let dep: String = names.iter().map(|n| format!("kernel/{n}.ko:\n")).collect();
        let db = ModuleDb::from_text(Path::new("/m"), &dep, alias, "");
        let every = |text: &str| -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for (g, m) in &db.aliases {
                if fnmatch(g, text) && !out.contains(m) {
                    out.push(m.clone());
                }
            }
            out
        };
        let cases: &[(&str, &[&str])] = &[
            (
                "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
                &["ahci", "ahci_generic", "wild_bus"],
            ),
            ("usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00", &["usb_storage"]),
            ("virtio:foo", &["wild_any"]),
            ("crc32c", &["crc32c_generic"]),
            ("block-major-8-3", &["sd_mod"]),
            ("acpi:PNP0A03:", &[]),
            ("", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(db.match_alias(text), *want, "{text}");
            assert_eq!(db.match_alias(text), every(text), "{text}");
        }
    }

    fn names(plan: &[PlanItem]) -> Vec<(&str, bool)> {
        plan.iter().map(|i| (i.name.as_str(), i.required)).collect()
    }

    #[test]
    fn plan_orders_deps_from_the_end_then_the_module() {
        let db = db();
        let cases: &[(&str, &[(&str, bool)])] = &[
            ("scsi_common", &[("scsi_common", true)]),
            (
                "ahci",
                &[
                    ("scsi_common", true),
                    ("scsi_mod", true),
                    ("libata", true),
                    ("libahci", true),
                    ("ahci", true),
                ],
            ),
            // softdep pre first (both modules the alias stands for, best effort), then deps, then the module
            (
                "raid456",
                &[
                    ("crc32c_generic", false),
                    ("crc32c_intel", false),
                    ("libcrc32c", true),
                    ("raid456", true),
                ],
            ),
            ("xts", &[("ecb", false), ("xts", true)]),
            ("xhci-pci", &[("xhci_hcd", true), ("xhci_pci", true)]),
        ];
        for (m, want) in cases {
            let plan = db.plan(m).unwrap();
            assert_eq!(names(&plan), *want, "{m}");
        }
        assert_eq!(db.plan("nope"), Err(ModuleError::Unknown { name: "nope".into() }));
    }
}
