use super::*;
use std::cell::RefCell;

/// A system that refuses what its rules say and records what was tried.
struct Fake {
    refuse_writes_under: Vec<PathBuf>,
    connect: fn() -> io::Result<()>,
    tried: RefCell<Vec<String>>,
}

impl ProbeSystem for Fake {
    fn write(&self, path: &Path) -> io::Result<()> {
        self.tried.borrow_mut().push(path.display().to_string());
        match self.refuse_writes_under.iter().any(|d| path.starts_with(d)) {
            true => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
            false => Ok(()),
        }
    }
    fn truncate(&self, path: &Path) -> io::Result<()> {
        self.write(path)
    }
    fn connect(&self, port: u16) -> io::Result<()> {
        self.tried.borrow_mut().push(format!("port {port}"));
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
    "outside=/o",
    "trust=/r/.vscode",
    "temp",
    "victim=/o/v.txt",
    "--port",
    "4711",
];

#[test]
fn a_system_that_refuses_is_reported_as_refusing() {
    let fake = Fake {
        refuse_writes_under: vec!["/o".into(), "/r/.vscode".into()],
        connect: || Err(io::Error::from(io::ErrorKind::PermissionDenied)),
        tried: RefCell::default(),
    };
    let report = probe_main(&args(PROBE_ARGS), &fake).unwrap();
    let denied = io::Error::from(io::ErrorKind::PermissionDenied).to_string();
    assert_eq!(
        report,
        format!(
            "write root done\nwrite outside refused {denied}\nwrite trust refused {denied}\n\
             write temp done\nwrite victim refused {denied}\nconnect refused {denied}\n"
        )
    );
    let mut want: Vec<String> = ["/r", "/o", "/r/.vscode", "/t"]
        .iter()
        .map(|dir| Path::new(dir).join(PROBE_FILE).display().to_string())
        .collect();
    want.push("/o/v.txt".into());
    want.push("port 4711".into());
    assert_eq!(*fake.tried.borrow(), want);
}

#[test]
fn a_system_that_allows_is_reported_as_allowing() {
    let fake = Fake {
        refuse_writes_under: Vec::new(),
        connect: || Ok(()),
        tried: RefCell::default(),
    };
    let report = probe_main(&args(PROBE_ARGS), &fake).unwrap();
    assert_eq!(
        report,
        "write root done\nwrite outside done\nwrite trust done\nwrite temp done\nwrite victim done\nconnect done\n"
    );
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
    for (code, want) in [(1, true), (13, true), (30, true), (2, false), (101, false)] {
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
        refuse_writes_under: Vec::new(),
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
