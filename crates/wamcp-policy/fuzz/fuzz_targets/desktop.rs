//! The desktop tools' parsers on any input: key notation and targets never
//! panic and stay within their limits; `open_app` only ever chooses a
//! listed entry; and a command line splits back, by the C runtime's rules,
//! into exactly the program and arguments it was built from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::desktop::controls::parse_target;
use wamcp_policy::desktop::keys::{MAX_STROKES, parse_keys};
use wamcp_policy::desktop::launch::{App, choose_app, command_line};

/// `CommandLineToArgvW`'s rules for the arguments after the program.
fn split(line: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while matches!(chars.peek(), Some(' ' | '\t')) {
            chars.next();
        }
        if chars.peek().is_none() {
            return args;
        }
        let (mut arg, mut quoted, mut backslashes) = (String::new(), false, 0usize);
        while let Some(&c) = chars.peek() {
            match c {
                '\\' => backslashes += 1,
                '"' => {
                    arg.extend(std::iter::repeat_n('\\', backslashes / 2));
                    if backslashes % 2 == 1 {
                        arg.push('"');
                    } else {
                        quoted = !quoted;
                    }
                    backslashes = 0;
                }
                ' ' | '\t' if !quoted => break,
                c => {
                    arg.extend(std::iter::repeat_n('\\', backslashes));
                    backslashes = 0;
                    arg.push(c);
                }
            }
            chars.next();
        }
        arg.extend(std::iter::repeat_n('\\', backslashes));
        args.push(arg);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(strokes) = parse_keys(text) {
        assert!(!strokes.is_empty() && strokes.len() <= MAX_STROKES);
    }
    let _ = parse_target(text);
    let mut parts = text.split('\u{1}');
    let command = parts.next().unwrap_or_default();
    let listed: Vec<String> = parts.next().unwrap_or_default().split(';').map(String::from).collect();
    match choose_app(command, &listed) {
        Ok(App::Path(path)) => assert!(listed.iter().any(|l| l.trim() == path), "{path}"),
        Ok(App::Name(name)) => assert!(name.to_ascii_lowercase().ends_with(".exe") && !name.contains(['\\', '/', ':'])),
        Err(_) => {}
    }
    let args: Vec<String> = parts.map(String::from).collect();
    if let Ok(line) = command_line(r"C:\Program Files\App\app.exe", &args) {
        let rest = line.strip_prefix(r#""C:\Program Files\App\app.exe""#).expect("program quoted first");
        assert_eq!(split(rest), args, "{line}");
    }
});
