//! `key`: keystrokes, which only ever reach the focused window.

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
    /// Ctrl+s, Alt+F4, ^s, ^{END}, {ENTER}, {TAB 3}; other characters are typed.
    pub keys: String,
    /// Must be true (keys need the foreground); only if the user agreed.
    #[serde(default)]
    pub allow_foreground: bool,
}

pub struct Key;

impl ToolDef for Key {
    type Params = Params;
    const NAME: &'static str = "key";
    const GROUPS: &'static [Group] = &[Group::Desktop];
    const DESCRIPTION: &'static str = "Send keystrokes or shortcuts to a window. Needs the \
        foreground (needs_permission without allow_foreground); prefer click and type_text.";
    const HINTS: Hints = Hints::DESKTOP_ACTION;
    const WINDOWS_ONLY: bool = true;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        super::on_desktop::act(&call, move |d| d.key(p.hwnd, &p.keys, p.allow_foreground)).await
    }
}
