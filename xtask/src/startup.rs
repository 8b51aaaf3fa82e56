//! Start-up benchmark: spawn the release binary, send `initialize`, and time
//! the answer. Peak memory is read from /proc while the server is still up.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

pub fn run(args: &[String]) -> Result<(), String> {
    let runs = match args {
        [] => 50,
        [flag, n] if flag == "--runs" => n
            .parse()
            .map_err(|_| format!("--runs takes a number, not {n}"))?,
        _ => return Err("usage: bench-startup [--runs N]".into()),
    };
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--locked", "-p", "wamcp"])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("release build failed".into());
    }
    let exe = release_binary()?;
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    // The first start writes the default config file; time the steady state.
    measure(&exe, home.path())?;
    let mut times = Vec::with_capacity(runs);
    let mut peak_kib = Vec::with_capacity(runs);
    for _ in 0..runs {
        let (elapsed, kib) = measure(&exe, home.path())?;
        times.push(elapsed);
        peak_kib.extend(kib);
    }
    times.sort();
    peak_kib.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("binary: {}", exe.display());
    println!(
        "spawn to initialize answer over {runs} runs: median {:.2} ms, min {:.2} ms, p90 {:.2} ms",
        ms(times[runs / 2]),
        ms(times[0]),
        ms(times[runs * 9 / 10])
    );
    match peak_kib.get(peak_kib.len() / 2) {
        Some(kib) => println!(
            "peak resident memory (VmHWM), median: {:.1} MiB",
            *kib as f64 / 1024.0
        ),
        None => println!("peak resident memory: not available on this OS"),
    }
    Ok(())
}

fn release_binary() -> Result<std::path::PathBuf, String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
        });
    let exe = target
        .join("release")
        .join(format!("wamcp{}", std::env::consts::EXE_SUFFIX));
    exe.canonicalize()
        .map_err(|e| format!("{}: {e}", exe.display()))
}

/// One start: returns the time to the first answer line and the peak RSS.
fn measure(
    exe: &std::path::Path,
    home: &std::path::Path,
) -> Result<(Duration, Option<u64>), String> {
    let start = Instant::now();
    let mut child = Command::new(exe)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("APPDATA", home.join("config"))
        .env("LOCALAPPDATA", home.join("data"))
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    writeln!(stdin, "{INITIALIZE}").map_err(|e| e.to_string())?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or("no stdout")?)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    if !line.contains("\"protocolVersion\"") {
        return Err(format!("unexpected answer: {line}"));
    }
    let peak = std::fs::read_to_string(format!("/proc/{}/status", child.id()))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmHWM:")
                    .map(|v| v.trim().trim_end_matches(" kB").trim().to_string())
            })
        })
        .and_then(|v| v.parse().ok());
    drop(stdin);
    child.wait().map_err(|e| e.to_string())?;
    Ok((elapsed, peak))
}
