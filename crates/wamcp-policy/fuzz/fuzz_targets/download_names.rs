//! Whatever name a model or a URL supplies, a download lands as one safe
//! component of the download root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::limits::MAX_FILENAME_LENGTH;
use wamcp_policy::net_names::{check_repository, sanitize_download_name};
use wamcp_policy::workspace::PathStyle;
use wamcp_policy::write_rules::check_component;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(name) = sanitize_download_name(text) {
        assert!(!name.is_empty() && name.chars().count() <= MAX_FILENAME_LENGTH);
        assert!(!name.contains(['/', '\\']), "{name:?}");
        assert!(name != "." && name != "..");
        assert!(check_component(&name, PathStyle::Windows).is_ok(), "{name:?}");
        assert_eq!(sanitize_download_name(&name).as_deref(), Ok(name.as_str()));
    }
    if let Ok((owner, repo)) = check_repository(text) {
        for segment in [owner, repo] {
            assert!(segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)));
            assert!(segment != "." && segment != "..");
        }
    }
});
