//! `tool_discover`: developer tools on PATH and their versions.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_devenv::discover::discover;
use wamcp_devenv::sources::System;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    All,
    Runtimes,
    Editors,
    PackageManagers,
    Vcs,
}

impl Category {
    fn name(self) -> &'static str {
        match self {
            Category::All => "all",
            Category::Runtimes => "runtimes",
            Category::Editors => "editors",
            Category::PackageManagers => "package_managers",
            Category::Vcs => "vcs",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    #[serde(default = "all")]
    pub category: Category,
}

fn all() -> Category {
    Category::All
}

pub struct ToolDiscover;

impl ToolDef for ToolDiscover {
    type Params = Params;
    const NAME: &'static str = "tool_discover";
    const GROUPS: &'static [Group] = &[Group::Env];
    const DESCRIPTION: &'static str = "Developer tools on PATH (runtimes, editors, package \
        managers, version control) and their versions; one silent for 5 s is unknown, not absent.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let category = p.category.name();
        let system = System::new(call.ctx.program_search());
        blocking(Self::NAME, move || {
            discover(&system, category).ok_or_else(|| {
                ToolError::new(
                    ErrorType::InvalidInput,
                    format!("Unknown category '{category}'."),
                )
                .detail("status", "invalid_input")
            })
        })
        .await
        .map(ToolOutput::Data)
    }
}
