//! `compile_shader`: the compiler the extension calls for, its output
//! written through write confinement, its errors parsed.
//!
//! The compiler writes into a private temporary directory, never straight
//! to the destination: the bytes reach the destination only through the
//! same confined, atomic write `write_file` uses, so a compiler cannot be
//! pointed at a file outside the writable roots.

use crate::build_report::report;
use crate::command::{Policy, no_project_root, working_directory};
use crate::{RunSpec, run};
use std::path::{Path, PathBuf};
use std::time::Duration;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::{MAX_PROCESS_OUTPUT_BYTES, SHADER_TIMEOUT_SECONDS};
use wamcp_policy::shader::{Compiler, ShaderPlan, plan};

/// A `compile_shader` call's arguments.
pub struct ShaderRequest<'a> {
    /// The shader file; its extension decides the compiler.
    pub source: &'a str,
    /// Where to write the result; blank means beside
    /// the source, with the plan's extension added.
    pub output: &'a str,
    /// The stage, needed for a bare `.glsl`
    /// file (`vertex` or `vert`); may be blank.
    pub stage: &'a str,
    /// The profile HLSL and FX need (`ps_6_6`); may be blank.
    pub profile: &'a str,
    /// Compile HLSL to SPIR-V instead of DXIL.
    pub spirv: bool,
    /// The directory relative paths start from,
    /// inside a project root; unset, the server's.
    pub working_directory: Option<&'a str>,
}

/// Where compiled bytes may go; implemented over the write confinement.
pub trait OutputSink: Sync {
    /// Refuses a destination before anything is compiled.
    fn check(&self, path: &Path) -> Result<(), ToolError>;
    /// Writes (or replaces) the destination; returns the path written.
    fn write(&self, path: &Path, bytes: &[u8]) -> Result<PathBuf, ToolError>;
}

/// Compiles confined to the policy's writable roots, from a working
/// directory inside one of its projects, with the compiler its search
/// finds.
pub async fn compile_shader(
    req: &ShaderRequest<'_>,
    policy: &Policy<'_>,
    sink: &dyn OutputSink,
) -> Result<String, ToolError> {
    if policy.projects.is_empty() {
        return Err(no_project_root());
    }
    if req.source.trim().is_empty() {
        return Err(ToolError::new(ErrorType::InvalidPath, "source is empty.")
            .recover("Pass the shader file to compile, e.g. shaders/blur.comp."));
    }
    // The arguments first: a bad stage or profile is named before any
    // path is looked at.
    let plan = plan(req.source, req.stage, req.profile, req.spirv, |c| {
        policy.search.find_program(c.program()).is_some()
    })
    .map_err(|refusal| ToolError::new(refusal.kind, refusal.message).with_path(req.source))?;
    let places = Places::of(req, policy, &plan)?;
    sink.check(&places.output)?;
    let program = plan.compiler.program();
    let scratch =
        crate::temp::TempTree::new("wamcp-shader-").map_err(|e| start_failed(program, &e))?;
    // The compiler runs confined and may leave anything in its scratch
    // directory, so it is removed the careful way whatever happens.
    let result = compile(&plan, &places, scratch.path(), policy, sink).await;
    scratch.remove().await;
    result
}

/// Where a compile reads, writes and runs.
struct Places {
    /// The shader file.
    source: PathBuf,
    /// Where the result goes (through the sink).
    output: PathBuf,
    /// The folder the compiler runs in: the source's.
    dir: PathBuf,
}

impl Places {
    /// The places for `req`. Relative paths resolve against the working
    /// directory when one is given (it must be inside a project), else
    /// against the server's, as in every file tool.
    fn of(
        req: &ShaderRequest<'_>,
        policy: &Policy<'_>,
        plan: &ShaderPlan,
    ) -> Result<Places, ToolError> {
        let (cwd, projects) = (policy.cwd, policy.projects);
        let base = match req
            .working_directory
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            Some(asked) => working_directory(Some(asked), "working_directory", cwd, projects)?,
            None => cwd.to_path_buf(),
        };
        let source = base.join(req.source.trim());
        if !source.is_file() {
            return Err(ToolError::new(
                ErrorType::PathNotFound,
                format!("No shader file at {}.", source.display()),
            )
            .with_path(req.source));
        }
        let output = match req.output.trim() {
            "" => PathBuf::from(format!("{}.{}", source.display(), plan.output_extension)),
            raw => base.join(raw),
        };
        // The compiler runs beside the source, where its includes are; that
        // folder must be a project's, as any working directory (not `.git`,
        // not outside every project).
        let beside = source
            .parent()
            .map_or_else(|| base.clone(), Path::to_path_buf);
        let dir = working_directory(
            Some(&beside.display().to_string()),
            "source's folder",
            cwd,
            projects,
        )?;
        Ok(Places {
            source,
            output,
            dir,
        })
    }
}

/// Runs the compiler confined, writing only into `scratch`, and copies a
/// successful result to the output through the sink.
async fn compile(
    plan: &ShaderPlan,
    places: &Places,
    scratch: &Path,
    policy: &Policy<'_>,
    sink: &dyn OutputSink,
) -> Result<String, ToolError> {
    let program = plan.compiler.program();
    let scratch_out = scratch.join(format!("out.{}", plan.output_extension));
    let mut args = plan.args.clone();
    args.push(places.source.display().to_string());
    let shown = format!(
        "{program} {} {} {}",
        args.join(" "),
        plan.output_flag,
        places.output.display()
    );
    args.extend(output_args(plan.output_flag, &scratch_out));
    // The compiler writes only its scratch output; the server copies it.
    let mut confinement = policy.sandbox.confinement(policy.roots, false)?;
    if let Some(c) = &mut confinement {
        let scratch = dunce::canonicalize(scratch).map_err(|e| start_failed(program, &e))?;
        c.scope.writable.push(scratch);
    }
    let spec = RunSpec {
        program: program.to_string(),
        args,
        env: Vec::new(),
        cwd: places.dir.clone(),
        timeout: Duration::from_secs(SHADER_TIMEOUT_SECONDS),
        keep_head: MAX_PROCESS_OUTPUT_BYTES,
        keep_tail: 16 * 1024,
        confinement,
        search: policy.search.clone(),
    };
    let out = run(&spec).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            not_found(plan.compiler)
        } else {
            start_failed(program, &e)
        }
    })?;
    let text_output = format!("{}\n{}", out.stdout.render(), out.stderr.render());
    let compile_report = report(
        "SHADER COMPILE",
        &shown,
        out.exit_code,
        &text_output,
        &places.dir,
    );
    if out.timed_out {
        return Err(ToolError::new(
            ErrorType::ShaderCompileTimedOut,
            format!("{program} ran longer than {SHADER_TIMEOUT_SECONDS} s and was killed."),
        )
        .detail("partial_report", compile_report));
    }
    if out.exit_code != Some(0) {
        return Ok(compile_report);
    }
    let bytes = std::fs::read(&scratch_out).map_err(|e| {
        ToolError::new(
            ErrorType::ShaderCompileStartFailed,
            format!("{program} reported success but wrote no output ({e})."),
        )
    })?;
    let written = sink.write(&places.output, &bytes)?;
    Ok(format!(
        "COMPILED to {} ({} bytes)\n{compile_report}",
        written.display(),
        bytes.len()
    ))
}

/// dxc takes `-Fo path`; fxc `/Fo path`; glslc and glslang `-o path`.
fn output_args(flag: &str, path: &Path) -> [String; 2] {
    [flag.to_string(), path.display().to_string()]
}

fn not_found(compiler: Compiler) -> ToolError {
    let source = match compiler {
        Compiler::Glslc | Compiler::GlslangValidator => {
            "the Vulkan SDK (or the glslc / glslang-tools packages)"
        }
        Compiler::Dxc => "the Vulkan SDK or the Windows SDK (dxc)",
        Compiler::Fxc => "the Windows SDK (fxc)",
    };
    ToolError::new(
        ErrorType::ShaderCompilerNotFound,
        format!("{} was not found on the PATH.", compiler.program()),
    )
    .recover(format!(
        "It ships with {source}; the PATH is searched again on every call."
    ))
}

fn start_failed(program: &str, e: &std::io::Error) -> ToolError {
    ToolError::new(
        ErrorType::ShaderCompileStartFailed,
        format!("{program} could not be started: {e}."),
    )
}
