//! What machine and OS the server runs on, for `get_system_info`.

use serde::Serialize;

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as native;
#[cfg(windows)]
use windows as native;

/// Facts about the host. There is deliberately no `version` field: a model
/// asked for "the OS version" quoted an NT version string `10.0.x` and
/// answered "Windows 10" on Windows 11. `os` is the name a person would say.
#[derive(Clone, Debug, Serialize)]
pub struct SystemInfo {
    /// "Windows 11", "Debian GNU/Linux 12 (bookworm)".
    pub os: String,
    /// "10.0.26100" on Windows; the kernel release elsewhere.
    pub os_build: String,
    /// Kernel name and release, on Unix only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// The OS's own hardware architecture ("AMD64", "ARM64", "x86_64").
    pub machine: String,
    /// The architecture this binary was built for; differs from `machine`
    /// when an x64 build runs emulated on ARM64.
    pub architecture: String,
    /// The machine's host name; `None` when it cannot be read.
    pub hostname: Option<String>,
    /// The account the server runs as.
    pub username: Option<String>,
    /// That account's home directory.
    pub home: Option<String>,
    /// The server's working directory.
    pub cwd: Option<String>,
    /// The version of the Python a command would start (`python`, then
    /// `python3` or `py`), filled in by [`python_version`]; `null` when
    /// there is none.
    pub python_version: Option<String>,
}

/// What tells this boot of the machine from the one before: the kernel's
/// boot id on Linux, the boot time to the minute on Windows; `None`
/// elsewhere or when it cannot be read. Facts that hold until the next
/// reboot (the self-test of the OS layer) are kept under it.
pub fn boot_id() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        Some(id.trim().to_string()).filter(|id| !id.is_empty())
    }
    #[cfg(windows)]
    {
        // SAFETY: no arguments; returns the milliseconds since boot.
        let up = unsafe { windows_sys::Win32::System::SystemInformation::GetTickCount64() } / 1000;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        Some(format!(
            "booted-minute-{}",
            (now.saturating_sub(up) + 30) / 60
        ))
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        None
    }
}

/// Reads the host's facts. Never fails: a fact the OS would not give is `null`.
pub fn system_info() -> SystemInfo {
    let os = native::os_facts();
    SystemInfo {
        os: os.name,
        os_build: os.build,
        kernel: os.kernel,
        machine: os.machine,
        architecture: std::env::consts::ARCH.to_string(),
        hostname: native::hostname(),
        username: native::username(),
        home: std::env::home_dir().map(|p| p.display().to_string()),
        cwd: std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string()),
        python_version: None,
    }
}

/// How long `python --version` may take: a cold start on a slow disk is
/// well under a second, and this is answered while a model waits.
const PYTHON_PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The version of the first Python found on the child `PATH` (the one a
/// command would run), or `None`. Only a `Python X.Y[.Z]` answer counts:
/// the Microsoft Store alias prints an install prompt instead.
pub async fn python_version(search: &crate::search_path::ProgramSearch) -> Option<String> {
    let names: &[&str] = if cfg!(windows) {
        &["python", "py"]
    } else {
        &["python", "python3"]
    };
    for name in names {
        let probe = crate::gpu::probe_output(search, name, &["--version"]);
        if let Ok(Ok(text)) = tokio::time::timeout(PYTHON_PROBE_TIMEOUT, probe).await
            && let Some(version) = parse_python_version(&text)
        {
            return Some(version);
        }
    }
    None
}

/// `3.12.1` from `Python 3.12.1`.
pub fn parse_python_version(text: &str) -> Option<String> {
    let version = text
        .trim()
        .strip_prefix("Python ")?
        .split_whitespace()
        .next()?;
    let parts: Vec<&str> = version.split('.').collect();
    let numeric = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    (parts.len() >= 2 && parts[..2].iter().all(numeric)).then(|| version.to_string())
}

/// The raw answers a platform gives.
struct OsFacts {
    name: String,
    build: String,
    kernel: Option<String>,
    machine: String,
}

/// The marketing name of a Windows NT version. Windows 11 kept major version
/// 10, so only the build number tells it apart (22000 was its first release).
pub fn windows_product_name(major: u32, minor: u32, build: u32) -> String {
    let name = match (major, minor) {
        (10, _) if build >= 22000 => "11",
        (10, _) => "10",
        (6, 3) => "8.1",
        (6, 2) => "8",
        (6, 1) => "7",
        (6, 0) => "Vista",
        _ => return format!("Windows NT {major}.{minor}"),
    };
    format!("Windows {name}")
}

/// `PRETTY_NAME` from an os-release file, or `NAME VERSION` when it is absent.
pub fn os_release_pretty_name(content: &str) -> Option<String> {
    let field = |key: &str| {
        content.lines().find_map(|line| {
            let value = line.trim().strip_prefix(key)?.strip_prefix('=')?;
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            (!unquoted.is_empty()).then(|| unquoted.to_string())
        })
    };
    field("PRETTY_NAME").or_else(|| {
        let name = field("NAME")?;
        Some(match field("VERSION") {
            Some(version) => format!("{name} {version}"),
            None => name,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_names_follow_the_build_number() {
        assert_eq!(windows_product_name(10, 0, 26100), "Windows 11");
        assert_eq!(windows_product_name(10, 0, 22000), "Windows 11");
        assert_eq!(windows_product_name(10, 0, 21999), "Windows 10");
        assert_eq!(windows_product_name(10, 0, 19045), "Windows 10");
        assert_eq!(windows_product_name(6, 3, 9600), "Windows 8.1");
        assert_eq!(windows_product_name(6, 1, 7601), "Windows 7");
        assert_eq!(windows_product_name(5, 1, 2600), "Windows NT 5.1");
    }

    #[test]
    fn python_versions_are_read_from_the_banner_only() {
        for (text, version) in [
            ("Python 3.12.1\n", Some("3.12.1")),
            ("Python 3.14.0rc1\r\n", Some("3.14.0rc1")),
            ("Python 2.7", Some("2.7")),
            (
                "Python was not found; run without arguments to install from the Microsoft Store",
                None,
            ),
            ("", None),
            ("Python", None),
            ("Python x.y", None),
        ] {
            assert_eq!(parse_python_version(text).as_deref(), version, "{text}");
        }
    }

    #[test]
    fn os_release_parsing() {
        let debian = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n";
        assert_eq!(
            os_release_pretty_name(debian).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            os_release_pretty_name("NAME=Alpine\nVERSION='3.20'\n").as_deref(),
            Some("Alpine 3.20")
        );
        assert_eq!(
            os_release_pretty_name("PRETTY_NAME=\"\"\nNAME=Arch\n").as_deref(),
            Some("Arch")
        );
        assert_eq!(os_release_pretty_name("ID=x\n"), None);
    }

    #[test]
    fn the_live_probe_answers_every_field_it_can() {
        let info = system_info();
        assert!(!info.os.is_empty());
        assert!(!info.os_build.is_empty());
        assert_eq!(info.architecture, std::env::consts::ARCH);
        assert!(info.cwd.is_some());
        if cfg!(windows) {
            assert!(info.os.starts_with("Windows"), "{}", info.os);
            let parts: Vec<&str> = info.os_build.split('.').collect();
            assert_eq!(parts.len(), 3, "{}", info.os_build);
            assert!(
                parts.iter().all(|p| p.parse::<u32>().is_ok()),
                "{}",
                info.os_build
            );
            assert!(info.username.is_some());
        }
    }
}
