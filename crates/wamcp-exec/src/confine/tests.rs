use super::*;
use std::sync::Mutex;
use std::time::Duration;

/// Records what it was asked to confine; enforces nothing.
#[derive(Debug, Default)]
struct Fake {
    mechanism: Option<&'static str>,
    verified: bool,
    /// Whether its self-test finds the network open although writes hold.
    network_open: bool,
    /// Whether its self-test finds trust folders writable.
    trust_open: bool,
    /// Whether it offers a private view (hidden stores, read-only trust).
    viewed: bool,
    scopes: Mutex<Vec<Scope>>,
}

impl Confiner for Fake {
    fn support(&self) -> Support {
        Support {
            mechanism: self.mechanism.map(str::to_string),
            detail: "fake detail".into(),
            private_view: match self.viewed {
                true => Ok("fake view".into()),
                false => Err("fake: no private view".into()),
            },
        }
    }
    fn probe(&self) -> Probe {
        let part = |holds: bool| match holds {
            true => Ok("fake proof".to_string()),
            false => Err("fake evidence".to_string()),
        };
        Probe::Known(Proof {
            writes: part(self.verified),
            trust: part(self.verified && !self.trust_open),
            network: part(self.verified && !self.network_open),
            ran: true,
        })
    }
    fn launch(&self, scope: &Scope, temp: &Path) -> io::Result<Launch> {
        let mut scope = scope.clone();
        scope.writable.push(temp.to_path_buf());
        self.scopes.lock().unwrap().push(scope);
        Ok(Launch::default())
    }
}

fn fake_sandbox(mode: SandboxMode, fake: Fake, caches: Vec<String>) -> (Sandbox, Arc<Fake>) {
    let fake = Arc::new(fake);
    let caches = Caches {
        entries: caches,
        refused: Vec::new(),
    };
    (Sandbox::with_confiner(mode, caches, fake.clone()), fake)
}

fn working() -> Fake {
    Fake {
        mechanism: Some("fake"),
        verified: true,
        ..Fake::default()
    }
}

/// Writes proven, the network not: confined, judged by the grammars.
fn network_open() -> Fake {
    Fake {
        network_open: true,
        ..working()
    }
}

#[test]
fn only_a_layer_proven_whole_relaxes_the_posture() {
    for (fake, posture) in [
        (working(), Posture::Confined),
        (network_open(), Posture::Grammars),
        (
            Fake {
                trust_open: true,
                ..working()
            },
            Posture::Grammars,
        ),
        (Fake::default(), Posture::Grammars),
    ] {
        let (sandbox, _) = fake_sandbox(SandboxMode::Auto, fake, Vec::new());
        assert_eq!(sandbox.posture(), posture);
    }
}

#[test]
fn the_status_says_why_commands_are_not_confined() {
    let cases = [
        (
            SandboxMode::Off,
            working(),
            None,
            "WAMCP_COMMAND_SANDBOX=off",
        ),
        (SandboxMode::Auto, Fake::default(), None, "fake detail"),
        (
            SandboxMode::Auto,
            Fake {
                mechanism: Some("fake"),
                ..Fake::default()
            },
            None,
            "fake is not trusted here: writes: fake evidence; trust_folders: fake evidence; network: fake evidence",
        ),
        (SandboxMode::Auto, working(), Some("fake"), "fake detail"),
        (
            SandboxMode::Auto,
            network_open(),
            Some("fake"),
            "fake detail",
        ),
        (
            SandboxMode::Require,
            Fake {
                mechanism: Some("fake"),
                ..Fake::default()
            },
            None,
            "fake is not trusted here: writes: fake evidence; trust_folders: fake evidence; network: fake evidence",
        ),
        (
            SandboxMode::Require,
            network_open(),
            None,
            "fake is not trusted here: network: fake evidence",
        ),
        (SandboxMode::Require, working(), Some("fake"), "fake detail"),
    ];
    for (mode, fake, mechanism, detail) in cases {
        let (sandbox, _) = fake_sandbox(mode, fake, Vec::new());
        let status = sandbox.status();
        assert_eq!(status.mechanism.as_deref(), mechanism, "{mode:?}");
        assert_eq!(status.detail, detail, "{mode:?}");
    }
}

#[test]
fn require_refuses_to_run_where_nothing_confines() {
    let (sandbox, _) = fake_sandbox(SandboxMode::Require, Fake::default(), Vec::new());
    let err = sandbox.confinement(&[], false).unwrap_err();
    assert_eq!(err.kind, ErrorType::SandboxUnavailable);
    assert!(err.message.contains("fake detail"), "{}", err.message);
    let (auto, _) = fake_sandbox(SandboxMode::Auto, Fake::default(), Vec::new());
    assert!(auto.confinement(&[], false).unwrap().is_none());
}

#[test]
fn the_writable_set_is_the_roots_the_caches_and_the_devices() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("proj");
    std::fs::create_dir(&root).unwrap();
    let cache = home.path().join("cache/pip");
    let (sandbox, _) = fake_sandbox(
        SandboxMode::Auto,
        working(),
        vec![cache.display().to_string()],
    );
    let confinement = sandbox
        .confinement(std::slice::from_ref(&root), true)
        .unwrap()
        .unwrap();
    assert!(
        cache.is_dir(),
        "a missing cache is made so it can be granted"
    );
    let mut want = vec![root, cache];
    want.extend(
        SYSTEM_WRITABLE
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.exists()),
    );
    assert_eq!(confinement.scope.writable, want);
    assert!(confinement.scope.network);
}

/// The run adds a temp directory of its own, exported to the program,
/// and removes it afterwards.
#[tokio::test]
async fn each_run_gets_its_own_temp_directory() {
    let root = tempfile::tempdir().unwrap();
    let (sandbox, fake) = fake_sandbox(SandboxMode::Auto, working(), Vec::new());
    let confinement = sandbox
        .confinement(&[root.path().to_path_buf()], false)
        .unwrap();
    let (program, args) = if cfg!(windows) {
        ("cmd", vec!["/c".to_string(), "echo %TEMP%".to_string()])
    } else {
        ("sh", vec!["-c".to_string(), "echo $TMPDIR".to_string()])
    };
    let spec = crate::RunSpec {
        program: program.into(),
        args,
        env: Vec::new(),
        cwd: root.path().to_path_buf(),
        timeout: Duration::from_secs(30),
        keep_head: 4096,
        keep_tail: 0,
        confinement,
        search: Default::default(),
    };
    let out = crate::run(&spec).await.unwrap();
    assert!(out.confined);
    let temp = PathBuf::from(out.stdout.render().trim());
    assert!(
        temp.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("wamcp-cmd-"),
        "{}",
        temp.display()
    );
    assert!(!temp.exists(), "removed after the run");
    let scopes = fake.scopes.lock().unwrap();
    assert_eq!(scopes.len(), 1);
    assert_eq!(scopes[0].writable.last(), Some(&temp));
}

#[test]
fn the_note_comes_only_for_a_confined_refusal() {
    assert!(
        write_refusal_note(true, Some(1), "touch: cannot touch '/x': Permission denied").is_some()
    );
    assert!(write_refusal_note(false, Some(1), "Permission denied").is_none());
    assert!(write_refusal_note(true, Some(0), "Permission denied").is_none());
    assert!(write_refusal_note(true, Some(1), "error: undefined reference").is_none());
}

#[test]
fn the_private_view_hides_stores_and_trust_places_and_git_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let base = dunce::canonicalize(dir.path()).unwrap();
    let (root, ssh, aws) = (base.join("proj"), base.join(".ssh"), base.join(".aws"));
    for d in [
        root.join(".git/hooks"),
        root.join(".vscode"),
        ssh.clone(),
        aws.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    let stores = vec![
        (ssh.clone(), true),
        (aws.clone(), false),
        (base.join("none"), false),
    ];
    let viewed = Fake {
        viewed: true,
        ..working()
    };
    let (sandbox, _) = fake_sandbox(SandboxMode::Auto, viewed, Vec::new());
    let sandbox = sandbox.with_secret_stores(stores.clone());
    let mut confinement = sandbox
        .confinement(std::slice::from_ref(&root), true)
        .unwrap()
        .unwrap();
    assert_eq!(confinement.scope.hidden, [aws.clone(), ssh.clone()]);
    assert_eq!(
        confinement.scope.read_only,
        [
            root.join(".git"),
            root.join(".mcp.json"),
            root.join(".vscode")
        ]
    );
    let fresh = || {
        sandbox
            .confinement(std::slice::from_ref(&root), true)
            .unwrap()
            .unwrap()
    };
    // git acting on the project: its .git is writable but for the hooks.
    confinement.owned_by_git(Some(&root.join(".git")), true, true);
    assert_eq!(confinement.scope.hidden, std::slice::from_ref(&aws));
    assert_eq!(
        confinement.scope.read_only,
        [
            root.join(".mcp.json"),
            root.join(".vscode"),
            root.join(".git/hooks")
        ]
    );
    // Without the network it signs nothing in, so it sees no key.
    let mut offline = fresh();
    offline.owned_by_git(Some(&root.join(".git")), false, true);
    assert_eq!(offline.scope.hidden, [aws.clone(), ssh.clone()]);
    // git acting on a repository nested in the project (whose config a
    // script could have written) leaves the project's .git read-only.
    let mut nested = fresh();
    std::fs::create_dir_all(root.join("sub/.git")).unwrap();
    nested.owned_by_git(Some(&root.join("sub/.git")), true, true);
    assert!(nested.scope.read_only.contains(&root.join(".git")));
    // Without a private view nothing is promised.
    let (plain, _) = fake_sandbox(SandboxMode::Auto, working(), Vec::new());
    let plain = plain.with_secret_stores(stores);
    let scope = plain.confinement(&[root], false).unwrap().unwrap().scope;
    assert!(scope.hidden.is_empty() && scope.read_only.is_empty());
    assert_eq!(plain.private_view().0, "exposed");
    assert_eq!(sandbox.private_view(), ("hidden", "fake view".to_string()));
}

/// Commands told where the proxy is (Unix: the test talks HTTP from bash).
#[cfg(unix)]
mod settings_only {
    use super::*;

    /// Answers each connection with a 403 and notes the host it was asked for.
    #[derive(Debug, Default)]
    struct RefusingEgress {
        served: Mutex<usize>,
    }

    struct Noted(Arc<Mutex<Vec<String>>>);

    impl EgressRun for Noted {
        fn refused(&self) -> Vec<String> {
            self.0.lock().unwrap().clone()
        }
    }

    impl Egress for RefusingEgress {
        fn serve(
            &self,
            listener: std::net::TcpListener,
            _closed_ports: Vec<u16>,
            _granted: Vec<(String, u16)>,
        ) -> io::Result<Box<dyn EgressRun>> {
            use std::io::{Read, Write};
            *self.served.lock().unwrap() += 1;
            let noted = Arc::new(Mutex::new(Vec::new()));
            let seen = noted.clone();
            listener.set_nonblocking(false)?;
            std::thread::spawn(move || {
                if let Ok((mut stream, _)) = listener.accept() {
                    let mut buffer = [0u8; 256];
                    let read = stream.read(&mut buffer).unwrap_or(0);
                    let line = String::from_utf8_lossy(&buffer[..read]).to_string();
                    let host = line.split([' ', ':']).nth(1).unwrap_or("").to_string();
                    seen.lock().unwrap().push(host);
                    let _ = stream.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n");
                }
            });
            Ok(Box::new(Noted(noted)))
        }

        fn hosts(&self) -> Vec<String> {
            vec!["crates.io".into()]
        }

        fn ssh_relay(&self) -> Option<String> {
            None
        }

        fn reaches(&self, host: &str, _port: u16) -> bool {
            host == "crates.io"
        }
    }

    /// Without a network of its own, a command with the network is told where
    /// the proxy is (on loopback, for the run), and what the proxy refused
    /// reaches the answer; a command without the network is told nothing.
    #[tokio::test]
    async fn without_a_private_network_commands_get_the_proxy_settings() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        let (sandbox, _) = fake_sandbox(SandboxMode::Auto, working(), Vec::new());
        let egress = Arc::new(RefusingEgress::default());
        let sandbox = sandbox.with_egress(egress.clone());
        let (hosts, how) = sandbox.egress_hosts().unwrap();
        assert_eq!(hosts, ["crates.io"]);
        assert!(how.starts_with("proxy settings only"), "{how}");
        let script = "printf '%s %s\\n' \"$https_proxy\" \"$npm_config_proxy\"; \
                      [ -n \"$https_proxy\" ] || exit 0; \
                      exec 3<>/dev/tcp/127.0.0.1/${https_proxy##*:}; \
                      printf 'CONNECT blocked.example:443 HTTP/1.1\\r\\n\\r\\n' >&3; head -c 12 <&3";
        let run_with = |network: bool| {
            let confinement = sandbox
                .confinement(std::slice::from_ref(&root), network)
                .unwrap();
            crate::RunSpec {
                program: "bash".into(),
                args: vec!["-c".into(), script.into()],
                env: Vec::new(),
                cwd: root.clone(),
                timeout: Duration::from_secs(30),
                keep_head: 64 * 1024,
                keep_tail: 0,
                confinement,
                search: Default::default(),
            }
        };
        let out = crate::run(&run_with(true)).await.unwrap();
        let text = String::from_utf8_lossy(&out.stdout.head).to_string();
        assert!(text.starts_with("http://127.0.0.1:"), "{text}");
        assert!(text.contains("HTTP/1.1 403"), "{text}");
        assert_eq!(out.refused_hosts, ["blocked.example"]);
        let note = refusal_note(&out, "").unwrap();
        assert!(
            note.contains("connection to blocked.example was refused"),
            "{note}"
        );
        let out = crate::run(&run_with(false)).await.unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout.head), " \n");
        assert_eq!(*egress.served.lock().unwrap(), 1);
    }
}

/// The helper starts nothing unless every restricting SID it is handed is
/// a capability SID: never the user's well-known groups, never an empty
/// list item.
#[test]
fn the_helper_takes_only_capability_sids() {
    let argv: Vec<String> = ["--", "prog.exe"].map(String::from).to_vec();
    for bad in [
        "S-1-1-0",
        "S-1-5-21-1-2-3-4,S-1-1-0",
        "S-1-5-21-1-2-3-4,",
        "",
    ] {
        let error = run_helper(bad, &argv).unwrap_err();
        assert!(error.ends_with("is not a capability SID"), "{bad}: {error}");
    }
    assert_eq!(
        run_helper("S-1-5-21-1-2-3-4", &["--".to_string()]),
        Err("no program to run".to_string())
    );
    if cfg!(not(windows)) {
        assert_eq!(
            run_helper("S-1-5-21-1-2-3-4,S-1-5-21-5-6-7-8", &argv),
            Err("the restricted token exists only on Windows".to_string())
        );
    }
}
