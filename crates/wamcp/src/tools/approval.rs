//! One driver for the tools that plan, ask, then run (`capability_run`,
//! `package_install`, `sandbox_run`): plan → checks → show what runs and
//! ask → look again → run → record. Written once, so that no tool can skip
//! a step: every run that started is in the trail with its outcome, also
//! when the call was abandoned midway.

use super::ToolCall;
use crate::consent::Answer;
use serde_json::Value;
use std::path::Path;
use std::time::Instant;
use wamcp_devenv::audit_log::{AuditLog, Entry};
use wamcp_devenv::capability::{Expected, Identity, unchanged};
use wamcp_policy::devenv::audit::{Event, Outcome};
use wamcp_policy::text::shown_argv;

/// The longest command line an approval question shows.
const MAX_QUESTION_ARGV_CHARS: usize = 4000;

/// Where a plan-and-run call stopped, as its answer's `status` says.
/// The run's own statuses (`completed`, `failed`, `verified`...) come from
/// the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// `execute=false`: the plan, nothing ran.
    Planned,
    /// The program is not on this machine.
    Unavailable,
    /// Refused: forbidden, declined, or too long to ask about.
    Blocked,
    /// The user's yes is needed and could not be had.
    ApprovalRequired,
    /// What was reviewed changed (program, folder); nothing ran.
    StalePlan,
    /// A check before the run failed; nothing ran.
    Failed,
    /// The run started and the call was abandoned: what it did is unknown.
    Unknown,
}

impl Status {
    /// The word the answer carries.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Planned => "planned",
            Status::Unavailable => "unavailable",
            Status::Blocked => "blocked",
            Status::ApprovalRequired => "approval_required",
            Status::StalePlan => "stale_plan",
            Status::Failed => "failed",
            Status::Unknown => "unknown",
        }
    }
}

/// Why a run did not start: the answer to give and the trail's detail.
pub struct Stop {
    pub view: Value,
    pub detail: String,
}

/// What the user is asked before a run.
pub struct Question {
    /// What runs, where ("an install from winget").
    pub what: String,
    /// The command line shown.
    pub argv: Vec<String>,
    /// Why it needs asking, in a sentence.
    pub why: String,
}

/// A plan the driver runs: each tool says what its plan is, the driver
/// decides the order.
pub trait Approvable {
    /// The answer with `status` and the plan's fields.
    fn view(&self, status: Status) -> Value;
    /// This call's record in the trail.
    fn record(&self, outcome: Outcome, started: Option<Instant>, detail: &str) -> Entry;
    /// The program the run starts and the identity the plan showed;
    /// `None` when no program was found.
    fn program(&self) -> Option<(&Path, Option<&Identity>)>;
    /// The answer to `execute=false` (with the next step to take), or
    /// why the program is unavailable when none was found.
    fn planned(&self) -> Value;
    /// Why the plan cannot run whatever the user says (forbidden, or not
    /// what the caller reviewed).
    fn refused(&self) -> Option<Stop>;
    /// What to ask the user, when this run needs their yes.
    fn question(&self, call: &ToolCall) -> Option<Question>;
    /// Checks the places the run uses again, after the question (which
    /// may have taken minutes).
    async fn still_ready(&self, call: &ToolCall) -> Option<Stop>;
    /// Runs the plan to its end: the answer and its record.
    async fn execute(&self, call: &ToolCall) -> (Value, Entry);

    /// A stop with `status`, the reason shown, and the trail's detail.
    fn stop(&self, status: Status, reason: impl Into<String>, detail: &str) -> Stop {
        let mut view = self.view(status);
        view["reason"] = Value::String(reason.into());
        Stop {
            view,
            detail: detail.to_string(),
        }
    }

    /// A stop when the program is not the one the caller reviewed (none
    /// when no program was found: that answer is the plan's own).
    fn stale(&self, expected: &Expected) -> Option<Stop> {
        let (program, identity) = self.program()?;
        let stale = expected.stale_reasons(program, identity);
        (!stale.is_empty()).then(|| self.stop(Status::StalePlan, stale.join("; "), "stale_plan"))
    }
}

/// Plans, or runs `plan` with every step in order, and answers with its
/// view. The record is written here; a plan (`execute=false`) and bad
/// input leave none, so calls that cost nothing cannot rotate the trail
/// away.
pub async fn drive(call: &ToolCall, plan: &impl Approvable, execute: bool) -> Value {
    let (mut view, entry) = decide(call, plan, execute).await;
    if let Some(entry) = entry
        && let Some(problem) = call.ctx.audit(entry).await
    {
        view["audit_error"] = Value::String(problem);
    }
    view
}

async fn decide(call: &ToolCall, plan: &impl Approvable, execute: bool) -> (Value, Option<Entry>) {
    let stopped = |stop: Stop| {
        let entry = plan.record(Outcome::NotExecuted, None, &stop.detail);
        (stop.view, Some(entry))
    };
    if !execute {
        return (plan.planned(), None);
    }
    if let Some(stop) = plan.refused() {
        return stopped(stop);
    }
    let Some((program, identity)) = plan.program() else {
        let entry = plan.record(Outcome::NotExecuted, None, "unavailable");
        return (plan.planned(), Some(entry));
    };
    if let Some(question) = plan.question(call)
        && let Err(stop) = ask_to_run(call, plan, &question, program, identity).await
    {
        return stopped(stop);
    }
    if let Some(stop) = plan.still_ready(call).await {
        return stopped(stop);
    }
    let unknown = plan.record(Outcome::Unknown, Some(Instant::now()), "cancelled");
    let (view, entry) = run_recorded(
        call,
        unknown,
        plan.view(Status::Unknown),
        plan.execute(call),
    )
    .await;
    (view, Some(entry))
}

/// Asks whether the plan may run, and records the question and its answer
/// in the trail. `Ok` when the user said yes and `program` is still the
/// file `reviewed` identified.
async fn ask_to_run(
    call: &ToolCall,
    plan: &impl Approvable,
    question: &Question,
    program: &Path,
    reviewed: Option<&Identity>,
) -> Result<(), Stop> {
    let shown = shown_argv(&question.argv);
    // A question nobody can read to the end is no approval.
    let length = shown.chars().count();
    if length > MAX_QUESTION_ARGV_CHARS {
        return Err(plan.stop(
            Status::Blocked,
            format!(
                "the command line is {length} characters long, too long to show the user for approval (at \
                 most {MAX_QUESTION_ARGV_CHARS}); pass fewer or shorter arguments"
            ),
            "too long to ask",
        ));
    }
    let asked = Instant::now();
    let text = format!(
        "The assistant wants to run {}:\n\n    {shown}\n\n{} Allow it this once?",
        question.what, question.why
    );
    let (decision, refusal) = judge(call, call.ask(&text, false).await);
    let approval = Entry {
        event: Event::Approval,
        outcome: Outcome::NotApplicable,
        duration: asked.elapsed(),
        detail: Some(decision.into()),
        ..plan.record(Outcome::NotApplicable, None, "")
    };
    call.ctx.audit(approval).await;
    match refusal {
        None if !unchanged(program, reviewed) => Err(plan.stop(
            Status::StalePlan,
            "the program changed while the user was being asked; nothing ran",
            "stale_plan",
        )),
        None => Ok(()),
        Some((status, reason)) => Err(plan.stop(status, reason, decision)),
    }
}

/// The trail's word for `answer`, and the stop it means (none for a yes).
fn judge(call: &ToolCall, answer: Answer) -> (&'static str, Option<(Status, String)>) {
    match answer {
        // A yes that arrives after the client cancelled the call is no yes.
        Answer::Yes { .. } if call.request.ct.is_cancelled() => (
            "approval after cancel",
            Some((
                Status::Blocked,
                "the client cancelled the call before the answer came".into(),
            )),
        ),
        Answer::Yes { .. } => ("approval granted", None),
        Answer::No(how) => (
            "approval declined",
            Some((Status::Blocked, format!("the user was asked and {how}"))),
        ),
        Answer::CannotAsk => (
            "approval not available",
            Some((
                Status::ApprovalRequired,
                "this client cannot ask the user (no elicitation); the user can run it themselves"
                    .into(),
            )),
        ),
        Answer::Asked => (
            "approval asked",
            Some((Status::ApprovalRequired, "the user is being asked".into())),
        ),
    }
}

/// Runs an approved execution to its end and answers its view and record.
/// Abandoned midway (the client cancelled, or went away and the call was
/// dropped), the run is still in the trail: as `unknown` (the `unknown`
/// record), since it started and what it did is not known, and the answer
/// is `unknown_view` with the reason.
async fn run_recorded(
    call: &ToolCall,
    unknown: Entry,
    mut unknown_view: Value,
    running: impl Future<Output = (Value, Entry)>,
) -> (Value, Entry) {
    let mut pending = UnfinishedRun(
        call.ctx
            .services
            .audit
            .clone()
            .map(|log| (log, unknown.clone())),
    );
    let done = call.unless_cancelled(async { Ok(running.await) }).await;
    pending.0 = None;
    match done {
        Ok(finished) => finished,
        Err(cancelled) => {
            unknown_view["status"] = Status::Unknown.as_str().into();
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
