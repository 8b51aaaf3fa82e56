//! Where the snapshot and discovery get their raw answers. A trait, so the
//! decisions made from the answers (tri-state, degraded, the Windows facts)
//! are tested on every host with answers of our choosing, failures included.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;
pub use wamcp_platform::probe::{OsRow, Output, RegValue};
use wamcp_platform::search_path::ProgramSearch;

/// The questions the snapshot and discovery ask
/// the machine; [`System`] asks the real one.
pub trait Sources: Sync {
    /// The program a command would start for `name` (the child's `PATH`,
    /// without directories the agent can write).
    fn program(&self, name: &str) -> Option<PathBuf>;
    /// Whether the program file `path` (absolute) lies outside every
    /// directory the agent can write.
    fn trusted_program(&self, path: &Path) -> bool;
    /// A text file's contents.
    fn text_file(&self, path: &Path) -> io::Result<String>;
    /// Whether anything exists at `path`; an error when that cannot be told.
    fn file_exists(&self, path: &Path) -> io::Result<bool>;
    /// A `HKEY_LOCAL_MACHINE` value; `Ok(None)`
    /// when the key or value does not exist.
    fn machine_value(&self, key: &str, value: &str) -> Result<Option<RegValue>, String>;
    /// The subkey names of a `HKEY_LOCAL_MACHINE`
    /// key; `Ok(None)` when it does not exist.
    fn machine_subkeys(&self, key: &str) -> Result<Option<Vec<String>>, String>;
    /// A Windows optional feature's install state (1
    /// enabled, 2 disabled, 3 absent, 4 unknown).
    fn optional_feature(&self, name: &str) -> Result<Option<u32>, String>;
    /// The operating system's caption, version,
    /// build and architecture, as WMI reports them.
    fn operating_system(&self) -> Result<OsRow, String>;
    /// Runs a probe program in a neutral directory (never the project: its
    /// files must not steer a probe, as `rust-toolchain.toml` steers cargo).
    fn output(&self, program: &Path, args: &[&str], timeout: Duration) -> Result<Output, String>;
    /// An environment variable of the server (`LOCALAPPDATA`, ...).
    fn env_var(&self, name: &str) -> Option<String>;
    /// The names of the entries of folder `dir`.
    fn folder_names(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// The drive letters of the fixed volumes that are Dev Drives.
    fn dev_drives(&self) -> Result<Vec<String>, String>;
}

/// The machine itself.
#[derive(Clone, Debug, Default)]
pub struct System {
    /// Where programs are found: outside every place the agent writes.
    pub programs: ProgramSearch,
}

impl System {
    /// The machine, with programs found by `programs`.
    pub fn new(programs: ProgramSearch) -> System {
        System { programs }
    }
}

impl Sources for System {
    fn program(&self, name: &str) -> Option<PathBuf> {
        self.programs.find_program(name)
    }

    fn trusted_program(&self, path: &Path) -> bool {
        self.programs.is_trusted_file(path)
    }

    fn text_file(&self, path: &Path) -> io::Result<String> {
        std::fs::read_to_string(path)
    }

    fn file_exists(&self, path: &Path) -> io::Result<bool> {
        path.try_exists()
    }

    fn machine_value(&self, key: &str, value: &str) -> Result<Option<RegValue>, String> {
        wamcp_platform::probe::machine_value(key, value)
    }

    fn machine_subkeys(&self, key: &str) -> Result<Option<Vec<String>>, String> {
        wamcp_platform::probe::machine_subkeys(key)
    }

    fn optional_feature(&self, name: &str) -> Result<Option<u32>, String> {
        wamcp_platform::probe::optional_feature_state(name)
    }

    fn operating_system(&self) -> Result<OsRow, String> {
        wamcp_platform::probe::operating_system()
    }

    fn output(&self, program: &Path, args: &[&str], timeout: Duration) -> Result<Output, String> {
        wamcp_platform::probe::output_within(
            &self.programs,
            program,
            args,
            &std::env::temp_dir(),
            timeout,
        )
    }

    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }

    fn folder_names(&self, dir: &Path) -> io::Result<Vec<String>> {
        std::fs::read_dir(dir)?
            .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect()
    }

    fn dev_drives(&self) -> Result<Vec<String>, String> {
        wamcp_platform::probe::dev_drives()
    }
}
