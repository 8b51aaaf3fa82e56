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

    let env_profile = env_value(env, PROFILE);
    let file_profile = file.as_ref().and_then(|f| f.active_profile.clone());
    if let (Some(chosen), Some(written)) = (&env_profile, &file_profile)
        && chosen != written
    {
        overrides.push(format!(
            "{PROFILE}='{chosen}' from the environment replaces active_profile '{written}' from the config file"
        ));
    }
    let wanted_profile = env_profile.clone().or(file_profile);

    let mut usable_file = file;
    let mut active_profile = None;
    if let Some(name) = wanted_profile {
        let selected_by = if env_profile.is_some() {
            PROFILE
        } else {
            "active_profile"
        };
        match usable_file.as_ref().map(|f| f.profile(&name)) {
            Some(Some(profile)) if profile.enable => active_profile = Some(profile.clone()),
            Some(Some(_)) => {
                config_error = Some(format!(
                    "Profile '{name}' (selected by {selected_by}) is disabled (\"enable\": false). \
                     Running on defaults; enable it in the config file or choose another profile."
                ));
                usable_file = None;
            }
            Some(None) => {
                let known: Vec<&str> = usable_file
                    .iter()
                    .flat_map(|f| f.profiles.iter().map(|p| p.name.as_str()))
                    .collect();
                config_error = Some(format!(
                    "Profile '{name}' (selected by {selected_by}) is not defined in the config file. \
                     Known profiles: {}. Running on defaults.",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
                usable_file = None;
            }
            None if config_error.is_none() => {
                config_error = Some(format!(
                    "Profile '{name}' (selected by {selected_by}) cannot be used: there is no \
                     config file. Running on defaults."
                ));
            }
            None => {}
        }
    }

    let mut values = BTreeMap::new();
    for setting in settings::SETTINGS {
        let name = setting.name;
        let from_file = usable_file
            .as_ref()
            .and_then(|f| f.settings.get(name).cloned());
        let from_profile = active_profile.as_ref().and_then(|p| {
            if name == TOOLS {
                Some(p.tools.clone()).filter(|t| !t.trim().is_empty())
            } else {
                p.settings.get(name).cloned()
            }
        });
        let below_env = match (&from_profile, &from_file) {
            (Some(v), _) => Some((
                v.clone(),
                Source::Profile(active_profile.as_ref().unwrap().name.clone()),
            )),
            (None, Some(v)) => Some((v.clone(), Source::File)),
            (None, None) => None,
        };
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

/// How the config file was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    /// True when named by `WAMCP_CONFIG_FILE`.
    pub explicit: bool,
}

/// Finds the config file: `WAMCP_CONFIG_FILE`, else `input/config.json` under
/// the working directory if it exists, else the per-user file (which may not
/// exist yet). `None` only when no per-user directory can be determined.
pub fn locate(env: EnvLookup, cwd: &Path) -> Option<Location> {
    if let Some(path) = env_value(env, CONFIG_FILE) {
        return Some(Location {
            path: cwd.join(path),
            explicit: true,
        });
    }
    let local = cwd.join("input").join("config.json");
    if local.is_file() {
        return Some(Location {
            path: local,
            explicit: false,
        });
    }
    user_config_dir(env).map(|dir| Location {
        path: dir.join("wamcp").join("config.json"),
        explicit: false,
    })
}

/// `%APPDATA%` on Windows; `$XDG_CONFIG_HOME` or `~/.config` elsewhere.
pub fn user_config_dir(env: EnvLookup) -> Option<PathBuf> {
    if cfg!(windows) {
        env_value(env, "APPDATA").map(PathBuf::from)
    } else {
        env_value(env, "XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| env_value(env, "HOME").map(|h| PathBuf::from(h).join(".config")))
    }
}

/// `%LOCALAPPDATA%` on Windows; `$XDG_DATA_HOME` or `~/.local/share` elsewhere.
pub fn user_data_dir(env: EnvLookup) -> Option<PathBuf> {
    if cfg!(windows) {
        env_value(env, "LOCALAPPDATA").map(PathBuf::from)
    } else {
        env_value(env, "XDG_DATA_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                env_value(env, "HOME").map(|h| PathBuf::from(h).join(".local").join("share"))
            })
    }
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
            let hint = if name == CONFIG_FILE || name == PROFILE {
                " (it selects the file or profile, so it can only come from the environment)"
                    .to_string()
            } else {
                format!(
                    " (known settings: {})",
                    settings::SETTINGS
                        .iter()
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

/// The file written on first run and by `config --init`: every setting with
/// its default and description, and a few starting profiles.
pub fn default_file() -> Value {
    let mut settings = Map::new();
    for setting in settings::SETTINGS {
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
                "description": "Web search plus reading any public host. Read the web research notes \
                                in the README before enabling.",
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
