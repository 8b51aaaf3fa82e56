//! MCP server entries in a client's configuration, as structure only.
//!
//! Configuration files hold secrets: tokens in `env`, keys in URLs and
//! headers, passwords in arguments. What leaves this module is what a
//! person needs to see the shape — each server's name, whether its entry
//! is valid, the transport, how many arguments, whether a command, URL or
//! environment is present — and never one of those values. Two entries
//! are "the same server" only when everything but the name is identical
//! (command, arguments, environment, headers, URL, exactly); the caller
//! compares them only within one trust scope, so a file the agent writes
//! cannot be used to confirm a guess about a value in the user's files.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// One server entry.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Server {
    /// As written, with control and invisible characters escaped.
    pub name: String,
    /// Where in the file: `mcpServers`, `servers`, `projects.mcpServers`
    /// (`~/.claude.json`'s entries for this project) or `mcp_servers`.
    pub section: &'static str,
    /// Whether the entry has no problems.
    pub valid: bool,
    /// `stdio`, `http`, `sse` or `unknown`.
    pub transport: &'static str,
    /// How many arguments the entry passes; their values are never shown.
    pub arg_count: usize,
    /// Whether the entry names a command to run.
    pub has_command: bool,
    /// Whether the entry names a URL (`url` or `serverUrl`).
    pub has_url: bool,
    /// Whether the entry sets environment variables, which often hold tokens.
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
    /// Whether the file parsed and every listed entry is valid.
    pub valid: bool,
    /// Why the file is not valid JSON/TOML or has no recognisable shape.
    pub error: Option<String>,
    /// The server entries, at most [`MAX_SERVERS`].
    pub servers: Vec<Server>,
    /// Servers past [`MAX_SERVERS`], counted and not listed.
    pub servers_not_listed: usize,
}

/// Servers listed per file; a file with more is not a real configuration,
/// and listing them all would flood the answer.
pub const MAX_SERVERS: usize = 200;

/// Reads a JSON client configuration: Claude Code and Cursor
/// (`mcpServers`), VS Code (`servers`), and `~/.claude.json`, whose
/// projects carry their own `mcpServers` (`project` picks one by path).
pub fn summarize_json(text: &str, project: Option<&str>) -> Summary {
    summarize_json_text(text, project, false)
}

/// Like [`summarize_json`], for VS Code's files, which may hold comments
/// and trailing commas (JSONC).
pub fn summarize_jsonc(text: &str, project: Option<&str>) -> Summary {
    summarize_json_text(text, project, true)
}

fn summarize_json_text(text: &str, project: Option<&str>, jsonc: bool) -> Summary {
    let text = text.trim_start_matches('\u{feff}');
    let stripped;
    let text = if jsonc {
        stripped = strip_jsonc(text);
        stripped.as_str()
    } else {
        text
    };
    let value: Value = match serde_json::from_str(text) {
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
            servers.extend(entries(table, key));
        }
    }
    if let (Some(project), Some(Value::Object(projects))) = (project, root.get("projects"))
        && let Some(Value::Object(this)) = projects.get(project)
        && let Some(table) = this.get("mcpServers")
    {
        found = true;
        servers.extend(entries(table, "projects.mcpServers"));
    }
    if !found {
        return Summary {
            valid: true,
            ..Summary::default()
        };
    }
    listed(servers)
}

fn listed(mut servers: Vec<Server>) -> Summary {
    let valid = servers.iter().all(|s| s.valid);
    let servers_not_listed = servers.len().saturating_sub(MAX_SERVERS);
    servers.truncate(MAX_SERVERS);
    Summary {
        valid,
        error: None,
        servers,
        servers_not_listed,
    }
}

/// JSON with `//` and `/* */` comments and trailing commas made plain
/// JSON; strings are left as they are.
pub fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' {
            out.push(c);
            i += 1;
            while i < chars.len() {
                out.push(chars[i]);
                if chars[i] == '\\' && i + 1 < chars.len() {
                    out.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                i += 1;
                if chars[i - 1] == '"' {
                    break;
                }
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                // Newlines kept, so an error's line number still fits the file.
                if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(next, Some('}' | ']')) {
                out.push(c);
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// One top-level table of a Codex `config.toml` (`plugins`, `hooks`) as
/// JSON, `None` when the file has none; `Err` when it is not TOML.
pub fn toml_section(text: &str, key: &str) -> Result<Option<Value>, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| match e.span() {
        Some(at) => format!("not valid TOML (at byte {})", at.start),
        None => "not valid TOML".to_string(),
    })?;
    Ok(table
        .get(key)
        .map(|section| serde_json::to_value(section).unwrap_or(Value::Null)))
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
    listed(entries(&json, "mcp_servers"))
}

fn invalid(error: String) -> Summary {
    Summary {
        valid: false,
        error: Some(error),
        servers: Vec::new(),
        servers_not_listed: 0,
    }
}

fn entries(table: &Value, section: &'static str) -> Vec<Server> {
    let Value::Object(map) = table else {
        return vec![Server {
            name: String::new(),
            section,
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
        .map(|(name, entry)| server(name, entry, section))
        .collect()
}

/// One entry, as structure: its problems are collected in the order they
/// are checked.
fn server(name: &str, entry: &Value, section: &'static str) -> Server {
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
    let transport = transport_of(kind, has_command, has_url, &mut problems);
    if kind.is_some_and(|k| !k.is_string()) {
        problems.push("the type is not a string".into());
    }
    let arg_count = count_args(args, &mut problems);
    if env.is_some_and(|e| {
        !e.as_object()
            .is_some_and(|m| m.values().all(Value::is_string))
    }) {
        problems.push("env is not an object of strings".into());
    }
    check_endpoint(transport, command, url, &mut problems);
    Server {
        name: crate::text::shown(name),
        section,
        valid: problems.is_empty(),
        transport,
        arg_count,
        has_command,
        has_url,
        has_env,
        problems,
        identity: Some(identity(entry, transport)),
        program: command.and_then(Value::as_str).map(program_name),
        serves_files: serves_files(name, args),
    }
}

/// The transport an entry's `type` names, else the one its command or URL
/// implies; an unknown name is a problem.
fn transport_of(
    kind: Option<&Value>,
    has_command: bool,
    has_url: bool,
    problems: &mut Vec<String>,
) -> &'static str {
    match kind.and_then(Value::as_str) {
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
    }
}

/// How many arguments `args` holds; a list with a non-string, or no list,
/// is a problem.
fn count_args(args: Option<&Value>, problems: &mut Vec<String>) -> usize {
    match args {
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
    }
}

/// Whether the transport has what it needs: a command for stdio, an http
/// or https URL for http and sse, one of them when the transport is
/// unknown (said only when nothing else is wrong).
fn check_endpoint(
    transport: &str,
    command: Option<&Value>,
    url: Option<&Value>,
    problems: &mut Vec<String>,
) {
    fn text(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
    }
    match transport {
        "stdio" if text(command).is_none() => {
            problems.push("a stdio server needs a command".into())
        }
        "http" | "sse" if text(url).is_none() => {
            problems.push("an http or sse server needs a url".into())
        }
        "http" | "sse"
            if !text(url)
                .and_then(|u| url::Url::parse(u).ok())
                .is_some_and(|u| matches!(u.scheme(), "http" | "https")) =>
        {
            problems.push("the url is not an http or https URL".into())
        }
        "unknown" if problems.is_empty() => problems.push("neither a command nor a url".into()),
        _ => {}
    }
}

/// Whether the entry's name or arguments say it serves files.
fn serves_files(name: &str, args: Option<&Value>) -> bool {
    // The reference filesystem server and its ports are published as
    // `...server-filesystem` (npm, PyPI); a path that merely contains the
    // word is not one.
    name.to_ascii_lowercase().contains("filesystem")
        || args
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|a| {
                let a = a.to_ascii_lowercase();
                let package = a.split('@').find(|p| !p.is_empty()).unwrap_or(&a);
                package.ends_with("server-filesystem") || package.ends_with("mcp-filesystem")
            })
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

/// Everything in the entry, hashed: two entries are the same server only
/// when every field but the name is identical (key order aside; the
/// transport compared as understood, so `"type": "stdio"` beside a command
/// is the same as no type).
fn identity(entry: &Value, transport: &str) -> String {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let sorted: std::collections::BTreeMap<&String, Value> =
                    map.iter().map(|(k, v)| (k, canonical(v))).collect();
                serde_json::to_value(sorted).unwrap_or(Value::Null)
            }
            Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    let mut entry = canonical(entry);
    if let Value::Object(map) = &mut entry {
        map.remove("type");
        map.remove("transport");
    }
    let text = format!("{transport}\0{entry}");
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
                ..Summary::default()
            }
        );
    }

    #[test]
    fn the_same_server_is_an_identical_entry_and_nothing_less() {
        let id = |text: &str| summarize_json(text, None).servers[0].identity.clone();
        let base = id(
            r#"{"mcpServers": {"a": {"command": "node", "args": ["srv.js"], "env": {"T": "x"}}}}"#,
        );
        assert_eq!(
            base,
            id(
                r#"{"servers": {"b": {"env": {"T": "x"}, "args": ["srv.js"], "command": "node", "type": "stdio"}}}"#
            )
        );
        assert_ne!(
            id(r#"{"mcpServers": {"a": {"url": "https://h/", "type": "sse"}}}"#),
            id(r#"{"mcpServers": {"a": {"url": "https://h/", "type": "http"}}}"#)
        );
        for different in [
            r#"{"mcpServers": {"a": {"command": "node", "args": ["srv.js"], "env": {"T": "y"}}}}"#,
            r#"{"mcpServers": {"a": {"command": "/usr/bin/node", "args": ["srv.js"], "env": {"T": "x"}}}}"#,
            r#"{"mcpServers": {"a": {"command": "node", "args": ["srv.js"], "env": {"T": "x"}, "cwd": "/p"}}}"#,
        ] {
            assert_ne!(base, id(different), "{different}");
        }
        assert_ne!(
            id(r#"{"mcpServers": {"a": {"url": "https://h/?token=Tok"}}}"#),
            id(r#"{"mcpServers": {"a": {"url": "https://h/?token=tok"}}}"#)
        );
        let fs = summarize_json(
            r#"{"mcpServers": {"x": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/p"]}, "my-filesystem": {"url": "https://h"}, "helper": {"command": "node", "args": ["/opt/filesystem-helper/index.js"]}}}"#,
            None,
        );
        let files: Vec<bool> = fs.servers.iter().map(|s| s.serves_files).collect();
        assert_eq!(files, [true, true, false]);
    }

    #[test]
    fn names_are_escaped_sections_named_and_urls_checked() {
        let s = summarize_json(
            "{\"mcpServers\": {\"b\\u202eevil\\u001b[2J\\nstep 2\": {\"url\": \"not a url\"}}, \
             \"projects\": {\"/p\": {\"mcpServers\": {\"c\": {\"url\": \"file:///etc\"}}}}}",
            Some("/p"),
        );
        assert_eq!(
            s.servers[0].name,
            "b\\u{202E}evil\\u{001B}[2J\\u{000A}step 2"
        );
        assert_eq!(
            s.servers[0].problems,
            ["the url is not an http or https URL"]
        );
        assert_eq!(
            (s.servers[0].section, s.servers[1].section),
            ("mcpServers", "projects.mcpServers")
        );
        assert!(!s.servers[1].valid);
    }

    #[test]
    fn vscode_files_may_hold_comments_and_trailing_commas() {
        let text = "{\n  // a comment with \"quotes\"\n  \"servers\": {\n    /* block\n comment */ \"a\": {\"command\": \"x // not a comment\", \"args\": [\"/*\",],},\n  },\n}\n";
        let s = summarize_jsonc(text, None);
        assert!(s.valid, "{s:?}");
        assert_eq!(s.servers[0].arg_count, 1);
        assert!(
            !summarize_json(text, None).valid,
            "plain JSON files stay strict"
        );
        assert_eq!(strip_jsonc(r#"{"a": "x,}"}"#), r#"{"a": "x,}"}"#);
    }

    #[test]
    fn a_flood_of_entries_is_counted_not_listed() {
        let entries: Vec<String> = (0..MAX_SERVERS + 5)
            .map(|i| format!("\"s{i}\": {{\"command\": \"x\"}}"))
            .collect();
        let s = summarize_json(
            &format!("{{\"mcpServers\": {{{}}}}}", entries.join(",")),
            None,
        );
        assert_eq!((s.servers.len(), s.servers_not_listed), (MAX_SERVERS, 5));
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
