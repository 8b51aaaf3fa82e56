//! Reading, navigating and changing source trees: `read_file`,
//! `list_directory`, `list_empty_dirs`, `find_files`, `search_files`, and the
//! confined writers `write_file` and `edit_file`.
//!
//! Walking and searching are ripgrep's own crates (`ignore`, `globset`,
//! `grep-searcher`, `grep-regex`). Every function returns bounded plain text
//! or a typed [`ToolError`](wamcp_policy::error::ToolError), and says in words
//! whenever it did not show or did not look at something: a search that
//! silently stops early reads as "no matches" to a model that then trusts it.
//!
//! Output never depends on thread timing: a search walks in path order and
//! keeps each result by its file's place; a find sorts what it shows.

#![deny(missing_docs)]

mod budget;
mod confine;
mod edit;
mod empty;
mod file_lock;
mod find;
mod folder;
mod globs;
pub mod journal;
pub mod leftovers;
mod list;
mod ordered_walk;
mod paths;
mod read;
pub mod regular;
mod search;
mod secrets;
mod walk;
mod write;

pub use budget::{Bounds, Budget, Deadline};
pub use confine::{
    FsView, RealFs, Target, WriteScope, consent_needed, resolve_for_write, resolve_with,
};
pub use edit::edit_file;
pub use empty::list_empty_dirs;
pub use find::find_files;
pub use list::list_directory;
pub use read::{Scan, read_file, read_file_within, size_hint};
pub use search::{SearchRequest, search_files};
pub use secrets::{Secret, Secrets, secret_refusal};
pub use write::{write_file, write_output};
