//! The WinGet package inventory for `ecosystem_scan(include_packages)`:
//! what the user installed through WinGet, by id and version.
//!
//! `winget export` writes the inventory as JSON to a file, which survives
//! a change of console language or column width where the `winget list`
//! table would not. The file goes into a fresh temporary folder, removed
//! after.

use crate::packages::{manager, run};
use serde_json::{Value, json};
use std::time::Duration;
use wamcp_platform::search_path::ProgramSearch;
use wamcp_policy::text::shown;

/// How long `winget export` may take: it may refresh its source first.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(120);
/// The most an export file may hold to be read (thousands of packages
/// fit in a fraction of it).
const MAX_EXPORT_BYTES: u64 = 8 * 1024 * 1024;
/// Packages listed; the count says how many more there are.
const MAX_LISTED: usize = 200;

/// The inventory: `listed` with the packages, `missing` without WinGet,
/// or `unknown` with why it could not be read.
pub async fn winget_inventory(programs: &ProgramSearch) -> Value {
    let Some(program) = manager(programs, "winget") else {
        return json!({"state": "missing", "reason": "winget was not found on PATH"});
    };
    let folder = match tempfile::Builder::new().prefix("wamcp-winget-").tempdir() {
        Ok(folder) => folder,
        Err(e) => return unknown(format!("no temporary folder for the export: {e}")),
    };
    let file = folder.path().join("packages.json");
    let argv: Vec<String> = [
        "winget",
        "export",
        "-o",
        &file.display().to_string(),
        "--include-versions",
        "--accept-source-agreements",
        "--disable-interactivity",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = match run(programs, &program, &argv, EXPORT_TIMEOUT, None).await {
        Ok(out) => out,
        Err(e) => return unknown(e),
    };
    if out.timed_out {
        return unknown(format!(
            "winget export gave no answer within {} s",
            EXPORT_TIMEOUT.as_secs()
        ));
    }
    // winget exits non-zero when some installed packages have no source;
    // the file it wrote still lists every one that has.
    match wamcp_fs::regular::read_small(&file, MAX_EXPORT_BYTES) {
        Ok(bytes) => match parse_export(&String::from_utf8_lossy(&bytes)) {
            Ok(packages) => listed(packages),
            Err(e) => unknown(e),
        },
        Err(e) => unknown(format!(
            "winget export exited with {:?} and wrote no inventory ({e})",
            out.exit_code
        )),
    }
}

fn unknown(reason: String) -> Value {
    json!({"state": "unknown", "reason": reason})
}

fn listed(mut packages: Vec<Value>) -> Value {
    let total = packages.len();
    packages.truncate(MAX_LISTED);
    json!({"state": "listed", "count": total, "packages": packages})
}

/// The packages of a `winget export` file, by id, each with its version
/// and source where the file gives them. Ids and versions are shown
/// escaped: they come from the sources' manifests.
pub fn parse_export(text: &str) -> Result<Vec<Value>, String> {
    let export: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| format!("winget export wrote something other than its JSON ({e})"))?;
    let sources = export["Sources"]
        .as_array()
        .ok_or("winget export's file has no Sources list")?;
    let mut packages: Vec<Value> = sources
        .iter()
        .flat_map(|source| {
            let name = source["SourceDetails"]["Name"].as_str().map(shown);
            source["Packages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(move |package| {
                    let id = package["PackageIdentifier"].as_str()?;
                    Some(json!({
                        "id": shown(id),
                        "version": package["Version"].as_str().map(shown),
                        "source": name,
                    }))
                })
        })
        .collect();
    packages.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    Ok(packages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_lists_every_source_by_id() {
        let text = "\u{feff}{\"$schema\":\"https://aka.ms/winget-packages.schema.2.0.json\",\
            \"Sources\":[{\"Packages\":[{\"PackageIdentifier\":\"Kitware.CMake\",\"Version\":\"3.31.2\"},\
            {\"PackageIdentifier\":\"Git.Git\"}],\"SourceDetails\":{\"Name\":\"winget\"}},\
            {\"Packages\":[{\"PackageIdentifier\":\"9NBLGGH4NNS1\"},{\"Version\":\"no id\"}],\
            \"SourceDetails\":{\"Name\":\"msstore\"}}]}";
        assert_eq!(
            parse_export(text).unwrap(),
            [
                json!({"id": "9NBLGGH4NNS1", "version": null, "source": "msstore"}),
                json!({"id": "Git.Git", "version": null, "source": "winget"}),
                json!({"id": "Kitware.CMake", "version": "3.31.2", "source": "winget"}),
            ]
        );
        assert!(parse_export("{}").unwrap_err().contains("no Sources"));
        assert!(parse_export("Name Id").unwrap_err().contains("JSON"));
        let many: Vec<Value> = (0..250).map(|i| json!({"id": i})).collect();
        let view = listed(many);
        assert_eq!(view["count"], 250);
        assert_eq!(view["packages"].as_array().unwrap().len(), MAX_LISTED);
    }
}
