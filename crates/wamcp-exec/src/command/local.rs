//! The project's own programs, for commands that run confined without
//! network: its `node_modules/.bin` and virtual environment first on the
//! search, and `npx tsc` (`npm exec`, `pnpm exec`, `yarn dlx`...) of a
//! package the project already installed run as that package's program —
//! no download, so nothing from the network runs.

use super::judge::inside_a_root;
use std::path::{Path, PathBuf};
use wamcp_policy::command::rules::program_name;
use wamcp_policy::command::tokenize::Arg;

/// The project's program folders for a command run in `place`: every
/// `node_modules/.bin` from `place` up to its root, then the root's
/// `.venv` and `venv` (`bin`, or `Scripts` on Windows). Only folders that
/// exist, inside a root.
pub fn program_folders(place: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let Some(root) = roots
        .iter()
        .find(|r| wamcp_platform::paths::inside(place, r))
    else {
        return Vec::new();
    };
    let scripts = if cfg!(windows) { "Scripts" } else { "bin" };
    let mut found: Vec<PathBuf> = place
        .ancestors()
        .take_while(|dir| wamcp_platform::paths::inside(dir, root))
        .map(|dir| dir.join("node_modules").join(".bin"))
        .collect();
    found.extend([".venv", "venv"].map(|env| root.join(env).join(scripts)));
    found
        .into_iter()
        .filter_map(|dir| dunce::canonicalize(dir).ok())
        .filter(|dir| dir.is_dir() && inside_a_root(dir, roots))
        .collect()
}

/// `npx PKG ARGS` and its relatives, when `PKG` is installed in the
/// project: the argv that runs its program directly. `None` when the
/// command is no such runner, names a version or a package to add
/// (`-p`), or the package is not installed (then it is judged as written:
/// fetching it is code from the network).
pub fn installed_package(argv: &[Arg], place: &Path, roots: &[PathBuf]) -> Option<Vec<Arg>> {
    let rest = runner_args(argv)?;
    let (package, args) = rest.split_first()?;
    let name = package.text.as_str();
    let version_given = name.rfind('@').is_some_and(|at| at > 0);
    if name.starts_with('-') || version_given {
        return None;
    }
    let bin = program_of(name, place, roots)?;
    let args = args.strip_prefix(&[plain("--")][..]).unwrap_or(args);
    let mut out = vec![plain(&bin.display().to_string())];
    out.extend_from_slice(args);
    Some(out)
}

fn plain(text: &str) -> Arg {
    Arg {
        text: text.to_string(),
        quoted: false,
    }
}

/// The words after a package runner and its own flags, or `None` when
/// `argv` runs no package.
fn runner_args(argv: &[Arg]) -> Option<&[Arg]> {
    let program = program_name(&argv.first()?.text);
    let second = argv.get(1).map(|a| a.text.as_str());
    let skip = match (program.as_str(), second) {
        ("npx" | "bunx", _) => 1,
        ("npm", Some("exec" | "x"))
        | ("pnpm", Some("exec" | "dlx"))
        | ("yarn", Some("exec" | "dlx")) => 2,
        _ => return None,
    };
    let flags = ["--no-install", "--no", "-y", "--yes", "-q", "--quiet", "--"];
    let start = skip
        + argv[skip..]
            .iter()
            .take_while(|a| flags.contains(&a.text.as_str()))
            .count();
    Some(&argv[start..])
}

/// The installed program of `package`, looked up as npx does: from
/// `place` up to the project root, `node_modules/.bin/NAME` for a plain
/// name, or the `bin` a scoped package's `package.json` declares.
fn program_of(package: &str, place: &Path, roots: &[PathBuf]) -> Option<PathBuf> {
    let bin_name = match package.split_once('/') {
        Some((scope, name)) if scope.starts_with('@') => declared_bin(package, name, place, roots)?,
        Some(_) => return None,
        None => package.to_string(),
    };
    let names = if cfg!(windows) {
        vec![format!("{bin_name}.cmd"), format!("{bin_name}.exe")]
    } else {
        vec![bin_name]
    };
    program_folders(place, roots)
        .into_iter()
        .filter(|dir| dir.ends_with(Path::new("node_modules").join(".bin")))
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|file| file.is_file())
}

/// The program name a scoped package declares: its only `bin` entry, or
/// the one named like the package.
fn declared_bin(package: &str, name: &str, place: &Path, roots: &[PathBuf]) -> Option<String> {
    let manifest = place
        .ancestors()
        .take_while(|dir| inside_a_root(dir, roots))
        .map(|dir| dir.join("node_modules").join(package).join("package.json"))
        .find(|file| file.is_file())?;
    let text = std::fs::read_to_string(manifest).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    match &json["bin"] {
        serde_json::Value::String(_) => Some(name.to_string()),
        serde_json::Value::Object(map) if map.len() == 1 => map.keys().next().cloned(),
        serde_json::Value::Object(map) => map.contains_key(name).then(|| name.to_string()),
        _ => None,
    }
}
