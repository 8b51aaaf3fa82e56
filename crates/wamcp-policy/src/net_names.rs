//! Names that come from the network or the model and end up on disk or in a
//! request: download file names and GitHub `owner/repository` pairs.
//!
//! A download name is reduced to one safe component of the download root, so
//! no spelling of `..`, a drive, a device or a stream can place bytes
//! anywhere else, and no trust file can be planted by a download.

use crate::limits::MAX_FILENAME_LENGTH;
use crate::write_rules::{is_protected_name, is_reserved_device_name};

/// Suffixes kept when a long name is shortened (`.tar.gz` is two).
const KEPT_SUFFIXES: usize = 2;
const MAX_SUFFIX_CHARS: usize = 10;

/// Turns a requested or URL-derived file name into one safe file name, or
/// says why none is left.
pub fn sanitize_download_name(raw: &str) -> Result<String, String> {
    let last = raw.trim().rsplit(['/', '\\']).next().unwrap_or_default();
    let replaced: String = last.chars().map(safe_char).collect();
    // Cutting can end the name on dots or spaces again (which Windows drops),
    // so every later check judges the final, shortened name.
    let mut name = shorten_and_trim(replaced.trim_start());
    if is_reserved_device_name(&name) {
        // `NUL.zip` would be written to the null device and vanish.
        name = shorten_and_trim(&format!("_{name}"));
    }
    if name.is_empty() {
        return Err(format!(
            "'{raw}' leaves no usable file name once path parts, dots and spaces are removed"
        ));
    }
    if is_protected_name(std::slice::from_ref(&name)) {
        return Err(format!(
            "'{name}' is the name of a server trust file; a download may not create one"
        ));
    }
    Ok(name)
}

fn shorten_and_trim(name: &str) -> String {
    let trimmed = name.trim_end_matches(is_dropped_at_end);
    shorten(trimmed)
        .trim_end_matches(is_dropped_at_end)
        .to_string()
}

/// Windows drops trailing dots and spaces; other trailing white space would
/// be invisible in a listing, so it goes too.
fn is_dropped_at_end(c: char) -> bool {
    c == '.' || c.is_whitespace()
}

/// Characters Windows refuses in names, controls, and the invisible format
/// characters that make `evil\u{202E}gpj.exe` display as `evilexe.jpg`.
fn safe_char(c: char) -> char {
    if c.is_control()
        || crate::text::is_invisible(c)
        || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*')
    {
        '_'
    } else {
        c
    }
}

/// Cuts a name to the length limit at its stem, so `.tar.gz` survives.
fn shorten(name: &str) -> String {
    let total = name.chars().count();
    if total <= MAX_FILENAME_LENGTH {
        return name.to_string();
    }
    let suffix_start = suffix_start(name);
    let suffix = &name[suffix_start..];
    let stem_budget = MAX_FILENAME_LENGTH - suffix.chars().count();
    let stem: String = name[..suffix_start].chars().take(stem_budget).collect();
    format!("{stem}{suffix}")
}

/// Byte offset where the kept suffixes begin (the name's length if none):
/// up to two `.` + 1-10 ASCII alphanumerics, leaving a non-empty stem.
fn suffix_start(name: &str) -> usize {
    let mut start = name.len();
    for _ in 0..KEPT_SUFFIXES {
        let Some(dot) = name[..start].rfind('.') else {
            break;
        };
        let candidate = &name[dot + 1..start];
        let plausible = (1..=MAX_SUFFIX_CHARS).contains(&candidate.len())
            && candidate.bytes().all(|b| b.is_ascii_alphanumeric());
        if !plausible || dot == 0 {
            break;
        }
        start = dot;
    }
    start
}

/// Checks `owner/repository` for the GitHub API: each segment
/// `[A-Za-z0-9_.-]+` and not dots only, so nothing can steer the request
/// path (`..`, `%2e`, a query, a URL).
pub fn check_repository(raw: &str) -> Result<(String, String), String> {
    let trimmed = raw.trim();
    let refuse = || {
        Err(format!(
            "'{trimmed}' is not a GitHub repository; give it as owner/repository, e.g. premake/premake-core (not a URL)"
        ))
    };
    let mut parts = trimmed.split('/');
    let (Some(owner), Some(repo), None) = (parts.next(), parts.next(), parts.next()) else {
        return refuse();
    };
    let valid = |segment: &str| {
        !segment.is_empty()
            && segment.len() <= 100
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
            && segment.bytes().any(|b| b != b'.')
    };
    if valid(owner) && valid(repo) {
        Ok((owner.to_string(), repo.to_string()))
    } else {
        refuse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_become_one_safe_component() {
        let cases: &[(&str, &str)] = &[
            ("premake-5.0.zip", "premake-5.0.zip"),
            ("  tool.exe  ", "tool.exe"),
            ("../../etc/passwd", "passwd"),
            (r"..\..\Windows\System32\evil.dll", "evil.dll"),
            (r"C:\Users\me\x.bin", "x.bin"),
            ("a<b>c:d\"e|f?g*h.txt", "a_b_c_d_e_f_g_h.txt"),
            ("line\nbreak\t.txt", "line_break_.txt"),
            ("evil\u{202E}gpj.exe", "evil_gpj.exe"),
            ("zero\u{200B}width.txt", "zero_width.txt"),
            ("report.pdf. . .", "report.pdf"),
            ("NUL", "_NUL"),
            ("nul.txt", "_nul.txt"),
            ("COM1.tar.gz", "_COM1.tar.gz"),
            ("con .txt", "_con .txt"),
            ("lpt²", "_lpt²"),
            ("CONSOLE.txt", "CONSOLE.txt"),
            ("file:stream", "file_stream"),
            (".hidden", ".hidden"),
            ("ünïcödé.txt", "ünïcödé.txt"),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                sanitize_download_name(raw).as_deref(),
                Ok(*expected),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn names_with_nothing_left_are_refused() {
        for raw in [
            "", "   ", "/", "dir/", r"dir\", "..", "...", ". .", "a/..", "x/ . ",
        ] {
            assert!(sanitize_download_name(raw).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn trust_files_cannot_be_downloaded() {
        for raw in [
            "mcp-allowed-hosts.json",
            "MCP-Allowed-Hosts.JSON",
            "x/mcp-allowed-hosts.json",
        ] {
            let refusal = sanitize_download_name(raw).unwrap_err();
            assert!(refusal.contains("trust file"), "{raw}: {refusal}");
        }
    }

    #[test]
    fn long_names_keep_up_to_two_suffixes() {
        let long = "a".repeat(300);
        let cut = sanitize_download_name(&format!("{long}.tar.gz")).unwrap();
        assert_eq!(cut.chars().count(), MAX_FILENAME_LENGTH);
        assert!(cut.ends_with("aaa.tar.gz"), "{cut}");

        let three = sanitize_download_name(&format!("{long}.v1.tar.gz")).unwrap();
        assert!(
            three.ends_with("a.v1.tar.gz") || three.ends_with("aa.tar.gz"),
            "{three}"
        );
        assert!(three.ends_with(".tar.gz") && three.chars().count() == MAX_FILENAME_LENGTH);

        let implausible = sanitize_download_name(&format!("{long}.not-an-extension!")).unwrap();
        assert_eq!(implausible, "a".repeat(MAX_FILENAME_LENGTH));

        let wide = "ü".repeat(400);
        let cut = sanitize_download_name(&format!("{wide}.zip")).unwrap();
        assert_eq!(cut.chars().count(), MAX_FILENAME_LENGTH);
        assert!(cut.ends_with("ü.zip"));

        let dotted = format!(
            "{}....{}",
            "c".repeat(MAX_FILENAME_LENGTH - 2),
            "d".repeat(50)
        );
        assert_eq!(
            sanitize_download_name(&dotted).unwrap(),
            "c".repeat(MAX_FILENAME_LENGTH - 2)
        );
        let spaced_device = format!("CON{}x", " ".repeat(300));
        assert_eq!(sanitize_download_name(&spaced_device).unwrap(), "_CON");

        let exact = format!("{}.zip", "b".repeat(MAX_FILENAME_LENGTH - 4));
        assert_eq!(sanitize_download_name(&exact).unwrap(), exact);
    }

    #[test]
    fn repositories() {
        let ok = [
            ("premake/premake-core", ("premake", "premake-core")),
            ("  KhronosGroup/glslang ", ("KhronosGroup", "glslang")),
            ("a_b/c.d", ("a_b", "c.d")),
            ("o/.github", ("o", ".github")),
        ];
        for (raw, (owner, repo)) in ok {
            assert_eq!(
                check_repository(raw),
                Ok((owner.to_string(), repo.to_string())),
                "{raw}"
            );
        }
        for raw in [
            "",
            "premake",
            "a/b/c",
            "/b",
            "a/",
            "../b",
            "a/..",
            "a/.",
            "https://github.com/a/b",
            "a/b?x=1",
            "a/b#x",
            "a/%2e%2e",
            "a b/c",
            "a/b\nc",
            "ä/b",
        ] {
            assert!(check_repository(raw).is_err(), "{raw:?}");
        }
    }
}
