//! What an inline `style` attribute says about whether text is seen.
//!
//! Comparing strings loses to CSS's own syntax: `display:/**/none`,
//! `display:\6e one` (an escape), `DISPLAY: NONE`, a later declaration
//! overriding an earlier one, `!important` beating a later plain one. The
//! declarations are therefore read with `cssparser` (the tokenizer browsers'
//! engines share) and cascaded as a browser cascades one attribute; only
//! then are the properties that can make a box render nothing judged.

use cssparser::{
    AtRuleParser, CowRcStr, DeclarationParser, ParseError, Parser, ParserState,
    QualifiedRuleParser, RuleBodyItemParser, RuleBodyParser, Token, parse_important,
};
use std::collections::HashMap;
use std::rc::Rc;

use colour::colour_of;
pub use colour::{Hints, Paint};

/// One component of a declared value, escapes and comments resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A keyword, lower-cased.
    Ident(String),
    /// A plain number (`0`, `1.5`).
    Number(f32),
    /// A percentage, as written (`50%` is `50.0`).
    Percent(f32),
    /// A length or other dimension: the number and its unit, lower-cased.
    Dimension(f32, String),
    /// `#rgb` and the like, lower-cased, without `#`.
    Hash(String),
    /// A function (lower-cased name) and its arguments.
    Function(String, Vec<Value>),
    /// Anything else (commas, slashes, strings).
    Other,
}

/// An element's declarations after the cascade: each property
/// (lower-cased) with the value that wins.
#[derive(Debug, Default)]
pub struct Style {
    /// Shared with the declarations they came from: a `*` rule of forty
    /// declarations reaches every element, and copying them each time cost
    /// more than matching.
    properties: HashMap<Rc<str>, Rc<Vec<Value>>>,
}

/// Where a declaration ranks in the cascade, lowest first: normal sheet
/// rules (by layer, then specificity, then source order), then the normal
/// inline style, then `!important` sheet rules, then `!important` inline
/// declarations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// Declared `!important`; compared first.
    pub important: bool,
    /// From the element's `style` attribute rather than a sheet.
    pub inline: bool,
    /// The layer's weight: for normal declarations later layers win and
    /// unlayered rules win over all; for important ones the order turns
    /// round (see [`Rank::layer_weight`]).
    pub layer: u32,
    /// The matching selector's specificity; 0 for inline declarations.
    pub specificity: u32,
    /// Source order; the later declaration wins a tie.
    pub order: u64,
}

impl Rank {
    /// The weight of a declaration in layer `layer` (its index in the
    /// order layers were first named; `None` for no layer).
    pub fn layer_weight(layer: Option<u32>, important: bool) -> u32 {
        match (layer, important) {
            (None, false) => u32::MAX,
            (Some(index), false) => index,
            (None, true) => 0,
            (Some(index), true) => u32::MAX - 1 - index,
        }
    }
}

impl Style {
    /// An inline `style` attribute on its own.
    pub fn parse(text: &str) -> Style {
        let declarations = inline_declarations(text);
        Style::cascade(declarations.iter().map(|(rank, d)| (*rank, d)))
    }

    /// The winner of each property among ranked declarations.
    pub fn cascade<'a>(declarations: impl IntoIterator<Item = (Rank, &'a Declaration)>) -> Style {
        let mut winners: HashMap<&Rc<str>, (Rank, &Rc<Vec<Value>>)> = HashMap::new();
        for (rank, (name, value, _)) in declarations {
            if winners.get(name).is_none_or(|(best, _)| *best <= rank) {
                winners.insert(name, (rank, value));
            }
        }
        Style {
            properties: winners
                .into_iter()
                .map(|(name, (_, value))| (name.clone(), value.clone()))
                .collect(),
        }
    }

    /// The winning value of `property`, if declared.
    pub fn get(&self, property: &str) -> Option<&[Value]> {
        self.properties.get(property).map(|value| value.as_slice())
    }

    /// Replaces the value of `property`.
    pub fn set(&mut self, property: &str, value: Vec<Value>) {
        self.properties.insert(Rc::from(property), Rc::new(value));
    }

    /// The declared opacity, as a fraction.
    pub fn opacity(&self) -> Option<f32> {
        self.get("opacity")
            .and_then(|v| v.first())
            .and_then(opacity)
    }

    /// The names of the animations that keep their last frame (`forwards`,
    /// `both`, or running forever).
    pub fn lasting_animations(&self) -> Vec<String> {
        let lasting = |words: &[Value]| {
            words.iter().any(|w| {
                matches!(w, Value::Ident(word) if matches!(word.as_str(), "forwards" | "both" | "infinite"))
            })
        };
        let fill = self.get("animation-fill-mode").is_some_and(lasting)
            || self.get("animation-iteration-count").is_some_and(lasting);
        let mut names = Vec::new();
        if let Some(shorthand) = self.get("animation")
            && (fill || lasting(shorthand))
        {
            names.extend(shorthand.iter().filter_map(|v| match v {
                Value::Ident(word) => Some(word.clone()),
                _ => None,
            }));
        }
        if let Some(declared) = self.get("animation-name")
            && fill
        {
            names.extend(declared.iter().filter_map(|v| match v {
                Value::Ident(word) => Some(word.clone()),
                _ => None,
            }));
        }
        names
    }

    /// The single keyword `property` is set to, if that is what it is.
    pub fn keyword(&self, property: &str) -> Option<&str> {
        match self.get(property)? {
            [Value::Ident(word)] => Some(word),
            _ => None,
        }
    }
}

/// Custom properties (`--name`) in scope, by name: inherited down the
/// tree, read by `var()`.
pub type Custom = Rc<HashMap<Rc<str>, Rc<Vec<Value>>>>;

/// How deep `var()` may refer to `var()`, and how many values one
/// substitution may produce: `--a: var(--b) var(--b)` nested a few dozen
/// times would otherwise double its size at every step.
const MAX_VAR_DEPTH: usize = 8;
const MAX_VAR_VALUES: usize = 64;
/// Custom properties kept in one scope; a page defining thousands on every
/// element would otherwise copy them all at every element.
const MAX_CUSTOM_PROPERTIES: usize = 256;

impl Style {
    /// The custom properties in scope inside this element: the inherited
    /// ones and its own, their `var()` resolved.
    pub fn custom_properties(&self, inherited: &Custom) -> Custom {
        let mut own = self
            .properties
            .iter()
            .filter(|(name, _)| name.starts_with("--"))
            .peekable();
        // Nothing new (a `*` rule setting the same values on every
        // element): the parent's scope serves.
        if own.peek().is_none()
            || self
                .properties
                .iter()
                .filter(|(name, _)| name.starts_with("--"))
                .all(|(name, value)| {
                    inherited.get(name) == Some(value) && !value.iter().any(has_var)
                })
        {
            return inherited.clone();
        }
        let room = MAX_CUSTOM_PROPERTIES.saturating_sub(inherited.len());
        let own: Vec<(&Rc<str>, &Rc<Vec<Value>>)> = own
            .filter(|(name, _)| inherited.contains_key(*name))
            .chain(
                self.properties
                    .iter()
                    .filter(|(name, _)| name.starts_with("--") && !inherited.contains_key(*name))
                    .take(room),
            )
            .collect();
        // Own properties may refer to each other (`--a: var(--b); --b: 0`):
        // they are resolved against a scope that already holds them.
        let mut raw = (**inherited).clone();
        raw.extend(
            own.iter()
                .map(|(name, value)| ((*name).clone(), (*value).clone())),
        );
        let raw: Custom = Rc::new(raw);
        let mut scope = (*raw).clone();
        for (name, value) in own {
            scope.insert(name.clone(), Rc::new(substitute(value, &raw, 0)));
        }
        Rc::new(scope)
    }

    /// Puts the values in `scope` in place of every `var()` (or its
    /// fallback when the property is not set).
    pub fn resolve_variables(&mut self, scope: &Custom) {
        for (name, value) in self.properties.iter_mut() {
            if !name.starts_with("--") && value.iter().any(has_var) {
                *value = Rc::new(substitute(value, scope, 0));
            }
        }
    }
}

fn has_var(value: &Value) -> bool {
    match value {
        Value::Function(name, args) => name == "var" || args.iter().any(has_var),
        _ => false,
    }
}

fn substitute(values: &[Value], scope: &Custom, depth: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for value in values {
        match value {
            Value::Function(name, args) if name == "var" => {
                if depth >= MAX_VAR_DEPTH {
                    continue;
                }
                // var(--name) or var(--name, fallback...)
                let fallback = args
                    .iter()
                    .position(|a| *a == Value::Other)
                    .map_or(&[][..], |comma| &args[comma + 1..]);
                let replacement = match args.first() {
                    Some(Value::Ident(name)) => scope
                        .get(name.as_str())
                        .map_or(fallback, |value| value.as_slice()),
                    _ => fallback,
                };
                out.extend(substitute(replacement, scope, depth + 1));
            }
            Value::Function(name, args) if args.iter().any(has_var) => {
                out.push(Value::Function(
                    name.clone(),
                    substitute(args, scope, depth),
                ));
            }
            other => out.push(other.clone()),
        }
        if out.len() > MAX_VAR_VALUES {
            out.truncate(MAX_VAR_VALUES);
            break;
        }
    }
    out
}

/// The declarations of an inline style, ranked in their order.
pub fn inline_declarations(text: &str) -> Vec<(Rank, Declaration)> {
    declarations(&mut Parser::new(text))
        .into_iter()
        .enumerate()
        .map(|(at, declaration)| {
            let rank = Rank {
                important: declaration.2,
                inline: true,
                layer: u32::MAX,
                specificity: 0,
                order: at as u64,
            };
            (rank, declaration)
        })
        .collect()
}

/// Reads a declaration list; what cannot be parsed is skipped, as a
/// browser skips it.
fn declarations(input: &mut Parser) -> Vec<Declaration> {
    RuleBodyParser::new(input, &mut Declarations)
        .flatten()
        .collect()
}

/// A property (lower-cased), its value, and whether it is `!important`.
pub type Declaration = (Rc<str>, Rc<Vec<Value>>, bool);

/// The `cssparser` callbacks for a declaration list.
struct Declarations;

impl<'i> DeclarationParser<'i> for Declarations {
    type Declaration = Declaration;
    type Error = ();

    fn parse_value(
        &mut self,
        name: CowRcStr<'i>,
        input: &mut Parser<'i>,
        _: &ParserState,
    ) -> Result<Declaration, ParseError<()>> {
        let mut value = Vec::new();
        let mut important = false;
        loop {
            if input
                .try_parse(|i| {
                    parse_important(i)?;
                    i.expect_exhausted()
                })
                .is_ok()
            {
                important = true;
                break;
            }
            match input.next() {
                Ok(token) => {
                    let token = token.clone();
                    value.push(component(&token, input, 0));
                }
                Err(_) => break,
            }
        }
        let name = name.to_ascii_lowercase();
        if !is_valid(&name, &value) {
            // A browser drops a declaration it cannot read, so the one
            // before it stands: `display:none;display:bogus` hides.
            return Err(input.new_error_for_next_token());
        }
        Ok((Rc::from(name), Rc::new(value), important))
    }
}

impl<'i> AtRuleParser<'i> for Declarations {
    type Prelude = ();
    type AtRule = Declaration;
    type Error = ();
}

impl<'i> QualifiedRuleParser<'i> for Declarations {
    type Prelude = ();
    type QualifiedRule = Declaration;
    type Error = ();
}

impl<'i> RuleBodyItemParser<'i, Declaration, ()> for Declarations {
    fn parse_declarations(&self) -> bool {
        true
    }

    fn parse_qualified(&self) -> bool {
        false
    }
}

/// CSS system colours and `currentcolor`, valid wherever a colour is.
const SYSTEM_COLOURS: &[&str] = &[
    "currentcolor",
    "canvas",
    "canvastext",
    "linktext",
    "visitedtext",
    "activetext",
    "buttonface",
    "buttontext",
    "buttonborder",
    "field",
    "fieldtext",
    "highlight",
    "highlighttext",
    "selecteditem",
    "selecteditemtext",
    "mark",
    "marktext",
    "graytext",
    "accentcolor",
    "accentcolortext",
];

/// Keywords every property accepts.
pub const WIDE_KEYWORDS: &[&str] = &["inherit", "initial", "unset", "revert", "revert-layer"];

/// `display` keywords (outer, inner and the box values).
const DISPLAY_KEYWORDS: &[&str] = &[
    "none",
    "contents",
    "block",
    "inline",
    "run-in",
    "flow",
    "flow-root",
    "table",
    "flex",
    "grid",
    "ruby",
    "list-item",
    "inline-block",
    "inline-table",
    "inline-flex",
    "inline-grid",
    "table-row-group",
    "table-header-group",
    "table-footer-group",
    "table-row",
    "table-cell",
    "table-column-group",
    "table-column",
    "table-caption",
    "ruby-base",
    "ruby-text",
    "ruby-base-container",
    "ruby-text-container",
    "-webkit-box",
    "-webkit-inline-box",
    "-ms-flexbox",
    "-ms-inline-flexbox",
    "-ms-grid",
    "-ms-inline-grid",
];

/// Whether a browser would accept `value` for one of the properties that
/// decide visibility by keyword; other properties are not checked.
fn is_valid(property: &str, value: &[Value]) -> bool {
    // With var() the value is known only once the variables are.
    if value.iter().any(has_var) {
        return true;
    }
    let keywords = |allowed: &[&str]| {
        !value.is_empty()
            && value.iter().all(|v| {
                matches!(v, Value::Ident(word) if allowed.contains(&word.as_str()) || WIDE_KEYWORDS.contains(&word.as_str()))
            })
    };
    match property {
        "display" => value.len() <= 3 && keywords(DISPLAY_KEYWORDS),
        "visibility" => value.len() == 1 && keywords(&["visible", "hidden", "collapse"]),
        "content-visibility" => value.len() == 1 && keywords(&["visible", "hidden", "auto"]),
        // An unknown name is dropped, so `color:white;color:nonsense` stays
        // white; functions this module cannot read are taken as valid.
        "color" | "background-color" => match value {
            [Value::Ident(word)] => {
                colour_of(value).is_some()
                    || WIDE_KEYWORDS.contains(&word.as_str())
                    || SYSTEM_COLOURS.contains(&word.as_str())
            }
            [Value::Hash(_)] => colour_of(value).is_some(),
            [Value::Function(..)] => true,
            // A colour is one component: `black red` is no colour.
            _ => false,
        },
        _ => true,
    }
}

/// Deeper function nesting than any hiding trick needs; the rest of such a
/// value is skipped by the parser, never recursed into (a hostile
/// `f(f(f(...` would otherwise exhaust the stack).
const MAX_FUNCTION_DEPTH: usize = 8;

/// One token as a [`Value`]; a function takes its arguments with it.
fn component<'i>(token: &Token<'i>, input: &mut Parser<'i>, depth: usize) -> Value {
    match token {
        Token::Ident(word) => Value::Ident(word.to_ascii_lowercase()),
        Token::Number { value, .. } => Value::Number(*value),
        Token::Percentage { unit_value, .. } => Value::Percent(unit_value * 100.0),
        Token::Dimension { value, unit, .. } => Value::Dimension(*value, unit.to_ascii_lowercase()),
        Token::Hash(hash) | Token::IDHash(hash) => Value::Hash(hash.to_ascii_lowercase()),
        // `url(x)` without quotes is one token; read it as the function.
        Token::UnquotedUrl(_) => Value::Function("url".into(), Vec::new()),
        Token::Function(_) if depth >= MAX_FUNCTION_DEPTH => Value::Other,
        Token::Function(name) => {
            let name = name.to_ascii_lowercase();
            let arguments = input
                .parse_nested_block(|inner| {
                    let mut arguments = Vec::new();
                    while let Ok(token) = inner.next() {
                        let token = token.clone();
                        arguments.push(component(&token, inner, depth + 1));
                    }
                    Ok::<_, ParseError<()>>(arguments)
                })
                .unwrap_or_default();
            Value::Function(name, arguments)
        }
        _ => Value::Other,
    }
}

/// A number, percentage or length, as a number (its unit ignored).
fn amount(value: &Value) -> Option<f32> {
    match value {
        Value::Number(n) | Value::Percent(n) | Value::Dimension(n, _) => Some(*n),
        // `calc(0px)`, `min(0px, 1em)`, `clamp(0px, 0px, 0px)`: worked out
        // when the arguments are plain amounts (units are not converted).
        Value::Function(name, args) if is_math(name) => {
            math(name, &args.iter().filter_map(amount).collect::<Vec<_>>())
        }
        _ => None,
    }
}

fn is_math(name: &str) -> bool {
    matches!(name, "calc" | "min" | "max" | "clamp")
}

/// A math function over its arguments, already worked out: `calc()` of one
/// term, `min()`, `max()`, `clamp()`.
fn math(name: &str, values: &[f32]) -> Option<f32> {
    match (name, values) {
        ("calc", [only]) => Some(*only),
        ("min", [first, rest @ ..]) => Some(rest.iter().fold(*first, |a, b| a.min(*b))),
        ("max", [first, rest @ ..]) => Some(rest.iter().fold(*first, |a, b| a.max(*b))),
        ("clamp", [low, value, high]) if low <= high => Some(value.clamp(*low, *high)),
        _ => None,
    }
}

/// An opacity as a fraction (`50%` is 0.5).
fn opacity(value: &Value) -> Option<f32> {
    match value {
        Value::Percent(p) => Some(p / 100.0),
        other => amount(other),
    }
}

/// Fainter than anyone can read.
const MAX_INVISIBLE_OPACITY: f32 = 0.02;

/// How one element's style affects what is seen of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    /// The element and everything in it render nothing, whatever the
    /// descendants say (`display: none`, zero opacity, scaled to nothing,
    /// clipped away, a zero-size box that hides its overflow, far off
    /// screen, `content-visibility: hidden`).
    pub removed: bool,
    /// `visibility`: `Some(false)` hides, `Some(true)` shows again (a
    /// descendant may undo an ancestor's `hidden`), `None` inherits.
    pub visible: Option<bool>,
    /// Whether text is large enough to read (3 px), where that changes
    /// from the parent's (set by the caller from [`Style::font_px`]).
    pub sized: Option<bool>,
    /// Whether the text colour stands out from the background, where that
    /// changes from the parent's (set by the caller from [`Paint`]).
    pub coloured: Option<bool>,
}

/// Far enough past the left or top edge that a line of text is gone.
const OFF_SCREEN_START_PX: f32 = 500.0;
/// The reader's window (see `media.rs`).
const WINDOW_WIDTH_PX: f32 = 1280.0;
const WINDOW_HEIGHT_PX: f32 = 800.0;

/// Far enough past the right or bottom edge of a 1280 x 800 window.
const OFF_SCREEN_END_PX: f32 = 1000.0;

/// A length in pixels (em as 16 px, viewport units for a 1280 x 800
/// window, a percentage as a share of the window width).
fn pixels(value: &Value) -> Option<f32> {
    length_px(value, ROOT_FONT_PX, 1280.0)
}

/// The font size of the root, in pixels.
pub const ROOT_FONT_PX: f32 = 16.0;

/// A length in pixels: `em` against the font size `em`, a percentage of
/// `hundred_percent`, viewport units for a 1280 x 800 window, `calc()`,
/// `min()`, `max()` and `clamp()` worked out argument by argument.
fn length_px(value: &Value, em: f32, hundred_percent: f32) -> Option<f32> {
    match value {
        Value::Dimension(n, unit) => Some(match unit.as_str() {
            "em" => n * em,
            "ex" | "ch" | "cap" | "ic" => n * em * 0.5,
            "lh" => n * em * 1.2,
            "rem" => n * ROOT_FONT_PX,
            "vw" => n * 12.8,
            "vh" => n * 8.0,
            "vmin" => n * 8.0,
            "vmax" => n * 12.8,
            "pt" => n * 96.0 / 72.0,
            "pc" => n * 16.0,
            "in" => n * 96.0,
            "cm" => n * 96.0 / 2.54,
            "mm" => n * 96.0 / 25.4,
            "q" => n * 96.0 / 101.6,
            _ => *n,
        }),
        Value::Percent(n) => Some(n / 100.0 * hundred_percent),
        Value::Number(n) => Some(*n),
        Value::Function(name, args) if is_math(name) => {
            let lengths: Vec<f32> = args
                .iter()
                .filter_map(|a| length_px(a, em, hundred_percent))
                .collect();
            math(name, &lengths)
        }
        _ => None,
    }
}

/// A `transform` that moves the box far off the page.
fn translates_away(values: &[Value]) -> bool {
    values.iter().any(|v| match v {
        Value::Function(name, args) if name.starts_with("translate") => args
            .iter()
            .filter_map(pixels)
            .any(|px| px <= -OFF_SCREEN_START_PX),
        _ => false,
    })
}

impl Style {
    /// What this style does to the element's visibility.
    pub fn effect(&self, tag: &str) -> Effect {
        Effect {
            removed: self.removes(tag),
            visible: match self.keyword("visibility") {
                Some("hidden" | "collapse") => Some(false),
                Some("visible") => Some(true),
                _ => None,
            },
            sized: None,
            coloured: None,
        }
    }

    fn removes(&self, tag: &str) -> bool {
        // Transforms, heights and widths do nothing to an inline box.
        let boxed = !self.is_inline(tag);
        let shrunk = |property: &str| {
            self.get(property).is_some_and(|v| {
                v.iter()
                    .filter_map(amount)
                    .any(|n| n.abs() <= MAX_INVISIBLE_SCALE)
            })
        };
        self.keyword("display") == Some("none")
            || self.keyword("content-visibility") == Some("hidden")
            || self.opacity().is_some_and(|o| o <= MAX_INVISIBLE_OPACITY)
            || self
                .get("zoom")
                .and_then(|v| v.first())
                .and_then(opacity)
                .is_some_and(|z| z <= MAX_INVISIBLE_SCALE)
            || self.get("filter").is_some_and(filters_away)
            || (boxed && self.get("transform").is_some_and(transforms_away))
            || (boxed && shrunk("scale"))
            || self.clipped_away()
            // Letters drawn on top of each other read as a smudge.
            || self
                .get("letter-spacing")
                .and_then(|v| v.first())
                .and_then(pixels)
                .is_some_and(|px| px <= -PILED_LETTERS_PX)
            || (boxed && self.collapsed())
            || self.off_screen(boxed)
    }

    /// Whether the element lays out as an inline box: its `display`, or
    /// for the phrasing elements, their default.
    fn is_inline(&self, tag: &str) -> bool {
        match self.keyword("display") {
            Some(display) if !WIDE_KEYWORDS.contains(&display) => display == "inline",
            _ => INLINE_ELEMENTS.contains(&tag),
        }
    }

    /// `clip: rect(...)` with no area (the "visually hidden" pattern), or a
    /// `clip-path` that keeps nothing.
    fn clipped_away(&self) -> bool {
        // `clip` applies to absolutely positioned boxes only.
        let positioned = matches!(self.keyword("position"), Some("absolute" | "fixed"));
        let clip = match self.get("clip") {
            _ if !positioned => false,
            Some([Value::Function(name, args)]) if name == "rect" => {
                let sides: Vec<f32> = args.iter().filter_map(amount).collect();
                // top right bottom left: empty when bottom <= top or right <= left.
                matches!(sides[..], [top, right, bottom, left] if bottom <= top || right <= left)
            }
            _ => false,
        };
        let clip_path = match self.get("clip-path") {
            Some([Value::Function(name, args), ..]) => {
                let first = args.iter().find_map(amount);
                match name.as_str() {
                    // inset(50%) from every side leaves nothing.
                    "inset" => args
                        .iter()
                        .any(|v| matches!(v, Value::Percent(p) if *p >= 50.0)),
                    "circle" | "ellipse" => first == Some(0.0),
                    _ => false,
                }
            }
            _ => false,
        };
        clip || clip_path
    }

    /// A zero height or width whose overflow is hidden: the box shows
    /// nothing of its content. A small but non-zero box still shows some.
    fn collapsed(&self) -> bool {
        // A scroll container of no height cannot be scrolled either.
        let contains_paint = self.get("contain").is_some_and(|v| {
            v.iter().any(|w| matches!(w, Value::Ident(w) if matches!(w.as_str(), "paint" | "strict" | "content")))
        });
        let hides_overflow = contains_paint || ["overflow", "overflow-x", "overflow-y"].iter().any(|p| {
            self.get(p).is_some_and(|v| {
                v.iter().any(|v| {
                    matches!(v, Value::Ident(w) if matches!(w.as_str(), "hidden" | "clip" | "auto" | "scroll"))
                })
            })
        });
        let tiny = |p: &str| {
            self.get(p)
                .and_then(|v| v.first())
                .and_then(|v| match v {
                    Value::Number(n) => Some(*n),
                    other => pixels(other),
                })
                .is_some_and(|px| px < MIN_READABLE_PX)
        };
        // Padding gives the box room (`height:0; padding-bottom:56%`
        // keeps a video's aspect ratio).
        let padded = [
            "padding",
            "padding-top",
            "padding-bottom",
            "padding-block",
            "padding-left",
            "padding-right",
            "padding-inline",
        ]
        .iter()
        .any(|p| {
            self.get(p)
                .is_some_and(|v| v.iter().filter_map(amount).any(|n| n > 0.0))
        });
        hides_overflow
            && !padded
            && [
                "height",
                "max-height",
                "width",
                "max-width",
                "block-size",
                "max-block-size",
                "inline-size",
                "max-inline-size",
            ]
            .into_iter()
            .any(tiny)
    }

    /// Positioned, indented or moved far enough off the page that no
    /// window shows it: 500 pixels past the left or top edge (text that
    /// cannot be scrolled to), a thousand past the right or bottom.
    fn off_screen(&self, boxed: bool) -> bool {
        let beyond = |p: &str, limit: f32| {
            self.get(p)
                .and_then(|v| v.first())
                .and_then(pixels)
                .is_some_and(|px| px <= -limit)
        };
        let positioned = matches!(self.keyword("position"), Some("absolute" | "fixed"));
        let placed = positioned
            && (["left", "top", "inset"]
                .iter()
                .any(|p| beyond(p, OFF_SCREEN_START_PX))
                || ["right", "bottom"]
                    .iter()
                    .any(|p| beyond(p, OFF_SCREEN_END_PX)));
        let moved = boxed
            && (self.get("translate").is_some_and(|v| {
                v.iter()
                    .filter_map(pixels)
                    .any(|px| px <= -OFF_SCREEN_START_PX)
            }) || self.get("transform").is_some_and(translates_away));
        // A fixed box sits in the window, which does not scroll: past
        // either far edge it is never seen.
        let at_least = |p: &str, limit: f32| {
            self.get(p)
                .and_then(|v| v.first())
                .and_then(pixels)
                .is_some_and(|px| px >= limit)
        };
        let outside_window = self.keyword("position") == Some("fixed")
            && (["top", "bottom"]
                .iter()
                .any(|p| at_least(p, WINDOW_HEIGHT_PX))
                || ["left", "right"]
                    .iter()
                    .any(|p| at_least(p, WINDOW_WIDTH_PX))
                || ["right", "bottom"]
                    .iter()
                    .any(|p| beyond(p, OFF_SCREEN_START_PX)));
        // However it is positioned, a box a thousand pixels before the
        // page's start (by offset or margin) is out of reach.
        let offset = !matches!(self.keyword("position"), None | Some("static"));
        let pushed_out = [
            "margin-left",
            "margin-top",
            "margin-inline-start",
            "margin-block-start",
        ]
        .iter()
        .any(|p| beyond(p, OFF_SCREEN_END_PX))
            || (offset && ["left", "top"].iter().any(|p| beyond(p, OFF_SCREEN_END_PX)));
        let shoved_left = matches!(self.keyword("position"), Some("absolute" | "fixed"))
            && ["right"].iter().any(|p| at_least(p, WINDOW_WIDTH_PX));
        beyond("text-indent", OFF_SCREEN_START_PX)
            || placed
            || moved
            || outside_window
            || pushed_out
            || shoved_left
    }

    /// The font size in pixels inside a parent whose size is `parent`, if
    /// this style sets one (`None`: inherited).
    pub fn font_px(&self, parent: f32) -> Option<f32> {
        let size = self
            .get("font-size")
            .and_then(|v| v.first())
            .or_else(|| self.font_shorthand_size())?;
        match size {
            Value::Ident(word) => Some(match word.as_str() {
                "xx-small" => 9.0,
                "x-small" => 10.0,
                "small" => 13.0,
                "medium" | "initial" => ROOT_FONT_PX,
                "large" => 18.0,
                "x-large" => 24.0,
                "xx-large" => 32.0,
                "xxx-large" => 48.0,
                "smaller" => parent / 1.2,
                "larger" => parent * 1.2,
                _ => return None,
            }),
            other => length_px(other, parent, parent),
        }
    }

    /// The size in a `font` shorthand (`font: 0/0 a`, `bold 12px serif`):
    /// its first length, or a bare zero.
    fn font_shorthand_size(&self) -> Option<&Value> {
        self.get("font")?.iter().find(|v| {
            matches!(v, Value::Dimension(..) | Value::Percent(..))
                || matches!(v, Value::Number(n) if *n == 0.0)
                || matches!(v, Value::Function(name, _) if is_math(name))
        })
    }
}

/// Smaller text than any reader can read (pixels).
pub const MIN_READABLE_PX: f32 = 3.0;

/// A transform that leaves nothing to see: scaled near zero, turned
/// edge-on, skewed flat, or a matrix of no area.
fn transforms_away(values: &[Value]) -> bool {
    values.iter().any(|v| match v {
        // Turned edge-on (a quarter turn about a screen axis) or skewed
        // flat: no area left.
        Value::Function(name, args)
            if matches!(
                name.as_str(),
                "rotatex" | "rotatey" | "skew" | "skewx" | "skewy"
            ) =>
        {
            args.iter()
                .filter_map(degrees)
                .any(|d| (d.rem_euclid(180.0) - 90.0).abs() < 0.5)
        }
        Value::Function(name, args) if name.starts_with("scale") => args
            .iter()
            .filter_map(amount)
            .any(|n| n.abs() <= MAX_INVISIBLE_SCALE),
        // matrix(a, b, c, d, tx, ty): no area when a, b, c, d are all zero.
        Value::Function(name, args) if name == "matrix" => {
            let numbers: Vec<f32> = args.iter().filter_map(amount).collect();
            numbers.len() == 6 && numbers[..4].iter().all(|n| *n == 0.0)
        }
        _ => false,
    })
}

/// Drawn so small that 16 px text is under 3 px: nothing a reader can read.
const MAX_INVISIBLE_SCALE: f32 = 0.15;

/// An angle in degrees.
fn degrees(value: &Value) -> Option<f32> {
    match value {
        Value::Dimension(n, unit) => Some(match unit.as_str() {
            "deg" => *n,
            "rad" => n.to_degrees(),
            "grad" => n * 0.9,
            "turn" => n * 360.0,
            _ => return None,
        }),
        _ => None,
    }
}

/// `filter: opacity(0)` or a blur that leaves no letter readable.
fn filters_away(values: &[Value]) -> bool {
    values.iter().any(|f| match f {
        Value::Function(name, args) if name == "opacity" => args
            .first()
            .and_then(opacity)
            .is_some_and(|o| o <= MAX_INVISIBLE_OPACITY),
        Value::Function(name, args) if name == "blur" => args
            .first()
            .and_then(pixels)
            .is_some_and(|px| px >= MAX_READABLE_BLUR_PX),
        _ => false,
    })
}

/// Negative letter spacing that piles 16 px letters onto each other.
const PILED_LETTERS_PX: f32 = 8.0;

/// A blur radius past which body text cannot be read.
const MAX_READABLE_BLUR_PX: f32 = 8.0;

/// Elements that are inline boxes unless their style says otherwise.
const INLINE_ELEMENTS: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
    "label", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time",
    "tt", "u", "var",
];

mod colour;
pub mod media;
pub mod sheet;
pub mod statics;

#[cfg(test)]
mod tests;
