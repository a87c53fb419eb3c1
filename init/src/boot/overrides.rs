//! The kernel command line's overrides of the config, read once: the
//! `bootbench.*` keys that go over a config field (`profile`, `on_finish`,
//! `results_url`, `metrics_url`, `serial_ports`). Each is parsed and
//! checked here, where it is read; [`CmdlineOverrides::merge`] is the one
//! place they go into a plan ([`super::unattended::plan_unattended`] calls
//! it). Two of them are also needed where there is no plan: PID 1's last
//! resort when no config could be planned ([`CmdlineOverrides::on_finish`])
//! and the serial ports a refusal's document goes to
//! ([`CmdlineOverrides::serial`]); they come from the same reading. So do
//! the modules `bootbench.modules=` names, which load with the drivers
//! before any config is read ([`CmdlineOverrides::modules`]).
//!
//! Wherever the command line names one, it wins; a bad value is an error
//! naming the key (`bootbench.on_finish: "nap" is not ...`), except
//! `bootbench.serial=`, which is said and replaced by every serial port, so
//! that a typo never loses the results.

use bench_core::vocab::url::{Template, Url};

use crate::boot::cmdline::{Cmdline, Key};
use crate::plan::OnFinish;
use crate::plan::{ConfigError, Overrides, Plan};
use crate::results::serial::Choice;

/// The command line's overrides, each parsed: `None` where the command
/// line does not name the key, `Some(Err)` (the message naming the key)
/// where its value is bad.
#[derive(Debug, Default)]
pub struct CmdlineOverrides {
    /// `bootbench.profile=`: the profile, over the config's and the
    /// planner's (checked by the planner, as the config's is).
    profile: Option<String>,
    /// `bootbench.on_finish=`.
    on_finish: Option<Result<OnFinish, String>>,
    /// `bootbench.results_url=`, as written (a refusal's document is sent
    /// to it unchecked: a bad one fails to send and says so) and checked.
    results_url: Option<(String, Result<Template, String>)>,
    /// `bootbench.metrics_url=`.
    metrics_url: Option<Result<Url, String>>,
    /// `bootbench.serial=`.
    serial: Option<Result<Choice, String>>,
    /// `bootbench.modules=` ([`crate::modules::parse_named`]).
    modules: Option<Result<Vec<String>, String>>,
}

impl CmdlineOverrides {
    /// Every override `cmdline` names, parsed and checked.
    pub fn read(cmdline: &Cmdline) -> Self {
        let named = |key: Key, e: String| format!("{key}: {e}");
        CmdlineOverrides {
            profile: cmdline.get(Key::Profile).map(str::to_string),
            on_finish: cmdline
                .get(Key::OnFinish)
                .map(|v| v.parse::<OnFinish>().map_err(|e| named(Key::OnFinish, e))),
            results_url: cmdline
                .get(Key::ResultsUrl)
                .map(|v| (v.to_string(), Template::parse(v).map_err(|e| named(Key::ResultsUrl, e)))),
            metrics_url: cmdline
                .get(Key::MetricsUrl)
                .map(|v| crate::results::metrics::check_url(v).map_err(|e| named(Key::MetricsUrl, e))),
            serial: cmdline.get(Key::Serial).map(Choice::parse),
            modules: cmdline
                .get(Key::Modules)
                .map(|v| crate::modules::parse_named(v).map_err(|e| named(Key::Modules, e))),
        }
    }

    /// The modules `bootbench.modules=` names, to load with the drivers;
    /// none when it is absent or bad (a bad one stops the plan:
    /// [`CmdlineOverrides::before_plan`]).
    pub fn modules(&self) -> &[String] {
        match &self.modules {
            Some(Ok(m)) => m,
            _ => &[],
        }
    }

    /// `bootbench.on_finish=` where it is valid: what PID 1 does when no
    /// config tells it.
    pub fn on_finish(&self) -> Option<OnFinish> {
        self.on_finish.as_ref().and_then(|r| r.as_ref().ok().copied())
    }

    /// What to do after a run of a config whose `on_finish` is `config`:
    /// the command line's where valid, else the config's, else power off.
    pub fn finish_after(&self, config: Option<OnFinish>) -> OnFinish {
        self.on_finish().or(config).unwrap_or_default()
    }

    /// The profile the plan is made with: the command line's, else the
    /// config's.
    pub fn profile_over(&self, config: Option<&str>) -> Option<String> {
        self.profile.as_deref().or(config).map(str::to_string)
    }

    /// The command line's say before the plan is made: a bad
    /// `bootbench.on_finish=` or `bootbench.modules=` is an error before
    /// the config's own are; `ov` gets the profile.
    pub fn before_plan(&self, ov: &mut Overrides) -> Result<(), ConfigError> {
        if let Some(Err(e)) = &self.on_finish {
            return Err(ConfigError(e.clone()));
        }
        if let Some(Err(e)) = &self.modules {
            return Err(ConfigError(e.clone()));
        }
        if self.profile.is_some() {
            ov.profile.clone_from(&self.profile);
        }
        Ok(())
    }

    /// The overrides merged into `plan`, made from the config: its
    /// `results_url` and `metrics_url` replaced where the command line
    /// names them. A bad one is an error naming its key (the results URL's
    /// first). The plan's id stays the config's: it is taken from the
    /// config as read.
    pub fn merge(&self, plan: &mut Plan) -> Result<(), String> {
        if let Some((_, t)) = &self.results_url {
            plan.results_url = Some(t.clone()?);
        }
        if let Some(u) = &self.metrics_url {
            plan.metrics_url = Some(u.clone()?);
        }
        Ok(())
    }

    /// `bootbench.results_url=` as written, unchecked: where a refusal's
    /// document goes when no plan was made.
    pub fn results_url_as_written(&self) -> Option<Template> {
        self.results_url.as_ref().map(|(v, _)| Template::unchecked(v))
    }

    /// The serial ports the results go to: `bootbench.serial=`'s, else the
    /// config's `serial_ports` (`config`), else every port; a bad
    /// `bootbench.serial=` is said on `log` and every port is used.
    pub fn serial(&self, config: Option<&[String]>, log: &mut dyn FnMut(&str)) -> Choice {
        match &self.serial {
            None => config.map_or(Choice::Every, |p| Choice::Named(p.to_vec())),
            Some(Ok(c)) => c.clone(),
            Some(Err(e)) => {
                log(&format!("{e}; the results go to every serial port"));
                Choice::Every
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> CmdlineOverrides {
        CmdlineOverrides::read(&Cmdline::parse(line))
    }

    #[test]
    fn on_finish_the_command_line_s_where_valid() {
        assert_eq!(read("bootbench.on_finish=halt").on_finish(), Some(OnFinish::Halt));
        assert_eq!(read("bootbench.on_finish=nap").on_finish(), None);
        assert_eq!(read("quiet").on_finish(), None);
        let r = read("bootbench.on_finish=reboot");
        assert_eq!(r.finish_after(Some(OnFinish::Halt)), OnFinish::Reboot);
        assert_eq!(read("").finish_after(Some(OnFinish::Halt)), OnFinish::Halt);
        assert_eq!(read("bootbench.on_finish=nap").finish_after(None), OnFinish::PowerOff);
        let mut ov = Overrides::default();
        let e = read("bootbench.on_finish=nap bootbench.profile=cdm")
            .before_plan(&mut ov)
            .unwrap_err();
        assert!(e.0.starts_with("bootbench.on_finish: \"nap\""), "{}", e.0);
        read("bootbench.profile=cdm").before_plan(&mut ov).unwrap();
        assert_eq!(ov.profile.as_deref(), Some("cdm"));
        assert_eq!(
            read("bootbench.profile=cdm").profile_over(Some("quick")).as_deref(),
            Some("cdm")
        );
        assert_eq!(read("").profile_over(Some("quick")).as_deref(), Some("quick"));
    }

    #[test]
    fn serial_the_command_line_s_else_the_config_s_else_every_port() {
        let config = ["ttyS2".to_string()];
        let mut said = Vec::new();
        let mut choose = |line: &str, config: Option<&[String]>| {
            let mut log = |l: &str| said.push(l.to_string());
            read(line).serial(config, &mut log)
        };
        assert_eq!(choose("", None), Choice::Every);
        assert_eq!(choose("", Some(&config)), Choice::Named(config.to_vec()));
        assert_eq!(choose("bootbench.serial=none", Some(&config)), Choice::None);
        assert_eq!(
            choose("bootbench.serial=ttyS1", Some(&config)),
            Choice::Named(vec!["ttyS1".to_string()])
        );
        assert_eq!(choose("bootbench.serial=lp0", Some(&config)), Choice::Every);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("bootbench.serial: \"lp0\" is not a serial port"),
            "{said:?}"
        );
        assert!(said[0].ends_with("; the results go to every serial port"), "{said:?}");
    }

    #[test]
    fn modules_the_command_line_names_and_a_bad_value_stops_the_plan() {
        assert_eq!(read("").modules(), &[] as &[String]);
        assert_eq!(
            read("bootbench.modules=scsi_debug,null-blk scsi_debug.zbc=managed").modules(),
            ["scsi_debug", "null_blk"]
        );
        let mut ov = Overrides::default();
        read("bootbench.modules=scsi_debug").before_plan(&mut ov).unwrap();
        // A bad value names none to load, and the plan is refused with the key, the value and
        // what is expected.
        let bad = read("bootbench.modules=scsi_debug,,x");
        assert_eq!(bad.modules(), &[] as &[String]);
        let e = bad.before_plan(&mut ov).unwrap_err().0;
        assert!(
            e.starts_with("bootbench.modules: \"scsi_debug,,x\" holds an empty name; expected module names"),
            "{e}"
        );
        let e = read("bootbench.modules=../evil").before_plan(&mut ov).unwrap_err().0;
        assert!(
            e.starts_with("bootbench.modules: \"../evil\" holds \"../evil\"; expected"),
            "{e}"
        );
    }

    #[test]
    fn a_results_url_as_written_goes_unchecked() {
        let r = read("bootbench.results_url=http://h/{host}");
        assert_eq!(
            r.results_url_as_written().map(|t| t.as_str().to_string()).as_deref(),
            Some("http://h/{host}")
        );
        assert!(read("").results_url_as_written().is_none());
    }
}
