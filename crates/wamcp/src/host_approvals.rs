//! One question per action: a call the host already put to the user is not
//! put to them again by the server.
//!
//! Claude Code shows its own prompt when wamcp's hook answers `ask`, and
//! Codex fires `PermissionRequest` just before it asks; either way the call
//! reaches the server only after the user said yes. The hook files that
//! fact under the call's key ([`call_key`]: the tool and its exact
//! arguments) in the data directory, with the host's own id for this one
//! call (`tool_use_id`) and the host's process (the hook's nearest
//! ancestors). The server, about to ask about a call, takes a record for
//! this very call — same key, same tool-use id as the host sends in the
//! call's `_meta` (`claudecode/toolUseId`), filed by its own parent
//! process within [`HOST_APPROVAL_SECONDS`] — once, and then answers its
//! own question with that yes. Anything else (no record, another call,
//! another host, too old, no tool-use id, HTTP) and the server asks as
//! before: the worst case is two questions, never none.
//!
//! The record is filed before the user answers, so it must not outlive
//! the question: a declined call never reaches the server, and the next
//! call, even with the same arguments, carries a new tool-use id that the
//! host made up after the model wrote the call. So neither a declined
//! question nor a record planted in advance (by a command that reached the
//! data directory where no OS layer confines writes, or by the agent
//! running `wamcp hook` itself) can stand for a future call: nobody knows
//! its id before it exists.

use serde_json::{Map, Value, json};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};
use wamcp_policy::host_hooks::{HOST_APPROVAL_SECONDS, call_key};

/// The folder in the data directory.
const FOLDER: &str = "host-approvals";
/// A record is a few hundred bytes; a larger file is not one of ours.
const MAX_RECORD_BYTES: u64 = 4096;
/// Ancestors of the hook a record names: the hook runs under at most a
/// shell the host starts, the server straight under the host. Farther
/// ones (a terminal, init) would match unrelated servers.
const HOST_DEPTH: usize = 2;
/// Old records removed per filing, so the folder stays small.
const PRUNE_PER_FILING: usize = 64;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn folder(data: &Path) -> PathBuf {
    data.join(FOLDER)
}

/// Files that the host is asking the user about `tool` with `arguments`
/// (called by the hook, which the host runs under itself).
/// `tool_use` is the host's id for this one call.
pub fn file(data: &Path, tool: &str, arguments: &Value, tool_use: &str) -> std::io::Result<()> {
    // Where the system names no parent (the first Windows process under
    // Wine), the record names no host and answers nothing.
    let hosts: Vec<u32> = wamcp_platform::process::ancestors(std::process::id(), HOST_DEPTH)
        .into_iter()
        .filter(|pid| *pid > 1)
        .collect();
    file_for(data, tool, arguments, tool_use, &hosts)
}

/// [`file`] naming `hosts` as the host's processes.
fn file_for(
    data: &Path,
    tool: &str,
    arguments: &Value,
    tool_use: &str,
    hosts: &[u32],
) -> std::io::Result<()> {
    let dir = folder(data);
    std::fs::create_dir_all(&dir)?;
    prune(&dir, now());
    let key = call_key(tool, arguments);
    let record =
        json!({"tool": tool, "key": key, "tool_use": tool_use, "hosts": hosts, "at": now()});
    // Written whole under a private name, then renamed: a reader sees the
    // old record or the new one, never half of one.
    let temporary = dir.join(format!("{key}.{}.tmp", std::process::id()));
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)?;
    out.write_all(record.to_string().as_bytes())?;
    drop(out);
    std::fs::rename(&temporary, dir.join(&key)).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// Removes records past their time (and leftovers of interrupted filings).
fn prune(dir: &Path, now: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten().take(PRUNE_PER_FILING) {
        let stale = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .is_none_or(|t| now.saturating_sub(t.as_secs()) > HOST_APPROVAL_SECONDS);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Takes the record for this exact call (`tool_use` as the host sent it)
/// if `host` filed it in time; whatever is found is removed, so a record
/// answers one call at most.
pub fn take(data: &Path, tool: &str, arguments: &Value, tool_use: &str, host: u32) -> bool {
    if tool_use.is_empty() {
        return false;
    }
    let key = call_key(tool, arguments);
    let path = folder(data).join(&key);
    let Some(record) = read_record(&path) else {
        let _ = std::fs::remove_file(&path);
        return false;
    };
    let at = record["at"].as_u64().unwrap_or(0);
    let now = now();
    if record["key"] != key.as_str()
        || at > now + 60
        || now.saturating_sub(at) > HOST_APPROVAL_SECONDS
    {
        let _ = std::fs::remove_file(&path);
        return false;
    }
    // Another call of the same arguments (or another host's) leaves the
    // record to the call it was filed for.
    let ours = record["tool"] == tool
        && record["tool_use"] == tool_use
        && record["hosts"]
            .as_array()
            .is_some_and(|hosts| hosts.iter().any(|h| h.as_u64() == Some(u64::from(host))));
    // Removing it is what takes it: of two calls racing for one record,
    // only the one whose removal succeeds goes on unasked.
    ours && std::fs::remove_file(&path).is_ok()
}

/// A record file: a small regular file (not a link) holding a JSON object.
fn read_record(path: &Path) -> Option<Value> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_RECORD_BYTES {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_RECORD_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    serde_json::from_str::<Value>(&text)
        .ok()
        .filter(Value::is_object)
}

/// The host's answer for one call, looked up the first time the call
/// would ask and kept for the rest of it (a call may ask more than once).
#[derive(Default)]
pub struct HostAnswer {
    tool: String,
    arguments: Value,
    /// The host's id for this call, from the request's `_meta`.
    tool_use: String,
    said_yes: OnceLock<bool>,
}

/// Where Claude Code puts its id of the call in a `tools/call` request.
const TOOL_USE_META: &str = "claudecode/toolUseId";

impl HostAnswer {
    pub fn new(
        tool: &str,
        arguments: &Map<String, Value>,
        meta: &Map<String, Value>,
    ) -> HostAnswer {
        HostAnswer {
            tool: tool.to_string(),
            arguments: Value::Object(arguments.clone()),
            tool_use: meta
                .get(TOOL_USE_META)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            said_yes: OnceLock::new(),
        }
    }

    /// Whether the user already said yes to this call in the host's own
    /// prompt. Only a stdio server has one host, its parent process.
    pub fn said_yes(&self, data: Option<&Path>, transport: &str) -> bool {
        *self.said_yes.get_or_init(|| {
            let parent = wamcp_platform::process::ancestors(std::process::id(), 1);
            match (data, parent.first()) {
                (Some(data), Some(&host)) if transport == "stdio" => {
                    take(data, &self.tool, &self.arguments, &self.tool_use, host)
                }
                _ => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host a record names (the real ancestors are tested end to end
    /// in tests/all/plugins.rs).
    fn host() -> u32 {
        4242
    }

    fn file(data: &Path, tool: &str, arguments: &Value, tool_use: &str) {
        file_for(data, tool, arguments, tool_use, &[host()]).unwrap();
    }

    #[test]
    fn a_record_answers_one_exact_call_once() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"command": "git clean -fdx"});
        file(dir.path(), "run_powershell", &args, "toolu_1");
        let other = json!({"command": "git clean -fdX"});
        assert!(!take(
            dir.path(),
            "run_powershell",
            &other,
            "toolu_1",
            host()
        ));
        assert!(!take(dir.path(), "build_project", &args, "toolu_1", host()));
        assert!(!take(dir.path(), "run_powershell", &args, "", host()));
        assert!(take(dir.path(), "run_powershell", &args, "toolu_1", host()));
        assert!(
            !take(dir.path(), "run_powershell", &args, "toolu_1", host()),
            "taken once"
        );
    }

    #[test]
    fn another_call_another_host_or_an_old_record_answers_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"command": "git stash clear"});
        file(dir.path(), "run_powershell", &args, "toolu_2");
        assert!(!take(
            dir.path(),
            "run_powershell",
            &args,
            "toolu_2",
            host() + 1
        ));
        // A declined question's record never stands for the next call.
        assert!(!take(
            dir.path(),
            "run_powershell",
            &args,
            "toolu_3",
            host()
        ));
        assert!(
            take(dir.path(), "run_powershell", &args, "toolu_2", host()),
            "left to the call it was filed for"
        );

        let key = call_key("run_powershell", &args);
        let old = json!({"tool": "run_powershell", "key": key, "tool_use": "t", "hosts": [host()],
            "at": now() - HOST_APPROVAL_SECONDS - 1});
        std::fs::write(folder(dir.path()).join(&key), old.to_string()).unwrap();
        assert!(!take(dir.path(), "run_powershell", &args, "t", host()));
        std::fs::write(folder(dir.path()).join(&key), "x".repeat(5000)).unwrap();
        assert!(!take(dir.path(), "run_powershell", &args, "t", host()));
    }

    #[test]
    fn only_a_stdio_server_with_a_data_directory_looks() {
        let dir = tempfile::tempdir().unwrap();
        let args = Map::new();
        let meta: Map<String, Value> = [(TOOL_USE_META.to_string(), json!("toolu_9"))]
            .into_iter()
            .collect();
        assert!(!HostAnswer::new("write_file", &args, &meta).said_yes(None, "stdio"));
        assert!(!HostAnswer::new("write_file", &args, &meta).said_yes(Some(dir.path()), "http"));
    }
}
