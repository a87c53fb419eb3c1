//! A test's steps laid onto a host-managed zoned disk's zones (fio's
//! `zonemode=zbd`, zbd.c): where each step may read and write, and why a
//! step that cannot run there is refused, naming the zone model. Pure: the
//! zone report and the steps in, the steps with their [`ZoneMap`] and the
//! test's record out; init resets the zones and runs the steps.
//!
//! - A sequential write (`Pattern::Seq`, write) goes to the write
//!   pointers: each sequential zone that begins in the step's area is reset
//!   before each pass and written from its start up to its capacity (never
//!   into the gap between capacity and zone size: fio's
//!   `zbd_zone_capacity_end`); its conventional zones are written as any
//!   disk's. Each job writes whole zones in turn, one open at a time
//!   ([`ZoneMap::at_write_pointers`]), so a job count within the open and
//!   active zone limits (less the zones already open or active outside the
//!   area) always fits; fio keeps within `max_open_zones` the same way by
//!   choosing among the zones it holds open. The walk ends at the area's
//!   end: a time-bound test that gets there ends early (fio instead resets
//!   a full zone and goes on; a pass here always starts from reset zones).
//! - A random write or mix goes only to the area's conventional zones.
//! - A read reads the whole area where the drive allows reads past the
//!   write pointer (fio's `read_beyond_wp`), else only where the zones hold
//!   data ([`readable_extents`]).
//! - Any other step that writes (a fixed offset, a buffered write, a fill)
//!   is refused; a read that is not a walk or a random draw (cursors, a
//!   fixed offset) runs only where all it reads holds data.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::zones::{readable_extents, Zone, ZoneCond, ZoneType, SECTOR_BYTES};
use crate::document::result::{ZoneUse, ZonedTest};
use crate::io::{Access, Op};
use crate::spec::{step_range, Pattern, Span, Step, ZoneMap};

/// A host-managed disk's zone limits and its answer to a read past the
/// write pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `max_open_zones` (0: no limit).
    pub max_open: u64,
    /// `max_active_zones` (0: no limit).
    pub max_active: u64,
    /// [`crate::document::result::Zoned::reads_past_write_pointer`].
    pub reads_past_write_pointer: Option<bool>,
}

/// Why random writes are refused on a disk without conventional zones.
pub const NO_CONVENTIONAL: &str =
    "host-managed zoned disk with no conventional zones: random writes are refused by sequential-write-required zones";

/// The zones' byte range.
fn span(z: &Zone) -> (u64, u64) {
    (z.start * SECTOR_BYTES, (z.start + z.len) * SECTOR_BYTES)
}

/// Push `[a, b)` onto `out`, merged with the last span when adjacent.
fn push(out: &mut Vec<Span>, a: u64, b: u64) {
    if b <= a {
        return;
    }
    match out.last_mut() {
        Some(l) if l.start + l.len == a => l.len += b - a,
        _ => out.push(Span { start: a, len: b - a }),
    }
}

/// `[lo, hi)` of the conventional zones, cut to the area `[a, b)`.
fn conventional(zones: &[Zone], a: u64, b: u64) -> Vec<Span> {
    let mut out = Vec::new();
    for z in zones.iter().filter(|z| z.kind == ZoneType::Conventional) {
        let (zs, ze) = span(z);
        push(&mut out, zs.max(a), ze.min(b));
    }
    out
}

/// A sequential write's map: the conventional zones of `[a, b)` (cut to
/// it), and each sequential zone that begins in it, from its start to its
/// capacity (cut to `b`), reset first; read-only and offline zones left
/// out. Each extent of a sequential zone stands alone (never merged with
/// the next), so a job drains before it moves on.
fn write_pointer_map(zones: &[Zone], a: u64, b: u64) -> ZoneMap {
    let mut extents: Vec<Span> = Vec::new();
    let mut reset: Vec<Span> = Vec::new();
    let mut last_seq = false;
    for z in zones {
        let (zs, ze) = span(z);
        if ze <= a || zs >= b {
            continue;
        }
        match (z.kind, z.cond) {
            (ZoneType::Conventional, _) => {
                if last_seq {
                    extents.push(Span {
                        start: zs.max(a),
                        len: ze.min(b) - zs.max(a),
                    });
                } else {
                    push(&mut extents, zs.max(a), ze.min(b));
                }
                last_seq = false;
            }
            (k, c)
                if k.sequential()
                    && zs >= a
                    && !matches!(c, ZoneCond::ReadOnly | ZoneCond::Offline | ZoneCond::Other(_)) =>
            {
                let end = (zs + z.capacity * SECTOR_BYTES).min(b);
                extents.push(Span {
                    start: zs,
                    len: end - zs,
                });
                push(&mut reset, zs, ze);
                last_seq = true;
            }
            _ => {}
        }
    }
    ZoneMap {
        extents,
        reset,
        at_write_pointers: true,
    }
}

/// Zones open (explicitly: the device closes implicitly open ones itself
/// to open another) and active (open or closed) outside the spans `reset`.
fn busy_outside(zones: &[Zone], reset: &[Span]) -> (u64, u64) {
    let inside = |z: &Zone| {
        let s = z.start * SECTOR_BYTES;
        reset.iter().any(|r| (r.start..r.start + r.len).contains(&s))
    };
    let mut open = 0;
    let mut active = 0;
    for z in zones.iter().filter(|z| !inside(z)) {
        match z.cond {
            ZoneCond::ExplicitOpen => {
                open += 1;
                active += 1;
            }
            ZoneCond::ImplicitOpen | ZoneCond::Closed => active += 1,
            _ => {}
        }
    }
    (open, active)
}

/// Zones `spans` cover (whole zones of `zones`).
fn zones_in(zones: &[Zone], spans: &[Span]) -> u64 {
    zones
        .iter()
        .filter(|z| {
            let s = z.start * SECTOR_BYTES;
            spans.iter().any(|r| (r.start..r.start + r.len).contains(&s))
        })
        .count() as u64
}

/// `extents` cut to `[a, b)`.
fn cut(extents: &[Span], a: u64, b: u64) -> Vec<Span> {
    let mut out = Vec::new();
    for e in extents {
        push(&mut out, e.start.max(a), (e.start + e.len).min(b));
    }
    out
}

/// The spans of the disk that hold data ([`readable_extents`]), in bytes.
fn data(zones: &[Zone]) -> Vec<Span> {
    readable_extents(zones)
        .iter()
        .map(|e| Span {
            start: e.start * SECTOR_BYTES,
            len: e.sectors * SECTOR_BYTES,
        })
        .collect()
}

/// One step laid onto the zones: the step (mapped or as it was), how it
/// meets them, and the zones its map resets.
fn fit_step(mut step: Step, zones: &[Zone], lim: &Limits) -> Result<(Step, ZoneUse), String> {
    let (a, b) = step_range(&step);
    let bs = step.bs;
    let (use_, map) = match step.pattern.clone() {
        Pattern::Seq { op: Op::Write, .. } => {
            if step.access != Access::Direct {
                return Err(String::from(
                    "host-managed zoned disk: writes through the page cache (direct = false) could reach a zone out of order; set direct = true",
                ));
            }
            let map = write_pointer_map(zones, a, b);
            // A zone's writable part not a whole number of requests would
            // be left open (and active) at its end; the area's end may cut
            // the last one.
            if let Some(e) = map.extents.iter().find(|e| {
                e.start + e.len < b && map.reset.iter().any(|r| r.start == e.start) && e.len % u64::from(bs) != 0
            }) {
                return Err(format!(
                    "host-managed zoned disk: bs = {bs} B does not divide the writable part of the zone at byte {} ({} B), which the test would leave open",
                    e.start, e.len
                ));
            }
            let (open, active) = busy_outside(zones, &map.reset);
            let jobs = u64::from(step.jobs.max(1));
            for (name, limit, busy) in [("open", lim.max_open, open), ("active", lim.max_active, active)] {
                if limit != 0 && jobs + busy > limit {
                    return Err(format!(
                        "host-managed zoned disk: {jobs} job(s) writing a zone each, with {busy} zone(s) already {name} outside the test's area, exceed its {limit} {name} zones"
                    ));
                }
            }
            (ZoneUse::WritePointers, map)
        }
        Pattern::Random { read_pct, .. } if read_pct < 100 => {
            if !zones.iter().any(|z| z.kind == ZoneType::Conventional) {
                return Err(String::from(NO_CONVENTIONAL));
            }
            let extents = conventional(zones, a, b);
            if extents.is_empty() {
                return Err(String::from(
                    "host-managed zoned disk: the test's area holds none of its conventional zones, and random writes are refused by sequential-write-required zones",
                ));
            }
            (
                ZoneUse::ConventionalZones,
                ZoneMap {
                    extents,
                    reset: Vec::new(),
                    at_write_pointers: false,
                },
            )
        }
        Pattern::Seq { op: Op::Read, .. } | Pattern::Random { .. } => {
            if lim.reads_past_write_pointer == Some(true) {
                return Ok((step, ZoneUse::WholeArea));
            }
            let extents = cut(&data(zones), a, b);
            if extents.iter().all(|e| e.len < u64::from(bs)) {
                return Err(String::from(
                    "host-managed zoned disk that refuses reads past the write pointer: the test's area holds no written data to read",
                ));
            }
            (
                ZoneUse::DataOnly,
                ZoneMap {
                    extents,
                    reset: Vec::new(),
                    at_write_pointers: false,
                },
            )
        }
        _ if step.writes() => {
            return Err(String::from(
                "host-managed zoned disk: this test writes at offsets of its own, not at the zones' write pointers",
            ))
        }
        _ => {
            let whole = lim.reads_past_write_pointer == Some(true)
                || data(zones).iter().any(|e| e.start <= a && b <= e.start + e.len);
            if !whole {
                return Err(String::from(
                    "host-managed zoned disk that refuses reads past the write pointer: this test reads where the zones hold no written data",
                ));
            }
            return Ok((step, ZoneUse::WholeArea));
        }
    };
    let area = map.area_bytes(bs);
    if area == 0 {
        return Err(format!(
            "host-managed zoned disk: no whole request of {bs} B fits in the zones of the test's area"
        ));
    }
    step.pattern = match step.pattern {
        Pattern::Seq { op, .. } => Pattern::Seq {
            op,
            start: 0,
            end: area,
        },
        Pattern::Random { read_pct, .. } => Pattern::Random {
            read_pct,
            start: 0,
            end: area,
        },
        p => p,
    };
    step.zones = Some(map);
    Ok((step, use_))
}

/// Lay each of a test's steps onto the host-managed disk's `zones` (the
/// whole zone report), within its limits `lim`. The steps and the test's
/// record, or why the test cannot run there (a refusal naming the zone
/// model, never an I/O error blamed on the disk). A fill (a read test
/// that writes its area first) is refused: it writes at offsets of its
/// own.
pub fn fit(steps: Vec<Step>, zones: &[Zone], lim: &Limits) -> Result<(Vec<Step>, ZonedTest), String> {
    if steps.iter().any(|s| s.fill) {
        return Err(String::from(
            "host-managed zoned disk: the fill writes the test's area at offsets of its own, not at the zones' write pointers",
        ));
    }
    let mut out = Vec::with_capacity(steps.len());
    let mut rec = ZonedTest {
        mode: ZoneUse::WholeArea,
        area_bytes: 0,
        extents: 0,
        zones_reset: 0,
        zones_written: None,
    };
    let rank = |u: ZoneUse| match u {
        ZoneUse::WholeArea => 0,
        ZoneUse::DataOnly => 1,
        ZoneUse::ConventionalZones => 2,
        ZoneUse::WritePointers => 3,
    };
    for s in steps {
        let (s, u) = fit_step(s, zones, lim)?;
        if rank(u) > rank(rec.mode) {
            rec.mode = u;
        }
        match &s.zones {
            Some(m) => {
                rec.area_bytes += m.area_bytes(s.bs);
                rec.extents += m.extents.iter().filter(|e| e.len >= u64::from(s.bs)).count() as u64;
                rec.zones_reset = rec.zones_reset.max(zones_in(zones, &m.reset));
            }
            None => {
                let (a, b) = step_range(&s);
                rec.area_bytes += b.saturating_sub(a);
                rec.extents += 1;
            }
        }
        out.push(s);
    }
    Ok((out, rec))
}

/// Of the sequential zones `spans` cover, those that hold data in the
/// report `zones` (taken after the test): the zones it wrote.
pub fn written_in(zones: &[Zone], spans: &[Span]) -> u64 {
    zones
        .iter()
        .filter(|z| {
            let s = z.start * SECTOR_BYTES;
            z.kind.sequential()
                && matches!(
                    z.cond,
                    ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen | ZoneCond::Closed | ZoneCond::Full
                )
                && spans.iter().any(|r| (r.start..r.start + r.len).contains(&s))
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::expand;
    use crate::io::Geometry;
    use crate::spec::{TestSpec, Workload};
    use crate::vocab::units::{Bytes, MIB};
    use alloc::vec;

    /// Zone size 4 MiB, capacity 3 MiB, in sectors.
    const Z: u64 = 8192;
    const CAP: u64 = 6144;

    fn zone(i: u64, kind: ZoneType, cond: ZoneCond, written: u64) -> Zone {
        Zone {
            start: i * Z,
            len: Z,
            wp: i * Z + written,
            kind,
            cond,
            non_seq: false,
            reset: false,
            capacity: if kind == ZoneType::Conventional { Z } else { CAP },
        }
    }

    /// Two conventional zones, then six sequential ones: empty, half
    /// written (open), full, empty, offline, empty.
    fn disk() -> Vec<Zone> {
        use ZoneCond::*;
        let seq = ZoneType::SeqWriteRequired;
        vec![
            zone(0, ZoneType::Conventional, NotWp, 0),
            zone(1, ZoneType::Conventional, NotWp, 0),
            zone(2, seq, Empty, 0),
            zone(3, seq, ImplicitOpen, CAP / 2),
            zone(4, seq, Full, CAP),
            zone(5, seq, Empty, 0),
            zone(6, seq, Offline, 0),
            zone(7, seq, Empty, 0),
        ]
    }

    fn lim(reads: Option<bool>) -> Limits {
        Limits {
            max_open: 4,
            max_active: 6,
            reads_past_write_pointer: reads,
        }
    }

    fn steps(w: Workload, f: impl FnOnce(&mut crate::spec::Params)) -> Vec<Step> {
        let g = Geometry {
            size: 8 * Z * SECTOR_BYTES,
            logical_block: 512,
            physical_block: 512,
        };
        let spec = TestSpec::new("t", w, |p| {
            p.bs = Bytes(MIB);
            f(p)
        });
        expand(&spec, &g).expect("expands")
    }

    fn sp(start_mib: u64, len_mib: u64) -> Span {
        Span {
            start: start_mib * MIB,
            len: len_mib * MIB,
        }
    }

    /// A sequential write over the whole disk: the conventional zones as
    /// one run, each usable sequential zone from its start to its capacity
    /// (the offline one left out), those zones reset (whole zones), and
    /// the area's offsets run from 0 over their sum.
    #[test]
    fn a_sequential_write_goes_to_the_write_pointers_of_reset_zones() {
        let (s, rec) = fit(steps(Workload::SeqWrite, |_| {}), &disk(), &lim(None)).expect("fits");
        let m = s[0].zones.as_ref().expect("mapped");
        assert_eq!(
            m.extents,
            [sp(0, 8), sp(8, 3), sp(12, 3), sp(16, 3), sp(20, 3), sp(28, 3)]
        );
        assert_eq!(m.reset, [sp(8, 16), sp(28, 4)]);
        assert!(m.at_write_pointers);
        assert!(matches!(s[0].pattern, Pattern::Seq { op: Op::Write, start: 0, end } if end == 23 * MIB));
        assert_eq!(
            rec,
            ZonedTest {
                mode: ZoneUse::WritePointers,
                area_bytes: 23 * MIB,
                extents: 6,
                zones_reset: 5,
                zones_written: None,
            }
        );
        // An area that starts inside zone 2: that zone is left out.
        let (s, _) = fit(
            steps(Workload::SeqWrite, |p| {
                p.offset = Bytes(9 * MIB);
                p.length = Some(Bytes(8 * MIB));
            }),
            &disk(),
            &lim(None),
        )
        .expect("fits");
        let m = s[0].zones.as_ref().expect("mapped");
        assert_eq!(m.extents, [sp(12, 3), sp(16, 1)]);
        assert_eq!(m.reset, [sp(12, 8)]);
    }

    /// The limits: jobs each hold a zone open, beside the zones open or
    /// active outside the area; a request size that leaves a zone open is
    /// refused; buffered writes and fills are refused; every refusal names
    /// the zone model.
    #[test]
    fn sequential_writes_keep_within_the_limits() {
        let area = |p: &mut crate::spec::Params| {
            p.offset = Bytes(16 * MIB);
            p.length = Some(Bytes(8 * MIB));
        };
        let one = Limits {
            max_open: 1,
            max_active: 0,
            reads_past_write_pointer: None,
        };
        assert!(fit(steps(Workload::SeqWrite, area), &disk(), &one).is_ok());
        let two_jobs = |p: &mut crate::spec::Params| {
            area(p);
            p.jobs = 2;
        };
        let e = fit(steps(Workload::SeqWrite, two_jobs), &disk(), &one).unwrap_err();
        assert!(e.contains("exceed its 1 open zones"), "{e}");
        // Zone 3 is open (implicitly): active outside the area.
        let active = Limits {
            max_open: 0,
            max_active: 2,
            reads_past_write_pointer: None,
        };
        assert!(fit(steps(Workload::SeqWrite, area), &disk(), &active).is_ok());
        let e = fit(steps(Workload::SeqWrite, two_jobs), &disk(), &active).unwrap_err();
        assert!(e.contains("1 zone(s) already active"), "{e}");
        let e = fit(
            steps(Workload::SeqWrite, |p| {
                p.bs = Bytes(2 * MIB);
            }),
            &disk(),
            &lim(None),
        )
        .unwrap_err();
        assert!(e.contains("does not divide"), "{e}");
        for f in [
            (|p: &mut crate::spec::Params| p.direct = false) as fn(&mut crate::spec::Params),
            |p| p.fill = true,
        ] {
            let e = fit(steps(Workload::SeqWrite, f), &disk(), &lim(None)).unwrap_err();
            assert!(e.starts_with("host-managed zoned disk"), "{e}");
        }
    }

    /// Random writes and mixes go to the conventional zones only; a disk
    /// without any refuses them, saying why.
    #[test]
    fn random_writes_go_to_conventional_zones_only() {
        for w in [Workload::RandWrite, Workload::RandRw] {
            let (s, rec) = fit(steps(w, |_| {}), &disk(), &lim(Some(true))).expect("fits");
            assert_eq!(s[0].zones.as_ref().expect("mapped").extents, [sp(0, 8)]);
            assert_eq!(rec.mode, ZoneUse::ConventionalZones);
            assert_eq!((rec.area_bytes, rec.zones_reset), (8 * MIB, 0));
        }
        let none: Vec<Zone> = disk().into_iter().skip(2).collect();
        let e = fit(steps(Workload::RandWrite, |_| {}), &none, &lim(None)).unwrap_err();
        assert_eq!(e, NO_CONVENTIONAL);
    }

    /// Reads: the whole area where the drive allows reads past the write
    /// pointer; else only where the zones hold data (conventional zones,
    /// written zones to their write pointer); none there: refused.
    #[test]
    fn reads_go_where_the_data_is_unless_the_drive_allows_more() {
        for w in [Workload::SeqRead, Workload::RandRead] {
            let plain = steps(w, |_| {});
            let (s, rec) = fit(plain.clone(), &disk(), &lim(Some(true))).expect("fits");
            assert_eq!((s, rec.mode), (plain, ZoneUse::WholeArea));
            for reads in [Some(false), None] {
                let (s, rec) = fit(steps(w, |_| {}), &disk(), &lim(reads)).expect("fits");
                // Zone 3's first 1.5 MiB (whole requests: 1 MiB of it).
                let half = Span {
                    start: 12 * MIB,
                    len: 3 * MIB / 2,
                };
                assert_eq!(
                    s[0].zones.as_ref().expect("mapped").extents,
                    [sp(0, 8), half, sp(16, 3)]
                );
                assert_eq!((rec.mode, rec.area_bytes), (ZoneUse::DataOnly, 12 * MIB));
            }
            let empty: Vec<Zone> = disk().into_iter().skip(5).collect();
            let e = fit(steps(w, |_| {}), &empty, &lim(Some(false))).unwrap_err();
            assert!(e.contains("no written data"), "{e}");
        }
    }

    /// After a test, the zones of its reset spans that hold data.
    #[test]
    fn zones_written_are_the_reset_zones_holding_data() {
        assert_eq!(written_in(&disk(), &[sp(8, 16)]), 2);
        assert_eq!(written_in(&disk(), &[sp(0, 8)]), 0);
    }
}
