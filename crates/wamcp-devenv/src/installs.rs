//! Where Windows developer tools are when they are not on `PATH`, and the
//! Microsoft Store's stand-in that is on `PATH` without being the tool.
//!
//! IDEs rarely put themselves on `PATH`: VS Code's user install adds its
//! `bin` only when asked, Visual Studio never does, JetBrains' installers
//! and Toolbox put IDEs under versioned folders. A developer whose editor
//! "is missing" from a report loses trust in every other line of it.

use crate::sources::Sources;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether `path`, found for a Python name, is the Microsoft Store's
/// stand-in: an execution alias in `WindowsApps` that opens the Store
/// instead of running Python. A real Python from the Store or from the
/// Python Install Manager puts aliases of the same names there too, but
/// beside its package folder (`PythonSoftwareFoundation.Python.3.12_...`,
/// `PythonSoftwareFoundation.PythonManager_...`); the stand-in has none.
pub fn is_store_python_stub(sources: &dyn Sources, path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !(name.starts_with("python") && is_app_alias(path)) {
        return false;
    }
    let Some(folder) = path.parent() else {
        return false;
    };
    // A folder that cannot be listed proves nothing: the alias is reported
    // as found, with its alias flag, as before.
    sources.folder_names(folder).is_ok_and(|names| {
        !names
            .iter()
            .any(|n| n.starts_with("PythonSoftwareFoundation."))
    })
}

/// Whether `path` lies in a `WindowsApps` folder of execution aliases.
pub fn is_app_alias(path: &Path) -> bool {
    path.to_string_lossy()
        .replace('/', "\\")
        .to_ascii_lowercase()
        .contains("\\microsoft\\windowsapps\\")
}

/// An IDE's program where its installers put it, for the names
/// `tool_discover` knows (`code`, `devenv`, `rider`, `pycharm`, `clion`),
/// and only outside every place the agent can write: the version probe
/// runs VS Code's launcher, and a planted one must never be run.
pub fn installed_editor(sources: &dyn Sources, name: &str) -> Option<PathBuf> {
    match name {
        "code" => vs_code(sources),
        "devenv" => visual_studio_ide(sources),
        "rider" => jetbrains(
            sources,
            &["JetBrains Rider", "Rider"],
            "rider64.exe",
            "Rider",
        ),
        "pycharm" => jetbrains(sources, &["PyCharm"], "pycharm64.exe", "PyCharm"),
        "clion" => jetbrains(sources, &["CLion"], "clion64.exe", "CLion"),
        _ => None,
    }
}

/// VS Code's user install (the default), then its system install.
fn vs_code(sources: &dyn Sources) -> Option<PathBuf> {
    [("LOCALAPPDATA", "Programs"), ("ProgramFiles", "")]
        .iter()
        .filter_map(|(var, under)| {
            let mut path = PathBuf::from(sources.env_var(var)?);
            if !under.is_empty() {
                path.push(under);
            }
            Some(path.join("Microsoft VS Code").join("bin").join("code.cmd"))
        })
        .find(|p| usable(sources, p))
}

/// The newest Visual Studio's `devenv.exe`, as its installer's `vswhere`
/// reports it (running `vswhere` starts no IDE).
fn visual_studio_ide(sources: &dyn Sources) -> Option<PathBuf> {
    let x86 = sources.env_var("ProgramFiles(x86)")?;
    let vswhere = Path::new(&x86)
        .join("Microsoft Visual Studio")
        .join("Installer")
        .join("vswhere.exe");
    if !usable(sources, &vswhere) {
        return None;
    }
    let args = [
        "-latest",
        "-products",
        "*",
        "-property",
        "productPath",
        "-utf8",
        "-nologo",
    ];
    let out = sources
        .output(&vswhere, &args, Duration::from_secs(15))
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let path = PathBuf::from(line);
    (out.code == Some(0) && usable(sources, &path)).then_some(path)
}

/// A JetBrains IDE: the launcher script Toolbox writes, Toolbox 2's
/// install folder, the standalone installer's, then Toolbox 1's channel
/// folders; the newest version wins where several are installed.
fn jetbrains(
    sources: &dyn Sources,
    folder_prefixes: &[&str],
    exe: &str,
    toolbox_app: &str,
) -> Option<PathBuf> {
    let local = sources.env_var("LOCALAPPDATA").map(PathBuf::from);
    let script = exe.trim_end_matches("64.exe");
    if let Some(local) = &local {
        let launcher = local
            .join("JetBrains")
            .join("Toolbox")
            .join("scripts")
            .join(format!("{script}.cmd"));
        if usable(sources, &launcher) {
            return Some(launcher);
        }
    }
    let mut parents: Vec<PathBuf> = Vec::new();
    if let Some(local) = &local {
        parents.push(local.join("Programs"));
    }
    if let Some(program_files) = sources.env_var("ProgramFiles") {
        parents.push(PathBuf::from(program_files).join("JetBrains"));
    }
    for parent in parents {
        let found = newest_first(sources, &parent, |n| {
            folder_prefixes.iter().any(|p| n.starts_with(p))
        })
        .into_iter()
        .map(|folder| parent.join(folder).join("bin").join(exe))
        .find(|p| usable(sources, p));
        if found.is_some() {
            return found;
        }
    }
    let apps = local?.join("JetBrains").join("Toolbox").join("apps");
    newest_first(sources, &apps, |n| n.starts_with(toolbox_app))
        .into_iter()
        .flat_map(|app| {
            let channel = apps.join(app).join("ch-0");
            newest_first(sources, &channel, |_| true)
                .into_iter()
                .map(move |build| channel.join(build).join("bin").join(exe))
        })
        .find(|p| usable(sources, p))
}

/// The entries of `dir` that `wanted` accepts, newest version first.
fn newest_first(sources: &dyn Sources, dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let mut names: Vec<String> = sources
        .folder_names(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| wanted(n))
        .collect();
    names.sort_by(|a, b| version_key(b).cmp(&version_key(a)).then_with(|| b.cmp(a)));
    names
}

/// The numbers in a folder name, in order: as numbers `2024.10` comes after
/// `2024.9`, as text before it.
fn version_key(name: &str) -> Vec<u64> {
    name.split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty())
        .filter_map(|part| part.parse().ok())
        .collect()
}

/// A program that exists outside every place the agent can write: only
/// such a one is reported, and so ever run.
fn usable(sources: &dyn Sources, path: &Path) -> bool {
    sources.file_exists(path).unwrap_or(false) && sources.trusted_program(path)
}
