//! `mcp_audit`: the MCP servers this project's clients are configured with
//! (and, when asked, the user's own client configuration), as structure.
//!
//! Files are found by name, read only when they are regular files of at
//! most 2 MiB (a FIFO planted under a config name must not hang the call),
//! and summarised by `wamcp_policy::devenv::mcp_config`, which never lets a
//! command, URL, argument or environment value through.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use wamcp_policy::devenv::mcp_config::{Summary, summarize_json, summarize_jsonc, summarize_toml};

/// The most a configuration file may hold to be read.
pub const MAX_CONFIG_BYTES: u64 = 2 * 1024 * 1024;

/// A configuration file and how to read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The file, absolute.
    pub path: PathBuf,
    /// `project`, `host` or `explicit`.
    pub scope: &'static str,
    /// The client that reads it (`claude-code`, `vscode`, `cursor`, `codex`),
    /// or `json` for an explicit file.
    pub client: &'static str,
    /// Read as TOML (Codex) rather than JSON.
    pub toml: bool,
    /// For a project's file, the project folder (resolved) it must not
    /// lead out of.
    pub inside: Option<PathBuf>,
}

/// The project folder resolved, for [`leads_outside`]; the folder as
/// given when it cannot be resolved, so every check against it fails
/// closed.
pub fn resolved_project(cwd: &Path) -> PathBuf {
    dunce::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf())
}

/// Whether `path` (a file or folder of the project `root`, resolved)
/// leads out of it through a link. The project is the agent's to write:
/// a link planted there to the user's own configuration would otherwise
/// be read as the project's, shown as the project's, and compared with
/// what the agent wrote beside it, confirming a guess about a value. A
/// path that does not exist leads nowhere.
pub fn leads_outside(root: &Path, path: &Path) -> bool {
    match dunce::canonicalize(path) {
        Ok(real) => !real.starts_with(root),
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// The project's client configuration files under `cwd`.
pub fn project_places(cwd: &Path) -> Vec<Place> {
    let root = resolved_project(cwd);
    [
        (".mcp.json", "claude-code", false),
        (".vscode/mcp.json", "vscode", false),
        (".cursor/mcp.json", "cursor", false),
        (".codex/config.toml", "codex", true),
    ]
    .into_iter()
    .map(|(relative, client, toml)| Place {
        path: cwd.join(relative),
        scope: "project",
        client,
        toml,
        inside: Some(root.clone()),
    })
    .collect()
}

/// Where the per-user configuration lives.
#[derive(Clone, Debug, Default)]
pub struct UserDirs {
    /// The user's home directory.
    pub home: Option<PathBuf>,
    /// `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` (`~/.config`) elsewhere.
    pub config: Option<PathBuf>,
    /// Codex's directory: `$CODEX_HOME`, or `~/.codex`.
    pub codex_home: Option<PathBuf>,
}

impl UserDirs {
    /// From the server's environment.
    pub fn from_env() -> UserDirs {
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let home = var(if cfg!(windows) { "USERPROFILE" } else { "HOME" });
        let config = if cfg!(windows) {
            var("APPDATA")
        } else if cfg!(target_os = "macos") {
            home.as_ref()
                .map(|h| h.join("Library").join("Application Support"))
        } else {
            var("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")))
        };
        let codex_home = var("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex")));
        UserDirs {
            home,
            config,
            codex_home,
        }
    }
}

/// The user's client configuration files.
pub fn host_places(dirs: &UserDirs) -> Vec<Place> {
    let mut places = Vec::new();
    let mut add = |path: Option<PathBuf>, client, toml| {
        if let Some(path) = path {
            places.push(Place {
                path,
                scope: "host",
                client,
                toml,
                inside: None,
            });
        }
    };
    let home = dirs.home.as_ref();
    add(home.map(|h| h.join(".claude.json")), "claude-code", false);
    add(
        home.map(|h| h.join(".cursor").join("mcp.json")),
        "cursor",
        false,
    );
    add(
        dirs.codex_home.as_ref().map(|c| c.join("config.toml")),
        "codex",
        true,
    );
    let config = dirs.config.as_ref();
    add(
        config.map(|c| c.join("Code").join("User").join("mcp.json")),
        "vscode",
        false,
    );
    add(
        config.map(|c| c.join("Claude").join("claude_desktop_config.json")),
        "claude-desktop",
        false,
    );
    places
}

/// A file named by the caller, read by its extension (`.toml` as Codex's).
pub fn explicit_place(path: PathBuf) -> Place {
    let toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    Place {
        path,
        scope: "explicit",
        client: if toml { "codex" } else { "json" },
        toml,
        inside: None,
    }
}

/// Reads one place: its servers, or why there are none.
pub fn read_place(place: &Place, project_key: Option<&str>) -> (Value, Summary) {
    let shown = place.path.display().to_string();
    if let Some(root) = &place.inside
        && leads_outside(root, &place.path)
    {
        let summary = Summary {
            valid: false,
            error: Some("not read: a link leads it out of the project folder".into()),
            ..Summary::default()
        };
        return (file_view(place, &summary), summary);
    }
    let read = wamcp_fs::regular::read_small(&place.path, MAX_CONFIG_BYTES).and_then(|bytes| {
        String::from_utf8(bytes)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8"))
    });
    let text = match read {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let view = json!({"path": shown, "scope": place.scope, "client": place.client, "exists": false});
            return (
                view,
                Summary {
                    valid: true,
                    ..Summary::default()
                },
            );
        }
        Err(e) => {
            let summary = Summary {
                valid: false,
                error: Some(format!("not read: {e}")),
                ..Summary::default()
            };
            return (file_view(place, &summary), summary);
        }
    };
    let summary = if place.toml {
        summarize_toml(&text)
    } else if place.client == "vscode" {
        summarize_jsonc(&text, project_key)
    } else {
        summarize_json(&text, project_key)
    };
    (file_view(place, &summary), summary)
}

fn file_view(place: &Place, summary: &Summary) -> Value {
    json!({
        "path": place.path.display().to_string(),
        "scope": place.scope,
        "client": place.client,
        "exists": true,
        "valid": summary.valid,
        "error": summary.error,
        "servers": summary.servers,
        "servers_not_listed": summary.servers_not_listed,
    })
}

/// The audit: every place's servers, the counts, and what was not read.
pub fn audit(places: &[Place], project_key: Option<&str>) -> (Value, Vec<(Place, Summary)>) {
    let mut files = Vec::new();
    let mut read = Vec::new();
    for place in places {
        let (view, summary) = read_place(place, project_key);
        files.push(view);
        read.push((place.clone(), summary));
    }
    let servers: usize = read.iter().map(|(_, s)| s.servers.len()).sum();
    let invalid: usize = read
        .iter()
        .map(|(_, s)| {
            s.servers.iter().filter(|v| !v.valid).count() + usize::from(s.error.is_some())
        })
        .sum();
    let view = json!({
        "status": "ok",
        "files": files,
        "server_count": servers,
        "invalid_count": invalid,
    });
    (view, read)
}
