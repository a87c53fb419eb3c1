//! What the analysis tests share: targets, tests and documents to build
//! cases from.

use crate::document::result::{RunStatus, StackClass, TargetKind};
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::Metric;
use crate::document::result::{
    DirStats, Host, LatStats, ResultDoc, RunInfo, Samples, StackInfo, Status, StepResult, Summary, TargetInfo,
    TestResult, Tool, SCHEMA,
};
use crate::spec::{Params, Workload};

pub(crate) const MBS: f64 = 1e6;

pub(crate) fn disk(path: &str, size: u64) -> TargetInfo {
    TargetInfo {
        path: path.into(),
        kind: TargetKind::Block,
        size_bytes: size,
        logical_block_size: 512,
        physical_block_size: 512,
        ..TargetInfo::default()
    }
}

pub(crate) fn md(path: &str, level: &str, members: &[&str], layout: Option<&str>) -> TargetInfo {
    TargetInfo {
        stack: Some(StackInfo {
            kind: StackClass::Md,
            name: "a".into(),
            level: crate::vocab::names::from_name(level).expect("a stack level"),
            members: members.iter().map(|m| String::from(*m)).collect(),
            on: None,
            chunk_bytes: Some(512 << 10),
            layout: layout.map(String::from),
            options: BTreeMap::new(),
            notes: Vec::new(),
            mode: None,
        }),
        ..disk(path, 1 << 30)
    }
}

pub(crate) fn dm(path: &str, kind: &str, on: &str) -> TargetInfo {
    TargetInfo {
        stack: Some(StackInfo {
            kind: StackClass::Dm,
            name: "l".into(),
            level: crate::vocab::names::from_name(kind).expect("a stack level"),
            on: Some(on.into()),
            ..StackInfo::default()
        }),
        ..disk(path, 1 << 30)
    }
}

/// A test named after its workload with one figure set.
pub(crate) fn test(target: &str, workload: Workload, metric: Metric, v: f64) -> TestResult {
    let mut summary = Summary::default();
    match metric {
        Metric::ReadBps => summary.read_bytes_per_sec = Some(v),
        Metric::WriteBps => summary.write_bytes_per_sec = Some(v),
        Metric::ReadIops => summary.read_iops = Some(v),
        Metric::WriteIops => summary.write_iops = Some(v),
    }
    TestResult {
        name: workload.name().into(),
        workload,
        target: target.into(),
        params: Params::defaults(),
        status: Status::Ok,
        steps: Vec::new(),
        summary,
        zones: None,
        placement: None,
    }
}

pub(crate) fn with_qd(mut t: TestResult, qd: u32) -> TestResult {
    t.params.iodepth = qd;
    t
}

pub(crate) fn doc(targets: Vec<TargetInfo>, tests: Vec<TestResult>) -> ResultDoc {
    ResultDoc {
        schema: SCHEMA.into(),
        tool: Tool {
            name: "bootbench".into(),
            version: "0".into(),
        },
        run: RunInfo {
            profile: None,
            config_source: "t".into(),
            started_unix_ns: 0,
            duration_ns: 0,
            seed: 1,
            simulated: false,
            status: RunStatus::Ok,
            error: None,
            bound_ns: None,
            plan_id: None,
            cpu_dma_latency: None,
        },
        host: Host::default(),
        targets,
        tests,
        all_at_once: Vec::new(),
        analysis: Vec::new(),
        health_analysis: Vec::new(),
        acceptance: None,
        kernel_log: Vec::new(),
        kernel_log_status: None,
        attestation: None,
    }
}

pub(crate) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// One direction's figures: `ios` requests of these latencies, and these
/// per-interval rates (1 s intervals); the other figures 0.
pub(crate) fn dir_stats(ios: u64, lat_ns: LatStats, bytes_per_sec: &[f64]) -> DirStats {
    DirStats {
        bytes: ios * 4096,
        ios,
        bytes_per_sec: 0.0,
        iops: 0.0,
        lat_ns,
        clat_ns: None,
        slat_ns: None,
        samples: Samples {
            interval_ns: 1_000_000_000,
            bytes_per_sec: bytes_per_sec.to_vec(),
            iops: Vec::new(),
            cv: None,
        },
    }
}

/// A main step ([`crate::engine::plan::MAIN_LABEL`]) of `bs`-byte direct reads
/// over the first GiB, with these reads' figures.
pub(crate) fn main_step(bs: u32, read: DirStats) -> StepResult {
    StepResult {
        label: crate::engine::plan::MAIN_LABEL.into(),
        access: crate::io::Access::Direct,
        bs,
        iodepth: 1,
        jobs: 1,
        range_start: 0,
        range_end: 1 << 30,
        runtime_ns: 0,
        read: Some(read),
        write: None,
        flush: None,
        verified_bytes: None,
        filled_bytes: None,
        passes: Vec::new(),
        chosen_pass: None,
        lowest_lat_pass: None,
        lowest_lat_mean_ns: None,
        engine: None,
        members: Vec::new(),
        steady_state: Vec::new(),
    }
}
