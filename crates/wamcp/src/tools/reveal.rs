//! `reveal`: the one desktop tool that takes the foreground.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// From windows().
    pub hwnd: i64,
}

pub struct Reveal;

impl ToolDef for Reveal {
    type Params = Params;
    const NAME: &'static str = "reveal";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Bring a window to the front (restored if minimised), \
        verified. This takes the user's foreground: only when they asked.";
    const HINTS: Hints = Hints::DESKTOP_ACTION;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        super::on_desktop::act(&call, move |d| d.reveal(p.hwnd)).await
    }
}
