//! `close_window`: a window asked to close, as its close button does.

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

pub struct CloseWindow;

impl ToolDef for CloseWindow {
    type Params = Params;
    const NAME: &'static str = "close_window";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Ask a window to close, as its close button does (the \
        program may ask to save: see opened).";
    const HINTS: Hints = Hints::DESKTOP_ACTION;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        super::on_desktop::act(&call, move |d| d.close_window(p.hwnd)).await
    }
}
