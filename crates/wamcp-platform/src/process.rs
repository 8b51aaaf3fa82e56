//! Whether a process is still running, for deciding whose leftovers a
//! temporary file is; a process's ancestors, for tying an approval to the
//! host that asked; and ending a whole process group.

/// Whether process `pid` exists. When unsure (no permission to ask) it
/// answers yes: the caller then leaves the file alone.
pub fn is_running(pid: u32) -> bool {
    imp::is_running(pid)
}

/// The parent of `pid`, its parent, and so on, nearest first, at most
/// `depth` of them (empty where the system cannot say, as on macOS).
pub fn ancestors(pid: u32, depth: usize) -> Vec<u32> {
    let mut chain = Vec::new();
    let mut at = pid;
    while chain.len() < depth {
        match imp::parent_of(at) {
            Some(parent) if parent != 0 && parent != at && !chain.contains(&parent) => {
                chain.push(parent);
                at = parent;
            }
            _ => break,
        }
    }
    chain
}

/// Kills every process in group `group` (Unix). The caller must know the
/// group is its own: its leader not yet reaped, so the number is not reused.
#[cfg(unix)]
pub fn kill_group(group: u32) {
    if let Ok(group) = libc::pid_t::try_from(group)
        && group > 1
    {
        // SAFETY: sends a signal; no memory is involved.
        unsafe { libc::killpg(group, libc::SIGKILL) };
    }
}

#[cfg(unix)]
mod imp {
    /// The fourth field of `/proc/PID/stat`, after the name in parentheses
    /// (which may itself hold spaces and parentheses).
    #[cfg(target_os = "linux")]
    pub fn parent_of(pid: u32) -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after_name = &stat[stat.rfind(')')? + 1..];
        after_name.split_whitespace().nth(1)?.parse().ok()
    }

    #[cfg(not(target_os = "linux"))]
    pub fn parent_of(pid: u32) -> Option<u32> {
        (pid == std::process::id()).then(std::os::unix::process::parent_id)
    }

    pub fn is_running(pid: u32) -> bool {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return true;
        }
        // Signal 0 only checks that the process exists.
        // SAFETY: sends no signal and involves no memory.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
}

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::Foundation::{
        CloseHandle, ERROR_INVALID_PARAMETER, GetLastError, STILL_ACTIVE,
    };
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    /// From a snapshot of every process: the entry for `pid`.
    pub fn parent_of(pid: u32) -> Option<u32> {
        use windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE;
        use windows_sys::Win32::System::Diagnostics::ToolHelp::{
            CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW,
            TH32CS_SNAPPROCESS,
        };
        // SAFETY: the snapshot handle is checked and closed; the entry is a
        // plain struct whose size field is set as the API requires.
        unsafe {
            let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
            if snapshot == INVALID_HANDLE_VALUE {
                return None;
            }
            let mut entry: PROCESSENTRY32W = std::mem::zeroed();
            entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
            let mut found = None;
            let mut more = Process32FirstW(snapshot, &mut entry) != 0;
            while more {
                if entry.th32ProcessID == pid {
                    found = Some(entry.th32ParentProcessID);
                    break;
                }
                more = Process32NextW(snapshot, &mut entry) != 0;
            }
            CloseHandle(snapshot);
            found
        }
    }

    pub fn is_running(pid: u32) -> bool {
        // SAFETY: plain values in; the handle returned is checked for null.
        let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if handle.is_null() {
            // No such process; anything else (access denied) counts as running.
            // SAFETY: reads this thread's last error; no memory is involved.
            return unsafe { GetLastError() } != ERROR_INVALID_PARAMETER;
        }
        let mut code = 0u32;
        // SAFETY: `handle` is open (checked above) and `code` a writable u32.
        let ok = unsafe { GetExitCodeProcess(handle, &mut code) };
        // SAFETY: the handle is ours and closed exactly once, here.
        unsafe { CloseHandle(handle) };
        ok == 0 || code == STILL_ACTIVE as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(any(target_os = "linux", windows))]
    fn a_child_names_this_process_among_its_ancestors() {
        // A child that waits on its own, with no child of its own left
        // behind when it is killed (`cmd /c pause` waits for the stdin we
        // hold; a `ping` under cmd outlived the test under Wine).
        let mut child = std::process::Command::new(if cfg!(windows) { "cmd" } else { "sleep" })
            .args(if cfg!(windows) {
                &["/c", "pause"][..]
            } else {
                &["2"][..]
            })
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let chain = ancestors(child.id(), 4);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(chain.first(), Some(&std::process::id()), "{chain:?}");
        assert!(ancestors(std::process::id(), 0).is_empty());
    }

    #[test]
    fn this_process_runs_and_a_finished_one_does_not() {
        assert!(is_running(std::process::id()));
        let mut child = std::process::Command::new(if cfg!(windows) { "cmd" } else { "true" })
            .args(if cfg!(windows) {
                &["/c", "exit"][..]
            } else {
                &[][..]
            })
            .spawn()
            .unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!is_running(pid));
    }
}
