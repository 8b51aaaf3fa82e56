//! `wamcp hook <event>`: the command a host's permission hook runs before
//! a wamcp tool call. It reads the host's event on stdin, works out what
//! the server would do with that call (refuse it, ask the user, or only
//! plan), and answers in the host's format ([`wamcp_policy::host_hooks`]).
//!
//! The hook reads the same configuration as the server. A host does not
//! hand its hooks the environment of the MCP entry, so `WAMCP_PROJECT_ROOTS`
//! falls back to `CLAUDE_PROJECT_DIR`, exactly as the plugin's `.mcp.json`
//! sets it for the server.

use crate::config::EnvLookup;
use crate::context::{ServerContext, Startup};
use crate::registry::HookClass;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use wamcp_exec::command::{Approval, Judge, Refusal, check};
use wamcp_policy::command::shell_line::Dialect;
use wamcp_policy::devenv::safety::Safety;
use wamcp_policy::host_hooks::{
    HookEvent, Verdict, answer, argv_verdict, host_asks, inside_session, is_wamcp_server,
    shell_verdict, tool_of,
};

/// Hook events are small; a larger input is not one.
const MAX_INPUT_BYTES: u64 = 1 << 20;

/// Answers one hook event read from `input`; `Ok(None)` adds nothing.
pub fn respond(
    event_name: &str,
    input: impl Read,
    env: EnvLookup,
    cwd: &Path,
) -> Result<Option<Value>, String> {
    let event = HookEvent::from_name(event_name).ok_or_else(|| {
        format!(
            "unknown hook event '{event_name}'; one of: {}",
            HookEvent::NAMES.join(", ")
        )
    })?;
    let mut text = String::new();
    input
        .take(MAX_INPUT_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the hook event: {e}"))?;
    if text.len() as u64 > MAX_INPUT_BYTES {
        return Err("the hook event is larger than 1 MiB".into());
    }
    let payload: Value =
        serde_json::from_str(&text).map_err(|e| format!("the hook event is not JSON: {e}"))?;
    let session = payload["cwd"]
        .as_str()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| cwd.to_path_buf());
    // Claude Code's plugin entry hands the server its project and data
    // folders; the hook gets them under Claude's own names.
    let claude = event.is_claude();
    let hook_env = |name: &str| {
        env(name).or_else(|| match name {
            "WAMCP_PROJECT_ROOTS" => env("CLAUDE_PROJECT_DIR"),
            "WAMCP_DATA_DIR" if claude => env("CLAUDE_PLUGIN_DATA"),
            _ => None,
        })
    };
    let context = || {
        ServerContext::new(
            Startup::read(&hook_env, &session),
            &hook_env,
            &session,
            "hook",
        )
    };
    if event == HookEvent::ClaudeStop {
        crate::host_outcomes::summarize(&context(), &payload);
        return Ok(None);
    }
    let judged = match judge(event, &payload, &session, context) {
        // What ran is recorded where it can be; an odd report stops nothing.
        Err(_) if event.after_the_call() => return Ok(None),
        judged => judged?,
    };
    let Some(Judged { ctx, verdict, tool }) = judged else {
        return Ok(None);
    };
    let input = &payload["tool_input"];
    if event.after_the_call() {
        crate::host_outcomes::record(&ctx, event, &payload, &verdict);
        return Ok(None);
    }
    let tool_use = payload["tool_use_id"].as_str().unwrap_or_default();
    if let Some(tool) = tool
        && !tool_use.is_empty()
        && host_asks(event, &verdict, payload["permission_mode"].as_str())
        && let Some(data) = &ctx.places.data_dir
        && let Err(e) = crate::host_approvals::file(data, tool, input, tool_use)
    {
        // Unrecorded, the server asks as well: two questions, not none.
        eprintln!("wamcp hook: the host's question was not recorded: {e}");
    }
    Ok(answer(event, &verdict))
}

/// A call judged: the context it was judged in, the verdict, and the
/// wamcp tool it calls when it is one of wamcp's own (not a host shell,
/// not another server's look-alike).
struct Judged {
    ctx: ServerContext,
    verdict: Verdict,
    tool: Option<&'static str>,
}

/// What wamcp makes of the call the event is about; `None` for a tool it
/// has no opinion on.
fn judge(
    event: HookEvent,
    payload: &Value,
    session: &Path,
    context: impl FnOnce() -> ServerContext,
) -> Result<Option<Judged>, String> {
    let tool_name = payload["tool_name"].as_str().unwrap_or_default();
    let input = &payload["tool_input"];
    if let Some(dialect) = host_shell(tool_name) {
        let ctx = context();
        let verdict = for_host_shell(event, shell_line_verdict(&ctx, input, dialect, session)?);
        return Ok(Some(Judged {
            ctx,
            verdict,
            tool: None,
        }));
    }
    let known = known_tools();
    let Some((server, tool)) = tool_of(tool_name, &known) else {
        return Ok(None);
    };
    let ctx = context();
    let class = crate::registry::TOOLS
        .iter()
        .find(|t| t.name == tool)
        .map_or(HookClass::Nothing, |t| t.hook);
    let verdict = match verdict(&ctx, class, tool, input, session) {
        // Only wamcp's own calls may skip a prompt.
        Verdict::ProvenPlan if !is_wamcp_server(server) => Verdict::Nothing,
        verdict => verdict,
    };
    let ours = is_wamcp_server(server);
    Ok(Some(Judged {
        ctx,
        verdict,
        tool: known.into_iter().find(|k| ours && *k == tool),
    }))
}

/// wamcp's tool names, as the registry has them.
fn known_tools() -> Vec<&'static str> {
    crate::registry::TOOLS.iter().map(|t| t.name).collect()
}

/// The dialect of a host's own shell tool: Claude Code's `Bash` and
/// `PowerShell`, and Codex's shell, which its hooks also call `Bash`.
fn host_shell(tool_name: &str) -> Option<Dialect> {
    match tool_name {
        "Bash" => Some(Dialect::Posix),
        "PowerShell" => Some(Dialect::PowerShell),
        _ => None,
    }
}

/// The verdict on the command line a host shell tool was given: a string,
/// or (as some hosts send it) an argv array. Anything else is unreadable,
/// and an unreadable command is refused, not waved through.
fn shell_line_verdict(
    ctx: &ServerContext,
    input: &Value,
    dialect: Dialect,
    session: &Path,
) -> Result<Verdict, String> {
    let exists = |path: &str| session.join(path).exists();
    let rules = ctx.command_rules();
    match &input["command"] {
        Value::String(line) => Ok(shell_verdict(line, dialect, rules, &exists)),
        Value::Array(words) if words.iter().all(Value::is_string) => {
            let argv: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            Ok(argv_verdict(&argv, rules, &exists))
        }
        _ => Err("the shell tool's input has no readable command".into()),
    }
}

/// Codex's hooks cannot ask, and a loss nobody is asked about is what this
/// hook exists to stop: there, a question becomes a refusal that says so.
fn for_host_shell(event: HookEvent, verdict: Verdict) -> Verdict {
    match (event, verdict) {
        (HookEvent::CodexPreToolUse | HookEvent::CodexPermissionRequest, Verdict::Ask(why)) => {
            Verdict::Deny(format!(
                "{why}. Codex's hooks cannot ask you, so wamcp stops it; run it yourself if you mean it."
            ))
        }
        (_, verdict) => verdict,
    }
}

/// What the server would do with `tool` (of hook class `class`) called
/// with `input`.
fn verdict(
    ctx: &ServerContext,
    class: HookClass,
    tool: &str,
    input: &Value,
    session: &Path,
) -> Verdict {
    let execute = input["execute"].as_bool().unwrap_or(false);
    let cwd = input["cwd"].as_str();
    let in_project = || inside_session(cwd, session, |p| dunce::canonicalize(p).ok());
    match class {
        HookClass::Command => match input["command"].as_str() {
            Some(command) => {
                if tool == <crate::tools::build_project::BuildProject as crate::registry::ToolDef>::NAME
                    && let Err(e) = wamcp_exec::build::not_a_build_driver(command)
                {
                    return Verdict::Deny(format!("wamcp refuses this build: {}", e.message));
                }
                let place = input["working_directory"]
                    .as_str()
                    .map_or_else(|| session.to_path_buf(), |d| session.join(d));
                command_verdict(ctx, command, &place)
            }
            None => Verdict::Nothing,
        },
        HookClass::Capability => {
            let Some(capability) = input["capability"]
                .as_str()
                .and_then(|id| ctx.catalog().get(id.trim()))
            else {
                return Verdict::Nothing;
            };
            let extra = input["extra_args"].as_array().is_some_and(|a| !a.is_empty());
            match capability.safety.with_extra_args(extra) {
                Safety::Forbidden => Verdict::Deny(format!(
                    "wamcp refuses the capability '{}': it is classified forbidden",
                    capability.id
                )),
                Safety::ApprovalRequired if execute => Verdict::Ask(format!(
                    "the capability '{}' is approval-required; wamcp runs it only with the user's yes",
                    capability.id
                )),
                _ if !execute && in_project() => Verdict::ProvenPlan,
                _ => Verdict::Nothing,
            }
        }
        HookClass::Install if execute => Verdict::Ask(
            "package_install with execute=true installs software on this machine".into(),
        ),
        // A plan names an exact package and changes nothing.
        HookClass::Install => Verdict::ProvenPlan,
        HookClass::SandboxRun if execute => {
            Verdict::Ask("sandbox_run with execute=true runs a command in WSL, a Dev Container or Windows Sandbox".into())
        }
        HookClass::ReadsHost
            if input["include_host"].as_bool() == Some(true)
                || input["config_path"].as_str().is_some_and(|p| !p.trim().is_empty()) =>
        {
            Verdict::Ask(format!(
                "{tool} with include_host or config_path reads your own client configuration, outside the project"
            ))
        }
        HookClass::Write => match input["path"].as_str() {
            Some(raw) => trust_write_verdict(ctx, raw),
            None => Verdict::Nothing,
        },
        HookClass::Plan if in_project() => Verdict::ProvenPlan,
        _ => Verdict::Nothing,
    }
}

/// A write to an agent trust file (`.mcp.json`, `.claude/settings.json`)
/// is asked about, as the server asks before it.
fn trust_write_verdict(ctx: &ServerContext, raw: &str) -> Verdict {
    let needed = ctx.with_write_scope(Path::new(raw), |scope| {
        wamcp_fs::consent_needed(raw, &ctx.places.cwd, scope)
    });
    match needed {
        Ok(Some((path, why))) => Verdict::Ask(format!(
            "wamcp asks before writing {}, which is {why}",
            path.display()
        )),
        _ => Verdict::Nothing,
    }
}

/// The command rules' answer for a `run_powershell` or `build_project`
/// command run in `place`: refused, asked about, or neither.
fn command_verdict(ctx: &ServerContext, command: &str, place: &Path) -> Verdict {
    let roots = ctx.places.run_roots();
    let search = ctx.program_search();
    let journaled = ctx.undo.keeping(&ctx.places.projects_among(&roots));
    let judge = Judge {
        rules: ctx.command_rules(),
        roots: &roots,
        posture: ctx.sandbox.posture(),
        search: &search,
        journaled: &journaled,
        git: &Default::default(),
        egress: ctx.sandbox.egress(),
    };
    match check(command, &judge, Approval::NotAsked, place) {
        Ok(_) => Verdict::Nothing,
        Err(Refusal::NeedsApproval(question)) => Verdict::Ask(format!(
            "wamcp asks the user before running this command: {}",
            question.why()
        )),
        Err(Refusal::Refused(e)) => {
            Verdict::Deny(format!("wamcp refuses this command: {}", e.message))
        }
    }
}

#[cfg(test)]
mod tests;
