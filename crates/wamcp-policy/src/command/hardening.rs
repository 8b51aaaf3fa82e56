//! Environment added to an allowed program's process, for what its arguments
//! cannot express.
//!
//! git finds a repository by walking up from its working directory, and a
//! *bare* repository is any directory holding `HEAD`, `objects/` and `refs/`:
//! files the agent can write. Its `config` would then be read, and keys such
//! as `core.fsmonitor` run programs. `safe.bareRepository=explicit` makes git
//! use a bare repository only when `--git-dir` names it (which the grammar
//! asks about). The setting must come from the command-line scope to count,
//! which `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` is. Local-path transports are
//! off for the same reason: the other side runs under its own configuration.
//!
//! A repository's own `.git/config` may come from anywhere (a downloaded
//! archive, or a confined command where the OS layer cannot make `.git`
//! read-only), and keys there name programs git runs: with network for
//! `fetch`, `pull` and `push`. The keys that run a program on everyday
//! commands are pinned in the same command scope, which outranks the
//! repository's file, to the user's own global and system values (which no
//! confined command can write). What is left (filter drivers named by
//! `.gitattributes`, a credential helper — pinning it would drop the
//! user's own) is named in docs/commands.md.

/// A hooks folder that cannot exist, so no hook is found.
const NO_HOOKS: &str = if cfg!(windows) { "NUL" } else { "/dev/null" };

/// What git's program-running settings are pinned to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitPins {
    /// The user's global or system `core.sshCommand`, else `ssh`.
    pub ssh_command: String,
    /// The user's global or system `gpg.program`, else `gpg`.
    pub gpg_program: String,
    /// The user's system and global `credential.helper`s, in git's order:
    /// a repository's own helper is a program the repository names.
    pub credential_helpers: Vec<String>,
    /// The user's global or system `core.askPass`, else none.
    pub ask_pass: String,
    /// The program (quoted for a shell) that carries an SSH connection
    /// through the egress proxy, given the host and port: a command with the
    /// network has no other way out, and ssh speaks no HTTP proxy protocol.
    pub ssh_relay: Option<String>,
}

impl Default for GitPins {
    fn default() -> GitPins {
        GitPins {
            ssh_command: "ssh".into(),
            gpg_program: "gpg".into(),
            credential_helpers: Vec::new(),
            ask_pass: String::new(),
            ssh_relay: None,
        }
    }
}

/// Variables to set for `program` (as rules name it); `get` reads the
/// server's environment, so existing command-scope settings are kept.
pub fn child_env(
    program: &str,
    get: impl Fn(&str) -> Option<String>,
    pins: &GitPins,
) -> Vec<(String, String)> {
    if program != "git" {
        return Vec::new();
    }
    let first = get("GIT_CONFIG_COUNT")
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let ssh_command = ssh_through(&pins.ssh_command, pins.ssh_relay.as_deref());
    let mut settings = vec![
        ("safe.bareRepository", "explicit"),
        // The ext:: transport runs a command; refused in arguments already.
        ("protocol.ext.allow", "never"),
        // A repository reached by a local path runs upload-pack and
        // receive-pack under its own configuration (and hooks): one the agent
        // wrote file by file would run what it says (`git push ../evil`).
        ("protocol.file.allow", "never"),
        // Programs a repository's config can name: run on status and diff
        // (fsmonitor), on every fetch/push over SSH (sshCommand), by the git
        // protocol (gitProxy), around commits and checkouts (hooks), and to
        // check signatures (gpg.program).
        ("core.fsmonitor", "false"),
        ("core.sshCommand", ssh_command.as_str()),
        ("core.gitProxy", ""),
        ("gpg.program", pins.gpg_program.as_str()),
        ("core.askPass", pins.ask_pass.as_str()),
        // A submodule is another repository with its own config: status
        // and diff do not look into its work tree (its filters would run).
        ("submodule.recurse", "false"),
        ("diff.ignoreSubmodules", "dirty"),
        // An empty value drops the helpers of every file; the user's come back.
        ("credential.helper", ""),
    ];
    settings.extend(
        pins.credential_helpers
            .iter()
            .map(|helper| ("credential.helper", helper.as_str())),
    );
    // Hooks never run through wamcp: a hook runs as git's child with `.git`
    // writable, and it (or the project scripts it calls, which a command
    // could have changed) could leave a program there for the user's git.
    settings.push(("core.hooksPath", NO_HOOKS));
    let mut env = Vec::new();
    for (offset, (key, value)) in settings.iter().enumerate() {
        env.push((
            format!("GIT_CONFIG_KEY_{}", first + offset),
            key.to_string(),
        ));
        env.push((
            format!("GIT_CONFIG_VALUE_{}", first + offset),
            value.to_string(),
        ));
    }
    env.push((
        "GIT_CONFIG_COUNT".to_string(),
        (first + settings.len()).to_string(),
    ));
    // A credential prompt on the server's terminal would wait until the timeout.
    env.push(("GIT_TERMINAL_PROMPT".to_string(), "0".to_string()));
    env
}

/// The SSH command git runs: the user's, told to connect through `relay`
/// when there is one and the command is OpenSSH's (`-o` is its syntax; an
/// option on the command line outranks the user's `~/.ssh/config`). git
/// runs the value through a shell, and ssh runs `ProxyCommand` through one
/// again, after expanding `%` tokens: hence a quote per level and `%%`.
fn ssh_through(ssh_command: &str, relay: Option<&str>) -> String {
    let Some(relay) = relay.filter(|_| is_openssh(ssh_command)) else {
        return ssh_command.to_string();
    };
    // The host in quotes too, though ssh refuses one with shell syntax
    // before it gets here (wamcp uses the relay only with such an ssh).
    let proxy = format!("ProxyCommand={} '%h' %p", relay.replace('%', "%%"));
    format!("{ssh_command} -o {}", quote_for_shell(&proxy))
}

/// Whether the command's program is OpenSSH's client (`ssh`, a path to it,
/// or `ssh.exe`), which takes `-o ProxyCommand=`; plink and others do not.
fn is_openssh(command: &str) -> bool {
    let program = command.split_whitespace().next().unwrap_or("");
    let name = program.rsplit(['/', '\\']).next().unwrap_or("");
    name.eq_ignore_ascii_case("ssh") || name.eq_ignore_ascii_case("ssh.exe")
}

/// `text` as one word of a POSIX shell.
pub fn quote_for_shell(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Adds `key=value` to the command-scope settings `env` already holds,
/// after them: a later value of a key wins.
pub fn push_git_setting(env: &mut Vec<(String, String)>, key: &str, value: &str) {
    let Some(at) = env.iter().position(|(k, _)| k == "GIT_CONFIG_COUNT") else {
        return;
    };
    let n: usize = env[at].1.parse().unwrap_or(0);
    env[at].1 = (n + 1).to_string();
    env.push((format!("GIT_CONFIG_KEY_{n}"), key.to_string()));
    env.push((format!("GIT_CONFIG_VALUE_{n}"), value.to_string()));
}

/// The keys of a git config file that name a program git (or the user's
/// editor integration) runs, which a git command through wamcp may not add
/// or change: a hook or a filter running as git's child could otherwise
/// write `core.fsmonitor` into the repository's own config, and the user's
/// git would run it later, outside any sandbox.
fn names_a_program(key: &str, value: &str) -> bool {
    const EXACT: &[&str] = &[
        "core.fsmonitor",
        "core.hookspath",
        "core.sshcommand",
        "core.gitproxy",
        "core.editor",
        "core.pager",
        "core.askpass",
        "sequence.editor",
        "gpg.program",
        "diff.external",
        "include.path",
        "init.templatedir",
        "credential.helper",
        "uploadpack.packobjectshook",
        "gpg.ssh.defaultkeycommand",
    ];
    let parts: Vec<&str> = key.split('.').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    // Quotes may wrap any part of a value: `"!sh" -c x` is `!sh -c x`.
    let runs_a_shell = value.replace('"', "").trim_start().starts_with('!');
    EXACT.contains(&key)
        || (["alias", "submodule"].contains(&first) && runs_a_shell)
        || (first == "filter" && ["clean", "smudge", "process"].contains(&last))
        || (first == "diff" && ["textconv", "command"].contains(&last))
        || (first == "merge" && last == "driver")
        || (["gpg", "credential"].contains(&first) && ["program", "helper"].contains(&last))
        || (first == "includeif" && last == "path")
        || (first == "remote" && ["uploadpack", "receivepack"].contains(&last))
        || (["difftool", "mergetool", "man", "browser"].contains(&first)
            && ["cmd", "path"].contains(&last))
        || first == "pager"
}

/// Every `section[.subsection].key = value` of a git config file, keys
/// lower-cased (subsections too: enough to compare two versions).
fn config_entries(text: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut entries = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.split(']').next().unwrap_or("");
            section = match header.split_once(char::is_whitespace) {
                Some((name, sub)) => format!("{}.{}", name.trim(), sub.trim().trim_matches('"')),
                None => header.trim().to_string(),
            }
            .to_ascii_lowercase();
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, "true"));
        entries.push((
            format!("{section}.{}", key.trim().to_ascii_lowercase()),
            value.trim().to_string(),
        ));
    }
    entries
}

/// The keys [`child_env`] pins for a git with the network (hooks are off
/// for it), which a repository's config therefore cannot steer.
const PINNED_FOR_THE_NETWORK: &[&str] = &[
    "core.fsmonitor",
    "core.sshcommand",
    "core.gitproxy",
    "gpg.program",
    "core.askpass",
    "credential.helper",
    "core.hookspath",
];

/// The keys of a git config file that name a program a git with the
/// network would still run as its child (`submodule.x.update = !cmd`, a
/// filter or merge driver, an include that could hold either): with one,
/// git must not see the user's keys.
pub fn unpinned_program_keys(config: &str) -> Vec<String> {
    if unread_syntax(config) {
        return vec![UNREAD.to_string()];
    }
    let mut keys: Vec<String> = config_entries(config)
        .into_iter()
        .filter(|(key, value)| {
            names_a_program(key, value) && !PINNED_FOR_THE_NETWORK.contains(&key.as_str())
        })
        .map(|(key, _)| key)
        .collect();
    keys.dedup();
    keys
}

/// What a config in syntax [`config_entries`] does not read is reported as.
const UNREAD: &str = "(config syntax wamcp does not read)";

/// Whether a git config uses syntax that git reads and [`config_entries`]
/// does not, which could hide a key from it: a byte order mark, a key on
/// the line of its `[section]`, a value continued with `\`. Such a file
/// counts as naming a program.
fn unread_syntax(config: &str) -> bool {
    config.starts_with('\u{feff}')
        || config.lines().any(|line| {
            let line = line.trim();
            let after_header = line
                .strip_prefix('[')
                .and_then(|rest| rest.rsplit_once(']'))
                .map(|(_, after)| after.trim());
            after_header.is_some_and(|a| !a.is_empty() && !a.starts_with(['#', ';']))
                || line.ends_with('\\')
        })
}

/// The program-naming keys `after` adds to or changes from `before` (two
/// versions of one git config file).
pub fn program_keys_changed(before: &str, after: &str) -> Vec<String> {
    if unread_syntax(after) && after != before {
        return vec![UNREAD.to_string()];
    }
    let old = config_entries(before);
    let mut changed: Vec<String> = config_entries(after)
        .into_iter()
        .filter(|(key, value)| {
            names_a_program(key, value) && !old.contains(&(key.clone(), value.clone()))
        })
        .map(|(key, _)| key)
        .collect();
    changed.dedup();
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_gets_command_scope_settings_after_any_existing_ones() {
        let env = child_env("git", |_| None, &GitPins::default());
        assert_eq!(
            env,
            [
                ("GIT_CONFIG_KEY_0", "safe.bareRepository"),
                ("GIT_CONFIG_VALUE_0", "explicit"),
                ("GIT_CONFIG_KEY_1", "protocol.ext.allow"),
                ("GIT_CONFIG_VALUE_1", "never"),
                ("GIT_CONFIG_KEY_2", "protocol.file.allow"),
                ("GIT_CONFIG_VALUE_2", "never"),
                ("GIT_CONFIG_KEY_3", "core.fsmonitor"),
                ("GIT_CONFIG_VALUE_3", "false"),
                ("GIT_CONFIG_KEY_4", "core.sshCommand"),
                ("GIT_CONFIG_VALUE_4", "ssh"),
                ("GIT_CONFIG_KEY_5", "core.gitProxy"),
                ("GIT_CONFIG_VALUE_5", ""),
                ("GIT_CONFIG_KEY_6", "gpg.program"),
                ("GIT_CONFIG_VALUE_6", "gpg"),
                ("GIT_CONFIG_KEY_7", "core.askPass"),
                ("GIT_CONFIG_VALUE_7", ""),
                ("GIT_CONFIG_KEY_8", "submodule.recurse"),
                ("GIT_CONFIG_VALUE_8", "false"),
                ("GIT_CONFIG_KEY_9", "diff.ignoreSubmodules"),
                ("GIT_CONFIG_VALUE_9", "dirty"),
                ("GIT_CONFIG_KEY_10", "credential.helper"),
                ("GIT_CONFIG_VALUE_10", ""),
                ("GIT_CONFIG_KEY_11", "core.hooksPath"),
                ("GIT_CONFIG_VALUE_11", NO_HOOKS),
                ("GIT_CONFIG_COUNT", "12"),
                ("GIT_TERMINAL_PROMPT", "0"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        let env = child_env(
            "git",
            |k| (k == "GIT_CONFIG_COUNT").then(|| "3".to_string()),
            &GitPins::default(),
        );
        assert_eq!(env[0].0, "GIT_CONFIG_KEY_3");
        assert!(env.contains(&("GIT_CONFIG_COUNT".into(), "15".into())));
        assert!(child_env("cmake", |_| None, &GitPins::default()).is_empty());
    }

    #[test]
    fn only_programs_the_pins_leave_to_a_repository_count() {
        let husky =
            "[core]\n\thooksPath = .husky/_\n\tfsmonitor = true\n[credential]\n\thelper = store\n";
        assert!(unpinned_program_keys(husky).is_empty());
        let planted = "[submodule \"s\"]\n\tupdate = !sh x\n[filter \"lfs\"]\n\tsmudge = git-lfs smudge\n\
                       [include]\n\tpath = ../x\n[credential \"https://h\"]\n\thelper = !sh y\n";
        assert_eq!(
            unpinned_program_keys(planted),
            [
                "submodule.s.update",
                "filter.lfs.smudge",
                "include.path",
                "credential.https://h.helper"
            ]
        );
        assert!(unpinned_program_keys("[submodule \"s\"]\n\tupdate = checkout\n").is_empty());
        // Syntax git reads that could hide a key: reported, never read.
        for hidden in [
            "[submodule \"s\"] update = !sh x\n",
            "\u{feff}[submodule \"s\"]\n\tupdate = !sh x\n",
            "[submodule \"s\"]\n\tupdate = \\\n!sh x\n",
        ] {
            assert_eq!(unpinned_program_keys(hidden), [UNREAD], "{hidden:?}");
            assert_eq!(program_keys_changed("", hidden), [UNREAD], "{hidden:?}");
        }
        assert!(unpinned_program_keys("[core] # note\n\tbare = false\n").is_empty());
        let quoted = "[submodule \"s\"]\n\tupdate = \"!sh -c 'x'\"\n";
        assert_eq!(unpinned_program_keys(quoted), ["submodule.s.update"]);
    }

    #[test]
    fn program_naming_keys_added_to_a_config_are_found() {
        let before = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://x/r\n";
        let ordinary =
            format!("{before}[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n");
        assert!(program_keys_changed(before, &ordinary).is_empty());
        let cases = [
            ("[core]\n\tfsmonitor = sh x.sh\n", "core.fsmonitor"),
            ("[Core]\n\tHooksPath = .h\n", "core.hookspath"),
            ("[alias]\n\tst = !sh -c evil\n", "alias.st"),
            ("[filter \"lfs\"]\n\tclean = sh x\n", "filter.lfs.clean"),
            ("[diff \"x\"]\n\ttextconv = sh x\n", "diff.x.textconv"),
            ("[credential]\n\thelper = !sh x\n", "credential.helper"),
            ("[include]\n\tpath = ../evil\n", "include.path"),
            (
                "[includeIf \"gitdir:/\"]\n\tpath = ../evil\n",
                "includeif.gitdir:/.path",
            ),
            (
                "[remote \"o\"]\n\tuploadpack = sh x\n",
                "remote.o.uploadpack",
            ),
            (
                "[submodule \"s\"]\n\tupdate = !sh x\n",
                "submodule.s.update",
            ),
            (
                "[gpg \"ssh\"]\n\tdefaultKeyCommand = sh x\n",
                "gpg.ssh.defaultkeycommand",
            ),
        ];
        for (added, key) in cases {
            assert_eq!(
                program_keys_changed(before, &format!("{before}{added}")),
                [key],
                "{added}"
            );
        }
        // An alias that is another git command runs no program.
        assert!(
            program_keys_changed(before, &format!("{before}[alias]\n\tco = checkout\n")).is_empty()
        );
        // Unchanged program keys are the user's own.
        let theirs = format!("{before}[core]\n\tpager = less\n");
        assert!(program_keys_changed(&theirs, &theirs).is_empty());
    }

    #[test]
    fn the_users_own_programs_and_never_a_hook() {
        let pins = GitPins {
            ssh_command: "C:/Windows/System32/OpenSSH/ssh.exe".into(),
            gpg_program: "C:/Program Files (x86)/GnuPG/bin/gpg.exe".into(),
            credential_helpers: vec!["manager".into()],
            ask_pass: String::new(),
            ssh_relay: None,
        };
        let env = child_env("git", |_| None, &pins);
        let value = |key: &str| {
            let index = env.iter().position(|(_, v)| v == key)?;
            let n = env[index]
                .0
                .trim_start_matches("GIT_CONFIG_KEY_")
                .to_string();
            env.iter()
                .find(|(k, _)| *k == format!("GIT_CONFIG_VALUE_{n}"))
                .map(|(_, v)| v.clone())
        };
        assert_eq!(value("core.sshCommand").unwrap(), pins.ssh_command);
        assert_eq!(value("gpg.program").unwrap(), pins.gpg_program);
        assert_eq!(value("core.hooksPath").as_deref(), Some(NO_HOOKS));
        assert!(env.contains(&("GIT_CONFIG_COUNT".into(), "13".into())));
        let helpers: Vec<&str> = env
            .iter()
            .filter(|(_, v)| v == "credential.helper")
            .filter_map(|(k, _)| {
                let n = k.trim_start_matches("GIT_CONFIG_KEY_");
                env.iter()
                    .find(|(k, _)| *k == format!("GIT_CONFIG_VALUE_{n}"))
                    .map(|(_, v)| v.as_str())
            })
            .collect();
        assert_eq!(
            helpers,
            ["", "manager"],
            "the list is reset, then the user's"
        );
    }

    /// Splits `line` as a POSIX shell would, by asking one.
    #[cfg(unix)]
    fn words(line: &str) -> Vec<String> {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        text.split_terminator('\0').map(String::from).collect()
    }

    /// What git runs for SSH reaches the relay with the relay's own path,
    /// the host and the port as three words, through both shells (git's,
    /// then ssh's after it expands `%` tokens), whatever the path holds.
    #[cfg(unix)]
    #[test]
    fn ssh_reaches_the_relay_through_both_shells() {
        for exe in [
            "/usr/bin/wamcp",
            "/home/a b/wamcp",
            "/home/o'brien/wamcp",
            "/tmp/100%/$HOME/`x`/wamcp",
        ] {
            let relay = format!("{} __egress-connect", quote_for_shell(exe));
            let command = ssh_through("ssh -i /k", Some(&relay));
            let argv = words(&command);
            assert_eq!(argv[..4], ["ssh", "-i", "/k", "-o"], "{command}");
            let proxy = argv[4].strip_prefix("ProxyCommand=").unwrap();
            // ssh's expansion: %h, %p and %% (the path's % was doubled).
            let expanded = proxy
                .replace("%h", "github.com")
                .replace("%p", "22")
                .replace("%%", "%");
            assert_eq!(
                words(&expanded),
                [exe, "__egress-connect", "github.com", "22"],
                "{command}"
            );
        }
    }

    #[test]
    fn only_openssh_is_told_to_use_the_relay() {
        let relay = Some("'/w' __egress-connect");
        for ssh in [
            "ssh",
            "/usr/bin/ssh -v",
            "C:\\Windows\\System32\\OpenSSH\\ssh.exe",
        ] {
            assert!(ssh_through(ssh, relay).contains("ProxyCommand="), "{ssh}");
        }
        for other in ["plink -batch", "C:/PuTTY/plink.exe", "sshpass -p x ssh"] {
            assert_eq!(ssh_through(other, relay), other);
        }
        assert_eq!(ssh_through("ssh", None), "ssh");
    }
}
