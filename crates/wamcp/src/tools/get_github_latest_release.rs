//! `get_github_latest_release`: the newest release of a GitHub repository.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// owner/repository, e.g. "premake/premake-core" (not a URL).
    pub repository: String,
}

pub struct GetGithubLatestRelease;

impl ToolDef for GetGithubLatestRelease {
    type Params = Params;
    const NAME: &'static str = "get_github_latest_release";
    const GROUPS: &'static [Group] = &[Group::Net];
    const DESCRIPTION: &'static str = "Latest published release of a GitHub repository: tag, name, date, page, and \
        assets with size and download URL (pass one to download_file).";
    const HINTS: Hints = Hints::NETWORK_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let client = call.ctx.services.web()?;
        wamcp_web::github::latest_release(client, &p.repository)
            .await
            .map(ToolOutput::Data)
    }
}
