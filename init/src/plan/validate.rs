//! Validation: the tests a config asks for (profile, defaults, per-test
//! parameters, command-line overrides), checked field by field, and the
//! plan they become with the targets ([`plan_with`]). Every error is one line
//! naming the field path (`tests[2].bs`), the value and what is expected;
//! nothing is opened for writing.

use bench_core::engine::plan::{buffered, default_name, MIN_SAMPLE_INTERVAL};
use bench_core::engine::profile::{profile, PROFILES};
use bench_core::spec::{Params, SteadySpec, TestSpec, Workload};
use bench_core::vocab::units::{Bytes, Nanos};
use bench_core::vocab::url::{Template, Url};

use crate::safety::{self, Destructive, TargetRef};

use super::model::{
    action_for, Action, Described, Plan, PlanItem, PlannedStack, PlannedTarget, SelfTestPlan, DEFAULT_COUNTDOWN,
    DEFAULT_CPU_DMA_LATENCY_US, MAX_COUNTDOWN,
};
use super::raw::{err, parse, read_config_file, ConfigError, Origin, Overrides, RawConfig, RawParams, RawSelfTest};
use super::resolve::{
    alias_note, missing_target, on_disk, real_target, record_stacks, refuse_file_when_booted, resolve_destructive,
    resolve_stacks, same_target, sim_target, Lookup, MachineDisks, Resolved, DEFAULT_SIM_TARGETS,
};
use super::value::Flag;

/// Apply the parameters given in `raw` (only those) to `p`; `at` is the
/// field path of `raw` (`defaults`, `tests[2]`). Each value is already of
/// its type and range ([`RawParams`]); what is checked here is what one
/// value alone cannot say.
pub fn apply(p: &mut Params, raw: &RawParams, at: &str) -> Result<(), ConfigError> {
    let size = |v: &Option<super::value::Size>| v.as_ref().map(|s| Bytes(s.bytes));
    let dur = |v: &Option<super::value::Duration>| v.as_ref().map(|d| d.ns);
    p.bs = size(&raw.bs).unwrap_or(p.bs);
    p.size = size(&raw.size).or(p.size);
    p.offset = size(&raw.offset).unwrap_or(p.offset);
    p.length = size(&raw.length).or(p.length);
    p.zone_bytes = size(&raw.zone_bytes).unwrap_or(p.zone_bytes);
    p.max_bs = size(&raw.max_bs).unwrap_or(p.max_bs);
    // fio's runtime=0: no time bound, the test ends at its `size`
    // (bench-core's check then asks for one).
    p.runtime = match dur(&raw.runtime) {
        Some(Nanos(0)) => None,
        Some(ns) => Some(ns),
        None => p.runtime,
    };
    p.ramp_time = dur(&raw.ramp_time).unwrap_or(p.ramp_time);
    if let Some(v) = &raw.sample_interval {
        if v.ns < MIN_SAMPLE_INTERVAL {
            return err(format!(
                "{at}.sample_interval: {v} is out of range; expected at least 1ms (samples finer than fio's finest, \
                 log_avg_msec=1, are noise, and a step keeps at most {} of them)",
                bench_core::engine::stats::MAX_SAMPLES
            ));
        }
        p.sample_interval = v.ns;
    }
    p.pause = dur(&raw.pause).unwrap_or(p.pause);
    if let Some(v) = &raw.iodepth {
        p.iodepth = v.get32();
    }
    if let Some(v) = &raw.jobs {
        p.jobs = v.get32();
    }
    if let Some(v) = &raw.points {
        p.points = v.get32();
    }
    if let Some(v) = &raw.passes {
        p.passes = v.get32();
    }
    if let Some(v) = &raw.warmup {
        p.warmup = v.get32();
    }
    if let Some(v) = &raw.rwmixread {
        p.rwmixread = u8::try_from(v.n).unwrap_or(100);
    }
    if let Some(v) = raw.rwmix_order {
        p.rwmix_order = v.0;
    }
    if let Some(v) = &raw.flush_every {
        p.flush_every = v.n;
    }
    if let Some(v) = &raw.seed {
        p.seed = v.n;
    }
    if let Some(v) = &raw.fsync_freq {
        p.fsync_freq = v.n;
    }
    if let Some(v) = &raw.min_ios {
        p.min_ios = v.n;
    }
    if let Some(v) = &raw.file_num {
        p.file_num = v.n;
    }
    if let Some(v) = &raw.sqthread_poll_cpu {
        p.sqthread_poll_cpu = Some(v.get32());
    }
    if let Some(v) = &raw.iodepth_batch_submit {
        p.iodepth_batch_submit = v.get32();
    }
    if let Some(v) = &raw.cpus_allowed {
        p.cpus_allowed = Some(v.0.clone());
    }
    if let Some(v) = raw.cpus_allowed_policy {
        p.cpus_allowed_policy = v.0;
    }
    if let Some(v) = raw.placement {
        p.placement = v.0;
    }
    let flag = |v: Option<Flag>, old: bool| v.map_or(old, |f| f.0);
    p.verify = flag(raw.verify, p.verify);
    p.direct = flag(raw.direct, p.direct);
    p.end_fsync = raw.end_fsync.map(|f| f.0).or(p.end_fsync);
    p.end_close = flag(raw.end_close, p.end_close);
    p.fill = flag(raw.fill, p.fill);
    p.norandommap = flag(raw.norandommap, p.norandommap);
    p.hipri = flag(raw.hipri, p.hipri);
    p.sqthread_poll = flag(raw.sqthread_poll, p.sqthread_poll);
    p.read_digest = flag(raw.read_digest, p.read_digest);
    if let Some(v) = raw.ioengine {
        p.ioengine = Some(v.0);
    }
    if let Some(v) = raw.cmd_type {
        p.cmd_type = Some(v.0);
    }
    if let Some(v) = &raw.sq_thread_idle {
        // io_uring_params' sq_thread_idle: a u32 of milliseconds.
        let ms = v.ns.0 / 1_000_000;
        if v.ns.0 % 1_000_000 != 0 || ms == 0 || ms > u64::from(u32::MAX) {
            return err(format!(
                "{at}.sq_thread_idle: {v} is out of range; expected whole milliseconds from 1ms to 4294967295ms \
                 (the kernel's unit)"
            ));
        }
        p.sq_thread_idle = Some(v.ns);
    }
    apply_steady(p, raw, at)
}

/// fio's steady-state options: `ss` with `ss_dur` (given together, or
/// `ss_dur` where an `ss` was given before, in `defaults`) and the optional
/// `ss_ramp`, `ss_interval` (1 s) and `ss_max` (`ss_ramp` plus ten windows).
fn apply_steady(p: &mut Params, raw: &RawParams, at: &str) -> Result<(), ConfigError> {
    let dur = |v: &Option<super::value::Duration>| v.as_ref().map(|d| d.ns);
    let given = [
        ("ss_dur", raw.ss_dur.is_some()),
        ("ss_ramp", raw.ss_ramp.is_some()),
        ("ss_interval", raw.ss_interval.is_some()),
        ("ss_max", raw.ss_max.is_some()),
    ];
    let Some(ss) = raw.ss.map(|a| a.0).or(p.steady.map(|s| s.ss)) else {
        if let Some((key, _)) = given.iter().find(|(_, g)| *g) {
            return err(format!(
                "{at}.{key}: given without ss; expected ss too, the steady-state criterion (as fio's, \
                 e.g. \"iops_slope:0.1%\")"
            ));
        }
        return Ok(());
    };
    let Some(ss_dur) = dur(&raw.ss_dur).or(p.steady.map(|s| s.ss_dur)) else {
        return err(format!(
            "{at}.ss: {ss} without ss_dur; expected ss_dur too, the window over which the criterion is judged \
             (as fio's, e.g. \"30s\")"
        ));
    };
    let ss_ramp = dur(&raw.ss_ramp).or(p.steady.map(|s| s.ss_ramp)).unwrap_or(Nanos(0));
    let ss_interval = dur(&raw.ss_interval)
        .or(p.steady.map(|s| s.ss_interval))
        .unwrap_or(Nanos::from_secs(1));
    let ss_max = dur(&raw.ss_max)
        .or(p
            .steady
            .filter(|_| raw.ss_dur.is_none() && raw.ss_ramp.is_none())
            .map(|s| s.ss_max))
        .unwrap_or(Nanos(
            ss_ramp
                .0
                .saturating_add(ss_dur.0.saturating_mul(DEFAULT_SS_MAX_WINDOWS)),
        ));
    p.steady = Some(SteadySpec {
        ss,
        ss_dur,
        ss_ramp,
        ss_interval,
        ss_max,
    });
    Ok(())
}

/// `ss_max`'s default: `ss_ramp` plus this many windows (`ss_dur`).
pub const DEFAULT_SS_MAX_WINDOWS: u64 = 10;

/// A parameter that does not apply to a test: an error naming `key` if the
/// test gives it itself (`explicit`) or `defaults.key` if it came from
/// there and `from_defaults_too`; else dropped (`Ok(false)`, the caller
/// clears it). `Ok(true)`: it applies.
fn applies(
    ok: bool,
    key: &str,
    at: &str,
    explicit: &[&str],
    why: impl FnOnce(&str) -> String,
) -> Result<bool, ConfigError> {
    if ok {
        return Ok(true);
    }
    if explicit.contains(&key) {
        return err(why(&format!("{at}.{key}")));
    }
    Ok(false)
}

/// fio's ioengine and its options: `psync` has one request in flight and
/// no ring; `io_uring_cmd` is O_DIRECT (the passthrough has no page
/// cache) and takes `cmd_type` (`nvme` when not given); `sq_thread_idle`
/// is the idle time of `sqthread_poll`'s thread.
fn check_ioengine(params: &mut Params, workload: Workload, at: &str, explicit: &[&str]) -> Result<(), ConfigError> {
    use bench_core::spec::{CmdType, IoEngine};
    let engine = params.ioengine;
    if engine == Some(IoEngine::Psync) {
        let ring = [
            ("iodepth", params.iodepth > 1),
            ("hipri", params.hipri),
            ("sqthread_poll", params.sqthread_poll),
        ];
        if let Some((key, _)) = ring.into_iter().find(|(_, on)| *on) {
            let value = if key == "iodepth" {
                params.iodepth.to_string()
            } else {
                "true".to_string()
            };
            let ok = applies(false, "ioengine", at, explicit, |f| {
                format!(
                    "{f}: \"psync\", but {key} is {value}; expected ioengine \"io_uring\" (or none) for {key} \
                     {value}: psync has one request in flight and no ring, as fio's"
                )
            })?;
            if !ok {
                params.ioengine = None;
            }
        }
    }
    if engine == Some(IoEngine::IoUringCmd) {
        let direct = !buffered(workload, params);
        if !applies(direct, "ioengine", at, explicit, |f| {
            format!(
                "{f}: \"io_uring_cmd\", but {} reads through the page cache; expected direct I/O: NVMe \
                 passthrough has no page cache",
                workload.name()
            )
        })? {
            params.ioengine = None;
        }
    }
    if params.ioengine == Some(IoEngine::IoUringCmd) {
        params.cmd_type = Some(params.cmd_type.unwrap_or(CmdType::Nvme));
    } else if params.cmd_type.is_some() {
        applies(false, "cmd_type", at, explicit, |f| {
            format!(
                "{f}: {:?}, but ioengine is not \"io_uring_cmd\"; expected ioengine \"io_uring_cmd\" \
                 (cmd_type is the passthrough's command set)",
                params.cmd_type.map_or("", CmdType::name)
            )
        })?;
        params.cmd_type = None;
    }
    if params.sq_thread_idle.is_some() && !params.sqthread_poll {
        applies(false, "sq_thread_idle", at, explicit, |f| {
            format!(
                "{f}: {}ms, but sqthread_poll is false; expected sqthread_poll true (the idle time is that \
                 of the kernel's submission thread, which only sqthread_poll starts)",
                params.sq_thread_idle.map_or(0, |n| n.0 / 1_000_000)
            )
        })?;
        params.sq_thread_idle = None;
    }
    Ok(())
}

/// The checks between a test's parameters, once all are applied: fio's
/// io_uring options need what they act on. `at` is the test's field path;
/// `explicit` the keys the test itself gives (a key from `defaults` that
/// does not apply to this test is dropped instead, as `verify`).
fn check_engine(params: &mut Params, workload: Workload, at: &str, explicit: &[&str]) -> Result<(), ConfigError> {
    check_ioengine(params, workload, at, explicit)?;
    if params.hipri && buffered(workload, params) {
        if explicit.contains(&"hipri") {
            let why = if matches!(workload, Workload::CachedRead | Workload::BufferedRead) {
                format!("{} is always buffered (through the page cache)", workload.name())
            } else {
                "direct is false (through the page cache)".to_string()
            };
            return err(format!(
                "{at}.hipri: true, but {why}; expected hipri false or direct I/O: polled completions \
                 (IORING_SETUP_IOPOLL) are for O_DIRECT requests only, as fio's hipri with direct=1"
            ));
        }
        params.hipri = false;
    }
    if params.sqthread_poll_cpu.is_some() && !params.sqthread_poll {
        let field = if explicit.contains(&"sqthread_poll_cpu") {
            format!("{at}.sqthread_poll_cpu")
        } else if explicit.contains(&"sqthread_poll") {
            // The test turned sqthread_poll off: the defaults' CPU is moot.
            params.sqthread_poll_cpu = None;
            return Ok(());
        } else {
            "defaults.sqthread_poll_cpu".to_string()
        };
        return err(format!(
            "{field}: {}, but sqthread_poll is false; expected sqthread_poll true (the CPU is that of \
             the kernel's submission thread, which only sqthread_poll starts)",
            params.sqthread_poll_cpu.unwrap_or_default()
        ));
    }
    Ok(())
}

/// The tests of a config, in order: the profile's then `tests`, with
/// `seed` and `defaults` applied and names made unique.
pub fn tests_of(raw: &RawConfig, profile_name: Option<&str>) -> Result<Vec<(TestSpec, Origin)>, ConfigError> {
    let mut out: Vec<(TestSpec, Origin)> = Vec::new();
    let defaults = raw.defaults.as_deref().cloned().unwrap_or_default();
    let mut base = Params::defaults();
    if let Some(seed) = raw.seed {
        base.seed = seed;
    }
    apply(&mut base, &defaults, "defaults")?;
    if let Some(name) = profile_name {
        let Some(tests) = profile(name) else {
            return err(format!(
                "profile: {name:?} is not a profile; expected one of {}",
                PROFILES.join(", ")
            ));
        };
        for (i, mut spec) in tests.into_iter().enumerate() {
            if let Some(seed) = raw.seed {
                spec.params.seed = seed;
            }
            apply(&mut spec.params, &defaults, "defaults")?;
            // `verify` in the defaults applies to the write tests only,
            // `hipri` to the direct ones.
            spec.params.verify &= spec.workload.writes();
            check_engine(&mut spec.params, spec.workload, "defaults", &[])?;
            out.push((spec, Origin::Profile(i)));
        }
    }
    for (i, t) in raw.tests.iter().enumerate() {
        let at = format!("tests[{i}]");
        let workload: Workload = t.workload;
        let mut params = base.clone();
        let given = t.params();
        apply(&mut params, &given, &at)?;
        check_engine(&mut params, workload, &at, &given.given())?;
        if t.verify == Some(Flag(true)) && !workload.writes() {
            return err(format!(
                "{at}.verify: true, but {} does not write; expected false (only a write workload verifies what it wrote)",
                workload.name()
            ));
        }
        params.verify &= workload.writes();
        let mut spec = TestSpec {
            name: String::new(),
            workload,
            params,
        };
        spec.name = match &t.name {
            Some(n) if n.trim().is_empty() => return err(format!("{at}.name: {n:?} is empty; expected a name")),
            Some(n) => n.clone(),
            None => default_name(&spec),
        };
        out.push((spec, Origin::User(i)));
    }
    if out.is_empty() {
        return err(
            "nothing to run: give a profile (\"profile\" in the config or --profile NAME) or \"tests\"; profiles: "
                .to_string()
                + &PROFILES.join(", "),
        );
    }
    // Unique names: a repeated name gets _2, _3, ...
    let mut seen = std::collections::HashMap::<String, u32>::new();
    for (spec, _) in &mut out {
        let n = seen.entry(spec.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            spec.name = format!("{}_{}", spec.name, n);
        }
    }
    Ok(out)
}

/// Load a config file (or none: `--profile` alone) and validate it into a plan.
pub fn load(config: Option<&str>, ov: &Overrides) -> Result<Plan, ConfigError> {
    load_with_id(config, ov).map(|(plan, _)| plan)
}

/// [`load`], with the plan's id ([`Plan::id`]): the `{run}` of the live
/// command's results URL.
pub fn load_with_id(config: Option<&str>, ov: &Overrides) -> Result<(Plan, String), ConfigError> {
    let (raw, source) = match config {
        Some(path) => {
            let text = match read_config_file(std::path::Path::new(path)) {
                Ok(Some(t)) => t,
                Ok(None) => return err(format!("--config: {path:?} does not exist; expected a config file")),
                Err(e) => return err(format!("--config: {e}")),
            };
            (parse(&text, path)?, path.to_string())
        }
        None => (RawConfig::default(), "command-line".to_string()),
    };
    let plan = validate(&raw, &source, ov)?;
    let id = plan.id(&raw);
    Ok((plan, id))
}

/// What `bootbench-init validate --booted` says of a config: checked as a
/// booted run will check it (the stick's rules: `destructive` names disks by
/// serial or WWN, files are no targets), on whatever machine this is (a
/// laptop with the stick in it). A disk it names by serial or WWN that is
/// not here is said to be checked when the server boots; without `targets`
/// (every disk of the server) the tests are planned on a nominal 1 TB disk.
/// Then what it will and will not write. The lines to print.
pub fn check_for_boot(raw: &RawConfig, source: &str, ov: &Overrides) -> Result<Vec<String>, ConfigError> {
    let mut out = vec![format!(
        "checked as the booted run will check it; disks named by serial or WWN that are not on this machine \
         are checked when the server boots"
    )];
    // What `existing` names is on the server's disks: its entries and key
    // files are checked here, the rest planned without it.
    let existing = match &raw.existing {
        Some(want) => super::existing::check_for_boot(want, &config_dir(source, true))?,
        None => Vec::new(),
    };
    let without;
    let raw = if raw.existing.is_some() {
        without = RawConfig {
            existing: None,
            ..raw.clone()
        };
        &without
    } else {
        raw
    };
    let every_disk = raw.targets.is_empty() && ov.targets.is_empty() && raw.arrays.is_empty() && raw.layers.is_empty();
    if every_disk {
        let nominal = Overrides {
            simulate: true,
            ..ov.clone()
        };
        let refs = vec![(
            TargetRef::Path("sim:ssd:1T".to_string()),
            "the server's disks".to_string(),
        )];
        let plan = plan_targets(raw, source, &nominal, Some(&refs), &[], false)?;
        out.push(super::plan_header(&plan, false));
        out.push(
            "targets: every disk of the server but the boot stick (found when it boots); each gets these tests \
             (planned here on a nominal 1 TB disk):"
                .to_string(),
        );
        out.extend(super::test_lines(&plan, 0, Described::ForTheServer));
    } else {
        let plan = plan_targets(raw, source, ov, None, &[], true)?;
        out.extend(super::describe_plan_for(&plan, Described::ForTheServer));
    }
    out.extend(existing);
    out.extend(write_summary(raw));
    Ok(out)
}

/// What a booted run of `raw` will write, in words.
fn write_summary(raw: &RawConfig) -> Vec<String> {
    let Some(d) = &raw.destructive else {
        return vec![
            "writes: none: the config has no \"destructive\" section; every write test is skipped".to_string(),
        ];
    };
    if d.confirm.as_deref() != Some(safety::CONFIRM_PHRASE) {
        return vec![format!(
            "writes: none: destructive.confirm is {}; expected exactly \"{}\"",
            d.confirm
                .as_ref()
                .map_or_else(|| "missing".to_string(), |c| format!("{c:?}")),
            safety::CONFIRM_PHRASE
        )];
    }
    let mut out = Vec::new();
    for (i, t) in d.targets.iter().enumerate() {
        let who = t
            .to_ref(&format!("destructive.targets[{i}]"))
            .map_or_else(|e| e.0, |r| r.to_string());
        out.push(if d.allow_overwrite_signatures {
            format!("writes: {who}: written at boot, whatever it holds (allow_overwrite_signatures)")
        } else {
            format!(
                "writes: {who}: written at boot only if it holds no signature libblkid knows and no data \
                 (else its write tests are skipped, saying why)"
            )
        });
    }
    if out.is_empty() {
        out.push("writes: none: destructive.targets names no disk".to_string());
    } else {
        let secs = countdown(Some(d)).map_or(0, |c| c.0.div_ceil(1_000_000_000));
        out.push(if secs == 0 {
            "writes: no countdown (destructive.countdown is 0): the run begins at once".to_string()
        } else {
            format!("writes: the console names the disks it may write and counts {secs} s down before the run begins")
        });
    }
    out
}

/// Validate a parsed config into a plan: its targets (the command line's
/// replace the config's), see [`plan_with`].
pub fn validate(raw: &RawConfig, source: &str, ov: &Overrides) -> Result<Plan, ConfigError> {
    plan_targets(raw, source, ov, None, &[], false)
}

/// The targets a config and command line name, each with the field path
/// that named it: `--target`s if any, else the config's `targets`, else the
/// default simulated disks with `--simulate`; none is an error.
pub fn target_refs(raw: &RawConfig, ov: &Overrides) -> Result<Vec<(TargetRef, String)>, ConfigError> {
    let mut refs: Vec<(TargetRef, String)> = Vec::new();
    if ov.targets.is_empty() {
        for (i, t) in raw.targets.iter().enumerate() {
            let at = format!("targets[{i}]");
            refs.push((t.to_ref(&at)?, at));
        }
    } else {
        for t in &ov.targets {
            if t.is_empty() {
                return err("--target: \"\" is not a target; expected a path");
            }
            refs.push((TargetRef::Path(t.clone()), "--target".to_string()));
        }
    }
    let stacked = !(raw.arrays.is_empty() && raw.layers.is_empty() && raw.existing.is_none());
    if refs.is_empty() && ov.simulate && !stacked {
        refs = DEFAULT_SIM_TARGETS
            .iter()
            .map(|p| (TargetRef::Path((*p).to_string()), "--simulate".to_string()))
            .collect();
    }
    if refs.is_empty() && !stacked {
        return err("targets: none given; expected \"targets\" in the config or --target PATH");
    }
    Ok(refs)
}

/// Validate a parsed config with an explicit list of targets (each with the
/// field path that named it) into a plan, for the unattended run. `never`
/// lists disks that may not be targets (the boot stick): a target on one of
/// them is an error. `on_finish` is checked too.
///
/// A disk the config names (by path, serial or WWN, as a target or an
/// array member) that this machine lacks is not an error here: its target
/// is planned as absent ([`PlannedTarget::missing`]), its tests and those
/// of any array or layer on it are skipped with the reason, and the rest
/// runs. (The live command, through [`validate`], refuses it as bad input.)
pub fn plan_with(
    raw: &RawConfig,
    source: &str,
    ov: &Overrides,
    refs: &[(TargetRef, String)],
    never: &[String],
) -> Result<Plan, ConfigError> {
    plan_targets(raw, source, ov, Some(refs), never, true)
}

/// [`plan_with`] when `booted` (an absent disk is not an error, and
/// `destructive` must name disks by serial or WWN), else the live
/// command's plan. Without `refs`, the targets are the command line's or
/// the config's ([`target_refs`]), looked up after the tests, so that a
/// test's error comes before a target's.
pub(super) fn plan_targets(
    raw: &RawConfig,
    source: &str,
    ov: &Overrides,
    refs: Option<&[(TargetRef, String)]>,
    never: &[String],
    booted: bool,
) -> Result<Plan, ConfigError> {
    let profile_name = ov.profile.clone().or_else(|| raw.profile.clone());
    // The tests first, so that their errors come before target errors.
    let tests = tests_of(raw, profile_name.as_deref())?;
    let acceptance = super::acceptance::rules(raw.acceptance.as_deref(), &tests, &config_dir(source, booted))?;
    let named;
    let refs = match refs {
        Some(r) => r,
        None => {
            named = target_refs(raw, ov)?;
            &named
        }
    };
    let (results_url, metrics_url) = check_outputs(raw)?;
    if refs.is_empty() && raw.arrays.is_empty() && raw.layers.is_empty() && raw.existing.is_none() {
        return err("targets: none; expected at least one disk to benchmark");
    }
    let machine = MachineDisks::default();
    let (destructive, unresolved) = match &raw.destructive {
        None => (None, None),
        Some(d) => {
            let (d, why) = resolve_destructive(d, ov.simulate, booted, &machine)?;
            (Some(d), why)
        }
    };
    let cx = Lookup {
        ov,
        never,
        booted,
        machine: &machine,
    };
    let mut targets = named_targets(refs, &cx)?;
    let (mut stacks, mut used) = resolve_stacks(raw, &cx, &mut targets)?;
    if let Some(want) = &raw.existing {
        let taken: Vec<String> = stacks.iter().map(|s| s.name.clone()).collect();
        stacks.extend(super::existing::existing_stacks(
            want,
            &cx,
            &mut targets,
            &mut used,
            &taken,
            &config_dir(source, booted),
        )?);
    }
    record_stacks(&mut targets, &stacks);
    // A config that names a disk this machine lacks does not match the
    // machine: it runs (reads), but writes nothing anywhere.
    let withheld = ov.withhold_writes.clone().or_else(|| {
        targets
            .iter()
            .find_map(|t| t.missing.as_ref())
            .or(unresolved.as_ref())
            .map(|why| {
                format!("writes withheld: the config names a disk this machine lacks ({why}); a config that does not match the machine writes nothing")
            })
    });
    let mut items = Vec::new();
    for ti in 0..targets.len() {
        let skip = grant_target(
            &mut targets,
            ti,
            &stacks,
            &tests,
            destructive.as_ref(),
            withheld.as_ref(),
            raw.burn_in.is_some() || raw.precondition.is_some(),
        );
        items.extend(target_items(&targets[ti], ti, &tests, skip)?);
    }
    let test_deadline = test_deadline(raw)?;
    let self_test = self_test_plan(raw, &targets)?;
    let surface_scan = super::pass_check::scan_plan(raw.surface_scan.as_ref(), &targets)?;
    let burn_in = super::pass_check::burn_plan(raw.burn_in.as_ref(), &targets, destructive.as_ref())?;
    let precondition = super::pass_check::precondition_plan(raw.precondition.as_ref(), &targets, destructive.as_ref())?;
    let mut plan = Plan {
        profile: profile_name,
        config_source: source.to_string(),
        seed: raw.seed.unwrap_or(Params::defaults().seed),
        simulated: ov.simulate,
        targets,
        items,
        stacks,
        all_at_once: raw.all_at_once,
        scaling: scaling(raw)?,
        parallel: raw.parallel,
        test_deadline,
        serial_ports: raw.serial_ports.clone(),
        results_url,
        metrics_url,
        metrics_interval: metrics_interval(raw)?,
        acceptance,
        self_test,
        cpu_dma_latency: raw.cpu_dma_latency.map_or(Some(DEFAULT_CPU_DMA_LATENCY_US), |w| w.0),
        surface_scan,
        burn_in,
        precondition,
        countdown: countdown(raw.destructive.as_deref())?,
    };
    never_write_existing(&mut plan);
    Ok(plan)
}

/// `test_deadline`, checked: above zero.
fn test_deadline(raw: &RawConfig) -> Result<Option<Nanos>, ConfigError> {
    match &raw.test_deadline {
        None => Ok(None),
        Some(v) if v.ns.0 > 0 => Ok(Some(v.ns)),
        Some(v) => err(format!(
            "test_deadline: {v} is zero; expected a duration such as \"5s\""
        )),
    }
}

/// An existing array or volume is never written, nor anything beneath
/// it, whatever `destructive` says: their data is the user's.
fn never_write_existing(plan: &mut Plan) {
    let existing: Vec<(usize, Vec<usize>, (&str, String))> = plan
        .stacks
        .iter()
        .filter_map(|st| Some((st.target, st.under(), st.never_written()?)))
        .collect();
    let own: Vec<usize> = existing.iter().map(|(t, ..)| *t).collect();
    for (target, under, (why, why_under)) in existing {
        // An existing array beneath a volume keeps its own reason.
        for m in under.into_iter().filter(|m| !own.contains(m)) {
            super::model::withdraw_writes(plan, m, &why_under);
        }
        super::model::withdraw_writes(plan, target, why);
    }
}

/// `scaling`, checked: only with `all_at_once`.
fn scaling(raw: &RawConfig) -> Result<bool, ConfigError> {
    if raw.scaling && !raw.all_at_once {
        return err(
            "scaling: true without all_at_once; expected all_at_once: true too (scaling runs each all-at-once test \
             on 2, 4, 8, ... of the disks first)",
        );
    }
    Ok(raw.scaling)
}

/// `destructive.countdown`, checked: [`DEFAULT_COUNTDOWN`] when not
/// given, at most [`MAX_COUNTDOWN`]; 0 without a `destructive` section.
fn countdown(d: Option<&super::raw::RawDestructive>) -> Result<Nanos, ConfigError> {
    let Some(d) = d else { return Ok(Nanos(0)) };
    match &d.countdown {
        None => Ok(DEFAULT_COUNTDOWN),
        Some(v) if v.ns <= MAX_COUNTDOWN => Ok(v.ns),
        Some(v) => err(format!(
            "destructive.countdown: {v} is out of range; expected a duration from 0 to 10m (the console counts it \
             down before a run that may write)"
        )),
    }
}

/// The directory of the config file named `source` (files the config
/// names, such as a baseline, are found from there); for a config that is
/// no file (fetched from a URL, built in), /etc when booted (where
/// `bootbench-image initramfs --baseline` puts a baseline), else the
/// working directory.
pub(super) fn config_dir(source: &str, booted: bool) -> std::path::PathBuf {
    let p = std::path::Path::new(source);
    match p.parent() {
        Some(d) if p.is_file() && !d.as_os_str().is_empty() => d.to_path_buf(),
        _ if booted => std::path::PathBuf::from("/etc"),
        _ => std::path::PathBuf::from("."),
    }
}

/// The config's `self_test` checked against the run's targets: each serial
/// in `disks` non-empty, once, and a target's; `max_wait` not zero.
fn self_test_plan(raw: &RawConfig, targets: &[PlannedTarget]) -> Result<Option<SelfTestPlan>, ConfigError> {
    let Some(RawSelfTest(o)) = &raw.self_test else {
        return Ok(None);
    };
    if let Some(d) = &o.disks {
        super::pass_check::check_disks("self_test.disks", d, targets)?;
    }
    let max_wait = match &o.max_wait {
        None => SelfTestPlan::default_wait(o.kind),
        Some(v) if v.ns.0 > 0 => v.ns,
        Some(v) => {
            return err(format!(
                "self_test.max_wait: {v} is zero; expected a duration such as \"30m\""
            ))
        }
    };
    Ok(Some(SelfTestPlan {
        kind: o.kind,
        disks: o.disks.clone(),
        max_wait,
    }))
}

/// The config's outputs checked: its `results_url` template and
/// `metrics_url`, each parsed once (returned), and its serial ports' names.
fn check_outputs(raw: &RawConfig) -> Result<(Option<Template>, Option<Url>), ConfigError> {
    let results_url = match &raw.results_url {
        Some(t) => match Template::parse(t) {
            Ok(t) => Some(t),
            Err(e) => return err(format!("results_url: {e}")),
        },
        None => None,
    };
    let metrics_url = match &raw.metrics_url {
        Some(u) => match crate::results::metrics::check_url(u) {
            Ok(u) => Some(u),
            Err(e) => return err(format!("metrics_url: {e}")),
        },
        None => None,
    };
    for (i, p) in raw.serial_ports.iter().flatten().enumerate() {
        if !crate::results::serial::is_port_name(p) {
            return err(format!(
                "serial_ports[{i}]: {p:?} is not a serial port; expected a name like \"ttyS1\""
            ));
        }
    }
    Ok((results_url, metrics_url))
}

/// The config's `metrics_interval`: 1 s to 1 h ([`crate::results::metrics::INTERVALS`]).
fn metrics_interval(raw: &RawConfig) -> Result<std::time::Duration, ConfigError> {
    use crate::results::metrics::{DEFAULT_INTERVAL, INTERVALS};
    let Some(v) = &raw.metrics_interval else {
        return Ok(DEFAULT_INTERVAL);
    };
    let d = std::time::Duration::from_nanos(v.ns.0);
    if !INTERVALS.contains(&d) {
        return err(format!(
            "metrics_interval: {v} is out of range; expected a duration from {} s to {} s, such as \"10s\"",
            INTERVALS.start().as_secs(),
            INTERVALS.end().as_secs()
        ));
    }
    Ok(d)
}

/// The targets `refs` name, each resolved (simulated, found, or absent
/// where a booted run allows it), none on the boot stick, none twice.
fn named_targets(refs: &[(TargetRef, String)], cx: &Lookup<'_>) -> Result<Vec<PlannedTarget>, ConfigError> {
    let mut targets: Vec<PlannedTarget> = Vec::new();
    for (r, at) in refs {
        let t = if cx.ov.simulate {
            sim_target(r, at)?
        } else {
            match real_target(r, at, cx.machine)? {
                Resolved::Found(t) => *t,
                // A path given on the command line is bad input.
                Resolved::Absent(why) if !cx.booted || at == "--target" => return err(why),
                Resolved::Absent(why) => missing_target(r, why),
            }
        };
        refuse_file_when_booted(&t, at, cx.booted)?;
        if let Some(n) = cx.never.iter().find(|n| on_disk(&t.info.path, n)) {
            return err(format!(
                "{at}: {:?} is on the boot stick {n}; expected another disk (the stick is never a target)",
                t.info.path
            ));
        }
        if let Some(o) = targets.iter().find(|o| same_target(o, &t)) {
            return err(format!(
                "{at}: {:?}{} is named twice; expected each target once",
                t.info.path,
                alias_note(o, &t.info.path)
            ));
        }
        targets.push(t);
    }
    Ok(targets)
}

/// Decide whether target `ti` may be written: a stack only if every disk
/// beneath it may (the refusal names the first that may not), a disk by
/// its grant ([`safety::grant`], asked for when a test writes or the
/// config has a `burn_in` or a `precondition`) unless writes are `withheld`. `Some`
/// reason when its tests are all skipped instead: the disk is absent, or
/// a disk beneath the stack is.
fn grant_target(
    targets: &mut [PlannedTarget],
    ti: usize,
    stacks: &[PlannedStack],
    tests: &[(TestSpec, Origin)],
    destructive: Option<&Destructive>,
    withheld: Option<&String>,
    writes_whole_disks: bool,
) -> Option<String> {
    let stack = stacks.iter().find(|s| s.target == ti);
    let absent = match stack {
        Some(st) => st
            .disks
            .iter()
            .find_map(|d| targets[*d].missing.as_ref())
            .map(|why| format!("not assembled: a disk beneath {} is absent: {why}", st.name)),
        None => targets[ti].missing.as_ref().map(|why| format!("not run: {why}")),
    };
    if absent.is_some() {
        return absent;
    }
    // A fill writes too: a read test that fills asks for the grant, as do
    // a burn-in and preconditioning.
    let wants_write = writes_whole_disks || tests.iter().any(|(s, _)| s.writes());
    if let Some(st) = stack {
        let refused = st.disks.iter().find(|d| !targets[**d].info.writable);
        let refusal = refused.map(|d| {
            let m = &targets[*d].info;
            format!(
                "writes refused: member {} is not writable ({})",
                m.path,
                m.write_refusal.as_deref().unwrap_or("writes refused")
            )
        });
        let t = &mut targets[ti];
        t.info.writable = refused.is_none();
        if wants_write {
            t.info.write_refusal = refusal;
        }
        return None;
    }
    let t = &mut targets[ti];
    if let (true, Some(why)) = (wants_write && t.sim.is_none(), withheld) {
        t.info.write_refusal = Some(why.clone());
    } else if let (true, Some(id)) = (wants_write, t.id.as_ref()) {
        match safety::grant(destructive, &t.info.path, id, t.pin.as_ref()) {
            Ok(g) => t.grant = Some(g),
            Err(r) => t.info.write_refusal = Some(r.to_string()),
        }
    }
    t.info.writable = t.sim.is_some() || t.grant.is_some();
    None
}

/// True for a test that writes at random offsets (a random write or mix):
/// on a host-managed disk, it runs only in conventional zones.
fn writes_randomly(spec: &TestSpec) -> bool {
    match spec.workload {
        bench_core::spec::Workload::RandWrite => true,
        bench_core::spec::Workload::RandRw => spec.params.rwmixread < 100,
        _ => false,
    }
}

/// True for a host-managed disk that had no conventional zone when it was
/// found (its zone count read).
fn no_conventional_zones(t: &bench_core::document::result::TargetInfo) -> bool {
    host_managed(t)
        && t.zoned
            .as_ref()
            .and_then(|z| z.before.as_ref())
            .is_some_and(|s| s.conventional_zones == 0)
}

/// True for a host-managed zoned disk.
pub fn host_managed(t: &bench_core::document::result::TargetInfo) -> bool {
    t.zoned
        .as_ref()
        .is_some_and(|z| z.model == bench_core::document::result::ZoneModel::HostManaged)
}

/// Each test on target `t` (index `ti`): skipped for `skip`, else run or
/// skipped as it fits the target ([`action_for`]). A test of the user's
/// that does not fit is an error naming its field; a profile's is
/// skipped there.
fn target_items(
    t: &PlannedTarget,
    ti: usize,
    tests: &[(TestSpec, Origin)],
    skip: Option<String>,
) -> Result<Vec<PlanItem>, ConfigError> {
    let mut items = Vec::new();
    for (spec, origin) in tests {
        let action = match &skip {
            Some(why) => Action::Skip(why.clone()),
            None => match action_for(spec, &t.geometry, t.info.writable, t.info.write_refusal.as_deref()) {
                // A host-managed disk's tests are laid onto its zones just
                // before each runs (`run::zones::fit`, the zones as they
                // stand then); a random write on a disk without any
                // conventional zone is refused now already.
                Ok(Action::Run(_)) if writes_randomly(spec) && no_conventional_zones(&t.info) => {
                    Action::Skip(bench_core::device::zone_area::NO_CONVENTIONAL.to_string())
                }
                Ok(a) => a,
                Err(e) => match origin {
                    Origin::User(i) => {
                        let field = e.field();
                        return err(format!("tests[{i}].{field} ({}) on {}: {e}", spec.name, t.info.path));
                    }
                    Origin::Profile(_) => Action::Skip(format!("does not fit this target: {e}")),
                },
            },
        };
        items.push(PlanItem {
            target: ti,
            spec: spec.clone(),
            action,
        });
    }
    Ok(items)
}

#[cfg(test)]
mod zoned_tests {
    use super::*;
    use bench_core::document::result::{ZoneModel, ZoneSummary, Zoned};

    /// On a host-managed disk without conventional zones, random writes
    /// and mixes are skipped when the plan is made, naming the zone model;
    /// every other test runs (laid onto the zones when it starts). With a
    /// conventional zone, or on a host-aware disk, every test runs.
    #[test]
    fn random_writes_are_refused_on_a_host_managed_disk_without_conventional_zones() {
        let g = bench_core::io::Geometry {
            size: 64 << 20,
            logical_block: 512,
            physical_block: 512,
        };
        let tests: Vec<(TestSpec, Origin)> = bench_core::engine::profile::profile("quick")
            .expect("quick")
            .into_iter()
            .enumerate()
            .map(|(i, t)| (t, Origin::User(i)))
            .collect();
        assert!(tests.iter().any(|(t, _)| writes_randomly(t)) && tests.iter().any(|(t, _)| !writes_randomly(t)));
        let summary = |conventional| ZoneSummary {
            model: ZoneModel::HostManaged,
            zone_size_bytes: 4 << 20,
            zone_capacity_bytes: Some(3 << 20),
            zone_capacity_kind: None,
            zones: 16,
            conventional_zones: conventional,
            max_open_zones: 0,
            max_active_zones: 0,
            states: Default::default(),
            written_bytes: 0,
        };
        for (model, conventional, skips) in [
            (ZoneModel::HostManaged, 0, true),
            (ZoneModel::HostManaged, 1, false),
            (ZoneModel::HostAware, 0, false),
        ] {
            let mut t = super::super::resolve::stack_target("nvme0n1", bench_core::document::result::StackClass::Md, g);
            t.info.writable = true;
            t.info.zoned = Some(Zoned {
                model,
                before: Some(summary(conventional)),
                after: None,
                error: None,
                reads_past_write_pointer: None,
            });
            let items = target_items(&t, 0, &tests, None).expect("items");
            for (it, (spec, _)) in items.iter().zip(&tests) {
                match (&it.action, writes_randomly(spec) && skips) {
                    (Action::Skip(why), true) => assert_eq!(why, bench_core::device::zone_area::NO_CONVENTIONAL),
                    (Action::Run(_), false) => {}
                    (a, _) => panic!("{model:?} {conventional} {}: {a:?}", spec.name),
                }
            }
        }
    }
}
