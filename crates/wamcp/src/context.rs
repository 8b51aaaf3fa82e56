//! The state every tool shares, built once at start-up.
//!
//! It is derived from the resolved configuration and held in one `Arc`, so
//! the server behaves the same whether a client keeps a session or sends
//! stateless requests. Start-up problems are collected here rather than
//! raised: the server always starts, and `get_server_info` says what went
//! wrong.

use crate::config::{self, EnvLookup, Resolution, env_value};
use crate::registry::{self, ToolEntry};
use crate::settings::{self, Adopt, Settings};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use wamcp_devenv::audit_log::{AuditLog, Entry};
use wamcp_devenv::capability::Catalog;
use wamcp_exec::build::Builds;
use wamcp_exec::command::Policy;
use wamcp_exec::confine::Sandbox;
use wamcp_policy::command::rules::RuleSet;
use wamcp_policy::command::sandbox::{Home, refusal, writable_caches};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::{GroupSelection, parse_groups};
use wamcp_policy::hosts::{ALLOWED_DOC_HOSTS, ALLOWED_NETWORK_HOSTS};
use wamcp_policy::limits::MAX_CONFIG_FILE_BYTES;
use wamcp_policy::workspace::{PathStyle, ProtectedDirs, judge_workspace};
use wamcp_web::client::WebClient;
use wamcp_web::page::PageCache;
use wamcp_web::search::{DuckDuckGoLite, SearchBackend};

pub struct ServerContext {
    pub transport: &'static str,
    /// The working directory relative paths in tool arguments resolve against.
    pub cwd: PathBuf,
    pub groups: GroupSelection,
    pub registered: Vec<&'static ToolEntry>,
    pub config_file: Option<PathBuf>,
    /// Where the configuration is read from, loaded or not: a file that
    /// failed to parse is still protected, or a tool could repair it into
    /// one that widens the next run's permissions.
    config_location: Option<PathBuf>,
    pub resolution: Resolution,
    pub download_root: PathBuf,
    /// `WAMCP_PROJECT_ROOTS` entries as written.
    pub project_roots_configured: Vec<String>,
    /// The entries that exist, resolved.
    pub project_roots: Vec<PathBuf>,
    pub adopted_workspace: Option<PathBuf>,
    pub workspace_note: Option<String>,
    pub documentation_hosts: Vec<String>,
    pub granted_hosts_file: PathBuf,
    pub host_consent: bool,
    pub host_grant_persist: bool,
    pub search_backend: String,
    /// How long one search, find or listing may take.
    pub search_budget: std::time::Duration,
    /// Problems with individual setting values; each names the setting.
    pub setting_warnings: Vec<String>,
    /// The command rules `run_powershell` judges with, loaded on first use
    /// (parsing every grammar costs more than the rest of start-up).
    command_rules: std::sync::OnceLock<RuleSet>,
    /// The user's rule file, a trust file like the config.
    pub command_rules_file: Option<PathBuf>,
    /// How commands are confined by the operating system.
    pub sandbox: Sandbox,
    /// The user's capability catalog, a trust file like the rules.
    pub capabilities_file: Option<PathBuf>,
    /// The capability catalog, loaded on first use.
    catalog: OnceLock<Catalog>,
    /// `WAMCP_DESKTOP_APPS` and `WAMCP_DESKTOP_PROCESSES`, as lists.
    pub desktop_apps: Vec<String>,
    pub desktop_processes: Vec<String>,
    /// The desktop, made on first use; it remembers which programs
    /// `open_app` started for as long as the server runs.
    #[cfg(windows)]
    desktop: OnceLock<wamcp_desktop::Desktop>,
    /// `env_inspect`'s last snapshot.
    pub env_cache: wamcp_devenv::snapshot::Cache,
    /// wamcp's per-user data directory (`%LOCALAPPDATA%\wamcp`,
    /// `$XDG_DATA_HOME/wamcp`): the audit trail, sandbox bundles.
    pub data_dir: Option<PathBuf>,
    /// The audit trail of execution-capable calls; `None` without a
    /// per-user data directory.
    pub audit: Option<AuditLog>,
    /// Built on first use: start-up stays fast for sessions that never
    /// touch the network.
    web: OnceLock<Result<WebClient, String>>,
    /// Project roots with a build running, for `build_project`.
    /// Build locks per root and the last build's diagnostics per command.
    pub builds: Builds,
    /// Pages `fetch_web_page` fetched lately, so continuation calls see the
    /// same lines.
    pub pages: PageCache,
    /// Hosts the user approved through elicitation, until restart.
    session_grants: Mutex<Vec<String>>,
    /// The configured search backend; `None` when its name is unknown.
    pub search_engine: Option<Box<dyn SearchBackend>>,
    /// Cancelled shortly after the client closes stdin: every tool call still
    /// running stops, so the process can exit at once.
    pub client_gone: tokio_util::sync::CancellationToken,
    /// Whether roots a client lists (MCP `roots`) become writable roots:
    /// on for stdio unless `WAMCP_CLIENT_ROOTS=off`; never over HTTP, where
    /// one client's roots would open them to every session.
    pub client_roots_enabled: bool,
    client_roots: Mutex<ClientRoots>,
    /// Held while the client is asked for its roots, so concurrent calls
    /// wait for one answer instead of asking again.
    pub roots_gate: tokio::sync::Mutex<()>,
    /// Directories no root may be (home, system folders), as for
    /// `WAMCP_WORKSPACE_FROM_CWD`.
    protected_dirs: ProtectedDirs,
    /// wamcp's folder in the per-user config directory and the HTTP bearer
    /// token file: trust locations no root may reach.
    pub wamcp_config_dir: Option<PathBuf>,
    pub http_token_file: Option<PathBuf>,
    /// Calls running as MCP tasks, and finished ones until their TTL; here
    /// so every session (and every stateless HTTP request) finds them.
    pub tasks: rmcp::task_manager::TaskManager,
    /// When recent tasks started, for [`ServerContext::admit_task`].
    task_starts: Mutex<Vec<std::time::Instant>>,
    /// The HTTP session each task was started in: only it may read,
    /// answer or cancel the task (see [`crate::tasks::owned`]).
    pub task_owners: Mutex<std::collections::HashMap<String, String>>,
}

/// The roots the client listed, judged.
#[derive(Clone, Debug, Default)]
pub struct ClientRoots {
    /// The client's list is known (and not changed since).
    pub fetched: bool,
    pub accepted: Vec<PathBuf>,
    /// Each refused root with the reason.
    pub refused: Vec<String>,
    /// Why the list could not be had, when it could not.
    pub problem: Option<String>,
}

/// What start-up read before building the context.
pub struct Startup {
    pub config_file: Option<PathBuf>,
    pub config_location: Option<PathBuf>,
    pub resolution: Resolution,
}

impl Startup {
    /// Finds and loads the config file; never writes one.
    pub fn read(env: EnvLookup, cwd: &Path) -> Startup {
        let location = config::locate(env, cwd);
        let loaded = match &location {
            Some(path) => config::load(path),
            None => Ok(None),
        };
        let config_file = match (&location, &loaded) {
            (Some(path), Ok(Some(_))) => Some(path.clone()),
            _ => None,
        };
        Startup {
            config_file,
            config_location: location,
            resolution: config::resolve(loaded, env),
        }
    }
}

impl ServerContext {
    /// The desktop the desktop tools act on; only Windows has one.
    pub fn desktop(&self) -> Result<&wamcp_desktop::Desktop, ToolError> {
        #[cfg(windows)]
        {
            Ok(self.desktop.get_or_init(|| {
                wamcp_desktop::native(self.desktop_apps.clone(), self.desktop_processes.clone())
            }))
        }
        #[cfg(not(windows))]
        {
            Err(ToolError::new(
                ErrorType::UnsupportedPlatform,
                "Desktop control needs Windows.",
            ))
        }
    }

    pub fn new(
        startup: Startup,
        env: EnvLookup,
        cwd: &Path,
        transport: &'static str,
    ) -> ServerContext {
        let Startup {
            config_file,
            config_location,
            resolution,
        } = startup;
        let settings = Settings::read(&resolution);
        let mut warnings = settings.warnings.clone();
        let groups = parse_groups(settings.tools.as_deref(), settings.web_research);
        let registered = registry::registered(&groups.groups);
        let data_dir = settings
            .data_dir
            .clone()
            .or_else(|| config::wamcp_data_dir(env));
        let download_root = settings.download_root.clone().unwrap_or_else(|| {
            data_dir
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().join("wamcp"))
                .join("downloads")
        });
        // Resolved now, even before it exists, so that later its resolved
        // form can be compared with this one (see `run_roots`).
        let download_root = resolve_lenient(&download_root);
        let project_roots_configured = settings.project_roots.clone();
        let mut project_roots = Vec::new();
        for entry in &project_roots_configured {
            match project_root(entry) {
                Ok(path) if !project_roots.contains(&path) => project_roots.push(path),
                Ok(_) => {}
                Err(reason) => warnings.push(format!(
                    "{}: '{entry}' skipped: {reason}",
                    settings::PROJECT_ROOTS
                )),
            }
        }
        // `auto` is what the host entries set (Codex starts its servers in
        // the session directory and sends no roots): the working directory
        // is the project unless the user named projects themselves.
        let adopt = match settings.workspace_from_cwd {
            Adopt::Off => false,
            Adopt::On => true,
            Adopt::Auto => project_roots_configured.is_empty(),
        };
        let mut documentation_hosts: Vec<String> =
            ALLOWED_DOC_HOSTS.iter().map(|h| h.to_string()).collect();
        for host in &settings.extra_doc_hosts {
            if !documentation_hosts.contains(host) {
                documentation_hosts.push(host.clone());
            }
        }
        let granted_hosts_file = cwd.join(
            settings
                .allowed_hosts_file
                .as_deref()
                .unwrap_or(Path::new("mcp-allowed-hosts.json")),
        );
        let command_rules_file = settings.command_rules.as_ref().map(|p| cwd.join(p));
        let capabilities_file = settings.capabilities_file.as_ref().map(|p| cwd.join(p));
        let audit = data_dir.clone().map(AuditLog::new);
        let client_roots_enabled = transport == "stdio" && settings.client_roots;
        let mut sandbox = command_sandbox(env, &settings, &mut warnings);
        if let Some(registry) = listener_registry(env) {
            sandbox = sandbox.with_listener_registry(registry);
        }
        let search_backend = settings.search_backend.clone();

        let mut context = ServerContext {
            transport,
            cwd: cwd.to_path_buf(),
            registered,
            config_file,
            config_location,
            download_root,
            project_roots_configured,
            project_roots,
            adopted_workspace: None,
            workspace_note: None,
            documentation_hosts,
            granted_hosts_file,
            host_consent: settings.host_consent,
            host_grant_persist: settings.host_grant_persist,
            search_engine: search_engine(&search_backend),
            search_backend,
            search_budget: settings.search_budget,
            setting_warnings: warnings,
            command_rules: std::sync::OnceLock::new(),
            command_rules_file,
            sandbox,
            capabilities_file,
            catalog: OnceLock::new(),
            desktop_apps: settings.desktop_apps,
            desktop_processes: settings.desktop_processes,
            #[cfg(windows)]
            desktop: OnceLock::new(),
            env_cache: Default::default(),
            data_dir,
            audit,
            groups,
            resolution,
            web: OnceLock::new(),
            builds: Builds::default(),
            pages: PageCache::default(),
            session_grants: Mutex::default(),
            client_gone: tokio_util::sync::CancellationToken::new(),
            client_roots_enabled,
            client_roots: Mutex::default(),
            roots_gate: tokio::sync::Mutex::new(()),
            protected_dirs: protected_dirs(env),
            tasks: rmcp::task_manager::TaskManager::new(),
            task_starts: Mutex::default(),
            task_owners: Mutex::default(),
            wamcp_config_dir: config::user_config_dir(env).map(|d| d.join("wamcp")),
            http_token_file: crate::http::token_file(env),
        };
        if adopt {
            match resolve_existing(cwd)
                .ok_or_else(|| format!("'{}' cannot be resolved.", cwd.display()))
                .and_then(|resolved| context.judge_root(resolved))
            {
                Ok(path) => context.adopted_workspace = Some(path),
                Err(reason) => context.workspace_note = Some(reason),
            }
        }
        // A config file a command could rewrite (it lies inside a writable
        // root, as a project's `input/config.json` named in
        // WAMCP_CONFIG_FILE would) could turn confinement off for the next
        // start: set it aside and run on the environment and defaults.
        let places = context.command_writable_places();
        let inside = context
            .config_file
            .as_ref()
            .and_then(|file| root_holding(file, &places).map(|r| (file, r)));
        if let Some((file, root)) = inside {
            let message = format!(
                "The config file {} is inside {}, where commands can write; it was not \
                 used. Move it outside the writable roots (for example to the per-user location) or name one \
                 there with WAMCP_CONFIG_FILE.",
                file.display(),
                root.display()
            );
            let startup = Startup {
                config_file: None,
                config_location: context.config_location.clone(),
                resolution: config::resolve(Err(message), env),
            };
            return ServerContext::new(startup, env, cwd, transport);
        }
        context.distrust_writable_places();
        context
    }

    /// Programs are never looked up by name where the agent can write:
    /// the writable roots (client roots too, so called again when they
    /// change), the system places and the caches.
    fn distrust_writable_places(&self) {
        let mut agent_writable = self.writable_roots();
        agent_writable.extend(
            wamcp_exec::confine::SYSTEM_WRITABLE
                .iter()
                .map(|p| resolve_lenient(Path::new(p))),
        );
        agent_writable.extend(
            self.sandbox
                .caches()
                .entries
                .iter()
                .map(|entry| resolve_lenient(Path::new(entry))),
        );
        wamcp_platform::search_path::distrust(agent_writable);
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
            .map(|p| resolve_lenient(p))
            .collect()
    }

    /// Hosts the grants file grants now, read fresh, or why it grants none.
    pub fn file_grants(&self) -> Result<Vec<String>, String> {
        // A grants file inside a root could be rewritten by any command.
        if let Some(root) = root_holding(&self.granted_hosts_file, &self.command_writable_places())
        {
            return Err(format!(
                "{} is inside {}, where commands can write, so it grants nothing; \
                 move it outside the writable roots (WAMCP_ALLOWED_HOSTS_FILE)",
                self.granted_hosts_file.display(),
                root.display()
            ));
        }
        crate::hostgrants::read(&self.granted_hosts_file)
    }

    pub fn session_grants(&self) -> Vec<String> {
        self.session_grants
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Remembers a host the user approved, until the server stops.
    pub fn grant_for_session(&self, host: &str) {
        let mut grants = self
            .session_grants
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !grants.iter().any(|h| h == host) {
            grants.push(host.to_string());
        }
    }

    /// Hosts `fetch_web_page` may read outside research mode: documentation
    /// hosts, the network list, the grants file as it is now, and this
    /// session's approvals.
    pub fn readable_hosts(&self) -> Vec<String> {
        let mut hosts = self.documentation_hosts.clone();
        let extra = ALLOWED_NETWORK_HOSTS
            .iter()
            .map(|h| h.to_string())
            .chain(self.file_grants().unwrap_or_default())
            .chain(self.session_grants());
        for host in extra {
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
        hosts
    }

    /// The one HTTPS client, with the system's resolver and trust store.
    pub fn web(&self) -> Result<&WebClient, ToolError> {
        self.web
            .get_or_init(WebClient::system)
            .as_ref()
            .map_err(|why| {
                ToolError::new(
                    ErrorType::HttpRequestFailed,
                    format!("The HTTPS client could not start: {why}."),
                )
            })
    }

    /// Directories the `edit` tools may write below: the download root, the
    /// project roots, and the adopted workspace.
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

    /// Takes the client's list (`file:` URIs): each must be a local folder
    /// that exists and is not a drive root, the home directory or a system
    /// folder, exactly as `WAMCP_WORKSPACE_FROM_CWD` judges its folder.
    pub fn set_client_roots(&self, uris: &[String]) {
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
        wamcp_platform::search_path::distrust_also(&judged.accepted);
        *self.client_roots.lock().unwrap_or_else(|e| e.into_inner()) = judged;
    }

    /// `resolved` as a project root, or why it cannot be one: the folders
    /// `judge_workspace` refuses, and any folder holding or inside one of
    /// wamcp's trust locations or a `PATH` folder. Client roots and the
    /// adopted working directory are judged alike.
    fn judge_root(&self, resolved: PathBuf) -> Result<PathBuf, String> {
        let shown = resolved.display().to_string();
        judge_workspace(&shown, PathStyle::native(), &self.protected_dirs)?;
        if let Some(trusted) = self.trust_location_overlapping(&resolved) {
            return Err(format!(
                "'{shown}' holds or lies inside {}, which wamcp trusts; a command there could rewrite it.",
                trusted.display()
            ));
        }
        if let Some(entry) = Self::path_entry_overlapping(&resolved) {
            return Err(format!(
                "'{shown}' holds or lies inside {}, a folder on PATH; a program planted there would run by name.",
                entry.display()
            ));
        }
        Ok(resolved)
    }

    /// A `PATH` folder inside `root`, or one `root` lies inside: programs
    /// found there by name would be ones a command could replace.
    fn path_entry_overlapping(root: &Path) -> Option<PathBuf> {
        let path = std::env::var_os("PATH")?;
        let entries = std::env::split_paths(&path)
            .filter(|entry| entry.is_absolute())
            .map(|entry| resolve_lenient(&entry));
        overlapping(root, entries)
    }

    /// A trust location inside `root`, or one `root` lies inside.
    fn trust_location_overlapping(&self, root: &Path) -> Option<PathBuf> {
        overlapping(root, self.trust_locations())
    }

    /// The client could not say its roots; none are taken until it can.
    pub fn client_roots_unavailable(&self, problem: String) {
        *self.client_roots.lock().unwrap_or_else(|e| e.into_inner()) = ClientRoots {
            fetched: true,
            problem: Some(problem),
            ..ClientRoots::default()
        };
    }

    /// Counts a task start against `limit` starts per `window`; false when
    /// the limit is reached (the start is then not counted).
    pub fn admit_task(&self, limit: usize, window: std::time::Duration) -> bool {
        let mut starts = self.task_starts.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        starts.retain(|started| now.duration_since(*started) < window);
        if starts.len() >= limit {
            return false;
        }
        starts.push(now);
        true
    }

    /// The client's list changed: ask again before the next call.
    pub fn client_roots_changed(&self) {
        self.client_roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fetched = false;
    }

    /// The roots and trust files a write to `target` is checked against,
    /// resolved now: a root created or moved since start-up is judged as it
    /// is today. The download root belongs to the server, so it is created
    /// when the first write goes there, and only then: a refused write
    /// elsewhere creates nothing.
    fn write_scope(&self, target: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
        if resolve_lenient(&self.cwd.join(target)).starts_with(&self.download_root)
            && let Err(e) = std::fs::create_dir_all(&self.download_root)
        {
            tracing::warn!(
                "cannot create the download root {}: {e}",
                self.download_root.display()
            );
        }
        let roots = self.run_roots();
        let protected = self
            .config_file
            .iter()
            .chain(Some(&self.granted_hosts_file))
            .chain(&self.command_rules_file)
            .chain(&self.capabilities_file)
            .chain(&self.config_location)
            .chain(&self.http_token_file)
            .map(|p| resolve_lenient(p))
            .chain(
                self.audit
                    .iter()
                    .flat_map(|a| a.files())
                    .map(|p| resolve_lenient(&p)),
            )
            .collect();
        (roots, protected)
    }

    /// Every place a confined command may write: the writable roots, the
    /// caches and the system places (`/dev/shm`). A trust file in any of
    /// them could be rewritten by the next command, so none is read there.
    pub fn command_writable_places(&self) -> Vec<PathBuf> {
        let mut places = self.run_roots();
        places.extend(
            self.sandbox
                .caches()
                .entries
                .iter()
                .map(|entry| resolve_lenient(Path::new(entry))),
        );
        places.extend(
            wamcp_exec::confine::SYSTEM_WRITABLE
                .iter()
                .filter_map(|p| resolve_existing(Path::new(p))),
        );
        places
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

    /// What `run_powershell` and `build_project` decide with, for `roots`
    /// (from [`Self::run_roots`]) and the `projects` among them.
    pub fn command_policy<'a>(
        &'a self,
        roots: &'a [PathBuf],
        projects: &'a [PathBuf],
    ) -> Policy<'a> {
        Policy {
            cwd: &self.cwd,
            roots,
            projects,
            rules: self.command_rules(),
            sandbox: &self.sandbox,
        }
    }

    /// Runs `write` with the current write scope for `target`.
    pub fn with_write_scope<T>(
        &self,
        target: &Path,
        write: impl FnOnce(&wamcp_fs::WriteScope) -> T,
    ) -> T {
        self.with_approved_write_scope(target, None, write)
    }

    /// Runs `write` with the current write scope for `target`, where the
    /// user approved writing the agent trust file `approved`.
    pub fn with_approved_write_scope<T>(
        &self,
        target: &Path,
        approved: Option<&Path>,
        write: impl FnOnce(&wamcp_fs::WriteScope) -> T,
    ) -> T {
        let (roots, protected) = self.write_scope(target);
        write(&wamcp_fs::WriteScope {
            roots: &roots,
            protected: &protected,
            approved,
        })
    }

    /// The place a confined command can write that holds `path` or lies
    /// inside it, if any: a folder the server fills for another program
    /// (a sandbox bundle) must be out of the agent's reach both ways.
    pub fn writable_place_overlapping(&self, path: &Path) -> Option<PathBuf> {
        overlapping(path, self.command_writable_places())
    }

    /// The command rules, loaded (and the user's file read) on first use.
    pub fn command_rules(&self) -> &RuleSet {
        self.command_rules.get_or_init(|| {
            let roots = self.command_writable_places();
            load_command_rules(
                RuleSet::builtin(),
                self.command_rules_file.as_deref(),
                &roots,
            )
        })
    }

    /// The capability catalog, loaded (and the user's file read) on first
    /// use. A user file a command could rewrite is not read, and counts as
    /// a mistake: nothing runs until it is moved.
    pub fn catalog(&self) -> &Catalog {
        self.catalog.get_or_init(|| {
            let file = self.capabilities_file.clone();
            if let Some(path) = &file
                && let Some(root) = root_holding(path, &self.command_writable_places())
            {
                let mut catalog = Catalog::load(None);
                catalog.user_file = file.clone();
                catalog.errors.push(format!(
                    "{} is inside {}, where commands can write; it is not read, and no capability runs until \
                     the user moves it outside the writable roots and caches",
                    path.display(),
                    root.display()
                ));
                return catalog;
            }
            Catalog::load(file)
        })
    }

    /// Appends to the audit trail, off the protocol thread; a trail that
    /// cannot be written is logged, and the call's answer says so.
    pub async fn audit(&self, entry: Entry) -> Option<String> {
        let log = self.audit.clone()?;
        let record = format!("{entry:?}");
        let written =
            crate::lanes::blocking_io(crate::lanes::AUDIT, move || log.append(entry)).await;
        let problem = match written {
            Ok(()) => return None,
            Err(e) => e.to_string(),
        };
        tracing::warn!("the audit trail could not be written: {problem}; the record: {record}");
        Some(problem)
    }

    /// The command rules as `wamcp config --check` proves them: the
    /// built-in grammars and rules run their examples too.
    pub fn checked_command_rules(&self) -> RuleSet {
        let roots = self.command_writable_places();
        load_command_rules(
            RuleSet::builtin_checked(),
            self.command_rules_file.as_deref(),
            &roots,
        )
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

    /// Every start-up message worth a line on stderr.
    pub fn startup_messages(&self) -> Vec<String> {
        let mut messages: Vec<String> = [
            self.groups.error.clone(),
            self.groups.posture_warning(),
            self.resolution.config_error.clone(),
            self.workspace_note
                .clone()
                .map(|n| format!("{}: {n}", settings::WORKSPACE_FROM_CWD)),
        ]
        .into_iter()
        .flatten()
        .collect();
        messages.extend(self.resolution.overrides.iter().cloned());
        messages.extend(self.setting_warnings.iter().cloned());
        messages
    }
}

/// The built-in rules plus the user's file, if one is named. Problems land
/// in the rule set's errors, shown by `get_server_info`; the server starts.
fn load_command_rules(mut rules: RuleSet, file: Option<&Path>, roots: &[PathBuf]) -> RuleSet {
    if let Some(path) = file {
        // Fail closed: rules a command could rewrite are no rules at all,
        // and dropping them would lose the restrictions they add.
        if let Some(root) = root_holding(path, roots) {
            rules.block(format!(
                "the rules file {} is inside {}, where commands can write; no command runs until the user \
                 moves it outside the writable roots and caches",
                path.display(),
                root.display()
            ));
            return rules;
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.len() > MAX_CONFIG_FILE_BYTES => rules.errors.push(format!(
                "{}: larger than {MAX_CONFIG_FILE_BYTES} bytes; not loaded",
                path.display()
            )),
            Ok(_) => match std::fs::read_to_string(path) {
                Ok(text) => rules.load(
                    text.trim_start_matches('\u{feff}'),
                    &path.display().to_string(),
                ),
                Err(e) => rules
                    .errors
                    .push(format!("{}: cannot be read: {e}", path.display())),
            },
            Err(e) => rules
                .errors
                .push(format!("{}: cannot be read: {e}", path.display())),
        }
    }
    rules
}

/// The writable root `file` (resolved) lies in, if any: a trust file there
/// is one a confined command may write.
/// The first of `places` (resolved) that holds `path` or lies inside it.
fn overlapping(path: &Path, places: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    let path = resolve_lenient(path).display().to_string();
    let style = PathStyle::native();
    places.into_iter().find(|place| {
        let place = place.display().to_string();
        wamcp_policy::write_rules::is_within(&path, &place, style)
            || wamcp_policy::write_rules::is_within(&place, &path, style)
    })
}

fn root_holding<'a>(file: &Path, roots: &'a [PathBuf]) -> Option<&'a PathBuf> {
    let file = resolve_lenient(file).display().to_string();
    roots.iter().find(|root| {
        wamcp_policy::write_rules::is_within(
            &file,
            &root.display().to_string(),
            PathStyle::native(),
        )
    })
}

/// Resolves symlinks, junctions and 8.3 names. `dunce` keeps the ordinary
/// `C:\...` spelling on Windows instead of `\\?\C:\...` when, and only when,
/// both mean the same file.
pub fn resolve_existing(path: &Path) -> Option<PathBuf> {
    dunce::canonicalize(path).ok()
}

/// `path` with its longest existing ancestor resolved, so a trust file that
/// does not exist yet is still recognised when reached through a symbolic
/// link or a `..` spelling of its directory.
fn resolve_lenient(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut at = path;
    loop {
        if let Some(resolved) = resolve_existing(at) {
            return missing.iter().rev().fold(resolved, |p, name| p.join(name));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn project_root(entry: &str) -> Result<PathBuf, String> {
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

/// The home directory, resolved.
fn home_dir(env: EnvLookup) -> Option<String> {
    let home_var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    env_value(env, home_var)
        .map(PathBuf::from)
        .or_else(std::env::home_dir)
        .map(|h| resolve_existing(&h).unwrap_or(h).display().to_string())
}

/// The sandbox from `WAMCP_COMMAND_SANDBOX` (an unknown mode already read
/// as `require`: a typo must not turn confinement off) and
/// `WAMCP_COMMAND_WRITABLE`; refused caches become setting warnings. Cache entries are judged as written
/// and again resolved, so a symbolic link cannot lead a grant onto PATH.
fn command_sandbox(env: EnvLookup, settings: &Settings, warnings: &mut Vec<String>) -> Sandbox {
    let path_dirs: Vec<String> = env_value(env, "PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| d.is_absolute())
                .flat_map(|d| {
                    [
                        d.display().to_string(),
                        resolve_lenient(&d).display().to_string(),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    let home = home_dir(env);
    let home = Home::new(home.as_deref(), &path_dirs, PathStyle::native());
    let mut caches = writable_caches(settings.command_writable.as_deref(), &home, &|name| {
        env_value(env, name)
    });
    caches.entries.retain(|entry| {
        let resolved = resolve_lenient(Path::new(entry)).display().to_string();
        match refusal(&resolved, &home) {
            Some(why) => {
                caches.refused.push(format!(
                    "'{entry}' (resolved '{resolved}') is not made writable: {why}."
                ));
                false
            }
            None => true,
        }
    });
    warnings.extend(
        caches
            .refused
            .iter()
            .map(|r| format!("{}: {r}", settings::COMMAND_WRITABLE)),
    );
    Sandbox::new(settings.command_sandbox, caches)
}

/// Where `serve --http` registers its port, one file per port: the per-user
/// data directory's, whatever `WAMCP_DATA_DIR` says, so that every server
/// of the user finds every listener.
pub fn listener_registry(env: EnvLookup) -> Option<PathBuf> {
    config::wamcp_data_dir(env).map(|dir| dir.join("http-listeners"))
}

/// The home directory and system folders no root may be.
fn protected_dirs(env: EnvLookup) -> ProtectedDirs {
    ProtectedDirs::for_platform(PathStyle::native(), home_dir(env), |name| {
        env_value(env, name)
    })
}

/// The backend for a configured name (already lower-cased).
fn search_engine(name: &str) -> Option<Box<dyn SearchBackend>> {
    match name {
        "duckduckgo" => Some(Box::new(DuckDuckGoLite::default())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_overlapping_a_writable_root_either_way_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(tmp.path()).unwrap();
        let (root, elsewhere) = (base.join("project"), base.join("data"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let roots = root.display().to_string();
        let home = base.join("home").display().to_string();
        let env = move |name: &str| match name {
            "WAMCP_PROJECT_ROOTS" => Some(roots.clone()),
            "WAMCP_COMMAND_WRITABLE" => Some("none".into()),
            "HOME" | "USERPROFILE" => Some(home.clone()),
            _ => None,
        };
        let ctx = ServerContext::new(Startup::read(&env, &base), &env, &base, "stdio");
        let inside = root.join("bundles");
        assert_eq!(ctx.writable_place_overlapping(&inside), Some(root.clone()));
        assert_eq!(ctx.writable_place_overlapping(&base), Some(root.clone()));
        assert_eq!(
            ctx.writable_place_overlapping(&elsewhere.join("bundles")),
            None
        );
    }
}
