//! The official Python MCP SDK against the real binary, in both protocol eras.
//!
//! Needs Python with `mcp` installed; `scripts/test.sh` provides one and sets
//! `WAMCP_TEST_PYTHON` and `WAMCP_TEST_STRICT=1`, under which a missing SDK is
//! a failure. Run by hand without it, the test says loudly that it skipped.
//! Native only: the Windows binary is driven by the same script from Linux
//! through Wine in `scripts/test.sh`.
#![cfg(not(windows))]

use crate::common;

use crate::common::{BIN, Sandbox};
use serde_json::{Value, json};
use std::io::Write;

fn python() -> Option<String> {
    let python = std::env::var("WAMCP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_sdk = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has_sdk {
        return Some(python);
    }
    let message = format!(
        "the Python MCP SDK is not importable with '{python}' (pip install mcp==2.3.0, or run scripts/test.sh)"
    );
    assert!(
        std::env::var("WAMCP_TEST_STRICT").as_deref() != Ok("1"),
        "{message}"
    );
    // Straight to stderr: the test harness would swallow eprintln! of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "\n!!! SKIPPED python_sdk: {message} !!!\n"
    );
    None
}

fn run_client(python: &str, sandbox: &Sandbox, mode: &str) -> Value {
    run_client_for(python, sandbox, mode, &[BIN])
}

/// Runs the Python client against `server` (a program and its arguments).
fn run_client_for(python: &str, sandbox: &Sandbox, mode: &str, server: &[&str]) -> Value {
    let mut args = vec![mode];
    args.extend(server);
    run_script(python, sandbox, "mcp_client.py", &args).0
}

/// Runs `tests/python/<script>` with `args` in the sandbox; returns the JSON
/// it printed and its stderr (where the server's log goes too).
fn run_script(python: &str, sandbox: &Sandbox, script: &str, args: &[&str]) -> (Value, String) {
    let path = format!(
        "{}/tests/python/{script}",
        std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo test")
    );
    let mut cmd = std::process::Command::new(python);
    cmd.arg(path).args(args);
    sandbox.apply(&mut cmd);
    let out = cmd.output().expect("run the Python client");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{script} failed: {stderr}");
    (
        serde_json::from_slice(&out.stdout).expect("the client prints JSON"),
        stderr,
    )
}

#[test]
fn legacy_and_default_modes_both_work() {
    let Some(python) = python() else { return };
    check_both_eras(&python, &[BIN]);
}

/// The Windows build, started through Wine by the Python client, when
/// `scripts/test.sh` names it in `WAMCP_TEST_WINE_EXE` (with the Wine loader
/// in `WAMCP_TEST_WINE`).
#[test]
fn the_windows_binary_under_wine_serves_both_eras() {
    let (Ok(exe), Ok(wine)) = (
        std::env::var("WAMCP_TEST_WINE_EXE"),
        std::env::var("WAMCP_TEST_WINE"),
    ) else {
        // Straight to stderr: the harness swallows the output of passing tests.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"\n!!! SKIPPED python_sdk under Wine: WAMCP_TEST_WINE_EXE and WAMCP_TEST_WINE are not set \
              (scripts/test.sh sets them in its last step) !!!\n",
        );
        return;
    };
    let Some(python) = python() else { return };
    check_both_eras(&python, &[&wine, &exe]);
}

fn check_both_eras(python: &str, server: &[&str]) {
    for (mode, era) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let sandbox = Sandbox::new().set("WAMCP_TOOLS", "core,docs");
        let seen = run_client_for(python, &sandbox, mode, server);
        assert_eq!(seen["protocol_version"], era, "{mode}");
        assert_eq!(seen["tools"][0], "read_file", "{mode}");
        assert_eq!(seen["tools"].as_array().unwrap().len(), 8, "{mode}");
        assert_eq!(seen["info_is_error"], false);
        assert_eq!(
            seen["info"]["active_tool_groups"],
            json!(["core", "docs"]),
            "{mode}"
        );
        assert_eq!(seen["bad_is_error"], true);
        assert_eq!(seen["bad"]["error"]["type"], "INVALID_ARGUMENTS", "{mode}");
    }
}

#[test]
fn a_malformed_config_and_an_unknown_profile_are_reported_to_the_python_client() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let path = sandbox.write("c/config.json", "{ broken");
    let sandbox = sandbox.set("WAMCP_CONFIG_FILE", path.display().to_string());
    let seen = run_client(&python, &sandbox, "auto");
    assert!(
        seen["info"]["config_error"]
            .as_str()
            .unwrap()
            .contains("invalid JSON")
    );

    // Start-up writes no config file, so the profile has nowhere to come from.
    let sandbox = Sandbox::new().set("WAMCP_PROFILE", "nope");
    let seen = run_client(&python, &sandbox, "legacy");
    let error = seen["info"]["config_error"].as_str().unwrap();
    assert!(
        error.contains(
            "Profile 'nope' (selected by WAMCP_PROFILE) cannot be used: there is no config file"
        ),
        "{error}"
    );
    // With the documented file `config --init` writes, it is not defined there.
    let sandbox = Sandbox::new().set("WAMCP_PROFILE", "nope");
    sandbox.init_config();
    let seen = run_client(&python, &sandbox, "legacy");
    let error = seen["info"]["config_error"].as_str().unwrap();
    assert!(
        error.contains("Profile 'nope' (selected by WAMCP_PROFILE) is not defined"),
        "{error}"
    );
}

/// A build that takes longer than the progress interval sends progress
/// notifications the SDK's callback receives, in both eras, and still ends
/// with its report.
#[test]
fn a_long_build_reports_progress() {
    let Some(python) = python() else { return };
    for mode in ["legacy", "auto"] {
        let (sandbox, project) = Sandbox::with_project();
        std::fs::write(
            project.join("slow_build.py"),
            "import time\ntime.sleep(6)\nprint('slow.c:1:1: error: done waiting')\nraise SystemExit(1)\n",
        )
        .unwrap();
        let args = json!({"command": "python3 slow_build.py", "working_directory": "proj"});
        let (seen, _) = run_script(
            &python,
            &sandbox,
            "mcp_progress.py",
            &[mode, "build_project", &args.to_string(), BIN],
        );
        let progress = seen["progress"].as_array().unwrap();
        assert!(!progress.is_empty(), "{mode}: no progress in {seen}");
        assert_eq!(
            progress[0]["message"], "building with python3 slow_build.py: 5 s",
            "{mode}"
        );
        let text = seen["text"].as_str().unwrap();
        assert!(
            text.contains("ERRORS (1 unique, 1 total):\n  slow.c:1:1: done waiting"),
            "{mode}: {text}"
        );
    }
}

/// A `prompt` rule asks the user through elicitation in both eras: a
/// server-to-client request in a handshake session, an input-required result
/// in the stateless era. Only a yes runs the command.
#[test]
fn a_prompt_rule_asks_the_user_in_both_eras() {
    let Some(python) = python() else { return };
    for mode in ["legacy", "auto"] {
        for (answer, runs) in [("yes", true), ("no", false), ("decline", false)] {
            let (sandbox, project) = Sandbox::with_project();
            std::fs::write(
                project.join("deploy.py"),
                "open('deployed.txt', 'w').write('x')\nprint('deployed')\n",
            )
            .unwrap();
            // Outside the writable roots: a rules file inside one is not trusted.
            let rules = sandbox.cwd.join("rules.json");
            std::fs::write(
                &rules,
                r#"{"rules": [{"id": "ask-deploy", "programs": ["python3"], "when": {"args": ["deploy.py"]},
                   "decision": "prompt", "justification": "deploying changes shared state",
                   "match": ["python3 deploy.py"], "not_match": ["python3 build.py"]}]}"#,
            )
            .unwrap();
            let sandbox = sandbox.set("WAMCP_COMMAND_RULES", rules.display().to_string());
            let args = json!({"command": "python3 deploy.py", "working_directory": "proj"});
            let (seen, _) = run_script(
                &python,
                &sandbox,
                "mcp_consent.py",
                &[mode, answer, "run_powershell", &args.to_string(), BIN],
            );
            let questions = seen["questions"].as_array().unwrap();
            assert_eq!(questions.len(), 1, "{mode} {answer}: {seen}");
            let question = questions[0].as_str().unwrap();
            assert!(question.contains("    python3 deploy.py\n"), "{question}");
            assert!(
                question
                    .contains("The 'ask-deploy' rules ask first: deploying changes shared state"),
                "{question}"
            );
            assert_eq!(
                project.join("deployed.txt").exists(),
                runs,
                "{mode} {answer}: {seen}"
            );
            let text = seen["text"].as_str().unwrap();
            if runs {
                assert!(text.contains("deployed"), "{mode}: {text}");
            } else {
                assert_eq!(seen["is_error"], true, "{mode} {answer}");
                assert!(text.contains("COMMAND_NOT_ALLOWED"), "{text}");
                assert!(text.contains("The user was asked to approve"), "{text}");
            }
        }
    }
}

/// A command with the network whose arguments name a host the project
/// does not use (`git push https://other/...`) asks first: a no (or no
/// answer) sends nothing there; a yes lets that one command reach it,
/// through the proxy that refused it before.
#[cfg(target_os = "linux")]
#[test]
fn a_host_named_in_the_arguments_is_reached_only_after_a_yes() {
    let Some(python) = python() else { return };
    for (answer, reached) in [("no", false), ("decline", false), ("yes", true)] {
        let (sandbox, project) = Sandbox::with_project();
        crate::common::git(&project, &["init", "-q", "-b", "main"]);
        crate::common::git(&project, &["commit", "-q", "--allow-empty", "-m", "one"]);
        // The other host: it counts connections and answers each with a 404.
        let other = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
        let url = format!(
            "http://127.0.0.2:{}/x.git",
            other.local_addr().unwrap().port()
        );
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = count.clone();
        std::thread::spawn(move || {
            for mut stream in other.incoming().flatten() {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = std::io::Write::write_all(
                    &mut stream,
                    b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n",
                );
            }
        });
        let args = json!({"command": format!("git push {url} main"), "working_directory": "proj"});
        let (seen, _) = run_script(
            &python,
            &sandbox,
            "mcp_consent.py",
            &["auto", answer, "run_powershell", &args.to_string(), BIN],
        );
        let questions = seen["questions"].as_array().unwrap();
        assert_eq!(questions.len(), 1, "{answer}: {seen}");
        let question = questions[0].as_str().unwrap();
        assert!(
            question.contains("it reaches 127.0.0.2:") && question.contains("this command alone"),
            "{question}"
        );
        let connections = count.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(connections > 0, reached, "{answer}: {seen}");
        if !reached {
            assert!(
                seen["text"]
                    .as_str()
                    .unwrap()
                    .contains("COMMAND_NOT_ALLOWED"),
                "{seen}"
            );
        }
    }
}

/// "Always" answers a rule's question for good, in that project and for
/// that exact line: the next identical call runs unasked, another line is
/// asked again, and work that cannot be undone is asked every time.
#[test]
fn always_allows_the_exact_line_in_its_project_from_then_on() {
    let Some(python) = python() else { return };
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("deploy.py"), "print('deployed')\n").unwrap();
    crate::common::git(&project, &["init", "-q"]);
    let rules = sandbox.cwd.join("rules.json");
    std::fs::write(
        &rules,
        r#"{"rules": [{"id": "ask-deploy", "programs": ["python3"], "when": {"args": ["deploy.py"]},
           "decision": "prompt", "justification": "deploying changes shared state",
           "match": ["python3 deploy.py"]}]}"#,
    )
    .unwrap();
    let sandbox = sandbox.set("WAMCP_COMMAND_RULES", rules.display().to_string());
    let call = |answer: &str, command: &str| {
        let args = json!({"command": command, "working_directory": "proj"});
        let (seen, _) = run_script(
            &python,
            &sandbox,
            "mcp_consent.py",
            &["legacy", answer, "run_powershell", &args.to_string(), BIN],
        );
        seen
    };
    let first = call("always", "python3 deploy.py");
    let question = first["questions"][0].as_str().unwrap();
    assert!(question.contains("Tick 'always'"), "{question}");
    assert!(
        first["text"].as_str().unwrap().contains("deployed"),
        "{first}"
    );
    let again = call("no", "python3 deploy.py");
    assert_eq!(again["questions"], json!([]), "{again}");
    assert!(
        again["text"].as_str().unwrap().contains("deployed"),
        "{again}"
    );
    let other = call("no", "python3 deploy.py --dry-run");
    assert_eq!(other["questions"].as_array().unwrap().len(), 1, "{other}");
    assert_eq!(other["is_error"], true, "{other}");
    for _ in 0..2 {
        let reset = call("always", "git push --force origin main");
        let question = reset["questions"][0].as_str().unwrap();
        assert!(!question.contains("Tick 'always'"), "{question}");
    }
    let kept = std::fs::read_to_string(
        sandbox
            .home()
            .join(".local/share/wamcp/command-approvals.json"),
    );
    assert!(kept.is_ok_and(|k| k.contains("python3 deploy.py") && !k.contains("push")));
}

/// An approval-required capability asks the user in both eras; only a yes
/// runs it, and the trail records the question and what followed.
#[test]
fn an_approval_required_capability_asks_in_both_eras() {
    let Some(python) = python() else { return };
    for mode in ["legacy", "auto"] {
        for (answer, runs) in [("yes", true), ("no", false), ("decline", false)] {
            let (sandbox, project) = Sandbox::with_project();
            let catalog = sandbox.write(
                "caps.json",
                r#"{"capabilities": [{"id": "publish", "description": "Publish.", "safety": "approval-required",
                   "argv": [["touch", "published.txt"]]}]}"#,
            );
            let sandbox = sandbox.set("WAMCP_CAPABILITIES_FILE", catalog.display().to_string());
            // An argument laid out to read like the end of the question.
            let spoof = "x\n\nin proj. It is classified read-only.\u{1b}[2J";
            let args = json!({"capability": "publish", "cwd": "proj", "execute": true});
            let (spoofed, _) = run_script(
                &python,
                &sandbox,
                "mcp_consent.py",
                &[mode, "no", "capability_run", &json!({"capability": "publish", "cwd": "proj", "execute": true, "extra_args": [spoof]}).to_string(), BIN],
            );
            let question = spoofed["questions"][0].as_str().unwrap();
            assert!(
                question.contains(
                    "published.txt \"x\\u{000A}\\u{000A}in proj. It is classified read-only.\\u{001B}[2J\"\n"
                ),
                "{question}"
            );
            let (seen, _) = run_script(
                &python,
                &sandbox,
                "mcp_consent.py",
                &[mode, answer, "capability_run", &args.to_string(), BIN],
            );
            let questions = seen["questions"].as_array().unwrap();
            assert_eq!(questions.len(), 1, "{mode} {answer}: {seen}");
            let question = questions[0].as_str().unwrap();
            assert!(question.contains("    touch published.txt\n"), "{question}");
            assert!(
                question.contains("classified approval-required"),
                "{question}"
            );
            assert_eq!(
                project.join("published.txt").exists(),
                runs,
                "{mode} {answer}: {seen}"
            );
            assert_eq!(seen["is_error"], false, "{mode} {answer}: {seen}");
            let result: Value = serde_json::from_str(seen["text"].as_str().unwrap()).unwrap();
            assert_eq!(
                result["status"],
                if runs { "completed" } else { "blocked" },
                "{result}"
            );
        }
    }
}

/// An install asks the user, runs only on a yes, and is verified by asking
/// the package manager afterwards; the trail records it.
#[test]
fn an_install_is_approved_then_verified() {
    let Some(python) = python() else { return };
    for (answer, installed) in [("yes", true), ("no", false)] {
        let (sandbox, log, state) = common::with_fake_winget();
        let args = json!({"package_id": "Fake.Tool", "execute": true});
        let (seen, _) = run_script(
            &python,
            &sandbox,
            "mcp_consent.py",
            &["legacy", answer, "package_install", &args.to_string(), BIN],
        );
        let question = seen["questions"][0].as_str().unwrap();
        assert!(
            question.contains("winget install --id Fake.Tool --exact --source winget"),
            "{question}"
        );
        assert_eq!(state.exists(), installed, "{answer}: {seen}");
        let result: Value = serde_json::from_str(seen["text"].as_str().unwrap()).unwrap();
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        if installed {
            assert_eq!(result["status"], "completed", "{result:#}");
            assert_eq!(result["installed_before"], false);
            assert_eq!(result["installed_after"], true);
            assert_eq!(
                result["verification"],
                "the installer succeeded and the package is now listed as installed"
            );
            let calls: Vec<&str> = log.lines().map(|l| l.split(' ').next().unwrap()).collect();
            assert_eq!(calls, ["list", "install", "list"], "{log}");
        } else {
            assert_eq!(result["status"], "blocked", "{result:#}");
            assert_eq!(log, "");
        }
    }
}

/// A Dev Container run is asked about with its exact argv and runs the
/// CLI with exactly that argv on a yes.
#[test]
fn a_dev_container_run_is_approved_then_completed() {
    let Some(python) = python() else { return };
    let (sandbox, project, log) = common::with_fake_devcontainer();
    std::fs::create_dir_all(project.join(".devcontainer")).unwrap();
    std::fs::write(project.join(".devcontainer/devcontainer.json"), "{}").unwrap();
    let args = json!({"command": "npm test", "isolation_requirement": "project_reproducibility",
                      "workspace_folder": "proj", "execute": true});
    let (seen, _) = run_script(
        &python,
        &sandbox,
        "mcp_consent.py",
        &["legacy", "yes", "sandbox_run", &args.to_string(), BIN],
    );
    let question = seen["questions"][0].as_str().unwrap();
    assert!(
        question.contains("devcontainer exec --workspace-folder"),
        "{question}"
    );
    let result: Value = serde_json::from_str(seen["text"].as_str().unwrap()).unwrap();
    assert_eq!(result["status"], "completed", "{result:#}");
    assert_eq!(result["stdout_tail"], "ran\n");
    // What the container wrote through its mount is a step like any other.
    assert!(project.join("made-in-container.txt").exists());
    assert_eq!(result["undo"]["changed"], "1 file added", "{result:#}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        logged,
        format!(
            "exec\n--workspace-folder\n{}\nsh\n-lc\nnpm test\n",
            project.display()
        )
    );
}

/// Writing a file that changes what an agent may do (here `.mcp.json`)
/// asks the user in both eras; only a yes writes it.
#[test]
fn an_agent_trust_file_is_written_only_after_a_yes() {
    let Some(python) = python() else { return };
    for mode in ["legacy", "auto"] {
        for (answer, writes) in [("yes", true), ("no", false)] {
            let (sandbox, project) = Sandbox::with_project();
            let args = json!({"path": "proj/.mcp.json", "content": "{\"mcpServers\": {}}"});
            let (seen, _) = run_script(
                &python,
                &sandbox,
                "mcp_consent.py",
                &[mode, answer, "write_file", &args.to_string(), BIN],
            );
            let questions = seen["questions"].as_array().unwrap();
            assert_eq!(questions.len(), 1, "{mode} {answer}: {seen}");
            assert!(
                questions[0]
                    .as_str()
                    .unwrap()
                    .contains("an MCP client configuration"),
                "{seen}"
            );
            assert_eq!(
                project.join(".mcp.json").exists(),
                writes,
                "{mode} {answer}: {seen}"
            );
            let text = seen["text"].as_str().unwrap();
            if !writes {
                assert!(text.contains("PROTECTED_PATH"), "{text}");
            }
        }
    }
}

/// An unlisted host becomes a question to the user in both eras. The host
/// asked about has a 64-character label, which the resolver rejects without
/// sending a query, so an approved fetch fails at name resolution
/// (PAGE_FETCH_FAILED) instead of at the policy (URL_NOT_ALLOWED), and the
/// suite stays off the network. Writing an "always" answer to the grants
/// file is covered by `hostgrants`' own tests.
#[test]
fn an_unlisted_host_becomes_a_question_in_both_eras() {
    let Some(python) = python() else { return };
    let host = format!("{}.invalid", "x".repeat(64));
    let args = json!({"url": format!("https://{host}/page")});
    for mode in ["legacy", "auto"] {
        for (answer, persist, kind) in [
            ("yes", "0", "PAGE_FETCH_FAILED"),
            ("always", "1", "PAGE_FETCH_FAILED"),
            ("no", "0", "URL_NOT_ALLOWED"),
            ("decline", "0", "URL_NOT_ALLOWED"),
        ] {
            let sandbox = Sandbox::new().set("WAMCP_HOST_GRANT_PERSIST", persist);
            let grants = sandbox.grants_file();
            let (seen, log) = run_script(
                &python,
                &sandbox,
                "mcp_consent.py",
                &[mode, answer, "fetch_web_page", &args.to_string(), BIN],
            );
            let questions = seen["questions"].as_array().unwrap();
            assert_eq!(questions.len(), 1, "{mode} {answer}: {seen}");
            assert!(questions[0].as_str().unwrap().contains(&host), "{seen}");
            let text = seen["text"].as_str().unwrap();
            assert!(text.contains(kind), "{mode} {answer}: {text}");
            if kind == "URL_NOT_ALLOWED" {
                assert!(
                    text.contains("the user was asked and the user declined"),
                    "{text}"
                );
            }
            // "always" reaches the server, which tries to record the host; a
            // 64-character label is no DNS name, so the file refuses it.
            assert_eq!(
                log.contains(&format!("could not record the grant for {host}")),
                answer == "always",
                "{mode} {answer}: {log}"
            );
            assert!(!grants.exists());
        }
    }
}

/// The official SDK over streamable HTTP, in both eras.
#[test]
fn streamable_http_serves_both_eras() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new().set("WAMCP_TOOLS", "core,docs");
    let server = sandbox.serve_http();
    let sandbox = sandbox.set("WAMCP_TEST_HTTP_TOKEN", server.token.clone());
    for (mode, era) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let seen = run_client_for(&python, &sandbox, mode, &[&server.url]);
        assert_eq!(seen["protocol_version"], era, "{mode}");
        assert_eq!(seen["tools"].as_array().unwrap().len(), 8, "{mode}");
        assert_eq!(seen["info"]["transport"], "http", "{mode}");
        assert_eq!(seen["bad"]["error"]["type"], "INVALID_ARGUMENTS", "{mode}");
    }
}

/// A client's workspace roots become writable roots for the session, a
/// change of list is followed, and a root that is the home directory, a
/// file system root or not a local folder is refused with the reason.
#[test]
fn client_roots_become_writable_and_follow_list_changes() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let (one, two) = (sandbox.root().join("one"), sandbox.root().join("two"));
    for d in [&one, &two] {
        std::fs::create_dir_all(d).unwrap();
    }
    let uri = |p: &std::path::Path| format!("file://{}", p.display());
    // A folder on PATH (an activated venv's bin) cannot become the agent's
    // through a root: a program planted there would run by name. wamcp's
    // own data folder can never be a root either.
    let three = sandbox.root().join("three");
    let planted = three.join("bin");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::write(planted.join("git"), "#!/bin/sh\necho planted\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let executable = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(planted.join("git"), executable).unwrap();
    }
    let data = sandbox.root().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let path = format!(
        "{}:{}",
        planted.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sandbox = sandbox
        .set("PATH", path)
        .set("WAMCP_DATA_DIR", data.display().to_string());
    let first = json!([
        uri(&one),
        uri(&sandbox.home()),
        "file:///",
        "file://server/share",
        uri(&data),
        uri(&three)
    ]);
    let second = json!([uri(&two)]);
    let (report, stderr) = run_script(
        &python,
        &sandbox,
        "mcp_roots.py",
        &["legacy", &first.to_string(), &second.to_string(), BIN],
    );
    let info = &report["first_info"];
    assert_eq!(
        info["client_roots"]["accepted"],
        json!([one.display().to_string()]),
        "{report}"
    );
    let refused = info["client_roots"]["refused"].to_string();
    assert!(refused.contains("home directory"), "{refused}");
    assert!(refused.contains("root"), "{refused}");
    assert!(refused.contains("another machine"), "{refused}");
    assert!(refused.contains("which wamcp trusts"), "{refused}");
    assert!(refused.contains("a folder on PATH"), "{refused}");
    assert!(
        info["writable_root_origins"]
            .as_array()
            .unwrap()
            .contains(&json!({"path": one.display().to_string(), "from": "client roots"})),
        "{info}"
    );
    assert_eq!(
        report["first_write"],
        json!({"is_error": false, "exists": true}),
        "{stderr}"
    );
    let after = &report["second_info"];
    assert_eq!(
        after["client_roots"]["accepted"],
        json!([two.display().to_string()]),
        "{report}"
    );
    assert!(
        !after["writable_roots"]
            .to_string()
            .contains(&one.display().to_string())
    );
    assert_eq!(
        report["second_write"],
        json!({"is_error": false, "exists": true})
    );

    // The stateless era asks through an input-required round, and again
    // after the client says its list changed.
    let (report, stderr) = run_script(
        &python,
        &sandbox,
        "mcp_roots.py",
        &[
            "2026-07-28",
            &json!([uri(&two)]).to_string(),
            &json!([uri(&one)]).to_string(),
            BIN,
        ],
    );
    assert_eq!(
        report["first_info"]["client_roots"]["accepted"],
        json!([two.display().to_string()]),
        "{report} {stderr}"
    );
    assert_eq!(
        report["first_write"],
        json!({"is_error": false, "exists": true})
    );
    assert_eq!(
        report["second_info"]["client_roots"]["accepted"],
        json!([one.display().to_string()])
    );
    assert_eq!(report["asked"], 2, "{report}");

    // Switched off, the same client's roots give nothing to write to: `0`
    // is as good as `off` (it once left them writable).
    let off = sandbox.set("WAMCP_CLIENT_ROOTS", "0");
    let (report, _) = run_script(
        &python,
        &off,
        "mcp_roots.py",
        &[
            "legacy",
            &json!([uri(&one)]).to_string(),
            &json!([uri(&two)]).to_string(),
            BIN,
        ],
    );
    assert_eq!(report["asked"], 0, "{report}");
    assert_eq!(report["first_info"]["client_roots"]["enabled"], false);
    assert_eq!(report["second_write"]["is_error"], true, "{report}");
}

/// A bare repository served over git's smart HTTP on loopback; killed on
/// drop.
pub(crate) struct GitServer {
    _server: StandIn,
    pub(crate) url: String,
}

impl GitServer {
    pub(crate) fn start(python: &str, root: &std::path::Path) -> GitServer {
        let server = StandIn::start(python, "git_http.py", root);
        let url = format!("http://127.0.0.1:{}/remote.git", server.port);
        GitServer {
            _server: server,
            url,
        }
    }
}

/// A loopback server of `tests/python/`, stopped when dropped.
pub(crate) struct StandIn {
    child: std::process::Child,
    pub(crate) port: u16,
}

impl StandIn {
    /// Starts `tests/python/<script> root`, which prints its port first.
    pub(crate) fn start(python: &str, script: &str, root: &std::path::Path) -> StandIn {
        use std::io::BufRead;
        let script = format!(
            "{}/tests/python/{script}",
            std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo test")
        );
        let mut child = std::process::Command::new(python)
            .arg(script)
            .arg(root)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the server");
        let mut port = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        let port = port.trim().parse().expect("a port");
        StandIn { child, port }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A push that rewrites the remote's history asks every time, naming the
/// remote, the branch and the commits it would lose; declined, the remote
/// (a bare repository behind a loopback smart-HTTP server) is unchanged;
/// approved, it is rewritten; a fast-forward push asks nothing.
#[test]
fn remote_history_is_rewritten_only_with_the_users_yes() {
    let Some(python) = python() else { return };
    let (sandbox, project) = Sandbox::with_project();
    let served = sandbox.root().join("served");
    std::fs::create_dir(&served).unwrap();
    crate::common::git(
        &served,
        &["init", "-q", "--bare", "-b", "main", "remote.git"],
    );
    let server = GitServer::start(&python, &served);
    let bare = served.join("remote.git");
    let commit = |text: &str| {
        std::fs::write(project.join("f.txt"), text).unwrap();
        crate::common::git(&project, &["add", "-A"]);
        crate::common::git(&project, &["commit", "-q", "-m", text]);
    };
    crate::common::git(&project, &["init", "-q", "-b", "main"]);
    commit("a");
    commit("b");
    crate::common::git(&project, &["remote", "add", "origin", &server.url]);
    crate::common::git(&project, &["push", "-q", "origin", "main"]);
    let on_remote = common::git_stdout(&bare, &["rev-parse", "main"]);
    assert_eq!(
        on_remote,
        common::git_stdout(&project, &["rev-parse", "HEAD"])
    );
    crate::common::git(&project, &["reset", "-q", "--hard", "HEAD~1"]);
    commit("c");
    let push = |answer: &str, command: &str| {
        let args = json!({"command": command, "working_directory": "proj"});
        run_script(
            &python,
            &sandbox,
            "mcp_consent.py",
            &["legacy", answer, "run_powershell", &args.to_string(), BIN],
        )
        .0
    };
    for command in [
        "git push --force origin main",
        "git push origin +main",
        "git push origin :main",
        "git push --delete origin main",
    ] {
        let declined = push("no", command);
        let question = declined["questions"][0].as_str().unwrap_or_default();
        assert!(
            question.contains(&format!("remote origin ({})", server.url)),
            "{command}: {declined}"
        );
        let lost = if command.contains('+') || command.contains("force") {
            "main forced: 1 commits on the remote would be lost"
        } else {
            "main deleted: 1 commits on the remote would be lost"
        };
        assert!(question.contains(lost), "{command}: {question}");
        assert!(!question.contains("Tick 'always'"), "{question}");
        assert_eq!(declined["is_error"], true, "{declined}");
        assert_eq!(
            common::git_stdout(&bare, &["rev-parse", "main"]),
            on_remote,
            "{command}"
        );
    }
    let approved = push("yes", "git push --force origin main");
    assert_eq!(
        approved["questions"].as_array().unwrap().len(),
        1,
        "{approved}"
    );
    let pushed = common::git_stdout(&project, &["rev-parse", "HEAD"]);
    assert_eq!(
        common::git_stdout(&bare, &["rev-parse", "main"]),
        pushed,
        "{approved}"
    );
    commit("d");
    let forward = push("no", "git push origin main");
    assert_eq!(forward["questions"], json!([]), "{forward}");
    assert_eq!(
        common::git_stdout(&bare, &["rev-parse", "main"]),
        common::git_stdout(&project, &["rev-parse", "HEAD"]),
        "{forward}"
    );
}
