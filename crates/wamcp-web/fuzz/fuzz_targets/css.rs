//! Any text as an inline style and as a page's style sheet: reading it
//! never panics or recurses without bound, a style that hides is judged the
//! same however many harmless declarations come before it, and a sheet
//! either is refused for its nesting or leaves the page readable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_web::css::Style;
use wamcp_web::extract::extract_html;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let effect = Style::parse(text).effect("div");
    // The cascade is order-based: an unrelated declaration in front (after
    // a `;` that closes whatever came before) changes nothing.
    let prefixed = Style::parse(&format!("color:red;{text}")).effect("div");
    if !text.contains("color") && !text.trim_start().starts_with(['{', '(', '[', '"', '\'', '\\', '/']) {
        assert_eq!(effect, prefixed, "{text:?}");
    }
    // `</style` would end the sheet early: that is HTML, not CSS.
    if !text.to_ascii_lowercase().contains("</style") {
        let html = format!("<style>{text}</style><p class=\"x\" id=\"y\">visible</p>");
        if let Ok(page) = extract_html(&html, None) {
            assert!(page.notes.is_empty(), "{text:?}");
        }
    }
});
