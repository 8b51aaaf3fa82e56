//! What the undo journal adds to a step: a synthetic project of N files
//! (100 per folder, 1-4 KiB each, like a source tree), recorded once cold
//! (every file copied), then warm steps (every file unchanged: one `stat`
//! each) before and after a command that changes one file, and a file
//! tool's step (its one file), and the question every command's judge
//! asks (does the journal keep the root whole?). Medians of alternating
//! runs.

use std::path::Path;
use std::time::{Duration, Instant};
use wamcp_fs::journal::{Journal, Limits, Overflow, Scope};

pub fn run(args: &[String]) -> Result<(), String> {
    let (files, runs) = match args {
        [] => (20_000, 7),
        [flag, n] if flag == "--files" => (parse(n)?, 7),
        [flag, n, flag2, r] if flag == "--files" && flag2 == "--runs" => (parse(n)?, parse(r)?),
        _ => return Err("usage: bench-undo [--files N [--runs R]]".into()),
    };
    let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = temp.path().join("project");
    make_tree(&root, files)?;
    let limits = Limits {
        budget: 64 << 30,
        max_age: Duration::from_secs(86_400),
        file_cap: wamcp_policy::undo::FILE_CAP_BYTES,
    };
    let journal = Journal::open(&temp.path().join("journal"), limits)?;
    let scope = Scope::Roots(vec![root.clone()]);
    let step = |change: &dyn Fn()| -> Result<(Duration, Duration), String> {
        let start = Instant::now();
        let pending = journal
            .begin(&scope, Overflow::Refuse)
            .map_err(|e| format!("{e:?}"))?;
        let before = start.elapsed();
        change();
        let start = Instant::now();
        journal.finish(pending, "bench", "bench")?;
        Ok((before, start.elapsed()))
    };
    let (cold, _) = step(&|| {})?;
    let edited = root.join("d0/f0.txt");
    let mut warm = Vec::new();
    let mut after = Vec::new();
    let mut file_steps = Vec::new();
    let mut judged = Vec::new();
    for i in 0..runs {
        let text = format!("changed {i}\n");
        let (b, a) = step(&|| {
            let _ = std::fs::write(&edited, &text);
        })?;
        warm.push(b);
        after.push(a);
        let file = Scope::File {
            root: root.clone(),
            file: edited.clone(),
        };
        let start = Instant::now();
        let pending = journal
            .begin(&file, Overflow::Refuse)
            .map_err(|e| format!("{e:?}"))?;
        let _ = std::fs::write(&edited, format!("file step {i}\n"));
        journal.finish(pending, "bench", "bench")?;
        file_steps.push(start.elapsed());
        let start = Instant::now();
        journal.keeping(std::slice::from_ref(&root));
        judged.push(start.elapsed());
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("undo journal on {files} files ({runs} runs, medians):");
    println!("  first step, every file copied: {:.0} ms", ms(cold));
    println!(
        "  before a command (warm):       {:.1} ms",
        ms(median(&mut warm))
    );
    println!(
        "  after it (one file changed):   {:.1} ms",
        ms(median(&mut after))
    );
    println!(
        "  a write_file step, whole:      {:.2} ms",
        ms(median(&mut file_steps))
    );
    println!(
        "  is the root kept whole (judge): {:.2} ms",
        ms(median(&mut judged))
    );
    Ok(())
}

fn parse(n: &str) -> Result<usize, String> {
    n.parse().map_err(|_| format!("not a number: {n}"))
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// `files` files, 100 per folder, of 1 to 4 KiB.
fn make_tree(root: &Path, files: usize) -> Result<(), String> {
    for i in 0..files {
        let dir = root.join(format!("d{}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        }
        let size = 1024 + (i * 37) % 3072;
        let text: String = format!("// file {i}\n").repeat(size / 8 + 1);
        std::fs::write(dir.join(format!("f{}.txt", i % 100)), &text[..size])
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
