//! The state every tool shares, built once at start-up and held in one
//! `Arc`, so the server behaves the same whether a client keeps a session or
//! sends stateless requests. It is split by job:
//!
//! - the typed settings' derived values (groups, hosts, budgets) live here;
//! - [`places::Places`]: what may be written, what is trusted, where
//!   programs are not looked up;
//! - [`session::Session`]: what the running server remembers;
//! - [`services::Services`]: what is built on first use.
//!
//! Start-up problems are collected rather than raised: the server always
//! starts, and `get_server_info` says what went wrong.

pub mod places;
pub mod services;
pub mod session;

use crate::config::{self, EnvLookup, Resolution, env_value};
use crate::registry::{self, ToolEntry};
use crate::settings::{self, Adopt, Settings};
use places::{Places, project_root};
use services::Services;
use session::Session;
use std::path::{Path, PathBuf};
use wamcp_devenv::audit_log::{AuditLog, Entry};
use wamcp_devenv::capability::Catalog;
use wamcp_exec::command::Policy;
use wamcp_exec::confine::Sandbox;
use wamcp_platform::paths::{resolve_existing, resolved};
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::command::rules::RuleSet;
use wamcp_policy::command::sandbox::{Home, refusal, writable_caches};
use wamcp_policy::groups::{GroupSelection, parse_groups};
use wamcp_policy::hosts::{ALLOWED_DOC_HOSTS, ALLOWED_NETWORK_HOSTS};
use wamcp_policy::secrets::Store;
use wamcp_policy::workspace::{PathStyle, ProtectedDirs};

pub use places::ClientRoots;

/// Everything a tool call may use.
pub struct ServerContext {
    /// `stdio`, `http` or `cli`.
    pub transport: &'static str,
    /// The tool groups selected, and why when the selection was refused.
    pub groups: GroupSelection,
    /// The tools this server registers, in `tools/list` order.
    pub registered: Vec<&'static ToolEntry>,
    /// The configuration as resolved from file, profile and environment.
    pub resolution: Resolution,
    /// Hosts `fetch_web_page` reads without a grant.
    pub documentation_hosts: Vec<String>,
    /// Whether a host outside the lists may be approved by the user.
    pub host_consent: bool,
    /// Whether such an approval is written to the grants file.
    pub host_grant_persist: bool,
    /// The search backend's configured name.
    pub search_backend: String,
    /// How long one search, find or listing may take.
    pub search_budget: std::time::Duration,
    /// Problems with individual setting values; each names the setting.
    pub setting_warnings: Vec<String>,
    /// How commands are confined by the operating system.
    pub sandbox: Sandbox,
    /// Whether roots a client lists (MCP `roots`) become writable roots:
    /// on for stdio unless `WAMCP_CLIENT_ROOTS` is off; never over HTTP,
    /// where one client's roots would open them to every session.
    pub client_roots_enabled: bool,
    /// Where tools and commands may write, and what is trusted.
    pub places: Places,
    /// What the running server remembers.
    pub session: Session,
    /// What is built on first use.
    pub services: Services,
    /// The undo journal.
    pub undo: crate::undo::Undo,
    /// Where credentials live: refused to the reading tools, hidden from
    /// confined commands. [`ServerContext::secrets`] adds the roots.
    secret_stores: wamcp_fs::Secrets,
    /// The hosts commands with the network may reach; the hosts of each
    /// client root's remotes join when the root is first taken.
    egress_hosts: wamcp_web::egress::EgressHosts,
    /// The roots whose remotes were read: once each, so a remote the
    /// agent adds is never read as the project's.
    remotes_read: std::sync::Mutex<std::collections::HashSet<PathBuf>>,
}

/// What start-up read before building the context.
pub struct Startup {
    /// The config file that was loaded, if any.
    pub config_file: Option<PathBuf>,
    /// Where the config file is looked for, loaded or not.
    pub config_location: Option<PathBuf>,
    /// The resolved configuration.
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
    /// The context for `startup`. A config file a command could rewrite (it
    /// lies inside a writable root, as a project's `input/config.json` named
    /// in WAMCP_CONFIG_FILE would) could turn confinement off for the next
    /// start: it is set aside, and the server runs on the environment and
    /// defaults, saying why.
    pub fn new(
        startup: Startup,
        env: EnvLookup,
        cwd: &Path,
        transport: &'static str,
    ) -> ServerContext {
        let location = startup.config_location.clone();
        let context = ServerContext::build(startup, env, cwd, transport);
        let Some(message) = context.config_in_writable_place() else {
            return context;
        };
        let without_file = Startup {
            config_file: None,
            config_location: location,
            resolution: config::resolve(Err(message), env),
        };
        ServerContext::build(without_file, env, cwd, transport)
    }

    fn build(
        startup: Startup,
        env: EnvLookup,
        cwd: &Path,
        transport: &'static str,
    ) -> ServerContext {
        let settings = Settings::read(&startup.resolution);
        let mut warnings = settings.warnings.clone();
        wamcp_exec::environment::pass(settings.command_pass_variables.clone());
        let groups = parse_groups(settings.tools.as_deref(), settings.web_research);
        let mut sandbox = command_sandbox(env, &settings, &mut warnings);
        if let Some(registry) = listener_registry(env) {
            sandbox = sandbox.with_listener_registry(registry);
        }
        let places = places(&startup, &settings, env, cwd, &sandbox, &mut warnings);
        let stores = secret_stores(env, &settings, &places, &mut warnings);
        let mut hidden: Vec<(PathBuf, bool)> = stores
            .iter()
            .map(|s| (PathBuf::from(&s.path), s.for_git))
            .collect();
        if cfg!(unix) {
            let sockets = wamcp_policy::secrets::daemon_sockets(
                env_value(env, "SSH_AUTH_SOCK").as_deref(),
                env_value(env, "XDG_RUNTIME_DIR").as_deref(),
                user_id(),
                home_dir(env).as_deref(),
            );
            hidden.extend(sockets.into_iter().map(|(p, git)| (PathBuf::from(p), git)));
        }
        let sandbox = sandbox.with_secret_stores(hidden);
        let secret_stores =
            wamcp_fs::Secrets::new(stores.into_iter().map(|s| (PathBuf::from(s.path), s.what)));
        let egress_hosts = crate::egress::hosts(&settings.command_hosts);
        let remotes_read: std::collections::HashSet<PathBuf> =
            places.writable_roots().into_iter().collect();
        for root in &remotes_read {
            egress_hosts.add_remotes(crate::egress::root_remote_hosts(root));
        }
        let sandbox = sandbox.with_egress(std::sync::Arc::new(crate::egress::CommandEgress(
            wamcp_web::egress::EgressProxy::new(egress_hosts.clone()),
        )));
        let audit = places.data_dir.clone().map(AuditLog::new);
        let undo = crate::undo::Undo::open(places.data_dir.as_deref(), &settings, |dir| {
            places.writable_place_overlapping(dir)
        });
        ServerContext {
            transport,
            registered: registry::registered(&groups.groups),
            groups,
            resolution: startup.resolution,
            documentation_hosts: documentation_hosts(&settings.extra_doc_hosts),
            host_consent: settings.host_consent,
            host_grant_persist: settings.host_grant_persist,
            search_budget: settings.search_budget,
            setting_warnings: warnings,
            sandbox,
            client_roots_enabled: transport == "stdio" && settings.client_roots,
            services: Services::new(
                settings.desktop_apps,
                settings.desktop_processes,
                &settings.search_backend,
                audit,
            ),
            search_backend: settings.search_backend,
            places,
            session: Session::default(),
            undo,
            secret_stores,
            egress_hosts,
            remotes_read: std::sync::Mutex::new(remotes_read),
        }
    }

    /// The secret stores, with this moment's roots as the project (whose
    /// own `.env` files are its to read).
    pub fn secrets(&self) -> wamcp_fs::Secrets {
        self.secret_stores.with_roots(self.places.run_roots())
    }

    /// Why the loaded config file cannot be trusted, if it lies where a
    /// command can write.
    fn config_in_writable_place(&self) -> Option<String> {
        let file = self.places.config_file.as_ref()?;
        let held = self.places.untrusted_because(file)?;
        Some(format!(
            "The config file {} is {held}; it was not used. Move it outside the writable roots (for example \
             to the per-user location) or name one there with WAMCP_CONFIG_FILE.",
            file.display()
        ))
    }

    /// How programs are looked up now: never by name where the agent can
    /// write (the writable roots, every client root ever taken, the caches
    /// and the system's writable places). Made for each use, from the
    /// places as they are, and handed to whatever starts a program.
    pub fn program_search(&self) -> ProgramSearch {
        ProgramSearch::distrusting(self.places.distrusted())
    }

    /// Takes the client's list of roots (`file:` URIs), judged. Programs
    /// are distrusted in the new roots (judging records them) before the
    /// roots become writable.
    pub fn set_client_roots(&self, uris: &[String]) {
        let judged = self.places.judge_client_roots(uris);
        let mut read = self.remotes_read.lock().unwrap_or_else(|e| e.into_inner());
        for root in &judged.accepted {
            if read.insert(root.clone()) {
                self.egress_hosts
                    .add_remotes(crate::egress::root_remote_hosts(root));
            }
        }
        drop(read);
        self.places.store_client_roots(judged);
    }

    /// Hosts the grants file grants now, read fresh, or why it grants none.
    pub fn file_grants(&self) -> Result<Vec<String>, String> {
        let file = &self.places.granted_hosts_file;
        // A grants file inside a root could be rewritten by any command.
        if let Some(held) = self.places.untrusted_because(file) {
            return Err(format!(
                "{} is {held}, so it grants nothing; move it outside the writable roots \
                 (WAMCP_ALLOWED_HOSTS_FILE)",
                file.display()
            ));
        }
        crate::hostgrants::read(file)
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
            .chain(self.session.session_grants());
        for host in extra {
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
        hosts
    }

    /// The project a command asked to run in `asked_dir` runs in (its root),
    /// or `None` when the directory is not in one.
    pub fn project_of(&self, asked_dir: Option<&str>) -> Option<PathBuf> {
        let projects = self.places.projects_among(&self.places.run_roots());
        let dir = wamcp_exec::command::working_directory(
            asked_dir,
            "working_directory",
            &self.places.cwd,
            &projects,
        )
        .ok()?;
        projects
            .into_iter()
            .find(|root| wamcp_platform::paths::inside(&dir, root))
    }

    /// What `run_powershell` and `build_project` decide with, for `roots`
    /// (from [`Places::run_roots`]) and the `projects` among them.
    pub fn command_policy<'a>(
        &'a self,
        roots: &'a [PathBuf],
        projects: &'a [PathBuf],
    ) -> Policy<'a> {
        let search = self.program_search();
        Policy {
            cwd: &self.places.cwd,
            roots,
            projects,
            rules: self.command_rules(),
            sandbox: &self.sandbox,
            git: self.sandbox.git_pins(&search),
            search,
            journaled: self.undo.keeping(projects),
        }
    }

    /// Runs `write` with the write scope for `target`, resolved now.
    pub fn with_write_scope<T>(
        &self,
        target: &Path,
        write: impl FnOnce(&wamcp_fs::WriteScope) -> T,
    ) -> T {
        self.with_approved_write_scope(target, None, write)
    }

    /// Runs `write` with the write scope for `target`, where the user
    /// approved writing the agent trust file `approved`.
    pub fn with_approved_write_scope<T>(
        &self,
        target: &Path,
        approved: Option<&Path>,
        write: impl FnOnce(&wamcp_fs::WriteScope) -> T,
    ) -> T {
        self.places.prepare_write(target);
        let (roots, protected) = (self.places.run_roots(), self.places.write_protected());
        write(&wamcp_fs::WriteScope {
            roots: &roots,
            protected: &protected,
            approved,
        })
    }

    /// The command rules, loaded on first use.
    pub fn command_rules(&self) -> &RuleSet {
        self.services.command_rules(&self.places)
    }

    /// The command rules with every built-in example checked too.
    pub fn checked_command_rules(&self) -> RuleSet {
        self.services.checked_command_rules(&self.places)
    }

    /// The capability catalog, loaded on first use.
    pub fn catalog(&self) -> &Catalog {
        self.services.catalog(&self.places)
    }

    /// Appends to the audit trail; `Some` says why it could not be written.
    pub async fn audit(&self, entry: Entry) -> Option<String> {
        self.services.audit(entry).await
    }

    /// Every start-up message worth a line on stderr.
    pub fn startup_messages(&self) -> Vec<String> {
        let mut messages: Vec<String> = [
            self.groups.error.clone(),
            self.groups.posture_warning(),
            self.resolution.config_error.clone(),
            self.places
                .workspace_note
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

/// The places for these settings; project roots that cannot be used become
/// setting warnings.
fn places(
    startup: &Startup,
    settings: &Settings,
    env: EnvLookup,
    cwd: &Path,
    sandbox: &Sandbox,
    warnings: &mut Vec<String>,
) -> Places {
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
    let mut places = Places {
        cwd: cwd.to_path_buf(),
        // Resolved now, even before it exists, so that later its resolved
        // form can be compared with this one (see `run_roots`).
        download_root: resolved(&download_root),
        project_roots_configured: settings.project_roots.clone(),
        project_roots: project_roots(&settings.project_roots, warnings),
        adopted_workspace: None,
        workspace_note: None,
        client_roots: Default::default(),
        ever_client_roots: Default::default(),
        config_file: startup.config_file.clone(),
        config_location: startup.config_location.clone(),
        command_rules_file: settings.command_rules.as_ref().map(|p| cwd.join(p)),
        capabilities_file: settings.capabilities_file.as_ref().map(|p| cwd.join(p)),
        granted_hosts_file: granted_hosts_file(settings, env, cwd),
        wamcp_config_dir: config::user_config_dir(env).map(|d| d.join("wamcp")),
        http_token_file: crate::http::token_file(env),
        audit_files: data_dir
            .iter()
            .flat_map(|d| AuditLog::new(d.clone()).files())
            .collect(),
        data_dir,
        caches: sandbox.caches().entries.clone(),
        protected_dirs: protected_dirs(env),
    };
    // `auto` is what the host entries set (Codex starts its servers in the
    // session directory and sends no roots): the working directory is the
    // project unless the user named projects themselves.
    let adopt = match settings.workspace_from_cwd {
        Adopt::Off => false,
        Adopt::On => true,
        Adopt::Auto => settings.project_roots.is_empty(),
    };
    if adopt {
        match resolve_existing(cwd)
            .ok_or_else(|| format!("'{}' cannot be resolved.", cwd.display()))
            .and_then(|resolved| places.judge_root(resolved))
        {
            Ok(path) => places.adopted_workspace = Some(path),
            Err(reason) => places.workspace_note = Some(reason),
        }
    }
    places
}

/// The `WAMCP_PROJECT_ROOTS` entries that exist, resolved, once each.
fn project_roots(entries: &[String], warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for entry in entries {
        match project_root(entry) {
            Ok(path) if !roots.contains(&path) => roots.push(path),
            Ok(_) => {}
            Err(reason) => warnings.push(format!(
                "{}: '{entry}' skipped: {reason}",
                settings::PROJECT_ROOTS
            )),
        }
    }
    roots
}

/// The built-in documentation hosts and the user's extra ones.
fn documentation_hosts(extra: &[String]) -> Vec<String> {
    let mut hosts: Vec<String> = ALLOWED_DOC_HOSTS.iter().map(|h| h.to_string()).collect();
    for host in extra {
        if !hosts.contains(host) {
            hosts.push(host.clone());
        }
    }
    hosts
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
/// `WAMCP_COMMAND_WRITABLE`; refused caches become setting warnings. Cache
/// entries are judged as written and again resolved, so a symbolic link
/// cannot lead a grant onto PATH.
fn command_sandbox(env: EnvLookup, settings: &Settings, warnings: &mut Vec<String>) -> Sandbox {
    let path_dirs: Vec<String> = env_value(env, "PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| d.is_absolute())
                .flat_map(|d| [d.display().to_string(), resolved(&d).display().to_string()])
                .collect()
        })
        .unwrap_or_default();
    let home = home_dir(env);
    let home = Home::new(home.as_deref(), &path_dirs, PathStyle::native());
    let mut caches = writable_caches(settings.command_writable.as_deref(), &home, &|name| {
        env_value(env, name)
    });
    caches.entries.retain(|entry| {
        let resolved = resolved(Path::new(entry)).display().to_string();
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
    let sandbox = Sandbox::new(settings.command_sandbox, caches);
    match config::wamcp_data_dir(env) {
        Some(dir) => sandbox.with_kept_proof(dir.join("confinement-proof.txt")),
        None => sandbox,
    }
}

/// Where `serve --http` registers its port, one file per port: the per-user
/// data directory's, whatever `WAMCP_DATA_DIR` says, so that every server
/// of the user finds every listener.
pub fn listener_registry(env: EnvLookup) -> Option<PathBuf> {
    config::wamcp_data_dir(env).map(|dir| dir.join("http-listeners"))
}

/// The built-in secret stores, `WAMCP_SECRET_PATHS` and wamcp's own HTTP
/// token. An entry that is not absolute (after `~`) is a warning, never a
/// guess at what it meant.
fn secret_stores(
    env: EnvLookup,
    settings: &Settings,
    places: &Places,
    warnings: &mut Vec<String>,
) -> Vec<Store> {
    let home = home_dir(env);
    let mut stores = wamcp_policy::secrets::stores(PathStyle::native(), home.as_deref(), |name| {
        env_value(env, name)
    });
    let listed = |path: &Path, what: &str| Store {
        path: path.display().to_string(),
        what: what.into(),
        for_git: false,
    };
    for entry in &settings.secret_paths {
        let expanded = match (entry.strip_prefix('~'), &home) {
            (Some(rest), Some(home)) => {
                PathBuf::from(home).join(rest.trim_start_matches(['/', '\\']))
            }
            _ => PathBuf::from(entry),
        };
        if expanded.is_absolute() {
            stores.push(listed(&expanded, "a place the user listed as secret"));
        } else {
            warnings.push(format!(
                "{}: '{entry}' is not an absolute path; it is not protected.",
                settings::SECRET_PATHS
            ));
        }
    }
    if let Some(token) = &places.http_token_file {
        stores.push(listed(token, "wamcp's HTTP bearer token"));
    }
    stores
}

/// The user this server runs as, for the per-user socket folders.
fn user_id() -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").ok().map(|m| m.uid())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The home directory and system folders no root may be.
fn protected_dirs(env: EnvLookup) -> ProtectedDirs {
    ProtectedDirs::for_platform(PathStyle::native(), home_dir(env), |name| {
        env_value(env, name)
    })
}

/// The grants file: the one `WAMCP_ALLOWED_HOSTS_FILE` names, else the
/// user's, beside wamcp's config file. Never a file in the working
/// directory by default: that is usually a project root, where a grants
/// file grants nothing (a command could write it), so `wamcp hostgrants`
/// run in a project would write a file the server then ignores.
fn granted_hosts_file(settings: &Settings, env: EnvLookup, cwd: &Path) -> PathBuf {
    const NAME: &str = "mcp-allowed-hosts.json";
    match settings.allowed_hosts_file.as_deref() {
        Some(named) => cwd.join(named),
        None => config::user_config_dir(env)
            .map(|dir| dir.join("wamcp").join(NAME))
            .unwrap_or_else(|| cwd.join(NAME)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stdio context in `base` whose one project root is `base/project`
    /// (made here), with no caches and a home of its own.
    fn context_with_project(base: &Path) -> (ServerContext, PathBuf) {
        let root = base.join("project");
        std::fs::create_dir_all(&root).unwrap();
        let roots = root.display().to_string();
        let home = base.join("home").display().to_string();
        let env = move |name: &str| match name {
            "WAMCP_PROJECT_ROOTS" => Some(roots.clone()),
            "WAMCP_COMMAND_WRITABLE" => Some("none".into()),
            "HOME" | "USERPROFILE" => Some(home.clone()),
            _ => None,
        };
        let ctx = ServerContext::new(Startup::read(&env, base), &env, base, "stdio");
        (ctx, root)
    }

    #[test]
    fn a_folder_overlapping_a_writable_root_either_way_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(tmp.path()).unwrap();
        let (ctx, root) = context_with_project(&base);
        let elsewhere = base.join("data");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let places = &ctx.places;
        let inside = root.join("bundles");
        assert_eq!(
            places.writable_place_overlapping(&inside),
            Some(root.clone())
        );
        assert_eq!(places.writable_place_overlapping(&base), Some(root.clone()));
        assert_eq!(
            places.writable_place_overlapping(&elsewhere.join("bundles")),
            None
        );
    }

    #[test]
    fn a_client_root_once_taken_stays_distrusted_for_program_lookups() {
        let tmp = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(tmp.path()).unwrap();
        let (ctx, project) = context_with_project(&base);
        let client = base.join("client");
        std::fs::create_dir_all(&client).unwrap();
        let uri = url::Url::from_directory_path(&client).unwrap().to_string();
        ctx.set_client_roots(&[uri]);
        assert!(ctx.places.writable_roots().contains(&client));
        ctx.set_client_roots(&[]);
        assert!(!ctx.places.writable_roots().contains(&client));
        // A program planted while it was a root is still planted.
        let distrusted = ctx.places.distrusted();
        assert!(distrusted.contains(&client), "{distrusted:?}");
        assert!(distrusted.contains(&project), "{distrusted:?}");
    }
}
