//! `click`: a control clicked by window message; the pointer only with
//! the user's permission.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_desktop::How;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// From windows().
    pub hwnd: i64,
    /// Its text, id:<control id>, class:<Class>[n] or a #ref, as see lists them.
    pub target: String,
    /// Not one click; double and right use the real pointer.
    pub how: Option<How>,
    /// Allow the foreground and the real pointer; only if the user agreed.
    #[serde(default)]
    pub allow_foreground: bool,
}

pub struct Click;

impl ToolDef for Click {
    type Params = Params;
    const NAME: &'static str = "click";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Click a control or element without taking the \
        foreground (BM_CLICK, the accessibility default action, UIA patterns); otherwise the \
        answer is needs_permission: ask the user.";
    const HINTS: Hints = Hints::DESKTOP_ACTION;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        super::on_desktop::act(&call, move |d| match p.how {
            None => d.click(p.hwnd, &p.target, p.allow_foreground),
            Some(how) => d.click_as(p.hwnd, &p.target, how, p.allow_foreground),
        })
        .await
    }
}
