#!/usr/bin/env bash
# `make bench`, boot part: the figures of the bootable image, measured on a
# real boot under QEMU (not a test: nothing is asserted).
#   - initramfs size (compressed) and module count, USB stick image size;
#   - time from PID 1's start to the first benchmark I/O, from the kernel
#     timestamps of PID 1's own console lines ("started as PID 1" and the
#     first test's "starting" line, printed just before its first request);
#   - PID 1's peak memory (VmHWM, logged by PID 1 as it finishes);
#   - the result frame on the console: its bytes and its seconds at 115200
#     baud, beside the document's sizes (pretty on the stick, compact,
#     deflated).
# The boot: direct kernel with the stick attached as a USB disk and the
# default four disks (2 SATA, NVMe, virtio), the quick profile; once on
# QEMU's default machine (pc: i440FX + PIIX) and once on q35 (ICH9, PCI
# Express), whose PCI interrupts need no PIIX link routing.
# Needs `make image` first (the Makefile's bench target does it).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${OUT:-out}"
QEMU_TOOL="${CARGO_TARGET_DIR:-target}/release/bootbench-qemu"
for f in "$OUT/vmlinuz" "$OUT/initramfs.img" "$OUT/bootbench.img" "$QEMU_TOOL"; do
    [ -e "$f" ] || { echo "$f is missing: run make image" >&2; exit 1; }
done

RUN="$(mktemp -d "${TMPDIR:-/tmp}/bootbench-bootbench.XXXXXX")"
trap 'rm -rf "$RUN"' EXIT
cp --sparse=always "$OUT/bootbench.img" "$RUN/stick.img"

for machine in pc q35; do
    echo "booting (TCG, machine $machine): direct kernel, stick + default disks, quick profile" >&2
    mkdir -p "$RUN/$machine"
    cp --sparse=always "$RUN/stick.img" "$RUN/$machine/stick.img"
    "$QEMU_TOOL" direct --machine "$machine" --kernel "$OUT/vmlinuz" --initrd "$OUT/initramfs.img" \
        --append "loglevel=4 bootbench.profile=quick" --stick "$RUN/$machine/stick.img" \
        --default-disks --out-dir "$RUN/$machine" --timeout 900 >"$RUN/$machine/tool.out" 2>&1 || {
        tail -n 30 "$RUN/$machine/tool.out" >&2; echo "the boot failed" >&2; exit 1; }
done

python3 - "$OUT" "$RUN/pc/serial.log" "$RUN/q35/serial.log" "$RUN/pc/results" <<'PY'
import glob, os, re, subprocess, sys

out, log, q35_log, results = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
text = open(log, errors="replace").read()

def stamp(pattern, text=text, log=log):
    """Seconds since boot of the first PID 1 console line matching pattern."""
    for m in re.finditer(r"^\[\s*(\d+)\.(\d{6})\] bootbench: (.*)$", text, re.M):
        if re.search(pattern, m.group(3)):
            return int(m.group(1)) + int(m.group(2)) / 1e6
    sys.exit(f"no console line matches {pattern!r} in {log}")

pid1 = stamp(r"started as PID 1")
first_io = stamp(r"^\[test 1/\d+\] .*: starting")
finish = stamp(r"^finishing: ")
peak = re.search(r"peak memory \(VmHWM\): (\d+) B", text)
initrd = os.path.getsize(os.path.join(out, "initramfs.img"))
unpacked = len(subprocess.run(["zstd", "-dc", os.path.join(out, "initramfs.img")],
                              check=True, capture_output=True).stdout)
stick = os.path.join(out, "bootbench.img")
st = os.stat(stick)
MiB = 1 << 20
print("bootable image (MiB = 2^20 bytes; times in seconds since the kernel started; machine pc unless said)")
print(f"  initramfs (zstd)       {initrd:>11} B  {initrd / MiB:7.2f} MiB  (unpacked {unpacked / MiB:.2f} MiB)")
print(f"  USB stick image        {st.st_size:>11} B  {st.st_size / MiB:7.2f} MiB  ({st.st_blocks * 512 / MiB:.2f} MiB allocated)")
print(f"  PID 1 started          {pid1:11.3f} s")
print(f"  first benchmark I/O    {first_io:11.3f} s  (PID 1 start to first I/O: {first_io - pid1:.3f} s)")
q35_text = open(q35_log, errors="replace").read()
q35_pid1 = stamp(r"started as PID 1", q35_text, q35_log)
q35_io = stamp(r"^\[test 1/\d+\] .*: starting", q35_text, q35_log)
print(f"  on q35: PID 1 started  {q35_pid1:11.3f} s  (PID 1 start to first I/O: {q35_io - q35_pid1:.3f} s)")
print(f"  finishing              {finish:11.3f} s")
if peak:
    b = int(peak.group(1))
    print(f"  PID 1 peak memory      {b:>11} B  {b / MiB:7.2f} MiB  (VmHWM)")
else:
    print("  PID 1 peak memory      not logged")
# The result frame as the console carried it, BEGIN to END with its line
# ends, and its time on a serial line at 115200 baud, 8N1 (10 bits a byte).
raw = open(log, "rb").read()
begin = raw.find(b"BOOTBENCH-RESULT-BEGIN")
end = raw.find(b"BOOTBENCH-RESULT-END", begin)
if begin < 0 or end < 0:
    sys.exit(f"no result frame in {log}")
frame = raw[begin:raw.index(b"\n", end) + 1]
header = frame.split(b"\n", 1)[0].decode()
def field(key):
    m = re.search(key + r"=(\d+)", header)
    return int(m.group(1)) if m else None
stick = sorted(glob.glob(os.path.join(results, "*.json")))
pretty = os.path.getsize(stick[0]) if stick else "?"
print(f"  result frame (serial)  {len(frame):>11} B  {len(frame) * 10 / 115200:7.2f} s at 115200 baud "
      f"({len(frame) * 10 / 19200:.1f} s at 19200)")
print(f"    its document         {pretty:>11} B pretty on the stick, {field('bytes')} B compact, "
      f"{field('deflate')} B deflated (frame {header.split()[1]})")
PY
