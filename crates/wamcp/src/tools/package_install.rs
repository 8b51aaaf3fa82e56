//! `package_install`: plan, then (with the user's yes) install one exact
//! package, and verify it.

use super::approval::{Approvable, Question, Status, Stop, drive};
use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;
use std::time::Instant;
use wamcp_devenv::audit_log::Entry;
use wamcp_devenv::capability::{Expected, Identity};
use wamcp_devenv::packages::InstallPlan;
use wamcp_exec::Progress;
use wamcp_policy::devenv::audit::Outcome;
use wamcp_policy::devenv::packages::{Source, id_problem};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The exact id, as package_search found it.
    pub package_id: String,
    #[serde(default = "winget")]
    pub source: Source,
    /// false plans; true installs once approved (pass the plan's expected_* values).
    #[serde(default)]
    pub execute: bool,
    #[serde(default)]
    pub expected_executable: Option<String>,
    #[serde(default)]
    pub expected_executable_identity_kind: Option<String>,
    #[serde(default)]
    pub expected_executable_identity_sha256: Option<String>,
}

impl Params {
    fn expected(&self) -> Expected {
        Expected {
            executable: self.expected_executable.clone(),
            kind: self.expected_executable_identity_kind.clone(),
            sha256: self.expected_executable_identity_sha256.clone(),
        }
    }
}

fn winget() -> Source {
    Source::Winget
}

pub struct PackageInstall;

impl ToolDef for PackageInstall {
    type Params = Params;
    const NAME: &'static str = "package_install";
    const HOOK: HookClass = HookClass::Install;
    const LONG_RUNNING: bool = true;
    const GROUPS: &'static [Group] = &[Group::Packages];
    const DESCRIPTION: &'static str = "Install one exact package (winget, Chocolatey, Scoop, apt, \
        Homebrew): plan, install once the user approves, verify.";
    const HINTS: Hints = Hints::RUNS_PROGRAMS;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        if let Some(problem) = id_problem(p.source, &p.package_id) {
            return Err(
                ToolError::new(ErrorType::InvalidInput, format!("{problem}."))
                    .recover("Use the exact id package_search returned.")
                    .detail("status", "invalid_input"),
            );
        }
        p.expected().validate(p.execute)?;
        let (source, id) = (p.source, p.package_id.clone());
        let programs = call.ctx.program_search();
        let plan = blocking(Self::NAME, move || {
            Ok(InstallPlan::new(source, &id, &programs))
        })
        .await?;
        let install = Install {
            plan,
            expected: p.expected(),
        };
        let view = drive(&call, &install, p.execute).await;
        if p.execute {
            // Even a failed installer may have changed the machine (and a
            // snapshot may have been taken while it ran).
            call.ctx.session.env_cache.invalidate();
        }
        Ok(ToolOutput::Data(view))
    }
}

/// An install as the approval driver runs it.
struct Install {
    plan: InstallPlan,
    expected: Expected,
}

impl Approvable for Install {
    fn view(&self, status: Status) -> Value {
        self.plan.view(status.as_str())
    }

    fn record(&self, outcome: Outcome, started: Option<Instant>, detail: &str) -> Entry {
        self.plan.audit(outcome, started, detail)
    }

    fn program(&self) -> Option<(&Path, Option<&Identity>)> {
        let program = self.plan.executable.as_deref()?;
        Some((program, self.plan.identity.as_ref()))
    }

    fn planned(&self) -> Value {
        if self.plan.executable.is_none() {
            let reason = format!(
                "'{}' was not found on PATH: the {} source is not available on this machine",
                self.plan.argv[0],
                self.plan.source.name()
            );
            return self.stop(Status::Unavailable, reason, "").view;
        }
        let mut view = self.view(Status::Planned);
        view["next"] = "To install, call package_install again with execute=true and expected_executable, \
                        expected_executable_identity_kind and expected_executable_identity_sha256 from this plan; \
                        the user is asked first."
            .into();
        view
    }

    fn refused(&self) -> Option<Stop> {
        self.stale(&self.expected)
    }

    fn question(&self, _: &ToolCall) -> Option<Question> {
        Some(Question {
            what: format!("an install from {}", self.plan.source.name()),
            argv: self.plan.argv.clone(),
            why: "It changes this machine, outside the project, and is verified afterwards.".into(),
        })
    }

    async fn still_ready(&self, _: &ToolCall) -> Option<Stop> {
        None
    }

    async fn execute(&self, call: &ToolCall) -> (Value, Entry) {
        // Before the installer starts: a snapshot cached while it runs, or
        // after it was abandoned, must not describe the machine as it was.
        call.ctx.session.env_cache.invalidate();
        let progress = call.progress(format!("installing {}", self.plan.id));
        // Programs are looked up as the places are now: a root the client
        // added while the user was being asked is distrusted too.
        let programs = call.ctx.program_search();
        self.plan
            .execute(&programs, progress.as_ref().map(|f| f as Progress))
            .await
    }
}
