//! Arguments that change meaning on the way to a program that reads its
//! command line in the ANSI code page (`main(int, char**)` built without a
//! UTF-8 manifest). Windows converts the checked UTF-16 text with its
//! "best fit" tables, which turn look-alikes into the ASCII they resemble:
//! a fullwidth quote `＂` (U+FF02) becomes `"`, `＼` or `¥` (on Japanese
//! systems) becomes `\`, an ideographic space becomes a space. The grammar
//! judged one positional argument; such a program would split it, or see
//! an option in it (`－－use-compress-program=...`).
//!
//! Which programs read ANSI is not knowable from outside, so every
//! argument is judged, but only against what the conversion would produce
//! on this machine: a character the code page holds exactly (Chinese text
//! on a Chinese system) or cannot hold at all (it becomes `?`) passes.

/// ASCII that changes how a command line splits or what an argument is:
/// quotes and backslashes (the C runtime's splitting), whitespace, the
/// characters that start options and separate path components, and `@`,
/// which makes gcc, clang and MSBuild read more arguments from a file.
fn changes_parsing(byte: u8) -> bool {
    matches!(byte, b'"' | b'\\' | b'/' | b'-' | b'@' | b' ' | b'\t')
}

/// The first character (1-based argument number, character, what it
/// becomes) that `best_fit` turns into parsing-relevant ASCII. `best_fit`
/// answers the single ASCII byte the ANSI conversion makes of a non-ASCII
/// character, if it makes one.
pub fn ansi_look_alike(
    args: &[String],
    best_fit: impl Fn(char) -> Option<u8>,
) -> Option<(usize, char, char)> {
    args.iter().enumerate().find_map(|(index, arg)| {
        look_alike_in(arg, &best_fit, changes_parsing).map(|(c, becomes)| (index + 1, c, becomes))
    })
}

/// The first character of a whole command line that `best_fit` turns into
/// any ASCII at all, with what it becomes. For programs whose own syntax is
/// unknown (`open_app` starts whatever the user listed), every ASCII
/// character may mean something: `&`, `%` or `:` as much as a quote.
pub fn any_ascii_look_alike(
    line: &str,
    best_fit: impl Fn(char) -> Option<u8>,
) -> Option<(char, char)> {
    look_alike_in(line, &best_fit, |_| true)
}

fn look_alike_in(
    text: &str,
    best_fit: &impl Fn(char) -> Option<u8>,
    matters: impl Fn(u8) -> bool,
) -> Option<(char, char)> {
    text.chars().filter(|c| !c.is_ascii()).find_map(|c| {
        best_fit(c)
            .filter(|b| matters(*b))
            .map(|b| (c, char::from(b)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice of Windows' best-fit table for code page 1252, plus `¥` as
    /// code page 932 maps it.
    fn cp1252(c: char) -> Option<u8> {
        match c {
            '\u{FF02}' => Some(b'"'),
            '\u{FF3C}' | '\u{A5}' => Some(b'\\'),
            '\u{FF0D}' => Some(b'-'),
            '\u{FF0F}' => Some(b'/'),
            '\u{FF20}' => Some(b'@'),
            '\u{3000}' => Some(b' '),
            '\u{FF0C}' => Some(b','),
            '\u{FF1A}' => Some(b':'),
            '\u{FF21}' => Some(b'A'),
            _ => None,
        }
    }

    #[test]
    fn look_alikes_of_quotes_slashes_dashes_and_spaces_are_found() {
        let args = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (argv, found) in [
            (
                &[
                    "-cf",
                    "o.tar",
                    "x\u{FF02} --use-compress-program=calc \u{FF02}",
                ][..],
                (3, '\u{FF02}', '"'),
            ),
            (&["\u{FF0D}\u{FF0D}exec=calc"][..], (1, '\u{FF0D}', '-')),
            (&["ok", "C:\u{FF3C}Windows"][..], (2, '\u{FF3C}', '\\')),
            (&["dir\u{A5}file"][..], (1, '\u{A5}', '\\')),
            (&["two\u{3000}words"][..], (1, '\u{3000}', ' ')),
            (&["\u{FF0F}p:x"][..], (1, '\u{FF0F}', '/')),
            (&["-c", "\u{FF20}evil.rsp"][..], (2, '\u{FF20}', '@')),
        ] {
            assert_eq!(
                ansi_look_alike(&args(argv), cp1252),
                Some(found),
                "{argv:?}"
            );
        }
        // What a naive rule would refuse: text the conversion keeps, drops to
        // `?`, or turns into harmless ASCII.
        for argv in [
            &["commit", "-m", "修复\u{FF0C}测试\u{FF1A}通过"][..],
            &["naïve café", "Ｔｅｓｔ \u{FF21}"][..],
            &["--grep=\"x\"", r"C:\dir\"][..],
        ] {
            assert_eq!(ansi_look_alike(&args(argv), cp1252), None, "{argv:?}");
        }
    }

    #[test]
    fn on_a_whole_line_any_ascii_result_counts() {
        assert_eq!(
            any_ascii_look_alike("x\u{FF0C} \u{FF02} --evil", cp1252),
            Some(('\u{FF0C}', ','))
        );
        assert_eq!(
            any_ascii_look_alike("C:\\\u{A5}", cp1252),
            Some(('\u{A5}', '\\'))
        );
        // Kept exactly, dropped to `?`, or no ANSI form: nothing changes.
        assert_eq!(any_ascii_look_alike("café 修 \u{1F600}", cp1252), None);
    }
}
