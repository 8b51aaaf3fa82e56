//! A temp directory that a confined program writes into, removed the
//! careful way (`wamcp_platform::tree`) however the run ends: finished,
//! failed, timed out or cancelled. Not `tempfile::TempDir`, whose drop
//! removes recursively: the program decided how deep the tree is.

use std::path::{Path, PathBuf};

pub struct TempTree {
    path: Option<PathBuf>,
}

impl TempTree {
    /// Creates `<system temp>/<prefix>XXXXXX`.
    pub fn new(prefix: &str) -> std::io::Result<TempTree> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
        Ok(TempTree {
            path: Some(dir.keep()),
        })
    }

    pub fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new(""))
    }

    /// Removes it now, waiting for the removal.
    pub async fn remove(mut self) {
        let Some(path) = self.path.take() else { return };
        // Most programs leave nothing behind: one call, no thread hand-off.
        if std::fs::remove_dir(&path).is_ok() {
            return;
        }
        let _ = tokio::task::spawn_blocking(move || remove_logged(&path)).await;
    }
}

impl Drop for TempTree {
    /// A run that was dropped (cancelled) removes it on a thread of its
    /// own: a drop cannot wait, and must not recurse on a worker's stack.
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::thread::Builder::new()
                .name("wamcp-temp-removal".into())
                .spawn(move || remove_logged(&path));
        }
    }
}

fn remove_logged(path: &Path) {
    if let Err(e) = wamcp_platform::tree::remove_tree(path) {
        tracing::warn!("could not remove {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn removed_when_finished_and_when_dropped() {
        let finished = TempTree::new("wamcp-test-").unwrap();
        let path = finished.path().to_path_buf();
        std::fs::create_dir_all(path.join("a/b/c")).unwrap();
        finished.remove().await;
        assert!(!path.exists());
        // A cancelled run only drops it; the removal happens on its own thread.
        let dropped = TempTree::new("wamcp-test-").unwrap();
        let path = dropped.path().to_path_buf();
        std::fs::create_dir_all(path.join("a/b/c")).unwrap();
        drop(dropped);
        for _ in 0..200 {
            if !path.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!path.exists());
    }
}
