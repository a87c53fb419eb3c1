#!/usr/bin/env python3
"""The pairs of `make fidelity` (bench/fidelity.sh runs this).

`measure`: run every pair on one loop device, FIDELITY_ROUNDS rounds in
alternating order, and append one JSON line per pair to --results.
`table`: print the table from those lines.

The twins' parameters mirror bench-core/src/profile.rs (`classic`, `cdm`,
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
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


class Device:
    def __init__(self, a):
        self.a = a
        self.dev = a.dev
        self.size = int(sh(["blockdev", "--getsize64", a.dev]).stdout)
        self.mounted = False

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
    d.settle()
    p = sh([a.bin, "run", "--config", cfg, "--out", out])
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
    d.settle()
    p = sh(["hdparm", *flags, d.dev])
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
    d.settle()
    fd = os.open(d.dev, os.O_RDONLY) if held else None
    try:
        t0 = time.monotonic()
        p = sh(["dd", *argv])
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
            subprocess.run(["sync", d.dev], check=True)
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
    d.settle()
    p = sh(["sysbench", "fileio", f"--file-total-size={a.sysbench_size}",
            f"--file-test-mode={mode}", f"--time={a.runtime}", "run"], cwd=a.mnt)
    key = "read" if mode.endswith("rd") else "written"
    m = re.search(key + r", MiB/s:\s*([\d.]+)", p.stdout)
    if p.returncode != 0 or not m:
        fatal = [x for x in (p.stdout + p.stderr).splitlines() if "FATAL" in x or "rror" in x]
        raise RuntimeError(f"sysbench {mode}: exit {p.returncode}: {' '.join(fatal)[:200]}")
    return float(m.group(1))


# The twins' engine parameters that are fio options of the same name and
# meaning: a twin that sets one hands it to its fio run too.
FIO_ENGINE_OPTS = ("hipri", "sqthread_poll", "sqthread_poll_cpu", "cpus_allowed", "cpus_allowed_policy")


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
    d.settle()
    argv = ["fio", "--name=fidelity", f"--filename={d.dev}", f"--rw={rw}", f"--bs={bs}",
            f"--iodepth={qd}", *fio_engine_args(qd, spec), "--direct=1", f"--runtime={runtime}",
            "--time_based", "--randrepeat=0", "--output-format=json"]
    if size:
        argv.append(f"--size={size}")
    p = sh(argv)
    if p.returncode != 0:
        raise RuntimeError(f"fio: {p.stderr.strip()}")
    side = "read" if "read" in rw else "write"
    r = json.loads(p.stdout)["jobs"][0][side]
    return figure(unit, float(r["bw_bytes"]), float(r["iops"]))


def fio_cdm(d, rw, bs, qd, a):
    """fio run as CrystalDiskMark runs DiskSpd (DiskBench.cpp): the 1 GiB
    test area filled first with random data (`Init`; fio's buffers are
    random and scrambled per write, as the twin's fill), untimed; one
    discarded warm-up of the measure time (pass 0, "Preparing...": fio's
    ramp_time before the first measured run), then a.cdm_passes runs back
    to back, the best kept (fio cannot take a best-of itself); then CDM's
    pause (`Interval`), so what the device still writes back lands outside
    the next measurement. MB/s (10^6 B/s)."""
    d.settle()
    p = sh(["fio", "--name=fill", f"--filename={d.dev}", "--rw=write", "--bs=1M", "--size=1G",
            "--iodepth=1", "--ioengine=psync", "--direct=1", "--end_fsync=1", "--output-format=json"])
    if p.returncode != 0:
        raise RuntimeError(f"fio fill: {p.stderr.strip()}")
    side = "read" if "read" in rw else "write"
    best = 0.0
    for i in range(a.cdm_passes):
        # DiskSpd -r draws each random offset on its own: fio's norandommap.
        argv = ["fio", "--name=fidelity", f"--filename={d.dev}", f"--rw={rw}", f"--bs={bs}",
                f"--iodepth={qd}", *fio_engine_args(qd), "--direct=1", f"--runtime={a.cdm_runtime}",
                "--time_based", "--randrepeat=0", "--norandommap", "--size=1G", "--output-format=json"]
        if i == 0:
            argv.append(f"--ramp_time={a.cdm_runtime}")
        p = sh(argv)
        if p.returncode != 0:
            raise RuntimeError(f"fio: {p.stderr.strip()}")
        r = json.loads(p.stdout)["jobs"][0][side]
        best = max(best, float(r["bw_bytes"]))
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

    n10 = min(400, size // (10 * MIB))
    add("dd_read_10m", f"dd bs=10M count={n10}", "MB/s",
        lambda: dd(d, [f"if={dev}", "of=/dev/null", "bs=10M", f"count={n10}"]),
        lambda: twin(d, dev, {"workload": "seq_read", "bs": "10M", "size": n10 * 10 * MIB,
                              "runtime": None, "direct": False}, "read", "MB/s"))
    n16 = 163_840_000
    add("dd_write_16k", "time(dd bs=16k count=10000;sync DEV)", "MB/s",
        lambda: dd(d, ["if=/dev/zero", f"of={dev}", "bs=16k", "count=10000"], sync=True, nbytes=n16,
                   held=True),
        lambda: twin(d, dev, {"workload": "seq_write", "bs": "16k", "size": n16, "runtime": None,
                          "direct": False, "end_fsync": True},
                     "write", "MB/s"))
    n8 = min(256 * 1024, size // 8192)
    add("dd_write_8k", f"dd bs=8k count={n8}", "MB/s",
        lambda: dd(d, ["if=/dev/zero", f"of={dev}", "bs=8k", f"count={n8}"], held=True),
        lambda: twin(d, dev, {"workload": "seq_write", "bs": "8k", "size": n8 * 8192, "runtime": None,
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
                f"fio {rw} {bs} QD{qd} {eng} 1G best/{a.cdm_passes}", "MB/s",
                lambda rw=rw, bs=bs, qd=qd: fio_cdm(d, rw, bs, qd, a),
                lambda wl=wl, bs=bs, qd=qd, side=dirn: twin(
                    d, dev, {"workload": wl, "bs": bs, "iodepth": qd, "jobs": 1, "length": "1G",
                             "runtime": cdm_rt, "fill": True, "warmup": 1, "passes": a.cdm_passes,
                             "pause": a.cdm_pause, "end_fsync": False, "norandommap": True},
                    side, "MB/s", best=True))

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


def measure(a):
    d = Device(a)
    sel = re.compile(a.pairs)
    todo = [p for p in pairs(d, a) if sel.search(p[0])]
    fs_ready = False
    with open(a.results, "a") as res:
        for name, cmd, unit, tool, tw, fs in todo:
            if fs and not fs_ready:
                setup_fs(d, a)
                fs_ready = True
            tools, twins, errors = [], [], []
            t0 = time.monotonic()
            for r in range(a.rounds):
                order = [("tool", tool), ("twin", tw)] if r % 2 == 0 else [("twin", tw), ("tool", tool)]
                log(f"  {a.label} {name} round {r + 1}/{a.rounds}: {order[0][0]} first")
                got = {}
                for side, fn in order:
                    try:
                        got[side] = fn()
                    except Exception as e:  # keep going: the table says what failed
                        got[side] = None
                        errors.append(f"{side}: {e}")
                        log(f"    {side} failed: {e}")
                tools.append(got["tool"])
                twins.append(got["twin"])
            row = {"device": a.label, "pair": name, "tool_cmd": cmd, "unit": unit, "tool": tools,
                   "twin": twins, "errors": errors, "seconds": time.monotonic() - t0,
                   "loop_dio": open(f"/sys/block/{os.path.basename(d.dev)}/loop/dio").read().strip()}
            res.write(json.dumps(row) + "\n")
            res.flush()
            log(f"    tool {tools} twin {twins} {unit}")
    if fs_ready:
        teardown_fs(d, a)


def table(a):
    rows = [json.loads(line) for line in open(a.results)]
    print(f"bootbench twin vs tool, {a.rounds} round(s) each, alternating order; ratio = "
          f"bootbench/tool of the medians; target 0.95-1.05 (* = outside); per-round = the ratio "
          f"of the two sides of each round, their median and range (a round's two runs are "
          f"back to back, so a machine whose speed drifts between rounds moves both); "
          f"{a.elapsed} s in all")
    hdr = (f"{'device':<9} {'pair':<20} {'tool command':<34} {'unit':<6} {'tool':>10} "
           f"{'bootbench':>10} {'ratio':>6}  {'per-round':>9} {'range':<11} {'s':>4}  note")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        tools = [x for x in r["tool"] if x is not None]
        twins = [x for x in r["twin"] if x is not None]
        per = [b / t for t, b in zip(r["tool"], r["twin"]) if t and b is not None]
        mt = statistics.median(tools) if tools else None
        mb = statistics.median(twins) if twins else None
        ratio = mb / mt if mt and mb is not None else None
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
        print(f"{r['device']:<9} {r['pair']:<20} {r['tool_cmd']:<34} {r['unit']:<6} {f(mt)} {f(mb)} "
              f"{rs}{flag} {pm} {rng:<11} {r['seconds']:4.0f}  {'; '.join(notes)}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    for k in ("bin", "dev", "label", "backing", "work", "mnt", "sysbench-size", "pairs", "results"):
        m.add_argument("--" + k, required=True)
    for k in ("rounds", "runtime", "cdm-runtime", "cdm-passes", "cdm-pause"):
        m.add_argument("--" + k, type=int, required=True)
    t = sub.add_parser("table")
    t.add_argument("--results", required=True)
    t.add_argument("--rounds", type=int, required=True)
    t.add_argument("--elapsed", type=int, default=0)
    a = ap.parse_args()
    measure(a) if a.cmd == "measure" else table(a)


if __name__ == "__main__":
    main()
