//! `fetch_https_response`: the text of one response from an allowed host.

use crate::charset;
use crate::client::{WebClient, within};
use crate::fence::fence;
use crate::tool_errors::{ErrorKinds, network_hosts, to_tool_error};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::hosts::ALLOWED_NETWORK_HOSTS;
use wamcp_policy::limits::MAX_HTTP_BYTES;
use wamcp_policy::url_policy::HostRule;

const KINDS: ErrorKinds = ErrorKinds {
    refused: ErrorType::UrlNotAllowed,
    too_large: ErrorType::ResponseTooLarge,
    status: ErrorType::HttpRequestFailed,
    failed: ErrorType::HttpRequestFailed,
    reachable: Some(ALLOWED_NETWORK_HOSTS),
};

/// How much of a body is looked at to decide it is binary.
const BINARY_SNIFF_BYTES: usize = 8192;

/// Fetches `url` (network allowlist only) and returns a one-line summary and
/// the decoded body inside the untrusted-content fence.
pub async fn fetch_https_response(client: &WebClient, url: &str) -> Result<String, ToolError> {
    let hosts = network_hosts();
    let fetched = within(client.timeouts().request, async {
        let response = client.get(url, HostRule::Listed(&hosts), &[]).await?;
        let answered = response.url.to_string();
        let status = response.status();
        let content_type = response.content_type().map(str::to_string);
        let body = response.read_capped(MAX_HTTP_BYTES).await?;
        Ok((answered, status, content_type, body))
    })
    .await
    .and_then(|inner| inner);
    let (answered, status, content_type, body) =
        fetched.map_err(|e| to_tool_error(e, &KINDS, url))?;
    if is_binary(&body, content_type.as_deref()) {
        return Err(ToolError::new(
            ErrorType::UnsupportedContentType,
            format!(
                "{answered} returned binary content ({}, {} bytes), not text.",
                content_type.as_deref().unwrap_or("no content type"),
                body.len()
            ),
        )
        .recover("Use download_file to save it in the download root instead."));
    }
    let html = content_type
        .as_deref()
        .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
    let decoded = charset::decode(&body, content_type.as_deref(), html);
    let lossy = if decoded.lossy {
        ", some bytes were invalid and shown as \u{FFFD}"
    } else {
        ""
    };
    Ok(format!(
        "HTTP {status} from {answered} ({}, {} bytes, decoded as {}{lossy})\n{}",
        content_type.as_deref().unwrap_or("no content type"),
        body.len(),
        decoded.encoding,
        fence(&answered, &decoded.text)
    ))
}

/// Media types that are never text, or a NUL byte where text has none
/// (UTF-16 with a BOM is text and is decoded as such). `octet-stream` is
/// judged by its bytes: raw file hosts label plenty of source files so.
fn is_binary(body: &[u8], content_type: Option<&str>) -> bool {
    let media = content_type.unwrap_or_default().to_ascii_lowercase();
    let binary_media = ["image/", "audio/", "video/", "font/"]
        .iter()
        .any(|prefix| media.starts_with(prefix))
        || media.starts_with("application/zip")
        || media.starts_with("application/gzip");
    let head = &body[..body.len().min(BINARY_SNIFF_BYTES)];
    let utf16 = head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]);
    binary_media || (!utf16 && head.contains(&0))
}
