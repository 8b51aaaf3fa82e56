//! `list_directory`: one directory's entries.

use super::dot;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Directory to list.
    #[serde(default = "dot")]
    pub path: String,
}

pub struct ListDirectory;

impl ToolDef for ListDirectory {
    type Params = Params;
    const NAME: &'static str = "list_directory";
    const GROUPS: &'static [Group] = &[Group::Core];
    const DESCRIPTION: &'static str =
        "List one directory: subdirectories first, then files, each sorted by name.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let cwd = call.ctx.places.cwd.clone();
        call.within_search_budget("listing", move |bounds| {
            wamcp_fs::list_directory(&p.path, &cwd, bounds)
        })
        .await
        .map(ToolOutput::Text)
    }
}
