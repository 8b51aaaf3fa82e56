//! Write confinement: from a path argument to a resolved target inside a
//! writable root, or a typed refusal.
//!
//! Order matters and each step names the escape it closes:
//! 1. form and name rules on the raw text (device paths, `C:foo`, alternate
//!    data streams, reserved names, trailing dots) — Win32 would otherwise
//!    rewrite the name after we checked it;
//! 2. trust-file names on the path as written — creating one is the danger;
//! 3. resolution, component by component from the root: each existing
//!    component is canonicalised (symbolic links, junctions, 8.3 names, case)
//!    and `..` steps up from the *resolved* directory, so `link/..` cannot
//!    land beside the link's target's parent by string arithmetic; a
//!    dangling link is refused rather than written through; the part that
//!    does not exist yet must be plain names;
//! 4. containment of the resolved path in a resolved root, component by
//!    component — `C:\proj-evil` is not inside `C:\proj`;
//! 5. trust files again on the resolved path — a link named `notes.txt` may
//!    point at a config file.
//!
//! The write itself then re-checks the directory through an open handle
//! (`wamcp_platform::atomic`), closing the window between this check and the
//! write.

use crate::paths::{input_path, io_error};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::workspace::PathStyle;
use wamcp_policy::write_rules::{
    Refusal, agent_trust_file, check_component, is_protected_name, is_within, lexical,
    split_for_write,
};

/// Where writes may go.
pub struct WriteScope<'a> {
    /// Writable roots; each must exist (a missing root contains nothing).
    pub roots: &'a [PathBuf],
    /// Trust files in use wherever they live (config, grants), resolved.
    pub protected: &'a [PathBuf],
    /// An agent trust file (`.git/config`, `.mcp.json`...) the user approved
    /// writing in this call, resolved; every other one is refused.
    pub approved: Option<&'a Path>,
}

/// A checked destination.
#[derive(Debug)]
pub struct Target {
    /// The resolved path the bytes will be written to.
    pub path: PathBuf,
    /// Its directory, resolved; may not exist yet (see `missing_dirs`).
    pub dir: PathBuf,
    /// Directories to create, outermost first; all inside the same root.
    pub missing_dirs: Vec<PathBuf>,
    /// Whether a file exists at `path` now.
    pub exists: bool,
    /// Why writing it needs the user's approval, for agent trust files.
    pub guarded: Option<&'static str>,
}

const STYLE: PathStyle = PathStyle::native();

/// What resolution asks of the file system. The real one is the OS; tests
/// use a fake to model junctions and 8.3 short names, which Wine lacks.
pub trait FsView {
    /// The entry itself, not following a final link: `Ok(true)` for a
    /// directory or link, `Ok(false)` for a regular file.
    fn entry_is_dir_or_link(&self, path: &Path) -> std::io::Result<bool>;
    /// The fully resolved path (links, junctions, short names, case).
    fn canonical(&self, path: &Path) -> std::io::Result<PathBuf>;
    /// Following links: whether a directory exists there.
    fn is_dir(&self, path: &Path) -> bool;
    /// Following links: whether anything exists there.
    fn exists(&self, path: &Path) -> bool;
}

/// The operating system's view.
pub struct RealFs;

impl FsView for RealFs {
    fn entry_is_dir_or_link(&self, path: &Path) -> std::io::Result<bool> {
        std::fs::symlink_metadata(path).map(|m| !m.is_file())
    }
    fn canonical(&self, path: &Path) -> std::io::Result<PathBuf> {
        dunce::canonicalize(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}

/// Resolves `raw` (relative to `cwd`) to a target
/// inside `scope`, in the five steps above.
pub fn resolve_for_write(raw: &str, cwd: &Path, scope: &WriteScope) -> Result<Target, ToolError> {
    resolve_with(raw, cwd, scope, &RealFs)
}

/// Whether writing `raw` needs the user's approval: the resolved file and
/// the reason, for an agent trust file; `None` for an ordinary one. Errors
/// are the ones the write itself would give.
pub fn consent_needed(
    raw: &str,
    cwd: &Path,
    scope: &WriteScope,
) -> Result<Option<(PathBuf, &'static str)>, ToolError> {
    let target = locate(raw, cwd, scope, &RealFs)?;
    Ok(target.guarded.map(|why| (target.path, why)))
}

/// [`resolve_for_write`] against any [`FsView`].
pub fn resolve_with(
    raw: &str,
    cwd: &Path,
    scope: &WriteScope,
    fs: &dyn FsView,
) -> Result<Target, ToolError> {
    let target = locate(raw, cwd, scope, fs)?;
    if let Some(why) = target.guarded
        && scope.approved.is_none_or(|a| !same_path(a, &target.path))
    {
        return Err(ToolError::new(
            ErrorType::ProtectedPath,
            format!(
                "'{raw}' is {why}; writing it needs the user's approval, and they could not be asked \
                 (this client does not support elicitation)."
            ),
        )
        .with_path(raw)
        .recover("Ask the user to make this change by hand; do not write it another way."));
    }
    Ok(target)
}

fn same_path(a: &Path, b: &Path) -> bool {
    match STYLE {
        PathStyle::Windows => {
            a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase()
        }
        PathStyle::Unix => a == b,
    }
}

/// Resolution and every refusal except the approval of trust files.
fn locate(raw: &str, cwd: &Path, scope: &WriteScope, fs: &dyn FsView) -> Result<Target, ToolError> {
    // A write with no destination is refused before anything else: the
    // argument is what is wrong, and no path check should speak first.
    if raw.trim().is_empty() {
        return Err(ToolError::new(
            ErrorType::WritePathNotAllowed,
            "The destination path is empty.",
        )
        .recover("Pass the file to write, inside a writable root (see get_server_info)."));
    }
    let joined = input_path(raw, cwd)?;
    let parts = check_names_as_written(raw, &joined)?;
    let (resolved, tail) = resolve_existing(raw, &joined, fs)?;
    let Placement {
        path,
        dir,
        missing_dirs,
    } = place(resolved, &tail);
    let text = path.display().to_string();
    require_within_roots(raw, &joined, &text, scope)?;
    let resolved_parts = check_names_as_resolved(raw, &text, &path, scope)?;
    if fs.is_dir(&path) {
        return Err(
            ToolError::new(ErrorType::PathIsNotFile, format!("'{raw}' is a directory."))
                .with_path(raw),
        );
    }
    let exists = fs.exists(&path);
    // Judged on the text as given and as resolved: a link named `cfg` that
    // points into `.git` is `.git`.
    let guarded = agent_trust_file(&resolved_parts).or_else(|| agent_trust_file(&parts));
    Ok(Target {
        path,
        dir,
        missing_dirs,
        exists,
        guarded,
    })
}

/// Steps 1 and 2: the form and name rules on the raw text, then on the
/// path it joins to (`joined`), then the trust-file names as written.
/// Answers the components of `joined`.
fn check_names_as_written(raw: &str, joined: &Path) -> Result<Vec<String>, ToolError> {
    // The raw text first: joining `\x` or `C:x` to the working directory
    // would silently pick a drive, hiding that the argument is ambiguous.
    split_for_write(raw, STYLE).map_err(|r| refusal(raw, r))?;
    let shown = joined.display().to_string();
    let (_, parts) = split_for_write(&shown, STYLE).map_err(|r| refusal(raw, r))?;
    for part in &parts {
        check_component(part, STYLE).map_err(|r| refusal(raw, r))?;
    }
    if is_protected_name(&parts) {
        return Err(protected(raw));
    }
    Ok(parts)
}

/// Step 3: walks `joined` from its root, canonicalising each existing
/// component and stepping `..` up from the resolved directory. Answers the
/// resolved existing part and the names after it that do not exist yet.
fn resolve_existing(
    raw: &str,
    joined: &Path,
    fs: &dyn FsView,
) -> Result<(PathBuf, Vec<OsString>), ToolError> {
    let mut resolved = PathBuf::new();
    let mut tail: Vec<OsString> = Vec::new();
    let components: Vec<Component> = joined.components().collect();
    for (index, component) in components.iter().enumerate() {
        let last = index + 1 == components.len();
        match component {
            Component::Prefix(_) | Component::RootDir => resolved.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir if tail.is_empty() => {
                resolved.pop();
            }
            Component::ParentDir => {
                return Err(ToolError::new(
                    ErrorType::InvalidPath,
                    format!("'{raw}' climbs out of a directory that does not exist ('..' after a missing directory)."),
                )
                .with_path(raw));
            }
            Component::Normal(name) if !tail.is_empty() => tail.push(name.to_os_string()),
            Component::Normal(name) => {
                let candidate = resolved.join(name);
                match enter_existing(raw, &candidate, last, fs)? {
                    Some(canonical) => resolved = canonical,
                    None => tail.push(name.to_os_string()),
                }
            }
        }
    }
    Ok((resolved, tail))
}

/// One component of step 3: `candidate` resolved through any link,
/// junction or short name, or `None` when nothing exists there. Refuses a
/// file that is not `last` (it cannot contain the rest) and a dangling link.
fn enter_existing(
    raw: &str,
    candidate: &Path,
    last: bool,
    fs: &dyn FsView,
) -> Result<Option<PathBuf>, ToolError> {
    match fs.entry_is_dir_or_link(candidate) {
        Ok(dir_or_link) => {
            if !last && !dir_or_link {
                return Err(ToolError::new(
                    ErrorType::InvalidPath,
                    format!(
                        "'{}' is a file, so it cannot contain '{raw}'.",
                        candidate.display()
                    ),
                )
                .with_path(raw));
            }
            let canonical = fs.canonical(candidate).map_err(|_| {
                ToolError::new(
                    ErrorType::WritePathNotAllowed,
                    format!(
                        "'{}' is a link whose target does not exist; writing through it would create a file \
                         wherever it points.",
                        candidate.display()
                    ),
                )
                .with_path(raw)
                .recover("Write to the intended path directly.")
            })?;
            Ok(Some(canonical))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(raw, candidate, &e, ErrorType::WriteFailed)),
    }
}

/// Where a resolved write lands.
struct Placement {
    /// The destination file.
    path: PathBuf,
    /// Its directory.
    dir: PathBuf,
    /// Directories to create, outermost first.
    missing_dirs: Vec<PathBuf>,
}

/// The destination: the resolved existing part with the missing names
/// (`tail`) appended below it.
fn place(resolved: PathBuf, tail: &[OsString]) -> Placement {
    let dir_existing = if tail.is_empty() {
        resolved.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        resolved.clone()
    };
    let mut path = resolved;
    let mut missing_dirs = Vec::new();
    for (i, name) in tail.iter().enumerate() {
        path.push(name);
        if i + 1 < tail.len() {
            missing_dirs.push(path.clone());
        }
    }
    let dir = path.parent().map(Path::to_path_buf).unwrap_or(dir_existing);
    Placement {
        path,
        dir,
        missing_dirs,
    }
}

/// Step 4: refuses the resolved destination `text` unless it is inside a
/// writable root, compared component by component.
fn require_within_roots(
    raw: &str,
    written: &Path,
    text: &str,
    scope: &WriteScope,
) -> Result<(), ToolError> {
    if !scope
        .roots
        .iter()
        .any(|root| is_within(text, &root.display().to_string(), STYLE))
    {
        let roots: Vec<String> = scope
            .roots
            .iter()
            .map(|r| r.display().to_string())
            .collect();
        // Each fact once: the path in `path`, where it resolves only when
        // a link made it news, the roots only in `writable_roots`.
        let message = if same_path(&lexical(written), Path::new(text)) {
            "Outside the writable roots.".to_string()
        } else {
            format!("It leads to {text}, outside the writable roots.")
        };
        return Err(ToolError::new(ErrorType::WritePathNotAllowed, message)
            .with_path(raw)
            .detail("writable_roots", roots.clone())
            .recover(if roots.is_empty() {
                "None exists; the user can add one in WAMCP_PROJECT_ROOTS."
            } else {
                "Write inside writable_roots."
            }));
    }
    Ok(())
}

/// Step 5: trust files again, on the resolved destination `path` (`text`
/// as text): by name, and the server's own wherever they live. Answers the
/// components of `text`.
fn check_names_as_resolved(
    raw: &str,
    text: &str,
    path: &Path,
    scope: &WriteScope,
) -> Result<Vec<String>, ToolError> {
    let (_, resolved_parts) = split_for_write(text, STYLE).map_err(|r| refusal(raw, r))?;
    if is_protected_name(&resolved_parts) || scope.protected.iter().any(|p| same_path(p, path)) {
        return Err(protected(raw));
    }
    Ok(resolved_parts)
}

fn refusal(raw: &str, refusal: Refusal) -> ToolError {
    match refusal {
        Refusal::Form(why) | Refusal::Name(why) => ToolError::new(
            ErrorType::InvalidPath,
            format!("Cannot write '{raw}': {why}."),
        )
        .with_path(raw)
        .recover(
            "Use an ordinary absolute path, or one relative to the server's working directory.",
        ),
    }
}

fn protected(raw: &str) -> ToolError {
    ToolError::new(
        ErrorType::ProtectedPath,
        format!("'{raw}' is a server trust file (host grants or configuration); tools can never write one."),
    )
    .with_path(raw)
    .recover("Ask the user to edit it by hand if a change is really needed.")
}
