//! Raw answers for the environment snapshot: registry values, WMI rows and
//! a program's output within a time limit. Each call answers `Err` with the
//! reason when the question could not be asked, so the caller can record an
//! unknown instead of guessing an absence.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A registry value, as far as the snapshot reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegValue {
    /// A `REG_SZ` or `REG_EXPAND_SZ` string, not expanded.
    Text(String),
    /// A `REG_DWORD`.
    Number(u32),
}

/// The operating system as WMI's `Win32_OperatingSystem` reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OsRow {
    /// The product name (`Microsoft Windows 11 Pro`).
    pub caption: String,
    /// The version number (`10.0.22631`).
    pub version: String,
    /// The build number (`22631`).
    pub build: String,
    /// The architecture as WMI words it (`64-bit`).
    pub architecture: String,
}

/// A `HKEY_LOCAL_MACHINE` value; `Ok(None)` when the key or value does not
/// exist.
pub fn machine_value(key: &str, value: &str) -> Result<Option<RegValue>, String> {
    #[cfg(windows)]
    return windows::value(key, value);
    #[cfg(not(windows))]
    {
        let _ = (key, value);
        Err(not_windows())
    }
}

/// The names of a `HKEY_LOCAL_MACHINE` key's subkeys; `Ok(None)` when the
/// key does not exist.
pub fn machine_subkeys(key: &str) -> Result<Option<Vec<String>>, String> {
    #[cfg(windows)]
    return windows::subkeys(key);
    #[cfg(not(windows))]
    {
        let _ = key;
        Err(not_windows())
    }
}

/// `Win32_OptionalFeature.InstallState` of `name` (1 enabled, 2 disabled,
/// 3 absent, 4 unknown); `Ok(None)` when WMI lists no such feature.
pub fn optional_feature_state(name: &str) -> Result<Option<u32>, String> {
    #[cfg(windows)]
    return windows::optional_feature(name);
    #[cfg(not(windows))]
    {
        let _ = name;
        Err(not_windows())
    }
}

/// The drive letters (`D:`) of the fixed volumes that are Dev Drives.
pub fn dev_drives() -> Result<Vec<String>, String> {
    #[cfg(windows)]
    return VOLUMES.run(dev_drive::dev_drives);
    #[cfg(not(windows))]
    Err(not_windows())
}

#[cfg(windows)]
mod dev_drive;

/// Volume queries go to drivers, which may hang on a failing disk.
#[cfg(windows)]
static VOLUMES: crate::bounded::Gate =
    crate::bounded::Gate::new("volume query", Duration::from_secs(10));

/// The `Win32_OperatingSystem` row.
pub fn operating_system() -> Result<OsRow, String> {
    #[cfg(windows)]
    return windows::operating_system();
    #[cfg(not(windows))]
    Err(not_windows())
}

#[cfg(not(windows))]
fn not_windows() -> String {
    "only answered on Windows".to_string()
}

/// How many names the open file has (hard links): more than one means the
/// same bytes are reachable from elsewhere, perhaps from outside a project.
pub fn hard_links(file: &std::fs::File) -> std::io::Result<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok(file.metadata()?.nlink())
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
        };
        // SAFETY: the handle is the open file's; the struct is an out value.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: `file` keeps the handle open for the call, and `info` is a
        // writable struct of the type the call fills.
        let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(u64::from(info.nNumberOfLinks))
    }
}

/// What a probe program printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Standard output, at most 64 KiB; empty
    /// when a grandchild kept the pipe open.
    pub stdout: Vec<u8>,
    /// Standard error, the same way.
    pub stderr: Vec<u8>,
}

/// Runs `program` with `args` in `cwd` and the child `PATH` of `search`,
/// stdin closed, and kills it at `timeout`. `Err` names why nothing
/// usable came back (not started, timed out). Output beyond 64 KiB per
/// stream is dropped.
pub fn output_within(
    search: &crate::search_path::ProgramSearch,
    program: &Path,
    args: &[&str],
    cwd: &Path,
    timeout: Duration,
) -> Result<Output, String> {
    let mut child = probe_command(search, program, args, cwd)
        .spawn()
        .map_err(|e| format!("could not start: {e}"))?;
    let out = read_capped(child.stdout.take());
    let err = read_capped(child.stderr.take());
    let status = wait_within(&mut child, timeout)?;
    Ok(Output {
        code: status.code(),
        stdout: collect(out),
        stderr: collect(err),
    })
}

/// The command `output_within` starts: stdin closed, both outputs piped,
/// the child `PATH` of `search`, and no console window on Windows.
fn probe_command(
    search: &crate::search_path::ProgramSearch,
    program: &Path,
    args: &[&str],
    cwd: &Path,
) -> Command {
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = search.child_path() {
        command.env("PATH", path);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        // CREATE_NO_WINDOW: a console program started from a GUI host
        // would flash a window.
        command.creation_flags(0x0800_0000);
    }
    command
}

/// Reads at most 64 KiB of `stream` on its own thread (nothing when there
/// is no stream); the rest is dropped.
fn read_capped(stream: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    const KEEP: u64 = 64 * 1024;
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(stream) = stream {
            let _ = stream.take(KEEP).read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child` to exit, killing it (and waiting for it) once
/// `timeout` has passed.
fn wait_within(
    child: &mut std::process::Child,
    timeout: Duration,
) -> Result<std::process::ExitStatus, String> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {:.1} s", timeout.as_secs_f64()));
            }
            Err(e) => return Err(format!("could not wait for it: {e}")),
        }
    }
}

/// What a reader thread read, waiting at most a second for it to finish;
/// empty when it did not.
fn collect(handle: std::thread::JoinHandle<Vec<u8>>) -> Vec<u8> {
    // A grandchild holding the pipes open must not hold the probe too.
    let deadline = Instant::now() + Duration::from_secs(1);
    while !handle.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    if handle.is_finished() {
        handle.join().unwrap_or_default()
    } else {
        Vec::new()
    }
}

#[cfg(windows)]
mod windows {
    use super::{OsRow, RegValue};
    use serde::Deserialize;
    use std::os::windows::ffi::OsStrExt;
    use std::time::Duration;
    use windows_sys::Win32::Foundation::{ERROR_FILE_NOT_FOUND, ERROR_NO_MORE_ITEMS};
    use windows_sys::Win32::System::Registry::{
        HKEY, HKEY_LOCAL_MACHINE, KEY_READ, REG_DWORD, REG_EXPAND_SZ, REG_SZ, RRF_NOEXPAND,
        RRF_RT_ANY, RegCloseKey, RegEnumKeyExW, RegGetValueW, RegOpenKeyExW,
    };

    fn wide(text: &str) -> Vec<u16> {
        std::ffi::OsStr::new(text)
            .encode_wide()
            .chain(Some(0))
            .collect()
    }

    pub fn value(key: &str, value: &str) -> Result<Option<RegValue>, String> {
        let (key_w, value_w) = (wide(key), wide(value));
        let mut kind = 0u32;
        let mut buf = vec![0u8; 4096];
        let mut bytes = buf.len() as u32;
        // SAFETY: the buffer holds `bytes` bytes; type and size are out values.
        let rc = unsafe {
            RegGetValueW(
                HKEY_LOCAL_MACHINE,
                key_w.as_ptr(),
                value_w.as_ptr(),
                RRF_RT_ANY | RRF_NOEXPAND,
                &mut kind,
                buf.as_mut_ptr().cast(),
                &mut bytes,
            )
        };
        if rc == ERROR_FILE_NOT_FOUND {
            return Ok(None);
        }
        if rc != 0 {
            return Err(format!("registry {key}\\{value}: error {rc}"));
        }
        buf.truncate(bytes as usize);
        match kind {
            REG_DWORD if buf.len() >= 4 => Ok(Some(RegValue::Number(u32::from_le_bytes([
                buf[0], buf[1], buf[2], buf[3],
            ])))),
            REG_SZ | REG_EXPAND_SZ => {
                let units: Vec<u16> = buf
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .take_while(|&u| u != 0)
                    .collect();
                Ok(Some(RegValue::Text(String::from_utf16_lossy(&units))))
            }
            other => Err(format!("registry {key}\\{value}: unexpected type {other}")),
        }
    }

    pub fn subkeys(key: &str) -> Result<Option<Vec<String>>, String> {
        let key_w = wide(key);
        let mut handle: HKEY = std::ptr::null_mut();
        // SAFETY: opens a key for reading; the handle is closed below.
        let rc =
            unsafe { RegOpenKeyExW(HKEY_LOCAL_MACHINE, key_w.as_ptr(), 0, KEY_READ, &mut handle) };
        if rc == ERROR_FILE_NOT_FOUND {
            return Ok(None);
        }
        if rc != 0 {
            return Err(format!("registry {key}: error {rc}"));
        }
        let mut names = Vec::new();
        let mut failure = None;
        for index in 0.. {
            let mut name = [0u16; 256];
            let mut len = name.len() as u32;
            // SAFETY: `name` holds `len` UTF-16 units; the rest are unused.
            let rc = unsafe {
                RegEnumKeyExW(
                    handle,
                    index,
                    name.as_mut_ptr(),
                    &mut len,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if rc == ERROR_NO_MORE_ITEMS {
                break;
            }
            if rc != 0 {
                failure = Some(format!("registry {key}: error {rc} listing subkeys"));
                break;
            }
            names.push(String::from_utf16_lossy(&name[..len as usize]));
        }
        // SAFETY: the handle was opened above and is closed once.
        unsafe { RegCloseKey(handle) };
        match failure {
            Some(e) => Err(e),
            None => Ok(Some(names)),
        }
    }

    /// Every WMI query of the snapshot: a wedged WMI service must cost
    /// `env_inspect` one bounded wait, then an "unknown", never the call.
    static WMI: crate::bounded::Gate = crate::bounded::Gate::new("WMI", Duration::from_secs(20));

    #[derive(Deserialize)]
    #[serde(rename = "Win32_OptionalFeature", rename_all = "PascalCase")]
    struct OptionalFeature {
        install_state: Option<u32>,
    }

    pub fn optional_feature(name: &str) -> Result<Option<u32>, String> {
        // The name is one of ours, never the model's, and holds no quote.
        debug_assert!(!name.contains('\''));
        let query = format!("SELECT InstallState FROM Win32_OptionalFeature WHERE Name = '{name}'");
        let rows: Vec<OptionalFeature> = WMI.run(move || {
            let connection = wmi::WMIConnection::new().map_err(|e| format!("WMI: {e}"))?;
            connection
                .raw_query(query)
                .map_err(|e| format!("WMI Win32_OptionalFeature: {e}"))
        })?;
        Ok(rows
            .into_iter()
            .next()
            .map(|r| r.install_state.unwrap_or(4)))
    }

    #[derive(Deserialize)]
    #[serde(rename = "Win32_OperatingSystem", rename_all = "PascalCase")]
    struct OperatingSystem {
        caption: Option<String>,
        version: Option<String>,
        build_number: Option<String>,
        #[serde(rename = "OSArchitecture")]
        os_architecture: Option<String>,
    }

    pub fn operating_system() -> Result<OsRow, String> {
        let rows: Vec<OperatingSystem> = WMI.run(|| {
            let connection = wmi::WMIConnection::new().map_err(|e| format!("WMI: {e}"))?;
            connection
                .query()
                .map_err(|e| format!("WMI Win32_OperatingSystem: {e}"))
        })?;
        let row = rows
            .into_iter()
            .next()
            .ok_or("WMI Win32_OperatingSystem: no row")?;
        Ok(OsRow {
            caption: row.caption.unwrap_or_default().trim().to_string(),
            version: row.version.unwrap_or_default(),
            build: row.build_number.unwrap_or_default(),
            architecture: row.os_architecture.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_outlives_its_limit_is_killed_and_reported() {
        let (program, args): (&str, &[&str]) = if cfg!(windows) {
            ("ping.exe", &["-n", "30", "127.0.0.1"])
        } else {
            ("sleep", &["30"])
        };
        let found = crate::search_path::ProgramSearch::default()
            .find_program(program)
            .expect("program on PATH");
        let started = Instant::now();
        let err = output_within(
            &crate::search_path::ProgramSearch::default(),
            &found,
            args,
            &std::env::temp_dir(),
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert_eq!(err, "no answer within 0.3 s");
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn a_second_name_for_a_file_is_counted() {
        let dir = std::env::temp_dir().join(format!("wamcp-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = dir.join("one.txt");
        std::fs::write(&one, "x").unwrap();
        assert_eq!(hard_links(&std::fs::File::open(&one).unwrap()).unwrap(), 1);
        std::fs::hard_link(&one, dir.join("two.txt")).unwrap();
        assert_eq!(hard_links(&std::fs::File::open(&one).unwrap()).unwrap(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn output_and_exit_code_come_back() {
        let exe = std::env::current_exe().unwrap();
        let out = output_within(
            &crate::search_path::ProgramSearch::default(),
            &exe,
            &["--list"],
            &std::env::temp_dir(),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(out.code, Some(0));
        assert!(String::from_utf8_lossy(&out.stdout).contains("output_and_exit_code_come_back"));
        assert!(
            output_within(
                &crate::search_path::ProgramSearch::default(),
                Path::new("/nonexistent/x"),
                &[],
                &std::env::temp_dir(),
                Duration::from_secs(1)
            )
            .unwrap_err()
            .starts_with("could not start")
        );
    }

    #[test]
    fn registry_and_wmi_answer_on_windows_and_refuse_elsewhere() {
        let product = machine_value(
            r"SOFTWARE\Microsoft\Windows NT\CurrentVersion",
            "CurrentBuildNumber",
        );
        let missing = machine_value(r"SOFTWARE\wamcp-test-no-such-key", "x");
        let os = operating_system();
        if cfg!(windows) {
            assert!(
                matches!(product, Ok(Some(RegValue::Text(ref b))) if !b.is_empty()),
                "{product:?}"
            );
            assert_eq!(missing, Ok(None));
            assert_eq!(
                machine_subkeys(r"SOFTWARE\wamcp-test-no-such-key"),
                Ok(None)
            );
            assert!(
                machine_subkeys(r"SOFTWARE\Microsoft")
                    .unwrap()
                    .unwrap()
                    .len()
                    > 1
            );
            let os = os.unwrap();
            assert!(os.caption.contains("Windows"), "{os:?}");
        } else {
            assert_eq!(product, Err("only answered on Windows".into()));
            assert!(os.is_err() && optional_feature_state("x").is_err());
        }
    }
}
