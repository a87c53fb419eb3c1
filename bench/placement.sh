#!/usr/bin/env bash
# `make bench`: placement, pinned to a NUMA node against unpinned, side by
# side on a RAM-backed loop device (1 GiB in /dev/shm, losetup
# --direct-io=on), bootbench alone:
#   node   placement N: every job's thread pinned to node N's CPUs, its
#          buffers preferred on node N (set_mempolicy MPOL_PREFERRED), as
#          the default "disk" does on a disk whose PCI device is on node N;
#          N is the node of the CPU this script runs on (BENCH_NODE);
#   any    placement "any": not pinned, buffers where the kernel puts them
#          (bootbench before placement existed).
# A loop device has no PCI device, so its default ("disk") runs as "any":
# the script says so from the document. On a machine of one node, node 0's
# CPUs are all the CPUs, so "node" differs from "any" only by the affinity
# call and the memory policy: the comparison then measures their cost (it
# should be none), not a node's distance; on a machine of several nodes it
# measures the distance too (and BENCH_NODE=M, another node, the far side).
#   rand_read 4k QD1, rand_read 4k QD32, rand_read 4k QD32 jobs=4, seq_read 1M QD1
# Each test runs BENCH_ROUNDS times (default 5), alternating which goes
# first; the table shows each side's median IOPS or MB/s, the ratio of the
# medians (node/any), the range of the per-round ratios, CPU time per I/O,
# and the CPUs the threads were seen on. Needs root and python3. Not a test.
#
# Environment: BENCH_RUNTIME (seconds per test, default 10), BENCH_ROUNDS,
# BENCH_NODE (default: the node of the CPU this script starts on).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME="${BENCH_RUNTIME:-10}"
ROUNDS="${BENCH_ROUNDS:-5}"
NODE="${BENCH_NODE:-}"
command -v python3 >/dev/null || { echo "python3 is missing" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "make bench needs root (losetup)" >&2; exit 1; }

rustup target add x86_64-unknown-linux-musl >&2
cargo build --release -p bootbench-init --target x86_64-unknown-linux-musl >&2
BIN="${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-musl/release/bootbench-init"

WORK="$(mktemp -d /dev/shm/bootbench-placement.XXXXXX)"
LOOP=""
cleanup() {
    if [ -n "$LOOP" ]; then losetup -d "$LOOP" || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

dd if=/dev/zero of="$WORK/disk.img" bs=1M count=1024 status=none
LOOP="$(losetup --direct-io=on -f --show "$WORK/disk.img")"
echo "loop device: $LOOP (1 GiB over /dev/shm, direct I/O); ${RUNTIME} s per test, ${ROUNDS} rounds" >&2

python3 - "$BIN" "$LOOP" "$RUNTIME" "$WORK" "$ROUNDS" "$NODE" <<'PY'
import glob, json, os, statistics, subprocess, sys

bin_, dev, runtime, work, rounds, node = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6]
nodes = sorted(int(p.rsplit("node", 1)[1]) for p in glob.glob("/sys/devices/system/node/node[0-9]*"))
if node == "":
    cpu = os.sched_getaffinity(0)
    node = next((n for n in nodes
                 if set(int(c) for c in open(f"/sys/devices/system/node/node{n}/cpulist").read().replace("-", ",").split(",") if c.strip()) & cpu), 0)
node = int(node)

TESTS = [
    # label, workload, bs, iodepth, jobs, figure
    ("rand_read 4k QD1", "rand_read", "4k", 1, 1, "iops"),
    ("rand_read 4k QD32", "rand_read", "4k", 32, 1, "iops"),
    ("rand_read 4k QD32 x4", "rand_read", "4k", 32, 4, "iops"),
    ("seq_read 1M QD1", "seq_read", "1M", 1, 1, "bytes_per_sec"),
]

def bootbench(i, side, workload, bs, qd, jobs):
    test = {"workload": workload, "bs": bs, "iodepth": qd, "runtime": runtime,
            "seed": int.from_bytes(os.urandom(7), "little")}
    if jobs > 1:
        test["jobs"] = jobs
    if side == "node":
        test["placement"] = node
    elif side == "any":
        test["placement"] = "any"
    cfg = os.path.join(work, f"bb{i}.json")
    with open(cfg, "w") as f:
        json.dump({"targets": [dev], "tests": [test]}, f)
    out = os.path.join(work, f"bb{i}.out.json")
    with open(out, "wb") as o:
        p = subprocess.Popen([bin_, "run", "--config", cfg], stdout=o, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bootbench failed ({side})")
    doc = json.load(open(out))
    t = doc["tests"][0]
    if t["status"]["state"] != "ok":
        sys.exit(f"bootbench test failed: {t['status']}")
    r = t["steps"][0]["read"]
    return r, ru.ru_utime + ru.ru_stime, t.get("placement") or {}

i = 0
# What the default does with this device, said once.
r, _, pl = bootbench(i, "default", "rand_read", "4k", 1, 1)
print(f"nodes: {nodes}; the loop device's default placement: {pl.get('policy')}: {pl.get('reason')}")
print(f"node side: placement {node}")
print(f"{'test':22} {'node':>12} {'any':>12} {'node/any':>9} {'range':>13} {'cpu us/io node':>15} {'any':>8}  ran on (node | any)")
for label, workload, bs, qd, jobs, fig in TESTS:
    got = {"node": [], "any": []}
    cpu = {"node": [], "any": []}
    ran = {"node": set(), "any": set()}
    ratios = []
    for rnd in range(rounds):
        order = ("node", "any") if rnd % 2 == 0 else ("any", "node")
        this = {}
        for side in order:
            i += 1
            r, c, pl = bootbench(i, side, workload, bs, qd, jobs)
            this[side] = r[fig]
            got[side].append(r[fig])
            cpu[side].append(c / max(r["ios"], 1) * 1e6)
            ran[side].update(pl.get("ran_on", []))
        ratios.append(this["node"] / this["any"])
    med = {s: statistics.median(v) for s, v in got.items()}
    show = (lambda v: f"{v:,.0f} IOPS") if fig == "iops" else (lambda v: f"{v / 1e6:,.0f} MB/s")
    print(f"{label:22} {show(med['node']):>12} {show(med['any']):>12} {med['node'] / med['any']:>9.3f} "
          f"{min(ratios):>6.3f}-{max(ratios):<6.3f} {statistics.median(cpu['node']):>15.2f} {statistics.median(cpu['any']):>8.2f}"
          f"  {sorted(ran['node'])} | {sorted(ran['any'])}")
PY
