//! `web_search`: titles, URLs and snippets from the search backend, fenced
//! as untrusted.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// At most 400 characters.
    pub query: String,
    /// 1-10.
    #[serde(default = "five")]
    pub max_results: i64,
}

fn five() -> i64 {
    wamcp_policy::limits::DEFAULT_WEB_RESULTS as i64
}

pub struct WebSearch;

impl ToolDef for WebSearch {
    type Params = Params;
    const NAME: &'static str = "web_search";
    const GROUPS: &'static [Group] = &[Group::Search, Group::Research];
    const DESCRIPTION: &'static str = "Search the web (DuckDuckGo): numbered titles, URLs and \
        snippets; open one with fetch_web_page. 'Blocked' is not 'no results': do not rephrase \
        and retry.";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = &call.ctx;
        let Some(backend) = ctx.services.search_engine.as_deref() else {
            return Err(ToolError::new(
                ErrorType::SearchBackendInvalid,
                format!(
                    "The search backend '{}' does not exist; the only one is 'duckduckgo'.",
                    ctx.search_backend
                ),
            )
            .recover(
                "The user can fix WAMCP_SEARCH_BACKEND (or remove it) and restart the server.",
            ));
        };
        let client = ctx.services.web()?;
        wamcp_web::search::web_search(client, backend, &p.query, p.max_results)
            .await
            .map(ToolOutput::Text)
    }
}
