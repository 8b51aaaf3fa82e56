//! A conservative tokenizer for PowerShell argument mode.
//!
//! It produces argv or a refusal naming the construct. Where PowerShell's
//! behaviour is subtle or version-dependent, the input is refused rather
//! than guessed at: a refusal costs the model one rephrasing, a wrong guess
//! can run a second program.

use crate::text::is_invisible;
use std::fmt;

/// One argument after quoting is removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// The argument as the program receives it, quotes and escapes removed.
    pub text: String,
    /// Whether any part of it was quoted. A quoted argument is never a
    /// PowerShell parameter, and words inside it are data, not commands.
    pub quoted: bool,
}

/// Why a command string was refused: the construct PowerShell would
/// evaluate instead of passing literally.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The construct refused, in words (`'|', a pipeline`).
    pub construct: &'static str,
    /// Character offset where it starts.
    pub at: usize,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at character {})", self.construct, self.at + 1)
    }
}

/// Quote characters PowerShell accepts: ASCII and typographic.
pub(super) fn is_single_quote(c: char) -> bool {
    matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}')
}

pub(super) fn is_double_quote(c: char) -> bool {
    matches!(c, '"' | '\u{201C}' | '\u{201D}' | '\u{201E}')
}

/// En dash, em dash and horizontal bar start parameters like `-`.
fn is_dash(c: char) -> bool {
    matches!(c, '-' | '\u{2013}' | '\u{2014}' | '\u{2015}')
}

/// Splits `command` into arguments, or refuses it.
pub fn tokenize(command: &str) -> Result<Vec<Arg>, Refused> {
    let args = tokenize_values(command)?;
    check_command_name(&args)?;
    Ok(args)
}

/// Splits `text` into values that are no command (a variable's value), by
/// the same rules: a quoted first word is plain data here.
pub fn tokenize_values(text: &str) -> Result<Vec<Arg>, Refused> {
    let chars: Vec<char> = text.chars().collect();
    let mut args = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' || c == '\t' {
            i += 1;
            continue;
        }
        // A new token starts here.
        let (arg, next) = token(&chars, i)?;
        args.push(arg);
        i = next;
    }
    Ok(args)
}

/// Reads the argument that starts at `start`; returns it with the index of
/// the blank (or the end) after it.
fn token(chars: &[char], start: usize) -> Result<(Arg, usize), Refused> {
    let refuse = |construct: &'static str, at: usize| Err(Refused { construct, at });
    let mut i = start;
    let mut text = String::new();
    let mut quoted = false;
    let mut after_quote = false;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' || c == '\t' {
            break;
        }
        if after_quote && !is_single_quote(c) && !is_double_quote(c) {
            return refuse(
                "text glued after a closing quote (PowerShell may split it into two arguments)",
                i,
            );
        }
        match c {
            '`' => {
                text.push(escaped_outside_quotes(chars, i)?);
                quoted = true;
                i += 2;
                continue;
            }
            c if is_single_quote(c) => {
                i = single_quoted(chars, i, &mut text)?;
                quoted = true;
                after_quote = true;
                continue;
            }
            c if is_double_quote(c) => {
                i = double_quoted(chars, i, &mut text)?;
                quoted = true;
                after_quote = true;
                continue;
            }
            '@' if i == start && is_package_scope(&chars[i..]) => text.push('@'),
            c => text.push(unquoted(c, i, start)?),
        }
        i += 1;
    }
    if !quoted && text == "--%" {
        return refuse("'--%', the stop-parsing token", start);
    }
    Ok((Arg { text, quoted }, i))
}

/// Whether `word` starts like an npm package scope (`@types/node`): a name
/// and a slash, which no splat, array or here-string can start with. The
/// word is passed as text (and quoted when it goes to PowerShell).
fn is_package_scope(word: &[char]) -> bool {
    let name = word[1..]
        .iter()
        .take_while(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.' | '_' | '~')
        })
        .count();
    name > 0 && word.get(1 + name) == Some(&'/')
}

/// A character outside quotes as the argument holds it (a dash that starts
/// a parameter becomes `-`), or the refusal of what PowerShell would make
/// of it. Quotes and backticks are read by the caller.
fn unquoted(c: char, i: usize, start: usize) -> Result<char, Refused> {
    let refuse = |construct: &'static str| Err(Refused { construct, at: i });
    match c {
        '\n' | '\r' => refuse("a line break, which separates statements"),
        ';' => refuse("';', which separates statements"),
        '|' => refuse("'|', a pipeline"),
        '&' => refuse("'&', a call operator or command chain"),
        '>' | '<' => refuse("a redirection"),
        '(' | ')' => refuse("parentheses, which PowerShell evaluates as an expression"),
        '{' | '}' => refuse("braces, a script block"),
        '$' => refuse("'$', a variable or subexpression"),
        // Inside a word a comma is text (`git blame -L 1,20`, as Bash reads
        // it): no shell sees the argument, and a cmdlet gets it quoted.
        ',' if i == start => refuse("',' at the start of an argument, which builds an array"),
        '@' if i == start => {
            refuse("'@' at the start of an argument (splatting, array or here-string)")
        }
        '#' if i == start => refuse("'#' at the start of an argument, which starts a comment"),
        '\0' => refuse("a NUL character"),
        c if is_invisible(c) => refuse("an invisible formatting character (bidi or zero-width)"),
        c if c.is_control() || (c.is_whitespace() && c != ' ') => {
            refuse("a control or unusual whitespace character outside quotes")
        }
        c if is_dash(c) && i == start => Ok('-'),
        c => Ok(c),
    }
}

/// The character a backtick at `i` (outside quotes) escapes, or its refusal.
fn escaped_outside_quotes(chars: &[char], i: usize) -> Result<char, Refused> {
    let Some(&next) = chars.get(i + 1) else {
        return Err(Refused {
            construct: "a backtick at the end, a line continuation",
            at: i,
        });
    };
    // Outside quotes only an escaped punctuation mark is unambiguous.
    if next.is_alphanumeric() || next.is_whitespace() || next.is_control() {
        return Err(Refused {
            construct: "a backtick escape outside quotes",
            at: i,
        });
    }
    // An escaped character is still a character: found by fuzzing.
    check_quoted_char(next, i + 1)?;
    Ok(next)
}

/// The refusals that depend on the first argument, the command's name.
fn check_command_name(args: &[Arg]) -> Result<(), Refused> {
    let refuse = |construct: &'static str| Err(Refused { construct, at: 0 });
    if let Some(first) = args.first() {
        // A quoted path to a program ("C:/Program Files/Git/bin/git.exe") is
        // run as argv, never by PowerShell, so only a quoted bare name is odd.
        if first.quoted && !first.text.contains(['/', '\\']) {
            return refuse("a quoted command name (it needs the '&' call operator)");
        }
        if first.text == "." {
            return refuse("'.', the dot-source operator");
        }
    }
    Ok(())
}

/// Reads a single-quoted string starting at `open`; returns the index after
/// its closing quote. Everything is literal except a doubled quote.
fn single_quoted(chars: &[char], open: usize, text: &mut String) -> Result<usize, Refused> {
    let mut i = open + 1;
    loop {
        match chars.get(i) {
            None => {
                return Err(Refused {
                    construct: "an unterminated single-quoted string",
                    at: open,
                });
            }
            Some(&c) if is_single_quote(c) => {
                if chars.get(i + 1).is_some_and(|&n| is_single_quote(n)) {
                    text.push(c);
                    i += 2;
                } else {
                    return Ok(i + 1);
                }
            }
            Some(&c) => {
                check_quoted_char(c, i)?;
                text.push(c);
                i += 1;
            }
        }
    }
}

/// Reads a double-quoted string: backtick escapes, doubled quotes, and no
/// `$` expansion (any `$` that PowerShell would expand is refused).
fn double_quoted(chars: &[char], open: usize, text: &mut String) -> Result<usize, Refused> {
    let mut i = open + 1;
    loop {
        match chars.get(i) {
            None => {
                return Err(Refused {
                    construct: "an unterminated double-quoted string",
                    at: open,
                });
            }
            Some(&c) if is_double_quote(c) => {
                if chars.get(i + 1).is_some_and(|&n| is_double_quote(n)) {
                    text.push(c);
                    i += 2;
                } else {
                    return Ok(i + 1);
                }
            }
            Some('`') => {
                text.push(escaped_in_double_quotes(chars, open, i)?);
                i += 2;
            }
            Some('$') => {
                // "$5" and "a $ b" are literal; "$x", "$(...)", "${x}", "$_" expand.
                check_literal_dollar(chars, open, i)?;
                text.push('$');
                i += 1;
            }
            Some(&c) => {
                check_quoted_char(c, i)?;
                text.push(c);
                i += 1;
            }
        }
    }
}

/// The character a backtick at `i` escapes inside the double-quoted string
/// opened at `open`, or its refusal.
fn escaped_in_double_quotes(chars: &[char], open: usize, i: usize) -> Result<char, Refused> {
    let Some(&next) = chars.get(i + 1) else {
        return Err(Refused {
            construct: "an unterminated double-quoted string",
            at: open,
        });
    };
    let escaped = match next {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'v' => '\u{b}',
        'e' => '\u{1b}',
        '0' => {
            return Err(Refused {
                construct: "a `0 NUL escape",
                at: i,
            });
        }
        'u' => {
            return Err(Refused {
                construct: "a `u{} Unicode escape",
                at: i,
            });
        }
        c if c.is_alphanumeric() => {
            return Err(Refused {
                construct: "an unknown backtick escape",
                at: i,
            });
        }
        c => c,
    };
    check_quoted_char(next, i + 1)?;
    Ok(escaped)
}

/// Refuses a `$` at `i`, inside the double-quoted string opened at `open`,
/// that PowerShell would expand; one before a blank or the closing quote
/// is literal.
fn check_literal_dollar(chars: &[char], open: usize, i: usize) -> Result<(), Refused> {
    match chars.get(i + 1) {
        None => Err(Refused {
            construct: "an unterminated double-quoted string",
            at: open,
        }),
        Some(&n) if n == ' ' || n == '\t' || is_double_quote(n) => Ok(()),
        Some(_) => Err(Refused {
            construct: "'$' in double quotes, which PowerShell expands",
            at: i,
        }),
    }
}

/// Inside quotes, text is data, but a NUL or an invisible formatting
/// character would still make the shown command differ from the run one.
fn check_quoted_char(c: char, at: usize) -> Result<(), Refused> {
    if c == '\0' {
        return Err(Refused {
            construct: "a NUL character",
            at,
        });
    }
    if is_invisible(c) {
        return Err(Refused {
            construct: "an invisible formatting character (bidi or zero-width)",
            at,
        });
    }
    Ok(())
}

/// Serialises checked arguments for PowerShell so that PowerShell's parser
/// yields exactly these arguments: the command name and plain parameters
/// (`-Path`) stay bare, everything else is single-quoted with every
/// single-quote character doubled (typographic ones too: PowerShell ends a
/// string on `’` as well).
pub fn to_powershell(args: &[Arg]) -> String {
    let mut out = Vec::with_capacity(args.len());
    for (index, arg) in args.iter().enumerate() {
        let bare_ok = !arg.quoted
            && !arg.text.is_empty()
            && (index == 0
                && arg
                    .text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
                || is_plain_parameter(&arg.text));
        if bare_ok {
            out.push(arg.text.clone());
        } else {
            let mut quoted = String::with_capacity(arg.text.len() + 2);
            quoted.push('\'');
            for c in arg.text.chars() {
                if is_single_quote(c) {
                    quoted.push(c);
                }
                quoted.push(c);
            }
            quoted.push('\'');
            out.push(quoted);
        }
    }
    out.join(" ")
}

/// `-Name` or `-Name:`: a PowerShell parameter that must stay bare to bind.
fn is_plain_parameter(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('-') else {
        return false;
    };
    let rest = rest.strip_suffix(':').unwrap_or(rest);
    rest.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && rest.chars().all(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(command: &str) -> Vec<String> {
        tokenize(command)
            .unwrap_or_else(|e| panic!("{command:?} refused: {e}"))
            .into_iter()
            .map(|a| a.text)
            .collect()
    }

    #[test]
    fn legitimate_commands_pass_with_exact_arguments() {
        let cases: &[(&str, &[&str])] = &[
            ("git status", &["git", "status"]),
            ("  git   status  ", &["git", "status"]),
            (
                "cmake --build build --config Debug",
                &["cmake", "--build", "build", "--config", "Debug"],
            ),
            (
                "python tools/platform_check.py",
                &["python", "tools/platform_check.py"],
            ),
            (
                "git commit -m 'it''s done'",
                &["git", "commit", "-m", "it's done"],
            ),
            (
                r#"git log --format="%h | %s""#,
                &["git", "log", "--format=%h | %s"],
            ),
            (
                r#"git commit -m "fix: a; b | c && rm -rf x""#,
                &["git", "commit", "-m", "fix: a; b | c && rm -rf x"],
            ),
            (
                "git commit -m 'cost $5 & (more) {x} @y #z'",
                &["git", "commit", "-m", "cost $5 & (more) {x} @y #z"],
            ),
            (
                r#"git commit -m "costs $ 5""#,
                &["git", "commit", "-m", "costs $ 5"],
            ),
            (
                r#"git commit -m "say ""hi""""#,
                &["git", "commit", "-m", "say \"hi\""],
            ),
            (
                r#"git commit -m "tab`there and `"q`" and `$HOME""#,
                &["git", "commit", "-m", "tab\there and \"q\" and $HOME"],
            ),
            (
                "git commit -m 'line one\nline two'",
                &["git", "commit", "-m", "line one\nline two"],
            ),
            (
                "Get-ChildItem -Path src -Recurse",
                &["Get-ChildItem", "-Path", "src", "-Recurse"],
            ),
            (
                "'C:\\Program Files\\Git\\bin\\git.exe' status",
                &["C:\\Program Files\\Git\\bin\\git.exe", "status"],
            ),
            (
                "\"C:/Program Files/Git/bin/git.exe\" status",
                &["C:/Program Files/Git/bin/git.exe", "status"],
            ),
            (
                "Get-Content -Path:'C:\\Program Files\\x.txt'",
                &["Get-Content", "-Path:C:\\Program Files\\x.txt"],
            ),
            (
                "git clone git@github.com:o/r.git",
                &["git", "clone", "git@github.com:o/r.git"],
            ),
            (
                "cargo test -- --nocapture",
                &["cargo", "test", "--", "--nocapture"],
            ),
            ("git commit -m ''", &["git", "commit", "-m", ""]),
            ("ninja -C out/a#b", &["ninja", "-C", "out/a#b"]),
            ("echo a`;b", &["echo", "a;b"]),
            ("git commit -m “smart” ", &["git", "commit", "-m", "smart"]),
            ("git commit -m ‘it’’s’", &["git", "commit", "-m", "it’s"]),
            ("python –c", &["python", "-c"]),
            ("python —version", &["python", "-version"]),
            ("ünïcode ärg", &["ünïcode", "ärg"]),
            (
                "git blame -L 1,20 a.rs",
                &["git", "blame", "-L", "1,20", "a.rs"],
            ),
        ];
        for (command, want) in cases {
            assert_eq!(argv(command), *want, "{command:?}");
        }
    }

    #[test]
    fn constructs_powershell_would_evaluate_are_refused() {
        let cases: &[(&str, &str)] = &[
            ("git status; calc", "separates statements"),
            ("git status\ncalc", "line break"),
            ("git status\rcalc", "line break"),
            ("git log | more", "pipeline"),
            ("git pull && calc", "call operator or command chain"),
            ("git pull || calc", "pipeline"),
            ("& calc", "call operator"),
            ("git status &", "call operator"),
            (". ./evil.ps1", "dot-source"),
            ("git log > out.txt", "redirection"),
            ("git log 2>&1", "redirection"),
            ("cmd < in.txt", "redirection"),
            ("git $(calc)", "variable or subexpression"),
            ("git $env:PATH", "variable"),
            (r#"git commit -m "$(calc)""#, "which PowerShell expands"),
            (
                r#"git commit -m "$env:USERNAME""#,
                "which PowerShell expands",
            ),
            (r#"git commit -m "${x}""#, "which PowerShell expands"),
            ("git @(calc)", "'@' at the start"),
            ("git @args", "'@' at the start"),
            ("git @'\nx\n'@", "'@' at the start"),
            ("git (calc)", "parentheses"),
            ("git log -n(1+1)", "parentheses"),
            ("git {calc}", "script block"),
            ("git ,b", "builds an array"),
            ("git status #comment", "starts a comment"),
            ("git --% & calc", "stop-parsing"),
            ("git --% x", "stop-parsing"),
            ("git `n", "backtick escape outside quotes"),
            ("git a`", "line continuation"),
            ("git 'unterminated", "unterminated single-quoted"),
            ("git \"unterminated", "unterminated double-quoted"),
            ("'git' status", "quoted command name"),
            ("git \u{202E}txt.exe", "invisible formatting"),
            ("git 'a\u{200B}b'", "invisible formatting"),
            ("git a\u{00A0}b", "unusual whitespace"),
            ("git a\u{0}b", "NUL"),
            ("git \"a`0b\"", "NUL escape"),
            ("git \"a`u{41}\"", "Unicode escape"),
            ("git a`\u{202E}b", "invisible formatting"),
            ("git \"a`\u{202E}b\"", "invisible formatting"),
            ("git 'a'b", "glued after a closing quote"),
            ("git \"a\"b", "glued after a closing quote"),
            ("git ‘a’ ; calc", "separates statements"),
            ("git “a” | calc", "pipeline"),
            ("git 'it’s'; calc", "glued after a closing quote"),
        ];
        for (command, construct) in cases {
            let refused = tokenize(command).expect_err(command);
            assert!(
                refused.construct.contains(construct),
                "{command:?}: got {:?}",
                refused.construct
            );
        }
    }

    #[test]
    fn typographic_quotes_close_ascii_strings_as_powershell_does() {
        // `'it’s'` is the string `it` followed by `s'`... which is refused as glued text.
        assert!(tokenize("git commit -m 'it’s fine'").is_err());
        assert_eq!(
            argv("git commit -m 'it’’s fine'"),
            ["git", "commit", "-m", "it’s fine"]
        );
    }

    #[test]
    fn quoting_is_recorded() {
        let args = tokenize("python '-c' x").unwrap();
        assert!(!args[0].quoted);
        assert!(args[1].quoted && args[1].text == "-c");
        assert!(!args[2].quoted);
    }

    #[test]
    fn powershell_serialisation_round_trips() {
        let mut refused = Vec::new();
        for command in [
            "Get-ChildItem -Path 'C:\\My Files' -Recurse",
            "Select-String -Pattern 'a;b|c$d' -Path src",
            "Get-Content -Path:'it''s' -Tail 5",
            "Test-Path ‘odd’’quote’",
            "New-Item -ItemType Directory -Path 'x y'",
            "Get-Item ''",
            "Get-Item -Path --%",
        ] {
            let Ok(args) = tokenize(command) else {
                refused.push(command);
                continue;
            };
            let serialised = to_powershell(&args);
            let again = tokenize(&serialised).unwrap_or_else(|e| panic!("{serialised:?}: {e}"));
            assert_eq!(
                again.iter().map(|a| &a.text).collect::<Vec<_>>(),
                args.iter().map(|a| &a.text).collect::<Vec<_>>(),
                "{serialised}"
            );
        }
        // The one input that is not a command at all; nothing else may be skipped.
        assert_eq!(refused, ["Get-Item -Path --%"]);
        assert_eq!(
            to_powershell(&tokenize("Get-ChildItem -Path 'a b' -Recurse x").unwrap()),
            "Get-ChildItem -Path 'a b' -Recurse 'x'"
        );
    }
}
