//! The command approvals file on disk ("allow for this project"): read
//! fresh before every question, written when the user ticks "always".
//! It lives in wamcp's data folder, where no command or tool writes; a
//! file that some command could reach is read as allowing nothing.

use crate::context::ServerContext;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wamcp_policy::command::approvals::Approvals;

/// The file's name in the data folder.
const FILE_NAME: &str = "command-approvals.json";

/// One writer at a time in this server: read, add, write back.
static WRITING: Mutex<()> = Mutex::new(());

/// The approvals file, when wamcp has a data folder no command can write.
pub fn file(ctx: &ServerContext) -> Option<PathBuf> {
    let file = ctx.places.data_dir.as_ref()?.join(FILE_NAME);
    ctx.places
        .untrusted_because(&file)
        .is_none()
        .then_some(file)
}

/// Whether the user allowed exactly `command` in `project` for good.
pub fn allowed(ctx: &ServerContext, project: &Path, command: &str) -> bool {
    let Some(file) = file(ctx) else {
        return false;
    };
    read(&file).is_ok_and(|approvals| approvals.allows(&key(project), command))
}

/// Allows `command` in `project` from now on.
pub fn remember(ctx: &ServerContext, project: &Path, command: &str) -> Result<PathBuf, String> {
    let file =
        file(ctx).ok_or("wamcp has no data folder outside the writable roots to keep it in")?;
    let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let mut approvals = read(&file)?;
    approvals.add(&key(project), command);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    crate::hostgrants::write(&file, &approvals.to_text())?;
    Ok(file)
}

fn read(file: &Path) -> Result<Approvals, String> {
    match crate::hostgrants::read_text(file)? {
        None => Ok(Approvals::default()),
        Some(text) => Approvals::parse(&text).map_err(|e| format!("{}: {e}", file.display())),
    }
}

fn key(project: &Path) -> String {
    project.display().to_string()
}
