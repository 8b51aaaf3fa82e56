use super::*;
use PathStyle::{Unix, Windows};

fn unix_home(path_dirs: &[String]) -> Home<'_> {
    Home::new(Some("/home/u"), path_dirs, Unix)
}

fn windows_home(path_dirs: &[String]) -> Home<'_> {
    Home::new(Some(r"C:\Users\u"), path_dirs, Windows)
}

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn modes_parse_and_a_typo_is_an_error() {
    assert_eq!(SandboxMode::parse("auto"), Ok(SandboxMode::Auto));
    assert_eq!(SandboxMode::parse(" Require "), Ok(SandboxMode::Require));
    assert_eq!(SandboxMode::parse("OFF"), Ok(SandboxMode::Off));
    assert_eq!(SandboxMode::parse(""), Ok(SandboxMode::Auto));
    assert_eq!(
        SandboxMode::parse("on"),
        Err("WAMCP_COMMAND_SANDBOX must be auto, off or require, not 'on'".into())
    );
}

#[test]
fn the_defaults_are_the_caches_themselves() {
    let path = vec!["/usr/bin".to_string(), "/home/u/.cargo/bin".to_string()];
    let caches = writable_caches(None, &unix_home(&path), &no_env);
    assert_eq!(
        caches.entries,
        [
            "/home/u/.cargo/registry",
            "/home/u/.cargo/git",
            "/home/u/.npm/_cacache",
            "/home/u/.cache/pip",
            "/home/u/.cache/ccache"
        ]
    );
    assert!(caches.refused.is_empty(), "{:?}", caches.refused);
    let win_path = vec![r"C:\Windows\System32".to_string()];
    let env =
        |name: &str| (name == "LOCALAPPDATA").then(|| r"C:\Users\u\AppData\Local".to_string());
    let caches = writable_caches(None, &windows_home(&win_path), &env);
    assert_eq!(
        caches.entries,
        [
            r"C:\Users\u\.cargo\registry",
            r"C:\Users\u\.cargo\git",
            r"C:\Users\u\AppData\Local\npm-cache\_cacache",
            r"C:\Users\u\AppData\Local\pip\Cache",
            r"C:\Users\u\AppData\Local\ccache"
        ]
    );
    assert!(caches.refused.is_empty(), "{:?}", caches.refused);
}

#[test]
fn the_tools_own_variables_move_the_defaults() {
    let env = |name: &str| match name {
        "CARGO_HOME" => Some("/opt-cargo".to_string()),
        "PIP_CACHE_DIR" => Some("/var/cache/pip".to_string()),
        "XDG_CACHE_HOME" => Some("/home/u/.xdg-cache".to_string()),
        _ => None,
    };
    let caches = writable_caches(None, &unix_home(&[]), &env);
    assert_eq!(
        caches.entries,
        [
            "/opt-cargo/registry",
            "/opt-cargo/git",
            "/home/u/.npm/_cacache",
            "/var/cache/pip",
            "/home/u/.xdg-cache/ccache"
        ]
    );
}

/// Under Wine a Windows server sees the Linux variables: a `CARGO_HOME`
/// that is no Windows path names no cache and is not worth a warning.
#[test]
fn a_tool_variable_that_is_no_path_here_is_skipped_quietly() {
    let env = |name: &str| (name == "CARGO_HOME").then(|| "/root/.cargo".to_string());
    let caches = writable_caches(None, &windows_home(&[]), &env);
    assert!(caches.refused.is_empty(), "{:?}", caches.refused);
    assert_eq!(caches.entries[0], r"C:\Users\u\.cargo\registry");
}

#[test]
fn a_list_replaces_the_defaults_and_default_brings_them_back() {
    let home = unix_home(&[]);
    let only = writable_caches(Some("~/.gradle-cache:/var/cache/ccache"), &home, &no_env);
    assert_eq!(only.entries, ["/home/u/.gradle-cache", "/var/cache/ccache"]);
    for nothing in ["", "none", " None "] {
        let none = writable_caches(Some(nothing), &home, &no_env);
        assert!(
            none.entries.is_empty() && none.refused.is_empty(),
            "{nothing:?}"
        );
    }
    let both = writable_caches(Some("default:/srv/cache:/srv/cache"), &home, &no_env);
    assert_eq!(both.entries.len(), 6, "{:?}", both.entries);
    assert_eq!(both.entries.last().unwrap(), "/srv/cache");
}

/// Entries that would let a command plant a program or configuration that
/// runs outside the sandbox later, and where each is caught.
#[test]
fn entries_that_reach_programs_or_configuration_are_refused() {
    let path = vec![
        "/usr/local/bin".to_string(),
        "/home/u/.local/bin".to_string(),
        "/home/u/tools/bin".to_string(),
    ];
    let home = unix_home(&path);
    let cases: &[(&str, &str)] = &[
        ("/home/u", "home directory"),
        ("/home", "home directory"),
        ("/", "home directory"),
        ("~", "home directory"),
        ("/home/u/.cargo", "/home/u/.cargo/bin"),
        ("/home/u/.cargo/bin", "/home/u/.cargo/bin"),
        ("/home/u/.local", "/home/u/.local/bin"),
        (
            "/home/u/.local/lib/python3.11/site-packages",
            "/home/u/.local/lib",
        ),
        ("/home/u/.config/git", "/home/u/.config"),
        ("~/.config", "/home/u/.config"),
        ("/home/u/.bashrc", "/home/u/.bashrc"),
        ("/home/u/.ssh", "/home/u/.ssh"),
        ("/home/u/tools", "/home/u/tools/bin"),
        ("/home/u/tools/bin/cache", "/home/u/tools/bin"),
        ("/usr/local", "/usr/local/bin"),
        ("/usr/lib/cache", "/usr"),
        ("/etc/pip", "/etc"),
        ("relative/cache", "absolute"),
        ("/home/u/.cache/../.config", "'..'"),
        ("~user/cache", "absolute"),
    ];
    for (entry, why) in cases {
        let caches = writable_caches(Some(entry), &home, &no_env);
        assert!(caches.entries.is_empty(), "{entry} was allowed");
        assert_eq!(caches.refused.len(), 1, "{entry}");
        assert!(
            caches.refused[0].contains(why),
            "{entry}: {}",
            caches.refused[0]
        );
    }
    let win_path = vec![r"C:\Users\u\AppData\Local\Microsoft\WindowsApps".to_string()];
    let home = windows_home(&win_path);
    for entry in [
        r"C:\Users\u",
        r"c:\users\U\.CARGO\bin",
        r"C:\Users\u\.cargo",
        r"C:\Users\u\AppData\Roaming\npm",
        r"C:\Users\u\AppData\Local",
        r"C:\Users\u\Documents\PowerShell\Modules",
        // Once protected on Unix alone: the table has one row per place.
        r"C:\Users\u\.pypirc",
        r"C:\Users\u\.condarc",
        r"C:\Users\u\.yarnrc.yml",
        r"C:\Users\u\.gnupg",
        r"C:\Windows\Temp\cache",
        r"C:\Program Files\cache",
        r"\\server\share\cache",
        r"cache",
    ] {
        let caches = writable_caches(Some(entry), &home, &no_env);
        assert!(caches.entries.is_empty(), "{entry} was allowed");
    }
}

/// What a naive rule (anything under home, anything with "cache" or a
/// dot directory) would wrongly refuse.
#[test]
fn ordinary_cache_locations_are_accepted() {
    let path = vec!["/usr/bin".to_string(), "/home/u/.cargo/bin".to_string()];
    let home = unix_home(&path);
    for entry in [
        "/home/u/.cargo/registry",
        "/home/u/.cargo/git",
        "/home/u/.cache/pip",
        "/home/u/.cache/bazel",
        "/home/u/.npm/_cacache",
        "/var/cache/ccache",
        "/tmp/build-cache",
        "/home/u/.configure-cache",
        "/home/u/binaries-cache",
    ] {
        let caches = writable_caches(Some(entry), &home, &no_env);
        assert_eq!(caches.entries, [entry], "{:?}", caches.refused);
    }
    let home = windows_home(&[]);
    for entry in [
        r"C:\Users\u\AppData\Local\pip\Cache",
        r"C:\Users\u\.cargo\registry",
        r"D:\caches\ccache",
    ] {
        let caches = writable_caches(Some(entry), &home, &no_env);
        assert_eq!(caches.entries, [entry], "{:?}", caches.refused);
    }
}

#[test]
fn a_refusal_by_the_system_is_recognised_only_on_failure() {
    assert!(looks_refused(
        Some(1),
        "touch: cannot touch '/x': Permission denied"
    ));
    assert!(looks_refused(None, "PermissionError: [Errno 13]"));
    assert!(looks_refused(
        Some(128),
        "fatal: could not create work tree dir 'x': Operation not permitted"
    ));
    assert!(!looks_refused(Some(0), "Permission denied"));
    assert!(!looks_refused(Some(2), "error: expected ';'"));
}
