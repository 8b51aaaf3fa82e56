//! `read_file`: a window of a text file, as plain text.

use crate::consent::Answer;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;
use wamcp_policy::text::shown;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Absolute, or relative to the working directory.
    pub path: String,
    /// First line, from 1.
    #[serde(default = "super::first_line")]
    pub start_line: i64,
    /// At most 2000.
    #[serde(default = "super::page_of_lines")]
    pub max_lines: i64,
}

/// Files up to this size read in the ordinary lane: one pass over them
/// takes milliseconds.
const SMALL_FILE_BYTES: u64 = 8 * 1024 * 1024;

pub struct ReadFile;

impl ToolDef for ReadFile {
    type Params = Params;
    const NAME: &'static str = "read_file";
    const GROUPS: &'static [Group] = &[Group::Core];
    const DESCRIPTION: &'static str = "Read a text file's lines, at most 2000 or 256 KiB per \
        call; a longer file ends with the call that reads on.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let cwd = call.ctx.places.cwd.clone();
        let secrets = allowed_secrets(&call, &p.path).await?;
        // Reads of small files have a lane of their own, so long scans of
        // big ones (up to 10 s each) never keep a small read waiting.
        let size = {
            let (path, cwd) = (p.path.clone(), cwd.clone());
            blocking("file sizes", move || Ok(wamcp_fs::size_hint(&path, &cwd))).await?
        };
        let lane = if size.is_some_and(|s| s <= SMALL_FILE_BYTES) {
            Self::NAME
        } else {
            "read_file (large files)"
        };
        // A cancelled or abandoned call stops reading at the next chunk.
        let (asked, gone) = (
            call.request.ct.clone(),
            call.ctx.session.client_gone.clone(),
        );
        blocking(lane, move || {
            let cancelled = move || asked.is_cancelled() || gone.is_cancelled();
            let scan = wamcp_fs::Scan {
                cancelled: &cancelled,
                secrets: &secrets,
                ..wamcp_fs::Scan::default()
            };
            wamcp_fs::read_file_within(&p.path, &cwd, p.start_line, p.max_lines, &scan)
        })
        .await
        .map(ToolOutput::Text)
    }
}

/// The secrets this read is judged against: none when the path is in a
/// secret store and the user allowed this one read, else the server's.
/// A refusal, or no way to ask, is `SECRET_PATH`.
async fn allowed_secrets(call: &ToolCall, raw: &str) -> Result<wamcp_fs::Secrets, ToolError> {
    let secrets = call.ctx.secrets();
    let path = call.ctx.places.cwd.join(raw);
    let (judge, owned) = (secrets.clone(), path.clone());
    let Some(secret) = blocking("file sizes", move || Ok(judge.secret(&owned))).await? else {
        return Ok(secrets);
    };
    let question = format!(
        "The assistant wants to read\n\n    {}\n\nwhich is in {} ({}). Allow this one read?",
        shown(&path.display().to_string()),
        secret.store.display(),
        secret.what
    );
    match call.ask(&question, false).await {
        Answer::Yes { .. } => Ok(wamcp_fs::Secrets::default()),
        Answer::No(how) => Err(wamcp_fs::secret_refusal(raw, &secret, &how)),
        Answer::CannotAsk | Answer::Asked => Err(wamcp_fs::secret_refusal(
            raw,
            &secret,
            "this client cannot ask the user",
        )),
    }
}
