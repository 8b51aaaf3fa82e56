//! `get_github_latest_release`: the newest published release of a
//! repository, reduced to what an agent needs to pick and fetch an asset.

use crate::client::{FetchError, WebClient, within};
use crate::tool_errors::{ErrorKinds, network_hosts, to_tool_error};
use serde::Deserialize;
use serde_json::{Value, json};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::hosts::ALLOWED_NETWORK_HOSTS;
use wamcp_policy::limits::MAX_HTTP_BYTES;
use wamcp_policy::net_names::check_repository;
use wamcp_policy::url_policy::HostRule;

const KINDS: ErrorKinds = ErrorKinds {
    refused: ErrorType::UrlNotAllowed,
    too_large: ErrorType::GithubRequestFailed,
    status: ErrorType::GithubRequestFailed,
    failed: ErrorType::GithubRequestFailed,
    reachable: Some(ALLOWED_NETWORK_HOSTS),
};

#[derive(Deserialize)]
struct Release {
    tag_name: String,
    name: Option<String>,
    published_at: Option<String>,
    html_url: String,
    #[serde(default)]
    prerelease: bool,
    #[serde(default)]
    assets: Vec<Asset>,
}

#[derive(Deserialize)]
struct Asset {
    name: String,
    size: u64,
    browser_download_url: String,
}

/// The latest published release of `owner/repo`
/// from GitHub's API: tag, name, date and assets.
pub async fn latest_release(client: &WebClient, repository: &str) -> Result<Value, ToolError> {
    let (owner, repo) = check_repository(repository)
        .map_err(|why| ToolError::new(ErrorType::InvalidRepository, format!("{why}.")))?;
    let url = format!("https://api.github.com/repos/{owner}/{repo}/releases/latest");
    let hosts = network_hosts();
    let headers = [
        ("accept", "application/vnd.github+json"),
        ("x-github-api-version", "2022-11-28"),
    ];
    let body = within(client.timeouts().request, async {
        client
            .get(&url, HostRule::Listed(&hosts), &headers)
            .await?
            .read_capped(MAX_HTTP_BYTES)
            .await
    })
    .await
    .and_then(|inner| inner)
    .map_err(|e| match e {
        FetchError::Status { code: 404, .. } => ToolError::new(
            ErrorType::GithubRequestFailed,
            format!("{owner}/{repo} has no published release, or the repository does not exist (HTTP 404)."),
        )
        .recover("Check the owner/repository spelling; pre-releases and drafts are not 'latest'."),
        FetchError::Status { code: 403 | 429, .. } => ToolError::new(
            ErrorType::GithubRequestFailed,
            "GitHub refused the request (HTTP 403/429), usually its hourly rate limit for unauthenticated clients.",
        )
        .retryable("Wait a while before asking again."),
        other => to_tool_error(other, &KINDS, &url),
    })?;
    let release: Release = serde_json::from_slice(&body).map_err(|e| {
        ToolError::new(
            ErrorType::GithubRequestFailed,
            format!("GitHub's answer for {owner}/{repo} is not a release: {e}."),
        )
    })?;
    Ok(json!({
        "repository": format!("{owner}/{repo}"),
        "tag": release.tag_name,
        "name": release.name,
        "published_at": release.published_at,
        "html_url": release.html_url,
        "prerelease": release.prerelease,
        "assets": release.assets.iter().map(|a| json!({
            "name": a.name,
            "size": a.size,
            "download_url": a.browser_download_url,
        })).collect::<Vec<_>>(),
    }))
}
