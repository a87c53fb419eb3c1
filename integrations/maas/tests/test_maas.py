"""The MAAS testing scripts, read and run as MAAS reads and runs them.

Run by init/tests/integrations.rs (so by `make test`) with the Python of
/opt/bootbench/ipa-venv (PyYAML, as MAAS uses to read both the metadata and
$RESULT_PATH), as root; $BOOTBENCH_INIT names the bootbench-init to pack.

What MAAS does is restated from its source (canonical/maas):
- the metadata: `ScriptForm._read_script` (src/maasserver/forms/script.py)
  finds the block, strips each line's `#`, `yaml.safe_load`s it, and the
  form, `translate_script_type`, `translate_hardware_type`,
  `translate_script_parallel` (src/maasserver/models/script.py),
  `clean_packages`, `_validate_results` and `ParametersForm.clean_parameters`
  (src/maasserver/forms/parameters.py) accept or refuse its values;
- the run: `maas_run_remote_scripts.py` unpacks each `packages: url` tarball
  into $DOWNLOAD_PATH, builds the command line with `parse_parameters`
  (`argument_format.format(**value).split()`; a runtime parameter's value
  is the script's timeout in seconds), sets OUTPUT_COMBINED_PATH,
  OUTPUT_STDOUT_PATH, OUTPUT_STDERR_PATH, RESULT_PATH, DOWNLOAD_PATH,
  RUNTIME and HAS_STARTED, and captures stdout and stderr to their files;
- the result: `ScriptResult.read_results` (src/maasserver/models/
  scriptresult.py) and `store_result`, where the YAML's `status` decides.
"""

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
MAAS = os.path.dirname(HERE)
SCRIPTS = ("bootbench-acceptance", "bootbench-burn-in")
sys.path.insert(0, MAAS)
import bootbench_maas  # noqa: E402

# ScriptForm.Meta.fields, plus the two keys _read_script pops itself.
FORM_FIELDS = {
    "name", "title", "description", "tags", "script_type", "hardware_type", "parallel", "packages", "timeout",
    "destructive", "script", "for_hardware", "may_reboot", "recommission", "apply_configured_networking",
}
SCRIPT_TYPES = {"test", "testing", "commission", "commissioning", "release", "deployment"}
HARDWARE_TYPES = {"node", "machine", "controller", "other", "generic", "cpu", "processor", "memory", "ram",
                  "storage", "disk", "ssd", "network", "net", "interface", "gpu", "graphics"}
PARALLEL = {"disabled", "none", "instance", "name", "any", "enabled"}
PARAMETER_TYPES = {"boolean", "choice", "interface", "password", "runtime", "storage", "string", "url"}
RESULT_STATUSES = {"passed", "failed", "degraded", "timedout", "skipped", None}
SIZE = 64 << 20


def read_metadata(text):
    """ScriptForm._read_script: the embedded YAML, or an error."""
    delim = re.compile(r"\s*#\s*-+\s*(Start|End) MAAS (?P<version>\d+\.\d+) script metadata\s+-+", re.I)
    lines = text.splitlines()
    assert lines and lines[0].startswith("#!/"), "Must start with shebang."
    found, content = None, ""
    for line in lines[1:]:
        m = delim.search(line)
        if m is not None:
            if found is None and m.group("version") == "1.0":
                found = m.group("version")
                continue
            elif found == m.group("version"):
                break
        elif found is not None and line.strip() != "":
            assert "#" in line, 'Missing "#" on YAML line.'
            content += "%s\n" % line.split("#", 1)[1]
    return yaml.safe_load(content)


def parse_duration(value):
    """Django's DurationField for the forms MAAS gets: seconds, or
    [DD ][HH:]MM:SS (django.utils.dateparse.standard_duration_re)."""
    m = re.fullmatch(r"(?:(\d+) (?:days?, )?)?(?:(?:(\d+):)?(\d+):)?(\d+)", str(value).strip())
    assert m, "Enter a valid duration: %r" % value
    d, h, mi, s = (int(x) if x else 0 for x in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + s


def check_metadata(meta):
    """What ScriptForm and ParametersForm refuse, as assertion errors.
    Returns the script's timeout in seconds."""
    meta = dict(meta)
    results = meta.pop("results", {})
    parameters = meta.pop("parameters", {})
    unknown = set(meta) - FORM_FIELDS
    assert not unknown, "keys MAAS ignores: %s" % sorted(unknown)
    name = meta["name"]
    assert name.lower() != "none" and not name.isdigit() and shlex.quote(name) == name, name
    tags = meta.get("tags")
    assert isinstance(tags, str) or (isinstance(tags, list) and all(isinstance(t, str) for t in tags)), tags
    assert str(meta["script_type"]) in SCRIPT_TYPES, meta["script_type"]
    assert str(meta["hardware_type"]).lower() in HARDWARE_TYPES, meta["hardware_type"]
    assert str(meta["parallel"]) in PARALLEL, meta["parallel"]
    assert isinstance(meta["destructive"], bool), meta["destructive"]
    for k in ("title", "description"):
        assert isinstance(meta[k], str), k
    packages = meta["packages"]
    assert set(packages) <= {"apt", "snap", "url"}, packages
    urls = packages["url"] if isinstance(packages["url"], list) else [packages["url"]]
    assert all(isinstance(u, str) for u in urls), urls
    timeout = parse_duration(meta["timeout"])
    # _validate_results
    assert isinstance(results, dict), "results must be a dictionary of dictionaries"
    for r in results.values():
        assert isinstance(r, dict) and "title" in r, r
        for k in ("title", "description"):
            assert k not in r or isinstance(r[k], str), r
    # ParametersForm.clean_parameters
    assert isinstance(parameters, dict)
    for pname, f in parameters.items():
        ptype = f.get("type")
        assert isinstance(pname, str) and isinstance(ptype, str), (pname, f)
        assert ptype in PARAMETER_TYPES, ptype
        for k in ("title", "description", "argument_format", "default"):
            assert f.get(k) is None or isinstance(f[k], str), (pname, k)
        assert isinstance(f.get("required", True), bool), pname
        assert not (ptype in ("storage", "interface", "url", "choice") and ("min" in f or "max" in f)), pname
        if ptype == "storage" and "argument_format" in f:
            assert any(x in f["argument_format"] for x in ("{input}", "{name}", "{path}", "{model}", "{serial}"))
        if ptype == "runtime":
            # _setup_input wants an int default, clean_parameters a string:
            # only no default (the script's timeout) passes both.
            assert "default" not in f, pname
    return timeout


def digest(dev):
    h = hashlib.sha256()
    with open(dev, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def losetup(path):
    return subprocess.run(["losetup", "-f", "--show", path], check=True, capture_output=True, text=True).stdout.strip()


class Metadata(unittest.TestCase):
    def test_each_script_is_one_maas_accepts(self):
        for s in SCRIPTS:
            with open(os.path.join(MAAS, s)) as f:
                text = f.read()
            self.assertRegex(text.splitlines()[0], r"^#!(/bin/bash|/usr/bin/env python3)$")
            meta = read_metadata(text)
            timeout = check_metadata(meta)
            self.assertEqual(meta["name"], s)
            self.assertIn(meta["script_type"], ("test", "testing"))
            self.assertEqual(meta["hardware_type"], "storage")
            self.assertEqual(meta["destructive"], s == "bootbench-burn-in")
            self.assertEqual(meta["parameters"]["storage"], {"type": "storage", "argument_format": "{path}"})
            self.assertEqual(meta["parameters"]["runtime"]["type"], "runtime")
            # The burn-in has none, as MAAS's badblocks-destructive.
            self.assertEqual(timeout > 0, s == "bootbench-acceptance", timeout)
            self.assertTrue(meta["packages"]["url"][0].endswith("/bootbench-maas.tar.gz"))
            # `results` names every key the script writes.
            kind = "acceptance" if s == "bootbench-acceptance" else "burn-in"
            self.assertEqual(sorted(meta["results"]), sorted(bootbench_maas.result_keys(kind)))

    def test_the_checks_refuse_what_maas_refuses(self):
        with open(os.path.join(MAAS, "bootbench-acceptance")) as f:
            good = read_metadata(f.read())
        for key, bad in [
            ("script_type", "benchmark"), ("hardware_type", "tape"), ("parallel", "always"),
            ("destructive", "no"), ("timeout", "half an hour"), ("name", "bootbench acceptance"),
            ("results", {"verdict": {"description": "no title"}}),
            ("parameters", {"storage": {"type": "storage", "argument_format": "{device}"}}),
            ("parameters", {"runtime": {"type": "runtime", "default": 600}}),
            ("frobnicate", True),
        ]:
            meta = dict(good, **{key: bad})
            with self.assertRaises(AssertionError, msg="%s: %r" % (key, bad)):
                check_metadata(meta)


class RunAsMaas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="bootbench-maas-")
        t = cls.tmp.name
        pack = os.path.join(t, "pack")
        subprocess.run(["bash", os.path.join(MAAS, "pack.sh"), os.environ["BOOTBENCH_INIT"], pack], check=True,
                       stdout=subprocess.DEVNULL)
        cls.pack = pack
        cls.file = "/dev/shm/bootbench-maas-%d.img" % os.getpid()
        with open(cls.file, "wb") as f:
            f.write(os.urandom(SIZE))
        cls.loop = losetup(cls.file)
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["losetup", "-d", cls.loop], check=False)
        os.unlink(cls.file)
        cls.tmp.cleanup()

    def run_script(self, script, config, runtime=None):
        """One run as maas_run_remote_scripts does it; the parsed result
        YAML, the script's exit status and its output directory."""
        RunAsMaas.n += 1
        base = os.path.join(self.tmp.name, "run%d" % self.n)
        scripts_dir, out_dir = os.path.join(base, "scripts"), os.path.join(base, "out", "%s.%d" % (script, self.n))
        download = os.path.join(scripts_dir, "downloads", script)
        os.makedirs(download)
        os.makedirs(out_dir)
        with tarfile.open(os.path.join(self.pack, "bootbench-maas.tar.gz"), "r|*") as tar:
            tar.extractall(download)
        if isinstance(config, str):
            cfg = config  # the parameter's value as given
        else:
            cfg = os.path.join(base, "config.json")
            with open(cfg, "w") as f:
                json.dump(config, f)
        with open(os.path.join(self.pack, script)) as f:
            meta = read_metadata(f.read())
        timeout = parse_duration(meta["timeout"])
        # A runtime parameter's value: the script's timeout in seconds
        # (`timeout.seconds`, ParametersForm._setup_input), or the user's.
        runtime = timeout % 86400 if runtime is None else runtime
        values = {"storage": {"path": self.loop, "input": self.loop}, "runtime": runtime, "config": cfg}
        argv = [os.path.join(self.pack, script)]
        for key, param in meta["parameters"].items():
            if param["type"] == "storage":
                argv += param.get("argument_format", "--storage={path}").format(**values[key]).split()
            else:
                argv += param.get("argument_format", "--%s={input}" % key).format(input=values[key]).split()
        env = dict(os.environ)
        env.update({
            "OUTPUT_COMBINED_PATH": os.path.join(out_dir, script),
            "OUTPUT_STDOUT_PATH": os.path.join(out_dir, script + ".out"),
            "OUTPUT_STDERR_PATH": os.path.join(out_dir, script + ".err"),
            "RESULT_PATH": os.path.join(out_dir, script + ".yaml"),
            "DOWNLOAD_PATH": download,
            "RUNTIME": str(runtime),
            "HAS_STARTED": "False",
        })
        # The script's python3 is the first on PATH, as `env` finds it.
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        with open(env["OUTPUT_STDOUT_PATH"], "wb") as out, open(env["OUTPUT_STDERR_PATH"], "wb") as err:
            code = subprocess.run(argv, stdout=out, stderr=err, env=env, timeout=600).returncode
        with open(env["RESULT_PATH"]) as f:
            result = yaml.safe_load(f)
        self.check_result(result, meta)
        return result, code, out_dir

    def check_result(self, result, meta):
        """ScriptResult.read_results, and only declared keys."""
        self.assertIsInstance(result, dict)
        self.assertIn(result.get("status"), RESULT_STATUSES)
        self.assertIsInstance(result["results"], dict)
        for k, v in result["results"].items():
            self.assertIsInstance(k, str)
            for i in v if isinstance(v, list) else [v]:
                self.assertIn(type(i), (str, float, int, bool), (k, v))
            self.assertIn(k, meta["results"], "a key the script does not declare")

    def quick(self, **acceptance):
        cfg = {"tests": [
            {"workload": "seq_read", "name": "seq1m_q8t1_read", "bs": "1M", "iodepth": 8, "runtime": "200ms"},
            {"workload": "rand_read", "name": "rnd4k_q1t1_read", "bs": "4k", "iodepth": 1, "runtime": "200ms"},
        ]}
        if acceptance:
            cfg["acceptance"] = acceptance
        return cfg

    def test_pass_is_passed(self):
        result, code, out_dir = self.run_script("bootbench-acceptance", self.quick())
        self.assertEqual(result["status"], "passed")
        self.assertEqual(code, 0)
        r = result["results"]
        self.assertEqual(r["verdict"], "PASS")
        self.assertNotIn("first_reason", r)
        self.assertGreater(r["seq1m_q8t1_read"], 0)
        self.assertGreater(r["rnd4k_q1t1_read_iops"], 0)
        # The document, beside $OUTPUT_STDOUT_PATH.
        self.assertEqual(os.path.dirname(r["document"]), out_dir)
        with open(r["document"]) as f:
            self.assertEqual(json.load(f)["acceptance"]["verdict"], "pass")

    def test_warn_is_degraded(self):
        warn = {"limits": [{"test": "seq1m_q8t1_read", "min_read_bytes_per_sec": "1000TB/s", "verdict": "warn"}]}
        result, code, _ = self.run_script("bootbench-acceptance", self.quick(**warn))
        self.assertEqual(result["status"], "degraded")
        self.assertEqual(code, 0)
        self.assertEqual(result["results"]["verdict"], "WARN")
        self.assertRegex(result["results"]["first_reason"], r"^seq1m_q8t1_read: read_bytes_per_sec .* below the floor")

    def test_fail_is_failed(self):
        floor = {"limits": [{"test": "seq1m_q8t1_read", "min_read_bytes_per_sec": "1000TB/s"}]}
        result, code, _ = self.run_script("bootbench-acceptance", self.quick(**floor))
        self.assertEqual(result["status"], "failed")
        self.assertNotEqual(code, 0)
        self.assertEqual(result["results"]["verdict"], "FAIL")
        self.assertRegex(result["results"]["first_reason"], r"^seq1m_q8t1_read: read_bytes_per_sec .* below the floor")
        self.assertEqual(result["results"]["reasons"], [result["results"]["first_reason"]])

    def test_past_the_runtime_bootbench_stops_and_the_document_says_so(self):
        cfg = {"tests": [{"workload": "seq_read", "name": "seq1m_q8t1_read", "bs": "1M", "runtime": "60s"}]}
        result, code, _ = self.run_script("bootbench-acceptance", cfg, runtime=2)
        self.assertEqual(result["status"], "degraded", result)
        self.assertEqual(result["results"]["verdict"], "WARN")
        with open(result["results"]["document"]) as f:
            self.assertEqual(json.load(f)["run"]["status"], "interrupted")

    def test_a_refused_config_is_failed_with_why(self):
        result, code, _ = self.run_script("bootbench-acceptance", {"tests": [{"workload": "seq_read", "bs": "3"}]})
        self.assertEqual(result["status"], "failed")
        self.assertNotEqual(code, 0)
        self.assertIn("bs", result["results"]["first_reason"])

    def test_serial_in_the_config_of_a_disk_without_one_is_failed(self):
        result, code, _ = self.run_script("bootbench-burn-in", "https://cfg.example.com/{serial}.json")
        self.assertEqual(result["status"], "failed")
        self.assertIn("the config names {serial} but the disk has none", result["results"]["first_reason"])

    def test_burn_in_without_the_grant_writes_nothing(self):
        before = digest(self.loop)
        result, code, _ = self.run_script("bootbench-burn-in", self.quick())
        self.assertEqual(result["status"], "failed")
        self.assertIn('no "destructive" section', result["results"]["first_reason"])
        self.assertEqual(digest(self.loop), before)

    def test_burn_in_with_the_grant(self):
        cfg = self.quick()
        cfg["burn_in"] = {"patterns": ["0xaa"]}
        cfg["destructive"] = {"confirm": "I understand this destroys data", "targets": [self.loop],
                              "allow_overwrite_signatures": True}
        before = digest(self.loop)
        result, code, _ = self.run_script("bootbench-burn-in", cfg)
        self.assertEqual(result["status"], "passed", result)
        r = result["results"]
        self.assertEqual((r["burn_in_end"], r["burn_in_bad_blocks"], r["burn_in_mismatched_blocks"]), ("done", 0, 0))
        self.assertEqual(r["burn_in_verified_bytes"], SIZE)
        self.assertNotEqual(digest(self.loop), before)


class Tarball(unittest.TestCase):
    def test_reproducible_and_flat(self):
        with tempfile.TemporaryDirectory() as t:
            for d in ("a", "b"):
                subprocess.run(["bash", os.path.join(MAAS, "pack.sh"), os.environ["BOOTBENCH_INIT"], os.path.join(t, d)],
                               check=True, stdout=subprocess.DEVNULL)
            a, b = (digest(os.path.join(t, d, "bootbench-maas.tar.gz")) for d in ("a", "b"))
            self.assertEqual(a, b)
            with tarfile.open(os.path.join(t, "a", "bootbench-maas.tar.gz")) as tar:
                self.assertEqual(sorted(tar.getnames()), sorted([
                    "bootbench-init", "bootbench_maas.py", "bootbench-acceptance.json", "bootbench-burn-in.json"]))
            # The default configs are ones bootbench-init accepts.
            for c in ("bootbench-acceptance.json",):
                subprocess.run([os.environ["BOOTBENCH_INIT"], "validate", os.path.join(MAAS, c), "--simulate",
                                "--target", "sim:ssd:2G"], check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    unittest.main(verbosity=2)
