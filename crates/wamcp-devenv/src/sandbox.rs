//! `sandbox_run`: plan, and with the user's yes run, a command in WSL, the
//! project's Dev Container, or Windows Sandbox with a staged payload.
//!
//! A Windows Sandbox payload is read through folder handles
//! ([`wamcp_platform::held`]): the workspace folder is opened once, every
//! name is opened inside the folder handle it was listed from without
//! following links (junctions and every reparse point included), and what
//! an entry is comes from its open handle. Planning walks the tree that
//! way and only counts; staging walks it again the same way and copies
//! each file from the handle that was checked, so a folder swapped for a
//! link mid-way cannot bring anything from outside the project into the
//! bundle. An entry that cannot be read refuses the payload, the staged
//! tree must equal the approved plan, and a staging that fails removes
//! what it made.

use crate::audit_log::Entry;
use crate::capability::{Identity, identity};
use serde_json::{Value, json};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};
use wamcp_exec::{Progress, RunOutput, RunSpec};
use wamcp_platform::held::{self, HeldDir};
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::devenv::audit::{Event, Outcome};
use wamcp_policy::devenv::safety::Safety;
use wamcp_policy::devenv::sandbox::{
    Environment, MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH, MAX_PAYLOAD_ENTRIES, MAX_PAYLOAD_PATH_BYTES,
    devcontainer_argv, fold_case, name_problem, payload_paths, wsb, wsl_argv,
};

/// How long a WSL or Dev Container run may take.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// Bundles older than this are removed when another is staged.
pub const STALE_BUNDLE_AGE: Duration = Duration::from_secs(24 * 3600);
const TAIL_CHARS: usize = 8000;

/// What a checked payload entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A file, and its size in bytes.
    File(u64),
    /// A folder.
    Dir,
}

/// A name opened inside a held folder, with the handle to read it.
pub enum Node<D, F> {
    /// A folder, opened.
    Dir(D),
    /// A file with one name, opened, and its size in bytes.
    File(F, u64),
    /// A symbolic link, junction or other reparse point.
    Link,
    /// A FIFO, socket or device.
    Other,
    /// A file with more than one name: its bytes may be a file from
    /// outside the project, linked in.
    HardLinked,
    /// Another file system mounted here (it may hang, or be anything).
    Mount,
}

/// The file-system questions payload checking asks, by handle: each name
/// is opened inside the folder handle it was listed from, so a folder
/// swapped for a link while the tree is read cannot redirect the reader.
/// A trait so junctions and unreadable entries can be tested where Wine
/// cannot show them.
pub trait PayloadFs {
    /// An open folder, which names are opened inside.
    type Dir;
    /// An open file, read to copy it.
    type File: io::Read;
    /// Opens the (resolved) workspace folder.
    fn open_root(&self, path: &Path) -> io::Result<Self::Dir>;
    /// Opens `name` inside `dir` without following it.
    fn entry(&self, dir: &Self::Dir, name: &OsStr) -> io::Result<Node<Self::Dir, Self::File>>;
    /// The names in `dir`; an error past `limit`.
    fn names(&self, dir: &Self::Dir, limit: usize) -> io::Result<Vec<OsString>>;
    /// The folder's volume and file number.
    fn id(&self, dir: &Self::Dir) -> io::Result<(u64, u64)>;
}

/// The real file system.
pub struct RealFs;

impl PayloadFs for RealFs {
    type Dir = HeldDir;
    type File = std::fs::File;

    fn open_root(&self, path: &Path) -> io::Result<HeldDir> {
        HeldDir::open(path)
    }

    fn entry(&self, dir: &HeldDir, name: &OsStr) -> io::Result<Node<HeldDir, std::fs::File>> {
        let volume = dir.id()?.0;
        Ok(match dir.entry(name)? {
            held::Entry::Dir(d) if d.id()?.0 != volume => Node::Mount,
            held::Entry::Dir(d) => Node::Dir(d),
            held::Entry::File { file, .. } if held::file_id(&file)?.0 != volume => Node::Mount,
            held::Entry::File { links: 1, file } => {
                let len = file.metadata()?.len();
                Node::File(file, len)
            }
            held::Entry::File { .. } => Node::HardLinked,
            held::Entry::Link => Node::Link,
            held::Entry::Other => Node::Other,
        })
    }

    fn names(&self, dir: &HeldDir, limit: usize) -> io::Result<Vec<OsString>> {
        dir.names(limit)
    }

    fn id(&self, dir: &HeldDir) -> io::Result<(u64, u64)> {
        dir.id()
    }
}

/// A checked payload: every entry, relative to the workspace, in order,
/// and which folder the workspace was (a folder moved into its place
/// between the plan and the copy is another payload).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Payload {
    /// Every entry, relative to the workspace, in walk order.
    pub entries: Vec<(PathBuf, Kind)>,
    /// The files' total size, in bytes.
    pub bytes: u64,
    /// The workspace folder's volume and file number when it was checked.
    pub workspace_id: (u64, u64),
}

/// An accepted entry, as the walk hands it to its caller.
enum Found<'a, F> {
    Dir,
    File(&'a mut F, u64),
}

type Visit<'v, F> = dyn FnMut(&Path, Found<'_, F>) -> Result<(), String> + 'v;

/// Checks `paths` under `root` (resolved): no links, hard links or mounts,
/// and limits on entries, size and depth.
pub fn check_payload<P: PayloadFs>(
    root: &Path,
    paths: &[String],
    fs: &P,
) -> Result<Payload, String> {
    walk_payload(root, paths, fs, &mut |_, _| Ok(()))
}

/// Walks every payload path from one handle of the workspace folder,
/// handing each accepted entry to `visit` while its handle is open.
fn walk_payload<P: PayloadFs>(
    root: &Path,
    paths: &[String],
    fs: &P,
    visit: &mut Visit<'_, P::File>,
) -> Result<Payload, String> {
    let mut payload = Payload::default();
    let parsed = payload_paths(paths)?;
    let opened = |e: io::Error| {
        format!("the workspace folder cannot be opened ({e}); refused rather than guessed")
    };
    let top = Rc::new(fs.open_root(root).map_err(opened)?);
    payload.workspace_id = fs.id(&top).map_err(opened)?;
    for parts in parsed {
        let shown = parts.join("/");
        let mut dir = Rc::clone(&top);
        let mut relative = PathBuf::new();
        for (n, part) in parts.iter().enumerate() {
            relative.push(part);
            let last = n + 1 == parts.len();
            let problem =
                |what: &str| format!("payload path '{shown}': '{}' {what}", relative.display());
            match fs.entry(&dir, OsStr::new(part)) {
                Ok(Node::Dir(next)) if !last => dir = Rc::new(next),
                Ok(Node::Dir(folder)) => {
                    add(&mut payload, &relative, Kind::Dir)?;
                    visit(&relative, Found::Dir)?;
                    walk_folder(folder, &relative, fs, &mut payload, visit)?;
                }
                Ok(Node::File(mut file, len)) if last => {
                    add(&mut payload, &relative, Kind::File(len))?;
                    visit(&relative, Found::File(&mut file, len))?;
                }
                Ok(Node::File(..)) => return Err(problem("is a file, not a folder")),
                Ok(Node::HardLinked) => {
                    return Err(problem(
                        "has other hard links (its bytes may come from outside the project)",
                    ));
                }
                Ok(Node::Link) => return Err(problem("is a link or junction (not followed)")),
                Ok(Node::Other) => return Err(problem("is not a file or folder")),
                Ok(Node::Mount) => return Err(problem(MOUNTED)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(format!("payload path '{shown}' does not exist"));
                }
                Err(e) => {
                    return Err(problem(&format!(
                        "cannot be checked ({e}); refused rather than guessed"
                    )));
                }
            }
        }
    }
    Ok(payload)
}

fn too_many_entries() -> String {
    format!("the payload holds more than {MAX_PAYLOAD_ENTRIES} files and folders")
}

const MOUNTED: &str = "is another file system mounted there (not read)";

fn add(payload: &mut Payload, relative: &Path, kind: Kind) -> Result<(), String> {
    if let Kind::File(len) = kind {
        payload.bytes += len;
    }
    payload.entries.push((relative.to_path_buf(), kind));
    if payload.entries.len() > MAX_PAYLOAD_ENTRIES {
        return Err(too_many_entries());
    }
    if payload.bytes > MAX_PAYLOAD_BYTES {
        return Err(format!(
            "the payload is larger than {} MiB",
            MAX_PAYLOAD_BYTES >> 20
        ));
    }
    // Each entry's path is kept: a deep tree of long names must not make
    // one plan hold gigabytes.
    if relative.as_os_str().len() > MAX_PAYLOAD_PATH_BYTES {
        return Err(format!(
            "a path inside the payload is longer than {MAX_PAYLOAD_PATH_BYTES} bytes"
        ));
    }
    if relative.components().count() > MAX_PAYLOAD_DEPTH {
        return Err(format!(
            "the payload nests folders more than {MAX_PAYLOAD_DEPTH} deep"
        ));
    }
    Ok(())
}

/// Every entry under `folder`, depth first in name order, with an explicit
/// stack: a deep tree must not overflow the server's stack. A subfolder's
/// handle is closed once it is classified and reopened from its parent's
/// handle when its turn comes, so only the folders on the current path are
/// open (the depth limit keeps that under any descriptor limit). Each name
/// must reach Windows unchanged and differ from its siblings the way NTFS
/// compares names.
fn walk_folder<P: PayloadFs>(
    folder: P::Dir,
    relative: &Path,
    fs: &P,
    payload: &mut Payload,
    visit: &mut Visit<'_, P::File>,
) -> Result<(), String> {
    let mut pending: Vec<(Rc<P::Dir>, OsString, PathBuf)> = Vec::new();
    let mut next = Some((Rc::new(folder), relative.to_path_buf()));
    while let Some((dir, relative)) = next.take() {
        let room = MAX_PAYLOAD_ENTRIES.saturating_sub(payload.entries.len());
        let mut names = fs.names(&dir, room).map_err(|e| {
            if e.kind() == io::ErrorKind::QuotaExceeded {
                return too_many_entries();
            }
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
            check_name(&rel, &name, &mut seen)?;
            let problem = |what: &str| format!("'{}' inside the payload {what}", rel.display());
            match fs.entry(&dir, &name) {
                Ok(Node::Dir(_)) => {
                    add(payload, &rel, Kind::Dir)?;
                    visit(&rel, Found::Dir)?;
                    folders.push((Rc::clone(&dir), name, rel));
                }
                Ok(Node::File(mut file, len)) => {
                    add(payload, &rel, Kind::File(len))?;
                    visit(&rel, Found::File(&mut file, len))?;
                }
                Ok(Node::Link) => return Err(problem("is a link or junction")),
                Ok(Node::Other) => return Err(problem("is not a file or folder")),
                Ok(Node::Mount) => return Err(problem(MOUNTED)),
                Ok(Node::HardLinked) => {
                    return Err(problem(
                        "has other hard links (its bytes may come from outside the project)",
                    ));
                }
                Err(e) => {
                    return Err(problem(&format!(
                        "cannot be checked ({e}); refused rather than guessed"
                    )));
                }
            }
        }
        drop(dir);
        // Reversed onto the stack, so folders are taken in name order.
        pending.extend(folders.into_iter().rev());
        if let Some((parent, name, rel)) = pending.pop() {
            next = Some((Rc::new(reopen(fs, &parent, &name, &rel)?), rel));
        }
    }
    Ok(())
}

/// Refuses a name Windows would read differently, and one that is the
/// same as another name in its folder once case is set aside.
fn check_name(
    rel: &Path,
    name: &OsStr,
    seen: &mut std::collections::HashSet<String>,
) -> Result<(), String> {
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
    Ok(())
}

/// The folder `name` opened again from its `parent`, when it is still a
/// folder: one swapped for anything else since it was listed is refused.
fn reopen<P: PayloadFs>(
    fs: &P,
    parent: &P::Dir,
    name: &OsStr,
    rel: &Path,
) -> Result<P::Dir, String> {
    match fs.entry(parent, name) {
        Ok(Node::Dir(reopened)) => Ok(reopened),
        Ok(_) => Err(format!(
            "'{}' changed while the payload was read",
            rel.display()
        )),
        Err(e) => Err(format!(
            "'{}' cannot be checked ({e}); refused rather than guessed",
            rel.display()
        )),
    }
}

/// Copies the payload into a new bundle under `bundles` and writes its
/// `.wsb`; removes the bundle on any failure. Every file is read from the
/// handle the walk opened and checked, and each entry must be the next one
/// of the `planned` payload the user approved (the first difference stops
/// the copy). Nothing in the bundle is overwritten: two names that are one
/// to Windows (an 8.3 short name, a case the fold missed) fail the staging
/// instead of merging. The bundle is filled under a `staging-` name and
/// renamed to `bundle-` only when complete, so a server killed mid-copy
/// leaves nothing that looks ready. `cancelled` stops the copy between
/// entries. Sweeps both kinds past [`STALE_BUNDLE_AGE`] first.
pub fn stage(
    root: &Path,
    paths: &[String],
    planned: &Payload,
    command: &str,
    bundles: &Path,
    cancelled: &AtomicBool,
) -> Result<PathBuf, String> {
    sweep(bundles, STALE_BUNDLE_AGE);
    std::fs::create_dir_all(bundles)
        .map_err(|e| format!("cannot create {}: {e}", bundles.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(bundles)
        .map_err(|e| format!("cannot create a bundle in {}: {e}", bundles.display()))?;
    let name = staging
        .path()
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(STAGING_PREFIX))
        .map(str::to_string);
    let bundle = bundles.join(format!("{BUNDLE_PREFIX}{}", name.unwrap_or_default()));
    let filled = (|| -> Result<(), String> {
        let target = staging.path().join("share").join("payload");
        std::fs::create_dir_all(&target).map_err(|e| e.to_string())?;
        let mut next = planned.entries.iter();
        let staged = walk_payload(root, paths, &RealFs, &mut |relative, found| {
            if cancelled.load(Ordering::Relaxed) {
                return Err("the call was cancelled".into());
            }
            let kind = match &found {
                Found::Dir => Kind::Dir,
                Found::File(_, len) => Kind::File(*len),
            };
            if next.next() != Some(&(relative.to_path_buf(), kind)) {
                return Err(CHANGED.into());
            }
            copy_entry(&target, relative, found)
        })?;
        if staged != *planned {
            return Err(CHANGED.into());
        }
        let share = bundle.join("share");
        std::fs::write(
            staging.path().join("sandbox.wsb"),
            wsb(&share.display().to_string(), command),
        )
        .map_err(|e| e.to_string())
    })();
    if let Err(e) = filled {
        // Dropping the TempDir removes the partial bundle.
        return Err(format!("staging failed, nothing was launched: {e}"));
    }
    // Kept first: once renamed, the staging name may be someone else's.
    let kept = staging.keep();
    if let Err(e) = std::fs::rename(&kept, &bundle) {
        let _ = std::fs::remove_dir_all(&kept);
        return Err(format!("staging failed, nothing was launched: {e}"));
    }
    Ok(bundle)
}

const CHANGED: &str = "the payload changed since it was planned";

/// Raises its flag when dropped: with the future of a cancelled call.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
const STAGING_PREFIX: &str = "staging-";
const BUNDLE_PREFIX: &str = "bundle-";

/// Copies one walked entry under `target`; never replaces anything there.
fn copy_entry(
    target: &Path,
    relative: &Path,
    found: Found<'_, std::fs::File>,
) -> Result<(), String> {
    let to = target.join(relative);
    let failed = |e: io::Error| format!("{}: {e}", relative.display());
    // A path like `bin/tool.exe` names folders that are not entries.
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    match found {
        Found::Dir => std::fs::create_dir(&to).map_err(failed),
        Found::File(from, len) => {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&to)
                .map_err(failed)?;
            // No more than the size that was counted, even if it grows.
            let n = io::copy(&mut from.take(len), &mut out).map_err(failed)?;
            if n != len {
                return Err(format!("{} shrank while it was copied", relative.display()));
            }
            Ok(())
        }
    }
}

/// Removes bundles, and stagings a killed server left, older than `age`
/// (best effort).
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
        let name = entry.file_name();
        let ours = name
            .to_str()
            .is_some_and(|n| n.starts_with(BUNDLE_PREFIX) || n.starts_with(STAGING_PREFIX));
        if old && ours {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A `sandbox_run` decided before anything runs.
#[derive(Clone, Debug)]
pub struct SandboxPlan {
    /// The routed environment; never `auto`.
    pub environment: Environment,
    /// The workspace folder, resolved.
    pub project: PathBuf,
    /// The command to run inside the environment, as the call gave it.
    pub command: String,
    /// What starts on this machine (`wsl ...`,
    /// `devcontainer exec ...`, `WindowsSandbox.exe`).
    pub argv: Vec<String>,
    /// The file the argv's program resolves
    /// to; `None` when it is not installed.
    pub executable: Option<PathBuf>,
    /// That file's identity, which the run must still match after approval.
    pub identity: Option<Identity>,
    /// Why the route cannot run here, when it cannot.
    pub unavailable: Option<String>,
    /// The checked payload, for Windows Sandbox only.
    pub payload: Option<Payload>,
    /// The payload paths as the call gave them.
    pub payload_paths: Vec<String>,
    /// For WSL where `wsl.exe` exists: its state as checked while planning
    /// (`ready` with the distributions, `no_distribution`, or `unknown`).
    pub wsl: Option<Value>,
}

/// A WSL route's state from the snapshot's WSL probe, and why the route
/// cannot run when it cannot. A probe that failed is `unknown`, not
/// absent: `wsl.exe --list` fails both without WSL and with a broken one,
/// so the plan stands and the run will tell. Docker Desktop's own
/// distributions are not a Linux to run a project's command in.
pub fn wsl_readiness(found: Result<Option<Value>, String>) -> (Value, Option<String>) {
    let listed = match found {
        Ok(Some(listed)) => listed,
        Ok(None) => {
            return (
                json!({"state": "missing"}),
                Some("wsl.exe was not found".into()),
            );
        }
        Err(error) => return (json!({"state": "unknown", "error": error}), None),
    };
    let usable: Vec<&str> = listed["distributions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|d| !d.to_ascii_lowercase().starts_with("docker-desktop"))
        .collect();
    if usable.is_empty() {
        return (
            json!({"state": "no_distribution", "distributions": listed["distributions"]}),
            Some(
                "WSL has no Linux distribution to run the command in (Docker Desktop's own do not count); \
                 the user can add one with wsl --install -d Ubuntu"
                    .into(),
            ),
        );
    }
    (json!({"state": "ready", "distributions": usable}), None)
}

/// Whether the project has its own Dev Container configuration: a regular
/// file with one name, reached from the project folder's handle without a
/// link (a link or a second hard link could point the CLI at a folder
/// outside the project, which it would then mount). Opened the way payload
/// files are, so a lock another program holds on it cannot hang the check.
pub fn has_devcontainer_config(project: &Path) -> bool {
    let Ok(folder) = HeldDir::open(project) else {
        return false;
    };
    let single_file = |dir: &HeldDir, name: &str| {
        matches!(
            dir.entry(OsStr::new(name)),
            Ok(held::Entry::File { links: 1, .. })
        )
    };
    single_file(&folder, ".devcontainer.json")
        || matches!(
            folder.entry(OsStr::new(".devcontainer")),
            Ok(held::Entry::Dir(config)) if single_file(&config, "devcontainer.json")
        )
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
    /// Plans `command` in `environment` for the project `project`, with
    /// `wsl` or `devcontainer` found by `programs`. Payload rules run for
    /// real on every platform.
    pub fn new(
        environment: Environment,
        project: &Path,
        command: &str,
        paths: &[String],
        programs: &ProgramSearch,
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
            wsl: None,
        };
        if environment != Environment::WindowsSandbox && !paths.is_empty() {
            return Err("payload_paths are only for windows_sandbox (untrusted_windows)".into());
        }
        match environment {
            Environment::Wsl => {
                plan.argv = wsl_argv(&shown, command);
                plan.executable = if cfg!(windows) {
                    programs.find_program("wsl")
                } else {
                    None
                };
                if plan.executable.is_none() {
                    plan.unavailable = Some(if cfg!(windows) {
                        "wsl.exe was not found".into()
                    } else {
                        "WSL exists only on Windows".into()
                    });
                } else {
                    let system = crate::sources::System::new(programs.clone());
                    let (state, unavailable) = wsl_readiness(crate::snapshot::wsl(&system));
                    plan.wsl = Some(state);
                    plan.unavailable = unavailable;
                }
            }
            Environment::DevContainer => {
                plan.argv = devcontainer_argv(&shown, command);
                let config = has_devcontainer_config(project);
                plan.executable = programs.find_program("devcontainer");
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

    /// The plan as the tool shows it, with `status`.
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
        if let Some(wsl) = &self.wsl {
            view["wsl"] = wsl.clone();
        }
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

    /// The trail entry for this run, with a short fixed `detail`.
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
    /// The child's PATH comes from `programs`, made again after the user's
    /// answer.
    pub async fn execute(
        &self,
        programs: &ProgramSearch,
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
            return self.in_windows_sandbox(program, bundles, started).await;
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
            search: programs.clone(),
        };
        let not_started = |reason: String| {
            let mut view = self.view("failed");
            view["reason"] = Value::String(reason);
            (
                view,
                self.audit(Outcome::NotExecuted, Some(started), "not started"),
            )
        };
        if cfg!(windows) {
            spec.program = match wamcp_exec::command::windows_program(
                spec.program.clone(),
                &spec.args,
                programs,
            ) {
                Ok(p) => p,
                Err(e) => return not_started(e.message),
            };
        }
        match wamcp_exec::run_reporting(&spec, progress).await {
            Ok(out) => self.answer(&out, started),
            Err(e) => not_started(format!("could not start {}: {e}", self.argv[0])),
        }
    }

    /// Stages the payload and launches Windows Sandbox, off the protocol
    /// thread: copying up to 1 GiB must not hold it.
    async fn in_windows_sandbox(
        &self,
        program: &Path,
        bundles: Option<&Path>,
        started: Instant,
    ) -> (Value, Entry) {
        let (plan, program) = (self.clone(), program.to_path_buf());
        let bundles = bundles.map(Path::to_path_buf);
        // A cancelled call (its future dropped) stops the copy and the
        // launch; the blocking task would otherwise carry on unseen.
        let cancelled = CancelOnDrop(Arc::new(AtomicBool::new(false)));
        let flag = cancelled.0.clone();
        let launched = tokio::task::spawn_blocking(move || {
            plan.launch(&program, bundles.as_deref(), started, &flag)
        })
        .await;
        drop(cancelled);
        launched.unwrap_or_else(|e| {
            let mut view = self.view("failed");
            view["reason"] = Value::String(format!("staging stopped: {e}"));
            (
                view,
                self.audit(Outcome::NotExecuted, Some(started), "staging stopped"),
            )
        })
    }

    /// The answer and record for a finished WSL or Dev Container run.
    fn answer(&self, out: &RunOutput, started: Instant) -> (Value, Entry) {
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

    fn launch(
        &self,
        program: &Path,
        bundles: Option<&Path>,
        started: Instant,
        cancelled: &AtomicBool,
    ) -> (Value, Entry) {
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
            cancelled,
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
        if cancelled.load(Ordering::Relaxed) {
            let _ = std::fs::remove_dir_all(&bundle);
            let mut view = self.view("failed");
            view["reason"] = "the call was cancelled; nothing was launched".into();
            return (
                view,
                self.audit(Outcome::NotExecuted, Some(started), "cancelled"),
            );
        }
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
