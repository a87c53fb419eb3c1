"""bootbench's metrics, alert rules and dashboard against the real components.

Run by init/tests/integrations.rs (so by `make test`) with Debian's python3
(PyYAML from python3-yaml) or the Python of /opt/bootbench/ipa-venv, as root
(losetup); $BOOTBENCH_INIT names the bootbench-init to run. Needs Debian's
`prometheus`, `prometheus-pushgateway` and `promtool` (.ci/deps).

- The rules: `promtool check rules`, `promtool test rules` on
  alerts-test.yml, and the same unit tests on copies of the rules each
  broken in one way (they must fail); `promtool check config` on the
  example prometheus.yml.
- The dashboard: valid JSON, every panel and target on `${datasource}`,
  every target with an expr, each panel's unit the one its metrics are in,
  the provisioning files pointing where docs/fleets.md installs it.
- Live: a Pushgateway and a Prometheus of our own (127.0.0.1, free ports,
  temp dirs, scraping every second with honor_labels, the rules loaded),
  and `bootbench-init run` on two loop devices pushing every second: the
  state and progress mid-run, the end state, verdicts and figures against
  the document, `promtool check metrics` on what was pushed, every
  dashboard query answered by Prometheus, and BootbenchDiskFailedAcceptance
  firing for the disk a floor fails (and no alert for the one that passes).
- Live, again: a run killed mid-way raises BootbenchMachineStoppedPushing
  after 5 intervals (none while it pushed); the machine's next run ends it,
  and interrupted (SIGINT) that run pushes its end and raises none.
"""

import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
PROM = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(PROM))
GRAFANA = os.path.join(ROOT, "integrations", "grafana")
RULES = os.path.join(PROM, "bootbench-alerts.yml")
RULE_TESTS = os.path.join(HERE, "alerts-test.yml")
DASHBOARD = os.path.join(GRAFANA, "bootbench-fleet.json")
# The guide's page that installs the dashboard (docs/fleets.md, "Prometheus and Grafana").
README = os.path.join(ROOT, "docs", "fleets.md")
PHRASE = "I understand this destroys data"


def tool(name):
    path = shutil.which(name) or os.path.join("/usr/bin", name)
    assert os.path.exists(path), "%s is missing: run `make deps` (.ci/deps installs it)" % name
    return path


PROMTOOL = tool("promtool")


def promtool(*args, stdin=None):
    return subprocess.run([PROMTOOL, *args], input=stdin, capture_output=True, text=True, timeout=60)


# ---------------------------------------------------------------- exposition


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), v)


def parse_exposition(text):
    """The samples of a text exposition: [(name, {label: value}, float)]."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        labels, rest = {}, m.group(2) or ""
        pos = 0
        while pos < len(rest):
            lm = LABEL.match(rest, pos)
            assert lm, "bad labels in %r" % line
            labels[lm.group(1)] = unescape(lm.group(2))
            pos = lm.end()
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def family_part(text, prefix):
    """The lines of the families whose name starts with prefix, HELP and TYPE included."""
    keep = []
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            name = line.split()[2]
        elif line.startswith("#") or not line.strip():
            continue
        else:
            name = re.split(r"[{\s]", line, 1)[0]
        if name.startswith(prefix):
            keep.append(line)
    return "\n".join(keep) + "\n"


def select(samples, name, **labels):
    return [(l, v) for n, l, v in samples if n == name and all(l.get(k) == w for k, w in labels.items())]


def http(url, data=None, method=None, timeout=5):
    req = urllib.request.Request(url, data=data, method=method)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, cond, timeout, step=0.2):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = cond()
            if last:
                return last
        except (OSError, ValueError) as e:
            last = e
        time.sleep(step)
    raise AssertionError("timed out after %ss waiting for %s (last: %r)" % (timeout, what, last))


# ---------------------------------------------------------------- the rules


class Rules(unittest.TestCase):
    def test_rules_pass_promtool_check(self):
        r = promtool("check", "rules", RULES)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("SUCCESS: 3 rules found", r.stdout)

    def test_unit_tests_pass(self):
        r = promtool("test", "rules", RULE_TESTS)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("SUCCESS", r.stdout)

    def test_unit_tests_catch_a_broken_rule(self):
        """Each rule broken in one way, the unit tests on it fail."""
        with open(RULES) as f:
            rules = f.read()
        mutants = {
            "failed acceptance never fires": ('bootbench_disk_verdict{verdict="fail"} == 1',
                                              'bootbench_disk_verdict{verdict="fail"} == 2'),
            "failed acceptance on any verdict": ('bootbench_disk_verdict{verdict="fail"} == 1',
                                                 'bootbench_disk_verdict == 1'),
            "failed acceptance without its reason": ('{{ .Labels.reason }}', '{{ .Labels.rule }}'),
            "stopped pushing ignores the state": ('bootbench_run_state{state="running"} == 1',
                                                  'bootbench_run_state == 1'),
            "stopped pushing after 1 interval": ("5 * bootbench_push_interval_seconds",
                                                 "1 * bootbench_push_interval_seconds"),
            "bad blocks on a clean burn-in": (") > 0", ") >= 0"),
            "bad blocks ignores mismatches": ("unwritable|unreadable|mismatched", "unwritable|unreadable"),
        }
        with tempfile.TemporaryDirectory() as tmp:
            os.mkdir(os.path.join(tmp, "tests"))
            shutil.copy(RULE_TESTS, os.path.join(tmp, "tests"))
            for what, (old, new) in mutants.items():
                with self.subTest(what):
                    self.assertEqual(rules.count(old), 1, "the rules changed: %r" % old)
                    with open(os.path.join(tmp, "bootbench-alerts.yml"), "w") as f:
                        f.write(rules.replace(old, new))
                    broken = os.path.join(tmp, "bootbench-alerts.yml")
                    self.assertEqual(promtool("check", "rules", broken).returncode, 0, "%s: not valid rules" % what)
                    r = promtool("test", "rules", os.path.join(tmp, "tests", "alerts-test.yml"))
                    self.assertNotEqual(r.returncode, 0, "%s: the unit tests still pass\n%s" % (what, r.stdout))
                    self.assertIn("FAILED", r.stdout + r.stderr)

    def test_example_config_is_valid_and_honours_labels(self):
        with open(os.path.join(PROM, "prometheus.yml")) as f:
            cfg = yaml.safe_load(f)
        self.assertEqual(cfg["rule_files"], ["bootbench-alerts.yml"])
        jobs = cfg["scrape_configs"]
        self.assertEqual(len(jobs), 1)
        self.assertIs(jobs[0]["honor_labels"], True)
        r = promtool("check", "config", os.path.join(PROM, "prometheus.yml"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("SUCCESS: 1 rule files found", r.stdout)


# ---------------------------------------------------------------- the dashboard

# The unit of each metric (docs/fleets.md, "Prometheus and Grafana: every machine live"), as Grafana names it.
UNITS = {
    "bootbench_run_progress_ratio": "percentunit",
    "bootbench_test_progress_ratio": "percentunit",
    "bootbench_test_read_bytes_per_second": "Bps",
    "bootbench_test_write_bytes_per_second": "Bps",
    "bootbench_test_read_iops": "iops",
    "bootbench_test_write_iops": "iops",
    "bootbench_test_latency_mean_seconds": "s",
    "bootbench_test_max_temperature_celsius": "celsius",
    "bootbench_disk_temperature_celsius": "celsius",
    "bootbench_disk_size_bytes": "bytes",
}
METRIC = re.compile(r"\b(bootbench_[a-z_]+|push_time_seconds)\b")


def load_dashboard():
    with open(DASHBOARD) as f:
        return json.load(f)


def all_panels(dash):
    for p in dash["panels"]:
        yield p
        yield from p.get("panels", [])


def dashboard_exprs(dash):
    return [(p["title"], t["expr"]) for p in all_panels(dash) for t in p.get("targets", [])]


def concrete(expr):
    """A dashboard expr as Grafana sends it with Machine = All."""
    expr = expr.replace("${machine}", ".*").replace("$machine", ".*")
    for v in ("$__rate_interval", "${__rate_interval}", "$__interval", "${__interval}", "$__range", "${__range}"):
        expr = expr.replace(v, "1m")
    assert "$" not in expr, "a variable left in %r" % expr
    return expr


class Dashboard(unittest.TestCase):
    def setUp(self):
        self.dash = load_dashboard()

    def test_identity_and_variables(self):
        d = self.dash
        self.assertEqual(d["uid"], "bootbench-fleet")
        self.assertTrue(d["title"])
        self.assertGreaterEqual(d["schemaVersion"], 36)
        self.assertNotIn("id", d, "a provisioned dashboard carries no database id")
        v = {x["name"]: x for x in d["templating"]["list"]}
        self.assertEqual((v["datasource"]["type"], v["datasource"]["query"]), ("datasource", "prometheus"))
        m = v["machine"]
        self.assertEqual(m["type"], "query")
        self.assertEqual(m["datasource"]["uid"], "${datasource}")
        self.assertEqual(m["query"]["query"], "label_values(bootbench_run_state, machine)")
        self.assertIs(m["includeAll"], True)
        self.assertEqual(m["allValue"], ".*")

    def test_every_panel_and_target_on_the_datasource_variable(self):
        panels = list(all_panels(self.dash))
        self.assertGreaterEqual(len(panels), 7)
        ids = [p["id"] for p in panels]
        self.assertEqual(len(ids), len(set(ids)), "panel ids repeat")
        for p in panels:
            with self.subTest(p["title"]):
                self.assertEqual(p["datasource"], {"type": "prometheus", "uid": "${datasource}"})
                self.assertTrue(p["targets"], "no query")
                for t in p["targets"]:
                    self.assertEqual(t["datasource"]["uid"], "${datasource}")
                    self.assertTrue(t.get("expr", "").strip(), "target %s has no expr" % t.get("refId"))
                    self.assertIn('machine=~"$machine"', t["expr"], "not filtered by the machine variable")
                    self.assertRegex(t["expr"], METRIC)

    def test_panels_fit_the_grid_without_overlap(self):
        cells = {}
        for p in all_panels(self.dash):
            g = p["gridPos"]
            self.assertTrue(g["w"] > 0 and g["h"] > 0 and g["x"] >= 0 and g["y"] >= 0, p["title"])
            self.assertLessEqual(g["x"] + g["w"], 24, p["title"])
            for x in range(g["x"], g["x"] + g["w"]):
                for y in range(g["y"], g["y"] + g["h"]):
                    self.assertNotIn((x, y), cells, "%r overlaps %r" % (p["title"], cells.get((x, y))))
                    cells[(x, y)] = p["title"]

    def test_units(self):
        for p in all_panels(self.dash):
            with self.subTest(p["title"]):
                unit = p["fieldConfig"]["defaults"].get("unit")
                self.assertTrue(unit, "no unit")
                metrics = {m for t in p["targets"] for m in METRIC.findall(t["expr"])}
                want = {UNITS.get(m, "none") for m in metrics}
                # A count of series is a plain number whatever it counts.
                if all(t["expr"].startswith("count ") for t in p["targets"]):
                    want = {"none"}
                self.assertEqual(len(want), 1, "metrics of different units in one panel: %s" % sorted(metrics))
                self.assertEqual(unit, want.pop(), sorted(metrics))
                if unit == "percentunit":
                    self.assertEqual((p["fieldConfig"]["defaults"]["min"], p["fieldConfig"]["defaults"]["max"]), (0, 1))

    def test_the_panels_the_fleet_needs(self):
        exprs = "\n".join(e for _, e in dashboard_exprs(self.dash))
        for needed in ("count by (state) (bootbench_run_state", "bootbench_run_progress_ratio",
                       'bootbench_disk_reason_info{verdict="fail"',
                       "avg by (model, test) (bootbench_test_read_bytes_per_second",
                       "avg by (model, test) (bootbench_test_write_bytes_per_second",
                       "bootbench_disk_temperature_celsius",
                       "bootbench_surface_scan_unreadable_blocks_total", "bootbench_burn_in_unwritable_blocks_total",
                       "bootbench_burn_in_unreadable_blocks_total", "bootbench_burn_in_mismatched_blocks_total",
                       "count by (verdict) (bootbench_disk_verdict"):
            self.assertIn(needed, exprs)
        failed = [p for p in all_panels(self.dash) if "bootbench_disk_reason_info" in json.dumps(p["targets"])]
        self.assertEqual(failed[0]["type"], "table")
        self.assertEqual(failed[0]["targets"][0]["format"], "table")

    def test_provisioning_points_where_the_readme_installs_it(self):
        with open(os.path.join(GRAFANA, "provisioning", "dashboards", "bootbench.yml")) as f:
            prov = yaml.safe_load(f)
        self.assertEqual(prov["apiVersion"], 1)
        (p,) = prov["providers"]
        self.assertEqual(p["type"], "file")
        folder = p["options"]["path"]
        self.assertTrue(os.path.isabs(folder), folder)
        installed = os.path.join(folder, os.path.basename(DASHBOARD))
        with open(README) as f:
            readme = f.read()
        line = "integrations/grafana/bootbench-fleet.json %s" % installed
        self.assertTrue(line in readme, "docs/fleets.md does not install the dashboard into the provider's folder: "
                        "no %r in docs/fleets.md" % line)
        with open(os.path.join(GRAFANA, "provisioning", "datasources", "prometheus.yml")) as f:
            ds = yaml.safe_load(f)
        self.assertEqual(ds["apiVersion"], 1)
        self.assertEqual([d["type"] for d in ds["datasources"]], ["prometheus"])


# ---------------------------------------------------------------- live

SIZES = (64 << 20, 48 << 20)  # A is above the floor's min_size, B below
# Loop devices have no sensor: no temperature is pushed for them.
NO_SENSOR = {"bootbench_disk_temperature_celsius", "bootbench_test_max_temperature_celsius"}


def losetup(path):
    return subprocess.run(["losetup", "-f", "--show", path], check=True, capture_output=True, text=True).stdout.strip()


class Stack(unittest.TestCase):
    """A Pushgateway and a Prometheus of the test's own (127.0.0.1, free
    ports, a temp dir, scraping every second with honor_labels, the rules
    loaded and evaluated every second) and two loop devices; a subclass's
    _run() runs bootbench-init on them."""

    procs, files, loops, tmp = [], [], [], None

    @classmethod
    def setUpClass(cls):
        cls.procs, cls.files, cls.loops, cls.tmp = [], [], [], None
        cls.bin = os.environ.get("BOOTBENCH_INIT")
        assert cls.bin and os.access(cls.bin, os.X_OK), "$BOOTBENCH_INIT names no bootbench-init: %r" % cls.bin
        try:
            cls._start()
            cls._run()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _spawn(cls, name, args):
        log = open(os.path.join(cls.tmp, name + ".log"), "w")
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=cls.tmp)
        cls.procs.append((p, log))
        return p

    @classmethod
    def _log(cls, name):
        with open(os.path.join(cls.tmp, name + ".log")) as f:
            return f.read()[-3000:]

    @classmethod
    def _start(cls):
        cls.tmp = tempfile.mkdtemp(prefix="bootbench-prom-")
        pg, pr = free_port(), free_port()
        cls.pushgateway = "http://127.0.0.1:%d" % pg
        cls.prometheus = "http://127.0.0.1:%d" % pr
        # Debian's pushgateway persists to /var/lib/prometheus/pushgateway.data
        # by default, which every other one (the packaged service's) shares: a
        # file of our own, so no group comes in from elsewhere or goes out.
        cls._spawn("pushgateway", [tool("prometheus-pushgateway"), "--web.listen-address=127.0.0.1:%d" % pg,
                                   "--persistence.file=" + os.path.join(cls.tmp, "pushgateway.data")])
        with open(os.path.join(cls.tmp, "prometheus.yml"), "w") as f:
            yaml.safe_dump({
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [RULES],
                "scrape_configs": [{"job_name": "pushgateway", "honor_labels": True,
                                    "static_configs": [{"targets": ["127.0.0.1:%d" % pg]}]}],
            }, f)
        cls._spawn("prometheus", [tool("prometheus"), "--config.file=" + os.path.join(cls.tmp, "prometheus.yml"),
                                  "--storage.tsdb.path=" + os.path.join(cls.tmp, "data"),
                                  "--web.listen-address=127.0.0.1:%d" % pr])
        for i, size in enumerate(SIZES):
            f = "/dev/shm/bootbench-prom-%d-%d.img" % (os.getpid(), i)
            with open(f, "wb") as w:
                w.truncate(size)
            cls.files.append(f)
            cls.loops.append(losetup(f))
        wait_for("the pushgateway", lambda: http(cls.pushgateway + "/-/ready"), 20)
        wait_for("prometheus", lambda: http(cls.prometheus + "/-/ready"), 30)
        groups = json.loads(http(cls.pushgateway + "/api/v1/metrics"))["data"]
        assert groups == [], "a new pushgateway holds groups already: %s" % groups

    @classmethod
    def _write_config(cls, cfg):
        cls.config = os.path.join(cls.tmp, "cfg.json")
        with open(cls.config, "w") as f:
            json.dump(dict(cfg, metrics_url=cls.pushgateway, metrics_interval="1s", targets=cls.loops), f)

    @classmethod
    def _alerts(cls, state="firing"):
        alerts = json.loads(http(cls.prometheus + "/api/v1/alerts"))["data"]["alerts"]
        return [a for a in alerts if a["state"] == state]

    @classmethod
    def tearDownClass(cls):
        for p, log in reversed(cls.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            log.close()
        cls.procs = []
        for dev in cls.loops:
            subprocess.run(["losetup", "-d", dev], check=False)
        for f in cls.files:
            os.unlink(f)
        cls.loops, cls.files = [], []
        if cls.tmp:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            cls.tmp = None


class Live(Stack):
    """One bootbench run pushing to the Pushgateway the Prometheus scrapes."""

    @classmethod
    def _run(cls):
        a, b = cls.loops
        cls._write_config({
            "surface_scan": {"bs": "1M"},
            "destructive": {"confirm": PHRASE, "countdown": 0, "targets": [a, b]},
            "burn_in": {"bs": "1M", "patterns": ["0xaa"]},
            "tests": [
                # Time-based, so the progress is seen mid-run.
                {"workload": "seq_read", "name": "seq1m_q8t1_read", "bs": "1M", "iodepth": 8, "runtime": "3s"},
                {"workload": "rand_read", "name": "rnd4k_q1t1_read", "bs": "4k", "iodepth": 1, "runtime": "500ms"},
                {"workload": "seq_write", "name": "seq1m_q8t1_write", "bs": "1M", "iodepth": 8, "runtime": "500ms"},
            ],
            # A floor no loop device meets, on disks of 60 MiB or more: A fails, B passes.
            "acceptance": {"limits": [{"test": "seq1m_q8t1_read", "only": {"min_size": "60MiB"},
                                       "min_read_bytes_per_sec": "1000TB/s"}]},
        })
        cls.doc_path = os.path.join(cls.tmp, "doc.json")
        run = cls._spawn("bootbench", [cls.bin, "run", "--config", cls.config, "--out", cls.doc_path])

        # Mid-run: what the pushgateway holds, every 0.2 s, until the run ends.
        cls.polls = []
        deadline = time.monotonic() + 120
        while run.poll() is None:
            assert time.monotonic() < deadline, "bootbench-init run still running after 120 s"
            try:
                cls.polls.append(parse_exposition(http(cls.pushgateway + "/metrics")))
            except OSError:
                pass
            time.sleep(0.2)
        cls.exit_code = run.returncode
        cls.final_text = http(cls.pushgateway + "/metrics")
        cls.final = parse_exposition(cls.final_text)
        assert os.path.exists(cls.doc_path), "no document (exit %s):\n%s" % (cls.exit_code, cls._log("bootbench"))
        with open(cls.doc_path) as f:
            cls.doc = json.load(f)
        groups = {l["instance"] for l, _ in select(cls.final, "push_time_seconds", job="bootbench")}
        assert len(groups) == 1, "pushed groups of job bootbench: %s\n%s" % (groups, cls._log("bootbench"))
        cls.machine = groups.pop()

    # -- the pushgateway, mid-run and at the end

    def test_a_run_ends_and_fails_acceptance_on_the_floor(self):
        self.assertEqual(self.exit_code, 3, self._log("bootbench"))
        verdicts = {t["target"]: t["verdict"] for t in self.doc["acceptance"]["targets"]}
        self.assertEqual(verdicts, {self.loops[0]: "fail", self.loops[1]: "pass"})

    def test_mid_run_the_state_is_running(self):
        seen = []
        for samples in self.polls:
            state = {l["state"]: v for l, v in select(samples, "bootbench_run_state", machine=self.machine)}
            if state:
                seen.append(state)
        self.assertTrue(seen, "nothing pushed during the run (%d polls)" % len(self.polls))
        running = [s for s in seen if s.get("running") == 1]
        self.assertTrue(running, "never state running: %s" % seen[:3])
        for s in running:
            self.assertEqual(s, {"running": 1, "ok": 0, "error": 0, "interrupted": 0})

    def test_mid_run_progress_moves(self):
        """A test's progress strictly between 0 and 1 at some push, and the
        run's progress takes several values on its way to 1."""
        mid = set()
        run_progress = []
        for samples in self.polls:
            if not [v for _, v in select(samples, "bootbench_run_state", state="running") if v == 1]:
                continue
            mid |= {(l["device"], l["test"], v) for l, v in select(samples, "bootbench_test_progress_ratio")
                    if 0 < v < 1}
            run_progress += [v for _, v in select(samples, "bootbench_run_progress_ratio")]
        self.assertTrue(mid, "no test was ever seen between 0 and 1")
        self.assertGreater(len(set(run_progress)), 2, "the run's progress did not move: %s" % run_progress)
        self.assertEqual(run_progress, sorted(run_progress), "the run's progress went back")
        self.assertTrue(all(0 <= v <= 1 for v in run_progress), run_progress)

    def test_the_run_is_the_sum_of_its_tests(self):
        """At every push: planned tests = the test progress series (the
        whole-disk passes included), the run's progress their mean, the
        ended tests at 1."""
        checked = 0
        for samples in self.polls + [self.final]:
            tests = [v for _, v in select(samples, "bootbench_test_progress_ratio", machine=self.machine)]
            if not tests:
                continue
            one = lambda name: [v for _, v in select(samples, name, machine=self.machine)]
            self.assertEqual(one("bootbench_run_planned_tests"), [len(tests)])
            (progress,) = one("bootbench_run_progress_ratio")
            self.assertTrue(math.isclose(progress, sum(tests) / len(tests), rel_tol=1e-6, abs_tol=1e-9),
                            (progress, tests))
            # Ended tests are at 1 (a test may reach 1 just before it ends).
            (ended,) = one("bootbench_run_ended_tests")
            self.assertLessEqual(ended, sum(1 for v in tests if v == 1), tests)
            checked += 1
        self.assertGreater(checked, 3)

    def test_at_the_end_the_state_is_the_documents(self):
        self.assertEqual(self.doc["run"]["status"], "ok")
        state = {l["state"]: v for l, v in select(self.final, "bootbench_run_state", machine=self.machine)}
        self.assertEqual(state, {"running": 0, "ok": 1, "error": 0, "interrupted": 0})
        one = lambda name: [v for _, v in select(self.final, name, machine=self.machine)]
        self.assertEqual(one("bootbench_run_progress_ratio"), [1])
        self.assertEqual(one("bootbench_run_ended_tests"), one("bootbench_run_planned_tests"))
        self.assertEqual(one("bootbench_push_interval_seconds"), [1])
        (start,) = one("bootbench_run_start_time_seconds")
        self.assertAlmostEqual(start, self.doc["run"]["started_unix_ns"] / 1e9, delta=1)
        (bound,) = one("bootbench_run_bound_seconds")
        self.assertAlmostEqual(bound, self.doc["run"]["bound_ns"] / 1e9, delta=1e-3)
        ((info, v),) = select(self.final, "bootbench_run_info", machine=self.machine)
        self.assertEqual(v, 1)
        self.assertEqual(info.get("version"), self.doc["tool"]["version"])
        verdict = {l["verdict"]: v for l, v in select(self.final, "bootbench_run_verdict", machine=self.machine)}
        self.assertEqual(verdict, {"pass": 0, "warn": 0, "fail": 1})
        for l, v in select(self.final, "bootbench_test_progress_ratio"):
            self.assertEqual(v, 1, l)

    def test_every_series_names_its_machine(self):
        names = set()
        for n, l, _ in self.final:
            if n.startswith("bootbench_"):
                names.add(n)
                self.assertEqual((l.get("job"), l.get("instance"), l.get("machine")),
                                 ("bootbench", self.machine, self.machine), n)
        for needed in ("bootbench_run_info", "bootbench_run_state", "bootbench_run_start_time_seconds",
                       "bootbench_run_bound_seconds", "bootbench_run_progress_ratio", "bootbench_run_planned_tests",
                       "bootbench_run_ended_tests", "bootbench_push_interval_seconds", "bootbench_run_verdict",
                       "bootbench_disk_info", "bootbench_disk_size_bytes", "bootbench_test_progress_ratio",
                       "bootbench_test_read_bytes_per_second", "bootbench_test_write_bytes_per_second",
                       "bootbench_test_read_iops", "bootbench_test_write_iops", "bootbench_test_latency_mean_seconds",
                       "bootbench_surface_scan_unreadable_blocks_total", "bootbench_burn_in_unwritable_blocks_total",
                       "bootbench_burn_in_unreadable_blocks_total", "bootbench_burn_in_mismatched_blocks_total",
                       "bootbench_disk_verdict", "bootbench_disk_reason_info"):
            self.assertIn(needed, names)

    def test_disks_verdicts_and_reasons_are_the_documents(self):
        for t in self.doc["acceptance"]["targets"]:
            dev = t["target"]
            with self.subTest(dev):
                got = {l["verdict"]: v for l, v in select(self.final, "bootbench_disk_verdict", device=dev)}
                want = {v: int(v == t["verdict"]) for v in ("pass", "warn", "fail")}
                self.assertEqual(got, want)
                for l, _ in select(self.final, "bootbench_disk_verdict", device=dev):
                    self.assertEqual((l.get("serial", ""), l.get("model", "")), (t["serial"] or "", t["model"] or ""))
                reasons = select(self.final, "bootbench_disk_reason_info", device=dev)
                if t["verdict"] == "pass":
                    self.assertEqual(reasons, [])
                    continue
                first = next(c for c in t["checks"] if c["verdict"] == t["verdict"])
                ((l, v),) = reasons
                self.assertEqual(v, 1)
                self.assertEqual((l["verdict"], l["rule"]), (t["verdict"], first["rule"]))
                self.assertLessEqual(len(l["reason"]), 200)
                self.assertTrue(l["reason"] and (l["reason"] in first["message"] or first["message"] in l["reason"]),
                                (l["reason"], first["message"]))
        disks = {l["device"] for l, _ in select(self.final, "bootbench_disk_info")}
        self.assertEqual(disks, set(self.loops))
        for dev, size in zip(self.loops, SIZES):
            self.assertEqual([v for _, v in select(self.final, "bootbench_disk_size_bytes", device=dev)], [size])

    def test_figures_are_the_documents(self):
        pairs = [("bootbench_test_read_bytes_per_second", "read_bytes_per_sec", 1),
                 ("bootbench_test_write_bytes_per_second", "write_bytes_per_sec", 1),
                 ("bootbench_test_read_iops", "read_iops", 1), ("bootbench_test_write_iops", "write_iops", 1),
                 ("bootbench_test_latency_mean_seconds", "lat_mean_ns", 1e-9)]
        compared = 0
        for t in self.doc["tests"]:
            if t["status"]["state"] != "ok":
                continue
            for metric, field, scale in pairs:
                got = [v for _, v in select(self.final, metric, device=t["target"], test=t["name"])]
                want = t["summary"][field]
                if want is None:
                    self.assertEqual(got, [], (metric, t["target"], t["name"]))
                    continue
                self.assertEqual(len(got), 1, (metric, t["target"], t["name"]))
                self.assertTrue(math.isclose(got[0], want * scale, rel_tol=1e-6), (metric, got[0], want * scale))
                compared += 1
        self.assertGreaterEqual(compared, 6)

    def test_bad_block_counters_are_zero(self):
        for name in ("bootbench_surface_scan_unreadable_blocks_total", "bootbench_burn_in_unwritable_blocks_total",
                     "bootbench_burn_in_unreadable_blocks_total", "bootbench_burn_in_mismatched_blocks_total"):
            got = {l["device"]: v for l, v in select(self.final, name)}
            self.assertEqual(got, {d: 0 for d in self.loops}, name)

    def test_promtool_check_metrics_on_what_was_pushed(self):
        part = family_part(self.final_text, "bootbench_")
        self.assertIn("# TYPE bootbench_run_state gauge", part)
        r = promtool("check", "metrics", stdin=part)
        self.assertEqual((r.returncode, r.stdout + r.stderr), (0, ""))

    # -- Prometheus: the dashboard's queries and the alerts

    def query(self, expr):
        body = json.loads(http(self.prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})))
        self.assertEqual(body["status"], "success", body)
        return body["data"]["result"]

    def scraped(self):
        """Wait until Prometheus holds the run's last push."""
        ((_, pushed),) = select(self.final, "push_time_seconds", job="bootbench")
        wait_for("prometheus to scrape the last push",
                 lambda: [r for r in self.query('push_time_seconds{job="bootbench"}') if float(r["value"][1]) >= pushed]
                 and self.query("bootbench_disk_verdict"), 30)

    def test_every_dashboard_query_returns_series(self):
        self.scraped()
        pushed = {n for n, _, _ in self.final}
        for title, expr in dashboard_exprs(load_dashboard()):
            with self.subTest(title=title, expr=expr):
                result = self.query(concrete(expr))
                missing = set(METRIC.findall(expr)) - pushed
                if missing:
                    # Only what a loop device cannot have may be missing.
                    self.assertLessEqual(missing, NO_SENSOR, "the run pushed none of %s" % sorted(missing))
                    self.assertEqual(result, [])
                else:
                    self.assertTrue(result, "no series")
        values = json.loads(http(self.prometheus + "/api/v1/label/machine/values?" +
                                 urllib.parse.urlencode({"match[]": "bootbench_run_state"})))
        self.assertEqual(values["data"], [self.machine], "the machine variable's values")

    def test_the_failed_disk_alerts_and_nothing_else(self):
        self.scraped()

        alerts = wait_for("BootbenchDiskFailedAcceptance to fire", self._alerts, 30)
        self.assertEqual([a["labels"]["alertname"] for a in alerts], ["BootbenchDiskFailedAcceptance"],
                         "on a clean burn-in, an ended run, a passing disk: only the failed disk alerts")
        (a,) = alerts
        self.assertEqual({k: a["labels"].get(k) for k in ("device", "machine", "instance", "job", "severity")},
                         {"device": self.loops[0], "machine": self.machine, "instance": self.machine,
                          "job": "bootbench", "severity": "critical"})
        target = self.doc["acceptance"]["targets"][0]
        first = next(c for c in target["checks"] if c["verdict"] == "fail")
        self.assertIn(self.loops[0], a["annotations"]["description"])
        self.assertIn("Reason (%s): " % first["rule"], a["annotations"]["description"])


class StoppedPushing(Stack):
    """A run killed mid-way (SIGKILL: no last push) leaves its machine in
    state running at the Pushgateway: BootbenchMachineStoppedPushing fires
    after 5 intervals (5 s), and not while it pushed. The machine runs
    again: the alert ends; that run stopped as Ctrl-C stops it (SIGINT)
    pushes its end, state interrupted, and no alert comes after 5 intervals
    without a push."""

    @classmethod
    def _query(cls, expr):
        return json.loads(http(cls.prometheus + "/api/v1/query?" + urllib.parse.urlencode(
            {"query": expr})))["data"]["result"]

    @classmethod
    def _stopped_pushing(cls):
        return [a for a in cls._alerts() if a["labels"]["alertname"] == "BootbenchMachineStoppedPushing"]

    @classmethod
    def _run(cls):
        cls._write_config({"tests": [{"workload": "seq_read", "name": "long_read", "bs": "1M", "runtime": "60s"}]})
        doc = os.path.join(cls.tmp, "doc.json")
        run = cls._spawn("bootbench", [cls.bin, "run", "--config", cls.config, "--out", doc])
        # Running and pushing for more than 5 intervals, Prometheus's rules
        # evaluated on it: no alert.
        wait_for("Prometheus to see the run in state running",
                 lambda: json.loads(http(cls.prometheus + "/api/v1/query?" + urllib.parse.urlencode(
                     {"query": 'bootbench_run_state{state="running"} == 1'})))["data"]["result"], 20)
        time.sleep(7)
        assert run.poll() is None, "the 60 s run ended early:\n" + cls._log("bootbench")
        cls.while_pushing = [a["labels"]["alertname"] for a in cls._alerts("firing") + cls._alerts("pending")]
        cls.ages = json.loads(http(cls.prometheus + "/api/v1/query?" + urllib.parse.urlencode(
            {"query": 'time() - push_time_seconds{job="bootbench"}'})))["data"]["result"]
        run.kill()
        run.wait()
        cls.killed = time.monotonic()
        cls.fired = wait_for("BootbenchMachineStoppedPushing to fire", cls._stopped_pushing, 30)
        cls.after = time.monotonic() - cls.killed

        # The machine runs again, and is interrupted once pushing.
        doc2 = os.path.join(cls.tmp, "doc2.json")
        run = cls._spawn("bootbench2", [cls.bin, "run", "--config", cls.config, "--out", doc2])
        wait_for("the alert to end once pushes resume", lambda: not cls._stopped_pushing(), 20)
        run.send_signal(signal.SIGINT)
        run.wait(30)
        cls.interrupted_exit = run.returncode
        assert os.path.exists(doc2), "no document of the interrupted run:\n" + cls._log("bootbench2")
        with open(doc2) as f:
            cls.interrupted_doc = json.load(f)
        cls.interrupted = parse_exposition(http(cls.pushgateway + "/metrics"))
        # 5 intervals and more without a push, Prometheus evaluating.
        time.sleep(7)
        cls.after_interrupt = [a["labels"]["alertname"] for a in cls._alerts("firing") + cls._alerts("pending")]
        cls.age_after_interrupt = cls._query('time() - push_time_seconds{job="bootbench"}')
        cls.state_after_interrupt = cls._query('bootbench_run_state == 1')

    def test_no_alert_while_it_pushed(self):
        self.assertEqual(self.while_pushing, [])
        # Prometheus saw fresh pushes then (a push a second, scraped each second).
        self.assertTrue(self.ages)
        for r in self.ages:
            self.assertLess(float(r["value"][1]), 5, r)

    def test_the_alert_fires_after_five_intervals(self):
        (a,) = self.fired
        self.assertEqual({k: a["labels"].get(k) for k in ("job", "state", "severity")},
                         {"job": "bootbench", "state": "running", "severity": "warning"})
        self.assertEqual(a["labels"]["machine"], a["labels"]["instance"])
        self.assertIn("stopped pushing", a["annotations"]["summary"])
        # Not before 5 intervals without a push.
        self.assertGreaterEqual(self.after, 4, "fired %.1f s after the last push could have been" % self.after)

    def test_an_interrupted_run_pushes_its_end_and_does_not_alert(self):
        self.assertEqual(self.interrupted_doc["run"]["status"], "interrupted", self._log("bootbench2"))
        state = {l["state"]: v for l, v in select(self.interrupted, "bootbench_run_state")}
        self.assertEqual(state, {"running": 0, "ok": 0, "error": 0, "interrupted": 1})
        self.assertEqual([r["metric"]["state"] for r in self.state_after_interrupt], ["interrupted"])
        (age,) = self.age_after_interrupt
        self.assertGreater(float(age["value"][1]), 5, "the last push is not older than 5 intervals yet")
        self.assertEqual(self.after_interrupt, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
