//! A scripted desktop for testing how the tools decide and report, on any
//! platform. Real windows are exercised under Wine (`tests/` of `wamcp`).

use crate::accessibility::FocusedElement;
use crate::accessibility::Node;
use crate::accessibility::fake::{FakeTree, FocusAnswer};
use crate::image::Frame;
use crate::system::{
    CaptureMethod, Launched, MessageError, Press, ScrollMove, ShowMode, WindowInfo, Windowing,
};
use crate::{Desktop, Direction};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::desktop::controls::Control;
use wamcp_policy::desktop::keys::{Key, Stroke};
use wamcp_policy::error::ToolError;

#[derive(Default)]
struct State {
    windows: Vec<WindowInfo>,
    controls: HashMap<isize, Vec<Control>>,
    texts: HashMap<isize, String>,
    foreground: isize,
    hung: bool,
    /// `set_foreground` reports success and changes nothing (Windows'
    /// foreground lock, or a hidden window that never comes forward).
    foreground_lies: bool,
    /// The launched program takes the foreground this many times.
    grabs: u32,
    default_action_works: bool,
    /// Edits that store something other than what is sent.
    mangles: bool,
    print: Option<Frame>,
    screen: Option<Frame>,
    scroll: Option<ScrollMove>,
    /// The window on top at every point, when not the foreground one.
    on_top: Option<isize>,
    /// Where the focus is inside the foreground window.
    focused: Option<isize>,
    /// The ANSI code page turns fullwidth quotes into '"' (best fit).
    best_fit: bool,
    /// A Tab moves the focus to this control.
    tab_focuses: Option<isize>,
    /// How long each keystroke takes to send.
    key_time: Duration,
    /// What UI Automation says of the focus (shared with the fake tree),
    /// and after how many keystrokes it turns into a password field of
    /// the same window: a focus move inside a browser page.
    focus_answer: Option<FocusAnswer>,
    element_turns_password_after: Option<usize>,
    keys_sent: usize,
    /// `BM_CLICK` is not answered in time: the program is still handling
    /// it, and shows this window meanwhile (a modal dialog) if any.
    click_runs_on: Option<Option<WindowInfo>>,
    /// A window the program opens when a control's text is set (a
    /// search box that pops up suggestions).
    set_text_opens: Option<WindowInfo>,
    /// `BM_CLICK` makes this control appear in window 1 (a status text).
    click_adds: Option<Control>,
    /// The window asked to close opens this one instead (save changes?).
    close_asks: Option<WindowInfo>,
    /// The narrowest the program lets its window be.
    min_width: i32,
    /// Shortcuts by path: target and stored arguments.
    shortcuts: HashMap<PathBuf, (PathBuf, String)>,
    /// Start-menu shortcuts by title.
    start_menu: HashMap<String, PathBuf>,
    calls: Vec<String>,
}

#[derive(Clone, Default)]
struct Fake(Arc<Mutex<State>>);

impl Fake {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap()
    }
    fn log(&self, call: String) {
        self.state().calls.push(call);
    }
}

impl Windowing for Fake {
    fn windows(&self) -> Vec<WindowInfo> {
        self.state()
            .windows
            .iter()
            .filter(|w| w.visible)
            .cloned()
            .collect()
    }
    fn window(&self, hwnd: isize) -> Option<WindowInfo> {
        self.state()
            .windows
            .iter()
            .find(|w| w.hwnd == hwnd)
            .cloned()
    }
    fn foreground(&self) -> isize {
        self.state().foreground
    }
    fn window_pid(&self, hwnd: isize) -> u32 {
        let s = self.state();
        let control = s.controls.values().flatten().find(|c| c.handle == hwnd);
        let window = s.windows.iter().find(|w| w.hwnd == hwnd);
        control
            .map(|c| c.pid)
            .or(window.map(|w| w.pid))
            .unwrap_or(0)
    }
    fn controls(&self, hwnd: isize) -> Result<Vec<Control>, MessageError> {
        let s = self.state();
        if s.hung {
            return Err(MessageError::NotResponding);
        }
        // A control's text is what was last set, as Windows would read it.
        let mut listed = s.controls.get(&hwnd).cloned().unwrap_or_default();
        for c in listed.iter_mut().filter(|c| !c.password) {
            if let Some(text) = s.texts.get(&c.handle) {
                c.text = text.clone();
            }
        }
        Ok(listed)
    }
    fn click_button(&self, control: isize) -> Result<(), MessageError> {
        self.log(format!("BM_CLICK {control}"));
        let mut s = self.state();
        if let Some(added) = s.click_adds.take() {
            s.controls.entry(1).or_default().push(added);
        }
        match s.click_runs_on.take() {
            None => Ok(()),
            Some(opened) => {
                s.windows.extend(opened);
                Err(MessageError::NotResponding)
            }
        }
    }
    fn set_text(&self, control: isize, text: &str) -> Result<(), MessageError> {
        self.log(format!("WM_SETTEXT {control}"));
        let stored = if self.state().mangles {
            text.replace('é', "?")
        } else {
            text.to_string()
        };
        let mut s = self.state();
        s.texts.insert(control, stored);
        let opened = s.set_text_opens.take();
        s.windows.extend(opened);
        Ok(())
    }
    fn text(&self, control: isize) -> Result<String, MessageError> {
        Ok(self
            .state()
            .texts
            .get(&control)
            .cloned()
            .unwrap_or_default())
    }
    fn default_action(&self, control: isize) -> Result<(), String> {
        if self.state().default_action_works {
            self.log(format!("DEFAULT_ACTION {control}"));
            return Ok(());
        }
        Err("E_NOTIMPL".into())
    }
    fn scroll(
        &self,
        control: isize,
        _: Direction,
        lines: u32,
    ) -> Result<Option<ScrollMove>, MessageError> {
        self.log(format!("SCROLL {control} {lines}"));
        Ok(self.state().scroll)
    }
    fn capture(&self, _: isize, method: CaptureMethod) -> Result<Frame, String> {
        let s = self.state();
        match method {
            CaptureMethod::Print => s.print.clone(),
            CaptureMethod::Screen => s.screen.clone(),
        }
        .ok_or_else(|| "refused".to_string())
    }
    fn show(&self, hwnd: isize, mode: ShowMode) {
        self.log(format!("SHOW {hwnd} {mode:?}"));
    }
    fn set_foreground(&self, hwnd: isize) -> bool {
        let mut s = self.state();
        if !s.foreground_lies {
            s.foreground = hwnd;
        }
        true
    }
    fn focus(&self, control: isize) -> Option<isize> {
        Some(self.state().focused.unwrap_or(control))
    }
    fn is_password(&self, control: isize) -> bool {
        self.state()
            .controls
            .values()
            .flatten()
            .any(|c| c.handle == control && c.password)
    }
    fn check_keys(&self, _: &[Stroke]) -> Result<(), String> {
        Ok(())
    }
    fn window_at(&self, _: i32, _: i32) -> (isize, u32) {
        let s = self.state();
        let root = s.on_top.unwrap_or(s.foreground);
        let pid = s
            .windows
            .iter()
            .find(|w| w.hwnd == root)
            .map_or(0, |w| w.pid);
        (root, pid)
    }
    fn see_through(&self, _: isize) -> bool {
        false
    }
    fn best_fit_ascii(&self, c: char) -> Option<u8> {
        (self.state().best_fit && c == '\u{ff02}').then_some(b'"')
    }
    fn send_keys(&self, strokes: &[Stroke]) -> Result<(), String> {
        // Not under the state's lock: other calls must be able to run.
        let key_time = self.state().key_time;
        std::thread::sleep(key_time);
        self.log(format!("KEYS {}", strokes.len()));
        let mut s = self.state();
        if strokes.iter().any(|k| k.key == Key::Virtual(0x09)) && s.tab_focuses.is_some() {
            s.focused = s.tab_focuses;
        }
        s.keys_sent += 1;
        if s.element_turns_password_after == Some(s.keys_sent)
            && let Some(answer) = &s.focus_answer
        {
            *answer.lock().unwrap() = element(true, 10);
        }
        Ok(())
    }
    fn pointer_click(&self, x: i32, y: i32, press: Press) -> Result<(), String> {
        match press {
            Press::Left => self.log(format!("POINTER {x},{y}")),
            other => self.log(format!("POINTER {x},{y} {other:?}")),
        }
        Ok(())
    }
    fn close(&self, hwnd: isize) -> Result<(), String> {
        self.log(format!("WM_CLOSE {hwnd}"));
        let mut s = self.state();
        match s.close_asks.take() {
            Some(prompt) => s.windows.push(prompt),
            None => s.windows.retain(|w| w.hwnd != hwnd),
        }
        Ok(())
    }
    fn place(&self, hwnd: isize, rect: [i32; 4]) -> Result<(), String> {
        self.log(format!("PLACE {hwnd} {rect:?}"));
        let mut s = self.state();
        let min_width = s.min_width;
        if let Some(w) = s.windows.iter_mut().find(|w| w.hwnd == hwnd) {
            // A program may keep a smallest size of its own.
            w.rect = [rect[0], rect[1], rect[2].max(rect[0] + min_width), rect[3]];
        }
        Ok(())
    }
    fn wheel(&self, x: i32, y: i32, notches: i32, _: bool) -> Result<(), String> {
        self.log(format!("WHEEL {x},{y} {notches}"));
        Ok(())
    }
    fn launch(&self, program: &Path, command_line: &str) -> Result<Launched, String> {
        self.log(format!("LAUNCH {} {command_line}", program.display()));
        let mut s = self.state();
        s.windows.push(window(900, "Launched", 77, "launched.exe"));
        Ok(Launched {
            pid: 77,
            reservation: Box::new(()),
        })
    }
    fn trusted_program(&self, _: &ProgramSearch, path: &Path) -> bool {
        !path.starts_with("/work")
    }
    fn find_program(&self, _: &ProgramSearch, name: &str) -> Option<PathBuf> {
        (name == "viewer.exe").then(|| PathBuf::from("/usr/bin/viewer.exe"))
    }
    fn shortcut(&self, lnk: &Path) -> Result<(PathBuf, String), String> {
        self.state()
            .shortcuts
            .get(lnk)
            .cloned()
            .ok_or_else(|| "no such shortcut".to_string())
    }
    fn start_menu(&self, title: &str) -> Option<PathBuf> {
        // Titles compare without case, as in the Start menu.
        let s = self.state();
        s.start_menu
            .iter()
            .find(|(t, _)| t.eq_ignore_ascii_case(title))
            .map(|(_, lnk)| lnk.clone())
    }
    fn activate(&self, app_id: &str, arguments: &str) -> Result<Launched, String> {
        self.log(format!("ACTIVATE {app_id} {arguments}"));
        self.state()
            .windows
            .push(window(901, "Calculator", 78, "CalculatorApp.exe"));
        Ok(Launched {
            pid: 78,
            reservation: Box::new(()),
        })
    }
}

/// The foreground goes to the launched program's window while it still
/// has grabs left, as a real program activates itself after start.
struct Grabbing(Fake);

impl std::ops::Deref for Grabbing {
    type Target = Fake;
    fn deref(&self) -> &Fake {
        &self.0
    }
}

fn window(hwnd: isize, title: &str, pid: u32, process: &str) -> WindowInfo {
    WindowInfo {
        hwnd,
        title: title.into(),
        class: "TestWindow".into(),
        pid,
        process: process.into(),
        host_pid: None,
        rect: [0, 0, 400, 300],
        visible: true,
        minimized: false,
        cloaked: false,
    }
}

fn control(handle: isize, class: &str, text: &str, id: i32) -> Control {
    Control {
        handle,
        pid: 10,
        class: class.into(),
        text: text.into(),
        id,
        rect: [10, 20, 110, 60],
        enabled: true,
        visible: true,
        ..Control::default()
    }
}

fn frame(colours: &[[u8; 4]]) -> Frame {
    Frame {
        width: colours.len() as u32,
        height: 1,
        bgra: colours.concat(),
    }
}

/// A desktop with an in-scope app window (hwnd 1, pid 10), an out-of-scope
/// one (hwnd 2, pid 20) and the desktop (hwnd 5) in front.
fn setup(tree: Option<Vec<Node>>) -> (Fake, Desktop) {
    let (fake, desktop, _) = setup_with_focus(tree);
    (fake, desktop)
}

/// Also the handle that sets what UI Automation says of the focus.
fn setup_with_focus(tree: Option<Vec<Node>>) -> (Fake, Desktop, FocusAnswer) {
    let fake = Fake::default();
    {
        let mut s = fake.state();
        s.windows = vec![
            window(1, "App", 10, "app.exe"),
            window(2, "Bank", 20, "bank.exe"),
        ];
        s.foreground = 5;
        let mut password = control(13, "Edit", "", 103);
        password.password = true;
        password.style = 0x20;
        s.controls.insert(
            1,
            vec![
                control(11, "Button", "&OK", 101),
                control(12, "Edit", "", 102),
                password,
                control(14, "Static", "Status", 104),
            ],
        );
        s.controls
            .insert(2, vec![control(21, "Button", "Pay", 201)]);
        s.print = Some(frame(&[[1, 2, 3, 0], [4, 5, 6, 0]]));
    }
    let tree = FakeTree::new(tree);
    let focus = tree.focus.clone();
    fake.state().focus_answer = Some(focus.clone());
    let desktop = Desktop::new(
        Box::new(fake.clone()),
        Arc::new(tree),
        vec!["viewer".into(), "/work/proj/tool.exe".into()],
        vec!["APP".into()],
    );
    (fake, desktop, focus)
}

fn kind(e: ToolError) -> &'static str {
    e.kind.as_str()
}

/// How many keystroke batches reached the fake.
fn keys_sent(fake: &Fake) -> usize {
    calls(fake).iter().filter(|c| c.starts_with("KEYS")).count()
}

/// What UI Automation answers for a focused element.
fn element(password: bool, pid: u32) -> Result<Option<FocusedElement>, String> {
    Ok(Some(FocusedElement { password, pid }))
}

/// One string field of every object in a report's list.
fn strings<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|item| item[key].as_str().unwrap())
        .collect()
}

fn calls(fake: &Fake) -> Vec<String> {
    fake.state().calls.clone()
}

#[test]
fn a_button_is_clicked_by_message_without_touching_the_foreground() {
    let (fake, desktop) = setup(Some(vec![]));
    let done = desktop.click(1, "ok", false).unwrap();
    assert_eq!(done["route"], "BM_CLICK");
    assert_eq!(done["foreground_unchanged"], true);
    assert!(done.get("opened").is_none(), "{done}");
    assert_eq!(calls(&fake), ["BM_CLICK 11"]);
}

#[test]
fn every_action_names_the_windows_of_the_program_it_opened() {
    let (fake, desktop) = setup(Some(vec![]));
    let mut popup = window(3, "Suggestions", 10, "app.exe");
    popup.class = "Popup".into();
    fake.state().set_text_opens = Some(popup);
    // Another program's window, opened at the same time, is not named.
    fake.state().windows.push(window(6, "Mail", 30, "mail.exe"));
    let done = desktop.type_text(1, "id:102", "wamcp", false).unwrap();
    assert_eq!(
        done["opened"],
        serde_json::json!([{ "hwnd": 3, "title": "Suggestions", "class": "Popup" }]),
        "{done}"
    );
    // Already open before the next action: not opened by it.
    let done = desktop.type_text(1, "id:102", "wamcp mcp", false).unwrap();
    assert!(done.get("opened").is_none(), "{done}");
}

#[test]
fn a_click_that_opens_a_modal_dialog_is_done_and_names_the_dialog() {
    let (fake, desktop) = setup(Some(vec![]));
    let mut old_dialog = window(4, "Old", 10, "app.exe");
    old_dialog.class = "#32770".into();
    let mut dialog = window(3, "Confirm", 10, "app.exe");
    dialog.class = "#32770".into();
    let other = window(6, "Mail", 30, "mail.exe");
    fake.state().windows.push(old_dialog);
    fake.state().click_runs_on = Some(Some(dialog));
    fake.state().windows.push(other);
    let done = desktop.click(1, "ok", false).unwrap();
    assert_eq!(done["route"], "BM_CLICK");
    assert_eq!(
        done["opened"],
        serde_json::json!([{ "hwnd": 3, "title": "Confirm", "class": "#32770" }])
    );
    assert_eq!(calls(&fake), ["BM_CLICK 11"]);
}

#[test]
fn a_click_still_being_handled_is_never_offered_for_a_retry() {
    let (fake, desktop) = setup(Some(vec![]));
    // Meanwhile another program opens a window; next time the app opens
    // one that is cloaked (on another virtual desktop): neither is a
    // dialog the user could see.
    let mut elsewhere = window(6, "Mail", 30, "mail.exe");
    elsewhere.rect = [500, 500, 600, 600];
    fake.state().click_runs_on = Some(Some(elsewhere));
    let mut hidden = window(7, "Other desktop", 10, "app.exe");
    hidden.cloaked = true;
    let err = desktop.click(1, "ok", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "WINDOW_NOT_RESPONDING");
    assert_eq!(err.retry, wamcp_policy::error::Retry::Hopeless);
    assert!(err.message.contains("'&OK' was clicked"), "{}", err.message);
    assert!(
        err.recovery
            .iter()
            .any(|r| r.contains("DO NOT click again"))
    );
    fake.state().click_runs_on = Some(Some(hidden));
    let err = desktop.click(1, "ok", false).unwrap_err();
    assert_eq!(err.retry, wamcp_policy::error::Retry::Hopeless);
    assert_eq!(calls(&fake), ["BM_CLICK 11", "BM_CLICK 11"]);
}

#[test]
fn cloaked_windows_are_not_listed_and_do_not_cover() {
    let (fake, desktop) = setup(Some(vec![]));
    let mut elsewhere = window(8, "On another desktop", 30, "mail.exe");
    elsewhere.cloaked = true;
    fake.state().windows.insert(0, elsewhere);
    let listed = desktop.windows();
    assert_eq!(listed["count"], 2);
    assert_eq!(strings(&listed["windows"], "title"), ["App", "Bank"]);
    // Only the pixels on screen are left, which a window in front spoils.
    fake.state().print = None;
    fake.state().screen = Some(frame(&[[1, 2, 3, 0], [4, 5, 6, 0]]));
    let seen = desktop.see(1, false, None).unwrap().report;
    assert_eq!(seen["image"]["method"], "BitBlt", "{seen}");
    // The same window uncloaked (back on this desktop) covers the app.
    fake.state().windows[0].cloaked = false;
    let seen = desktop.see(1, false, None).unwrap().report;
    let why = seen["image_unavailable"].as_str().unwrap();
    assert!(why.contains("'On another desktop' covers"), "{why}");
}

#[test]
fn a_uwp_frame_is_the_apps_and_its_furniture_is_no_other_program() {
    let (fake, _) = setup(Some(vec![]));
    let mut frame_window = window(9, "Calculator", 40, "CalculatorApp.exe");
    frame_window.class = crate::frames::FRAME_CLASS.into();
    frame_window.host_pid = Some(7);
    let mut title_bar = control(91, "ApplicationFrameTitleBarWindow", "", 0);
    title_bar.pid = 7;
    let mut content = control(92, crate::frames::CONTENT_CLASS, "Calculator", 0);
    content.pid = 40;
    let mut embedded = control(93, "Edit", "", 0);
    embedded.pid = 20;
    {
        let mut s = fake.state();
        s.windows.push(frame_window);
        s.controls.insert(9, vec![title_bar, content]);
    }
    let desktop = Desktop::new(
        Box::new(fake.clone()),
        Arc::new(FakeTree::new(Some(vec![]))),
        Vec::new(),
        vec!["calculatorapp.exe".into()],
    );
    let seen = desktop.see(9, false, None).unwrap().report;
    assert_eq!(seen["process"], "CalculatorApp.exe");
    assert_eq!(
        strings(&seen["controls"], "class"),
        [crate::frames::CONTENT_CLASS]
    );
    assert_eq!(seen["image"]["method"], "PrintWindow", "{seen}");
    // A third program's window inside the frame is still foreign.
    fake.state().controls.get_mut(&9).unwrap().push(embedded);
    let seen = desktop.see(9, false, None).unwrap().report;
    assert_eq!(seen["foreign_controls_hidden"], 1, "{seen}");
    assert!(seen.get("image").is_none(), "{seen}");
}

#[test]
fn windows_outside_the_scope_are_refused_and_left_alone() {
    let (fake, desktop) = setup(Some(vec![]));
    assert_eq!(
        kind(desktop.click(2, "Pay", true).unwrap_err()),
        "WINDOW_OUT_OF_SCOPE"
    );
    assert_eq!(
        kind(desktop.type_text(2, "Pay", "x", true).unwrap_err()),
        "WINDOW_OUT_OF_SCOPE"
    );
    assert_eq!(
        kind(desktop.key(2, "{ENTER}", true).unwrap_err()),
        "WINDOW_OUT_OF_SCOPE"
    );
    assert_eq!(kind(desktop.reveal(2).unwrap_err()), "WINDOW_OUT_OF_SCOPE");
    assert_eq!(
        kind(desktop.see(2, true, None).err().unwrap()),
        "WINDOW_OUT_OF_SCOPE"
    );
    assert_eq!(
        kind(desktop.click(99, "Pay", true).unwrap_err()),
        "WINDOW_NOT_FOUND"
    );
    assert!(calls(&fake).is_empty());
    let listed = desktop.windows();
    assert_eq!(listed["windows"][0]["in_scope"], true);
    assert_eq!(listed["windows"][1]["in_scope"], false);
}

#[test]
fn a_control_without_a_background_route_gets_the_gate_until_allowed() {
    let (fake, desktop) = setup(Some(vec![]));
    let gate = desktop.click(1, "Status", false).unwrap();
    assert_eq!(gate["needs_permission"], true);
    assert_eq!(gate["ok"], false);
    assert!(calls(&fake).is_empty());
    let done = desktop.click(1, "Status", true).unwrap();
    assert_eq!(done["route"], "SENDINPUT_POINTER");
    assert_eq!(done["foreground_unchanged"], false);
    assert!(calls(&fake).contains(&"POINTER 60,40".to_string()));
    fake.state().default_action_works = true;
    fake.state().foreground = 5;
    assert_eq!(
        desktop.click(1, "Status", false).unwrap()["route"],
        "MSAA_DEFAULT_ACTION"
    );
}

#[test]
fn text_is_set_and_read_back_and_a_mismatch_is_not_a_success() {
    let (fake, desktop) = setup(Some(vec![]));
    let done = desktop.type_text(1, "id:102", "héllo 👋", false).unwrap();
    assert_eq!(
        (done["route"].as_str(), done["verified"].as_bool()),
        (Some("WM_SETTEXT"), Some(true))
    );
    fake.state().mangles = true;
    let gate = desktop.type_text(1, "id:102", "héllo", false).unwrap();
    assert_eq!(gate["needs_permission"], true);
    assert!(gate["reason"].as_str().unwrap().contains("differs"));
}

#[test]
fn password_fields_are_never_typed_into() {
    let (fake, desktop) = setup(Some(vec![]));
    assert_eq!(
        kind(desktop.type_text(1, "id:103", "secret", true).unwrap_err()),
        "PASSWORD_FIELD"
    );
    assert_eq!(
        kind(
            desktop
                .type_text(1, "class:Edit[1]", "secret", true)
                .unwrap_err()
        ),
        "PASSWORD_FIELD"
    );
    assert!(calls(&fake).is_empty());
    let secret = Node {
        pid: 10,
        name: "Password".into(),
        control_type: "Edit".into(),
        password: true,
        ..Node::default()
    };
    let (fake, desktop) = setup(Some(vec![secret]));
    assert_eq!(
        kind(
            desktop
                .type_text(1, "Password", "secret", true)
                .unwrap_err()
        ),
        "PASSWORD_FIELD"
    );
    assert!(calls(&fake).is_empty());
}

#[test]
fn elements_only_ui_automation_reaches_are_gated() {
    let link = Node {
        pid: 10,
        name: "Sign in".into(),
        control_type: "Hyperlink".into(),
        rect: [0, 0, 10, 10],
        enabled: true,
        ..Node::default()
    };
    let (fake, desktop) = setup(Some(vec![link]));
    let gate = desktop.click(1, "Sign in", false).unwrap();
    assert_eq!(gate["needs_permission"], true);
    assert!(gate["detail"].as_str().unwrap().contains("Hyperlink"));
    assert!(calls(&fake).is_empty());
    assert_eq!(
        kind(desktop.click(1, "Nothing like it", false).unwrap_err()),
        "TARGET_NOT_FOUND"
    );
}

#[test]
fn a_hung_window_is_reported_not_waited_for() {
    let (fake, desktop) = setup(None);
    fake.state().hung = true;
    assert_eq!(
        kind(desktop.click(1, "OK", false).unwrap_err()),
        "WINDOW_NOT_RESPONDING"
    );
    let seen = desktop.see(1, true, None).unwrap().report;
    assert_eq!(
        seen["controls_unavailable"],
        "the window is not responding to messages"
    );
    assert_eq!(seen["timed_out"], true);
}

#[test]
fn a_tree_cut_short_is_shown_as_partial_and_never_taken_for_not_found() {
    let (fake, _) = setup(Some(vec![]));
    let button = |name: &str| Node {
        pid: 10,
        name: name.into(),
        control_type: "Button".into(),
        enabled: true,
        ..Node::default()
    };
    let mut tree = FakeTree::new(Some(vec![
        button("Back"),
        button("Reload"),
        button("Reload"),
    ]));
    tree.stalls_after = Some(2);
    let desktop = Desktop::new(
        Box::new(fake.clone()),
        Arc::new(tree),
        Vec::new(),
        vec!["APP".into()],
    );
    let seen = desktop.see(1, true, None).unwrap().report;
    assert_eq!(seen["timed_out"], true);
    assert_eq!(seen["tree"], json!(["Button 'Back'", "Button 'Reload'"]));
    // One "Reload" was read; the part not read held a second one.
    let err = desktop.click(1, "Reload", true).unwrap_err();
    assert_eq!(err.kind.as_str(), "WINDOW_NOT_RESPONDING");
    assert_eq!(err.retry, wamcp_policy::error::Retry::MayHelp);
    assert_eq!(err.details["elements_read"], 2);
    // Nor is a name missing from the part read "not found".
    let err = desktop.click(1, "Forward", true).unwrap_err();
    assert_eq!(err.kind.as_str(), "WINDOW_NOT_RESPONDING");
    assert!(calls(&fake).is_empty(), "{:?}", calls(&fake));
}

#[test]
fn keys_need_the_foreground_and_a_false_success_is_caught() {
    let (fake, desktop) = setup(Some(vec![]));
    assert_eq!(
        kind(desktop.key(1, "^^s", false).unwrap_err()),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        desktop.key(1, "Ctrl+s", false).unwrap()["needs_permission"],
        true
    );
    assert!(calls(&fake).is_empty());
    let done = desktop.key(1, "Ctrl+s", true).unwrap();
    assert_eq!(
        (done["route"].as_str(), done["strokes"].as_u64()),
        (Some("SENDINPUT_KEYS"), Some(1))
    );
    let mut s = fake.state();
    s.foreground = 5;
    s.foreground_lies = true;
    drop(s);
    assert_eq!(
        kind(desktop.key(1, "Ctrl+s", true).unwrap_err()),
        "FOREGROUND_NOT_TAKEN"
    );
    assert_eq!(kind(desktop.reveal(1).unwrap_err()), "FOREGROUND_NOT_TAKEN");
}

#[test]
fn only_listed_trusted_programs_start_and_their_windows_join_the_scope() {
    let (fake, desktop) = setup(Some(vec![]));
    assert_eq!(
        kind(
            desktop
                .open_app("cmd", &[], false, &ProgramSearch::default())
                .unwrap_err()
        ),
        "APP_NOT_ALLOWED"
    );
    assert_eq!(
        kind(
            desktop
                .open_app("/work/proj/tool.exe", &[], false, &ProgramSearch::default())
                .unwrap_err()
        ),
        "APP_NOT_ALLOWED"
    );
    assert!(calls(&fake).is_empty());
    let started = desktop
        .open_app("viewer", &["a b".into()], true, &ProgramSearch::default())
        .unwrap();
    assert_eq!(started["pid"], 77);
    assert_eq!(started["windows"][0]["hwnd"], 900);
    let launch = calls(&fake)
        .into_iter()
        .find(|c| c.starts_with("LAUNCH"))
        .unwrap();
    assert!(launch.ends_with("\"a b\" --force-renderer-accessibility --disable-backgrounding-occluded-windows --disable-features=CalculateNativeWinOcclusion"), "{launch}");
    assert_eq!(desktop.windows()["windows"][2]["in_scope"], true);
}

#[test]
fn a_program_that_grabs_the_foreground_is_pushed_back() {
    let (fake, desktop) = setup(Some(vec![]));
    let grabbing = Grabbing(fake.clone());
    fake.state().grabs = 2;
    let watcher = std::thread::spawn(move || {
        // Play the launched program: take the foreground whenever it is given back.
        for _ in 0..400 {
            let mut s = grabbing.state();
            if s.windows.iter().any(|w| w.hwnd == 900) && s.foreground != 900 && s.grabs > 0 {
                s.grabs -= 1;
                s.foreground = 900;
            }
            drop(s);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    });
    let started = desktop
        .open_app("viewer", &[], false, &ProgramSearch::default())
        .unwrap();
    watcher.join().unwrap();
    assert!(
        started["foreground_contests"].as_u64().unwrap() >= 1,
        "{started}"
    );
    assert_eq!(started["foreground_unchanged"], true);
}

#[test]
fn blank_frames_are_never_returned_as_pictures() {
    let (fake, desktop) = setup(Some(vec![]));
    let seen = desktop.see(1, false, None).unwrap();
    assert_eq!(seen.report["image"]["method"], "PrintWindow");
    assert!(seen.png.is_some());
    fake.state().print = Some(frame(&[[9, 9, 9, 0], [9, 9, 9, 1]]));
    fake.state().screen = Some(frame(&[[1, 1, 1, 0], [2, 2, 2, 0]]));
    assert_eq!(
        desktop.see(1, false, None).unwrap().report["image"]["method"],
        "BitBlt"
    );
    // Covered by a window in front: its screen pixels are not its own.
    fake.state()
        .windows
        .insert(0, window(3, "Secret", 30, "vault.exe"));
    let seen = desktop.see(1, false, None).unwrap();
    assert!(seen.png.is_none());
    assert!(
        seen.report["image_unavailable"]
            .as_str()
            .unwrap()
            .contains("'Secret' covers")
    );
    fake.state().windows.remove(0);
    fake.state().screen = Some(frame(&[[0, 0, 0, 0], [0, 0, 0, 0]]));
    assert!(desktop.see(1, false, None).unwrap().png.is_none());
    let controls: &Value = &desktop.see(1, false, None).unwrap().report["controls"];
    assert_eq!(controls[2]["password"], true);
    assert_eq!(controls[2]["text"], "");
}

#[test]
fn scrolling_is_verified_by_the_scroll_bar() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().scroll = Some((0, 3));
    let done = desktop
        .scroll(1, Some("id:102"), Direction::Down, 3, false)
        .unwrap();
    assert_eq!(
        (done["route"].as_str(), done["position"]["after"].as_i64()),
        (Some("WM_VSCROLL"), Some(3))
    );
    fake.state().scroll = None;
    assert_eq!(
        desktop
            .scroll(1, Some("id:102"), Direction::Down, 3, false)
            .unwrap()["needs_permission"],
        true
    );
    assert_eq!(
        desktop.scroll(1, None, Direction::Up, 6, true).unwrap()["route"],
        "SENDINPUT_WHEEL"
    );
    assert!(calls(&fake).contains(&"WHEEL 200,150 2".to_string()));
}

#[test]
fn a_real_click_never_lands_on_a_window_on_top() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().on_top = Some(2);
    let refused = desktop.click(1, "Status", true).unwrap_err();
    assert_eq!(kind(refused), "TARGET_OBSCURED");
    assert!(!calls(&fake).iter().any(|c| c.starts_with("POINTER")));
    fake.state().on_top = None;
    assert_eq!(
        desktop.click(1, "Status", true).unwrap()["route"],
        "SENDINPUT_POINTER"
    );
}

#[test]
fn keys_stop_before_a_focused_password_field() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().focused = Some(13);
    let refused = desktop.key(1, "hunter2", true).unwrap_err();
    assert_eq!(
        refused.details.get("keystrokes_sent"),
        Some(&serde_json::json!(0))
    );
    assert_eq!(kind(refused), "PASSWORD_FIELD");
    assert!(keys_sent(&fake) == 0);
}

#[test]
fn keys_stop_at_a_password_element_without_a_window_of_its_own() {
    let (fake, desktop, focus) = setup_with_focus(Some(vec![]));
    fake.state().focused = Some(12);
    *focus.lock().unwrap() = element(true, 10);
    let refused = desktop.key(1, "hunter2", true).unwrap_err();
    assert_eq!(kind(refused), "PASSWORD_FIELD");
    assert!(keys_sent(&fake) == 0);
    // An error from UI Automation stops the keys too (fails closed) ...
    *focus.lock().unwrap() = Err("the element went away".into());
    let refused = desktop.key(1, "abc", true).unwrap_err();
    assert!(
        refused.message.contains("the element went away"),
        "{}",
        refused.message
    );
    assert_eq!(kind(refused), "INPUT_FAILED");
    assert!(keys_sent(&fake) == 0);
    // ... while a system without UI Automation relies on the window checks.
    *focus.lock().unwrap() = Ok(None);
    desktop.key(1, "abc", true).unwrap();
    assert_eq!(keys_sent(&fake), 3);
}

#[test]
fn keys_stop_when_the_focused_element_is_another_programs() {
    let (fake, desktop, focus) = setup_with_focus(Some(vec![]));
    fake.state().focused = Some(12);
    *focus.lock().unwrap() = element(false, 99);
    let refused = desktop.key(1, "abc", true).unwrap_err();
    assert_eq!(kind(refused), "WINDOW_OUT_OF_SCOPE");
    assert!(keys_sent(&fake) == 0);
}

#[test]
fn a_tab_into_a_password_field_stops_the_keys_after_it() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().focused = Some(12);
    fake.state().tab_focuses = Some(13);
    let refused = desktop.key(1, "{TAB}hunter2", true).unwrap_err();
    assert_eq!(
        refused.details.get("keystrokes_sent"),
        Some(&serde_json::json!(1))
    );
    assert_eq!(kind(refused), "PASSWORD_FIELD");
    assert_eq!(keys_sent(&fake), 1);
}

#[test]
fn a_focus_move_inside_one_window_is_seen_before_the_next_key() {
    for keys in ["abcdef", "{TAB}abcdef"] {
        let (fake, desktop) = setup(Some(vec![]));
        fake.state().focused = Some(12);
        fake.state().element_turns_password_after = Some(1);
        let refused = desktop.key(1, keys, true).unwrap_err();
        assert_eq!(
            refused.details.get("keystrokes_sent"),
            Some(&serde_json::json!(1)),
            "{keys}"
        );
        assert_eq!(kind(refused), "PASSWORD_FIELD");
        assert_eq!(keys_sent(&fake), 1);
    }
}

#[test]
fn actions_from_concurrent_calls_do_not_interleave() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().focused = Some(12);
    fake.state().key_time = Duration::from_millis(40);
    let desktop = Arc::new(desktop);
    let typing = {
        let desktop = desktop.clone();
        std::thread::spawn(move || desktop.key(1, "abcde", true).unwrap())
    };
    while keys_sent(&fake) == 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    desktop.click(1, "OK", false).unwrap();
    typing.join().unwrap();
    let calls = calls(&fake);
    let click = calls
        .iter()
        .position(|c| c.starts_with("BM_CLICK"))
        .unwrap();
    let last_key = calls.iter().rposition(|c| c.starts_with("KEYS")).unwrap();
    assert!(click > last_key, "{calls:?}");
}

#[test]
fn an_action_that_cannot_get_its_turn_does_nothing() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().focused = Some(12);
    fake.state().key_time = Duration::from_millis(800);
    let desktop = Arc::new(desktop);
    let typing = {
        let desktop = desktop.clone();
        std::thread::spawn(move || desktop.key(1, "abcd", true).unwrap())
    };
    // The typing call has its turn once its first key went out.
    while keys_sent(&fake) == 0 && !typing.is_finished() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let refused = desktop.click(1, "OK", false).unwrap_err();
    assert!(
        refused.message.contains("Another desktop action"),
        "{}",
        refused.message
    );
    assert_eq!(kind(refused), "INPUT_FAILED");
    typing.join().unwrap();
    assert!(!calls(&fake).iter().any(|c| c.starts_with("BM_CLICK")));
}

#[test]
fn a_refused_keystroke_route_leaves_the_text_alone() {
    let (fake, desktop, focus) = setup_with_focus(Some(vec![]));
    fake.state().texts.insert(12, "before".into());
    // The message route fails its read-back, so the keys would have to type it.
    fake.state().mangles = true;
    *focus.lock().unwrap() = Err("the element went away".into());
    let refused = desktop.type_text(1, "id:102", "é", true).unwrap_err();
    assert_eq!(kind(refused), "INPUT_FAILED");
    assert_eq!(fake.state().texts[&12], "before");
    assert!(keys_sent(&fake) == 0);
}

#[test]
fn keys_stop_when_ui_automation_does_not_answer() {
    let (fake, desktop) = setup(None);
    fake.state().focused = Some(12);
    let refused = desktop.key(1, "abc", true).unwrap_err();
    assert_eq!(kind(refused), "INPUT_FAILED");
    assert!(keys_sent(&fake) == 0);
}

#[test]
fn a_refused_text_leaves_the_control_as_it_was() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().texts.insert(12, "before".into());
    fake.state().mangles = true;
    assert_eq!(
        desktop.type_text(1, "id:102", "é", false).unwrap()["needs_permission"],
        true
    );
    assert_eq!(fake.state().texts[&12], "before");
    assert_eq!(
        kind(desktop.type_text(1, "id:102", "a\0b", false).unwrap_err()),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(fake.state().texts[&12], "before");
}

#[test]
fn text_too_long_to_put_back_is_left_alone_and_the_gate_says_why() {
    let (fake, desktop) = setup(Some(vec![]));
    let long = "x".repeat(crate::desktop::MAX_TYPED_CHARS + 1);
    fake.state().texts.insert(12, long.clone());
    let gate = desktop.type_text(1, "id:102", "new", false).unwrap();
    assert_eq!(gate["needs_permission"], true);
    let reason = gate["reason"].as_str().unwrap();
    assert!(reason.contains("could not put back"), "{reason}");
    assert!(!calls(&fake).iter().any(|c| c.starts_with("WM_SETTEXT")));
    assert_eq!(fake.state().texts[&12], long);
}

#[test]
fn arguments_a_best_fit_would_split_are_refused() {
    let (fake, desktop) = setup(Some(vec![]));
    fake.state().best_fit = true;
    let refused = desktop
        .open_app(
            "viewer",
            &["x\u{ff02} --evil".into()],
            false,
            &ProgramSearch::default(),
        )
        .unwrap_err();
    assert_eq!(kind(refused), "INVALID_ARGUMENTS");
    assert!(!calls(&fake).iter().any(|c| c.starts_with("LAUNCH")));
    assert_eq!(
        desktop
            .open_app("viewer", &["café".into()], false, &ProgramSearch::default())
            .unwrap()["pid"],
        77
    );
}

#[test]
fn controls_of_another_program_embedded_in_a_window_are_hidden() {
    let (fake, desktop) = setup(Some(vec![]));
    let mut foreign = control(31, "Edit", "secret of another app", 301);
    foreign.pid = 30;
    fake.state().controls.get_mut(&1).unwrap().push(foreign);
    let seen = desktop.see(1, false, None).unwrap();
    assert_eq!(seen.report["foreign_controls_hidden"], 1);
    assert!(seen.png.is_none());
    assert!(!seen.report.to_string().contains("secret of another app"));
    let missing = desktop
        .click(1, "secret of another app", false)
        .unwrap_err();
    assert!(!format!("{:?}", missing.recovery).contains("secret"));
}

/// `scroll`'s schema stays the bare names of the directions: the variants' docs
/// are for Rust readers (see `wamcp_policy::schema`).
#[test]
fn the_direction_schema_is_the_bare_names() {
    let schema = serde_json::to_value(schemars::schema_for!(Direction)).unwrap();
    let want = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Direction",
        "type": "string",
        "enum": ["up", "down", "left", "right"],
    });
    assert_eq!(schema, want);
}

mod actions;
mod elements;
