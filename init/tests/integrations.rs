//! The fleet engines' integrations (docs/fleets.md, "MAAS" and "Ironic"), run
//! against the real components: `integrations/maas/tests/test_maas.py`
//! (the testing scripts read as MAAS's form reads them and run as
//! `maas_run_remote_scripts` runs them, on a loop device) and
//! `integrations/ironic/tests/test_agent.py` (the hardware manager loaded
//! through its entry point by PyPI's `ironic-python-agent`, its steps run
//! through the agent's clean and service extensions, on loop devices).
//!
//! And `integrations/prometheus/tests/test_prometheus.py`: the alert rules
//! through `promtool`, the Grafana dashboard's JSON, and a live run pushing
//! to a Pushgateway that a Prometheus scrapes, the dashboard's queries and
//! the alerts asked of that Prometheus (Debian's `prometheus`,
//! `prometheus-pushgateway`, `promtool`; started on free ports, stopped).
//!
//! All are Python's `unittest` with the Python of the virtual environment
//! `.ci/deps` installs the agent into (`/opt/bootbench/ipa-venv`,
//! `BOOTBENCH_IPA_PYTHON` overrides it; the Prometheus suite, which needs
//! only PyYAML, runs with Debian's python3 and python3-yaml where that
//! environment is missing), as root (losetup), with this build's
//! `bootbench-init`. Each prints every case and its outcome.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_bootbench-init");
const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn python() -> PathBuf {
    std::env::var_os("BOOTBENCH_IPA_PYTHON")
        .map_or_else(|| PathBuf::from("/opt/bootbench/ipa-venv/bin/python3"), PathBuf::from)
}

/// The agent's environment where it is, else Debian's python3: for a
/// suite that needs no more than PyYAML (python3-yaml).
fn python_or_debians() -> PathBuf {
    let py = python();
    if py.exists() || std::env::var_os("BOOTBENCH_IPA_PYTHON").is_some() {
        py
    } else {
        PathBuf::from("/usr/bin/python3")
    }
}

/// Run one of the Python suites; fail with its output unless every case passed.
fn suite(script: &str) {
    suite_with(&python(), script);
}

fn suite_with(py: &Path, script: &str) {
    assert!(
        py.exists(),
        "{} is missing: run `make deps` (.ci/deps installs ironic-python-agent into \
         /opt/bootbench/ipa-venv, and python3-yaml for Debian's python3)",
        py.display()
    );
    let path = Path::new(MANIFEST).join("..").join(script);
    let out = Command::new(py)
        .arg(&path)
        .env("BOOTBENCH_INIT", BIN)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{script}: {}\n{stderr}", out.status);
    // unittest's last line: OK, never "OK (skipped=...)".
    assert!(
        stderr.trim_end().ends_with("\nOK"),
        "{script}: not every case ran:\n{stderr}"
    );
}

#[test]
fn maas_scripts_as_maas_reads_and_runs_them() {
    suite("integrations/maas/tests/test_maas.py");
}

#[test]
fn ironic_steps_in_the_real_agent() {
    suite("integrations/ironic/tests/test_agent.py");
}

#[test]
fn prometheus_pushgateway_alerts_and_dashboard() {
    suite_with(&python_or_debians(), "integrations/prometheus/tests/test_prometheus.py");
}
