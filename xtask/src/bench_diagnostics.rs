//! Build-diagnostics parser speed, in MB/s, on a large log made of real
//! compiler output.
//!
//! gcc, g++ and clang compile small broken files (errors, warnings, notes,
//! a template error's long note chain); their output is interleaved with the
//! progress lines a real ninja log is mostly made of, then repeated to about
//! 64 MiB. `grep -cE 'error|warning'` over the same file is the reference:
//! the least work any tool must do to find the diagnostics at all.

use std::process::Command;
use std::time::{Duration, Instant};
use wamcp_exec::diagnostics::parse;

const TARGET_BYTES: usize = 64 << 20;
const RUNS: usize = 5;

const BROKEN_C: &str = "int f(int a) { int unused; return a + missing; }\n\
    int g(void) { return f(1, 2); }\nvoid h(void) { int *p = 3; (void)p; }\n";
const BROKEN_CPP: &str = "#include <vector>\n#include <string>\nstruct S {};\n\
    int main() { std::vector<S> v; v.push_back(std::string(\"x\")); return v.size() + nothing; }\n";

pub fn run(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: bench-diagnostics".into());
    }
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    std::fs::write(dir.join("broken.c"), BROKEN_C).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("broken.cpp"), BROKEN_CPP).map_err(|e| e.to_string())?;
    let mut real = String::new();
    for (compiler, file) in [
        ("gcc", "broken.c"),
        ("clang", "broken.c"),
        ("g++", "broken.cpp"),
        ("clang++", "broken.cpp"),
    ] {
        let out = Command::new(compiler)
            .args(["-Wall", "-c", file, "-o", "/dev/null"])
            .current_dir(dir)
            .env("LC_ALL", "C")
            .output()
            .map_err(|e| format!("{compiler} is required (apt-get install gcc g++ clang): {e}"))?;
        real.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let mut log = String::with_capacity(TARGET_BYTES + real.len() * 2);
    let mut step = 0usize;
    while log.len() < TARGET_BYTES {
        for _ in 0..40 {
            step += 1;
            log.push_str(&format!(
                "[{step}/900000] Building CXX object src/module{}/CMakeFiles/app.dir/file{step}.cpp.o\n",
                step % 97
            ));
        }
        log.push_str(&real);
    }
    let path = dir.join("build.log");
    std::fs::write(&path, &log).map_err(|e| e.to_string())?;
    let megabytes = log.len() as f64 / (1 << 20) as f64;
    println!(
        "log: {megabytes:.1} MiB, {} lines; real compiler output {} bytes per block",
        log.lines().count(),
        real.len()
    );

    let mut entries = 0;
    let ours = median(|| {
        entries = parse(&log, dir).len();
    });
    let grep = median(|| {
        let _ = Command::new("grep")
            .args(["-cE", "error|warning"])
            .arg(&path)
            .output();
    });
    println!(
        "parse: {:.0} ms = {:.0} MB/s ({entries} unique diagnostics)",
        ours.as_secs_f64() * 1000.0,
        megabytes / ours.as_secs_f64()
    );
    println!(
        "grep -cE 'error|warning': {:.0} ms = {:.0} MB/s",
        grep.as_secs_f64() * 1000.0,
        megabytes / grep.as_secs_f64()
    );
    Ok(())
}

fn median(mut work: impl FnMut()) -> Duration {
    work();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}
