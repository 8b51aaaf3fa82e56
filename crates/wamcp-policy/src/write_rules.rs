//! What a write may target: the pure half of write confinement.
//!
//! The resolver in `wamcp-fs` turns a path argument into a resolved path
//! (every existing ancestor canonicalised, so `..`, symbolic links, junctions
//! and 8.3 short names are gone); the rules here decide on strings, in an
//! explicit [`PathStyle`], so Windows rules are table-tested on every host.
//!
//! Containment is decided component by component, never by string prefix:
//! `C:\proj-evil` starts with the string `C:\proj` but is not inside it.

use crate::workspace::PathStyle;

/// Why a path may not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The form of the path is ambiguous or names something that is not a
    /// file (device namespace, drive-relative, alternate data stream...).
    Form(String),
    /// A component is a reserved device name or ends in a dot or space.
    Name(String),
}

/// Names Windows maps to devices in every directory, with or without an
/// extension (`NUL.txt` is the null device too).
const RESERVED: &[&str] = &[
    "con", "prn", "aux", "nul", "conin$", "conout$", "com0", "com1", "com2", "com3", "com4",
    "com5", "com6", "com7", "com8", "com9", "com¹", "com²", "com³", "lpt0", "lpt1", "lpt2", "lpt3",
    "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9", "lpt¹", "lpt²", "lpt³",
];

/// Splits a path string into its prefix (`C:`, `\\server\share`, `/` or
/// empty) and its components, rejecting forms a write must never use.
/// On Windows `\\?\C:\x` is the same as `C:\x` and `\\?\UNC\s\h` as `\\s\h`.
pub fn split_for_write(path: &str, style: PathStyle) -> Result<(String, Vec<String>), Refusal> {
    match style {
        PathStyle::Unix => {
            let prefix = if path.starts_with('/') { "/" } else { "" };
            let parts = path
                .split('/')
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect();
            Ok((prefix.to_string(), parts))
        }
        PathStyle::Windows => split_windows(path),
    }
}

fn split_windows(path: &str) -> Result<(String, Vec<String>), Refusal> {
    let unified = path.replace('/', "\\");
    let (prefix, rest) = if let Some(rest) = unified
        .strip_prefix(r"\\?\UNC\")
        .or_else(|| unified.strip_prefix(r"\\.\UNC\"))
    {
        split_unc(rest)?
    } else if let Some(rest) = unified.strip_prefix(r"\\?\") {
        // Verbatim paths skip normalisation, so `..` and `NUL` in them are taken
        // literally by the OS; only the plain drive form is accepted and then
        // checked like any other path.
        if !is_drive_prefix(rest) {
            return Err(Refusal::Form(format!(
                "'{path}' is a device or volume path, not a file path"
            )));
        }
        (rest[..2].to_ascii_uppercase(), rest[2..].to_string())
    } else if unified.starts_with(r"\\.\") || unified.starts_with(r"\??\") {
        return Err(Refusal::Form(format!(
            "'{path}' names a device, not a file"
        )));
    } else if let Some(rest) = unified.strip_prefix(r"\\") {
        split_unc(rest)?
    } else if is_drive_prefix(&unified) {
        if !unified[2..].starts_with('\\') {
            // `C:foo` is relative to drive C's own current directory: ambiguous.
            return Err(Refusal::Form(format!(
                "'{path}' is relative to a drive's current directory; write C:\\full\\path"
            )));
        }
        (unified[..2].to_ascii_uppercase(), unified[2..].to_string())
    } else if unified.starts_with('\\') {
        // `\foo` is relative to the current drive: ambiguous as well.
        return Err(Refusal::Form(format!(
            "'{path}' has no drive letter; write C:\\full\\path"
        )));
    } else {
        (String::new(), unified)
    };
    let parts = rest
        .split('\\')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    Ok((prefix, parts))
}

/// `server\share\rest` into the `\\server\share` prefix and the rest.
fn split_unc(rest: &str) -> Result<(String, String), Refusal> {
    let mut pieces = rest.splitn(3, '\\');
    let (server, share) = (pieces.next().unwrap_or(""), pieces.next().unwrap_or(""));
    if server.is_empty() || share.is_empty() {
        return Err(Refusal::Form(
            "a UNC path needs a server and a share".into(),
        ));
    }
    Ok((
        format!(r"\\{server}\{share}"),
        pieces.next().unwrap_or("").to_string(),
    ))
}

fn is_drive_prefix(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Refuses a component Windows would not store as written: an alternate data
/// stream (`a.txt:s`, `a.txt::$DATA`), a reserved device name (`NUL`,
/// `con.txt`, `COM1.log`), or a trailing dot or space (silently dropped by
/// Win32, so `a.txt.` would write `a.txt`). Also control characters and
/// the other characters Windows forbids in names. `.` and `..` pass: the
/// resolver deals with them.
pub fn check_component(name: &str, style: PathStyle) -> Result<(), Refusal> {
    if name.contains('\0') {
        return Err(Refusal::Name("a name contains a NUL character".into()));
    }
    if style == PathStyle::Unix || name == "." || name == ".." {
        return Ok(());
    }
    if name.contains(':') {
        return Err(Refusal::Name(format!(
            "'{name}' names an alternate data stream (':' is not allowed in a name)"
        )));
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '<' | '>' | '"' | '|' | '?' | '*'))
    {
        return Err(Refusal::Name(format!(
            "'{name}' contains {c:?}, which Windows does not allow in a name"
        )));
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Err(Refusal::Name(format!(
            "'{name}' ends with a dot or a space, which Windows silently drops, so another file would be written"
        )));
    }
    if is_reserved_device_name(name) {
        return Err(Refusal::Name(format!(
            "'{name}' is a reserved device name on Windows"
        )));
    }
    Ok(())
}

/// Whether Windows maps `name` to a device, judged, as Windows does, on the
/// part before the first dot with trailing spaces and dots ignored.
pub fn is_reserved_device_name(name: &str) -> bool {
    let stem = name
        .split('.')
        .next()
        .unwrap_or(name)
        .trim_end_matches([' ', '.'])
        .to_lowercase();
    RESERVED.contains(&stem.as_str())
}

/// Whether `components` name a server trust file: any file called
/// `mcp-allowed-hosts.json`, or a path ending in `input/config.json`, in any
/// case. These decide which hosts may be read and which directories written:
/// a model that could create one where the server looks first could widen
/// its own permissions. Checked by name, wherever the file would be.
pub fn is_protected_name(components: &[String]) -> bool {
    let lower: Vec<String> = components.iter().map(|c| c.to_lowercase()).collect();
    match lower.as_slice() {
        [.., last] if last == "mcp-allowed-hosts.json" => true,
        [.., dir, last] => dir == "input" && last == "config.json",
        _ => false,
    }
}

/// Whether `components` name a file that changes what programs run or what
/// an agent may do, and why: git's own directory (configuration, hooks,
/// info), `.gitmodules`, and the configuration of agent clients (MCP server
/// lists, editor tasks, Claude Code, Codex, Cursor, Copilot instructions).
/// Writing one needs the user's approval. Compared without case: Windows
/// and macOS file systems ignore it, so `.GIT/CONFIG` is `.git/config`.
pub fn agent_trust_file(components: &[String]) -> Option<&'static str> {
    const WORKSPACE_FILE: &str = ".code-workspace";
    let lower: Vec<String> = components.iter().map(|c| c.to_lowercase()).collect();
    let has_dir = |name: &str| {
        lower[..lower.len().saturating_sub(1)]
            .iter()
            .any(|c| c == name)
    };
    let last = lower.last().map(String::as_str).unwrap_or("");
    let parent = lower.len().checked_sub(2).map(|i| lower[i].as_str());
    if has_dir(".git") || last == ".git" {
        return Some("git's own files (configuration and hooks run programs)");
    }
    if last == ".gitmodules" {
        return Some("the submodule list, which decides what git fetches and checks out");
    }
    if last == ".mcp.json" {
        return Some("an MCP client configuration, which decides which servers an agent starts");
    }
    if parent == Some(".vscode")
        && ["settings.json", "tasks.json", "launch.json", "mcp.json"].contains(&last)
    {
        return Some("editor configuration, whose tasks and servers run programs");
    }
    // A workspace file carries settings and tasks too, and a task may run
    // as soon as the workspace is opened.
    if last.ends_with(WORKSPACE_FILE) && last.len() > WORKSPACE_FILE.len() {
        return Some("an editor workspace, whose tasks and settings run programs");
    }
    if [".claude", ".codex", ".cursor"].iter().any(|d| has_dir(d)) {
        return Some("an agent's configuration (its permissions, hooks and servers)");
    }
    if parent == Some(".github") && last == "copilot-instructions.md" {
        return Some("instructions an agent follows");
    }
    None
}

/// Directories whose contents decide what programs run or what an agent
/// may do, with the reason, for arguments of commands.
const TRUST_DIRS: &[(&str, &str)] = &[
    (
        ".git",
        "git's own files (configuration and hooks run programs)",
    ),
    (
        ".vscode",
        "editor configuration, whose tasks and servers run programs",
    ),
    (
        ".claude",
        "an agent's configuration (its permissions, hooks and servers)",
    ),
    (
        ".codex",
        "an agent's configuration (its permissions, hooks and servers)",
    ),
    (
        ".cursor",
        "an agent's configuration (its permissions, hooks and servers)",
    ),
];

/// The trust directories' names (`.git`, `.vscode`...), for plans that
/// list them per root.
pub fn trust_dir_names() -> impl Iterator<Item = &'static str> {
    TRUST_DIRS.iter().map(|(dir, _)| *dir)
}

/// Whether a command argument (a path, `name=path`, `a,b` list...) reaches
/// a trust location, and why. Stricter than [`agent_trust_file`], because a
/// command may write *into* a directory named last (`cmake -E copy x
/// .claude`), through `..`, or through a Windows alias of the name (`.git.`,
/// `.git::$INDEX_ALLOCATION`, an 8.3 short name such as `GIT~1`).
pub fn names_trust_location(argument: &str) -> Option<&'static str> {
    let parts: Vec<String> = argument
        .split(['/', '\\', '=', ',', ';', ':', '!'])
        .map(|p| {
            // Folded as Windows compares names: `ſ` is `S` to NTFS.
            p.trim()
                .trim_matches(['"', '\''])
                .trim_end_matches(['.', ' '])
                .to_uppercase()
                .to_lowercase()
        })
        .filter(|p| !p.is_empty())
        .collect();
    for part in &parts {
        if let Some((_, why)) = TRUST_DIRS.iter().find(|(dir, _)| {
            dir.trim_start_matches('.') == part.trim_start_matches('.') && part.starts_with('.')
        }) {
            return Some(why);
        }
        if is_short_name(part) {
            return Some("a short (8.3) name, which may stand for a protected directory");
        }
    }
    agent_trust_file(&parts)
}

/// `GIT~1`, `VSCODE~1`, `GITMOD~1`: a Windows 8.3 alias whose base is the
/// start of a trust name (Windows keeps up to six characters of the long
/// name, dot dropped). `HEAD~1` is a git revision, not one of these.
fn is_short_name(part: &str) -> bool {
    const LONG: &[&str] = &[
        "git",
        "gitmodules",
        "vscode",
        "claude",
        "codex",
        "cursor",
        "mcp",
    ];
    let stem = part.split('.').next().unwrap_or(part);
    stem.split_once('~').is_some_and(|(base, n)| {
        // After four collisions Windows uses two letters and four hex digits.
        // By bytes: a name with a multi-byte character there has no char
        // boundary at 2 (found by fuzzing the shell hook, which a panic
        // would have stopped).
        let hashed = base.len() == 6 && base.as_bytes()[2..].iter().all(u8::is_ascii_hexdigit);
        !base.is_empty()
            && base.len() <= 6
            && !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (hashed || LONG.iter().any(|long| long.starts_with(base)))
    })
}

/// `path` with `.` and `..` worked out on the text alone, links not
/// followed: where the path says it goes, to compare with where it does.
pub fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether `path` is `root` or below it, compared component by component
/// (case-insensitively on Windows, where `C:\Proj` and `c:\proj` are one).
pub fn is_within(path: &str, root: &str, style: PathStyle) -> bool {
    match (PathParts::parse(path, style), PathParts::parse(root, style)) {
        (Some(path), Some(root)) => root.holds(&path),
        _ => false,
    }
}

/// A path split once into its prefix and components (`.` dropped), for
/// comparing one path with many without splitting it again each time.
#[derive(Clone, Debug)]
pub struct PathParts {
    prefix: String,
    parts: Vec<String>,
    style: PathStyle,
}

impl PathParts {
    /// `None` for a form [`split_for_write`] refuses, and for a path with a
    /// `..` left in it: the caller skipped resolution, so it is never
    /// contained in anything, nor holds anything.
    pub fn parse(path: &str, style: PathStyle) -> Option<PathParts> {
        let (prefix, parts) = split_for_write(path, style).ok()?;
        if parts.iter().any(|p| p == "..") {
            return None;
        }
        let parts = parts.into_iter().filter(|p| p != ".").collect();
        Some(PathParts {
            prefix,
            parts,
            style,
        })
    }

    /// Whether `other` is this path or below it.
    pub fn holds(&self, other: &PathParts) -> bool {
        let same = |a: &str, b: &str| match self.style {
            PathStyle::Windows => a.to_lowercase() == b.to_lowercase(),
            PathStyle::Unix => a == b,
        };
        !other.prefix.is_empty()
            && same(&other.prefix, &self.prefix)
            && self.parts.len() <= other.parts.len()
            && self.parts.iter().zip(&other.parts).all(|(r, p)| same(r, p))
    }

    /// Whether either path holds the other.
    pub fn overlaps(&self, other: &PathParts) -> bool {
        self.holds(other) || other.holds(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathStyle::{Unix, Windows};

    #[test]
    fn containment_table() {
        let cases: &[(&str, &str, PathStyle, bool)] = &[
            (r"C:\proj\src\a.cpp", r"C:\proj", Windows, true),
            (r"C:\proj", r"C:\proj", Windows, true),
            (r"c:\PROJ\src", r"C:\proj", Windows, true),
            (r"C:/proj/src", r"C:\proj", Windows, true),
            (r"\\?\C:\proj\x", r"C:\proj", Windows, true),
            (r"C:\proj-evil\x", r"C:\proj", Windows, false),
            (r"C:\projx", r"C:\proj", Windows, false),
            (r"C:\pro", r"C:\proj", Windows, false),
            (r"D:\proj\x", r"C:\proj", Windows, false),
            (r"C:\proj\..\etc", r"C:\proj", Windows, false),
            (r"\\srv\share\proj\x", r"\\srv\share\proj", Windows, true),
            (
                r"\\?\UNC\SRV\share\proj\x",
                r"\\srv\share\proj",
                Windows,
                true,
            ),
            (r"\\srv\share2\proj", r"\\srv\share", Windows, false),
            (r"\\.\C:\proj\x", r"C:\proj", Windows, false),
            (r"C:proj\x", r"C:\proj", Windows, false),
            (r"proj\x", r"C:\proj", Windows, false),
            ("/home/a/proj/x", "/home/a/proj", Unix, true),
            ("/home/a/proj-evil/x", "/home/a/proj", Unix, false),
            ("/home/a/PROJ/x", "/home/a/proj", Unix, false),
            ("/home/a/proj/../b", "/home/a/proj", Unix, false),
            ("/home/a/proj/./x", "/home/a/proj", Unix, true),
            ("relative/x", "/home/a/proj", Unix, false),
        ];
        for (path, root, style, want) in cases {
            assert_eq!(
                is_within(path, root, *style),
                *want,
                "{path} in {root} ({style:?})"
            );
        }
    }

    #[test]
    fn forms_a_write_refuses() {
        for path in [
            r"\\.\C:\x",
            r"\\.\PhysicalDrive0",
            r"\\?\Volume{1234}\x",
            r"\\?\GLOBALROOT\Device\x",
            r"\??\C:\x",
            r"C:x.txt",
            r"\x.txt",
            r"\\server",
            r"\\server\",
        ] {
            assert!(
                matches!(split_for_write(path, Windows), Err(Refusal::Form(_))),
                "{path}"
            );
        }
        assert_eq!(
            split_for_write(r"\\?\c:\a\b", Windows).unwrap(),
            ("C:".to_string(), vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(
            split_for_write("/a//b/", Unix).unwrap(),
            ("/".to_string(), vec!["a".into(), "b".into()])
        );
    }

    #[test]
    fn component_rules_on_windows() {
        for bad in [
            "NUL",
            "nul.txt",
            "Con.cpp",
            "COM1",
            "com1.log",
            "LPT9",
            "aux.tar.gz",
            "CONIN$",
            "COM¹",
            "nul .txt",
            "file.txt:stream",
            "file.txt::$DATA",
            "a.txt.",
            "a.txt ",
            "dir.",
            "a<b",
            "a|b",
            "a?b",
            "a*b",
            "a\"b",
            "tab\tname",
        ] {
            assert!(
                check_component(bad, Windows).is_err(),
                "{bad:?} should be refused"
            );
        }
        for good in [
            "console.txt",
            "nul_device.c",
            "aux2.c",
            "com10",
            "lpt",
            "con-fig",
            ".gitignore",
            "..",
            ".",
            "a b.txt",
            "résumé.md",
            "ürün.cpp",
            "file.tar.gz",
            "x.v2",
        ] {
            assert_eq!(
                check_component(good, Windows),
                Ok(()),
                "{good:?} should pass"
            );
        }
    }

    #[test]
    fn unix_names_are_not_held_to_windows_rules() {
        for name in ["aux.c", "con", "a.txt.", "trailing ", "a:b"] {
            assert_eq!(check_component(name, Unix), Ok(()), "{name}");
        }
        assert!(check_component("a\0b", Unix).is_err());
    }

    #[test]
    fn agent_trust_files_are_recognised_and_look_alikes_are_not() {
        let parts = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
        for p in [
            "proj/.git/config",
            "proj/.git/hooks/pre-commit",
            "proj/.git/info/attributes",
            "proj/.GIT/CONFIG",
            "proj/sub/.git",
            "proj/vendor/x/.git/config",
            "proj/.gitmodules",
            "proj/.mcp.json",
            "proj/.vscode/settings.json",
            "proj/.vscode/tasks.json",
            "proj/.vscode/launch.json",
            "proj/.vscode/mcp.json",
            "proj/.claude/settings.json",
            "proj/.claude/agents/x.md",
            "proj/.codex/config.toml",
            "proj/.cursor/mcp.json",
            "proj/.github/copilot-instructions.md",
            "proj/app.code-workspace",
            "proj/Team.CODE-WORKSPACE",
        ] {
            assert!(agent_trust_file(&parts(p)).is_some(), "{p}");
        }
        for p in [
            "proj/.gitignore",
            "proj/.gitattributes",
            "proj/git/config",
            "proj/.git-blame-ignore-revs",
            "proj/.vscode/extensions.json",
            "proj/.vscode/c_cpp_properties.json",
            "proj/settings.json",
            "proj/mcp.json",
            "proj/.github/workflows/ci.yml",
            "proj/docs/claude.md",
            "proj/CLAUDE.md",
            "proj/.code-workspace.md",
            "proj/docs/code-workspace",
        ] {
            assert_eq!(agent_trust_file(&parts(p)), None, "{p}");
        }
    }

    #[test]
    fn command_arguments_reaching_trust_locations() {
        for reaching in [
            ".git/config",
            "--output=.git/config",
            "link=.git/hooks/pre-commit",
            ".claude",
            ".vscode/x/../tasks.json",
            "sub\\.GIT\\hooks",
            ".git./config",
            ".git /config",
            ".git::$INDEX_ALLOCATION/config",
            "GIT~1/config",
            "VSCODE~1/tasks.json",
            "CL1A2B~1/settings.json",
            ".v\u{17f}code/tasks.json",
            "a.zip,.cursor",
            "\"'.codex'\"",
            ".mcp.json",
            "x/.gitmodules",
        ] {
            assert!(names_trust_location(reaching).is_some(), "{reaching}");
        }
        for ordinary in [
            "src/main.c",
            "K$\0-\u{1e}>!\u{225e}tch'~",
            "!\u{225e}tch~1",
            "git/config",
            ".gitignore",
            ".github/workflows/ci.yml",
            "build/out.o",
            "--exclude=node_modules",
            "vscode",
            "C:\\proj\\a.txt",
            "~/notes.txt",
            "v1.2~rc",
            "HEAD~1",
            "main~12",
        ] {
            assert_eq!(names_trust_location(ordinary), None, "{ordinary}");
        }
    }

    #[test]
    fn trust_files_are_recognised_in_any_case_and_place() {
        let parts = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
        for p in [
            "mcp-allowed-hosts.json",
            "x/MCP-Allowed-Hosts.JSON",
            "input/config.json",
            "deep/a/Input/Config.json",
            "/etc/input/config.json",
        ] {
            assert!(is_protected_name(&parts(p)), "{p}");
        }
        for p in [
            "config.json",
            "inputs/config.json",
            "input/config.json.bak",
            "input/config.jsonx",
            "mcp-allowed-hosts.json.txt",
            "my-mcp-allowed-hosts.json",
            "input",
        ] {
            assert!(!is_protected_name(&parts(p)), "{p}");
        }
    }
}
