//! Command rules as data, in the spirit of codex-rs `execpolicy`: each rule
//! names programs, an optional condition on their arguments, a decision and
//! a justification, plus examples that must and must not match. The examples
//! are checked when the rules load, so a rule that does not do what it says
//! is reported and ignored instead of silently guarding nothing.
//!
//! A program that no rule allows is refused; when several rules match, the
//! strictest decision wins.

use super::tokenize::{Arg, tokenize};
use serde::Deserialize;
use std::collections::BTreeMap;

/// What happens to a command. Ordered from the most permissive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    /// Ask the user first.
    Prompt,
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

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    pub programs: Vec<String>,
    /// Runs in PowerShell rather than as an executable.
    #[serde(default)]
    pub cmdlet: bool,
    #[serde(default)]
    pub when: Option<When>,
    pub decision: Decision,
    pub justification: String,
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    #[serde(default)]
    pub not_match: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default, rename = "_about")]
    _about: Option<String>,
    rules: Vec<Rule>,
}

/// The verdict on one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    /// The rule that decided, or `None` when no rule knows the program.
    pub rule: Option<String>,
    pub justification: String,
    pub cmdlet: bool,
}

/// Loaded rules, and the problems found while loading them.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
    pub errors: Vec<String>,
}

const BUILTIN: &str = include_str!("../../rules/builtin.json");

impl RuleSet {
    /// The rules that ship with wamcp.
    pub fn builtin() -> RuleSet {
        let mut set = RuleSet::default();
        set.load(BUILTIN, "built-in rules");
        set
    }

    /// Adds the rules in `text` (a rule file); `source` names it in errors.
    /// A malformed file adds nothing; a rule whose examples fail is skipped.
    pub fn load(&mut self, text: &str, source: &str) {
        let file: RuleFile = match serde_json::from_str(text) {
            Ok(file) => file,
            Err(e) => {
                self.errors
                    .push(format!("{source}: not a valid rule file: {e}"));
                return;
            }
        };
        for rule in file.rules {
            match check_examples(&rule) {
                Ok(()) => self.rules.push(rule),
                Err(problem) => self
                    .errors
                    .push(format!("{source}: rule '{}' ignored: {problem}", rule.id)),
            }
        }
    }

    /// Decides on an already tokenised command.
    pub fn judge(&self, argv: &[Arg]) -> Verdict {
        let refused = Verdict {
            decision: Decision::Forbidden,
            rule: None,
            justification: "the program is not on the allowlist".into(),
            cmdlet: false,
        };
        let Some(program) = argv.first().map(|a| program_name(&a.text)) else {
            return refused;
        };
        let mut verdict: Option<Verdict> = None;
        for rule in self
            .rules
            .iter()
            .filter(|r| rule_matches(r, &program, &argv[1..]))
        {
            if verdict.as_ref().is_none_or(|v| rule.decision > v.decision) {
                verdict = Some(Verdict {
                    decision: rule.decision,
                    rule: Some(rule.id.clone()),
                    justification: rule.justification.clone(),
                    cmdlet: rule.cmdlet,
                });
            }
        }
        verdict.unwrap_or(refused)
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
    fn the_builtin_rules_load_cleanly() {
        let set = RuleSet::builtin();
        assert_eq!(set.errors, Vec::<String>::new());
        assert_eq!(set.rules.len(), 7);
    }

    #[test]
    fn decisions_table() {
        use Decision::*;
        let cases: &[(&str, Decision, Option<&str>)] = &[
            ("git status", Allow, Some("developer-tools")),
            (
                "git commit -m 'a; b | rm -rf / && del x'",
                Allow,
                Some("developer-tools"),
            ),
            (
                r#"git log --format="%h | %s""#,
                Allow,
                Some("developer-tools"),
            ),
            ("git commit -m 'it''s done'", Allow, Some("developer-tools")),
            ("git rm old.txt", Allow, Some("developer-tools")),
            (
                "cmake --build build --config Debug",
                Allow,
                Some("developer-tools"),
            ),
            (
                "python tools/platform_check.py",
                Allow,
                Some("developer-tools"),
            ),
            ("python -m pytest -q", Allow, Some("developer-tools")),
            (
                "C:/Python311/python.exe -c x",
                Forbidden,
                Some("python-inline-code"),
            ),
            (
                "python -Ic 'import os'",
                Forbidden,
                Some("python-inline-code"),
            ),
            ("py -3 -c x", Forbidden, Some("python-inline-code")),
            ("node -e 1", Forbidden, Some("node-inline-code")),
            ("npx -c calc", Forbidden, Some("npm-shell-strings")),
            (
                "git -c alias.st=!calc st",
                Forbidden,
                Some("git-program-options"),
            ),
            (
                "git rebase --exec calc main",
                Forbidden,
                Some("git-program-options"),
            ),
            (
                "git -c user.email=a@b commit -m x",
                Allow,
                Some("developer-tools"),
            ),
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

    #[test]
    fn rules_whose_examples_fail_are_reported_and_ignored() {
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
        assert_eq!(set.rules.len(), 1);
        assert_eq!(set.errors.len(), 2, "{:?}", set.errors);
        assert!(
            set.errors[0]
                .contains("rule 'liar' ignored: example \"make -k\" should match but does not")
        );
        assert!(set.errors[1].contains("does not tokenise"));
        set.load("{ not json", "other");
        assert!(set.errors[2].starts_with("other: not a valid rule file"));
        set.load(
            r#"{"rules": [{"id": "x", "programs": [], "decision": "maybe", "justification": ""}]}"#,
            "third",
        );
        assert!(set.errors[3].starts_with("third: not a valid rule file"));
    }

    #[test]
    fn the_strictest_decision_wins_and_user_rules_can_only_add() {
        let mut set = RuleSet::builtin();
        set.load(
            r#"{"rules": [{"id": "ask-before-push", "programs": ["git"], "when": {"args": ["push"]},
                "decision": "prompt", "justification": "pushes leave the machine", "match": ["git push"], "not_match": ["git pull"]}]}"#,
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
    }

    #[test]
    fn program_names_ignore_directories_case_and_suffixes() {
        assert_eq!(program_name(r"C:\Program Files\Git\cmd\GIT.EXE"), "git");
        assert_eq!(program_name("/usr/bin/python3"), "python3");
        assert_eq!(program_name("npm.cmd"), "npm");
        assert_eq!(program_name("build.bat"), "build");
    }
}
