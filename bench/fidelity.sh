#!/usr/bin/env bash
# `make fidelity`: every classic twin beside its real tool on the same device.
#
# Devices (each a loop device this script creates over a file it creates;
# nothing else is ever written):
#   throttled-bw    a file in /dev/shm, every measured command of both sides
#                   run in a cgroup whose block throttle holds the loop device
#                   to FIDELITY_THROTTLE_BPS (default 40 MiB/s) each way:
#                   bandwidth-bound
#   throttled-iops  the same, held to FIDELITY_THROTTLE_IOPS (default 400)
#                   requests/s each way as well: request-bound for small
#                   requests, bandwidth-bound for large ones (a request
#                   limit alone lets readahead's varying request sizes set
#                   the byte rate: hdparm -t against itself came out 0.88-1.08)
#   throttled       both of them (the default): a device that holds still,
#                   where the noisy ones below differ by 10-50% run to run
#   shm       a file in /dev/shm, loop device with buffered backing I/O
#   shm-dio   the same file, losetup --direct-io=on (not in the default
#             set: the tmpfs pages are the storage, there is no cache under
#             the loop for direct I/O to bypass)
#   disk      a file under FIDELITY_DISK_DIR (/var/tmp: the machine's own
#             disk, real latency and the host page cache under the loop)
#   disk-dio  the same file, losetup --direct-io=on (no host page cache)
# Pairs (tool / bootbench twin; parameters in bench/fidelity.py):
#   two A/A controls first (control_*: hdparm -t and fio randread 4k QD1 on
#   both sides), so the table shows the spread of the machine itself,
#   hdparm -T / cached_read, hdparm -t / buffered_read,
#   hdparm -t --direct / direct_read,
#   dd if=DEV of=/dev/null bs=10M count=N / dd_read_10m,
#   time (dd if=/dev/zero of=DEV bs=16k count=10000; sync DEV) / dd_write_16k,
#   dd if=/dev/zero of=DEV bs=8k count=N (N = 256k or what fits) / dd_write_8k,
#   sysbench fileio seqrd/seqwr/rndrd/rndwr / sysbench_* (ext4 on the loop
#   device; the twin runs on one file of the same total size in the same
#   filesystem),
#   fio psync (QD1) / io_uring (QD>1; registerfiles, fixedbufs, the twin's io_uring
#   options: fidelity.py fio_engine_args) with CrystalDiskMark's parameters / cdm_*
#   (both: the 1 GiB area filled first, a warm-up, the best of N passes,
#   then CDM's pause),
#   fio read/write/randread/randwrite at the standard profile's parameters.
# Each pair runs FIDELITY_ROUNDS times (default 3), alternating which side
# goes first; the table shows both medians in the tool's own unit, the
# ratio of the medians (bootbench/tool), the range of per-round ratios, and
# a note. Target 0.95-1.05; rows outside are flagged. Nothing is asserted.
# Then the request table: per pair and side, what the device saw
# (/sys/block/NAME/stat before and after each measured run) and, from one
# more run of each side under strace -f, the system calls on the device,
# per MiB moved.
#
# Environment:
#   FIDELITY_ROUNDS     rounds per pair (default 3; quick: 1)
#   FIDELITY_QUICK=1    short runs for iterating: 1 round, 1 GiB devices,
#                       runtimes of 2 s (fio, sysbench) and 1 s (cdm)
#   FIDELITY_SIZE       size of each backing file (default 2G; quick 1G)
#   FIDELITY_SYSBENCH_SIZE  sysbench --file-total-size (default 640M; quick 256M;
#                       the seed's 5000M does not fit a modest device)
#   FIDELITY_RUNTIME    seconds of each fio/sysbench run (default 10, as sysbench's)
#   FIDELITY_CDM_RUNTIME seconds of each CDM fio job (default 5, as CDM)
#   FIDELITY_CDM_PASSES measured passes of each CDM pair, best kept (default 5,
#                       CDM 8's TestCount; quick 2)
#   FIDELITY_CDM_PAUSE  seconds of idle after each CDM side (default 5, CDM's
#                       IntervalTime; quick 1)
#   FIDELITY_DEVICES    which devices, comma-separated (default throttled;
#                       also throttled-bw, throttled-iops, shm, disk, disk-dio,
#                       shm-dio; all = throttled,shm,disk,disk-dio)
#   FIDELITY_THROTTLE_BPS   the throttled-bw device's bytes/s (default 40M)
#   FIDELITY_THROTTLE_IOPS  the throttled-iops device's requests/s (default 400)
#   FIDELITY_THROTTLED_SIZE the throttled devices' backing file (default 1G)
#   FIDELITY_CDM_SIZE   the CDM pairs' test area (default 1G, CDM's; 256M on
#                       the throttled devices, where a 1 GiB fill takes 26 s)
#   FIDELITY_STRACE=0   no traced runs (the request table keeps the device's
#                       counters only)
#   FIDELITY_PAIRS      a Python regex: only pairs whose name matches
#   FIDELITY_DD_COUNT   dd_read_10m's count (default 400, the seed's; at most
#                       what the device holds: 102 on the throttled devices)
#   FIDELITY_DISK_DIR   where the on-disk file goes (default /var/tmp)
#   FIDELITY_OUT        also write the raw per-round figures as JSON lines to this file
# Needs root (losetup, mkfs, mount, cgroups). Installs hdparm, sysbench, fio
# and strace with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK="${FIDELITY_QUICK:-0}"
if [ "$QUICK" = 1 ]; then
    d_rounds=1 d_size=1G d_sb=256M d_rt=2 d_cdm=1 d_cdm_passes=2 d_cdm_pause=1
else
    d_rounds=3 d_size=2G d_sb=640M d_rt=10 d_cdm=5 d_cdm_passes=5 d_cdm_pause=5
fi
ROUNDS="${FIDELITY_ROUNDS:-$d_rounds}"
SIZE="${FIDELITY_SIZE:-$d_size}"
SB_SIZE="${FIDELITY_SYSBENCH_SIZE:-$d_sb}"
RUNTIME="${FIDELITY_RUNTIME:-$d_rt}"
CDM_RUNTIME="${FIDELITY_CDM_RUNTIME:-$d_cdm}"
CDM_PASSES="${FIDELITY_CDM_PASSES:-$d_cdm_passes}"
CDM_PAUSE="${FIDELITY_CDM_PAUSE:-$d_cdm_pause}"
DEVICES="${FIDELITY_DEVICES:-throttled}"
DEVICES="${DEVICES//all/throttled,shm,disk,disk-dio}"
DEVICES="${DEVICES//throttled,/throttled-bw,throttled-iops,}"
[ "${DEVICES##*,}" = throttled ] && DEVICES="${DEVICES%throttled}throttled-bw,throttled-iops"
THR_BPS="$(numfmt --from=iec "${FIDELITY_THROTTLE_BPS:-40M}")"
THR_IOPS="${FIDELITY_THROTTLE_IOPS:-400}"
THR_SIZE="${FIDELITY_THROTTLED_SIZE:-1G}"
STRACE="${FIDELITY_STRACE:-1}"
PAIRS="${FIDELITY_PAIRS:-.}"
DISK_DIR="${FIDELITY_DISK_DIR:-/var/tmp}"
RAW_OUT="${FIDELITY_OUT:-}"

[ "$(id -u)" = 0 ] || { echo "make fidelity needs root (losetup, mkfs, mount)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is missing" >&2; exit 1; }
missing=()
command -v hdparm >/dev/null || missing+=(hdparm)
command -v sysbench >/dev/null || missing+=(sysbench)
command -v fio >/dev/null || missing+=(fio)
[ "$STRACE" = 0 ] || command -v strace >/dev/null || missing+=(strace)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    apt-get install -y "${missing[@]}" >&2 || { apt-get update >&2 && apt-get install -y "${missing[@]}" >&2; }
fi
command -v mkfs.ext4 >/dev/null || { echo "mkfs.ext4 is missing (e2fsprogs)" >&2; exit 1; }

rustup target add x86_64-unknown-linux-musl >&2
cargo build --release -p bootbench-init --target x86_64-unknown-linux-musl >&2
BIN="$(realpath "${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-musl/release/bootbench-init")"

WORK="$(mktemp -d /dev/shm/bootbench-fidelity.XXXXXX)"
DISK_WORK="$(mktemp -d "$DISK_DIR/bootbench-fidelity.XXXXXX")"
LOOP=""
MNT="$WORK/mnt"
cleanup() {
    if mountpoint -q "$MNT" 2>/dev/null; then umount "$MNT" || umount -l "$MNT" || true; fi
    if [ -n "$LOOP" ]; then losetup -d "$LOOP" || true; fi
    # The throttle's cgroup, when its python was stopped before removing it.
    find /sys/fs/cgroup -maxdepth 2 -type d -name "bootbench-fidelity-$$" -exec rmdir {} + 2>/dev/null || true
    rm -rf "$WORK" "$DISK_WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$MNT"
# FIDELITY_OUT gets each pair's line as soon as it is measured (so an
# interrupted run keeps what it measured: `bench/fidelity.py table --results F`).
RESULTS="${RAW_OUT:-$WORK/results.jsonl}"
: >"$RESULTS"

start=$(date +%s)
echo "fidelity: devices $DEVICES, ${ROUNDS} round(s), fio/sysbench ${RUNTIME} s, cdm ${CDM_RUNTIME} s" >&2

for dev in ${DEVICES//,/ }; do
    size="$SIZE" throttle="" cdm_size="${FIDELITY_CDM_SIZE:-1G}" sb_size="$SB_SIZE"
    case "$dev" in
        shm | shm-dio) file="$WORK/shm.img" ;;
        disk | disk-dio) file="$DISK_WORK/disk.img" ;;
        throttled-bw | throttled-iops)
            file="$WORK/throttled.img" size="$THR_SIZE" cdm_size="${FIDELITY_CDM_SIZE:-256M}"
            # sysbench's files and the twin's one file of the same size fit.
            sb_size="${FIDELITY_SYSBENCH_SIZE:-256M}"
            if [ "$dev" = throttled-bw ]; then throttle="$THR_BPS,0"; else throttle="$THR_BPS,$THR_IOPS"; fi ;;
        *) echo "unknown device '$dev' (throttled, throttled-bw, throttled-iops, shm, shm-dio, disk, disk-dio, all)" >&2
           exit 2 ;;
    esac
    bytes="$(numfmt --from=iec "${size%iB}")"
    mib=$((bytes / 1048576))
    # Fully written (not sparse), so reads touch real pages and real blocks.
    if [ ! -f "$file" ]; then
        echo "writing $file ($size)" >&2
        dd if=/dev/zero of="$file" bs=1M count="$mib" conv=fsync status=none
    fi
    case "$dev" in
        *-dio) LOOP="$(losetup --direct-io=on -f --show "$file")" ;;
        *) LOOP="$(losetup --direct-io=off -f --show "$file")" ;;
    esac
    dio="$(cat "/sys/block/${LOOP#/dev/}/loop/dio")"
    echo "== $dev: $LOOP over $file (loop dio=$dio)" >&2
    python3 bench/fidelity.py measure --bin "$BIN" --dev "$LOOP" --label "$dev" --backing "$file" \
        --work "$WORK" --mnt "$MNT" --rounds "$ROUNDS" --runtime "$RUNTIME" --cdm-runtime "$CDM_RUNTIME" \
        --cdm-passes "$CDM_PASSES" --cdm-pause "$CDM_PAUSE" \
        --sysbench-size "$sb_size" --cdm-size "$cdm_size" --throttle "$throttle" --cgroup "bootbench-fidelity-$$" \
        --strace "$STRACE" --dd-count "${FIDELITY_DD_COUNT:-400}" \
        --pairs "$PAIRS" --results "$RESULTS"
    losetup -d "$LOOP"
    LOOP=""
done

python3 bench/fidelity.py table --results "$RESULTS" --rounds "$ROUNDS" \
    --elapsed "$(($(date +%s) - start))"
