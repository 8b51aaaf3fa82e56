//! The kinds of values a setting takes, with one parser each.
//!
//! A parser answers the value or what is wrong with the text; the reader
//! ([`super::Settings`]) turns the latter into a setting warning that names
//! the setting and the value it used instead. No kind reads an unknown word
//! as a silent "no": a switch says which value an unrecognised word means,
//! and that is always the one that grants less.

/// What values a setting takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Yes (`1`, `true`, `yes`, `on`) or no (`0`, `false`, `no`, `off`), in
    /// any case; `default` when empty, `unrecognised` for any other word.
    Switch { default: bool, unrecognised: bool },
    /// A switch or `auto`: off when empty or unrecognised.
    SwitchOrAuto,
    /// One of `values`, the first when empty; another value is reported and
    /// `unrecognised` used, or kept as written (`None`) for the tool that
    /// uses it to refuse.
    Choice {
        values: &'static [&'static str],
        unrecognised: Option<&'static str>,
    },
    /// A whole number of `unit`s (seconds, MiB, days) within bounds.
    Whole {
        min: u64,
        max: u64,
        default: u64,
        unit: &'static str,
    },
    /// An absolute path.
    AbsolutePath,
    /// A file; a relative one is taken from the working directory.
    File,
    /// Paths separated like `PATH`.
    Paths,
    /// Names separated by any of these characters.
    List(&'static [char]),
    /// Text with a grammar of its own (tool groups, a log filter, a profile).
    Text,
}

/// The words that mean yes and no.
const YES: [&str; 4] = ["1", "true", "yes", "on"];
const NO: [&str; 4] = ["0", "false", "no", "off"];

/// A switch's value: `None` for a word that is neither yes nor no.
pub fn switch(text: &str) -> Option<bool> {
    let word = text.trim().to_ascii_lowercase();
    if YES.contains(&word.as_str()) {
        Some(true)
    } else if NO.contains(&word.as_str()) {
        Some(false)
    } else {
        None
    }
}

/// A whole number of `unit`s from `min` to `max`.
pub fn whole(text: &str, min: u64, max: u64, unit: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "is not a whole number of {unit} from {min} to {max}"
        )),
    }
}

/// One of `values`, matched without regard to case.
pub fn choice(text: &str, values: &[&'static str]) -> Result<&'static str, String> {
    let word = text.trim().to_ascii_lowercase();
    values
        .iter()
        .find(|v| **v == word)
        .copied()
        .ok_or_else(|| format!("is not one of {}", values.join(", ")))
}

/// Non-empty names, split at any of `separators`.
pub fn list(text: &str, separators: &[char]) -> Vec<String> {
    text.split(separators)
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_knows_both_answers_and_nothing_else() {
        for yes in ["1", "true", "TRUE", " yes ", "On"] {
            assert_eq!(switch(yes), Some(true), "{yes:?}");
        }
        for no in ["0", "false", "No", " off\n"] {
            assert_eq!(switch(no), Some(false), "{no:?}");
        }
        for neither in ["", "2", "y", "enable", "disable", "1 1", "offf"] {
            assert_eq!(switch(neither), None, "{neither:?}");
        }
    }

    #[test]
    fn seconds_and_choices_say_what_they_take() {
        assert_eq!(whole(" 30 ", 1, 600, "seconds"), Ok(30));
        for bad in ["0", "601", "1.5", "-3", "ten"] {
            assert_eq!(
                whole(bad, 1, 600, "seconds"),
                Err("is not a whole number of seconds from 1 to 600".into())
            );
        }
        assert_eq!(
            choice("Require", &["auto", "off", "require"]),
            Ok("require")
        );
        assert_eq!(
            choice("strict", &["auto", "off", "require"]),
            Err("is not one of auto, off, require".into())
        );
        assert_eq!(list(" a;b ,, c", &[',', ';', ' ']), ["a", "b", "c"]);
    }
}
