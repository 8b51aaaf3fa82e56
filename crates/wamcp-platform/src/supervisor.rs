//! A supervisor between the server and each command it runs (Linux): the
//! one process a command's daemons cannot leave.
//!
//! A command that detaches a process (a double fork and `setsid`, as any
//! daemon does) takes it out of the command's process group and session,
//! so killing the group when the command ended missed it: it lived on with
//! the command's rights after the call had answered, long enough to wait
//! for a listener started later or to hand a socket to a broker outside
//! the tree. The supervisor is the command's parent and a *child
//! subreaper*: whatever a process of the command's tree does to its group
//! or session, when its parent dies it becomes the supervisor's child. So
//! when the command ends, or the server asks the supervisor to stop, the
//! supervisor can find every process that is left, kill it, reap it, and
//! only then exit, with the command's own status.
//!
//! The supervisor is forked in the child between fork and exec
//! ([`enter`]) and never execs: it runs under the rules of that moment
//! (system calls only, no allocation, no lock), and it closes every
//! descriptor it inherited at once, so it holds neither the server's
//! sockets nor the command's output pipes. It is outside the command's
//! Landlock domain (the command confines itself after the fork), so where
//! Landlock scopes signals (ABI 6, Linux 6.12) the command cannot signal
//! it; and the command is killed with it if it dies all the same.

use std::io;

/// Makes the calling process (the child between fork and exec) a
/// supervisor in a session of its own and forks the command from it.
/// Returns only in the command, which goes on to exec; the supervisor
/// waits, cleans up and exits without returning.
///
/// Only for a `pre_exec` hook: it forks the calling process.
pub fn enter() -> io::Result<()> {
    // SAFETY: system calls on local values only, as a `pre_exec` hook
    // requires: no allocation, no lock, nothing shared with the parent.
    unsafe {
        if libc::setsid() < 0 || libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong) != 0
        {
            return Err(io::Error::last_os_error());
        }
        // Blocked before the fork, so the supervisor sees the command's
        // exit and a stop request whenever they come (see `wait_for`).
        let mut watched: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut watched);
        libc::sigaddset(&mut watched, libc::SIGCHLD);
        libc::sigaddset(&mut watched, libc::SIGTERM);
        let mut before: libc::sigset_t = std::mem::zeroed();
        if libc::sigprocmask(libc::SIG_BLOCK, &watched, &mut before) != 0 {
            return Err(io::Error::last_os_error());
        }
        let supervisor = libc::getpid();
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                // Killed with its supervisor (checked after the request:
                // the supervisor may have died before it was made).
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() != supervisor {
                    libc::_exit(127);
                }
                libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
                Ok(())
            }
            command => supervise(command, &watched),
        }
    }
}

/// Asks the supervisor `pid` to end its command and everything the command
/// left. The caller must know `pid` is its unreaped child.
pub fn stop(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid)
        && pid > 1
    {
        // SAFETY: sends a signal; no memory is involved.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
}

/// The supervisor's life: wait for the command or a stop request, kill and
/// reap what is left, exit as the command did.
///
/// SAFETY (for callers): only in the process [`enter`] forked.
unsafe fn supervise(command: libc::pid_t, watched: &libc::sigset_t) -> ! {
    // SAFETY: system calls on this process's own state.
    unsafe {
        close_everything();
        // What `ps` and `top` show for it (the command line stays wamcp's).
        libc::prctl(libc::PR_SET_NAME, c"wamcp-supervise".as_ptr());
        // The server's handlers were inherited with its memory; here they
        // would write to descriptors that are closed or reused.
        for signal in 1..32 {
            libc::signal(signal, libc::SIG_DFL);
        }
        let status = wait_for(command, watched);
        end_the_rest(status.is_none().then_some(command));
        exit_as(status)
    }
}

/// Closes every descriptor: the server's (its listeners, its sessions, the
/// pipe the standard library waits on to learn that exec happened) and the
/// command's output pipes, which must close when the command's processes
/// are gone, not when the supervisor is.
fn close_everything() {
    // SAFETY: closing descriptors this process will never use.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) == 0 {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as libc::c_int
        } else {
            1024
        };
        for fd in 0..top {
            libc::close(fd);
        }
    }
}

/// Waits until the command exits (its wait status) or the server asks to
/// stop (`None`). Both signals stay blocked and are taken synchronously, so
/// one that arrives between two waits is pending, never lost. Processes the
/// supervisor adopted are reaped as they exit.
fn wait_for(command: libc::pid_t, watched: &libc::sigset_t) -> Option<libc::c_int> {
    loop {
        // SAFETY: waits on this process's own signals and children.
        unsafe {
            loop {
                let mut status = 0;
                let pid = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if pid == command {
                    return Some(status);
                }
                if pid <= 0 {
                    break;
                }
            }
            let mut info: libc::siginfo_t = std::mem::zeroed();
            if libc::sigwaitinfo(watched, &mut info) == libc::SIGTERM {
                return None;
            }
        }
    }
}

/// Kills every child (the command, when `command` is still running, and
/// every process adopted) and reaps it; the children of each killed one
/// become the supervisor's in turn, so the loop ends when the whole tree
/// is gone. Where the children cannot be listed, only the command is
/// killed: waiting for the others could take forever.
fn end_the_rest(command: Option<libc::pid_t>) {
    loop {
        if !kill_children() {
            if let Some(command) = command {
                // SAFETY: the command is this process's unreaped child.
                unsafe {
                    libc::kill(command, libc::SIGKILL);
                    libc::waitpid(command, std::ptr::null_mut(), 0);
                }
            }
            return;
        }
        let mut status = 0;
        // SAFETY: reaps one of this process's children.
        let reaped = unsafe { libc::waitpid(-1, &mut status, 0) };
        if reaped < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// Sends `SIGKILL` to each process `/proc/thread-self/children` names;
/// `false` when the file cannot be read. Each is an unreaped child, so its
/// number cannot belong to anyone else.
fn kill_children() -> bool {
    const CHILDREN: &[u8] = b"/proc/thread-self/children\0";
    // SAFETY: a read of a procfs file into a buffer on the stack.
    unsafe {
        let fd = libc::open(CHILDREN.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let mut pids = PidList::default();
        let mut buffer = [0u8; 4096];
        loop {
            let n = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
            if n <= 0 {
                break;
            }
            pids.feed(&buffer[..n as usize], |pid| {
                libc::kill(pid, libc::SIGKILL);
            });
        }
        pids.finish(|pid| {
            libc::kill(pid, libc::SIGKILL);
        });
        libc::close(fd);
        true
    }
}

/// Numbers separated by spaces, parsed as the bytes arrive (a number may
/// straddle two reads), without allocating. A number too large for a pid
/// is skipped whole.
#[derive(Default)]
struct PidList {
    /// Inside a number: its value so far, `None` once it overflowed.
    current: Option<Option<libc::pid_t>>,
}

impl PidList {
    fn feed(&mut self, bytes: &[u8], mut each: impl FnMut(libc::pid_t)) {
        for &byte in bytes {
            if byte.is_ascii_digit() {
                let digit = libc::pid_t::from(byte - b'0');
                let so_far = self.current.unwrap_or(Some(0));
                self.current = Some(so_far.and_then(|n| n.checked_mul(10)?.checked_add(digit)));
            } else {
                self.finish(&mut each);
            }
        }
    }

    fn finish(&mut self, mut each: impl FnMut(libc::pid_t)) {
        if let Some(Some(pid)) = self.current.take() {
            each(pid);
        }
    }
}

/// Exits with the command's status: its exit code, or the signal that
/// killed it (raised again, without a core dump). After a stop request the
/// supervisor kills itself, as the command was.
fn exit_as(status: Option<libc::c_int>) -> ! {
    // SAFETY: ends this process.
    unsafe {
        match status {
            Some(status) if libc::WIFEXITED(status) => libc::_exit(libc::WEXITSTATUS(status)),
            Some(status) if libc::WIFSIGNALED(status) => {
                let signal = libc::WTERMSIG(status);
                let no_core = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &no_core);
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                libc::kill(libc::getpid(), signal);
            }
            _ => {}
        }
        libc::kill(libc::getpid(), libc::SIGKILL);
        libc::_exit(137)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_across_chunks() {
        let mut list = PidList::default();
        let mut seen = Vec::new();
        for chunk in [&b"12 3"[..], b"4 5", b"", b"6 7"] {
            list.feed(chunk, |pid| seen.push(pid));
        }
        list.finish(|pid| seen.push(pid));
        assert_eq!(seen, [12, 34, 56, 7]);
        let mut list = PidList::default();
        list.feed(b"99999999999 8 ", |pid| seen.push(pid));
        assert_eq!(seen[4..], [8], "an overflowing number is dropped");
    }
}
