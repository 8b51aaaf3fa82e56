//! The one boundary to the windowing system. Everything behind it acts;
//! nothing behind it decides.

use crate::image::Frame;
use std::path::Path;
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::desktop::controls::Control;
use wamcp_policy::desktop::keys::Stroke;

/// How long a message to another program's window may take before the
/// window counts as not responding.
pub const MESSAGE_TIMEOUT_MS: u32 = 2000;

/// A top-level window as `windows()` reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WindowInfo {
    /// The window's handle, which every desktop tool takes to address it.
    pub hwnd: isize,
    /// The title bar text.
    pub title: String,
    /// The window class name.
    pub class: String,
    /// The owning process's id; for a UWP app's frame (owned by
    /// `ApplicationFrameHost.exe`, which frames every such app) the id of
    /// the app whose content window it holds (`frames::content_owner`).
    pub pid: u32,
    /// The image name of that process (`notepad.exe`), empty when the
    /// process cannot be opened.
    pub process: String,
    /// For a UWP app's frame, the host's process id: the frame's own child
    /// windows (title bar, input sink) are the host's, and are the frame's
    /// furniture rather than another program embedded in it.
    pub host_pid: Option<u32>,
    /// Screen coordinates: left, top, right, bottom.
    pub rect: [i32; 4],
    /// Whether the window is shown.
    pub visible: bool,
    /// Whether the window is minimised.
    pub minimized: bool,
    /// Whether the compositor keeps the window off screen although it is
    /// "visible": on another virtual desktop, or a suspended UWP app.
    pub cloaked: bool,
}

/// Why a window message did not land.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessageError {
    /// The window did not answer in time, or Windows reports it hung.
    NotResponding,
    /// The handle no longer names a window.
    Gone,
}

/// How a window's pixels are captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureMethod {
    /// `PrintWindow`: asks the window to draw itself; works when covered.
    Print,
    /// A copy of the window's pixels on screen; only while it is visible.
    Screen,
}

/// How a window is shown or hidden, never taking the foreground.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShowMode {
    /// Shown in place without being activated.
    NoActivate,
    /// Hidden.
    Hide,
    /// Restored from minimised, or shown.
    Restore,
}

/// Which real click the pointer makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Press {
    /// One left click.
    Left,
    /// Two left clicks, within the double-click time.
    Double,
    /// One right click (a context menu).
    Right,
}

/// A process `open_app` started, and what reserves its id while the
/// server runs (on Windows, an open handle to it: an id is not given to
/// another process while a handle to the first is open).
pub struct Launched {
    /// The started process's id.
    pub pid: u32,
    /// Whatever keeps the id from being reused; dropped, it lets go.
    pub reservation: Box<dyn std::any::Any + Send + Sync>,
}

/// A scroll bar position before and after a scroll message.
pub type ScrollMove = (i32, i32);

/// Window queries, messages and input; Win32 on Windows, a fake in tests.
pub trait Windowing: Send + Sync {
    /// Visible top-level windows, front to back.
    fn windows(&self) -> Vec<WindowInfo>;
    /// A top-level window by handle, visible or not; `None` when the handle
    /// names no window, or a child window.
    fn window(&self, hwnd: isize) -> Option<WindowInfo>;
    /// The foreground window's handle, 0 when there is none.
    fn foreground(&self) -> isize;
    /// The owning process of any window handle, 0 when it names none.
    fn window_pid(&self, hwnd: isize) -> u32;
    /// The window's child controls in child order, each one's text read
    /// with a bounded message (never the text of a password edit).
    fn controls(&self, hwnd: isize) -> Result<Vec<Control>, MessageError>;
    /// `BM_CLICK`, sent with `MESSAGE_TIMEOUT_MS`; the program answers
    /// once it has handled the click (after a modal dialog it opened has
    /// closed), so a timeout does not mean the click was lost.
    fn click_button(&self, control: isize) -> Result<(), MessageError>;
    /// `WM_SETTEXT`, sent with a timeout.
    fn set_text(&self, control: isize, text: &str) -> Result<(), MessageError>;
    /// `WM_GETTEXT`, sent with a timeout.
    fn text(&self, control: isize) -> Result<String, MessageError>;
    /// MSAA's default action on the control, which leaves focus alone.
    fn default_action(&self, control: isize) -> Result<(), String>;
    /// Scroll messages; `None` when the control has no scroll bar in that
    /// direction.
    fn scroll(
        &self,
        control: isize,
        direction: crate::Direction,
        lines: u32,
    ) -> Result<Option<ScrollMove>, MessageError>;
    /// The window's pixels, or why they could
    /// not be had (hung, no area, too large).
    fn capture(&self, hwnd: isize, method: CaptureMethod) -> Result<Frame, String>;
    /// Shows, hides or restores the window without
    /// waiting on it (hung windows included).
    fn show(&self, hwnd: isize, mode: ShowMode);
    /// Brings the window to the front; false when Windows refused.
    fn set_foreground(&self, hwnd: isize) -> bool;
    /// Keyboard focus to a control or window of the (now foreground)
    /// window, unless the focus is already inside it; the control that has
    /// it now, `None` when the window did not take it.
    fn focus(&self, control: isize) -> Option<isize>;
    /// Whether a control hides what is typed into it.
    fn is_password(&self, control: isize) -> bool;
    /// Whether every stroke can be typed on this keyboard layout.
    fn check_keys(&self, strokes: &[Stroke]) -> Result<(), String>;
    /// Synthetic keystrokes to whatever has the focus.
    fn send_keys(&self, strokes: &[Stroke]) -> Result<(), String>;
    /// At a screen point: the top-level window there, and the process of
    /// the innermost window there (a child may be another program's).
    fn window_at(&self, x: i32, y: i32) -> (isize, u32);
    /// Whether pixels behind the window show through it (layered, or
    /// shaped by a region).
    fn see_through(&self, hwnd: isize) -> bool;
    /// The single ASCII byte a program reading its command line in the
    /// system's ANSI code page gets for non-ASCII `c` by best fit, if any
    /// (`wamcp_platform::ansi::best_fit_ascii`).
    fn best_fit_ascii(&self, c: char) -> Option<u8>;
    /// A real click at a screen point.
    fn pointer_click(&self, x: i32, y: i32, press: Press) -> Result<(), String>;
    /// Asks a window to close (`WM_CLOSE`, posted: as its close button
    /// does, so the program may ask to save first, and nothing waits on it).
    fn close(&self, hwnd: isize) -> Result<(), String>;
    /// Moves and sizes a window to `rect` (screen: left, top, right,
    /// bottom) without activating it or changing its place in the z-order.
    fn place(&self, hwnd: isize, rect: [i32; 4]) -> Result<(), String>;
    /// Real wheel notches at a screen point (positive: up or right).
    fn wheel(&self, x: i32, y: i32, notches: i32, horizontal: bool) -> Result<(), String>;
    /// Starts `program` shown without activation; a console program gets
    /// a console of its own without a window (never the server's stdio).
    fn launch(&self, program: &Path, command_line: &str) -> Result<Launched, String>;
    /// Whether the program file lies outside every folder the agent can
    /// write, and where a listed name is found on the trusted `PATH`.
    fn trusted_program(&self, programs: &ProgramSearch, path: &Path) -> bool;
    /// Where a program name is found on the trusted `PATH`.
    fn find_program(&self, programs: &ProgramSearch, name: &str) -> Option<std::path::PathBuf>;
    /// What a shortcut (`.lnk`) starts: its target, and its arguments as
    /// it stores them. Read only: the shortcut is not resolved or updated.
    fn shortcut(&self, lnk: &Path) -> Result<(std::path::PathBuf, String), String>;
    /// The Start menu's shortcut of that title (its file name without
    /// `.lnk`), for all users or this one.
    fn start_menu(&self, title: &str) -> Option<std::path::PathBuf>;
    /// Starts a packaged app by its AppUserModelID with `arguments`.
    fn activate(&self, app_id: &str, arguments: &str) -> Result<Launched, String>;
}
