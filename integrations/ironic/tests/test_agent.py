"""bootbench-ironic inside the real Ironic Python Agent (PyPI's, installed
by .ci/deps into /opt/bootbench/ipa-venv), on loop devices.

Run by init/tests/integrations.rs (so by `make test`) with that venv's
python3, as root; $BOOTBENCH_INIT names the bootbench-init to run.

The package is installed as an operator installs it (pip, from
integrations/ironic) into a directory of its own put on sys.path, so the
agent's own stevedore lookup (`hardware._get_extensions()`) finds it by its
entry point. The managers are then probed as `get_managers_detail` probes
them, less `initialize()`: the generic manager's assembles md arrays, loads
IPMI modules and waits for disks on this host. The node's disks are loop
devices, which the generic manager's lsblk query (TYPE disk) leaves out, so
a manager of this test lists them (a `GenericHardwareManager` whose
`list_block_devices` returns them; the skip list is the generic one's);
the steps are run through the agent's `CleanExtension` and
`ServiceExtension`, as the agent's API runs them.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
SIZE = 64 << 20

from ironic_python_agent.cmd import agent as _agent_cmd  # noqa: E402,F401  (registers the agent's options)
from ironic_python_agent import errors, hardware  # noqa: E402
from ironic_python_agent.extensions import clean, service  # noqa: E402

LOOPS = []
FILES = []
TMP = None


def losetup(path):
    return subprocess.run(["losetup", "-f", "--show", path], check=True, capture_output=True, text=True).stdout.strip()


def digest(dev):
    h = hashlib.sha256()
    with open(dev, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class LoopDisks(hardware.GenericHardwareManager):
    """This test's machine: its disks are the loop devices."""

    HARDWARE_MANAGER_NAME = "LoopDisks"

    def evaluate_hardware_support(self):
        return hardware.HardwareSupport.SERVICE_PROVIDER

    def wait_for_disks(self):
        """The loop devices are there (the generic one waits for a root
        device the loop devices' size may not suit)."""

    def list_block_devices(self, include_partitions=False, all_serial_and_wwn=False):
        return [
            hardware.BlockDevice(name=p, model="loop", size=SIZE, rotational=False, serial=None) for p in LOOPS
        ]


def setUpModule():
    global TMP
    TMP = tempfile.mkdtemp(prefix="bootbench-ironic-")
    site = os.path.join(TMP, "site")
    # A copy, so the build leaves nothing in the source tree.
    src = shutil.copytree(PACKAGE, os.path.join(TMP, "src"), ignore=shutil.ignore_patterns("tests", "__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--target", site, src],
        check=True,
    )
    sys.path.insert(0, site)
    os.environ["BOOTBENCH_OUT_DIR"] = os.path.join(TMP, "out")
    for i in range(2):
        f = "/dev/shm/bootbench-ironic-%d-%d.img" % (os.getpid(), i)
        with open(f, "wb") as w:
            w.write(os.urandom(SIZE))
        FILES.append(f)
        LOOPS.append(losetup(f))
    # The agent's own lookup, then its probe, less initialize().
    managers = []
    for ext in hardware._get_extensions():
        support = ext.obj.evaluate_hardware_support()
        if support > 0:
            managers.append({"name": ext.obj.__class__.__name__, "manager": ext.obj, "support": support})
    loop = LoopDisks()
    managers.append({"name": "LoopDisks", "manager": loop, "support": loop.evaluate_hardware_support()})
    hardware._global_managers = sorted(managers, key=lambda m: -m["support"])


def tearDownModule():
    for dev in LOOPS:
        subprocess.run(["losetup", "-d", dev], check=False)
    for f in FILES:
        os.unlink(f)
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


def quick(**acceptance):
    cfg = {
        "tests": [
            {"workload": "seq_read", "name": "seq1m_q8t1_read", "bs": "1M", "iodepth": 8, "runtime": "200ms"},
            {"workload": "rand_read", "name": "rnd4k_q1t1_read", "bs": "4k", "iodepth": 1, "runtime": "200ms"},
        ]
    }
    if acceptance:
        cfg["acceptance"] = acceptance
    return cfg


NODE = {"uuid": "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "properties": {}, "driver_info": {}, "instance_info": {}}


def run_step(ext, name, args, node=NODE):
    """A step through the agent's extension, as its API runs it; the
    finished command."""
    method = ext.execute_clean_step if isinstance(ext, clean.CleanExtension) else ext.execute_service_step
    cmd = method(step={"step": name, "interface": "deploy", "priority": 0, "args": args}, node=node, ports=[])
    cmd.join()
    return cmd


class EntryPoint(unittest.TestCase):
    def test_the_agent_finds_the_manager_by_its_entry_point(self):
        found = [e for e in hardware._get_extensions() if e.name == "bootbench"]
        self.assertEqual(len(found), 1, "entry point 'bootbench' in ironic_python_agent.hardware_managers")
        self.assertEqual(found[0].entry_point_target, "bootbench_ironic.manager:BootbenchHardwareManager")
        self.assertIn("BootbenchHardwareManager", [m["name"] for m in hardware._global_managers])

    def test_support_only_where_bootbench_init_is(self):
        mgr = [m["manager"] for m in hardware._global_managers if m["name"] == "BootbenchHardwareManager"][0]
        self.assertEqual(mgr.evaluate_hardware_support(), hardware.HardwareSupport.SERVICE_PROVIDER)
        saved = (os.environ["BOOTBENCH_INIT"], os.environ.get("PATH", ""))
        try:
            os.environ["BOOTBENCH_INIT"] = ""
            os.environ["PATH"] = TMP  # no bootbench-init there
            self.assertEqual(mgr.evaluate_hardware_support(), hardware.HardwareSupport.NONE)
            os.environ["BOOTBENCH_INIT"] = os.path.join(TMP, "absent", "bootbench-init")
            self.assertEqual(mgr.evaluate_hardware_support(), hardware.HardwareSupport.NONE)
        finally:
            os.environ["BOOTBENCH_INIT"], os.environ["PATH"] = saved


class Steps(unittest.TestCase):
    def check_steps(self, steps):
        # The agent's deduplicated steps, by the manager that won each.
        ours = {s["step"]: s for s in steps.get("BootbenchHardwareManager", [])}
        self.assertEqual(ours.keys() & {s["step"] for m, v in steps.items() if m != "BootbenchHardwareManager" for s in v}, set())
        self.assertEqual(sorted(ours), ["bootbench_acceptance", "bootbench_burn_in"])
        for s in ours.values():
            self.assertEqual(s["interface"], "deploy", s)
            self.assertEqual(s["priority"], 0, s)
            self.assertIs(s["abortable"], True, s)
            self.assertIs(s["reboot_requested"], False, s)
            self.assertEqual(sorted(s["argsinfo"]), ["config", "metrics_url", "results_url"], s)
            for a in s["argsinfo"].values():
                self.assertIs(a["required"], False)
                self.assertTrue(a["description"])

    def test_clean_steps_with_argsinfo(self):
        res = clean.CleanExtension().get_clean_steps(node=NODE, ports=[]).command_result
        self.check_steps(res["clean_steps"])
        self.assertEqual(res["hardware_manager_version"]["BootbenchHardwareManager"], "1.0")

    def test_service_steps_with_argsinfo(self):
        res = service.ServiceExtension().get_service_steps(node=NODE, ports=[]).command_result
        self.check_steps(res["service_steps"])


class Acceptance(unittest.TestCase):
    def test_verdicts_and_figures_of_every_disk(self):
        cmd = run_step(clean.CleanExtension(), "bootbench_acceptance", {"config": quick()})
        self.assertEqual(cmd.command_status, "SUCCEEDED", cmd.command_error)
        res = cmd.command_result["clean_result"]
        self.assertEqual(res["verdict"], "PASS", res["disks"])
        self.assertEqual(sorted(d["path"] for d in res["disks"]), sorted(LOOPS))
        for d in res["disks"]:
            self.assertEqual(d["verdict"], "PASS")
            self.assertGreater(d["figures"]["seq1m_q8t1_read"]["read_bytes_per_sec"], 0)
            self.assertGreater(d["figures"]["rnd4k_q1t1_read"]["read_iops"], 0)
        with open(res["document"]) as f:
            self.assertEqual(json.load(f)["acceptance"]["verdict"], "pass")

    def test_the_document_goes_to_results_url(self):
        import http.server
        import threading

        got = {}

        class Put(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):
                got["path"] = self.path
                got["body"] = self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(201)
                self.end_headers()

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Put)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            url = "http://127.0.0.1:%d/results/node1.json?sig=SECRET" % srv.server_address[1]
            cmd = run_step(clean.CleanExtension(), "bootbench_acceptance", {"config": quick(), "results_url": url})
        finally:
            srv.shutdown()
        self.assertEqual(cmd.command_status, "SUCCEEDED", cmd.command_error)
        res = cmd.command_result["clean_result"]
        self.assertEqual(res["results_sent"], "http://127.0.0.1:%d/results/node1.json?..." % srv.server_address[1])
        self.assertEqual(got["path"], "/results/node1.json?sig=SECRET")
        with open(res["document"], "rb") as f:
            self.assertEqual(got["body"], f.read())
        self.assertNotIn("SECRET", json.dumps(res))

    def test_the_skip_list_is_the_agents(self):
        node = dict(NODE, properties={"skip_block_devices": [{"name": LOOPS[1]}]})
        cmd = run_step(service.ServiceExtension(), "bootbench_acceptance", {"config": quick()}, node=node)
        self.assertEqual(cmd.command_status, "SUCCEEDED", cmd.command_error)
        self.assertEqual([d["path"] for d in cmd.command_result["service_result"]["disks"]], [LOOPS[0]])

    def test_a_floor_no_disk_meets_fails_naming_every_disk(self):
        floor = {"limits": [{"test": "seq1m_q8t1_read", "min_read_bytes_per_sec": "1000TB/s"}]}
        cmd = run_step(clean.CleanExtension(), "bootbench_acceptance", {"config": quick(**floor)})
        self.assertEqual(cmd.command_status, "FAILED")
        self.assertIsInstance(cmd.command_error, errors.CleaningError)
        msg = str(cmd.command_error)
        self.assertIn("2 of 2 disk(s) failed", msg)
        for dev in LOOPS:
            self.assertIn("%s (serial -): seq1m_q8t1_read: read_bytes_per_sec" % dev, msg)
        self.assertIn("below the floor", msg)

    def test_a_warn_floor_passes_the_step(self):
        floor = {"limits": [{"test": "seq1m_q8t1_read", "min_read_bytes_per_sec": "1000TB/s", "verdict": "warn"}]}
        cmd = run_step(clean.CleanExtension(), "bootbench_acceptance", {"config": quick(**floor)})
        self.assertEqual(cmd.command_status, "SUCCEEDED", cmd.command_error)
        res = cmd.command_result["clean_result"]
        self.assertEqual([d["verdict"] for d in res["disks"]], ["WARN", "WARN"])
        self.assertIn("below the floor", res["disks"][0]["first_reason"])


class BurnIn(unittest.TestCase):
    def test_without_the_grant_nothing_is_written(self):
        before = [digest(d) for d in LOOPS]
        cmd = run_step(clean.CleanExtension(), "bootbench_burn_in", {"config": quick()})
        self.assertEqual(cmd.command_status, "FAILED")
        self.assertIsInstance(cmd.command_error, errors.CleaningError)
        self.assertIn("burn_in", str(cmd.command_error))
        self.assertEqual([digest(d) for d in LOOPS], before)

    def test_only_the_granted_disk_is_written(self):
        before = [digest(d) for d in LOOPS]
        cfg = quick()
        cfg["burn_in"] = {"patterns": ["0xaa"]}
        cfg["destructive"] = {
            "confirm": "I understand this destroys data",
            "targets": [LOOPS[1]],
            "allow_overwrite_signatures": True,
        }
        cmd = run_step(clean.CleanExtension(), "bootbench_burn_in", {"config": cfg})
        self.assertEqual(cmd.command_status, "SUCCEEDED", cmd.command_error)
        disks = {d["path"]: d for d in cmd.command_result["clean_result"]["disks"]}
        self.assertEqual(disks[LOOPS[1]]["burn_in"]["end"], "done")
        self.assertEqual(disks[LOOPS[1]]["burn_in"]["verified_bytes"], SIZE)
        self.assertNotIn("burn_in", disks[LOOPS[0]])
        after = [digest(d) for d in LOOPS]
        self.assertEqual(after[0], before[0], "the disk without the grant is unchanged")
        self.assertNotEqual(after[1], before[1], "the granted disk was burnt in")


class ContainerRecipe(unittest.TestCase):
    def test_the_agents_container_manager_takes_the_steps_file(self):
        from ironic_python_agent.hardware_managers import container
        from oslo_config import cfg

        path = os.path.join(PACKAGE, "container", "mysteps.yaml")
        cfg.CONF.set_override("container_steps_file", path, group="container")
        try:
            mgr = container.ContainerHardwareManager()
            steps = {s["step"]: s for s in mgr._get_steps(automatic=True)}
            step = steps["bootbench_acceptance_container"]
            self.assertEqual((step["interface"], step["priority"], step["abortable"]), ("deploy", 0, True))
            (entry,) = [s for s in mgr.STEPS if s["name"] == "bootbench_acceptance_container"]
            self.assertIn("--privileged", entry["run_options"])
            self.assertIn("/dev:/dev", entry["run_options"])
            self.assertIn("/var/log:/out", entry["run_options"])
        finally:
            cfg.CONF.clear_override("container_steps_file", group="container")
        with open(os.path.join(PACKAGE, "container", "Containerfile")) as f:
            lines = [x for x in f.read().splitlines() if x and not x.startswith("#")]
        self.assertEqual(lines[0], "FROM scratch")
        self.assertIn('"--out", "/out/bootbench.json"', lines[-1])


class DefaultConfig(unittest.TestCase):
    def test_the_same_default_as_maas(self):
        with open(os.path.join(PACKAGE, "bootbench_ironic", "default-config.json")) as a, open(
            os.path.join(PACKAGE, "..", "maas", "bootbench-acceptance.json")
        ) as b:
            self.assertEqual(a.read(), b.read())


if __name__ == "__main__":
    unittest.main(verbosity=2)
