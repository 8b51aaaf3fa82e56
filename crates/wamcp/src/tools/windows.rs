//! `windows`: the visible top-level windows, and which may be acted on.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {}

pub struct Windows;

impl ToolDef for Windows {
    type Params = Params;
    const NAME: &'static str = "windows";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "List visible windows with their hwnd, title, process \
        and in_scope (whether the desktop tools may act on it).";
    const HINTS: Hints = Hints::LOCAL_READ;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, _: Params) -> Result<ToolOutput, ToolError> {
        super::on_desktop::act(&call, |desktop| Ok(desktop.windows())).await
    }
}
