//! `download_file`: a file from an allowed host into the download root.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// https URL on GitHub's hosts (release assets, raw files) or premake.github.io.
    pub url: String,
    /// Name to save as (path parts dropped); default: the URL's last segment.
    #[serde(default)]
    pub filename: Option<String>,
}

pub struct DownloadFile;

impl ToolDef for DownloadFile {
    type Params = Params;
    const NAME: &'static str = "download_file";
    const LONG_RUNNING: bool = true;
    const GROUPS: &'static [Group] = &[Group::Net];
    const DESCRIPTION: &'static str = "Download a file (at most 500 MiB) from GitHub's hosts into \
        the download root; never overwrites.";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = &call.ctx;
        let client = ctx.services.web()?;
        wamcp_web::download::download_file(
            client,
            &p.url,
            p.filename.as_deref(),
            &ctx.places.download_root,
        )
        .await
        .map(|done| ToolOutput::Text(done.report()))
    }
}
