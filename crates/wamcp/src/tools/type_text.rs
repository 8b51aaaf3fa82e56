//! `type_text`: a control's text replaced by window message and read back.

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
    /// Its text, id:<control id>, class:<Class>[n] or a #ref.
    pub target: String,
    /// The control's new text (at most 32,768 characters).
    pub text: String,
    /// Allow real keystrokes in the foreground; only if the user agreed.
    #[serde(default)]
    pub allow_foreground: bool,
}

pub struct TypeText;

impl ToolDef for TypeText {
    type Params = Params;
    const NAME: &'static str = "type_text";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Set a field's text without taking the foreground \
        (WM_SETTEXT or UIA Value, read back), never a password field; otherwise \
        needs_permission: ask the user.";
    const HINTS: Hints = Hints::DESKTOP_ACTION;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        super::on_desktop::act(&call, move |d| {
            d.type_text(p.hwnd, &p.target, &p.text, p.allow_foreground)
        })
        .await
    }
}
