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

fn main() {
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") == "linux"
        && target("CARGO_CFG_TARGET_ENV") == "gnu"
        && target("PROFILE") == "release"
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        let script = format!("{}/startup.ld", target("CARGO_MANIFEST_DIR"));
        // -Wl splits at commas, so such a path could not be passed whole.
        if script.contains(',') {
            println!("cargo:warning=the path holds a comma; linking without startup.ld");
        } else if std::path::Path::new(&script).exists() {
            println!("cargo:rustc-link-arg-bins=-Wl,-T,{script}");
        }
        // `xtask startup-order` asks for a link map: the release binary has
        // no symbols, and a build with them would name its functions
        // differently (the profile is part of every symbol's hash).
        let map = target("WAMCP_LINK_MAP");
        if !map.is_empty() && !map.contains(',') {
            println!("cargo:rustc-link-arg-bins=-Wl,-Map,{map}");
        }
    }
    println!("cargo:rerun-if-changed=startup.ld");
    println!("cargo:rerun-if-env-changed=WAMCP_LINK_MAP");
    println!("cargo:rerun-if-changed=build.rs");
}
