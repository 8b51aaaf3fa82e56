//! Group lists, host lists and workspace adoption on arbitrary strings:
//! never a panic, `core` always active, an adopted directory never the home.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::groups::{Group, parse_groups};
use wamcp_policy::hosts::parse_host_list;
use wamcp_policy::workspace::{PathStyle, ProtectedDirs, judge_workspace};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let selection = parse_groups(Some(text), text.len() % 2 == 0);
    assert!(selection.groups.contains(&Group::Core));
    let (hosts, _) = parse_host_list(text);
    for host in hosts {
        assert_eq!(host, host.to_ascii_lowercase());
        assert!(!host.ends_with('.'));
    }
    for (style, home) in [
        (PathStyle::Windows, r"C:\Users\ada"),
        (PathStyle::Unix, "/home/ada"),
    ] {
        let dirs = ProtectedDirs::for_platform(style, Some(home.to_string()), |_| None);
        if judge_workspace(text, style, &dirs).is_ok() {
            let norm = |s: &str| {
                let s = s.replace('\\', "/");
                let s = s.trim_end_matches('/');
                if style == PathStyle::Windows {
                    s.to_lowercase()
                } else {
                    s.to_string()
                }
            };
            assert_ne!(norm(text), norm(home));
        }
    }
});
