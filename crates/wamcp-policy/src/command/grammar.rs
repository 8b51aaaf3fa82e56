//! Fail-closed argument grammars: what each allowed program may be asked to do.
//!
//! The threat: an allowed program runs arbitrary code through its own
//! options (`git -c alias.x=!cmd x`, `tar --to-command`, `python -m timeit`,
//! `cmake -E env`). A denylist of such options loses to every option nobody
//! listed, to abbreviations (`--upload-pac`), to glued short options
//! (`-x<cmd>`) and to options hidden behind others (`git -C dir -c ...`). So
//! each program is described the way it parses its own command line, and
//! anything the description does not know is asked about, never allowed.
//!
//! How a word is read, in order (see [`Walk::option`]):
//!
//! 1. `--` ends the options; the words after it are judged by the
//!    command's `after_dashdash` setting.
//! 2. An option word is looked up whole, then split at a value separator
//!    (`--opt=v`, `/p:v`), then against prefix patterns (`-W*`), then as a
//!    unique abbreviation of a long option (only where the program accepts
//!    them), then as `--no-<flag>`, then as a single letter with a glued
//!    value (`-n5`, `-DFOO`) or a cluster of letters (`-xzf`).
//! 3. A listed option's value is the attached part or the next word; a
//!    value with a table is checked against it.
//! 4. The first positional may select a subcommand; later positionals are
//!    judged by the command's `args` setting.
//! 5. Whatever is not recognised is `prompt`, naming the word. The strictest
//!    finding wins; a forbidden word stops the walk.

use super::rules::Decision;
use super::spec::{
    Args, CommandSpec, Examples, GrammarSpec, Opt, Table, Takes, ValueCheck, glob_match,
    parse_option,
};
use super::tokenize::Arg;
use crate::write_rules::names_trust_location;
use std::collections::{BTreeMap, HashMap};

/// A compiled command or subcommand.
#[derive(Clone, Debug, Default)]
struct Cmd {
    exact: HashMap<String, Opt>,
    /// Prefix patterns, longest first.
    patterns: Vec<(String, Opt)>,
    subcommands: HashMap<String, usize>,
    children: Vec<Cmd>,
    subcommand_required: bool,
    args: Args,
    after_dashdash: Args,
    inherit: bool,
    delegate: Option<String>,
    decision: Option<(Decision, String)>,
    special: Option<Special>,
    network: Option<bool>,
}

/// Readings of positionals that no generic setting expresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Special {
    /// `git config [opts] key [value]`: with a value it writes, and the key
    /// is judged by the `config-write` table.
    GitConfigLegacy,
    /// `git config set key value`: the first positional is the key.
    GitConfigSet,
}

/// A compiled grammar.
#[derive(Clone, Debug)]
pub struct Grammar {
    /// The grammar's name, from its file's `id`.
    pub id: String,
    /// Program names it judges, lower-cased; a
    /// later grammar for a name takes it over.
    pub programs: Vec<String>,
    abbreviations: bool,
    negation: bool,
    cluster: bool,
    case_insensitive: bool,
    slash: bool,
    separators: Vec<char>,
    glued_values: bool,
    response_files: bool,
    dashless_first_cluster: bool,
    forbid_words: Vec<(String, String)>,
    tables: BTreeMap<String, Table>,
    modules: HashMap<String, Cmd>,
    top: Cmd,
    network_options: Vec<String>,
    offline_options: Vec<String>,
    /// Command lines checked when it loads.
    pub examples: Examples,
}

/// What a grammar makes of a command: the strictest thing found (`None`
/// when everything is allowed) and whether it may use the network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// The strictest finding, or `None` when every argument is allowed.
    pub finding: Option<Finding>,
    /// Whether the command as judged may use the network.
    pub network: bool,
}

/// The strictest thing found in a command, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Whether the argument is asked about or forbidden.
    pub decision: Decision,
    /// Index in argv (the program is 0).
    pub arg: usize,
    /// The argument as written.
    pub word: String,
    /// The reason, in words shown to the user.
    pub why: String,
}

impl Grammar {
    /// Compiles a grammar file's text.
    pub fn parse(text: &str) -> Result<Grammar, String> {
        let spec: GrammarSpec =
            serde_json::from_str(text).map_err(|e| format!("not a valid grammar: {e}"))?;
        Grammar::compile(spec)
    }

    fn compile(spec: GrammarSpec) -> Result<Grammar, String> {
        let fold = |s: &str| fold(s, spec.case_insensitive, spec.slash);
        let ctx = Compile {
            fold: &fold,
            sets: &spec.option_sets,
            after_dashdash: spec.after_dashdash.clone(),
        };
        let top = ctx.command(&spec.command)?;
        let mut modules = HashMap::new();
        for (names, module) in &spec.modules {
            let cmd = ctx.command(module)?;
            for name in names.split('|') {
                modules.insert(name.to_string(), cmd.clone());
            }
        }
        let grammar = Grammar {
            id: spec.id,
            programs: spec.programs.iter().map(|p| p.to_lowercase()).collect(),
            abbreviations: spec.abbreviations,
            negation: spec.negation,
            cluster: spec.cluster,
            case_insensitive: spec.case_insensitive,
            slash: spec.slash,
            separators: spec.value_separators.chars().collect(),
            glued_values: spec.glued_values,
            response_files: spec.response_files,
            dashless_first_cluster: spec.dashless_first_cluster,
            forbid_words: spec
                .forbid_words
                .into_iter()
                .map(|(glob, why)| (glob.to_lowercase(), why))
                .collect(),
            tables: spec
                .tables
                .into_iter()
                .map(|(name, t)| (name, folded(t)))
                .collect(),
            modules,
            top,
            network_options: spec.network_options,
            offline_options: spec.offline_options,
            examples: spec.examples,
        };
        let names = grammar.option_names();
        if let Some(missing) = grammar
            .network_options
            .iter()
            .chain(&grammar.offline_options)
            .find(|name| !names.contains(*name))
        {
            return Err(format!(
                "network option {missing} is not an option of the grammar"
            ));
        }
        grammar.check_references(&grammar.top)?;
        for module in grammar.modules.values() {
            grammar.check_references(module)?;
        }
        if grammar.special_tables_missing() {
            return Err("a git config reading needs a table named config-write".into());
        }
        Ok(grammar)
    }

    /// Every table an option or a command's arguments name must exist.
    fn check_references(&self, cmd: &Cmd) -> Result<(), String> {
        let opts = cmd
            .exact
            .values()
            .chain(cmd.patterns.iter().map(|(_, o)| o));
        let tables = opts
            .filter_map(|o| match &o.check {
                ValueCheck::Table(t) => Some(t),
                _ => None,
            })
            .chain(
                [&cmd.args, &cmd.after_dashdash]
                    .into_iter()
                    .filter_map(|a| match a {
                        Args::Table(t) => Some(t),
                        _ => None,
                    }),
            );
        for table in tables {
            if !self.tables.contains_key(table) {
                return Err(format!("a missing table {table:?} is named"));
            }
        }
        cmd.children
            .iter()
            .try_for_each(|c| self.check_references(c))
    }

    /// The allowed top-level options that take no value, as listed: words a
    /// fuzzer can put anywhere without changing how later words are read.
    pub fn listed_flags(&self) -> Vec<String> {
        let mut flags: Vec<String> = self
            .top
            .exact
            .iter()
            .filter(|(_, o)| o.takes == Takes::Nothing && o.decision == Decision::Allow)
            .map(|(name, _)| name.clone())
            .collect();
        flags.sort();
        flags
    }

    /// Every option's first name, in every command and module.
    fn option_names(&self) -> Vec<String> {
        fn walk(cmd: &Cmd, out: &mut Vec<String>) {
            out.extend(cmd.exact.values().map(|o| o.name.clone()));
            out.extend(cmd.patterns.iter().map(|(_, o)| o.name.clone()));
            cmd.children.iter().for_each(|c| walk(c, out));
        }
        let mut out = Vec::new();
        walk(&self.top, &mut out);
        self.modules.values().for_each(|m| walk(m, &mut out));
        out
    }

    fn special_tables_missing(&self) -> bool {
        fn uses_special(cmd: &Cmd) -> bool {
            cmd.special.is_some() || cmd.children.iter().any(uses_special)
        }
        uses_special(&self.top) && !self.tables.contains_key("config-write")
    }

    fn fold(&self, word: &str) -> String {
        fold(word, self.case_insensitive, self.slash)
    }
}

/// Normalises an option name: `/x` and `--x` to `-x` for MSVC-style tools,
/// lower case where the program ignores case.
fn fold(word: &str, case_insensitive: bool, slash: bool) -> String {
    let mut word = word.to_string();
    if slash {
        if let Some(rest) = word.strip_prefix('/') {
            word = format!("-{rest}");
        } else if let Some(rest) = word.strip_prefix("--") {
            word = format!("-{rest}");
        }
    }
    if case_insensitive {
        word = word.to_lowercase();
    }
    word
}

/// What compiling a command needs from its grammar.
struct Compile<'s> {
    fold: &'s dyn Fn(&str) -> String,
    sets: &'s BTreeMap<String, Vec<String>>,
    after_dashdash: Args,
}

impl Compile<'_> {
    fn command(&self, spec: &CommandSpec) -> Result<Cmd, String> {
        let mut cmd = Cmd {
            subcommand_required: spec.subcommand_required,
            args: spec.args.clone(),
            after_dashdash: spec
                .after_dashdash
                .clone()
                .unwrap_or_else(|| self.after_dashdash.clone()),
            inherit: spec.inherit,
            delegate: spec.delegate.clone(),
            decision: spec
                .decision
                .map(|d| (d, spec.why.clone().unwrap_or_default())),
            special: match spec.special.as_deref() {
                None => None,
                Some("git-config-legacy") => Some(Special::GitConfigLegacy),
                Some("git-config-set") => Some(Special::GitConfigSet),
                Some(other) => return Err(format!("unknown special reading {other:?}")),
            },
            network: spec.network,
            ..Cmd::default()
        };
        for text in self.expand(&spec.options)? {
            self.add(&mut cmd, text, Decision::Allow, "")?;
        }
        for (text, why) in &spec.prompt {
            self.add(&mut cmd, text, Decision::Prompt, why)?;
        }
        for (text, why) in &spec.forbid {
            self.add(&mut cmd, text, Decision::Forbidden, why)?;
        }
        cmd.patterns
            .sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        for (names, sub) in &spec.subcommands {
            let index = cmd.children.len();
            cmd.children.push(self.command(sub)?);
            for name in names.split('|') {
                if cmd.subcommands.insert(name.to_string(), index).is_some() {
                    return Err(format!("subcommand {name} is listed twice"));
                }
            }
        }
        Ok(cmd)
    }

    /// The options with `@set` entries replaced by the set's options.
    fn expand<'a>(&'a self, options: &'a [String]) -> Result<Vec<&'a String>, String> {
        let mut out = Vec::new();
        for option in options {
            match option.strip_prefix('@') {
                Some(set) => out.extend(
                    self.sets
                        .get(set)
                        .ok_or_else(|| format!("option set {set:?} does not exist"))?,
                ),
                None => out.push(option),
            }
        }
        Ok(out)
    }

    fn add(&self, cmd: &mut Cmd, text: &str, decision: Decision, why: &str) -> Result<(), String> {
        let (names, opt) = parse_option(text, decision, why)?;
        for name in names {
            let key = (self.fold)(&name);
            if let Some(prefix) = key.strip_suffix('*') {
                cmd.patterns.push((prefix.to_string(), opt.clone()));
                continue;
            }
            match cmd.exact.get(&key) {
                // Shared sets overlap (`--stat` is a log and a diff option).
                Some(old) if old.decision == decision && old.takes == opt.takes => {}
                Some(_) => return Err(format!("option {name} is listed twice, differently")),
                None => {
                    cmd.exact.insert(key, opt.clone());
                }
            }
        }
        Ok(())
    }
}

/// All grammars, so that one can hand the rest of a command to another
/// (`cl ... /link ...`, `python -m pip ...`).
#[derive(Clone, Debug, Default)]
pub struct Grammars {
    list: Vec<Grammar>,
}

impl Grammars {
    /// Adds `grammar`; it replaces any with the
    /// same id and takes over its programs.
    pub fn add(&mut self, grammar: Grammar) {
        // A later grammar for the same programs (a user's) takes their place.
        for program in &grammar.programs {
            for old in &mut self.list {
                old.programs.retain(|p| p != program);
            }
        }
        self.list
            .retain(|g| !g.programs.is_empty() && g.id != grammar.id);
        self.list.push(grammar);
    }

    /// Removes the grammar with this id, if any.
    pub fn remove(&mut self, id: &str) {
        self.list.retain(|g| g.id != id);
    }

    /// The grammar that judges `program` (as
    /// [`program_name`](super::rules::program_name) gives it).
    pub fn for_program(&self, program: &str) -> Option<&Grammar> {
        self.list
            .iter()
            .find(|g| g.programs.iter().any(|p| p == program))
    }

    fn by_id(&self, id: &str) -> Option<&Grammar> {
        self.list.iter().find(|g| g.id == id)
    }

    /// Every grammar, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = &Grammar> {
        self.list.iter()
    }

    /// Judges `argv` (program first) under `grammar`.
    pub fn judge(&self, grammar: &Grammar, argv: &[Arg]) -> Judgement {
        let mut walk = Walk {
            all: self,
            worst: None,
            depth: 0,
            network: Network::default(),
        };
        for (index, arg) in argv.iter().enumerate().skip(1) {
            walk.forbidden_word(grammar, index, &arg.text);
        }
        if walk.worst.as_ref().map(|f| f.decision) != Some(Decision::Forbidden) {
            walk.run(grammar, &grammar.top, &[], argv, 1);
        }
        Judgement {
            network: walk.network.granted(),
            finding: walk.worst,
        }
    }
}

/// What an option consumed.
enum Step {
    Next(usize),
    Stop,
}

struct Walk<'a> {
    all: &'a Grammars,
    worst: Option<Finding>,
    /// Delegations followed, so a grammar that delegates to itself ends.
    depth: usize,
    network: Network,
}

/// The network as the commands and options of one walk decided it.
#[derive(Default)]
struct Network {
    /// The deepest command that said.
    command: bool,
    /// An option that grants it.
    option: bool,
    /// An option that takes it away, whatever else said.
    offline: bool,
}

impl Network {
    fn granted(&self) -> bool {
        !self.offline && (self.command || self.option)
    }
}

impl<'a> Walk<'a> {
    fn note(&mut self, decision: Decision, arg: usize, word: &str, why: String) {
        if decision > self.worst.as_ref().map_or(Decision::Allow, |f| f.decision) {
            self.worst = Some(Finding {
                decision,
                arg,
                word: word.to_string(),
                why,
            });
        }
    }

    fn stopped(&self) -> bool {
        self.worst.as_ref().map(|f| f.decision) == Some(Decision::Forbidden)
    }

    fn forbidden_word(&mut self, g: &Grammar, index: usize, text: &str) {
        let lower = text.to_lowercase();
        if let Some((_, why)) = g
            .forbid_words
            .iter()
            .find(|(glob, _)| glob_match(glob, &lower))
        {
            self.note(Decision::Forbidden, index, text, why.clone());
        }
    }

    /// Walks `argv[i..]` as arguments of `cmd`; `parents` are the commands
    /// whose options stay valid (`inherit`).
    fn run(
        &mut self,
        g: &'a Grammar,
        cmd: &'a Cmd,
        parents: &[&'a Cmd],
        argv: &[Arg],
        mut i: usize,
    ) {
        if !self.enter(cmd, argv, i) {
            return;
        }
        let mut scope: Vec<&Cmd> = parents.to_vec();
        scope.push(cmd);
        let mut positionals: Vec<usize> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        while i < argv.len() && !self.stopped() {
            let text = argv[i].text.as_str();
            if text == "--" {
                self.rest(g, &cmd.after_dashdash, argv, i + 1);
                // Still positionals: `git config -- core.fsmonitor x` writes.
                positionals.extend(i + 1..argv.len());
                break;
            }
            if self.response_file(g, i, text) {
                i += 1;
                continue;
            }
            // `tar xzf a.tgz`: the first word is a cluster without its dash.
            if g.dashless_first_cluster && i == 1 && !text.starts_with('-') {
                match self.old_style(g, &scope, argv) {
                    Some(Step::Next(next)) => {
                        i = next;
                        continue;
                    }
                    Some(Step::Stop) => return,
                    None => {}
                }
            }
            if is_option_word(g, &scope, text) {
                match self.option(g, &scope, argv, i, &mut seen) {
                    Step::Next(next) => i = next,
                    Step::Stop => return,
                }
                continue;
            }
            if positionals.is_empty()
                && !cmd.children.is_empty()
                && self.subcommand(g, cmd, &scope, argv, i)
            {
                return;
            }
            positionals.push(i);
            if !self.positional(g, cmd, i, text) {
                break;
            }
            i += 1;
        }
        if let Some(special) = cmd.special {
            self.special(g, special, argv, &positionals, &seen);
        }
    }

    /// What `cmd` decides before any of its words is read: the network, its
    /// own decision, a delegation to another grammar, and words it takes
    /// whole (`Rest`, `Data`). `false` when nothing is left to walk.
    fn enter(&mut self, cmd: &Cmd, argv: &[Arg], i: usize) -> bool {
        if let Some(network) = cmd.network {
            self.network.command = network;
        }
        if let Some((decision, why)) = &cmd.decision {
            let at = i.saturating_sub(1);
            self.note(*decision, at, &argv[at].text, why.clone());
            if self.stopped() {
                return false;
            }
        }
        if let Some(id) = &cmd.delegate {
            self.delegate(id, argv, i);
            return false;
        }
        match cmd.args {
            Args::Rest => return false,
            Args::Data => {
                for (index, arg) in argv.iter().enumerate().skip(i) {
                    self.trust_path(index, &arg.text);
                }
                return false;
            }
            _ => {}
        }
        true
    }

    /// Notes `argv[index]` when it is a response file (`@file`), whose
    /// options cannot be checked; whether it was one.
    fn response_file(&mut self, g: &Grammar, index: usize, text: &str) -> bool {
        let is = g.response_files && text.len() > 1 && text.starts_with('@');
        if is {
            self.note(
                Decision::Prompt,
                index,
                text,
                "a response file holds more options, which cannot be checked".into(),
            );
        }
        is
    }

    /// The first positional of a command with subcommands: walks the
    /// subcommand it names, or notes that a required one is not known.
    /// `true` when the walk of `cmd` ends here.
    fn subcommand(
        &mut self,
        g: &'a Grammar,
        cmd: &'a Cmd,
        scope: &[&'a Cmd],
        argv: &[Arg],
        i: usize,
    ) -> bool {
        let text = argv[i].text.as_str();
        if let Some(&index) = cmd.subcommands.get(text) {
            let sub = &cmd.children[index];
            let parents: Vec<&Cmd> = if sub.inherit {
                scope.to_vec()
            } else {
                Vec::new()
            };
            self.run(g, sub, &parents, argv, i + 1);
            return true;
        }
        if cmd.subcommand_required {
            self.note(
                Decision::Prompt,
                i,
                text,
                format!("'{text}' is not a subcommand the {} grammar knows", g.id),
            );
            return true;
        }
        false
    }

    /// Judges the positional `argv[i]` by `cmd`'s `args` setting; `false`
    /// when the words from here on are not judged one by one (`Free`,
    /// `Rest`, `Data`).
    fn positional(&mut self, g: &Grammar, cmd: &Cmd, i: usize, text: &str) -> bool {
        if !matches!(cmd.args, Args::Free | Args::Rest) {
            self.trust_path(i, text);
        }
        match &cmd.args {
            Args::Any => {}
            Args::None => self.note(
                Decision::Prompt,
                i,
                text,
                "an argument the grammar does not expect here".into(),
            ),
            Args::Free | Args::Rest | Args::Data => return false,
            Args::Table(t) => self.value(g, t, i, text),
        }
        true
    }

    /// The words after `--`, or the rest of a command handed on.
    fn rest(&mut self, g: &Grammar, args: &Args, argv: &[Arg], from: usize) {
        for (index, arg) in argv.iter().enumerate().skip(from) {
            self.response_file(g, index, &arg.text);
            match args {
                Args::Any | Args::Free | Args::Rest | Args::Data => {}
                Args::None => self.note(
                    Decision::Prompt,
                    index,
                    &arg.text,
                    "an argument after '--' that the grammar does not expect".into(),
                ),
                Args::Table(t) => self.value(g, t, index, &arg.text),
            }
            if !matches!(args, Args::Free | Args::Rest) {
                self.trust_path(index, &arg.text);
            }
        }
    }

    fn delegate(&mut self, id: &str, argv: &[Arg], from: usize) {
        self.depth += 1;
        match self.all.by_id(id) {
            Some(other) if self.depth < 8 => {
                for (index, arg) in argv.iter().enumerate().skip(from) {
                    self.forbidden_word(other, index, &arg.text);
                }
                self.run(other, &other.top, &[], argv, from);
            }
            _ => self.note(
                Decision::Prompt,
                from.saturating_sub(1),
                &argv[from.saturating_sub(1)].text,
                format!("the rest of the command belongs to '{id}', which has no grammar"),
            ),
        }
    }

    /// Reads the option at `argv[i]`.
    fn option(
        &mut self,
        g: &'a Grammar,
        scope: &[&'a Cmd],
        argv: &[Arg],
        i: usize,
        seen: &mut Vec<String>,
    ) -> Step {
        let raw = argv[i].text.as_str();
        let word = g.fold(raw);
        let lookup = |name: &str| scope.iter().rev().find_map(|c| c.exact.get(name));
        if let Some(opt) = lookup(&word) {
            seen.push(opt.name.clone());
            return self.apply(g, opt, None, argv, i);
        }
        if let Some(at) = word
            .find(|c| g.separators.contains(&c))
            .filter(|&at| at > 1)
        {
            let (name, value) = (&word[..at], &word[at + 1..]);
            if let Some(opt) = lookup(name) {
                seen.push(opt.name.clone());
                return self.apply(g, opt, Some(value), argv, i);
            }
        }
        let pattern = scope
            .iter()
            .rev()
            .flat_map(|c| c.patterns.iter())
            .filter(|(prefix, _)| word.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len());
        if let Some((prefix, opt)) = pattern {
            // A flag family can carry a path in its own word
            // (`-fmodules-cache-path=.git/hooks`).
            self.trust_path(i, raw);
            seen.push(opt.name.clone());
            let attached = (opt.takes != Takes::Nothing).then(|| &word[prefix.len()..]);
            return self.apply(g, opt, attached.filter(|a| !a.is_empty()), argv, i);
        }
        if word.starts_with("--") {
            return self.long_option(g, scope, argv, i, &word, seen);
        }
        self.cluster(g, scope, argv, i, &word).unwrap_or_else(|| {
            self.unknown(g, i, raw);
            Step::Next(i + 1)
        })
    }

    /// `--name`, not listed whole: an abbreviation or a negation.
    fn long_option(
        &mut self,
        g: &'a Grammar,
        scope: &[&'a Cmd],
        argv: &[Arg],
        i: usize,
        word: &str,
        seen: &mut Vec<String>,
    ) -> Step {
        let raw = argv[i].text.as_str();
        let (name, value) = match word.find(|c| g.separators.contains(&c)) {
            Some(at) => (&word[..at], Some(&word[at + 1..])),
            None => (word, None),
        };
        if g.abbreviations {
            let mut candidates: Vec<&Opt> = scope
                .iter()
                .flat_map(|c| c.exact.iter())
                .filter(|(full, _)| full.starts_with("--") && full.starts_with(name))
                .map(|(_, opt)| opt)
                .collect();
            candidates.sort_by(|a, b| a.name.cmp(&b.name));
            candidates.dedup_by(|a, b| a.name == b.name);
            match candidates.as_slice() {
                [] => {}
                [only] => {
                    seen.push(only.name.clone());
                    let only = (*only).clone();
                    return self.apply(g, &only, value, argv, i);
                }
                several => {
                    // An abbreviation that could mean a forbidden option is
                    // treated as that option: the program may know fewer.
                    let strictest = several
                        .iter()
                        .max_by_key(|o| o.decision)
                        .map(|o| (o.decision, o.name.clone(), o.why.clone()));
                    if let Some((Decision::Forbidden, name, why)) = strictest {
                        self.note(
                            Decision::Forbidden,
                            i,
                            raw,
                            format!("it abbreviates {name}: {why}"),
                        );
                        return Step::Stop;
                    }
                    let names: Vec<&str> = several.iter().map(|o| o.name.as_str()).collect();
                    self.note(
                        Decision::Prompt,
                        i,
                        raw,
                        format!("an ambiguous abbreviation of {}", names.join(", ")),
                    );
                    return Step::Next(i + 1);
                }
            }
        }
        if g.negation
            && let Some(flag) = name.strip_prefix("--no-")
            && let Some(opt) = scope
                .iter()
                .rev()
                .find_map(|c| c.exact.get(&format!("--{flag}")))
            && opt.takes == Takes::Nothing
            && opt.decision == Decision::Allow
            && value.is_none()
        {
            return Step::Next(i + 1);
        }
        self.unknown(g, i, raw);
        Step::Next(i + 1)
    }

    /// `-xyz`: one letter with a glued value, or letters clustered.
    /// `None` when the first letter is not an option at all.
    fn cluster(
        &mut self,
        g: &'a Grammar,
        scope: &[&'a Cmd],
        argv: &[Arg],
        i: usize,
        word: &str,
    ) -> Option<Step> {
        let letters: Vec<(usize, char)> = word.char_indices().skip(1).collect();
        let lookup = |c: char| letter(g, scope, c);
        let first = lookup(letters.first()?.1)?;
        if first.takes == Takes::Nothing && !g.cluster {
            return None;
        }
        for (k, &(at, c)) in letters.iter().enumerate() {
            let Some(opt) = (if k == 0 {
                Some(first.clone())
            } else {
                lookup(c)
            }) else {
                self.note(
                    Decision::Prompt,
                    i,
                    &argv[i].text,
                    format!("'-{c}' is not an option the {} grammar knows", g.id),
                );
                return Some(Step::Next(i + 1));
            };
            if opt.takes != Takes::Nothing {
                let rest = &word[at + c.len_utf8()..];
                if !rest.is_empty() && !g.glued_values {
                    self.unknown(g, i, &argv[i].text);
                    return Some(Step::Next(i + 1));
                }
                let rest = rest.strip_prefix('=').unwrap_or(rest);
                return Some(self.apply(g, &opt, Some(rest).filter(|r| !r.is_empty()), argv, i));
            }
            if let Step::Stop = self.apply(g, &opt, None, argv, i) {
                return Some(Step::Stop);
            }
        }
        Some(Step::Next(i + 1))
    }

    /// tar's old-style first word (`xfI a.tar prog`): letters without a
    /// dash, and each letter that takes a value takes the next unused word,
    /// in order, never the rest of the cluster. `None` when the first letter
    /// is not an option (the word is then read as a positional).
    fn old_style(&mut self, g: &'a Grammar, scope: &[&'a Cmd], argv: &[Arg]) -> Option<Step> {
        let text = &argv[1].text;
        let lookup = |c: char| letter(g, scope, c);
        lookup(text.chars().next()?)?;
        let mut next_value = 2;
        for c in text.chars() {
            let Some(opt) = lookup(c) else {
                self.note(
                    Decision::Prompt,
                    1,
                    text,
                    format!("'{c}' is not an option the {} grammar knows", g.id),
                );
                return Some(Step::Next(next_value));
            };
            if self.decide(g, &opt, 1, text) {
                return Some(Step::Stop);
            }
            if opt.takes != Takes::Nothing {
                if let Some(value) = argv.get(next_value) {
                    self.check(g, &opt, next_value, &value.text);
                }
                next_value += 1;
            }
        }
        Some(Step::Next(next_value))
    }

    fn unknown(&mut self, g: &Grammar, i: usize, raw: &str) {
        self.note(
            Decision::Prompt,
            i,
            raw,
            format!("'{raw}' is not an option the {} grammar knows", g.id),
        );
    }

    /// Applies a recognised option; `attached` is a value in the same word.
    /// Notes an option's own decision; true when it stops the walk.
    fn decide(&mut self, g: &Grammar, opt: &Opt, i: usize, word: &str) -> bool {
        self.network.option |= g.network_options.contains(&opt.name);
        self.network.offline |= g.offline_options.contains(&opt.name);
        if opt.decision != Decision::Allow {
            let why = if opt.why.is_empty() {
                format!("{} needs a decision", opt.name)
            } else {
                format!("{}: {}", opt.name, opt.why)
            };
            self.note(opt.decision, i, word, why);
        }
        self.stopped()
    }

    fn apply(
        &mut self,
        g: &'a Grammar,
        opt: &Opt,
        attached: Option<&str>,
        argv: &[Arg],
        i: usize,
    ) -> Step {
        if self.decide(g, opt, i, &argv[i].text) {
            return Step::Stop;
        }
        match &opt.takes {
            Takes::Nothing if attached.is_some() => {
                self.note(
                    Decision::Prompt,
                    i,
                    &argv[i].text,
                    format!("{} takes no value", opt.name),
                );
                Step::Next(i + 1)
            }
            Takes::Nothing => Step::Next(i + 1),
            Takes::Attached => {
                if let Some(value) = attached {
                    self.check(g, opt, i, value);
                }
                Step::Next(i + 1)
            }
            Takes::Value => match attached {
                Some(value) => {
                    self.check(g, opt, i, value);
                    Step::Next(i + 1)
                }
                None => {
                    if let Some(next) = argv.get(i + 1) {
                        self.check(g, opt, i + 1, &next.text);
                    }
                    Step::Next(i + 2)
                }
            },
            Takes::Module => {
                let (name, at, next) = match attached {
                    Some(value) => (Some(value), i, i + 1),
                    None => (argv.get(i + 1).map(|a| a.text.as_str()), i + 1, i + 2),
                };
                let Some(name) = name else { return Step::Stop };
                match g.modules.get(name) {
                    Some(module) => self.run(g, module, &[], argv, next),
                    None => self.note(
                        Decision::Prompt,
                        at,
                        name,
                        format!("module '{name}' is not one the {} grammar knows", g.id),
                    ),
                }
                Step::Stop
            }
            Takes::Delegate(id) => {
                self.delegate(id, argv, i + 1);
                Step::Stop
            }
            Takes::Mode(name) => {
                match g.modules.get(name) {
                    Some(mode) => self.run(g, mode, &[], argv, i + 1),
                    None => self.unknown(g, i, &argv[i].text),
                }
                Step::Stop
            }
        }
    }

    fn check(&mut self, g: &Grammar, opt: &Opt, index: usize, value: &str) {
        // gcc, clang, rustc and the MSVC tools expand `@file` wherever it
        // stands, also as an option's value: the file's options go unchecked.
        if g.response_files && value.len() > 1 && value.starts_with('@') {
            self.note(
                Decision::Prompt,
                index,
                value,
                "a response file holds more options, which cannot be checked".into(),
            );
        }
        // A value that looks like an option may be one: where the grammar
        // and the program disagree on whether an option takes a value (git's
        // `-U`, gcc's `-unwindlib`, npm's `--tag=--script-shell=x`), the
        // program reads this word as the next option, unchecked.
        if value.len() > 1
            && value.starts_with('-')
            && !value[1..].bytes().all(|b| b.is_ascii_digit())
        {
            self.note(
                Decision::Prompt,
                index,
                value,
                format!(
                    "'{value}' is taken as the value of {}, but looks like an option the program may read instead",
                    opt.name
                ),
            );
        }
        match &opt.check {
            ValueCheck::Free | ValueCheck::Path | ValueCheck::Output => {
                self.trust_path(index, value)
            }
            ValueCheck::Table(t) => self.value(g, t, index, value),
            ValueCheck::Text => {}
        }
    }

    /// An argument naming a file that decides what programs run (`.git/`,
    /// `.mcp.json`, `.vscode/tasks.json`...) is asked about: an allowed
    /// command that writes there (`git log --output=.git/config`, `tar -C
    /// .git`) plants configuration the next command runs, and the file tools
    /// ask before writing the same files.
    fn trust_path(&mut self, index: usize, value: &str) {
        // `-o.git/hooks`: a short option glued to its path.
        let glued = (value.starts_with('-') && !value.starts_with("--"))
            .then(|| value.get(2..))
            .flatten();
        let reached = names_trust_location(value).or_else(|| glued.and_then(names_trust_location));
        if let Some(why) = reached {
            self.note(
                Decision::Prompt,
                index,
                value,
                format!("it names {why}, which commands may not change without the user"),
            );
        }
    }

    /// Judges a value against a table.
    fn value(&mut self, g: &Grammar, table: &str, index: usize, value: &str) {
        let Some(t) = g.tables.get(table) else { return };
        let parts: Vec<&str> = if t.split.is_empty() {
            vec![value]
        } else {
            value
                .split(|c| t.split.contains(c))
                .filter(|p| !p.is_empty())
                .collect()
        };
        for part in parts {
            self.trust_path(index, part);
            let (subject, assigned) = match part.split_once('=') {
                Some((key, value)) if t.key => (key, Some(value)),
                _ => (part, None),
            };
            if t.pairs.contains(&as_the_program_reads(part)) {
                continue;
            }
            let (mut decision, mut why) = judge_table(t, subject);
            if decision == Decision::Allow
                && assigned
                    .is_some_and(|v| v.contains("$<") || v.contains("${") || v.contains("$("))
            {
                decision = Decision::Prompt;
                why = Some(
                    "the value holds an expression the program evaluates (it can spell any path)"
                        .into(),
                );
            }
            if decision == Decision::Allow
                && t.plain_values
                && assigned.is_some_and(|v| !is_plain_value(v))
            {
                decision = Decision::Prompt;
                why = Some(
                    "the value is a path or an expression, which this setting could turn into code"
                        .into(),
                );
            }
            if decision != Decision::Allow {
                let why = match why {
                    Some(why) => format!("'{subject}': {why}"),
                    None => format!(
                        "'{subject}' is not a value the {} grammar knows ({table})",
                        g.id
                    ),
                };
                self.note(decision, index, value, why);
            }
        }
    }

    fn special(
        &mut self,
        g: &Grammar,
        special: Special,
        argv: &[Arg],
        positionals: &[usize],
        seen: &[String],
    ) {
        const READS: &[&str] = &[
            "--get",
            "--get-all",
            "--get-regexp",
            "--get-urlmatch",
            "--list",
            "--unset",
            "--unset-all",
            "--remove-section",
            "--rename-section",
            "--show-origin",
        ];
        let key = match special {
            Special::GitConfigSet => positionals.first(),
            Special::GitConfigLegacy => {
                let reading = seen.iter().any(|s| READS.contains(&s.as_str()));
                let writing = seen.iter().any(|s| s == "--add" || s == "--replace-all");
                (writing || (!reading && positionals.len() >= 2))
                    .then(|| positionals.first())
                    .flatten()
            }
        };
        if let Some(&index) = key {
            self.value(g, "config-write", index, &argv[index].text);
            // A write to a file named on the command line can plant any INI
            // file (pip.conf, another repository's config): never silent.
            if seen.iter().any(|s| s == "-f" || s == "--blob") {
                self.note(
                    Decision::Prompt,
                    index,
                    &argv[index].text,
                    "it writes a configuration file named on the command line".into(),
                );
            }
        }
    }
}

/// A table with its patterns lower-cased once, at load, rather than at
/// every comparison.
fn folded(mut t: Table) -> Table {
    for list in [&mut t.allow, &mut t.prompt, &mut t.forbid, &mut t.pairs] {
        for p in list.iter_mut() {
            *p = p.to_lowercase();
        }
    }
    t
}

/// A value as programs compare it: trimmed, unquoted, without the tabs and
/// line breaks node's URL parser drops, and lower-cased.
fn as_the_program_reads(value: &str) -> String {
    value
        .trim()
        .replace(['"', '\'', '\t', '\r', '\n'], "")
        .to_lowercase()
}

/// The most specific pattern that matches decides (the most characters
/// other than `*`), so `core.autocrlf` can be allowed inside a forbidden
/// `core.*`; on a tie the strictest decision wins. Nothing matching: the
/// table's default.
fn judge_table(t: &Table, subject: &str) -> (Decision, Option<String>) {
    // Programs trim and unquote before they look (node's URL parser, cmake's
    // -D names): `' data:...'` and `-D"CMAKE_X"=` are the plain names.
    let lower = as_the_program_reads(subject);
    let lists = [
        (&t.allow, Decision::Allow),
        (&t.prompt, Decision::Prompt),
        (&t.forbid, Decision::Forbidden),
    ];
    let best = lists
        .iter()
        .flat_map(|(list, decision)| list.iter().map(move |p| (p, *decision)))
        .filter(|(p, _)| glob_match(p, &lower))
        .max_by_key(|(p, decision)| (p.chars().filter(|&c| c != '*').count(), *decision));
    let plain = !lower.starts_with('-')
        && !lower.is_empty()
        && lower
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c));
    let fallback = t.plain.filter(|_| plain).unwrap_or(t.unknown);
    let decision = best.map_or(fallback, |(_, d)| d);
    let why = match decision {
        Decision::Allow => None,
        Decision::Forbidden => Some(t.why.clone()),
        Decision::Prompt => Some("this value needs the user's approval".into()),
    };
    (
        decision,
        why.filter(|_| best.is_some() || decision == Decision::Forbidden),
    )
}

/// The one-letter option `-c` as the innermost command that lists it has it.
fn letter(g: &Grammar, scope: &[&Cmd], c: char) -> Option<Opt> {
    let name = fold(&format!("-{c}"), g.case_insensitive, false);
    scope
        .iter()
        .rev()
        .find_map(|cmd| cmd.exact.get(&name))
        .cloned()
}

/// A setting's value that can only be data: letters, digits, `_ . + - , ;`
/// and spaces, and no `..`.
fn is_plain_value(value: &str) -> bool {
    !value.contains("..")
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.+-,; ".contains(c))
}

/// Whether a word is an option of the command at hand.
fn is_option_word(g: &Grammar, scope: &[&Cmd], text: &str) -> bool {
    if text == "-" || text.starts_with('+') {
        return is_listed(g, scope, text);
    }
    if text.starts_with('-') {
        return true;
    }
    // `/c` is an option for MSVC tools and `/home/x/a.c` a path (clang-cl on
    // Linux). A word that any reading makes an option is one, whatever its
    // value holds: `/p:X=C:\y` and `/logger:C:\x.dll` are switches.
    g.slash
        && text.starts_with('/')
        && (is_listed(g, scope, text) || !text[1..].contains(['/', '\\']))
}

/// Whether some reading of `text` names a listed option: whole, by
/// pattern, before a value separator, or as one letter with a glued value.
fn is_listed(g: &Grammar, scope: &[&Cmd], text: &str) -> bool {
    let word = g.fold(text);
    let exact = |name: &str| scope.iter().any(|c| c.exact.contains_key(name));
    let pattern = scope
        .iter()
        .any(|c| c.patterns.iter().any(|(p, _)| word.starts_with(p.as_str())));
    let before_separator = word
        .find(|c| g.separators.contains(&c))
        .is_some_and(|at| exact(&word[..at]));
    let glued = word.starts_with('-')
        && word.char_indices().nth(2).is_some_and(|(at, _)| {
            scope.iter().any(|c| {
                c.exact
                    .get(&word[..at])
                    .is_some_and(|o| o.takes != Takes::Nothing)
            })
        });
    exact(&word) || pattern || before_separator || glued
}

#[cfg(test)]
mod tests;
