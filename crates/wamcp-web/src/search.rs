//! `web_search`: a search backend behind a trait, DuckDuckGo's lite page as
//! the one implementation.
//!
//! "Blocked" and "no results" are kept apart on purpose: a model told
//! "no results" rephrases and retries forever, while a block (a 202, an
//! anomaly page, a redirect, a layout that is no longer recognised) is
//! `SEARCH_BLOCKED`, which says to stop.

use crate::client::{FetchError, WebClient, within};
use crate::fence::fence;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use url::Url;

pub mod results_page;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::MAX_HTTP_BYTES;
use wamcp_policy::url_policy::HostRule;

/// Longest query accepted.
pub const MAX_QUERY_CHARS: usize = wamcp_policy::limits::MAX_SEARCH_QUERY_CHARS;
/// One request per this interval, so the endpoint does not block us.
pub const SEARCH_INTERVAL: Duration = Duration::from_secs(2);

const SEARCH_HOSTS: &[&str] = &[
    "lite.duckduckgo.com",
    "html.duckduckgo.com",
    "duckduckgo.com",
];
/// DuckDuckGo's lite page refuses agents that are not browsers, so this
/// backend (and only it) sends a desktop browser's User-Agent.
const BROWSER_USER_AGENT: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The result's title, cut to `MAX_FIELD_CHARS` characters.
    pub title: String,
    /// Where the result points; results whose
    /// URL is too long are dropped, not cut.
    pub url: String,
    /// The engine's excerpt of the page, cut like the title.
    pub snippet: String,
}

/// Why a search gave no results list; "no
/// results" is an empty list, not an error.
#[derive(Debug, PartialEq, Eq)]
pub enum SearchError {
    /// The engine refused or rate-limited the
    /// request, or its page is not one we recognise.
    Blocked(String),
    /// The request failed: network, TLS, timeout, or an unexpected status.
    Failed(String),
    /// The URL policy refused the engine's URL or a redirect from it.
    UrlNotAllowed(String),
}

/// A search in progress: the hits, or why there are none.
pub type Searching<'a> = Pin<Box<dyn Future<Output = Result<Vec<Hit>, SearchError>> + Send + 'a>>;

/// Where queries go. `Ok(empty)` means the engine found nothing.
pub trait SearchBackend: Send + Sync {
    /// The backend's name, as `WAMCP_SEARCH_BACKEND` spells it.
    fn name(&self) -> &'static str;
    /// Searches for `query`, through `client` so the URL policy applies.
    fn search<'a>(&'a self, client: &'a WebClient, query: &'a str) -> Searching<'a>;
}

/// DuckDuckGo's HTML-only results page.
#[derive(Default)]
pub struct DuckDuckGoLite {
    gate: RateGate,
}

impl SearchBackend for DuckDuckGoLite {
    fn name(&self) -> &'static str {
        "duckduckgo"
    }

    fn search<'a>(&'a self, client: &'a WebClient, query: &'a str) -> Searching<'a> {
        Box::pin(async move {
            self.gate.wait().await;
            let mut url = Url::parse("https://lite.duckduckgo.com/lite/")
                .map_err(|e| SearchError::Failed(format!("the search page's URL: {e}")))?;
            url.query_pairs_mut().append_pair("q", query);
            let hosts: Vec<String> = SEARCH_HOSTS.iter().map(|h| h.to_string()).collect();
            let headers = [("user-agent", BROWSER_USER_AGENT), ("accept", "text/html")];
            let fetched = within(client.timeouts().request, async {
                let response = client
                    .get_no_redirect(url.as_str(), HostRule::Listed(&hosts), &headers)
                    .await?;
                let status = response.status();
                let body = response.read_capped(MAX_HTTP_BYTES).await?;
                Ok((status, body))
            })
            .await
            .and_then(|inner| inner);
            let (status, body) = fetched.map_err(|e| match e {
                FetchError::Refused(why) => SearchError::UrlNotAllowed(why),
                FetchError::Status { code, .. }
                    if (300..400).contains(&code) || code == 403 || code == 429 =>
                {
                    SearchError::Blocked(format!(
                        "the search page answered HTTP {code} instead of results"
                    ))
                }
                other => SearchError::Failed(other.describe()),
            })?;
            if status == 202 {
                return Err(SearchError::Blocked(
                    "the search page answered 202 (DuckDuckGo's sign of a rate limit)".into(),
                ));
            }
            results_page::parse_results(&String::from_utf8_lossy(&body))
        })
    }
}

/// Spaces requests at least [`SEARCH_INTERVAL`] apart (waiting, not
/// refusing: a second search a second later simply starts a second later).
#[derive(Default)]
pub struct RateGate {
    last: Mutex<Option<Instant>>,
}

impl RateGate {
    async fn wait(&self) {
        let pause = {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let pause = pause_before(*last, now);
            *last = Some(now + pause);
            pause
        };
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
    }
}

/// How long a request at `now` must wait after one that started at `last`.
fn pause_before(last: Option<Instant>, now: Instant) -> Duration {
    last.map_or(Duration::ZERO, |last| {
        (last + SEARCH_INTERVAL).saturating_duration_since(now)
    })
}

/// The tool: validates, searches, fences the results.
pub async fn web_search(
    client: &WebClient,
    backend: &dyn SearchBackend,
    query: &str,
    max_results: i64,
) -> Result<String, ToolError> {
    let query = query.trim();
    if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
        return Err(ToolError::new(
            ErrorType::InvalidQuery,
            format!("The query must be 1 to {MAX_QUERY_CHARS} characters."),
        ));
    }
    let wanted = max_results.clamp(1, wamcp_policy::limits::MAX_WEB_RESULTS as i64) as usize;
    let hits = backend.search(client, query).await.map_err(|e| match e {
        SearchError::Blocked(why) => ToolError::new(ErrorType::SearchBlocked, format!("The search was blocked: {why}."))
            .retryable("This is not 'no results': do not rephrase the query. Wait a minute before searching again, or read a documentation page you already know with fetch_web_page."),
        SearchError::Failed(why) => ToolError::new(ErrorType::SearchFailed, format!("The search failed: {why}.")).retryable("Wait a minute and search again once; if it fails again, tell the user web search is unavailable."),
        SearchError::UrlNotAllowed(why) => ToolError::new(ErrorType::SearchUrlNotAllowed, format!("The search request was refused: {why}.")),
    })?;
    if hits.is_empty() {
        return Ok(format!("No results for '{query}' ({}).\n", backend.name()));
    }
    let mut body = String::new();
    for (i, hit) in hits.iter().take(wanted).enumerate() {
        body.push_str(&format!("{}. {}\n   {}\n", i + 1, hit.title, hit.url));
        if !hit.snippet.is_empty() {
            body.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    Ok(fence(&format!("{} search: {query}", backend.name()), &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_spaces_requests_two_seconds_apart() {
        let now = Instant::now();
        assert_eq!(pause_before(None, now), Duration::ZERO);
        assert_eq!(pause_before(Some(now), now), SEARCH_INTERVAL);
        assert_eq!(
            pause_before(Some(now), now + Duration::from_millis(500)),
            Duration::from_millis(1500)
        );
        assert_eq!(
            pause_before(Some(now), now + Duration::from_secs(5)),
            Duration::ZERO
        );
    }
}
