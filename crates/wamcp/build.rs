//! Link settings for the release binary.
//!
//! On GNU/Linux the relative relocations are packed (`DT_RELR`): the
//! release binary holds about 30,000 pointers that the loader fixes at every
//! start, and their table shrinks from about 730 KB, all read and resident,
//! to a few KB. Linkers and C libraries too old for it ignore the request
//! (binutils before 2.38, glibc before 2.36).
//!
//! There too, `startup.ld` (written by `cargo run -p xtask --
//! startup-order`) places the functions a start runs next to each other:
//! the kernel maps code in 64 KB windows around each page touched, so
//! start-up code spread over the binary made most of its code resident.
//! Only for the linker rustc picks (lld, or GNU ld): one the user chose
//! (mold, for one) may not read such a script, and `WAMCP_STARTUP_ORDER=off`
//! leaves it out by hand.

fn main() {
    let var = |key: &str| std::env::var(key).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("PROFILE") == "release"
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        let script = format!("{}/startup.ld", var("CARGO_MANIFEST_DIR"));
        // -Wl splits at commas, so such a path could not be passed whole.
        if var("WAMCP_STARTUP_ORDER") != "off"
            && linker_is_rustcs_own()
            && !script.contains(',')
            && std::path::Path::new(&script).exists()
        {
            println!("cargo:rustc-link-arg-bins=-Wl,-T,{script}");
        }
        // `xtask startup-order` asks for a link map: the release binary has
        // no symbols, and a build with them would name its functions
        // differently (the profile is part of every symbol's hash).
        let map = var("WAMCP_LINK_MAP");
        if !map.is_empty() && !map.contains(',') {
            println!("cargo:rustc-link-arg-bins=-Wl,-Map,{map}");
        }
    }
    for setting in ["WAMCP_LINK_MAP", "WAMCP_STARTUP_ORDER", "RUSTC_LINKER"] {
        println!("cargo:rerun-if-env-changed={setting}");
    }
    println!("cargo:rerun-if-changed=startup.ld");
    println!("cargo:rerun-if-changed=build.rs");
}

/// No linker configured for the target and no flag choosing one.
fn linker_is_rustcs_own() -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    std::env::var_os("RUSTC_LINKER").is_none()
        && !flags.split('\x1f').any(|flag| {
            flag.contains("fuse-ld") || flag.contains("ld-path") || flag.contains("linker")
        })
}
