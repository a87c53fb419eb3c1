"""Reads bootbench-report's tidy export back with DuckDB (a reader bootbench did not write) and
Python's csv module, for report/tests/tidy.rs, and prints what it read as one JSON object.

Usage: tidy_read.py FIGURES.parquet RUNS.parquet FIGURES.csv RUNS.csv QUERY.sql OUTDIR
QUERY.sql is docs/reports.md's query with the file name it names; OUTDIR gets two Parquet files
DuckDB writes from the figures: `reordered.parquet` (columns in reverse order, bootbench's
key-value metadata kept) and `missing.parquet` (the same without `unit`).
"""
import csv
import json
import sys

try:
    import duckdb
except ImportError as e:
    print("DuckDB's Python package is not installed (run .ci/deps, or make deps): %s" % e, file=sys.stderr)
    sys.exit(3)

figures, runs, figures_csv, runs_csv, query_file, outdir = sys.argv[1:7]
con = duckdb.connect()


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def rows(sql):
    return [list(r) for r in con.execute(sql).fetchall()]


out = {}
for name, path in (("figures", figures), ("runs", runs)):
    out[name + "_kv"] = {
        k.decode(): v.decode() for k, v in con.execute(
            "SELECT key, value FROM parquet_kv_metadata(%s)" % lit(path)).fetchall()
    }
    out[name + "_schema"] = rows(
        "SELECT name, type, repetition_type, CAST(logical_type AS VARCHAR) FROM parquet_schema(%s) "
        "WHERE num_children IS NULL" % lit(path))
    out[name + "_count"] = con.execute("SELECT count(*) FROM read_parquet(%s)" % lit(path)).fetchone()[0]

out["figures_rows"] = rows(
    "SELECT file, disk, run, test, step, label, figure, value, unit, status, target_kind, machine, machine_by, "
    "machine_serial, host_model, disk_serial, disk_model, disk_verdict, disk_verdict_reason, "
    "epoch_ns(run_started), run_started_unix_ns, schema_version, disk_verdict_rule FROM read_parquet(%s)" % lit(figures))
out["runs_rows"] = rows(
    "SELECT file, machine, machine_by, targets, tests, verdict, targets_pass, targets_warn, targets_fail, "
    "epoch_ns(run_started), run_started_unix_ns, duration_ns, status FROM read_parquet(%s)" % lit(runs))

with open(query_file) as f:
    query = f.read()
cur = con.execute(query)
out["query_columns"] = [d[0] for d in cur.description]
out["query_rows"] = [list(r) for r in cur.fetchall()]

for name, path in (("figures_csv", figures_csv), ("runs_csv", runs_csv)):
    with open(path, newline="") as f:
        out[name] = list(csv.reader(f))

con.execute(
    "COPY (SELECT %s FROM read_parquet(%s)) TO %s (FORMAT parquet, KV_METADATA {'bootbench.table': 'figures/1'})"
    % (", ".join(reversed([c[0] for c in out["figures_schema"]])), lit(figures), lit(outdir + "/reordered.parquet")))
con.execute(
    "COPY (SELECT * EXCLUDE (unit) FROM read_parquet(%s)) TO %s (FORMAT parquet, KV_METADATA {'bootbench.table': 'figures/1'})"
    % (lit(figures), lit(outdir + "/missing.parquet")))
con.execute("COPY (SELECT 1 AS x) TO %s (FORMAT parquet)" % lit(outdir + "/foreign.parquet"))

print(json.dumps(out, default=str))
