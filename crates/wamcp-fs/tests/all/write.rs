//! write_file and edit_file: confinement, atomicity inputs, and file shape.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wamcp_fs::{WriteScope, edit_file, write_file};
use wamcp_policy::error::{ErrorType, ToolError};

/// A temp dir holding `root/` (writable) and `outside/` (not).
struct World {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    protected: Vec<PathBuf>,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(dir.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::create_dir_all(base.join("root-evil")).unwrap();
        World {
            _dir: dir,
            root,
            protected: vec![base.join("cfg").join("wamcp.json")],
            base,
        }
    }

    fn scope(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        (vec![self.root.clone()], self.protected.clone())
    }

    fn write(&self, raw: &str, content: &str, overwrite: bool) -> Result<String, ToolError> {
        let (roots, protected) = self.scope();
        write_file(
            raw,
            content,
            overwrite,
            &self.root,
            &WriteScope {
                roots: &roots,
                protected: &protected,
                approved: None,
            },
        )
    }

    fn edit(&self, raw: &str, old: &str, new: &str, all: bool) -> Result<String, ToolError> {
        let (roots, protected) = self.scope();
        edit_file(
            raw,
            old,
            new,
            all,
            &self.root,
            &WriteScope {
                roots: &roots,
                protected: &protected,
                approved: None,
            },
        )
    }

    /// Every file under the base, with its bytes: "nothing changed" is checked by equality.
    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let key = path.strip_prefix(base).unwrap().display().to_string();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    out.insert(format!("{key}/"), Vec::new());
                    walk(&path, base, out);
                } else if meta.is_file() {
                    out.insert(key, std::fs::read(&path).unwrap());
                } else {
                    out.insert(format!("{key}@"), Vec::new());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.base, &self.base, &mut out);
        out
    }

    /// Asserts that `attempt` fails with `kind` and leaves the disk untouched.
    fn refused(
        &self,
        kind: ErrorType,
        attempt: impl FnOnce(&World) -> Result<String, ToolError>,
    ) -> ToolError {
        let before = self.snapshot();
        let err = attempt(self).expect_err("should be refused");
        assert_eq!(err.kind, kind, "{err:?}");
        assert_eq!(
            self.snapshot(),
            before,
            "a refusal changed the disk: {err:?}"
        );
        err
    }
}

#[test]
fn writes_new_files_exactly_and_creates_parents() {
    let w = World::new();
    let out = w
        .write("src/deep/a.cpp", "int a;\r\nint b;\n", false)
        .unwrap();
    let path = w.root.join("src").join("deep").join("a.cpp");
    assert_eq!(
        out,
        format!("WROTE: {} (15 bytes, new file)", path.display())
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"int a;\r\nint b;\n",
        "bytes exactly as given"
    );
    let out = w.write("src/deep/a.cpp", "x", true).unwrap();
    assert!(out.ends_with("(1 bytes, overwritten)"), "{out}");
}

#[test]
fn existing_files_need_overwrite_and_limits_hold() {
    let w = World::new();
    w.write("a.txt", "one", false).unwrap();
    let err = w.refused(ErrorType::FileExists, |w| w.write("a.txt", "two", false));
    assert!(err.recovery.iter().any(|r| r.contains("edit_file")));
    w.refused(ErrorType::ContentTooLarge, |w| {
        w.write("big.txt", &"x".repeat(2 * 1024 * 1024 + 1), false)
    });
    w.refused(ErrorType::InvalidContent, |w| {
        w.write("nul.txt", "a\0b", false)
    });
    std::fs::create_dir_all(w.root.join("adir")).unwrap();
    w.refused(ErrorType::PathIsNotFile, |w| w.write("adir", "x", true));
    w.refused(ErrorType::WritePathNotAllowed, |w| w.write("", "x", false));
}

#[test]
fn escapes_are_refused_and_change_nothing() {
    let w = World::new();
    let outside = w.base.join("outside").join("x.txt").display().to_string();
    let evil = w.base.join("root-evil").join("x.txt").display().to_string();
    std::fs::create_dir_all(w.root.join("sub")).unwrap();
    for raw in [
        outside.as_str(),
        evil.as_str(),
        "../outside/x.txt",
        "sub/../../outside/x.txt",
        "../root-evil/x.txt",
    ] {
        let err = w.refused(ErrorType::WritePathNotAllowed, |w| w.write(raw, "x", false));
        // Where it resolves is said only when a link made it news (none
        // here); the roots once, in their field.
        assert!(err.details.contains_key("writable_roots"), "{raw}: {err:?}");
        assert_eq!(err.message, "Outside the writable roots.", "{raw}: {err:?}");
        let roots = w.root.display().to_string();
        assert!(!err.recovery.concat().contains(&roots), "{raw}: {err:?}");
    }
    w.refused(ErrorType::InvalidPath, |w| {
        w.write("newdir/../../outside/x.txt", "x", false)
    });
    // `..` that stays inside is fine.
    assert!(
        w.write("sub/../b.txt", "x", false)
            .unwrap()
            .contains(&w.root.join("b.txt").display().to_string())
    );
}

#[test]
fn trust_files_are_protected_by_name_and_by_path() {
    let w = World::new();
    for raw in [
        "input/config.json",
        "deep/Input/CONFIG.json",
        "mcp-allowed-hosts.json",
        "x/MCP-ALLOWED-HOSTS.JSON",
    ] {
        w.refused(ErrorType::ProtectedPath, |w| w.write(raw, "{}", false));
    }
    let mut w = w;
    w.protected = vec![w.root.join("settings").join("wamcp.json")];
    std::fs::create_dir_all(w.root.join("settings")).unwrap();
    std::fs::write(w.root.join("settings").join("wamcp.json"), "{}").unwrap();
    w.refused(ErrorType::ProtectedPath, |w| {
        w.write("settings/wamcp.json", "{\"x\":1}", true)
    });
    w.refused(ErrorType::ProtectedPath, |w| {
        w.edit("settings/wamcp.json", "{}", "{\"a\":1}", false)
    });
}

#[test]
fn read_only_files_are_not_replaced() {
    let w = World::new();
    let path = w.root.join("ro.txt");
    std::fs::write(&path, "keep").unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms).unwrap();
    w.refused(ErrorType::PermissionDenied, |w| {
        w.write("ro.txt", "new", true)
    });
    w.refused(ErrorType::PermissionDenied, |w| {
        w.edit("ro.txt", "keep", "lose", false)
    });
}

#[cfg(unix)]
#[test]
fn links_are_resolved_before_the_check() {
    use std::os::unix::fs::symlink;
    let w = World::new();
    symlink(w.base.join("outside"), w.root.join("escape")).unwrap();
    w.refused(ErrorType::WritePathNotAllowed, |w| {
        w.write("escape/x.txt", "x", false)
    });
    w.refused(ErrorType::WritePathNotAllowed, |w| {
        w.write("escape/new/dir/x.txt", "x", false)
    });
    // A dangling link leaf would create a file wherever it points.
    symlink(
        w.base.join("outside").join("planted.txt"),
        w.root.join("dangling.txt"),
    )
    .unwrap();
    w.refused(ErrorType::WritePathNotAllowed, |w| {
        w.write("dangling.txt", "x", true)
    });
    // `link/..` is the parent of the link's target, not of the link.
    w.refused(ErrorType::WritePathNotAllowed, |w| {
        w.write("escape/../x.txt", "x", false)
    });
    // A link to a trust file is a trust file.
    std::fs::create_dir_all(w.root.join("input")).unwrap();
    std::fs::write(w.root.join("input").join("config.json"), "{}").unwrap();
    symlink(
        w.root.join("input").join("config.json"),
        w.root.join("notes.txt"),
    )
    .unwrap();
    w.refused(ErrorType::ProtectedPath, |w| {
        w.write("notes.txt", "x", true)
    });
    // Links that stay inside are followed, and the write lands on the target.
    std::fs::create_dir_all(w.root.join("real")).unwrap();
    symlink(w.root.join("real"), w.root.join("alias")).unwrap();
    let out = w.write("alias/f.txt", "x", false).unwrap();
    assert!(
        out.contains(&w.root.join("real").join("f.txt").display().to_string()),
        "{out}"
    );
}

#[cfg(windows)]
#[test]
fn windows_forms_and_names_are_refused() {
    let w = World::new();
    for raw in [
        "NUL",
        "con.txt",
        "src\\COM1.log",
        "a.txt:stream",
        "a.txt::$DATA",
        "trail.",
        "trail ",
        "C:relative.txt",
        "\\rooted.txt",
        "\\\\.\\C:\\x.txt",
        "a?b.txt",
    ] {
        w.refused(ErrorType::InvalidPath, |w| w.write(raw, "x", false));
    }
    // Drive-letter case and both separators are the same place.
    let upper = w.root.display().to_string().to_uppercase();
    assert!(
        w.write(&format!("{upper}/mixed\\sep.txt"), "x", false)
            .is_ok()
    );
    let verbatim = format!("\\\\?\\{}\\v.txt", w.root.display());
    assert!(w.write(&verbatim, "x", false).is_ok(), "{verbatim}");
}

#[test]
fn crlf_files_stay_crlf_when_edited_with_lf_strings() {
    let w = World::new();
    std::fs::write(w.root.join("w.cpp"), "int a;\r\nint b;\r\nint c;\r\n").unwrap();
    let out = w
        .edit("w.cpp", "int b;\nint c;", "int b2;\nint b3;\nint c;", false)
        .unwrap();
    assert_eq!(
        out,
        format!(
            "EDITED: {} (1 replacement at line 2, CRLF preserved)",
            w.root.join("w.cpp").display()
        )
    );
    assert_eq!(
        std::fs::read(w.root.join("w.cpp")).unwrap(),
        b"int a;\r\nint b2;\r\nint b3;\r\nint c;\r\n"
    );
}

#[test]
fn lf_files_mixed_files_and_replace_all() {
    let w = World::new();
    std::fs::write(w.root.join("l.rs"), "x\ny\nx\n").unwrap();
    let out = w.edit("l.rs", "x", "z", true).unwrap();
    assert!(
        out.ends_with("(2 replacements, first at line 1, LF preserved)"),
        "{out}"
    );
    assert_eq!(std::fs::read(w.root.join("l.rs")).unwrap(), b"z\ny\nz\n");
    // Mostly CRLF: every line ends CRLF afterwards.
    std::fs::write(w.root.join("m.txt"), "a\r\nb\r\nc\nd\r\n").unwrap();
    w.edit("m.txt", "a", "A", false).unwrap();
    assert_eq!(
        std::fs::read(w.root.join("m.txt")).unwrap(),
        b"A\r\nb\r\nc\r\nd\r\n"
    );
}

#[test]
fn bom_and_utf16_files_keep_their_encoding() {
    let w = World::new();
    std::fs::write(w.root.join("b.cs"), b"\xEF\xBB\xBFclass A {}\r\n").unwrap();
    let out = w.edit("b.cs", "A", "B", false).unwrap();
    assert!(
        out.ends_with("(1 replacement at line 1, CRLF preserved, UTF-8 BOM kept)"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(w.root.join("b.cs")).unwrap(),
        b"\xEF\xBB\xBFclass B {}\r\n"
    );
    for (name, bom, little) in [
        ("le.ps1", [0xFF, 0xFE], true),
        ("be.ps1", [0xFE, 0xFF], false),
    ] {
        let encode = |s: &str| -> Vec<u8> {
            bom.into_iter()
                .chain(s.encode_utf16().flat_map(|u| {
                    if little {
                        u.to_le_bytes()
                    } else {
                        u.to_be_bytes()
                    }
                }))
                .collect()
        };
        std::fs::write(w.root.join(name), encode("$a = 'é'\r\n$b = 2\r\n")).unwrap();
        let out = w.edit(name, "$b = 2", "$b = 3", false).unwrap();
        assert!(out.contains("line 2, CRLF preserved, UTF-16"), "{out}");
        assert_eq!(
            std::fs::read(w.root.join(name)).unwrap(),
            encode("$a = 'é'\r\n$b = 3\r\n"),
            "{name}"
        );
    }
}

#[test]
fn edit_refusals_name_the_problem_and_change_nothing() {
    let w = World::new();
    std::fs::write(
        w.root.join("f.py"),
        "def f():\n    return 1\n\ndef g():\n    return 1\n",
    )
    .unwrap();
    let err = w.refused(ErrorType::EditStringNotUnique, |w| {
        w.edit("f.py", "return 1", "return 2", false)
    });
    assert_eq!(
        err.message,
        "old_string occurs 2 times in 'f.py' (at lines 2, 5)."
    );
    let err = w.refused(ErrorType::EditStringNotFound, |w| {
        w.edit("f.py", "def g():\n  return 1", "x", false)
    });
    assert_eq!(err.details["near_miss_line"], 4);
    w.refused(ErrorType::EditStringNotFound, |w| {
        w.edit("f.py", "nothing like it", "x", false)
    });
    w.refused(ErrorType::InvalidEdit, |w| w.edit("f.py", "", "x", false));
    w.refused(ErrorType::InvalidEdit, |w| {
        w.edit("f.py", "def f", "def f", false)
    });
    w.refused(ErrorType::InvalidEdit, |w| {
        w.edit("f.py", "def f():\r\n", "def f():\n", false)
    });
    w.refused(ErrorType::PathNotFound, |w| {
        w.edit("missing.py", "a", "b", false)
    });
    std::fs::write(w.root.join("latin.txt"), b"caf\xe9\n").unwrap();
    w.refused(ErrorType::InvalidTextEncoding, |w| {
        w.edit("latin.txt", "caf", "tea", false)
    });
    std::fs::write(w.root.join("odd.txt"), b"\xFF\xFEa").unwrap();
    w.refused(ErrorType::InvalidTextEncoding, |w| {
        w.edit("odd.txt", "a", "b", false)
    });
    w.refused(ErrorType::WritePathNotAllowed, |w| {
        w.edit("../outside/x.txt", "a", "b", false)
    });
}

/// Junctions and 8.3 short names, which Wine cannot create, modelled by a
/// fake file system: the resolver must judge the path each one leads to.
#[cfg(windows)]
#[test]
fn junctions_and_short_names_are_judged_by_where_they_lead() {
    use std::collections::HashMap;
    use wamcp_fs::{FsView, resolve_with};

    struct Fake(HashMap<String, (bool, &'static str)>);
    impl FsView for Fake {
        fn entry_is_dir_or_link(&self, path: &Path) -> std::io::Result<bool> {
            self.0
                .get(&key(path))
                .map(|e| e.0)
                .ok_or_else(|| std::io::ErrorKind::NotFound.into())
        }
        fn canonical(&self, path: &Path) -> std::io::Result<PathBuf> {
            self.0
                .get(&key(path))
                .map(|e| PathBuf::from(e.1))
                .ok_or_else(|| std::io::ErrorKind::NotFound.into())
        }
        fn is_dir(&self, path: &Path) -> bool {
            self.0.get(&key(path)).is_some_and(|e| e.0)
        }
        fn exists(&self, path: &Path) -> bool {
            self.0.contains_key(&key(path))
        }
    }
    fn key(path: &Path) -> String {
        path.display().to_string().to_lowercase()
    }
    let entries: &[(&str, bool, &'static str)] = &[
        (r"C:\Projects", true, r"C:\Projects"),
        (r"C:\PROJEC~1", true, r"C:\Projects"),
        (r"C:\Projects\game", true, r"C:\Projects\game"),
        (r"C:\Projects\game\assets", true, r"D:\shared\assets"),
        (r"C:\Projects\game\ASSETS~1", true, r"D:\shared\assets"),
        (r"C:\Projects\game\src", true, r"C:\Projects\game\src"),
        (
            r"C:\Projects\game\src\main.cpp",
            false,
            r"C:\Projects\game\src\main.cpp",
        ),
        (
            r"C:\Projects\game\vendored",
            true,
            r"C:\Projects\game\third_party\v",
        ),
        (
            r"C:\Projects\game\third_party",
            true,
            r"C:\Projects\game\third_party",
        ),
        (
            r"C:\Projects\game\third_party\v",
            true,
            r"C:\Projects\game\third_party\v",
        ),
    ];
    let fake = Fake(
        entries
            .iter()
            .map(|(p, d, c)| (p.to_lowercase(), (*d, *c)))
            .collect(),
    );
    let roots = vec![PathBuf::from(r"C:\Projects\game")];
    let scope = WriteScope {
        roots: &roots,
        protected: &[],
        approved: None,
    };
    let cwd = Path::new(r"C:\Projects\game");
    let resolve = |raw: &str| resolve_with(raw, cwd, &scope, &fake);

    // A junction inside the root that leads outside is outside.
    for raw in [
        r"assets\tex.png",
        r"ASSETS~1\tex.png",
        r"C:\PROJEC~1\game\assets\new\x.txt",
    ] {
        let err = resolve(raw).expect_err(raw);
        assert_eq!(err.kind, ErrorType::WritePathNotAllowed, "{raw}: {err:?}");
        assert!(
            err.message.starts_with(r"It leads to D:\shared\assets"),
            "{err:?}"
        );
    }
    // A short name for the root and a junction that stays inside are fine,
    // and the write goes to the resolved place.
    let target = resolve(r"C:\PROJEC~1\game\src\main.cpp").unwrap();
    assert_eq!(target.path, Path::new(r"C:\Projects\game\src\main.cpp"));
    assert!(target.exists);
    let target = resolve(r"vendored\new\lib.h").unwrap();
    assert_eq!(
        target.path,
        Path::new(r"C:\Projects\game\third_party\v\new\lib.h")
    );
    assert_eq!(
        target.missing_dirs,
        [PathBuf::from(r"C:\Projects\game\third_party\v\new")]
    );
    // `..` through a junction steps up from where the junction leads.
    let err = resolve(r"vendored\..\..\..\outside.txt").expect_err("escape");
    assert_eq!(err.kind, ErrorType::WritePathNotAllowed);
}

/// A file another program holds open without delete sharing cannot be
/// replaced on Windows: the refusal says so and the file is untouched.
#[cfg(windows)]
#[test]
fn a_file_held_open_by_another_program_is_file_in_use() {
    use std::os::windows::fs::OpenOptionsExt;
    let w = World::new();
    let path = w.root.join("held.txt");
    std::fs::write(&path, "original").unwrap();
    let _held = std::fs::OpenOptions::new()
        .read(true)
        .share_mode(0)
        .open(&path)
        .unwrap();
    let err = w.write("held.txt", "new", true).unwrap_err();
    assert_eq!(err.kind, ErrorType::FileInUse, "{err:?}");
    assert!(err.message.starts_with("Another program has"), "{err:?}");
    let err = w
        .edit("held.txt", "original", "changed", false)
        .unwrap_err();
    assert_eq!(err.kind, ErrorType::FileInUse, "{err:?}");
    drop(_held);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "original");
    let leftovers: Vec<_> = std::fs::read_dir(&w.root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

/// Parallel edits of one file (as models batch them), through two spellings
/// of its path: every one succeeds and every change is on disk.
#[test]
fn parallel_edits_of_one_file_all_land() {
    let w = std::sync::Arc::new(World::new());
    let lines: String = (0..50).map(|i| format!("line {i}\r\n")).collect();
    std::fs::write(w.root.join("f.txt"), &lines).unwrap();
    std::fs::create_dir_all(w.root.join("sub")).unwrap();
    let threads: Vec<_> = (0..50)
        .map(|i| {
            let w = w.clone();
            std::thread::spawn(move || {
                let path = if i % 2 == 0 { "f.txt" } else { "sub/../f.txt" };
                w.edit(
                    path,
                    &format!("line {i}\n"),
                    &format!("edited {i}\n"),
                    false,
                )
            })
        })
        .collect();
    for t in threads {
        let answer = t.join().unwrap();
        assert!(
            answer.as_ref().is_ok_and(|a| a.starts_with("EDITED")),
            "{answer:?}"
        );
    }
    let text = std::fs::read_to_string(w.root.join("f.txt")).unwrap();
    let expected: String = (0..50).map(|i| format!("edited {i}\r\n")).collect();
    assert_eq!(text, expected);
}

/// Racing creators with overwrite=true: each one writes; none is told the
/// file exists (it asked to overwrite).
#[test]
fn overwrite_wins_over_a_file_created_meanwhile() {
    let w = std::sync::Arc::new(World::new());
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let w = w.clone();
            std::thread::spawn(move || w.write("new.txt", &format!("writer {i}"), true))
        })
        .collect();
    for t in threads {
        let answer = t.join().unwrap();
        assert!(answer.is_ok(), "{answer:?}");
    }
    let text = std::fs::read_to_string(w.root.join("new.txt")).unwrap();
    assert!(text.starts_with("writer "), "{text}");
}

/// FIFOs, sockets and devices are refused by every file tool, at once.
#[cfg(unix)]
#[test]
fn special_files_are_never_opened() {
    let w = World::new();
    let fifo = w.root.join("pipe");
    let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: `c` is a NUL-terminated path alive for the call.
    let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(made, 0);
    let _socket = std::os::unix::net::UnixListener::bind(w.root.join("sock")).unwrap();
    for name in ["pipe", "sock"] {
        w.refused(ErrorType::NotARegularFile, |w| {
            w.edit(name, "a", "b", false)
        });
        w.refused(ErrorType::NotARegularFile, |w| w.write(name, "x", true));
        let error = wamcp_fs::read_file(name, &w.root, 1, 10).unwrap_err();
        assert_eq!(error.kind, ErrorType::NotARegularFile, "{name}: {error:?}");
    }
    let error = wamcp_fs::read_file("/dev/zero", &w.root, 1, 10).unwrap_err();
    assert_eq!(error.kind, ErrorType::NotARegularFile);
}

/// A link inside a root that leads outside: the refusal says where it
/// leads, since the path as written looks inside.
#[cfg(unix)]
#[test]
fn a_refusal_names_where_a_link_leads() {
    let w = World::new();
    std::fs::create_dir_all(w.base.join("outside")).unwrap();
    std::os::unix::fs::symlink(w.base.join("outside"), w.root.join("out")).unwrap();
    let err = w.refused(ErrorType::WritePathNotAllowed, |w| {
        w.write("out/x.txt", "x", false)
    });
    assert_eq!(
        err.message,
        format!(
            "It leads to {}, outside the writable roots.",
            w.base.join("outside").join("x.txt").display()
        )
    );
}
