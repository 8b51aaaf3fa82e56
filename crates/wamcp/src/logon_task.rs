//! `wamcp install-task` / `uninstall-task`: a per-user Task Scheduler task
//! that serves HTTP in the user's interactive session from logon, which the
//! desktop tools need (a service runs in session 0 and sees no windows).
//!
//! The task is written as Task Scheduler XML and registered with
//! `schtasks /Create /XML`: the XML names the user in the logon trigger and
//! the principal, so registering needs no elevation, and it says exactly
//! what runs (no shell, no time limit, one instance). The exact command is
//! printed before it runs.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

pub const TASK_NAME: &str = "wamcp-http";

/// How long install-task waits for the server it started to listen.
#[cfg(windows)]
const START_WAIT: Duration = Duration::from_secs(5);

/// Whether a wamcp HTTP server answers at `address` within `limit`, asked
/// every tenth of a second. Any listener is not enough: another program on
/// the port would keep ours from starting, so the answer must be wamcp's
/// refusal of a request without the token.
pub fn wamcp_within(address: SocketAddr, limit: Duration) -> bool {
    let started = Instant::now();
    loop {
        if answers_as_wamcp(address) {
            return true;
        }
        if started.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn answers_as_wamcp(address: SocketAddr) -> bool {
    let wait = Duration::from_millis(500);
    let Ok(mut stream) = TcpStream::connect_timeout(&address, wait) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(wait));
    let _ = stream.set_write_timeout(Some(wait));
    let request = format!("GET /mcp HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let _ = stream.take(4096).read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    answer.starts_with("HTTP/1.1 401") && answer.contains("wamcp: this server needs")
}

/// The line that tells a user how to check the server themselves: any
/// HTTP status (401 without the token) means it listens.
pub fn check_hint(address: SocketAddr) -> String {
    format!(
        "check it any time with: curl.exe -s -o NUL -w \"%{{http_code}}\" http://{address}/mcp \
         (401 means it listens and wants the token; no number means nothing listens)"
    )
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The task: at `user`'s logon, in their session with their ordinary
/// rights, run `exe serve --http addr`; never stopped for running long or
/// on battery, never started twice.
pub fn task_xml(exe: &str, addr: &str, user: &str) -> String {
    let (exe, addr, user) = (xml_escape(exe), xml_escape(addr), xml_escape(user));
    format!(
        r#"<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>wamcp: MCP over HTTP at http://{addr}/mcp for this user's session</Description>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger>
      <Enabled>true</Enabled>
      <UserId>{user}</UserId>
    </LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>{user}</UserId>
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <Enabled>true</Enabled>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>"{exe}"</Command>
      <Arguments>serve --http {addr}</Arguments>
    </Exec>
  </Actions>
</Task>
"#
    )
}

/// `schtasks.exe` from the system folder, never from `PATH`.
#[cfg(windows)]
fn schtasks() -> std::path::PathBuf {
    let root = std::env::var_os("SystemRoot").unwrap_or_else(|| "C:\\Windows".into());
    Path::new(&root).join("System32").join("schtasks.exe")
}

#[cfg(windows)]
fn run(args: &[&std::ffi::OsStr]) -> Result<(), String> {
    let program = schtasks();
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    println!("running: {} {}", program.display(), shown.join(" "));
    let out = std::process::Command::new(&program)
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string()
        + String::from_utf8_lossy(&out.stderr).trim();
    if !out.status.success() {
        return Err(format!("schtasks failed ({}): {text}", out.status));
    }
    if !text.is_empty() {
        println!("{text}");
    }
    Ok(())
}

/// Registers (or replaces) the task for the current user.
#[cfg(windows)]
pub fn install(addr: &str, token_file: Option<&Path>) -> Result<(), String> {
    let listen = crate::http::listen(addr, false, false)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let exe = dunce::simplified(&exe).display().to_string();
    let user = match (std::env::var("USERDOMAIN"), std::env::var("USERNAME")) {
        (Ok(domain), Ok(name)) if !domain.is_empty() => format!("{domain}\\{name}"),
        (_, Ok(name)) if !name.is_empty() => name,
        _ => return Err("USERNAME is not set; cannot name the user the task is for".into()),
    };
    if listen.address.port() == 0 {
        return Err(
            "install-task needs a fixed port: clients must find the server at the same address after every logon"
                .into(),
        );
    }
    let address = listen.address.to_string();
    println!("the task will run at {user}'s logon: \"{exe}\" serve --http {address}");
    // The token clients will need exists before the first logon.
    if let Some(file) = token_file {
        crate::http::load_or_create_token(file)?;
        println!("bearer token: {}", file.display());
    }
    let xml = task_xml(&exe, &address, &user);
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("wamcp-task.xml");
    // Task Scheduler reads its XML as UTF-16 with a byte-order mark.
    let bytes: Vec<u8> = std::iter::once(0xFEFFu16)
        .chain(xml.encode_utf16())
        .flat_map(u16::to_le_bytes)
        .collect();
    std::fs::write(&file, bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    run(&[
        "/Create".as_ref(),
        "/TN".as_ref(),
        TASK_NAME.as_ref(),
        "/XML".as_ref(),
        file.as_os_str(),
        "/F".as_ref(),
    ])?;
    println!("registered task '{TASK_NAME}'; it starts at each logon, and now");
    // The server is also started right away: a user should not have to log
    // off to use what they just installed.
    // An instance of an earlier registration (another exe or address)
    // would keep this one from starting: stop it first. Not running is
    // not an error.
    let _ = run(&["/End".as_ref(), "/TN".as_ref(), TASK_NAME.as_ref()]);
    if let Err(e) = run(&["/Run".as_ref(), "/TN".as_ref(), TASK_NAME.as_ref()]) {
        println!("warning: the task could not be started now ({e}); it starts at your next logon");
    }
    if wamcp_within(listen.address, START_WAIT) {
        println!("the server is listening at http://{address}/mcp");
    } else {
        println!(
            "warning: no wamcp server answers at {address} after {} s; Task Scheduler's history for '{TASK_NAME}' says why",
            START_WAIT.as_secs()
        );
    }
    println!("{}", check_hint(listen.address));
    println!("point clients at it with: wamcp config --emit <client> --http http://{address}/mcp");
    Ok(())
}

#[cfg(windows)]
pub fn uninstall() -> Result<(), String> {
    run(&[
        "/Delete".as_ref(),
        "/TN".as_ref(),
        TASK_NAME.as_ref(),
        "/F".as_ref(),
    ])?;
    println!("removed task '{TASK_NAME}'");
    Ok(())
}

#[cfg(not(windows))]
pub fn install(_addr: &str, _token_file: Option<&Path>) -> Result<(), String> {
    Err(not_windows())
}

#[cfg(not(windows))]
pub fn uninstall() -> Result<(), String> {
    Err(not_windows())
}

#[cfg(not(windows))]
fn not_windows() -> String {
    "install-task registers a Windows Task Scheduler task; elsewhere run `wamcp serve --http` from your \
     service manager (for example a systemd user unit)"
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener answering every connection with `answer`.
    fn answering(answer: &'static str) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut request = [0u8; 1024];
                let _ = stream.read(&mut request);
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        address
    }

    #[test]
    fn only_wamcps_own_answer_counts_as_listening() {
        let wamcp = answering(
            "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 30\r\n\r\n\
             wamcp: this server needs 'Au",
        );
        assert!(wamcp_within(wamcp, Duration::ZERO));
        let other = answering("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi");
        assert!(!wamcp_within(other, Duration::from_millis(200)));
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        assert!(!wamcp_within(closed, Duration::from_millis(200)));
        assert!(check_hint(wamcp).contains(&format!("http://{wamcp}/mcp")));
    }

    #[test]
    fn the_task_runs_exactly_the_server_for_one_user() {
        let xml = task_xml(
            r"C:\Tools\wamcp & co\wamcp.exe",
            "127.0.0.1:8765",
            r"PC\ana<x>",
        );
        assert!(
            xml.contains(r#"<Command>"C:\Tools\wamcp &amp; co\wamcp.exe"</Command>"#),
            "{xml}"
        );
        assert!(xml.contains("<Arguments>serve --http 127.0.0.1:8765</Arguments>"));
        assert_eq!(xml.matches(r"<UserId>PC\ana&lt;x&gt;</UserId>").count(), 2);
        assert!(xml.contains("<LogonType>InteractiveToken</LogonType>"));
        assert!(xml.contains("<RunLevel>LeastPrivilege</RunLevel>"));
        assert!(xml.contains("<ExecutionTimeLimit>PT0S</ExecutionTimeLimit>"));
    }
}
