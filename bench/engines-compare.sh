#!/usr/bin/env bash
# `make bench`, the engines for the fastest drives (issue #50): CPU time per
# I/O of each io_uring option beside fio's same engine, on the same device:
#   io_uring                 rand_read 4k QD32    fio --ioengine=io_uring
#   sqthread_poll            rand_read 4k QD32    fio --ioengine=io_uring --sqthread_poll=1
#   hipri                    rand_read 4k QD32    fio --ioengine=io_uring --hipri=1
#   io_uring_cmd             rand_read 4k QD32    fio --ioengine=io_uring_cmd --cmd_type=nvme
#   io_uring_cmd + hipri     rand_read 4k QD32    fio --ioengine=io_uring_cmd --cmd_type=nvme --hipri=1
# On a RAM-backed loop device (1 GiB in /dev/shm, losetup --direct-io=on),
# io_uring and sqthread_poll run; hipri cannot (a loop device has no poll
# queues: bootbench skips the test saying so, fio fails the job with
# EOPNOTSUPP, both shown), nor can the passthrough (it needs an NVMe
# namespace with a /dev/ngXnY). BENCH_NVME=/dev/nvmeXnY (read only, never
# written) runs all five on that drive too, where the machine has one.
#
# CPU time is user + system of the whole process from the kernel's rusage
# of each child (wait4): the SQPOLL thread (iou-sqp-PID) is a thread of
# the process, so its CPU time is counted. Both sides pinned to the same
# CPU (taskset, the last online one; the SQPOLL thread on CPU 0 for both,
# sqthread_poll_cpu) with /dev/cpu_dma_latency held at 0
# for fio as bootbench holds it. Median of BENCH_ROUNDS (default 3)
# alternating rounds of BENCH_RUNTIME (default 5) seconds. Needs root, fio,
# python3. Not a test: nothing is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME="${BENCH_RUNTIME:-5}"
ROUNDS="${BENCH_ROUNDS:-3}"
NVME="${BENCH_NVME:-}"
command -v fio >/dev/null || { echo "fio is missing: apt-get install -y fio" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (losetup)" >&2; exit 1; }

cargo build --release -p bootbench-init --target x86_64-unknown-linux-musl >&2
BIN="${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-musl/release/bootbench-init"

WORK="$(mktemp -d /dev/shm/bootbench-engines.XXXXXX)"
LOOP=""
cleanup() {
    if [ -n "$LOOP" ]; then losetup -d "$LOOP" || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
dd if=/dev/zero of="$WORK/disk.img" bs=1M count=1024 status=none
LOOP="$(losetup --direct-io=on -f --show "$WORK/disk.img")"

python3 - "$BIN" "$LOOP" "$NVME" "$RUNTIME" "$ROUNDS" "$WORK" <<'PY'
import json, os, statistics, struct, subprocess, sys

bin_, loop, nvme, runtime, rounds, work = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
with open("/sys/devices/system/cpu/online") as f:
    cpu = f.read().strip().split(",")[-1].split("-")[-1]

# label, bootbench options, fio options
OPTIONS = [
    ("io_uring", {"ioengine": "io_uring"}, ["--ioengine=io_uring"]),
    # The submission thread on CPU 0, the job on the last CPU, for both: a
    # thread inheriting the job's one-CPU affinity would take turns with it.
    ("sqthread_poll", {"sqthread_poll": True, "sqthread_poll_cpu": 0},
     ["--ioengine=io_uring", "--sqthread_poll=1", "--sqthread_poll_cpu=0"]),
    ("hipri", {"hipri": True}, ["--ioengine=io_uring", "--hipri=1"]),
    ("io_uring_cmd", {"ioengine": "io_uring_cmd"}, ["--ioengine=io_uring_cmd", "--cmd_type=nvme"]),
    ("io_uring_cmd hipri", {"ioengine": "io_uring_cmd", "hipri": True},
     ["--ioengine=io_uring_cmd", "--cmd_type=nvme", "--hipri=1"]),
]

def run(argv, out):
    with open(out, "wb") as o, open(out + ".err", "wb") as e:
        p = subprocess.Popen(["taskset", "-c", cpu] + argv, stdout=o, stderr=e)
        _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime

def bootbench(dev, opts):
    cfg = os.path.join(work, "bb.json")
    test = {"workload": "rand_read", "bs": "4k", "iodepth": 32, "runtime": runtime,
            "seed": int.from_bytes(os.urandom(7), "little"), **opts}
    json.dump({"targets": [dev], "tests": [test]}, open(cfg, "w"))
    out = os.path.join(work, "bb.out")
    rc, t = run([bin_, "run", "--config", cfg], out)
    try:
        doc = json.load(open(out))
    except ValueError:
        return None, f"bootbench exit {rc}: " + open(out + ".err", errors="replace").read()[-300:]
    st = doc["tests"][0]["status"]
    if st["state"] != "ok":
        return None, f"bootbench: {st['state']}: {st.get('reason') or st.get('message') or st}"
    r = doc["tests"][0]["steps"][0]["read"]
    eng = doc["tests"][0]["steps"][0].get("engine", {})
    return (r["iops"], t / r["ios"] * 1e6, eng.get("name"), ",".join(eng.get("setup_flags", []))), None

def fio(dev, opts):
    if any(o.startswith("--ioengine=io_uring_cmd") for o in opts):
        dev = dev.replace("/dev/nvme", "/dev/ng")
    out = os.path.join(work, "fio.out")
    hold = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    os.write(hold, struct.pack("=i", 0))
    try:
        rc, t = run(["fio", "--name=e", f"--filename={dev}", "--rw=randread", "--bs=4k", "--iodepth=32",
                     "--direct=1", f"--runtime={runtime}", "--time_based", "--randrepeat=0",
                     "--output-format=json"] + opts, out)
    finally:
        os.close(hold)
    text = open(out, errors="replace").read()
    if rc != 0:
        text += open(out + ".err", errors="replace").read()
        err = [l for l in text.splitlines() if "err" in l.lower() or "fio:" in l]
        return None, f"fio exit {rc}: " + " | ".join(err[-3:])
    r = json.loads(text[text.index("{"):])["jobs"][0]["read"]
    return (r["iops"], t / r["total_ios"] * 1e6), None

def device(dev, what):
    print(f"== {dev} ({what}); rand_read 4k QD32, median of {rounds} alternating rounds of {runtime} s, "
          f"both pinned to CPU {cpu}; CPU = user+system per I/O, us")
    print(f"{'option':<20} {'bb IOPS':>10} {'fio IOPS':>10} {'bb CPU us/IO':>13} {'fio CPU us/IO':>14}  bootbench engine")
    for label, bo, fo in OPTIONS:
        if dev == loop and (label.startswith("io_uring_cmd")):
            print(f"{label:<20} cannot run here: NVMe passthrough needs an NVMe namespace (/dev/ngXnY); "
                  f"set BENCH_NVME=/dev/nvmeXnY where the machine has one")
            continue
        bbs, fios, why = [], [], []
        for r in range(rounds):
            order = [("bb", bootbench), ("fio", fio)] if r % 2 == 0 else [("fio", fio), ("bb", bootbench)]
            for who, f in order:
                res, err = f(dev, bo if who == "bb" else fo)
                if err:
                    why.append(err)
                elif who == "bb":
                    bbs.append(res)
                else:
                    fios.append(res)
            if why:
                break
        if why:
            print(f"{label:<20} cannot run here: " + " / ".join(dict.fromkeys(w.strip() for w in why)))
            continue
        med = lambda xs, i: statistics.median(x[i] for x in xs)
        print(f"{label:<20} {med(bbs, 0):>10,.0f} {med(fios, 0):>10,.0f} {med(bbs, 1):>13.2f} {med(fios, 1):>14.2f}"
              f"  {bbs[0][2]} [{bbs[0][3]}]")

device(loop, "loop over /dev/shm, direct I/O")
if nvme:
    device(nvme, "NVMe, read only")
else:
    print("no BENCH_NVME given: hipri and io_uring_cmd figures need an NVMe drive (poll queues, /dev/ngXnY), "
          "which this machine does not have")
PY
