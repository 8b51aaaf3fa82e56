//! Write confinement rules on arbitrary strings: never a panic, and
//! containment that agrees with a component-wise prefix check.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::workspace::PathStyle;
use wamcp_policy::write_rules::{check_component, is_protected_name, is_within, split_for_write};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (path, root) = text.split_once('\u{1}').unwrap_or((text, "C:\\proj"));
    for style in [PathStyle::Windows, PathStyle::Unix] {
        let split = split_for_write(path, style);
        if let Ok((_, parts)) = &split {
            for part in parts {
                if check_component(part, style).is_ok()
                    && style == PathStyle::Windows
                    && part != "."
                    && part != ".."
                {
                    // Anything Win32 would rewrite must have been refused.
                    assert!(
                        !part.contains(':') && !part.ends_with('.') && !part.ends_with(' '),
                        "{part:?}"
                    );
                }
            }
            let _ = is_protected_name(parts);
        }
        if is_within(path, root, style) {
            let (pp, p) = split_for_write(path, style).expect("contained paths split");
            let (rp, r) = split_for_write(root, style).expect("roots split");
            let fold = |s: &String| {
                if style == PathStyle::Windows {
                    s.to_lowercase()
                } else {
                    s.clone()
                }
            };
            assert_eq!(fold(&pp), fold(&rp));
            let p: Vec<String> = p.iter().filter(|c| *c != ".").map(fold).collect();
            let r: Vec<String> = r.iter().filter(|c| *c != ".").map(fold).collect();
            assert!(p.starts_with(&r), "{path:?} in {root:?}");
            assert!(!p.iter().any(|c| c == ".."));
        }
    }
});
