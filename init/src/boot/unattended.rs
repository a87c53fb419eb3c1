//! The unattended run of PID 1: host identity, disk discovery, the boot
//! stick, the config, the plan, the benchmark, and the results on the stick
//! (`results/stick.rs`) and framed on the serial console
//! (`bench_core::document::frame`), then the text table. Returns what the machine
//! does next.
//!
//! The config is the one at `bootbench.config_url=` (fetched over the
//! network, [`crate::boot::network`]; it writes only where the initramfs
//! allows), else the stick's `bootbench.json`, else `/etc/bootbench.json`
//! (built into the initramfs), else `{"profile": "standard"}`; the kernel
//! command line's `bootbench.profile=` and `bootbench.on_finish=` override
//! it. No `targets` means every disk but the stick. An invalid config gives
//! a result document with `run.status` `error` and no device is written.
//! A results URL gets the document too; a plan this machine ran already
//! (the stick's results, or the results URL) does not run again.

use std::io::Write;
use std::path::{Path, PathBuf};

use bench_core::document::result::{ResultDoc, RunStatus, TargetInfo};
use bench_core::vocab::url::Template;

use crate::boot::cmdline::{Cmdline, Key};
use crate::boot::network::{self, Network};
use crate::boot::overrides::CmdlineOverrides;
use crate::boot::stick;
use crate::boot::supervise::{self, Conclusion, Msg, Reports};
use crate::boot::OnFinish;
use crate::disks::discover;
use crate::disks::identity;
use crate::plan::{self, ConfigError, Overrides, Plan, RawConfig};
use crate::results;
use crate::results::beside::Evidence;
use crate::results::emit::{self, Emitted};
use crate::results::serial;
use crate::run;
use crate::safety::TargetRef;

/// The config built into the initramfs (by `image/src/initramfs.rs`).
pub use bench_core::boot::initramfs::CONFIG as ETC_CONFIG;
/// The config used when neither the stick nor the initramfs has one, and
/// the read-only default when no stick is trusted: a real benchmark of
/// every disk, read-only (a user who boots without a config wants one).
pub const DEFAULT_CONFIG: &str = r#"{"profile": "standard"}"#;

/// Which config text to use, and where it came from: the stick's, else the
/// initramfs's, else the default. An unreadable file on the stick is an
/// error (the user meant it to be used).
pub fn choose_config(
    on_stick: Option<Result<String, String>>,
    in_initramfs: Option<Result<String, String>>,
) -> Result<(String, String), String> {
    match on_stick {
        Some(Ok(text)) => Ok((text, format!("{}/{}", stick::MOUNT_POINT, stick::CONFIG_NAME))),
        Some(Err(e)) => Err(e),
        None => match in_initramfs {
            Some(Ok(text)) => Ok((text, ETC_CONFIG.to_string())),
            Some(Err(e)) => Err(e),
            None => Ok((DEFAULT_CONFIG.to_string(), "builtin".to_string())),
        },
    }
}

/// A config that cannot be run: the message, and what it still tells.
#[derive(Debug)]
pub struct Invalid {
    /// The message (field path, value, what is expected).
    pub message: String,
    /// The profile, where known.
    pub profile: Option<String>,
    /// What to do next: the command line's or the config's `on_finish`
    /// where valid, else poweroff.
    pub on_finish: OnFinish,
}

/// Plan an unattended run of the config `raw` (from `source`), the command
/// line's overrides `cmd` merged ([`CmdlineOverrides`]: its profile and
/// `on_finish` over the config's, then its URLs over the plan's); with no
/// `targets`, the targets are `disks` (discovered, the stick's already
/// removed); `never` are the stick's disks. `ov.simulate` plans simulated
/// disks (for tests); `ov.withhold_writes` keeps every target read-only.
/// The plan's id is the config's as read, with the plan's profile.
pub fn plan_unattended(
    raw: &Result<RawConfig, ConfigError>,
    source: &str,
    cmd: &CmdlineOverrides,
    disks: &[TargetInfo],
    never: &[String],
    ov: &Overrides,
) -> Result<(Plan, OnFinish, String), Invalid> {
    let on_finish = cmd.finish_after(raw.as_ref().ok().and_then(|r| r.on_finish));
    let profile = cmd.profile_over(raw.as_ref().ok().and_then(|r| r.profile.as_deref()));
    let invalid = |e: ConfigError| Invalid {
        message: e.0,
        profile: profile.clone(),
        on_finish,
    };
    let mut ov = ov.clone();
    cmd.before_plan(&mut ov).map_err(invalid)?;
    let raw = raw.as_ref().map_err(|e| invalid(e.clone()))?;
    let refs: Vec<(TargetRef, String)> = if raw.targets.is_empty() {
        disks
            .iter()
            .map(|d| (TargetRef::Path(d.path.clone()), format!("discovered disk {}", d.path)))
            .collect()
    } else {
        plan::target_refs(raw, &ov).map_err(invalid)?
    };
    if refs.is_empty() {
        return Err(invalid(ConfigError(
            "targets: no disk found besides the boot stick; expected at least one disk to benchmark".to_string(),
        )));
    }
    let mut plan = plan::plan_with(raw, source, &ov, &refs, never).map_err(invalid)?;
    let id = plan.id(raw);
    cmd.merge(&mut plan).map_err(|message| Invalid {
        message,
        profile: plan.profile.clone(),
        on_finish,
    })?;
    Ok((plan, on_finish, id))
}

/// The error document PID 1 writes when the worker died before it
/// reported any: `message` says how it ended.
pub fn blank_error_doc(message: &str) -> String {
    let inv = Invalid {
        message: message.to_string(),
        profile: None,
        on_finish: OnFinish::PowerOff,
    };
    let doc = error_doc(&inv, "unknown (the worker died before reading it)");
    serde_json::to_string_pretty(&doc).map_or_else(|_| String::from("{}\n"), |j| j + "\n")
}

/// The result document of a config that cannot be run.
pub fn error_doc(inv: &Invalid, source: &str) -> ResultDoc {
    let mut doc = run::new_doc(inv.profile.clone(), source, 0, false, Vec::new());
    doc.run.seed = bench_core::spec::Params::defaults().seed;
    doc.run.status = RunStatus::Error;
    doc.run.error = Some(inv.message.clone());
    doc
}

/// The `run.config_source` of a config that could not be read: the
/// command line's `bootbench.config_url=` as it may be shown (no query,
/// fragment or userinfo: the document goes to the stick, the console and
/// the results URL), else the stick's config file.
fn unread_config_source(cmdline: &Cmdline) -> String {
    match cmdline.get(Key::ConfigUrl) {
        Some(url) => bench_core::vocab::url::redact(url),
        None => format!("{}/{}", stick::MOUNT_POINT, stick::CONFIG_NAME),
    }
}

/// [`emit::emit`] with this boot's nonce, PID 1 told each step as it is
/// done (so a rescue saves only what is not out yet).
pub fn emit(
    doc: &ResultDoc,
    files: &[Evidence],
    root: Option<&Path>,
    no_stick_why: &str,
    machine: &str,
    out: &mut dyn Write,
    log: &mut dyn FnMut(&str),
) -> Emitted {
    let to = emit::Stick {
        root,
        no_stick_why,
        machine,
    };
    // PID 1 keeps them, to save with the document should the worker die
    // before it has.
    for f in files {
        supervise::report(&Msg::Beside(f.clone()));
    }
    emit::emit(doc, files, to, crate::boot::nonce(), out, log, &mut |step| match step {
        emit::Step::Encoded(json) => supervise::report(&Msg::Final(json.to_string())),
        emit::Step::Saved(name) => supervise::report(&Msg::Saved(name.to_string())),
        emit::Step::Framed => supervise::report(&Msg::Framed),
    })
}

/// [`emit::serial_out`] to the serial ports of the command line's
/// `bootbench.serial=`, else of the config's `serial_ports` (`config`),
/// with this boot's nonce.
fn results_out(
    cmd: &CmdlineOverrides,
    config: Option<&[String]>,
    log: &mut dyn FnMut(&str),
) -> serial::Tee<std::io::Stdout> {
    let choice = cmd.serial(config, log);
    emit::serial_out(&choice, crate::boot::nonce(), log)
}

/// [`emit::rescue_to`] of [`supervise::conclude`]'s conclusion `c`.
fn rescue_to(
    doc: &str,
    c: &Conclusion,
    stick: Option<&(PathBuf, String)>,
    out: &mut dyn Write,
    log: &mut dyn FnMut(&str),
) {
    let r = emit::Rescued {
        doc,
        files: &c.beside,
        saved_as: c.saved_as.as_deref(),
        to_stick: c.to_stick,
    };
    emit::rescue_to(r, stick, crate::boot::nonce(), out, log);
}

/// `doc` as PID 1 keeps it after each test: the results so far, marked as
/// an interrupted run (PID 1 says how it was interrupted if it must save it).
fn partial_json(doc: &ResultDoc) -> Option<String> {
    let mut d = doc.clone();
    d.run.status = RunStatus::Error;
    d.run.error = Some(format!(
        "interrupted after {} test(s); these are the results so far",
        d.tests.len()
    ));
    serde_json::to_string_pretty(&d).ok().map(|j| j + "\n")
}

/// PID 1, when the worker did not end normally: say why, tear down the md
/// and dm devices it left, and save the document of [`supervise::conclude`]
/// to the stick (if the worker had mounted one and not saved it there yet)
/// and framed on the console and the serial ports `cmdline` chooses
/// ([`results_out`]; the config is not known here).
pub fn rescue(c: &Conclusion, r: &Reports, cmdline: &Cmdline, log: &mut dyn FnMut(&str)) {
    if let Some(cause) = &c.cause {
        log(&format!("supervisor: {cause}"));
    }
    crate::run::stacks::teardown_leftovers(log);
    let Some(doc) = &c.doc else {
        log("supervisor: the results were out already");
        return;
    };
    let mut out = results_out(&CmdlineOverrides::read(cmdline), None, log);
    rescue_to(doc, c, r.stick.as_ref(), &mut out, log);
}

/// The test-only kernel command-line keys (docs/results.md, "Test-only kernel command-line keys"): they
/// change nothing unless given with exactly these values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestKeys {
    /// `bootbench.test_panic=after_first_test`: PID 1 panics once the first
    /// test's result is kept (PID 1 must save it and power off).
    pub panic_after_first_test: bool,
    /// `bootbench.test_hold=mid_result_write`: the results write stops
    /// half-way and PID 1 sleeps ([`results::stick::arm_test_hold`]).
    pub hold_mid_result_write: bool,
    /// `bootbench.test_abort=after_first_test`: the worker aborts (SIGABRT,
    /// no panic hook, no unwinding) once the first test's result is kept.
    pub abort_after_first_test: bool,
}

/// The message of the forced panic.
pub const FORCED_PANIC: &str = "test-only forced panic (bootbench.test_panic=after_first_test)";

/// Read the test-only keys; an unknown value is logged and ignored.
pub fn test_keys(cmdline: &Cmdline, log: &mut dyn FnMut(&str)) -> TestKeys {
    let mut k = TestKeys::default();
    for (key, want, flag) in [
        (Key::TestPanic, "after_first_test", &mut k.panic_after_first_test),
        (Key::TestHold, "mid_result_write", &mut k.hold_mid_result_write),
        (Key::TestAbort, "after_first_test", &mut k.abort_after_first_test),
    ] {
        match cmdline.get(key) {
            None => {}
            Some(v) if v == want => {
                *flag = true;
                log(&format!("{key}={v}: test-only behaviour on"));
            }
            Some(v) => log(&format!("{key}={v:?}: ignored; the only value is {want}")),
        }
    }
    k
}

/// After each test: report the partial document to PID 1, then the forced
/// panic or abort if asked.
fn after_test(keys: TestKeys, doc: &ResultDoc) {
    if let Some(j) = partial_json(doc) {
        supervise::report(&Msg::Partial(j));
    }
    if keys.panic_after_first_test && !doc.tests.is_empty() {
        panic!("{FORCED_PANIC}");
    }
    if keys.abort_after_first_test && !doc.tests.is_empty() {
        crate::log::log("test-only forced abort (bootbench.test_abort=after_first_test)");
        std::process::abort();
    }
}

/// The longest the booted console waits for what the disks hold (a few
/// small reads per disk; a disk that does not answer is left behind).
const HOLDS_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long the run waits for a disk the config names by serial or WWN that
/// is not there when the config is read.
pub const NAMED_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// `discover(after_wait)` until every disk in `named` is among the disks it
/// returns, or `bound` has passed (then the plan names what is missing); the
/// last disks found. Says what it waited for and how long. The first look
/// has `after_wait` false: coldplug has just settled, so only the looks
/// after a wait need to look for new drivers first.
fn wait_for_named(
    named: &[TargetRef],
    bound: std::time::Duration,
    log: &mut dyn FnMut(&str),
    discover: &mut dyn FnMut(bool) -> Vec<TargetInfo>,
) -> Vec<TargetInfo> {
    let start = std::time::Instant::now();
    let missing = |disks: &[TargetInfo]| -> Vec<String> {
        named
            .iter()
            .filter(|r| {
                !disks
                    .iter()
                    .any(|d| crate::safety::names(r, d.serial.as_deref(), d.wwn.as_deref()))
            })
            .map(ToString::to_string)
            .collect()
    };
    let mut disks = discover(false);
    let mut gone = missing(&disks);
    if gone.is_empty() {
        return disks;
    }
    log(&format!("waiting up to {} s for {}", bound.as_secs(), gone.join(", ")));
    while !gone.is_empty() && start.elapsed() < bound {
        std::thread::sleep(std::time::Duration::from_millis(250));
        disks = discover(true);
        gone = missing(&disks);
    }
    if gone.is_empty() {
        log(&format!(
            "every disk the config names is there ({} ms)",
            start.elapsed().as_millis()
        ));
    } else {
        log(&format!(
            "still missing after {} ms: {}",
            start.elapsed().as_millis(),
            gone.join(", ")
        ));
    }
    disks
}

/// What an unattended run knows of where its results go, and what it
/// must not touch, as its stages find out: the stick, the machine's name,
/// the network, the console.
struct Boot<'a> {
    cmdline: &'a Cmdline,
    /// The command line's overrides of the config, read once.
    overrides: CmdlineOverrides,
    machine: String,
    /// The stick's mount point, if one was trusted and mounted.
    root: Option<PathBuf>,
    /// Why no results file goes to a stick.
    no_stick_why: String,
    /// The disks that are never targets: the stick's (every candidate's
    /// when none is trusted), and any BOOTBENCH FAT found later.
    never: Vec<String>,
    network: Network<'a>,
    /// The coldplug's failures, once the drivers settled ([`Boot::disks`]).
    module_errors: Vec<crate::modules::ModuleError>,
    log: &'a mut dyn FnMut(&str),
}

/// The config's text and where it came from, or why there is none; and
/// whether the stick's was trusted.
struct Chosen {
    config: Option<Result<String, String>>,
    untrusted: bool,
}

/// A plan made: the plan, what to do at the end, its id, its results URL.
type Planned = (Plan, OnFinish, String, Option<Template>);

/// The unattended run (PID 1, after the boot steps and the drivers), as
/// its stages: the stick, the config, the disks, the plan, the run-once
/// check, the run, the results out.
pub fn run(cmdline: &Cmdline, log: &mut dyn FnMut(&str)) -> OnFinish {
    let host = identity::host();
    log(&discover::host_line(&host));
    let mut boot = Boot {
        cmdline,
        overrides: CmdlineOverrides::read(cmdline),
        machine: results::stick::machine_name(host.product_serial.as_deref()),
        root: None,
        no_stick_why: "no FAT partition labelled BOOTBENCH found".to_string(),
        never: Vec::new(),
        network: Network::new(cmdline),
        module_errors: Vec::new(),
        log,
    };
    let chosen = boot.stick();
    let (text, source) = match boot.config(chosen) {
        Ok(c) => c,
        Err(inv) => {
            (boot.log)(&format!("config error: {}", inv.message));
            let source = unread_config_source(cmdline);
            let run = plan::text_id(&source);
            return boot.refuse(&inv, &source, &run);
        }
    };
    let raw = plan::parse(&text, &source);
    let disks = boot.disks(&raw);
    let mut host = host;
    host.modules = boot.named_modules();
    let (mut plan, on_finish, plan_id, results_url) = match boot.plan(&raw, &source, &disks) {
        Ok(p) => p,
        Err(inv) => {
            (boot.log)(&format!("config error: {}; no disk is touched", inv.message));
            return boot.refuse(&inv, &source, &plan::text_id(&text));
        }
    };
    let earlier_id = plan.earlier_id(&text);
    if let Some(how) = boot.ran_already(&plan, &[&plan_id, &earlier_id], results_url.as_ref()) {
        return how;
    }
    let keys = test_keys(cmdline, boot.log);
    if keys.hold_mid_result_write {
        results::stick::arm_test_hold();
    }
    let nonce = boot.nonce();
    let measuring = super::attest::begin(text.as_bytes(), nonce, boot.log);
    supervise::report(&Msg::Bound(run::run_bound(&plan).0));
    let pusher = boot.metrics(&plan, &plan_id);
    let mut doc = run::execute(&mut plan, boot.log, &mut |d| {
        after_test(keys, d);
        if let Some(p) = &pusher {
            p.update(d);
        }
    });
    // The run read the nodes the placement followed (`run::new_doc`).
    doc.host = bench_core::document::result::Host {
        numa_nodes: std::mem::take(&mut doc.host.numa_nodes),
        ..host
    };
    doc.run.plan_id = Some(plan_id.clone());
    // The verdicts are in: a failed NVMe disk's telemetry log, before the
    // document is encoded (it names the file and its checksum).
    let files = crate::run::telemetry::capture_failed(&mut doc, boot.log);
    // Last: the document's digest is measured and quoted; nothing changes it after.
    super::attest::finish(measuring, &mut doc, boot.log);
    if let Some(p) = pusher {
        let t = p.finish(&doc);
        (boot.log)(&t.line());
    }
    boot.out(
        &doc,
        &files,
        plan.serial_ports.as_deref(),
        results_url.as_ref(),
        &plan_id,
    );
    (boot.log)(&format!("run finished: {}; then {on_finish}", doc.run.status));
    on_finish
}

impl Boot<'_> {
    /// The stick: the labelled FAT the machine booted from
    /// ([`stick::choose`]), mounted, its config read; or why there is none
    /// (and then, when candidates could not be told apart, none of them is
    /// trusted for the config either).
    fn stick(&mut self) -> Chosen {
        let log = &mut *self.log;
        let sticks = stick::find_waiting(
            crate::sysfs::root(),
            Path::new("/dev"),
            stick::STICK_WAIT,
            std::time::Duration::from_millis(250),
            log,
        );
        let booted = stick::booted_partition(Path::new(crate::boot::EFIVARS), self.cmdline.get(Key::BootPart));
        let choice = stick::choose(
            &sticks,
            booted.as_ref().map(|(id, by)| (id.as_str(), *by)),
            self.cmdline.get(Key::Stick),
        );
        // The stick's disk is never a target; with no stick trusted, no candidate's is.
        self.never = match &choice {
            stick::Choice::One(s, _) => vec![s.disk.clone()],
            _ => sticks.iter().map(|s| s.disk.clone()).collect(),
        };
        let mut chosen = Chosen {
            config: None,
            untrusted: false,
        };
        match &choice {
            stick::Choice::NoneFound => log(&format!("{}: results go to the serial console only", self.no_stick_why)),
            stick::Choice::Untrusted(why) => {
                log(&format!(
                    "no boot stick trusted: {why}; no config is read from any of them, the read-only default runs \
                     ({DEFAULT_CONFIG}), and the results go to the serial console only"
                ));
                self.no_stick_why = format!("no boot stick trusted: {why}");
                // No config from any candidate, nor from the initramfs.
                chosen.untrusted = true;
            }
            stick::Choice::One(s, why) => {
                log(&format!("boot stick: {} on {} ({why})", s.partition, s.disk));
                match stick::mount(s, log) {
                    Ok(read_only) => {
                        let r = PathBuf::from(stick::MOUNT_POINT);
                        chosen.config = stick::read_config(&r);
                        let how = if read_only { "read-only" } else { "read-write" };
                        log(&format!("{} mounted {how} at {}", s.partition, stick::MOUNT_POINT));
                        // Read-only: saving fails with EROFS, and says so.
                        supervise::report(&Msg::Stick {
                            root: r.clone(),
                            machine: self.machine.clone(),
                        });
                        self.root = Some(r);
                    }
                    Err(e) => {
                        log(&e);
                        self.no_stick_why = e;
                    }
                }
            }
        }
        chosen
    }

    /// The config: from `bootbench.config_url=` (the network comes up for
    /// it), else the stick's, else the initramfs's, else the default
    /// ([`choose_config`]); its text and where it came from.
    fn config(&mut self, chosen: Chosen) -> Result<(String, String), Invalid> {
        let etc = if chosen.untrusted {
            None
        } else {
            plan::read_config_file(Path::new(ETC_CONFIG)).transpose()
        };
        let got = match self.cmdline.get(Key::ConfigUrl) {
            Some(url) => self
                .network
                .client(self.log)
                .and_then(|c| network::fetch_config(c, url, network::CONFIG_BOUND, self.log)),
            None => choose_config(chosen.config, etc),
        };
        match got {
            Ok((text, source)) => {
                (self.log)(&format!("config: {source}"));
                Ok((text, source))
            }
            Err(message) => Err(Invalid {
                message,
                profile: None,
                on_finish: self.overrides.finish_after(None),
            }),
        }
    }

    /// A verifier's nonce for the quote, from `bootbench.nonce_url=` (the
    /// network comes up for it); none without the key. One that cannot be
    /// had is said, and the run goes on without it: `verify --expect-nonce`
    /// then fails the document's freshness.
    fn nonce(&mut self) -> Option<Vec<u8>> {
        let url = self.cmdline.get(Key::NonceUrl)?;
        let got = self
            .network
            .client(self.log)
            .and_then(|c| network::fetch_nonce(c, url, network::CONFIG_BOUND, self.log));
        match got {
            Ok(n) => {
                (self.log)(&format!(
                    "attestation: a nonce of {} bytes from {}: the quote will cover it",
                    n.len(),
                    Key::NonceUrl
                ));
                Some(n)
            }
            Err(e) => {
                (self.log)(&format!("attestation: {e}; the quote carries no nonce"));
                None
            }
        }
    }

    /// The disks, the stick's removed. The drivers' last quiet time runs
    /// while the stick is read and the disks there are listed; it ends
    /// before they are used (listed again if something appeared meanwhile),
    /// and a BOOTBENCH-labelled FAT that appeared meanwhile is never a
    /// target. Then a bounded wait for the disks the config names that are
    /// not there yet (a USB disk still enumerating, a slow HBA).
    fn disks(&mut self, raw: &Result<RawConfig, ConfigError>) -> Vec<TargetInfo> {
        let log = &mut *self.log;
        let mut listed = Some(discover::disks(false));
        if let Some(settled) = crate::modules::settle(log) {
            log(&settled.line);
            if settled.changed {
                listed = None;
            }
            self.module_errors = settled.errors;
            let late: Vec<String> = stick::find_in(crate::sysfs::root(), Path::new("/dev"))
                .into_iter()
                .map(|s| s.disk)
                .filter(|d| !self.never.contains(d))
                .collect();
            if !late.is_empty() {
                log(&format!(
                    "a FAT labelled BOOTBENCH appeared after the stick was chosen, on {}: never a target",
                    late.join(", ")
                ));
                self.never.extend(late);
            }
        }
        let named = raw.as_ref().map(RawConfig::named_disks).unwrap_or_default();
        let disks: Vec<TargetInfo> = wait_for_named(&named, NAMED_WAIT, log, &mut |after_wait| {
            if after_wait {
                let _ = crate::modules::rescan();
            }
            listed.take().unwrap_or_else(|| discover::disks(false))
        })
        .into_iter()
        .filter(|d| !self.never.contains(&d.path))
        .collect();
        // What each disk holds (md, LVM, LUKS, firmware RAID) and the stacks
        // they make, read on a thread of its own and waited for a bounded
        // time: a dying disk's first sector must not hold the boot. Said
        // only: the plan and the documents take the disks as listed.
        let held = crate::disks::holds::read_bounded(&disks, HOLDS_WAIT);
        for d in &disks {
            log(&discover::disk_line(d));
            if let Some(h) = held.as_ref().ok().and_then(|h| h.iter().find(|h| h.path == d.path)) {
                for line in crate::disks::holds::lines(h) {
                    log(&line);
                }
            }
        }
        match &held {
            Ok(h) => {
                for line in crate::disks::holds::stack_lines(&crate::disks::holds::stacks(h)) {
                    log(&line);
                }
            }
            Err(e) => log(&format!("what the disks hold: {e}")),
        }
        disks
    }

    /// What came of the modules `bootbench.modules=` names, once the
    /// drivers settled ([`crate::modules::named_outcome`]), each said on
    /// the console.
    fn named_modules(&mut self) -> Vec<bench_core::document::result::NamedModule> {
        use crate::modules::{Kernel, LiveKernel};
        let params = crate::modules::module_params(&std::fs::read_to_string("/proc/cmdline").unwrap_or_default());
        let out = crate::modules::named_outcome(self.overrides.modules(), &params, &self.module_errors, &|m| {
            LiveKernel.is_loaded(m)
        });
        for m in &out {
            let params = m.params.as_deref().map(|p| format!(" ({p})")).unwrap_or_default();
            let why = m.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
            (self.log)(&format!(
                "module {}{params}, named by {}: {}{why}",
                m.name,
                Key::Modules,
                m.status
            ));
        }
        out
    }

    /// The plan of the config on these disks, the command line's overrides
    /// merged ([`plan_unattended`]), said on the console, with its results
    /// URL. A config from the network writes
    /// only where the initramfs allows it.
    fn plan(
        &mut self,
        raw: &Result<RawConfig, ConfigError>,
        source: &str,
        disks: &[TargetInfo],
    ) -> Result<Planned, Invalid> {
        let from_network = self.cmdline.get(Key::ConfigUrl).is_some();
        let withhold = (from_network && !network::network_may_write()).then(|| network::NETWORK_WITHHELD.to_string());
        let ov = Overrides {
            withhold_writes: withhold,
            ..Overrides::default()
        };
        let (plan, on_finish, id) = plan_unattended(raw, source, &self.overrides, disks, &self.never, &ov)?;
        let url = plan.results_url.clone();
        for line in plan::describe_plan_lines(&plan) {
            (self.log)(&line);
        }
        (self.log)(&format!("plan id {id} (the config and these disks)"));
        if let Some(t) = &url {
            (self.log)(&format!("results URL: {t}"));
        }
        Ok((plan, on_finish, id, url))
    }

    /// The run's metrics pusher, when the plan has a `metrics_url` (the
    /// network brought up for it); without the network, the run goes on
    /// unwatched.
    fn metrics(&mut self, plan: &Plan, plan_id: &str) -> Option<results::metrics::Pusher> {
        plan.metrics_url.as_ref()?;
        let client = match self.network.client(self.log) {
            Ok(c) => c.clone(),
            Err(e) => {
                (self.log)(&format!("metrics: not pushed: {e}"));
                return None;
            }
        };
        run::metrics(
            plan,
            client,
            self.machine.clone(),
            Some(plan_id.to_string()),
            crate::log::log,
        )
    }

    /// Run once: a machine that boots into the same plan again does not
    /// run it again (its result on the stick, or at the results URL), nor
    /// does a plan that writes when the URL cannot be asked; what to do
    /// instead, if so. A result under any of `plan_ids` (the plan's id and
    /// the one earlier versions gave it) counts. `bootbench.force=1` turns
    /// the check off.
    fn ran_already(&mut self, plan: &Plan, plan_ids: &[&str], results_url: Option<&Template>) -> Option<OnFinish> {
        if network::forced(self.cmdline) {
            (self.log)(&format!("{}: the run-once check is off", Key::Force.with("1")));
            return None;
        }
        let on_stick = self
            .root
            .as_deref()
            .and_then(|r| results::stick::find_plan(r, &self.machine, plan_ids))
            .map(|p| format!("{} on the stick", p.display()));
        let at_url = match (&on_stick, results_url) {
            (None, Some(t)) => Some(
                self.network
                    .client(self.log)
                    .and_then(|c| results::remote::already_sent(c, t, &self.machine, plan_ids)),
            ),
            _ => None,
        };
        let done = match at_url {
            Some(Ok(found)) => on_stick.or(found),
            Some(Err(e)) => {
                if plan.targets.iter().any(|t| t.info.writable) {
                    (self.log)(&format!(
                        "run once: cannot ask the results URL whether this plan ran already ({e}); it writes, \
                         so it does not run; powering off (bootbench.force=1 runs it anyway)"
                    ));
                    return Some(OnFinish::PowerOff);
                }
                (self.log)(&format!(
                    "run once: cannot ask the results URL whether this plan ran already ({e}); it only reads, so it runs"
                ));
                on_stick
            }
            None => on_stick,
        };
        let found = done?;
        (self.log)(&format!(
            "this machine ran this plan already ({found}): it does not run again; powering off \
             (bootbench.force=1 on the kernel command line runs it again)"
        ));
        Some(OnFinish::PowerOff)
    }

    /// The document out: to the stick, framed on the console and the
    /// serial ports (the config's `serial_ports` unless the command line
    /// names them), and to the results URL (`run` its `{run}`).
    fn out(
        &mut self,
        doc: &ResultDoc,
        files: &[Evidence],
        ports: Option<&[String]>,
        results_url: Option<&Template>,
        run: &str,
    ) {
        let mut out = results_out(&self.overrides, ports, self.log);
        let emitted = emit(
            doc,
            files,
            self.root.as_deref(),
            &self.no_stick_why,
            &self.machine,
            &mut out,
            self.log,
        );
        if let (Some(t), Some(json)) = (results_url, emitted.json) {
            network::send(
                &mut self.network,
                t,
                &self.machine,
                run,
                json.as_bytes(),
                files,
                self.log,
            );
        }
    }

    /// A config that cannot be run: its error document out (the results
    /// URL the command line's only: the config's is not known), nothing
    /// touched; what to do next.
    fn refuse(&mut self, inv: &Invalid, source: &str, run: &str) -> OnFinish {
        let doc = error_doc(inv, source);
        // The command line's template as written, unchecked: a bad one
        // fails to send, and says so.
        let url = self.overrides.results_url_as_written();
        self.out(&doc, &[], None, url.as_ref(), run);
        inv.on_finish
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::document::frame;
    use std::fs;

    /// [`plan_unattended`] of a config's text, simulated, with the kernel
    /// command line `cmdline`.
    fn plan_text(
        text: &str,
        source: &str,
        cmdline: &str,
        disks: &[TargetInfo],
        never: &[String],
    ) -> Result<(Plan, OnFinish, String), Invalid> {
        let ov = Overrides {
            simulate: true,
            ..Overrides::default()
        };
        let cmd = CmdlineOverrides::read(&Cmdline::parse(cmdline));
        plan_unattended(&plan::parse(text, source), source, &cmd, disks, never, &ov)
    }

    fn sim_disks(paths: &[&str]) -> Vec<TargetInfo> {
        paths
            .iter()
            .map(|p| TargetInfo {
                path: (*p).to_string(),
                ..TargetInfo::default()
            })
            .collect()
    }

    #[test]
    fn the_disks_a_config_names_are_waited_for_within_a_bound() {
        let text = r#"{"targets": [{"serial": "A"}, {"path": "/dev/x"}],
            "arrays": [{"name": "r", "level": "raid1", "members": [{"wwn": "0x5000c5"}, {"serial": "B"}]}],
            "destructive": {"confirm": "x", "targets": [{"serial": "A"}]}, "tests": [{"workload": "seq_read"}]}"#;
        let named = plan::parse(text, "t.json").expect("a config").named_disks();
        assert_eq!(
            named,
            [
                TargetRef::Serial("A".into()),
                TargetRef::Wwn("0x5000c5".into()),
                TargetRef::Serial("B".into()),
            ]
        );
        // A layer on a disk names it too.
        let on = r#"{"layers": [{"name": "c", "kind": "crypt", "on": {"serial": "C"}}], "profile": "quick"}"#;
        assert_eq!(
            plan::parse(on, "t.json").expect("a config").named_disks(),
            [TargetRef::Serial("C".into())]
        );
        let disk = |serial: &str, wwn: Option<&str>| TargetInfo {
            serial: Some(serial.into()),
            wwn: wwn.map(Into::into),
            ..TargetInfo::default()
        };
        // B shows up on the third look: the wait ends then, long before its bound.
        let mut looks = 0;
        let mut lines = Vec::new();
        let got = wait_for_named(
            &named,
            std::time::Duration::from_secs(30),
            &mut |m| lines.push(m.to_string()),
            &mut |after_wait| {
                assert_eq!(after_wait, looks > 0, "only a look after a wait rescans");
                looks += 1;
                let mut d = vec![disk("A", None), disk("C", Some("naa.5000C5"))];
                if looks >= 3 {
                    d.push(disk("B", None));
                }
                d
            },
        );
        assert_eq!((looks, got.len()), (3, 3), "{lines:?}");
        assert!(lines[0].contains("waiting up to 30 s for serial B"), "{lines:?}");
        assert!(
            lines[1].starts_with("every disk the config names is there"),
            "{lines:?}"
        );
        // All there: one look, no wait, no rescan, nothing said.
        let (mut looks, mut lines) = (0, Vec::new());
        wait_for_named(
            &named,
            std::time::Duration::from_secs(30),
            &mut |m| lines.push(m.to_string()),
            &mut |after_wait| {
                assert!(!after_wait);
                looks += 1;
                vec![disk("A", None), disk("B", Some("0x5000c5"))]
            },
        );
        assert_eq!((looks, lines.len()), (1, 0));
        // Never there: the bound ends it, and the log names what is missing.
        let mut lines = Vec::new();
        let t = std::time::Instant::now();
        wait_for_named(
            &named,
            std::time::Duration::from_millis(600),
            &mut |m| lines.push(m.to_string()),
            &mut |_| Vec::new(),
        );
        assert!(t.elapsed() >= std::time::Duration::from_millis(600));
        assert!(
            lines.last().unwrap().contains("still missing after") && lines.last().unwrap().contains("serial B"),
            "{lines:?}"
        );
    }

    #[test]
    fn config_comes_from_the_stick_then_the_initramfs_then_the_default() {
        let stick = Some(Ok("{\"profile\":\"cdm\"}".to_string()));
        let etc = Some(Ok("{\"profile\":\"standard\"}".to_string()));
        assert_eq!(
            choose_config(stick.clone(), etc.clone()).unwrap(),
            (
                "{\"profile\":\"cdm\"}".to_string(),
                "/mnt/stick/bootbench.json".to_string()
            )
        );
        assert_eq!(
            choose_config(None, etc).unwrap(),
            (
                "{\"profile\":\"standard\"}".to_string(),
                "/etc/bootbench.json".to_string()
            )
        );
        assert_eq!(
            choose_config(None, None).unwrap(),
            (DEFAULT_CONFIG.to_string(), "builtin".to_string())
        );
        assert_eq!(
            choose_config(Some(Err("cannot read".into())), None).unwrap_err(),
            "cannot read"
        );
        // The initramfs's cannot be read (too large, say): an error, not the default.
        assert_eq!(
            choose_config(None, Some(Err("too large".into()))).unwrap_err(),
            "too large"
        );
    }

    #[test]
    fn no_targets_means_every_disk_but_the_stick() {
        let disks = sim_disks(&["sim:hdd:1G", "sim:ssd:64M"]);
        let (plan, how, _) = plan_text(DEFAULT_CONFIG, "builtin", "", &disks, &[]).expect("plan");
        let paths: Vec<&str> = plan.targets.iter().map(|t| t.info.path.as_str()).collect();
        assert_eq!(paths, vec!["sim:hdd:1G", "sim:ssd:64M"]);
        assert_eq!(plan.profile.as_deref(), Some("standard"));
        assert_eq!(how, OnFinish::PowerOff);
        // A config naming the stick's disk is refused.
        let cfg = r#"{"profile":"quick","targets":["sim:ssd:64M"]}"#;
        let e = plan_text(cfg, "s", "", &disks, &["sim:ssd:64M".to_string()]).unwrap_err();
        assert!(e.message.contains("boot stick"), "{}", e.message);
        // Nothing to benchmark.
        let e = plan_text(DEFAULT_CONFIG, "builtin", "", &[], &[]).unwrap_err();
        assert!(e.message.starts_with("targets: no disk found"), "{}", e.message);
    }

    #[test]
    fn command_line_overrides_and_on_finish() {
        let disks = sim_disks(&["sim:ssd:64M"]);
        let cfg = r#"{"profile":"quick","on_finish":"halt"}"#;
        let (plan, how, _) = plan_text(cfg, "s", "bootbench.profile=cdm", &disks, &[]).expect("plan");
        assert_eq!((plan.profile.as_deref(), how), (Some("cdm"), OnFinish::Halt));
        let (_, how, _) = plan_text(cfg, "s", "bootbench.on_finish=reboot", &disks, &[]).expect("plan");
        assert_eq!(how, OnFinish::Reboot);
        // Bad values: an error naming the field, and a valid on_finish still applies.
        let e = plan_text(cfg, "s", "bootbench.on_finish=explode", &disks, &[]).unwrap_err();
        assert!(
            e.message.starts_with("bootbench.on_finish: \"explode\""),
            "{}",
            e.message
        );
        assert_eq!(e.on_finish, OnFinish::Halt);
        let e = plan_text(
            r#"{"profile":"quick","on_finish":"nap"}"#,
            "s",
            "bootbench.on_finish=reboot",
            &disks,
            &[],
        )
        .unwrap_err();
        assert!(
            e.message
                .starts_with("s: on_finish: \"nap\" is not an on_finish action"),
            "{}",
            e.message
        );
        assert_eq!(e.on_finish, OnFinish::Reboot);
        let e = plan_text(cfg, "s", "bootbench.profile=turbo", &disks, &[]).unwrap_err();
        assert!(e.message.starts_with("profile: \"turbo\""), "{}", e.message);
        let e = plan_text("{\"profile\": ", "s.json", "", &disks, &[]).unwrap_err();
        assert!(e.message.starts_with("s.json: "), "{}", e.message);
        assert_eq!(e.on_finish, OnFinish::PowerOff, "the default");
    }

    use crate::testutil::TempDir;

    fn schema_valid(doc: &ResultDoc) {
        let errors = crate::testutil::result_schema_errors(&serde_json::to_value(doc).expect("value"));
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn an_invalid_config_gives_an_error_document_on_stick_and_serial() {
        let inv = plan_text(
            r#"{"profile":"turbo"}"#,
            "/mnt/stick/bootbench.json",
            "",
            &sim_disks(&["sim:ssd:64M"]),
            &[],
        )
        .unwrap_err();
        let doc = error_doc(&inv, "/mnt/stick/bootbench.json");
        assert_eq!(doc.run.status, RunStatus::Error);
        assert!(doc
            .run
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("profile: \"turbo\"")));
        assert!(doc.tests.is_empty() && doc.targets.is_empty());
        schema_valid(&doc);

        let t = TempDir::new("emit");
        let mut out = Vec::new();
        let mut lines = Vec::new();
        let saved = emit(&doc, &[], Some(&t.0), "", "SN9", &mut out, &mut |l| {
            lines.push(l.to_string())
        })
        .saved;
        assert_eq!(saved, Some(t.0.join("results/SN9-1.json")));
        let frames = decode_console(out);
        assert_eq!(frames.len(), 1);
        let f = frames[0].as_ref().expect("good frame");
        assert_eq!(f.name, "SN9-1.json");
        let file = fs::read(t.0.join("results/SN9-1.json")).expect("read");
        assert!(file.starts_with(b"{\n  \""), "the stick keeps the pretty document");
        assert_eq!(f.bytes, frame::compact_json(&file), "file = serial copy, compact");
        assert_eq!(f.bytes, serde_json::to_vec(&doc).expect("json"));
        let back: ResultDoc = serde_json::from_slice(&f.bytes).expect("json");
        assert_eq!(back, doc);
        assert!(
            lines.iter().any(|l| l.contains("results written to the stick")),
            "{lines:?}"
        );
    }

    #[test]
    fn without_a_stick_the_serial_copy_still_comes_out_and_says_why() {
        let disks = sim_disks(&["sim:ssd:64M"]);
        let cfg = r#"{"tests":[{"workload":"rand_read","runtime":"50ms"}]}"#;
        let (mut plan, _, _) = plan_text(cfg, "s", "", &disks, &[]).expect("plan");
        let mut partials = Vec::new();
        let doc = run::execute(&mut plan, &mut |_| {}, &mut |d| {
            partials.extend(partial_json(d));
        });
        assert_eq!(partials.len(), 1);
        let partial: ResultDoc = serde_json::from_str(&partials[0]).expect("json");
        assert_eq!(partial.run.status, RunStatus::Error);
        assert_eq!(partial.tests.len(), 1);
        schema_valid(&partial);

        let mut out = Vec::new();
        let mut lines = Vec::new();
        let saved = emit(
            &doc,
            &[],
            None,
            "no FAT partition labelled BOOTBENCH found",
            "unknown",
            &mut out,
            &mut |l| lines.push(l.to_string()),
        )
        .saved;
        assert_eq!(saved, None);
        assert!(
            lines
                .iter()
                .any(|l| l.contains("no results file written: no boot stick (no FAT partition")),
            "{lines:?}"
        );
        assert!(
            String::from_utf8_lossy(&out).contains("MB/s"),
            "the table follows the frame"
        );
        let frames = decode_console(out);
        assert_eq!(frames[0].as_ref().expect("frame").name, "unknown.json");
        // A read-only stick: the reason is EROFS.
        let t = TempDir::new("ro");
        fs::write(t.0.join("results"), "not a dir").expect("write");
        let saved = emit(&doc, &[], Some(&t.0), "", "SN", &mut Vec::new(), &mut |l| {
            lines.push(l.to_string())
        })
        .saved;
        assert_eq!(saved, None);
        assert!(
            lines.last().is_some_and(|l| l.starts_with("no results file written")),
            "{lines:?}"
        );
    }

    /// A console that is interrupted (EINTR) before every other write, takes
    /// at most 100 bytes a write, and fails (EIO) once it holds `room` bytes.
    struct Flaky {
        out: Vec<u8>,
        calls: usize,
        room: usize,
    }

    impl Write for Flaky {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls % 2 == 1 {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(100).min(self.room - self.out.len());
            if n == 0 && !buf.is_empty() {
                return Err(std::io::Error::from_raw_os_error(libc::EIO));
            }
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The console gets the frame of the compact document, then the table,
    /// streamed, byte for byte what frame::encode and table::render make
    /// of the document, through
    /// interrupted and short writes; a console that fails part-way stops
    /// them there, and the stick's copy is still written.
    #[test]
    fn the_console_gets_the_streamed_frame_then_the_table() {
        let disks = sim_disks(&["sim:ssd:64M", "sim:hdd:64M"]);
        let cfg = r#"{"tests":[{"workload":"rand_read","runtime":"50ms"}]}"#;
        let (mut plan, _, _) = plan_text(cfg, "s", "", &disks, &[]).expect("plan");
        let doc = run::execute(&mut plan, &mut |_| {}, &mut |_| {});
        let json = serde_json::to_string_pretty(&doc).expect("json") + "\n";
        let compact = serde_json::to_vec(&doc).expect("json");
        assert_eq!(frame::compact_json(json.as_bytes()), compact);
        let framed = frame::encode("SN.json", &compact, crate::boot::nonce());
        assert!(framed.lines().count() > 6, "a frame of many lines: {framed}");
        let want = framed + &bench_core::verdict::table::render(&doc);

        let mut console = Flaky {
            out: Vec::new(),
            calls: 0,
            room: usize::MAX,
        };
        assert_eq!(
            emit(&doc, &[], None, "no stick", "SN", &mut console, &mut |_| {}).saved,
            None
        );
        assert_eq!(String::from_utf8(console.out).expect("utf8"), want);

        let t = TempDir::new("emit-eio");
        let mut console = Flaky {
            out: Vec::new(),
            calls: 0,
            room: 500,
        };
        let saved = emit(&doc, &[], Some(&t.0), "", "SN", &mut console, &mut |_| {}).saved;
        assert_eq!(saved, Some(t.0.join("results/SN-1.json")));
        assert_eq!(fs::read(t.0.join("results/SN-1.json")).expect("read"), json.as_bytes());
        let want = want.replacen("SN.json", "SN-1.json", 1);
        assert_eq!(console.out, want.as_bytes()[..500]);
    }

    /// The frames of `out` (what emit wrote to the console) as a host cuts
    /// them out of a log of this boot: after PID 1's announce line.
    fn decode_console(out: Vec<u8>) -> Vec<Result<frame::Frame, frame::FrameError>> {
        let text = String::from_utf8(out).expect("utf8");
        let frames = frame::decode(&(frame::announce(crate::boot::nonce()) + &text));
        for f in frames.iter().flatten() {
            assert_eq!(f.nonce, Some(crate::boot::nonce()), "the boot's nonce");
        }
        frames
    }

    /// A config URL that could not be read is named in the error
    /// document without its query, fragment or userinfo.
    #[test]
    fn an_unread_config_url_is_recorded_without_credentials() {
        for (url, want) in [
            (
                "https://user:hunter2@host/c.json?token=SECRET",
                "https://...@host/c.json?...",
            ),
            (
                "http://10.0.2.2:99999/c.json#SECRET",
                "http://10.0.2.2:99999/c.json#...",
            ),
            ("http://[::1/c.json?sig=SECRET", "http://[::1/c.json?..."),
        ] {
            let c = Cmdline::parse(&format!("bootbench.config_url={url}"));
            assert_eq!(unread_config_source(&c), want);
        }
        assert_eq!(
            unread_config_source(&Cmdline::parse("quiet")),
            format!("{}/{}", stick::MOUNT_POINT, stick::CONFIG_NAME)
        );
    }

    #[test]
    fn test_keys_only_with_their_exact_values() {
        let cases = [
            ("", TestKeys::default(), 0),
            (
                "bootbench.test_panic=after_first_test",
                TestKeys {
                    panic_after_first_test: true,
                    ..TestKeys::default()
                },
                1,
            ),
            (
                "bootbench.test-hold=mid_result_write",
                TestKeys {
                    hold_mid_result_write: true,
                    ..TestKeys::default()
                },
                1,
            ),
            (
                "bootbench.test_abort=after_first_test",
                TestKeys {
                    abort_after_first_test: true,
                    ..TestKeys::default()
                },
                1,
            ),
            ("bootbench.test_panic=now bootbench.test_hold", TestKeys::default(), 2),
            ("test_panic=after_first_test", TestKeys::default(), 0),
        ];
        for (line, want, logged) in cases {
            let mut lines = Vec::new();
            assert_eq!(
                test_keys(&Cmdline::parse(line), &mut |l| lines.push(l.to_string())),
                want,
                "{line}"
            );
            assert_eq!(lines.len(), logged, "{line}: {lines:?}");
        }
    }

    #[test]
    fn the_forced_panic_comes_after_the_first_result_and_pid_1_saves_it() {
        let disks = sim_disks(&["sim:ssd:64M"]);
        let cfg = r#"{"tests":[{"workload":"rand_read","name":"a","runtime":"50ms"},
                               {"workload":"seq_read","name":"b","runtime":"50ms"}]}"#;
        let (mut plan, _, _) = plan_text(cfg, "s", "", &disks, &[]).expect("plan");
        let keys = TestKeys {
            panic_after_first_test: true,
            ..TestKeys::default()
        };
        let mut partial = None;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run::execute(&mut plan, &mut |_| {}, &mut |d| {
                partial = partial_json(d);
                after_test(keys, d);
            })
        }));
        let e = r.expect_err("the forced panic");
        assert_eq!(e.downcast_ref::<String>().map(String::as_str), Some(FORCED_PANIC));
        // What PID 1 does with what the worker reported: the stick, then the console.
        let mut reports = Reports::default();
        reports.apply(Msg::Partial(partial.expect("reported after the first test")));
        reports.apply(Msg::Panicked(FORCED_PANIC.into()));
        let ending = supervise::Ending::Exited(crate::sys::process::Exit::Signal(libc::SIGABRT));
        let c = supervise::conclude(&reports, &ending, OnFinish::PowerOff, &blank_error_doc);
        let t = TempDir::new("panic");
        let stick = (t.0.clone(), "SN".to_string());
        let mut out = Vec::new();
        let mut lines = Vec::new();
        rescue_to(
            c.doc.as_deref().expect("a document"),
            &c,
            Some(&stick),
            &mut out,
            &mut |l| lines.push(l.to_string()),
        );
        let frames = decode_console(out);
        let f = frames[0].as_ref().expect("a good frame");
        assert_eq!(f.name, "SN-1.json");
        let file = fs::read(t.0.join("results/SN-1.json")).expect("on the stick");
        assert_eq!(f.bytes, frame::compact_json(&file));
        let doc: ResultDoc = serde_json::from_slice(&f.bytes).expect("json");
        assert_eq!(doc.tests.len(), 1);
        assert_eq!(doc.tests[0].name, "a");
        assert_eq!(doc.run.status, RunStatus::Error);
        let why = doc.run.error.as_deref().unwrap_or_default();
        assert!(
            why.starts_with("interrupted after 1 test(s): the worker process panicked (test-only forced panic")
                && why.contains("signal 6 (SIGABRT)"),
            "{why}"
        );
        schema_valid(&doc);
        assert!(
            lines[0].starts_with("supervisor: results written to the stick"),
            "{lines:?}"
        );
    }

    /// The worker's emit: the telemetry logs beside the document on the
    /// stick, under its stem; without a stick, the console says they were
    /// not saved.
    #[test]
    fn emit_saves_the_telemetry_logs_beside_the_document() {
        let doc = run::new_doc(None, "s", 1, false, Vec::new());
        let files = [crate::results::beside::Evidence {
            file: "nvme0n1.telemetry.bin".into(),
            bytes: vec![1, 0, 2, 0],
        }];
        let t = TempDir::new("emit-beside");
        let mut lines = Vec::new();
        let e = emit(&doc, &files, Some(&t.0), "", "SN", &mut Vec::new(), &mut |l| {
            lines.push(l.to_string())
        });
        assert_eq!(e.saved, Some(t.0.join("results/SN-1.json")));
        assert_eq!(
            fs::read(t.0.join("results/SN-1.nvme0n1.telemetry.bin")).expect("beside"),
            files[0].bytes
        );
        assert!(
            lines.iter().any(|l| l.starts_with("telemetry log saved: ")),
            "{lines:?}"
        );
        let mut lines = Vec::new();
        emit(&doc, &files, None, "no stick", "SN", &mut Vec::new(), &mut |l| {
            lines.push(l.to_string())
        });
        assert!(
            lines
                .iter()
                .any(|l| l == "1 telemetry log(s) not saved: the results are not on a stick"),
            "{lines:?}"
        );
    }

    /// A worker that died after it encoded its final document and sent
    /// its telemetry logs, before it saved them: PID 1 saves the document
    /// and the logs beside it, under the name the document gives them. A
    /// partial document names no log, and none is saved with it.
    #[test]
    fn a_rescue_saves_the_telemetry_logs_beside_the_final_document() {
        let ev = crate::results::beside::Evidence {
            file: "nvme0n1.telemetry.bin".into(),
            bytes: vec![0, 7, 0, 255],
        };
        let d = run::new_doc(None, "s", 1, false, Vec::new());
        let json = serde_json::to_string(&d).expect("json");
        let ending = supervise::Ending::Exited(crate::sys::process::Exit::Signal(libc::SIGKILL));
        let mut reports = Reports::default();
        for m in [
            Msg::Partial(json.clone()),
            Msg::Beside(ev.clone()),
            Msg::Final(json.clone()),
        ] {
            reports.apply(m);
        }
        let c = supervise::conclude(&reports, &ending, OnFinish::PowerOff, &blank_error_doc);
        assert_eq!(c.beside, vec![ev.clone()]);
        let t = TempDir::new("rescue-beside");
        fs::write(t.0.join("earlier"), "x").expect("write");
        let mut lines = Vec::new();
        rescue_to(
            c.doc.as_deref().expect("a document"),
            &c,
            Some(&(t.0.clone(), "SN".into())),
            &mut Vec::new(),
            &mut |l| lines.push(l.to_string()),
        );
        assert_eq!(
            fs::read(t.0.join("results/SN-1.nvme0n1.telemetry.bin")).expect("beside"),
            ev.bytes,
            "{lines:?}"
        );
        assert!(t.0.join("results/SN-1.json").is_file());
        // Saved by the worker already: PID 1 saves neither.
        reports.apply(Msg::Saved("SN-1.json".into()));
        let c = supervise::conclude(&reports, &ending, OnFinish::PowerOff, &blank_error_doc);
        assert!(!c.to_stick && c.beside.is_empty(), "{c:?}");
        // Only a partial document: no log goes with it.
        let mut partial = Reports::default();
        partial.apply(Msg::Partial(json));
        partial.apply(Msg::Beside(ev));
        let c = supervise::conclude(&partial, &ending, OnFinish::PowerOff, &blank_error_doc);
        assert!(c.to_stick && c.beside.is_empty(), "{c:?}");
    }

    #[test]
    fn without_the_key_nothing_panics() {
        let disks = sim_disks(&["sim:ssd:64M"]);
        let cfg = r#"{"tests":[{"workload":"rand_read","runtime":"50ms"},{"workload":"seq_read","runtime":"50ms"}]}"#;
        let (mut plan, _, _) = plan_text(cfg, "s", "", &disks, &[]).expect("plan");
        let doc = run::execute(&mut plan, &mut |_| {}, &mut |d| after_test(TestKeys::default(), d));
        assert_eq!(doc.tests.len(), 2);
    }

    #[test]
    fn a_rescue_without_a_stick_still_frames_on_the_console() {
        let d = run::new_doc(None, "s", 1, true, Vec::new());
        let json = partial_json(&d).expect("json");
        let mut reports = Reports::default();
        reports.apply(Msg::Partial(json));
        let ending = supervise::Ending::Exited(crate::sys::process::Exit::Code(101));
        let c = supervise::conclude(&reports, &ending, OnFinish::PowerOff, &blank_error_doc);
        let doc = c.doc.clone().expect("a document");
        let mut out = Vec::new();
        let mut lines = Vec::new();
        rescue_to(&doc, &c, None, &mut out, &mut |l| lines.push(l.to_string()));
        let f = decode_console(out).remove(0).expect("frame");
        assert_eq!(f.name, "unknown.json");
        assert!(lines[0].contains("no stick was mounted"), "{lines:?}");
        // A stick that fails the write: the console copy still comes out.
        let t = TempDir::new("panic-bad-stick");
        fs::write(t.0.join("results"), "not a dir").expect("write");
        let mut out = Vec::new();
        let mut lines = Vec::new();
        rescue_to(&doc, &c, Some(&(t.0.clone(), "SN".into())), &mut out, &mut |l| {
            lines.push(l.to_string())
        });
        assert_eq!(decode_console(out).len(), 1);
        assert!(lines[0].contains("no results file written"), "{lines:?}");
        // The worker died before reporting anything: an error document all the same.
        let c = supervise::conclude(&Reports::default(), &ending, OnFinish::PowerOff, &blank_error_doc);
        let blank: ResultDoc = serde_json::from_str(c.doc.as_deref().expect("doc")).expect("json");
        assert_eq!(blank.run.status, RunStatus::Error);
        assert_eq!(
            blank.run.error.as_deref(),
            Some("the worker process exited with status 101 before any result")
        );
        schema_valid(&blank);
    }
}
