use super::*;

fn expecting(executable: Option<String>, kind: Option<&str>, sha256: Option<String>) -> Expected {
    Expected {
        executable,
        kind: kind.map(String::from),
        sha256,
    }
}
use crate::sources::System;

fn request(capability: &str) -> Request {
    Request {
        capability: capability.into(),
        timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
        ..Request::default()
    }
}

#[test]
fn bad_arguments_are_invalid_input_with_a_status() {
    let long = "x".repeat(MAX_ARG_CHARS + 1);
    let cases: Vec<(Request, &str)> = vec![
        (request(""), "capability must be 1-256"),
        (
            request(&"a".repeat(257)),
            "capability must be 1-256 characters (got 257)",
        ),
        (
            Request {
                extra_args: vec!["a".into(); 129],
                ..request("x")
            },
            "extra_args holds 129 items",
        ),
        (
            Request {
                extra_args: vec!["a\0b".into()],
                ..request("x")
            },
            "item 1 holds a NUL",
        ),
        (
            Request {
                extra_args: vec![long],
                ..request("x")
            },
            "longer than 32768",
        ),
        (
            Request {
                timeout_seconds: 0,
                ..request("x")
            },
            "timeout_seconds must be 1-600 (got 0)",
        ),
        (
            Request {
                timeout_seconds: 601,
                ..request("x")
            },
            "(got 601)",
        ),
        (
            Request {
                expected: expecting(None, Some("symlink"), None),
                ..request("x")
            },
            "must be 'file' or",
        ),
        (
            Request {
                expected: expecting(None, None, Some("abc".into())),
                ..request("x")
            },
            "64 hexadecimal",
        ),
        (
            Request {
                expected: expecting(Some("x".repeat(4097)), None, None),
                ..request("x")
            },
            "longer than 4096",
        ),
    ];
    for (req, want) in cases {
        let err = validate(&req).unwrap_err();
        assert_eq!(err.kind, ErrorType::InvalidInput, "{want}");
        assert!(err.message.contains(want), "{}: {want}", err.message);
        assert_eq!(err.details.get("status").unwrap(), "invalid_input");
    }
    assert!(
        validate(&Request {
            extra_args: vec!["-v".into()],
            ..request("inspect-git")
        })
        .is_ok()
    );
}

#[test]
fn unknown_capabilities_and_broken_user_catalogs_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let roots = vec![root.clone()];
    let builtin = Catalog::load(None);
    let err = prepare(
        &request("lint-rust"),
        &builtin,
        &System::default(),
        &root,
        &roots,
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorType::UnknownCapability);
    assert_eq!(err.details.get("status").unwrap(), "unknown_capability");
    assert!(
        err.recovery
            .iter()
            .any(|r| r.contains("inspect-git, lint-python")),
        "{:?}",
        err.recovery
    );

    let file = root.join("caps.json");
    std::fs::write(
        &file,
        r#"{"capabilities": [{"id": "lint-rust", "safety": "read-only"}]}"#,
    )
    .unwrap();
    let broken = Catalog::load(Some(file.clone()));
    assert_eq!(broken.capabilities.len(), 7, "the built-in catalog stays");
    assert!(
        broken.errors[0].contains("missing field `description`"),
        "{:?}",
        broken.errors
    );
    let err = prepare(
        &request("lint-rust"),
        &broken,
        &System::default(),
        &root,
        &roots,
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorType::ConfigurationError);
    assert_eq!(err.details.get("status").unwrap(), "configuration_error");

    let missing = Catalog::load(Some(root.join("nope.json")));
    assert!(
        missing.errors[0].contains("cannot be read"),
        "{:?}",
        missing.errors
    );
}

/// A program every test host has: git here, cmd.exe under Wine.
const TOOL: &str = if cfg!(windows) { "cmd" } else { "git" };

fn prepared(dir: &Path, argv: &str, safety: &str, extra: &[&str]) -> (Prepared, Request) {
    let file = dir.join("caps.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"capabilities": [{{"id": "probe", "description": "d", "safety": "{safety}", "argv": [{}]}}]}}"#,
            argv.replace("TOOL", TOOL)
        ),
    )
    .unwrap();
    let catalog = Catalog::load(Some(file));
    assert_eq!(catalog.errors, Vec::<String>::new());
    let req = Request {
        extra_args: extra.iter().map(|s| s.to_string()).collect(),
        ..request("probe")
    };
    let root = dunce::canonicalize(dir).unwrap();
    (
        prepare(
            &req,
            &catalog,
            &System::default(),
            &root,
            std::slice::from_ref(&root),
        )
        .unwrap(),
        req,
    )
}

fn status(gate: Gate) -> String {
    match gate {
        Gate::Open => "open".into(),
        Gate::Refused(v) => v["status"].as_str().unwrap().into(),
    }
}

#[test]
fn plans_name_the_first_installed_alternative_and_its_identity() {
    let dir = tempfile::tempdir().unwrap();
    let file = if cfg!(windows) { "cmd.exe" } else { "git" };
    let (p, req) = prepared(
        dir.path(),
        r#"["no-such-tool-x", "--v"], ["TOOL", "status"]"#,
        "read-only",
        &[],
    );
    let view = plan(&p);
    assert_eq!(view["status"], "planned");
    assert_eq!(view["argv"], json!([TOOL, "status"]));
    let exe = view["executable"].as_str().unwrap();
    assert!(exe.to_lowercase().ends_with(file), "{exe}");
    let bytes = std::fs::read(exe).unwrap();
    assert_eq!(
        view["executable_identity_sha256"],
        hex(&Sha256::digest(&bytes))
    );
    assert_eq!(view["executable_identity_kind"], "file");
    assert_eq!(view["approval_required"], false);
    assert_eq!(status(gate(&p, &req)), "open");

    let (p, _) = prepared(
        dir.path(),
        r#"["TOOL", "status"]"#,
        "read-only",
        &["--porcelain"],
    );
    assert_eq!(plan(&p)["effective_safety"], "approval-required");
    assert_eq!(plan(&p)["argv"], json!([TOOL, "status", "--porcelain"]));

    let (p, req) = prepared(dir.path(), r#"["no-such-tool-x"]"#, "read-only", &[]);
    assert_eq!(plan(&p)["status"], "unavailable");
    assert_eq!(status(gate(&p, &req)), "unavailable");
    let (p, req) = prepared(dir.path(), r#"["TOOL", "status"]"#, "forbidden", &[]);
    assert_eq!(status(gate(&p, &req)), "blocked");
}

#[test]
fn a_changed_executable_makes_the_plan_stale() {
    let dir = tempfile::tempdir().unwrap();
    let (p, req) = prepared(dir.path(), r#"["TOOL", "status"]"#, "read-only", &[]);
    let view = plan(&p);
    let exe = view["executable"].as_str().unwrap().to_string();
    let sha = view["executable_identity_sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let reviewed = Request {
        expected: expecting(Some(exe.clone()), Some("file"), Some(sha.to_uppercase())),
        ..req.clone()
    };
    assert_eq!(status(gate(&p, &reviewed)), "open");
    let cases = [
        Request {
            expected: expecting(
                Some("/opt/other/git".into()),
                Some("file"),
                Some(sha.clone()),
            ),
            ..reviewed.clone()
        },
        Request {
            expected: expecting(Some(exe.clone()), Some("file"), Some("0".repeat(64))),
            ..reviewed.clone()
        },
        Request {
            expected: expecting(
                Some(exe.clone()),
                Some("app_execution_alias"),
                Some(sha.clone()),
            ),
            ..reviewed.clone()
        },
    ];
    for case in cases {
        match gate(&p, &case) {
            Gate::Refused(v) => {
                assert_eq!(v["status"], "stale_plan");
                assert!(v["reason"].as_str().unwrap().len() > 10);
            }
            Gate::Open => panic!("{case:?} opened"),
        }
    }
}

#[test]
fn tails_keep_the_end_and_count_what_they_dropped() {
    assert_eq!(tail("abc", 5), ("abc".to_string(), 0));
    assert_eq!(tail("héllo wörld", 5), ("wörld".to_string(), 6));
}
