//! The verdict on a line for a host's own shell tool, command by command:
//! what wamcp refuses outright is denied, what destroys work is asked
//! about, anything else is left to the host.
//!
//! The line is read as its shell runs it, with the state a line carries
//! from one command to the next: the folder a `cd` moved to (relative
//! names are judged there) and the links an `ln -s` made (a recursive
//! delete through one empties what it points at).

use super::Verdict;
use crate::command::effects::{Nested, deletes_files, is_assignment, loss, nested, trust_write};
use crate::command::rules::{BLOCKED_RULES, Decision, RuleSet, program_name};
use crate::command::shell_line::{Dialect, SimpleCommand, Word, simple_commands};
use crate::command::tokenize::Arg;
use crate::write_rules::names_trust_location;

/// Nested shells deeper than this are not looked into.
const MAX_SHELL_DEPTH: usize = 6;

/// What wamcp makes of a line the host's own shell tool will run: `Deny`
/// when a command in it does what wamcp refuses outright (a program option
/// that runs code, by the same grammars `run_powershell` uses; a write to a
/// file that runs programs later; git configuration set through the
/// environment; a script nobody can read), `Ask` when it destroys work or
/// history, else `Nothing` — a program no table knows is no opinion, and
/// the host's own permissions decide.
pub fn shell_verdict(
    line: &str,
    dialect: Dialect,
    rules: &RuleSet,
    exists: &dyn Fn(&str) -> bool,
) -> Verdict {
    let mut judge = Judge {
        rules: Some(rules),
        exists,
        verdict: Verdict::Nothing,
    };
    judge.line(line, dialect, &mut Place::default(), 0);
    judge.verdict
}

/// [`shell_verdict`] for a command given as argv, with no shell between.
pub fn argv_verdict(argv: &[&str], rules: &RuleSet, exists: &dyn Fn(&str) -> bool) -> Verdict {
    let words: Vec<Word> = argv
        .iter()
        .map(|text| Word {
            text: text.to_string(),
            dynamic: false,
            quoted: false,
        })
        .collect();
    let mut judge = Judge {
        rules: Some(rules),
        exists,
        verdict: Verdict::Nothing,
    };
    judge.words(&words, None, &Place::default(), 0);
    judge.verdict
}

/// What `argv` does that no OS layer bounds, without the grammars' view
/// of its options: work destroyed (also by a command it runs in turn, as
/// `sh -c 'git clean -fdx'`), a file written that runs programs later, a
/// script nobody can read. For a command that runs confined, where the
/// options themselves are no question.
pub fn argv_effects(argv: &[Arg], exists: &dyn Fn(&str) -> bool) -> Verdict {
    let words: Vec<Word> = argv.iter().map(Word::from).collect();
    let mut judge = Judge {
        rules: None,
        exists,
        verdict: Verdict::Nothing,
    };
    judge.words(&words, None, &Place::default(), 0);
    judge.verdict
}

/// What a line has changed so far for the commands after it.
#[derive(Default)]
struct Place {
    /// Where `cd` went, relative to the session's folder (or absolute).
    dir: String,
    /// Names `ln -s` made on this line.
    links: Vec<String>,
    /// PowerShell aliases set on this line (`sal x git`): name, program.
    aliases: Vec<(String, String)>,
}

impl Place {
    /// `words` with an alias set earlier on the line replaced by its program.
    fn resolve(&self, words: &[Word]) -> Vec<Word> {
        let mut words = words.to_vec();
        if let Some(first) = words.first_mut()
            && let Some((_, program)) = self
                .aliases
                .iter()
                .find(|(name, _)| first.text.eq_ignore_ascii_case(name))
        {
            first.text = program.clone();
        }
        words
    }

    /// A delete's relative targets taken where `cd` went, so that
    /// `cd /usr/local && rm -rf bin` is judged as `rm -rf /usr/local/bin`.
    fn rooted_targets(&self, words: &[Word]) -> Vec<Word> {
        let deletes = words.first().is_some_and(|w| {
            let name = program_name(&w.text);
            deletes_files(&name) || name == "cmake"
        });
        if !deletes || self.dir.is_empty() {
            return words.to_vec();
        }
        let mut placed = words.to_vec();
        for word in placed.iter_mut().skip(1) {
            if !word.text.starts_with(['-', '/']) && word.text != "-E" {
                word.text = self.join(&word.text);
            }
        }
        placed
    }

    fn join(&self, path: &str) -> String {
        if self.dir.is_empty() || path.starts_with(['/', '\\', '~']) || path.get(1..2) == Some(":")
        {
            path.to_string()
        } else {
            format!("{}/{path}", self.dir)
        }
    }

    /// Takes in what `words` changes: `cd DIR` and `ln -s TARGET NAME`.
    fn follow(&mut self, words: &[Word]) {
        let Some((first, args)) = words.split_first() else {
            return;
        };
        let positionals: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
        match program_name(&first.text).as_str() {
            "cd" | "pushd" | "chdir" | "set-location" | "sl" => {
                if let Some(dir) = positionals.first() {
                    self.dir = self.join(&dir.text);
                }
            }
            "ln" if args
                .iter()
                .any(|a| a.text.starts_with('-') && a.text.contains('s')) =>
            {
                if let Some(name) = positionals.last() {
                    self.links
                        .push(name.text.trim_end_matches(['/', '\\']).to_string());
                }
            }
            "set-alias" | "sal" | "new-alias" | "nal" => {
                let named = |option: &str| {
                    args.windows(2)
                        .find(|pair| pair[0].text.eq_ignore_ascii_case(option))
                        .map(|pair| pair[1].text.clone())
                };
                let name = named("-name").or_else(|| positionals.first().map(|w| w.text.clone()));
                let value = named("-value").or_else(|| positionals.get(1).map(|w| w.text.clone()));
                if let (Some(name), Some(value)) = (name, value) {
                    self.aliases.push((name.to_ascii_lowercase(), value));
                }
            }
            _ => {}
        }
    }
}

struct Judge<'a> {
    /// The grammars' view of options; `None` judges effects only.
    rules: Option<&'a RuleSet>,
    exists: &'a dyn Fn(&str) -> bool,
    verdict: Verdict,
}

impl Judge<'_> {
    /// Keeps the strictest verdict, and the first reason at that level.
    fn found(&mut self, found: Verdict) {
        let rank = |v: &Verdict| match v {
            Verdict::Deny(_) => 3,
            Verdict::Ask(_) => 2,
            Verdict::ProvenPlan => 1,
            Verdict::Nothing => 0,
        };
        if rank(&found) > rank(&self.verdict) {
            self.verdict = found;
        }
    }

    fn line(&mut self, line: &str, dialect: Dialect, place: &mut Place, depth: usize) {
        let commands = simple_commands(line, dialect);
        if dialect == Dialect::PowerShell && dotnet_writes_trust_file(line, &commands) {
            self.found(Verdict::Deny(
                "wamcp refuses this command: a .NET call on it writes files, and the line names a trust location".into(),
            ));
        }
        if dialect == Dialect::PowerShell
            && let Some(why) = dotnet_runs_or_deletes(line)
        {
            self.found(Verdict::Ask(format!("'{line}' cannot be judged: {why}")));
        }
        for command in &commands {
            if let Some(why) = sets_git_config(&command.words) {
                self.found(Verdict::Deny(format!("wamcp refuses this command: {why}")));
            }
            let redirects = SimpleCommand {
                writes_to: command.writes_to.clone(),
                ..SimpleCommand::default()
            };
            if let Some(why) = trust_write(&redirects, &place.dir) {
                self.found(Verdict::Deny(format!("wamcp refuses this command: {why}")));
            }
            let words = without_keywords(&command.words);
            self.words(words, command.stdin.as_deref(), place, depth);
            place.follow(words);
        }
    }

    fn words(&mut self, words: &[Word], stdin: Option<&str>, place: &Place, depth: usize) {
        let start = words.iter().take_while(|w| is_assignment(w)).count();
        let aliased = place.resolve(&words[start..]);
        let words = aliased.as_slice();
        let Some(first) = words.first() else {
            return;
        };
        let shown = || {
            words
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        self.rules_say(words, &shown());
        let command = SimpleCommand {
            words: words.to_vec(),
            ..SimpleCommand::default()
        };
        if let Some(why) = trust_write(&command, &place.dir) {
            self.found(Verdict::Deny(format!("wamcp refuses this command: {why}")));
        }
        let exists = |path: &str| (self.exists)(&place.join(path));
        let placed = place.rooted_targets(words);
        if let Some(why) = loss(&placed, &exists) {
            self.found(Verdict::Ask(format!(
                "'{}' cannot be undone: {why}",
                shown()
            )));
        }
        if let Some(link) = deletes_through_link(words, &place.links) {
            self.found(Verdict::Ask(format!(
                "'{}' deletes through '{link}', a link made on this line, what it points at",
                shown()
            )));
        }
        if depth >= MAX_SHELL_DEPTH || first.text.is_empty() {
            return;
        }
        for inner in nested(words, stdin) {
            match inner {
                Nested::Command(inner) => self.words(&inner, None, place, depth + 1),
                Nested::Script(script, dialect) => {
                    let mut inner_place = Place {
                        dir: place.dir.clone(),
                        links: place.links.clone(),
                        aliases: place.aliases.clone(),
                    };
                    self.line(&script, dialect, &mut inner_place, depth + 1)
                }
                Nested::Encoded => self.found(Verdict::Deny(
                    "wamcp refuses an encoded script: nobody can read it before it runs".into(),
                )),
                Nested::Unseen(why) => self.found(Verdict::Ask(format!(
                    "'{}' cannot be judged: {why}",
                    shown()
                ))),
            }
        }
    }

    /// The command rules' answer, where a grammar or rule knows the
    /// program: what they forbid is denied, what a user's rule asks about
    /// is asked (a grammar's unknown option is no opinion here).
    fn rules_say(&mut self, words: &[Word], shown: &str) {
        let Some(rules) = self.rules else {
            return;
        };
        let argv: Vec<Arg> = words
            .iter()
            .map(|w| Arg {
                text: w.text.clone(),
                quoted: w.quoted,
            })
            .collect();
        let ruled = rules.judge(&argv);
        let grammar = rules
            .grammars()
            .for_program(&program_name(&words[0].text))
            .map(|g| g.id.clone());
        let known = ruled.rule.as_ref().is_some_and(|r| r != BLOCKED_RULES);
        // An interpreter's `-c` or `-e` runs code, as its script would: in
        // the host's shell that is no escalation (wamcp's own tool refuses
        // it because it cannot see the code's effects).
        let interpreter = matches!(grammar.as_deref(), Some("python" | "node"));
        match ruled.decision {
            Decision::Forbidden if known && !interpreter => self.found(Verdict::Deny(format!(
                "wamcp refuses '{shown}': {}",
                ruled.reason()
            ))),
            Decision::Prompt if known && ruled.rule != grammar => self.found(Verdict::Ask(
                format!("wamcp asks before '{shown}': {}", ruled.reason()),
            )),
            _ => {}
        }
    }
}

/// The command without the shell's own words before it: `if`, `then`,
/// `do`, `!`, `time`... and PowerShell's `$x =`. A loop or `case` header
/// runs nothing itself.
fn without_keywords(words: &[Word]) -> &[Word] {
    let mut words = words;
    loop {
        let Some(first) = words.first().filter(|w| !w.quoted) else {
            return words;
        };
        match first.text.as_str() {
            "if" | "then" | "else" | "elif" | "fi" | "do" | "done" | "while" | "until" | "!"
            | "coproc" | "{" | "}" | "call" | "not" => words = &words[1..],
            // cmd's `if exist X command`, `if defined X`, `if errorlevel N`.
            "exist" | "defined" | "errorlevel" => words = words.get(2..).unwrap_or_default(),
            // PowerShell's dot-sourcing of a command: `. git reset --hard`.
            "." if words.len() > 2 => words = &words[1..],
            "for" | "select" | "case" | "function" | "esac" => return &[],
            text if text.starts_with('$')
                && words
                    .get(1)
                    .is_some_and(|w| matches!(w.text.as_str(), "=" | "+=")) =>
            {
                words = &words[2..]
            }
            _ => return words,
        }
    }
}

/// Environment variables that make git read configuration or run a
/// program of the caller's choosing, past the checks `-c` and the
/// grammars make.
const GIT_PROGRAM_VARIABLES: &[&str] = &[
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
];

/// git configuration or a program set through the environment: `NAME=`,
/// `export NAME=`, `$env:NAME =`, `${env:NAME}`, `Set-Item env:NAME`.
fn sets_git_config(words: &[Word]) -> Option<&'static str> {
    words
        .iter()
        .any(|w| {
            let upper = w.text.to_ascii_uppercase();
            let name = upper
                .trim_start_matches("${")
                .trim_start_matches('$')
                .trim_start_matches("ENV:");
            GIT_PROGRAM_VARIABLES.iter().any(|v| {
                name.strip_prefix(v).is_some_and(|rest| {
                    v.ends_with('_') || rest.is_empty() || rest.starts_with(['=', '}'])
                })
            }) && (upper.contains('=') || upper.contains("ENV:") || words.len() == 1)
        })
        .then_some("it sets git configuration or a program git runs through the environment, past the checks on -c")
}

/// `[IO.File]::WriteAllText('.git/hooks/x', ...)`: PowerShell's .NET calls
/// write files the cmdlet tables never see.
fn dotnet_writes_trust_file(line: &str, commands: &[SimpleCommand]) -> bool {
    let lower = line.to_ascii_lowercase();
    let writes = lower.contains("]::")
        && ["write", "copy", "move", "create", "append", "replace"]
            .iter()
            .any(|verb| lower.contains(verb));
    writes
        && commands
            .iter()
            .flat_map(|c| &c.words)
            .any(|w| names_trust_location(&w.text).is_some())
}

/// PowerShell's .NET calls that delete folders or run text as a script.
fn dotnet_runs_or_deletes(line: &str) -> Option<&'static str> {
    let lower = line.to_ascii_lowercase();
    if lower.contains("::delete(") || lower.contains(").delete(") {
        return Some("a .NET call deletes files the cmdlet tables never see");
    }
    (lower.contains("[scriptblock]::create")
        || lower.contains("invokescript(")
        || lower.contains("invokecommand"))
    .then_some("a .NET call runs text as a script")
}

/// A recursive delete of a name an earlier `ln -s` on the line made.
fn deletes_through_link<'a>(words: &[Word], links: &'a [String]) -> Option<&'a str> {
    if !deletes_files(&program_name(&words[0].text)) {
        return None;
    }
    links.iter().map(String::as_str).find(|link| {
        words[1..].iter().any(|w| {
            let target = w.text.trim_end_matches(['/', '\\']);
            target == *link || target.starts_with(&format!("{link}/"))
        })
    })
}
