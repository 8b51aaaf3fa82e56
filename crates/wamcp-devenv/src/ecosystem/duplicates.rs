//! Skills and hooks configured more than once: the same skill name in two
//! skill folders (each host loads its own, and a model meets look-alikes),
//! the same hook command in two settings files or two hosts (each runs it).
//!
//! Hook commands are compared without being shown, and only within one
//! scope, for the reason servers are (`super::overlaps`): a project file is
//! the agent's to write, and matching it against the user's own files
//! would confirm a guess about them. Skill names are only names, compared
//! everywhere.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wamcp_policy::text::shown;

/// A folder of skills, one per subfolder.
pub struct SkillFolder {
    /// `project` or `host`.
    pub scope: &'static str,
    /// The host that loads it.
    pub client: &'static str,
    /// The folder.
    pub path: PathBuf,
}

/// One hook command as a settings file configures it.
pub struct HookSite {
    /// `project` or `host`.
    pub scope: &'static str,
    /// The host that runs it.
    pub client: &'static str,
    /// The file that configures it.
    pub file: PathBuf,
    /// The event it runs on (`PreToolUse`, ...), escaped.
    pub event: String,
    /// The command, compared but never shown.
    command: String,
}

/// The command hooks of a `hooks` object as Claude Code and Codex both
/// write it: event → groups → `hooks` → `{type: "command", command}`.
pub fn hook_sites(
    hooks: &Value,
    scope: &'static str,
    client: &'static str,
    file: &Path,
) -> Vec<HookSite> {
    let Some(events) = hooks.as_object() else {
        return Vec::new();
    };
    events
        .iter()
        .flat_map(|(event, groups)| {
            groups
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|group| group.get("hooks")?.as_array())
                .flatten()
                .filter_map(|hook| hook.get("command")?.as_str())
                .map(move |command| HookSite {
                    scope,
                    client,
                    file: file.to_path_buf(),
                    event: shown(event),
                    command: command.trim().to_string(),
                })
        })
        .collect()
}

/// Overlaps of hook commands, and a step for each one that runs twice for
/// one event in one host (the later file's entry goes).
pub fn same_hooks(sites: &[HookSite]) -> (Vec<Value>, Vec<Value>) {
    let mut groups: BTreeMap<(&str, &str), Vec<&HookSite>> = BTreeMap::new();
    for site in sites.iter().filter(|s| !s.command.is_empty()) {
        groups
            .entry((site.scope, site.command.as_str()))
            .or_default()
            .push(site);
    }
    let mut found = Vec::new();
    let mut plan = Vec::new();
    for same in groups.into_values().filter(|g| g.len() > 1) {
        found.push(json!({
            "kind": "same_hook",
            "detail": "one hook command is configured in several places; each place runs it",
            "hooks": same.iter().map(|s| json!({
                "file": s.file.display().to_string(),
                "event": s.event,
                "client": s.client,
                "scope": s.scope,
            })).collect::<Vec<_>>(),
        }));
        for (i, site) in same.iter().enumerate() {
            let twice = same[..i]
                .iter()
                .any(|first| first.client == site.client && first.event == site.event);
            if twice {
                plan.push(json!({
                    "action": "copy the file, then remove this hook: the same command already runs for this event",
                    "file": site.file.display().to_string(),
                    "event": site.event,
                    "undo": "restore the file from the copy made before this step",
                }));
            }
        }
    }
    (found, plan)
}

/// Skill names found in more than one of `folders`.
pub fn same_skills(folders: &[SkillFolder]) -> Vec<Value> {
    let mut places: BTreeMap<String, Vec<&SkillFolder>> = BTreeMap::new();
    for folder in folders {
        for name in super::names_in(&folder.path, true) {
            places.entry(name).or_default().push(folder);
        }
    }
    places
        .into_iter()
        .filter(|(_, found)| found.len() > 1)
        .map(|(skill, found)| {
            json!({
                "kind": "same_skill",
                "detail": "one skill name in several skill folders: each host loads its own copy, and copies drift apart",
                "skill": skill,
                "folders": found.iter().map(|f| json!({
                    "folder": f.path.display().to_string(),
                    "client": f.client,
                    "scope": f.scope,
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(commands: &[(&str, &str)]) -> Value {
        let mut events = serde_json::Map::new();
        for (event, command) in commands {
            events.insert(
                event.to_string(),
                json!([{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]),
            );
        }
        Value::Object(events)
    }

    #[test]
    fn a_hook_twice_in_one_host_gets_a_step_and_across_hosts_a_report() {
        let shared = hooks(&[("PreToolUse", "wamcp hook")]);
        let mut sites = hook_sites(
            &shared,
            "host",
            "claude-code",
            Path::new("/h/.claude/settings.json"),
        );
        sites.extend(hook_sites(
            &shared,
            "host",
            "claude-code",
            Path::new("/h/.claude/settings.local.json"),
        ));
        sites.extend(hook_sites(
            &shared,
            "host",
            "codex",
            Path::new("/h/.codex/hooks.json"),
        ));
        // The project's copy is never compared with the user's files.
        sites.extend(hook_sites(
            &shared,
            "project",
            "claude-code",
            Path::new("/p/.claude/settings.json"),
        ));
        sites.extend(hook_sites(
            &hooks(&[("Stop", "other")]),
            "host",
            "codex",
            Path::new("/h/.codex/hooks.json"),
        ));
        let (found, plan) = same_hooks(&sites);
        assert_eq!(found.len(), 1, "{found:?}");
        let files: Vec<&str> = found[0]["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["file"].as_str().unwrap())
            .collect();
        assert_eq!(
            files,
            [
                "/h/.claude/settings.json",
                "/h/.claude/settings.local.json",
                "/h/.codex/hooks.json"
            ]
        );
        assert!(
            !found[0].to_string().contains("wamcp hook"),
            "commands are never shown"
        );
        assert_eq!(plan.len(), 1);
        assert_eq!(plan[0]["file"], "/h/.claude/settings.local.json");
    }

    #[test]
    fn the_same_skill_name_in_two_folders_is_reported() {
        let root = tempfile::tempdir().unwrap();
        let folder = |name: &str, skills: &[&str]| {
            let path = root.path().join(name);
            for skill in skills {
                std::fs::create_dir_all(path.join(skill)).unwrap();
            }
            path
        };
        let folders = [
            SkillFolder {
                scope: "project",
                client: "claude-code",
                path: folder("claude", &["review", "build"]),
            },
            SkillFolder {
                scope: "project",
                client: "codex",
                path: folder("agents", &["review"]),
            },
            SkillFolder {
                scope: "host",
                client: "claude-code",
                path: folder("home", &["review", "notes"]),
            },
        ];
        let found = same_skills(&folders);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0]["skill"], "review");
        assert_eq!(found[0]["folders"].as_array().unwrap().len(), 3);
    }
}
