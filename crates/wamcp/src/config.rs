//! The config file: where it is, what it says, and how it combines with the
//! environment.
//!
//! Precedence for every setting: environment, then the active profile, then
//! the file's `settings`, then the built-in default. An empty value at any
//! layer means "not set here". Every time the environment overrides a
//! different value from the file, the override is recorded, because a
//! silently ignored setting is exactly the confusion a config file is meant
//! to remove.
//!
//! A file with any problem (malformed JSON, an unknown setting, a bad profile)
//! is ignored as a whole and the reason kept for `get_server_info`: the server
//! must still start, since a failed start shows up in an MCP client as an
//! opaque connection error, and a half-applied file is harder to reason about
//! than none.

use crate::settings::{self, CONFIG_FILE, PROFILE, TOOLS};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wamcp_policy::groups::validate_group_list;
use wamcp_policy::limits::MAX_CONFIG_FILE_BYTES;

/// Reads one environment variable; the indirection keeps resolution testable.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The value of `name`, trimmed, or `None` when unset or blank.
pub fn env_value(env: EnvLookup, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// One profile from the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: String,
    pub enable: bool,
    pub description: String,
    /// A `WAMCP_TOOLS` value; empty means "the default set".
    pub tools: String,
    pub settings: BTreeMap<String, String>,
}

/// A config file that passed validation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigFile {
    /// Non-empty setting values, by name.
    pub settings: BTreeMap<String, String>,
    pub active_profile: Option<String>,
    pub profiles: Vec<Profile>,
}

impl ConfigFile {
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }
}

/// Where a resolved value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Default,
    File,
    Profile(String),
    Environment,
}

impl Source {
    pub fn describe(&self) -> String {
        match self {
            Source::Default => "default".into(),
            Source::File => "config file".into(),
            Source::Profile(name) => format!("profile '{name}'"),
            Source::Environment => "environment".into(),
        }
    }
}

/// The settings in effect for this run.
#[derive(Clone, Debug)]
pub struct Resolution {
    values: BTreeMap<&'static str, (Option<String>, Source)>,
    pub active_profile: Option<String>,
    /// Why the file (or the profile selection) was not used, if it was not.
    pub config_error: Option<String>,
    /// One line per environment variable that replaced a different value.
    pub overrides: Vec<String>,
}

impl Resolution {
    /// The effective value of a setting, `None` meaning "use the default".
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(|(v, _)| v.as_deref())
    }

    pub fn source(&self, name: &str) -> Source {
        self.values
            .get(name)
            .map(|(_, s)| s.clone())
            .unwrap_or(Source::Default)
    }
}

/// Combines a loaded file with the environment.
///
/// `file` is `Ok(None)` when there is no file, `Err` when it could not be read
/// or failed validation (its message becomes `config_error`).
pub fn resolve(file: Result<Option<ConfigFile>, String>, env: EnvLookup) -> Resolution {
    let mut config_error = None;
    let file = match file {
        Ok(file) => file,
        Err(message) => {
            config_error = Some(message);
            None
        }
    };
    let mut overrides = Vec::new();
    let (usable_file, active_profile) =
        choose_profile(file, env, &mut config_error, &mut overrides);
    let mut values = BTreeMap::new();
    for setting in settings::SETTINGS {
        let name = setting.name;
        let below_env = below_environment(name, usable_file.as_ref(), active_profile.as_ref());
        let resolved = match (env_value(env, name), below_env) {
            (Some(from_env), lower) => {
                if let Some((lower_value, lower_source)) = lower
                    && lower_value != from_env
                {
                    overrides.push(format!(
                        "{name}='{from_env}' from the environment overrides '{lower_value}' from the {}",
                        lower_source.describe()
                    ));
                }
                (Some(from_env), Source::Environment)
            }
            (None, Some((value, source))) => (Some(value), source),
            (None, None) => (None, Source::Default),
        };
        values.insert(name, resolved);
    }
    Resolution {
        values,
        active_profile: active_profile.map(|p| p.name),
        config_error,
        overrides,
    }
}

/// The profile the environment or the file selects, and the file still
/// usable with it. A profile that is disabled or not defined sets the file
/// aside (the server runs on defaults and says why in `config_error`); an
/// environment choice that replaces the file's is an override.
fn choose_profile(
    file: Option<ConfigFile>,
    env: EnvLookup,
    config_error: &mut Option<String>,
    overrides: &mut Vec<String>,
) -> (Option<ConfigFile>, Option<Profile>) {
    let env_profile = env_value(env, PROFILE);
    let file_profile = file.as_ref().and_then(|f| f.active_profile.clone());
    if let (Some(chosen), Some(written)) = (&env_profile, &file_profile)
        && chosen != written
    {
        overrides.push(format!(
            "{PROFILE}='{chosen}' from the environment replaces active_profile '{written}' from the config file"
        ));
    }
    let Some(name) = env_profile.clone().or(file_profile) else {
        return (file, None);
    };
    let selected_by = if env_profile.is_some() {
        PROFILE
    } else {
        "active_profile"
    };
    match file.as_ref().map(|f| f.profile(&name)) {
        Some(Some(profile)) if profile.enable => {
            let profile = profile.clone();
            (file, Some(profile))
        }
        Some(Some(_)) => {
            *config_error = Some(format!(
                "Profile '{name}' (selected by {selected_by}) is disabled (\"enable\": false). \
                 Running on defaults; enable it in the config file or choose another profile."
            ));
            (None, None)
        }
        Some(None) => {
            let known: Vec<&str> = file
                .iter()
                .flat_map(|f| f.profiles.iter().map(|p| p.name.as_str()))
                .collect();
            *config_error = Some(format!(
                "Profile '{name}' (selected by {selected_by}) is not defined in the config file. \
                 Known profiles: {}. Running on defaults.",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
            (None, None)
        }
        None => {
            if config_error.is_none() {
                *config_error = Some(format!(
                    "Profile '{name}' (selected by {selected_by}) cannot be used: there is no \
                     config file. Running on defaults."
                ));
            }
            (None, None)
        }
    }
}

/// A setting's value below the environment: the active profile's, else
/// the file's, with where it came from.
fn below_environment(
    name: &str,
    file: Option<&ConfigFile>,
    profile: Option<&Profile>,
) -> Option<(String, Source)> {
    let from_profile = profile.and_then(|p| {
        let value = if name == TOOLS {
            Some(p.tools.clone()).filter(|t| !t.trim().is_empty())
        } else {
            p.settings.get(name).cloned()
        };
        value.map(|v| (v, Source::Profile(p.name.clone())))
    });
    from_profile.or_else(|| {
        file.and_then(|f| f.settings.get(name).cloned())
            .map(|v| (v, Source::File))
    })
}

/// Finds the config file: `WAMCP_CONFIG_FILE`, else the per-user file
/// (which may not exist yet). `None` only when no per-user directory can be
/// determined. A project's own `input/config.json` is read only when named:
/// the working directory is often a folder the agent can write (a client
/// lists it as a root after start-up, or an earlier session had it as one),
/// and a file there could switch confinement off for the next start.
pub fn locate(env: EnvLookup, cwd: &Path) -> Option<PathBuf> {
    if let Some(path) = env_value(env, CONFIG_FILE) {
        return Some(cwd.join(path));
    }
    user_config_dir(env).map(|dir| dir.join("wamcp").join("config.json"))
}

/// `%APPDATA%` on Windows; `$XDG_CONFIG_HOME` or `~/.config` elsewhere.
pub fn user_config_dir(env: EnvLookup) -> Option<PathBuf> {
    user_dir(env, "APPDATA", "XDG_CONFIG_HOME", &[".config"])
}

/// `%LOCALAPPDATA%` on Windows; `$XDG_DATA_HOME` or `~/.local/share` elsewhere.
pub fn user_data_dir(env: EnvLookup) -> Option<PathBuf> {
    user_dir(env, "LOCALAPPDATA", "XDG_DATA_HOME", &[".local", "share"])
}

/// wamcp's own folder in the per-user data directory, where the audit
/// trail, sandbox bundles and downloads go unless `WAMCP_DATA_DIR` says
/// otherwise.
pub fn wamcp_data_dir(env: EnvLookup) -> Option<PathBuf> {
    user_data_dir(env).map(|d| d.join("wamcp"))
}

/// A per-user directory: the Windows variable, or the XDG variable (ignored
/// when relative, as the XDG spec requires) with its fallback under `$HOME`.
fn user_dir(
    env: EnvLookup,
    windows_var: &str,
    xdg_var: &str,
    under_home: &[&str],
) -> Option<PathBuf> {
    if cfg!(windows) {
        return env_value(env, windows_var).map(PathBuf::from);
    }
    env_value(env, xdg_var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            env_value(env, "HOME").map(|home| {
                under_home
                    .iter()
                    .fold(PathBuf::from(home), |p, part| p.join(part))
            })
        })
}

/// Reads and validates a config file. `Ok(None)` when it does not exist.
pub fn load(path: &Path) -> Result<Option<ConfigFile>, String> {
    let shown = path.display();
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(format!(
                "Cannot read config file {shown}: {e}. Running on defaults."
            ));
        }
    };
    if !metadata.is_file() {
        return Err(format!(
            "Config file {shown} is not a file. Running on defaults."
        ));
    }
    if metadata.len() > MAX_CONFIG_FILE_BYTES {
        return Err(format!(
            "Config file {shown} is {} bytes, more than the {MAX_CONFIG_FILE_BYTES}-byte limit. Running on defaults.",
            metadata.len()
        ));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| format!("Cannot read config file {shown}: {e}. Running on defaults."))?;
    parse(&bytes).map(Some).map_err(|problems| {
        format!(
            "Config file {shown} was ignored, running on defaults: {}",
            problems.join("; ")
        )
    })
}

/// Validates the text of a config file, listing every problem found.
pub fn parse(bytes: &[u8]) -> Result<ConfigFile, Vec<String>> {
    // Notepad and PowerShell 5 write a UTF-8 BOM; serde_json refuses it.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let root: Value =
        serde_json::from_slice(bytes).map_err(|e| vec![format!("invalid JSON: {e}")])?;
    let Value::Object(root) = root else {
        return Err(vec!["the top level must be a JSON object".into()]);
    };
    let mut problems = Vec::new();
    let mut config = ConfigFile::default();
    for (key, value) in &root {
        match key.as_str() {
            "version" => {
                if value != &json!(1) {
                    problems.push(format!("\"version\" is {value}, but only version 1 is understood"));
                }
            }
            "settings" => {
                config.settings = read_settings(value, "settings", false, &mut problems);
            }
            "active_profile" => match value {
                Value::String(s) if s.trim().is_empty() => {}
                Value::String(s) => config.active_profile = Some(s.trim().to_string()),
                other => problems.push(format!("\"active_profile\" must be a string, not {}", kind(other))),
            },
            "profiles" => config.profiles = read_profiles(value, &mut problems),
            // Keys starting with '_' are comments, as in the generated file.
            k if k.starts_with('_') => {}
            other => problems.push(format!(
                "unknown top-level key \"{other}\" (expected version, settings, active_profile, profiles)"
            )),
        }
    }
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(problems)
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads a settings object: each entry a plain string or `{value, default, description}`.
fn read_settings(
    value: &Value,
    at: &str,
    in_profile: bool,
    problems: &mut Vec<String>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Value::Object(entries) = value else {
        problems.push(format!("\"{at}\" must be an object, not {}", kind(value)));
        return out;
    };
    for (name, entry) in entries {
        if in_profile && name == TOOLS {
            problems.push(format!(
                "{at}: {TOOLS} cannot be set inside a profile's settings; use the profile's \"tools\" field"
            ));
            continue;
        }
        if settings::find(name).is_none() {
            let hint = if settings::any(name).is_some() {
                " (it selects the file or profile, or is needed before they are read, so it can \
                 only come from the environment)"
                    .to_string()
            } else {
                format!(
                    " (known settings: {})",
                    settings::file_settings()
                        .map(|s| s.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            problems.push(format!("{at}: unknown setting \"{name}\"{hint}"));
            continue;
        }
        let text = match entry {
            Value::String(s) => Some(s.clone()),
            Value::Object(fields) => {
                for field in fields.keys() {
                    if !matches!(field.as_str(), "value" | "default" | "description") {
                        problems.push(format!(
                            "{at}.{name}: unknown field \"{field}\" (expected value, default, description)"
                        ));
                    }
                }
                match fields.get("value") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(other) => {
                        problems.push(format!(
                            "{at}.{name}.value must be a string, not {} (write \"1\", not 1)",
                            kind(other)
                        ));
                        None
                    }
                }
            }
            other => {
                problems.push(format!(
                    "{at}.{name} must be a string or an object with \"value\", not {}",
                    kind(other)
                ));
                None
            }
        };
        if let Some(text) = text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) {
            if name == TOOLS
                && let Err(message) = validate_group_list(&text)
            {
                problems.push(format!("{at}.{name}: {message}"));
            }
            out.insert(name.clone(), text);
        }
    }
    out
}

fn read_profiles(value: &Value, problems: &mut Vec<String>) -> Vec<Profile> {
    let Value::Object(entries) = value else {
        problems.push(format!(
            "\"profiles\" must be an object, not {}",
            kind(value)
        ));
        return Vec::new();
    };
    let mut profiles = Vec::new();
    for (name, body) in entries {
        let at = format!("profiles.{name}");
        // Profile names become keys in client configs and TOML tables.
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            problems.push(format!(
                "{at}: profile names may use only letters, digits, '-' and '_' (1-64 characters)"
            ));
            continue;
        }
        let Value::Object(fields) = body else {
            problems.push(format!("{at} must be an object, not {}", kind(body)));
            continue;
        };
        let mut profile = Profile {
            name: name.clone(),
            enable: true,
            description: String::new(),
            tools: String::new(),
            settings: BTreeMap::new(),
        };
        for (field, value) in fields {
            match (field.as_str(), value) {
                ("enable", Value::Bool(b)) => profile.enable = *b,
                ("description", Value::String(s)) => profile.description = s.clone(),
                ("tools", Value::String(s)) => {
                    if let Err(message) = validate_group_list(s) {
                        problems.push(format!("{at}.tools: {message}"));
                    }
                    profile.tools = s.trim().to_string();
                }
                ("settings", v) => profile.settings = read_settings(v, &format!("{at}.settings"), true, problems),
                ("enable" | "description" | "tools", other) => problems.push(format!(
                    "{at}.{field} must be {}, not {}",
                    if field == "enable" { "true or false" } else { "a string" },
                    kind(other)
                )),
                (other, _) => problems.push(format!(
                    "{at}: unknown field \"{other}\" (expected enable, description, tools, settings)"
                )),
            }
        }
        profiles.push(profile);
    }
    profiles
}

/// The file `config --init` writes: every setting with
/// its default and description, and a few starting profiles.
pub fn default_file() -> Value {
    let mut settings = Map::new();
    for setting in settings::file_settings() {
        settings.insert(
            setting.name.to_string(),
            json!({ "value": "", "default": setting.default, "description": setting.description }),
        );
    }
    json!({
        "version": 1,
        "_about": "wamcp configuration. Fill in a setting's \"value\" to change it; leave it empty for the \
                   default shown beside it. An environment variable of the same name overrides this file \
                   for one run. Select a profile with active_profile, or WAMCP_PROFILE in a client's env block.",
        "settings": settings,
        "active_profile": "",
        "profiles": {
            "cpp": {
                "enable": true,
                "description": "C++ / Vulkan work: edit, build and read documentation. Add \
                                WAMCP_PROJECT_ROOTS to this profile's settings to allow writes.",
                "tools": "edit,build,docs",
                "settings": {}
            },
            "review": {
                "enable": true,
                "description": "Review and build without write access.",
                "tools": "build,docs",
                "settings": {}
            },
            "explore": {
                "enable": true,
                "description": "Read-only exploration: no writes, no commands, no network.",
                "tools": "core",
                "settings": {}
            },
            "research": {
                "enable": false,
                "description": "Web search plus reading any public host. Read docs/web.md on what it \
                                lets the model reach before enabling.",
                "tools": "core,docs,research",
                "settings": {}
            }
        }
    })
}

/// Writes the default file at `path`, creating its directory, without ever
/// replacing an existing file unless `force` is set. Written to a temporary
/// file first so a crash or a second server starting at the same moment never
/// leaves a half-written config behind.
pub fn write_default(path: &Path, force: bool) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut text = serde_json::to_string_pretty(&default_file()).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut temp = tempfile::Builder::new()
        .prefix(".wamcp-config-")
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut temp, text.as_bytes())?;
    temp.as_file().sync_all()?;
    if force {
        temp.persist(path).map_err(|e| e.error)?;
    } else {
        temp.persist_noclobber(path).map_err(|e| e.error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name: &str| map.get(name).cloned()
    }

    const FILE: &str = r#"{
        "version": 1,
        "settings": {
            "WAMCP_TOOLS": {"value": "core,docs", "default": "x", "description": "y"},
            "WAMCP_DOWNLOAD_ROOT": "/file/downloads",
            "WAMCP_SEARCH_BACKEND": {"value": "", "default": "duckduckgo", "description": ""}
        },
        "active_profile": "",
        "profiles": {
            "cpp": {"tools": "edit,build,docs", "settings": {"WAMCP_DOWNLOAD_ROOT": "/profile/dl"}},
            "bare": {"description": "no tools field"},
            "off": {"enable": false, "tools": "core"}
        }
    }"#;

    fn resolve_with(file: &str, env: &[(&str, &str)]) -> Resolution {
        let parsed = parse(file.as_bytes()).map_err(|p| p.join("; "));
        resolve(parsed.map(Some), &env_of(env))
    }

    #[test]
    fn precedence_table() {
        // (environment, setting, expected value, expected source)
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, Option<&'a str>, Source);
        let cases: &[Case] = &[
            (&[], TOOLS, Some("core,docs"), Source::File),
            (
                &[],
                "WAMCP_DOWNLOAD_ROOT",
                Some("/file/downloads"),
                Source::File,
            ),
            (&[], "WAMCP_SEARCH_BACKEND", None, Source::Default),
            (&[], "WAMCP_PROJECT_ROOTS", None, Source::Default),
            (
                &[("WAMCP_TOOLS", "core")],
                TOOLS,
                Some("core"),
                Source::Environment,
            ),
            (
                &[("WAMCP_TOOLS", "   ")],
                TOOLS,
                Some("core,docs"),
                Source::File,
            ),
            (
                &[("WAMCP_PROFILE", "cpp")],
                TOOLS,
                Some("edit,build,docs"),
                Source::Profile("cpp".into()),
            ),
            (
                &[("WAMCP_PROFILE", "cpp")],
                "WAMCP_DOWNLOAD_ROOT",
                Some("/profile/dl"),
                Source::Profile("cpp".into()),
            ),
            (
                &[("WAMCP_PROFILE", "bare")],
                TOOLS,
                Some("core,docs"),
                Source::File,
            ),
            (
                &[("WAMCP_PROFILE", "cpp"), ("WAMCP_TOOLS", "all")],
                TOOLS,
                Some("all"),
                Source::Environment,
            ),
            (
                &[("WAMCP_PROFILE", "cpp"), ("WAMCP_DOWNLOAD_ROOT", "/env")],
                "WAMCP_DOWNLOAD_ROOT",
                Some("/env"),
                Source::Environment,
            ),
            (&[("WAMCP_PROFILE", "off")], TOOLS, None, Source::Default),
            (
                &[("WAMCP_PROFILE", "missing")],
                "WAMCP_DOWNLOAD_ROOT",
                None,
                Source::Default,
            ),
        ];
        for (env, name, value, source) in cases {
            let r = resolve_with(FILE, env);
            assert_eq!(r.get(name), *value, "{env:?} {name}");
            assert_eq!(r.source(name), *source, "{env:?} {name}");
        }
    }

    #[test]
    fn overrides_are_reported_only_when_the_value_differs() {
        let r = resolve_with(
            FILE,
            &[
                ("WAMCP_TOOLS", "core,docs"),
                ("WAMCP_DOWNLOAD_ROOT", "/env"),
            ],
        );
        assert_eq!(
            r.overrides,
            [
                "WAMCP_DOWNLOAD_ROOT='/env' from the environment overrides '/file/downloads' from the config file"
            ]
        );
        assert_eq!(r.config_error, None);
    }

    #[test]
    fn profile_problems_set_the_file_aside() {
        let r = resolve_with(FILE, &[("WAMCP_PROFILE", "off")]);
        assert!(
            r.config_error
                .unwrap()
                .contains("Profile 'off' (selected by WAMCP_PROFILE) is disabled")
        );
        assert_eq!(r.active_profile, None);
        let r = resolve_with(FILE, &[("WAMCP_PROFILE", "missing")]);
        assert!(
            r.config_error
                .unwrap()
                .contains("Known profiles: cpp, bare, off.")
        );
        let r = resolve(Ok(None), &env_of(&[("WAMCP_PROFILE", "cpp")]));
        assert!(r.config_error.unwrap().contains("there is no config file"));
    }

    #[test]
    fn active_profile_in_the_file_is_used_and_can_be_replaced_by_the_environment() {
        let file = FILE.replace(r#""active_profile": """#, r#""active_profile": "cpp""#);
        let r = resolve_with(&file, &[]);
        assert_eq!(r.active_profile.as_deref(), Some("cpp"));
        assert!(r.overrides.is_empty());
        let r = resolve_with(&file, &[("WAMCP_PROFILE", "bare")]);
        assert_eq!(r.active_profile.as_deref(), Some("bare"));
        assert_eq!(
            r.overrides,
            [
                "WAMCP_PROFILE='bare' from the environment replaces active_profile 'cpp' from the config file"
            ]
        );
    }

    #[test]
    fn an_unreadable_file_keeps_its_reason_and_the_environment_still_applies() {
        let r = resolve(Err("broken".into()), &env_of(&[("WAMCP_TOOLS", "core")]));
        assert_eq!(r.config_error.as_deref(), Some("broken"));
        assert_eq!(r.get(TOOLS), Some("core"));
    }

    #[test]
    fn validation_reports_every_problem() {
        let cases: &[(&str, &str)] = &[
            ("[]", "the top level must be a JSON object"),
            ("{\"version\": 2}", "only version 1 is understood"),
            ("{\"extra\": 1}", "unknown top-level key \"extra\""),
            (
                "{\"settings\": []}",
                "\"settings\" must be an object, not an array",
            ),
            (
                "{\"settings\": {\"WAMCP_PROFILE\": \"x\"}}",
                "can only come from the environment",
            ),
            (
                "{\"settings\": {\"WAMCP_WEB_RESEARCH\": {\"value\": 1}}}",
                "write \"1\", not 1",
            ),
            (
                "{\"settings\": {\"WAMCP_TOOLS\": {\"valeu\": \"core\"}}}",
                "unknown field \"valeu\"",
            ),
            (
                "{\"settings\": {\"WAMCP_TOOLS\": \"core,cpp\"}}",
                "settings.WAMCP_TOOLS: Unknown tool group 'cpp'",
            ),
            (
                "{\"active_profile\": 3}",
                "\"active_profile\" must be a string, not a number",
            ),
            (
                "{\"profiles\": {\"a b\": {}}}",
                "profile names may use only",
            ),
            (
                "{\"profiles\": {\"p\": {\"enable\": \"yes\"}}}",
                "profiles.p.enable must be true or false",
            ),
            (
                "{\"profiles\": {\"p\": {\"settings\": {\"WAMCP_TOOLS\": \"core\"}}}}",
                "use the profile's \"tools\" field",
            ),
            (
                "{\"profiles\": {\"p\": {\"tool\": \"core\"}}}",
                "unknown field \"tool\"",
            ),
            (
                "{\"settings\": {\"WAMCP_TOOLS\": \"core\",}}",
                "invalid JSON",
            ),
        ];
        for (text, want) in cases {
            let problems = parse(text.as_bytes()).expect_err(text);
            assert!(
                problems.iter().any(|p| p.contains(want)),
                "{text}: {problems:?}"
            );
        }
        let problems = parse(br#"{"version": 3, "settings": {"NOPE": ""}, "x": 1}"#).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
    }

    #[test]
    fn a_bom_comments_and_empty_values_are_accepted() {
        let file = parse(b"\xEF\xBB\xBF{\"_note\": \"hi\", \"settings\": {\"WAMCP_TOOLS\": \"\"}}")
            .unwrap();
        assert!(file.settings.is_empty());
    }

    #[test]
    fn the_generated_file_is_valid_and_documents_every_setting() {
        let text = serde_json::to_vec(&default_file()).unwrap();
        let file = parse(&text).expect("the default file must load");
        assert!(file.settings.is_empty(), "defaults leave every value empty");
        let names: Vec<&str> = file.profiles.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["cpp", "review", "explore", "research"]);
        let value = default_file();
        for setting in settings::file_settings() {
            assert_eq!(
                value["settings"][setting.name]["description"],
                setting.description
            );
        }
    }

    #[test]
    fn write_default_never_clobbers_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("config.json");
        write_default(&path, false).unwrap();
        std::fs::write(&path, "{}").unwrap();
        let err = write_default(&path, false).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        write_default(&path, true).unwrap();
        assert!(load(&path).unwrap().is_some());
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary files left behind");
    }

    #[test]
    fn oversized_and_non_file_configs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path()).unwrap_err().contains("is not a file"));
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; (MAX_CONFIG_FILE_BYTES + 1) as usize]).unwrap();
        assert!(load(&big).unwrap_err().contains("limit"));
        assert_eq!(load(&dir.path().join("absent.json")), Ok(None));
    }

    #[test]
    fn locate_prefers_the_variable_then_the_user_dir_never_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let env = env_of(&[
            ("HOME", "/h"),
            ("APPDATA", "C:\\h"),
            ("XDG_CONFIG_HOME", ""),
        ]);
        let user = locate(&env, cwd).unwrap();
        let expected = if cfg!(windows) {
            PathBuf::from("C:\\h")
        } else {
            PathBuf::from("/h/.config")
        };
        assert_eq!(user, expected.join("wamcp").join("config.json"));
        // A project's own file is not picked up by itself.
        std::fs::create_dir_all(cwd.join("input")).unwrap();
        std::fs::write(cwd.join("input").join("config.json"), "{}").unwrap();
        assert_eq!(
            locate(&env, cwd).unwrap(),
            expected.join("wamcp").join("config.json")
        );
        let env = env_of(&[("WAMCP_CONFIG_FILE", "custom.json")]);
        assert_eq!(locate(&env, cwd), Some(cwd.join("custom.json")));
    }
}
