//! The undo journal as the server uses it: opened once at start-up, around
//! every call that can change the roots, and by the `undo` tool and the
//! `wamcp undo` command.
//!
//! A call is recorded in three moves: the roots as they are before it
//! (unchanged files cost a `stat`), the call itself, then what changed,
//! kept as a numbered step whose id ends the answer. When the journal
//! cannot keep a step (over its budget, or unable to write), the user is
//! asked first; a client that cannot ask gets a refusal, never a step that
//! silently cannot be undone.

use crate::consent::Answer;
use crate::context::ServerContext;
use crate::registry::{ToolCall, ToolOutput, blocking};
use crate::settings::{self, Settings};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use wamcp_fs::journal::{BeginError, Journal, Limits, OverBudget, Overflow, Pending, Scope};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::MIB;
use wamcp_policy::text::shown;

/// Whether steps are recorded.
pub enum Undo {
    /// The user turned the journal off (`WAMCP_UNDO_BUDGET_MB=0`).
    Off,
    /// It should be on but cannot be: why.
    Unavailable(String),
    /// Recording.
    On(Arc<Journal>),
}

impl Undo {
    /// The journal in `data_dir/undo`, refused where a command could reach
    /// it (inside a writable root or cache) or where it is a link.
    pub fn open(
        data_dir: Option<&Path>,
        settings: &Settings,
        reachable: impl Fn(&Path) -> Option<PathBuf>,
    ) -> Undo {
        if settings.undo_budget_mib == 0 {
            return Undo::Off;
        }
        let Some(data_dir) = data_dir else {
            return Undo::Unavailable(format!(
                "wamcp has no data folder; set {}",
                settings::DATA_DIR
            ));
        };
        let dir = data_dir.join("undo");
        if let Some(place) = reachable(&wamcp_platform::paths::resolved(&dir)) {
            return Undo::Unavailable(format!(
                "its folder {} is inside {}, where commands write; move {} outside the writable roots",
                dir.display(),
                place.display(),
                settings::DATA_DIR
            ));
        }
        let limits = Limits {
            budget: settings.undo_budget_mib.saturating_mul(MIB),
            max_age: Duration::from_secs(settings.undo_days.saturating_mul(86_400)),
            file_cap: wamcp_policy::undo::FILE_CAP_BYTES,
        };
        match Journal::open(&dir, limits) {
            Ok(journal) => Undo::On(Arc::new(journal)),
            Err(why) => Undo::Unavailable(why),
        }
    }

    /// The journal, when it records.
    pub fn journal(&self) -> Option<&Arc<Journal>> {
        match self {
            Undo::On(journal) => Some(journal),
            _ => None,
        }
    }

    /// The roots among `projects` where the journal keeps every file, so
    /// a command's loss there comes back with `undo` (none when it is off).
    pub fn keeping(&self, projects: &[PathBuf]) -> Vec<PathBuf> {
        match self {
            Undo::On(journal) => journal.keeping(projects),
            _ => Vec::new(),
        }
    }

    /// What `get_server_info` says of it.
    pub fn info(&self) -> serde_json::Value {
        match self {
            Undo::Off => serde_json::json!({"state": "off"}),
            Undo::Unavailable(why) => serde_json::json!({"state": "unavailable", "problem": why}),
            Undo::On(journal) => {
                let usage = journal.usage_now();
                let limits = journal.limits();
                serde_json::json!({
                    "state": "on",
                    "folder": journal.dir().display().to_string(),
                    "steps": usage.steps,
                    "used_mib": (usage.bytes as f64 / MIB as f64 * 10.0).round() / 10.0,
                    "budget_mib": limits.budget / MIB,
                    "days": limits.max_age.as_secs() / 86_400,
                    "file_cap_mib": limits.file_cap / MIB,
                })
            }
        }
    }
}

/// What a command may change: every project root (not the download
/// folder, which holds only what wamcp fetched).
pub fn command_scope(ctx: &ServerContext) -> Scope {
    Scope::Roots(ctx.places.projects_among(&ctx.places.run_roots()))
}

/// What a file tool may change: the file `raw` names, resolved as the
/// write will resolve it; `None` when it resolves nowhere writable (the
/// write then refuses by itself).
pub fn file_scope(ctx: &ServerContext, raw: &str, approved: Option<&Path>) -> Option<Scope> {
    let target = ctx.with_approved_write_scope(Path::new(raw), approved, |scope| {
        wamcp_fs::resolve_for_write(raw, &ctx.places.cwd, scope).ok()
    })?;
    let root = ctx
        .places
        .run_roots()
        .into_iter()
        .filter(|root| target.path.starts_with(root))
        .max_by_key(|root| root.as_os_str().len())?;
    Some(Scope::File {
        root,
        file: target.path,
    })
}

/// Runs `work` as a recorded step of `tool` (`what` is its command or
/// path); the answer ends with the step's id when it changed something.
pub async fn recorded<Fut>(
    call: &ToolCall,
    scope: Option<Scope>,
    tool: &'static str,
    what: &str,
    work: Fut,
) -> Result<ToolOutput, ToolError>
where
    Fut: Future<Output = Result<ToolOutput, ToolError>>,
{
    let Some(scope) = scope else {
        return work.await;
    };
    let journal = match &call.ctx.undo {
        Undo::Off => return work.await,
        Undo::Unavailable(why) => {
            go_on_without(
                call,
                tool,
                what,
                &format!("the undo journal is unavailable: {why}"),
            )
            .await?;
            return work.await;
        }
        Undo::On(journal) => journal.clone(),
    };
    let Some(pending) = begin(call, &journal, scope, tool, what).await? else {
        return work.await;
    };
    let result = work.await;
    let (j, owned) = (journal.clone(), what.to_string());
    let finished = blocking(tool, move || Ok(j.finish(pending, tool, &owned))).await;
    let recorded = match finished {
        Ok(Ok(recorded)) => recorded,
        Ok(Err(why)) | Err(ToolError { message: why, .. }) => {
            tracing::warn!("the undo journal could not record a {tool} step: {why}");
            return result
                .map(|output| unrecorded(output, &why))
                .map_err(|error| error.detail("undo_not_recorded", why));
        }
    };
    let Some(step) = recorded else {
        return result;
    };
    let result = match COMMAND_TOOLS.contains(&tool) {
        true => remove_planted(result, &step.added),
        false => result,
    };
    match result {
        Ok(output) => Ok(noted(output, step.id, &step.summary)),
        Err(error) => Err(error
            .detail("undo_step", step.id)
            .detail("undo_changed", step.summary)),
    }
}

/// The tools that run programs: what they create is not what the model
/// asked the user about.
const COMMAND_TOOLS: &[&str] = &[
    "run_powershell",
    "build_project",
    "capability_run",
    "sandbox_run",
];

/// Removes the trust files a command created (`.vscode/tasks.json`,
/// `.claude/settings.json`, `.mcp.json`...: files that run programs
/// outside the sandbox the next time the editor or an agent starts),
/// which the OS layer can keep read-only only where they already exist,
/// and says so in the answer. `write_file` makes one with the user's yes.
fn remove_planted(
    result: Result<ToolOutput, ToolError>,
    added: &[(PathBuf, String)],
) -> Result<ToolOutput, ToolError> {
    let removed: Vec<&str> = added
        .iter()
        .filter(|(_, rel)| planted_trust_file(rel))
        .filter(|(root, rel)| {
            let path = root.join(rel);
            // Only where no link on the way leads out of the root: a
            // command could swap a folder for one meanwhile.
            let parent_is_itself = path
                .parent()
                .is_some_and(|p| dunce::canonicalize(p).is_ok_and(|real| real == p));
            parent_is_itself
                && std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir())
                && std::fs::remove_file(&path).is_ok()
        })
        .map(|(_, rel)| rel.as_str())
        .collect();
    if removed.is_empty() {
        return result;
    }
    let line = format!(
        "[wamcp] The command created {}, which decides what runs outside the sandbox later; removed. \
         If the user wants it, write it with write_file, which asks them.",
        removed.join(", ")
    );
    match result {
        Ok(output) => Ok(with_news(
            output,
            line,
            "removed_trust_files",
            removed.into(),
        )),
        Err(error) => Err(error.detail("removed_trust_files", line)),
    }
}

/// Whether a created path is a trust file a command has no business
/// making. git's own files are git's (`git submodule add` writes
/// `.gitmodules`, `git init` a `.git`).
/// A link named like a trust folder (`.claude -> elsewhere`) is one too.
fn planted_trust_file(rel: &str) -> bool {
    let components: Vec<String> = rel.split('/').map(String::from).collect();
    let gits = |c: &String| c.eq_ignore_ascii_case(".git") || c.eq_ignore_ascii_case(".gitmodules");
    let trust_dir = components.last().is_some_and(|last| {
        wamcp_policy::write_rules::trust_dir_names().any(|d| d.eq_ignore_ascii_case(last))
    });
    !components.iter().any(gits)
        && (trust_dir || wamcp_policy::write_rules::agent_trust_file(&components).is_some())
}

/// The step before the call, or `None` when the user agreed to go on
/// without one.
async fn begin(
    call: &ToolCall,
    journal: &Arc<Journal>,
    scope: Scope,
    tool: &'static str,
    what: &str,
) -> Result<Option<Pending>, ToolError> {
    let (j, s) = (journal.clone(), scope.clone());
    let first = blocking(tool, move || Ok(j.begin(&s, Overflow::Refuse))).await?;
    match first {
        // A file tool's one file over the size cap: overwriting it could
        // not be undone.
        Ok(pending) if matches!(scope, Scope::File { .. }) && !pending.not_kept().is_empty() => {
            let why = format!(
                "the undo journal cannot keep {}",
                pending.not_kept().join(", ")
            );
            go_on_without(call, tool, what, &why).await?;
            Ok(Some(pending))
        }
        Ok(pending) => Ok(Some(pending)),
        Err(BeginError::OverBudget(over)) => {
            go_on_without(call, tool, what, &over_budget(&over)).await?;
            let j = journal.clone();
            let second =
                blocking(tool, move || Ok(j.begin(&scope, Overflow::KeepWhatFits))).await?;
            Ok(second.ok())
        }
        Err(BeginError::Failed(why)) => {
            go_on_without(call, tool, what, &format!("the undo journal failed: {why}")).await?;
            Ok(None)
        }
    }
}

fn over_budget(over: &OverBudget) -> String {
    let files: Vec<String> = over
        .largest
        .iter()
        .map(|(path, size)| format!("{path} ({:.1} MiB)", *size as f64 / MIB as f64))
        .collect();
    format!(
        "the undo journal cannot keep {:.1} MiB more within its budget of {} MiB ({}); the largest: {}",
        over.needed as f64 / MIB as f64,
        over.budget / MIB,
        settings::UNDO_BUDGET,
        files.join(", ")
    )
}

/// Asks the user whether the call may change the roots although the
/// journal cannot keep (all of) what it would change.
pub(crate) async fn go_on_without(
    call: &ToolCall,
    tool: &str,
    what: &str,
    why: &str,
) -> Result<(), ToolError> {
    let question = format!(
        "The assistant wants to run {tool}:\n\n    {}\n\nbut {why}. Whatever it changes that was not kept \
         cannot be undone. Go on?",
        shown(what)
    );
    match call.ask(&question, false).await {
        Answer::Yes { .. } => Ok(()),
        Answer::No(how) => Err(not_recorded(format!(
            "{why}; the user was asked whether to go on without it and {how}."
        ))),
        Answer::CannotAsk | Answer::Asked => Err(not_recorded(format!(
            "{why}, and this client cannot ask the user whether to go on without it."
        ))),
    }
}

fn not_recorded(message: String) -> ToolError {
    ToolError::new(ErrorType::UndoNotRecorded, message).recover(
        "Nothing was changed. Ask the user: they can raise WAMCP_UNDO_BUDGET_MB, free the data folder, or \
         set WAMCP_UNDO_BUDGET_MB=0 to work without undo.",
    )
}

/// The answer with the step's line (or field) added.
fn noted(output: ToolOutput, id: u64, summary: &str) -> ToolOutput {
    let line = format!("[step {id}: {summary}; undo(step={id}) puts it back]");
    let field = serde_json::json!({"step": id, "changed": summary});
    with_news(output, line, "undo", field)
}

/// The answer with the news that what the call changed was not recorded
/// (the disk filled, say): it must not look like a step undo can reach.
fn unrecorded(output: ToolOutput, why: &str) -> ToolOutput {
    let line = format!("[not recorded, cannot be undone: {why}]");
    with_news(output, line, "undo_not_recorded", why.into())
}

/// `output` with `line` after a text answer, or `field` set in a JSON one.
fn with_news(
    output: ToolOutput,
    line: String,
    field: &str,
    value: serde_json::Value,
) -> ToolOutput {
    match output {
        ToolOutput::Text(text) => ToolOutput::Text(format!("{}\n{line}", text.trim_end())),
        ToolOutput::Data(mut data) => {
            if let Some(object) = data.as_object_mut() {
                object.insert(field.into(), value);
            }
            ToolOutput::Data(data)
        }
        other => other,
    }
}

/// What `wamcp undo` was asked.
pub enum Action {
    List,
    Show(u64),
    Restore { id: u64, force: bool },
}

/// `wamcp undo`: the user's own view of the journal, usable after the
/// agent is gone. A restore is recorded as a step too, so it can be
/// undone in turn.
pub fn cli(ctx: &ServerContext, action: Action) -> Result<String, String> {
    let journal = match &ctx.undo {
        Undo::On(journal) => journal,
        Undo::Off => {
            return Err(format!(
                "the undo journal is off ({}=0)",
                settings::UNDO_BUDGET
            ));
        }
        Undo::Unavailable(why) => return Err(format!("the undo journal is unavailable: {why}")),
    };
    match action {
        Action::List => Ok(crate::tools::undo::list(journal, &|_| true)),
        Action::Show(id) => {
            let step = journal
                .step(id)
                .ok_or_else(|| format!("no step {id} is kept"))?;
            Ok(show(&step))
        }
        Action::Restore { id, force } => {
            let step = crate::tools::undo::checked(journal, id, force, &|_| true)
                .map_err(|e| e.message)?;
            let scope = Scope::Roots(step.roots.clone());
            let pending = journal
                .begin(&scope, Overflow::KeepWhatFits)
                .map_err(|e| format!("the undo journal cannot record the restore: {e:?}"))?;
            let text = crate::tools::undo::put_back(journal, &step);
            let recorded = journal.finish(pending, "wamcp undo", &format!("step {id}"))?;
            Ok(match recorded {
                Some(r) => format!("{text}\n[step {}: {}]", r.id, r.summary),
                None => text,
            })
        }
    }
}

/// Every path a step changed: `+` made, `~` changed, `-` removed.
fn show(step: &wamcp_fs::journal::Step) -> String {
    let mut text = crate::tools::undo::line(step);
    for change in &step.changes {
        let mark = match (&change.before, &change.after) {
            (None, _) => '+',
            (_, None) => '-',
            _ => '~',
        };
        text.push_str(&format!("\n{mark} {}", step.path_of(change).display()));
    }
    for unkept in &step.not_kept {
        text.push_str(&format!("\nnot kept: {unkept}"));
    }
    text
}
