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
    ACE_HEADER, ACL, AddAce, CreateRestrictedToken, DACL_SECURITY_INFORMATION,
    DISABLE_MAX_PRIVILEGE, EqualSid, GetAce, GetTokenInformation, InitializeAcl, LUA_TOKEN,
    PSECURITY_DESCRIPTOR, PSID, SID_AND_ATTRIBUTES, SUB_CONTAINERS_AND_OBJECTS_INHERIT,
    TOKEN_ADJUST_DEFAULT, TOKEN_ASSIGN_PRIMARY, TOKEN_DUPLICATE, TOKEN_GROUPS, TOKEN_QUERY,
    TokenGroups, WRITE_RESTRICTED,
};
use windows_sys::Win32::Storage::FileSystem::{
    DELETE, FILE_GENERIC_EXECUTE, FILE_GENERIC_READ, FILE_GENERIC_WRITE,
};
use windows_sys::Win32::System::Console::{
    GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
};
use windows_sys::Win32::System::SystemInformation::GetSystemDirectoryW;
use windows_sys::Win32::System::SystemServices::{
    ACCESS_ALLOWED_ACE_TYPE, ACCESS_DENIED_ACE_TYPE, SE_GROUP_LOGON_ID,
};
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

/// The access list of a file or directory, with the security descriptor
/// that holds it, freed on drop.
struct Dacl {
    descriptor: PSECURITY_DESCRIPTOR,
    acl: *mut ACL,
}

impl Dacl {
    /// The access list of `name` (NUL-terminated UTF-16).
    fn read(name: &[u16]) -> io::Result<Dacl> {
        let mut acl: *mut ACL = null_mut();
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
                &mut acl,
                null_mut(),
                &mut descriptor,
            )
        };
        if status != 0 {
            return Err(io::Error::from_raw_os_error(status as i32));
        }
        Ok(Dacl { descriptor, acl })
    }
}

/// Each entry's header in `acl`, in order (none for a null list). The
/// pointers live as long as the list.
fn entries(acl: *const ACL) -> Vec<*const ACE_HEADER> {
    if acl.is_null() {
        return Vec::new();
    }
    // SAFETY: a non-null `acl` is a valid list the caller holds.
    let count = unsafe { (*acl).AceCount } as u32;
    (0..count)
        .filter_map(|index| {
            let mut entry: *mut std::ffi::c_void = null_mut();
            // SAFETY: `index < AceCount`; GetAce writes a pointer into the
            // list, which the caller holds.
            (unsafe { GetAce(acl, index, &mut entry) } != 0).then_some(entry as *const ACE_HEADER)
        })
        .collect()
}

/// The capability's entries in `acl`.
fn grants_in(acl: *const ACL, sid: &Sid) -> Vec<Grant> {
    entries(acl)
        .into_iter()
        .filter_map(|e| grant_of(e, sid))
        .collect()
}

/// An access list in memory of its own, 8-byte aligned.
struct AclBuffer(Vec<u64>);

impl AclBuffer {
    /// An empty list of `length` bytes at `revision`.
    fn new(length: u32, revision: u32) -> io::Result<AclBuffer> {
        let mut buffer = AclBuffer(vec![0u64; (length as usize).div_ceil(8)]);
        // SAFETY: the buffer holds at least `length` bytes.
        if unsafe { InitializeAcl(buffer.as_mut(), length, revision) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(buffer)
    }

    fn as_mut(&mut self) -> *mut ACL {
        self.0.as_mut_ptr().cast()
    }
}

/// `acl` without the entries for `sid`, or `None` when it has none.
fn without(acl: *const ACL, sid: &Sid) -> io::Result<Option<AclBuffer>> {
    let all = entries(acl);
    let kept: Vec<*const ACE_HEADER> = all
        .iter()
        .copied()
        .filter(|e| grant_of(*e, sid).is_none())
        .collect();
    if kept.len() == all.len() {
        return Ok(None);
    }
    // SAFETY: each kept entry's header lies inside the caller's list.
    let sizes: Vec<u32> = kept
        .iter()
        .map(|e| unsafe { (**e).AceSize } as u32)
        .collect();
    let length = std::mem::size_of::<ACL>() as u32 + sizes.iter().sum::<u32>();
    // SAFETY: `acl` has entries, so it is a valid, non-null list.
    let revision = unsafe { (*acl).AclRevision } as u32;
    let mut new = AclBuffer::new(length, revision)?;
    for (entry, size) in kept.iter().zip(&sizes) {
        // SAFETY: `entry` is `size` bytes inside the caller's list, and the
        // new list was sized for every kept entry; MAXDWORD appends.
        if unsafe { AddAce(new.as_mut(), revision, u32::MAX, entry.cast(), *size) } == 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(Some(new))
}

impl Drop for Dacl {
    fn drop(&mut self) {
        // SAFETY: allocated by GetNamedSecurityInfoW for the caller to free,
        // and freed once, here.
        unsafe { LocalFree(self.descriptor) };
    }
}

/// Sets `acl` as the access list of `name` (NUL-terminated UTF-16).
fn set_dacl(name: &[u16], acl: *const ACL) -> io::Result<()> {
    // SAFETY: `name` is NUL-terminated and `acl` a valid list that outlives
    // the call; the owner and group are not set, so their pointers are null.
    let status = unsafe {
        SetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            null_mut(),
            null_mut(),
            acl,
            null(),
        )
    };
    match status {
        0 => Ok(()),
        status => Err(io::Error::from_raw_os_error(status as i32)),
    }
}

/// The capability's grant an allow or deny entry carries, when the entry
/// is for `sid`. Both kinds keep their SID eight bytes in, after the header
/// and the access mask.
fn grant_of(entry: *const ACE_HEADER, sid: &Sid) -> Option<Grant> {
    // SAFETY: `entry` points at an entry of a list that is still held.
    let header = unsafe { &*entry };
    let grant = match header.AceType as u32 {
        ACCESS_ALLOWED_ACE_TYPE => Grant::Modify,
        ACCESS_DENIED_ACE_TYPE => Grant::DenyWrite,
        _ => return None,
    };
    // SAFETY: for these two kinds the SID starts after the 4-byte header
    // and the 4-byte mask, inside the entry.
    let entry_sid = unsafe { (entry as *const u8).add(8) } as PSID;
    // SAFETY: both are valid SIDs for the call.
    (unsafe { EqualSid(entry_sid, sid.0) } != 0).then_some(grant)
}

/// Adds an inheritable entry for `capability` to `path`'s access list
/// (merged with what is there: granting twice changes nothing).
pub fn grant(path: &Path, capability: &str, grant: Grant) -> io::Result<()> {
    let sid = Sid::parse(capability)?;
    let name = wide(&path.display().to_string());
    let old = Dacl::read(&name)?;
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
    // `old.acl` points into its descriptor, still held.
    let status = unsafe { SetEntriesInAclW(1, &entry, old.acl, &mut new) };
    let result = match status {
        0 => set_dacl(&name, new),
        status => Err(io::Error::from_raw_os_error(status as i32)),
    };
    // SAFETY: allocated by SetEntriesInAclW for this function to free (or
    // null, which LocalFree accepts), and freed once.
    unsafe { LocalFree(new as _) };
    result
}

/// The entries for `capability` on `path`, allow and deny, explicit or
/// inherited.
pub fn grants(path: &Path, capability: &str) -> io::Result<Vec<Grant>> {
    let sid = Sid::parse(capability)?;
    let dacl = Dacl::read(&wide(&path.display().to_string()))?;
    Ok(grants_in(dacl.acl, &sid))
}

/// Takes every entry for `capability` off `path`'s access list, leaving the
/// others as they were; answers how many there were. Windows then takes
/// the inherited copies off everything below.
pub fn revoke(path: &Path, capability: &str) -> io::Result<usize> {
    let sid = Sid::parse(capability)?;
    let name = wide(&path.display().to_string());
    let old = Dacl::read(&name)?;
    let removed = grants_in(old.acl, &sid).len();
    match without(old.acl, &sid)? {
        Some(mut new) => set_dacl(&name, new.as_mut())?,
        None => return Ok(0),
    }
    Ok(removed)
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
/// token whose restricting SIDs are `capabilities` (one per writable place)
/// and the logon SID, with this process's standard handles, environment
/// and directory; returns its exit code.
pub fn run_restricted(capabilities: &[String], program: &str, args: &[String]) -> io::Result<u32> {
    let own = own_token()?;
    let capabilities = capabilities
        .iter()
        .map(|sid| Sid::parse(sid))
        .collect::<io::Result<Vec<Sid>>>()?;
    let mut logon = logon_sid(own.0)?;
    let restricted = restricted_token(&own, &capabilities, logon.as_deref_mut())?;
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
/// `capabilities` and, when the token has one, the `logon` SID.
fn restricted_token(
    own: &Handle,
    capabilities: &[Sid],
    logon: Option<&mut [u8]>,
) -> io::Result<Handle> {
    let mut restricting: Vec<SID_AND_ATTRIBUTES> = capabilities
        .iter()
        .map(|sid| SID_AND_ATTRIBUTES {
            Sid: sid.0,
            Attributes: 0,
        })
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What `uninstall-sandbox` relies on: the capability's entries are
    /// found and taken out of a list, and everyone else's stay, in order.
    /// On lists in memory: Wine keeps no access list on files (a grant
    /// reads back as nothing), so only Windows shows the file side.
    #[test]
    fn the_capabilitys_entries_are_taken_out_and_the_others_stay() {
        use windows_sys::Win32::Security::{
            ACL_REVISION, AddAccessAllowedAceEx, AddAccessDeniedAceEx, CONTAINER_INHERIT_ACE,
        };
        let (ours, theirs) = (
            Sid::parse("S-1-5-21-11-22-33-44").unwrap(),
            Sid::parse("S-1-5-21-55-66-77-88").unwrap(),
        );
        let mut list = AclBuffer::new(1024, ACL_REVISION).unwrap();
        let flags = CONTAINER_INHERIT_ACE;
        // SAFETY: a valid 1 KiB list and valid SIDs.
        unsafe {
            assert_ne!(
                AddAccessAllowedAceEx(list.as_mut(), ACL_REVISION, flags, 1, theirs.0),
                0
            );
            assert_ne!(
                AddAccessAllowedAceEx(list.as_mut(), ACL_REVISION, flags, 2, ours.0),
                0
            );
            assert_ne!(
                AddAccessDeniedAceEx(list.as_mut(), ACL_REVISION, flags, 3, ours.0),
                0
            );
            assert_ne!(
                AddAccessDeniedAceEx(list.as_mut(), ACL_REVISION, flags, 4, theirs.0),
                0
            );
        }
        assert_eq!(
            grants_in(list.as_mut(), &ours),
            [Grant::Modify, Grant::DenyWrite]
        );
        let mut rest = without(list.as_mut(), &ours).unwrap().unwrap();
        assert_eq!(grants_in(rest.as_mut(), &ours), []);
        assert_eq!(
            grants_in(rest.as_mut(), &theirs),
            [Grant::Modify, Grant::DenyWrite]
        );
        assert!(
            without(rest.as_mut(), &ours).unwrap().is_none(),
            "nothing left to take"
        );
        assert!(
            without(null(), &ours).unwrap().is_none(),
            "a null list has no entries"
        );
    }

    /// Granting and taking away run against a real folder; a missing one
    /// is an error, not a silent success.
    #[test]
    fn grant_and_revoke_run_on_a_real_folder() {
        let dir = tempfile::tempdir().unwrap();
        let ours = "S-1-5-21-11-22-33-44";
        grant(dir.path(), ours, Grant::Modify).unwrap();
        let listed = grants(dir.path(), ours).unwrap().len();
        assert_eq!(revoke(dir.path(), ours).unwrap(), listed);
        assert_eq!(grants(dir.path(), ours).unwrap(), []);
        assert!(revoke(&dir.path().join("gone"), ours).is_err());
    }
}
