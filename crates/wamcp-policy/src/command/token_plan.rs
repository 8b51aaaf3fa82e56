//! The Windows confinement plan: which SIDs restrict the command's token
//! and which access-control entries open (or keep closed) which paths.
//!
//! A write-restricted token passes a write check only when both the user's
//! own groups *and* one of the restricting SIDs are granted the access. The
//! restricting SIDs are a capability SID that belongs to this installation
//! of wamcp (nothing else on the machine is ever granted anything for it)
//! and the logon session's SID (the session's own objects). So a command can
//! write exactly where wamcp added an allow entry for the capability, and
//! nowhere a deny entry for it says no, whatever the user may write.

use crate::write_rules::trust_dir_names;

/// How long an access entry stays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// Added once and removed when the server exits: adding an inheritable
    /// entry to a project root rewrites the whole tree's access lists, too
    /// slow to repeat for every command.
    Server,
    /// Added before one command and removed after it (its temp directory).
    Call,
}

/// What an entry says for the capability SID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read, write, create, delete; inherited by everything below.
    Modify,
    /// No write, create or delete, below either; wins over `Modify`.
    DenyWrite,
}

/// One access-control entry for the capability SID, on one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The file or directory the entry is added to (a Windows path).
    pub path: String,
    /// Whether it opens the path to writing or keeps it closed.
    pub access: Access,
    /// When the entry is removed again.
    pub lifetime: Lifetime,
}

/// How one command's token is restricted and which paths it may write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenPlan {
    /// SID strings; `LOGON` stands for the session's logon SID, which is
    /// only known at run time.
    pub restricting: Vec<String>,
    /// Allow entries for the roots, caches and temp directory, then deny
    /// entries for trust locations.
    pub entries: Vec<Entry>,
}

/// Placeholder for the logon SID in [`TokenPlan::restricting`].
pub const LOGON: &str = "LOGON";

/// The plan for one command: `writable` holds the roots and caches.
/// `existing_trust` lists the trust locations that exist inside them (from
/// [`trust_candidates`]), which stay closed to the command although they
/// are inside a writable root.
pub fn token_plan(
    capability: &str,
    writable: &[String],
    temp: &str,
    existing_trust: &[String],
) -> TokenPlan {
    let entry = |path: &String, access, lifetime| Entry {
        path: path.clone(),
        access,
        lifetime,
    };
    let mut entries: Vec<Entry> = writable
        .iter()
        .map(|p| entry(p, Access::Modify, Lifetime::Server))
        .collect();
    entries.push(entry(&temp.to_string(), Access::Modify, Lifetime::Call));
    entries.extend(
        existing_trust
            .iter()
            .map(|p| entry(p, Access::DenyWrite, Lifetime::Server)),
    );
    TokenPlan {
        restricting: vec![capability.to_string(), LOGON.to_string()],
        entries,
    }
}

/// The trust locations a root may hold, to be denied when they exist:
/// git's configuration and hooks, and the agent and editor directories.
pub fn trust_candidates(root: &str) -> Vec<String> {
    let root = root.trim_end_matches(['\\', '/']);
    let mut out: Vec<String> = [".git\\config", ".git\\hooks", ".gitmodules", ".mcp.json"]
        .iter()
        .map(|rest| format!("{root}\\{rest}"))
        .collect();
    out.extend(
        trust_dir_names()
            .filter(|d| *d != ".git")
            .map(|d| format!("{root}\\{d}")),
    );
    out
}

/// A capability SID from 16 random bytes: `S-1-5-21-a-b-c-d`, the shape of
/// a machine-local domain SID, which no account on this machine has.
pub fn capability_sid(random: [u8; 16]) -> String {
    let part =
        |i: usize| u32::from_le_bytes([random[i], random[i + 1], random[i + 2], random[i + 3]]);
    format!("S-1-5-21-{}-{}-{}-{}", part(0), part(4), part(8), part(12))
}

/// Whether a stored capability SID is one [`capability_sid`] makes.
pub fn is_capability_sid(text: &str) -> bool {
    let Some(rest) = text.trim().strip_prefix("S-1-5-21-") else {
        return false;
    };
    let parts: Vec<&str> = rest.split('-').collect();
    parts.len() == 4 && parts.iter().all(|p| p.parse::<u32>().is_ok())
}

/// The record of the lasting entries wamcp added (one `allow PATH` or
/// `deny PATH` line each), so that `wamcp uninstall-sandbox` can take
/// every one away again and `wamcp config --check` can list them: the
/// entries outlive the server on purpose (adding one to a big tree is
/// slow), so they must never be forgotten.
pub fn ledger_with(ledger: &str, added: &[Entry]) -> Option<String> {
    let mut entries = read_ledger(ledger);
    let before = entries.len();
    for entry in added.iter().filter(|e| e.lifetime == Lifetime::Server) {
        let item = (entry.access, entry.path.clone());
        if !entries.contains(&item) {
            entries.push(item);
        }
    }
    (entries.len() != before).then(|| write_ledger(&entries))
}

/// The entries a ledger names, each once; lines it does not know are
/// skipped (a ledger is only ever written by [`ledger_with`]).
pub fn read_ledger(text: &str) -> Vec<(Access, String)> {
    let mut entries: Vec<(Access, String)> = Vec::new();
    for line in text.lines().map(|l| l.trim_end_matches('\r')) {
        let entry = match line.split_once(' ') {
            Some(("allow", path)) => (Access::Modify, path.to_string()),
            Some(("deny", path)) => (Access::DenyWrite, path.to_string()),
            _ => continue,
        };
        if !entry.1.is_empty() && !entries.contains(&entry) {
            entries.push(entry);
        }
    }
    entries
}

/// A ledger naming `entries`.
pub fn write_ledger(entries: &[(Access, String)]) -> String {
    entries
        .iter()
        .map(|(access, path)| match access {
            Access::Modify => format!("allow {path}\n"),
            Access::DenyWrite => format!("deny {path}\n"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_keeps_every_lasting_entry_once() {
        let plan = token_plan(
            "S-1-5-21-1-2-3-4",
            &[r"C:\src\game".to_string()],
            r"C:\Temp\wamcp-cmd-x1",
            &[r"C:\src\game\.vscode".to_string()],
        );
        let first = ledger_with("", &plan.entries).unwrap();
        assert_eq!(first, "allow C:\\src\\game\ndeny C:\\src\\game\\.vscode\n");
        assert_eq!(ledger_with(&first, &plan.entries), None, "nothing new");
        let other = token_plan("S-1-5-21-1-2-3-4", &[r"D:\w".to_string()], r"C:\T\x", &[]);
        let second = ledger_with(&first, &other.entries).unwrap();
        assert_eq!(
            read_ledger(&second),
            [
                (Access::Modify, r"C:\src\game".to_string()),
                (Access::DenyWrite, r"C:\src\game\.vscode".to_string()),
                (Access::Modify, r"D:\w".to_string()),
            ]
        );
        let messy = "allow C:\\a\r\nallow C:\\a\ngrant C:\\b\nallow \n\ndeny C:\\a b\n";
        assert_eq!(
            read_ledger(messy),
            [
                (Access::Modify, r"C:\a".to_string()),
                (Access::DenyWrite, r"C:\a b".to_string())
            ]
        );
    }

    #[test]
    fn the_plan_opens_roots_caches_and_temp_and_keeps_trust_closed() {
        let plan = token_plan(
            "S-1-5-21-1-2-3-4",
            &[
                r"C:\src\game".to_string(),
                r"C:\Users\u\.cargo\registry".to_string(),
            ],
            r"C:\Users\u\AppData\Local\Temp\wamcp-cmd-x1",
            &[r"C:\src\game\.git\hooks".to_string()],
        );
        assert_eq!(plan.restricting, ["S-1-5-21-1-2-3-4", LOGON]);
        let shown: Vec<(&str, Access, Lifetime)> = plan
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.access, e.lifetime))
            .collect();
        assert_eq!(
            shown,
            [
                (r"C:\src\game", Access::Modify, Lifetime::Server),
                (
                    r"C:\Users\u\.cargo\registry",
                    Access::Modify,
                    Lifetime::Server
                ),
                (
                    r"C:\Users\u\AppData\Local\Temp\wamcp-cmd-x1",
                    Access::Modify,
                    Lifetime::Call
                ),
                (
                    r"C:\src\game\.git\hooks",
                    Access::DenyWrite,
                    Lifetime::Server
                ),
            ]
        );
    }

    #[test]
    fn trust_candidates_name_git_and_the_agent_directories() {
        assert_eq!(
            trust_candidates(r"C:\src\game\"),
            [
                r"C:\src\game\.git\config",
                r"C:\src\game\.git\hooks",
                r"C:\src\game\.gitmodules",
                r"C:\src\game\.mcp.json",
                r"C:\src\game\.vscode",
                r"C:\src\game\.claude",
                r"C:\src\game\.codex",
                r"C:\src\game\.cursor",
            ]
        );
    }

    #[test]
    fn capability_sids_round_trip_and_others_are_refused() {
        let sid = capability_sid([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 255, 255, 255, 255]);
        assert_eq!(sid, "S-1-5-21-1-2-3-4294967295");
        assert!(is_capability_sid(&sid));
        for bad in [
            "S-1-1-0",
            "S-1-5-21-1-2-3",
            "S-1-5-21-1-2-3-x",
            "S-1-5-21-1-2-3-4-5",
            "",
        ] {
            assert!(!is_capability_sid(bad), "{bad}");
        }
    }
}
