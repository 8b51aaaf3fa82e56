//! The host-grants file: hosts the user lets `fetch_web_page` read.
//!
//! ```json
//! {"version": 1, "hosts": ["docs.example.com",
//!   {"host": "api.example.com", "enable": false, "note": "only for issue 412"}]}
//! ```
//!
//! A file that does not parse grants nothing (fail closed) and says why; a
//! bad entry is reported by position. Grants are read-only hosts: they
//! widen what may be read into context, never what may be downloaded.

use crate::hosts::normalize_host;
use serde_json::{Map, Value, json};

/// What the file grants.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// Enabled hosts, normalised, in file order.
    pub hosts: Vec<String>,
    /// Hosts listed with `"enable": false`.
    pub parked: Vec<String>,
}

/// Reads a grants file: a `hosts` list of names or `{"host", "enable"}`
/// objects. A malformed file grants nothing and says why.
pub fn parse_grants(text: &str) -> Result<Grants, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("the grants file is not valid JSON: {e}"))?;
    let entries = value
        .get("hosts")
        .and_then(Value::as_array)
        .ok_or("the grants file has no \"hosts\" list")?;
    let mut grants = Grants::default();
    for (index, entry) in entries.iter().enumerate() {
        let (raw, enabled) = match entry {
            Value::String(host) => (host.as_str(), true),
            Value::Object(fields) => {
                let host = fields
                    .get("host")
                    .and_then(Value::as_str)
                    .ok_or(format!("hosts[{index}] has no \"host\" string"))?;
                let enabled = match fields.get("enable") {
                    None => true,
                    Some(Value::Bool(on)) => *on,
                    Some(_) => return Err(format!("hosts[{index}].enable must be true or false")),
                };
                (host, enabled)
            }
            _ => return Err(format!("hosts[{index}] must be a host name or an object")),
        };
        let host = normalize_host(raw).map_err(|e| format!("hosts[{index}]: {e}"))?;
        let list = if enabled {
            &mut grants.hosts
        } else {
            &mut grants.parked
        };
        if !list.contains(&host) {
            list.push(host);
        }
    }
    Ok(grants)
}

/// The starter file `hostgrants --init` writes.
pub fn starter_file() -> String {
    let value = json!({"version": 1, "hosts": []});
    format!(
        "{}\n",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    )
}

/// `text` (or a new file) with `host` granted, keeping every other entry;
/// an existing entry for the host is enabled and its note replaced.
pub fn add_grant(text: Option<&str>, host: &str, note: Option<&str>) -> Result<String, String> {
    let host = normalize_host(host)?;
    let mut value = editable(text)?;
    let hosts = hosts_mut(&mut value)?;
    hosts.retain(|entry| entry_host(entry).as_deref() != Some(host.as_str()));
    let entry = match note {
        Some(note) => json!({"host": host, "enable": true, "note": note}),
        None => Value::String(host),
    };
    hosts.push(entry);
    render(&value)
}

/// `text` without `host`; `None` when it was not listed.
pub fn remove_grant(text: &str, host: &str) -> Result<Option<String>, String> {
    let host = normalize_host(host)?;
    let mut value = editable(Some(text))?;
    let hosts = hosts_mut(&mut value)?;
    let before = hosts.len();
    hosts.retain(|entry| entry_host(entry).as_deref() != Some(host.as_str()));
    if hosts.len() == before {
        return Ok(None);
    }
    render(&value).map(Some)
}

fn editable(text: Option<&str>) -> Result<Value, String> {
    match text {
        None => Ok(json!({"version": 1, "hosts": []})),
        Some(text) => {
            parse_grants(text)?;
            serde_json::from_str(text).map_err(|e| e.to_string())
        }
    }
}

fn hosts_mut(value: &mut Value) -> Result<&mut Vec<Value>, String> {
    value
        .as_object_mut()
        .map(|o: &mut Map<String, Value>| o.entry("hosts").or_insert_with(|| json!([])))
        .and_then(Value::as_array_mut)
        .ok_or_else(|| "the grants file has no \"hosts\" list".to_string())
}

fn entry_host(entry: &Value) -> Option<String> {
    let raw = match entry {
        Value::String(host) => host.as_str(),
        Value::Object(fields) => fields.get("host")?.as_str()?,
        _ => return None,
    };
    normalize_host(raw).ok()
}

fn render(value: &Value) -> Result<String, String> {
    serde_json::to_string_pretty(value)
        .map(|text| format!("{text}\n"))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_bare_and_with_enable_and_note() {
        let text = r#"{"version": 1, "hosts": ["Docs.Example.com.",
            {"host": "api.example.com", "enable": false, "note": "parked"},
            {"host": "wiki.example.com", "note": "no enable means on"}, "docs.example.com"]}"#;
        assert_eq!(
            parse_grants(text).unwrap(),
            Grants {
                hosts: vec!["docs.example.com".into(), "wiki.example.com".into()],
                parked: vec!["api.example.com".into()],
            }
        );
    }

    #[test]
    fn a_bad_file_grants_nothing_and_says_why() {
        let cases = [
            ("{ broken", "not valid JSON"),
            ("[]", "no \"hosts\" list"),
            (r#"{"hosts": "a.com"}"#, "no \"hosts\" list"),
            (r#"{"hosts": [1]}"#, "hosts[0] must be"),
            (
                r#"{"hosts": [{"enable": true}]}"#,
                "hosts[0] has no \"host\"",
            ),
            (
                r#"{"hosts": ["ok.com", {"host": "x.com", "enable": "yes"}]}"#,
                "hosts[1].enable",
            ),
            (
                r#"{"hosts": ["*.example.com"]}"#,
                "hosts[0]: '*.example.com' is not a host name",
            ),
            (r#"{"hosts": ["https://a.com/x"]}"#, "hosts[0]"),
        ];
        for (text, expected) in cases {
            let error = parse_grants(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn add_and_remove_keep_other_entries() {
        let text = r#"{"version": 1, "hosts": [{"host": "keep.com", "enable": false, "note": "why"}, "old.com"]}"#;
        let added = add_grant(Some(text), "New.com", Some("RTS articles")).unwrap();
        let grants = parse_grants(&added).unwrap();
        assert_eq!(grants.hosts, ["old.com", "new.com"]);
        assert_eq!(grants.parked, ["keep.com"]);
        assert!(added.contains("\"note\": \"why\"") && added.contains("RTS articles"));
        let again = add_grant(Some(&added), "keep.com", None).unwrap();
        assert_eq!(
            parse_grants(&again).unwrap().hosts,
            ["old.com", "new.com", "keep.com"]
        );
        let removed = remove_grant(&again, "OLD.com").unwrap().unwrap();
        assert_eq!(
            parse_grants(&removed).unwrap().hosts,
            ["new.com", "keep.com"]
        );
        assert_eq!(remove_grant(&removed, "absent.com").unwrap(), None);
        assert!(add_grant(Some("{ broken"), "a.com", None).is_err());
        assert!(add_grant(None, "*.a.com", None).is_err());
        let fresh = add_grant(None, "a.com", None).unwrap();
        assert_eq!(parse_grants(&fresh).unwrap().hosts, ["a.com"]);
        assert_eq!(parse_grants(&starter_file()).unwrap(), Grants::default());
    }
}
