//! `search_files`: matching lines under a directory.

use super::dot;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_fs::SearchRequest;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Text on one line; literal unless regex.
    pub pattern: String,
    /// Directory to search.
    #[serde(default = "dot")]
    pub path: String,
    /// Name patterns of the files to search, e.g. "*.cpp,*.h".
    #[serde(default)]
    pub file_glob: String,
    #[serde(default)]
    pub ignore_case: bool,
    /// pattern is a Rust regex.
    #[serde(default)]
    pub regex: bool,
    /// 1-100.
    #[serde(default = "one_hundred")]
    pub max_results: i64,
}

fn one_hundred() -> i64 {
    100
}

pub struct SearchFiles;

impl ToolDef for SearchFiles {
    type Params = Params;
    const NAME: &'static str = "search_files";
    const GROUPS: &'static [Group] = &[Group::Core];
    const DESCRIPTION: &'static str = "Search file contents under a directory, recursively; \
        matches come as `line: text` under each file's path. The cheapest way to find code.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let cwd = call.ctx.places.cwd.clone();
        call.within_search_budget("searching", move |bounds| {
            let request = SearchRequest {
                pattern: &p.pattern,
                path: &p.path,
                file_glob: &p.file_glob,
                ignore_case: p.ignore_case,
                regex: p.regex,
                max_results: p.max_results,
            };
            wamcp_fs::search_files(&request, &cwd, bounds)
        })
        .await
        .map(ToolOutput::Text)
    }
}
