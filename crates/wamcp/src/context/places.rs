//! The places the server judges every call against: where tools and
//! commands may write (the writable roots, the client's among them), what
//! wamcp trusts and so keeps out of every root (its config, rules,
//! capabilities, token and data), and where programs are not looked up.
//!
//! Roots are resolved again on every use: a root created, moved or swapped
//! for a link since start-up is judged as it is now.

use crate::settings;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wamcp_platform::paths::{holding, overlapping, resolve_existing, resolved};
use wamcp_policy::workspace::{PathStyle, ProtectedDirs, judge_workspace};

/// The roots the client listed, judged.
#[derive(Clone, Debug, Default)]
pub struct ClientRoots {
    /// The client's list is known (and not changed since).
    pub fetched: bool,
    /// The folders taken as roots.
    pub accepted: Vec<PathBuf>,
    /// Each refused root with the reason.
    pub refused: Vec<String>,
    /// Why the list could not be had, when it could not.
    pub problem: Option<String>,
}

/// Every place the server writes, trusts or distrusts.
pub struct Places {
    /// The working directory relative paths in tool arguments resolve against.
    pub cwd: PathBuf,
    /// The server's own folder for downloads, a writable root.
    pub download_root: PathBuf,
    /// `WAMCP_PROJECT_ROOTS` entries as written.
    pub project_roots_configured: Vec<String>,
    /// The entries that exist, resolved.
    pub project_roots: Vec<PathBuf>,
    /// The working directory, when it was adopted as the project.
    pub adopted_workspace: Option<PathBuf>,
    /// Why the working directory was not adopted, when it was asked to be.
    pub workspace_note: Option<String>,
    /// The client's roots. Here, not with the session, because they are
    /// writable roots like the others.
    pub(super) client_roots: Mutex<ClientRoots>,
    /// Every folder ever taken from the client: programs stay distrusted
    /// there after a folder stops being a root (one planted meanwhile is
    /// still planted).
    pub(super) ever_client_roots: Mutex<Vec<PathBuf>>,
    /// The config file that was loaded.
    pub config_file: Option<PathBuf>,
    /// Where the configuration is read from, loaded or not: a file that
    /// failed to parse is still protected, or a tool could repair it into
    /// one that widens the next run's permissions.
    pub config_location: Option<PathBuf>,
    /// The user's rule file, a trust file like the config.
    pub command_rules_file: Option<PathBuf>,
    /// The user's capability catalog, a trust file like the rules.
    pub capabilities_file: Option<PathBuf>,
    /// The host grants file (`WAMCP_ALLOWED_HOSTS_FILE`).
    pub granted_hosts_file: PathBuf,
    /// wamcp's folder in the per-user config directory.
    pub wamcp_config_dir: Option<PathBuf>,
    /// The HTTP bearer token file.
    pub http_token_file: Option<PathBuf>,
    /// wamcp's per-user data directory (`%LOCALAPPDATA%\wamcp`,
    /// `$XDG_DATA_HOME/wamcp`): the audit trail, sandbox bundles.
    pub data_dir: Option<PathBuf>,
    /// The audit trail's files, never written by a tool.
    pub audit_files: Vec<PathBuf>,
    /// The caches confined commands may write, as configured.
    pub caches: Vec<String>,
    /// Directories no root may be (home, system folders).
    pub protected_dirs: ProtectedDirs,
}

impl Places {
    /// Directories the `edit` tools may write below: the download root,
    /// the project roots, the adopted workspace and the client's roots.
    pub fn writable_roots(&self) -> Vec<PathBuf> {
        self.writable_root_origins()
            .into_iter()
            .map(|(root, _)| root)
            .collect()
    }

    /// Each writable root with the setting or source it came from.
    pub fn writable_root_origins(&self) -> Vec<(PathBuf, &'static str)> {
        let client = self.client_roots().accepted;
        let mut roots = vec![(self.download_root.clone(), "download root")];
        let sources = self
            .project_roots
            .iter()
            .map(|r| (r, settings::PROJECT_ROOTS))
            .chain(
                self.adopted_workspace
                    .iter()
                    .map(|r| (r, settings::WORKSPACE_FROM_CWD)),
            )
            .chain(client.iter().map(|r| (r, "client roots")));
        for (root, from) in sources {
            if !roots.iter().any(|(r, _)| r == root) {
                roots.push((root.clone(), from));
            }
        }
        roots
    }

    /// The writable roots that exist and still resolve to themselves. One
    /// root nested in another can be swapped for a symbolic link by a
    /// command; it would then lead anywhere, so it stops being a root.
    pub fn run_roots(&self) -> Vec<PathBuf> {
        self.writable_roots()
            .into_iter()
            .filter(|root| match resolve_existing(root) {
                Some(now) if now == *root => true,
                Some(now) => {
                    tracing::warn!(
                        "writable root {} now leads to {}; it is not used",
                        root.display(),
                        now.display()
                    );
                    false
                }
                None => false,
            })
            .collect()
    }

    /// The project roots among `roots` (from [`Self::run_roots`]): all but
    /// the download folder, which holds what the server fetched and is no
    /// place to start a program in.
    pub fn projects_among(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        roots
            .iter()
            .filter(|root| **root != self.download_root)
            .cloned()
            .collect()
    }

    /// Every place a confined command may write: the writable roots, the
    /// caches and the system places (`/dev/shm`). A trust file in any of
    /// them could be rewritten by the next command, so none is read there.
    pub fn command_writable_places(&self) -> Vec<PathBuf> {
        let mut places = self.run_roots();
        places.extend(self.resolved_caches());
        places.extend(
            wamcp_exec::confine::SYSTEM_WRITABLE
                .iter()
                .filter_map(|p| resolve_existing(Path::new(p))),
        );
        places
    }

    /// The place a confined command can write that holds `path` or lies
    /// inside it, if any: a folder the server fills for another program
    /// (a sandbox bundle) must be out of the agent's reach both ways.
    pub fn writable_place_overlapping(&self, path: &Path) -> Option<PathBuf> {
        overlapping(path, self.command_writable_places())
    }

    /// Why the trust file `file` may be one a confined command rewrites
    /// (it lies in a writable place, or cannot be placed), if it may.
    pub fn untrusted_because(&self, file: &Path) -> Option<String> {
        holding(file, &self.command_writable_places()).map(|held| held.to_string())
    }

    /// Directories whose programs are never looked up by name: every
    /// writable root (the client's, ever), the system places and the caches.
    pub fn distrusted(&self) -> Vec<PathBuf> {
        let mut dirs = self.writable_roots();
        dirs.extend(
            self.ever_client_roots
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        dirs.extend(
            wamcp_exec::confine::SYSTEM_WRITABLE
                .iter()
                .map(|p| resolved(Path::new(p))),
        );
        dirs.extend(self.resolved_caches());
        dirs
    }

    fn resolved_caches(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.caches.iter().map(|entry| resolved(Path::new(entry)))
    }

    /// The files and folders wamcp trusts (config, rules, capabilities,
    /// the token, its config and data folders): a root that holds one, or
    /// lies inside one, would let a command rewrite it. (The grants file is
    /// read afresh on every call and grants nothing from a writable place,
    /// so a project holding it may still be a root.)
    fn trust_locations(&self) -> Vec<PathBuf> {
        self.config_location
            .iter()
            .chain(&self.command_rules_file)
            .chain(&self.capabilities_file)
            .chain(&self.wamcp_config_dir)
            .chain(&self.http_token_file)
            .chain(&self.data_dir)
            .map(|p| resolved(p))
            .collect()
    }

    /// The files no tool writes, resolved now: wamcp's configuration, rules,
    /// catalog, grants, token and audit trail.
    pub fn write_protected(&self) -> Vec<PathBuf> {
        self.config_file
            .iter()
            .chain(Some(&self.granted_hosts_file))
            .chain(&self.command_rules_file)
            .chain(&self.capabilities_file)
            .chain(&self.config_location)
            .chain(&self.http_token_file)
            .chain(&self.audit_files)
            .map(|p| resolved(p))
            .collect()
    }

    /// Creates the download root when a write goes there, and only then: a
    /// refused write elsewhere creates nothing.
    pub fn prepare_write(&self, target: &Path) {
        if resolved(&self.cwd.join(target)).starts_with(&self.download_root)
            && let Err(e) = std::fs::create_dir_all(&self.download_root)
        {
            tracing::warn!(
                "cannot create the download root {}: {e}",
                self.download_root.display()
            );
        }
    }

    /// `resolved` as a project root, or why it cannot be one: the folders
    /// `judge_workspace` refuses, and any folder holding or inside one of
    /// wamcp's trust locations or a `PATH` folder. Client roots and the
    /// adopted working directory are judged alike.
    pub fn judge_root(&self, resolved: PathBuf) -> Result<PathBuf, String> {
        let shown = resolved.display().to_string();
        judge_workspace(&shown, PathStyle::native(), &self.protected_dirs)?;
        if let Some(trusted) = overlapping(&resolved, self.trust_locations()) {
            return Err(format!(
                "'{shown}' holds or lies inside {}, which wamcp trusts; a command there could rewrite it.",
                trusted.display()
            ));
        }
        if let Some(entry) = path_entry_overlapping(&resolved) {
            return Err(format!(
                "'{shown}' holds or lies inside {}, a folder on PATH; a program planted there would run by name.",
                entry.display()
            ));
        }
        Ok(resolved)
    }

    /// Whether the client's current list is known.
    pub fn client_roots_fetched(&self) -> bool {
        self.client_roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fetched
    }

    /// The roots the client listed, as judged.
    pub fn client_roots(&self) -> ClientRoots {
        self.client_roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Judges the client's list (`file:` URIs): each must be a local
    /// folder that exists and is not a drive root, the home directory or a
    /// system folder, exactly as `WAMCP_WORKSPACE_FROM_CWD` judges its
    /// folder. The accepted ones join [`Self::distrusted`] at once; they
    /// become writable only through [`Self::store_client_roots`], so that
    /// programs are distrusted there before anything can be written.
    pub(super) fn judge_client_roots(&self, uris: &[String]) -> ClientRoots {
        let style = PathStyle::native();
        let mut judged = ClientRoots {
            fetched: true,
            ..ClientRoots::default()
        };
        for uri in uris {
            let shown = wamcp_policy::text::shown(uri);
            let verdict = wamcp_policy::workspace::path_from_file_uri(uri, style)
                .and_then(|path| {
                    resolve_existing(Path::new(&path))
                        .filter(|p| p.is_dir())
                        .ok_or_else(|| format!("'{path}' is not an existing folder."))
                })
                .and_then(|resolved| self.judge_root(resolved));
            match verdict {
                Ok(root) if !judged.accepted.contains(&root) => judged.accepted.push(root),
                Ok(_) => {}
                Err(reason) => judged.refused.push(format!("{shown}: {reason}")),
            }
        }
        let mut ever = self
            .ever_client_roots
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for root in &judged.accepted {
            if !ever.contains(root) {
                ever.push(root.clone());
            }
        }
        judged
    }

    /// Makes `judged` the client's roots.
    pub(super) fn store_client_roots(&self, judged: ClientRoots) {
        *self.client_roots.lock().unwrap_or_else(|e| e.into_inner()) = judged;
    }

    /// The client could not say its roots; none are taken until it can.
    pub fn client_roots_unavailable(&self, problem: String) {
        *self.client_roots.lock().unwrap_or_else(|e| e.into_inner()) = ClientRoots {
            fetched: true,
            problem: Some(problem),
            ..ClientRoots::default()
        };
    }

    /// The client's list changed: ask again before the next call.
    pub fn client_roots_changed(&self) {
        self.client_roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fetched = false;
    }

    /// When no config file exists yet, where `wamcp config --init` would
    /// write one (start-up never writes it: a server started by every client
    /// session must not create files as a side effect).
    pub fn missing_config_hint(&self) -> Option<String> {
        let path = self.config_location.as_ref()?;
        (!path.exists()).then(|| {
            format!(
                "no config file at {}; `wamcp config --init` writes a documented one",
                path.display()
            )
        })
    }
}

/// A `PATH` folder inside `root`, or one `root` lies inside: programs found
/// there by name would be ones a command could replace.
fn path_entry_overlapping(root: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let entries = std::env::split_paths(&path)
        .filter(|entry| entry.is_absolute())
        .map(|entry| resolved(&entry));
    overlapping(root, entries)
}

/// The resolved folder for a `WAMCP_PROJECT_ROOTS` entry, or why it is none.
pub fn project_root(entry: &str) -> Result<PathBuf, String> {
    let path = Path::new(entry);
    if !path.is_absolute() {
        return Err("not an absolute path".into());
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => resolve_existing(path).ok_or_else(|| "cannot be resolved".into()),
        Ok(_) => Err("not a directory".into()),
        Err(e) => Err(format!("{e}")),
    }
}
