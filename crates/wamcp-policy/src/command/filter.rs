//! The filters an agent pipes a command's output into (`| head -n 50`,
//! `| Select-String error`, `| wc -l`), performed by wamcp on the captured
//! text instead of by a second program behind a shell.
//!
//! Each spelling is read the way its own program reads it (grep's basic
//! regular expressions, `Select-String`'s case-insensitive matching,
//! `findstr`'s space-separated alternatives), so the agent gets the lines
//! it expects. Anything else piped to is refused with the list of what is
//! performed, never guessed at.

use super::tokenize::Arg;
use regex::{Regex, RegexBuilder};

/// What the filters perform, for refusals.
pub const PERFORMED: &str = "head, tail, Select-Object -First/-Last, grep, Select-String, findstr, wc -l, \
                             Measure-Object -Line, sort, uniq, cat, more and Out-Null";

/// The largest compiled pattern: a filter never costs the server much.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// One stage of a pipeline after the command.
#[derive(Clone, Debug)]
pub enum Filter {
    /// The first N lines.
    Head(usize),
    /// The last N lines.
    Tail(usize),
    /// The lines that match (or, inverted, do not), optionally numbered.
    Lines {
        /// What a line must contain.
        matcher: Regex,
        /// Keep the lines that do not match instead.
        invert: bool,
        /// Prefix each kept line with its number (`grep -n`, `findstr /n`).
        number: bool,
        /// Answer how many lines matched instead (`grep -c`).
        count: bool,
    },
    /// How many lines there are.
    CountLines,
    /// Nothing (`Out-Null`, `> /dev/null` on standard output).
    Discard,
    /// The text as it is (`| cat`, `| more`, `| Out-String`: typed to keep a
    /// pager away, which a command without a terminal never starts).
    Same,
    /// The lines sorted: numerically (by a leading number), reversed, and
    /// without repeats, as asked.
    Sort {
        /// `-n`: by the number each line starts with.
        numeric: bool,
        /// `-r`: largest first.
        reverse: bool,
        /// `-u`: each line once.
        unique: bool,
    },
    /// Runs of equal lines as one (`uniq`, `Get-Unique`).
    Uniq,
}

impl Filter {
    /// Applies the filter to `text`.
    pub fn apply(&self, text: &str) -> String {
        let lines = text.lines();
        let joined = |kept: Vec<&str>| {
            let mut out = kept.join("\n");
            if !out.is_empty() {
                out.push('\n');
            }
            out
        };
        match self {
            Filter::Head(n) => joined(lines.take(*n).collect()),
            Filter::Tail(n) => {
                let all: Vec<&str> = lines.collect();
                joined(all[all.len().saturating_sub(*n)..].to_vec())
            }
            Filter::Lines {
                matcher,
                invert,
                number,
                count,
            } => {
                let kept: Vec<String> = lines
                    .enumerate()
                    .filter(|(_, line)| matcher.is_match(line) != *invert)
                    .map(|(i, line)| match number {
                        true => format!("{}:{line}", i + 1),
                        false => line.to_string(),
                    })
                    .collect();
                match count {
                    true => format!("{}\n", kept.len()),
                    false => joined(kept.iter().map(String::as_str).collect()),
                }
            }
            Filter::CountLines => format!("{}\n", text.lines().count()),
            Filter::Discard => String::new(),
            Filter::Same => text.to_string(),
            Filter::Sort {
                numeric,
                reverse,
                unique,
            } => joined(sorted(text, *numeric, *reverse, *unique)),
            Filter::Uniq => {
                let mut kept: Vec<&str> = lines.collect();
                kept.dedup();
                joined(kept)
            }
        }
    }

    /// Whether the filter, like `grep`, fails when it keeps no line.
    pub fn selects(&self) -> bool {
        matches!(self, Filter::Lines { count: false, .. })
    }
}

/// The lines of `text` in order.
fn sorted(text: &str, numeric: bool, reverse: bool, unique: bool) -> Vec<&str> {
    let leading = |line: &str| -> f64 {
        let trimmed = line.trim_start();
        let end = trimmed
            .char_indices()
            .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && c == '-')))
            .map_or(trimmed.len(), |(i, _)| i);
        trimmed[..end].parse().unwrap_or(0.0)
    };
    let mut lines: Vec<&str> = text.lines().collect();
    match numeric {
        true => lines.sort_by(|a, b| leading(a).total_cmp(&leading(b)).then(a.cmp(b))),
        false => lines.sort(),
    }
    if unique {
        lines.dedup();
    }
    if reverse {
        lines.reverse();
    }
    lines
}

/// `sort` with `-n`, `-r`, `-u` (alone or together), or `Sort-Object`
/// with `-Unique` and `-Descending`.
fn sort(args: &[&str]) -> Result<Filter, String> {
    let (mut numeric, mut reverse, mut unique) = (false, false, false);
    for arg in args {
        match arg.to_lowercase().as_str() {
            "-unique" => unique = true,
            "-descending" => reverse = true,
            flags if flags.len() > 1 && flags.starts_with('-') && !flags.starts_with("--") => {
                for letter in flags[1..].chars() {
                    match letter {
                        'n' => numeric = true,
                        'r' => reverse = true,
                        'u' => unique = true,
                        _ => {
                            return Err(format!(
                                "'sort -{letter}' is not performed on output (-n, -r and -u are)"
                            ));
                        }
                    }
                }
            }
            _ => {
                return Err(format!(
                    "'sort {arg}' sorts files or by fields; wamcp sorts the output by whole lines"
                ));
            }
        }
    }
    Ok(Filter::Sort {
        numeric,
        reverse,
        unique,
    })
}

/// Reads one pipeline stage, or says why wamcp does not perform it.
pub fn parse_filter(argv: &[Arg]) -> Result<Filter, String> {
    let Some(first) = argv.first() else {
        return Err("a '|' with nothing after it".into());
    };
    let args: Vec<&str> = argv[1..].iter().map(|a| a.text.as_str()).collect();
    let name = first.text.to_lowercase();
    match name.as_str() {
        "head" => count_arg(&args, "head").map(Filter::Head),
        "tail" => count_arg(&args, "tail").map(Filter::Tail),
        "select-object" | "select" => select_object(&args),
        "grep" => grep(&args),
        "select-string" | "sls" => select_string(&args),
        "findstr" => findstr(&args),
        "wc" if args == ["-l"] => Ok(Filter::CountLines),
        "measure-object" | "measure"
            if args.len() == 1 && args[0].eq_ignore_ascii_case("-line") =>
        {
            Ok(Filter::CountLines)
        }
        "out-null" if args.is_empty() => Ok(Filter::Discard),
        "cat" | "more" | "less" | "out-string" | "out-host" if args.is_empty() => Ok(Filter::Same),
        "sort" | "sort-object" => sort(&args),
        "uniq" | "get-unique" if args.is_empty() => Ok(Filter::Uniq),
        _ => Err(format!(
            "'| {}' pipes into a program; wamcp performs only {PERFORMED} on a command's output. Run \
             '{}' as a command of its own",
            shown(argv),
            first.text
        )),
    }
}

fn shown(argv: &[Arg]) -> String {
    argv.iter()
        .map(|a| a.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `head`/`tail`'s line count: none (10), `-n N`, `-nN`, `-N`, `--lines=N`.
fn count_arg(args: &[&str], program: &str) -> Result<usize, String> {
    let refused = || {
        format!(
            "'{program} {}' is not a plain line count ('{program} -n N' is); wamcp applies '{program}' only to \
             the command's output",
            args.join(" ")
        )
    };
    let count = match args {
        [] => return Ok(10),
        ["-n", n] => *n,
        [one] => one
            .strip_prefix("--lines=")
            .or_else(|| one.strip_prefix("-n"))
            .or_else(|| one.strip_prefix('-'))
            .ok_or_else(refused)?,
        _ => return Err(refused()),
    };
    count.parse::<usize>().map_err(|_| refused())
}

/// `Select-Object -First N` or `-Last N` (any prefix of the parameter's
/// name, as PowerShell binds it).
fn select_object(args: &[&str]) -> Result<Filter, String> {
    let (Some(name), Some(n), 2) = (args.first(), args.get(1), args.len()) else {
        return Err("'Select-Object' is performed only as '-First N' or '-Last N'".into());
    };
    let name = name.trim_end_matches(':').to_lowercase();
    let n: usize = n
        .parse()
        .map_err(|_| format!("'Select-Object {name}' takes a count, not '{n}'"))?;
    let is = |full: &str| name.len() > 1 && full.starts_with(&name);
    match () {
        _ if is("-first") => Ok(Filter::Head(n)),
        _ if is("-last") => Ok(Filter::Tail(n)),
        _ => Err("'Select-Object' is performed only as '-First N' or '-Last N'".into()),
    }
}

/// How a pattern is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Syntax {
    /// grep's default: `\|`, `\(` are operators, bare `|`, `(` are text.
    Basic,
    /// `grep -E`, `Select-String`, `findstr /r` (close enough for a line filter).
    Extended,
    /// Literal text.
    Fixed,
}

/// The options of one line-matching filter.
struct Matching {
    patterns: Vec<String>,
    syntax: Syntax,
    ignore_case: bool,
    invert: bool,
    number: bool,
    count: bool,
}

impl Matching {
    fn new(syntax: Syntax, ignore_case: bool) -> Matching {
        Matching {
            patterns: Vec::new(),
            syntax,
            ignore_case,
            invert: false,
            number: false,
            count: false,
        }
    }

    fn into_filter(self, program: &str) -> Result<Filter, String> {
        if self.patterns.is_empty() {
            return Err(format!("'{program}' needs a pattern"));
        }
        let alternatives: Vec<String> = self
            .patterns
            .iter()
            .map(|p| match self.syntax {
                Syntax::Basic => basic_to_extended(p),
                Syntax::Extended => p.clone(),
                Syntax::Fixed => regex::escape(p),
            })
            .map(|p| format!("(?:{p})"))
            .collect();
        let matcher = RegexBuilder::new(&alternatives.join("|"))
            .case_insensitive(self.ignore_case)
            .size_limit(PATTERN_SIZE_LIMIT)
            .build()
            .map_err(|e| format!("'{program}''s pattern is not one wamcp can read: {e}"))?;
        Ok(Filter::Lines {
            matcher,
            invert: self.invert,
            number: self.number,
            count: self.count,
        })
    }
}

/// grep's basic syntax in the extended one: the escaped operators become
/// operators, the bare ones text.
fn basic_to_extended(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ ('|' | '(' | ')' | '{' | '}' | '+' | '?')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push_str("\\\\"),
            },
            '|' | '(' | ')' | '{' | '}' | '+' | '?' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `grep [-ivcnEFw...] [-e] PATTERN`, on the output only.
fn grep(args: &[&str]) -> Result<Filter, String> {
    let mut m = Matching::new(Syntax::Basic, false);
    let mut words = false;
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        match arg {
            "-e" | "--regexp" => m
                .patterns
                .push(rest.next().ok_or("'grep -e' needs a pattern")?.to_string()),
            "--ignore-case" => m.ignore_case = true,
            "--invert-match" => m.invert = true,
            "--count" => m.count = true,
            "--line-number" => m.number = true,
            "--extended-regexp" => m.syntax = Syntax::Extended,
            "--fixed-strings" => m.syntax = Syntax::Fixed,
            "--word-regexp" => words = true,
            cluster
                if cluster.len() > 1 && cluster.starts_with('-') && !cluster.starts_with("--") =>
            {
                for letter in cluster[1..].chars() {
                    match letter {
                        'i' => m.ignore_case = true,
                        'v' => m.invert = true,
                        'c' => m.count = true,
                        'n' => m.number = true,
                        'E' => m.syntax = Syntax::Extended,
                        'F' => m.syntax = Syntax::Fixed,
                        'G' => m.syntax = Syntax::Basic,
                        'w' => words = true,
                        _ => {
                            return Err(format!(
                                "'grep -{letter}' is not an option wamcp performs on output (it does -i, -v, -c, \
                                 -n, -w, -E, -F and -e)"
                            ));
                        }
                    }
                }
            }
            pattern if m.patterns.is_empty() => m.patterns.push(pattern.to_string()),
            file => {
                return Err(format!(
                    "'grep' is applied only to the command's output, not to files such as '{file}'; search files \
                     with the search_files tool"
                ));
            }
        }
    }
    if words {
        let syntax = m.syntax;
        m.patterns = m
            .patterns
            .iter()
            .map(|p| match syntax {
                Syntax::Fixed => format!(r"\b{}\b", regex::escape(p)),
                Syntax::Basic => format!(r"\b(?:{})\b", basic_to_extended(p)),
                Syntax::Extended => format!(r"\b(?:{p})\b"),
            })
            .collect();
        m.syntax = Syntax::Extended;
    }
    m.into_filter("grep")
}

/// `Select-String [-Pattern] P [-SimpleMatch] [-CaseSensitive] [-NotMatch]`.
fn select_string(args: &[&str]) -> Result<Filter, String> {
    let mut m = Matching::new(Syntax::Extended, true);
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        match arg.to_lowercase().as_str() {
            "-pattern" => m.patterns.push(
                rest.next()
                    .ok_or("'Select-String -Pattern' needs a pattern")?
                    .to_string(),
            ),
            "-simplematch" => m.syntax = Syntax::Fixed,
            "-casesensitive" => m.ignore_case = false,
            "-notmatch" => m.invert = true,
            option if option.starts_with('-') => {
                return Err(format!(
                    "'Select-String {arg}' is not performed on output (-Pattern, -SimpleMatch, -CaseSensitive and \
                     -NotMatch are)"
                ));
            }
            _ if m.patterns.is_empty() => m.patterns.push(arg.to_string()),
            _ => {
                return Err(
                    "'Select-String' takes one pattern here; search files with the search_files tool".into(),
                );
            }
        }
    }
    m.into_filter("Select-String")
}

/// `findstr [/i] [/v] [/n] [/r] [/l] [/c:TEXT] WORDS`: without `/c:`, each
/// space-separated word is an alternative, as findstr reads it.
fn findstr(args: &[&str]) -> Result<Filter, String> {
    let mut m = Matching::new(Syntax::Fixed, false);
    let mut words = Vec::new();
    for &arg in args {
        let lower = arg.to_lowercase();
        if let Some(text) = lower
            .strip_prefix("/c:")
            .map(|_| arg.get(3..).unwrap_or_default())
        {
            m.patterns.push(text.to_string());
            continue;
        }
        match lower.as_str() {
            "/i" => m.ignore_case = true,
            "/v" => m.invert = true,
            "/n" => m.number = true,
            "/r" => m.syntax = Syntax::Extended,
            "/l" => m.syntax = Syntax::Fixed,
            option if option.starts_with('/') && option.len() <= 3 => {
                return Err(format!(
                    "'findstr {arg}' is not performed on output (/I, /V, /N, /R, /L and /C: are)"
                ));
            }
            _ => words.extend(arg.split(' ').filter(|w| !w.is_empty()).map(String::from)),
        }
    }
    m.patterns.extend(words);
    m.into_filter("findstr")
}

#[cfg(test)]
mod tests;
