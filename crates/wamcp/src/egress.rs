//! Which hosts commands with the network may reach, and the proxy that
//! holds them to it: the registries the grammars know, the user's
//! `WAMCP_COMMAND_HOSTS`, and the hosts of each root's git remotes as they
//! were when wamcp first saw the root (a remote the agent adds later is
//! not one of them).

use std::path::Path;
use wamcp_exec::confine::{Egress, EgressRun};
use wamcp_exec::repository::Repository;
use wamcp_policy::egress::{REGISTRY_HOSTS, remote_hosts};
use wamcp_web::egress::{EgressHosts, EgressProxy, ProxyRun};

/// The proxy as the command runner sees it.
#[derive(Debug)]
pub struct CommandEgress(pub EgressProxy);

struct Run(ProxyRun);

impl EgressRun for Run {
    fn refused(&self) -> Vec<String> {
        self.0.refused()
    }
}

impl Egress for CommandEgress {
    fn serve(
        &self,
        listener: std::net::TcpListener,
        closed_ports: Vec<u16>,
        granted: Vec<(String, u16)>,
    ) -> std::io::Result<Box<dyn EgressRun>> {
        Ok(Box::new(Run(self.0.serve(
            listener,
            closed_ports,
            granted,
        )?)))
    }

    fn hosts(&self) -> Vec<String> {
        self.0.hosts().list()
    }

    fn reaches(&self, host: &str, port: u16) -> bool {
        self.0.hosts().reaches(host, port)
    }

    /// This binary's `__egress-connect`. On Windows ssh is left to connect
    /// itself, as the proxy there is only a setting a program may ignore.
    fn ssh_relay(&self) -> Option<String> {
        let exe = std::env::current_exe().ok().filter(|_| cfg!(unix))?;
        let exe = wamcp_policy::command::hardening::quote_for_shell(&exe.to_string_lossy());
        Some(format!("{exe} __egress-connect"))
    }
}

/// The built-in registries and the user's hosts.
pub fn hosts(user: &[String]) -> EgressHosts {
    let hosts = EgressHosts::default();
    hosts.add_public(REGISTRY_HOSTS.iter().map(|h| h.to_string()));
    hosts.add(user.iter().cloned());
    hosts
}

/// The hosts and ports of the remotes of the repository `root` is in (its
/// own `.git`, or the nearest one above it), read from its config file.
pub fn root_remote_hosts(root: &Path) -> Vec<(String, u16)> {
    // A linked work tree keeps its remotes in the main repository's config.
    Repository::enclosing(root)
        .and_then(|repo| std::fs::read_to_string(repo.common_dir.join("config")).ok())
        .map(|text| remote_hosts(&text))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_are_read_from_the_repository_a_root_is_in() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("sub")).unwrap();
        std::fs::write(
            repo.join(".git/config"),
            "[remote \"origin\"]\n\turl = https://git.example.org/r.git\n",
        )
        .unwrap();
        let remote = [("git.example.org".to_string(), 443)];
        assert_eq!(root_remote_hosts(&repo.join("sub")), remote);
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::create_dir_all(repo.join(".git/worktrees/t")).unwrap();
        std::fs::write(repo.join(".git/worktrees/t/commondir"), "../..\n").unwrap();
        std::fs::write(
            tree.join(".git"),
            format!("gitdir: {}\n", repo.join(".git/worktrees/t").display()),
        )
        .unwrap();
        assert_eq!(root_remote_hosts(&tree), remote);
        assert!(root_remote_hosts(dir.path()).is_empty());
    }
}
