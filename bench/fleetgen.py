#!/usr/bin/env python3
"""A fleet of result documents for `make bench`'s fleet part (bench/fleet.py).

From one real quick-profile run (report/tests/fixtures/qemu-4disks-quick.json:
NVMe, SATA SSD, SATA HDD and virtio disks, 52 tests) write N documents into
a directory, each a machine of its own:

- machine n (1..N): DMI product serial `SN{n:06d}`, host name `m{n}`, file
  `SN{n:06d}-1.json` (as a stick names them), run.started_unix_ns an hour
  after machine n-1's;
- host model: one of HOST_MODELS, picked per machine;
- disks: serial `SN{n:06d}-<the fixture's serial>` (and the same in its
  WWN), the slot's model (DISK_MODELS: one per slot, the virtio disk given
  one) with one of the model's two firmwares, picked per disk;
- figures: every throughput and IOPS figure of the disk's tests (summary
  read/write_bytes_per_sec and _iops, per_step values; the steps'
  bytes_per_sec and iops and their samples) times a factor per disk drawn
  from SPREAD (0.92-1.08: never more than 10% below a group's median, so
  no random disk is an outlier), and the known slow disks, every 97th disk
  of the fleet (disks numbered from 1 over machines, 4 a machine), at
  SLOW (0.5) instead. Latencies, byte counts and the rest stay as they were.

The same --seed gives the same files byte for byte. The documents are
written as the stick writes them: pretty-printed (indent 2), about 375 KB
each from this fixture (it is stored compact, 142 KB).

Speed: the fixture is parsed once into a template, its variable values
replaced by markers and pretty-printed once, then cut at the markers; each
document is the template's pieces joined with its own values (no JSON
round trip per document). Prints one line on stdout: documents, bytes,
slow disks, seconds.
"""
import argparse
import json
import os
import random
import re
import sys
import time

HOST_MODELS = [
    ("Dell Inc.", "PowerEdge R640"),
    ("Dell Inc.", "PowerEdge R750"),
    ("Supermicro", "SYS-1029U-TRT"),
]
# Per disk slot of the fixture (its targets in order): the model and its two
# firmwares (the fixture's own first where it has one).
DISK_MODELS = [
    ("QEMU NVMe Ctrl", ["7.2.22", "7.2.23"]),
    ("BOOTBENCH SATA SSD 2", ["2.5+", "2.6"]),
    ("BOOTBENCH SATA HDD 1", ["2.5+", "2.6"]),
    ("BOOTBENCH VIRTIO DISK", ["1.0", "1.1"]),
]
SPREAD = (0.92, 1.08)
SLOW_EVERY = 97
SLOW = 0.5
HOUR_NS = 3600 * 10**9

# Figure fields scaled: in a summary, a step's read/write, and its samples.
FIGURE_KEYS = {"read_bytes_per_sec", "write_bytes_per_sec", "read_iops", "write_iops", "bytes_per_sec", "iops"}

DEFAULT_BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report", "tests", "fixtures",
                            "qemu-4disks-quick.json")


class Template:
    """The pretty-printed fixture cut at its variable values.

    `parts` alternates text and markers: a marker is ("fig", slot, value)
    for a figure of the disk in `slot`, or ("str", name) for a piece of a
    string (the machine's serial, host name, a disk's serial, ...).
    """

    def __init__(self, doc):
        self.values = []  # (slot, base value) per figure marker
        self.slots = [t["path"] for t in doc["targets"]]
        self.base_serials = [t.get("serial") or f"DISK{i}" for i, t in enumerate(doc["targets"])]
        if len(self.slots) != len(DISK_MODELS):
            sys.exit(f"fleetgen: the base document has {len(self.slots)} disks, DISK_MODELS {len(DISK_MODELS)}")
        doc = json.loads(json.dumps(doc))
        h = doc["host"]
        h["product_serial"] = "@@S:serial@@"
        h["hostname"] = "@@S:hostname@@"
        h["sys_vendor"] = "@@S:vendor@@"
        h["product_name"] = "@@S:product@@"
        doc["run"]["started_unix_ns"] = "@@S:started@@"
        for i, t in enumerate(doc["targets"]):
            s = self.base_serials[i]
            t["serial"] = f"@@S:serial@@-{s}"
            if isinstance(t.get("wwn"), str) and s in t["wwn"]:
                t["wwn"] = t["wwn"].replace(s, f"@@S:serial@@-{s}")
            t["model"] = f"@@S:model{i}@@"
            t["firmware"] = f"@@S:firmware{i}@@"
        for test in doc["tests"]:
            if test.get("target") in self.slots:
                self._mark(test, self.slots.index(test["target"]), None)
        text = json.dumps(doc, indent=2)
        # A whole-value marker is a JSON string `"@@S:name@@"` (numbers lose
        # their quotes); a marker inside a string is `@@S:name@@`.
        self.parts = []
        pos = 0
        for m in re.finditer(r'"@@(F)(\d+)@@"|"@@S:(started)@@"|@@S:(\w+)@@', text):
            self.parts.append(text[pos:m.start()])
            if m.group(1):
                slot, value = self.values[int(m.group(2))]
                self.parts.append(("fig", slot, value))
            else:
                self.parts.append(("str", m.group(3) or m.group(4)))
            pos = m.end()
        self.parts.append(text[pos:])

    def _fig(self, slot, v):
        self.values.append((slot, v))
        return f"@@F{len(self.values) - 1}@@"

    def _mark(self, node, slot, key):
        """Replace the figures under `node` with markers (key: node's own key)."""
        if isinstance(node, dict):
            for k, v in node.items():
                number = isinstance(v, (int, float)) and not isinstance(v, bool)
                if number and (k in FIGURE_KEYS or (k == "value" and key == "per_step")):
                    node[k] = self._fig(slot, v)
                elif isinstance(v, list) and k in FIGURE_KEYS:
                    node[k] = [self._fig(slot, x) if isinstance(x, (int, float)) else x for x in v]
                else:
                    self._mark(v, slot, k)
        elif isinstance(node, list):
            for x in node:
                self._mark(x, slot, key)

    def render(self, strings, factors):
        out = []
        for p in self.parts:
            if isinstance(p, str):
                out.append(p)
            elif p[0] == "fig":
                out.append(repr(float(p[2] * factors[p[1]])))
            else:
                out.append(strings[p[1]])
        return "".join(out)


def machine(n, seed, base_started):
    """The strings and disk factors of machine n (1..N), and its slow disks."""
    rng = random.Random(seed * 1_000_003 + n)
    vendor, product = HOST_MODELS[rng.randrange(len(HOST_MODELS))]
    serial = f"SN{n:06d}"
    strings = {"serial": serial, "hostname": f"m{n}", "vendor": vendor, "product": product,
               "started": str(base_started + n * HOUR_NS)}
    factors, slow = [], 0
    for i, (model, firmwares) in enumerate(DISK_MODELS):
        strings[f"model{i}"] = model
        strings[f"firmware{i}"] = firmwares[rng.randrange(len(firmwares))]
        f = rng.uniform(*SPREAD)
        disk = (n - 1) * len(DISK_MODELS) + i + 1
        if disk % SLOW_EVERY == 0:
            f, slow = SLOW, slow + 1
        factors.append(f)
    return strings, factors, slow


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="directory to write into (made if missing)")
    ap.add_argument("--count", type=int, required=True, help="how many documents")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--base", default=DEFAULT_BASE, help="the real document the fleet is made from")
    a = ap.parse_args()
    t0 = time.monotonic()
    with open(a.base) as f:
        doc = json.load(f)
    tpl = Template(doc)
    base_started = int(doc["run"]["started_unix_ns"])
    os.makedirs(a.out, exist_ok=True)
    total = slow = 0
    for n in range(1, a.count + 1):
        strings, factors, s = machine(n, a.seed, base_started)
        data = tpl.render(strings, factors).encode()
        with open(os.path.join(a.out, f"{strings['serial']}-1.json"), "wb") as f:
            f.write(data)
        total += len(data)
        slow += s
    secs = time.monotonic() - t0
    print(f"generated {a.count} documents, {total} bytes, {slow} slow disks, {secs:.1f} s")


if __name__ == "__main__":
    main()
