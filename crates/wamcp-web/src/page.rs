//! `fetch_web_page`: a page as a reader sees it, in numbered-line pages,
//! fenced as untrusted.
//!
//! A fetched page is kept for five minutes (eight pages at most), so the
//! line numbers a continuation call names refer to the same text: a page
//! that changed between two calls would otherwise shift under the model.

use crate::charset;
use crate::client::{WebClient, within};
use crate::extract::{Page, extract_html, extract_plain};
use crate::fence::fence;
use crate::tool_errors::{ErrorKinds, to_tool_error};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::{
    DEFAULT_READ_LINES, MAX_PAGE_BYTES, PAGE_CACHE_ENTRIES, PAGE_CACHE_SECONDS,
};
use wamcp_policy::url_policy::HostRule;

/// Longest line shown; longer paragraphs are wrapped so paging by lines
/// still bounds each answer.
const MAX_LINE_CHARS: usize = 2000;
/// Most text one call returns, like `read_file`.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// Media types read as text; anything else (PDF, images, archives) is
/// refused rather than shown as noise.
const TEXT_TYPES: &[&str] = &[
    "text/html",
    "application/xhtml+xml",
    "text/plain",
    "text/markdown",
    "application/json",
    "application/xml",
    "text/xml",
];

const KINDS: ErrorKinds = ErrorKinds {
    refused: ErrorType::UrlNotAllowed,
    too_large: ErrorType::PageTooLarge,
    status: ErrorType::PageHttpError,
    failed: ErrorType::PageFetchFailed,
    // The readable hosts depend on grants; the tool layer names them.
    reachable: None,
};

/// A page as extracted, ready to be served in ranges.
pub struct Extracted {
    /// The URL that answered, after redirects.
    pub url: String,
    /// The page's title, when it has one.
    pub title: Option<String>,
    /// The visible text, wrapped into the lines `start_line` counts.
    pub lines: Vec<String>,
    /// Outbound https links as (URL, link text), listed after the text.
    pub links: Vec<(String, String)>,
    /// Said after the fence: how the page was read, where that matters.
    pub notes: Vec<String>,
}

/// Recently fetched pages, by the URL asked for.
#[derive(Default)]
pub struct PageCache {
    entries: Mutex<Vec<(String, Instant, Arc<Extracted>)>>,
}

impl PageCache {
    fn get(&self, url: &str) -> Option<Arc<Extracted>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let ttl = Duration::from_secs(PAGE_CACHE_SECONDS);
        entries.retain(|(_, at, _)| at.elapsed() < ttl);
        entries
            .iter()
            .find(|(u, _, _)| u == url)
            .map(|(_, _, p)| p.clone())
    }

    fn put(&self, url: &str, page: Arc<Extracted>) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|(u, _, _)| u != url);
        if entries.len() == PAGE_CACHE_ENTRIES {
            entries.remove(0);
        }
        entries.push((url.to_string(), Instant::now(), page));
    }
}

/// Fetches (or takes from the cache) and renders lines
/// `start_line..start_line + max_lines`.
pub async fn fetch_web_page(
    client: &WebClient,
    cache: &PageCache,
    url: &str,
    rule: HostRule<'_>,
    start_line: i64,
    max_lines: i64,
) -> Result<String, ToolError> {
    let page = match cache.get(url) {
        Some(page) => page,
        None => {
            let page = Arc::new(fetch_and_extract(client, url, rule).await?);
            cache.put(url, page.clone());
            page
        }
    };
    render_range(&page, url, start_line, max_lines)
}

async fn fetch_and_extract(
    client: &WebClient,
    url: &str,
    rule: HostRule<'_>,
) -> Result<Extracted, ToolError> {
    let accept = [(
        "accept",
        "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
    )];
    let fetched = within(client.timeouts().request, async {
        let response = client.get(url, rule, &accept).await?;
        let answered = response.url.clone();
        let content_type = response.content_type().map(str::to_string);
        let body = response.read_capped(MAX_PAGE_BYTES).await?;
        Ok((answered, content_type, body))
    })
    .await
    .and_then(|inner| inner);
    let (answered, content_type, body) = fetched.map_err(|e| to_tool_error(e, &KINDS, url))?;
    // Parsing 2 MiB of HTML takes a while; on the blocking pool it does not
    // hold up the protocol (a stdio server runs on one thread).
    let extract = move || extract_document(&answered, content_type.as_deref(), &body);
    tokio::task::spawn_blocking(extract)
        .await
        .unwrap_or_else(|e| {
            Err(ToolError::new(
                ErrorType::PageFetchFailed,
                format!("Reading the page stopped unexpectedly: {e}."),
            ))
        })
}

/// A fetched document as the lines and links the model is shown; `wamcp
/// extract` calls this too, so what it prints is what the model sees.
pub fn extract_document(
    answered: &url::Url,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<Extracted, ToolError> {
    let kind = text_kind(content_type, body).ok_or_else(|| {
        ToolError::new(
            ErrorType::UnsupportedContentType,
            format!(
                "{answered} is {}, not a text page.",
                content_type.unwrap_or("binary content")
            ),
        )
        .recover("fetch_web_page reads HTML, plain text, Markdown, JSON and XML only.")
    })?;
    let decoded = charset::decode(body, content_type, kind == Kind::Html);
    let page: Page = match kind {
        Kind::Html => extract_html(&decoded.text, Some(answered)).map_err(|why| {
            ToolError::new(ErrorType::PageFetchFailed, format!("{answered}: {why}."))
        })?,
        Kind::Plain => extract_plain(&decoded.text),
    };
    Ok(Extracted {
        url: answered.to_string(),
        title: page.title,
        lines: wrap_lines(&page.text),
        links: page.links,
        notes: page.notes,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Plain,
}

/// HTML or other text, judged by the declared type, or by the bytes when
/// none is declared; `None` for anything else.
fn text_kind(content_type: Option<&str>, body: &[u8]) -> Option<Kind> {
    let media = content_type
        .map(|t| {
            t.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|m| !m.is_empty());
    match media.as_deref() {
        Some("text/html" | "application/xhtml+xml") => Some(Kind::Html),
        Some(m) if TEXT_TYPES.contains(&m) => Some(Kind::Plain),
        Some(_) => None,
        None => {
            if looks_like_html(body) {
                Some(Kind::Html)
            } else if body[..body.len().min(8192)].contains(&0) {
                None
            } else {
                Some(Kind::Plain)
            }
        }
    }
}

/// The HTML openings of the WHATWG MIME-sniffing rules: a tag from this
/// list (or a comment) first, followed by a space or `>`. Anything else
/// undeclared is read as plain text, where nothing is hidden.
fn looks_like_html(body: &[u8]) -> bool {
    const OPENINGS: &[&str] = &[
        "<!doctype html",
        "<html",
        "<head",
        "<script",
        "<iframe",
        "<h1",
        "<div",
        "<font",
        "<table",
        "<a",
        "<style",
        "<title",
        "<b",
        "<body",
        "<br",
        "<p",
        "<!--",
    ];
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let start = head.trim_start();
    OPENINGS.iter().any(|opening| {
        start.strip_prefix(opening).is_some_and(|rest| {
            *opening == "<!--" || rest.starts_with([' ', '>', '\t', '\n', '\r', '/'])
        })
    })
}

/// Splits text into lines no longer than [`MAX_LINE_CHARS`], breaking long
/// ones at white space where there is some.
fn wrap_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while rest.chars().count() > MAX_LINE_CHARS {
            let cut = rest
                .char_indices()
                .nth(MAX_LINE_CHARS)
                .map_or(rest.len(), |(i, _)| i);
            let at = rest[..cut].rfind(' ').filter(|&i| i > 0).unwrap_or(cut);
            lines.push(rest[..at].to_string());
            rest = rest[at..].trim_start();
        }
        lines.push(rest.to_string());
    }
    lines
}

/// Lines `start_line..start_line + max_lines` of a page, fenced, with the
/// links and the continuation call.
pub fn render_range(
    page: &Extracted,
    asked_url: &str,
    start_line: i64,
    max_lines: i64,
) -> Result<String, ToolError> {
    let total = page.lines.len();
    let start = start_line.max(1) as usize;
    if start > total.max(1) {
        return Err(ToolError::new(
            ErrorType::StartLineOutOfRange,
            format!("start_line {start} is past the end of the page, which has {total} lines."),
        )
        .detail("total_lines", total)
        .recover(format!("Use a start_line between 1 and {}.", total.max(1))));
    }
    let wanted = max_lines.clamp(1, DEFAULT_READ_LINES as i64) as usize;
    let mut body = String::new();
    if let Some(title) = &page.title {
        body.push_str(&format!("TITLE: {title}\n"));
    }
    body.push_str(&format!("URL: {}\n\n", page.url));
    let mut last = start - 1;
    for line in page.lines.iter().skip(start - 1).take(wanted) {
        if body.len() + line.len() > MAX_ANSWER_BYTES && last >= start {
            break;
        }
        body.push_str(line);
        body.push('\n');
        last += 1;
    }
    if total == 0 {
        body.push_str("[the page has no readable text]\n");
    }
    if !page.links.is_empty() {
        body.push_str("\nLINKS:\n");
        for (url, text) in &page.links {
            if text.is_empty() {
                body.push_str(&format!("- {url}\n"));
            } else {
                body.push_str(&format!("- {url} ({text})\n"));
            }
        }
    }
    let mut out = fence(&page.url, &body);
    for note in &page.notes {
        out.push_str(&format!("Note: {note}.\n"));
    }
    if last < total {
        out.push_str(&format!(
            "Showing lines {start}-{last} of {total}. The page continues: call fetch_web_page(url={}, start_line={}).\n",
            serde_json::to_string(asked_url).unwrap_or_default(),
            last + 1
        ));
    } else if start > 1 {
        out.push_str(&format!(
            "Lines {start}-{last} of {total}; this is the end of the page.\n"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(lines: usize) -> Extracted {
        Extracted {
            url: "https://docs.test/a".into(),
            title: Some("A page".into()),
            lines: (1..=lines).map(|i| format!("line {i}")).collect(),
            links: vec![("https://docs.test/b".into(), "B".into())],
            notes: Vec::new(),
        }
    }

    #[test]
    fn ranges_and_continuations() {
        let text = render_range(&page(5), "https://docs.test/a", 2, 2).unwrap();
        assert!(
            text.starts_with("--- BEGIN UNTRUSTED WEB CONTENT (https://docs.test/a) ---\n"),
            "{text}"
        );
        assert!(text.contains("TITLE: A page\nURL: https://docs.test/a\n\nline 2\nline 3\n\nLINKS:\n- https://docs.test/b (B)\n"), "{text}");
        assert!(text.ends_with(
            "Showing lines 2-3 of 5. The page continues: call fetch_web_page(url=\"https://docs.test/a\", start_line=4).\n"
        ), "{text}");
        let end = render_range(&page(5), "https://docs.test/a", 4, 100).unwrap();
        assert!(
            end.ends_with("Lines 4-5 of 5; this is the end of the page.\n"),
            "{end}"
        );
        let error = render_range(&page(5), "https://docs.test/a", 9, 10).unwrap_err();
        assert_eq!(error.kind, ErrorType::StartLineOutOfRange);
        let empty = render_range(&page(0), "https://docs.test/a", 1, 10).unwrap();
        assert!(empty.contains("[the page has no readable text]"));
    }

    #[test]
    fn long_paragraphs_wrap() {
        let long = "word ".repeat(1000);
        let lines = wrap_lines(long.trim());
        assert!(lines.len() == 3 && lines.iter().all(|l| l.chars().count() <= MAX_LINE_CHARS));
        assert_eq!(lines.join(" "), long.trim());
        let unbroken = "x".repeat(4500);
        assert_eq!(
            wrap_lines(&unbroken)
                .iter()
                .map(String::len)
                .collect::<Vec<_>>(),
            [2000, 2000, 500]
        );
    }

    #[test]
    fn text_kinds() {
        assert!(text_kind(Some("text/html; charset=utf-8"), b"") == Some(Kind::Html));
        assert!(text_kind(Some("Application/JSON"), b"{}") == Some(Kind::Plain));
        assert!(text_kind(Some("application/pdf"), b"%PDF").is_none());
        assert!(text_kind(None, b"  <!DOCTYPE html><p>x") == Some(Kind::Html));
        assert!(text_kind(None, b"<title>T</title><span hidden>x</span>") == Some(Kind::Html));
        assert!(text_kind(None, b"<!-- c --><p>x") == Some(Kind::Html));
        assert!(text_kind(None, b"<pre>not a listed opening") == Some(Kind::Plain));
        assert!(text_kind(None, b"<abbr>") == Some(Kind::Plain));
        assert!(text_kind(None, b"plain words") == Some(Kind::Plain));
        assert!(text_kind(None, b"PK\x03\x04\x00\x00").is_none());
    }

    #[test]
    fn the_cache_keeps_eight_pages() {
        let cache = PageCache::default();
        for i in 0..10 {
            cache.put(&format!("u{i}"), Arc::new(page(i)));
        }
        assert!(cache.get("u0").is_none() && cache.get("u1").is_none());
        assert_eq!(cache.get("u9").unwrap().lines.len(), 9);
    }
}
