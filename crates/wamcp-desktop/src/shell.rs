//! The shell's ways to start a program: a shortcut (`.lnk`) read through
//! `IShellLinkW`, and a packaged app activated by its AppUserModelID
//! through `IApplicationActivationManager`.
//!
//! Shortcuts are read under Wine too (its shell implements them), and the
//! reading is tested there; Wine has no packaged apps, so activation is
//! compiled and linted here and verified only on Windows.

use std::path::{Path, PathBuf};
use windows::Win32::System::Com::{
    CLSCTX_INPROC_SERVER, CLSCTX_LOCAL_SERVER, COINIT_MULTITHREADED, CoCreateInstance,
    CoInitializeEx, IPersistFile, STGM_READ,
};
use windows::Win32::UI::Shell::{
    AO_NOERRORUI, ApplicationActivationManager, IApplicationActivationManager, IShellLinkW,
    ShellLink,
};
use windows::core::{HSTRING, Interface};

/// Longest target path and argument text read from a shortcut, in UTF-16
/// units (the shell's own limits for both).
const PATH_UNITS: usize = 32_768;

fn text(buffer: &[u16]) -> String {
    let end = buffer.iter().position(|&u| u == 0).unwrap_or(buffer.len());
    String::from_utf16_lossy(&buffer[..end])
}

/// The target and the stored arguments of the shortcut at `lnk`. Nothing
/// is resolved or searched for (that may rewrite the shortcut or show
/// a window): what the user's shortcut says is what starts.
pub fn read_shortcut(lnk: &Path) -> Result<(PathBuf, String), String> {
    // SAFETY: COM is initialised on this thread first; the link object
    // and its IPersistFile view come back owned and reference-counted; the
    // path is an HSTRING that outlives the call; each buffer is given to
    // the call with its own length, and read up to its first NUL.
    unsafe {
        let _ = CoInitializeEx(None, COINIT_MULTITHREADED);
        let link: IShellLinkW =
            CoCreateInstance(&ShellLink, None, CLSCTX_INPROC_SERVER).map_err(|e| e.message())?;
        let file: IPersistFile = link.cast().map_err(|e| e.message())?;
        file.Load(&HSTRING::from(lnk.as_os_str()), STGM_READ)
            .map_err(|e| e.message())?;
        let mut target = vec![0u16; PATH_UNITS];
        link.GetPath(&mut target, std::ptr::null_mut(), 0)
            .map_err(|e| e.message())?;
        let mut arguments = vec![0u16; PATH_UNITS];
        link.GetArguments(&mut arguments).map_err(|e| e.message())?;
        let target = text(&target);
        if target.is_empty() {
            return Err("it has no target file (it may point to a shell folder or a URL)".into());
        }
        Ok((PathBuf::from(target), text(&arguments)))
    }
}

/// Activates the packaged app `app_id` with `arguments`; its process id.
pub fn activate(app_id: &str, arguments: &str) -> Result<u32, String> {
    // SAFETY: COM is initialised on this thread first; the manager comes
    // back owned; both strings are HSTRINGs that outlive the call.
    unsafe {
        let _ = CoInitializeEx(None, COINIT_MULTITHREADED);
        let manager: IApplicationActivationManager = CoCreateInstance(
            &ApplicationActivationManager,
            None,
            CLSCTX_LOCAL_SERVER | CLSCTX_INPROC_SERVER,
        )
        .map_err(|e| format!("packaged apps cannot be started here ({})", e.message()))?;
        manager
            .ActivateApplication(
                &HSTRING::from(app_id),
                &HSTRING::from(arguments),
                AO_NOERRORUI,
            )
            .map_err(|e| e.message())
    }
}

/// The Start menu's program folders: for all users, then for this user.
pub fn start_menu_roots() -> Vec<PathBuf> {
    ["ProgramData", "APPDATA"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|base| PathBuf::from(base).join(r"Microsoft\Windows\Start Menu\Programs"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use windows::Win32::System::Com::IPersistFile;

    /// Writes a shortcut as the shell does, to read it back.
    fn make_shortcut(lnk: &Path, target: &Path, arguments: &str) {
        // SAFETY: as in `read_shortcut`; the strings outlive the calls.
        unsafe {
            let _ = CoInitializeEx(None, COINIT_MULTITHREADED);
            let link: IShellLinkW =
                CoCreateInstance(&ShellLink, None, CLSCTX_INPROC_SERVER).unwrap();
            link.SetPath(&HSTRING::from(target.as_os_str())).unwrap();
            link.SetArguments(&HSTRING::from(arguments)).unwrap();
            let file: IPersistFile = link.cast().unwrap();
            file.Save(&HSTRING::from(lnk.as_os_str()), true).unwrap();
        }
    }

    #[test]
    fn a_shortcut_gives_its_target_and_its_arguments_as_stored() {
        let folder = tempfile::tempdir().unwrap();
        let target = std::env::current_exe().unwrap();
        let lnk = folder.path().join("Tool.lnk");
        make_shortcut(&lnk, &target, r#"--profile "Work one""#);
        let (read, arguments) = read_shortcut(&lnk).unwrap();
        assert_eq!(
            read.to_string_lossy().to_lowercase(),
            target.to_string_lossy().to_lowercase()
        );
        assert_eq!(arguments, r#"--profile "Work one""#);
        assert!(read_shortcut(&folder.path().join("Missing.lnk")).is_err());
    }

    #[test]
    fn open_app_starts_what_a_listed_shortcut_points_to() {
        let folder = tempfile::tempdir().unwrap();
        let lnk = folder.path().join("Notes.lnk");
        let system = std::env::var_os("SystemRoot").unwrap_or_else(|| r"C:\windows".into());
        let notepad = PathBuf::from(system).join(r"system32\notepad.exe");
        make_shortcut(&lnk, &notepad, "");
        let desktop = crate::native(vec![lnk.display().to_string()], Vec::new());
        let programs = wamcp_platform::search_path::ProgramSearch::default();
        let started = desktop.open_app("notes", &[], false, &programs).unwrap();
        let program = started["program"].as_str().unwrap().to_lowercase();
        assert!(program.ends_with(r"system32\notepad.exe"), "{started}");
        for window in started["windows"].as_array().unwrap() {
            desktop
                .close_window(window["hwnd"].as_i64().unwrap())
                .unwrap();
        }
    }
}
