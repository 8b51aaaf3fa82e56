//! A grants file of any content: parsing never panics, every granted host
//! is an exact host name (no wildcard, scheme, port or path), and adding a
//! host to a file that parses keeps every host it granted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wamcp_policy::grants::{add_grant, parse_grants};
use wamcp_policy::hosts::normalize_host;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(grants) = parse_grants(text) else {
        return;
    };
    for host in grants.hosts.iter().chain(&grants.parked) {
        assert_eq!(normalize_host(host).as_deref(), Ok(host.as_str()));
    }
    let added = add_grant(Some(text), "fuzz.example.com", None).expect("a parsed file can be edited");
    let after = parse_grants(&added).expect("an edited file parses");
    for host in &grants.hosts {
        assert!(after.hosts.contains(host), "{host} lost");
    }
    assert!(after.hosts.contains(&"fuzz.example.com".to_string()));
});
