"""bootbench as Ironic Python Agent clean and service steps.

A hardware manager the agent loads through its entry point group
`ironic_python_agent.hardware_managers`. It offers two steps, run only when
asked (priority 0), both abortable:

- `bootbench_acceptance`: `bootbench-init run` over the node's disks with the
  config given (default: the packaged one, read only);
- `bootbench_burn_in`: the same with the config's `burn_in` (`{}` added when
  it has none); bootbench-init writes only to the disks the config's
  `destructive` grant names, by serial, as everywhere, and refuses a config
  without one.

The disks are the agent's own list (`list_block_devices_check_skip_list`,
dispatched as every agent step does, so a node's `skip_block_devices` is
honoured). The step's result is the verdicts and figures; a disk that fails
acceptance fails the step with a `CleaningError` naming every failed disk
and its first reason. Every judgement is bootbench-init's.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse

from ironic_python_agent import errors
from ironic_python_agent import hardware
from oslo_log import log

LOG = log.getLogger(__name__)

# Where the binary is: $BOOTBENCH_INIT, else `bootbench-init` on PATH.
BINARY_ENV = "BOOTBENCH_INIT"
# Where the documents go: $BOOTBENCH_OUT_DIR, else /var/log/bootbench (the
# agent's log collection takes /var/log in a ramdisk without journald),
# else the temp directory. `results_url` sends the document off the node.
OUT_DIR_ENV = "BOOTBENCH_OUT_DIR"
DEFAULT_OUT_DIR = "/var/log/bootbench"

ARGSINFO = {
    "config": {
        "description": (
            "A bootbench config as a JSON object (README 'Config'; "
            "schema/bootbench.config-1.schema.json). Its targets are "
            "replaced by the node's disks. Default: the packaged "
            "default-config.json (CrystalDiskMark's four reads, health, "
            "errors and SMART self-test rules). A burn-in needs its "
            "'destructive' grant naming each disk by serial."
        ),
        "required": False,
    },
    "results_url": {
        "description": (
            "An http(s) URL (or a template with {machine}, {run}, {n}) "
            "bootbench-init sends the result document to with PUT when the "
            "run ends (the config's results_url; its query is never logged)."
        ),
        "required": False,
    },
    "metrics_url": {
        "description": (
            "A Prometheus Pushgateway's base URL (http://host:9091): "
            "bootbench-init pushes the run's state, progress, figures and "
            "verdicts there while it runs (the config's metrics_url)."
        ),
        "required": False,
    },
}


def _step(name):
    return {
        "step": name,
        "priority": 0,
        "interface": "deploy",
        "reboot_requested": False,
        "abortable": True,
        "argsinfo": ARGSINFO,
    }


def binary():
    """The bootbench-init to run, or None."""
    given = os.environ.get(BINARY_ENV)
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    return shutil.which("bootbench-init")


def default_config():
    """The packaged default config."""
    with open(os.path.join(os.path.dirname(__file__), "default-config.json")) as f:
        return json.load(f)


def _out_dir():
    for d in (os.environ.get(OUT_DIR_ENV), DEFAULT_OUT_DIR):
        if not d:
            continue
        try:
            os.makedirs(d, exist_ok=True)
            return d
        except OSError:
            continue
    return tempfile.gettempdir()


def _shown(url):
    """A URL without its user info and query, for the log."""
    u = urllib.parse.urlsplit(url)
    host = u.hostname or ""
    if u.port:
        host += ":%d" % u.port
    return urllib.parse.urlunsplit((u.scheme, host, u.path, "", ""))


def sent_to(stderr):
    """Where bootbench-init said it sent the document (the URL without its
    query), or None."""
    for line in stderr.splitlines():
        m = re.match(r"^bootbench-init: results sent to (\S+)$", line.strip())
        if m:
            return m.group(1)
    return None


def summarize(doc):
    """The step's result: the run's verdict, each disk's verdict, reasons,
    figures and burn-in, and the failed disks."""
    disks = []
    figures = {}
    for t in doc.get("tests") or []:
        s = {k: v for k, v in (t.get("summary") or {}).items() if isinstance(v, (int, float)) and v is not None}
        figures.setdefault(t.get("target"), {})[t["name"]] = s
    info = {t.get("path"): t for t in doc.get("targets") or []}
    for v in (doc.get("acceptance") or {}).get("targets") or []:
        path = v.get("target")
        verdict = v["verdict"]
        checks = v.get("checks") or []
        decided = [c["message"] for c in checks if c.get("verdict") == verdict and verdict != "pass"]
        d = {
            "path": path,
            "serial": v.get("serial"),
            "model": v.get("model"),
            "verdict": verdict.upper(),
            "first_reason": decided[0] if decided else None,
            "reasons": [c["message"] for c in checks if c.get("verdict") != "pass"],
            "figures": figures.get(path, {}),
        }
        b = (info.get(path) or {}).get("burn_in")
        if b:
            d["burn_in"] = {
                "end": b["end"],
                "error": b.get("error"),
                "bad_blocks": len(b["unwritable_lbas"]) + len(b["unreadable_lbas"]),
                "mismatched_blocks": len(b["mismatched_lbas"]),
                "verified_bytes": sum(p["verified_bytes"] for p in b["passes"]),
            }
        disks.append(d)
    verdict = (doc.get("acceptance") or {}).get("verdict")
    return {
        "verdict": verdict.upper() if verdict else None,
        "run_status": (doc.get("run") or {}).get("status"),
        "disks": disks,
    }


class BootbenchHardwareManager(hardware.HardwareManager):
    """bootbench_acceptance and bootbench_burn_in, where bootbench-init is."""

    HARDWARE_MANAGER_NAME = "BootbenchHardwareManager"
    HARDWARE_MANAGER_VERSION = "1.0"

    def evaluate_hardware_support(self):
        if binary() is None:
            LOG.info("bootbench-init is not in this ramdisk ($%s or PATH): bootbench steps unavailable", BINARY_ENV)
            return hardware.HardwareSupport.NONE
        return hardware.HardwareSupport.SERVICE_PROVIDER

    def get_clean_steps(self, node, ports):
        return [_step("bootbench_acceptance"), _step("bootbench_burn_in")]

    def get_service_steps(self, node, ports):
        return [_step("bootbench_acceptance"), _step("bootbench_burn_in")]

    def bootbench_acceptance(self, node, ports, config=None, results_url=None, metrics_url=None):
        """Judge the node's disks with bootbench (read only unless the
        config grants writes)."""
        return self._run("bootbench_acceptance", node, config, results_url, metrics_url, burn_in=False)

    def bootbench_burn_in(self, node, ports, config=None, results_url=None, metrics_url=None):
        """Burn the node's disks in with bootbench, then judge them."""
        return self._run("bootbench_burn_in", node, config, results_url, metrics_url, burn_in=True)

    def _run(self, step, node, config, results_url, metrics_url, burn_in):
        cfg = default_config() if config is None else config
        if isinstance(cfg, str):
            try:
                cfg = json.loads(cfg)
            except ValueError as e:
                raise errors.CleaningError("%s: config is not JSON: %s" % (step, e))
        if not isinstance(cfg, dict):
            raise errors.CleaningError("%s: config must be a JSON object" % step)
        cfg = dict(cfg)
        cfg.pop("targets", None)  # the node's disks, given with --target
        if burn_in and "burn_in" not in cfg:
            cfg["burn_in"] = {}
        # bootbench-init sends and pushes itself: nothing done twice here.
        if results_url:
            cfg["results_url"] = results_url
        if metrics_url:
            cfg["metrics_url"] = metrics_url

        devices = hardware.dispatch_to_managers("list_block_devices_check_skip_list", node)
        paths = [d.name for d in devices]
        if not paths:
            raise errors.CleaningError("%s: the agent lists no disks" % step)
        exe = binary()
        if exe is None:
            raise errors.CleaningError("%s: bootbench-init is not in this ramdisk" % step)

        # A directory of its own for each run: the document is never one
        # an earlier run left (bootbench-init refuses to overwrite anyway).
        run_dir = tempfile.mkdtemp(prefix="%s-%s-" % (step, time.strftime("%Y%m%dT%H%M%S")), dir=_out_dir())
        cfg_path = os.path.join(run_dir, "config.json")
        doc_path = os.path.join(run_dir, "bootbench.json")
        with open(cfg_path, "w") as f:
            json.dump(cfg, f, indent=1)
        cmd = [exe, "run", "--config", cfg_path, "--out", doc_path]
        for p in paths:
            cmd += ["--target", p]
        LOG.info("%s: %s", step, " ".join(cmd))
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", check=False)
        LOG.info("%s: bootbench-init exited %d:\n%s", step, proc.returncode, proc.stderr)
        if not os.path.exists(doc_path):
            last = [line for line in proc.stderr.splitlines() if line.strip()]
            raise errors.CleaningError(
                "%s: bootbench-init exited %d and wrote no document: %s"
                % (step, proc.returncode, last[-1] if last else "no output")
            )
        with open(doc_path, "rb") as f:
            body = f.read()
        result = summarize(json.loads(body))
        result["document"] = doc_path
        if results_url:
            result["results_sent"] = sent_to(proc.stderr)
            if result["results_sent"] is None:
                LOG.error("%s: document not sent to %s (bootbench-init's log above says why)", step, _shown(results_url))
        failed = [d for d in result["disks"] if d["verdict"] == "FAIL"]
        if failed or result["verdict"] is None:
            named = "; ".join(
                "%s (serial %s): %s" % (d["path"], d["serial"] or "-", d["first_reason"] or "failed") for d in failed
            )
            raise errors.CleaningError(
                "%s: %d of %d disk(s) failed acceptance: %s (document %s)"
                % (step, len(failed), len(result["disks"]), named or (result["run_status"] or "no verdict"), doc_path)
            )
        return result
