//! The peers' answers, rendered in the formats their sources fix, from the
//! same facts wamcp answered from.
//!
//! - `modelcontextprotocol/servers`, `src/filesystem` (the official
//!   filesystem server): `read_text_file` returns the file as it is;
//!   `list_directory` one `[DIR] name` / `[FILE] name` line per entry;
//!   `search_files` (by name) the absolute paths, one per line; a failure is
//!   the text `Error: <message>`, where a path outside the allowed
//!   directories is `Access denied - path outside allowed directories: <abs>
//!   not in <dirs>` (`lib.ts`, `validatePath`) and a missing file Node's
//!   `ENOENT: no such file or directory, open '<abs>'`.
//! - `rust-mcp-stack/rust-mcp-filesystem`: `read_file_lines` returns the
//!   lines asked for as they are; `search_files_content` each file's
//!   absolute path, then `  line:column: text` per match, then a blank line
//!   (`src/tools/search_files_content.rs`), and `No matches found in the
//!   files content.` when there are none.
//! - A build through any peer's shell tool: the raw log.

use serde_json::Value;
use std::path::Path;

/// A stand-in build: twenty gcc errors with their source lines and carets,
/// as a C project with one renamed function prints them.
pub const FAKE_BUILD: &str = r#"import sys
out = ["[1/4] Building C object CMakeFiles/app.dir/src/net.c.o", "FAILED: CMakeFiles/app.dir/src/net.c.o",
       "/usr/bin/cc -Iinclude -Wall -O2 -o CMakeFiles/app.dir/src/net.c.o -c src/net.c"]
for i in range(20):
    line = 40 + i * 7
    out += [f"src/net.c:{line}:9: error: implicit declaration of function 'socket_open{i}'; did you mean 'socket_open'? [-Wimplicit-function-declaration]",
            f"   {line} |     fd = socket_open{i}(host, port);",
            "      |         ^~~~~~~~~~~~",
            "      |         socket_open"]
out += ["ninja: build stopped: subcommand failed."]
print("\n".join(out), file=sys.stderr)
sys.exit(1)
"#;

/// What a peer's answer is made from.
pub struct Facts<'a> {
    /// The project, resolved.
    pub project: &'a Path,
    /// The request's arguments.
    pub request_args: &'a Value,
    /// wamcp's answer (a search peer lists the same matches).
    pub wamcp_answer: &'a str,
}

/// The peer's name and answer to the same request: for each request the
/// cheapest of the peers that offer it.
pub fn best(tool: &str, label: &str, facts: &Facts) -> Result<(&'static str, String), String> {
    let arg = |name: &str| facts.request_args[name].as_str().unwrap_or_default();
    let abs = |relative: &str| facts.project.join(relative).display().to_string();
    Ok(match (tool, label) {
        ("read_file", "missing file") => (
            "official filesystem",
            format!(
                "Error: ENOENT: no such file or directory, open '{}'",
                abs(arg("path"))
            ),
        ),
        ("read_file", _) => read(facts, arg("path"))?,
        ("list_directory", _) => (
            "official filesystem",
            listing(&facts.project.join(arg("path")))?,
        ),
        ("find_files", _) => (
            "official filesystem",
            found(&facts.project.join(arg("path"))),
        ),
        ("search_files", _) => ("rust-mcp-filesystem", matches(facts)),
        ("write_file", _) => (
            "official filesystem",
            format!(
                "Error: Access denied - path outside allowed directories: {} not in {}",
                facts
                    .project
                    .parent()
                    .unwrap_or(facts.project)
                    .join("outside.txt")
                    .display(),
                facts.project.display()
            ),
        ),
        ("build_project" | "run_powershell", _) => ("raw log (any shell tool)", raw_build_log()?),
        _ => return Err(format!("no peer answer for {tool}")),
    })
}

fn read(facts: &Facts, relative: &str) -> Result<(&'static str, String), String> {
    let text = std::fs::read_to_string(facts.project.join(relative)).map_err(|e| e.to_string())?;
    let Some(start) = facts.request_args["start_line"].as_u64() else {
        return Ok(("official filesystem", text));
    };
    let count = facts.request_args["max_lines"].as_u64().unwrap_or(2000) as usize;
    let lines: Vec<&str> = text.lines().skip(start as usize - 1).take(count).collect();
    Ok(("rust-mcp-filesystem", lines.join("\n")))
}

fn listing(dir: &Path) -> Result<String, String> {
    let mut entries: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| {
            let tag = if e.path().is_dir() { "[DIR]" } else { "[FILE]" };
            format!("{tag} {}", e.file_name().to_string_lossy())
        })
        .collect();
    entries.sort();
    Ok(entries.join("\n"))
}

fn found(dir: &Path) -> String {
    let mut files = Vec::new();
    super::collect_rs(dir, &mut files);
    files.sort();
    let lines: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    lines.join("\n")
}

/// wamcp's matches (file headers, then `line: text`) in
/// rust-mcp-filesystem's format.
fn matches(facts: &Facts) -> String {
    let pattern = facts.request_args["pattern"].as_str().unwrap_or_default();
    let base = facts
        .project
        .join(facts.request_args["path"].as_str().unwrap_or("."));
    let mut out = String::new();
    let mut any = false;
    let lines: Vec<&str> = facts.wamcp_answer.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if let Some((number, text)) = match_line(line) {
            let column = text.find(pattern).map_or(1, |c| c + 1);
            out.push_str(&format!("  {number}:{column}: {text}\n"));
            any = true;
        } else if lines
            .get(i + 1)
            .is_some_and(|next| match_line(next).is_some())
        {
            if any {
                out.push('\n');
            }
            out.push_str(&format!("{}\n", base.join(line).display()));
        }
    }
    if any {
        out.push('\n');
        out
    } else {
        "No matches found in the files content.".to_string()
    }
}

/// A match line of wamcp's answer, `<number>: text`, as its two parts.
fn match_line(line: &str) -> Option<(&str, &str)> {
    line.split_once(": ")
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn raw_build_log() -> Result<String, String> {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(FAKE_BUILD)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}
