//! The README's configuration table, made from wamcp's settings table.

use wamcp::settings::{README_END, README_START, markdown_table};

pub fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        None => {
            print!("{}", markdown_table());
            Ok(())
        }
        Some("--write-readme") => {
            let path = crate::workspace().join("README.md");
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let start = text
                .find(README_START)
                .ok_or("the README has no settings start marker")?
                + README_START.len();
            let end = text
                .find(README_END)
                .ok_or("the README has no settings end marker")?;
            let updated = format!("{}\n{}{}", &text[..start], markdown_table(), &text[end..]);
            std::fs::write(&path, updated).map_err(|e| format!("{}: {e}", path.display()))?;
            println!("updated {}", path.display());
            Ok(())
        }
        Some(other) => Err(format!("unknown option {other}")),
    }
}
