//! The diskinfo twins' request streams on the simulated disk, compared
//! request by request with models of FreeBSD's `sbin/diskinfo/diskinfo.c`
//! (the 2017+ revision with `-i` and `-S`), and the commit test's with the
//! commit-size algorithm of the reference.
//!
//! Each model below is written from the C source, not from the builders in
//! `diskinfo.rs`: the sector numbers `speeddisk` and `commandtime` pass to
//! `rdsect`, the file position `rdmega` reads on from, `iops`'s 128 reads
//! in flight and its 3 s check after each completion, `slogbench`'s batches
//! of 250 writes and flushes and its 1 s check after each batch. The twins
//! run as the classic profile runs them (`diskinfo_t_seek`, ...), on a
//! [`SimDisk`] that logs what it serves ([`SimDisk::record`]). Where the
//! twin departs from diskinfo on purpose (its own random generator, one
//! write where diskinfo's `parwrite` issues 128 KiB pieces, the count of
//! `-c`'s small reads on a disk whose sectors are not 512 bytes), the test
//! compares what the two share and says why.

use alloc::vec;
use alloc::vec::Vec;

use crate::document::result::Status;
use crate::engine::plan::expand;
use crate::engine::profile::profile;
use crate::engine::runner::{run_test, SerialRunner, Stop};
use crate::engine::sim::{Served, SimDisk, SimModel};
use crate::io::{IoReq, Op, Target};
use crate::spec::TestSpec;
use crate::vocab::units::{Bytes, Nanos, GIB, KIB, MIB};

/// diskinfo.c's `MEGATX`: the size of an `rdmega` read.
const MEGATX: i64 = 1 << 20;
/// diskinfo.c's `NAIO`: the reads `iops` keeps queued.
const NAIO: usize = 128;
/// diskinfo.c's `MAXTX`: `slogbench`'s largest write.
const MAXTX: u64 = 8 << 20;
/// diskinfo.c's `MAXIO`: the largest piece `parwrite` issues.
const MAXIO: u64 = 128 << 10;
/// `random()`'s values: 0 to 2^31 - 1 (random(3)).
const RANDOM_VALUES: u64 = 1 << 31;

/// The classic profile's test `name`: the twin as the project runs it.
fn classic(name: &str) -> TestSpec {
    profile("classic")
        .unwrap()
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no classic test {name}"))
}

/// Run `spec` on `disk` and return every request the disk served, the
/// untimed preparation reads included.
fn run(disk: &SimDisk, spec: &TestSpec) -> Vec<Served> {
    let steps = expand(spec, &disk.geometry()).unwrap();
    disk.record();
    let mut r = SerialRunner {
        target: disk,
        clock: &disk.clock,
    };
    let res = run_test(spec, "sim:0", &steps, &mut r, &Stop::new(), &mut |_| ());
    assert_eq!(res.status, Status::Ok, "{}", spec.name);
    disk.served()
}

/// A disk of `sectors` sectors of `ss` bytes, on the hard disk model.
fn hdd(ss: u32, sectors: u64, writable: bool) -> SimDisk {
    let model = SimModel {
        logical_block: ss,
        ..SimModel::hdd(sectors * u64::from(ss))
    };
    SimDisk::new(model, writable)
}

fn req(op: Op, offset: i64, len: i64) -> IoReq {
    IoReq {
        op,
        offset: u64::try_from(offset).unwrap(),
        len: u32::try_from(len).unwrap(),
    }
}

/// `rdsect(fd, blockno, sectorsize)`: one sector at `blockno * sectorsize`.
fn rdsect(blockno: i64, ss: i64) -> IoReq {
    req(Op::Read, blockno * ss, ss)
}

const FLUSH: IoReq = IoReq {
    op: Op::Flush,
    offset: 0,
    len: 0,
};

/// The requests of `served`, and each one's depth checked to be 1 (the
/// tool's read(2), pwrite(2) and ioctl are synchronous).
fn qd1(served: &[Served]) -> Vec<IoReq> {
    for (i, s) in served.iter().enumerate() {
        assert_eq!(s.in_flight, 1, "request {i}: {:?}", s.req);
    }
    served.iter().map(|s| s.req).collect()
}

/// `got` (the twin's) and `want` (the model's) equal, or a panic at the
/// first difference.
fn same(what: &str, got: &[IoReq], want: &[IoReq]) {
    if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
        panic!("{what}: request {i} is {:?}, the model's is {:?}", got[i], want[i]);
    }
    assert_eq!(got.len(), want.len(), "{what}: requests");
}

/// `speeddisk`'s seek section: the sectors `rdsect` reads for a disk of
/// `sc` sectors. `step = 1ULL << (flsll(sectorcount / (4 * 200)) - 1)`,
/// at most 16384; each section starts from its own positions (`b0`, `b1`)
/// and moves them by `step` after each read (`b0++` for the sequential
/// ones).
fn speeddisk_seeks(sc: i64) -> Vec<i64> {
    let q = sc / (4 * 200);
    let flsll = 64 - i64::from(q.leading_zeros());
    let step = (1i64 << (flsll - 1)).min(16384);
    // `pairs` times b0 then b1, each moved by its own stride after its read.
    let strokes = |v: &mut Vec<i64>, (mut b0, mut b1): (i64, i64), b1_by: i64, pairs: usize| {
        for _ in 0..pairs {
            v.push(b0);
            b0 += step;
            v.push(b1);
            b1 += b1_by;
        }
    };
    let mut v = Vec::new();
    // Full stroke: b0 from 0 up, b1 from the end down, alternately.
    strokes(&mut v, (0, sc - step), -step, 125);
    // Half stroke: b0 = sc/4, b1 = b0 + sc/2, both up.
    strokes(&mut v, (sc / 4, sc / 4 + sc / 2), step, 125);
    // Quarter stroke: b0 = sc/4, b1 = b0 + sc/4, both up, 250 pairs.
    strokes(&mut v, (sc / 4, sc / 4 + sc / 4), step, 250);
    // Short forward, short backward: 400 from the middle.
    v.extend((0..400).map(|i| sc / 2 + i * step));
    v.extend((0..400).map(|i| sc / 2 - i * step));
    // Seq outer, seq inner: 2048 consecutive sectors.
    v.extend(0..2048);
    v.extend(sc - 2048..sc);
    v
}

/// `speeddisk`'s transfer rates: `bulk = mediasize / (1024 * 1024)`, at
/// most 100; for each zone an untimed `rdsect(b0)`, then `bulk` `rdmega`
/// reads on from the file position it left (sector `b0 + 1`), with b0 =
/// 0, `sectorcount / 2 - bulk * (1024*1024 / sectorsize) / 2 - 1` and
/// `sectorcount - bulk * (1024*1024 / sectorsize) - 1`.
fn speeddisk_rates(mediasize: i64, ss: i64) -> Vec<IoReq> {
    let sc = mediasize / ss;
    let bulk = (mediasize / (1024 * 1024)).min(100);
    let per = 1024 * 1024 / ss;
    let mut v = Vec::new();
    for b0 in [0, sc / 2 - bulk * per / 2 - 1, sc - bulk * per - 1] {
        v.push(rdsect(b0, ss));
        for i in 0..bulk {
            v.push(req(Op::Read, (b0 + 1) * ss + i * MEGATX, MEGATX));
        }
    }
    v
}

/// diskinfo -t's seek section: the twin's 5896 reads are `speeddisk`'s,
/// sector for sector, in order, one at a time: with the step capped at
/// 16384 (2^27 sectors), an odd sector count (`sc / 4`, `sc / 2` rounded
/// down as C does) and 4096-byte sectors.
#[test]
fn seek_profile_stream_is_speeddisks() {
    for (ss, sc) in [(512u32, 1u64 << 27), (512, 2_000_003), (4096, 300_001)] {
        let disk = hdd(ss, sc, false);
        let got = qd1(&run(&disk, &classic("diskinfo_t_seek")));
        let ss = i64::from(ss);
        let want: Vec<IoReq> = speeddisk_seeks(i64::try_from(sc).unwrap())
            .into_iter()
            .map(|b| rdsect(b, ss))
            .collect();
        assert_eq!(want.len(), 250 + 250 + 500 + 400 + 400 + 2048 + 2048);
        same(&alloc::format!("seeks, {sc} sectors of {ss}"), &got, &want);
    }
}

/// diskinfo -t's transfer rates: the twin's outside, middle and inside
/// steps (with their untimed positioning reads) are `speeddisk`'s 3 x (1 +
/// 100) reads exactly, on an odd sector count and on 4096-byte sectors.
/// The surface points after them are the twin's own (diskinfo has none):
/// each a positioning read of the block just before it, then 25 MiB of
/// 1 MiB reads, in order from the start to the end of the disk.
#[test]
fn zones_stream_is_speeddisks_transfer_rates() {
    for (ss, sc) in [(512u32, 2 * 1024 * 1024 + 3), (4096, 256 * 1024 + 3)] {
        let disk = hdd(ss, sc, false);
        let spec = classic("diskinfo_t_zones");
        let got = qd1(&run(&disk, &spec));
        let size = sc * u64::from(ss);
        let ss = i64::from(ss);
        let want = speeddisk_rates(i64::try_from(size).unwrap(), ss);
        assert_eq!(want.len(), 303);
        same(
            &alloc::format!("transfer rates, {sc} sectors of {ss}"),
            &got[..303],
            &want,
        );

        let points = usize::try_from(spec.params.points).unwrap();
        let surface = &got[303..];
        assert_eq!(surface.len(), points * 26);
        let mut last = 0;
        for (i, p) in surface.chunks(26).enumerate() {
            let start = p[1].offset;
            assert_eq!(p[0], req(Op::Read, i64::try_from(start).unwrap() - ss, ss), "point {i}");
            for (k, r) in p[1..].iter().enumerate() {
                assert_eq!(
                    *r,
                    req(Op::Read, i64::try_from(start + k as u64 * MIB).unwrap(), MEGATX)
                );
            }
            assert!(start > last || i == 0, "point {i} at {start}");
            last = start;
        }
        assert_eq!(surface[surface.len() - 1].offset + MIB, size);
    }
}

/// `commandtime`: an untimed `rdsect(0)`, 10 `rdmega` reads on from
/// sector 1, another `rdsect(0)`, then 20480 `rdsect(0)`.
fn commandtime(ss: i64) -> Vec<IoReq> {
    let mut v = Vec::new();
    v.push(rdsect(0, ss));
    for i in 0..10 {
        v.push(req(Op::Read, ss + i * MEGATX, MEGATX));
    }
    v.push(rdsect(0, ss));
    v.extend(core::iter::repeat_n(rdsect(0, ss), 20480));
    v
}

/// diskinfo -c: with 512-byte sectors the twin's stream is
/// `commandtime`'s exactly. With 4096-byte sectors diskinfo still reads
/// 20480 sectors (80 MiB against the big reads' 10, so its figure holds
/// 3.5 KiB of transfer per command); the twin re-reads as many blocks as
/// the big reads hold, 2560, and is otherwise the same.
#[test]
fn command_overhead_stream_is_commandtimes() {
    let disk = hdd(512, 2 * 1024 * 1024, false);
    let got = qd1(&run(&disk, &classic("diskinfo_c")));
    same("-c, 512-byte sectors", &got, &commandtime(512));

    let disk = hdd(4096, 256 * 1024, false);
    let got = qd1(&run(&disk, &classic("diskinfo_c")));
    let want = commandtime(4096);
    same("-c, 4096-byte sectors", &got[..12], &want[..12]);
    assert_eq!(want.len() - 12, 20480);
    assert_eq!(got.len() - 12, 2560);
    assert!(got[12..].iter().all(|r| *r == rdsect(0, 4096)));
}

/// `iopsbench`'s sizes: the sector, 4 KiB unless the sector is 4096
/// bytes, 32 KiB, 128 KiB.
fn iopsbench_sizes(ss: u64) -> Vec<u64> {
    let mut v = vec![ss];
    if ss != 4096 {
        v.push(4096);
    }
    v.extend([32 * KIB, 128 * KIB]);
    v
}

/// How many `size`-byte blocks `random() % (mediasize / size)` reaches:
/// all of them, up to `random()`'s 2^31 values. The twins draw over the
/// whole range (see `iops_sweep`); the two agree below 2^31 blocks, as on
/// every disk here.
fn random_blocks(mediasize: u64, size: u64) -> u64 {
    (mediasize / size).min(RANDOM_VALUES)
}

/// `iops`'s depth: 128 reads queued at `T0`; after each completion
/// another while `delta_t() < 3.0`, then the rest drain. Given when each
/// read completed (the disk's times, in order), the depth each read found
/// when the disk began it; as many as the reads diskinfo issues.
fn iops_depths(t0: Nanos, ends: &[Nanos], runtime: Nanos) -> Vec<usize> {
    let mut queued = NAIO;
    let mut depths = Vec::new();
    let mut completed = 0;
    while completed < queued {
        depths.push(queued - completed);
        let Some(&end) = ends.get(completed) else {
            panic!("diskinfo reads more than the {} served", ends.len());
        };
        completed += 1;
        if end.saturating_sub(t0) < runtime {
            queued += 1;
        }
    }
    depths
}

/// The offsets of a step that draws `size`-aligned blocks at random,
/// checked by rule: aligned, inside the `blocks` that `random() %
/// (mediasize / size)` reaches, each drawn on its own (the first `blocks`
/// draws repeat one, where a map would give each block once) and, once a
/// step draws 16 times as many as there are blocks, reaching both ends.
fn random_offsets(what: &str, offsets: &[u64], size: u64, blocks: u64) {
    for &o in offsets {
        assert!(o % size == 0 && o / size < blocks, "{what}: offset {o}");
    }
    let w = usize::try_from(blocks).unwrap();
    if w >= 2 && offsets.len() >= w {
        let window = &offsets[..w];
        let repeats = window.iter().enumerate().any(|(i, a)| window[..i].contains(a));
        assert!(repeats, "{what}: {w} draws, no block twice");
    }
    if offsets.len() as u64 >= 16 * blocks {
        let ends = [0, (blocks - 1) * size];
        assert!(ends.iter().all(|e| offsets.contains(e)), "{what}: ends not reached");
    }
}

/// diskinfo -i: one step per `iopsbench` size, in its order (the twin adds
/// 1024 KiB: see [`IOPS_SWEEP_SIZES`]), each `iops`'s stream: reads of the
/// size at `random() % (mediasize / size) * size`, 128 in flight until 3 s
/// after the step's start, then the drain, with the depths `iops`'s loop
/// gives on the disk's completion times. The offsets are the twin's own
/// generator's (not FreeBSD's `random()`), so they are compared by rule
/// ([`random_offsets`]); on a 1 MiB disk the steps up to 128 KiB draw
/// often enough to reach both ends.
///
/// [`IOPS_SWEEP_SIZES`]: super::IOPS_SWEEP_SIZES
#[test]
fn iops_sweep_stream_is_iops() {
    for (ss, size) in [(512u32, 16 * MIB), (4096, 16 * MIB), (512, MIB), (4096, MIB)] {
        let disk = hdd(ss, size / u64::from(ss), false);
        let spec = classic("diskinfo_i");
        let runtime = spec.params.runtime.unwrap();
        assert_eq!((spec.params.iodepth, runtime), (128, Nanos::from_secs(3)));
        let got = run(&disk, &spec);
        let mut sizes = iopsbench_sizes(u64::from(ss));
        sizes.push(MIB);
        let mut rest = &got[..];
        for bs in sizes {
            let n = rest.iter().take_while(|s| u64::from(s.req.len) == bs).count();
            let (step, tail) = rest.split_at(n);
            rest = tail;
            let what = alloc::format!("{bs} B reads on {size} B");
            assert!(step.iter().all(|s| s.req.op == Op::Read), "{what}");
            let ends: Vec<Nanos> = step.iter().map(|s| s.end).collect();
            let depths: Vec<usize> = step.iter().map(|s| s.in_flight).collect();
            assert_eq!(depths, iops_depths(step[0].start, &ends, runtime), "{what}");
            let offsets: Vec<u64> = step.iter().map(|s| s.req.offset).collect();
            random_offsets(&what, &offsets, bs, random_blocks(size, bs));
        }
        assert!(rest.is_empty(), "after the sweep: {:?}", rest.first());
    }
}

/// `parwrite(fd, size, off)`: the pieces it writes, (offset, length):
/// 128 KiB ones by AIO while more than 128 KiB is left, then the rest by
/// pwrite, all at once.
fn parwrite(size: u64, off: u64) -> Vec<(u64, u64)> {
    let (mut size, mut o) = (size, 0);
    let mut v = Vec::new();
    while size > MAXIO {
        v.push((off + o, MAXIO));
        size -= MAXIO;
        o += MAXIO;
    }
    v.push((off + o, size));
    v
}

/// `slogbench` on a disk of `mediasize` bytes with `ss`-byte sectors,
/// consuming `got` as diskinfo's loop would issue it: for each size from
/// the sector doubling to `MAXTX`, `T0`, then batches of 250
/// (`random() % (mediasize / size)`, `parwrite` there, `DIOCGFLUSH`) while
/// `delta_t() < limit` after a batch. The time checks use the disk's
/// completion times. The twin writes each size as one request where
/// `parwrite` issues 128 KiB pieces (see `slog`): its write must cover
/// exactly what the pieces cover. Returns the batches of each size.
fn slogbench(got: &[Served], mediasize: u64, ss: u64, limit: Nanos) -> Vec<(u64, usize)> {
    let mut i = 0;
    let mut batches = Vec::new();
    let mut size = ss;
    while size <= MAXTX {
        let t0 = got.get(i).unwrap_or_else(|| panic!("no {size} B writes")).start;
        let mut n = 0;
        let mut offsets = Vec::new();
        loop {
            for _ in 0..250 {
                let [w, f] = [i, i + 1].map(|k| got.get(k).map_or(FLUSH, |s| s.req));
                assert_eq!(
                    (w.op, u64::from(w.len), f),
                    (Op::Write, size, FLUSH),
                    "{size}: request {i}"
                );
                offsets.push(w.offset);
                // parwrite's pieces, one after another, cover the write.
                let covered = parwrite(size, w.offset)
                    .into_iter()
                    .try_fold(w.offset, |at, (o, len)| (o == at && len <= MAXIO).then_some(o + len));
                assert_eq!(covered, Some(w.offset + size), "{size}: {w:?}");
                i += 2;
            }
            n += 1;
            if got[i - 1].end.saturating_sub(t0) >= limit {
                break;
            }
        }
        let what = alloc::format!("{size} B writes");
        random_offsets(&what, &offsets, size, random_blocks(mediasize, size));
        batches.push((size, n));
        size *= 2;
    }
    assert_eq!(i, got.len(), "after the last size: {:?}", got.get(i));
    batches
}

/// diskinfo -S: the twin's stream is `slogbench`'s, one at a time: the
/// sizes from the sector to 8 MiB, each in whole batches of 250 writes
/// each followed by a flush, ended by the first batch that ends at least
/// 1 s after the size began. On the hard disk model a batch takes over a
/// second; on the SSD model with a 100 ms bound the small sizes take
/// several.
#[test]
fn slog_stream_is_slogbenchs() {
    let spec = classic("diskinfo_S");
    assert_eq!(spec.params.runtime, Some(Nanos::from_secs(1)));
    let disk = hdd(512, 2 * 1024 * 1024, true);
    let got = run(&disk, &spec);
    qd1(&got);
    let batches = slogbench(&got, GIB, 512, Nanos::from_secs(1));
    assert_eq!(batches.len(), 15);
    assert!(batches.iter().all(|&(_, n)| n == 1), "{batches:?}");

    let model = SimModel {
        logical_block: 4096,
        ..SimModel::ssd(64 * MIB)
    };
    let disk = SimDisk::new(model, true);
    let mut spec = spec;
    spec.params.runtime = Some(Nanos::from_millis(100));
    let got = run(&disk, &spec);
    qd1(&got);
    let batches = slogbench(&got, 64 * MIB, 4096, Nanos::from_millis(100));
    assert_eq!(batches.len(), 12);
    assert!(batches[0].1 >= 3 && batches[11].1 == 1, "{batches:?}");
}

/// The commit-size test of the reference (seed 000's "commit size"; not a
/// diskinfo option): `n` writes of `bs`, one after another from the start
/// of the range, a flush after every `k` (and one at the end for any left
/// unflushed), then the same `n` writes with one flush at the end.
fn commit_size(n: u64, bs: u64, k: u64) -> Vec<IoReq> {
    let mut v = Vec::new();
    let write = |i: u64| IoReq {
        op: Op::Write,
        offset: i * bs,
        len: u32::try_from(bs).unwrap(),
    };
    for i in 0..n {
        v.push(write(i));
        if (i + 1) % k == 0 || i + 1 == n {
            v.push(FLUSH);
        }
    }
    v.extend((0..n).map(write));
    v.push(FLUSH);
    v
}

/// The commit test: the classic profile's (1000 x 10 writes of 16 KiB, a
/// flush per 10) and an uneven one (64 writes, a flush per 3) are the
/// reference's streams exactly, one request at a time.
#[test]
fn commit_stream_is_commit_size() {
    let disk = hdd(512, 2 * 1024 * 1024, true);
    let got = qd1(&run(&disk, &classic("commit_size")));
    same("commit_size", &got, &commit_size(10_000, 16 * KIB, 10));

    let disk = hdd(512, 2 * 1024 * 1024, true);
    let spec = TestSpec::new("t", crate::spec::Workload::Commit, |p| {
        (p.bs, p.size, p.flush_every) = (Bytes(16 * KIB), Some(Bytes(MIB)), 3)
    });
    let got = qd1(&run(&disk, &spec));
    same("commit every 3", &got, &commit_size(64, 16 * KIB, 3));
}
