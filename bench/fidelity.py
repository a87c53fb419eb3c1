#!/usr/bin/env python3
"""The pairs of `make fidelity` (bench/fidelity.sh runs this).

`measure`: run every pair on one loop device, FIDELITY_ROUNDS rounds in
alternating order, and append one JSON line per pair to --results.
`table`: print the table from those lines.
`markdown`: the same as Markdown tables, the devices side by side.

The twins' parameters mirror bench-core/src/engine/profile.rs (`classic`, `cdm`,
`standard`); when a twin's parameters change there, change them here too.
Each figure is in the tool's own unit: hdparm "MB/sec" = MiB/s, GNU dd
"MB/s" = 10^6 B/s, sysbench MiB/s, fio MiB/s (sequential) or IOPS
(random), CrystalDiskMark MB/s = 10^6 B/s.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

MIB = 1 << 20
CONFIRM = "I understand this destroys data"

# Causes that lie in the tool, by pair name: printed in the note column.
# (For the twins' owners to fill in as they find them, with the tool's
# source file and function.)
KNOWN = {
    "dd_write_8k": "tool: run with the device held open, so dd's close does not write the page cache "
                   "back inside dd's time (block/bdev.c blkdev_put_whole; coreutils src/dd.c finish_up "
                   "closes before print_stats), as the seed's dd to a file did not",
    "dd_write_16k": "tool: run with the device held open, so dd's close is not the device's last: the last "
                    "close also drops the device's whole page cache (block/bdev.c blkdev_flush_mapping: "
                    "sync_blockdev, then kill_bdev), tens of ms inside the seed's time that the seed's "
                    "dd to a file never paid; and `sync` as `sync DEV`: a bare sync(2) flushes no raw "
                    "device's cache (fs/sync.c ksys_sync), the seed's sync of its filesystem did",
    "control_hdparm_t": "A/A control: the tool on both sides; its ratio and range are the machine's own spread",
    "control_fio_rand4k": "A/A control: the tool on both sides; its ratio and range are the machine's own spread",
    "sysbench_seqwr": "tool: sysbench src/tests/fileio/sb_fileio.c file_prepare() unlinks and re-creates "
                      "every test file in seqwr mode: it measures file creation (block allocation) "
                      "and the twin overwrites an allocated file",
    "sysbench_rndwr": "tool: sysbench src/tests/fileio/sb_fileio.c file_do_fsync() syncs with fsync() "
                      "(--file-fsync-mode=fsync) each of its 128 files, each with timestamps a write "
                      "changed: ext4 commits them through the journal, more flush and write requests "
                      "per MiB than the twin's ranged fdatasyncs of one file; a request-bound throttle "
                      "(throttled-iops) counts them",
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


# /sys/block/NAME/stat, the fields the request table keeps (the kernel's
# Documentation/block/stat.rst: 512-byte sectors whatever the device's block).
STAT_FIELDS = {"r_ios": 0, "r_merges": 1, "r_sectors": 2, "w_ios": 4, "w_merges": 5, "w_sectors": 6,
               "d_ios": 11, "d_sectors": 13, "flushes": 15}


def read_stat(dev):
    v = [int(x) for x in open(f"/sys/block/{os.path.basename(dev)}/stat").read().split()]
    v += [0] * (17 - len(v))  # kernels before 5.5 have no flush fields, before 4.18 no discard
    return {k: v[i] for k, i in STAT_FIELDS.items()}


# Quiet between the settle and a measured command on a throttled device.
# A command whose first request came within a few milliseconds of the
# settle's sync and BLKFLSBUF got more than the throttle's rate: the twin of
# fio randread 4k QD1 read 51,504-51,921 requests in 5 s on a 40 MiB/s
# throttle (up to 1,024 more, 4 MiB: one 100 ms blk-throttle slice) where
# fio, whose job starts later, read 51,201; with 0.5 s of quiet first the
# twin read 51,201 three times of three.
THROTTLE_IDLE = 0.5


class Throttle:
    """A cgroup whose block throttle holds one device to fixed rates: cgroup
    v1's blkio.throttle.*_device where the machine has it, else v2's io.max.
    Only what a process of the cgroup submits itself is throttled (its reads,
    its O_DIRECT writes, the write-back its own fsync or sync submits); the
    kernel's background write-back runs in a kernel thread outside it."""

    V1 = "/sys/fs/cgroup/blkio"

    def __init__(self, dev, bps, iops, name):
        mm = open(f"/sys/block/{os.path.basename(dev)}/dev").read().strip()
        if os.path.exists(os.path.join(self.V1, "blkio.throttle.read_bps_device")):
            self.kind, self.path = "cgroup v1 blkio.throttle", os.path.join(self.V1, name)
            os.mkdir(self.path)
            # In v1 a limit of 0 removes the rule: only nonzero limits are set.
            for f, v in (("read_bps", bps), ("write_bps", bps), ("read_iops", iops), ("write_iops", iops)):
                if v:
                    with open(os.path.join(self.path, f"blkio.throttle.{f}_device"), "w") as fh:
                        fh.write(f"{mm} {v}\n")
        else:
            root = self.v2_root()
            self.kind, self.path = "cgroup v2 io.max", os.path.join(root, name)
            with open(os.path.join(root, "cgroup.subtree_control"), "w") as fh:
                fh.write("+io\n")
            os.mkdir(self.path)
            lim = lambda v: str(v) if v else "max"
            with open(os.path.join(self.path, "io.max"), "w") as fh:
                fh.write(f"{mm} rbps={lim(bps)} wbps={lim(bps)} riops={lim(iops)} wiops={lim(iops)}\n")
        self.procs = os.path.join(self.path, "cgroup.procs")

    @staticmethod
    def v2_root():
        for line in open("/proc/self/mounts"):
            f = line.split()
            if f[2] == "cgroup2":
                ctl = os.path.join(f[1], "cgroup.controllers")
                if os.path.exists(ctl) and "io" in open(ctl).read().split():
                    return f[1]
        raise RuntimeError("no cgroup v1 blkio hierarchy and no cgroup v2 mount with the io controller")

    def enter(self):
        """preexec_fn: the child joins the cgroup before it execs."""
        with open(self.procs, "w") as fh:
            fh.write(f"{os.getpid()}\n")

    def close(self):
        for _ in range(50):  # the last members may still be exiting
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


# What the traced run records: the calls that move or flush data, and the
# ioctls, counted only on the device (or the files of its filesystem);
# io_uring_enter and sync(2) have no such descriptor and always count.
TRACED = ("read,pread64,readv,preadv,preadv2,write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync,"
          "sync,syncfs,sync_file_range,ioctl,fadvise64,fallocate,io_uring_enter,io_submit,io_getevents")
FAMILY = {"read": "rd", "pread64": "rd", "readv": "rd", "preadv": "rd", "preadv2": "rd",
          "write": "wr", "pwrite64": "wr", "writev": "wr", "pwritev": "wr", "pwritev2": "wr",
          "fsync": "flush", "fdatasync": "flush", "sync": "flush", "syncfs": "flush",
          "sync_file_range": "flush", "io_uring_enter": "uring", "io_submit": "aio",
          "io_getevents": "aio"}


# How busy the CPUs may be in the quiet before a throttled run before the
# harness warns: the harness itself is idle then.
BUSY_WARN = 0.2


def cpu_times():
    """(busy, total) jiffies of all CPUs, from /proc/stat's first line."""
    # user nice system idle iowait irq softirq steal; guest and guest_nice
    # are counted in user and nice already.
    f = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)  # idle + iowait
    return sum(f) - idle, sum(f)


def cpu_busy(a, b):
    """The busy share of the CPUs between two cpu_times()."""
    total = b[1] - a[1]
    return (b[0] - a[0]) / total if total > 0 else 0.0


class Device:
    def __init__(self, a):
        self.a = a
        self.dev = a.dev
        self.size = int(sh(["blockdev", "--getsize64", a.dev]).stdout)
        self.mounted = False
        self.throttle = None
        self.traces = None  # a list while a traced run collects strace files
        self.snap = None

    def settle(self):
        """Before every measured command, on both sides: written data out,
        the loop device's buffer cache dropped (when no filesystem is on it),
        with a filesystem on it the page cache of its files dropped (the
        seeds' `sync; echo 3 > /proc/sys/vm/drop_caches`: else sysbench
        reads the file set `prepare` left in the cache, while the twin drops
        the cache of its file first), and the backing file's page cache
        dropped (a no-op on tmpfs)."""
        subprocess.run(["sync"], check=True)
        if not self.mounted:
            subprocess.run(["blockdev", "--flushbufs", self.dev], check=True)
        else:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
        fd = os.open(self.a.backing, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)

    def begin(self):
        """Right before a side's measured command: settle, then the device's
        counters, so what the settling wrote is not the command's. On a
        throttled device, then THROTTLE_IDLE of quiet, so both sides start
        on a throttle that has forgotten the settle."""
        self.settle()
        if self.throttle:
            before = cpu_times()
            time.sleep(THROTTLE_IDLE)
            busy = cpu_busy(before, cpu_times())
            if busy > BUSY_WARN:
                print(f"    warning: the CPUs were {busy:.0%} busy in the quiet before this run "
                      f"(another process?): a run that waits for a CPU can start a fresh throttle "
                      f"slice and move its figure (a CI build beside moved one pair 2.5%)",
                      file=sys.stderr, flush=True)
        self.snap = read_stat(self.dev)

    def end(self):
        """The device's counters moved since begin()."""
        now = read_stat(self.dev)
        d = {k: now[k] - self.snap[k] for k in now} if self.snap else None
        self.snap = None
        return d

    def run(self, argv, **kw):
        """A measured command: in the throttle's cgroup when the device has
        one, under strace in a traced run."""
        if self.traces is not None:
            out = os.path.join(self.a.work, f"strace.{len(self.traces)}")
            self.traces.append(out)
            argv = ["strace", "-f", "-y", "-qq", "-s", "0", "-e", "signal=none", "-e", f"trace={TRACED}",
                    "-o", out, *argv]
        if self.throttle:
            kw["preexec_fn"] = self.throttle.enter
        return sh(argv, **kw)


def twin(d, target, spec, side, unit, best=False):
    """Run one bootbench test on target; its figure in `unit`."""
    a = d.a
    cfg = os.path.join(a.work, "twin.json")
    out = os.path.join(a.work, "twin.out.json")
    if os.path.exists(out):
        os.unlink(out)
    # A fresh seed each run, as fio's --randrepeat=0 below: with bootbench's
    # fixed default seed every round would read the same random offsets,
    # which a cache under the device (the hypervisor's, a drive's) then holds
    # from the round before, while fio's offsets are new each run.
    spec = {**spec, "seed": int.from_bytes(os.urandom(7), "little")}
    # The tools run with the machine's own CPU idle states: so does the twin
    # (bootbench holds the CPU wake-up latency limit at 0 by default).
    conf = {"targets": [target], "tests": [spec], "cpu_dma_latency": "off"}
    # A fill writes too (bench-core TestSpec::writes).
    if spec["workload"] in ("seq_write", "rand_write", "rand_rw") or spec.get("fill"):
        conf["destructive"] = {"confirm": CONFIRM, "countdown": 0, "targets": [target],
                               "allow_overwrite_signatures": True}
    with open(cfg, "w") as f:
        json.dump(conf, f)
    d.begin()
    p = d.run([a.bin, "run", "--config", cfg, "--out", out])
    if p.returncode != 0:
        raise RuntimeError(f"bootbench exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
    t = json.load(open(out))["tests"][0]
    if t["status"]["state"] != "ok":
        raise RuntimeError(f"bootbench test {t['status']}")
    steps = [s[side] for s in t["steps"] if s.get(side)]
    if not steps:
        raise RuntimeError(f"bootbench: no {side} figures")
    if best:  # CrystalDiskMark reports the best pass: the step holds it (`passes`, `chosen_pass`)
        bps = max(s["bytes_per_sec"] for s in steps)
        iops = max(s["iops"] for s in steps)
    else:
        ns = sum(s0["runtime_ns"] for s0 in t["steps"] if s0.get(side))
        bps = sum(s["bytes"] for s in steps) / ns * 1e9 if ns else steps[0]["bytes_per_sec"]
        iops = sum(s["ios"] for s in steps) / ns * 1e9 if ns else steps[0]["iops"]
    return figure(unit, bps, iops)


def figure(unit, bps, iops):
    return {"MiB/s": bps / MIB, "MB/s": bps / 1e6, "IOPS": iops}[unit]


# --- the tools -------------------------------------------------------------

def hdparm(d, flags, label):
    d.begin()
    p = d.run(["hdparm", *flags, d.dev])
    m = re.search(label + r":.*=\s*([\d.]+)\s*MB/sec", p.stdout)
    if not m:
        raise RuntimeError(f"hdparm {flags}: {p.stdout.strip()} {p.stderr.strip()}")
    return float(m.group(1))


def dd_figure(stderr):
    """GNU dd's own figure, from its byte count and seconds (10^6 B/s)."""
    m = re.search(r"^(\d+) bytes.*copied, ([\d.e+-]+) s", stderr, re.M)
    if not m:
        raise RuntimeError(f"dd: {stderr.strip()}")
    return int(m.group(1)) / float(m.group(2)) / 1e6


def dd(d, argv, sync=False, nbytes=None, held=False):
    """dd's figure. `held`: a read-only descriptor of the device stays open
    around dd, so dd's close is not the device's last. The last close of a
    block device writes back every dirty page (the kernel's block/bdev.c,
    blkdev_put_whole -> blkdev_flush_mapping -> sync_blockdev) and dd times
    its close (coreutils src/dd.c finish_up: cleanup() closes the output
    before print_stats()). The seed's `dd ... of=output.img` wrote a file,
    whose close writes nothing back: holding the device open gives dd on
    the device the seed's meaning."""
    d.begin()
    fd = os.open(d.dev, os.O_RDONLY) if held else None
    try:
        t0 = time.monotonic()
        p = d.run(["dd", *argv])
        if p.returncode != 0:
            raise RuntimeError(f"dd: {p.stderr.strip()}")
        if sync:  # the seed: time (dd ...; sync): the figure the post's reader computes
            # `sync DEV` (an fsync of the device, coreutils src/sync.c
            # sync_arg): its pages written and its cache flushed, what the
            # seed's bare `sync` did for its file through the filesystem's
            # sync_fs (a journal commit with a flush). A bare sync(2) writes
            # a raw device's pages and waits, but flushes no device's cache
            # (fs/sync.c ksys_sync: sync_bdevs), and on the loop over a file
            # that flush is what writes the backing file to the disk.
            if d.run(["sync", d.dev]).returncode != 0:
                raise RuntimeError(f"sync {d.dev} failed")
            return nbytes / (time.monotonic() - t0) / 1e6
        return dd_figure(p.stderr)
    finally:
        # Closed after the clock stops: the last close's work is not dd's.
        if fd is not None:
            os.close(fd)


def sysbench(d, mode, a):
    # seqwr's run deletes and re-creates the files (see KNOWN), so a run
    # after it would find them short: prepare again (untimed) before each.
    p = sh(["sysbench", "fileio", f"--file-total-size={a.sysbench_size}", "prepare"], cwd=a.mnt)
    if p.returncode != 0:
        raise RuntimeError(f"sysbench prepare: exit {p.returncode}")
    d.begin()
    p = d.run(["sysbench", "fileio", f"--file-total-size={a.sysbench_size}",
            f"--file-test-mode={mode}", f"--time={a.runtime}", "run"], cwd=a.mnt)
    key = "read" if mode.endswith("rd") else "written"
    m = re.search(key + r", MiB/s:\s*([\d.]+)", p.stdout)
    if p.returncode != 0 or not m:
        fatal = [x for x in (p.stdout + p.stderr).splitlines() if "FATAL" in x or "rror" in x]
        raise RuntimeError(f"sysbench {mode}: exit {p.returncode}: {' '.join(fatal)[:200]}")
    return float(m.group(1))


# The twins' engine parameters that are fio options of the same name and
# meaning: a twin that sets one hands it to its fio run too.
FIO_ENGINE_OPTS = (
    "hipri",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "iodepth_batch_submit",
    "cpus_allowed",
    "cpus_allowed_policy",
)


def engine_of(qd, spec=None):
    """bootbench's engine for a twin: io_uring above QD1 and with hipri or
    sqthread_poll at any depth (as fio's ioengine=io_uring), psync else."""
    spec = spec or {}
    return "io_uring" if qd > 1 or spec.get("hipri") or spec.get("sqthread_poll") else "psync"


def fio_engine_args(qd, spec=None):
    """fio's engine options for the twin `spec`, so the pair stays alike."""
    spec = spec or {}
    engine = engine_of(qd, spec)
    argv = [f"--ioengine={engine}"]
    if engine == "io_uring":
        # bootbench's ring registers the file and every buffer (fio's
        # registerfiles and fixedbufs, off in fio by default).
        argv += ["--registerfiles", "--fixedbufs"]
    for k in FIO_ENGINE_OPTS:
        v = spec.get(k)
        if v is None or v is False:
            continue
        argv.append(f"--{k}" if v is True else f"--{k}={v}")
    return argv


def fio(d, rw, bs, qd, unit, runtime, size=None, spec=None):
    """fio beside the twin `spec` (its engine options passed on)."""
    d.begin()
    argv = ["fio", "--name=fidelity", f"--filename={d.dev}", f"--rw={rw}", f"--bs={bs}",
            f"--iodepth={qd}", *fio_engine_args(qd, spec), "--direct=1", f"--runtime={runtime}",
            "--time_based", "--randrepeat=0", "--output-format=json"]
    if size:
        argv.append(f"--size={size}")
    p = d.run(argv)
    if p.returncode != 0:
        raise RuntimeError(f"fio: {p.stderr.strip()}")
    side = "read" if "read" in rw else "write"
    r = json.loads(p.stdout)["jobs"][0][side]
    return figure(unit, float(r["bw_bytes"]), float(r["iops"]))


def cdm_fio_passes(dev, rw, bs, qd, a):
    """fio's command for each of CrystalDiskMark's runs of one test: the
    discarded warm-up first, then a.cdm_passes measured ones. Each is a run
    of its own, as CrystalDiskMark runs DiskSpd `TestCount + 1` times with
    `-W0` (DiskBench.cpp `DiskSpd`): every measured run starts with nothing
    in flight, and none follows a ramp in the same run. (fio's ramp_time on
    the first measured run instead counted in that run the requests the
    ramp left in flight: eight 1 MiB requests queued on the throttled
    devices were 0.4 s of its 2 s, and that pass came out 8% above fio's
    own runs without a ramp.)"""
    runs = []
    for _ in range(1 + a.cdm_passes):
        # DiskSpd -r draws each random offset on its own: fio's norandommap.
        runs.append(["fio", "--name=fidelity", f"--filename={dev}", f"--rw={rw}", f"--bs={bs}",
                     f"--iodepth={qd}", *fio_engine_args(qd), "--direct=1", f"--runtime={a.cdm_runtime}",
                     "--time_based", "--randrepeat=0", "--norandommap", f"--size={a.cdm_size}",
                     "--output-format=json"])
    return runs


def fio_cdm(d, rw, bs, qd, a):
    """fio run as CrystalDiskMark runs DiskSpd (DiskBench.cpp): the test
    area (CDM's 1 GiB; a.cdm_size) filled first with random data (`Init`; fio's buffers are
    random and scrambled per write, as the twin's fill), untimed; one
    discarded warm-up run of the measure time (pass 0, "Preparing..."),
    then a.cdm_passes runs back to back, the best kept (fio cannot take a
    best-of itself; cdm_fio_passes); then CDM's pause (`Interval`), so what
    the device still writes back lands outside the next measurement. MB/s
    (10^6 B/s)."""
    d.begin()
    p = d.run(["fio", "--name=fill", f"--filename={d.dev}", "--rw=write", "--bs=1M",
                  f"--size={a.cdm_size}", "--iodepth=1", "--ioengine=psync", "--direct=1", "--end_fsync=1", "--output-format=json"])
    if p.returncode != 0:
        raise RuntimeError(f"fio fill: {p.stderr.strip()}")
    side = "read" if "read" in rw else "write"
    best = 0.0
    for i, argv in enumerate(cdm_fio_passes(d.dev, rw, bs, qd, a)):
        p = d.run(argv)
        if p.returncode != 0:
            raise RuntimeError(f"fio: {p.stderr.strip()}")
        if i == 0:  # the warm-up: its score never taken
            continue
        r = json.loads(p.stdout)["jobs"][0][side]
        best = max(best, float(r["bw_bytes"]))
    time.sleep(a.cdm_pause)
    return best / 1e6


def fio_cdm_one_run(d, rw, bs, qd, a):
    """fio_cdm's warm-up and passes as one fio run of their summed time, with
    nothing between them: fio's bandwidth log averaged over each pass's time
    (`--write_bw_log --log_avg_msec`), the first window the warm-up, the best
    of the others kept. Each process of fio_cdm (as each DiskSpd process of
    CrystalDiskMark) starts on a device that idled while it started; a block
    throttle (blk-throttle) then lets the first requests go at once, credit
    that no real device gives and that the twin, whose passes follow one
    another, does not get. Here fio's passes follow one another too: this is
    fio's own figure without the credit. MB/s (10^6 B/s)."""
    d.begin()
    p = d.run(["fio", "--name=fill", f"--filename={d.dev}", "--rw=write", "--bs=1M",
                  f"--size={a.cdm_size}", "--iodepth=1", "--ioengine=psync", "--direct=1", "--end_fsync=1", "--output-format=json"])
    if p.returncode != 0:
        raise RuntimeError(f"fio fill: {p.stderr.strip()}")
    window_ms = int(a.cdm_runtime * 1000)
    prefix = os.path.join(a.work, "cdm-one-run")
    for f in os.listdir(a.work):
        if f.startswith("cdm-one-run"):
            os.remove(os.path.join(a.work, f))
    p = d.run(["fio", "--name=fidelity", f"--filename={d.dev}", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
               *fio_engine_args(qd), "--direct=1", f"--runtime={a.cdm_runtime * (1 + a.cdm_passes)}", "--time_based",
               "--randrepeat=0", "--norandommap", f"--size={a.cdm_size}", f"--write_bw_log={prefix}",
               f"--log_avg_msec={window_ms}", "--output-format=json"])
    if p.returncode != 0:
        raise RuntimeError(f"fio: {p.stderr.strip()}")
    # Each line: the window's end in ms, its mean bandwidth in KiB/s, the direction, ...
    windows = []
    with open(f"{prefix}_bw.1.log") as f:
        for line in f:
            ms, kib_s = (int(x) for x in line.split(",")[:2])
            windows.append((ms, kib_s))
    if len(windows) < 1 + a.cdm_passes:
        raise RuntimeError(f"fio bandwidth log: {windows}, expected {1 + a.cdm_passes} windows of {window_ms} ms")
    best = max(kib_s for _, kib_s in windows[1:1 + a.cdm_passes]) * 1024
    time.sleep(a.cdm_pause)
    return best / 1e6


# --- the pairs -------------------------------------------------------------

def pairs(d, a):
    """(name, tool's command for the table, unit, tool(), twin(), needs the filesystem)."""
    dev, size = d.dev, d.size
    v = []
    rt = a.runtime

    def add(name, cmd, unit, tool, tw, fs=False):
        v.append((name, cmd, unit, tool, tw, fs))

    # A/A controls: the same tool command on both sides, so the table shows
    # the spread this machine gives with no twin involved (what the other
    # rows' ratios cannot be told apart from).
    add("control_hdparm_t", "hdparm -t (both sides)", "MiB/s",
        lambda: hdparm(d, ["-t"], "Timing buffered disk reads"),
        lambda: hdparm(d, ["-t"], "Timing buffered disk reads"))
    add("control_fio_rand4k", "fio randread 4k QD1 psync (both sides)", "IOPS",
        lambda: fio(d, "randread", "4k", 1, "IOPS", rt),
        lambda: fio(d, "randread", "4k", 1, "IOPS", rt))

    add("hdparm_T", "hdparm -T", "MiB/s", lambda: hdparm(d, ["-T"], "Timing cached reads"),
        lambda: twin(d, dev, {"workload": "cached_read", "bs": "2M", "runtime": "2s"}, "read", "MiB/s"))
    add("hdparm_t", "hdparm -t", "MiB/s", lambda: hdparm(d, ["-t"], "Timing buffered disk reads"),
        lambda: twin(d, dev, {"workload": "buffered_read", "bs": "2M", "runtime": "3s"}, "read", "MiB/s"))
    add("hdparm_t_direct", "hdparm -t --direct", "MiB/s",
        lambda: hdparm(d, ["-t", "--direct"], "Timing O_DIRECT disk reads"),
        lambda: twin(d, dev, {"workload": "direct_read", "bs": "2M", "runtime": "3s"}, "read", "MiB/s"))

    # The seed's count=400, or FIDELITY_DD_COUNT, as much as the device holds.
    n10 = min(a.dd_count, size // (10 * MIB))
    add("dd_read_10m", f"dd bs=10M count={n10}", "MB/s",
        lambda: dd(d, [f"if={dev}", "of=/dev/null", "bs=10M", f"count={n10}"]),
        lambda: twin(d, dev, {"workload": "seq_read", "bs": "10M", "size": n10 * 10 * MIB,
                              "runtime": 0, "direct": False, "end_close": True}, "read", "MB/s"))
    n16 = 163_840_000
    add("dd_write_16k", "time(dd bs=16k count=10000;sync DEV)", "MB/s",
        lambda: dd(d, ["if=/dev/zero", f"of={dev}", "bs=16k", "count=10000"], sync=True, nbytes=n16,
                   held=True),
        lambda: twin(d, dev, {"workload": "seq_write", "bs": "16k", "size": n16, "runtime": 0,
                          "direct": False, "end_fsync": True},
                     "write", "MB/s"))
    n8 = min(256 * 1024, size // 8192)
    add("dd_write_8k", f"dd bs=8k count={n8}", "MB/s",
        lambda: dd(d, ["if=/dev/zero", f"of={dev}", "bs=8k", f"count={n8}"], held=True),
        lambda: twin(d, dev, {"workload": "seq_write", "bs": "8k", "size": n8 * 8192, "runtime": 0,
                          "direct": False, "end_fsync": False},
                     "write", "MB/s"))

    # CrystalDiskMark's default set as the cdm profile runs it (all reads,
    # then all writes); fio psync at QD1, io_uring above. Each pair on its
    # own: each side fills the area, warms up, keeps the best of
    # cdm_passes and pauses (see fio_cdm; the twin's fill, warmup, passes,
    # pause, no end flush).
    cdm_rt = a.cdm_runtime
    sets = [("seq1m_q8t1", "1M", 8, True), ("seq1m_q1t1", "1M", 1, True),
            ("rnd4k_q32t1", "4k", 32, False), ("rnd4k_q1t1", "4k", 1, False)]
    for dirn in ("read", "write"):
        for tag, bs, qd, seq in sets:
            rw = dirn if seq else "rand" + dirn
            wl = ("seq_" if seq else "rand_") + dirn
            eng = "psync" if qd == 1 else "io_uring"
            add(f"cdm_{tag}_{dirn}",
                f"fio {rw} {bs} QD{qd} {eng} {a.cdm_size} best/{a.cdm_passes}", "MB/s",
                lambda rw=rw, bs=bs, qd=qd: fio_cdm(d, rw, bs, qd, a),
                lambda wl=wl, bs=bs, qd=qd, side=dirn: twin(
                    d, dev, {"workload": wl, "bs": bs, "iodepth": qd, "jobs": 1, "length": a.cdm_size,
                             "runtime": cdm_rt, "fill": True, "warmup": 1, "passes": a.cdm_passes,
                             "pause": a.cdm_pause, "end_fsync": False, "norandommap": True},
                    side, "MB/s", best=True))
    # SEQ1M Q8T1 again, fio's passes one run with no gap between them
    # (fio_cdm_one_run): the throttle's credit after an idle start taken out.
    for dirn in ("read", "write"):
        add(f"cdm_seq1m_q8t1_{dirn}_one_run",
            f"fio {dirn} 1M QD8 io_uring {a.cdm_size} best/{a.cdm_passes}, one run, bw log", "MB/s",
            lambda dirn=dirn: fio_cdm_one_run(d, dirn, "1M", 8, a),
            lambda dirn=dirn: twin(
                d, dev, {"workload": "seq_" + dirn, "bs": "1M", "iodepth": 8, "jobs": 1, "length": a.cdm_size,
                         "runtime": cdm_rt, "fill": True, "warmup": 1, "passes": a.cdm_passes,
                         "pause": a.cdm_pause, "end_fsync": False, "norandommap": True},
                dirn, "MB/s", best=True))

    # The plain workloads at the standard profile's parameters.
    for wl, rw, bs, qd, unit in [("seq_read", "read", "1M", 1, "MiB/s"),
                                 ("seq_write", "write", "1M", 1, "MiB/s"),
                                 ("rand_read", "randread", "4k", 1, "IOPS"),
                                 ("rand_read", "randread", "4k", 32, "IOPS"),
                                 ("rand_write", "randwrite", "4k", 1, "IOPS"),
                                 ("rand_write", "randwrite", "4k", 32, "IOPS")]:
        side = "read" if "read" in rw else "write"
        spec = {"workload": wl, "bs": bs, "iodepth": qd, "runtime": rt}
        add(f"{wl}_{bs}_qd{qd}", f"fio {rw} {bs} QD{qd} {engine_of(qd, spec)}", unit,
            lambda rw=rw, bs=bs, qd=qd, unit=unit, spec=spec: fio(d, rw, bs, qd, unit, rt, spec=spec),
            lambda unit=unit, side=side, spec=spec: twin(d, dev, spec, side, unit))

    # sysbench fileio, the seed's commands (its --file-total-size scaled to
    # the device); the twin on one file of the same total size beside
    # sysbench's 128 in the same ext4 filesystem.
    bb = os.path.join(a.mnt, "bootbench.img")
    for mode, wl in [("seqrd", "seq_read"), ("seqwr", "seq_write"),
                     ("rndrd", "rand_read"), ("rndwr", "rand_write")]:
        side = "write" if mode.endswith("wr") else "read"
        # The classic profile's sysbench twins: buffered, an fsync every
        # 100 requests and one at the end in the write modes.
        # sysbench draws each random offset on its own (norandommap).
        spec = {"workload": wl, "bs": "16k", "runtime": a.runtime, "direct": False, "norandommap": True}
        if side == "write":
            spec.update({"fsync_freq": 100, "end_fsync": True, "file_num": 128})
        add(f"sysbench_{mode}", f"sysbench fileio {mode} {a.sysbench_size}", "MiB/s",
            lambda mode=mode: sysbench(d, mode, a),
            lambda spec=spec, side=side: twin(d, bb, spec, side, "MiB/s"), fs=True)
    return v


def setup_fs(d, a):
    log(f"  mkfs.ext4 on {d.dev}, mount on {a.mnt}, sysbench prepare {a.sysbench_size}")
    # The inode tables and the journal zeroed now, not by the kernel's
    # ext4lazyinit thread in the background of the first measurements.
    subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", d.dev],
                   check=True)
    subprocess.run(["mount", d.dev, a.mnt], check=True)
    d.mounted = True
    p = sh(["sysbench", "fileio", f"--file-total-size={a.sysbench_size}", "prepare"], cwd=a.mnt)
    if p.returncode != 0:
        raise RuntimeError(f"sysbench prepare: {p.stderr}")
    nbytes = int(subprocess.run(["numfmt", "--from=iec", a.sysbench_size.rstrip("B")],
                                capture_output=True, text=True, check=True).stdout)
    subprocess.run(["dd", "if=/dev/zero", f"of={os.path.join(a.mnt, 'bootbench.img')}", "bs=1M",
                    f"count={nbytes // MIB}", "conv=fsync", "status=none"], check=True)


def teardown_fs(d, a):
    sh(["sysbench", "fileio", f"--file-total-size={a.sysbench_size}", "cleanup"], cwd=a.mnt)
    subprocess.run(["umount", a.mnt], check=True)
    d.mounted = False


LINE = re.compile(r"^(\d+) +(\w+)\((.*)\) += (.*)$")
UNFINISHED = re.compile(r"^(\d+) +(\w+)\((.*) <unfinished \.\.\.>$")
RESUMED = re.compile(r"^(\d+) +<\.\.\. (\w+) resumed>(.*)\) += (.*)$")
FD = re.compile(r"^\s*-?\d+<(.*?)>")


def parse_trace(files, targets):
    """strace -f -y output: {call: [count, bytes moved]} for the calls on a
    target (a path, or a directory ending in /), ioctls and fadvise by
    request; io_uring_enter and sync(2) always count."""
    calls = {}
    for path in files:
        pending = {}
        for line in open(path, errors="replace"):
            line = line.rstrip("\n")
            m = UNFINISHED.match(line)
            if m:
                pending[m.group(1)] = m.group(3)
                continue
            m = RESUMED.match(line)
            if m:
                pid, name, rest, ret = m.groups()
                args = pending.pop(pid, "") + rest
            else:
                m = LINE.match(line)
                if not m:
                    continue
                pid, name, args, ret = m.groups()
            if name not in ("io_uring_enter", "sync"):
                fd = FD.match(args)
                if not fd or not any(fd.group(1) == t or (t.endswith("/") and fd.group(1).startswith(t))
                                     for t in targets):
                    continue
            key = name
            if name in ("ioctl", "fadvise64"):
                parts = [x.strip() for x in args.split(",")]
                key += " " + (parts[1] if name == "ioctl" else parts[-1])
            r = re.match(r"-?\d+", ret)
            n = int(r.group(0)) if r else 0
            c = calls.setdefault(key, [0, 0])
            c[0] += 1
            if FAMILY.get(name) in ("rd", "wr") and n > 0:
                c[1] += n
    return calls


def measure(a):
    d = Device(a)
    if a.throttle:
        bps, iops = (int(x) for x in a.throttle.split(","))
        d.throttle = Throttle(a.dev, bps, iops, a.cgroup)
        log(f"  {d.throttle.kind}: {bps} B/s, {iops} requests/s each way (0 = no limit), {d.throttle.path}")
    sel = re.compile(a.pairs)
    todo = [p for p in pairs(d, a) if sel.search(p[0])]
    fs_ready = False
    targets = [d.dev, a.mnt.rstrip("/") + "/"]
    try:
        with open(a.results, "a") as res:
            for name, cmd, unit, tool, tw, fs in todo:
                if fs and not fs_ready:
                    setup_fs(d, a)
                    fs_ready = True
                figs = {"tool": [], "twin": []}
                stats = {"tool": [], "twin": []}
                errors = []
                t0 = time.monotonic()
                fns = {"tool": tool, "twin": tw}
                for r in range(a.rounds):
                    order = ["tool", "twin"] if r % 2 == 0 else ["twin", "tool"]
                    log(f"  {a.label} {name} round {r + 1}/{a.rounds}: {order[0]} first")
                    for side in order:
                        try:
                            figs[side].append(fns[side]())
                        except Exception as e:  # keep going: the table says what failed
                            figs[side].append(None)
                            errors.append(f"{side}: {e}")
                            log(f"    {side} failed: {e}")
                        stats[side].append(d.end())
                seconds = time.monotonic() - t0
                # One more run of each side under strace, its figure unused:
                # the system calls each side made (strace slows a run down, so
                # never in a measured one).
                traced = {}
                if a.strace:
                    for side in ("tool", "twin"):
                        d.traces = []
                        try:
                            fns[side]()
                            st = d.end()
                            traced[side] = {"calls": parse_trace(d.traces, targets), "stat": st}
                        except Exception as e:
                            d.end()
                            errors.append(f"traced {side}: {e}")
                        finally:
                            for f in d.traces:
                                os.unlink(f)
                            d.traces = None
                row = {"device": a.label, "pair": name, "tool_cmd": cmd, "unit": unit, "tool": figs["tool"],
                       "twin": figs["twin"], "errors": errors, "seconds": seconds, "stat": stats,
                       "traced": traced, "throttle": a.throttle or None,
                       "loop_dio": open(f"/sys/block/{os.path.basename(d.dev)}/loop/dio").read().strip()}
                res.write(json.dumps(row) + "\n")
                res.flush()
                log(f"    tool {figs['tool']} twin {figs['twin']} {unit}")
        if fs_ready:
            teardown_fs(d, a)
    finally:
        if d.throttle:
            d.throttle.close()


def medians(r):
    """A pair's medians (None where a side has no figure), their ratio
    twin/tool, and the per-round ratios."""
    tools = [x for x in r["tool"] if x is not None]
    twins = [x for x in r["twin"] if x is not None]
    mt = statistics.median(tools) if tools else None
    mb = statistics.median(twins) if twins else None
    ratio = mb / mt if mt and mb is not None else None
    per = [b / t for t, b in zip(r["tool"], r["twin"]) if t and b is not None]
    return tools, twins, mt, mb, ratio, per


def table(a):
    rows = [json.loads(line) for line in open(a.results)]
    print(f"bootbench twin vs tool, {a.rounds} round(s) each, alternating order; ratio = "
          f"bootbench/tool of the medians; target 0.95-1.05 (* = outside); per-round = the ratio "
          f"of the two sides of each round, their median and range (a round's two runs are "
          f"back to back, so a machine whose speed drifts between rounds moves both); "
          f"{a.elapsed} s in all")
    hdr = (f"{'device':<14} {'pair':<20} {'tool command':<34} {'unit':<6} {'tool':>10} "
           f"{'bootbench':>10} {'ratio':>6}  {'per-round':>9} {'range':<11} {'s':>4}  note")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        tools, twins, mt, mb, ratio, per = medians(r)
        notes = []
        if r["pair"] in KNOWN:
            notes.append(KNOWN[r["pair"]])
        if len(tools) > 1 and min(tools) > 0 and max(tools) / min(tools) > 1.05:
            notes.append(f"tool varies {max(tools) / min(tools) - 1:.0%} over rounds")
        if len(twins) > 1 and min(twins) > 0 and max(twins) / min(twins) > 1.05:
            notes.append(f"twin varies {max(twins) / min(twins) - 1:.0%} over rounds")
        notes += [" ".join(e.split())[:160] for e in r["errors"]]
        flag = " " if ratio is not None and 0.95 <= ratio <= 1.05 else "*"
        f = lambda x: f"{x:10.1f}" if x is not None else f"{'-':>10}"
        rs = f"{ratio:6.3f}" if ratio is not None else f"{'-':>6}"
        rng = f"{min(per):.3f}-{max(per):.3f}" if per else "-"
        pm = f"{statistics.median(per):9.3f}" if per else f"{'-':>9}"
        print(f"{r['device']:<14} {r['pair']:<20} {r['tool_cmd']:<34} {r['unit']:<6} {f(mt)} {f(mb)} "
              f"{rs}{flag} {pm} {rng:<11} {r['seconds']:4.0f}  {'; '.join(notes)}")
    requests_table(rows)


# Why a pair's request streams differ: each cause (a tag, the pairs it
# applies to as a regex over their names, and what it is, with the tool's or
# the twin's source where it lies). The table prints those of a pair whose figures differ.
CAUSES = [
    ("fio-invalidate", r"^(seq|rand)_|^cdm_|^control_fio",
     "fio opens the device with invalidate=1: a BLKFLSBUF first (fio filesetup.c "
     "file_invalidate_cache); the twin of a direct-I/O test drops no cache (direct I/O bypasses "
     "it; the harness drops it before both sides)"),
    ("own-drop", r"^dd_|^sysbench_",
     "the twin drops the cache itself before timing, as the seeds' sync; echo 3 > drop_caches "
     "(hdparm's flush_buffer_cache calls: fsync and fdatasync, 2 flush requests, and BLKFLSBUF); "
     "the harness does it before the tool, outside its counters"),
    ("hdparm-T", r"^hdparm_T$",
     "hdparm -T calls flush_buffer_cache twice (hdparm.c time_cache), the twin once; -T's "
     "device reads are its one warm-up read, 5 MiB a run"),
    ("hdparm-direct", r"^hdparm_t_direct$",
     "hdparm -t --direct still calls flush_buffer_cache (hdparm.c time_device: BLKFLSBUF, 2 "
     "flushes), the twin of a direct read drops no cache"),
    ("split", r"^hdparm_T$|^hdparm_t_direct$|seq1m_q|^seq_",
     "request size: a large O_DIRECT request is split where its buffer's pages are not "
     "physically contiguous (the loop device's max_segments 128 x max_segment_size 64 KiB): "
     "same bytes, requests of 512 KiB or larger depending on the memory each buffer got; an "
     "io_uring request (REQ_NOWAIT) that needs the split is refused (block/blk-merge.c) and "
     "issued again from an io-wq worker, and a throttle counts it twice"),
    ("scratch", r"_write|_wr$|^dd_write|^cdm_",
     "the twin marks a disk it wrote with its scratch label after the test: 4 KiB at byte 0 "
     "and an fdatasync, one write and one flush request (init/src/safety/scratch.rs); after "
     "a buffered write with no flush of its own (dd_write_8k) that fdatasync writes the "
     "test's dirty pages back itself, inside the throttle's cgroup (in smaller requests on "
     "throttled-iops, as the sync of dd_write_16k's tool), where the tool's are written back "
     "by the kernel's flusher thread, outside it"),
    ("safety-read", r"_write|_wr$|^dd_write|^cdm_",
     "before a write test the twin reads the disk's signatures and samples its data (the "
     "safety check, init/src/safety): a few small reads the tool never makes"),
    ("traced-mix", r"^cdm_.*_write$",
     "a CDM write pair fills the area with 1 MiB writes, then writes its own size for a time: "
     "the calls per MiB mix the two in proportions the traced run's speed sets"),
    ("uring-wait", r"_q(32|8)t1|_qd32",
     "both sides submit each request with its own io_uring_enter (iodepth_batch_submit=1: fio "
     "engines/io_uring.c fio_ioring_commit) and take completions from the queue, calling to "
     "wait only when none is ready (fio_ioring_getevents): how many waiting calls a run makes "
     "depends on its timing, strace's slowdown included"),
    ("sysbench-files", r"^sysbench_",
     "sysbench's 128 files are 128 inodes, the twin's 128 parts of one file: the "
     "filesystem's metadata reads and journal writes differ (sb_fileio.c file_prepare), and "
     "the twin's periodic fsyncs are ranged fdatasyncs through io_uring (its uring/MiB is "
     "sysbench's fsync/MiB)"),
]


def cause_tags(pair):
    return [tag for tag, rx, _ in CAUSES if re.search(rx, pair)]


def per_side(r, side):
    """A side's request figures per MiB moved: the device's from the
    measured rounds, the system calls' from the traced run. Reads per MiB
    read, writes and flushes per MiB written (so a command that fills an
    area, then reads for a while compares with one that does the same),
    merges and io_uring_enter calls per MiB moved."""
    per = lambda n, mib: n / mib if mib else None
    st = [x for x in r.get("stat", {}).get(side, []) if x]
    out = {}
    if st:
        tot = {k: sum(x[k] for x in st) for k in st[0]}
        r_mib, w_mib = tot["r_sectors"] * 512 / MIB, tot["w_sectors"] * 512 / MIB
        out["dev MiB/run"] = (r_mib + w_mib) / len(st)
        out["rq/MiB r"] = per(tot["r_ios"], r_mib)
        out["rq/MiB w"] = per(tot["w_ios"], w_mib)
        out["merge/MiB"] = per(tot["r_merges"] + tot["w_merges"], r_mib + w_mib)
        out["flush/MiB w"] = per(tot["flushes"], w_mib)
        out["KiB/rq r"] = tot["r_sectors"] / 2 / tot["r_ios"] if tot["r_ios"] else None
        out["KiB/rq w"] = tot["w_sectors"] / 2 / tot["w_ios"] if tot["w_ios"] else None
        out["discard rq"] = tot["d_ios"] / len(st)
        out["flush/run"] = tot["flushes"] / len(st)
    t = r.get("traced", {}).get(side)
    if t:
        calls = t["calls"]
        fam = {"rd": [0, 0], "wr": [0, 0], "flush": [0, 0], "uring": [0, 0], "aio": [0, 0]}
        for k, (n, b) in calls.items():
            f = FAMILY.get(k.split()[0])
            if f:
                fam[f][0] += n
                fam[f][1] += b
        st = t["stat"] or {}
        dev_r, dev_w = st.get("r_sectors", 0) * 512 / MIB, st.get("w_sectors", 0) * 512 / MIB
        # What moved: the bytes the calls moved, or (io_uring, aio: no
        # read or write calls) what the device moved.
        r_mib = max(fam["rd"][1] / MIB, dev_r)
        w_mib = max(fam["wr"][1] / MIB, dev_w)
        out["calls/MiB r"] = per(fam["rd"][0], fam["rd"][1] / MIB)
        out["calls/MiB w"] = per(fam["wr"][0], fam["wr"][1] / MIB)
        out["fsync/MiB w"] = per(fam["flush"][0], w_mib)
        out["uring/MiB"] = per(fam["uring"][0], r_mib + w_mib)
        out["aio/MiB"] = per(fam["aio"][0], r_mib + w_mib)
        out["KiB/call r"] = fam["rd"][1] / 1024 / fam["rd"][0] if fam["rd"][0] else None
        out["KiB/call w"] = fam["wr"][1] / 1024 / fam["wr"][0] if fam["wr"][0] else None
        out["fsync/run"] = float(fam["flush"][0])
        out["ioctls"] = ",".join(f"{k.split()[1]}x{n}" for k, (n, _) in sorted(calls.items())
                                 if k.startswith("ioctl "))
        out["fadvise"] = ",".join(f"{k.split()[1]}x{n}" for k, (n, _) in sorted(calls.items())
                                  if k.startswith("fadvise64 "))
    return out


# The per-MiB figures the two sides must agree on within 1%.
COMPARED = ("rq/MiB r", "rq/MiB w", "merge/MiB", "flush/MiB w", "calls/MiB r", "calls/MiB w",
            "fsync/MiB w", "uring/MiB", "aio/MiB")
REQ_COLS = ("dev MiB/run", "rq/MiB r", "KiB/rq r", "rq/MiB w", "KiB/rq w", "merge/MiB", "flush/MiB w",
            "flush/run", "discard rq", "calls/MiB r", "KiB/call r", "calls/MiB w", "KiB/call w",
            "fsync/MiB w", "fsync/run", "uring/MiB")


def differs(tool, twin):
    """The compared figures more than 1% apart (a figure below 0.01 per MiB
    on both sides counts as none)."""
    v = []
    for k in COMPARED:
        a, b = tool.get(k), twin.get(k)
        if a is None and b is None:
            continue
        if a is None or b is None:
            v.append(k)
            continue
        if a < 0.01 and b < 0.01:
            continue
        if not a or abs(b / a - 1) > 0.01:
            v.append(k)
    if data_ioctls(tool.get("ioctls", "")) != data_ioctls(twin.get("ioctls", "")):
        v.append("ioctls")
    return v


# The ioctls that move, drop or flush data (compared); the others ask the
# device what it is (hdparm's identify attempts, the twin's geometry) and
# are only shown.
DATA_IOCTLS = ("BLKFLSBUF", "BLKDISCARD", "BLKSECDISCARD", "BLKZEROOUT")


def data_ioctls(s):
    return sorted(x for x in s.split(",") if x.split("x")[0] in DATA_IOCTLS)


def requests_table(rows):
    print()
    print("What the device saw and what each side called, per MiB moved. Device: /sys/block/NAME/stat "
          "read before and after every measured run (the rounds summed; dev MiB/run = read + written "
          "per run; requests per MiB read (r) and per MiB written (w); KiB/rq = average request "
          "size; flush = flush requests, per MiB written and per run; merges per MiB moved). Calls: "
          "one more run of each side under strace -f (its figure unused), the calls on the device or "
          "its filesystem's files: read and write calls per MiB they moved, fsync-like calls "
          "(fsync, fdatasync, sync, syncfs, sync_file_range) per MiB written and per run, "
          "io_uring_enter per MiB moved; "
          "ioctls by request with their count. `differs` names the per-MiB figures more than 1% "
          "apart, and `ioctls` when those that drop, discard or zero data differ.")
    hdr = f"{'device':<14} {'pair':<20} {'side':<5} " + " ".join(f"{c:>11}" for c in REQ_COLS) + \
        "  ioctls / fadvise / differs"
    print(hdr)
    print("-" * len(hdr))
    why = {}
    for r in rows:
        sides = {s: per_side(r, s) for s in ("tool", "twin")}
        for s in ("tool", "twin"):
            o = sides[s]
            cells = " ".join(f"{o[c]:11.4g}" if isinstance(o.get(c), float) else f"{'-':>11}" for c in REQ_COLS)
            tail = " ".join(x for x in (o.get("ioctls", ""), o.get("fadvise", "")) if x)
            if s == "twin":
                dif = differs(sides["tool"], o)
                tail += ("  differs: " + ",".join(dif) if dif else "  agree")
                if dif and cause_tags(r["pair"]):
                    tail += " (see below)"
                    why[r["pair"]] = cause_tags(r["pair"])
            print(f"{r['device']:<14} {r['pair']:<20} {s:<5} {cells}  {tail}")
    if why:
        print()
        print("Why the pairs marked (see below) differ: each cause, and the pairs it applies to.")
        for tag, _, text in CAUSES:
            hit = sorted(pair for pair, tags in why.items() if tag in tags)
            if hit:
                print(f"- [{tag}] {text}.\n  Pairs: {', '.join(hit)}")


def markdown(a):
    """The figures and the request agreement as Markdown tables (for the
    README): one row a pair, the devices side by side."""
    rows = [json.loads(line) for line in open(a.results)]
    devices = list(dict.fromkeys(r["device"] for r in rows))
    by = {(r["device"], r["pair"]): r for r in rows}
    pairs = list(dict.fromkeys(r["pair"] for r in rows))

    def fig(r):
        _, _, mt, mb, ratio, per = medians(r)
        if ratio is None or not per:
            return "failed"
        return f"{mt:,.1f} / {mb:,.1f} = **{ratio:.3f}** ({min(per):.3f}-{max(per):.3f})"

    print("| pair | tool | unit | " + " | ".join(f"{d}: tool / twin = ratio (range)" for d in devices) + " |")
    print("|---|---|---|" + "---|" * len(devices))
    for p in pairs:
        r0 = next(by[(d, p)] for d in devices if (d, p) in by)
        cells = [fig(by[(d, p)]) if (d, p) in by else "-" for d in devices]
        print(f"| {p} | {r0['tool_cmd']} | {r0['unit']} | " + " | ".join(cells) + " |")
    print()
    # The data requests (what moves the bytes) apart from the rest (cache
    # drops, flushes, fsync-like calls, ioctls, io_uring_enter calls).
    data = ("rq/MiB r", "rq/MiB w", "calls/MiB r", "calls/MiB w")
    print("| pair | " + " | ".join(f"{d}: data requests and calls / the rest" for d in devices) + " |")
    print("|---|" + "---|" * len(devices))
    for p in pairs:
        cells = []
        for d in devices:
            r = by.get((d, p))
            if not r:
                cells.append("-")
                continue
            tool, twin = per_side(r, "tool"), per_side(r, "twin")
            dif = differs(tool, twin)
            dd = [k for k in dif if k in data]
            rest = [k for k in dif if k not in data]
            kib = lambda o, k: f"{o[k]:.0f}" if o.get(k) else "-"
            cell = "agree" if not dd else "differ: " + ", ".join(
                f"{k} {tool.get(k) or 0:.4g}/{twin.get(k) or 0:.4g}" for k in dd)
            cell += " (KiB/rq r " + kib(tool, "KiB/rq r") + "/" + kib(twin, "KiB/rq r") + \
                ", w " + kib(tool, "KiB/rq w") + "/" + kib(twin, "KiB/rq w") + ")"
            cell += " / " + ("agree" if not rest else ", ".join(rest))
            if dif:
                cell += " [" + ", ".join(cause_tags(p)) + "]"
            cells.append(cell)
        print(f"| {p} | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    for k in ("bin", "dev", "label", "backing", "work", "mnt", "sysbench-size", "cdm-size", "pairs", "results"):
        m.add_argument("--" + k, required=True)
    m.add_argument("--throttle", default="", help="BPS,IOPS: run every measured command in a cgroup "
                   "that holds the device to these rates (0 = no limit)")
    m.add_argument("--cgroup", default=f"bootbench-fidelity-{os.getpid()}", help="the throttle's cgroup")
    m.add_argument("--strace", type=int, default=1, help="1: one traced run of each side per pair")
    for k in ("rounds", "runtime", "cdm-runtime", "cdm-passes", "cdm-pause"):
        m.add_argument("--" + k, type=int, required=True)
    m.add_argument("--dd-count", type=int, default=400, help="dd_read_10m's count (the seed's 400), "
                   "at most what the device holds")
    t = sub.add_parser("table")
    t.add_argument("--results", required=True)
    t.add_argument("--rounds", type=int, required=True)
    t.add_argument("--elapsed", type=int, default=0)
    md = sub.add_parser("markdown")
    md.add_argument("--results", required=True)
    a = ap.parse_args()
    {"measure": measure, "table": table, "markdown": markdown}[a.cmd](a)


if __name__ == "__main__":
    main()
