//! Built-in host lists and the parsing of user-supplied host lists.
//!
//! Hosts are compared exactly after lower-casing and dropping a trailing dot;
//! there are no wildcards, because `*.github.io` is anyone's site.

/// Hosts the `net` tools (download, raw HTTPS fetch, release lookup) may reach.
pub const ALLOWED_NETWORK_HOSTS: &[&str] = &[
    "github.com",
    "api.github.com",
    "raw.githubusercontent.com",
    "objects.githubusercontent.com",
    "release-assets.githubusercontent.com",
    "premake.github.io",
];

/// Documentation hosts `fetch_web_page` may read without a grant. Disjoint
/// from the network list: reading a page into context is a smaller grant
/// than writing a download to disk.
pub const ALLOWED_DOC_HOSTS: &[&str] = &[
    "registry.khronos.org",
    "docs.vulkan.org",
    "www.khronos.org",
    "khronos.org",
    "vulkan.lunarg.com",
    "learn.microsoft.com",
    "en.cppreference.com",
    "www.cppreference.com",
    "isocpp.org",
    "cmake.org",
    "ninja-build.org",
    "gpuopen.com",
    "developer.nvidia.com",
];

/// Lower-cases a host name and drops one trailing dot, or refuses a value
/// that cannot be a DNS host name (empty, a scheme, a path, a port, spaces).
pub fn normalize_host(raw: &str) -> Result<String, String> {
    let host = raw.trim().to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(&host);
    let valid_label = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if host.is_empty() || host.len() > 253 || !host.split('.').all(valid_label) {
        return Err(format!(
            "'{}' is not a host name (expected something like docs.example.com, \
             without scheme, port or path)",
            raw.trim()
        ));
    }
    Ok(host.to_string())
}

/// Splits a host list separated by commas, semicolons or whitespace.
/// Returns the normalised hosts (deduplicated, in first-seen order) and a
/// message for each entry that was refused.
pub fn parse_host_list(raw: &str) -> (Vec<String>, Vec<String>) {
    let mut hosts = Vec::new();
    let mut errors = Vec::new();
    for entry in raw
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|e| !e.is_empty())
    {
        match normalize_host(entry) {
            Ok(host) if !hosts.contains(&host) => hosts.push(host),
            Ok(_) => {}
            Err(message) => errors.push(message),
        }
    }
    (hosts, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lists_are_normalised_and_disjoint() {
        for host in ALLOWED_NETWORK_HOSTS.iter().chain(ALLOWED_DOC_HOSTS) {
            assert_eq!(normalize_host(host).as_deref(), Ok(*host));
        }
        for host in ALLOWED_DOC_HOSTS {
            assert!(!ALLOWED_NETWORK_HOSTS.contains(host), "{host}");
        }
    }

    #[test]
    fn normalize_table() {
        let ok = [
            ("Docs.Example.COM", "docs.example.com"),
            ("docs.example.com.", "docs.example.com"),
            ("  localhostish  ", "localhostish"),
            ("xn--bcher-kva.example", "xn--bcher-kva.example"),
            ("a-b.c", "a-b.c"),
        ];
        for (raw, want) in ok {
            assert_eq!(normalize_host(raw).as_deref(), Ok(want), "{raw}");
        }
        let bad = [
            "",
            ".",
            "https://docs.example.com",
            "docs.example.com/path",
            "docs.example.com:443",
            "user@docs.example.com",
            "*.example.com",
            "docs..example.com",
            "-docs.example.com",
            "docs.example.com..",
        ];
        for raw in bad {
            assert!(normalize_host(raw).is_err(), "{raw:?} should be refused");
        }
    }

    #[test]
    fn list_parsing_splits_on_all_separators_and_reports_bad_entries() {
        let (hosts, errors) =
            parse_host_list("a.example, B.example;a.example.\n c.example  http://x/ ,,");
        assert_eq!(hosts, ["a.example", "b.example", "c.example"]);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("'http://x/'"), "{errors:?}");
    }
}
