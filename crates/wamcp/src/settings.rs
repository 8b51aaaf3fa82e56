//! The settings wamcp reads, in one table.
//!
//! The config file generator, `config --list`, the resolver and the docs all
//! read this table, so a setting is declared once. Every setting can come from
//! the environment (which wins), the active profile, or the config file.

/// One setting and what to tell a user about it.
pub struct Setting {
    pub name: &'static str,
    /// What happens when the setting is left empty.
    pub default: &'static str,
    pub description: &'static str,
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
pub const SEARCH_BUDGET: &str = "WAMCP_SEARCH_BUDGET_SECONDS";
pub const CAPABILITIES_FILE: &str = "WAMCP_CAPABILITIES_FILE";
pub const DATA_DIR: &str = "WAMCP_DATA_DIR";
pub const CLIENT_ROOTS: &str = "WAMCP_CLIENT_ROOTS";
pub const DESKTOP_APPS: &str = "WAMCP_DESKTOP_APPS";
pub const DESKTOP_PROCESSES: &str = "WAMCP_DESKTOP_PROCESSES";

/// Environment-only: they choose the file and the profile, so they cannot
/// live inside either.
pub const CONFIG_FILE: &str = "WAMCP_CONFIG_FILE";
pub const PROFILE: &str = "WAMCP_PROFILE";

/// The separator of `WAMCP_PROJECT_ROOTS`: `;` on Windows (where `:` is part
/// of every drive path), `:` elsewhere, as in `PATH`.
pub const ROOTS_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

pub const SETTINGS: &[Setting] = &[
    Setting {
        name: TOOLS,
        default: "core,edit,build,docs,net (the other groups are opt-in)",
        description: "Tool groups to register, comma-separated: core, edit, build, docs, net, \
                      env, packages, sandbox, desktop, search, research, or all. core is always on. An unknown name falls back to \
                      the default set and is reported by get_server_info.",
    },
    Setting {
        name: PROJECT_ROOTS,
        default: "none: only the download root is writable",
        description: "Directories the model may write to and run builds in. Separate several \
                      with ';' on Windows or ':' elsewhere. Entries that do not exist are \
                      skipped and reported. Point it at a project, never at a drive root.",
    },
    Setting {
        name: CLIENT_ROOTS,
        default: "on (stdio only)",
        description: "off ignores the workspace folders a client lists (MCP roots: VS Code, \
                      Claude Code). Otherwise each listed folder becomes a writable root for the \
                      session, unless it is a drive root, the home directory or a system folder.",
    },
    Setting {
        name: DATA_DIR,
        default: "%LOCALAPPDATA%\\wamcp on Windows, $XDG_DATA_HOME/wamcp (~/.local/share/wamcp) \
                  elsewhere",
        description: "Where wamcp keeps its audit trail, Windows Sandbox bundles and (unless \
                      WAMCP_DOWNLOAD_ROOT says otherwise) downloads. Absolute; keep it outside \
                      the writable roots. The plugins point it at the host's plugin data folder.",
    },
    Setting {
        name: DOWNLOAD_ROOT,
        default: "%LOCALAPPDATA%\\wamcp\\downloads on Windows, $XDG_DATA_HOME/wamcp/downloads \
                  (~/.local/share/wamcp/downloads) elsewhere",
        description: "Where download_file saves files. Always writable.",
    },
    Setting {
        name: WORKSPACE_FROM_CWD,
        default: "off",
        description: "Set to 1 to also make the server's working directory a project root, for \
                      launchers that start the server inside the project; auto does so only \
                      when WAMCP_PROJECT_ROOTS names no project (the Codex entries set auto). A \
                      drive root, the home directory, a hidden folder of it or a system directory \
                      is refused, with the reason in get_server_info (adopted_workspace, \
                      workspace_note).",
    },
    Setting {
        name: WEB_RESEARCH,
        default: "off",
        description: "Set to 1 to add the research group: web_search, and fetch_web_page may read \
                      any public HTTPS host. Same as adding research to WAMCP_TOOLS.",
    },
    Setting {
        name: EXTRA_DOC_HOSTS,
        default: "none",
        description: "Extra host names fetch_web_page may read, separated by commas, semicolons \
                      or spaces. Exact names, no wildcards.",
    },
    Setting {
        name: ALLOWED_HOSTS_FILE,
        default: "mcp-allowed-hosts.json in the working directory",
        description: "The file of hosts you granted fetch_web_page. The model can never write it.",
    },
    Setting {
        name: HOST_CONSENT,
        default: "1: ask you before reading a host that is not allowed yet",
        description: "Set to 0 so the server never asks you to approve a host; refused hosts \
                      stay refused.",
    },
    Setting {
        name: HOST_GRANT_PERSIST,
        default: "off: an approval lasts until the server restarts",
        description: "Set to 1 to save approvals into the grants file.",
    },
    Setting {
        name: COMMAND_RULES,
        default: "none: the built-in rules only",
        description: "A JSON file of extra command rules for run_powershell, in the format of the built-in \
                      rules (programs, an optional condition, allow/prompt/forbidden, examples checked at load). \
                      The strictest matching rule wins. The model can never write this file.",
    },
    Setting {
        name: COMMAND_SANDBOX,
        default: "auto: confined on Linux (Landlock + seccomp), not on Windows yet",
        description: "How commands, builds and shader compiles are confined by the operating system: auto \
                      (where wamcp has verified the mechanism), off, or require (refuse to run commands where \
                      they cannot be confined). Confined, they write only inside the writable roots, their own \
                      temp directory and WAMCP_COMMAND_WRITABLE, and reach the network only when their rule \
                      says so.",
    },
    Setting {
        name: CAPABILITIES_FILE,
        default: "none: the built-in capabilities only",
        description: "A JSON file of capabilities for capability_run and workflow_plan: \
                      {\"replace_builtin\": false, \"capabilities\": [{\"id\", \"description\", \"safety\", \
                      \"tags\", \"argv\": [[...], ...], \"network\"}]}. Entries add to or replace built-in ones \
                      with the same id. While the file has a mistake, or lies inside a writable root, no \
                      capability runs. The model can never write this file.",
    },
    Setting {
        name: SEARCH_BUDGET,
        default: "10",
        description: "Seconds search_files, find_files, list_directory and list_empty_dirs may take (1 to \
                      600). Within it a search covers every file; past it the answer says how far it got.",
    },
    Setting {
        name: COMMAND_WRITABLE,
        default: "default: the download caches of cargo (registry, git), npm (_cacache), pip and ccache",
        description: "Tool caches confined commands may write besides the roots, separated like \
                      WAMCP_PROJECT_ROOTS. The word default stands for the defaults, none for no cache, ~ for \
                      the home directory. An entry that overlaps the home directory itself, PATH, shell start-up \
                      files or tool configuration is refused and reported.",
    },
    Setting {
        name: DESKTOP_APPS,
        default: "none: open_app starts nothing",
        description: "Programs open_app may start (desktop group, Windows), separated by ';': a name looked \
                      up on PATH outside every writable folder (notepad), or a full path used exactly. Listing \
                      a program lets the agent start it with any arguments.",
    },
    Setting {
        name: DESKTOP_PROCESSES,
        default: "none: only windows of programs open_app started",
        description: "Image names (code.exe; separated by ';') whose windows the desktop tools may look at \
                      and act on, besides those of programs open_app started. windows() lists every window \
                      either way.",
    },
    Setting {
        name: SEARCH_BACKEND,
        default: "duckduckgo",
        description: "The web_search provider. Only duckduckgo exists; any other value is an \
                      error, never a silent fallback.",
    },
];

/// The table entry for `name`, if it is a file-settable setting.
pub fn find(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name == name)
}
