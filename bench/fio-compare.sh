#!/usr/bin/env bash
# `make bench`: bootbench and fio side by side on the same RAM-backed loop
# device (1 GiB file in /dev/shm, losetup --direct-io=on):
#   rand_read  4k QD1          (fio ioengine=psync)
#   rand_read  4k QD32         (fio ioengine=io_uring)
#   seq_read   1M QD1          (fio ioengine=psync)
#   rand_write 4k QD1          (fio ioengine=psync; bootbench granted the device)
#   rand_write 4k QD32         (fio ioengine=io_uring; granted)
#   rand_read  4k QD32 jobs=4  (fio ioengine=io_uring, numjobs=4)
# in two machine states:
#   default  each as it runs by default: bootbench holds the CPU wake-up
#            latency limit at 0 while it measures (its cpu_dma_latency), fio
#            leaves the CPUs' idle states as they are;
#   same     the same state for both, so that only the engines differ: the
#            harness holds /dev/cpu_dma_latency at 0 around fio's run too, and
#            both run pinned to the same CPU (taskset -c, the last online one).
# For each: bootbench and fio throughput, the ratio bootbench/fio, and the
# CPU time (user + system, from the kernel's rusage of each child) per I/O;
# then the latency of the median round: bootbench's clat_ns and lat_ns beside
# fio's clat_ns and lat_ns (mean, stddev, which both compute with n - 1, and the
# percentiles 50, 99, 99.9 of fio's default list), and the ratios of the
# means and of p99 (bootbench/fio).
# Needs root, fio and python3. Not a test: nothing is asserted.
#
# Each test runs BENCH_ROUNDS times (default 5) in alternating order
# (bootbench first, then fio first, ...) so drift and order effects fall on
# both; the table shows the median of each side, the ratio of the medians,
# and the range of the per-round ratios. Each bootbench round draws a fresh
# seed, as fio's --randrepeat=0 draws fresh offsets.
#
# The binary measured is the product's: the static musl release build.
#
# Environment: BENCH_RUNTIME (seconds per test, default 10), BENCH_ROUNDS,
# BENCH_STATES (default "default same"), BENCH_TESTS (labels' first words
# to keep, e.g. "rand_read", default all).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME="${BENCH_RUNTIME:-10}"
ROUNDS="${BENCH_ROUNDS:-5}"
STATES="${BENCH_STATES:-default same}"
KEEP="${BENCH_TESTS:-}"
command -v fio >/dev/null || { echo "fio is missing: apt-get install -y fio" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is missing" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "make bench needs root (losetup)" >&2; exit 1; }

rustup target add x86_64-unknown-linux-musl >&2
cargo build --release -p bootbench-init --target x86_64-unknown-linux-musl >&2
BIN="${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-musl/release/bootbench-init"

WORK="$(mktemp -d /dev/shm/bootbench-bench.XXXXXX)"
LOOP=""
cleanup() {
    if [ -n "$LOOP" ]; then losetup -d "$LOOP" || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# A fully allocated 1 GiB file (not sparse, so reads touch real pages).
dd if=/dev/zero of="$WORK/disk.img" bs=1M count=1024 status=none
LOOP="$(losetup --direct-io=on -f --show "$WORK/disk.img")"
echo "loop device: $LOOP (1 GiB over /dev/shm, direct I/O); ${RUNTIME} s per test, ${ROUNDS} rounds, states: ${STATES}" >&2

python3 - "$BIN" "$LOOP" "$RUNTIME" "$WORK" "$ROUNDS" "$STATES" "$KEEP" <<'PY'
import json, os, statistics, struct, subprocess, sys

bin_, dev, runtime, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
states, keep = sys.argv[6].split(), sys.argv[7].split()
CONFIRM = "I understand this destroys data"

TESTS = [
    # label, bootbench workload, bs, iodepth, jobs, fio rw, fio engine
    ("rand_read 4k QD1", "rand_read", "4k", 1, 1, "randread", "psync"),
    ("rand_read 4k QD32", "rand_read", "4k", 32, 1, "randread", "io_uring"),
    ("seq_read 1M QD1", "seq_read", "1M", 1, 1, "read", "psync"),
    ("rand_write 4k QD1", "rand_write", "4k", 1, 1, "randwrite", "psync"),
    ("rand_write 4k QD32", "rand_write", "4k", 32, 1, "randwrite", "io_uring"),
    ("rand_read 4k QD32 x4", "rand_read", "4k", 32, 4, "randread", "io_uring"),
]
TESTS = [t for t in TESTS if not keep or t[0].split()[0] in keep]

with open("/sys/devices/system/cpu/online") as f:
    last_cpu = f.read().strip().split(",")[-1].split("-")[-1]

def run(argv, stdout):
    """Run argv; return (exit status, CPU seconds user+system of the child)."""
    with open(stdout, "wb") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime

def pinned(state, argv):
    return (["taskset", "-c", last_cpu] + argv) if state == "same" else argv

wake = {}

def bootbench(state, i, workload, bs, qd, jobs):
    cfg = os.path.join(work, f"bb{i}.json")
    test = {"workload": workload, "bs": bs, "iodepth": qd, "runtime": runtime,
            "seed": int.from_bytes(os.urandom(7), "little")}
    if jobs > 1:
        test["jobs"] = jobs
    conf = {"targets": [dev], "tests": [test]}
    if workload.endswith("write"):
        # The loop device is granted by its path (the live command allows it);
        # it holds data after the first round, so overwriting is allowed too.
        conf["destructive"] = {"confirm": CONFIRM, "countdown": 0, "targets": [dev], "allow_overwrite_signatures": True}
    with open(cfg, "w") as f:
        json.dump(conf, f)
    out = os.path.join(work, f"bb{i}.out.json")
    rc, cpu = run(pinned(state, [bin_, "run", "--config", cfg]), out)
    if rc != 0:
        sys.exit(f"bootbench failed (exit {rc})")
    doc = json.load(open(out))
    wake[state] = doc["run"].get("cpu_dma_latency")
    t = doc["tests"][0]
    if t["status"]["state"] != "ok":
        sys.exit(f"bootbench test failed: {t['status']}")
    r = t["steps"][0]["write" if workload.endswith("write") else "read"]
    return r["bytes_per_sec"], r["iops"], r["ios"], cpu, (lat_of(r["clat_ns"]), lat_of(r["lat_ns"]))

def fio(state, i, rw, bs, qd, jobs, engine):
    out = os.path.join(work, f"fio{i}.json")
    argv = pinned(state, ["fio", "--name=bench", f"--filename={dev}", f"--rw={rw}", f"--bs={bs}",
                          f"--iodepth={qd}", f"--ioengine={engine}", "--direct=1", f"--runtime={runtime}",
                          f"--numjobs={jobs}", "--group_reporting",
                          "--time_based", "--randrepeat=0", "--clat_percentiles=1", "--lat_percentiles=1",
                          "--output-format=json"])
    hold = None
    if state == "same":
        # What bootbench holds for itself (its cpu_dma_latency 0), held for fio.
        hold = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
        os.write(hold, struct.pack("=i", 0))
    try:
        rc, cpu = run(argv, out)
    finally:
        if hold is not None:
            os.close(hold)
    if rc != 0:
        sys.exit(f"fio failed (exit {rc})")
    r = json.load(open(out))["jobs"][0]["write" if rw.endswith("write") else "read"]
    return (float(r["bw_bytes"]), float(r["iops"]), int(r["total_ios"]), cpu,
            (fio_lat(r["clat_ns"]), fio_lat(r["lat_ns"])))

PCTS = (50.0, 99.0, 99.9)

def lat_of(l):
    """bootbench's clat_ns or lat_ns: (mean, stddev, {p: ns}) in microseconds."""
    p = {q["p"]: q["ns"] / 1e3 for q in l["percentiles"]}
    return l["mean"] / 1e3, l["stddev"] / 1e3, {q: p.get(q, float("nan")) for q in PCTS}

def fio_lat(l):
    """fio's clat_ns or lat_ns (lat_ns has percentiles only with lat_percentiles=1)."""
    p = {float(k): v / 1e3 for k, v in l.get("percentile", {}).items()}
    return l["mean"] / 1e3, l["stddev"] / 1e3, {q: p.get(q, float("nan")) for q in PCTS}

results = {}
for state in states:
    rows = []
    for i, (label, workload, bs, qd, jobs, rw, engine) in enumerate(TESTS):
        bs_runs, fio_runs = [], []
        for r in range(rounds):
            first_bb = r % 2 == 0
            print(f"[{state}] running {label}, round {r + 1}/{rounds}: "
                  f"{'bootbench, then fio' if first_bb else 'fio, then bootbench'} ({engine})", file=sys.stderr)
            if first_bb:
                bs_runs.append(bootbench(state, i, workload, bs, qd, jobs))
                fio_runs.append(fio(state, i, rw, bs, qd, jobs, engine))
            else:
                fio_runs.append(fio(state, i, rw, bs, qd, jobs, engine))
                bs_runs.append(bootbench(state, i, workload, bs, qd, jobs))
        rows.append((label, bs_runs, fio_runs))
    results[state] = rows

def fmt_rate(bps, iops):
    return f"{bps / 1e6:9.1f} MB/s {iops:10.0f} IOPS"

def median_run(runs):
    """The run with the median IOPS (the lower middle one for an even count)."""
    return sorted(runs, key=lambda x: x[1])[(len(runs) - 1) // 2]

def cpu_us(run):
    return run[3] / run[2] * 1e6 if run[2] else float("nan")

STATE_WORDS = {
    "default": "each as it runs by default (bootbench holds cpu_dma_latency 0, fio leaves the idle states)",
    "same": f"the same state for both (cpu_dma_latency held at 0 for each, both pinned to CPU {last_cpu})",
}
for state in states:
    rows = results[state]
    print(f"== {state}: {STATE_WORDS[state]}")
    print(f"bootbench's cpu_dma_latency record: {json.dumps(wake.get(state))}")
    print(f"bootbench vs fio on {dev}, median of {rounds} alternating rounds of {runtime} s "
          f"(MB/s = 10^6 bytes/s; CPU = user+system time per I/O, microseconds)")
    print(f"{'test':<21} {'bootbench':>27} {'fio':>27} {'ratio':>6} {'ratio range':>13} "
          f"{'CPU us/IO bb':>13} {'CPU us/IO fio':>14}")
    for label, bs_runs, fio_runs in rows:
        b, f = median_run(bs_runs), median_run(fio_runs)
        ratio = b[1] / f[1] if f[1] else float("nan")
        per_round = [x[1] / y[1] for x, y in zip(bs_runs, fio_runs) if y[1]]
        rng = f"{min(per_round):.3f}-{max(per_round):.3f}" if per_round else "-"
        cpu_b = statistics.median(cpu_us(x) for x in bs_runs)
        cpu_f = statistics.median(cpu_us(x) for x in fio_runs)
        print(f"{label:<21} {fmt_rate(b[0], b[1]):>27} {fmt_rate(f[0], f[1]):>27} {ratio:6.3f} {rng:>13} "
              f"{cpu_b:13.2f} {cpu_f:14.2f}")
    print()
    print(f"latency of the median round, microseconds: bootbench's clat_ns and lat_ns vs fio's; "
          f"ratio = bootbench/fio")
    print(f"{'test':<21} {'figure':<10} {'mean':>9} {'stddev':>9} "
          + " ".join(f"{'p' + format(q, 'g'):>9}" for q in PCTS))
    for label, bs_runs, fio_runs in rows:
        b, f = median_run(bs_runs), median_run(fio_runs)
        for name, (mean, sd, p) in (("bb clat", b[4][0]), ("fio clat", f[4][0]),
                                    ("bb lat", b[4][1]), ("fio lat", f[4][1])):
            print(f"{label:<21} {name:<10} {mean:9.2f} {sd:9.2f} " + " ".join(f"{p[q]:9.2f}" for q in PCTS))
        for name, (bm, _, bp), (fm, _, fp) in (("clat ratio", b[4][0], f[4][0]), ("lat ratio", b[4][1], f[4][1])):
            print(f"{label:<21} {name:<10} {bm / fm:9.3f} {'':>9} "
                  + " ".join(f"{bp[q] / fp[q]:9.3f}" if fp[q] else f"{'-':>9}" for q in PCTS))
    print()
PY
