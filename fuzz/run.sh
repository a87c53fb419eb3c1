#!/usr/bin/env bash
# Run every cargo-fuzz target of bootbench for a bounded time and print the
# executions of each (from libFuzzer's final stats) and a summary.
#
#   bash fuzz/run.sh                  # every target, FUZZ_SECONDS (default 60) each
#   FUZZ_SECONDS=180 bash fuzz/run.sh size frame_decode
#
# The corpora in fuzz/corpus/<target>/ are the seeds and are only read: new
# inputs found go to a scratch directory (fuzz/work/<target>/, not in git),
# so the repository's corpora stay small. A crash leaves its input in
# fuzz/artifacts/<target>/ and makes the exit status 1: fix it, add a
# regression test beside the fix, and copy the input into the corpus.
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-60}
all=(config size cmdline frame_decode frame_roundtrip results signatures health selftest kmsg capacity holds zones farm ocp telemetry eventlog phy_events sas_port_log quote authenticode)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi

cd "$here" || exit 2
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: cargo-fuzz missing: cargo install cargo-fuzz (and rustup toolchain install nightly)" >&2
    exit 2
fi
mkdir -p "$here/work"
declare -A execs status
failed=0
built=()
for t in "${targets[@]}"; do
    # One build per target: a target whose sources are broken (someone
    # mid-edit) does not stop the others.
    echo "fuzz: building $t (nightly, address sanitizer)"
    features=()
    case "$t" in results | quote | authenticode) features=(--features report) ;; esac
    if cargo +nightly fuzz build "${features[@]}" "$t" >"$here/work/build-$t.log" 2>&1; then
        built+=("$t")
    else
        grep -m5 -A5 '^error' "$here/work/build-$t.log" >&2
        echo "fuzz: $t: build failed (log: $here/work/build-$t.log)" >&2
        status[$t]="build failed"; failed=1
    fi
done
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin_dir="${CARGO_TARGET_DIR:-$here/target}/$triple/release"

for t in "${built[@]}"; do
    bin="$bin_dir/$t"
    if [ ! -x "$bin" ]; then
        echo "fuzz: $t: no binary at $bin" >&2
        status[$t]="not built"; failed=1; continue
    fi
    work="$here/work/$t"
    art="$here/artifacts/$t"
    mkdir -p "$work" "$art" "$here/corpus/$t"
    log="$work.log"
    echo "fuzz: $t: ${seconds}s"
    "$bin" "$work" "$here/corpus/$t" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$art/" >"$log" 2>&1
    rc=$?
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [ -n "$n" ] || n=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
    [ -n "$n" ] || n=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -1)
    execs[$t]=${n:-?}
    if [ $rc -eq 0 ]; then
        status[$t]="ok"
    else
        failed=1
        unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        status[$t]="CRASH (exit $rc) input ${unit:-?}; log $log"
        grep -m3 -E "panicked|ERROR: (libFuzzer|AddressSanitizer)" "$log" | sed "s/^/fuzz: $t: /"
    fi
    echo "fuzz: $t: ${execs[$t]} executions: ${status[$t]}"
done

echo
echo "fuzz summary (${seconds}s per target):"
printf '  %-16s %14s  %s\n' target executions result
for t in "${targets[@]}"; do
    printf '  %-16s %14s  %s\n' "$t" "${execs[$t]:-?}" "${status[$t]:-?}"
done
exit $failed
