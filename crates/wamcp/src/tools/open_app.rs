//! `open_app`: start a listed program without letting it take the
//! foreground.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// As listed in WAMCP_DESKTOP_APPS.
    pub command: String,
    /// At most 32.
    #[serde(default)]
    pub args: Vec<String>,
    /// Chromium/Electron: keep its accessibility tree readable in the background.
    #[serde(default)]
    pub accessibility: bool,
}

pub struct OpenApp;

impl ToolDef for OpenApp {
    type Params = Params;
    const NAME: &'static str = "open_app";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Start a program the user listed, without taking the \
        foreground (taken back if it grabs it). Its windows join the desktop tools' scope.";
    const HINTS: Hints = Hints::RUNS_PROGRAMS;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let programs = call.ctx.program_search();
        super::on_desktop::act(&call, move |d| {
            d.open_app(&p.command, &p.args, p.accessibility, &programs)
        })
        .await
    }
}
