//! Kernel modules: the tables the image builder wrote (contract A:
//! `/lib/modules/<kver>/modules.{dep,alias,softdep}`), coldplug (match every
//! `/sys/devices/**/modalias` against the alias globs, load with
//! dependencies, rescan until nothing new loads), and the kernel's modprobe
//! helper (`/sbin/modprobe -q -- NAME`, a symlink to this binary).
//!
//! Loading order for one module: its soft `pre:` dependencies (each with its
//! own dependencies), its hard dependencies from the END of its modules.dep
//! list backwards (the list is transitive, the last entry has no
//! dependencies of its own), the module itself, then its `post:` soft
//! dependencies. Module names compare with `-` and `_` equal.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bench_core::glob::fnmatch;

use crate::sys::kmod;

/// Set in PID 1 before the worker is forked (and so in the worker too):
/// this is the booted run, not the live command.
static BOOTED: AtomicBool = AtomicBool::new(false);

/// Mark this process (PID 1, before it forks the worker) as the booted run.
pub fn set_booted() {
    BOOTED.store(true, Ordering::SeqCst);
}

/// True in PID 1 and its worker: booted from the image, so modules come
/// from the initramfs (a live system loads them on demand).
pub fn booted() -> bool {
    BOOTED.load(Ordering::SeqCst)
}

/// Where the module tree of the running kernel lives.
pub const MODULES_ROOT: &str = "/lib/modules";

/// What went wrong with one module or with the tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModuleError {
    /// A table file could not be read (`errno`).
    Tables { path: PathBuf, errno: i32 },
    /// No module and no alias of that name in the tables.
    Unknown { name: String },
    /// The `.ko` file could not be opened.
    Open { name: String, path: PathBuf, errno: i32 },
    /// `finit_module` refused it (EEXIST is not an error and never appears here).
    Load { name: String, path: PathBuf, errno: i32 },
}

impl fmt::Display for ModuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = |e: i32| std::io::Error::from_raw_os_error(e);
        match self {
            ModuleError::Tables { path, errno } => {
                write!(f, "module tables: cannot read {}: {}", path.display(), os(*errno))
            }
            ModuleError::Unknown { name } => write!(f, "module {name}: no such module or alias"),
            ModuleError::Open { name, path, errno } => {
                write!(f, "module {name}: cannot open {}: {}", path.display(), os(*errno))
            }
            ModuleError::Load { name, path, errno } => {
                write!(f, "module {name}: finit_module {}: {}", path.display(), os(*errno))
            }
        }
    }
}

impl std::error::Error for ModuleError {}

impl ModuleError {
    /// The module (or name asked for) the error is about; None for the tables.
    pub fn module(&self) -> Option<&str> {
        match self {
            ModuleError::Tables { .. } => None,
            ModuleError::Unknown { name } | ModuleError::Open { name, .. } | ModuleError::Load { name, .. } => {
                Some(name)
            }
        }
    }
}

/// A module name in canonical form (`-` becomes `_`).
pub fn canonical(name: &str) -> String {
    name.replace('-', "_")
}

/// The module name of a module path: `kernel/drivers/ata/ahci.ko` -> `ahci`
/// (also for `.ko.xz`, `.ko.zst`, `.ko.gz`).
pub fn name_of_path(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.find(".ko").map_or(file, |i| &file[..i]);
    canonical(stem)
}

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

/// How modules are inserted and how to tell one is there: the kernel, or a
/// recording fake in tests.
pub trait Kernel {
    /// Is a module of this canonical name loaded (or built in with a /sys/module entry)?
    fn is_loaded(&self, name: &str) -> bool;
    /// Insert the module file at `path` with `params` (`name=value ...`, as
    /// modprobe passes them); Err(positive errno). EEXIST means it was already there.
    fn insert(&mut self, name: &str, path: &Path, params: &str) -> Result<(), ModuleError>;
    /// Another handle on the same kernel for another thread, when modules
    /// may be inserted from several threads at once; None: one at a time.
    fn fork(&self) -> Option<Box<dyn Kernel + Send>> {
        None
    }
}

impl Kernel for Box<dyn Kernel + Send> {
    fn is_loaded(&self, name: &str) -> bool {
        (**self).is_loaded(name)
    }
    fn insert(&mut self, name: &str, path: &Path, params: &str) -> Result<(), ModuleError> {
        (**self).insert(name, path, params)
    }
    fn fork(&self) -> Option<Box<dyn Kernel + Send>> {
        (**self).fork()
    }
}

/// The running kernel: `/sys/module/<name>` and `finit_module(2)`.
#[derive(Debug, Default)]
pub struct LiveKernel;

impl Kernel for LiveKernel {
    fn is_loaded(&self, name: &str) -> bool {
        Path::new("/sys/module").join(name).exists()
    }

    fn insert(&mut self, name: &str, path: &Path, params: &str) -> Result<(), ModuleError> {
        let f = File::open(path).map_err(|e| ModuleError::Open {
            name: name.to_string(),
            path: path.to_path_buf(),
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        })?;
        // Parameters come from the command line and a fixed table: no NUL inside.
        let params = std::ffi::CString::new(params).unwrap_or_default();
        match kmod::finit_module(&f, &params) {
            Ok(()) | Err(libc::EEXIST) => Ok(()),
            Err(errno) => Err(ModuleError::Load {
                name: name.to_string(),
                path: path.to_path_buf(),
                errno,
            }),
        }
    }

    /// The kernel inserts modules from several threads at once (each
    /// `finit_module` verifies its module's signature and relocates it on
    /// the calling CPU: most of a module's load time).
    fn fork(&self) -> Option<Box<dyn Kernel + Send>> {
        Some(Box::new(LiveKernel))
    }
}

/// Loads modules with their dependencies, remembering what it loaded and
/// what failed so nothing is tried twice.
#[derive(Debug)]
pub struct Loader<'a, K: Kernel> {
    db: &'a ModuleDb,
    kernel: K,
    tried: HashSet<String>,
    /// Modules this loader inserted, in order.
    pub loaded: Vec<String>,
    /// Failures, in order.
    pub errors: Vec<ModuleError>,
    /// Parameters per module, given when it is inserted ([`module_params`]).
    params: HashMap<String, String>,
}

impl<'a, K: Kernel> Loader<'a, K> {
    /// A loader over `db` inserting through `kernel`, with no module parameters.
    pub fn new(db: &'a ModuleDb, kernel: K) -> Self {
        Loader {
            db,
            kernel,
            tried: HashSet::new(),
            loaded: Vec::new(),
            errors: Vec::new(),
            params: HashMap::new(),
        }
    }

    /// The same, inserting each module with its entry of `params`.
    #[must_use]
    pub fn with_params(mut self, params: HashMap<String, String>) -> Self {
        self.params = params;
        self
    }

    /// Load `name` (a module name, or an alias standing for one or more
    /// modules) with its dependencies. Returns how many modules were newly
    /// inserted, or the first error that prevents a required module.
    pub fn load(&mut self, name_or_alias: &str) -> Result<usize, ModuleError> {
        let modules = self.db.resolve(name_or_alias);
        if modules.is_empty() {
            return Err(ModuleError::Unknown {
                name: name_or_alias.to_string(),
            });
        }
        let mut count = 0;
        let mut first_err = None;
        for m in modules {
            match self.load_module(&m) {
                Ok(n) => count += n,
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            // An alias may stand for several modules; one that loads is enough.
            Some(e) if count == 0 && !self.db.resolve(name_or_alias).iter().any(|m| self.kernel.is_loaded(m)) => Err(e),
            _ => Ok(count),
        }
    }

    /// Load every module of `names` with its dependencies, as [`Loader::load`]
    /// each, logging failures. Modules whose load plans share no module are
    /// independent: with a kernel that forks ([`Kernel::fork`]), each such
    /// group loads in its own thread, at once (no module is in two groups, so
    /// no thread inserts one another is inserting or depends on).
    pub fn load_all(&mut self, names: &[String], log: &mut dyn FnMut(&str)) {
        let groups = self.groups(names);
        let forks: Option<Vec<Box<dyn Kernel + Send>>> = if groups.len() > 1 {
            groups.iter().map(|_| self.kernel.fork()).collect()
        } else {
            None
        };
        let Some(forks) = forks else {
            for n in names {
                if let Err(e) = self.load(n) {
                    log(&e.to_string());
                }
            }
            return;
        };
        type Outcome = (Vec<String>, Vec<ModuleError>, HashSet<String>, Vec<ModuleError>);
        let (db, tried, params) = (self.db, &self.tried, &self.params);
        let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .iter()
                .zip(forks)
                .map(|(group, kernel)| {
                    scope.spawn(move || {
                        let mut l = Loader {
                            db,
                            kernel,
                            tried: tried.clone(),
                            loaded: Vec::new(),
                            errors: Vec::new(),
                            params: params.clone(),
                        };
                        let failed: Vec<ModuleError> = group.iter().filter_map(|n| l.load(n).err()).collect();
                        (l.loaded, l.errors, l.tried, failed)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
        });
        for (loaded, errors, tried, failed) in outcomes {
            self.loaded.extend(loaded);
            self.errors.extend(errors);
            self.tried.extend(tried);
            for e in failed {
                log(&e.to_string());
            }
        }
    }

    /// `names` in groups whose load plans (the modules not loaded yet) share
    /// no module, each group in the order of `names`. A name with no plan
    /// (unknown) is a group of its own.
    fn groups(&self, names: &[String]) -> Vec<Vec<String>> {
        let mut groups: Vec<(HashSet<String>, Vec<String>)> = Vec::new();
        for n in names {
            let modules: HashSet<String> = self
                .db
                .resolve(n)
                .iter()
                .filter_map(|m| self.db.plan(m).ok())
                .flatten()
                .map(|i| i.name)
                .filter(|m| !self.kernel.is_loaded(m))
                .collect();
            let mut set = modules;
            let mut list = Vec::new();
            let mut at = None;
            let mut k = 0;
            while k < groups.len() {
                if groups[k].0.is_disjoint(&set) {
                    k += 1;
                    continue;
                }
                let (other, names_before) = groups.remove(k);
                at.get_or_insert(k);
                set.extend(other);
                list.extend(names_before);
            }
            list.push(n.clone());
            groups.insert(at.unwrap_or(groups.len()), (set, list));
        }
        groups.into_iter().map(|(_, l)| l).collect()
    }

    fn load_module(&mut self, name: &str) -> Result<usize, ModuleError> {
        let plan = self.db.plan(name)?;
        let mut count = 0;
        for item in plan {
            if self.kernel.is_loaded(&item.name) {
                self.tried.insert(item.name.clone());
                continue;
            }
            if !self.tried.insert(item.name.clone()) {
                if item.required && !self.loaded.contains(&item.name) {
                    // It failed before: whatever needs it cannot load.
                    let earlier = self.errors.iter().find(|e| e.module() == Some(item.name.as_str()));
                    return Err(earlier.cloned().unwrap_or(ModuleError::Unknown { name: item.name }));
                }
                continue;
            }
            let Some(entry) = self.db.deps.get(&item.name) else {
                continue;
            };
            let path = self.db.dir.join(&entry.path);
            let params = self.params.get(&item.name).map_or("", String::as_str);
            match self.kernel.insert(&item.name, &path, params) {
                Ok(()) => {
                    self.loaded.push(item.name.clone());
                    count += 1;
                }
                Err(e) => {
                    self.errors.push(e.clone());
                    if item.required {
                        return Err(e);
                    }
                }
            }
        }
        Ok(count)
    }
}

/// Timing of the coldplug rescans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settle {
    /// A pass that finds no new device and loads nothing is confirmed by
    /// one more pass this long later; two quiet passes in a row end the scan.
    /// (A pass that found something is followed at once by the next.)
    pub pass_sleep: Duration,
    /// At most this many passes.
    pub max_passes: u32,
    /// After a USB host controller driver loads, keep rescanning (even when
    /// passes are quiet) until this long has passed, for enumeration.
    pub usb_host_grace: Duration,
    /// After usb_storage or uas loads, wait up to this long for a USB block
    /// device, loading drivers for devices that appear meanwhile (sd_mod).
    pub usb_disk_wait: Duration,
}

impl Default for Settle {
    fn default() -> Self {
        Settle {
            pass_sleep: Duration::from_millis(250),
            max_passes: 20,
            usb_host_grace: Duration::from_secs(2),
            usb_disk_wait: Duration::from_secs(15),
        }
    }
}

/// What coldplug did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Modules inserted, in order.
    pub loaded: Vec<String>,
    /// Failures (a module whose device is absent may fail with ENODEV: harmless).
    pub errors: Vec<ModuleError>,
    /// Scans of /sys/devices made.
    pub passes: u32,
    /// Distinct modalias strings seen.
    pub modaliases: usize,
    /// Modaliases that matched no module in the tables.
    pub unmatched: usize,
    /// Whether a USB block device was waited for and appeared (None: no wait).
    pub usb_disk: Option<bool>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} modules loaded in {} passes ({} modaliases, {} without a module, {} errors)",
            self.loaded.len(),
            self.passes,
            self.modaliases,
            self.unmatched,
            self.errors.len()
        )?;
        if !self.loaded.is_empty() {
            write!(f, ": {}", self.loaded.join(" "))?;
        }
        match self.usb_disk {
            Some(true) => write!(f, "; USB disk present"),
            Some(false) => write!(f, "; no USB disk appeared"),
            None => Ok(()),
        }
    }
}

/// Every `modalias` file's contents under `root` (symlinks not followed),
/// sorted and without repeats.
pub fn scan_modaliases(root: &Path) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() && e.file_name() == "modalias" {
                if let Ok(s) = std::fs::read_to_string(e.path()) {
                    let s = s.trim();
                    if !s.is_empty() {
                        out.insert(s.to_string());
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Is there a block device in `sys_block` whose sysfs path goes through USB?
pub fn usb_block_present(sys_block: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(sys_block) else {
        return false;
    };
    rd.flatten().any(|e| {
        std::fs::read_link(e.path())
            .map(|t| t.to_string_lossy().contains("/usb"))
            .unwrap_or(false)
    })
}

const USB_HOSTS: &[&str] = &[
    "xhci_pci", "xhci_hcd", "ehci_pci", "ehci_hcd", "ohci_pci", "ohci_hcd", "uhci_hcd",
];
const USB_STORAGE: &[&str] = &["usb_storage", "uas"];

/// Module parameters bootbench gives unless the kernel command line sets the same one.
/// usb-storage waits `delay_use` seconds (1 by default) after a device is plugged in
/// before it scans it, for devices that misbehave when asked at once; a boot stick
/// holds the config every benchmark waits for, and `usb_storage.delay_use=1` on the
/// command line restores the wait.
pub const DEFAULT_PARAMS: &[(&str, &str, &str)] = &[("usb_storage", "delay_use", "0")];

/// Module parameters as modprobe takes them from the kernel command line:
/// `module.param=value` (or `module.param` alone), `-` and `_` alike in the
/// module name, over [`DEFAULT_PARAMS`]; one string per module, the
/// parameters in order (`a=1 b=2`). Words without a dot before any `=`, and
/// bootbench's own (`bootbench.*`), are not module parameters.
pub fn module_params(cmdline: &str) -> HashMap<String, String> {
    let mut list: Vec<(String, String, Option<String>)> = DEFAULT_PARAMS
        .iter()
        .map(|(m, p, v)| ((*m).to_string(), (*p).to_string(), Some((*v).to_string())))
        .collect();
    for word in cmdline.split_whitespace() {
        let (key, value) = match word.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (word, None),
        };
        let Some((module, param)) = key.split_once('.') else {
            continue;
        };
        if module.is_empty() || param.is_empty() || module == "bootbench" {
            continue;
        }
        let module = module.replace('-', "_");
        list.retain(|(m, p, _)| !(*m == module && *p == param));
        list.push((module, param.to_string(), value));
    }
    let mut out: HashMap<String, String> = HashMap::new();
    for (m, p, v) in list {
        let one = match v {
            Some(v) => format!("{p}={v}"),
            None => p,
        };
        let entry = out.entry(m).or_default();
        if !entry.is_empty() {
            entry.push(' ');
        }
        entry.push_str(&one);
    }
    out
}

/// The kernel's command line, for module parameters (empty when unreadable).
fn kernel_cmdline() -> String {
    std::fs::read_to_string("/proc/cmdline").unwrap_or_default()
}

/// A loader into the running kernel over `db`, with the command line's
/// module parameters over bootbench's ([`module_params`]), as modprobe loads.
fn live_loader(db: &ModuleDb) -> Loader<'_, LiveKernel> {
    Loader::new(db, LiveKernel).with_params(module_params(&kernel_cmdline()))
}

/// Every disk behind a SCSI host (SATA through libata, USB, SAS, virtio-scsi)
/// needs sd_mod: loaded with the SCSI core, it is there when the disks are
/// scanned, instead of one rescan after they show up.
const SCSI_CORE: &str = "scsi_mod";
const SCSI_DISK: &str = "sd_mod";

/// Coldplug against sysfs at `sys_devices` / `sys_block` through `loader`.
pub fn coldplug_with<K: Kernel>(
    loader: &mut Loader<'_, K>,
    sys_devices: &Path,
    sys_block: &Path,
    settle: Settle,
    log: &mut dyn FnMut(&str),
) -> Report {
    let mut seen: HashSet<String> = HashSet::new();
    let mut unmatched = 0;
    let mut passes = 0;
    let mut usb_host_at: Option<Instant> = None;
    let mut quiet_before = false;
    while passes < settle.max_passes {
        passes += 1;
        let before = loader.loaded.len();
        let new_devices = load_for_new_devices(loader, sys_devices, &mut seen, &mut unmatched, log);
        let new = &loader.loaded[before..];
        if !new.is_empty() {
            log(&format!("coldplug pass {passes}: loaded {}", new.join(" ")));
        }
        if usb_host_at.is_none() && new.iter().any(|m| USB_HOSTS.contains(&m.as_str())) {
            usb_host_at = Some(Instant::now());
        }
        let quiet = new_devices == 0 && new.is_empty();
        if quiet {
            // The grace is for a USB disk to show up: once one has, quiet passes end the scan.
            let usb_settling =
                usb_host_at.is_some_and(|t| t.elapsed() < settle.usb_host_grace) && !usb_block_present(sys_block);
            if quiet_before && !usb_settling {
                break;
            }
            if passes < settle.max_passes {
                std::thread::sleep(settle.pass_sleep);
            }
        }
        quiet_before = quiet;
    }
    let mut usb_disk = None;
    if loader.loaded.iter().any(|m| USB_STORAGE.contains(&m.as_str())) {
        // usb-storage scans its devices after a delay (delay_use, 1 s), and
        // the SCSI disk it finds needs sd_mod: keep loading modules for new
        // devices while waiting, or a disk that shows up after the quiet
        // passes never gets its driver (seen under TCG).
        let start = Instant::now();
        let mut present = usb_block_present(sys_block);
        while !present && start.elapsed() < settle.usb_disk_wait {
            std::thread::sleep(Duration::from_millis(100));
            let before = loader.loaded.len();
            load_for_new_devices(loader, sys_devices, &mut seen, &mut unmatched, log);
            let new = &loader.loaded[before..];
            if !new.is_empty() {
                log(&format!(
                    "coldplug, waiting for the USB disk ({} ms): loaded {}",
                    start.elapsed().as_millis(),
                    new.join(" ")
                ));
            }
            present = usb_block_present(sys_block);
        }
        usb_disk = Some(present);
    }
    Report {
        loaded: loader.loaded.clone(),
        errors: loader.errors.clone(),
        passes,
        modaliases: seen.len(),
        unmatched,
        usb_disk,
    }
}

/// Load the modules for every modalias under `sys_devices` not in `seen`
/// (adding them); counts those no module matches in `unmatched`. Returns how
/// many new modaliases there were.
fn load_for_new_devices<K: Kernel>(
    loader: &mut Loader<'_, K>,
    sys_devices: &Path,
    seen: &mut HashSet<String>,
    unmatched: &mut usize,
    log: &mut dyn FnMut(&str),
) -> usize {
    let mut new_devices = 0;
    let mut wanted: Vec<String> = Vec::new();
    for alias in scan_modaliases(sys_devices) {
        if !seen.insert(alias.clone()) {
            continue;
        }
        new_devices += 1;
        let modules = loader.db.match_alias(&alias);
        if modules.is_empty() {
            *unmatched += 1;
        }
        for m in modules {
            if !wanted.contains(&m) {
                wanted.push(m);
            }
        }
    }
    // Every disk behind a SCSI host needs sd_mod: it comes with the SCSI core.
    let scsi = wanted
        .iter()
        .any(|m| loader.db.plan(m).is_ok_and(|p| p.iter().any(|i| i.name == SCSI_CORE)));
    if scsi && !loader.kernel.is_loaded(SCSI_DISK) && loader.db.deps.contains_key(SCSI_DISK) {
        wanted.push(SCSI_DISK.to_string());
    }
    loader.load_all(&wanted, log);
    new_devices
}

/// The module directory of the running kernel: `/lib/modules/<uname -r>`.
pub fn kernel_dir() -> PathBuf {
    let release = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default();
    Path::new(MODULES_ROOT).join(release)
}

/// Coldplug the running system: load the tables of the running kernel, then
/// [`coldplug_with`] over /sys/devices with the default [`Settle`].
pub fn coldplug(log: &mut dyn FnMut(&str)) -> Report {
    let db = match ModuleDb::load(&kernel_dir()) {
        Ok(db) => db,
        Err(e) => {
            log(&e.to_string());
            return Report {
                errors: vec![e],
                ..Report::default()
            };
        }
    };
    let mut loader = live_loader(&db);
    coldplug_with(
        &mut loader,
        Path::new("/sys/devices"),
        Path::new("/sys/block"),
        Settle::default(),
        log,
    )
}

/// One coldplug pass over /sys/devices of the running system (no settling):
/// the drivers of devices that appeared since; the modules it inserted.
pub fn rescan() -> Result<Vec<String>, ModuleError> {
    let db = ModuleDb::load(&kernel_dir())?;
    let mut loader = live_loader(&db);
    let (mut seen, mut unmatched) = (HashSet::new(), 0);
    load_for_new_devices(
        &mut loader,
        Path::new("/sys/devices"),
        &mut seen,
        &mut unmatched,
        &mut |_| {},
    );
    Ok(loader.loaded)
}

/// Load one module (or alias) with its dependencies into the running
/// kernel; returns the modules newly inserted, in order.
pub fn load(name: &str) -> Result<Vec<String>, ModuleError> {
    let db = ModuleDb::load(&kernel_dir())?;
    let mut loader = live_loader(&db);
    loader.load(name)?;
    Ok(loader.loaded)
}

/// The kernel's module helper: `modprobe [-q] [-b] [--] NAME...` (the kernel
/// runs `/sbin/modprobe -q -- NAME`). Loads each NAME (module or alias) with
/// its dependencies; options other than the names are ignored. Exit status 0
/// when every NAME is loaded, 1 otherwise (messages on stderr unless -q).
pub fn modprobe_main(args: Vec<String>) -> i32 {
    let (quiet, names) = modprobe_args(args.get(1..).unwrap_or(&[]));
    if names.is_empty() {
        if !quiet {
            eprintln!("modprobe: no module name given");
        }
        return 1;
    }
    let db = match ModuleDb::load(&kernel_dir()) {
        Ok(db) => db,
        Err(e) => {
            if !quiet {
                eprintln!("modprobe: {e}");
            }
            return 1;
        }
    };
    let mut loader = live_loader(&db);
    let mut status = 0;
    for n in names {
        if let Err(e) = loader.load(&n) {
            if !quiet {
                eprintln!("modprobe: {e}");
            }
            status = 1;
        }
    }
    status
}

/// Split modprobe's arguments into (quiet, names).
fn modprobe_args(args: &[String]) -> (bool, Vec<String>) {
    let mut quiet = false;
    let mut names = Vec::new();
    let mut only_names = false;
    for a in args {
        if only_names || !a.starts_with('-') {
            names.push(a.clone());
        } else if a == "--" {
            only_names = true;
        } else if a == "-q" || a == "--quiet" {
            quiet = true;
        }
    }
    (quiet, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEP: &str = "\
kernel/drivers/ata/ahci.ko: kernel/drivers/ata/libahci.ko kernel/drivers/ata/libata.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/ata/libahci.ko: kernel/drivers/ata/libata.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/ata/libata.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/scsi/scsi_mod.ko: kernel/drivers/scsi/scsi_common.ko
kernel/drivers/scsi/scsi_common.ko:
kernel/drivers/scsi/sd_mod.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_modern_dev.ko
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
kernel/drivers/block/virtio_blk.ko:
kernel/lib/libcrc32c.ko:
kernel/crypto/crc32c_generic.ko:
kernel/arch/x86/crypto/crc32c-intel.ko:
kernel/drivers/md/raid456.ko: kernel/lib/libcrc32c.ko
kernel/crypto/xts.ko:
kernel/crypto/ecb.ko:
kernel/drivers/usb/host/xhci-pci.ko: kernel/drivers/usb/host/xhci-hcd.ko
kernel/drivers/usb/host/xhci-hcd.ko:
kernel/drivers/usb/storage/usb-storage.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
";
    const ALIAS: &str = "\
# Aliases extracted from modules themselves.
alias pci:v*d*sv*sd*bc01sc06i01* ahci
alias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci
alias virtio:d00000002v* virtio_blk
alias scsi:t-0x00* sd_mod
alias scsi:t-0x0E* sd_mod
alias crypto-crc32c crc32c_generic
alias crc32c crc32c_generic
alias crc32c crc32c_intel
alias md-raid5 raid456
alias md-level-5 raid456
alias pci:v*d*sv*sd*bc0Csc03i30* xhci_pci
alias usb:v*p*d*dc*dsc*dp*ic08isc06ip50in* usb_storage
alias acpi*:NOTHERE:* not_in_dep
";
    const SOFTDEP: &str = "\
# Soft dependencies extracted from modules themselves.
softdep libcrc32c pre: crc32c
softdep xts pre: ecb
";

    fn db() -> ModuleDb {
        ModuleDb::from_text(Path::new("/m"), DEP, ALIAS, SOFTDEP)
    }

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

    /// A fake kernel: records inserts, fails the names in `fail`, and on
    /// inserting a module runs a hook (to make new devices appear).
    struct Fake<'h> {
        loaded: Vec<String>,
        fail: Vec<(&'static str, i32)>,
        on_insert: Box<dyn FnMut(&str) + 'h>,
        /// Every insert's module and parameters, in order.
        params: Vec<(String, String)>,
    }

    impl<'h> Fake<'h> {
        fn new() -> Self {
            Fake {
                loaded: Vec::new(),
                fail: Vec::new(),
                on_insert: Box::new(|_| {}),
                params: Vec::new(),
            }
        }
    }

    impl Kernel for Fake<'_> {
        fn is_loaded(&self, name: &str) -> bool {
            self.loaded.iter().any(|m| m == name)
        }
        fn insert(&mut self, name: &str, path: &Path, params: &str) -> Result<(), ModuleError> {
            assert!(path.starts_with("/m/kernel"), "{}", path.display());
            self.params.push((name.to_string(), params.to_string()));
            if let Some(&(_, errno)) = self.fail.iter().find(|(n, _)| *n == name) {
                return Err(ModuleError::Load {
                    name: name.into(),
                    path: path.into(),
                    errno,
                });
            }
            self.loaded.push(name.to_string());
            (self.on_insert)(name);
            Ok(())
        }
    }

    #[test]
    fn loader_skips_loaded_and_tolerates_soft_failures() {
        let db = db();
        let mut k = Fake::new();
        k.loaded.push("scsi_common".into());
        k.fail.push(("crc32c_intel", libc::ENODEV));
        let mut l = Loader::new(&db, k);
        assert_eq!(l.load("ahci"), Ok(4));
        assert_eq!(l.loaded, vec!["scsi_mod", "libata", "libahci", "ahci"]);
        assert_eq!(l.load("ahci"), Ok(0));
        assert_eq!(l.load("md-raid5"), Ok(3));
        assert_eq!(&l.loaded[4..], ["crc32c_generic", "libcrc32c", "raid456"]);
        assert_eq!(l.errors.len(), 1, "{:?}", l.errors);
        assert!(
            matches!(&l.errors[0], ModuleError::Load { name, errno, .. } if name == "crc32c_intel" && *errno == libc::ENODEV)
        );
        assert_eq!(l.load("nothing"), Err(ModuleError::Unknown { name: "nothing".into() }));
    }

    #[test]
    fn loader_stops_at_a_failed_required_dep() {
        let db = db();
        let mut k = Fake::new();
        k.fail.push(("libata", libc::ENOEXEC));
        let mut l = Loader::new(&db, k);
        let err = l.load("ahci").unwrap_err();
        assert!(matches!(err, ModuleError::Load { ref name, errno, .. } if name == "libata" && errno == libc::ENOEXEC));
        assert_eq!(l.loaded, vec!["scsi_common", "scsi_mod"]);
        // sd_mod does not need libata and still loads
        assert_eq!(l.load("sd_mod"), Ok(1));
        assert!(matches!(l.load("libahci"), Err(ModuleError::Load { name, .. }) if name == "libata"));
    }

    use crate::testutil::TempDir;

    fn put(root: &Path, rel: &str, alias: &str) {
        let d = root.join(rel);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("modalias"), format!("{alias}\n")).unwrap();
    }

    /// Under `t`: a sysfs `devices` tree holding an xHCI controller, and an
    /// empty `block` directory.
    fn xhci_host(t: &TempDir) -> (PathBuf, PathBuf) {
        let devices = t.0.join("devices");
        let block = t.0.join("block");
        std::fs::create_dir_all(&block).unwrap();
        put(
            &devices,
            "pci0000:00/0000:00:04.0",
            "pci:v00001B36d0000000Dsv00001AF4sd00001100bc0Csc03i30",
        );
        (devices, block)
    }

    /// A USB mass-storage interface on that controller (as xhci_pci's probe
    /// makes it appear).
    fn usb_storage_interface(devices: &Path) {
        put(
            devices,
            "pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0",
            "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00",
        );
    }

    fn quick() -> Settle {
        Settle {
            pass_sleep: Duration::ZERO,
            max_passes: 10,
            usb_host_grace: Duration::ZERO,
            usb_disk_wait: Duration::ZERO,
        }
    }

    #[test]
    fn coldplug_rescans_until_nothing_new() {
        let t = TempDir::new("coldplug");
        let devices = t.0.join("devices");
        let block = t.0.join("block");
        std::fs::create_dir_all(&block).unwrap();
        put(
            &devices,
            "pci0000:00/0000:00:02.0",
            "pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00",
        );
        put(
            &devices,
            "pci0000:00/0000:00:1f.2",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
        );
        put(&devices, "platform/serial8250", "platform:serial8250");
        // A symlink loop must not be followed.
        std::os::unix::fs::symlink(&devices, devices.join("pci0000:00/subsystem")).unwrap();
        let dev2 = devices.clone();
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| match name {
            // virtio_pci makes the virtio device appear, ahci a SCSI disk
            "virtio_pci" => put(&dev2, "pci0000:00/0000:00:02.0/virtio0", "virtio:d00000002v00001AF4"),
            "ahci" => put(
                &dev2,
                "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0",
                "scsi:t-0x00",
            ),
            _ => {}
        });
        let mut l = Loader::new(&db, k);
        let mut lines = Vec::new();
        let r = coldplug_with(&mut l, &devices, &block, quick(), &mut |m| lines.push(m.to_string()));
        // pass 1: ahci + virtio_pci (and deps); pass 2: virtio_blk, sd_mod; passes 3 and 4: quiet
        assert_eq!(r.passes, 4, "{r:?} {lines:?}");
        for m in [
            "ahci",
            "libata",
            "virtio_pci",
            "virtio_pci_modern_dev",
            "virtio_blk",
            "sd_mod",
        ] {
            assert!(r.loaded.iter().any(|x| x == m), "{m} not in {:?}", r.loaded);
        }
        let pos = |m: &str| r.loaded.iter().position(|x| x == m).unwrap();
        // sd_mod comes with the SCSI core, in the first pass, before any disk is scanned.
        assert!(
            lines[0].starts_with("coldplug pass 1:") && lines[0].ends_with(" sd_mod"),
            "{lines:?}"
        );
        assert!(pos("sd_mod") < pos("virtio_blk"), "{:?}", r.loaded);
        assert!(pos("virtio_pci_modern_dev") < pos("virtio_pci"));
        assert!(pos("virtio_pci") < pos("virtio_blk"));
        assert!(pos("ahci") < pos("sd_mod"));
        assert_eq!(r.modaliases, 5);
        assert_eq!(r.unmatched, 1);
        assert!(r.errors.is_empty());
        assert_eq!(r.usb_disk, None);
        assert_eq!(lines.len(), 2, "{lines:?}");
    }

    #[test]
    fn coldplug_waits_for_a_usb_disk() {
        let t = TempDir::new("usb");
        let (devices, block) = xhci_host(&t);
        let dev2 = devices.clone();
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| {
            if name == "xhci_pci" {
                usb_storage_interface(&dev2);
            }
        });
        let mut l = Loader::new(&db, k);
        let r = coldplug_with(&mut l, &devices, &block, quick(), &mut |_| {});
        assert!(r.loaded.contains(&"usb_storage".to_string()), "{r:?}");
        assert_eq!(r.passes, 4, "{r:?}");
        assert_eq!(r.usb_disk, Some(false));
        // With a long USB grace the quiet passes go on, up to max_passes.
        let mut l2 = Loader::new(&db, Fake::new());
        let long_grace = Settle {
            usb_host_grace: Duration::from_secs(3600),
            max_passes: 7,
            ..quick()
        };
        let r2 = coldplug_with(&mut l2, &devices, &block, long_grace, &mut |_| {});
        assert_eq!(r2.passes, 7, "{r2:?}");
        assert!(r2.loaded.contains(&"xhci_pci".to_string()), "{r2:?}");
        std::os::unix::fs::symlink(
            "../devices/pci0000:00/0000:00:04.0/usb2/2-1/host0/block/sda",
            block.join("sda"),
        )
        .unwrap();
        assert!(usb_block_present(&block));
    }

    /// The USB disk's SCSI device appears only after the quiet passes (as
    /// usb-storage's scan makes it): sd_mod is there already (it came with
    /// the SCSI core), the disk appears, and the wait ends with it.
    #[test]
    fn coldplug_waits_for_a_late_usb_disk_with_its_driver_loaded_ahead() {
        let t = TempDir::new("usb-late");
        let (devices, block) = xhci_host(&t);
        let (dev2, block2) = (devices.clone(), block.clone());
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| match name {
            "xhci_pci" => usb_storage_interface(&dev2),
            "usb_storage" => {
                // The scan: the SCSI disk and its block device show up later.
                let (dev3, block3) = (dev2.clone(), block2.clone());
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(300));
                    let scsi = "pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0";
                    put(&dev3, scsi, "scsi:t-0x00");
                    std::os::unix::fs::symlink(format!("../devices/{scsi}/block/sda"), block3.join("sda")).unwrap();
                });
            }
            _ => {}
        });
        let mut l = Loader::new(&db, k);
        let settle = Settle {
            usb_disk_wait: Duration::from_secs(20),
            ..quick()
        };
        let mut lines = Vec::new();
        let r = coldplug_with(&mut l, &devices, &block, settle, &mut |m| lines.push(m.to_string()));
        assert_eq!(r.usb_disk, Some(true), "{r:?}");
        assert!(
            lines
                .iter()
                .any(|m| m.starts_with("coldplug pass 2:") && m.contains("usb_storage") && m.ends_with(" sd_mod")),
            "{lines:?}"
        );
    }

    /// A kernel shared by threads: what was inserted, in order; the inserts
    /// of `meet` each wait (up to 5 s) until all of them have begun.
    #[derive(Clone)]
    struct Shared {
        loaded: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
        meet: &'static [&'static str],
        met: std::sync::Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>,
        apart: std::sync::Arc<AtomicBool>,
    }

    impl Kernel for Shared {
        fn is_loaded(&self, name: &str) -> bool {
            self.loaded.lock().unwrap().iter().any(|m| m == name)
        }
        fn insert(&mut self, name: &str, _: &Path, _: &str) -> Result<(), ModuleError> {
            if self.meet.contains(&name) {
                let (count, cv) = &*self.met;
                let mut n = count.lock().unwrap();
                *n += 1;
                cv.notify_all();
                let (n, timeout) = cv
                    .wait_timeout_while(n, Duration::from_secs(5), |n| *n < self.meet.len())
                    .unwrap();
                drop(n);
                if timeout.timed_out() {
                    self.apart.store(true, Ordering::SeqCst);
                }
            }
            // A dependency must be in before what needs it, whichever thread inserted it.
            let deps = ["scsi_common", "scsi_mod"];
            if ["libata", "libahci", "ahci", "sd_mod"].contains(&name) {
                let l = self.loaded.lock().unwrap();
                assert!(
                    deps.iter().all(|d| l.iter().any(|m| m == d)),
                    "{name} before its deps: {l:?}"
                );
            }
            self.loaded.lock().unwrap().push(name.to_string());
            Ok(())
        }
        fn fork(&self) -> Option<Box<dyn Kernel + Send>> {
            Some(Box::new(self.clone()))
        }
    }

    /// Modules whose plans share nothing load in threads of their own, at
    /// once; those that share a dependency load in one thread, in order.
    #[test]
    fn independent_modules_load_at_once_dependent_ones_in_order() {
        let db = db();
        let k = Shared {
            loaded: Default::default(),
            meet: &["virtio_pci_modern_dev", "scsi_common", "xhci_hcd"],
            met: Default::default(),
            apart: Default::default(),
        };
        let (loaded, apart) = (k.loaded.clone(), k.apart.clone());
        let mut l = Loader::new(&db, k);
        let names: Vec<String> = ["ahci", "virtio_pci", "usb_storage", "xhci_pci", "sd_mod"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        assert_eq!(
            l.groups(&names),
            [
                vec!["ahci", "usb_storage", "sd_mod"],
                vec!["virtio_pci"],
                vec!["xhci_pci"]
            ],
            "ahci, usb_storage and sd_mod share the SCSI core"
        );
        let mut lines = Vec::new();
        l.load_all(&names, &mut |m| lines.push(m.to_string()));
        assert!(!apart.load(Ordering::SeqCst), "the three groups did not load at once");
        assert!(lines.is_empty(), "{lines:?}");
        let mut want = vec![
            "scsi_common",
            "scsi_mod",
            "libata",
            "libahci",
            "ahci",
            "usb_storage",
            "sd_mod",
            "virtio_pci_modern_dev",
            "virtio_pci",
            "xhci_hcd",
            "xhci_pci",
        ];
        let mut got = l.loaded.clone();
        assert_eq!(got.len(), want.len(), "{got:?}");
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(loaded.lock().unwrap().len(), want.len());
        // Loaded already: nothing to group, nothing loads twice.
        assert_eq!(l.groups(&names).iter().flatten().count(), names.len());
        l.load_all(&names, &mut |m| lines.push(m.to_string()));
        assert_eq!(l.loaded.len(), want.len());
    }

    #[test]
    fn module_parameters_come_from_the_command_line_over_the_defaults() {
        let p = module_params("");
        assert_eq!(p.get("usb_storage").map(String::as_str), Some("delay_use=0"));
        assert_eq!(p.len(), DEFAULT_PARAMS.len());
        let p = module_params(
            "console=ttyS0 usb-storage.delay_use=2 raid0.default_layout=2 md_mod.start_ro \
             bootbench.profile=quick .x=1 y.=2 printk.time=1 usb_storage.quirks=0781:5567:u",
        );
        assert_eq!(
            p.get("usb_storage").map(String::as_str),
            Some("delay_use=2 quirks=0781:5567:u"),
            "the command line's delay_use replaces the default: {p:?}"
        );
        assert_eq!(p.get("raid0").map(String::as_str), Some("default_layout=2"));
        assert_eq!(p.get("md_mod").map(String::as_str), Some("start_ro"));
        assert!(
            !p.contains_key("bootbench") && !p.contains_key("") && !p.contains_key("y"),
            "{p:?}"
        );
        // The loader hands each module its own, and nothing to the others.
        let db = db();
        let mut l = Loader::new(&db, Fake::new()).with_params(module_params("sd-mod.x=1"));
        l.load("sd_mod").unwrap();
        let given: Vec<(String, String)> = l.kernel.params.clone();
        assert!(given.iter().any(|(m, p)| m == "sd_mod" && p == "x=1"), "{given:?}");
        assert!(
            given.iter().all(|(m, p)| m == "sd_mod" || p.is_empty()),
            "only sd_mod has parameters: {given:?}"
        );
    }

    /// Once a USB disk is there, the quiet passes end the scan even within
    /// the USB grace: the boot stick holds the config every test waits for.
    #[test]
    fn coldplug_stops_waiting_for_usb_once_a_usb_disk_is_there() {
        let t = TempDir::new("usb-early");
        let (devices, block) = xhci_host(&t);
        std::os::unix::fs::symlink(
            "../devices/pci0000:00/0000:00:04.0/usb2/2-1/host0/block/sda",
            block.join("sda"),
        )
        .unwrap();
        let db = db();
        let mut l = Loader::new(&db, Fake::new());
        let long_grace = Settle {
            usb_host_grace: Duration::from_secs(3600),
            max_passes: 7,
            ..quick()
        };
        let r = coldplug_with(&mut l, &devices, &block, long_grace, &mut |_| {});
        assert_eq!(r.passes, 3, "a pass that loads, two quiet ones: {r:?}");
    }

    #[test]
    fn modprobe_arguments() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            modprobe_args(&s(&["-q", "--", "crypto-crc32c"])),
            (true, s(&["crypto-crc32c"]))
        );
        assert_eq!(
            modprobe_args(&s(&["ahci", "-b", "sd_mod"])),
            (false, s(&["ahci", "sd_mod"]))
        );
        assert_eq!(modprobe_args(&s(&["--", "-odd"])), (false, s(&["-odd"])));
    }
}
