//! A minimal MCP client over stdio for the benchmarks: what a host does,
//! without a host.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command};

/// A wamcp binary speaking MCP on stdio, in `project`, as a user whose home is
/// `home`.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    /// Starts `exe` with the extra environment `env` and completes the
    /// handshake.
    pub fn start(
        exe: &Path,
        project: &Path,
        home: &Path,
        env: &[(&str, &str)],
    ) -> Result<Server, String> {
        let mut child = crate::startup::in_home(&mut Command::new(exe), home)
            .current_dir(project)
            .env("WAMCP_PROJECT_ROOTS", project)
            .envs(env.iter().copied())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut server = Server {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench-answers", "version": "1"}}),
        )?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        writeln!(self.stdin, "{message}").map_err(|e| e.to_string())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            if self
                .stdout
                .read_line(&mut line)
                .map_err(|e| e.to_string())?
                == 0
            {
                return Err(format!("the server ended before answering {method}"));
            }
            let message: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
            if message["id"] == json!(id) {
                return Ok(message);
            }
        }
    }

    /// The text content of a tool call's result: what a host forwards.
    pub fn call(&mut self, tool: &str, args: &Value) -> Result<String, String> {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": args}))?;
        answer["result"]["content"][0]["text"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{tool}: no text in {answer}"))
    }

    pub fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}
