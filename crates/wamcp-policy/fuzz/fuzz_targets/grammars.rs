//! The command grammars on generated commands: never a panic, and an option
//! word the grammar does not list is never allowed, whatever listed flags
//! (taken from the grammar's own tables) surround it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use wamcp_policy::command::rules::{Decision, RuleSet};
use wamcp_policy::command::tokenize::Arg;

fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(RuleSet::builtin)
}

fn arg(text: &str) -> Arg {
    Arg {
        text: text.to_string(),
        quoted: false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let grammars: Vec<_> = rules().grammars().iter().collect();
    let grammar = grammars[pick as usize % grammars.len()];
    let flags = grammar.listed_flags();
    let mut argv = vec![arg(&grammar.programs[0])];
    let mut unknown = false;
    let mut arbitrary = false;
    for chunk in rest.chunks(3) {
        match chunk {
            [0, tail @ ..] if !unknown => {
                unknown = true;
                let tail: String = tail.iter().map(|b| (b'a' + b % 26) as char).collect();
                argv.push(arg(&format!("--zz{tail}")));
            }
            [1, bytes @ ..] => {
                // Arbitrary text may be `--` or a value: only "no panic" holds then.
                arbitrary = true;
                argv.push(arg(&String::from_utf8_lossy(bytes)));
            }
            [b, ..] if !flags.is_empty() => argv.push(arg(&flags[*b as usize % flags.len()])),
            _ => {}
        }
    }
    let verdict = rules().judge(&argv);
    if unknown && !arbitrary {
        assert_ne!(verdict.decision, Decision::Allow, "{argv:?}");
    }
});
