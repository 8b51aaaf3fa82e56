//! JSON Schema for the enums that tool parameters take.
//!
//! A tool's schema is sent to the model on every turn, so it carries only
//! what the model needs; the parameter that takes an enum says what its
//! values mean, in fewer tokens than a description per value. Doc comments
//! on the variants are for Rust readers, and must not change the schema.

use schemars::Schema;
use serde_json::Value;

/// Keeps a unit enum's schema the bare list of its names however its
/// variants are documented: `#[schemars(transform = names_only)]`. Without
/// it, a documented variant becomes a `oneOf` entry with a description.
pub fn names_only(schema: &mut Schema) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::Array(variants)) = map.remove("oneOf") else {
        return;
    };
    let names: Vec<Value> = variants
        .iter()
        .filter_map(|v| v.get("const").cloned())
        .collect();
    let rest = std::mem::take(map);
    map.insert("type".into(), "string".into());
    map.insert("enum".into(), names.into());
    map.extend(rest);
}

#[cfg(test)]
mod tests {
    use crate::devenv::audit::Filter;
    use crate::devenv::packages::Source;
    use crate::devenv::sandbox::{Environment, Requirement};
    use schemars::{JsonSchema, schema_for};
    use serde_json::{Value, json};

    /// The schema as it was before the variants had docs: the names, and
    /// a description only where the enum's own doc was already sent.
    fn bare<T: JsonSchema>(names: &[&str], description: Option<&str>) -> (Value, Value) {
        let got = serde_json::to_value(schema_for!(T)).unwrap_or_default();
        let mut want = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": T::schema_name(),
            "type": "string",
            "enum": names,
        });
        if let Some(text) = description {
            want["description"] = json!(text);
        }
        (got, want)
    }

    #[test]
    fn documented_parameter_enums_keep_their_bare_schemas() {
        for (got, want) in [
            bare::<Filter>(
                &["all", "failures", "installs", "sandbox", "approvals"],
                Some(
                    "The `logs_query` filters. `failures` admits failed runs and started\nruns \
                     whose effect is unknown.",
                ),
            ),
            bare::<Source>(&["winget", "chocolatey", "scoop", "apt", "brew"], None),
            bare::<Environment>(&["auto", "wsl", "dev_container", "windows_sandbox"], None),
            bare::<Requirement>(
                &[
                    "linux_compatibility",
                    "project_reproducibility",
                    "untrusted_windows",
                ],
                None,
            ),
        ] {
            assert_eq!(got, want);
        }
    }
}
