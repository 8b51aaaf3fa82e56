//! Asking the user a yes/no question through MCP elicitation, in both
//! protocol eras.
//!
//! In a handshake session (up to 2025-11-25) the server sends the client an
//! `elicitation/create` request and waits for the answer. In the stateless
//! 2026-07-28 era a server may not send requests; the tool call instead
//! returns an input-required result carrying the question and a sealed
//! state, and the client calls again with the answer and the state. The
//! seal binds the answer to this tool, these arguments and this question,
//! so an approval given for one command cannot be replayed for another.

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputRequiredResult, InputResponses, ProtocolVersion,
};
use rmcp::service::ElicitationError;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long the user has to answer in a handshake session.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(wamcp_policy::limits::CONSENT_TIMEOUT_SECONDS);
/// The key of our question in the input-request map.
const QUESTION_KEY: &str = "wamcp_consent";

/// What the user said, or why they could not be asked.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// Approved; `always` when the user also chose to remember it (only
    /// offered when the caller asked for that option).
    Yes { always: bool },
    /// Declined, cancelled, or timed out; says which.
    No(String),
    /// The client cannot ask (no elicitation capability).
    CannotAsk,
    /// Stateless era: the question went back to the client with this
    /// result; the tool call ends now and is repeated with the answer.
    Asked,
}

#[derive(Deserialize, JsonSchema)]
struct Approval {
    allow: bool,
}

#[derive(Deserialize, JsonSchema)]
struct ApprovalOrAlways {
    allow: bool,
    /// Remember this answer from now on (kept in wamcp's own files, outside
    /// the project).
    #[serde(default)]
    always: bool,
}

rmcp::elicit_safe!(Approval, ApprovalOrAlways);

/// What a retried stateless call brought back, and where a new question
/// is left for the server to return.
#[derive(Default)]
pub struct Exchange {
    pub responses: Option<InputResponses>,
    pub state: Option<String>,
    /// Tool name and arguments, as sent; part of the seal.
    pub call_identity: String,
    /// Whether the host already asked the user about this call.
    pub host: crate::host_approvals::HostAnswer,
    pub pending: Arc<Mutex<Option<InputRequiredResult>>>,
}

/// Asks `question` in whichever way this request's era allows; with
/// `offer_always` the form also has an "always" choice.
pub async fn ask(
    request: &rmcp::service::RequestContext<rmcp::RoleServer>,
    exchange: &Exchange,
    question: &str,
    offer_always: bool,
) -> Answer {
    let can_elicit = request
        .client_capabilities()
        .is_some_and(|c| c.elicitation.is_some());
    if !can_elicit {
        return Answer::CannotAsk;
    }
    let stateless = request
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    if stateless {
        return ask_stateless(exchange, question, offer_always);
    }
    let answer = if offer_always {
        request
            .peer
            .elicit_with_timeout::<ApprovalOrAlways>(question, Some(ANSWER_TIMEOUT))
            .await
            .map(|a| a.map(|a| (a.allow, a.always)))
    } else {
        request
            .peer
            .elicit_with_timeout::<Approval>(question, Some(ANSWER_TIMEOUT))
            .await
            .map(|a| a.map(|a| (a.allow, false)))
    };
    match answer {
        Ok(Some((true, always))) => Answer::Yes { always },
        Ok(_) | Err(ElicitationError::UserDeclined) => Answer::No("the user declined".into()),
        Err(ElicitationError::UserCancelled) => Answer::No("the user cancelled".into()),
        Err(ElicitationError::CapabilityNotSupported) => Answer::CannotAsk,
        Err(e) => Answer::No(format!("the question could not be asked: {e}")),
    }
}

fn ask_stateless(exchange: &Exchange, question: &str, offer_always: bool) -> Answer {
    let seal = seal(&exchange.call_identity, question);
    if let (Some(responses), Some(state)) = (&exchange.responses, &exchange.state)
        && *state == seal
    {
        return match responses
            .get(QUESTION_KEY)
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
        {
            Some(result) if approves(&result) => Answer::Yes {
                always: offer_always && flag(&result, "always"),
            },
            Some(result) if result.action == ElicitationAction::Cancel => {
                Answer::No("the user cancelled".into())
            }
            _ => Answer::No("the user declined".into()),
        };
    }
    let mut builder = ElicitationSchema::builder().required_bool("allow");
    if offer_always {
        builder = builder.optional_bool("always", false);
    }
    let Ok(schema) = builder.build() else {
        return Answer::CannotAsk;
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.to_string(),
        requested_schema: schema,
    };
    let mut requests = InputRequests::new();
    requests.insert(
        QUESTION_KEY.to_string(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    let result = InputRequiredResult::new(Some(requests), Some(seal));
    *exchange.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    Answer::Asked
}

fn approves(result: &ElicitResult) -> bool {
    result.action == ElicitationAction::Accept && flag(result, "allow")
}

fn flag(result: &ElicitResult, name: &str) -> bool {
    result
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .and_then(|a| a.as_bool())
        == Some(true)
}

/// A keyed hash (SipHash with a key drawn at start-up) of the call and the
/// question: a client can echo it, not forge one for another call.
fn seal(call_identity: &str, question: &str) -> String {
    static KEY: OnceLock<RandomState> = OnceLock::new();
    let mut hasher = KEY.get_or_init(RandomState::new).build_hasher();
    hasher.write(call_identity.as_bytes());
    hasher.write_u8(0);
    hasher.write(question.as_bytes());
    format!("wamcp-consent-{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exchange(
        identity: &str,
        state: Option<String>,
        answer: Option<serde_json::Value>,
    ) -> Exchange {
        Exchange {
            responses: answer.map(|a| InputResponses::from([(QUESTION_KEY.to_string(), a)])),
            state,
            call_identity: identity.into(),
            ..Exchange::default()
        }
    }

    #[test]
    fn a_first_call_asks_and_a_sealed_retry_is_answered() {
        let first = exchange("run_powershell {\"command\":\"git push\"}", None, None);
        assert_eq!(ask_stateless(&first, "Run git push?", false), Answer::Asked);
        let pending = first.pending.lock().unwrap().take().unwrap();
        let state = pending.request_state.clone().unwrap();

        let accept = json!({"action": "accept", "content": {"allow": true}});
        let retry = exchange(
            "run_powershell {\"command\":\"git push\"}",
            Some(state.clone()),
            Some(accept.clone()),
        );
        assert_eq!(
            ask_stateless(&retry, "Run git push?", false),
            Answer::Yes { always: false }
        );

        let refuse = json!({"action": "accept", "content": {"allow": false}});
        let retry = exchange(
            "run_powershell {\"command\":\"git push\"}",
            Some(state.clone()),
            Some(refuse),
        );
        assert_eq!(
            ask_stateless(&retry, "Run git push?", false),
            Answer::No("the user declined".into())
        );

        let cancel = json!({"action": "cancel"});
        let retry = exchange(
            "run_powershell {\"command\":\"git push\"}",
            Some(state.clone()),
            Some(cancel),
        );
        assert_eq!(
            ask_stateless(&retry, "Run git push?", false),
            Answer::No("the user cancelled".into())
        );

        // The same approval and state for other arguments: asked again.
        let other = exchange(
            "run_powershell {\"command\":\"git push --force\"}",
            Some(state),
            Some(accept),
        );
        assert_eq!(
            ask_stateless(&other, "Run git push --force?", false),
            Answer::Asked
        );
    }

    #[test]
    fn a_forged_state_is_not_an_answer() {
        let accept = json!({"action": "accept", "content": {"allow": true}});
        let forged = exchange(
            "t {}",
            Some("wamcp-consent-0000000000000000".into()),
            Some(accept),
        );
        assert_eq!(ask_stateless(&forged, "q", false), Answer::Asked);
    }
}
