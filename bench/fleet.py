#!/usr/bin/env python3
"""`make bench`, fleet part: `bootbench-report fleet DIR` over many documents.

Measured (not a test: nothing is asserted; each figure once, so a busy
machine shows in them):
  - peak memory (the process's peak RSS, from wait4's ru_maxrss) of `fleet`
    over FLEET_MEM_DOCS documents (default "200 2000 10000"), and the
    growth from each count to the next, per document and per disk (in
    bytes: what fleet keeps of a document; the memory its parse of one
    document frees is reused for the digests, so the first counts can
    show no growth at all);
  - the time of `fleet` over FLEET_DOCS documents (default 10000; the
    target is under 30 s on a 2-core machine), and in the same run its
    floors: `cat` of every file to /dev/null (find | xargs), and a
    serde_json parse of every document into a `serde_json::Value`
    (report/examples/parse_floor.rs) on every core and on one thread;
    fleet's time over the all-core floor;
  - the length of `fleet`'s text (lines) at each count: the summary is
    meant to fit one screen whatever the number of machines;
  - `export --format parquet` of the two smallest FLEET_MEM_DOCS counts:
    time, peak RSS (a row group's rows, whatever the count) and size;
  - the export of the smallest count on one core (RAYON_NUM_THREADS=1)
    beside every core: the ratio of the times, and whether the files are
    the same byte for byte;
  - `fleet` over each of those exports beside `fleet` over the documents
    it came from, 3 alternating rounds: the ratio of the median times
    (the same report, checked).

The documents (bench/fleetgen.py): made from the real quick-profile run
of report/tests/fixtures/qemu-4disks-quick.json (4 disks, 52 tests), each
a machine of its own (DMI serial, host name, disk serials, one of 3 host
models, 4 disk models of 2 firmwares each, figures scaled per disk, every
97th disk at half speed), written pretty-printed as the stick writes them:
about 383 KB each, 3.8 GB for 10,000. Real size, not trimmed: the time to
read them is part of what `fleet` costs. They are generated once, for the
largest count, into a directory on the real disk (not /dev/shm: that is
RAM, which `fleet` itself needs at 10,000 documents); the smaller counts
are directories of hard links to the first N files. The files are
fresh in the page cache when measured (just written, and `cat` once
before the timed runs), so the times are of parsing and reporting, not
of the disk. The directory is deleted at the end.

Environment:
  FLEET_DOCS       documents of the timed run (default 10000)
  FLEET_MEM_DOCS   counts of the memory runs (default "200 2000 10000";
                   the growth is between each count and the next)
  FLEET_TMPDIR     where the documents go (default $TMPDIR, else /var/tmp)
  FLEET_SEED       the generator's seed (default 1)
  FLEET_KEEP=1     keep the documents (the directory is printed)
Needs the release `bootbench-report` and the `parse_floor` example (the
Makefile's bench-fleet target builds both) under CARGO_TARGET_DIR (default
target).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
REPORT = os.path.join(TARGET, "release", "bootbench-report")
FLOOR = os.path.join(TARGET, "release", "examples", "parse_floor")
GEN = os.path.join(ROOT, "bench", "fleetgen.py")
DISKS_PER_DOC = 4  # the fixture's disks
DOC_BYTES = 390_000  # about one generated document, for the free-space check
TARGET_S = 30.0
ROUNDS = 3  # alternating rounds of the side-by-side timings


def run(argv, capture=False, shell=False):
    """Run argv; its wall seconds, peak RSS in bytes, stdout if captured, and CPU seconds."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=out if capture else subprocess.DEVNULL, stderr=err, shell=shell)
        # wait4: this child's own rusage (RUSAGE_CHILDREN would be the largest of all children).
        _, status, usage = os.wait4(p.pid, 0)
        secs = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            sys.stderr.write(err.read().decode(errors="replace"))
            sys.exit(f"fleet bench: {argv if shell else ' '.join(argv)} exited {p.returncode}")
        out.seek(0)
        text = out.read().decode(errors="replace")
    # ru_maxrss is in KiB on Linux.
    return secs, usage.ru_maxrss * 1024, text, usage.ru_utime + usage.ru_stime


def fleet(d):
    secs, rss, out, cpu = run([REPORT, "fleet", d], capture=True)
    return secs, rss, len(out.splitlines()), cpu


def link_subset(src, dst, n):
    """dst: hard links to the first n documents of src (machines 1..n)."""
    os.makedirs(dst)
    for i in range(1, n + 1):
        name = f"SN{i:06d}-1.json"
        os.link(os.path.join(src, name), os.path.join(dst, name))


def mb(b):
    return f"{b / 1e6:.1f} MB"


def main():
    sys.stdout.reconfigure(line_buffering=True)
    docs = int(os.environ.get("FLEET_DOCS", "10000"))
    mem = [int(x) for x in os.environ.get("FLEET_MEM_DOCS", "200 2000 10000").split()]
    seed = int(os.environ.get("FLEET_SEED", "1"))
    if docs < 1 or not mem or min(mem) < 1:
        sys.exit("fleet bench: FLEET_DOCS and FLEET_MEM_DOCS must be counts above 0")
    for f in (REPORT, FLOOR):
        if not os.access(f, os.X_OK):
            sys.exit(f"fleet bench: {f} is missing: run make bench-fleet (it builds it)")
    base = os.environ.get("FLEET_TMPDIR") or os.environ.get("TMPDIR") or "/var/tmp"
    most = max([docs] + mem)
    free = shutil.disk_usage(base).free
    if free < most * DOC_BYTES * 1.1:
        sys.exit(f"fleet bench: {base} has {mb(free)} free, {most} documents need about "
                 f"{mb(most * DOC_BYTES)}: set FLEET_TMPDIR or a smaller FLEET_DOCS")
    work = tempfile.mkdtemp(prefix="bootbench-fleet.", dir=base)
    try:
        measure(work, docs, mem, seed, most)
    finally:
        if os.environ.get("FLEET_KEEP") == "1":
            print(f"documents kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def measure(work, docs, mem, seed, most):
    all_dir = os.path.join(work, "all")
    print(f"generating {most} documents in {work} ...", file=sys.stderr)
    secs, _, out, _ = run([sys.executable, GEN, "--out", all_dir, "--count", str(most), "--seed", str(seed)],
                       capture=True)
    total = sum(e.stat().st_size for e in os.scandir(all_dir))
    print(f"documents: {most} generated (bench/fleetgen.py, seed {seed}) in {secs:.1f} s "
          f"({most / secs:.0f} docs/s); {mb(total)} on disk, {total / most / 1e3:.0f} KB each; "
          f"{out.strip().split(', ')[2]}")

    def dir_of(n):
        if n == most:
            return all_dir
        d = os.path.join(work, f"first{n}")
        if not os.path.isdir(d):
            link_subset(all_dir, d, n)
        return d

    # Memory: the smallest count to the largest.
    peaks = {}
    lines = {}
    for n in sorted(set(mem)):
        _, peaks[n], lines[n], _ = fleet(dir_of(n))
    counts = sorted(peaks)
    parts = ", ".join(f"{n} docs {mb(peaks[n])}" for n in counts)
    steps = []
    for lo, hi in zip(counts, counts[1:]):
        per_doc = (peaks[hi] - peaks[lo]) / (hi - lo)
        steps.append(f"{lo} to {hi}: {per_doc:+.0f} B per document, {per_doc / DISKS_PER_DOC:+.0f} B per disk")
    growth = f"; growth {'; '.join(steps)} ({DISKS_PER_DOC} disks a document)" if steps else ""
    print(f"fleet peak RSS: {parts}{growth}")

    # Time: the floors and fleet over the same files, warm in the page cache.
    d = dir_of(docs)
    nbytes = sum(e.stat().st_size for e in os.scandir(d))
    cat = f"find '{d}' -maxdepth 1 -name '*.json' -print0 | xargs -0 cat > /dev/null"
    run(cat, shell=True)  # warm the page cache
    cat_s, _, _, cat_cpu = run(cat, shell=True)
    cores = os.cpu_count() or 1
    par_s, _, par_out, par_cpu = run([FLOOR, d], capture=True)
    one_s, _, _, one_cpu = run([FLOOR, d, "--threads", "1"], capture=True)
    threads = par_out.strip().rsplit(", ", 1)[-1].split()[0] if par_out.strip() else str(cores)
    fleet_s, fleet_rss, lines[docs], fleet_cpu = fleet(d)
    note = "" if fleet_s < TARGET_S else f" (over the {TARGET_S:.0f} s target)"
    print(f"fleet {docs} docs ({mb(nbytes)}): {fleet_s:.1f} s{note}; cat floor {cat_s:.1f} s; "
          f"Value parse floor {par_s:.1f} s ({threads} threads), {one_s:.1f} s (1 thread); "
          f"fleet / Value floor {fleet_s / par_s:.2f} ({fleet_s / one_s:.2f} of the 1-thread floor); "
          f"fleet peak RSS {mb(fleet_rss)}")
    # CPU time (user + system) beside the wall clock: steadier on a busy machine.
    print(f"  CPU time (user + sys): fleet {fleet_cpu:.1f} s; cat {cat_cpu:.1f} s (find, xargs, cat); "
          f"Value parse {par_cpu:.1f} s ({threads} threads), {one_cpu:.1f} s (1 thread); "
          f"fleet / 1-thread Value floor {fleet_cpu / one_cpu:.2f}; {cores} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} after")
    print("fleet text: " + ", ".join(f"{n} docs {lines[n]} lines" for n in sorted(lines)))

    # The Parquet export of the smallest and the second-smallest counts: its
    # peak memory is a row group's (tidy::ROW_GROUP rows), whatever the
    # number of documents.
    sizes = sorted(set(mem))[:2]
    parts = []
    for n in sizes:
        src = dir_of(n)
        out = os.path.join(work, f"export{n}.parquet")
        files = sorted(os.path.join(src, e) for e in os.listdir(src) if e.endswith(".json"))
        secs, rss, _, cpu = run([REPORT, "export", "--format", "parquet", "-o", out] + files)
        parts.append(f"{n} docs {secs:.1f} s ({cpu:.1f} s CPU), peak RSS {mb(rss)}, "
                     f"{mb(os.path.getsize(out))} written")
    print("export --format parquet: " + "; ".join(parts))

    # The same export on one core (RAYON_NUM_THREADS=1) beside every core:
    # the files the same byte for byte, the ratio of the times.
    n = sizes[0]
    src = dir_of(n)
    files = sorted(os.path.join(src, e) for e in os.listdir(src) if e.endswith(".json"))
    times = {1: [], cores: []}
    for r in range(ROUNDS):
        for t in (1, cores) if r % 2 == 0 else (cores, 1):
            out = os.path.join(work, f"threads{t}.parquet")
            os.environ["RAYON_NUM_THREADS"] = str(t)
            try:
                secs, _, _, _ = run([REPORT, "export", "--format", "parquet", "-o", out] + files)
            finally:
                del os.environ["RAYON_NUM_THREADS"]
            times[t].append(secs)
    same = all(open(os.path.join(work, f"threads1{x}.parquet"), "rb").read()
               == open(os.path.join(work, f"threads{cores}{x}.parquet"), "rb").read() for x in ("", ".runs"))
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    print(f"export of {n} docs on {cores} cores / on 1: {med[cores]:.2f} s / {med[1]:.2f} s = "
          f"{med[cores] / med[1]:.2f} ({med[cores] / n * 1e3:.1f} ms a document; {ROUNDS} alternating rounds); "
          f"files {'the same byte for byte' if same else 'DIFFER'}")

    # fleet over an export beside fleet over the documents it came from:
    # the same report (checked), ROUNDS alternating rounds, the ratio of
    # the median times (export / documents; at most 1 is the goal).
    for n in sizes:
        src, exp = dir_of(n), os.path.join(work, f"export{n}.parquet")
        times = {"json": [], "parquet": []}
        texts = {}
        for r in range(ROUNDS):
            order = [("json", src), ("parquet", exp)]
            for side, path in order if r % 2 == 0 else reversed(order):
                secs, _, out, _ = run([REPORT, "fleet", path], capture=True)
                times[side].append(secs)
                texts[side] = out
        if texts["json"] != texts["parquet"]:
            sys.exit(f"fleet bench: fleet over {exp} differs from fleet over {src}")
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        ratios = sorted(p / j for p, j in zip(times["parquet"], times["json"]))
        print(f"fleet over the export of {n} docs / over their JSON: {med['parquet']:.2f} s / "
              f"{med['json']:.2f} s = {med['parquet'] / med['json']:.2f} "
              f"(rounds {ratios[0]:.2f}-{ratios[-1]:.2f}, {ROUNDS} alternating; the same report)")


if __name__ == "__main__":
    main()
