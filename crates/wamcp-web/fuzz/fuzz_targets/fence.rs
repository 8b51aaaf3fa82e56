//! Whatever a page contains, the fenced text has exactly two lines that
//! read as fence markers (in any case, with any spacing or invisible
//! characters) and are not escaped: the begin marker first and the end
//! marker just before the reminder. Content can never close the fence early.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_web::fence::{fence, is_invisible};

fn reads_as_marker(line: &str) -> bool {
    let visible: String = line.chars().filter(|c| !is_invisible(*c)).collect();
    let folded = visible.split_whitespace().collect::<Vec<_>>().join(" ").to_uppercase();
    let escaped = folded.trim_start_matches('-').starts_with("[ESCAPED]");
    folded.starts_with("---") && folded.contains("UNTRUSTED WEB CONTENT") && !escaped
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (source, content) = text.split_once('\u{0}').unwrap_or(("https://fuzz.test/", text));
    let fenced = fence(source, content);
    let lines: Vec<&str> = fenced.lines().collect();
    let markers: Vec<usize> = (0..lines.len()).filter(|&i| reads_as_marker(lines[i])).collect();
    assert_eq!(markers, [0, lines.len() - 2], "{fenced}");
    assert_eq!(lines[lines.len() - 2], "--- END UNTRUSTED WEB CONTENT ---");
});
