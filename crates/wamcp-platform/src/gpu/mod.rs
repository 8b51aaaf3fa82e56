//! `get_gpu_info`: adapters, Vulkan, the graphics toolchain on PATH, and SDK
//! environment variables, as four text sections.
//!
//! Each probe runs under its own time limit and a probe that failed says so
//! in its section: an empty adapter list would read as "no GPU", which is a
//! different statement from "the adapter query did not answer".

#[cfg(unix)]
mod linux;
#[cfg(windows)]
mod windows;

use crate::search_path::ProgramSearch;
use std::time::Duration;

/// Each probe's time limit; a hung driver costs one section, not the call.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Programs of the graphics toolchain, reported with their path when found.
const TOOLCHAIN: &[&str] = &[
    "glslc",
    "glslangValidator",
    "dxc",
    "fxc",
    "spirv-val",
    "spirv-opt",
    "spirv-dis",
    "spirv-cross",
    "vulkaninfo",
    "nvidia-smi",
];

/// SDK variables that decide which compilers, layers and drivers are used.
const SDK_VARIABLES: &[&str] = &[
    "VULKAN_SDK",
    "VK_SDK_PATH",
    "VK_ICD_FILENAMES",
    "VK_DRIVER_FILES",
    "VK_LAYER_PATH",
    "VK_INSTANCE_LAYERS",
    "WindowsSdkDir",
    "WindowsSDKVersion",
    "DXSDK_DIR",
    "CUDA_PATH",
];

/// One graphics adapter as the OS describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Adapter {
    /// The adapter's name as the OS reports it.
    pub name: String,
    /// The maker (`AMD`, `NVIDIA`, `Intel`), or `unknown vendor`.
    pub vendor: String,
    /// The driver: its version on Windows, the bound kernel module on Linux.
    pub driver: String,
    /// Dedicated video memory in bytes, when known exactly.
    pub memory_bytes: Option<u64>,
    /// Anything else worth a line (PCI slot, status, a caveat).
    pub notes: Vec<String>,
}

/// The whole report.
pub async fn gpu_report(search: &ProgramSearch) -> String {
    let adapters = blocking_probe(adapters_probe).await;
    let vulkan = vulkan_section(search).await;
    let mut out = String::from("ADAPTERS\n");
    match adapters {
        Ok(list) if list.is_empty() => {
            out.push_str(&format!("  none reported by {}\n", adapter_source()))
        }
        Ok(list) => {
            for adapter in list {
                out.push_str(&render_adapter(&adapter));
            }
        }
        Err(why) => out.push_str(&format!("  not probed: {why}\n")),
    }
    if search.find_program("nvidia-smi").is_some() {
        let query = [
            "--query-gpu=name,driver_version,memory.total",
            "--format=csv,noheader",
        ];
        match probe_output(search, "nvidia-smi", &query).await {
            Ok(text) => {
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    out.push_str(&format!("  nvidia-smi: {}\n", line.trim()));
                }
            }
            Err(why) => out.push_str(&format!("  nvidia-smi: not probed: {why}\n")),
        }
    }
    out.push_str("\nVULKAN\n");
    out.push_str(&vulkan);
    out.push_str("\nTOOLCHAIN (on PATH)\n");
    for program in TOOLCHAIN {
        match search.find_program(program) {
            Some(path) => out.push_str(&format!("  {program}: {}\n", path.display())),
            None => out.push_str(&format!("  {program}: not found\n")),
        }
    }
    out.push_str("\nSDK ENVIRONMENT\n");
    for name in SDK_VARIABLES {
        match std::env::var_os(name) {
            Some(value) => out.push_str(&format!("  {name}={}\n", value.to_string_lossy())),
            None => out.push_str(&format!("  {name}: not set\n")),
        }
    }
    out.push_str(
        "\nNot reported: Direct3D feature levels (they need a D3D12 device, which this server does not create).\n",
    );
    out
}

#[cfg(unix)]
fn adapters_probe() -> Result<Vec<Adapter>, String> {
    linux::adapters(std::path::Path::new("/sys/class/drm"))
}

#[cfg(windows)]
fn adapters_probe() -> Result<Vec<Adapter>, String> {
    windows::adapters()
}

fn adapter_source() -> &'static str {
    if cfg!(windows) {
        "WMI (Win32_VideoController) or DXGI"
    } else {
        "the kernel (/sys/class/drm): no GPU, or a driver that exposes none"
    }
}

async fn blocking_probe<T: Send + 'static>(probe: fn() -> Result<T, String>) -> Result<T, String> {
    match tokio::time::timeout(PROBE_TIMEOUT, tokio::task::spawn_blocking(probe)).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => Err(format!("the probe stopped unexpectedly: {e}")),
        Err(_) => Err(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
    }
}

fn render_adapter(adapter: &Adapter) -> String {
    let mut out = format!("  {}\n", adapter.name);
    if !adapter.vendor.is_empty() {
        out.push_str(&format!("    vendor: {}\n", adapter.vendor));
    }
    if !adapter.driver.is_empty() {
        out.push_str(&format!("    driver: {}\n", adapter.driver));
    }
    if let Some(bytes) = adapter.memory_bytes {
        out.push_str(&format!("    dedicated memory: {}\n", human_bytes(bytes)));
    }
    for note in &adapter.notes {
        out.push_str(&format!("    {note}\n"));
    }
    out
}

fn human_bytes(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", bytes / MIB)
    }
}

/// Runs a program found by `search` with the probe time limit; its
/// stdout, or why not.
pub async fn probe_output(
    search: &ProgramSearch,
    program: &str,
    args: &[&str],
) -> Result<String, String> {
    let Some(path) = search.find_program(program) else {
        return Err(format!("{program} is not on the PATH"));
    };
    let mut command = tokio::process::Command::new(path);
    // The probe's own children find programs as commands do.
    if let Some(child_path) = search.child_path() {
        command.env("PATH", child_path);
    }
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(PROBE_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(format!("{program} could not be started: {e}")),
        Err(_) => {
            return Err(format!(
                "{program} gave no answer within {} s",
                PROBE_TIMEOUT.as_secs()
            ));
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(stdout)
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Err(format!(
            "{program} failed ({}): {}",
            output.status,
            last.trim()
        ))
    }
}

async fn vulkan_section(search: &ProgramSearch) -> String {
    match probe_output(search, "vulkaninfo", &["--summary"]).await {
        Ok(text) => {
            let devices = vulkan_devices(&text);
            if devices.is_empty() {
                "  vulkaninfo ran but listed no devices (no Vulkan driver is installed)\n"
                    .to_string()
            } else {
                let instance = text
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("Vulkan Instance Version:"))
                    .map(|v| format!("  instance version {}\n", v.trim()))
                    .unwrap_or_default();
                instance + &devices.concat()
            }
        }
        Err(why) if why.ends_with("is not on the PATH") => {
            "  not probed: vulkaninfo is not on the PATH (it comes with the Vulkan SDK or the vulkan-tools package)\n"
                .to_string()
        }
        Err(why) => format!("  not probed: {why}\n"),
    }
}

/// The `GPUn:` blocks of `vulkaninfo --summary`, one short line set each.
/// What Vulkan reports is what the driver supports, not necessarily what an
/// application's instance and device creation will get.
pub fn vulkan_devices(summary: &str) -> Vec<String> {
    let mut devices = Vec::new();
    let mut current: Option<Vec<(String, String)>> = None;
    let flush = |fields: Vec<(String, String)>, devices: &mut Vec<String>| {
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .unwrap_or("?")
        };
        devices.push(format!(
            "  {} ({})\n    API {}, driver {} {}\n",
            get("deviceName"),
            get("deviceType").trim_start_matches("PHYSICAL_DEVICE_TYPE_"),
            get("apiVersion"),
            get("driverName"),
            get("driverInfo"),
        ));
    };
    for line in summary.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("GPU") && trimmed.ends_with(':') {
            if let Some(fields) = current.take() {
                flush(fields, &mut devices);
            }
            current = Some(Vec::new());
        } else if let (Some(fields), Some((key, value))) =
            (current.as_mut(), trimmed.split_once('='))
        {
            fields.push((key.trim().to_string(), value.trim().to_string()));
        } else if current.is_some() && !trimmed.is_empty() && !line.starts_with(char::is_whitespace)
        {
            // An unindented heading ends the devices block.
            if let Some(fields) = current.take() {
                flush(fields, &mut devices);
            }
        }
    }
    if let Some(fields) = current {
        flush(fields, &mut devices);
    }
    devices
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUMMARY: &str = "==========\nVULKANINFO\n==========\n\nVulkan Instance Version: 1.3.239\n\n\
Devices:\n========\nGPU0:\n\tapiVersion         = 1.3.230\n\tdriverVersion      = 0.0.1\n\
\tdeviceType         = PHYSICAL_DEVICE_TYPE_CPU\n\tdeviceName         = llvmpipe (LLVM 15.0.6, 256 bits)\n\
\tdriverName         = llvmpipe\n\tdriverInfo         = Mesa 22.3.6 (LLVM 15.0.6)\n\
GPU1:\n\tapiVersion         = 1.3.277\n\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n\
\tdeviceName         = NVIDIA GeForce RTX 4070\n\tdriverName         = NVIDIA\n\tdriverInfo         = 551.86\n";

    #[test]
    fn vulkan_summary_devices() {
        assert_eq!(
            vulkan_devices(SUMMARY),
            [
                "  llvmpipe (LLVM 15.0.6, 256 bits) (CPU)\n    API 1.3.230, driver llvmpipe Mesa 22.3.6 (LLVM 15.0.6)\n",
                "  NVIDIA GeForce RTX 4070 (DISCRETE_GPU)\n    API 1.3.277, driver NVIDIA 551.86\n",
            ]
        );
        assert!(vulkan_devices("ERROR: no devices\n").is_empty());
    }

    #[test]
    fn memory_reads_as_people_say_it() {
        assert_eq!(human_bytes(512 << 20), "512 MiB");
        assert_eq!(human_bytes(12 << 30), "12.0 GiB");
    }

    /// The real report on this machine: every section present, each either
    /// with findings or saying why not (Linux: lavapipe's vulkaninfo under
    /// scripts/test.sh; Wine: WMI's fixed answers).
    #[tokio::test]
    async fn the_report_has_every_section() {
        let report = gpu_report(&ProgramSearch::default()).await;
        for heading in [
            "ADAPTERS\n",
            "\nVULKAN\n",
            "\nTOOLCHAIN (on PATH)\n",
            "\nSDK ENVIRONMENT\n",
        ] {
            assert!(report.contains(heading), "{heading}: {report}");
        }
        assert!(report.contains("  VULKAN_SDK"), "{report}");
        let strict = std::env::var("WAMCP_TEST_STRICT").as_deref() == Ok("1");
        if strict && cfg!(unix) {
            assert!(
                report.contains("(CPU)\n    API 1."),
                "lavapipe through vulkaninfo: {report}"
            );
        }
        if cfg!(windows) {
            // Wine's WMI answers with a fixed adapter and driver version.
            let adapters = &report[..report.find("\nVULKAN\n").unwrap()];
            assert!(adapters.contains("    driver: "), "{report}");
            assert!(adapters.contains("dedicated memory"), "{report}");
        }
    }
}
