//! A zoned disk's zones: the zone attributes of its `queue/` directory and
//! the kernel's zone report (BLKREPORTZONE, which only reads), summed by
//! [`bench_core::device::zones`]. Read when the disk is found (the
//! document's `zoned.before`) and again after the run (`zoned.after`), so
//! that a zone that went offline or read-only during the run shows.

use std::fs::File;
use std::path::Path;

use bench_core::device::zones::{self as parse, QueueZones, Zone, ZoneModel};
use bench_core::document::result::{ZoneSummary, Zoned};

use crate::sys::blk;

/// Zones asked for in one report (256 KiB of descriptors).
const PER_REPORT: u32 = 4096;

/// The zone attributes of the queue directory `queue`; `None` for a disk
/// that is not zoned (or whose `queue/zoned` is missing or says what no
/// kernel writes); an error names the attribute that could not be read.
pub fn queue_zones(queue: &Path) -> Option<(ZoneModel, Result<QueueZones, String>)> {
    let read = |name: &str| std::fs::read_to_string(queue.join(name));
    let model = parse::parse_model(&read("zoned").ok()?).ok()?;
    if model == ZoneModel::None {
        return None;
    }
    let count = |name: &'static str| -> Result<u64, String> {
        let text = read(name).map_err(|e| format!("queue/{name}: {e}"))?;
        parse::parse_count(name, &text).map_err(|e| e.to_string())
    };
    let q = (|| {
        Ok(QueueZones {
            model,
            chunk_sectors: count("chunk_sectors")?,
            nr_zones: count("nr_zones")?,
            // Absent on kernels before 5.9: no limit known.
            max_open_zones: count("max_open_zones").unwrap_or(0),
            max_active_zones: count("max_active_zones").unwrap_or(0),
        })
    })();
    Some((model, q))
}

/// Every zone of the disk open as `f` (`size_bytes` long; the queue says
/// `q`), report after report.
pub fn report(f: &File, q: &QueueZones, size_bytes: u64) -> Result<Vec<Zone>, String> {
    let end = size_bytes / parse::SECTOR_BYTES;
    let mut zones: Vec<Zone> = Vec::new();
    let mut sector = 0;
    while sector < end {
        let bytes = blk::report_zones(f, sector, PER_REPORT).map_err(|e| format!("BLKREPORTZONE: {e}"))?;
        let r = parse::parse_report(&bytes).map_err(|e| e.to_string())?;
        let Some(last) = r.zones.last().copied() else { break };
        let next = last.start.saturating_add(last.len);
        zones.extend(r.zones);
        // A report that does not move on, or more zones than the queue
        // counts (with room for a report's worth): the kernel's word is
        // not to be looped on.
        if next <= sector || zones.len() as u64 > q.nr_zones.saturating_add(u64::from(PER_REPORT)) {
            return Err(format!("the zone report does not move past sector {sector}"));
        }
        sector = next;
    }
    Ok(zones)
}

/// The summary of the zones of the disk open as `f` now.
pub fn summary(f: &File, q: &QueueZones, size_bytes: u64) -> Result<ZoneSummary, String> {
    report(f, q, size_bytes).map(|z| parse::summarize(q, &z))
}

/// What the disk whose queue directory is `queue`, open as `f`, says of its
/// zones when it is found; `None` when it is not zoned. A host-managed
/// disk is asked whether it allows reads past the write pointer
/// ([`reads_past_write_pointer`], one read of one logical block of
/// `logical_block` bytes).
pub fn found(f: &File, queue: &Path, size_bytes: u64, logical_block: u32) -> Option<Zoned> {
    let (model, q) = queue_zones(queue)?;
    let zones = q.and_then(|q| report(f, &q, size_bytes).map(|z| (q, z)));
    let reads = match (&zones, model) {
        (Ok((_, z)), ZoneModel::HostManaged) => {
            reads_past_write_pointer(z, logical_block, |at, len| probe_read(f, at, len))
        }
        _ => None,
    };
    Some(Zoned {
        model,
        before: zones.as_ref().ok().map(|(q, z)| parse::summarize(q, z)),
        after: None,
        error: zones.err(),
        reads_past_write_pointer: reads,
    })
}

/// Whether the drive allows reads past the write pointer: `read` (of
/// `logical_block` bytes at a byte offset) at the write pointer of the
/// first sequential zone that is not full, and its answer: true if it
/// returned data, false if it failed. `None`: every zone is full,
/// conventional, read-only or offline, so no read can go past a write
/// pointer and none is asked. Only reads.
pub fn reads_past_write_pointer(
    zones: &[Zone],
    logical_block: u32,
    read: impl FnOnce(u64, u32) -> std::io::Result<()>,
) -> Option<bool> {
    use bench_core::device::zones::ZoneCond;
    let z = zones.iter().find(|z| {
        z.kind.sequential()
            && matches!(
                z.cond,
                ZoneCond::Empty | ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen | ZoneCond::Closed
            )
            && z.wp < z.start.saturating_add(z.capacity)
    })?;
    Some(read(z.wp * parse::SECTOR_BYTES, logical_block.max(512)).is_ok())
}

/// One O_DIRECT read of `len` bytes at byte `at` of the disk open as `f`
/// (through a descriptor reopened from it, so the page cache and its
/// readahead play no part).
fn probe_read(f: &File, at: u64, len: u32) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    // The descriptor's own open file, reopened O_DIRECT (as
    // `safety::reopen_path` does; safety sits above disks).
    let direct = super::file::open(&format!("/proc/self/fd/{}", f.as_raw_fd()), false, true)?;
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let mut buf =
        crate::sys::buf::AlignedBuf::new(len).ok_or_else(|| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
    direct.read_exact_at(&mut buf.as_mut_slice()[..len], at)
}

/// The zone attributes and the whole zone report of the zoned disk `t`,
/// now (BLKREPORTZONE only reads).
pub fn queue_and_zones(t: &bench_core::document::result::TargetInfo) -> Result<(QueueZones, Vec<Zone>), String> {
    let name = t
        .name
        .as_deref()
        .ok_or_else(|| format!("{}: no kernel name to find its queue by", t.path))?;
    let queue = crate::sysfs::root().join("block").join(name).join("queue");
    let f = super::file::open(&t.path, false, false).map_err(|e| format!("cannot open {} read-only: {e}", t.path))?;
    let (_, q) = queue_zones(&queue).ok_or_else(|| format!("{} is not zoned", t.path))?;
    let q = q?;
    let zones = report(&f, &q, t.size_bytes)?;
    Ok((q, zones))
}

/// The zones of the disk at `path` (a zoned one, `queue` its queue
/// directory) again, after the run: an error says why they could not be
/// read.
pub fn again(path: &str, queue: &Path, size_bytes: u64) -> Result<ZoneSummary, String> {
    let f = super::file::open(path, false, false).map_err(|e| format!("cannot open {path} read-only: {e}"))?;
    let (_, q) = queue_zones(queue).ok_or_else(|| format!("{path} is no longer zoned"))?;
    summary(&f, &q?, size_bytes)
}

/// Every zone of the zoned disk `t` now, reported through `f` (a
/// descriptor of it: the caller's claim, or one opened read-only).
pub fn zones_of(t: &bench_core::document::result::TargetInfo, f: &File) -> Result<Vec<Zone>, String> {
    let name = t
        .name
        .as_deref()
        .ok_or_else(|| format!("{}: no kernel name to find its queue by", t.path))?;
    let queue = crate::sysfs::root().join("block").join(name).join("queue");
    let (_, q) = queue_zones(&queue).ok_or_else(|| format!("{} is not zoned", t.path))?;
    report(f, &q?, t.size_bytes)
}

/// True if the first zone of the zoned disk `t` takes writes only at its
/// write pointer (a sequential zone); read-only, one zone reported.
pub fn first_zone_sequential(t: &bench_core::document::result::TargetInfo) -> Result<bool, String> {
    let f = super::file::open(&t.path, false, false).map_err(|e| format!("cannot open {} read-only: {e}", t.path))?;
    let bytes = blk::report_zones(&f, 0, 1).map_err(|e| format!("BLKREPORTZONE: {e}"))?;
    let r = parse::parse_report(&bytes).map_err(|e| e.to_string())?;
    let z = r
        .zones
        .first()
        .ok_or_else(|| "the zone report holds no zone".to_string())?;
    Ok(z.kind.sequential())
}

/// The byte ranges of the zoned disk `t` that hold data now, from its
/// zone report ([`bench_core::device::zones::readable_extents`]).
pub fn holding_data(t: &bench_core::document::result::TargetInfo) -> Result<Vec<(u64, u64)>, String> {
    let f = super::file::open(&t.path, false, false).map_err(|e| format!("cannot open {} read-only: {e}", t.path))?;
    let zones = zones_of(t, &f)?;
    Ok(parse::readable_extents(&zones)
        .iter()
        .map(|e| {
            (
                e.start * parse::SECTOR_BYTES,
                (e.start + e.sectors) * parse::SECTOR_BYTES,
            )
        })
        .collect())
}

/// The zoned disk's console line for its zones `when` (`before the run`,
/// `after the run`), or why they were not read.
pub fn line(path: &str, z: &Zoned, when: &str) -> String {
    let s = if when.starts_with("after") {
        z.after.as_ref()
    } else {
        z.before.as_ref()
    };
    match s {
        Some(s) => parse::describe(path, s, when),
        None => format!(
            "{path}: zoned {}: its zones {when} not read: {}",
            z.model,
            z.error.as_deref().unwrap_or("no report")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::device::zones::{ZoneCond, ZoneType};

    fn zone(i: u64, kind: ZoneType, cond: ZoneCond, written: u64) -> Zone {
        Zone {
            start: i * 64,
            len: 64,
            wp: i * 64 + written,
            kind,
            cond,
            non_seq: false,
            reset: false,
            capacity: 48,
        }
    }

    /// The probe reads one logical block at the write pointer of the first
    /// sequential zone that is not full, and says what the read said: a
    /// drive that refuses (an error) does not allow reads past the write
    /// pointer; one that answers does; with no such zone nothing is read.
    #[test]
    fn the_probe_reads_at_a_write_pointer_and_says_what_the_drive_did() {
        let zones = [
            zone(0, ZoneType::Conventional, ZoneCond::NotWp, 0),
            zone(1, ZoneType::SeqWriteRequired, ZoneCond::Full, 48),
            zone(2, ZoneType::SeqWriteRequired, ZoneCond::Offline, 0),
            zone(3, ZoneType::SeqWriteRequired, ZoneCond::ImplicitOpen, 8),
            zone(4, ZoneType::SeqWriteRequired, ZoneCond::Empty, 0),
        ];
        let mut asked = Vec::new();
        let refused = reads_past_write_pointer(&zones, 4096, |at, len| {
            asked.push((at, len));
            Err(std::io::Error::from_raw_os_error(libc::EIO))
        });
        assert_eq!(refused, Some(false));
        assert_eq!(asked, [((3 * 64 + 8) * 512, 4096)]);
        assert_eq!(reads_past_write_pointer(&zones, 512, |_, _| Ok(())), Some(true));
        let none = reads_past_write_pointer(&zones[..3], 512, |_, _| panic!("nothing to ask"));
        assert_eq!(none, None);
    }
}
