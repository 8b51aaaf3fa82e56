//! build_project and compile_shader over MCP against the real binary.

mod common;

use common::Sandbox;
use serde_json::json;

#[cfg(unix)]
fn text(result: &rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().unwrap().text.clone()
}

#[tokio::test]
async fn refusals_are_typed_and_run_nothing() {
    let (sandbox, project) = Sandbox::with_project();
    let client = sandbox.connect().await;
    let cases = [
        (
            "build_project",
            json!({"command": "git status"}),
            "NOT_A_BUILD_COMMAND",
        ),
        (
            "build_project",
            json!({"command": "cmake --build build | more"}),
            "COMMAND_NOT_ALLOWED",
        ),
        (
            "build_project",
            json!({"command": "cmake --build .", "working_directory": ".."}),
            "WORKING_DIRECTORY_NOT_ALLOWED",
        ),
        (
            "compile_shader",
            json!({"source": "proj/a.txt"}),
            "UNKNOWN_SHADER_TYPE",
        ),
        (
            "compile_shader",
            json!({"source": "proj/a.glsl"}),
            "MISSING_STAGE",
        ),
        (
            "compile_shader",
            json!({"source": "proj/a.hlsl", "profile": "-Fo x"}),
            "INVALID_PROFILE",
        ),
        (
            "compile_shader",
            json!({"source": "proj/none.frag"}),
            "PATH_NOT_FOUND",
        ),
    ];
    for (tool, args, kind) in cases {
        let error = client.error_of(tool, args.clone()).await;
        assert_eq!(error["type"], kind, "{tool} {args}: {error}");
    }
    assert_eq!(std::fs::read_dir(&project).unwrap().count(), 0);
    client.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_broken_build_reads_as_parsed_errors() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("broken.c"),
        "int main(void) {\n  return missing;\n}\n",
    )
    .unwrap();
    let client = sandbox.connect().await;
    let result = client
        .call(
            "build_project",
            json!({"command": "gcc -c broken.c -o broken.o", "working_directory": "proj"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false));
    let report = text(&result);
    assert!(
        report.starts_with("BUILD: gcc -c broken.c -o broken.o (exit code 1)\nERRORS (1 unique, 1 total):\n  broken.c:2:10: "),
        "{report}"
    );
    assert!(report.ends_with("BUILD FAILED\n"), "{report}");
    client.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn shader_output_is_written_only_inside_the_roots() {
    if wamcp_platform::search_path::find_program("glslc").is_none() {
        assert!(
            std::env::var("WAMCP_TEST_STRICT").as_deref() != Ok("1"),
            "glslc is required"
        );
        return;
    }
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("ok.frag"),
        "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1); }\n",
    )
    .unwrap();
    let client = sandbox.connect().await;
    let result = client
        .call(
            "compile_shader",
            json!({"source": "ok.frag", "output": "out/ok.spv", "working_directory": "proj"}),
        )
        .await;
    let out = project.join("out").join("ok.spv");
    let size = std::fs::metadata(&out).expect("compiled").len();
    assert!(
        text(&result).starts_with(&format!("COMPILED to {} ({size} bytes)\n", out.display())),
        "{result:?}"
    );

    let escape = client
        .call(
            "compile_shader",
            json!({"source": "ok.frag", "output": "../escaped.spv", "working_directory": "proj"}),
        )
        .await;
    assert_eq!(
        escape.structured_content.unwrap()["error"]["type"],
        "WRITE_PATH_NOT_ALLOWED"
    );
    assert!(!project.parent().unwrap().join("escaped.spv").exists());
    client.close().await;
}

/// Under Wine no build tool or shader compiler is installed: both failures
/// are typed and say where the tool comes from.
#[cfg(windows)]
#[tokio::test]
async fn missing_tools_are_named() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("a.frag"), "#version 450\nvoid main() {}\n").unwrap();
    let client = sandbox.connect().await;
    let error = client
        .error_of("build_project", json!({"command": "ninja --version"}))
        .await;
    assert_eq!(error["type"], "BUILD_TOOL_NOT_FOUND", "{error}");
    let error = client
        .error_of("compile_shader", json!({"source": "proj/a.frag"}))
        .await;
    assert_eq!(error["type"], "SHADER_COMPILER_NOT_FOUND", "{error}");
    assert!(
        error["recovery"].to_string().contains("Vulkan SDK"),
        "{error}"
    );
    client.close().await;
}
