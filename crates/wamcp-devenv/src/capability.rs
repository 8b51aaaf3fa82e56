//! `capability_run`: plan or run one catalog capability.
//!
//! A plan names exactly what would run — the argv, the executable file and
//! its SHA-256 — so that a person (or a host's permission prompt) reviews
//! something concrete. A run given the reviewed identity refuses with
//! `stale_plan` when the file found now is another one (a different `PATH`,
//! an upgrade, a planted binary). Runs go through the same OS confinement
//! as every other command, with no shell and stdin closed.

use crate::audit_log::Entry;
use crate::sources::Sources;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wamcp_exec::confine::{Sandbox, refusal_note};
use wamcp_exec::{Progress, RunSpec};
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::command::hardening::child_env;
use wamcp_policy::command::rules::program_name;
use wamcp_policy::devenv::audit::{Event, Outcome};
use wamcp_policy::devenv::catalog::{self, Capability};
use wamcp_policy::devenv::safety::Safety;
use wamcp_policy::error::{ErrorType, ToolError};

/// The longest capability id a call may name.
pub const MAX_CAPABILITY_CHARS: usize = 256;
/// The most `extra_args` one call may append.
pub const MAX_EXTRA_ARGS: usize = 128;
/// The longest single extra argument, in characters.
pub const MAX_ARG_CHARS: usize = 32_768;
/// The longest `expected_executable` path accepted.
pub const MAX_EXPECTED_CHARS: usize = 4096;
/// The timeout of a run when the call gives none.
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 120;
/// The longest `timeout_seconds` a call may
/// ask for; more is refused, not clamped.
pub const MAX_TIMEOUT_SECONDS: i64 = 600;
/// Characters of output kept from the end of each stream.
pub const STDOUT_TAIL_CHARS: usize = 8000;
/// Characters of standard error kept from its end.
pub const STDERR_TAIL_CHARS: usize = 4000;

/// The catalog in force and what went wrong loading the user's part.
#[derive(Clone, Debug)]
pub struct Catalog {
    /// The capabilities in force: the built-in ones, merged with the user's
    /// when their file is usable.
    pub capabilities: Vec<Capability>,
    /// The user's catalog file, when one is
    /// configured, whether or not it could be used.
    pub user_file: Option<PathBuf>,
    /// What is wrong with the user's file, each
    /// naming it; non-empty means no capability runs.
    pub errors: Vec<String>,
}

impl Catalog {
    /// The catalog with the user's `file`, unless it lies in one of the
    /// `writable` places (resolved), where a command could rewrite it: then
    /// it is not read, and counts as a mistake, so nothing runs until the
    /// user moves it.
    pub fn load_trusted(file: Option<PathBuf>, writable: &[PathBuf]) -> Catalog {
        let Some(held) = file
            .as_deref()
            .and_then(|path| wamcp_platform::paths::holding(path, writable))
        else {
            return Catalog::load(file);
        };
        let mut catalog = Catalog::load(None);
        catalog.errors.push(format!(
            "{} is {held}; it is not read, and no capability runs until the user moves it outside the \
             writable roots and caches",
            file.as_deref().map(|p| p.display().to_string()).unwrap_or_default(),
        ));
        catalog.user_file = file;
        catalog
    }

    /// The built-in catalog merged with `user_file`'s; a broken user file
    /// leaves the built-in one in force and its problems in `errors`.
    pub fn load(user_file: Option<PathBuf>) -> Catalog {
        let builtin = catalog::builtin();
        let Some(path) = user_file else {
            return Catalog {
                capabilities: builtin,
                user_file: None,
                errors: Vec::new(),
            };
        };
        let read = std::fs::File::open(&path).and_then(|file| {
            let mut text = String::new();
            file.take(catalog::MAX_FILE_BYTES as u64 + 1)
                .read_to_string(&mut text)
                .map(|_| text)
        });
        let (capabilities, errors) = match read {
            Ok(text) => match catalog::parse(&text, true) {
                Ok(user) => (catalog::merge(builtin, Some(user)), Vec::new()),
                Err(problems) => (builtin, problems),
            },
            Err(e) => (builtin, vec![format!("cannot be read: {e}")]),
        };
        let shown = path.display().to_string();
        Catalog {
            capabilities,
            errors: errors
                .into_iter()
                .map(|e| format!("{shown}: {e}"))
                .collect(),
            user_file: Some(path),
        }
    }

    /// The capability with exactly this id.
    pub fn get(&self, id: &str) -> Option<&Capability> {
        self.capabilities.iter().find(|c| c.id == id)
    }
}

/// The alternative that would run: its argv and the file found for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The alternative's argv, as the catalog lists it.
    pub argv: Vec<String>,
    /// The file that would run for its program.
    pub executable: PathBuf,
}

/// The first alternative whose program is found.
pub fn resolve(sources: &dyn Sources, capability: &Capability) -> Option<Resolved> {
    capability.argv.iter().find_map(|argv| {
        let program = Path::new(&argv[0]);
        let executable = if program.is_absolute() {
            (program.is_file() && sources.trusted_program(program)).then(|| program.to_path_buf())
        } else {
            sources.program(&argv[0])
        }?;
        Some(Resolved {
            argv: argv.clone(),
            executable,
        })
    })
}

/// What identifies the executable a plan reviewed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// `file`, or `app_execution_alias` for the Store's zero-byte stand-ins,
    /// which cannot be opened and are identified by their path.
    pub kind: &'static str,
    /// The SHA-256 of the file's bytes (of its
    /// path, for an alias), lower-case hex.
    pub sha256: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The executable's identity, read now.
pub fn identity(path: &Path) -> std::io::Result<Identity> {
    let alias = path
        .to_string_lossy()
        .to_ascii_lowercase()
        .contains("\\microsoft\\windowsapps\\");
    match std::fs::File::open(path) {
        Ok(mut file) => {
            let mut hasher = Sha256::new();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = file.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
            }
            Ok(Identity {
                kind: "file",
                sha256: hex(&hasher.finalize()),
            })
        }
        Err(_) if alias => Ok(Identity {
            kind: "app_execution_alias",
            sha256: hex(&Sha256::digest(
                path.to_string_lossy().to_lowercase().as_bytes(),
            )),
        }),
        Err(e) => Err(e),
    }
}

/// A `capability_run` call as received.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The capability id, as the call gave it.
    pub capability: String,
    /// Arguments appended to the capability's
    /// argv; any make the call approval-required.
    pub extra_args: Vec<String>,
    /// The directory to run in, inside a project
    /// root; unset, the server's or the first root.
    pub cwd: Option<String>,
    /// Run, rather than only plan.
    pub execute: bool,
    /// The executable the plan showed, which a run must still find.
    pub expected: Expected,
    /// How long a run may take, 1 to [`MAX_TIMEOUT_SECONDS`].
    pub timeout_seconds: i64,
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ErrorType::InvalidInput, message)
        .recover("Fix the argument the message names.")
        .detail("status", "invalid_input")
}

/// Checks the call's arguments against their length and count limits.
pub fn validate(req: &Request) -> Result<(), ToolError> {
    let id_chars = req.capability.chars().count();
    if req.capability.trim().is_empty() || id_chars > MAX_CAPABILITY_CHARS {
        return Err(invalid(format!(
            "capability must be 1-{MAX_CAPABILITY_CHARS} characters (got {id_chars})."
        )));
    }
    if req.extra_args.len() > MAX_EXTRA_ARGS {
        return Err(invalid(format!(
            "extra_args holds {} items; at most {MAX_EXTRA_ARGS}.",
            req.extra_args.len()
        )));
    }
    if let Some((n, _)) = req
        .extra_args
        .iter()
        .enumerate()
        .find(|(_, a)| a.contains('\0') || a.chars().count() > MAX_ARG_CHARS)
    {
        return Err(invalid(format!(
            "extra_args item {} holds a NUL character or is longer than {MAX_ARG_CHARS} characters.",
            n + 1
        )));
    }
    if !(1..=MAX_TIMEOUT_SECONDS).contains(&req.timeout_seconds) {
        return Err(invalid(format!(
            "timeout_seconds must be 1-{MAX_TIMEOUT_SECONDS} (got {}).",
            req.timeout_seconds
        )));
    }
    req.expected.validate(req.execute)
}

/// The executable a plan named, as a run repeats it from the plan
/// (`expected_executable`, `expected_executable_identity_kind`,
/// `expected_executable_identity_sha256`); each part is checked when given.
#[derive(Clone, Debug, Default)]
pub struct Expected {
    /// The executable's path as the plan showed it.
    pub executable: Option<String>,
    /// `file` or `app_execution_alias`, as the plan showed it.
    pub kind: Option<String>,
    /// The SHA-256 the plan showed, hex.
    pub sha256: Option<String>,
}

impl Expected {
    /// Checks the values' form (length, kind, hex digest), and that a call
    /// that runs (`execute`) names all three: what runs must be exactly what
    /// the user reviewed in the plan, so a run without the reviewed
    /// identity is not a run of that plan.
    pub fn validate(&self, execute: bool) -> Result<(), ToolError> {
        if execute && (self.executable.is_none() || self.kind.is_none() || self.sha256.is_none()) {
            return Err(ToolError::new(
                ErrorType::InvalidInput,
                "execute=true needs the identity the plan reviewed: expected_executable, \
                 expected_executable_identity_kind and expected_executable_identity_sha256.",
            )
            .recover("Call again with execute=false, show the plan to the user, then pass its three values.")
            .detail("status", "invalid_input"));
        }
        if self
            .executable
            .as_ref()
            .is_some_and(|e| e.chars().count() > MAX_EXPECTED_CHARS)
        {
            return Err(invalid(format!(
                "expected_executable is longer than {MAX_EXPECTED_CHARS} characters."
            )));
        }
        if let Some(kind) = &self.kind
            && !["file", "app_execution_alias"].contains(&kind.as_str())
        {
            return Err(invalid(format!(
                "expected_executable_identity_kind must be 'file' or 'app_execution_alias' (got '{kind}')."
            )));
        }
        if let Some(sha) = &self.sha256
            && (sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(invalid(
                "expected_executable_identity_sha256 must be 64 hexadecimal characters.".into(),
            ));
        }
        Ok(())
    }
    /// How the executable found now (`now`, read as `identity`) differs
    /// from the one the plan reviewed; empty when it does not.
    pub fn stale_reasons(&self, now: &Path, identity: Option<&Identity>) -> Vec<String> {
        let now = now.display().to_string();
        let mut stale = Vec::new();
        if let Some(expected) = &self.executable
            && !same_path(expected, &now)
        {
            stale.push(format!("the executable is now '{now}', not '{expected}'"));
        }
        match (identity, &self.kind, &self.sha256) {
            (None, Some(_), _) | (None, _, Some(_)) => {
                stale.push("the executable can no longer be read to check its identity".into())
            }
            (Some(id), kind, sha) => {
                if kind.as_deref().is_some_and(|k| k != id.kind) {
                    stale.push(format!("its identity kind is now '{}'", id.kind));
                }
                if sha
                    .as_deref()
                    .is_some_and(|s| !s.eq_ignore_ascii_case(&id.sha256))
                {
                    stale.push("its SHA-256 differs from the reviewed one".into());
                }
            }
            (None, None, None) => {}
        }
        stale
    }
}

/// Everything decided before anything runs.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The catalog entry.
    pub capability: Capability,
    /// The call's safety class: the entry's, raised by extra arguments.
    pub effective: Safety,
    /// The call's appended arguments.
    pub extra_args: Vec<String>,
    /// The alternative that would run; `None`
    /// when no program of the entry is found.
    pub resolved: Option<Resolved>,
    /// The identity of that executable, read
    /// now; `None` when it cannot be read.
    pub identity: Option<Identity>,
    /// The checked working directory.
    pub cwd: PathBuf,
    /// How long the run may take.
    pub timeout: Duration,
}

impl Prepared {
    /// The argv that would run: the alternative found (else the first) and
    /// the extra arguments.
    pub fn argv(&self) -> Vec<String> {
        let base = match &self.resolved {
            Some(r) => r.argv.clone(),
            None => self.capability.argv[0].clone(),
        };
        base.into_iter()
            .chain(self.extra_args.iter().cloned())
            .collect()
    }

    /// The trail entry for this capability with
    /// `outcome`; `started` gives the duration.
    pub fn audit(
        &self,
        outcome: Outcome,
        started: Option<Instant>,
        detail: Option<String>,
    ) -> Entry {
        Entry {
            tool: "capability_run",
            subject: Some(self.capability.id.clone()),
            safety: Some(self.effective),
            event: Event::Execution,
            outcome,
            duration: started.map_or(Duration::ZERO, |s| s.elapsed()),
            detail,
        }
    }

    /// The fields every answer about this capability carries.
    fn view(&self, status: &str) -> Value {
        json!({
            "status": status,
            "capability": self.capability.id,
            "description": self.capability.description,
            "catalog": if self.capability.from_user { "user" } else { "built-in" },
            "safety": self.capability.safety,
            "effective_safety": self.effective,
            "approval_required": self.effective == Safety::ApprovalRequired,
            "argv": self.argv(),
            "executable": self.resolved.as_ref().map(|r| r.executable.display().to_string()),
            "executable_identity_kind": self.identity.as_ref().map(|i| i.kind),
            "executable_identity_sha256": self.identity.as_ref().map(|i| i.sha256.clone()),
            "cwd": self.cwd.display().to_string(),
            "network": self.capability.network,
            "timeout_seconds": self.timeout.as_secs(),
        })
    }
}

/// Finds the capability, the directory and the executable. `projects` are
/// the project roots (the directory must lie in one).
pub fn prepare(
    req: &Request,
    catalog: &Catalog,
    sources: &dyn Sources,
    server_cwd: &Path,
    projects: &[PathBuf],
) -> Result<Prepared, ToolError> {
    validate(req)?;
    let Some(capability) = catalog.get(req.capability.trim()) else {
        let known: Vec<&str> = catalog.capabilities.iter().map(|c| c.id.as_str()).collect();
        if !catalog.errors.is_empty() {
            return Err(ToolError::new(
                ErrorType::ConfigurationError,
                format!(
                    "No capability '{}' is loaded, and the user's catalog could not be used: {}",
                    req.capability,
                    catalog.errors.join("; ")
                ),
            )
            .recover("Tell the user their capability file needs fixing (get_server_info shows the problems).")
            .detail("status", "configuration_error"));
        }
        return Err(ToolError::new(
            ErrorType::UnknownCapability,
            format!("No capability is called '{}'.", req.capability),
        )
        .recover(format!("Known capabilities: {}.", known.join(", ")))
        .recover("workflow_plan finds the capability that fits a task.")
        .detail("status", "unknown_capability"));
    };
    // The user's file may have removed or restricted a built-in entry:
    // while it cannot be used, nothing runs (plans still show the problem).
    if req.execute && !catalog.errors.is_empty() {
        return Err(ToolError::new(
            ErrorType::ConfigurationError,
            format!(
                "The user's capability catalog cannot be used, so no capability runs: {}",
                catalog.errors.join("; ")
            ),
        )
        .recover("Tell the user their capability file needs fixing (get_server_info shows the problems).")
        .detail("status", "configuration_error"));
    }
    let cwd =
        wamcp_exec::command::working_directory(req.cwd.as_deref(), "cwd", server_cwd, projects)
            .map_err(|e| e.detail("status", "invalid_input"))?;
    let resolved = resolve(sources, capability);
    let identity = resolved.as_ref().and_then(|r| identity(&r.executable).ok());
    Ok(Prepared {
        capability: capability.clone(),
        effective: capability
            .safety
            .with_extra_args(!req.extra_args.is_empty()),
        extra_args: req.extra_args.clone(),
        resolved,
        identity,
        cwd,
        timeout: Duration::from_secs(req.timeout_seconds as u64),
    })
}

/// The answer to `execute=false`.
pub fn plan(p: &Prepared) -> Value {
    if p.resolved.is_none() {
        return unavailable(p);
    }
    let mut view = p.view("planned");
    view["next"] = Value::String(
        "To run exactly this, call capability_run again with execute=true and expected_executable, \
         expected_executable_identity_kind and expected_executable_identity_sha256 set to the values above."
            .into(),
    );
    view
}

fn unavailable(p: &Prepared) -> Value {
    let mut view = p.view("unavailable");
    view["reason"] = Value::String(format!(
        "none of the configured programs ({}) was found on PATH, or as an absolute path outside the writable \
         roots",
        p.capability.programs().collect::<Vec<_>>().join(", ")
    ));
    view
}

/// Why an execution does not start, when it does not.
pub enum Gate {
    /// Free to run (approval, when required, is the caller's to obtain).
    Open,
    /// Not run; the answer says why (`blocked`, `unavailable`, `stale_plan`).
    Refused(Value),
}

/// The checks between a plan and a run: forbidden, not installed, and the
/// reviewed identity.
pub fn gate(p: &Prepared, req: &Request) -> Gate {
    if p.effective == Safety::Forbidden {
        let mut view = p.view("blocked");
        view["reason"] = "the capability is classified forbidden and never runs".into();
        return Gate::Refused(view);
    }
    let Some(resolved) = &p.resolved else {
        return Gate::Refused(unavailable(p));
    };
    let stale = req
        .expected
        .stale_reasons(&resolved.executable, p.identity.as_ref());
    if stale.is_empty() {
        Gate::Open
    } else {
        let mut view = p.view("stale_plan");
        view["reason"] = Value::String(stale.join("; "));
        view["next"] =
            "Nothing ran. Plan again (execute=false), review the new executable, then run with its identity.".into();
        Gate::Refused(view)
    }
}

/// Whether `path` is still the file `reviewed` identified, read again now:
/// checked once more after the user's yes, which may have taken minutes.
pub fn unchanged(path: &Path, reviewed: Option<&Identity>) -> bool {
    identity(path).ok().as_ref() == reviewed
}

fn same_path(a: &str, b: &str) -> bool {
    if cfg!(windows) {
        a.replace('/', "\\")
            .eq_ignore_ascii_case(&b.replace('/', "\\"))
    } else {
        a == b
    }
}

/// The last `n` characters of `text`, and how many were left out.
fn tail(text: &str, n: usize) -> (String, usize) {
    let count = text.chars().count();
    if count <= n {
        return (text.to_string(), 0);
    }
    (text.chars().skip(count - n).collect(), count - n)
}

/// Runs a prepared capability that passed the gate (and approval),
/// confined to `roots`, with the child `PATH` of `programs`.
pub async fn execute(
    p: &Prepared,
    sandbox: &Sandbox,
    roots: &[PathBuf],
    programs: &ProgramSearch,
    progress: Option<Progress<'_>>,
) -> (Value, Entry) {
    let started = Instant::now();
    let refused = |why: String, view: Value| {
        let mut view = view;
        view["status"] = "failed".into();
        view["reason"] = Value::String(why);
        (
            view,
            p.audit(
                Outcome::NotExecuted,
                Some(started),
                Some("not started".into()),
            ),
        )
    };
    let Some(resolved) = &p.resolved else {
        return (unavailable(p), p.audit(Outcome::NotExecuted, None, None));
    };
    let argv = p.argv();
    let mut program = resolved.executable.display().to_string();
    if cfg!(windows) {
        // A batch file runs through cmd.exe, which would read some
        // arguments as commands: those are refused before anything starts.
        program = match wamcp_exec::command::windows_program(program, &argv[1..], programs) {
            Ok(program) => program,
            Err(e) => return refused(e.message, p.view("failed")),
        };
    }
    let confinement = match sandbox.confinement(roots, p.capability.network) {
        Ok(c) => c,
        Err(e) => return refused(e.message, p.view("failed")),
    };
    let spec = RunSpec {
        program,
        args: argv[1..].to_vec(),
        env: child_env(
            &program_name(&argv[0]),
            |k| std::env::var(k).ok(),
            &sandbox.git_pins(programs),
        ),
        cwd: p.cwd.clone(),
        timeout: p.timeout,
        keep_head: 0,
        // Bytes: enough for the character tails below in any script.
        keep_tail: STDOUT_TAIL_CHARS * 4,
        confinement,
        search: programs.clone(),
    };
    let out = match wamcp_exec::run_reporting(&spec, progress).await {
        Ok(out) => out,
        Err(e) => {
            return refused(
                format!("could not start '{}': {e}", argv[0]),
                p.view("failed"),
            );
        }
    };
    answer(p, &out, started)
}

/// The answer and record for a finished run: its status, exit, the ends
/// of its output, and why when it was killed or refused by the OS layer.
fn answer(p: &Prepared, out: &wamcp_exec::RunOutput, started: Instant) -> (Value, Entry) {
    let outcome = Outcome::of_run(out.exit_code, out.timed_out);
    let status = match outcome {
        Outcome::Succeeded => "completed",
        Outcome::Failed => "failed",
        _ => "unknown",
    };
    let (stdout, stdout_cut) = tail(&out.stdout.render(), STDOUT_TAIL_CHARS);
    let stderr_text = out.stderr.render();
    let (stderr, stderr_cut) = tail(&stderr_text, STDERR_TAIL_CHARS);
    let mut view = p.view(status);
    view["exit_code"] = json!(out.exit_code);
    view["timed_out"] = json!(out.timed_out);
    view["duration_ms"] = json!(out.elapsed.as_millis() as u64);
    view["confined"] = json!(out.confined);
    view["stdout_tail"] = Value::String(stdout);
    view["stdout_omitted_chars"] = json!(stdout_cut);
    view["stderr_tail"] = Value::String(stderr);
    view["stderr_omitted_chars"] = json!(stderr_cut);
    if out.timed_out {
        view["reason"] = Value::String(format!(
            "killed after {} s with everything it started; what it changed before that is not known",
            p.timeout.as_secs()
        ));
    }
    if let Some(note) = refusal_note(out, &stderr_text) {
        view["note"] = Value::String(note);
    }
    let detail = match (out.timed_out, out.exit_code) {
        (true, _) => "timed out".to_string(),
        (false, Some(code)) => format!("exit code {code}"),
        (false, None) => "killed by a signal".to_string(),
    };
    (view, p.audit(outcome, Some(started), Some(detail)))
}

#[cfg(test)]
mod tests;
