//! The tool reference in docs/tools.md, made from the registry: what
//! `tools/list` sends, in a form people read. Generated, so a new
//! parameter or a renamed tool cannot leave the guide behind.

use serde_json::Value;
type JsonObject = serde_json::Map<String, Value>;
use wamcp::registry::{self, ToolEntry};

/// One row per tool, in registry order.
pub fn markdown() -> String {
    let mut out = String::from(
        "| Tool | Groups | Parameters | Effect | Description |\n|---|---|---|---|---|\n",
    );
    for tool in registry::TOOLS {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            tool.name,
            groups(tool),
            parameters(tool),
            effect(tool),
            cell(tool.description)
        ));
    }
    out
}

fn groups(tool: &ToolEntry) -> String {
    let names: Vec<String> = tool.groups.iter().map(|g| format!("`{g}`")).collect();
    let platform = if tool.windows_only { " (Windows)" } else { "" };
    format!("{}{platform}", names.join(", "))
}

/// What the annotations tell a host, in words.
fn effect(tool: &ToolEntry) -> &'static str {
    let h = tool.hints;
    match (h.read_only, h.open_world) {
        (true, false) => "reads",
        (true, true) => "reads the network",
        (false, true) => "writes, reaches the network",
        (false, false) if h.destructive => "writes, may replace",
        (false, false) => "writes",
    }
}

/// `name` type, with `= default` where the schema has one, `?` where the
/// parameter may be left out, and the schema's own words on it (its
/// limits, mostly).
fn parameters(tool: &ToolEntry) -> String {
    let definition = tool.definition();
    let schema = definition.input_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "none".into();
    };
    if properties.is_empty() {
        return "none".into();
    }
    let no_defs = JsonObject::new();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&no_defs);
    let params: Vec<String> = properties
        .iter()
        .map(|(name, prop)| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let default = prop
                .get("default")
                .map(|d| format!(" = {}", d.to_string().replace('|', "\\|")))
                .unwrap_or_default();
            let about = prop
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!(": {}", cell(d)))
                .unwrap_or_default();
            format!(
                "`{name}{optional}` {}{default}{about}",
                type_name(prop, defs)
            )
        })
        .collect();
    params.join("<br>")
}

/// A schema's type in a few words: `string`, `integer`, `"a" or "b"`,
/// `array of string`; a `$ref` is looked up in the schema's `$defs`.
fn type_name(prop: &Value, defs: &JsonObject) -> String {
    if let Some(target) = prop
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs.get(name))
    {
        return type_name(target, defs);
    }
    if let Some(values) = prop.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| format!("`{v}`"))
            .collect();
        return values.join(" or ");
    }
    let kinds: Vec<String> = match prop.get("type") {
        Some(Value::String(kind)) => vec![kind.clone()],
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| *k != "null")
            .map(str::to_string)
            .collect(),
        _ => ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| prop.get(*k).and_then(Value::as_array))
            .flatten()
            .map(|p| type_name(p, defs))
            .filter(|k| !k.is_empty() && k != "null")
            .collect(),
    };
    let kinds: Vec<String> = kinds
        .into_iter()
        .map(|kind| match (kind.as_str(), prop.get("items")) {
            ("array", Some(items)) => format!("array of {}", type_name(items, defs)),
            _ => kind,
        })
        .collect();
    if kinds.is_empty() {
        "any".into()
    } else {
        kinds.join(" or ")
    }
}

/// Text fit for one table cell: one line, `|` escaped, and `<` `>`
/// outside code spans written as entities so `id:<n>` is not taken for
/// an HTML tag.
fn cell(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    line.split('`')
        .enumerate()
        .map(|(i, part)| {
            let part = part.replace('|', "\\|");
            if i % 2 == 0 {
                part.replace('<', "&lt;").replace('>', "&gt;")
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_one_line_with_tags_and_pipes_escaped() {
        assert_eq!(
            cell("id:<n> or `a|<b>`\n  next | line"),
            "id:&lt;n&gt; or `a\\|<b>` next \\| line"
        );
    }
}
