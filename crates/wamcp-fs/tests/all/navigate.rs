//! list_directory, list_empty_dirs, find_files and search_files on real trees.

use std::path::Path;
use std::sync::atomic::AtomicUsize;
use wamcp_fs::{
    Bounds, Budget, SearchRequest, Secrets, find_files, list_directory, list_empty_dirs,
    search_files,
};

/// A budget that never runs out: these tests are about answers, not time.
pub(crate) struct Never;

impl Budget for Never {
    fn exhausted(&self, _started: usize) -> bool {
        false
    }

    fn describe(&self) -> String {
        "forever".into()
    }
}

static FILES_DONE: AtomicUsize = AtomicUsize::new(0);

static NO_SECRETS: std::sync::LazyLock<Secrets> = std::sync::LazyLock::new(Secrets::default);

fn bounds() -> Bounds<'static> {
    Bounds {
        budget: &Never,
        progress: &FILES_DONE,
        threads: None,
        secrets: &NO_SECRETS,
    }
}
use wamcp_policy::error::ErrorType;

fn tree(files: &[(&str, &[u8])], dirs: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in dirs {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

fn root(d: &tempfile::TempDir) -> String {
    dunce::canonicalize(d.path()).unwrap().display().to_string()
}

/// A search answer with each match line prefixed by its file again
/// (`path:line: text`), so tests can pick lines out one by one; the
/// grouped form itself is checked in `search_answers_group_matches_by_file`.
fn flat(grouped: &str) -> String {
    let lines: Vec<&str> = grouped.lines().collect();
    let numbered = |line: &str| {
        line.split_once(": ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut out = String::new();
    let mut file: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        if numbered(line)
            && let Some(file) = file
        {
            out.push_str(&format!("{file}:{line}\n"));
        } else if lines.get(i + 1).is_some_and(|next| numbered(next)) {
            file = Some(line);
        } else {
            file = None;
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The answer as the tool gives it, grouped by file.
fn grouped(dir: &Path, pattern: &str) -> String {
    let req = SearchRequest {
        pattern,
        path: ".",
        file_glob: "",
        ignore_case: false,
        regex: false,
        max_results: 100,
    };
    search_files(&req, dir, &bounds()).unwrap()
}

fn search(
    dir: &Path,
    pattern: &str,
    glob: &str,
    ignore_case: bool,
    regex: bool,
    max: i64,
) -> String {
    let req = SearchRequest {
        pattern,
        path: ".",
        file_glob: glob,
        ignore_case,
        regex,
        max_results: max,
    };
    flat(&search_files(&req, dir, &bounds()).unwrap_or_else(|e| panic!("{pattern}: {e:?}")))
}

fn search_err(dir: &Path, pattern: &str, regex: bool) -> wamcp_policy::error::ToolError {
    let req = SearchRequest {
        pattern,
        path: ".",
        file_glob: "",
        ignore_case: false,
        regex,
        max_results: 100,
    };
    search_files(&req, dir, &bounds()).unwrap_err()
}

#[test]
fn list_directory_format() {
    let d = tree(
        &[("b.txt", b""), ("A.md", b""), ("src/x", b"")],
        &["Docs", "zeta"],
    );
    let out = list_directory(".", d.path(), &bounds()).unwrap();
    assert_eq!(
        out,
        format!(
            "DIRECTORY: {}\nDocs/\nsrc/\nzeta/\nA.md\nb.txt\n5 entries\n",
            root(&d)
        )
    );
    assert_eq!(
        list_directory("", d.path(), &bounds()).unwrap(),
        out,
        "blank means the working directory"
    );
    let empty = list_directory("zeta", d.path(), &bounds()).unwrap();
    assert!(empty.ends_with("zeta\n(empty)\n"), "{empty}");
    assert!(
        list_directory("src", d.path(), &bounds())
            .unwrap()
            .ends_with("\nx\n1 entry\n")
    );
}

#[test]
fn list_directory_refusals_and_cap() {
    let d = tree(&[("f.txt", b"")], &[]);
    assert_eq!(
        list_directory("f.txt", d.path(), &bounds())
            .unwrap_err()
            .kind,
        ErrorType::PathIsNotDirectory
    );
    assert_eq!(
        list_directory("nope", d.path(), &bounds())
            .unwrap_err()
            .kind,
        ErrorType::PathNotFound
    );
    for i in 0..1003 {
        std::fs::write(d.path().join(format!("n{i:04}")), b"").unwrap();
    }
    let out = list_directory(".", d.path(), &bounds()).unwrap();
    // The header, 1000 entries, the line saying how many there are.
    assert_eq!(out.lines().count(), 1002, "{out}");
    assert!(out.ends_with("Showing 1000 of 1004 entries (0 directories, 1004 files). The listing is INCOMPLETE; use find_files with a glob to narrow it.\n"), "{out}");
}

#[test]
fn empty_directories_deepest_first() {
    let d = tree(
        &[("full/file.txt", b"x"), ("mixed/keep.txt", b"x")],
        &[
            "a/b/c",
            "a/b2",
            "f",
            "mixed/empty",
            "vcs/.git/objects",
            "Build/x/y",
        ],
    );
    let out = list_empty_dirs(".", d.path(), &bounds()).unwrap();
    assert_eq!(
        out,
        format!(
            "EMPTY DIRECTORIES under {}/. (deepest first):\na/b/c\na/b\na/b2\nmixed/empty\na\nf\n6 empty directories\n",
            root(&d)
        )
        .replace("/.", if cfg!(windows) { "\\." } else { "/." })
    );
    // A tree with nothing in it: the root comes last, so the list deletes it all.
    let d = tree(&[], &["only/chain", "other"]);
    let out = list_empty_dirs(".", d.path(), &bounds()).unwrap();
    assert!(
        out.ends_with("only/chain\nonly\nother\n.\n4 empty directories\n"),
        "{out}"
    );
    let d = tree(&[], &[]);
    assert!(
        list_empty_dirs(".", d.path(), &bounds())
            .unwrap()
            .ends_with("(deepest first):\n.\n1 empty directory\n")
    );
    let d = tree(&[("x.txt", b"")], &[]);
    assert!(
        list_empty_dirs(".", d.path(), &bounds())
            .unwrap()
            .starts_with("no empty directories found under ")
    );
    assert_eq!(
        list_empty_dirs("x.txt", d.path(), &bounds())
            .unwrap_err()
            .kind,
        ErrorType::PathIsNotDirectory
    );
    assert_eq!(
        list_empty_dirs("", d.path(), &bounds()).unwrap_err().kind,
        ErrorType::InvalidPath
    );
}

/// A path that cannot be walked at all (here a link loop, which the
/// system refuses to resolve) is a DIRECTORY_WALK_FAILED error, not an
/// empty answer.
#[cfg(unix)]
#[test]
fn a_root_that_cannot_be_walked_is_a_walk_failure() {
    let d = tree(&[], &[]);
    std::os::unix::fs::symlink("loop-b", d.path().join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", d.path().join("loop-b")).unwrap();
    let error = list_empty_dirs("loop-a", d.path(), &bounds()).unwrap_err();
    assert_eq!(error.kind, ErrorType::DirectoryWalkFailed, "{error:?}");
    assert!(
        error.message.starts_with("Cannot read 'loop-a': "),
        "{error:?}"
    );
    assert_eq!(
        list_empty_dirs("missing", d.path(), &bounds())
            .unwrap_err()
            .kind,
        ErrorType::PathNotFound
    );
}

fn code_tree() -> tempfile::TempDir {
    tree(
        &[
            ("src/main.cpp", b"int main() {\n    return run();\n}\n"),
            ("src/render/vk/Device.CPP", b"// device\nvoid run();\n"),
            ("src/render/shader.frag", b"void main() {}\n"),
            ("include/run.h", b"int run();\n"),
            ("build/gen.cpp", b"int run();\n"),
            ("sub/node_modules/m.cpp", b"run\n"),
            ("out/Debug/x.cpp", b"run\n"),
            ("DEBUG/y.cpp", b"run\n"),
            ("README.md", b"Run it.\n"),
        ],
        &[],
    )
}

#[test]
fn find_files_format_and_pruning() {
    let d = code_tree();
    let out = find_files("*.cpp", ".", d.path(), 500, &bounds()).unwrap();
    let base = d.path().join(".");
    assert_eq!(
        out,
        format!(
            "FIND: *.cpp in {}\nsrc/main.cpp\nsrc/render/vk/Device.CPP\n2 files\n",
            base.display()
        )
    );
    let out = find_files("*.frag, *.h", ".", d.path(), 500, &bounds()).unwrap();
    assert!(
        out.contains("\ninclude/run.h\nsrc/render/shader.frag\n2 files\n"),
        "{out}"
    );
    let out = find_files("src/*.cpp", ".", d.path(), 500, &bounds()).unwrap();
    assert!(
        out.contains("src/render/vk/Device.CPP"),
        "a slash anchors the prefix only: {out}"
    );
    // Pointing path at a skipped directory looks inside it.
    let out = find_files("*.cpp", "build", d.path(), 500, &bounds()).unwrap();
    assert!(out.ends_with("\ngen.cpp\n1 file\n"), "{out}");
}

#[test]
fn find_files_caps_and_refusals() {
    let d = code_tree();
    let out = find_files("*", ".", d.path(), 2, &bounds()).unwrap();
    assert!(out.contains("\ninclude/run.h\nREADME.md\nShowing the first 2 of 5 matching files, in path order. The list is INCOMPLETE"), "{out}");
    // The clamp is mentioned only when it cut the list.
    let out = find_files("*.md", ".", d.path(), 9000, &bounds()).unwrap();
    assert!(out.ends_with("\n1 file\n"), "{out}");
    let out = find_files("*.nothing", ".", d.path(), 0, &bounds()).unwrap();
    // code_tree has a build folder, so the skipped ones are mentioned.
    assert!(
        out.contains("0 files\nSkipped as tool folders: build, DEBUG, out, and 1 more; pass one as path to look inside.\n"),
        "{out}"
    );
    assert!(!out.contains("max_results"), "{out}");
    let out = find_files("*", ".", d.path(), 0, &bounds()).unwrap();
    assert!(
        out.ends_with("(max_results 0 is outside 1-500; used 1.)\n"),
        "{out}"
    );
    assert_eq!(
        find_files(" , ", ".", d.path(), 10, &bounds())
            .unwrap_err()
            .kind,
        ErrorType::InvalidPattern
    );
    assert_eq!(
        find_files("[z-a]", ".", d.path(), 10, &bounds())
            .unwrap_err()
            .kind,
        ErrorType::InvalidPattern
    );
    assert_eq!(
        find_files("*", "README.md", d.path(), 10, &bounds())
            .unwrap_err()
            .kind,
        ErrorType::PathIsNotDirectory
    );
    assert_eq!(
        find_files("*", "missing", d.path(), 10, &bounds())
            .unwrap_err()
            .kind,
        ErrorType::PathNotFound
    );
    assert!(
        find_files("***", ".", d.path(), 10, &bounds())
            .unwrap()
            .contains("5 files")
    );
}

#[test]
fn search_literal_case_and_regex() {
    let d = code_tree();
    let out = search(d.path(), "run", "", false, false, 100);
    assert_eq!(
        out,
        format!(
            "include/run.h:1: int run();\nsrc/main.cpp:2: return run();\nsrc/render/vk/Device.CPP:2: void run();\n\
             3 matches in 3 files.\n",
        )
    );
    let out = search(d.path(), "RUN", "*.md", true, false, 100);
    assert!(
        out.starts_with("README.md:1: Run it.\n1 match in 1 file"),
        "{out}"
    );
    let out = search(d.path(), r"^\s*void \w+\(", "", false, true, 100);
    assert!(
        out.starts_with(
            "src/render/shader.frag:1: void main() {}\nsrc/render/vk/Device.CPP:2: void run();\n"
        ),
        "{out}"
    );
    // Literal mode really is literal.
    assert!(search(d.path(), "run()", "", false, false, 100).starts_with("include/run.h:1:"));
    assert!(search(d.path(), "run.)", "", false, false, 100).starts_with("No match ("));
    assert!(search(d.path(), "run(", "", false, false, 100).starts_with("include/run.h:1:"));
}

#[test]
fn search_truncation_is_deterministic_and_says_incomplete() {
    let mut files = Vec::new();
    for i in 0..30 {
        files.push((
            format!("f{i:02}.txt"),
            "hit\nhit\nmiss\nhit\nhit\nhit\n".to_string(),
        ));
    }
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_bytes()))
        .collect();
    let d = tree(&refs, &[]);
    let first = search(d.path(), "hit", "", false, false, 100);
    assert_eq!(first.lines().filter(|l| l.contains(": hit")).count(), 100);
    assert!(
        first.lines().nth(99).unwrap().starts_with("f19.txt:6: hit"),
        "{first}"
    );
    assert!(first.contains("The result is INCOMPLETE: there are more matches, so these lines must not be counted as a total."));
    for _ in 0..5 {
        assert_eq!(search(d.path(), "hit", "", false, false, 100), first);
    }
    let capped = search(d.path(), "hit", "", false, false, 1000);
    assert!(capped.contains("(max_results 1000 is outside 1-100; used 100.)"));
    let uncut = search(d.path(), "hit", "f00.txt", false, false, 1000);
    assert!(!uncut.contains("max_results"), "{uncut}");
    let exact = search(d.path(), "hit", "f0*", false, false, 50);
    assert!(exact.starts_with("f00.txt:1: hit"));
    assert!(exact.contains("50 matches in 10 files"), "{exact}");
}

#[test]
fn regex_hint_only_for_regex_syntax() {
    let d = code_tree();
    let out = search(d.path(), r"run\(\)", "", false, false, 100);
    assert!(out.contains("retry with regex=true"), "{out}");
    let out = search(d.path(), "nothing(", "", false, false, 100);
    assert!(!out.contains("regex=true"), "{out}");
    assert!(
        out.starts_with("No match (5 files).\nSkipped as tool folders: build, DEBUG, out, and 1 more; pass one as path to look inside.\n"),
        "{out}"
    );
}

#[test]
fn bad_patterns_are_typed_errors_and_hard_ones_are_answered() {
    let d = code_tree();
    let err = search_err(d.path(), "(unclosed", true);
    assert_eq!(err.kind, ErrorType::InvalidPattern);
    assert!(err.message.contains("unclosed group"), "{}", err.message);
    for (pattern, feature) in [
        (r"(?<=a)b", "look-around"),
        (r"a(?!b)", "look-around"),
        (r"(a)\1", "a backreference"),
    ] {
        let err = search_err(d.path(), pattern, true);
        assert_eq!(err.kind, ErrorType::InvalidPattern);
        assert!(
            err.message
                .starts_with(&format!("The regex uses {feature}"))
                && err.message.contains("linear time"),
            "{}",
            err.message
        );
    }
    assert_eq!(
        search_err(d.path(), "", false).kind,
        ErrorType::InvalidPattern
    );
    assert_eq!(
        search_err(d.path(), "a\nb", false).kind,
        ErrorType::InvalidPattern
    );
    // Exponential for a backtracking engine, linear here.
    let evil = tree(
        &[("e.txt", format!("{}!\n", "a".repeat(50_000)).as_bytes())],
        &[],
    );
    assert!(search(evil.path(), "(a+)+$", "", false, true, 100).starts_with("No match ("));
    assert!(search(evil.path(), "(a|aa)*b", "", false, true, 100).starts_with("No match ("));
    // A 100 KB pattern: an answer (literal) or a typed error (regex), never a hang.
    let big = "x".repeat(100 * 1024);
    assert!(search(d.path(), &big, "", false, false, 100).starts_with("No match ("));
    let req = SearchRequest {
        pattern: &format!("({big})+"),
        path: ".",
        file_glob: "",
        ignore_case: false,
        regex: true,
        max_results: 1,
    };
    if let Err(e) = search_files(&req, d.path(), &bounds()) {
        assert_eq!(e.kind, ErrorType::InvalidPattern);
    }
    assert!(search(d.path(), "a\0b", "", false, false, 100).starts_with("No match ("));
    let req = SearchRequest {
        pattern: "x",
        path: "a\0b",
        file_glob: "",
        ignore_case: false,
        regex: false,
        max_results: 1,
    };
    assert_eq!(
        search_files(&req, d.path(), &bounds()).unwrap_err().kind,
        ErrorType::InvalidPath
    );
}

#[test]
fn binary_large_and_encoded_files() {
    let mut big = b"first\nneedle early\n".to_vec();
    big.extend(std::iter::repeat_n(b'.', 1_100_000));
    big.extend_from_slice(b"\nneedle late\n");
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("needle wide\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let d = tree(
        &[
            ("bin.dat", b"needle\0\x01\x02"),
            ("big.log", &big),
            ("wide.txt", &utf16),
            ("latin.txt", b"needle caf\xe9\n"),
        ],
        &[],
    );
    let out = search(d.path(), "needle", "", false, false, 100);
    assert!(out.contains("big.log:2: needle early"), "{out}");
    assert!(
        !out.contains("needle late"),
        "only the first MiB is searched"
    );
    assert!(out.contains("latin.txt:1: needle caf\u{FFFD}"), "{out}");
    assert!(out.contains("wide.txt:1: needle wide"), "{out}");
    assert!(!out.contains("bin.dat:"), "{out}");
    assert!(out.contains("1 binary file was skipped."), "{out}");
    assert!(
        out.contains("Only the first 1 MiB of 1 larger file was searched: big.log."),
        "{out}"
    );
}

/// A file is binary when a NUL comes anywhere in what is searched, not
/// only in its first buffer: a match before the NUL must not be shown.
#[test]
fn a_nul_far_into_a_file_still_makes_it_binary() {
    let mut late_nul = b"needle first\n".to_vec();
    late_nul.extend(std::iter::repeat_n(b'x', 200_000));
    late_nul.extend_from_slice(b"\0\n");
    let d = tree(&[("late.bin", &late_nul), ("text.txt", b"needle\n")], &[]);
    let out = search(d.path(), "needle", "", false, false, 100);
    assert_eq!(
        out, "text.txt:1: needle\n1 match in 1 file.\n1 binary file was skipped.\n",
        "{out}"
    );
}

/// A file that reports no length but has content (Linux's /proc) is read
/// up to the cap, not taken for empty.
#[cfg(target_os = "linux")]
#[test]
fn a_file_that_reports_no_length_is_still_searched() {
    let out = search(Path::new("/proc/self"), "Name:", "status", false, false, 10);
    assert!(out.starts_with("status:1: Name:"), "{out}");
}

/// Search lists its files in the order `find_files` sorts them, names
/// that share a start with a directory's included (`a-c` < `a/b` < `a0`).
#[test]
fn search_and_find_agree_on_path_order() {
    let names = [
        "a/b.txt",
        "a-c.txt",
        "a0.txt",
        "A.txt",
        "a.txt",
        "ab/x.txt",
        "a b/y.txt",
        "Zeta/z.txt",
        "zeta.txt",
        "\u{e4}/q.txt",
        "\u{c4}rger.txt",
        "a/B/c.txt",
        "a/b c.txt",
        "a/b/d.txt",
    ];
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (*n, &b"hit\n"[..])).collect();
    let d = tree(&files, &[]);
    let found = find_files("*.txt", ".", d.path(), 500, &bounds()).unwrap();
    // Fewer files on a disk that ignores case: A.txt and a.txt are one.
    let found: Vec<&str> = found.lines().filter(|l| l.ends_with(".txt")).collect();
    let searched = search(d.path(), "hit", "", false, false, 100);
    let searched: Vec<&str> = searched
        .lines()
        .filter_map(|l| l.strip_suffix(":1: hit"))
        .collect();
    assert_eq!(searched, found);
    assert!(searched.len() >= names.len() - 2, "{searched:?}");
}

/// There is no 20,000-file cap: within the budget every file counts.
/// The files sit in folders of 500 because Wine looks for a case variant
/// of each new name through the whole folder: with all 20,005 in one
/// folder the test took 85 s there, 15 s like this. The cap counted files,
/// not folders.
#[test]
fn more_files_than_the_old_cap_are_all_searched() {
    let d = tempfile::tempdir().unwrap();
    let path = |i: usize| d.path().join(format!("{:02}/{i:05}.txt", i / 500));
    for i in 0..20_005 {
        if i % 500 == 0 {
            std::fs::create_dir(path(i).parent().unwrap()).unwrap();
        }
        std::fs::write(path(i), b"").unwrap();
    }
    std::fs::write(path(20_004), b"x marks the last file\n").unwrap();
    let out = search(d.path(), "x", "", false, false, 10);
    assert!(
        out.starts_with("40/20004.txt:1: x marks the last file\n1 match in 1 file.\n"),
        "{out}"
    );
}

#[cfg(unix)]
#[test]
fn symlinked_directories_are_not_followed() {
    let d = code_tree();
    std::os::unix::fs::symlink(d.path().join("src"), d.path().join("link")).unwrap();
    let out = find_files("*.cpp", ".", d.path(), 500, &bounds()).unwrap();
    assert!(!out.contains("link/"), "{out}");
}

/// A file another process holds open without sharing cannot be read on
/// Windows: it is counted and named, not silently dropped.
#[cfg(windows)]
#[test]
fn a_locked_file_is_named_as_unreadable() {
    use std::os::windows::fs::OpenOptionsExt;
    let d = tree(
        &[("locked.txt", b"needle\n"), ("open.txt", b"needle\n")],
        &[],
    );
    let _lock = std::fs::OpenOptions::new()
        .read(true)
        .share_mode(0)
        .open(d.path().join("locked.txt"))
        .unwrap();
    let out = search(d.path(), "needle", "", false, false, 100);
    assert!(out.starts_with("open.txt:1: needle\n"), "{out}");
    assert!(
        out.contains("1 path could not be read: locked.txt ("),
        "{out}"
    );
}

/// Paths past Windows' old 260-character limit: std adds the `\\?\` prefix,
/// and the walker and reader must carry it through.
#[test]
fn long_paths_are_read_found_and_searched() {
    let d = tempfile::tempdir().unwrap();
    let mut deep = d.path().to_path_buf();
    for i in 0..12 {
        deep.push(format!("segment_{i:02}_{}", "x".repeat(20)));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("deep.txt"), b"needle in a long path\n").unwrap();
    assert!(deep.join("deep.txt").display().to_string().len() > 300);
    let found = find_files("deep.txt", ".", d.path(), 10, &bounds()).unwrap();
    let rel = found.lines().nth(1).unwrap().to_string();
    assert!(rel.ends_with("/deep.txt") && rel.len() > 300, "{found}");
    assert_eq!(
        wamcp_fs::read_file(&rel, d.path(), 1, 10).unwrap(),
        "needle in a long path\n"
    );
    let hits = search(d.path(), "needle", "", false, false, 10);
    assert!(hits.starts_with(&format!("{rel}:1: needle")), "{hits}");
}

/// Runs out after a fixed number of files: the stand-in for a slow disk,
/// which a clock cannot give a test reproducibly.
struct AfterFiles(usize);

impl Budget for AfterFiles {
    fn exhausted(&self, started: usize) -> bool {
        started >= self.0
    }

    fn describe(&self) -> String {
        format!("{} files", self.0)
    }
}

/// 40 directories of 60 files; every file holds `hit` on lines 3 and 7.
fn wide_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..40 {
        let sub = dir.path().join(format!("d{d:02}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..60 {
            std::fs::write(
                sub.join(format!("f{f:02}.txt")),
                "a\nb\nhit 1\nc\nd\ne\nhit 2\n",
            )
            .unwrap();
        }
    }
    dir
}

fn search_with(dir: &Path, pattern: &str, max: i64, budget: &dyn Budget, threads: usize) -> String {
    let req = SearchRequest {
        pattern,
        path: ".",
        file_glob: "",
        ignore_case: false,
        regex: false,
        max_results: max,
    };
    let progress = AtomicUsize::new(0);
    let bounds = Bounds {
        budget,
        progress: &progress,
        threads: Some(threads),
        secrets: &NO_SECRETS,
    };
    flat(&search_files(&req, dir, &bounds).unwrap())
}

#[test]
fn a_big_tree_is_searched_whole_and_the_same_way_every_time() {
    let d = wide_tree();
    let first = search_with(d.path(), "hit", 100, &Never, 1);
    assert!(
        first.starts_with("d00/f00.txt:3: hit 1\nd00/f00.txt:7: hit 2\nd00/f01.txt:3: hit 1\n"),
        "{first}"
    );
    assert!(
        first.contains("INCOMPLETE: there are more matches"),
        "{first}"
    );
    // A pattern in no file makes every one of the 2,400 files be searched.
    let none = search_with(d.path(), "absent", 100, &Never, 1);
    assert_eq!(
        none, "No match (2400 files).\n",
        "no skipped folder here: no note"
    );
    for run in 0..20 {
        let threads = [1, 2, 3, 8][run % 4];
        assert_eq!(
            search_with(d.path(), "hit", 100, &Never, threads),
            first,
            "run {run}"
        );
        assert_eq!(
            search_with(d.path(), "absent", 100, &Never, threads),
            none,
            "run {run}"
        );
    }
}

#[test]
fn an_exhausted_budget_answers_a_path_order_prefix_and_says_so() {
    let d = wide_tree();
    let complete = search_with(d.path(), "hit 2", 100, &Never, 2);
    for threads in [1, 2, 4] {
        for _ in 0..5 {
            let cut = search_with(d.path(), "hit 2", 100, &AfterFiles(70), threads);
            let lines: Vec<&str> = cut.lines().filter(|l| l.contains(": hit 2")).collect();
            // The first 70 files in path order: all of d00 and ten of d01.
            assert_eq!(lines.len(), 70, "{cut}");
            assert_eq!(lines[69], "d01/f09.txt:7: hit 2");
            assert!(
                complete.starts_with(&(lines.join("\n") + "\n")),
                "a prefix of the complete answer"
            );
            assert!(
                cut.ends_with(&format!(
                    "[INCOMPLETE: the time budget of 70 files ran out after searching the first 70 files \
                     under {}{}., in path order, up to 'd01/'. 70 matches were found in those files; the rest were \
                     not searched, so this is not a total. Narrow path or file_glob to search them.]\n",
                    root(&d),
                    std::path::MAIN_SEPARATOR
                )),
                "{cut}"
            );
        }
    }
    // Enough matches before the budget ran out: the match cap is the story.
    let early = search_with(d.path(), "hit", 10, &AfterFiles(70), 2);
    assert!(
        early.contains("INCOMPLETE: there are more matches"),
        "{early}"
    );
    assert!(!early.contains("time budget"), "{early}");
}

#[test]
fn a_budget_spent_before_the_walk_ends_is_reported_by_every_walker() {
    let d = wide_tree();
    let zero = wamcp_fs::Deadline::starting_now(std::time::Duration::ZERO);
    let progress = AtomicUsize::new(0);
    let bounds = Bounds {
        budget: &zero,
        progress: &progress,
        threads: Some(2),
        secrets: &NO_SECRETS,
    };
    let req = SearchRequest {
        pattern: "hit",
        path: ".",
        file_glob: "",
        ignore_case: false,
        regex: false,
        max_results: 100,
    };
    let out = search_files(&req, d.path(), &bounds).unwrap();
    assert!(
        out.starts_with(
            "[INCOMPLETE: the time budget of 0 s ran out while listing the files under "
        ),
        "{out}"
    );
    assert!(out.contains("so nothing was searched"), "{out}");
    let out = find_files("*.txt", ".", d.path(), 500, &bounds).unwrap();
    assert!(
        out.contains("[INCOMPLETE: the time budget of 0 s ran out while listing; these are "),
        "{out}"
    );
    let out = list_empty_dirs(".", d.path(), &bounds).unwrap();
    assert!(
        out.starts_with("no empty directories found under "),
        "{out}"
    );
    assert!(
        out.contains("[INCOMPLETE: the time budget of 0 s ran out after 1 directory;"),
        "{out}"
    );
    // A directory is read whole unless it is big enough to take time.
    let big = tree(&[], &[]);
    for i in 0..5000 {
        std::fs::write(big.path().join(format!("{i:05}.txt")), "").unwrap();
    }
    let out = list_directory(".", big.path(), &bounds).unwrap();
    assert!(out.contains("[INCOMPLETE: the time budget of 0 s ran out after reading 4095 entries (0 directories, 4095 files); the listing is sorted among those only."), "{out}");
    assert_eq!(
        list_directory(".", d.path(), &bounds)
            .unwrap()
            .lines()
            .last(),
        Some("40 entries")
    );
}

#[test]
fn large_file_notices_name_three_and_count_the_rest() {
    let d = tree(&[], &[]);
    let big = vec![b'x'; 1024 * 1024 + 10];
    for i in 0..5 {
        std::fs::write(d.path().join(format!("big{i}.bin.txt")), &big).unwrap();
    }
    let out = search(d.path(), "absent", "", false, false, 100);
    assert!(
        out.contains("Only the first 1 MiB of 5 larger files were searched: big0.bin.txt, big1.bin.txt, big2.bin.txt, and 2 more.\n"),
        "{out}"
    );
}

/// Matches come grouped by file: the path once, then `line: text`.
#[test]
fn search_answers_group_matches_by_file() {
    let d = tree(
        &[
            ("src/a.rs", b"fn run() {}\nlet x = run();\n"),
            ("src/b.rs", b"run\n"),
        ],
        &[],
    );
    assert_eq!(
        grouped(d.path(), "run"),
        "src/a.rs\n1: fn run() {}\n2: let x = run();\nsrc/b.rs\n1: run\n3 matches in 2 files.\n"
    );
}

/// A file named like a match line is shown as `./name`, so it cannot be
/// taken for a line of the file above it.
#[cfg(unix)]
#[test]
fn a_file_named_like_a_match_line_is_marked_as_a_path() {
    let d = tree(&[("a.txt", b"needle\n"), ("12: notes", b"needle\n")], &[]);
    assert_eq!(
        grouped(d.path(), "needle"),
        "./12: notes\n1: needle\na.txt\n1: needle\n2 matches in 2 files.\n"
    );
}
