//! `logs_query`: the audit trail, newest last, with what its chain shows.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wamcp_policy::devenv::audit::Filter;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

const MAX_LAST_N: i64 = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Newest matching records, 1-200.
    #[serde(default = "twenty")]
    pub last_n: i64,
    /// failures = failed or unknown outcome.
    #[serde(default = "everything")]
    pub filter: Filter,
}

fn twenty() -> i64 {
    20
}

fn everything() -> Filter {
    Filter::All
}

pub struct LogsQuery;

impl ToolDef for LogsQuery {
    type Params = Params;
    const NAME: &'static str = "logs_query";
    const GROUPS: &'static [Group] = &[Group::Env];
    const DESCRIPTION: &'static str = "The audit trail of capability runs: what ran, safety \
        class, outcome, duration (never commands or output), and whether records were altered.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        if !(1..=MAX_LAST_N).contains(&p.last_n) {
            return Err(ToolError::new(
                ErrorType::InvalidInput,
                format!("last_n must be 1-{MAX_LAST_N} (got {}).", p.last_n),
            )
            .recover("Pick a number in range.")
            .detail("status", "invalid_input"));
        }
        let Some(log) = call.ctx.services.audit.clone() else {
            return Err(ToolError::new(
                ErrorType::ConfigurationError,
                "There is no per-user data directory, so no audit trail is kept.",
            )
            .detail("status", "configuration_error"));
        };
        let ctx = call.ctx.clone();
        blocking(Self::NAME, move || {
            let mut reading = log.read();
            let places = ctx.places.command_writable_places();
            let dir = dunce::canonicalize(log.dir()).unwrap_or_else(|_| log.dir().to_path_buf());
            if let Some(place) = places.iter().find(|p| dir.starts_with(p)) {
                reading.problems.push(format!(
                    "the trail is inside {}, where commands can write: its records prove nothing",
                    place.display()
                ));
            }
            // Rotation keeps two segments: a flood of calls pushes older
            // records out, and the sequence numbers show how many.
            let dropped = reading
                .records
                .first()
                .map_or(0, |r| r.seq.saturating_sub(1));
            let matching: Vec<_> = reading
                .records
                .iter()
                .filter(|r| p.filter.admits(r))
                .collect();
            let shown = &matching[matching.len().saturating_sub(p.last_n as usize)..];
            Ok(json!({
                "status": "ok",
                "filter": p.filter,
                "retained_records": reading.records.len(),
                "rotated_out_records": dropped,
                "matching_records": matching.len(),
                "records": shown,
                "chain_intact": reading.problems.is_empty(),
                "chain_problems": reading.problems,
                "log_dir": log.dir().display().to_string(),
            }))
        })
        .await
        .map(ToolOutput::Data)
    }
}
