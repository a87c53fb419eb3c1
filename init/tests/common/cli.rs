//! What the `cli*` tests share: running `bootbench-init`, reading its
//! output, the schemas, and configs in /dev/shm.

use std::path::Path;
use std::process::{Command, Output};

use bench_core::spec::Workload;
use serde_json::Value;

use super::ShmFile;

pub const BIN: &str = env!("CARGO_BIN_EXE_bootbench-init");
pub const PHRASE: &str = "I understand this destroys data";
pub const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
/// Size of every loop device's backing file.
pub const LOOP_BYTES: usize = 64 << 20;

pub fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run bootbench-init")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn schema(name: &str) -> Value {
    let p = Path::new(MANIFEST).join("..").join("schema").join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).expect("read schema")).expect("schema is JSON")
}

pub fn assert_valid(schema_name: &str, doc: &Value) {
    let s = schema(schema_name);
    let v = jsonschema::validator_for(&s).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .take(10)
        .collect();
    assert!(
        errors.is_empty(),
        "document does not match {schema_name}:\n{}",
        errors.join("\n")
    );
}

/// `list --json`'s entry for `dev`, checked against the result schema's
/// target (what `list --json` prints is an array of them).
/// `list --json --stacks`'s object, checked against the result schema's stacks.
pub fn assert_stacks_valid(st: &Value) {
    let mut s = schema("bootbench.result-1.schema.json");
    let defs = s["$defs"].take();
    let v = jsonschema::validator_for(&serde_json::json!({"$ref": "#/$defs/stacks", "$defs": defs}))
        .expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(st)
        .map(|x| format!("{x} at {}", x.instance_path))
        .take(10)
        .collect();
    assert!(
        errors.is_empty(),
        "the stacks do not match the schema:\n{}",
        errors.join("\n")
    );
}

pub fn listed(list: &Value, dev: &str) -> Value {
    let e = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == dev)
        .unwrap_or_else(|| panic!("{dev} not listed"))
        .clone();
    let mut s = schema("bootbench.result-1.schema.json");
    let defs = s["$defs"].take();
    let target = serde_json::json!({"$ref": "#/$defs/target", "$defs": defs});
    let v = jsonschema::validator_for(&target).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(&e)
        .map(|x| format!("{x} at {}", x.instance_path))
        .take(10)
        .collect();
    assert!(
        errors.is_empty(),
        "{dev}'s entry does not match the target schema:\n{}",
        errors.join("\n")
    );
    e
}

/// The results document on stdout of a successful run.
pub fn doc_of(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "stderr:\n{}", stderr(o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("stdout is exactly one JSON document");
    assert_valid("bootbench.result-1.schema.json", &doc);
    doc
}

pub fn tests_of<'a>(doc: &'a Value, target: &str) -> Vec<&'a Value> {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["target"] == target)
        .collect()
}

pub fn workload_writes(name: &str) -> bool {
    Workload::from_name(name).expect("known workload").writes()
}

/// A config file (removed on drop).
pub fn config(json: &Value) -> ShmFile {
    assert_valid("bootbench.config-1.schema.json", json);
    ShmFile::new("config.json", serde_json::to_string_pretty(json).unwrap().as_bytes())
}
