//! Running a checked line: each command in turn as its operator says,
//! with its standard error merged or dropped and its output filtered by
//! wamcp, and one answer that shows every command's part.
//!
//! `a | grep x && b` runs `b` only when `a` succeeded *and* the filter kept
//! a line: the pipeline fails when any part of it does (Bash's `pipefail`),
//! so a failed test run piped into `tail` does not let a commit after it
//! through.

use super::{Plan, Planned, TAIL_BYTES};
use crate::confine::refusal_note;
use crate::{Progress, RunOutput, run_reporting};
use std::path::PathBuf;
use wamcp_policy::command::line::{Join, Stderr};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::MAX_PROCESS_OUTPUT_BYTES;

/// Runs `plan` and answers with its output.
pub(crate) async fn run_plan(
    plan: &Plan,
    judge: &super::Judge<'_>,
    progress: Option<Progress<'_>>,
) -> Result<String, ToolError> {
    let mut answer = String::new();
    let mut succeeded = true;
    let several = plan.steps.len() > 1;
    for step in &plan.steps {
        let runs = match step.join {
            Join::First | Join::Then => true,
            Join::And => succeeded,
            Join::Or => !succeeded,
        };
        if several {
            answer.push_str(&format!("=== {} ===\n", step.shown));
        }
        if !runs {
            let why = if succeeded {
                "the command before it succeeded"
            } else {
                "a command before it failed"
            };
            answer.push_str(&format!("(not run: {why})\n"));
            continue;
        }
        // What an earlier command changed (a folder moved, a link made) can
        // make this one destroy work it did not when the line was judged.
        // What the user approved is what they were shown: a target changed
        // since is a new question even then, and so is a program path an
        // earlier command made into a link to another program.
        let relinked = (super::judge::as_resolved(step.argv.clone(), &step.spec.cwd) != step.argv)
            .then(|| super::judge::rejudged(&step.argv, judge, &step.spec.cwd))
            .flatten();
        // A target an earlier command moved or made is put back by undo
        // like any other delete, where the journal records.
        let undoable = super::judge::undoable(&step.argv, &step.spec.cwd, judge);
        let changed = relinked
            .or_else(|| super::git_changed_since_judged(&step.spec))
            .or_else(|| {
                (!undoable)
                    .then(|| step.targets.iter().find_map(|t| t.changed()))
                    .flatten()
            });
        let lost = || match plan.approved {
            true => None,
            false => super::judge::lost_for_good(&step.argv, &step.spec.cwd, judge),
        };
        if let Some(why) = changed.or_else(lost) {
            answer.push_str(&format!("(not run: {why})\n"));
            return Err(ToolError::new(
                ErrorType::CommandNotAllowed,
                format!(
                    "'{}' was not run: after the commands before it, {why}; that needs the user's approval.",
                    step.shown
                ),
            )
            .recover("Run it in a call of its own, so the user can be asked.")
            .detail("partial_output", answer));
        }
        let configs_before = watched_configs(step, judge.roots);
        let out = launch(step, progress, &answer).await?;
        let (body, kept_a_line) = body(step, &out);
        answer.push_str(&body);
        for line in guard_configs(step, judge.roots, &configs_before) {
            answer.push_str(&format!("{line}\n"));
        }
        if out.timed_out {
            let timeout = step.spec.timeout.as_secs();
            return Err(ToolError::new(
                ErrorType::CommandTimeout,
                format!(
                    "'{}' ran longer than {timeout} s; it and every process it started were killed.",
                    step.shown
                ),
            )
            .retryable("Raise timeout_seconds (at most 600) if the command is expected to take that long.")
            .detail("partial_output", answer));
        }
        let selects = step.filters.last().is_some_and(|f| f.selects());
        succeeded = out.exit_code == Some(0) && (!selects || kept_a_line);
        let code = out
            .exit_code
            .map_or_else(|| "killed by a signal".to_string(), |c| c.to_string());
        answer.push_str(&format!("--- EXIT CODE: {code} ---\n"));
    }
    Ok(answer)
}

/// The git configs a confined step could change and that name programs
/// the user's git runs later, with their contents now.
fn watched_configs(step: &Planned, roots: &[PathBuf]) -> Vec<(PathBuf, Vec<u8>)> {
    if step.spec.confinement.is_none() {
        return Vec::new();
    }
    let mut configs = super::repository_configs(roots);
    configs.extend(step.git_config.iter().cloned());
    configs
        .into_iter()
        .filter_map(|c| Some((c.clone(), std::fs::read(&c).ok()?)))
        .collect()
}

/// Puts back each watched config the step gave a program-naming key, and
/// removes each new one that names a program; the answer's lines.
fn guard_configs(step: &Planned, roots: &[PathBuf], before: &[(PathBuf, Vec<u8>)]) -> Vec<String> {
    if step.spec.confinement.is_none() {
        return Vec::new();
    }
    let mut now = super::repository_configs(roots);
    now.extend(before.iter().map(|(c, _)| c.clone()));
    now.sort();
    now.dedup();
    now.iter()
        .filter_map(|config| {
            let old = before
                .iter()
                .find(|(c, _)| c == config)
                .map(|(_, b)| b.as_slice());
            super::guard_git_config(config, old)
        })
        .collect()
}

async fn launch(
    step: &Planned,
    progress: Option<Progress<'_>>,
    so_far: &str,
) -> Result<RunOutput, ToolError> {
    run_reporting(&step.spec, progress).await.map_err(|e| {
        let error = ToolError::new(
            ErrorType::PowershellLaunchFailed,
            format!("Could not start '{}': {e}.", step.spec.program),
        )
        .recover(
            "The program is not installed or not on the server's PATH; ask the user to install it.",
        );
        match so_far.is_empty() {
            true => error,
            false => error.detail("partial_output", so_far),
        }
    })
}

/// The step's output as shown, and whether its filters kept any line.
fn body(step: &Planned, out: &RunOutput) -> (String, bool) {
    let stdout = out.stdout.render();
    let stderr = out.stderr.render();
    let note: String = [step.note.clone(), refusal_note(out, &stderr)]
        .into_iter()
        .flatten()
        .map(|n| format!("{n}\n"))
        .collect();
    if step.filters.is_empty() && step.stderr == Stderr::Keep {
        let text = format!(
            "--- STDOUT ---\n{}\n--- STDERR ---\n{}\n{note}",
            stdout.trim_end(),
            stderr.trim_end()
        );
        return (text, !stdout.is_empty());
    }
    let (piped, shown_err, label) = match step.stderr {
        Stderr::Keep => (stdout, stderr.trim_end().to_string(), "STDOUT"),
        Stderr::Drop => (stdout, "(dropped)".to_string(), "STDOUT"),
        Stderr::Merge => (
            merged(&stdout, &stderr),
            "(merged into the output above)".to_string(),
            "STDOUT+STDERR",
        ),
    };
    let filtered = step.filters.iter().fold(piped, |text, f| f.apply(&text));
    let kept_a_line = !filtered.is_empty();
    let label = match step.filters.is_empty() {
        true => label.to_string(),
        false => format!("{label} after the filters"),
    };
    let text = format!(
        "--- {label} ---\n{}\n--- STDERR ---\n{shown_err}\n{note}",
        bounded(&filtered).trim_end()
    );
    (text, kept_a_line)
}

/// Standard output then standard error: they are captured apart, so the
/// order in which lines of the two were written is not known.
fn merged(stdout: &str, stderr: &str) -> String {
    match (stdout.trim_end(), stderr.trim_end()) {
        ("", err) => format!("{err}\n"),
        (out, "") => format!("{out}\n"),
        (out, err) => format!("{out}\n{err}\n"),
    }
}

/// A filter's result within the limits of any output: its start and end,
/// and how much was left out between.
fn bounded(text: &str) -> String {
    let (head, tail) = (MAX_PROCESS_OUTPUT_BYTES, TAIL_BYTES);
    if text.len() <= head + tail {
        return text.to_string();
    }
    let cut_head = floor_boundary(text, head);
    let cut_tail = floor_boundary(text, text.len() - tail);
    format!(
        "{}\n[... {} bytes omitted ...]\n{}",
        &text[..cut_head],
        cut_tail - cut_head,
        &text[cut_tail..]
    )
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_result_keeps_its_ends() {
        let text = format!(
            "{}{}{}",
            "a".repeat(MAX_PROCESS_OUTPUT_BYTES),
            "é".repeat(50_000),
            "z".repeat(10)
        );
        let shown = bounded(&text);
        assert!(shown.starts_with("aaa"));
        assert!(shown.ends_with("zzzzzzzzzz"));
        assert!(shown.contains("bytes omitted"));
        assert!(shown.len() < MAX_PROCESS_OUTPUT_BYTES + TAIL_BYTES + 100);
        assert_eq!(bounded("short"), "short");
    }

    #[test]
    fn merged_streams_are_output_then_errors() {
        assert_eq!(merged("out\n", "err\n"), "out\nerr\n");
        assert_eq!(merged("", "err"), "err\n");
        assert_eq!(merged("out", ""), "out\n");
    }
}
