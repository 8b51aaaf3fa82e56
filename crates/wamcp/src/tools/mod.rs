//! One file per tool. Each declares its parameters, identity and `run`; the
//! registry table decides which are live.

pub mod build_project;
pub mod compile_shader;
pub mod download_file;
pub mod edit_file;
pub mod fetch_https_response;
pub mod find_files;
pub mod get_github_latest_release;
pub mod get_gpu_info;
pub mod get_server_info;
pub mod get_system_info;
pub mod list_directory;
pub mod list_empty_dirs;
pub mod read_file;
pub mod run_powershell;
pub mod search_files;
pub mod write_file;

use schemars::JsonSchema;
use serde::Deserialize;

/// Parameters of a tool that takes none. Unknown arguments are refused rather
/// than ignored, so a model learns that it passed something meaningless.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

fn dot() -> String {
    ".".to_string()
}
