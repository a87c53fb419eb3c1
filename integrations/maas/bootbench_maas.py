"""bootbench under MAAS: one disk, one `bootbench-init run`, MAAS's result file.

The testing scripts `bootbench-acceptance` and `bootbench-burn-in` are thin
wrappers around `main()`: MAAS downloads the tarball named in their
`packages: {url: ...}`, unpacks it into $DOWNLOAD_PATH (this module, the
static `bootbench-init`, the default configs), and runs the script once per
disk with the disk's path (the `storage` parameter's `{path}`).

Every judgement is bootbench-init's: this module only runs it and reads its
document back. It maps the disk's verdict to MAAS's status (PASS passed,
WARN degraded, FAIL failed) and writes $RESULT_PATH as the YAML that MAAS's
`ScriptResult.read_results` accepts: `status` one of passed, failed,
degraded, timedout, skipped; `results` a mapping of strings to strings,
numbers, booleans or lists of them. Nothing here needs more than Python's
standard library (MAAS's ephemeral image has PyYAML, which is used when
present; otherwise the file is JSON, which YAML reads as well).
"""

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.parse
import urllib.request

# The result keys the scripts declare in their `results:` metadata, and
# where each comes from. Bandwidths in MB/s (10^6 bytes/s), as bootbench
# prints them.
FIGURES = {
    "seq1m_q8t1_read": ("seq1m_q8t1_read", "read_bytes_per_sec"),
    "seq1m_q1t1_read": ("seq1m_q1t1_read", "read_bytes_per_sec"),
    "rnd4k_q32t1_read": ("rnd4k_q32t1_read", "read_bytes_per_sec"),
    "rnd4k_q32t1_read_iops": ("rnd4k_q32t1_read", "read_iops"),
    "rnd4k_q1t1_read": ("rnd4k_q1t1_read", "read_bytes_per_sec"),
    "rnd4k_q1t1_read_iops": ("rnd4k_q1t1_read", "read_iops"),
}
COMMON_KEYS = ("verdict", "first_reason", "reasons", "document")
BURN_IN_KEYS = ("burn_in_end", "burn_in_bad_blocks", "burn_in_mismatched_blocks", "burn_in_verified_bytes")
STATUS = {"pass": "passed", "warn": "degraded", "fail": "failed"}
# How many of a disk's reasons go into `results` (all are in the document).
MAX_REASONS = 10
# After $RUNTIME, bootbench-init is asked to stop (SIGINT: the running test
# ends after its requests in flight and the document is written); MAAS
# itself kills the script 5 minutes after the runtime.
STOP_GRACE_S = 240


def result_keys(kind):
    """Every key the script of `kind` may write under `results`."""
    keys = list(COMMON_KEYS) + list(FIGURES)
    if kind == "burn-in":
        keys += list(BURN_IN_KEYS)
    return keys


def write_result(path, status, results):
    """$RESULT_PATH: `status` and `results`, as MAAS reads them."""
    doc = {"status": status, "results": results}
    try:
        import yaml  # MAAS's ephemeral image has it

        text = yaml.safe_dump(doc, default_flow_style=False, sort_keys=True)
    except ImportError:
        text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    with open(path, "w") as f:
        f.write(text)


def parse_args(argv):
    """`DEVICE [--runtime=SECONDS] [--config=CONFIG]`, as MAAS passes them."""
    import argparse

    p = argparse.ArgumentParser(description="bootbench on one disk, for MAAS")
    p.add_argument("device", help="the disk MAAS gives ({path})")
    p.add_argument("--runtime", type=int, default=0, help="seconds; 0: no bound")
    p.add_argument("--config", default=None, help="a path (relative: to $DOWNLOAD_PATH) or an http(s) URL; {serial} is the disk's serial")
    return p.parse_args(argv)


def disk_serial(binary, device):
    """The disk's serial as bootbench-init sees it (for `{serial}` in --config)."""
    out = subprocess.run([binary, "list", "--json", "--all"], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None
    real = os.path.realpath(device)
    for t in json.loads(out.stdout):
        if os.path.realpath(t.get("path") or "") == real:
            return t.get("serial")
    return None


def fetch_config(spec, download, out_dir, serial):
    """The config file to run: `spec` with `{serial}` filled in, fetched
    into `out_dir` when it is a URL (the query is never printed)."""
    if "{serial}" in spec:
        if not serial:
            raise ValueError("the config names {serial} but the disk has none")
        # Percent-encoded: a serial with a '/' or a space names no other file.
        spec = spec.replace("{serial}", urllib.parse.quote(serial, safe=""))
    if spec.startswith(("http://", "https://")):
        dest = os.path.join(out_dir, "bootbench-config.json")
        with urllib.request.urlopen(spec, timeout=60) as r, open(dest, "wb") as f:
            f.write(r.read())
        return dest
    return spec if os.path.isabs(spec) else os.path.join(download, spec)


def doc_path(out_dir, device):
    """A fresh file name for the document beside MAAS's output files."""
    base = os.path.join(out_dir, "bootbench-%s" % os.path.basename(device))
    path, n = base + ".json", 1
    while os.path.exists(path):
        path, n = "%s.%d.json" % (base, n), n + 1
    return path


def run_bootbench(cmd, runtime):
    """Run `cmd` with stdout and stderr passed through (MAAS captures them);
    past `runtime` seconds ask it to stop, then wait. Its exit status and
    the last line it printed on stderr (a refused config's one line)."""
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, errors="replace")
    last = []

    def copy():
        for line in proc.stderr:
            sys.stderr.write(line)
            sys.stderr.flush()
            if line.strip():
                last[:] = [line.strip()]

    t = threading.Thread(target=copy, daemon=True)
    t.start()
    try:
        code = proc.wait(timeout=runtime or None)
    except subprocess.TimeoutExpired:
        print("bootbench-maas: the runtime (%d s) is over: stopping bootbench-init" % runtime, flush=True)
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    t.join(timeout=5)
    return code, (last[0] if last else "")


def target_verdict(doc, device):
    """This disk's entry in the document's `acceptance.targets`."""
    real = os.path.realpath(device)
    for t in (doc.get("acceptance") or {}).get("targets") or []:
        if os.path.realpath(t.get("target") or "") == real:
            return t
    return None


def figures(doc, device):
    """The declared figures the document holds for this disk."""
    real = os.path.realpath(device)
    by_name = {t["name"]: t for t in doc.get("tests") or [] if os.path.realpath(t.get("target") or "") == real}
    out = {}
    for key, (test, figure) in FIGURES.items():
        value = ((by_name.get(test) or {}).get("summary") or {}).get(figure)
        if value is None:
            continue
        out[key] = round(value / 1e6, 1) if figure.endswith("bytes_per_sec") else int(round(value))
    return out


def burn_in(doc, device):
    """The disk's burn-in record, as result keys."""
    real = os.path.realpath(device)
    for t in doc.get("targets") or []:
        if os.path.realpath(t.get("path") or "") == real and t.get("burn_in"):
            b = t["burn_in"]
            return {
                "burn_in_end": b["end"],
                "burn_in_bad_blocks": len(b["unwritable_lbas"]) + len(b["unreadable_lbas"]),
                "burn_in_mismatched_blocks": len(b["mismatched_lbas"]),
                "burn_in_verified_bytes": sum(p["verified_bytes"] for p in b["passes"]),
            }
    return {}


def judge(doc, device, kind):
    """MAAS's status and results from a document."""
    t = target_verdict(doc, device)
    run = doc.get("run") or {}
    if t is None:
        why = run.get("error") or "the document has no verdict for %s" % device
        return "failed", {"verdict": "none", "first_reason": why, "reasons": [why]}
    verdict = t["verdict"]
    reasons = [c["message"] for c in t.get("checks") or [] if c.get("verdict") != "pass"]
    # The first reason is that of the first check that decided the verdict.
    decided = [c["message"] for c in t.get("checks") or [] if c.get("verdict") == verdict and verdict != "pass"]
    results = {"verdict": verdict.upper(), "reasons": reasons[:MAX_REASONS]}
    if decided:
        results["first_reason"] = decided[0]
    results.update(figures(doc, device))
    if kind == "burn-in":
        results.update(burn_in(doc, device))
    return STATUS[verdict], results


def main(kind, argv=None):
    """Run one disk; write $RESULT_PATH; exit 1 when the disk failed or
    bootbench-init could not judge it, else 0."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    download = os.environ.get("DOWNLOAD_PATH") or os.path.dirname(os.path.abspath(__file__))
    stdout_path = os.environ.get("OUTPUT_STDOUT_PATH")
    out_dir = os.path.dirname(stdout_path) if stdout_path else os.getcwd()
    result_path = os.environ.get("RESULT_PATH")
    binary = os.path.join(download, "bootbench-init")
    default = "bootbench-acceptance.json" if kind == "acceptance" else "bootbench-burn-in.json"

    def fail(why):
        print("bootbench-maas: %s" % why, file=sys.stderr, flush=True)
        if result_path:
            write_result(result_path, "failed", {"verdict": "none", "first_reason": why, "reasons": [why]})
        return 1

    if not os.access(binary, os.X_OK):
        return fail("no bootbench-init in $DOWNLOAD_PATH (%s): is the tarball in the script's packages?" % download)
    spec = args.config or default
    try:
        serial = disk_serial(binary, args.device) if "{serial}" in spec else None
        config = fetch_config(spec, download, out_dir, serial)
    except (OSError, ValueError) as e:
        return fail("config %s: %s" % (spec.split("?")[0], e))
    if kind == "burn-in":
        # The burn-in script's whole purpose: a config without `burn_in`
        # gets `{}` (badblocks' four patterns). Its `destructive` grant must
        # name this disk, by serial, or bootbench-init refuses the config.
        try:
            with open(config) as f:
                cfg = json.load(f)
        except (OSError, ValueError) as e:
            return fail("config %s: %s" % (config, e))
        if "burn_in" not in cfg:
            cfg["burn_in"] = {}
            # Beside the original where it can be (a baseline file is
            # relative to the config's directory), else with the output.
            for d in (os.path.dirname(config), out_dir):
                path = os.path.join(d, "bootbench-burn-in-%d.json" % os.getpid())
                try:
                    with open(path, "x") as f:
                        json.dump(cfg, f, indent=1)
                    config = path
                    break
                except OSError:
                    continue
            else:
                return fail("could not write the config with burn_in added")

    out = doc_path(out_dir, args.device)
    cmd = [binary, "run", "--config", config, "--target", args.device, "--out", out]
    print("bootbench-maas: %s" % " ".join(cmd), flush=True)
    code, last = run_bootbench(cmd, args.runtime)
    if not os.path.exists(out):
        return fail("bootbench-init exited %d and wrote no document: %s" % (code, last or "see its output"))
    with open(out) as f:
        doc = json.load(f)
    status, results = judge(doc, args.device, kind)
    results["document"] = out
    if result_path:
        write_result(result_path, status, results)
    print("bootbench-maas: %s (%s); document %s" % (status, results.get("first_reason", "no reason"), out), flush=True)
    # As MAAS's own scripts: a failure exits non-zero (the YAML's status
    # decides what MAAS shows either way).
    return 1 if status == "failed" else 0
