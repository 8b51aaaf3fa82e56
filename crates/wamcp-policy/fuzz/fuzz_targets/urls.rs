//! The URL policy on arbitrary text: never a panic; anything accepted is
//! https on port 443 without credentials, and an accepted address literal
//! is public.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::url_policy::{HostRule, address_class, check_url};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let listed = vec!["github.com".to_string()];
    for rule in [HostRule::Listed(&listed), HostRule::AnyPublic] {
        if let Ok(checked) = check_url(text, rule) {
            assert_eq!(checked.url.scheme(), "https");
            assert_eq!(checked.url.port_or_known_default(), Some(443));
            assert!(checked.url.username().is_empty() && checked.url.password().is_none());
            if let Ok(ip) = checked.host.parse() {
                assert_eq!(address_class(ip), None, "{text:?}");
            }
            if let HostRule::Listed(_) = rule {
                assert_eq!(checked.host, "github.com");
            }
        }
    }
});
