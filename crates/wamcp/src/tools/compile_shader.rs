//! `compile_shader`: GLSL or HLSL through the compiler its extension calls
//! for, the output written under write confinement.

use crate::context::ServerContext;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use wamcp_exec::shader::{OutputSink, ShaderRequest, compile_shader};
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// .vert/.frag/.comp..., .glsl, .hlsl or .fx.
    pub source: String,
    /// Default: source plus .spv, .dxil or .cso.
    #[serde(default)]
    pub output: String,
    /// For .glsl: vertex, fragment, compute...
    #[serde(default)]
    pub stage: String,
    /// For .hlsl/.fx, e.g. ps_6_6.
    #[serde(default)]
    pub profile: String,
    /// For .hlsl: SPIR-V instead of DXIL.
    #[serde(default)]
    pub spirv: bool,
    /// Where relative paths start.
    #[serde(default)]
    pub working_directory: Option<String>,
}

pub struct CompileShader;

impl ToolDef for CompileShader {
    type Params = Params;
    const NAME: &'static str = "compile_shader";
    const GROUPS: &'static [Group] = &[Group::Build];
    const DESCRIPTION: &'static str = "Compile a GLSL or HLSL shader (glslc, glslangValidator, \
        dxc or fxc); errors come with file and line.";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: true,
        open_world: false,
    };

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = &call.ctx;
        let request = ShaderRequest {
            source: &p.source,
            output: &p.output,
            stage: &p.stage,
            profile: &p.profile,
            spirv: p.spirv,
            working_directory: p.working_directory.as_deref(),
        };
        let sink = ConfinedOutput { ctx };
        let roots = ctx.places.run_roots();
        let projects = ctx.places.projects_among(&roots);
        let policy = ctx.command_policy(&roots, &projects);
        let compiling = compile_shader(&request, &policy, &sink);
        let compiling = async { call.unless_cancelled(compiling).await.map(ToolOutput::Text) };
        let scope = Some(crate::undo::command_scope(ctx));
        crate::undo::recorded(&call, scope, Self::NAME, &p.source, compiling).await
    }
}

/// Shader output goes through the same confinement as `write_file`.
struct ConfinedOutput<'a> {
    ctx: &'a ServerContext,
}

impl OutputSink for ConfinedOutput<'_> {
    fn check(&self, path: &Path) -> Result<(), ToolError> {
        let raw = path.display().to_string();
        self.ctx
            .with_write_scope(path, |scope| wamcp_fs::resolve_for_write(&raw, path, scope))
            .map(|_| ())
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> Result<PathBuf, ToolError> {
        self.ctx
            .with_write_scope(path, |scope| wamcp_fs::write_output(path, bytes, scope))
    }
}
