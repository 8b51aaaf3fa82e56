//! A started command and the end of its whole process tree: when the
//! command exits (what it left running goes with it, or it would hold the
//! output pipes and the answer would wait), at the timeout, and when the
//! run is abandoned midway (a cancelled call or task).
//!
//! The tree matters: a build tool killed alone leaves its compilers
//! running, and a daemon a command detached outlives the call with the
//! command's rights. Windows puts the command in a Job object that is
//! closed on kill. Linux starts it under a supervisor
//! ([`wamcp_platform::supervisor`]) that adopts every process of the tree,
//! even one that left the command's session, and kills them all before it
//! exits. Other Unix systems give the command a session of its own and
//! kill the group.

use crate::confine::PreExec;
use process_wrap::tokio::{ChildWrapper, CommandWrap};
use std::io;
use std::time::Duration;
use tokio::process::{ChildStderr, ChildStdout};

/// How long the Linux supervisor gets to end the tree after a stop
/// request before the server kills its group itself: it is quick unless a
/// command stopped it, which Landlock's signal scoping prevents on Linux
/// 6.12 and newer.
#[cfg(target_os = "linux")]
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A running command.
pub struct Tree {
    child: Box<dyn ChildWrapper>,
    /// The leader's process number while it is unreaped (Unix): dropping
    /// the tree then ends it, and the number cannot be reused under us.
    #[cfg(unix)]
    armed: Option<u32>,
}

impl Tree {
    /// Starts `command`, running `confine` in the child (Unix; `None` on
    /// Windows, where confinement is a wrapper program).
    pub fn spawn(
        mut command: tokio::process::Command,
        confine: Option<PreExec>,
    ) -> io::Result<Tree> {
        add_hooks(&mut command, confine);
        let mut wrapped = CommandWrap::from(command);
        #[cfg(windows)]
        {
            use process_wrap::tokio::{CreationFlags, JobObject, KillOnDrop};
            wrapped
                .wrap(JobObject)
                .wrap(CreationFlags(
                    windows::Win32::System::Threading::CREATE_NO_WINDOW,
                ))
                .wrap(KillOnDrop);
        }
        #[cfg(all(unix, not(target_os = "linux")))]
        {
            // A session of its own: the tree is killed as one group, and the
            // command has no controlling terminal to inject keystrokes into.
            use process_wrap::tokio::{KillOnDrop, ProcessSession};
            wrapped.wrap(ProcessSession).wrap(KillOnDrop);
        }
        let child = wrapped.spawn()?;
        Ok(Tree {
            #[cfg(unix)]
            armed: child.id(),
            child,
        })
    }

    pub fn stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout().take()
    }

    pub fn stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr().take()
    }

    /// Waits for the command for at most `timeout` and ends the whole tree
    /// either way: the command's exit code (`None` when a signal or the
    /// timeout killed it) and whether the timeout struck.
    pub async fn finish(&mut self, timeout: Duration) -> io::Result<(Option<i32>, bool)> {
        let ended = tokio::time::timeout(timeout, self.child.wait()).await;
        let outcome = match ended {
            Ok(status) => {
                self.end_the_rest().await;
                (status?.code(), false)
            }
            Err(_) => {
                self.end_now().await?;
                (None, true)
            }
        };
        #[cfg(unix)]
        {
            self.armed = None;
        }
        Ok(outcome)
    }

    /// After the command exited: what it left running. The Linux supervisor
    /// has done it before it exited.
    async fn end_the_rest(&mut self) {
        if !cfg!(target_os = "linux") {
            let _ = Box::into_pin(self.child.kill()).await;
        }
    }

    /// At the timeout: the command and everything it started. On Linux the
    /// supervisor is asked, and the group killed only if it does not end.
    async fn end_now(&mut self) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(pid) = self.armed {
            wamcp_platform::supervisor::stop(pid);
            if tokio::time::timeout(STOP_GRACE, self.child.wait())
                .await
                .is_ok()
            {
                return Ok(());
            }
            wamcp_platform::process::kill_group(pid);
        }
        Box::into_pin(self.child.kill()).await
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(pid) = self.armed {
            wamcp_platform::supervisor::stop(pid);
        }
        #[cfg(all(unix, not(target_os = "linux")))]
        if let Some(group) = self.armed {
            wamcp_platform::process::kill_group(group);
        }
    }
}

/// Installs the hooks that run between fork and exec: on Linux the
/// supervisor, then confinement in the command alone (the supervisor stays
/// outside the command's Landlock domain, out of its signals' reach).
fn add_hooks(command: &mut tokio::process::Command, confine: Option<PreExec>) {
    #[cfg(target_os = "linux")]
    {
        let mut confine = confine;
        let hook = move || {
            wamcp_platform::supervisor::enter()?;
            confine.as_mut().map_or(Ok(()), |enter| enter())
        };
        // SAFETY: both hooks only make system calls (see
        // `supervisor::enter` and `Launch::pre_exec`).
        unsafe {
            command.pre_exec(hook);
        }
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    if let Some(enter) = confine {
        // SAFETY: the hook only makes system calls (see `Launch::pre_exec`).
        unsafe {
            command.pre_exec(enter);
        }
    }
    #[cfg(windows)]
    let _ = (command, confine);
}
