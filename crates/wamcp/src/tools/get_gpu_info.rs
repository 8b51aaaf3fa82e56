//! `get_gpu_info`: adapters, Vulkan, graphics toolchain and SDK variables.

use super::NoParams;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

pub struct GetGpuInfo;

impl ToolDef for GetGpuInfo {
    type Params = NoParams;
    const NAME: &'static str = "get_gpu_info";
    const GROUPS: &'static [Group] = &[Group::Build];
    const DESCRIPTION: &'static str = "GPU adapters with driver version and memory, Vulkan \
        devices, shader compilers on PATH, and graphics SDK variables.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, _params: NoParams) -> Result<ToolOutput, ToolError> {
        let programs = call.ctx.program_search();
        let report = wamcp_platform::gpu::gpu_report(&programs);
        call.unless_cancelled(async { Ok(report.await) })
            .await
            .map(ToolOutput::Text)
    }
}
