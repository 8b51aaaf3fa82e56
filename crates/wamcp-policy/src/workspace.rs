//! Whether the server's working directory may be adopted as a writable root
//! (`WAMCP_WORKSPACE_FROM_CWD`).
//!
//! Launchers such as opencode start the server in the active project, so the
//! working directory is a convenient root. It is also whatever directory a
//! client happened to be started from, which can be the home directory, a
//! drive root or `C:\Windows\System32`; adopting any of those would make the
//! whole user profile or the OS writable. Those are refused with a reason.
//!
//! The rule works on path strings in an explicit style, so the Windows rules
//! are table-tested on every host.

/// How to compare paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStyle {
    /// Case-insensitive, `\` and `/` both separators, drive letters and UNC.
    Windows,
    /// Case-sensitive, `/` only.
    Unix,
}

impl PathStyle {
    /// The style of the platform this binary was built for.
    pub const fn native() -> PathStyle {
        if cfg!(windows) {
            PathStyle::Windows
        } else {
            PathStyle::Unix
        }
    }
}

/// Directories that must never become a writable root.
#[derive(Clone, Debug, Default)]
pub struct ProtectedDirs {
    /// The user's home directory; it and every ancestor are refused.
    pub home: Option<String>,
    /// Refused together with everything below them (`C:\Windows`, `/usr`).
    pub trees: Vec<String>,
    /// Refused themselves, but a project below them is fine (`/opt`, `/tmp`).
    pub exact: Vec<String>,
}

impl ProtectedDirs {
    /// The platform's system directories, reading variables through `env`.
    pub fn for_platform(
        style: PathStyle,
        home: Option<String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> ProtectedDirs {
        match style {
            PathStyle::Windows => {
                let var = |name| env(name).filter(|v: &String| !v.trim().is_empty());
                let mut trees: Vec<String> = [
                    "SystemRoot",
                    "windir",
                    "ProgramFiles",
                    "ProgramFiles(x86)",
                    "ProgramW6432",
                ]
                .into_iter()
                .filter_map(var)
                .collect();
                trees.push(r"C:\Windows".into());
                // Every program's settings and data: not a project.
                trees.extend(["APPDATA", "LOCALAPPDATA"].into_iter().filter_map(var));
                let exact = ["ProgramData", "PUBLIC"]
                    .into_iter()
                    .filter_map(var)
                    .collect();
                ProtectedDirs { home, trees, exact }
            }
            PathStyle::Unix => ProtectedDirs {
                home,
                trees: [
                    "XDG_CONFIG_HOME",
                    "XDG_DATA_HOME",
                    "XDG_STATE_HOME",
                    "XDG_CACHE_HOME",
                ]
                .into_iter()
                .filter_map(|name| env(name).filter(|v| v.starts_with('/')))
                .chain(
                    [
                        "/bin",
                        "/boot",
                        "/dev",
                        "/etc",
                        "/lib",
                        "/lib32",
                        "/lib64",
                        "/proc",
                        "/run",
                        "/sbin",
                        "/sys",
                        "/usr",
                        "/var/lib",
                        "/var/cache",
                        "/var/log",
                        "/var/spool",
                        "/var/mail",
                        "/var/backups",
                        "/var/local",
                        "/var/opt",
                        "/var/db",
                        "/var/run",
                        "/var/lock",
                        "/var/snap",
                        "/snap",
                        "/root",
                        "/System",
                        "/Library",
                        "/Applications",
                    ]
                    .map(String::from),
                )
                .collect(),
                exact: [
                    "/home", "/Users", "/mnt", "/media", "/opt", "/srv", "/tmp", "/var", "/var/tmp",
                ]
                .map(String::from)
                .to_vec(),
            },
        }
    }
}

/// The local path a client's root names: a `file:` URI whose host is empty
/// or `localhost` (a root on another machine is a network share, never a
/// writable root), percent-decoded, absolute in `style`. On Windows
/// `file:///C:/src/app` is `C:\src\app`.
pub fn path_from_file_uri(uri: &str, style: PathStyle) -> Result<String, String> {
    let rest = uri
        .strip_prefix("file://")
        .ok_or_else(|| format!("'{uri}' is not a file: URI."))?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
        return Err(format!(
            "'{uri}' names a folder on another machine ({host})."
        ));
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = path
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("'{uri}' has a broken %-escape."))?;
            decoded.push(hex);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    let decoded =
        String::from_utf8(decoded).map_err(|_| format!("'{uri}' does not decode to UTF-8."))?;
    if decoded.contains('\0') || decoded.split('/').any(|part| part == "..") {
        return Err(format!("'{uri}' holds a NUL or a '..' part."));
    }
    let local = match style {
        PathStyle::Unix => decoded,
        PathStyle::Windows => {
            // "/C:/x" carries the drive after the URI's own slash.
            let drive = decoded.strip_prefix('/').filter(|d| {
                let b = d.as_bytes();
                b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
            });
            match drive {
                Some(d) => d.replace('/', "\\"),
                None => return Err(format!("'{uri}' names no drive.")),
            }
        }
    };
    if !Components::new(&local, style).absolute {
        return Err(format!("'{uri}' is not an absolute path."));
    }
    Ok(local)
}

/// Decides whether `cwd` (already resolved: absolute, symlinks followed) may be
/// adopted. `Err` carries the reason shown as `workspace_note`.
pub fn judge_workspace(
    cwd: &str,
    style: PathStyle,
    protected: &ProtectedDirs,
) -> Result<(), String> {
    let path = Components::new(cwd, style);
    if !path.absolute {
        return Err(format!("'{cwd}' is not an absolute path."));
    }
    if path.is_root() {
        return Err(format!(
            "'{cwd}' is a drive or filesystem root; adopting it would make every file on it writable."
        ));
    }
    if let Some(home) = &protected.home {
        judge_near_home(cwd, &path, &Components::new(home, style), style)?;
    }
    judge_system_dirs(cwd, &path, style, protected)
}

/// Refuses `path` when it is or holds the home directory, lies in one of
/// its hidden folders, or is another user's home.
fn judge_near_home(
    cwd: &str,
    path: &Components,
    home: &Components,
    style: PathStyle,
) -> Result<(), String> {
    if home.starts_with(path) {
        let what = if home.parts == path.parts {
            "is your home directory"
        } else {
            "contains your home directory"
        };
        return Err(format!(
            "'{cwd}' {what}; adopting it would make your whole profile writable. Start the server \
             in the project directory, or list the project in WAMCP_PROJECT_ROOTS."
        ));
    }
    // ~/.ssh, ~/.config, ~/.local/bin: keys, every program's settings,
    // programs on PATH. Nothing inside them is a project.
    let hidden = path.parts.len() > home.parts.len()
        && path.starts_with(home)
        && path.parts[home.parts.len()].starts_with('.');
    if hidden {
        return Err(format!(
            "'{cwd}' is in a hidden folder of your home directory, where keys and program settings live, \
             not a project."
        ));
    }
    if another_users_home(path, home, style) {
        return Err(format!(
            "'{cwd}' is another user's home directory, not a project."
        ));
    }
    Ok(())
}

/// Whether `path` is a sibling of `home` where homes are kept together.
fn another_users_home(path: &Components, home: &Components, style: PathStyle) -> bool {
    // Another user's home, where homes are kept together (`/home`,
    // `/Users`, `C:\Users`); a home elsewhere says nothing of its
    // neighbours.
    let homes = &home.parts[..home.parts.len().saturating_sub(1)];
    let shared_parent = match style {
        PathStyle::Windows => homes
            .last()
            .is_some_and(|p| p.eq_ignore_ascii_case("users")),
        PathStyle::Unix => matches!(homes, [one] if one == "home" || one == "Users"),
    };
    home.parts.len() > 1
        && shared_parent
        && path.parts.len() == home.parts.len()
        && path.parts[..path.parts.len() - 1] == *homes
}

/// Refuses `path` when it is a whole mounted drive, lies inside a system
/// directory, or is a shared system directory itself.
fn judge_system_dirs(
    cwd: &str,
    path: &Components,
    style: PathStyle,
    protected: &ProtectedDirs,
) -> Result<(), String> {
    for parent in ["/mnt", "/media"] {
        let parent = Components::new(parent, style);
        if style == PathStyle::Unix
            && path.parts.len() == parent.parts.len() + 1
            && path.starts_with(&parent)
        {
            return Err(format!(
                "'{cwd}' is a whole mounted drive or volume, not a project."
            ));
        }
    }
    for tree in &protected.trees {
        if path.starts_with(&Components::new(tree, style)) {
            return Err(format!("'{cwd}' is inside the system directory '{tree}'."));
        }
    }
    for exact in &protected.exact {
        if path.parts == Components::new(exact, style).parts {
            return Err(format!(
                "'{cwd}' is the shared system directory '{exact}', not a project."
            ));
        }
    }
    Ok(())
}

/// A path split into comparable components.
struct Components {
    absolute: bool,
    unc: bool,
    parts: Vec<String>,
}

impl Components {
    fn new(path: &str, style: PathStyle) -> Components {
        match style {
            PathStyle::Unix => Components {
                absolute: path.starts_with('/'),
                unc: false,
                parts: path
                    .split('/')
                    .filter(|p| !p.is_empty() && *p != ".")
                    .map(String::from)
                    .collect(),
            },
            PathStyle::Windows => {
                let unified = path.replace('/', "\\");
                // `\\?\C:\x` and `\\?\UNC\server\share` are spellings of `C:\x` and `\\server\share`.
                let (unified, unc) = if let Some(rest) = unified.strip_prefix(r"\\?\UNC\") {
                    (rest.to_string(), true)
                } else if let Some(rest) = unified.strip_prefix(r"\\?\") {
                    (rest.to_string(), false)
                } else if let Some(rest) = unified.strip_prefix(r"\\") {
                    (rest.to_string(), true)
                } else {
                    (unified, false)
                };
                let bytes = unified.as_bytes();
                let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
                let absolute = unc || (drive && (bytes.len() == 2 || bytes[2] == b'\\'));
                let parts = unified
                    .split('\\')
                    .filter(|p| !p.is_empty() && *p != ".")
                    .map(|p| p.to_lowercase())
                    .collect();
                Components {
                    absolute,
                    unc,
                    parts,
                }
            }
        }
    }

    fn is_root(&self) -> bool {
        // A UNC path's root is `\\server\share`; a drive's is `C:\`; Unix's is `/`.
        let root_parts = if self.unc {
            2
        } else if self.parts.first().is_some_and(|p| p.ends_with(':')) {
            1
        } else {
            0
        };
        self.parts.len() <= root_parts
    }

    fn starts_with(&self, prefix: &Components) -> bool {
        prefix.parts.len() <= self.parts.len()
            && self.parts[..prefix.parts.len()] == prefix.parts[..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows_dirs() -> ProtectedDirs {
        ProtectedDirs::for_platform(PathStyle::Windows, Some(r"C:\Users\Ada".into()), |name| {
            match name {
                "SystemRoot" => Some(r"C:\WINDOWS".into()),
                "ProgramFiles" => Some(r"C:\Program Files".into()),
                "ProgramFiles(x86)" => Some(r"C:\Program Files (x86)".into()),
                "ProgramData" => Some(r"C:\ProgramData".into()),
                "APPDATA" => Some(r"C:\Users\Ada\AppData\Roaming".into()),
                _ => None,
            }
        })
    }

    fn unix_dirs() -> ProtectedDirs {
        ProtectedDirs::for_platform(PathStyle::Unix, Some("/home/ada".into()), |_| None)
    }

    #[test]
    fn windows_refusals() {
        let dirs = windows_dirs();
        let refused = [
            (r"C:\", "drive or filesystem root"),
            ("c:/", "drive or filesystem root"),
            (r"D:", "drive or filesystem root"),
            (r"\\?\C:\", "drive or filesystem root"),
            (r"\\server\share", "drive or filesystem root"),
            (r"\\?\UNC\server\share\", "drive or filesystem root"),
            (r"C:\Users\Ada", "is your home directory"),
            (r"C:\Users\Ada\.ssh", "hidden folder of your home"),
            (r"C:\Users\Bob", "another user's home"),
            (
                r"C:\Users\Ada\AppData\Roaming\Code\User",
                "inside the system directory",
            ),
            (r"c:\users\ada\", "is your home directory"),
            (r"C:\Users", "contains your home directory"),
            (r"C:\Windows\System32", "inside the system directory"),
            (r"\\?\c:\windows", "inside the system directory"),
            (
                r"C:\Program Files\Vendor\App",
                "inside the system directory",
            ),
            (r"C:\Program Files (x86)", "inside the system directory"),
            (r"C:\ProgramData", "shared system directory"),
            (r"relative\dir", "not an absolute path"),
            (r"C:relative", "not an absolute path"),
        ];
        for (cwd, reason) in refused {
            let err = judge_workspace(cwd, PathStyle::Windows, &dirs).expect_err(cwd);
            assert!(err.contains(reason), "{cwd}: {err}");
        }
    }

    #[test]
    fn windows_projects_a_naive_rule_would_refuse_are_adopted() {
        let dirs = windows_dirs();
        for cwd in [
            r"C:\Users\Ada\src\game",
            r"C:\Users\Adam\project",
            r"C:\WindowsApps-src\tool",
            r"C:\ProgramData\builds\agent",
            r"D:\src",
            r"\\server\share\team\repo",
            r"\\?\C:\src\long",
        ] {
            assert_eq!(
                judge_workspace(cwd, PathStyle::Windows, &dirs),
                Ok(()),
                "{cwd}"
            );
        }
    }

    #[test]
    fn unix_refusals_and_adoptions() {
        let dirs = unix_dirs();
        for (cwd, reason) in [
            ("/", "filesystem root"),
            ("/home", "contains your home directory"),
            ("/home/ada", "is your home directory"),
            ("/home/ada/", "is your home directory"),
            ("/usr/local/src", "inside the system directory"),
            ("/etc", "inside the system directory"),
            ("/tmp", "shared system directory"),
            ("/var/tmp", "shared system directory"),
            ("/home/ada/.ssh", "hidden folder of your home"),
            ("/home/ada/.config", "hidden folder of your home"),
            ("/home/ada/.local/", "hidden folder of your home"),
            ("/home/ada/.local/bin", "hidden folder of your home"),
            ("/home/ada/.config/git", "hidden folder of your home"),
            ("/home/ada/.ssh/sub", "hidden folder of your home"),
            ("/home/bob", "another user's home"),
            ("/root", "inside the system directory"),
            ("/var/spool/cron", "inside the system directory"),
            ("/var/mail", "inside the system directory"),
            ("/mnt/c", "whole mounted drive"),
            ("/media/usb", "whole mounted drive"),
            ("home/ada/src", "not an absolute path"),
        ] {
            let err = judge_workspace(cwd, PathStyle::Unix, &dirs).expect_err(cwd);
            assert!(err.contains(reason), "{cwd}: {err}");
        }
        for cwd in [
            "/home/ada/src/wamcp",
            "/home/adam/src",
            "/home/ada/src/.hidden-project",
            "/mnt/c/Users/ada/src/app",
            "/var/tmp/build-7",
            "/var/www/site",
            "/tmp/build-123",
            "/opt/work/repo",
            "/usrdata/x",
            "/srv/git/x",
        ] {
            assert_eq!(
                judge_workspace(cwd, PathStyle::Unix, &dirs),
                Ok(()),
                "{cwd}"
            );
        }
    }

    #[test]
    fn unix_paths_are_case_sensitive() {
        assert_eq!(
            judge_workspace("/Home/ada", PathStyle::Unix, &unix_dirs()),
            Ok(())
        );
    }

    #[test]
    fn client_root_uris_become_local_paths_or_reasons() {
        for (uri, style, want) in [
            (
                "file:///home/ada/src/app",
                PathStyle::Unix,
                "/home/ada/src/app",
            ),
            (
                "file://localhost/srv/my%20app",
                PathStyle::Unix,
                "/srv/my app",
            ),
            (
                "file:///C:/Users/Ada/src/app",
                PathStyle::Windows,
                r"C:\Users\Ada\src\app",
            ),
            ("file:///c%3A/src", PathStyle::Windows, r"c:\src"),
            ("file:///caf%C3%A9", PathStyle::Unix, "/caf\u{e9}"),
        ] {
            assert_eq!(path_from_file_uri(uri, style).as_deref(), Ok(want), "{uri}");
        }
        for (uri, style) in [
            ("https://example.com/x", PathStyle::Unix),
            ("file://server/share/x", PathStyle::Unix),
            ("file://server/share/x", PathStyle::Windows),
            ("file:///src/app", PathStyle::Windows),
            ("file:///a/%2e%2e/etc", PathStyle::Unix),
            ("file:///a/%00b", PathStyle::Unix),
            ("file:///a/%zz", PathStyle::Unix),
            ("file:///%ff", PathStyle::Unix),
            ("/home/ada", PathStyle::Unix),
        ] {
            assert!(path_from_file_uri(uri, style).is_err(), "{uri}");
        }
    }
}
