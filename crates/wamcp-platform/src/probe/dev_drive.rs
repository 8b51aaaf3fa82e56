//! Dev Drives: fixed volumes the system marks as a developer volume
//! (ReFS, with Defender in performance mode), where builds and package
//! caches belong.

use std::os::windows::ffi::OsStrExt;
use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_INVALID_FUNCTION, ERROR_INVALID_PARAMETER, ERROR_NOT_SUPPORTED,
    GetLastError, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_FLAG_BACKUP_SEMANTICS, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    GetDriveTypeW, GetLogicalDrives, OPEN_EXISTING,
};
use windows_sys::Win32::System::IO::DeviceIoControl;
use windows_sys::Win32::System::Ioctl::{
    FILE_FS_PERSISTENT_VOLUME_INFORMATION, FSCTL_QUERY_PERSISTENT_VOLUME_STATE,
    PERSISTENT_VOLUME_STATE_DEV_VOLUME,
};
use windows_sys::Win32::System::WindowsProgramming::DRIVE_FIXED;

/// The drive letters (`D:`) of fixed volumes that are Dev Drives. A
/// volume that cannot be asked (a locked BitLocker drive) does not hide
/// the others: the answer is an error only when no Dev Drive was found and
/// some volume could not be asked, since an absence is then not proven.
pub fn dev_drives() -> Result<Vec<String>, String> {
    // SAFETY: no arguments; returns a bit mask.
    let mask = unsafe { GetLogicalDrives() };
    let mut found = Vec::new();
    let mut failed = Vec::new();
    for (bit, letter) in (b'A'..=b'Z').enumerate() {
        if mask & (1 << bit) == 0 {
            continue;
        }
        let root = format!("{}:\\", letter as char);
        match is_dev_volume(&root) {
            Ok(true) => found.push(format!("{}:", letter as char)),
            Ok(false) => {}
            Err(e) => failed.push(e),
        }
    }
    if found.is_empty() && !failed.is_empty() {
        return Err(failed.join("; "));
    }
    Ok(found)
}

fn is_dev_volume(root: &str) -> Result<bool, String> {
    let wide: Vec<u16> = std::ffi::OsStr::new(root)
        .encode_wide()
        .chain(Some(0))
        .collect();
    // SAFETY: a NUL-terminated path.
    if unsafe { GetDriveTypeW(wide.as_ptr()) } != DRIVE_FIXED {
        return Ok(false);
    }
    // SAFETY: a NUL-terminated path; no access is asked, only a handle to
    // send the query through; the handle is closed below.
    let handle = unsafe {
        CreateFileW(
            wide.as_ptr(),
            0,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            std::ptr::null(),
            OPEN_EXISTING,
            FILE_FLAG_BACKUP_SEMANTICS,
            std::ptr::null_mut(),
        )
    };
    if handle == INVALID_HANDLE_VALUE {
        // SAFETY: reads the calling thread's last error.
        let code = unsafe { GetLastError() };
        return Err(format!("{root}: error {code} opening the volume"));
    }
    let ask = FILE_FS_PERSISTENT_VOLUME_INFORMATION {
        FlagMask: PERSISTENT_VOLUME_STATE_DEV_VOLUME,
        Version: 1,
        ..Default::default()
    };
    let mut answer = FILE_FS_PERSISTENT_VOLUME_INFORMATION::default();
    let size = std::mem::size_of::<FILE_FS_PERSISTENT_VOLUME_INFORMATION>() as u32;
    let mut written = 0u32;
    // SAFETY: both buffers are the structure the control code takes, of
    // `size` bytes; the handle is open.
    let ok = unsafe {
        DeviceIoControl(
            handle,
            FSCTL_QUERY_PERSISTENT_VOLUME_STATE,
            (&raw const ask).cast(),
            size,
            (&raw mut answer).cast(),
            size,
            &mut written,
            std::ptr::null_mut(),
        )
    };
    // SAFETY: reads the last error before CloseHandle can change it.
    let code = unsafe { GetLastError() };
    // SAFETY: the handle was opened above and is closed once.
    unsafe { CloseHandle(handle) };
    if ok != 0 {
        return Ok(answer.VolumeFlags & PERSISTENT_VOLUME_STATE_DEV_VOLUME != 0);
    }
    // A file system that does not know the query (FAT, older NTFS) holds
    // no Dev Drive.
    match code {
        ERROR_INVALID_FUNCTION | ERROR_NOT_SUPPORTED | ERROR_INVALID_PARAMETER => Ok(false),
        _ => Err(format!(
            "{root}: error {code} asking whether it is a Dev Drive"
        )),
    }
}
