//! A command line as agents type it: plain commands joined by the few
//! shell idioms every agent uses (`a && b`, `cd sub && cmd`, `FOO=1 cmd`,
//! `2>&1`, `| head -n 50`, `timeout 120 cmd`, a heredoc commit message),
//! in Bash and PowerShell spellings alike.
//!
//! wamcp performs those idioms itself: each command is tokenised by the
//! one strict tokenizer and judged on its own, and the server chains them,
//! sets their directory and environment, and filters their output. No shell
//! ever sees the line, so nothing here has to agree with a shell's parser
//! about anything but where one command ends; a wrong split leaves quote or
//! operator characters in a command, which the tokenizer then refuses.
//! Everything else a shell would do (subshells, globbing, redirection into
//! files, variables) stays refused, with what to do instead.

use super::filter::{Filter, parse_filter};
use super::tokenize::{Arg, is_double_quote, is_single_quote, tokenize, tokenize_values};
use std::fmt;

/// How a step follows the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Join {
    /// The first step.
    First,
    /// `&&`: only when everything so far succeeded.
    And,
    /// `||`: only when the last step that ran failed.
    Or,
    /// `;` or a line break: always.
    Then,
}

/// Where a step's standard error goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stderr {
    /// Shown on its own.
    Keep,
    /// `2>$null`, `2>/dev/null`: dropped.
    Drop,
    /// `2>&1`: with standard output, through its filters.
    Merge,
}

/// One command of the line, with what wamcp does around it.
#[derive(Clone, Debug)]
pub struct Step {
    /// When it runs.
    pub join: Join,
    /// The command, tokenised.
    pub argv: Vec<Arg>,
    /// Variables set for it (`FOO=1 cmd`, or a leading `$env:FOO='1';`).
    pub env: Vec<(String, String)>,
    /// `timeout N cmd`: at most this many seconds.
    pub timeout: Option<u64>,
    /// Where its standard error goes.
    pub stderr: Stderr,
    /// The filters its output goes through, in order.
    pub filters: Vec<Filter>,
}

/// A parsed line.
#[derive(Clone, Debug)]
pub struct Line {
    /// A leading `cd DIR &&` or `Set-Location DIR;`: where every step runs,
    /// relative to the directory the call names.
    pub dir: Option<String>,
    /// The commands, at least one.
    pub steps: Vec<Step>,
}

impl Line {
    /// Whether the line is one command with nothing around it, which is
    /// answered exactly as before the idioms existed.
    pub fn is_plain(&self) -> bool {
        matches!(&self.steps[..], [step] if self.dir.is_none()
            && step.env.is_empty()
            && step.timeout.is_none()
            && step.stderr == Stderr::Keep
            && step.filters.is_empty())
    }
}

/// Why a line is not one wamcp performs: what, and what to do instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError(pub String);

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn error<T>(text: impl Into<String>) -> Result<T, LineError> {
    Err(LineError(text.into()))
}

/// What separates two commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sep {
    And,
    Or,
    Then,
    Pipe,
}

/// A redirection wamcp performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Redirect {
    MergeErr,
    DropErr,
    DropOut,
    DropBoth,
}

/// One command's text between separators, redirections taken out.
#[derive(Debug, Default)]
struct Segment {
    raw: String,
    redirects: Vec<Redirect>,
}

/// Parses a command line into the steps wamcp performs.
pub fn parse_line(command: &str) -> Result<Line, LineError> {
    let chars: Vec<char> = command.chars().collect();
    let segments = split(&chars)?;
    let statements = statements(segments)?;
    assemble(statements)
}

/// Splits at the separators outside quotes, performing redirections and
/// turning heredocs and here-strings into single-quoted arguments.
fn split(chars: &[char]) -> Result<Vec<(Option<Sep>, Segment)>, LineError> {
    let mut out = Vec::new();
    let mut current = Segment::default();
    let mut before = None;
    let mut i = 0;
    let mut finish = |sep: Sep, current: &mut Segment, before: &mut Option<Sep>| {
        out.push((before.replace(sep), std::mem::take(current)));
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if let Some((text, end)) = heredoc(chars, i)? {
            current.raw.push_str(&text);
            i = end;
            continue;
        }
        if is_single_quote(c) || is_double_quote(c) {
            let end = quoted_end(chars, i);
            current.raw.extend(&chars[i..end]);
            i = end;
            continue;
        }
        match (c, next) {
            ('`', _) => {
                current.raw.extend(&chars[i..(i + 2).min(chars.len())]);
                i += 2;
            }
            ('&', Some('&')) | ('|', Some('|')) => {
                let sep = if c == '&' { Sep::And } else { Sep::Or };
                finish(sep, &mut current, &mut before);
                i += 2;
            }
            ('|' | ';' | '\n', _) => {
                finish(
                    if c == '|' { Sep::Pipe } else { Sep::Then },
                    &mut current,
                    &mut before,
                );
                i += 1;
            }
            ('\r', Some('\n')) => i += 1,
            ('>' | '<', _) => i = redirect(chars, i, &mut current)?,
            ('&', next) if next != Some('>') => {
                return error(
                    "'&' runs a command in the background or calls a string as a command; wamcp runs each \
                     command to its end: name the program first and drop the '&'",
                );
            }
            _ => {
                // `&>` keeps its `&` as the stream the redirection names.
                current.raw.push(c);
                i += 1;
            }
        }
    }
    out.push((before, current));
    Ok(out)
}

/// The index after the quoted string opened at `open` (the end of the line
/// when it is never closed: the tokenizer then refuses it).
fn quoted_end(chars: &[char], open: usize) -> usize {
    let single = is_single_quote(chars[open]);
    let closes = |c: char| match single {
        true => is_single_quote(c),
        false => is_double_quote(c),
    };
    let mut i = open + 1;
    while i < chars.len() {
        let c = chars[i];
        let escaped = !single && c == '`';
        let doubled = closes(c) && chars.get(i + 1).is_some_and(|&n| closes(n));
        if escaped || doubled {
            i += 2;
        } else if closes(c) {
            return i + 1;
        } else {
            i += 1;
        }
    }
    chars.len()
}

/// A redirection at `at` (`>` or `<`), performed on `segment`; returns the
/// index after its target.
fn redirect(chars: &[char], at: usize, segment: &mut Segment) -> Result<usize, LineError> {
    if chars[at] == '<' {
        return error(
            "'<' feeds a file to the command's input; pass the file's path to the program as an argument",
        );
    }
    let word_start = segment.raw.rfind([' ', '\t']).map_or(0, |p| p + 1);
    let stream = match &segment.raw[word_start..] {
        "2" => Some('2'),
        "1" => Some('1'),
        "*" | "&" => Some('*'),
        _ => None,
    };
    if stream.is_some() {
        segment.raw.truncate(word_start);
    }
    let mut i = at + 1;
    if chars.get(i) == Some(&'>') {
        i += 1;
    }
    while chars.get(i).is_some_and(|&c| c == ' ' || c == '\t') {
        i += 1;
    }
    let start = i;
    while chars.get(i).is_some_and(|&c| {
        !(matches!(c, ' ' | '\t' | ';' | '|' | '\n' | '<' | '>') || c == '&' && i > start)
    }) {
        i += 1;
    }
    let target: String = chars[start..i].iter().collect();
    let null = ["$null", "/dev/null", "nul"]
        .iter()
        .any(|n| target.eq_ignore_ascii_case(n));
    let done = match (stream.unwrap_or('1'), target.as_str(), null) {
        ('2' | '*', "&1", _) => Redirect::MergeErr,
        ('2', _, true) => Redirect::DropErr,
        ('1', _, true) => Redirect::DropOut,
        ('*', _, true) => Redirect::DropBoth,
        _ => {
            return error(format!(
                "'>{target}' redirects into a file, which only a shell does; let the program write the file (most \
                 have an -o or --output option), or write it with the write_file tool. wamcp performs only 2>&1 \
                 and dropping a stream into $null or /dev/null"
            ));
        }
    };
    segment.redirects.push(done);
    Ok(i)
}

/// A heredoc message (`"$(cat <<'EOF'` ... `EOF` `)"`) or a PowerShell
/// here-string (`@'` ... `'@`) starting at `at`, as one single-quoted
/// argument, with the index after it.
fn heredoc(chars: &[char], at: usize) -> Result<Option<(String, usize)>, LineError> {
    let rest: String = chars[at..chars.len().min(at + 12)].iter().collect();
    if rest.starts_with("\"$(cat <<") {
        return bash_heredoc(chars, at + 9).map(Some);
    }
    let here =
        |q: char| rest.starts_with(&format!("@{q}\n")) || rest.starts_with(&format!("@{q}\r\n"));
    for q in ['\'', '"'] {
        if here(q) {
            return here_string(chars, at, q).map(Some);
        }
    }
    Ok(None)
}

/// The body of `"$(cat <<'EOF'\n...\nEOF\n)"`, from after the `<<`, with
/// the index after the closing quote.
fn bash_heredoc(chars: &[char], from: usize) -> Result<(String, usize), LineError> {
    let text: String = chars[from..].iter().collect();
    let Some((opening, mut rest)) = text.split_once('\n') else {
        return error("a heredoc without a body");
    };
    let opening = opening.trim().trim_start_matches('-');
    let literal = opening.starts_with(['\'', '"']);
    let delimiter = opening.trim_matches(['\'', '"']);
    if delimiter.is_empty() || !delimiter.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return error("a heredoc whose delimiter is not one plain word");
    }
    let mut body = String::new();
    loop {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        if line.trim() == delimiter {
            rest = after;
            break;
        }
        if after.is_empty() {
            return error(format!(
                "a heredoc that never ends with a line '{delimiter}'"
            ));
        }
        body.push_str(line);
        body.push('\n');
        rest = after;
    }
    body.pop();
    if !literal && body.contains(['$', '`', '\\']) {
        return error(
            "an unquoted heredoc, whose body the shell expands; quote its delimiter (<<'EOF') so the text is taken \
             as written",
        );
    }
    let Some(after) = rest.trim_start().strip_prefix(")\"") else {
        return error("a heredoc that is not the whole of a \"$(cat <<'EOF' ... EOF\n)\" argument");
    };
    Ok((single_quoted(&body), chars.len() - after.chars().count()))
}

/// The body of a here-string opened by `@'` or `@"` at `at`.
fn here_string(chars: &[char], at: usize, quote: char) -> Result<(String, usize), LineError> {
    let text: String = chars[at + 2..].iter().collect();
    let text = text.strip_prefix('\r').unwrap_or(&text);
    let text = &text[1..];
    let terminator = format!("\n{quote}@");
    let Some(end) = text.find(&terminator) else {
        return error(format!(
            "a here-string that never ends with a line starting '{quote}@'"
        ));
    };
    let body = text[..end].strip_suffix('\r').unwrap_or(&text[..end]);
    if quote == '"' && body.contains(['$', '`']) {
        return error(
            "a double-quoted here-string, whose body PowerShell expands; use @' ... '@ so the text is taken as \
             written",
        );
    }
    let after = text[end + terminator.len()..].chars().count();
    Ok((single_quoted(body), chars.len() - after))
}

/// `text` as one single-quoted argument: every character the tokenizer
/// reads as a single quote (typographic ones too) doubled, so the body can
/// never end the string early.
fn single_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if is_single_quote(c) {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// What one segment does.
#[derive(Debug)]
enum Statement {
    /// `cd DIR`, `Set-Location DIR`.
    Cd(String),
    /// `$env:NAME = 'value'`, `export NAME=value`.
    Env(Vec<(String, String)>),
    /// A command, with its pipeline.
    Command(Box<Step>),
}

/// Reads each segment as a statement; pipe segments become their
/// command's filters.
fn statements(segments: Vec<(Option<Sep>, Segment)>) -> Result<Vec<(Join, Statement)>, LineError> {
    let last = segments.len() - 1;
    let mut out: Vec<(Join, Statement)> = Vec::new();
    for (index, (sep, segment)) in segments.into_iter().enumerate() {
        if segment.raw.trim().is_empty() && segment.redirects.is_empty() {
            // `a;` ends with an empty command, as a shell allows.
            if index == last && sep == Some(Sep::Then) {
                continue;
            }
            if index == 0 && last == 0 {
                return error("The command is empty");
            }
            return error("an operator ('&&', '||', ';' or '|') with no command on one side");
        }
        if sep == Some(Sep::Pipe) {
            let Some((_, Statement::Command(step))) = out.last_mut() else {
                return error("a '|' after something that is not a command");
            };
            if !segment.redirects.is_empty() {
                return error(
                    "a redirection after a '|' filter; put it on the command before the '|'",
                );
            }
            step.filters
                .push(parse_filter(&tokens(&segment.raw)?).map_err(LineError)?);
            continue;
        }
        let join = match sep {
            None => Join::First,
            Some(Sep::And) => Join::And,
            Some(Sep::Or) => Join::Or,
            Some(Sep::Then | Sep::Pipe) => Join::Then,
        };
        out.push((join, statement(segment)?));
    }
    Ok(out)
}

fn tokens(raw: &str) -> Result<Vec<Arg>, LineError> {
    tokenize(raw).map_err(|refused| LineError(format!("The command contains {refused}")))
}

/// One segment as a statement.
fn statement(segment: Segment) -> Result<Statement, LineError> {
    let trimmed = segment.raw.trim_start();
    if let Some(rest) = trimmed
        .get(..5)
        .filter(|start| start.eq_ignore_ascii_case("$env:"))
        .map(|_| &trimmed[5..])
    {
        return env_statement(rest).map(Statement::Env);
    }
    let argv = tokens(&segment.raw)?;
    let name = argv[0].text.to_lowercase();
    if matches!(
        name.as_str(),
        "cd" | "chdir" | "set-location" | "sl" | "pushd"
    ) {
        return cd_statement(&argv).map(Statement::Cd);
    }
    if name == "export" && argv.len() > 1 {
        let assignments: Option<Vec<_>> = argv[1..].iter().map(assignment).collect();
        return assignments.map(Statement::Env).ok_or_else(|| {
            LineError("'export' here sets variables only: export NAME=value".into())
        });
    }
    command(argv, &segment.redirects).map(|step| Statement::Command(Box::new(step)))
}

/// `NAME = 'value'` after `$env:`.
fn env_statement(rest: &str) -> Result<Vec<(String, String)>, LineError> {
    let Some((name, value)) = rest.split_once('=') else {
        return error(
            "'$env:' reads a variable; wamcp performs only setting one: $env:NAME = 'value'",
        );
    };
    let name = name.trim();
    if !is_name(name) {
        return error(format!("'$env:{name}' is not a plain variable name"));
    }
    let values = tokenize_values(value)
        .map_err(|refused| LineError(format!("The value of $env:{name} contains {refused}")))?;
    match &values[..] {
        [value] => Ok(vec![(name.to_string(), value.text.clone())]),
        _ => error(format!("'$env:{name} =' takes one value; quote it")),
    }
}

/// The directory of `cd DIR` (also `cd /d DIR`, `Set-Location -Path DIR`).
fn cd_statement(argv: &[Arg]) -> Result<String, LineError> {
    let args: Vec<&str> = argv[1..]
        .iter()
        .map(|a| a.text.as_str())
        .filter(|a| !a.eq_ignore_ascii_case("/d") && !a.eq_ignore_ascii_case("-path"))
        .collect();
    match &args[..] {
        [dir] if !dir.starts_with('-') => Ok(dir.to_string()),
        _ => error(format!(
            "'{}' with anything but one directory; pass the directory as working_directory",
            argv[0].text
        )),
    }
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `NAME=value`.
fn assignment(arg: &Arg) -> Option<(String, String)> {
    let (name, value) = arg.text.split_once('=')?;
    is_name(name).then(|| (name.to_string(), value.to_string()))
}

/// A command segment: its leading assignments and `timeout N`, its argv
/// and its redirections.
fn command(mut argv: Vec<Arg>, redirects: &[Redirect]) -> Result<Step, LineError> {
    let assigned = argv.iter().take_while(|a| assignment(a).is_some()).count();
    let env: Vec<_> = argv
        .drain(..assigned)
        .filter_map(|a| assignment(&a))
        .collect();
    let mut timeout = None;
    if argv.len() > 2 && argv[0].text == "timeout" {
        timeout = Some(seconds(&argv[1].text)?);
        argv.drain(..2);
    }
    if argv.is_empty() {
        return error(
            "variables set for no command; name the command after them: NAME=value program",
        );
    }
    let mut stderr = Stderr::Keep;
    let mut filters = Vec::new();
    for redirect in redirects {
        match redirect {
            Redirect::MergeErr => stderr = Stderr::Merge,
            Redirect::DropErr => stderr = Stderr::Drop,
            Redirect::DropOut => filters.push(Filter::Discard),
            Redirect::DropBoth => {
                stderr = Stderr::Drop;
                filters.push(Filter::Discard);
            }
        }
    }
    Ok(Step {
        join: Join::First,
        argv,
        env,
        timeout,
        stderr,
        filters,
    })
}

/// `timeout`'s duration: seconds, or with an `s`, `m` or `h` suffix.
fn seconds(text: &str) -> Result<u64, LineError> {
    let (number, unit) = match text.char_indices().last() {
        Some((i, 's')) => (&text[..i], 1),
        Some((i, 'm')) => (&text[..i], 60),
        Some((i, 'h')) => (&text[..i], 3600),
        _ => (text, 1),
    };
    number
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .map(|n| n.saturating_mul(unit))
        .ok_or_else(|| LineError(format!("'timeout {text}' is not a whole number of seconds")))
}

/// The statements as a line: leading `cd` and variables, then commands.
fn assemble(statements: Vec<(Join, Statement)>) -> Result<Line, LineError> {
    let mut dir: Option<String> = None;
    let mut env: Vec<(String, String)> = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    for (join, statement) in statements {
        let leading = steps.is_empty();
        if join == Join::Or && !matches!(statement, Statement::Command(_)) {
            return error(
                "'||' before a cd or a variable; wamcp sets those only at the start of the line",
            );
        }
        match statement {
            Statement::Cd(to) if leading => {
                dir = Some(match dir {
                    Some(before) => format!("{before}/{to}"),
                    None => to,
                });
            }
            Statement::Env(set) if leading => env.extend(set),
            Statement::Cd(_) => {
                return error(
                    "a 'cd' between commands; wamcp changes directory only at the start of the line. Run the \
                     commands after it in a call of their own with working_directory",
                );
            }
            Statement::Env(_) => {
                return error(
                    "a variable set between commands; set variables only at the start of the line",
                );
            }
            Statement::Command(mut step) => {
                step.join = if leading { Join::First } else { join };
                let mut all = env.clone();
                all.append(&mut step.env);
                step.env = all;
                steps.push(*step);
            }
        }
    }
    if steps.is_empty() {
        return error(match dir {
            Some(_) => {
                "'cd' alone changes nothing for the next call; pass the directory as the working_directory \
                 parameter of the call that needs it"
            }
            None => "variables set for no command",
        });
    }
    Ok(Line { dir, steps })
}

#[cfg(test)]
mod tests;
