//! Every size, count and time limit in one place.
//!
//! Limits are constants, not settings: a limit that a prompt-injected model
//! could talk a user into raising is not a limit. Tools, docs and
//! `get_server_info` all read them from here.

/// One kibibyte, 1024 bytes; the unit the byte limits below are written in.
pub const KIB: u64 = 1024;
/// One mebibyte, 1024 KiB.
pub const MIB: u64 = 1024 * KIB;

/// Largest response body `fetch_https_response` accepts.
pub const MAX_HTTP_BYTES: u64 = 2 * MIB;
/// Largest file `download_file` accepts, declared or streamed.
pub const MAX_DOWNLOAD_BYTES: u64 = 500 * MIB;
/// Longest file name `download_file` writes.
pub const MAX_FILENAME_LENGTH: usize = 180;
/// Longest URL any fetching tool accepts.
pub const MAX_URL_CHARS: usize = 4096;
/// Seconds a whole page or API request may take, redirects and body included.
pub const HTTP_TIMEOUT_SECONDS: u64 = 20;
/// Seconds a download may go without receiving a byte before it fails.
pub const DOWNLOAD_TIMEOUT_SECONDS: u64 = 60;

/// `run_powershell`: default and clamp range of `timeout_seconds`.
pub const POWERSHELL_TIMEOUT_SECONDS: u64 = 300;
/// The largest `timeout_seconds` `run_powershell`
/// accepts; larger requests are clamped.
pub const MAX_POWERSHELL_TIMEOUT_SECONDS: u64 = 600;
/// Longest command string `run_powershell` accepts.
pub const MAX_COMMAND_CHARS: usize = 4000;
/// `build_project`: default and clamp range of `timeout_seconds`.
pub const BUILD_TIMEOUT_SECONDS: u64 = 600;
/// The largest `timeout_seconds` `build_project`
/// accepts; larger requests are clamped.
pub const MAX_BUILD_TIMEOUT_SECONDS: u64 = 1800;
/// Seconds one shader compiler run may take before it is killed.
pub const SHADER_TIMEOUT_SECONDS: u64 = 60;
/// Bytes of each output stream kept from a child process.
pub const MAX_PROCESS_OUTPUT_BYTES: usize = 64 * KIB as usize;

/// `read_file`: lines and bytes returned per call.
pub const DEFAULT_READ_LINES: usize = 2000;
/// Bytes of text one `read_file` call returns at most.
pub const MAX_READ_BYTES: usize = 256 * KIB as usize;
/// How long one `read_file` may read (to its window, then counting the
/// lines after it): a sparse file is terabytes of zeros for free.
pub const READ_SCAN_SECONDS: u64 = 10;
/// How much after the window `read_file` reads to count the file's lines;
/// past it the answer says "more than N".
pub const MAX_COUNT_BYTES: u64 = 256 * MIB;
/// Entries `list_directory` shows; past it the listing says it is incomplete.
pub const MAX_DIRECTORY_ENTRIES: usize = 1000;
/// Empty directories `list_empty_dirs` shows;
/// past it the list says it is incomplete.
pub const MAX_EMPTY_DIR_RESULTS: usize = 1000;
/// The largest `max_results` `find_files` accepts; larger requests are clamped.
pub const MAX_FIND_RESULTS: usize = 500;
/// The largest `max_results` `search_files`
/// accepts; larger requests are clamped.
pub const MAX_SEARCH_MATCHES: usize = 100;
/// Bytes of one file `search_files` reads.
pub const MAX_GREP_FILE_BYTES: u64 = MIB;
/// Seconds a walk or search may take unless `WAMCP_SEARCH_BUDGET_SECONDS`
/// says otherwise: enough for ripgrep's crates to search a few hundred
/// thousand files, short enough that a model is not left waiting.
pub const DEFAULT_SEARCH_BUDGET_SECONDS: u64 = 10;
/// The largest budget the setting accepts.
pub const MAX_SEARCH_BUDGET_SECONDS: u64 = 600;
/// Characters of a matched line shown by `search_files`.
pub const MAX_MATCH_LINE_CHARS: usize = 300;
/// Largest content `write_file` writes in one call.
pub const MAX_WRITE_BYTES: usize = 2 * MIB as usize;
/// Largest file `edit_file` edits, before and after the edit. Larger than
/// the write cap: a big source file must stay editable in place.
pub const MAX_EDIT_BYTES: usize = 8 * MIB as usize;

/// Largest page body `fetch_web_page` reads before extracting its text.
pub const MAX_PAGE_BYTES: u64 = 2 * MIB;
/// Outbound links listed after a fetched page's text.
pub const MAX_PAGE_LINKS: usize = 20;
/// Seconds a fetched page stays cached, so
/// paging through it does not fetch it again.
pub const PAGE_CACHE_SECONDS: u64 = 300;
/// Fetched pages kept in the cache; the oldest is dropped to make room.
pub const PAGE_CACHE_ENTRIES: usize = 8;
/// `web_search`: default and clamp range of `max_results`.
pub const DEFAULT_WEB_RESULTS: usize = 5;
/// The largest `max_results` `web_search` accepts; larger requests are clamped.
pub const MAX_WEB_RESULTS: usize = 10;
/// Longest `web_search` query, in characters.
pub const MAX_SEARCH_QUERY_CHARS: usize = 400;
/// Characters kept of each search result's title and snippet.
pub const MAX_SEARCH_FIELD_CHARS: usize = 300;
/// Seconds the user has to answer a consent
/// question before it counts as declined.
pub const CONSENT_TIMEOUT_SECONDS: u64 = 120;

/// Build reports: unique diagnostics listed, notes per diagnostic, characters
/// per message, and raw lines shown when nothing could be parsed.
pub const MAX_REPORTED_ERRORS: usize = 20;
/// Unique warnings a build report lists.
pub const MAX_REPORTED_WARNINGS: usize = 10;
/// Notes kept under each diagnostic in a build report.
pub const MAX_NOTES_PER_DIAGNOSTIC: usize = 2;
/// Characters kept of each diagnostic's message.
pub const MAX_DIAGNOSTIC_CHARS: usize = 500;
/// Lines of raw output shown when no diagnostic could be parsed.
pub const RAW_TAIL_LINES: usize = 25;

/// Largest configuration or grants file read at start-up; anything bigger is
/// not a hand-edited config and is reported rather than parsed.
pub const MAX_CONFIG_FILE_BYTES: u64 = 2 * MIB;

/// Clamps a requested count or duration into `1..=max`, reporting whether the
/// request was changed so the tool can say so.
pub fn clamp_request(requested: i64, max: u64) -> (u64, bool) {
    let clamped = requested.clamp(1, max.min(i64::MAX as u64) as i64) as u64;
    (clamped, clamped as i64 != requested)
}

#[cfg(test)]
mod tests {
    use super::clamp_request;

    #[test]
    fn clamp_table() {
        assert_eq!(clamp_request(50, 100), (50, false));
        assert_eq!(clamp_request(100, 100), (100, false));
        assert_eq!(clamp_request(101, 100), (100, true));
        assert_eq!(clamp_request(0, 100), (1, true));
        assert_eq!(clamp_request(-7, 100), (1, true));
        assert_eq!(clamp_request(i64::MAX, 600), (600, true));
        assert_eq!(clamp_request(i64::MIN, 600), (1, true));
    }
}
