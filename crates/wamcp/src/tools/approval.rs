//! Asking the user before a plan runs: `capability_run` with an
//! approval-required class and every `package_install`.

use super::ToolCall;
use crate::consent::Answer;
use std::path::Path;
use std::time::Instant;
use wamcp_devenv::audit_log::Entry;
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
