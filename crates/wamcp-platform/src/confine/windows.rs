//! Windows: a write-restricted token whose restricting SIDs are wamcp's
//! capability SID and the logon SID, with access entries for the
//! capability on the writable set (see the policy crate's `token_plan`).
//!
//! The server cannot hand a token to the standard library's process
//! spawning, so it starts `wamcp __confined-run`, which makes the token
//! and starts the program under it with the same standard handles; the Job
//! object the server put the helper in holds the program too.

use super::Support;
use std::io;
use std::path::Path;
use std::ptr::{null, null_mut};
use wamcp_policy::command::command_line::{
    batch_command_line, is_batch_file, windows_command_line,
};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertStringSidToSidW, DENY_ACCESS, EXPLICIT_ACCESS_W, GRANT_ACCESS, GetNamedSecurityInfoW,
    SE_FILE_OBJECT, SetEntriesInAclW, SetNamedSecurityInfoW, TRUSTEE_IS_SID, TRUSTEE_IS_UNKNOWN,
    TRUSTEE_W,
};
use windows_sys::Win32::Security::{
    ACL, CreateRestrictedToken, DACL_SECURITY_INFORMATION, DISABLE_MAX_PRIVILEGE,
    GetTokenInformation, LUA_TOKEN, PSECURITY_DESCRIPTOR, PSID, SID_AND_ATTRIBUTES,
    SUB_CONTAINERS_AND_OBJECTS_INHERIT, TOKEN_ADJUST_DEFAULT, TOKEN_ASSIGN_PRIMARY,
    TOKEN_DUPLICATE, TOKEN_GROUPS, TOKEN_QUERY, TokenGroups, WRITE_RESTRICTED,
};
use windows_sys::Win32::Storage::FileSystem::{
    DELETE, FILE_GENERIC_EXECUTE, FILE_GENERIC_READ, FILE_GENERIC_WRITE,
};
use windows_sys::Win32::System::Console::{
    GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
};
use windows_sys::Win32::System::SystemInformation::GetSystemDirectoryW;
use windows_sys::Win32::System::SystemServices::SE_GROUP_LOGON_ID;
use windows_sys::Win32::System::Threading::{
    CREATE_NO_WINDOW, CreateProcessAsUserW, GetCurrentProcess, GetExitCodeProcess, INFINITE,
    OpenProcessToken, PROCESS_INFORMATION, STARTF_USESTDHANDLES, STARTUPINFOW, WaitForSingleObject,
};

/// The restricted token, always available on Windows; whether it holds
/// is for the self-test to prove (Wine, for one, enforces no access list).
pub fn support() -> Support {
    Support {
        mechanism: Some("restricted-token".into()),
        detail: "a write-restricted token with a capability SID allowed on the writable set and denied on \
                 the trust folders inside it"
            .into(),
        private_view: Err(
            "Windows commands see secret stores (no per-command view yet); trust folders are kept by \
             deny entries where the self-test proves them"
                .into(),
        ),
    }
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

/// A SID from its string form, freed on drop.
struct Sid(PSID);

impl Sid {
    fn parse(text: &str) -> io::Result<Sid> {
        let mut sid: PSID = null_mut();
        // SAFETY: the NUL-terminated string outlives the call and `sid` is a
        // writable pointer; the SID it receives is freed once, by `Drop`.
        if unsafe { ConvertStringSidToSidW(wide(text).as_ptr(), &mut sid) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Sid(sid))
    }
}

impl Drop for Sid {
    fn drop(&mut self) {
        // SAFETY: a `Sid` is made only from ConvertStringSidToSidW's
        // LocalAlloc'd SID, and freed once, here.
        unsafe { LocalFree(self.0) };
    }
}

struct Handle(HANDLE);

impl Drop for Handle {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: a `Handle` owns a handle the system gave this process
            // and closes it once, here.
            unsafe { CloseHandle(self.0) };
        }
    }
}

/// What an access entry does for the capability SID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Allow read, write, create and delete, inherited by everything below.
    Modify,
    /// Deny write, create and delete below; a deny wins over an allow.
    DenyWrite,
}

/// Adds an inheritable entry for `capability` to `path`'s access list
/// (merged with what is there: granting twice changes nothing).
pub fn grant(path: &Path, capability: &str, grant: Grant) -> io::Result<()> {
    let sid = Sid::parse(capability)?;
    let name = wide(&path.display().to_string());
    let mut old: *mut ACL = null_mut();
    let mut descriptor: PSECURITY_DESCRIPTOR = null_mut();
    // SAFETY: `name` is NUL-terminated and outlives the call; the out
    // pointers are live locals and the unwanted ones null, as documented.
    let status = unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            null_mut(),
            null_mut(),
            &mut old,
            null_mut(),
            &mut descriptor,
        )
    };
    if status != 0 {
        return Err(io::Error::from_raw_os_error(status as i32));
    }
    let write = FILE_GENERIC_WRITE | DELETE;
    let entry = EXPLICIT_ACCESS_W {
        grfAccessPermissions: match grant {
            Grant::Modify => FILE_GENERIC_READ | FILE_GENERIC_EXECUTE | write,
            Grant::DenyWrite => write,
        },
        grfAccessMode: match grant {
            Grant::Modify => GRANT_ACCESS,
            Grant::DenyWrite => DENY_ACCESS,
        },
        grfInheritance: SUB_CONTAINERS_AND_OBJECTS_INHERIT,
        Trustee: TRUSTEE_W {
            TrusteeForm: TRUSTEE_IS_SID,
            TrusteeType: TRUSTEE_IS_UNKNOWN,
            ptstrName: sid.0 as *mut u16,
            ..TRUSTEE_W::default()
        },
    };
    let mut new: *mut ACL = null_mut();
    // SAFETY: one entry, `entry`, whose trustee SID `sid` outlives the call;
    // `old` points into `descriptor`, still allocated.
    let status = unsafe { SetEntriesInAclW(1, &entry, old, &mut new) };
    let result = if status != 0 {
        Err(io::Error::from_raw_os_error(status as i32))
    } else {
        // SAFETY: `name` is NUL-terminated and `new` the ACL just built; the
        // owner and group are not set, so their pointers are null.
        let status = unsafe {
            SetNamedSecurityInfoW(
                name.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                null_mut(),
                null_mut(),
                new,
                null(),
            )
        };
        if status != 0 {
            Err(io::Error::from_raw_os_error(status as i32))
        } else {
            Ok(())
        }
    };
    // SAFETY: both were allocated by the calls above for this function to
    // free (`new` may be null, which LocalFree accepts), and are freed once.
    unsafe {
        LocalFree(new as _);
        LocalFree(descriptor);
    }
    result
}

/// The logon session's SID of `token`, copied out of the token information.
fn logon_sid(token: HANDLE) -> io::Result<Option<Vec<u8>>> {
    let mut needed = 0u32;
    // SAFETY: a null buffer of length zero only asks for the size needed,
    // written to the live `needed`; `token` is open for the call.
    unsafe { GetTokenInformation(token, TokenGroups, null_mut(), 0, &mut needed) };
    if needed == 0 {
        return Err(io::Error::last_os_error());
    }
    // u64 storage keeps the structure aligned.
    let mut buffer = vec![0u64; (needed as usize).div_ceil(8)];
    // SAFETY: `buffer` holds at least `needed` bytes, the length passed.
    if unsafe {
        GetTokenInformation(
            token,
            TokenGroups,
            buffer.as_mut_ptr().cast(),
            needed,
            &mut needed,
        )
    } == 0
    {
        return Err(io::Error::last_os_error());
    }
    let groups = buffer.as_ptr() as *const TOKEN_GROUPS;
    // SAFETY: the call filled `buffer` (8-byte aligned, as u64s) with a
    // TOKEN_GROUPS whose `GroupCount` entries all lie inside it.
    let count = unsafe { (*groups).GroupCount } as usize;
    // SAFETY: as above; only the field's address is taken.
    let first = unsafe { std::ptr::addr_of!((*groups).Groups) } as *const SID_AND_ATTRIBUTES;
    for i in 0..count {
        // SAFETY: `i < count`, so the entry is inside the filled buffer.
        let group = unsafe { &*first.add(i) };
        if group.Attributes & SE_GROUP_LOGON_ID as u32 == SE_GROUP_LOGON_ID as u32 {
            // SAFETY: the token's groups hold valid SIDs, here inside `buffer`.
            let length = unsafe { windows_sys::Win32::Security::GetLengthSid(group.Sid) } as usize;
            // SAFETY: the SID is `length` bytes inside `buffer`, which lives
            // until the bytes are copied out just below.
            let bytes = unsafe { std::slice::from_raw_parts(group.Sid as *const u8, length) };
            return Ok(Some(bytes.to_vec()));
        }
    }
    Ok(None)
}

/// `cmd.exe` in the system directory, never one found on a search path.
fn system_cmd() -> io::Result<String> {
    let mut buffer = [0u16; 260];
    // SAFETY: the call writes at most `buffer.len()` u16s into `buffer`.
    let length = unsafe { GetSystemDirectoryW(buffer.as_mut_ptr(), buffer.len() as u32) } as usize;
    if length == 0 || length >= buffer.len() {
        return Err(io::Error::last_os_error());
    }
    Ok(format!(
        "{}\\cmd.exe",
        String::from_utf16_lossy(&buffer[..length])
    ))
}

/// Runs `program` (a resolved path) with `args` under a write-restricted
/// token whose restricting SIDs are `capability` and the logon SID, with
/// this process's standard handles, environment and directory; returns its
/// exit code.
pub fn run_restricted(capability: &str, program: &str, args: &[String]) -> io::Result<u32> {
    let own = own_token()?;
    let capability = Sid::parse(capability)?;
    let mut logon = logon_sid(own.0)?;
    let restricted = restricted_token(&own, &capability, logon.as_deref_mut())?;
    let (application, mut line) = command_line(program, args)?;
    let (process, _thread) = start_as(&restricted, &application, &mut line)?;
    exit_code(&process)
}

/// This process's own token, opened with the access needed to derive the
/// restricted token from it.
fn own_token() -> io::Result<Handle> {
    let mut own: HANDLE = null_mut();
    let access = TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY | TOKEN_ADJUST_DEFAULT;
    // SAFETY: the current-process pseudo-handle needs no closing and `own`
    // is a writable handle, owned by `Handle` just below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), access, &mut own) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Handle(own))
}

/// A write-restricted copy of `own` whose restricting SIDs are
/// `capability` and, when the token has one, the `logon` SID.
fn restricted_token(
    own: &Handle,
    capability: &Sid,
    logon: Option<&mut [u8]>,
) -> io::Result<Handle> {
    let mut restricting = vec![SID_AND_ATTRIBUTES {
        Sid: capability.0,
        Attributes: 0,
    }];
    if let Some(logon) = logon {
        restricting.push(SID_AND_ATTRIBUTES {
            Sid: logon.as_mut_ptr().cast(),
            Attributes: 0,
        });
    }
    let mut restricted: HANDLE = null_mut();
    // SAFETY: `own` is an open token; `restricting` (and the SIDs it points
    // to, `capability` and `logon`) outlive the call, its length is passed
    // with it, and the empty lists are null with a zero count.
    let made = unsafe {
        CreateRestrictedToken(
            own.0,
            DISABLE_MAX_PRIVILEGE | LUA_TOKEN | WRITE_RESTRICTED,
            0,
            null(),
            0,
            null(),
            restricting.len() as u32,
            restricting.as_ptr(),
            &mut restricted,
        )
    };
    if made == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Handle(restricted))
}

/// The application to start and its command line, both NUL-terminated
/// UTF-16 (the line writable, as `CreateProcessAsUserW` requires).
fn command_line(program: &str, args: &[String]) -> io::Result<(Vec<u16>, Vec<u16>)> {
    // A batch file is started the way the standard library starts one:
    // the system's cmd.exe, with arguments it cannot read as commands.
    let (application, line) = if is_batch_file(program) {
        let line = batch_command_line(program, args)
            .map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
        (system_cmd()?, line)
    } else {
        (program.to_string(), windows_command_line(program, args))
    };
    Ok((wide(&application), wide(&line)))
}

/// Starts `application` with `line` under `token`, with this process's
/// standard handles and no window; returns the process and thread handles.
fn start_as(token: &Handle, application: &[u16], line: &mut [u16]) -> io::Result<(Handle, Handle)> {
    // SAFETY: GetStdHandle only reads this process's standard handles; they
    // are lent to the child, never closed here.
    let (input, output, error) = unsafe {
        (
            GetStdHandle(STD_INPUT_HANDLE),
            GetStdHandle(STD_OUTPUT_HANDLE),
            GetStdHandle(STD_ERROR_HANDLE),
        )
    };
    let startup = STARTUPINFOW {
        cb: std::mem::size_of::<STARTUPINFOW>() as u32,
        dwFlags: STARTF_USESTDHANDLES,
        hStdInput: input,
        hStdOutput: output,
        hStdError: error,
        ..STARTUPINFOW::default()
    };
    let mut info = PROCESS_INFORMATION::default();
    // Handles are inherited so the program writes to the server's pipes.
    // SAFETY: `token` is an open primary token; `application` is
    // NUL-terminated and `line` a writable NUL-terminated buffer, as the
    // call requires; `startup` and `info` are live, and the two handles it
    // returns are owned by `Handle`s right after.
    let started = unsafe {
        CreateProcessAsUserW(
            token.0,
            application.as_ptr(),
            line.as_mut_ptr(),
            null(),
            null(),
            1,
            CREATE_NO_WINDOW,
            null(),
            null(),
            &startup,
            &mut info,
        )
    };
    if started == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((Handle(info.hProcess), Handle(info.hThread)))
}

/// Waits for `process` to end and returns its exit code.
fn exit_code(process: &Handle) -> io::Result<u32> {
    // SAFETY: `process` is an open handle owned by the caller until it ends.
    unsafe { WaitForSingleObject(process.0, INFINITE) };
    let mut code = 0u32;
    // SAFETY: `process` is still open and `code` a writable u32.
    if unsafe { GetExitCodeProcess(process.0, &mut code) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(code)
}
