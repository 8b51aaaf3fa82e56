//! What `see`'s accessibility tree costs a model, for a typical window: a
//! browser showing a sign-in page, as Chromium's provider exposes it (the
//! browser's own tabs and toolbar, then the page, with the unnamed layout
//! groups a web page is full of). Compared with the objects `see` returned
//! before the tree became lines, in the pretty JSON a tool result carries.

use serde_json::{Value, json};
use tiktoken_rs::CoreBPE;
use wamcp_desktop::accessibility::{Node, Pattern, Patterns, State};
use wamcp_desktop::outline;

/// The most the typical window's tree may cost, in cl100k tokens: it is
/// read again after every look.
pub const BUDGET: usize = 700;

/// One element of the fixture: depth, control type, name, patterns.
type Row = (u32, &'static str, &'static str, &'static [Pattern]);

const CLICK: &[Pattern] = &[Pattern::LegacyIAccessible, Pattern::Invoke];
const PLAIN: &[Pattern] = &[Pattern::LegacyIAccessible];
const FIELD: &[Pattern] = &[Pattern::LegacyIAccessible, Pattern::Value];
const TAB: &[Pattern] = &[Pattern::LegacyIAccessible, Pattern::SelectionItem];
const MENU: &[Pattern] = &[Pattern::LegacyIAccessible, Pattern::ExpandCollapse];
const CHECK: &[Pattern] = &[Pattern::LegacyIAccessible, Pattern::Toggle];
const SCROLL: &[Pattern] = &[Pattern::LegacyIAccessible, Pattern::Scroll];

const PAGE: &[Row] = &[
    (0, "Pane", "", PLAIN),
    (1, "Pane", "", PLAIN),
    (2, "Tab", "", PLAIN),
    (3, "TabItem", "Sign in to GitHub · GitHub", TAB),
    (3, "TabItem", "wamcp/docs/desktop.md at main", TAB),
    (3, "TabItem", "Pull requests", TAB),
    (3, "Button", "New Tab", CLICK),
    (2, "ToolBar", "", PLAIN),
    (3, "Button", "Back", CLICK),
    (3, "Button", "Forward", CLICK),
    (3, "Button", "Reload", CLICK),
    (3, "Edit", "Address and search bar", FIELD),
    (3, "Button", "Bookmark this tab", CLICK),
    (3, "MenuItem", "Extensions", MENU),
    (3, "MenuItem", "Chrome", MENU),
    (0, "Document", "Sign in to GitHub · GitHub", SCROLL),
    (1, "Group", "", PLAIN),
    (2, "Group", "", PLAIN),
    (3, "Hyperlink", "Skip to content", CLICK),
    (2, "Group", "", PLAIN),
    (3, "Hyperlink", "Homepage", CLICK),
    (1, "Group", "", PLAIN),
    (2, "Group", "", PLAIN),
    (3, "Text", "Sign in to GitHub", PLAIN),
    (2, "Group", "", PLAIN),
    (3, "Group", "", PLAIN),
    (4, "Text", "Username or email address", PLAIN),
    (4, "Edit", "Username or email address", FIELD),
    (4, "Group", "", PLAIN),
    (5, "Text", "Password", PLAIN),
    (5, "Hyperlink", "Forgot password?", CLICK),
    (4, "Edit", "Password", FIELD),
    (4, "CheckBox", "Keep me signed in", CHECK),
    (4, "Button", "Sign in", CLICK),
    (3, "Group", "", PLAIN),
    (4, "Button", "Sign in with a passkey", CLICK),
    (2, "Group", "", PLAIN),
    (3, "Text", "New to GitHub?", PLAIN),
    (3, "Hyperlink", "Create an account", CLICK),
    (1, "Group", "", PLAIN),
    (2, "List", "", PLAIN),
    (3, "ListItem", "", PLAIN),
    (4, "Hyperlink", "Terms", CLICK),
    (3, "ListItem", "", PLAIN),
    (4, "Hyperlink", "Privacy", CLICK),
    (3, "ListItem", "", PLAIN),
    (4, "Hyperlink", "Docs", CLICK),
    (3, "ListItem", "", PLAIN),
    (4, "Hyperlink", "Contact GitHub Support", CLICK),
    (3, "ListItem", "", PLAIN),
    (4, "Button", "Manage cookies", CLICK),
    (3, "ListItem", "", PLAIN),
    (4, "Button", "Do not share my personal information", CLICK),
];

/// The fixture as a provider would give it, with screen rectangles laid
/// out down the window and runtime ids as Chromium forms them.
fn page() -> Vec<Node> {
    PAGE.iter()
        .enumerate()
        .map(|(i, &(depth, role, name, patterns))| {
            let top = 80 + 24 * i as i32;
            let mut node = Node {
                depth,
                name: name.into(),
                control_type: role.into(),
                rect: [120 + 16 * depth as i32, top, 980, top + 22],
                enabled: true,
                password: name == "Password" && role == "Edit",
                id: vec![42, 0x0004_0A2C, i as i32],
                patterns: Patterns::of(patterns),
                pid: 4412,
                state: State::default(),
                ..Node::default()
            };
            if role == "Edit" && name.starts_with("Address") {
                node.value = "github.com/login".into();
            }
            if role == "CheckBox" {
                node.state.checked = Some(false);
            }
            if role == "Edit" && name.starts_with("Username") {
                node.state.focused = true;
            }
            node
        })
        .collect()
}

/// The elements as `see` returned them before: one object each.
fn as_objects(nodes: &[Node]) -> Value {
    let objects: Vec<Value> = nodes
        .iter()
        .map(|n| {
            let mut o = json!({
                "depth": n.depth,
                "name": n.name,
                "control_type": n.control_type,
                "rect": n.rect,
                "enabled": n.enabled,
            });
            if n.password {
                o["password"] = json!(true);
            }
            o
        })
        .collect();
    json!({ "tree": objects })
}

/// The elements as `see` returns them now: lines with refs.
fn as_lines(nodes: &[Node]) -> Value {
    let refs: Vec<Option<u32>> = (1..=nodes.len() as u32).map(Some).collect();
    json!({ "tree": outline::outline(nodes, &refs) })
}

/// The cost of each form: (label, characters, cl100k tokens).
pub fn costs(cl100k: &CoreBPE) -> Vec<(&'static str, usize, usize)> {
    let nodes = page();
    [
        ("objects (before)", as_objects(&nodes)),
        ("lines with refs (now)", as_lines(&nodes)),
    ]
    .into_iter()
    .map(|(label, value)| {
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        (
            label,
            text.chars().count(),
            cl100k.encode_with_special_tokens(&text).len(),
        )
    })
    .collect()
}

/// The table docs/desktop.md carries.
pub fn table(costs: &[(&str, usize, usize)]) -> String {
    let mut out = format!(
        "A browser window on a sign-in page, {} elements read:\n\n| `tree` as | Characters | cl100k tokens |\n|---|---:|---:|\n",
        PAGE.len()
    );
    for (label, chars, tokens) in costs {
        out.push_str(&format!("| {label} | {chars} | {tokens} |\n"));
    }
    out
}

/// Fails when the typical tree costs more than [`BUDGET`].
pub fn check_budget(costs: &[(&str, usize, usize)]) -> Result<(), String> {
    match costs.last() {
        Some((_, _, tokens)) if *tokens > BUDGET => Err(format!(
            "see's tree of the typical window costs {tokens} cl100k tokens, over the budget of {BUDGET}"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_reads_as_a_person_sees_the_page() {
        let lines = as_lines(&page());
        let lines: Vec<&str> = lines["tree"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        for expected in [
            "  #4 TabItem 'Sign in to GitHub · GitHub'",
            "  #12 Edit 'Address and search bar' = 'github.com/login'",
            "#16 Document 'Sign in to GitHub · GitHub'",
            "  #28 Edit 'Username or email address' focused",
            "  #32 Edit 'Password' password",
            "  #33 CheckBox 'Keep me signed in' unchecked",
        ] {
            assert!(lines.contains(&expected), "{expected}: {lines:#?}");
        }
        // The layout groups and list items without names get no line.
        assert_eq!(lines.len(), 34, "{lines:#?}");
    }
}
