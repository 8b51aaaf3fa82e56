//! build_project and compile_shader over MCP against the real binary.

use crate::common::Sandbox;
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
        // The argument that is wrong is named before any path is looked at.
        (
            "compile_shader",
            json!({"source": "proj/a.vert", "stage": "pixel", "working_directory": "/"}),
            "INVALID_STAGE",
        ),
        ("compile_shader", json!({"source": ""}), "INVALID_PATH"),
        (
            "write_file",
            json!({"path": " ", "content": "x"}),
            "WRITE_PATH_NOT_ALLOWED",
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
        report.starts_with("BUILD: gcc -c broken.c -o broken.o (exit code 1, "),
        "{report}"
    );
    assert!(
        report.contains(" s)\nsince the last build: not compared (first build of this command)\nERRORS (1 unique, 1 total):\n  broken.c:2:10: "),
        "{report}"
    );
    assert!(report.ends_with("BUILD FAILED\n"), "{report}");
    client.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn shader_output_is_written_only_inside_the_roots() {
    if wamcp_platform::search_path::ProgramSearch::default()
        .find_program("glslc")
        .is_none()
    {
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

/// The report's limits and tags through build_project, with a stand-in build
/// that prints each log, and a second build compared with the first.
#[cfg(unix)]
#[tokio::test]
async fn the_report_carries_its_limits_tags_and_changes() {
    let (sandbox, project) = Sandbox::with_project();
    let script = r#"import sys
lines = [f"src/w{i}.c:{i}:1: warning: noisy {i} [-Wextra]" for i in range(14)]
if sys.argv[1:] == ["clean"]:
    print("\n".join(lines))
    sys.exit(0)
lines.append("third_party/z/z.c:1:1: warning: old code")
lines.append("src/t.cpp:7:3: error: " + "t" * 2000)
lines.append("LINK : fatal error LNK1181: cannot open input file 'x.lib'")
if len(sys.argv) > 1:
    lines.append("src/new.c:2:2: warning: introduced by the edit")
print("\n".join(lines))
sys.exit(1)
"#;
    std::fs::write(project.join("fake_build.py"), script).unwrap();
    let client = sandbox.connect().await;
    let call = |command: &'static str| {
        client.call(
            "build_project",
            json!({"command": command, "working_directory": "proj"}),
        )
    };
    let first = text(&call("python3 fake_build.py").await);
    assert!(
        first.starts_with("BUILD: python3 fake_build.py (exit code 1, "),
        "{first}"
    );
    assert!(
        first.contains(
            " s)\nsince the last build: not compared (first build of this command)\nERRORS ("
        ),
        "{first}"
    );
    assert!(
        first.contains("WARNINGS (15 unique, 15 total):\n"),
        "{first}"
    );
    assert!(
        first.contains("  ...5 more unique warnings not shown\n"),
        "{first}"
    );
    assert!(
        first.contains(&format!(
            "  src/t.cpp:7:3: {} [message truncated]\n",
            "t".repeat(500)
        )),
        "{first}"
    );
    assert!(
        first.contains("  (no file): LNK1181: cannot open input file 'x.lib'\n"),
        "{first}"
    );
    assert!(
        first.contains("WARNING SUMMARY: -Wextra x14 (src) | (no code) x1 (third_party)\n"),
        "{first}"
    );
    assert!(first.ends_with("BUILD FAILED\n"), "{first}");
    let second = text(&call("python3 fake_build.py").await);
    assert!(
        second.contains(
            "since the last build of this command: 0 new error(s), 0 new warning(s), 0 gone\n"
        ),
        "{second}"
    );
    let other = text(&call("python3 fake_build.py edited").await);
    assert!(
        other.contains("not compared (first build of this command)"),
        "another command: {other}"
    );
    // A build that succeeds keeps the same cap on its warnings.
    let clean = text(&call("python3 fake_build.py clean").await);
    assert!(
        clean.contains("WARNINGS (14 unique, 14 total):\n"),
        "{clean}"
    );
    assert!(clean.contains("noisy 9 [-Wextra]"), "{clean}");
    assert!(!clean.contains("noisy 10 [-Wextra]"), "{clean}");
    assert!(
        clean.contains("  ...4 more unique warnings not shown\n"),
        "{clean}"
    );
    assert!(
        clean.ends_with("BUILD SUCCEEDED (0 errors, 14 warnings)\nWarnings above are not fatal.\n"),
        "{clean}"
    );
    client.close().await;
}

/// The shader compiler runs beside its source, so that folder must be a
/// project's, as any working directory: not outside every project, not
/// `.git`.
#[cfg(unix)]
#[tokio::test]
async fn a_shader_outside_the_project_or_in_git_is_not_compiled() {
    let (sandbox, project) = Sandbox::with_project();
    let shader = "#version 450\nvoid main() {}\n";
    let outside = sandbox.write("outside/x.comp", shader);
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join(".git/x.comp"), shader).unwrap();
    let client = sandbox.connect().await;
    for source in [
        outside.display().to_string(),
        "proj/.git/x.comp".to_string(),
    ] {
        let error = client
            .error_of(
                "compile_shader",
                json!({"source": source, "output": "proj/x.spv"}),
            )
            .await;
        // Without glslc the compiler is named missing first.
        let have_glslc = std::process::Command::new("glslc")
            .arg("--version")
            .output()
            .is_ok();
        let want = if have_glslc {
            "WORKING_DIRECTORY_NOT_ALLOWED"
        } else {
            "SHADER_COMPILER_NOT_FOUND"
        };
        assert_eq!(error["type"], want, "{source}: {error}");
    }
    assert!(!project.join("x.spv").exists());
    client.close().await;
}
