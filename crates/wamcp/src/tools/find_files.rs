//! `find_files`: files by name pattern.

use super::dot;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// e.g. "*.vert,*.frag" (comma-separated); with a slash, matched from the path's start, `*`
    /// crossing folders.
    pub file_glob: String,
    /// Directory to search.
    #[serde(default = "dot")]
    pub path: String,
    /// 1-500.
    #[serde(default = "five_hundred")]
    pub max_results: i64,
}

fn five_hundred() -> i64 {
    500
}

pub struct FindFiles;

impl ToolDef for FindFiles {
    type Params = Params;
    const NAME: &'static str = "find_files";
    const GROUPS: &'static [Group] = &[Group::Core];
    const DESCRIPTION: &'static str = "Find files by name under a directory, recursively, \
        skipping build and version-control folders.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let cwd = call.ctx.places.cwd.clone();
        call.within_search_budget("listing", move |bounds| {
            wamcp_fs::find_files(&p.file_glob, &p.path, &cwd, p.max_results, bounds)
        })
        .await
        .map(ToolOutput::Text)
    }
}
