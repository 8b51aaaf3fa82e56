//! What confinement adds to every command: the same trivial program run
//! through `wamcp_exec::run` unconfined and confined (temp directory,
//! Landlock ruleset, seccomp filter, applied between fork and exec),
//! alternating so both see the same machine.

use std::time::{Duration, Instant};
use wamcp_exec::confine::Sandbox;
use wamcp_exec::{RunSpec, run};
use wamcp_policy::command::sandbox::{Caches, SandboxMode};

pub fn run_bench(args: &[String]) -> Result<(), String> {
    let runs = match args {
        [] => 200,
        [flag, n] if flag == "--runs" => n
            .parse()
            .map_err(|_| format!("--runs takes a number, not {n}"))?,
        _ => return Err("usage: bench-confinement [--runs N]".into()),
    };
    let root = tempfile::tempdir().map_err(|e| e.to_string())?;
    let sandbox = Sandbox::new(SandboxMode::Auto, Caches::default());
    let status = sandbox.status();
    let Some(mechanism) = &status.mechanism else {
        return Err(format!("no confinement here: {}", status.detail));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let spec = |confined: bool| -> Result<RunSpec, String> {
        Ok(RunSpec {
            program: "true".into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: root.path().to_path_buf(),
            timeout: Duration::from_secs(30),
            keep_head: 1024,
            keep_tail: 0,
            confinement: if confined {
                sandbox
                    .confinement(&[root.path().to_path_buf()], false)
                    .map_err(|e| e.message)?
            } else {
                None
            },
            search: Default::default(),
        })
    };
    let (plain, confined) = (spec(false)?, spec(true)?);
    let mut times = [Vec::with_capacity(runs), Vec::with_capacity(runs)];
    for i in 0..runs + 10 {
        for (which, spec) in [&plain, &confined].into_iter().enumerate() {
            let start = Instant::now();
            let out = runtime
                .block_on(run(spec))
                .map_err(|e| format!("run failed: {e}"))?;
            if out.exit_code != Some(0) {
                return Err(format!("'true' exited with {:?}", out.exit_code));
            }
            // The first runs warm the caches and are not counted.
            if i >= 10 {
                times[which].push(start.elapsed());
            }
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut times[0]), median(&mut times[1]));
    println!("{runs} alternating runs of `true` through wamcp_exec::run, medians:");
    println!("  unconfined: {:.2} ms", ms(a));
    println!("  confined ({mechanism}): {:.2} ms", ms(b));
    println!("  added by confinement: {:.2} ms", ms(b.saturating_sub(a)));
    Ok(())
}
