//! `write_file`: create a file, or replace one when asked to.

use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Inside a writable root (see get_server_info).
    pub path: String,
    /// The whole file, as UTF-8.
    pub content: String,
    /// Replace an existing file.
    #[serde(default)]
    pub overwrite: bool,
}

pub struct WriteFile;

impl ToolDef for WriteFile {
    type Params = Params;
    const NAME: &'static str = "write_file";
    const HOOK: HookClass = HookClass::Write;
    const GROUPS: &'static [Group] = &[Group::Edit];
    const DESCRIPTION: &'static str = "Create a text file, or replace one with overwrite=true, \
        inside a writable root, creating missing folders. To change part of a file, use \
        edit_file.";
    const HINTS: Hints = Hints::LOCAL_WRITE;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let approved = super::approve_trust_write(&call, &p.path).await?;
        let scope = crate::undo::file_scope(&call.ctx, &p.path, approved.as_deref());
        let (ctx, path) = (call.ctx.clone(), p.path.clone());
        let writing = async move {
            blocking(Self::NAME, move || {
                ctx.with_approved_write_scope(Path::new(&p.path), approved.as_deref(), |scope| {
                    wamcp_fs::write_file(&p.path, &p.content, p.overwrite, &ctx.places.cwd, scope)
                })
            })
            .await
            .map(ToolOutput::Text)
        };
        crate::undo::recorded(&call, scope, Self::NAME, &path, writing).await
    }
}
