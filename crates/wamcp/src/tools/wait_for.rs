//! `wait_for`: a bounded wait for a control or element to appear or go.

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
    /// As for click.
    pub target: String,
    /// Wait for it to go instead.
    #[serde(default)]
    pub gone: bool,
    /// 1-60, default 10.
    #[serde(default = "ten")]
    pub seconds: u32,
}

fn ten() -> u32 {
    10
}

pub struct WaitFor;

impl ToolDef for WaitFor {
    type Params = Params;
    const NAME: &'static str = "wait_for";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Wait until a target appears (or is gone); met says whether \
        it did in time.";
    const HINTS: Hints = Hints::LOCAL_READ;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        super::on_desktop::act(&call, move |d| {
            d.wait_for(p.hwnd, &p.target, p.gone, p.seconds)
        })
        .await
    }
}
