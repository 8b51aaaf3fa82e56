//! `undo`: the steps the journal kept, and putting one back.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use wamcp_fs::journal::{Journal, Scope, Step};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Step to put back; omit to list steps.
    #[serde(default)]
    pub step: Option<u64>,
    /// Also over later changes to its paths.
    #[serde(default)]
    pub force: bool,
}

pub struct Undo;

impl ToolDef for Undo {
    type Params = Params;
    const NAME: &'static str = "undo";
    const GROUPS: &'static [Group] = &[Group::Edit, Group::Build];
    const DESCRIPTION: &'static str = "List recorded steps (writes, edits, commands) or put \
        one back as it was.";
    const HINTS: Hints = Hints::LOCAL_WRITE;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let journal = journal(&call)?;
        let projects = call.ctx.places.projects_among(&call.ctx.places.run_roots());
        let ours = move |step: &Step| step.roots.iter().all(|root| projects.contains(root));
        let Some(id) = p.step else {
            let j = journal.clone();
            return blocking(Self::NAME, move || Ok(list(&j, &ours)))
                .await
                .map(ToolOutput::Text);
        };
        let j = journal.clone();
        let (step, big) = blocking(Self::NAME, move || {
            let step = checked(&j, id, p.force, &ours)?;
            let big = j.unkept_now(&step);
            Ok((step, big))
        })
        .await?;
        if !big.is_empty() {
            let why = format!(
                "it would replace or remove files too large for the journal to keep: {}",
                big.join(", ")
            );
            crate::undo::go_on_without(&call, Self::NAME, &format!("step {id}"), &why).await?;
        }
        let scope = Some(Scope::Roots(step.roots.clone()));
        let putting = async move {
            blocking(Self::NAME, move || Ok(put_back(&journal, &step)))
                .await
                .map(ToolOutput::Text)
        };
        crate::undo::recorded(&call, scope, Self::NAME, &format!("step {id}"), putting).await
    }
}

fn journal(call: &ToolCall) -> Result<Arc<Journal>, ToolError> {
    match &call.ctx.undo {
        crate::undo::Undo::On(journal) => Ok(journal.clone()),
        crate::undo::Undo::Off => Err(ToolError::new(
            ErrorType::ConfigurationError,
            "The undo journal is off (WAMCP_UNDO_BUDGET_MB=0): no step was recorded.",
        )
        .recover("Nothing can be undone here; tell the user.")),
        crate::undo::Undo::Unavailable(why) => Err(ToolError::new(
            ErrorType::ConfigurationError,
            format!("The undo journal is unavailable: {why}."),
        )
        .recover("Nothing can be undone here; tell the user.")),
    }
}

/// The newest steps `shown` lets through, one line each. The journal is
/// the user's, shared by every wamcp they run: an agent sees and puts back
/// only the steps made in the roots it writes now, the user all of them
/// (`wamcp undo`).
pub fn list(journal: &Journal, shown: &dyn Fn(&Step) -> bool) -> String {
    let steps: Vec<Step> = journal.steps().into_iter().filter(|s| shown(s)).collect();
    if steps.is_empty() {
        return "No steps recorded.".to_string();
    }
    let listed = wamcp_policy::undo::LISTED_STEPS;
    let mut text = String::new();
    for step in steps.iter().take(listed) {
        text.push_str(&line(step));
        text.push('\n');
    }
    if steps.len() > listed {
        text.push_str(&format!(
            "({} older steps not shown; undo takes any step by number)\n",
            steps.len() - listed
        ));
    }
    text
}

/// One step in a line: id, time, tool, what, and what changed.
pub fn line(step: &Step) -> String {
    format!(
        "{}  {}  {} {}  -> {}{}",
        step.id,
        wamcp_policy::devenv::audit::rfc3339(step.time),
        step.tool,
        wamcp_policy::text::shown(&step.what),
        step.summary(),
        if step.not_kept.is_empty() {
            String::new()
        } else {
            format!(" ({} not kept)", step.not_kept.len())
        }
    )
}

/// Step `id`, if `shown` lets it through and it may be put back now.
pub fn checked(
    journal: &Journal,
    id: u64,
    force: bool,
    shown: &dyn Fn(&Step) -> bool,
) -> Result<Step, ToolError> {
    let step = journal.step(id).filter(|s| shown(s)).ok_or_else(|| {
        ToolError::new(
            ErrorType::StepNotFound,
            format!(
                "No step {id} is kept for these roots: it was never made here, or it was evicted \
                 (oldest first)."
            ),
        )
        .recover("Call undo without arguments to list the steps kept.")
    })?;
    let conflicts = journal.conflicts(&step);
    if conflicts.is_empty() || force {
        return Ok(step);
    }
    let listed = conflicts.len().min(10);
    Err(ToolError::new(
        ErrorType::UndoConflict,
        format!(
            "{} of the paths step {id} changed were changed again since: {}{}. Nothing was put back.",
            conflicts.len(),
            conflicts[..listed].join("; "),
            if conflicts.len() > listed { "; ..." } else { "" }
        ),
    )
    .recover(
        "Undo the later steps first (newest first), or call again with force=true to put step's paths \
         back over the later changes.",
    ))
}

/// Puts `step` back and says what happened.
pub fn put_back(journal: &Journal, step: &Step) -> String {
    let done = journal.restore(step);
    let mut text = format!(
        "Step {} put back: {} paths restored, {} removed.",
        step.id, done.restored, done.removed
    );
    if !done.left.is_empty() {
        text.push_str(&format!("\nNot put back ({}):", done.left.len()));
        for left in done.left.iter().take(20) {
            text.push_str(&format!("\n  {left}"));
        }
    }
    text
}
