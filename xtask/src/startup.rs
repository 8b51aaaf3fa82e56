//! Start-up benchmark: spawn the release binary, send `initialize`, and time
//! the answer. Peak memory and the thread count are read from /proc while
//! the server is still up. With `--against PATH [-- ARGS...]` another MCP
//! server is timed in the same run, alternating start for start with the
//! same client, so both see the same machine load.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
pub(crate) const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
const USAGE: &str = "usage: bench-startup [--runs N] [--against PATH [-- ARGS...]]";

/// One server under test and what its starts measured.
struct Subject {
    label: String,
    exe: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    times: Vec<Duration>,
    peak_kib: Vec<u64>,
    listed_peak_kib: Vec<u64>,
    threads: Vec<u64>,
}

impl Subject {
    fn new(label: String, exe: PathBuf, args: Vec<String>, env: Vec<(String, String)>) -> Subject {
        Subject {
            label,
            exe,
            args,
            env,
            times: Vec::new(),
            peak_kib: Vec::new(),
            listed_peak_kib: Vec::new(),
            threads: Vec::new(),
        }
    }

    fn start(&mut self, home: &Path) -> Result<(), String> {
        let sample = measure(self, home)?;
        self.times.push(sample.elapsed);
        self.peak_kib.extend(sample.peak_kib);
        self.listed_peak_kib.extend(sample.listed_peak_kib);
        self.threads.extend(sample.threads);
        Ok(())
    }

    fn report(&mut self) {
        let runs = self.times.len();
        self.times.sort();
        self.peak_kib.sort();
        self.listed_peak_kib.sort();
        self.threads.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let size = std::fs::metadata(&self.exe).map_or(0, |m| m.len());
        let mib = |kib: Option<&u64>| {
            kib.map_or("n/a".to_string(), |k| {
                format!("{:.1} MiB", *k as f64 / 1024.0)
            })
        };
        println!(
            "| {} | {:.2} ms | {:.2} ms | {:.2} ms | {} | {} | {} | {:.1} MB |",
            self.label,
            ms(self.times[runs / 2]),
            ms(self.times[0]),
            ms(self.times[runs * 9 / 10]),
            mib(self.peak_kib.get(self.peak_kib.len() / 2)),
            mib(self.listed_peak_kib.get(self.listed_peak_kib.len() / 2)),
            self.threads
                .get(self.threads.len() / 2)
                .map_or("n/a".into(), u64::to_string),
            size as f64 / 1e6
        );
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut runs = 50usize;
    let mut against: Option<(PathBuf, Vec<String>)> = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--runs" => {
                let n = rest.next().ok_or(USAGE)?;
                runs = n
                    .parse()
                    .map_err(|_| format!("--runs takes a number, not {n}"))?;
            }
            "--against" => {
                let path = rest.next().ok_or(USAGE)?;
                let args = match rest.next().map(String::as_str) {
                    Some("--") => rest.by_ref().cloned().collect(),
                    Some(other) => return Err(format!("unexpected {other}; {USAGE}")),
                    None => Vec::new(),
                };
                against = Some((PathBuf::from(path), args));
            }
            other => return Err(format!("unexpected {other}; {USAGE}")),
        }
    }
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--locked", "-p", "wamcp"])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("release build failed".into());
    }
    let version = env!("CARGO_PKG_VERSION");
    let mut subjects = vec![Subject::new(
        format!("wamcp {version}, every tool group (WAMCP_TOOLS=all)"),
        release_binary()?,
        Vec::new(),
        vec![("WAMCP_TOOLS".into(), "all".into())],
    )];
    if let Some((exe, args)) = against {
        let name = exe
            .file_name()
            .map_or("other".into(), |n| n.to_string_lossy().into_owned());
        subjects.push(Subject::new(name, exe, args, Vec::new()));
    }
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    // One start each first: caches warm, any first-run work done.
    for subject in &subjects {
        measure(subject, home.path())?;
    }
    for _ in 0..runs {
        for subject in &mut subjects {
            subject.start(home.path())?;
        }
    }
    println!("spawn to initialize answer, {runs} alternating runs each\n");
    println!(
        "| server | median | min | p90 | peak memory (median) | after tools/list | threads | binary |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for subject in &mut subjects {
        subject.report();
    }
    Ok(())
}

pub(crate) fn release_binary() -> Result<PathBuf, String> {
    let exe = crate::target_dir()
        .join("release")
        .join(format!("wamcp{}", std::env::consts::EXE_SUFFIX));
    exe.canonicalize()
        .map_err(|e| format!("{}: {e}", exe.display()))
}

struct Sample {
    elapsed: Duration,
    peak_kib: Option<u64>,
    /// The peak once `tools/list` was answered too, as every client asks.
    listed_peak_kib: Option<u64>,
    threads: Option<u64>,
}

/// A server started as a user whose home (and configuration and data
/// folders) is `home`, speaking MCP on piped stdio: nothing of the
/// developer's own configuration changes what is measured.
pub(crate) fn in_home<'a>(command: &'a mut Command, home: &Path) -> &'a mut Command {
    command
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("APPDATA", home.join("config"))
        .env("LOCALAPPDATA", home.join("data"))
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
}

/// One start: the time to the first answer line, then peak RSS and
/// threads read while the server still runs, and the peak again once
/// `tools/list` was answered.
fn measure(subject: &Subject, home: &Path) -> Result<Sample, String> {
    let start = Instant::now();
    let mut child = in_home(Command::new(&subject.exe).args(&subject.args), home)
        .envs(subject.env.iter().map(|(k, v)| (k, v)))
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", subject.exe.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    writeln!(stdin, "{INITIALIZE}").map_err(|e| e.to_string())?;
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    stdout.read_line(&mut line).map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    if !line.contains("\"protocolVersion\"") {
        return Err(format!("{}: unexpected answer: {line}", subject.label));
    }
    let status_path = format!("/proc/{}/status", child.id());
    let field = |status: &str, name: &str| {
        status.lines().find_map(|l| {
            l.strip_prefix(name)?
                .trim()
                .trim_end_matches(" kB")
                .trim()
                .parse()
                .ok()
        })
    };
    let status = std::fs::read_to_string(&status_path).unwrap_or_default();
    let (peak_kib, threads) = (field(&status, "VmHWM:"), field(&status, "Threads:"));
    writeln!(stdin, "{INITIALIZED}\n{TOOLS_LIST}").map_err(|e| e.to_string())?;
    line.clear();
    stdout.read_line(&mut line).map_err(|e| e.to_string())?;
    if !line.contains("\"tools\"") {
        return Err(format!(
            "{}: unexpected tools/list answer: {line}",
            subject.label
        ));
    }
    let status = std::fs::read_to_string(&status_path).unwrap_or_default();
    let sample = Sample {
        elapsed,
        peak_kib,
        listed_peak_kib: field(&status, "VmHWM:"),
        threads,
    };
    drop(stdin);
    child.wait().map_err(|e| e.to_string())?;
    Ok(sample)
}
