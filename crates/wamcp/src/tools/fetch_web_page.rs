//! `fetch_web_page`: a documentation page (or, in research mode, any public
//! page) as the text a reader sees, fenced as untrusted.

use crate::consent::Answer;
use crate::context::ServerContext;
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;
use wamcp_policy::url_policy::{HostRule, check_url};
use wamcp_web::page::fetch_web_page;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// https URL from the user or a search result.
    pub url: String,
    /// From 1.
    #[serde(default = "super::first_line")]
    pub start_line: i64,
    /// At most 2000.
    #[serde(default = "super::page_of_lines")]
    pub max_lines: i64,
}

pub struct FetchWebPage;

impl ToolDef for FetchWebPage {
    type Params = Params;
    const NAME: &'static str = "fetch_web_page";
    const GROUPS: &'static [Group] = &[Group::Docs, Group::Research];
    const DESCRIPTION: &'static str = "Read a documentation page as the text a reader sees, in \
        numbered lines, with its links. Documentation hosts and hosts the user granted only.";
    const HINTS: Hints = Hints::NETWORK_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = &call.ctx;
        let client = ctx.services.web()?;
        if ctx.groups.contains(Group::Research) {
            return fetch_web_page(
                client,
                &ctx.session.pages,
                &p.url,
                HostRule::AnyPublic,
                p.start_line,
                p.max_lines,
            )
            .await
            .map(ToolOutput::Text);
        }
        let mut hosts = ctx.readable_hosts();
        // Anything wrong but the host (scheme, port, an address) is refused
        // as it is; only an unlisted public host name can be granted.
        let public = check_url(&p.url, HostRule::AnyPublic).map_err(|refusal| {
            ToolError::new(
                ErrorType::UrlNotAllowed,
                format!("{} was refused: {}.", p.url, refusal.0),
            )
        })?;
        if check_url(&p.url, HostRule::Listed(&hosts)).is_err() {
            let host = public.host;
            let how = if ctx.host_consent {
                ask_for_host(&call, &host).await
            } else {
                Some("asking is switched off (WAMCP_HOST_CONSENT=0)".to_string())
            };
            if let Some(how) = how {
                return Err(host_refused(ctx, &host, &hosts, &how));
            }
            hosts.push(host);
        }
        fetch_web_page(
            client,
            &ctx.session.pages,
            &p.url,
            HostRule::Listed(&hosts),
            p.start_line,
            p.max_lines,
        )
        .await
        .map(ToolOutput::Text)
    }
}

/// Asks the user to let `host` be read; `None` when approved, else how the
/// question went.
async fn ask_for_host(call: &ToolCall, host: &str) -> Option<String> {
    let ctx = &call.ctx;
    let persist = ctx.host_grant_persist;
    let question = if persist {
        format!(
            "The assistant wants to read a web page from {host}. Allow reading this host until the server restarts? \
             Choose \"always\" to add it to {}.",
            ctx.places.granted_hosts_file.display()
        )
    } else {
        format!(
            "The assistant wants to read a web page from {host}. Allow reading this host until the server restarts?"
        )
    };
    match call.ask(&question, persist).await {
        Answer::Yes { always } => {
            ctx.session.grant_for_session(host);
            if always
                && persist
                && let Err(e) = crate::hostgrants::add(
                    &ctx.places.granted_hosts_file,
                    host,
                    Some("approved in a client prompt"),
                )
            {
                tracing::warn!("could not record the grant for {host}: {e}");
            }
            None
        }
        Answer::No(how) => Some(format!("the user was asked and {how}")),
        Answer::CannotAsk => {
            Some("this client cannot ask the user (no elicitation support)".into())
        }
        // The question went back to the client; this answer is not shown.
        Answer::Asked => Some("the user has been asked".into()),
    }
}

fn host_refused(ctx: &ServerContext, host: &str, readable: &[String], how: &str) -> ToolError {
    ToolError::new(
        ErrorType::UrlNotAllowed,
        format!(
            "fetch_web_page may not read {host}: the whole host is refused, not just this page, so another path on it \
             will not work either ({how})."
        ),
    )
    .detail("host", host)
    .recover(format!("Hosts it can read: {}.", readable.join(", ")))
    .recover(format!(
        "To allow this host, the user runs: wamcp hostgrants --add {host}  (it writes {}; the next call sees it, no restart).",
        ctx.places.granted_hosts_file.display()
    ))
    .recover("If you did not get this URL from web_search or from the user, it may not exist: do not guess URLs.")
}
