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
//!
//! Modules no device asks for by modalias load beside the drivers when the
//! kernel command line names them (`bootbench.modules=scsi_debug,foo`,
//! [`parse_named`]): an out-of-tree or rarely needed driver that the image
//! carries (`bootbench-image initramfs --add-module NAME`). Each one's
//! parameters come from the command line as modprobe takes them
//! (`scsi_debug.zbc=managed`, [`module_params`]), and what came of it goes
//! into the document ([`named_outcome`]).

use std::collections::HashMap;
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

/// What `bootbench.modules=` takes, said in its errors.
pub const NAMED_EXPECTED: &str =
    "module names (letters, digits, '_' and '-') separated by commas, as in scsi_debug,null_blk";

/// The modules of `bootbench.modules=` (`value`): names separated by
/// commas, each in the kernel's form (`-` as `_`), each once, in order. An
/// empty value names none. Anything else (an empty name, a character no
/// module name has) is an error naming the value and what is expected; the
/// caller puts the key in front.
pub fn parse_named(value: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    if value.is_empty() {
        return Ok(out);
    }
    for word in value.split(',') {
        let ok = !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            let what = if word.is_empty() {
                "an empty name".to_string()
            } else {
                format!("{word:?}")
            };
            return Err(format!("{value:?} holds {what}; expected {NAMED_EXPECTED}"));
        }
        let name = canonical(word);
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// What came of the modules `names` (from [`parse_named`]) once the drivers
/// settled: loaded when `in_kernel` says the kernel has it (loaded by the
/// boot, before it, or built in), else failed with the loader's error about
/// it (among `errors`, the coldplug's), or, without one, that it is not
/// there (a module it needs failed, which the console names). `params` are the command line's
/// ([`module_params`]).
pub fn named_outcome(
    names: &[String],
    params: &HashMap<String, String>,
    errors: &[ModuleError],
    in_kernel: &dyn Fn(&str) -> bool,
) -> Vec<bench_core::document::result::NamedModule> {
    use bench_core::document::result::{NamedModule, NamedModuleStatus};
    names
        .iter()
        .map(|name| {
            let loaded = in_kernel(name);
            let error = (!loaded).then(|| {
                let own = errors
                    .iter()
                    .find(|e| e.module().map(canonical).as_deref() == Some(name));
                match own {
                    Some(ModuleError::Unknown { .. }) => format!(
                        "not in this initramfs (add it to the image: bootbench-image initramfs --add-module {name}, \
                         or make image EXTRA_MODULES={name})"
                    ),
                    Some(e) => e.to_string(),
                    None => "not in the kernel after the drivers settled (a module it needs failed: \
                             the console's coldplug lines say which)"
                        .to_string(),
                }
            });
            NamedModule {
                name: name.clone(),
                params: params.get(name).filter(|p| !p.is_empty()).cloned(),
                status: if loaded {
                    NamedModuleStatus::Loaded
                } else {
                    NamedModuleStatus::Failed
                },
                error,
            }
        })
        .collect()
}

/// Load one module (or alias) with its dependencies into the running
/// kernel; returns the modules newly inserted, in order.
pub fn load(name: &str) -> Result<Vec<String>, ModuleError> {
    let db = ModuleDb::load(&kernel_dir())?;
    let mut loader = live_loader(&db);
    loader.load(name)?;
    Ok(loader.loaded)
}

#[cfg(test)]
mod named_tests {
    use super::*;
    use bench_core::document::result::NamedModuleStatus;

    #[test]
    fn named_modules_parse_or_say_what_is_wrong() {
        let ok: &[(&str, &[&str])] = &[
            ("", &[]),
            ("scsi_debug", &["scsi_debug"]),
            ("scsi-debug,null_blk,scsi_debug", &["scsi_debug", "null_blk"]),
            ("zfs,spl,Foo9", &["zfs", "spl", "Foo9"]),
        ];
        for (value, want) in ok {
            let want: Vec<String> = want.iter().map(|m| (*m).to_string()).collect();
            assert_eq!(parse_named(value), Ok(want), "{value:?}");
        }
        let bad: &[(&str, &str)] = &[
            (",", "an empty name"),
            ("a,", "an empty name"),
            ("a,,b", "an empty name"),
            ("a.b", "\"a.b\""),
            ("scsi_debug,x/y", "\"x/y\""),
            ("sd mod", "\"sd mod\""),
            ("a=b", "\"a=b\""),
        ];
        for (value, what) in bad {
            let e = parse_named(value).unwrap_err();
            assert_eq!(
                e,
                format!("{value:?} holds {what}; expected {NAMED_EXPECTED}"),
                "{value:?}"
            );
        }
    }

    #[test]
    fn a_named_module_s_outcome_is_the_kernel_s_word_with_the_loader_s_error() {
        let names: Vec<String> = ["scsi_debug", "null_blk", "zfs", "dm_zero"].map(String::from).to_vec();
        let params = modprobe::module_params("scsi_debug.zbc=managed scsi-debug.dev_size_mb=64 zfs.x=1");
        let errors = vec![
            ModuleError::Unknown { name: "zfs".into() },
            ModuleError::Load {
                name: "null-blk".into(),
                path: "/lib/modules/k/null_blk.ko".into(),
                errno: libc::EINVAL,
            },
            ModuleError::Load {
                name: "ahci".into(),
                path: "/lib/modules/k/ahci.ko".into(),
                errno: libc::ENODEV,
            },
        ];
        let out = named_outcome(&names, &params, &errors, &|m| m == "scsi_debug");
        let got: Vec<(&str, NamedModuleStatus, Option<&str>)> = out
            .iter()
            .map(|m| (m.name.as_str(), m.status, m.params.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "scsi_debug",
                    NamedModuleStatus::Loaded,
                    Some("zbc=managed dev_size_mb=64")
                ),
                ("null_blk", NamedModuleStatus::Failed, None),
                ("zfs", NamedModuleStatus::Failed, Some("x=1")),
                ("dm_zero", NamedModuleStatus::Failed, None),
            ]
        );
        assert_eq!(out[0].error, None);
        assert_eq!(
            out[1].error.as_deref(),
            Some("module null-blk: finit_module /lib/modules/k/null_blk.ko: Invalid argument (os error 22)"),
            "its own error, - and _ alike; not ahci's"
        );
        let zfs = out[2].error.as_deref().unwrap_or_default();
        assert!(
            zfs.starts_with("not in this initramfs") && zfs.contains("--add-module zfs"),
            "{zfs}"
        );
        assert!(
            out[3]
                .error
                .as_deref()
                .unwrap_or_default()
                .starts_with("not in the kernel after the drivers settled"),
            "{:?}",
            out[3]
        );
    }
}
