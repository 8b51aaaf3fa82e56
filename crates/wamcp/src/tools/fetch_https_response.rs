//! `fetch_https_response`: the text of one HTTPS response from an allowed host.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// https URL on GitHub's hosts or premake.github.io.
    pub url: String,
}

pub struct FetchHttpsResponse;

impl ToolDef for FetchHttpsResponse {
    type Params = Params;
    const NAME: &'static str = "fetch_https_response";
    const GROUPS: &'static [Group] = &[Group::Net];
    const DESCRIPTION: &'static str = "Fetch a text response (raw file, API JSON; at most 2 MiB) \
        from GitHub's hosts, marked as untrusted. For documentation pages use fetch_web_page.";
    const HINTS: Hints = Hints::NETWORK_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let client = call.ctx.services.web()?;
        wamcp_web::fetch_raw::fetch_https_response(client, &p.url)
            .await
            .map(ToolOutput::Text)
    }
}
