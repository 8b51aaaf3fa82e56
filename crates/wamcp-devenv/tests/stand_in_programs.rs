//! Package installs and sandbox routes, run for real against stand-ins.
//!
//! This test binary copies itself onto a fresh `PATH` under the names of
//! the programs wamcp starts (`choco`, `scoop`, `brew`, `apt-get`,
//! `apt-cache`, `dpkg-query`, `sudo`, `winget`, `wsl`, and on Windows
//! `WindowsSandbox.exe` under a stand-in `%SystemRoot%`). Started under
//! such a name it acts as that program: it records its arguments and keeps
//! "installed" state in a folder, so each install is planned, run, and
//! verified through the same code paths a real manager goes through, and
//! the recorded argv is compared exactly.

// Tests fail loudly by design, so they may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use wamcp_devenv::packages::{self, InstallPlan};
use wamcp_devenv::sandbox::{RealFs, SandboxPlan, check_payload};
use wamcp_policy::devenv::packages::Source;
use wamcp_policy::devenv::sandbox::Environment;

const STAND_INS: [&str; 10] = [
    "choco",
    "scoop",
    "brew",
    "apt-get",
    "apt-cache",
    "dpkg-query",
    "sudo",
    "winget",
    "wsl",
    "WindowsSandbox",
];

fn main() {
    let mut args = std::env::args();
    let argv0 = args.next().unwrap_or_default();
    let name = Path::new(&argv0)
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let rest: Vec<String> = args.collect();
    if let Some(state) = std::env::var_os("STAND_IN_STATE")
        && STAND_INS.iter().any(|s| s.eq_ignore_ascii_case(&name))
    {
        std::process::exit(act(Path::new(&state), &name, &rest));
    }
    if !answered_listing() {
        run_tests();
    }
}

/// Answers a test runner's listing (`--list`, as cargo-nextest asks it
/// with `--format terse`): this binary is one test named `stand_in_programs`, never
/// ignored. Returns whether it was a listing; anything else runs the test.
fn answered_listing() -> bool {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--list") {
        return false;
    }
    if !args.iter().any(|a| a == "--ignored") {
        println!("stand_in_programs: test");
    }
    true
}

/// Behaves as the program `name`; returns its exit code.
fn act(state: &Path, name: &str, args: &[String]) -> i32 {
    let mut record = vec![name.to_string()];
    record.extend(args.iter().cloned());
    let log = state.join("argv.jsonl");
    let mut old = std::fs::read_to_string(&log).unwrap_or_default();
    old.push_str(&format!("{}\n", Value::from(record)));
    std::fs::write(&log, old).unwrap();
    // One record per manager: apt-get installs what dpkg-query lists.
    let family = if name.starts_with("apt") || name == "dpkg-query" {
        "apt"
    } else {
        name
    };
    let marker = |id: &str| state.join(format!("installed-{family}-{id}"));
    let installed = |id: &str| marker(id).exists();
    let install = |id: &str| std::fs::write(marker(id), "").unwrap();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    let last = args.last().map(String::as_str).unwrap_or("");
    match (name, arg(0)) {
        ("sudo", "-n") => act(state, arg(1), &args[2..]),
        ("choco", "search") => {
            println!("Fake.Tool|1.0");
            0
        }
        ("choco" | "scoop" | "brew", "install") => {
            install(arg(1));
            0
        }
        ("choco", "list") => {
            if installed(arg(1)) {
                println!("{}|1.0", arg(1));
            }
            0
        }
        ("scoop", "search") => {
            println!("Results from local buckets...\n");
            println!("Name      Version Source Binaries\n----      ------- ------ --------");
            println!("fake-tool 1.0     main");
            0
        }
        ("scoop", "list") => {
            println!("Installed apps:\n");
            println!("Name      Version Source Updated\n----      ------- ------ -------");
            if installed(arg(1)) {
                println!("{:<9} 1.0     main   2026-11-30", arg(1));
            }
            0
        }
        ("brew", "search") => {
            println!("==> Formulae\nfake-tool");
            0
        }
        ("brew", "list") if installed(last) => {
            println!("{last} 1.0");
            0
        }
        ("apt-cache", "search") => {
            println!("fake-tool - a tool that is not real");
            0
        }
        ("apt-cache", "show") => {
            println!("Package: {last}\nVersion: 1.0");
            0
        }
        ("apt-get", "install") => {
            install(last);
            0
        }
        ("dpkg-query", _) if installed(last) => {
            println!("install ok installed 1.0");
            0
        }
        ("dpkg-query", _) => {
            eprintln!("dpkg-query: no packages found matching {last}");
            1
        }
        ("winget", "search") => {
            println!("Name   Id         Version  Source\n----------------------------------");
            println!("Fake   Fake.Tool  1.0      winget");
            0
        }
        ("winget", "install") => {
            install(arg(2));
            0
        }
        ("winget", "list") if installed(arg(2)) => {
            println!("Name   Id         Version  Source\n----------------------------------");
            println!("Fake   {}  1.0      winget", arg(2));
            0
        }
        ("winget", "list") => {
            println!("No installed package found matching input criteria.");
            1
        }
        ("wsl", _) => {
            println!("{}", Value::from(args.to_vec()));
            0
        }
        // Windows Sandbox returns at once; the sandbox runs on its own.
        ("windowssandbox", _) => 0,
        _ => 2,
    }
}

/// What the stand-ins recorded since the last call.
fn take_log(state: &Path) -> Vec<Vec<String>> {
    let log = state.join("argv.jsonl");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn run_tests() {
    let temp = tempfile::tempdir().unwrap();
    let work = dunce::canonicalize(temp.path()).unwrap();
    let (bin, state, system) = (work.join("bin"), work.join("state"), work.join("windows"));
    for dir in [&bin, &state, &system.join("System32")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let me = std::env::current_exe().unwrap();
    let suffix = if cfg!(windows) { ".exe" } else { "" };
    for name in STAND_INS {
        let at = if name == "WindowsSandbox" {
            system.join("System32")
        } else {
            bin.clone()
        };
        std::fs::copy(&me, at.join(format!("{name}{suffix}"))).unwrap();
    }
    // SAFETY: no other thread runs yet; the runtime starts below.
    unsafe {
        std::env::set_var("PATH", &bin);
        std::env::set_var("STAND_IN_STATE", &state);
        std::env::set_var("SystemRoot", &system);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        installs_are_run_and_verified(&state).await;
        searches_read_each_managers_answer(&state).await;
        wsl_runs_the_command_or_says_why_not(&work, &state).await;
        windows_sandbox_launches_the_staged_bundle_or_says_why_not(&work, &state).await;
    });
    println!("stand_in_programs: every check passed");
}

fn install_calls(source: Source, id: &str, as_root: bool) -> Vec<Vec<String>> {
    let verify = source.verify(id);
    let install = source.install(id, as_root);
    let mut calls = Vec::new();
    if source == Source::Apt {
        calls.push(strings(&["apt-cache", "show", "--no-all-versions", id]));
    }
    calls.push(verify.clone());
    calls.push(install.clone());
    if install[0] == "sudo" {
        // sudo hands the rest to apt-get, which records itself too.
        calls.push(install[2..].to_vec());
    }
    calls.push(verify);
    calls
}

async fn installs_are_run_and_verified(state: &Path) {
    let as_root = packages::is_root();
    // The exact install argv, spelled out once so a change to it shows.
    assert_eq!(
        Source::Winget.install("Fake.Tool", false),
        strings(&[
            "winget",
            "install",
            "--id",
            "Fake.Tool",
            "--exact",
            "--source",
            "winget",
            "--accept-package-agreements",
            "--accept-source-agreements",
            "--disable-interactivity",
        ])
    );
    for (source, id) in [
        (Source::Winget, "Fake.Tool"),
        (Source::Chocolatey, "fake.tool"),
        (Source::Scoop, "fake-tool"),
        (Source::Brew, "fake-tool"),
        (Source::Apt, "fake-tool"),
    ] {
        take_log(state);
        let plan = InstallPlan::new(source, id, &Default::default());
        assert!(
            plan.executable.is_some(),
            "{source:?}: the stand-in is on PATH"
        );
        let (view, entry) = plan.execute(&Default::default(), None).await;
        assert_eq!(view["status"], "completed", "{source:?}: {view}");
        assert_eq!(view["installed_before"], false, "{source:?}");
        assert_eq!(view["installed_after"], true, "{source:?}");
        assert_eq!(
            view["verification"],
            "the installer succeeded and the package is now listed as installed",
            "{source:?}"
        );
        assert_eq!(entry.detail.as_deref(), Some("exit code 0"));
        assert_eq!(
            take_log(state),
            install_calls(source, id, as_root),
            "{source:?}"
        );
        let (again, _) = plan.execute(&Default::default(), None).await;
        assert_eq!(
            again["verification"], "the package was already installed and still is",
            "{source:?}: {again}"
        );
    }
    take_log(state);
}

async fn searches_read_each_managers_answer(state: &Path) {
    for (source, id) in [
        (Source::Winget, "Fake.Tool"),
        (Source::Chocolatey, "Fake.Tool"),
        (Source::Scoop, "fake-tool"),
        (Source::Brew, "fake-tool"),
        (Source::Apt, "fake-tool"),
    ] {
        let found = packages::search(&Default::default(), source, "fake").await;
        assert_eq!(found["status"], "completed", "{source:?}: {found}");
        assert_eq!(found["result_count"], 1, "{source:?}: {found}");
        assert_eq!(found["results"][0]["id"], id, "{source:?}: {found}");
        assert_eq!(take_log(state), vec![source.search("fake")], "{source:?}");
    }
}

async fn wsl_runs_the_command_or_says_why_not(work: &Path, state: &Path) {
    let project = work.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let command = "make test && echo \"done\" 'quoted'";
    let plan = SandboxPlan::new(
        Environment::Wsl,
        &project,
        command,
        &[],
        &Default::default(),
    )
    .unwrap();
    let (view, _) = plan.execute(&Default::default(), None, None).await;
    if cfg!(windows) {
        assert_eq!(view["status"], "completed", "{view}");
        let echoed: Value =
            serde_json::from_str(view["stdout_tail"].as_str().unwrap().trim()).unwrap();
        let shown = project.display().to_string();
        assert_eq!(echoed, json!(["--cd", shown, "--", "sh", "-lc", command]));
        assert_eq!(take_log(state).len(), 1);
    } else {
        assert_eq!(view["status"], "unavailable", "{view}");
        assert_eq!(view["reason"], "WSL exists only on Windows");
        assert!(take_log(state).is_empty(), "nothing ran");
    }
}

async fn windows_sandbox_launches_the_staged_bundle_or_says_why_not(work: &Path, state: &Path) {
    let project = work.join("payload-project");
    std::fs::create_dir_all(project.join("bin")).unwrap();
    std::fs::write(project.join("bin").join("setup.exe"), b"MZ-not-really").unwrap();
    let list = strings(&["bin"]);
    let plan = SandboxPlan::new(
        Environment::WindowsSandbox,
        &project,
        "setup.exe /quiet",
        &list,
        &Default::default(),
    )
    .unwrap();
    assert_eq!(
        plan.payload.as_ref().map(|p| p.entries.len()),
        Some(2),
        "the payload is checked for real everywhere"
    );
    let bundles = work.join("bundles");
    let (view, _) = plan
        .execute(&Default::default(), Some(&bundles), None)
        .await;
    if cfg!(windows) {
        assert_eq!(view["status"], "launched", "{view}");
        let bundle = PathBuf::from(view["cleanup_path"].as_str().unwrap());
        let payload = bundle.join("share").join("payload");
        let staged = payload.join("bin").join("setup.exe");
        assert_eq!(std::fs::read(staged).unwrap(), b"MZ-not-really");
        let wsb = std::fs::read_to_string(bundle.join("sandbox.wsb")).unwrap();
        assert!(wsb.contains("<Networking>Disable</Networking>"), "{wsb}");
        // The launch does not wait for the sandbox; its stand-in records
        // itself soon after (a bounded wait, not a timing check).
        let config = bundle.join("sandbox.wsb").display().to_string();
        let mut log = Vec::new();
        for _ in 0..300 {
            log = take_log(state);
            if !log.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert_eq!(log, vec![strings(&["windowssandbox", &config])]);
        let again = check_payload(&payload, &list, &RealFs).map(|p| p.entries.len());
        assert_eq!(again, Ok(2));
    } else {
        assert_eq!(view["status"], "unavailable", "{view}");
        assert_eq!(view["reason"], "Windows Sandbox exists only on Windows");
        assert!(!bundles.exists(), "an unavailable launch stages nothing");
        assert!(take_log(state).is_empty(), "nothing ran");
    }
}
