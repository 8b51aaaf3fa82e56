//! Windows: a write-restricted token whose restricting SIDs are wamcp's
//! capability SID and the logon SID, with access entries for the
//! capability on the writable set (see the policy crate's `token_plan`).

use super::Support;

pub fn support() -> Support {
    Support {
        mechanism: Some("restricted-token".into()),
        detail: "a write-restricted token with a capability SID granted on the writable set; Wine does not \
                 enforce access lists, so wamcp's own tests verify the plan and that commands run under the \
                 token, not that Windows refuses the writes"
            .into(),
    }
}
