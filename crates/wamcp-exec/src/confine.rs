//! Every command, build and shader compile runs confined: it may write
//! only inside the writable roots, its own temp directory and the listed
//! caches, and reach the network only when its rule says so.
//!
//! The grammars decide what one call may ask for; this bounds what the
//! program then does, including with scripts and build files the agent
//! wrote (`python p.py`, a `build.rs`, an npm script, `execute_process`).
//! The operating system's part sits behind [`Confiner`], so the decisions
//! here are tested with a fake on every host.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use wamcp_platform::confine::{Scope, Support};
use wamcp_policy::command::hardening::GitPins;
use wamcp_policy::command::posture::Posture;
use wamcp_policy::command::sandbox::{Caches, SandboxMode};
use wamcp_policy::command::self_test::Proof;
use wamcp_policy::error::{ErrorType, ToolError};

/// What a child needs to start confined, besides its argv.
#[derive(Default)]
pub struct Launch {
    /// Replaces the program and puts the original argv after it (the
    /// Windows helper that starts the program under the token).
    pub wrapper: Option<(String, Vec<String>)>,
    /// Runs in the child between fork and exec (Unix).
    #[cfg(unix)]
    pub pre_exec: Option<PreExec>,
    /// Where the listener of the command's own network arrives: its
    /// traffic then goes through the egress proxy (Linux).
    #[cfg(unix)]
    pub egress: Option<std::os::fd::OwnedFd>,
}

/// The port of the egress proxy inside a command's own network: the
/// network holds nothing else, so any port would do; this one is unusual
/// enough not to meet a test server the command starts itself.
pub const EGRESS_PORT: u16 = 39713;

/// wamcp's egress proxy, as the commands' side sees it.
pub trait Egress: Send + Sync + fmt::Debug {
    /// Proxies the connections `listener` accepts (the command's network)
    /// until the returned run is dropped, never to `closed_ports` (wamcp's
    /// own listeners) on loopback, and to the hosts commands may reach plus
    /// `granted` (the hosts and ports the user let this one command reach).
    fn serve(
        &self,
        listener: std::net::TcpListener,
        closed_ports: Vec<u16>,
        granted: Vec<(String, u16)>,
    ) -> io::Result<Box<dyn EgressRun>>;
    /// The hosts commands may reach, for `get_server_info`.
    fn hosts(&self) -> Vec<String>;
    /// Whether commands may reach `host` at `port` without asking.
    fn reaches(&self, host: &str, port: u16) -> bool;
    /// The program, quoted for a shell, that ssh starts with the host and
    /// port to reach them through the proxy (see `GitPins::ssh_relay`).
    fn ssh_relay(&self) -> Option<String>;
}

/// One command's use of the proxy; dropping it stops the proxying.
pub trait EgressRun: Send {
    /// The hosts the command tried to reach and was refused, each once.
    fn refused(&self) -> Vec<String>;
}

/// A hook that runs in the child between fork and exec: system calls only.
pub type PreExec = Box<dyn FnMut() -> io::Result<()> + Send + Sync>;

/// The operating system's side.
pub trait Confiner: Send + Sync + fmt::Debug {
    /// What this machine can enforce.
    fn support(&self) -> Support;
    /// How the mechanism is proven before it is trusted.
    fn probe(&self) -> Probe;
    /// Prepares a child confined to `scope` and its own temp directory
    /// `temp` (which lives only as long as the run).
    fn launch(&self, scope: &Scope, temp: &Path) -> io::Result<Launch>;
}

/// How a mechanism is proven on this machine (see [`crate::self_test`]).
#[derive(Clone, Debug)]
pub enum Probe {
    /// Start this program (wamcp's own binary) as the probe.
    Program(PathBuf),
    /// A verdict known without a probe: a test's fake, or why there can
    /// be no probe.
    Known(Proof),
}

/// The confiner of the platform the server runs on, proven with the
/// probe `program` (wamcp's own binary).
#[derive(Debug, Default)]
pub struct OsConfiner {
    program: Option<PathBuf>,
}

impl OsConfiner {
    /// The confiner whose self-test starts the running binary: the server
    /// is wamcp.
    pub fn current() -> OsConfiner {
        OsConfiner {
            program: std::env::current_exe().ok(),
        }
    }

    /// The confiner whose self-test starts `program`, a binary with the
    /// probe's body (this crate's own tests have no wamcp to start).
    pub fn with_probe(program: PathBuf) -> OsConfiner {
        OsConfiner {
            program: Some(program),
        }
    }
}

impl Confiner for OsConfiner {
    fn support(&self) -> Support {
        wamcp_platform::confine::support()
    }

    fn probe(&self) -> Probe {
        match &self.program {
            Some(program) => Probe::Program(program.clone()),
            None => Probe::Known(Proof::unproven(
                "wamcp cannot find its own binary to start the probe",
            )),
        }
    }

    fn launch(&self, scope: &Scope, temp: &Path) -> io::Result<Launch> {
        #[cfg(target_os = "linux")]
        {
            let mut scope = scope.clone();
            scope.writable.push(temp.to_path_buf());
            let mut prepared = wamcp_platform::confine::prepare(&scope)?;
            let egress = prepared.take_egress();
            Ok(Launch {
                pre_exec: Some(Box::new(move || prepared.enter())),
                egress,
                ..Launch::default()
            })
        }
        #[cfg(windows)]
        {
            crate::confine_windows::launch(scope, temp)
        }
        #[cfg(not(any(target_os = "linux", windows)))]
        {
            let _ = (scope, temp);
            Err(io::Error::other("no confinement on this operating system"))
        }
    }
}

/// Whether commands run confined here, and why (not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The `WAMCP_COMMAND_SANDBOX` setting.
    pub mode: SandboxMode,
    /// The mechanism in force, or `None` when commands run unconfined.
    pub mechanism: Option<String>,
    /// What the mechanism covers here, or why commands run unconfined.
    pub detail: String,
    /// How commands are kept from secret stores and trust folders, or
    /// why they are not here.
    pub private_view: Result<String, String>,
    /// The self-test's verdict, when the mechanism was tried.
    pub proof: Option<Proof>,
}

/// The server's confinement: mode, caches and the confiner.
#[derive(Debug)]
pub struct Sandbox {
    mode: SandboxMode,
    caches: Caches,
    confiner: Arc<dyn Confiner>,
    status: OnceLock<Status>,
    caches_made: OnceLock<()>,
    listeners: Listeners,
    /// Where credentials live, as configured, each with whether git needs
    /// it: hidden from every command where the platform gives it a private
    /// view, and from git all but git's own.
    secret_stores: Vec<(PathBuf, bool)>,
    /// The proxy every command with the network goes through, where the
    /// platform gives commands a network of their own.
    egress: Option<Arc<dyn Egress>>,
    /// The user's own values of the program-running git settings, read
    /// once.
    git_programs: OnceLock<GitPins>,
    /// Where the self-test's verdict is kept between runs.
    kept_proof: Option<PathBuf>,
}

/// The ports `serve --http` listens on unless told otherwise: its default,
/// and the range it picks from for `:0`. They are closed to every command
/// from the start, so a listener started after a command (a daemon the
/// command left waiting for one) is out of its reach too.
pub const WAMCP_PORTS: [std::ops::RangeInclusive<u16>; 2] = [8765..=8765, 47600..=47663];

/// wamcp's own HTTP listeners, which no command may reach: the ports this
/// process serves, and those other wamcp servers of this user registered
/// (one file per port, named by it, in a folder commands cannot write).
#[derive(Debug, Default)]
struct Listeners {
    own: std::sync::RwLock<Vec<u16>>,
    registry: Option<PathBuf>,
}

impl Listeners {
    fn ports(&self) -> Vec<u16> {
        let mut ports = self.own.read().unwrap_or_else(|e| e.into_inner()).clone();
        ports.extend(WAMCP_PORTS.iter().flat_map(|range| range.clone()));
        if let Some(Ok(entries)) = self.registry.as_ref().map(std::fs::read_dir) {
            ports.extend(entries.flatten().filter_map(|e| {
                let port = e.file_name().to_str()?.parse::<u16>().ok()?;
                // An entry left by a server that was killed: its port is free.
                let pid = std::fs::read_to_string(e.path())
                    .ok()
                    .and_then(|text| text.trim().parse().ok());
                pid.is_none_or(wamcp_platform::process::is_running)
                    .then_some(port)
            }));
        }
        ports.sort_unstable();
        ports.dedup();
        ports
    }
}

/// System places every confined program may write: the bit bucket and
/// friends, and POSIX shared memory, where semaphores live (Python's
/// multiprocessing and the test runners built on it need them). The latter
/// is memory, emptied at reboot, and nothing runs from it by name.
#[cfg(target_os = "linux")]
pub const SYSTEM_WRITABLE: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/shm"];
/// Empty off Linux: no other confiner is given system places to write.
#[cfg(not(target_os = "linux"))]
pub const SYSTEM_WRITABLE: &[&str] = &[];

impl Sandbox {
    /// The server's sandbox with the platform's own confiner.
    pub fn new(mode: SandboxMode, caches: Caches) -> Sandbox {
        Sandbox::with_confiner(mode, caches, Arc::new(OsConfiner::current()))
    }

    /// The sandbox with another confiner, for
    /// tests that must not depend on the host.
    pub fn with_confiner(
        mode: SandboxMode,
        caches: Caches,
        confiner: Arc<dyn Confiner>,
    ) -> Sandbox {
        Sandbox {
            mode,
            caches,
            confiner,
            status: OnceLock::new(),
            caches_made: OnceLock::new(),
            listeners: Listeners::default(),
            secret_stores: Vec::new(),
            egress: None,
            git_programs: OnceLock::new(),
            kept_proof: None,
        }
    }

    /// Keeps the self-test's verdict in `file` (per user, outside every
    /// root), for this boot and binary.
    pub fn with_kept_proof(mut self, file: PathBuf) -> Sandbox {
        self.kept_proof = Some(file);
        self
    }

    /// What git's program-running settings are pinned to here: the
    /// user's own global or system programs (hooks never run, see
    /// `hardening::child_env`).
    pub fn git_pins(&self, search: &wamcp_platform::search_path::ProgramSearch) -> GitPins {
        let user = self.git_programs.get_or_init(|| {
            let git = search.find_program("git");
            let read = |key: &str| {
                git.as_deref()
                    .map(|git| user_git_values(git, key))
                    .unwrap_or_default()
            };
            let last = |key: &str| read(key).pop();
            let ssh_command = last("core.sshCommand").unwrap_or_else(|| "ssh".into());
            // The relay is named in a shell command that ssh fills with the
            // host name: only where ssh itself refuses a host name carrying
            // shell syntax (`ssh://a$(cmd)/r` in a remote's URL).
            let ssh_relay = self
                .egress
                .as_ref()
                .and_then(|egress| egress.ssh_relay())
                .filter(|_| ssh_refuses_shell_host_names(search, &ssh_command));
            GitPins {
                ssh_command,
                gpg_program: last("gpg.program").unwrap_or_else(|| "gpg".into()),
                credential_helpers: read("credential.helper"),
                ask_pass: last("core.askPass").unwrap_or_default(),
                ssh_relay,
            }
        });
        let confined = self.status().mechanism.is_some();
        GitPins {
            ssh_relay: user.ssh_relay.clone().filter(|_| confined),
            ..user.clone()
        }
    }

    /// Sends the traffic of every command with the network through `egress`.
    pub fn with_egress(mut self, egress: Arc<dyn Egress>) -> Sandbox {
        self.egress = Some(egress);
        self
    }

    /// The proxy that holds commands with the network, when one does (a
    /// host their arguments name outside it is asked about).
    pub fn egress(&self) -> Option<&dyn Egress> {
        self.status().mechanism.as_ref()?;
        self.egress.as_deref()
    }

    /// The hosts commands with the network may reach, and what holds them
    /// to those: a network of their own whose only way out is the proxy,
    /// or only the proxy settings they are given. `None` without a proxy
    /// or confinement.
    pub fn egress_hosts(&self) -> Option<(Vec<String>, &'static str)> {
        let egress = self.egress.as_ref()?;
        let status = self.status();
        status.mechanism.as_ref()?;
        let how = match status.private_view.is_ok() {
            true => {
                "enforced: each command with the network has a network of its own whose one way out is wamcp's egress proxy"
            }
            false => {
                "proxy settings only: commands are told to use wamcp's egress proxy (HTTPS_PROXY and the like); a program that ignores them connects directly"
            }
        };
        Some((egress.hosts(), how))
    }

    /// Hides `stores` (secret stores, resolved or as configured, each with
    /// whether git needs it to reach a remote) from every command.
    pub fn with_secret_stores(mut self, stores: Vec<(PathBuf, bool)>) -> Sandbox {
        self.secret_stores = stores;
        self
    }

    /// Where wamcp servers register the ports they listen on, so that the
    /// commands of every server are kept off all of them.
    pub fn with_listener_registry(mut self, dir: PathBuf) -> Sandbox {
        self.listeners.registry = Some(dir);
        self
    }

    /// The folder of [`Sandbox::with_listener_registry`].
    pub fn listener_registry(&self) -> Option<&Path> {
        self.listeners.registry.as_deref()
    }

    /// Closes `port` (this server's own listener) to every later command.
    pub fn close_port(&self, port: u16) {
        let mut own = self
            .listeners
            .own
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if !own.contains(&port) {
            own.push(port);
        }
    }

    /// The caches commands may write, and the entries refused.
    pub fn caches(&self) -> &Caches {
        &self.caches
    }

    /// Probed and proven once, on first use: start-up pays nothing for it.
    pub fn status(&self) -> &Status {
        self.status.get_or_init(|| {
            let support = self.confiner.support();
            let Some(mechanism) = support
                .mechanism
                .clone()
                .filter(|_| self.mode != SandboxMode::Off)
            else {
                return Status {
                    mode: self.mode,
                    mechanism: None,
                    detail: match self.mode {
                        SandboxMode::Off => "WAMCP_COMMAND_SANDBOX=off".to_string(),
                        _ => support.detail,
                    },
                    private_view: Err("commands are not confined".into()),
                    proof: None,
                };
            };
            let proof = self.prove(&support, &mechanism);
            let trusted = match self.mode {
                SandboxMode::Require => proof.writes.is_ok() && proof.network.is_ok(),
                _ => proof.writes.is_ok(),
            };
            let (mechanism, detail, private_view) = match (trusted, &proof.trust) {
                (false, _) => (
                    None,
                    format!("{mechanism} is not trusted here: {}", failures(&proof)),
                    Err("commands are not confined".into()),
                ),
                (true, Err(why)) => (Some(mechanism), support.detail, Err(why.clone())),
                (true, Ok(_)) => (Some(mechanism), support.detail, support.private_view),
            };
            Status {
                mode: self.mode,
                mechanism,
                detail,
                private_view,
                proof: Some(proof),
            }
        })
    }

    /// The self-test's verdict for `mechanism`: kept, or proven now.
    fn prove(&self, support: &Support, mechanism: &str) -> Proof {
        match self.confiner.probe() {
            Probe::Known(proof) => proof,
            Probe::Program(program) => {
                let key = proof_key(&program, mechanism, support);
                let kept = self.kept_proof.as_deref();
                match self.mode {
                    // A promise is checked afresh, never taken from a file.
                    SandboxMode::Require => crate::self_test::renew(self, &program, kept, &key),
                    _ => crate::self_test::proof(self, &program, kept, &key),
                }
            }
        }
    }

    /// The self-test again, whatever was kept, and kept in its place
    /// (`wamcp config --check`); `None` where nothing is tried.
    pub fn prove_now(&self) -> Option<Proof> {
        let support = self.confiner.support();
        let mechanism = support
            .mechanism
            .as_ref()
            .filter(|_| self.mode != SandboxMode::Off)?;
        Some(match self.confiner.probe() {
            Probe::Known(proof) => proof,
            Probe::Program(program) => {
                let key = proof_key(&program, mechanism, &support);
                crate::self_test::renew(self, &program, self.kept_proof.as_deref(), &key)
            }
        })
    }

    /// How commands are judged here: by their effects where this OS layer
    /// proved on this machine that it bounds writes and network and keeps
    /// the trust folders, else by the grammars alone.
    pub fn posture(&self) -> Posture {
        let status = self.status();
        let proven = |p: &Proof| p.writes.is_ok() && p.trust.is_ok() && p.network.is_ok();
        match status.mechanism.is_some() && status.proof.as_ref().is_some_and(proven) {
            true => Posture::Confined,
            false => Posture::Grammars,
        }
    }

    /// How one command runs: confined to the roots, its temp directory and
    /// the caches; unconfined when confinement is off or unavailable under
    /// `auto`; refused when it is unavailable under `require`.
    pub fn confinement(
        &self,
        roots: &[PathBuf],
        network: bool,
    ) -> Result<Option<Confinement>, ToolError> {
        let status = self.status();
        if status.mechanism.is_none() {
            if self.mode == SandboxMode::Require {
                return Err(ToolError::new(
                    ErrorType::SandboxUnavailable,
                    format!(
                        "Commands must run confined (WAMCP_COMMAND_SANDBOX=require), and they cannot be here: {}.",
                        status.detail
                    ),
                )
                .recover("Retrying cannot help. The user can enable the mechanism, or set WAMCP_COMMAND_SANDBOX=auto."));
            }
            return Ok(None);
        }
        Ok(Some(self.confine_to(
            roots,
            network,
            status.private_view.is_ok(),
        )))
    }

    /// The self-test probe's confinement: exactly a command's, without the
    /// network, in `root`.
    pub(crate) fn probe_confinement(&self, root: &Path) -> Confinement {
        let viewed = self.confiner.support().private_view.is_ok();
        self.confine_to(&[root.to_path_buf()], false, viewed)
    }

    /// A command's confinement to `roots`, with the network or not, with
    /// the private view (`viewed`) or not.
    fn confine_to(&self, roots: &[PathBuf], network: bool, viewed: bool) -> Confinement {
        self.make_caches();
        // Resolved: the platform checks that each opens as exactly this path.
        let mut writable: Vec<PathBuf> = roots.iter().filter(|r| r.is_dir()).cloned().collect();
        writable.extend(
            self.caches
                .entries
                .iter()
                .filter_map(|p| dunce::canonicalize(p).ok())
                .filter(|p| p.is_dir()),
        );
        writable.extend(
            SYSTEM_WRITABLE
                .iter()
                .filter_map(|p| dunce::canonicalize(p).ok()),
        );
        // The places kept read-only, scanned once: only a private view
        // keeps any.
        let (view_roots, repositories) = match viewed {
            true => (roots, crate::command::repository_folders(roots)),
            false => (&[][..], Vec::new()),
        };
        let stores = match viewed {
            true => existing(&self.secret_stores),
            false => Vec::new(),
        };
        let egress = self.egress.clone().filter(|_| network);
        let own_network = egress.is_some() && viewed;
        let ports = if network {
            self.listeners.ports()
        } else {
            Vec::new()
        };
        Confinement {
            git_needs: stores
                .iter()
                .filter(|(_, git)| *git)
                .map(|(p, _)| p.clone())
                .collect(),
            egress: egress.clone().map(|proxy| (proxy, ports.clone())),
            granted: Vec::new(),
            keys_withheld: false,
            acted_on: None,
            scope: Scope {
                hidden: stores.into_iter().map(|(p, _)| p).collect(),
                read_only: trust_places(view_roots, &repositories),
                pinned: pinned_folders(view_roots, &repositories),
                writable,
                network,
                // In a network of its own the command cannot reach wamcp's
                // listeners at all; the proxy keeps them closed.
                closed_ports: if own_network {
                    Vec::new()
                } else {
                    ports.clone()
                },
                egress_port: own_network.then_some(EGRESS_PORT),
            },
            confiner: self.confiner.clone(),
        }
    }

    /// A cache that does not exist yet cannot be granted, and the tool
    /// would then fail to create it: make the missing ones once.
    fn make_caches(&self) {
        self.caches_made.get_or_init(|| {
            for entry in &self.caches.entries {
                let _ = std::fs::create_dir_all(entry);
            }
        });
    }
}

/// What the kept verdict holds for: the probe binary, the mechanism and
/// how it describes itself here (a kernel with another Landlock ABI, or a
/// private view that came or went, is proven again).
fn proof_key(program: &Path, mechanism: &str, support: &Support) -> String {
    let layer = format!("{} {}", support.detail, support.private_view.is_ok());
    crate::self_test::key(program, mechanism, &layer)
}

/// The parts of the OS layer the self-test could not prove, with the
/// evidence of each.
pub fn failures(proof: &Proof) -> String {
    let failed: Vec<String> = proof
        .parts()
        .iter()
        .filter_map(|(name, part)| Some(format!("{name}: {}", part.as_ref().err()?)))
        .collect();
    failed.join("; ")
}

/// What commands are told about secret stores and trust folders, for
/// `get_server_info`.
impl Sandbox {
    /// `hidden` with how, or `exposed` with why.
    pub fn private_view(&self) -> (&'static str, String) {
        match &self.status().private_view {
            Ok(how) => ("hidden", how.clone()),
            Err(why) => ("exposed", why.clone()),
        }
    }
}

/// Every value of `key` the user set for all their repositories, system
/// ones first, then global ones, as git reads them (the last wins for a
/// single-valued key). A repository's own values are what the pin
/// overrides.
/// Whether the SSH client `ssh_command` starts refuses a host name with
/// shell syntax in it, as OpenSSH does since 9.6 and in distributions'
/// fixes for CVE-2023-51385 (asked with `-G`, which connects nowhere). An
/// older one would hand such a name to the shell that runs `ProxyCommand`.
fn ssh_refuses_shell_host_names(
    search: &wamcp_platform::search_path::ProgramSearch,
    ssh_command: &str,
) -> bool {
    let program = ssh_command.split_whitespace().next().unwrap_or("ssh");
    let found = match program.contains(['/', '\\']) {
        true => Some(PathBuf::from(program)),
        false => search.find_program(program),
    };
    let Some(ssh) = found else {
        return false;
    };
    std::process::Command::new(ssh)
        .args(["-G", "wamcp'probe"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output()
        .is_ok_and(|out| {
            !out.status.success()
                && String::from_utf8_lossy(&out.stderr).contains("invalid characters")
        })
}

fn user_git_values(git: &Path, key: &str) -> Vec<String> {
    ["--system", "--global"]
        .iter()
        .filter_map(|scope| {
            let out = std::process::Command::new(git)
                .args(["config", "--includes", scope, "--get-all", key])
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        })
        .flat_map(|text| text.lines().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// The places of `stores` that exist, resolved, each once, with whether
/// git needs them.
fn existing(stores: &[(PathBuf, bool)]) -> Vec<(PathBuf, bool)> {
    let mut found: Vec<(PathBuf, bool)> = stores
        .iter()
        .filter_map(|(p, git)| Some((dunce::canonicalize(p).ok()?, *git)))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The trust folders and files at the top of each root that exist
/// (`.git`, `.vscode`, `.mcp.json`...) and the `.git` of each repository up
/// to two folders below (a vendored checkout, a monorepo's service, whose
/// hooks the user's git runs there), resolved: what decides what runs
/// later outside the sandbox, which no confined program but its owner
/// may change.
fn trust_places(roots: &[PathBuf], repositories: &[PathBuf]) -> Vec<PathBuf> {
    let names = wamcp_policy::write_rules::trust_dir_names().chain(TRUST_FILES.iter().copied());
    let names: Vec<&str> = names.collect();
    let mut found: Vec<PathBuf> = roots
        .iter()
        .flat_map(|root| names.iter().map(move |name| root.join(name)))
        .filter(|p| p.symlink_metadata().is_ok())
        .chain(roots.iter().flat_map(|root| trust_files_at_top(root)))
        .chain(repositories.iter().cloned())
        .filter_map(|p| dunce::canonicalize(p).ok())
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The folders between each root and the `.git` of a repository nested
/// in it (`libs` and `libs/inner` for `libs/inner/.git`), resolved: a
/// script could otherwise rename one away with the read-only `.git` inside
/// and put a writable copy, hooks and all, in its place.
fn pinned_folders(roots: &[PathBuf], repositories: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dot_git in repositories {
        let Some(root) = roots.iter().find(|r| dot_git.starts_with(r)) else {
            continue;
        };
        let mut folder = dot_git.parent();
        while let Some(dir) = folder.filter(|d| d != root && d.starts_with(root)) {
            found.extend(dunce::canonicalize(dir).ok());
            folder = dir.parent();
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The trust files at the top of `root` whose names vary: an editor
/// workspace (`app.code-workspace`), whose tasks may run when it is opened.
fn trust_files_at_top(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            wamcp_policy::write_rules::agent_trust_file(&[name.unwrap_or_default()]).is_some()
        })
        .collect()
}

/// Files at the top of a root that decide what runs: the submodule list and
/// an MCP client's server list.
const TRUST_FILES: &[&str] = &[".gitmodules", ".mcp.json"];

/// One command's confinement; [`crate::run`] adds its temp directory.
#[derive(Clone, Debug)]
pub struct Confinement {
    /// What the command may write and reach, besides its temp directory.
    pub scope: Scope,
    /// The hidden places git needs to reach a remote (keys, credentials).
    git_needs: Vec<PathBuf>,
    /// The proxy of its network, when it has the network, with the ports
    /// it keeps closed.
    egress: Option<(Arc<dyn Egress>, Vec<u16>)>,
    /// The hosts and ports the user let this command reach.
    granted: Vec<(String, u16)>,
    /// See [`Confinement::keys_withheld`].
    keys_withheld: bool,
    /// See [`Confinement::acted_on`].
    acted_on: Option<Option<PathBuf>>,
    confiner: Arc<dyn Confiner>,
}

impl Confinement {
    /// Lets git change its own folder and, with the network, sign in: a
    /// command that is git itself, run through its grammar, keeps
    /// writable the `.git` of the repository it acts on (`repository`;
    /// its hooks stay read-only, and every other trust place too), and a
    /// git that pushes or fetches sees the SSH keys, agent and credential
    /// files it signs in with. A git without the network sees none of
    /// them: it could print a key (`git diff --no-index`) or commit one.
    /// Answers whether that `.git` is one the private view protects (only
    /// git can have written it).
    ///
    /// The keys are shown only to a git acting on such a repository, or on
    /// none (a clone): the config of a repository a script could write
    /// names programs git runs as its children (`submodule.x.update=!cmd`,
    /// a filter), which would run with the keys in view.
    ///
    /// `clean` says the repository's config names no program a git with
    /// the network would run (see `Repository::programs_in_config`): a
    /// script may have made the repository itself in an earlier call, and
    /// then it is read-only now with the script's config in it.
    pub fn owned_by_git(&mut self, repository: Option<&Path>, network: bool, clean: bool) -> bool {
        let protected = repository.is_some_and(|r| self.protects(r));
        if let Some(dot_git) = repository
            .filter(|_| protected)
            .and_then(|r| dunce::canonicalize(r).ok())
        {
            self.scope.read_only.retain(|p| *p != dot_git);
            if let Ok(hooks) = dunce::canonicalize(dot_git.join("hooks")) {
                self.scope.read_only.push(hooks);
            }
        }
        let keys = network && clean && (protected || repository.is_none());
        if keys {
            self.scope.hidden.retain(|p| !self.git_needs.contains(p));
        }
        self.keys_withheld = network && !keys;
        if protected || keys {
            self.acted_on = Some(repository.map(Path::to_path_buf));
        }
        protected
    }

    /// The `.git` of the repository git was judged to act on, when that
    /// gave it its `.git` to write or the keys: what it acts on when it
    /// starts must be the same (an earlier command of the line may have
    /// made another, or written a program into this one's config).
    pub fn acted_on(&self) -> Option<Option<&Path>> {
        self.acted_on.as_ref().map(Option::as_deref)
    }

    /// Whether the private view keeps `dot_git` read-only to scripts.
    fn protects(&self, dot_git: &Path) -> bool {
        dunce::canonicalize(dot_git).is_ok_and(|d| self.scope.read_only.contains(&d))
    }

    /// Whether a git with the network was kept from the keys because its
    /// repository's `.git` is one a script could have written.
    pub fn keys_withheld(&self) -> bool {
        self.keys_withheld
    }

    /// Whether the command is only told to use the proxy: it has the
    /// network, but no network of its own to hold it there.
    pub(crate) fn proxy_by_settings(&self) -> bool {
        self.egress.is_some() && self.scope.egress_port.is_none()
    }

    /// Proxies the command's network, accepted on `listener`, when it has
    /// the network.
    pub(crate) fn serve_egress(
        &self,
        listener: std::net::TcpListener,
    ) -> Option<io::Result<Box<dyn EgressRun>>> {
        let (proxy, closed) = self.egress.as_ref()?;
        Some(proxy.serve(listener, closed.clone(), self.granted.clone()))
    }

    /// Lets the command reach `endpoints` too: the hosts its arguments
    /// name that the user said yes to.
    pub fn grant(&mut self, endpoints: Vec<(String, u16)>) {
        self.granted = endpoints;
    }

    /// Prepares the launch with `temp` (the command's own temp directory)
    /// writable too.
    pub(crate) fn launch(&self, temp: &Path) -> io::Result<Launch> {
        self.confiner.launch(&self.scope, temp)
    }
}

/// The lines added to a confined command's output: the hosts the egress
/// proxy refused, and, for a failed command, where writes go when its
/// output reads like the system refused one.
pub fn refusal_note(out: &crate::RunOutput, output: &str) -> Option<String> {
    let egress = (!out.refused_hosts.is_empty()).then(|| {
        format!(
            "[wamcp] The command's connection to {} was refused: commands reach only the hosts this \
             project uses (get_server_info's command_hosts). If it needs one, the user can add it to \
             WAMCP_COMMAND_HOSTS.",
            out.refused_hosts.join(", ")
        )
    });
    let writes = write_refusal_note(out.confined, out.exit_code, output);
    match (egress, writes) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    }
}

/// The line added to a failed confined command's output when it reads
/// like the system refused a write (or a connection).
fn write_refusal_note(confined: bool, exit_code: Option<i32>, output: &str) -> Option<String> {
    (confined && wamcp_policy::command::sandbox::looks_refused(exit_code, output)).then(|| {
        "[wamcp] Commands run confined: they write only inside the writable roots, their own temp directory \
         and the caches in get_server_info's command_writable, and reach the network only when their rule \
         says so. If the refusal above is about a path outside those, the user can widen WAMCP_PROJECT_ROOTS \
         or WAMCP_COMMAND_WRITABLE (or give the command's rule \"network\": true)."
            .to_string()
    })
}

/// `wamcp uninstall-sandbox`: takes away what confinement left on the
/// user's files, one line per place. Only Windows leaves anything (access
/// entries for the capability SID on the roots, caches and trust folders).
pub fn uninstall() -> Result<Vec<String>, String> {
    #[cfg(windows)]
    {
        crate::confine_windows::uninstall()
    }
    #[cfg(not(windows))]
    {
        Ok(vec![
            "nothing to remove: confinement on this system leaves nothing on the user's files"
                .into(),
        ])
    }
}

/// The lasting access entries confinement added and has not taken away
/// (`allow PATH` / `deny PATH`), and where they are recorded; empty off
/// Windows.
pub fn recorded_entries() -> (Vec<String>, Option<PathBuf>) {
    #[cfg(windows)]
    {
        let mut entries = crate::confine_windows::recorded().unwrap_or_default();
        entries.retain(|entry| Path::new(&entry.path).exists());
        let write_ledger = wamcp_policy::command::token_plan::write_ledger;
        let lines = write_ledger(&entries).lines().map(str::to_string).collect();
        (lines, crate::confine_windows::ledger_file().ok())
    }
    #[cfg(not(windows))]
    {
        (Vec::new(), None)
    }
}

/// The body of `wamcp __confined-run SID,SID... [--] PROGRAM ARGS...`:
/// starts the program under the write-restricted token whose restricting
/// SIDs are the listed capability SIDs (one per writable place) and the
/// logon SID, and answers its exit code. A batch file runs through
/// `cmd.exe` with the standard library's quoting (see `batch_command_line`).
pub fn run_helper(capabilities: &str, argv: &[String]) -> Result<u32, String> {
    let argv = match argv.first().map(String::as_str) {
        Some("--") => &argv[1..],
        _ => argv,
    };
    let Some((program, args)) = argv.split_first() else {
        return Err("no program to run".into());
    };
    let sids: Vec<String> = capabilities.split(',').map(str::to_string).collect();
    if let Some(bad) = sids
        .iter()
        .find(|sid| !wamcp_policy::command::token_plan::is_capability_sid(sid))
    {
        return Err(format!("'{bad}' is not a capability SID"));
    }
    #[cfg(windows)]
    {
        wamcp_platform::confine::windows::run_restricted(&sids, program, args)
            .map_err(|e| format!("could not start '{program}' under the restricted token: {e}"))
    }
    #[cfg(not(windows))]
    {
        let _ = (program, args);
        Err("the restricted token exists only on Windows".into())
    }
}

#[cfg(test)]
mod tests;
