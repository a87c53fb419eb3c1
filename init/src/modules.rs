//! Kernel modules: the tables the image builder wrote (contract A:
//! `/lib/modules/<kver>/modules.{dep,alias,softdep}`), coldplug (match every
//! device's modalias against the alias globs, load with dependencies, rescan
//! until nothing new appears for a while), and the kernel's modprobe helper
//! (`/sbin/modprobe -q -- NAME`, a symlink to this binary).
//!
//! Loading order for one module: its soft `pre:` dependencies (each with its
//! own dependencies), its hard dependencies from the END of its modules.dep
//! list backwards (the list is transitive, the last entry has no
//! dependencies of its own), the module itself, then its `post:` soft
//! dependencies. Module names compare with `-` and `_` equal. Coldplug loads
//! many at once, each as soon as what it needs is in ([`Loader::pump`]).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
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
    /// Coldplug's drivers: with Some, every module not in the set is
    /// inserted with [`NO_WAIT`] (see there); None inserts every module as
    /// modprobe does.
    drivers: Option<HashSet<String>>,
    /// At most this many modules that are not drivers load at once.
    library_slots: usize,
    /// What [`Loader::submit`] asked for: the modules, their order and where each stands.
    graph: Graph,
    /// Inserts running in threads of their own ([`Kernel::fork`]), and how many of them are not drivers.
    running: usize,
    running_libraries: usize,
    /// Each running insert sends its node and outcome here.
    done_tx: Sender<(usize, Result<(), ModuleError>)>,
    done_rx: Receiver<(usize, Result<(), ModuleError>)>,
}

/// The parameter the kernel takes from any module (kernel/module/main.c,
/// unknown_module_param_cb) to probe its drivers asynchronously and, what
/// matters here, not to wait at the end of its init for all the
/// asynchronous work of the system (do_init_module's
/// async_synchronize_full): other drivers' probes, an NVMe controller's
/// reset, a SATA port's link reset and IDENTIFY. A library such as libahci
/// has nothing of its own to wait for, but without it waited for NVMe's
/// probe before AHCI could load (0.5 s under TCG). Coldplug gives it to
/// every module but the drivers it loads for a device, whose insert still
/// returns with their devices probed.
pub const NO_WAIT: &str = "async_probe=1";

impl<'a, K: Kernel> Loader<'a, K> {
    /// A loader over `db` inserting through `kernel`, with no module parameters.
    pub fn new(db: &'a ModuleDb, kernel: K) -> Self {
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        Loader {
            db,
            kernel,
            tried: HashSet::new(),
            loaded: Vec::new(),
            errors: Vec::new(),
            params: HashMap::new(),
            drivers: None,
            library_slots: MAX_PARALLEL,
            graph: Graph::default(),
            running: 0,
            running_libraries: 0,
            done_tx,
            done_rx,
        }
    }

    /// The same, for coldplug: every module loads with [`NO_WAIT`] but those
    /// named by [`Loader::driver`]. Without the wait, such an insert is work
    /// on the CPU (the signature check, the relocations), so at most one per
    /// CPU runs at once, the longest chains first (the path to the slowest
    /// driver); a driver starts as soon as what it needs is in, as its
    /// insert mostly waits for its probe.
    #[must_use]
    pub fn drivers_only_wait(mut self) -> Self {
        self.drivers = Some(HashSet::new());
        self.library_slots = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        self
    }

    /// `name` drives a device: its insert waits for its probe (no [`NO_WAIT`]).
    pub fn driver(&mut self, name: &str) {
        if let Some(d) = &mut self.drivers {
            d.insert(name.to_string());
        }
    }

    /// The parameters `name` is inserted with: its own ([`module_params`]),
    /// and [`NO_WAIT`] when only drivers wait and it is none (unless its own
    /// parameters say `async_probe` already).
    fn params_of(&self, name: &str) -> String {
        let own = self.params.get(name).map_or("", String::as_str);
        let no_wait = self.drivers.as_ref().is_some_and(|d| !d.contains(name))
            && !own
                .split_whitespace()
                .any(|p| p.split('=').next() == Some("async_probe"));
        match (own.is_empty(), no_wait) {
            (_, false) => own.to_string(),
            (true, true) => NO_WAIT.to_string(),
            (false, true) => format!("{own} {NO_WAIT}"),
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

    /// Add `names` (modules, or aliases standing for them) and what they
    /// need to what [`Loader::pump`] loads: every module of their plans that
    /// is neither in nor tried yet, once. A module whose hard dependency was
    /// tried and failed fails with its error, as [`Loader::load`] does.
    pub fn submit(&mut self, names: &[String]) {
        let mut order: Vec<String> = Vec::new();
        for n in names {
            for m in self.db.resolve(n) {
                for item in self.db.plan(&m).unwrap_or_default() {
                    if self.kernel.is_loaded(&item.name) {
                        self.tried.insert(item.name);
                    } else if !self.tried.contains(&item.name) && !order.contains(&item.name) {
                        order.push(item.name);
                    }
                }
            }
        }
        let nodes: Vec<Node> = order
            .iter()
            .map(|m| Node {
                name: m.clone(),
                after: Vec::new(),
                height: 1,
                driver: self.drivers.as_ref().is_some_and(|d| d.contains(m)),
                state: self.earlier_error(m).map_or(NodeState::Waiting, NodeState::Failed),
            })
            .collect();
        self.tried.extend(order);
        self.graph.add(self.db, nodes);
    }

    /// Whether a module submitted is loading or waiting to.
    pub fn busy(&self) -> bool {
        self.running > 0 || self.graph.pending()
    }

    /// Start what is ready, then, while an insert runs, wait at most `wait`
    /// (None: as long as it takes) for one to end, record it and start what
    /// it held back. Returns the module that ended, and whether it was a
    /// driver; None when nothing ended in time.
    ///
    /// With a kernel that forks ([`Kernel::fork`]) each module is inserted,
    /// in a thread of its own, as soon as every module it needs is in (its
    /// modules.dep entries and `pre:` soft dependencies; a `post:` one
    /// follows its module), beside whatever else is ready: a shared
    /// dependency holds back only what needs it (at most [`MAX_PARALLEL`] at
    /// once; see [`Loader::drivers_only_wait`]). Otherwise one at a time,
    /// inside this call. Either way, of the modules ready the one at the head
    /// of the longest chain goes first.
    pub fn pump(&mut self, wait: Option<Duration>) -> Option<(String, bool)> {
        self.start_ready();
        if self.running == 0 {
            return None;
        }
        let (i, r) = match wait {
            None => self.done_rx.recv().ok()?,
            Some(d) => self.done_rx.recv_timeout(d).ok()?,
        };
        self.running -= 1;
        let node = &self.graph.nodes[i];
        let (name, driver) = (node.name.clone(), node.driver);
        self.running_libraries -= usize::from(!driver);
        self.record(&name, &r);
        self.graph.finish(i, r);
        self.start_ready();
        Some((name, driver))
    }

    /// Start every ready module there is a slot for; when nothing runs and
    /// nothing is ready although modules wait, break the soft cycle that
    /// holds them ([`Graph::break_cycle`]) and try again.
    fn start_ready(&mut self) {
        loop {
            while self.running < MAX_PARALLEL {
                let Some(i) = self.graph.next_ready(self.running_libraries < self.library_slots) else {
                    break;
                };
                self.start(i);
            }
            if self.running > 0 || !self.graph.pending() {
                return;
            }
            self.graph.break_cycle();
        }
    }

    /// Insert node `i`: in a thread of its own when the kernel forks, else here.
    fn start(&mut self, i: usize) {
        let name = self.graph.nodes[i].name.clone();
        let Some(entry) = self.db.deps.get(&name) else {
            self.graph.finish(i, Err(ModuleError::Unknown { name }));
            return;
        };
        let path = self.db.dir.join(&entry.path);
        let params = self.params_of(&name);
        self.graph.nodes[i].state = NodeState::Running;
        match self.kernel.fork() {
            Some(mut kernel) => {
                self.running += 1;
                self.running_libraries += usize::from(!self.graph.nodes[i].driver);
                let tx = self.done_tx.clone();
                std::thread::spawn(move || {
                    let _ = tx.send((i, kernel.insert(&name, &path, &params)));
                });
            }
            None => {
                let r = self.kernel.insert(&name, &path, &params);
                self.record(&name, &r);
                self.graph.finish(i, r);
            }
        }
    }

    /// Why `name` cannot load, when it or a module it needs was tried before
    /// and is not in: the error of the one that failed (a module that was
    /// never inserted because of another has none of its own).
    fn earlier_error(&self, name: &str) -> Option<ModuleError> {
        let hard = self.db.deps.get(name).map(|e| e.deps.as_slice()).unwrap_or_default();
        let failed: Vec<&str> = hard
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(name))
            .filter(|m| self.tried.contains(*m) && !self.loaded.iter().any(|l| l == m) && !self.kernel.is_loaded(m))
            .collect();
        let recorded = failed
            .iter()
            .find_map(|m| self.errors.iter().find(|e| e.module() == Some(*m)));
        recorded
            .cloned()
            .or_else(|| failed.first().map(|m| ModuleError::Unknown { name: (*m).to_string() }))
    }

    /// Note one insert's outcome: loaded, or its error.
    fn record(&mut self, name: &str, r: &Result<(), ModuleError>) {
        match r {
            Ok(()) => self.loaded.push(name.to_string()),
            Err(e) => self.errors.push(e.clone()),
        }
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
            let params = self.params_of(&item.name);
            match self.kernel.insert(&item.name, &path, &params) {
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

/// At most this many modules are inserted at once ([`Loader::pump`]): drivers hold a thread while
/// their probes run, libraries have [`Loader::drivers_only_wait`]'s bound.
pub const MAX_PARALLEL: usize = 16;

/// Where one module of a [`Graph`] stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum NodeState {
    Waiting,
    Running,
    Loaded,
    Failed(ModuleError),
}

/// One module to load and what must be in before it.
#[derive(Clone, Debug)]
struct Node {
    name: String,
    /// Indexes of the nodes it waits for, and whether it needs each (a hard
    /// dependency: its failure fails this one) or only follows it (soft).
    after: Vec<(usize, bool)>,
    /// The longest chain of this graph's modules that starts here (1 for a
    /// module nothing here waits for): the higher, the sooner it should load.
    height: usize,
    /// Loaded for a device (its insert waits for its probes).
    driver: bool,
    state: NodeState,
}

/// The modules a loader was asked for, with the order among them that
/// modules.dep and the soft dependencies ask for and where each stands.
#[derive(Debug, Default)]
struct Graph {
    nodes: Vec<Node>,
}

impl Graph {
    /// Add `new` (modules no node names yet, in plan order) and the edges
    /// among all nodes they take part in: hard, a module's modules.dep
    /// entries; soft, its `pre:` soft dependencies, and a `post:` one after
    /// its module. Then the heights again.
    fn add(&mut self, db: &ModuleDb, new: Vec<Node>) {
        let first = self.nodes.len();
        self.nodes.extend(new);
        let index: HashMap<String, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        for i in first..self.nodes.len() {
            let name = self.nodes[i].name.clone();
            let hard = db.deps.get(&name).map(|e| e.deps.as_slice()).unwrap_or_default();
            for d in hard {
                if let Some(&j) = index.get(d) {
                    self.nodes[i].after.push((j, true));
                }
            }
            let soft = db.softdeps.get(&name);
            for pre in soft.map(|s| s.pre.as_slice()).unwrap_or_default() {
                for m in db.resolve(pre) {
                    if let Some(&j) = index.get(&m) {
                        self.nodes[i].after.push((j, false));
                    }
                }
            }
            for post in soft.map(|s| s.post.as_slice()).unwrap_or_default() {
                for m in db.resolve(post) {
                    match index.get(&m) {
                        Some(&j) if j >= first || self.nodes[j].state == NodeState::Waiting => {
                            self.nodes[j].after.push((i, false));
                        }
                        _ => {}
                    }
                }
            }
        }
        // Heights by relaxation; a soft cycle stops growing after as many rounds as nodes.
        for _ in 0..self.nodes.len() {
            let mut grew = false;
            for i in 0..self.nodes.len() {
                for k in 0..self.nodes[i].after.len() {
                    let (j, _) = self.nodes[i].after[k];
                    if self.nodes[j].height < self.nodes[i].height + 1 {
                        self.nodes[j].height = self.nodes[i].height + 1;
                        grew = true;
                    }
                }
            }
            if !grew {
                break;
            }
        }
    }

    /// The waiting node whose predecessors are all done that heads the
    /// longest chain (the first of those), among the drivers only unless
    /// `libraries`; one whose hard dependency failed fails with that error
    /// (and the search goes on).
    fn next_ready(&mut self, libraries: bool) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut i = 0;
        while i < self.nodes.len() {
            if self.nodes[i].state == NodeState::Waiting && (libraries || self.nodes[i].driver) {
                let mut ready = true;
                let mut failed = None;
                for &(j, hard) in &self.nodes[i].after {
                    match &self.nodes[j].state {
                        NodeState::Waiting | NodeState::Running => ready = false,
                        NodeState::Failed(e) if hard => failed = Some(e.clone()),
                        _ => {}
                    }
                }
                if let Some(e) = failed {
                    // Whatever needs a module that failed cannot load: nothing to insert.
                    self.nodes[i].state = NodeState::Failed(e);
                    (i, best) = (0, None);
                    continue;
                }
                if ready && best.is_none_or(|b| self.nodes[b].height < self.nodes[i].height) {
                    best = Some(i);
                }
            }
            i += 1;
        }
        best
    }

    fn finish(&mut self, i: usize, r: Result<(), ModuleError>) {
        self.nodes[i].state = match r {
            Ok(()) => NodeState::Loaded,
            Err(e) => NodeState::Failed(e),
        };
    }

    fn pending(&self) -> bool {
        self.nodes.iter().any(|n| n.state == NodeState::Waiting)
    }

    /// Nothing runs and nothing is ready: soft edges form a cycle. The first
    /// waiting node whose hard dependencies are all done drops its soft
    /// edges; with none (a hard cycle: a broken modules.dep) the first
    /// waiting node fails.
    fn break_cycle(&mut self) {
        let hard_done = |g: &Graph, n: &Node| {
            n.after
                .iter()
                .all(|&(j, hard)| !hard || !matches!(g.nodes[j].state, NodeState::Waiting | NodeState::Running))
        };
        let waiting = |n: &Node| n.state == NodeState::Waiting;
        if let Some(i) = (0..self.nodes.len()).find(|&i| waiting(&self.nodes[i]) && hard_done(self, &self.nodes[i])) {
            self.nodes[i].after.retain(|&(_, hard)| hard);
        } else if let Some(n) = self.nodes.iter_mut().find(|n| waiting(n)) {
            n.state = NodeState::Failed(ModuleError::Unknown { name: n.name.clone() });
        }
    }
}

/// Timing of the coldplug rescans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settle {
    /// Time between scans while nothing loads.
    pub poll: Duration,
    /// The scan ends once nothing has changed for this long: no new device
    /// (modalias), no new block device, no module loaded. A driver's insert
    /// returns with its probes done (finit_module waits for the kernel's
    /// asynchronous probes, the ATA and SCSI scans among them); this covers
    /// what a driver finds afterwards (an NVMe controller's namespaces, a
    /// USB hub's devices). In the boot it runs while the stick's config is
    /// read ([`settle`]).
    pub quiet: Duration,
    /// The scan ends after this long whatever still appears (a bound on a
    /// device that keeps coming and going, not a time anything is expected
    /// to take); inserts under way still end.
    pub limit: Duration,
    /// After a USB host controller driver loads, keep rescanning (even when
    /// quiet) until this long has passed, for enumeration, unless a USB
    /// disk is there.
    pub usb_host_grace: Duration,
    /// After usb_storage or uas loads, wait up to this long for a USB block
    /// device, loading drivers for devices that appear meanwhile (sd_mod).
    pub usb_disk_wait: Duration,
}

impl Default for Settle {
    fn default() -> Self {
        Settle {
            poll: Duration::from_millis(50),
            quiet: Duration::from_millis(250),
            limit: Duration::from_secs(30),
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

/// Devices that have a modalias but sit on no bus: the CPU (its features
/// match the accelerated crypto modules) and the firmware's DMI table.
const BUSLESS_MODALIAS: &[&str] = &["devices/system/cpu/modalias", "devices/virtual/dmi/id/modalias"];

/// Every device's modalias under the sysfs root `sys`, sorted, without
/// repeats: each device of each bus (`bus/*/devices/*/modalias`) and
/// [`BUSLESS_MODALIAS`]. The bus lists hold each device once; a walk of
/// /sys/devices reads ten times the directories (about 140 ms a scan under
/// TCG, against 25 ms). Class devices (input) are not scanned: no module of
/// the set has an alias for them.
pub fn scan_modaliases(sys: &Path) -> Vec<String> {
    scan_devices(sys).aliases
}

/// One scan of the buses: see [`scan_modaliases`].
#[derive(Debug, Default)]
struct Scan {
    /// Every modalias, sorted, without repeats.
    aliases: Vec<String>,
    /// Every device on the USB bus (`2-3`, `2-3:1.0`), sorted: two USB
    /// disks of one model have one modalias, and the second is still a new
    /// device. The other buses' devices are left out: their hot arrivals
    /// (SCSI hosts and targets as a driver probes) come with a new disk or
    /// module anyway, and counting them restarted the quiet time for
    /// nothing (about 0.2 s more to the first I/O under TCG).
    usb_devices: Vec<String>,
}

fn scan_devices(sys: &Path) -> Scan {
    let mut aliases = std::collections::BTreeSet::new();
    let mut usb_devices = Vec::new();
    let mut add = |path: PathBuf| {
        if let Ok(s) = std::fs::read_to_string(path) {
            let s = s.trim();
            if !s.is_empty() {
                aliases.insert(s.to_string());
            }
        }
    };
    if let Ok(buses) = std::fs::read_dir(sys.join("bus")) {
        for bus in buses.flatten() {
            let Ok(list) = std::fs::read_dir(bus.path().join("devices")) else {
                continue;
            };
            let usb = bus.file_name() == "usb";
            for d in list.flatten() {
                if usb {
                    usb_devices.push(d.file_name().to_string_lossy().into_owned());
                }
                add(d.path().join("modalias"));
            }
        }
    }
    for rel in BUSLESS_MODALIAS {
        add(sys.join(rel));
    }
    usb_devices.sort_unstable();
    Scan {
        aliases: aliases.into_iter().collect(),
        usb_devices,
    }
}

/// The names in `sys/block`, sorted (the block devices there are).
fn block_devices(sys: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(sys.join("block"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
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

/// How many USB mass-storage interfaces (class 08) under `sys` a driver has
/// taken (usb-storage, uas) without a block device beneath them yet: the
/// SCSI scan of each is still under way. A machine with several USB disks
/// enumerates and scans them one after another, with gaps longer than the
/// quiet time between them; this keeps coldplug waiting for each.
pub fn usb_storage_pending(sys: &Path) -> usize {
    let disks: Vec<String> = std::fs::read_dir(sys.join("block"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .map(|t| t.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let Ok(rd) = std::fs::read_dir(sys.join("bus/usb/devices")) else {
        return 0;
    };
    rd.flatten()
        .filter(|e| {
            let d = e.path();
            let class = std::fs::read_to_string(d.join("bInterfaceClass")).unwrap_or_default();
            class.trim() == "08" && d.join("driver").exists()
        })
        .filter(|e| {
            let name = format!("/{}/", e.file_name().to_string_lossy());
            !disks.iter().any(|t| t.contains(&name))
        })
        .count()
}

/// How a hub's port is asked whether a device is connected to it: (bus
/// number, device number, port) to Some(connected), None when it cannot
/// be asked. [`PortStatus::live`] asks the hub through usbfs.
#[derive(Clone)]
pub struct PortStatus(std::sync::Arc<dyn Fn(u32, u32, u8) -> Option<bool> + Send + Sync>);

impl PortStatus {
    /// GET_STATUS to the port of the hub at `/dev/bus/usb/BBB/DDD`.
    pub fn live() -> PortStatus {
        PortStatus(std::sync::Arc::new(|bus, dev, port| {
            let node = PathBuf::from(format!("/dev/bus/usb/{bus:03}/{dev:03}"));
            crate::sys::usb::hub_port_status(&node, port)
                .ok()
                .map(|(status, _)| status & crate::sys::usb::PORT_CONNECTION != 0)
        }))
    }

    /// A port status from `f` (tests).
    #[cfg(test)]
    pub fn from_fn(f: impl Fn(u32, u32, u8) -> Option<bool> + Send + Sync + 'static) -> PortStatus {
        PortStatus(std::sync::Arc::new(f))
    }
}

impl fmt::Debug for PortStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PortStatus")
    }
}

/// The hub ports under `sys` with a device connected that the kernel has
/// not made a USB device of yet (`usb2-port3`, `1-4-port2`): the hub driver
/// enumerates its ports one after another, each after a debounce of at
/// least 100 ms, so under TCG the next disk can come more than the quiet
/// time after the last. A port whose `device` link is there is done; only
/// the others are asked ([`PortStatus`]). A hub just added may not have
/// powered its ports yet: the new device itself restarts the quiet time.
pub fn usb_ports_pending(sys: &Path, status: &PortStatus) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(sys.join("bus/usb/devices")) else {
        return out;
    };
    let read = |p: PathBuf| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
    };
    let mut hubs: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    hubs.sort();
    for hub in hubs {
        let Some(maxchild) = read(hub.join("maxchild")).filter(|&n| n > 0) else {
            continue;
        };
        let (Some(bus), Some(dev)) = (read(hub.join("busnum")), read(hub.join("devnum"))) else {
            continue;
        };
        let name = hub.file_name().unwrap_or_default().to_string_lossy().into_owned();
        // The ports sit under the hub's interface: `2-1:1.0/2-1-port1`, and
        // for a root hub `usb2/2-0:1.0/usb2-port1`.
        let ifaces: Vec<PathBuf> = std::fs::read_dir(&hub)
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_name().to_string_lossy().contains(':'))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        for port in 1..=maxchild.min(u32::from(u8::MAX)) {
            let port_name = format!("{name}-port{port}");
            let Some(dir) = ifaces.iter().map(|i| i.join(&port_name)).find(|d| d.exists()) else {
                continue;
            };
            if dir.join("device").exists() {
                continue;
            }
            let port = u8::try_from(port).unwrap_or(u8::MAX);
            if (status.0)(bus, dev, port) == Some(true) {
                out.push(port_name);
            }
        }
    }
    out
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

/// A coldplug under way: what it has seen, and when something last changed.
#[derive(Debug)]
pub struct Coldplug {
    sys: PathBuf,
    settle: Settle,
    start: Instant,
    /// Modules to load that no device asks for, until the first pass takes them.
    also: Vec<String>,
    seen: HashSet<String>,
    unmatched: usize,
    passes: u32,
    usb_host_at: Option<Instant>,
    usb_disk: Option<bool>,
    /// The block devices there were at the last pass.
    disks: Vec<String>,
    /// The USB devices there were at the last pass.
    usb_devices: Vec<String>,
    /// How hub ports are asked whether a device waits on them.
    ports: PortStatus,
    /// The ports found with a device waiting on them (logged once each).
    waited_ports: Vec<String>,
    changed_at: Instant,
    /// Whether the last pass found something new.
    changed: bool,
    /// How many of the loader's modules and errors are logged.
    logged: (usize, usize),
}

impl Coldplug {
    /// A coldplug of the sysfs root `sys`, with the modules `also` names.
    pub fn new(sys: &Path, also: &[&str], settle: Settle) -> Coldplug {
        Coldplug {
            sys: sys.to_path_buf(),
            settle,
            start: Instant::now(),
            also: also.iter().map(|m| (*m).to_string()).collect(),
            seen: HashSet::new(),
            unmatched: 0,
            passes: 0,
            usb_host_at: None,
            usb_disk: None,
            disks: block_devices(sys),
            usb_devices: Vec::new(),
            ports: PortStatus::live(),
            waited_ports: Vec::new(),
            changed_at: Instant::now(),
            changed: true,
            logged: (0, 0),
        }
    }

    /// Ask hub ports through `ports` instead of usbfs (tests).
    #[cfg(test)]
    pub fn with_port_status(mut self, ports: PortStatus) -> Coldplug {
        self.ports = ports;
        self
    }

    /// Load until nothing loads, a pass finds nothing new, and a USB host's
    /// enumeration grace is over (or a USB disk is there); then, when a USB
    /// storage driver loaded, wait for its disk. The modules load in the
    /// background ([`Loader::pump`]); the devices are scanned again whenever
    /// a driver's insert ends, and every [`Settle::poll`] while no library
    /// loads (a scan costs CPU time the libraries' inserts need): a virtio
    /// disk's or a USB stick's driver loads while the SATA ports are still
    /// being probed.
    pub fn load<K: Kernel>(&mut self, loader: &mut Loader<'_, K>, log: &mut dyn FnMut(&str)) {
        loop {
            self.pass(loader, log);
            if self.start.elapsed() >= self.settle.limit {
                while loader.busy() {
                    loader.pump(None);
                }
                break;
            }
            if !loader.busy() {
                // The grace is for a USB disk to show up: once one has, a quiet pass ends the loading.
                let usb_settling = (self
                    .usb_host_at
                    .is_some_and(|t| t.elapsed() < self.settle.usb_host_grace)
                    && !usb_block_present(&self.sys.join("block")))
                    || self.usb_scanning(log);
                if !self.changed && !usb_settling {
                    break;
                }
                std::thread::sleep(self.settle.poll);
                continue;
            }
            self.wait(loader);
        }
        if loader.loaded.iter().any(|m| USB_STORAGE.contains(&m.as_str())) {
            // usb-storage scans its devices after a delay (delay_use, 1 s), and
            // the SCSI disk it finds needs sd_mod: keep loading modules for new
            // devices while waiting, or a disk that shows up after the quiet
            // passes never gets its driver (seen under TCG).
            let start = Instant::now();
            let block = self.sys.join("block");
            let mut present = usb_block_present(&block);
            while !present && start.elapsed() < self.settle.usb_disk_wait {
                std::thread::sleep(Duration::from_millis(100));
                self.pass(loader, log);
                while loader.busy() {
                    loader.pump(None);
                }
                present = usb_block_present(&block);
            }
            self.usb_disk = Some(present);
        }
    }

    /// Go on scanning (and loading what new devices need) until nothing
    /// has changed for [`Settle::quiet`], or the limit. What has appeared
    /// by then is every device there is to wait for. True when a scan of
    /// this call found something new (a device, a disk, a module loaded).
    pub fn settle<K: Kernel>(&mut self, loader: &mut Loader<'_, K>, log: &mut dyn FnMut(&str)) -> bool {
        let mut found = false;
        loop {
            let quiet = !loader.busy()
                && !self.changed
                && self.changed_at.elapsed() >= self.settle.quiet
                && !self.usb_scanning(log);
            if quiet || self.start.elapsed() >= self.settle.limit {
                while loader.busy() {
                    loader.pump(None);
                }
                return found;
            }
            if loader.busy() {
                self.wait(loader);
            } else {
                let left = self.settle.quiet.saturating_sub(self.changed_at.elapsed());
                std::thread::sleep(left.min(self.settle.poll));
            }
            self.pass(loader, log);
            found |= self.changed;
        }
    }

    /// A USB mass-storage interface still has no disk ([`usb_storage_pending`]),
    /// or a hub port has a device not yet enumerated ([`usb_ports_pending`]),
    /// within [`Settle::usb_disk_wait`] of the start.
    /// Ports newly found waiting are logged.
    fn usb_scanning(&mut self, log: &mut dyn FnMut(&str)) -> bool {
        if self.start.elapsed() >= self.settle.usb_disk_wait {
            return false;
        }
        if usb_storage_pending(&self.sys) > 0 {
            return true;
        }
        let ports = usb_ports_pending(&self.sys, &self.ports);
        let fresh: Vec<&str> = ports
            .iter()
            .filter(|p| !self.waited_ports.contains(p))
            .map(String::as_str)
            .collect();
        if !fresh.is_empty() {
            log(&format!(
                "coldplug: a device is connected to USB port(s) {} and not yet enumerated: waiting for it",
                fresh.join(" ")
            ));
        }
        let waiting = !ports.is_empty();
        self.waited_ports.extend(ports);
        self.waited_ports.sort_unstable();
        self.waited_ports.dedup();
        waiting
    }

    /// What the coldplug did so far.
    pub fn report<K: Kernel>(&self, loader: &Loader<'_, K>) -> Report {
        Report {
            loaded: loader.loaded.clone(),
            errors: loader.errors.clone(),
            passes: self.passes,
            modaliases: self.seen.len(),
            unmatched: self.unmatched,
            usb_disk: self.usb_disk,
        }
    }

    /// One scan: submit the modules new devices need (and, the first time,
    /// `also`), start what is ready, log what loaded and failed since the
    /// last pass, and note whether anything changed.
    fn pass<K: Kernel>(&mut self, loader: &mut Loader<'_, K>, log: &mut dyn FnMut(&str)) {
        self.passes += 1;
        let also = std::mem::take(&mut self.also);
        let scan = scan_devices(&self.sys);
        let new_devices = submit_new_devices(loader, scan.aliases, &mut self.seen, &mut self.unmatched, also);
        loader.pump(Some(Duration::ZERO));
        let disks = block_devices(&self.sys);
        let new = &loader.loaded[self.logged.0..];
        if !new.is_empty() {
            log(&format!("coldplug pass {}: loaded {}", self.passes, new.join(" ")));
            if self.usb_host_at.is_none() && new.iter().any(|m| USB_HOSTS.contains(&m.as_str())) {
                self.usb_host_at = Some(Instant::now());
            }
        }
        for e in &loader.errors[self.logged.1..] {
            log(&format!("coldplug: {e}"));
        }
        self.changed =
            new_devices > 0 || !new.is_empty() || disks != self.disks || scan.usb_devices != self.usb_devices;
        if self.changed {
            self.changed_at = Instant::now();
            self.disks = disks;
            self.usb_devices = scan.usb_devices;
        }
        self.logged = (loader.loaded.len(), loader.errors.len());
    }

    /// While modules load: wait for a driver's insert to end (its probe
    /// made devices), or for the poll while only drivers run.
    fn wait<K: Kernel>(&self, loader: &mut Loader<'_, K>) {
        let since = Instant::now();
        loop {
            let left = self.settle.poll.saturating_sub(since.elapsed());
            let polling = loader.running_libraries == 0;
            let wait = if polling {
                left
            } else {
                self.settle.limit.saturating_sub(self.start.elapsed())
            };
            match loader.pump(Some(wait)) {
                Some((_, true)) => return,
                Some((_, false)) if loader.busy() && (!polling || !left.is_zero()) => {}
                _ => return,
            }
        }
    }
}

/// Submit ([`Loader::submit`]) the modules for every modalias in `aliases`
/// not in `seen` (adding them), and the modules `also` names; counts the
/// modaliases no module matches in `unmatched`. Returns how many new
/// modaliases there were.
fn submit_new_devices<K: Kernel>(
    loader: &mut Loader<'_, K>,
    aliases: Vec<String>,
    seen: &mut HashSet<String>,
    unmatched: &mut usize,
    also: Vec<String>,
) -> usize {
    let mut new_devices = 0;
    let mut wanted: Vec<String> = Vec::new();
    for alias in aliases {
        if !seen.insert(alias.clone()) {
            continue;
        }
        new_devices += 1;
        let modules = loader.db.match_alias(&alias);
        if modules.is_empty() {
            *unmatched += 1;
        }
        for m in modules {
            loader.driver(&m);
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
    for m in also {
        if !wanted.contains(&m) {
            wanted.push(m);
        }
    }
    loader.submit(&wanted);
    new_devices
}

/// The module directory of the running kernel: `/lib/modules/<uname -r>`.
pub fn kernel_dir() -> PathBuf {
    let release = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default();
    Path::new(MODULES_ROOT).join(release)
}

/// The boot's coldplug between its loading ([`coldplug`]) and its settling
/// ([`settle`]). The tables it reads are leaked: they live as long as the
/// worker that loads.
static PENDING: std::sync::Mutex<Option<(Loader<'static, LiveKernel>, Coldplug)>> = std::sync::Mutex::new(None);

/// Coldplug the running system, first part: load the tables of the running
/// kernel, then [`Coldplug::load`] over /sys with `also` and the default
/// [`Settle`]: the drivers of every device there is, and the USB stick's
/// disk. The quiet time that ends a coldplug is left to [`settle`], so the
/// boot finds the stick and reads its config meanwhile.
pub fn coldplug(also: &[&str], log: &mut dyn FnMut(&str)) -> Report {
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
    let db: &'static ModuleDb = Box::leak(Box::new(db));
    let mut loader = live_loader(db).drivers_only_wait();
    let mut c = Coldplug::new(Path::new("/sys"), also, Settle::default());
    c.load(&mut loader, log);
    let report = c.report(&loader);
    *PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((loader, c));
    report
}

/// What [`settle`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    /// A line for the log: how long it waited, what it loaded.
    pub line: String,
    /// Something appeared meanwhile: disks listed before are out of date.
    pub changed: bool,
}

/// Coldplug's second part ([`Coldplug::settle`]): scan until nothing new
/// has appeared for [`Settle::quiet`], loading what new devices need. None
/// when no coldplug is pending.
pub fn settle(log: &mut dyn FnMut(&str)) -> Option<Settled> {
    let (mut loader, mut c) = PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()?;
    let (t, passes, loaded) = (Instant::now(), c.passes, loader.loaded.len());
    let changed = c.settle(&mut loader, log);
    let mut line = format!(
        "drivers settled: nothing new for {} ms ({} ms more, {} more passes",
        c.settle.quiet.as_millis(),
        t.elapsed().as_millis(),
        c.passes - passes
    );
    if loader.loaded.len() > loaded {
        line.push_str(&format!(", loaded {}", loader.loaded[loaded..].join(" ")));
    }
    if changed {
        line.push_str(", something new appeared");
    }
    let ports = usb_ports_pending(&c.sys, &c.ports);
    if !ports.is_empty() {
        line.push_str(&format!(
            ", a device connected but not enumerated on USB port(s) {}",
            ports.join(" ")
        ));
    }
    line.push(')');
    Some(Settled { line, changed })
}

/// One coldplug pass over the running system's devices (no settling):
/// the drivers of devices that appeared since; the modules it inserted.
pub fn rescan() -> Result<Vec<String>, ModuleError> {
    let db = ModuleDb::load(&kernel_dir())?;
    let mut loader = live_loader(&db).drivers_only_wait();
    let (mut seen, mut unmatched) = (HashSet::new(), 0);
    submit_new_devices(
        &mut loader,
        scan_modaliases(Path::new("/sys")),
        &mut seen,
        &mut unmatched,
        Vec::new(),
    );
    while loader.busy() {
        loader.pump(None);
    }
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

    /// Coldplug against the sysfs root `sys` through `loader`: load the
    /// modules of every device, and of `also` (what no device asks for: the
    /// stick's filesystem), and of each device that appears meanwhile
    /// ([`Coldplug::load`]), until [`Settle::quiet`] passes with nothing new
    /// ([`Coldplug::settle`]).
    fn coldplug_with<K: Kernel>(
        loader: &mut Loader<'_, K>,
        sys: &Path,
        also: &[&str],
        settle: Settle,
        log: &mut dyn FnMut(&str),
    ) -> Report {
        let mut c = Coldplug::new(sys, also, settle);
        c.load(loader, log);
        c.settle(loader, log);
        c.report(loader)
    }

    /// Submit `names` and load until nothing is left.
    fn load_all<K: Kernel>(l: &mut Loader<'_, K>, names: &[String]) {
        l.submit(names);
        while l.busy() {
            l.pump(None);
        }
    }

    /// A device `name` on `bus` under the sysfs root `sys`, with its modalias.
    fn put(sys: &Path, bus: &str, name: &str, alias: &str) {
        let d = sys.join("bus").join(bus).join("devices").join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("modalias"), format!("{alias}\n")).unwrap();
    }

    /// A block device `name` in `sys/block` whose sysfs path is `target`.
    fn disk(sys: &Path, name: &str, target: &str) {
        std::os::unix::fs::symlink(target, sys.join("block").join(name)).unwrap();
    }

    /// A sysfs root under `t` holding an xHCI controller and an empty `block` directory.
    fn xhci_host(t: &TempDir) -> PathBuf {
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        put(
            &sys,
            "pci",
            "0000:00:04.0",
            "pci:v00001B36d0000000Dsv00001AF4sd00001100bc0Csc03i30",
        );
        sys
    }

    /// A USB mass-storage interface on that controller (as xhci_pci's probe
    /// makes it appear).
    fn usb_storage_interface(sys: &Path) {
        put(
            sys,
            "usb",
            "2-1:1.0",
            "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00",
        );
    }

    fn quick() -> Settle {
        Settle {
            poll: Duration::ZERO,
            quiet: Duration::ZERO,
            limit: Duration::from_secs(60),
            usb_host_grace: Duration::ZERO,
            usb_disk_wait: Duration::ZERO,
        }
    }

    /// Fast polls and a short quiet time, with a long wait for USB disks:
    /// for the tests where a USB device comes later than the quiet time.
    fn usb_waiting() -> Settle {
        Settle {
            poll: Duration::from_millis(10),
            quiet: Duration::from_millis(50),
            usb_disk_wait: Duration::from_secs(20),
            ..quick()
        }
    }

    #[test]
    fn modaliases_come_from_every_bus_the_cpu_and_dmi() {
        let t = TempDir::new("scan");
        let sys = t.0.join("sys");
        put(&sys, "pci", "0000:00:02.0", "pci:v00001AF4d00001001");
        put(&sys, "virtio", "virtio0", "virtio:d00000002v00001AF4");
        put(&sys, "virtio", "virtio1", "virtio:d00000002v00001AF4");
        std::fs::create_dir_all(sys.join("bus/pci/devices/0000:00:00.0")).unwrap();
        for (rel, alias) in [
            (
                "devices/system/cpu/modalias",
                "cpu:type:x86,ven0000fam0006mod003F:feature:,0099",
            ),
            ("devices/virtual/dmi/id/modalias", "dmi:bvnSeaBIOS:"),
            // A class device's: not on a bus, not read.
            (
                "devices/platform/i8042/serio0/input/input1/modalias",
                "input:b0011v0001",
            ),
        ] {
            let f = sys.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, format!("{alias}\n")).unwrap();
        }
        assert_eq!(
            scan_modaliases(&sys),
            [
                "cpu:type:x86,ven0000fam0006mod003F:feature:,0099",
                "dmi:bvnSeaBIOS:",
                "pci:v00001AF4d00001001",
                "virtio:d00000002v00001AF4"
            ]
        );
        assert!(scan_modaliases(&t.0.join("none")).is_empty());
    }

    #[test]
    fn coldplug_rescans_until_nothing_new() {
        let t = TempDir::new("coldplug");
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        put(
            &sys,
            "pci",
            "0000:00:02.0",
            "pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00",
        );
        put(
            &sys,
            "pci",
            "0000:00:1f.2",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
        );
        put(&sys, "platform", "serial8250", "platform:serial8250");
        let sys2 = sys.clone();
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| match name {
            // virtio_pci makes the virtio device appear, ahci a SCSI disk
            "virtio_pci" => put(&sys2, "virtio", "virtio0", "virtio:d00000002v00001AF4"),
            "ahci" => put(&sys2, "scsi", "0:0:0:0", "scsi:t-0x00"),
            _ => {}
        });
        let mut l = Loader::new(&db, k);
        let mut lines = Vec::new();
        let r = coldplug_with(&mut l, &sys, &["xts"], quick(), &mut |m| lines.push(m.to_string()));
        // pass 1: ahci + virtio_pci (and deps), sd_mod, xts; pass 2: virtio_blk; pass 3: quiet
        assert_eq!(r.passes, 3, "{r:?} {lines:?}");
        for m in [
            "ahci",
            "libata",
            "virtio_pci",
            "virtio_pci_modern_dev",
            "virtio_blk",
            "sd_mod",
            "ecb",
            "xts",
        ] {
            assert!(r.loaded.iter().any(|x| x == m), "{m} not in {:?}", r.loaded);
        }
        let pos = |m: &str| r.loaded.iter().position(|x| x == m).unwrap();
        // sd_mod comes with the SCSI core, in the first pass, before any disk is scanned;
        // what `also` names loads in the first pass too.
        assert!(
            lines[0].starts_with("coldplug pass 1:") && lines[0].contains(" sd_mod") && lines[0].contains(" xts"),
            "{lines:?}"
        );
        assert!(pos("sd_mod") < pos("virtio_blk"), "{:?}", r.loaded);
        assert!(pos("virtio_pci_modern_dev") < pos("virtio_pci"));
        assert!(pos("virtio_pci") < pos("virtio_blk"));
        assert!(pos("ecb") < pos("xts"));
        assert_eq!(r.modaliases, 5);
        assert_eq!(r.unmatched, 1);
        assert!(r.errors.is_empty());
        assert_eq!(r.usb_disk, None);
        assert_eq!(lines.len(), 2, "{lines:?}");
    }

    /// The scan ends once nothing has changed for `quiet`: a block device
    /// that appears late in that time (an NVMe namespace after its
    /// controller's scan) starts the count again.
    #[test]
    fn coldplug_ends_after_quiet_time_counted_from_the_last_new_disk() {
        let t = TempDir::new("quiet");
        let sys = xhci_host(&t);
        let db = db();
        let quiet = Duration::from_millis(400);
        let settle = Settle {
            poll: Duration::from_millis(10),
            quiet,
            ..quick()
        };
        let sys2 = sys.clone();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            disk(
                &sys2,
                "nvme0n1",
                "../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1",
            );
            Instant::now()
        });
        let start = Instant::now();
        let mut l = Loader::new(&db, Fake::new());
        // Loading ends with the first quiet pass; the quiet time is the settling's.
        let mut c = Coldplug::new(&sys, &[], settle);
        c.load(&mut l, &mut |_| {});
        assert!(start.elapsed() < Duration::from_millis(300), "{:?}", start.elapsed());
        assert!(c.settle(&mut l, &mut |_| {}), "the settling saw the new disk");
        let r = c.report(&l);
        let (end, took) = (Instant::now(), start.elapsed());
        let appeared = late.join().unwrap();
        assert!(
            end.duration_since(appeared) >= quiet,
            "ended {:?} after the disk appeared, before {quiet:?} had passed",
            end.duration_since(appeared)
        );
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(r.loaded.contains(&"xhci_pci".to_string()), "{r:?}");
        // Nothing appears: the scan ends `quiet` after the last load, and says nothing changed.
        let start = Instant::now();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys, &[], settle);
        c.load(&mut l, &mut |_| {});
        assert!(!c.settle(&mut l, &mut |_| {}));
        let took = start.elapsed();
        assert!(took >= quiet && took < Duration::from_secs(5), "{took:?}");
    }

    /// Several USB disks come one after another, each scanned after its
    /// interface appears: the quiet time does not end the coldplug while an
    /// interface a driver has taken has no disk yet.
    #[test]
    fn coldplug_waits_for_each_usb_storage_interface_to_get_its_disk() {
        let t = TempDir::new("usb-each");
        let sys = xhci_host(&t);
        let iface = |name: &str| {
            let d = sys.join("bus/usb/devices").join(name);
            std::fs::create_dir_all(d.join("driver")).unwrap();
            std::fs::write(d.join("bInterfaceClass"), "08\n").unwrap();
        };
        iface("2-1:1.0");
        iface("2-2:1.0");
        disk(
            &sys,
            "sda",
            "../devices/pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda",
        );
        assert_eq!(usb_storage_pending(&sys), 1);
        let sys2 = sys.clone();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            disk(
                &sys2,
                "sdb",
                "../devices/pci0000:00/0000:00:04.0/usb2/2-2/2-2:1.0/host1/target1:0:0/1:0:0:0/block/sdb",
            );
            Instant::now()
        });
        let db = db();
        let settle = usb_waiting();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys, &[], settle);
        c.load(&mut l, &mut |_| {});
        c.settle(&mut l, &mut |_| {});
        let end = Instant::now();
        let appeared = late.join().unwrap();
        assert!(end > appeared, "coldplug ended before the second USB disk appeared");
        assert_eq!(usb_storage_pending(&sys), 0);
    }

    /// A hub under `sys`: its device (`maxchild`, `busnum`, `devnum`) and its
    /// ports under its interface; `attached` ports have a device.
    fn hub(sys: &Path, name: &str, bus: u32, dev: u32, ports: u32, attached: &[u32]) {
        let d = sys.join("bus/usb/devices").join(name);
        for (f, v) in [("maxchild", ports), ("busnum", bus), ("devnum", dev)] {
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(f), format!("{v}\n")).unwrap();
        }
        // The kernel's names: a root hub `usb2` has the interface `2-0:1.0`.
        let iface = match name.strip_prefix("usb") {
            Some(n) => format!("{n}-0:1.0"),
            None => format!("{name}:1.0"),
        };
        for p in 1..=ports {
            let port = d.join(format!("{iface}/{name}-port{p}"));
            std::fs::create_dir_all(&port).unwrap();
            if attached.contains(&p) {
                std::fs::create_dir_all(port.join("device")).unwrap();
            }
        }
    }

    #[test]
    fn a_port_with_a_device_connected_and_none_enumerated_is_pending() {
        let t = TempDir::new("ports");
        let sys = xhci_host(&t);
        hub(&sys, "usb2", 2, 1, 4, &[1]);
        hub(&sys, "1-4", 1, 2, 2, &[]);
        // A device that is no hub: never asked.
        put(&sys, "usb", "2-1", "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00");
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = asked.clone();
        let status = PortStatus::from_fn(move |bus, dev, port| {
            log.lock().unwrap().push((bus, dev, port));
            match (bus, dev, port) {
                (2, 1, 2) | (1, 2, 1) => Some(true),
                (2, 1, 3) => Some(false),
                _ => None,
            }
        });
        assert_eq!(usb_ports_pending(&sys, &status), ["1-4-port1", "usb2-port2"]);
        // Port 1 of usb2 has its device: not asked.
        let mut asked = asked.lock().unwrap().clone();
        asked.sort_unstable();
        assert_eq!(asked, [(1, 2, 1), (1, 2, 2), (2, 1, 2), (2, 1, 3), (2, 1, 4)]);
    }

    /// Two USB disks of one model have one modalias: the second one's
    /// arrival is still something new, and restarts the quiet time.
    #[test]
    fn a_second_device_with_the_same_modalias_is_something_new() {
        let t = TempDir::new("same-alias");
        let sys = xhci_host(&t);
        const ALIAS: &str = "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00";
        put(&sys, "usb", "2-1", ALIAS);
        let db = db();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys, &[], quick()).with_port_status(PortStatus::from_fn(|_, _, _| None));
        for _ in 0..10 {
            c.pass(&mut l, &mut |_| {});
            while l.busy() {
                l.pump(None);
            }
        }
        c.pass(&mut l, &mut |_| {});
        assert!(!c.changed);
        put(&sys, "usb", "2-2", ALIAS);
        c.pass(&mut l, &mut |_| {});
        assert!(c.changed, "a second device of the same model went unseen");
        c.pass(&mut l, &mut |_| {});
        assert!(!c.changed);
    }

    /// A hub enumerates its ports one after another: the quiet time does not
    /// end the coldplug while a port has a device connected and not yet
    /// enumerated, though nothing new has appeared for longer than it.
    #[test]
    fn coldplug_waits_for_a_connected_port_to_get_its_device() {
        let t = TempDir::new("port-wait");
        let sys = xhci_host(&t);
        hub(&sys, "usb2", 2, 1, 2, &[1]);
        let status = PortStatus::from_fn(|_, _, port| Some(port == 2));
        let sys2 = sys.clone();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            std::fs::create_dir_all(sys2.join("bus/usb/devices/usb2/2-0:1.0/usb2-port2/device")).unwrap();
            Instant::now()
        });
        let db = db();
        let settle = usb_waiting();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys, &[], settle).with_port_status(status);
        let mut lines = Vec::new();
        c.load(&mut l, &mut |s| lines.push(s.to_string()));
        c.settle(&mut l, &mut |s| lines.push(s.to_string()));
        let end = Instant::now();
        let appeared = late.join().unwrap();
        assert!(
            end > appeared,
            "coldplug ended while a port still had a device to enumerate"
        );
        let waits: Vec<_> = lines.iter().filter(|l| l.contains("USB port")).collect();
        assert_eq!(
            waits,
            ["coldplug: a device is connected to USB port(s) usb2-port2 and not yet enumerated: waiting for it"],
            "{lines:?}"
        );
        // A port that stays connected without a device holds it only within usb_disk_wait.
        let sys3 = t.0.join("sys3");
        std::fs::create_dir_all(sys3.join("block")).unwrap();
        hub(&sys3, "usb2", 2, 1, 2, &[]);
        let settle = Settle {
            usb_disk_wait: Duration::from_millis(300),
            ..settle
        };
        let start = Instant::now();
        let mut l = Loader::new(&db, Fake::new());
        let mut c = Coldplug::new(&sys3, &[], settle).with_port_status(PortStatus::from_fn(|_, _, _| Some(true)));
        c.load(&mut l, &mut |_| {});
        c.settle(&mut l, &mut |_| {});
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(5),
            "{took:?}"
        );
    }

    #[test]
    fn coldplug_waits_for_a_usb_disk() {
        let t = TempDir::new("usb");
        let sys = xhci_host(&t);
        let sys2 = sys.clone();
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| {
            if name == "xhci_pci" {
                usb_storage_interface(&sys2);
            }
        });
        let mut l = Loader::new(&db, k);
        let r = coldplug_with(&mut l, &sys, &[], quick(), &mut |_| {});
        assert!(r.loaded.contains(&"usb_storage".to_string()), "{r:?}");
        assert_eq!(r.passes, 3, "{r:?}");
        assert_eq!(r.usb_disk, Some(false));
        // With a long USB grace the quiet passes go on, up to the limit.
        let mut l2 = Loader::new(&db, Fake::new());
        let long_grace = Settle {
            poll: Duration::from_millis(10),
            usb_host_grace: Duration::from_secs(3600),
            limit: Duration::from_millis(300),
            ..quick()
        };
        let start = Instant::now();
        let r2 = coldplug_with(&mut l2, &sys, &[], long_grace, &mut |_| {});
        assert!(start.elapsed() >= Duration::from_millis(300), "{r2:?}");
        assert!(r2.passes > 3, "{r2:?}");
        assert!(r2.loaded.contains(&"xhci_pci".to_string()), "{r2:?}");
        disk(
            &sys,
            "sda",
            "../devices/pci0000:00/0000:00:04.0/usb2/2-1/host0/block/sda",
        );
        assert!(usb_block_present(&sys.join("block")));
    }

    /// The USB disk's SCSI device appears only after the quiet passes (as
    /// usb-storage's scan makes it): sd_mod is there already (it came with
    /// the SCSI core), the disk appears, and the wait ends with it.
    #[test]
    fn coldplug_waits_for_a_late_usb_disk_with_its_driver_loaded_ahead() {
        let t = TempDir::new("usb-late");
        let sys = xhci_host(&t);
        let sys2 = sys.clone();
        let db = db();
        let mut k = Fake::new();
        k.on_insert = Box::new(move |name| match name {
            "xhci_pci" => usb_storage_interface(&sys2),
            "usb_storage" => {
                // The scan: the SCSI disk and its block device show up later.
                let sys3 = sys2.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(300));
                    put(&sys3, "scsi", "0:0:0:0", "scsi:t-0x00");
                    disk(
                        &sys3,
                        "sda",
                        "../devices/pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda",
                    );
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
        let r = coldplug_with(&mut l, &sys, &[], settle, &mut |m| lines.push(m.to_string()));
        assert_eq!(r.usb_disk, Some(true), "{r:?}");
        assert!(
            lines
                .iter()
                .any(|m| m.starts_with("coldplug pass 2:") && m.contains("usb_storage") && m.ends_with(" sd_mod")),
            "{lines:?}"
        );
    }

    /// A kernel shared by threads: what was inserted, in order; the inserts
    /// of `meet` each wait (up to 5 s) until all of them have begun; the
    /// inserts of `fail` fail with ENOEXEC.
    #[derive(Clone)]
    struct Shared {
        loaded: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
        meet: &'static [&'static str],
        fail: &'static [&'static str],
        met: std::sync::Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>,
        apart: std::sync::Arc<AtomicBool>,
    }

    impl Shared {
        fn new(meet: &'static [&'static str], fail: &'static [&'static str]) -> Self {
            Shared {
                loaded: Default::default(),
                meet,
                fail,
                met: Default::default(),
                apart: Default::default(),
            }
        }
    }

    impl Kernel for Shared {
        fn is_loaded(&self, name: &str) -> bool {
            self.loaded.lock().unwrap().iter().any(|m| m == name)
        }
        fn insert(&mut self, name: &str, path: &Path, _: &str) -> Result<(), ModuleError> {
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
            let needs: &[(&str, &[&str])] = &[
                ("libata", &["scsi_common", "scsi_mod"]),
                ("libahci", &["libata"]),
                ("ahci", &["libahci", "libata"]),
                ("sd_mod", &["scsi_common", "scsi_mod"]),
                ("usb_storage", &["scsi_common", "scsi_mod"]),
                ("virtio_pci", &["virtio_pci_modern_dev"]),
                ("xhci_pci", &["xhci_hcd"]),
                ("libcrc32c", &["crc32c_generic"]),
            ];
            if let Some((_, deps)) = needs.iter().find(|(m, _)| *m == name) {
                let l = self.loaded.lock().unwrap();
                assert!(
                    deps.iter().all(|d| l.iter().any(|m| m == d)),
                    "{name} before its deps: {l:?}"
                );
            }
            if self.fail.contains(&name) {
                return Err(ModuleError::Load {
                    name: name.into(),
                    path: path.into(),
                    errno: libc::ENOEXEC,
                });
            }
            self.loaded.lock().unwrap().push(name.to_string());
            Ok(())
        }
        fn fork(&self) -> Option<Box<dyn Kernel + Send>> {
            Some(Box::new(self.clone()))
        }
    }

    /// Each module loads as soon as what it needs is in, beside whatever
    /// else is ready: libata, usb_storage and sd_mod share the SCSI core and
    /// still load at once (with virtio's and USB's, which share nothing),
    /// and never before the modules they need.
    #[test]
    fn modules_load_at_once_as_soon_as_their_dependencies_are_in() {
        let db = db();
        let k = Shared::new(
            &["libata", "usb_storage", "sd_mod", "virtio_pci_modern_dev", "xhci_hcd"],
            &[],
        );
        let (loaded, apart) = (k.loaded.clone(), k.apart.clone());
        let mut l = Loader::new(&db, k);
        let names: Vec<String> = ["ahci", "virtio_pci", "usb_storage", "xhci_pci", "sd_mod"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        load_all(&mut l, &names);
        assert!(!apart.load(Ordering::SeqCst), "the five did not load at once");
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
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        assert_eq!(loaded.lock().unwrap().len(), want.len());
        // Loaded already: nothing loads twice.
        load_all(&mut l, &names);
        assert_eq!(l.loaded.len(), want.len());
        assert!(!l.busy());
    }

    /// A kernel for threads whose `ahci` insert lasts until `virtio_blk` is
    /// in (as a driver's insert lasts for its probe), or 5 s; `virtio_pci`
    /// makes the virtio disk's device appear under `sys`.
    #[derive(Clone)]
    struct SlowAhci {
        loaded: std::sync::Arc<(std::sync::Mutex<Vec<String>>, std::sync::Condvar)>,
        sys: PathBuf,
        waited_out: std::sync::Arc<AtomicBool>,
    }

    impl Kernel for SlowAhci {
        fn is_loaded(&self, name: &str) -> bool {
            self.loaded.0.lock().unwrap().iter().any(|m| m == name)
        }
        fn insert(&mut self, name: &str, _: &Path, _: &str) -> Result<(), ModuleError> {
            let (list, cv) = &*self.loaded;
            if name == "ahci" {
                let l = list.lock().unwrap();
                let (l, t) = cv
                    .wait_timeout_while(l, Duration::from_secs(5), |l| !l.iter().any(|m| m == "virtio_blk"))
                    .unwrap();
                drop(l);
                self.waited_out.store(t.timed_out(), Ordering::SeqCst);
            }
            if name == "virtio_pci" {
                put(&self.sys, "virtio", "virtio0", "virtio:d00000002v00001AF4");
            }
            list.lock().unwrap().push(name.to_string());
            cv.notify_all();
            Ok(())
        }
        fn fork(&self) -> Option<Box<dyn Kernel + Send>> {
            Some(Box::new(self.clone()))
        }
    }

    /// Coldplug scans again while a driver's insert still runs: the virtio
    /// disk's driver loads while AHCI's ports are being probed, not after.
    #[test]
    fn coldplug_loads_new_devices_drivers_while_a_driver_is_still_probing() {
        let t = TempDir::new("overlap");
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        put(
            &sys,
            "pci",
            "0000:00:02.0",
            "pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00",
        );
        put(
            &sys,
            "pci",
            "0000:00:1f.2",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
        );
        let k = SlowAhci {
            loaded: Default::default(),
            sys: sys.clone(),
            waited_out: Default::default(),
        };
        let (waited_out, inserted) = (k.waited_out.clone(), k.loaded.clone());
        let db = db();
        let mut l = Loader::new(&db, k).drivers_only_wait();
        let settle = Settle {
            poll: Duration::from_millis(10),
            ..quick()
        };
        let start = Instant::now();
        let r = coldplug_with(&mut l, &sys, &[], settle, &mut |_| {});
        assert!(
            !waited_out.load(Ordering::SeqCst),
            "virtio_blk waited for ahci's insert to end"
        );
        assert!(start.elapsed() < Duration::from_secs(4), "{:?}", start.elapsed());
        for m in ["ahci", "virtio_pci", "virtio_blk", "sd_mod"] {
            assert!(r.loaded.iter().any(|x| x == m), "{m}: {r:?}");
        }
        // In the kernel, virtio_blk was in before ahci's insert ended (the loader may hear of
        // the two in either order).
        let order = inserted.0.lock().unwrap().clone();
        let pos = |m: &str| order.iter().position(|x| x == m).unwrap();
        assert!(pos("virtio_blk") < pos("ahci"), "{order:?}");
        assert!(!l.busy());
    }

    /// A module that fails fails what needs it, which is never inserted; a
    /// soft dependency's failure costs nothing; everything else loads. The
    /// same one at a time and at once; what was tried is not tried again.
    #[test]
    fn what_needs_a_failed_module_fails_and_the_rest_loads() {
        let db = db();
        let names: Vec<String> = ["ahci", "sd_mod", "raid456", "nope"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        let check = |loaded: Vec<String>, errors: &[ModuleError]| {
            let mut loaded = loaded;
            loaded.sort_unstable();
            assert_eq!(
                loaded,
                [
                    "crc32c_generic",
                    "libcrc32c",
                    "raid456",
                    "scsi_common",
                    "scsi_mod",
                    "sd_mod"
                ],
                "{errors:?}"
            );
            let mut failed: Vec<&str> = errors.iter().filter_map(ModuleError::module).collect();
            failed.sort_unstable();
            assert_eq!(
                failed,
                ["crc32c_intel", "libata"],
                "ahci and libahci are never tried: {errors:?}"
            );
        };
        let mut k = Fake::new();
        k.fail = vec![("libata", libc::ENOEXEC), ("crc32c_intel", libc::ENODEV)];
        let mut l = Loader::new(&db, k);
        load_all(&mut l, &names);
        assert!(!l.kernel.params.iter().any(|(m, _)| m == "ahci" || m == "libahci"));
        check(l.loaded.clone(), &l.errors);
        let k = Shared::new(&[], &["libata", "crc32c_intel"]);
        let inserted = k.loaded.clone();
        let mut l = Loader::new(&db, k);
        load_all(&mut l, &names);
        check(l.loaded.clone(), &l.errors);
        assert_eq!(inserted.lock().unwrap().len(), 6);
        // Tried once: a later submit tries nothing again, ahci still fails with libata's error.
        load_all(&mut l, &["ahci".to_string()]);
        assert_eq!(l.errors.len(), 2, "{:?}", l.errors);
        assert_eq!(
            l.earlier_error("ahci").as_ref().and_then(ModuleError::module),
            Some("libata")
        );
        // Coldplug says what failed.
        let t = TempDir::new("failed");
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        put(
            &sys,
            "pci",
            "0000:00:1f.2",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
        );
        let mut k = Fake::new();
        k.fail = vec![("libata", libc::ENOEXEC)];
        let mut l = Loader::new(&db, k);
        let mut lines = Vec::new();
        let r = coldplug_with(&mut l, &sys, &[], quick(), &mut |m| lines.push(m.to_string()));
        assert!(
            lines
                .iter()
                .any(|m| m.starts_with("coldplug: module libata: finit_module")),
            "{lines:?}"
        );
        assert_eq!(r.errors.len(), 1);
        assert_eq!(r.loaded, ["scsi_common", "scsi_mod", "sd_mod"]);
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
        let sys = xhci_host(&t);
        disk(
            &sys,
            "sda",
            "../devices/pci0000:00/0000:00:04.0/usb2/2-1/host0/block/sda",
        );
        let db = db();
        let mut l = Loader::new(&db, Fake::new());
        let long_grace = Settle {
            usb_host_grace: Duration::from_secs(3600),
            ..quick()
        };
        let r = coldplug_with(&mut l, &sys, &[], long_grace, &mut |_| {});
        assert_eq!(r.passes, 2, "a pass that loads, a quiet one: {r:?}");
    }

    /// Coldplug's drivers (the modules a device's modalias matched) are
    /// inserted as modprobe inserts them, so their insert returns with their
    /// devices probed; every other module it loads (libraries, what `also`
    /// names) without waiting for the system's asynchronous work. A plain
    /// load, and a module whose own parameters say, keep theirs.
    #[test]
    fn only_the_drivers_of_devices_wait_for_probes() {
        let t = TempDir::new("no-wait");
        let sys = t.0.join("sys");
        std::fs::create_dir_all(sys.join("block")).unwrap();
        put(
            &sys,
            "pci",
            "0000:00:1f.2",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
        );
        let db = db();
        let mut l = Loader::new(&db, Fake::new())
            .with_params(module_params("libata.async_probe=0 scsi_mod.x=1"))
            .drivers_only_wait();
        coldplug_with(&mut l, &sys, &["xts"], quick(), &mut |_| {});
        let given: HashMap<String, String> = l.kernel.params.iter().cloned().collect();
        let want: &[(&str, &str)] = &[
            ("ahci", ""),
            ("libahci", NO_WAIT),
            ("libata", "async_probe=0"),
            ("scsi_mod", "x=1 async_probe=1"),
            ("scsi_common", NO_WAIT),
            ("sd_mod", NO_WAIT),
            ("ecb", NO_WAIT),
            ("xts", NO_WAIT),
        ];
        for (m, p) in want {
            assert_eq!(given.get(*m).map(String::as_str), Some(*p), "{m}: {given:?}");
        }
        assert_eq!(given.len(), want.len(), "{given:?}");
        let mut plain = Loader::new(&db, Fake::new());
        plain.load("ahci").unwrap();
        assert!(
            plain.kernel.params.iter().all(|(_, p)| p.is_empty()),
            "{:?}",
            plain.kernel.params
        );
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
