//! Which programs `build_project` may start: build drivers and compilers,
//! so a "build" cannot be used to run an arbitrary allowed tool (git, tar)
//! and read its output as a build report.

use super::rules::program_name;

/// The seed's list, plus `clang-cl` (the drop-in for `cl`) and `python3`
/// (how Linux spells `python`); compared on the lower-cased file name
/// without `.exe`.
pub const BUILD_COMMANDS: &[&str] = &[
    "cmake", "ninja", "msbuild", "ctest", "premake5", "dotnet", "cargo", "clang", "clang++",
    "clang-cl", "gcc", "g++", "cl", "python", "python3", "py",
];

pub fn is_build_driver(first_word: &str) -> bool {
    BUILD_COMMANDS.contains(&program_name(first_word).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_by_name_in_any_case_and_with_exe() {
        for yes in [
            "cmake",
            "CMake.exe",
            "ninja",
            "MSBuild.exe",
            "g++",
            "clang-cl",
            "py",
            "cargo",
        ] {
            assert!(is_build_driver(yes), "{yes}");
        }
        for no in [
            "git",
            "tar",
            "node",
            "Get-ChildItem",
            "cmd",
            "powershell",
            "make-cmake",
            "",
        ] {
            assert!(!is_build_driver(no), "{no}");
        }
    }
}
