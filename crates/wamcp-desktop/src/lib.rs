//! Desktop control that never takes the foreground.
//!
//! One window is addressed by its handle and acted on with window messages;
//! anything that would need the foreground (synthetic input, UI Automation
//! patterns) is done only when the caller says the user agreed, and is
//! otherwise answered with the permission gate. The operating system sits
//! behind [`system::Windowing`] and [`accessibility::Accessibility`], so the
//! way the tools decide and report is tested with fakes everywhere and with
//! real Win32 windows under Wine.

#![deny(missing_docs)]

pub mod accessibility;
pub mod desktop;
#[cfg(test)]
mod fake;
pub mod frames;
pub mod image;
pub mod outline;
pub mod refs;
pub mod routes;
#[cfg(windows)]
mod shell;
pub mod shortcuts;
pub mod system;
#[cfg(windows)]
mod uia;
#[cfg(windows)]
mod win32;

pub use desktop::{Desktop, Direction, How, Placement};

/// The real desktop of this session.
#[cfg(windows)]
pub fn native(apps: Vec<String>, processes: Vec<String>) -> Desktop {
    win32::per_monitor_dpi();
    Desktop::new(
        Box::new(win32::Win32),
        std::sync::Arc::new(uia::UiAutomation),
        apps,
        processes,
    )
}
