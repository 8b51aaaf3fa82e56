use super::*;
use crate::command::rules::RuleSet;
use crate::command::tokenize::tokenize;

/// The confined verdict's decision, rule and network for `command`.
fn confined(rules: &RuleSet, command: &str) -> (Decision, Option<String>, bool) {
    let argv = tokenize(command).unwrap();
    let v = confined_verdict(rules.judge(&argv), &argv);
    (v.decision, v.rule, v.network)
}

#[test]
fn what_only_a_grammar_objected_to_runs_without_network() {
    let rules = RuleSet::builtin();
    for command in [
        "python -c 'print(1)'",
        "node -e 'console.log(1)'",
        "make -j4",
        "pnpm test",
        "Test.RtfProcessor.exe --all",
        "cmake -DCMAKE_PREFIX_PATH=/opt/qt -S . -B build",
        "python -m pytest -c ci/pytest.ini",
        "python -m mypy src",
        "cargo build --config build.rustc-wrapper='x'",
        "ls -la",
    ] {
        assert_eq!(
            confined(&rules, command),
            (Decision::Allow, Some(CONFINED_RULE.into()), false),
            "{command}"
        );
    }
}

#[test]
fn what_the_grammars_allow_keeps_its_network() {
    let rules = RuleSet::builtin();
    let (decision, rule, network) = confined(&rules, "git fetch origin");
    assert_eq!(
        (decision, rule.as_deref(), network),
        (Decision::Allow, Some("git"), true)
    );
    let (decision, _, network) = confined(&rules, "git status");
    assert_eq!((decision, network), (Decision::Allow, false));
}

#[test]
fn a_command_that_needs_the_network_keeps_every_objection() {
    let rules = RuleSet::builtin();
    let argv = tokenize("git push --upload-pack=x origin").unwrap();
    let before = rules.judge(&argv);
    assert!(
        before.network && before.decision != Decision::Allow,
        "{before:?}"
    );
    assert_eq!(confined_verdict(before.clone(), &argv), before);
}

#[test]
fn programs_that_reach_outside_are_refused_with_why() {
    let rules = RuleSet::builtin();
    for (command, says) in [
        ("sudo make install", "another user"),
        ("systemctl --user start x", "service manager"),
        ("docker run -v /:/h x", "containers"),
        ("ssh host", "other machines"),
        ("curl https://example.com", "fetch_web_page"),
        ("winget install x", "package_install"),
        ("apt-get install x", "package_install"),
    ] {
        let argv = tokenize(command).unwrap();
        let v = confined_verdict(rules.judge(&argv), &argv);
        assert_eq!(v.decision, Decision::Forbidden, "{command}");
        assert!(
            v.justification.contains(says),
            "{command}: {}",
            v.justification
        );
    }
}

#[test]
fn user_rules_cmdlets_and_untrusted_rules_keep_their_word() {
    let mut rules = RuleSet::builtin();
    rules.load(
        r#"{"rules":[{"id":"no-make","programs":["make"],"decision":"forbidden","justification":"not here"}]}"#,
        "user",
    );
    assert_eq!(confined(&rules, "make").0, Decision::Forbidden);
    assert_eq!(
        confined(&rules, "Remove-Item -Recurse x").0,
        Decision::Forbidden
    );
    assert_eq!(confined(&rules, "Set-Content x y").0, Decision::Forbidden);
    let mut blocked = RuleSet::builtin();
    blocked.block("the rules file is writable".into());
    assert_eq!(confined(&blocked, "make").0, Decision::Forbidden);
}

#[test]
fn variables_that_choose_programs_are_refused_in_both_postures() {
    for name in [
        "PATH",
        "Path",
        "LD_PRELOAD",
        "DYLD_INSERT_LIBRARIES",
        "GIT_SSH_COMMAND",
        "GIT_CONFIG_COUNT",
        "GIT_EXEC_PATH",
        "WAMCP_COMMAND_SANDBOX",
        "HTTPS_PROXY",
        "http_proxy",
        "BASH_ENV",
        "HOME",
        "XDG_CONFIG_HOME",
    ] {
        assert!(env_refusal(name, false).is_some(), "{name}");
        assert!(env_refusal(name, true).is_some(), "{name}");
    }
}

#[test]
fn unconfined_or_networked_commands_get_only_plain_settings() {
    for name in [
        "CI",
        "RUST_BACKTRACE",
        "node_env",
        "PYTHONUNBUFFERED",
        "GIT_AUTHOR_NAME",
    ] {
        assert_eq!(env_refusal(name, true), None, "{name}");
    }
    for name in [
        "NODE_OPTIONS",
        "PYTHONSTARTUP",
        "RUSTC_WRAPPER",
        "CC",
        "PIP_INDEX_URL",
        "npm_config_registry",
    ] {
        assert!(env_refusal(name, true).is_some(), "{name}");
        assert_eq!(env_refusal(name, false), None, "{name}");
    }
}

#[test]
fn what_outlives_the_command_keeps_the_grammars_word() {
    let rules = RuleSet::builtin();
    for command in [
        "git config core.fsmonitor 'touch x'",
        "git config alias.zz '!touch x'",
        "git -C . config --add core.sshCommand x",
        "python -c \"open('.git/hooks/pre-commit','w')\"",
        "node -e \"require('fs').writeFileSync('.vscode/tasks.json','')\"",
        "pnpm config set script-shell x",
        "make -C .git/hooks",
        "python -c \"open('.GIT/config','a')\"",
    ] {
        let (decision, _, _) = confined(&rules, command);
        assert_ne!(decision, Decision::Allow, "{command}");
    }
    // git's objections stand: an alias can hide a reset.
    for command in [
        "git -c alias.x='reset --hard' x",
        "git -c alias.x=!sh x",
        "git frobnicate",
    ] {
        assert_ne!(confined(&rules, command).0, Decision::Allow, "{command}");
    }
    // Names that only look alike run.
    for command in [
        "python -c \"print(open('.gitignore').read())\"",
        "make -C gitlab",
        "node -e 'x.git'",
    ] {
        assert_eq!(confined(&rules, command).0, Decision::Allow, "{command}");
    }
}
