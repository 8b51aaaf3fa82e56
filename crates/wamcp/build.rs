//! Link settings for the release binary.
//!
//! On GNU/Linux the relative relocations are packed (`DT_RELR`): the
//! release binary holds about 30,000 pointers that the loader fixes at every
//! start, and their table shrinks from about 730 KB, all read and resident,
//! to a few KB. Linkers and C libraries too old for it ignore the request
//! (binutils before 2.38, glibc before 2.36).

fn main() {
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") == "linux"
        && target("CARGO_CFG_TARGET_ENV") == "gnu"
        && target("PROFILE") == "release"
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
