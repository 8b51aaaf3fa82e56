//! `startup-order`: writes `crates/wamcp/startup.ld`, the linker script that
//! puts the functions a start runs next to each other in the release binary.
//!
//! Why: the kernel maps code in 64 KB windows around every page a process
//! touches ("fault-around"), and a start touches a few hundred functions
//! spread over 10 MB of code, so most of the code resident after
//! `initialize` was never run. Placed together, the same functions fill a
//! few windows.
//!
//! How: the release binary is linked once more with a link map (it has
//! no symbols, and a build with symbols would name its functions
//! differently: the profile is part of every symbol's hash), and runs
//! under valgrind's lackey twice (start-up to the `initialize` answer, then
//! also `tools/list`). Every code block it ran is looked up in the map, and
//! each function section it lies in becomes a pattern, the start's
//! functions first. Names lose their hash where one function has that
//! name, so the script keeps working across compiler and dependency
//! updates that change hashes; generic functions with several instances
//! keep the hash of the instance the start ran (a stale one only stops
//! matching). Cold functions sit in `.text.unlikely.*`, so both prefixes
//! are matched. Needs valgrind.

use crate::startup::{INITIALIZE, INITIALIZED, TOOLS_LIST, in_home};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The output section the script creates; also what the check looks for.
const SECTION: &str = ".text.wamcp_startup";

pub fn run(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: startup-order".into());
    }
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let map_path = work.path().join("wamcp.map");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--locked", "-p", "wamcp"])
        .env("WAMCP_LINK_MAP", &map_path)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("release build failed".into());
    }
    let exe = crate::target_dir().join("release").join("wamcp");
    let map =
        std::fs::read_to_string(&map_path).map_err(|e| format!("{}: {e}", map_path.display()))?;
    let sections = function_sections(&map);
    let entry = entry_point(&exe)?;
    let start = executed(&exe, entry, &sections, &[INITIALIZE])?;
    let listing = executed(
        &exe,
        entry,
        &sections,
        &[INITIALIZE, INITIALIZED, TOOLS_LIST],
    )?;
    let instances = instance_counts(sections.iter().map(|s| s.name.as_str()));
    let mut seen = HashSet::new();
    let mut lines = Vec::new();
    for phase in [&start, &listing] {
        for name in phase {
            let key = hashless(name);
            let pattern = if instances[&key] == 1 {
                key
            } else {
                name.clone()
            };
            if seen.insert(pattern.clone()) {
                lines.push(format!("    *(.text.{pattern} .text.unlikely.{pattern})"));
            }
        }
    }
    let rustc = Command::new("rustc")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let script = format!(
        "/* The functions a start of wamcp runs, placed together in the release\n   \
         binary (see xtask/src/startup_order.rs). Written by\n   \
         `cargo run -p xtask -- startup-order` with {rustc}: {} functions\n   \
         up to the initialize answer, {} more for tools/list. */\n\
         SECTIONS\n{{\n  {SECTION} : {{\n{}\n  }}\n}}\nINSERT BEFORE .text;\n",
        start.len(),
        listing.iter().filter(|n| !start.contains(n)).count(),
        lines.join("\n")
    );
    check(&script)?;
    let path = script_path();
    let path = path.canonicalize().unwrap_or(path);
    std::fs::write(&path, script).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{} patterns written to {}", lines.len(), path.display());
    Ok(())
}

/// One function's section in the link map.
struct Section {
    address: u64,
    size: u64,
    /// The function's name: the section name without `.text.` or
    /// `.text.unlikely.`.
    name: String,
}

/// The function sections of an lld link map, by address. Input section
/// lines read `VMA LMA SIZE ALIGN file:(.text.NAME)`.
fn function_sections(map: &str) -> Vec<Section> {
    let mut sections: Vec<Section> = map
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let address = u64::from_str_radix(fields.next()?, 16).ok()?;
            let _lma = fields.next()?;
            let size = u64::from_str_radix(fields.next()?, 16).ok()?;
            let section = line.rsplit_once(":(")?.1.strip_suffix(')')?;
            let name = section
                .strip_prefix(".text.unlikely.")
                .or_else(|| section.strip_prefix(".text."))?;
            (!name.is_empty() && size > 0).then(|| Section {
                address,
                size,
                name: name.to_string(),
            })
        })
        .collect();
    sections.sort_by_key(|s| s.address);
    sections
}

/// How many sections share each hashless name.
fn instance_counts<'a>(names: impl Iterator<Item = &'a str>) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for name in names {
        *counts.entry(hashless(name)).or_default() += 1;
    }
    counts
}

/// A symbol name as a pattern that survives rebuilds: the legacy mangling's
/// trailing `17h<16 hex digits>E` and the v0 mangling's crate disambiguators
/// (`Cs<base62>_`) become wildcards.
fn hashless(name: &str) -> String {
    let mut name = name.to_string();
    if let Some(at) = name.len().checked_sub(20)
        && name.is_char_boundary(at)
        && name[at..].starts_with("17h")
        && name.ends_with('E')
        && name[at + 3..name.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
    {
        name.replace_range(at + 3..name.len() - 1, "*");
    }
    if name.starts_with("_R") {
        let mut out = String::new();
        let mut rest = name.as_str();
        while let Some(at) = rest.find("Cs") {
            out.push_str(&rest[..at + 2]);
            let after = &rest[at + 2..];
            match after.find('_') {
                Some(end) if end > 0 && after[..end].bytes().all(|b| b.is_ascii_alphanumeric()) => {
                    out.push('*');
                    rest = &after[end..];
                }
                _ => rest = after,
            }
        }
        out.push_str(rest);
        name = out;
    }
    name
}

/// Where valgrind loads a position-independent program.
const VALGRIND_PIE_BASE: u64 = 0x108000;

/// The ELF entry point (`e_entry`, at byte 24 of a 64-bit header).
fn entry_point(exe: &Path) -> Result<u64, String> {
    let bytes = std::fs::read(exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let field = bytes.get(24..32).ok_or("not an ELF file")?;
    Ok(u64::from_le_bytes(
        field.try_into().map_err(|_| "not an ELF file")?,
    ))
}

/// The functions of `exe` that ran while it answered `requests` on stdio,
/// in address order.
fn executed(
    exe: &Path,
    entry: u64,
    sections: &[Section],
    requests: &[&str],
) -> Result<Vec<String>, String> {
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let trace = home.path().join("lackey.log");
    let mut valgrind = Command::new("valgrind");
    valgrind
        .args(["--tool=lackey", "--trace-superblocks=yes"])
        .arg(format!("--log-file={}", trace.display()))
        .arg(exe);
    let mut child = in_home(&mut valgrind, home.path())
        .env("WAMCP_TOOLS", "all")
        .spawn()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    for request in requests {
        writeln!(stdin, "{request}").map_err(|e| e.to_string())?;
        if request.contains("\"id\"") {
            let mut line = String::new();
            stdout.read_line(&mut line).map_err(|e| e.to_string())?;
            if !line.contains("\"result\"") {
                return Err(format!("unexpected answer under valgrind: {line}"));
            }
        }
    }
    drop(stdin);
    child.wait().map_err(|e| e.to_string())?;
    let log = std::fs::read_to_string(&trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let blocks = superblocks(&log);
    if !blocks.contains(&(VALGRIND_PIE_BASE + entry)) {
        return Err(format!(
            "the entry point was not traced at {VALGRIND_PIE_BASE:#x} + {entry:#x}; has valgrind's load address changed?"
        ));
    }
    Ok(ran_in(&blocks, VALGRIND_PIE_BASE, sections))
}

/// The distinct `SB <hex address>` lines of a lackey trace.
fn superblocks(log: &str) -> BTreeSet<u64> {
    log.lines()
        .filter_map(|l| l.strip_prefix("SB "))
        .filter_map(|a| u64::from_str_radix(a.trim().trim_start_matches("0x"), 16).ok())
        .collect()
}

/// The functions whose sections hold any of `blocks`, in address order.
fn ran_in(blocks: &BTreeSet<u64>, base: u64, sections: &[Section]) -> Vec<String> {
    let mut ran = Vec::new();
    for section in sections {
        let start = base + section.address;
        if blocks.range(start..start + section.size).next().is_some() {
            ran.push(section.name.clone());
        }
    }
    ran
}

/// The script's shape: one output section of `*(...)` lines whose patterns
/// hold only characters of mangled names and `*`. A broken script would
/// fail only the release link, which the test suite does not run.
pub fn check(script: &str) -> Result<(), String> {
    let body = script
        .split_once(&format!("{SECTION} : {{\n"))
        .and_then(|(_, rest)| rest.split_once("\n  }\n}\nINSERT BEFORE .text;\n"))
        .map(|(body, _)| body)
        .ok_or("the script is not one output section inserted before .text")?;
    for line in body.lines() {
        let patterns = line
            .trim()
            .strip_prefix("*(")
            .and_then(|l| l.strip_suffix(')'))
            .ok_or_else(|| format!("not a section pattern line: {line}"))?;
        for pattern in patterns.split(' ') {
            let name = pattern
                .strip_prefix(".text.unlikely.")
                .or_else(|| pattern.strip_prefix(".text."))
                .ok_or_else(|| format!("not a .text pattern: {pattern}"))?;
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b'*'))
            {
                return Err(format!("a pattern a linker would misread: {pattern}"));
            }
        }
    }
    Ok(())
}

/// Where the committed script is.
pub fn script_path() -> PathBuf {
    crate::workspace().join("crates/wamcp/startup.ld")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_crate_disambiguators_become_wildcards() {
        assert_eq!(
            hashless("_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$8grow_one17he87bb3e4525f989eE"),
            "_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$8grow_one17h*E"
        );
        assert_eq!(
            hashless("_RNvMs5_NtNtCsjrHSEGnQ3l9_3std2io5errorNtB5_5Error4kind"),
            "_RNvMs5_NtNtCs*_3std2io5errorNtB5_5Error4kind"
        );
        // Not a hash: kept as it is.
        assert_eq!(hashless("_ZN4main17hxyzE"), "_ZN4main17hxyzE");
        assert_eq!(hashless("main"), "main");
    }

    #[test]
    fn traced_blocks_are_found_in_the_map_sections() {
        let map = "             VMA              LMA     Size Align Out     In      Symbol\n\
                   310dc0 310dc0 e9e99 16 .text.wamcp_startup\n\
                   310dc0 310dc0 20 16 /t/w.rcgu.o:(.text._ZN1a17h0123456789abcdefE)\n\
                   310dc0 310dc0 0 1 _ZN1a17h0123456789abcdefE\n\
                   310de0 310de0 10 16 /t/w.rcgu.o:(.text.unlikely._ZN4cold17h0123456789abcdefE)\n\
                   310df0 310df0 10 16 /t/w.rcgu.o:(.text._ZN6unused17h0123456789abcdefE)\n\
                   310e00 310e00 8 16 /usr/lib/crt1.o:(.text)\n";
        let sections = function_sections(map);
        let names: Vec<&str> = sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "_ZN1a17h0123456789abcdefE",
                "_ZN4cold17h0123456789abcdefE",
                "_ZN6unused17h0123456789abcdefE"
            ]
        );
        let log = "==1== Lackey\nSB 00418dd4\nSB 00418de8\nSB 00418dd4\nSB 05000000\n";
        let blocks = superblocks(log);
        assert_eq!(
            ran_in(&blocks, VALGRIND_PIE_BASE, &sections),
            ["_ZN1a17h0123456789abcdefE", "_ZN4cold17h0123456789abcdefE"]
        );
    }

    #[test]
    fn the_committed_script_is_well_formed() {
        let script = std::fs::read_to_string(script_path()).unwrap();
        check(&script).unwrap();
        assert!(
            script
                .lines()
                .filter(|l| l.trim().starts_with("*("))
                .count()
                > 100
        );
    }

    #[test]
    fn malformed_scripts_are_refused() {
        let good = format!(
            "SECTIONS\n{{\n  {SECTION} : {{\n    *(.text.a .text.unlikely.a)\n  }}\n}}\nINSERT BEFORE .text;\n"
        );
        assert!(check(&good).is_ok());
        for bad in [
            good.replace("*(.text.a ", "*(.text.a) /* "),
            good.replace(".text.a", ".data.a"),
            good.replace(".text.a", ".text.a(b"),
            good.replace("INSERT BEFORE .text;", ""),
        ] {
            assert!(check(&bad).is_err(), "{bad}");
        }
    }
}
