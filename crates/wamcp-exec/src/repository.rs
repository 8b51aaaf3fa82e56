//! Where a git repository keeps its files, found the way git finds them:
//! the nearest `.git` above a folder, a `.git` file naming the real git
//! folder (`gitdir: ...`, a linked work tree or a submodule), and that
//! folder's `commondir` (where a linked work tree's config, hooks and
//! objects live).

use std::path::{Path, PathBuf};

/// A repository's folders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repository {
    /// The top of the work tree.
    pub top: PathBuf,
    /// `top/.git`, a folder or a file.
    pub dot_git: PathBuf,
    /// The git folder `.git` is or names.
    pub git_dir: PathBuf,
    /// Where config and hooks live: the git folder, or its `commondir`.
    pub common_dir: PathBuf,
}

impl Repository {
    /// The repository `dir` is in, if any.
    pub fn enclosing(dir: &Path) -> Option<Repository> {
        let top = dir.ancestors().find(|d| d.join(".git").exists())?;
        let dot_git = top.join(".git");
        let git_dir = match std::fs::read_to_string(&dot_git) {
            Ok(text) => top.join(text.trim().strip_prefix("gitdir:")?.trim()),
            Err(_) => dot_git.clone(),
        };
        let common_dir = std::fs::read_to_string(git_dir.join("commondir"))
            .map(|common| git_dir.join(common.trim()))
            .unwrap_or_else(|_| git_dir.clone());
        Some(Repository {
            top: top.to_path_buf(),
            dot_git,
            git_dir,
            common_dir,
        })
    }

    /// The config files git reads for this repository and its
    /// submodules: the git folder's and the common one's, their
    /// `config.worktree`, and every `config` under `modules` (a
    /// submodule's git folder), at most 200.
    pub fn config_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for dir in [&self.git_dir, &self.common_dir] {
            for name in ["config", "config.worktree"] {
                files.push(dir.join(name));
            }
        }
        let mut folders = vec![(self.common_dir.join("modules"), 0)];
        while let Some((folder, depth)) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten().take(200) {
                let path = entry.path();
                match entry.file_type() {
                    Ok(t) if t.is_dir() && depth < 6 => folders.push((path, depth + 1)),
                    Ok(t) if t.is_file() && entry.file_name() == "config" => files.push(path),
                    _ => {}
                }
            }
            if files.len() > 200 {
                break;
            }
        }
        files.sort();
        files.dedup();
        files.retain(|f| f.is_file());
        files
    }

    /// The keys of its config files that name a program a git with the
    /// network would run ([`unpinned_program_keys`]), or one that could
    /// not be read (which might).
    pub fn programs_in_config(&self) -> Vec<String> {
        self.config_files()
            .iter()
            .flat_map(|file| match std::fs::read_to_string(file) {
                Ok(text) => wamcp_policy::command::hardening::unpinned_program_keys(&text),
                Err(_) => vec![format!("{} (unreadable)", file.display())],
            })
            .collect()
    }

    /// Whether a hook would run here: a file in the hooks folder that is
    /// not one of git's `.sample` files, or a `core.hooksPath` in the
    /// repository's config.
    pub fn has_hooks(&self) -> bool {
        let in_folder = std::fs::read_dir(self.common_dir.join("hooks")).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| !e.file_name().to_string_lossy().ends_with(".sample"))
        });
        in_folder
            || std::fs::read_to_string(self.common_dir.join("config"))
                .is_ok_and(|text| text.to_ascii_lowercase().contains("hookspath"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every config file git reads for the repository is looked at for a
    /// program a git with the network would run.
    #[test]
    fn programs_in_any_config_file_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git/modules/s")).unwrap();
        std::fs::write(repo.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        let found = Repository::enclosing(&repo).unwrap();
        assert!(found.programs_in_config().is_empty());
        std::fs::write(
            repo.join(".git/config.worktree"),
            "[submodule \"s\"]\n\tupdate = \"!sh x\"\n",
        )
        .unwrap();
        std::fs::write(
            repo.join(".git/modules/s/config"),
            "[filter \"f\"]\n\tsmudge = sh y\n",
        )
        .unwrap();
        assert_eq!(
            found.programs_in_config(),
            ["submodule.s.update", "filter.f.smudge"]
        );
    }

    #[test]
    fn plain_and_linked_work_trees_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        let found = Repository::enclosing(&repo.join("src/deep")).unwrap();
        assert_eq!(found.top, repo);
        assert_eq!(found.common_dir, repo.join(".git"));
        assert!(!found.has_hooks());
        std::fs::write(repo.join(".git/hooks/pre-commit.sample"), "").unwrap();
        assert!(!found.has_hooks());
        std::fs::write(repo.join(".git/hooks/pre-commit"), "").unwrap();
        assert!(found.has_hooks());
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(&tree).unwrap();
        let linked = repo.join(".git/worktrees/t");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::write(linked.join("commondir"), "../..\n").unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", linked.display())).unwrap();
        let found = Repository::enclosing(&tree).unwrap();
        assert_eq!(found.git_dir, linked);
        assert_eq!(found.common_dir, linked.join("../.."));
        assert!(found.has_hooks());
        assert_eq!(Repository::enclosing(dir.path()), None);
    }
}
