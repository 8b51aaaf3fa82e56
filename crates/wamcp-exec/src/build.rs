//! `build_project`: one build driver, run as checked argv, its output turned
//! into a diagnostics report.
//!
//! One build at a time per project root: two builds of one tree race on the
//! same object files and produce errors that belong to neither.

use crate::build_report::{Build, History};
use crate::command::{Approval, Policy, Refusal};
use crate::confine::refusal_note;
use crate::{Progress, run_reporting};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::command::drivers::{BUILD_COMMANDS, is_build_driver, with_quiet_logging};
use wamcp_policy::command::tokenize::tokenize;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::{MAX_BUILD_TIMEOUT_SECONDS, clamp_request};
use wamcp_policy::workspace::PathStyle;
use wamcp_policy::write_rules::is_within;

/// Output kept from the end of each stream, besides its first 64 KiB: the
/// verdict and the last errors of a long build are at the end.
const TAIL_BYTES: usize = 64 * 1024;

/// A `build_project` call's arguments.
pub struct BuildRequest<'a> {
    /// The build command line; its first word must be a build driver.
    pub command: &'a str,
    /// How long the build may take, as asked; clamped to
    /// `1..=MAX_BUILD_TIMEOUT_SECONDS`.
    pub timeout_seconds: i64,
    /// Where to run, inside a project root; unset, the server's working
    /// directory or the first root.
    pub working_directory: Option<&'a str>,
}

/// What builds share across calls: which roots are building, and what
/// each command's last build reported.
#[derive(Default)]
pub struct Builds {
    /// The roots with a build running.
    pub locks: BuildLocks,
    /// What each command's last build reported,
    /// to mark diagnostics new or seen.
    pub history: History,
}

/// The project roots with a build running in them.
#[derive(Default)]
pub struct BuildLocks(Mutex<HashSet<PathBuf>>);

/// Holds a root's lock until dropped, also when the build is cancelled.
pub struct BuildGuard<'a> {
    locks: &'a BuildLocks,
    root: PathBuf,
}

impl BuildLocks {
    /// Takes `root`'s lock, or `None` while another build holds it.
    pub fn try_lock(&self, root: &Path) -> Option<BuildGuard<'_>> {
        let mut running = self.0.lock().unwrap_or_else(|e| e.into_inner());
        running.insert(root.to_path_buf()).then(|| BuildGuard {
            locks: self,
            root: root.to_path_buf(),
        })
    }
}

impl Drop for BuildGuard<'_> {
    fn drop(&mut self) {
        let mut running = self.locks.0.lock().unwrap_or_else(|e| e.into_inner());
        running.remove(&self.root);
    }
}

/// Judged before the policy, so "not a build driver" is the answer for
/// any other program; a command that does not even tokenise is left to
/// the policy.
pub fn not_a_build_driver(command: &str) -> Result<(), ToolError> {
    let first = tokenize(command)
        .ok()
        .and_then(|argv| argv.into_iter().next())
        .map(|a| a.text);
    match first {
        Some(first) if !is_build_driver(&first) => Err(ToolError::new(
            ErrorType::NotABuildCommand,
            format!("'{first}' is not a build driver."),
        )
        .recover(format!(
            "build_project runs only: {}.",
            BUILD_COMMANDS.join(", ")
        ))
        .recover("Use run_powershell for other allowed commands.")),
        _ => Ok(()),
    }
}

/// Runs one build driver as checked argv and answers with its diagnostics
/// report. At most one build runs per project root.
pub async fn build_project(
    req: &BuildRequest<'_>,
    policy: &Policy<'_>,
    builds: &Builds,
    approval: Approval,
    progress: Option<Progress<'_>>,
) -> Result<String, Refusal> {
    not_a_build_driver(req.command)?;
    let mut spec = policy.plan_one(
        req.command,
        req.working_directory,
        approval,
        clamp_request(req.timeout_seconds, MAX_BUILD_TIMEOUT_SECONDS).0,
        TAIL_BYTES,
    )?;
    spec.args = with_quiet_logging(&spec.program, &spec.args);
    let (program, dir, timeout) = (
        spec.program.clone(),
        spec.cwd.clone(),
        spec.timeout.as_secs(),
    );
    let root = owning_root(&dir, policy.roots);
    let Some(_guard) = builds.locks.try_lock(&root) else {
        return Err(ToolError::new(
            ErrorType::BuildAlreadyRunning,
            format!("A build is already running in {}.", root.display()),
        )
        .retryable("Wait for it to finish; two builds of one tree corrupt each other's outputs.")
        .into());
    };
    let out = run_reporting(&spec, progress).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ToolError::new(
                ErrorType::BuildToolNotFound,
                format!("'{program}' was not found on the PATH."),
            )
            .recover(
                "Ask the user to install it or add it to PATH; it is searched again on every call.",
            )
        } else {
            ToolError::new(
                ErrorType::BuildStartFailed,
                format!("'{program}' could not be started: {e}."),
            )
        }
    })?;
    let output = format!("{}\n{}", out.stdout.render(), out.stderr.render());
    let build = Build {
        subject: "BUILD",
        command: req.command,
        exit_code: out.exit_code,
        elapsed: Some(out.elapsed),
        output: &output,
        build_dir: &dir,
    };
    let mut text = builds
        .history
        .report(&root, &driver_identity(&spec.search, &program), &build);
    if let Some(note) = refusal_note(&out, &output) {
        text = format!("{}\n{note}\n", text.trim_end());
    }
    if out.timed_out {
        return Err(ToolError::new(
            ErrorType::BuildTimedOut,
            format!(
                "The build ran longer than {timeout} s; it and every process it started were killed."
            ),
        )
        .retryable("Raise timeout_seconds (at most 1800), or build a smaller target.")
        .detail("partial_report", text)
        .into());
    }
    Ok(text)
}

/// The program that ran, as found now, with its timestamp: a different
/// compiler (or an upgrade) makes the last build's diagnostics incomparable.
fn driver_identity(search: &ProgramSearch, program: &str) -> String {
    let found = search
        .resolve_program(program)
        .unwrap_or_else(|| PathBuf::from(program));
    let stamp = std::fs::metadata(&found)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    format!("{}@{stamp}", found.display())
}

/// The innermost root holding `dir`; the build lock is per root.
fn owning_root(dir: &Path, roots: &[PathBuf]) -> PathBuf {
    roots
        .iter()
        .filter(|r| {
            is_within(
                &dir.display().to_string(),
                &r.display().to_string(),
                PathStyle::native(),
            )
        })
        .max_by_key(|r| r.as_os_str().len())
        .cloned()
        .unwrap_or_else(|| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_build_per_root_until_the_guard_drops() {
        let locks = BuildLocks::default();
        let root = Path::new("/p");
        let guard = locks.try_lock(root).expect("first");
        assert!(locks.try_lock(root).is_none());
        assert!(locks.try_lock(Path::new("/q")).is_some());
        drop(guard);
        assert!(locks.try_lock(root).is_some());
    }

    #[test]
    fn the_innermost_root_owns_a_directory() {
        let p = PathBuf::from(if cfg!(windows) { r"C:\p" } else { "/p" });
        let roots = [p.clone(), p.join("sub")];
        assert_eq!(
            owning_root(&p.join("sub").join("build"), &roots),
            p.join("sub")
        );
        assert_eq!(owning_root(&p.join("x"), &roots), p);
    }
}
