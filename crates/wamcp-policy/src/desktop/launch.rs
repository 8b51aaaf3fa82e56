//! Which programs `open_app` may start, and the command line it hands to
//! `CreateProcessW`.
//!
//! Only programs the user listed in `WAMCP_DESKTOP_APPS` start. A listed
//! *name* is looked up on the trusted part of `PATH` (never in a folder the
//! agent can write), then among the Start menu's shortcuts; a listed *full
//! path* is used exactly, a program (`.exe`) or a shortcut (`.lnk`, named
//! in a call by its path or its name without `.lnk`); a listed
//! *AppUserModelID* (`Publisher.App_hash!App`) is a packaged app, which the
//! system starts. A path in the call must be one of the listed paths: a
//! file the agent wrote somewhere, named like a listed program, is not that
//! program.

use super::same_image_name;
use crate::command::command_line::windows_command_line;

/// What `open_app` is to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum App {
    /// A listed full path, started as written.
    Path(String),
    /// A listed name (with `.exe`), looked up on the trusted `PATH`, then
    /// in the Start menu without the `.exe`.
    Name(String),
    /// A listed shortcut's full path: what it points to starts, with the
    /// arguments it holds.
    Shortcut(String),
    /// A listed AppUserModelID: a packaged app, activated by the system.
    Package(String),
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

/// `Publisher.App_hash!App`: one `!` between two non-empty parts, and
/// nothing a path or a command line would hold.
fn is_package_id(text: &str) -> bool {
    let text = text.trim();
    match text.split_once('!') {
        Some((package, app)) => {
            !package.is_empty()
                && !app.is_empty()
                && !app.contains('!')
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '!'))
        }
        None => false,
    }
}

fn is_shortcut(path: &str) -> bool {
    path.trim().to_ascii_lowercase().ends_with(".lnk")
}

/// A listed shortcut's file name and a name in a call: `Notepad++.lnk`
/// is named `Notepad++` or `Notepad++.lnk`.
fn same_shortcut_name(listed_file: &str, command: &str) -> bool {
    let stem = |name: &str| {
        let name = name.trim();
        match name.len().checked_sub(4) {
            Some(cut) if name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(".lnk") => {
                name[..cut].to_lowercase()
            }
            _ => name.to_lowercase(),
        }
    };
    is_shortcut(listed_file) && !stem(command).is_empty() && stem(listed_file) == stem(command)
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
        Some((_, "exe" | "lnk")) => None,
        Some((_, ext)) if !ext.contains(['\\', '/']) && ext.len() <= 4 => Some(format!(
            "open_app starts programs (.exe) and shortcuts (.lnk) only, not .{ext} files"
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
    if is_package_id(command) {
        return listed
            .iter()
            .find(|l| is_package_id(l) && l.trim().eq_ignore_ascii_case(command))
            .map(|l| App::Package(l.trim().to_string()))
            .ok_or_else(|| format!("'{command}' is not listed in WAMCP_DESKTOP_APPS"));
    }
    let listed_paths = listed.iter().filter(|l| is_path(l) && is_absolute(l));
    let as_app = |l: &String| {
        let path = l.trim().to_string();
        if is_shortcut(&path) {
            App::Shortcut(path)
        } else {
            App::Path(path)
        }
    };
    if is_path(command) {
        return listed_paths
            .clone()
            .find(|l| same_path(l, command))
            .map(as_app)
            .ok_or_else(|| format!("'{command}' is not one of the paths in WAMCP_DESKTOP_APPS"));
    }
    if let Some(path) = listed_paths.clone().find(|l| {
        let file = file_name(l);
        same_shortcut_name(file, command) || (!is_shortcut(file) && same_image_name(file, command))
    }) {
        return Ok(as_app(path));
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

/// The arguments alone, quoted as [`command_line`] quotes them: what a
/// packaged app is given.
pub fn arguments_line(args: &[String]) -> Result<String, String> {
    let line = command_line("", args)?;
    let args = line.strip_prefix("\"\"").unwrap_or(&line);
    Ok(args.strip_prefix(' ').unwrap_or(args).to_string())
}

/// [`command_line`] with the arguments a shortcut holds, as it stores
/// them (command-line text the user's shortcut wrote), before `args`.
pub fn shortcut_command_line(
    program: &str,
    stored: &str,
    args: &[String],
) -> Result<String, String> {
    let plain = command_line(program, args)?;
    let stored = stored.trim();
    if stored.is_empty() {
        return Ok(plain);
    }
    if stored.contains('\0') {
        return Err("the shortcut's arguments contain a NUL character".into());
    }
    let head = windows_command_line(program, &[]);
    let line = format!("{head} {stored}{}", &plain[head.len()..]);
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
    fn shortcuts_and_packaged_apps_start_when_listed() {
        let listed: Vec<String> = [
            "C:\\ProgramData\\Microsoft\\Windows\\Start Menu\\Programs\\Notepad++.lnk",
            "Microsoft.WindowsCalculator_8wekyb3d8bbwe!App",
            "Visual Studio Code",
        ]
        .map(String::from)
        .to_vec();
        let shortcut = App::Shortcut(listed[0].clone());
        for command in ["Notepad++", "notepad++.LNK", listed[0].as_str()] {
            assert_eq!(
                choose_app(command, &listed),
                Ok(shortcut.clone()),
                "{command}"
            );
        }
        assert_eq!(
            choose_app("microsoft.windowscalculator_8wekyb3d8bbwe!app", &listed),
            Ok(App::Package(listed[1].clone()))
        );
        // A name goes to PATH first, then to the Start menu.
        assert_eq!(
            choose_app("Visual Studio Code", &listed),
            Ok(App::Name("Visual Studio Code.exe".into()))
        );
        for (command, why) in [
            ("Other.App_8wekyb3d8bbwe!App", "a package not listed"),
            ("Microsoft.WindowsCalculator_8wekyb3d8bbwe!App!X", "two !"),
            (
                "C:\\Users\\me\\Desktop\\Notepad++.lnk",
                "the listed name elsewhere",
            ),
            ("Notepad++.exe", "the shortcut's name as a program"),
            ("evil.url", "not a program or shortcut"),
        ] {
            assert!(choose_app(command, &listed).is_err(), "{command}: {why}");
        }
    }

    #[test]
    fn a_shortcuts_own_arguments_come_first() {
        let line = shortcut_command_line(
            "C:\\Apps\\app.exe",
            " --profile \"Work one\" ",
            &["two words".to_string()],
        )
        .unwrap();
        assert_eq!(
            line,
            r#""C:\Apps\app.exe" --profile "Work one" "two words""#
        );
        assert_eq!(
            shortcut_command_line("a.exe", "", &[]).unwrap(),
            command_line("a.exe", &[]).unwrap()
        );
        assert!(shortcut_command_line("a.exe", "x\0", &[]).is_err());
        let args = ["--new-window".to_string(), "two words".to_string()];
        assert_eq!(
            arguments_line(&args).unwrap(),
            r#"--new-window "two words""#
        );
        assert_eq!(arguments_line(&[]).unwrap(), "");
        assert_eq!(
            arguments_line(&[String::new(), "x".into()]).unwrap(),
            r#""" x"#
        );
        assert!(shortcut_command_line("a.exe", &"x".repeat(40_000), &[]).is_err());
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
