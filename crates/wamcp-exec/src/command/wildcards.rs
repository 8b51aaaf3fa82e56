//! Unquoted wildcards and a leading `~` expanded the way Bash would, on
//! Unix hosts, before the command is judged (the rules see the file names
//! the program gets).
//! On Windows nothing is expanded: PowerShell hands a native program its
//! wildcards as written, and programs there expand them themselves.

use std::path::Path;
use wamcp_policy::command::tokenize::Arg;
use wamcp_policy::command::wildcard::{is_pattern, matches, split};

/// The most names one pattern expands to: beyond it the pattern stays as
/// written (a command line that long is no command a model meant).
const MAX_MATCHES: usize = 4096;

/// `argv` with each unquoted pattern after the program replaced by the
/// names it matches in `place`, sorted; a pattern matching nothing stays.
pub fn expanded(argv: Vec<Arg>, place: &Path) -> Vec<Arg> {
    if !cfg!(unix) {
        return argv;
    }
    let mut out = Vec::with_capacity(argv.len());
    for (index, arg) in argv.into_iter().enumerate() {
        if index == 0 || arg.quoted {
            out.push(arg);
            continue;
        }
        if let Some(home) = home_of(&arg.text) {
            out.push(Arg {
                text: home,
                quoted: true,
            });
            continue;
        }
        if !is_pattern(&arg.text) {
            out.push(arg);
            continue;
        }
        match names(&arg.text, place) {
            Some(found) => out.extend(found.into_iter().map(|text| Arg { text, quoted: true })),
            None => out.push(arg),
        }
    }
    out
}

/// `~` or `~/rest` with the home folder in place of `~`, as Bash reads an
/// unquoted word (`~user` is left alone).
fn home_of(word: &str) -> Option<String> {
    let rest = word
        .strip_prefix('~')
        .filter(|r| r.is_empty() || r.starts_with('/'))?;
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty())?;
    Some(format!("{}{rest}", home.trim_end_matches('/')))
}

/// What `pattern` names in `place`, or `None` when nothing (or too much).
fn names(pattern: &str, place: &Path) -> Option<Vec<String>> {
    let (dir, name) = split(pattern)?;
    let folder = if dir.is_empty() {
        place.to_path_buf()
    } else {
        place.join(dir)
    };
    let mut found: Vec<String> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|file| matches(name, file))
        .map(|file| format!("{dir}{file}"))
        .take(MAX_MATCHES + 1)
        .collect();
    if found.is_empty() || found.len() > MAX_MATCHES {
        return None;
    }
    found.sort();
    Some(found)
}
