#!/usr/bin/env bash
# pack.sh BOOTBENCH_INIT OUTDIR [TARBALL_URL]: the MAAS tarball and scripts.
#
# OUTDIR/bootbench-maas.tar.gz holds bootbench-init (the static binary given),
# bootbench_maas.py and the two default configs, flat, as MAAS unpacks it into
# $DOWNLOAD_PATH; reproducible (sorted, owner 0, mtime 0, gzip -n).
# OUTDIR/bootbench-acceptance and OUTDIR/bootbench-burn-in are the scripts to
# upload, their `packages: {url: ...}` set to TARBALL_URL when given.
set -euo pipefail
bin=$1 out=$2 url=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -m 755 "$bin" "$stage/bootbench-init"
install -m 644 "$here/bootbench_maas.py" "$here/bootbench-acceptance.json" "$here/bootbench-burn-in.json" "$stage/"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$stage" -cf - \
    bootbench-init bootbench_maas.py bootbench-acceptance.json bootbench-burn-in.json | gzip -n -9 > "$out/bootbench-maas.tar.gz"
for s in bootbench-acceptance bootbench-burn-in; do
    if [ -n "$url" ]; then
        sed "s#https://files.example.com/bootbench/bootbench-maas.tar.gz#$url#" "$here/$s" > "$out/$s"
    else
        cp "$here/$s" "$out/$s"
    fi
    chmod 755 "$out/$s"
done
echo "$out/bootbench-maas.tar.gz $out/bootbench-acceptance $out/bootbench-burn-in"
