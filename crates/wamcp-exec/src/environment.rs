//! What of the server's own environment a command inherits.
//!
//! A host starts wamcp with its environment, and often with tokens in it
//! (`GITHUB_TOKEN`, an API key for a model, a database URL with its
//! password). A command's output goes to the model, so a script that prints
//! its environment would hand every one of them over: variables that hold a
//! credential ([`is_secret_variable`]) are withheld from every command,
//! confined or not, unless the user names them in
//! `WAMCP_COMMAND_PASS_VARIABLES`.

use std::sync::RwLock;
use wamcp_policy::secrets::is_secret_variable;

/// The names the user lets through although they look like credentials.
static PASSED: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Lets the variables `names` through to commands from now on.
pub fn pass(names: Vec<String>) {
    *PASSED.write().unwrap_or_else(|e| e.into_inner()) = names;
}

/// The names of the server's variables commands do not get, sorted.
pub fn withheld() -> Vec<String> {
    let passed = PASSED.read().unwrap_or_else(|e| e.into_inner());
    withheld_from(std::env::vars_os(), &passed)
}

fn withheld_from(
    variables: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    passed: &[String],
) -> Vec<String> {
    let mut names: Vec<String> = variables
        .filter_map(|(name, value)| {
            // A name that is not Unicode cannot be removed by name here;
            // it cannot be one a host set for a token either.
            let name = name.into_string().ok()?;
            let value = value.to_string_lossy();
            let let_through = passed.iter().any(|p| same_name(p, &name));
            (is_secret_variable(&name, &value) && !let_through).then_some(name)
        })
        .collect();
    names.sort();
    names
}

/// Variable names compare without case on Windows, as the system does.
fn same_name(a: &str, b: &str) -> bool {
    match cfg!(windows) {
        true => a.eq_ignore_ascii_case(b),
        false => a == b,
    }
}

/// Removes the withheld variables from what `command` inherits.
pub(crate) fn withhold(command: &mut tokio::process::Command) {
    for name in withheld() {
        command.env_remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_user_lets_through_is_not_withheld() {
        let vars = [
            ("GITHUB_TOKEN", "x"),
            ("Deploy_Token", "y"),
            ("PATH", "/bin"),
            ("DATABASE_URL", "postgres://a:b@h/d"),
        ]
        .map(|(k, v)| (k.into(), v.into()));
        let passed = ["DEPLOY_TOKEN".to_string()];
        let withheld = withheld_from(vars.into_iter(), &passed);
        // Windows compares names without case, as its environment does.
        let expected: &[&str] = match cfg!(windows) {
            true => &["DATABASE_URL", "GITHUB_TOKEN"],
            false => &["DATABASE_URL", "Deploy_Token", "GITHUB_TOKEN"],
        };
        assert_eq!(withheld, expected);
    }
}
