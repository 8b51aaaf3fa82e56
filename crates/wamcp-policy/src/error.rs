//! The error envelope every failed tool call returns.
//!
//! A failure is data a model must act on, so it is always the same shape:
//! `{"ok": false, "error": {"type", "tool", "message", "recovery", ...}}`.
//! `recovery` exists to stop loops: a small model that sees only a message
//! retries the identical call until its context is gone, so the first recovery
//! line says, where it is true, that retrying the same call cannot help.

use serde_json::{Map, Value, json};

macro_rules! error_types {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        /// Every error `type` string the server can emit. Clients match on
        /// these names, so they never change; each states its cause.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorType { $($(#[$doc])* $variant,)* }

        impl ErrorType {
            /// Every error type, in the order docs/errors.md lists them.
            pub const ALL: &'static [ErrorType] = &[$(ErrorType::$variant,)*];

            /// The `type` string the envelope carries (`PATH_NOT_FOUND`).
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorType::$variant => $name,)* }
            }
        }
    };
}

error_types! {
    /// `open_app` found the program, but it did not start.
    AppLaunchFailed => "APP_LAUNCH_FAILED",
    /// `open_app` was asked for a program the user did not list, or one in a
    /// folder the agent can write.
    AppNotAllowed => "APP_NOT_ALLOWED",
    /// A program `WAMCP_DESKTOP_APPS` lists is not installed where it says.
    AppNotFound => "APP_NOT_FOUND",
    /// Another build is running in the same project.
    BuildAlreadyRunning => "BUILD_ALREADY_RUNNING",
    /// The build driver was found but could not be started.
    BuildStartFailed => "BUILD_START_FAILED",
    /// The build ran past its timeout and was
    /// killed with everything it started.
    BuildTimedOut => "BUILD_TIMED_OUT",
    /// The build driver is not on the PATH.
    BuildToolNotFound => "BUILD_TOOL_NOT_FOUND",
    /// The client cancelled the call or closed the
    /// connection; what it started was stopped.
    Cancelled => "CANCELLED",
    /// The command policy refused the command, or the user declined it.
    CommandNotAllowed => "COMMAND_NOT_ALLOWED",
    /// The command ran past its timeout; it and
    /// every process it started were killed.
    CommandTimeout => "COMMAND_TIMEOUT",
    /// The server's setup cannot serve the call (no
    /// data directory, a broken capability catalog).
    ConfigurationError => "CONFIGURATION_ERROR",
    /// The content or the edited file is over the
    /// size `write_file` or `edit_file` handles.
    ContentTooLarge => "CONTENT_TOO_LARGE",
    /// `download_file` would replace a file that already exists.
    DestinationExists => "DESTINATION_EXISTS",
    /// A directory could not be listed.
    DirectoryReadFailed => "DIRECTORY_READ_FAILED",
    /// A walk of a directory tree failed; no tool raises it at present.
    DirectoryWalkFailed => "DIRECTORY_WALK_FAILED",
    /// A download failed in transfer or while
    /// saving, or no file name could be made for it.
    DownloadFailed => "DOWNLOAD_FAILED",
    /// The download URL is not HTTPS to an allowed network host.
    DownloadNotAllowed => "DOWNLOAD_NOT_ALLOWED",
    /// The file is over `MAX_DOWNLOAD_BYTES`, as declared or as it streamed.
    DownloadTooLarge => "DOWNLOAD_TOO_LARGE",
    /// `edit_file`'s `old_string` is not in the file.
    EditStringNotFound => "EDIT_STRING_NOT_FOUND",
    /// `old_string` occurs more than once, so
    /// applying the edit would be a guess.
    EditStringNotUnique => "EDIT_STRING_NOT_UNIQUE",
    /// The file changed on disk while `edit_file`
    /// worked on it; nothing was written.
    FileChanged => "FILE_CHANGED",
    /// `write_file` found the file already
    /// there and was not asked to replace it.
    FileExists => "FILE_EXISTS",
    /// Another program holds the file open, so it cannot be used now.
    FileInUse => "FILE_IN_USE",
    /// An input action needed the window in front,
    /// and it did not come there or lost it.
    ForegroundNotTaken => "FOREGROUND_NOT_TAKEN",
    /// The release lookup failed: no release, GitHub's
    /// rate limit, or an answer not understood.
    GithubRequestFailed => "GITHUB_REQUEST_FAILED",
    /// `fetch_https_response` failed, or the HTTPS client could not start.
    HttpRequestFailed => "HTTP_REQUEST_FAILED",
    /// Synthetic input failed, or another
    /// desktop action held the input too long.
    InputFailed => "INPUT_FAILED",
    /// The tool failed in a way its code never meant to (a bug): the call
    /// is answered, with what is known, instead of never.
    InternalError => "INTERNAL_ERROR",
    /// The arguments do not fit the tool's schema
    /// or its rules (a bad target, key notation).
    InvalidArguments => "INVALID_ARGUMENTS",
    /// The command is empty.
    InvalidCommand => "INVALID_COMMAND",
    /// `write_file`'s content holds a NUL character, so it is not text.
    InvalidContent => "INVALID_CONTENT",
    /// The edit is empty or would change nothing.
    InvalidEdit => "INVALID_EDIT",
    /// An argument of an `env`, `packages` or
    /// `sandbox` tool is malformed or out of range.
    InvalidInput => "INVALID_INPUT",
    /// A path is empty, holds a NUL, or cannot be resolved safely.
    InvalidPath => "INVALID_PATH",
    /// A glob or search pattern is empty or does not compile.
    InvalidPattern => "INVALID_PATTERN",
    /// The shader profile is not one the compiler accepts.
    InvalidProfile => "INVALID_PROFILE",
    /// The `web_search` query is empty or too long.
    InvalidQuery => "INVALID_QUERY",
    /// The repository is not a plain `owner/name`.
    InvalidRepository => "INVALID_REPOSITORY",
    /// The shader stage is unknown, or does not fit the file's language.
    InvalidStage => "INVALID_STAGE",
    /// The file is not text the tool can handle safely: not UTF-8, or binary.
    InvalidTextEncoding => "INVALID_TEXT_ENCODING",
    /// The shader needs a profile and none was given.
    MissingProfile => "MISSING_PROFILE",
    /// A `.glsl` file needs a stage and none was given.
    MissingStage => "MISSING_STAGE",
    /// No project folder is known, so there is nowhere to run programs.
    NoProjectRoot => "NO_PROJECT_ROOT",
    /// `build_project`'s command does not start with a build driver.
    NotABuildCommand => "NOT_A_BUILD_COMMAND",
    /// The path is a device, pipe or socket, which
    /// is never opened: reading could block forever.
    NotARegularFile => "NOT_A_REGULAR_FILE",
    /// `fetch_web_page` could not fetch or read the page.
    PageFetchFailed => "PAGE_FETCH_FAILED",
    /// The page's server answered with an HTTP error status.
    PageHttpError => "PAGE_HTTP_ERROR",
    /// The page is over `MAX_PAGE_BYTES`.
    PageTooLarge => "PAGE_TOO_LARGE",
    /// The target is a password field, which wamcp never reads or types into.
    PasswordField => "PASSWORD_FIELD",
    /// A directory was expected, and the path is a file.
    PathIsNotDirectory => "PATH_IS_NOT_DIRECTORY",
    /// A file was expected, and the path is a directory.
    PathIsNotFile => "PATH_IS_NOT_FILE",
    /// Nothing exists at the path.
    PathNotFound => "PATH_NOT_FOUND",
    /// The operating system refused access, or the file is read-only.
    PermissionDenied => "PERMISSION_DENIED",
    /// The program, or PowerShell itself, could not be started.
    PowershellLaunchFailed => "POWERSHELL_LAUNCH_FAILED",
    /// The path is a trust file, or a guarded
    /// path whose write the user did not approve.
    ProtectedPath => "PROTECTED_PATH",
    /// Reading failed partway, or the tool itself stopped unexpectedly.
    ReadFailed => "READ_FAILED",
    /// The response body is over `MAX_HTTP_BYTES`.
    ResponseTooLarge => "RESPONSE_TOO_LARGE",
    /// Commands must run confined, and the confinement is not available here.
    SandboxUnavailable => "SANDBOX_UNAVAILABLE",
    /// The configured search backend does not exist.
    SearchBackendInvalid => "SEARCH_BACKEND_INVALID",
    /// The search engine blocked the request; this is not "no results".
    SearchBlocked => "SEARCH_BLOCKED",
    /// The search request failed, or its answer could not be read.
    SearchFailed => "SEARCH_FAILED",
    /// The URL policy refused the search engine's own URL.
    SearchUrlNotAllowed => "SEARCH_URL_NOT_ALLOWED",
    /// The path is a place where credentials live (`~/.ssh`, a browser
    /// profile, a `.env` file outside the roots), and the user did not
    /// allow reading it.
    SecretPath => "SECRET_PATH",
    /// The shader compiler is not on the PATH.
    ShaderCompilerNotFound => "SHADER_COMPILER_NOT_FOUND",
    /// The compiler could not start, or
    /// reported success without writing output.
    ShaderCompileStartFailed => "SHADER_COMPILE_START_FAILED",
    /// The compiler ran past `SHADER_TIMEOUT_SECONDS` and was killed.
    ShaderCompileTimedOut => "SHADER_COMPILE_TIMED_OUT",
    /// `start_line` is past the end of the file or page.
    StartLineOutOfRange => "START_LINE_OUT_OF_RANGE",
    /// `undo` was given a step the journal does not hold (never made, or
    /// evicted).
    StepNotFound => "STEP_NOT_FOUND",
    /// Several controls match the target, so acting on one would be a guess.
    TargetAmbiguous => "TARGET_AMBIGUOUS",
    /// The control is disabled, so a message to it would do nothing.
    TargetDisabled => "TARGET_DISABLED",
    /// No control of the window matches the target.
    TargetNotFound => "TARGET_NOT_FOUND",
    /// Something else covers the target where the
    /// click would land; nothing was clicked.
    TargetObscured => "TARGET_OBSCURED",
    /// Paths an `undo` would put back changed again after the step; nothing
    /// was changed (`force` puts them back all the same).
    UndoConflict => "UNDO_CONFLICT",
    /// The undo journal could not record a step (off by a fault, or over its
    /// budget) and the user did not agree to go on without it.
    UndoNotRecorded => "UNDO_NOT_RECORDED",
    /// No capability in the catalog has the requested id.
    UnknownCapability => "UNKNOWN_CAPABILITY",
    /// The shader file's extension names no language or stage the tool knows.
    UnknownShaderType => "UNKNOWN_SHADER_TYPE",
    /// The response's content type is not one the tool reads.
    UnsupportedContentType => "UNSUPPORTED_CONTENT_TYPE",
    /// The tool needs another operating system (desktop control needs Windows).
    UnsupportedPlatform => "UNSUPPORTED_PLATFORM",
    /// The URL's scheme or host is not allowed for this tool.
    UrlNotAllowed => "URL_NOT_ALLOWED",
    /// Reading any public host needs web research
    /// switched on; no tool raises it at present.
    WebResearchDisabled => "WEB_RESEARCH_DISABLED",
    /// No top-level window has the handle, or
    /// the window closed during the action.
    WindowNotFound => "WINDOW_NOT_FOUND",
    /// The window did not answer a message in time; it is busy or hung.
    WindowNotResponding => "WINDOW_NOT_RESPONDING",
    /// The window, or the element with the focus,
    /// belongs to a program wamcp may not drive.
    WindowOutOfScope => "WINDOW_OUT_OF_SCOPE",
    /// The working directory is outside the project folders, or holds what
    /// programs must not run in.
    WorkingDirectoryNotAllowed => "WORKING_DIRECTORY_NOT_ALLOWED",
    /// Writing failed; nothing was changed.
    WriteFailed => "WRITE_FAILED",
    /// The destination is outside every writable
    /// root, or changed while it was written.
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

/// The first recovery step of an error retrying cannot fix.
pub const HOPELESS: &str = "DO NOT retry unchanged.";

/// A tool failure before the tool's name is attached.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    /// The envelope's `type`: what went wrong, in a form a model can match on.
    pub kind: ErrorType,
    /// What happened, in one or two sentences for the model and the user.
    pub message: String,
    /// The path the failure is about, as the caller wrote it.
    pub path: Option<String>,
    /// What to do next, one step per line; the
    /// envelope may add a "do not retry" line first.
    pub recovery: Vec<String>,
    /// Whether the same call could succeed later.
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

    /// Names the path the failure is about.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Adds a recovery step after the ones already given.
    pub fn recover(mut self, step: impl Into<String>) -> Self {
        self.recovery.push(step.into());
        self
    }

    /// Adds a context field to the envelope; it never replaces a fixed field.
    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// The envelope for a failure of `tool`.
    pub fn envelope(&self, tool: &str) -> Value {
        let mut recovery = Vec::with_capacity(self.recovery.len() + 1);
        if self.retry == Retry::Hopeless {
            // Short on purpose: refusals are frequent, and this line is what
            // stops a small model's retry loop, not its length.
            recovery.push(HOPELESS.to_string());
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
        let text = serde_json::to_string(&err.envelope("read_file")).unwrap();
        assert_eq!(
            text,
            r#"{"ok":false,"error":{"type":"PATH_NOT_FOUND","tool":"read_file","message":"No such file: a.txt","path":"a.txt","recovery":["DO NOT retry unchanged.","Use list_directory on the parent to see what exists."],"ancestor":"/work"}}"#
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
    fn the_guide_lists_every_error_type() {
        let readme = format!(
            "{}/../../docs/errors.md",
            std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo test")
        );
        let text = std::fs::read_to_string(&readme).expect("docs/errors.md");
        let start = text
            .find("<!-- error-types:start -->")
            .expect("start marker");
        let end = text.find("<!-- error-types:end -->").expect("end marker");
        let listed: Vec<&str> = text[start..end].split('`').skip(1).step_by(2).collect();
        let known: Vec<&str> = ErrorType::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            listed, known,
            "docs/errors.md's error-type list and ErrorType differ"
        );
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
