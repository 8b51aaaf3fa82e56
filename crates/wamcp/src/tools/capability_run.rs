//! `capability_run`: plan or run one catalog capability.

use super::approval::{ask_to_run, run_recorded};
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::time::Instant;
use wamcp_devenv::audit_log::Entry;
use wamcp_devenv::capability::{self, DEFAULT_TIMEOUT_SECONDS, Expected, Gate, Prepared, Request};
use wamcp_devenv::sources::System;
use wamcp_exec::Progress;
use wamcp_policy::devenv::audit::Outcome;
use wamcp_policy::devenv::safety::Safety;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;
use wamcp_policy::text::shown;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Capability id (workflow_plan lists them).
    pub capability: String,
    /// Appended arguments; they make the call approval-required.
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// Directory to run in, inside a writable root.
    #[serde(default)]
    pub cwd: Option<String>,
    /// false plans; true runs (pass the plan's expected_* values).
    #[serde(default)]
    pub execute: bool,
    #[serde(default)]
    pub expected_executable: Option<String>,
    #[serde(default)]
    pub expected_executable_identity_kind: Option<String>,
    #[serde(default)]
    pub expected_executable_identity_sha256: Option<String>,
    /// 1-600.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: i64,
}

fn default_timeout() -> i64 {
    DEFAULT_TIMEOUT_SECONDS
}

pub struct CapabilityRun;

impl ToolDef for CapabilityRun {
    type Params = Params;
    const NAME: &'static str = "capability_run";
    const GROUPS: &'static [Group] = &[Group::Build];
    const DESCRIPTION: &'static str = "Plan, then run, one catalog capability: a reviewed argv with no \
        shell, confined like every command.";
    const HINTS: Hints = Hints::RUNS_PROGRAMS;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let request = Request {
            capability: p.capability,
            extra_args: p.extra_args,
            cwd: p.cwd,
            execute: p.execute,
            expected: Expected {
                executable: p.expected_executable,
                kind: p.expected_executable_identity_kind,
                sha256: p.expected_executable_identity_sha256,
            },
            timeout_seconds: p.timeout_seconds,
        };
        let ctx = call.ctx.clone();
        let asked = request.clone();
        let prepared = blocking(Self::NAME, move || {
            let projects = ctx.projects_among(&ctx.run_roots());
            capability::prepare(&asked, ctx.catalog(), &System, &ctx.cwd, &projects)
        })
        .await;
        // Bad input and plans change nothing and are not recorded: a call
        // that costs nothing must not be able to rotate the trail away.
        let prepared = prepared?;
        let (mut view, entry) = decide(&call, &prepared, &request).await;
        if let Some(entry) = entry
            && let Some(problem) = call.ctx.audit(entry).await
        {
            view["audit_error"] = Value::String(problem);
        }
        Ok(ToolOutput::Data(view))
    }
}

/// Plan, refusal, approval and run, in that order; the answer and the
/// audit record it leaves (none for a plan).
async fn decide(call: &ToolCall, p: &Prepared, request: &Request) -> (Value, Option<Entry>) {
    if !request.execute {
        return (capability::plan(p), None);
    }
    if let Gate::Refused(view) = capability::gate(p, request) {
        let detail = view["status"].as_str().map(str::to_string);
        return (view, Some(p.audit(Outcome::NotExecuted, None, detail)));
    }
    if p.effective == Safety::ApprovalRequired {
        let why = if p.capability.safety == Safety::ApprovalRequired {
            "It is classified approval-required."
        } else {
            "It is approval-required because of the extra arguments."
        };
        let what = format!(
            "the capability '{}' in {}",
            p.capability.id,
            shown(&p.cwd.display().to_string())
        );
        let record = p.audit(Outcome::NotApplicable, None, None);
        let executable = p
            .resolved
            .as_ref()
            .map(|r| r.executable.as_path())
            .unwrap_or(std::path::Path::new(""));
        let asked = ask_to_run(
            call,
            &what,
            &p.argv(),
            why,
            record,
            executable,
            p.identity.as_ref(),
        )
        .await;
        if let Err(refused) = asked {
            let mut view = capability::plan(p);
            view["status"] = Value::String(refused.status.to_string());
            view["reason"] = Value::String(refused.reason);
            return (
                view,
                Some(p.audit(Outcome::NotExecuted, None, Some(refused.detail))),
            );
        }
    }
    // The directory must still be the one planned (and asked about): a
    // link swapped in would start the run elsewhere.
    if !wamcp_devenv::sandbox::still_in_place(&p.cwd) {
        let mut view = capability::plan(p);
        view["status"] = "stale_plan".into();
        view["reason"] = "the working directory changed since the plan; nothing ran".into();
        return (
            view,
            Some(p.audit(Outcome::NotExecuted, None, Some("stale_plan".into()))),
        );
    }
    let roots = call.ctx.run_roots();
    let progress = call.progress(format!("running {}", p.capability.id));
    let running = capability::execute(
        p,
        &call.ctx.sandbox,
        &roots,
        progress.as_ref().map(|f| f as Progress),
    );
    let started = Instant::now();
    let unknown = p.audit(Outcome::Unknown, Some(started), Some("cancelled".into()));
    let (view, entry) = run_recorded(call, unknown, capability::plan(p), running).await;
    (view, Some(entry))
}
