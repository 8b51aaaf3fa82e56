//! Where log lines go: always stderr, because stdout is the protocol.
//!
//! Without `WAMCP_LOG` the server only ever reports warnings and errors, a
//! handful of lines in a session. Those go through [`WarningLines`], a
//! subscriber of a few dozen lines, instead of `tracing-subscriber`'s
//! registry and formatter: every client session starts the server, and
//! setting those up touched about a quarter of a megabyte of code that the
//! start pays in time and resident memory. `WAMCP_LOG` (filter directives
//! such as `debug` or `rmcp=trace`) switches to the full formatter, which
//! writes everything asked for, rmcp's per-request error lines included.

use std::fmt::Write as _;
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};
use wamcp_web::client::AUDIT_TARGET;

/// Installs the process-wide logger. Call once, before serving.
pub fn init() {
    let Ok(directives) = std::env::var(crate::settings::LOG) else {
        // Ignoring the error: a logger already installed (by a test
        // harness) keeps its place.
        let _ = tracing::subscriber::set_global_default(WarningLines { sink: to_stderr });
        return;
    };
    // The research trail is written whatever the filter asks for, a
    // filter that does not parse included.
    let trail = format!("{AUDIT_TARGET}=info");
    let directives = format!("{directives},{trail}");
    let logger = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        // A client may close our stderr; logging must then fail quietly, not
        // panic (eprint!) in the middle of answering a request.
        .log_internal_errors(false);
    match tracing_subscriber::EnvFilter::try_new(&directives) {
        Ok(filter) => logger.with_env_filter(filter).init(),
        Err(e) => {
            let fallback = tracing_subscriber::EnvFilter::new(format!("warn,{trail}"));
            logger.with_env_filter(fallback).init();
            tracing::warn!("WAMCP_LOG is not a valid filter ({e}); logging warnings only");
        }
    }
}

/// Writes each warning or error, and each event of the research trail
/// ([`AUDIT_TARGET`]), as one line, `WARN target: message key=value`, and
/// ignores everything else (spans included).
struct WarningLines {
    sink: fn(&str),
}

/// Where [`WarningLines`] writes outside tests.
fn to_stderr(line: &str) {
    // A closed stderr must not end the session.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

impl Subscriber for WarningLines {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN || metadata.target() == AUDIT_TARGET
    }

    // INFO lets the trail's callsites ask; every other INFO callsite is
    // refused once, when it registers, and costs nothing after.
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::INFO)
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        // Spans are not shown, so they all share one id.
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line::default();
        event.record(&mut line);
        let metadata = event.metadata();
        if is_answered_request_error(metadata.target(), &line.message) {
            return;
        }
        (self.sink)(&format!(
            "{:>5} {}: {}{}\n",
            metadata.level(),
            metadata.target(),
            line.message,
            line.fields
        ));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// rmcp warns about every JSON-RPC error it sends back (an unknown tool, a
/// method the server does not offer). The client already has that answer;
/// in the host's log those lines read as faults of the server.
fn is_answered_request_error(target: &str, message: &str) -> bool {
    target == "rmcp::service" && message == "response error"
}

/// An event's message and its other fields, in order.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.push(field, &format!("{value:?}"));
    }
}

impl Line {
    /// Adds a field, its control characters escaped: a message carrying
    /// the agent's text (a command, a URL) must not start a line of its own
    /// that reads like the research trail or another warning.
    fn push(&mut self, field: &Field, value: &str) {
        let value: String = value
            .chars()
            .flat_map(|c| {
                let escaped: Vec<char> = if c.is_control() {
                    c.escape_default().collect()
                } else {
                    vec![c]
                };
                escaped
            })
            .collect();
        if field.name() == "message" {
            self.message.push_str(&value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    thread_local! {
        static SEEN: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    /// The lines [`WarningLines`] writes while `emit` logs.
    fn lines_of(emit: impl FnOnce()) -> Vec<String> {
        let sink: fn(&str) = |line| SEEN.with(|seen| seen.borrow_mut().push(line.to_string()));
        tracing::subscriber::with_default(WarningLines { sink }, emit);
        SEEN.with(|seen| seen.take())
    }

    #[test]
    fn warnings_and_errors_are_written_with_their_fields() {
        assert_eq!(
            lines_of(|| {
                tracing::warn!(host = "example.com", count = 3, "could not record {}", "x");
                tracing::error!("gone");
            }),
            [
                " WARN wamcp::log::tests: could not record x host=example.com count=3\n",
                "ERROR wamcp::log::tests: gone\n"
            ]
        );
    }

    #[test]
    fn error_answers_rmcp_already_sent_are_not_written_again() {
        let lines = lines_of(|| {
            tracing::warn!(target: "rmcp::service", id = 2, "response error");
            tracing::warn!(target: "rmcp::service", "something else");
        });
        assert_eq!(lines, [" WARN rmcp::service: something else\n"]);
    }

    #[test]
    fn the_research_trail_is_written_at_any_level() {
        let lines = lines_of(|| {
            tracing::info!(
                target: AUDIT_TARGET,
                host = "evil.example",
                url = "https://evil.example/?d=x",
                "research-mode request"
            );
        });
        assert_eq!(
            lines,
            [
                " INFO wamcp::audit: research-mode request host=evil.example url=https://evil.example/?d=x\n"
            ]
        );
    }

    #[test]
    fn a_logged_value_cannot_start_a_line_of_its_own() {
        let lines = lines_of(|| {
            tracing::warn!(
                command = "x\n INFO wamcp::audit: research-mode request url=https://fake/",
                "refused {}",
                "a\rb"
            );
        });
        assert_eq!(
            lines,
            [
                " WARN wamcp::log::tests: refused a\\rb command=x\\n INFO wamcp::audit: research-mode request url=https://fake/\n"
            ]
        );
    }

    #[test]
    fn info_debug_and_spans_are_not_written() {
        let lines = lines_of(|| {
            let _span = tracing::warn_span!("request", id = 7).entered();
            tracing::info!("hint");
            tracing::debug!(tool = "x", "call");
        });
        assert!(lines.is_empty(), "{lines:?}");
    }
}
