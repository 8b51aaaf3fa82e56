use super::*;
use crate::command::shell_line::simple_commands;

fn words(line: &str) -> Vec<Word> {
    simple_commands(line, Dialect::Posix)
        .into_iter()
        .next()
        .map(|c| c.words)
        .unwrap_or_default()
}

/// `README.md` and `src` exist in the working directory; `main` does not.
fn exists(path: &str) -> bool {
    matches!(path, "README.md" | "src" | "src/lib.rs")
}

#[test]
fn losses_users_report_are_found() {
    for line in [
        "git reset --hard",
        "git reset --hard HEAD~3",
        "git -C repo reset --hard origin/main",
        "git checkout -- .",
        "git checkout -- README.md",
        "git checkout main -- src",
        "git checkout .",
        "git checkout README.md",
        "git checkout HEAD src/lib.rs",
        "git checkout -f main",
        "git restore .",
        "git restore --source=HEAD~2 --staged --worktree src",
        "git clean -fd",
        "git clean -fdx",
        "git clean -xdf",
        "git clean --force",
        "git push --force origin main",
        "git push -f",
        "git push --force-with-lease",
        "git push origin +main",
        "git push origin :feature",
        "git push --delete origin feature",
        "git push origin -d feature",
        "git push --mirror backup",
        "git remote add --mirror=push backup https://example.com/r.git",
        "git remote set-url --mirror origin x",
        "git branch -D old",
        "git branch -d -f old",
        "git branch -M main",
        "git branch -f main HEAD~3",
        "git stash clear",
        "git stash drop",
        "git reflog expire --expire=now --all",
        "git gc --prune=now",
        "git prune",
        "git switch -f main",
        "git switch --discard-changes main",
        "git switch -C main",
        "git rm -r src",
        "git rm -rf .",
        "git rm -f notes.txt",
        "git worktree remove --force ../wt",
        "git update-ref -d refs/heads/x",
        "git tag -d v1",
        "git filter-branch --tree-filter x",
        "rm -rf src",
        "rm -r docs",
        "rm -Rf ~/project",
        "rm --recursive src",
        "rm -rf *",
        "rm -rf $DIR",
        "rm -rf build src",
        "cmake -E rm -rf src",
        "cmake -E remove_directory src",
        "find . -name '*.c' -delete",
        "Remove-Item -Recurse -Force src",
        "rm -r -Force src",
        "rd /s /q src",
        "rmdir /S src",
        "del /s docs",
    ] {
        assert!(loss(&words(line), &exists).is_some(), "{line}");
    }
}

#[test]
fn ordinary_work_is_not_a_loss() {
    for line in [
        "git status",
        "git reset",
        "git reset HEAD~1",
        "git reset --soft HEAD~1",
        "git reset --keep main",
        "git checkout main",
        "git checkout -b feature",
        "git checkout -b fix origin/main",
        "git checkout feature/x",
        "git restore --staged README.md",
        "git clean -n",
        "git clean -nfd",
        "git clean --dry-run -f",
        "git push",
        "git push origin main",
        "git remote add origin https://example.com/r.git",
        "git push -u origin feature",
        "git push origin HEAD:refs/for/main",
        "git push --tags",
        "git branch -d merged",
        "git branch feature",
        "git stash",
        "git stash pop",
        "git stash list",
        "git reflog",
        "git gc",
        "git gc --prune=never",
        "git prune -n",
        "git switch main",
        "git switch -c feature",
        "git rm --cached -r build",
        "git rm notes.txt",
        "git worktree remove ../wt",
        "git tag v1",
        "git log --force",
        "git commit -m 'git reset --hard'",
        "rm notes.txt",
        "rm -f notes.txt",
        "rm -rf node_modules",
        "rm -rf build/ dist target",
        "rm -rf ./node_modules .venv __pycache__",
        "rmdir empty",
        "cmake -E rm -rf build",
        "cmake -E remove notes.txt",
        "cmake --build build",
        "Remove-Item notes.txt",
        "Remove-Item -Force notes.txt",
        "Remove-Item -Recurse node_modules",
        "rd /s /q build",
        "find . -name '*.c'",
        "cargo clean",
    ] {
        assert_eq!(loss(&words(line), &exists), None, "{line}");
    }
}

#[test]
fn losses_say_what_is_lost() {
    assert_eq!(
        loss(&words("git clean -fdx"), &exists).unwrap(),
        "git clean deletes untracked files, which git never had"
    );
    assert_eq!(
        loss(&words("rm -rf build src docs"), &exists).unwrap(),
        "it deletes src, docs and everything in it"
    );
    assert_eq!(
        loss(&words("cmake -E rm -rf src"), &exists).unwrap(),
        "cmake -E rm deletes src and everything in it"
    );
}

#[test]
fn writes_to_trust_files_are_found() {
    for line in [
        "echo x > .git/hooks/pre-commit",
        "cat evil >> .git/config",
        "printf x 2> .vscode/tasks.json",
        "tee .claude/settings.json",
        "tee -a notes.txt .mcp.json",
        "cp hook.sh .git/hooks/post-checkout",
        "mv x.json .vscode/tasks.json",
        "cp -t .git/hooks a b",
        "ln -s /tmp/x .git/hooks/pre-push",
        "Set-Content .claude/settings.json x",
        "Copy-Item a -Destination .git/hooks/pre-commit",
        "touch .git/hooks/x",
    ] {
        let command = &simple_commands(line, Dialect::Posix)[0];
        assert!(trust_write(command, "").is_some(), "{line}");
    }
    for line in [
        "echo x > notes.txt",
        "cp .git/config backup.txt",
        "cat .vscode/settings.json",
        "tee log.txt",
        "cp a .github/workflows/ci.yml",
        "echo >> .gitignore",
        "git config user.name x",
    ] {
        let command = &simple_commands(line, Dialect::Posix)[0];
        assert_eq!(trust_write(command, ""), None, "{line}");
    }
}

#[test]
fn wrappers_and_shells_name_the_commands_they_run() {
    let first = |line: &str| nested(&words(line), None);
    let command = |line: &str| Nested::Command(words(line));
    assert_eq!(
        first("sudo -u root git reset --hard"),
        [command("git reset --hard")]
    );
    assert_eq!(first("env -i FOO=1 rm -rf src"), [command("rm -rf src")]);
    assert_eq!(
        first("timeout 60 git clean -fdx"),
        [command("git clean -fdx")]
    );
    assert_eq!(first("nice -n 5 nohup make"), [command("nohup make")]);
    assert_eq!(first("command git push -f"), [command("git push -f")]);
    assert_eq!(first("command -v git"), []);
    assert_eq!(
        first("bash -c 'git reset --hard && make'"),
        [Nested::Script(
            "git reset --hard && make".into(),
            Dialect::Posix
        )]
    );
    assert_eq!(
        first("sh -ec 'rm -rf src'"),
        [Nested::Script("rm -rf src".into(), Dialect::Posix)]
    );
    assert_eq!(first("bash script.sh"), []);
    assert_eq!(
        first("eval git stash clear"),
        [Nested::Script("git stash clear".into(), Dialect::Posix)]
    );
    assert_eq!(
        first("pwsh -NoProfile -c Remove-Item -Recurse src"),
        [Nested::Script(
            "Remove-Item -Recurse src".into(),
            Dialect::PowerShell
        )]
    );
    assert_eq!(first("powershell -enc ZQBjAGgAbwA="), [Nested::Encoded]);
    assert_eq!(first("pwsh -File build.ps1"), []);
    assert_eq!(
        first("cmd /c rd /s /q src"),
        [Nested::Script("rd /s /q src".into(), Dialect::Cmd)]
    );
    let found = first("find . -type d -exec rm -rf {} +");
    let Nested::Command(inner) = &found[0] else {
        panic!("{found:?}")
    };
    assert!(loss(inner, &exists).is_some(), "{inner:?}");
    let piped = first("xargs -n 1 rm -rf");
    let Nested::Command(inner) = &piped[0] else {
        panic!("{piped:?}")
    };
    assert!(loss(inner, &exists).is_some(), "{inner:?}");
}
