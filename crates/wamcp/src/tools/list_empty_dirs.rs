//! `list_empty_dirs`: empty directory trees, for clean-up.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Directory to look under.
    pub path: String,
}

pub struct ListEmptyDirs;

impl ToolDef for ListEmptyDirs {
    type Params = Params;
    const NAME: &'static str = "list_empty_dirs";
    const GROUPS: &'static [Group] = &[Group::Core];
    const DESCRIPTION: &'static str = "Find directories with no files at any depth, deepest first (the \
        order to remove them in).";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let cwd = call.ctx.places.cwd.clone();
        call.within_search_budget("walking", move |bounds| {
            wamcp_fs::list_empty_dirs(&p.path, &cwd, bounds)
        })
        .await
        .map(ToolOutput::Text)
    }
}
