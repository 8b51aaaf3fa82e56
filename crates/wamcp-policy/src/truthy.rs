//! The one definition of a "yes" in an environment variable or setting.

/// `1`, `true`, `yes` and `on`, case-insensitive and trimmed, are yes; anything
/// else, including an empty string, is no.
pub fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

#[cfg(test)]
mod tests {
    use super::is_truthy;

    #[test]
    fn accepts_the_four_spellings_in_any_case() {
        for yes in ["1", "true", "TRUE", " yes ", "On", "\tON\n"] {
            assert!(is_truthy(yes), "{yes:?} should be truthy");
        }
    }

    #[test]
    fn refuses_everything_else() {
        for no in ["", "0", "false", "no", "off", "2", "y", "enable", "1 1"] {
            assert!(!is_truthy(no), "{no:?} should not be truthy");
        }
    }
}
