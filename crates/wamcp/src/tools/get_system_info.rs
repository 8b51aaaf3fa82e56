//! `get_system_info`: what machine and OS the server runs on.

use super::NoParams;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

pub struct GetSystemInfo;

impl ToolDef for GetSystemInfo {
    type Params = NoParams;
    const NAME: &'static str = "get_system_info";
    const GROUPS: &'static [Group] = &[Group::Core];
    const DESCRIPTION: &'static str = "The host: OS as people name it (\"Windows 11\"), build, \
        architecture, Python version, user, home and working directory.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, _params: NoParams) -> Result<ToolOutput, ToolError> {
        let mut info = wamcp_platform::system::system_info();
        info.python_version =
            wamcp_platform::system::python_version(&call.ctx.program_search()).await;
        Ok(ToolOutput::Data(
            serde_json::to_value(info).unwrap_or_default(),
        ))
    }
}
