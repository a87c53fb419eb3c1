#!/usr/bin/env bash
# `make bench`: bootbench's burn-in against the tools it imitates, on the
# same RAM-backed loop device (a file in /dev/shm, losetup --direct-io=on):
#   sequential  burn_in {} (badblocks' four patterns, 1 MiB requests at
#               depth 4) against `badblocks -w -b 4096 -c 256` (the same
#               four patterns, 1 MiB at a time) over the whole device;
#   random      burn_in {"mode": "random", "loops": 1} (4 KiB, depth 32,
#               every block written once and read back) against fio's
#               `--rw randrw --bs 4k --iodepth 32 --verify crc32c` (libaio,
#               as Ironic's burn-in runs it, but in a random order) over the
#               same area.
# Each round: the tool's time and bytes moved (written + read back), then
# bootbench's; badblocks is timed from outside (it prints no rate), fio by
# its own job_runtime, bootbench by its record's elapsed_ns. The table: per
# round the rates (MB/s = 10^6 B/s moved) and the ratio bootbench/tool,
# then the median ratio. Needs root, badblocks (e2fsprogs), fio, python3.
# Not a test: nothing is asserted.
#
# Environment: BURN_BYTES (the device, default 2G), BURN_RANDOM (the random
# area, default 512M), BENCH_ROUNDS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE="${BURN_BYTES:-2G}"
AREA="${BURN_RANDOM:-512M}"
ROUNDS="${BENCH_ROUNDS:-3}"
BIN="${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-musl/release/bootbench-init"
[ -x "$BIN" ] || { echo "no $BIN: run make image first" >&2; exit 2; }
command -v badblocks >/dev/null && command -v fio >/dev/null || { echo "needs badblocks and fio" >&2; exit 2; }

WORK=$(mktemp -d)
FILE=/dev/shm/bootbench-burnin-bench.img
rm -f "$FILE"
truncate -s "$SIZE" "$FILE"
DEV=$(losetup --direct-io=on -f --show "$FILE")
trap 'losetup -d "$DEV"; rm -f "$FILE"; rm -rf "$WORK"' EXIT

config() {
  cat >"$WORK/config.json" <<JSON
{"targets": ["$DEV"], "tests": [{"workload": "seq_read", "size": "1M"}],
 "destructive": {"confirm": "I understand this destroys data", "countdown": 0, "targets": ["$DEV"],
                 "allow_overwrite_signatures": true},
 "burn_in": $1}
JSON
}

now() { date +%s.%N; }

for round in $(seq 1 "$ROUNDS"); do
  t0=$(now)
  badblocks -w -b 4096 -c 256 "$DEV" >/dev/null 2>&1
  t1=$(now)
  echo "badblocks $round $(python3 -c "print($t1 - $t0)")" >>"$WORK/raw"
  config '{}'
  "$BIN" run --config "$WORK/config.json" >"$WORK/seq.json" 2>/dev/null
  python3 - "$WORK/seq.json" "$round" >>"$WORK/raw" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["targets"][0]["burn_in"]
assert b["end"] == "done", b["end"]
moved = sum(p["written_bytes"] + p["verified_bytes"] for p in b["passes"])
print("seq", sys.argv[2], b["elapsed_ns"] / 1e9, moved)
PY
  fio --name=burn --filename="$DEV" --rw=randrw --bs=4k --direct=1 --ioengine=libaio --iodepth=32 \
      --verify=crc32c --verify_state_save=0 --size="$AREA" --loops=1 --output-format=json \
      >"$WORK/fio.json" 2>/dev/null
  python3 - "$WORK/fio.json" "$round" >>"$WORK/raw" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("fio", sys.argv[2], j["job_runtime"] / 1e3, j["read"]["io_bytes"] + j["write"]["io_bytes"])
PY
  config "{\"mode\": \"random\", \"loops\": 1, \"length\": \"$AREA\"}"
  "$BIN" run --config "$WORK/config.json" >"$WORK/rnd.json" 2>/dev/null
  python3 - "$WORK/rnd.json" "$round" >>"$WORK/raw" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["targets"][0]["burn_in"]
assert b["end"] == "done", b["end"]
moved = sum(p["written_bytes"] + p["verified_bytes"] for p in b["passes"])
print("rnd", sys.argv[2], b["elapsed_ns"] / 1e9, moved)
PY
done

python3 - "$WORK/raw" "$(stat -c %s "$FILE")" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kind, rnd, secs, *rest = line.split()
    rows[(kind, int(rnd))] = (float(secs), int(rest[0]) if rest else None)
size = int(sys.argv[2])
print(f"burn-in against its tools, {size} B loop device over /dev/shm; MB/s = 10^6 B/s moved (written + read back)")
for label, tool, ours in [("sequential, badblocks -w (4 patterns)", "badblocks", "seq"),
                          ("random 4k QD32, fio randrw verify=crc32c", "fio", "rnd")]:
    ratios = []
    print(label)
    for r in sorted({k[1] for k in rows}):
        ts, tb = rows[(tool, r)]
        if tb is None:  # badblocks: the same four patterns, each written and read whole
            tb = 8 * size
        os_, ob = rows[(ours, r)]
        t_rate, o_rate = tb / ts / 1e6, ob / os_ / 1e6
        ratios.append(o_rate / t_rate)
        print(f"  round {r}: {tool} {t_rate:8.1f} MB/s ({tb} B in {ts:.2f} s), bootbench {o_rate:8.1f} MB/s ({ob} B in {os_:.2f} s), ratio {o_rate / t_rate:.2f}")
    print(f"  median ratio bootbench/{tool}: {statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
PY
