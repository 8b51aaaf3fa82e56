use super::*;
use std::cell::RefCell;

/// A system that refuses what its rules say and records what was tried.
struct Fake {
    refuse_under: Vec<PathBuf>,
    connect: fn() -> io::Result<()>,
    tried: RefCell<Vec<String>>,
}

impl Fake {
    fn attempt(&self, what: &str, path: &Path) -> io::Result<()> {
        self.tried
            .borrow_mut()
            .push(format!("{what} {}", path.display()));
        match self.refuse_under.iter().any(|d| path.starts_with(d)) {
            true => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
            false => Ok(()),
        }
    }
}

impl ProbeSystem for Fake {
    fn write(&self, path: &Path) -> io::Result<()> {
        self.attempt("write", path)
    }
    fn truncate(&self, path: &Path) -> io::Result<()> {
        self.attempt("truncate", path)
    }
    fn empty(&self, path: &Path) -> io::Result<()> {
        self.attempt("empty", path)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.attempt("remove", path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.attempt(&format!("rename to {}", to.display()), from)
    }
    fn connect(&self, port: u16) -> io::Result<()> {
        self.tried.borrow_mut().push(format!("connect {port}"));
        (self.connect)()
    }
    fn temp_dir(&self) -> PathBuf {
        PathBuf::from("/t")
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

const PROBE_ARGS: &[&str] = &[
    "root=/r",
    "temp",
    "outside=/o",
    "trust=/r/.vscode",
    "victim=/o/v.txt",
    "emptied=/o/e.txt",
    "doomed=/o/d.txt",
    "trust-file=/r/.vscode/s.json",
    "trust-folder=/r/.vscode",
    "--port",
    "4711",
];

/// The report a system gives when it does (`done`) or refuses (`refused
/// ...`) everything outside the root, in the order of [`PROBE_ARGS`].
fn report_of(outside: &str) -> String {
    let places = [
        "outside",
        "trust",
        "victim",
        "emptied",
        "doomed",
        "trust-file",
        "trust-folder",
    ];
    let mut lines = vec!["write root done".to_string(), "write temp done".to_string()];
    lines.extend(
        places
            .iter()
            .map(|place| format!("write {place} {outside}")),
    );
    lines.push(format!("connect {outside}"));
    lines.join("\n") + "\n"
}

#[test]
fn a_system_that_refuses_is_reported_as_refusing() {
    let fake = Fake {
        refuse_under: vec!["/o".into(), "/r/.vscode".into()],
        connect: || Err(io::Error::from(io::ErrorKind::PermissionDenied)),
        tried: RefCell::default(),
    };
    let report = probe_main(&args(PROBE_ARGS), &fake).unwrap();
    let denied = io::Error::from(io::ErrorKind::PermissionDenied).to_string();
    assert_eq!(report, report_of(&format!("refused {denied}")));
    let shown = |p: &str| Path::new(p).display().to_string();
    let file = |dir: &str| Path::new(dir).join(PROBE_FILE).display().to_string();
    let want = [
        format!("write {}", file("/r")),
        format!("write {}", file("/t")),
        format!("write {}", file("/o")),
        format!("write {}", file("/r/.vscode")),
        format!("truncate {}", shown("/o/v.txt")),
        format!("empty {}", shown("/o/e.txt")),
        format!("remove {}", shown("/o/d.txt")),
        format!("remove {}", shown("/r/.vscode/s.json")),
        format!(
            "rename to {} {}",
            shown("/r/.vscode-moved"),
            shown("/r/.vscode")
        ),
        "connect 4711".to_string(),
    ];
    assert_eq!(*fake.tried.borrow(), want);
}

#[test]
fn a_system_that_allows_is_reported_as_allowing() {
    let fake = Fake {
        refuse_under: Vec::new(),
        connect: || Ok(()),
        tried: RefCell::default(),
    };
    let report = probe_main(&args(PROBE_ARGS), &fake).unwrap();
    assert_eq!(report, report_of("done"));
}

/// What counts as the system saying no, and what is another failure.
#[test]
fn refusals_are_told_from_other_failures() {
    let cases = [
        (io::Error::from(io::ErrorKind::PermissionDenied), true),
        (io::Error::from(io::ErrorKind::ReadOnlyFilesystem), true),
        (io::Error::from(io::ErrorKind::NotFound), false),
        (io::Error::from(io::ErrorKind::ConnectionRefused), false),
        (io::Error::other("disk on fire"), false),
    ];
    for (error, want) in cases {
        assert_eq!(refused(&error), want, "{error:?}");
    }
    #[cfg(unix)]
    for (code, want) in [
        (1, true),
        (13, true),
        (16, true),
        (30, true),
        (2, false),
        (101, false),
    ] {
        assert_eq!(
            refused(&io::Error::from_raw_os_error(code)),
            want,
            "errno {code}"
        );
    }
}

#[test]
fn arguments_it_does_not_know_are_errors() {
    let fake = Fake {
        refuse_under: Vec::new(),
        connect: || Ok(()),
        tried: RefCell::default(),
    };
    for bad in [
        &["elsewhere=/x"][..],
        &["--port"],
        &["--port", "high"],
        &["nowhere"],
    ] {
        assert!(probe_main(&args(bad), &fake).is_err(), "{bad:?}");
    }
    assert!(fake.tried.borrow().is_empty());
}
