//! Search and find speed against ripgrep and fd, on the same tree and query,
//! in the same run, measured as a user meets it: the release binary over
//! MCP on stdio, the time from sending `tools/call` to the whole answer.
//!
//! The tree is generated reproducibly from the crates in cargo's registry:
//! as many hard-linked copies as make at least `--files` files (300,000 by
//! default, the size of an engine checkout; links cost no disk). Each query
//! runs once each to warm the cache, then wamcp and the reference take
//! turns `RUNS` times, so both see the same machine load; the medians are
//! compared, and every wamcp answer must be complete and identical to the
//! first. Reference flags make rg and fd do the same work: no ignore files,
//! hidden files included, links not followed, the same directory names
//! pruned.

use crate::mcp_client::Server;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};
use wamcp_fs::{Bounds, Deadline};
use wamcp_policy::skip::SKIPPED_DIRECTORY_NAMES;

const RUNS: usize = 7;
const USAGE: &str = "usage: bench-search [--source DIR] [--files N]";

pub fn run(args: &[String]) -> Result<(), String> {
    let mut source = None;
    let mut wanted_files = 300_000usize;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().ok_or(USAGE)?;
        match flag.as_str() {
            "--source" => source = Some(PathBuf::from(value)),
            "--files" => wanted_files = value.parse().map_err(|_| "--files takes a number")?,
            _ => return Err(USAGE.into()),
        }
    }
    let source = match source {
        Some(dir) => dir,
        None => cargo_registry()?,
    };
    for tool in ["rg", "fdfind"] {
        if Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_err()
        {
            return Err(format!(
                "{tool} is not installed (apt-get install ripgrep fd-find)"
            ));
        }
    }
    let exe = crate::startup::release_binary()?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let per_copy = count_files(&source).max(1);
    let tree = replicate(
        &source,
        &scratch.path().join("tree"),
        wanted_files.div_ceil(per_copy),
    )?;
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
    let mut server = Server::start(
        &exe,
        &tree,
        &home,
        &[("WAMCP_SEARCH_BUDGET_SECONDS", "600")],
    )?;
    println!("source: {}", source.display());
    println!(
        "tree: {} files; {RUNS} runs each, alternating, median\n",
        count_files(&tree)
    );
    println!("| query | wamcp | reference | ratio |\n|---|---:|---:|---:|");

    let excludes: Vec<String> = SKIPPED_DIRECTORY_NAMES
        .iter()
        .flat_map(|n| ["-g".to_string(), format!("!{n}")])
        .collect();
    for (label, pattern, regex) in [
        (
            "search, literal, no match",
            "wamcp_no_such_needle_7c1f",
            false,
        ),
        ("search, literal, rare match", "fn grapheme_indices", false),
        ("search, regex, no match", r"\bfn\s+zz_no_such_\w+\(", true),
    ] {
        let mut rg = Command::new("rg");
        // wamcp reads the first MiB of a larger file; rg can only skip such
        // files, which is less work, so the comparison leans towards rg.
        rg.args([
            "-uu",
            "--no-follow",
            "-n",
            "--no-heading",
            "--glob-case-insensitive",
            "--max-filesize",
            "1M",
        ])
        .args(&excludes);
        if !regex {
            rg.arg("-F");
        }
        rg.arg("--").arg(pattern).arg(&tree);
        let args = json!({"pattern": pattern, "path": ".", "regex": regex, "max_results": 100});
        let (ours, reference) = alternate(&mut || server.call("search_files", &args), &mut || {
            run_quiet(&mut rg)
        })?;
        row(label, ours, "rg", reference);
    }

    let fd_excludes: Vec<String> = SKIPPED_DIRECTORY_NAMES
        .iter()
        .flat_map(|n| ["-E".to_string(), n.to_string()])
        .collect();
    for (label, glob) in [("find *.rs", "*.rs"), ("find *.toml", "*.toml")] {
        let mut fd = Command::new("fdfind");
        fd.args(["-u", "--type", "f", "-g", glob])
            .args(&fd_excludes)
            .arg(&tree);
        let args = json!({"file_glob": glob, "path": ".", "max_results": 500});
        let (ours, reference) = alternate(&mut || server.call("find_files", &args), &mut || {
            run_quiet(&mut fd)
        })?;
        row(label, ours, "fd", reference);
    }
    server.stop();
    Ok(())
}

fn row(label: &str, ours: Duration, reference_name: &str, reference: Duration) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "| {label} | {:.1} ms | {reference_name} {:.1} ms | {:.2}x |",
        ms(ours),
        ms(reference),
        ours.as_secs_f64() / reference.as_secs_f64()
    );
}

/// A budget far beyond any run here, so every answer is complete.
fn unhurried() -> Bounds<'static> {
    static BUDGET: std::sync::LazyLock<Deadline> =
        std::sync::LazyLock::new(|| Deadline::starting_now(Duration::from_secs(3600)));
    static FILES: AtomicUsize = AtomicUsize::new(0);
    static SECRETS: std::sync::LazyLock<wamcp_fs::Secrets> =
        std::sync::LazyLock::new(wamcp_fs::Secrets::default);
    Bounds {
        budget: &*BUDGET,
        progress: &FILES,
        threads: None,
        secrets: &SECRETS,
    }
}

/// The median times of wamcp's answer and of the reference, taking turns
/// after one warm-up each. wamcp's answers must all be complete and equal.
fn alternate(
    ours: &mut dyn FnMut() -> Result<String, String>,
    reference: &mut dyn FnMut() -> Result<(), String>,
) -> Result<(Duration, Duration), String> {
    let first = ours()?;
    if first.contains("INCOMPLETE: the time budget") {
        return Err(format!("an answer ran out of time: {first}"));
    }
    reference()?;
    let (mut our_times, mut their_times) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let start = Instant::now();
        let again = ours()?;
        our_times.push(start.elapsed());
        if again != first {
            return Err("two runs of one query answered differently".into());
        }
        let start = Instant::now();
        reference()?;
        their_times.push(start.elapsed());
    }
    our_times.sort();
    their_times.sort();
    Ok((our_times[RUNS / 2], their_times[RUNS / 2]))
}

fn run_quiet(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    // rg exits 1 for "no match"; only 2 and above are failures.
    match status.code() {
        Some(0 | 1) => Ok(()),
        other => Err(format!("{cmd:?} failed with {other:?}")),
    }
}

fn cargo_registry() -> Result<PathBuf, String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|h| h.join(".cargo")))
        .ok_or("cannot find CARGO_HOME")?;
    let src = home.join("registry").join("src");
    src.is_dir()
        .then_some(src.clone())
        .ok_or_else(|| format!("{} does not exist; pass --source DIR", src.display()))
}

/// `copies` hard-linked copies of `source` under `dest`.
fn replicate(source: &Path, dest: &Path, copies: usize) -> Result<PathBuf, String> {
    for i in 0..copies {
        let target = dest.join(format!("copy{i}"));
        std::fs::create_dir_all(dest).map_err(|e| e.to_string())?;
        let status = Command::new("cp")
            .arg("-al")
            .arg(source)
            .arg(&target)
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("cp -al {} failed", source.display()));
        }
    }
    Ok(dest.to_path_buf())
}

fn count_files(root: &Path) -> usize {
    wamcp_fs::find_files("*", ".", root, 1, &unhurried())
        .ok()
        .and_then(|out| {
            let line = out.lines().find(|l| l.starts_with("Showing the first"))?;
            line.split_whitespace().nth(5)?.parse().ok()
        })
        .unwrap_or(0)
}
