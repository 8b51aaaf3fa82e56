//! The host-shell splitter and the effect tables never panic or hang on
//! any line, in any dialect, and every verdict is one the hooks can send.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use wamcp_policy::command::rules::RuleSet;
use wamcp_policy::command::shell_line::{Dialect, simple_commands};
use wamcp_policy::host_hooks::shell_verdict;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    // Built once: compiling the grammars costs more than a line.
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    let rules = RULES.get_or_init(RuleSet::builtin);
    for dialect in [Dialect::Posix, Dialect::PowerShell, Dialect::Cmd] {
        for command in simple_commands(line, dialect) {
            assert!(!command.words.is_empty() || !command.writes_to.is_empty());
        }
        let _ = shell_verdict(line, dialect, rules, &|_| false);
    }
});
