//! Arrays and layers (docs/arrays-and-existing-storage.md, "Arrays and layers"): assembled from a plan in dependency
//! order (arrays first, then each layer after what it sits on), torn down in
//! reverse order after the run, also after errors; and the "all at once"
//! run (the same test on every disk at the same time).
//!
//! Assembly and teardown go through [`Backend`] so the order and the error
//! handling are unit-tested without the kernel; [`Kernel`] is the real one
//! (md ioctls in `crate::stacks::md`, DM ioctls in `crate::stacks::dm`). Every live stack is
//! registered in [`LIVE`] as soon as it exists, so the live command's panic
//! hook ([`emergency_teardown`]) can tear it down before the process
//! aborts. Booted, a worker that dies leaves its stacks to PID 1
//! ([`teardown_leftovers`]).
//!
//! A stack that cannot be assembled is an error for its own targets and for
//! the stacks above it (their tests are `skipped` with the reason), not for
//! the run.

use std::fmt;
use std::fs::File;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use bench_core::document::result::{AllAtOnce, ScalingPoint, TestResult};
use bench_core::engine::runner::{run_test, SerialRunner, Stop};
use bench_core::io::{Geometry, Target};

use crate::disks::identity::{self, Queue};
use crate::plan::{self, Action, Mode, Plan, PlannedStack, StackKind};
use crate::run::engine::{self, DevTarget, ThreadedRunner};
use crate::safety::{self, Contents, Grant, Refusal};

/// An assembled array or layer.
pub trait Live: Send + fmt::Debug {
    /// Its device (`/dev/md0`, `/dev/dm-0`).
    fn path(&self) -> &str;
    /// Stop or remove it.
    fn teardown(self: Box<Self>) -> Result<(), String>;
}

/// What assembles stacks and tells which remain.
pub trait Backend {
    /// Assemble `st` over `under` (the device paths right beneath it, in
    /// order: an array's members, or a layer's one device), read-only in
    /// the kernel unless `mode` is [`Mode::ReadWrite`].
    fn build(&mut self, st: &PlannedStack, under: &[String], mode: Mode) -> Result<Box<dyn Live>, String>;
    /// The geometry of an assembled device.
    fn geometry(&mut self, path: &str) -> Result<Geometry, String>;
    /// What an assembled device's queue says of it (readahead, scheduler,
    /// rotational, write cache), as the identity of a disk records it.
    fn queue(&mut self, path: &str) -> Queue;
    /// Set an assembled layer's readahead (`queue/read_ahead_kb`): a
    /// tunable of the device bootbench built, not a write to any disk.
    fn set_read_ahead(&mut self, path: &str, bytes: u64) -> Result<(), String>;
    /// The md and dm devices present.
    fn remaining(&mut self) -> Vec<String>;
}

/// `/sys/class/block/NAME/queue` of the device at `path` (`/dev/NAME`).
fn queue_dir(path: &str) -> std::path::PathBuf {
    let name = path.rsplit('/').next().unwrap_or(path);
    crate::sysfs::live(format!("class/block/{name}/queue"))
}

/// Live stacks in the order built: (config name, device).
#[derive(Debug, Default)]
pub struct Registry(Mutex<Vec<(String, Box<dyn Live>)>>);

impl Registry {
    /// An empty registry.
    pub const fn new() -> Registry {
        Registry(Mutex::new(Vec::new()))
    }

    fn lock(&self) -> MutexGuard<'_, Vec<(String, Box<dyn Live>)>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many stacks are live.
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.lock().len()
    }
}

/// The stacks of the running plan, for teardown from the panic path.
pub static LIVE: Registry = Registry::new();

/// Assemble stack `si` of the plan, in the plan's order (those beneath it
/// must have been tried already: `failed` lists the ones that were not
/// assembled, and this one joins them, with why, if it is not assembled).
pub fn assemble_one(
    plan: &mut Plan,
    si: usize,
    backend: &mut dyn Backend,
    reg: &Registry,
    failed: &mut Vec<(usize, String)>,
    log: &mut dyn FnMut(&str),
) {
    let st = plan.stacks[si].clone();
    let under = st.under();
    let why = if st.disks.iter().any(|d| plan.targets[*d].sim.is_some()) {
        Some("not assembled: md and dm need real block devices (the disks beneath are simulated)".to_string())
    } else {
        under.iter().find_map(|u| {
            failed.iter().any(|(t, _)| t == u).then(|| {
                format!(
                    "not assembled: {} beneath it was not assembled",
                    plan.targets[*u].info.path
                )
            })
        })
    };
    if let Some(why) = why {
        log(&format!("bootbench-init: {} {:?}: {why}", kind_word(&st), st.name));
        failed.push((st.target, why));
        return;
    }
    let line = plan::stack_line(plan, &st);
    let mode = stack_mode(plan, &st);
    // The disks right beneath, each held open (checked to be the device the
    // plan described) while the kernel takes it: md and dm are given the
    // held descriptor's path, never the disk's path again.
    let mut held: Vec<(File, String, String)> = Vec::new();
    for u in &under {
        if !plan.is_disk(*u) || plan.targets[*u].id.is_none() {
            continue;
        }
        match hold(plan, *u, mode) {
            Ok((f, path)) => held.push((f, path, plan.targets[*u].info.path.clone())),
            Err(why) => {
                let why = format!("not assembled: {why}");
                log(&format!("bootbench-init: {line}: {why}"));
                failed.push((st.target, why));
                return;
            }
        }
    }
    let paths: Vec<String> = under
        .iter()
        .map(|u| {
            let path = &plan.targets[*u].info.path;
            held.iter()
                .find(|(_, _, p)| p == path)
                .map_or_else(|| path.clone(), |(_, proc_path, _)| proc_path.clone())
        })
        .collect();
    let built = backend.build(&st, &paths, mode).map_err(|e| {
        // Messages name the disks, not the held descriptors.
        held.iter()
            .fold(e, |e, (_, proc_path, path)| e.replace(proc_path.as_str(), path))
    });
    drop(held);
    match built {
        Ok(live) => {
            let path = live.path().to_string();
            reg.lock().push((st.name.clone(), live));
            plan.stacks[si].mode = Some(mode);
            match backend.geometry(&path) {
                Ok(g) => {
                    if let Some(ra) = st.read_ahead_bytes {
                        if let Err(e) = backend.set_read_ahead(&path, ra) {
                            let why = format!("assembled as {path} but its readahead cannot be set to {ra} B: {e}");
                            log(&format!("bootbench-init: {} {:?}: {why}", kind_word(&st), st.name));
                            failed.push((st.target, why));
                            return;
                        }
                    }
                    plan::assembled(plan, st.target, &path, g);
                    identity::set_queue(&mut plan.targets[st.target].info, &backend.queue(&path));
                    plan.targets[st.target].grant = stack_grant(plan, st.target);
                    let t = &mut plan.targets[st.target].info;
                    t.name = path.rsplit('/').next().map(str::to_string);
                    log(&format!("bootbench-init: assembled {path} {}: {line}", mode.name()));
                }
                Err(e) => {
                    let why = format!("assembled as {path} but its geometry cannot be read: {e}");
                    log(&format!("bootbench-init: {} {:?}: {why}", kind_word(&st), st.name));
                    failed.push((st.target, why));
                }
            }
        }
        Err(e) => {
            let why = format!("not assembled: {e}");
            log(&format!("bootbench-init: {line}: {why}"));
            failed.push((st.target, why));
        }
    }
}

/// Open disk `ti` (read-only, not exclusively: md and dm claim it next)
/// for assembling a stack over it, checked on the descriptor to be the
/// device the plan described. Under a read-write stack, a disk this run
/// has not claimed yet is claimed first, so its contents are scanned again
/// just as before its own first write. Returns the descriptor and the path
/// the kernel is given for it (the descriptor's own).
fn hold(plan: &mut Plan, ti: usize, mode: Mode) -> Result<(File, String), String> {
    let path = plan.targets[ti].info.path.clone();
    if let (Mode::ReadWrite, false, Some(g)) = (mode, plan.targets[ti].claimed, plan.targets[ti].grant.as_ref()) {
        drop(g.claim(Contents::Check).map_err(|r| r.to_string())?);
        plan.targets[ti].claimed = true;
    }
    let f = crate::disks::file::open(&path, false, false).map_err(|e| format!("cannot open {path}: {e}"))?;
    check_identity(plan, ti, &f)?;
    let proc_path = safety::reopen_path(&f);
    Ok((f, proc_path))
}

/// `Err` naming what changed if the target open as `f` is not the device
/// the plan described (no identity to compare: simulated, or a stack).
fn check_identity(plan: &Plan, ti: usize, f: &File) -> Result<(), String> {
    let t = &plan.targets[ti];
    let Some(id) = &t.id else { return Ok(()) };
    let (_, now) =
        crate::disks::identity::identify(&t.info.path, f, crate::sysfs::root()).map_err(|e| e.to_string())?;
    let changed = id.changes(&now);
    if changed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} is not the device the plan described: {}",
            t.info.path,
            changed.join("; ")
        ))
    }
}

/// Open target `ti` for its tests. Its descriptor is checked to be the
/// device the plan described. With a grant and a test that writes (its
/// workload, or its fill: [`bench_core::spec::TestSpec::writes`]), the
/// grant is claimed ([`Grant::claim`]: identity, and the contents again on
/// the first claim of the run); a refused claim withdraws the writes of it
/// and of every stack on it ([`plan::withdraw_writes`]: their write tests
/// are skipped with the reason) and the reads still run, unless the device
/// is not the one the plan described: then `Err`, and none of its tests
/// run. The plan's target records may change: the caller copies them to
/// the results.
pub fn open_target(plan: &mut Plan, ti: usize, log: &mut dyn FnMut(&str)) -> Result<DevTarget, String> {
    let path = plan.targets[ti].info.path.clone();
    let writes = plan
        .items
        .iter()
        .any(|it| it.target == ti && it.spec.writes() && matches!(it.action, Action::Run(_)));
    let mut permit = None;
    if let (true, Some(g)) = (writes, plan.targets[ti].grant.clone()) {
        let contents = if plan.targets[ti].claimed {
            Contents::Checked
        } else {
            Contents::Check
        };
        match g.claim(contents) {
            Ok(p) => {
                permit = Some(p);
                plan.targets[ti].claimed = true;
            }
            Err(r) => {
                let why = r.to_string();
                plan::withdraw_writes(plan, ti, &why);
                if matches!(r, Refusal::Changed { .. }) {
                    return Err(why);
                }
                log(&format!(
                    "bootbench-init: {why}; its write tests are skipped, its reads still run"
                ));
            }
        }
    }
    let dev = DevTarget::open(&path, permit).map_err(|e| e.to_string())?;
    // A claimed descriptor was checked by the claim.
    if !dev.writable() {
        check_identity(plan, ti, dev.file())?;
    }
    Ok(dev)
}

/// How a stack is assembled: read-write only when it and every disk
/// beneath it may be written (every disk named in `destructive` and
/// granted); read-only otherwise, so that nothing the kernel does through
/// it writes to a disk nobody named.
pub fn stack_mode(plan: &Plan, st: &PlannedStack) -> Mode {
    if st.is_existing() {
        return Mode::ReadOnly;
    }
    Mode::of(plan.targets[st.target].info.writable && st.disks.iter().all(|d| plan.targets[*d].info.writable))
}

fn kind_word(st: &PlannedStack) -> &'static str {
    match st.kind {
        StackKind::Array { .. } => "array",
        StackKind::Volume { .. } => "volume",
        StackKind::Luks { .. } => "container",
        _ => "layer",
    }
}

/// Tear down every live stack of `reg`, the last built first; returns the
/// failures (each names the stack and device).
pub fn teardown_all(reg: &Registry, log: &mut dyn FnMut(&str)) -> Vec<String> {
    let mut errors = Vec::new();
    loop {
        // Not holding the lock while tearing down: the panic path may need it.
        let Some((name, live)) = reg.lock().pop() else { break };
        let path = live.path().to_string();
        match live.teardown() {
            Ok(()) => log(&format!("bootbench-init: torn down {path} ({name:?})")),
            Err(e) => {
                let m = format!("cannot tear down {path} ({name:?}): {e}");
                log(&format!("bootbench-init: {m}"));
                errors.push(m);
            }
        }
    }
    errors
}

/// After teardown: no md or dm device should remain; says so either way.
pub fn verify(backend: &mut dyn Backend, log: &mut dyn FnMut(&str)) -> Result<(), String> {
    let left = backend.remaining();
    if left.is_empty() {
        log("bootbench-init: stacks torn down: no md or dm device remains");
        Ok(())
    } else {
        let m = format!("md/dm devices remain after teardown: {}", left.join(", "));
        log(&format!("bootbench-init: {m}"));
        Err(m)
    }
}

/// From the live command's panic hook: tear down whatever is live (skipped
/// if the registry is held by the panicking code itself).
pub fn emergency_teardown() {
    let live: Vec<(String, Box<dyn Live>)> = match LIVE.0.try_lock() {
        Ok(mut g) => std::mem::take(&mut *g),
        Err(TryLockError::Poisoned(p)) => std::mem::take(&mut *p.into_inner()),
        Err(TryLockError::WouldBlock) => {
            crate::log::log("stacks: the registry is busy; md/dm devices may remain");
            return;
        }
    };
    for (name, l) in live.into_iter().rev() {
        let path = l.path().to_string();
        match l.teardown() {
            Ok(()) => crate::log::log(&format!("stacks: torn down {path} ({name:?})")),
            Err(e) => crate::log::log(&format!("stacks: cannot tear down {path} ({name:?}): {e}")),
        }
    }
}

/// From PID 1, after its worker died: tear down every md and dm device
/// left (booted, every one is bootbench's: the dm devices named
/// `bootbench-*`, and the md arrays), the layers first, again while any
/// goes (a layer on a layer needs two rounds), then the arrays. Says what
/// it did and what remains.
pub fn teardown_leftovers(log: &mut dyn FnMut(&str)) {
    loop {
        let layers: Vec<String> = crate::stacks::dm::list_active()
            .into_iter()
            .filter(|n| n.starts_with("bootbench-"))
            .collect();
        let before = layers.len();
        for name in &layers {
            match crate::stacks::dm::remove_by_name(name) {
                Ok(()) => log(&format!("supervisor: removed dm device {name}")),
                Err(e) => log(&format!("supervisor: {e}")),
            }
        }
        let after = crate::stacks::dm::list_active()
            .iter()
            .filter(|n| n.starts_with("bootbench-"))
            .count();
        if after == 0 || after >= before {
            break;
        }
    }
    for path in crate::stacks::md::list_active() {
        match crate::stacks::md::stop_path(&path) {
            Ok(()) => log(&format!("supervisor: stopped md array {path}")),
            Err(e) => log(&format!("supervisor: {e}")),
        }
    }
    let left: Vec<String> = crate::stacks::md::list_active()
        .into_iter()
        .chain(crate::stacks::dm::list_active())
        .collect();
    if left.is_empty() {
        log("supervisor: no md or dm device remains");
    } else {
        log(&format!("supervisor: md/dm devices remain: {}", left.join(", ")));
    }
}

/// The grant to write an assembled stack: only for a stack assembled
/// read-write, which it is only when every disk beneath was granted by
/// [`safety::grant`] under the config's `destructive` section. The device
/// is new (made by this run, holding nothing of its own), so the grant is
/// bound to its identity now and its contents are not scanned.
pub fn stack_grant(plan: &Plan, ti: usize) -> Option<Grant> {
    let st = plan.stack_of(ti)?;
    if st.mode != Some(Mode::ReadWrite) {
        return None;
    }
    Grant::for_stack(&plan.targets[ti].info.path).ok()
}

/// On a live system, arrays and layers are allowed only over whole disks
/// that nothing uses: each disk beneath a stack must be a whole block
/// device (not a partition; an existing stack's may be one), with no
/// holder (md, dm, ...), neither it nor a partition of it mounted or used
/// as swap. The error names the disk and the stack. (Assembly itself
/// writes nothing to the disks.)
pub fn check_members_free(plan: &Plan) -> Result<(), String> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default()
        + &std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let used: Vec<String> = mounts
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|d| d.starts_with('/'))
        .filter_map(kernel_name)
        .collect();
    for st in &plan.stacks {
        for d in &st.disks {
            let path = &plan.targets[*d].info.path;
            // Simulated, or absent (the stack is not assembled at all).
            if plan.targets[*d].sim.is_some() || plan.targets[*d].missing.is_some() {
                continue;
            }
            let fail = |why: String| {
                Err(format!(
                    "{}: {path:?} {why}; expected a whole disk that nothing uses",
                    st.at
                ))
            };
            let Some(name) = kernel_name(path) else {
                return fail("is not a block device".to_string());
            };
            member_free(crate::sysfs::root(), &name, st.is_existing(), &used)
                .map_err(|why| format!("{}: {path:?} {why}; expected a whole disk that nothing uses", st.at))?;
        }
    }
    Ok(())
}

/// Whether the block device `name` (under the sysfs root `sys`) may go
/// beneath a stack: a whole disk (a partition only beneath an `existing`
/// stack, whose members often are: the disk's other partitions may then
/// hold the running system), with no holder and not mounted or swap
/// (`used`: kernel names), nor any partition of a whole disk. Err says why.
fn member_free(sys: &std::path::Path, name: &str, existing: bool, used: &[String]) -> Result<(), String> {
    let dir = sys.join("class/block").join(name);
    let partition = dir.join("partition").exists();
    if partition && !existing {
        return Err("is a partition".to_string());
    }
    let mut names = vec![name.to_string()];
    if let (false, Ok(rd)) = (partition, std::fs::read_dir(&dir)) {
        for e in rd.filter_map(Result::ok) {
            if e.path().join("partition").exists() {
                names.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    names.sort();
    for n in &names {
        let holders = crate::sysfs::holders(sys, n);
        if !holders.is_empty() {
            return Err(format!("is in use ({n} is held by {})", holders.join(", ")));
        }
        if used.contains(n) {
            return Err(format!("is in use ({n} is mounted or swap)"));
        }
    }
    Ok(())
}

/// The kernel's name (`sda`, `loop3`) of the block device `path` names,
/// found by its device number (`/sys/dev/block/MAJ:MIN`), so any node of
/// it (a symbolic link, a second node made with mknod) gives the same.
fn kernel_name(path: &str) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path)
        .ok()
        .filter(|m| m.file_type().is_block_device())?;
    let dir = crate::sysfs::block_dir(crate::sysfs::root(), m.rdev()).ok()?;
    dir.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The real backend: md arrays through `crate::stacks::md`, dm layers through
/// `crate::stacks::dm` (named `bootbench-NAME`).
#[derive(Debug, Default)]
pub struct Kernel;

#[derive(Debug)]
struct LiveMd(crate::stacks::md::MdArray);

impl Live for LiveMd {
    fn path(&self) -> &str {
        &self.0.path
    }
    fn teardown(self: Box<Self>) -> Result<(), String> {
        self.0.stop().map_err(|e| e.to_string())
    }
}

#[derive(Debug)]
struct LiveDm(crate::stacks::dm::DmDevice);

impl Live for LiveDm {
    fn path(&self) -> &str {
        &self.0.path
    }
    fn teardown(self: Box<Self>) -> Result<(), String> {
        self.0.remove().map_err(|e| e.to_string())
    }
}

impl Backend for Kernel {
    fn build(&mut self, st: &PlannedStack, under: &[String], mode: Mode) -> Result<Box<dyn Live>, String> {
        let dm_name = format!("bootbench-{}", st.name);
        let on = under.first().cloned().unwrap_or_default();
        match &st.kind {
            StackKind::Array { level, .. } if st.existing.is_some() => {
                let version = st.existing.as_ref().map_or((1, 2), crate::plan::ExistingMd::version);
                crate::stacks::md::assemble_existing(*level, version, under)
                    .map(|a| Box::new(LiveMd(a)) as Box<dyn Live>)
                    .map_err(|e| e.to_string())
            }
            StackKind::Array {
                level,
                chunk_bytes,
                layout,
                ..
            } => {
                let spec = crate::stacks::md::MdSpec {
                    name: st.name.clone(),
                    level: *level,
                    chunk_bytes: *chunk_bytes,
                    layout: *layout,
                    members: under.to_vec(),
                    mode,
                };
                crate::stacks::md::assemble(&spec)
                    .map(|a| Box::new(LiveMd(a)) as Box<dyn Live>)
                    .map_err(|e| e.to_string())
            }
            StackKind::Crypt {
                cipher,
                key_bits,
                no_read_workqueue,
                no_write_workqueue,
                sector_size,
                ..
            } => {
                let opts = crate::stacks::dm::CryptOpts {
                    cipher: cipher.name().to_string(),
                    key_bits: *key_bits,
                    no_read_workqueue: *no_read_workqueue,
                    no_write_workqueue: *no_write_workqueue,
                    sector_size: *sector_size,
                    ..crate::stacks::dm::CryptOpts::default()
                };
                crate::stacks::dm::create_crypt(&dm_name, &on, &opts, mode)
                    .map(|d| Box::new(LiveDm(d)) as Box<dyn Live>)
                    .map_err(|e| e.to_string())
            }
            StackKind::Linear { offset_bytes, .. } => {
                crate::stacks::dm::create_linear(&dm_name, &on, *offset_bytes, mode)
                    .map(|d| Box::new(LiveDm(d)) as Box<dyn Live>)
                    .map_err(|e| e.to_string())
            }
            StackKind::Luks {
                key_file,
                unlock_seconds,
                ..
            } => {
                open_luks(&dm_name, &on, key_file, *unlock_seconds, mode).map(|d| Box::new(LiveDm(d)) as Box<dyn Live>)
            }
            StackKind::Volume { segments, .. } => crate::stacks::dm::create_volume(&dm_name, under, segments, mode)
                .map(|d| Box::new(LiveDm(d)) as Box<dyn Live>)
                .map_err(|e| e.to_string()),
        }
    }

    fn geometry(&mut self, path: &str) -> Result<Geometry, String> {
        DevTarget::open(path, None)
            .map(|d| d.geometry())
            .map_err(|e| e.to_string())
    }

    fn queue(&mut self, path: &str) -> Queue {
        identity::queue_of(&queue_dir(path))
    }

    fn set_read_ahead(&mut self, path: &str, bytes: u64) -> Result<(), String> {
        let file = queue_dir(path).join("read_ahead_kb");
        std::fs::write(&file, format!("{}\n", bytes / 1024)).map_err(|e| format!("{}: {e}", file.display()))
    }

    fn remaining(&mut self) -> Vec<String> {
        let mut v = crate::stacks::md::list_active();
        v.extend(crate::stacks::dm::list_active());
        v
    }
}

/// An existing LUKS container on `on` opened again with its key file (the
/// key derived and checked as the plan did, then handed to dm-crypt and
/// wiped) and mapped read-only as `name`.
fn open_luks(
    name: &str,
    on: &str,
    key_file: &std::path::Path,
    unlock_seconds: u64,
    mode: Mode,
) -> Result<crate::stacks::dm::DmDevice, String> {
    use crate::disks::unlock;
    let key = unlock::read_key_file(key_file).map_err(|e| format!("the key file: {e}"))?;
    let file = crate::disks::file::open(on, false, false).map_err(|e| format!("{on}: {e}"))?;
    let size = crate::sys::blk::size_bytes(&file).map_err(|e| format!("{on}: size: {e}"))?;
    let dev = crate::disks::bytes::Device { file, size };
    let open = unlock::unlock(
        &dev,
        key.bytes(),
        unlock::available_kib(),
        unlock::Budget::seconds(unlock_seconds),
    )
    .map_err(|e| format!("{on}: {e}"))?;
    drop(key);
    crate::stacks::dm::create_luks(name, on, &open, mode).map_err(|e| e.to_string())
}

/// Each real disk of `disks` opened once for every all-at-once test
/// (claimed again if it may be written); `None` for a simulated disk and
/// one that cannot be opened (said in `log`: left out).
fn open_all(plan: &mut Plan, disks: &[usize], log: &mut dyn FnMut(&str)) -> Vec<Option<Arc<DevTarget>>> {
    let mut devs = Vec::with_capacity(disks.len());
    for &ti in disks {
        if plan.targets[ti].sim.is_some() {
            devs.push(None);
            continue;
        }
        let path = plan.targets[ti].info.path.clone();
        match open_target(plan, ti, log) {
            Ok(d) => devs.push(Some(Arc::new(d))),
            Err(e) => {
                log(&format!(
                    "bootbench-init: all at once: cannot open {path}: {e}; left out"
                ));
                devs.push(None);
            }
        }
    }
    devs
}

/// The all-at-once run: after the per-target tests, each test the disks
/// share runs on every disk at the same time, one thread per disk (each
/// with the engine's [`ThreadedRunner`], or a simulated disk of its own).
/// A test that fewer than two disks run is left out (said in `log`). Each
/// group runs under one watchdog at the longest of its tests' deadlines. Each
/// disk's result keeps the test's name and the disk's path as its target;
/// the sum and the comparison with each disk alone are the analysis's.
pub fn all_at_once(
    plan: &mut Plan,
    stop: &Stop,
    log: &mut dyn FnMut(&str),
    mut kmsg: Option<&mut super::kmsg::KernelLog>,
) -> Vec<AllAtOnce> {
    let disks: Vec<usize> = (0..plan.targets.len()).filter(|t| plan.is_disk(*t)).collect();
    let devs = open_all(plan, &disks, log);
    let mut names: Vec<String> = Vec::new();
    for it in &plan.items {
        if disks.contains(&it.target) && !names.contains(&it.spec.name) {
            names.push(it.spec.name.clone());
        }
    }
    let mut out = Vec::new();
    for name in names {
        // (disk index in `disks`, item) for every disk that runs the test.
        let group: Vec<(usize, &plan::PlanItem)> = disks
            .iter()
            .enumerate()
            .filter_map(|(di, ti)| {
                let it = plan.items.iter().find(|it| it.target == *ti && it.spec.name == name)?;
                // A host-managed zoned disk runs its tests laid onto its
                // zones, one disk at a time ([`super::zones::fit`]); not
                // in an all-at-once group, whose steps are the plan's.
                let ready = plan.targets[*ti].sim.is_some()
                    || (devs[di]
                        .as_ref()
                        .is_some_and(|d| !it.spec.workload.writes() || d.writable())
                        && !plan::host_managed(&plan.targets[*ti].info));
                (matches!(it.action, Action::Run(_)) && ready).then_some((di, it))
            })
            .collect();
        if group.len() < 2 {
            log(&format!(
                "bootbench-init: all at once: {name}: fewer than two disks run it; left out"
            ));
            continue;
        }
        let widths = if plan.scaling {
            scaling_widths(group.len())
        } else {
            Vec::new()
        };
        let mut scaling = Vec::new();
        for w in widths {
            let results = together(plan, &disks, &devs, &group[..w], &name, stop, log, kmsg.as_deref_mut());
            scaling.push(point(&results));
        }
        let results = together(plan, &disks, &devs, &group, &name, stop, log, kmsg.as_deref_mut());
        let workload = group[0].1.spec.workload;
        out.push(AllAtOnce {
            test: name,
            workload,
            results,
            scaling,
        });
    }
    for (di, dev) in devs.iter().enumerate() {
        if dev.as_ref().is_some_and(|d| d.wrote()) {
            plan.mark_written(disks[di]);
        }
    }
    out
}

/// The numbers of disks a scaling run adds before all `n`: 2, 4, 8, ...
/// below `n`.
pub fn scaling_widths(n: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut w = 2;
    while w < n {
        v.push(w);
        w *= 2;
    }
    v
}

/// The sums of one run of a test on several disks at once.
fn point(results: &[TestResult]) -> ScalingPoint {
    let sum = |f: fn(&bench_core::document::result::Summary) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = results.iter().filter_map(|r| f(&r.summary)).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    ScalingPoint {
        targets: results.iter().map(|r| r.target.clone()).collect(),
        ok: results
            .iter()
            .all(|r| r.status == bench_core::document::result::Status::Ok),
        read_bytes_per_sec: sum(|s| s.read_bytes_per_sec),
        write_bytes_per_sec: sum(|s| s.write_bytes_per_sec),
        read_iops: sum(|s| s.read_iops),
        write_iops: sum(|s| s.write_iops),
    }
}

/// Run test `name` on every disk of `group` at the same time, one thread
/// per disk, under one watchdog at the longest of their deadlines; each
/// disk's result, in the group's order.
#[allow(clippy::too_many_arguments)] // the run's state, passed down
fn together(
    plan: &Plan,
    disks: &[usize],
    devs: &[Option<Arc<DevTarget>>],
    group: &[(usize, &plan::PlanItem)],
    name: &str,
    stop: &Stop,
    log: &mut dyn FnMut(&str),
    mut kmsg: Option<&mut super::kmsg::KernelLog>,
) -> Vec<TestResult> {
    let paths: Vec<&str> = group
        .iter()
        .map(|(di, _)| plan.targets[disks[*di]].info.path.as_str())
        .collect();
    log(&format!("bootbench-init: all at once: {name} on {}", paths.join(", ")));
    if let Some(k) = kmsg.as_deref_mut() {
        let tis: Vec<usize> = group.iter().map(|(di, _)| disks[*di]).collect();
        k.begin(&tis, name, log);
    }
    // One watchdog for the group, at the longest of its deadlines.
    let limit = group
        .iter()
        .filter_map(|(_, it)| match &it.action {
            Action::Run(steps) => Some(
                plan.test_deadline
                    .unwrap_or_else(|| bench_core::engine::plan::deadline(steps)),
            ),
            Action::Skip(_) => None,
        })
        .max()
        .unwrap_or_default();
    let results: Vec<TestResult> = engine::with_deadline(stop, Duration::from_nanos(limit.0), || {
        std::thread::scope(|s| {
            let handles: Vec<_> = group
                .iter()
                .map(|(di, it)| {
                    let t = &plan.targets[disks[*di]];
                    let dev = devs[*di].as_ref();
                    let (path, sim) = (t.info.path.as_str(), t.sim);
                    s.spawn(move || {
                        let Action::Run(steps) = &it.action else {
                            unreachable!("the group holds only tests that run")
                        };
                        match (sim, dev) {
                            (Some(sim), _) => {
                                let disk = sim.disk();
                                let mut r = SerialRunner {
                                    target: &disk,
                                    clock: &disk.clock,
                                };
                                run_test(&it.spec, path, steps, &mut r, stop, &mut |_| {})
                            }
                            (None, Some(dev)) => {
                                let mut r = ThreadedRunner::new(Arc::clone(dev));
                                run_test(&it.spec, path, steps, &mut r, stop, &mut |_| {})
                            }
                            (None, None) => unreachable!("the group holds only disks that are open"),
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    });
    stop.clear_deadline();
    if let Some(k) = kmsg {
        k.end(log);
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member named through a second device node (mknod) is the disk's
    /// own kernel name, so the in-use checks see its holders and mounts.
    #[test]
    fn a_second_device_node_has_the_disks_kernel_name() {
        let Some(lo) = crate::testutil::Loop::new("kernel-name", &[0u8; 1 << 20]) else {
            return;
        };
        let dir = crate::testutil::TempDir::new("kernel-name");
        let alias = crate::testutil::mknod_alias(&dir, &lo.dev);
        let name = lo.dev.trim_start_matches("/dev/").to_string();
        assert_eq!(kernel_name(&lo.dev), Some(name.clone()));
        assert_eq!(kernel_name(&alias), Some(name));
        assert_eq!(kernel_name("/dev/null"), None);
    }

    /// Every stack in order, as the run does (tested in between there).
    fn assemble_all(
        plan: &mut Plan,
        backend: &mut dyn Backend,
        reg: &Registry,
        log: &mut dyn FnMut(&str),
    ) -> Vec<(usize, String)> {
        let mut failed: Vec<(usize, String)> = Vec::new();
        for si in 0..plan.stacks.len() {
            assemble_one(plan, si, backend, reg, &mut failed, log);
        }
        failed
    }
    use crate::plan::{parse, validate, Overrides};
    use std::sync::{Arc, Mutex as StdMutex};

    /// A fake kernel: records builds and teardowns, fails the stacks named.
    #[derive(Debug, Default)]
    struct Fake {
        events: Arc<StdMutex<Vec<String>>>,
        fail: Vec<String>,
        n: u32,
        left_behind: Vec<String>,
    }

    #[derive(Debug)]
    struct FakeLive {
        path: String,
        events: Arc<StdMutex<Vec<String>>>,
        fail_teardown: bool,
    }

    impl Live for FakeLive {
        fn path(&self) -> &str {
            &self.path
        }
        fn teardown(self: Box<Self>) -> Result<(), String> {
            self.events.lock().unwrap().push(format!("down {}", self.path));
            if self.fail_teardown {
                Err("EBUSY".to_string())
            } else {
                Ok(())
            }
        }
    }

    impl Backend for Fake {
        fn build(&mut self, st: &PlannedStack, under: &[String], mode: Mode) -> Result<Box<dyn Live>, String> {
            if self.fail.contains(&st.name) {
                return Err(format!("{} refused", st.name));
            }
            let path = match st.kind {
                StackKind::Array { .. } => format!("/dev/md{}", self.n),
                _ => format!("/dev/dm-{}", self.n),
            };
            self.n += 1;
            // A disk beneath comes as its held descriptor: name the file it has open.
            let under: Vec<String> = under
                .iter()
                .map(|u| match u.strip_prefix("/proc/self/fd/") {
                    Some(_) => std::fs::read_link(u).map_or_else(|e| format!("{u}: {e}"), |p| p.display().to_string()),
                    None => u.clone(),
                })
                .collect();
            self.events
                .lock()
                .unwrap()
                .push(format!("up {} {path} on {} {}", st.name, under.join("+"), mode.name()));
            Ok(Box::new(FakeLive {
                path: path.clone(),
                events: self.events.clone(),
                fail_teardown: self.left_behind.contains(&path),
            }))
        }
        fn queue(&mut self, path: &str) -> Queue {
            Queue {
                read_ahead_bytes: Some(if path.starts_with("/dev/md") {
                    3 << 20
                } else {
                    128 << 10
                }),
                ..Queue::default()
            }
        }
        fn set_read_ahead(&mut self, path: &str, bytes: u64) -> Result<(), String> {
            self.events.lock().unwrap().push(format!("readahead {path} {bytes}"));
            Ok(())
        }
        fn geometry(&mut self, _path: &str) -> Result<Geometry, String> {
            Ok(Geometry {
                size: 32 << 20,
                logical_block: 512,
                physical_block: 4096,
            })
        }
        fn remaining(&mut self) -> Vec<String> {
            self.left_behind.clone()
        }
    }

    /// A plan of loop-less "disks": files, so nothing is simulated.
    fn file_plan(t: &crate::testutil::TempDir) -> Plan {
        file_plan_with(t, r#"{"workload":"seq_read","runtime":"20ms"}"#, "")
    }

    /// [`file_plan`] with `tests` and more top-level keys (`extra`, which
    /// may name the disks as `{a}`, `{b}`, `{c}`).
    fn file_plan_with(t: &crate::testutil::TempDir, tests: &str, extra: &str) -> Plan {
        let mut disks = Vec::new();
        for n in ["a", "b", "c"] {
            let p = t.0.join(format!("{n}.img"));
            std::fs::write(&p, vec![0u8; 4 << 20]).unwrap();
            disks.push(p.to_string_lossy().into_owned());
        }
        let extra = extra
            .replace("{a}", &disks[0])
            .replace("{b}", &disks[1])
            .replace("{c}", &disks[2]);
        let text = format!(
            r#"{{"tests":[{tests}],
                "arrays":[{{"name":"r0","level":"raid0","members":["{}","{}"],"chunk":"64k"}}],
                "layers":[{{"name":"top","kind":"linear","on":"mid"}},{{"name":"mid","kind":"crypt","on":"r0"}},
                          {{"name":"solo","kind":"linear","on":"{}"}}]{extra}}}"#,
            disks[0], disks[1], disks[2]
        );
        validate(&parse(&text, "t").unwrap(), "t", &Overrides::default()).unwrap()
    }

    /// A stack is read-write in the kernel only when every disk beneath it
    /// may be written; otherwise read-only, and no permit is given for it.
    /// The results record the mode.
    #[test]
    fn stacks_over_disks_not_writable_are_read_only() {
        let t = crate::testutil::TempDir::new("stacks-mode");
        let tests = r#"{"workload":"seq_read","runtime":"20ms"},{"workload":"seq_write","size":"1M"}"#;
        let destructive = format!(
            r#","destructive":{{"confirm":"{}","targets":["{{a}}","{{b}}"]}}"#,
            safety::CONFIRM_PHRASE
        );
        let cases = [
            // (the config's extra keys, r0/mid/top's mode, solo's mode)
            (String::new(), Mode::ReadOnly, Mode::ReadOnly),
            (destructive, Mode::ReadWrite, Mode::ReadOnly),
        ];
        for (extra, r0_mode, solo_mode) in cases {
            let mut plan = file_plan_with(&t, tests, &extra);
            let mut fake = Fake::default();
            let events = fake.events.clone();
            let reg = Registry::new();
            let failed = assemble_all(&mut plan, &mut fake, &reg, &mut |_| {});
            assert!(failed.is_empty(), "{failed:?}");
            let ev = events.lock().unwrap().clone();
            for (name, want) in [("r0", r0_mode), ("mid", r0_mode), ("top", r0_mode), ("solo", solo_mode)] {
                assert!(
                    ev.iter()
                        .any(|e| e.starts_with(&format!("up {name} ")) && e.ends_with(want.name())),
                    "{name} {want}: {ev:?}"
                );
                let st = plan.stacks.iter().find(|s| s.name == name).unwrap();
                let info = plan.targets[st.target].info.stack.as_ref().unwrap();
                assert_eq!(info.mode, Some(want), "{name}");
                if want == Mode::ReadOnly {
                    assert!(
                        stack_grant(&plan, st.target).is_none(),
                        "{name}: no grant for a read-only stack"
                    );
                    assert!(plan.targets[st.target].grant.is_none(), "{name}");
                }
            }
            teardown_all(&reg, &mut |_| {});
        }
    }

    /// The accounting of a stack's test watches every device beneath it,
    /// down to the disks, each with the stack right above it; a disk has
    /// nothing beneath.
    #[test]
    fn accounting_watches_every_device_beneath_a_stack() {
        let t = crate::testutil::TempDir::new("stacks-beneath");
        let mut plan = file_plan(&t);
        for (i, name) in ["sda", "sdb", "sdc"].into_iter().enumerate() {
            plan.targets[i].info.name = Some(name.into());
        }
        let mut fake = Fake::default();
        let reg = Registry::new();
        assert!(assemble_all(&mut plan, &mut fake, &reg, &mut |_| {}).is_empty());
        let (a, b) = (&plan.targets[0].info.path, &plan.targets[1].info.path);
        let top = plan.stacks.iter().find(|s| s.name == "top").unwrap().target;
        let w: Vec<(String, String, String)> = crate::run::accounting::beneath(&plan, top)
            .into_iter()
            .map(|w| (w.path, w.parent, w.stat.to_string_lossy().into_owned()))
            .collect();
        let row = |p: &str, parent: &str, name: &str| {
            (
                p.to_string(),
                parent.to_string(),
                format!("/sys/class/block/{name}/stat"),
            )
        };
        assert_eq!(
            w,
            vec![
                row("/dev/dm-1", "/dev/dm-2", "dm-1"),
                row("/dev/md0", "/dev/dm-1", "md0"),
                row(a, "/dev/md0", "sda"),
                row(b, "/dev/md0", "sdb"),
            ]
        );
        assert!(crate::run::accounting::beneath(&plan, 0).is_empty(), "a disk");
        teardown_all(&reg, &mut |_| {});
    }

    /// A layer given a readahead has it set once up (and recorded in its
    /// options); every assembled stack's record takes its queue's facts
    /// (the fake's md 3 MiB, dm 128 KiB), which the readahead analysis
    /// compares.
    #[test]
    fn a_layers_readahead_is_set_and_every_stack_records_its_queue() {
        let t = crate::testutil::TempDir::new("stacks-readahead");
        let mut plan = file_plan(&t);
        let top = plan.stacks.iter().position(|s| s.name == "top").unwrap();
        plan.stacks[top].read_ahead_bytes = Some(128 << 10);
        let mut fake = Fake::default();
        let events = fake.events.clone();
        let reg = Registry::new();
        assert!(assemble_all(&mut plan, &mut fake, &reg, &mut |_| {}).is_empty());
        let ev = events.lock().unwrap().clone();
        assert_eq!(
            ev.iter().filter(|e| e.starts_with("readahead")).collect::<Vec<_>>(),
            ["readahead /dev/dm-2 131072"],
            "only the layer that asked: {ev:?}"
        );
        let info = |name: &str| {
            let ti = plan.stacks.iter().find(|s| s.name == name).unwrap().target;
            plan.targets[ti].info.clone()
        };
        assert_eq!(info("r0").read_ahead_bytes, Some(3 << 20));
        assert_eq!(info("top").read_ahead_bytes, Some(128 << 10));
        assert_eq!(
            info("top")
                .stack
                .unwrap()
                .options
                .get("read_ahead_kb")
                .map(String::as_str),
            Some("128")
        );
        teardown_all(&reg, &mut |_| {});
    }

    #[test]
    fn assembles_in_order_and_tears_down_in_reverse() {
        let t = crate::testutil::TempDir::new("stacks-order");
        let mut plan = file_plan(&t);
        let mut fake = Fake::default();
        let events = fake.events.clone();
        let reg = Registry::new();
        let mut lines = Vec::new();
        let failed = assemble_all(&mut plan, &mut fake, &reg, &mut |l| lines.push(l.to_string()));
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(reg.live(), 4);
        let a = &plan.targets[0].info.path;
        let b = &plan.targets[1].info.path;
        let c = &plan.targets[2].info.path;
        assert_eq!(
            *events.lock().unwrap(),
            vec![
                format!("up r0 /dev/md0 on {a}+{b} read-only"),
                "up mid /dev/dm-1 on /dev/md0 read-only".to_string(),
                "up top /dev/dm-2 on /dev/dm-1 read-only".to_string(),
                format!("up solo /dev/dm-3 on {c} read-only"),
            ]
        );
        // Targets took their devices' paths and geometry; the stack records follow.
        let top = plan.stacks.iter().find(|s| s.name == "top").unwrap().target;
        assert_eq!(plan.targets[top].info.path, "/dev/dm-2");
        assert_eq!(plan.targets[top].info.name.as_deref(), Some("dm-2"));
        assert_eq!(plan.targets[top].geometry.size, 32 << 20);
        assert_eq!(
            plan.targets[top].info.stack.as_ref().unwrap().on.as_deref(),
            Some("/dev/dm-1")
        );
        events.lock().unwrap().clear();
        let errors = teardown_all(&reg, &mut |l| lines.push(l.to_string()));
        assert!(errors.is_empty());
        assert_eq!(
            *events.lock().unwrap(),
            vec!["down /dev/dm-3", "down /dev/dm-2", "down /dev/dm-1", "down /dev/md0"]
        );
        assert_eq!(reg.live(), 0);
        assert!(verify(&mut fake, &mut |l| lines.push(l.to_string())).is_ok());
        assert!(
            lines.iter().any(|l| l.contains("no md or dm device remains")),
            "{lines:?}"
        );
    }

    #[test]
    fn a_failed_stack_fails_what_sits_on_it_and_the_rest_still_build() {
        let t = crate::testutil::TempDir::new("stacks-fail");
        let mut plan = file_plan(&t);
        let mut fake = Fake {
            fail: vec!["mid".to_string()],
            left_behind: vec!["/dev/md0".to_string()],
            ..Fake::default()
        };
        let events = fake.events.clone();
        let reg = Registry::new();
        let mut lines = Vec::new();
        let failed = assemble_all(&mut plan, &mut fake, &reg, &mut |l| lines.push(l.to_string()));
        let target = |n: &str| plan.stacks.iter().find(|s| s.name == n).unwrap().target;
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert_eq!(failed[0], (target("mid"), "not assembled: mid refused".to_string()));
        assert_eq!(failed[1].0, target("top"));
        assert!(
            failed[1].1.contains("dm:mid beneath it was not assembled"),
            "{}",
            failed[1].1
        );
        assert_eq!(reg.live(), 2, "r0 and solo");
        let errors = teardown_all(&reg, &mut |l| lines.push(l.to_string()));
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("/dev/md0") && errors[0].contains("EBUSY"),
            "{errors:?}"
        );
        assert_eq!(events.lock().unwrap().last().map(String::as_str), Some("down /dev/md0"));
        let e = verify(&mut fake, &mut |_| {}).unwrap_err();
        assert!(e.contains("/dev/md0"), "{e}");
    }

    #[test]
    fn simulated_members_are_not_assembled() {
        let raw = parse(
            r#"{"tests":[{"workload":"seq_read","runtime":"20ms"}],
                "arrays":[{"name":"r","level":"raid1","members":["sim:ssd:8M","sim:ssd:9M"]}]}"#,
            "t",
        )
        .unwrap();
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        let mut plan = validate(&raw, "t", &ov).unwrap();
        let mut fake = Fake::default();
        let reg = Registry::new();
        let failed = assemble_all(&mut plan, &mut fake, &reg, &mut |_| {});
        assert_eq!(failed.len(), 1);
        assert!(failed[0].1.contains("simulated"), "{failed:?}");
        assert!(fake.events.lock().unwrap().is_empty());
    }

    #[test]
    fn all_at_once_runs_each_test_on_every_disk() {
        let raw = parse(
            r#"{"tests":[{"workload":"seq_read","runtime":"50ms"},{"workload":"rand_read","runtime":"50ms","size":"1G"}],
                "targets":["sim:ssd:64M","sim:hdd:2G"],"all_at_once":true}"#,
            "t",
        )
        .unwrap();
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        let mut plan = validate(&raw, "t", &ov);
        // The second test does not fit the 64M disk: a user test is an error.
        assert!(plan.is_err());
        let raw = parse(
            r#"{"tests":[{"workload":"seq_read","runtime":"50ms"},{"workload":"rand_read","runtime":"50ms"}],
                "targets":["sim:ssd:64M","sim:hdd:2G","sim:ssd:32M"],"all_at_once":true}"#,
            "t",
        )
        .unwrap();
        plan = validate(&raw, "t", &ov);
        let mut plan = plan.unwrap();
        let mut lines = Vec::new();
        let all = all_at_once(&mut plan, &Stop::new(), &mut |l| lines.push(l.to_string()), None);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].test, plan.items[0].spec.name);
        for a in &all {
            let targets: Vec<&str> = a.results.iter().map(|r| r.target.as_str()).collect();
            assert_eq!(targets, vec!["sim:ssd:64M", "sim:hdd:2G", "sim:ssd:32M"]);
            assert!(a
                .results
                .iter()
                .all(|r| r.status == bench_core::document::result::Status::Ok && r.name == a.test));
        }
        assert!(lines.iter().any(|l| l.contains("all at once:")), "{lines:?}");
        assert!(all.iter().all(|a| a.scaling.is_empty()), "no scaling unless asked");
    }

    /// With `scaling`, each test runs on the first 2, 4, ... disks at once
    /// before all of them: five disks, points of 2 and 4, each with the
    /// sums of its disks' figures; the widths double below the count;
    /// `scaling` without `all_at_once` is an error naming it.
    #[test]
    fn scaling_runs_each_test_on_2_4_disks_before_all() {
        assert_eq!(scaling_widths(2), Vec::<usize>::new());
        assert_eq!(scaling_widths(3), vec![2]);
        assert_eq!(scaling_widths(8), vec![2, 4]);
        assert_eq!(scaling_widths(24), vec![2, 4, 8, 16]);
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        let raw = parse(
            r#"{"tests":[{"workload":"seq_read","runtime":"50ms"}],
                "targets":["sim:ssd:64M","sim:hdd:2G","sim:ssd:32M","sim:hdd:1G","sim:ssd:48M"],
                "all_at_once":true,"scaling":true}"#,
            "t",
        )
        .unwrap();
        let mut plan = validate(&raw, "t", &ov).unwrap();
        let mut lines = Vec::new();
        let all = all_at_once(&mut plan, &Stop::new(), &mut |l| lines.push(l.to_string()), None);
        assert_eq!(all.len(), 1);
        let a = &all[0];
        assert_eq!(a.results.len(), 5);
        let widths: Vec<Vec<&str>> = a
            .scaling
            .iter()
            .map(|p| p.targets.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            widths,
            vec![
                vec!["sim:ssd:64M", "sim:hdd:2G"],
                vec!["sim:ssd:64M", "sim:hdd:2G", "sim:ssd:32M", "sim:hdd:1G"]
            ]
        );
        for p in &a.scaling {
            assert!(
                p.ok && p.read_bytes_per_sec.is_some_and(|v| v > 0.0) && p.write_bytes_per_sec.is_none(),
                "{p:?}"
            );
        }
        assert_eq!(
            lines.iter().filter(|l| l.contains("all at once: seq_read")).count(),
            3,
            "{lines:?}"
        );
        let bad = parse(
            r#"{"tests":[{"workload":"seq_read"}],"targets":["sim:ssd:64M"],"scaling":true}"#,
            "t",
        )
        .unwrap();
        let e = validate(&bad, "t", &ov).unwrap_err();
        assert!(
            e.0.starts_with("scaling: true without all_at_once; expected all_at_once: true too"),
            "{e}"
        );
    }

    /// sdb: a whole disk with sdb1 (free) and sdb2 (mounted); sdc: a disk
    /// whose sdc1 md127 holds. A partition goes only beneath an existing
    /// stack, and only its own use counts there.
    #[test]
    fn a_member_is_free_by_sysfs_and_the_mounts() {
        let t = crate::testutil::TempDir::new("member-free");
        for (dir, part, holder) in [
            ("sdb", false, None),
            ("sdb/sdb1", true, None),
            ("sdb/sdb2", true, None),
            ("sdc", false, None),
            ("sdc/sdc1", true, Some("md127")),
        ] {
            let d = t.0.join("devices").join(dir);
            std::fs::create_dir_all(d.join("holders")).unwrap();
            if part {
                std::fs::write(d.join("partition"), "1\n").unwrap();
            }
            if let Some(h) = holder {
                std::fs::create_dir_all(d.join("holders").join(h)).unwrap();
            }
            let name = dir.rsplit('/').next().unwrap();
            std::fs::create_dir_all(t.0.join("class/block")).unwrap();
            std::os::unix::fs::symlink(&d, t.0.join("class/block").join(name)).unwrap();
        }
        let used = vec!["sdb2".to_string()];
        let free = |name: &str, existing: bool| member_free(&t.0, name, existing, &used);
        assert_eq!(free("sdb1", false), Err("is a partition".to_string()));
        assert_eq!(free("sdb1", true), Ok(()));
        assert_eq!(
            free("sdb2", true),
            Err("is in use (sdb2 is mounted or swap)".to_string())
        );
        for existing in [false, true] {
            assert_eq!(
                free("sdb", existing),
                Err("is in use (sdb2 is mounted or swap)".to_string())
            );
            assert_eq!(
                free("sdc", existing),
                Err("is in use (sdc1 is held by md127)".to_string())
            );
        }
        assert_eq!(free("sdc1", true), Err("is in use (sdc1 is held by md127)".to_string()));
    }

    #[test]
    fn live_runs_need_whole_unused_disks_beneath_stacks() {
        let t = crate::testutil::TempDir::new("stacks-free");
        let plan = file_plan(&t);
        let e = check_members_free(&plan).unwrap_err();
        assert!(
            e.starts_with("arrays[0]: ")
                && e.contains("a.img")
                && e.ends_with("expected a whole disk that nothing uses"),
            "{e}"
        );
        // Simulated disks are never assembled: nothing to check.
        let raw = parse(
            r#"{"profile":"quick","arrays":[{"name":"r","level":"raid1","members":["sim:ssd:8M","sim:ssd:9M"]}]}"#,
            "t",
        )
        .unwrap();
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        assert_eq!(check_members_free(&validate(&raw, "t", &ov).unwrap()), Ok(()));
    }
}
