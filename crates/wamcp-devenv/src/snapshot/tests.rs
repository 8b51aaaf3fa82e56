use super::*;
use crate::sources::{OsRow, Output};
use std::io;

/// Answers of our choosing; `broken` makes every fallible question fail.
struct Fake {
    broken: bool,
}

impl Sources for Fake {
    fn trusted_program(&self, _: &Path) -> bool {
        true
    }
    fn program(&self, name: &str) -> Option<PathBuf> {
        match name {
            "py" => Some(PathBuf::from(r"C:\Windows\py.exe")),
            "winget" => Some(PathBuf::from(
                r"C:\Users\u\AppData\Local\Microsoft\WindowsApps\winget.exe",
            )),
            "git" | "cargo" => Some(PathBuf::from(format!("/usr/bin/{name}"))),
            "docker" => Some(PathBuf::from(
                r"C:\Program Files\Docker\Docker\resources\bin\docker.exe",
            )),
            "devcontainer" => Some(PathBuf::from(
                r"C:\Users\u\AppData\Roaming\npm\devcontainer.cmd",
            )),
            _ => None,
        }
    }

    fn env_var(&self, _: &str) -> Option<String> {
        None
    }

    fn folder_names(&self, _: &Path) -> io::Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn dev_drives(&self) -> Result<Vec<String>, String> {
        if self.broken {
            return Err(r"D:\: error 5 asking whether it is a Dev Drive".into());
        }
        Ok(vec!["D:".into()])
    }

    fn text_file(&self, path: &Path) -> io::Result<String> {
        if self.broken {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, "denied"));
        }
        match path.to_str() {
            Some("/etc/os-release") => Ok("NAME=Debian\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nID=debian\nVERSION_ID=\"13\"\n".into()),
            _ => Ok("6.12.0\n".into()),
        }
    }

    fn file_exists(&self, _path: &Path) -> io::Result<bool> {
        if self.broken {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, "denied"));
        }
        Ok(true)
    }

    fn machine_value(&self, key: &str, value: &str) -> Result<Option<RegValue>, String> {
        if self.broken {
            return Err(format!("registry {key}\\{value}: error 5"));
        }
        Ok(match value {
            "EditionID" => Some(RegValue::Text("Professional".into())),
            "DisplayVersion" => Some(RegValue::Text("24H2".into())),
            "AllowDevelopmentWithoutDevLicense" => Some(RegValue::Number(1)),
            "KitsRoot10" => Some(RegValue::Text(
                r"C:\Program Files (x86)\Windows Kits\10\".into(),
            )),
            _ => None,
        })
    }

    fn machine_subkeys(&self, _key: &str) -> Result<Option<Vec<String>>, String> {
        if self.broken {
            return Err("registry: error 5".into());
        }
        Ok(Some(vec![
            "10.0.26100.0".into(),
            "10.0.22621.0".into(),
            "x".into(),
        ]))
    }

    fn optional_feature(&self, name: &str) -> Result<Option<u32>, String> {
        if self.broken {
            return Err("WMI: 0x80041003".into());
        }
        Ok(Some(if name == "Containers-DisposableClientVM" {
            1
        } else {
            2
        }))
    }

    fn operating_system(&self) -> Result<OsRow, String> {
        if self.broken {
            return Err("WMI: 0x80041003".into());
        }
        Ok(OsRow {
            caption: "Microsoft Windows 11 Pro".into(),
            version: "10.0.26100".into(),
            build: "26100".into(),
            architecture: "64-bit".into(),
        })
    }

    fn output(&self, program: &Path, _args: &[&str], _timeout: Duration) -> Result<Output, String> {
        if self.broken {
            return Err("no answer within 10.0 s".into());
        }
        let stdout = if program.ends_with("wsl.exe") {
            "Ubuntu-24.04\r\ndocker-desktop\r\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect()
        } else {
            br#"[{"displayName": "Visual Studio Build Tools 2022", "installationVersion": "17.12.3", "installationPath": "C:\\BuildTools", "productId": "Microsoft.VisualStudio.Product.BuildTools"}]"#.to_vec()
        };
        Ok(Output {
            code: Some(0),
            stdout,
            stderr: Vec::new(),
        })
    }
}

fn keys(snapshot: &Value, field: &str) -> Vec<String> {
    snapshot[field]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn a_healthy_windows_machine() {
    let s = windows(&Fake { broken: false });
    assert_eq!(s["status"], "ok");
    assert_eq!(s["errors"], json!([]));
    assert_eq!(s["os"]["name"], "Microsoft Windows 11 Pro");
    assert_eq!(s["os"]["edition"], "Professional");
    assert_eq!(s["os"]["display_version"], "24H2");
    let a = &s["availability"];
    assert_eq!(a["runtime.python"], true);
    assert_eq!(s["details"]["runtime.python"]["program"], "py");
    assert_eq!(a["runtime.node"], false);
    assert_eq!(s["probe_states"]["runtime.node"], "missing");
    assert_eq!(
        s["details"]["package_manager.winget"]["app_execution_alias"],
        true
    );
    assert_eq!(a["windows_sandbox"], true);
    assert_eq!(a["container.docker"], true);
    assert_eq!(a["container.podman"], false);
    assert_eq!(a["devcontainer_cli"], true);
    assert_eq!(a["dev_drive"], true);
    assert_eq!(s["details"]["dev_drive"]["volumes"], json!(["D:"]));
    assert_eq!(a["hyper_v"], false);
    assert_eq!(a["developer_mode"], true);
    assert_eq!(a["long_paths"], false);
    assert_eq!(
        s["details"]["wsl"]["distributions"],
        json!(["Ubuntu-24.04", "docker-desktop"])
    );
    assert_eq!(
        s["details"]["windows_sdk"]["versions"],
        json!(["10.0.22621.0", "10.0.26100.0"])
    );
    assert_eq!(
        s["details"]["visual_studio"]["instances"][0]["version"],
        "17.12.3"
    );
    for personal in ["username", "user", "domain", "git_user", "email"] {
        assert!(
            s.get(personal).is_none() && s["os"].get(personal).is_none(),
            "{personal}"
        );
    }
}

#[test]
fn failed_probes_are_unknown_never_false_and_the_shape_stays() {
    let good = windows(&Fake { broken: false });
    let bad = windows(&Fake { broken: true });
    assert_eq!(bad["status"], "degraded");
    for field in ["availability", "probe_states"] {
        assert_eq!(keys(&good, field), keys(&bad, field), "{field}");
    }
    assert_eq!(keys(&good, "os"), keys(&bad, "os"));
    for key in [
        "windows_sandbox",
        "hyper_v",
        "developer_mode",
        "long_paths",
        "wsl",
        "visual_studio",
        "windows_sdk",
        "dev_drive",
    ] {
        assert_eq!(bad["availability"][key], Value::Null, "{key}");
        assert_eq!(bad["probe_states"][key], "unknown", "{key}");
        assert!(
            bad["errors"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["probe"] == key),
            "{key}: {}",
            bad["errors"]
        );
    }
    // PATH lookups cannot fail; they stay observed.
    assert_eq!(bad["availability"]["runtime.python"], true);
    assert_eq!(bad["os"]["name"], Value::Null);
}

#[test]
fn a_wsl_that_fails_and_a_feature_windows_does_not_list_are_unknown() {
    struct Odd;
    impl Sources for Odd {
        fn trusted_program(&self, _: &Path) -> bool {
            true
        }
        fn program(&self, _: &str) -> Option<PathBuf> {
            None
        }
        fn text_file(&self, _: &Path) -> io::Result<String> {
            Ok(String::new())
        }
        fn file_exists(&self, p: &Path) -> io::Result<bool> {
            Ok(p.ends_with("wsl.exe"))
        }
        fn machine_value(&self, _: &str, _: &str) -> Result<Option<RegValue>, String> {
            Ok(None)
        }
        fn machine_subkeys(&self, _: &str) -> Result<Option<Vec<String>>, String> {
            Ok(None)
        }
        fn optional_feature(&self, _: &str) -> Result<Option<u32>, String> {
            Ok(None)
        }
        fn operating_system(&self) -> Result<OsRow, String> {
            Ok(OsRow::default())
        }
        fn env_var(&self, _: &str) -> Option<String> {
            None
        }
        fn folder_names(&self, _: &Path) -> io::Result<Vec<String>> {
            Ok(Vec::new())
        }
        fn dev_drives(&self) -> Result<Vec<String>, String> {
            Ok(Vec::new())
        }
        fn output(&self, _: &Path, _: &[&str], _: Duration) -> Result<Output, String> {
            let stdout = "Windows Subsystem for Linux is not installed."
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect();
            Ok(Output {
                code: Some(-1),
                stdout,
                stderr: Vec::new(),
            })
        }
    }
    let s = windows(&Odd);
    assert_eq!(s["probe_states"]["wsl"], "unknown");
    assert!(s["errors"].to_string().contains(
        "wsl.exe --list exited with Some(-1): Windows Subsystem for Linux is not installed."
    ));
    assert_eq!(s["probe_states"]["windows_sandbox"], "unknown");
    assert_eq!(s["probe_states"]["visual_studio"], "missing");
    assert_eq!(s["probe_states"]["windows_sdk"], "missing");
    assert_eq!(s["availability"]["developer_mode"], false);
}

#[test]
fn the_unix_snapshot_from_fake_and_broken_sources() {
    let s = unix(&Fake { broken: false });
    assert_eq!(s["os"]["name"], "Debian GNU/Linux 13 (trixie)");
    assert_eq!(s["os"]["version"], "13");
    assert_eq!(s["os"]["kernel"], "6.12.0");
    assert_eq!(s["status"], "ok");
    let bad = unix(&Fake { broken: true });
    assert_eq!(bad["status"], "degraded");
    assert_eq!(bad["os"]["name"], Value::Null);
    assert_eq!(keys(&s, "availability"), keys(&bad, "availability"));
}

#[test]
fn this_machine_answers_with_a_consistent_snapshot() {
    let s = collect(&crate::sources::System::default());
    assert_eq!(
        s["platform"],
        if cfg!(windows) {
            "windows"
        } else {
            std::env::consts::OS
        }
    );
    let errors = s["errors"].as_array().unwrap();
    assert_eq!(
        s["status"],
        if errors.is_empty() { "ok" } else { "degraded" }
    );
    for (key, available) in s["availability"].as_object().unwrap() {
        let state = &s["probe_states"][key];
        let want = match available {
            Value::Bool(true) => "available",
            Value::Bool(false) => "missing",
            _ => "unknown",
        };
        assert_eq!(state, want, "{key}");
        assert_eq!(
            available.is_null(),
            errors.iter().any(|e| e["probe"] == *key),
            "{key}"
        );
    }
    if cfg!(windows) {
        assert!(
            s["os"]["name"]
                .as_str()
                .unwrap_or_default()
                .contains("Windows"),
            "{s:#}"
        );
        // Wine has no wsl.exe: observed absent, not unknown.
        assert!(s["availability"].get("windows_sandbox").is_some());
    } else {
        assert_eq!(
            s["availability"]["runtime.rust"], true,
            "cargo runs these tests"
        );
        assert!(s["os"]["kernel"].is_string());
    }
}

#[test]
fn the_cache_returns_exactly_what_it_returned_until_forced_or_invalidated() {
    let cache = Cache::default();
    let calls = std::cell::Cell::new(0);
    let collect = || {
        calls.set(calls.get() + 1);
        json!({"n": calls.get()})
    };
    let first = cache.get(false, collect);
    assert_eq!(cache.get(false, collect), first);
    assert_eq!(calls.get(), 1);
    assert_eq!(cache.get(true, collect), json!({"n": 2}));
    cache.invalidate();
    assert_eq!(cache.get(false, collect), json!({"n": 3}));
}

/// The Store's `python.exe` stand-in is on PATH of a fresh Windows: it is
/// not Python, and `py` or a real Store Python beside it still is.
#[test]
fn the_store_python_stand_in_is_not_python() {
    struct Store {
        real_package: Option<&'static str>,
        launcher: bool,
    }
    const APPS: &str = r"C:\Users\u\AppData\Local\Microsoft\WindowsApps";
    impl Sources for Store {
        fn trusted_program(&self, _: &Path) -> bool {
            true
        }
        fn program(&self, name: &str) -> Option<PathBuf> {
            match name {
                // Joined, so the test reads the same on every host.
                "python3" | "python" => Some(Path::new(APPS).join(format!("{name}.exe"))),
                "py" if self.launcher => Some(PathBuf::from(r"C:\Windows\py.exe")),
                _ => None,
            }
        }
        fn text_file(&self, _: &Path) -> io::Result<String> {
            Ok(String::new())
        }
        fn file_exists(&self, _: &Path) -> io::Result<bool> {
            Ok(false)
        }
        fn machine_value(&self, _: &str, _: &str) -> Result<Option<RegValue>, String> {
            Ok(None)
        }
        fn machine_subkeys(&self, _: &str) -> Result<Option<Vec<String>>, String> {
            Ok(None)
        }
        fn optional_feature(&self, _: &str) -> Result<Option<u32>, String> {
            Ok(None)
        }
        fn operating_system(&self) -> Result<OsRow, String> {
            Ok(OsRow::default())
        }
        fn output(&self, _: &Path, _: &[&str], _: Duration) -> Result<Output, String> {
            Err("not asked".into())
        }
        fn env_var(&self, _: &str) -> Option<String> {
            None
        }
        fn folder_names(&self, dir: &Path) -> io::Result<Vec<String>> {
            assert_eq!(dir, Path::new(APPS));
            let mut names = vec![
                "python.exe".to_string(),
                "python3.exe".into(),
                "winget.exe".into(),
            ];
            names.extend(self.real_package.map(String::from));
            Ok(names)
        }
        fn dev_drives(&self) -> Result<Vec<String>, String> {
            Ok(Vec::new())
        }
    }
    let stub = windows(&Store {
        real_package: None,
        launcher: false,
    });
    assert_eq!(stub["availability"]["runtime.python"], false);
    assert_eq!(stub["probe_states"]["runtime.python"], "missing");
    assert_eq!(
        stub["details"]["runtime.python"]["store_stub"],
        Path::new(APPS).join("python3.exe").display().to_string()
    );
    let launcher = windows(&Store {
        real_package: None,
        launcher: true,
    });
    assert_eq!(launcher["availability"]["runtime.python"], true);
    assert_eq!(launcher["details"]["runtime.python"]["program"], "py");
    // The Store's own Python, and the Python Install Manager's.
    for package in [
        "PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0",
        "PythonSoftwareFoundation.PythonManager_3847v3x7pw1km",
    ] {
        let real = windows(&Store {
            real_package: Some(package),
            launcher: false,
        });
        assert_eq!(real["availability"]["runtime.python"], true, "{package}");
        assert_eq!(real["details"]["runtime.python"]["program"], "python3");
        assert_eq!(
            real["details"]["runtime.python"]["app_execution_alias"],
            true
        );
    }
}
