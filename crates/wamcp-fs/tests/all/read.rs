//! read_file against real files.

use std::path::Path;
use wamcp_fs::read_file;
use wamcp_policy::error::ErrorType;

fn dir_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

fn read(dir: &Path, name: &str, start: i64, max: i64) -> String {
    read_file(name, dir, start, max).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn whole_small_file_is_returned_exactly_without_notice() {
    let d = dir_with(&[("a.txt", b"one\ntwo\nthree")]);
    assert_eq!(read(d.path(), "a.txt", 1, 2000), "one\ntwo\nthree\n");
}

#[test]
fn crlf_is_shown_as_lf_and_a_utf8_bom_is_dropped() {
    let d = dir_with(&[("w.txt", b"\xEF\xBB\xBFint a;\r\nint b;\r\n")]);
    assert_eq!(read(d.path(), "w.txt", 1, 2000), "int a;\nint b;\n");
}

#[test]
fn utf16_with_a_bom_is_decoded() {
    let text = "Write-Host 'héllo'\r\n$x = 1\r\n";
    let le: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let be: Vec<u8> = [0xFE, 0xFF]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
        .collect();
    let d = dir_with(&[("le.ps1", &le), ("be.ps1", &be)]);
    for name in ["le.ps1", "be.ps1"] {
        assert_eq!(
            read(d.path(), name, 1, 2000),
            "Write-Host 'héllo'\n$x = 1\n",
            "{name}"
        );
    }
}

#[test]
fn a_window_names_the_exact_next_call() {
    let d = dir_with(&[("n.txt", numbered(5).as_bytes())]);
    assert_eq!(
        read(d.path(), "n.txt", 2, 2),
        "line 2\nline 3\n[Lines 2-3 of 5. Next: read_file(path=\"n.txt\", start_line=4).]\n"
    );
    assert_eq!(
        read(d.path(), "n.txt", 4, 10),
        "line 4\nline 5\n[Lines 4-5 of 5; this is the end of the file.]\n"
    );
}

#[test]
fn the_line_limit_is_2000_and_a_larger_request_is_reported() {
    let d = dir_with(&[("big.txt", numbered(2500).as_bytes())]);
    let out = read(d.path(), "big.txt", 1, 2000);
    assert_eq!(out.lines().filter(|l| l.starts_with("line ")).count(), 2000);
    assert!(out.ends_with(
        "[Lines 1-2000 of 2500. Next: read_file(path=\"big.txt\", start_line=2001).]\n"
    ));
    let out = read(d.path(), "big.txt", 1, 9999);
    assert!(
        out.contains("[max_lines is limited to 2000 per call.]"),
        "{}",
        &out[out.len() - 300..]
    );
    for asked in [0, -4] {
        assert_eq!(
            read(d.path(), "big.txt", 1, asked),
            format!(
                "line 1\n[max_lines below 1 reads one line; asked for {asked}.]\n[Lines 1-1 of 2500. Next: \
                 read_file(path=\"big.txt\", start_line=2).]\n"
            )
        );
    }
}

#[test]
fn start_line_below_one_means_one_and_past_the_end_is_refused() {
    let d = dir_with(&[("n.txt", numbered(3).as_bytes())]);
    assert_eq!(
        read(d.path(), "n.txt", 0, 1),
        read(d.path(), "n.txt", -5, 1)
    );
    let err = read_file("n.txt", d.path(), 4, 10).unwrap_err();
    assert_eq!(err.kind, ErrorType::StartLineOutOfRange);
    assert_eq!(err.details["total_lines"], 3);
    assert_eq!(err.recovery, ["Use a start_line between 1 and 3."]);
}

#[test]
fn the_byte_limit_cuts_at_a_line_boundary() {
    let line = format!("{}\n", "x".repeat(999));
    let d = dir_with(&[("wide.txt", line.repeat(300).as_bytes())]);
    let out = read(d.path(), "wide.txt", 1, 2000);
    let shown = out.lines().filter(|l| l.starts_with('x')).count();
    assert_eq!(shown, 262);
    assert!(out.ends_with(
        "[Lines 1-262 of 300 (the 256 KiB per-call limit). Next: \
         read_file(path=\"wide.txt\", start_line=263).]\n"
    ));
}

#[test]
fn one_huge_line_is_cut_at_a_character_boundary() {
    // 'é' is two bytes, so a character straddles the 256 KiB mark.
    let huge = format!("{}\nnext\n", "é".repeat(140_000));
    let d = dir_with(&[("min.js", huge.as_bytes())]);
    let out = read(d.path(), "min.js", 1, 2000);
    let first = out.lines().next().unwrap();
    assert_eq!(first.len(), 262_142);
    assert!(first.chars().all(|c| c == 'é'));
    assert!(
        out.contains("Line 1 is 280000 bytes long; only its first 262142 bytes are shown"),
        "{}",
        &out[262_143..]
    );
    assert!(out.contains("call read_file(path=\"min.js\", start_line=2)"));
}

#[test]
fn a_last_line_without_newline_counts_and_an_empty_file_says_so() {
    let d = dir_with(&[("t.txt", b"a\nb"), ("e.txt", b"")]);
    let out = read(d.path(), "t.txt", 1, 1);
    assert!(out.contains("of 2."), "{out}");
    assert_eq!(
        read(d.path(), "e.txt", 1, 10),
        "[e.txt is empty: 0 lines]\n"
    );
}

#[test]
fn non_utf8_files_are_refused_with_a_description() {
    let utf16_no_bom: Vec<u8> = "hello there"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let d = dir_with(&[
        ("bin.exe", b"MZ\x90\0\x03\0\0\0\x04\0"),
        ("u16.txt", &utf16_no_bom),
        ("latin.txt", b"caf\xe9\n"),
    ]);
    for (name, looks) in [
        ("bin.exe", "binary data"),
        (
            "u16.txt",
            "UTF-16 little-endian text without a byte-order mark",
        ),
        ("latin.txt", "legacy 8-bit encoding"),
    ] {
        let err = read_file(name, d.path(), 1, 10).unwrap_err();
        assert_eq!(err.kind, ErrorType::InvalidTextEncoding, "{name}");
        assert!(
            err.details["looks_like"].as_str().unwrap().contains(looks),
            "{name}: {err:?}"
        );
        assert!(!err.recovery.is_empty());
    }
}

#[test]
fn missing_paths_name_the_nearest_existing_ancestor() {
    let d = dir_with(&[("src/a.txt", b"x")]);
    let err = read_file("src/nope/deeper.txt", d.path(), 1, 10).unwrap_err();
    assert_eq!(err.kind, ErrorType::PathNotFound);
    // Written as the caller wrote the path: relative stays relative.
    assert_eq!(err.details["existing_ancestor"], "src");
    let err = read_file("nope/deeper.txt", d.path(), 1, 10).unwrap_err();
    assert_eq!(err.details["existing_ancestor"], ".");
    let absolute = d.path().join("src").join("nope").join("x.txt");
    let err = read_file(&absolute.display().to_string(), d.path(), 1, 10).unwrap_err();
    assert_eq!(
        err.details["existing_ancestor"],
        d.path().join("src").display().to_string()
    );
    let err = read_file("src", d.path(), 1, 10).unwrap_err();
    assert_eq!(err.kind, ErrorType::PathIsNotFile);
    assert_eq!(
        read_file("", d.path(), 1, 10).unwrap_err().kind,
        ErrorType::InvalidPath
    );
    assert_eq!(
        read_file("a\0.txt", d.path(), 1, 10).unwrap_err().kind,
        ErrorType::InvalidPath
    );
}

#[test]
fn absolute_paths_work_and_windows_accepts_both_separators() {
    let d = dir_with(&[("sub/x.txt", b"hi\n")]);
    let abs = d.path().join("sub").join("x.txt");
    assert_eq!(read(Path::new("/"), abs.to_str().unwrap(), 1, 10), "hi\n");
    if cfg!(windows) {
        assert_eq!(read(d.path(), "sub\\x.txt", 1, 10), "hi\n");
        assert_eq!(read(d.path(), "sub/x.txt", 1, 10), "hi\n");
    }
}

/// A file with no line break that is mostly a hole (free to make, huge to
/// hold): read_file keeps one budget of it in memory, shows its head, and
/// stops where the hole (binary data) begins.
#[test]
fn a_huge_line_is_never_held_whole() {
    let d = dir_with(&[("sparse.txt", "é".repeat(200_000).as_bytes())]);
    let path = d.path().join("sparse.txt");
    let size: u64 = 512 * 1024 * 1024;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(size)
        .unwrap();
    let out = read(d.path(), "sparse.txt", 1, 10);
    let (shown, note) = out.split_once('\n').unwrap();
    assert!(
        shown.chars().all(|c| c == 'é'),
        "the cut never splits a character"
    );
    assert_eq!(shown.len(), 262_142);
    assert!(note.starts_with("[Line 1 is more than "), "{note}");
    assert!(
        note.contains("bytes long and then turns to binary data (NUL bytes); only its first 262142 bytes are shown"),
        "{note}"
    );
}

/// A sparse file is terabytes of zeros for free: its hole is binary data,
/// where counting and reading stop at once.
#[test]
fn a_huge_sparse_file_is_read_only_to_its_hole() {
    let d = dir_with(&[]);
    let path = d.path().join("sparse.log");
    // More text than the binary sniff reads, then a hole.
    std::fs::write(&path, numbered(3000)).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(1 << 40).unwrap();
    assert_eq!(
        read(d.path(), "sparse.log", 1, 2),
        "line 1\nline 2\n[Lines 1-2 of more than 3000 (counting stopped where the file turns to \
         binary data). Next: read_file(path=\"sparse.log\", start_line=3).]\n"
    );
    let err = read_file("sparse.log", d.path(), 5000, 2).unwrap_err();
    assert_eq!(err.kind, ErrorType::InvalidTextEncoding);
    assert!(err.message.contains("after line 3000"), "{}", err.message);
}

/// Counting the lines after the window stops at the byte budget and says
/// "more than"; a clock that ran out stops reading with a typed error.
#[test]
fn counting_stops_at_the_byte_budget_and_reading_at_the_clock() {
    let d = dir_with(&[("big.log", numbered(400_000).as_bytes())]);
    let scan = wamcp_fs::Scan {
        count_bytes: 1024 * 1024,
        ..wamcp_fs::Scan::default()
    };
    let out = wamcp_fs::read_file_within("big.log", d.path(), 1, 1, &scan).unwrap();
    assert!(out.starts_with("line 1\n[Lines 1-1 of more than "), "{out}");
    assert!(
        out.contains("(counting stopped after 1 MiB past the lines shown)"),
        "{out}"
    );
    let exact = read(d.path(), "big.log", 1, 1);
    assert!(exact.contains("of 400000."), "{exact}");
    let scan = wamcp_fs::Scan {
        time: std::time::Duration::ZERO,
        ..wamcp_fs::Scan::default()
    };
    let err = wamcp_fs::read_file_within("big.log", d.path(), 5000, 2, &scan).unwrap_err();
    assert_eq!(err.kind, ErrorType::ReadFailed);
    assert!(err.message.contains("within 0 s"), "{}", err.message);
}

/// A cancelled call stops reading at once.
#[test]
fn a_cancelled_read_stops() {
    let d = dir_with(&[("a.txt", b"one\ntwo\n")]);
    let scan = wamcp_fs::Scan {
        cancelled: &|| true,
        ..wamcp_fs::Scan::default()
    };
    let err = wamcp_fs::read_file_within("a.txt", d.path(), 1, 10, &scan).unwrap_err();
    assert_eq!(err.kind, ErrorType::Cancelled);
}
