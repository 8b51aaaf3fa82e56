//! The host-grants file on disk: read fresh on every fetch (never cached:
//! being briefly wrong about which hosts are trusted is worse than reading
//! a small file), and edited by `wamcp hostgrants`.

use std::path::Path;
use wamcp_policy::grants::{add_grant, parse_grants, remove_grant, starter_file};
use wamcp_policy::hosts::normalize_host;
use wamcp_policy::limits::MAX_CONFIG_FILE_BYTES;

/// The enabled hosts the file grants. A missing file grants nothing and is
/// no error; a malformed or oversized one grants nothing and says why.
pub fn read(path: &Path) -> Result<Vec<String>, String> {
    match read_text(path)? {
        None => Ok(Vec::new()),
        Some(text) => parse_grants(&text)
            .map(|grants| grants.hosts)
            .map_err(|e| format!("{}: {e}; it grants nothing until fixed", path.display())),
    }
}

pub(crate) fn read_text(path: &Path) -> Result<Option<String>, String> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
        Ok(meta) if meta.len() > MAX_CONFIG_FILE_BYTES => {
            return Err(format!(
                "{} is larger than {MAX_CONFIG_FILE_BYTES} bytes; it grants nothing",
                path.display()
            ));
        }
        Ok(_) => {}
    }
    std::fs::read_to_string(path)
        .map(Some)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `--add`: grants `host`, keeping every other entry.
pub fn add(path: &Path, host: &str, note: Option<&str>) -> Result<String, String> {
    let existing = read_text(path)?;
    let text = add_grant(existing.as_deref(), host, note)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    write(path, &text)?;
    let host = normalize_host(host)?;
    Ok(format!(
        "granted {host} in {} (fetch_web_page reads it from the next call on)",
        path.display()
    ))
}

/// `--remove`: takes `host` out; an error when it was not listed.
pub fn remove(path: &Path, host: &str) -> Result<String, String> {
    let existing = read_text(path)?.ok_or(format!("{} does not exist", path.display()))?;
    match remove_grant(&existing, host).map_err(|e| format!("{}: {e}", path.display()))? {
        Some(text) => {
            write(path, &text)?;
            Ok(format!("removed {host} from {}", path.display()))
        }
        None => Err(format!("{host} is not listed in {}", path.display())),
    }
}

/// `--list`: the file, its enabled and parked hosts.
pub fn list(path: &Path) -> Result<String, String> {
    let Some(text) = read_text(path)? else {
        return Ok(format!(
            "{} does not exist; no host is granted (`wamcp hostgrants --add HOST` creates it)\n",
            path.display()
        ));
    };
    let grants = parse_grants(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = format!("{}\n", path.display());
    for host in &grants.hosts {
        out.push_str(&format!("  {host}\n"));
    }
    for host in &grants.parked {
        out.push_str(&format!("  {host} (disabled)\n"));
    }
    if grants.hosts.is_empty() && grants.parked.is_empty() {
        out.push_str("  (no hosts)\n");
    }
    Ok(out)
}

/// `--init`: a starter file; never replaces one.
pub fn init(path: &Path) -> Result<String, String> {
    if path.exists() {
        return Err(format!("{} already exists", path.display()));
    }
    write(path, &starter_file())?;
    Ok(format!("wrote {}", path.display()))
}

/// Replaces the file atomically, so a reader never sees half of it.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // The user's config folder may not exist yet on a first grant.
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut temp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::io::Write::write_all(&mut temp, text.as_bytes()).map_err(|e| e.to_string())?;
    temp.persist(path)
        .map(|_| ())
        .map_err(|e| format!("{}: {}", path.display(), e.error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_list_remove_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-allowed-hosts.json");
        assert_eq!(read(&path).unwrap(), Vec::<String>::new());
        assert!(list(&path).unwrap().contains("does not exist"));
        init(&path).unwrap();
        assert!(init(&path).is_err());
        add(&path, "Docs.Example.com", Some("guide")).unwrap();
        add(&path, "wiki.example.com", None).unwrap();
        assert_eq!(
            read(&path).unwrap(),
            ["docs.example.com", "wiki.example.com"]
        );
        assert_eq!(
            list(&path).unwrap(),
            format!(
                "{}\n  docs.example.com\n  wiki.example.com\n",
                path.display()
            )
        );
        remove(&path, "docs.example.com").unwrap();
        assert!(remove(&path, "docs.example.com").is_err());
        assert_eq!(read(&path).unwrap(), ["wiki.example.com"]);
        std::fs::write(&path, "{ broken").unwrap();
        assert!(read(&path).unwrap_err().contains("grants nothing"));
        assert!(
            add(&path, "x.com", None).is_err(),
            "a broken file is not overwritten"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ broken");
    }
}
