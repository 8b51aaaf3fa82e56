//! `read_file`: a window of a text file, as plain text.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// File to read, absolute or relative to the server's working directory.
    pub path: String,
    /// First line to return, counting from 1.
    #[serde(default = "super::first_line")]
    pub start_line: i64,
    /// Most lines to return (at most 2000).
    #[serde(default = "super::page_of_lines")]
    pub max_lines: i64,
}

pub struct ReadFile;

impl ToolDef for ReadFile {
    type Params = Params;
    const NAME: &'static str = "read_file";
    const GROUPS: &'static [Group] = &[Group::Core];
    const DESCRIPTION: &'static str = "Read a text file's lines, up to 2000 lines or 256 KiB per call; a \
        longer file ends with the exact call that reads on.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let cwd = call.ctx.cwd.clone();
        blocking(move || wamcp_fs::read_file(&p.path, &cwd, p.start_line, p.max_lines))
            .await
            .map(ToolOutput::Text)
    }
}
