//! The desktop tools' behaviour, over the [`Windowing`] boundary.
//!
//! Every action follows the same order: the window must exist and be in
//! scope; the target must name exactly one control; the background routes
//! are tried (window messages, then MSAA's default action); a route that
//! needs the foreground runs only with `allow_foreground`, and is otherwise
//! answered with the [`Gate`]. Every answer says which route was used and
//! whether the foreground window was the same before and after.

use crate::accessibility::{self, Accessibility, ActError, Action, Bounded, Node, Read};
use crate::image::{DEFAULT_MAX_EDGE, MAX_MAX_EDGE, MIN_MAX_EDGE};
use crate::outline;
use crate::refs::{Fingerprint, Refs};
use crate::routes::{self, Verb};
use crate::system::{
    CaptureMethod, MESSAGE_TIMEOUT_MS, MessageError, Press, ShowMode, WindowInfo, Windowing,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::command::best_fit::any_ascii_look_alike;
use wamcp_policy::desktop::controls::{self, Control, Target};
use wamcp_policy::desktop::keys::{Key, Stroke, parse_keys};
use wamcp_policy::desktop::launch::{
    ACCESSIBILITY_FLAGS, App, arguments_line, choose_app, shortcut_command_line,
};
use wamcp_policy::desktop::{Gate, in_scope};
use wamcp_policy::error::{ErrorType, ToolError};

/// Which way `scroll` moves a control's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// The doc comments are for Rust readers; the schema stays the bare names.
#[schemars(description = "", transform = wamcp_policy::schema::names_only)]
pub enum Direction {
    /// Toward the top of the content.
    Up,
    /// Toward the bottom.
    Down,
    /// Toward the left edge.
    Left,
    /// Toward the right edge.
    Right,
}

/// What `click` does instead of one left click.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline, description = "", transform = wamcp_policy::schema::names_only)]
pub enum How {
    /// Two left clicks (the real pointer only).
    Double,
    /// A right click (the real pointer only).
    Right,
    /// `SelectionItem.Select` on an element.
    Select,
    /// `ExpandCollapse.Expand` on an element.
    Expand,
    /// `ExpandCollapse.Collapse` on an element.
    Collapse,
}

impl How {
    fn name(self) -> &'static str {
        match self {
            How::Double => "double",
            How::Right => "right",
            How::Select => "select",
            How::Expand => "expand",
            How::Collapse => "collapse",
        }
    }
}

/// Where `move_window` puts a window; what is not given stays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The left edge, in screen pixels.
    pub x: Option<i32>,
    /// The top edge.
    pub y: Option<i32>,
    /// The outer width.
    pub width: Option<i32>,
    /// The outer height.
    pub height: Option<i32>,
}

/// The smallest and largest outer size `move_window` sets, and how far off
/// the origin an edge may go (the virtual screen's limits).
const MIN_EDGE: i32 = 50;
const MAX_EDGE: i32 = 16_384;
const MAX_OFFSET: i32 = 32_000;

impl Placement {
    /// The rectangle this placement makes of `rect`, when it is one a
    /// window can have.
    fn applied_to(self, rect: [i32; 4]) -> Result<[i32; 4], ToolError> {
        if self == Placement::default() {
            return Err(ToolError::new(
                ErrorType::InvalidArguments,
                "Give x, y, width or height; nothing was moved.",
            ));
        }
        let x = self.x.unwrap_or(rect[0]);
        let y = self.y.unwrap_or(rect[1]);
        let width = self.width.unwrap_or(rect[2].saturating_sub(rect[0]));
        let height = self.height.unwrap_or(rect[3].saturating_sub(rect[1]));
        let sizes = MIN_EDGE..=MAX_EDGE;
        let offsets = -MAX_OFFSET..=MAX_OFFSET;
        if !sizes.contains(&width)
            || !sizes.contains(&height)
            || !offsets.contains(&x)
            || !offsets.contains(&y)
        {
            return Err(ToolError::new(
                ErrorType::InvalidArguments,
                format!(
                    "A window of {width}x{height} at ({x}, {y}) is out of range: sizes are {MIN_EDGE}-{MAX_EDGE} px, positions within ±{MAX_OFFSET}; nothing was moved."
                ),
            ));
        }
        Ok([x, y, x + width, y + height])
    }
}

/// Longest text `type_text` sends.
pub const MAX_TYPED_CHARS: usize = 32_768;
/// How long a program gets to act on a key or click that may move its
/// focus before the next keystroke is judged.
const SETTLE: Duration = Duration::from_millis(150);
/// How long an input action waits for another one to end (a `key` call
/// may take its 30 s, `open_app` watches for 10 s; short in this crate's
/// tests).
const TURN_WAIT: Duration = if cfg!(test) {
    Duration::from_secs(2)
} else {
    Duration::from_secs(45)
};
/// Most lines one `scroll` moves.
pub const MAX_SCROLL_LINES: u32 = 100;
/// How long `open_app` keeps the launched program from taking the
/// foreground, and how long the foreground must stay put to count as settled.
const LAUNCH_WATCH: Duration = Duration::from_secs(10);
const LAUNCH_SETTLED: Duration = Duration::from_secs(3);
const LAUNCH_POLL: Duration = Duration::from_millis(40);
/// The longest one call may spend sending keystrokes to a slow window.
const KEYS_BUDGET: Duration = Duration::from_secs(30);
/// How long `close_window` watches for the window to go, or to ask.
const CLOSE_WATCH: Duration = Duration::from_secs(3);
/// The longest `wait_for` waits, and how often it looks.
pub const MAX_WAIT_SECONDS: u32 = 60;
const WAIT_POLL: Duration = Duration::from_millis(250);
/// How long a window brought forward may take to show up there.
const FOREGROUND_WAIT: Duration = Duration::from_millis(1500);
/// Controls named in a refusal, so a model can correct a target.
const CONTROLS_NAMED: usize = 25;

/// What `see` returns: the report and, when there is one, the picture.
pub struct Seen {
    /// The window, its controls and, when asked, its
    /// accessibility tree; says why a part is missing.
    pub report: Value,
    /// The window's picture as PNG, scaled to
    /// `max_edge`; `None` when none could be taken.
    pub png: Option<Vec<u8>>,
}

/// The desktop tools' state: the system behind
/// them, what they may start and touch.
pub struct Desktop {
    system: Box<dyn Windowing>,
    ax: Arc<dyn Accessibility>,
    /// `WAMCP_DESKTOP_APPS`: what `open_app` may start.
    apps: Vec<String>,
    /// `WAMCP_DESKTOP_PROCESSES`: image names whose windows may be touched.
    processes: Vec<String>,
    /// Processes `open_app` started, with what keeps each one's id from
    /// being given to another process (its handle), so a program started
    /// later under a recycled id never joins the scope.
    launched: Mutex<HashMap<u32, crate::system::Launched>>,
    /// Held by every action that sends input or moves the foreground:
    /// MCP calls run concurrently, and a Tab or click from one call between
    /// another call's check and its keystroke would void the check.
    input: Mutex<()>,
    /// When the last input that may move a program's focus (a key other
    /// than a plain character, a real click) was sent: the next key or
    /// click waits until the program has had `SETTLE` to act on it, within
    /// one call and across calls.
    focus_input_at: Mutex<Option<Instant>>,
    /// The refs `see` and the action reports gave, per window.
    refs: Mutex<Refs>,
    /// The UI Automation routes that brought a program's window forward
    /// (by pid): not tried again for that program, which then gets the
    /// permission gate instead.
    takes_foreground: Mutex<HashSet<(u32, &'static str)>>,
}

/// Where a target led.
enum Found {
    /// A native control, with the window's controls as listed to find it.
    Control(Control, Vec<Control>),
    /// Not a native control, but an accessibility element (named or by
    /// ref), with the tree it was found in.
    Element { node: Node, tree: Vec<Node> },
}

/// What looking for an element by name came to.
enum Named {
    Found(Found),
    Missing,
    /// The tree could not be read, and why.
    Unreadable(String),
}

/// What the UI Automation routes of an element came to.
enum Routed {
    /// One took: the action's report.
    Done(Value),
    /// None took; why each one tried did not.
    NotTaken(Vec<String>),
}

impl Desktop {
    /// A desktop over `system` and `ax`; `apps` may
    /// be started, `processes`' windows touched.
    pub fn new(
        system: Box<dyn Windowing>,
        ax: Arc<dyn Accessibility>,
        apps: Vec<String>,
        processes: Vec<String>,
    ) -> Desktop {
        Desktop {
            system,
            ax,
            apps,
            processes,
            launched: Mutex::new(HashMap::new()),
            input: Mutex::new(()),
            focus_input_at: Mutex::new(None),
            refs: Mutex::new(Refs::default()),
            takes_foreground: Mutex::new(HashSet::new()),
        }
    }

    /// The refs of `nodes` under `hwnd`: the shown ones get one.
    fn refs_of(&self, hwnd: isize, nodes: &[Node]) -> Vec<Option<u32>> {
        let mut refs = self.refs.lock().unwrap_or_else(|e| e.into_inner());
        refs.name(
            hwnd,
            nodes
                .iter()
                .map(|n| Fingerprint::of(n).filter(|_| outline::shown(n))),
        )
    }

    /// An element's line with its ref, as `see` shows it.
    fn line_of(&self, hwnd: isize, node: &Node) -> String {
        let reference = self.refs_of(hwnd, std::slice::from_ref(node))[0];
        outline::line(node, reference)
    }

    /// Waits (at most `TURN_WAIT`) for the other input actions to end and
    /// for the program to have acted on the last one's input.
    fn one_at_a_time(&self) -> Result<std::sync::MutexGuard<'_, ()>, ToolError> {
        let asked = Instant::now();
        let guard = loop {
            match self.input.try_lock() {
                Ok(guard) => break guard,
                Err(std::sync::TryLockError::Poisoned(e)) => break e.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) if asked.elapsed() < TURN_WAIT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    return Err(ToolError::new(
                        ErrorType::InputFailed,
                        format!(
                            "Another desktop action is still running after {} s; nothing was done.",
                            TURN_WAIT.as_secs()
                        ),
                    )
                    .retryable("Retry once that action has answered."));
                }
            }
        };
        // What an earlier call queued (an Enter that opens a dialog, a Tab)
        // lands before this call looks at the screen or the focus.
        self.settled();
        Ok(guard)
    }

    /// Waits until the program has had `SETTLE` to act on the last input
    /// that may have moved its focus (`SendInput` only queues it).
    fn settled(&self) {
        let last = *self
            .focus_input_at
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(at) = last {
            std::thread::sleep(SETTLE.saturating_sub(at.elapsed()));
        }
    }

    fn focus_may_move(&self) {
        *self
            .focus_input_at
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    /// A real click, after the last focus-moving input settled.
    fn real_click(&self, x: i32, y: i32, press: Press) -> Result<(), ToolError> {
        self.settled();
        let clicked = self.system.pointer_click(x, y, press).map_err(input_failed);
        self.focus_may_move();
        clicked
    }

    fn launched_by_us(&self, pid: u32) -> bool {
        self.launched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&pid)
    }

    fn in_scope(&self, pid: u32, process: &str) -> bool {
        in_scope(self.launched_by_us(pid), process, &self.processes)
    }

    /// `windows()`: every visible top-level window, marked with whether it
    /// may be acted on.
    pub fn windows(&self) -> Value {
        let foreground = self.system.foreground();
        let windows: Vec<Value> = self
            .system
            .windows()
            .into_iter()
            .filter(|w| !w.cloaked)
            .map(|w| {
                json!({
                    "hwnd": w.hwnd,
                    "title": w.title,
                    "class": w.class,
                    "pid": w.pid,
                    "process": w.process,
                    "rect": w.rect,
                    "foreground": w.hwnd == foreground,
                    "in_scope": self.in_scope(w.pid, &w.process),
                })
            })
            .collect();
        json!({ "count": windows.len(), "windows": windows })
    }

    /// The window behind `hwnd`, when it may be acted on.
    fn scoped(&self, hwnd: i64) -> Result<WindowInfo, ToolError> {
        let window = isize::try_from(hwnd)
            .ok()
            .and_then(|h| self.system.window(h))
            .ok_or_else(|| {
                ToolError::new(ErrorType::WindowNotFound, format!("No top-level window has the handle {hwnd}."))
                    .recover("DO NOT retry with the same handle; call windows() and use an hwnd from its list (handles change when a window is re-created).")
            })?;
        if !self.in_scope(window.pid, &window.process) {
            let name = if window.process.is_empty() {
                format!("pid {}", window.pid)
            } else {
                window.process.clone()
            };
            return Err(ToolError::new(
                ErrorType::WindowOutOfScope,
                format!("'{}' belongs to {name}, which wamcp did not start and which is not listed in WAMCP_DESKTOP_PROCESSES.", window.title),
            )
            .recover("DO NOT retry: this is the user's decision. Ask them whether wamcp may act on this program's windows; if yes, they add its image name to WAMCP_DESKTOP_PROCESSES and restart the server.")
            .detail("process", name));
        }
        Ok(window)
    }

    /// The window's own controls, and how many belong to another process
    /// embedded in it (those are neither shown nor acted on). A UWP
    /// frame's furniture (the host's) is neither.
    fn controls_of(&self, window: &WindowInfo) -> Result<(Vec<Control>, usize), MessageError> {
        let mut all = self.system.controls(window.hwnd)?;
        all.retain(|c| Some(c.pid) != window.host_pid);
        let count = all.len();
        let own: Vec<Control> = all
            .into_iter()
            .filter(|c| c.pid == window.pid || self.launched_by_us(c.pid))
            .collect();
        let foreign = count - own.len();
        Ok((own, foreign))
    }

    /// The one thing `target` names in `window`.
    fn find(&self, window: &WindowInfo, target: &str) -> Result<Found, ToolError> {
        let parsed = controls::parse_target(target).map_err(|problem| {
            ToolError::new(ErrorType::InvalidArguments, format!("Bad target: {problem}."))
                .recover("Name a control by its text, as id:<control id>, or as class:<Class>[n]; see(hwnd) lists them.")
        })?;
        if let Target::Ref(reference) = parsed {
            return self.element_by_ref(window, reference);
        }
        let (all, _) = self
            .controls_of(window)
            .map_err(|e| message_error(e, window))?;
        let found = controls::matches(&all, &parsed);
        match found.as_slice() {
            [one] => Ok(Found::Control(all[*one].clone(), all)),
            [] => {
                let mut unreadable = None;
                if let Target::Text(text) = &parsed {
                    match self.element_named(window, text)? {
                        Named::Found(found) => return Ok(found),
                        Named::Missing => {}
                        Named::Unreadable(why) => unreadable = Some(why),
                    }
                }
                let missing = ToolError::new(
                    ErrorType::TargetNotFound,
                    format!("No control of '{}' matches '{target}'.", window.title),
                )
                .recover(format!("Its controls: {}.", controls::describe(&all, CONTROLS_NAMED)))
                .recover("Use one of those, or call see(hwnd, with_tree=true) to read the accessibility tree.");
                // Not there among the controls, and the elements unknown.
                Err(match unreadable {
                    Some(why) => missing.detail("tree_unavailable", why),
                    None => missing,
                })
            }
            many => Err(ToolError::new(
                ErrorType::TargetAmbiguous,
                format!(
                    "{} controls of '{}' match '{target}'.",
                    many.len(),
                    window.title
                ),
            )
            .recover(format!(
                "Name one by id: {}.",
                many.iter()
                    .map(|&i| format!("id:{}", all[i].id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// An accessibility element whose name is `text`, for targets that are
    /// not native controls (browsers, Electron, WPF). An unreadable tree
    /// is said as such (to `click` no match, to `wait_for` no answer); one
    /// cut short by the timeout is neither a match (the rest could hold a
    /// second element of that name) nor "not found".
    fn element_named(&self, window: &WindowInfo, text: &str) -> Result<Named, ToolError> {
        let key = controls::caption_key(text);
        let nodes = match self.tree_of(window).0 {
            Read::Nodes(nodes) => nodes,
            Read::Partial(read) => return Err(tree_cut_short(window, text, read.len())),
            Read::Unavailable(why) => return Ok(Named::Unreadable(why)),
        };
        // Refs in document order, whichever element a report names first.
        self.refs_of(window.hwnd, &nodes);
        let named: Vec<&Node> = nodes
            .iter()
            .filter(|n| controls::caption_key(&n.name) == key)
            .collect();
        match named.as_slice() {
            [] => Ok(Named::Missing),
            [one] => Ok(Named::Found(Found::Element {
                node: (*one).clone(),
                tree: nodes.clone(),
            })),
            many => {
                let refs: Vec<String> = many.iter().map(|n| self.line_of(window.hwnd, n)).collect();
                Err(ToolError::new(
                    ErrorType::TargetAmbiguous,
                    format!(
                        "{} accessibility elements of '{}' are named '{text}'.",
                        many.len(),
                        window.title
                    ),
                )
                .recover("DO NOT retry the same target; name one by its #ref.")
                .detail("elements", refs))
            }
        }
    }

    /// The element a ref from an earlier look stands for, found afresh in
    /// the tree. A ref names one element, so a tree cut short that holds
    /// it is enough; one it is missing from is stale.
    fn element_by_ref(&self, window: &WindowInfo, reference: u32) -> Result<Found, ToolError> {
        let look_again = "DO NOT retry the same ref; look again with see(hwnd, with_tree=true) and use a ref from that answer.";
        let print = self
            .refs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .element(window.hwnd, reference)
            .ok_or_else(|| {
                ToolError::new(
                    ErrorType::TargetNotFound,
                    format!(
                        "#{reference} is no ref a look at '{}' gave (or it was forgotten).",
                        window.title
                    ),
                )
                .recover(look_again)
            })?;
        let target = format!("#{reference}");
        let (tree, cut_short) = match self.tree_of(window).0 {
            Read::Nodes(nodes) => (nodes, false),
            Read::Partial(nodes) => (nodes, true),
            Read::Unavailable(reason) => {
                return Err(ToolError::new(
                    ErrorType::WindowNotResponding,
                    format!("The accessibility tree of '{}' could not be read ({reason}); nothing was done.", window.title),
                )
                .retryable("Retry once; if it fails again, use a native control's id: target."));
            }
        };
        self.refs_of(window.hwnd, &tree);
        match tree.iter().find(|n| print.matches(n)) {
            Some(node) => Ok(Found::Element {
                node: node.clone(),
                tree: tree.clone(),
            }),
            None if cut_short => Err(tree_cut_short(window, &target, tree.len())),
            None => Err(ToolError::new(
                ErrorType::TargetNotFound,
                format!(
                    "{target} is stale: that element is no longer in '{}'.",
                    window.title
                ),
            )
            .recover(look_again)
            .detail("stale_ref", target)),
        }
    }

    /// Tries the element's UI Automation routes for `verb`, best first,
    /// skipping those that brought this program forward before. A route
    /// that takes is reported with what changed; one that moved the
    /// foreground nonetheless gives it back and is not used again.
    fn element_routes(
        &self,
        window: &WindowInfo,
        before: &Before,
        node: &Node,
        tree: &[Node],
        verb: Verb,
    ) -> Result<Routed, ToolError> {
        if !node.enabled {
            return Err(disabled(&outline::cut(&node.name)));
        }
        if node.id.is_empty() {
            // Nothing could find it again to act on it, nor tell it apart.
            return Ok(Routed::NotTaken(vec![
                "the element has no runtime id to find it by".into(),
            ]));
        }
        let mut tried = Vec::new();
        for action in routes::routes(&verb, node) {
            let route = action.route();
            if self.takes_foreground_with(window.pid, route) {
                tried.push(format!("{route} brought this program to the front before"));
                continue;
            }
            match self.act(window, node, action.clone())? {
                Err(why) => tried.push(format!("{route}: {why}")),
                Ok(()) => match self.route_taken(window, before, node, tree, &verb, &action) {
                    Ok(report) => return Ok(Routed::Done(report)),
                    Err(why) => tried.push(format!("{route}: {why}")),
                },
            }
        }
        Ok(Routed::NotTaken(tried))
    }

    /// After a pattern call that succeeded: the foreground given back if
    /// it moved, the value read back (and put back when it differs: then
    /// why the route did not take), and the report with what changed.
    fn route_taken(
        &self,
        window: &WindowInfo,
        before: &Before,
        node: &Node,
        tree: &[Node],
        verb: &Verb,
        action: &Action,
    ) -> Result<Value, String> {
        let route = action.route();
        // A window activates a moment after the call that caused it.
        std::thread::sleep(SETTLE);
        let given_back = self.foreground_given_back(window, before, route);
        let after = self.read_after(window);
        let value_after = after
            .as_ref()
            .and_then(|(nodes, _)| nodes.iter().find(|n| n.is(&node.element_id())))
            .map(|n| n.value.clone());
        let verified = value_after
            .as_ref()
            .is_some_and(|value| routes::took(action, value));
        if let Some(undo) = routes::undo(action, node)
            && value_after.is_some()
            && !verified
        {
            let put_back = match self.act(window, node, undo) {
                Ok(Ok(())) => "the old one was put back".to_string(),
                Ok(Err(why)) => format!("putting the old one back failed: {why}"),
                Err(e) => format!("putting the old one back failed: {}", e.message),
            };
            return Err(format!(
                "the value read back differs from what was sent ({put_back})"
            ));
        }
        let mut report = self.done(route, before, json!(self.line_of(window.hwnd, node)));
        if let Some(back) = given_back {
            report["foreground_unchanged"] = json!(false);
            report["foreground_given_back"] = json!(back);
        }
        if matches!(verb, Verb::Type(_)) {
            report["verified"] = json!(verified);
        }
        self.report_changes(&mut report, window, tree, after, &node.id);
        Ok(report)
    }

    fn takes_foreground_with(&self, pid: u32, route: &'static str) -> bool {
        self.takes_foreground
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(pid, route))
    }

    /// After a route ran: when the foreground moved to the program, it is
    /// given back and the route remembered; `Some(whether it came back)`.
    fn foreground_given_back(
        &self,
        window: &WindowInfo,
        before: &Before,
        route: &'static str,
    ) -> Option<bool> {
        let now = self.system.foreground();
        let pid = self.system.window_pid(now);
        if now == before.foreground || (pid != window.pid && !self.launched_by_us(pid)) {
            return None;
        }
        self.takes_foreground
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((window.pid, route));
        self.system.set_foreground(before.foreground);
        Some(self.system.foreground() == before.foreground)
    }

    /// One pattern call, bounded. An answer that does not come may still
    /// arrive, so that is an error no retry should follow.
    fn act(
        &self,
        window: &WindowInfo,
        node: &Node,
        action: Action,
    ) -> Result<Result<(), String>, ToolError> {
        let route = action.route();
        match accessibility::act_within(
            self.ax.clone(),
            window.hwnd,
            node.element_id(),
            action,
            accessibility::READ_TIMEOUT,
        ) {
            Bounded::Answer(Ok(())) => Ok(Ok(())),
            Bounded::Answer(Err(ActError::Unsupported)) => Ok(Err("not offered".into())),
            Bounded::Answer(Err(ActError::Declined(why))) => Ok(Err(outline::cut(&why))),
            Bounded::Answer(Err(ActError::Password)) => Err(password_refused(&outline::cut(&node.name))),
            Bounded::Answer(Err(ActError::Failed(why))) => Err(ToolError::new(
                ErrorType::InputFailed,
                format!("{route} on '{}' failed ({}); whether it took is unknown, so no other route was tried.", outline::cut(&node.name), outline::cut(&why)),
            )
            .recover("DO NOT repeat the action (it may happen twice); look with see(hwnd, with_tree=true) first.")),
            Bounded::Unavailable(why) => Ok(Err(why)),
            Bounded::Answer(Err(ActError::Gone)) => Err(ToolError::new(
                ErrorType::TargetNotFound,
                format!("'{}' went away from '{}' before {route} reached it; nothing was done.", outline::cut(&node.name), window.title),
            )
            .recover("Look again with see(hwnd, with_tree=true).")),
            Bounded::TimedOut => Err(ToolError::new(
                ErrorType::WindowNotResponding,
                format!("'{}' did not answer {route} on '{}' within {:.1} s; it may still do it.", window.title, outline::cut(&node.name), accessibility::READ_TIMEOUT.as_secs_f32()),
            )
            .recover("DO NOT repeat the action (it may happen twice); look with see(hwnd, with_tree=true) first.")),
        }
    }

    /// The tree after an action, and whether it was cut short; `None` when
    /// it could not be read.
    fn read_after(&self, window: &WindowInfo) -> Option<(Vec<Node>, bool)> {
        match self.tree_of(window).0 {
            Read::Nodes(nodes) => Some((nodes, false)),
            Read::Partial(nodes) => Some((nodes, true)),
            Read::Unavailable(_) => None,
        }
    }

    /// The window's accessibility tree without the elements of other
    /// programs embedded in it (a child window, a WebView of another
    /// process), which are out of scope like their windows, and how many
    /// those were. A UWP frame's own furniture is neither shown nor counted.
    fn tree_of(&self, window: &WindowInfo) -> (Read, usize) {
        let mut foreign = 0;
        let mut own = |nodes: Vec<Node>| -> Vec<Node> {
            nodes
                .into_iter()
                .filter(|n| {
                    if Some(n.pid) == window.host_pid {
                        return false;
                    }
                    let ours = n.pid == window.pid || self.launched_by_us(n.pid);
                    foreign += usize::from(!ours);
                    ours
                })
                .collect()
        };
        let read = match accessibility::read_within(
            self.ax.clone(),
            window.hwnd,
            accessibility::READ_TIMEOUT,
        ) {
            Read::Nodes(nodes) => Read::Nodes(own(nodes)),
            Read::Partial(nodes) => Read::Partial(own(nodes)),
            unavailable => unavailable,
        };
        (read, foreign)
    }

    /// Adds what an action changed in the element tree to its report.
    fn report_changes(
        &self,
        report: &mut Value,
        window: &WindowInfo,
        before: &[Node],
        after: Option<(Vec<Node>, bool)>,
        target: &[i32],
    ) {
        let Some((after, cut_short)) = after else {
            report["changes_unknown"] =
                json!("the accessibility tree could not be read after the action");
            return;
        };
        self.refs_of(window.hwnd, &after);
        let changes = outline::changes(before, &after, target, &mut |n| {
            self.line_of(window.hwnd, n)
        });
        if changes.as_object().is_some_and(|c| !c.is_empty()) {
            report["changes"] = changes;
        }
        if cut_short {
            report["changes_partial"] = json!(true);
        }
    }

    /// `click(hwnd, target)`.
    pub fn click(
        &self,
        hwnd: i64,
        target: &str,
        allow_foreground: bool,
    ) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        let window = self.scoped(hwnd)?;
        let before = self.before(&window);
        match self.find(&window, target)? {
            Found::Control(c, listed) => {
                enabled(&c, target)?;
                if controls::is_button(&c.class, c.style) {
                    return self.click_button(&window, c, &listed, &before);
                }
                if self.system.default_action(c.handle).is_ok() {
                    // Acted on later, like input (Chromium): it may move the focus.
                    self.focus_may_move();
                    return Ok(self.done_control(
                        "MSAA_DEFAULT_ACTION",
                        &before,
                        &window,
                        &c,
                        &listed,
                    ));
                }
                if !allow_foreground {
                    return Ok(Gate::new(
                        format!("'{target}' is a {} control, which takes no click message and has no default action", c.class),
                        format!("Clicking it means bringing '{}' to the front and clicking there with the real pointer.", window.title),
                    )
                    .to_json());
                }
                self.press(&window, c.rect, &before, json!(c), Press::Left)
            }
            Found::Element { node, tree } => {
                let tried =
                    match self.element_routes(&window, &before, &node, &tree, Verb::Click)? {
                        Routed::Done(report) => return Ok(report),
                        Routed::NotTaken(tried) => tried,
                    };
                if !allow_foreground {
                    return Ok(Gate::new(
                        no_element_route(target, &tried),
                        format!(
                            "'{target}' is a {} in '{}' that only the real pointer can reach, with the window in front.",
                            node.control_type, window.title
                        ),
                    )
                    .to_json());
                }
                let line = self.line_of(window.hwnd, &node);
                self.press(&window, node.rect, &before, json!(line), Press::Left)
            }
        }
    }

    /// `BM_CLICK`, whose answer comes only once the program has handled
    /// the click: a button that opens a modal dialog answers when the
    /// dialog closes. So a click the program has not finished with is
    /// never reported as retryable (a retry would click twice): it is done
    /// when a new window of the program came up meanwhile, and otherwise
    /// reported as delivered but unfinished.
    fn click_button(
        &self,
        window: &WindowInfo,
        control: Control,
        listed: &[Control],
        before: &Before,
    ) -> Result<Value, ToolError> {
        match self.system.click_button(control.handle) {
            Err(MessageError::Gone) => Err(message_error(MessageError::Gone, window)),
            Err(MessageError::NotResponding) if self.opened_since(before).is_empty() => {
                Err(click_unfinished(window, &control))
            }
            Ok(()) | Err(MessageError::NotResponding) => {
                Ok(self.done_control("BM_CLICK", before, window, &control, listed))
            }
        }
    }

    /// The report of an action on a native control, with what it changed
    /// among the window's controls (a check box's state, a status text, a
    /// control that appeared), looked at once more after the action.
    fn done_control(
        &self,
        route: &str,
        before: &Before,
        window: &WindowInfo,
        control: &Control,
        listed: &[Control],
    ) -> Value {
        let mut report = self.done(route, before, json!(control));
        if let Ok((now, _)) = self.controls_of(window) {
            let changes = outline::control_changes(listed, &now, control.handle);
            if changes.as_object().is_some_and(|c| !c.is_empty()) {
                report["changes"] = changes;
            }
        }
        report
    }

    /// A real click on `rect`'s centre, with the window brought forward.
    fn press(
        &self,
        window: &WindowInfo,
        rect: [i32; 4],
        before: &Before,
        target: Value,
        press: Press,
    ) -> Result<Value, ToolError> {
        self.bring_forward(window)?;
        let (x, y) = self.point_on(window, rect)?;
        self.real_click(x, y, press)?;
        Ok(self.done("SENDINPUT_POINTER", before, target))
    }

    /// `click(hwnd, target, how)`: a double or right click, which only the
    /// real pointer makes; or an element selected, expanded or collapsed
    /// through its own pattern (a click would toggle, or activate).
    pub fn click_as(
        &self,
        hwnd: i64,
        target: &str,
        how: How,
        allow_foreground: bool,
    ) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        let window = self.scoped(hwnd)?;
        let before = self.before(&window);
        let (node, tree, rect, what) = match self.find(&window, target)? {
            Found::Control(c, _) => {
                enabled(&c, target)?;
                (None, Vec::new(), c.rect, json!(c))
            }
            Found::Element { node, tree } => {
                if !node.enabled {
                    return Err(disabled(target));
                }
                let line = json!(self.line_of(window.hwnd, &node));
                (Some(node.clone()), tree, node.rect, line)
            }
        };
        let verb = match how {
            How::Double | How::Right => None,
            How::Select => Some(Verb::Select),
            How::Expand => Some(Verb::Expand(true)),
            How::Collapse => Some(Verb::Expand(false)),
        };
        let Some(verb) = verb else {
            let press = if how == How::Double {
                Press::Double
            } else {
                Press::Right
            };
            if !allow_foreground {
                return Ok(Gate::new(
                    format!("a {} click is made only by the real pointer", how.name()),
                    format!(
                        "It means bringing '{}' to the front and clicking '{target}' there.",
                        window.title
                    ),
                )
                .to_json());
            }
            return self.press(&window, rect, &before, what, press);
        };
        let Some(node) = node else {
            return Err(ToolError::new(
                ErrorType::InvalidArguments,
                format!("'{target}' is a native control; {} acts on accessibility elements through their patterns.", how.name()),
            )
            .recover("Use the element's #ref from see(hwnd, with_tree=true), or click the control."));
        };
        match self.element_routes(&window, &before, &node, &tree, verb)? {
            Routed::Done(report) => Ok(report),
            Routed::NotTaken(tried) => Err(ToolError::new(
                ErrorType::InvalidArguments,
                format!("{}; {} needs its pattern, for which a click is no stand-in (it would toggle or activate).", no_element_route(target, &tried), how.name()),
            )
            .recover("Click it instead if that is what is meant, and check the result with see(hwnd, with_tree=true).")),
        }
    }

    /// `close_window(hwnd)`: asks the window to close, as its close button
    /// does, and watches for a moment whether it went or the program asked
    /// something first (save changes?), which `opened` then names.
    pub fn close_window(&self, hwnd: i64) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        let window = self.scoped(hwnd)?;
        let before = self.before(&window);
        self.system.close(window.hwnd).map_err(input_failed)?;
        let started = Instant::now();
        let closed = loop {
            if self.system.window(window.hwnd).is_none() {
                break true;
            }
            if !self.opened_since(&before).is_empty() || started.elapsed() >= CLOSE_WATCH {
                break false;
            }
            std::thread::sleep(LAUNCH_POLL);
        };
        let mut report = self.done("WM_CLOSE", &before, json!({"window": window.title}));
        report["closed"] = json!(closed);
        if !closed && report.get("opened").is_none() {
            report["note"] = json!(format!(
                "'{}' is still open after {} s: it may be busy, or it declined.",
                window.title,
                CLOSE_WATCH.as_secs()
            ));
        }
        Ok(report)
    }

    /// `move_window(hwnd, x, y, width, height)`: the parts not given stay;
    /// the window is not activated, and the rectangle is read back.
    pub fn move_window(&self, hwnd: i64, place: Placement) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        let window = self.scoped(hwnd)?;
        if window.minimized {
            return Err(ToolError::new(
                ErrorType::InvalidInput,
                format!(
                    "'{}' is minimised, and keeps its place until it is restored.",
                    window.title
                ),
            )
            .recover("reveal(hwnd) restores it (taking the foreground); ask the user first."));
        }
        let rect = place.applied_to(window.rect)?;
        let before = self.before(&window);
        self.system.place(window.hwnd, rect).map_err(input_failed)?;
        // Asynchronous (a hung window is not waited for): read back a while.
        let started = Instant::now();
        let now = loop {
            let now = self.system.window(window.hwnd).map(|w| w.rect);
            if now == Some(rect) || started.elapsed() >= FOREGROUND_WAIT {
                break now;
            }
            std::thread::sleep(LAUNCH_POLL);
        };
        let mut report = self.done("SETWINDOWPOS", &before, json!({"window": window.title}));
        report["rect"] = json!(now);
        report["verified"] = json!(now == Some(rect));
        Ok(report)
    }

    /// `wait_for(hwnd, target, gone, seconds)`: looks every quarter second
    /// until the target is there (or, with `gone`, is not), at most
    /// `seconds`. Reads only, so other actions are not held up.
    pub fn wait_for(
        &self,
        hwnd: i64,
        target: &str,
        gone: bool,
        seconds: u32,
    ) -> Result<Value, ToolError> {
        let window = self.scoped(hwnd)?;
        controls::parse_target(target).map_err(|problem| {
            ToolError::new(
                ErrorType::InvalidArguments,
                format!("Bad target: {problem}."),
            )
        })?;
        let limit = Duration::from_secs(seconds.clamp(1, MAX_WAIT_SECONDS).into());
        let started = Instant::now();
        loop {
            let seen = self.presence(&window, target)?;
            if seen.as_ref().map(|s| s.is_some() != gone) == Some(true) {
                let mut report = json!({
                    "ok": true,
                    "met": true,
                    "waited_ms": started.elapsed().as_millis() as u64,
                });
                if let Some(Some(what)) = seen {
                    report["target"] = what;
                }
                return Ok(report);
            }
            if started.elapsed() >= limit {
                return Ok(json!({
                    "ok": true,
                    "met": false,
                    "waited_ms": started.elapsed().as_millis() as u64,
                    "note": format!("'{target}' was {} after {} s.", if gone { "still there" } else { "not there" }, limit.as_secs()),
                }));
            }
            std::thread::sleep(WAIT_POLL);
        }
    }

    /// Whether `target` is in the window now: `Some(Some(what))` when it
    /// is, `Some(None)` when it is not, `None` when that cannot be told
    /// this time (a tree cut short, a busy window). A window that closed
    /// holds nothing.
    fn presence(
        &self,
        window: &WindowInfo,
        target: &str,
    ) -> Result<Option<Option<Value>>, ToolError> {
        if self.system.window(window.hwnd).is_none() {
            return Ok(Some(None));
        }
        match self.find(window, target) {
            Ok(Found::Control(c, _)) => Ok(Some(Some(json!(c)))),
            Ok(Found::Element { node, .. }) => {
                Ok(Some(Some(json!(self.line_of(window.hwnd, &node)))))
            }
            Err(e) => match e.kind {
                ErrorType::TargetAmbiguous => Ok(Some(Some(json!(e.message)))),
                ErrorType::TargetNotFound if e.details.contains_key("tree_unavailable") => Ok(None),
                ErrorType::TargetNotFound => Ok(Some(None)),
                ErrorType::WindowNotResponding => Ok(None),
                ErrorType::WindowNotFound => Ok(Some(None)),
                _ => Err(e),
            },
        }
    }

    /// The centre of `rect`, when what is there on screen is `window`: a
    /// real click or wheel lands on whatever is on top, which may be
    /// another program's window, and a rectangle from an accessibility
    /// provider may point anywhere.
    fn point_on(&self, window: &WindowInfo, rect: [i32; 4]) -> Result<(i32, i32), ToolError> {
        let (x, y) = centre(rect);
        // The window there must be this one, and the window under the
        // point inside it must be its own program's (another program's
        // window can be embedded as a child).
        let (root, owner) = self.system.window_at(x, y);
        if root == window.hwnd && owner == window.pid {
            return Ok((x, y));
        }
        let what = match self.system.window(root) {
            Some(w) if w.pid == window.pid && root != window.hwnd => {
                format!(
                    "'{}', another window of the same program (a dialog?), is on top",
                    w.title
                )
            }
            _ if root == window.hwnd => {
                "a window of another program embedded in it is there".to_string()
            }
            _ => "another window is on top".to_string(),
        };
        Err(ToolError::new(
            ErrorType::TargetObscured,
            format!(
                "At ({x}, {y}), where the target of '{}' is, {what}; nothing was clicked.",
                window.title
            ),
        )
        .retryable("Deal with the window on top first (or ask the user to move it), then retry."))
    }

    /// `type_text(hwnd, target, text)`: replaces the control's text.
    pub fn type_text(
        &self,
        hwnd: i64,
        target: &str,
        text: &str,
        allow_foreground: bool,
    ) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        typeable(text)?;
        let window = self.scoped(hwnd)?;
        let before = self.before(&window);
        let (control, rect, what, refused) = match self.typing_target(&window, target)? {
            Found::Control(c, listed) => match self.type_by_message(&window, &c, text, target)? {
                None => {
                    return Ok(with(
                        self.done_control("WM_SETTEXT", &before, &window, &c, &listed),
                        "verified",
                        true,
                    ));
                }
                Some(why) => (Some(c.clone()), c.rect, json!(c), why),
            },
            Found::Element { node, tree } => {
                match self.element_routes(&window, &before, &node, &tree, Verb::Type(text))? {
                    Routed::Done(report) => return Ok(report),
                    Routed::NotTaken(tried) => (
                        None,
                        node.rect,
                        json!(self.line_of(window.hwnd, &node)),
                        no_element_route(target, &tried),
                    ),
                }
            }
        };
        let edit = control.as_ref().filter(|c| controls::is_edit(&c.class));
        if !allow_foreground {
            return Ok(Gate::new(
                refused,
                format!("Typing means bringing '{}' to the front and sending real keystrokes to '{target}'.", window.title),
            )
            .to_json());
        }
        self.type_by_keys(
            &window,
            control.as_ref(),
            edit.is_some(),
            rect,
            text,
            target,
        )?;
        let verified = edit.is_some_and(|c| self.system.text(c.handle).is_ok_and(|t| t == text));
        Ok(with(
            self.done("SENDINPUT_KEYS", &before, what),
            "verified",
            verified,
        ))
    }

    /// What `type_text` types into. A password field is refused, and so
    /// is a disabled control.
    fn typing_target(&self, window: &WindowInfo, target: &str) -> Result<Found, ToolError> {
        let found = self.find(window, target)?;
        let (password, control) = match &found {
            Found::Control(c, _) => (c.password, Some(c)),
            Found::Element { node, .. } => (node.password, None),
        };
        if password {
            return Err(password_refused(target));
        }
        if let Some(c) = control {
            enabled(c, target)?;
        }
        Ok(found)
    }

    /// The message route: `WM_SETTEXT` into an edit control, confirmed by
    /// reading it back. `None` when it took, otherwise why it was not used.
    fn type_by_message(
        &self,
        window: &WindowInfo,
        control: &Control,
        text: &str,
        target: &str,
    ) -> Result<Option<String>, ToolError> {
        if controls::is_edit(&control.class) {
            return self.set_and_confirm(window, control.handle, text, target);
        }
        Ok(Some(format!(
            "'{target}' is a {} control, which takes no WM_SETTEXT",
            control.class
        )))
    }

    /// The keystroke route, once the caller agreed to the foreground: the
    /// window is brought forward, the target given the focus (its text
    /// cleared when it is an `edit`) or clicked, and `text` typed.
    fn type_by_keys(
        &self,
        window: &WindowInfo,
        control: Option<&Control>,
        edit: bool,
        rect: [i32; 4],
        text: &str,
        target: &str,
    ) -> Result<(), ToolError> {
        let strokes: Vec<Stroke> = text
            .chars()
            .map(|c| Stroke {
                modifiers: Default::default(),
                key: Key::Char(c),
            })
            .collect();
        self.system.check_keys(&strokes).map_err(input_failed)?;
        self.bring_forward(window)?;
        match control {
            Some(c) => {
                if self.system.focus(c.handle).is_none() {
                    return Err(input_failed(format!(
                        "'{target}' did not take the keyboard focus"
                    )));
                }
                // Replaces, as the message route does; cleared only once the
                // keys can follow, so a refusal leaves the text alone.
                self.settled();
                self.ready_for_key(window, 0)?;
                if edit {
                    self.system
                        .set_text(c.handle, "")
                        .map_err(|e| message_error(e, window))?;
                }
            }
            None => {
                let (x, y) = self.point_on(window, rect)?;
                self.real_click(x, y, Press::Left)?;
            }
        }
        self.send_checked(window, &strokes)
    }

    /// `WM_SETTEXT` and the read-back; on a mismatch the old text is put
    /// back, so a refusal leaves the control as it was. `None` when it
    /// took, otherwise why the message route was not used.
    fn set_and_confirm(
        &self,
        window: &WindowInfo,
        handle: isize,
        text: &str,
        target: &str,
    ) -> Result<Option<String>, ToolError> {
        let fail = |e| message_error(e, window);
        let old = self.system.text(handle).map_err(fail)?;
        // Text longer than a read-back holds could not be put back whole.
        if old.chars().count() > MAX_TYPED_CHARS {
            return Ok(Some(format!(
                "'{target}' holds more than {MAX_TYPED_CHARS} characters, which WM_SETTEXT could not put back if the new text did not take"
            )));
        }
        self.system.set_text(handle, text).map_err(fail)?;
        if self.system.text(handle).map_err(fail)? == text {
            return Ok(None);
        }
        self.system.set_text(handle, &old).map_err(fail)?;
        Ok(Some(format!(
            "the text read back from '{target}' after WM_SETTEXT differs from what was sent (the old text was put back)"
        )))
    }

    /// Sends strokes one at a time to `window`, checking before each that
    /// it still has the foreground and that the focus is not in a password
    /// field or another program: a Tab, a click or the program itself can
    /// move either between two keys.
    fn send_checked(&self, window: &WindowInfo, strokes: &[Stroke]) -> Result<(), ToolError> {
        let started = Instant::now();
        for (sent, stroke) in strokes.iter().enumerate() {
            if started.elapsed() > KEYS_BUDGET {
                return Err(ToolError::new(
                    ErrorType::WindowNotResponding,
                    format!("'{}' answered so slowly that {sent} keystroke(s) took {} s; the rest were not sent.", window.title, KEYS_BUDGET.as_secs()),
                )
                .recover("Check with see(hwnd) what arrived before sending more."));
            }
            // Let the program act on a Tab, Enter or click (and move its
            // focus) before judging where this key goes.
            self.settled();
            self.ready_for_key(window, sent)?;
            let keyed = self
                .system
                .send_keys(std::slice::from_ref(stroke))
                .map_err(input_failed);
            if !is_plain_character(stroke) {
                self.focus_may_move();
            }
            keyed?;
        }
        Ok(())
    }

    /// The checks before one keystroke: the foreground, then UI
    /// Automation's (slow) view of the focused element — asked before every
    /// key, since inputs inside a browser or WPF window share one window
    /// handle and a move between them shows nowhere else — then the window
    /// checks, right before the key. The focused window must be the same
    /// before and after the element was asked, or it is asked again.
    fn ready_for_key(&self, window: &WindowInfo, sent: usize) -> Result<(), ToolError> {
        for _ in 0..3 {
            self.still_in_front(window, sent)?;
            let before = self.system.focus(window.hwnd);
            self.focused_element_is_safe(window, sent)?;
            self.still_in_front(window, sent)?;
            let Some(focused) = self.system.focus(window.hwnd) else {
                return Err(input_failed(format!(
                    "'{}' did not take the keyboard focus",
                    window.title
                )));
            };
            if self.system.window_pid(focused) != window.pid {
                return Err(focus_elsewhere(window, sent));
            }
            if self.system.is_password(focused) {
                return Err(password_refused("the focused control").detail("keystrokes_sent", sent));
            }
            if before == Some(focused) {
                return Ok(());
            }
        }
        Err(input_failed(format!(
            "the focus in '{}' kept moving while it was checked; {sent} keystroke(s) were sent",
            window.title
        )))
    }

    fn still_in_front(&self, window: &WindowInfo, sent: usize) -> Result<(), ToolError> {
        if self.system.foreground() == window.hwnd {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorType::ForegroundNotTaken,
            format!("After {sent} keystroke(s) '{}' was no longer the foreground window; the rest were not sent.", window.title),
        )
        .recover("Check with see(hwnd) what arrived before sending more."))
    }

    /// UI Automation's view of the focus, for inputs without a window of
    /// their own (a browser's or WPF's password box): the focused element
    /// must be the window's program's and not a password field. Fails
    /// closed: an answer that does not come, or an error, stops the keys;
    /// only Wine, which has no UI Automation, relies on the window checks.
    fn focused_element_is_safe(&self, window: &WindowInfo, sent: usize) -> Result<(), ToolError> {
        let problem = match accessibility::focused_element_within(
            self.ax.clone(),
            accessibility::READ_TIMEOUT,
        ) {
            Bounded::Answer(None) => return Ok(()),
            Bounded::Answer(Some(element)) if element.password => {
                return Err(password_refused("the focused element").detail("keystrokes_sent", sent));
            }
            Bounded::Answer(Some(element)) if element.pid != window.pid => {
                return Err(focus_elsewhere(window, sent));
            }
            Bounded::Answer(Some(_)) => return Ok(()),
            Bounded::TimedOut => "UI Automation did not say in time".to_string(),
            Bounded::Unavailable(reason) => reason,
        };
        Err(ToolError::new(
            ErrorType::InputFailed,
            format!("Could not tell whether the focus is in a password field ({problem}); {sent} keystroke(s) were sent, the rest were not."),
        )
        .recover("Check with see(hwnd) what arrived; a program whose accessibility does not answer cannot be typed into safely.")
        .detail("keystrokes_sent", sent))
    }

    /// `scroll(hwnd, target, direction)`: scroll messages, verified by the
    /// scroll bar's position; the wheel only with the foreground.
    pub fn scroll(
        &self,
        hwnd: i64,
        target: Option<&str>,
        direction: Direction,
        lines: u32,
        allow_foreground: bool,
    ) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        let lines = lines.clamp(1, MAX_SCROLL_LINES);
        let window = self.scoped(hwnd)?;
        let before = self.before(&window);
        let label = target.unwrap_or(&window.title).to_string();
        let mut element_refusal = None;
        let (handle, rect, what) = match target {
            None => (window.hwnd, window.rect, json!({"window": window.title})),
            Some(t) => match self.find(&window, t)? {
                Found::Control(c, _) => (c.handle, c.rect, json!(c)),
                Found::Element { node, tree } => {
                    let verb = Verb::Scroll(direction, lines);
                    match self.element_routes(&window, &before, &node, &tree, verb)? {
                        Routed::Done(report) => return Ok(report),
                        Routed::NotTaken(tried) => {
                            element_refusal = Some(no_element_route(t, &tried))
                        }
                    }
                    (0, node.rect, json!(self.line_of(window.hwnd, &node)))
                }
            },
        };
        let route = match direction {
            Direction::Up | Direction::Down => "WM_VSCROLL",
            Direction::Left | Direction::Right => "WM_HSCROLL",
        };
        if handle != 0 {
            match self
                .system
                .scroll(handle, direction, lines)
                .map_err(|e| message_error(e, &window))?
            {
                Some((from, to)) if from != to => {
                    let mut report = self.done(route, &before, what);
                    report["position"] = json!({"before": from, "after": to});
                    return Ok(report);
                }
                Some((at, _)) => {
                    let mut report = self.done(route, &before, what);
                    report["moved"] = json!(false);
                    report["position"] = json!({"before": at, "after": at});
                    report["note"] = json!(
                        "The scroll bar did not move: it is already at that end, or the control ignores scroll messages."
                    );
                    return Ok(report);
                }
                None => {}
            }
        }
        if !allow_foreground {
            return Ok(Gate::new(
                element_refusal.unwrap_or_else(|| format!("'{label}' has no scroll bar that answers scroll messages")),
                format!("Scrolling it means bringing '{}' to the front and turning the real mouse wheel over it.", window.title),
            )
            .to_json());
        }
        self.bring_forward(&window)?;
        let (x, y) = self.point_on(&window, rect)?;
        let notches = lines.div_ceil(3) as i32;
        let (notches, horizontal) = match direction {
            Direction::Up => (notches, false),
            Direction::Down => (-notches, false),
            Direction::Left => (-notches, true),
            Direction::Right => (notches, true),
        };
        // A queued Enter could still open a window under the pointer.
        self.settled();
        self.system
            .wheel(x, y, notches, horizontal)
            .map_err(input_failed)?;
        Ok(self.done("SENDINPUT_WHEEL", &before, what))
    }

    /// `key(hwnd, keys)`: keystrokes go to the focused window, so this
    /// always needs the foreground.
    pub fn key(&self, hwnd: i64, keys: &str, allow_foreground: bool) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        let strokes = parse_keys(keys).map_err(|problem| {
            ToolError::new(ErrorType::InvalidArguments, format!("Bad key notation '{keys}': {problem}."))
                .recover("Write chords as Ctrl+s, Alt+F4 or ^s, named keys in braces ({ENTER}, {TAB}, {F5}); use type_text for text.")
        })?;
        let window = self.scoped(hwnd)?;
        let before = self.before(&window);
        if !allow_foreground {
            return Ok(Gate::new(
                "keystrokes reach only the window that has the keyboard focus",
                format!("Sending {} keystroke(s) means bringing '{}' to the front; the user's own typing would go there too meanwhile.", strokes.len(), window.title),
            )
            .to_json());
        }
        // A key the layout cannot type is found before the window moves.
        self.system.check_keys(&strokes).map_err(input_failed)?;
        self.bring_forward(&window)?;
        self.send_checked(&window, &strokes)?;
        let mut report = self.done("SENDINPUT_KEYS", &before, json!({"window": window.title}));
        report["strokes"] = json!(strokes.len());
        Ok(report)
    }

    /// Brings a window forward for a route that needs it, and checks it
    /// came: `SetForegroundWindow` reports success for windows that never
    /// appear, so its answer alone is never trusted.
    fn bring_forward(&self, window: &WindowInfo) -> Result<(), ToolError> {
        self.system.show(window.hwnd, ShowMode::Restore);
        // Showing is asynchronous (a hung window must not block the call),
        // so the result is awaited for a moment, asking again meanwhile.
        let started = Instant::now();
        loop {
            self.system.set_foreground(window.hwnd);
            let now = self.system.window(window.hwnd);
            let shown = now.as_ref().is_some_and(|w| w.visible && !w.minimized);
            let front = self.system.foreground() == window.hwnd;
            if shown && front {
                return Ok(());
            }
            if started.elapsed() >= FOREGROUND_WAIT {
                return Err(ToolError::new(
                    ErrorType::ForegroundNotTaken,
                    format!("'{}' did not come to the front (visible: {shown}, foreground: {front}).", window.title),
                )
                .retryable("Windows may refuse while the user is typing elsewhere; ask the user to click the window once, then retry."));
            }
            std::thread::sleep(LAUNCH_POLL);
        }
    }

    /// `reveal(hwnd)`: the one tool that takes the foreground, and says so.
    pub fn reveal(&self, hwnd: i64) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        let window = self.scoped(hwnd)?;
        let before = self.system.foreground();
        self.bring_forward(&window)?;
        Ok(json!({
            "ok": true,
            "hwnd": window.hwnd,
            "title": window.title,
            "took_foreground": before != window.hwnd,
            "verified": "visible, not minimised and the foreground window",
        }))
    }

    /// `open_app(command, args, accessibility)`, with listed names found
    /// by `programs`.
    pub fn open_app(
        &self,
        command: &str,
        args: &[String],
        accessibility: bool,
        programs: &ProgramSearch,
    ) -> Result<Value, ToolError> {
        let _turn = self.one_at_a_time()?;
        let app = choose_app(command, &self.apps).map_err(|problem| {
            ToolError::new(ErrorType::AppNotAllowed, format!("{problem}."))
                .recover("DO NOT retry with another spelling: which programs may start is the user's decision. Ask them; they list it in WAMCP_DESKTOP_APPS (a name found on PATH or in the Start menu, a full path, a shortcut or an AppUserModelID).")
                .detail("allowed", self.apps.clone())
        })?;
        let start = self.what_starts(&app, programs)?;
        let mut all_args = args.to_vec();
        if accessibility {
            all_args.extend(ACCESSIBILITY_FLAGS.iter().map(|f| f.to_string()));
        }
        let line = match &start {
            Start::Program { file, stored } => {
                shortcut_command_line(&file.to_string_lossy(), stored, &all_args)
            }
            Start::Package(_) => arguments_line(&all_args),
        }
        .map_err(|problem| ToolError::new(ErrorType::InvalidArguments, format!("{problem}.")))?;
        if let Some((c, _)) = any_ascii_look_alike(&line, |c| self.system.best_fit_ascii(c)) {
            return Err(ToolError::new(
                ErrorType::InvalidArguments,
                format!(
                    "'{c}' (U+{:04X}) becomes a plain ASCII character in this system's ANSI code page, so a \
                     program reading its arguments in ANSI would see different ones.",
                    c as u32
                ),
            )
            .recover("DO NOT retry the same arguments; write that character in plain ASCII or leave it out."));
        }
        let before = self.system.foreground();
        let launched = match &start {
            Start::Program { file, .. } => self.system.launch(file, &line),
            Start::Package(id) => self.system.activate(id, &line),
        }
        .map_err(|e| {
            ToolError::new(
                ErrorType::AppLaunchFailed,
                format!("{} did not start: {e}", start.name()),
            )
        })?;
        let pid = launched.pid;
        self.launched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pid, launched);
        let watch = self.keep_foreground(pid, before);
        let windows: Vec<Value> = watch
            .windows
            .iter()
            .map(|w| json!({"hwnd": w.hwnd, "title": w.title, "class": w.class}))
            .collect();
        let foreground_now = self.system.foreground();
        Ok(json!({
            "ok": true,
            "pid": pid,
            "program": start.name(),
            "windows": windows,
            "foreground_contests": watch.contests,
            "foreground_unchanged": foreground_now == before,
            "accessibility_flags": accessibility,
            "note": if windows.is_empty() { "No window of the process appeared while watching; it may open one later (call windows()), or hand over to another process, whose windows are out of scope unless listed in WAMCP_DESKTOP_PROCESSES." } else { "" },
        }))
    }

    /// What starts for a listed app: a program file (a listed path, a name
    /// found on `PATH` or in the Start menu, a shortcut's target, with the
    /// shortcut's own arguments) or a packaged app.
    fn what_starts(&self, app: &App, programs: &ProgramSearch) -> Result<Start, ToolError> {
        let program = |file: PathBuf| Start::Program {
            file,
            stored: String::new(),
        };
        match app {
            App::Package(id) => Ok(Start::Package(id.clone())),
            App::Path(path) => {
                let file = self.trusted(programs, PathBuf::from(path))?;
                if !file.is_file() {
                    return Err(app_not_found(path));
                }
                Ok(program(file))
            }
            App::Shortcut(path) => self.through_shortcut(programs, PathBuf::from(path)),
            App::Name(name) => match self.system.find_program(programs, name) {
                Some(file) => Ok(program(self.trusted(programs, file)?)),
                None => {
                    let title = name.strip_suffix(".exe").unwrap_or(name);
                    let lnk = self
                        .system
                        .start_menu(title)
                        .ok_or_else(|| app_not_found(name))?;
                    self.through_shortcut(programs, lnk)
                }
            },
        }
    }

    /// The program a shortcut starts. The shortcut and its target must
    /// both lie outside every folder the agent can write, and the target
    /// be a program (`.exe`): a shortcut is a file the agent could rewrite,
    /// and may point anywhere.
    fn through_shortcut(&self, programs: &ProgramSearch, lnk: PathBuf) -> Result<Start, ToolError> {
        let lnk = self.trusted(programs, lnk)?;
        let (target, stored) = self.system.shortcut(&lnk).map_err(|e| {
            ToolError::new(
                ErrorType::AppNotFound,
                format!("The shortcut {} could not be read: {e}.", lnk.display()),
            )
            .recover("DO NOT retry: ask the user to check the shortcut.")
        })?;
        let is_program = target
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("exe"));
        if !is_program {
            return Err(ToolError::new(
                ErrorType::AppNotAllowed,
                format!("The shortcut {} points to {}, which is not a program (.exe).", lnk.display(), target.display()),
            )
            .recover("DO NOT retry: open_app starts programs only; ask the user to list the program itself."));
        }
        Ok(Start::Program {
            file: self.trusted(programs, target)?,
            stored,
        })
    }

    /// `file`, when it lies outside every folder the agent can write: a
    /// listed file the agent can rewrite is whatever the agent wrote last.
    fn trusted(&self, programs: &ProgramSearch, file: PathBuf) -> Result<PathBuf, ToolError> {
        if self.system.trusted_program(programs, &file) {
            return Ok(file);
        }
        Err(ToolError::new(
            ErrorType::AppNotAllowed,
            format!("{} lies in a folder the agent can write, so it may not be the program the user listed.", file.display()),
        )
        .recover("DO NOT retry: ask the user to install the program outside the project and writable roots."))
    }

    /// Watches a launched program and takes the foreground back each time
    /// it grabs it: a program activates itself a moment after start, sooner
    /// than it can be prevented, so this is a contest, not a setting.
    fn keep_foreground(&self, pid: u32, before: isize) -> Watch {
        let started = Instant::now();
        let mut quiet_since = Instant::now();
        let mut watch = Watch {
            windows: Vec::new(),
            contests: 0,
        };
        // The program's window that last held the foreground: a grab is
        // counted once, however many polls it takes to undo.
        let mut grabbed_by = 0;
        while started.elapsed() < LAUNCH_WATCH {
            let front = self.system.foreground();
            if front != before && front != 0 && self.system.window_pid(front) == pid {
                self.system.set_foreground(before);
                // Where giving it back is refused, hiding the window and
                // showing it again unactivated moves the foreground off
                // it; once per grab, for where even that cannot (no window
                // to give it to).
                if front != grabbed_by {
                    watch.contests += 1;
                    grabbed_by = front;
                    if self.system.foreground() == front {
                        self.system.show(front, ShowMode::Hide);
                        self.system.set_foreground(before);
                        self.system.show(front, ShowMode::NoActivate);
                    }
                }
                quiet_since = Instant::now();
            } else if front != grabbed_by {
                grabbed_by = 0;
            }
            watch.windows = self
                .system
                .windows()
                .into_iter()
                .filter(|w| w.pid == pid)
                .collect();
            if watch.windows.is_empty() {
                // Quiet counts from the first window: a program grabs
                // the foreground once it has one.
                quiet_since = Instant::now();
            } else if quiet_since.elapsed() >= LAUNCH_SETTLED {
                break;
            }
            std::thread::sleep(LAUNCH_POLL);
        }
        watch
    }

    /// `see(hwnd, with_tree, max_edge)`.
    pub fn see(
        &self,
        hwnd: i64,
        with_tree: bool,
        max_edge: Option<u32>,
    ) -> Result<Seen, ToolError> {
        let window = self.scoped(hwnd)?;
        // 0: the controls and tree only, without the picture's tokens.
        let max_edge = match max_edge {
            Some(0) => None,
            edge => Some(
                edge.unwrap_or(DEFAULT_MAX_EDGE)
                    .clamp(MIN_MAX_EDGE, MAX_MAX_EDGE),
            ),
        };
        let mut report = json!({
            "ok": true,
            "hwnd": window.hwnd,
            "title": window.title,
            "class": window.class,
            "pid": window.pid,
            "process": window.process,
            "rect": window.rect,
        });
        let mut png = None;
        // Controls first: another program's window embedded in this one
        // would be drawn into the picture too.
        // Unknown until the listing succeeds: no picture before then.
        let mut embeds_foreign = true;
        match self.controls_of(&window) {
            Ok((list, foreign)) => {
                report["controls"] = json!(list);
                embeds_foreign = foreign > 0;
                if embeds_foreign {
                    report["foreign_controls_hidden"] = json!(foreign);
                }
            }
            Err(MessageError::NotResponding) => {
                report["controls_unavailable"] = json!("the window is not responding to messages")
            }
            Err(MessageError::Gone) => return Err(message_error(MessageError::Gone, &window)),
        }
        if with_tree && self.add_tree(&mut report, &window) > 0 {
            embeds_foreign = true;
        }
        let Some(max_edge) = max_edge else {
            return Ok(Seen { report, png });
        };
        let picture = if embeds_foreign {
            Err(
                "the window shows windows of another program inside it, which is out of scope, or \
                 its controls could not be listed to tell"
                    .to_string(),
            )
        } else {
            self.picture(&window)
        };
        match picture {
            Ok((method, frame)) => match frame.to_png(max_edge) {
                Ok((w, h, bytes)) => {
                    report["image"] = json!({"method": method, "width": w, "height": h, "captured_width": frame.width, "captured_height": frame.height});
                    png = Some(bytes);
                }
                Err(e) => {
                    report["image_unavailable"] =
                        json!(format!("the capture could not be encoded: {e}"))
                }
            },
            Err(reason) => report["image_unavailable"] = json!(reason),
        }
        Ok(Seen { report, png })
    }

    /// Adds the window's own elements to `see`'s report as lines with
    /// refs; answers how many elements of other programs were left out.
    fn add_tree(&self, report: &mut Value, window: &WindowInfo) -> usize {
        let (read, foreign) = self.tree_of(window);
        let (nodes, cut_short) = match read {
            Read::Nodes(nodes) => (nodes, false),
            Read::Partial(nodes) => (nodes, true),
            Read::Unavailable(reason) => {
                report["tree_unavailable"] = json!(reason);
                return foreign;
            }
        };
        let refs = self.refs_of(window.hwnd, &nodes);
        report["tree"] = json!(outline::outline(&nodes, &refs));
        if cut_short {
            report["timed_out"] = json!(true);
        }
        if foreign > 0 {
            report["foreign_elements_hidden"] = json!(foreign);
        }
        foreign
    }

    /// A picture of the window that is not one flat colour: `PrintWindow`
    /// first; then the pixels on screen, only while the window is visible
    /// and nothing covers it (a covered window's screen pixels are another
    /// window's, possibly one that is out of scope).
    fn picture(&self, window: &WindowInfo) -> Result<(&'static str, crate::image::Frame), String> {
        let printed = self.system.capture(window.hwnd, CaptureMethod::Print);
        if let Ok(frame) = &printed
            && !frame.is_blank()
        {
            return Ok(("PrintWindow", printed.unwrap_or_else(|_| unreachable!())));
        }
        let printed_problem = match &printed {
            Ok(_) => "PrintWindow gave a blank frame".to_string(),
            Err(e) => format!("PrintWindow failed ({e})"),
        };
        if !window.visible || window.minimized {
            return Err(format!(
                "{printed_problem} and the window is hidden or minimised; reveal(hwnd) would show it but takes the foreground"
            ));
        }
        // Through a layered window or a window region, pixels behind show.
        if self.system.see_through(window.hwnd) {
            return Err(format!(
                "{printed_problem} and the window is partly transparent, so its screen pixels include what lies behind it"
            ));
        }
        if let Some(cover) = self.covering(window) {
            return Err(format!(
                "{printed_problem} and '{cover}' covers part of the window, so its screen pixels are not its own; reveal(hwnd) would bring it to the front"
            ));
        }
        match self.system.capture(window.hwnd, CaptureMethod::Screen) {
            Ok(frame) if !frame.is_blank() => Ok(("BitBlt", frame)),
            Ok(_) => Err(format!(
                "{printed_problem} and the window's screen pixels are one colour (GPU or protected content)"
            )),
            Err(e) => Err(format!(
                "{printed_problem} and the screen copy failed ({e})"
            )),
        }
    }

    /// The title of a visible window in front of `window` that overlaps it.
    fn covering(&self, window: &WindowInfo) -> Option<String> {
        let overlaps = |r: [i32; 4]| {
            r[0] < window.rect[2]
                && window.rect[0] < r[2]
                && r[1] < window.rect[3]
                && window.rect[1] < r[3]
        };
        self.system
            .windows()
            .into_iter()
            .take_while(|w| w.hwnd != window.hwnd)
            .find(|w| {
                w.visible && !w.minimized && !w.cloaked && w.pid != window.pid && overlaps(w.rect)
            })
            .map(|w| w.title)
    }

    /// What is looked at before an action, to tell afterwards what it did.
    fn before(&self, window: &WindowInfo) -> Before {
        Before {
            foreground: self.system.foreground(),
            shown: self.system.windows().iter().map(|w| w.hwnd).collect(),
            pid: window.pid,
        }
    }

    /// The windows of the acted-on program that appeared since `before`
    /// (the dialog a button opened), as `windows()` names them.
    fn opened_since(&self, before: &Before) -> Vec<Value> {
        self.system
            .windows()
            .into_iter()
            .filter(|w| w.pid == before.pid && !w.cloaked && !before.shown.contains(&w.hwnd))
            .map(|w| json!({ "hwnd": w.hwnd, "title": w.title, "class": w.class }))
            .collect()
    }

    /// The report of an action that was done: its route, whether the
    /// foreground stayed, and any window of the program it opened, looked
    /// for once the program has had `SETTLE` to act on real input.
    fn done(&self, route: &str, before: &Before, target: Value) -> Value {
        self.settled();
        let mut report = json!({
            "ok": true,
            "route": route,
            "target": target,
            "foreground_unchanged": self.system.foreground() == before.foreground,
        });
        let opened = self.opened_since(before);
        if !opened.is_empty() {
            report["opened"] = json!(opened);
        }
        report
    }
}

/// The screen before an action: the foreground window, every window
/// shown, and whose windows the action is on.
struct Before {
    foreground: isize,
    shown: Vec<isize>,
    pid: u32,
}

/// What `open_app` starts.
enum Start {
    /// A program file, with arguments a shortcut holds (command-line text).
    Program { file: PathBuf, stored: String },
    /// A packaged app's AppUserModelID.
    Package(String),
}

impl Start {
    fn name(&self) -> String {
        match self {
            Start::Program { file, .. } => file.display().to_string(),
            Start::Package(id) => id.clone(),
        }
    }
}

fn app_not_found(what: &str) -> ToolError {
    ToolError::new(ErrorType::AppNotFound, format!("{what} was not found."))
        .recover("DO NOT retry: the listed program is not installed where WAMCP_DESKTOP_APPS says (names are looked up on PATH, outside every folder the agent can write, then in the Start menu).")
}

struct Watch {
    windows: Vec<WindowInfo>,
    contests: u32,
}

fn with(mut report: Value, key: &str, value: impl Into<Value>) -> Value {
    report[key] = value.into();
    report
}

/// The middle of a rectangle, which a provider may give with any edges.
fn centre(rect: [i32; 4]) -> (i32, i32) {
    let mid = |a: i32, b: i32| ((i64::from(a) + i64::from(b)) / 2) as i32;
    (mid(rect[0], rect[2]), mid(rect[1], rect[3]))
}

fn enabled(control: &Control, target: &str) -> Result<(), ToolError> {
    if control.enabled {
        return Ok(());
    }
    Err(disabled(target))
}

fn disabled(target: &str) -> ToolError {
    ToolError::new(ErrorType::TargetDisabled, format!("'{target}' is disabled; acting on it would do nothing.")).retryable(
        "Do what the window needs first (fill in required fields), check with see(hwnd), then retry.",
    )
}

/// Refuses text that `type_text` does not type: longer than
/// `MAX_TYPED_CHARS` characters, or holding a NUL character.
fn typeable(text: &str) -> Result<(), ToolError> {
    if text.chars().count() > MAX_TYPED_CHARS || text.contains('\0') {
        return Err(ToolError::new(
            ErrorType::InvalidArguments,
            format!("text is longer than {MAX_TYPED_CHARS} characters or holds a NUL character."),
        )
        .recover("Type it in parts without NUL characters, or write it to a file instead."));
    }
    Ok(())
}

/// A key that only types its character: anything else (Tab, Enter, a
/// chord, a control character in text) may move the focus.
fn is_plain_character(stroke: &Stroke) -> bool {
    matches!(stroke.key, Key::Char(c) if !c.is_control()) && !stroke.modifiers.any()
}

fn focus_elsewhere(window: &WindowInfo, sent: usize) -> ToolError {
    ToolError::new(
        ErrorType::WindowOutOfScope,
        format!("The focus in '{}' is in another program's window or element embedded in it; {sent} keystroke(s) were sent.", window.title),
    )
    .recover("DO NOT retry: that program's windows are out of scope.")
    .detail("keystrokes_sent", sent)
}

fn password_refused(target: &str) -> ToolError {
    ToolError::new(
        ErrorType::PasswordField,
        format!("'{target}' is a password field; wamcp never reads or types passwords."),
    )
    .recover("DO NOT retry: ask the user to type it themselves.")
}

fn message_error(error: MessageError, window: &WindowInfo) -> ToolError {
    match error {
        MessageError::NotResponding => ToolError::new(
            ErrorType::WindowNotResponding,
            format!(
                "'{}' did not answer a window message in time; it is busy or hung.",
                window.title
            ),
        )
        .retryable("Wait a few seconds and retry once; if it stays hung, tell the user."),
        MessageError::Gone => ToolError::new(
            ErrorType::WindowNotFound,
            format!("'{}' closed while wamcp was acting on it.", window.title),
        )
        .recover("Call windows() to see what is open now."),
    }
}

/// A target looked for in an accessibility tree whose provider stopped
/// answering after `read` elements.
fn tree_cut_short(window: &WindowInfo, target: &str, read: usize) -> ToolError {
    ToolError::new(
        ErrorType::WindowNotResponding,
        format!(
            "'{target}' is no native control of '{}', and its accessibility tree stopped answering after {read} element(s) in {:.1} s, so whether it holds exactly one element of that name is unknown; nothing was done.",
            window.title,
            accessibility::READ_TIMEOUT.as_secs_f32()
        ),
    )
    .retryable("Retry once the program is less busy; see(hwnd, with_tree=true) shows the part that was read.")
    .detail("elements_read", read)
}

/// A click sent to a button whose program has not finished handling it and
/// opened no window: it may be busy with it, or hung since.
fn click_unfinished(window: &WindowInfo, control: &Control) -> ToolError {
    ToolError::new(
        ErrorType::WindowNotResponding,
        format!(
            "'{}' was clicked, but '{}' has not finished handling the click after {} s and opened no window.",
            control.text,
            window.title,
            MESSAGE_TIMEOUT_MS / 1000
        ),
    )
    .recover("DO NOT click again (that would click twice): wait, then look with see(hwnd) or windows(); if it stays hung, tell the user.")
}

/// Why an element got no background route: which routes were tried and
/// why none took, or that it offers none.
fn no_element_route(target: &str, tried: &[String]) -> String {
    if tried.is_empty() {
        return format!(
            "'{target}' is no native control and offers no UI Automation pattern that acts in the background"
        );
    }
    format!(
        "'{target}' is no native control and no UI Automation route took ({})",
        tried.join("; ")
    )
}

fn input_failed(problem: String) -> ToolError {
    ToolError::new(ErrorType::InputFailed, format!("Synthetic input failed: {problem}."))
        .retryable("Retry once; if it fails again, the session may be locked or a secure desktop is up (tell the user).")
}
