//! The accessibility tree (UI Automation), read on a worker thread that is
//! abandoned when it overruns its time: a browser's provider can take many
//! seconds or never answer, and a tool call must not hang with it.

use crate::Direction;
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// One element of the tree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Node {
    /// How far below the window it is; the window's children are 0.
    pub depth: u32,
    /// Its accessible name, which a target's text is compared with.
    pub name: String,
    /// UI Automation's control type name (`Button`, `Edit`, `ListItem`).
    pub control_type: String,
    /// The id its program gave it, when it has one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub automation_id: String,
    /// Screen coordinates: left, top, right, bottom.
    pub rect: [i32; 4],
    /// Whether the element accepts input.
    pub enabled: bool,
    /// A password field: never typed into.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub password: bool,
    /// UI Automation's runtime id, unique while the element lives: what a
    /// ref stands for. Empty when the provider gave none (no ref then).
    #[serde(skip)]
    pub id: Vec<i32>,
    /// What the Value or RangeValue pattern holds; never a password's.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// Focus, check, selection and expansion.
    #[serde(flatten)]
    pub state: State,
    /// The control patterns it offers: the background routes it has.
    #[serde(skip)]
    pub patterns: Patterns,
    /// The process it belongs to: another program's content embedded in
    /// a window (a child window, a WebView) shows in its tree too.
    #[serde(skip)]
    pub pid: u32,
}

/// An element's state as a person sees it; `None` where the element has
/// no such state (a button is neither checked nor unchecked).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    /// It has the keyboard focus (within its program).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub focused: bool,
    /// Toggle pattern: on (`Some(true)`), off, or no such pattern.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// SelectionItem pattern: selected or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<bool>,
    /// ExpandCollapse pattern: expanded or collapsed (a leaf has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expanded: Option<bool>,
    /// Its value cannot be set.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

/// A UI Automation control pattern an element may offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// MSAA's default action, as UI Automation exposes it.
    LegacyIAccessible,
    /// Buttons, links, menu items.
    Invoke,
    /// Check boxes and toggle buttons.
    Toggle,
    /// List, tab and radio items.
    SelectionItem,
    /// Tree items, combo boxes, menus.
    ExpandCollapse,
    /// Text inputs.
    Value,
    /// Sliders and spinners.
    RangeValue,
    /// Scrollable containers.
    Scroll,
    /// Items of a scrollable container.
    ScrollItem,
}

/// A set of [`Pattern`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Patterns(u16);

impl Patterns {
    /// The set of `patterns`.
    pub fn of(patterns: &[Pattern]) -> Patterns {
        patterns.iter().fold(Patterns(0), |set, &p| set.with(p))
    }
    /// This set and `pattern`.
    pub fn with(self, pattern: Pattern) -> Patterns {
        Patterns(self.0 | 1 << pattern as u16)
    }
    /// Whether `pattern` is in the set.
    pub fn has(self, pattern: Pattern) -> bool {
        self.0 & 1 << pattern as u16 != 0
    }
}

/// One background action on an element, through one pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `LegacyIAccessible.DoDefaultAction`: what a click does, without
    /// the focus (measured on Chromium, where `Invoke` takes the foreground).
    DefaultAction,
    /// `Invoke.Invoke`.
    Invoke,
    /// `Toggle.Toggle`.
    Toggle,
    /// `SelectionItem.Select`.
    Select,
    /// `ExpandCollapse.Expand`.
    Expand,
    /// `ExpandCollapse.Collapse`.
    Collapse,
    /// `Value.SetValue`.
    SetValue(String),
    /// `RangeValue.SetValue`.
    SetRange(f64),
    /// `Scroll.Scroll`, one small step per line.
    Scroll(Direction, u32),
    /// `ScrollItem.ScrollIntoView`.
    ScrollIntoView,
}

impl Action {
    /// The pattern the action goes through.
    pub fn pattern(&self) -> Pattern {
        match self {
            Action::DefaultAction => Pattern::LegacyIAccessible,
            Action::Invoke => Pattern::Invoke,
            Action::Toggle => Pattern::Toggle,
            Action::Select => Pattern::SelectionItem,
            Action::Expand | Action::Collapse => Pattern::ExpandCollapse,
            Action::SetValue(_) => Pattern::Value,
            Action::SetRange(_) => Pattern::RangeValue,
            Action::Scroll(..) => Pattern::Scroll,
            Action::ScrollIntoView => Pattern::ScrollItem,
        }
    }

    /// Whether the action writes a value (never into a password field).
    pub fn gives_value(&self) -> bool {
        matches!(self, Action::SetValue(_) | Action::SetRange(_))
    }

    /// The route as reports name it.
    pub fn route(&self) -> &'static str {
        match self {
            Action::DefaultAction => "UIA_DEFAULT_ACTION",
            Action::Invoke => "UIA_INVOKE",
            Action::Toggle => "UIA_TOGGLE",
            Action::Select => "UIA_SELECT",
            Action::Expand => "UIA_EXPAND",
            Action::Collapse => "UIA_COLLAPSE",
            Action::SetValue(_) => "UIA_SET_VALUE",
            Action::SetRange(_) => "UIA_SET_RANGE_VALUE",
            Action::Scroll(..) => "UIA_SCROLL",
            Action::ScrollIntoView => "UIA_SCROLL_INTO_VIEW",
        }
    }
}

/// Why an action on an element was not done, or may not have been.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActError {
    /// No element under the window has that runtime id any more.
    Gone,
    /// The element does not offer the pattern (or no longer does).
    Unsupported,
    /// Nothing was done, and why: the provider said it cannot (not
    /// implemented, not now), or the element could not be looked for.
    Declined(String),
    /// The element is a password field now: no value is given to it.
    Password,
    /// The pattern call failed in a way that does not say whether it
    /// took (a provider that acts, then errs): no other route may follow.
    Failed(String),
}

/// Most elements one read returns, and how deep it walks.
pub const MAX_NODES: usize = 400;
/// How many levels below the window a read walks.
pub const MAX_DEPTH: u32 = 12;
/// How long a read may take before it is abandoned (short in this crate's
/// tests, whose fake provider never answers).
pub const READ_TIMEOUT: Duration = if cfg!(test) {
    Duration::from_millis(300)
} else {
    Duration::from_secs(5)
};
/// Reads still running after being abandoned; past this no new one starts,
/// so a provider that never answers cannot pile up threads.
const MAX_ABANDONED: usize = 4;

/// The UI Automation questions the desktop tools ask; faked in tests.
pub trait Accessibility: Send + Sync + 'static {
    /// The elements under the window, depth first, at most `MAX_NODES`,
    /// each handed to `found` as soon as it is read: what came before a
    /// slow provider stopped answering is still worth showing.
    fn tree(&self, hwnd: isize, found: &mut dyn FnMut(Node)) -> Result<(), String>;
    /// The element holding the keyboard focus. Web and WPF inputs have no
    /// window of their own, so the checks on the focused window cannot see
    /// them. `Ok(None)` only under Wine, which has no UI Automation.
    fn focused_element(&self) -> Result<Option<FocusedElement>, String>;
    /// Does `action` to `element` under `hwnd`, found afresh: an element
    /// seen earlier may be gone. Once the element is found, and before the
    /// pattern is called, `still_wanted` must say yes: a caller that gave
    /// up waiting has answered already, and a late action would land
    /// outside every check.
    fn act(
        &self,
        hwnd: isize,
        element: &ElementId,
        action: &Action,
        still_wanted: &dyn Fn() -> bool,
    ) -> Result<(), ActError>;
}

/// Which element an action is for, checked both ways when it is found
/// again: a provider chooses its runtime ids, so another program's
/// element embedded in the window could carry the same one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementId {
    /// Its UI Automation runtime id.
    pub runtime: Vec<i32>,
    /// The process it belongs to.
    pub pid: u32,
}

impl Node {
    /// What finds this element again.
    pub fn element_id(&self) -> ElementId {
        ElementId {
            runtime: self.id.clone(),
            pid: self.pid,
        }
    }

    /// Whether this is `element`.
    pub fn is(&self, element: &ElementId) -> bool {
        !self.id.is_empty() && self.id == element.runtime && self.pid == element.pid
    }
}

/// What UI Automation says of the focused element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FocusedElement {
    /// The element is a password field, which is never typed into.
    pub password: bool,
    /// The process the element belongs to: a keystroke checked against
    /// one program's element must not go to another's.
    pub pid: u32,
}

/// UI Automation's control type ids (50000 and up) by name.
const CONTROL_TYPES: [&str; 41] = [
    "Button",
    "Calendar",
    "CheckBox",
    "ComboBox",
    "Edit",
    "Hyperlink",
    "Image",
    "ListItem",
    "List",
    "Menu",
    "MenuBar",
    "MenuItem",
    "ProgressBar",
    "RadioButton",
    "ScrollBar",
    "Slider",
    "Spinner",
    "StatusBar",
    "Tab",
    "TabItem",
    "Text",
    "ToolBar",
    "ToolTip",
    "Tree",
    "TreeItem",
    "Custom",
    "Group",
    "Thumb",
    "DataGrid",
    "DataItem",
    "Document",
    "SplitButton",
    "Window",
    "Pane",
    "Header",
    "HeaderItem",
    "Table",
    "TitleBar",
    "Separator",
    "SemanticZoom",
    "AppBar",
];

/// The name of a UI Automation control type id; `Unknown` outside the table.
pub fn control_type_name(id: i32) -> &'static str {
    usize::try_from(id - 50_000)
        .ok()
        .and_then(|i| CONTROL_TYPES.get(i))
        .copied()
        .unwrap_or("Unknown")
}

/// What a bounded read gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// The elements, depth first.
    Nodes(Vec<Node>),
    /// The read overran its timeout and was abandoned; the elements read
    /// until then, depth first (the tree's beginning, not all of it).
    Partial(Vec<Node>),
    /// The tree could not be read, and why.
    Unavailable(String),
}

/// Reads that overran and are still running.
static ABANDONED: AtomicUsize = AtomicUsize::new(0);

/// One read's state, shared by the worker and the caller waiting for it.
#[derive(Default)]
struct Handover {
    finished: bool,
    abandoned: bool,
}

/// Marks the read finished when the worker ends, a panic included, so an
/// abandoned read gives its place back in every case.
struct Finished(Arc<Mutex<Handover>>);

impl Drop for Finished {
    fn drop(&mut self) {
        let mut h = self.0.lock().unwrap_or_else(|e| e.into_inner());
        h.finished = true;
        if h.abandoned {
            ABANDONED.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Reads the tree on its own thread and waits at most `timeout`; past it,
/// answers with what was read so far.
pub fn read_within(ax: Arc<dyn Accessibility>, hwnd: isize, timeout: Duration) -> Read {
    let read: Arc<Mutex<Vec<Node>>> = Arc::default();
    let worker_read = read.clone();
    let call = move || {
        ax.tree(hwnd, &mut |node| {
            worker_read
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(node)
        })
    };
    let so_far = || std::mem::take(&mut *read.lock().unwrap_or_else(|e| e.into_inner()));
    match bounded(call, timeout) {
        Bounded::Answer(()) => Read::Nodes(so_far()),
        Bounded::TimedOut => Read::Partial(so_far()),
        Bounded::Unavailable(reason) => Read::Unavailable(reason),
    }
}

/// Reads the focused element on its own thread, waiting at most `timeout`.
pub fn focused_element_within(
    ax: Arc<dyn Accessibility>,
    timeout: Duration,
) -> Bounded<Option<FocusedElement>> {
    bounded(move || ax.focused_element(), timeout)
}

/// Does one action on its own thread, waiting at most `timeout`: a
/// provider may hang in the middle of a pattern call, as in a tree read.
pub fn act_within(
    ax: Arc<dyn Accessibility>,
    hwnd: isize,
    element: ElementId,
    action: Action,
    timeout: Duration,
) -> Bounded<Result<(), ActError>> {
    let given_up = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let gave_up = given_up.clone();
    let still_wanted = move || !gave_up.load(Ordering::SeqCst);
    let answer = bounded(
        move || Ok(ax.act(hwnd, &element, &action, &still_wanted)),
        timeout,
    );
    if answer == Bounded::TimedOut {
        given_up.store(true, Ordering::SeqCst);
    }
    answer
}

/// What a bounded accessibility call gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bounded<T> {
    /// The call's answer.
    Answer(T),
    /// The call overran its time and was abandoned.
    TimedOut,
    /// The call failed or could not start, and why.
    Unavailable(String),
}

/// Runs one accessibility call on its own thread and waits at most
/// `timeout`; an overrunning call is abandoned, not waited for.
fn bounded<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, String> + Send + 'static,
    timeout: Duration,
) -> Bounded<T> {
    if ABANDONED.load(Ordering::SeqCst) >= MAX_ABANDONED {
        return Bounded::Unavailable(
            "earlier accessibility reads of unresponsive windows are still running; try again later".into(),
        );
    }
    let handover = Arc::new(Mutex::new(Handover::default()));
    let (send, receive) = mpsc::channel();
    let worker_handover = handover.clone();
    let spawned = std::thread::Builder::new()
        .name("wamcp-accessibility".into())
        .spawn(move || {
            let _finished = Finished(worker_handover);
            let result = call();
            // The caller may have given up waiting; nobody to tell.
            let _ = send.send(result);
        });
    if let Err(e) = spawned {
        return Bounded::Unavailable(format!("no thread for the accessibility read: {e}"));
    }
    match receive.recv_timeout(timeout) {
        Ok(Ok(answer)) => Bounded::Answer(answer),
        Ok(Err(reason)) => Bounded::Unavailable(reason),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Bounded::Unavailable("the accessibility read failed".into())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let mut h = handover.lock().unwrap_or_else(|e| e.into_inner());
            if !h.finished {
                h.abandoned = true;
                ABANDONED.fetch_add(1, Ordering::SeqCst);
            }
            Bounded::TimedOut
        }
    }
}

#[cfg(test)]
pub(crate) mod fake {
    use super::*;

    /// What the fake says of the focused element; tests change it.
    pub type FocusAnswer = Arc<Mutex<Result<Option<FocusedElement>, String>>>;

    /// What a test does when an action is done, with the tree in hand:
    /// a foreground grab, an element that appears.
    pub type AfterAct = Arc<Mutex<Option<Box<dyn FnMut(&Action, &mut Vec<Node>) + Send>>>>;

    /// A tree given up front (which actions then change), or a provider
    /// that never answers (or stops answering after `stalls_after`
    /// elements); the focused element as a test sets it (by default a
    /// plain field of the test window's process, pid 10).
    pub struct FakeTree {
        pub nodes: Option<Arc<Mutex<Vec<Node>>>>,
        pub stalls_after: Option<usize>,
        /// The tree cannot be read at all, and why.
        pub unreadable: Arc<Mutex<Option<String>>>,
        pub focus: FocusAnswer,
        /// Every action asked for, as `ROUTE name`.
        pub acts: Arc<Mutex<Vec<String>>>,
        /// Patterns whose calls the provider refuses.
        pub refuses: Arc<Mutex<Vec<Pattern>>>,
        /// Patterns whose calls act, then report a failure.
        pub breaks: Arc<Mutex<Vec<Pattern>>>,
        /// Runs as an action arrives, before anything is checked: the page
        /// changing between the look and the action.
        pub before_act: AfterAct,
        pub after_act: AfterAct,
    }

    impl FakeTree {
        pub fn new(nodes: Option<Vec<Node>>) -> FakeTree {
            FakeTree {
                nodes: nodes.map(|n| Arc::new(Mutex::new(n))),
                stalls_after: None,
                unreadable: Arc::default(),
                focus: Arc::new(Mutex::new(Ok(Some(FocusedElement {
                    password: false,
                    pid: 10,
                })))),
                acts: Arc::default(),
                refuses: Arc::default(),
                breaks: Arc::default(),
                before_act: Arc::default(),
                after_act: Arc::default(),
            }
        }
    }

    /// What a pattern call does to the element, as a provider would.
    fn apply(action: &Action, node: &mut Node) {
        match action {
            Action::Toggle => node.state.checked = Some(!node.state.checked.unwrap_or(false)),
            Action::Select => node.state.selected = Some(true),
            Action::Expand => node.state.expanded = Some(true),
            Action::Collapse => node.state.expanded = Some(false),
            Action::SetValue(text) => node.value = text.clone(),
            Action::SetRange(v) => node.value = v.to_string(),
            // A check box's default action checks it, as a click would.
            Action::DefaultAction | Action::Invoke if node.patterns.has(Pattern::Toggle) => {
                node.state.checked = Some(!node.state.checked.unwrap_or(false))
            }
            Action::DefaultAction
            | Action::Invoke
            | Action::Scroll(..)
            | Action::ScrollIntoView => {}
        }
    }

    impl Accessibility for FakeTree {
        fn tree(&self, _hwnd: isize, found: &mut dyn FnMut(Node)) -> Result<(), String> {
            if let Some(why) = self.unreadable.lock().unwrap().clone() {
                return Err(why);
            }
            let nodes = self
                .nodes
                .as_ref()
                .map(|n| n.lock().unwrap().clone())
                .unwrap_or_default();
            let stall = if self.nodes.is_some() {
                self.stalls_after
            } else {
                Some(0)
            };
            for (i, node) in nodes.into_iter().enumerate() {
                if stall == Some(i) {
                    break;
                }
                found(node);
            }
            if stall.is_some() {
                std::thread::sleep(Duration::from_secs(2));
                return Err("never".into());
            }
            Ok(())
        }
        fn focused_element(&self) -> Result<Option<FocusedElement>, String> {
            if self.nodes.is_none() {
                // Past the tests' timeout, but short: abandoned calls count
                // against a limit all tests share.
                std::thread::sleep(Duration::from_millis(600));
            }
            self.focus.lock().unwrap().clone()
        }
        fn act(
            &self,
            _hwnd: isize,
            element: &ElementId,
            action: &Action,
            still_wanted: &dyn Fn() -> bool,
        ) -> Result<(), ActError> {
            let Some(nodes) = &self.nodes else {
                std::thread::sleep(Duration::from_millis(600));
                return Err(ActError::Failed("never".into()));
            };
            let mut nodes = nodes.lock().unwrap();
            if let Some(hook) = self.before_act.lock().unwrap().as_mut() {
                hook(action, &mut nodes);
            }
            if !still_wanted() {
                return Err(ActError::Declined("given up".into()));
            }
            let node = nodes
                .iter_mut()
                .find(|n| n.is(element))
                .ok_or(ActError::Gone)?;
            if !node.patterns.has(action.pattern()) {
                return Err(ActError::Unsupported);
            }
            if node.password && action.gives_value() {
                return Err(ActError::Password);
            }
            self.acts
                .lock()
                .unwrap()
                .push(format!("{} {}", action.route(), node.name));
            if self.refuses.lock().unwrap().contains(&action.pattern()) {
                return Err(ActError::Declined("the provider said no".into()));
            }
            apply(action, node);
            if let Some(hook) = self.after_act.lock().unwrap().as_mut() {
                hook(action, &mut nodes);
            }
            if self.breaks.lock().unwrap().contains(&action.pattern()) {
                return Err(ActError::Failed("the provider crashed".into()));
            }
            Ok(())
        }
    }

    #[test]
    fn a_provider_that_never_answers_times_out_instead_of_hanging() {
        let read = read_within(Arc::new(FakeTree::new(None)), 1, Duration::from_millis(50));
        assert_eq!(read, Read::Partial(Vec::new()));
    }

    #[test]
    fn a_read_cut_short_keeps_what_came_before() {
        let named = |name: &str| Node {
            pid: 10,
            name: name.into(),
            ..Node::default()
        };
        let mut tree = FakeTree::new(Some(vec![named("File"), named("Edit"), named("View")]));
        tree.stalls_after = Some(2);
        let read = read_within(Arc::new(tree), 1, Duration::from_millis(200));
        assert_eq!(read, Read::Partial(vec![named("File"), named("Edit")]));
    }

    #[test]
    fn a_call_that_panics_is_reported_at_once_not_as_a_timeout() {
        let answer: Bounded<()> = bounded(|| panic!("provider bug"), Duration::from_secs(60));
        assert_eq!(
            answer,
            Bounded::Unavailable("the accessibility read failed".into())
        );
    }

    #[test]
    fn control_types_are_named_by_id() {
        assert_eq!(control_type_name(50_000), "Button");
        assert_eq!(control_type_name(50_004), "Edit");
        assert_eq!(control_type_name(50_040), "AppBar");
        assert_eq!(control_type_name(50_041), "Unknown");
        assert_eq!(control_type_name(0), "Unknown");
    }

    #[test]
    fn an_answer_in_time_is_returned() {
        let node = Node {
            name: "OK".into(),
            control_type: "Button".into(),
            ..Node::default()
        };
        let read = read_within(
            Arc::new(FakeTree::new(Some(vec![node.clone()]))),
            1,
            Duration::from_secs(5),
        );
        assert_eq!(read, Read::Nodes(vec![node]));
    }
}
