//! Build output to diagnostics: the value of a build tool is the parser, since
//! a raw log is a small model's whole context window.
//!
//! Families are tried in a fixed order (the order matters: an MSVC line also
//! looks like a gcc line with a strange file name), duplicates are merged
//! with a count, and notes attach to the diagnostic before them. The report
//! built from them is `build_report`'s.

use regex::Regex;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;
use wamcp_policy::limits::MAX_NOTES_PER_DIAGNOSTIC;

/// How serious a diagnostic is, as the tool said it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// `error` or `fatal error`.
    Error,
    /// `warning`.
    Warning,
    /// `note` or `message`: it explains the diagnostic before it.
    Note,
}

/// One diagnostic as parsed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// The file, with `/` separators, relative to the build directory when
    /// inside it; empty when none is named.
    pub file: String,
    /// The line, 1-based, when the tool gave one.
    pub line: Option<u32>,
    /// The column, when the tool gave one.
    pub column: Option<u32>,
    /// How serious it is.
    pub severity: Severity,
    /// The tool's code (`C2065`, `LNK2019`), or the
    /// tool's name when it has none; may be empty.
    pub code: String,
    /// The message, trimmed; a CMake message joins its indented lines.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic that names no file (a tool or build-system message).
    fn unlocated(severity: Severity, code: &str, message: &str) -> Diagnostic {
        Diagnostic {
            file: String::new(),
            line: None,
            column: None,
            severity,
            code: code.to_string(),
            message: message.to_string(),
        }
    }
}

/// A diagnostic with its repeat count and attached notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The diagnostic, as first seen.
    pub diagnostic: Diagnostic,
    /// How many times the output repeated it.
    pub count: usize,
    /// Notes that followed it, at most
    /// `MAX_NOTES_PER_DIAGNOSTIC`, without repeats.
    pub notes: Vec<Diagnostic>,
}

macro_rules! re {
    ($name:ident, $pattern:expr) => {
        static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($pattern).expect("valid pattern"));
    };
}

// A word every family below needs; lines without one are skipped unread.
re!(
    CANDIDATE,
    r"error|warning|note|message|ERROR|WARNING|CMake Error|CMake Warning|ninja:|undefined reference|multiple definition"
);
re!(MSBUILD_PROJECT, r"\s*\[[^\]]*\.(?:vcx|cs|fs|vb)proj\]\s*$");
re!(
    CMAKE_LOCATED,
    r"^CMake (Error|Warning)(?: \(dev\))? at (.+?):(\d+)\s*(?:\(([^)]*)\))?\s*:\s*$"
);
re!(
    MSVC,
    r"^\s*((?:[A-Za-z]:)?[^(]+?)\((\d+)(?:,(\d+)(?:-\d+)?)?\)\s*:\s*(fatal error|error|warning|note|message)(?:\s+([A-Za-z]+\d+))?\s*:\s*(.*)$"
);
re!(
    GCC,
    r"^\s*(.+?):(\d+)(?::(\d+))?:\s*(fatal error|error|warning|note):\s*(.*)$"
);
re!(GLSLANG, r"^\s*(ERROR|WARNING):\s*(.+?):(\d+):\s*(.*)$");
re!(
    CMAKE_BARE,
    r"^CMake (Error|Warning)(?: \(dev\))?\s*:\s*(.*)$"
);
re!(NINJA, r"^ninja:\s*(.*(?:error|stopped).*)$");
re!(
    MSVC_NO_LINE,
    r"^\s*((?:[A-Za-z]:)?[^:]*?)\s*:\s*(fatal error|error|warning)\s+([A-Za-z]+\d+)\s*:\s*(.*)$"
);
// GNU ld names the object (or source) and section, not a line number.
re!(
    LD_SYMBOL,
    r"^\s*(?:\S*?ld(?:\.lld|\.bfd|\.gold)?(?:\.exe)?:\s*)?(.+?):\([^)]*\):\s*((?:undefined reference|multiple definition) .*)$"
);
// A tool naming itself: `lld-link: error: ...`, `collect2: error: ...`.
re!(
    TOOL,
    r"^\s*([A-Za-z][A-Za-z0-9_.+-]*):\s*(fatal error|error|warning):\s*(.*)$"
);
re!(BARE, r"^\s*(fatal error|error|warning):\s*(.*)$");

fn severity(word: &str) -> Severity {
    match word.to_ascii_lowercase().as_str() {
        "fatal error" | "error" => Severity::Error,
        "warning" => Severity::Warning,
        _ => Severity::Note,
    }
}

/// Parses build output, in order, into merged entries.
pub fn parse(output: &str, build_dir: &Path) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut seen: HashMap<Diagnostic, usize> = HashMap::new();
    let mut last: Option<usize> = None;
    let mut pos = 0;
    let base = build_dir.display().to_string().replace('\\', "/");
    let base = base.trim_end_matches('/');
    // Most of a build log is progress lines; only a line holding one of the
    // words every family needs is looked at (one literal search over the
    // whole log, then the family patterns on that line alone).
    while let Some(hit) = CANDIDATE.find_at(output, pos) {
        let start = output[..hit.start()].rfind('\n').map_or(0, |i| i + 1);
        let end = output[hit.end()..]
            .find('\n')
            .map_or(output.len(), |i| hit.end() + i);
        pos = (end + 1).min(output.len());
        let raw = output[start..end].trim_end_matches('\r');
        let line = if raw.contains("proj]") {
            MSBUILD_PROJECT.replace(raw, "")
        } else {
            Cow::Borrowed(raw)
        };
        let parsed = if let Some(c) = CMAKE_LOCATED.captures(&line) {
            let (message, next) = cmake_block(output, pos);
            pos = next;
            Some(Diagnostic {
                file: c[2].to_string(),
                line: c[3].parse().ok(),
                column: None,
                severity: severity(&c[1]),
                code: c.get(4).map_or("CMake", |m| m.as_str()).to_string(),
                message,
            })
        } else {
            one_line(&line)
        };
        let Some(mut diagnostic) = parsed else {
            continue;
        };
        diagnostic.file = display_path(&diagnostic.file, base);
        if diagnostic.message.trim().len() != diagnostic.message.len() {
            diagnostic.message = diagnostic.message.trim().to_string();
        }
        if diagnostic.severity == Severity::Note {
            // Notes explain the diagnostic before them; orphans mean nothing.
            if let Some(index) = last {
                let notes = &mut entries[index].notes;
                if notes.len() < MAX_NOTES_PER_DIAGNOSTIC && !notes.contains(&diagnostic) {
                    notes.push(diagnostic);
                }
            }
            continue;
        }
        match seen.get(&diagnostic) {
            Some(&index) => {
                entries[index].count += 1;
                last = Some(index);
            }
            None => {
                seen.insert(diagnostic.clone(), entries.len());
                entries.push(Entry {
                    diagnostic,
                    count: 1,
                    notes: Vec::new(),
                });
                last = Some(entries.len() - 1);
            }
        }
    }
    entries
}

/// A located CMake message: the blank or indented lines after its header,
/// up to the first unindented one. Returns the message and where the next
/// unread line starts.
fn cmake_block(output: &str, mut pos: usize) -> (String, usize) {
    let mut message = Vec::new();
    while pos < output.len() {
        let end = output[pos..].find('\n').map_or(output.len(), |i| pos + i);
        let next = output[pos..end].trim_end_matches('\r');
        if !next.trim().is_empty() && !next.starts_with("  ") && !next.starts_with('\t') {
            break;
        }
        if !next.trim().is_empty() {
            message.push(next.trim());
        }
        pos = (end + 1).min(output.len());
    }
    (message.join(" "), pos)
}

fn one_line(line: &str) -> Option<Diagnostic> {
    let number = |m: Option<regex::Match>| m.and_then(|m| m.as_str().parse().ok());
    // Cheap checks of what each family's pattern cannot match without, so
    // a line runs only the patterns it could satisfy (same results, faster).
    let colon_severity =
        line.contains("error:") || line.contains("warning:") || line.contains("note:");
    let head = line.trim_start();
    if (line.contains("):") || line.contains(") :"))
        && let Some(c) = MSVC.captures(line)
    {
        return Some(Diagnostic {
            file: c[1].to_string(),
            line: number(c.get(2)),
            column: number(c.get(3)),
            severity: severity(&c[4]),
            code: c.get(5).map_or("", |m| m.as_str()).to_string(),
            message: c[6].to_string(),
        });
    }
    if colon_severity && let Some(c) = GCC.captures(line) {
        return Some(Diagnostic {
            file: c[1].to_string(),
            line: number(c.get(2)),
            column: number(c.get(3)),
            severity: severity(&c[4]),
            code: String::new(),
            message: c[5].to_string(),
        });
    }
    if (head.starts_with("ERROR") || head.starts_with("WARNING"))
        && let Some(c) = GLSLANG.captures(line)
    {
        return Some(Diagnostic {
            file: c[2].to_string(),
            line: number(c.get(3)),
            column: None,
            severity: severity(&c[1]),
            code: String::new(),
            message: c[4].to_string(),
        });
    }
    if line.starts_with("CMake ")
        && let Some(c) = CMAKE_BARE.captures(line)
    {
        return Some(Diagnostic::unlocated(severity(&c[1]), "CMake", &c[2]));
    }
    if line.starts_with("ninja:")
        && let Some(c) = NINJA.captures(line)
    {
        return Some(Diagnostic::unlocated(Severity::Error, "ninja", &c[1]));
    }
    if let Some(c) = MSVC_NO_LINE.captures(line) {
        return Some(Diagnostic {
            file: c[1].trim().to_string(),
            line: None,
            column: None,
            severity: severity(&c[2]),
            code: c[3].to_string(),
            message: c[4].to_string(),
        });
    }
    if (line.contains("undefined reference") || line.contains("multiple definition"))
        && let Some(c) = LD_SYMBOL.captures(line)
    {
        return Some(Diagnostic {
            file: c[1].to_string(),
            line: None,
            column: None,
            severity: Severity::Error,
            code: "ld".into(),
            message: c[2].to_string(),
        });
    }
    if colon_severity && let Some(c) = TOOL.captures(line) {
        return Some(Diagnostic::unlocated(severity(&c[2]), &c[1], &c[3]));
    }
    BARE.captures(line)
        .map(|c| Diagnostic::unlocated(severity(&c[1]), "", &c[2]))
}

/// Quotes dropped, `/` separators, and relative to the build directory when
/// the path is inside it.
fn display_path(raw: &str, base: &str) -> String {
    let unquoted = raw.trim().trim_matches(['"', '\'']);
    let slashed = unquoted.replace('\\', "/");
    let inside = slashed.len() > base.len()
        && slashed.as_bytes()[base.len()] == b'/'
        && slashed[..base.len()].eq_ignore_ascii_case(base);
    if !base.is_empty() && inside {
        slashed[base.len() + 1..].to_string()
    } else {
        slashed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(line: &str) -> Diagnostic {
        parse(line, Path::new("/b"))
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("not parsed: {line}"))
            .diagnostic
    }

    #[test]
    fn each_family_in_order() {
        let d = first(
            r"C:\src\app\main.cpp(12,5): error C2065: 'x': undeclared identifier [C:\src\app\app.vcxproj]",
        );
        assert_eq!(
            (
                d.file.as_str(),
                d.line,
                d.column,
                d.severity,
                d.code.as_str()
            ),
            (
                "C:/src/app/main.cpp",
                Some(12),
                Some(5),
                Severity::Error,
                "C2065"
            )
        );
        assert_eq!(d.message, "'x': undeclared identifier");
        // fxc gives a column range.
        let d = first("shader.hlsl(3,10-20): error X3004: undeclared identifier 'foo'");
        assert_eq!(
            (d.file.as_str(), d.line, d.column, d.code.as_str()),
            ("shader.hlsl", Some(3), Some(10), "X3004")
        );
        // clang-cl: MSVC's location format without an error code.
        let d = first("broken.c(2,10): error: use of undeclared identifier 'missing'");
        assert_eq!(
            (
                d.file.as_str(),
                d.line,
                d.column,
                d.severity,
                d.code.as_str()
            ),
            ("broken.c", Some(2), Some(10), Severity::Error, "")
        );
        let d = first("lld-link: error: undefined symbol: helper");
        assert_eq!((d.file.as_str(), d.code.as_str()), ("", "lld-link"));
        assert_eq!(d.message, "undefined symbol: helper");
        let d = first("main.c:(.text+0x9): undefined reference to `helper'");
        assert_eq!(
            (d.file.as_str(), d.code.as_str(), d.severity),
            ("main.c", "ld", Severity::Error)
        );
        let d = first(
            "/usr/bin/ld: x.o:(.data+0x0): multiple definition of `f'; y.o:(.data+0x0): first defined here",
        );
        assert_eq!((d.file.as_str(), d.code.as_str()), ("x.o", "ld"));
        let d = first("src/a.c:7:3: error: expected ';' before '}' token");
        assert_eq!(
            (d.file.as_str(), d.line, d.column, d.code.as_str()),
            ("src/a.c", Some(7), Some(3), "")
        );
        let d = first("ERROR: shaders/x.frag:14: 'foo' : undeclared identifier");
        assert_eq!(
            (d.file.as_str(), d.line, d.severity),
            ("shaders/x.frag", Some(14), Severity::Error)
        );
        let d = first("CMake Error: The source directory does not exist.");
        assert_eq!((d.code.as_str(), d.severity), ("CMake", Severity::Error));
        let d = first("ninja: build stopped: subcommand failed.");
        assert_eq!((d.code.as_str(), d.severity), ("ninja", Severity::Error));
        let d = first("LINK : fatal error LNK1104: cannot open file 'foo.lib'");
        assert_eq!(
            (d.file.as_str(), d.code.as_str(), d.severity),
            ("LINK", "LNK1104", Severity::Error)
        );
        let d = first("main.obj : error LNK2019: unresolved external symbol f");
        assert_eq!((d.file.as_str(), d.code.as_str()), ("main.obj", "LNK2019"));
        let d = first("error: linker `link.exe` not found");
        assert_eq!((d.file.as_str(), d.severity), ("", Severity::Error));
        let d = first("  warning: unused variable `x`");
        assert_eq!(d.severity, Severity::Warning);
    }

    #[test]
    fn cmake_located_blocks_take_the_indented_lines() {
        let log = "CMake Error at CMakeLists.txt:12 (find_package):\n  Could not find a package\n\n  named Vulkan.\nCall Stack (most recent call first):\n";
        let d = first(log);
        assert_eq!(
            (d.file.as_str(), d.line, d.code.as_str()),
            ("CMakeLists.txt", Some(12), "find_package")
        );
        assert_eq!(d.message, "Could not find a package named Vulkan.");
        let d = first("CMake Warning (dev) at x.cmake:3:\n  Policy CMP0000 is not set.\n");
        assert_eq!((d.code.as_str(), d.severity), ("CMake", Severity::Warning));
    }

    #[test]
    fn duplicates_merge_notes_attach_and_paths_shorten() {
        let log = "/b/src/a.cpp:3:1: error: boom\n/b/src/a.cpp:3:1: note: here\n/b/src/a.cpp:3:1: error: boom\n\
                   note: orphan? no, attaches to the last\n/other/x.h:1: warning: w\n";
        let entries = parse(log, Path::new("/b"));
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].count, 2);
        assert_eq!(entries[0].diagnostic.file, "src/a.cpp");
        assert_eq!(
            entries[0].notes.len(),
            1,
            "the same note is not attached twice"
        );
        assert_eq!(entries[1].diagnostic.file, "/other/x.h");
        let orphan = parse("x.c:1: note: alone\n", Path::new("/b"));
        assert!(orphan.is_empty(), "an orphan note is dropped");
    }
}
