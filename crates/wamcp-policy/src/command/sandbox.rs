//! What a confined command may write, as decisions on path strings: the
//! sandbox mode, the tool caches beside the writable roots, and the
//! Windows token plan. The operating-system side lives in the platform
//! crate; everything here is table-tested for both path styles on any host.

use crate::workspace::PathStyle;
use crate::write_rules::PathParts;
use std::cell::OnceCell;

/// `WAMCP_COMMAND_SANDBOX`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SandboxMode {
    /// Confine where the mechanism is verified on this platform; run
    /// unconfined (and say so) elsewhere.
    #[default]
    Auto,
    /// Never confine: commands run with the server's own rights.
    Off,
    /// Confine or refuse to run commands at all.
    Require,
}

impl SandboxMode {
    /// Reads the setting; blank means `auto`, and
    /// anything unknown is an error naming the choices.
    pub fn parse(text: &str) -> Result<SandboxMode, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(SandboxMode::Auto),
            "off" => Ok(SandboxMode::Off),
            "require" => Ok(SandboxMode::Require),
            other => Err(format!(
                "WAMCP_COMMAND_SANDBOX must be auto, off or require, not '{other}'"
            )),
        }
    }

    /// The mode as the setting spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Off => "off",
            SandboxMode::Require => "require",
        }
    }
}

/// The caches a build writes, as configured, and the entries refused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caches {
    /// Directories a confined command may write
    /// besides the roots, each once, `~` expanded.
    pub entries: Vec<String>,
    /// One sentence per refused entry, naming it and why.
    pub refused: Vec<String>,
}

/// Where a user's machine looks for programs and configuration.
pub struct Home<'a> {
    /// The home directory, if known; `~` in a setting stands for it.
    pub home: Option<&'a str>,
    /// The directories on PATH: a file planted there runs unconfined the
    /// next time the user types its name.
    pub path_dirs: &'a [String],
    /// Which path syntax the places above are written in.
    pub style: PathStyle,
    /// The places above, split once: every cache entry is compared with
    /// all of them, and splitting each place per comparison cost half a
    /// millisecond of start-up.
    places: OnceCell<Places>,
}

impl<'a> Home<'a> {
    /// The places a cache entry is checked against.
    pub fn new(home: Option<&'a str>, path_dirs: &'a [String], style: PathStyle) -> Home<'a> {
        Home {
            home,
            path_dirs,
            style,
            places: OnceCell::new(),
        }
    }

    fn places(&self) -> &Places {
        self.places.get_or_init(|| Places::of(self))
    }
}

/// What a cache must not overlap, in the order `refusal` reports it.
struct Places {
    home: Option<PathParts>,
    protected: Vec<(String, PathParts)>,
    path_dirs: Vec<(String, PathParts)>,
    system: Vec<(String, PathParts)>,
}

impl Places {
    fn of(home: &Home<'_>) -> Places {
        let style = home.style;
        let split = |place: String| PathParts::parse(&place, style).map(|parts| (place, parts));
        let system: &[&str] = match style {
            PathStyle::Unix => &[
                "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/opt", "/var/lib",
            ],
            PathStyle::Windows => &[
                "C:\\Windows",
                "C:\\Program Files",
                "C:\\Program Files (x86)",
                "C:\\ProgramData",
            ],
        };
        Places {
            home: home.home.and_then(|dir| PathParts::parse(dir, style)),
            protected: home
                .home
                .map(|dir| {
                    protected_places(style)
                        .filter_map(|p| split(join(dir, p, style)))
                        .collect()
                })
                .unwrap_or_default(),
            path_dirs: home
                .path_dirs
                .iter()
                .filter(|d| !d.is_empty())
                .filter_map(|d| split(d.clone()))
                .collect(),
            system: system.iter().filter_map(|d| split(d.to_string())).collect(),
        }
    }
}

/// The caches of `WAMCP_COMMAND_WRITABLE`: unset means the defaults; a
/// list (`:` or `;` separated as PATH is) names entries, where `default`
/// stands for the defaults and `~` for the home directory.
pub fn writable_caches(
    setting: Option<&str>,
    home: &Home<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Caches {
    let separator = match home.style {
        PathStyle::Windows => ';',
        PathStyle::Unix => ':',
    };
    let mut wanted: Vec<String> = Vec::new();
    match setting {
        None => wanted.extend(default_caches(home, env)),
        Some(list) if list.trim().eq_ignore_ascii_case("none") => {}
        Some(list) => {
            for item in list
                .split(separator)
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                if item.eq_ignore_ascii_case("default") {
                    wanted.extend(default_caches(home, env));
                } else {
                    wanted.push(expand_home(item, home));
                }
            }
        }
    }
    let mut caches = Caches::default();
    for entry in wanted {
        match refusal(&entry, home) {
            Some(why) => caches
                .refused
                .push(format!("'{entry}' is not made writable: {why}.")),
            None if !caches.entries.contains(&entry) => caches.entries.push(entry),
            None => {}
        }
    }
    caches
}

fn expand_home(item: &str, home: &Home<'_>) -> String {
    let rest = item
        .strip_prefix('~')
        .filter(|r| r.is_empty() || r.starts_with(['/', '\\']));
    match (rest, home.home) {
        (Some(rest), Some(dir)) => join(dir, rest.trim_start_matches(['/', '\\']), home.style),
        _ => item.to_string(),
    }
}

fn join(base: &str, rest: &str, style: PathStyle) -> String {
    if rest.is_empty() {
        return base.to_string();
    }
    let sep = match style {
        PathStyle::Windows => '\\',
        PathStyle::Unix => '/',
    };
    let rest = match style {
        PathStyle::Windows => rest.replace('/', "\\"),
        PathStyle::Unix => rest.to_string(),
    };
    format!("{}{sep}{rest}", base.trim_end_matches(['/', '\\']))
}

/// The download and compile caches of cargo, npm, pip and ccache, where
/// their own variables put them: the caches themselves, never the
/// directories above them that also hold programs or configuration.
fn default_caches(home: &Home<'_>, env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let style = home.style;
    // A tool variable that is no path here (a Unix path seen by a Windows
    // program under Wine) names no cache: skipped, not reported.
    let var = |name: &str| env(name).filter(|v| is_absolute(v.trim(), style));
    let under_home = |rest: &str| home.home.map(|h| join(h, rest, style));
    let mut out = Vec::new();
    let cargo = var("CARGO_HOME").or_else(|| under_home(".cargo"));
    if let Some(cargo) = cargo {
        out.push(join(&cargo, "registry", style));
        out.push(join(&cargo, "git", style));
    }
    match style {
        PathStyle::Unix => {
            let cache = var("XDG_CACHE_HOME").or_else(|| under_home(".cache"));
            out.extend(
                var("npm_config_cache")
                    .or_else(|| under_home(".npm"))
                    .map(|npm| join(&npm, "_cacache", style)),
            );
            out.extend(
                var("PIP_CACHE_DIR").or_else(|| cache.as_ref().map(|c| join(c, "pip", style))),
            );
            out.extend(
                var("CCACHE_DIR").or_else(|| cache.as_ref().map(|c| join(c, "ccache", style))),
            );
        }
        PathStyle::Windows => {
            let local = var("LOCALAPPDATA");
            let under_local = |rest: &str| local.as_ref().map(|l| join(l, rest, style));
            out.extend(
                var("npm_config_cache")
                    .or_else(|| under_local("npm-cache"))
                    .map(|npm| join(&npm, "_cacache", style)),
            );
            out.extend(var("PIP_CACHE_DIR").or_else(|| under_local("pip\\Cache")));
            out.extend(var("CCACHE_DIR").or_else(|| under_local("ccache")));
        }
    }
    out
}

/// Which systems a protected place is one on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum On {
    Both,
    Unix,
    Windows,
}

impl On {
    fn includes(self, style: PathStyle) -> bool {
        matches!(
            (self, style),
            (On::Both, _) | (On::Unix, PathStyle::Unix) | (On::Windows, PathStyle::Windows)
        )
    }
}

/// Places below the home directory that hold programs, shell start-up or
/// tool configuration: a file planted there runs (or redirects a tool)
/// outside any sandbox later, so no cache entry may reach them. One table
/// for both systems (written with `/`), so a tool's file cannot be
/// protected on one and forgotten on the other.
const PROTECTED: &[(&str, On)] = &[
    (".bashrc", On::Unix),
    (".bash_profile", On::Unix),
    (".bash_login", On::Unix),
    (".bash_logout", On::Unix),
    (".profile", On::Unix),
    (".zshrc", On::Unix),
    (".zshenv", On::Unix),
    (".zprofile", On::Unix),
    (".zlogin", On::Unix),
    (".cshrc", On::Unix),
    (".tcshrc", On::Unix),
    (".kshrc", On::Unix),
    (".inputrc", On::Unix),
    (".pam_environment", On::Unix),
    (".xprofile", On::Unix),
    (".xinitrc", On::Unix),
    (".xsession", On::Unix),
    (".local/bin", On::Unix),
    (".local/lib", On::Unix),
    (".local/share/applications", On::Unix),
    ("bin", On::Unix),
    (".config", On::Both),
    (".gitconfig", On::Both),
    (".git-credentials", On::Both),
    (".npmrc", On::Both),
    (".yarnrc", On::Both),
    (".yarnrc.yml", On::Both),
    (".cargo/bin", On::Both),
    (".cargo/config", On::Both),
    (".cargo/config.toml", On::Both),
    (".cargo/env", On::Both),
    (".rustup", On::Both),
    (".pypirc", On::Both),
    (".pip", On::Both),
    (".condarc", On::Both),
    (".ssh", On::Both),
    (".gnupg", On::Both),
    (".docker", On::Both),
    (".kube", On::Both),
    (".aws", On::Both),
    (".m2", On::Both),
    (".gradle", On::Both),
    (".nuget", On::Both),
    (".vscode", On::Both),
    (".vscode-server", On::Both),
    (".claude", On::Both),
    (".codex", On::Both),
    (".cursor", On::Both),
    ("AppData/Roaming", On::Windows),
    ("AppData/Local/Programs", On::Windows),
    ("AppData/Local/Microsoft", On::Windows),
    ("Documents/PowerShell", On::Windows),
    ("Documents/WindowsPowerShell", On::Windows),
];

/// The protected places of `style` (joined to the home directory by
/// [`join`], which writes them in the style's separators).
fn protected_places(style: PathStyle) -> impl Iterator<Item = &'static str> {
    PROTECTED
        .iter()
        .filter(move |(_, on)| on.includes(style))
        .map(|(place, _)| *place)
}

/// Why `entry` may not become writable, or `None` when it may.
pub fn refusal(entry: &str, home: &Home<'_>) -> Option<String> {
    let style = home.style;
    if !is_absolute(entry, style) {
        return Some("it is not an absolute local path".into());
    }
    if entry.split(['/', '\\']).any(|c| c == "..") {
        return Some("it contains '..'".into());
    }
    let Some(parts) = PathParts::parse(entry, style) else {
        return Some("it is not a plain local path".into());
    };
    let places = home.places();
    if places.home.as_ref().is_some_and(|dir| parts.holds(dir)) {
        return Some("it is the home directory or holds it".into());
    }
    // Either way round: a cache holding a protected place, or inside one.
    let overlapping = |list: &'_ [(String, PathParts)]| {
        list.iter()
            .find(|(_, place)| place.overlaps(&parts))
            .map(|(shown, _)| shown.clone())
    };
    if let Some(place) = overlapping(&places.protected) {
        return Some(format!(
            "it overlaps '{place}', which holds programs or configuration that run outside the sandbox"
        ));
    }
    if let Some(dir) = overlapping(&places.path_dirs) {
        return Some(format!(
            "it overlaps '{dir}', a directory on PATH, where a planted program would run unconfined"
        ));
    }
    if let Some(dir) = overlapping(&places.system) {
        return Some(format!("it overlaps the system directory '{dir}'"));
    }
    None
}

/// An absolute local path: `/x`, or `C:\x` on Windows (no share, no
/// drive-relative `C:x`).
fn is_absolute(entry: &str, style: PathStyle) -> bool {
    match style {
        PathStyle::Unix => entry.starts_with('/'),
        PathStyle::Windows => {
            let b = entry.as_bytes();
            b.len() >= 3
                && b[0].is_ascii_alphabetic()
                && b[1] == b':'
                && matches!(b[2], b'\\' | b'/')
        }
    }
}

/// Whether a failed command's output reads like the operating system
/// refused it something, so the tool can say where writes may go.
pub fn looks_refused(exit_code: Option<i32>, output: &str) -> bool {
    const SIGNS: &[&str] = &[
        "Permission denied",
        "permission denied",
        "EACCES",
        "EPERM",
        "Operation not permitted",
        "PermissionError",
        "Access is denied",
    ];
    exit_code != Some(0) && SIGNS.iter().any(|s| output.contains(s))
}

#[cfg(test)]
mod tests;
