//! The secret-store table on arbitrary base folders: never a panic, every
//! place below the base it came from, and dotenv names judged without case.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::secrets::{is_env_file, stores};
use wamcp_policy::workspace::PathStyle;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\u{1}');
    let home = parts.next().unwrap_or("");
    let appdata = parts.next().map(str::to_string);
    for style in [PathStyle::Windows, PathStyle::Unix] {
        let listed = stores(style, Some(home), |name| match name {
            "APPDATA" | "LOCALAPPDATA" | "XDG_CONFIG_HOME" => appdata.clone(),
            _ => None,
        });
        let bases: Vec<&str> = [Some(home), appdata.as_deref()].into_iter().flatten().collect();
        for store in &listed {
            assert!(
                bases
                    .iter()
                    .any(|b| store.path.starts_with(b.trim_end_matches(['/', '\\'])))
                    || store.path.contains("/.config/"),
                "{store:?} is below no base of {bases:?}"
            );
        }
    }
    assert_eq!(is_env_file(text), is_env_file(&text.to_ascii_uppercase()));
});
