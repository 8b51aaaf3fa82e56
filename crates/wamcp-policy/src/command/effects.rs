//! What a command does to the user's work, judged by its effect rather than
//! by which options its program has.
//!
//! Three questions, each a table below:
//!
//! - [`loss`]: does it destroy work or history that nothing brings back —
//!   uncommitted changes (`git reset --hard`, `git checkout -- .`), untracked
//!   files (`git clean -f`, `rm -rf src`), branches, stashes, reflogs, or
//!   commits on a remote (`git push --force`)? These are the reports that
//!   fill agents' trackers under the `data-loss` label.
//! - [`trust_write`]: does it write a file that runs programs later, outside
//!   any sandbox (`.git/hooks`, `.vscode/tasks.json`, `.claude/settings.json`)?
//! - [`nested`]: which commands does it run in turn (`sudo x`, `bash -c '...'`,
//!   `find -exec`, `xargs`), so that those are judged too?
//!
//! Words are [`shell_line::Word`]s: a word the shell fills in at run time is
//! `dynamic`, and a target that cannot be known is never assumed harmless.

use super::shell_line::{Dialect, SimpleCommand, Word};
use crate::write_rules::names_trust_location;

/// Folders a build or a package manager makes again: deleting one loses no
/// work, so `rm -rf node_modules` asks nothing.
const REGENERATED: &[&str] = &[
    "node_modules",
    "target",
    "build",
    "builds",
    "dist",
    "out",
    "bin",
    "obj",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
    ".gradle",
    ".cache",
    "coverage",
    "cmakefiles",
    "cmake-build-debug",
    "cmake-build-release",
];

/// The program as tables name it: the last path component, lower-cased,
/// without an executable suffix.
fn program(word: &Word) -> String {
    super::rules::program_name(&word.text)
}

/// The work `words` (a program and its arguments) would destroy beyond
/// recovery, as a reason the user can read; `None` when it destroys none
/// that these tables know of. `exists` says whether a relative path names
/// something in the command's working directory (it tells `git checkout
/// README.md`, which discards that file's changes, from `git checkout
/// main`).
pub fn loss(words: &[Word], exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let (first, args) = words.split_first()?;
    match program(first).as_str() {
        "git" => git_loss(args, exists),
        "rm" | "remove-item" | "ri" | "del" | "erase" | "rd" | "rmdir" => recursive_delete(args)
            .map(|targets| format!("it deletes {targets} and everything in it")),
        "cmake" => cmake_loss(args),
        "find" if args.iter().any(|a| a.text == "-delete") => {
            Some("find -delete removes every file it matches".into())
        }
        _ => None,
    }
}

/// Options that say what they mean: `-x` clusters (`-fdx`) and long names.
struct Options<'a> {
    args: &'a [Word],
}

impl<'a> Options<'a> {
    /// The arguments before `--`.
    fn options(&self) -> impl Iterator<Item = &'a str> {
        self.args
            .iter()
            .map(|a| a.text.as_str())
            .take_while(|a| *a != "--")
    }

    /// A long option, alone or as `--name=value`.
    fn long(&self, name: &str) -> bool {
        self.options()
            .any(|a| a == name || a.strip_prefix(name).is_some_and(|v| v.starts_with('=')))
    }

    /// A long option by its prefix (`--force` for `--force-with-lease`).
    fn long_prefix(&self, prefix: &str) -> bool {
        self.options().any(|a| a.starts_with(prefix))
    }

    /// A single-letter option, alone or in a cluster (`-f`, `-fdx`).
    fn short(&self, letter: char) -> bool {
        self.options().any(|a| {
            a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().all(|c| c.is_ascii_alphabetic())
                && a[1..].contains(letter)
        })
    }

    fn either(&self, letter: char, name: &str) -> bool {
        self.short(letter) || self.long(name)
    }

    /// Arguments that are not options (everything after `--` included).
    fn positionals(&self) -> Vec<&'a Word> {
        let mut after_dashes = false;
        self.args
            .iter()
            .filter(|a| {
                if after_dashes {
                    return true;
                }
                if a.text == "--" {
                    after_dashes = true;
                    return false;
                }
                !a.text.starts_with('-') || a.text == "-"
            })
            .collect()
    }

    fn has_dashes(&self) -> bool {
        self.args.iter().any(|a| a.text == "--")
    }
}

/// git's options before the subcommand that take the next word as value.
const GIT_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
];

fn git_loss(args: &[Word], exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        if GIT_VALUE_OPTIONS.contains(&arg.text.as_str()) {
            at += 2;
        } else if arg.text.starts_with('-') {
            at += 1;
        } else {
            break;
        }
    }
    let sub = args.get(at)?.text.as_str();
    let rest = Options {
        args: &args[at + 1..],
    };
    let why = |what: &str| Some(format!("git {sub} {what}"));
    match sub {
        "reset" if rest.long("--hard") => why("--hard discards every uncommitted change"),
        "checkout" => checkout_loss(&rest, exists).and_then(why),
        "restore" => {
            let staged_only = rest.either('S', "--staged") && !rest.either('W', "--worktree");
            (!staged_only).then(|| "git restore overwrites changes in the work tree".to_string())
        }
        "clean" if rest.either('f', "--force") && !rest.either('n', "--dry-run") => {
            why("deletes untracked files, which git never had")
        }
        "push" if push_rewrites(&rest) => why("rewrites or deletes history on the remote"),
        "branch" if branch_loss(&rest) => why("deletes or overwrites a branch"),
        "stash" if matches!(first_word(&rest), Some("clear" | "drop")) => {
            why("deletes stashed work")
        }
        "reflog" if matches!(first_word(&rest), Some("expire" | "delete")) => {
            why("deletes the record that brings lost commits back")
        }
        "gc" if rest
            .options()
            .any(|a| a.starts_with("--prune=") && a != "--prune=never") =>
        {
            why("deletes unreachable commits now")
        }
        "prune" if !rest.either('n', "--dry-run") => why("deletes unreachable commits"),
        "switch" if rest.either('f', "--force") || rest.long("--discard-changes") => {
            why("discards local changes")
        }
        "switch" if rest.either('C', "--force-create") => why("overwrites a branch"),
        "rm" if !rest.long("--cached")
            && !rest.either('n', "--dry-run")
            && (rest.short('r') || rest.either('f', "--force")) =>
        {
            why("deletes files from the work tree")
        }
        "worktree" if first_word(&rest) == Some("remove") && rest.either('f', "--force") => {
            why("remove --force deletes a work tree with its changes")
        }
        "update-ref" if rest.short('d') => why("-d deletes a ref"),
        "tag" if rest.either('d', "--delete") => why("deletes a tag"),
        "filter-branch" | "filter-repo" => why("rewrites the repository's history"),
        _ => None,
    }
}

fn first_word<'a>(rest: &Options<'a>) -> Option<&'a str> {
    rest.positionals().first().map(|w| w.text.as_str())
}

fn checkout_loss(rest: &Options<'_>, exists: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    if rest.either('f', "--force") {
        return Some("--force discards local changes");
    }
    if rest.has_dashes() && rest.args.last().is_some_and(|a| a.text != "--") {
        return Some("-- overwrites the named files with the committed ones");
    }
    if rest.long("--pathspec-from-file") {
        return Some("overwrites the listed files with the committed ones");
    }
    // Making a branch names a start point, not files.
    if rest.short('b') || rest.short('B') || rest.long("--orphan") {
        return None;
    }
    let positionals = rest.positionals();
    let restores = match positionals.as_slice() {
        [] => false,
        [one] => one.text == "." || one.dynamic || exists(&one.text),
        _ => true,
    };
    restores.then_some("overwrites the named files with the committed ones")
}

fn push_rewrites(rest: &Options<'_>) -> bool {
    rest.short('f')
        || rest.long_prefix("--force")
        || rest.either('d', "--delete")
        || rest.long("--mirror")
        || rest.long("--prune")
        || rest
            .positionals()
            .iter()
            .skip(1)
            .any(|r| r.text.starts_with('+') || r.text.starts_with(':'))
}

fn branch_loss(rest: &Options<'_>) -> bool {
    let force = rest.either('f', "--force");
    rest.short('D')
        || rest.short('M')
        || rest.short('C')
        || (force && (rest.either('d', "--delete") || rest.either('m', "--move")))
        || (force && !rest.positionals().is_empty())
}

/// A recursive delete's targets, shown, when one of them may hold work.
fn recursive_delete(args: &[Word]) -> Option<String> {
    let recursive = args.iter().any(|a| {
        let t = a.text.as_str();
        let lower = t.to_ascii_lowercase();
        // rm's letters (`-rf`), PowerShell's `-Recurse` by any prefix,
        // cmd's `/s`.
        (t.len() > 1
            && t.starts_with('-')
            && !t.starts_with("--")
            && t[1..].chars().all(|c| "dfirRvI".contains(c))
            && t[1..].contains(['r', 'R']))
            || t == "--recursive"
            || (lower.len() > 1 && "-recurse".starts_with(&lower))
            || lower == "/s"
    });
    if !recursive {
        return None;
    }
    // Options are `-x` words and cmd's `/x`; `/home/x` is a path. Quotes
    // do not matter: `rm '-rf' x` gives rm the same option.
    let is_option =
        |a: &Word| a.text.starts_with('-') || (a.text.len() == 2 && a.text.starts_with('/'));
    let targets: Vec<&Word> = args.iter().filter(|a| !is_option(a)).collect();
    risky_targets(&targets)
}

/// The targets shown, unless every one is a folder a build makes again.
fn risky_targets(targets: &[&Word]) -> Option<String> {
    let risky: Vec<&str> = targets
        .iter()
        .filter(|t| !regenerated(t))
        .map(|t| t.text.as_str())
        .collect();
    (!risky.is_empty()).then(|| risky.join(", "))
}

/// Whether deleting `target` loses nothing a build would not make again.
fn regenerated(target: &Word) -> bool {
    if target.dynamic {
        return false;
    }
    let last = target
        .text
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    REGENERATED.contains(&last.as_str())
}

fn cmake_loss(args: &[Word]) -> Option<String> {
    let at = args.iter().position(|a| a.text == "-E")?;
    let (tool, rest) = args[at + 1..].split_first()?;
    let targets = match tool.text.as_str() {
        "rm" => recursive_delete(rest)?,
        "remove_directory" => risky_targets(&rest.iter().collect::<Vec<_>>())?,
        _ => return None,
    };
    Some(format!(
        "cmake -E {} deletes {targets} and everything in it",
        tool.text
    ))
}

/// Programs that write the files named as their arguments, and which of
/// those arguments they write.
enum Writes {
    /// Every argument that is not an option (`tee a b`, `touch x`).
    All,
    /// The last one (`cp src dst`), or the one after `-t` / `-Destination`.
    Last,
}

fn writer(program: &str) -> Option<Writes> {
    Some(match program {
        "tee" | "touch" | "truncate" | "set-content" | "add-content" | "out-file" | "new-item"
        | "sc" | "ac" | "ni" => Writes::All,
        "cp" | "mv" | "ln" | "install" | "rsync" | "copy" | "move" | "xcopy" | "robocopy"
        | "copy-item" | "move-item" | "cpi" | "mi" | "cpp" | "mp" => Writes::Last,
        _ => return None,
    })
}

/// Why `command` writes a file that runs programs later, if it does: a
/// redirection into one, or a program that writes its arguments.
pub fn trust_write(command: &SimpleCommand) -> Option<String> {
    let reached =
        |word: &Word| names_trust_location(&word.text).map(|why| (word.text.clone(), why));
    let found = command.writes_to.iter().find_map(reached).or_else(|| {
        let (first, args) = command.words.split_first()?;
        let named: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
        match writer(&program(first))? {
            Writes::All => named.into_iter().find_map(reached),
            Writes::Last => {
                let target = args
                    .iter()
                    .position(|a| {
                        let t = a.text.to_ascii_lowercase();
                        t == "-t" || t == "--target-directory" || t == "-destination"
                    })
                    .and_then(|i| args.get(i + 1))
                    .or_else(|| named.last().copied())?;
                reached(target)
            }
        }
    })?;
    Some(format!("it writes '{}', which is {}", found.0, found.1))
}

/// A command another one runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Nested {
    /// A program and its arguments (`sudo git reset --hard`).
    Command(Vec<Word>),
    /// A script in a shell's language (`bash -c '...'`, `eval`).
    Script(String, Dialect),
    /// A script nobody can read before it runs (`pwsh -EncodedCommand`).
    Encoded,
}

/// Wrappers that run the rest of their arguments as a command, with the
/// options of theirs that take a value.
const WRAPPERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &["-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-R"],
    ),
    ("doas", &["-u", "-C"]),
    ("nohup", &[]),
    ("time", &["-f", "-o"]),
    ("builtin", &[]),
    ("exec", &["-a"]),
    ("nice", &["-n"]),
    ("ionice", &["-c", "-n", "-t"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("unbuffer", &[]),
    ("chronic", &[]),
];

/// The commands `words` runs in turn, to be judged like any other.
pub fn nested(words: &[Word]) -> Vec<Nested> {
    let Some((first, args)) = words.split_first() else {
        return Vec::new();
    };
    let name = program(first);
    let joined = |from: &[Word]| {
        from.iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if let Some((_, valued)) = WRAPPERS.iter().find(|(w, _)| *w == name) {
        return after_options(args, valued)
            .map_or_else(Vec::new, |rest| vec![Nested::Command(rest.to_vec())]);
    }
    match name.as_str() {
        "command"
            if args
                .first()
                .is_some_and(|a| a.text == "-v" || a.text == "-V") =>
        {
            Vec::new()
        }
        "command" => {
            after_options(args, &[]).map_or_else(Vec::new, |r| vec![Nested::Command(r.to_vec())])
        }
        "env" => env_command(args).map_or_else(Vec::new, |r| vec![Nested::Command(r.to_vec())]),
        "timeout" => after_options(args, &["-s", "-k", "--signal", "--kill-after"])
            .and_then(|r| r.get(1..))
            .map_or_else(Vec::new, |r| vec![Nested::Command(r.to_vec())]),
        "xargs" => after_options(args, &["-I", "-d", "-E", "-L", "-n", "-P", "-s", "-a"])
            .map_or_else(Vec::new, |r| {
                let mut command = r.to_vec();
                command.push(Word {
                    text: "(input)".into(),
                    dynamic: true,
                    quoted: false,
                });
                vec![Nested::Command(command)]
            }),
        "find" => find_commands(args),
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "fish" => shell_script(args)
            .map(|s| vec![Nested::Script(s, Dialect::Posix)])
            .unwrap_or_default(),
        "eval" => vec![Nested::Script(joined(args), Dialect::Posix)],
        "watch" => after_options(args, &["-n", "-d", "--interval"])
            .map(|r| vec![Nested::Script(joined(r), Dialect::Posix)])
            .unwrap_or_default(),
        "pwsh" | "powershell" => powershell_script(args),
        "invoke-expression" | "iex" => vec![Nested::Script(
            joined(args).trim_start_matches("-Command ").to_string(),
            Dialect::PowerShell,
        )],
        "cmd" => args
            .iter()
            .position(|a| matches!(a.text.to_ascii_lowercase().as_str(), "/c" | "/k" | "/r"))
            .map(|i| vec![Nested::Script(joined(&args[i + 1..]), Dialect::Cmd)])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The arguments after a wrapper's own options (`valued` take a value).
fn after_options<'a>(args: &'a [Word], valued: &[&str]) -> Option<&'a [Word]> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let t = arg.text.as_str();
        if t == "--" {
            at += 1;
            break;
        }
        if !t.starts_with('-') {
            break;
        }
        at += if valued.contains(&t) { 2 } else { 1 };
    }
    let rest = args.get(at..)?;
    (!rest.is_empty()).then_some(rest)
}

/// `env [-i] [-u NAME] [-C DIR] [NAME=value]... command`.
fn env_command(args: &[Word]) -> Option<&[Word]> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let t = arg.text.as_str();
        if matches!(
            t,
            "-u" | "-C" | "--unset" | "--chdir" | "-S" | "--split-string"
        ) {
            at += 2;
        } else if t.starts_with('-') || is_assignment(arg) {
            at += 1;
        } else {
            break;
        }
    }
    let rest = args.get(at..)?;
    (!rest.is_empty()).then_some(rest)
}

/// `NAME=value` before a command sets a variable; it is not the program.
pub fn is_assignment(word: &Word) -> bool {
    let Some((name, _)) = word.text.split_once('=') else {
        return false;
    };
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `sh -c 'script'`, `bash -lc 'script'`.
fn shell_script(args: &[Word]) -> Option<String> {
    let mut takes_script = false;
    for arg in args {
        let t = arg.text.as_str();
        if takes_script {
            return Some(t.to_string());
        }
        if t.starts_with('-') && !t.starts_with("--") && t[1..].contains('c') {
            takes_script = true;
        } else if !t.starts_with('-') && !t.starts_with('+') {
            return None;
        }
    }
    None
}

/// `pwsh -Command ...` (by any prefix, `-c` included), or an encoded one.
fn powershell_script(args: &[Word]) -> Vec<Nested> {
    for (i, arg) in args.iter().enumerate() {
        let t = arg.text.to_ascii_lowercase();
        let t = t.strip_prefix('/').map(|r| format!("-{r}")).unwrap_or(t);
        if t.len() > 1 && ("-encodedcommand".starts_with(&t) && t.starts_with("-e") || t == "-ec") {
            return vec![Nested::Encoded];
        }
        if t.len() > 1 && "-command".starts_with(&t) {
            let script = args[i + 1..]
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            return vec![Nested::Script(script, Dialect::PowerShell)];
        }
        if t.len() > 1 && "-file".starts_with(&t) {
            return Vec::new();
        }
    }
    Vec::new()
}

/// `find ... -exec cmd {} ;` (and `-execdir`, `-ok`, `-okdir`).
fn find_commands(args: &[Word]) -> Vec<Nested> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < args.len() {
        if matches!(
            args[at].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = at + 1;
            let end = args[start..]
                .iter()
                .position(|a| a.text == ";" || a.text == "+")
                .map_or(args.len(), |p| start + p);
            let command: Vec<Word> = args[start..end]
                .iter()
                .map(|w| Word {
                    dynamic: w.dynamic || w.text.contains("{}"),
                    ..w.clone()
                })
                .collect();
            if !command.is_empty() {
                found.push(Nested::Command(command));
            }
            at = end;
        }
        at += 1;
    }
    found
}

#[cfg(test)]
mod tests;
