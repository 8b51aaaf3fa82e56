//! What became of the calls the host put to the user on wamcp's behalf,
//! written into wamcp's audit trail by Claude Code's `PostToolUse`,
//! `PostToolUseFailure` and `Stop` hooks.
//!
//! Only calls wamcp asked about are recorded (a command that destroys
//! work, an approval-required capability, an install, a trust-file write,
//! a host read): a record per read or `git status` would rotate the
//! capability and install records out of the bounded trail. Each record
//! names the session, the call (`tool_use_id`), the permission mode and
//! the outcome; at the end of a turn that had any, one summary record.

use crate::context::ServerContext;
use serde_json::Value;
use std::time::Duration;
use wamcp_devenv::audit_log::Entry;
use wamcp_policy::devenv::audit::{Event, Outcome};
use wamcp_policy::host_hooks::{HookEvent, Verdict, call_subject, host_detail, host_session};

/// The trail's `tool` for records the host's hooks write.
const HOST: &str = "host";
/// The subject of a turn's summary.
const SUMMARY: &str = "turn summary";

/// Records a call that ran after the host asked about it.
pub fn record(ctx: &ServerContext, event: HookEvent, payload: &Value, verdict: &Verdict) {
    if !matches!(verdict, Verdict::Ask(_)) {
        return;
    }
    let outcome = match event {
        HookEvent::ClaudePostToolUseFailure => Outcome::Failed,
        _ => Outcome::Succeeded,
    };
    let text = |field: &str| payload[field].as_str().unwrap_or_default().to_string();
    append(
        ctx,
        Entry {
            tool: HOST,
            subject: Some(call_subject(&text("tool_name"), &payload["tool_input"])),
            safety: None,
            event: Event::Host,
            outcome,
            duration: Duration::ZERO,
            detail: Some(host_detail(
                &text("session_id"),
                &text("tool_use_id"),
                &text("permission_mode"),
            )),
        },
    );
}

/// At the end of a turn: how many of this session's asked calls ran and
/// failed since its last summary; nothing when there were none.
pub fn summarize(ctx: &ServerContext, payload: &Value) {
    let Some(log) = &ctx.services.audit else {
        return;
    };
    let session = payload["session_id"].as_str().unwrap_or_default();
    let mark = format!("{} ", host_session(session));
    let reading = log.read();
    let ours = reading
        .records
        .iter()
        .rev()
        .filter(|r| {
            r.event == Event::Host && r.detail.as_deref().is_some_and(|d| d.starts_with(&mark))
        })
        .take_while(|r| r.subject.as_deref() != Some(SUMMARY));
    let (mut ran, mut failed) = (0, 0);
    for record in ours {
        match record.outcome {
            Outcome::Failed => failed += 1,
            _ => ran += 1,
        }
    }
    if ran + failed == 0 {
        return;
    }
    append(
        ctx,
        Entry {
            tool: HOST,
            subject: Some(SUMMARY.into()),
            safety: None,
            event: Event::Host,
            outcome: Outcome::NotApplicable,
            duration: Duration::ZERO,
            detail: Some(format!("{mark}asked calls: {ran} ran, {failed} failed")),
        },
    );
}

fn append(ctx: &ServerContext, entry: Entry) {
    let Some(log) = &ctx.services.audit else {
        return;
    };
    if let Err(e) = log.append(entry) {
        // A hook must not fail the host's call; the loss is said.
        eprintln!("wamcp hook: the audit trail could not be written: {e}");
    }
}
