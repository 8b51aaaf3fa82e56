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
//! when the command ends, or the server lets go of it, the supervisor ends
//! the whole tree ([`end_tree`]: frozen first, then killed), reaps it, and
//! only then exits, with the command's own status.
//!
//! The supervisor is forked in the child between fork and exec
//! ([`enter`]) and never execs: it runs under the rules of that moment
//! (system calls only, no allocation, no lock), and it closes every
//! descriptor it inherited but one, so it holds neither the server's
//! sockets nor the command's output pipes. The one it keeps is the read
//! end of a pipe whose write end only the server holds ([`Leash`]): when
//! the server drops it (the run was abandoned or timed out) or dies, the
//! supervisor sees the pipe close and ends the tree. It is outside the
//! command's Landlock domain (the command confines itself after the fork),
//! so where Landlock scopes signals (ABI 6, Linux 6.12) the command cannot
//! signal it; and the command is killed with it if it dies all the same.

mod tree;

pub use tree::end_tree;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The server's end of a supervisor's pipe: dropping it tells the
/// supervisor to end its command's tree, and so does the server's death.
pub struct Leash {
    held: OwnedFd,
    /// The supervisor's end, open until the command has been started.
    given: Option<OwnedFd>,
}

impl Leash {
    /// A new pipe for one command; the read end
    /// reaches its supervisor through [`enter`].
    pub fn new() -> io::Result<Leash> {
        let mut ends = [0 as RawFd; 2];
        // SAFETY: fills `ends` with two new descriptors, owned below.
        if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both were just created and belong to nobody else.
        let (given, held) =
            unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
        // The child's standard streams are set up before the hook runs: an
        // end numbered 0 to 2 (a server started with one closed) would be
        // replaced by them.
        let given = if given.as_raw_fd() < 3 {
            // SAFETY: duplicates a descriptor this function owns.
            let moved = unsafe { libc::fcntl(given.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
            if moved < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: just created, owned here alone.
            unsafe { OwnedFd::from_raw_fd(moved) }
        } else {
            given
        };
        Ok(Leash {
            held,
            given: Some(given),
        })
    }

    /// The descriptor [`enter`] watches (close-on-exec: the command never
    /// has it).
    pub fn watched(&self) -> RawFd {
        self.given.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// After the spawn: the server keeps only its own end.
    pub fn started(&mut self) {
        self.given = None;
    }

    /// Asks the supervisor to end the tree now.
    pub fn pull(self) {
        drop(self.held);
    }
}

/// Makes the calling process (the child between fork and exec) a
/// supervisor in a session of its own, watching `leash` (see
/// [`Leash::watched`]), and forks the command from it. Returns only in the
/// command, which goes on to exec; the supervisor waits, ends the tree and
/// exits without returning.
///
/// Only for a `pre_exec` hook: it forks the calling process.
pub fn enter(leash: RawFd) -> io::Result<()> {
    // SAFETY: system calls on local values only, as a `pre_exec` hook
    // requires: no allocation, no lock, nothing shared with the parent.
    unsafe {
        if libc::setsid() < 0 || libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong) != 0
        {
            return Err(io::Error::last_os_error());
        }
        // Blocked before the fork and taken through a signalfd, so the
        // supervisor sees the command's exit whenever it comes.
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
                // A group of its own, so the supervisor can end everything
                // that stayed in it with one signal (see `end_all`).
                libc::setpgid(0, 0);
                libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
                Ok(())
            }
            command => supervise(command, leash, &watched),
        }
    }
}

/// The supervisor's life: wait for the command or the leash, end the
/// tree, exit as the command did.
///
/// SAFETY (for callers): only in the process [`enter`] forked.
unsafe fn supervise(command: libc::pid_t, leash: RawFd, watched: &libc::sigset_t) -> ! {
    // SAFETY: system calls on this process's own state.
    unsafe {
        // The leash becomes descriptor 0; every other one is closed: the
        // server's (its listeners, its sessions, the pipe the standard
        // library waits on to learn that exec happened) and the command's
        // output pipes, which must close when the command's processes are
        // gone, not when the supervisor is.
        let kept = leash >= 0 && libc::dup2(leash, 0) == 0;
        close_from(if kept { 1 } else { 0 });
        // What `ps` and `top` show for it (the command line stays wamcp's).
        libc::prctl(libc::PR_SET_NAME, c"wamcp-supervise".as_ptr());
        // The server's handlers were inherited with its memory; here they
        // would write to descriptors that are closed or reused.
        for signal in 1..32 {
            libc::signal(signal, libc::SIG_DFL);
        }
        let signals = libc::signalfd(-1, watched, libc::SFD_CLOEXEC);
        let exited = libc::syscall(libc::SYS_pidfd_open, command, 0) as RawFd;
        let status = match wait_for(command, if kept { 0 } else { -1 }, signals, exited) {
            Waited::Exited(status) => {
                end_all(command, false);
                Some(status)
            }
            Waited::Held => end_all(command, true),
            Waited::Stop => {
                end_all(command, false);
                None
            }
        };
        exit_as(status)
    }
}

/// Closes every descriptor from `first` on.
fn close_from(first: u32) {
    // SAFETY: closing descriptors this process will never use.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, u32::MAX, 0u32) == 0 {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as libc::c_int
        } else {
            1024
        };
        for fd in first as libc::c_int..top {
            libc::close(fd);
        }
    }
}

/// How the wait for the command ended.
enum Waited {
    /// Reaped, with its wait status.
    Exited(libc::c_int),
    /// It exited, but a process tracing it holds its exit: the status comes
    /// once the tree (the tracer with it) is ended.
    Held,
    /// The leash closed or a `SIGTERM` came: the command is ended, whatever
    /// it was doing.
    Stop,
}

/// Reaps what has exited among the supervisor's children: the command's
/// wait status if it was among them.
fn reap_exited(command: libc::pid_t) -> Option<libc::c_int> {
    loop {
        let mut status = 0;
        // SAFETY: reaps this process's own children without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WALL) };
        if pid <= 0 {
            return None;
        }
        if libc::WIFSTOPPED(status) {
            // A child made the supervisor its tracer (`PTRACE_TRACEME`): it
            // is let go, with the signal it stopped for, as if untraced.
            // SAFETY: detaches a tracee in its ptrace-stop.
            unsafe {
                libc::ptrace(
                    libc::PTRACE_DETACH,
                    pid,
                    std::ptr::null_mut::<libc::c_void>(),
                    libc::c_long::from(libc::WSTOPSIG(status)),
                )
            };
            continue;
        }
        if pid == command {
            return Some(status);
        }
    }
}

/// Waits until the command exits, the leash closes or a `SIGTERM` comes.
/// The command's end is seen through `SIGCHLD` and through its pidfd
/// `exited`, which says it exited even while a tracer keeps that from its
/// parent. Processes the supervisor adopted are reaped as they exit.
/// Without a signalfd it still wakes every 50 ms.
fn wait_for(command: libc::pid_t, leash: RawFd, signals: RawFd, exited: RawFd) -> Waited {
    loop {
        if let Some(status) = reap_exited(command) {
            return Waited::Exited(status);
        }
        // SAFETY: waits on this process's own descriptors.
        unsafe {
            let mut watch = [
                libc::pollfd {
                    fd: leash,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: signals,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: exited,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let timeout = if signals < 0 { 50 } else { -1 };
            if libc::poll(watch.as_mut_ptr(), 3, timeout) < 0 {
                continue;
            }
            if watch[0].revents != 0 {
                return Waited::Stop;
            }
            if watch[1].revents != 0 {
                let mut info: libc::signalfd_siginfo = std::mem::zeroed();
                let size = size_of::<libc::signalfd_siginfo>();
                let n = libc::read(signals, (&raw mut info).cast(), size);
                if n == size as isize && info.ssi_signo == libc::SIGTERM as u32 {
                    return Waited::Stop;
                }
            }
            if watch[2].revents != 0 {
                return match reap_exited(command) {
                    Some(status) => Waited::Exited(status),
                    None => Waited::Held,
                };
            }
        }
    }
}

/// Ends every process left below the supervisor and reaps it; the command
/// too, if it still runs. What stayed in the command's process group ends
/// at once with one signal (busy processes would otherwise share the CPU
/// with the walk, one stop at a time); the walk finds the rest. Reaping
/// never blocks (a traced process's exit can wait on its tracer), and each
/// round ends what the last one left. Answers the command's wait status
/// when `held` (its exit was held by a tracer) and it was reaped here.
fn end_all(command: libc::pid_t, held: bool) -> Option<libc::c_int> {
    let mut reaped = None;
    // SAFETY: this process's own pid, children and time; the group is the
    // command's, in the supervisor's session, which no process outside
    // the tree can join, and its number stays taken while it has members.
    unsafe {
        libc::kill(-command, libc::SIGKILL);
        let me = libc::getpid();
        loop {
            end_tree(me);
            loop {
                let mut status = 0;
                let pid = libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WALL);
                if pid > 0 {
                    if held && pid == command && !libc::WIFSTOPPED(status) {
                        reaped = Some(status);
                    }
                    continue;
                }
                if pid < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
                    return reaped;
                }
                break;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 2_000_000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
    }
}

/// Exits with the command's status: its exit code, or the signal that
/// killed it (raised again, without a core dump). When the tree was ended
/// before the command exited, the supervisor kills itself, as the command
/// was.
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
