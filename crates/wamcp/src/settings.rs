//! The settings wamcp reads, in one table.
//!
//! The config file generator, `config --list`, the typed reader
//! ([`Settings`]), the guide's configuration table and the test harness all
//! read this table, so a setting is declared once: a new one is a row here
//! and a field in [`Settings`]. Every setting can come from the environment
//! (which wins), the active profile or the config file, except the few that
//! choose the file or are needed before it is read.

mod kinds;
mod typed;

pub use kinds::Kind;
pub use typed::{Adopt, Settings};

/// One setting and what to tell a user about it.
pub struct Setting {
    pub name: &'static str,
    /// The values it takes and what an unrecognised one means.
    pub kind: Kind,
    /// What happens when the setting is left empty, in words.
    pub default: &'static str,
    pub description: &'static str,
    /// Read from the environment alone: it chooses the config file or the
    /// profile, or is needed before they are read.
    pub environment_only: bool,
}

pub const TOOLS: &str = "WAMCP_TOOLS";
pub const PROJECT_ROOTS: &str = "WAMCP_PROJECT_ROOTS";
pub const DOWNLOAD_ROOT: &str = "WAMCP_DOWNLOAD_ROOT";
pub const WORKSPACE_FROM_CWD: &str = "WAMCP_WORKSPACE_FROM_CWD";
pub const WEB_RESEARCH: &str = "WAMCP_WEB_RESEARCH";
pub const EXTRA_DOC_HOSTS: &str = "WAMCP_EXTRA_DOC_HOSTS";
pub const ALLOWED_HOSTS_FILE: &str = "WAMCP_ALLOWED_HOSTS_FILE";
pub const HOST_CONSENT: &str = "WAMCP_HOST_CONSENT";
pub const HOST_GRANT_PERSIST: &str = "WAMCP_HOST_GRANT_PERSIST";
pub const SEARCH_BACKEND: &str = "WAMCP_SEARCH_BACKEND";
pub const COMMAND_RULES: &str = "WAMCP_COMMAND_RULES";
pub const COMMAND_SANDBOX: &str = "WAMCP_COMMAND_SANDBOX";
pub const COMMAND_WRITABLE: &str = "WAMCP_COMMAND_WRITABLE";
pub const SECRET_PATHS: &str = "WAMCP_SECRET_PATHS";
pub const COMMAND_HOSTS: &str = "WAMCP_COMMAND_HOSTS";
pub const COMMAND_PASS_VARIABLES: &str = "WAMCP_COMMAND_PASS_VARIABLES";
pub const SEARCH_BUDGET: &str = "WAMCP_SEARCH_BUDGET_SECONDS";
pub const CAPABILITIES_FILE: &str = "WAMCP_CAPABILITIES_FILE";
pub const DATA_DIR: &str = "WAMCP_DATA_DIR";
pub const CLIENT_ROOTS: &str = "WAMCP_CLIENT_ROOTS";
pub const DESKTOP_APPS: &str = "WAMCP_DESKTOP_APPS";
pub const DESKTOP_PROCESSES: &str = "WAMCP_DESKTOP_PROCESSES";
pub const CONFIG_FILE: &str = "WAMCP_CONFIG_FILE";
pub const PROFILE: &str = "WAMCP_PROFILE";
pub const LOG: &str = "WAMCP_LOG";
pub const UNDO_BUDGET: &str = "WAMCP_UNDO_BUDGET_MB";
pub const UNDO_DAYS: &str = "WAMCP_UNDO_DAYS";

/// The separator of `WAMCP_PROJECT_ROOTS`: `;` on Windows (where `:` is part
/// of every drive path), `:` elsewhere, as in `PATH`.
pub const ROOTS_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

/// A setting read from the file and profile too.
const fn setting(
    name: &'static str,
    kind: Kind,
    default: &'static str,
    description: &'static str,
) -> Setting {
    Setting {
        name,
        kind,
        default,
        description,
        environment_only: false,
    }
}

/// A switch that is off unless set, and off for a word it does not know.
const OFF: Kind = Kind::Switch {
    default: false,
    unrecognised: false,
};

pub const SETTINGS: &[Setting] = &[
    setting(
        TOOLS,
        Kind::Text,
        "core,edit,build,docs,net (the other groups are opt-in)",
        "Tool groups to register, comma-separated: core, edit, build, docs, net, env, packages, sandbox, \
         desktop, search, research, or all. core is always on. An unknown name falls back to the default \
         set and is reported by get_server_info.",
    ),
    Setting {
        name: PROFILE,
        kind: Kind::Text,
        default: "none (or the file's active_profile)",
        description: "The profile of the config file to use.",
        environment_only: true,
    },
    Setting {
        name: CONFIG_FILE,
        kind: Kind::File,
        default: "the per-user file: %APPDATA%\\wamcp\\config.json on Windows, \
                  $XDG_CONFIG_HOME/wamcp/config.json (~/.config/wamcp/config.json) elsewhere",
        description: "The config file. A file inside a writable root is set aside (config_error says \
                      why), since a command could rewrite it.",
        environment_only: true,
    },
    setting(
        PROJECT_ROOTS,
        Kind::Paths,
        "none: only the download root is writable",
        "Directories the model may write to and run builds in, separated by ';' on Windows and ':' \
         elsewhere, like PATH. Entries that are missing, relative or not directories are skipped and \
         listed in setting_warnings. Point it at a project, never at a drive root.",
    ),
    setting(
        CLIENT_ROOTS,
        Kind::Switch {
            default: true,
            unrecognised: false,
        },
        "on (stdio only)",
        "Off (0, false, no, off) ignores the workspace folders a client lists (MCP roots: VS Code, Claude \
         Code); a value that is neither yes nor no is reported and counts as off. Otherwise each listed \
         folder becomes a writable root for the session, refused as WAMCP_WORKSPACE_FROM_CWD refuses.",
    ),
    setting(
        DATA_DIR,
        Kind::AbsolutePath,
        "%LOCALAPPDATA%\\wamcp on Windows, $XDG_DATA_HOME/wamcp (~/.local/share/wamcp) elsewhere",
        "Where wamcp keeps its audit trail, Windows Sandbox bundles and (unless WAMCP_DOWNLOAD_ROOT says \
         otherwise) downloads. Absolute; keep it outside the writable roots. The plugins point it at the \
         host's plugin data folder.",
    ),
    setting(
        DOWNLOAD_ROOT,
        Kind::AbsolutePath,
        "%LOCALAPPDATA%\\wamcp\\downloads on Windows, $XDG_DATA_HOME/wamcp/downloads \
         (~/.local/share/wamcp/downloads) elsewhere",
        "Where download_file saves files. Always writable; absolute.",
    ),
    setting(
        WORKSPACE_FROM_CWD,
        Kind::SwitchOrAuto,
        "off",
        "Yes also makes the server's working directory a project root, for launchers that start the \
         server inside the project; auto does so only when WAMCP_PROJECT_ROOTS names no project (the \
         Codex entries set auto). A drive or filesystem root, the home directory or an ancestor of it, a \
         hidden folder in it, a folder holding or inside a trust location or a PATH folder, and system \
         directories are refused, with the reason in get_server_info (adopted_workspace, workspace_note).",
    ),
    setting(
        WEB_RESEARCH,
        OFF,
        "off",
        "Yes adds the research group: web_search, and fetch_web_page may read any public HTTPS host. \
         Same as adding research to WAMCP_TOOLS.",
    ),
    setting(
        EXTRA_DOC_HOSTS,
        Kind::List(&[',', ';', ' ']),
        "none",
        "Extra host names fetch_web_page may read, separated by commas, semicolons or spaces. Exact \
         names, no wildcards.",
    ),
    setting(
        ALLOWED_HOSTS_FILE,
        Kind::File,
        "mcp-allowed-hosts.json beside the user config file",
        "The file of hosts you granted fetch_web_page (wamcp hostgrants edits it). The model can never \
         write it; one inside a writable root grants nothing.",
    ),
    setting(
        HOST_CONSENT,
        Kind::Switch {
            default: true,
            unrecognised: true,
        },
        "on: ask you before reading a host that is not allowed yet",
        "Off (0) never asks you to approve a host; refused hosts stay refused.",
    ),
    setting(
        HOST_GRANT_PERSIST,
        OFF,
        "off: an approval lasts until the server restarts",
        "Yes saves approvals into the grants file.",
    ),
    setting(
        COMMAND_RULES,
        Kind::File,
        "none: the built-in rules only",
        "A JSON file of extra command rules for run_powershell, in the format of the built-in rules \
         (crates/wamcp-policy/rules/builtin.json: programs, an optional condition, allow/prompt/forbidden, \
         examples checked at load). The strictest matching rule wins. Loaded when a command first needs it; \
         problems are listed in get_server_info.command_rules_errors (wamcp config --check checks it at \
         once). The model can never write this file.",
    ),
    setting(
        COMMAND_SANDBOX,
        Kind::Choice {
            values: &["auto", "off", "require"],
            unrecognised: Some("require"),
        },
        "auto: confined wherever the self-test proves writes are bounded (Linux with Landlock + seccomp)",
        "How commands, builds and shader compiles are confined by the operating system: auto (where a \
         probe started as commands are proves on this machine that writes are bounded), off, or require \
         (run commands only where writes and network are both proven; refuse them elsewhere); any other \
         value is reported and counts as require. wamcp config --check runs the self-test and prints \
         what holds. Confined, they write only inside \
         the writable roots, their own temp directory and WAMCP_COMMAND_WRITABLE, and reach the network \
         only when their rule says so.",
    ),
    setting(
        COMMAND_WRITABLE,
        Kind::Paths,
        "default: the download caches of cargo (registry, git), npm (_cacache), pip and ccache",
        "Tool caches confined commands may write besides the roots, separated like WAMCP_PROJECT_ROOTS. \
         The word default stands for the defaults, none for no cache, ~ for the home directory. An entry \
         that overlaps the home directory itself, PATH, shell start-up files or tool configuration is \
         refused and listed in setting_warnings.",
    ),
    setting(
        COMMAND_HOSTS,
        Kind::List(&[',', ';', ' ']),
        "none: the package registries, GitHub and GitLab, and the hosts of the project's git remotes",
        "More hosts confined commands with the network may reach, at any port, separated by commas, \
         semicolons or spaces; exact names or IP addresses. Everything else their traffic asks for is \
         refused by wamcp's egress proxy (Linux).",
    ),
    setting(
        COMMAND_PASS_VARIABLES,
        Kind::List(&[',', ';', ' ']),
        "none: variables named like credentials (KEY, TOKEN, SECRET, PASSW... in the name) or holding a \
         URL with a password are withheld",
        "Variables of wamcp's environment that commands get although they look like credentials, \
         separated by commas, semicolons or spaces (exact names). The others of that kind never reach a \
         command, so a script cannot print them into the model's context; get_server_info lists them \
         by name.",
    ),
    setting(
        SECRET_PATHS,
        Kind::Paths,
        "none: only the built-in secret stores (~/.ssh, ~/.aws, credential files, browser profiles...)",
        "More places where credentials live, separated like WAMCP_PROJECT_ROOTS; ~ is the home directory. \
         They join the built-in list (which nothing removes): the reading tools refuse them unless the user \
         allows one read, and confined commands see them empty.",
    ),
    setting(
        CAPABILITIES_FILE,
        Kind::File,
        "none: the built-in capabilities only",
        "A JSON file of capabilities for capability_run and workflow_plan: {\"replace_builtin\": false, \
         \"capabilities\": [{\"id\", \"description\", \"safety\", \"tags\", \"argv\": [[...], ...], \
         \"network\"}]}. Entries add to or replace built-in ones with the same id. While the file has a \
         mistake, or lies inside a writable root, no capability runs. The model can never write this file.",
    ),
    setting(
        DESKTOP_APPS,
        Kind::List(&[';', '\n']),
        "none: open_app starts nothing",
        "Programs open_app may start (desktop group, Windows), separated by ';': a name looked up on PATH \
         outside every writable folder, then as a Start-menu title (notepad, Visual Studio Code), a full \
         path used exactly (a program or a .lnk shortcut), or a packaged app's AppUserModelID \
         (Microsoft.WindowsCalculator_8wekyb3d8bbwe!App). Listing a program lets the agent start it with \
         any arguments.",
    ),
    setting(
        DESKTOP_PROCESSES,
        Kind::List(&[';', '\n']),
        "none: only windows of programs open_app started",
        "Image names (code.exe; separated by ';') whose windows the desktop tools may look at and act on, \
         besides those of programs open_app started. windows() lists every window either way.",
    ),
    setting(
        SEARCH_BACKEND,
        Kind::Choice {
            values: &["duckduckgo"],
            unrecognised: None,
        },
        "duckduckgo",
        "The web_search provider. Only duckduckgo exists; any other value is reported and web_search \
         refuses to run, never a silent fallback.",
    ),
    setting(
        SEARCH_BUDGET,
        Kind::Whole {
            min: 1,
            max: wamcp_policy::limits::MAX_SEARCH_BUDGET_SECONDS,
            default: wamcp_policy::limits::DEFAULT_SEARCH_BUDGET_SECONDS,
            unit: "seconds",
        },
        "10",
        "Seconds search_files, find_files, list_directory and list_empty_dirs may take (1 to 600). Within \
         it a search covers every file; past it the answer says how far it got. Another value is reported \
         and the default used.",
    ),
    setting(
        UNDO_BUDGET,
        Kind::Whole {
            min: 0,
            max: 1 << 20,
            default: wamcp_policy::undo::DEFAULT_BUDGET_MIB,
            unit: "MiB",
        },
        "2048",
        "MiB the undo journal may keep (in WAMCP_DATA_DIR/undo): before each write, edit, command, build or \
         shader compile, wamcp copies what the step could change in the project roots (not regenerated \
         folders such as node_modules or an ignored target, not files over 64 MiB), and undo puts it back. \
         The oldest steps go first; a step that cannot fit asks you. 0 turns the journal off: nothing can \
         be undone, and commands that lose work ask first.",
    ),
    setting(
        UNDO_DAYS,
        Kind::Whole {
            min: 1,
            max: 3650,
            default: wamcp_policy::undo::DEFAULT_DAYS,
            unit: "days",
        },
        "14",
        "Days the undo journal keeps a step.",
    ),
    Setting {
        name: LOG,
        kind: Kind::Text,
        default: "warn: warnings and errors, one line each",
        description: "The log filter, in tracing's syntax (debug, rmcp=trace); an invalid one is reported \
                      and warnings are shown. Logs go to stderr only; stdout carries only the protocol.",
        environment_only: true,
    },
];

/// The table entry for `name`, if it may be set in the config file.
pub fn find(name: &str) -> Option<&'static Setting> {
    SETTINGS
        .iter()
        .find(|s| s.name == name && !s.environment_only)
}

/// The table entry for `name`, wherever it may be set.
pub fn any(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name == name)
}

/// Settings the config file and profiles may hold.
pub fn file_settings() -> impl Iterator<Item = &'static Setting> {
    SETTINGS.iter().filter(|s| !s.environment_only)
}

/// The configuration table of docs/configuration.md, made from
/// [`SETTINGS`] (`cargo run -p xtask -- docs --write`).
pub fn markdown_table() -> String {
    let mut table = String::from("| Variable | Default | Meaning |\n|---|---|---|\n");
    for s in SETTINGS {
        let only = if s.environment_only {
            " Environment only."
        } else {
            ""
        };
        table.push_str(&format!(
            "| `{}` | {} | {}{only} |\n",
            s.name,
            s.default.replace('|', "\\|"),
            s.description.replace('|', "\\|")
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, s) in SETTINGS.iter().enumerate() {
            assert!(SETTINGS[..i].iter().all(|o| o.name != s.name), "{}", s.name);
            assert!(any(s.name).is_some());
            assert_eq!(find(s.name).is_some(), !s.environment_only, "{}", s.name);
        }
    }
}
