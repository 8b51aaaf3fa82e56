//! The `PATH` a child process should search.
//!
//! On Windows a server started before a toolchain was installed still has
//! its old `PATH`; the installer only changed the registry. So each command
//! gets the server's `PATH` followed by the machine and user entries from
//! the registry that it lacks, expanded (`%SystemRoot%\system32`). Elsewhere
//! the environment is already the truth.
//!
//! Programs are never looked up in a directory the agent can write: a
//! relative entry (it names the command's own working directory), or one
//! inside a writable root or cache (an activated `.venv/bin`, a
//! `node_modules/.bin`). A file planted there would otherwise pose as the
//! allowed program whose name it borrows, and the GPU probes would start it
//! outside any sandbox.

use crate::paths::resolve_lenient;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// How programs are looked up for what the server starts: the child's
/// `PATH` without the directories the agent can write. A value the server
/// makes from its places (its writable roots, every client root it ever
/// took, the caches and the system's writable places) and hands to each
/// caller, so no lookup depends on process-wide state.
#[derive(Clone, Debug, Default)]
pub struct ProgramSearch {
    /// Directories (resolved) whose programs are never looked up by name.
    distrusted: Vec<PathBuf>,
    /// The project's own program folders (`node_modules/.bin`, a `.venv`'s
    /// `bin`), searched first: set only for a command that runs confined
    /// without network, where a program the agent wrote can do no more
    /// than the agent's own script.
    local: Vec<PathBuf>,
}

impl ProgramSearch {
    /// A search that never finds a program in `distrusted` (resolved) or
    /// below it. The default distrusts only relative `PATH` entries.
    pub fn distrusting(distrusted: Vec<PathBuf>) -> ProgramSearch {
        ProgramSearch {
            distrusted,
            local: Vec::new(),
        }
    }

    /// This search with the project's own program folders `local` searched
    /// first and put first on the child's `PATH`.
    pub fn with_local(mut self, local: Vec<PathBuf>) -> ProgramSearch {
        self.local = local;
        self
    }

    /// The `PATH` for a child: the current one, plus registry entries it
    /// lacks, without entries the agent could have written programs into.
    pub fn child_path(&self) -> Option<OsString> {
        let current = std::env::var_os("PATH").unwrap_or_default();
        #[cfg(windows)]
        let extra = registry::machine_and_user_path();
        #[cfg(not(windows))]
        let extra: Vec<OsString> = Vec::new();
        let merged = merge(&current, &extra)?;
        let kept: Vec<PathBuf> = self
            .local
            .iter()
            .cloned()
            .chain(std::env::split_paths(&merged).filter(|dir| is_trusted(dir, &self.distrusted)))
            .collect();
        std::env::join_paths(kept).ok()
    }

    /// Whether the program file `path` (absolute) lies outside every
    /// directory the agent can write, judged like a `PATH` entry: a catalog
    /// that names `/proj/.venv/bin/ruff` would otherwise run whatever the
    /// agent last wrote there.
    pub fn is_trusted_program(&self, path: &Path) -> bool {
        path.parent()
            .is_some_and(|dir| is_trusted(dir, &self.distrusted))
    }

    /// Whether the program file `path` (absolute), named by the user or a
    /// catalog rather than found on `PATH`, may be started: it lies outside
    /// every directory the agent can write, and so does the file a link
    /// there leads to.
    pub fn is_trusted_file(&self, path: &Path) -> bool {
        self.is_trusted_program(path) && self.lands_outside_writable(path)
    }

    /// Where `name` would be found on the child `PATH`: directory by
    /// directory, and on Windows each directory tried with the extensions
    /// of [`program_file_names`] (`npm` finds `npm.cmd`, never the
    /// extension-less shell script beside it).
    pub fn find_program(&self, name: &str) -> Option<PathBuf> {
        let path = self.child_path()?;
        let names = if cfg!(windows) {
            program_file_names(name, std::env::var("PATHEXT").ok().as_deref())
        } else {
            vec![name.to_string()]
        };
        std::env::split_paths(&path)
            .filter(|dir| !dir.as_os_str().is_empty())
            .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
            .find(|candidate| {
                is_program(candidate)
                    && (self.lands_outside_writable(candidate)
                        || candidate
                            .parent()
                            .is_some_and(|d| self.local.iter().any(|l| l == d)))
            })
    }

    /// A program file in a trusted directory may itself be a link into a
    /// writable root: what would start is the target, which the agent
    /// writes.
    fn lands_outside_writable(&self, candidate: &Path) -> bool {
        match std::fs::canonicalize(candidate) {
            Ok(target) => self.is_trusted_program(&target),
            Err(_) => false,
        }
    }

    /// The program to start for `program` on Windows: an absolute path as
    /// given, else the file [`ProgramSearch::find_program`] finds. The
    /// standard library would only add `.exe`, and `CreateProcess` searches
    /// the server's `PATH`, not the child's, so both are given the file
    /// itself.
    pub fn resolve_program(&self, program: &str) -> Option<PathBuf> {
        let path = Path::new(program);
        if path.is_absolute() {
            return Some(path.to_path_buf());
        }
        self.find_program(program)
    }
}

/// An absolute directory outside every distrusted one (compared as written
/// and resolved, and without case on Windows). One that cannot be resolved
/// is not trusted: a path the resolver gives up on (too long, a loop) may
/// still lead into a root for `execve`. Compared by component prefix on
/// the folded form rather than with [`crate::paths::inside`], which
/// answers "no" for a form it refuses to judge: here that would trust it.
fn is_trusted(dir: &Path, distrusted: &[PathBuf]) -> bool {
    if !dir.is_absolute() {
        return false;
    }
    let Some(resolved) = resolve_lenient(dir) else {
        return false;
    };
    let fold = |p: &Path| -> PathBuf {
        let text = p.to_string_lossy();
        let text = text.strip_prefix(r"\\?\").unwrap_or(&text);
        PathBuf::from(if cfg!(windows) {
            text.to_lowercase()
        } else {
            text.to_string()
        })
    };
    let (plain, resolved) = (fold(dir), fold(&resolved));
    !distrusted
        .iter()
        .map(|d| fold(d))
        .any(|d| plain.starts_with(&d) || resolved.starts_with(&d))
}

/// Extensions of files Windows starts itself (`.exe`, `.com`) or through
/// `cmd.exe` (`.bat`, `.cmd`); a `PATHEXT` entry such as `.JS` or `.PY`
/// needs a file association, which a command without a shell never gets.
const STARTABLE_EXTENSIONS: [&str; 4] = [".com", ".exe", ".bat", ".cmd"];

/// The file names Windows would try for `name`, in order: `name` itself
/// when it already ends in a startable extension, else `name` with each
/// startable extension of `pathext` (`PATHEXT`, in its order; the Windows
/// default when it is unset or lists none).
pub fn program_file_names(name: &str, pathext: Option<&str>) -> Vec<String> {
    let lower = name.to_ascii_lowercase();
    if STARTABLE_EXTENSIONS.iter().any(|ext| lower.ends_with(ext)) {
        return vec![name.to_string()];
    }
    let mut extensions: Vec<String> = Vec::new();
    for ext in pathext.unwrap_or_default().split(';') {
        let ext = ext.trim().to_ascii_lowercase();
        if STARTABLE_EXTENSIONS.contains(&ext.as_str()) && !extensions.contains(&ext) {
            extensions.push(ext);
        }
    }
    if extensions.is_empty() {
        extensions = STARTABLE_EXTENSIONS.map(String::from).to_vec();
    }
    extensions
        .iter()
        .map(|ext| format!("{name}{ext}"))
        .collect()
}

fn is_program(path: &Path) -> bool {
    let Ok(meta) = path.metadata() else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// `current` followed by the entries of `extra` it does not already hold,
/// compared case-insensitively and without a trailing separator, as Windows
/// compares directories.
fn merge(current: &OsStr, extra: &[OsString]) -> Option<OsString> {
    let key = |d: &Path| {
        d.to_string_lossy()
            .trim_end_matches(['\\', '/'])
            .to_lowercase()
    };
    let mut dirs: Vec<std::path::PathBuf> = std::env::split_paths(current).collect();
    for dir in extra.iter().flat_map(std::env::split_paths) {
        if !dir.as_os_str().is_empty() && !dirs.iter().any(|d| key(d) == key(&dir)) {
            dirs.push(dir);
        }
    }
    std::env::join_paths(dirs).ok()
}

#[cfg(windows)]
mod registry {
    use std::ffi::OsString;
    use std::os::windows::ffi::{OsStrExt, OsStringExt};
    use windows_sys::Win32::System::Environment::ExpandEnvironmentStringsW;
    use windows_sys::Win32::System::Registry::{
        HKEY, HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE, RRF_NOEXPAND, RRF_RT_REG_EXPAND_SZ,
        RRF_RT_REG_SZ, RegGetValueW,
    };

    const MACHINE_ENVIRONMENT: &str =
        r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment";

    /// Machine `Path` then user `Path`, each expanded; missing values are skipped.
    pub fn machine_and_user_path() -> Vec<OsString> {
        [
            (HKEY_LOCAL_MACHINE, MACHINE_ENVIRONMENT),
            (HKEY_CURRENT_USER, "Environment"),
        ]
        .into_iter()
        .filter_map(|(root, key)| read_expanded(root, key, "Path"))
        .collect()
    }

    /// A REG_SZ or REG_EXPAND_SZ value with `%VAR%` references expanded.
    pub fn read_expanded(root: HKEY, key: &str, value: &str) -> Option<OsString> {
        read_string(root, key, value).map(|raw| expand(&raw))
    }

    fn wide(text: &str) -> Vec<u16> {
        std::ffi::OsStr::new(text)
            .encode_wide()
            .chain(Some(0))
            .collect()
    }

    fn read_string(root: HKEY, key: &str, value: &str) -> Option<Vec<u16>> {
        let (key, value) = (wide(key), wide(value));
        let flags = RRF_RT_REG_SZ | RRF_RT_REG_EXPAND_SZ | RRF_NOEXPAND;
        let mut bytes = 0u32;
        // SAFETY: a null buffer asks for the size only.
        let rc = unsafe {
            RegGetValueW(
                root,
                key.as_ptr(),
                value.as_ptr(),
                flags,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut bytes,
            )
        };
        if rc != 0 || bytes == 0 {
            return None;
        }
        let mut buf = vec![0u16; (bytes as usize).div_ceil(2)];
        // SAFETY: the buffer holds `bytes` bytes, as the first call asked for.
        let rc = unsafe {
            RegGetValueW(
                root,
                key.as_ptr(),
                value.as_ptr(),
                flags,
                std::ptr::null_mut(),
                buf.as_mut_ptr().cast(),
                &mut bytes,
            )
        };
        if rc != 0 {
            return None;
        }
        let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        buf.truncate(end);
        Some(buf)
    }

    fn expand(raw: &[u16]) -> OsString {
        let source: Vec<u16> = raw.iter().copied().chain(Some(0)).collect();
        let mut out = vec![0u16; 4096];
        loop {
            // SAFETY: `source` is NUL-terminated; `out` has the length passed.
            let n = unsafe {
                ExpandEnvironmentStringsW(source.as_ptr(), out.as_mut_ptr(), out.len() as u32)
            } as usize;
            if n == 0 {
                return OsString::from_wide(raw);
            }
            if n <= out.len() {
                out.truncate(n.saturating_sub(1));
                return OsString::from_wide(&out);
            }
            out.resize(n, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program reached through a link into a writable directory is not
    /// found, even from a trusted PATH entry.
    #[cfg(unix)]
    #[test]
    fn a_link_into_a_writable_root_is_not_a_program() {
        let root = tempfile::tempdir().unwrap();
        let writable = dunce::canonicalize(root.path()).unwrap().join("proj");
        let trusted = dunce::canonicalize(root.path()).unwrap().join("bin");
        std::fs::create_dir_all(&writable).unwrap();
        std::fs::create_dir_all(&trusted).unwrap();
        let planted = writable.join("tool");
        std::fs::write(&planted, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&planted, trusted.join("tool")).unwrap();
        let search = ProgramSearch::distrusting(vec![writable.clone()]);
        assert!(!search.lands_outside_writable(&trusted.join("tool")));
        // Named by path (a catalog's absolute program): the link's target
        // decides too, not only the folder it is named in.
        assert!(!search.is_trusted_file(&trusted.join("tool")));
        assert!(!search.is_trusted_file(&planted));
        assert!(search.lands_outside_writable(&std::env::current_exe().unwrap()));
        assert!(ProgramSearch::default().lands_outside_writable(&trusted.join("tool")));
    }

    #[test]
    fn missing_entries_are_appended_once_after_the_current_ones() {
        let sep = if cfg!(windows) { ";" } else { ":" };
        let current = OsString::from(format!("/a{sep}/B/"));
        let extra = [OsString::from(format!("/b{sep}/c{sep}{sep}/a"))];
        assert_eq!(
            merge(&current, &extra).unwrap(),
            OsString::from(format!("/a{sep}/B/{sep}/c"))
        );
        let path = ProgramSearch::default().child_path().unwrap();
        let now = std::env::var_os("PATH").unwrap_or_default();
        assert!(path.to_string_lossy().starts_with(&*now.to_string_lossy()));
    }

    #[test]
    fn windows_tries_the_startable_extensions_of_pathext_in_order() {
        let names = |name, pathext| program_file_names(name, pathext).join(" ");
        let windows_default = Some(".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC");
        assert_eq!(
            names("npm", windows_default),
            "npm.com npm.exe npm.bat npm.cmd"
        );
        assert_eq!(names("npm", Some(".CMD;.EXE;.PY;.cmd")), "npm.cmd npm.exe");
        assert_eq!(names("npm", None), "npm.com npm.exe npm.bat npm.cmd");
        assert_eq!(
            names("npm", Some(".JS; .PY")),
            "npm.com npm.exe npm.bat npm.cmd"
        );
        assert_eq!(names("npm.cmd", windows_default), "npm.cmd");
        assert_eq!(names("Git.EXE", windows_default), "Git.EXE");
        assert_eq!(names("python3.11", Some(".EXE")), "python3.11.exe");
        assert_eq!(names("tool.js", Some(".JS;.EXE")), "tool.js.exe");
    }

    #[test]
    fn programs_are_found_on_the_path_by_name() {
        // Present on every host the suite runs on: cmd under Wine, sh on Linux.
        let name = if cfg!(windows) { "cmd" } else { "sh" };
        let search = ProgramSearch::default();
        let found = search.find_program(name).expect(name);
        assert!(found.is_file(), "{}", found.display());
        assert!(
            search
                .find_program("wamcp-no-such-program-anywhere")
                .is_none()
        );
        // Distrusting the folder it was found in hides it.
        let folder = resolve_lenient(found.parent().unwrap()).unwrap();
        assert!(
            ProgramSearch::distrusting(vec![folder])
                .find_program(name)
                .is_none()
        );
    }

    /// Reads and expands a REG_EXPAND_SZ value, under a test-only name so a
    /// real user's Path is never touched.
    #[cfg(windows)]
    #[test]
    fn registry_values_are_read_and_expanded() {
        use windows_sys::Win32::System::Registry::HKEY_CURRENT_USER;
        let name = format!("WamcpTest{}", std::process::id());
        let reg = |args: &[&str]| {
            std::process::Command::new("reg")
                .args(args)
                .output()
                .unwrap()
                .status
                .success()
        };
        assert!(reg(&[
            "add",
            r"HKCU\Environment",
            "/v",
            &name,
            "/t",
            "REG_EXPAND_SZ",
            "/d",
            r"C:\x;%SystemRoot%\y",
            "/f"
        ]));
        let value = registry::read_expanded(HKEY_CURRENT_USER, "Environment", &name);
        assert!(reg(&["delete", r"HKCU\Environment", "/v", &name, "/f"]));
        let value = value.unwrap().to_string_lossy().to_lowercase();
        assert!(
            value.starts_with(r"c:\x;") && value.ends_with(r"\windows\y"),
            "{value}"
        );
        let machine = registry::machine_and_user_path();
        assert!(
            machine.iter().any(|p| p
                .to_string_lossy()
                .to_lowercase()
                .contains(r"\windows\system32")),
            "{machine:?}"
        );
    }

    #[test]
    fn entries_the_agent_can_write_are_not_searched() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        let venv = root.join("proj").join(".venv").join("bin");
        std::fs::create_dir_all(&venv).unwrap();
        let distrusted = vec![root.join("proj")];
        assert!(!is_trusted(&venv, &distrusted));
        assert!(!is_trusted(Path::new("node_modules/.bin"), &distrusted));
        assert!(!is_trusted(Path::new(""), &distrusted));
        assert!(is_trusted(&root, &distrusted));
        // A sibling whose name starts the same is not inside.
        assert!(is_trusted(&root.join("proj-tools"), &distrusted));
    }

    /// An entry that reaches a root through a link, before or after the
    /// directory exists, or that cannot be resolved at all, is not trusted.
    #[cfg(unix)]
    #[test]
    fn links_into_a_root_and_unresolvable_entries_are_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(dir.path()).unwrap();
        let root = base.join("proj");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&root, base.join("alias")).unwrap();
        let distrusted = vec![root.clone()];
        assert!(!is_trusted(&base.join("alias/.venv/bin"), &distrusted));
        std::fs::create_dir_all(root.join(".venv/bin")).unwrap();
        assert!(!is_trusted(&base.join("alias/.venv/bin"), &distrusted));
        std::os::unix::fs::symlink(base.join("loop"), base.join("loop")).unwrap();
        assert!(!is_trusted(&base.join("loop/bin"), &distrusted));
    }
}
