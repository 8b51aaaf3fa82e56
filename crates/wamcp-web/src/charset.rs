//! Turning a response body into text the way a browser would.
//!
//! Order: byte-order mark, then a charset header that means what it says,
//! then `<meta charset>` (HTML only), then UTF-8 if the bytes are valid
//! UTF-8, then a header label servers send by reflex (`iso-8859-1`,
//! `us-ascii`), then windows-1252. A server that claims latin-1 but sends
//! UTF-8 therefore reads correctly, and a page with no charset at all is
//! still decoded.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};

/// Header labels that are so often wrong that valid UTF-8 outranks them.
const UNRELIABLE_LABELS: &[&str] = &["iso-8859-1", "latin-1", "latin1", "us-ascii", "ascii"];

/// How far into an HTML document a `<meta charset>` is looked for (the
/// HTML standard's prescan window).
const META_PRESCAN_BYTES: usize = 1024;

/// A body as text, and how it was read.
pub struct Decoded {
    /// The decoded text, byte-order mark removed.
    pub text: String,
    /// The encoding used, by its WHATWG name.
    pub encoding: &'static str,
    /// Some bytes were not valid in that encoding and became U+FFFD.
    pub lossy: bool,
}

/// Decodes `body` in the order above; `html`
/// allows a `<meta charset>` to decide.
pub fn decode(body: &[u8], content_type: Option<&str>, html: bool) -> Decoded {
    let header_label = content_type.and_then(charset_parameter);
    let header = header_label
        .as_deref()
        .and_then(|label| Encoding::for_label(label.as_bytes()).map(|e| (e, is_unreliable(label))));
    let chosen = if let Some((bom, _)) = Encoding::for_bom(body) {
        bom
    } else if let Some((encoding, false)) = header {
        encoding
    } else if let Some(meta) = html.then(|| meta_charset(body)).flatten() {
        meta
    } else if std::str::from_utf8(body).is_ok() {
        UTF_8
    } else if let Some((encoding, true)) = header {
        encoding
    } else {
        WINDOWS_1252
    };
    let (text, used, lossy) = chosen.decode(body);
    Decoded {
        text: text.into_owned(),
        encoding: used.name(),
        lossy,
    }
}

fn is_unreliable(label: &str) -> bool {
    UNRELIABLE_LABELS.contains(&label.to_ascii_lowercase().as_str())
}

/// The `charset` parameter of a Content-Type value, unquoted.
pub fn charset_parameter(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// The encoding a `<meta charset=…>` or `<meta http-equiv content="…;
/// charset=…">` near the top of the document names. UTF-16 named in a meta
/// tag means UTF-8, as the HTML standard says: a document that could be read
/// far enough to find the tag is not UTF-16.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(META_PRESCAN_BYTES)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let mut rest = lower.as_slice();
    while let Some(start) = find(rest, b"<meta") {
        let tag = &rest[start..];
        let end = tag.iter().position(|&b| b == b'>').unwrap_or(tag.len());
        if let Some(at) = find(&tag[..end], b"charset=") {
            let value = &tag[at + b"charset=".len()..end];
            let value = value
                .iter()
                .skip_while(|b| matches!(b, b'"' | b'\'' | b' '))
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.'))
                .copied()
                .collect::<Vec<u8>>();
            if let Some(encoding) = Encoding::for_label(&value) {
                let is_utf16 = encoding == UTF_16LE || encoding == UTF_16BE;
                return Some(if is_utf16 { UTF_8 } else { encoding });
            }
        }
        rest = &tag[end..];
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(body: &[u8], content_type: Option<&str>, html: bool) -> (String, &'static str) {
        let d = decode(body, content_type, html);
        (d.text, d.encoding)
    }

    #[test]
    fn the_order_a_browser_uses() {
        let cafe_utf8 = "café".as_bytes();
        let cafe_latin1 = b"caf\xe9";
        // (body, content type, is HTML, expected text, expected encoding)
        type Case<'a> = (&'a [u8], Option<&'a str>, bool, &'a str, &'a str);
        let cases: &[Case] = &[
            // A latin-1 header on UTF-8 bytes is demoted.
            (
                cafe_utf8,
                Some("text/plain; charset=iso-8859-1"),
                false,
                "café",
                "UTF-8",
            ),
            (
                cafe_latin1,
                Some("text/plain; charset=ISO-8859-1"),
                false,
                "café",
                "windows-1252",
            ),
            // No charset at all: UTF-8 when valid, else windows-1252.
            (cafe_utf8, Some("text/plain"), false, "café", "UTF-8"),
            (cafe_latin1, None, false, "café", "windows-1252"),
            // A specific header label is believed.
            (
                b"\xe0\xe1",
                Some("text/plain; charset=\"koi8-r\""),
                false,
                "ЮА",
                "KOI8-R",
            ),
            // BOM beats everything.
            (
                b"\xef\xbb\xbfcaf\xc3\xa9",
                Some("text/plain; charset=windows-1252"),
                false,
                "café",
                "UTF-8",
            ),
            (b"\xff\xfeh\x00i\x00", None, false, "hi", "UTF-16LE"),
            // Meta charset for HTML, after a reliable header.
            (
                b"<meta charset=\"windows-1251\"><p>\xcf",
                Some("text/html"),
                true,
                "<meta charset=\"windows-1251\"><p>П",
                "windows-1251",
            ),
            (
                b"<META http-equiv=Content-Type content='text/html; charset=koi8-r'>\xf0",
                None,
                true,
                "<META http-equiv=Content-Type content='text/html; charset=koi8-r'>П",
                "KOI8-R",
            ),
            (
                b"<meta charset=utf-16><p>caf\xc3\xa9",
                None,
                true,
                "<meta charset=utf-16><p>café",
                "UTF-8",
            ),
            (
                b"<meta charset=windows-1251>\xcf",
                Some("text/html; charset=utf-8"),
                true,
                "<meta charset=windows-1251>\u{FFFD}",
                "UTF-8",
            ),
        ];
        for (body, content_type, html, text, encoding) in cases {
            let (got_text, got_encoding) = decoded(body, *content_type, *html);
            assert_eq!(got_encoding, *encoding, "{content_type:?} {body:?}");
            assert_eq!(got_text, *text, "{content_type:?} {body:?}");
        }
    }

    #[test]
    fn lossy_decoding_is_reported() {
        let d = decode(b"ok \xff", Some("text/plain; charset=utf-8"), false);
        assert!(d.lossy);
        assert_eq!(d.text, "ok \u{FFFD}");
        assert!(!decode(b"ok", None, false).lossy);
    }

    #[test]
    fn charset_parameters() {
        assert_eq!(
            charset_parameter("text/html; charset=UTF-8").as_deref(),
            Some("UTF-8")
        );
        assert_eq!(
            charset_parameter("text/html;charset='x'").as_deref(),
            Some("x")
        );
        assert_eq!(charset_parameter("text/html"), None);
        assert_eq!(charset_parameter("text/html; format=flowed"), None);
    }
}
