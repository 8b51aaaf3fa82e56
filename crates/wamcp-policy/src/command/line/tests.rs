use super::*;

/// The line as wamcp performs it, in one string per step:
/// `[join] VAR=v argv... (timeout N) (2>x) | filters`.
fn shown(command: &str) -> Vec<String> {
    let line = parse_line(command).unwrap_or_else(|e| panic!("{command:?} refused: {e}"));
    let mut out: Vec<String> = line.dir.iter().map(|d| format!("cd {d}")).collect();
    for step in &line.steps {
        let mut parts = vec![format!("{:?}", step.join)];
        parts.extend(step.env.iter().map(|(k, v)| format!("{k}={v}")));
        parts.extend(step.argv.iter().map(|a| format!("[{}]", a.text)));
        if let Some(t) = step.timeout {
            parts.push(format!("(timeout {t})"));
        }
        if step.stderr != Stderr::Keep {
            parts.push(format!("(stderr {:?})", step.stderr));
        }
        parts.extend(step.filters.iter().map(|f| format!("|{}", kind(f))));
        out.push(parts.join(" "));
    }
    out
}

fn kind(filter: &Filter) -> String {
    match filter {
        Filter::Head(n) => format!("head {n}"),
        Filter::Tail(n) => format!("tail {n}"),
        Filter::Lines {
            matcher, invert, ..
        } => format!("lines {}{}", if *invert { "!" } else { "" }, matcher),
        Filter::CountLines => "count".into(),
        Filter::Discard => "discard".into(),
        other => format!("{other:?}"),
    }
}

fn refusal(command: &str) -> String {
    parse_line(command).expect_err(command).0
}

#[test]
fn a_plain_command_is_one_plain_step() {
    let line = parse_line("git status --short").unwrap();
    assert!(line.is_plain());
    assert_eq!(
        shown("git status --short"),
        ["First [git] [status] [--short]"]
    );
    assert!(!parse_line("git status 2>&1").unwrap().is_plain());
}

#[test]
fn chains_keep_their_operators() {
    assert_eq!(
        shown("cargo build && cargo test; git status || git log -1"),
        [
            "First [cargo] [build]",
            "And [cargo] [test]",
            "Then [git] [status]",
            "Or [git] [log] [-1]"
        ]
    );
    assert_eq!(
        shown("cargo fmt\ncargo test"),
        ["First [cargo] [fmt]", "Then [cargo] [test]"]
    );
    assert_eq!(shown("cargo fmt;"), ["First [cargo] [fmt]"]);
}

#[test]
fn operators_inside_quotes_are_text() {
    assert_eq!(
        shown(r#"git commit -m "a && b; c | d > e""#),
        ["First [git] [commit] [-m] [a && b; c | d > e]"]
    );
    assert_eq!(
        shown("python -c 'import sys; print(sys.argv)'"),
        ["First [python] [-c] [import sys; print(sys.argv)]"]
    );
    assert_eq!(
        shown("git log --format='%h|%s'"),
        ["First [git] [log] [--format=%h|%s]"]
    );
}

#[test]
fn redirections_wamcp_performs() {
    assert_eq!(
        shown("cargo test 2>&1"),
        ["First [cargo] [test] (stderr Merge)"]
    );
    assert_eq!(
        shown("cargo test 2> /dev/null"),
        ["First [cargo] [test] (stderr Drop)"]
    );
    assert_eq!(
        shown("git log 2>$null"),
        ["First [git] [log] (stderr Drop)"]
    );
    assert_eq!(shown("git log 2>NUL"), ["First [git] [log] (stderr Drop)"]);
    assert_eq!(
        shown("git fetch >/dev/null"),
        ["First [git] [fetch] |discard"]
    );
    assert_eq!(
        shown("git fetch *>$null"),
        ["First [git] [fetch] (stderr Drop) |discard"]
    );
    assert_eq!(
        shown("git fetch &>/dev/null"),
        ["First [git] [fetch] (stderr Drop) |discard"]
    );
    assert_eq!(
        shown("git fetch *>&1"),
        ["First [git] [fetch] (stderr Merge)"]
    );
}

#[test]
fn pipes_into_filters() {
    assert_eq!(
        shown("cargo test 2>&1 | grep -i error | head -n 20"),
        ["First [cargo] [test] (stderr Merge) |lines (?:error) |head 20"]
    );
    assert_eq!(
        shown("dotnet test | Select-String FAIL -NotMatch | Select-Object -First 5"),
        ["First [dotnet] [test] |lines !(?:FAIL) |head 5"]
    );
    assert_eq!(
        shown("git ls-files | wc -l"),
        ["First [git] [ls-files] |count"]
    );
}

#[test]
fn leading_cd_and_variables_set_the_scene() {
    assert_eq!(
        shown("cd sub && cargo test"),
        ["cd sub", "First [cargo] [test]"]
    );
    assert_eq!(shown("cd /d build; ctest"), ["cd build", "First [ctest]"]);
    assert_eq!(
        shown("Set-Location -Path web; npm test"),
        ["cd web", "First [npm] [test]"]
    );
    assert_eq!(shown("cd a && cd b && make"), ["cd a/b", "First [make]"]);
    assert_eq!(
        shown("RUST_BACKTRACE=1 CI=true cargo test"),
        ["First RUST_BACKTRACE=1 CI=true [cargo] [test]"]
    );
    assert_eq!(
        shown("$env:RUST_LOG = 'debug'; cargo run; cargo test"),
        [
            "First RUST_LOG=debug [cargo] [run]",
            "Then RUST_LOG=debug [cargo] [test]"
        ]
    );
    assert_eq!(
        shown("export CI=1 && npm test"),
        ["First CI=1 [npm] [test]"]
    );
    assert_eq!(
        shown("timeout 120 dotnet test"),
        ["First [dotnet] [test] (timeout 120)"]
    );
    assert_eq!(shown("timeout 2m make"), ["First [make] (timeout 120)"]);
}

#[test]
fn heredoc_and_here_string_messages_are_one_argument() {
    let claude = "git commit -m \"$(cat <<'EOF'\nFix the parser\n\nIt's done: \"quoted\" $HOME `x`.\nEOF\n)\"";
    assert_eq!(
        shown(claude),
        ["First [git] [commit] [-m] [Fix the parser\n\nIt's done: \"quoted\" $HOME `x`.]"]
    );
    let after = "git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\" && git log -1";
    assert_eq!(
        shown(after),
        ["First [git] [commit] [-m] [msg]", "And [git] [log] [-1]"]
    );
    let powershell = "git commit -m @'\nFirst line\nIt's \"here\" $x\n'@";
    assert_eq!(
        shown(powershell),
        ["First [git] [commit] [-m] [First line\nIt's \"here\" $x]"]
    );
    let typographic = "git commit -m \"$(cat <<'EOF'\nit\u{2019}s; calc \u{2018}x\nEOF\n)\"";
    assert_eq!(
        shown(typographic),
        ["First [git] [commit] [-m] [it\u{2019}s; calc \u{2018}x]"]
    );
    let crlf = "git commit -m @'\r\nline\r\n'@";
    assert_eq!(shown(crlf), ["First [git] [commit] [-m] [line]"]);
}

#[test]
fn what_only_a_shell_does_is_refused_with_what_to_do() {
    for (command, says) in [
        ("git log > log.txt", "write_file"),
        ("git log >> log.txt", "write_file"),
        ("sort < input.txt", "as an argument"),
        ("cargo build &", "background"),
        ("& 'C:/x/git.exe' status", "background"),
        ("cd src", "working_directory"),
        ("cargo build && cd src && ls", "between commands"),
        ("git status | xargs rm", "as a command of its own"),
        ("git status | awk '{print $1}'", "performs only"),
        ("&& git status", "no command on one side"),
        ("git status &&", "no command on one side"),
        ("git status | ", "no command on one side"),
        ("echo $(whoami)", "'$'"),
        ("git log `whoami`", "backtick"),
        ("(git status)", "parentheses"),
        (
            "git commit -m \"$(cat <<EOF\nhi $USER\nEOF\n)\"",
            "unquoted heredoc",
        ),
        (
            "git commit -m \"$(cat <<'EOF'\nnever ends\n)\"",
            "never ends",
        ),
        (
            "git commit -m @\"\nhi $env:USER\n\"@",
            "double-quoted here-string",
        ),
        ("git commit -m @'\nnever ends\n", "never ends"),
        ("FOO=1", "no command"),
        ("$env:FOO", "only setting one"),
        ("$env:FOO = 'a' 'b'; git status", "one value"),
        ("timeout x cargo test", "whole number"),
        ("git status || cd x", "'||' before a cd"),
        ("   ", "empty"),
    ] {
        let got = refusal(command);
        assert!(got.contains(says), "{command:?}: {got}");
    }
}

#[test]
fn a_package_scope_is_a_word_and_a_splat_is_not() {
    assert_eq!(
        shown("npm i -D @types/node"),
        ["First [npm] [i] [-D] [@types/node]"]
    );
    assert_eq!(
        shown("npx @scope/tool --x"),
        ["First [npx] [@scope/tool] [--x]"]
    );
    for splat in [
        "git @args",
        "git @(1,2)",
        "git @{a=1}",
        "git @Types/x",
        "git @/x",
    ] {
        assert!(refusal(splat).contains("'@'"), "{splat}");
    }
}

#[test]
fn words_of_any_script_are_read_without_slicing_a_character() {
    for command in [
        "ééé",
        "echoé",
        "git é",
        "$envé",
        "$env:é = 'x'; git status",
        "cd é && ls",
        "\u{1F600}",
    ] {
        let _ = parse_line(command);
    }
    assert_eq!(shown("ééé x"), ["First [ééé] [x]"]);
}

/// The fuzz target's properties over generated lines of the characters
/// that matter: no panic, and every command the tokenizer's own.
#[test]
fn generated_lines_never_panic_and_yield_tokenizer_words() {
    use crate::command::tokenize::{to_powershell, tokenize_values};
    const ALPHABET: &[char] = &[
        'a', 'c', 'd', ' ', '&', '|', ';', '>', '<', '2', '1', '*', '$', '\'', '"', '`', '@', '(',
        ')', '\n', '\r', '\u{e9}', '\u{2019}', '\u{201C}', 'E', 'O', 'F', '=', '-', '/', 'n', 'u',
        'l',
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut parsed_lines = 0;
    for _ in 0..20_000 {
        let mut line = String::new();
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        let length = (state >> 59) as usize + 1;
        for _ in 0..length {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            line.push(ALPHABET[(state >> 33) as usize % ALPHABET.len()]);
        }
        // Most generated lines are refused; only a parsed one has commands.
        let Ok(parsed) = parse_line(&line) else {
            continue;
        };
        parsed_lines += 1;
        for step in &parsed.steps {
            let again = tokenize_values(&to_powershell(&step.argv)).unwrap();
            let texts: Vec<_> = again.iter().map(|a| a.text.clone()).collect();
            let want: Vec<_> = step.argv.iter().map(|a| a.text.clone()).collect();
            assert_eq!(texts, want, "{line:?}");
        }
    }
    assert!(
        parsed_lines > 500,
        "only {parsed_lines} generated lines parsed: the test checks too little"
    );
}
