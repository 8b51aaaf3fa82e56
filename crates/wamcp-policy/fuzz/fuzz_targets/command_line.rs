//! The line idioms on arbitrary text: never a panic; every command a line
//! yields is one the strict tokenizer gives back word for word from its
//! canonical form (so the split can only ever hand the tokenizer what it
//! judges); the confined verdict and every filter take any input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use wamcp_policy::command::line::parse_line;
use wamcp_policy::command::posture::confined_verdict;
use wamcp_policy::command::rules::RuleSet;
use wamcp_policy::command::tokenize::{to_powershell, tokenize_values};

fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(RuleSet::builtin)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(line) = parse_line(&text) else {
        return;
    };
    for step in &line.steps {
        assert!(!step.argv.is_empty());
        let again = tokenize_values(&to_powershell(&step.argv)).expect("canonical form tokenises");
        let texts = |argv: &[wamcp_policy::command::tokenize::Arg]| {
            argv.iter().map(|a| a.text.clone()).collect::<Vec<_>>()
        };
        assert_eq!(texts(&again), texts(&step.argv));
        let _ = confined_verdict(rules().judge(&step.argv), &step.argv);
        for filter in &step.filters {
            let _ = filter.apply(&text);
        }
    }
});
