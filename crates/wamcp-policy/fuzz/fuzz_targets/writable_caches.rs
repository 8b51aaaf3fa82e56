//! Cache entries of `WAMCP_COMMAND_WRITABLE` from arbitrary text and
//! arbitrary PATH lists: never a panic, and an accepted entry is absolute,
//! holds no `..`, does not hold the home directory and does not overlap a
//! PATH directory, either way round.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::command::sandbox::{Home, refusal, writable_caches};
use wamcp_policy::workspace::PathStyle;
use wamcp_policy::write_rules::is_within;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (setting, path) = text.split_once('\n').unwrap_or((text, ""));
    for (style, home, separator) in [
        (PathStyle::Windows, r"C:\Users\ada", ';'),
        (PathStyle::Unix, "/home/ada", ':'),
    ] {
        let path_dirs: Vec<String> = path.split(separator).map(str::to_string).collect();
        let home_place = Home::new(Some(home), &path_dirs, style);
        let env = |name: &str| (name == "CARGO_HOME").then(|| path.to_string());
        let caches = writable_caches(Some(setting), &home_place, &env);
        let defaults = writable_caches(None, &home_place, &env);
        for entry in caches.entries.iter().chain(&defaults.entries) {
            assert!(!entry.split(['/', '\\']).any(|c| c == ".."), "{entry}");
            assert!(!is_within(home, entry, style), "{entry} holds the home");
            for dir in path_dirs.iter().filter(|d| !d.is_empty()) {
                assert!(
                    !is_within(entry, dir, style) && !is_within(dir, entry, style),
                    "{entry} overlaps PATH entry {dir}"
                );
            }
            assert_eq!(refusal(entry, &home_place), None);
        }
    }
});
