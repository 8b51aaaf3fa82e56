//! `edit_file`: replace an exact string in an existing file.

use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Inside a writable root.
    pub path: String,
    /// Exact text to replace, indentation included; must occur once unless replace_all.
    pub old_string: String,
    /// The replacement; empty deletes.
    pub new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
}

pub struct EditFile;

impl ToolDef for EditFile {
    type Params = Params;
    const NAME: &'static str = "edit_file";
    const HOOK: HookClass = HookClass::Write;
    const GROUPS: &'static [Group] = &[Group::Edit];
    const DESCRIPTION: &'static str = "Replace an exact string in a text file, keeping its line \
        endings (\\n matches CRLF) and encoding. Prefer it to write_file for changing code.";
    const HINTS: Hints = Hints::LOCAL_WRITE;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let approved = super::approve_trust_write(&call, &p.path).await?;
        let scope = crate::undo::file_scope(&call.ctx, &p.path, approved.as_deref());
        let (ctx, path) = (call.ctx.clone(), p.path.clone());
        let editing = async move {
            blocking(Self::NAME, move || {
                ctx.with_approved_write_scope(Path::new(&p.path), approved.as_deref(), |scope| {
                    wamcp_fs::edit_file(
                        &p.path,
                        &p.old_string,
                        &p.new_string,
                        p.replace_all,
                        &ctx.places.cwd,
                        scope,
                    )
                })
            })
            .await
            .map(ToolOutput::Text)
        };
        crate::undo::recorded(&call, scope, Self::NAME, &path, editing).await
    }
}
