//! Commands the user allowed "for this project": the exact command line,
//! per project root, so the next identical call runs without a question.
//!
//! The file lives in wamcp's data folder, which no command and no tool
//! writes; a line is matched exactly as it was shown to the user, never
//! as a pattern, so an approval cannot stretch to a command nobody saw.
//! Questions about work that cannot be undone are never remembered.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most command lines kept per project: the oldest go first.
pub const MAX_PER_PROJECT: usize = 500;

/// The approvals file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approvals {
    /// Command lines allowed, per project root (as resolved when allowed).
    #[serde(default)]
    projects: BTreeMap<String, Vec<String>>,
}

impl Approvals {
    /// Reads the file's text; a malformed file is an error, and allows
    /// nothing until it is fixed.
    pub fn parse(text: &str) -> Result<Approvals, String> {
        if !text.trim_start().starts_with('{') {
            return Err("not a command approvals file: it must be a JSON object".into());
        }
        serde_json::from_str(text).map_err(|e| format!("not a command approvals file: {e}"))
    }

    /// Whether `command` was allowed for `project`.
    pub fn allows(&self, project: &str, command: &str) -> bool {
        self.projects
            .get(project)
            .is_some_and(|lines| lines.iter().any(|line| line == command))
    }

    /// Allows `command` for `project` from now on.
    pub fn add(&mut self, project: &str, command: &str) {
        let lines = self.projects.entry(project.to_string()).or_default();
        if lines.iter().any(|line| line == command) {
            return;
        }
        lines.push(command.to_string());
        let excess = lines.len().saturating_sub(MAX_PER_PROJECT);
        lines.drain(..excess);
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests;
