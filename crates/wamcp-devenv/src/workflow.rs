//! `workflow_plan`: the route for a task and the four phases around it.

use crate::capability::{Catalog, resolve};
use crate::sources::Sources;
use serde_json::{Value, json};
use std::path::Path;
use wamcp_policy::devenv::routing::{Route, Selection, route};

/// Routes `task` over the catalog and lays out inspect → route → execute →
/// verify. `cwd` is the project directory the execute phase would use.
pub fn plan(
    task: &str,
    context: &str,
    catalog: &Catalog,
    sources: &dyn Sources,
    cwd: &Path,
) -> Value {
    let routed = route(task, context, &catalog.capabilities, |c| {
        resolve(sources, c).map(|r| r.argv[0].clone())
    });
    let Route {
        selection,
        matched,
        selected,
        discriminator,
        candidates,
    } = &routed;
    let chosen = selected
        .as_ref()
        .and_then(|id| catalog.capabilities.iter().find(|c| &c.id == id));
    let execute = match chosen {
        Some(c) => json!({
            "phase": "execute",
            "tool": "capability_run",
            "safety": c.safety,
            "action": format!("Plan '{}' with execute=false, review the argv and executable, then run it with \
                               execute=true and the reviewed identity.", c.id),
            "call": {"capability": c.id, "cwd": cwd.display().to_string(), "execute": false},
        }),
        None => json!({
            "phase": "execute",
            "tool": "capability_run",
            "safety": "unresolved",
            "action": "Nothing to run until the route is resolved.",
        }),
    };
    let verify = match chosen {
        Some(c) => format!(
            "Read the run's status and output; run '{}' again (or inspect-git for changed files) to confirm the \
             effect rather than trusting the exit code alone.",
            c.id
        ),
        None => "Nothing to verify yet.".to_string(),
    };
    json!({
        "status": "planned",
        "task": task,
        "selection_status": selection,
        "matched_candidate": matched,
        "selected_candidate": selected,
        "route_discriminator": discriminator,
        "phases": [
            {"phase": "inspect", "tool": "env_inspect", "safety": "read-only",
             "action": "Confirm the machine has what the route needs (runtimes, package managers, isolation)."},
            {"phase": "route", "tool": "workflow_plan", "safety": "read-only",
             "action": route_action(*selection)},
            execute,
            {"phase": "verify", "safety": "read-only", "action": verify},
        ],
        "candidate_capabilities": candidates,
        "catalog_errors": catalog.errors,
    })
}

fn route_action(selection: Selection) -> &'static str {
    match selection {
        Selection::Selected => "One capability matches the task best and is installed.",
        Selection::Ambiguous => {
            "Capabilities tie; ask the user which one, or restate the task with its id or a tag."
        }
        Selection::MatchedUnavailable => {
            "The best match is not installed; offer to install it, or ask for another route. Do not fall back \
             to a weaker match silently."
        }
        Selection::NoMatch => "No capability fits; say so rather than improvising a command.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::System;

    #[test]
    fn the_plan_carries_the_route_every_candidate_and_four_phases() {
        let catalog = Catalog::load(None);
        let cwd = std::env::temp_dir();
        let git_here = System::default().program("git").is_some();
        let p = plan("show git status", "", &catalog, &System::default(), &cwd);
        assert_eq!(p["candidate_capabilities"].as_array().unwrap().len(), 7);
        let phases: Vec<&str> = p["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["phase"].as_str().unwrap())
            .collect();
        assert_eq!(phases, ["inspect", "route", "execute", "verify"]);
        assert_eq!(p["matched_candidate"], "inspect-git");
        if git_here {
            assert_eq!(p["selection_status"], "selected");
            assert_eq!(p["phases"][2]["safety"], "read-only");
            assert_eq!(p["phases"][2]["call"]["capability"], "inspect-git");
        } else {
            assert_eq!(p["selection_status"], "matched_unavailable");
            assert_eq!(p["phases"][2]["safety"], "unresolved");
        }
        let none = plan("run the tests", "", &catalog, &System::default(), &cwd);
        assert_eq!(none["selection_status"], "no_match");
        assert_eq!(none["selected_candidate"], Value::Null);
        assert_eq!(none["phases"][2]["safety"], "unresolved");
        assert!(
            none["route_discriminator"]
                .as_str()
                .unwrap()
                .contains("generic")
        );
    }
}
