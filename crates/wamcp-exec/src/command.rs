//! `run_powershell`'s pipeline: length, the line's idioms, then for each
//! command tokens, rules, encoded payloads, working directory (in that
//! order: the first problem found is the one reported), then run exactly
//! the checked argv of each.
//!
//! Executables run as argv with no shell. Cmdlets run in PowerShell with a
//! command re-serialised from the checked arguments, never the model's
//! original text, so PowerShell cannot parse something the checks did not.

mod judge;
mod local;
mod push;
mod steps;
mod wildcards;

pub use judge::{
    Approval, Checked, CheckedLine, CheckedStep, Judge, LOSES_WORK, OTHER_HOST, Target, check,
};

use crate::confine::Sandbox;
use crate::{Progress, RunSpec};
use judge::{inside_a_root, not_allowed};
use std::path::{Path, PathBuf};
use std::time::Duration;
use wamcp_platform::ansi::best_fit_ascii;
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::command::best_fit::ansi_look_alike;
use wamcp_policy::command::command_line::{batch_command_line, is_batch_file};
use wamcp_policy::command::filter::Filter;
use wamcp_policy::command::line::{Join, Stderr};
use wamcp_policy::command::posture::Posture;
use wamcp_policy::command::rules::RuleSet;
use wamcp_policy::command::tokenize::Arg;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::{
    MAX_POWERSHELL_TIMEOUT_SECONDS, MAX_PROCESS_OUTPUT_BYTES, clamp_request,
};

/// Why a command does not run as asked. The tool adapter asks the user on
/// [`Refusal::NeedsApproval`] and calls again with [`Approval::Granted`];
/// the host hook turns the same value into its own question. Only at that
/// boundary does either become the model's error envelope.
#[derive(Debug)]
pub enum Refusal {
    /// Nothing forbids the command, but the user's yes comes first.
    NeedsApproval(Question),
    /// Refused outright: no answer of the user's changes it here.
    Refused(ToolError),
}

/// Why a command needs the user's yes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Question {
    /// It destroys work that nothing brings back (`git reset --hard`).
    LosesWork {
        /// What would be lost, in a phrase.
        why: String,
    },
    /// A `prompt` rule or grammar asks first.
    Rule {
        /// The rule's name.
        rule: String,
        /// The rule's justification.
        why: String,
    },
}

impl Question {
    /// The name the question asks under: the rule, or `loses-work`.
    pub fn rule(&self) -> &str {
        match self {
            Question::LosesWork { .. } => LOSES_WORK,
            Question::Rule { rule, .. } => rule,
        }
    }

    /// Why it asks, in a phrase.
    pub fn why(&self) -> &str {
        match self {
            Question::LosesWork { why } | Question::Rule { why, .. } => why,
        }
    }

    /// One question for both, since one yes runs the line: work that
    /// cannot be undone asks under its own name, whatever else asks, and
    /// the user reads every reason.
    pub fn and(self, other: Question) -> Question {
        let (first, second) = match other {
            Question::LosesWork { .. } if !matches!(self, Question::LosesWork { .. }) => {
                (other, self)
            }
            _ => (self, other),
        };
        let why = format!("{}; and {}", first.why(), second.why());
        match first {
            Question::LosesWork { .. } => Question::LosesWork { why },
            Question::Rule { rule, .. } => Question::Rule { rule, why },
        }
    }
}

impl From<ToolError> for Refusal {
    fn from(error: ToolError) -> Refusal {
        Refusal::Refused(error)
    }
}

impl Refusal {
    /// The envelope for the model: a question nobody could ask is a
    /// refusal that says who can still allow the command, and how.
    pub fn into_error(self) -> ToolError {
        match self {
            Refusal::Refused(error) => error,
            Refusal::NeedsApproval(Question::LosesWork { why }) => not_allowed(format!(
                "The command cannot be undone ({why}), so it needs the user's approval, and this client \
                 cannot ask: it does not support elicitation."
            ))
            .recover("Nor another way: ask the user to run it in their own terminal if they mean it."),
            Refusal::NeedsApproval(Question::Rule { rule, why }) if rule == judge::OTHER_HOST => {
                not_allowed(format!(
                    "The command needs the user's approval ({why}), and this client cannot ask: it does not \
                     support elicitation. The user can add the host to WAMCP_COMMAND_HOSTS."
                ))
            }
            Refusal::NeedsApproval(Question::Rule { rule, why }) => not_allowed(format!(
                "The command needs the user's approval ({why}), and this client cannot ask: it does not \
                 support elicitation. The user can allow it for good by extending the '{rule}' grammar, or \
                 adding a rule, in the file named by WAMCP_COMMAND_RULES."
            )),
        }
    }
}

/// Output kept from the end of each stream, besides its first 64 KiB.
const TAIL_BYTES: usize = 16 * 1024;

/// What decides where and how a command may run.
pub struct Policy<'a> {
    /// The server's working directory (the default place to run).
    pub cwd: &'a Path,
    /// The writable roots, resolved.
    pub roots: &'a [PathBuf],
    /// The writable roots that are projects (not the download folder):
    /// the only places a command may start in.
    pub projects: &'a [PathBuf],
    /// The grammars and rules commands are judged by.
    pub rules: &'a RuleSet,
    /// How the OS layer confines what runs.
    pub sandbox: &'a Sandbox,
    /// Where programs are found, outside every place the agent writes.
    pub search: ProgramSearch,
    /// The roots the undo journal keeps whole (see [`Judge`]).
    pub journaled: Vec<PathBuf>,
    /// What git's program-running settings are pinned to
    /// ([`Sandbox::git_pins`]).
    pub git: wamcp_policy::command::hardening::GitPins,
}

impl Policy<'_> {
    /// How commands are judged under this policy's OS layer.
    pub fn posture(&self) -> Posture {
        self.sandbox.posture()
    }

    /// What commands are judged by.
    pub fn judge(&self) -> Judge<'_> {
        Judge {
            rules: self.rules,
            roots: self.roots,
            posture: self.posture(),
            search: &self.search,
            journaled: &self.journaled,
            git: &self.git,
            egress: self.sandbox.egress(),
        }
    }

    /// What runs for `command`: the checked line, its working directory,
    /// then for each command its program, confinement and limits, decided
    /// in that order for `run_powershell` and `build_project` alike.
    pub(crate) fn plan(
        &self,
        command: &str,
        asked_dir: Option<&str>,
        approval: Approval,
        timeout_seconds: u64,
        keep_tail: usize,
    ) -> Result<Plan, Refusal> {
        // Judged where it will run (relative program paths and what a
        // delete would reach lead there); a bad directory is reported only
        // after the command, so a refused command is named first.
        let base = working_directory(asked_dir, "working_directory", self.cwd, self.projects);
        let place = match &base {
            Ok(dir) => dir.clone(),
            Err(_) => asked_dir.map_or_else(|| self.cwd.to_path_buf(), |d| self.cwd.join(d)),
        };
        let line = check(command, &self.judge(), approval, &place)?;
        let cwd = match &line.dir {
            None => base?,
            Some(cd) => {
                let moved = place.join(cd).display().to_string();
                working_directory(Some(&moved), "working_directory", self.cwd, self.projects)?
            }
        };
        let mut steps = Vec::new();
        for step in line.steps {
            let timeout = step
                .timeout
                .map_or(timeout_seconds, |t| t.min(timeout_seconds));
            let keep_head = if step.filters.is_empty() {
                MAX_PROCESS_OUTPUT_BYTES
            } else {
                FILTERED_BYTES
            };
            let (spec, git_config) =
                self.spec(step.checked, &cwd, timeout, keep_head, keep_tail)?;
            steps.push(Planned {
                git_config,
                note: [skipped_hooks(&spec), withheld_keys(&spec)]
                    .into_iter()
                    .flatten()
                    .reduce(|a, b| format!("{a}\n{b}")),
                spec,
                join: step.join,
                stderr: step.stderr,
                filters: step.filters,
                shown: step.shown,
                argv: step.argv,
                targets: step.targets,
            });
        }
        Ok(Plan {
            steps,
            plain: line.plain,
            approved: approval == Approval::Granted,
        })
    }

    /// The one command a build runs: a line of anything else is refused.
    pub(crate) fn plan_one(
        &self,
        command: &str,
        asked_dir: Option<&str>,
        approval: Approval,
        timeout_seconds: u64,
        keep_tail: usize,
    ) -> Result<RunSpec, Refusal> {
        let plan = self.plan(command, asked_dir, approval, timeout_seconds, keep_tail)?;
        match (plan.plain, plan.steps.into_iter().next()) {
            (true, Some(step)) => Ok(step.spec),
            _ => Err(Refusal::Refused(not_allowed(
                "build_project runs one build command with plain arguments; run chains, filters and \
                 variables through run_powershell."
                    .into(),
            ))),
        }
    }

    /// How one checked command runs in `cwd`.
    fn spec(
        &self,
        checked: Checked,
        cwd: &Path,
        timeout_seconds: u64,
        keep_head: usize,
        keep_tail: usize,
    ) -> Result<(RunSpec, Option<PathBuf>), Refusal> {
        let Checked {
            program,
            args,
            env,
            network,
            local_programs,
            hosts,
        } = checked;
        if let Some((index, c, becomes)) = ansi_look_alike(&args, best_fit_ascii) {
            return Err(Refusal::Refused(not_allowed(format!(
                "Argument {index} holds '{c}' (U+{:04X}), which a program reading its command line in this \
                 machine's ANSI code page receives as '{becomes}', so it would not get the argument that was \
                 checked. Type the ASCII character instead.",
                c as u32
            ))));
        }
        // git found by name on the trusted search path, never a program of
        // the project that calls itself git.
        let is_git = !local_programs
            && ["git", "git.exe"]
                .iter()
                .any(|name| program.eq_ignore_ascii_case(name));
        let search = match local_programs {
            true => self
                .search
                .clone()
                .with_local(local::program_folders(cwd, self.roots)),
            false => self.search.clone(),
        };
        let program = if cfg!(windows) {
            windows_program(program, &args, &search)?
        } else {
            unix_program(program, &search)
        };
        let mut confinement = self.sandbox.confinement(self.roots, network)?;
        if let Some(confinement) = confinement.as_mut() {
            confinement.grant(hosts);
        }
        let mut guarded = None;
        if let Some(confinement) = confinement.as_mut()
            && is_git
        {
            let acted_on = git_directory(cwd, &args);
            let repository = crate::repository::Repository::enclosing(&acted_on);
            let clean = repository
                .as_ref()
                .is_none_or(|r| r.programs_in_config().is_empty());
            let protected = confinement.owned_by_git(
                repository.as_ref().map(|r| r.dot_git.as_path()),
                network,
                clean,
            );
            // git may write its own config (an upstream, a branch), never
            // a program for the user's git to run later.
            if protected {
                guarded = repository.map(|r| r.common_dir.join("config"));
            }
        }
        let spec = RunSpec {
            program,
            args,
            env,
            cwd: cwd.to_path_buf(),
            timeout: Duration::from_secs(timeout_seconds),
            keep_head,
            keep_tail,
            confinement,
            search,
        };
        Ok((spec, guarded))
    }
}

/// Bytes kept from the start of an output that goes through filters: the
/// filter sees (nearly) all of it, and its own result is bounded after.
const FILTERED_BYTES: usize = 16 * 1024 * 1024;

/// What runs for a line.
pub(crate) struct Plan {
    /// Its commands, in order.
    pub steps: Vec<Planned>,
    /// Whether it is one command with nothing around it.
    pub plain: bool,
    /// Whether the user approved the line (then what it destroys was
    /// shown and allowed).
    pub approved: bool,
}

/// One command of a plan.
pub(crate) struct Planned {
    pub spec: RunSpec,
    pub join: Join,
    pub stderr: Stderr,
    pub filters: Vec<Filter>,
    pub shown: String,
    pub argv: Vec<Arg>,
    pub targets: Vec<Target>,
    /// A line for the answer about what wamcp changed in how it ran.
    pub note: Option<String>,
    /// The config file of the repository a git step may write, kept from
    /// gaining a program-naming key ([`guard_git_config`]).
    pub git_config: Option<PathBuf>,
}

/// Puts `config` back as `before` when a git step added or changed a key
/// that names a program (`core.fsmonitor`, a `!` alias, a filter): a hook
/// or filter running as git's child writes with git's rights. Returns the
/// answer's line.
/// A config file that did not exist (`before` is `None`: a repository
/// the command made) and names a program is removed.
pub(crate) fn guard_git_config(config: &Path, before: Option<&[u8]>) -> Option<String> {
    let after = std::fs::read(config).ok()?;
    if Some(after.as_slice()) == before {
        return None;
    }
    let changed = wamcp_policy::command::hardening::program_keys_changed(
        &String::from_utf8_lossy(before.unwrap_or_default()),
        &String::from_utf8_lossy(&after),
    );
    if changed.is_empty() {
        return None;
    }
    let (dir, name) = (config.parent()?, config.file_name()?);
    let put_back = match before {
        Some(before) => wamcp_platform::atomic::write_atomically(
            dir,
            name,
            before,
            wamcp_platform::atomic::Commit::Replace,
        ),
        None => std::fs::remove_file(config),
    };
    Some(match put_back {
        Ok(()) => format!(
            "[wamcp] The command set {} in {}, which names a program git would run later outside the \
             sandbox; the file was put back as it was.",
            changed.join(", "),
            config.display()
        ),
        Err(e) => format!(
            "[wamcp] The command set {} in {} and it could not be put back ({e}); tell the user.",
            changed.join(", "),
            config.display()
        ),
    })
}

/// The git config files of the repositories at the top of each root and
/// up to two folders below it (where editors look for repositories), the
/// build and tool folders aside: a nested repository's config is plain
/// project data to a command, and an editor's git obeys it.
pub(crate) fn repository_configs(roots: &[PathBuf]) -> Vec<PathBuf> {
    // config.worktree too: git reads it once the config turns the
    // extension on, which names no program itself.
    repository_folders(roots)
        .into_iter()
        .flat_map(|dot_git| ["config", "config.worktree"].map(|name| dot_git.join(name)))
        .filter(|config| config.is_file())
        .collect()
}

/// The `.git` folders of the repositories at the top of each root and up
/// to two folders below it, the build and tool folders aside.
pub(crate) fn repository_folders(roots: &[PathBuf]) -> Vec<PathBuf> {
    /// Entries read per folder: a huge folder is not a place for repositories.
    const PER_FOLDER: usize = 2000;
    let subfolders = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .take(PER_FOLDER)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .filter(|e| {
                        e.file_name()
                            .to_str()
                            .is_some_and(|n| !wamcp_policy::skip::is_skipped_directory(n))
                    })
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut folders: Vec<PathBuf> = Vec::new();
    for root in roots {
        folders.push(root.clone());
        for child in subfolders(root) {
            folders.extend(subfolders(&child));
            folders.push(child);
        }
    }
    folders
        .into_iter()
        .map(|dir| dir.join(".git"))
        .filter(|dot_git| dot_git.is_dir())
        .collect()
}

/// The folder git acts in: the working directory, moved by each `-C`
/// among git's own options (those before the subcommand: `log -C` is
/// another option).
pub(crate) fn git_directory(cwd: &Path, args: &[impl AsRef<str>]) -> PathBuf {
    let mut dir = cwd.to_path_buf();
    let mut words = args.iter().map(AsRef::as_ref);
    while let Some(word) = words.next() {
        match word {
            "-C" => dir = dir.join(words.next().unwrap_or_default()),
            "-c" => {
                words.next();
            }
            option if option.starts_with('-') => {}
            _ => break,
        }
    }
    dir
}

/// The answer's line for a git command whose repository has hooks that
/// were kept from running: where the OS layer cannot keep `.git`
/// read-only to every program but git, a hook could be one a script
/// planted, so none runs, and the answer says so instead of letting a
/// commit the user's own checks would stop pass silently.
fn skipped_hooks(spec: &RunSpec) -> Option<String> {
    let pinned = spec.env.iter().any(|(_, v)| v == "core.hooksPath");
    if !pinned || wamcp_policy::command::rules::program_name(&spec.program) != "git" {
        return None;
    }
    let repo = crate::repository::Repository::enclosing(&spec.cwd)?;
    repo.has_hooks().then(|| {
        "[wamcp] The repository's git hooks did not run: a hook runs with .git writable, and it or the \
         project scripts it calls could be ones a command changed (core.hooksPath may also point into \
         the work tree). Run the checks the hooks would run yourself, or ask the user to commit."
            .to_string()
    })
}

/// The answer's line for a git with the network that ran without the SSH
/// keys, agent and credential files: its repository's `.git` is not one
/// the OS layer keeps from scripts, so a program its config names could be
/// a script's, and would run with them in view.
fn withheld_keys(spec: &RunSpec) -> Option<String> {
    spec.confinement
        .as_ref()
        .is_some_and(|c| c.keys_withheld())
        .then(|| {
            "[wamcp] git ran without the SSH keys, agent and credential files: this repository's config \
             names a program git would run (a submodule update command, a filter or merge driver, an \
             include), or its .git is not one wamcp keeps from scripts (deeper than two folders below a \
             root, or outside the roots), so a script could have put that program there. A public remote \
             still works; for one that needs signing in, ask the user to run the command."
                .to_string()
        })
}

/// Why git, judged to act on one repository with its `.git` writable or
/// the keys in view, may not start now: an earlier command of the line
/// made another repository where it acts, or wrote a program into the
/// config of the one judged. `None` when it acts as judged.
pub(crate) fn git_changed_since_judged(spec: &RunSpec) -> Option<String> {
    let confinement = spec.confinement.as_ref()?;
    let judged = confinement.acted_on()?;
    let now = crate::repository::Repository::enclosing(&git_directory(&spec.cwd, &spec.args));
    if now.as_ref().map(|r| r.dot_git.as_path()) != judged {
        return Some("git would act on another repository than the one judged".into());
    }
    let programs = now.map(|r| r.programs_in_config()).unwrap_or_default();
    let keys = confinement.scope.network && !confinement.keys_withheld();
    (keys && !programs.is_empty()).then(|| {
        format!(
            "the repository's config now names programs git would run ({})",
            programs.join(", ")
        )
    })
}

/// The file to start for `program` on Unix: a name is found here on the
/// child's `PATH` by the search, which skips a file that is a link into a
/// place the agent writes (`execvp` would follow it); a path, or a name
/// found nowhere, is left for the launch (which then reports it).
fn unix_program(program: String, search: &ProgramSearch) -> String {
    if program.contains('/') {
        return program;
    }
    search
        .find_program(&program)
        .map_or(program, |found| found.display().to_string())
}

/// The file Windows will start for `program`, found once here (the launch
/// then starts exactly it), or the name as given when none is found (the
/// launch reports that). A batch file (`npm` is `npm.cmd`) runs through
/// `cmd.exe`, which cannot be handed some arguments without reading them as
/// commands; those are refused here, before anything starts, with the
/// reason (the standard library and the confining helper would refuse them
/// too, less clearly).
pub fn windows_program(
    program: String,
    args: &[String],
    search: &ProgramSearch,
) -> Result<String, ToolError> {
    let Some(resolved) = search.resolve_program(&program) else {
        return Ok(program);
    };
    let script = resolved.display().to_string();
    if !is_batch_file(&script) {
        return Ok(script);
    }
    batch_command_line(&script, args)
        .map(|_| script.clone())
        .map_err(|why| {
            ToolError::new(
                ErrorType::CommandNotAllowed,
                format!(
                    "'{program}' is the batch file '{script}', which runs through cmd.exe: {why}."
                ),
            )
            .recover(
                "Pass multi-line text through a file the command reads instead of an argument.",
            )
        })
}

/// A `run_powershell` call's arguments.
pub struct CommandRequest<'a> {
    /// The command line as the model wrote it.
    pub command: &'a str,
    /// As asked; clamped to the tool's limits.
    pub timeout_seconds: i64,
    /// Relative to the server's working directory; must be in a project.
    pub working_directory: Option<&'a str>,
}

/// Checks and runs a command line; the text names each command's stdout,
/// stderr and exit code.
pub async fn run_command(
    req: &CommandRequest<'_>,
    policy: &Policy<'_>,
    approval: Approval,
    progress: Option<Progress<'_>>,
) -> Result<String, Refusal> {
    let plan = policy.plan(
        req.command,
        req.working_directory,
        approval,
        clamp_request(req.timeout_seconds, MAX_POWERSHELL_TIMEOUT_SECONDS).0,
        TAIL_BYTES,
    )?;
    Ok(steps::run_plan(&plan, &policy.judge(), progress).await?)
}

/// The refusal of every tool that starts a program when no project folder
/// is known. Only the user can name one, so it says how, and that no call
/// can help. The download folder never stands in: it is the server's own,
/// and a command run there once initialised a git repository in it.
pub fn no_project_root() -> ToolError {
    ToolError::new(
        ErrorType::NoProjectRoot,
        "No project folder is known, so there is nowhere to run programs.",
    )
    .recover(
        "Ask them to set WAMCP_PROJECT_ROOTS to its folder in wamcp's entry, to use a client that shares \
         its workspace as MCP roots, or to start wamcp in the project with WAMCP_WORKSPACE_FROM_CWD=1.",
    )
}

/// The directory to run in: the one asked for through the tool's `param`,
/// else the server's working directory, else the first project root; it
/// must be inside a project root.
pub fn working_directory(
    asked: Option<&str>,
    param: &str,
    cwd: &Path,
    projects: &[PathBuf],
) -> Result<PathBuf, ToolError> {
    if projects.is_empty() {
        return Err(no_project_root());
    }
    let inside = |dir: &Path| inside_a_root(dir, projects);
    let chosen = match asked.map(str::trim).filter(|s| !s.is_empty()) {
        Some(raw) => {
            let dir = dunce::canonicalize(cwd.join(raw)).map_err(|e| {
                ToolError::new(
                    ErrorType::WorkingDirectoryNotAllowed,
                    format!("{param} '{raw}' cannot be used: {e}."),
                )
                .with_path(raw)
            })?;
            if !dir.is_dir() {
                return Err(ToolError::new(
                    ErrorType::WorkingDirectoryNotAllowed,
                    format!("{param} '{raw}' is not a directory."),
                )
                .with_path(raw));
            }
            dir
        }
        None => match dunce::canonicalize(cwd).ok().filter(|d| inside(d)) {
            Some(dir) => dir,
            None => projects
                .iter()
                .find(|r| r.is_dir())
                .cloned()
                .ok_or_else(no_project_root)?,
        },
    };
    // A command run inside `.git` (or `.claude`...) writes its outputs there
    // by their plain names: `git log --output=config` plants git's config.
    let shown = chosen.display().to_string();
    if let Some(why) = wamcp_policy::write_rules::names_trust_location(&shown) {
        return Err(ToolError::new(
            ErrorType::WorkingDirectoryNotAllowed,
            format!("'{shown}' holds {why}; programs do not run there."),
        )
        .recover(format!("Pass a {param} in the project instead.")));
    }
    if !inside(&chosen) {
        let projects: Vec<String> = projects.iter().map(|r| r.display().to_string()).collect();
        return Err(ToolError::new(
            ErrorType::WorkingDirectoryNotAllowed,
            format!(
                "{param} '{}' is outside the project folders programs may run in.",
                chosen.display()
            ),
        )
        .detail("allowed", projects.clone())
        .recover(format!(
            "Pass a {param} inside one of: {}.",
            projects.join(", ")
        )));
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests;
