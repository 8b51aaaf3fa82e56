//! The report's shape, checked against its limits, tags and outcomes.

use super::*;

#[test]
fn reports_never_call_a_failed_build_clean() {
    let ok = report(
        "BUILD",
        "cmake --build build",
        Some(0),
        "a.c:1:1: warning: w\n",
        Path::new("/b"),
    );
    assert_eq!(
        ok,
        "BUILD: cmake --build build (exit code 0)\nWARNINGS (1 unique, 1 total):\n  a.c:1:1: w\nWARNING SUMMARY: (no code) x1 (.)\nBUILD SUCCEEDED (0 errors, 1 warnings)\nWarnings above are not fatal.\n"
    );
    let failed = report(
        "BUILD",
        "make",
        Some(2),
        "a.c:1:1: error: e\na.c:1:1: error: e\n",
        Path::new("/b"),
    );
    assert_eq!(
        failed,
        "BUILD: make (exit code 2)\nERRORS (1 unique, 2 total):\n  a.c:1:1: e (x2)\nBUILD FAILED\n"
    );
    let opaque = report(
        "BUILD",
        "tool",
        Some(1),
        "starting\n\nsomething went wrong\n",
        Path::new("/b"),
    );
    assert!(opaque.ends_with("BUILD FAILED, but no recognised compiler diagnostics were found. Last lines of output:\n  starting\n  something went wrong\n"), "{opaque}");
    let many: String = (0..30)
        .map(|i| format!("a.c:{i}:1: error: e{i}\n"))
        .collect();
    let capped = report("BUILD", "x", Some(1), &many, Path::new("/b"));
    assert!(
        capped.contains("  ...10 more unique errors not shown\n"),
        "{capped}"
    );
}

/// Real gcc output for a broken file, parsed as a user would see it.
#[cfg(unix)]
#[test]
fn real_gcc_output() {
    let dir = std::env::temp_dir().join(format!("wamcp-diag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("broken.c"),
        "int main(void) {\n  int unused;\n  return missing;\n}\n",
    )
    .unwrap();
    let out = match std::process::Command::new("gcc")
        .args(["-Wall", "-c", "broken.c"])
        .env("LC_ALL", "C")
        .current_dir(&dir)
        .output()
    {
        Ok(out) => out,
        Err(_) => {
            assert!(
                std::env::var("WAMCP_TEST_STRICT").as_deref() != Ok("1"),
                "gcc is required under scripts/test.sh"
            );
            // Straight to stderr: the harness swallows the output of passing tests.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"\n!!! SKIPPED real_gcc_output: gcc is not installed !!!\n",
            );
            return;
        }
    };
    let log = String::from_utf8_lossy(&out.stderr);
    let text = report(
        "BUILD",
        "gcc -Wall -c broken.c",
        out.status.code(),
        &log,
        &dir,
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        text.contains("ERRORS (1 unique, 1 total):\n  broken.c:3:10: 'missing' undeclared"),
        "{text}"
    );
    assert!(
        text.contains("      note: broken.c:3:10: each undeclared identifier"),
        "{text}"
    );
    assert!(
        text.contains("WARNINGS (1 unique, 1 total):\n  broken.c:2:7: unused variable 'unused'"),
        "{text}"
    );
    assert!(text.ends_with("BUILD FAILED\n"), "{text}");
}

#[test]
fn the_report_limits_and_tags() {
    // Fourteen unique warnings: ten shown, the rest counted.
    let many: String = (0..14)
        .map(|i| format!("src/a.c:{i}:1: warning: w{i}\n"))
        .collect();
    let text = report("BUILD", "make", Some(0), &many, Path::new("/b"));
    assert!(text.contains("WARNINGS (14 unique, 14 total):\n"), "{text}");
    assert!(
        text.contains("  ...4 more unique warnings not shown\n"),
        "{text}"
    );
    assert_eq!(text.matches("src/a.c:").count(), 10);
    // A 2,000-character template error is cut at 500, visibly.
    let long = format!("src/t.cpp:1:1: error: {}\n", "x".repeat(2000));
    let text = report("BUILD", "make", Some(2), &long, Path::new("/b"));
    let shown = text.lines().find(|l| l.contains("src/t.cpp")).unwrap();
    assert!(shown.ends_with(" [message truncated]"), "{shown}");
    assert_eq!(shown.matches('x').count(), 500, "{shown}");
    // Vendored warnings are tagged; errors never are; codes count too.
    let log = "third_party/zlib/inflate.c:10:3: warning: old style\n\
               src/Vendor/x.c:1:1: warning: w\n\
               C:/p/src/main.cpp(3,1): warning C4996: 'strcpy': unsafe\n\
               deps/lib/a.c:2:2: error: broken\n\
               LINK : warning LNK4099: PDB 'x.pdb' was not found\n";
    let text = report("BUILD", "make", Some(2), log, Path::new("/b"));
    assert!(
        text.contains("  third_party/zlib/inflate.c:10:3: old style [likely pre-existing]\n"),
        "{text}"
    );
    assert!(
        text.contains("  src/Vendor/x.c:1:1: w [likely pre-existing]\n"),
        "{text}"
    );
    assert!(
        text.contains("C4996: 'strcpy': unsafe [likely pre-existing]\n"),
        "{text}"
    );
    assert!(
        text.contains("  deps/lib/a.c:2:2: broken\n"),
        "an error is never tagged: {text}"
    );
    // A diagnostic with no file says so.
    assert!(
        text.contains("  (no file): LNK4099: PDB 'x.pdb' was not found [likely pre-existing]\n"),
        "{text}"
    );
    let nofile = report(
        "BUILD",
        "link",
        Some(1),
        "LINK : fatal error LNK1181: cannot open input file 'x.lib'\n",
        Path::new("/b"),
    );
    assert!(
        nofile.contains("  (no file): LNK1181: cannot open input file 'x.lib'\n"),
        "{nofile}"
    );
}

#[test]
fn the_warning_summary_groups_by_code_and_top_directory() {
    let log = "C:/b/deps/a.cpp(1,1): warning C4996: x\n".to_string()
        + "C:/b/deps/b.cpp(1,1): warning C4996: y\n"
        + "C:/b/src/c.cpp(1,1): warning C4100: z\n"
        + "/b/src/d.c:1:1: warning: unused variable 'q' [-Wunused-variable]\n";
    let text = report("BUILD", "msbuild", Some(0), &log, Path::new("C:/b"));
    let line = text
        .lines()
        .find(|l| l.starts_with("WARNING SUMMARY: "))
        .unwrap();
    assert_eq!(
        line,
        "WARNING SUMMARY: C4996 x2 (deps) | -Wunused-variable x1 (/b) | C4100 x1 (src)"
    );
}

#[test]
fn the_header_carries_the_elapsed_time() {
    let build = Build {
        subject: "BUILD",
        command: "ninja",
        exit_code: Some(0),
        elapsed: Some(Duration::from_millis(12_345)),
        output: "ninja: no work to do.\n",
        build_dir: Path::new("/b"),
    };
    let (text, _) = render(&build, Since::Nothing(""));
    assert!(
        text.starts_with("BUILD: ninja (exit code 0, 12.3 s)\nrebuild: up-to-date\n"),
        "{text}"
    );
}

#[test]
fn rebuild_kinds_from_the_tools_own_lines() {
    let cases: &[(&str, &str, Option<&str>)] = &[
        ("ninja", "ninja: no work to do.\n", Some("up-to-date")),
        (
            "cmake --build build",
            "[1/2] Building CXX object a.o\n[2/2] Linking CXX executable app\n",
            None,
        ),
        (
            "cmake --build build --clean-first",
            "[1/2] Building CXX object a.o\n",
            Some("full"),
        ),
        ("msbuild App.sln /t:Rebuild", "", Some("full")),
        ("dotnet build --no-incremental", "", Some("full")),
        (
            "msbuild App.sln",
            "  All outputs are up-to-date.\n",
            Some("up-to-date"),
        ),
        (
            "msbuild App.sln",
            "ClCompile:\n  a.cpp\n  All outputs are up-to-date.\n",
            Some("incremental"),
        ),
        (
            "cargo build",
            "    Finished `dev` profile [unoptimized] target(s) in 0.10s\n",
            Some("up-to-date"),
        ),
        (
            "cargo build",
            "   Compiling app v0.1.0\n    Finished `dev` profile target(s) in 1.2s\n",
            None,
        ),
        (
            "make",
            "make: Nothing to be done for 'all'.\n",
            Some("up-to-date"),
        ),
        ("make", "cc -c a.c\n", None),
    ];
    for (command, output, want) in cases {
        assert_eq!(
            rebuild_kind(command, output),
            *want,
            "{command}: {output:?}"
        );
    }
}

#[test]
fn the_second_build_says_what_the_edit_changed() {
    let history = History::default();
    let root = Path::new("/p");
    let build = |output: &'static str| Build {
        subject: "BUILD",
        command: "make",
        exit_code: Some(0),
        elapsed: None,
        output,
        build_dir: Path::new("/p"),
    };
    let first = history.report(
        root,
        "gcc",
        &build("a.c:1:1: warning: old\nb.c:5:1: warning: fixed soon\n"),
    );
    assert!(
        first.contains("since the last build: not compared (first build of this command)\n"),
        "{first}"
    );
    // The old warning moved two lines down (an edit above it): still the same one.
    let second = history.report(
        root,
        "gcc",
        &build("a.c:3:1: warning: old\nc.c:2:1: warning: brand new\n"),
    );
    assert!(
        second.contains(
            "since the last build of this command: 0 new error(s), 1 new warning(s), 1 gone\n"
        ),
        "{second}"
    );
    assert!(second.contains("  a.c:3:1: old\n"), "{second}");
    assert!(second.contains("  c.c:2:1: brand new [new]\n"), "{second}");
    assert!(!second.contains("fixed soon"), "{second}");
    let other_tool = history.report(root, "clang", &build("a.c:3:1: warning: old\n"));
    assert!(
        other_tool.contains("nothing to compare (the build tool changed)"),
        "{other_tool}"
    );
}
