//! The self-test against layers that hold nothing: the real probe, started
//! through the real launch path, must find every part open and say so,
//! and commands must then run unconfined (`auto`) or not at all
//! (`require`). The layer that holds is the platform's own, proven in
//! `confinement` and through the binary.

use std::io;
use std::path::Path;
use std::sync::Arc;
use wamcp_exec::confine::{Confiner, Launch, Probe, Sandbox};
use wamcp_platform::confine::{Scope, Support};
use wamcp_policy::command::posture::Posture;
use wamcp_policy::command::sandbox::{Caches, SandboxMode};

/// Claims a mechanism and starts every command as it is.
#[derive(Debug)]
struct Hollow;

impl Confiner for Hollow {
    fn support(&self) -> Support {
        Support {
            mechanism: Some("hollow".into()),
            detail: "claims everything, enforces nothing".into(),
            private_view: Ok("claimed".into()),
        }
    }
    fn probe(&self) -> Probe {
        Probe::Program(crate::probe_binary())
    }
    fn launch(&self, _scope: &Scope, _temp: &Path) -> io::Result<Launch> {
        Ok(Launch::default())
    }
}

#[test]
fn a_layer_that_holds_nothing_is_found_out_part_by_part() {
    for mode in [SandboxMode::Auto, SandboxMode::Require] {
        let sandbox = Sandbox::with_confiner(mode, Caches::default(), Arc::new(Hollow));
        let status = sandbox.status();
        let proof = status.proof.clone().expect("the mechanism was tried");
        assert!(proof.ran, "the probe ran: {proof:?}");
        assert_eq!(
            proof.writes,
            Err("the system let the probe write outside the writable roots".to_string())
        );
        assert_eq!(
            proof.trust,
            Err("the system let the probe change a trust folder inside its root".to_string())
        );
        assert_eq!(
            proof.network,
            Err(
                "the probe, started without the network, connected to a loopback listener"
                    .to_string()
            )
        );
        assert_eq!(status.mechanism, None, "{mode:?}");
        assert!(
            status
                .detail
                .starts_with("hollow is not trusted here: writes: the system let the probe"),
            "{}",
            status.detail
        );
        assert_eq!(sandbox.posture(), Posture::Grammars);
        let root = tempfile::tempdir().unwrap();
        let confinement = sandbox.confinement(&[root.path().to_path_buf()], false);
        match mode {
            SandboxMode::Require => {
                let error = confinement.unwrap_err();
                assert!(
                    error.message.contains("write outside the writable roots"),
                    "{}",
                    error.message
                );
            }
            _ => assert!(confinement.unwrap().is_none(), "auto runs unconfined"),
        }
    }
}
