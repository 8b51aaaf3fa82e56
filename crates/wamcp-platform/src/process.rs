//! Whether a process is still running, for deciding whose leftovers a
//! temporary file is; and ending a whole process group.

/// Whether process `pid` exists. When unsure (no permission to ask) it
/// answers yes: the caller then leaves the file alone.
pub fn is_running(pid: u32) -> bool {
    imp::is_running(pid)
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
    pub fn is_running(pid: u32) -> bool {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return true;
        }
        // Signal 0 only checks that the process exists.
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

    pub fn is_running(pid: u32) -> bool {
        let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if handle.is_null() {
            // No such process; anything else (access denied) counts as running.
            return unsafe { GetLastError() } != ERROR_INVALID_PARAMETER;
        }
        let mut code = 0u32;
        let ok = unsafe { GetExitCodeProcess(handle, &mut code) };
        unsafe { CloseHandle(handle) };
        ok == 0 || code == STILL_ACTIVE as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
