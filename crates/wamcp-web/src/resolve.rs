//! Name resolution that validates and pins.
//!
//! The HTTP client asks this resolver for a host's addresses and connects to
//! exactly the addresses it returns, so the address that was judged is the
//! address that is reached: there is no second lookup for a hostile zone to
//! answer differently (the DNS-rebinding hole of validate-then-connect).

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use wamcp_policy::url_policy::address_class;

/// At most this many addresses are tried for one name; a zone that answers
/// with thousands of records gets the first few, all of them judged.
const MAX_ADDRESSES: usize = 16;

/// A lookup in progress: every address the name has, or the resolver's error.
pub type Lookup = Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send>>;

/// Where addresses for a host name come from: the system resolver in the
/// shipped binary, a scripted table in tests.
pub trait NameSource: Send + Sync + 'static {
    /// Every address `host` resolves to, unjudged; the port is ignored.
    fn lookup(&self, host: &str) -> Lookup;
}

/// The operating system's resolver.
pub struct SystemNames;

impl NameSource for SystemNames {
    fn lookup(&self, host: &str) -> Lookup {
        let host = host.to_string();
        Box::pin(async move {
            // Port 0: the connector substitutes 443 for an https URL.
            Ok(tokio::net::lookup_host((host.as_str(), 0)).await?.collect())
        })
    }
}

/// A host whose answer included an address no request may reach. The whole
/// host is refused, not just that address: a zone that mixes a public and a
/// private answer is hostile.
#[derive(Debug)]
pub struct AddressRefused {
    /// The host name as the request named it.
    pub host: String,
    /// The first address of its answer that no request may reach.
    pub address: SocketAddr,
    /// The range that address is in (`loopback`,
    /// `private`), from `address_class`.
    pub class: &'static str,
}

impl fmt::Display for AddressRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' resolves to {}, a {} address",
            self.host,
            self.address.ip(),
            self.class
        )
    }
}

impl std::error::Error for AddressRefused {}

/// A host name that resolved to nothing usable.
#[derive(Debug)]
pub struct NotResolved {
    /// The host name as the request named it.
    pub host: String,
    /// The resolver's error, or that the name has no addresses.
    pub reason: String,
}

impl fmt::Display for NotResolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' could not be resolved: {}", self.host, self.reason)
    }
}

impl std::error::Error for NotResolved {}

/// The resolver handed to the HTTP client.
pub(crate) struct PinnedResolver {
    pub names: Arc<dyn NameSource>,
    /// Loopback test servers that stand in for public hosts. Only the test
    /// API fills this; the shipped binary leaves it empty.
    pub stand_ins: Arc<[SocketAddr]>,
}

impl Resolve for PinnedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let lookup = self.names.lookup(&host);
        let stand_ins = self.stand_ins.clone();
        Box::pin(async move {
            let answers = lookup.await.map_err(|e| NotResolved {
                host: host.clone(),
                reason: e.to_string(),
            })?;
            let validated = validate(&host, answers, &stand_ins)?;
            let addrs: Addrs = Box::new(validated.into_iter());
            Ok(addrs)
        })
    }
}

/// Every answer must pass; the first few are returned, in the zone's order.
fn validate(
    host: &str,
    answers: Vec<SocketAddr>,
    stand_ins: &[SocketAddr],
) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    if answers.is_empty() {
        return Err(Box::new(NotResolved {
            host: host.to_string(),
            reason: "the name has no addresses".into(),
        }));
    }
    for address in &answers {
        if stand_ins.contains(address) {
            continue;
        }
        if let Some(class) = address_class(address.ip()) {
            return Err(Box::new(AddressRefused {
                host: host.to_string(),
                address: *address,
                class,
            }));
        }
    }
    Ok(answers.into_iter().take(MAX_ADDRESSES).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn one_bad_answer_refuses_the_host() {
        let mixed = vec![addr("93.184.216.34:0"), addr("10.0.0.5:0")];
        let refusal = validate("mixed.example", mixed, &[]).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "'mixed.example' resolves to 10.0.0.5, a private address"
        );
        let mapped = vec![addr("[::ffff:127.0.0.1]:0")];
        assert!(validate("m.example", mapped, &[]).is_err());
    }

    #[test]
    fn public_answers_pass_and_are_capped() {
        let many: Vec<SocketAddr> = (1..=40)
            .map(|i| addr(&format!("93.184.216.{i}:0")))
            .collect();
        let kept = validate("many.example", many.clone(), &[]).unwrap();
        assert_eq!(kept, many[..MAX_ADDRESSES].to_vec());
    }

    #[test]
    fn no_answer_is_an_error_not_an_empty_list() {
        let refusal = validate("void.example", Vec::new(), &[]).unwrap_err();
        assert!(refusal.to_string().contains("has no addresses"));
    }

    #[test]
    fn stand_ins_pass_only_at_their_exact_port() {
        let stand_in = addr("127.0.0.1:4443");
        assert!(validate("docs.test", vec![stand_in], &[stand_in]).is_ok());
        assert!(validate("docs.test", vec![addr("127.0.0.1:4444")], &[stand_in]).is_err());
    }
}
