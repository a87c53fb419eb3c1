#!/usr/bin/env bash
# Usage: qemu/vmlinux.sh VMLINUZ OUT
# The kernel ELF inside a bzImage (Debian's vmlinuz: an xz stream after the
# setup code and the decompressor), written to OUT, for the tests' direct
# boots: QEMU enters an ELF kernel by its PVH entry point (the Xen note
# PHYS32_ENTRY, Linux's CONFIG_PVH), without the bzImage's real-mode setup
# and decompressor, which take about 2.4 s of every boot under TCG. The same
# kernel code: what is inside the signed vmlinuz, decompressed. The stick and
# network boots still boot vmlinuz itself, through GRUB and the EFI stub.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 VMLINUZ OUT" >&2; exit 2; }
in=$1 out=$2
# The first xz stream's magic (FD 37 7A 58 5A 00), its byte offset.
# (pipefail off: grep ends on SIGPIPE once head has the first.)
off=$(set +o pipefail; LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$in" | head -n 1 | cut -d: -f1)
if [ -z "$off" ]; then
  echo "$in: no xz stream in it (a kernel compressed otherwise: boot it as vmlinuz)" >&2
  exit 1
fi
# Fresh names beside OUT (mktemp: never a name planted there before), gone on any exit.
tmp=$(mktemp "$out.XXXXXX") xz=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp" "$xz"' EXIT
tail -c +"$((off + 1))" "$in" > "$xz"
xz -dc --single-stream < "$xz" > "$tmp"
if [ "$(head -c 4 "$tmp" | od -An -tx1 | tr -d ' ')" != 7f454c46 ]; then
  echo "$in: its xz stream is not an ELF kernel" >&2; exit 1
fi
# XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry QEMU looks for.
if ! readelf -n "$tmp" | grep -q 'Unknown note type: (0x00000012)\|PHYS32_ENTRY'; then
  echo "$in: its kernel has no PVH entry (CONFIG_PVH): boot it as vmlinuz" >&2; exit 1
fi
chmod 644 "$tmp"
mv "$tmp" "$out"
