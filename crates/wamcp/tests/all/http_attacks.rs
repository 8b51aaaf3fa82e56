//! `serve --http` against the commands it runs, tested by effects: a
//! script run by a command that finds the token still cannot become a
//! second client of the server (turned away at the listener, and on Linux
//! the port is closed to it by Landlock), and a result is not lost when
//! the client's connection drops before the answer. Linux only: the
//! attacker is a Python script.
#![cfg(target_os = "linux")]

use crate::common;

use crate::common::{HttpServer, Sandbox};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

/// One MCP session over raw HTTP/1.1, as a client would drive it.
struct Session<'a> {
    server: &'a HttpServer,
    id: String,
}

fn address(server: &HttpServer) -> String {
    let rest = server.url.trim_start_matches("http://");
    rest[..rest.find('/').unwrap()].to_string()
}

/// The request's text: POST with a JSON body, or GET without one.
fn http(
    server: &HttpServer,
    method: &str,
    session: Option<&str>,
    extra: &str,
    body: &str,
) -> String {
    let mut headers = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-11-25\r\n{extra}",
        address(server),
        server.token
    );
    if let Some(id) = session {
        headers.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    if method == "POST" {
        headers.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    format!("{headers}Connection: close\r\n\r\n{body}")
}

fn exchange(server: &HttpServer, request: &str) -> String {
    let mut stream = TcpStream::connect(address(server)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    String::from_utf8_lossy(&response).into_owned()
}

impl<'a> Session<'a> {
    fn open(server: &'a HttpServer) -> Session<'a> {
        Session::open_with(server, json!({}))
    }

    fn open_with(server: &'a HttpServer, capabilities: Value) -> Session<'a> {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "t", "version": "1"}}});
        let response = exchange(server, &http(server, "POST", None, "", &init.to_string()));
        let id = response
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| value.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no session: {response}"));
        let session = Session { server, id };
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        session.post(&done);
        session
    }

    fn post(&self, message: &Value) -> String {
        exchange(
            self.server,
            &http(
                self.server,
                "POST",
                Some(&self.id),
                "",
                &message.to_string(),
            ),
        )
    }

    /// The JSON-RPC response to one request with id 2.
    fn request(&self, method: &str, params: Value) -> Value {
        let body =
            self.post(&json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}));
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|m| m["id"] == 2)
            .unwrap_or_else(|| panic!("no response to {method}: {body}"))
    }

    /// A tool call's answer: the text of its first content block.
    fn call(&self, tool: &str, arguments: Value) -> String {
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        answer_in(&self.post(&call)).unwrap_or_else(|| panic!("no answer to {tool}"))
    }
}

/// The text of the response with id 2 among an SSE body's `data:` lines.
fn answer_in(body: &str) -> Option<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|m| m["id"] == 2)
        .map(|m| {
            let result = &m["result"];
            result["content"][0]["text"]
                .as_str()
                .map_or_else(|| m.to_string(), str::to_string)
        })
}

/// A script that reads the token and tries to open a session of its own,
/// printing what it got; it would go on to approve its own calls. Written
/// under names that choose how it connects: `attack.py` plainly,
/// `attack_mptcp.py` over MPTCP and `attack_tfo.py` by a TCP Fast Open
/// send (which Landlock's connect rule does not see), `attack_thread.py`
/// from a thread after the main thread exited (the process's `fd` folder
/// then reads empty), `attack_detached.py` from a daemon that left the
/// command (double fork, `setsid`): it writes its process number into
/// `daemon.pid` (the command waits for it), waits for the port in `port`
/// and writes `detached.out`.
fn plant_attack(project: &Path, port: u16, token_file: &Path) {
    let script = format!(
        "import os, socket, sys, time\n\
         mode = os.path.basename(sys.argv[0])\n\
         def attack(port):\n\
         \x20   token = open({token:?}).read().strip()\n\
         \x20   body = '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{{\"elicitation\":{{}}}},\"clientInfo\":{{\"name\":\"x\",\"version\":\"1\"}}}}}}'\n\
         \x20   try:\n\
         \x20       proto = 262 if mode == 'attack_mptcp.py' else 0\n\
         \x20       s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)\n\
         \x20       s.settimeout(5)\n\
         \x20       request = ('POST /mcp HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer ' + token + '\\r\\nAccept: application/json, text/event-stream\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n' % len(body) + body).encode()\n\
         \x20       if mode == 'attack_tfo.py':\n\
         \x20           s.sendto(request, socket.MSG_FASTOPEN, ('127.0.0.1', port))\n\
         \x20       else:\n\
         \x20           s.connect(('127.0.0.1', port))\n\
         \x20           s.sendall(request)\n\
         \x20       got = b''\n\
         \x20       while True:\n\
         \x20           chunk = s.recv(65536)\n\
         \x20           if not chunk: break\n\
         \x20           got += chunk\n\
         \x20       return 'ANSWER ' + (got.decode(errors='replace').splitlines()[0] if got else 'none')\n\
         \x20   except OSError as e:\n\
         \x20       return 'REFUSED ' + type(e).__name__\n\
         if mode == 'attack_thread.py':\n\
         \x20   import ctypes, threading\n\
         \x20   threading.Thread(target=lambda: print(attack({port}), flush=True)).start()\n\
         \x20   ctypes.CDLL(None).pthread_exit(None)\n\
         elif mode != 'attack_detached.py':\n\
         \x20   print(attack({port}))\n\
         elif os.fork() == 0:\n\
         \x20   os.setsid()\n\
         \x20   if os.fork() == 0:\n\
         \x20       open('daemon.tmp', 'w').write(str(os.getpid()))\n\
         \x20       os.rename('daemon.tmp', 'daemon.pid')\n\
         \x20       for _ in range(600):\n\
         \x20           if os.path.exists('port'): break\n\
         \x20           time.sleep(0.05)\n\
         \x20       time.sleep(0.2)\n\
         \x20       result = attack(int(open('port').read()))\n\
         \x20       open('detached.out', 'w').write(result)\n\
         \x20   os._exit(0)\n\
         else:\n\
         \x20   while not os.path.exists('daemon.pid'): time.sleep(0.01)\n\
         \x20   print('detached')\n",
        token = token_file.display().to_string(),
    );
    for name in ATTACKS {
        std::fs::write(project.join(name), &script).unwrap();
    }
}

/// The names the attack script is written under (see [`plant_attack`]).
const ATTACKS: [&str; 5] = [
    "attack.py",
    "attack_mptcp.py",
    "attack_tfo.py",
    "attack_thread.py",
    "attack_detached.py",
];

fn port_of(server: &HttpServer) -> u16 {
    address(server).rsplit(':').next().unwrap().parse().unwrap()
}

/// The sandbox with rules that give the attack scripts the network.
fn with_network_for_attacks(sandbox: Sandbox) -> Sandbox {
    let rules = network_for_attacks(&sandbox);
    sandbox.set("WAMCP_COMMAND_RULES", rules.display().to_string())
}

/// Rules that give the attack scripts the network.
fn network_for_attacks(sandbox: &Sandbox) -> std::path::PathBuf {
    let rules: Vec<Value> = ATTACKS
        .iter()
        .map(|script| {
            json!({"id": format!("net-{script}"), "programs": ["python3"], "when": {"args": [script]},
                   "decision": "allow", "justification": "the attack needs sockets", "network": true})
        })
        .collect();
    sandbox.write("rules.json", &json!({"rules": rules}).to_string())
}

/// Runs `python3 script` through a stdio server of `sandbox`; answers the
/// command's output and the sandbox back.
fn run_over_stdio(sandbox: Sandbox, script: &str) -> (String, Sandbox) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = sandbox.connect().await;
        let result = client
            .call(
                "run_powershell",
                json!({"command": format!("python3 {script}"), "working_directory": "proj", "timeout_seconds": 60}),
            )
            .await;
        let text = result.content[0].as_text().unwrap().text.clone();
        (text, client.close().await)
    })
}

fn run_attack(server: &HttpServer, script: &str) -> String {
    Session::open(server).call(
        "run_powershell",
        json!({"command": format!("python3 {script}"), "working_directory": "proj", "timeout_seconds": 60}),
    )
}

/// Unconfined (the OS layer off), the command reaches the port with the
/// token and is turned away by the listener: its process descends from
/// the server.
#[test]
fn a_command_of_the_server_is_turned_away_at_its_listener() {
    let (sandbox, project) = Sandbox::with_project();
    let sandbox = sandbox.set("WAMCP_COMMAND_SANDBOX", "off");
    let server = sandbox.serve_http();
    plant_attack(&project, port_of(&server), &sandbox.http_token_file());
    for script in ["attack.py", "attack_thread.py"] {
        let text = run_attack(&server, script);
        assert!(
            text.contains("ANSWER HTTP/1.1 403 Forbidden"),
            "{script}: {text}"
        );
    }
    // The user's own client is still served.
    let text = Session::open(&server).call("read_file", json!({"path": "proj/attack.py"}));
    assert!(text.contains("import os, socket"), "{text}");
}

/// Confined with the network granted, the command cannot even connect to
/// the server's port: it has a network of its own, and wamcp's egress
/// proxy keeps the server's port closed even with loopback listed, while
/// another loopback server is reached through it.
#[test]
fn a_network_granted_command_cannot_connect_to_the_servers_port() {
    let (sandbox, project) = Sandbox::with_project();
    let sandbox = with_network_for_attacks(sandbox).set("WAMCP_COMMAND_HOSTS", "127.0.0.1");
    let server = sandbox.serve_http();
    let port = port_of(&server);
    plant_attack(&project, port, &sandbox.http_token_file());
    for script in ["attack.py", "attack_mptcp.py", "attack_tfo.py"] {
        let text = run_attack(&server, script);
        assert!(text.contains("REFUSED "), "{script}: {text}");
        assert!(!text.contains("ANSWER"), "{script}: {text}");
    }
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in other.incoming().flatten() {
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nreached");
        }
    });
    std::fs::write(
        project.join("attack.py"),
        format!(
            "import urllib.request\nfor port in ({port}, {other_port}):\n    try:\n        \
             print('ANSWER', port, urllib.request.urlopen('http://127.0.0.1:%d/mcp' % port, timeout=5).read())\n    \
             except Exception as e:\n        print('REFUSED', port, e)\n"
        ),
    )
    .unwrap();
    let text = run_attack(&server, "attack.py");
    assert!(
        text.contains(&format!("REFUSED {port} HTTP Error 502")),
        "{text}"
    );
    assert!(
        text.contains(&format!("ANSWER {other_port} b'reached'")),
        "{text}"
    );
}

/// A stdio server's commands are kept off the listener of the user's HTTP
/// server too: it registered its port.
#[test]
fn another_servers_commands_cannot_connect_either() {
    let (sandbox, project) = Sandbox::with_project();
    let sandbox = with_network_for_attacks(sandbox);
    let server = sandbox.serve_http();
    plant_attack(&project, port_of(&server), &sandbox.http_token_file());
    let (text, _sandbox) = run_over_stdio(sandbox, "attack.py");
    assert!(text.contains("REFUSED "), "{text}");
    assert!(!text.contains("ANSWER"), "{text}");
}

/// A client whose connection dropped before the answer reconnects with
/// `Last-Event-ID` after the call finished, and gets the answer.
#[test]
fn a_reconnect_after_the_call_finished_gets_its_result() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("slow.py"),
        "import time\ntime.sleep(2)\nprint('slow work done')\n",
    )
    .unwrap();
    let server = sandbox.serve_http();
    let session = Session::open(&server);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run_powershell",
        "arguments": {"command": "python3 slow.py", "working_directory": "proj", "timeout_seconds": 60}}});
    let mut stream = TcpStream::connect(address(&server)).unwrap();
    stream
        .write_all(http(&server, "POST", Some(&session.id), "", &call.to_string()).as_bytes())
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // Read up to the first event's id (the stream's opening), then go away.
    let mut reader = BufReader::new(stream);
    let mut last_id = None;
    let mut line = String::new();
    while last_id.is_none() && reader.read_line(&mut line).unwrap() > 0 {
        last_id = line
            .trim()
            .strip_prefix("id:")
            .map(|id| id.trim().to_string());
        line.clear();
    }
    let last_id = last_id.expect("the stream names its events");
    drop(reader);
    // The call finishes while no one listens.
    std::thread::sleep(Duration::from_secs(4));
    let resumed = exchange(
        &server,
        &http(
            &server,
            "GET",
            Some(&session.id),
            &format!("Last-Event-ID: {last_id}\r\n"),
            "",
        ),
    );
    let text =
        answer_in(&resumed).unwrap_or_else(|| panic!("no answer after the reconnect: {resumed}"));
    assert!(text.contains("slow work done"), "{text}");
    // Another session cannot read this session's stream.
    let other = Session::open(&server);
    let foreign = exchange(
        &server,
        &http(
            &server,
            "GET",
            Some(&other.id),
            &format!("Last-Event-ID: {last_id}\r\n"),
            "",
        ),
    );
    assert!(answer_in(&foreign).is_none(), "{foreign}");
}

/// A task belongs to the session that started it: another session (a
/// second client with the token) can neither read it, answer it nor
/// cancel it, and is told there is no such task.
#[test]
fn another_session_cannot_reach_a_sessions_task() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("slow.py"),
        "import os, time\n\
         while not os.path.exists('go'): time.sleep(0.05)\n\
         print('slow work done')\n",
    )
    .unwrap();
    let server = sandbox.serve_http();
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let user = Session::open_with(&server, tasks.clone());
    let started = user.request(
        "tools/call",
        json!({"name": "run_powershell", "arguments":
            {"command": "python3 slow.py", "working_directory": "proj", "timeout_seconds": 60}}),
    );
    let task_id = started["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {started}"))
        .to_string();
    let intruder = Session::open_with(&server, tasks);
    for method in ["tasks/get", "tasks/cancel"] {
        let answer = intruder.request(method, json!({"taskId": task_id}));
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unknown task"),
            "{answer}"
        );
    }
    let own = user.request("tasks/get", json!({"taskId": task_id}));
    assert_eq!(own["result"]["status"], "working", "{own}");
    std::fs::write(project.join("go"), "").unwrap();
}

/// A command's daemon (double fork, `setsid`: no descendant of the server
/// by then) that would wait for a listener started after its command ends
/// with the command: it is gone when the call answers, and a listener
/// started then on a port of the user's choosing never hears from it.
#[test]
fn a_detached_daemon_ends_with_its_command() {
    let (sandbox, project) = Sandbox::with_project();
    let sandbox = with_network_for_attacks(sandbox);
    plant_attack(&project, 0, &sandbox.http_token_file());
    let (text, sandbox) = run_over_stdio(sandbox, "attack_detached.py");
    assert!(text.contains("detached"), "{text}");
    let daemon = std::fs::read_to_string(project.join("daemon.pid")).unwrap();
    assert!(
        !Path::new(&format!("/proc/{daemon}")).exists(),
        "daemon {daemon} outlived its command"
    );
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = free.local_addr().unwrap().to_string();
    drop(free);
    let server = sandbox.serve_http_on(&address);
    std::fs::write(project.join("port"), port_of(&server).to_string()).unwrap();
    std::thread::sleep(Duration::from_secs(1));
    assert!(!project.join("detached.out").exists());
}

/// A server killed outright (a crash, `kill -9`) takes its commands' trees
/// with it: the supervisor sees the server's end of its pipe close, and a
/// daemon the running command detached does not live on.
#[test]
fn a_killed_server_leaves_no_daemon() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("linger.py"),
        "import os, time\n\
         if os.fork() == 0:\n\
         \x20   os.setsid()\n\
         \x20   if os.fork() == 0:\n\
         \x20       open('daemon.tmp', 'w').write(str(os.getpid()))\n\
         \x20       os.rename('daemon.tmp', 'daemon.pid')\n\
         \x20       time.sleep(300)\n\
         \x20   os._exit(0)\n\
         time.sleep(300)\n",
    )
    .unwrap();
    let (mut server, _) = common::Raw::start(&sandbox, json!({}));
    server.send_request(
        "tools/call",
        json!({"name": "run_powershell", "arguments":
            {"command": "python3 linger.py", "working_directory": "proj", "timeout_seconds": 600}}),
    );
    let pid_file = project.join("daemon.pid");
    for _ in 0..600 {
        if pid_file.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let daemon = std::fs::read_to_string(&pid_file).expect("the daemon started");
    server.kill();
    let alive = || Path::new(&format!("/proc/{daemon}")).exists();
    for _ in 0..400 {
        if !alive() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(!alive(), "daemon {daemon} outlived its killed server");
}
