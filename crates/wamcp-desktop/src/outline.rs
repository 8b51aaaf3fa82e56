//! The accessibility tree as a model reads it: one short line per element
//! that can be named or acted on (`#4 CheckBox 'Remember me' unchecked`),
//! indented under its parent, and what an action changed in it.
//!
//! Lines instead of objects: a browser window's tree is hundreds of
//! elements, and an object per element spends most of its tokens on keys
//! and rectangles the model does not use. Unnamed containers without a
//! pattern (the layout `Group`s and `Pane`s a web page is full of) are left
//! out and their children moved up a level; so are unnamed list items and
//! texts.

use crate::accessibility::{Node, Pattern};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::hash::Hash;
use wamcp_policy::desktop::controls::Control;

/// Longest name or value shown in a line, in characters.
const MAX_SHOWN_CHARS: usize = 80;
/// Most added or removed elements an action's report names one by one.
const MAX_NAMED_CHANGES: usize = 10;

/// Whether an element gets a line: it has a name or a value, a pattern
/// besides the default action nearly every element has, or it is one of
/// the structures a person sees (a document, a list, a toolbar).
pub fn shown(node: &Node) -> bool {
    const STRUCTURE: [&str; 12] = [
        "Document",
        "List",
        "Tab",
        "ToolBar",
        "Menu",
        "MenuBar",
        "Tree",
        "Table",
        "DataGrid",
        "Window",
        "StatusBar",
        "Header",
    ];
    let actionable = [
        Pattern::Invoke,
        Pattern::Toggle,
        Pattern::SelectionItem,
        Pattern::ExpandCollapse,
        Pattern::Value,
        Pattern::RangeValue,
        Pattern::Scroll,
    ]
    .iter()
    .any(|&p| node.patterns.has(p));
    !node.name.trim().is_empty()
        || !node.value.is_empty()
        || actionable
        || STRUCTURE.contains(&node.control_type.as_str())
}

/// One element's line, without indentation.
pub fn line(node: &Node, reference: Option<u32>) -> String {
    let mut out = String::new();
    if let Some(r) = reference {
        out.push_str(&format!("#{r} "));
    }
    out.push_str(&node.control_type);
    if !node.name.trim().is_empty() {
        out.push_str(&format!(" '{}'", cut(node.name.trim())));
    }
    if !node.value.is_empty() && !node.password {
        out.push_str(&format!(" = '{}'", cut(&node.value)));
    }
    let s = &node.state;
    let flags = [
        (!node.enabled, "disabled"),
        (node.password, "password"),
        (s.focused, "focused"),
        (s.checked == Some(true), "checked"),
        (s.checked == Some(false), "unchecked"),
        (s.selected == Some(true), "selected"),
        (s.expanded == Some(true), "expanded"),
        (s.expanded == Some(false), "collapsed"),
    ];
    for (_, flag) in flags.iter().filter(|(on, _)| *on) {
        out.push(' ');
        out.push_str(flag);
    }
    out
}

/// `text` on one line, at most `MAX_SHOWN_CHARS` characters.
pub fn cut(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= MAX_SHOWN_CHARS {
        return flat;
    }
    let head: String = flat.chars().take(MAX_SHOWN_CHARS - 1).collect();
    format!("{head}…")
}

/// The shown elements of a depth-first tree as indented lines; `refs` is
/// parallel to `nodes`.
pub fn outline(nodes: &[Node], refs: &[Option<u32>]) -> Vec<String> {
    // The depths of the shown elements above the current one.
    let mut shown_above: Vec<u32> = Vec::new();
    let mut lines = Vec::new();
    for (node, reference) in nodes.iter().zip(refs) {
        while shown_above.last().is_some_and(|&d| d >= node.depth) {
            shown_above.pop();
        }
        if !shown(node) {
            continue;
        }
        let indent = "  ".repeat(shown_above.len());
        lines.push(format!("{indent}{}", line(node, *reference)));
        shown_above.push(node.depth);
    }
    lines
}

/// What an action changed, comparing the tree before and after it by
/// runtime id: the focused element when the focus moved, the target's
/// line when it changed, and the elements added and removed. `line_of`
/// names an element of either tree.
pub fn changes(
    before: &[Node],
    after: &[Node],
    target: &[i32],
    line_of: &mut dyn FnMut(&Node) -> String,
) -> Value {
    let mut report = json!({});
    let focus = |nodes: &[Node]| nodes.iter().find(|n| n.state.focused).map(|n| n.id.clone());
    if focus(before) != focus(after)
        && let Some(now) = after.iter().find(|n| n.state.focused)
    {
        report["focused"] = json!(line_of(now));
    }
    let find = |nodes: &[Node]| {
        nodes
            .iter()
            .find(|n| !target.is_empty() && n.id == target)
            .cloned()
    };
    match (find(before), find(after)) {
        (Some(old), Some(new)) if old.value != new.value || old.state != new.state => {
            report["target_now"] = json!(line_of(&new));
        }
        (Some(_), None) => report["target_now"] = json!("gone"),
        _ => {}
    }
    let key = |n: &Node| (!n.id.is_empty() && shown(n)).then(|| n.id.clone());
    added_and_removed(&mut report, before, after, key, line_of);
    report
}

/// One native control as a change report names it.
pub fn control_line(control: &Control) -> String {
    let mut out = if control.text.trim().is_empty() || control.password {
        format!("{} id:{}", control.class, control.id)
    } else {
        format!(
            "{} '{}' id:{}",
            control.class,
            cut(control.text.trim()),
            control.id
        )
    };
    let flags = [
        (!control.enabled, " disabled"),
        (control.checked == Some(true), " checked"),
        (control.checked == Some(false), " unchecked"),
    ];
    for (_, flag) in flags.iter().filter(|(on, _)| *on) {
        out.push_str(flag);
    }
    out
}

/// What an action on a native control changed among the window's
/// controls (compared by handle, the visible ones): the target's line
/// when its text or state changed, and the controls added and removed.
pub fn control_changes(before: &[Control], after: &[Control], target: isize) -> Value {
    let mut report = json!({});
    let find = |list: &[Control]| list.iter().find(|c| c.handle == target).map(control_line);
    match (find(before), find(after)) {
        (Some(old), Some(new)) if old != new => report["target_now"] = json!(new),
        (Some(_), None) => report["target_now"] = json!("gone"),
        _ => {}
    }
    let key = |c: &Control| c.visible.then_some(c.handle);
    added_and_removed(&mut report, before, after, key, &mut |c| control_line(c));
    report
}

/// The `added` and `removed` lists of a change report: the items of one
/// list whose key the other lacks (items without a key are not compared),
/// named one by one up to `MAX_NAMED_CHANGES`, then counted.
fn added_and_removed<T, K: Eq + Hash>(
    report: &mut Value,
    before: &[T],
    after: &[T],
    key: impl Fn(&T) -> Option<K>,
    line_of: &mut dyn FnMut(&T) -> String,
) {
    let keys = |items: &[T]| -> HashSet<K> { items.iter().filter_map(&key).collect() };
    let (had, has) = (keys(before), keys(after));
    for (name, items, other) in [("added", after, &had), ("removed", before, &has)] {
        let new: Vec<&T> = items
            .iter()
            .filter(|i| key(i).is_some_and(|k| !other.contains(&k)))
            .collect();
        if new.is_empty() {
            continue;
        }
        let mut named: Vec<String> = new
            .iter()
            .take(MAX_NAMED_CHANGES)
            .map(|i| line_of(i))
            .collect();
        if new.len() > MAX_NAMED_CHANGES {
            named.push(format!("and {} more", new.len() - MAX_NAMED_CHANGES));
        }
        report[name] = json!(named);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accessibility::{Patterns, State};

    fn node(depth: u32, role: &str, name: &str, id: i32) -> Node {
        Node {
            depth,
            name: name.into(),
            control_type: role.into(),
            enabled: true,
            id: vec![42, id],
            pid: 10,
            ..Node::default()
        }
    }

    #[test]
    fn a_line_says_what_a_person_sees() {
        let mut check = node(0, "CheckBox", "Remember me", 1);
        check.state.checked = Some(false);
        assert_eq!(line(&check, Some(4)), "#4 CheckBox 'Remember me' unchecked");
        let mut field = node(0, "Edit", "Search", 2);
        field.value = "wamcp\nmcp".into();
        field.state = State {
            focused: true,
            ..State::default()
        };
        assert_eq!(
            line(&field, Some(5)),
            "#5 Edit 'Search' = 'wamcp mcp' focused"
        );
        let mut item = node(0, "TreeItem", "src", 3);
        item.enabled = false;
        item.state.expanded = Some(false);
        item.state.selected = Some(false);
        assert_eq!(line(&item, None), "TreeItem 'src' disabled collapsed");
    }

    #[test]
    fn a_password_value_is_never_shown_and_long_text_is_cut() {
        let mut secret = node(0, "Edit", "Password", 1);
        secret.password = true;
        secret.value = "hunter2".into();
        assert_eq!(line(&secret, Some(1)), "#1 Edit 'Password' password");
        let long = node(0, "Text", &"x".repeat(200), 2);
        let shown = line(&long, None);
        assert_eq!(shown.chars().count(), "Text ''".len() + MAX_SHOWN_CHARS);
        assert!(shown.ends_with("x…'"));
    }

    #[test]
    fn layout_containers_are_left_out_and_their_children_move_up() {
        let mut scroller = node(0, "Pane", "", 9);
        scroller.patterns = Patterns::of(&[Pattern::LegacyIAccessible, Pattern::Scroll]);
        let mut plain = node(1, "Group", "", 2);
        plain.patterns = Patterns::of(&[Pattern::LegacyIAccessible]);
        let nodes = [
            node(0, "Document", "", 1),
            plain,
            node(2, "Button", "OK", 3),
            node(3, "Text", "OK", 4),
            node(1, "Hyperlink", "Help", 5),
            scroller,
        ];
        let refs: Vec<Option<u32>> = (1..=6).map(Some).collect();
        assert_eq!(
            outline(&nodes, &refs),
            [
                "#1 Document",
                "  #3 Button 'OK'",
                "    #4 Text 'OK'",
                "  #5 Hyperlink 'Help'",
                "#6 Pane",
            ]
        );
    }

    #[test]
    fn changes_name_focus_target_and_elements_added_and_removed() {
        let mut field = node(0, "Edit", "Name", 1);
        let before = vec![
            field.clone(),
            node(0, "Button", "Save", 2),
            node(0, "Pane", "", 3),
        ];
        field.value = "Ada".into();
        field.state.focused = true;
        let after = vec![field, node(0, "Text", "Saved", 4), node(0, "Pane", "", 5)];
        let mut line_of = |n: &Node| line(n, None);
        assert_eq!(
            changes(&before, &after, &[42, 1], &mut line_of),
            json!({
                "focused": "Edit 'Name' = 'Ada' focused",
                "target_now": "Edit 'Name' = 'Ada' focused",
                "added": ["Text 'Saved'"],
                "removed": ["Button 'Save'"],
            })
        );
        assert_eq!(changes(&after, &after, &[42, 1], &mut line_of), json!({}));
        assert_eq!(
            changes(&before, &[], &[42, 1], &mut line_of)["target_now"],
            "gone"
        );
    }

    #[test]
    fn control_changes_name_the_targets_new_state_and_new_controls() {
        let control = |handle: isize, class: &str, text: &str, checked: Option<bool>| Control {
            handle,
            class: class.into(),
            text: text.into(),
            id: handle as i32 + 100,
            enabled: true,
            visible: true,
            checked,
            ..Control::default()
        };
        let mut hidden = control(4, "Static", "Secret", None);
        hidden.visible = false;
        let before = [
            control(1, "Button", "Remember", Some(false)),
            control(2, "Button", "&Save", None),
        ];
        let after = [
            control(1, "Button", "Remember", Some(true)),
            control(3, "Static", "Saved.", None),
            hidden,
        ];
        assert_eq!(
            control_changes(&before, &after, 1),
            json!({
                "target_now": "Button 'Remember' id:101 checked",
                "added": ["Static 'Saved.' id:103"],
                "removed": ["Button '&Save' id:102"],
            })
        );
        assert_eq!(control_changes(&before, &before, 1), json!({}));
        assert_eq!(control_changes(&before, &[], 2)["target_now"], "gone");
    }

    #[test]
    fn long_change_lists_are_counted_not_spelled_out() {
        let after: Vec<Node> = (0..25).map(|i| node(0, "ListItem", "row", i)).collect();
        let report = changes(&[], &after, &[], &mut |n: &Node| line(n, None));
        let added = report["added"].as_array().unwrap();
        assert_eq!(added.len(), MAX_NAMED_CHANGES + 1);
        assert_eq!(added[MAX_NAMED_CHANGES], "and 15 more");
    }
}
