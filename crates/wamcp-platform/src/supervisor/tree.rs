//! Ending a whole process tree, found through `/proc`, without allocating
//! (it also runs in the supervisor, a fork that never execs).
//!
//! Killing a tree one level at a time loses to a tree that grows faster
//! than it is killed, and a process that is traced can keep its parent
//! from being reaped. So the tree is first frozen: every process below the
//! root is sent `SIGSTOP`, walking down from the root, again and again
//! until a walk finds none still running (a stopped process forks no
//! more); then every one is sent `SIGKILL`.
//!
//! A number read from `/proc` may belong to someone else by the time it is
//! signalled: a child whose parent ignores `SIGCHLD` is reaped the moment
//! it exits, and a command can make the system hand its number out again
//! at once. So each process is opened as a pidfd first, kept only if it is
//! still the child of the process it was listed under (checked while the
//! pidfd shows it alive, so the check was of that very process), and
//! signalled through the pidfd, which can never reach another process.

use std::ffi::c_int;

/// Freezes and then kills every descendant of `root`.
pub fn end_tree(root: libc::pid_t) {
    let Some(mut stack) = Stack::new() else {
        return;
    };
    for _ in 0..MAX_FREEZE_WALKS {
        if walk(root, &mut stack, Act::Freeze) == 0 {
            break;
        }
    }
    walk(root, &mut stack, Act::Kill);
}

/// How often the tree is walked to stop what still runs before it is
/// killed as it is: each walk stops at least every process it saw running.
const MAX_FREEZE_WALKS: usize = 16;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Act {
    Freeze,
    Kill,
}

/// Visits every descendant of `root`; answers how many were still running
/// (to freeze) or were sent the kill. A process is frozen before its
/// children are read (so it forks no more) and killed after them: killed
/// first, it would hand its children to another parent (init, where the
/// root is no subreaper) and they would stay stopped forever.
fn walk(root: libc::pid_t, stack: &mut Stack, act: Act) -> usize {
    stack.clear();
    push_children(root, stack);
    let mut acted = 0;
    while let Some(entry) = stack.pop() {
        let Some(process) = Process::open(entry.pid, entry.parent) else {
            continue;
        };
        match act {
            Act::Freeze => {
                if process.running {
                    // A tracer can resume a stop it is told of (two
                    // processes tracing each other never stay stopped),
                    // but not a kill.
                    let traced = traced(entry.pid);
                    process.signal(if traced { libc::SIGKILL } else { libc::SIGSTOP });
                    acted += 1;
                }
                expand(&process, stack);
            }
            Act::Kill if entry.expanded => {
                process.signal(libc::SIGKILL);
                acted += 1;
            }
            Act::Kill => {
                stack.push(Entry {
                    expanded: true,
                    ..entry
                });
                expand(&process, stack);
            }
        }
    }
    acted
}

/// Pushes the children of `process`, unless it vanished while they were
/// read (the list may then be another process's).
fn expand(process: &Process, stack: &mut Stack) {
    let mark = stack.len();
    push_children(process.pid, stack);
    if !process.exists() {
        stack.truncate(mark);
    }
}

/// A process to visit, with the parent it was listed under.
#[derive(Clone, Copy)]
struct Entry {
    pid: libc::pid_t,
    parent: libc::pid_t,
    /// Its children are on the stack above it (the kill walk).
    expanded: bool,
}

/// One process of the tree, held by a pidfd where the kernel has them.
struct Process {
    pid: libc::pid_t,
    /// `None` on a kernel without pidfds (before Linux 5.3): the number is
    /// then signalled right after its parent was checked.
    fd: Option<c_int>,
    /// Neither stopped, traced-stopped nor dead when it was opened.
    running: bool,
}

impl Process {
    /// `pid` if it is (still) a child of `parent`.
    fn open(pid: libc::pid_t, parent: libc::pid_t) -> Option<Process> {
        // SAFETY: opens a pidfd, owned by the value returned.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let fd = if fd >= 0 {
            Some(fd as c_int)
        } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
            None
        } else {
            return None;
        };
        let mut process = Process {
            pid,
            fd,
            running: false,
        };
        let (state, listed_under) = stat(pid)?;
        process.running = !matches!(state, b'T' | b't' | b'Z' | b'X');
        (listed_under == parent && process.exists()).then_some(process)
    }

    /// Whether the process still exists (a zombie does).
    fn exists(&self) -> bool {
        self.send(0) == 0
    }

    fn signal(&self, signal: c_int) {
        self.send(signal);
    }

    fn send(&self, signal: c_int) -> libc::c_long {
        // SAFETY: signals the process the pidfd holds, or (without pidfds)
        // the number just checked.
        unsafe {
            match self.fd {
                Some(fd) => libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd,
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                ),
                None => libc::c_long::from(libc::kill(self.pid, signal)),
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(fd) = self.fd {
            // SAFETY: closes the pidfd `open` made.
            unsafe { libc::close(fd) };
        }
    }
}

/// Whether `pid` is traced (`TracerPid` in `/proc/PID/status` is not 0).
fn traced(pid: libc::pid_t) -> bool {
    let mut path = ProcPath::new();
    path.push(b"/proc/").number(pid).push(b"/status");
    let mut status = [0u8; 4096];
    let Some(len) = read_into(&path, &mut status) else {
        return false;
    };
    const FIELD: &[u8] = b"\nTracerPid:";
    status[..len]
        .windows(FIELD.len())
        .position(|w| w == FIELD)
        .and_then(|at| {
            let value = &status[at + FIELD.len()..len];
            let value = value.split(|&b| b == b'\n').next()?;
            let digits: &[u8] = value.trim_ascii();
            parse_number(digits)
        })
        .is_some_and(|tracer| tracer != 0)
}

/// The state letter and parent of `pid`, from `/proc/PID/stat`.
fn stat(pid: libc::pid_t) -> Option<(u8, libc::pid_t)> {
    let mut path = ProcPath::new();
    path.push(b"/proc/").number(pid).push(b"/stat");
    let mut stat = [0u8; 512];
    let len = read_into(&path, &mut stat)?;
    let stat = &stat[..len];
    let close = stat.iter().rposition(|&b| b == b')')?;
    let mut fields = stat[close + 1..]
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty());
    let state = *fields.next()?.first()?;
    let parent = parse_number(fields.next()?)?;
    Some((state, parent))
}

/// Pushes the children of every thread of `pid`, each with `pid` as the
/// parent it was listed under: a child forked by a thread other than the
/// main one is listed under that thread only.
fn push_children(pid: libc::pid_t, stack: &mut Stack) {
    let mut tasks = ProcPath::new();
    tasks.push(b"/proc/").number(pid).push(b"/task");
    // SAFETY: a directory read into a buffer on the stack.
    unsafe {
        let dir = libc::open(
            tasks.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return;
        }
        let mut entries = [0u8; 2048];
        loop {
            let n = libc::syscall(
                libc::SYS_getdents64,
                dir,
                entries.as_mut_ptr(),
                entries.len(),
            );
            if n <= 0 {
                break;
            }
            for tid in thread_ids(&entries[..n as usize]) {
                let mut children = ProcPath::new();
                children
                    .push(b"/proc/")
                    .number(pid)
                    .push(b"/task/")
                    .number(tid)
                    .push(b"/children");
                read_pids(&children, |child| {
                    stack.push(Entry {
                        pid: child,
                        parent: pid,
                        expanded: false,
                    })
                });
            }
        }
        libc::close(dir);
    }
}

/// The numeric names in a buffer of `linux_dirent64` records.
fn thread_ids(mut records: &[u8]) -> impl Iterator<Item = libc::pid_t> + '_ {
    std::iter::from_fn(move || {
        loop {
            // d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
            if records.len() < 19 {
                return None;
            }
            let length = usize::from(u16::from_ne_bytes([records[16], records[17]]));
            if length < 19 || length > records.len() {
                return None;
            }
            let name = &records[19..length];
            records = &records[length..];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if let Some(tid) = parse_number(name) {
                return Some(tid);
            }
        }
    })
}

fn parse_number(digits: &[u8]) -> Option<libc::pid_t> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0 as libc::pid_t, |n, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(libc::pid_t::from(b - b'0'))
    })
}

/// Calls `each` for every number in a `children` file.
pub(super) fn read_pids(path: &ProcPath, mut each: impl FnMut(libc::pid_t)) -> bool {
    // SAFETY: a procfs file read into a buffer on the stack.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let mut list = PidList::default();
        let mut buffer = [0u8; 4096];
        loop {
            let n = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
            if n <= 0 {
                break;
            }
            list.feed(&buffer[..n as usize], &mut each);
        }
        list.finish(&mut each);
        libc::close(fd);
        true
    }
}

/// Reads a small file whole; its length.
fn read_into(path: &ProcPath, buffer: &mut [u8]) -> Option<usize> {
    // SAFETY: a procfs file read into the caller's buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
        libc::close(fd);
        usize::try_from(n).ok()
    }
}

/// A NUL-terminated path built on the stack.
pub(super) struct ProcPath {
    bytes: [u8; 96],
    len: usize,
}

impl ProcPath {
    pub(super) fn new() -> ProcPath {
        ProcPath {
            bytes: [0; 96],
            len: 0,
        }
    }

    pub(super) fn push(&mut self, part: &[u8]) -> &mut ProcPath {
        // One byte is kept for the NUL; a path that would not fit is cut,
        // and then names nothing that exists.
        let room = self.bytes.len() - 1 - self.len;
        let take = part.len().min(room);
        self.bytes[self.len..self.len + take].copy_from_slice(&part[..take]);
        self.len += take;
        self
    }

    pub(super) fn number(&mut self, n: libc::pid_t) -> &mut ProcPath {
        let mut digits = [0u8; 12];
        let mut at = digits.len();
        let mut rest = n.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        self.push(&digits[at..])
    }

    pub(super) fn as_ptr(&self) -> *const libc::c_char {
        self.bytes.as_ptr().cast()
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
    fn feed(&mut self, bytes: &[u8], each: &mut impl FnMut(libc::pid_t)) {
        for &byte in bytes {
            if byte.is_ascii_digit() {
                let digit = libc::pid_t::from(byte - b'0');
                let so_far = self.current.unwrap_or(Some(0));
                self.current = Some(so_far.and_then(|n| n.checked_mul(10)?.checked_add(digit)));
            } else {
                self.finish(each);
            }
        }
    }

    fn finish(&mut self, each: &mut impl FnMut(libc::pid_t)) {
        if let Some(Some(pid)) = self.current.take() {
            each(pid);
        }
    }
}

/// Processes still to visit, each with the parent it was listed under, in
/// memory mapped for the walk (the supervisor may not allocate; a tree is
/// rarely deep, but may be wide).
struct Stack {
    base: *mut Entry,
    len: usize,
}

/// The most processes one walk holds at once; beyond, a walk skips some
/// (they are seen by the next one, once their parents are gone).
const STACK_CAPACITY: usize = 1 << 20;

impl Stack {
    fn new() -> Option<Stack> {
        let bytes = STACK_CAPACITY * size_of::<Entry>();
        // SAFETY: a fresh private anonymous mapping, checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1 as c_int,
                0,
            )
        };
        (base != libc::MAP_FAILED).then(|| Stack {
            base: base.cast(),
            len: 0,
        })
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    fn push(&mut self, entry: Entry) {
        if self.len < STACK_CAPACITY {
            // SAFETY: within the mapping.
            unsafe { self.base.add(self.len).write(entry) };
            self.len += 1;
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        self.len = self.len.checked_sub(1)?;
        // SAFETY: within the mapping, written by `push`.
        Some(unsafe { self.base.add(self.len).read() })
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping `new` made.
        unsafe { libc::munmap(self.base.cast(), STACK_CAPACITY * size_of::<Entry>()) };
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
            list.feed(chunk, &mut |pid| seen.push(pid));
        }
        list.finish(&mut |pid| seen.push(pid));
        assert_eq!(seen, [12, 34, 56, 7]);
        let mut list = PidList::default();
        list.feed(b"99999999999 8 ", &mut |pid| seen.push(pid));
        assert_eq!(seen[4..], [8], "an overflowing number is dropped");
    }

    #[test]
    fn paths_are_built_and_cut_on_the_stack() {
        let mut path = ProcPath::new();
        path.push(b"/proc/").number(4_194_304).push(b"/task");
        assert_eq!(&path.bytes[..path.len + 1], b"/proc/4194304/task\0");
        let mut long = ProcPath::new();
        for _ in 0..20 {
            long.push(b"/abcdefgh");
        }
        assert_eq!(long.len, 95);
        assert_eq!(long.bytes[95], 0);
    }

    #[test]
    fn thread_ids_are_the_numeric_entries() {
        let record = |name: &[u8]| {
            let length = (19 + name.len() + 1).next_multiple_of(8);
            let mut r = vec![0u8; length];
            r[16..18].copy_from_slice(&(length as u16).to_ne_bytes());
            r[19..19 + name.len()].copy_from_slice(name);
            r
        };
        let records: Vec<u8> = [&b"."[..], b"..", b"1234", b"77"]
            .iter()
            .flat_map(|n| record(n))
            .collect();
        assert_eq!(thread_ids(&records).collect::<Vec<_>>(), [1234, 77]);
        assert_eq!(
            thread_ids(&records[..10]).count(),
            0,
            "a cut record ends the list"
        );
    }

    /// A process is taken only as the child of the one it was listed
    /// under: a number handed to another process meanwhile is left alone.
    #[test]
    fn a_process_is_opened_only_under_its_own_parent() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        let me = std::process::id() as libc::pid_t;
        let opened = Process::open(pid, me).expect("our own child");
        assert!(opened.running && opened.exists());
        assert!(
            Process::open(pid, 1).is_none(),
            "listed under another parent"
        );
        drop(opened);
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            Process::open(pid, me).is_none(),
            "reaped: nobody's child now"
        );
    }

    /// A traced process is told apart (its tracer could resume a stop, so
    /// the freeze kills it instead); an untraced one is not.
    #[test]
    fn a_traced_process_is_recognised() {
        use std::io::BufRead;
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import ctypes, time\n\
                 ctypes.CDLL(None).ptrace(0, 0, 0, 0)\n\
                 print('traced', flush=True)\n\
                 time.sleep(30)\n",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "traced\n");
        let pid = child.id() as libc::pid_t;
        assert!(traced(pid));
        assert!(!traced(std::process::id() as libc::pid_t));
        let _ = child.kill();
        let _ = child.wait();
    }

    /// A tree that keeps forking is frozen and killed: none of it is left,
    /// orphans included. Ended as the supervisor ends it: from a subreaper
    /// (a forked child of the test, so no other test's process is in its
    /// tree), which walks and reaps until nothing is left. A walk alone,
    /// from a process that is no subreaper, can lose a child forked while
    /// its parent was being killed to init on a loaded machine.
    #[test]
    fn a_growing_tree_is_ended_whole() {
        let marker = format!("1000.{}", std::process::id());
        // The forking loop leaves the command's process group (which the
        // supervisor ends with one signal), so only the walk can end it. It
        // stops by itself after 3000 children, so a broken walk fails the
        // test instead of filling the machine.
        let script = format!(
            "setsid sh -c 'i=0; while [ $i -lt 3000 ]; do sleep {marker} & i=$((i+1)); done; wait' & \
             sleep {marker} & wait"
        );
        let (sh, flag) = (c"/bin/sh", c"-c");
        let script = std::ffi::CString::new(script).unwrap();
        let argv = [
            sh.as_ptr(),
            flag.as_ptr(),
            script.as_ptr(),
            std::ptr::null(),
        ];
        // SAFETY: the forked child calls only system calls and the
        // supervisor's ending, which allocates nothing (it is written for
        // a fork that never execs); the strings it passes to execv were
        // made before the fork and outlive it.
        let ender = unsafe {
            match libc::fork() {
                0 => {
                    // A walk that never ends the tree fails, not hangs.
                    libc::alarm(30);
                    libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
                    let tree = libc::fork();
                    if tree == 0 {
                        libc::setpgid(0, 0);
                        libc::execv(sh.as_ptr(), argv.as_ptr());
                        libc::_exit(127);
                    }
                    let pause = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 300_000_000,
                    };
                    libc::nanosleep(&pause, std::ptr::null_mut());
                    super::super::end_all(tree, false);
                    libc::_exit(0);
                }
                pid => pid,
            }
        };
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(ender, &mut status, 0) };
        let alive: Vec<u32> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|pid: &u32| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
                    && stat(*pid as libc::pid_t).is_some_and(|(state, _)| state != b'Z')
            })
            .collect();
        for pid in &alive {
            // SAFETY: the test's own leftovers, so the machine is not left
            // with stopped processes when the assertion fails.
            unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
        }
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the ending did not finish: {status:#x}"
        );
        assert!(alive.is_empty(), "left alive or stopped: {alive:?}");
    }
}
