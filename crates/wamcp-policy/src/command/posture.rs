//! The two ways commands are judged, chosen by what the OS layer holds.
//!
//! Where every command runs confined — writes only inside the writable
//! roots, its temp directory and the caches; no socket that connects
//! anywhere unless its rule grants the network — a program's options that
//! "run code" can do no more than the program itself could, so they are no
//! question. What the OS layer cannot see still is: which commands get the
//! network (and so every option of those), work inside the roots that a
//! command would destroy, files that run programs later, and programs
//! whose whole purpose is to reach outside (privilege, services, other
//! machines). That is the *confined* posture.
//!
//! Where the OS layer bounds less or nothing (Windows until its self-test
//! passes, `WAMCP_COMMAND_SANDBOX=off`, a kernel without Landlock), the
//! fail-closed grammars are the only defence and judge exactly as before:
//! the *grammars* posture.

use super::rules::{Decision, Source, Verdict, program_name};
use super::tokenize::Arg;

/// How commands are judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Posture {
    /// The OS layer bounds writes and network: judged by effects.
    Confined,
    /// Nothing below the policy: the grammars decide, fail closed.
    Grammars,
}

impl Posture {
    /// The name `get_server_info` and refusals carry.
    pub fn as_str(self) -> &'static str {
        match self {
            Posture::Confined => "confined",
            Posture::Grammars => "grammars",
        }
    }

    /// One sentence on what the posture means for a refused command.
    pub fn explain(self) -> &'static str {
        match self {
            Posture::Confined => {
                "Commands run confined here (posture 'confined'): any program may run without network; \
                 what is refused or asked concerns the network, work that cannot be undone, files that run \
                 programs later, or programs that reach outside by design."
            }
            Posture::Grammars => {
                "Commands are not confined by the operating system here (posture 'grammars'), so only programs \
                 and options the grammars know run; the user can widen that with a rule in the file named by \
                 WAMCP_COMMAND_RULES."
            }
        }
    }
}

/// The rule named when a command runs because the OS layer bounds it.
pub const CONFINED_RULE: &str = "confined";

/// The verdict on `argv` in the confined posture, from the rules' verdict:
/// a grammar's objection, or a program nobody listed, runs without network
/// unless the command needs the network (then every option matters), the
/// program reaches outside by design, or it is a cmdlet (which needs a
/// rule: PowerShell's own commands can change the machine's settings). A
/// user's rule and rules that cannot be trusted keep their word.
pub fn confined_verdict(verdict: Verdict, argv: &[Arg]) -> Verdict {
    let relaxable = matches!(verdict.source, Source::Grammar | Source::Nothing);
    if verdict.decision == Decision::Allow || !relaxable || verdict.network || verdict.cmdlet {
        return verdict;
    }
    let program = program_name(&argv[0].text);
    // git's grammar is complete, and its objections are where work and
    // history are lost (`-c alias.x='reset --hard'`) or its configuration
    // runs programs later: they stand, confined or not.
    if verdict.source == Source::Grammar && program == "git" {
        return verdict;
    }
    if let Some(why) = reaches_outside(&program) {
        return Verdict {
            decision: Decision::Forbidden,
            rule: Some(CONFINED_RULE.into()),
            justification: why.into(),
            argument: None,
            ..verdict
        };
    }
    if verdict.source == Source::Nothing && looks_like_cmdlet(&argv[0].text) {
        return verdict;
    }
    if let Some(why) = outlives_the_command(&program, argv) {
        return Verdict {
            rule: verdict.rule.or_else(|| Some(CONFINED_RULE.into())),
            justification: why.into(),
            ..verdict
        };
    }
    Verdict {
        decision: Decision::Allow,
        rule: Some(CONFINED_RULE.into()),
        justification: "it runs confined, without network".into(),
        argument: None,
        network: false,
        ..verdict
    }
}

/// Why what `argv` does outlives it, where a grammar already objected:
/// it writes configuration that the user's own later runs read outside
/// any sandbox (`git config`, `npm config set`, `.git/hooks`, an editor
/// extension), or it names a folder whose files run programs later. The
/// OS layer lets a command write inside the roots, so these stay with the
/// grammar (and where no grammar knows the program, refused).
fn outlives_the_command(program: &str, argv: &[Arg]) -> Option<&'static str> {
    const PERSISTS: &[(&[&str], &[&str])] = &[
        (
            &["git"],
            &[
                "config",
                "remote",
                "submodule",
                "init",
                "worktree",
                "credential",
            ],
        ),
        (
            &["npm", "pnpm", "yarn", "bun"],
            &[
                "config",
                "set",
                "link",
                "prefix",
                "-g",
                "--global",
                "--location",
            ],
        ),
        (
            &[
                "pip", "pip3", "python", "python3", "py", "uv", "conda", "mamba",
            ],
            &["config", "init"],
        ),
        (&["cargo"], &["install"]),
        (&["dotnet"], &["nuget", "dev-certs", "-g", "--global"]),
        (
            &["code", "code-insiders", "cursor", "codium"],
            &["--install-extension"],
        ),
    ];
    let words: Vec<String> = argv[1..]
        .iter()
        .map(|a| a.text.to_ascii_lowercase())
        .take_while(|w| w != "--")
        .collect();
    let persists = PERSISTS.iter().any(|(programs, subcommands)| {
        programs.contains(&program) && words.iter().any(|w| subcommands.contains(&w.as_str()))
    });
    if persists {
        return Some(
            "it writes configuration that later runs of the tool read outside any sandbox",
        );
    }
    argv.iter().any(|a| mentions_trust_place(&a.text)).then_some(
        "it names a folder whose files run programs later (.git, .vscode, .claude...), which only the \
         user's tools and git itself change",
    )
}

/// Whether `text` (an argument, a path, inline code) names a trust place
/// anywhere in it: each run of path characters is compared whole.
fn mentions_trust_place(text: &str) -> bool {
    const PLACES: &[&str] = &[
        ".git",
        ".vscode",
        ".claude",
        ".codex",
        ".cursor",
        ".mcp.json",
        ".gitmodules",
        ".npmrc",
        ".gitconfig",
    ];
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '~')))
        .any(|word| {
            let word = word.trim_end_matches(['.', ' ']).to_lowercase();
            PLACES.contains(&word.as_str())
        })
        || crate::write_rules::names_trust_location(text).is_some()
}

/// Why `program` is refused even confined: it exists to act outside the
/// sandbox (as another user, through a service manager or a daemon, on
/// another machine) or to change the machine's installed software, which
/// the package tools do with the user's yes.
pub fn reaches_outside(program: &str) -> Option<&'static str> {
    const TABLE: &[(&[&str], &str)] = &[
        (
            &[
                "sudo", "su", "doas", "pkexec", "runas", "gsudo", "sudo-rs", "run0",
            ],
            "it runs a command as another user, outside the sandbox's reach",
        ),
        (
            &[
                "systemctl",
                "systemd-run",
                "service",
                "launchctl",
                "crontab",
                "at",
                "schtasks",
                "sc",
                "loginctl",
                "busctl",
                "dbus-send",
                "gdbus",
            ],
            "it asks a service manager or the session bus to run or change something outside the command",
        ),
        (
            &[
                "docker",
                "podman",
                "nerdctl",
                "kubectl",
                "wsl",
                "lxc",
                "vagrant",
                "qemu-system-x86_64",
            ],
            "it drives containers or machines that the sandbox does not confine; use the sandbox tools",
        ),
        (
            &[
                "curl",
                "wget",
                "aria2c",
                "iwr",
                "invoke-webrequest",
                "irm",
                "invoke-restmethod",
                "bitsadmin",
            ],
            "it fetches from the network, which a command only gets from its grammar: read pages \
             with fetch_web_page and download with download_file",
        ),
        (
            &[
                "ssh", "scp", "sftp", "telnet", "nc", "ncat", "socat", "tmux", "screen",
            ],
            "it talks to other machines or to sessions outside the command",
        ),
        (
            &[
                "apt", "apt-get", "dpkg", "dnf", "yum", "rpm", "pacman", "zypper", "apk", "brew",
                "port", "snap", "flatpak", "winget", "choco", "scoop", "msiexec", "rustup",
            ],
            "it changes the machine's installed software; use package_install, which asks the user",
        ),
    ];
    look_up(TABLE, program)
}

/// The wamcp tool or parameter that does what `program` is usually typed
/// for, named in its refusal so the next call is the right one.
pub fn instead(program: &str) -> Option<&'static str> {
    const TABLE: &[(&[&str], &str)] = &[
        (
            &["ls", "dir", "gci", "get-childitem", "tree"],
            "List a folder with the list_directory tool.",
        ),
        (
            &[
                "cat",
                "type",
                "gc",
                "get-content",
                "head",
                "tail",
                "less",
                "more",
            ],
            "Read a file with the read_file tool (it takes a line range).",
        ),
        (
            &["grep", "rg", "findstr", "select-string", "sls", "ag", "ack"],
            "Search file contents with the search_files tool; to filter a command's output, pipe it: \
             'cmd | grep x'.",
        ),
        (
            &["find", "fd", "where", "which", "get-command"],
            "Find files by name with the find_files tool.",
        ),
        (
            &["cd", "chdir", "set-location", "sl", "pushd"],
            "Pass the folder as working_directory, or start the line with 'cd DIR && '.",
        ),
        (
            &["rm", "del", "erase", "rmdir", "rd", "remove-item", "ri"],
            "wamcp deletes nothing here; ask the user to delete it, or overwrite the file with write_file.",
        ),
        (
            &["mkdir", "md", "new-item", "ni", "touch"],
            "write_file creates the file and the folders above it.",
        ),
        (
            &["cp", "copy", "copy-item", "mv", "move", "move-item"],
            "Read the file with read_file and write it with write_file.",
        ),
        (
            &[
                "curl",
                "wget",
                "iwr",
                "invoke-webrequest",
                "irm",
                "invoke-restmethod",
            ],
            "Read web pages with fetch_web_page (the net group).",
        ),
        (
            &["echo", "write-host", "write-output", "printf"],
            "Say it in your answer; no command is needed.",
        ),
    ];
    look_up(TABLE, program)
}

/// The text of the first row of `table` that names `program`.
fn look_up(table: &[(&[&str], &'static str)], program: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(names, _)| names.contains(&program))
        .map(|(_, text)| *text)
}

/// `Verb-Noun` with a PowerShell verb: a cmdlet, not a program on PATH.
fn looks_like_cmdlet(name: &str) -> bool {
    const VERBS: &[&str] = &[
        "add",
        "clear",
        "close",
        "copy",
        "enter",
        "exit",
        "find",
        "format",
        "get",
        "hide",
        "join",
        "lock",
        "move",
        "new",
        "open",
        "pop",
        "push",
        "redo",
        "remove",
        "rename",
        "reset",
        "resize",
        "search",
        "select",
        "set",
        "show",
        "skip",
        "split",
        "step",
        "switch",
        "undo",
        "unlock",
        "watch",
        "compare",
        "convert",
        "convertfrom",
        "convertto",
        "export",
        "import",
        "initialize",
        "out",
        "restore",
        "save",
        "sync",
        "update",
        "invoke",
        "start",
        "stop",
        "wait",
        "debug",
        "measure",
        "test",
        "trace",
        "write",
        "register",
        "unregister",
        "install",
        "uninstall",
        "enable",
        "disable",
        "grant",
        "revoke",
        "protect",
        "unprotect",
        "use",
        "where",
        "foreach",
        "sort",
        "group",
        "tee",
        "read",
        "resolve",
        "suspend",
        "resume",
        "edit",
        "expand",
        "compress",
        "deny",
        "approve",
        "submit",
        "checkpoint",
        "mount",
        "dismount",
        "receive",
        "send",
        "request",
        "connect",
        "disconnect",
        "limit",
        "merge",
        "publish",
        "unpublish",
        "optimize",
        "repair",
        "assert",
        "backup",
        "complete",
        "confirm",
        "build",
        "deploy",
    ];
    let Some((verb, noun)) = name.split_once('-') else {
        return false;
    };
    !noun.is_empty()
        && noun.chars().all(|c| c.is_ascii_alphanumeric())
        && VERBS.contains(&verb.to_ascii_lowercase().as_str())
}

/// Variables a command may not be given, whatever the posture: they choose
/// which programs run (`PATH`, loaders, git's program settings), undo
/// wamcp's own hardening, or route the network.
pub fn env_refusal(name: &str, strict: bool) -> Option<String> {
    let upper = name.to_ascii_uppercase();
    const NEVER: &[&str] = &[
        "PATH",
        "PATHEXT",
        "COMSPEC",
        "SYSTEMROOT",
        "WINDIR",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "PS4",
        "HOME",
        "USERPROFILE",
        "APPDATA",
        "LOCALAPPDATA",
    ];
    const NEVER_PREFIXES: &[&str] = &["LD_", "DYLD_", "WAMCP_", "XDG_"];
    const GIT_PLAIN: &[&str] = &[
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
    ];
    let git_program = upper.starts_with("GIT_") && !GIT_PLAIN.contains(&upper.as_str());
    let proxy = upper.ends_with("_PROXY");
    if NEVER.contains(&upper.as_str())
        || NEVER_PREFIXES.iter().any(|p| upper.starts_with(p))
        || git_program
        || proxy
    {
        return Some(format!(
            "'{name}' chooses which programs run, undoes wamcp's own settings or routes the network"
        ));
    }
    (strict && !is_plain_setting(&upper)).then(|| {
        format!(
            "'{name}' is not one of the variables a command may be given here (it could make the program run \
             other code, and this command is not confined to its own effects); plain settings such as CI, \
             RUST_BACKTRACE, NODE_ENV or PYTHONUNBUFFERED are"
        )
    })
}

/// Variables that only tune a program's own behaviour or output.
fn is_plain_setting(upper: &str) -> bool {
    const PLAIN: &[&str] = &[
        "CI",
        "DEBUG",
        "VERBOSE",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "TERM",
        "COLUMNS",
        "LANG",
        "LANGUAGE",
        "LC_ALL",
        "LC_MESSAGES",
        "TZ",
        "SOURCE_DATE_EPOCH",
        "NODE_ENV",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "RUST_LIB_BACKTRACE",
        "RUST_TEST_THREADS",
        "RUST_MIN_STACK",
        "CARGO_TERM_COLOR",
        "CARGO_TERM_VERBOSE",
        "CARGO_TERM_QUIET",
        "CARGO_INCREMENTAL",
        "CARGO_BUILD_JOBS",
        "CARGO_TARGET_DIR",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONHASHSEED",
        "PYTHONWARNINGS",
        "PYTHONFAULTHANDLER",
        "DOTNET_CLI_TELEMETRY_OPTOUT",
        "DOTNET_NOLOGO",
        "DOTNET_SKIP_FIRST_TIME_EXPERIENCE",
        "DOTNET_ENVIRONMENT",
        "ASPNETCORE_ENVIRONMENT",
        "CONFIGURATION",
        "CMAKE_BUILD_PARALLEL_LEVEL",
        "CMAKE_BUILD_TYPE",
        "CMAKE_GENERATOR",
        "CTEST_OUTPUT_ON_FAILURE",
        "CTEST_PARALLEL_LEVEL",
        "OMP_NUM_THREADS",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
    ];
    PLAIN.contains(&upper)
}

#[cfg(test)]
mod tests;
