//! `tool_discover`: which developer tools are installed, and their versions.
//!
//! Each tool found on `PATH` is asked its version, all at once, each within
//! five seconds; one that does not answer is `unknown`, never absent. IDEs
//! are located but not started: asking `devenv` or `rider` for a version
//! can open the IDE on the user's desktop.

use crate::sources::Sources;
use serde_json::{Value, json};
use std::time::Duration;

/// How long one version probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// A program and the arguments that make it print its version; `None` for
/// a program only located.
pub type Probe = (&'static str, Option<&'static [&'static str]>);

/// The categories and what each probes.
pub const CATEGORIES: [(&str, &[Probe]); 4] = [
    (
        "runtimes",
        &[
            ("python", Some(&["--version"])),
            ("py", Some(&["--version"])),
            ("node", Some(&["--version"])),
            ("cargo", Some(&["--version"])),
            // `go` has no --version flag.
            ("go", Some(&["version"])),
            ("dotnet", Some(&["--version"])),
            // `-version` is the one every Java answers (on stderr).
            ("java", Some(&["-version"])),
        ],
    ),
    (
        "editors",
        &[
            ("code", Some(&["--version"])),
            ("devenv", None),
            ("rider", None),
            ("pycharm", None),
        ],
    ),
    (
        "package_managers",
        &[
            ("winget", Some(&["--version"])),
            ("choco", Some(&["--version"])),
            ("scoop", Some(&["--version"])),
            ("pip", Some(&["--version"])),
            ("uv", Some(&["--version"])),
            ("npm", Some(&["--version"])),
        ],
    ),
    (
        "vcs",
        &[
            ("git", Some(&["--version"])),
            ("gh", Some(&["--version"])),
            ("git-lfs", Some(&["--version"])),
        ],
    ),
];

/// Probes `category` (`all` for every one); `None` for an unknown name.
pub fn discover(sources: &dyn Sources, category: &str) -> Option<Value> {
    let chosen: Vec<_> = CATEGORIES
        .iter()
        .filter(|(name, _)| category == "all" || *name == category)
        .collect();
    if chosen.is_empty() {
        return None;
    }
    let mut result = serde_json::Map::new();
    std::thread::scope(|scope| {
        let running: Vec<_> = chosen
            .iter()
            .map(|(name, tools)| {
                let probes: Vec<_> = tools
                    .iter()
                    .map(|(tool, args)| scope.spawn(move || probe(sources, tool, *args)))
                    .collect();
                (name, probes)
            })
            .collect();
        for (name, probes) in running {
            let tools: Vec<Value> = probes
                .into_iter()
                .map(|p| {
                    p.join().unwrap_or_else(
                        |_| json!({"state": "unknown", "error": "the probe failed"}),
                    )
                })
                .collect();
            result.insert(name.to_string(), Value::Array(tools));
        }
    });
    let unknown = result
        .values()
        .flat_map(|tools| tools.as_array().into_iter().flatten())
        .filter(|t| t["state"] == "unknown")
        .count();
    Some(json!({
        "status": if unknown == 0 { "ok" } else { "degraded" },
        "category": category,
        "probe_timeout_seconds": PROBE_TIMEOUT.as_secs(),
        "tools": result,
    }))
}

fn probe(sources: &dyn Sources, name: &str, args: Option<&[&str]>) -> Value {
    let Some(path) = sources.program(name) else {
        return json!({"name": name, "state": "missing", "available": false, "path": null, "version": null});
    };
    let shown = path.display().to_string();
    let Some(args) = args else {
        return json!({"name": name, "state": "available", "available": true, "path": shown, "version": null,
                      "note": "located, not started: an IDE may open a window"});
    };
    match sources.output(&path, args, PROBE_TIMEOUT) {
        Ok(out) => match version_line(&out.stdout).or_else(|| version_line(&out.stderr)) {
            Some(version) if out.code == Some(0) => {
                json!({"name": name, "state": "available", "available": true, "path": shown, "version": version})
            }
            other => {
                json!({"name": name, "state": "unknown", "available": null, "path": shown, "version": null,
                            "error": format!("'{name} {}' exited with {:?}{}", args.join(" "), out.code,
                                             other.map(|l| format!(": {l}")).unwrap_or_default())})
            }
        },
        Err(e) => {
            json!({"name": name, "state": "unknown", "available": null, "path": shown, "version": null,
                         "error": e})
        }
    }
}

/// The first non-blank line, trimmed to 200 characters.
fn version_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{OsRow, Output, RegValue};
    use std::io;
    use std::path::{Path, PathBuf};

    struct Fake;

    impl Sources for Fake {
        fn trusted_program(&self, _: &Path) -> bool {
            true
        }
        fn program(&self, name: &str) -> Option<PathBuf> {
            ["git", "gh", "git-lfs", "code", "devenv"]
                .contains(&name)
                .then(|| PathBuf::from(format!("/bin/{name}")))
        }
        fn text_file(&self, _: &Path) -> io::Result<String> {
            unreachable!()
        }
        fn file_exists(&self, _: &Path) -> io::Result<bool> {
            unreachable!()
        }
        fn machine_value(&self, _: &str, _: &str) -> Result<Option<RegValue>, String> {
            unreachable!()
        }
        fn machine_subkeys(&self, _: &str) -> Result<Option<Vec<String>>, String> {
            unreachable!()
        }
        fn optional_feature(&self, _: &str) -> Result<Option<u32>, String> {
            unreachable!()
        }
        fn operating_system(&self) -> Result<OsRow, String> {
            unreachable!()
        }
        fn output(&self, program: &Path, args: &[&str], _: Duration) -> Result<Output, String> {
            assert_ne!(program, Path::new("/bin/devenv"), "IDEs are never started");
            match program.file_name().and_then(|n| n.to_str()) {
                Some("git") => Ok(Output {
                    code: Some(0),
                    stdout: b"\ngit version 2.47.1\n".to_vec(),
                    stderr: vec![],
                }),
                Some("gh") => Err("no answer within 5.0 s".into()),
                Some("git-lfs") => Ok(Output {
                    code: Some(1),
                    stdout: vec![],
                    stderr: b"boom".to_vec(),
                }),
                _ => Ok(Output {
                    code: Some(0),
                    stdout: vec![],
                    stderr: format!("v1 {}", args.join(" ")).into_bytes(),
                }),
            }
        }
    }

    #[test]
    fn found_missing_timed_out_and_failing_tools() {
        let vcs = discover(&Fake, "vcs").unwrap();
        assert_eq!(vcs["status"], "degraded");
        let tools = vcs["tools"]["vcs"].as_array().unwrap();
        assert_eq!(tools[0]["version"], "git version 2.47.1");
        assert_eq!(tools[0]["state"], "available");
        assert_eq!(tools[1]["state"], "unknown");
        assert_eq!(tools[1]["available"], Value::Null);
        assert_eq!(tools[1]["error"], "no answer within 5.0 s");
        assert_eq!(
            tools[2]["error"],
            "'git-lfs --version' exited with Some(1): boom"
        );
        let editors = discover(&Fake, "editors").unwrap();
        let tools = editors["tools"]["editors"].as_array().unwrap();
        assert_eq!(tools[0]["version"], "v1 --version");
        assert_eq!(tools[1]["state"], "available");
        assert_eq!(tools[1]["version"], Value::Null);
        assert_eq!(tools[2]["state"], "missing");
        assert_eq!(editors["status"], "ok");
    }

    #[test]
    fn all_covers_every_category_and_unknown_names_are_refused() {
        let all = discover(&Fake, "all").unwrap();
        let names: Vec<&String> = all["tools"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["runtimes", "editors", "package_managers", "vcs"]);
        assert!(discover(&Fake, "compilers").is_none());
    }

    #[test]
    fn this_machines_git_answers() {
        let found = discover(&crate::sources::System::default(), "vcs").unwrap();
        let git = &found["tools"]["vcs"][0];
        if crate::sources::System::default().program("git").is_some() {
            assert!(
                git["version"].as_str().unwrap().contains("git version"),
                "{git}"
            );
        } else {
            assert_eq!(git["state"], "missing");
        }
    }
}
