//! The error envelope every failed tool call returns.
//!
//! A failure is data a model must act on, so it is always the same shape:
//! `{"ok": false, "error": {"type", "tool", "message", "recovery", ...}}`.
//! `recovery` exists to stop loops: a small model that sees only a message
//! retries the identical call until its context is gone, so the first recovery
//! line says, where it is true, that retrying the same call cannot help.

use serde_json::{Map, Value, json};

macro_rules! error_types {
    ($($variant:ident => $name:literal,)*) => {
        /// Every error `type` string the server can emit. The names are the
        /// seed's where the seed names them; new ones follow its style.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorType { $($variant,)* }

        impl ErrorType {
            pub const ALL: &'static [ErrorType] = &[$(ErrorType::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorType::$variant => $name,)* }
            }
        }
    };
}

error_types! {
    AppLaunchFailed => "APP_LAUNCH_FAILED",
    AppNotAllowed => "APP_NOT_ALLOWED",
    AppNotFound => "APP_NOT_FOUND",
    BuildAlreadyRunning => "BUILD_ALREADY_RUNNING",
    BuildStartFailed => "BUILD_START_FAILED",
    BuildTimedOut => "BUILD_TIMED_OUT",
    BuildToolNotFound => "BUILD_TOOL_NOT_FOUND",
    Cancelled => "CANCELLED",
    CommandNotAllowed => "COMMAND_NOT_ALLOWED",
    CommandTimeout => "COMMAND_TIMEOUT",
    ConfigurationError => "CONFIGURATION_ERROR",
    ContentTooLarge => "CONTENT_TOO_LARGE",
    DestinationExists => "DESTINATION_EXISTS",
    DirectoryReadFailed => "DIRECTORY_READ_FAILED",
    DirectoryWalkFailed => "DIRECTORY_WALK_FAILED",
    DownloadFailed => "DOWNLOAD_FAILED",
    DownloadNotAllowed => "DOWNLOAD_NOT_ALLOWED",
    DownloadTooLarge => "DOWNLOAD_TOO_LARGE",
    EditStringNotFound => "EDIT_STRING_NOT_FOUND",
    EditStringNotUnique => "EDIT_STRING_NOT_UNIQUE",
    FileChanged => "FILE_CHANGED",
    FileExists => "FILE_EXISTS",
    FileInUse => "FILE_IN_USE",
    ForegroundNotTaken => "FOREGROUND_NOT_TAKEN",
    GithubRequestFailed => "GITHUB_REQUEST_FAILED",
    GpuInfoFailed => "GPU_INFO_FAILED",
    HttpRequestFailed => "HTTP_REQUEST_FAILED",
    InputFailed => "INPUT_FAILED",
    InvalidArguments => "INVALID_ARGUMENTS",
    InvalidCommand => "INVALID_COMMAND",
    InvalidContent => "INVALID_CONTENT",
    InvalidEdit => "INVALID_EDIT",
    InvalidInput => "INVALID_INPUT",
    InvalidPath => "INVALID_PATH",
    InvalidPattern => "INVALID_PATTERN",
    InvalidProfile => "INVALID_PROFILE",
    InvalidQuery => "INVALID_QUERY",
    InvalidRepository => "INVALID_REPOSITORY",
    InvalidStage => "INVALID_STAGE",
    InvalidTextEncoding => "INVALID_TEXT_ENCODING",
    MissingProfile => "MISSING_PROFILE",
    MissingStage => "MISSING_STAGE",
    NoProjectRoot => "NO_PROJECT_ROOT",
    NotABuildCommand => "NOT_A_BUILD_COMMAND",
    NotARegularFile => "NOT_A_REGULAR_FILE",
    PageFetchFailed => "PAGE_FETCH_FAILED",
    PageHttpError => "PAGE_HTTP_ERROR",
    PageTooLarge => "PAGE_TOO_LARGE",
    PasswordField => "PASSWORD_FIELD",
    PathIsNotDirectory => "PATH_IS_NOT_DIRECTORY",
    PathIsNotFile => "PATH_IS_NOT_FILE",
    PathNotFound => "PATH_NOT_FOUND",
    PermissionDenied => "PERMISSION_DENIED",
    PowershellLaunchFailed => "POWERSHELL_LAUNCH_FAILED",
    ProtectedPath => "PROTECTED_PATH",
    ReadFailed => "READ_FAILED",
    ResponseTooLarge => "RESPONSE_TOO_LARGE",
    SandboxUnavailable => "SANDBOX_UNAVAILABLE",
    SearchBackendInvalid => "SEARCH_BACKEND_INVALID",
    SearchBlocked => "SEARCH_BLOCKED",
    SearchFailed => "SEARCH_FAILED",
    SearchUrlNotAllowed => "SEARCH_URL_NOT_ALLOWED",
    ShaderCompilerNotFound => "SHADER_COMPILER_NOT_FOUND",
    ShaderCompileStartFailed => "SHADER_COMPILE_START_FAILED",
    ShaderCompileTimedOut => "SHADER_COMPILE_TIMED_OUT",
    StartLineOutOfRange => "START_LINE_OUT_OF_RANGE",
    TargetAmbiguous => "TARGET_AMBIGUOUS",
    TargetDisabled => "TARGET_DISABLED",
    TargetNotFound => "TARGET_NOT_FOUND",
    TargetObscured => "TARGET_OBSCURED",
    UnknownCapability => "UNKNOWN_CAPABILITY",
    UnknownShaderType => "UNKNOWN_SHADER_TYPE",
    UnsupportedContentType => "UNSUPPORTED_CONTENT_TYPE",
    UnsupportedPlatform => "UNSUPPORTED_PLATFORM",
    UrlNotAllowed => "URL_NOT_ALLOWED",
    WebResearchDisabled => "WEB_RESEARCH_DISABLED",
    WindowNotFound => "WINDOW_NOT_FOUND",
    WindowNotResponding => "WINDOW_NOT_RESPONDING",
    WindowOutOfScope => "WINDOW_OUT_OF_SCOPE",
    WorkingDirectoryNotAllowed => "WORKING_DIRECTORY_NOT_ALLOWED",
    WriteFailed => "WRITE_FAILED",
    WritePathNotAllowed => "WRITE_PATH_NOT_ALLOWED",
}

/// Whether calling again with the same arguments could succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// The same call will fail the same way: say so first, to break loops.
    Hopeless,
    /// The failure may be transient (a timeout, a busy lock, a flaky server).
    MayHelp,
}

/// A tool failure before the tool's name is attached.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    pub kind: ErrorType,
    pub message: String,
    pub path: Option<String>,
    pub recovery: Vec<String>,
    pub retry: Retry,
    /// Extra context fields, rendered beside `message` in the envelope.
    /// Boxed to keep `Result<_, ToolError>` small on the success path.
    pub details: Box<Map<String, Value>>,
}

impl ToolError {
    /// A failure that retrying cannot fix; this is the common case.
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            path: None,
            recovery: Vec::new(),
            retry: Retry::Hopeless,
            details: Box::default(),
        }
    }

    /// A failure that may pass on a later try. `when` says when and how to
    /// try again: a retryable error without that step leaves a model either
    /// hammering the same call or giving up, so it cannot be built without one.
    pub fn retryable(mut self, when: impl Into<String>) -> Self {
        self.retry = Retry::MayHelp;
        self.recovery.insert(0, when.into());
        self
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub fn recover(mut self, step: impl Into<String>) -> Self {
        self.recovery.push(step.into());
        self
    }

    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// The envelope for a failure of `tool`.
    pub fn envelope(&self, tool: &str) -> Value {
        let mut recovery = Vec::with_capacity(self.recovery.len() + 1);
        if self.retry == Retry::Hopeless {
            recovery.push(format!(
                "DO NOT retry the identical {tool} call: it will fail the same way."
            ));
        }
        recovery.extend(self.recovery.iter().cloned());
        let mut error = Map::new();
        error.insert("type".into(), json!(self.kind.as_str()));
        error.insert("tool".into(), json!(tool));
        error.insert("message".into(), json!(self.message));
        if let Some(path) = &self.path {
            error.insert("path".into(), json!(path));
        }
        error.insert("recovery".into(), json!(recovery));
        for (key, value) in self.details.iter() {
            error.entry(key.clone()).or_insert_with(|| value.clone());
        }
        json!({ "ok": false, "error": error })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopeless_error_starts_recovery_with_do_not_retry() {
        let err = ToolError::new(ErrorType::PathNotFound, "No such file: a.txt")
            .with_path("a.txt")
            .recover("Use list_directory on the parent to see what exists.")
            .detail("ancestor", "/work");
        let text = serde_json::to_string_pretty(&err.envelope("read_file")).unwrap();
        assert_eq!(
            text,
            r#"{
  "ok": false,
  "error": {
    "type": "PATH_NOT_FOUND",
    "tool": "read_file",
    "message": "No such file: a.txt",
    "path": "a.txt",
    "recovery": [
      "DO NOT retry the identical read_file call: it will fail the same way.",
      "Use list_directory on the parent to see what exists."
    ],
    "ancestor": "/work"
  }
}"#
        );
    }

    #[test]
    fn retryable_error_has_no_do_not_retry_line() {
        let err = ToolError::new(ErrorType::CommandTimeout, "timed out")
            .recover("Or build less.")
            .retryable("Raise timeout_seconds.");
        let envelope = err.envelope("run_powershell");
        assert_eq!(
            envelope["error"]["recovery"],
            json!(["Raise timeout_seconds.", "Or build less."])
        );
    }

    #[test]
    fn details_never_replace_the_fixed_fields() {
        let err = ToolError::new(ErrorType::InvalidPath, "bad").detail("type", "EVIL");
        assert_eq!(err.envelope("x")["error"]["type"], "INVALID_PATH");
    }

    #[test]
    fn the_readme_lists_every_error_type() {
        let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let text = std::fs::read_to_string(readme).expect("README.md");
        let start = text
            .find("<!-- error-types:start -->")
            .expect("start marker");
        let end = text.find("<!-- error-types:end -->").expect("end marker");
        let listed: Vec<&str> = text[start..end].split('`').skip(1).step_by(2).collect();
        let known: Vec<&str> = ErrorType::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(listed, known, "README error-type list and ErrorType differ");
    }

    #[test]
    fn type_names_are_unique_screaming_snake() {
        let mut seen = std::collections::HashSet::new();
        for kind in ErrorType::ALL {
            let name = kind.as_str();
            assert!(seen.insert(name), "duplicate {name}");
            assert!(
                name.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{name}"
            );
        }
    }
}
