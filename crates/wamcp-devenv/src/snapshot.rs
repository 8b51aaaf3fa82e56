//! `env_inspect`: what this machine has for development, as evidence.
//!
//! Every fact is tri-state. `true` was observed, `false` was observed
//! absent, `null` means the probe could not tell — and then the reason is in
//! `errors` and the snapshot is `degraded`. The shape never depends on what
//! failed: the same keys for the same platform, whatever the answers, so a
//! consumer never mistakes a missing key for an absence. Nothing personal
//! is collected (no user or domain name, no git identity).

use crate::installs::{is_app_alias, is_store_python_stub};
use crate::sources::{RegValue, Sources};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use wamcp_policy::devenv::audit::rfc3339;

/// How long a snapshot is served from the cache.
pub const CACHE_TTL: Duration = Duration::from_secs(300);

/// Facts being collected.
#[derive(Default)]
struct Facts {
    availability: Map<String, Value>,
    probe_states: Map<String, Value>,
    details: Map<String, Value>,
    errors: Vec<Value>,
}

impl Facts {
    /// `Ok(Some(detail))` observed present, `Ok(None)` observed absent,
    /// `Err` not established.
    fn record(&mut self, key: &str, found: Result<Option<Value>, String>) {
        let (available, state) = match found {
            Ok(Some(detail)) => {
                if !detail.is_null() {
                    self.details.insert(key.into(), detail);
                }
                (Value::Bool(true), "available")
            }
            Ok(None) => (Value::Bool(false), "missing"),
            Err(error) => {
                self.errors.push(json!({"probe": key, "error": error}));
                (Value::Null, "unknown")
            }
        };
        self.availability.insert(key.into(), available);
        self.probe_states.insert(key.into(), state.into());
    }

    fn program(&mut self, sources: &dyn Sources, key: &str, names: &[&str]) {
        let mut stub = None;
        let found = names.iter().find_map(|n| {
            let path = sources.program(n)?;
            if is_store_python_stub(sources, &path) {
                stub.get_or_insert(path);
                return None;
            }
            Some((n, path))
        });
        if found.is_none()
            && let Some(stub) = stub
        {
            // Not Python: the Store's stand-in opens the Store instead.
            self.details.insert(
                key.into(),
                json!({"store_stub": stub.display().to_string(),
                       "note": "the Microsoft Store's python stand-in, not Python: it opens the Store"}),
            );
        }
        self.record(
            key,
            Ok(found.map(|(name, path)| {
                let mut detail = json!({"program": name, "path": path.display().to_string()});
                // The Microsoft Store's stand-ins for python and winget live
                // here: a zero-byte alias, which may open the Store instead.
                if is_app_alias(&path) {
                    detail["app_execution_alias"] = Value::Bool(true);
                }
                detail
            })),
        );
    }
}

const RUNTIMES: [(&str, &[&str]); 6] = [
    ("runtime.python", &["python3", "python", "py"]),
    ("runtime.node", &["node"]),
    ("runtime.dotnet", &["dotnet"]),
    ("runtime.java", &["java"]),
    ("runtime.go", &["go"]),
    ("runtime.rust", &["cargo"]),
];

/// Collects a snapshot for this platform.
pub fn collect(sources: &dyn Sources) -> Value {
    if cfg!(windows) {
        windows(sources)
    } else {
        unix(sources)
    }
}

fn finish(platform: &str, os: Value, facts: Facts) -> Value {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    json!({
        "status": if facts.errors.is_empty() { "ok" } else { "degraded" },
        "platform": platform,
        "captured_at": rfc3339(now),
        "cache_ttl_seconds": CACHE_TTL.as_secs(),
        "os": os,
        "availability": facts.availability,
        "probe_states": facts.probe_states,
        "details": facts.details,
        "errors": facts.errors,
    })
}

/// The Windows snapshot (callable anywhere, so its logic is tested with a
/// fake everywhere).
pub fn windows(sources: &dyn Sources) -> Value {
    let mut facts = Facts::default();
    let os = windows_os(sources, &mut facts);
    for (key, names) in RUNTIMES {
        facts.program(sources, key, names);
    }
    facts.program(sources, "tool.git", &["git"]);
    for (key, name) in [
        ("package_manager.winget", "winget"),
        ("package_manager.choco", "choco"),
        ("package_manager.scoop", "scoop"),
        // The Dev Container route needs both.
        ("container.docker", "docker"),
        ("container.podman", "podman"),
        ("devcontainer_cli", "devcontainer"),
    ] {
        facts.program(sources, key, &[name]);
    }
    facts.record("dev_drive", dev_drive(sources));
    facts.record("visual_studio", visual_studio(sources));
    facts.record("windows_sdk", windows_sdks(sources));
    facts.record("wsl", wsl(sources));
    for (key, feature) in [
        ("windows_sandbox", "Containers-DisposableClientVM"),
        ("hyper_v", "Microsoft-Hyper-V-All"),
    ] {
        facts.record(key, optional_feature(sources, feature));
    }
    facts.record(
        "developer_mode",
        switch(
            sources,
            r"SOFTWARE\Microsoft\Windows\CurrentVersion\AppModelUnlock",
            "AllowDevelopmentWithoutDevLicense",
        ),
    );
    facts.record(
        "long_paths",
        switch(
            sources,
            r"SYSTEM\CurrentControlSet\Control\FileSystem",
            "LongPathsEnabled",
        ),
    );
    finish("windows", os, facts)
}

const CURRENT_VERSION: &str = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";

fn windows_os(sources: &dyn Sources, facts: &mut Facts) -> Value {
    let mut os = json!({
        "name": null, "version": null, "build": null, "edition": null,
        "display_version": null, "architecture": null,
    });
    match sources.operating_system() {
        Ok(row) => {
            let text = |s: String| {
                if s.is_empty() {
                    Value::Null
                } else {
                    Value::String(s)
                }
            };
            os["name"] = text(row.caption);
            os["version"] = text(row.version);
            os["build"] = text(row.build);
            os["architecture"] = text(row.architecture);
        }
        Err(e) => facts.errors.push(json!({"probe": "os", "error": e})),
    }
    for (field, value) in [
        ("edition", "EditionID"),
        ("display_version", "DisplayVersion"),
    ] {
        match sources.machine_value(CURRENT_VERSION, value) {
            Ok(Some(RegValue::Text(t))) => os[field] = Value::String(t),
            // Older builds have no DisplayVersion: nothing to report.
            Ok(_) => {}
            Err(e) => facts
                .errors
                .push(json!({"probe": format!("os.{field}"), "error": e})),
        }
    }
    os
}

/// The Dev Drives by letter; none is an observed absence.
fn dev_drive(sources: &dyn Sources) -> Result<Option<Value>, String> {
    let volumes = sources.dev_drives()?;
    Ok((!volumes.is_empty()).then(|| json!({"volumes": volumes})))
}

/// A DWORD switch: 1 on; 0 or not set off.
fn switch(sources: &dyn Sources, key: &str, value: &str) -> Result<Option<Value>, String> {
    match sources.machine_value(key, value)? {
        Some(RegValue::Number(n)) if n != 0 => Ok(Some(Value::Null)),
        Some(RegValue::Number(_)) | None => Ok(None),
        Some(RegValue::Text(t)) => Err(format!("{key}\\{value} holds text '{t}', not a number")),
    }
}

/// WMI's install state: 1 enabled; 2 disabled and 3 absent are both "not
/// available"; anything else, or no row, is not established (Windows Home
/// lists no such feature, and neither does a WMI without feature data).
fn optional_feature(sources: &dyn Sources, name: &str) -> Result<Option<Value>, String> {
    match sources.optional_feature(name)? {
        Some(1) => Ok(Some(json!({"feature": name, "install_state": 1}))),
        Some(2 | 3) => Ok(None),
        Some(state) => Err(format!("{name}: install state {state} (unknown)")),
        None => Err(format!("WMI lists no optional feature '{name}'")),
    }
}

fn system_root(sources: &dyn Sources) -> PathBuf {
    match sources.machine_value(CURRENT_VERSION, "SystemRoot") {
        Ok(Some(RegValue::Text(root))) => PathBuf::from(root),
        _ => PathBuf::from(r"C:\Windows"),
    }
}

fn program_files_x86(sources: &dyn Sources) -> PathBuf {
    match sources.machine_value(
        r"SOFTWARE\Microsoft\Windows\CurrentVersion",
        "ProgramFilesDir (x86)",
    ) {
        Ok(Some(RegValue::Text(dir))) => PathBuf::from(dir),
        _ => PathBuf::from(r"C:\Program Files (x86)"),
    }
}

/// Visual Studio 2017 and later, through the installer's `vswhere`: no
/// installer means none is installed.
fn visual_studio(sources: &dyn Sources) -> Result<Option<Value>, String> {
    let vswhere = program_files_x86(sources)
        .join("Microsoft Visual Studio")
        .join("Installer")
        .join("vswhere.exe");
    if !sources
        .file_exists(&vswhere)
        .map_err(|e| format!("{}: {e}", vswhere.display()))?
    {
        return Ok(None);
    }
    if !sources.trusted_program(&vswhere) {
        return Err(format!(
            "{} lies where the agent can write; it is not run",
            vswhere.display()
        ));
    }
    let out = sources.output(
        &vswhere,
        &[
            "-all",
            "-products",
            "*",
            "-format",
            "json",
            "-utf8",
            "-nologo",
        ],
        Duration::from_secs(15),
    )?;
    if out.code != Some(0) {
        return Err(format!("vswhere exited with {:?}", out.code));
    }
    let list: Vec<Value> = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("vswhere printed something other than its JSON list: {e}"))?;
    let instances: Vec<Value> = list
        .iter()
        .map(|i| {
            json!({
                "name": i["displayName"],
                "version": i["installationVersion"],
                "path": i["installationPath"],
                "product": i["productId"],
            })
        })
        .collect();
    Ok((!instances.is_empty()).then(|| json!({"instances": instances})))
}

fn windows_sdks(sources: &dyn Sources) -> Result<Option<Value>, String> {
    const ROOTS: &str = r"SOFTWARE\Microsoft\Windows Kits\Installed Roots";
    let Some(keys) = sources.machine_subkeys(ROOTS)? else {
        return Ok(None);
    };
    let mut versions: Vec<String> = keys.into_iter().filter(|k| k.starts_with("10.")).collect();
    versions.sort();
    if versions.is_empty() {
        return Ok(None);
    }
    let root = match sources.machine_value(ROOTS, "KitsRoot10")? {
        Some(RegValue::Text(t)) => Value::String(t),
        _ => Value::Null,
    };
    Ok(Some(json!({"versions": versions, "root": root})))
}

/// WSL: `wsl.exe --list --quiet` answers the installed distributions (in
/// UTF-16). No `wsl.exe` means no WSL; one that fails says nothing certain
/// (it fails both when WSL is not installed and when it is broken).
pub(crate) fn wsl(sources: &dyn Sources) -> Result<Option<Value>, String> {
    let wsl = system_root(sources).join("System32").join("wsl.exe");
    if !sources
        .file_exists(&wsl)
        .map_err(|e| format!("{}: {e}", wsl.display()))?
    {
        return Ok(None);
    }
    let out = sources.output(&wsl, &["--list", "--quiet"], Duration::from_secs(10))?;
    let text = utf16_or_utf8(&out.stdout);
    if out.code != Some(0) {
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        return Err(format!(
            "wsl.exe --list exited with {:?}: {first}",
            out.code
        ));
    }
    let distributions: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    Ok(Some(json!({"distributions": distributions})))
}

/// `wsl.exe` writes UTF-16LE to a pipe; newer builds honour `WSL_UTF8`.
fn utf16_or_utf8(bytes: &[u8]) -> String {
    let looks_utf16 = bytes.len() >= 2
        && bytes.len().is_multiple_of(2)
        && bytes.iter().skip(1).step_by(2).all(|&b| b == 0);
    if looks_utf16 {
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .filter(|&u| u != 0xFEFF)
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// The Linux (and other Unix) snapshot.
pub fn unix(sources: &dyn Sources) -> Value {
    let mut facts = Facts::default();
    let mut os = json!({
        "name": null, "id": null, "version": null, "kernel": null,
        "architecture": std::env::consts::ARCH,
    });
    match sources.text_file(Path::new("/etc/os-release")) {
        Ok(text) => {
            let field = |name: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
                    .map(|v| Value::String(v.trim().trim_matches('"').to_string()))
                    .unwrap_or(Value::Null)
            };
            os["name"] = field("PRETTY_NAME");
            os["id"] = field("ID");
            os["version"] = field("VERSION_ID");
        }
        Err(e) => facts
            .errors
            .push(json!({"probe": "os", "error": format!("/etc/os-release: {e}")})),
    }
    match sources.text_file(Path::new("/proc/sys/kernel/osrelease")) {
        Ok(text) => os["kernel"] = Value::String(text.trim().to_string()),
        Err(e) => facts
            .errors
            .push(json!({"probe": "os.kernel", "error": e.to_string()})),
    }
    for (key, names) in RUNTIMES {
        facts.program(sources, key, names);
    }
    facts.program(sources, "tool.git", &["git"]);
    for (key, name) in [
        ("package_manager.apt", "apt-get"),
        ("package_manager.dnf", "dnf"),
        ("package_manager.brew", "brew"),
        ("container.docker", "docker"),
        ("container.podman", "podman"),
        ("devcontainer_cli", "devcontainer"),
    ] {
        facts.program(sources, key, &[name]);
    }
    finish(std::env::consts::OS, os, facts)
}

/// The last snapshot, served for [`CACHE_TTL`] exactly as it was returned.
#[derive(Default)]
pub struct Cache(Mutex<Option<(Instant, Value)>>);

impl Cache {
    /// The cached snapshot when fresh and not `force`d, else a new one
    /// (kept for next time).
    pub fn get(&self, force: bool, collect: impl FnOnce() -> Value) -> Value {
        if !force
            && let Some((at, value)) = &*self.0.lock().unwrap_or_else(|e| e.into_inner())
            && at.elapsed() < CACHE_TTL
        {
            return value.clone();
        }
        let fresh = collect();
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), fresh.clone()));
        fresh
    }

    /// Forgets the snapshot (a package was installed, or tried to be).
    pub fn invalidate(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests;
