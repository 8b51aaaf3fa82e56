//! The token report of the tool definitions, and the table
//! docs/performance.md carries.
//!
//! What is counted is what a model reads every turn: each tool's name,
//! description and input schema, as compact JSON. The annotations travel
//! in `tools/list` too, but the hosts keep them for themselves (Claude
//! Code and Codex hand the model name, description and schema only), so
//! they cost no context.

use tiktoken_rs::CoreBPE;
use wamcp::registry::{self, ToolEntry};
use wamcp_policy::groups::{Group, parse_groups};

/// The most the default set may cost, in cl100k tokens: its definitions
/// are re-sent every turn to every client that changes nothing.
const DEFAULT_BUDGET: usize = 2000;

/// The most every tool together may cost, registered as on Windows, where
/// the desktop tools exist too. It was 4,000 until the desktop group got a
/// budget of its own ([`DESKTOP_BUDGET`]); it grew by what that allows the
/// group beyond its cost then (899), so only the desktop group grew.
const ALL_BUDGET: usize = 4250;

/// The most the desktop group may cost on its own: what its eight tools
/// cost when the group's second pass (refs, pattern routes, change
/// reports, more actions) was asked for.
const DESKTOP_BUDGET: usize = 1157;

const ALL_LABEL: &str = "`all`";

const DESKTOP_LABEL: &str = "`desktop` alone";

const DEFAULT_LABEL: &str = "default (unset)";

struct Row {
    label: String,
    tools: Vec<&'static str>,
    chars: usize,
    o200k: usize,
    cl100k: usize,
}

pub fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        None => {
            print!("{}", Costs::measure()?.table());
            Ok(())
        }
        Some("--per-tool") => {
            let cl100k = tiktoken_rs::cl100k_base().map_err(|e| e.to_string())?;
            let mut costs: Vec<(usize, &str)> = registry::TOOLS
                .iter()
                .map(|t| {
                    let json = serde_json::to_string(&model_view(t)).unwrap_or_default();
                    (cl100k.encode_with_special_tokens(&json).len(), t.name)
                })
                .collect();
            costs.sort_by(|a, b| b.cmp(a));
            for (tokens, name) in costs {
                println!("{tokens:5}  {name}");
            }
            Ok(())
        }
        Some(other) => Err(format!("unknown option {other}")),
    }
}

/// What each selection of tools costs, counted once: loading the two
/// vocabularies is most of the work.
pub struct Costs {
    rows: Vec<Row>,
    /// What `see`'s tree of a typical window costs, in each form.
    pub snapshot: Vec<(&'static str, usize, usize)>,
}

impl Costs {
    pub fn measure() -> Result<Costs, String> {
        let o200k = tiktoken_rs::o200k_base().map_err(|e| e.to_string())?;
        let cl100k = tiktoken_rs::cl100k_base().map_err(|e| e.to_string())?;
        Ok(Costs {
            rows: rows(&o200k, &cl100k),
            snapshot: crate::snapshot::costs(&cl100k),
        })
    }

    /// The table docs/performance.md carries.
    pub fn table(&self) -> String {
        markdown(&self.rows)
    }

    /// Fails when the default set costs more than [`DEFAULT_BUDGET`],
    /// every tool together more than [`ALL_BUDGET`], the desktop group more
    /// than [`DESKTOP_BUDGET`] or `see`'s typical tree more than its own.
    pub fn check_budget(&self) -> Result<(), String> {
        for (label, budget, what) in [
            (DEFAULT_LABEL, DEFAULT_BUDGET, "the default tool set"),
            (ALL_LABEL, ALL_BUDGET, "every tool together"),
            (DESKTOP_LABEL, DESKTOP_BUDGET, "the desktop group"),
        ] {
            let cost = self
                .rows
                .iter()
                .find(|r| r.label == label)
                .map_or(0, |r| r.cl100k);
            if cost > budget {
                return Err(format!(
                    "{what} costs {cost} cl100k tokens, over the budget of {budget}: trim \
                     descriptions and schemas, or leave new tools out of the default groups"
                ));
            }
        }
        crate::snapshot::check_budget(&self.snapshot)
    }
}

/// A tool as a model reads it: name, description and input schema.
fn model_view(tool: &ToolEntry) -> serde_json::Value {
    let definition = tool.definition();
    serde_json::json!({
        "name": definition.name,
        "description": definition.description,
        "inputSchema": definition.input_schema,
    })
}

/// One row per group on its own (its tools only), then the sets people run.
fn rows(o200k: &CoreBPE, cl100k: &CoreBPE) -> Vec<Row> {
    let measure = |label: String, tools: Vec<&'static ToolEntry>| {
        let definitions: Vec<_> = tools.iter().map(|t| model_view(t)).collect();
        // Compact JSON, as the definitions travel on the wire.
        // An empty group costs nothing: it sends no definitions at all.
        let json = if definitions.is_empty() {
            String::new()
        } else {
            serde_json::to_string(&definitions).unwrap_or_default()
        };
        Row {
            label,
            tools: tools.iter().map(|t| t.name).collect(),
            chars: json.chars().count(),
            o200k: o200k.encode_with_special_tokens(&json).len(),
            cl100k: cl100k.encode_with_special_tokens(&json).len(),
        }
    };
    let mut rows: Vec<Row> = Group::ALL
        .iter()
        .map(|&g| {
            let only: Vec<_> = registry::TOOLS
                .iter()
                .filter(|t| t.groups.contains(&g))
                .collect();
            measure(format!("`{g}` alone"), only)
        })
        .collect();
    for (label, value) in [
        (DEFAULT_LABEL, None),
        ("`core,docs`", Some("core,docs")),
        (ALL_LABEL, Some("all")),
    ] {
        // As registered on Windows, where every tool exists, so the table
        // is the same whichever machine writes it.
        let selection = parse_groups(value, false);
        let tools = registry::TOOLS
            .iter()
            .filter(|t| t.in_any(&selection.groups))
            .collect();
        rows.push(measure(label.to_string(), tools));
    }
    rows
}

fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| Selection | Tools | Characters | o200k tokens | cl100k tokens |\n|---|---|---:|---:|---:|\n",
    );
    for row in rows {
        let tools = if row.tools.is_empty() {
            "(none yet)".to_string()
        } else {
            row.tools
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            row.label, tools, row.chars, row.o200k, row.cl100k
        ));
    }
    out
}
