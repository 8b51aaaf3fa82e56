//! Adapters from WMI (name, vendor, driver version) joined with DXGI (the
//! real dedicated memory). WMI's `AdapterRAM` is a 32-bit field that reads
//! about 4 GB for any larger card, so it is shown only when DXGI has no
//! answer, and then with that caveat.

use super::Adapter;
use serde::Deserialize;
use windows::Win32::Graphics::Dxgi::{
    CreateDXGIFactory1, DXGI_ADAPTER_FLAG_SOFTWARE, DXGI_ERROR_NOT_FOUND, IDXGIFactory1,
};

#[derive(Deserialize)]
#[serde(rename = "Win32_VideoController", rename_all = "PascalCase")]
struct VideoController {
    name: Option<String>,
    adapter_compatibility: Option<String>,
    driver_version: Option<String>,
    #[serde(rename = "AdapterRAM")]
    adapter_ram: Option<u32>,
    #[serde(rename = "PNPDeviceID")]
    pnp_device_id: Option<String>,
    status: Option<String>,
}

/// A DXGI adapter: its description and dedicated memory.
struct DxgiAdapter {
    name: String,
    memory: u64,
    software: bool,
}

pub fn adapters() -> Result<Vec<Adapter>, String> {
    let from_dxgi = dxgi_adapters();
    let from_wmi = wmi_adapters();
    match (from_wmi, from_dxgi) {
        (Ok(rows), dxgi) => Ok(join(
            rows,
            dxgi.as_deref().unwrap_or(&[]),
            dxgi.as_ref().err(),
        )),
        (Err(wmi_error), Ok(dxgi)) => Ok(dxgi
            .into_iter()
            .map(|d| Adapter {
                name: d.name,
                memory_bytes: Some(d.memory),
                notes: vec![format!(
                    "driver and vendor unknown: WMI failed ({wmi_error})"
                )],
                ..Adapter::default()
            })
            .collect()),
        (Err(wmi_error), Err(dxgi_error)) => Err(format!(
            "WMI failed ({wmi_error}) and DXGI failed ({dxgi_error})"
        )),
    }
}

fn join(
    rows: Vec<VideoController>,
    dxgi: &[DxgiAdapter],
    dxgi_error: Option<&String>,
) -> Vec<Adapter> {
    rows.into_iter()
        .map(|row| {
            let name = row.name.unwrap_or_else(|| "unnamed adapter".into());
            let matched = dxgi.iter().find(|d| d.name.eq_ignore_ascii_case(name.trim()));
            let mut notes = Vec::new();
            if let Some(id) = row.pnp_device_id {
                notes.push(format!("device id {id}"));
            }
            if let Some(status) = row.status.filter(|s| s != "OK") {
                notes.push(format!("status: {status}"));
            }
            if matched.is_some_and(|d| d.software) {
                notes.push("software adapter (no GPU behind it)".into());
            }
            if matched.is_none() {
                if let Some(ram) = row.adapter_ram {
                    notes.push(format!(
                        "WMI AdapterRAM {} MiB (a 32-bit field: any card with 4 GB or more reads about 4 GB)",
                        ram as u64 >> 20
                    ));
                }
                if let Some(error) = dxgi_error {
                    notes.push(format!("dedicated memory unknown: DXGI failed ({error})"));
                }
            }
            Adapter {
                name,
                vendor: row.adapter_compatibility.unwrap_or_default(),
                driver: row.driver_version.unwrap_or_default(),
                memory_bytes: matched.map(|d| d.memory),
                notes,
            }
        })
        .collect()
}

fn wmi_adapters() -> Result<Vec<VideoController>, String> {
    let connection = wmi::WMIConnection::new().map_err(|e| e.to_string())?;
    connection
        .query::<VideoController>()
        .map_err(|e| e.to_string())
}

fn dxgi_adapters() -> Result<Vec<DxgiAdapter>, String> {
    // SAFETY: plain COM calls on interfaces DXGI returned; every out value
    // is owned by the `windows` wrappers and released on drop.
    unsafe {
        let factory: IDXGIFactory1 = CreateDXGIFactory1().map_err(|e| e.to_string())?;
        let mut found = Vec::new();
        for index in 0.. {
            let adapter = match factory.EnumAdapters1(index) {
                Ok(adapter) => adapter,
                Err(e) if e.code() == DXGI_ERROR_NOT_FOUND => break,
                Err(e) => return Err(e.to_string()),
            };
            let desc = adapter.GetDesc1().map_err(|e| e.to_string())?;
            let len = desc
                .Description
                .iter()
                .position(|&c| c == 0)
                .unwrap_or(desc.Description.len());
            found.push(DxgiAdapter {
                name: String::from_utf16_lossy(&desc.Description[..len])
                    .trim()
                    .to_string(),
                memory: desc.DedicatedVideoMemory as u64,
                software: desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE.0 as u32 != 0,
            });
        }
        Ok(found)
    }
}
