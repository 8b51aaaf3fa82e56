//! The `wamcp` command: serve MCP on stdio, or manage the config file.

use clap::{Args, Parser, Subcommand};
use rmcp::ServiceExt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use wamcp::config::{self, ConfigFile, EnvLookup};
use wamcp::context::{ServerContext, Startup};
use wamcp::emit::{self, Format};
use wamcp::server::WamcpServer;
use wamcp::settings;

#[derive(Parser)]
#[command(
    name = "wamcp",
    version,
    about = "An MCP server with a safe developer toolset for Windows. \
    With no subcommand it serves MCP over stdio."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (the default), or over streamable HTTP.
    Serve(ServeArgs),
    /// Show, create or export the configuration.
    Config(ConfigArgs),
    /// Grant or revoke hosts fetch_web_page may read (mcp-allowed-hosts.json).
    Hostgrants(HostgrantsArgs),
    /// Print exactly what fetch_web_page would show for an HTML (or text) file.
    Extract(ExtractArgs),
    /// The undo journal: list the steps (the default), show one, or put one
    /// back.
    Undo {
        #[command(subcommand)]
        action: Option<UndoAction>,
    },
    /// Answer a host's permission hook for a wamcp tool call (event JSON on
    /// stdin): claude-pre-tool-use, codex-pre-tool-use, codex-permission-request.
    Hook {
        /// The hook event.
        event: String,
    },
    /// Windows: register a per-user logon task that serves HTTP in your
    /// session (the exact command is printed first).
    InstallTask {
        /// The loopback address to serve at.
        #[arg(long, default_value = wamcp::http::DEFAULT_ADDRESS)]
        http: String,
    },
    /// Windows: remove the logon task install-task registered.
    UninstallTask,
    /// Take away what command confinement left on your files (Windows: the
    /// access entries wamcp added to roots, caches and trust folders).
    UninstallSandbox,
    /// Internal (Windows): start a program under the write-restricted token.
    #[command(name = "__confined-run", hide = true)]
    ConfinedRun {
        capability: String,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        argv: Vec<String>,
    },
    /// Internal: ssh's `ProxyCommand` for a confined git, through the
    /// egress proxy.
    #[command(name = "__egress-connect", hide = true)]
    EgressConnect { host: String, port: String },
    /// Internal: the self-test's probe, started confined as commands are.
    #[command(name = "__confine-probe", hide = true)]
    ConfineProbe {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
enum UndoAction {
    /// The recent steps, newest first.
    List,
    /// Every path a step changed.
    Show { id: u64 },
    /// Put every path a step changed back as it was before it.
    Restore {
        id: u64,
        /// Also over later changes to the same paths.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["add", "remove", "list", "init"])))]
struct HostgrantsArgs {
    /// Grant this host (exact name, no wildcards).
    #[arg(long, value_name = "HOST")]
    add: Option<String>,
    /// With --add: why it was granted.
    #[arg(long, requires = "add")]
    note: Option<String>,
    /// Revoke this host.
    #[arg(long, value_name = "HOST")]
    remove: Option<String>,
    /// Show the grants file and its hosts.
    #[arg(long)]
    list: bool,
    /// Write an empty grants file.
    #[arg(long)]
    init: bool,
}

#[derive(Args)]
struct ExtractArgs {
    /// The document, or - for standard input.
    file: PathBuf,
    /// The URL it came from (resolves relative links; shown in the fence).
    #[arg(long, default_value = "https://example.invalid/")]
    url: String,
    /// The Content-Type the server sent (default: text/html for .html/.htm
    /// files, else judged from the bytes as fetch_web_page does).
    #[arg(long)]
    content_type: Option<String>,
    /// First line to show.
    #[arg(long, default_value_t = 1)]
    start_line: i64,
    /// Lines to show (at most 2000, as for the model).
    #[arg(long, default_value_t = 2000)]
    max_lines: i64,
}

#[derive(Args, Default)]
struct ServeArgs {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (loopback only;
    /// default 127.0.0.1:8765).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = wamcp::http::DEFAULT_ADDRESS)]
    http: Option<String>,
    /// With --http on loopback: accept requests without the bearer token.
    #[arg(long, requires = "http")]
    no_token: bool,
    /// With --http: listen on a non-loopback address (the token is required).
    #[arg(long, requires = "http")]
    allow_remote: bool,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["list", "check", "init", "emit"])))]
struct ConfigArgs {
    /// Print the config file in use, every setting with its effective value
    /// and source, and the profiles.
    #[arg(long)]
    list: bool,
    /// Load the config file, the command rules (running every example, the
    /// built-in ones too) and the host grants as the server would; list what
    /// is wrong and exit with status 1 if anything is.
    #[arg(long)]
    check: bool,
    /// Write a documented config file ($WAMCP_CONFIG_FILE, else the per-user file).
    #[arg(long)]
    init: bool,
    /// With --init: replace an existing file.
    #[arg(long, requires = "init")]
    force: bool,
    /// Print a ready-to-paste client configuration that starts this binary.
    #[arg(long, value_enum, value_name = "FORMAT")]
    emit: Option<Format>,
    /// With --emit: only this profile.
    #[arg(long, requires = "emit")]
    profile: Option<String>,
    /// With --emit: an entry for `wamcp serve --http` at this URL, with the
    /// bearer token (made now if there is none).
    #[arg(long, requires = "emit", value_name = "URL", num_args = 0..=1,
          default_missing_value = "http://127.0.0.1:8765/mcp", conflicts_with = "profile")]
    http: Option<String>,
}

fn main() -> ExitCode {
    // Clients start `wamcp` with no arguments, many times a day: that start
    // does not pay for building the whole command-line parser.
    let command = if std::env::args_os().len() <= 1 {
        Command::Serve(ServeArgs::default())
    } else {
        Cli::parse()
            .command
            .unwrap_or(Command::Serve(ServeArgs::default()))
    };
    let env = |name: &str| std::env::var(name).ok();
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            eprintln!("wamcp: cannot determine the working directory: {e}");
            return ExitCode::FAILURE;
        }
    };
    if matches!(
        command,
        Command::Config(_) | Command::Hostgrants(_) | Command::Extract(_) | Command::Undo { .. }
    ) {
        end_quietly_on_a_closed_pipe();
    }
    match command {
        Command::Serve(args) => serve(args, &env, &cwd),
        Command::Config(args) => report("config", config_command(args, &env, &cwd)),
        Command::Hostgrants(args) => report("hostgrants", hostgrants_command(args, &env, &cwd)),
        Command::Extract(args) => report("extract", extract_command(args)),
        Command::Undo { action } => report("undo", undo_command(action, &env, &cwd)),
        Command::Hook { event } => match hook_command(&event, &env, &cwd) {
            Ok(()) => ExitCode::SUCCESS,
            // Both hosts read exit code 2 as "blocked, stderr says why";
            // any other failure is "no opinion", which would let a call
            // through that the hook could not judge.
            Err(message) => {
                eprintln!("wamcp hook: {message}; the call is refused.");
                ExitCode::from(2)
            }
        },
        Command::InstallTask { http } => report(
            "install-task",
            wamcp::logon_task::install(&http, wamcp::http::token_file(&env).as_deref()),
        ),
        Command::UninstallTask => report("uninstall-task", wamcp::logon_task::uninstall()),
        Command::UninstallSandbox => report(
            "uninstall-sandbox",
            wamcp_exec::confine::uninstall()
                .map(|lines| lines.iter().for_each(|l| println!("{l}"))),
        ),
        Command::ConfinedRun { capability, argv } => {
            match wamcp_exec::confine::run_helper(&capability, &argv) {
                // Windows exit codes are 32 bits; ExitCode keeps only 8.
                Ok(code) => std::process::exit(code as i32),
                Err(message) => report("__confined-run", Err(message)),
            }
        }
        Command::EgressConnect { host, port } => wamcp::ssh_relay::main(&host, &port),
        Command::ConfineProbe { args } => {
            use wamcp_exec::self_test::{RealSystem, probe_main};
            let answer = probe_main(&args, &RealSystem).map(|text| print!("{text}"));
            report(wamcp_exec::self_test::PROBE, answer)
        }
    }
}

/// A report read through `| head` ends when the reader has enough, as
/// `cat` or `rg` do, instead of panicking on the closed pipe: Rust ignores
/// SIGPIPE, so without this every `println!` after the reader left would
/// fail. Only for the printing commands: the server handles a closed
/// stdout itself, and the hook must answer or fail closed.
fn end_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition, before any thread
    // starts, touches no memory of this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn report(command: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("wamcp {command}: {message}");
            ExitCode::FAILURE
        }
    }
}

fn hook_command(event: &str, env: EnvLookup, cwd: &Path) -> Result<(), String> {
    if let Some(answer) = wamcp::hook::respond(event, std::io::stdin().lock(), env, cwd)? {
        println!("{answer}");
    }
    Ok(())
}

fn hostgrants_command(args: HostgrantsArgs, env: EnvLookup, cwd: &Path) -> Result<(), String> {
    // The same file the server reads: WAMCP_ALLOWED_HOSTS_FILE (environment,
    // profile or config file), else the user's, beside the config file.
    let ctx = ServerContext::new(Startup::read(env, cwd), env, cwd, "cli");
    let path = &ctx.places.granted_hosts_file;
    let message = if let Some(host) = &args.add {
        wamcp::hostgrants::add(path, host, args.note.as_deref())?
    } else if let Some(host) = &args.remove {
        wamcp::hostgrants::remove(path, host)?
    } else if args.init {
        wamcp::hostgrants::init(path)?
    } else {
        wamcp::hostgrants::list(path)?
    };
    println!("{}", message.trim_end());
    Ok(())
}

fn undo_command(action: Option<UndoAction>, env: EnvLookup, cwd: &Path) -> Result<(), String> {
    use wamcp::undo::Action;
    let ctx = ServerContext::new(Startup::read(env, cwd), env, cwd, "cli");
    let action = match action.unwrap_or(UndoAction::List) {
        UndoAction::List => Action::List,
        UndoAction::Show { id } => Action::Show(id),
        UndoAction::Restore { id, force } => Action::Restore { id, force },
    };
    println!("{}", wamcp::undo::cli(&ctx, action)?.trim_end());
    Ok(())
}

fn extract_command(args: ExtractArgs) -> Result<(), String> {
    use std::io::Read;
    let url = url::Url::parse(&args.url).map_err(|e| format!("--url: {e}"))?;
    let limit = wamcp_policy::limits::MAX_PAGE_BYTES;
    let mut body = Vec::new();
    let source: Box<dyn Read> = if args.file.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?,
        )
    };
    source
        .take(limit + 1)
        .read_to_end(&mut body)
        .map_err(|e| e.to_string())?;
    if body.len() as u64 > limit {
        return Err(format!(
            "the document is larger than {limit} bytes; fetch_web_page would refuse it (PAGE_TOO_LARGE)"
        ));
    }
    // A file named .html is read as HTML even without --content-type.
    let by_name = args
        .file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"))
        .then_some("text/html");
    let content_type = args.content_type.as_deref().or(by_name);
    let page =
        wamcp_web::page::extract_document(&url, content_type, &body).map_err(|e| e.message)?;
    let text = wamcp_web::page::render_range(&page, url.as_str(), args.start_line, args.max_lines)
        .map_err(|e| e.message)?;
    print!("{text}");
    Ok(())
}

/// Removes temporary files killed servers left behind (run on the
/// blocking pool once serving has begun).
fn sweep_leftovers(roots: &[PathBuf]) {
    let removed = wamcp_fs::leftovers::sweep(roots);
    if removed > 0 {
        tracing::warn!(
            "removed {removed} temporary file(s) left by wamcp processes that were killed while writing"
        );
    }
}

/// The most threads blocking work may use at once on stdio: a batch of
/// calls runs in parallel, a runaway batch does not start hundreds.
const BLOCKING_THREADS: usize = 16;

/// How long workers get to finish once the client has gone.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// What `wamcp` says when its input is a terminal rather than a client.
const TERMINAL_GREETING: &str = concat!(
    "wamcp ",
    env!("CARGO_PKG_VERSION"),
    " is an MCP server: coding agents start it and talk to it over stdin and stdout.\n",
    "It is waiting for an MCP client on this terminal's input (Ctrl+C or Ctrl+D ends it).\n",
    "To connect a client, print its configuration: wamcp config --emit client (or vscode, codex).\n",
);

/// The checked `--http` settings and the token they need (made on first
/// use), or `None` for stdio.
type HttpSetup = (wamcp::http::Listen, Option<String>, Option<PathBuf>);

fn http_setup(args: &ServeArgs, env: EnvLookup) -> Result<Option<HttpSetup>, String> {
    let Some(raw) = args.http.as_deref() else {
        return Ok(None);
    };
    let listen = wamcp::http::listen(raw, args.no_token, args.allow_remote)?;
    if !listen.token_required {
        return Ok(Some((listen, None, None)));
    }
    let path = wamcp::http::token_file(env).ok_or(
        "no per-user config directory is known (HOME/APPDATA unset), so there is nowhere to keep the token; \
         set HOME or APPDATA, or pass --no-token on loopback",
    )?;
    let token = wamcp::http::load_or_create_token(&path)?;
    Ok(Some((listen, Some(token), Some(path))))
}

/// The async runtime. stdio serves one client: one thread runs the
/// protocol and the tools' async parts, and blocking work (file walks,
/// reads) goes to a pool whose threads start when first needed. HTTP may
/// serve several (`multi`).
fn runtime(multi: bool) -> std::io::Result<tokio::runtime::Runtime> {
    if multi {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(BLOCKING_THREADS)
            .build()
    }
}

/// Serves one client over stdio until it goes away.
async fn serve_stdio(ctx: Arc<ServerContext>) -> Result<(), Box<dyn std::error::Error>> {
    let gone = ctx.session.client_gone.clone();
    let service = match WamcpServer::new(ctx)
        .serve(wamcp::stdio::transport(gone))
        .await
    {
        Ok(service) => service,
        // stdin closed before a client said anything (Ctrl-D at a
        // terminal, a client that gave up): a normal end, not a failure.
        Err(
            rmcp::service::ServerInitializeError::ConnectionClosed(_)
            | rmcp::service::ServerInitializeError::ExpectedInitializeRequest(None),
        ) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    service.waiting().await?;
    Ok(())
}

fn serve(args: ServeArgs, env: EnvLookup, cwd: &Path) -> ExitCode {
    let http = match http_setup(&args, env) {
        Ok(http) => http,
        Err(message) => {
            eprintln!("wamcp serve: {message}");
            return ExitCode::FAILURE;
        }
    };
    wamcp::log::init();
    if http.is_none() && std::io::stdin().is_terminal() {
        // Started by hand: without this, a newcomer faces a silent prompt.
        eprintln!("{}", TERMINAL_GREETING.trim_end());
    }
    // Nothing is written at start-up: `wamcp config --init` makes the file.
    let startup = Startup::read(env, cwd);
    let transport = if http.is_some() { "http" } else { "stdio" };
    let ctx = ServerContext::new(startup, env, cwd, transport);
    for message in ctx.startup_messages() {
        tracing::warn!("{message}");
    }
    if let Some(hint) = ctx.places.missing_config_hint() {
        tracing::info!("{hint}");
    }
    // The journal is named before any tool can write; the sweep waits.
    if let Some(data) = &ctx.places.data_dir {
        wamcp_fs::leftovers::keep_journal(data.join("written-dirs.txt"));
    }
    let roots = ctx.places.run_roots();
    let runtime = match runtime(http.is_some()) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("wamcp: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ctx = Arc::new(ctx);
    // Boxed: the serving future is large, and moving it through block_on's
    // frames by value would touch tens of kilobytes of stack on every start.
    let result = runtime.block_on(Box::pin(async move {
        // Off the start-up path: the first answer does not wait for it.
        tokio::task::spawn_blocking(move || sweep_leftovers(&roots));
        if let Some(address) = http {
            let (listen, token, token_path) = address;
            return wamcp::http::serve(ctx, listen, token, token_path)
                .await
                .map_err(Into::into);
        }
        serve_stdio(ctx).await
    }));
    // The client is gone: a worker stuck in a system call (a hung network
    // drive, a program that ignores its kill) must not keep the process alive.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    wamcp::stdio::restore();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("server stopped: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Loads the file for an interactive command, where problems are errors.
fn load_strict(
    env: EnvLookup,
    cwd: &Path,
    create: bool,
) -> Result<(PathBuf, Option<ConfigFile>), String> {
    let path = config::locate(env, cwd).ok_or(
        "no per-user config directory is known (HOME/APPDATA unset); set WAMCP_CONFIG_FILE",
    )?;
    if create && !path.exists() {
        config::write_default(&path, false)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        eprintln!(
            "wamcp config: wrote a documented default config to {}",
            path.display()
        );
    }
    let file = config::load(&path)?;
    let path = dunce::canonicalize(&path).unwrap_or(path);
    Ok((path, file))
}

fn config_command(args: ConfigArgs, env: EnvLookup, cwd: &Path) -> Result<(), String> {
    if args.check {
        return check(env, cwd);
    }
    if args.init {
        let path = match config::env_value(env, settings::CONFIG_FILE) {
            Some(path) => cwd.join(path),
            None => config::user_config_dir(env)
                .ok_or("no per-user config directory is known (HOME/APPDATA unset); set WAMCP_CONFIG_FILE")?
                .join("wamcp")
                .join("config.json"),
        };
        config::write_default(&path, args.force).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => {
                format!(
                    "{} already exists; pass --force to replace it",
                    path.display()
                )
            }
            _ => format!("cannot write {}: {e}", path.display()),
        })?;
        println!("wrote {}", path.display());
        return Ok(());
    }
    if let (Some(format), Some(url)) = (args.emit, &args.http) {
        let path = wamcp::http::token_file(env)
            .ok_or("no per-user config directory is known (HOME/APPDATA unset)")?;
        let token = wamcp::http::load_or_create_token(&path)?;
        print!("{}", emit::render_http(format, url, &token));
        return Ok(());
    }
    if let Some(format) = args.emit {
        let (path, file) = load_strict(env, cwd, true)?;
        let entries = emit::entries(format, Some(&path), file.as_ref(), args.profile.as_deref())?;
        let exe = std::env::current_exe().map_err(|e| format!("cannot locate this binary: {e}"))?;
        let exe = dunce::canonicalize(&exe).unwrap_or(exe);
        print!(
            "{}",
            emit::render(format, &exe.display().to_string(), &entries)
        );
        return Ok(());
    }
    list(env, cwd)
}

/// `config --check`: everything the server would load, loaded now, with
/// every self-checking example run, so a mistake shows before a session
/// finds it (the server itself checks a rule file only when a command first
/// needs it).
fn check(env: EnvLookup, cwd: &Path) -> Result<(), String> {
    let ctx = ServerContext::new(Startup::read(env, cwd), env, cwd, "cli");
    let mut problems: Vec<String> = [
        ctx.resolution.config_error.clone(),
        ctx.groups.error.clone(),
    ]
    .into_iter()
    .flatten()
    .chain(ctx.setting_warnings.iter().cloned())
    .collect();
    let notes: Vec<String> = [
        ctx.groups.posture_warning(),
        ctx.places.workspace_note.clone(),
    ]
    .into_iter()
    .flatten()
    .chain(ctx.resolution.overrides.iter().cloned())
    .collect();
    match (&ctx.places.config_file, ctx.places.missing_config_hint()) {
        (Some(path), _) => println!("config file: {}", path.display()),
        (None, Some(hint)) => println!("config file: none ({hint})"),
        (None, None) if ctx.resolution.config_error.is_some() => {
            println!("config file: not loaded (see the problem below)")
        }
        (None, None) => println!("config file: none"),
    }
    let started = std::time::Instant::now();
    let rules = ctx.checked_command_rules();
    let took = started.elapsed();
    let counts = rules.counts();
    let source = match &ctx.places.command_rules_file {
        Some(path) => format!("built in + {}", path.display()),
        None => "built in".to_string(),
    };
    println!(
        "command rules ({source}): grammars {}, rules {}, examples checked {} in {:.2} ms",
        counts.grammars,
        counts.rules,
        counts.examples,
        took.as_secs_f64() * 1000.0
    );
    problems.extend(rules.errors.iter().cloned());
    let grants = &ctx.places.granted_hosts_file;
    // A missing file is no problem: it grants nothing.
    match wamcp::hostgrants::read(grants) {
        Ok(hosts) => println!("host grants ({}): hosts {}", grants.display(), hosts.len()),
        Err(e) => problems.push(format!("host grants: {e}")),
    }
    problems.extend(confinement_check(&ctx));
    for note in &notes {
        println!("note: {note}");
    }
    for problem in &problems {
        println!("problem: {problem}");
    }
    match problems.len() {
        0 => {
            println!("ok: no problems found");
            Ok(())
        }
        n => Err(format!("{n} problem(s) found")),
    }
}

/// Runs the OS layer's self-test now and prints each part; a problem when
/// `require` cannot be met.
fn confinement_check(ctx: &ServerContext) -> Option<String> {
    // Proven first: the verdict it keeps is the one the status reads.
    let proven = ctx.sandbox.prove_now();
    let status = ctx.sandbox.status();
    let mode = status.mode.as_str();
    let Some(proof) = proven else {
        println!(
            "command confinement (WAMCP_COMMAND_SANDBOX={mode}): none ({})",
            status.detail
        );
        return None;
    };
    println!("command confinement (WAMCP_COMMAND_SANDBOX={mode}), self-test run now:");
    for (name, part) in proof.parts() {
        match part {
            Ok(how) => println!("  {name}: holds ({how})"),
            Err(why) => println!("  {name}: fails ({why})"),
        }
    }
    let verdict = match (&status.mechanism, ctx.sandbox.posture()) {
        (Some(m), wamcp_policy::command::posture::Posture::Confined) => {
            format!("confined by {m}, judged by their effects")
        }
        (Some(m), _) => format!("confined by {m}, judged by the argument grammars"),
        (None, _) => format!(
            "unconfined, judged by the argument grammars ({})",
            status.detail
        ),
    };
    println!("  commands run {verdict}");
    let (entries, ledger) = wamcp_exec::confine::recorded_entries();
    if let Some(ledger) = ledger {
        println!(
            "  access entries wamcp added ({}): {}",
            ledger.display(),
            entries.len()
        );
        entries.iter().for_each(|e| println!("    {e}"));
    }
    let whole = proof.writes.is_ok() && proof.network.is_ok();
    (status.mode == wamcp_policy::command::sandbox::SandboxMode::Require && !whole).then(|| {
        "WAMCP_COMMAND_SANDBOX=require, and the OS layer does not hold here: commands will be refused".to_string()
    })
}

fn list(env: EnvLookup, cwd: &Path) -> Result<(), String> {
    let location = config::locate(env, cwd);
    let loaded = match &location {
        Some(path) => config::load(path),
        None => Ok(None),
    };
    let status = match (&location, &loaded) {
        (None, _) => "none (no per-user config directory is known)".to_string(),
        (Some(path), Ok(None)) => format!(
            "{} (does not exist yet; `wamcp config --init` writes it)",
            path.display()
        ),
        (Some(path), Ok(Some(_))) => path.display().to_string(),
        (Some(path), Err(_)) => format!("{} (ignored, see the error below)", path.display()),
    };
    let file = loaded.as_ref().ok().cloned().flatten();
    let resolution = config::resolve(loaded, env);
    println!("config file: {status}");
    println!(
        "active profile: {}",
        resolution.active_profile.as_deref().unwrap_or("none")
    );
    println!("\nsettings (environment > profile > file > default):");
    for setting in settings::SETTINGS {
        match resolution.get(setting.name) {
            Some(value) => println!(
                "  {} = {value}   [{}]",
                setting.name,
                resolution.source(setting.name).describe()
            ),
            None => println!("  {} = (default: {})", setting.name, setting.default),
        }
    }
    if let Some(file) = &file {
        println!("\nprofiles:");
        if file.profiles.is_empty() {
            println!("  (none)");
        }
        for p in &file.profiles {
            println!(
                "  {:<12} {:<9} tools={:<20} {}",
                p.name,
                if p.enable { "enabled" } else { "disabled" },
                if p.tools.is_empty() {
                    "(default)"
                } else {
                    p.tools.as_str()
                },
                p.description
            );
        }
    }
    for line in &resolution.overrides {
        println!("\noverride: {line}");
    }
    for warning in settings::Settings::read(&resolution).warnings {
        println!("\nwarning: {warning}");
    }
    match resolution.config_error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}
