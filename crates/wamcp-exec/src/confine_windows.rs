//! The Windows launch: access entries for wamcp's capability SID as the
//! token plan says, then `wamcp __confined-run`, which starts the program
//! under the write-restricted token.

use crate::confine::Launch;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wamcp_platform::confine::Scope;
use wamcp_platform::confine::windows::{Grant, grant};
use wamcp_policy::command::token_plan::{
    Access, Lifetime, capability_sid, is_capability_sid, token_plan, trust_candidates,
};

/// The subcommand of the wamcp binary that starts a program under the token.
pub const HELPER: &str = "__confined-run";

/// Server-lifetime entries already added: adding one to a project root
/// rewrites the access lists of the whole tree, so it is done once.
static APPLIED: Mutex<Option<HashSet<(String, bool)>>> = Mutex::new(None);

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
        .filter(|p| Path::new(p).exists())
        .collect();
    let plan = token_plan(&capability, &writable, &temp.display().to_string(), &trust);
    let mut applied = APPLIED.lock().unwrap_or_else(|e| e.into_inner());
    let applied = applied.get_or_insert_with(HashSet::new);
    for entry in &plan.entries {
        let key = (entry.path.clone(), entry.access == Access::DenyWrite);
        if entry.lifetime == Lifetime::Server && applied.contains(&key) {
            continue;
        }
        let kind = match entry.access {
            Access::Modify => Grant::Modify,
            Access::DenyWrite => Grant::DenyWrite,
        };
        grant(Path::new(&entry.path), &capability, kind)?;
        if entry.lifetime == Lifetime::Server {
            applied.insert(key);
        }
    }
    let helper = std::env::current_exe()?;
    Ok(Launch {
        wrapper: Some((
            helper.display().to_string(),
            vec![HELPER.to_string(), capability, "--".to_string()],
        )),
    })
}

/// This installation's capability SID, made on first use and kept beside
/// wamcp's other per-user data.
fn capability() -> io::Result<String> {
    let dir = std::env::var_os("LOCALAPPDATA")
        .map(PathBuf::from)
        .ok_or_else(|| io::Error::other("LOCALAPPDATA is not set"))?
        .join("wamcp");
    let file = dir.join("capability-sid.txt");
    if let Ok(text) = std::fs::read_to_string(&file)
        && is_capability_sid(&text)
    {
        return Ok(text.trim().to_string());
    }
    std::fs::create_dir_all(&dir)?;
    let sid = capability_sid(random_bytes());
    std::fs::write(&file, &sid)?;
    Ok(sid)
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
