use super::*;
use wamcp_policy::command::rules::RuleSet;

/// The first command of `command` as the grammars posture checks it.
fn check_as(
    command: &str,
    rules: &RuleSet,
    approval: Approval,
    roots: &[PathBuf],
    place: &Path,
) -> Result<Checked, Refusal> {
    let judge = Judge {
        rules,
        roots,
        posture: Posture::Grammars,
        search: &ProgramSearch::distrusting(roots.to_vec()),
        journaled: &[],
        git: &Default::default(),
        egress: None,
    };
    check(command, &judge, approval, place)
        .map(|line| line.steps.into_iter().next().unwrap().checked)
}

#[test]
fn the_policy_refuses_in_a_fixed_order() {
    let rules = RuleSet::builtin();
    let kind =
        |c: &str| outright(check_as(c, &rules, Approval::NotAsked, &[], Path::new("."))).kind;
    assert_eq!(kind(""), ErrorType::InvalidCommand);
    assert_eq!(kind(&"git ".repeat(1001)), ErrorType::CommandNotAllowed);
    assert_eq!(kind("git status; calc"), ErrorType::CommandNotAllowed);
    assert_eq!(kind("calc"), ErrorType::CommandNotAllowed);
    assert_eq!(kind("python -c 'import os'"), ErrorType::CommandNotAllowed);
    assert_eq!(kind("./git.cmd status"), ErrorType::CommandNotAllowed);
    assert_eq!(
        kind("C:\\proj\\cmake.bat --build ."),
        ErrorType::CommandNotAllowed
    );
    assert_eq!(kind("tools/python script.py"), ErrorType::CommandNotAllowed);
    let payload = "SUVYIChOZXctT2JqZWN0IE5ldC5XZWJDbGllbnQpLkRvd25sb2FkU3RyaW5nKCdodHRwOi8veCcp";
    assert_eq!(
        kind(&format!("git commit -m '{payload}'")),
        ErrorType::CommandNotAllowed
    );
    let message = outright(check_as(
        "git log $(whoami)",
        &rules,
        Approval::NotAsked,
        &[],
        Path::new("."),
    ))
    .message;
    assert_eq!(
        message,
        "The command contains '$', a variable or subexpression (at character 9)."
    );
}

#[test]
fn commands_that_destroy_work_ask_and_run_once_approved() {
    let rules = RuleSet::builtin();
    let dir = tempfile_dir();
    std::fs::write(dir.join("README.md"), "x").unwrap();
    for command in [
        "git reset --hard",
        "git clean -fdx",
        "git checkout -- .",
        "git checkout README.md",
        "git push --force origin main",
        "git branch -D old",
        "git stash clear",
        "cmake -E rm -rf src",
    ] {
        let Err(Refusal::NeedsApproval(question)) =
            check_as(command, &rules, Approval::NotAsked, &[], &dir)
        else {
            panic!("{command} is not asked about");
        };
        assert_eq!(question.rule(), LOSES_WORK, "{command}");
        let error = Refusal::NeedsApproval(question).into_error();
        assert!(
            error.message.starts_with("The command cannot be undone ("),
            "{command}: {}",
            error.message
        );
        assert!(
            check_as(command, &rules, Approval::Granted, &[], &dir).is_ok(),
            "{command}"
        );
    }
    for command in [
        "git checkout main",
        "git status",
        "cmake -E rm -rf build",
        "git push",
    ] {
        assert!(
            check_as(command, &rules, Approval::NotAsked, &[], &dir).is_ok(),
            "{command}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn allowed_commands_become_exact_argv() {
    let rules = RuleSet::builtin();
    let checked = check_as(
        r#"git commit -m "a; b | c" --author='A <a@b>'"#,
        &rules,
        Approval::NotAsked,
        &[],
        Path::new("."),
    )
    .unwrap();
    assert_eq!(checked.program, "git");
    assert_eq!(
        checked.args,
        ["commit", "-m", "a; b | c", "--author=A <a@b>"]
    );
    assert!(
        checked
            .env
            .contains(&("GIT_TERMINAL_PROMPT".into(), "0".into()))
    );
}

#[test]
fn a_program_named_by_path_must_exist_outside_every_root() {
    let dir = tempfile_dir();
    let (tools, root) = (dir.join("tools"), dir.join("root"));
    for d in [&tools, &root] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("git.exe"), "").unwrap();
    }
    let rules = RuleSet::builtin();
    let roots = vec![root.clone()];
    let quoted = |p: &Path| format!("'{}' status", p.join("git.exe").display());
    let checked = check_as(&quoted(&tools), &rules, Approval::NotAsked, &roots, &dir).unwrap();
    assert_eq!(checked.program, tools.join("git.exe").display().to_string());
    assert_eq!(checked.args, ["status"]);
    // Forward slashes (as people write Windows paths too) and double quotes.
    let forward = tools
        .join("git.exe")
        .display()
        .to_string()
        .replace('\\', "/");
    let checked = check_as(
        &format!("\"{forward}\" status"),
        &rules,
        Approval::NotAsked,
        &roots,
        &dir,
    )
    .unwrap();
    assert_eq!(checked.program, tools.join("git.exe").display().to_string());
    for refused in [
        "'//server/share/git.exe' status".to_string(),
        "'\\\\server\\share\\git.exe' status".to_string(),
        quoted(&root),
        quoted(&dir.join("missing")),
        "tools/git.exe status".to_string(),
    ] {
        let error = outright(check_as(&refused, &rules, Approval::NotAsked, &roots, &dir));
        assert_eq!(error.kind, ErrorType::CommandNotAllowed, "{refused}");
    }
    // The grammar still applies to a program named by path.
    let attack = format!("'{}' -c alias.x=!calc x", tools.join("git.exe").display());
    assert!(check_as(&attack, &rules, Approval::NotAsked, &roots, &dir).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn working_directories_must_be_inside_a_root() {
    let dir = tempfile_dir();
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let roots = vec![root.clone()];
    assert_eq!(
        working_directory(Some("root/sub"), "cwd", &dir, &roots).unwrap(),
        root.join("sub")
    );
    assert_eq!(
        working_directory(None, "cwd", &dir, &roots).unwrap(),
        root,
        "falls back to the first root"
    );
    assert_eq!(
        working_directory(None, "cwd", &root.join("sub"), &roots).unwrap(),
        root.join("sub")
    );
    let err = working_directory(Some("."), "cwd", &dir, &roots).unwrap_err();
    assert_eq!(err.kind, ErrorType::WorkingDirectoryNotAllowed);
    let err = working_directory(Some("root/../"), "cwd", &dir, &roots).unwrap_err();
    assert_eq!(err.kind, ErrorType::WorkingDirectoryNotAllowed);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let err = working_directory(Some("root/.git"), "cwd", &dir, &roots).unwrap_err();
    assert_eq!(err.kind, ErrorType::WorkingDirectoryNotAllowed);
    let err = working_directory(Some("."), "cwd", &dir, &roots).unwrap_err();
    assert!(err.message.starts_with("cwd '"), "{}", err.message);
    // With no project, whatever folder is named or exists: one refusal.
    for asked in [None, Some("root"), Some(".")] {
        assert_eq!(
            working_directory(asked, "cwd", &dir, &[]).unwrap_err().kind,
            ErrorType::NoProjectRoot
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The outright refusal `checked` must be.
fn outright(checked: Result<Checked, Refusal>) -> ToolError {
    match checked {
        Err(Refusal::Refused(error)) => error,
        other => panic!("not refused outright: {other:?}"),
    }
}

/// A loss runs unasked only in a root the undo journal keeps whole, from
/// a place inside it and on paths that stay there: not with the journal
/// off, not in a root holding a file the journal could not keep (or the
/// download folder, which it does not record), not on a remote.
#[test]
fn a_loss_runs_unasked_only_where_the_journal_keeps_everything() {
    let rules = RuleSet::builtin();
    let dir = tempfile_dir().join("journaled");
    let (kept, other) = (dir.join("kept"), dir.join("other"));
    for root in [&kept, &other] {
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("README.md"), "x").unwrap();
    }
    let roots = [kept.clone(), other.clone()];
    let search = ProgramSearch::distrusting(roots.to_vec());
    let asks = |command: &str, place: &Path, journaled: &[PathBuf]| {
        let judge = Judge {
            rules: &rules,
            roots: &roots,
            posture: Posture::Grammars,
            search: &search,
            journaled,
            git: &Default::default(),
            egress: None,
        };
        match check(command, &judge, Approval::NotAsked, place) {
            Ok(_) => false,
            Err(Refusal::NeedsApproval(question)) if question.rule() == LOSES_WORK => true,
            Err(other) => panic!("{command}: {other:?}"),
        }
    };
    let journaled = [kept.clone()];
    for command in [
        "git reset --hard",
        "git clean -fdx",
        "git checkout -- README.md",
        "git branch -D old",
        "cmake -E rm -rf src",
    ] {
        assert!(!asks(command, &kept, &journaled), "{command}");
        assert!(asks(command, &other, &journaled), "{command}");
        assert!(asks(command, &kept, &[]), "{command}");
    }
    assert!(asks("cmake -E rm -rf ../other/src", &kept, &journaled));
    assert!(asks("git -C ../other reset --hard", &kept, &journaled));
    assert!(asks("cmake -E rm -rf ~/src", &kept, &journaled));
    assert!(asks("cmake -E rm -rf '~\\src'", &kept, &journaled));
    assert!(asks("git push --force origin main", &kept, &journaled));
    // A kept root inside a larger repository, or a work tree whose git
    // folder is elsewhere: git's losses reach outside it.
    let repo = dir.join("repo");
    let app = repo.join("app");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&app).unwrap();
    let linked = dir.join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::fs::write(linked.join(".git"), "gitdir: ../repo/.git/worktrees/l\n").unwrap();
    for root in [&app, &linked] {
        let journaled = [root.clone()];
        assert!(
            asks("git reset --hard", root, &journaled),
            "{}",
            root.display()
        );
        assert!(asks("git branch -D old", root, &journaled));
        assert!(!asks("cmake -E rm -rf src", root, &journaled));
    }
    let journaled = [repo.clone()];
    assert!(!asks("git reset --hard", &app, &journaled));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "wamcp-exec-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dunce::canonicalize(dir).unwrap()
}

/// `path` as the checks name a file they resolved.
fn canon(path: &Path) -> String {
    dunce::canonicalize(path).unwrap().display().to_string()
}

/// An installed npm package's program as npm makes it here (a `.cmd`
/// shim on Windows).
fn bin(name: &str) -> String {
    let suffix = if cfg!(windows) { ".cmd" } else { "" };
    format!("node_modules/.bin/{name}{suffix}")
}

/// A project root with a built program, a venv's python and an installed
/// npm package, as the confined posture finds them.
struct Project {
    dir: PathBuf,
    root: PathBuf,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile_dir();
        let root = dir.join("proj");
        for file in [
            "build/app",
            ".venv/bin/python",
            &bin("tsc"),
            "node_modules/@scope/tool/package.json",
            &bin("scoped-tool"),
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
        }
        std::fs::write(
            root.join("node_modules/@scope/tool/package.json"),
            r#"{"bin": {"scoped-tool": "cli.js"}}"#,
        )
        .unwrap();
        Project { dir, root }
    }

    fn check(
        &self,
        posture: Posture,
        command: &str,
        approval: Approval,
    ) -> Result<CheckedLine, Refusal> {
        let rules = RuleSet::builtin();
        let roots = [self.root.clone()];
        let judge = Judge {
            rules: &rules,
            roots: &roots,
            posture,
            search: &ProgramSearch::distrusting(roots.to_vec()),
            journaled: &[],
            git: &Default::default(),
            egress: None,
        };
        check(command, &judge, approval, &self.root)
    }

    fn confined(&self, command: &str) -> Checked {
        match self.check(Posture::Confined, command, Approval::NotAsked) {
            Ok(line) => line.steps.into_iter().next().unwrap().checked,
            Err(e) => panic!("{command}: {:?}", e.into_error().message),
        }
    }

    fn refused(&self, posture: Posture, command: &str) -> ToolError {
        match self.check(posture, command, Approval::NotAsked) {
            Err(Refusal::Refused(error)) => error,
            other => panic!("{command} is not refused: {other:?}"),
        }
    }

    fn asks(&self, posture: Posture, command: &str) -> bool {
        matches!(
            self.check(posture, command, Approval::NotAsked),
            Err(Refusal::NeedsApproval(_))
        )
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn confined_any_program_runs_without_network_and_grammars_refuse_it() {
    let p = Project::new();
    for command in [
        "make -j4",
        "python -c 'print(1)'",
        "cmake -DCMAKE_PREFIX_PATH=/opt/qt -S . -B build",
        "pnpm test",
    ] {
        let checked = p.confined(command);
        assert!(!checked.network, "{command}");
        assert!(checked.local_programs, "{command}");
        assert!(
            !p.confined("git status").local_programs,
            "a grammar's program is never the project's"
        );
        assert!(
            p.check(Posture::Grammars, command, Approval::NotAsked)
                .is_err(),
            "{command}"
        );
    }
    assert_eq!(
        p.refused(Posture::Grammars, "make -j4").details["posture"],
        "grammars"
    );
    // What the grammars allow keeps its network, and its trusted search.
    let fetch = p.confined("git fetch origin");
    assert!(fetch.network && !fetch.local_programs);
}

#[test]
fn confined_the_projects_own_programs_run_and_never_get_the_network() {
    let p = Project::new();
    let app = p.confined("./build/app --all");
    assert_eq!(app.program, canon(&p.root.join("build/app")));
    assert_eq!(app.args, ["--all"]);
    let pip = p.confined(".venv/bin/python -m pip install requests");
    assert!(
        !pip.network,
        "a program in the project borrows no grammar's network"
    );
    let tsc = p.confined("npx tsc --noEmit");
    assert_eq!(tsc.program, canon(&p.root.join(bin("tsc"))));
    assert_eq!(tsc.args, ["--noEmit"]);
    assert!(!tsc.network);
    let scoped = p.confined("npm exec @scope/tool -- --fix");
    assert_eq!(scoped.program, canon(&p.root.join(bin("scoped-tool"))));
    assert_eq!(scoped.args, ["--fix"]);
    // A package that is not installed is fetched code: judged as written.
    assert!(
        p.check(Posture::Confined, "npx cowsay hi", Approval::NotAsked)
            .is_err()
    );
    for command in ["./build/app", ".venv/bin/python x.py"] {
        assert_eq!(
            p.refused(Posture::Grammars, command).kind,
            ErrorType::CommandNotAllowed
        );
    }
    assert!(p.asks(Posture::Grammars, "npx tsc"));
}

#[test]
fn confined_effects_are_still_judged_through_nested_commands() {
    let p = Project::new();
    std::fs::create_dir_all(p.root.join("src")).unwrap();
    for command in [
        "sh -c 'git clean -fdx'",
        "bash -c 'rm -rf src'",
        "git reset --hard",
    ] {
        assert!(p.asks(Posture::Confined, command), "{command}");
    }
    for command in [
        "cp x .git/hooks/pre-commit",
        "tee .vscode/tasks.json",
        "sudo make install",
    ] {
        assert_eq!(
            p.refused(Posture::Confined, command).kind,
            ErrorType::CommandNotAllowed,
            "{command}"
        );
    }
    // A command that needs the network keeps every objection of its grammar.
    assert!(
        p.check(
            Posture::Confined,
            "git push --upload-pack=x origin",
            Approval::NotAsked
        )
        .is_err()
    );
}

#[test]
fn variables_are_judged_by_what_the_command_may_reach() {
    let p = Project::new();
    let node = p.confined("NODE_OPTIONS=--require=./x.js node app.js");
    assert!(
        node.env
            .contains(&("NODE_OPTIONS".into(), "--require=./x.js".into()))
    );
    assert_eq!(
        p.confined("CI=1 git status").env.last(),
        Some(&("CI".into(), "1".into()))
    );
    for command in [
        "PATH=/tmp make",
        "LD_PRELOAD=x.so make",
        "GIT_SSH_COMMAND=x git fetch",
    ] {
        p.refused(Posture::Confined, command);
    }
    // Unconfined, or with the network, only plain settings.
    p.refused(
        Posture::Grammars,
        "NODE_OPTIONS=--require=./x.js node app.js",
    );
    p.refused(Posture::Confined, "PIP_INDEX_URL=http://x git fetch");
    assert!(
        p.check(Posture::Grammars, "CI=1 git status", Approval::NotAsked)
            .is_ok()
    );
}

#[test]
fn a_line_is_refused_whole_and_asked_once() {
    let p = Project::new();
    // Nothing runs when any command is refused, even after one that asks.
    p.refused(Posture::Grammars, "git reset --hard && calc");
    assert!(p.asks(Posture::Grammars, "git status && git reset --hard"));
    let line = p
        .check(
            Posture::Grammars,
            "git status && git reset --hard",
            Approval::Granted,
        )
        .unwrap();
    assert_eq!(line.steps.len(), 2);
    assert!(!line.plain);
    assert!(
        p.check(Posture::Grammars, "git status", Approval::NotAsked)
            .unwrap()
            .plain
    );
}

#[test]
fn refusals_name_the_tool_that_does_the_job() {
    let p = Project::new();
    for (command, names) in [
        ("ls -la", "list_directory"),
        ("cat README.md", "read_file"),
        ("grep -r TODO src", "search_files"),
        ("find . -name '*.rs'", "find_files"),
        ("Remove-Item x", "deletes nothing"),
    ] {
        let error = p.refused(Posture::Grammars, command);
        assert!(
            error.recovery.iter().any(|r| r.contains(names)),
            "{command}: {:?}",
            error.recovery
        );
    }
    let error = p.refused(Posture::Grammars, "cd src");
    assert!(
        error.message.contains("working_directory"),
        "{}",
        error.message
    );
}

#[cfg(unix)]
#[test]
fn wildcards_are_expanded_before_they_are_judged() {
    let p = Project::new();
    for file in ["a.o", "b.o", "-rf", ".hidden.o"] {
        std::fs::write(p.root.join("build").join(file), "").unwrap();
    }
    let rm = p.confined("rm build/*.o");
    assert_eq!(rm.args, ["build/a.o", "build/b.o"]);
    // A pattern that matches nothing stays as written, as Bash leaves it.
    assert_eq!(p.confined("ls *.none").args, ["*.none"]);
    // A leading ~ is the home folder, as Bash reads it.
    let home = std::env::var("HOME").unwrap();
    assert_eq!(
        p.confined("ls ~ ~/x '~/y' a~").args,
        [home.clone(), format!("{home}/x"), "~/y".into(), "a~".into()]
    );
    // Quoted, it is the program's to expand.
    assert_eq!(p.confined("find . -name '*.o'").args, [".", "-name", "*.o"]);
    // A file named like an option is judged as one: `rm -rf` asks.
    let planted = p.check(Posture::Confined, "cd build && rm *", Approval::NotAsked);
    assert!(
        matches!(planted, Err(Refusal::NeedsApproval(_))),
        "{planted:?}"
    );
}

#[test]
fn a_loss_anywhere_is_the_lines_question() {
    let p = Project::new();
    let asked = p.check(
        Posture::Confined,
        "npx cowsay hi; git reset --hard",
        Approval::NotAsked,
    );
    match asked {
        Err(Refusal::NeedsApproval(question)) => assert_eq!(question.rule(), LOSES_WORK),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_program_in_any_place_commands_write_never_gets_the_network() {
    let p = Project::new();
    let shared = p.dir.join("shm");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("git"), "").unwrap();
    let rules = RuleSet::builtin();
    let roots = [p.root.clone()];
    let search =
        ProgramSearch::distrusting(vec![p.root.clone(), dunce::canonicalize(&shared).unwrap()]);
    let command = format!("'{}' fetch origin", shared.join("git").display());
    for posture in [Posture::Confined, Posture::Grammars] {
        let judge = Judge {
            rules: &rules,
            roots: &roots,
            posture,
            search: &search,
            journaled: &[],
            git: &Default::default(),
            egress: None,
        };
        match check(&command, &judge, Approval::NotAsked, &p.root) {
            Ok(line) => {
                assert_eq!(posture, Posture::Confined);
                assert!(!line.steps[0].checked.network);
            }
            Err(refusal) => assert_eq!(posture, Posture::Grammars, "{refusal:?}"),
        }
    }
}
