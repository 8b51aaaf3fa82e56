//! Developer tasks, run as `cargo run -p xtask -- <task>`.
//!
//! - `docs --write | --check`: the guide's generated tables (the tool
//!   reference, the settings, the token costs) written or checked, with
//!   every tool, setting and error type named and every link resolved.
//! - `tokens [--per-tool]`: the size of `tools/list` per tool group, in
//!   characters and in o200k / cl100k tokens (counted offline; the
//!   vocabularies are embedded in tiktoken-rs). Tool definitions are re-sent
//!   on every turn, so this is the permanent context cost of each group.
//! - `bench-startup [--runs N]`: time from spawning the release binary to its
//!   `initialize` answer, and its peak memory.
//! - `startup-order`: writes `crates/wamcp/startup.ld`, which places the
//!   functions a start runs together in the release binary (needs valgrind).
//! - `bench-search [--source DIR]`: `search_files` and `find_files` against
//!   ripgrep and fd on the same generated tree (release build recommended:
//!   `cargo run --release -p xtask -- bench-search`).
//! - `bench-confinement [--runs N]`: what OS confinement adds to running
//!   one command (Linux).
//! - `bench-undo [--files N [--runs R]]`: what the undo journal adds to a
//!   step on a project of N files.
//! - `bench-extract`: `fetch_web_page`'s extraction of a 2 MiB page with
//!   and without a 2,000-rule style sheet.
//! - `bench-answers [--source DIR]`: the tokens of eleven common answers
//!   against the best peer's answer to the same request.
//! - `bench-diagnostics`: the build-output parser in MB/s on a 64 MiB log of
//!   real gcc/clang output, against `grep -cE` on the same file.

mod bench_answers;
mod bench_confinement;
mod bench_diagnostics;
mod bench_extract;
mod bench_search;
mod bench_undo;
mod docs;
mod mcp_client;
mod snapshot;
mod startup;
mod startup_order;
mod tokens;
mod tool_reference;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("tokens") => tokens::run(&args[1..]),
        Some("docs") => docs::run(&args[1..]),
        Some("bench-startup") => startup::run(&args[1..]),
        Some("startup-order") => startup_order::run(&args[1..]),
        Some("bench-search") => bench_search::run(&args[1..]),
        Some("bench-diagnostics") => bench_diagnostics::run(&args[1..]),
        Some("bench-extract") => bench_extract::run(&args[1..]),
        Some("bench-confinement") => bench_confinement::run_bench(&args[1..]),
        Some("bench-undo") => bench_undo::run(&args[1..]),
        Some("bench-answers") => bench_answers::run(&args[1..]),
        _ => Err("usage: cargo run -p xtask -- docs --write | --check | tokens [--per-tool] | bench-startup [--runs N] \
                  | startup-order | bench-search [--source DIR] | bench-diagnostics | bench-extract | bench-confinement [--runs N] | bench-undo [--files N [--runs R]] | bench-answers [--source DIR]"
            .into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Cargo's target directory: `CARGO_TARGET_DIR`, or `target` beside the
/// workspace.
fn target_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

/// The workspace being worked on, as `cargo run` says when it starts the
/// task. The path compiled in is only the fallback: a build cache shared by
/// two checkouts keeps a binary built in the other one.
pub fn workspace() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
        .join("..")
}
