use super::*;

/// Each simple command as its words (dynamic ones marked `~`), with `>`
/// and the written file appended.
fn shown(line: &str, dialect: Dialect) -> Vec<String> {
    simple_commands(line, dialect)
        .iter()
        .map(|c| {
            let words = c.words.iter().map(|w| {
                if w.dynamic {
                    format!("~{}", w.text)
                } else {
                    w.text.clone()
                }
            });
            let writes = c.writes_to.iter().map(|w| format!("> {}", w.text));
            words.chain(writes).collect::<Vec<_>>().join(" ")
        })
        .collect()
}

fn posix(line: &str) -> Vec<String> {
    shown(line, Dialect::Posix)
}

#[test]
fn operators_split_posix_lines_into_commands() {
    for (line, want) in [
        ("git status", vec!["git status"]),
        (
            "cd src && git reset --hard",
            vec!["cd src", "git reset --hard"],
        ),
        (
            "make || rm -rf build; echo done",
            vec!["make", "rm -rf build", "echo done"],
        ),
        ("cargo test 2>&1 | head -50", vec!["cargo test", "head -50"]),
        (
            "sleep 1 & git clean -fdx",
            vec!["sleep 1", "git clean -fdx"],
        ),
        ("a |& b", vec!["a", "b"]),
        ("(cd x; rm -rf y)", vec!["cd x", "rm -rf y"]),
        ("{ rm -rf y; }", vec!["rm -rf y"]),
        ("git status\ngit push -f", vec!["git status", "git push -f"]),
        ("git \\\n  reset --hard", vec!["git reset --hard"]),
        (
            "find . -name x -exec rm {} \\;",
            vec!["find . -name x -exec rm {} ;"],
        ),
        ("echo hi # && rm -rf /", vec!["echo hi"]),
        ("echo a#b", vec!["echo a#b"]),
    ] {
        assert_eq!(posix(line), want, "{line}");
    }
}

#[test]
fn quotes_are_data_and_substitutions_are_commands() {
    for (line, want) in [
        (
            r#"git commit -m "a; rm -rf /""#,
            vec!["git commit -m a; rm -rf /"],
        ),
        ("git commit -m 'x && y'", vec!["git commit -m x && y"]),
        (
            "echo $(git reset --hard)",
            vec!["git reset --hard", "echo ~$(...)"],
        ),
        (
            "echo `git clean -fd`",
            vec!["git clean -fd", "echo ~$(...)"],
        ),
        (
            r#"echo "$(git stash clear)""#,
            vec!["git stash clear", "echo ~$(...)"],
        ),
        (
            "echo $(echo $(rm -rf x))",
            vec!["rm -rf x", "echo ~$(...)", "echo ~$(...)"],
        ),
        ("rm -rf $DIR", vec!["rm -rf ~$DIR"]),
        ("rm -rf ${HOME}/x", vec!["rm -rf ~${HOME}/x"]),
        ("rm -rf *", vec!["rm -rf ~*"]),
        ("rm -rf '*'", vec!["rm -rf *"]),
        ("echo $'a\\'b'", vec!["echo a'b"]),
        ("echo \"a\\\"b\"", vec!["echo a\"b"]),
        (
            "echo 'unterminated && rm -rf x",
            vec!["echo unterminated && rm -rf x"],
        ),
    ] {
        assert_eq!(posix(line), want, "{line}");
    }
}

#[test]
fn redirections_name_their_files_and_streams_are_not_arguments() {
    for (line, want) in [
        (
            "echo x > .git/hooks/pre-commit",
            vec!["echo x > .git/hooks/pre-commit"],
        ),
        ("echo x>>log.txt", vec!["echo x > log.txt"]),
        ("make 2>&1", vec!["make"]),
        ("make 2> err.txt", vec!["make > err.txt"]),
        ("make &> all.txt", vec!["make > all.txt"]),
        ("make >&2", vec!["make"]),
        ("sort < in.txt", vec!["sort"]),
        ("cat <<< 'rm -rf x'", vec!["cat"]),
        ("x >| f", vec!["x > f"]),
    ] {
        assert_eq!(posix(line), want, "{line}");
    }
}

#[test]
fn here_doc_bodies_are_data_but_their_substitutions_run() {
    assert_eq!(
        posix("cat <<EOF > notes.md\nrm -rf /\ngit reset --hard\nEOF\ngit status"),
        ["cat > notes.md", "git status"]
    );
    assert_eq!(
        posix("cat <<-'EOF'\n\t$(git clean -fdx)\n\tEOF\n"),
        ["cat"],
        "a quoted delimiter expands nothing"
    );
    assert_eq!(
        posix("cat <<EOF\n$(git clean -fdx)\nEOF\n"),
        ["cat", "git clean -fdx"]
    );
}

#[test]
fn powershell_lines() {
    let ps = |line| shown(line, Dialect::PowerShell);
    for (line, want) in [
        (
            "Remove-Item -Recurse -Force src; git status",
            vec!["Remove-Item -Recurse -Force src", "git status"],
        ),
        (
            "& 'C:\\Git\\git.exe' reset --hard",
            vec!["C:\\Git\\git.exe reset --hard"],
        ),
        (
            "git log | Select-Object -First 5",
            vec!["git log", "Select-Object -First 5"],
        ),
        (
            "dir | ForEach-Object { Remove-Item -Recurse $_ }",
            vec!["dir", "ForEach-Object", "Remove-Item -Recurse ~$_"],
        ),
        ("echo 'it''s' > out.txt", vec!["echo it's > out.txt"]),
        ("echo \"a`\"b\"", vec!["echo a\"b"]),
        (
            "Write-Output \"$(git clean -fdx)\"",
            vec!["git clean -fdx", "Write-Output ~$(...)"],
        ),
        ("cmd 2>&1 *> all.txt", vec!["cmd > all.txt"]),
        ("<# rm -rf x #> git status", vec!["git status"]),
        (
            "@'\ngit reset --hard\n'@ | Out-File x",
            vec!["\ngit reset --hard", "Out-File x"],
        ),
        (
            "npm test && git push --force",
            vec!["npm test", "git push --force"],
        ),
        (
            "C:\\Tools\\x.exe C:\\a\\b",
            vec!["C:\\Tools\\x.exe C:\\a\\b"],
        ),
    ] {
        assert_eq!(ps(line), want, "{line}");
    }
}

#[test]
fn cmd_lines_have_no_single_quotes() {
    let cmd = |line| shown(line, Dialect::Cmd);
    assert_eq!(
        cmd("echo it's && rd /s /q src"),
        ["echo it's", "rd /s /q src"]
    );
    assert_eq!(
        cmd("echo a^&b & del /s %TEMP%\\x"),
        ["echo a&b", "del /s ~%TEMP%\\x"]
    );
}

#[test]
fn deep_nesting_is_bounded() {
    let deep = "$(".repeat(5_000) + "rm -rf x" + &")".repeat(5_000);
    let commands = simple_commands(&deep, Dialect::Posix);
    assert!(commands.len() <= MAX_DEPTH + 2, "{}", commands.len());
    let garbage: String = ["'", "\"", "`", "$(", "<<", "\\", "{", ")"]
        .concat()
        .repeat(2_000);
    for dialect in [Dialect::Posix, Dialect::PowerShell, Dialect::Cmd] {
        let _ = simple_commands(&garbage, dialect);
    }
}
