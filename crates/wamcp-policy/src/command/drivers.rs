//! Which programs `build_project` may start: build drivers and compilers,
//! so a "build" cannot be used to run an arbitrary allowed tool (git, tar)
//! and read its output as a build report.

use super::rules::program_name;

/// Common build drivers and compilers, with `clang-cl` (the drop-in for
/// `cl`) and `python3` (how Linux spells `python`); compared on the
/// lower-cased file name without `.exe`.
pub const BUILD_COMMANDS: &[&str] = &[
    "cmake", "ninja", "msbuild", "ctest", "premake5", "dotnet", "cargo", "clang", "clang++",
    "clang-cl", "gcc", "g++", "cl", "python", "python3", "py",
];

/// Whether `first_word` names one of [`BUILD_COMMANDS`], by its file name.
pub fn is_build_driver(first_word: &str) -> bool {
    BUILD_COMMANDS.contains(&program_name(first_word).as_str())
}

/// `args` for a build with MSBuild's console logger turned down to
/// errors, warnings and a summary, unless the caller chose a verbosity: at
/// its default verbosity a build log is mostly progress lines, which costs
/// a model thousands of tokens and hides the diagnostics in the tail.
/// `msbuild` (and `dotnet msbuild`) take `-v:minimal -nologo`; the `dotnet`
/// commands that build take `-v minimal --nologo` after the subcommand.
/// Anything else is returned unchanged. (`cmake --build` is left alone:
/// only its generator knows whether MSBuild is underneath.)
pub fn with_quiet_logging(program: &str, args: &[String]) -> Vec<String> {
    let lower: Vec<String> = args.iter().map(|a| a.to_lowercase()).collect();
    let (at, msbuild_style) = match program_name(program).as_str() {
        "msbuild" => (0, true),
        "dotnet" => {
            let Some(sub) = lower.iter().position(|a| !a.starts_with('-')) else {
                return args.to_vec();
            };
            match lower[sub].as_str() {
                "msbuild" => (sub + 1, true),
                "build" | "publish" | "pack" | "clean" | "restore" => (sub + 1, false),
                _ => return args.to_vec(),
            }
        }
        _ => return args.to_vec(),
    };
    // Switches after `--` belong to something else (a test host, a program).
    let end = lower.iter().position(|a| a == "--").unwrap_or(lower.len());
    let switch = |a: &str| {
        a.strip_prefix("--")
            .or_else(|| a.strip_prefix('-'))
            .or_else(|| a.strip_prefix('/'))
            .map(str::to_string)
    };
    let switches: Vec<String> = lower[..end].iter().filter_map(|a| switch(a)).collect();
    let chose_verbosity = switches.iter().any(|s| {
        let name = s.split([':', '=']).next().unwrap_or(s);
        matches!(name, "v" | "verbosity")
            || (matches!(name, "clp" | "consoleloggerparameters") && s.contains("verbosity"))
    });
    let said_nologo = switches.iter().any(|s| s == "nologo");
    let mut added: Vec<&str> = Vec::new();
    if !chose_verbosity {
        added.extend(if msbuild_style {
            &["-v:minimal"][..]
        } else {
            &["-v", "minimal"][..]
        });
    }
    if !said_nologo {
        added.push(if msbuild_style { "-nologo" } else { "--nologo" });
    }
    let mut out = args.to_vec();
    out.splice(at..at, added.into_iter().map(String::from));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msbuild_logs_quietly_unless_the_caller_chose() {
        let run = |command: &str| {
            let words: Vec<String> = command.split(' ').map(String::from).collect();
            with_quiet_logging(&words[0], &words[1..]).join(" ")
        };
        for (command, args) in [
            ("msbuild app.sln", "-v:minimal -nologo app.sln"),
            (
                "MSBuild.exe /t:Build /p:Configuration=Release",
                "-v:minimal -nologo /t:Build /p:Configuration=Release",
            ),
            ("msbuild app.sln /v:detailed", "-nologo app.sln /v:detailed"),
            (
                "msbuild app.sln -verbosity:n /nologo",
                "app.sln -verbosity:n /nologo",
            ),
            (
                "msbuild app.sln -clp:Verbosity=normal",
                "-nologo app.sln -clp:Verbosity=normal",
            ),
            (
                "msbuild app.sln -clp:Summary",
                "-v:minimal -nologo app.sln -clp:Summary",
            ),
            ("dotnet build", "build -v minimal --nologo"),
            (
                "dotnet build src/App.csproj -c Release",
                "build -v minimal --nologo src/App.csproj -c Release",
            ),
            ("dotnet build -v q", "build --nologo -v q"),
            (
                "dotnet build --verbosity=diag --nologo",
                "build --verbosity=diag --nologo",
            ),
            (
                "dotnet msbuild app.proj",
                "msbuild -v:minimal -nologo app.proj",
            ),
            (
                "dotnet publish -- -v x",
                "publish -v minimal --nologo -- -v x",
            ),
            ("dotnet test", "test"),
            ("dotnet --info", "--info"),
            ("cmake --build build", "--build build"),
            ("cargo build -v", "build -v"),
        ] {
            assert_eq!(run(command), args, "{command}");
        }
    }

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
