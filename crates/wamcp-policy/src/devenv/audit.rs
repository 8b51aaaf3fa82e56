//! The audit trail's records: what an execution-capable call did, as
//! metadata only, chained by hash so an edited or removed record shows.
//!
//! A record never holds a raw command, argument or output: the trail is for
//! a person asking "what ran, and did it work", and it must be safe to show
//! them (and to keep) whatever the commands carried.

use super::safety::Safety;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What a call established about its effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The result shows the run succeeded.
    Succeeded,
    /// The result shows the run failed.
    Failed,
    /// Something may have started, and what it did is not established (a
    /// timeout, a launch without a way to observe the result).
    Unknown,
    /// Nothing ran: a plan, a refusal, bad input, a failure before launch.
    NotExecuted,
    /// An event without an execution (an approval asked and answered).
    NotApplicable,
}

impl Outcome {
    /// The outcome of a process run: a started run that was killed at its
    /// timeout is `Unknown`, never `Failed` — its children may already have
    /// changed things.
    pub fn of_run(exit_code: Option<i32>, timed_out: bool) -> Outcome {
        match (timed_out, exit_code) {
            (true, _) | (false, None) => Outcome::Unknown,
            (false, Some(0)) => Outcome::Succeeded,
            (false, Some(_)) => Outcome::Failed,
        }
    }
}

/// What kind of event a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// A tool ran (or tried to run) something: a
    /// capability, a package search or install, a sandbox.
    Execution,
    /// The user was asked to approve a run, and what they answered.
    Approval,
    /// What became of a call the host put to the user on wamcp's behalf
    /// (written by the host's hooks), and a session's summary of them.
    Host,
}

/// One line of the trail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The record's number in the trail, 1 for the first ever written.
    pub seq: u64,
    /// UTC, RFC 3339, seconds.
    pub time: String,
    /// The tool that was called (`capability_run`, `package_install`).
    pub tool: String,
    /// The capability or package id, when the call named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The safety class of what ran, when the call had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety: Option<Safety>,
    /// Whether the record is a run, an approval or a host's outcome.
    pub event: Event,
    /// What the call established about its effect.
    pub outcome: Outcome,
    /// How long the call took, in milliseconds.
    pub duration_ms: u64,
    /// A short fixed phrase (`exit code 2`, `timed out`, `approval
    /// declined`), never program output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// SHA-256 of the previous record's line, hex.
    pub prev: String,
}

/// `prev` of the first record ever written.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The hash the next record carries as `prev`.
pub fn line_hash(line: &str) -> String {
    Sha256::digest(line.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The `logs_query` filters. `failures` admits failed runs and started
/// runs whose effect is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::schema::names_only)]
pub enum Filter {
    /// Every record.
    All,
    /// Failed runs, and started runs whose effect is unknown.
    Failures,
    /// `package_install` records.
    Installs,
    /// `sandbox_run` records.
    Sandbox,
    /// Questions put to the user (by wamcp or
    /// the host), and runs that needed approval.
    Approvals,
}

impl Filter {
    /// Whether the filter keeps `r`.
    pub fn admits(self, r: &Record) -> bool {
        match self {
            Filter::All => true,
            Filter::Failures => matches!(r.outcome, Outcome::Failed | Outcome::Unknown),
            Filter::Installs => r.tool == "package_install",
            Filter::Sandbox => r.tool == "sandbox_run",
            Filter::Approvals => {
                matches!(r.event, Event::Approval | Event::Host)
                    || r.safety == Some(Safety::ApprovalRequired)
            }
        }
    }
}

/// The trail as read back: records in order and what the chain shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Every line that parsed as a record, oldest first.
    pub records: Vec<Record>,
    /// Breaks in the chain, each naming where.
    pub problems: Vec<String>,
}

/// Checks the chain over `lines` (oldest segment first). The first
/// retained record may follow one that rotation dropped; every later one
/// must follow its predecessor exactly.
pub fn read_chain<'a>(lines: impl IntoIterator<Item = (&'a str, &'a str)>) -> Reading {
    let mut reading = Reading::default();
    let mut previous: Option<(u64, String)> = None;
    for (segment, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let record: Record = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(_) => {
                reading.problems.push(format!(
                    "{segment}: a line is not a record (after seq {})",
                    previous.as_ref().map_or(0, |p| p.0)
                ));
                previous = None;
                continue;
            }
        };
        match &previous {
            Some((seq, hash)) if record.seq != seq + 1 || &record.prev != hash => {
                reading.problems.push(format!(
                    "{segment}: record {} does not follow record {seq}: records were edited, removed or inserted",
                    record.seq
                ));
            }
            None if record.seq == 1 && record.prev != GENESIS => {
                reading
                    .problems
                    .push(format!("{segment}: record 1 does not start the chain"));
            }
            _ => {}
        }
        previous = Some((record.seq, line_hash(line)));
        reading.records.push(record);
    }
    reading
}

/// `seconds` since the Unix epoch as RFC 3339 UTC.
pub fn rfc3339(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u64, prev: &str, outcome: Outcome) -> String {
        serde_json::to_string(&Record {
            seq,
            time: rfc3339(1_700_000_000 + seq),
            tool: "capability_run".into(),
            subject: Some("inspect-git".into()),
            safety: Some(Safety::ReadOnly),
            event: Event::Execution,
            outcome,
            duration_ms: 5,
            detail: None,
            prev: prev.into(),
        })
        .unwrap()
    }

    fn chain(n: u64) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        for seq in 1..=n {
            let prev = lines.last().map_or(GENESIS.to_string(), |l| line_hash(l));
            lines.push(record(seq, &prev, Outcome::Succeeded));
        }
        lines
    }

    fn read(lines: &[String]) -> Reading {
        read_chain(lines.iter().map(|l| ("agent.log", l.as_str())))
    }

    #[test]
    fn run_outcomes_keep_uncertainty() {
        assert_eq!(Outcome::of_run(Some(0), false), Outcome::Succeeded);
        assert_eq!(Outcome::of_run(Some(3), false), Outcome::Failed);
        assert_eq!(Outcome::of_run(None, false), Outcome::Unknown);
        assert_eq!(Outcome::of_run(Some(0), true), Outcome::Unknown);
        assert_eq!(Outcome::of_run(None, true), Outcome::Unknown);
    }

    #[test]
    fn an_intact_chain_reads_clean_even_after_rotation_dropped_its_start() {
        let lines = chain(5);
        assert_eq!(read(&lines).problems, Vec::<String>::new());
        assert_eq!(read(&lines).records.len(), 5);
        assert_eq!(read(&lines[2..]).problems, Vec::<String>::new());
    }

    #[test]
    fn edits_removals_insertions_and_a_forged_start_are_reported() {
        let lines = chain(4);
        let mut edited = lines.clone();
        edited[1] = edited[1].replace("\"succeeded\"", "\"failed\"");
        let mut removed = lines.clone();
        removed.remove(2);
        let mut inserted = lines.clone();
        inserted.insert(2, record(3, &line_hash(&lines[1]), Outcome::Failed));
        let mut forged = lines.clone();
        forged[0] = record(1, &line_hash("x"), Outcome::Succeeded);
        let mut garbage = lines.clone();
        garbage.insert(1, "not json".into());
        for (name, lines, want) in [
            ("edited", edited, "record 3 does not follow record 2"),
            ("removed", removed, "record 4 does not follow record 2"),
            ("inserted", inserted, "record 3 does not follow record 3"),
            ("forged", forged, "record 1 does not start the chain"),
            ("garbage", garbage, "a line is not a record (after seq 1)"),
        ] {
            let problems = read(&lines).problems;
            assert!(
                problems.iter().any(|p| p.contains(want)),
                "{name}: {problems:?}"
            );
        }
    }

    #[test]
    fn filters() {
        let base: Record = serde_json::from_str(&record(1, GENESIS, Outcome::Succeeded)).unwrap();
        let with = |f: &dyn Fn(&mut Record)| {
            let mut r = base.clone();
            f(&mut r);
            r
        };
        let failed = with(&|r| r.outcome = Outcome::Failed);
        let unknown = with(&|r| r.outcome = Outcome::Unknown);
        let approval = with(&|r| {
            r.event = Event::Approval;
            r.outcome = Outcome::NotApplicable
        });
        let install = with(&|r| r.tool = "package_install".into());
        assert!(Filter::All.admits(&base));
        assert!(!Filter::Failures.admits(&base));
        assert!(Filter::Failures.admits(&failed) && Filter::Failures.admits(&unknown));
        assert!(Filter::Approvals.admits(&approval) && !Filter::Approvals.admits(&base));
        assert!(Filter::Installs.admits(&install) && !Filter::Installs.admits(&base));
        assert!(!Filter::Sandbox.admits(&base));
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_061_661), "2026-11-30T18:01:01Z");
    }
}
