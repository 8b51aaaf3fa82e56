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

use crate::undo::REGENERATED;

/// Whether `program` (as [`program`] names it) deletes the files it is
/// named: POSIX `rm`, PowerShell's `Remove-Item` and its aliases, cmd's.
pub fn deletes_files(program: &str) -> bool {
    matches!(
        program,
        "rm" | "remove-item" | "ri" | "del" | "erase" | "rd" | "rmdir"
    )
}

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
    if first.dynamic {
        // `$(which git) reset --hard`, `${GIT:-git} ...`: judged as each
        // program it could be.
        return ["git", "rm", "cmake", "remove-item"]
            .iter()
            .find_map(|guess| {
                let mut as_guess = words.to_vec();
                as_guess[0] = Word {
                    text: guess.to_string(),
                    ..Word::default()
                };
                loss(&as_guess, exists)
                    .map(|why| format!("the program is known only when it runs; as {guess}, {why}"))
            });
    }
    let name = program(first);
    match name.as_str() {
        "git" => git_loss(args, exists),
        "remove-item" | "ri" if args.iter().all(|a| a.text.starts_with('-')) => {
            Some("Remove-Item deletes every item it is given".into())
        }
        deleter if deletes_files(deleter) => {
            let cmdlet = matches!(deleter, "remove-item" | "ri");
            recursive_delete(args, cmdlet)
                .map(|targets| format!("it deletes {targets} and everything in it"))
        }
        "rimraf" if !args.is_empty() => {
            Some("rimraf deletes what it names and everything in it".into())
        }
        "cmake" => cmake_loss(args),
        "rsync" if args.iter().any(|a| a.text.starts_with("--del")) => {
            Some("rsync --delete removes files from the destination".into())
        }
        "find" if args.iter().any(|a| a.text == "-delete") && !only_regenerated_names(args) => {
            Some("find -delete removes every file it matches".into())
        }
        _ => None,
    }
}

/// Files a build or an interpreter makes again, as `find -name` patterns.
const REGENERATED_FILES: &[&str] = &[
    "*.pyc",
    "*.pyo",
    "__pycache__",
    "*.o",
    "*.obj",
    "*.class",
    "*.tmp",
    ".DS_Store",
    "*~",
];

/// Whether every `-name`/`-iname` of a `find` names only regenerated
/// files (and there is at least one).
fn only_regenerated_names(args: &[Word]) -> bool {
    let names: Vec<&str> = args
        .windows(2)
        .filter(|pair| matches!(pair[0].text.as_str(), "-name" | "-iname"))
        .map(|pair| pair[1].text.as_str())
        .collect();
    let negated = args
        .iter()
        .any(|a| matches!(a.text.as_str(), "!" | "-not" | "-o" | "-or"));
    !negated && !names.is_empty() && names.iter().all(|n| REGENERATED_FILES.contains(n))
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

    /// A long option, alone, as `--name=value`, or shortened: git and GNU
    /// tools take any unambiguous start of a long option (`--ha` for
    /// `--hard`), so any start of three or more characters counts here.
    fn long(&self, name: &str) -> bool {
        self.options().any(|a| {
            let given = a.split_once('=').map_or(a, |(option, _)| option);
            given == name
                || (given.len() >= 3 && given.starts_with("--") && name.starts_with(given))
        })
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
    "--attr-source",
];

/// git's subcommands that can destroy work with some argument: one of them
/// with an argument only the shell knows is asked about.
const GIT_RISKY: &[&str] = &[
    "reset",
    "checkout",
    "restore",
    "clean",
    "push",
    "branch",
    "stash",
    "reflog",
    "gc",
    "prune",
    "switch",
    "rm",
    "worktree",
    "update-ref",
    "tag",
    "filter-branch",
    "filter-repo",
    "checkout-index",
    "read-tree",
    "send-pack",
];

/// The subcommand's index: the first word after git's own options that
/// is not the value of an option this table does not know.
fn git_subcommand(args: &[Word]) -> Option<usize> {
    let mut at = 0;
    let mut skipped = 0;
    while let Some(arg) = args.get(at) {
        let t = arg.text.as_str();
        if GIT_VALUE_OPTIONS.contains(&t) {
            at += 2;
        } else if t.starts_with('-') {
            at += 1;
        } else if !arg.dynamic && !GIT_RISKY.contains(&t) && !is_git_command(t) && skipped < 2 {
            // Likely the value of an option not listed above.
            skipped += 1;
            at += 1;
        } else {
            return Some(at);
        }
    }
    None
}

/// Whether a word only the shell knows could turn out to be an option or a
/// refspec (`$o`, `$(...)`, a glob), not counting one with a fixed start
/// (`v$VERSION`) or the value of a message or file option.
fn could_be_an_option(args: &[Word]) -> bool {
    let values_of = ["-m", "--message", "-F", "--file", "-t", "--template"];
    args.iter().enumerate().any(|(i, a)| {
        let is_value = i > 0 && values_of.contains(&args[i - 1].text.as_str());
        a.dynamic && !is_value && a.text.starts_with(['$', '*', '?', '['])
    })
}

/// Common git subcommands that destroy nothing, so that the scan above
/// does not skip them as option values.
fn is_git_command(word: &str) -> bool {
    matches!(
        word,
        "status"
            | "log"
            | "diff"
            | "show"
            | "add"
            | "commit"
            | "fetch"
            | "pull"
            | "merge"
            | "rebase"
            | "init"
            | "clone"
            | "remote"
            | "config"
            | "describe"
            | "blame"
            | "grep"
            | "rev-parse"
            | "ls-files"
            | "cherry-pick"
            | "revert"
            | "bisect"
            | "submodule"
            | "mv"
            | "apply"
            | "am"
            | "archive"
            | "help"
            | "version"
            | "notes"
            | "shortlog"
    )
}

/// Whether the loss `words` would cause (see [`loss`]) falls on a remote:
/// a force push, a deleted remote branch, a mirror. Local work can be
/// brought back by wamcp's undo journal; a remote's history cannot, so
/// these always need the user. A program or subcommand known only when it
/// runs could be one of them.
pub fn loss_is_remote(words: &[Word]) -> bool {
    let Some((first, args)) = words.split_first() else {
        return false;
    };
    if first.dynamic {
        return true;
    }
    if program(first) != "git" {
        return false;
    }
    git_subcommand(args).is_some_and(|at| {
        args[at].dynamic || matches!(args[at].text.as_str(), "push" | "send-pack" | "remote")
    })
}

fn git_loss(args: &[Word], exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let at = git_subcommand(args)?;
    let sub = args[at].text.as_str();
    if args[at].dynamic {
        return Some("git's subcommand is known only when it runs".into());
    }
    // `git -C dir checkout file` restores `dir/file`.
    let dir: Vec<&str> = args[..at]
        .windows(2)
        .filter(|pair| pair[0].text == "-C")
        .map(|pair| pair[1].text.as_str())
        .collect();
    let under = |path: &str| {
        let mut full = dir.join("/");
        if !full.is_empty() {
            full.push('/');
        }
        full.push_str(path);
        exists(&full)
    };
    let rest = Options {
        args: &args[at + 1..],
    };
    let why = |what: &str| Some(format!("git {sub} {what}"));
    if GIT_RISKY.contains(&sub) && sub != "checkout" && could_be_an_option(rest.args) {
        return why("has an argument known only when it runs (a variable, a substitution, a glob)");
    }
    subcommand_loss(sub, &rest, &args[..at], &under)
}

/// The table of what each git subcommand `sub` destroys, given the words
/// after it (`rest`) and git's own options before it (`global`); `under`
/// says whether a path names something where `-C` points.
fn subcommand_loss(
    sub: &str,
    rest: &Options<'_>,
    global: &[Word],
    under: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let why = |what: &str| Some(format!("git {sub} {what}"));
    match sub {
        "reset" if rest.long("--hard") => why("--hard discards every uncommitted change"),
        "checkout" => checkout_loss(rest, under).and_then(why),
        "restore" => {
            let staged_only = rest.either('S', "--staged") && !rest.either('W', "--worktree");
            (!staged_only).then(|| "git restore overwrites changes in the work tree".to_string())
        }
        "clean"
            if (rest.either('f', "--force") || no_force_needed(global))
                && !rest.either('n', "--dry-run") =>
        {
            why("deletes untracked files, which git never had")
        }
        "push" if push_rewrites(rest) => why("rewrites or deletes history on the remote"),
        "branch" if branch_loss(rest) => why("deletes or overwrites a branch"),
        "stash" if matches!(first_word(rest), Some("clear" | "drop")) => {
            why("deletes stashed work")
        }
        "reflog" if matches!(first_word(rest), Some("expire" | "delete")) => {
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
        "worktree" if first_word(rest) == Some("remove") && rest.either('f', "--force") => {
            why("remove --force deletes a work tree with its changes")
        }
        "update-ref" if rest.short('d') => why("-d deletes a ref"),
        "tag" if rest.either('d', "--delete") => why("deletes a tag"),
        "filter-branch" | "filter-repo" => why("rewrites the repository's history"),
        "checkout-index" if rest.either('f', "--force") => why("overwrites work-tree files"),
        "submodule" if first_word(rest) == Some("deinit") && rest.either('f', "--force") => {
            why("deinit --force deletes submodule work trees with their changes")
        }
        "config"
            if rest
                .args
                .iter()
                .any(|a| a.text.eq_ignore_ascii_case("clean.requireForce")) =>
        {
            why("clean.requireForce off makes every later git clean delete without -f")
        }
        "read-tree" if rest.short('u') && (rest.long("--reset") || rest.short('m')) => {
            why("-u overwrites work-tree files")
        }
        "update-ref" if rest.long("--stdin") => why("--stdin can delete refs"),
        "send-pack" if rest.either('f', "--force") || rest.long("--mirror") => {
            why("rewrites history on the remote")
        }
        "remote"
            if matches!(first_word(rest), Some("add" | "set-url"))
                && rest.options().any(|a| a.starts_with("--mirror")) =>
        {
            why("--mirror makes every later push to it delete and overwrite the remote's branches")
        }
        _ => None,
    }
}

/// `git -c clean.requireForce=false`: `git clean` then deletes without `-f`.
fn no_force_needed(global: &[Word]) -> bool {
    global.iter().any(|w| {
        let lower = w.text.to_ascii_lowercase();
        lower.starts_with("clean.requireforce=")
            && matches!(
                &lower["clean.requireforce=".len()..],
                "false" | "0" | "no" | "off"
            )
    })
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
    if rest.short('B') {
        return Some("-B resets a branch that may hold commits");
    }
    // Making a branch names a start point, not files.
    if rest.short('b') || rest.long("--orphan") {
        return None;
    }
    // `*`, `src/*.c` and `:/` are pathspecs git expands itself.
    let pathspec = |w: &Word| w.text.contains(['*', '?', '[']) || w.text.starts_with(':');
    let positionals = rest.positionals();
    let restores = match positionals.as_slice() {
        [] => false,
        [one] => one.text == "." || one.dynamic || pathspec(one) || exists(&one.text),
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

/// cmd's options: `/s`, `/q`, and clusters of them (`/s/q`).
fn is_cmd_option(text: &str) -> bool {
    text.starts_with('/')
        && text[1..]
            .split('/')
            .all(|part| (1..=2).contains(&part.len()))
}

/// A recursive delete's targets, shown, when one of them may hold work.
/// A PowerShell cmdlet (`cmdlet`) with no target deletes what it is
/// piped, which nobody can know.
fn recursive_delete(args: &[Word], cmdlet: bool) -> Option<String> {
    let recursive = args.iter().any(|a| {
        let t = a.text.as_str();
        // `-Recurse:$true` is `-Recurse`.
        let lower = t.split(':').next().unwrap_or(t).to_ascii_lowercase();
        // rm's letters (`-rf`), `--recursive` by any start, PowerShell's
        // `-Recurse` by any start, cmd's `/s`.
        (t.len() > 1
            && t.starts_with('-')
            && !t.starts_with("--")
            && t[1..].chars().all(|c| "dfirRvI".contains(c))
            && t[1..].contains(['r', 'R']))
            || (lower.len() >= 3 && "--recursive".starts_with(&lower))
            || (lower.len() > 1 && !lower.starts_with("--") && "-recurse".starts_with(&lower))
            || (is_cmd_option(&lower) && lower[1..].split('/').any(|p| p == "s"))
    });
    if !recursive {
        return None;
    }
    // Options are `-x` words and cmd's `/x`; `/home/x` is a path. Quotes
    // do not matter: `rm '-rf' x` gives rm the same option.
    let is_option = |a: &Word| a.text.starts_with('-') || is_cmd_option(&a.text);
    // PowerShell parameters whose value is no target.
    let valued = [
        "-erroraction",
        "-ea",
        "-warningaction",
        "-wa",
        "-filter",
        "-include",
        "-exclude",
        "-credential",
        "-stream",
        "-informationaction",
        "-ia",
    ];
    let targets: Vec<&Word> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            let after_valued =
                *i > 0 && valued.contains(&args[i - 1].text.to_ascii_lowercase().as_str());
            !is_option(a) && !after_valued
        })
        .map(|(_, a)| a)
        .collect();
    if targets.is_empty() && cmdlet {
        return Some("the items it is given".into());
    }
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

/// Whether deleting `target` loses nothing a build would not make again:
/// a relative path through a folder a build makes (`build`, `target/debug`,
/// `node_modules/.vite`), or scratch under `/tmp`. `/usr/local/bin` and
/// `~/bin` are named `bin` too, and are not a build's.
fn regenerated(target: &Word) -> bool {
    let text = target.text.replace('\\', "/");
    let text = text.trim_start_matches("./");
    if text.split('/').any(|part| part == "..") {
        return false;
    }
    let first_dynamic = text.starts_with(['$', '*', '?', '[', '{']);
    if let Some(scratch) = text
        .strip_prefix("/tmp/")
        .or_else(|| text.strip_prefix("~/.cache/"))
    {
        return !scratch.trim_matches('/').is_empty() && !scratch.starts_with('$');
    }
    let absolute = text.starts_with(['/', '~']) || text.as_bytes().get(1) == Some(&b':');
    let first = text
        .split('/')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if first.ends_with(".egg-info") {
        return !absolute;
    }
    // The first part decides (`target/debug`, `node_modules/.vite`, `dist/*`):
    // `src/bin` is a project's own.
    !absolute && !first_dynamic && REGENERATED.contains(&first.as_str())
}

fn cmake_loss(args: &[Word]) -> Option<String> {
    let at = args.iter().position(|a| a.text == "-E")?;
    let (tool, rest) = args[at + 1..].split_first()?;
    let targets = match tool.text.as_str() {
        "rm" => recursive_delete(rest, false)?,
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

fn writer(program: &str, args: &[Word]) -> Option<Writes> {
    Some(match program {
        "tee" | "touch" | "truncate" | "set-content" | "add-content" | "out-file" | "new-item"
        | "tee-object" | "sc" | "ac" | "ni" => Writes::All,
        "sed"
            if args
                .iter()
                .any(|a| a.text.starts_with("-i") || a.text.starts_with("--in-place")) =>
        {
            Writes::All
        }
        "cp" | "mv" | "ln" | "install" | "rsync" | "copy" | "move" | "xcopy" | "robocopy"
        | "copy-item" | "move-item" | "cpi" | "mi" | "cpp" | "mp" => Writes::Last,
        _ => return None,
    })
}

/// Options that name the file a program writes, whatever the program
/// (`gcc -o`, `curl -o`, `wget -O`, `Invoke-WebRequest -OutFile`,
/// `Expand-Archive -DestinationPath`), and `dd`'s `of=`.
const OUTPUT_OPTIONS: &[&str] = &[
    "-o",
    "-O",
    // The folder it writes into (`tar -C`, `unzip -d`, `make -C`).
    "-C",
    "-d",
    "--output",
    "--output-document",
    "-outfile",
    "-filepath",
    "-destinationpath",
    "-destination",
    "-literalpath",
];

/// The files `args` name through an output option: `-o X`, a cluster
/// ending in one (`-fsSLo X`, `-qO X`), glued (`-oX`, `-t.git/hooks`), a
/// PowerShell parameter by any start (`-OutF X`, `-Dest X`), `--x=X`.
fn output_files(args: &[Word]) -> Vec<Word> {
    const LETTERS: &[char] = &['o', 'O', 't', 'P', 'C', 'd'];
    const LONG: &[&str] = &[
        "--output",
        "--output-document",
        "--target-directory",
        "--output-dir",
        "--directory-prefix",
        "--directory",
    ];
    let mut found = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        let lower = t.to_ascii_lowercase();
        let next = args.get(i + 1).cloned();
        let value = |text: &str| Word {
            text: text.to_string(),
            ..a.clone()
        };
        if let Some((option, v)) = t.split_once('=') {
            if LONG.contains(&option) || option == "of" {
                found.push(value(v));
            }
        } else if LONG.contains(&t)
            || OUTPUT_OPTIONS.contains(&t)
            || (lower.len() >= 4
                && OUTPUT_OPTIONS
                    .iter()
                    .any(|o| o.len() > 3 && o.starts_with(&lower)))
        {
            found.extend(next);
        } else if t.len() > 2 && t.starts_with('-') && !t.starts_with("--") {
            let body = &t[1..];
            if body.chars().all(|c| c.is_ascii_alphabetic()) {
                if body.ends_with(LETTERS) {
                    found.extend(next);
                }
            } else if body.starts_with(LETTERS) {
                found.push(value(&body[1..]));
            }
        }
    }
    found
}

/// Why `command` writes a file that runs programs later, if it does: a
/// redirection into one, an output option naming one, or a program that
/// writes its arguments. Relative names are taken in `dir` (where a `cd`
/// earlier on the line left the shell).
pub fn trust_write(command: &SimpleCommand, dir: &str) -> Option<String> {
    let reached = |word: &Word| {
        let full = if dir.is_empty() {
            word.text.clone()
        } else {
            format!("{dir}/{}", word.text)
        };
        names_trust_location(&full)
            .or_else(|| {
                (word.dynamic && names_git_hook(&full)).then_some("a git hook, which runs programs")
            })
            .map(|why| (word.text.clone(), why))
    };
    let args = command.words.get(1..).unwrap_or_default();
    let found = command
        .writes_to
        .iter()
        .chain(output_files(args).iter())
        .find_map(reached)
        .or_else(|| {
            let first = command.words.first()?;
            let mut named: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
            // sed's first word is its script unless -e or -f gives it.
            let sed_script = !args
                .iter()
                .any(|a| a.text == "-e" || a.text == "-f" || a.text.starts_with("--expression"));
            if program(first) == "sed" && sed_script && !named.is_empty() {
                named.remove(0);
            }
            match writer(&program(first), args)? {
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

/// `$(git rev-parse --git-path hooks)/pre-commit`: a path only the shell
/// knows that ends in a git hook's name.
fn names_git_hook(path: &str) -> bool {
    const HOOKS: &[&str] = &[
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "pre-rebase",
        "post-checkout",
        "post-merge",
        "pre-push",
        "pre-receive",
        "update",
        "post-receive",
        "post-update",
        "pre-auto-gc",
        "post-rewrite",
        "pre-merge-commit",
        "fsmonitor-watchman",
        "reference-transaction",
        "sendemail-validate",
        "push-to-checkout",
    ];
    let last = path.rsplit(['/', '\\']).next().unwrap_or_default();
    path.contains(['/', '\\']) && HOOKS.contains(&last)
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
    /// Something it runs that cannot be seen from the line, and why (a
    /// shell reading its script from a pipe).
    Unseen(String),
}

/// Wrappers that run the rest of their arguments as a command, with the
/// options of theirs that take a value.
const WRAPPERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &[
            "-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-R", "--user", "--group",
            "--host", "--prompt", "--chdir", "--role", "--type",
        ],
    ),
    ("doas", &["-u", "-C"]),
    ("nohup", &[]),
    ("time", &["-f", "-o"]),
    ("builtin", &[]),
    ("exec", &["-a"]),
    ("nice", &["-n", "--adjustment"]),
    ("wsl", &["-d", "-u", "--distribution", "--user", "--cd"]),
    ("shx", &[]),
    ("npx", &["-p", "--package"]),
    ("setsid", &[]),
    ("busybox", &[]),
    ("ionice", &["-c", "-n", "-t"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("unbuffer", &[]),
    ("chronic", &[]),
];

/// The commands `words` runs in turn, to be judged like any other;
/// `stdin` is its input where the line holds it (a here-doc).
pub fn nested(words: &[Word], stdin: Option<&str>) -> Vec<Nested> {
    let Some((first, args)) = words.split_first() else {
        return Vec::new();
    };
    let name = program(first);
    if let Some((_, valued)) = WRAPPERS.iter().find(|(w, _)| *w == name) {
        return after_options(args, valued)
            .map_or_else(Vec::new, |rest| vec![Nested::Command(rest.to_vec())]);
    }
    match name.as_str() {
        "command" => command_builtin(args),
        "env" => env_nested(args),
        "flock" => flock_command(args),
        "script" => shell_script(args)
            .map(|s| vec![Nested::Script(s, Dialect::Posix)])
            .unwrap_or_default(),
        "start-process" | "saps" | "start" => start_process(args),
        "timeout" => after_options(args, &["-s", "-k", "--signal", "--kill-after"])
            .and_then(|r| r.get(1..))
            .map_or_else(Vec::new, |r| vec![Nested::Command(r.to_vec())]),
        "xargs" => xargs_command(args),
        "find" => find_commands(args),
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "fish" => shell_input(args, stdin),
        "eval" => eval_script(args),
        "source" | "."
            if args
                .first()
                .is_some_and(|a| a.dynamic || a.text == "/dev/stdin") =>
        {
            vec![Nested::Unseen(
                "it runs a script known only when it runs".into(),
            )]
        }
        "su" => args
            .iter()
            .position(|a| a.text == "-c" || a.text == "--command")
            .and_then(|at| args.get(at + 1))
            .map(|s| vec![Nested::Script(s.text.clone(), Dialect::Posix)])
            .unwrap_or_default(),
        "watch" => after_options(args, &["-n", "-d", "--interval"])
            .map(|r| vec![Nested::Script(joined(r), Dialect::Posix)])
            .unwrap_or_default(),
        "pwsh" | "powershell" => powershell_script(args),
        "invoke-expression" | "iex" => invoke_expression(args),
        "cmd" => args
            .iter()
            .position(|a| matches!(a.text.to_ascii_lowercase().as_str(), "/c" | "/k" | "/r"))
            .map(|i| vec![Nested::Script(joined(&args[i + 1..]), Dialect::Cmd)])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Words joined by single spaces, as a script a shell reads again.
fn joined(from: &[Word]) -> String {
    from.iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `command x`: runs `x`; `command -v x` and `-V` only say what `x` is.
fn command_builtin(args: &[Word]) -> Vec<Nested> {
    if args
        .first()
        .is_some_and(|a| a.text == "-v" || a.text == "-V")
    {
        return Vec::new();
    }
    after_options(args, &[]).map_or_else(Vec::new, |r| vec![Nested::Command(r.to_vec())])
}

/// `env -S 'script'` runs a script; `env [options] command` a command.
fn env_nested(args: &[Word]) -> Vec<Nested> {
    match args
        .iter()
        .position(|a| matches!(a.text.as_str(), "-S" | "--split-string"))
    {
        Some(at) => args
            .get(at + 1)
            .map(|script| vec![Nested::Script(script.text.clone(), Dialect::Posix)])
            .unwrap_or_default(),
        None => env_command(args).map_or_else(Vec::new, |r| vec![Nested::Command(r.to_vec())]),
    }
}

/// xargs's options that take a value.
const XARGS_VALUED: &[&str] = &[
    "-I",
    "-d",
    "-E",
    "-L",
    "-n",
    "-P",
    "-s",
    "-a",
    "--max-args",
    "--delimiter",
    "--max-lines",
    "--max-procs",
    "--arg-file",
    "--max-chars",
];

/// `xargs cmd`: runs `cmd` with more arguments, read from its input.
fn xargs_command(args: &[Word]) -> Vec<Nested> {
    after_options(args, XARGS_VALUED).map_or_else(Vec::new, |r| {
        let mut command = r.to_vec();
        command.push(Word {
            text: "$(input)".into(),
            dynamic: true,
            quoted: false,
        });
        vec![Nested::Command(command)]
    })
}

/// `eval words`: the words joined are a script, unless one is known only
/// when it runs.
fn eval_script(args: &[Word]) -> Vec<Nested> {
    if args.iter().any(|a| a.dynamic) {
        return vec![Nested::Unseen(
            "eval runs text known only when it runs".into(),
        )];
    }
    vec![Nested::Script(joined(args), Dialect::Posix)]
}

/// `Invoke-Expression`: its arguments are a PowerShell script, unless it
/// has none (it runs its input) or one is known only when it runs.
fn invoke_expression(args: &[Word]) -> Vec<Nested> {
    if args.is_empty()
        || args
            .iter()
            .any(|a| a.dynamic && !a.quoted || a.text.starts_with('$'))
    {
        return vec![Nested::Unseen(
            "it runs text known only when it runs".into(),
        )];
    }
    vec![Nested::Script(
        joined(args).trim_start_matches("-Command ").to_string(),
        Dialect::PowerShell,
    )]
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
        // `-Hu root`: a cluster whose last letter takes a value.
        let cluster_value = t.len() > 2
            && !t.starts_with("--")
            && valued.contains(&format!("-{}", &t[t.len() - 1..]).as_str());
        at += if valued.contains(&t) || cluster_value {
            2
        } else {
            1
        };
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

/// What a shell runs: `sh -c 'script'`, a script file (no opinion unless
/// its name is only known at run time), or its input (a here-doc this
/// line holds, else nothing that can be seen).
fn shell_input(args: &[Word], stdin: Option<&str>) -> Vec<Nested> {
    if let Some(script) = shell_script(args) {
        if script == UNKNOWN_SCRIPT {
            return vec![Nested::Unseen(
                "the shell runs a script known only when it runs".into(),
            )];
        }
        return vec![Nested::Script(script, Dialect::Posix)];
    }
    // `-o pipefail`, `-O extglob`, `+o x` take a value; `-s` reads stdin.
    let mut file = None;
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let t = arg.text.as_str();
        if matches!(t, "-o" | "-O" | "+o" | "+O") {
            at += 2;
        } else if t == "-s" || t == "--" {
            break;
        } else if t.starts_with(['-', '+']) {
            at += 1;
        } else {
            file = (t != "/dev/stdin").then_some(arg);
            break;
        }
    }
    match (file, stdin) {
        (Some(file), _) if file.dynamic => vec![Nested::Unseen(
            "the shell runs a script whose name is known only when it runs".into(),
        )],
        (Some(_), _) => Vec::new(),
        (None, Some(text)) => vec![Nested::Script(text.to_string(), Dialect::Posix)],
        (None, None) => vec![Nested::Unseen(
            "the shell runs whatever it reads from its input, which the line does not show".into(),
        )],
    }
}

/// What stands for a script only the shell knows: a line the judge cannot
/// read, which [`nested`]'s callers turn into a question.
pub const UNKNOWN_SCRIPT: &str = "\u{0}unknown script";

/// `flock [options] FILE command...`, or `flock -c 'script' FILE`.
fn flock_command(args: &[Word]) -> Vec<Nested> {
    if let Some(at) = args
        .iter()
        .position(|a| a.text == "-c" || a.text == "--command")
    {
        return args
            .get(at + 1)
            .map(|s| vec![Nested::Script(s.text.clone(), Dialect::Posix)])
            .unwrap_or_default();
    }
    after_options(args, &["-w", "-E", "--timeout", "--conflict-exit-code"])
        .and_then(|rest| rest.get(1..))
        .filter(|rest| !rest.is_empty())
        .map(|rest| vec![Nested::Command(rest.to_vec())])
        .unwrap_or_default()
}

/// PowerShell's `Start-Process FILE -ArgumentList a, b`.
fn start_process(args: &[Word]) -> Vec<Nested> {
    let lower = |w: &Word| w.text.to_ascii_lowercase();
    let value_of = |names: &[&str]| {
        args.iter()
            .position(|a| names.contains(&lower(a).as_str()))
            .and_then(|i| args.get(i + 1))
    };
    let file = value_of(&["-filepath", "-file", "-path"])
        .or_else(|| args.iter().find(|a| !a.text.starts_with('-')));
    let Some(file) = file else {
        return Vec::new();
    };
    let mut command = vec![file.clone()];
    let positionals: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
    if !args
        .iter()
        .any(|a| matches!(lower(a).as_str(), "-argumentlist" | "-args"))
        && let Some(second) = positionals.get(1)
    {
        command.extend(second.text.split_whitespace().map(|part| Word {
            text: part.to_string(),
            ..(*second).clone()
        }));
    }
    if let Some(at) = args
        .iter()
        .position(|a| matches!(lower(a).as_str(), "-argumentlist" | "-args"))
    {
        for word in args[at + 1..]
            .iter()
            .take_while(|a| !a.text.starts_with('-') || a.quoted)
        {
            command.extend(word.text.split_whitespace().map(|part| Word {
                text: part.to_string(),
                ..word.clone()
            }));
        }
    }
    vec![Nested::Command(command)]
}

/// `sh -c 'script'`, `bash -lc 'script'`; a script known only at run time
/// (`bash -c "$CMD"`) is none of these, and said so by its caller.
fn shell_script(args: &[Word]) -> Option<String> {
    let mut takes_script = false;
    let mut value_next = false;
    for arg in args {
        let t = arg.text.as_str();
        if takes_script {
            return Some(if arg.dynamic {
                UNKNOWN_SCRIPT.to_string()
            } else {
                t.to_string()
            });
        }
        if std::mem::take(&mut value_next) {
            continue;
        }
        if matches!(t, "-o" | "-O" | "+o" | "+O") {
            value_next = true;
            continue;
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
        let piped = args.get(i + 1).is_none_or(|next| next.text == "-");
        if t.len() > 1
            && ("-command".starts_with(&t) || "-commandwithargs".starts_with(&t) || t == "-cwa")
            && piped
        {
            return vec![Nested::Unseen(
                "PowerShell runs what it reads from its input".into(),
            )];
        }
        if t.len() > 1
            && ("-command".starts_with(&t) || "-commandwithargs".starts_with(&t) || t == "-cwa")
        {
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
