//! `package_install`: plan, then (with the user's yes) install one exact
//! package, and verify it.

use super::approval::{ask_to_run, run_recorded};
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::time::Instant;
use wamcp_devenv::capability::Expected;
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
    /// false plans; true installs after the user approves (pass the plan's expected_* values).
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
    const LONG_RUNNING: bool = true;
    const GROUPS: &'static [Group] = &[Group::Packages];
    const DESCRIPTION: &'static str = "Install one exact package with winget, Chocolatey, Scoop, apt or \
        Homebrew: plan first, then install after the user approves, then verify it is listed as installed.";
    const HINTS: Hints = Hints::RUNS_PROGRAMS;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        if let Some(problem) = id_problem(p.source, &p.package_id) {
            return Err(ToolError::new(ErrorType::InvalidInput, format!("{problem}."))
                .recover("DO NOT retry the identical call; use the exact id package_search returned.")
                .detail("status", "invalid_input"));
        }
        p.expected().validate(p.execute)?;
        let (source, id) = (p.source, p.package_id.clone());
        let plan = blocking(Self::NAME, move || Ok(InstallPlan::new(source, &id))).await?;
        let (mut view, entry) = decide(&call, &plan, &p).await;
        if p.execute {
            // Even a failed installer may have changed the machine (and a
            // snapshot may have been taken while it ran).
            call.ctx.env_cache.invalidate();
        }
        if let Some(entry) = entry
            && let Some(problem) = call.ctx.audit(entry).await
        {
            view["audit_error"] = Value::String(problem);
        }
        Ok(ToolOutput::Data(view))
    }
}

async fn decide(
    call: &ToolCall,
    plan: &InstallPlan,
    p: &Params,
) -> (Value, Option<wamcp_devenv::audit_log::Entry>) {
    let Some(executable) = &plan.executable else {
        let mut view = plan.view("unavailable");
        view["reason"] = Value::String(format!(
            "'{}' was not found on PATH: the {} source is not available on this machine",
            plan.argv[0],
            plan.source.name()
        ));
        return (
            view,
            p.execute
                .then(|| plan.audit(Outcome::NotExecuted, None, "unavailable")),
        );
    };
    if !p.execute {
        let mut view = plan.view("planned");
        view["next"] = "To install, call package_install again with execute=true and expected_executable, \
                        expected_executable_identity_kind and expected_executable_identity_sha256 from this plan; \
                        the user is asked first."
            .into();
        return (view, None);
    }
    let stale = p
        .expected()
        .stale_reasons(executable, plan.identity.as_ref());
    if !stale.is_empty() {
        let mut view = plan.view("stale_plan");
        view["reason"] = Value::String(stale.join("; "));
        return (
            view,
            Some(plan.audit(Outcome::NotExecuted, None, "stale_plan")),
        );
    }
    let what = format!("an install from {}", plan.source.name());
    let why = "It changes this machine, outside the project, and is verified afterwards.";
    let record = plan.audit(Outcome::NotApplicable, None, "");
    if let Err(refused) = ask_to_run(
        call,
        &what,
        &plan.argv,
        why,
        record,
        executable,
        plan.identity.as_ref(),
    )
    .await
    {
        let mut view = plan.view(refused.status);
        view["reason"] = Value::String(refused.reason);
        return (
            view,
            Some(plan.audit(Outcome::NotExecuted, None, &refused.detail)),
        );
    }
    // Before it starts: a snapshot cached while it runs, or after it was
    // abandoned, must not describe the machine as it was.
    call.ctx.env_cache.invalidate();
    let progress = call.progress(format!("installing {}", plan.id));
    let running = plan.execute(progress.as_ref().map(|f| f as Progress));
    let unknown = plan.audit(Outcome::Unknown, Some(Instant::now()), "cancelled");
    let (view, entry) = run_recorded(call, unknown, plan.view("unknown"), running).await;
    (view, Some(entry))
}
