//! The result document's closed sets, as bench-core reads and writes them,
//! are the schema's enums: a value one side knows and the other does not
//! would be written and refused, or described and never read. The same for
//! the baseline file's schema.

use std::collections::BTreeSet;
use std::fmt::{Debug, Display};
use std::path::Path;

use bench_core::document::result::{
    AnalysisKind, CapacitySource, CheckRule, HealthKind, KernelLogKind, Metric, RunStatus, SelfTestKind,
    SelfTestOutcome, SelfTestSource, StackClass, StackMode, TargetKind, Verdict,
};
use bench_core::spec::Workload;
use serde::de::DeserializeOwned;

/// The names of `all`, each checked to read back as the value it names.
fn names<T: Copy + Debug + Display + PartialEq + DeserializeOwned>(all: &[T]) -> BTreeSet<String> {
    all.iter()
        .map(|x| {
            let name = x.to_string();
            let back: T = serde_json::from_value(serde_json::Value::String(name.clone())).unwrap();
            assert_eq!(back, *x, "{name}");
            name
        })
        .collect()
}

#[test]
fn closed_sets_are_the_schemas_enums() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/bootbench.result-1.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let defs = &schema["$defs"];
    let cases = [
        ("run", "status", names(RunStatus::ALL)),
        ("target", "kind", names(TargetKind::ALL)),
        ("stack", "kind", names(StackClass::ALL)),
        ("stack", "mode", names(StackMode::ALL)),
        ("analysis", "kind", names(AnalysisKind::ALL)),
        ("analysis", "metric", names(Metric::ALL)),
        ("health_line", "kind", names(HealthKind::ALL)),
        ("check", "rule", names(CheckRule::ALL)),
        ("self_test", "kind", names(SelfTestKind::ALL)),
        ("self_test", "outcome", names(SelfTestOutcome::ALL)),
        ("self_test", "source", names(SelfTestSource::ALL)),
        ("kernel_log_line", "kind", names(KernelLogKind::ALL)),
        ("hidden_capacity", "source", names(CapacitySource::ALL)),
    ];
    for (def, field, ours) in cases {
        let listed = defs[def]["properties"][field]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{def}.{field}: no enum in the schema"));
        // A null there stands for an absent optional value, not a member.
        let theirs: BTreeSet<String> = listed.iter().filter_map(|v| v.as_str().map(String::from)).collect();
        assert_eq!(ours, theirs, "{def}.{field}");
    }
    let verdicts: BTreeSet<String> = defs["verdict"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(names(Verdict::ALL), verdicts, "verdict");
}

/// The baseline schema's workloads and figures are bench-core's.
#[test]
fn the_baseline_schemas_enums_are_bench_cores() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/bootbench.baseline-1.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let figure = &schema["$defs"]["figure"]["properties"];
    let listed = |field: &str| -> BTreeSet<String> {
        figure[field]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("figure.{field}: no enum"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let workloads: BTreeSet<String> = Workload::ALL.iter().map(|w| w.name().to_string()).collect();
    assert_eq!(workloads, listed("workload"), "workload");
    assert_eq!(names(Metric::ALL), listed("metric"), "metric");
}
