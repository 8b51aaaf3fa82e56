//! The Win32 side of [`Windowing`]: every call the desktop tools make into
//! user32, gdi32 and kernel32, and nothing that decides.
//!
//! Messages to other programs' windows are always sent with
//! `SendMessageTimeoutW` and `SMTO_ABORTIFHUNG`: a plain `SendMessage` to a
//! window that stopped pumping messages never returns.

use crate::Direction;
use crate::frames;
use crate::image::{Frame, MAX_CAPTURE_EDGE};
use crate::system::{
    CaptureMethod, Launched, MESSAGE_TIMEOUT_MS, MessageError, Press, ScrollMove, ShowMode,
    WindowInfo, Windowing,
};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::desktop::controls::{self, Control};
use wamcp_policy::desktop::keys::{Key, Stroke};
use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_TIMEOUT, GetLastError, HWND, LPARAM, POINT, RECT,
};
use windows_sys::Win32::Graphics::Dwm::{DWMWA_CLOAKED, DwmGetWindowAttribute};
use windows_sys::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BitBlt, CreateCompatibleBitmap, CreateCompatibleDC,
    DIB_RGB_COLORS, DeleteDC, DeleteObject, GetDC, GetDIBits, GetWindowDC, GetWindowRgnBox,
    HBITMAP, HDC, ReleaseDC, SRCCOPY, SelectObject,
};
use windows_sys::Win32::Storage::Xps::PrintWindow;
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CreateProcessW, GetCurrentThreadId, OpenProcess,
    PROCESS_INFORMATION, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
    QueryFullProcessImageNameW, STARTF_USESHOWWINDOW, STARTUPINFOW,
};
use windows_sys::Win32::UI::HiDpi::{
    DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE, DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2,
    SetProcessDpiAwarenessContext,
};
use windows_sys::Win32::UI::Input::KeyboardAndMouse::{
    GetFocus, INPUT, INPUT_KEYBOARD, INPUT_MOUSE, IsWindowEnabled, KEYBDINPUT,
    KEYEVENTF_EXTENDEDKEY, KEYEVENTF_KEYUP, KEYEVENTF_UNICODE, MOUSEEVENTF_ABSOLUTE,
    MOUSEEVENTF_HWHEEL, MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, MOUSEEVENTF_MOVE,
    MOUSEEVENTF_RIGHTDOWN, MOUSEEVENTF_RIGHTUP, MOUSEEVENTF_VIRTUALDESK, MOUSEEVENTF_WHEEL,
    MOUSEINPUT, SendInput, SetFocus, VkKeyScanW,
};
use windows_sys::Win32::UI::WindowsAndMessaging::*;

pub struct Win32;

/// Makes this process see every monitor in physical pixels. Without it,
/// Windows scales what a DPI-unaware process is told on a scaled display:
/// window rectangles, the points the pointer is sent to and the size of a
/// capture would be virtual ones, and a capture would be cut off. Set for
/// the whole process, not a thread: desktop calls run on whichever worker
/// thread takes them. The server makes no windows of its own, so nothing
/// it shows changes; where Windows refuses (awareness already set), the
/// older modes are tried in turn.
pub fn per_monitor_dpi() {
    // SAFETY: each call takes a constant and changes only this process's
    // awareness setting; a refused call returns 0 and changes nothing.
    unsafe {
        let _set = SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2) != 0
            || SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE) != 0
            || SetProcessDPIAware() != 0;
    }
}

/// Text of one control in a listing; an edit may hold megabytes.
const LISTED_TEXT_CHARS: usize = 500;
/// Text read back after `WM_SETTEXT`.
const READ_BACK_CHARS: usize = crate::desktop::MAX_TYPED_CHARS + 1;
/// Handles enumerated (hidden ones included: a lower cap could drop
/// visible windows without saying so).
const MAX_WINDOWS: usize = 20_000;
const MAX_CONTROLS: usize = 2000;
/// The longest a control listing may take in all.
const LISTING_BUDGET: Duration = Duration::from_secs(5);
/// Largest capture in pixels (a 8K screen is 33 million): more is a
/// broken window, and each pixel costs 4 bytes and more to scale.
const MAX_CAPTURE_PIXELS: u64 = 40_000_000;
/// Capture and default-action workers still running; past this no new one
/// starts, so windows that never answer cannot pile up threads.
const MAX_WORKERS: usize = 4;
static WORKERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn hwnd(h: isize) -> HWND {
    h as HWND
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(Some(0)).collect()
}

fn string_from(buf: &[u16], len: usize) -> String {
    String::from_utf16_lossy(&buf[..len.min(buf.len())])
}

/// A handle to a window that is top-level (its parent is the desktop).
fn is_top_level(h: HWND) -> bool {
    // SAFETY: window handles are looked up by user32, never dereferenced: a
    // stale or made-up `h` only makes these queries fail.
    unsafe { IsWindow(h) != 0 && GetAncestor(h, GA_PARENT) == GetDesktopWindow() }
}

fn class_of(h: HWND) -> String {
    let mut buf = [0u16; 256];
    // SAFETY: the call writes at most `buf.len()` u16s into `buf`; a stale
    // handle makes it fail and return 0.
    let n = unsafe { GetClassNameW(h, buf.as_mut_ptr(), buf.len() as i32) };
    string_from(&buf, n.max(0) as usize)
}

/// A top-level window's caption; for another process's window Windows
/// reads the stored caption and sends no message, so this never blocks.
fn title_of(h: HWND) -> String {
    let mut buf = vec![0u16; 512];
    // SAFETY: the call writes at most `buf.len()` u16s into `buf`; a stale
    // handle makes it fail and return 0.
    let n = unsafe { GetWindowTextW(h, buf.as_mut_ptr(), buf.len() as i32) };
    string_from(&buf, n.max(0) as usize)
}

fn rect_of(h: HWND) -> [i32; 4] {
    let mut r = RECT {
        left: 0,
        top: 0,
        right: 0,
        bottom: 0,
    };
    // SAFETY: `r` is a writable RECT; a stale handle leaves it zero.
    unsafe { GetWindowRect(h, &mut r) };
    [r.left, r.top, r.right, r.bottom]
}

fn pid_of(h: HWND) -> u32 {
    let mut pid = 0u32;
    // SAFETY: `pid` is a writable u32; a stale handle leaves it 0.
    unsafe { GetWindowThreadProcessId(h, &mut pid) };
    pid
}

fn image_name(pid: u32) -> String {
    // SAFETY: the process handle is checked for null and closed once, right
    // after the query; `len` tells the call `buf`'s size, and the call sets
    // it to the number of u16s written.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if process.is_null() {
            return String::new();
        }
        let mut buf = vec![0u16; 1024];
        let mut len = buf.len() as u32;
        let ok =
            QueryFullProcessImageNameW(process, PROCESS_NAME_WIN32, buf.as_mut_ptr(), &mut len);
        CloseHandle(process);
        if ok == 0 {
            return String::new();
        }
        let path = string_from(&buf, len as usize);
        path.rsplit(['\\', '/']).next().unwrap_or(&path).to_string()
    }
}

/// Whether the compositor keeps `h` off screen (another virtual desktop, a
/// suspended UWP app). Where DWM does not answer (Wine), it is not.
fn cloaked(h: HWND) -> bool {
    let mut value = 0u32;
    // SAFETY: `value` is a writable u32, the size the attribute needs and
    // the size passed; a stale handle makes the call fail.
    let answered = unsafe {
        DwmGetWindowAttribute(
            h,
            DWMWA_CLOAKED as u32,
            &mut value as *mut u32 as *mut c_void,
            std::mem::size_of::<u32>() as u32,
        )
    };
    answered >= 0 && value != 0
}

/// The direct children of `h`, at most `MAX_CONTROLS` of them.
fn direct_children(h: HWND) -> Vec<HWND> {
    let mut children = Vec::new();
    let mut after: HWND = std::ptr::null_mut();
    while children.len() < MAX_CONTROLS {
        // SAFETY: handles by value and null class and title (any child);
        // a stale handle makes the call answer null, which ends the loop.
        after = unsafe { FindWindowExW(h, after, std::ptr::null(), std::ptr::null()) };
        if after.is_null() {
            break;
        }
        children.push(after);
    }
    children
}

/// The process top-level window `h` of `class` stands for, and the host's
/// when that is another: a UWP app's frame stands for the app
/// (`frames::content_owner`).
fn owner_of(h: HWND, class: &str) -> (u32, Option<u32>) {
    let pid = pid_of(h);
    if class != frames::FRAME_CLASS {
        return (pid, None);
    }
    let children: Vec<(String, u32)> = direct_children(h)
        .into_iter()
        .map(|c| (class_of(c), pid_of(c)))
        .collect();
    match frames::content_owner(class, pid, &children) {
        Some(app) => (app, Some(pid)),
        None => (pid, None),
    }
}

fn info(h: HWND, names: &mut Vec<(u32, String)>) -> WindowInfo {
    let class = class_of(h);
    let (pid, host_pid) = owner_of(h, &class);
    let process = match names.iter().find(|(p, _)| *p == pid) {
        Some((_, name)) => name.clone(),
        None => {
            let name = image_name(pid);
            names.push((pid, name.clone()));
            name
        }
    };
    WindowInfo {
        hwnd: h as isize,
        title: title_of(h),
        class,
        pid,
        process,
        host_pid,
        rect: rect_of(h),
        // SAFETY: a query by handle; a stale one answers false.
        visible: unsafe { IsWindowVisible(h) != 0 },
        // SAFETY: a query by handle; a stale one answers false.
        minimized: unsafe { IsIconic(h) != 0 },
        cloaked: cloaked(h),
    }
}

unsafe extern "system" fn collect(h: HWND, list: LPARAM) -> windows_sys::core::BOOL {
    // SAFETY: `collect` is only passed to EnumWindows and EnumChildWindows
    // below, with a `&mut Vec<HWND>` as the LPARAM; the enumeration calls back
    // on the same thread before it returns, while that vector is alive and
    // not otherwise borrowed.
    let list = unsafe { &mut *(list as *mut Vec<HWND>) };
    list.push(h);
    (list.len() < MAX_WINDOWS) as i32
}

fn top_level_handles() -> Vec<HWND> {
    let mut list: Vec<HWND> = Vec::new();
    // SAFETY: `collect` reads the LPARAM as the `Vec<HWND>` given here, which
    // outlives the enumeration (it ends before EnumWindows returns).
    unsafe { EnumWindows(Some(collect), &mut list as *mut Vec<HWND> as LPARAM) };
    list
}

/// A message with a timeout; a window that does not answer is reported,
/// one that vanished is told apart from it.
fn send(h: HWND, msg: u32, wparam: usize, lparam: isize) -> Result<usize, MessageError> {
    let mut result = 0usize;
    // SAFETY: `result` is a writable usize and a stale `h` only fails the
    // call. The messages sent from this file carry either plain values or,
    // for WM_GETTEXT and WM_SETTEXT, a buffer the caller keeps alive for the
    // call (sized by `wparam`, or NUL-terminated); the system copies it
    // across processes.
    let ok = unsafe {
        SendMessageTimeoutW(
            h,
            msg,
            wparam,
            lparam,
            SMTO_ABORTIFHUNG | SMTO_BLOCK,
            MESSAGE_TIMEOUT_MS,
            &mut result,
        )
    };
    if ok != 0 {
        return Ok(result);
    }
    // SAFETY: a query by handle; a stale one answers 0.
    if unsafe { IsWindow(h) } == 0 {
        return Err(MessageError::Gone);
    }
    // SAFETY: reads this thread's last error; no memory is involved.
    let _timed_out = unsafe { GetLastError() } == ERROR_TIMEOUT;
    Err(MessageError::NotResponding)
}

fn read_text(h: HWND, limit: usize) -> Result<String, MessageError> {
    let len = send(h, WM_GETTEXTLENGTH, 0, 0)?.min(limit);
    let mut buf = vec![0u16; len + 1];
    let got = send(h, WM_GETTEXT, buf.len(), buf.as_mut_ptr() as isize)?;
    Ok(string_from(&buf, got))
}

/// Whether a control hides its text: by class and style (failing closed),
/// or by its own answer to `EM_GETPASSWORDCHAR`, which every control built
/// on the system edit gives, whatever its class name.
fn password_control(h: HWND, class: &str, style: u32) -> Result<bool, MessageError> {
    const EM_GETPASSWORDCHAR: u32 = 0x00D2;
    if controls::is_password(class, style) {
        return Ok(true);
    }
    // Asked of every other control: a program may give its own password
    // edit any class name, "Static" and "Button" included.
    Ok(send(h, EM_GETPASSWORDCHAR, 0, 0)? != 0)
}

/// Runs `work` on its own thread and waits at most `limit`; the thread is
/// abandoned if it overruns (a window that never answers), and at most
/// `MAX_WORKERS` such threads run at once.
fn bounded<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    use std::sync::atomic::Ordering;
    if WORKERS.fetch_add(1, Ordering::SeqCst) >= MAX_WORKERS {
        WORKERS.fetch_sub(1, Ordering::SeqCst);
        return Err(
            "earlier calls to windows that did not answer are still running; try again later"
                .into(),
        );
    }
    let (done, wait) = mpsc::channel();
    std::thread::spawn(move || {
        let result = work();
        WORKERS.fetch_sub(1, Ordering::SeqCst);
        let _ = done.send(result);
    });
    wait.recv_timeout(limit)
        .unwrap_or_else(|_| Err("the window did not answer in time".into()))
}

/// The child windows of `parent`, at most `MAX_WINDOWS` of them.
fn child_handles(parent: HWND) -> Vec<HWND> {
    let mut children: Vec<HWND> = Vec::new();
    // SAFETY: `collect` reads the LPARAM as the `Vec<HWND>` given here,
    // which outlives the enumeration (it ends before the call returns).
    unsafe {
        EnumChildWindows(
            parent,
            Some(collect),
            &mut children as *mut Vec<HWND> as LPARAM,
        )
    };
    children
}

/// One child window of a window of process `owner`, as a control listing
/// shows it.
fn control_of(child: HWND, owner: u32) -> Result<Control, MessageError> {
    let class = class_of(child);
    // SAFETY: a query by handle; a stale one answers 0.
    let style = unsafe { GetWindowLongPtrW(child, GWL_STYLE) } as u32;
    let pid = pid_of(child);
    // Another program's window embedded here is not asked anything.
    let foreign = pid != owner;
    let password = !foreign && password_control(child, &class, style)?;
    let mut text = if password || foreign {
        String::new()
    } else {
        read_text(child, LISTED_TEXT_CHARS)?
    };
    if text.chars().count() >= LISTED_TEXT_CHARS {
        text.push('…');
    }
    let checked = if !foreign && controls::is_button(&class, style) && checkable(style) {
        Some(send(child, BM_GETCHECK, 0, 0)? == 1)
    } else {
        None
    };
    Ok(Control {
        handle: child as isize,
        pid,
        // SAFETY: a query by handle; a stale one answers 0.
        id: unsafe { GetDlgCtrlID(child) },
        rect: rect_of(child),
        // SAFETY: a query by handle; a stale one answers false.
        enabled: unsafe { IsWindowEnabled(child) != 0 },
        // SAFETY: a query by handle; a stale one answers false.
        visible: unsafe { IsWindowVisible(child) != 0 },
        class,
        text,
        checked,
        password,
        style,
    })
}

/// Button styles that hold a checked state.
fn checkable(style: u32) -> bool {
    matches!(style & 0x0F, 2 | 3 | 4 | 5 | 6 | 9)
}

impl Windowing for Win32 {
    fn windows(&self) -> Vec<WindowInfo> {
        let mut names = Vec::new();
        top_level_handles()
            .into_iter()
            // SAFETY: a query by handle; a stale one answers false.
            .filter(|&h| unsafe { IsWindowVisible(h) != 0 })
            .map(|h| info(h, &mut names))
            .collect()
    }

    fn window(&self, h: isize) -> Option<WindowInfo> {
        let h = hwnd(h);
        if !is_top_level(h) {
            return None;
        }
        // A handle may be written short (its low word); the window's own
        // full handle is what the foreground and the z-order report.
        // SAFETY: a query by handle; a stale one answers null, handled below.
        let full = unsafe { GetAncestor(h, GA_ROOT) };
        Some(info(if full.is_null() { h } else { full }, &mut Vec::new()))
    }

    fn foreground(&self) -> isize {
        // SAFETY: takes no arguments and returns a handle by value.
        unsafe { GetForegroundWindow() as isize }
    }

    fn window_pid(&self, h: isize) -> u32 {
        let h = hwnd(h);
        if is_top_level(h) {
            owner_of(h, &class_of(h)).0
        } else {
            pid_of(h)
        }
    }

    fn controls(&self, h: isize) -> Result<Vec<Control>, MessageError> {
        let parent = hwnd(h);
        // SAFETY: a query by handle; a stale one answers 0.
        if unsafe { IsWindow(parent) } == 0 {
            return Err(MessageError::Gone);
        }
        // A window Windows already knows is hung would cost a timeout per control.
        // SAFETY: a query by handle, sending no message.
        if unsafe { IsHungAppWindow(parent) } != 0 {
            return Err(MessageError::NotResponding);
        }
        let children = child_handles(parent);
        let owner = pid_of(parent);
        // Past the listing cap, another program's window still counts.
        let (listed, rest) = children.split_at(children.len().min(MAX_CONTROLS));
        let beyond: Vec<Control> = rest
            .iter()
            .filter(|&&c| pid_of(c) != owner)
            .map(|&c| Control {
                handle: c as isize,
                pid: pid_of(c),
                ..Control::default()
            })
            .collect();
        let children = listed.to_vec();
        // Each message has its timeout; a window that answers each one
        // just in time must not hold the call for hours.
        let started = std::time::Instant::now();
        let mut out = Vec::with_capacity(children.len());
        for child in children {
            if started.elapsed() > LISTING_BUDGET {
                return Err(MessageError::NotResponding);
            }
            out.push(control_of(child, owner)?);
        }
        out.extend(beyond);
        Ok(out)
    }

    fn click_button(&self, control: isize) -> Result<(), MessageError> {
        send(hwnd(control), BM_CLICK, 0, 0).map(drop)
    }

    fn set_text(&self, control: isize, text: &str) -> Result<(), MessageError> {
        let text = wide(text);
        send(hwnd(control), WM_SETTEXT, 0, text.as_ptr() as isize).map(drop)
    }

    fn text(&self, control: isize) -> Result<String, MessageError> {
        read_text(hwnd(control), READ_BACK_CHARS)
    }

    fn default_action(&self, control: isize) -> Result<(), String> {
        // Through COM and the target's WM_GETOBJECT, which a hung window
        // never answers.
        bounded(
            Duration::from_millis(u64::from(MESSAGE_TIMEOUT_MS)),
            move || crate::uia::default_action(control),
        )
    }

    fn scroll(
        &self,
        control: isize,
        direction: Direction,
        lines: u32,
    ) -> Result<Option<ScrollMove>, MessageError> {
        let h = hwnd(control);
        let (bar, message, code) = match direction {
            Direction::Up => (SB_VERT, WM_VSCROLL, SB_LINEUP),
            Direction::Down => (SB_VERT, WM_VSCROLL, SB_LINEDOWN),
            Direction::Left => (SB_HORZ, WM_HSCROLL, SB_LINELEFT),
            Direction::Right => (SB_HORZ, WM_HSCROLL, SB_LINERIGHT),
        };
        // Windows keeps scroll bar state where any process reads it; Wine
        // keeps it in the owning process, so edits and list boxes are
        // also asked for their top line, which works everywhere.
        let class = class_of(h).to_ascii_lowercase();
        let top_line = match (bar, class.as_str()) {
            (SB_VERT, c) if controls::is_edit(c) => Some(0x00CE /* EM_GETFIRSTVISIBLELINE */),
            (SB_VERT, "listbox") => Some(LB_GETTOPINDEX),
            _ => None,
        };
        let position = || -> Result<Option<i32>, MessageError> {
            // SAFETY: SCROLLINFO is plain integers; all zeroes is valid.
            let mut si: SCROLLINFO = unsafe { std::mem::zeroed() };
            si.cbSize = size_of::<SCROLLINFO>() as u32;
            si.fMask = SIF_ALL;
            // SAFETY: `si` is writable and its `cbSize` says its size, as the
            // call requires; a stale handle makes it fail.
            if unsafe { GetScrollInfo(h, bar, &mut si) } != 0 && si.nMax > si.nMin {
                return Ok(Some(si.nPos));
            }
            match top_line {
                Some(message) => Ok(Some(send(h, message, 0, 0)? as i32)),
                None => Ok(None),
            }
        };
        let Some(from) = position()? else {
            return Ok(None);
        };
        for _ in 0..lines {
            send(h, message, code as usize, 0)?;
        }
        Ok(Some((from, position()?.unwrap_or(from))))
    }

    fn capture(&self, h: isize, method: CaptureMethod) -> Result<Frame, String> {
        // PrintWindow sends WM_PRINT without a timeout: a window that does
        // not answer a probe is not asked, and one that hangs after the
        // probe is left to the abandoned worker.
        if method == CaptureMethod::Print && send(hwnd(h), WM_NULL, 0, 0).is_err() {
            return Err("the window is not responding".into());
        }
        bounded(
            Duration::from_millis(u64::from(MESSAGE_TIMEOUT_MS) * 2),
            move || capture_now(hwnd(h), method),
        )
    }

    fn show(&self, h: isize, mode: ShowMode) {
        let h = hwnd(h);
        let how = match mode {
            ShowMode::NoActivate => SW_SHOWNOACTIVATE,
            ShowMode::Hide => SW_HIDE,
            // SAFETY: a query by handle; a stale one answers 0.
            ShowMode::Restore if unsafe { IsIconic(h) } != 0 => SW_RESTORE,
            ShowMode::Restore => SW_SHOW,
        };
        // Never ShowWindow: on another program's hung window it waits forever.
        // SAFETY: a handle and a constant; a stale handle makes it fail.
        unsafe { ShowWindowAsync(h, how) };
    }

    fn set_foreground(&self, h: isize) -> bool {
        // SAFETY: a handle by value; a stale one makes the call fail.
        let done = unsafe { SetForegroundWindow(hwnd(h)) != 0 };
        // Activation reaches the window as messages of its own thread; a
        // message sent behind them returns once they are handled, so the
        // keys that follow find the focus where the window put it.
        let _ = send(hwnd(h), WM_NULL, 0, 0);
        done
    }

    fn focus(&self, control: isize) -> Option<isize> {
        // SetFocus sends messages without a timeout: probe first, and do
        // it on a worker that is abandoned if the window stops answering.
        send(hwnd(control), WM_NULL, 0, 0).ok()?;
        bounded(
            Duration::from_millis(u64::from(MESSAGE_TIMEOUT_MS)),
            move || Ok(focus_inside(hwnd(control))),
        )
        .ok()
        .flatten()
    }

    fn is_password(&self, control: isize) -> bool {
        let h = hwnd(control);
        // SAFETY: a query by handle; a stale one answers 0.
        let style = unsafe { GetWindowLongPtrW(h, GWL_STYLE) } as u32;
        // A control that does not answer is not known to be safe.
        password_control(h, &class_of(h), style).unwrap_or(true)
    }

    fn check_keys(&self, strokes: &[Stroke]) -> Result<(), String> {
        let mut scratch = Vec::new();
        strokes.iter().try_for_each(|s| key_inputs(s, &mut scratch))
    }

    fn window_at(&self, x: i32, y: i32) -> (isize, u32) {
        // SAFETY: a point by value, then queries on the handle it returns
        // (checked for null); no memory is passed.
        unsafe {
            let h = WindowFromPoint(POINT { x, y });
            if h.is_null() {
                return (0, 0);
            }
            (GetAncestor(h, GA_ROOT) as isize, pid_of(h))
        }
    }

    fn see_through(&self, h: isize) -> bool {
        let h = hwnd(h);
        // SAFETY: a query by handle; a stale one answers 0.
        let ex = unsafe { GetWindowLongPtrW(h, GWL_EXSTYLE) } as u32;
        let mut box_: RECT = RECT {
            left: 0,
            top: 0,
            right: 0,
            bottom: 0,
        };
        // GetWindowRgnBox answers ERROR (0) when the window has no region.
        // SAFETY: `box_` is a writable RECT; a stale handle makes it fail.
        let shaped = unsafe { GetWindowRgnBox(h, &mut box_) } != 0;
        ex & (WS_EX_LAYERED | WS_EX_TRANSPARENT) != 0 || shaped
    }

    fn best_fit_ascii(&self, c: char) -> Option<u8> {
        wamcp_platform::ansi::best_fit_ascii(c)
    }

    fn send_keys(&self, strokes: &[Stroke]) -> Result<(), String> {
        let mut inputs = Vec::new();
        for stroke in strokes {
            key_inputs(stroke, &mut inputs)?;
        }
        send_inputs(&inputs)
    }

    fn shortcut(&self, lnk: &Path) -> Result<(PathBuf, String), String> {
        crate::shell::read_shortcut(lnk)
    }

    fn start_menu(&self, title: &str) -> Option<PathBuf> {
        crate::shortcuts::find_in(&crate::shell::start_menu_roots(), title)
    }

    fn activate(&self, app_id: &str, arguments: &str) -> Result<Launched, String> {
        let pid = crate::shell::activate(app_id, arguments)?;
        // SAFETY: a query right by process id; the handle, when there is
        // one, is owned (and closed once) by ProcessHandle.
        let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if process.is_null() {
            return Err(format!("process {pid} ended as it started"));
        }
        Ok(Launched {
            pid,
            reservation: Box::new(ProcessHandle(process as isize)),
        })
    }

    fn pointer_click(&self, x: i32, y: i32, press: Press) -> Result<(), String> {
        let (dx, dy) = absolute(x, y);
        let flags = MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK;
        let (down, up, times) = match press {
            Press::Left => (MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, 1),
            Press::Double => (MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, 2),
            Press::Right => (MOUSEEVENTF_RIGHTDOWN, MOUSEEVENTF_RIGHTUP, 1),
        };
        let mut inputs = vec![mouse(dx, dy, 0, flags | MOUSEEVENTF_MOVE)];
        for _ in 0..times {
            inputs.push(mouse(dx, dy, 0, flags | down));
            inputs.push(mouse(dx, dy, 0, flags | up));
        }
        // One batch: nothing the user does lands between the two clicks
        // of a double click, which Windows pairs by time and place.
        send_inputs(&inputs)
    }

    fn close(&self, h: isize) -> Result<(), String> {
        // SAFETY: a handle and constants; a stale handle makes it fail.
        match unsafe { PostMessageW(hwnd(h), WM_CLOSE, 0, 0) } {
            0 => Err(format!(
                "WM_CLOSE could not be posted ({})",
                std::io::Error::last_os_error()
            )),
            _ => Ok(()),
        }
    }

    fn place(&self, h: isize, rect: [i32; 4]) -> Result<(), String> {
        let flags = SWP_NOACTIVATE | SWP_NOZORDER | SWP_NOOWNERZORDER | SWP_ASYNCWINDOWPOS;
        // SAFETY: a handle and plain values; a stale handle makes it fail.
        // SWP_ASYNCWINDOWPOS: a hung window's thread is not waited for.
        let done = unsafe {
            SetWindowPos(
                hwnd(h),
                std::ptr::null_mut(),
                rect[0],
                rect[1],
                rect[2] - rect[0],
                rect[3] - rect[1],
                flags,
            )
        };
        match done {
            0 => Err(format!(
                "SetWindowPos failed ({})",
                std::io::Error::last_os_error()
            )),
            _ => Ok(()),
        }
    }

    fn wheel(&self, x: i32, y: i32, notches: i32, horizontal: bool) -> Result<(), String> {
        let (dx, dy) = absolute(x, y);
        let flags = MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK;
        let wheel = if horizontal {
            MOUSEEVENTF_HWHEEL
        } else {
            MOUSEEVENTF_WHEEL
        };
        send_inputs(&[
            mouse(dx, dy, 0, flags | MOUSEEVENTF_MOVE),
            mouse(dx, dy, (notches * 120) as u32, flags | wheel),
        ])
    }

    fn launch(&self, program: &Path, command_line: &str) -> Result<Launched, String> {
        let application = wide(&program.to_string_lossy());
        let mut line = wide(command_line);
        // SAFETY: STARTUPINFOW and PROCESS_INFORMATION are integers and
        // nullable pointers, valid zeroed, and `cb` gives the size. The
        // application name is NUL-terminated and `line` a writable
        // NUL-terminated buffer, as CreateProcessW requires; both outlive the
        // call. On success the two handles are ours: the thread's is closed
        // at once, the process's is owned (and closed once) by ProcessHandle.
        unsafe {
            let mut startup: STARTUPINFOW = std::mem::zeroed();
            startup.cb = size_of::<STARTUPINFOW>() as u32;
            startup.dwFlags = STARTF_USESHOWWINDOW;
            startup.wShowWindow = SW_SHOWNOACTIVATE as u16;
            let mut process: PROCESS_INFORMATION = std::mem::zeroed();
            // A console program gets a console of its own, without a window
            // (which would take the foreground): sharing the server's would
            // put its output into the MCP stream and let it read the
            // client's requests.
            let ok = CreateProcessW(
                application.as_ptr(),
                line.as_mut_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
                CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW,
                std::ptr::null(),
                std::ptr::null(),
                &startup,
                &mut process,
            );
            if ok == 0 {
                return Err(std::io::Error::last_os_error().to_string());
            }
            CloseHandle(process.hThread);
            Ok(Launched {
                pid: process.dwProcessId,
                reservation: Box::new(ProcessHandle(process.hProcess as isize)),
            })
        }
    }

    fn trusted_program(&self, programs: &ProgramSearch, path: &Path) -> bool {
        // The folder named, and the one a link there leads to.
        programs.is_trusted_file(path)
    }

    fn find_program(&self, programs: &ProgramSearch, name: &str) -> Option<PathBuf> {
        programs.find_program(name)
    }
}

fn capture_now(h: HWND, method: CaptureMethod) -> Result<Frame, String> {
    let (width, height) = capture_size(h)?;
    // SAFETY: every device context and the bitmap are made here and released
    // or deleted once before returning, the bitmap after being selected out
    // again, as GetDIBits requires (`read_pixels` runs after that, on the
    // size `capture_size` checked).
    let (drawn, rows, bgra) = unsafe {
        let screen = GetDC(std::ptr::null_mut());
        let memory = CreateCompatibleDC(screen);
        let bitmap = CreateCompatibleBitmap(screen, width as i32, height as i32);
        let old = SelectObject(memory, bitmap);
        let drawn = draw(h, memory, method, width, height);
        SelectObject(memory, old);
        let (rows, bgra) = if drawn {
            read_pixels(memory, bitmap, width, height)
        } else {
            (0, Vec::new())
        };
        DeleteObject(bitmap);
        DeleteDC(memory);
        ReleaseDC(std::ptr::null_mut(), screen);
        (drawn, rows, bgra)
    };
    if !drawn {
        return Err(match method {
            CaptureMethod::Print => "PrintWindow refused".into(),
            CaptureMethod::Screen => "BitBlt refused".into(),
        });
    }
    if rows != height as i32 {
        return Err("the pixels could not be read".into());
    }
    Ok(Frame {
        width,
        height,
        bgra,
    })
}

/// The width and height of window `h`, refused when it has no area or is
/// larger than a capture may be.
fn capture_size(h: HWND) -> Result<(u32, u32), String> {
    let [left, top, right, bottom] = rect_of(h);
    let (width, height) = ((right - left).max(0) as u32, (bottom - top).max(0) as u32);
    if width == 0 || height == 0 {
        return Err("the window has no area".into());
    }
    if width > MAX_CAPTURE_EDGE
        || height > MAX_CAPTURE_EDGE
        || u64::from(width) * u64::from(height) > MAX_CAPTURE_PIXELS
    {
        return Err(format!(
            "the window is {width}x{height}, larger than a capture may be"
        ));
    }
    Ok((width, height))
}

/// Draws window `h` into the `width` x `height` bitmap selected into
/// `memory`, by `method`; `false` when the drawing call refused.
fn draw(h: HWND, memory: HDC, method: CaptureMethod, width: u32, height: u32) -> bool {
    // SAFETY: device contexts and windows are looked up by the system, never
    // dereferenced; the window's device context is released once, here. A
    // stale `h` only makes the drawing calls fail.
    unsafe {
        match method {
            CaptureMethod::Print => PrintWindow(h, memory, 2 /* PW_RENDERFULLCONTENT */) != 0,
            CaptureMethod::Screen => {
                let source = GetWindowDC(h);
                let ok = BitBlt(
                    memory,
                    0,
                    0,
                    width as i32,
                    height as i32,
                    source,
                    0,
                    0,
                    SRCCOPY,
                ) != 0;
                ReleaseDC(h, source);
                ok
            }
        }
    }
}

/// The pixels of `bitmap` (`width` x `height`, selected out of `memory`)
/// as top-down BGRA, and how many rows GetDIBits copied.
///
/// # Safety
/// `width * height * 4` must fit in a u32, as `capture_size` ensures.
unsafe fn read_pixels(memory: HDC, bitmap: HBITMAP, width: u32, height: u32) -> (i32, Vec<u8>) {
    // SAFETY: BITMAPINFO is plain integers (valid zeroed) and describes a
    // top-down 32-bit `width` x `height` image, which is exactly what `bgra`
    // holds (4 bytes a pixel; the size checks in `capture_size` keep it
    // within u32), so GetDIBits writes inside it.
    unsafe {
        let mut header: BITMAPINFO = std::mem::zeroed();
        header.bmiHeader = BITMAPINFOHEADER {
            biSize: size_of::<BITMAPINFOHEADER>() as u32,
            biWidth: width as i32,
            biHeight: -(height as i32),
            biPlanes: 1,
            biBitCount: 32,
            biCompression: BI_RGB,
            ..std::mem::zeroed()
        };
        let mut bgra = vec![0u8; (width * height * 4) as usize];
        let rows = GetDIBits(
            memory,
            bitmap,
            0,
            height,
            bgra.as_mut_ptr() as *mut c_void,
            &mut header,
            DIB_RGB_COLORS,
        );
        (rows, bgra)
    }
}

/// An open handle to a started process, closed when dropped: while it is
/// open, Windows gives the process id to no other process.
struct ProcessHandle(isize);

impl Drop for ProcessHandle {
    fn drop(&mut self) {
        // SAFETY: holds the process handle CreateProcessW gave `launch`, owned
        // by nothing else and closed once, here.
        unsafe { CloseHandle(self.0 as _) };
    }
}

/// Focus inside `target`, set there when it is elsewhere: focus is per
/// input queue, so the calling thread joins the target's for the call.
fn focus_inside(target: HWND) -> Option<isize> {
    // SAFETY: handles and thread ids by value (a stale one makes a call fail;
    // the thread-id query takes a null process-id pointer, which it allows),
    // and the input queues attached here are detached again before return.
    unsafe {
        let theirs = GetWindowThreadProcessId(target, std::ptr::null_mut());
        let ours = GetCurrentThreadId();
        let joined = theirs != ours && AttachThreadInputSafe(ours, theirs, true);
        let inside =
            |focus: HWND| !focus.is_null() && (focus == target || IsChild(target, focus) != 0);
        if !inside(GetFocus()) {
            SetFocus(target);
        }
        let focused = GetFocus();
        if joined {
            AttachThreadInputSafe(ours, theirs, false);
        }
        inside(focused).then_some(focused as isize)
    }
}

#[allow(non_snake_case)]
unsafe fn AttachThreadInputSafe(ours: u32, theirs: u32, attach: bool) -> bool {
    // SAFETY: thread ids by value; no memory is involved.
    unsafe {
        windows_sys::Win32::System::Threading::AttachThreadInput(ours, theirs, attach as i32) != 0
    }
}

fn send_inputs(inputs: &[INPUT]) -> Result<(), String> {
    // SAFETY: the pointer, count and element size all describe `inputs`,
    // which outlives the call.
    let sent = unsafe {
        SendInput(
            inputs.len() as u32,
            inputs.as_ptr(),
            size_of::<INPUT>() as i32,
        )
    };
    if sent as usize == inputs.len() {
        Ok(())
    } else {
        Err(format!(
            "{sent} of {} input events were accepted ({})",
            inputs.len(),
            std::io::Error::last_os_error()
        ))
    }
}

fn keyboard(vk: u16, scan: u16, flags: u32) -> INPUT {
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: windows_sys::Win32::UI::Input::KeyboardAndMouse::INPUT_0 {
            ki: KEYBDINPUT {
                wVk: vk,
                wScan: scan,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

fn mouse(dx: i32, dy: i32, data: u32, flags: u32) -> INPUT {
    INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: windows_sys::Win32::UI::Input::KeyboardAndMouse::INPUT_0 {
            mi: MOUSEINPUT {
                dx,
                dy,
                mouseData: data,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

/// A screen point in the 0..65535 coordinates of the virtual desktop.
fn absolute(x: i32, y: i32) -> (i32, i32) {
    // SAFETY: constants in, integers out; no memory is involved.
    let (left, top, width, height) = unsafe {
        (
            GetSystemMetrics(SM_XVIRTUALSCREEN),
            GetSystemMetrics(SM_YVIRTUALSCREEN),
            GetSystemMetrics(SM_CXVIRTUALSCREEN).max(1),
            GetSystemMetrics(SM_CYVIRTUALSCREEN).max(1),
        )
    };
    let scale = |v: i32, origin: i32, size: i32| {
        (((v - origin) as i64 * 65535) / (size - 1).max(1) as i64) as i32
    };
    (scale(x, left, width), scale(y, top, height))
}

/// Keys whose scan codes need the extended flag (the arrow block).
fn extended(vk: u16) -> bool {
    matches!(vk, 0x21..=0x28 | 0x2D | 0x2E | 0x5B | 0x5C | 0x5D | 0x90)
}

fn key_inputs(stroke: &Stroke, out: &mut Vec<INPUT>) -> Result<(), String> {
    let m = stroke.modifiers;
    let held: Vec<u16> = [
        (m.ctrl, 0x11u16),
        (m.alt, 0x12),
        (m.shift, 0x10),
        (m.win, 0x5B),
    ]
    .into_iter()
    .filter_map(|(on, vk)| on.then_some(vk))
    .collect();
    let tap = |vk: u16, out: &mut Vec<INPUT>| {
        let flags = if extended(vk) {
            KEYEVENTF_EXTENDEDKEY
        } else {
            0
        };
        out.push(keyboard(vk, 0, flags));
        out.push(keyboard(vk, 0, flags | KEYEVENTF_KEYUP));
    };
    match stroke.key {
        // Plain characters go as Unicode, whatever the keyboard layout.
        Key::Char(c) if !m.any() => {
            let mut units = [0u16; 2];
            for &unit in c.encode_utf16(&mut units).iter() {
                out.push(keyboard(0, unit, KEYEVENTF_UNICODE));
                out.push(keyboard(0, unit, KEYEVENTF_UNICODE | KEYEVENTF_KEYUP));
            }
            return Ok(());
        }
        Key::Char(c) => {
            let mut units = [0u16; 2];
            let encoded = c.encode_utf16(&mut units);
            let scan = if encoded.len() == 1 {
                // SAFETY: a character by value; no memory is involved.
                unsafe { VkKeyScanW(encoded[0]) }
            } else {
                -1
            };
            if scan == -1 {
                return Err(format!(
                    "'{c}' has no key on this keyboard layout to combine with modifiers"
                ));
            }
            // The layout types it with Ctrl or Alt (AltGr: `@` on a German
            // keyboard); with the caller's modifiers on top it would be
            // another chord (Ctrl+`@` would go out as Ctrl+Q).
            if (scan as u16) & 0x600 != 0 {
                return Err(format!(
                    "'{c}' needs AltGr on this keyboard layout and cannot be combined with modifiers"
                ));
            }
            let vk = (scan as u16) & 0xFF;
            let shift_needed = (scan as u16) & 0x100 != 0 && !m.shift;
            for &vk in &held {
                out.push(keyboard(vk, 0, 0));
            }
            if shift_needed {
                out.push(keyboard(0x10, 0, 0));
            }
            tap(vk, out);
            if shift_needed {
                out.push(keyboard(0x10, 0, KEYEVENTF_KEYUP));
            }
        }
        Key::Virtual(vk) => {
            for &vk in &held {
                out.push(keyboard(vk, 0, 0));
            }
            tap(vk, out);
        }
    }
    for &vk in held.iter().rev() {
        out.push(keyboard(vk, 0, KEYEVENTF_KEYUP));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use windows_sys::Win32::UI::HiDpi::{
        DPI_AWARENESS_PER_MONITOR_AWARE, GetAwarenessFromDpiAwarenessContext,
        GetThreadDpiAwarenessContext,
    };

    #[test]
    fn the_desktop_sees_physical_pixels_on_every_monitor() {
        let _desktop = crate::native(Vec::new(), Vec::new());
        // Any thread, not only the one that made the desktop.
        let awareness = std::thread::spawn(|| {
            // SAFETY: queries of the calling thread's own setting.
            unsafe { GetAwarenessFromDpiAwarenessContext(GetThreadDpiAwarenessContext()) }
        })
        .join()
        .unwrap();
        assert_eq!(awareness, DPI_AWARENESS_PER_MONITOR_AWARE);
    }

    #[test]
    fn a_window_without_dwm_or_a_frame_is_its_own_owners() {
        // Wine has no compositor that cloaks, and no UWP frames.
        for window in top_level_handles().into_iter().take(50) {
            assert!(!cloaked(window));
            assert_eq!(Win32.window_pid(window as isize), pid_of(window));
            assert_eq!(owner_of(window, &class_of(window)).1, None);
        }
        // The desktop window answers like any other: not cloaked.
        // SAFETY: takes no arguments.
        assert!(!cloaked(unsafe { GetDesktopWindow() }));
    }
}
