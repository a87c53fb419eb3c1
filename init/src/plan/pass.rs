//! The whole-disk passes' plans (docs/burn-in-and-scans.md): the surface
//! scan, the burn-in and preconditioning each go over an area of every
//! disk they select, in requests of one size with some in flight, bounded
//! in time, every disk at once or one after another. That shared part is
//! one [`PassPlan`]; each pass adds its own to it ([`ScanPlan`],
//! [`BurnPlan`], [`PreconditionPlan`]). One planner checks all three from
//! the config as written ([`super::pass_raw`] -> [`super::pass_check`]),
//! one runner runs them (`run::pass`).

use bench_core::document::result::{BurnOrder, TargetInfo};
use bench_core::vocab::units::Nanos;

/// The largest request of a pass: 64 MiB.
pub const MAX_SCAN_BS: u64 = 64 << 20;

/// What every whole-disk pass's plan holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassPlan {
    /// The disks it goes over (target indices), in the plan's order.
    pub targets: Vec<usize>,
    /// The area's first byte.
    pub offset: u64,
    /// The area's length; `None`: to each disk's end.
    pub length: Option<u64>,
    /// The size of each request.
    pub bs: u32,
    /// Requests in flight.
    pub iodepth: u32,
    /// The longest a disk's pass may take; `None`: from its bytes
    /// ([`time_for`]; preconditioning: from its rounds).
    pub max_time: Option<Nanos>,
    /// Every disk at once.
    pub parallel: bool,
}

impl PassPlan {
    /// The area of a disk of `size` bytes: `[start, end)`, or why it has none.
    pub fn area(&self, size: u64) -> Result<(u64, u64), String> {
        area(self.offset, self.length, size)
    }

    /// The area in words; `whole` when it is every block.
    fn area_words(&self, whole: &str) -> String {
        match self.length {
            Some(l) => format!("{l} B from byte {}", self.offset),
            None if self.offset == 0 => whole.to_string(),
            None => format!("from byte {} to the end", self.offset),
        }
    }

    /// Its disks in words, each with why it will not be written if its
    /// grant was refused.
    fn disks_words<'a>(&self, info: impl Fn(usize) -> &'a TargetInfo) -> String {
        self.targets
            .iter()
            .map(|&ti| {
                let i = info(ti);
                match &i.write_refusal {
                    Some(why) => format!("{} (not run: {why})", i.path),
                    None => i.path.clone(),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// How the disks go, and the time of each, in words.
    fn how_words(&self) -> String {
        format!(
            "{}{}",
            if self.parallel {
                "all at once"
            } else {
                "one after another"
            },
            self.max_time
                .map_or(String::new(), |t| format!(", at most {} s each", t.0 / 1_000_000_000))
        )
    }
}

/// The config's `surface_scan`, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanPlan {
    /// The disks, area, reads and time.
    pub pass: PassPlan,
    /// The serials the config named; `None`: every disk of the plan.
    pub disks: Option<Vec<String>>,
    /// The fraction read, parts per million.
    pub coverage_ppm: u32,
    /// Re-reads of a failing block.
    pub retries: u32,
    /// Unreadable blocks after which a disk's scan stops.
    pub max_bad: u64,
    /// Zones of the throughput curve.
    pub zones: u32,
    /// Slowest reads recorded.
    pub slowest: usize,
}

impl ScanPlan {
    /// The size of each read when the config gives none.
    pub const DEFAULT_BS: u32 = 1 << 20;
    /// Reads in flight when the config gives none.
    pub const DEFAULT_IODEPTH: u32 = 4;
    /// Re-reads of a failing block when the config gives none.
    pub const DEFAULT_RETRIES: u32 = 2;
    /// Unreadable blocks after which a scan stops, when the config gives none.
    pub const DEFAULT_MAX_BAD: u64 = 1000;
    /// Zones when the config gives none.
    pub const DEFAULT_ZONES: u32 = 100;
    /// Slowest reads recorded when the config gives none.
    pub const DEFAULT_SLOWEST: usize = 20;
    /// The rate a pass's time allowance assumes when the config gives no
    /// `max_time`: 10 MB/s, below any working disk's slowest zone.
    pub const FLOOR_RATE: u64 = 10_000_000;

    /// The longest a scan of `bytes` may take: the config's `max_time`, or
    /// the bytes at [`ScanPlan::FLOOR_RATE`] and a minute.
    pub fn time_for(&self, bytes: u64) -> Nanos {
        time_for(self.pass.max_time, bytes)
    }

    /// The plan's surface scan in words.
    pub fn line(&self) -> String {
        let p = &self.pass;
        format!(
            "surface scan: {}, {}, {:.4}% of the reads, {} B reads, {} in flight, {} retries, stops past {} unreadable blocks, {}",
            self.disks
                .as_ref()
                .map_or("every disk".to_string(), |d| format!("disks {}", d.join(", "))),
            p.area_words("whole"),
            f64::from(self.coverage_ppm) / 1e4,
            p.bs,
            p.iodepth,
            self.retries,
            self.max_bad,
            p.how_words()
        )
    }
}

/// The area from `offset`, `length` long (`None`: to the end), of a disk
/// of `size` bytes: `[start, end)`, or why it has none.
pub(super) fn area(offset: u64, length: Option<u64>, size: u64) -> Result<(u64, u64), String> {
    let end = match length {
        Some(l) => offset.saturating_add(l),
        None => size,
    };
    if offset >= size || end > size {
        return Err(format!(
            "the area {offset}..{end} is not within the disk's {size} bytes"
        ));
    }
    Ok((offset, end))
}

/// The longest a pass over `bytes` may take: `max_time`, or the bytes at
/// [`ScanPlan::FLOOR_RATE`] and a minute.
fn time_for(max_time: Option<Nanos>, bytes: u64) -> Nanos {
    max_time.unwrap_or_else(|| {
        let secs = bytes / ScanPlan::FLOOR_RATE + 60;
        Nanos(secs.saturating_mul(1_000_000_000))
    })
}

/// The config's `precondition`, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct PreconditionPlan {
    /// The disks (each `destructive` names), the area, the rounds' writes
    /// (`bs`, `iodepth`); no `max_time` (the time is the rounds').
    pub pass: PassPlan,
    /// The workload-independent fill first.
    pub fill: bool,
    /// The rounds' writes are random (else sequential).
    pub random: bool,
    /// Each round's time.
    pub round: Nanos,
    /// Rounds at most.
    pub max_rounds: u32,
    /// The Measurement Window, rounds.
    pub window: usize,
    /// The data excursion limit, percent.
    pub range_pct: f64,
    /// The slope excursion limit, percent.
    pub slope_pct: f64,
    /// The purge before it (`purge`): `None` none, `Some(None)` `auto`
    /// (the fastest the disk supports), else that method.
    pub purge: Option<Option<bench_core::document::result::EraseMethod>>,
}

/// The longest a purge is given, when asked (`precondition.purge`): a
/// sanitize or format of a large drive can take hours.
pub const PURGE_TIME: Nanos = Nanos(4 * 3600 * 1_000_000_000);

impl PreconditionPlan {
    /// A round's time when the config gives none: the PTS's minute.
    pub const DEFAULT_ROUND: Nanos = Nanos(60_000_000_000);
    /// The size of each write of the rounds when the config gives none.
    pub const DEFAULT_BS: u32 = 4096;
    /// Writes in flight when the config gives none.
    pub const DEFAULT_IODEPTH: u32 = 32;

    /// The rounds' workload.
    pub fn workload(&self) -> bench_core::passes::steady::Workload {
        bench_core::passes::steady::Workload {
            bs: self.pass.bs,
            depth: self.pass.iodepth,
            random: self.random,
        }
    }

    /// The longest a disk's preconditioning may take: the fill (the area
    /// twice at [`ScanPlan::FLOOR_RATE`]) and every round with a tenth
    /// more for its requests in flight, and a minute.
    pub fn time_for(&self, area: u64) -> Nanos {
        let purge = if self.purge.is_some() { PURGE_TIME.0 } else { 0 };
        Nanos(self.time_without_purge(area).0.saturating_add(purge))
    }

    /// [`Self::time_for`] less the purge's time.
    fn time_without_purge(&self, area: u64) -> Nanos {
        let fill = if self.fill {
            time_for(None, area.saturating_mul(2)).0
        } else {
            60_000_000_000
        };
        let rounds = self
            .round
            .0
            .saturating_add(self.round.0 / 10)
            .saturating_mul(u64::from(self.max_rounds));
        Nanos(fill.saturating_add(rounds))
    }

    /// The plan's preconditioning in words: which disks (each written
    /// whole), the fill, the rounds and the steady-state rule.
    pub fn line<'a>(&self, info: impl Fn(usize) -> &'a TargetInfo) -> String {
        let p = &self.pass;
        format!(
            "preconditioning (WRITES, destroys the data of): {}; {}; {}{} B {} writes, {} in flight, in rounds of {} s \
             until the last {} are steady (range within {}%, fitted slope within {}% of their mean), at most {} rounds, {}",
            p.disks_words(info),
            p.area_words("every block"),
            if self.fill {
                "the area written twice in 128 KiB writes, then "
            } else {
                ""
            },
            p.bs,
            if self.random { "random" } else { "sequential" },
            p.iodepth,
            self.round.0 as f64 / 1e9,
            self.window,
            self.range_pct,
            self.slope_pct,
            self.max_rounds,
            if p.parallel { "all at once" } else { "one after another" },
        )
    }
}

/// The config's `burn_in`, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BurnPlan {
    /// The disks (those of `burn_in.disks`, or every disk `destructive`
    /// names; each named there), the area, the requests and the time.
    pub pass: PassPlan,
    /// Sequential passes of patterns, or random ones.
    pub order: BurnOrder,
    /// Sequential: the patterns, in order.
    pub patterns: Vec<bench_core::passes::burnin::Pattern>,
    /// How many times the patterns run (random: passes).
    pub loops: u32,
    /// Retries of a failing block.
    pub retries: u32,
    /// Bad blocks after which a disk's burn-in stops.
    pub max_bad: u64,
    /// What a host-managed zoned disk's sequential zones are left as.
    pub zones_after: bench_core::document::result::ZonesAfter,
}

impl BurnPlan {
    /// Request size and depth of sequential passes when the config gives
    /// none (the surface scan's, measured there).
    pub const SEQUENTIAL_BS: u32 = 1 << 20;
    /// Requests in flight of sequential passes when the config gives none.
    pub const SEQUENTIAL_IODEPTH: u32 = 4;
    /// Random passes: Ironic's fio burn-in, 4 KiB at queue depth 32, 4 loops.
    pub const RANDOM_BS: u32 = 4096;
    /// Requests in flight of random passes when the config gives none.
    pub const RANDOM_IODEPTH: u32 = 32;
    /// Random passes when the config gives none.
    pub const RANDOM_LOOPS: u32 = 4;
    /// Retries of a failing block when the config gives none.
    pub const DEFAULT_RETRIES: u32 = 2;
    /// Bad blocks after which a burn-in stops, when the config gives none.
    pub const DEFAULT_MAX_BAD: u64 = 1000;

    /// The longest a burn-in of `bytes` (written and read, every pass)
    /// may take: the config's `max_time`, or the bytes at
    /// [`ScanPlan::FLOOR_RATE`] and a minute.
    pub fn time_for(&self, bytes: u64) -> Nanos {
        time_for(self.pass.max_time, bytes)
    }

    /// The plan's burn-in in words: which disks (each written whole), the
    /// passes, and how.
    pub fn line<'a>(&self, info: impl Fn(usize) -> &'a TargetInfo) -> String {
        let p = &self.pass;
        let passes = match self.order {
            BurnOrder::Sequential => format!(
                "sequential passes of {}{}",
                self.patterns.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
                if self.loops > 1 {
                    format!(", {} times", self.loops)
                } else {
                    String::new()
                }
            ),
            BurnOrder::Random => format!("{} random-order passes of random data", self.loops),
        };
        format!(
            "burn-in (WRITES, destroys the data of): {}; {}; {passes}, each read back and checked; {} B requests, {} in flight, {} retries, stops past {} bad blocks, {}",
            p.disks_words(info),
            p.area_words("every block"),
            p.bs,
            p.iodepth,
            self.retries,
            self.max_bad,
            p.how_words()
        )
    }
}
