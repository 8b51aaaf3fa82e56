//! What every desktop tool does around its one call: run it off the async
//! runtime (window messages wait up to their timeout) and answer as data.

use crate::registry::{ToolCall, ToolOutput, blocking};
use serde_json::Value;
use wamcp_desktop::Desktop;
use wamcp_policy::error::ToolError;

pub async fn act(
    call: &ToolCall,
    work: impl FnOnce(&Desktop) -> Result<Value, ToolError> + Send + 'static,
) -> Result<ToolOutput, ToolError> {
    let ctx = call.ctx.clone();
    blocking("desktop", move || work(ctx.services.desktop()?))
        .await
        .map(ToolOutput::Data)
}
