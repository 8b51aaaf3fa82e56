//! A user capability catalog, a task and an audit trail of any content:
//! parsing never panics; a catalog that parses holds only entries the
//! format allows (no relative program paths, no NUL); routing over it
//! reports every capability once and selects only one with discriminating
//! evidence; a client configuration summarises to names, phrases, counts
//! and flags only; a trail reads back without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::devenv::audit::read_chain;
use wamcp_policy::devenv::catalog::parse;
use wamcp_policy::devenv::mcp_config::{summarize_json, summarize_toml};
use wamcp_policy::devenv::routing::{route, Selection};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (catalog_text, task) = text.split_once('\u{1}').unwrap_or((text, "lint python"));
    if let Ok(parsed) = parse(catalog_text, true) {
        for c in &parsed.capabilities {
            for argv in &c.argv {
                assert!(!argv.is_empty());
                assert!(argv.iter().all(|a| !a.contains('\0')));
                let program = &argv[0];
                assert!(
                    !program.contains(['/', '\\']) || program.starts_with('/') || program.starts_with("\\\\")
                        || program.as_bytes().get(1) == Some(&b':'),
                    "{program}"
                );
            }
        }
        let routed = route(task, "", &parsed.capabilities, |c| Some(c.argv[0][0].clone()));
        assert_eq!(routed.candidates.len(), parsed.capabilities.len());
        if routed.selection == Selection::Selected {
            assert!(routed.candidates[0].discriminating_score > 0);
        }
    }
    // A client configuration of any content: never a panic, and a summary
    // made only of names, fixed phrases, counts and flags.
    for summary in [summarize_json(text, Some("/p")), summarize_toml(text)] {
        for server in &summary.servers {
            let shown = serde_json::to_value(server).unwrap();
            let keys: Vec<&String> = shown.as_object().unwrap().keys().collect();
            assert_eq!(
                keys,
                ["name", "valid", "transport", "arg_count", "has_command", "has_url", "has_env", "problems"]
            );
        }
    }
    let reading = read_chain(text.lines().map(|l| ("agent.log", l)));
    assert!(reading.records.len() <= text.lines().count());
});
