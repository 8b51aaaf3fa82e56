//! Any bytes, as any declared type: extraction never panics, and what it
//! shows has no invisible format characters left in it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_web::fence::is_invisible;
use wamcp_web::page::{extract_document, render_range};

fuzz_target!(|data: &[u8]| {
    let url = url::Url::parse("https://fuzz.test/dir/page.html").unwrap();
    for content_type in [Some("text/html; charset=utf-8"), Some("text/plain"), None] {
        if let Ok(page) = extract_document(&url, content_type, data) {
            for line in &page.lines {
                assert!(!line.chars().any(|c| is_invisible(c) || c == '\n'), "{line:?}");
            }
            let _ = render_range(&page, url.as_str(), 1, 2000);
        }
    }
});
