//! `bench-answers`: what the common answers cost the model, in cl100k
//! tokens of the text a host forwards (Claude Code and Codex forward a
//! tool result's text content), against the best peer's answer to the same
//! request on the same tree.
//!
//! wamcp runs for real: the debug binary over stdio, on a copy of a real
//! crate (tokio from cargo's registry unless `--source` names another).
//! The peers are not installed here, so their answers are rendered from
//! the same facts in the formats their sources fix ([`peers`], each
//! format cited there); a search peer gets exactly the matches wamcp
//! listed, so only the format differs.

mod peers;

use crate::mcp_client::Server;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use tiktoken_rs::CoreBPE;

const USAGE: &str = "usage: bench-answers [--source DIR]";

/// One request, and what it is held to against the best peer.
struct Request {
    label: &'static str,
    tool: &'static str,
    args: Value,
    /// At most this many times the best peer's tokens.
    target: f64,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let source = match args {
        [] => tokio_in_registry()?,
        [flag, dir] if flag == "--source" => PathBuf::from(dir),
        _ => return Err(USAGE.into()),
    };
    build_debug()?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    // A fixed place: peers repeat the absolute path on every line, and a
    // random folder name would tokenize differently from run to run.
    let fixed = std::env::temp_dir().join("wamcp-bench-answers");
    let _ = std::fs::remove_dir_all(&fixed);
    let project = fixed.join("project");
    copy_tree(&source, &project)?;
    std::fs::write(project.join("fake_build.py"), peers::FAKE_BUILD).map_err(|e| e.to_string())?;
    let project = project.canonicalize().map_err(|e| e.to_string())?;
    let read_path = file_of_about(&project.join("src"), 400)?;
    let read_rel = relative(&read_path, &project);
    let requests = requests(&read_rel);
    let cl100k = tiktoken_rs::cl100k_base().map_err(|e| e.to_string())?;
    let exe = crate::target_dir()
        .join("debug")
        .join(format!("wamcp{}", std::env::consts::EXE_SUFFIX));
    let mut server = Server::start(&exe, &project, scratch.path(), &[])?;
    println!(
        "tree: {} (a copy); read file: {read_rel}\n",
        source.display()
    );
    println!(
        "cl100k tokens (Claude's own tokenizer differs; the ratios are what matters)\n\n\
         | request | wamcp | peer | peer tokens | ratio | target |\n|---|---:|---|---:|---:|---:|"
    );
    let mut over = Vec::new();
    for request in &requests {
        let text = server.call(request.tool, &request.args)?;
        let facts = peers::Facts {
            project: &project,
            request_args: &request.args,
            wamcp_answer: &text,
        };
        let (peer, peer_text) = peers::best(request.tool, request.label, &facts)?;
        let ours = tokens(&cl100k, &text);
        let theirs = tokens(&cl100k, &peer_text).max(1);
        let ratio = ours as f64 / theirs as f64;
        println!(
            "| {} | {ours} | {peer} | {theirs} | {ratio:.2}x | {:.1}x |",
            request.label, request.target
        );
        if ratio > request.target {
            over.push(request.label);
        }
    }
    server.stop();
    let _ = std::fs::remove_dir_all(&fixed);
    if !over.is_empty() {
        println!("\nover target: {}", over.join(", "));
    }
    Ok(())
}

fn requests(read_rel: &str) -> Vec<Request> {
    let request = |label, tool, args, target| Request {
        label,
        tool,
        args,
        target,
    };
    vec![
        request(
            "read a ~400-line file",
            "read_file",
            json!({"path": read_rel}),
            1.0,
        ),
        request(
            "range read (50 lines)",
            "read_file",
            json!({"path": read_rel, "start_line": 100, "max_lines": 50}),
            1.0,
        ),
        request(
            "list a folder",
            "list_directory",
            json!({"path": "src"}),
            0.8,
        ),
        request(
            "find *.rs in src/sync",
            "find_files",
            json!({"file_glob": "*.rs", "path": "src/sync"}),
            0.8,
        ),
        request(
            "search, few matches",
            "search_files",
            json!({"pattern": "fn block_on", "path": "src"}),
            0.8,
        ),
        request(
            "search, 100 matches",
            "search_files",
            json!({"pattern": "pub fn", "path": "src"}),
            0.8,
        ),
        request(
            "search, no match",
            "search_files",
            json!({"pattern": "wamcp_no_such_needle", "path": "src"}),
            0.8,
        ),
        request(
            "build, 20 errors",
            "build_project",
            json!({"command": "python3 fake_build.py"}),
            1.0,
        ),
        request(
            "command, 20 errors",
            "run_powershell",
            json!({"command": "python3 fake_build.py"}),
            1.0,
        ),
        request(
            "refused write",
            "write_file",
            json!({"path": "../outside.txt", "content": "x"}),
            2.0,
        ),
        request(
            "missing file",
            "read_file",
            json!({"path": "src/no_such_file.rs"}),
            2.0,
        ),
    ]
}

fn tokens(bpe: &CoreBPE, text: &str) -> usize {
    bpe.encode_with_special_tokens(text).len()
}

fn build_debug() -> Result<(), String> {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--locked", "-p", "wamcp"])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| "the build failed".into())
}

/// The newest tokio in cargo's registry: a real crate every wamcp build
/// has downloaded.
fn tokio_in_registry() -> Result<PathBuf, String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("registry").join("src"))
        .map_err(|e| e.to_string())?
        .flatten()
        .flat_map(|index| {
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|entry| entry.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("tokio-1."))
        })
        .collect();
    found.sort();
    found
        .pop()
        .ok_or_else(|| format!("no tokio in the registry; {USAGE}"))
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The first `.rs` file in path order whose length is within a tenth of
/// `lines`: the same file for the same crate version on every run.
fn file_of_about(dir: &Path, lines: usize) -> Result<PathBuf, String> {
    let mut files = Vec::new();
    collect_rs(dir, &mut files);
    files.sort();
    files
        .into_iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .is_ok_and(|t| t.lines().count().abs_diff(lines) <= lines / 10)
        })
        .ok_or_else(|| format!("no file of about {lines} lines under {}", dir.display()))
}

fn collect_rs(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

fn relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}
