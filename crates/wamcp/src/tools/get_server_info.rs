//! `get_server_info`: the server's own configuration, so that "why can I not
//! see tool X" and "why was that refused" are answered by reading, not by
//! guessing. It names the live tools explicitly: a model that saw only a
//! count once attributed its client's shell tools to this server.

use super::NoParams;
use crate::context::ServerContext;
use crate::registry::{self, Hints, ToolCall, ToolDef, ToolOutput};
use crate::settings;
use serde_json::{Map, Value, json};
use wamcp_exec::confine::SYSTEM_WRITABLE;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;
use wamcp_policy::hosts::ALLOWED_NETWORK_HOSTS;
use wamcp_policy::limits::{MAX_DOWNLOAD_BYTES, MAX_HTTP_BYTES, MIB};

pub struct GetServerInfo;

impl ToolDef for GetServerInfo {
    type Params = NoParams;
    const NAME: &'static str = "get_server_info";
    const GROUPS: &'static [Group] = &[Group::Core];
    const DESCRIPTION: &'static str = "This server's configuration: tools, writable roots, allowed hosts, \
        undo journal, errors. Call it to learn why a tool, path or host was refused.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, _params: NoParams) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Data(server_info(&call.ctx)))
    }
}

/// Tools of the active groups this platform cannot offer, and why.
fn absent_here(ctx: &ServerContext) -> Value {
    let absent = registry::absent_here(&ctx.groups.groups);
    if absent.is_empty() {
        return Value::Null;
    }
    json!({
        "tools": absent,
        "reason": "Desktop control drives Win32 windows; it is registered only when wamcp runs on Windows.",
    })
}

/// The report, as a JSON object in a stable field order: each part in
/// turn, their fields in the order they were always shown.
pub fn server_info(ctx: &ServerContext) -> Value {
    let parts = [
        tools(ctx),
        configuration(ctx),
        places(ctx),
        web(ctx),
        commands(ctx),
        confinement(ctx),
    ];
    Value::Object(parts.into_iter().flatten().collect())
}

/// `value`'s fields; nothing for a value that is not an object.
fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A path list as the report shows it.
fn paths(list: &[std::path::PathBuf]) -> Vec<String> {
    list.iter().map(|p| p.display().to_string()).collect()
}

/// Which tools are registered, and why groups are as they are.
fn tools(ctx: &ServerContext) -> Map<String, Value> {
    let names = |groups: &[Group]| groups.iter().map(|g| g.name()).collect::<Vec<_>>();
    let registered: Vec<&str> = ctx.registered.iter().map(|t| t.name).collect();
    let by_group: Map<String, Value> = registry::tools_by_group()
        .into_iter()
        .map(|(g, tools)| (g.name().to_string(), json!(tools)))
        .collect();
    fields(json!({
        "name": "wamcp",
        "version": env!("CARGO_PKG_VERSION"),
        "transport": ctx.transport,
        "tool_groups_env_var": settings::TOOLS,
        "active_tool_groups": names(&ctx.groups.groups),
        "available_tool_groups": names(&Group::ALL),
        "registered_tool_count": registered.len(),
        "registered_tools": registered,
        "tools_by_group": by_group,
        "tool_groups_error": ctx.groups.error,
        "posture_warning": ctx.groups.posture_warning(),
    }))
}

/// Where the configuration came from, and what in it was set aside.
fn configuration(ctx: &ServerContext) -> Map<String, Value> {
    fields(json!({
        "config_file": ctx.places.config_file.as_ref().map(|p| p.display().to_string()),
        "config_error": ctx.resolution.config_error,
        "config_overrides": ctx.resolution.overrides,
        "setting_warnings": ctx.setting_warnings,
        "active_profile": ctx.resolution.active_profile,
    }))
}

/// Where tools may write, the download limits, and where the roots came
/// from.
fn places(ctx: &ServerContext) -> Map<String, Value> {
    fields(json!({
        "download_root": ctx.places.download_root.display().to_string(),
        "network_policy": {
            "allowed_hosts": ALLOWED_NETWORK_HOSTS,
            "scheme": "https",
            "port": 443,
        },
        "max_download_mb": MAX_DOWNLOAD_BYTES / MIB,
        "max_http_mb": MAX_HTTP_BYTES / MIB,
        "writable_roots": paths(&ctx.places.writable_roots()),
        "writable_root_origins": ctx
            .places
            .writable_root_origins()
            .iter()
            .map(|(root, from)| json!({"path": root.display().to_string(), "from": from}))
            .collect::<Vec<_>>(),
        "project_roots_env_var": settings::PROJECT_ROOTS,
        "project_roots_configured": ctx.places.project_roots_configured,
        "adopted_workspace": ctx.places.adopted_workspace.as_ref().map(|p| p.display().to_string()),
        "workspace_note": ctx.places.workspace_note,
    }))
}

/// Which hosts the web tools reach, and how more are granted.
fn web(ctx: &ServerContext) -> Map<String, Value> {
    let grants = ctx.file_grants();
    fields(json!({
        "web_research": ctx.groups.contains(Group::Research),
        "web_research_env_var": settings::WEB_RESEARCH,
        "documentation_hosts": ctx.documentation_hosts,
        "granted_hosts": grants.as_ref().cloned().unwrap_or_default(),
        "granted_hosts_file": ctx.places.granted_hosts_file.display().to_string(),
        "granted_hosts_env_var": settings::ALLOWED_HOSTS_FILE,
        "granted_hosts_error": grants.as_ref().err(),
        "session_granted_hosts": ctx.session.session_grants(),
        "host_consent": ctx.host_consent,
        "host_grant_persist": ctx.host_grant_persist,
        "web_search": ctx.registered.iter().any(|t| t.name == "web_search"),
        "search_backend": ctx.search_backend,
        "search_budget_seconds": ctx.search_budget.as_secs(),
    }))
}

/// The command rules, the platform's absent tools, the desktop's lists and
/// the client's roots.
fn commands(ctx: &ServerContext) -> Map<String, Value> {
    let roots = ctx.places.client_roots();
    fields(json!({
        "command_rules_file": ctx.places.command_rules_file.as_ref().map(|p| p.display().to_string()),
        "command_rules_errors": ctx.command_rules().errors,
        "tools_not_on_this_platform": absent_here(ctx),
        "desktop": {
            "apps": ctx.services.desktop_apps,
            "processes": ctx.services.desktop_processes,
        },
        "client_roots": {
            "enabled": ctx.client_roots_enabled,
            "env_var": settings::CLIENT_ROOTS,
            "accepted": paths(&roots.accepted),
            "refused": roots.refused,
            "problem": roots.problem,
        },
    }))
}

/// The places no tool reads, and whether commands see them.
fn secret_stores(ctx: &ServerContext) -> Value {
    let secrets = ctx.secrets();
    let listed: Vec<String> = secrets
        .listed()
        .map(|(path, _)| path.display().to_string())
        .collect();
    let (commands, how) = ctx.sandbox.private_view();
    json!({
        "listed": listed,
        "env_var": settings::SECRET_PATHS,
        "reading_tools": "refused (SECRET_PATH) unless the user allows one read; walks leave them out and say so",
        "commands": commands,
        "commands_detail": how,
        "trust_folders_read_only_to_commands": commands == "hidden",
    })
}

/// The self-test's verdict, part by part: `holds`, or the evidence.
fn proof(proof: &wamcp_policy::command::self_test::Proof) -> Value {
    let parts = proof.parts().map(|(name, part)| {
        let verdict = match part {
            Ok(_) => "holds".to_string(),
            Err(why) => format!("fails: {why}"),
        };
        (name.to_string(), Value::String(verdict))
    });
    Value::Object(parts.into_iter().collect())
}

/// How commands are confined, the capability catalog, and the trail.
fn confinement(ctx: &ServerContext) -> Map<String, Value> {
    let sandbox = ctx.sandbox.status();
    fields(json!({
        "command_sandbox": sandbox.mode.as_str(),
        "command_confinement": sandbox.mechanism.as_deref().unwrap_or("none"),
        "command_confinement_detail": sandbox.detail,
        "command_confinement_proof": sandbox.proof.as_ref().map(proof),
        "command_posture": ctx.sandbox.posture().as_str(),
        "undo": ctx.undo.info(),
        "command_posture_detail": ctx.sandbox.posture().explain(),
        "command_approvals_file": crate::command_approvals::file(ctx).map(|p| p.display().to_string()),
        "command_writable": ctx.sandbox.caches().entries,
        "command_writable_system": SYSTEM_WRITABLE,
        "secret_stores": secret_stores(ctx),
        "command_hosts": ctx.sandbox.egress_hosts().map(|(hosts, how)| json!({
            "hosts": hosts,
            "env_var": settings::COMMAND_HOSTS,
            "enforcement": how,
        })),
        "command_withheld_variables": {
            "names": wamcp_exec::environment::withheld(),
            "env_var": settings::COMMAND_PASS_VARIABLES,
        },
        "capabilities_file": ctx.places.capabilities_file.as_ref().map(|p| p.display().to_string()),
        "capabilities_errors": ctx.catalog().errors,
        "audit_log_dir": ctx.services.audit.as_ref().map(|a| a.dir().display().to_string()),
    }))
}
