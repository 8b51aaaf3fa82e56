//! Tool groups: which tools a session registers.
//!
//! Groups follow trust, not topic: `edit` and `build` are separate so that
//! "build and review, but do not touch my files" can be expressed; `docs` only
//! reads into context while `net` writes bytes to disk; `search` may run a web
//! search while `research` also lets the page reader reach any public host.
//!
//! Parsing never fails. A bad value degrades to the default set and carries a
//! message, because an aborted start-up reaches the user as an opaque
//! "connection failed" in their MCP client, while a message in
//! `get_server_info` is something the model can read back to them.

use std::fmt;

/// One trust group. The declaration order is the canonical order used in every
/// list the server prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// Reading and searching files, and describing
    /// the server and the machine; always on.
    Core,
    /// Changing files: `write_file` and `edit_file`.
    Edit,
    /// Running checked commands: builds, shader
    /// compilers, capabilities, `run_powershell`.
    Build,
    /// Reading pages from the documentation
    /// hosts into context (`fetch_web_page`).
    Docs,
    /// Downloads and raw HTTPS from the network
    /// hosts, which write bytes to disk.
    Net,
    /// The development-environment agent's inspection
    /// and planning tools, and the audit trail.
    Env,
    /// Searching for and installing packages
    /// with the system's package managers.
    Packages,
    /// Running a payload in WSL, a dev container or Windows Sandbox.
    Sandbox,
    /// Seeing and driving windows in the background.
    Desktop,
    /// Web search (`web_search`), which sends the query to a search engine.
    Search,
    /// Web search, and `fetch_web_page` on any
    /// public host, not only documentation.
    Research,
}

impl Group {
    /// Every group, in canonical order.
    pub const ALL: [Group; 11] = [
        Group::Core,
        Group::Edit,
        Group::Build,
        Group::Docs,
        Group::Net,
        Group::Env,
        Group::Packages,
        Group::Sandbox,
        Group::Desktop,
        Group::Search,
        Group::Research,
    ];

    /// The set registered when nothing is configured. The web-search groups
    /// stay out so that an upgrade never hands an existing install a new
    /// outbound capability; the others stay out because their definitions
    /// would cost context on every turn of every session.
    pub const DEFAULT: [Group; 5] = [
        Group::Core,
        Group::Edit,
        Group::Build,
        Group::Docs,
        Group::Net,
    ];

    /// The group's name as `WAMCP_TOOLS` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Group::Core => "core",
            Group::Edit => "edit",
            Group::Build => "build",
            Group::Docs => "docs",
            Group::Net => "net",
            Group::Env => "env",
            Group::Packages => "packages",
            Group::Sandbox => "sandbox",
            Group::Desktop => "desktop",
            Group::Search => "search",
            Group::Research => "research",
        }
    }

    /// The group a lower-case name means, if any.
    pub fn from_name(name: &str) -> Option<Group> {
        Group::ALL.into_iter().find(|g| g.name() == name)
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of reading a `WAMCP_TOOLS`-style value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSelection {
    /// Active groups in canonical order; always contains `core`.
    pub groups: Vec<Group>,
    /// Why the value was not used as written, when it was not.
    pub error: Option<String>,
}

impl GroupSelection {
    /// Whether `group` is active.
    pub fn contains(&self, group: Group) -> bool {
        self.groups.contains(&group)
    }

    /// The warning for a posture that cannot work: `web_search` finds URLs
    /// but, without `docs`, no registered tool can open them, so a model
    /// either stalls or invents page contents from the titles.
    pub fn posture_warning(&self) -> Option<String> {
        (self.contains(Group::Search) && !self.contains(Group::Docs)).then(|| {
            "The 'search' group is active without 'docs': web_search will return URLs that no \
             registered tool can open. Add 'docs' (for example WAMCP_TOOLS=core,docs,search)."
                .to_string()
        })
    }
}

/// Names accepted in a group list, for error messages.
pub fn valid_names() -> String {
    let mut names: Vec<&str> = Group::ALL.iter().map(|g| g.name()).collect();
    names.push("all");
    names.join(", ")
}

/// Reads a comma-separated group list.
///
/// Case and surrounding whitespace are ignored and duplicates collapse. An
/// unset, blank or comma-only value selects the default set. `all` selects
/// every group. `core` is always included. Any unknown name makes the whole
/// value fall back to the default set with an error naming the bad and the
/// valid names: half-applying a list with a typo in it would silently register
/// a tool set the user did not ask for. `web_research` (the
/// `WAMCP_WEB_RESEARCH` switch) adds `research` to whatever was selected.
pub fn parse_groups(value: Option<&str>, web_research: bool) -> GroupSelection {
    let (mut groups, error) = match value {
        None => (Group::DEFAULT.to_vec(), None),
        Some(raw) => select(raw),
    };
    if web_research {
        groups.push(Group::Research);
    }
    groups.push(Group::Core);
    groups.sort();
    groups.dedup();
    GroupSelection { groups, error }
}

/// Checks a group list strictly, as a config-file profile's `tools` field is
/// checked at load time. Returns the message `parse_groups` would report.
pub fn validate_group_list(raw: &str) -> Result<(), String> {
    match select(raw).1 {
        None => Ok(()),
        Some(message) => Err(message),
    }
}

fn select(raw: &str) -> (Vec<Group>, Option<String>) {
    let names: Vec<String> = raw
        .split(',')
        .map(|part| part.trim().to_ascii_lowercase())
        .filter(|part| !part.is_empty())
        .collect();
    if names.is_empty() {
        return (Group::DEFAULT.to_vec(), None);
    }
    let mut unknown: Vec<&str> = Vec::new();
    for name in &names {
        if name != "all" && Group::from_name(name).is_none() && !unknown.contains(&name.as_str()) {
            unknown.push(name);
        }
    }
    if !unknown.is_empty() {
        let message = format!(
            "Unknown tool group{} {} in '{}'. Valid names: {}. Using the default set ({}).",
            if unknown.len() == 1 { "" } else { "s" },
            unknown
                .iter()
                .map(|name| format!("'{name}'"))
                .collect::<Vec<_>>()
                .join(", "),
            raw.trim(),
            valid_names(),
            join(&Group::DEFAULT),
        );
        return (Group::DEFAULT.to_vec(), Some(message));
    }
    if names.iter().any(|name| name == "all") {
        return (Group::ALL.to_vec(), None);
    }
    let groups = names.iter().filter_map(|n| Group::from_name(n)).collect();
    (groups, None)
}

/// Joins groups with commas, the spelling `WAMCP_TOOLS` accepts back.
pub fn join(groups: &[Group]) -> String {
    groups
        .iter()
        .map(|g| g.name())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(value: Option<&str>, research: bool) -> (String, bool) {
        let selection = parse_groups(value, research);
        (join(&selection.groups), selection.error.is_some())
    }

    #[test]
    fn group_list_table() {
        let cases: &[(Option<&str>, bool, &str, bool)] = &[
            (None, false, "core,edit,build,docs,net", false),
            (Some(""), false, "core,edit,build,docs,net", false),
            (Some(" , ,,, "), false, "core,edit,build,docs,net", false),
            (Some("core"), false, "core", false),
            (Some("edit"), false, "core,edit", false),
            (Some(" Build , DOCS "), false, "core,build,docs", false),
            (Some("docs,docs,core,docs"), false, "core,docs", false),
            (Some("net,edit"), false, "core,edit,net", false),
            (
                Some("all"),
                false,
                "core,edit,build,docs,net,env,packages,sandbox,desktop,search,research",
                false,
            ),
            (
                Some("ALL,core"),
                false,
                "core,edit,build,docs,net,env,packages,sandbox,desktop,search,research",
                false,
            ),
            (Some("core,docs,search"), false, "core,docs,search", false),
            (Some("research"), false, "core,research", false),
            (Some("env"), false, "core,env", false),
            (Some("cpp"), false, "core,edit,build,docs,net", true),
            (Some("core,cpp"), false, "core,edit,build,docs,net", true),
            (Some("all,bogus"), false, "core,edit,build,docs,net", true),
            (Some("core;docs"), false, "core,edit,build,docs,net", true),
            (None, true, "core,edit,build,docs,net,research", false),
            (Some("core"), true, "core,research", false),
            (
                Some("typo"),
                true,
                "core,edit,build,docs,net,research",
                true,
            ),
            (
                Some("all"),
                true,
                "core,edit,build,docs,net,env,packages,sandbox,desktop,search,research",
                false,
            ),
        ];
        for (value, research, want, want_error) in cases {
            assert_eq!(
                names(*value, *research),
                (want.to_string(), *want_error),
                "value {value:?} research {research}"
            );
        }
    }

    #[test]
    fn unknown_name_message_names_the_bad_and_the_valid_names() {
        let selection = parse_groups(Some("core, Cpp ,shell,cpp"), false);
        assert_eq!(
            selection.error.as_deref(),
            Some(
                "Unknown tool groups 'cpp', 'shell' in 'core, Cpp ,shell,cpp'. Valid names: core, \
                 edit, build, docs, net, env, packages, sandbox, desktop, search, research, all. Using the default set \
                 (core,edit,build,docs,net)."
            )
        );
    }

    #[test]
    fn posture_warning_only_for_search_without_docs() {
        let warn = |v: &str| parse_groups(Some(v), false).posture_warning().is_some();
        assert!(warn("search"));
        assert!(warn("core,edit,search"));
        assert!(!warn("core,docs,search"));
        assert!(!warn("research"));
        assert!(!warn("all"));
        assert!(!warn("core"));
    }

    #[test]
    fn strict_validation_matches_lenient_parsing() {
        assert_eq!(validate_group_list("edit,build,docs"), Ok(()));
        assert_eq!(validate_group_list(""), Ok(()));
        let err = validate_group_list("core,cpp").unwrap_err();
        assert!(
            err.starts_with("Unknown tool group 'cpp' in 'core,cpp'."),
            "{err}"
        );
    }
}
