//! The grammar file format and its compilation into lookup tables.
//!
//! A grammar is written as data (`rules/grammars/*.json`) in a compact form:
//! an option is a string such as `"-n|--max-count="`. The names before the
//! suffix are aliases; the suffix says what follows the option:
//!
//! | suffix      | meaning                                                        |
//! |-------------|----------------------------------------------------------------|
//! | (none)      | a flag: no value                                               |
//! | `=`         | a value: attached (`--opt=v`, `-nv`) or the next argument      |
//! | `=text`     | a value that is never a path (a message, a search pattern)     |
//! | `=?`        | an optional value, only when attached (`--abbrev=7`)           |
//! | `=?out`     | the same, naming a path the program writes (`=?path`: reads)   |
//! | `=path`     | a value naming a path the program reads                       |
//! | `=out`      | a value naming a path the program writes                      |
//! | `=@table`   | a value checked against the grammar's table of that name      |
//! | `=module`   | a value naming a module; the rest of argv belongs to it        |
//! | `=>grammar` | no value; the rest of argv is judged by another grammar        |
//! | `=>#module` | no value; the rest of argv is judged by the grammar's module   |
//!
//! A name ending in `*` is a prefix pattern (`-W*`, `-fplugin*`) that takes
//! the whole word. Options listed under `prompt` or `forbid` carry the reason
//! shown to the user; they take part in abbreviation matching, so a prefix
//! of a forbidden option is never mistaken for an allowed one.

use super::rules::Decision;
use serde::Deserialize;
use std::collections::BTreeMap;

/// What comes after an option word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Takes {
    /// A flag: no value follows.
    Nothing,
    /// A value, attached (`--opt=v`, `-nv`) or the next argument.
    Value,
    /// Only a value attached to the same word.
    Attached,
    /// A module name; the remaining words are the module's.
    Module,
    /// The remaining words are judged by the named grammar.
    Delegate(String),
    /// The remaining words are judged by the named module of this grammar
    /// (a mode such as `cmake --build`).
    Mode(String),
}

/// What a value must satisfy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueCheck {
    /// Any value; one that names a trust location is still asked about,
    /// since a program may take any value as a file name.
    Free,
    /// Text that is never used as a path: not checked at all.
    Text,
    /// A path that is read.
    Path,
    /// A path that is written.
    Output,
    /// Checked against the grammar's table of this name (`=@table`).
    Table(String),
}

/// One option, compiled.
#[derive(Clone, Debug)]
pub struct Opt {
    /// The canonical (first) name, for messages.
    pub name: String,
    /// What follows the option word.
    pub takes: Takes,
    /// What its value must satisfy, when it takes one.
    pub check: ValueCheck,
    /// Allowed, asked about (listed under
    /// `prompt`) or forbidden (under `forbid`).
    pub decision: Decision,
    /// The reason shown to the user when the
    /// option is asked about or forbidden.
    pub why: String,
}

/// Positional arguments of a command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Args {
    /// Allowed anywhere; options are still recognised after them.
    #[default]
    Any,
    /// Not expected: one is asked about.
    None,
    /// The first one ends option parsing; it and the rest are data (a
    /// script and its arguments).
    Free,
    /// Each is checked against a table; options continue after them.
    Table(String),
    /// Every remaining word, options included, belongs to something this
    /// grammar does not judge (a test runner's own arguments).
    Rest,
    /// Every remaining word is data, not parsed as an option, but each is
    /// still checked for naming a trust file (`cmake -E copy a b`).
    Data,
}

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "any" => Ok(Args::Any),
            "none" => Ok(Args::None),
            "free" => Ok(Args::Free),
            "rest" => Ok(Args::Rest),
            "data" => Ok(Args::Data),
            t if t.starts_with('@') => Ok(Args::Table(t[1..].to_string())),
            other => Err(serde::de::Error::custom(format!(
                "args must be any, none, free, rest, data or @table, not {other:?}"
            ))),
        }
    }
}

/// A command or subcommand as written in a grammar file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// Allowed options in the compact form (`"-n|--max-count="`), or `"@set"`.
    #[serde(default)]
    pub options: Vec<String>,
    /// Options asked about, each with the reason shown to the user.
    #[serde(default)]
    pub prompt: BTreeMap<String, String>,
    /// Options refused, each with the reason shown to the user.
    #[serde(default)]
    pub forbid: BTreeMap<String, String>,
    /// Keys may name aliases: `"i|install|add"`.
    #[serde(default)]
    pub subcommands: BTreeMap<String, CommandSpec>,
    /// Whether a positional that is not a listed subcommand is asked about
    /// (true) or taken as an argument of this command (false).
    #[serde(default = "yes")]
    pub subcommand_required: bool,
    /// How this command's positional arguments are judged.
    #[serde(default)]
    pub args: Args,
    /// Words after `--`; unset, the grammar's `after_dashdash`.
    #[serde(default)]
    pub after_dashdash: Option<Args>,
    /// The parent's options stay valid after this subcommand.
    #[serde(default)]
    pub inherit: bool,
    /// The whole rest of the command is judged by this grammar instead.
    #[serde(default)]
    pub delegate: Option<String>,
    /// A decision for reaching this command at all (with `why`).
    #[serde(default)]
    pub decision: Option<Decision>,
    /// The reason shown with `decision`.
    #[serde(default)]
    pub why: Option<String>,
    /// A program-specific reading of the positionals (see `grammar.rs`).
    #[serde(default)]
    pub special: Option<String>,
    /// Whether reaching this command lets the process use the network
    /// (`git fetch`, `npm install`); the deepest command that says decides.
    #[serde(default)]
    pub network: Option<bool>,
}

fn yes() -> bool {
    true
}

/// A table of allowed, asked-about and forbidden values.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// What the table is for, for the grammar's readers; never shown.
    #[serde(default, rename = "_why")]
    pub about: Option<String>,
    /// Glob patterns (`*` matches any run of characters), compared
    /// case-insensitively.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Glob patterns of values asked about.
    #[serde(default)]
    pub prompt: Vec<String>,
    /// Glob patterns of values refused, with `why`.
    #[serde(default)]
    pub forbid: Vec<String>,
    /// Why a forbidden value is forbidden.
    #[serde(default)]
    pub why: String,
    /// Compare only the part before `=` (a `key=value` assignment).
    #[serde(default)]
    pub key: bool,
    /// Characters that separate several values in one argument.
    #[serde(default)]
    pub split: String,
    /// Whole `name=value` assignments allowed as they are, compared exactly
    /// (case-insensitively): a C compiler chosen by its plain name, while
    /// the name alone is forbidden.
    #[serde(default)]
    pub pairs: Vec<String>,
    /// With `key`: an allowed key's value must be plain too (no path, no
    /// `..`, no expression); otherwise the pair is asked about.
    #[serde(default)]
    pub plain_values: bool,
    /// The decision for a plain word no pattern names: letters, digits and
    /// `_ . + -`, not starting with `-` (a build target, a number).
    #[serde(default)]
    pub plain: Option<Decision>,
    /// The decision for a value no pattern names (with `why` when forbidden).
    #[serde(default = "prompt_decision")]
    pub unknown: Decision,
}

fn prompt_decision() -> Decision {
    Decision::Prompt
}

/// Examples checked when the grammar loads.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Examples {
    /// Command lines the grammar must allow.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Command lines it must ask about.
    #[serde(default)]
    pub prompt: Vec<String>,
    /// Command lines it must refuse.
    #[serde(default)]
    pub forbidden: Vec<String>,
}

/// A grammar file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrammarSpec {
    /// The grammar's name, used by `=>grammar` delegation and in messages.
    pub id: String,
    /// What the grammar covers and why, for its readers; never shown.
    #[serde(default, rename = "_about")]
    pub about: Option<String>,
    /// Program names the grammar judges (`git`, `npm`).
    pub programs: Vec<String>,
    /// Unique prefixes of `--long` options are accepted (git, GNU tools).
    #[serde(default)]
    pub abbreviations: bool,
    /// `--no-<flag>` negates any listed flag (git's parse-options).
    #[serde(default)]
    pub negation: bool,
    /// Single-letter flags combine (`-abc`).
    #[serde(default)]
    pub cluster: bool,
    /// Option names compare case-insensitively (MSBuild, link).
    #[serde(default)]
    pub case_insensitive: bool,
    /// `/opt` is the same as `-opt`, and `--opt` too (MSVC tools, MSBuild).
    #[serde(default)]
    pub slash: bool,
    /// Words after `--` where a command does not say: asked about, unless
    /// the program really ends its options there (`free`). Several do not
    /// (ctest, link, MSBuild-forwarding tools keep parsing).
    #[serde(default = "no_args")]
    pub after_dashdash: Args,
    /// Characters that attach a value to a long option.
    #[serde(default = "equals")]
    pub value_separators: String,
    /// A one-letter option's value may be glued to it (`-Iinclude`, `/DX`).
    /// Off for programs that only take `-x value` or `-x:value`, where
    /// `--frob` must not read as `-f` with the value `rob`.
    #[serde(default = "yes")]
    pub glued_values: bool,
    /// `@file` arguments read more options from a file nobody checked.
    #[serde(default)]
    pub response_files: bool,
    /// Tar's first word may be a cluster without its dash (`tar xzf a.tgz`).
    #[serde(default)]
    pub dashless_first_cluster: bool,
    /// Any argument matching one of these globs is refused, with the reason.
    #[serde(default)]
    pub forbid_words: BTreeMap<String, String>,
    /// Option lists shared by several commands, included as `"@name"`.
    #[serde(default)]
    pub option_sets: BTreeMap<String, Vec<String>>,
    /// Value tables, referred to as `=@name` or `"args": "@name"`.
    #[serde(default)]
    pub tables: BTreeMap<String, Table>,
    /// Commands reached by `=module` or `=>#module`
    /// rather than by a subcommand word.
    #[serde(default)]
    pub modules: BTreeMap<String, CommandSpec>,
    /// Options (by first name) that give the command the network
    /// (`msbuild -restore`).
    #[serde(default)]
    pub network_options: Vec<String>,
    /// Options that take it away again (`cargo build --offline`): a build
    /// script then runs without it too.
    #[serde(default)]
    pub offline_options: Vec<String>,
    /// The top-level command: options and subcommands of the program itself.
    pub command: CommandSpec,
    /// Command lines checked when the grammar loads.
    #[serde(default)]
    pub examples: Examples,
}

fn no_args() -> Args {
    Args::None
}

fn equals() -> String {
    "=".to_string()
}

/// Parses an option spec such as `-n|--max-count=`.
pub fn parse_option(
    spec: &str,
    decision: Decision,
    why: &str,
) -> Result<(Vec<String>, Opt), String> {
    let (names, suffix) = match spec.find("=") {
        Some(at) => (&spec[..at], &spec[at..]),
        None => (spec, ""),
    };
    let (takes, check) = match suffix {
        "" => (Takes::Nothing, ValueCheck::Free),
        "=" => (Takes::Value, ValueCheck::Free),
        "=text" => (Takes::Value, ValueCheck::Text),
        "=?" => (Takes::Attached, ValueCheck::Free),
        "=?path" => (Takes::Attached, ValueCheck::Path),
        "=?out" => (Takes::Attached, ValueCheck::Output),
        "=path" => (Takes::Value, ValueCheck::Path),
        "=out" => (Takes::Value, ValueCheck::Output),
        "=module" => (Takes::Module, ValueCheck::Free),
        s if s.starts_with("=@") => (Takes::Value, ValueCheck::Table(s[2..].to_string())),
        s if s.starts_with("=>#") => (Takes::Mode(s[3..].to_string()), ValueCheck::Free),
        s if s.starts_with("=>") => (Takes::Delegate(s[2..].to_string()), ValueCheck::Free),
        other => return Err(format!("option {spec:?}: unknown suffix {other:?}")),
    };
    let names: Vec<String> = names.split('|').map(str::to_string).collect();
    if names
        .iter()
        .any(|n| n != "-" && (n.len() < 2 || !(n.starts_with('-') || n.starts_with('+'))))
    {
        return Err(format!(
            "option {spec:?}: every name must start with '-' (or '+')"
        ));
    }
    let opt = Opt {
        name: names[0].trim_end_matches('*').to_string(),
        takes,
        check,
        decision,
        why: why.to_string(),
    };
    Ok((names, opt))
}

/// Whether `text` matches `pattern`, where `*` matches any run of
/// characters, `?` any one and `%` one ASCII digit. Both are compared as
/// given; callers fold case.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point: linear in practice and
    // never recursive, so a hostile value cannot blow the stack.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len()
            && (p[pi] == t[ti] || p[pi] == '?' || (p[pi] == '%' && t[ti].is_ascii_digit()))
        {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_specs_parse_into_names_and_kinds() {
        let (names, opt) = parse_option("-n|--max-count=", Decision::Allow, "").unwrap();
        assert_eq!(names, ["-n", "--max-count"]);
        assert_eq!((opt.takes, opt.check), (Takes::Value, ValueCheck::Free));
        let (_, opt) = parse_option("-c=@config", Decision::Allow, "").unwrap();
        assert_eq!(opt.check, ValueCheck::Table("config".into()));
        let (_, opt) = parse_option("-link=>link", Decision::Allow, "").unwrap();
        assert_eq!(opt.takes, Takes::Delegate("link".into()));
        let (_, opt) = parse_option("--build=>#build", Decision::Allow, "").unwrap();
        assert_eq!(opt.takes, Takes::Mode("build".into()));
        let (_, opt) = parse_option("--abbrev=?", Decision::Allow, "").unwrap();
        assert_eq!(opt.takes, Takes::Attached);
        assert!(parse_option("--x=bogus", Decision::Allow, "").is_err());
        assert!(parse_option("x", Decision::Allow, "").is_err());
        assert!(parse_option("-a|", Decision::Allow, "").is_err());
    }

    #[test]
    fn globs() {
        for (p, t, want) in [
            ("alias.*", "alias.x", true),
            ("*.cmd", "browser.firefox.cmd", true),
            ("*.cmd", "cmd", false),
            ("core.editor", "core.editor", true),
            ("core.editor", "core.editorx", false),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("*", "", true),
            ("?:\\*", "c:\\x", true),
            ("?:\\*", "host:x", false),
            ("-j%", "-j8", true),
            ("-j%", "-jE", false),
            ("-j%%", "-j8", false),
            ("", "x", false),
        ] {
            assert_eq!(glob_match(p, t), want, "{p} {t}");
        }
    }
}
