//! What the tools use and the server builds only when first asked: the
//! command rules (parsing every grammar costs more than the rest of
//! start-up), the capability catalog, the HTTPS client, the desktop, and
//! the audit trail. Each trust file is read with its trust check, against
//! the places commands can write at that moment.

use super::places::Places;
use std::sync::OnceLock;
use wamcp_devenv::audit_log::{AuditLog, Entry};
use wamcp_devenv::capability::Catalog;
use wamcp_exec::rules_file::with_user_rules;
use wamcp_policy::command::rules::RuleSet;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_web::client::WebClient;
use wamcp_web::search::{DuckDuckGoLite, SearchBackend};

/// The services, each made on first use.
pub struct Services {
    command_rules: OnceLock<RuleSet>,
    catalog: OnceLock<Catalog>,
    /// Start-up stays fast for sessions that never touch the network.
    web: OnceLock<Result<WebClient, String>>,
    /// The desktop; it remembers which programs `open_app` started for as
    /// long as the server runs.
    #[cfg(windows)]
    desktop: OnceLock<wamcp_desktop::Desktop>,
    /// `WAMCP_DESKTOP_APPS` and `WAMCP_DESKTOP_PROCESSES`, as lists.
    pub desktop_apps: Vec<String>,
    /// See [`Services::desktop_apps`].
    pub desktop_processes: Vec<String>,
    /// The configured search backend; `None` when its name is unknown.
    pub search_engine: Option<Box<dyn SearchBackend>>,
    /// The audit trail of execution-capable calls; `None` without a
    /// per-user data directory.
    pub audit: Option<AuditLog>,
}

impl Services {
    /// Services for these settings, none of them built yet.
    pub fn new(
        desktop_apps: Vec<String>,
        desktop_processes: Vec<String>,
        search_backend: &str,
        audit: Option<AuditLog>,
    ) -> Services {
        Services {
            command_rules: OnceLock::new(),
            catalog: OnceLock::new(),
            web: OnceLock::new(),
            #[cfg(windows)]
            desktop: OnceLock::new(),
            desktop_apps,
            desktop_processes,
            search_engine: search_engine(search_backend),
            audit,
        }
    }

    /// The command rules, loaded (and the user's file read) on first use.
    pub fn command_rules(&self, places: &Places) -> &RuleSet {
        self.command_rules.get_or_init(|| {
            with_user_rules(
                RuleSet::builtin(),
                places.command_rules_file.as_deref(),
                &places.command_writable_places(),
            )
        })
    }

    /// The command rules as `wamcp config --check` proves them: the
    /// built-in grammars and rules run their examples too.
    pub fn checked_command_rules(&self, places: &Places) -> RuleSet {
        with_user_rules(
            RuleSet::builtin_checked(),
            places.command_rules_file.as_deref(),
            &places.command_writable_places(),
        )
    }

    /// The capability catalog, loaded (and the user's file read) on first
    /// use.
    pub fn catalog(&self, places: &Places) -> &Catalog {
        self.catalog.get_or_init(|| {
            Catalog::load_trusted(
                places.capabilities_file.clone(),
                &places.command_writable_places(),
            )
        })
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
}

/// The backend for a configured name (already lower-cased).
fn search_engine(name: &str) -> Option<Box<dyn SearchBackend>> {
    match name {
        "duckduckgo" => Some(Box::new(DuckDuckGoLite::default())),
        _ => None,
    }
}
