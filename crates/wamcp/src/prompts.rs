//! The plugin's six skills, served as MCP prompts too, so that clients
//! without plugins (VS Code, Cursor, any stdio or HTTP client) offer the
//! same procedures: `prompts/list` names them with their descriptions,
//! `prompts/get` returns a skill's text as one user message.
//!
//! The files are built into the binary, so it needs nothing beside it; a
//! test checks that every skill folder is served and every tool a skill
//! names exists.

use rmcp::model::{GetPromptResult, Prompt, PromptMessage, Role};

/// Each skill's name (its folder) and its `SKILL.md`.
pub const SKILLS: &[(&str, &str)] = &[
    (
        "env-inspect",
        include_str!("../../../skills/env-inspect/SKILL.md"),
    ),
    (
        "workflow-plan",
        include_str!("../../../skills/workflow-plan/SKILL.md"),
    ),
    (
        "package-install",
        include_str!("../../../skills/package-install/SKILL.md"),
    ),
    (
        "sandbox-run",
        include_str!("../../../skills/sandbox-run/SKILL.md"),
    ),
    (
        "win-setup",
        include_str!("../../../skills/win-setup/SKILL.md"),
    ),
    (
        "ecosystem-defrag",
        include_str!("../../../skills/ecosystem-defrag/SKILL.md"),
    ),
];

/// A skill file split into its front matter's description and its body.
fn parts(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return (None, text);
    };
    let Some((front, body)) = rest.split_once("\n---\n") else {
        return (None, text);
    };
    let description = front
        .lines()
        .find_map(|line| line.strip_prefix("description:"))
        .map(str::trim);
    (description, body.trim_start_matches('\n'))
}

/// The prompts, in the order of [`SKILLS`].
pub fn list() -> Vec<Prompt> {
    SKILLS
        .iter()
        .map(|(name, text)| Prompt::new(*name, parts(text).0, None))
        .collect()
}

/// The prompt called `name`: the skill's body as a user message.
pub fn get(name: &str) -> Option<GetPromptResult> {
    let (_, text) = SKILLS.iter().find(|(skill, _)| *skill == name)?;
    let (description, body) = parts(text);
    let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, body)]);
    Some(match description {
        Some(d) => result.with_description(d),
        None => result,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_skill_folder_is_served_with_its_own_name() {
        let dir = format!(
            "{}/../../skills",
            std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo test")
        );
        let mut folders: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        folders.sort();
        let mut served: Vec<String> = SKILLS.iter().map(|(n, _)| n.to_string()).collect();
        served.sort();
        assert_eq!(served, folders);
        for (name, text) in SKILLS {
            assert!(text.contains(&format!("\nname: {name}\n")), "{name}");
            let (description, body) = parts(text);
            assert!(description.is_some_and(|d| d.len() > 20), "{name}");
            assert!(body.starts_with("# "), "{name}: {body}");
        }
    }

    #[test]
    fn a_prompt_is_the_skill_body_and_an_unknown_one_is_none() {
        let got = get("env-inspect").unwrap();
        assert_eq!(got.messages.len(), 1);
        let text = serde_json::to_value(&got.messages[0]).unwrap();
        assert_eq!(text["role"], "user");
        assert!(
            text["content"]["text"]
                .as_str()
                .unwrap()
                .starts_with("# Inspect the development environment")
        );
        assert!(get("no-such-skill").is_none());
        assert_eq!(list().len(), SKILLS.len());
    }
}
