//! The Windows launch: access entries for the capability SIDs of the
//! writable places as the token plan says, then `wamcp __confined-run`,
//! which starts the program under the write-restricted token.

use crate::confine::Launch;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wamcp_platform::confine::Scope;
use wamcp_platform::confine::windows::{Grant, grant, grants, revoke};
use wamcp_policy::command::token_plan::{
    Access, Entry, LOGON, Lifetime, Recorded, capability_sid, is_capability_sid, is_own_sid,
    ledger_with, read_ledger, token_plan, trust_candidates, write_ledger,
};

/// The subcommand of the wamcp binary that starts a program under the token.
pub const HELPER: &str = "__confined-run";

/// Server-lifetime allow entries already added: adding one to a project
/// root rewrites the access lists of the whole tree, so it is done once
/// per server, and not at all when an earlier server's entry is still
/// there. Deny entries are looked at before every command instead: a file
/// replaced by renaming a new one over it (git writing `.git\config`)
/// loses its own entries.
static APPLIED: Mutex<Option<HashSet<(String, String)>>> = Mutex::new(None);

pub fn launch(scope: &Scope, temp: &Path) -> io::Result<Launch> {
    let capability = capability()?;
    let writable: Vec<String> = scope
        .writable
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let trust: Vec<String> = writable
        .iter()
        .flat_map(|root| trust_candidates(root))
        // Not through a link or junction: an entry set there lands on
        // whatever it leads to, where the ledger cannot find it. A write
        // through it needs an allow entry there, which none gives.
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink()))
        .collect();
    let plan = token_plan(&capability, &writable, &temp.display().to_string(), &trust);
    let mut applied = APPLIED.lock().unwrap_or_else(|e| e.into_inner());
    let applied = applied.get_or_insert_with(HashSet::new);
    let kind = |entry: &Entry| match entry.access {
        Access::Modify => Grant::Modify,
        Access::DenyWrite => Grant::DenyWrite,
    };
    // Recorded before they are added: an entry recorded and never added
    // costs `uninstall-sandbox` nothing, one added and never recorded
    // would stay on the user's files for good. All of them, so that one an
    // earlier server added is in the ledger too.
    record(&plan.entries)?;
    for entry in &plan.entries {
        let key = (entry.path.clone(), entry.sid.clone());
        let lasting_allow = entry.lifetime == Lifetime::Server && entry.access == Access::Modify;
        if lasting_allow && applied.contains(&key) {
            continue;
        }
        let path = Path::new(&entry.path);
        let there = entry.lifetime == Lifetime::Server
            && grants(path, &entry.sid).is_ok_and(|g| g.contains(&kind(entry)));
        if !there {
            grant(path, &entry.sid, kind(entry))?;
        }
        if lasting_allow {
            applied.insert(key);
        }
    }
    let sids: Vec<&str> = plan
        .restricting
        .iter()
        .map(String::as_str)
        .filter(|sid| *sid != LOGON)
        .collect();
    let helper = std::env::current_exe()?;
    Ok(Launch {
        wrapper: Some((
            helper.display().to_string(),
            vec![HELPER.to_string(), sids.join(","), "--".to_string()],
        )),
    })
}

/// wamcp's per-user folder, where the capability SID and the ledger live.
fn own_dir() -> io::Result<PathBuf> {
    Ok(std::env::var_os("LOCALAPPDATA")
        .map(PathBuf::from)
        .ok_or_else(|| io::Error::other("LOCALAPPDATA is not set"))?
        .join("wamcp"))
}

/// The ledger of the lasting entries wamcp added (`token_plan::ledger_with`).
pub fn ledger_file() -> io::Result<PathBuf> {
    Ok(own_dir()?.join("sandbox-entries.txt"))
}

/// Adds the lasting `entries` the ledger lacks, appended: two servers
/// writing at once may both add a line (read back once), but neither can
/// drop the other's, as a rewrite could.
fn record(entries: &[Entry]) -> io::Result<()> {
    let file = ledger_file()?;
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let Some(whole) = ledger_with(&text, entries) else {
        return Ok(());
    };
    let known = read_ledger(&text);
    let added: Vec<Recorded> = read_ledger(&whole)
        .into_iter()
        .filter(|entry| !known.contains(entry))
        .collect();
    record_lines(&added)
}

/// Appends `entries` to the ledger.
fn record_lines(entries: &[Recorded]) -> io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(own_dir()?)?;
    let mut ledger = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ledger_file()?)?;
    ledger.write_all(write_ledger(entries).as_bytes())
}

/// The lasting entries wamcp has added and not taken away (none when
/// there is no ledger).
pub fn recorded() -> io::Result<Vec<Recorded>> {
    read_ledger_file(&ledger_file()?)
}

fn read_ledger_file(file: &Path) -> io::Result<Vec<Recorded>> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(read_ledger(&text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// `wamcp uninstall-sandbox`: takes every recorded entry away (each names
/// its capability SID), and the base SID with them once none is left. One
/// line per path; an error names the paths whose entries are still there
/// (and keeps them in the ledger for the next try).
pub fn uninstall() -> Result<Vec<String>, String> {
    let text = |e: io::Error| e.to_string();
    let sid_file = own_dir().map_err(text)?.join("capability-sid.txt");
    let ledger = ledger_file().map_err(text)?;
    // Taken aside first: a server adding entries meanwhile starts a new
    // ledger, which this run leaves alone.
    let taking = ledger.with_extension("uninstalling");
    match std::fs::rename(&ledger, &taking) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{}: {e}", ledger.display())),
    }
    let entries = read_ledger_file(&taking).map_err(text)?;
    let base = std::fs::read_to_string(&sid_file).unwrap_or_default();
    if entries.is_empty() && base.is_empty() {
        let _ = std::fs::remove_file(&taking);
        return Ok(vec![
            "nothing to remove: wamcp never confined a command for this user".into(),
        ]);
    }
    let (mut lines, mut failed) = (Vec::new(), Vec::new());
    for entry in entries {
        let path = entry.path.clone();
        // Only a SID this installation made for the path or a folder
        // holding it: never an account's, whatever the ledger says.
        if !is_own_sid(base.trim(), &entry.sid, &path) {
            lines.push(format!(
                "{path}: the ledger names {}, which is not wamcp's; left alone",
                entry.sid
            ));
            continue;
        }
        match revoke(Path::new(&path), &entry.sid) {
            Ok(n) => lines.push(format!(
                "{path}: {n} entr{} removed",
                if n == 1 { "y" } else { "ies" }
            )),
            Err(_) if !Path::new(&path).exists() => {
                lines.push(format!("{path}: gone, nothing to remove"))
            }
            Err(e) => failed.push((entry, format!("{path}: {e}"))),
        }
    }
    if failed.is_empty() {
        let _ = std::fs::remove_file(&taking);
        if !ledger.exists() {
            let _ = std::fs::remove_file(&sid_file);
            lines.push("the capability SID and the ledger are removed".into());
        } else {
            lines.push("a server added entries meanwhile: the capability SID is kept".into());
        }
        return Ok(lines);
    }
    let left: Vec<Recorded> = failed.iter().map(|(entry, _)| entry.clone()).collect();
    let _ = record_lines(&left);
    let _ = std::fs::remove_file(&taking);
    let errors: Vec<String> = failed.into_iter().map(|(_, why)| why).collect();
    Err(format!(
        "entries remain on {} path(s): {}",
        errors.len(),
        errors.join("; ")
    ))
}

/// This installation's capability SID, made on first use and kept beside
/// wamcp's other per-user data.
fn capability() -> io::Result<String> {
    let dir = own_dir()?;
    let file = dir.join("capability-sid.txt");
    match std::fs::read_to_string(&file) {
        Ok(text) if is_capability_sid(&text) => return Ok(text.trim().to_string()),
        // Never replaced: the entries on the user's files name the SID
        // in it, and a new one would leave them where nothing finds them.
        Ok(_) => {
            return Err(io::Error::other(format!(
                "{} does not hold a capability SID",
                file.display()
            )));
        }
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        Err(_) => {}
    }
    std::fs::create_dir_all(&dir)?;
    let sid = capability_sid(random_bytes());
    // Written whole, and never over another: a server that loses the race
    // takes the winner's, and a crash leaves no empty file behind.
    let made = wamcp_platform::atomic::write_atomically(
        &dunce::canonicalize(&dir)?,
        std::ffi::OsStr::new("capability-sid.txt"),
        sid.as_bytes(),
        wamcp_platform::atomic::Commit::CreateNew,
    );
    match made {
        Ok(()) => Ok(sid),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => capability(),
        Err(e) => Err(e),
    }
}

/// Sixteen bytes from the standard library's OS-seeded hasher keys: the SID
/// must be unlikely to collide, not secret.
fn random_bytes() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; 16];
    for half in out.chunks_mut(8) {
        let mut hasher = std::hash::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    out
}
