//! Any text as an inline style: reading it never panics or recurses
//! without bound, and a style that hides is judged the same however many
//! harmless declarations come before it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_web::css::Style;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let effect = Style::parse(text).effect();
    // The cascade is order-based: an unrelated declaration in front (after
    // a `;` that closes whatever came before) changes nothing.
    let prefixed = Style::parse(&format!("color:red;{text}")).effect();
    if !text.contains("color") && !text.trim_start().starts_with(['{', '(', '[', '"', '\'', '\\', '/']) {
        assert_eq!(effect, prefixed, "{text:?}");
    }
});
