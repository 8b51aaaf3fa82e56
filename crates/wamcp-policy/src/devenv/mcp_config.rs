//! MCP server entries in a client's configuration, as structure only.
//!
//! Configuration files hold secrets: tokens in `env`, keys in URLs and
//! headers, passwords in arguments. What leaves this module is what a
//! person needs to see the shape — each server's name, whether its entry
//! is valid, the transport, how many arguments, whether a command, URL or
//! environment is present — and never one of those values. Two entries
//! that run the same thing are recognised by comparing them here, so the
//! comparison needs no value to leave either.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// One server entry.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Server {
    pub name: String,
    pub valid: bool,
    /// `stdio`, `http`, `sse` or `unknown`.
    pub transport: &'static str,
    pub arg_count: usize,
    pub has_command: bool,
    pub has_url: bool,
    pub has_env: bool,
    /// Fixed phrases naming what is wrong; never a value.
    pub problems: Vec<String>,
    /// What the entry runs or reaches, hashed; compared, never shown.
    #[serde(skip)]
    pub identity: Option<String>,
    /// The program's file name, lower-case, without `.exe` or `.cmd`.
    #[serde(skip)]
    pub program: Option<String>,
    /// Its name or arguments say it serves files (a filesystem server),
    /// judged here on the values so none has to leave.
    #[serde(skip)]
    pub serves_files: bool,
}

/// A configuration file's servers, or why it could not be read.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub valid: bool,
    /// Why the file is not valid JSON/TOML or has no recognisable shape.
    pub error: Option<String>,
    pub servers: Vec<Server>,
}

/// Reads a JSON client configuration: Claude Code and Cursor
/// (`mcpServers`), VS Code (`servers`), and `~/.claude.json`, whose
/// projects carry their own `mcpServers` (`project` picks one by path).
pub fn summarize_json(text: &str, project: Option<&str>) -> Summary {
    let value: Value = match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
        Ok(v) => v,
        Err(e) => {
            return invalid(format!(
                "not valid JSON (line {}, column {})",
                e.line(),
                e.column()
            ));
        }
    };
    let Value::Object(root) = value else {
        return invalid("the file is not a JSON object".into());
    };
    let mut servers = Vec::new();
    let mut found = false;
    for key in ["mcpServers", "servers"] {
        if let Some(table) = root.get(key) {
            found = true;
            servers.extend(entries(table));
        }
    }
    if let (Some(project), Some(Value::Object(projects))) = (project, root.get("projects"))
        && let Some(Value::Object(this)) = projects.get(project)
        && let Some(table) = this.get("mcpServers")
    {
        found = true;
        servers.extend(entries(table));
    }
    if !found {
        return Summary {
            valid: true,
            error: None,
            servers,
        };
    }
    Summary {
        valid: servers.iter().all(|s| s.valid),
        error: None,
        servers,
    }
}

/// Reads a Codex `config.toml` (`[mcp_servers.<name>]`).
pub fn summarize_toml(text: &str) -> Summary {
    let table: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => {
            let at = e
                .span()
                .map(|s| format!(" (at byte {})", s.start))
                .unwrap_or_default();
            return invalid(format!("not valid TOML{at}"));
        }
    };
    let Some(servers) = table.get("mcp_servers") else {
        return Summary {
            valid: true,
            ..Summary::default()
        };
    };
    // TOML and JSON hold the same shapes here; one reader judges both.
    let json = serde_json::to_value(servers).unwrap_or(Value::Null);
    let servers = entries(&json);
    Summary {
        valid: servers.iter().all(|s| s.valid),
        error: None,
        servers,
    }
}

fn invalid(error: String) -> Summary {
    Summary {
        valid: false,
        error: Some(error),
        servers: Vec::new(),
    }
}

fn entries(table: &Value) -> Vec<Server> {
    let Value::Object(map) = table else {
        return vec![Server {
            name: String::new(),
            valid: false,
            transport: "unknown",
            arg_count: 0,
            has_command: false,
            has_url: false,
            has_env: false,
            problems: vec!["the server list is not an object".into()],
            identity: None,
            program: None,
            serves_files: false,
        }];
    };
    map.iter()
        .map(|(name, entry)| server(name, entry))
        .collect()
}

fn server(name: &str, entry: &Value) -> Server {
    let mut problems = Vec::new();
    let empty = Map::new();
    let fields = match entry {
        Value::Object(fields) => fields,
        _ => {
            problems.push("the entry is not an object".to_string());
            &empty
        }
    };
    let command = fields.get("command");
    let url = fields.get("url").or_else(|| fields.get("serverUrl"));
    let args = fields.get("args");
    let env = fields.get("env");
    let kind = fields.get("type").or_else(|| fields.get("transport"));
    let has_command = command.is_some();
    let has_url = url.is_some();
    let has_env = env.is_some_and(|e| e.as_object().is_none_or(|m| !m.is_empty()));
    let transport = match kind.and_then(Value::as_str) {
        Some("stdio") => "stdio",
        Some("http" | "streamable-http" | "streamableHttp") => "http",
        Some("sse") => "sse",
        Some(_) => {
            problems.push("the transport type is not stdio, http or sse".into());
            "unknown"
        }
        None if has_command => "stdio",
        None if has_url => "http",
        None => "unknown",
    };
    if kind.is_some_and(|k| !k.is_string()) {
        problems.push("the type is not a string".into());
    }
    let arg_count = match args {
        None => 0,
        Some(Value::Array(items)) => {
            if items.iter().any(|a| !a.is_string()) {
                problems.push("an argument is not a string".into());
            }
            items.len()
        }
        Some(_) => {
            problems.push("args is not a list".into());
            0
        }
    };
    if env.is_some_and(|e| {
        !e.as_object()
            .is_some_and(|m| m.values().all(Value::is_string))
    }) {
        problems.push("env is not an object of strings".into());
    }
    match transport {
        "stdio"
            if command
                .and_then(Value::as_str)
                .is_none_or(|c| c.trim().is_empty()) =>
        {
            problems.push("a stdio server needs a command".into())
        }
        "http" | "sse"
            if url
                .and_then(Value::as_str)
                .is_none_or(|u| u.trim().is_empty()) =>
        {
            problems.push("an http or sse server needs a url".into())
        }
        "unknown" if problems.is_empty() => problems.push("neither a command nor a url".into()),
        _ => {}
    }
    let identity = identity(command, args, url);
    let program = command.and_then(Value::as_str).map(program_name);
    let file_words = ["filesystem", "file-system"];
    let serves_files = file_words
        .iter()
        .any(|w| name.to_ascii_lowercase().contains(w))
        || args
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|a| {
                file_words
                    .iter()
                    .any(|w| a.to_ascii_lowercase().contains(w))
            });
    Server {
        name: name.to_string(),
        valid: problems.is_empty(),
        transport,
        arg_count,
        has_command,
        has_url,
        has_env,
        problems,
        identity,
        program,
        serves_files,
    }
}

fn program_name(command: &str) -> String {
    let last = command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .to_ascii_lowercase();
    last.strip_suffix(".exe")
        .or_else(|| last.strip_suffix(".cmd"))
        .unwrap_or(&last)
        .to_string()
}

/// The command and arguments, or the URL, hashed.
fn identity(command: Option<&Value>, args: Option<&Value>, url: Option<&Value>) -> Option<String> {
    let mut hasher = Sha256::new();
    if let Some(url) = url.and_then(Value::as_str) {
        hasher.update(b"url\0");
        hasher.update(
            url.trim()
                .trim_end_matches('/')
                .to_ascii_lowercase()
                .as_bytes(),
        );
    } else {
        let command = command.and_then(Value::as_str)?;
        hasher.update(b"command\0");
        hasher.update(program_name(command).as_bytes());
        for arg in args.and_then(Value::as_array).into_iter().flatten() {
            hasher.update(b"\0");
            hasher.update(arg.as_str().unwrap_or_default().as_bytes());
        }
    }
    Some(
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "sk-live-0123456789abcdef";

    #[test]
    fn claude_code_vscode_and_codex_entries_become_structure_without_values() {
        let claude = format!(
            r#"{{"mcpServers": {{
                "github": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {{"GITHUB_TOKEN": "{SECRET}"}}}},
                "docs": {{"type": "http", "url": "https://example.com/mcp?key={SECRET}", "headers": {{"Authorization": "Bearer {SECRET}"}}}},
                "broken": {{"args": ["x"]}}
            }}}}"#
        );
        let summary = summarize_json(&claude, None);
        assert!(!summary.valid);
        let text = serde_json::to_string(&summary).unwrap();
        assert!(
            !text.contains(SECRET) && !text.contains("npx") && !text.contains("example.com"),
            "{text}"
        );
        let [github, docs, broken] = &summary.servers[..] else {
            panic!("{summary:?}")
        };
        assert_eq!(
            (
                github.transport,
                github.arg_count,
                github.has_env,
                github.valid
            ),
            ("stdio", 2, true, true)
        );
        assert_eq!(
            (docs.transport, docs.has_url, docs.has_command, docs.valid),
            ("http", true, false, true)
        );
        assert_eq!(broken.problems, ["neither a command nor a url"]);

        let vscode = r#"{"servers": {"fs": {"type": "stdio", "command": "node", "args": ["srv.js"]}, "bad": {"type": "pipe"}}, "inputs": []}"#;
        let summary = summarize_json(vscode, None);
        assert_eq!(summary.servers[0].transport, "stdio");
        assert_eq!(
            summary.servers[1].problems,
            ["the transport type is not stdio, http or sse"]
        );

        let codex = format!(
            "model = \"x\"\n[mcp_servers.wamcp]\ncommand = \"wamcp\"\nargs = []\n[mcp_servers.remote]\nurl = \"https://h/{SECRET}\"\n[mcp_servers.remote.env]\nKEY = \"{SECRET}\"\n"
        );
        let summary = summarize_toml(&codex);
        assert!(summary.valid, "{summary:?}");
        let names: Vec<&str> = summary.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["wamcp", "remote"]);
        assert!(summary.servers[1].has_env && summary.servers[1].transport == "http");
        assert!(!serde_json::to_string(&summary).unwrap().contains(SECRET));
    }

    #[test]
    fn broken_files_say_where_without_quoting() {
        let bad = format!("{{\"mcpServers\": {{\"a\": \"{SECRET}\"");
        let summary = summarize_json(&bad, None);
        assert!(!summary.valid);
        assert!(
            summary
                .error
                .as_deref()
                .unwrap()
                .starts_with("not valid JSON (line 1"),
            "{summary:?}"
        );
        assert!(!format!("{summary:?}").contains(SECRET));
        let toml = summarize_toml(&format!("[mcp_servers.a]\ncommand = \"{SECRET}"));
        assert!(
            toml.error.as_deref().unwrap().starts_with("not valid TOML"),
            "{toml:?}"
        );
        assert!(!format!("{toml:?}").contains(SECRET));
        let typed = summarize_json(
            r#"{"mcpServers": {"a": {"command": 5, "args": "x", "env": {"K": 1}}}}"#,
            None,
        );
        assert_eq!(
            typed.servers[0].problems,
            [
                "args is not a list",
                "env is not an object of strings",
                "a stdio server needs a command"
            ]
        );
        assert_eq!(
            summarize_json("[]", None).error.as_deref(),
            Some("the file is not a JSON object")
        );
        assert_eq!(
            summarize_json("{}", None),
            Summary {
                valid: true,
                error: None,
                servers: vec![]
            }
        );
    }

    #[test]
    fn the_same_server_twice_is_recognised_without_showing_it() {
        let a = summarize_json(
            r#"{"mcpServers": {"fs": {"command": "C:\\Tools\\node.exe", "args": ["srv.js", "/p"]}}}"#,
            None,
        );
        let b = summarize_json(
            r#"{"servers": {"files": {"type": "stdio", "command": "node", "args": ["srv.js", "/p"]}}}"#,
            None,
        );
        let c = summarize_json(
            r#"{"servers": {"other": {"command": "node", "args": ["srv.js", "/q"]}}}"#,
            None,
        );
        assert_eq!(a.servers[0].identity, b.servers[0].identity);
        assert_ne!(a.servers[0].identity, c.servers[0].identity);
        assert_eq!(a.servers[0].program.as_deref(), Some("node"));
        let fs = summarize_json(
            r#"{"mcpServers": {"x": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/p"]}, "my-filesystem": {"url": "https://h"}, "git": {"command": "uvx", "args": ["mcp-server-git"]}}}"#,
            None,
        );
        let files: Vec<bool> = fs.servers.iter().map(|s| s.serves_files).collect();
        assert_eq!(files, [true, true, false]);
    }

    #[test]
    fn claude_json_projects_are_read_for_the_project_asked() {
        let text = r#"{"mcpServers": {"user": {"command": "a"}},
                       "projects": {"/p": {"mcpServers": {"proj": {"command": "b"}}}, "/q": {"mcpServers": {"other": {"command": "c"}}}}}"#;
        let names: Vec<String> = summarize_json(text, Some("/p"))
            .servers
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["user", "proj"]);
    }
}
