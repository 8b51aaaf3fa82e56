//! Which background routes an accessibility element offers for a tool's
//! verb, in the order they are tried.
//!
//! The order puts first what leaves the foreground alone where it was
//! measured: MSAA's default action clicks a backgrounded Chromium or
//! Electron element without activating it, where `Invoke` activates the
//! window. The patterns that follow change one state each (toggle, select,
//! expand) and are tried only when the ones before are missing or fail.

use crate::Direction;
use crate::accessibility::{Action, Node, Pattern};

/// What a tool asks of an element.
#[derive(Clone, Debug, PartialEq)]
pub enum Verb<'a> {
    /// `click`.
    Click,
    /// `type_text`: the element's value replaced by this text.
    Type(&'a str),
    /// `scroll`: its content moved this way by so many lines.
    Scroll(Direction, u32),
    /// `click` with `how=select`.
    Select,
    /// `click` with `how=expand` or `how=collapse` (`true`: expand).
    Expand(bool),
}

/// The actions to try for `verb` on `node`, best first; empty when the
/// element offers none (the permission gate then).
pub fn routes(verb: &Verb, node: &Node) -> Vec<Action> {
    let has = |p| node.patterns.has(p);
    let mut out = Vec::new();
    match verb {
        Verb::Click => {
            if has(Pattern::LegacyIAccessible) {
                out.push(Action::DefaultAction);
            }
            if has(Pattern::Invoke) {
                out.push(Action::Invoke);
            }
            if has(Pattern::Toggle) {
                out.push(Action::Toggle);
            }
            if has(Pattern::SelectionItem) {
                out.push(Action::Select);
            }
            if has(Pattern::ExpandCollapse) {
                out.push(match node.state.expanded {
                    Some(true) => Action::Collapse,
                    _ => Action::Expand,
                });
            }
        }
        Verb::Type(text) => {
            if has(Pattern::Value) && !node.state.read_only {
                out.push(Action::SetValue(text.to_string()));
            }
            if has(Pattern::RangeValue)
                && !node.state.read_only
                && let Ok(number) = text.trim().parse::<f64>()
                && number.is_finite()
            {
                out.push(Action::SetRange(number));
            }
        }
        Verb::Select if has(Pattern::SelectionItem) => out.push(Action::Select),
        Verb::Expand(true) if has(Pattern::ExpandCollapse) => out.push(Action::Expand),
        Verb::Expand(false) if has(Pattern::ExpandCollapse) => out.push(Action::Collapse),
        Verb::Select | Verb::Expand(_) => {}
        Verb::Scroll(direction, lines) => {
            if has(Pattern::Scroll) {
                out.push(Action::Scroll(*direction, *lines));
            } else if has(Pattern::ScrollItem) {
                out.push(Action::ScrollIntoView);
            }
        }
    }
    out
}

/// Whether the value read back after `action` shows it took: the text set,
/// or the number (a slider may format it as `5` or `5.0`).
pub fn took(action: &Action, value_after: &str) -> bool {
    match action {
        Action::SetValue(text) => value_after == text,
        Action::SetRange(number) => value_after
            .trim()
            .parse::<f64>()
            .is_ok_and(|v| (v - number).abs() <= f64::EPSILON * number.abs().max(1.0)),
        _ => true,
    }
}

/// The action that puts back what `action` replaced in `node`, for a
/// value that did not read back as sent.
pub fn undo(action: &Action, node: &Node) -> Option<Action> {
    match action {
        Action::SetValue(_) => Some(Action::SetValue(node.value.clone())),
        Action::SetRange(_) => node.value.trim().parse().ok().map(Action::SetRange),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accessibility::Patterns;

    fn with(patterns: &[Pattern]) -> Node {
        Node {
            patterns: Patterns::of(patterns),
            pid: 10,
            ..Node::default()
        }
    }

    #[test]
    fn a_click_tries_the_default_action_before_the_patterns_that_activate() {
        use Pattern::*;
        let all = with(&[
            ExpandCollapse,
            SelectionItem,
            Toggle,
            Invoke,
            LegacyIAccessible,
        ]);
        assert_eq!(
            routes(&Verb::Click, &all),
            [
                Action::DefaultAction,
                Action::Invoke,
                Action::Toggle,
                Action::Select,
                Action::Expand
            ]
        );
        let mut open = with(&[ExpandCollapse]);
        open.state.expanded = Some(true);
        assert_eq!(routes(&Verb::Click, &open), [Action::Collapse]);
        // Typing and scrolling patterns are no click.
        assert!(
            routes(
                &Verb::Click,
                &with(&[Value, RangeValue, Scroll, ScrollItem])
            )
            .is_empty()
        );
    }

    #[test]
    fn typing_sets_a_value_or_a_number_and_never_a_read_only_one() {
        use Pattern::*;
        let field = with(&[Value, LegacyIAccessible]);
        assert_eq!(
            routes(&Verb::Type("Ada"), &field),
            [Action::SetValue("Ada".into())]
        );
        let slider = with(&[RangeValue]);
        assert_eq!(
            routes(&Verb::Type(" 42.5 "), &slider),
            [Action::SetRange(42.5)]
        );
        for not_a_number in ["loud", "NaN", "inf", ""] {
            assert!(routes(&Verb::Type(not_a_number), &slider).is_empty());
        }
        let mut fixed = with(&[Value, RangeValue]);
        fixed.state.read_only = true;
        assert!(routes(&Verb::Type("3"), &fixed).is_empty());
        assert!(routes(&Verb::Type("x"), &with(&[Invoke, Toggle])).is_empty());
    }

    #[test]
    fn scrolling_moves_a_container_or_brings_an_item_into_view() {
        use Pattern::*;
        let verb = Verb::Scroll(Direction::Down, 3);
        assert_eq!(
            routes(&verb, &with(&[Scroll, ScrollItem])),
            [Action::Scroll(Direction::Down, 3)]
        );
        assert_eq!(
            routes(&verb, &with(&[ScrollItem])),
            [Action::ScrollIntoView]
        );
        assert!(routes(&verb, &with(&[Invoke])).is_empty());
    }

    #[test]
    fn select_expand_and_collapse_use_their_own_pattern_only() {
        use Pattern::*;
        let item = with(&[LegacyIAccessible, Invoke, SelectionItem, ExpandCollapse]);
        assert_eq!(routes(&Verb::Select, &item), [Action::Select]);
        assert_eq!(routes(&Verb::Expand(true), &item), [Action::Expand]);
        assert_eq!(routes(&Verb::Expand(false), &item), [Action::Collapse]);
        // A click would toggle or activate: never a stand-in for them.
        let button = with(&[LegacyIAccessible, Invoke, Toggle]);
        for verb in [Verb::Select, Verb::Expand(true), Verb::Expand(false)] {
            assert!(routes(&verb, &button).is_empty(), "{verb:?}");
        }
    }

    #[test]
    fn a_value_read_back_is_compared_as_the_action_wrote_it() {
        assert!(took(&Action::SetValue("Ada".into()), "Ada"));
        assert!(!took(&Action::SetValue("Ada".into()), "ada"));
        assert!(took(&Action::SetRange(5.0), "5"));
        assert!(took(&Action::SetRange(0.1), "0.1"));
        assert!(!took(&Action::SetRange(5.0), "4"));
        assert!(!took(&Action::SetRange(5.0), "five"));
    }
}
