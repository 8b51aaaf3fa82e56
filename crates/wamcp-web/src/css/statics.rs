//! Selectors rewritten for a page nobody is interacting with.
//!
//! `scraper`'s selector engine knows the tree-structural pseudo-classes
//! (`:not()`, `:nth-child()`, `:empty`...) but not those that depend on the
//! document's state, so a rule using one would be dropped whole, and
//! `p:read-only { display: none }` (every paragraph) would hide nothing.
//! Before parsing, each such pseudo-class is replaced by what it matches on
//! a freshly loaded page: an attribute test where there is one (`:checked`
//! is `[checked]`), everything where it holds for ordinary elements
//! (`:read-only`, `:defined`), nothing (`:not(*)`) for states a reader has
//! to create (`:hover`, `:focus`, `:target`). `::first-line` and
//! `::first-letter` count as the element itself, so hiding a first line
//! hides the element; other pseudo-elements style generated content, which
//! is never text here, and match nothing.

use cssparser::{ParseError, Parser, ToCss, Token};

/// Pseudo-classes by what they match on a page at rest.
fn replacement(name: &str) -> Option<&'static str> {
    Some(match name {
        "hover" | "focus" | "focus-within" | "focus-visible" | "active" | "target"
        | "target-within" | "visited" | "user-invalid" | "user-valid" | "playing" | "paused"
        | "fullscreen" | "modal" | "picture-in-picture" | "popover-open" | "autofill"
        | "-webkit-autofill" | "current" | "past" | "future" | "drop" | "read-write"
        | "invalid" | "out-of-range" | "indeterminate" | "blank" => ":not(*)",
        "read-only" | "defined" | "valid" | "in-range" | "local-link" => "",
        "link" | "any-link" => "[href]",
        "enabled" => ":not([disabled])",
        "disabled" => "[disabled]",
        "checked" | "default" => ":is([checked],[selected])",
        "required" => "[required]",
        "optional" => ":not([required])",
        "placeholder-shown" => "[placeholder]",
        "open" => "[open]",
        "closed" => ":not([open])",
        "scope" => ":root",
        _ => return None,
    })
}

/// Functional pseudo-classes whose arguments are selectors (rewritten in
/// turn) or an `An+B` pattern the engine reads.
fn keeps_arguments(name: &str) -> bool {
    matches!(
        name,
        "not"
            | "is"
            | "where"
            | "matches"
            | "-webkit-any"
            | "nth-child"
            | "nth-last-child"
            | "nth-of-type"
            | "nth-last-of-type"
    )
}

/// `selectors` with the state-dependent parts replaced (see the module).
pub fn at_rest(selectors: &str) -> String {
    let mut out = String::with_capacity(selectors.len());
    rewrite(&mut Parser::new(selectors), &mut out);
    out
}

fn rewrite(input: &mut Parser, out: &mut String) {
    while let Ok(token) = input.next_including_whitespace().cloned() {
        match token {
            Token::Colon => pseudo(input, out),
            Token::Function(_) | Token::ParenthesisBlock => {
                let _ = token.to_css(out);
                nested(input, out, ')');
            }
            Token::SquareBracketBlock => {
                out.push('[');
                nested(input, out, ']');
            }
            Token::CurlyBracketBlock => {
                out.push('{');
                nested(input, out, '}');
            }
            other => {
                let _ = other.to_css(out);
            }
        }
    }
}

/// Copies the inside of the block just opened, rewritten, and closes it.
fn nested(input: &mut Parser, out: &mut String, closing: char) {
    let _ = input.parse_nested_block(|inner| {
        rewrite(inner, out);
        Ok::<_, ParseError<()>>(())
    });
    out.push(closing);
}

/// After a `:`: a pseudo-class or, after `::`, a pseudo-element.
fn pseudo(input: &mut Parser, out: &mut String) {
    match input.next_including_whitespace().cloned() {
        Ok(Token::Colon) => match input.next_including_whitespace().cloned() {
            Ok(Token::Ident(name))
                if name.eq_ignore_ascii_case("first-line")
                    || name.eq_ignore_ascii_case("first-letter") => {}
            Ok(Token::Function(_)) => {
                skip_block(input);
                out.push_str(":not(*)");
            }
            _ => out.push_str(":not(*)"),
        },
        Ok(Token::Ident(name)) => match replacement(&name.to_ascii_lowercase()) {
            Some(text) => out.push_str(text),
            None => {
                out.push(':');
                let _ = Token::Ident(name).to_css(out);
            }
        },
        Ok(Token::Function(name)) => {
            let lower = name.to_ascii_lowercase();
            if keeps_arguments(&lower) {
                out.push(':');
                let _ = Token::Function(name).to_css(out);
                nested(input, out, ')');
            } else {
                // `:lang()`, `:dir()`, `:state()`...: taken as holding.
                skip_block(input);
            }
        }
        Ok(other) => {
            out.push(':');
            let _ = other.to_css(out);
        }
        Err(_) => out.push(':'),
    }
}

fn skip_block(input: &mut Parser) {
    let _ = input.parse_nested_block(|inner| {
        while inner.next().is_ok() {}
        Ok::<_, ParseError<()>>(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_pseudo_classes_become_what_they_match_at_rest() {
        for (selector, want) in [
            ("p:read-only", "p"),
            (".q:hover", ".q:not(*)"),
            ("p:not(:focus)", "p:not(:not(*))"),
            ("input:checked + .x", "input:is([checked],[selected]) + .x"),
            ("a:any-link", "a[href]"),
            ("p::first-line", "p"),
            ("p::before", "p:not(*)"),
            ("p:lang(fr)", "p"),
            (":scope > p", ":root > p"),
            ("li:nth-child(2n+1)", "li:nth-child(2n+1)"),
            ("div > p.x[data-a=\"b:c\"]", "div > p.x[data-a=\"b:c\"]"),
            ("p:is(.a, :hover)", "p:is(.a, :not(*))"),
        ] {
            assert_eq!(at_rest(selector), want, "{selector:?}");
        }
    }
}
