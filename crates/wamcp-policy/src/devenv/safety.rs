//! Safety classes of a capability, and the class a call actually has.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How much a capability may change, in rising order of authority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Safety {
    /// Reads state and changes nothing.
    ReadOnly,
    /// Changes only what can be undone (build outputs, caches).
    Reversible,
    /// Changes something a person must agree to first.
    ApprovalRequired,
    /// Never runs.
    Forbidden,
}

impl Safety {
    /// The class as the catalog and the tools spell it (`read-only`).
    pub fn name(self) -> &'static str {
        match self {
            Safety::ReadOnly => "read-only",
            Safety::Reversible => "reversible",
            Safety::ApprovalRequired => "approval-required",
            Safety::Forbidden => "forbidden",
        }
    }

    /// The class of a call with caller-supplied arguments: the catalog
    /// reviewed the capability's own argv, not what a model appends to it
    /// (`git status` plus `--output=/etc/x` is a different program run), so
    /// any extra argument needs a person's approval. Forbidden stays
    /// forbidden.
    pub fn with_extra_args(self, extra_args: bool) -> Safety {
        if extra_args && self < Safety::ApprovalRequired {
            Safety::ApprovalRequired
        } else {
            self
        }
    }
}

impl fmt::Display for Safety {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_arguments_raise_every_class_below_approval_and_never_lower_one() {
        let cases = [
            (Safety::ReadOnly, false, Safety::ReadOnly),
            (Safety::ReadOnly, true, Safety::ApprovalRequired),
            (Safety::Reversible, true, Safety::ApprovalRequired),
            (Safety::ApprovalRequired, true, Safety::ApprovalRequired),
            (Safety::Forbidden, true, Safety::Forbidden),
            (Safety::Forbidden, false, Safety::Forbidden),
        ];
        for (base, extra, want) in cases {
            assert_eq!(base.with_extra_args(extra), want, "{base} extra={extra}");
        }
    }

    #[test]
    fn names_round_trip_and_serde_agrees() {
        for s in [
            Safety::ReadOnly,
            Safety::Reversible,
            Safety::ApprovalRequired,
            Safety::Forbidden,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(
                serde_json::from_value::<Safety>(s.name().into()).unwrap(),
                s
            );
        }
        assert!(serde_json::from_value::<Safety>("Read-Only".into()).is_err());
    }
}
