//! Reading DuckDuckGo's HTML results pages: the lite page (a table whose
//! rows are a result's link, its snippet, its address) and, as a fallback,
//! the older `html.duckduckgo.com` page (one `div.result` per result).
//!
//! A snippet belongs to the result row above it and to no other: pairing
//! by position gave every result after an ad, or after a result without a
//! snippet, its neighbour's text. Ads are dropped, and so is any target a
//! model should not be sent to (not http(s), credentials in it, longer
//! than [`MAX_RESULT_URL_CHARS`]), whole: a URL cut short is a broken link
//! the model would then fetch.

use super::{Hit, SearchError};
use crate::fence::is_invisible;
use scraper::{ElementRef, Html, Selector};
use url::Url;

/// Title and snippet are each cut to this many characters.
pub const MAX_FIELD_CHARS: usize = wamcp_policy::limits::MAX_SEARCH_FIELD_CHARS;
/// A result whose target is longer is dropped, not cut.
pub const MAX_RESULT_URL_CHARS: usize = 500;
/// A real results page is larger; anything smaller is an error page.
const MIN_RESULTS_PAGE_BYTES: usize = 1500;

/// Results from a results page, or why the page is not one.
pub fn parse_results(html: &str) -> Result<Vec<Hit>, SearchError> {
    if html.len() < MIN_RESULTS_PAGE_BYTES {
        return Err(SearchError::Blocked(format!(
            "the search page is only {} bytes, too small to be a results page",
            html.len()
        )));
    }
    let document = Html::parse_document(html);
    let rows = lite_rows(&document).or_else(|| html_layout_rows(&document));
    let listed = rows.as_ref().map_or(0, Vec::len);
    let hits: Vec<Hit> = rows.into_iter().flatten().flatten().collect();
    if !hits.is_empty() {
        return Ok(hits);
    }
    // Judged only without results: a snippet may well say "captcha".
    if let Some(sentence) = bot_check_sentence(&document) {
        return Err(SearchError::Blocked(format!(
            "DuckDuckGo answered with its bot check instead of results (\"{sentence}\")"
        )));
    }
    // With entries on the page, the notice must be the page's own words,
    // not an ad's or a dropped result's text ("No results? Try ...").
    let text = if listed == 0 {
        html.to_ascii_lowercase()
    } else {
        text_outside_entries(&document).to_ascii_lowercase()
    };
    if text.contains("no results") || text.contains("no more results") {
        return Ok(Vec::new());
    }
    // A page of nothing but ads and unusable links is not an answer about
    // the web: "no results" would send the model rephrasing forever.
    Err(SearchError::Blocked(if listed == 0 {
        "the search page has neither results nor a 'no results' notice; its layout has probably changed"
            .into()
    } else {
        format!(
            "all {listed} entries of the search page were dropped (ads, or targets that are not \
             plain http(s) links) and it has no 'no results' notice; its layout has probably \
             changed or it is a block page"
        )
    }))
}

// Every caller passes a literal selector, each parsed by the tests of this
// module, so the parse cannot fail at run time.
#[allow(clippy::expect_used)]
fn selector(css: &str) -> Selector {
    Selector::parse(css).expect("a fixed, valid selector")
}

/// The lite page's results in order, `None` for each dropped one (an ad, an
/// unsafe target), or `None` overall when the page has no result links.
fn lite_rows(document: &Html) -> Option<Vec<Option<Hit>>> {
    let (row, link, snippet) = (
        selector("tr"),
        selector("a.result-link"),
        selector("td.result-snippet"),
    );
    let any_link = selector("a");
    let mut results: Vec<Option<Hit>> = Vec::new();
    // Whether the row just read was a result's link: its snippet, if it has
    // one, is the very next row. Any other row in between closes it, so a
    // snippet whose own link went unrecognised is dropped, not lent to the
    // result above; so is one in a row that holds a link of its own.
    let mut snippet_open = false;
    for tr in document.select(&row) {
        let links: Vec<ElementRef> = tr.select(&link).collect();
        if !links.is_empty() {
            // Every link of the row is an entry; a snippet below belongs
            // to the last.
            for a in links {
                let is_ad = has_class_part(tr, "sponsored") || has_class_part(a, "sponsored");
                results.push(if is_ad { None } else { hit(a) });
            }
            snippet_open = true;
            continue;
        }
        if snippet_open
            && let Some(td) = tr.select(&snippet).next()
            && tr.select(&any_link).count() == td.select(&any_link).count()
            && let Some(Some(hit)) = results.last_mut()
        {
            hit.snippet = field(&td.text().collect::<String>());
        }
        snippet_open = false;
    }
    (!results.is_empty()).then_some(results)
}

/// The older layout: each `.result` holds its `a.result__a` and, maybe, its
/// `.result__snippet`; ads carry `result--ad`.
fn html_layout_rows(document: &Html) -> Option<Vec<Option<Hit>>> {
    let (block, link, snippet, next_entry) = (
        selector(".result"),
        selector("a.result__a"),
        selector(".result__snippet"),
        selector("a.result__a, .result"),
    );
    let results: Vec<Option<Hit>> = document
        .select(&block)
        .filter_map(|result| {
            let a = result.select(&link).next()?;
            if has_class_part(result, "result--ad") || has_class_part(result, "sponsored") {
                return Some(None);
            }
            Some(hit(a).map(|mut hit| {
                if let Some(s) = snippet_after(result, a, &snippet, &next_entry) {
                    hit.snippet = field(&s.text().collect::<String>());
                }
                hit
            }))
        })
        .collect();
    (!results.is_empty()).then_some(results)
}

/// The snippet of `link` in its `block`: the first element matching
/// `snippet` after the link and before the next entry (`next_entry`:
/// another link, a nested result). One placed before the link, or after
/// another entry, belongs to something else (a nested ad, the result above
/// or below) and is not lent to it.
fn snippet_after<'a>(
    block: ElementRef<'a>,
    link: ElementRef<'a>,
    snippet: &Selector,
    next_entry: &Selector,
) -> Option<ElementRef<'a>> {
    block
        .descendants()
        .skip_while(|node| node.id() != link.id())
        .skip(1)
        .filter_map(ElementRef::wrap)
        .take_while(|element| !next_entry.matches(element))
        .find(|element| snippet.matches(element))
}

/// The page's text outside its entries (result and ad rows, result
/// blocks): where the engine's own notices are.
fn text_outside_entries(document: &Html) -> String {
    let (link, snippet, link_text) = (
        selector("a.result-link, a.result__a"),
        selector(".result-snippet"),
        selector(".link-text"),
    );
    let is_entry = |element: ElementRef| {
        element.value().classes().any(|c| c == "result")
            || has_class_part(element, "sponsored")
            || (element.value().name() == "tr"
                && [&link, &snippet, &link_text]
                    .iter()
                    .any(|s| element.select(s).next().is_some()))
    };
    document
        .root_element()
        .descendants()
        .filter_map(|node| {
            let text = node.value().as_text()?;
            let inside_entry = node.ancestors().filter_map(ElementRef::wrap).any(is_entry);
            (!inside_entry).then(|| text.to_string())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn has_class_part(element: ElementRef, part: &str) -> bool {
    element.value().classes().any(|class| class.contains(part))
}

/// A result from its link, without a snippet yet; `None` when the target is
/// dropped.
fn hit(a: ElementRef) -> Option<Hit> {
    Some(Hit {
        title: field(&a.text().collect::<String>()),
        url: result_target(a.value().attr("href")?)?,
        snippet: String::new(),
    })
}

/// Where a result link leads. Links may go through DuckDuckGo's redirector
/// (`//duckduckgo.com/l/?uddg=<target>`); the target is what the model
/// needs. DuckDuckGo's own ad and help links are not results.
fn result_target(href: &str) -> Option<String> {
    let absolute = Url::parse("https://duckduckgo.com/")
        .ok()?
        .join(href)
        .ok()?;
    let on_duckduckgo = absolute
        .host_str()
        .is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"));
    let target = if on_duckduckgo && absolute.path() == "/l/" {
        let (_, value) = absolute.query_pairs().find(|(k, _)| k == "uddg")?;
        Url::parse(&value).ok()?
    } else if on_duckduckgo {
        // `/y.js?ad_domain=...` (an ad), `/duckduckgo-help-pages/...` (its
        // "more info"), and any other page of the engine's own.
        return None;
    } else {
        absolute
    };
    let safe = matches!(target.scheme(), "https" | "http")
        && target.host_str().is_some()
        // Credentials in a link are a phishing shape, never a search result.
        && target.username().is_empty()
        && target.password().is_none();
    let text = target.to_string();
    (safe && text.chars().count() <= MAX_RESULT_URL_CHARS).then_some(text)
}

/// The challenge page's own words, when the page is DuckDuckGo's bot check:
/// its title and description, else the sentence around a telltale phrase.
fn bot_check_sentence(document: &Html) -> Option<String> {
    let part = |css: &str| {
        document
            .select(&selector(css))
            .map(|e| field(&e.text().collect::<String>()))
            .find(|text| !text.is_empty())
    };
    let modal: Vec<String> = [
        part("[class*=anomaly-modal__title]"),
        part("[class*=anomaly-modal__description]"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !modal.is_empty() {
        return Some(field(&modal.join(" ")));
    }
    let text: String = document.select(&selector("body")).next()?.text().collect();
    // ASCII lower-casing keeps byte offsets, so they index `text` too.
    let lower = text.to_ascii_lowercase();
    let marker = [
        "bots use duckduckgo",
        "made by a human",
        "unusual traffic",
        "captcha",
    ]
    .iter()
    .find_map(|m| lower.find(m))?;
    let start = text[..marker]
        .rfind(['.', '!', '?', '\n'])
        .map_or(0, |i| i + 1);
    let end = text[marker..]
        .find(['.', '!', '?', '\n'])
        .map_or(text.len(), |i| marker + i + 1);
    Some(field(&text[start..end]))
}

/// One line, invisible characters removed, cut to [`MAX_FIELD_CHARS`].
pub(crate) fn field(text: &str) -> String {
    let clean: String = text
        .chars()
        .filter(|c| !is_invisible(*c))
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match clean.char_indices().nth(MAX_FIELD_CHARS) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean,
    }
}

#[cfg(test)]
mod tests;
