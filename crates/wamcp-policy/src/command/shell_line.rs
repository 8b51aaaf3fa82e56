//! The simple commands in a line a host's own shell tool will run (Claude
//! Code's `Bash` and `PowerShell`, Codex's shell), for the hooks that judge
//! each command by its effect.
//!
//! wamcp's own tokenizer refuses whatever it cannot take literally, because
//! what it accepts is what runs. This splitter never refuses: the host's
//! shell runs the line whatever we make of it, so the aim is to find every
//! command in it that a table knows — inside `$(...)`, backticks, here-doc
//! bodies, groups and PowerShell script blocks too — and to mark each word
//! whose value only the shell will know (a variable, a substitution, a
//! glob) instead of guessing it. Reading too much as a command costs a
//! needless question; reading too little lets a loss through, so where the
//! two conflict this errs towards seeing commands.

use super::tokenize::Arg;

/// Which shell's quoting and operators apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// bash, sh, zsh: `'...'`, `"..."`, `\` escapes, `$(...)`, backticks.
    Posix,
    /// PowerShell: `'...'` (`''` inside), `"..."`, backtick escapes,
    /// `$(...)`, `{ script blocks }`, `@'...'@` here-strings.
    PowerShell,
    /// cmd.exe: only `"` quotes and `^` escapes.
    Cmd,
}

/// One word of a simple command, quotes removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The word's text, quotes removed; its dynamic parts stay as written.
    pub text: String,
    /// Part of it is known only when the shell runs it: a variable, a
    /// substitution or an unquoted glob.
    pub dynamic: bool,
    /// Part of it was quoted (so it is never an operator or a parameter).
    pub quoted: bool,
}

/// A program and its arguments, with the files its output goes to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The program first, then its arguments.
    pub words: Vec<Word>,
    /// Targets of `>`, `>>`, `&>`, `2>`... redirections.
    pub writes_to: Vec<Word>,
    /// What it reads as its input when the line itself holds it: a
    /// here-doc body or a here-string (a shell runs it as a script).
    pub stdin: Option<String>,
}

/// Nested substitutions deeper than this are not looked into; the word
/// that holds them is still marked dynamic.
const MAX_DEPTH: usize = 12;

/// Every simple command of `line`, including those inside substitutions
/// (listed before the command that uses their output) and here-doc bodies
/// (after the command that reads them).
pub fn simple_commands(line: &str, dialect: Dialect) -> Vec<SimpleCommand> {
    let mut out = Vec::new();
    split_into(line, dialect, 0, &mut out);
    out
}

fn split_into(line: &str, dialect: Dialect, depth: usize, out: &mut Vec<SimpleCommand>) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut lexer = Lexer {
        chars: line.chars().collect(),
        at: 0,
        dialect,
        depth,
        out,
        command: SimpleCommand::default(),
        word: None,
        target: Target::Argument,
        heredocs: Vec::new(),
    };
    lexer.run();
}

/// The items of a word that is one brace list (`{a,b,c}`), as bash
/// expands it (empty items vanish); `None` for any other word.
fn whole_brace_list(text: &str) -> Option<Vec<&str>> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    if !inner.contains(',') || inner.contains(['{', '}']) {
        return None;
    }
    Some(inner.split(',').filter(|item| !item.is_empty()).collect())
}

impl From<&Arg> for Word {
    /// A word wamcp's own tokenizer produced: its value is known, nothing
    /// is left for a shell to fill in.
    fn from(arg: &Arg) -> Word {
        Word {
            text: arg.text.clone(),
            dynamic: false,
            quoted: arg.quoted,
        }
    }
}

impl Word {
    fn plain(text: &str) -> Word {
        Word {
            text: text.to_string(),
            ..Word::default()
        }
    }
}

/// Where the word being read goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Argument,
    /// The file a redirection writes.
    Written,
    /// Read (`< file`): not an argument.
    Dropped,
    /// A here-string (`<<< text`): the command's input.
    Input,
    /// A here-doc's delimiter.
    Delimiter {
        strip_tabs: bool,
    },
}

struct Lexer<'o> {
    chars: Vec<char>,
    at: usize,
    dialect: Dialect,
    depth: usize,
    out: &'o mut Vec<SimpleCommand>,
    command: SimpleCommand,
    word: Option<Word>,
    target: Target,
    /// Here-docs opened on this line: (delimiter, strip tabs, body
    /// expands, the index in `out` of the command that reads it).
    heredocs: Vec<(String, bool, bool, Option<usize>)>,
}

impl Lexer<'_> {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            self.step(c);
        }
        self.end_command();
    }

    /// Reads what starts at `c`. The arms are tried in order and the first
    /// that matches decides, so a dialect's special case comes before the
    /// general one.
    fn step(&mut self, c: char) {
        let ps = self.dialect == Dialect::PowerShell;
        let posix = self.dialect == Dialect::Posix;
        let cmd = self.dialect == Dialect::Cmd;
        match c {
            ' ' | '\t' | '\r' => self.separate_words(),
            '\n' => self.newline(),
            '\\' if posix => self.escape(),
            '`' if ps => self.escape(),
            '^' if cmd => self.escape(),
            '`' if posix => self.backtick_substitution(),
            '#' if self.word.is_none() && !cmd => self.hash(ps),
            '<' if ps && self.peek(1) == Some('#') => self.block_comment(),
            '\'' if !cmd => self.single_quoted(),
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' if ps => self.single_quoted(),
            '"' => self.double_quoted(),
            '\u{201C}' | '\u{201D}' | '\u{201E}' if ps => self.double_quoted(),
            '$' if !cmd => self.dollar(),
            '%' if cmd => self.cmd_variable(),
            '@' if ps && self.word.is_none() && matches!(self.peek(1), Some('\'' | '"')) => {
                self.here_string()
            }
            '@' if ps && self.peek(1) == Some('(') => self.prefixed_substitution(),
            ';' | '|' | '&' => self.operator(c),
            // `(( x = 1 << 2 ))` is arithmetic, not a here-doc.
            '(' if posix
                && self.peek(1) == Some('(')
                && self.word.is_none()
                && self.command.words.is_empty() =>
            {
                self.at += 1;
                self.balanced('(', ')');
            }
            // `<(cmd)` and `>(cmd)`: process substitution.
            '<' | '>' if posix && self.peek(1) == Some('(') => self.prefixed_substitution(),
            ',' if ps => self.separate_words(),
            // In PowerShell `(...)` after a command's first word is an
            // argument computed by a pipeline, not the end of the command.
            '(' if ps && (self.word.is_some() || !self.command.words.is_empty()) => {
                self.substitution('(', ')');
            }
            '(' | ')' => self.separate_commands(),
            '{' | '}' if ps => self.separate_commands(),
            '{' if posix && self.word.is_none() && self.next_is_space(1) => {
                self.separate_commands()
            }
            '}' if posix && self.word.is_none() && self.command.words.is_empty() => {
                self.separate_commands()
            }
            '>' | '<' => self.redirection(c),
            '*' | '?' | '[' if posix || ps => self.glob(c),
            c => {
                self.word().text.push(c);
                self.at += 1;
            }
        }
    }

    /// A blank (or PowerShell's `,`): ends the word and steps over it.
    fn separate_words(&mut self) {
        self.end_word();
        self.at += 1;
    }

    /// A bracket or brace that ends the command: ends it and steps over it.
    fn separate_commands(&mut self) {
        self.end_command();
        self.at += 1;
    }

    /// A newline: ends the command, then skips the bodies of the here-docs
    /// opened on the line it ends.
    fn newline(&mut self) {
        self.end_command();
        self.at += 1;
        self.skip_heredoc_bodies();
    }

    /// `#` where a word would start: a comment, except PowerShell's `#>`,
    /// whose `#` is stepped over.
    fn hash(&mut self, ps: bool) {
        if ps && self.peek(1) == Some('>') {
            self.at += 1;
        } else {
            self.comment();
        }
    }

    /// `@(...)`, `<(...)` or `>(...)`: steps over the sign, then reads the
    /// substitution.
    fn prefixed_substitution(&mut self) {
        self.at += 1;
        self.substitution('(', ')');
    }

    /// An unquoted glob character: part of the word, which only the shell
    /// will know.
    fn glob(&mut self, c: char) {
        let word = self.word();
        word.text.push(c);
        word.dynamic = true;
        self.at += 1;
    }

    fn next_is_space(&self, offset: usize) -> bool {
        self.peek(offset).is_none_or(char::is_whitespace)
    }

    /// `\x`, `` `x`` or `^x`: `x` literally; before a newline, a line
    /// continuation.
    fn escape(&mut self) {
        match self.peek(1) {
            Some('\n') => self.at += 2,
            Some(next) => {
                let word = self.word();
                word.text.push(next);
                word.quoted = true;
                self.at += 2;
            }
            None => self.at += 1,
        }
    }

    fn comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.at += 1;
        }
    }

    fn block_comment(&mut self) {
        self.at += 2;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == '#' && self.peek(0) == Some('>') {
                self.at += 1;
                return;
            }
        }
    }

    fn single_quoted(&mut self) {
        let ps = self.dialect == Dialect::PowerShell;
        self.at += 1;
        self.word().quoted = true;
        while let Some(c) = self.peek(0) {
            let closes =
                c == '\'' || (ps && matches!(c, '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}'));
            if closes {
                if ps && self.peek(1).is_some_and(|n| n == c) {
                    self.word().text.push(c);
                    self.at += 2;
                    continue;
                }
                self.at += 1;
                return;
            }
            self.word().text.push(c);
            self.at += 1;
        }
    }

    fn double_quoted(&mut self) {
        let dialect = self.dialect;
        self.at += 1;
        self.word().quoted = true;
        while let Some(c) = self.peek(0) {
            match c {
                '"' | '\u{201C}' | '\u{201D}' | '\u{201E}'
                    if c == '"' || dialect == Dialect::PowerShell =>
                {
                    if dialect == Dialect::PowerShell && self.peek(1) == Some(c) {
                        self.word().text.push(c);
                        self.at += 2;
                        continue;
                    }
                    self.at += 1;
                    return;
                }
                '\\' if dialect == Dialect::Posix => match self.peek(1) {
                    Some('\n') => self.at += 2,
                    Some(n @ ('"' | '\\' | '$' | '`')) => {
                        self.word().text.push(n);
                        self.at += 2;
                    }
                    _ => {
                        self.word().text.push('\\');
                        self.at += 1;
                    }
                },
                '`' if dialect == Dialect::PowerShell => {
                    if let Some(n) = self.peek(1) {
                        self.word().text.push(n);
                    }
                    self.at += 2;
                }
                '`' if dialect == Dialect::Posix => self.backtick_substitution(),
                '$' if dialect != Dialect::Cmd => self.dollar(),
                '%' if dialect == Dialect::Cmd => self.cmd_variable(),
                c => {
                    self.word().text.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// `$(...)`, `$((...))`, `${...}`, `$'...'`, `$name`; anything else is
    /// a literal `$`.
    fn dollar(&mut self) {
        match self.peek(1) {
            Some('(') => {
                self.at += 1;
                self.substitution('(', ')');
            }
            Some('{') => {
                self.at += 1;
                let inner = self.balanced('{', '}');
                let word = self.word();
                word.text.push_str(&format!("${{{inner}}}"));
                word.dynamic = true;
            }
            Some('\'') if self.dialect == Dialect::Posix => {
                self.at += 1;
                self.ansi_c_quoted();
            }
            Some(n)
                if n.is_alphanumeric()
                    || matches!(n, '_' | '?' | '@' | '*' | '#' | '!' | '-' | '$') =>
            {
                let start = self.at;
                self.at += 1;
                if n.is_alphanumeric() || n == '_' {
                    while self.peek(0).is_some_and(|c| {
                        c.is_alphanumeric()
                            || c == '_'
                            || (self.dialect == Dialect::PowerShell && c == ':')
                    }) {
                        self.at += 1;
                    }
                } else {
                    self.at += 1;
                }
                let name: String = self.chars[start..self.at].iter().collect();
                let word = self.word();
                word.text.push_str(&name);
                word.dynamic = true;
            }
            _ => {
                self.word().text.push('$');
                self.at += 1;
            }
        }
    }

    /// `%NAME%` in cmd.
    fn cmd_variable(&mut self) {
        let rest: String = self.chars[self.at + 1..].iter().collect();
        match rest.find('%') {
            Some(end) if end > 0 && !rest[..end].contains(char::is_whitespace) => {
                let word = self.word();
                word.text.push_str(&format!("%{}%", &rest[..end]));
                word.dynamic = true;
                self.at += end + 2;
            }
            _ => {
                self.word().text.push('%');
                self.at += 1;
            }
        }
    }

    fn ansi_c_quoted(&mut self) {
        self.at += 1;
        self.word().quoted = true;
        while let Some(c) = self.peek(0) {
            match c {
                '\'' => {
                    self.at += 1;
                    return;
                }
                '\\' => {
                    let (escaped, used) = self.ansi_c_escape();
                    self.word().text.push(escaped);
                    self.at += used;
                }
                c => {
                    self.word().text.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// At a `\\` in `$'...'`: the character and how many were read
    /// (`\\x67` and `\\147` are both `g`: a program name can hide in them).
    fn ansi_c_escape(&self) -> (char, usize) {
        let digits = |radix: u32, from: usize, most: usize| {
            let text: String = (from..from + most)
                .map_while(|i| self.peek(i).filter(|c| c.is_digit(radix)))
                .collect();
            u32::from_str_radix(&text, radix)
                .ok()
                .and_then(char::from_u32)
                .map(|c| (c, text.len()))
        };
        match self.peek(1) {
            Some('n') => ('\n', 2),
            Some('t') => ('\t', 2),
            Some('x') => digits(16, 2, 2).map_or(('x', 2), |(c, n)| (c, n + 2)),
            Some('0'..='7') => digits(8, 1, 3).map_or(('0', 2), |(c, n)| (c, n + 1)),
            Some(other) => (other, 2),
            None => ('\\', 1),
        }
    }

    /// At `open`: the text up to the matching `close` (quotes respected),
    /// leaving the position after it.
    fn balanced(&mut self, open: char, close: char) -> String {
        self.at += 1;
        let start = self.at;
        let mut depth = 1;
        let mut quote: Option<char> = None;
        // Here-docs opened inside (`$(cat <<'EOF' ... EOF)`, Claude's commit
        // form): their bodies are data, and an apostrophe there opens nothing.
        let mut pending: Vec<String> = Vec::new();
        while let Some(c) = self.peek(0) {
            if quote.is_none() && self.dialect == Dialect::Posix {
                if c == '<' && self.peek(1) == Some('<') && self.peek(2) != Some('<') {
                    if let Some(delimiter) = self.heredoc_delimiter_at(self.at + 2) {
                        pending.push(delimiter);
                    }
                } else if c == '\n' && !pending.is_empty() {
                    self.at += 1;
                    for delimiter in std::mem::take(&mut pending) {
                        self.skip_lines_until(&delimiter);
                    }
                    continue;
                }
            }
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') if self.dialect == Dialect::Posix => self.at += 1,
                (Some(_), _) => {}
                (None, '\'' | '"') if self.dialect != Dialect::Cmd => quote = Some(c),
                (None, '\\') if self.dialect == Dialect::Posix => self.at += 1,
                (None, '`') if self.dialect == Dialect::PowerShell => self.at += 1,
                (None, c) if c == open => depth += 1,
                (None, c) if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        let inner: String = self.chars[start..self.at].iter().collect();
                        self.at += 1;
                        return inner;
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
        self.chars[start.min(self.chars.len())..].iter().collect()
    }

    /// The delimiter of a here-doc whose `<<` ends before `at`: `EOF`,
    /// `'EOF'`, `"EOF"`, `-EOF`.
    fn heredoc_delimiter_at(&self, at: usize) -> Option<String> {
        let rest: String = self.chars[at.min(self.chars.len())..]
            .iter()
            .take(64)
            .collect();
        let rest = rest.trim_start_matches('-').trim_start();
        let word: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '|' | '&' | ')' | '<' | '>'))
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        (!word.is_empty()).then_some(word)
    }

    /// Moves past the line that is `delimiter` (tabs before it allowed).
    fn skip_lines_until(&mut self, delimiter: &str) {
        while self.peek(0).is_some() {
            let start = self.at;
            while self.peek(0).is_some_and(|c| c != '\n') {
                self.at += 1;
            }
            let line: String = self.chars[start..self.at].iter().collect();
            if self.peek(0).is_some() {
                self.at += 1;
            }
            if line.trim_start_matches('\t') == delimiter {
                return;
            }
        }
    }

    /// `$(...)` or `@(...)` at the `(`: its commands are split out, and the
    /// word that receives the output is dynamic.
    fn substitution(&mut self, open: char, close: char) {
        let inner = self.balanced(open, close);
        split_into(&inner, self.dialect, self.depth + 1, &mut *self.out);
        let word = self.word();
        word.text.push_str("$(...)");
        word.dynamic = true;
    }

    fn backtick_substitution(&mut self) {
        self.at += 1;
        let start = self.at;
        while let Some(c) = self.peek(0) {
            if c == '\\' {
                self.at += 2;
                continue;
            }
            if c == '`' {
                break;
            }
            self.at += 1;
        }
        let end = self.at.min(self.chars.len());
        let inner: String = self.chars[start..end].iter().collect();
        self.at = end + 1;
        split_into(&inner, Dialect::Posix, self.depth + 1, &mut *self.out);
        let word = self.word();
        word.text.push_str("$(...)");
        word.dynamic = true;
    }

    /// `@'...'@` and `@"..."@`: text to the closing quote at a line start.
    fn here_string(&mut self) {
        let quote = self.peek(1).unwrap_or('\'');
        self.at += 2;
        let start = self.at;
        let rest: String = self.chars[start..].iter().collect();
        let closing = format!("\n{quote}@");
        let (body, consumed) = match rest.find(&closing) {
            Some(end) => (rest[..end].to_string(), end + closing.len()),
            None => (rest.clone(), rest.len()),
        };
        self.at = start + rest[..consumed].chars().count();
        if quote == '"' {
            self.expand_substitutions(&body);
        }
        let word = self.word();
        word.text.push_str(&body);
        word.quoted = true;
    }

    /// The commands of every `$(...)` (and, for POSIX, backtick) inside
    /// text the shell expands but does not run (a here-doc body, a
    /// PowerShell here-string).
    fn expand_substitutions(&mut self, text: &str) {
        let mut inner = Lexer {
            chars: text.chars().collect(),
            at: 0,
            dialect: self.dialect,
            depth: self.depth + 1,
            out: &mut *self.out,
            command: SimpleCommand::default(),
            word: None,
            target: Target::Argument,
            heredocs: Vec::new(),
        };
        while let Some(c) = inner.peek(0) {
            match c {
                '$' if inner.peek(1) == Some('(') => {
                    inner.at += 1;
                    inner.substitution('(', ')');
                }
                '`' if inner.dialect == Dialect::Posix => inner.backtick_substitution(),
                '\\' if inner.dialect == Dialect::Posix => inner.at += 2,
                _ => inner.at += 1,
            }
        }
    }

    fn operator(&mut self, c: char) {
        let ps = self.dialect == Dialect::PowerShell;
        // `&>` and `&>>` redirect both streams.
        if c == '&' && self.dialect == Dialect::Posix && self.peek(1) == Some('>') {
            self.end_word();
            self.at += 1;
            self.redirection('>');
            return;
        }
        // PowerShell's call operator before a command is no separator; a
        // program it computes (`& ('gi'+'t')`) is known only when it runs.
        if c == '&' && ps && self.word.is_none() && self.command.words.is_empty() {
            self.at += 1;
            while matches!(self.peek(0), Some(' ' | '\t')) {
                self.at += 1;
            }
            if self.peek(0) == Some('(') {
                self.substitution('(', ')');
            }
            return;
        }
        self.end_command();
        self.at += 1;
        if matches!(self.peek(0), Some(n) if n == c || (c == '|' && n == '&')) {
            self.at += 1;
        }
    }

    fn redirection(&mut self, c: char) {
        // A word of digits right before is the stream number, not an argument.
        if self.word.as_ref().is_some_and(|w| {
            !w.quoted
                && !w.text.is_empty()
                && w.text.chars().all(|d| d.is_ascii_digit() || d == '*')
        }) {
            self.word = None;
        }
        self.end_word();
        self.at += 1;
        if c == '<' {
            if self.peek(0) == Some('<') {
                self.at += 1;
                if self.peek(0) == Some('<') {
                    self.at += 1;
                    self.target = Target::Input;
                    return;
                }
                let strip_tabs = self.peek(0) == Some('-');
                if strip_tabs {
                    self.at += 1;
                }
                self.target = Target::Delimiter { strip_tabs };
                return;
            }
            if self.peek(0) == Some('&') {
                self.at += 1;
            }
            self.target = Target::Dropped;
            return;
        }
        while matches!(self.peek(0), Some('>' | '|')) {
            self.at += 1;
        }
        // `>&2`, `2>&1`, `>&-`: a stream duplicated, no file.
        if self.peek(0) == Some('&') {
            self.at += 1;
            if self.peek(0).is_some_and(|d| d.is_ascii_digit() || d == '-') {
                while self.peek(0).is_some_and(|d| d.is_ascii_digit() || d == '-') {
                    self.at += 1;
                }
                return;
            }
        }
        self.target = Target::Written;
    }

    fn end_word(&mut self) {
        let Some(mut word) = self.word.take() else {
            return;
        };
        if self.dialect == Dialect::Posix && !word.quoted && word.text.contains('{') {
            if let Some(items) = whole_brace_list(&word.text) {
                // `{git,reset,--hard}` is three words to bash.
                for item in items {
                    self.word = Some(Word::plain(item));
                    self.end_word();
                }
                return;
            }
            if word.text.contains(',') || word.text.contains("..") {
                word.dynamic = true;
            }
        }
        match std::mem::replace(&mut self.target, Target::Argument) {
            Target::Argument => self.command.words.push(word),
            Target::Written => self.command.writes_to.push(word),
            Target::Dropped => {}
            Target::Input => self.command.stdin = Some(word.text),
            Target::Delimiter { strip_tabs } => {
                self.heredocs
                    .push((word.text, strip_tabs, !word.quoted, None));
            }
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        self.target = Target::Argument;
        let command = std::mem::take(&mut self.command);
        if !command.words.is_empty() || !command.writes_to.is_empty() {
            let index = self.out.len();
            for heredoc in self.heredocs.iter_mut().filter(|h| h.3.is_none()) {
                heredoc.3 = Some(index);
            }
            self.out.push(command);
        }
    }

    /// After a newline: the bodies of the here-docs opened on the line
    /// before, which are data (their substitutions still run).
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs, expands, reader) in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.peek(0).is_some() {
                let start = self.at;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.at += 1;
                }
                let line: String = self.chars[start..self.at].iter().collect();
                self.at = (self.at + 1).min(self.chars.len());
                let shown = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if shown == delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if expands {
                self.expand_substitutions(&body);
            }
            if let Some(command) = reader.and_then(|i| self.out.get_mut(i)) {
                command.stdin = Some(body);
            }
        }
    }
}

#[cfg(test)]
mod tests;
