//! Target resolution: what each config entry names on this machine (a path,
//! a serial, a WWN, a simulated disk), which of them the `destructive`
//! section grants writes to, and the md/dm stacks over them with the
//! geometry each will have.

use bench_core::document::result::{StackClass, TargetInfo, TargetKind};
use bench_core::io::Geometry;
use bench_core::vocab::size::{parse_size, EXPECTED};

use crate::disks::identity::{self, DeviceId};
use crate::safety::{self, Destructive, TargetRef};
use crate::stacks::md::MdLayout;

use super::model::{
    stack_info, LayerKind, Level, PlannedStack, PlannedTarget, SimSpec, StackKind, DEFAULT_CHUNK,
    DEFAULT_LINEAR_OFFSET, MAX_CHUNK, MIN_CHUNK,
};
use super::raw::{err, ConfigError, Overrides, RawArray, RawConfig, RawDestructive, RawLayer};

/// The simulated targets used when `--simulate` names none.
pub const DEFAULT_SIM_TARGETS: [&str; 2] = ["sim:hdd:1G", "sim:ssd:256M"];

/// Parse `sim:hdd:SIZE` / `sim:ssd:SIZE`.
pub fn parse_sim(path: &str, at: &str) -> Result<SimSpec, ConfigError> {
    let expected = "sim:hdd:SIZE or sim:ssd:SIZE (e.g. sim:hdd:1G)";
    let mut parts = path.splitn(3, ':');
    let (Some("sim"), Some(kind), Some(size)) = (parts.next(), parts.next(), parts.next()) else {
        return err(format!("{at}: {path:?} is not a simulated disk; expected {expected}"));
    };
    let hdd = match kind {
        "hdd" => true,
        "ssd" => false,
        _ => return err(format!("{at}: {path:?} is not a simulated disk; expected {expected}")),
    };
    let size =
        parse_size(size).map_err(|e| ConfigError(format!("{at}: {size:?} is not a size: {e}; expected {EXPECTED}")))?;
    if size < 1 << 20 {
        return err(format!(
            "{at}: {path:?} is too small; expected a simulated disk of at least 1M"
        ));
    }
    Ok(SimSpec { hdd, size })
}

pub(super) fn check_name(n: &str, at: &str) -> Result<(), ConfigError> {
    let ok = (1..=32).contains(&n.len())
        && n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        err(format!(
            "{at}.name: {n:?} is not a stack name; expected 1 to 32 characters of a-z, 0-9, _ and -"
        ))
    }
}

/// An array before its target exists: level, chunk, layout, members.
pub(super) type Pending = (Level, u32, Option<MdLayout>, Vec<usize>);

/// Where a layer sits while the layers are being ordered.
#[derive(Clone)]
pub(super) enum On {
    Disk(usize),
    Array(usize),
    Layer(usize),
}

/// Booted from the stick, a target (or member) that is a regular file is
/// refused: the only filesystems there are the initramfs and the stick, and
/// the stick is never a target.
pub(super) fn refuse_file_when_booted(t: &PlannedTarget, at: &str, booted: bool) -> Result<(), ConfigError> {
    if booted && t.info.kind == TargetKind::File {
        return err(format!(
            "{at}: {:?} is a regular file; booted from the stick, expected a disk (a block device): \
             a file there lives in the initramfs or on the stick, never a target",
            t.info.path
        ));
    }
    Ok(())
}

/// How the plan looks a disk up: the command line's overrides, the disks
/// that are never targets (the boot stick), whether booted from the stick,
/// and the machine's whole disks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lookup<'a> {
    pub(super) ov: &'a Overrides,
    pub(super) never: &'a [String],
    pub(super) booted: bool,
    pub(super) machine: &'a MachineDisks,
}

/// Resolve a stack member or a layer's disk to a target index, adding it to
/// `targets` if not already there; a disk already in a stack is an error.
pub(super) fn member_target(
    r: &TargetRef,
    at: &str,
    cx: &Lookup<'_>,
    targets: &mut Vec<PlannedTarget>,
    used: &mut Vec<(usize, String)>,
) -> Result<usize, ConfigError> {
    let Lookup {
        ov,
        never,
        booted,
        machine,
    } = *cx;
    let t = if ov.simulate {
        sim_target(r, at)?
    } else {
        match real_target(r, at, machine)? {
            Resolved::Found(t) => *t,
            Resolved::Absent(why) if !booted => return err(why),
            Resolved::Absent(why) => missing_target(r, why),
        }
    };
    refuse_file_when_booted(&t, at, booted)?;
    if let Some(n) = never.iter().find(|n| on_disk(&t.info.path, n)) {
        return err(format!(
            "{at}: {:?} is on the boot stick {n}; expected another disk (the stick is never a member)",
            t.info.path
        ));
    }
    let named = t.info.path.clone();
    let ti = match targets.iter().position(|o| same_target(o, &t)) {
        Some(i) => i,
        None => {
            targets.push(t);
            targets.len() - 1
        }
    };
    if let Some((_, first)) = used.iter().find(|(i, _)| *i == ti) {
        return err(format!(
            "{at}: {named:?}{} is already used by {first}; expected each disk in one array or layer",
            alias_note(&targets[ti], &named)
        ));
    }
    used.push((ti, at.to_string()));
    Ok(ti)
}

/// The stacks planned, and the disks they use with where (`arrays[0]`).
pub(super) type StacksAndUsed = (Vec<PlannedStack>, Vec<(usize, String)>);

/// Resolve `arrays` and `layers`: member disks join `targets` (each disk
/// that is a member is a target too), then one target per stack is
/// appended, in dependency order; with the disks used and by what (for
/// `existing`, planned after). Every error is found before anything is
/// assembled.
pub(super) fn resolve_stacks(
    raw: &RawConfig,
    cx: &Lookup<'_>,
    targets: &mut Vec<PlannedTarget>,
) -> Result<StacksAndUsed, ConfigError> {
    if raw.arrays.is_empty() && raw.layers.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let names = stack_names(raw)?;
    let mut used: Vec<(usize, String)> = Vec::new();
    let mut arrays: Vec<Pending> = Vec::new();
    for (i, a) in raw.arrays.iter().enumerate() {
        arrays.push(pending_array(
            a,
            &format!("arrays[{i}]"),
            &names,
            cx,
            targets,
            &mut used,
        )?);
    }
    let mut ons: Vec<On> = Vec::new();
    for (i, l) in raw.layers.iter().enumerate() {
        ons.push(layer_on(
            raw,
            l,
            &format!("layers[{i}].on"),
            &names,
            cx,
            targets,
            &mut used,
        )?);
    }
    let order = layer_order(raw, &ons)?;

    // The stacks' targets, arrays first, then the layers in order.
    let mut stacks: Vec<PlannedStack> = Vec::new();
    let mut array_target: Vec<usize> = Vec::new();
    for (i, (level, chunk_bytes, layout, members)) in arrays.into_iter().enumerate() {
        let gs: Vec<Geometry> = members.iter().map(|m| targets[*m].geometry).collect();
        let geometry = array_geometry(level, chunk_bytes, &gs);
        let name = raw.arrays[i].name.clone();
        targets.push(stack_target(&name, StackClass::Md, geometry));
        array_target.push(targets.len() - 1);
        stacks.push(PlannedStack {
            name,
            target: targets.len() - 1,
            disks: members.clone(),
            kind: StackKind::Array {
                level,
                chunk_bytes,
                layout,
                members,
            },
            at: format!("arrays[{i}]"),
            mode: None,
            read_ahead_bytes: None,
            existing: None,
        });
    }
    let mut layer_target: Vec<Option<usize>> = vec![None; raw.layers.len()];
    for i in order {
        let on = match ons[i] {
            On::Disk(t) => t,
            On::Array(a) => array_target[a],
            On::Layer(j) => layer_target[j].unwrap_or_default(),
        };
        let (l, at) = (&raw.layers[i], format!("layers[{i}]"));
        let disks = disks_beneath(&stacks, on);
        let (kind, geometry) = layer(l, &at, on, targets[on].geometry, &targets[on].info.path)?;
        let read_ahead_bytes = read_ahead(l, &at)?;
        targets.push(stack_target(&l.name, StackClass::Dm, geometry));
        layer_target[i] = Some(targets.len() - 1);
        stacks.push(PlannedStack {
            name: l.name.clone(),
            target: targets.len() - 1,
            kind,
            disks,
            at,
            mode: None,
            read_ahead_bytes,
            existing: None,
        });
    }
    Ok((stacks, used))
}

/// Every disk at or beneath target `t`: a stack's disks, or `t` itself.
pub(super) fn disks_beneath(stacks: &[PlannedStack], t: usize) -> Vec<usize> {
    stacks
        .iter()
        .find(|s| s.target == t)
        .map_or_else(|| vec![t], |s| s.disks.clone())
}

/// Each stack's record on its target (once every stack is planned).
pub(super) fn record_stacks(targets: &mut [PlannedTarget], stacks: &[PlannedStack]) {
    for st in stacks {
        targets[st.target].info.stack = Some(stack_info(targets, st));
    }
}

/// The arrays' and layers' names, each with where it is defined: valid
/// and unique over arrays and layers.
fn stack_names(raw: &RawConfig) -> Result<Vec<(String, String)>, ConfigError> {
    let mut names: Vec<(String, String)> = Vec::new();
    let all = raw
        .arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (a.name.clone(), format!("arrays[{i}]")))
        .chain(
            raw.layers
                .iter()
                .enumerate()
                .map(|(i, l)| (l.name.clone(), format!("layers[{i}]"))),
        );
    for (n, at) in all {
        check_name(&n, &at)?;
        if let Some((_, first)) = names.iter().find(|(m, _)| *m == n) {
            return err(format!(
                "{at}.name: {n:?} is already the name of {first}; expected a unique name"
            ));
        }
        names.push((n, at));
    }
    Ok(names)
}

/// Array `a` (at `at`) checked: its chunk, its layout (the level's
/// default if none), enough members, each a disk that is in no other
/// array or layer, each holding a chunk.
fn pending_array(
    a: &RawArray,
    at: &str,
    names: &[(String, String)],
    cx: &Lookup<'_>,
    targets: &mut Vec<PlannedTarget>,
    used: &mut Vec<(usize, String)>,
) -> Result<Pending, ConfigError> {
    let level = a.level;
    let chunk = match &a.chunk {
        None => DEFAULT_CHUNK,
        Some(v) => match u32::try_from(v.bytes) {
            Ok(c) if c.is_power_of_two() && (MIN_CHUNK..=MAX_CHUNK).contains(&c) => c,
            _ => {
                return err(format!(
                    "{at}.chunk: {v} is not a chunk size md takes; expected a power of two from 4k to 1G \
                         (md holds the chunk in a signed 32-bit byte count; e.g. 64k, 512k)"
                ))
            }
        },
    };
    let layouts = MdLayout::all_for(level);
    let layout = match (a.layout, layouts.as_slice()) {
        (None, []) => None,
        (None, l) => Some(l[0]),
        (Some(v), []) => {
            return err(format!(
                "{at}.layout: {:?} is not taken by {}; expected no layout (only raid5, raid6 and raid10 have one)",
                v.name(),
                level.name()
            ))
        }
        (Some(v), l) if l.contains(&v) => Some(v),
        (Some(v), l) => {
            return err(format!(
                "{at}.layout: {:?} is not a {} layout; expected one of {}",
                v.name(),
                level.name(),
                bench_core::vocab::names::names_joined(l, ", ")
            ))
        }
    };
    if a.members.len() < level.min_members() {
        return err(format!(
            "{at}.members: {} member(s) are too few for {}; expected at least {}",
            a.members.len(),
            level.name(),
            level.min_members()
        ));
    }
    let mut members = Vec::new();
    for (j, m) in a.members.iter().enumerate() {
        let mat = format!("{at}.members[{j}]");
        let r = m.to_ref(&mat)?;
        if let TargetRef::Path(p) = &r {
            if names.iter().any(|(n, _)| n == p.as_str()) {
                return err(format!(
                    "{mat}: {p:?} is an array or layer; expected a disk (members are disks)"
                ));
            }
        }
        members.push(member_target(&r, &mat, cx, targets, used)?);
    }
    if level != Level::Raid1 {
        let given = a
            .chunk
            .as_ref()
            .map_or_else(|| "the default".to_string(), ToString::to_string);
        check_chunk_fits(chunk, &given, &members, targets, at)?;
    }
    Ok((level, chunk, layout, members))
}

/// What layer `l` sits on (`at` its `on`): an array or layer by its name,
/// else a disk, which joins the targets.
fn layer_on(
    raw: &RawConfig,
    l: &RawLayer,
    at: &str,
    names: &[(String, String)],
    cx: &Lookup<'_>,
    targets: &mut Vec<PlannedTarget>,
    used: &mut Vec<(usize, String)>,
) -> Result<On, ConfigError> {
    let r = l.on.to_ref(at)?;
    let named = match &r {
        TargetRef::Path(p) => raw
            .arrays
            .iter()
            .position(|a| a.name == *p)
            .map(On::Array)
            .or_else(|| raw.layers.iter().position(|x| x.name == *p).map(On::Layer)),
        _ => None,
    };
    match (named, &r) {
        (Some(on), _) => Ok(on),
        (None, TargetRef::Path(p)) if !p.contains('/') && !p.starts_with("sim:") => {
            let known: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
            err(format!(
                "{at}: {p:?} is not an array, a layer or a disk; expected one of {} or a disk path",
                known.join(", ")
            ))
        }
        (None, _) => Ok(On::Disk(member_target(&r, at, cx, targets, used)?)),
    }
}

/// The order the layers are assembled in: each after what it sits on; a
/// loop is an error that names it.
fn layer_order(raw: &RawConfig, ons: &[On]) -> Result<Vec<usize>, ConfigError> {
    let mut order: Vec<usize> = Vec::new();
    while order.len() < raw.layers.len() {
        let next = (0..raw.layers.len()).find(|i| {
            !order.contains(i)
                && match ons[*i] {
                    On::Layer(j) => order.contains(&j),
                    _ => true,
                }
        });
        match next {
            Some(i) => order.push(i),
            None => {
                let start = (0..raw.layers.len()).find(|i| !order.contains(i)).unwrap_or(0);
                // Follow "on" from a layer that cannot be placed until a layer repeats.
                let mut path = vec![start];
                let mut cur = start;
                while let On::Layer(j) = ons[cur] {
                    if let Some(k) = path.iter().position(|x| *x == j) {
                        path.drain(..k);
                        path.push(j);
                        break;
                    }
                    path.push(j);
                    cur = j;
                }
                let first = path[0];
                let chain: Vec<&str> = path.iter().map(|i| raw.layers[*i].name.as_str()).collect();
                return err(format!(
                    "layers[{first}].on: {:?} makes a cycle ({}); expected layers that stack without a loop",
                    raw.layers[first].on.0.path.clone().unwrap_or_default(),
                    chain.join(" -> ")
                ));
            }
        }
    }
    Ok(order)
}

/// The largest readahead a layer may be given (the kernel takes more; no
/// disk benefits from it).
const MAX_READ_AHEAD: u64 = 1 << 30;

/// A layer's `read_ahead`, checked: a multiple of 4 KiB (the kernel keeps
/// it in pages) up to [`MAX_READ_AHEAD`].
fn read_ahead(l: &RawLayer, at: &str) -> Result<Option<u64>, ConfigError> {
    let Some(v) = &l.read_ahead else { return Ok(None) };
    let b = v.bytes;
    if b % 4096 != 0 || b > MAX_READ_AHEAD {
        return err(format!(
            "{at}.read_ahead: {b} B is not a readahead; expected a multiple of 4 KiB up to 1 GiB (e.g. \"128k\")"
        ));
    }
    Ok(Some(b))
}

/// A layer's options checked, and its geometry from the device beneath.
pub(super) fn layer(
    l: &RawLayer,
    at: &str,
    on: usize,
    under: Geometry,
    under_path: &str,
) -> Result<(StackKind, Geometry), ConfigError> {
    let crypt_only = [
        ("cipher", l.cipher.is_some()),
        ("key_bits", l.key_bits.is_some()),
        ("no_read_workqueue", l.no_read_workqueue.is_some()),
        ("no_write_workqueue", l.no_write_workqueue.is_some()),
        ("sector_size", l.sector_size.is_some()),
    ];
    match l.kind {
        LayerKind::Crypt => {
            if l.offset.is_some() {
                return err(format!(
                    "{at}.offset: given for a crypt layer; expected offset only on a linear layer"
                ));
            }
            let cipher = l.cipher.unwrap_or_default();
            let key_bits = l.key_bits.unwrap_or(512);
            if key_bits != 256 && key_bits != 512 {
                return err(format!(
                    "{at}.key_bits: {key_bits} is not an {} key size; expected 256 or 512",
                    cipher.name()
                ));
            }
            let sector_size = l.sector_size.unwrap_or(512);
            if !(sector_size.is_power_of_two() && (512..=4096).contains(&sector_size)) {
                return err(format!(
                    "{at}.sector_size: {sector_size} is not a crypt sector size; expected 512, 1024, 2048 or 4096"
                ));
            }
            let g = Geometry {
                size: under.size / u64::from(sector_size) * u64::from(sector_size),
                logical_block: under.logical_block.max(sector_size),
                physical_block: under.physical_block.max(sector_size),
            };
            Ok((
                StackKind::Crypt {
                    cipher,
                    key_bits,
                    no_read_workqueue: l.no_read_workqueue.unwrap_or(false),
                    no_write_workqueue: l.no_write_workqueue.unwrap_or(false),
                    sector_size,
                    on,
                },
                g,
            ))
        }
        LayerKind::Linear => {
            if let Some((k, _)) = crypt_only.iter().find(|(_, given)| *given) {
                return err(format!(
                    "{at}.{k}: given for a linear layer; expected {k} only on a crypt layer"
                ));
            }
            let offset_bytes = l.offset.as_ref().map_or(DEFAULT_LINEAR_OFFSET, |o| o.bytes);
            if offset_bytes % 512 != 0 || offset_bytes >= under.size {
                return err(format!(
                    "{at}.offset: {offset_bytes} B does not fit {under_path} ({} B); expected a multiple of 512 below its size",
                    under.size
                ));
            }
            Ok((
                StackKind::Linear { offset_bytes, on },
                Geometry {
                    size: under.size - offset_bytes,
                    ..under
                },
            ))
        }
    }
}

/// `Err` naming `{at}.chunk` unless a chunk of `chunk` bytes (as the
/// config gave it: `given`) fits in every member present: a striped
/// array's members each hold whole chunks (linear rounds each member down
/// to whole chunks), so a member smaller than one would give nothing.
fn check_chunk_fits(
    chunk: u32,
    given: &str,
    members: &[usize],
    targets: &[PlannedTarget],
    at: &str,
) -> Result<(), ConfigError> {
    let smallest = members
        .iter()
        .map(|m| &targets[*m])
        .filter(|t| t.missing.is_none())
        .min_by_key(|t| t.geometry.size);
    let Some(t) = smallest.filter(|t| t.geometry.size < u64::from(chunk)) else {
        return Ok(());
    };
    let size = t.geometry.size;
    // The largest chunk md takes that fits: a power of two, at most 1 GiB.
    let fits = u64::from(MAX_CHUNK).min(size.checked_ilog2().map_or(0, |b| 1 << b));
    let expected = if fits >= u64::from(MIN_CHUNK) {
        format!("a chunk that fits every member: at most {fits} B")
    } else {
        format!("members of at least one chunk ({MIN_CHUNK} B, md's smallest)")
    };
    err(format!(
        "{at}.chunk: {given} ({chunk} B) is larger than member {:?} ({size} B); expected {expected}",
        t.info.path
    ))
}

/// The expected geometry of an array of members `gs` (replaced by the
/// kernel's once assembled).
pub(super) fn array_geometry(level: Level, chunk: u32, gs: &[Geometry]) -> Geometry {
    let c = u64::from(chunk);
    let min = gs.iter().map(|g| g.size / c * c).min().unwrap_or(0);
    let n = gs.len() as u64;
    let size = match level {
        Level::Linear => gs.iter().map(|g| g.size).sum(),
        Level::Raid0 => gs.iter().map(|g| g.size / c * c).sum(),
        Level::Raid1 => min,
        Level::Raid5 => min * n.saturating_sub(1),
        Level::Raid6 => min * n.saturating_sub(2),
        Level::Raid10 => min * n / 2,
    };
    Geometry {
        size,
        logical_block: gs.iter().map(|g| g.logical_block).max().unwrap_or(512),
        physical_block: gs.iter().map(|g| g.physical_block).max().unwrap_or(512),
    }
}

pub(super) fn stack_target(name: &str, class: StackClass, geometry: Geometry) -> PlannedTarget {
    PlannedTarget {
        info: TargetInfo {
            path: format!("{class}:{name}"),
            kind: match class {
                StackClass::Md => TargetKind::Md,
                StackClass::Dm => TargetKind::Dm,
            },
            name: Some(name.to_string()),
            size_bytes: geometry.size,
            logical_block_size: geometry.logical_block,
            physical_block_size: geometry.physical_block,
            ..TargetInfo::default()
        },
        geometry,
        id: None,
        pin: None,
        grant: None,
        claimed: false,
        written: false,
        sim: None,
        missing: None,
    }
}

/// True if `path` is the disk `never` or one of its partitions, by device
/// number, whatever the paths (a second device node made with mknod is
/// the same disk): a partition's sysfs directory sits inside its disk's.
pub(super) fn on_disk(path: &str, never: &str) -> bool {
    if path == never || same_file(path, never) {
        return true;
    }
    let (Some(dev), Some(disk)) = (block_rdev(path), block_rdev(never)) else {
        return false;
    };
    if dev == disk {
        return true;
    }
    let Ok(dir) = crate::sysfs::block_dir(crate::sysfs::root(), dev) else {
        return false;
    };
    if !dir.join("partition").exists() {
        return false;
    }
    let (major, minor) = identity::major_minor(disk);
    dir.parent()
        .and_then(|d| std::fs::read_to_string(d.join("dev")).ok())
        .is_some_and(|d| d.trim() == format!("{major}:{minor}"))
}

/// The device number of the block device `path` names (symbolic links
/// followed), if it names one.
fn block_rdev(path: &str) -> Option<u64> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.file_type().is_block_device())
        .map(|m| m.rdev())
}

/// How `named` is the target `t` when it is another path for it (empty
/// when it is `t`'s own path): ` (the same block device 7:3 as "/dev/loop3")`.
pub(super) fn alias_note(t: &PlannedTarget, named: &str) -> String {
    match &t.id {
        Some(id) if t.info.path != named => format!(" (the same {} as {:?})", id.node, t.info.path),
        _ => String::new(),
    }
}

/// True if `a` and `b` are one target: the same path, or the same device
/// or file by identity (device number; a file's filesystem and inode),
/// whatever paths name them (a symbolic link, a second device node made
/// with mknod, a hard link); targets without an identity (simulated,
/// absent) by their canonical paths.
pub(super) fn same_target(a: &PlannedTarget, b: &PlannedTarget) -> bool {
    if a.info.path == b.info.path {
        return true;
    }
    match (&a.id, &b.id) {
        (Some(x), Some(y)) => x.node == y.node,
        _ => same_file(&a.info.path, &b.info.path),
    }
}

/// `Err` naming what `p` is, unless its metadata `m` (symbolic links
/// followed) says a block device or a regular file: nothing else is
/// opened, so a FIFO cannot make the plan wait for a writer.
fn target_kind(p: &str, at: &str, m: &std::fs::Metadata) -> Result<(), ConfigError> {
    let ft = m.file_type();
    if ft.is_file() || std::os::unix::fs::FileTypeExt::is_block_device(&ft) {
        return Ok(());
    }
    err(format!(
        "{at}: {p:?} is a {}; expected a block device or a regular file",
        crate::disks::file::kind_name(ft)
    ))
}

pub(super) fn same_file(a: &str, b: &str) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The firmware revision of every simulated disk.
pub const SIM_FIRMWARE: &str = "sim";

pub(super) fn sim_target(r: &TargetRef, at: &str) -> Result<PlannedTarget, ConfigError> {
    let TargetRef::Path(path) = r else {
        return err(format!(
            "{at}: {r} cannot be simulated; expected a path sim:hdd:SIZE or sim:ssd:SIZE"
        ));
    };
    let sim = parse_sim(path, at)?;
    let logical_block = 512;
    let info = TargetInfo {
        path: path.clone(),
        kind: TargetKind::Simulated,
        model: Some(
            if sim.hdd {
                "simulated 7200 rpm-like HDD"
            } else {
                "simulated SSD"
            }
            .to_string(),
        ),
        // A model and firmware make it a disk model like any other, for the
        // peers and baseline rules and `bootbench-report fleet`/`baseline`.
        firmware: Some(String::from(SIM_FIRMWARE)),
        size_bytes: sim.size,
        logical_block_size: logical_block,
        physical_block_size: logical_block,
        rotational: Some(sim.hdd),
        ..TargetInfo::default()
    };
    let geometry = Geometry {
        size: sim.size,
        logical_block,
        physical_block: logical_block,
    };
    Ok(PlannedTarget {
        info,
        geometry,
        id: None,
        pin: None,
        grant: None,
        claimed: false,
        written: false,
        sim: Some(sim),
        missing: None,
    })
}

/// A real target, or why it is absent from this machine.
pub(super) enum Resolved {
    /// Present (boxed: a target is far larger than a message).
    Found(Box<PlannedTarget>),
    /// Absent: the message (field path, what names it, what is expected).
    Absent(String),
}

/// The placeholder of a target that this machine lacks: kind `absent`, no
/// geometry, never opened; `missing` says why.
pub(super) fn missing_target(r: &TargetRef, why: String) -> PlannedTarget {
    let (path, serial, wwn) = match r {
        TargetRef::Path(p) => (p.clone(), None, None),
        TargetRef::Serial(s) => (format!("serial:{s}"), Some(s.clone()), None),
        TargetRef::Wwn(w) => (format!("wwn:{w}"), None, Some(w.clone())),
    };
    PlannedTarget {
        info: TargetInfo {
            path,
            kind: TargetKind::Absent,
            serial,
            wwn,
            ..TargetInfo::default()
        },
        geometry: Geometry {
            size: 0,
            logical_block: 512,
            physical_block: 512,
        },
        id: None,
        pin: None,
        grant: None,
        claimed: false,
        written: false,
        sim: None,
        missing: Some(why),
    }
}

pub(super) fn real_target(r: &TargetRef, at: &str, machine: &MachineDisks) -> Result<Resolved, ConfigError> {
    let (info, id, pin) = match r {
        TargetRef::Path(p) => {
            if p.starts_with("sim:") {
                return err(format!(
                    "{at}: {p:?} is a simulated disk; expected a real path, or run with --simulate"
                ));
            }
            match std::fs::metadata(p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(Resolved::Absent(format!(
                        "{at}: {p:?} cannot be used: {e}; expected an existing block device or file"
                    )));
                }
                Err(e) => {
                    return err(format!(
                        "{at}: {p:?} cannot be used: {e}; expected an existing block device or file"
                    ));
                }
                Ok(m) => target_kind(p, at, &m)?,
            }
            identity::describe_pinned(p).map_err(|e| ConfigError(format!("{at}: {p:?} cannot be described: {e}")))?
        }
        TargetRef::Serial(_) | TargetRef::Wwn(_) => match find_disk(r, at, machine)? {
            Some((info, id)) => (info.clone(), id.clone(), None),
            None => {
                return Ok(Resolved::Absent(format!(
                    "{at}: no whole disk has {r}; expected a disk present on this machine"
                )))
            }
        },
    };
    let geometry = Geometry {
        size: info.size_bytes,
        logical_block: info.logical_block_size,
        physical_block: info.physical_block_size,
    };
    if geometry.size == 0 {
        return err(format!(
            "{at}: {:?} is empty (0 bytes); expected a target with data",
            info.path
        ));
    }
    Ok(Resolved::Found(Box::new(PlannedTarget {
        info,
        geometry,
        id: Some(id),
        pin,
        grant: None,
        claimed: false,
        written: false,
        sim: None,
        missing: None,
    })))
}

/// The machine's whole disks (`/sys/class/block` without partitions), each
/// described with its identity: read once per plan, when a serial or WWN
/// is first looked up.
#[derive(Debug, Default)]
pub struct MachineDisks(std::cell::OnceCell<Vec<(TargetInfo, DeviceId)>>);

impl MachineDisks {
    /// Every whole disk, by name.
    pub(super) fn all(&self) -> &[(TargetInfo, DeviceId)] {
        self.0.get_or_init(|| {
            crate::disks::discover::sorted_names(&crate::sysfs::live("class/block"))
                .into_iter()
                .filter(|name| !crate::sysfs::live(format!("class/block/{name}/partition")).exists())
                .filter_map(|name| identity::describe_bound(&format!("/dev/{name}")).ok())
                .collect()
        })
    }
}

/// The one whole disk whose serial or WWN `r` names. Several devices can
/// share a serial (the namespaces of one NVMe controller, the LUNs of a
/// multi-bay USB enclosure that reports its bridge's serial): naming more
/// than one is an error that lists them, with their WWNs when they have
/// them (a WWN names a namespace or a LUN of its own).
pub(super) fn find_disk<'m>(
    r: &TargetRef,
    at: &str,
    machine: &'m MachineDisks,
) -> Result<Option<&'m (TargetInfo, DeviceId)>, ConfigError> {
    let found: Vec<&(TargetInfo, DeviceId)> = machine
        .all()
        .iter()
        .filter(|(info, _)| safety::names(r, info.serial.as_deref(), info.wwn.as_deref()))
        .collect();
    match found.len() {
        0 => Ok(None),
        1 => Ok(Some(found[0])),
        _ => {
            let list: Vec<String> = found
                .iter()
                .map(|(i, _)| match &i.wwn {
                    Some(w) => format!("{} (WWN {w})", i.path),
                    None => i.path.clone(),
                })
                .collect();
            err(format!(
                "{at}: {r} names {} devices: {}; expected a serial or WWN that names exactly one whole disk",
                found.len(),
                list.join(", ")
            ))
        }
    }
}

/// Resolve the `destructive` section: each entry to exactly one device.
/// Booted from the stick, each entry must name a serial or WWN (device
/// names differ between the machine where the config was written and the
/// server's boot). A serial or WWN resolves among whole disks only, so a
/// partition is never granted through one. An entry that names nothing on
/// this machine is an error on a live system; booted, it is returned as
/// the reason to withhold every write (the config does not match the
/// machine). Simulated runs resolve nothing (simulated disks need no grant).
pub(super) fn resolve_destructive(
    d: &RawDestructive,
    simulate: bool,
    booted: bool,
    machine: &MachineDisks,
) -> Result<(Destructive, Option<String>), ConfigError> {
    let mut targets = Vec::new();
    let mut resolved = Vec::new();
    let mut unresolved = None;
    for (i, t) in d.targets.iter().enumerate() {
        let at = format!("destructive.targets[{i}]");
        let r = t.to_ref(&at)?;
        let node = match &r {
            _ if simulate => None,
            TargetRef::Path(p) if booted => {
                return err(format!(
                    "{at}: {p:?} is a path; booted from the stick, expected {{\"serial\": ...}} or {{\"wwn\": ...}} \
                     (device names are not stable from one boot or machine to the next)"
                ))
            }
            TargetRef::Path(p) => {
                let cannot = |e: &dyn std::fmt::Display| {
                    err(format!(
                        "{at}: {p:?} cannot be used: {e}; expected an existing block device or file"
                    ))
                };
                match std::fs::metadata(p) {
                    Ok(m) => target_kind(p, &at, &m)?,
                    Err(e) => return cannot(&e),
                }
                match identity::describe_bound(p) {
                    Ok((_, id)) => Some(id.node),
                    Err(e) => return cannot(&e),
                }
            }
            TargetRef::Serial(_) | TargetRef::Wwn(_) => match find_disk(&r, &at, machine)? {
                Some((_, id)) => Some(id.node),
                None if booted => {
                    unresolved.get_or_insert(format!("{at}: no whole disk has {r}"));
                    None
                }
                None => {
                    return err(format!(
                        "{at}: no whole disk has {r}; expected a disk present on this machine"
                    ))
                }
            },
        };
        targets.push(r);
        resolved.push(node);
    }
    let d = Destructive {
        confirm: d.confirm.clone(),
        targets,
        resolved,
        allow_overwrite_signatures: d.allow_overwrite_signatures,
    };
    Ok((d, unresolved))
}
