//! `sandbox_run`: plan, and with the user's yes run, a command in WSL, the
//! project's Dev Container, or Windows Sandbox with a staged payload.
//!
//! A Windows Sandbox payload is checked on the real tree before anything
//! is copied: every component of every path is looked at without following
//! links (`lstat`; on Windows the reparse-point attribute, which junctions
//! and links carry), an entry whose metadata cannot be read refuses the
//! payload, and the tree is counted against the entry and byte limits.
//! The copy opens each file without following a final link, and the
//! staged bundle is checked again against the source after copying; a
//! staging that fails removes what it made.

use crate::audit_log::Entry;
use crate::capability::{Identity, identity};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
use wamcp_exec::{Progress, RunSpec};
use wamcp_policy::devenv::audit::{Event, Outcome};
use wamcp_policy::devenv::safety::Safety;
use wamcp_policy::devenv::sandbox::{
    Environment, MAX_PAYLOAD_BYTES, MAX_PAYLOAD_ENTRIES, devcontainer_argv, fold_case,
    name_problem, payload_paths, wsb, wsl_argv,
};

/// How long a WSL or Dev Container run may take.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// Bundles older than this are removed when another is staged.
pub const STALE_BUNDLE_AGE: Duration = Duration::from_secs(24 * 3600);
const TAIL_CHARS: usize = 8000;

/// What a directory entry is, seen without following it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File(u64),
    Dir,
    /// A symbolic link, junction or other reparse point.
    Link,
    /// A FIFO, socket or device.
    Other,
    /// A file with more than one name: its bytes may be a file from
    /// outside the project, linked in.
    HardLinked,
}

/// The file-system questions payload checking asks; a trait so junctions
/// and unreadable metadata can be tested where Wine cannot show them.
pub trait PayloadFs {
    fn kind(&self, path: &Path) -> io::Result<Kind>;
    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>>;
}

/// The real file system.
pub struct RealFs;

impl PayloadFs for RealFs {
    fn kind(&self, path: &Path) -> io::Result<Kind> {
        let meta = std::fs::symlink_metadata(path)?;
        #[cfg(windows)]
        {
            use std::os::windows::fs::MetadataExt;
            // Junctions and every other reparse point, not only symlinks.
            const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x400;
            if meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
                return Ok(Kind::Link);
            }
        }
        let t = meta.file_type();
        Ok(if t.is_symlink() {
            Kind::Link
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            match open_no_follow(path).and_then(|f| wamcp_platform::probe::hard_links(&f)) {
                Ok(1) => Kind::File(meta.len()),
                Ok(_) => Kind::HardLinked,
                Err(e) => return Err(e),
            }
        } else {
            Kind::Other
        })
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.file_name()))
            .collect()
    }
}

/// A checked payload: every entry, relative to the workspace, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Payload {
    pub entries: Vec<(PathBuf, Kind)>,
    pub bytes: u64,
}

/// Checks `paths` under `root` (resolved) against the seed's rules.
pub fn check_payload(root: &Path, paths: &[String], fs: &dyn PayloadFs) -> Result<Payload, String> {
    let mut payload = Payload::default();
    for parts in payload_paths(paths)? {
        let shown = parts.join("/");
        let mut at = root.to_path_buf();
        let mut relative = PathBuf::new();
        for (n, part) in parts.iter().enumerate() {
            at.push(part);
            relative.push(part);
            let last = n + 1 == parts.len();
            match fs.kind(&at) {
                Ok(Kind::Dir) if !last => {}
                Ok(kind @ (Kind::Dir | Kind::File(_))) if last => {
                    add(&mut payload, relative.clone(), kind)?;
                    if kind == Kind::Dir {
                        walk(&at, &relative, fs, &mut payload)?;
                    }
                }
                Ok(Kind::HardLinked) => {
                    return Err(format!(
                        "payload path '{shown}': '{}' has other hard links (its bytes may come from outside the project)",
                        relative.display()
                    ));
                }
                Ok(Kind::Link) => {
                    return Err(format!(
                        "payload path '{shown}': '{}' is a link or junction (not followed)",
                        relative.display()
                    ));
                }
                Ok(Kind::File(_)) => {
                    return Err(format!(
                        "payload path '{shown}': '{}' is a file, not a folder",
                        relative.display()
                    ));
                }
                Ok(_) => {
                    return Err(format!(
                        "payload path '{shown}': '{}' is not a file or folder",
                        relative.display()
                    ));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(format!("payload path '{shown}' does not exist"));
                }
                Err(e) => {
                    return Err(format!(
                        "payload path '{shown}': '{}' cannot be checked ({e}); refused rather than guessed",
                        relative.display()
                    ));
                }
            }
        }
    }
    Ok(payload)
}

fn add(payload: &mut Payload, relative: PathBuf, kind: Kind) -> Result<(), String> {
    if let Kind::File(len) = kind {
        payload.bytes += len;
    }
    payload.entries.push((relative, kind));
    if payload.entries.len() > MAX_PAYLOAD_ENTRIES {
        return Err(format!(
            "the payload holds more than {MAX_PAYLOAD_ENTRIES} files and folders"
        ));
    }
    if payload.bytes > MAX_PAYLOAD_BYTES {
        return Err(format!(
            "the payload is larger than {} MiB",
            MAX_PAYLOAD_BYTES >> 20
        ));
    }
    Ok(())
}

/// Every entry under `dir`, depth first in name order, with an explicit
/// stack: a tree 9,000 folders deep (well within the entry limit) must not
/// overflow the server's stack. Each name must reach Windows unchanged and
/// differ from its siblings the way NTFS compares names.
fn walk(
    dir: &Path,
    relative: &Path,
    fs: &dyn PayloadFs,
    payload: &mut Payload,
) -> Result<(), String> {
    let mut pending = vec![(dir.to_path_buf(), relative.to_path_buf())];
    while let Some((dir, relative)) = pending.pop() {
        let mut names = fs.list(&dir).map_err(|e| {
            format!(
                "'{}' cannot be listed ({e}); refused rather than guessed",
                relative.display()
            )
        })?;
        names.sort();
        let mut seen = std::collections::HashSet::new();
        let mut folders = Vec::new();
        for name in names {
            let rel = relative.join(&name);
            let text = name.to_string_lossy();
            if let Some(why) = name_problem(&text) {
                return Err(format!("'{}' inside the payload {why}", rel.display()));
            }
            if !seen.insert(fold_case(&text)) {
                return Err(format!(
                    "'{}' inside the payload has the same name as another entry to Windows (case aside)",
                    rel.display()
                ));
            }
            let path = dir.join(&name);
            match fs.kind(&path) {
                Ok(kind @ (Kind::Dir | Kind::File(_))) => {
                    add(payload, rel.clone(), kind)?;
                    if kind == Kind::Dir {
                        folders.push((path, rel));
                    }
                }
                Ok(Kind::Link) => {
                    return Err(format!(
                        "'{}' inside the payload is a link or junction",
                        rel.display()
                    ));
                }
                Ok(Kind::Other) => {
                    return Err(format!(
                        "'{}' inside the payload is not a file or folder",
                        rel.display()
                    ));
                }
                Ok(Kind::HardLinked) => {
                    return Err(format!(
                        "'{}' inside the payload has other hard links (its bytes may come from outside the project)",
                        rel.display()
                    ));
                }
                Err(e) => {
                    return Err(format!(
                        "'{}' cannot be checked ({e}); refused rather than guessed",
                        rel.display()
                    ));
                }
            }
        }
        // Reversed onto the stack, so folders are taken in name order.
        pending.extend(folders.into_iter().rev());
    }
    Ok(())
}

/// Opens a payload file for copying without following a final link.
fn open_no_follow(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_FLAG_OPEN_REPARSE_POINT: a link opens as itself, not its target.
        options.custom_flags(0x0020_0000);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file when opened"));
    }
    Ok(file)
}

/// Copies the payload into a new bundle under `bundles` and writes its
/// `.wsb`; removes the bundle on any failure. Sweeps bundles past
/// [`STALE_BUNDLE_AGE`] first.
pub fn stage(
    root: &Path,
    paths: &[String],
    payload: &Payload,
    command: &str,
    bundles: &Path,
) -> Result<PathBuf, String> {
    sweep(bundles, STALE_BUNDLE_AGE);
    std::fs::create_dir_all(bundles)
        .map_err(|e| format!("cannot create {}: {e}", bundles.display()))?;
    let bundle = tempfile::Builder::new()
        .prefix("bundle-")
        .tempdir_in(bundles)
        .map_err(|e| format!("cannot create a bundle in {}: {e}", bundles.display()))?;
    let copied = (|| -> Result<(), String> {
        let share = bundle.path().join("share");
        let target = share.join("payload");
        std::fs::create_dir_all(&target).map_err(|e| e.to_string())?;
        for (relative, kind) in &payload.entries {
            let to = target.join(relative);
            match kind {
                Kind::Dir => std::fs::create_dir_all(&to)
                    .map_err(|e| format!("{}: {e}", relative.display()))?,
                _ => {
                    let mut from = open_no_follow(&root.join(relative))
                        .map_err(|e| format!("{}: {e}", relative.display()))?;
                    // Checked on the handle that is copied, not the name.
                    if wamcp_platform::probe::hard_links(&from).map_err(|e| e.to_string())? != 1 {
                        return Err(format!("{} gained another hard link", relative.display()));
                    }
                    let mut out = std::fs::File::create(&to)
                        .map_err(|e| format!("{}: {e}", relative.display()))?;
                    io::copy(&mut from, &mut out)
                        .map_err(|e| format!("{}: {e}", relative.display()))?;
                }
            }
        }
        // The tree must still be what was checked: a link swapped in
        // during the copy would otherwise have brought its target along.
        if check_payload(root, paths, &RealFs)? != *payload {
            return Err("the payload changed while it was copied".into());
        }
        let config = wsb(&share.display().to_string(), command);
        std::fs::write(bundle.path().join("sandbox.wsb"), config).map_err(|e| e.to_string())
    })();
    match copied {
        Ok(()) => Ok(bundle.keep()),
        // Dropping the TempDir removes the partial bundle.
        Err(e) => Err(format!("staging failed, nothing was launched: {e}")),
    }
}

/// Removes bundles older than `age` (best effort).
pub fn sweep(bundles: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(bundles) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|d| d > age);
        if old && entry.file_name().to_string_lossy().starts_with("bundle-") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A `sandbox_run` decided before anything runs.
#[derive(Clone, Debug)]
pub struct SandboxPlan {
    pub environment: Environment,
    pub project: PathBuf,
    pub command: String,
    pub argv: Vec<String>,
    pub executable: Option<PathBuf>,
    pub identity: Option<Identity>,
    /// Why the route cannot run here, when it cannot.
    pub unavailable: Option<String>,
    pub payload: Option<Payload>,
    pub payload_paths: Vec<String>,
}

/// Whether the project has its own Dev Container configuration: a regular
/// file, reached without a link (a link could point the CLI at a folder
/// outside the project, which it would then mount).
pub fn has_devcontainer_config(project: &Path) -> bool {
    let not_link =
        |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink());
    // One name only: a hard link would bring another folder's config in.
    let regular = |p: &Path| {
        not_link(p)
            && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
            && open_no_follow(p)
                .and_then(|f| wamcp_platform::probe::hard_links(&f))
                .is_ok_and(|n| n == 1)
    };
    regular(&project.join(".devcontainer.json"))
        || (not_link(&project.join(".devcontainer"))
            && regular(&project.join(".devcontainer").join("devcontainer.json")))
}

/// Whether the plan's folder is still the folder it was: resolved, it is
/// itself (not replaced by a link while the user was asked).
pub fn still_in_place(folder: &Path) -> bool {
    dunce::canonicalize(folder).is_ok_and(|now| now == folder)
        && std::fs::symlink_metadata(folder).is_ok_and(|m| m.is_dir())
}

/// Windows Sandbox's program, where Windows has it.
fn windows_sandbox_exe() -> Option<PathBuf> {
    if !cfg!(windows) {
        return None;
    }
    let root =
        std::env::var_os("SystemRoot").map_or_else(|| PathBuf::from(r"C:\Windows"), PathBuf::from);
    let exe = root.join("System32").join("WindowsSandbox.exe");
    exe.is_file().then_some(exe)
}

impl SandboxPlan {
    /// Plans `command` in `environment` for the project `project`.
    /// Payload rules run for real on every platform.
    pub fn new(
        environment: Environment,
        project: &Path,
        command: &str,
        paths: &[String],
    ) -> Result<SandboxPlan, String> {
        let shown = project.display().to_string();
        let mut plan = SandboxPlan {
            environment,
            project: project.to_path_buf(),
            command: command.to_string(),
            argv: Vec::new(),
            executable: None,
            identity: None,
            unavailable: None,
            payload: None,
            payload_paths: paths.to_vec(),
        };
        if environment != Environment::WindowsSandbox && !paths.is_empty() {
            return Err("payload_paths are only for windows_sandbox (untrusted_windows)".into());
        }
        match environment {
            Environment::Wsl => {
                plan.argv = wsl_argv(&shown, command);
                plan.executable = if cfg!(windows) {
                    wamcp_platform::search_path::find_program("wsl")
                } else {
                    None
                };
                if plan.executable.is_none() {
                    plan.unavailable = Some(if cfg!(windows) {
                        "wsl.exe was not found".into()
                    } else {
                        "WSL exists only on Windows".into()
                    });
                }
            }
            Environment::DevContainer => {
                plan.argv = devcontainer_argv(&shown, command);
                let config = has_devcontainer_config(project);
                plan.executable = wamcp_platform::search_path::find_program("devcontainer");
                plan.unavailable = if !config {
                    Some(
                        "the project has no .devcontainer/devcontainer.json or .devcontainer.json"
                            .into(),
                    )
                } else if plan.executable.is_none() {
                    Some("the devcontainer CLI was not found on PATH (npm install -g @devcontainers/cli)".into())
                } else {
                    None
                };
            }
            Environment::WindowsSandbox => {
                if paths.is_empty() {
                    return Err("windows_sandbox needs payload_paths: the files the command needs, relative to the workspace folder".into());
                }
                plan.payload = Some(check_payload(project, paths, &RealFs)?);
                plan.executable = windows_sandbox_exe();
                plan.argv = vec!["WindowsSandbox.exe".into(), r"<bundle>\sandbox.wsb".into()];
                if plan.executable.is_none() {
                    plan.unavailable = Some(if cfg!(windows) {
                        "Windows Sandbox is not enabled (the optional feature Containers-DisposableClientVM)".into()
                    } else {
                        "Windows Sandbox exists only on Windows".into()
                    });
                }
            }
            Environment::Auto => return Err("the environment must be routed first".into()),
        }
        plan.identity = plan.executable.as_ref().and_then(|p| identity(p).ok());
        Ok(plan)
    }

    pub fn view(&self, status: &str) -> Value {
        let mut view = json!({
            "status": status,
            "environment": self.environment.name(),
            "workspace_folder": self.project.display().to_string(),
            "argv": self.argv,
            "executable": self.executable.as_ref().map(|p| p.display().to_string()),
            "executable_identity_kind": self.identity.as_ref().map(|i| i.kind),
            "executable_identity_sha256": self.identity.as_ref().map(|i| i.sha256.clone()),
            "safety": Safety::ApprovalRequired,
            "reason": self.unavailable,
        });
        if let Some(payload) = &self.payload {
            view["payload"] = json!({
                "paths": self.payload_paths,
                "entries": payload.entries.len(),
                "bytes": payload.bytes,
                "mapped_to": r"C:\WDAShare\payload (read-only)",
                "networking": "disabled",
                "clipboard": "disabled",
            });
            view["wsb_preview"] = Value::String(wsb(r"<bundle>\share", &self.command));
        }
        view
    }

    pub fn audit(&self, outcome: Outcome, started: Option<Instant>, detail: &str) -> Entry {
        Entry {
            tool: "sandbox_run",
            subject: Some(self.environment.name().to_string()),
            safety: Some(Safety::ApprovalRequired),
            event: Event::Execution,
            outcome,
            duration: started.map_or(Duration::ZERO, |s| s.elapsed()),
            detail: Some(detail.to_string()),
        }
    }

    /// Runs the approved plan: WSL and Dev Container to completion, Windows
    /// Sandbox staged and launched (its result is not observable from here).
    pub async fn execute(
        &self,
        bundles: Option<&Path>,
        progress: Option<Progress<'_>>,
    ) -> (Value, Entry) {
        let started = Instant::now();
        let Some(program) = &self.executable else {
            return (
                self.view("unavailable"),
                self.audit(Outcome::NotExecuted, None, "unavailable"),
            );
        };
        if self.environment == Environment::WindowsSandbox {
            return self.launch(program, bundles, started);
        }
        let mut spec = RunSpec {
            program: program.display().to_string(),
            args: self.argv[1..].to_vec(),
            env: Vec::new(),
            cwd: self.project.clone(),
            timeout: RUN_TIMEOUT,
            keep_head: 0,
            keep_tail: TAIL_CHARS * 4,
            confinement: None,
        };
        if cfg!(windows) {
            spec.program =
                match wamcp_exec::command::windows_program(spec.program.clone(), &spec.args) {
                    Ok(p) => p,
                    Err(e) => {
                        let mut view = self.view("failed");
                        view["reason"] = Value::String(e.message);
                        return (
                            view,
                            self.audit(Outcome::NotExecuted, Some(started), "not started"),
                        );
                    }
                };
        }
        let out = match wamcp_exec::run_reporting(&spec, progress).await {
            Ok(out) => out,
            Err(e) => {
                let mut view = self.view("failed");
                view["reason"] = Value::String(format!("could not start {}: {e}", self.argv[0]));
                return (
                    view,
                    self.audit(Outcome::NotExecuted, Some(started), "not started"),
                );
            }
        };
        let outcome = Outcome::of_run(out.exit_code, out.timed_out);
        let status = match outcome {
            Outcome::Succeeded => "completed",
            Outcome::Failed => "failed",
            _ => "unknown",
        };
        let tail = |t: String| -> String {
            let n = t.chars().count();
            t.chars().skip(n.saturating_sub(TAIL_CHARS)).collect()
        };
        let mut view = self.view(status);
        view["exit_code"] = json!(out.exit_code);
        view["timed_out"] = json!(out.timed_out);
        view["stdout_tail"] = Value::String(tail(out.stdout.render()));
        view["stderr_tail"] = Value::String(tail(out.stderr.render()));
        let detail = match (out.timed_out, out.exit_code) {
            (true, _) => "timed out".to_string(),
            (false, Some(c)) => format!("exit code {c}"),
            (false, None) => "killed".to_string(),
        };
        (view, self.audit(outcome, Some(started), &detail))
    }

    fn launch(&self, program: &Path, bundles: Option<&Path>, started: Instant) -> (Value, Entry) {
        let (Some(bundles), Some(payload)) = (bundles, &self.payload) else {
            let mut view = self.view("failed");
            view["reason"] = "there is no per-user data directory to stage the payload in".into();
            return (view, self.audit(Outcome::NotExecuted, None, "not staged"));
        };
        let bundle = match stage(
            &self.project,
            &self.payload_paths,
            payload,
            &self.command,
            bundles,
        ) {
            Ok(b) => b,
            Err(e) => {
                let mut view = self.view("failed");
                view["reason"] = Value::String(e);
                return (
                    view,
                    self.audit(Outcome::NotExecuted, Some(started), "staging failed"),
                );
            }
        };
        let config = bundle.join("sandbox.wsb");
        let spawned = std::process::Command::new(program)
            .arg(&config)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        match spawned {
            Ok(_) => {
                let mut view = self.view("launched");
                view["cleanup_path"] = Value::String(bundle.display().to_string());
                view["note"] = "Windows Sandbox was started; whether the command succeeded inside it is not known \
                                from here. Remove cleanup_path when done (bundles older than 24 h are removed)."
                    .into();
                (
                    view,
                    self.audit(Outcome::Unknown, Some(started), "launched"),
                )
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&bundle);
                let mut view = self.view("failed");
                view["reason"] = Value::String(format!("could not start Windows Sandbox: {e}"));
                (
                    view,
                    self.audit(Outcome::NotExecuted, Some(started), "not started"),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests;
