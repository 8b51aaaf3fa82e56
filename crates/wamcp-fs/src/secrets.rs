//! The secret stores as this machine spells them, and the question every
//! reading tool asks of a path: is this where credentials live?
//!
//! A path is judged by what it resolves to (links, `..`, case where the file
//! system ignores it, 8.3 names and `\\?\` prefixes on Windows), so no
//! spelling of `~/.ssh/id_ed25519` reads the key. Walks ask only about
//! entries whose name could be a store's, so a search of a big tree pays one
//! hash lookup per entry.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::secrets::is_env_file;

/// One place, with the spellings it is compared by.
#[derive(Debug)]
struct Place {
    /// As configured, and as resolved when it exists.
    spellings: Vec<PathBuf>,
    what: String,
}

/// The secret stores of this machine and the roots of this call (a `.env`
/// file is a secret outside them and the project's own file inside). The
/// default judges nothing secret: what a read the user allowed runs with.
#[derive(Clone, Debug, Default)]
pub struct Secrets {
    /// `None`: nothing is secret.
    places: Option<Arc<Vec<Place>>>,
    /// Final names of every spelling, folded: the cheap first question.
    names: Arc<HashSet<String>>,
    roots: Vec<PathBuf>,
}

/// Why a path is secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Secret {
    /// The store the path is in, resolved.
    pub store: PathBuf,
    /// What the store holds ("SSH keys").
    pub what: String,
}

impl Secrets {
    /// The stores `(path, what)`, resolved now; a store that does not exist
    /// yet is compared as written.
    pub fn new(stores: impl IntoIterator<Item = (PathBuf, String)>) -> Secrets {
        let mut places = Vec::new();
        let mut names = HashSet::new();
        for (path, what) in stores {
            let mut spellings = vec![path.clone()];
            if let Ok(real) = dunce::canonicalize(&path)
                && !spellings.contains(&real)
            {
                spellings.push(real);
            }
            for spelling in &spellings {
                if let Some(name) = spelling.file_name() {
                    names.insert(fold(&name.to_string_lossy()).into_owned());
                }
            }
            places.push(Place { spellings, what });
        }
        Secrets {
            places: Some(Arc::new(places)),
            names: Arc::new(names),
            roots: Vec::new(),
        }
    }

    /// The same stores, with `roots` as the project (resolved by the caller).
    pub fn with_roots(&self, roots: Vec<PathBuf>) -> Secrets {
        Secrets {
            roots,
            ..self.clone()
        }
    }

    /// The stores' resolved paths, for the OS layer to hide.
    pub fn existing(&self) -> Vec<PathBuf> {
        self.places()
            .iter()
            .filter_map(|p| p.spellings.last())
            .filter(|p| p.exists())
            .cloned()
            .collect()
    }

    /// The stores as configured, with what each holds.
    pub fn listed(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.places()
            .iter()
            .map(|p| (p.spellings[0].as_path(), p.what.as_str()))
    }

    fn places(&self) -> &[Place] {
        self.places.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Whether `path` is in a secret store, judged by what it resolves to.
    /// A path that does not exist is judged by its nearest existing
    /// ancestor, resolved, and the rest as written.
    pub fn secret(&self, path: &Path) -> Option<Secret> {
        self.places.as_ref()?;
        let Some(resolved) = resolve(path) else {
            return Some(Secret {
                store: path.to_path_buf(),
                what: "a path that could not be resolved (too long, or a loop of links), so it cannot be \
                       shown to be outside every secret store"
                    .into(),
            });
        };
        self.store_holding(&resolved)
            .or_else(|| self.env_file(&resolved))
    }

    /// [`Secrets::secret`] for an entry a walk met: asked only when its
    /// name could be a store's, so most entries cost one lookup, and its
    /// path is only spelled out (`path`) for those.
    pub fn hides(&self, name: &std::ffi::OsStr, path: impl FnOnce() -> PathBuf) -> Option<Secret> {
        let name = name.to_string_lossy();
        if self.places.is_some()
            && (self.names.contains(fold(&name).as_ref()) || is_env_file(&name))
        {
            self.secret(&path())
        } else {
            None
        }
    }

    fn store_holding(&self, resolved: &Path) -> Option<Secret> {
        self.places().iter().find_map(|place| {
            let spelling = place.spellings.iter().find(|s| within(resolved, s))?;
            Some(Secret {
                store: spelling.clone(),
                what: place.what.clone(),
            })
        })
    }

    fn env_file(&self, resolved: &Path) -> Option<Secret> {
        let name = resolved.file_name()?.to_string_lossy();
        let inside = self.roots.iter().any(|root| within(resolved, root));
        (is_env_file(&name) && !inside).then(|| Secret {
            store: resolved.to_path_buf(),
            what: "a dotenv file of another project".into(),
        })
    }
}

/// The refusal of a read of `shown`, which is in `secret`.
pub fn secret_refusal(shown: &str, secret: &Secret, how: &str) -> ToolError {
    ToolError::new(
        ErrorType::SecretPath,
        format!(
            "'{shown}' is in {} ({}), which no tool reads without the user; {how}.",
            secret.store.display(),
            secret.what
        ),
    )
    .with_path(shown)
    .recover("Do not try another path or a command to read it: commands cannot see it either.")
    .recover("If the task needs it, ask the user to look at it or to paste what is needed.")
}

/// Refuses `path` (spelled `shown`) when it is in a secret store; `how`
/// says what was not done ("it is not listed").
pub(crate) fn refuse_secret(
    secrets: &Secrets,
    shown: &str,
    path: &Path,
    how: &str,
) -> Result<(), ToolError> {
    match secrets.secret(path) {
        Some(secret) => Err(secret_refusal(shown, &secret, how)),
        None => Ok(()),
    }
}

/// `path` resolved as far as it exists, or `None` when it exists but
/// cannot be resolved: a chain of links longer than the C library's path
/// limit still opens in the kernel, so "could not resolve" must never read
/// as "does not exist".
fn resolve(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        match dunce::canonicalize(&current) {
            Ok(real) => return Some(rest.iter().rev().fold(real, |p, n| p.join(n))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
        match (
            current.file_name().map(|n| n.to_os_string()),
            current.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                current = parent.to_path_buf();
            }
            _ => return Some(path.to_path_buf()),
        }
    }
}

/// Whether `path` is `place` or below it, compared as the file system
/// compares names.
fn within(path: &Path, place: &Path) -> bool {
    let mut below = path.components();
    place.components().all(|c| {
        below.next().is_some_and(|b| {
            fold(&b.as_os_str().to_string_lossy()) == fold(&c.as_os_str().to_string_lossy())
        })
    })
}

/// A name as the platform's file systems compare it: without case on
/// Windows and macOS.
fn fold(name: &str) -> std::borrow::Cow<'_, str> {
    // Borrowed when nothing changes: a walk asks this of every entry, and
    // a large tree has hundreds of thousands.
    let plain = !cfg!(any(windows, target_os = "macos"))
        || (name.is_ascii() && !name.bytes().any(|b| b.is_ascii_uppercase()));
    if plain {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(name.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_compares_whole_components() {
        assert!(within(Path::new("/h/.ssh/id"), Path::new("/h/.ssh")));
        assert!(within(Path::new("/h/.ssh"), Path::new("/h/.ssh")));
        assert!(!within(Path::new("/h/.sshx/id"), Path::new("/h/.ssh")));
        assert!(!within(Path::new("/h"), Path::new("/h/.ssh")));
    }

    #[test]
    fn a_missing_path_is_resolved_through_its_existing_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let real = dunce::canonicalize(dir.path()).unwrap();
        let missing = dir.path().join("a").join("b");
        assert_eq!(resolve(&missing), Some(real.join("a").join("b")));
    }

    /// A chain of links whose resolved spelling passes the C library's
    /// path limit opens in the kernel all the same: it is refused, never
    /// judged by the part that resolved.
    #[cfg(unix)]
    #[test]
    fn a_path_too_long_to_resolve_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(dir.path()).unwrap();
        let key = base.join("key");
        std::fs::write(&key, "secret").unwrap();
        let secrets = Secrets::new([(key.clone(), "a key".to_string())]);
        // Two stacks of ten 250-byte levels, the second made through a
        // link into the first: its real path is over 4096 bytes, while
        // every spelling used here is under.
        let levels: std::path::PathBuf = (0..10).map(|i| format!("{i:0>250}")).collect();
        let first = base.join("t").join(&levels);
        std::fs::create_dir_all(&first).unwrap();
        std::os::unix::fs::symlink(&first, base.join("s0")).unwrap();
        std::fs::create_dir_all(base.join("s0").join(&levels)).unwrap();
        std::os::unix::fs::symlink(&levels, first.join("s1")).unwrap();
        std::os::unix::fs::symlink(&key, base.join("s0").join(&levels).join("k")).unwrap();
        let chained = base.join("s0").join("s1").join("k");
        assert_eq!(std::fs::read_to_string(&chained).unwrap(), "secret");
        assert!(
            dunce::canonicalize(&chained).is_err(),
            "the C library cannot resolve it"
        );
        let judged = secrets.secret(&chained).unwrap();
        assert!(judged.what.contains("could not be resolved"), "{judged:?}");
    }

    #[test]
    fn no_stores_judge_only_dotenv_files_and_the_default_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        let stores = Secrets::new([]);
        assert_eq!(stores.secret(&root.join("y.txt")), None);
        assert!(stores.secret(&root.join(".env")).is_some());
        let project = stores.with_roots(vec![root.clone()]);
        assert_eq!(project.secret(&root.join(".env")), None);
        assert_eq!(Secrets::default().secret(&root.join(".env")), None);
    }
}
