//! Inserting modules: the [`Kernel`] they go into (the running one, or a
//! fake in tests) and the [`Loader`], which loads each module with its
//! dependencies, several at once as soon as what each needs is in.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::Path;
use std::sync::mpsc::{Receiver, Sender};
use std::time::Duration;

use nix::errno::Errno;
use nix::kmod::ModuleInitFlags;

use super::{ModuleDb, ModuleError};
use crate::sysfs;

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
        sysfs::live("module").join(name).exists()
    }

    fn insert(&mut self, name: &str, path: &Path, params: &str) -> Result<(), ModuleError> {
        let f = File::open(path).map_err(|e| ModuleError::Open {
            name: name.to_string(),
            path: path.to_path_buf(),
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        })?;
        // Parameters come from the command line and a fixed table: no NUL inside.
        let params = std::ffi::CString::new(params).unwrap_or_default();
        // EEXIST: a module of that name is already loaded; ENOEXEC: not a
        // module for this kernel; the module init's own error otherwise.
        match nix::kmod::finit_module(&f, &params, ModuleInitFlags::empty()) {
            Ok(()) | Err(Errno::EEXIST) => Ok(()),
            Err(errno) => Err(ModuleError::Load {
                name: name.to_string(),
                path: path.to_path_buf(),
                errno: errno as i32,
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
    pub(super) db: &'a ModuleDb,
    pub(super) kernel: K,
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
    pub(super) running_libraries: usize,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::testkit::*;
    use crate::modules::*;
    use crate::testutil::TempDir;

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
}
