//! Windows: `NtCreateFile` relative to an open folder handle, with
//! `FILE_OPEN_REPARSE_POINT` so a junction or link opens as itself; the
//! kind comes from the attributes of the opened handle; a folder is listed
//! through its handle (`GetFileInformationByHandleEx`).

use super::Entry;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Component, Path, PathBuf};
use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem::{
    FILE_OPEN, FILE_OPEN_REPARSE_POINT, FILE_SYNCHRONOUS_IO_NONALERT, NtCreateFile,
};
use windows_sys::Win32::Foundation::{
    ERROR_NO_MORE_FILES, HANDLE, RtlNtStatusToDosError, UNICODE_STRING,
};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_FULL_DIR_INFO, FILE_GENERIC_READ, FILE_SHARE_DELETE,
    FILE_SHARE_READ, FILE_SHARE_WRITE, FileFullDirectoryInfo, FileFullDirectoryRestartInfo,
    GetFileInformationByHandle, GetFileInformationByHandleEx,
};
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

/// Names compare the way NTFS compares them.
const OBJ_CASE_INSENSITIVE: u32 = 0x40;
/// Do not wait for another program's opportunistic lock to break: a lock
/// its holder never releases would hang the open, and the server with it.
const FILE_COMPLETE_IF_OPLOCKED: u32 = 0x0100;
/// The success status that says an oplock break is pending.
const STATUS_OPLOCK_BREAK_IN_PROGRESS: i32 = 0x0108;

#[derive(Debug)]
pub(super) struct Dir(File);

impl Dir {
    /// The volume's root folder (`C:\`, `\\server\share\`), opened by path:
    /// the walk down from it is by handle.
    pub(super) fn root_of(path: &Path) -> io::Result<Dir> {
        let mut root = PathBuf::new();
        for component in path.components() {
            match component {
                Component::Prefix(_) | Component::RootDir => root.push(component),
                _ => break,
            }
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
            .open(&root)?;
        if !file.metadata()?.is_dir() {
            return Err(io::Error::other("the volume root is not a folder"));
        }
        Ok(Dir(file))
    }

    pub(super) fn entry(&self, name: &OsStr) -> io::Result<Entry> {
        let file = open_relative(&self.0, name)?;
        let meta = file.metadata()?;
        // Junctions and every other reparse point, not only symlinks.
        if meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return Ok(Entry::Link);
        }
        Ok(if meta.is_dir() {
            Entry::Dir(super::HeldDir(Dir(file)))
        } else if meta.is_file() {
            let links = crate::probe::hard_links(&file)?;
            Entry::File { file, links }
        } else {
            Entry::Other
        })
    }

    pub(super) fn id(&self) -> io::Result<(u64, u64)> {
        file_id(&self.0)
    }

    pub(super) fn names(&self, limit: usize) -> io::Result<Vec<OsString>> {
        // u64 words: the records are 8-byte aligned inside the buffer.
        let mut buffer = vec![0u64; 8192];
        let mut names = Vec::new();
        let mut class = FileFullDirectoryRestartInfo;
        loop {
            // SAFETY: the buffer is writable for its whole length.
            let ok = unsafe {
                GetFileInformationByHandleEx(
                    self.0.as_raw_handle() as HANDLE,
                    class,
                    buffer.as_mut_ptr().cast(),
                    (buffer.len() * 8) as u32,
                )
            };
            if ok == 0 {
                let error = io::Error::last_os_error();
                if error.raw_os_error() == Some(ERROR_NO_MORE_FILES as i32) {
                    return Ok(names);
                }
                return Err(error);
            }
            class = FileFullDirectoryInfo;
            let bytes: &[u8] = bytemuck_bytes(&buffer);
            let mut at = 0usize;
            loop {
                let record = read_record(bytes, at)?;
                let name = OsString::from_wide(&record.name);
                if name != "." && name != ".." {
                    if names.len() == limit {
                        return Err(super::too_many(limit));
                    }
                    names.push(name);
                }
                if record.next == 0 {
                    break;
                }
                at += record.next;
            }
        }
    }
}

pub(super) fn file_id(file: &File) -> io::Result<(u64, u64)> {
    // SAFETY: the handle is the open file's; the struct is an out value.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: `file` keeps the handle open for the call, and `info` is a
    // writable struct of the type the call fills.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle() as HANDLE, &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
    Ok((u64::from(info.dwVolumeSerialNumber), index))
}

/// One `FILE_FULL_DIR_INFO` record, read with bounds checks.
struct Record {
    next: usize,
    name: Vec<u16>,
}

fn read_record(bytes: &[u8], at: usize) -> io::Result<Record> {
    let field = |offset: usize| -> io::Result<u32> {
        let start = at + offset;
        bytes
            .get(start..start + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| io::Error::other("a folder listing record ran past its buffer"))
    };
    let name_start = std::mem::offset_of!(FILE_FULL_DIR_INFO, FileName);
    let next = field(std::mem::offset_of!(FILE_FULL_DIR_INFO, NextEntryOffset))? as usize;
    let length = field(std::mem::offset_of!(FILE_FULL_DIR_INFO, FileNameLength))? as usize;
    let raw = bytes
        .get(at + name_start..at + name_start + length)
        .ok_or_else(|| io::Error::other("a folder listing name ran past its buffer"))?;
    let name = raw
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    Ok(Record { next, name })
}

fn bytemuck_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding; the byte view covers the same memory.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), words.len() * 8) }
}

/// `NtCreateFile(name)` inside `dir`: only that one name is looked up, in
/// that folder, so no other component can be re-pointed.
fn open_relative(dir: &File, name: &OsStr) -> io::Result<File> {
    let wide: Vec<u16> = name.encode_wide().collect();
    let bytes = u16::try_from(wide.len() * 2)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name too long"))?;
    let object_name = UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: wide.as_ptr() as *mut u16,
    };
    let attributes = OBJECT_ATTRIBUTES {
        Length: std::mem::size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: dir.as_raw_handle() as HANDLE,
        ObjectName: &object_name,
        Attributes: OBJ_CASE_INSENSITIVE,
        SecurityDescriptor: std::ptr::null(),
        SecurityQualityOfService: std::ptr::null(),
    };
    // SAFETY: zeroed is a valid out value for the status block.
    let mut status_block: IO_STATUS_BLOCK = unsafe { std::mem::zeroed() };
    let mut handle: HANDLE = std::ptr::null_mut();
    // SAFETY: every pointer refers to a live local for the duration of the call.
    let status = unsafe {
        NtCreateFile(
            &mut handle,
            FILE_GENERIC_READ,
            &attributes,
            &mut status_block,
            std::ptr::null(),
            0,
            // No delete sharing: while this handle is open no name of the
            // object can be removed or renamed, so a link count read on it
            // stays true and a folder stays where it was found.
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            FILE_OPEN,
            FILE_OPEN_REPARSE_POINT | FILE_SYNCHRONOUS_IO_NONALERT | FILE_COMPLETE_IF_OPLOCKED,
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        // SAFETY: converts a status code; no pointers involved.
        let code = unsafe { RtlNtStatusToDosError(status) };
        return Err(io::Error::from_raw_os_error(code as i32));
    }
    // SAFETY: the call succeeded, so `handle` is open and owned here.
    let file = File::from(unsafe { OwnedHandle::from_raw_handle(handle as _) });
    if status == STATUS_OPLOCK_BREAK_IN_PROGRESS {
        return Err(io::Error::other(
            "another program holds an opportunistic lock on it; refused rather than waited for",
        ));
    }
    Ok(file)
}
