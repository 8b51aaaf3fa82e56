//! Which programs `open_app` may start, and the command line it hands to
//! `CreateProcessW`.
//!
//! Only programs the user listed in `WAMCP_DESKTOP_APPS` start. A listed
//! *name* is looked up on the trusted part of `PATH` (never in a folder the
//! agent can write); a listed *full path* is used exactly. A path in the
//! call must be one of the listed paths: a file the agent wrote somewhere,
//! named like a listed program, is not that program.

use super::same_image_name;
use crate::command::command_line::windows_command_line;

/// What `open_app` is to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum App {
    /// A listed full path, started as written.
    Path(String),
    /// A listed name (with `.exe`), looked up on the trusted `PATH`.
    Name(String),
}

/// The flags `accessibility=true` adds, which keep a Chromium or Electron
/// accessibility tree alive and readable while the window is in the
/// background: the first builds it, either of the others stops
/// Chromium from discarding it when another window comes forward.
pub const ACCESSIBILITY_FLAGS: [&str; 3] = [
    "--force-renderer-accessibility",
    "--disable-backgrounding-occluded-windows",
    "--disable-features=CalculateNativeWinOcclusion",
];

/// The most arguments `open_app` passes to a program.
pub const MAX_ARGS: usize = 32;
/// The longest single argument `open_app` passes, in characters.
pub const MAX_ARG_CHARS: usize = 2048;
/// `CreateProcessW` refuses a longer command line.
const MAX_COMMAND_LINE: usize = 32_767;

fn is_path(text: &str) -> bool {
    text.contains(['\\', '/']) || text.contains(':')
}

/// `C:\…`, `\\server\…` or, for tests on other systems, `/…`.
fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    (b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/'))
        || path.starts_with("\\\\")
        || path.starts_with('/')
}

fn file_name(path: &str) -> &str {
    path.rsplit(['\\', '/']).next().unwrap_or(path)
}

fn same_path(a: &str, b: &str) -> bool {
    let norm = |p: &str| p.trim().replace('/', "\\").to_lowercase();
    norm(a) == norm(b)
}

/// Only programs: `.bat` and `.cmd` are run by `cmd.exe`, whose parsing of
/// the arguments no quoting can make safe.
fn program_kind_problem(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    match lower.rsplit_once('.') {
        None => None,
        Some((_, "exe")) => None,
        Some((_, ext)) if !ext.contains(['\\', '/']) && ext.len() <= 4 => Some(format!(
            "open_app starts programs (.exe) only, not .{ext} files"
        )),
        Some(_) => None,
    }
}

/// Decides what `command` names, or says why it may not start.
pub fn choose_app(command: &str, listed: &[String]) -> Result<App, String> {
    let command = command.trim();
    if command.is_empty() {
        return Err("no program named".into());
    }
    if command.contains(['\0', '"']) {
        return Err("the program name contains a quote or a NUL character".into());
    }
    if let Some(problem) = program_kind_problem(file_name(command)) {
        return Err(problem);
    }
    let listed_paths = listed.iter().filter(|l| is_path(l) && is_absolute(l));
    if is_path(command) {
        return listed_paths
            .clone()
            .find(|l| same_path(l, command))
            .map(|l| App::Path(l.trim().to_string()))
            .ok_or_else(|| format!("'{command}' is not one of the paths in WAMCP_DESKTOP_APPS"));
    }
    if let Some(path) = listed_paths
        .clone()
        .find(|l| same_image_name(file_name(l), command))
    {
        return Ok(App::Path(path.trim().to_string()));
    }
    if listed
        .iter()
        .any(|l| !is_path(l) && same_image_name(l, command))
    {
        let name = if command.to_ascii_lowercase().ends_with(".exe") {
            command.to_string()
        } else {
            format!("{command}.exe")
        };
        return Ok(App::Name(name));
    }
    Err(format!("'{command}' is not listed in WAMCP_DESKTOP_APPS"))
}

/// Checks the arguments and joins program and arguments into one command
/// line that `CommandLineToArgvW` and the C runtime split back exactly.
pub fn command_line(program: &str, args: &[String]) -> Result<String, String> {
    if args.len() > MAX_ARGS {
        return Err(format!("more than {MAX_ARGS} arguments"));
    }
    if program.contains(['"', '\0']) {
        return Err("the program path contains a quote or a NUL character".into());
    }
    for arg in args {
        if arg.contains('\0') {
            return Err("an argument contains a NUL character".into());
        }
        if arg.chars().count() > MAX_ARG_CHARS {
            return Err(format!(
                "an argument is longer than {MAX_ARG_CHARS} characters"
            ));
        }
    }
    let line = windows_command_line(program, args);
    if line.encode_utf16().count() >= MAX_COMMAND_LINE {
        return Err("the command line is longer than Windows accepts".into());
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed() -> Vec<String> {
        [
            "notepad",
            "C:\\Tools\\Viewer.exe",
            "tools\\relative.exe",
            "code.exe",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn listed_names_and_paths_start() {
        assert_eq!(
            choose_app("notepad", &listed()),
            Ok(App::Name("notepad.exe".into()))
        );
        assert_eq!(
            choose_app("Notepad.EXE", &listed()),
            Ok(App::Name("Notepad.EXE".into()))
        );
        assert_eq!(
            choose_app("code", &listed()),
            Ok(App::Name("code.exe".into()))
        );
        assert_eq!(
            choose_app("viewer", &listed()),
            Ok(App::Path("C:\\Tools\\Viewer.exe".into()))
        );
        assert_eq!(
            choose_app("c:/tools/viewer.exe", &listed()),
            Ok(App::Path("C:\\Tools\\Viewer.exe".into()))
        );
    }

    #[test]
    fn look_alikes_and_unlisted_programs_do_not() {
        for (command, why) in [
            (
                "C:\\work\\notepad.exe",
                "a planted file named like a listed name",
            ),
            (
                "D:\\Tools\\Viewer.exe",
                "the listed file name in another folder",
            ),
            ("relative", "a relative entry is never trusted"),
            ("tools\\relative.exe", "a relative entry is never trusted"),
            ("cmd", "not listed"),
            ("notepad.bat", "batch files are cmd.exe's"),
            ("notepad.cmd", "batch files are cmd.exe's"),
            ("C:\\Tools\\Viewer.exe\" /evil", "a quote"),
            ("", "empty"),
            ("..\\notepad", "a path"),
        ] {
            assert!(
                choose_app(command, &listed()).is_err(),
                "{command} started: {why}"
            );
        }
    }

    #[test]
    fn command_lines_split_back_exactly() {
        let args: Vec<String> = [
            "plain",
            "two words",
            "",
            "quote\"inside",
            "trail\\",
            "dir\\\\\"q",
            "tab\there",
        ]
        .map(String::from)
        .to_vec();
        let line = command_line("C:\\Program Files\\App\\app.exe", &args).unwrap();
        assert_eq!(
            line,
            r#""C:\Program Files\App\app.exe" plain "two words" "" "quote\"inside" trail\ "dir\\\\\"q" "tab	here""#
        );
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(command_line("a.exe", &["x\0y".to_string()]).is_err());
        assert!(command_line("a\".exe", &[]).is_err());
        assert!(command_line("a.exe", &vec!["x".to_string(); MAX_ARGS + 1]).is_err());
        assert!(command_line("a.exe", &["x".repeat(MAX_ARG_CHARS + 1)]).is_err());
        assert!(command_line("a.exe", &vec!["x".repeat(MAX_ARG_CHARS); 17]).is_err());
    }
}
