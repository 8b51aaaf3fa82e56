//! Unix answers: os-release, uname, and the password database.

use super::{OsFacts, os_release_pretty_name};
use std::ffi::CStr;

pub(super) fn os_facts() -> OsFacts {
    let uname = uname();
    let kernel_name = uname
        .as_ref()
        .map(|u| u.0.clone())
        .unwrap_or_else(|| "Unix".into());
    let release = uname.as_ref().map(|u| u.1.clone()).unwrap_or_default();
    let machine = uname
        .as_ref()
        .map(|u| u.2.clone())
        .unwrap_or_else(|| std::env::consts::ARCH.into());
    let pretty = ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .and_then(|content| os_release_pretty_name(&content));
    OsFacts {
        name: pretty.unwrap_or_else(|| kernel_name.clone()),
        build: release.clone(),
        kernel: Some(format!("{kernel_name} {release}").trim().to_string()),
        machine,
    }
}

/// (sysname, release, machine, nodename) from uname(2).
fn uname() -> Option<(String, String, String, String)> {
    // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
    let mut buf: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is a writable `utsname`, the one struct uname fills.
    if unsafe { libc::uname(&mut buf) } != 0 {
        return None;
    }
    let field = |chars: &[libc::c_char]| {
        // SAFETY: uname NUL-terminates each field within its array.
        unsafe { CStr::from_ptr(chars.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    Some((
        field(&buf.sysname),
        field(&buf.release),
        field(&buf.machine),
        field(&buf.nodename),
    ))
}

pub(super) fn hostname() -> Option<String> {
    uname().map(|u| u.3).filter(|name| !name.is_empty())
}

/// The account name of the effective user, from the password database; the
/// `USER` variable is unset in many containers and services.
pub(super) fn username() -> Option<String> {
    // SAFETY: `passwd` is integers and pointers, for which all zeroes (null)
    // is a valid value; getpwuid_r fills it before it is read.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: getpwuid_r writes into `pwd` and `buf`, both valid for their sizes.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc == 0 && !result.is_null() && !pwd.pw_name.is_null() {
        // SAFETY: pw_name points into `buf`, NUL-terminated.
        let name = unsafe { CStr::from_ptr(pwd.pw_name) }
            .to_string_lossy()
            .into_owned();
        return Some(name);
    }
    std::env::var("USER").ok().filter(|u| !u.is_empty())
}
