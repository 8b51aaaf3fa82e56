//! `tool_discover`: which developer tools are installed, and their versions.
//!
//! Each tool found on `PATH` is asked its version, all at once, each within
//! five seconds; one that does not answer is `unknown`, never absent. IDEs
//! not on `PATH` are looked for where their installers put them
//! ([`crate::installs`]), and located but not started: asking `devenv` or
//! `rider` for a version can open the IDE on the user's desktop. The
//! Store's `python.exe` stand-in is reported missing, with a note.

use crate::installs::{installed_editor, is_store_python_stub};
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
            ("clion", None),
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
    let found = sources
        .program(name)
        .or_else(|| installed_editor(sources, name));
    let Some(path) = found else {
        return json!({"name": name, "state": "missing", "available": false, "path": null, "version": null});
    };
    if is_store_python_stub(sources, &path) {
        return json!({"name": name, "state": "missing", "available": false, "path": null, "version": null,
                      "note": format!("{} is the Microsoft Store's stand-in, not Python: it opens the Store",
                                      path.display())});
    }
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
        fn env_var(&self, _: &str) -> Option<String> {
            None
        }
        fn folder_names(&self, _: &Path) -> io::Result<Vec<String>> {
            Ok(Vec::new())
        }
        fn dev_drives(&self) -> Result<Vec<String>, String> {
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

    /// A Windows machine whose IDEs are where their installers put them,
    /// none on PATH.
    struct Installed;

    fn local() -> PathBuf {
        PathBuf::from(r"C:\Users\u\AppData\Local")
    }

    fn program_files() -> PathBuf {
        PathBuf::from(r"C:\Program Files")
    }

    fn installed_files() -> Vec<PathBuf> {
        vec![
            local()
                .join("JetBrains")
                .join("Toolbox")
                .join("scripts")
                .join("clion.cmd"),
            local()
                .join(r"Programs")
                .join("Microsoft VS Code")
                .join("bin")
                .join("code.cmd"),
            PathBuf::from(r"C:\Program Files (x86)")
                .join("Microsoft Visual Studio")
                .join("Installer")
                .join("vswhere.exe"),
            PathBuf::from(r"C:\VS\Common7\IDE\devenv.exe"),
            local()
                .join("Programs")
                .join("Rider")
                .join("bin")
                .join("rider64.exe"),
            program_files()
                .join("JetBrains")
                .join("PyCharm Community Edition 2024.10")
                .join("bin")
                .join("pycharm64.exe"),
            program_files()
                .join("JetBrains")
                .join("PyCharm Community Edition 2024.9")
                .join("bin")
                .join("pycharm64.exe"),
            local()
                .join("JetBrains")
                .join("Toolbox")
                .join("apps")
                .join("CLion")
                .join("ch-0")
                .join("243.22562.1")
                .join("bin")
                .join("clion64.exe"),
        ]
    }

    impl Sources for Installed {
        fn trusted_program(&self, path: &Path) -> bool {
            // The agent can write to the Toolbox's scripts folder here.
            !path.to_string_lossy().contains("scripts")
        }
        fn program(&self, _: &str) -> Option<PathBuf> {
            None
        }
        fn text_file(&self, _: &Path) -> io::Result<String> {
            unreachable!()
        }
        fn file_exists(&self, path: &Path) -> io::Result<bool> {
            Ok(installed_files().iter().any(|f| f == path))
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
        fn env_var(&self, name: &str) -> Option<String> {
            match name {
                "LOCALAPPDATA" => Some(local().display().to_string()),
                "ProgramFiles" => Some(program_files().display().to_string()),
                "ProgramFiles(x86)" => Some(r"C:\Program Files (x86)".into()),
                _ => None,
            }
        }
        fn folder_names(&self, dir: &Path) -> io::Result<Vec<String>> {
            // The names directly below `dir` of every installed file.
            let mut names: Vec<String> = installed_files()
                .iter()
                .filter_map(|f| f.strip_prefix(dir).ok()?.components().next())
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            names.dedup();
            Ok(names)
        }
        fn dev_drives(&self) -> Result<Vec<String>, String> {
            unreachable!()
        }
        fn output(&self, program: &Path, args: &[&str], _: Duration) -> Result<Output, String> {
            let name = program.file_name().unwrap().to_string_lossy();
            assert!(
                name == "vswhere.exe" || name == "code.cmd",
                "only vswhere and VS Code's launcher run, not {program:?}"
            );
            let stdout = if name == "vswhere.exe" {
                assert!(args.contains(&"productPath"), "{args:?}");
                "C:\\VS\\Common7\\IDE\\devenv.exe\r\n".to_string()
            } else {
                "1.96.2\nabc\nx64\n".to_string()
            };
            Ok(Output {
                code: Some(0),
                stdout: stdout.into_bytes(),
                stderr: vec![],
            })
        }
    }

    #[test]
    fn editors_are_found_where_they_install_not_only_on_path() {
        let editors = discover(&Installed, "editors").unwrap();
        let tools = editors["tools"]["editors"].as_array().unwrap();
        let path = |i: usize| tools[i]["path"].as_str().unwrap().to_string();
        assert_eq!(tools[0]["version"], "1.96.2");
        assert!(path(0).ends_with("code.cmd"), "{}", tools[0]);
        assert_eq!(path(1), r"C:\VS\Common7\IDE\devenv.exe");
        assert!(path(2).ends_with("rider64.exe"), "{}", tools[2]);
        // The newest of two standalone installs, by version number.
        assert!(path(3).contains("2024.10"), "{}", tools[3]);
        // A launcher where the agent can write is passed over, never run.
        assert!(path(4).contains("243.22562.1"), "{}", tools[4]);
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
