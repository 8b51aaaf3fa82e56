//! What a destructive `git push` would cost, as git can tell before it
//! runs: the remote and its URL, each ref it forces or deletes, and how
//! many commits on the remote (as last fetched) would no longer be
//! reachable from what is pushed.
//!
//! Only read-only plumbing runs here (`remote get-url`, `rev-parse`,
//! `rev-list --count`), with the trusted git, and a failure just leaves a
//! fact out: the question is asked either way.

use std::path::Path;
use std::process::Command;
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::command::push::{Push, read};
use wamcp_policy::command::tokenize::Arg;

/// The push's stakes in words, or `None` when `argv` is not a push.
pub fn stakes(argv: &[Arg], place: &Path, search: &ProgramSearch) -> Option<String> {
    let words: Vec<&str> = argv.iter().map(|a| a.text.as_str()).collect();
    if wamcp_policy::command::rules::program_name(words.first()?) != "git" {
        return None;
    }
    let at = words.iter().position(|w| *w == "push")?;
    let push = read(&words[at + 1..]);
    let git = search.find_program("git")?;
    let run = |args: &[&str]| query(&git, place, args);
    Some(describe(&push, &run))
}

/// The stakes of `push`, asking git through `run`.
fn describe(push: &Push, run: &dyn Fn(&[&str]) -> Option<String>) -> String {
    let remote = push.remote.clone().unwrap_or_else(|| "origin".to_string());
    let url = run(&["remote", "get-url", &remote]);
    let mut parts = vec![match url {
        Some(url) if url != remote => format!("remote {remote} ({url})"),
        _ => format!("remote {remote}"),
    }];
    if let Some(every) = push.every_ref {
        parts.push(format!(
            "{every}: refs it does not name may be overwritten or deleted"
        ));
    }
    for update in push.updates.iter().filter(|u| u.force || u.src.is_none()) {
        let name = update.dst.trim_start_matches("refs/heads/");
        let tracking = format!("refs/remotes/{remote}/{name}");
        let known = run(&["rev-parse", "--verify", "-q", &tracking]).is_some();
        let lost = match (&update.src, known) {
            (_, false) => None,
            (Some(src), true) => run(&["rev-list", "--count", &tracking, &format!("^{src}")]),
            (None, true) => run(&["rev-list", "--count", &tracking, "--not", "--branches"]),
        };
        let verb = match update.src {
            Some(_) => "forced",
            None => "deleted",
        };
        parts.push(match lost {
            Some(n) => format!("{name} {verb}: {n} commits on the remote would be lost"),
            None => format!("{name} {verb} (git cannot tell what the remote holds)"),
        });
    }
    parts.join("; ")
}

/// One read-only git query in `place`: its trimmed output, or `None`.
fn query(git: &Path, place: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(git)
        .args(["-c", "core.fsmonitor=false"])
        .args(args)
        .current_dir(place)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wamcp_policy::command::push::read;

    #[test]
    fn the_stakes_name_the_remote_each_ref_and_the_lost_commits() {
        let answers = |args: &[&str]| -> Option<String> {
            match args {
                ["remote", "get-url", "origin"] => Some("https://example.test/r.git".into()),
                ["rev-parse", _, _, "refs/remotes/origin/main"] => Some("abc".into()),
                ["rev-list", "--count", "refs/remotes/origin/main", "^HEAD"] => Some("3".into()),
                _ => None,
            }
        };
        let push = read(&["--force", "origin", "HEAD:main", "gone"]);
        assert_eq!(
            describe(&push, &answers),
            "remote origin (https://example.test/r.git); main forced: 3 commits on the remote would be \
             lost; gone forced (git cannot tell what the remote holds)"
        );
        assert_eq!(
            describe(&read(&["--mirror"]), &|_: &[&str]| None),
            "remote origin; --mirror: refs it does not name may be overwritten or deleted"
        );
    }
}
