//! Long calls as MCP tasks, over raw JSON-RPC (the Python SDK has no tasks
//! yet): a client that declares the extension gets a task for a long tool,
//! polls it to its result, and cancelling it kills what it started.
#![cfg(unix)]

use crate::common::{Raw, Sandbox};
use serde_json::{Value, json};
use std::time::Duration;

/// A raw client that declared `capabilities` and saw the tasks extension.
fn start(sandbox: &Sandbox, capabilities: Value) -> Raw {
    let (raw, init) = Raw::start(sandbox, capabilities);
    assert!(
        init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{init}"
    );
    raw
}

/// Polls `tasks/get` until the task leaves `working` (bounded).
fn settle(raw: &mut Raw, task_id: &str) -> Value {
    for _ in 0..600 {
        let got = raw.request("tasks/get", json!({"taskId": task_id}));
        let status = got["result"]["status"].as_str().unwrap_or("").to_string();
        if status != "working" {
            return got;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("task {task_id} never settled");
}

fn tasks_capability() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// Running, not merely a zombie waiting to be reaped.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next())
        })
        .is_some_and(|state| state != 'Z' && state != 'X')
}

#[test]
fn a_long_call_becomes_a_task_that_is_polled_to_its_result() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("hello.py"), "print('hello from the task')\n").unwrap();
    let mut client = start(&sandbox, tasks_capability());
    let created = client.request(
        "tools/call",
        json!({"name": "run_powershell", "arguments": {"command": "python3 hello.py", "working_directory": project}}),
    );
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working");
    assert!(result["pollIntervalMs"].as_u64().is_some());
    assert!(
        result["ttlMs"].as_u64().unwrap() >= 1_800_000,
        "kept past the longest build"
    );
    let task_id = result["taskId"].as_str().unwrap().to_string();
    let done = settle(&mut client, &task_id);
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let text = done["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("hello from the task"), "{text}");
    // A short tool stays an ordinary call.
    let listed = client.request(
        "tools/call",
        json!({"name": "list_directory", "arguments": {"path": project}}),
    );
    assert!(listed["result"]["content"].is_array(), "{listed}");
    let unknown = client.request("tasks/get", json!({"taskId": "no-such-task"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn cancelling_a_task_kills_what_it_started() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("slow.py"),
        "import os, subprocess, time\n\
         child = subprocess.Popen(['sleep', '60'])\n\
         open('pids.txt', 'w').write(f'{os.getpid()} {child.pid}')\n\
         time.sleep(60)\n",
    )
    .unwrap();
    let mut client = start(&sandbox, tasks_capability());
    let created = client.request(
        "tools/call",
        json!({"name": "build_project", "arguments": {"command": "python3 slow.py", "working_directory": project}}),
    );
    let task_id = created["result"]["taskId"].as_str().unwrap().to_string();
    let pids_file = project.join("pids.txt");
    let mut pids = String::new();
    for _ in 0..300 {
        pids = std::fs::read_to_string(&pids_file).unwrap_or_default();
        if pids.contains(' ') {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let pids: Vec<i32> = pids.split(' ').map(|p| p.parse().unwrap()).collect();
    assert!(pids.iter().all(|&p| alive(p)), "the build is running");
    let ack = client.request("tasks/cancel", json!({"taskId": task_id}));
    assert!(ack.get("error").is_none(), "{ack}");
    let settled = settle(&mut client, &task_id);
    assert_eq!(settled["result"]["status"], "cancelled", "{settled}");
    let mut gone = false;
    for _ in 0..100 {
        if pids.iter().all(|&p| !alive(p)) {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<String> = pids
        .iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/cmdline")).ok())
        .collect();
    assert!(gone, "the script and its child were killed; left: {left:?}");
}

#[test]
fn without_the_extension_a_long_call_is_an_ordinary_one() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("hello.py"), "print('direct')\n").unwrap();
    let mut client = start(&sandbox, json!({}));
    let answer = client.request(
        "tools/call",
        json!({"name": "run_powershell", "arguments": {"command": "python3 hello.py", "working_directory": project}}),
    );
    assert!(
        answer["result"]
            .get("resultType")
            .is_none_or(|t| t != "task"),
        "{answer}"
    );
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("direct")
    );
}
