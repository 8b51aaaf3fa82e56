//! Media queries, answered for one reader: a desktop browser window.
//!
//! A rule inside `@media (max-width: 767px)` is what a phone shows, not
//! what the person reading the page at a desk sees, and real sites swap
//! whole menus and columns that way (`d-none d-md-block`). So queries are
//! evaluated, as a browser evaluates them, for a 1280 x 800 screen with a
//! mouse, light colours and 16 px text. A feature this module does not
//! know is false, as it is in a browser that does not know it. Container
//! queries are answered as if the container were the window.

use cssparser::{Parser, Token};

/// The window the page is read in.
const WIDTH_PX: f32 = 1280.0;
const HEIGHT_PX: f32 = 800.0;
const EM_PX: f32 = 16.0;

/// Nesting of parenthesised conditions followed; deeper is false.
const MAX_DEPTH: usize = 8;

/// Whether a media query list (`screen and (min-width: 768px), print`)
/// matches the reader's window: whether any of its queries does.
pub fn list_matches(input: &mut Parser) -> bool {
    let queries = input.parse_comma_separated_ignoring_errors(|query| {
        Ok::<_, cssparser::ParseError<()>>(condition(query, 0, true))
    });
    queries.into_iter().any(|matched| matched)
}

/// The same for a `media` attribute's text; an empty one matches.
pub fn attribute_matches(text: &str) -> bool {
    text.trim().is_empty() || list_matches(&mut Parser::new(text))
}

/// Whether an `@supports` condition holds: a browser reading the page
/// supports what pages test for, except what they test is missing.
pub fn supports_matches(input: &mut Parser) -> bool {
    !matches!(input.next(), Ok(Token::Ident(word)) if word.eq_ignore_ascii_case("not"))
}

/// Whether a container query holds, answered for a container as wide as
/// the window (most are close on a desktop; a narrower one could only
/// make fewer width conditions true). A leading container name is skipped;
/// `style()` queries are false.
pub fn container_matches(input: &mut Parser) -> bool {
    let start = input.state();
    if !matches!(input.next(), Ok(Token::Ident(_))) {
        input.reset(&start);
    }
    condition(input, 0, false)
}

/// One query or condition: media types, `not`, `only`, `and`, `or` and
/// parenthesised features, left to right.
fn condition(input: &mut Parser, depth: usize, top: bool) -> bool {
    let mut result: Option<bool> = None;
    let mut negate = false;
    let mut any = false;
    while let Ok(token) = input.next() {
        let value = match token.clone() {
            Token::Ident(word) => match word.to_ascii_lowercase().as_str() {
                "not" => {
                    negate = !negate;
                    continue;
                }
                "only" | "and" => continue,
                "or" => {
                    any = true;
                    continue;
                }
                "screen" | "all" if top => true,
                _ => false,
            },
            Token::ParenthesisBlock if depth < MAX_DEPTH => input
                .parse_nested_block(|inner| {
                    Ok::<_, cssparser::ParseError<()>>(feature(inner, depth + 1))
                })
                .unwrap_or(false),
            _ => false,
        };
        let value = value != negate;
        negate = false;
        result = Some(match result {
            None => value,
            Some(so_far) if any => so_far || value,
            Some(so_far) => so_far && value,
        });
    }
    result.unwrap_or(false)
}

/// The inside of one `( ... )`: a nested condition, `name: value`, a
/// boolean `name`, or a range (`width >= 600px`, `400px < width < 700px`).
fn feature(input: &mut Parser, depth: usize) -> bool {
    let start = input.state();
    let mut name: Option<String> = None;
    let mut colon = false;
    let mut parts: Vec<Part> = Vec::new();
    while let Ok(token) = input.next() {
        match token.clone() {
            Token::ParenthesisBlock => {
                // A nested condition: read it as one.
                input.reset(&start);
                return condition(input, depth, false);
            }
            Token::Ident(word) if name.is_none() && !colon => {
                name = Some(word.to_ascii_lowercase());
                parts.push(Part::Name);
            }
            Token::Ident(word) => parts.push(Part::Word(word.to_ascii_lowercase())),
            Token::Colon => colon = true,
            Token::Delim(c @ ('<' | '>' | '=')) => parts.push(Part::Op(c)),
            Token::Number { value, .. } => parts.push(Part::Amount(value)),
            Token::Dimension { value, unit, .. } => match in_px(value, &unit) {
                Some(px) => parts.push(Part::Amount(px)),
                None => return false,
            },
            Token::Delim('/') => parts.push(Part::Op('/')),
            _ => return false,
        }
    }
    let Some(name) = name else {
        return false;
    };
    if colon {
        let value: Vec<&Part> = parts.iter().filter(|p| !matches!(p, Part::Name)).collect();
        return plain_feature(&name, &value);
    }
    if parts.len() == 1 {
        return boolean_feature(&name);
    }
    range_feature(&name, &parts)
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Name,
    Word(String),
    Op(char),
    Amount(f32),
}

fn in_px(value: f32, unit: &str) -> Option<f32> {
    let factor = match unit.to_ascii_lowercase().as_str() {
        "px" => 1.0,
        "em" | "rem" => EM_PX,
        "in" => 96.0,
        "cm" => 96.0 / 2.54,
        "mm" => 96.0 / 25.4,
        "pt" => 96.0 / 72.0,
        "pc" => 16.0,
        "vw" => WIDTH_PX / 100.0,
        "vh" => HEIGHT_PX / 100.0,
        // Resolutions, in dots per CSS pixel.
        "dppx" | "x" => 1.0,
        "dpi" => 1.0 / 96.0,
        "dpcm" => 2.54 / 96.0,
        _ => return None,
    };
    Some(value * factor)
}

/// The window's value of a numeric feature.
fn numeric(name: &str) -> Option<f32> {
    Some(match name {
        "width" | "device-width" => WIDTH_PX,
        "height" | "device-height" => HEIGHT_PX,
        "aspect-ratio" | "device-aspect-ratio" => WIDTH_PX / HEIGHT_PX,
        "resolution" | "-webkit-device-pixel-ratio" => 1.0,
        "color" => 8.0,
        "monochrome" | "grid" | "color-index" => 0.0,
        _ => return None,
    })
}

/// The window's keyword for a discrete feature.
fn keyword(name: &str) -> Option<&'static str> {
    Some(match name {
        "orientation" => "landscape",
        "hover" | "any-hover" => "hover",
        "pointer" | "any-pointer" => "fine",
        "prefers-color-scheme" => "light",
        "prefers-reduced-motion" | "prefers-reduced-transparency" | "prefers-contrast" => {
            "no-preference"
        }
        "forced-colors" | "inverted-colors" => "none",
        "scripting" => "enabled",
        "display-mode" => "browser",
        "update" => "fast",
        "color-gamut" => "srgb",
        "dynamic-range" | "video-dynamic-range" => "standard",
        "overflow-block" => "scroll",
        "overflow-inline" => "scroll",
        _ => return None,
    })
}

/// `name: value`, with the `min-` and `max-` forms.
fn plain_feature(name: &str, value: &[&Part]) -> bool {
    let (base, compare): (&str, fn(f32, f32) -> bool) =
        if let Some(base) = name.strip_prefix("min-") {
            (base, |have, want| have >= want)
        } else if let Some(base) = name.strip_prefix("max-") {
            (base, |have, want| have <= want)
        } else {
            (name, |have, want| (have - want).abs() < 0.001)
        };
    match value {
        [Part::Amount(want)] => numeric(base).is_some_and(|have| compare(have, *want)),
        [Part::Amount(w), Part::Op('/'), Part::Amount(h)] if *h != 0.0 => {
            numeric(base).is_some_and(|have| compare(have, w / h))
        }
        [Part::Word(word)] => keyword(name) == Some(word.as_str()),
        _ => false,
    }
}

/// A feature named alone: true when the window has it at all.
fn boolean_feature(name: &str) -> bool {
    match numeric(name) {
        Some(value) => value != 0.0,
        None => keyword(name).is_some_and(|value| value != "none" && value != "no-preference"),
    }
}

/// `width >= 600px`, `600px <= width`, `400px < width < 700px`.
fn range_feature(name: &str, parts: &[Part]) -> bool {
    let Some(have) = numeric(name) else {
        return false;
    };
    // Operators are one or two delimiters (`<`, `<=`, `>=`, `=`).
    let mut items: Vec<Part> = Vec::new();
    for part in parts {
        match (items.last_mut(), part) {
            (Some(Part::Op(first)), Part::Op('=')) if *first != '=' => {
                *first = match first {
                    '<' => '≤',
                    _ => '≥',
                };
            }
            _ => items.push(part.clone()),
        }
    }
    let value = |part: &Part| match part {
        Part::Name => Some(have),
        Part::Amount(n) => Some(*n),
        _ => None,
    };
    let holds = |left: f32, op: char, right: f32| match op {
        '<' => left < right,
        '≤' => left <= right,
        '>' => left > right,
        '≥' => left >= right,
        '=' => (left - right).abs() < 0.001,
        _ => false,
    };
    match &items[..] {
        [a, Part::Op(op), b] => match (value(a), value(b)) {
            (Some(a), Some(b)) => holds(a, *op, b),
            _ => false,
        },
        [a, Part::Op(op1), b, Part::Op(op2), c] => match (value(a), value(b), value(c)) {
            (Some(a), Some(b), Some(c)) => holds(a, *op1, b) && holds(b, *op2, c),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_answered_for_a_desktop_window() {
        for (media, want) in [
            ("", true),
            ("screen", true),
            ("ALL", true),
            ("only screen", true),
            ("print, screen", true),
            ("print", false),
            ("speech", false),
            ("not print", true),
            ("not screen", false),
            ("print and (color)", false),
            ("(min-width: 768px)", true),
            ("(max-width: 767.98px)", false),
            ("only screen and (max-width: 600px)", false),
            ("screen and (min-width: 62em)", true),
            ("(min-width: 99999px)", false),
            ("(max-width: 99999px)", true),
            ("(width >= 600px)", true),
            ("(600px <= width)", true),
            ("(400px < width < 700px)", false),
            ("(1000px < width <= 1280px)", true),
            ("(orientation: landscape)", true),
            ("(orientation: portrait)", false),
            ("(prefers-color-scheme: dark)", false),
            ("(hover: hover) and (pointer: fine)", true),
            ("(hover: none)", false),
            ("(min-aspect-ratio: 16/10)", true),
            ("(min-resolution: 2dppx)", false),
            ("(color)", true),
            ("(grid)", false),
            ("(unknown-feature: 1)", false),
            ("(max-width: 600px) or (min-width: 1200px)", true),
            ("not (max-width: 600px)", true),
            ("((min-width: 1px) and (max-width: 2px))", false),
            ("screen and (min-width:768px) and (max-width:991px)", false),
        ] {
            assert_eq!(attribute_matches(media), want, "{media:?}");
        }
    }

    #[test]
    fn supports_holds_unless_negated() {
        assert!(supports_matches(&mut Parser::new("(display: grid)")));
        assert!(!supports_matches(&mut Parser::new("not (display: grid)")));
    }

    #[test]
    fn hostile_queries_are_false_not_trouble() {
        let deep = "(".repeat(1_000) + &")".repeat(1_000);
        for media in [
            deep.as_str(),
            "(",
            "((",
            "and",
            "(width >",
            "(: 1px)",
            "(min-width: 1px / 0)",
        ] {
            let _ = attribute_matches(media);
        }
        assert!(!attribute_matches(&deep));
    }
}
