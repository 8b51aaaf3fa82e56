//! Windows answers: RtlGetVersion, GetNativeSystemInfo, GetUserNameW.

use super::{OsFacts, windows_product_name};
use windows_sys::Wdk::System::SystemServices::RtlGetVersion;
use windows_sys::Win32::System::SystemInformation::{
    ComputerNamePhysicalDnsHostname, GetComputerNameExW, GetNativeSystemInfo, OSVERSIONINFOW,
    PROCESSOR_ARCHITECTURE_AMD64, PROCESSOR_ARCHITECTURE_ARM64, PROCESSOR_ARCHITECTURE_INTEL,
    SYSTEM_INFO,
};
use windows_sys::Win32::System::WindowsProgramming::GetUserNameW;

pub(super) fn os_facts() -> OsFacts {
    // RtlGetVersion, unlike GetVersionExW, is not lied to by the compatibility
    // shim: an unmanifested program would otherwise be told it runs on 8.
    let mut version = OSVERSIONINFOW {
        dwOSVersionInfoSize: size_of::<OSVERSIONINFOW>() as u32,
        ..Default::default()
    };
    // SAFETY: the struct is initialised with its own size as the API requires.
    let status = unsafe { RtlGetVersion(&mut version) };
    let (name, build) = if status == 0 {
        let (major, minor, build) = (
            version.dwMajorVersion,
            version.dwMinorVersion,
            version.dwBuildNumber,
        );
        (
            windows_product_name(major, minor, build),
            format!("{major}.{minor}.{build}"),
        )
    } else {
        ("Windows".to_string(), "unknown".to_string())
    };
    OsFacts {
        name,
        build,
        kernel: None,
        machine: native_machine(),
    }
}

fn native_machine() -> String {
    let mut info = SYSTEM_INFO::default();
    // SAFETY: GetNativeSystemInfo fills the struct and cannot fail.
    unsafe { GetNativeSystemInfo(&mut info) };
    // SAFETY: the architecture member of the union is always written.
    let arch = unsafe { info.Anonymous.Anonymous.wProcessorArchitecture };
    match arch {
        PROCESSOR_ARCHITECTURE_AMD64 => "AMD64".into(),
        PROCESSOR_ARCHITECTURE_ARM64 => "ARM64".into(),
        PROCESSOR_ARCHITECTURE_INTEL => "x86".into(),
        other => format!("unknown ({other})"),
    }
}

/// Calls a `(buffer, *mut len)` wide-string API with a buffer large enough
/// for any account or DNS host name.
fn wide_string(call: impl FnOnce(*mut u16, *mut u32) -> bool) -> Option<String> {
    let mut buf = [0u16; 512];
    let mut len = buf.len() as u32;
    if !call(buf.as_mut_ptr(), &mut len) {
        return None;
    }
    // Both APIs report the length with or without the NUL; cut at the first NUL.
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    let name = String::from_utf16_lossy(&buf[..end]);
    (!name.is_empty()).then_some(name)
}

pub(super) fn hostname() -> Option<String> {
    // SAFETY: the buffer and its length come from `wide_string`.
    wide_string(|buf, len| unsafe {
        GetComputerNameExW(ComputerNamePhysicalDnsHostname, buf, len) != 0
    })
}

pub(super) fn username() -> Option<String> {
    // SAFETY: the buffer and its length come from `wide_string`.
    wide_string(|buf, len| unsafe { GetUserNameW(buf, len) != 0 })
}
