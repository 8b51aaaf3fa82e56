//! `capability_run`: plan or run one catalog capability.

use super::approval::ask_to_run;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::time::Instant;
use wamcp_devenv::audit_log::{AuditLog, Entry};
use wamcp_devenv::capability::{self, DEFAULT_TIMEOUT_SECONDS, Gate, Prepared, Request};
use wamcp_devenv::sources::System;
use wamcp_exec::Progress;
use wamcp_policy::devenv::audit::{Event, Outcome};
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
            expected_executable: p.expected_executable,
            expected_identity_kind: p.expected_executable_identity_kind,
            expected_identity_sha256: p.expected_executable_identity_sha256,
            timeout_seconds: p.timeout_seconds,
        };
        let ctx = call.ctx.clone();
        let asked = request.clone();
        let prepared = blocking(move || {
            let roots = ctx.run_roots();
            capability::prepare(&asked, ctx.catalog(), &System, &ctx.cwd, &roots)
        })
        .await;
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) => {
                // Only a capability the catalog knows is named: the model's
                // text would let it fill the trail (and rotate it) faster.
                let known = call.ctx.catalog().get(request.capability.trim()).is_some();
                let subject = known.then(|| request.capability.trim().to_string());
                call.ctx
                    .audit(Entry {
                        tool: "capability_run",
                        subject,
                        safety: None,
                        event: Event::Execution,
                        outcome: Outcome::NotExecuted,
                        duration: Default::default(),
                        detail: Some(e.kind.as_str().to_ascii_lowercase()),
                    })
                    .await;
                return Err(e);
            }
        };
        let answer = decide(&call, &prepared, &request).await;
        let (mut view, entry) = answer;
        if let Some(problem) = call.ctx.audit(entry).await {
            view["audit_error"] = Value::String(problem);
        }
        Ok(ToolOutput::Data(view))
    }
}

/// Plan, refusal, approval and run, in that order; the answer and the
/// audit record it leaves.
async fn decide(call: &ToolCall, p: &Prepared, request: &Request) -> (Value, Entry) {
    if !request.execute {
        let detail = Some("plan only".to_string());
        return (
            capability::plan(p),
            p.audit(Outcome::NotExecuted, None, detail),
        );
    }
    if let Gate::Refused(view) = capability::gate(p, request) {
        let detail = view["status"].as_str().map(str::to_string);
        return (view, p.audit(Outcome::NotExecuted, None, detail));
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
        if let Err(refused) = ask_to_run(call, &what, &p.argv(), why, record).await {
            let mut view = capability::plan(p);
            view["status"] = Value::String(refused.status.to_string());
            view["reason"] = Value::String(refused.reason);
            return (
                view,
                p.audit(Outcome::NotExecuted, None, Some(refused.detail)),
            );
        }
    }
    let roots = call.ctx.run_roots();
    let progress = call.progress(format!("running {}", p.capability.id));
    let running = capability::execute(
        p,
        &call.ctx.sandbox,
        &roots,
        progress.as_ref().map(|f| f as Progress),
    );
    // A client that goes away drops this future mid-run: the guard still
    // records that something started and its effect is unknown.
    let started = Instant::now();
    let mut pending = UnfinishedRun(call.ctx.audit.clone().map(|log| {
        (
            log,
            p.audit(Outcome::Unknown, Some(started), Some("cancelled".into())),
        )
    }));
    let done = call.unless_cancelled(async { Ok(running.await) }).await;
    pending.0 = None;
    match done {
        Ok(done) => done,
        Err(cancelled) => {
            let mut view = capability::plan(p);
            view["status"] = "unknown".into();
            view["reason"] = Value::String(cancelled.message);
            (
                view,
                p.audit(Outcome::Unknown, Some(started), Some("cancelled".into())),
            )
        }
    }
}

/// Writes its record when dropped while still holding one.
struct UnfinishedRun(Option<(AuditLog, Entry)>);

impl Drop for UnfinishedRun {
    fn drop(&mut self) {
        if let Some((log, entry)) = self.0.take()
            && let Err(e) = log.append(entry)
        {
            tracing::warn!("the audit trail could not be written: {e}");
        }
    }
}
