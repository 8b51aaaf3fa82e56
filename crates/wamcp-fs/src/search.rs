//! `search_files`: lines matching a literal or a regex, under a directory.
//!
//! The tree is listed in path order by one thread while workers search the
//! files as they are found (`search/run.rs`); the answer is cut from the
//! start of that order, so it never depends on thread timing. There is no
//! file-count cap: a time budget bounds the work, and when it runs out the
//! answer covers a path-order prefix of the files and says where it
//! stopped. Matching is ripgrep's: `grep-regex` (a finite-automaton engine,
//! so no pattern can backtrack catastrophically) and `grep-searcher`
//! (binary detection, UTF-16 BOM transcoding).

mod run;

use crate::budget::Bounds;
use crate::find::{append_unreadable, name_some, write_skipped_folders};
use crate::globs::NameGlobs;
use crate::paths::{input_path, require_directory};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use run::{FileResult, Searched, Slot, search_tree};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::{MAX_GREP_FILE_BYTES, MAX_SEARCH_MATCHES, clamp_request};

/// The arguments of one search.
pub struct SearchRequest<'a> {
    /// The text to find on one line; a regex only when `regex` is set.
    pub pattern: &'a str,
    /// The directory to search; blank means the working directory.
    pub path: &'a str,
    /// Comma-separated globs the files must match; blank means every file.
    pub file_glob: &'a str,
    /// Match without regard to case.
    pub ignore_case: bool,
    /// Read `pattern` as a Rust regex instead of literal text.
    pub regex: bool,
    /// Matching lines wanted, as the caller asked; clamped to
    /// `1..=MAX_SEARCH_MATCHES`.
    pub max_results: i64,
}

/// Searches the files under `req.path` within `bounds`,
/// in path order, and says what it did not search.
pub fn search_files(req: &SearchRequest, cwd: &Path, bounds: &Bounds) -> Result<String, ToolError> {
    let query = Query::checked(req, cwd)?;
    let shown = if req.path.trim().is_empty() {
        "."
    } else {
        req.path
    };
    crate::secrets::refuse_secret(bounds.secrets, shown, &query.root, "it is not searched")?;
    let keep = |rel: &str, name: &str| query.globs.as_ref().is_none_or(|g| g.matches(rel, name));
    let searched = search_tree(&query.root, &keep, &query.matcher, query.limit, bounds);
    let outcome = Outcome {
        req,
        scope: format!("under {}", query.root.display()),
        listed: searched.walk.listed,
        listing_finished: searched.walk.finished,
        budget_cut: searched.out_of_time || searched.walk.out_of_time,
        tally: Tally::of(&searched, query.limit),
        pruned: &searched.walk.pruned,
    };
    Ok(render(&outcome, &query, bounds))
}

/// A search request checked and ready to run.
struct Query {
    matcher: RegexMatcher,
    /// The file-name filter; `None` keeps every file.
    globs: Option<NameGlobs>,
    /// The directory searched, resolved.
    root: PathBuf,
    /// Matching lines shown at most.
    limit: usize,
    /// Whether `max_results` was outside its range and clamped.
    capped: bool,
}

impl Query {
    /// Checks the pattern, the globs and the directory of `req`, in that
    /// order, and clamps its match limit.
    fn checked(req: &SearchRequest, cwd: &Path) -> Result<Query, ToolError> {
        if req.pattern.is_empty() {
            return Err(
                ToolError::new(ErrorType::InvalidPattern, "The pattern is empty.")
                    .recover("Pass the text to find; use find_files to list files by name."),
            );
        }
        let matcher = build_matcher(req)?;
        let globs = NameGlobs::parse(req.file_glob)?;
        let path_arg = if req.path.trim().is_empty() {
            "."
        } else {
            req.path
        };
        let root = input_path(path_arg, cwd)?;
        require_directory(path_arg, &root, ErrorType::DirectoryReadFailed)?;
        let (limit, capped) = clamp_request(req.max_results, MAX_SEARCH_MATCHES as u64);
        Ok(Query {
            matcher,
            globs,
            root,
            limit: limit as usize,
            capped,
        })
    }
}

/// What the searched prefix of the files holds, up to the match limit.
struct Tally<'a> {
    /// The matching lines shown, as `(file, line number, text)`.
    lines: Vec<(&'a str, u64, &'a str)>,
    /// Files with at least one match.
    matched_files: usize,
    /// Files searched, the binary and unreadable ones included.
    searched: usize,
    /// Binary files skipped.
    binary: usize,
    /// Paths not listed or not searched, as `path (reason)`.
    unreadable: Vec<String>,
    /// Files searched only up to `MAX_GREP_FILE_BYTES`.
    large: Vec<&'a str>,
    /// More matches exist than are shown.
    truncated: bool,
    /// The last file searched, in path order.
    last_searched: Option<&'a str>,
}

impl<'a> Tally<'a> {
    /// Counts the searched prefix of `searched` in path order, keeping at
    /// most `limit` matching lines, with the walk's notes on paths inside
    /// the part the answer covers.
    fn of(searched: &'a Searched, limit: usize) -> Tally<'a> {
        let mut tally = Tally {
            lines: Vec::new(),
            matched_files: 0,
            searched: 0,
            binary: 0,
            unreadable: Vec::new(),
            large: Vec::new(),
            truncated: false,
            last_searched: None,
        };
        let mut notes = searched.walk.notes.iter().peekable();
        // Cut at the first file whose matches take the total past the limit, so the
        // answer depends on the path order alone, never on thread timing.
        for (index, (rel, slot)) in searched.files.iter().zip(&searched.results).enumerate() {
            // A note with place p was met after the first p files.
            while let Some((_, note)) = notes.next_if(|(place, _)| *place <= index) {
                tally.unreadable.push(note.clone());
            }
            tally.last_searched = Some(rel.as_str());
            tally.searched += 1;
            if let Slot::Noted(result) = slot {
                tally.count(rel, result, limit);
                if tally.truncated {
                    break;
                }
            }
        }
        let everything = searched.walk.finished && tally.searched == searched.files.len();
        if everything && !tally.truncated {
            tally.unreadable.extend(notes.map(|(_, note)| note.clone()));
        }
        tally
    }

    /// Counts one searched file that had something to report.
    fn count(&mut self, rel: &'a str, result: &'a FileResult, limit: usize) {
        if result.binary {
            self.binary += 1;
            return;
        }
        if let Some(reason) = &result.unreadable {
            self.unreadable.push(format!("{rel} ({reason})"));
            return;
        }
        if result.larger_than_cap {
            self.large.push(rel);
        }
        if !result.matches.is_empty() {
            self.matched_files += 1;
        }
        for (line, text) in &result.matches {
            if self.lines.len() == limit {
                self.truncated = true;
                return;
            }
            self.lines.push((rel, *line, text.as_str()));
        }
    }
}

/// A finished search, as its answer describes it.
struct Outcome<'a> {
    req: &'a SearchRequest<'a>,
    /// Where the search looked, as the answer says it: `under <root>`.
    scope: String,
    /// Files the walk listed.
    listed: usize,
    /// Every directory was listed.
    listing_finished: bool,
    /// The skipped directories met.
    pruned: &'a [String],
    /// The time budget ran out, listing or searching.
    budget_cut: bool,
    tally: Tally<'a>,
}

/// The answer: the matching lines, a line saying how complete they are,
/// then what was clamped or skipped.
fn render(outcome: &Outcome, query: &Query, bounds: &Bounds) -> String {
    let tally = &outcome.tally;
    let mut out = String::new();
    // Grouped by file, the path once above its lines: repeated on every
    // line it was a quarter of a many-match answer.
    let mut file = None;
    for (rel, line, text) in &tally.lines {
        if file != Some(rel) {
            // A file named like a match line (`12: notes`) gets `./` so it
            // cannot be read as one.
            let prefix = if looks_like_match_line(rel) { "./" } else { "" };
            let _ = writeln!(out, "{prefix}{rel}");
            file = Some(rel);
        }
        let _ = writeln!(out, "{line}: {text}");
    }
    write_completeness(&mut out, outcome, bounds);
    // Said only when the clamp cut the answer: otherwise it is noise.
    if query.capped && tally.truncated {
        let _ = writeln!(
            out,
            "(max_results {} is outside 1-{MAX_SEARCH_MATCHES}; used {}.)",
            outcome.req.max_results, query.limit
        );
    }
    write_skipped(&mut out, tally);
    out
}

/// The line after the matches: whether they are all there are, and if not
/// why not.
fn write_completeness(out: &mut String, outcome: &Outcome, bounds: &Bounds) {
    let tally = &outcome.tally;
    let shown = tally.lines.len();
    // Out of time before the match cap: the counts below would read as totals.
    let out_of_time = outcome.budget_cut && !tally.truncated;
    if out_of_time {
        write_out_of_time(out, outcome, bounds);
    } else if tally.truncated {
        let _ = writeln!(
            out,
            "[Showing the first {shown} matches, in path order. The result is INCOMPLETE: there are more \
             matches, so these lines must not be counted as a total. Narrow pattern, path or file_glob to see the rest.]"
        );
    } else if shown == 0 {
        write_no_matches(out, outcome);
    } else {
        // Complete: the count is all the model needs; how many files were
        // searched where changes nothing it does next.
        let matched_files = tally.matched_files;
        let _ = writeln!(
            out,
            "{shown} match{} in {matched_files} file{}.",
            if shown == 1 { "" } else { "es" },
            if matched_files == 1 { "" } else { "s" },
        );
    }
}

/// Says where the time budget ran out: before any file was searched, or
/// after a path-order prefix of the files.
fn write_out_of_time(out: &mut String, outcome: &Outcome, bounds: &Bounds) {
    let (tally, scope, listed) = (&outcome.tally, &outcome.scope, outcome.listed);
    let (searched, shown) = (tally.searched, tally.lines.len());
    if searched == 0 && !outcome.listing_finished {
        let _ = writeln!(
            out,
            "[INCOMPLETE: the time budget of {} ran out while listing the files {scope} ({listed} found so far), \
             so nothing was searched. Narrow path or file_glob; the user can raise WAMCP_SEARCH_BUDGET_SECONDS.]",
            bounds.budget.describe(),
        );
        return;
    }
    // No total: the walk runs ahead of the search, so how far it got
    // depends on thread timing, and the answer must not.
    let reached = tally
        .last_searched
        .map_or(".", |rel| rel.rsplit_once('/').map_or(".", |(dir, _)| dir));
    let _ = writeln!(
        out,
        "[INCOMPLETE: the time budget of {} ran out after searching the first {searched} files {scope}, \
         in path order, up to '{reached}/'. {shown} match{} found in those files; the rest were not searched, \
         so this is not a total. Narrow path or file_glob to search them.]",
        bounds.budget.describe(),
        if shown == 1 { " was" } else { "es were" }
    );
}

/// Says nothing matched, and why a literal search that looks like a regex
/// may have missed.
fn write_no_matches(out: &mut String, outcome: &Outcome) {
    let req = outcome.req;
    // Short: the model knows its pattern. Where it looked matters only when
    // there was nothing to look in.
    match outcome.tally.searched {
        0 => {
            let _ = writeln!(out, "No matches: no file to search {}.", outcome.scope);
        }
        searched => {
            let _ = writeln!(
                out,
                "No match ({searched} file{}).",
                if searched == 1 { "" } else { "s" }
            );
        }
    }
    if !req.regex && looks_like_regex(req.pattern) {
        out.push_str(
            "The pattern contains regex syntax but was searched literally: retry with regex=true if you meant a regex.\n",
        );
    }
    write_skipped_folders(out, outcome.pruned);
}

/// Whether a line reads as `<number>: text`, the form of a match line.
fn looks_like_match_line(line: &str) -> bool {
    line.split_once(": ")
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Says which files were skipped or searched only in part.
fn write_skipped(out: &mut String, tally: &Tally) {
    let binary = tally.binary;
    if binary > 0 {
        let _ = writeln!(
            out,
            "{binary} binary file{} skipped.",
            if binary == 1 { " was" } else { "s were" }
        );
    }
    let large = &tally.large;
    if !large.is_empty() {
        let mib = MAX_GREP_FILE_BYTES / (1024 * 1024);
        let _ = writeln!(
            out,
            "Only the first {mib} MiB of {} larger file{} searched: {}.",
            large.len(),
            if large.len() == 1 { " was" } else { "s were" },
            name_some(large, 3)
        );
    }
    append_unreadable(out, &tally.unreadable);
}

fn build_matcher(req: &SearchRequest) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(req.ignore_case)
        .fixed_strings(!req.regex)
        .line_terminator(Some(b'\n'));
    builder.build(req.pattern).map_err(|e| {
        let what = if req.regex { "regex" } else { "pattern" };
        let message = match unsupported_feature(req.pattern) {
            Some(feature) => format!(
                "The regex uses {feature}, which this engine does not have: it runs in linear time, so it has \
                 neither look-around nor backreferences."
            ),
            None => format!("The {what} cannot be used: {e}"),
        };
        ToolError::new(ErrorType::InvalidPattern, message)
            .recover(if req.regex {
                "Fix the regex (Rust regex syntax: no look-around or backreferences), or search literally with regex=false."
            } else {
                "Search for text on a single line; patterns cannot span lines."
            })
    })
}

/// The Perl feature a regex asks for that a linear-time engine cannot
/// give; the parser's own message quotes the pattern wrapped in a group the
/// caller never wrote, which reads like a bug in their regex.
fn unsupported_feature(pattern: &str) -> Option<&'static str> {
    use regex_syntax::ast::ErrorKind;
    let error = regex_syntax::ast::parse::Parser::new()
        .parse(pattern)
        .err()?;
    match error.kind() {
        ErrorKind::UnsupportedLookAround => Some("look-around ((?=, (?!, (?<=, (?<!)"),
        ErrorKind::UnsupportedBackreference => Some("a backreference (\\1)"),
        _ => None,
    }
}

/// Whether a literal pattern carries regex syntax its author probably meant
/// as a regex: an escape like `\(` or `\d`, or `.*` / `.+`. A bare `(` or `.`
/// does not count: searching literally for `call(` or `a.b` is common and right.
fn looks_like_regex(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    bytes.windows(2).any(|w| {
        (w[0] == b'\\' && b"()[]{}.*+?|^$dDwWsSbB".contains(&w[1]))
            || (w[0] == b'.' && (w[1] == b'*' || w[1] == b'+'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use run::display_line;

    #[test]
    fn regex_lookalikes() {
        for p in [r"foo\(", r"\d+", "a.*b", r"\bword", "x.+", r"\.cpp"] {
            assert!(looks_like_regex(p), "{p}");
        }
        for p in [
            "mcp_error(",
            "a.b",
            "(x)",
            "C:\\Users\\x",
            "a*b",
            "?",
            "a|b",
            "[x]",
        ] {
            assert!(!looks_like_regex(p), "{p}");
        }
    }

    #[test]
    fn display_is_trimmed_and_capped_at_a_char_boundary() {
        assert_eq!(display_line(b"    let x = 1;\r\n"), "let x = 1;");
        let long = "é".repeat(400);
        let shown = display_line(long.as_bytes());
        assert_eq!(
            shown.chars().count(),
            wamcp_policy::limits::MAX_MATCH_LINE_CHARS + 1
        );
        assert!(shown.ends_with('…'));
        assert_eq!(display_line(b"caf\xe9"), "caf\u{FFFD}");
    }
}
