//! `sandbox_run`'s decisions: which isolation a requirement needs, the
//! argv that enters it, the rules a Windows Sandbox payload path must
//! follow, and the `.wsb` that maps it.
//!
//! The three routes answer different questions. WSL gives Linux
//! compatibility, not isolation (it sees the Windows drives); a Dev
//! Container gives the project's reproducible toolchain; only Windows
//! Sandbox isolates untrusted Windows code — and only the files named as
//! its payload, copied, read-only, with networking and the clipboard off.

use serde::{Deserialize, Serialize};

/// The most payload paths one call may name.
pub const MAX_PAYLOAD_PATHS: usize = 1024;
/// The most files and directories a payload may hold, and bytes.
pub const MAX_PAYLOAD_ENTRIES: usize = 10_000;
/// The most bytes a payload's files may hold in all (1 GiB).
pub const MAX_PAYLOAD_BYTES: u64 = 1024 * 1024 * 1024;
/// Folders nested deeper than this are refused: each level is one open
/// handle while the tree is copied, and installers choke on such paths
/// inside the sandbox long before.
pub const MAX_PAYLOAD_DEPTH: usize = 128;
/// The longest payload path accepted, in bytes (Windows' own limit is
/// 32,767 UTF-16 units for a whole path).
pub const MAX_PAYLOAD_PATH_BYTES: usize = 4096;
/// Where the payload appears inside Windows Sandbox.
pub const SANDBOX_SHARE: &str = r"C:\WDAShare";

/// Where `sandbox_run` runs a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
// The doc comments are for Rust readers; the schema stays the bare names.
#[schemars(description = "", transform = crate::schema::names_only)]
pub enum Environment {
    /// The one environment the requirement calls for.
    Auto,
    /// WSL: Linux compatibility, not isolation (it sees the Windows drives).
    Wsl,
    /// The project's Dev Container: its reproducible toolchain.
    DevContainer,
    /// Windows Sandbox: isolation for untrusted Windows code, given only a
    /// read-only copy of the payload.
    WindowsSandbox,
}

/// What a `sandbox_run` call needs; each requirement has exactly one
/// environment ([`Requirement::environment`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
// The doc comments are for Rust readers; the schema stays the bare names.
#[schemars(description = "", transform = crate::schema::names_only)]
pub enum Requirement {
    /// A Linux userland for the command: WSL.
    LinuxCompatibility,
    /// The project's own declared toolchain: its Dev Container.
    ProjectReproducibility,
    /// Isolation for Windows code that is not trusted: Windows Sandbox.
    UntrustedWindows,
}

impl Environment {
    /// The environment as `sandbox_run`'s `environment` argument spells it.
    pub fn name(self) -> &'static str {
        match self {
            Environment::Auto => "auto",
            Environment::Wsl => "wsl",
            Environment::DevContainer => "dev_container",
            Environment::WindowsSandbox => "windows_sandbox",
        }
    }
}

impl Requirement {
    /// The one environment that provides the requirement.
    pub fn environment(self) -> Environment {
        match self {
            Requirement::LinuxCompatibility => Environment::Wsl,
            Requirement::ProjectReproducibility => Environment::DevContainer,
            Requirement::UntrustedWindows => Environment::WindowsSandbox,
        }
    }
}

/// The environment for `asked` under `requirement`, or why the pair is
/// refused: an explicit environment must be the one that provides the
/// requirement (WSL is no isolation for untrusted code; Windows Sandbox
/// has no Linux).
pub fn route(asked: Environment, requirement: Requirement) -> Result<Environment, String> {
    let needed = requirement.environment();
    if asked == Environment::Auto || asked == needed {
        Ok(needed)
    } else {
        Err(format!(
            "environment '{}' does not provide {}; that needs '{}' (or environment 'auto')",
            asked.name(),
            match requirement {
                Requirement::LinuxCompatibility => "Linux compatibility",
                Requirement::ProjectReproducibility => "the project's reproducible container",
                Requirement::UntrustedWindows => "isolation for untrusted Windows code",
            },
            needed.name()
        ))
    }
}

/// `wsl --cd <project> -- sh -lc <command>`: WSL takes the Windows path.
pub fn wsl_argv(project: &str, command: &str) -> Vec<String> {
    ["wsl", "--cd", project, "--", "sh", "-lc", command]
        .map(String::from)
        .to_vec()
}

/// `devcontainer exec --workspace-folder <project> sh -lc <command>`.
pub fn devcontainer_argv(project: &str, command: &str) -> Vec<String> {
    [
        "devcontainer",
        "exec",
        "--workspace-folder",
        project,
        "sh",
        "-lc",
        command,
    ]
    .map(String::from)
    .to_vec()
}

/// Why one file or folder name cannot travel into Windows Sandbox, if it
/// cannot: a stream or drive (`:`), a separator, a name Windows would alter
/// (trailing dot or space), or a device name.
pub fn name_problem(part: &str) -> Option<&'static str> {
    if part.contains(':') {
        return Some("must not name an alternate data stream or drive (':')");
    }
    if part.contains(['\\', '/', '\0']) {
        return Some("must not hold a separator or NUL in a name");
    }
    if part
        .chars()
        .any(|c| c.is_control() || "<>\"|?*".contains(c))
    {
        return Some(
            "holds a character Windows does not allow in names (< > \" | ? * or a control character)",
        );
    }
    if part.ends_with(['.', ' ']) {
        return Some("has a name ending in a dot or space, which Windows would change");
    }
    // Windows ignores spaces before the extension when it matches device
    // names, and counts the superscript digits as digits.
    let stem = part
        .split('.')
        .next()
        .unwrap_or(part)
        .trim_end()
        .to_ascii_uppercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix).is_some_and(|n| {
            matches!(
                n,
                "0" | "1"
                    | "2"
                    | "3"
                    | "4"
                    | "5"
                    | "6"
                    | "7"
                    | "8"
                    | "9"
                    | "\u{B9}"
                    | "\u{B2}"
                    | "\u{B3}"
            )
        })
    };
    let reserved = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"].contains(&stem.as_str())
        || numbered("COM")
        || numbered("LPT");
    reserved.then_some("names a Windows device")
}

/// A name as NTFS compares it: each character by its simple upper-case
/// mapping (`ς`, `σ` and `Σ` are one name, `ß` and `SS` two). Rust gives
/// only the full mapping, so where that is more than one character the
/// simple one is reached through the lower case: `ᾈ` and `ᾀ` are one name
/// to NTFS, though `ᾀ` upper-cases in full to two characters.
pub fn fold_case(name: &str) -> String {
    fn single(mut chars: impl Iterator<Item = char>) -> Option<char> {
        match (chars.next(), chars.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        }
    }
    name.chars()
        .map(|c| {
            if let Some(upper) = single(c.to_uppercase()) {
                return upper;
            }
            match single(c.to_lowercase()) {
                Some(lower) if lower != c => single(lower.to_uppercase()).unwrap_or(lower),
                _ => c,
            }
        })
        .collect()
}

/// The parts of a payload path, or why it is refused: relative, no `..`,
/// no empty or `.`-only path, no drive, UNC or device prefix, and every
/// name one that reaches Windows unchanged ([`name_problem`]).
pub fn payload_parts(path: &str) -> Result<Vec<String>, String> {
    let refuse = |why: &str| {
        Err(format!(
            "payload path '{}': {why}",
            crate::text::shown(path)
        ))
    };
    if path.contains('\0') {
        return refuse("holds a NUL character");
    }
    if path.starts_with(['/', '\\']) || path.as_bytes().get(1) == Some(&b':') {
        return refuse("must be relative to the workspace folder");
    }
    let parts: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        return refuse("names nothing (the whole workspace cannot be a payload path)");
    }
    // Bounded before anything is opened: one handle per part.
    if parts.len() > MAX_PAYLOAD_DEPTH || path.len() > MAX_PAYLOAD_PATH_BYTES {
        return refuse(&format!(
            "is longer than {MAX_PAYLOAD_DEPTH} names or {MAX_PAYLOAD_PATH_BYTES} bytes"
        ));
    }
    for part in &parts {
        if *part == ".." {
            return refuse("must not climb out with '..'");
        }
        if let Some(why) = name_problem(part) {
            return refuse(why);
        }
    }
    Ok(parts.into_iter().map(String::from).collect())
}

/// Checks a payload's paths together: each valid, none repeated, none
/// inside another (compared without case: the sandbox is Windows). Each
/// path is folded once and joined with NUL, which no name holds and which
/// sorts before every other character; sorted, a path is followed at once
/// by its repeats and by the paths inside it, so comparing neighbours is
/// enough and the cost stays that of sorting the input.
pub fn payload_paths(paths: &[String]) -> Result<Vec<Vec<String>>, String> {
    if paths.len() > MAX_PAYLOAD_PATHS {
        return Err(format!(
            "{} payload paths; at most {MAX_PAYLOAD_PATHS}",
            paths.len()
        ));
    }
    let all = paths
        .iter()
        .map(|p| payload_parts(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut keys: Vec<(String, usize)> = all
        .iter()
        .enumerate()
        .map(|(i, parts)| {
            let folded: Vec<String> = parts.iter().map(|p| fold_case(p)).collect();
            (folded.join("\0"), i)
        })
        .collect();
    keys.sort();
    for pair in keys.windows(2) {
        let ((first, a), (second, b)) = (&pair[0], &pair[1]);
        // The one given later is the one named in the refusal.
        let shown = crate::text::shown(&paths[*a.max(b)]);
        if first == second {
            return Err(format!("payload path '{shown}' is named twice"));
        }
        if second.starts_with(first.as_str()) && second[first.len()..].starts_with('\0') {
            return Err(format!(
                "payload path '{shown}' overlaps another (one lies inside the other)"
            ));
        }
    }
    Ok(all)
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The Windows Sandbox configuration: the bundle's share folder mapped
/// read-only at [`SANDBOX_SHARE`], networking, clipboard, audio, video and
/// printers off, and the command run from the payload folder at logon.
pub fn wsb(share_folder: &str, command: &str) -> String {
    format!(
        "<Configuration>\r\n\
         \x20 <Networking>Disable</Networking>\r\n\
         \x20 <ClipboardRedirection>Disable</ClipboardRedirection>\r\n\
         \x20 <AudioInput>Disable</AudioInput>\r\n\
         \x20 <VideoInput>Disable</VideoInput>\r\n\
         \x20 <PrinterRedirection>Disable</PrinterRedirection>\r\n\
         \x20 <ProtectedClient>Enable</ProtectedClient>\r\n\
         \x20 <MappedFolders>\r\n\
         \x20   <MappedFolder>\r\n\
         \x20     <HostFolder>{}</HostFolder>\r\n\
         \x20     <SandboxFolder>{SANDBOX_SHARE}</SandboxFolder>\r\n\
         \x20     <ReadOnly>true</ReadOnly>\r\n\
         \x20   </MappedFolder>\r\n\
         \x20 </MappedFolders>\r\n\
         \x20 <LogonCommand>\r\n\
         \x20   <Command>{}</Command>\r\n\
         \x20 </LogonCommand>\r\n\
         </Configuration>\r\n",
        xml(share_folder),
        xml(&format!(
            r"cmd.exe /c cd /d {SANDBOX_SHARE}\payload && {command}"
        ))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_choose_the_environment_and_refuse_a_wrong_one() {
        assert_eq!(
            route(Environment::Auto, Requirement::UntrustedWindows),
            Ok(Environment::WindowsSandbox)
        );
        assert_eq!(
            route(Environment::Auto, Requirement::LinuxCompatibility),
            Ok(Environment::Wsl)
        );
        assert_eq!(
            route(
                Environment::DevContainer,
                Requirement::ProjectReproducibility
            ),
            Ok(Environment::DevContainer)
        );
        let wrong = route(Environment::Wsl, Requirement::UntrustedWindows).unwrap_err();
        assert!(
            wrong.contains("does not provide isolation for untrusted Windows code"),
            "{wrong}"
        );
        assert!(route(Environment::WindowsSandbox, Requirement::LinuxCompatibility).is_err());
    }

    #[test]
    fn the_exact_argv() {
        assert_eq!(
            wsl_argv(r"C:\p", "make test").join(" "),
            r"wsl --cd C:\p -- sh -lc make test"
        );
        assert_eq!(
            devcontainer_argv("/p", "npm test").join("|"),
            "devcontainer|exec|--workspace-folder|/p|sh|-lc|npm test"
        );
    }

    #[test]
    fn payload_paths_that_could_escape_or_mislead_are_refused() {
        for bad in [
            "/etc/passwd",
            "\\\\server\\share",
            "C:\\x",
            "c:x",
            "..",
            "a/../../b",
            "a\\..\\b",
            "",
            ".",
            "./",
            "a\0b",
            "file.txt:stream",
            "dir./x",
            "name ",
            "CON",
            "aux.txt",
            "COM1",
            "lpt9.log",
            "CONIN$",
            "LPT\u{B9}.txt",
            "COM\u{B3}",
            "nul .txt",
            "a<b",
            "a|b",
            "a?b",
            "a\"b",
            "a*b",
            "a\u{1}b",
        ] {
            assert!(payload_parts(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            payload_parts("./bin\\tool.exe").unwrap(),
            ["bin", "tool.exe"]
        );
        assert_eq!(payload_parts("a//b/./c").unwrap(), ["a", "b", "c"]);
        assert!(payload_parts("com10.txt").is_ok());
        assert!(payload_parts("console.log").is_ok());
    }

    #[test]
    fn duplicates_and_overlaps_are_refused_without_regard_to_case() {
        let p = |v: &[&str]| payload_paths(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(p(&["bin", "data/x.json"]).is_ok());
        assert!(p(&["bin", "BIN"]).unwrap_err().contains("named twice"));
        assert!(
            p(&["bin", "bin/tool.exe"])
                .unwrap_err()
                .contains("overlaps")
        );
        assert!(
            p(&["Bin/tool.exe", "bin"])
                .unwrap_err()
                .contains("overlaps")
        );
        assert!(
            p(&["bin2", "bin"]).is_ok(),
            "a shared prefix of letters is no overlap"
        );
        assert!(
            p(&["a/b/c", "a/b"]).unwrap_err().contains("overlaps"),
            "a deeper path first, then its folder"
        );
        assert!(p(&["a/b/c", "a/b/d", "a/bc"]).is_ok());
        assert!(
            p(&["a!b", "A/b", "a"])
                .unwrap_err()
                .contains("'a' overlaps"),
            "a sibling that sorts between a folder and its contents"
        );
        assert!(
            p(&["x", "a", "X"])
                .unwrap_err()
                .contains("'X' is named twice")
        );
        let many: Vec<String> = (0..=MAX_PAYLOAD_PATHS).map(|i| format!("f{i}")).collect();
        assert!(payload_paths(&many).unwrap_err().contains("at most 1024"));
        // A thousand long, deep, distinct paths are checked at once.
        let deep: Vec<String> = (0..MAX_PAYLOAD_PATHS)
            .map(|i| format!("{}/f{i}", vec!["d"; MAX_PAYLOAD_DEPTH - 1].join("/")))
            .collect();
        assert_eq!(payload_paths(&deep).map(|p| p.len()), Ok(MAX_PAYLOAD_PATHS));
    }

    #[test]
    fn names_fold_the_way_ntfs_compares_them() {
        for (a, b) in [
            ("sigma\u{3C3}", "SIGMA\u{3A3}"),
            ("\u{3C2}", "\u{3C3}"),
            ("\u{1F80}", "\u{1F88}"),
            ("\u{1FB3}", "\u{1FBC}"),
        ] {
            assert_eq!(fold_case(a), fold_case(b), "{a} {b}");
        }
        for (a, b) in [
            ("stra\u{DF}e", "STRASSE"),
            ("\u{DF}", "\u{1E9E}"),
            ("a", "b"),
        ] {
            assert_ne!(fold_case(a), fold_case(b), "{a} {b}");
        }
    }

    #[test]
    fn long_or_deep_paths_are_refused_before_anything_is_opened() {
        let deep = vec!["d"; MAX_PAYLOAD_DEPTH + 1].join("/");
        assert!(
            payload_parts(&deep)
                .unwrap_err()
                .contains("longer than 128 names")
        );
        let long = "x".repeat(MAX_PAYLOAD_PATH_BYTES + 1);
        assert!(payload_parts(&long).unwrap_err().contains("4096 bytes"));
        assert!(payload_parts(&vec!["d"; MAX_PAYLOAD_DEPTH].join("/")).is_ok());
    }

    #[test]
    fn the_wsb_maps_read_only_with_everything_off_and_escapes_the_command() {
        let wsb = wsb(
            r"C:\Users\u\AppData\Local\wamcp\sandbox\b1\share",
            "setup.exe /S & echo <done>",
        );
        for line in [
            "<Networking>Disable</Networking>",
            "<ClipboardRedirection>Disable</ClipboardRedirection>",
            r"<HostFolder>C:\Users\u\AppData\Local\wamcp\sandbox\b1\share</HostFolder>",
            r"<SandboxFolder>C:\WDAShare</SandboxFolder>",
            "<ReadOnly>true</ReadOnly>",
            r"<Command>cmd.exe /c cd /d C:\WDAShare\payload &amp;&amp; setup.exe /S &amp; echo &lt;done&gt;</Command>",
        ] {
            assert!(wsb.contains(line), "{line}\n{wsb}");
        }
    }
}
