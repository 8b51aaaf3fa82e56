//! The report a build or compile answers with: parsed diagnostics, capped
//! and tagged, and what changed since the last build of the same command.
//!
//! A model reading a build log needs three things the log does not say: which
//! errors matter (capped lists, each message cut at a visible limit), which
//! warnings are the project's old noise (vendored code is tagged `[likely
//! pre-existing]`), and which diagnostics its own last edit caused (each new
//! one is marked `[new]` against the previous build of the same command in
//! the same root; the others stay unmarked).

use crate::diagnostics::{Diagnostic, Entry, Severity, parse};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use wamcp_policy::limits::{
    MAX_DIAGNOSTIC_CHARS, MAX_REPORTED_ERRORS, MAX_REPORTED_WARNINGS, RAW_TAIL_LINES,
};

/// Path parts that mark vendored code, whose warnings a change rarely causes.
const VENDORED: &[&str] = &[
    "deps",
    "external",
    "externals",
    "third_party",
    "thirdparty",
    "3rdparty",
    "vendor",
    "vendored",
    "_deps",
    "subprojects",
];

/// Codes that are almost always about headers the project does not own
/// (deprecated CRT functions, missing PDBs of prebuilt libraries).
const PRE_EXISTING_CODES: &[&str] = &["C4996", "LNK4099"];

/// What a build did, to report.
pub struct Build<'a> {
    /// What the report is about, opening its
    /// first line (`BUILD`, `SHADER COMPILE`).
    pub subject: &'a str,
    /// The command as the caller gave it.
    pub command: &'a str,
    /// The exit code; `None` when the process was killed.
    pub exit_code: Option<i32>,
    /// How long it ran, when that is worth reporting.
    pub elapsed: Option<Duration>,
    /// Standard output and standard error, as kept.
    pub output: &'a str,
    /// Where it ran; file names inside it are shown relative to it.
    pub build_dir: &'a Path,
}

/// What the report is compared with.
pub enum Since<'a> {
    /// Nothing to compare (a shader compile, a first build).
    Nothing(&'static str),
    /// The diagnostics of the previous build
    /// of the same command in the same root.
    Previous(&'a Seen),
}

/// A diagnostic's identity across builds: where and what, not the line
/// number, which an edit above it moves.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    file: String,
    severity: u8,
    code: String,
    message: String,
}

/// A build's errors and warnings, as compared with the next build's.
pub type Seen = HashSet<Key>;

fn key(d: &Diagnostic) -> Key {
    Key {
        file: d.file.clone(),
        severity: d.severity as u8,
        code: d.code.clone(),
        message: d.message.clone(),
    }
}

/// Renders the report; also returns this build's diagnostics, for the next.
pub fn render(build: &Build, since: Since) -> (String, Seen) {
    let entries = parse(build.output, build.build_dir);
    let of = |s: Severity| -> Vec<&Entry> {
        entries
            .iter()
            .filter(|e| e.diagnostic.severity == s)
            .collect()
    };
    let (errors, warnings) = (of(Severity::Error), of(Severity::Warning));
    let seen: Seen = errors
        .iter()
        .chain(&warnings)
        .map(|e| key(&e.diagnostic))
        .collect();
    let mut out = header(build);
    if let Some(kind) = rebuild_kind(build.command, build.output) {
        out.push_str(&format!("rebuild: {kind}\n"));
    }
    out.push_str(&comparison(&since, &errors, &warnings, &seen));
    let previous = match since {
        Since::Previous(p) => Some(p),
        Since::Nothing(_) => None,
    };
    for (title, list, cap) in [
        ("ERRORS", &errors, MAX_REPORTED_ERRORS),
        ("WARNINGS", &warnings, MAX_REPORTED_WARNINGS),
    ] {
        out.push_str(&section(title, list, cap, previous));
    }
    if !warnings.is_empty() {
        out.push_str(&format!("WARNING SUMMARY: {}\n", summary(&warnings)));
    }
    out.push_str(&verdict(build, &errors, &warnings));
    (out, seen)
}

/// A report with no timing and nothing to compare (compile_shader's).
pub fn report(
    subject: &str,
    command: &str,
    exit_code: Option<i32>,
    output: &str,
    build_dir: &Path,
) -> String {
    let build = Build {
        subject,
        command,
        exit_code,
        elapsed: None,
        output,
        build_dir,
    };
    render(&build, Since::Nothing("")).0
}

fn header(build: &Build) -> String {
    let code = build
        .exit_code
        .map_or_else(|| "killed".to_string(), |c| c.to_string());
    match build.elapsed {
        Some(t) => format!(
            "{}: {} (exit code {code}, {:.1} s)\n",
            build.subject,
            build.command,
            t.as_secs_f64()
        ),
        None => format!("{}: {} (exit code {code})\n", build.subject, build.command),
    }
}

fn total(list: &[&Entry]) -> usize {
    list.iter().map(|e| e.count).sum()
}

/// One line saying what is new since the last build, or why nothing is compared.
fn comparison(since: &Since, errors: &[&Entry], warnings: &[&Entry], seen: &Seen) -> String {
    let previous = match since {
        Since::Nothing("") => return String::new(),
        Since::Nothing(why) => return format!("since the last build: {why}\n"),
        Since::Previous(p) => p,
    };
    let new = |list: &[&Entry]| {
        list.iter()
            .filter(|e| !previous.contains(&key(&e.diagnostic)))
            .count()
    };
    let gone = previous.iter().filter(|k| !seen.contains(k)).count();
    format!(
        "since the last build of this command: {} new error(s), {} new warning(s), {gone} gone\n",
        new(errors),
        new(warnings)
    )
}

fn section(title: &str, list: &[&Entry], cap: usize, previous: Option<&Seen>) -> String {
    if list.is_empty() {
        return String::new();
    }
    let mut out = format!("{title} ({} unique, {} total):\n", list.len(), total(list));
    for entry in list.iter().take(cap) {
        let mut line = line(&entry.diagnostic, entry.count);
        if entry.diagnostic.severity == Severity::Warning && pre_existing(&entry.diagnostic) {
            line.push_str(" [likely pre-existing]");
        }
        // Only what changed is tagged: an identical rebuild tagged every
        // line "[seen before]", and the line above already says none is new.
        if previous.is_some_and(|previous| !previous.contains(&key(&entry.diagnostic))) {
            line.push_str(" [new]");
        }
        out.push_str(&format!("  {line}\n"));
        for note in &entry.notes {
            out.push_str(&format!("      note: {}\n", self::line(note, 1)));
        }
    }
    if list.len() > cap {
        out.push_str(&format!(
            "  ...{} more unique {} not shown\n",
            list.len() - cap,
            title.to_lowercase()
        ));
    }
    out
}

fn verdict(build: &Build, errors: &[&Entry], warnings: &[&Entry]) -> String {
    let subject = build.subject;
    if build.exit_code == Some(0) {
        let mut out = format!(
            "{subject} SUCCEEDED ({} errors, {} warnings)\n",
            total(errors),
            total(warnings)
        );
        if !warnings.is_empty() {
            out.push_str("Warnings above are not fatal.\n");
        }
        return out;
    }
    if !errors.is_empty() {
        return format!("{subject} FAILED\n");
    }
    let mut out = format!(
        "{subject} FAILED, but no recognised compiler diagnostics were found. Last lines of output:\n"
    );
    let tail: Vec<&str> = build
        .output
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    for line in &tail[tail.len().saturating_sub(RAW_TAIL_LINES)..] {
        out.push_str(&format!("  {}\n", clip(line.trim_end())));
    }
    out
}

/// The diagnostic's file; `None` for none, and for the tool name a linker
/// puts where a file would be (`LINK : fatal error LNK1181`).
fn file_of(d: &Diagnostic) -> Option<&str> {
    let tool_name = d.line.is_none() && !d.file.contains(['.', '/', '\\']);
    (!d.file.is_empty() && !tool_name).then_some(d.file.as_str())
}

/// `file:line:col: code: message (xN)`; a diagnostic without a file says so.
fn line(d: &Diagnostic, count: usize) -> String {
    let mut place = file_of(d).unwrap_or("(no file)").to_string();
    if let Some(line) = d.line {
        place.push_str(&format!(":{line}"));
        if let Some(column) = d.column {
            place.push_str(&format!(":{column}"));
        }
    }
    let mut text = format!("{place}: ");
    if !d.code.is_empty() {
        text.push_str(&d.code);
        text.push_str(": ");
    }
    text.push_str(&clip(&d.message));
    if count > 1 {
        text.push_str(&format!(" (x{count})"));
    }
    text
}

/// A message cut at the limit says so: a silently short template error
/// reads as the whole error.
pub fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_DIAGNOSTIC_CHARS) {
        Some((cut, _)) => format!("{} [message truncated]", &text[..cut]),
        None => text.to_string(),
    }
}

/// Warnings from vendored code or of codes that are about code the project
/// does not own. Errors are never tagged: an error always needs looking at.
fn pre_existing(d: &Diagnostic) -> bool {
    PRE_EXISTING_CODES.contains(&d.code.as_str())
        || d.file
            .split(['/', '\\'])
            .any(|part| VENDORED.contains(&part.to_ascii_lowercase().as_str()))
}

/// `C4996 x7 (deps) | -Wunused-variable x1 (src)`: warnings by code (gcc's
/// `[-Wflag]` when there is no code) and top-level directory, most first.
fn summary(warnings: &[&Entry]) -> String {
    let mut groups: BTreeMap<(String, String), usize> = BTreeMap::new();
    for entry in warnings {
        let d = &entry.diagnostic;
        let code = if d.code.is_empty() {
            gcc_flag(&d.message).unwrap_or("(no code)").to_string()
        } else {
            d.code.clone()
        };
        let top = top_directory(file_of(d).unwrap_or(""));
        *groups.entry((code, top)).or_default() += entry.count;
    }
    let mut ordered: Vec<((String, String), usize)> = groups.into_iter().collect();
    ordered.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ordered
        .iter()
        .map(|((code, top), n)| format!("{code} x{n} ({top})"))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// `src` for `src/a/b.c`, `.` for a file at the top, `/b` or `C:/x` for a
/// path outside the build directory, `(no file)` for none.
fn top_directory(file: &str) -> String {
    if file.is_empty() {
        return "(no file)".to_string();
    }
    let parts: Vec<&str> = file.split(['/', '\\']).collect();
    match parts.as_slice() {
        [] | [_] => ".".to_string(),
        ["", first, _, ..] => format!("/{first}"),
        [drive, first, _, ..] if drive.ends_with(':') => format!("{drive}/{first}"),
        [first, ..] => first.to_string(),
    }
}

/// gcc and clang end a warning with the flag that enables it: `[-Wunused]`.
fn gcc_flag(message: &str) -> Option<&str> {
    let inner = message.trim_end().strip_suffix(']')?;
    let start = inner.rfind("[-W")?;
    Some(&inner[start + 1..])
}

/// What kind of build this was, from the command and the tool's own lines;
/// `None` when unsure (most tools do not say).
pub fn rebuild_kind(command: &str, output: &str) -> Option<&'static str> {
    let lower = command.to_ascii_lowercase();
    let asked_full = [
        "--clean-first",
        "-t:rebuild",
        "/t:rebuild",
        "-target:rebuild",
        "/target:rebuild",
        "--no-incremental",
    ]
    .iter()
    .any(|flag| lower.split_whitespace().any(|w| w == *flag));
    if asked_full {
        return Some("full");
    }
    let has = |needle: &str| output.lines().any(|l| l.contains(needle));
    let compiled = output.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("Compiling ")
            || (t.starts_with('[') && t.contains("] Building"))
            || t.starts_with("ClCompile:")
    });
    let nothing_to_do = has("ninja: no work to do")
        || has("Nothing to be done for")
        || has("is up to date.")
        || (has("Finished ") && !compiled && lower.starts_with("cargo"));
    let msbuild_skipped =
        has("All outputs are up-to-date.") || has("because all output files are up-to-date");
    match (nothing_to_do, msbuild_skipped, compiled) {
        (true, _, false) => Some("up-to-date"),
        (_, true, false) => Some("up-to-date"),
        (_, true, true) => Some("incremental"),
        _ => None,
    }
}

/// The diagnostics of the last build of each (root, command, driver), so
/// the next report can say what changed. Bounded: a handful of recent
/// builds, each with a capped number of diagnostics.
#[derive(Default)]
pub struct History(Mutex<HashMap<(PathBuf, String), (String, Seen)>>);

const HISTORY_BUILDS: usize = 32;
const HISTORY_DIAGNOSTICS: usize = 5000;

impl History {
    /// Renders `build` against the last build of `command` in `root`, and
    /// remembers this one. `driver` identifies the program that ran (its
    /// resolved path and timestamp): a different compiler resets the memory.
    pub fn report(&self, root: &Path, driver: &str, build: &Build) -> String {
        let slot = (root.to_path_buf(), build.command.to_string());
        let mut memory = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (text, seen) = match memory.get(&slot) {
            Some((d, seen)) if d == driver => render(build, Since::Previous(seen)),
            Some(_) => render(
                build,
                Since::Nothing("nothing to compare (the build tool changed)"),
            ),
            // Said briefly, but said: without it, untagged lines would read as
            // "seen before", as they do in a compared report.
            None => render(
                build,
                Since::Nothing("not compared (first build of this command)"),
            ),
        };
        if memory.len() >= HISTORY_BUILDS && !memory.contains_key(&slot) {
            let evict = memory.keys().next().cloned();
            if let Some(evict) = evict {
                memory.remove(&evict);
            }
        }
        let seen = if seen.len() > HISTORY_DIAGNOSTICS {
            seen.into_iter().take(HISTORY_DIAGNOSTICS).collect()
        } else {
            seen
        };
        memory.insert(slot, (driver.to_string(), seen));
        text
    }
}

#[cfg(test)]
mod tests;
