//! The config's `existing`: the md arrays and LVM logical volumes the
//! disks already hold, found from their on-disk metadata (md superblocks,
//! LVM labels and metadata text, read by [`crate::disks::holds`]) and
//! planned as stacks that are assembled read-only and never written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bench_core::document::result::{LuksInfo, LvmLv, LvmPv, StackClass, TargetInfo};
use bench_core::io::Geometry;

use crate::disks::bytes::{Bytes, Device};
use crate::disks::holds::{self, Array, PvAt, Vg};
use crate::disks::unlock::{self, Decrypted};
use crate::safety::TargetRef;
use crate::stacks::dm::Segment;
use crate::stacks::md::MdLayout;

use super::existing_raw::{Field, RawExisting, RawLuks, RawWanted};
use super::model::{ExistingMd, PlannedStack, PlannedTarget, StackKind, DEFAULT_CHUNK};
use super::raw::{err, ConfigError};
use super::resolve::{array_geometry, disks_beneath, member_target, on_disk, stack_target, Lookup};

/// The longest the plan waits for the superblocks of the disks (`existing`).
const EXISTING_READ_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

const EXPECTED_EXISTING: &str = "expected \"all\" or a list of md array names or UUIDs, LVM volumes as VG/LV \
                                 and LUKS containers as {\"luks\": UUID, \"key_file\": PATH} (as list shows them)";

/// One entry of `existing`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Wanted {
    /// An md array's name (with or without its host part) or UUID.
    Array(String),
    /// An LVM logical volume: its volume group's name and its own.
    Volume(String, String),
    /// A LUKS container by its UUID, with the file whose bytes are its
    /// passphrase (relative paths from the config's directory), and the
    /// time trying it on the keyslots may take (`unlock_seconds`).
    Luks {
        uuid: String,
        key_file: PathBuf,
        unlock_seconds: u64,
    },
    /// Every array that can start and every volume that can be opened
    /// (those inside the containers named beside it too).
    All,
}

/// The most `unlock_seconds` a LUKS entry may give.
pub const MAX_UNLOCK_SECONDS: u64 = 3600;

/// A LUKS entry of `existing`: `{"luks": UUID, "key_file": PATH}`, and
/// `unlock_seconds` (1 to [`MAX_UNLOCK_SECONDS`], default
/// [`unlock::DEFAULT_UNLOCK_SECONDS`]).
fn luks_wanted(at: &str, o: &RawLuks, config_dir: &Path) -> Result<Wanted, ConfigError> {
    if let Some(k) = o.unknown.keys().next() {
        return err(format!(
            "{at}.{k}: not a field of a LUKS entry; expected luks (the container's UUID), key_file and \
             unlock_seconds"
        ));
    }
    let unlock_seconds = match &o.unlock_seconds {
        Field::Absent => unlock::DEFAULT_UNLOCK_SECONDS,
        Field::Given(n) if (1..=MAX_UNLOCK_SECONDS).contains(n) => *n,
        Field::Given(n) => return refused_unlock_seconds(at, n),
        Field::Refused(v) => return refused_unlock_seconds(at, v),
    };
    let uuid = match &o.luks {
        Field::Given(u) => u.clone(),
        Field::Refused(v) => {
            return err(format!(
                "{at}.luks: {v} is not a UUID; expected the container's UUID as list shows it"
            ))
        }
        Field::Absent => {
            return err(format!(
                "{at}.luks: missing; expected the container's UUID as list shows it"
            ))
        }
    };
    let key_file = match &o.key_file {
        Field::Given(k) => config_dir.join(k),
        Field::Refused(v) => {
            return err(format!(
                "{at}.key_file: {v} is not a path; expected the path of a file holding the container's passphrase \
                 (relative to the config's directory)"
            ))
        }
        Field::Absent => {
            return err(format!(
                "{at}.key_file: missing; expected the path of a file holding the container's passphrase (relative \
                 to the config's directory)"
            ))
        }
    };
    Ok(Wanted::Luks {
        uuid,
        key_file,
        unlock_seconds,
    })
}

/// The refusal of a LUKS entry's `unlock_seconds` written `v`.
fn refused_unlock_seconds<T>(at: &str, v: &dyn std::fmt::Display) -> Result<T, ConfigError> {
    err(format!(
        "{at}.unlock_seconds: {v} is not taken; expected a whole number of seconds from 1 to {MAX_UNLOCK_SECONDS}, \
         the most trying the key on the container's keyslots may take (default {})",
        unlock::DEFAULT_UNLOCK_SECONDS
    ))
}

/// The config's `existing`, each entry with where it is written (`"all"`
/// alone or in the list: [`Wanted::All`]).
fn existing_wanted(v: &RawExisting, config_dir: &Path) -> Result<Vec<(String, Wanted)>, ConfigError> {
    match v {
        RawExisting::All => Ok(vec![("existing".to_string(), Wanted::All)]),
        RawExisting::List(items) => items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let at = format!("existing[{i}]");
                let w = match x {
                    RawWanted::Luks(o) => luks_wanted(&at, o, config_dir)?,
                    RawWanted::All => Wanted::All,
                    RawWanted::Array(s) => Wanted::Array(s.clone()),
                    RawWanted::Volume(vg, lv) => Wanted::Volume(vg.clone(), lv.clone()),
                    RawWanted::NotVolume(s) => {
                        return err(format!(
                            "{at}: {s:?} is not a volume's name; expected VG/LV (a volume group's name, a slash, \
                             a logical volume's name)"
                        ))
                    }
                    RawWanted::Refused(x) => return err(format!("{at}: {x} is not a name; {EXPECTED_EXISTING}")),
                };
                Ok((at, w))
            })
            .collect::<Result<Vec<_>, _>>(),
        RawExisting::Refused(other) => err(format!("existing: {other} is not taken; {EXPECTED_EXISTING}")),
    }
}

/// `existing` checked for a boot elsewhere (`validate --booted`): each
/// entry's form, and each LUKS entry's key file beside the config (on the
/// stick), which must be readable and not empty; what it names is found
/// on the server's disks when it boots. The lines to print.
pub(super) fn check_for_boot(want: &RawExisting, config_dir: &Path) -> Result<Vec<String>, ConfigError> {
    let mut out = Vec::new();
    for (at, w) in existing_wanted(want, config_dir)? {
        out.push(match w {
            Wanted::All => {
                "existing: every md array that can start and every LVM volume that can be opened".to_string()
            }
            Wanted::Array(a) => format!("{at}: the md array {a:?}"),
            Wanted::Volume(vg, lv) => format!("{at}: the LVM volume {vg}/{lv}"),
            Wanted::Luks {
                uuid,
                key_file,
                unlock_seconds,
            } => {
                let key = read_key_file(&at, &key_file)?;
                format!(
                    "{at}: the LUKS container {uuid}, its key file {} present ({} B), tried within {unlock_seconds} s",
                    key_file.display(),
                    key.bytes().len()
                )
            }
        });
    }
    out.push(
        "existing: found on the server's disks when it boots, opened read-only, never written (nor anything \
         beneath)"
            .to_string(),
    );
    Ok(out)
}

/// A stack name from `raw` (an md name without its host part, `VG-LV`):
/// lower case, in the characters stack names take, at most 28 of them,
/// else `fallback`; made unique among `taken`.
fn existing_name(raw: &str, fallback: String, taken: &[String]) -> String {
    let base: String = raw
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(28)
        .collect();
    let base = if base.is_empty() { fallback } else { base };
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// The md arrays and LVM volumes the config's `existing` names, found
/// from the metadata on this machine's disks and their partitions (the
/// boot stick's left out). Each present member or PV joins `targets`;
/// each array is planned as assembled from its superblocks, read-only,
/// and each volume as the read-only dm table LVM would load, over its PVs
/// (an array a volume lies on is planned too, beneath it). `"all"` takes
/// every array and every volume that can be opened.
pub(super) fn existing_stacks(
    want: &RawExisting,
    cx: &Lookup<'_>,
    targets: &mut Vec<PlannedTarget>,
    used: &mut Vec<(usize, String)>,
    taken: &[String],
    config_dir: &Path,
) -> Result<Vec<PlannedStack>, ConfigError> {
    let wanted = existing_wanted(want, config_dir)?;
    if cx.ov.simulate {
        return err(
            "existing: not with simulated disks; expected a run on the real disks (existing arrays and volumes are \
             read from their metadata on the disks)",
        );
    }
    let disks: Vec<TargetInfo> = cx
        .machine
        .all()
        .iter()
        .map(|(t, _)| t.clone())
        .filter(|t| !cx.never.iter().any(|n| on_disk(&t.path, n)))
        .collect();
    // Bounded, as the console's listing is: a disk that does not answer its
    // superblock's sector must not hold the run forever.
    let disks = holds::read_bounded(&disks, EXISTING_READ_WAIT)
        .map_err(|e| ConfigError(format!("existing: the disks' md superblocks were {e}")))?;
    let arrays = holds::md_arrays(&disks);
    let lukses = open_containers(&wanted, &disks, &arrays)?;
    let inside: Vec<(PvAt, LvmPv)> = lukses
        .iter()
        .filter_map(|c| Some((PvAt::Luks(c.info.uuid.clone()), c.pv.clone()?)))
        .collect();
    let vgs = holds::volume_groups(&disks, &arrays, &inside);

    let volumes = pick_volumes(&wanted, &vgs)?;
    let mut picked = pick_arrays(&wanted, &arrays)?;
    // The arrays the containers and volumes lie on, beneath them.
    let mut beneath: Vec<(String, &PvAt)> = lukses.iter().map(|c| (c.at.clone(), &c.on)).collect();
    for (at, g, lv) in &volumes {
        for pv in lv.segments.iter().flat_map(|s| &s.stripes) {
            if let Some(w) = g.at(&pv.0) {
                beneath.push((at.clone(), w));
            }
        }
    }
    for (at, w) in beneath {
        if let PvAt::Array { uuid, .. } = w {
            if !picked.iter().any(|(_, a)| a.view.uuid == *uuid) {
                if let Some(a) = arrays.iter().find(|a| a.view.uuid == *uuid) {
                    picked.push((format!("{at} (the array beneath)"), a));
                }
            }
        }
    }

    let mut names: Vec<String> = taken.to_vec();
    let mut out = Vec::new();
    // Each array's target by its UUID.
    let mut array_target: BTreeMap<String, usize> = BTreeMap::new();
    for (at, a) in picked {
        let st = array_stack(&at, a, cx, targets, used, &mut names)?;
        array_target.insert(a.view.uuid.clone(), st.target);
        out.push(st);
    }
    // A PV or container on a disk or a partition joins the targets once,
    // whatever number of stacks lie on it.
    let mut device_target: BTreeMap<String, usize> = BTreeMap::new();
    let mut luks_target: BTreeMap<String, usize> = BTreeMap::new();
    for c in &lukses {
        let on = {
            let mut b = Beneath {
                cx,
                targets,
                used,
                arrays: &array_target,
                lukses: &luks_target,
                devices: &mut device_target,
                stacks: &out,
            };
            pv_target(&c.at, Some(&c.on), &mut b)
                .ok_or_else(|| ConfigError(format!("{}: the device beneath the container is not planned", c.at)))??
        };
        let st = luks_stack(c, on, targets, &out, &mut names);
        luks_target.insert(c.info.uuid.clone(), st.target);
        out.push(st);
    }
    for (at, g, lv) in volumes {
        let st = volume_stack(
            &at,
            g,
            lv,
            &mut Beneath {
                cx,
                targets,
                used,
                arrays: &array_target,
                lukses: &luks_target,
                devices: &mut device_target,
                stacks: &out,
            },
            &mut names,
        )?;
        out.push(st);
    }
    Ok(out)
}

/// A LUKS container `existing` names, found and opened with its key file.
#[derive(Debug)]
struct Container {
    /// Where `existing` names it.
    at: String,
    /// Where it is.
    on: PvAt,
    info: LuksInfo,
    key_file: PathBuf,
    unlock_seconds: u64,
    /// The LVM PV its data holds, read through its key.
    pv: Option<LvmPv>,
}

/// The LUKS containers `existing` names: each found by its UUID (on a
/// disk, a partition or an array's start), opened with its key file (the
/// key checked against the header's digest, as cryptsetup checks it) and
/// read through the key for an LVM PV inside. Nothing is mapped here and
/// the key is dropped (wiped); the run opens the container again.
fn open_containers(
    wanted: &[(String, Wanted)],
    disks: &[TargetInfo],
    arrays: &[Array],
) -> Result<Vec<Container>, ConfigError> {
    let all = holds::luks_containers(disks, arrays);
    let mut out = Vec::new();
    for (at, w) in wanted {
        let Wanted::Luks {
            uuid,
            key_file,
            unlock_seconds,
        } = w
        else {
            continue;
        };
        let Some((on, info)) = all.iter().find(|(_, l)| l.uuid == *uuid) else {
            let known: Vec<String> = all.iter().map(|(w, l)| format!("{} (on {w})", l.uuid)).collect();
            return err(format!(
                "{at}.luks: {uuid:?} is no LUKS container on these disks; expected the UUID of one of: {}",
                if known.is_empty() {
                    "none here".to_string()
                } else {
                    known.join(", ")
                }
            ));
        };
        let key = read_key_file(at, key_file)?;
        let opened = |b: &dyn Bytes| -> Result<Option<LvmPv>, String> {
            let budget = unlock::Budget::seconds(*unlock_seconds);
            let open = unlock::unlock(b, key.bytes(), unlock::available_kib(), budget).map_err(|e| e.to_string())?;
            crate::disks::lvm::read(&Decrypted { inner: b, open: &open })
        };
        let pv = match on {
            PvAt::Device(path) => Device::open(path, device_size(disks, path))
                .map_err(|e| e.to_string())
                .and_then(|dev| opened(&dev)),
            PvAt::Array { uuid: a, .. } => {
                holds::with_array(disks, a, |b| opened(b)).unwrap_or_else(|| Err(format!("the array {a} is gone")))
            }
            PvAt::Luks(_) => Err("a container inside a container is not opened".to_string()),
        }
        .map_err(|e| ConfigError(format!("{at}: the LUKS container {uuid} on {on}: {e}")))?;
        out.push(Container {
            at: at.clone(),
            on: on.clone(),
            info: info.clone(),
            key_file: key_file.clone(),
            unlock_seconds: *unlock_seconds,
            pv,
        });
    }
    Ok(out)
}

/// The key file's bytes ([`unlock::read_key_file`]), or an error naming `{at}.key_file`.
fn read_key_file(at: &str, path: &Path) -> Result<unlock::Secret, ConfigError> {
    unlock::read_key_file(path).map_err(|e| ConfigError(format!("{at}.key_file: {e}")))
}

/// The size of the disk or partition `path` as the listing read it.
fn device_size(disks: &[TargetInfo], path: &str) -> u64 {
    disks
        .iter()
        .find_map(|d| {
            (d.path == path)
                .then_some(d.size_bytes)
                .or_else(|| d.partitions.iter().find(|p| p.path == path).map(|p| p.size_bytes))
        })
        .unwrap_or(0)
}

/// An existing container planned over its device's target `on`.
fn luks_stack(
    c: &Container,
    on: usize,
    targets: &mut Vec<PlannedTarget>,
    stacks: &[PlannedStack],
    names: &mut Vec<String>,
) -> PlannedStack {
    let under = targets[on].geometry;
    let sector_size = c.info.sector_size.unwrap_or(512);
    let ss = u64::from(sector_size);
    let geometry = Geometry {
        size: under.size.saturating_sub(c.info.data_offset_bytes) / ss * ss,
        logical_block: under.logical_block.max(sector_size),
        physical_block: under.physical_block.max(sector_size),
    };
    let short: String = c.info.uuid.chars().filter(char::is_ascii_hexdigit).take(8).collect();
    let name = existing_name(&format!("luks-{short}"), format!("luks-{short}"), names);
    names.push(name.clone());
    targets.push(stack_target(&name, StackClass::Dm, geometry));
    let disks = disks_beneath(stacks, on);
    PlannedStack {
        name,
        target: targets.len() - 1,
        disks,
        kind: StackKind::Luks {
            uuid: c.info.uuid.clone(),
            version: c.info.version,
            cipher: c.info.cipher.clone(),
            key_bits: c.info.key_bits.unwrap_or(0),
            sector_size,
            data_offset_bytes: c.info.data_offset_bytes,
            key_file: c.key_file.clone(),
            unlock_seconds: c.unlock_seconds,
            on,
        },
        at: c.at.clone(),
        mode: None,
        read_ahead_bytes: None,
        existing: None,
    }
}

/// The arrays `existing` names, each with where; with `"all"`, every
/// other array that can start too (one that cannot is in `list`, with why).
fn pick_arrays<'a>(wanted: &[(String, Wanted)], arrays: &'a [Array]) -> Result<Vec<(String, &'a Array)>, ConfigError> {
    let known = || {
        let l: Vec<String> = arrays
            .iter()
            .map(|a| format!("{} ({})", a.view.name.as_deref().unwrap_or("-"), a.view.uuid))
            .collect();
        if l.is_empty() {
            "none on these disks".to_string()
        } else {
            l.join(", ")
        }
    };
    let mut out: Vec<(String, &Array)> = Vec::new();
    for (at, w) in wanted {
        let Wanted::Array(s) = w else { continue };
        let a = arrays
            .iter()
            .find(|a| {
                a.view.uuid == *s
                    || a.view
                        .name
                        .as_deref()
                        .is_some_and(|n| n == s || n.rsplit(':').next() == Some(s))
            })
            .ok_or_else(|| {
                ConfigError(format!(
                    "{at}: {s:?} is no md array on these disks; expected the name or UUID of one of: {}",
                    known()
                ))
            })?;
        if !out.iter().any(|(_, b)| b.view.uuid == a.view.uuid) {
            out.push((at.clone(), a));
        }
    }
    if wanted.iter().any(|(_, w)| *w == Wanted::All) {
        for (i, a) in arrays.iter().enumerate() {
            if a.view.startable && !out.iter().any(|(_, b)| b.view.uuid == a.view.uuid) {
                out.push((format!("existing (all, array {i})"), a));
            }
        }
    }
    Ok(out)
}

/// The volumes `existing` names, each with where and its volume group;
/// with `"all"`, every visible volume that can be opened read-only first.
fn pick_volumes<'a>(
    wanted: &[(String, Wanted)],
    vgs: &'a [Vg],
) -> Result<Vec<(String, &'a Vg, &'a LvmLv)>, ConfigError> {
    let mut out: Vec<(String, &Vg, &LvmLv)> = Vec::new();
    if wanted.iter().any(|(_, w)| *w == Wanted::All) {
        out.extend(vgs.iter().flat_map(|g| {
            g.meta
                .lvs
                .iter()
                .filter(|lv| lv.visible && g.not_opened(lv).is_none())
                .map(move |lv| (format!("existing (all, volume {}/{})", g.meta.name, lv.name), g, lv))
        }));
    }
    for (at, w) in wanted {
        let Wanted::Volume(vg, lv) = w else { continue };
        let Some(g) = vgs.iter().find(|g| g.meta.name == *vg) else {
            let known: Vec<&str> = vgs.iter().map(|g| g.meta.name.as_str()).collect();
            return err(format!(
                "{at}: \"{vg}/{lv}\": no volume group {vg:?} on these disks; expected one of: {} (a volume group \
                 inside a LUKS container is seen once the container is in existing with its key file)",
                if known.is_empty() {
                    "none here".to_string()
                } else {
                    known.join(", ")
                }
            ));
        };
        let Some(l) = g.meta.lvs.iter().find(|l| l.visible && l.name == *lv) else {
            let known: Vec<&str> = g
                .meta
                .lvs
                .iter()
                .filter(|l| l.visible)
                .map(|l| l.name.as_str())
                .collect();
            return err(format!(
                "{at}: \"{vg}/{lv}\": the volume group {vg} has no volume {lv:?}; expected one of: {}",
                known.join(", ")
            ));
        };
        if let Some(why) = g.not_opened(l) {
            return err(format!(
                "{at}: \"{vg}/{lv}\" cannot be opened read-only: {why}; expected a linear or striped volume whose \
                 physical volumes are all here"
            ));
        }
        if !out.iter().any(|(_, _, m)| m.uuid == l.uuid) {
            out.push((at.clone(), g, l));
        }
    }
    Ok(out)
}

/// An existing array planned: its present members join the targets.
fn array_stack(
    at: &str,
    a: &Array,
    cx: &Lookup<'_>,
    targets: &mut Vec<PlannedTarget>,
    used: &mut Vec<(usize, String)>,
    names: &mut Vec<String>,
) -> Result<PlannedStack, ConfigError> {
    let v = &a.view;
    let label = format!("{} ({})", v.name.as_deref().unwrap_or("-"), v.uuid);
    if let Some(why) = &v.impossible {
        return err(format!(
            "{at}: the array {label} cannot start: {why}; expected an array md can run"
        ));
    }
    if !v.startable {
        return err(format!(
            "{at}: the array {label} cannot start here: {} of its {} slot(s) have no member ({}); expected enough \
             members for {}",
            v.missing(),
            v.raid_disks,
            v.state(),
            v.level
        ));
    }
    let Some(level) = v.level.md_level() else {
        return err(format!(
            "{at}: the array {label} is {}, which bootbench does not assemble; expected linear, raid0, raid1, raid5, \
             raid6 or raid10",
            v.level
        ));
    };
    let layout = match &v.layout {
        None => None,
        Some(l) => match bench_core::vocab::names::from_name::<MdLayout>(&l.replace('=', "")) {
            Some(m) => Some(m),
            None => {
                return err(format!(
                    "{at}: the array {label} has the layout {l:?}, which bootbench does not assemble; expected one \
                     of {}",
                    bench_core::vocab::names::names_joined(&MdLayout::all_for(level), ", ")
                ))
            }
        },
    };
    let chunk_bytes = match v.chunk_bytes {
        None => DEFAULT_CHUNK,
        Some(c) => u32::try_from(c).unwrap_or(DEFAULT_CHUNK),
    };
    let mut members = Vec::new();
    for path in v.slots.iter().flatten() {
        members.push(member_target(&TargetRef::Path(path.clone()), at, cx, targets, used)?);
    }
    let gs: Vec<Geometry> = members.iter().map(|m| targets[*m].geometry).collect();
    let mut geometry = array_geometry(level, chunk_bytes, &gs);
    geometry.size = a.size_bytes;
    let short = || {
        format!(
            "md-{}",
            v.uuid
                .chars()
                .filter(char::is_ascii_hexdigit)
                .take(8)
                .collect::<String>()
        )
    };
    let md_name = v.name.as_deref().map(|n| n.rsplit(':').next().unwrap_or(n));
    let name = existing_name(md_name.unwrap_or(""), short(), names);
    names.push(name.clone());
    targets.push(stack_target(&name, StackClass::Md, geometry));
    Ok(PlannedStack {
        name,
        target: targets.len() - 1,
        disks: members.clone(),
        kind: StackKind::Array {
            level,
            chunk_bytes,
            layout,
            members,
        },
        at: at.to_string(),
        mode: None,
        read_ahead_bytes: None,
        existing: Some(ExistingMd {
            uuid: v.uuid.clone(),
            metadata: v.metadata.clone(),
            md_name: v.name.clone(),
            missing: v.missing(),
        }),
    })
}

/// What a volume's PVs are found among while it is planned.
struct Beneath<'a, 'b> {
    cx: &'a Lookup<'b>,
    targets: &'a mut Vec<PlannedTarget>,
    used: &'a mut Vec<(usize, String)>,
    /// The existing arrays planned, their targets by UUID.
    arrays: &'a BTreeMap<String, usize>,
    /// The existing LUKS containers planned, their targets by UUID.
    lukses: &'a BTreeMap<String, usize>,
    /// The PVs on disks and partitions planned so far, by path.
    devices: &'a mut BTreeMap<String, usize>,
    /// The stacks planned so far (an array's disks).
    stacks: &'a [PlannedStack],
}

/// Bytes per device-mapper sector.
const SECTOR: u64 = 512;

/// An existing volume planned: its PVs join the targets (or are the
/// arrays planned beneath it), its segments become the table LVM would
/// load: each extent range at the PV's first extent (`pe_start`) plus its
/// own first extent there, in sectors.
fn volume_stack(
    at: &str,
    g: &Vg,
    lv: &LvmLv,
    b: &mut Beneath<'_, '_>,
    names: &mut Vec<String>,
) -> Result<PlannedStack, ConfigError> {
    let vg = &g.meta;
    let full = format!("{}/{}", vg.name, lv.name);
    let ext = vg.extent_bytes / SECTOR;
    let bad = |what: String| ConfigError(format!("{at}: the volume {full}: {what}"));
    if ext == 0 || vg.extent_bytes % SECTOR != 0 {
        return Err(bad(format!(
            "its extent size of {} bytes is no whole number of sectors",
            vg.extent_bytes
        )));
    }
    // The metadata's PV names in the order the segments first use them
    // (each name's index in `pvs`, by name: linear in the stripes).
    let mut pv_index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut pvs: Vec<usize> = Vec::new();
    let mut segments = Vec::new();
    for s in &lv.segments {
        let mut stripes = Vec::new();
        for (pv, first) in &s.stripes {
            let meta = g
                .pv(pv)
                .ok_or_else(|| bad(format!("a segment names {pv:?}, which its volume group does not have")))?;
            let i = match pv_index.get(pv.as_str()) {
                Some(&i) => i,
                None => {
                    let t = pv_target(at, g.at(pv), b)
                        .ok_or_else(|| bad(format!("its physical volume {pv} is not here")))??;
                    pv_index.insert(pv, pvs.len());
                    pvs.push(t);
                    pvs.len() - 1
                }
            };
            let off = first
                .checked_mul(ext)
                .and_then(|o| o.checked_add(meta.pe_start_bytes / SECTOR))
                .ok_or_else(|| bad(format!("extent {first} of {pv} is past any device")))?;
            stripes.push((i, off));
        }
        let start = s.start_extent.checked_mul(ext);
        let length = s.extent_count.checked_mul(ext);
        let (Some(start), Some(length)) = (start, length) else {
            return Err(bad("a segment is past any device".to_string()));
        };
        segments.push(Segment {
            start,
            length,
            stripe_sectors: s.stripe_bytes.unwrap_or(0) / SECTOR,
            stripes,
        });
    }
    let sizes: Vec<u64> = pvs.iter().map(|&t| b.targets[t].geometry.size).collect();
    let sectors = crate::stacks::dm::check_segments(&segments, &sizes).map_err(bad)?;
    let mut disks: Vec<usize> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for &t in &pvs {
        for d in disks_beneath(b.stacks, t) {
            if seen.insert(d) {
                disks.push(d);
            }
        }
    }
    let gs: Vec<Geometry> = pvs.iter().map(|&t| b.targets[t].geometry).collect();
    let size = sectors
        .checked_mul(SECTOR)
        .ok_or_else(|| bad(format!("{sectors} sectors are past 2^64 bytes")))?;
    let geometry = Geometry {
        size,
        logical_block: gs.iter().map(|g| g.logical_block).max().unwrap_or(512),
        physical_block: gs.iter().map(|g| g.physical_block).max().unwrap_or(512),
    };
    let fallback = format!(
        "lv-{}",
        lv.uuid
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(8)
            .collect::<String>()
            .to_ascii_lowercase()
    );
    let name = existing_name(&format!("{}-{}", vg.name, lv.name), fallback, names);
    names.push(name.clone());
    b.targets.push(stack_target(&name, StackClass::Dm, geometry));
    Ok(PlannedStack {
        name,
        target: b.targets.len() - 1,
        disks,
        kind: StackKind::Volume {
            lv: full,
            lv_uuid: lv.uuid.clone(),
            vg_uuid: vg.uuid.clone(),
            seqno: vg.seqno,
            segments,
            pvs,
        },
        at: at.to_string(),
        mode: None,
        read_ahead_bytes: None,
        existing: None,
    })
}

/// The target of a PV found `where_`: a disk or a partition (joining the
/// targets the first time), or an existing array planned beneath.
fn pv_target(at: &str, where_: Option<&PvAt>, b: &mut Beneath<'_, '_>) -> Option<Result<usize, ConfigError>> {
    Some(match where_? {
        PvAt::Array { uuid, .. } => Ok(*b.arrays.get(uuid)?),
        PvAt::Luks(uuid) => Ok(*b.lukses.get(uuid)?),
        PvAt::Device(path) => match b.devices.get(path) {
            Some(&t) => Ok(t),
            None => member_target(&TargetRef::Path(path.clone()), at, b.cx, b.targets, b.used).inspect(|&t| {
                b.devices.insert(path.clone(), t);
            }),
        },
    })
}
