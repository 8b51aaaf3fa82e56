//! The settings as typed values, read once from the resolved configuration.
//!
//! Each setting is read by the parser of its kind (see [`super::Kind`]); a
//! value it does not recognise becomes a warning naming the setting, the
//! value and what is used instead, never a silent "no". What a value then
//! means for the server (which roots exist, which caches are safe) is
//! judged by the server context, which owns the file system checks.

use super::kinds::{self, Kind};
use super::*;
use crate::config::Resolution;
use std::path::PathBuf;
use std::time::Duration;
use wamcp_policy::command::sandbox::SandboxMode;
use wamcp_policy::hosts::parse_host_list;

/// `WAMCP_WORKSPACE_FROM_CWD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adopt {
    Off,
    On,
    /// Only when `WAMCP_PROJECT_ROOTS` names no project.
    Auto,
}

/// Every setting, typed.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `WAMCP_TOOLS` as written (groups have a grammar of their own).
    pub tools: Option<String>,
    pub web_research: bool,
    /// `WAMCP_PROJECT_ROOTS` entries as written.
    pub project_roots: Vec<String>,
    pub client_roots: bool,
    /// `None` when unset or not absolute (reported): the default then.
    pub data_dir: Option<PathBuf>,
    pub download_root: Option<PathBuf>,
    pub workspace_from_cwd: Adopt,
    /// Hosts added to the documentation allowlist.
    pub extra_doc_hosts: Vec<String>,
    /// `WAMCP_COMMAND_HOSTS`, normalised.
    pub command_hosts: Vec<String>,
    /// `WAMCP_COMMAND_PASS_VARIABLES`: names commands get anyway.
    pub command_pass_variables: Vec<String>,
    /// Files as written; relative ones are taken from the working directory.
    pub allowed_hosts_file: Option<PathBuf>,
    pub command_rules: Option<PathBuf>,
    pub capabilities_file: Option<PathBuf>,
    pub host_consent: bool,
    pub host_grant_persist: bool,
    pub command_sandbox: SandboxMode,
    /// `WAMCP_COMMAND_WRITABLE` as written (its words and entries are
    /// judged against the home directory and PATH).
    pub command_writable: Option<String>,
    /// `WAMCP_SECRET_PATHS` entries as written (`~` not yet expanded).
    pub secret_paths: Vec<String>,
    pub search_backend: String,
    pub search_budget: Duration,
    pub desktop_apps: Vec<String>,
    pub desktop_processes: Vec<String>,
    /// The undo journal's size in MiB; 0 turns it off.
    pub undo_budget_mib: u64,
    /// How many days the undo journal keeps a step.
    pub undo_days: u64,
    /// One sentence per value that could not be used as written.
    pub warnings: Vec<String>,
}

impl Settings {
    pub fn read(resolution: &Resolution) -> Settings {
        let mut r = Reader {
            resolution,
            warnings: Vec::new(),
        };
        let extra_doc_hosts = r.hosts(EXTRA_DOC_HOSTS);
        let command_hosts = r.hosts(COMMAND_HOSTS);
        Settings {
            tools: r.text(TOOLS).map(String::from),
            web_research: r.switch(WEB_RESEARCH),
            project_roots: r.list(PROJECT_ROOTS),
            client_roots: r.switch(CLIENT_ROOTS),
            data_dir: r.absolute(DATA_DIR),
            download_root: r.absolute(DOWNLOAD_ROOT),
            workspace_from_cwd: r.adopt(WORKSPACE_FROM_CWD),
            extra_doc_hosts,
            command_hosts,
            command_pass_variables: r.list(COMMAND_PASS_VARIABLES),
            allowed_hosts_file: r.text(ALLOWED_HOSTS_FILE).map(PathBuf::from),
            command_rules: r.text(COMMAND_RULES).map(PathBuf::from),
            capabilities_file: r.text(CAPABILITIES_FILE).map(PathBuf::from),
            host_consent: r.switch(HOST_CONSENT),
            host_grant_persist: r.switch(HOST_GRANT_PERSIST),
            command_sandbox: SandboxMode::parse(&r.choice(COMMAND_SANDBOX))
                .unwrap_or(SandboxMode::Require),
            command_writable: r.text(COMMAND_WRITABLE).map(String::from),
            secret_paths: r
                .text(SECRET_PATHS)
                .map(|raw| {
                    raw.split(super::ROOTS_SEPARATOR)
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            search_backend: r.choice(SEARCH_BACKEND),
            search_budget: Duration::from_secs(r.whole(SEARCH_BUDGET)),
            desktop_apps: r.list(DESKTOP_APPS),
            desktop_processes: r.list(DESKTOP_PROCESSES),
            undo_budget_mib: r.whole(UNDO_BUDGET),
            undo_days: r.whole(UNDO_DAYS),
            warnings: r.warnings,
        }
    }
}

/// Reads settings by their kind, collecting warnings.
struct Reader<'a> {
    resolution: &'a Resolution,
    warnings: Vec<String>,
}

impl<'a> Reader<'a> {
    fn text(&self, name: &str) -> Option<&'a str> {
        self.resolution.get(name)
    }

    /// A host list; each entry that is not a host name is a warning.
    fn hosts(&mut self, name: &str) -> Vec<String> {
        let Some(raw) = self.text(name) else {
            return Vec::new();
        };
        let (hosts, errors) = parse_host_list(raw);
        self.warnings
            .extend(errors.into_iter().map(|e| format!("{name}: {e}")));
        hosts
    }

    fn kind(name: &str) -> Option<Kind> {
        any(name).map(|s| s.kind)
    }

    fn warn(&mut self, name: &str, raw: &str, problem: &str, using: &str) {
        self.warnings
            .push(format!("{name}='{raw}' {problem}; using {using}."));
    }

    fn switch(&mut self, name: &str) -> bool {
        let Some(Kind::Switch {
            default,
            unrecognised,
        }) = Self::kind(name)
        else {
            return false;
        };
        let Some(raw) = self.text(name) else {
            return default;
        };
        kinds::switch(raw).unwrap_or_else(|| {
            let using = if unrecognised { "on" } else { "off" };
            self.warn(name, raw, NEITHER_YES_NOR_NO, using);
            unrecognised
        })
    }

    fn adopt(&mut self, name: &str) -> Adopt {
        let Some(raw) = self.text(name) else {
            return Adopt::Off;
        };
        if raw.trim().eq_ignore_ascii_case("auto") {
            return Adopt::Auto;
        }
        match kinds::switch(raw) {
            Some(true) => Adopt::On,
            Some(false) => Adopt::Off,
            None => {
                self.warn(name, raw, "is neither auto nor yes or no", "off");
                Adopt::Off
            }
        }
    }

    /// The chosen value; one not recognised is reported and the kind's
    /// replacement used, or kept as written when it has none.
    fn choice(&mut self, name: &str) -> String {
        let Some(Kind::Choice {
            values,
            unrecognised,
        }) = Self::kind(name)
        else {
            return String::new();
        };
        let Some(raw) = self.text(name) else {
            return values[0].to_string();
        };
        match kinds::choice(raw, values) {
            Ok(value) => value.to_string(),
            Err(problem) => match unrecognised {
                Some(instead) => {
                    self.warn(name, raw, &problem, instead);
                    instead.to_string()
                }
                None => {
                    self.warnings.push(format!(
                        "{name}='{raw}' {problem}; what needs it refuses to run rather than fall \
                         back silently."
                    ));
                    raw.trim().to_ascii_lowercase()
                }
            },
        }
    }

    fn whole(&mut self, name: &str) -> u64 {
        let Some(Kind::Whole {
            min,
            max,
            default,
            unit,
        }) = Self::kind(name)
        else {
            return 0;
        };
        let Some(raw) = self.text(name) else {
            return default;
        };
        kinds::whole(raw, min, max, unit).unwrap_or_else(|problem| {
            self.warn(name, raw, &problem, &default.to_string());
            default
        })
    }

    fn absolute(&mut self, name: &str) -> Option<PathBuf> {
        let raw = self.text(name)?;
        let path = PathBuf::from(raw);
        if path.is_absolute() {
            return Some(path);
        }
        self.warn(name, raw, "is not an absolute path", "the default");
        None
    }

    fn list(&self, name: &str) -> Vec<String> {
        let Some(raw) = self.text(name) else {
            return Vec::new();
        };
        match Self::kind(name) {
            Some(Kind::List(separators)) => kinds::list(raw, separators),
            _ => kinds::list(raw, &[ROOTS_SEPARATOR]),
        }
    }
}

const NEITHER_YES_NOR_NO: &str = "is neither yes (1, true, yes, on) nor no (0, false, no, off)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;

    fn read(pairs: &[(&str, &str)]) -> Settings {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env = move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        Settings::read(&config::resolve(Ok(None), &env))
    }

    /// The defect this reader replaced: only the word `off` turned client
    /// roots off, so `0` left them writable.
    #[test]
    fn every_no_turns_client_roots_off_and_an_unknown_word_too() {
        assert!(read(&[]).client_roots);
        for no in ["0", "false", "no", "off", "OFF"] {
            let s = read(&[(CLIENT_ROOTS, no)]);
            assert!(!s.client_roots, "{no}");
            assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        }
        let s = read(&[(CLIENT_ROOTS, "disable")]);
        assert!(!s.client_roots);
        assert_eq!(
            s.warnings,
            [
                "WAMCP_CLIENT_ROOTS='disable' is neither yes (1, true, yes, on) nor no (0, false, no, \
              off); using off."
            ]
        );
    }

    #[test]
    fn an_unrecognised_switch_is_reported_never_a_silent_no() {
        let s = read(&[(WEB_RESEARCH, "enable"), (HOST_CONSENT, "maybe")]);
        assert!(!s.web_research);
        assert!(s.host_consent, "consent keeps asking");
        assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
        assert!(s.warnings[0].starts_with("WAMCP_WEB_RESEARCH='enable' is neither"));
        assert!(read(&[(WEB_RESEARCH, "Yes")]).web_research);
    }

    #[test]
    fn choices_seconds_and_paths_fall_back_as_their_kind_says() {
        let s = read(&[
            (COMMAND_SANDBOX, "strict"),
            (SEARCH_BACKEND, "Bing"),
            (SEARCH_BUDGET, "0"),
            (DATA_DIR, "relative/dir"),
            (WORKSPACE_FROM_CWD, "sometimes"),
        ]);
        assert_eq!(s.command_sandbox, SandboxMode::Require, "fails closed");
        assert_eq!(s.search_backend, "bing", "kept, so web_search refuses");
        assert_eq!(s.search_budget, Duration::from_secs(10));
        assert_eq!(s.data_dir, None);
        assert_eq!(s.workspace_from_cwd, Adopt::Off);
        assert_eq!(
            s.warnings,
            [
                "WAMCP_DATA_DIR='relative/dir' is not an absolute path; using the default.",
                "WAMCP_WORKSPACE_FROM_CWD='sometimes' is neither auto nor yes or no; using off.",
                "WAMCP_COMMAND_SANDBOX='strict' is not one of auto, off, require; using require.",
                "WAMCP_SEARCH_BACKEND='Bing' is not one of duckduckgo; what needs it refuses to run \
                 rather than fall back silently.",
                "WAMCP_SEARCH_BUDGET_SECONDS='0' is not a whole number of seconds from 1 to 600; \
                 using 10.",
            ]
        );
        // `,` may appear in a path: desktop lists split on `;` and lines.
        let s = read(&[(DESKTOP_APPS, " notepad ; C:\\Tools\\a,b.exe\n\n;code.exe;")]);
        assert_eq!(
            s.desktop_apps,
            ["notepad", "C:\\Tools\\a,b.exe", "code.exe"]
        );
        assert!(
            read(&[(DESKTOP_PROCESSES, " ; ")])
                .desktop_processes
                .is_empty()
        );
        let s = read(&[(WORKSPACE_FROM_CWD, "AUTO"), (COMMAND_SANDBOX, "Off")]);
        assert_eq!(
            (s.workspace_from_cwd, s.command_sandbox),
            (Adopt::Auto, SandboxMode::Off)
        );
    }

    /// Every setting whose kind can refuse a value is read by that kind:
    /// a nonsense value for each gives one warning each.
    #[test]
    fn each_setting_is_read_as_the_table_says() {
        let refusing: Vec<&str> = SETTINGS
            .iter()
            .filter(|s| {
                matches!(
                    s.kind,
                    Kind::Switch { .. }
                        | Kind::SwitchOrAuto
                        | Kind::Choice { .. }
                        | Kind::Whole { .. }
                        | Kind::AbsolutePath
                )
            })
            .map(|s| s.name)
            .collect();
        let pairs: Vec<(&str, &str)> = refusing.iter().map(|n| (*n, "§")).collect();
        let warnings = read(&pairs).warnings;
        for name in &refusing {
            assert!(
                warnings.iter().any(|w| w.starts_with(&format!("{name}="))),
                "{name} not read by its kind: {warnings:?}"
            );
        }
        assert_eq!(warnings.len(), refusing.len(), "{warnings:?}");
    }
}
