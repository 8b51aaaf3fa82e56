//! Asking the user before a plan runs (`capability_run` with an
//! approval-required class, every `package_install` and `sandbox_run`), and
//! running what was approved so that the trail always has its end.

use super::ToolCall;
use crate::consent::Answer;
use serde_json::Value;
use std::path::Path;
use std::time::Instant;
use wamcp_devenv::audit_log::{AuditLog, Entry};
use wamcp_devenv::capability::{Identity, unchanged};
use wamcp_policy::devenv::audit::{Event, Outcome};
use wamcp_policy::text::shown_argv;

/// The longest command line an approval question shows.
const MAX_QUESTION_ARGV_CHARS: usize = 4000;

/// Why a run did not start: the `status` to answer with, the reason, and
/// the audit detail.
pub struct Refusal {
    pub status: &'static str,
    pub reason: String,
    pub detail: String,
}

/// Asks whether `argv` may run, saying what it is (`what`) and why it
/// needs asking (`why`), and records the question and its answer in the
/// trail (from `record`, a template of this call's record). `Ok` when the
/// user said yes and `executable` is still the file `reviewed` identified.
pub async fn ask_to_run(
    call: &ToolCall,
    what: &str,
    argv: &[String],
    why: &str,
    record: Entry,
    executable: &Path,
    reviewed: Option<&Identity>,
) -> Result<(), Refusal> {
    let shown = shown_argv(argv);
    // A question nobody can read to the end is no approval.
    if shown.chars().count() > MAX_QUESTION_ARGV_CHARS {
        return Err(Refusal {
            status: "blocked",
            reason: format!(
                "the command line is {} characters long, too long to show the user for approval (at most \
                 {MAX_QUESTION_ARGV_CHARS}); pass fewer or shorter arguments",
                shown.chars().count()
            ),
            detail: "too long to ask".into(),
        });
    }
    let asked = Instant::now();
    let question =
        format!("The assistant wants to run {what}:\n\n    {shown}\n\n{why} Allow it this once?");
    let answer = call.ask(&question, false).await;
    let (decision, refusal) = match answer {
        // A yes that arrives after the client cancelled the call is no yes.
        Answer::Yes { .. } if call.request.ct.is_cancelled() => (
            "approval after cancel",
            Some((
                "blocked",
                "the client cancelled the call before the answer came".to_string(),
            )),
        ),
        Answer::Yes { .. } => ("approval granted", None),
        Answer::No(how) => (
            "approval declined",
            Some(("blocked", format!("the user was asked and {how}"))),
        ),
        Answer::CannotAsk => (
            "approval not available",
            Some((
                "approval_required",
                "this client cannot ask the user (no elicitation); the user can run it themselves"
                    .to_string(),
            )),
        ),
        Answer::Asked => (
            "approval asked",
            Some(("approval_required", "the user is being asked".to_string())),
        ),
    };
    let approval = Entry {
        event: Event::Approval,
        outcome: Outcome::NotApplicable,
        duration: asked.elapsed(),
        detail: Some(decision.into()),
        ..record
    };
    call.ctx.audit(approval).await;
    match refusal {
        None if !unchanged(executable, reviewed) => Err(Refusal {
            status: "stale_plan",
            reason: "the program changed while the user was being asked; nothing ran".into(),
            detail: "stale_plan".into(),
        }),
        None => Ok(()),
        Some((status, reason)) => Err(Refusal {
            status,
            reason,
            detail: decision.into(),
        }),
    }
}

/// Runs an approved execution to its end and answers its view and record.
/// Abandoned midway (the client cancelled, or went away and the call was
/// dropped), the run is still in the trail: as `unknown` (the `unknown`
/// record), since it started and what it did is not known, and the answer
/// is `unknown_view` with the reason.
pub async fn run_recorded(
    call: &ToolCall,
    unknown: Entry,
    mut unknown_view: Value,
    running: impl Future<Output = (Value, Entry)>,
) -> (Value, Entry) {
    let mut pending = UnfinishedRun(call.ctx.audit.clone().map(|log| (log, unknown.clone())));
    let done = call.unless_cancelled(async { Ok(running.await) }).await;
    pending.0 = None;
    match done {
        Ok(finished) => finished,
        Err(cancelled) => {
            unknown_view["status"] = "unknown".into();
            unknown_view["reason"] = Value::String(cancelled.message);
            (unknown_view, unknown)
        }
    }
}

/// Writes its record when dropped while still holding one: the future that
/// owns it was dropped mid-run.
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
