//! `package_search` and `package_install`: run a package manager with the
//! argv `wamcp_policy::devenv::packages` fixes, and prove what an install
//! did by asking the manager afterwards.
//!
//! Installers write where they must (Program Files, `/usr`), so they run
//! outside the command confinement — which is why every install is a plan
//! first and runs only after the user said yes to that exact argv.

use crate::audit_log::Entry;
use crate::capability::{Identity, identity};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wamcp_exec::{Progress, RunOutput, RunSpec};
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::devenv::audit::{Event, Outcome};
use wamcp_policy::devenv::packages::{
    INSTALL_TIMEOUT_SECONDS, SEARCH_TIMEOUT_SECONDS, Source, parse_search,
};
use wamcp_policy::devenv::safety::Safety;

/// Output kept from a package manager, per stream.
const KEEP: usize = 16 * 1024;
/// Characters of output shown from the end of each stream.
const TAIL_CHARS: usize = 4000;
/// Results listed from a search.
const MAX_RESULTS: usize = 50;

/// The program a source runs, found on the commands' `PATH`.
pub fn manager(programs: &ProgramSearch, argv0: &str) -> Option<PathBuf> {
    programs.find_program(argv0)
}

/// Whether this process runs as root (apt installs without `sudo`).
pub fn is_root() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }
    #[cfg(not(unix))]
    false
}

fn spec(programs: &ProgramSearch, program: &Path, argv: &[String], timeout: Duration) -> RunSpec {
    RunSpec {
        program: program.display().to_string(),
        args: argv[1..].to_vec(),
        env: vec![("DEBIAN_FRONTEND".into(), "noninteractive".into())],
        cwd: std::env::temp_dir(),
        timeout,
        keep_head: KEEP,
        keep_tail: KEEP,
        confinement: None,
        search: programs.clone(),
    }
}

fn tail(text: &str) -> String {
    let count = text.chars().count();
    text.chars()
        .skip(count.saturating_sub(TAIL_CHARS))
        .collect()
}

pub(crate) async fn run(
    programs: &ProgramSearch,
    program: &Path,
    argv: &[String],
    timeout: Duration,
    progress: Option<Progress<'_>>,
) -> Result<RunOutput, String> {
    let mut spec = spec(programs, program, argv, timeout);
    if cfg!(windows) {
        // winget is an App Execution Alias; choco and scoop may be batch
        // files, which run through cmd.exe (the id pattern keeps them safe).
        spec.program =
            wamcp_exec::command::windows_program(spec.program.clone(), &argv[1..], programs)
                .map_err(|e| e.message)?;
    }
    wamcp_exec::run_reporting(&spec, progress)
        .await
        .map_err(|e| format!("could not start '{}': {e}", argv[0]))
}

/// Searches `source` for `query`, with the manager `programs` finds.
pub async fn search(programs: &ProgramSearch, source: Source, query: &str) -> Value {
    let argv = source.search(query);
    let Some(program) = manager(programs, &argv[0]) else {
        return unavailable(source, &argv);
    };
    let out = match run(
        programs,
        &program,
        &argv,
        Duration::from_secs(SEARCH_TIMEOUT_SECONDS),
        None,
    )
    .await
    {
        Ok(out) => out,
        Err(e) => {
            return json!({"status": "failed", "source": source.name(), "argv": argv, "reason": e});
        }
    };
    let stdout = out.stdout.render();
    let mut found = parse_search(source, &stdout);
    let total = found.len();
    found.truncate(MAX_RESULTS);
    let status = match (out.timed_out, out.exit_code) {
        (true, _) => "unknown",
        (false, Some(0)) => "completed",
        // winget answers 0x8A150014 (no match) with a non-zero code.
        (false, _) if found.is_empty() => "completed",
        _ => "failed",
    };
    json!({
        "status": status,
        "source": source.name(),
        "argv": argv,
        "exit_code": out.exit_code,
        "timed_out": out.timed_out,
        "results": found,
        "result_count": total,
        "output_tail": tail(&stdout),
        "stderr_tail": tail(&out.stderr.render()),
        "next": "Install with package_install using a result's exact id and the same source.",
    })
}

fn unavailable(source: Source, argv: &[String]) -> Value {
    json!({
        "status": "unavailable",
        "source": source.name(),
        "argv": argv,
        "reason": format!("'{}' was not found on PATH; this source is not available on this machine", argv[0]),
    })
}

/// An install, decided before anything runs.
#[derive(Clone, Debug)]
pub struct InstallPlan {
    /// The package manager that installs it.
    pub source: Source,
    /// The exact package id, as a search returned it.
    pub id: String,
    /// The install command, fixed by the source;
    /// `sudo -n` first for apt unless root.
    pub argv: Vec<String>,
    /// The file the argv's first word runs;
    /// `None` when the manager is not installed.
    pub executable: Option<PathBuf>,
    /// That file's identity, which the run must still match after approval.
    pub identity: Option<Identity>,
}

impl InstallPlan {
    /// The plan for installing `id` from `source`, with the manager
    /// looked up now by `programs`.
    pub fn new(source: Source, id: &str, programs: &ProgramSearch) -> InstallPlan {
        let argv = source.install(id, is_root());
        // `sudo` is what starts for apt: its identity is the one reviewed.
        let executable = manager(programs, &argv[0]);
        let identity = executable.as_ref().and_then(|p| identity(p).ok());
        InstallPlan {
            source,
            id: id.to_string(),
            argv,
            executable,
            identity,
        }
    }

    /// The plan as the tool shows it, with
    /// `status` (`planned`, `installed`...).
    pub fn view(&self, status: &str) -> Value {
        json!({
            "status": status,
            "source": self.source.name(),
            "package_id": self.id,
            "argv": self.argv,
            "executable": self.executable.as_ref().map(|p| p.display().to_string()),
            "executable_identity_kind": self.identity.as_ref().map(|i| i.kind),
            "executable_identity_sha256": self.identity.as_ref().map(|i| i.sha256.clone()),
            "safety": Safety::ApprovalRequired,
            "verify_argv": self.source.verify(&self.id),
            "timeout_seconds": INSTALL_TIMEOUT_SECONDS,
        })
    }

    /// The trail entry for this install, with a short fixed `detail`.
    pub fn audit(&self, outcome: Outcome, started: Option<Instant>, detail: &str) -> Entry {
        Entry {
            tool: "package_install",
            subject: Some(format!("{}:{}", self.source.name(), self.id)),
            safety: Some(Safety::ApprovalRequired),
            event: Event::Execution,
            outcome,
            duration: started.map_or(Duration::ZERO, |s| s.elapsed()),
            detail: Some(detail.to_string()),
        }
    }

    /// Whether the package is listed as installed now; `None` when the
    /// check itself could not run.
    async fn installed(&self, programs: &ProgramSearch) -> Option<bool> {
        let argv = self.source.verify(&self.id);
        let program = manager(programs, &argv[0])?;
        let out = run(programs, &program, &argv, Duration::from_secs(60), None)
            .await
            .ok()?;
        if out.timed_out {
            return None;
        }
        Some(
            self.source
                .shows_installed(&self.id, out.exit_code, &out.stdout.render()),
        )
    }

    /// Runs the install (approval already given) and verifies it, with the
    /// checks found and the installer's PATH set by `programs`: made again
    /// after the user's answer, which may have taken minutes while the
    /// writable places changed.
    pub async fn execute(
        &self,
        programs: &ProgramSearch,
        progress: Option<Progress<'_>>,
    ) -> (Value, Entry) {
        let started = Instant::now();
        let Some(program) = &self.executable else {
            let mut view = self.view("unavailable");
            view["reason"] = format!("'{}' was not found on PATH", self.argv[0]).into();
            return (view, self.audit(Outcome::NotExecuted, None, "unavailable"));
        };
        if let Some(check) = self.source.exact_name_check(&self.id) {
            let named = match manager(programs, &check[0]) {
                Some(p) => run(programs, &p, &check, Duration::from_secs(60), None)
                    .await
                    .ok(),
                None => None,
            };
            let exact = named.is_some_and(|o| {
                self.source
                    .names_exactly(&self.id, o.exit_code, &o.stdout.render())
            });
            if !exact {
                let mut view = self.view("failed");
                view["reason"] = format!(
                    "no package is named exactly '{}' here (apt would read an unknown name as a pattern); nothing \
                     was installed",
                    self.id
                )
                .into();
                return (
                    view,
                    self.audit(Outcome::NotExecuted, Some(started), "no exact package"),
                );
            }
        }
        let before = self.installed(programs).await;
        let out = match run(
            programs,
            program,
            &self.argv,
            Duration::from_secs(INSTALL_TIMEOUT_SECONDS),
            progress,
        )
        .await
        {
            Ok(out) => out,
            Err(e) => {
                let mut view = self.view("failed");
                view["reason"] = Value::String(e);
                return (
                    view,
                    self.audit(Outcome::NotExecuted, Some(started), "not started"),
                );
            }
        };
        let after = self.installed(programs).await;
        let stderr = out.stderr.render();
        let used_sudo = self.argv[0] == "sudo";
        let (status, outcome, finding) = judge(
            out.timed_out,
            out.exit_code,
            before,
            after,
            &stderr,
            used_sudo,
        );
        let mut view = self.view(status);
        view["exit_code"] = json!(out.exit_code);
        view["timed_out"] = json!(out.timed_out);
        view["installed_before"] = json!(before);
        view["installed_after"] = json!(after);
        view["verification"] = Value::String(finding.to_string());
        view["output_tail"] = Value::String(tail(&out.stdout.render()));
        view["stderr_tail"] = Value::String(tail(&stderr));
        let detail = match (out.timed_out, out.exit_code) {
            (true, _) => "timed out".to_string(),
            (false, Some(code)) => format!("exit code {code}"),
            (false, None) => "killed".to_string(),
        };
        (view, self.audit(outcome, Some(started), &detail))
    }
}

/// What an install's exit code and the before/after listing prove.
pub fn judge(
    timed_out: bool,
    exit_code: Option<i32>,
    before: Option<bool>,
    after: Option<bool>,
    stderr: &str,
    used_sudo: bool,
) -> (&'static str, Outcome, &'static str) {
    // Only sudo's own refusal, and only when nothing got listed: an
    // installer that merely prints the phrase proves nothing.
    let sudo_refused = used_sudo
        && exit_code != Some(0)
        && after != Some(true)
        && (stderr.contains("sudo: a password is required")
            || stderr.contains("sudo: a terminal is required"));
    if sudo_refused {
        return (
            "failed",
            Outcome::Failed,
            "sudo needs a password, which a tool call cannot give: nothing was installed; the user can run the \
             install themselves or allow it without a password",
        );
    }
    match (timed_out, exit_code == Some(0), before, after) {
        (true, _, _, Some(true)) => (
            "unknown",
            Outcome::Unknown,
            "the installer was killed at the timeout; the package is listed now, but may be incomplete",
        ),
        (true, _, _, _) => (
            "unknown",
            Outcome::Unknown,
            "the installer was killed at the timeout; what it changed is not known",
        ),
        (false, true, Some(false), Some(true)) => (
            "completed",
            Outcome::Succeeded,
            "the installer succeeded and the package is now listed as installed",
        ),
        (false, true, Some(true), Some(true)) => (
            "completed",
            Outcome::Succeeded,
            "the package was already installed and still is",
        ),
        (false, true, _, Some(true)) => (
            "completed",
            Outcome::Succeeded,
            "the installer succeeded and the package is listed as installed",
        ),
        (false, true, _, Some(false)) => (
            "unknown",
            Outcome::Unknown,
            "the installer reported success, but the package is not listed as installed: check before relying on it",
        ),
        (false, true, _, None) => (
            "unknown",
            Outcome::Unknown,
            "the installer reported success; the listing could not be read to confirm it",
        ),
        (false, false, Some(true), Some(true)) => (
            "failed",
            Outcome::Failed,
            "the installer failed; the package was already installed before and still is",
        ),
        (false, false, _, Some(true)) => (
            "unknown",
            Outcome::Unknown,
            "the installer failed, yet the package is listed now: it may be partly installed",
        ),
        (false, false, _, _) => (
            "failed",
            Outcome::Failed,
            "the installer failed and the package is not listed as installed",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_prove_less_than_the_listing() {
        let cases = [
            (false, Some(0), Some(false), Some(true), "completed"),
            (false, Some(0), Some(true), Some(true), "completed"),
            (false, Some(0), Some(false), Some(false), "unknown"),
            (false, Some(0), Some(false), None, "unknown"),
            (false, Some(1), Some(false), Some(false), "failed"),
            (false, Some(1), Some(false), Some(true), "unknown"),
            (false, Some(1), Some(true), Some(true), "failed"),
            (true, None, Some(false), Some(false), "unknown"),
            (true, None, Some(false), Some(true), "unknown"),
        ];
        for (timed_out, code, before, after, want) in cases {
            assert_eq!(
                judge(timed_out, code, before, after, "", true).0,
                want,
                "{timed_out} {code:?} {before:?} {after:?}"
            );
        }
        let refusal = "sudo: a password is required\n";
        let sudo = judge(false, Some(1), Some(false), Some(false), refusal, true);
        assert!(sudo.2.starts_with("sudo needs a password"));
        // The phrase from an installer run without sudo, or with the package
        // listed afterwards, proves nothing about sudo.
        assert_eq!(
            judge(false, Some(1), Some(false), Some(true), refusal, false).0,
            "unknown"
        );
        assert_eq!(
            judge(false, Some(1), Some(false), Some(true), refusal, true).0,
            "unknown"
        );
        assert_eq!(
            judge(false, Some(1), Some(false), Some(false), refusal, false).2,
            "the installer failed and the package is not listed as installed"
        );
    }
}
