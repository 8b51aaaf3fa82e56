//! The five read-only core tools over MCP, against a real project tree.

use crate::common;

use crate::common::Sandbox;
use serde_json::{Value, json};

fn project() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write(
        "work/src/main.cpp",
        "#include \"app.h\"\r\nint main() {\r\n    return run_app();\r\n}\r\n",
    );
    sandbox.write("work/src/app.h", "int run_app();\n");
    sandbox.write("work/build/generated.cpp", "int run_app() { return 0; }\n");
    std::fs::create_dir_all(sandbox.cwd.join("empty/inner")).unwrap();
    sandbox
}

async fn text(client: &common::Client, tool: &str, args: Value) -> String {
    let result = client.call(tool, args).await;
    assert_eq!(result.is_error, Some(false), "{tool}: {result:?}");
    assert!(
        result.structured_content.is_none(),
        "text tools send no structured content"
    );
    result.content[0].as_text().unwrap().text.clone()
}

#[tokio::test]
async fn read_list_find_and_search_end_to_end() {
    let client = project().connect().await;
    let read = text(
        &client,
        "read_file",
        json!({"path": "src/main.cpp", "start_line": 2, "max_lines": 2}),
    )
    .await;
    assert_eq!(
        read,
        "int main() {\n    return run_app();\n[Lines 2-3 of 4. Next: \
         read_file(path=\"src/main.cpp\", start_line=4).]\n"
    );
    let list = text(&client, "list_directory", json!({})).await;
    assert!(
        list.ends_with("\nbuild/\nempty/\nsrc/\n3 entries\n"),
        "{list}"
    );
    let found = text(&client, "find_files", json!({"file_glob": "*.cpp,*.h"})).await;
    assert!(
        found.ends_with("\nsrc/app.h\nsrc/main.cpp\n2 files\n"),
        "{found}"
    );
    let hits = text(
        &client,
        "search_files",
        json!({"pattern": "run_app", "file_glob": "*.cpp"}),
    )
    .await;
    assert!(
        hits.starts_with("src/main.cpp\n3: return run_app();\n1 match in 1 file."),
        "{hits}"
    );
    let empty = text(&client, "list_empty_dirs", json!({"path": "."})).await;
    assert!(
        empty.contains("\nempty/inner\nempty\n2 empty directories\n"),
        "{empty}"
    );
    client.close().await;
}

#[tokio::test]
async fn refusals_arrive_as_envelopes() {
    let client = project().connect().await;
    let cases = [
        (
            "read_file",
            json!({"path": "src/missing.cpp"}),
            "PATH_NOT_FOUND",
        ),
        ("read_file", json!({"path": "src"}), "PATH_IS_NOT_FILE"),
        (
            "read_file",
            json!({"path": "src/main.cpp", "start_line": 99}),
            "START_LINE_OUT_OF_RANGE",
        ),
        ("read_file", json!({"path": ""}), "INVALID_PATH"),
        ("read_file", json!({}), "INVALID_ARGUMENTS"),
        (
            "list_directory",
            json!({"path": "src/app.h"}),
            "PATH_IS_NOT_DIRECTORY",
        ),
        (
            "find_files",
            json!({"file_glob": "[z-a]"}),
            "INVALID_PATTERN",
        ),
        (
            "search_files",
            json!({"pattern": "(", "regex": true}),
            "INVALID_PATTERN",
        ),
        (
            "search_files",
            json!({"pattern": "x", "path": "nowhere"}),
            "PATH_NOT_FOUND",
        ),
        (
            "search_files",
            json!({"pattern": "x", "max_results": "ten"}),
            "INVALID_ARGUMENTS",
        ),
    ];
    for (tool, args, kind) in cases {
        let result = client.call(tool, args.clone()).await;
        assert_eq!(result.is_error, Some(true), "{tool} {args}");
        let envelope = result.structured_content.unwrap();
        assert_eq!(envelope["error"]["type"], kind, "{tool} {args}: {envelope}");
        assert_eq!(envelope["error"]["tool"], tool);
        assert!(
            envelope["error"]["recovery"][0]
                .as_str()
                .unwrap()
                .starts_with("DO NOT retry"),
            "{envelope}"
        );
    }
    let result = client
        .call("read_file", json!({"path": "src/nope/x.cpp"}))
        .await;
    let envelope = result.structured_content.unwrap();
    assert!(
        envelope["error"]["recovery"][1]
            .as_str()
            .unwrap()
            .starts_with("Call list_directory on existing_ancestor"),
        "{envelope}"
    );
    assert!(
        envelope["error"]["existing_ancestor"]
            .as_str()
            .unwrap()
            .ends_with("src")
    );
    // The text a host forwards is the same envelope, compact, each fact
    // once: the path appears a single time.
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), envelope);
    assert!(!text.contains("\n  "), "{text}");
    assert_eq!(text.matches("src/nope/x.cpp").count(), 1, "{text}");
    client.close().await;
}

#[cfg(windows)]
#[tokio::test]
async fn windows_paths_with_either_separator_and_a_drive_letter() {
    let sandbox = project();
    let absolute = sandbox.cwd.join("src").join("app.h").display().to_string();
    assert!(absolute.as_bytes()[1] == b':', "{absolute}");
    let client = sandbox.connect().await;
    for path in [
        absolute.clone(),
        absolute.replace('\\', "/"),
        "src\\app.h".into(),
    ] {
        assert_eq!(
            text(&client, "read_file", json!({"path": path})).await,
            "int run_app();\n"
        );
    }
    let found = text(
        &client,
        "find_files",
        json!({"file_glob": "src\\*.h", "path": ".\\"}),
    )
    .await;
    assert!(found.ends_with("\nsrc/app.h\n1 file\n"), "{found}");
    client.close().await;
}
