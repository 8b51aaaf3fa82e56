//! Which compiler a shader file needs and the arguments that compile it.
//!
//! The extension decides the compiler; a bare `.glsl` needs a stage, HLSL
//! and FX need a profile. Everything the model supplies is validated here
//! before it becomes an argument, so no value can be read as an option.

use crate::error::ErrorType;

/// A shader compiler wamcp knows how to call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compiler {
    /// Google's `glslc`, preferred for GLSL.
    Glslc,
    /// Khronos' `glslangValidator`, the GLSL fallback when `glslc` is missing.
    GlslangValidator,
    /// Microsoft's `dxc`, for `.hlsl` (DXIL, or SPIR-V when asked).
    Dxc,
    /// Microsoft's legacy `fxc`, for `.fx` effect files.
    Fxc,
}

impl Compiler {
    /// The program name looked up on the PATH.
    pub fn program(self) -> &'static str {
        match self {
            Compiler::Glslc => "glslc",
            Compiler::GlslangValidator => "glslangValidator",
            Compiler::Dxc => "dxc",
            Compiler::Fxc => "fxc",
        }
    }
}

/// The stage names a `.glsl` file may be given, with the short form the
/// compilers and file extensions use.
pub const STAGES: &[(&str, &str)] = &[
    ("vertex", "vert"),
    ("fragment", "frag"),
    ("compute", "comp"),
    ("geometry", "geom"),
    ("tesscontrol", "tesc"),
    ("tesseval", "tese"),
    ("mesh", "mesh"),
    ("task", "task"),
    ("rgen", "rgen"),
    ("rchit", "rchit"),
    ("rahit", "rahit"),
    ("rmiss", "rmiss"),
    ("rint", "rint"),
    ("rcall", "rcall"),
];

/// Stages whose SPIR-V needs version 1.4 or later (ray tracing, mesh).
const NEEDS_VULKAN_1_2: &[&str] = &[
    "mesh", "task", "rgen", "rchit", "rahit", "rmiss", "rint", "rcall",
];

/// What to run, given which compilers are installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderPlan {
    /// The compiler that runs.
    pub compiler: Compiler,
    /// Arguments before the source and output paths are added.
    pub args: Vec<String>,
    /// Extension of the default output (`.spv`, `.dxil`, `.cso`).
    pub output_extension: &'static str,
    /// Flag that introduces the output path (`-o`, `-Fo`, `/Fo`).
    pub output_flag: &'static str,
}

/// Why a shader cannot be planned, as an
/// error type and message for the envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderRefusal {
    /// The error type the tool reports.
    pub kind: ErrorType,
    /// What is wrong with the request, naming the valid choices.
    pub message: String,
}

fn refuse(kind: ErrorType, message: String) -> Result<ShaderPlan, ShaderRefusal> {
    Err(ShaderRefusal { kind, message })
}

/// Plans a compile of a file named `source`. `installed` says whether a
/// compiler can be found; glslc is preferred for GLSL, glslangValidator is
/// the fallback for files whose extension names the stage.
pub fn plan(
    source: &str,
    stage: &str,
    profile: &str,
    spirv: bool,
    installed: impl Fn(Compiler) -> bool,
) -> Result<ShaderPlan, ShaderRefusal> {
    let extension = source
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    let stage = stage.trim().to_ascii_lowercase();
    let profile = profile.trim();
    // A stage that names nothing is wrong whatever the file: said first, so
    // a model fixes the argument rather than chasing a later error.
    if !stage.is_empty()
        && !STAGES
            .iter()
            .any(|(long, short)| *long == stage || *short == stage)
    {
        return refuse(
            ErrorType::InvalidStage,
            format!(
                "'{stage}' is not a shader stage; use one of {}.",
                stage_names()
            ),
        );
    }
    if let Some(&(_, short)) = STAGES.iter().find(|(_, short)| *short == extension) {
        let glslc = installed(Compiler::Glslc) || !installed(Compiler::GlslangValidator);
        return Ok(glsl(short, glslc));
    }
    match extension.as_str() {
        "glsl" => glsl_with_stage(&stage),
        "hlsl" | "hlsli" | "fx" => hlsl_or_fx(&extension, profile, spirv),
        _ => refuse(
            ErrorType::UnknownShaderType,
            format!(
                "'{source}' has no shader extension; use .vert/.frag/.comp (and the other stage names), .glsl with a \
                 stage, .hlsl with a profile, or .fx with a profile."
            ),
        ),
    }
}

/// A bare `.glsl` file: compiled by glslc, for the stage the caller names.
fn glsl_with_stage(stage: &str) -> Result<ShaderPlan, ShaderRefusal> {
    if stage.is_empty() {
        return refuse(
            ErrorType::MissingStage,
            format!("A .glsl file needs a stage: one of {}.", stage_names()),
        );
    }
    let Some(&(_, short)) = STAGES
        .iter()
        .find(|(long, short)| *long == stage || *short == stage)
    else {
        return refuse(
            ErrorType::InvalidStage,
            format!(
                "'{stage}' is not a shader stage; use one of {}.",
                stage_names()
            ),
        );
    };
    Ok(glsl(short, true))
}

/// An `.hlsl` or `.hlsli` file (dxc) or an `.fx` file (fxc), for the
/// profile the caller names.
fn hlsl_or_fx(extension: &str, profile: &str, spirv: bool) -> Result<ShaderPlan, ShaderRefusal> {
    if profile.is_empty() {
        return refuse(
            ErrorType::MissingProfile,
            format!("A .{extension} file needs a profile such as ps_6_6, vs_6_0 or cs_5_0."),
        );
    }
    if !is_profile(profile) {
        return refuse(
            ErrorType::InvalidProfile,
            format!(
                "'{profile}' is not a shader profile (letters, then _<major>_<minor>, e.g. ps_6_6)."
            ),
        );
    }
    Ok(if extension == "fx" {
        ShaderPlan {
            compiler: Compiler::Fxc,
            args: vec!["/nologo".into(), "/T".into(), profile.into()],
            output_extension: "cso",
            output_flag: "/Fo",
        }
    } else {
        let mut args = vec!["-T".to_string(), profile.to_string()];
        if spirv {
            args.push("-spirv".into());
        }
        ShaderPlan {
            compiler: Compiler::Dxc,
            args,
            output_extension: if spirv { "spv" } else { "dxil" },
            output_flag: "-Fo",
        }
    })
}

fn glsl(short: &str, glslc: bool) -> ShaderPlan {
    let new_spirv = NEEDS_VULKAN_1_2.contains(&short);
    let args = if glslc {
        let mut args = vec![format!("-fshader-stage={short}")];
        if new_spirv {
            args.push("--target-env=vulkan1.2".into());
        }
        args
    } else {
        let mut args = vec!["-V".to_string(), "-S".into(), short.into()];
        if new_spirv {
            args.extend(["--target-env".into(), "vulkan1.2".into()]);
        }
        args
    };
    ShaderPlan {
        compiler: if glslc {
            Compiler::Glslc
        } else {
            Compiler::GlslangValidator
        },
        args,
        output_extension: "spv",
        output_flag: "-o",
    }
}

/// `^[A-Za-z]{2,4}_[0-9]+_[0-9]+$`, by hand.
fn is_profile(profile: &str) -> bool {
    let mut parts = profile.split('_');
    let (Some(kind), Some(major), Some(minor), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (2..=4).contains(&kind.len())
        && kind.bytes().all(|b| b.is_ascii_alphabetic())
        && digits(major)
        && digits(minor)
}

fn stage_names() -> String {
    STAGES
        .iter()
        .map(|(long, _)| *long)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: Compiler) -> bool {
        true
    }

    #[test]
    fn extensions_choose_the_compiler() {
        let vert = plan("a/b.vert", "", "", false, all).unwrap();
        assert_eq!(vert.compiler, Compiler::Glslc);
        assert_eq!(vert.args, ["-fshader-stage=vert"]);
        assert_eq!((vert.output_flag, vert.output_extension), ("-o", "spv"));

        let only_glslang = |c: Compiler| c == Compiler::GlslangValidator;
        let frag = plan("x.FRAG", "", "", false, only_glslang).unwrap();
        assert_eq!(frag.compiler, Compiler::GlslangValidator);
        assert_eq!(frag.args, ["-V", "-S", "frag"]);

        let rgen = plan("rt.rgen", "", "", false, all).unwrap();
        assert_eq!(rgen.args, ["-fshader-stage=rgen", "--target-env=vulkan1.2"]);

        let glsl = plan("common.glsl", "Compute", "", false, all).unwrap();
        assert_eq!(glsl.args, ["-fshader-stage=comp"]);

        let hlsl = plan("ps.hlsl", "", "ps_6_6", false, all).unwrap();
        assert_eq!(hlsl.compiler, Compiler::Dxc);
        assert_eq!(hlsl.args, ["-T", "ps_6_6"]);
        assert_eq!((hlsl.output_flag, hlsl.output_extension), ("-Fo", "dxil"));
        let spirv = plan("ps.hlsl", "", "ps_6_6", true, all).unwrap();
        assert_eq!(spirv.args, ["-T", "ps_6_6", "-spirv"]);
        assert_eq!(spirv.output_extension, "spv");

        let fx = plan("old.fx", "", "fx_5_0", false, all).unwrap();
        assert_eq!(fx.compiler, Compiler::Fxc);
        assert_eq!(fx.args, ["/nologo", "/T", "fx_5_0"]);
        assert_eq!((fx.output_flag, fx.output_extension), ("/Fo", "cso"));
    }

    #[test]
    fn refusals_are_typed() {
        let cases = [
            ("a.glsl", "", "", ErrorType::MissingStage),
            ("a.glsl", "pixel", "", ErrorType::InvalidStage),
            ("a.glsl", "-o/etc/x", "", ErrorType::InvalidStage),
            ("a.hlsl", "", "", ErrorType::MissingProfile),
            ("a.hlsl", "", "ps6", ErrorType::InvalidProfile),
            ("a.hlsl", "", "-Fo x", ErrorType::InvalidProfile),
            ("a.fx", "", "abcde_5_0", ErrorType::InvalidProfile),
            ("a.fx", "", "p_5_0", ErrorType::InvalidProfile),
            ("a.fx", "", "ps_5_0_1", ErrorType::InvalidProfile),
            ("a.txt", "", "", ErrorType::UnknownShaderType),
            ("a.vert", "pixel", "", ErrorType::InvalidStage),
            ("a.txt", "bogus", "", ErrorType::InvalidStage),
            ("vert", "", "", ErrorType::UnknownShaderType),
        ];
        for (source, stage, profile, kind) in cases {
            let refusal = plan(source, stage, profile, false, all).unwrap_err();
            assert_eq!(refusal.kind, kind, "{source} {stage} {profile}");
        }
    }
}
