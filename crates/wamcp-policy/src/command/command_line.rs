//! A Windows command line from argv, quoted the way the C runtime (and
//! Rust's own standard library) splits it again, so the program receives
//! exactly the arguments that were checked; and the `cmd.exe` line that
//! runs a batch file (`npm.cmd`) without letting `cmd.exe` read its
//! arguments as commands.

/// `program` quoted, then each argument quoted where it needs it.
pub fn windows_command_line(program: &str, args: &[String]) -> String {
    let mut line = format!("\"{program}\"");
    for arg in args {
        line.push(' ');
        push_quoted(&mut line, arg);
    }
    line
}

fn push_quoted(line: &mut String, arg: &str) {
    if !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\x0b', '"']) {
        line.push_str(arg);
        return;
    }
    line.push('"');
    let mut backslashes = 0;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                // Backslashes before a quote are doubled, and the quote escaped.
                line.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                line.push('"');
                backslashes = 0;
                continue;
            }
            _ => {}
        }
        if c != '\\' {
            line.extend(std::iter::repeat_n('\\', backslashes));
            backslashes = 0;
            line.push(c);
        }
    }
    // Backslashes before the closing quote are doubled too.
    line.extend(std::iter::repeat_n('\\', backslashes * 2));
    line.push('"');
}

/// Whether Windows runs `path` through `cmd.exe` (`.bat`, `.cmd`).
pub fn is_batch_file(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".bat") || lower.ends_with(".cmd")
}

/// The `cmd.exe /c` line that runs batch file `script` with `args`, or why
/// that cannot be done safely. The quoting is the one Rust's standard
/// library applies since the batch-file advisory of April 2024
/// (CVE-2024-24576):
///
/// - an argument holding a line break or NUL is refused: `cmd.exe` ends the
///   command there and reads the rest as another one;
/// - an argument with anything but letters, digits and `#$*+-./:?@\_` is
///   quoted, so `&`, `|`, `<`, `>`, `^` and `(` stay inside a string;
/// - a `"` inside is doubled, which keeps `cmd.exe`'s idea of "inside
///   quotes" in step with the C runtime's.
///
/// Stricter than the standard library, an argument holding `%` is refused:
/// its escape survives one expansion, but a shim that passes its arguments
/// on with `call ... %*` (pyenv-win's `python.bat` does) expands them
/// again, and `%COMSPEC:C:=" & calc & "%` then puts the caller's own `"`
/// and `&` on a command line.
///
/// The whole line goes after `/c` as one quoted string, after
/// `/e:ON /v:OFF /d`: command extensions on (batch files need them),
/// delayed `!` expansion off, and no AutoRun commands from the registry.
pub fn batch_command_line(script: &str, args: &[String]) -> Result<String, String> {
    if script.contains('"') || script.ends_with('\\') {
        return Err(format!(
            "'{script}' cannot be named on a cmd.exe line (a quote in it, or a trailing backslash)"
        ));
    }
    let mut line = format!("cmd.exe /e:ON /v:OFF /d /c \"\"{script}\"");
    for (index, arg) in args.iter().enumerate() {
        if arg.contains(['\r', '\n', '\0']) {
            return Err(format!(
                "argument {} holds a line break or NUL character, which cmd.exe would read as the end of the \
                 command, so it cannot be passed to a batch file",
                index + 1
            ));
        }
        if arg.contains('%') {
            return Err(format!(
                "argument {} holds '%', which cmd.exe expands as a variable, and a batch file that passes its \
                 arguments on with `call` expands again past any escaping, so it cannot be passed to a batch file",
                index + 1
            ));
        }
        line.push(' ');
        push_batch_quoted(&mut line, arg);
    }
    line.push('"');
    // cmd.exe refuses a longer line; say so rather than leave it to a vague failure.
    let length = line.encode_utf16().count();
    if length > MAX_CMD_LINE {
        return Err(format!(
            "the cmd.exe line would be {length} characters long, over cmd.exe's limit of {MAX_CMD_LINE}"
        ));
    }
    Ok(line)
}

/// The longest command line `cmd.exe` accepts, in UTF-16 units.
const MAX_CMD_LINE: usize = 8191;

fn push_batch_quoted(line: &mut String, arg: &str) {
    const PLAIN_SYMBOLS: &str = "#$*+-./:?@\\_";
    let needs_quotes = arg.is_empty()
        // A trailing backslash would escape the closing quote of `"%~1"`.
        || arg.ends_with('\\')
        || arg.chars().any(|c| {
            (c.is_ascii() && !c.is_ascii_alphanumeric() && !PLAIN_SYMBOLS.contains(c))
                || c.is_control()
        });
    if needs_quotes {
        line.push('"');
    }
    let mut backslashes = 0;
    for c in arg.chars() {
        match c {
            '\\' => {
                backslashes += 1;
                line.push(c);
                continue;
            }
            '"' => {
                // Backslashes before a quote are doubled; the quote too.
                line.extend(std::iter::repeat_n('\\', backslashes));
                line.push('"');
            }
            _ => {}
        }
        backslashes = 0;
        line.push(c);
    }
    if needs_quotes {
        line.extend(std::iter::repeat_n('\\', backslashes));
        line.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_lines_quote_what_cmd_would_read() {
        let args: Vec<String> = [
            "run",
            "build",
            "--",
            "x&calc",
            "a|b",
            "two words",
            r#"say "hi""#,
            r"C:\dir\",
            "",
            "naïve",
            "^caret",
            "!bang!",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            batch_command_line(r"C:\Program Files\nodejs\npm.cmd", &args).unwrap(),
            r##"cmd.exe /e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npm.cmd" run build -- "x&calc" "a|b" "two words" "say ""hi""" "C:\dir\\" "" naïve "^caret" "!bang!"""##
        );
        assert_eq!(
            batch_command_line(r"C:\t\b.bat", &[r#"a\"b"#.to_string()]).unwrap(),
            r##"cmd.exe /e:ON /v:OFF /d /c ""C:\t\b.bat" "a\\""b"""##
        );
    }

    #[test]
    fn batch_lines_refuse_what_cannot_be_quoted() {
        for arg in ["a\nb", "a\rb", "a\0b", "\n"] {
            let args = ["ok".to_string(), arg.to_string()];
            let error = batch_command_line(r"C:\t\npm.cmd", &args).unwrap_err();
            assert!(
                error.starts_with("argument 2 holds a line break"),
                "{error}"
            );
        }
        for arg in ["50%", "%PATH%", "%COMSPEC:C:=\" & calc & \"%"] {
            let args = ["ok".to_string(), arg.to_string()];
            let error = batch_command_line(r"C:\t\python.bat", &args).unwrap_err();
            assert!(error.starts_with("argument 2 holds '%'"), "{error}");
        }
        let quotes = ["\"".repeat(4100)];
        let error = batch_command_line(r"C:\t\npm.cmd", &quotes).unwrap_err();
        assert!(error.contains("over cmd.exe's limit of 8191"), "{error}");
        assert!(batch_command_line(r"C:\t\npm.cmd", &["\"".repeat(4000)]).is_ok());
        for script in [r#"C:\t\"x.cmd"#, r"C:\t\"] {
            assert!(batch_command_line(script, &[]).is_err(), "{script}");
        }
        assert!(is_batch_file(r"C:\x\NPM.CMD") && is_batch_file("b.bat"));
        assert!(!is_batch_file("git.exe") && !is_batch_file("cmd"));
    }

    #[test]
    fn arguments_survive_the_round_trip() {
        let args: Vec<String> = [
            "plain",
            "",
            "two words",
            r#"say "hi""#,
            r"C:\dir\",
            r"C:\dir with space\",
            r#"a\"b"#,
            r"\\server\share",
            "tab\there",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            windows_command_line(r"C:\Program Files\Git\cmd\git.exe", &args),
            r#""C:\Program Files\Git\cmd\git.exe" plain "" "two words" "say \"hi\"" C:\dir\ "C:\dir with space\\" "a\\\"b" \\server\share "tab	here""#
        );
    }
}
