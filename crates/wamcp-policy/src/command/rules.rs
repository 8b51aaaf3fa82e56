//! Command rules as data, in the spirit of codex-rs `execpolicy`.
//!
//! Two kinds of entries decide together:
//!
//! - **Grammars** (`grammar.rs`, built in from `rules/grammars/`): for each
//!   allowed program, the options and subcommands it accepts. Whatever a
//!   grammar does not know is asked about; what runs programs is forbidden.
//! - **Rules**: a program-level decision with an optional condition on the
//!   arguments. Built in only for read-only cmdlets; a user's rule file can
//!   add rules that tighten (ask before `git push`) or allow a program that
//!   has no grammar.
//!
//! Both carry examples that are checked when they load. A program no grammar
//! or rule allows is refused; when several decide, the strictest wins. An
//! entry whose examples fail never loosens the policy: a failing `prompt` or
//! `forbidden` rule, or a failing grammar, refuses the programs it names
//! until it is fixed (a rule dropped silently would stop guarding).

use super::grammar::{Grammar, Grammars, Judgement};
use super::tokenize::{Arg, tokenize};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The rule named when the rule files could not be trusted and every
/// command is refused.
pub const BLOCKED_RULES: &str = "(rules not trusted)";

/// What happens to a command. Ordered from the most permissive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run without asking.
    Allow,
    /// Ask the user first.
    Prompt,
    /// Refuse, whatever the user says.
    Forbidden,
}

/// A condition on a program's arguments (any part matching matches).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// Arguments that match exactly, or by their part before `=`.
    #[serde(default)]
    pub args: Vec<String>,
    /// A single-letter option found alone or combined (`-c`, `-Ic`, `-cX`).
    #[serde(default)]
    pub short_flag: Option<char>,
    /// Letters that take a value: the rest of the word or the next argument.
    #[serde(default)]
    pub value_flags: String,
    /// Letters after which the remaining arguments belong to something else.
    #[serde(default)]
    pub stop_flags: String,
    /// Options end at the first argument that is not one (the script).
    #[serde(default)]
    pub stop_at_positional: bool,
    /// Long options whose value is the next argument.
    #[serde(default)]
    pub value_options: Vec<String>,
    /// `git -c key=value` keys (prefixes, case-insensitive) before the subcommand.
    #[serde(default)]
    pub git_config: Vec<String>,
    /// Arguments that match only after a given subcommand.
    #[serde(default)]
    pub subcommand_args: BTreeMap<String, Vec<String>>,
}

/// A program-level decision, optionally only when the arguments match `when`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The rule's name, reported as the rule that decided.
    pub id: String,
    /// Program names the rule applies to, compared case-insensitively.
    pub programs: Vec<String>,
    /// Runs in PowerShell rather than as an executable.
    #[serde(default)]
    pub cmdlet: bool,
    /// The condition on the arguments; unset, the rule applies to every call.
    #[serde(default)]
    pub when: Option<When>,
    /// What happens to a command the rule matches.
    pub decision: Decision,
    /// The reason shown to the user when this rule decides.
    pub justification: String,
    /// Example command lines the rule must match (`"match"` in the file).
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Example command lines the rule must not match.
    #[serde(default)]
    pub not_match: Vec<String>,
    /// Whether the command may use the network; unset leaves the grammar's
    /// answer (none for a program without a grammar).
    #[serde(default)]
    pub network: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default, rename = "_about")]
    _about: Option<String>,
    #[serde(default)]
    rules: Vec<Rule>,
    /// Grammars, each compiled on its own so one mistake costs one grammar.
    #[serde(default)]
    grammars: Vec<serde_json::Value>,
}

/// What decided a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A grammar of the program's options.
    Grammar,
    /// A rule (the built-in cmdlet rule, or the user's).
    Rule,
    /// Nothing knows the program.
    Nothing,
    /// The rule files cannot be trusted: everything is refused.
    Blocked,
}

/// The verdict on one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// What decided it.
    pub source: Source,
    /// Whether the command runs, is asked about or is refused.
    pub decision: Decision,
    /// The grammar or rule that decided, or `None` when nothing knows the program.
    pub rule: Option<String>,
    /// Why, in words shown to the user; see [`Verdict::reason`].
    pub justification: String,
    /// The program is a PowerShell cmdlet, run inside
    /// PowerShell rather than as an executable.
    pub cmdlet: bool,
    /// The argument that decided (its index in argv, the program being 0).
    pub argument: Option<(usize, String)>,
    /// Whether the process may open network connections.
    pub network: bool,
}

impl Verdict {
    /// The reason in one sentence, naming the argument when one decided.
    pub fn reason(&self) -> String {
        match &self.argument {
            Some((index, word)) => format!("argument {index} ('{word}'): {}", self.justification),
            None => self.justification.clone(),
        }
    }
}

/// The size of a [`RuleSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleCounts {
    /// Grammars loaded.
    pub grammars: usize,
    /// Rules loaded, built-in and the user's.
    pub rules: usize,
    /// Example command lines the grammars and rules carry.
    pub examples: usize,
}

/// Loaded grammars and rules, and the problems found while loading them.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
    grammars: Grammars,
    /// Problems found while loading, each naming its file and entry.
    pub errors: Vec<String>,
    /// Set when the rules themselves cannot be trusted: every command is
    /// refused with this reason.
    blocked: Option<String>,
}

const BUILTIN: &str = include_str!("../../rules/builtin.json");

/// The built-in grammars, one file per program family.
const BUILTIN_GRAMMARS: &[(&str, &str)] = &[
    ("git", include_str!("../../rules/grammars/git.json")),
    ("tar", include_str!("../../rules/grammars/tar.json")),
    ("7z", include_str!("../../rules/grammars/7z.json")),
    ("python", include_str!("../../rules/grammars/python.json")),
    ("pip", include_str!("../../rules/grammars/pip.json")),
    ("node", include_str!("../../rules/grammars/node.json")),
    ("npm", include_str!("../../rules/grammars/npm.json")),
    ("npx", include_str!("../../rules/grammars/npx.json")),
    ("cmake", include_str!("../../rules/grammars/cmake.json")),
    ("ctest", include_str!("../../rules/grammars/ctest.json")),
    ("ninja", include_str!("../../rules/grammars/ninja.json")),
    (
        "premake5",
        include_str!("../../rules/grammars/premake5.json"),
    ),
    ("cargo", include_str!("../../rules/grammars/cargo.json")),
    ("rustc", include_str!("../../rules/grammars/rustc.json")),
    ("cc", include_str!("../../rules/grammars/cc.json")),
    ("cl", include_str!("../../rules/grammars/cl.json")),
    ("link", include_str!("../../rules/grammars/link.json")),
    ("msbuild", include_str!("../../rules/grammars/msbuild.json")),
    ("dotnet", include_str!("../../rules/grammars/dotnet.json")),
    ("shaders", include_str!("../../rules/grammars/shaders.json")),
    ("hlsl", include_str!("../../rules/grammars/hlsl.json")),
];

impl RuleSet {
    /// The grammars and rules that ship with wamcp. Their examples are not
    /// run here: they cannot change after the build, and the test suite
    /// fails if one does not hold ([`RuleSet::builtin_checked`]), so a
    /// server does not spend start-up time proving them again.
    pub fn builtin() -> RuleSet {
        RuleSet::builtin_with(false)
    }

    /// [`RuleSet::builtin`], with every example checked.
    pub fn builtin_checked() -> RuleSet {
        RuleSet::builtin_with(true)
    }

    fn builtin_with(check: bool) -> RuleSet {
        let mut set = RuleSet::default();
        let mut fresh = Vec::new();
        for (name, text) in BUILTIN_GRAMMARS {
            match Grammar::parse(text) {
                Ok(grammar) => {
                    fresh.push(grammar.id.clone());
                    set.grammars.add(grammar);
                }
                Err(e) => set.errors.push(format!("built-in grammar {name}: {e}")),
            }
        }
        if check {
            set.check_grammars(&fresh, "built-in grammars");
        }
        set.load(BUILTIN, "built-in rules");
        set
    }

    /// Adds the grammars and rules in `text` (a rule file); `source` names
    /// it in errors. A malformed file adds nothing.
    pub fn load(&mut self, text: &str, source: &str) {
        let file: RuleFile = match serde_json::from_str(text) {
            Ok(file) => file,
            Err(e) => {
                self.errors
                    .push(format!("{source}: not a valid rule file: {e}"));
                return;
            }
        };
        let mut fresh = Vec::new();
        for value in file.grammars {
            let named = value
                .get("id")
                .and_then(|v| v.as_str())
                .unwrap_or("?")
                .to_string();
            let programs: Vec<String> = value
                .get("programs")
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or_default();
            match serde_json::to_string(&value)
                .map_err(|e| e.to_string())
                .and_then(|t| Grammar::parse(&t))
            {
                Ok(grammar) => {
                    fresh.push(grammar.id.clone());
                    self.grammars.add(grammar);
                }
                Err(e) => {
                    self.errors
                        .push(format!("{source}: grammar '{named}': {e}"));
                    self.guard(&named, programs, "it is not a valid grammar");
                }
            }
        }
        self.check_grammars(&fresh, source);
        for rule in file.rules {
            match check_examples(&rule) {
                Ok(()) => self.rules.push(rule),
                Err(problem) if rule.decision > Decision::Allow => {
                    self.errors.push(format!(
                        "{source}: rule '{}' failed its examples, so the programs it names are refused until it is fixed: {problem}",
                        rule.id
                    ));
                    self.guard(
                        &rule.id,
                        rule.programs.clone(),
                        "it failed its own examples",
                    );
                }
                Err(problem) => self
                    .errors
                    .push(format!("{source}: rule '{}' ignored: {problem}", rule.id)),
            }
        }
    }

    /// How many grammars and rules are loaded and how many examples they
    /// carry (what `wamcp config --check` reports having proved).
    pub fn counts(&self) -> RuleCounts {
        let grammar_examples = self.grammars.iter().map(|g| {
            let ex = &g.examples;
            ex.allow.len() + ex.prompt.len() + ex.forbidden.len()
        });
        let rule_examples = self
            .rules
            .iter()
            .map(|r| r.matches.len() + r.not_match.len());
        RuleCounts {
            grammars: self.grammars.iter().count(),
            rules: self.rules.len(),
            examples: grammar_examples.chain(rule_examples).sum(),
        }
    }

    /// Refuses every command, with `why`, and records it as an error.
    pub fn block(&mut self, why: String) {
        self.errors.push(why.clone());
        self.blocked = Some(why);
    }

    /// Refuses `programs` on behalf of an entry that could not be trusted.
    fn guard(&mut self, id: &str, programs: Vec<String>, why: &str) {
        self.rules.push(Rule {
            id: format!("{id} (broken)"),
            programs,
            cmdlet: false,
            when: None,
            decision: Decision::Forbidden,
            justification: format!(
                "the rule or grammar '{id}' guards this program, but {why}; fix it in the rule file"
            ),
            matches: Vec::new(),
            not_match: Vec::new(),
            network: Some(false),
        });
    }

    /// Runs the examples of the grammars just added; a grammar that fails
    /// them is removed and its programs are refused.
    fn check_grammars(&mut self, ids: &[String], source: &str) {
        for id in ids {
            let Some(grammar) = self.grammars.iter().find(|g| &g.id == id).cloned() else {
                continue;
            };
            if let Err(problem) = self.grammar_examples(&grammar) {
                self.errors.push(format!(
                    "{source}: grammar '{id}' failed its examples, so its programs are refused until it is fixed: {problem}"
                ));
                self.grammars.remove(id);
                self.guard(id, grammar.programs.clone(), "it failed its own examples");
            }
        }
    }

    fn grammar_examples(&self, grammar: &Grammar) -> Result<(), String> {
        let ex = &grammar.examples;
        let cases = ex
            .allow
            .iter()
            .map(|e| (e, Decision::Allow))
            .chain(ex.prompt.iter().map(|e| (e, Decision::Prompt)))
            .chain(ex.forbidden.iter().map(|e| (e, Decision::Forbidden)));
        for (example, want) in cases {
            let argv = tokenize(example)
                .map_err(|e| format!("example {example:?} does not tokenise: {e}"))?;
            let program = program_name(&argv[0].text);
            if !grammar.programs.contains(&program) {
                return Err(format!(
                    "example {example:?} is not for one of its programs"
                ));
            }
            let got = self
                .grammars
                .judge(grammar, &argv)
                .finding
                .map_or(Decision::Allow, |f| f.decision);
            if got != want {
                return Err(format!(
                    "example {example:?} should be {want:?} but is {got:?}"
                ));
            }
        }
        Ok(())
    }

    /// Decides on an already tokenised command.
    pub fn judge(&self, argv: &[Arg]) -> Verdict {
        let refused = Verdict {
            source: Source::Nothing,
            decision: Decision::Forbidden,
            rule: None,
            justification: "the program is not on the allowlist".into(),
            cmdlet: false,
            argument: None,
            network: false,
        };
        if let Some(why) = &self.blocked {
            return Verdict {
                source: Source::Blocked,
                rule: Some(BLOCKED_RULES.into()),
                justification: why.clone(),
                ..refused
            };
        }
        let Some(program) = argv.first().map(|a| program_name(&a.text)) else {
            return refused;
        };
        let mut verdict = self
            .grammars
            .for_program(&program)
            .map(|g| grammar_verdict(g, self.grammars.judge(g, argv)));
        let mut network = verdict.as_ref().is_some_and(|v| v.network);
        let mut revoked = false;
        for rule in self
            .rules
            .iter()
            .filter(|r| rule_matches(r, &program, &argv[1..]))
        {
            network |= rule.network == Some(true);
            // A rule that takes the network away wins over any that grants it.
            revoked |= rule.network == Some(false);
            if verdict.as_ref().is_none_or(|v| rule.decision > v.decision) {
                verdict = Some(Verdict {
                    source: Source::Rule,
                    decision: rule.decision,
                    rule: Some(rule.id.clone()),
                    justification: rule.justification.clone(),
                    cmdlet: rule.cmdlet,
                    argument: None,
                    network: false,
                });
            }
        }
        let mut verdict = verdict.unwrap_or(refused);
        verdict.network = network && !revoked && verdict.decision != Decision::Forbidden;
        verdict
    }

    /// The loaded grammars, for checks that walk each one.
    pub fn grammars(&self) -> &Grammars {
        &self.grammars
    }

    /// The programs some grammar or allow rule lets run, for messages.
    pub fn known_programs(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .grammars
            .iter()
            .flat_map(|g| g.programs.iter().cloned())
            .chain(
                self.rules
                    .iter()
                    .filter(|r| r.decision == Decision::Allow && !r.cmdlet)
                    .flat_map(|r| r.programs.iter().map(|p| p.to_lowercase())),
            )
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

fn grammar_verdict(grammar: &Grammar, judgement: Judgement) -> Verdict {
    let network = judgement.network;
    match judgement.finding {
        None => Verdict {
            source: Source::Grammar,
            decision: Decision::Allow,
            rule: Some(grammar.id.clone()),
            justification: format!("every argument is one the {} grammar knows", grammar.id),
            cmdlet: false,
            argument: None,
            network,
        },
        Some(f) => Verdict {
            source: Source::Grammar,
            decision: f.decision,
            rule: Some(grammar.id.clone()),
            justification: f.why,
            cmdlet: false,
            argument: Some((f.arg, f.word)),
            network,
        },
    }
}

/// The program as rules name it: the last path component (either
/// separator, whatever the host), lower-cased, without an executable suffix.
pub fn program_name(first: &str) -> String {
    let last = first
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(first)
        .to_lowercase();
    for suffix in [".exe", ".cmd", ".bat", ".com"] {
        if let Some(stem) = last.strip_suffix(suffix) {
            return stem.to_string();
        }
    }
    last
}

fn rule_matches(rule: &Rule, program: &str, args: &[Arg]) -> bool {
    rule.programs.iter().any(|p| p.to_lowercase() == program)
        && rule.when.as_ref().is_none_or(|w| when_matches(w, args))
}

fn when_matches(when: &When, args: &[Arg]) -> bool {
    let mut subcommand: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        let name = text.split('=').next().unwrap_or(text);
        if when.args.iter().any(|a| a == name) {
            return true;
        }
        if let Some(sub) = subcommand
            && when
                .subcommand_args
                .get(sub)
                .is_some_and(|list| list.iter().any(|a| a == name))
        {
            return true;
        }
        if subcommand.is_none() && !when.git_config.is_empty() {
            let value = if text == "-c" {
                i += 1;
                args.get(i).map(|a| a.text.as_str())
            } else {
                text.strip_prefix("-c").filter(|v| !v.is_empty())
            };
            if let Some(value) = value {
                let key = value.to_lowercase();
                if when.git_config.iter().any(|k| key.starts_with(k.as_str())) {
                    return true;
                }
                i += 1;
                continue;
            }
        }
        if when.value_options.iter().any(|o| o == text) {
            i += 2;
            continue;
        }
        if let (Some(flag), Some(letters)) = (when.short_flag, text.strip_prefix('-'))
            && !letters.starts_with('-')
        {
            let letters: Vec<char> = letters.chars().collect();
            for (k, &c) in letters.iter().enumerate() {
                if c == flag {
                    return true;
                }
                if when.stop_flags.contains(c) {
                    return false;
                }
                if when.value_flags.contains(c) {
                    // The value is the rest of this word, or the next argument.
                    if k + 1 == letters.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        if !text.starts_with('-') || text == "--" {
            if when.stop_at_positional {
                return false;
            }
            subcommand = subcommand.or(Some(text));
        }
        i += 1;
    }
    false
}

/// Checks a rule against its own examples.
fn check_examples(rule: &Rule) -> Result<(), String> {
    for (examples, want) in [(&rule.matches, true), (&rule.not_match, false)] {
        for example in examples {
            let argv = tokenize(example)
                .map_err(|e| format!("example {example:?} does not tokenise: {e}"))?;
            let program = argv
                .first()
                .map(|a| program_name(&a.text))
                .unwrap_or_default();
            if rule_matches(rule, &program, &argv[1..]) != want {
                return Err(format!(
                    "example {example:?} {} match but {}",
                    if want { "should" } else { "should not" },
                    if want { "does not" } else { "does" }
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(command: &str) -> Verdict {
        RuleSet::builtin().judge(&tokenize(command).unwrap())
    }

    #[test]
    fn the_builtin_grammars_and_rules_load_cleanly_and_pass_their_examples() {
        let set = RuleSet::builtin_checked();
        assert_eq!(set.errors, Vec::<String>::new());
        assert_eq!(set.grammars.iter().count(), BUILTIN_GRAMMARS.len());
        assert_eq!(set.rules.len(), 1);
    }

    #[test]
    fn decisions_table() {
        use Decision::*;
        let cases: &[(&str, Decision, Option<&str>)] = &[
            ("git status", Allow, Some("git")),
            (
                "git commit -m 'a; b | rm -rf / && del x'",
                Allow,
                Some("git"),
            ),
            (r#"git log --format="%h | %s""#, Allow, Some("git")),
            ("GIT.EXE log", Allow, Some("git")),
            ("cmake --build build --config Debug", Allow, Some("cmake")),
            ("python tools/platform_check.py", Allow, Some("python")),
            ("python -m pytest -q", Allow, Some("python")),
            ("C:/Python311/python.exe -c x", Forbidden, Some("python")),
            ("npx -c calc", Forbidden, Some("npx")),
            ("npx tsc", Prompt, Some("npx")),
            ("git -c alias.st=!calc st", Forbidden, Some("git")),
            ("Get-ChildItem -Recurse", Allow, Some("read-only-cmdlets")),
            ("calc", Forbidden, None),
            ("powershell -Command x", Forbidden, None),
            ("pwsh -EncodedCommand AAAA", Forbidden, None),
            ("cmd /c dir", Forbidden, None),
            ("Remove-Item -Recurse x", Forbidden, None),
            // Not until their destinations are confined to the writable roots.
            ("New-Item -Path C:\\x", Forbidden, None),
            ("Copy-Item a b", Forbidden, None),
            ("Invoke-Expression x", Forbidden, None),
            ("rm -rf x", Forbidden, None),
        ];
        for (command, decision, rule) in cases {
            let verdict = judge(command);
            assert_eq!(
                (verdict.decision, verdict.rule.as_deref()),
                (*decision, *rule),
                "{command}"
            );
        }
        assert!(judge("Get-Content x").cmdlet);
        assert!(!judge("git status").cmdlet);
    }

    /// Only commands that download (or publish) get the network; an
    /// offline option takes it back, so a build script runs without it too.
    #[test]
    fn the_network_follows_the_commands_that_download() {
        let cases: &[(&str, bool)] = &[
            ("git fetch origin", true),
            ("git -C sub pull --rebase", true),
            ("git clone https://example.com/r.git r", true),
            ("git push origin main", true),
            ("git remote update", true),
            ("git submodule update --init", true),
            ("git status", false),
            ("git commit -m x", false),
            ("git remote add origin https://example.com/r.git", false),
            ("pip install -r requirements.txt", true),
            ("python -m pip install requests", true),
            ("pip list", false),
            ("npm ci", true),
            ("npm install", true),
            ("npm run build", false),
            ("npm test", false),
            ("cargo build --release", true),
            ("cargo build --offline", false),
            ("cargo test --frozen", false),
            ("cargo fetch", true),
            ("cargo fmt", false),
            ("dotnet restore", true),
            ("dotnet build --no-restore", false),
            ("MSBuild.exe App.sln /restore", true),
            ("MSBuild.exe App.sln", false),
            ("python -m unittest", false),
            ("node script.js", false),
            ("cmake --build build", false),
            ("gcc -o app main.c", false),
            ("Get-ChildItem", false),
            ("calc", false),
        ];
        for (command, network) in cases {
            assert_eq!(judge(command).network, *network, "{command}");
        }
    }

    #[test]
    fn a_rule_grants_or_takes_the_network_and_taking_wins() {
        let file = r#"{"rules": [
            {"id": "tests-with-sockets", "programs": ["python"], "decision": "allow",
             "justification": "the suite starts a local server", "network": true},
            {"id": "no-net-git", "programs": ["git"], "decision": "allow",
             "justification": "this machine has no remotes", "network": false}
        ]}"#;
        let mut set = RuleSet::builtin();
        set.load(file, "test");
        assert_eq!(set.errors, Vec::<String>::new());
        let judge = |c: &str| set.judge(&tokenize(c).unwrap());
        assert!(judge("python -m unittest").network);
        assert!(!judge("git fetch").network);
        assert!(!judge("git status").network);
    }

    #[test]
    fn a_refusal_names_the_argument_and_the_reason_once() {
        let verdict = judge("git fetch --upload-pac=calc .");
        assert_eq!(verdict.argument, Some((2, "--upload-pac=calc".into())));
        assert_eq!(
            verdict.reason(),
            "argument 2 ('--upload-pac=calc'): --upload-pack: it names the program to run on the other side (or here, for a local path)"
        );
        let verdict = judge("git -C sub frobnicate");
        assert_eq!(verdict.decision, Decision::Prompt);
        assert_eq!(
            verdict.reason(),
            "argument 3 ('frobnicate'): 'frobnicate' is not a subcommand the git grammar knows"
        );
    }

    #[test]
    fn rules_whose_examples_fail_never_loosen_the_policy() {
        let mut set = RuleSet::default();
        set.load(
            r#"{"rules": [
                {"id": "good", "programs": ["make"], "decision": "allow", "justification": "j", "match": ["make all"]},
                {"id": "liar", "programs": ["make"], "when": {"args": ["-j"]}, "decision": "forbidden",
                 "justification": "j", "match": ["make -k"]},
                {"id": "broken", "programs": ["make"], "decision": "allow", "justification": "j", "match": ["make (x)"]}
            ]}"#,
            "user rules",
        );
        assert_eq!(set.errors.len(), 2, "{:?}", set.errors);
        assert!(set.errors[0].contains(
            "rule 'liar' failed its examples, so the programs it names are refused until it is fixed: example \"make -k\" should match but does not"
        ));
        assert!(set.errors[1].contains("does not tokenise"));
        // The failing forbidden rule still guards make: everything is refused.
        let verdict = set.judge(&tokenize("make all").unwrap());
        assert_eq!(verdict.decision, Decision::Forbidden);
        assert_eq!(verdict.rule.as_deref(), Some("liar (broken)"));
        set.load("{ not json", "other");
        assert!(set.errors[2].starts_with("other: not a valid rule file"));
        set.load(
            r#"{"rules": [{"id": "x", "programs": [], "decision": "maybe", "justification": ""}]}"#,
            "third",
        );
        assert!(set.errors[3].starts_with("third: not a valid rule file"));
    }

    #[test]
    fn a_grammar_that_fails_its_examples_refuses_its_programs() {
        let mut set = RuleSet::builtin();
        set.load(
            r#"{"grammars": [{"id": "make", "programs": ["make"], "command": {"options": ["-j="]},
                 "examples": {"allow": ["make -k"]}}]}"#,
            "user",
        );
        assert_eq!(set.errors.len(), 1, "{:?}", set.errors);
        assert!(set.errors[0].contains("grammar 'make' failed its examples"));
        assert_eq!(
            set.judge(&tokenize("make -j4").unwrap()).decision,
            Decision::Forbidden
        );
        set.load(r#"{"grammars": [{"id": "ok", "programs": ["ok"], "command": {"options": ["-bad=nonsense"]}}]}"#, "user");
        assert!(set.errors[1].contains("grammar 'ok'"), "{:?}", set.errors);
        assert_eq!(
            set.judge(&tokenize("ok").unwrap()).decision,
            Decision::Forbidden
        );
    }

    #[test]
    fn a_user_grammar_allows_a_new_program_and_replaces_a_builtin_one() {
        let mut set = RuleSet::builtin();
        set.load(
            r#"{"grammars": [
                {"id": "make", "programs": ["make"], "cluster": true, "command": {"options": ["-j=", "-k", "-C=path"]},
                 "examples": {"allow": ["make -kj4 all"], "prompt": ["make --eval=x"]}}
            ]}"#,
            "user",
        );
        assert_eq!(set.errors, Vec::<String>::new());
        assert_eq!(
            set.judge(&tokenize("make -j 8 test").unwrap()).decision,
            Decision::Allow
        );
        assert_eq!(
            set.judge(&tokenize("make -f x.mk").unwrap()).decision,
            Decision::Prompt
        );
    }

    #[test]
    fn the_strictest_decision_wins_and_user_rules_can_only_add() {
        let mut set = RuleSet::builtin();
        set.load(
            r#"{"rules": [{"id": "ask-before-push", "programs": ["git"], "when": {"args": ["push"]},
                "decision": "prompt", "justification": "pushes leave the machine", "match": ["git push"], "not_match": ["git pull"]},
                {"id": "loosen", "programs": ["git"], "decision": "allow", "justification": "anything", "match": ["git x"]}]}"#,
            "user",
        );
        assert_eq!(
            set.judge(&tokenize("git push origin main").unwrap())
                .decision,
            Decision::Prompt
        );
        assert_eq!(
            set.judge(&tokenize("git pull").unwrap()).decision,
            Decision::Allow
        );
        // An allow rule never overrides what the grammar refuses or asks.
        assert_eq!(
            set.judge(&tokenize("git rebase -x calc").unwrap()).decision,
            Decision::Forbidden
        );
        assert_eq!(
            set.judge(&tokenize("git frob").unwrap()).decision,
            Decision::Prompt
        );
    }

    #[test]
    fn program_names_ignore_directories_case_and_suffixes() {
        assert_eq!(program_name(r"C:\Program Files\Git\cmd\GIT.EXE"), "git");
        assert_eq!(program_name("/usr/bin/python3"), "python3");
        assert_eq!(program_name("npm.cmd"), "npm");
        assert_eq!(program_name("build.bat"), "build");
    }
}
