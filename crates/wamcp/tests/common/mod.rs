//! Shared test harness: a private home for every server the tests start, so
//! no test reads the developer's config or writes outside its temp dir.

#![allow(dead_code)]

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService, serve_client_with_lifecycle};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub const BIN: &str = env!("CARGO_BIN_EXE_wamcp");

/// Every setting wamcp reads, removed before each server starts: taken
/// from the settings table, so a new setting cannot leak in from the
/// developer's environment.
fn wamcp_vars() -> impl Iterator<Item = &'static str> {
    use wamcp::settings;
    settings::SETTINGS.iter().map(|s| s.name)
}

/// A sandbox: a home directory with per-user config and data dirs, and a
/// working directory the server starts in.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dunce::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let cwd = root.join("work");
        for d in [&home, &cwd] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mut sandbox = Sandbox {
            dir,
            env: Vec::new(),
            cwd,
        };
        let h = home.display().to_string();
        for (key, value) in [
            ("HOME", h.clone()),
            ("USERPROFILE", h.clone()),
            ("XDG_CONFIG_HOME", format!("{h}/.config")),
            ("XDG_DATA_HOME", format!("{h}/.local/share")),
            (
                "APPDATA",
                home.join("AppData").join("Roaming").display().to_string(),
            ),
            (
                "LOCALAPPDATA",
                home.join("AppData").join("Local").display().to_string(),
            ),
        ] {
            sandbox.env.push((key.into(), value));
        }
        sandbox
    }

    /// A sandbox whose working directory holds `proj/`, listed in
    /// `WAMCP_PROJECT_ROOTS`; returns the project's path too.
    pub fn with_project() -> (Sandbox, PathBuf) {
        let sandbox = Sandbox::new();
        let project = sandbox.cwd.join("proj");
        std::fs::create_dir_all(&project).unwrap();
        let sandbox = sandbox.set("WAMCP_PROJECT_ROOTS", project.display().to_string());
        (sandbox, project)
    }

    pub fn root(&self) -> PathBuf {
        dunce::canonicalize(self.dir.path()).unwrap()
    }

    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    /// Where a server in this sandbox keeps its HTTP bearer token.
    pub fn http_token_file(&self) -> PathBuf {
        self.user_config().with_file_name("http-token")
    }

    /// The per-user config file a server in this sandbox generates.
    pub fn user_config(&self) -> PathBuf {
        if cfg!(windows) {
            self.home()
                .join("AppData")
                .join("Roaming")
                .join("wamcp")
                .join("config.json")
        } else {
            self.home()
                .join(".config")
                .join("wamcp")
                .join("config.json")
        }
    }

    /// The grants file a server in this sandbox reads by default.
    pub fn grants_file(&self) -> PathBuf {
        self.user_config().with_file_name("mcp-allowed-hosts.json")
    }

    pub fn set(mut self, key: &str, value: impl Into<String>) -> Sandbox {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn in_dir(mut self, cwd: &Path) -> Sandbox {
        self.cwd = cwd.to_path_buf();
        self
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Gives `cmd` this sandbox's environment and working directory.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        for var in wamcp_vars() {
            cmd.env_remove(var);
        }
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd.current_dir(&self.cwd);
    }

    /// A `wamcp` command (CLI use) configured for this sandbox.
    /// Writes the documented config file with `wamcp config --init`.
    pub fn init_config(&self) {
        let out = self.command(&["config", "--init"]).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(BIN);
        cmd.args(args);
        self.apply(&mut cmd);
        cmd
    }

    /// Starts the server and connects rmcp's client with the initialize handshake.
    pub async fn connect(self) -> Client {
        self.connect_with(ClientLifecycleMode::Initialize).await
    }

    /// Starts the server and connects in the stateless 2026-07-28 era.
    pub async fn connect_modern(self) -> Client {
        self.connect_with(ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        })
        .await
    }

    /// The client owns the sandbox so its directories outlive the server.
    async fn connect_with(self, lifecycle: ClientLifecycleMode) -> Client {
        // Wine's CreateProcess now and then fails with ERROR_INTERNAL_ERROR
        // under load; a second try succeeds. Real failures repeat.
        let mut attempt = 0;
        let (transport, _stderr) = loop {
            let mut std_cmd = std::process::Command::new(BIN);
            self.apply(&mut std_cmd);
            let cmd = tokio::process::Command::from(std_cmd);
            match TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()
            {
                Ok(spawned) => break spawned,
                // 1359: ERROR_INTERNAL_ERROR.
                Err(e) if attempt < 2 && e.raw_os_error() == Some(1359) => attempt += 1,
                Err(e) => panic!("spawn wamcp: {e:?}"),
            }
        };
        let service = serve_client_with_lifecycle((), transport, lifecycle)
            .await
            .expect("MCP handshake");
        Client {
            service,
            sandbox: self,
        }
    }
}

pub struct Client {
    pub service: RunningService<RoleClient, ()>,
    pub sandbox: Sandbox,
}

impl Client {
    pub async fn tool_names(&self) -> Vec<String> {
        let tools = self
            .service
            .peer()
            .list_all_tools()
            .await
            .expect("tools/list");
        tools.into_iter().map(|t| t.name.to_string()).collect()
    }

    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        self.service
            .peer()
            .call_tool(params)
            .await
            .expect("tools/call")
    }

    /// Calls a tool that must succeed and returns its text.
    pub async fn call_text(&self, name: &str, args: Value) -> String {
        let result = self.call(name, args.clone()).await;
        assert_eq!(result.is_error, Some(false), "{name} {args}: {result:?}");
        result.content[0]
            .as_text()
            .expect("text content")
            .text
            .clone()
    }

    /// Calls a tool that must fail and returns the envelope's `error` object.
    pub async fn error_of(&self, name: &str, args: Value) -> Value {
        let result = self.call(name, args.clone()).await;
        assert_eq!(result.is_error, Some(true), "{name} {args}: {result:?}");
        result.structured_content.expect("an error envelope")["error"].clone()
    }

    /// Calls a data tool and returns its structured content, checking that
    /// the text content carries the same object.
    pub async fn data(&self, name: &str) -> Value {
        let result = self.call(name, serde_json::json!({})).await;
        assert_eq!(result.is_error, Some(false), "{name} failed: {result:?}");
        let structured = result
            .structured_content
            .clone()
            .expect("structuredContent");
        let text = result.content[0]
            .as_text()
            .expect("text content")
            .text
            .clone();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
        structured
    }

    pub async fn server_info(&self) -> Value {
        self.data("get_server_info").await
    }

    /// Stops the server and hands back the sandbox for inspection.
    pub async fn close(self) -> Sandbox {
        let _ = self.service.cancel().await;
        self.sandbox
    }
}

/// `wamcp serve --http 127.0.0.1:0` in a sandbox; killed when dropped.
pub struct HttpServer {
    child: std::process::Child,
    /// The URL the server announced, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The bearer token every request needs.
    pub token: String,
}

impl HttpServer {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sandbox {
    pub fn serve_http(&self) -> HttpServer {
        self.start_http("127.0.0.1:0", true)
    }

    /// The server on `address` (say, a port outside wamcp's own range).
    pub fn serve_http_on(&self, address: &str) -> HttpServer {
        self.start_http(address, true)
    }

    /// The server with its stderr closed once it has announced its URL, as
    /// a client that stops reading the log would leave it.
    pub fn serve_http_with_log_closed(&self) -> HttpServer {
        self.start_http("127.0.0.1:0", false)
    }

    fn start_http(&self, address: &str, keep_reading_log: bool) -> HttpServer {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut cmd = self.command(&["serve", "--http", address]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start wamcp");
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL announced: {line}"))
            .to_string();
        if keep_reading_log {
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        }
        let token = std::fs::read_to_string(self.http_token_file())
            .expect("the server made its token")
            .trim()
            .to_string();
        HttpServer { child, url, token }
    }
}

/// Starts `cmd` as an MCP server the way a host would, lists its tools and
/// asks `get_server_info`, then stops it.
pub async fn tools_and_info(cmd: std::process::Command) -> (Vec<String>, Value) {
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the server");
    let service = serve_client_with_lifecycle((), transport, ClientLifecycleMode::Initialize)
        .await
        .expect("MCP handshake");
    let tools = service
        .peer()
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let info = service
        .peer()
        .call_tool(CallToolRequestParams::new("get_server_info"))
        .await
        .expect("get_server_info")
        .structured_content
        .expect("server info is data");
    let _ = service.cancel().await;
    (tools, info)
}

/// `args` with `execute: true` and the executable identity its plan
/// reviewed, as a model must send them: the plan is asked for first, and
/// where it names no executable, placeholders of the right form stand in
/// (the call is then refused for another reason before anything runs).
pub async fn reviewed(client: &Client, tool: &str, args: Value) -> Value {
    let mut plan_args = args.clone();
    plan_args["execute"] = false.into();
    let plan = client
        .call(tool, plan_args)
        .await
        .structured_content
        .unwrap_or_default();
    let mut args = args;
    args["execute"] = true.into();
    for (field, from, placeholder) in [
        (
            "expected_executable",
            "executable",
            Value::from("placeholder"),
        ),
        (
            "expected_executable_identity_kind",
            "executable_identity_kind",
            "file".into(),
        ),
        (
            "expected_executable_identity_sha256",
            "executable_identity_sha256",
            "0".repeat(64).into(),
        ),
    ] {
        if args.get(field).is_none() {
            args[field] = match &plan[from] {
                Value::Null => placeholder,
                found => found.clone(),
            };
        }
    }
    args
}

/// Runs git in `dir` with a fixed identity, for seeding test repositories.
pub fn git(dir: &Path, args: &[&str]) {
    git_stdout(dir, args);
}

/// Runs git in `dir` like [`git`] and returns its trimmed standard output.
pub fn git_stdout(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Whether a git program can be run here (Wine prefixes have none).
/// Says loudly that part of a test did not run: straight to stderr, since
/// the harness swallows `eprintln!` of a passing test.
pub fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n!!! SKIPPED: {why} !!!\n");
}

/// Whether the suite runs under Wine: its cmd.exe expands `%` unlike
/// Windows', and it enforces no access list (the OS layer's self-test
/// finds every part open).
pub fn under_wine() -> bool {
    cfg!(windows)
        && std::process::Command::new("reg")
            .args(["query", r"HKCU\Software\Wine"])
            .output()
            .is_ok_and(|o| o.status.success())
}

pub fn have_git() -> bool {
    std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A fake `winget` (a shell script, or a batch file under Windows) that
/// appends its arguments to `log` and keeps "installed" state in `state`.
pub fn fake_winget(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    if cfg!(windows) {
        let script = "@echo off\r\n\
            echo %*>>\"%FAKE_LOG%\"\r\n\
            if \"%1\"==\"search\" goto table\r\n\
            if \"%1\"==\"install\" goto install\r\n\
            if \"%1\"==\"export\" goto export\r\n\
            if exist \"%FAKE_STATE%\" goto table\r\n\
            echo No installed package found matching input criteria.\r\n\
            exit /b 1\r\n\
            :install\r\n\
            echo installed>\"%FAKE_STATE%\"\r\n\
            echo Successfully installed\r\n\
            exit /b 0\r\n\
            :export\r\n\
            echo {\"Sources\":[{\"Packages\":[{\"PackageIdentifier\":\"Fake.Tool\",\"Version\":\"1.0\"}],\"SourceDetails\":{\"Name\":\"winget\"}}]}>\"%~3\"\r\n\
            exit /b 0\r\n\
            :table\r\n\
            echo Name   Id         Version  Source\r\n\
            echo ----------------------------------\r\n\
            echo Fake   Fake.Tool  1.0      winget\r\n\
            exit /b 0\r\n";
        std::fs::write(dir.join("winget.cmd"), script).unwrap();
    } else {
        let script = "#!/bin/sh\n\
            echo \"$*\" >> \"$FAKE_LOG\"\n\
            table() { printf 'Name   Id         Version  Source\\n----------------------------------\\nFake   Fake.Tool  1.0      winget\\n'; }\n\
            case \"$1\" in\n\
              search) table ;;\n\
              export) printf '%s' '{\"Sources\":[{\"Packages\":[{\"PackageIdentifier\":\"Fake.Tool\",\"Version\":\"1.0\"}],\"SourceDetails\":{\"Name\":\"winget\"}}]}' > \"$3\" ;;\n\
              install) echo installed > \"$FAKE_STATE\"; echo Successfully installed ;;\n\
              list) if [ -f \"$FAKE_STATE\" ]; then table; else echo 'No installed package found matching input criteria.'; exit 1; fi ;;\n\
            esac\n";
        let path = dir.join("winget");
        std::fs::write(&path, script).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

/// A sandbox whose server finds the fake winget first on its PATH.
pub fn with_fake_winget() -> (Sandbox, PathBuf, PathBuf) {
    let (sandbox, _project) = Sandbox::with_project();
    let bin = sandbox.root().join("fakebin");
    fake_winget(&bin);
    let log = sandbox.root().join("winget.log");
    let state = sandbox.root().join("winget.state");
    let separator = if cfg!(windows) { ";" } else { ":" };
    let path = format!(
        "{}{separator}{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sandbox = sandbox
        .set("PATH", path)
        .set("FAKE_LOG", log.display().to_string())
        .set("FAKE_STATE", state.display().to_string())
        .set("WAMCP_TOOLS", "core,env,packages");
    (sandbox, log, state)
}

/// A sandbox with a project and a fake `devcontainer` CLI (Unix) on the
/// server's PATH that writes its arguments, one per line, to the returned
/// log and prints `ran`.
#[cfg(unix)]
pub fn with_fake_devcontainer() -> (Sandbox, PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let (sandbox, project) = Sandbox::with_project();
    let bin = sandbox.root().join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = sandbox.root().join("devcontainer.log");
    let script = bin.join("devcontainer");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\" >> '{}'; done\n\
             [ \"$1\" = exec ] && echo built > \"$3/made-in-container.txt\"\necho ran\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sandbox = sandbox
        .set("PATH", path)
        .set("WAMCP_TOOLS", "core,env,sandbox");
    (sandbox, project, log)
}

/// A client over raw JSON-RPC on a server's stdio, for what an SDK client
/// hides: tasks, and hanging up in the middle of a call.
pub struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl Raw {
    /// Starts the server, initializes with `capabilities`, and answers the
    /// client with the `initialize` response.
    pub fn start(sandbox: &Sandbox, capabilities: Value) -> (Raw, Value) {
        use std::process::Stdio;
        let mut child = sandbox
            .command(&[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut raw = Raw {
            stdin: child.stdin.take(),
            stdout: std::io::BufReader::new(child.stdout.take().unwrap()),
            child,
            next_id: 1,
        };
        let init = raw.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "raw-test", "version": "0"}}),
        );
        raw.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (raw, init)
    }

    pub fn send(&mut self, message: Value) {
        use std::io::Write;
        writeln!(self.stdin.as_mut().expect("stdin is open"), "{message}").unwrap();
    }

    /// Sends a request without waiting; answers its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        id
    }

    /// Sends a request and returns its response (notifications skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        use std::io::BufRead;
        let id = self.send_request(method, params);
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed stdout"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == serde_json::json!(id) {
                return message;
            }
        }
    }

    /// Kills the server outright, as a crash or `kill -9` would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes the server's stdin, as a client that goes away does, and
    /// returns every message it still writes before it ends.
    pub fn hang_up(&mut self) -> Vec<Value> {
        use std::io::BufRead;
        drop(self.stdin.take());
        let mut messages = Vec::new();
        let mut line = String::new();
        while self.stdout.read_line(&mut line).unwrap_or(0) > 0 {
            if let Ok(message) = serde_json::from_str(&line) {
                messages.push(message);
            }
            line.clear();
        }
        messages
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
