//! Client configuration snippets for `wamcp config --emit`.
//!
//! Each entry starts this very binary by absolute path (a bare command name
//! looks right and then fails in clients that do not search `PATH` the way a
//! shell does) and selects a profile through `WAMCP_PROFILE`, pointing at the
//! config file through `WAMCP_CONFIG_FILE`, so later edits to the file take
//! effect without re-emitting.

use crate::config::ConfigFile;
use crate::registry::HookClass;
use crate::settings::{CONFIG_FILE, PROFILE, WORKSPACE_FROM_CWD};
use serde_json::{Map, Value, json};
use std::path::Path;

/// The client formats `--emit` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `mcpServers` JSON (Claude Desktop, Claude Code, Cursor and most clients).
    Client,
    /// MCP Inspector `--config` file, one server.
    Inspector,
    /// Codex `config.toml` `[mcp_servers.NAME]` tables.
    Codex,
    /// VS Code `.vscode/mcp.json` `servers` JSON.
    Vscode,
}

/// One server entry: its name and environment block.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub env: Vec<(String, String)>,
}

/// The entries to emit: the named profile, else every enabled profile (one
/// entry per profile gives a per-profile switch in the client's UI), else a
/// single `wamcp` entry. The inspector takes only one server, so it gets the
/// named profile, else the file's active one, else the first enabled one.
pub fn entries(
    format: Format,
    config_path: Option<&Path>,
    file: Option<&ConfigFile>,
    profile: Option<&str>,
) -> Result<Vec<Entry>, String> {
    let entry = |name: &str, profile: Option<&str>| {
        let mut env = Vec::new();
        if let Some(path) = config_path {
            env.push((CONFIG_FILE.to_string(), path.display().to_string()));
        }
        if let Some(profile) = profile {
            env.push((PROFILE.to_string(), profile.to_string()));
        }
        // Codex starts its servers in the session directory and lists no
        // roots: without this, nothing in the project could be written.
        if format == Format::Codex {
            env.push((WORKSPACE_FROM_CWD.to_string(), "auto".to_string()));
        }
        Entry {
            name: name.to_string(),
            env,
        }
    };
    let profiles = file.map(|f| f.profiles.as_slice()).unwrap_or_default();
    if let Some(name) = profile {
        return match profiles.iter().find(|p| p.name == name) {
            Some(p) if p.enable => Ok(vec![entry(name, Some(name))]),
            Some(_) => Err(format!(
                "profile '{name}' is disabled (\"enable\": false) in the config file"
            )),
            None => Err(format!(
                "profile '{name}' is not defined; known profiles: {}",
                if profiles.is_empty() {
                    "none".to_string()
                } else {
                    profiles
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )),
        };
    }
    let mut enabled: Vec<&str> = profiles
        .iter()
        .filter(|p| p.enable)
        .map(|p| p.name.as_str())
        .collect();
    if format == Format::Inspector {
        let active = file
            .and_then(|f| f.active_profile.as_deref())
            .filter(|a| enabled.contains(a));
        enabled = active.or(enabled.first().copied()).into_iter().collect();
    }
    // The plain server (defaults, no profile) comes first, so the first
    // entry a newcomer copies is the one the README describes.
    let plain = format != Format::Inspector && !enabled.contains(&PLAIN_NAME);
    let mut list: Vec<Entry> = plain.then(|| entry(PLAIN_NAME, None)).into_iter().collect();
    list.extend(enabled.into_iter().map(|name| entry(name, Some(name))));
    if list.is_empty() {
        list.push(entry(PLAIN_NAME, None));
    }
    Ok(list)
}

/// The name of the entry without a profile.
const PLAIN_NAME: &str = "wamcp";

/// Codex's per-call limit: above the longest build a call may ask for, so
/// Codex does not give up on a build wamcp is still running.
pub const CODEX_TOOL_TIMEOUT_SECONDS: u64 = wamcp_policy::limits::MAX_BUILD_TIMEOUT_SECONDS + 60;

/// Codex's approval mode for the tools a call leaves unnamed: it asks.
pub const CODEX_DEFAULT_APPROVAL: &str = "prompt";

/// The tools Codex may run without asking: those that only read, stay on
/// this machine, and cannot be pointed at the host's configuration (a
/// tool that can, with `include_host` or a path of its own choosing, asks).
/// Everything that writes, runs a program or reaches the network is left
/// at [`CODEX_DEFAULT_APPROVAL`].
pub fn codex_approved_tools() -> Vec<&'static str> {
    crate::registry::TOOLS
        .iter()
        .filter(|t| t.hints.read_only && !t.hints.open_world && t.hook != HookClass::ReadsHost)
        .map(|t| t.name)
        .collect()
}

/// Renders entries for `format`, running `command`.
pub fn render(format: Format, command: &str, entries: &[Entry]) -> String {
    let env_object = |entry: &Entry| -> Map<String, Value> {
        entry
            .env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect()
    };
    let json_servers = |with_type: bool| -> Map<String, Value> {
        entries
            .iter()
            .map(|e| {
                let mut server = Map::new();
                if with_type {
                    server.insert("type".into(), json!("stdio"));
                }
                server.insert("command".into(), json!(command));
                server.insert("args".into(), json!([]));
                server.insert("env".into(), Value::Object(env_object(e)));
                (e.name.clone(), Value::Object(server))
            })
            .collect()
    };
    match format {
        Format::Client => pretty(json!({ "mcpServers": json_servers(false) })),
        Format::Inspector => pretty(json!({ "mcpServers": json_servers(true) })),
        Format::Vscode => pretty(json!({ "servers": json_servers(true) })),
        Format::Codex => {
            let mut out = String::new();
            for entry in entries {
                out.push_str(&format!("[mcp_servers.{}]\n", entry.name));
                out.push_str(&format!("command = {}\n", toml_string(command)));
                out.push_str("args = []\n");
                out.push_str(&format!(
                    "tool_timeout_sec = {CODEX_TOOL_TIMEOUT_SECONDS}\n"
                ));
                out.push_str(&format!(
                    "default_tools_approval_mode = \"{CODEX_DEFAULT_APPROVAL}\"\n"
                ));
                if !entry.env.is_empty() {
                    out.push_str(&format!("\n[mcp_servers.{}.env]\n", entry.name));
                    for (key, value) in &entry.env {
                        out.push_str(&format!("{key} = {}\n", toml_string(value)));
                    }
                }
                out.push_str(&codex_tool_tables(&entry.name));
                out.push('\n');
            }
            out.trim_end().to_string() + "\n"
        }
    }
}

/// One entry for a running `wamcp serve --http` at `url`: the URL and the
/// bearer token header, in `format`'s shape. Profiles belong to the server
/// process there, so there is one entry.
pub fn render_http(format: Format, url: &str, token: &str) -> String {
    let bearer = format!("Bearer {token}");
    let server =
        |kind: &str| json!({"type": kind, "url": url, "headers": {"Authorization": bearer}});
    match format {
        Format::Client => pretty(json!({"mcpServers": {PLAIN_NAME: server("http")}})),
        Format::Inspector => pretty(json!({"mcpServers": {PLAIN_NAME: server("streamable-http")}})),
        Format::Vscode => pretty(json!({"servers": {PLAIN_NAME: server("http")}})),
        Format::Codex => format!(
            "[mcp_servers.{PLAIN_NAME}]\nurl = {}\ntool_timeout_sec = {CODEX_TOOL_TIMEOUT_SECONDS}\n\
             default_tools_approval_mode = \"{CODEX_DEFAULT_APPROVAL}\"\n\n\
             [mcp_servers.{PLAIN_NAME}.http_headers]\nAuthorization = {}\n{}",
            toml_string(url),
            toml_string(&bearer),
            codex_tool_tables(PLAIN_NAME)
        ),
    }
}

/// One `[mcp_servers.NAME.tools.TOOL]` table per tool Codex may run
/// without asking.
fn codex_tool_tables(name: &str) -> String {
    codex_approved_tools()
        .into_iter()
        .map(|tool| format!("\n[mcp_servers.{name}.tools.{tool}]\napproval_mode = \"approve\"\n"))
        .collect()
}

fn pretty(value: Value) -> String {
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

/// A TOML basic string: Windows paths are full of backslashes, which TOML
/// treats as escapes.
fn toml_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;

    fn file() -> ConfigFile {
        parse(
            br#"{"version":1,"active_profile":"review","profiles":{
                "cpp":{"tools":"edit,build,docs"},
                "review":{"tools":"build,docs"},
                "parked":{"enable":false,"tools":"core"}}}"#,
        )
        .unwrap()
    }

    #[test]
    fn client_gets_one_entry_per_enabled_profile() {
        let path = Path::new("/cfg/config.json");
        let list = entries(Format::Client, Some(path), Some(&file()), None).unwrap();
        let names: Vec<&str> = list.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["wamcp", "cpp", "review"]);
        assert_eq!(
            list[0].env,
            [(
                "WAMCP_CONFIG_FILE".to_string(),
                "/cfg/config.json".to_string()
            )],
            "the plain entry names the file and no profile"
        );
        let text = render(Format::Client, "/opt/wamcp/bin/wamcp", &list[1..2]);
        assert_eq!(
            text,
            r#"{
  "mcpServers": {
    "cpp": {
      "command": "/opt/wamcp/bin/wamcp",
      "args": [],
      "env": {
        "WAMCP_CONFIG_FILE": "/cfg/config.json",
        "WAMCP_PROFILE": "cpp"
      }
    }
  }
}
"#
        );
    }

    #[test]
    fn inspector_takes_the_active_profile_only() {
        let list = entries(Format::Inspector, None, Some(&file()), None).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].name, "review");
        let value: Value =
            serde_json::from_str(&render(Format::Inspector, "wamcp", &list)).unwrap();
        assert_eq!(value["mcpServers"]["review"]["type"], "stdio");
    }

    #[test]
    fn named_profile_must_exist_and_be_enabled() {
        let f = file();
        assert_eq!(
            entries(Format::Client, None, Some(&f), Some("cpp")).unwrap()[0].name,
            "cpp"
        );
        assert!(
            entries(Format::Client, None, Some(&f), Some("parked"))
                .unwrap_err()
                .contains("disabled")
        );
        let err = entries(Format::Client, None, Some(&f), Some("nope")).unwrap_err();
        assert_eq!(
            err,
            "profile 'nope' is not defined; known profiles: cpp, review, parked"
        );
    }

    #[test]
    fn no_profiles_gives_one_plain_entry() {
        let list = entries(Format::Vscode, None, None, None).unwrap();
        assert_eq!(
            list,
            [Entry {
                name: "wamcp".into(),
                env: vec![]
            }]
        );
        let value: Value = serde_json::from_str(&render(Format::Vscode, "wamcp", &list)).unwrap();
        assert_eq!(value["servers"]["wamcp"]["command"], "wamcp");
    }

    #[test]
    fn http_entries_carry_the_url_and_the_token() {
        let url = "http://127.0.0.1:8765/mcp";
        let client: Value = serde_json::from_str(&render_http(Format::Client, url, "abc")).unwrap();
        assert_eq!(
            client,
            json!({"mcpServers": {"wamcp": {"type": "http", "url": url,
                "headers": {"Authorization": "Bearer abc"}}}})
        );
        let vscode: Value = serde_json::from_str(&render_http(Format::Vscode, url, "abc")).unwrap();
        assert_eq!(vscode["servers"]["wamcp"]["url"], url);
        assert!(render_http(Format::Codex, url, "abc").starts_with(
            "[mcp_servers.wamcp]\nurl = \"http://127.0.0.1:8765/mcp\"\ntool_timeout_sec = 1860\n\
                 default_tools_approval_mode = \"prompt\"\n\n\
                 [mcp_servers.wamcp.http_headers]\nAuthorization = \"Bearer abc\"\n\n\
                 [mcp_servers.wamcp.tools.read_file]\napproval_mode = \"approve\"\n"
        ));
    }

    /// The Codex plugin's entry asks and approves exactly as an emitted
    /// entry does, and adopts the session directory the same way.
    #[test]
    fn the_codex_plugin_entry_matches_the_emitted_one() {
        let manifest = format!(
            "{}/../../.codex-plugin/plugin.json",
            std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo test")
        );
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
        let entry = &manifest["mcpServers"]["wamcp"];
        assert_eq!(entry["default_tools_approval_mode"], CODEX_DEFAULT_APPROVAL);
        assert_eq!(entry["env"][WORKSPACE_FROM_CWD], "auto");
        let tools = entry["tools"].as_object().unwrap();
        let listed: Vec<&str> = tools.keys().map(String::as_str).collect();
        assert_eq!(listed, codex_approved_tools());
        assert!(
            tools
                .values()
                .all(|t| *t == json!({"approval_mode": "approve"}))
        );
        for asks in [
            "write_file",
            "run_powershell",
            "capability_run",
            "fetch_web_page",
            "mcp_audit",
        ] {
            assert!(!listed.contains(&asks), "{asks}");
        }
    }

    #[test]
    fn codex_toml_escapes_windows_paths() {
        let list = entries(
            Format::Codex,
            Some(Path::new(r"C:\Users\Ada\AppData\Roaming\wamcp\config.json")),
            Some(&file()),
            Some("cpp"),
        )
        .unwrap();
        let text = render(Format::Codex, r#"C:\Tools\wamcp "x"\wamcp.exe"#, &list);
        let head = "[mcp_servers.cpp]\ncommand = \"C:\\\\Tools\\\\wamcp \\\"x\\\"\\\\wamcp.exe\"\nargs = []\n\
             tool_timeout_sec = 1860\ndefault_tools_approval_mode = \"prompt\"\n\n\
             [mcp_servers.cpp.env]\nWAMCP_CONFIG_FILE = \"C:\\\\Users\\\\Ada\\\\AppData\\\\Roaming\\\\wamcp\\\\config.json\"\n\
             WAMCP_PROFILE = \"cpp\"\nWAMCP_WORKSPACE_FROM_CWD = \"auto\"\n\n\
             [mcp_servers.cpp.tools.read_file]\napproval_mode = \"approve\"\n";
        assert!(text.starts_with(head), "{text}");
        let approved = text.matches("approval_mode = \"approve\"").count();
        assert_eq!(approved, codex_approved_tools().len());
    }
}
