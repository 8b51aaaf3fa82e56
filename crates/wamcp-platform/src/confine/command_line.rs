//! A Windows command line from argv, quoted the way the C runtime (and
//! Rust's own standard library) splits it again, so the program receives
//! exactly the arguments that were checked.

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

#[cfg(test)]
mod tests {
    use super::*;

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
