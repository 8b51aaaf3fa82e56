//! Permission hooks of the hosts wamcp is installed into (Claude Code,
//! Codex): which wamcp tool a hook event is about, and the answer in each
//! host's format.
//!
//! The hooks only tighten. A call the server would refuse is denied before
//! it reaches the server, and a call the server would ask the user about is
//! put to the user by the host. Nothing is ever allowed that the host would
//! otherwise ask about, except the narrow Codex case the seed names: a
//! plan-only call proven inside the session's project. The server decides
//! the same things on its own, because hosts do not always run hooks for
//! MCP tools.

use serde_json::{Value, json};
use std::path::Path;

/// The hook events `wamcp hook` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    ClaudePreToolUse,
    CodexPreToolUse,
    CodexPermissionRequest,
}

impl HookEvent {
    /// The event named on the command line (`wamcp hook <name>`).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        match name {
            "claude-pre-tool-use" => Some(HookEvent::ClaudePreToolUse),
            "codex-pre-tool-use" => Some(HookEvent::CodexPreToolUse),
            "codex-permission-request" => Some(HookEvent::CodexPermissionRequest),
            _ => None,
        }
    }

    pub const NAMES: &'static [&'static str] = &[
        "claude-pre-tool-use",
        "codex-pre-tool-use",
        "codex-permission-request",
    ];

    fn event_name(self) -> &'static str {
        match self {
            HookEvent::ClaudePreToolUse | HookEvent::CodexPreToolUse => "PreToolUse",
            HookEvent::CodexPermissionRequest => "PermissionRequest",
        }
    }
}

/// What the server would do with a call, as much as a host must know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The server refuses it.
    Deny(String),
    /// The server asks the user first.
    Ask(String),
    /// It only plans (changes nothing), in a scope the event itself proves
    /// (no project, or one inside the session's).
    ProvenPlan,
    /// Nothing to add: the host's own policy decides.
    Nothing,
}

/// The server and the wamcp tool a host's tool name calls:
/// `mcp__<server>__<tool>`, or `mcp__plugin_<plugin>_<server>__<tool>` for
/// a plugin's server. The tool is the part after the last `__` and must be
/// one of `known`.
pub fn tool_of<'a>(host_name: &'a str, known: &[&str]) -> Option<(&'a str, &'a str)> {
    let rest = host_name.strip_prefix("mcp__")?;
    let (server, tool) = rest.rsplit_once("__")?;
    (!server.is_empty() && known.contains(&tool)).then_some((server, tool))
}

/// Whether `server` (as [`tool_of`] splits it) is the name the plugins
/// give wamcp. Refusing or asking about another server's look-alike tool
/// only tightens; allowing one never happens.
pub fn is_wamcp_server(server: &str) -> bool {
    matches!(server, "wamcp" | "plugin_wamcp_wamcp")
}

/// Whether `project` (as the call gave it) is an absolute path inside
/// `session` once both are resolved; `resolve` is the caller's resolver
/// (it must follow links, so a link inside the session cannot point out).
pub fn inside_session(
    project: Option<&str>,
    session: &Path,
    resolve: impl Fn(&Path) -> Option<std::path::PathBuf>,
) -> bool {
    let Some(project) = project.map(Path::new).filter(|p| p.is_absolute()) else {
        return false;
    };
    match (resolve(project), resolve(session)) {
        (Some(project), Some(session)) => project.starts_with(&session),
        _ => false,
    }
}

/// The hook's answer on stdout, or `None` to add nothing. Claude Code gets
/// `deny` or `ask`, never `allow`; Codex's PreToolUse cannot ask, so only
/// `deny` (asking is left to Codex's own MCP approval); its
/// PermissionRequest may allow a plan proven inside the project.
pub fn answer(event: HookEvent, verdict: &Verdict) -> Option<Value> {
    let pre_tool_use = |decision: &str, reason: &str| {
        json!({
            "hookSpecificOutput": {
                "hookEventName": event.event_name(),
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        })
    };
    let permission = |decision: Value| {
        json!({
            "hookSpecificOutput": {
                "hookEventName": event.event_name(),
                "decision": decision,
            }
        })
    };
    match (event, verdict) {
        (HookEvent::ClaudePreToolUse | HookEvent::CodexPreToolUse, Verdict::Deny(why)) => {
            Some(pre_tool_use("deny", why))
        }
        (HookEvent::ClaudePreToolUse, Verdict::Ask(why)) => Some(pre_tool_use("ask", why)),
        (HookEvent::CodexPermissionRequest, Verdict::Deny(why)) => {
            Some(permission(json!({"behavior": "deny", "message": why})))
        }
        (HookEvent::CodexPermissionRequest, Verdict::ProvenPlan) => {
            Some(permission(json!({"behavior": "allow"})))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["capability_run", "read_file", "package_install"];

    #[test]
    fn tool_names_in_both_host_forms() {
        for (name, want) in [
            (
                "mcp__wamcp__capability_run",
                Some(("wamcp", "capability_run")),
            ),
            (
                "mcp__plugin_wamcp_wamcp__read_file",
                Some(("plugin_wamcp_wamcp", "read_file")),
            ),
            (
                "mcp__my__server__package_install",
                Some(("my__server", "package_install")),
            ),
            ("mcp__wamcp__delete_everything", None),
            ("mcp____read_file", None),
            ("mcp__read_file", None),
            ("Bash", None),
            ("read_file", None),
            ("mcp__wamcp__", None),
        ] {
            assert_eq!(tool_of(name, KNOWN), want, "{name}");
        }
        assert!(is_wamcp_server("wamcp") && is_wamcp_server("plugin_wamcp_wamcp"));
        for other in ["evil", "plugin_other_srv", "othermcp__wamcp", "wamcp2", ""] {
            assert!(!is_wamcp_server(other), "{other}");
        }
    }

    #[test]
    fn claude_never_gets_allow_and_codex_never_gets_ask() {
        let deny = Verdict::Deny("refused".into());
        let ask = Verdict::Ask("asks".into());
        let plan = Verdict::ProvenPlan;
        assert_eq!(
            answer(HookEvent::ClaudePreToolUse, &deny).unwrap()["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert_eq!(
            answer(HookEvent::ClaudePreToolUse, &ask).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "ask", "permissionDecisionReason": "asks"}})
        );
        assert_eq!(answer(HookEvent::ClaudePreToolUse, &plan), None);
        assert_eq!(answer(HookEvent::ClaudePreToolUse, &Verdict::Nothing), None);
        assert_eq!(answer(HookEvent::CodexPreToolUse, &ask), None);
        assert_eq!(answer(HookEvent::CodexPreToolUse, &plan), None);
        assert_eq!(
            answer(HookEvent::CodexPreToolUse, &deny).unwrap()["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert_eq!(
            answer(HookEvent::CodexPermissionRequest, &plan).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow"}}})
        );
        assert_eq!(
            answer(HookEvent::CodexPermissionRequest, &deny).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "refused"}}})
        );
        assert_eq!(answer(HookEvent::CodexPermissionRequest, &ask), None);
    }

    #[test]
    fn a_plan_is_inside_the_session_only_by_resolved_absolute_path() {
        let top = if cfg!(windows) { r"C:\w" } else { "/w" };
        let at = |rest: &str| Path::new(top).join(rest).display().to_string();
        let link = at("proj/out-link");
        let elsewhere = at("elsewhere");
        let resolve = |p: &Path| -> Option<std::path::PathBuf> {
            // A link inside the session that points elsewhere.
            Some(p.display().to_string().replace(&link, &elsewhere).into())
        };
        let session = Path::new(top).join("proj");
        assert!(inside_session(Some(&at("proj")), &session, resolve));
        assert!(inside_session(Some(&at("proj/sub")), &session, resolve));
        assert!(!inside_session(Some(&at("proj-other")), &session, resolve));
        assert!(!inside_session(Some(top), &session, resolve));
        assert!(!inside_session(Some("sub"), &session, resolve));
        assert!(!inside_session(None, &session, resolve));
        assert!(!inside_session(
            Some(&at("proj/out-link/x")),
            &session,
            resolve
        ));
        assert!(!inside_session(Some(&at("proj/x")), &session, |_| None));
    }
}
