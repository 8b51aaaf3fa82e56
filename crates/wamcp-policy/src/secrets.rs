//! Where credentials live: the places no tool reads and no confined command
//! sees without the user.
//!
//! A key that an injected page talks the model into reading is one upload
//! away from an attacker, so the places are refused by what they are (a
//! resolved path), not by how a call spells them. The table is data: the
//! user adds to it (`WAMCP_SECRET_PATHS`), nothing a project writes can
//! take an entry away.

use crate::workspace::PathStyle;

/// Where an entry of the table is anchored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    /// The home folder (`$HOME`, `%USERPROFILE%`).
    Home,
    /// `$XDG_CONFIG_HOME`, else `~/.config` (Unix only).
    Config,
    /// `%APPDATA%` (Windows only).
    AppData,
    /// `%LOCALAPPDATA%` (Windows only).
    LocalAppData,
}

/// One place: its base, its path below it (`/`-separated) and what it holds.
struct Entry(Base, &'static str, &'static str);

const SSH: &str = "SSH keys";
const CLOUD: &str = "cloud credentials";
const REGISTRY: &str = "package registry tokens";
const GIT: &str = "git and GitHub credentials";
const KEYS: &str = "private keys and passwords";
const BROWSER: &str = "a browser profile (saved passwords and cookies)";
const AGENT: &str = "a coding agent's sign-in token";
const HISTORY: &str = "shell history (commands typed with their secrets)";

/// Places on every platform, below the home folder.
const EVERYWHERE: &[Entry] = &[
    Entry(Base::Home, ".ssh", SSH),
    Entry(Base::Home, ".aws", CLOUD),
    Entry(Base::Home, ".azure", CLOUD),
    Entry(Base::Home, ".kube", CLOUD),
    Entry(Base::Home, ".docker/config.json", REGISTRY),
    Entry(Base::Home, ".git-credentials", GIT),
    Entry(Base::Home, ".netrc", GIT),
    Entry(Base::Home, ".npmrc", REGISTRY),
    Entry(Base::Home, ".pypirc", REGISTRY),
    Entry(Base::Home, ".cargo/credentials", REGISTRY),
    Entry(Base::Home, ".cargo/credentials.toml", REGISTRY),
    Entry(Base::Home, ".gnupg", KEYS),
    Entry(Base::Home, ".password-store", KEYS),
    Entry(Base::Home, ".terraform.d/credentials.tfrc.json", CLOUD),
    Entry(Base::Home, ".config/gcloud", CLOUD),
    Entry(Base::Home, ".config/gh", GIT),
    Entry(Base::Home, ".config/git/credentials", GIT),
    Entry(Base::Home, ".config/glab-cli", GIT),
    Entry(Base::Home, ".claude/.credentials.json", AGENT),
    Entry(Base::Home, ".codex/auth.json", AGENT),
    Entry(Base::Home, ".config/github-copilot", AGENT),
    Entry(Base::Home, ".config/containers/auth.json", REGISTRY),
    Entry(Base::Home, ".vault-token", CLOUD),
    Entry(Base::Home, ".pgpass", KEYS),
    Entry(Base::Home, ".m2/settings.xml", REGISTRY),
    Entry(Base::Home, ".gradle/gradle.properties", REGISTRY),
    Entry(Base::Home, ".gem/credentials", REGISTRY),
    Entry(Base::Home, ".yarnrc.yml", REGISTRY),
    Entry(Base::Home, ".config/rclone", CLOUD),
    Entry(Base::Home, ".bash_history", HISTORY),
    Entry(Base::Home, ".zsh_history", HISTORY),
    Entry(Base::Home, ".python_history", HISTORY),
    Entry(Base::Home, ".psql_history", HISTORY),
    Entry(Base::Home, ".mysql_history", HISTORY),
];

/// Unix places besides [`EVERYWHERE`].
const UNIX: &[Entry] = &[
    Entry(Base::Config, "gcloud", CLOUD),
    Entry(Base::Config, "gh", GIT),
    Entry(Base::Config, "hub", GIT),
    Entry(Base::Config, "google-chrome", BROWSER),
    Entry(Base::Config, "chromium", BROWSER),
    Entry(Base::Config, "microsoft-edge", BROWSER),
    Entry(Base::Config, "BraveSoftware", BROWSER),
    Entry(Base::Config, "vivaldi", BROWSER),
    Entry(Base::Config, "opera", BROWSER),
    Entry(Base::Config, "git/credentials", GIT),
    Entry(Base::Home, ".mozilla", BROWSER),
    Entry(Base::Home, ".thunderbird", BROWSER),
    Entry(Base::Home, "snap/firefox/common/.mozilla", BROWSER),
    Entry(Base::Home, "snap/chromium/common/chromium", BROWSER),
    Entry(
        Base::Home,
        ".var/app",
        "Flatpak apps' data (their browser profiles among it)",
    ),
    Entry(Base::Home, ".local/share/fish/fish_history", HISTORY),
    Entry(Base::Home, ".local/share/keyrings", KEYS),
    Entry(Base::Home, "Library/Keychains", KEYS),
    Entry(
        Base::Home,
        "Library/Application Support/Google/Chrome",
        BROWSER,
    ),
    Entry(Base::Home, "Library/Application Support/Firefox", BROWSER),
    Entry(
        Base::Home,
        "Library/Application Support/Microsoft Edge",
        BROWSER,
    ),
];

/// Windows places besides [`EVERYWHERE`].
const WINDOWS: &[Entry] = &[
    Entry(Base::Home, "_netrc", GIT),
    Entry(Base::AppData, "Microsoft/Credentials", KEYS),
    Entry(Base::LocalAppData, "Microsoft/Credentials", KEYS),
    Entry(Base::AppData, "Microsoft/Protect", KEYS),
    Entry(Base::AppData, "Microsoft/Crypto", KEYS),
    Entry(Base::AppData, "Microsoft/SystemCertificates/My", KEYS),
    Entry(Base::AppData, "gcloud", CLOUD),
    Entry(Base::AppData, "GitHub CLI", GIT),
    Entry(Base::AppData, "gnupg", KEYS),
    Entry(Base::AppData, "npm/etc/npmrc", REGISTRY),
    Entry(Base::AppData, "NuGet/NuGet.Config", REGISTRY),
    Entry(Base::AppData, "Mozilla/Firefox/Profiles", BROWSER),
    Entry(
        Base::AppData,
        "Microsoft/Windows/PowerShell/PSReadLine",
        HISTORY,
    ),
    Entry(Base::LocalAppData, "Google/Chrome/User Data", BROWSER),
    Entry(Base::LocalAppData, "Microsoft/Edge/User Data", BROWSER),
    Entry(
        Base::LocalAppData,
        "BraveSoftware/Brave-Browser/User Data",
        BROWSER,
    ),
];

/// A place where credentials live, as an absolute path in the platform's
/// spelling, with what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Store {
    /// The place; it and everything below it are secret.
    pub path: String,
    /// What it holds, for the refusal ("SSH keys").
    pub what: String,
    /// Whether git needs it to reach a remote (SSH keys and known hosts,
    /// git's credential files and the GitHub CLI's token): git, run
    /// through its grammar, is the one confined program that sees it.
    pub for_git: bool,
}

/// The platform's secret stores, reading the base folders through `env`
/// (`HOME` comes in as `home`). A base that is not set contributes nothing;
/// a place that does not exist is listed all the same (it may appear later).
pub fn stores(
    style: PathStyle,
    home: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Vec<Store> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let (separator, own) = match style {
        PathStyle::Windows => ('\\', WINDOWS),
        PathStyle::Unix => ('/', UNIX),
    };
    let config = var("XDG_CONFIG_HOME")
        .filter(|v| v.starts_with('/'))
        .or_else(|| home.map(|h| format!("{}/.config", h.trim_end_matches('/'))));
    let base = |b: Base| -> Option<String> {
        match b {
            Base::Home => home.map(str::to_string),
            Base::Config => config.clone(),
            Base::AppData => var("APPDATA"),
            Base::LocalAppData => var("LOCALAPPDATA"),
        }
    };
    let mut out: Vec<Store> = Vec::new();
    for Entry(b, below, what) in EVERYWHERE.iter().chain(own) {
        let Some(anchor) = base(*b) else { continue };
        let path = format!(
            "{}{separator}{}",
            anchor.trim_end_matches(['/', '\\']),
            below.replace('/', &separator.to_string())
        );
        if !out.iter().any(|s| s.path == path) {
            out.push(Store {
                path,
                what: (*what).to_string(),
                for_git: [SSH, GIT].contains(what),
            });
        }
    }
    out
}

/// Sockets of daemons that act outside any sandbox for whoever connects:
/// the session bus (which starts programs as systemd units), Docker and
/// its kin (root on the machine), the SSH agent (signs as the user). A
/// command with the network could connect to them, so every command sees
/// them empty; git, which signs in through the agent, keeps the agent and
/// the folder it lives in. Unix paths; `ssh_auth_sock` and
/// `runtime_dir` are `SSH_AUTH_SOCK` and `XDG_RUNTIME_DIR`.
pub fn daemon_sockets(
    ssh_auth_sock: Option<&str>,
    runtime_dir: Option<&str>,
    uid: Option<u32>,
    home: Option<&str>,
) -> Vec<(String, bool)> {
    let agent = ssh_auth_sock.filter(|s| s.starts_with('/'));
    let holds_agent = |dir: &str| {
        agent.is_some_and(|a| a.starts_with(&format!("{}/", dir.trim_end_matches('/'))))
    };
    let mut places: Vec<(String, bool)> = ["/run/user"]
        .into_iter()
        .chain(runtime_dir.filter(|d| d.starts_with('/')))
        .map(|dir| (dir.to_string(), holds_agent(dir)))
        .collect();
    for socket in [
        "/run/docker.sock",
        "/var/run/docker.sock",
        "/run/containerd",
        "/run/podman",
        "/run/dbus",
        "/var/run/dbus",
        "/run/snapd.socket",
        "/run/snapd-snap.socket",
        "/run/libvirt",
        "/var/run/libvirt",
        "/run/incus",
        "/var/lib/incus/unix.socket",
        "/var/lib/lxd/unix.socket",
        "/var/snap/lxd/common/lxd/unix.socket",
        "/run/screen",
        "/var/run/screen",
        // The X server types into every window of the session.
        "/tmp/.X11-unix",
    ] {
        places.push((socket.to_string(), false));
    }
    if let Some(uid) = uid {
        places.push((format!("/tmp/tmux-{uid}"), false));
    }
    if let Some(home) = home.filter(|h| h.starts_with('/')) {
        let home = home.trim_end_matches('/');
        for below in [".docker/desktop", ".colima", ".rd", ".lima", ".Xauthority"] {
            places.push((format!("{home}/{below}"), false));
        }
    }
    if let Some(agent) = agent {
        places.push((agent.to_string(), true));
    }
    places
}

/// Whether a file name is a dotenv file (`.env`, `.env.local`, `.envrc`),
/// which holds a project's secrets; the templates committed beside them
/// (`.env.example`, `.env.sample`, `.env.template`, `.env.dist`) do not.
pub fn is_env_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if !lower.starts_with(".env") {
        return false;
    }
    let templates = [".example", ".sample", ".template", ".dist", ".defaults"];
    !templates.iter().any(|t| lower.ends_with(t))
}

/// Words in a variable's name that mark its value as a credential
/// (`GITHUB_TOKEN`, `OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`,
/// `PGPASSWORD`), matched anywhere in the name and without case, as Codex's
/// default exclusions do.
const SECRET_NAME_WORDS: [&str; 8] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSW",
    "PASSPHRASE",
    "CREDENTIAL",
    "COOKIE",
    "WEBHOOK",
];

/// Short words that mark a credential only as a whole part of the name
/// between underscores (`MYSQL_PWD`, `GH_PAT`, `CI_JOB_JWT`,
/// `DOCKER_AUTH_CONFIG`, npm's `_auth`): inside a word they are something
/// else (`PATH`, `OLDPWD`, `GIT_AUTHOR_NAME`, `XAUTHORITY`).
const SECRET_NAME_PARTS: [&str; 5] = ["PWD", "PAT", "JWT", "AUTH", "DSN"];

/// Settings inside a value that hold a credential: a connection string's
/// (`AccountKey=`, `Password=`), a URL query's (`?password=`, `&sig=`).
const SECRET_VALUE_FIELDS: [&str; 7] = [
    "password=",
    "pwd=",
    "accountkey=",
    "sharedaccesskey=",
    "secret=",
    "token=",
    "sig=",
];

/// Names the rules above would take that hold no credential: the agent's
/// socket (a command that may sign in gets it from the OS layer's rules).
const NOT_SECRET: [&str; 1] = ["SSH_AUTH_SOCK"];

/// Whether a variable of the server's environment holds a credential a
/// command has no business reading: its name says so, or its value is a URL
/// with a password in it (`DATABASE_URL=postgres://u:pw@db/x`, an index
/// URL carrying a token).
pub fn is_secret_variable(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NOT_SECRET.contains(&upper.as_str()) {
        return false;
    }
    let parts: Vec<&str> = upper.split('_').collect();
    // A password manager's unlocked session: Bitwarden's, 1Password's.
    let session = parts.contains(&"SESSION") && ["BW", "OP"].contains(&parts[0]);
    // A password by its short name: `DB_PASS`, `SSHPASS`, `PGPASS`.
    let pass = parts.iter().any(|p| p.ends_with("PASS"));
    let lower = value.to_ascii_lowercase();
    SECRET_NAME_WORDS.iter().any(|w| upper.contains(w))
        || (parts.len() > 1 && SECRET_NAME_PARTS.iter().any(|p| parts.contains(p)))
        || session
        || pass
        || has_url_password(value)
        || SECRET_VALUE_FIELDS.iter().any(|f| lower.contains(f))
}

/// Whether `value` holds `scheme://user:password@host`. The password is
/// taken up to the last `@` before a space, whatever it holds: a real one
/// often carries `/`, `#` or `?` without the escaping URLs want.
fn has_url_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let word = rest.split(char::is_whitespace).next().unwrap_or("");
        word.rsplit_once('@')
            .is_some_and(|(user, _)| user.contains(':'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_variables_are_told_from_what_commands_need() {
        for (name, value) in [
            ("GITHUB_TOKEN", "ghp_x"),
            ("OPENAI_API_KEY", "sk-x"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("PGPASSWORD", "x"),
            ("npm_config__authToken", "x"),
            ("CARGO_REGISTRIES_MY_TOKEN", "x"),
            ("GPG_PASSPHRASE", "x"),
            ("AZURE_CLIENT_CREDENTIALS", "x"),
            (
                "DATABASE_URL",
                "postgres://app:hunter2@db.internal:5432/app",
            ),
            (
                "PIP_INDEX_URL",
                "https://__token__:pypi-x@pypi.example/simple",
            ),
            ("NOTES", "see https://u:p@h/ for x"),
            ("DATABASE_URL", "postgres://app:Zx9/q+Lw@db/app"),
            ("REDIS_URL", "redis://default:pw#1@h"),
            ("AMQP_URL", "amqp://u:a?b@h"),
            ("MYSQL_PWD", "x"),
            ("GH_PAT", "x"),
            ("CI_JOB_JWT", "x"),
            ("DOCKER_AUTH_CONFIG", "{}"),
            ("npm_config__auth", "x"),
            ("BW_SESSION", "x"),
            ("OP_SESSION_my", "x"),
            ("SESSION_COOKIE", "x"),
            ("SSHPASS", "x"),
            ("DB_PASS", "x"),
            ("PGPASS", "x"),
            (
                "AZURE_STORAGE_CONNECTION_STRING",
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=x==",
            ),
            ("JDBC_URL", "jdbc:postgresql://db/app?user=a&password=x"),
            (
                "SLACK_WEBHOOK_URL",
                "https://hooks.slack.com/services/T/B/x",
            ),
            ("SENTRY_DSN", "https://k@o.ingest.sentry.io/1"),
            ("BLOB_URL", "https://a.blob.core.windows.net/c?sv=1&sig=x"),
        ] {
            assert!(is_secret_variable(name, value), "{name}={value}");
        }
        for (name, value) in [
            ("PATH", "/usr/bin:/bin"),
            ("SSH_AUTH_SOCK", "/run/user/1000/ssh-agent"),
            ("XAUTHORITY", "/home/u/.Xauthority"),
            ("HOME", "/home/u"),
            ("CARGO_HOME", "/home/u/.cargo"),
            ("GIT_SSH_COMMAND", "ssh -i /k"),
            ("RUSTFLAGS", "-C target-cpu=native"),
            ("DATABASE_URL", "postgres://app@db.internal/app"),
            ("PIP_INDEX_URL", "https://pypi.example/simple?user=a:b"),
            ("REPO", "git@github.com:o/r.git"),
            ("PWD", "/home/u/proj"),
            ("OLDPWD", "/home/u"),
            ("GIT_AUTHOR_NAME", "A"),
            ("GIT_AUTHOR_EMAIL", "a@b"),
            ("XDG_SESSION_ID", "3"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            ("DESKTOP_SESSION", "gnome"),
            ("MANPATH", "/usr/share/man"),
        ] {
            assert!(!is_secret_variable(name, value), "{name}={value}");
        }
    }

    fn paths(stores: &[Store]) -> Vec<&str> {
        stores.iter().map(|s| s.path.as_str()).collect()
    }

    #[test]
    fn unix_stores_sit_below_home_and_the_config_folder() {
        let stores = stores(PathStyle::Unix, Some("/home/ada"), |name| {
            (name == "XDG_CONFIG_HOME").then(|| "/cfg".to_string())
        });
        let paths = paths(&stores);
        for expected in [
            "/home/ada/.ssh",
            "/home/ada/.aws",
            "/home/ada/.docker/config.json",
            "/home/ada/.cargo/credentials.toml",
            "/home/ada/.config/gh",
            "/cfg/gh",
            "/cfg/google-chrome",
            "/home/ada/.mozilla",
        ] {
            assert!(
                paths.contains(&expected),
                "{expected} missing from {paths:?}"
            );
        }
        assert!(!paths.iter().any(|p| p.contains("Credentials")));
        let ssh = stores.iter().find(|s| s.path == "/home/ada/.ssh").unwrap();
        assert_eq!(ssh.what, "SSH keys");
        assert!(ssh.for_git);
        let aws = stores.iter().find(|s| s.path == "/home/ada/.aws").unwrap();
        assert!(!aws.for_git);
    }

    #[test]
    fn the_config_folder_defaults_below_home_and_is_listed_once() {
        let stores = stores(PathStyle::Unix, Some("/home/ada/"), |_| None);
        let listed = paths(&stores);
        assert_eq!(
            listed
                .iter()
                .filter(|p| **p == "/home/ada/.config/gh")
                .count(),
            1
        );
        // A relative XDG value is ignored, as the XDG specification says.
        let relative = super::stores(PathStyle::Unix, Some("/h"), |_| Some("cfg".into()));
        assert!(paths(&relative).contains(&"/h/.config/gcloud"));
    }

    #[test]
    fn windows_stores_use_appdata_and_backslashes() {
        let stores = stores(
            PathStyle::Windows,
            Some(r"C:\Users\Ada"),
            |name| match name {
                "APPDATA" => Some(r"C:\Users\Ada\AppData\Roaming".into()),
                "LOCALAPPDATA" => Some(r"C:\Users\Ada\AppData\Local".into()),
                _ => None,
            },
        );
        let paths = paths(&stores);
        for expected in [
            r"C:\Users\Ada\.ssh",
            r"C:\Users\Ada\_netrc",
            r"C:\Users\Ada\.cargo\credentials.toml",
            r"C:\Users\Ada\AppData\Roaming\Microsoft\Credentials",
            r"C:\Users\Ada\AppData\Roaming\Microsoft\Protect",
            r"C:\Users\Ada\AppData\Local\Google\Chrome\User Data",
        ] {
            assert!(
                paths.contains(&expected),
                "{expected} missing from {paths:?}"
            );
        }
        assert!(!paths.iter().any(|p| p.contains('/')));
    }

    #[test]
    fn no_home_and_no_variables_give_no_stores() {
        assert!(stores(PathStyle::Windows, None, |_| None).is_empty());
        assert!(stores(PathStyle::Unix, None, |_| Some("  ".into())).is_empty());
    }

    #[test]
    fn daemon_sockets_are_hidden_and_git_keeps_the_agent() {
        let places = daemon_sockets(
            Some("/run/user/1000/keyring/ssh"),
            Some("/run/user/1000"),
            Some(1000),
            Some("/home/ada"),
        );
        assert!(places.contains(&("/tmp/tmux-1000".into(), false)));
        assert!(places.contains(&("/tmp/.X11-unix".into(), false)));
        assert!(places.contains(&("/home/ada/.docker/desktop".into(), false)));
        assert!(places.contains(&("/run/user".into(), true)));
        assert!(places.contains(&("/run/user/1000".into(), true)));
        assert!(places.contains(&("/var/run/docker.sock".into(), false)));
        assert!(places.contains(&("/run/user/1000/keyring/ssh".into(), true)));
        let elsewhere = daemon_sockets(
            Some("/tmp/ssh-x/agent.1"),
            Some("/run/user/1000"),
            None,
            None,
        );
        assert!(elsewhere.contains(&("/run/user/1000".into(), false)));
        assert!(elsewhere.contains(&("/tmp/ssh-x/agent.1".into(), true)));
        let none = daemon_sockets(Some("relative"), None, None, Some("relative"));
        assert!(none.iter().all(|(p, git)| p.starts_with('/') && !git));
    }

    #[test]
    fn dotenv_files_but_not_their_templates() {
        for secret in [
            ".env",
            ".env.local",
            ".ENV.production",
            ".envrc",
            ".env.test",
        ] {
            assert!(is_env_file(secret), "{secret}");
        }
        for other in [
            "env",
            "x.env",
            ".env.example",
            ".env.Sample",
            ".env.template",
            ".env.dist",
            ".environment.defaults",
            "environment.ts",
        ] {
            assert!(!is_env_file(other), "{other}");
        }
    }
}
