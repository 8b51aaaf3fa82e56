//! `move_window`: a window moved or sized without being activated.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_desktop::Placement;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// From windows().
    pub hwnd: i64,
    pub x: Option<i32>,
    pub y: Option<i32>,
    pub width: Option<i32>,
    pub height: Option<i32>,
}

pub struct MoveWindow;

impl ToolDef for MoveWindow {
    type Params = Params;
    const NAME: &'static str = "move_window";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Move or resize a window in screen pixels without \
        activating it; what is not given stays.";
    const HINTS: Hints = Hints::DESKTOP_ACTION;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let place = Placement {
            x: p.x,
            y: p.y,
            width: p.width,
            height: p.height,
        };
        super::on_desktop::act(&call, move |d| d.move_window(p.hwnd, place)).await
    }
}
