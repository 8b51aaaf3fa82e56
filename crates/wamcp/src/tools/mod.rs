//! One file per tool. Each declares its parameters, identity and `run`; the
//! registry table decides which are live.

mod approval;
pub mod build_project;
pub mod capability_run;
pub mod click;
pub mod close_window;
pub mod compile_shader;
pub mod download_file;
pub mod ecosystem_scan;
pub mod edit_file;
pub mod env_inspect;
pub mod fetch_https_response;
pub mod fetch_web_page;
pub mod find_files;
pub mod get_github_latest_release;
pub mod get_gpu_info;
pub mod get_server_info;
pub mod get_system_info;
pub mod key;
pub mod list_directory;
pub mod list_empty_dirs;
pub mod logs_query;
pub mod mcp_audit;
pub mod move_window;
mod on_desktop;
pub mod open_app;
pub mod package_install;
pub mod package_search;
pub mod read_file;
pub mod reveal;
pub mod run_powershell;
pub mod sandbox_run;
pub mod scroll;
pub mod search_files;
pub mod see;
pub mod tool_discover;
pub mod type_text;
pub mod undo;
pub mod wait_for;
pub mod web_search;
pub mod windows;
pub mod workflow_plan;
pub mod write_file;

use crate::consent::Answer;
use crate::registry::{ToolCall, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use std::future::Future;
use std::path::{Path, PathBuf};
use wamcp_exec::command::{Approval, Question, Refusal};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::text::shown;

/// Parameters of a tool that takes none. Unknown arguments are refused rather
/// than ignored, so a model learns that it passed something meaningless.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Paging defaults shared by the tools that return numbered lines.
fn first_line() -> i64 {
    1
}

fn page_of_lines() -> i64 {
    wamcp_policy::limits::DEFAULT_READ_LINES as i64
}

fn dot() -> String {
    ".".to_string()
}

/// Runs a command tool; when the command needs the user's yes (a `prompt`
/// rule, or work nothing brings back), asks through elicitation and runs
/// again only on a yes. A rule's question can be answered for good, for
/// the project the command runs in (`project`): the exact line is kept in
/// the approvals file and the next identical call runs unasked. Work that
/// cannot be undone is asked about every time. Here, at the tool boundary,
/// a refusal becomes the model's envelope.
async fn with_approval<F, Fut>(
    call: &ToolCall,
    command: &str,
    project: Option<&Path>,
    run: F,
) -> Result<String, ToolError>
where
    F: Fn(Approval) -> Fut,
    Fut: Future<Output = Result<String, Refusal>>,
{
    let question = match run(Approval::NotAsked).await {
        Ok(text) => return Ok(text),
        Err(Refusal::Refused(error)) => return Err(error),
        Err(Refusal::NeedsApproval(question)) => question,
    };
    let ctx = &call.ctx;
    let lasting = project.filter(|_| matches!(question, Question::Rule { .. }));
    if lasting.is_some_and(|p| crate::command_approvals::allowed(ctx, p, command)) {
        return run(Approval::Granted).await.map_err(Refusal::into_error);
    }
    let offer = lasting.is_some() && crate::command_approvals::file(ctx).is_some();
    let asked = format!(
        "The assistant wants to run:\n\n    {}\n\nThe '{}' rules ask first: {}. {}",
        shown(command),
        question.rule(),
        question.why(),
        match offer {
            true =>
                "Allow it? Tick 'always' to allow exactly this command in this project from now on.",
            false => "Allow it this once?",
        }
    );
    match call.ask(&asked, offer).await {
        Answer::Yes { always } => {
            if let (true, Some(project)) = (always && offer, lasting)
                && let Err(why) = crate::command_approvals::remember(ctx, project, command)
            {
                tracing::warn!("the approval of '{command}' was not kept: {why}");
            }
            run(Approval::Granted).await.map_err(Refusal::into_error)
        }
        Answer::No(how) => Err(ToolError::new(
            ErrorType::CommandNotAllowed,
            format!(
                "The user was asked to approve '{command}' (rule '{}') and {how}.",
                question.rule()
            ),
        )
        .recover("Do not try to reach the same result another way; ask the user what they want.")),
        Answer::CannotAsk | Answer::Asked => Err(Refusal::NeedsApproval(question)
            .into_error()
            .detail("posture", ctx.sandbox.posture().as_str())),
    }
}

/// Before a write: when the file is an agent trust file (`.git/config`,
/// `.mcp.json`...), asks the user and returns the resolved file they
/// approved. `None` for an ordinary file, and when the user could not be
/// asked, in which case the write itself refuses with PROTECTED_PATH.
async fn approve_trust_write(call: &ToolCall, raw: &str) -> Result<Option<PathBuf>, ToolError> {
    let ctx = call.ctx.clone();
    let owned = raw.to_string();
    let needed = blocking("write_file", move || {
        ctx.with_write_scope(Path::new(&owned), |scope| {
            wamcp_fs::consent_needed(&owned, &ctx.places.cwd, scope)
        })
    })
    .await?;
    let Some((path, why)) = needed else {
        return Ok(None);
    };
    let question = format!(
        "The assistant wants to write\n\n    {}\n\nwhich is {why}. Allow this write once?",
        shown(&path.display().to_string())
    );
    match call.ask(&question, false).await {
        Answer::Yes { .. } => Ok(Some(path)),
        Answer::No(how) => Err(ToolError::new(
            ErrorType::ProtectedPath,
            format!("The user was asked to approve writing '{raw}' and {how}."),
        )
        .with_path(raw)
        .recover("Do not write it another way; ask the user what they want.")),
        Answer::CannotAsk | Answer::Asked => Ok(None),
    }
}
