//! `scroll`: scroll messages checked against the scroll bar; the wheel
//! only with the user's permission.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_desktop::Direction;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// From windows().
    pub hwnd: i64,
    /// The control (text, id:<n>, class:<Class>[n] or #ref); the window when absent.
    pub target: Option<String>,
    pub direction: Direction,
    /// 1-100, default 3.
    #[serde(default = "three")]
    pub lines: u32,
    /// Allow the real wheel in the foreground; only if the user agreed.
    #[serde(default)]
    pub allow_foreground: bool,
}

fn three() -> u32 {
    3
}

pub struct Scroll;

impl ToolDef for Scroll {
    type Params = Params;
    const NAME: &'static str = "scroll";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Scroll a control, element or window without taking the \
        foreground; otherwise needs_permission.";
    const HINTS: Hints = Hints::DESKTOP_ACTION;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        super::on_desktop::act(&call, move |d| {
            d.scroll(
                p.hwnd,
                p.target.as_deref(),
                p.direction,
                p.lines,
                p.allow_foreground,
            )
        })
        .await
    }
}
