//! The policy half of `run_powershell`: the line's idioms, then each
//! command's tokens, grammars and rules in the server's posture, what it
//! would destroy, payloads, and the program it names.

use super::{Question, Refusal};
use crate::confine::Egress;
use std::path::{Path, PathBuf};
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::command::effects::{deletes_files, loss, loss_is_remote};
use wamcp_policy::command::filter::Filter;
use wamcp_policy::command::hardening::{GitPins, child_env};
use wamcp_policy::command::line::{Join, Line, Stderr, Step, parse_line};
use wamcp_policy::command::payload::encoded_script;
use wamcp_policy::command::posture::{
    CONFINED_RULE, Posture, confined_verdict, env_refusal, instead,
};
use wamcp_policy::command::rules::{Decision, RuleSet, Verdict, program_name};
use wamcp_policy::command::shell_line::Word;
use wamcp_policy::command::tokenize::{Arg, to_powershell};
use wamcp_policy::egress::named_endpoints;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::host_hooks::{Verdict as Effect, argv_effects};
use wamcp_policy::limits::MAX_COMMAND_CHARS;
use wamcp_policy::write_rules::lexical;

/// Whether the user approved this very command (for rules that ask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Nobody asked yet: a command that needs the user's yes is refused
    /// with a question.
    NotAsked,
    /// The user said yes to this very command.
    Granted,
}

/// What commands are judged by.
#[derive(Clone, Copy)]
pub struct Judge<'a> {
    /// The grammars and rules.
    pub rules: &'a RuleSet,
    /// The writable roots, resolved.
    pub roots: &'a [PathBuf],
    /// How the OS layer bounds what runs.
    pub posture: Posture,
    /// Where programs may be trusted: a program in any place a command
    /// can write (a root, a cache, `/dev/shm`) never gets the network.
    pub search: &'a ProgramSearch,
    /// The roots where the undo journal records each command and keeps
    /// every file: work a command destroys there comes back with `undo`,
    /// so only a loss it cannot reach (a remote's history, a path outside
    /// these roots) needs the user. Empty when the journal is off.
    pub journaled: &'a [PathBuf],
    /// What git's program-running settings are pinned to.
    pub git: &'a GitPins,
    /// The proxy that holds commands with the network, where one does:
    /// a host their arguments name that it would refuse is asked about.
    pub egress: Option<&'a dyn Egress>,
}

/// What the policy lets run: exactly this program, arguments and added
/// environment.
#[derive(Debug, PartialEq, Eq)]
pub struct Checked {
    /// The program's name, or its resolved path when one was named.
    pub program: String,
    /// The arguments, unquoted, exactly as the program receives them.
    pub args: Vec<String>,
    /// Variables that harden the program, then those the line set.
    pub env: Vec<(String, String)>,
    /// Whether the command may use the network.
    pub network: bool,
    /// Whether the project's own program folders are searched first: a
    /// command that runs only because it is confined (a program a grammar
    /// allows is found on the trusted `PATH`, so a planted `.venv/bin/git`
    /// never answers for git).
    pub local_programs: bool,
    /// Hosts and ports its arguments name that the proxy would refuse; the
    /// line runs only after the user's yes, which lets it reach them.
    pub hosts: Vec<(String, u16)>,
}

/// One checked command of a line, with what wamcp does around it.
#[derive(Debug)]
pub struct CheckedStep {
    /// What runs.
    pub checked: Checked,
    /// When it runs.
    pub join: Join,
    /// `timeout N`: at most this many seconds.
    pub timeout: Option<u64>,
    /// Where its standard error goes.
    pub stderr: Stderr,
    /// The filters its output goes through.
    pub filters: Vec<Filter>,
    /// The command as the model wrote it, for the answer.
    pub shown: String,
    /// The words judged, to judge again when an earlier command of the
    /// line has run.
    pub argv: Vec<Arg>,
    /// What each target of a delete was when the line was judged.
    pub targets: Vec<Target>,
}

/// A delete's target as the line was judged: what an earlier command of
/// the line moves or makes there (`mv src build && rm -rf build`) is not
/// the folder the judgement let go.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    path: PathBuf,
    identity: Option<String>,
}

impl Target {
    /// The delete targets of `argv` in `place`, as they are now.
    pub(super) fn of(argv: &[Arg], place: &Path) -> Vec<Target> {
        if !deletes(argv) {
            return Vec::new();
        }
        argv[1..]
            .iter()
            .filter(|a| !a.text.starts_with('-'))
            .map(|a| {
                let path = place.join(a.text.trim_end_matches(['/', '\\']));
                let identity = identity(&path);
                Target { path, identity }
            })
            .collect()
    }

    /// Why the target is no longer what was judged, if it is not.
    pub(super) fn changed(&self) -> Option<String> {
        (identity(&self.path) != self.identity).then(|| {
            format!(
                "'{}' is not what it was when the line was read: a command before it moved or made it",
                self.path.display()
            )
        })
    }
}

/// Which file `path` is and what a folder holds (not following a last
/// link), or `None` when nothing is there: its identity and modification
/// time, and for a folder those of the folders below it (a bounded walk),
/// so that work moved into a build folder changes it.
fn identity(path: &Path) -> Option<String> {
    let meta = path.symlink_metadata().ok()?;
    let mut seen = stamp(&meta);
    if meta.is_dir() {
        let mut budget = MAX_WALKED;
        let mut folders = vec![path.to_path_buf()];
        while let Some(folder) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                if budget == 0 {
                    return Some(seen);
                }
                budget -= 1;
                if let Ok(inner) = entry.path().symlink_metadata()
                    && inner.is_dir()
                {
                    seen.push_str(&stamp(&inner));
                    folders.push(entry.path());
                }
            }
        }
    }
    Some(seen)
}

/// Entries an identity looks at, at most.
const MAX_WALKED: usize = 20_000;

fn stamp(meta: &std::fs::Metadata) -> String {
    let modified = meta.modified().ok();
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        format!("{}:{}:{modified:?};", meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        format!("{:?}:{modified:?};", meta.created().ok())
    }
}

/// A checked line.
#[derive(Debug)]
pub struct CheckedLine {
    /// The line's leading `cd`, relative to the call's directory.
    pub dir: Option<String>,
    /// Its commands, in order.
    pub steps: Vec<CheckedStep>,
    /// Whether it is one command with nothing around it.
    pub plain: bool,
}

pub(super) fn not_allowed(why: String) -> ToolError {
    ToolError::new(ErrorType::CommandNotAllowed, why).recover(
        "Run programs with plain arguments; put text with special characters in single quotes. wamcp itself \
         performs 'a && b', 'a; b', 'a || b', a leading 'cd DIR &&', 'NAME=value cmd', '2>&1', '2>$null', and \
         '| head', '| tail', '| grep', '| Select-String', '| wc -l' on the output; no shell runs the line.",
    )
}

/// The name a command that destroys work asks under.
pub const LOSES_WORK: &str = "loses-work";

/// The work `argv` would destroy for good, judged in `place` (where its
/// relative paths lead) as it is now: also a delete through a link, which
/// empties what the link points at whatever its name (`build` made a link
/// to `src`).
pub(super) fn loses_work(argv: &[Arg], place: &Path) -> Option<String> {
    let words: Vec<Word> = argv.iter().map(Word::from).collect();
    loss(&words, &|path| place.join(path).exists()).or_else(|| deletes_through_a_link(argv, place))
}

/// The work `argv` would destroy that nothing brings back: what
/// [`loses_work`] finds, unless the undo journal records the command and
/// the loss is local to the roots.
pub(super) fn lost_for_good(argv: &[Arg], place: &Path, judge: &Judge<'_>) -> Option<String> {
    let why = loses_work(argv, place)?;
    (!undoable(argv, place, judge)).then_some(why)
}

/// Whether what `argv` destroys comes back with `undo`: the loss is not
/// on a remote, and the command runs in and every path stays in roots the
/// journal keeps whole.
pub(super) fn undoable(argv: &[Arg], place: &Path, judge: &Judge<'_>) -> bool {
    let words: Vec<Word> = argv.iter().map(Word::from).collect();
    let kept = judge.journaled;
    !loss_is_remote(&words)
        && kept.iter().any(|root| place.starts_with(root))
        && stays_inside(argv, place, kept)
        && (program_name(&argv[0].text) != "git" || repository_inside(argv, place, kept))
}

/// Whether the repository git would act on lies whole inside `kept`: its
/// work tree (a root may be a folder inside a larger repository, whose
/// `reset --hard` rewrites files beside it) and its git folder (a linked
/// work tree or submodule keeps refs and objects elsewhere, named by a
/// `.git` file and a `commondir` file).
fn repository_inside(argv: &[Arg], place: &Path, kept: &[PathBuf]) -> bool {
    let inside = |path: &Path| {
        let path = dunce::canonicalize(path).unwrap_or_else(|_| lexical(path));
        kept.iter().any(|root| path.starts_with(root))
    };
    let words: Vec<&str> = argv.iter().map(|a| a.text.as_str()).collect();
    let dir = crate::command::git_directory(place, words.get(1..).unwrap_or_default());
    if !dir.ancestors().any(|d| d.join(".git").exists()) {
        return true;
    }
    // A `.git` file that names nothing git reads is judged as outside.
    let Some(repo) = crate::repository::Repository::enclosing(&dir) else {
        return false;
    };
    [&repo.top, &repo.dot_git, &repo.git_dir, &repo.common_dir]
        .iter()
        .all(|d| inside(d))
}

/// Whether every path `argv` could name lies inside `roots`, where the
/// undo journal records: a plain relative word stays in `place`; a word
/// that is absolute, climbs with `..`, starts at home or leads through a
/// link is followed to where it leads (`git -C ../other reset --hard`).
fn stays_inside(argv: &[Arg], place: &Path, roots: &[PathBuf]) -> bool {
    argv[1..].iter().all(|arg| {
        // The value of `--opt=value` and PowerShell's `-Path:value`.
        let text = arg
            .text
            .split_once('=')
            .or_else(|| {
                arg.text
                    .starts_with('-')
                    .then(|| arg.text.split_once(':'))
                    .flatten()
            })
            .map_or(arg.text.as_str(), |(_, v)| v);
        if text.starts_with('~') {
            return false;
        }
        let path = place.join(text);
        let lands = dunce::canonicalize(&path).unwrap_or_else(|_| lexical(&path));
        let plain = !text.contains(['~', ':']) && !Path::new(text).is_absolute();
        (plain && !text.contains("..") && lands.starts_with(place))
            || roots.iter().any(|root| lands.starts_with(root))
    })
}

/// Whether `argv` deletes the files it names.
fn deletes(argv: &[Arg]) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    let program = program_name(&first.text);
    deletes_files(&program)
        || program == "cmake" && argv.iter().any(|a| a.text == "-E")
        || program == "git" && argv.iter().any(|a| a.text == "rm" || a.text == "clean")
}

/// A deleting program's target that is, or passes through, a link in
/// `place`.
fn deletes_through_a_link(argv: &[Arg], place: &Path) -> Option<String> {
    if !deletes(argv) {
        return None;
    }
    let through_link = |target: &str| {
        let mut path = place.to_path_buf();
        Path::new(target.trim_end_matches(['/', '\\']))
            .components()
            .any(|part| {
                path.push(part);
                path.symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink())
            })
    };
    argv[1..]
        .iter()
        .find(|a| !a.text.starts_with('-') && through_link(&a.text))
        .map(|a| {
            format!(
                "it deletes through the link '{}', which empties what it points at",
                a.text
            )
        })
}

/// The policy half: the line and then each command in it, judged in
/// `place` (the call's directory; a leading `cd` moves on from there).
/// Nothing runs unless every command may: a refusal anywhere refuses the
/// line, and one question covers it.
pub fn check(
    command: &str,
    judge: &Judge<'_>,
    approval: Approval,
    place: &Path,
) -> Result<CheckedLine, Refusal> {
    let line = parse(command).map_err(|e| in_posture(e, judge.posture))?;
    let plain = line.is_plain();
    let place = line
        .dir
        .as_ref()
        .map_or(place.to_path_buf(), |d| place.join(d));
    let mut question: Option<Question> = None;
    let mut steps = Vec::new();
    for step in line.steps {
        let shown = shown(&step.argv);
        let (checked, asks, judged) =
            check_step(&step, judge, &place).map_err(|e| in_posture(e, judge.posture))?;
        // One question covers the line, and names every reason; work that
        // cannot be undone makes it one never answered for good.
        question = match (question, asks) {
            (Some(kept), Some(asks)) => Some(kept.and(asks)),
            (kept, asks) => kept.or(asks),
        };
        steps.push(CheckedStep {
            checked,
            join: step.join,
            timeout: step.timeout,
            stderr: step.stderr,
            filters: step.filters,
            shown,
            targets: Target::of(&judged, &place),
            argv: judged,
        });
    }
    match question {
        Some(question) if approval == Approval::NotAsked => Err(Refusal::NeedsApproval(question)),
        _ => Ok(CheckedLine {
            dir: line.dir,
            steps,
            plain,
        }),
    }
}

/// A refusal that says which posture judged it.
fn in_posture(error: ToolError, posture: Posture) -> ToolError {
    if error.kind != ErrorType::CommandNotAllowed {
        return error;
    }
    error
        .detail("posture", posture.as_str())
        .recover(posture.explain())
}

fn shown(argv: &[Arg]) -> String {
    wamcp_policy::text::shown_argv(&argv.iter().map(|a| a.text.clone()).collect::<Vec<_>>())
}

/// The line, or why it is none to judge: empty, too long, or holding
/// shell syntax wamcp does not perform.
fn parse(command: &str) -> Result<Line, ToolError> {
    if command.trim().is_empty() {
        return Err(ToolError::new(
            ErrorType::InvalidCommand,
            "The command is empty.",
        ));
    }
    let length = command.chars().count();
    if length > MAX_COMMAND_CHARS {
        // A policy refusal, not a malformed request: a command this long is
        // how scripts get smuggled in.
        return Err(not_allowed(format!(
            "The command is {length} characters long; commands are limited to {MAX_COMMAND_CHARS}. Run a \
             script file the project already has, or split the work into several commands."
        )));
    }
    parse_line(command).map_err(|e| not_allowed(format!("{e}.")))
}

/// One command: its verdict in the posture, what would need the user's
/// yes, what runs, and the words judged (wildcards expanded, an installed
/// package's program in place of its runner).
fn check_step(
    step: &Step,
    judge: &Judge<'_>,
    place: &Path,
) -> Result<(Checked, Option<Question>, Vec<Arg>), ToolError> {
    let argv = super::wildcards::expanded(step.argv.clone(), place);
    let argv = match judge.posture {
        Posture::Confined => as_resolved(
            super::local::installed_package(&argv, place, judge.roots).unwrap_or(argv),
            place,
        ),
        Posture::Grammars => argv,
    };
    let verdict = match judge.posture {
        Posture::Confined => confined_verdict(judge.rules.judge(&argv), &argv),
        Posture::Grammars => judge.rules.judge(&argv),
    };
    let asks = question(&argv, &verdict, place, judge)?;
    let mut checked = allowed(argv.clone(), &verdict, judge, place)?;
    let asks = match (asks, elsewhere(&mut checked, judge)) {
        (Some(asks), Some(hosts)) => Some(asks.and(hosts)),
        (asks, hosts) => asks.or(hosts),
    };
    let strict = judge.posture == Posture::Grammars || checked.network;
    if let Some((name, why)) = step
        .env
        .iter()
        .find_map(|(name, _)| env_refusal(name, strict).map(|why| (name, why)))
    {
        return Err(not_allowed(format!(
            "The line sets {name} for '{}': {why}.",
            shown(&step.argv)
        )));
    }
    checked.env.extend(step.env.iter().cloned());
    Ok((checked, asks, argv))
}

/// The name a command that reaches a host outside the project's asks under.
pub const OTHER_HOST: &str = "other-host";

/// The question for a command with the network whose arguments name hosts
/// the proxy would refuse (`git push https://other/x.git`, `pip install
/// --index-url URL`), which it keeps in `checked.hosts` for the user's yes.
fn elsewhere(checked: &mut Checked, judge: &Judge<'_>) -> Option<Question> {
    let egress = judge.egress.filter(|_| checked.network)?;
    checked.hosts = named_endpoints(&checked.program, &checked.args)
        .into_iter()
        .filter(|(host, port)| !egress.reaches(host, *port))
        .collect();
    let first = checked.hosts.first()?;
    let named: Vec<String> = checked
        .hosts
        .iter()
        .map(|(host, port)| format!("{host}:{port}"))
        .collect();
    Some(Question::Rule {
        rule: OTHER_HOST.into(),
        why: format!(
            "it reaches {}, which this project's commands do not reach (not a package registry, a host of \
             the project's git remotes or in WAMCP_COMMAND_HOSTS); a yes lets this command alone reach {}",
            named.join(", "),
            if named.len() == 1 {
                first.0.as_str()
            } else {
                "them"
            }
        ),
    })
}

/// `argv` with a program named by a path that leads elsewhere (a link
/// `make` to `rm`, `g` to git) named by where it leads: the rules and the
/// loss checks judge the program that runs, not the name it was given.
/// Where commands are not confined such a path is refused instead.
pub(super) fn as_resolved(mut argv: Vec<Arg>, place: &Path) -> Vec<Arg> {
    let first = &argv[0].text;
    if !first.contains(['/', '\\']) {
        return argv;
    }
    if let Ok(resolved) = dunce::canonicalize(place.join(first))
        && program_name(&resolved.display().to_string()) != program_name(first)
    {
        argv[0] = Arg {
            text: resolved.display().to_string(),
            quoted: true,
        };
    }
    argv
}

/// Why `argv`, whose program path an earlier command of the line made
/// into a link to another program, may not run without the user: the
/// program it leads to, judged now as it would have been had the link
/// been there when the line was read. `None` when that one runs unasked.
pub(super) fn rejudged(argv: &[Arg], judge: &Judge<'_>, place: &Path) -> Option<String> {
    let typed = argv[0].text.clone();
    let argv = as_resolved(argv.to_vec(), place);
    let verdict = match judge.posture {
        Posture::Confined => confined_verdict(judge.rules.judge(&argv), &argv),
        Posture::Grammars => judge.rules.judge(&argv),
    };
    let shown = || format!("'{typed}' now leads to '{}'", argv[0].text);
    if verdict.decision != Decision::Allow {
        return Some(format!("{}, which {}", shown(), verdict.reason()));
    }
    match question(&argv, &verdict, place, judge) {
        Ok(None) => None,
        Ok(Some(question)) => Some(format!("{}: {}", shown(), question.why())),
        Err(refused) => Some(format!("{}: {}", shown(), refused.message)),
    }
}

/// What the user must be asked before `argv` runs, if anything: work that
/// nothing brings back (`git reset --hard`, `git clean -fdx`, `cmake -E rm
/// -rf src`), which no grammar option shows, or a `prompt` rule. A command
/// the confined posture let run is looked into further (`sh -c '...'`, a
/// copy onto a git hook): what it does is all that is judged of it. A
/// forbidden command is never asked about.
fn question(
    argv: &[Arg],
    verdict: &Verdict,
    place: &Path,
    judge: &Judge<'_>,
) -> Result<Option<Question>, ToolError> {
    if verdict.decision == Decision::Forbidden {
        return Ok(None);
    }
    if let Some(why) = lost_for_good(argv, place, judge) {
        let why = match super::push::stakes(argv, place, judge.search) {
            Some(stakes) => format!("{why} ({stakes})"),
            None => why,
        };
        return Ok(Some(Question::LosesWork { why }));
    }
    if verdict.rule.as_deref() == Some(CONFINED_RULE) {
        let exists = |path: &str| place.join(path).exists();
        return match argv_effects(argv, &exists) {
            Effect::Deny(why) => Err(not_allowed(format!("{why}."))),
            Effect::Ask(why) => Ok(Some(Question::Rule {
                rule: CONFINED_RULE.into(),
                why,
            })),
            Effect::Nothing | Effect::ProvenPlan => Ok(None),
        };
    }
    Ok(
        (verdict.decision == Decision::Prompt).then(|| Question::Rule {
            rule: verdict.rule.clone().unwrap_or_default(),
            why: verdict.reason(),
        }),
    )
}

/// The rest of the policy: the rules' refusal, encoded payloads, cmdlets,
/// and the program's own path when one is named.
fn allowed(
    argv: Vec<Arg>,
    verdict: &Verdict,
    judge: &Judge<'_>,
    place: &Path,
) -> Result<Checked, ToolError> {
    if verdict.decision == Decision::Forbidden {
        return Err(forbidden(&argv, verdict, judge.rules));
    }
    if let Some(arg) = encoded_script(&argv) {
        return Err(not_allowed(format!(
            "An argument carries a base64-encoded script ({} characters).",
            arg.len()
        )));
    }
    let named_by_path = argv[0].text.contains(['/', '\\']);
    if verdict.cmdlet {
        if named_by_path {
            return Err(not_allowed(format!(
                "'{}' names a cmdlet by path; name it alone.",
                argv[0].text
            )));
        }
        return powershell_command(&argv);
    }
    let mut texts = argv.into_iter().map(|a| a.text);
    let first = texts.next().unwrap_or_default();
    let (program, in_root) = match named_by_path {
        true if judge.posture == Posture::Confined => program_confined(&first, place, judge)?,
        true => (program_at_path(&first, judge)?, false),
        false => (first, false),
    };
    let network = verdict.network && !in_root;
    let env = child_env(
        &program_name(&program),
        |k| std::env::var(k).ok(),
        judge.git,
    );
    Ok(Checked {
        program,
        args: texts.collect(),
        env,
        network,
        local_programs: verdict.rule.as_deref() == Some(CONFINED_RULE) && !network,
        hosts: Vec::new(),
    })
}

/// The refusal of a forbidden command, naming the wamcp tool that does
/// what the program is usually typed for.
fn forbidden(argv: &[Arg], verdict: &Verdict, rules: &RuleSet) -> ToolError {
    let program = program_name(&argv[0].text);
    let error = not_allowed(match &verdict.rule {
        Some(rule) => format!("Refused by '{rule}': {}.", verdict.reason()),
        None => format!(
            "'{program}' is not on the allowlist. Allowed are {} and read-only cmdlets.",
            rules.known_programs().join(", ")
        ),
    });
    match instead(&program) {
        Some(what) => error.recover(what),
        None => error,
    }
}

/// A program named by its path: an absolute path to an existing regular
/// file outside every writable root. A file the agent wrote (a `git.cmd` in
/// the project) must not pose as the program whose name it borrows.
fn program_at_path(raw: &str, judge: &Judge<'_>) -> Result<String, ToolError> {
    refuse_share(raw)?;
    if !Path::new(raw).is_absolute() {
        return Err(not_allowed(format!(
            "'{raw}' names a program by a relative path; name it alone (for example 'git') and it is found on \
             PATH, or give its absolute path."
        )));
    }
    let resolved = existing_file(raw, Path::new(raw))?;
    if inside_a_root(&resolved, judge.roots) || !judge.search.is_trusted_file(Path::new(raw)) {
        return Err(not_allowed(format!(
            "'{raw}' is inside a writable root or another place commands write, where a program could be \
             anything that borrows an allowed name."
        )));
    }
    Ok(resolved.display().to_string())
}

/// A program named by its path where commands run confined: any file,
/// relative paths taken in `place` (the project's build output, a
/// `.venv`'s python). One inside a writable root is the agent's as much as
/// the user's, so it never gets the network whatever its name; nor does
/// one that does not exist yet (`make && ./app`: an earlier command of the
/// line builds it), whose launch reports it if it never appears.
fn program_confined(
    raw: &str,
    place: &Path,
    judge: &Judge<'_>,
) -> Result<(String, bool), ToolError> {
    refuse_share(raw)?;
    let named = place.join(raw);
    match dunce::canonicalize(&named) {
        Ok(resolved) if resolved.is_file() => {
            // A name in a place commands write (or a link from one) is the
            // agent's, whatever it is called.
            let untrusted =
                !judge.search.is_trusted_file(&named) || inside_a_root(&resolved, judge.roots);
            Ok((resolved.display().to_string(), untrusted))
        }
        Ok(_) => Err(not_allowed(format!("'{raw}' is not a program file."))),
        Err(_) => Ok((named.display().to_string(), true)),
    }
}

/// A share's file can change under the check, and reading it sends the
/// user's credentials to whoever serves it.
fn refuse_share(raw: &str) -> Result<(), ToolError> {
    if raw.starts_with("\\\\") || raw.starts_with("//") {
        return Err(not_allowed(format!(
            "'{raw}' names a program on a network share; run programs installed on this machine."
        )));
    }
    Ok(())
}

fn existing_file(raw: &str, path: &Path) -> Result<PathBuf, ToolError> {
    dunce::canonicalize(path)
        .ok()
        .filter(|p| p.is_file())
        .ok_or_else(|| not_allowed(format!("'{raw}' is not an existing program file.")))
}

/// Whether `path` (resolved) is inside one of the writable roots.
pub(super) fn inside_a_root(path: &Path, roots: &[PathBuf]) -> bool {
    roots
        .iter()
        .any(|root| wamcp_platform::paths::inside(path, root))
}

/// A cmdlet runs in PowerShell, re-serialised from the checked arguments.
fn powershell_command(argv: &[Arg]) -> Result<Checked, ToolError> {
    let shell = powershell().ok_or_else(|| {
        ToolError::new(
            ErrorType::PowershellLaunchFailed,
            "PowerShell (pwsh or powershell) is not installed.",
        )
        .recover("Cmdlets need PowerShell; executables such as git or cmake still run.")
    })?;
    let script = to_powershell(argv);
    let args = [
        "-NoLogo",
        "-NoProfile",
        "-NonInteractive",
        "-Command",
        &script,
    ]
    .map(String::from)
    .to_vec();
    Ok(Checked {
        program: shell,
        args,
        env: Vec::new(),
        network: false,
        local_programs: false,
        hosts: Vec::new(),
    })
}

/// pwsh if installed, else Windows PowerShell.
fn powershell() -> Option<String> {
    let path = std::env::var_os("PATH")?;
    for name in ["pwsh", "powershell"] {
        let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
        if std::env::split_paths(&path).any(|dir| dir.join(&file).is_file()) {
            return Some(name.to_string());
        }
    }
    None
}
