//! Decisions of the desktop tools, kept pure so they are tested on
//! every platform: which control a `target` names, which window-message route
//! suits a control, what key notation means, which programs may be launched
//! and which windows may be touched, and the shape of the permission gate.
//!
//! The Win32 side lives in `wamcp-desktop`; it asks, this module answers.

pub mod controls;
pub mod keys;
pub mod launch;

use serde_json::{Value, json};

/// The answer when an action could only be done by taking the foreground
/// (UIA patterns, synthetic input) and the caller did not allow it. It is
/// not an error: nothing failed, the user has a decision to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gate {
    /// What stopped the background route, in one line.
    pub reason: String,
    /// What the foreground route would do, for the user to judge.
    pub detail: String,
}

impl Gate {
    /// A gate with its reason and what the foreground route would do.
    pub fn new(reason: impl Into<String>, detail: impl Into<String>) -> Gate {
        Gate {
            reason: reason.into(),
            detail: detail.into(),
        }
    }

    /// The answer a tool returns: `needs_permission`,
    /// the reason, and a hint to ask the user.
    pub fn to_json(&self) -> Value {
        json!({
            "ok": false,
            "needs_permission": true,
            "reason": self.reason,
            "detail": self.detail,
            "hint": "Show this to the user. Retry with allow_foreground=true only after they agree; \
                     the window will come to the front and the real keyboard or pointer may be used.",
        })
    }
}

/// Image names compare without case and without a trailing `.exe`, the way
/// a user writes them in a list (`notepad`, `Notepad.exe`).
pub fn same_image_name(listed: &str, image: &str) -> bool {
    fn stem(name: &str) -> &str {
        let name = name.trim();
        match name.len().checked_sub(4) {
            Some(cut) if name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(".exe") => {
                &name[..cut]
            }
            _ => name,
        }
    }
    let (a, b) = (stem(listed), stem(image));
    !a.is_empty() && a.to_lowercase() == b.to_lowercase()
}

/// Whether the windows of a process may be acted on: launched by this
/// server, or its image name is in `WAMCP_DESKTOP_PROCESSES`.
pub fn in_scope(launched_by_us: bool, image: &str, listed_processes: &[String]) -> bool {
    launched_by_us || listed_processes.iter().any(|l| same_image_name(l, image))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_compare_like_a_user_writes_them() {
        assert!(same_image_name("notepad", "Notepad.exe"));
        assert!(same_image_name("NOTEPAD.EXE", "notepad.exe"));
        assert!(same_image_name(" code.exe ", "Code.exe"));
        assert!(!same_image_name("note", "notepad.exe"));
        assert!(!same_image_name("notepad.exe.exe", "notepad.exe"));
        assert!(!same_image_name("", "notepad.exe"));
        assert!(!same_image_name(".exe", ".exe"));
    }

    #[test]
    fn scope_is_launched_or_listed() {
        let listed = vec!["app-under-test".to_string()];
        assert!(in_scope(true, "anything.exe", &[]));
        assert!(in_scope(false, "App-Under-Test.exe", &listed));
        assert!(!in_scope(false, "explorer.exe", &listed));
        assert!(!in_scope(false, "app-under-test2.exe", &listed));
    }

    #[test]
    fn the_gate_carries_its_fields() {
        let v = Gate::new("no button", "would click").to_json();
        assert_eq!(v["ok"], false);
        assert_eq!(v["needs_permission"], true);
        assert_eq!(v["reason"], "no button");
        assert!(
            v["hint"]
                .as_str()
                .unwrap()
                .starts_with("Show this to the user.")
        );
    }
}
