//! Which URLs a fetching tool may request and which addresses it may
//! connect to.
//!
//! Checked before any DNS lookup, so a refused host is never resolved:
//! HTTPS only, port 443 only, no credentials, at most 4096 characters, and
//! the host compared exactly (lower-cased, IDNA-mapped, trailing dot
//! dropped; no wildcards) with an allowlist, or, in research mode, any host
//! that is not an internal name. IP literals arrive already normalised by
//! the WHATWG parser (`2130706433`, `0x7f.1`, `0177.0.0.1` and `127.1` are
//! all 127.0.0.1) and are judged by [`address_class`], which the HTTP
//! client's resolver also applies to every address a name resolves to.

use crate::limits::MAX_URL_CHARS;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use url::{Host, Url};

/// Which hosts a request may name.
#[derive(Clone, Copy, Debug)]
pub enum HostRule<'a> {
    /// Exactly these (already normalised) host names.
    Listed(&'a [String]),
    /// Any public host (research mode); addresses are still judged.
    AnyPublic,
}

/// A URL that passed; `host` is the normalised host name or address.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedUrl {
    /// The parsed URL, to request as it is.
    pub url: Url,
    /// The host, lower-cased without a trailing
    /// dot, as the allowlist compares it.
    pub host: String,
}

/// Why a URL was refused; the message names the host or address class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlRefusal(pub String);

/// Checks `raw` against the rules above and `rule`, before any DNS lookup.
pub fn check_url(raw: &str, rule: HostRule) -> Result<CheckedUrl, UrlRefusal> {
    let refuse = |why: String| Err(UrlRefusal(why));
    if raw.chars().count() > MAX_URL_CHARS {
        return refuse(format!("the URL is longer than {MAX_URL_CHARS} characters"));
    }
    let url = Url::parse(raw.trim())
        .map_err(|e| UrlRefusal(format!("'{raw}' is not a valid URL: {e}")))?;
    if url.scheme() != "https" {
        return refuse(format!(
            "only https URLs are allowed, not {}:",
            url.scheme()
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return refuse("URLs with a user name or password are not allowed".into());
    }
    // `url` drops an explicit default port, so any port left is not 443.
    if let Some(port) = url.port() {
        return refuse(format!("only port 443 is allowed, not {port}"));
    }
    let host = match url.host() {
        None => return refuse("the URL has no host".into()),
        Some(Host::Ipv4(ip)) => return judge_literal(IpAddr::V4(ip), rule, url),
        Some(Host::Ipv6(ip)) => return judge_literal(IpAddr::V6(ip), rule, url),
        Some(Host::Domain(domain)) => domain.trim_end_matches('.').to_string(),
    };
    match rule {
        HostRule::Listed(hosts) if hosts.contains(&host) => Ok(CheckedUrl { url, host }),
        HostRule::Listed(_) => refuse(format!("the host '{host}' is not allowed")),
        HostRule::AnyPublic if is_internal_name(&host) => {
            refuse(format!("'{host}' is an internal host name"))
        }
        HostRule::AnyPublic => Ok(CheckedUrl { url, host }),
    }
}

fn judge_literal(ip: IpAddr, rule: HostRule, url: Url) -> Result<CheckedUrl, UrlRefusal> {
    if let Some(class) = address_class(ip) {
        return Err(UrlRefusal(format!("{ip} is a {class} address")));
    }
    match rule {
        HostRule::Listed(_) => Err(UrlRefusal(format!(
            "the address {ip} is not an allowed host name"
        ))),
        HostRule::AnyPublic => Ok(CheckedUrl {
            url,
            host: ip.to_string(),
        }),
    }
}

/// Names that only mean something inside a machine or a site.
fn is_internal_name(host: &str) -> bool {
    let single_label = !host.contains('.');
    single_label
        || [
            "localhost",
            "local",
            "internal",
            "intranet",
            "lan",
            "home.arpa",
            "corp",
            "localdomain",
        ]
        .iter()
        .any(|suffix| host == *suffix || host.ends_with(&format!(".{suffix}")))
}

/// `None` for a public, globally routable address; otherwise the name of the
/// range that makes it unsafe to connect to. Explicit tables, because the
/// standard library's notion of "global" is unstable and incomplete.
pub fn address_class(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => v6_class(v6),
    }
}

const V4_RANGES: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 8, "\"this network\""),
    ([10, 0, 0, 0], 8, "private"),
    ([100, 64, 0, 0], 10, "shared (carrier-grade NAT)"),
    ([127, 0, 0, 0], 8, "loopback"),
    ([169, 254, 0, 0], 16, "link-local"),
    ([172, 16, 0, 0], 12, "private"),
    ([192, 0, 0, 0], 24, "IETF protocol assignment"),
    ([192, 0, 2, 0], 24, "documentation"),
    ([192, 31, 196, 0], 24, "AS112"),
    ([192, 52, 193, 0], 24, "AMT"),
    ([192, 88, 99, 0], 24, "6to4 relay"),
    ([192, 168, 0, 0], 16, "private"),
    ([192, 175, 48, 0], 24, "AS112"),
    ([198, 18, 0, 0], 15, "benchmarking"),
    ([198, 51, 100, 0], 24, "documentation"),
    ([203, 0, 113, 0], 24, "documentation"),
    ([224, 0, 0, 0], 4, "multicast"),
    ([240, 0, 0, 0], 4, "reserved or broadcast"),
];

fn v4_class(ip: Ipv4Addr) -> Option<&'static str> {
    let value = u32::from(ip);
    V4_RANGES.iter().find_map(|(base, bits, name)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(*bits)).unwrap_or(0);
        (value & mask == u32::from_be_bytes(*base) & mask).then_some(*name)
    })
}

const V6_RANGES: &[(u128, u8, &str)] = &[
    (0, 128, "unspecified"),
    (1, 128, "loopback"),
    (0xffff_0000_0000, 96, "IPv4-mapped"),
    (0, 96, "IPv4-compatible"),
    (0x0064_ff9b_0001 << 80, 48, "local-use NAT64"),
    (0x0100 << 112, 64, "discard-only"),
    (0x2001_0db8 << 96, 32, "documentation"),
    (
        0x2001 << 112,
        23,
        "IETF protocol assignment (Teredo, ORCHID, ...)",
    ),
    (0x2002 << 112, 16, "6to4"),
    (0x3fff << 112, 20, "documentation"),
    (0x5f00 << 112, 16, "segment-routing"),
    (0xfc00 << 112, 7, "unique local"),
    (0xfe80 << 112, 10, "link-local"),
    (0xfec0 << 112, 10, "site-local"),
    (0xff00 << 112, 8, "multicast"),
];

const NAT64: u128 = 0x0064_ff9b << 96;

fn v6_class(ip: Ipv6Addr) -> Option<&'static str> {
    let value = u128::from(ip);
    let in_range = |base: u128, bits: u8| {
        let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
        value & mask == base & mask
    };
    // Well-known NAT64 carries an IPv4 address: it is as safe as that address.
    if in_range(NAT64, 96) {
        return v4_class(Ipv4Addr::from(value as u32)).map(|_| "NAT64 wrapping a non-public IPv4");
    }
    if let Some((_, _, name)) = V6_RANGES
        .iter()
        .find(|(base, bits, _)| in_range(*base, *bits))
    {
        return Some(name);
    }
    // Only 2000::/3 is allocated for global unicast.
    (!in_range(0x2000 << 112, 3)).then_some("unallocated or non-global")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed() -> Vec<String> {
        ["github.com", "api.github.com", "xn--bcher-kva.example"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn allowlisted_urls_pass_in_their_normal_spellings() {
        let hosts = listed();
        for (raw, host) in [
            ("https://github.com/o/r", "github.com"),
            ("https://GitHub.COM/o/r", "github.com"),
            ("https://github.com./o/r", "github.com"),
            ("https://github.com:443/o/r", "github.com"),
            (
                "https://api.github.com/repos/o/r/releases/latest",
                "api.github.com",
            ),
            ("https://bücher.example/", "xn--bcher-kva.example"),
            ("https://github\u{3002}com/", "github.com"),
            ("https://github.com\\@evil.test/", "github.com"),
        ] {
            let checked =
                check_url(raw, HostRule::Listed(&hosts)).unwrap_or_else(|e| panic!("{raw}: {e:?}"));
            assert_eq!(checked.host, host, "{raw}");
        }
    }

    #[test]
    fn refusals_before_any_lookup() {
        let hosts = listed();
        for (raw, why) in [
            ("http://github.com/", "only https"),
            ("ftp://github.com/", "only https"),
            ("file:///etc/passwd", "only https"),
            ("https://github.com:8443/", "only port 443"),
            ("https://user:pw@github.com/", "user name or password"),
            ("https://user@github.com/", "user name or password"),
            ("https://github.com.evil.test/", "not allowed"),
            ("https://evilgithub.com/", "not allowed"),
            ("https://github.com%2eevil.test/", "not allowed"),
            ("https://sub.github.com/", "not allowed"),
            ("https://140.82.112.3/", "not an allowed host name"),
            ("not a url", "not a valid URL"),
            ("https:///nohost", "not allowed"),
        ] {
            let refusal = check_url(raw, HostRule::Listed(&hosts)).expect_err(raw);
            assert!(refusal.0.contains(why), "{raw}: {}", refusal.0);
        }
        let long = format!("https://github.com/{}", "a".repeat(4100));
        assert!(
            check_url(&long, HostRule::Listed(&hosts))
                .unwrap_err()
                .0
                .contains("longer than 4096")
        );
    }

    #[test]
    fn ip_literals_in_every_spelling_are_judged_as_addresses() {
        for (raw, class) in [
            ("https://2130706433/", "loopback"),
            ("https://0x7f000001/", "loopback"),
            ("https://0x7f.1/", "loopback"),
            ("https://0177.0.0.1/", "loopback"),
            ("https://127.1/", "loopback"),
            ("https://127.0.1/", "loopback"),
            ("https://0/", "\"this network\""),
            ("https://10.1.2.3/", "private"),
            ("https://169.254.169.254/latest/meta-data/", "link-local"),
            ("https://100.64.0.1/", "carrier-grade NAT"),
            ("https://192.0.0.8/", "IETF protocol assignment"),
            ("https://198.18.0.1/", "benchmarking"),
            ("https://255.255.255.255/", "reserved or broadcast"),
            ("https://[::1]/", "loopback"),
            ("https://[::]/", "unspecified"),
            ("https://[::ffff:127.0.0.1]/", "IPv4-mapped"),
            ("https://[::ffff:8.8.8.8]/", "IPv4-mapped"),
            ("https://[::127.0.0.1]/", "IPv4-compatible"),
            ("https://[64:ff9b::7f00:1]/", "NAT64 wrapping"),
            ("https://[64:ff9b::a01:203]/", "NAT64 wrapping"),
            ("https://[64:ff9b:1::1]/", "local-use NAT64"),
            ("https://[2002:7f00:1::]/", "6to4"),
            ("https://[2001:0::1]/", "Teredo"),
            ("https://[2001:db8::1]/", "documentation"),
            ("https://[fd00::1]/", "unique local"),
            ("https://[fe80::1]/", "link-local"),
            ("https://[fec0::1]/", "site-local"),
            ("https://[ff02::1]/", "multicast"),
            ("https://[100::1]/", "discard-only"),
            ("https://[4000::1]/", "non-global"),
        ] {
            let refusal = check_url(raw, HostRule::AnyPublic).expect_err(raw);
            assert!(refusal.0.contains(class), "{raw}: {}", refusal.0);
        }
    }

    #[test]
    fn research_mode_allows_public_hosts_and_addresses_only() {
        for raw in [
            "https://example.org/a",
            "https://8.8.8.8/",
            "https://[2606:4700:4700::1111]/",
            "https://[64:ff9b::808:808]/",
            "https://1.1.1.1/",
            "https://172.32.0.1/",
            "https://192.169.0.1/",
        ] {
            assert!(check_url(raw, HostRule::AnyPublic).is_ok(), "{raw}");
        }
        for raw in [
            "https://localhost/",
            "https://printer/",
            "https://nas.local/",
            "https://app.localhost/",
            "https://x.home.arpa/",
        ] {
            assert!(
                check_url(raw, HostRule::AnyPublic)
                    .unwrap_err()
                    .0
                    .contains("internal host name"),
                "{raw}"
            );
        }
    }

    #[test]
    fn range_edges() {
        let v4 = |s: &str| address_class(s.parse().unwrap());
        assert_eq!(v4("172.15.255.255"), None);
        assert_eq!(v4("172.16.0.0"), Some("private"));
        assert_eq!(v4("172.31.255.255"), Some("private"));
        assert_eq!(v4("172.32.0.0"), None);
        assert_eq!(v4("100.63.255.255"), None);
        assert_eq!(v4("100.128.0.0"), None);
        assert_eq!(v4("198.17.255.255"), None);
        assert_eq!(v4("198.20.0.0"), None);
        assert_eq!(v4("223.255.255.255"), None);
        assert_eq!(v4("2001:4860::8888"), None);
        assert_eq!(v4("1fff:ffff::1"), Some("unallocated or non-global"));
        assert_eq!(v4("3fff:1::1"), Some("documentation"));
        assert_eq!(
            v4("2001:200::1"),
            None,
            "2001:200::/23 is outside the IETF block"
        );
    }
}
