//! The Windows confinement plan: which SIDs restrict the command's token
//! and which access-control entries open (or keep closed) which paths.
//!
//! A write-restricted token passes a write check only when both the user's
//! own groups *and* one of the restricting SIDs are granted the access. The
//! restricting SIDs are capability SIDs of this installation of wamcp, one
//! per writable place (derived from a random base SID and the place's
//! path; nothing else on the machine is ever granted anything for them),
//! and the logon session's SID (the session's own objects). So a command
//! can write exactly where wamcp added an allow entry for one of *its*
//! places, and nowhere a deny entry says no, whatever the user may write.
//! The entries stay between servers (adding one to a big tree is slow);
//! a root an earlier session used keeps its entry, but no later command
//! carries its SID unless that root is writable to it again.

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

/// One access-control entry for a capability SID, on one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The file or directory the entry is added to (a Windows path).
    pub path: String,
    /// Whether it opens the path to writing or keeps it closed.
    pub access: Access,
    /// When the entry is removed again.
    pub lifetime: Lifetime,
    /// The capability SID it names.
    pub sid: String,
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

/// The plan for one command: `writable` holds the roots and caches, each
/// opened for a capability SID of its own (from `base`, the installation's
/// SID). `existing_trust` lists the trust locations that exist inside them
/// (from [`trust_candidates`]), which stay closed to the command although
/// they are inside a writable root: denied for the SID of every writable
/// place that holds them (a root nested in another inherits both allows).
pub fn token_plan(
    base: &str,
    writable: &[String],
    temp: &str,
    existing_trust: &[String],
) -> TokenPlan {
    let entry = |path: &str, access, lifetime, sid: String| Entry {
        path: path.to_string(),
        access,
        lifetime,
        sid,
    };
    let mut entries: Vec<Entry> = writable
        .iter()
        .map(|p| entry(p, Access::Modify, Lifetime::Server, capability_for(base, p)))
        .collect();
    entries.push(entry(
        temp,
        Access::Modify,
        Lifetime::Call,
        capability_for(base, temp),
    ));
    for trust in existing_trust {
        entries.extend(writable.iter().filter(|w| holds(w, trust)).map(|w| {
            entry(
                trust,
                Access::DenyWrite,
                Lifetime::Server,
                capability_for(base, w),
            )
        }));
    }
    let mut restricting: Vec<String> = Vec::new();
    for e in entries.iter().filter(|e| e.access == Access::Modify) {
        if !restricting.contains(&e.sid) {
            restricting.push(e.sid.clone());
        }
    }
    restricting.push(LOGON.to_string());
    TokenPlan {
        restricting,
        entries,
    }
}

/// Whether the folder `dir` holds `path` (compared without case, as
/// Windows compares names).
fn holds(dir: &str, path: &str) -> bool {
    let dir = dir.trim_end_matches(['\\', '/']).to_lowercase();
    let path = path.to_lowercase();
    path.strip_prefix(&dir)
        .is_some_and(|rest| rest.starts_with(['\\', '/']))
}

/// Whether `sid` is one this installation (`base`) makes for `path` or a
/// folder holding it: the SIDs of the entries it may ever take away.
pub fn is_own_sid(base: &str, sid: &str, path: &str) -> bool {
    if !is_capability_sid(base) {
        return false;
    }
    let mut folder = path.trim_end_matches(['\\', '/']);
    loop {
        if capability_for(base, folder) == sid {
            return true;
        }
        match folder.rfind(['\\', '/']) {
            Some(cut) if cut > 0 => folder = &folder[..cut],
            _ => return false,
        }
    }
}

/// The capability SID that opens `path` to commands: the same for the same
/// installation and folder (spelled in any case), different for any other,
/// and unlike any account's.
pub fn capability_for(base: &str, path: &str) -> String {
    use sha2::{Digest, Sha256};
    let folded = path.trim_end_matches(['\\', '/']).to_lowercase();
    let mut input = base.trim().as_bytes().to_vec();
    input.push(0);
    input.extend_from_slice(folded.as_bytes());
    let digest = Sha256::digest(&input);
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    capability_sid(bytes)
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

/// One line of the ledger: an entry wamcp added, with the SID it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// Allow or deny.
    pub access: Access,
    /// The capability SID the entry names.
    pub sid: String,
    /// Where it is.
    pub path: String,
}

/// The record of the lasting entries wamcp added (one `allow SID PATH` or
/// `deny SID PATH` line each), so that `wamcp uninstall-sandbox` can take
/// every one away again and `wamcp config --check` can list them: the
/// entries outlive the server on purpose (adding one to a big tree is
/// slow), so they must never be forgotten. `None` when nothing is new.
pub fn ledger_with(ledger: &str, added: &[Entry]) -> Option<String> {
    let mut entries = read_ledger(ledger);
    let before = entries.len();
    for entry in added.iter().filter(|e| e.lifetime == Lifetime::Server) {
        let item = Recorded {
            access: entry.access,
            sid: entry.sid.clone(),
            path: entry.path.clone(),
        };
        if !entries.contains(&item) {
            entries.push(item);
        }
    }
    (entries.len() != before).then(|| write_ledger(&entries))
}

/// The entries a ledger names, each once; lines it does not know, or
/// whose SID is not a capability SID, are skipped (a ledger is only ever
/// written by [`ledger_with`]).
pub fn read_ledger(text: &str) -> Vec<Recorded> {
    let mut entries: Vec<Recorded> = Vec::new();
    for line in text.lines().map(|l| l.trim_end_matches('\r')) {
        let mut words = line.splitn(3, ' ');
        let access = match words.next() {
            Some("allow") => Access::Modify,
            Some("deny") => Access::DenyWrite,
            _ => continue,
        };
        let (Some(sid), Some(path)) = (words.next(), words.next()) else {
            continue;
        };
        let entry = Recorded {
            access,
            sid: sid.to_string(),
            path: path.to_string(),
        };
        if is_capability_sid(sid) && !path.is_empty() && !entries.contains(&entry) {
            entries.push(entry);
        }
    }
    entries
}

/// A ledger naming `entries`.
pub fn write_ledger(entries: &[Recorded]) -> String {
    entries
        .iter()
        .map(|e| {
            let word = match e.access {
                Access::Modify => "allow",
                Access::DenyWrite => "deny",
            };
            format!("{word} {} {}\n", e.sid, e.path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "S-1-5-21-1-2-3-4";

    #[test]
    fn the_ledger_keeps_every_lasting_entry_once_with_its_sid() {
        let plan = token_plan(
            BASE,
            &[r"C:\src\game".to_string()],
            r"C:\Temp\wamcp-cmd-x1",
            &[r"C:\src\game\.vscode".to_string()],
        );
        let game = capability_for(BASE, r"C:\src\game");
        let first = ledger_with("", &plan.entries).unwrap();
        assert_eq!(
            first,
            format!("allow {game} C:\\src\\game\ndeny {game} C:\\src\\game\\.vscode\n")
        );
        assert_eq!(ledger_with(&first, &plan.entries), None, "nothing new");
        let other = token_plan(BASE, &[r"D:\w x".to_string()], r"C:\T\x", &[]);
        let second = ledger_with(&first, &other.entries).unwrap();
        let recorded = |access, sid: &str, path: &str| Recorded {
            access,
            sid: sid.to_string(),
            path: path.to_string(),
        };
        let w = capability_for(BASE, r"D:\w x");
        assert_eq!(
            read_ledger(&second),
            [
                recorded(Access::Modify, &game, r"C:\src\game"),
                recorded(Access::DenyWrite, &game, r"C:\src\game\.vscode"),
                recorded(Access::Modify, &w, r"D:\w x"),
            ]
        );
        let messy = format!(
            "allow {game} C:\\a\r\nallow {game} C:\\a\ngrant {game} C:\\b\nallow C:\\no-sid\n\
             allow S-1-1-0 C:\\everyone\nallow {game} \n\ndeny {game} C:\\a b\n"
        );
        assert_eq!(
            read_ledger(&messy),
            [
                recorded(Access::Modify, &game, r"C:\a"),
                recorded(Access::DenyWrite, &game, r"C:\a b"),
            ]
        );
    }

    #[test]
    fn the_plan_opens_each_place_for_its_own_sid_and_keeps_trust_closed() {
        let (game, inner, cargo, temp) = (
            r"C:\src\game",
            r"C:\src\game\libs\inner",
            r"C:\Users\u\.cargo\registry",
            r"C:\Users\u\AppData\Local\Temp\wamcp-cmd-x1",
        );
        let plan = token_plan(
            BASE,
            &[game.to_string(), inner.to_string(), cargo.to_string()],
            temp,
            &[
                r"C:\src\game\.git\hooks".to_string(),
                r"C:\src\game\libs\inner\.vscode".to_string(),
            ],
        );
        let sid = |path| capability_for(BASE, path);
        assert_eq!(
            plan.restricting,
            [
                sid(game),
                sid(inner),
                sid(cargo),
                sid(temp),
                LOGON.to_string()
            ]
        );
        let shown: Vec<(&str, Access, Lifetime, String)> = plan
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.access, e.lifetime, e.sid.clone()))
            .collect();
        let hooks = r"C:\src\game\.git\hooks";
        let vscode = r"C:\src\game\libs\inner\.vscode";
        assert_eq!(
            shown,
            [
                (game, Access::Modify, Lifetime::Server, sid(game)),
                (inner, Access::Modify, Lifetime::Server, sid(inner)),
                (cargo, Access::Modify, Lifetime::Server, sid(cargo)),
                (temp, Access::Modify, Lifetime::Call, sid(temp)),
                (hooks, Access::DenyWrite, Lifetime::Server, sid(game)),
                // Denied for both SIDs that would open it: the nested root's
                // and the one its allow is inherited from.
                (vscode, Access::DenyWrite, Lifetime::Server, sid(game)),
                (vscode, Access::DenyWrite, Lifetime::Server, sid(inner)),
            ]
        );
    }

    /// Uninstall takes away only SIDs made for the path or a folder above
    /// it: never an account's SID a ledger line names.
    #[test]
    fn only_the_installations_own_sids_are_taken_away() {
        let game = capability_for(BASE, r"C:\src\game");
        assert!(is_own_sid(BASE, &game, r"C:\src\game"));
        assert!(is_own_sid(BASE, &game, r"C:\src\game\libs\inner\.vscode"));
        assert!(!is_own_sid(BASE, &game, r"C:\src\other"));
        assert!(!is_own_sid(BASE, "S-1-5-21-7-8-9-1001", r"C:\Users\u"));
        assert!(!is_own_sid("S-1-5-21-9-9-9-9", &game, r"C:\src\game"));
        assert!(!is_own_sid("", &game, r"C:\src\game"));
    }

    /// One SID per folder and installation: a root an earlier session
    /// opened is not writable to a command of another root.
    #[test]
    fn each_folder_has_a_capability_of_its_own() {
        let a = capability_for(BASE, r"C:\src\game");
        assert!(is_capability_sid(&a), "{a}");
        assert_eq!(a, capability_for(BASE, r"c:\SRC\Game\"));
        assert_ne!(a, capability_for(BASE, r"C:\src\game2"));
        assert_ne!(a, capability_for(BASE, r"C:\src"));
        assert_ne!(a, capability_for("S-1-5-21-9-9-9-9", r"C:\src\game"));
        assert_ne!(a, BASE);
        assert!(holds(r"C:\src\game\", r"c:\SRC\game\.git"));
        assert!(!holds(r"C:\src\game", r"C:\src\game2\.git"));
        assert!(!holds(r"C:\src\game", r"C:\src\game"));
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
