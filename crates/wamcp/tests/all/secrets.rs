//! Secret stores over MCP: no reading tool hands out a canary key, however
//! the path is spelled, while the same tools keep working beside them.

use crate::common::Sandbox;
use serde_json::json;

const KEY: &str = "CANARY-PRIVATE-KEY-6f1d";

/// A home with keys and tokens in the usual places, and a project.
fn home_with_secrets() -> (Sandbox, std::path::PathBuf) {
    let (sandbox, project) = Sandbox::with_project();
    for secret in [
        "home/.ssh/id_ed25519",
        "home/.aws/credentials",
        "home/.config/gh/hosts.yml",
        "home/.git-credentials",
        "home/.cargo/credentials.toml",
        "home/vault/token.txt",
        "work/other/.env",
    ] {
        sandbox.write(secret, &format!("{KEY}\n"));
    }
    sandbox.write("home/.cargo/config.toml", "[net]\n");
    sandbox.write("home/notes.txt", "ordinary\n");
    std::fs::write(project.join(".env"), "PROJECT_SETTING=1\n").unwrap();
    std::fs::write(project.join("main.rs"), "fn main() {}\n").unwrap();
    let home = sandbox.home();
    let sandbox = sandbox.set(
        "WAMCP_SECRET_PATHS",
        home.join("vault").display().to_string(),
    );
    (sandbox, project)
}

#[tokio::test]
async fn no_spelling_of_a_secret_store_is_read() {
    let (sandbox, project) = home_with_secrets();
    let home = sandbox.home();
    #[cfg(unix)]
    std::os::unix::fs::symlink(home.join(".ssh"), project.join("keys")).unwrap();
    let client = sandbox.connect().await;
    let home_text = home.display().to_string();
    let mut spellings = vec![
        format!("{home_text}/.ssh/id_ed25519"),
        format!("{home_text}/./.ssh/../.ssh/id_ed25519"),
        format!("{home_text}/.aws/credentials"),
        format!("{home_text}/.config/gh/hosts.yml"),
        format!("{home_text}/.git-credentials"),
        format!("{home_text}/.cargo/credentials.toml"),
        format!("{home_text}/vault/token.txt"),
        "other/.env".to_string(),
        format!("{}/../../home/.ssh/id_ed25519", project.display()),
    ];
    if cfg!(unix) {
        spellings.push("proj/keys/id_ed25519".into());
    }
    if cfg!(windows) {
        spellings.push(format!("{home_text}\\.SSH\\ID_ED25519"));
        spellings.push(format!("\\\\?\\{home_text}\\.ssh\\id_ed25519"));
    }
    for path in &spellings {
        let error = client.error_of("read_file", json!({"path": path})).await;
        assert_eq!(error["type"], "SECRET_PATH", "{path}: {error}");
        assert!(!error.to_string().contains(KEY), "{path}: {error}");
    }
    let error = client
        .error_of(
            "list_directory",
            json!({"path": format!("{home_text}/.ssh")}),
        )
        .await;
    assert_eq!(error["type"], "SECRET_PATH", "{error}");
    let error = client
        .error_of(
            "search_files",
            json!({"pattern": "CANARY", "path": format!("{home_text}/.aws")}),
        )
        .await;
    assert_eq!(error["type"], "SECRET_PATH", "{error}");
    client.close().await;
}

#[tokio::test]
async fn walks_over_home_leave_the_stores_out_and_say_so() {
    let (sandbox, _project) = home_with_secrets();
    let home = sandbox.home().display().to_string();
    let client = sandbox.connect().await;
    let search = client
        .call_text("search_files", json!({"pattern": "CANARY", "path": home}))
        .await;
    assert!(search.starts_with("No match ("), "{search}");
    assert!(
        search.contains(".ssh (a secret store: SSH keys)"),
        "{search}"
    );
    let ordinary = client
        .call_text("search_files", json!({"pattern": "ordinary", "path": home}))
        .await;
    assert!(ordinary.contains("notes.txt\n1: ordinary"), "{ordinary}");
    let found = client
        .call_text("find_files", json!({"file_glob": "*", "path": home}))
        .await;
    for hidden in [
        "id_ed25519",
        "credentials",
        "hosts.yml",
        "token.txt",
        ".git-credentials",
    ] {
        assert!(
            !found.lines().any(|l| l.ends_with(hidden)),
            "{hidden}: {found}"
        );
    }
    assert!(found.contains(".cargo/config.toml"), "{found}");
    let listed = client
        .call_text("list_directory", json!({"path": home}))
        .await;
    assert!(!listed.contains("\n.ssh/\n"), "{listed}");
    assert!(listed.contains("\nnotes.txt\n"), "{listed}");
    assert!(
        listed.contains("Not listed, as secret stores: .aws, .git-credentials, .ssh, vault."),
        "{listed}"
    );
    let empty = client
        .call_text("list_empty_dirs", json!({"path": home}))
        .await;
    assert!(!empty.contains(".ssh"), "{empty}");
    client.close().await;
}

#[tokio::test]
async fn the_project_keeps_its_own_dotenv_and_ordinary_files() {
    let (sandbox, _project) = home_with_secrets();
    let home = sandbox.home().display().to_string();
    let client = sandbox.connect().await;
    let own = client
        .call_text("read_file", json!({"path": "proj/.env"}))
        .await;
    assert!(own.contains("PROJECT_SETTING=1"), "{own}");
    let config = client
        .call_text(
            "read_file",
            json!({"path": format!("{home}/.cargo/config.toml")}),
        )
        .await;
    assert!(config.contains("[net]"), "{config}");
    let info = client.server_info().await;
    let stores = info["secret_stores"]["listed"].as_array().unwrap();
    assert!(
        stores
            .iter()
            .any(|s| s.as_str().unwrap().ends_with("vault")),
        "{info}"
    );
    client.close().await;
}

/// A command's output goes to the model: the credentials in wamcp's own
/// environment (a host's token, a database URL with its password) reach no
/// command, confined or not. What the user lets through does, ordinary
/// variables do, and `get_server_info` names what is withheld. (Linux:
/// the program is python3; the exec crate's unit test covers Windows.)
#[cfg(unix)]
#[tokio::test]
async fn commands_never_see_the_credentials_in_the_servers_environment() {
    for mode in ["auto", "off"] {
        let (sandbox, project) = Sandbox::with_project();
        std::fs::write(
            project.join("show.py"),
            "import os\nfor k, v in sorted(os.environ.items()): print(k + '=' + v)\n",
        )
        .unwrap();
        let client = sandbox
            .set("WAMCP_COMMAND_SANDBOX", mode)
            .set("GITHUB_TOKEN", "CANARY-TOKEN-1")
            .set("DATABASE_URL", "postgres://app:CANARY-PASSWORD-2@db/app")
            .set("DEPLOY_TOKEN", "let-through")
            .set("WAMCP_COMMAND_PASS_VARIABLES", "DEPLOY_TOKEN")
            .set("BUILD_FLAVOUR", "release")
            .connect()
            .await;
        let shown = client
            .call_text(
                "run_powershell",
                json!({"command": "python3 show.py", "working_directory": "proj"}),
            )
            .await;
        assert!(shown.contains("EXIT CODE: 0"), "{mode}: {shown}");
        assert!(!shown.contains("CANARY"), "{mode}: {shown}");
        for kept in ["DEPLOY_TOKEN=let-through", "BUILD_FLAVOUR=release", "PATH="] {
            assert!(shown.contains(kept), "{mode}: {kept}: {shown}");
        }
        let info = client.server_info().await;
        let withheld = &info["command_withheld_variables"]["names"];
        for name in ["DATABASE_URL", "GITHUB_TOKEN"] {
            assert!(
                withheld.as_array().unwrap().iter().any(|n| n == name),
                "{info}"
            );
        }
        assert!(
            !withheld
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n == "DEPLOY_TOKEN"),
            "{info}"
        );
        client.close().await;
    }
}
