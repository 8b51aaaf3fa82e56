//! The user's command rules file (`WAMCP_COMMAND_RULES`), read with its
//! trust check: a rule file a command could rewrite is no rule file at all.

use std::path::{Path, PathBuf};
use wamcp_platform::paths::holding;
use wamcp_policy::command::rules::RuleSet;
use wamcp_policy::limits::MAX_CONFIG_FILE_BYTES;

/// `rules` plus the user's `file`, if one is named. `writable` are the
/// places confined commands may write (resolved). Problems land in the rule
/// set's errors, which `get_server_info` shows; the server still starts.
pub fn with_user_rules(mut rules: RuleSet, file: Option<&Path>, writable: &[PathBuf]) -> RuleSet {
    let Some(path) = file else {
        return rules;
    };
    // Fail closed: dropping rules a command could rewrite would also drop
    // the restrictions they add, so nothing runs until the file moves.
    if let Some(held) = holding(path, writable) {
        rules.block(format!(
            "the rules file {} is {held}; no command runs until the user moves it outside the writable \
             roots and caches",
            path.display()
        ));
        return rules;
    }
    match read(path) {
        Ok(text) => rules.load(
            text.trim_start_matches('\u{feff}'),
            &path.display().to_string(),
        ),
        Err(problem) => rules.errors.push(format!("{}: {problem}", path.display())),
    }
    rules
}

/// The file's text, or why it is not read.
fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot be read: {e}"))?;
    if meta.len() > MAX_CONFIG_FILE_BYTES {
        return Err(format!(
            "larger than {MAX_CONFIG_FILE_BYTES} bytes; not loaded"
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot be read: {e}"))
}
