//! `ecosystem_scan`: the agent tooling that shapes this project — MCP
//! servers, Claude Code and Codex settings, skills, agents, plugins, hooks,
//! instruction files — where it overlaps, and a reversible plan to tidy it.
//!
//! Like `mcp_audit` it reports names, counts and presence, never a value:
//! a hook's command, a permission rule's text, a server's arguments stay in
//! their files. Names shown are escaped (`text::shown`): they are written
//! by whoever wrote the files.

use crate::mcp_audit::{
    Place, UserDirs, audit, host_places, leads_outside, project_places, resolved_project,
};
use duplicates::{HookSite, SkillFolder, hook_sites, same_hooks, same_skills};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wamcp_policy::devenv::mcp_config::{Server, Summary, toml_section};
use wamcp_policy::text::shown;

mod duplicates;

/// Entries listed per directory (skills, agents, extensions...), and
/// overlaps and plan steps per answer.
const MAX_LISTED: usize = 200;
/// The most a settings file may hold to be read.
const MAX_SETTINGS_BYTES: u64 = 2 * 1024 * 1024;

/// What to scan.
pub struct Scan<'a> {
    /// The project directory whose tooling is scanned.
    pub cwd: &'a Path,
    /// Also scan the user's own client configuration and agent files.
    pub include_host: bool,
    /// Also list editor extensions (and, from the tool, the WinGet
    /// inventory); needs `include_host`.
    pub include_packages: bool,
    /// Where the user's configuration lives, for `include_host`.
    pub user: UserDirs,
}

/// Runs the scan.
pub fn scan(request: &Scan) -> Value {
    let key = request.cwd.display().to_string();
    let mut places = project_places(request.cwd);
    if request.include_host {
        places.extend(host_places(&request.user));
    }
    let (mcp, read) = audit(&places, Some(&key));
    let root = resolved_project(request.cwd);
    let project = Reach::Within(&root);
    let mut view = json!({
        "status": "ok",
        "cwd": key,
        "include_host": request.include_host,
        "include_packages": request.include_packages,
        "mcp": mcp,
        "project": agent_files(request.cwd, "project", project),
    });
    let mut tooling = Tooling::default();
    tooling.add(request.cwd, &request.cwd.join(".codex"), "project", project);
    if request.include_host
        && let Some(home) = &request.user.home
    {
        view["host"] = agent_files(home, "host", Reach::Anywhere);
        if let Some(codex) = &request.user.codex_home {
            tooling.add(home, codex, "host", Reach::Anywhere);
            tooling.skills.push(SkillFolder {
                scope: "host",
                client: "codex",
                path: codex.join("skills"),
            });
            view["host"]["codex_plugins"] = codex_plugins(codex);
        }
    }
    if request.include_packages
        && let Some(home) = &request.user.home
    {
        view["packages"] = json!({
            "vscode_extensions": names_in(&home.join(".vscode").join("extensions"), false),
            "cursor_extensions": names_in(&home.join(".cursor").join("extensions"), false),
        });
    }
    let (mut overlaps, mut plan) = overlaps(&read);
    let (hooks, hook_steps) = same_hooks(&tooling.hooks);
    overlaps.extend(same_skills(&tooling.skills));
    overlaps.extend(hooks);
    plan.extend(hook_steps);
    for (i, step) in plan.iter_mut().enumerate() {
        step["step"] = json!(i + 1);
    }
    let cut = overlaps.len().saturating_sub(MAX_LISTED) + plan.len().saturating_sub(MAX_LISTED);
    overlaps.truncate(MAX_LISTED);
    plan.truncate(MAX_LISTED);
    view["overlaps"] = Value::Array(overlaps);
    view["consolidation_plan"] = Value::Array(plan);
    view["overlaps_or_steps_not_listed"] = json!(cut);
    view
}

/// Which files of a scope may be read: the user's own anywhere, the
/// project's only where they stay inside the project folder (see
/// [`leads_outside`]).
#[derive(Clone, Copy)]
enum Reach<'a> {
    Anywhere,
    Within(&'a Path),
}

impl Reach<'_> {
    fn allows(self, path: &Path) -> bool {
        match self {
            Reach::Anywhere => true,
            Reach::Within(root) => !leads_outside(root, path),
        }
    }
}

/// Where skills and hooks are configured, for the duplicate checks.
#[derive(Default)]
struct Tooling {
    skills: Vec<SkillFolder>,
    hooks: Vec<HookSite>,
}

impl Tooling {
    /// The skill folders and hook files of Claude Code under `base` and of
    /// Codex under `base` and `codex` (its folder: `.codex` in a project,
    /// `CODEX_HOME` for the user).
    fn add(&mut self, base: &Path, codex: &Path, scope: &'static str, reach: Reach) {
        let claude = base.join(".claude");
        for (client, path) in [
            ("claude-code", claude.join("skills")),
            ("codex", base.join(".agents").join("skills")),
        ] {
            if reach.allows(&path) {
                self.skills.push(SkillFolder {
                    scope,
                    client,
                    path,
                });
            }
        }
        for (client, file) in [
            ("claude-code", claude.join("settings.json")),
            ("claude-code", claude.join("settings.local.json")),
            ("codex", codex.join("hooks.json")),
        ] {
            if reach.allows(&file)
                && let Some(Ok(settings)) = read_json(&file)
            {
                self.hooks
                    .extend(hook_sites(&settings["hooks"], scope, client, &file));
            }
        }
        let config = codex.join("config.toml");
        if reach.allows(&config)
            && let Ok(text) = wamcp_fs::regular::read_small(&config, MAX_SETTINGS_BYTES)
            && let Ok(Some(hooks)) = toml_section(&String::from_utf8_lossy(&text), "hooks")
        {
            self.hooks
                .extend(hook_sites(&hooks, scope, "codex", &config));
        }
    }
}

/// Codex's plugins as `plugin@marketplace`: those installed in its cache
/// (`plugins/cache/<marketplace>/<plugin>`) and those `config.toml`
/// switches on or off, each with both facts.
fn codex_plugins(codex_home: &Path) -> Value {
    let mut plugins: BTreeMap<String, (bool, Option<bool>)> = BTreeMap::new();
    let cache = codex_home.join("plugins").join("cache");
    for marketplace in names_in(&cache, true) {
        for plugin in names_in(&cache.join(&marketplace), true) {
            plugins
                .entry(format!("{plugin}@{marketplace}"))
                .or_default()
                .0 = true;
        }
    }
    let config = codex_home.join("config.toml");
    let configured = wamcp_fs::regular::read_small(&config, MAX_SETTINGS_BYTES)
        .ok()
        .and_then(|text| toml_section(&String::from_utf8_lossy(&text), "plugins").ok())
        .flatten();
    for (id, entry) in configured
        .as_ref()
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        plugins.entry(shown(id)).or_default().1 = entry["enabled"].as_bool();
    }
    Value::Array(
        plugins
            .into_iter()
            .take(MAX_LISTED)
            .map(|(plugin, (installed, enabled))| {
                json!({"plugin": plugin, "installed": installed, "enabled": enabled})
            })
            .collect(),
    )
}

/// Instruction files, Claude Code's settings, skills, agents, commands,
/// and plugin manifests under `base` (a project, or the home directory).
fn agent_files(base: &Path, scope: &str, reach: Reach) -> Value {
    let claude = base.join(".claude");
    let names = |dir: PathBuf, dirs: bool| {
        if reach.allows(&dir) {
            names_in(&dir, dirs)
        } else {
            Vec::new()
        }
    };
    let instructions: Vec<Value> = [
        "AGENTS.md",
        "CLAUDE.md",
        "CLAUDE.local.md",
        "GEMINI.md",
        ".cursorrules",
        ".github/copilot-instructions.md",
    ]
    .iter()
    .filter(|name| reach.allows(&base.join(name)))
    .filter_map(|name| {
        let meta = std::fs::metadata(base.join(name)).ok()?;
        meta.is_file()
            .then(|| json!({"path": name, "bytes": meta.len()}))
    })
    .collect();
    let settings: Vec<Value> = ["settings.json", "settings.local.json"]
        .iter()
        .map(|name| claude.join(name))
        .filter(|path| reach.allows(path))
        .filter_map(|path| claude_settings(&path))
        .collect();
    let plugins: Vec<Value> = [".claude-plugin/plugin.json", ".codex-plugin/plugin.json"]
        .iter()
        .filter(|name| reach.allows(&base.join(name)))
        .filter_map(|name| {
            plugin_name(&base.join(name)).map(|n| json!({"manifest": name, "name": n}))
        })
        .collect();
    json!({
        "scope": scope,
        "instructions": instructions,
        "claude_settings": settings,
        "skills": names(claude.join("skills"), true),
        "agents": names(claude.join("agents"), false),
        "commands": names(claude.join("commands"), false),
        "codex_skills": names(base.join(".agents").join("skills"), true),
        "plugins": plugins,
    })
}

fn read_json(path: &Path) -> Option<Result<Value, String>> {
    match wamcp_fs::regular::read_small(path, MAX_SETTINGS_BYTES) {
        Ok(bytes) => Some(
            serde_json::from_slice(&bytes)
                .map_err(|e| format!("not valid JSON (line {}, column {})", e.line(), e.column())),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Err(format!("not read: {e}"))),
    }
}

/// A settings file's hooks per event, permission rule counts and the
/// plugins it enables.
fn claude_settings(path: &Path) -> Option<Value> {
    let shown_path = path.display().to_string();
    let settings = match read_json(path)? {
        Ok(Value::Object(map)) => map,
        Ok(_) => {
            return Some(json!({"path": shown_path, "valid": false, "error": "not a JSON object"}));
        }
        Err(e) => return Some(json!({"path": shown_path, "valid": false, "error": e})),
    };
    let mut hooks = Map::new();
    if let Some(Value::Object(events)) = settings.get("hooks") {
        for (event, groups) in events {
            // Only hook objects count: a malformed entry runs nothing.
            let count: usize = groups
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| g.get("hooks")?.as_array())
                .map(|hooks| hooks.iter().filter(|h| h.is_object()).count())
                .sum();
            hooks.insert(shown(event), json!(count));
        }
    }
    let permissions: Map<String, Value> = ["allow", "ask", "deny"]
        .iter()
        .filter_map(|kind| {
            let rules = settings.get("permissions")?.get(kind)?.as_array()?;
            Some((kind.to_string(), json!(rules.len())))
        })
        .collect();
    let plugins: Vec<String> = settings
        .get("enabledPlugins")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, on)| on.as_bool() == Some(true))
        .map(|(name, _)| shown(name))
        .take(MAX_LISTED)
        .collect();
    Some(json!({
        "path": shown_path,
        "valid": true,
        "hooks": hooks,
        "permission_rules": permissions,
        "enabled_plugins": plugins,
        "mcp_servers_enabled_here": settings.get("enabledMcpjsonServers").and_then(Value::as_array).map(Vec::len),
    }))
}

fn plugin_name(path: &Path) -> Option<String> {
    let name = match read_json(path)? {
        Ok(v) => v.get("name").and_then(Value::as_str).map(shown),
        Err(_) => None,
    };
    Some(name.unwrap_or_else(|| "(invalid manifest)".into()))
}

/// Entry names in `dir` (directories when `dirs`, else file stems), sorted,
/// at most [`MAX_LISTED`].
fn names_in(dir: &Path, dirs: bool) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        // Linked entries are left out: a link may lead anywhere.
        .filter(|e| {
            e.file_type()
                .is_ok_and(|t| if dirs { t.is_dir() } else { t.is_file() })
        })
        .filter_map(|e| {
            let path = e.path();
            let name = if dirs {
                path.file_name()?
            } else {
                path.file_stem()?
            };
            Some(shown(&name.to_string_lossy()))
        })
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names.truncate(MAX_LISTED);
    names
}

/// A server as the overlap report names it (its name is already escaped).
fn named(place: &Place, server: &Server) -> Value {
    json!({
        "server": server.name,
        "file": place.path.display().to_string(),
        "section": server.section,
        "scope": place.scope,
    })
}

/// Overlaps between the configured servers and the plan that resolves
/// them, every step reversible by restoring the file. Entries are compared
/// by content only within one scope: a project file is the agent's to
/// write, so comparing it with the user's own files would let it confirm
/// a guess about a value there (and steer the plan to remove the user's
/// entry). Across scopes only names are compared, and only reported.
fn overlaps(read: &[(Place, Summary)]) -> (Vec<Value>, Vec<Value>) {
    let servers: Vec<(&Place, &Server)> = read
        .iter()
        .flat_map(|(place, summary)| summary.servers.iter().map(move |s| (place, s)))
        .collect();
    let mut found = Vec::new();
    let mut plan = Vec::new();
    let mut step = |action: &str, place: &Place, server: &Server| {
        plan.push(json!({
            "step": plan.len() + 1,
            "action": action,
            "file": place.path.display().to_string(),
            "section": server.section,
            "server": server.name,
            "undo": "restore the file from the copy made before this step",
        }));
    };
    for same in shared(&servers, |place, server| {
        server.identity.as_deref().map(|id| (place.scope, id))
    }) {
        found.push(json!({
            "kind": "same_server",
            "detail": "these entries are identical but for their names",
            "servers": same.iter().map(|(p, s)| named(p, s)).collect::<Vec<_>>(),
        }));
        for (place, server) in &same[1..] {
            step(
                "copy the file, then remove this entry: an identical one comes first",
                place,
                server,
            );
        }
    }
    for same in shared(&servers, |_, server| Some(server.name.as_str())) {
        found.push(json!({
            "kind": "same_name",
            "detail": "one name in several places: a client uses one of them and hides the others",
            "servers": same.iter().map(|(p, s)| named(p, s)).collect::<Vec<_>>(),
        }));
    }
    let files: Vec<&(&Place, &Server)> = servers.iter().filter(|(_, s)| s.serves_files).collect();
    if files.len() > 1 {
        found.push(json!({
            "kind": "filesystem_servers",
            "detail": "several servers read and write files; a model picks between look-alike tools",
            "servers": files.iter().map(|(p, s)| named(p, s)).collect::<Vec<_>>(),
        }));
    }
    for (place, server) in &files {
        let wamcp_beside = servers
            .iter()
            .any(|(p, s)| p.scope == place.scope && s.program.as_deref() == Some("wamcp"));
        if wamcp_beside {
            found.push(json!({
                "kind": "shadows_wamcp",
                "detail": "wamcp, configured in the same scope, reads, searches and edits files already",
                "servers": [named(place, server)],
            }));
            step(
                "copy the file, then disable this entry: wamcp's file tools cover it",
                place,
                server,
            );
        }
    }
    (found, plan)
}

/// The groups of more than one server that share a key (`None`: the
/// server is in no group), in key order.
fn shared<'a, K: Ord>(
    servers: &[(&'a Place, &'a Server)],
    key: impl Fn(&'a Place, &'a Server) -> Option<K>,
) -> Vec<Vec<(&'a Place, &'a Server)>> {
    let mut groups: BTreeMap<K, Vec<(&Place, &Server)>> = BTreeMap::new();
    for (place, server) in servers {
        if let Some(k) = key(place, server) {
            groups.entry(k).or_default().push((place, server));
        }
    }
    groups.into_values().filter(|v| v.len() > 1).collect()
}
