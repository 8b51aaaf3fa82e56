//! Accessibility elements driven through their UI Automation patterns:
//! routes and their order, refs and their lifetime, what each action
//! reports as changed. UI Automation is not in Wine, so this fake is where
//! these are verified.

use super::*;
use crate::How;
use crate::accessibility::fake::AfterAct;
use crate::accessibility::{Action, Pattern, Patterns};
use wamcp_policy::error::Retry;

/// The handles a test keeps on the fake provider.
struct Tree {
    nodes: Arc<Mutex<Vec<Node>>>,
    acts: Arc<Mutex<Vec<String>>>,
    refuses: Arc<Mutex<Vec<Pattern>>>,
    breaks: Arc<Mutex<Vec<Pattern>>>,
    unreadable: Arc<Mutex<Option<String>>>,
    before_act: AfterAct,
    after_act: AfterAct,
}

impl Tree {
    fn acts(&self) -> Vec<String> {
        self.acts.lock().unwrap().clone()
    }
    fn on_act(&self, hook: impl FnMut(&Action, &mut Vec<Node>) + Send + 'static) {
        *self.after_act.lock().unwrap() = Some(Box::new(hook));
    }
    fn as_act_arrives(&self, hook: impl FnMut(&Action, &mut Vec<Node>) + Send + 'static) {
        *self.before_act.lock().unwrap() = Some(Box::new(hook));
    }
}

/// The test desktop of `setup`, with a provider holding `nodes` for the
/// app's window, cut short after `stalls_after` elements when given.
fn with_tree(nodes: Vec<Node>, stalls_after: Option<usize>) -> (Fake, Desktop, Tree) {
    let (fake, _) = setup(Some(Vec::new()));
    let mut provider = FakeTree::new(Some(nodes));
    provider.stalls_after = stalls_after;
    let tree = Tree {
        nodes: provider.nodes.clone().unwrap(),
        acts: provider.acts.clone(),
        refuses: provider.refuses.clone(),
        breaks: provider.breaks.clone(),
        unreadable: provider.unreadable.clone(),
        before_act: provider.before_act.clone(),
        after_act: provider.after_act.clone(),
    };
    let desktop = Desktop::new(
        Box::new(fake.clone()),
        Arc::new(provider),
        Vec::new(),
        vec!["APP".into()],
    );
    (fake, desktop, tree)
}

fn element(depth: u32, role: &str, name: &str, id: i32, patterns: &[Pattern]) -> Node {
    Node {
        depth,
        name: name.into(),
        control_type: role.into(),
        enabled: true,
        rect: [10, 20, 110, 60],
        id: vec![42, id],
        patterns: Patterns::of(patterns),
        pid: 10,
        ..Node::default()
    }
}

/// A page as Chromium shows it: a document with a sign-in form.
fn page() -> Vec<Node> {
    use Pattern::*;
    let mut remember = element(
        1,
        "CheckBox",
        "Remember me",
        4,
        &[LegacyIAccessible, Toggle],
    );
    remember.state.checked = Some(false);
    let mut password = element(1, "Edit", "Password", 3, &[LegacyIAccessible, Value]);
    password.password = true;
    vec![
        element(0, "Document", "Sign in", 1, &[LegacyIAccessible, Scroll]),
        element(1, "Edit", "Email", 2, &[LegacyIAccessible, Value]),
        password,
        remember,
        element(1, "Button", "Continue", 5, &[LegacyIAccessible, Invoke]),
    ]
}

fn tree_lines(desktop: &Desktop) -> Vec<String> {
    let seen = desktop.see(1, true, None).unwrap().report;
    serde_json::from_value(seen["tree"].clone()).unwrap()
}

#[test]
fn see_names_each_element_with_a_ref_and_its_state() {
    let (_, desktop, _) = with_tree(page(), None);
    let lines = tree_lines(&desktop);
    assert_eq!(
        lines,
        [
            "#1 Document 'Sign in'",
            "  #2 Edit 'Email'",
            "  #3 Edit 'Password' password",
            "  #4 CheckBox 'Remember me' unchecked",
            "  #5 Button 'Continue'",
        ]
    );
    // A second look gives the same refs.
    assert_eq!(tree_lines(&desktop), lines);
}

#[test]
fn a_background_element_is_clicked_by_its_default_action_first() {
    let (fake, desktop, tree) = with_tree(page(), None);
    let report = desktop.click(1, "Continue", false).unwrap();
    assert_eq!(report["route"], "UIA_DEFAULT_ACTION");
    assert_eq!(report["target"], "#5 Button 'Continue'");
    assert_eq!(report["foreground_unchanged"], true);
    assert_eq!(tree.acts(), ["UIA_DEFAULT_ACTION Continue"]);
    // No pointer, no foreground, no window message.
    assert!(calls(&fake).is_empty(), "{:?}", calls(&fake));
    assert_eq!(fake.state().foreground, 5);
}

#[test]
fn routes_fall_through_in_order_until_one_takes() {
    let (_, desktop, tree) = with_tree(page(), None);
    tree.refuses
        .lock()
        .unwrap()
        .push(Pattern::LegacyIAccessible);
    let report = desktop.click(1, "Continue", false).unwrap();
    assert_eq!(report["route"], "UIA_INVOKE");
    assert_eq!(
        tree.acts(),
        ["UIA_DEFAULT_ACTION Continue", "UIA_INVOKE Continue"]
    );
    // Every route refused: the gate says what was tried and why.
    tree.refuses.lock().unwrap().push(Pattern::Invoke);
    let gate = desktop.click(1, "Continue", false).unwrap();
    assert_eq!(gate["needs_permission"], true);
    let reason = gate["reason"].as_str().unwrap();
    assert!(
        reason.contains("UIA_DEFAULT_ACTION: the provider said no"),
        "{reason}"
    );
    assert!(
        reason.contains("UIA_INVOKE: the provider said no"),
        "{reason}"
    );
}

#[test]
fn a_route_that_brings_the_window_forward_gives_it_back_and_is_not_used_again() {
    let (fake, desktop, tree) = with_tree(page(), None);
    tree.refuses
        .lock()
        .unwrap()
        .push(Pattern::LegacyIAccessible);
    let activated = fake.clone();
    tree.on_act(move |action, _| {
        if *action == Action::Invoke {
            activated.state().foreground = 1;
        }
    });
    let report = desktop.click(1, "Continue", false).unwrap();
    assert_eq!(report["route"], "UIA_INVOKE");
    assert_eq!(report["foreground_unchanged"], false);
    assert_eq!(report["foreground_given_back"], true);
    assert_eq!(fake.state().foreground, 5);
    // For this program, Invoke is now a foreground route: the gate asks.
    let gate = desktop.click(1, "Continue", false).unwrap();
    assert_eq!(gate["needs_permission"], true);
    assert!(
        gate["reason"]
            .as_str()
            .unwrap()
            .contains("brought this program to the front before")
    );
    assert_eq!(tree.acts().len(), 3, "{:?}", tree.acts());
}

#[test]
fn a_ref_names_its_element_until_the_element_goes_away() {
    let (_, desktop, tree) = with_tree(page(), None);
    tree_lines(&desktop);
    let report = desktop.click(1, "#4", false).unwrap();
    assert_eq!(report["route"], "UIA_DEFAULT_ACTION");
    // What changed is reported: no second look needed.
    assert_eq!(
        report["changes"],
        json!({"target_now": "#4 CheckBox 'Remember me' checked"})
    );
    tree.nodes
        .lock()
        .unwrap()
        .retain(|n| n.name != "Remember me");
    let stale = desktop.click(1, "#4", false).unwrap_err();
    assert_eq!(stale.kind.as_str(), "TARGET_NOT_FOUND");
    assert_eq!(stale.details["stale_ref"], "#4");
    assert!(stale.message.contains("stale"), "{}", stale.message);
    // A ref never given, or given for another window, is no ref here.
    for unknown in ["#99", "#0"] {
        let err = desktop.click(1, unknown, false).unwrap_err();
        assert_eq!(err.kind.as_str(), "TARGET_NOT_FOUND", "{unknown}");
    }
    assert_eq!(tree.acts(), ["UIA_DEFAULT_ACTION Remember me"]);
}

#[test]
fn elements_that_appear_after_an_action_are_named_with_refs_that_work() {
    let (_, desktop, tree) = with_tree(page(), None);
    tree.on_act(|action, nodes| {
        if *action == Action::DefaultAction && nodes.len() == 5 {
            nodes.push(element(0, "Button", "Verify", 6, &[Pattern::Invoke]));
        }
    });
    let report = desktop.click(1, "Continue", false).unwrap();
    assert_eq!(report["changes"], json!({"added": ["#6 Button 'Verify'"]}));
    let report = desktop.click(1, "#6", false).unwrap();
    assert_eq!(report["route"], "UIA_INVOKE");
}

#[test]
fn typing_sets_the_value_and_reads_it_back() {
    let (fake, desktop, tree) = with_tree(page(), None);
    let report = desktop
        .type_text(1, "Email", "ada@example.org", false)
        .unwrap();
    assert_eq!(report["route"], "UIA_SET_VALUE");
    assert_eq!(report["verified"], true);
    assert_eq!(
        report["changes"]["target_now"],
        "#2 Edit 'Email' = 'ada@example.org'"
    );
    assert_eq!(keys_sent(&fake), 0);
    assert_eq!(tree.acts(), ["UIA_SET_VALUE Email"]);
}

#[test]
fn a_value_that_does_not_read_back_is_put_back_and_gated() {
    let (fake, desktop, tree) = with_tree(page(), None);
    tree.nodes.lock().unwrap()[1].value = "old@example.org".into();
    // The page rewrites what it is given (an input mask).
    tree.on_act(|action, nodes| {
        if matches!(action, Action::SetValue(v) if v.contains('é')) {
            nodes[1].value = "caf?@example.org".into();
        }
    });
    let gate = desktop
        .type_text(1, "Email", "café@example.org", false)
        .unwrap();
    assert_eq!(gate["needs_permission"], true);
    assert!(
        gate["reason"]
            .as_str()
            .unwrap()
            .contains("read back differs")
    );
    assert_eq!(tree.nodes.lock().unwrap()[1].value, "old@example.org");
    assert_eq!(keys_sent(&fake), 0);
}

#[test]
fn a_password_element_is_never_given_a_value() {
    let (_, desktop, tree) = with_tree(page(), None);
    tree_lines(&desktop);
    for target in ["Password", "#3"] {
        let err = desktop.type_text(1, target, "hunter2", true).unwrap_err();
        assert_eq!(err.kind.as_str(), "PASSWORD_FIELD", "{target}");
    }
    assert!(tree.acts().is_empty());
}

#[test]
fn a_slider_takes_a_number_and_a_read_only_field_nothing() {
    use Pattern::*;
    let mut fixed = element(0, "Edit", "Build id", 2, &[Value]);
    fixed.state.read_only = true;
    let (_, desktop, tree) = with_tree(
        vec![element(0, "Slider", "Volume", 1, &[RangeValue]), fixed],
        None,
    );
    let report = desktop.type_text(1, "Volume", "40", false).unwrap();
    assert_eq!(report["route"], "UIA_SET_RANGE_VALUE");
    assert_eq!(report["verified"], true);
    let gate = desktop.type_text(1, "Build id", "7", false).unwrap();
    assert_eq!(gate["needs_permission"], true);
    assert_eq!(tree.acts(), ["UIA_SET_RANGE_VALUE Volume"]);
}

#[test]
fn a_scrollable_element_scrolls_through_its_pattern() {
    let (fake, desktop, tree) = with_tree(page(), None);
    let report = desktop
        .scroll(1, Some("Sign in"), Direction::Down, 5, false)
        .unwrap();
    assert_eq!(report["route"], "UIA_SCROLL");
    assert_eq!(tree.acts(), ["UIA_SCROLL Sign in"]);
    assert!(calls(&fake).is_empty());
}

#[test]
fn a_disabled_element_is_refused_before_any_route() {
    let mut nodes = page();
    nodes[4].enabled = false;
    let (_, desktop, tree) = with_tree(nodes, None);
    let err = desktop.click(1, "Continue", true).unwrap_err();
    assert_eq!(err.kind.as_str(), "TARGET_DISABLED");
    assert!(tree.acts().is_empty());
}

#[test]
fn elements_of_the_same_name_are_offered_by_ref() {
    let mut nodes = page();
    nodes.push(element(1, "Button", "Continue", 9, &[Pattern::Invoke]));
    let (_, desktop, tree) = with_tree(nodes, None);
    let err = desktop.click(1, "Continue", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "TARGET_AMBIGUOUS");
    assert_eq!(
        err.details["elements"],
        json!(["#5 Button 'Continue'", "#6 Button 'Continue'"])
    );
    assert_eq!(
        desktop.click(1, "#6", false).unwrap()["route"],
        "UIA_INVOKE"
    );
    assert_eq!(tree.acts(), ["UIA_INVOKE Continue"]);
}

#[test]
fn a_ref_in_a_tree_cut_short_is_found_when_it_was_read() {
    let (_, desktop, tree) = with_tree(page(), Some(3));
    let seen = desktop.see(1, true, None).unwrap().report;
    assert_eq!(seen["timed_out"], true);
    assert_eq!(seen["tree"].as_array().unwrap().len(), 3);
    // #2 was read before the provider stopped answering: it is one element.
    let report = desktop.type_text(1, "#2", "ada", false).unwrap();
    assert_eq!(report["route"], "UIA_SET_VALUE");
    assert_eq!(report["changes_partial"], true);
    assert_eq!(tree.acts(), ["UIA_SET_VALUE Email"]);
}

#[test]
fn an_action_the_provider_never_answers_is_not_offered_for_a_retry() {
    let (_, desktop, tree) = with_tree(page(), None);
    // Past the tests' timeout, but short: abandoned calls count against a
    // limit all tests share.
    tree.on_act(|_, _| std::thread::sleep(Duration::from_millis(600)));
    let err = desktop.click(1, "Continue", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "WINDOW_NOT_RESPONDING");
    assert_eq!(err.retry, Retry::Hopeless);
    assert!(err.recovery.iter().any(|r| r.contains("DO NOT repeat")));
}

#[test]
fn select_expand_and_collapse_go_through_their_own_patterns() {
    use Pattern::*;
    let mut folder = element(
        0,
        "TreeItem",
        "src",
        1,
        &[LegacyIAccessible, SelectionItem, ExpandCollapse],
    );
    folder.state.expanded = Some(false);
    folder.state.selected = Some(false);
    let (_, desktop, tree) = with_tree(
        vec![folder, element(0, "Button", "Run", 2, &[Invoke])],
        None,
    );
    let report = desktop.click_as(1, "src", How::Expand, false).unwrap();
    assert_eq!(report["route"], "UIA_EXPAND");
    assert_eq!(
        report["changes"]["target_now"],
        "#1 TreeItem 'src' expanded"
    );
    let report = desktop.click_as(1, "#1", How::Select, false).unwrap();
    assert_eq!(
        report["changes"]["target_now"],
        "#1 TreeItem 'src' selected expanded"
    );
    let report = desktop.click_as(1, "#1", How::Collapse, false).unwrap();
    assert_eq!(report["route"], "UIA_COLLAPSE");
    // A button has none of them: refused, not clicked in their stead.
    let err = desktop.click_as(1, "Run", How::Select, true).unwrap_err();
    assert_eq!(err.kind.as_str(), "INVALID_ARGUMENTS");
    assert_eq!(
        tree.acts(),
        ["UIA_EXPAND src", "UIA_SELECT src", "UIA_COLLAPSE src"]
    );
}

#[test]
fn elements_of_another_program_are_neither_shown_nor_acted_on() {
    let mut nodes = page();
    // A WebView of another process inside the page, and a UWP frame's
    // own close button (the host's furniture).
    let mut embedded = element(1, "Button", "Pay now", 7, &[Pattern::Invoke]);
    embedded.pid = 20;
    let mut furniture = element(0, "Button", "Close", 8, &[Pattern::Invoke]);
    furniture.pid = 30;
    nodes.extend([embedded, furniture]);
    let (fake, desktop, tree) = with_tree(nodes, None);
    fake.state().windows[0].host_pid = Some(30);
    let seen = desktop.see(1, true, None).unwrap();
    let lines: Vec<String> = serde_json::from_value(seen.report["tree"].clone()).unwrap();
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(seen.report["foreign_elements_hidden"], 1);
    // It would be drawn into the picture too.
    assert!(seen.png.is_none());
    assert!(seen.report["image_unavailable"].is_string());
    for target in ["Pay now", "Close"] {
        let err = desktop.click(1, target, true).unwrap_err();
        assert_eq!(err.kind.as_str(), "TARGET_NOT_FOUND", "{target}");
    }
    assert!(tree.acts().is_empty());
    assert!(calls(&fake).is_empty());
}

#[test]
fn a_look_without_the_picture_costs_no_image() {
    let (_, desktop, _) = with_tree(page(), None);
    let seen = desktop.see(1, true, Some(0)).unwrap();
    assert!(seen.png.is_none());
    assert!(seen.report.get("image").is_none());
    assert!(seen.report.get("image_unavailable").is_none());
    assert_eq!(seen.report["tree"].as_array().unwrap().len(), 5);
    // Any other edge still gives the picture.
    assert!(desktop.see(1, true, Some(64)).unwrap().png.is_some());
}

#[test]
fn another_programs_element_with_the_same_runtime_id_is_never_acted_on() {
    // A provider chooses its runtime ids: an embedded program's element
    // may copy the id of the element the ref was given for.
    let mut nodes = page();
    let mut copy = element(1, "Button", "Continue", 5, &[Pattern::Invoke]);
    copy.pid = 20;
    nodes.insert(0, copy);
    let (_, desktop, tree) = with_tree(nodes, None);
    tree_lines(&desktop);
    // The copy comes first in the tree; the action still reaches the
    // window's own element, and only it.
    let report = desktop.click(1, "#5", false).unwrap();
    assert_eq!(report["route"], "UIA_DEFAULT_ACTION");
    assert_eq!(tree.acts(), ["UIA_DEFAULT_ACTION Continue"]);
    let nodes = tree.nodes.lock().unwrap();
    assert_eq!(nodes.iter().filter(|n| n.name == "Continue").count(), 2);
    drop(nodes);
    // With its own element gone, the copy does not stand in for it.
    tree.nodes
        .lock()
        .unwrap()
        .retain(|n| n.pid != 10 || n.name != "Continue");
    let err = desktop.click(1, "#5", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "TARGET_NOT_FOUND");
    assert_eq!(tree.acts().len(), 1);
}

#[test]
fn a_pattern_call_that_fails_after_acting_stops_the_routes() {
    let (_, desktop, tree) = with_tree(page(), None);
    tree.breaks.lock().unwrap().push(Pattern::LegacyIAccessible);
    let err = desktop.click(1, "Continue", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "INPUT_FAILED");
    assert!(err.recovery.iter().any(|r| r.contains("DO NOT repeat")));
    // Invoke would have sent it a second time.
    assert_eq!(tree.acts(), ["UIA_DEFAULT_ACTION Continue"]);
}

#[test]
fn a_field_that_became_a_password_field_gets_no_value() {
    let (_, desktop, tree) = with_tree(page(), None);
    tree.as_act_arrives(|_, nodes| nodes[1].password = true);
    let err = desktop.type_text(1, "Email", "hunter2", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "PASSWORD_FIELD");
    assert!(tree.acts().is_empty());
    assert_eq!(tree.nodes.lock().unwrap()[1].value, "");
}

#[test]
fn an_action_given_up_on_is_never_done_later() {
    let (_, desktop, tree) = with_tree(page(), None);
    // Finding the element outlasts the wait; then it would act, late.
    tree.as_act_arrives(|_, _| std::thread::sleep(Duration::from_millis(600)));
    let err = desktop.click(1, "Continue", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "WINDOW_NOT_RESPONDING");
    std::thread::sleep(Duration::from_millis(800));
    assert!(tree.acts().is_empty(), "{:?}", tree.acts());
}

#[test]
fn an_element_without_a_runtime_id_is_never_acted_on() {
    let mut nodes = page();
    nodes[4].id.clear();
    let (_, desktop, tree) = with_tree(nodes, None);
    let gate = desktop.click(1, "Continue", false).unwrap();
    assert_eq!(gate["needs_permission"], true);
    assert!(gate["reason"].as_str().unwrap().contains("no runtime id"));
    assert!(tree.acts().is_empty());
}

#[test]
fn a_ref_from_another_window_is_no_ref_here() {
    let (fake, desktop, tree) = with_tree(page(), None);
    fake.state()
        .windows
        .push(window(3, "App, second window", 10, "app.exe"));
    tree_lines(&desktop);
    let second = desktop.see(3, true, None).unwrap().report;
    // The same provider answers for both windows here; the second window's
    // elements still get numbers never given to the first's.
    assert_eq!(second["tree"][0], "#6 Document 'Sign in'");
    let err = desktop.click(3, "#5", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "TARGET_NOT_FOUND");
    assert!(tree.acts().is_empty());
}

#[test]
fn waiting_for_an_element_to_go_needs_a_tree_that_answers() {
    let (_, desktop, tree) = with_tree(page(), None);
    *tree.unreadable.lock().unwrap() = Some("the provider is gone".into());
    // Unreadable is not "gone".
    let report = desktop.wait_for(1, "Continue", true, 1).unwrap();
    assert_eq!(report["met"], false, "{report}");
    // A click still says what it could not look at.
    let err = desktop.click(1, "Continue", false).unwrap_err();
    assert_eq!(err.kind.as_str(), "TARGET_NOT_FOUND");
    assert_eq!(err.details["tree_unavailable"], "the provider is gone");
}
