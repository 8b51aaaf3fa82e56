//! The page's own `<style>` sheets, for the properties that hide.
//!
//! A class rule (`.sr{display:none}`, `#inj{visibility:hidden}`) hides as
//! well as an inline style does, so the sheets in the page are parsed with
//! `cssparser`, their selectors with the `selectors` engine `scraper` is
//! built on (so matching is a browser's, combinators and `:not()`
//! included), and each element's declarations are cascaded by importance,
//! origin, specificity and source order. Remote sheets are never fetched.
//!
//! `@media` and `@supports` are answered for a desktop window (see
//! `media.rs`): a rule for phones does not hide what a desk reader sees,
//! and a rule for a width no screen has does not show what it hides.

use super::{Declaration, Rank, Style, declarations, media, statics};
use cssparser::{
    AtRuleParser, CowRcStr, ParseError, Parser, ParserState, QualifiedRuleParser, StyleSheetParser,
    Token,
};
use scraper::ElementRef;
use scraper::selector::Simple;
use selectors::attr::AttrSelectorOperator;
use selectors::matching::{
    MatchingContext, MatchingForInvalidation, MatchingMode, NeedsSelectorFlags, QuirksMode,
    SelectorCaches, matches_selector,
};
use selectors::parser::{Combinator, Component, Selector};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Selector tests allowed for one page (rules tried against elements).
/// Indexing by id, class, attribute, tag and required ancestor keeps a
/// real page far below it; past it the rest of a page is not shown (the
/// caller fails closed), and the output says so.
pub const MAX_SELECTOR_TESTS: usize = 4_000_000;

/// Time allowed for matching and cascading on one page (a rule of ten
/// thousand declarations reaches every element it matches). A sibling selector
/// (`br:last-child ~ br`) walks the siblings before each element it is
/// tried on, so a page of 40,000 siblings costs more per test than the
/// test count shows; past this time the page is treated as past the test
/// limit.
pub const MAX_MATCHING_TIME: Duration = Duration::from_millis(300);

/// Deeper bracket nesting than any real style sheet uses. Parsing nested
/// blocks and selectors recurses, so a sheet of 100,000 `:not(` would
/// exhaust the stack; a page with one is refused, as a page nesting
/// elements too deeply is.
pub const MAX_CSS_NESTING: usize = 32;

/// Whether `css` nests brackets deeper than [`MAX_CSS_NESTING`], judged by
/// a scan that knows comments, strings and escapes.
pub fn nests_too_deeply(css: &str) -> bool {
    let bytes = css.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = css[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| i + 2 + end + 1);
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_CSS_NESTING {
                    return true;
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

struct Rule {
    selector: Selector<Simple>,
    /// A class (`.x`) or id (`#x`) some ancestor must have for the rule to
    /// match (`.wrap .x span` needs a `.x` ancestor), checked before the
    /// selector is tried.
    ancestor: Option<String>,
    declarations: Vec<Declaration>,
    order: u64,
    /// The `@layer` it is in (see [`Rank::layer_weight`]).
    layer: Option<u32>,
    /// Inside `@scope (.x)`: the class or id an ancestor must have.
    scope: Option<String>,
}

/// Every rule of the page's sheets, indexed by what its rightmost
/// compound selector requires.
pub struct Sheets {
    rules: Vec<Rule>,
    by_id: HashMap<String, Vec<usize>>,
    by_class: HashMap<String, Vec<usize>>,
    by_attribute: HashMap<String, Vec<usize>>,
    by_tag: HashMap<String, Vec<usize>>,
    anywhere: Vec<usize>,
    caches: SelectorCaches,
    tests: usize,
    limit: usize,
    /// Time spent matching and cascading so far.
    spent: Duration,
    /// Layer names across all of the page's sheets, in order.
    layers: Rc<RefCell<Vec<String>>>,
    /// The page is in quirks mode (no doctype): ids and classes match in
    /// any case, as browsers match them there.
    pub quirks: bool,
    /// `@keyframes` by name: the opacity its last frame sets, if any.
    keyframes: Rc<RefCell<HashMap<String, f32>>>,
}

impl Default for Sheets {
    fn default() -> Sheets {
        Sheets::with_limit(MAX_SELECTOR_TESTS)
    }
}

impl Sheets {
    /// Sheets that stop matching after `limit` selector tests.
    pub fn with_limit(limit: usize) -> Sheets {
        Sheets {
            rules: Vec::new(),
            by_id: HashMap::new(),
            by_class: HashMap::new(),
            by_attribute: HashMap::new(),
            by_tag: HashMap::new(),
            anywhere: Vec::new(),
            caches: SelectorCaches::default(),
            tests: 0,
            limit,
            spent: Duration::ZERO,
            layers: Rc::default(),
            quirks: false,
            keyframes: Rc::default(),
        }
    }

    /// Adds a sheet's text (one whose `media` attribute matches).
    pub fn add(&mut self, text: &str) {
        let mut parser = Parser::new(text);
        let mut reader = SheetReader {
            layers: self.layers.clone(),
            keyframes: self.keyframes.clone(),
            ..SheetReader::default()
        };
        let rules: Vec<ParsedRule> = StyleSheetParser::new(&mut parser, &mut reader)
            .flatten()
            .flatten()
            .collect();
        for rule in rules {
            if rule.declarations.is_empty() {
                continue;
            }
            // Each rule's declarations rank after the previous rule's.
            let order = (self.rules.len() as u64) << 16;
            for selector in &rule.selectors {
                self.push(Rule {
                    ancestor: ancestor_key(selector),
                    selector: selector.clone(),
                    declarations: rule.declarations.clone(),
                    order,
                    layer: rule.layer,
                    scope: rule.scope.clone(),
                });
            }
        }
    }

    fn push(&mut self, rule: Rule) {
        let at = self.rules.len();
        // The most selective id, class, attribute or tag the rightmost
        // compound requires: an element without it cannot match, so only
        // elements with it try the rule.
        let key = rule
            .selector
            .iter()
            .filter_map(|component| match component {
                // Ids and classes are indexed lower-cased: a page in quirks
                // mode matches them in any case, and the index only narrows.
                Component::ID(id) => Some((Bucket::Id, id.0.to_string().to_ascii_lowercase())),
                Component::Class(class) => {
                    Some((Bucket::Class, class.0.to_string().to_ascii_lowercase()))
                }
                Component::AttributeInNoNamespaceExists {
                    local_name_lower, ..
                } => Some((Bucket::Attribute, local_name_lower.0.to_string())),
                // `[name="value"]` is indexed by both, lower-cased: the
                // index only narrows, the selector still decides.
                Component::AttributeInNoNamespace {
                    local_name,
                    operator: AttrSelectorOperator::Equal,
                    value,
                    ..
                } => Some((
                    Bucket::AttributeValue,
                    attribute_key(&local_name.0, &value.0),
                )),
                Component::AttributeInNoNamespace { local_name, .. } => Some((
                    Bucket::Attribute,
                    local_name.0.to_string().to_ascii_lowercase(),
                )),
                Component::AttributeOther(attribute) => {
                    Some((Bucket::Attribute, attribute.local_name_lower.0.to_string()))
                }
                Component::LocalName(name) => Some((Bucket::Tag, name.lower_name.0.to_string())),
                _ => None,
            })
            .min_by_key(|(bucket, _)| *bucket);
        let index = match key {
            Some((Bucket::Id, key)) => self.by_id.entry(key).or_default(),
            Some((Bucket::Class, key)) => self.by_class.entry(key).or_default(),
            Some((Bucket::Attribute | Bucket::AttributeValue, key)) => {
                self.by_attribute.entry(key).or_default()
            }
            Some((Bucket::Tag, key)) => self.by_tag.entry(key).or_default(),
            None => &mut self.anywhere,
        };
        index.push(at);
        self.rules.push(rule);
    }

    /// The opacity an element ends at after its animations, when one of
    /// them is a page's fade-in that stays (`opacity: 0; animation: fadeIn
    /// 1s forwards` is how landing pages reveal their text).
    pub fn animated_opacity(&self, style: &Style) -> Option<f32> {
        let keyframes = self.keyframes.borrow();
        style
            .lasting_animations()
            .iter()
            .find_map(|name| keyframes.get(name).copied())
    }

    /// Whether the page has no rules, so only inline styles need reading.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The element's style, its inline declarations included; `ancestors`
    /// holds the classes and ids of its ancestors (see [`Ancestors`]).
    /// `None` once the work limit is reached.
    pub fn styles_for(
        &mut self,
        element: ElementRef,
        inline: &str,
        ancestors: &Ancestors,
    ) -> Option<Style> {
        let started = Instant::now();
        if self.tests >= self.limit || self.spent >= MAX_MATCHING_TIME {
            self.tests = self.limit;
            return None;
        }
        let candidates = self.candidates(element.value(), ancestors);
        if self.tests + candidates.len() > self.limit {
            self.tests = self.limit;
            return None;
        }
        self.tests += candidates.len();
        let mut context = MatchingContext::new(
            MatchingMode::Normal,
            None,
            &mut self.caches,
            if self.quirks {
                QuirksMode::Quirks
            } else {
                QuirksMode::NoQuirks
            },
            NeedsSelectorFlags::No,
            MatchingForInvalidation::No,
        );
        let matched: Vec<&Rule> = candidates
            .into_iter()
            .map(|at| &self.rules[at])
            .filter(|rule| matches_selector(&rule.selector, 0, None, &element, &mut context))
            .collect();
        let style = cascade(&matched, inline);
        self.spent += started.elapsed();
        Some(style)
    }

    /// The rules that may match an element, in sheet order, each once:
    /// those indexed under none of its keys, under its id, a class, an
    /// attribute or its tag, less those whose ancestor or scope key none
    /// of its `ancestors` has.
    fn candidates(&self, value: &scraper::node::Element, ancestors: &Ancestors) -> Vec<usize> {
        let mut candidates: Vec<usize> = self.anywhere.clone();
        if let Some(id) = value.id()
            && let Some(rules) = self.by_id.get(&id.to_ascii_lowercase())
        {
            candidates.extend(rules);
        }
        for class in value.classes() {
            if let Some(rules) = self.by_class.get(&class.to_ascii_lowercase()) {
                candidates.extend(rules);
            }
        }
        for (name, attribute) in value.attrs() {
            for key in [name.to_string(), attribute_key(name, attribute)] {
                if let Some(rules) = self.by_attribute.get(&key) {
                    candidates.extend(rules);
                }
            }
        }
        if let Some(rules) = self.by_tag.get(value.name()) {
            candidates.extend(rules);
        }
        candidates.sort_unstable();
        candidates.dedup();
        let rules = &self.rules;
        candidates.retain(|&at| {
            let rule = &rules[at];
            [&rule.ancestor, &rule.scope]
                .into_iter()
                .flatten()
                .all(|key| ancestors.has(key))
        });
        candidates
    }
}

/// The style the `matched` rules' declarations and the element's `inline`
/// ones give, each ranked as the cascade orders it.
fn cascade(matched: &[&Rule], inline: &str) -> Style {
    let inline = super::inline_declarations(inline);
    let from_sheets = matched.iter().flat_map(|rule| {
        rule.declarations.iter().enumerate().map(move |(at, d)| {
            let rank = Rank {
                important: d.2,
                inline: false,
                layer: Rank::layer_weight(rule.layer, d.2),
                specificity: rule.selector.specificity(),
                order: rule.order + at as u64,
            };
            (rank, d)
        })
    });
    Style::cascade(from_sheets.chain(inline.iter().map(|(rank, d)| (*rank, d))))
}

/// Rule indexes, most selective first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Bucket {
    Id,
    Class,
    AttributeValue,
    Attribute,
    Tag,
}

/// The index key of an attribute with a value.
fn attribute_key(name: &str, value: &str) -> String {
    format!("{name}={value}").to_ascii_lowercase()
}

/// The first class or id required of an ancestor: in a compound left of
/// the rightmost one, reached through descendant and child combinators
/// only (a sibling is no ancestor).
fn ancestor_key(selector: &Selector<Simple>) -> Option<String> {
    let mut components = selector.iter();
    for _ in components.by_ref() {}
    // Once a descendant or child step is taken, every compound further
    // left is an ancestor or an ancestor's sibling; only the compounds
    // reached by such a step are ancestors themselves.
    loop {
        let is_ancestor = matches!(
            components.next_sequence()?,
            Combinator::Descendant | Combinator::Child
        );
        for component in components.by_ref() {
            match component {
                Component::ID(id) if is_ancestor => {
                    return Some(format!("#{}", id.0.to_ascii_lowercase()));
                }
                Component::Class(class) if is_ancestor => {
                    return Some(format!(".{}", class.0.to_ascii_lowercase()));
                }
                _ => {}
            }
        }
    }
}

/// The classes and ids of the elements enclosing the one being styled,
/// kept by the caller's walk: [`Ancestors::enter`] an element after
/// styling it, [`Ancestors::leave`] it when its subtree is done.
#[derive(Default)]
pub struct Ancestors {
    counts: HashMap<String, usize>,
}

impl Ancestors {
    fn keys(element: &scraper::node::Element) -> impl Iterator<Item = String> + '_ {
        let id = element
            .id()
            .map(|id| format!("#{}", id.to_ascii_lowercase()));
        id.into_iter().chain(
            element
                .classes()
                .map(|class| format!(".{}", class.to_ascii_lowercase())),
        )
    }

    /// Adds `element`'s id and classes, for the elements inside it.
    pub fn enter(&mut self, element: &scraper::node::Element) {
        for key in Ancestors::keys(element) {
            *self.counts.entry(key).or_default() += 1;
        }
    }

    /// Removes what [`Ancestors::enter`] added for `element`.
    pub fn leave(&mut self, element: &scraper::node::Element) {
        for key in Ancestors::keys(element) {
            if let Some(count) = self.counts.get_mut(&key) {
                *count -= 1;
                if *count == 0 {
                    self.counts.remove(&key);
                }
            }
        }
    }

    fn has(&self, key: &str) -> bool {
        self.counts.contains_key(key)
    }
}

/// A qualified rule as read, with the blocks around it.
struct ParsedRule {
    selectors: Vec<Selector<Simple>>,
    declarations: Vec<Declaration>,
    layer: Option<u32>,
    scope: Option<String>,
}

/// The `cssparser` callbacks for a sheet (and the body of an at-rule):
/// what the blocks around the rules being read say.
#[derive(Clone, Default)]
struct SheetReader {
    layer: Option<u32>,
    scope: Option<String>,
    /// Layer names in the order they were first named, shared by every
    /// block of the page's sheets.
    layers: Rc<RefCell<Vec<String>>>,
    keyframes: Rc<RefCell<HashMap<String, f32>>>,
}

impl SheetReader {
    /// The index of layer `name` (nested inside the current one), named now
    /// if it is new; an anonymous layer is always new.
    fn layer_named(&self, name: Option<String>) -> u32 {
        let mut layers = self.layers.borrow_mut();
        let full = match (&name, self.layer) {
            (Some(name), Some(outer)) => Some(format!("{}.{name}", layers[outer as usize])),
            (Some(name), None) => Some(name.clone()),
            (None, _) => None,
        };
        let existing = full
            .as_ref()
            .and_then(|f| layers.iter().position(|l| l == f));
        let index = existing.unwrap_or_else(|| {
            let anonymous = format!("anonymous {}", layers.len());
            layers.push(full.unwrap_or(anonymous));
            layers.len() - 1
        });
        u32::try_from(index)
            .unwrap_or(u32::MAX - 2)
            .min(u32::MAX - 2)
    }
}

/// What an at-rule's prelude decided.
enum AtPrelude {
    /// A block of rules, read when its condition holds.
    Group(bool),
    /// `@layer name { ... }` (no name: an anonymous layer), or the
    /// statement `@layer a, b;` naming layers in order.
    Layer(Vec<String>),
    /// `@scope (.x) { ... }` with a class or id as its root; a root this
    /// reader cannot express skips the block.
    Scope(Option<String>),
    /// `@keyframes name { ... }`.
    Keyframes(Option<String>),
    /// Anything else (`@font-face`, `@keyframes`, `@import`...): skipped.
    Other,
}

/// Reads selectors as `scraper` does, but without `:has()`: a selector that
/// looks at what follows or encloses an element costs work proportional to
/// the page for every element it is tried on, and nested ones multiply,
/// so one short rule could keep a 2 MiB page busy for minutes. A rule
/// using it is ignored.
#[derive(Clone, Copy)]
struct SelectorReader;

impl<'i> selectors::parser::Parser<'i> for SelectorReader {
    type Impl = Simple;
    type Error = selectors::parser::SelectorParseErrorKind;

    fn parse_is_and_where(&self) -> bool {
        true
    }

    fn parse_has(&self) -> bool {
        false
    }
}

impl<'i> QualifiedRuleParser<'i> for SheetReader {
    type Prelude = Vec<Selector<Simple>>;
    type QualifiedRule = Vec<ParsedRule>;
    type Error = ();

    fn parse_prelude(&mut self, input: &mut Parser<'i>) -> Result<Self::Prelude, ParseError<()>> {
        // Read as a page at rest matches it (`statics.rs`), and each
        // selector of the list on its own: one the engine cannot read does
        // not take the others down with it.
        let start = input.position();
        while input.next().is_ok() {}
        let text = statics::at_rest(input.slice_from(start));
        let selectors = Parser::new(&text)
            .parse_comma_separated_ignoring_errors(|one| Selector::parse(&SelectorReader, one));
        if selectors.is_empty() {
            return Err(input.new_error_for_next_token());
        }
        Ok(selectors)
    }

    fn parse_block(
        &mut self,
        prelude: Self::Prelude,
        _: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<Self::QualifiedRule, ParseError<()>> {
        let declarations = declarations(input);
        Ok(vec![ParsedRule {
            selectors: prelude,
            declarations,
            layer: self.layer,
            scope: self.scope.clone(),
        }])
    }
}

impl<'i> AtRuleParser<'i> for SheetReader {
    type Prelude = AtPrelude;
    type AtRule = Vec<ParsedRule>;
    type Error = ();

    fn parse_prelude(
        &mut self,
        name: CowRcStr<'i>,
        input: &mut Parser<'i>,
    ) -> Result<AtPrelude, ParseError<()>> {
        let prelude = match name.to_ascii_lowercase().as_str() {
            "media" => AtPrelude::Group(media::list_matches(input)),
            "supports" => AtPrelude::Group(media::supports_matches(input)),
            "container" => AtPrelude::Group(media::container_matches(input)),
            "layer" => AtPrelude::Layer(layer_names(input)),
            "scope" => AtPrelude::Scope(scope_root(input)),
            "keyframes" | "-webkit-keyframes" => {
                AtPrelude::Keyframes(match input.next().cloned() {
                    Ok(Token::Ident(name) | Token::QuotedString(name)) => {
                        Some(name.to_ascii_lowercase())
                    }
                    _ => None,
                })
            }
            _ => AtPrelude::Other,
        };
        // The rest of the prelude is not needed.
        while input.next().is_ok() {}
        Ok(prelude)
    }

    fn rule_without_block(
        &mut self,
        prelude: AtPrelude,
        _: &ParserState,
    ) -> Result<Vec<ParsedRule>, ()> {
        // `@layer a, b;` fixes the order of layers named later.
        if let AtPrelude::Layer(names) = prelude {
            for name in names {
                self.layer_named(Some(name));
            }
        }
        Ok(Vec::new())
    }

    fn parse_block(
        &mut self,
        prelude: AtPrelude,
        _: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<Vec<ParsedRule>, ParseError<()>> {
        if let AtPrelude::Keyframes(Some(name)) = prelude {
            if let Some(opacity) = final_opacity(input) {
                self.keyframes.borrow_mut().insert(name, opacity);
            }
            return Ok(Vec::new());
        }
        let mut inner = self.clone();
        match prelude {
            AtPrelude::Group(true) => {}
            AtPrelude::Layer(names) => {
                inner.layer = Some(self.layer_named(names.into_iter().next()))
            }
            // Nested scopes keep the innermost root.
            AtPrelude::Scope(Some(root)) => inner.scope = Some(root),
            _ => return Ok(Vec::new()),
        }
        Ok(StyleSheetParser::new(input, &mut inner)
            .flatten()
            .flatten()
            .collect())
    }
}

/// The opacity the last frame (`to` or `100%`) of a `@keyframes` block
/// sets, if it sets one.
fn final_opacity(input: &mut Parser) -> Option<f32> {
    let mut last_frame = false;
    let mut opacity = None;
    while let Ok(token) = input.next().cloned() {
        match token {
            Token::Ident(word) => last_frame = word.eq_ignore_ascii_case("to"),
            Token::Percentage { unit_value, .. } => last_frame = unit_value >= 1.0,
            Token::CurlyBracketBlock if last_frame => {
                let frame = input
                    .parse_nested_block(|inner| Ok::<_, ParseError<()>>(declarations(inner)))
                    .unwrap_or_default();
                let style = Style::cascade(frame.iter().enumerate().map(|(at, d)| {
                    let rank = Rank {
                        important: false,
                        inline: false,
                        layer: 0,
                        specificity: 0,
                        order: at as u64,
                    };
                    (rank, d)
                }));
                opacity = style.opacity().or(opacity);
            }
            _ => {}
        }
    }
    opacity
}

/// The layer names of an `@layer` prelude (`a, b.c`).
fn layer_names(input: &mut Parser) -> Vec<String> {
    let mut names = vec![String::new()];
    while let Ok(token) = input.next().cloned() {
        match token {
            Token::Ident(part) => names
                .last_mut()
                .map(|n| n.push_str(&part))
                .unwrap_or_default(),
            Token::Delim('.') => names.last_mut().map(|n| n.push('.')).unwrap_or_default(),
            Token::Comma => names.push(String::new()),
            _ => {}
        }
    }
    names.into_iter().filter(|n| !n.is_empty()).collect()
}

/// The root of `@scope (.card)` or `@scope (#main)`, as an ancestor key;
/// anything more (a compound, a `to (...)` limit) is `None`.
fn scope_root(input: &mut Parser) -> Option<String> {
    let Ok(Token::ParenthesisBlock) = input.next().cloned() else {
        return None;
    };
    let root = input
        .parse_nested_block(|inner| {
            let tokens: Vec<Token> = std::iter::from_fn(|| inner.next().ok().cloned()).collect();
            Ok::<_, ParseError<()>>(match &tokens[..] {
                [Token::Delim('.'), Token::Ident(class)] => {
                    Some(format!(".{}", class.to_ascii_lowercase()))
                }
                [Token::IDHash(id)] => Some(format!("#{}", id.to_ascii_lowercase())),
                _ => None,
            })
        })
        .ok()
        .flatten()?;
    // A scope limit (`to (...)`) is more than an ancestor test says.
    input.next().is_err().then_some(root)
}

#[cfg(test)]
mod tests;
