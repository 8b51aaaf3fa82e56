//! The egress proxy's parsers on arbitrary bytes: never a panic; a TLS
//! opening called incomplete asks for more than it was given; a request
//! that parses names a host without spaces or line breaks (it becomes a
//! `Host` header and a name to resolve).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::egress::{Opening, endpoint_of_git_url, named_endpoints, parse_request, tls_opening};

fuzz_target!(|data: &[u8]| {
    if let Opening::Incomplete(needed) = tls_opening(data) {
        assert!(needed > data.len(), "{needed} for {} bytes", data.len());
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(request) = parse_request(text) {
        assert!(!request.host.contains([' ', '\r', '\n']), "{request:?}");
    }
    let _ = endpoint_of_git_url(text);
    let args: Vec<String> = text.split(' ').map(String::from).collect();
    for (host, _) in named_endpoints("git", &args) {
        assert!(!host.is_empty() && !host.contains(['/', ' ']), "{host}");
    }
});
