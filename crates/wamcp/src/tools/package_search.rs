//! `package_search`: find a package's exact id before installing it.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Instant;
use wamcp_devenv::audit_log::Entry;
use wamcp_policy::devenv::audit::{Event, Outcome};
use wamcp_policy::devenv::packages::{Source, query_problem};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// 1-160 characters.
    pub query: String,
    #[serde(default = "winget")]
    pub source: Source,
}

fn winget() -> Source {
    Source::Winget
}

pub struct PackageSearch;

impl ToolDef for PackageSearch {
    type Params = Params;
    const NAME: &'static str = "package_search";
    const GROUPS: &'static [Group] = &[Group::Packages];
    const DESCRIPTION: &'static str = "Search a package manager (winget, Chocolatey, Scoop, apt, \
        Homebrew) for a package's exact id, for package_install.";
    const HINTS: Hints = Hints::NETWORK_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        if let Some(problem) = query_problem(&p.query) {
            return Err(
                ToolError::new(ErrorType::InvalidInput, format!("{problem}."))
                    .recover("Search with plain words.")
                    .detail("status", "invalid_input"),
            );
        }
        let started = Instant::now();
        let programs = call.ctx.program_search();
        let found = wamcp_devenv::packages::search(&programs, p.source, p.query.trim()).await;
        let outcome = match found["status"].as_str() {
            Some("completed") => Outcome::Succeeded,
            Some("failed") => Outcome::Failed,
            Some("unknown") => Outcome::Unknown,
            _ => Outcome::NotExecuted,
        };
        call.ctx
            .audit(Entry {
                tool: "package_search",
                subject: Some(p.source.name().to_string()),
                safety: None,
                event: Event::Execution,
                outcome,
                duration: started.elapsed(),
                detail: found["status"].as_str().map(str::to_string),
            })
            .await;
        Ok(ToolOutput::Data(found))
    }
}
