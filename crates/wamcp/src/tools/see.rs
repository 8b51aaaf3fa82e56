//! `see`: a picture of one window and its controls, without bringing it
//! forward.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// From windows().
    pub hwnd: i64,
    /// Also the UI Automation tree, with #refs and states (stops at 5 s).
    #[serde(default)]
    pub with_tree: bool,
    /// The picture's longest side, 64-4096 px (default 1280); 0: none.
    pub max_edge: Option<u32>,
}

pub struct See;

impl ToolDef for See {
    type Params = Params;
    const NAME: &'static str = "see";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Look at a window without raising it: a PNG (or why \
        not) and its controls, the targets of the other tools.";
    const HINTS: Hints = Hints::LOCAL_READ;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = call.ctx.clone();
        let seen = blocking(Self::NAME, move || {
            ctx.services.desktop()?.see(p.hwnd, p.with_tree, p.max_edge)
        })
        .await?;
        Ok(match seen.png {
            Some(png) => ToolOutput::DataWithPng(seen.report, png),
            None => ToolOutput::Data(seen.report),
        })
    }
}
