//! The capability catalog: named, reviewed argv a model may run by id.
//!
//! The catalog is data: a built-in file with the standard capabilities and an
//! optional user file (`WAMCP_CAPABILITIES_FILE`) that adds or overrides
//! entries, or replaces the built-in set. A user file with any mistake is
//! refused whole: half of a team's catalog, silently, would route tasks to
//! the built-in entries the team meant to replace.

use super::safety::Safety;
use serde::Deserialize;

/// The catalog shipped in the binary.
pub const BUILTIN: &str = include_str!("capabilities.json");

/// A user catalog larger than this is not read: a bounded parse keeps a
/// hostile or corrupt file from costing memory.
pub const MAX_FILE_BYTES: usize = 2 * 1024 * 1024;

const MAX_ID_CHARS: usize = 128;
const MAX_DESCRIPTION_CHARS: usize = 500;
const MAX_TAGS: usize = 16;
const MAX_TAG_CHARS: usize = 40;
const MAX_ALTERNATIVES: usize = 8;
const MAX_ARGV_ITEMS: usize = 64;
const MAX_ARG_CHARS: usize = 4096;
const MAX_CAPABILITIES: usize = 500;

/// One capability, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capability {
    /// The name a model runs it by (`lint-python`);
    /// routing reads its words too.
    pub id: String,
    /// What it does, in one sentence; a routing hint, never a route.
    pub description: String,
    /// Its safety class, which decides whether a run needs approval.
    pub safety: Safety,
    /// Words that name it for routing: languages, tools, topics.
    pub tags: Vec<String>,
    /// Alternatives in order of preference; the first whose program is
    /// found runs.
    pub argv: Vec<Vec<String>>,
    /// Whether the confined run may use the network.
    pub network: bool,
    /// Whether the entry came from the user's file.
    pub from_user: bool,
}

impl Capability {
    /// The program of each alternative, in order.
    pub fn programs(&self) -> impl Iterator<Item = &str> {
        self.argv.iter().map(|a| a[0].as_str())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    replace_builtin: bool,
    capabilities: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    description: String,
    safety: Safety,
    #[serde(default)]
    tags: Vec<String>,
    argv: Vec<Vec<String>>,
    #[serde(default)]
    network: bool,
}

/// A parsed catalog file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The file replaces the built-in catalog instead of adding to it.
    pub replace_builtin: bool,
    /// The file's entries, validated.
    pub capabilities: Vec<Capability>,
}

/// Reads a catalog file; every problem is named (entry id or index, field).
pub fn parse(text: &str, from_user: bool) -> Result<Parsed, Vec<String>> {
    if text.len() > MAX_FILE_BYTES {
        return Err(vec![format!(
            "the file is {} bytes; catalogs are limited to {MAX_FILE_BYTES}",
            text.len()
        )]);
    }
    let file: File = serde_json::from_str(text).map_err(|e| vec![e.to_string()])?;
    let mut errors = Vec::new();
    if file.capabilities.len() > MAX_CAPABILITIES {
        errors.push(format!(
            "{} capabilities; at most {MAX_CAPABILITIES}",
            file.capabilities.len()
        ));
    }
    let mut capabilities: Vec<Capability> = Vec::new();
    for (index, entry) in file.capabilities.into_iter().enumerate() {
        let name = if entry.id.is_empty() {
            format!("capability {}", index + 1)
        } else {
            format!("'{}'", entry.id)
        };
        let problems = problems(&entry);
        if capabilities.iter().any(|c| c.id == entry.id) {
            errors.push(format!("{name}: the id appears twice"));
        }
        if problems.is_empty() {
            capabilities.push(Capability {
                id: entry.id,
                description: entry.description,
                safety: entry.safety,
                tags: entry.tags,
                argv: entry.argv,
                network: entry.network,
                from_user,
            });
        } else {
            errors.extend(problems.into_iter().map(|p| format!("{name}: {p}")));
        }
    }
    if errors.is_empty() {
        Ok(Parsed {
            replace_builtin: file.replace_builtin,
            capabilities,
        })
    } else {
        Err(errors)
    }
}

fn problems(entry: &Entry) -> Vec<String> {
    let mut found = Vec::new();
    if !is_word(&entry.id, MAX_ID_CHARS) {
        found.push(format!(
            "the id must be 1-{MAX_ID_CHARS} lower-case letters, digits, '-', '_' or '.', starting with a letter or digit"
        ));
    }
    let description = entry.description.trim();
    if description.is_empty() || description.chars().count() > MAX_DESCRIPTION_CHARS {
        found.push(format!(
            "the description must be 1-{MAX_DESCRIPTION_CHARS} characters"
        ));
    }
    if entry.tags.len() > MAX_TAGS {
        found.push(format!("{} tags; at most {MAX_TAGS}", entry.tags.len()));
    }
    for tag in &entry.tags {
        if !is_word(tag, MAX_TAG_CHARS) {
            found.push(format!(
                "tag '{tag}' must be 1-{MAX_TAG_CHARS} lower-case letters, digits, '-', '_', '.' or '+'"
            ));
        }
    }
    if entry.argv.is_empty() || entry.argv.len() > MAX_ALTERNATIVES {
        found.push(format!("argv must list 1-{MAX_ALTERNATIVES} alternatives"));
    }
    for (n, alternative) in entry.argv.iter().enumerate() {
        if let Some(problem) = argv_problem(alternative) {
            found.push(format!("argv alternative {}: {problem}", n + 1));
        }
    }
    found
}

/// An id or tag: lower-case ASCII words joined by `-`, `_`, `.` or `+`.
fn is_word(text: &str, max: usize) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.')
        && text.len() <= max
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.+".contains(c))
}

fn argv_problem(argv: &[String]) -> Option<String> {
    let Some(program) = argv.first() else {
        return Some("it is empty".into());
    };
    if argv.len() > MAX_ARGV_ITEMS {
        return Some(format!("{} items; at most {MAX_ARGV_ITEMS}", argv.len()));
    }
    if let Some(arg) = argv
        .iter()
        .find(|a| a.contains('\0') || a.chars().count() > MAX_ARG_CHARS)
    {
        return Some(format!(
            "an item holds a NUL character or is longer than {MAX_ARG_CHARS} characters ({} characters)",
            arg.chars().count()
        ));
    }
    if program.trim().is_empty() {
        return Some("the program is empty".into());
    }
    // A relative path would be looked up in the working directory, which
    // the agent writes: `./lint` could be anything by the time it runs.
    if program.contains(['/', '\\']) && !is_absolute_anywhere(program) {
        return Some(format!(
            "the program '{program}' is a relative path; give a bare name found on PATH or an absolute path"
        ));
    }
    None
}

/// Absolute on any platform: `/usr/bin/x`, `C:\x`, `C:/x` (not `C:x`, which
/// is relative to the drive's current directory, nor `\x`, relative to the
/// current drive).
fn is_absolute_anywhere(path: &str) -> bool {
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && (bytes[2] == b'\\' || bytes[2] == b'/');
    let unix = path.starts_with('/') && !cfg!(windows);
    drive || unix || path.starts_with(r"\\")
}

/// The catalog in force: the built-in entries, then the user's (an entry
/// with a built-in id replaces it in place), or only the user's when their
/// file says `replace_builtin`.
pub fn merge(builtin: Vec<Capability>, user: Option<Parsed>) -> Vec<Capability> {
    let Some(user) = user else {
        return builtin;
    };
    let mut merged = if user.replace_builtin {
        Vec::new()
    } else {
        builtin
    };
    for capability in user.capabilities {
        match merged.iter_mut().find(|c| c.id == capability.id) {
            Some(slot) => *slot = capability,
            None => merged.push(capability),
        }
    }
    merged
}

/// The built-in catalog, parsed (its validity is a test).
pub fn builtin() -> Vec<Capability> {
    parse(BUILTIN, false)
        .map(|p| p.capabilities)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Result<Parsed, Vec<String>> {
        parse(text, true)
    }

    #[test]
    fn the_builtin_catalog_has_seven_capabilities() {
        let parsed = parse(BUILTIN, false).expect("built-in catalog is valid");
        let ids: Vec<&str> = parsed.capabilities.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "inspect-git",
                "lint-python",
                "lint-javascript",
                "test-python",
                "test-dotnet",
                "build-dotnet",
                "create-pr"
            ]
        );
        let pr = &parsed.capabilities[6];
        assert_eq!(pr.safety, Safety::ApprovalRequired);
        assert_eq!(pr.argv, [["gh", "pr", "create", "--fill"]]);
        assert_eq!(
            parsed.capabilities[1].programs().collect::<Vec<_>>(),
            ["ruff", "pylint"]
        );
    }

    #[test]
    fn a_user_file_adds_overrides_or_replaces() {
        let add = user(
            r#"{"capabilities": [
                {"id": "lint-python", "description": "Ruff only.", "safety": "read-only", "argv": [["ruff", "check"]]},
                {"id": "fmt-rust", "description": "Format.", "safety": "reversible", "tags": ["rust"], "argv": [["cargo", "fmt"]]}
            ]}"#,
        )
        .unwrap();
        let merged = merge(builtin(), Some(add.clone()));
        assert_eq!(merged.len(), 8);
        assert_eq!(merged[1].description, "Ruff only.");
        assert!(merged[1].from_user);
        assert_eq!(merged[7].id, "fmt-rust");
        let replaced = merge(
            builtin(),
            Some(Parsed {
                replace_builtin: true,
                ..add
            }),
        );
        let ids: Vec<&str> = replaced.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["lint-python", "fmt-rust"]);
    }

    #[test]
    fn a_file_with_any_mistake_is_refused_whole_with_each_problem_named() {
        let cases: &[(&str, &str)] = &[
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "safe", "argv": [["x"]]}]}"#,
                "unknown variant `safe`",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "argv": [["x"]], "shell": true}]}"#,
                "unknown field `shell`",
            ),
            (
                r#"{"capabilities": [{"id": "A b", "description": "d", "safety": "read-only", "argv": [["x"]]}]}"#,
                "'A b': the id must be",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": " ", "safety": "read-only", "argv": [["x"]]}]}"#,
                "'a': the description must be",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "argv": []}]}"#,
                "argv must list",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "argv": [[]]}]}"#,
                "argv alternative 1: it is empty",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "argv": [["./lint.sh"]]}]}"#,
                "relative path",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "argv": [["tools\\lint.exe"]]}]}"#,
                "relative path",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "argv": [["C:lint.exe"]]}]}"#,
                "",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "argv": [["x", "a\u0000b"]]}]}"#,
                "NUL",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "tags": ["Python"], "argv": [["x"]]}]}"#,
                "tag 'Python'",
            ),
            (
                r#"{"capabilities": [{"id": "a", "description": "d", "safety": "read-only", "argv": [["x"]]}, {"id": "a", "description": "d", "safety": "read-only", "argv": [["y"]]}]}"#,
                "appears twice",
            ),
            (
                r#"{"replace_builtin": true}"#,
                "missing field `capabilities`",
            ),
            ("[]", "invalid length"),
        ];
        for (text, want) in cases {
            match user(text) {
                Err(errors) => assert!(
                    errors.iter().any(|e| e.contains(want)),
                    "{text}: {errors:?}"
                ),
                // `C:lint.exe` has no separator: a bare (odd) name, looked
                // up on PATH like any other.
                Ok(_) if want.is_empty() => {}
                Ok(p) => panic!("{text} accepted: {p:?}"),
            }
        }
    }

    #[test]
    fn absolute_programs_and_bare_names_are_accepted() {
        for program in [
            "ruff",
            "C:\\Tools\\ruff.exe",
            "C:/Tools/ruff.exe",
            "\\\\server\\share\\x.exe",
            "npm.cmd",
        ] {
            assert_eq!(argv_problem(&[program.to_string()]), None, "{program}");
        }
        assert_eq!(
            argv_problem(&["/usr/bin/ruff".to_string()]).is_none(),
            !cfg!(windows)
        );
    }
}
