//! One question per action: a call the host already put to the user is not
//! put to them again by the server.
//!
//! Claude Code shows its own prompt when wamcp's hook answers `ask`, and
//! Codex fires `PermissionRequest` just before it asks; either way the call
//! reaches the server only after the user said yes. The hook files that
//! fact under the call's key ([`call_key`]: the tool and its exact
//! arguments) in the data directory, with the host's process (the hook's
//! ancestors). The server, about to ask about a call, takes a record for
//! this very call, filed by its own parent process within
//! [`HOST_APPROVAL_SECONDS`], once, and then answers its own question
//! with that yes. Anything else (no record, another call, another host,
//! too old, HTTP) and the server asks as before: the worst case is two
//! questions, never none.
//!
//! Why the agent cannot forge a record: the folder lies in wamcp's data
//! directory, a trust location that no wamcp tool writes and no confined
//! command can reach. A process that can write there anyway (a host shell
//! whose permission checks are off) can already do whatever the question
//! guards.

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
/// Ancestors of the hook a record names: the hook runs under a shell the
/// host starts, the server straight under the host.
const HOST_DEPTH: usize = 6;
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
pub fn file(data: &Path, tool: &str, arguments: &Value) -> std::io::Result<()> {
    let dir = folder(data);
    std::fs::create_dir_all(&dir)?;
    prune(&dir, now());
    let key = call_key(tool, arguments);
    let hosts = wamcp_platform::process::ancestors(std::process::id(), HOST_DEPTH);
    let record = json!({"tool": tool, "key": key, "hosts": hosts, "at": now()});
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

/// Takes the record for this exact call if `host` filed it in time;
/// whatever is found is removed, so a record answers one call at most.
pub fn take(data: &Path, tool: &str, arguments: &Value, host: u32) -> bool {
    let key = call_key(tool, arguments);
    let path = folder(data).join(&key);
    let Some(record) = read_record(&path) else {
        return false;
    };
    // Removing it is what takes it: of two calls racing for one record,
    // only the one whose removal succeeds goes on unasked.
    if std::fs::remove_file(&path).is_err() {
        return false;
    }
    let at = record["at"].as_u64().unwrap_or(0);
    let now = now();
    record["key"] == key.as_str()
        && record["tool"] == tool
        && at <= now + 60
        && now.saturating_sub(at) <= HOST_APPROVAL_SECONDS
        && record["hosts"]
            .as_array()
            .is_some_and(|hosts| hosts.iter().any(|h| h.as_u64() == Some(u64::from(host))))
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
    said_yes: OnceLock<bool>,
}

impl HostAnswer {
    pub fn new(tool: &str, arguments: &Map<String, Value>) -> HostAnswer {
        HostAnswer {
            tool: tool.to_string(),
            arguments: Value::Object(arguments.clone()),
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
                    take(data, &self.tool, &self.arguments, host)
                }
                _ => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record this process files names this process's parent, as the
    /// hook's names the host: so the test files as "the hook" and takes as
    /// a server whose parent is this process's parent.
    fn host() -> u32 {
        wamcp_platform::process::ancestors(std::process::id(), 1)[0]
    }

    #[test]
    #[cfg(any(target_os = "linux", windows))]
    fn a_record_answers_one_exact_call_once() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"command": "git clean -fdx"});
        file(dir.path(), "run_powershell", &args).unwrap();
        assert!(!take(
            dir.path(),
            "run_powershell",
            &json!({"command": "git clean -fdX"}),
            host()
        ));
        assert!(!take(dir.path(), "build_project", &args, host()));
        assert!(take(dir.path(), "run_powershell", &args, host()));
        assert!(
            !take(dir.path(), "run_powershell", &args, host()),
            "taken once"
        );
    }

    #[test]
    #[cfg(any(target_os = "linux", windows))]
    fn another_host_or_an_old_record_answers_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"command": "git stash clear"});
        file(dir.path(), "run_powershell", &args).unwrap();
        assert!(!take(
            dir.path(),
            "run_powershell",
            &args,
            host() + 1_000_000
        ));
        assert!(
            !take(dir.path(), "run_powershell", &args, host()),
            "the wrong host used it up"
        );

        let key = call_key("run_powershell", &args);
        let old = json!({"tool": "run_powershell", "key": key, "hosts": [host()],
            "at": now() - HOST_APPROVAL_SECONDS - 1});
        std::fs::write(folder(dir.path()).join(&key), old.to_string()).unwrap();
        assert!(!take(dir.path(), "run_powershell", &args, host()));
        std::fs::write(folder(dir.path()).join(&key), "x".repeat(5000)).unwrap();
        assert!(!take(dir.path(), "run_powershell", &args, host()));
    }

    #[test]
    fn only_a_stdio_server_with_a_data_directory_looks() {
        let dir = tempfile::tempdir().unwrap();
        let args = Map::new();
        assert!(!HostAnswer::new("write_file", &args).said_yes(None, "stdio"));
        assert!(!HostAnswer::new("write_file", &args).said_yes(Some(dir.path()), "http"));
    }
}
