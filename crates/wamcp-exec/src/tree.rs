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
    /// The supervisor's pipe: dropped with the tree, it ends the command.
    #[cfg(target_os = "linux")]
    leash: Option<wamcp_platform::supervisor::Leash>,
}

impl Tree {
    /// Starts `command`, running `confine` in the child (Unix; `None` on
    /// Windows, where confinement is a wrapper program).
    pub fn spawn(
        mut command: tokio::process::Command,
        confine: Option<PreExec>,
    ) -> io::Result<Tree> {
        #[cfg(target_os = "linux")]
        let mut leash = wamcp_platform::supervisor::Leash::new()?;
        #[cfg(target_os = "linux")]
        add_hooks(&mut command, leash.watched(), confine);
        #[cfg(not(target_os = "linux"))]
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
        #[cfg(target_os = "linux")]
        leash.started();
        Ok(Tree {
            #[cfg(unix)]
            armed: child.id(),
            #[cfg(target_os = "linux")]
            leash: Some(leash),
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
    /// supervisor is let go of; if it does not end in time, the server
    /// ends the tree below it itself, then the supervisor.
    async fn end_now(&mut self) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if let (Some(leash), Some(pid)) = (self.leash.take(), self.armed) {
            leash.pull();
            if tokio::time::timeout(STOP_GRACE, self.child.wait())
                .await
                .is_ok()
            {
                return Ok(());
            }
            // A walk of a large tree takes a while: off the async threads.
            if let Ok(pid) = i32::try_from(pid) {
                let walk = move || wamcp_platform::supervisor::end_tree(pid);
                let _ = tokio::task::spawn_blocking(walk).await;
            }
        }
        Box::into_pin(self.child.kill()).await
    }
}

/// Dropped midway, the tree ends (on Linux its leash closes with it).
#[cfg(all(unix, not(target_os = "linux")))]
impl Drop for Tree {
    fn drop(&mut self) {
        if let Some(group) = self.armed {
            wamcp_platform::process::kill_group(group);
        }
    }
}

/// Installs the hooks that run between fork and exec: the supervisor
/// watching `leash`, then confinement in the command alone (the supervisor
/// stays outside the command's Landlock domain, out of its signals' reach).
#[cfg(target_os = "linux")]
fn add_hooks(
    command: &mut tokio::process::Command,
    leash: std::os::fd::RawFd,
    mut confine: Option<PreExec>,
) {
    let hook = move || {
        wamcp_platform::supervisor::enter(leash)?;
        confine.as_mut().map_or(Ok(()), |enter| enter())
    };
    // SAFETY: both hooks only make system calls (see `supervisor::enter`
    // and `Launch::pre_exec`).
    unsafe {
        command.pre_exec(hook);
    }
}

/// Installs the confinement hook (Unix); Windows confines by a wrapper.
#[cfg(not(target_os = "linux"))]
fn add_hooks(command: &mut tokio::process::Command, confine: Option<PreExec>) {
    #[cfg(unix)]
    if let Some(enter) = confine {
        // SAFETY: the hook only makes system calls (see `Launch::pre_exec`).
        unsafe {
            command.pre_exec(enter);
        }
    }
    #[cfg(windows)]
    let _ = (command, confine);
}
