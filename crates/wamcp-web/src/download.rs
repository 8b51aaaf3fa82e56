//! `download_file`: bytes from an allowed host into the download root,
//! under a safe name, never replacing anything.
//!
//! The body streams into a `.part` file beside its destination and is
//! renamed into place only when complete, with a rename that fails if the
//! name was taken meanwhile; a failed or refused download leaves nothing.

use crate::client::{FetchError, WebClient, within};
use crate::tool_errors::{ErrorKinds, network_hosts, to_tool_error};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::hosts::ALLOWED_NETWORK_HOSTS;
use wamcp_policy::limits::MAX_DOWNLOAD_BYTES;
use wamcp_policy::net_names::sanitize_download_name;
use wamcp_policy::url_policy::{HostRule, check_url};

const KINDS: ErrorKinds = ErrorKinds {
    refused: ErrorType::DownloadNotAllowed,
    too_large: ErrorType::DownloadTooLarge,
    status: ErrorType::DownloadFailed,
    failed: ErrorType::DownloadFailed,
    reachable: Some(ALLOWED_NETWORK_HOSTS),
};

/// A finished download.
#[derive(Debug)]
pub struct Downloaded {
    /// Where the file was saved: inside the
    /// download root, never replacing a file.
    pub path: PathBuf,
    /// The file's size, as written.
    pub bytes: u64,
}

impl Downloaded {
    /// The one-line answer `download_file` gives.
    pub fn report(&self) -> String {
        format!("Downloaded {} bytes to {}", self.bytes, self.path.display())
    }
}

/// Downloads `url` from an allowed network host into `root`, under `filename`
/// or the URL's last segment.
pub async fn download_file(
    client: &WebClient,
    url: &str,
    filename: Option<&str>,
    root: &Path,
) -> Result<Downloaded, ToolError> {
    download_capped(client, url, filename, root, MAX_DOWNLOAD_BYTES).await
}

/// [`download_file`] with the size cap as a parameter, so tests can prove
/// the cap without moving 500 MiB.
pub async fn download_capped(
    client: &WebClient,
    url: &str,
    filename: Option<&str>,
    root: &Path,
    cap: u64,
) -> Result<Downloaded, ToolError> {
    let hosts = network_hosts();
    // The URL is judged before the name: a refused host is refused first.
    let checked = check_url(url, HostRule::Listed(&hosts))
        .map_err(|refusal| to_tool_error(FetchError::Refused(refusal.0), &KINDS, url))?;
    let requested = match filename.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => name.to_string(),
        None => name_from_url(&checked.url),
    };
    let name = sanitize_download_name(&requested).map_err(|why| {
        ToolError::new(
            ErrorType::DownloadFailed,
            format!("No file name to save under: {why}."),
        )
        .recover("Pass filename with a plain file name such as tool-1.2.zip.")
    })?;
    let destination = root.join(&name);
    if destination.symlink_metadata().is_ok() {
        return Err(exists(&destination));
    }
    std::fs::create_dir_all(root).map_err(|e| {
        ToolError::new(
            ErrorType::DownloadFailed,
            format!(
                "The download root {} could not be created: {e}.",
                root.display()
            ),
        )
    })?;

    let response = within(
        client.timeouts().request,
        client.get(
            url,
            HostRule::Listed(&hosts),
            &[("accept-encoding", "identity")],
        ),
    )
    .await
    .and_then(|inner| inner)
    .map_err(|e| to_tool_error(e, &KINDS, url))?;

    let part = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".part")
        .tempfile_in(root)
        .map_err(|e| failed(&destination, &e.to_string()))?;
    let mut file = tokio::fs::File::from_std(
        part.as_file()
            .try_clone()
            .map_err(|e| failed(&destination, &e.to_string()))?,
    );
    let bytes = response
        .stream_capped(cap, client.timeouts().idle, &mut file)
        .await
        .map_err(|e| to_tool_error(e, &KINDS, url))?;
    file.sync_all()
        .await
        .map_err(|e| failed(&destination, &e.to_string()))?;
    drop(file);
    // Fails instead of replacing when the name was taken during the download.
    part.persist_noclobber(&destination)
        .map_err(|e| match e.error.kind() {
            ErrorKind::AlreadyExists => exists(&destination),
            _ => failed(&destination, &e.error.to_string()),
        })?;
    Ok(Downloaded {
        path: destination,
        bytes,
    })
}

/// The last path segment, percent-decoded; `download` when there is none.
fn name_from_url(url: &url::Url) -> String {
    let segment = url
        .path_segments()
        .and_then(|mut segments| segments.next_back())
        .unwrap_or_default();
    let decoded = percent_decode(segment);
    if decoded.trim().is_empty() {
        "download".to_string()
    } else {
        decoded
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn exists(destination: &Path) -> ToolError {
    ToolError::new(
        ErrorType::DestinationExists,
        format!(
            "{} already exists; downloads never overwrite.",
            destination.display()
        ),
    )
    .with_path(destination.display().to_string())
    .recover("Pass a different filename, or use the file that is already there.")
}

fn failed(destination: &Path, why: &str) -> ToolError {
    ToolError::new(
        ErrorType::DownloadFailed,
        format!("Saving {} failed: {why}.", destination.display()),
    )
    .retryable("Retry once; nothing was left behind. If it fails again, check the disk space of the download root.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_last_segment() {
        let cases = [
            (
                "https://github.com/o/r/releases/download/v1/tool-1.0.zip",
                "tool-1.0.zip",
            ),
            (
                "https://github.com/o/r/archive/v1.tar.gz?x=1#frag",
                "v1.tar.gz",
            ),
            ("https://github.com/", "download"),
            ("https://github.com/a/my%20file%2Ebin", "my file.bin"),
            ("https://github.com/a/..%2F..%2Fevil", "../../evil"),
            ("https://github.com/a/bad%zz", "bad%zz"),
        ];
        for (url, expected) in cases {
            assert_eq!(
                name_from_url(&url::Url::parse(url).unwrap()),
                expected,
                "{url}"
            );
        }
        // The decoded `../../evil` is then reduced to one component.
        assert_eq!(sanitize_download_name("../../evil").unwrap(), "evil");
    }
}
