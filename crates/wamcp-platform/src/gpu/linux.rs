//! Adapters from the kernel's DRM devices: one `cardN` per GPU, with its
//! PCI vendor, driver and (on amdgpu) VRAM size in sysfs.

use super::Adapter;
use std::path::Path;

pub fn adapters(drm: &Path) -> Result<Vec<Adapter>, String> {
    let entries = match std::fs::read_dir(drm) {
        Ok(entries) => entries,
        // No DRM at all (a container, a headless VM): an answer, not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{} could not be read: {e}", drm.display())),
    };
    let mut cards: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            name.strip_prefix("card")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    cards.sort();
    Ok(cards
        .iter()
        .map(|card| adapter(&drm.join(card).join("device"), card))
        .collect())
}

fn adapter(device: &Path, card: &str) -> Adapter {
    let read = |name: &str| {
        std::fs::read_to_string(device.join(name))
            .map(|s| s.trim().to_string())
            .ok()
    };
    let uevent = read("uevent").unwrap_or_default();
    let field = |key: &str| {
        uevent
            .lines()
            .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
            .map(str::to_string)
    };
    let vendor_id = read("vendor").unwrap_or_default();
    let device_id = read("device").unwrap_or_default();
    let mut notes = Vec::new();
    if let Some(slot) = field("PCI_SLOT_NAME") {
        notes.push(format!("PCI {slot}, id {vendor_id}:{device_id}"));
    }
    Adapter {
        name: format!("{card}: {} device {device_id}", vendor_name(&vendor_id)),
        vendor: vendor_name(&vendor_id).to_string(),
        driver: field("DRIVER").unwrap_or_else(|| "none bound".into()),
        memory_bytes: read("mem_info_vram_total").and_then(|v| v.parse().ok()),
        notes,
    }
}

fn vendor_name(id: &str) -> &'static str {
    match id.to_ascii_lowercase().as_str() {
        "0x10de" => "NVIDIA",
        "0x1002" => "AMD",
        "0x8086" => "Intel",
        "0x1af4" => "virtio",
        "0x15ad" => "VMware",
        "0x1b36" => "QEMU (QXL)",
        "0x1234" => "QEMU (standard VGA)",
        "0x5143" => "Qualcomm",
        _ => "unknown vendor",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_are_read_from_a_drm_tree() {
        let drm = tempfile::tempdir().unwrap();
        let card = drm.path().join("card0").join("device");
        std::fs::create_dir_all(&card).unwrap();
        std::fs::write(card.join("vendor"), "0x1002\n").unwrap();
        std::fs::write(card.join("device"), "0x744c\n").unwrap();
        std::fs::write(
            card.join("uevent"),
            "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:03:00.0\n",
        )
        .unwrap();
        std::fs::write(card.join("mem_info_vram_total"), "25753026560\n").unwrap();
        // Connectors and render nodes are not adapters.
        std::fs::create_dir_all(drm.path().join("card0-DP-1")).unwrap();
        std::fs::create_dir_all(drm.path().join("renderD128")).unwrap();
        let found = adapters(drm.path()).unwrap();
        assert_eq!(
            found,
            [Adapter {
                name: "card0: AMD device 0x744c".into(),
                vendor: "AMD".into(),
                driver: "amdgpu".into(),
                memory_bytes: Some(25_753_026_560),
                notes: vec!["PCI 0000:03:00.0, id 0x1002:0x744c".into()],
            }]
        );
        assert_eq!(adapters(&drm.path().join("absent")).unwrap(), []);
    }
}
