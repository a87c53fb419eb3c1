//! Kernel modules: the tables the image builder wrote
//! (`/lib/modules/<kver>/modules.{dep,alias,softdep}`, made by
//! `image/src/modset.rs`; [`ModuleDb`], in `table.rs`), coldplug (match
//! every device's modalias against the alias globs, load with dependencies,
//! rescan until nothing new appears for a while; `coldplug.rs`), the loader
//! both use (`loader.rs`), and the kernel's modprobe helper
//! (`/sbin/modprobe -q -- NAME`, a symlink to this binary; `modprobe.rs`).
//!
//! Loading order for one module: its soft `pre:` dependencies (each with its
//! own dependencies), its hard dependencies from the END of its modules.dep
//! list backwards (the list is transitive, the last entry has no
//! dependencies of its own), the module itself, then its `post:` soft
//! dependencies. Module names compare with `-` and `_` equal. Coldplug loads
//! many at once, each as soon as what it needs is in ([`Loader::pump`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

mod coldplug;
mod loader;
mod modprobe;
mod table;
#[cfg(test)]
mod testkit;

pub use coldplug::{
    coldplug, rescan, scan_modaliases, settle, usb_block_present, usb_ports_pending, usb_storage_pending, Coldplug,
    PortStatus, Report, Settle, Settled,
};
pub use loader::{Kernel, LiveKernel, Loader, MAX_PARALLEL, NO_WAIT};
use modprobe::live_loader;
pub use modprobe::{modprobe_main, module_params, DEFAULT_PARAMS};
pub use table::{parse_alias, parse_dep, parse_softdep, DepEntry, ModuleDb, PlanItem, SoftDep};

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

/// The module directory of the running kernel: `/lib/modules/<uname -r>`.
pub fn kernel_dir() -> PathBuf {
    let release = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default();
    Path::new(MODULES_ROOT).join(release)
}

/// Load one module (or alias) with its dependencies into the running
/// kernel; returns the modules newly inserted, in order.
pub fn load(name: &str) -> Result<Vec<String>, ModuleError> {
    let db = ModuleDb::load(&kernel_dir())?;
    let mut loader = live_loader(&db);
    loader.load(name)?;
    Ok(loader.loaded)
}
